/* planner.h — planners: workflows written by a model while a workflow
 * runs (prefix zpl_; docs/runtime.md, "Planners").
 *
 * The library sits above the compiler, the grammar, the backend and the
 * runtime, and is linked only into the executables of programs that
 * declare a planner (backend/link.c).  A planner action's descriptor
 * names zpl_act as its C function (zgrt_action.fn); it
 *
 *   1. reads the planner's context (zgrt_call_plan: the program's enums,
 *      constants and pure actions, the planner's vocabulary and the
 *      planner's declaration, as source text),
 *   2. asks the action's model for a workflow (the prompt: the
 *      description, the owner and workers, the vocabulary's declarations,
 *      what else may be used, the instructions, the input values and the
 *      grammar of the language, taken from grammar/parser.y at build
 *      time),
 *   3. compiles the answer with the real front end (parse, resolve,
 *      check, projection, guards, monitor plan) and the planner's
 *      restrictions (zpl_validate), sending the diagnostics back to the
 *      model until a workflow passes or the retries are spent,
 *   4. generates the program's code as one LLVM module, runs it through
 *      ORC's LLJIT in this process (the runtime's functions defined as
 *      absolute symbols, the rest of the process searched), and
 *   5. runs it as a nested run (zgrt_call_subrun): its lifelines are
 *      fibers of its own, isolated from the calling run; its result is
 *      the call's result.
 *
 * Errors: the call fails (zgrt_fail) with the cause: the model's failure,
 * the last diagnostics after the retries, a limit, or the nested run's
 * error.
 */
#ifndef ZGC_PLANNER_H
#define ZGC_PLANNER_H

#include <stdio.h>

#include "zgc.h"
#include "zgrt.h"

/* What a planner allows and bounds, read from its declaration. */
typedef struct ZplSpec {
    const ZDecl *decl;
    const char *owner;
    ZVec workers; /* const char* */
    ZVec actions; /* const char*: the vocabulary */
    bool allow_llm, allow_pure, allow_if, allow_while;
    long max_statements, max_iterations, timeout;
    int retries; /* -1: forever */
} ZplSpec;

/* zgrt_action_fn of every planner action. */
int zpl_act(zgrt_call *call);

/* The planner's restrictions on a compiled answer (c after ZC_PLAN):
 * the declarations the answer (the first `answer_lines` lines of file 0)
 * may make, the one workflow's inputs and result, the actions it calls,
 * the constructs it uses, its size, and its end: a worker sends the
 * result to the owner, then the workflow returns it.  Each breach is an
 * error on c's diagnostics; returns the number of errors. */
int zpl_validate(ZCompilation *c, const ZplSpec *s, int answer_lines);

/* The grammar summary the prompt carries (generated from grammar/parser.y). */
extern const char zpl_grammar[];
#endif
