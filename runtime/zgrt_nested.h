/* zgrt_nested.h — what the planner library (planner/) asks of a run.
 *
 * A planner action runs as a C function of the zgrt.h interface
 * (zgrt_action.fn = zpl_act); these calls give it what a user function
 * does not need: its context text, one request to the action's model, and
 * a run of a program it generated, in this process, isolated from the
 * calling run (its own lifelines, channels, stores and workers), whose
 * results become the call's results.  Not for users.
 */
#ifndef ZGRT_NESTED_H
#define ZGRT_NESTED_H

#include "zgrt_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The functions generated code calls (zgrt_abi.h: ZGRT_ABI), by name:
 * what a JIT defines for the code it loads (the runtime's symbols are
 * not exported by the executables). */
typedef struct zgrt_symbol {
    const char *name;
    void *addr;
} zgrt_symbol;
const zgrt_symbol *zgrt_abi_symbols(int *n);

/* The planner's context (zgrt_action.plan), or NULL for another action. */
const char *zgrt_call_plan(const zgrt_call *call);

/* One text request to the model the run routes the call's action to
 * (--llm, --llm-for L.action), with the prompts as given.  0 with the
 * answer (free it), or -1 with the reason in err. */
int zgrt_call_model(zgrt_call *call, const char *system, const char *user, char **answer, char *err,
                    size_t errlen);

/* The limits of a nested run. */
typedef struct zgrt_subrun {
    int nargs;
    const char *const *arg_names; /* the sub-program's inputs, as --arg text */
    const char *const *arg_values;
    const char *source;     /* its source text, recorded with the nested run */
    double timeout;         /* seconds of wall time (0: none) */
    int64_t max_iterations; /* loop iterations of all its lifelines (0: none) */
} zgrt_subrun;

/* Runs `sub` (every lifeline in this process, with the calling run's
 * model routing, seed and scheduler) and sets the call's results to its
 * results, in order.  When the calling run is observed (a trace, a live
 * view), the call's act event records the nested run: {"source":
 * o->source, "trace": [its trace lines as objects]}.  0, or -1 with the reason in err: the run's error,
 * a limit it hit, or results that do not fit the call's. */
int zgrt_call_subrun(zgrt_call *call, const zgrt_program *sub, const zgrt_subrun *o, char *err,
                     size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
