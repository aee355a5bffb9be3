/* oracle.h — `zgc trace check`: an independent checker of run traces.
 *
 * Given a workflow (compiled by the front end: AST, guard tables) and a
 * JSON Lines trace written by the runtime (--trace), zt_check rebuilds the
 * message sequence chart from the trace alone and checks it with its own
 * code, sharing nothing with the runtime:
 *
 *   1. form: every line is a JSON object; events name known lifelines, are
 *      numbered 1, 2, … per lifeline and carry the fields of their kind;
 *   2. messages: each receive matches one send (message id, channel,
 *      control tag, equal values), FIFO per (sender, receiver, channel);
 *      a finished run leaves no message unreceived;
 *   3. the causal order (local successors and messages) is acyclic, and
 *      every "vc" equals the per-lifeline counts of causally preceding
 *      events computed by reachability;
 *   4. erasure equivalence: each lifeline's events are exactly those the
 *      global workflow produces for the owners' recorded decisions
 *      (parallel branches in any interleaving, coregion receives in any
 *      order), the control messages being where projection puts them;
 *      stores are rebuilt along the events and every sent value, received
 *      binding, self message, local computation and pure action result is
 *      recomputed;
 *   5. guards: at every choice event the guard is evaluated — CPL guards by
 *      Definition 3 of the CPL paper on the rebuilt chart, plain guards on
 *      the store — and must equal the recorded decision;
 *   6. the result on the end line equals the returned variables' values.
 *
 * Lines of any other kind ("retry", "note", …) are ignored. */
#ifndef ZGC_ORACLE_H
#define ZGC_ORACLE_H

#include "zgc.h"

typedef struct ZtStats {
    long events;       /* events read */
    long messages;     /* matched messages (control included) */
    long choices;      /* choice events */
    long cpl_checked;  /* CPL guard values compared */
    long plain_checked;/* plain guard values compared */
    long values;       /* values recomputed and compared */
    long unverified;   /* values or guards this checker could not evaluate */
} ZtStats;

/* A workflow ready for checking traces against. */
typedef struct ZtModel ZtModel;

/* Compiles `text` (named `path` in diagnostics) through parse, resolve,
 * check, project and guards; workflow NULL selects the only or last one.
 * Diagnostics go to diag.  NULL when the program has errors. */
ZtModel *zt_model_new(const char *path, const char *text, size_t len, const char *workflow,
                      FILE *diag);
/* Reads and compiles a file; NULL (with a message on diag) on failure. */
ZtModel *zt_model_load(const char *path, const char *workflow, FILE *diag);
void zt_model_free(ZtModel *m);

/* Checks one trace (the bytes text[0..len), named trace_name in
 * messages).  Returns 0 when every check passes, 1 otherwise with the
 * first disagreement in *msg ("TRACE:LINE: lifeline L event i: …";
 * malloc'd, free it).  st may be NULL. */
int zt_check(const ZtModel *m, const char *trace_name, const char *text, size_t len, char **msg,
             ZtStats *st);

/* `zgc trace …` (argv[0] is "trace"). */
int zt_main(int argc, char **argv);

#endif
