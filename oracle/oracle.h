/* oracle.h — `zgc trace check`: an independent checker of run traces
 * (prefix zt_; oracle/zt.h is the table of contents of its sections).
 *
 * Given a workflow and a JSON Lines trace written by the runtime
 * (--trace), zt_check rebuilds the message sequence chart from the trace
 * alone and checks:
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
 *      Definition 3 of the CPL paper over the guard's source syntax tree on
 *      the rebuilt chart, plain guards on the store — and must equal the
 *      recorded decision;
 *   6. the result on the end line equals the returned variables' values.
 *
 * Lines of any other kind ("retry", "note", …) are ignored.
 *
 * What it shares.  Nothing with the runtime or the backend.  From the
 * compiler it uses the front of the pipeline only (compiler/pipeline.c
 * up to ZC_CHECK): the grammar's parser, name resolution and the type and
 * definedness checker, so traces are checked against the same resolved
 * and typed syntax tree the code was generated from (a guard is read as
 * the parser wrote it: named guards are looked through by the oracle
 * itself, through each name's resolved declaration; the checker's types
 * tell `==` between formulas from `==` between values, and its constant
 * folding, compiler/eval.c, gives the values of `const`s); and from
 * compiler/ast.c the construct tags ("if#3") and the printer of guard
 * texts in messages.  It does not run projection, the guards pass or the
 * monitor plan: no unfolded formula, sub(Φ), Vars(Φ) or monitor table
 * reaches it, so a mistake in unfolding a guard or in planning the
 * monitor shows as a disagreement here.  The oracle's own, written apart
 * so that a second implementation checks the first: the trace reader
 * (jansson), the chart rebuilt from message ids, the causal order and
 * vector clocks, the expression evaluator (not the compiler's constant
 * folder), the stores, the CPL evaluator (Definition 3 over the source
 * tree, with its own reading of atoms, connectives and undefined terms;
 * cpl.c) and the erasure replay, which walks the global workflow rather
 * than its projection.
 *
 * Errors.  A trace that disagrees is the checker's answer, not an error
 * of the oracle: zt_check returns 1 with the first disagreement,
 * "TRACE:LINE: …" (a malformed line and a trace beyond the limits of
 * zt.h are reported the same way), and `zgc trace check` prints it as
 * "zgc: trace check failed: …" and exits 1.  Errors in the workflow are
 * the compiler's diagnostics (FILE:LINE:COL), an unreadable file is
 * "zgc: error: cannot read PATH: REASON"; both exit 1.  Bad usage exits 2
 * with the usage, after "zgc: MESSAGE" when an argument is wrong.  Out of
 * memory is zu_oom ("zgc: error: out of memory", exit 1), for jansson's
 * allocations too under `zgc trace`; a bug in zgc is ZU_ICE (abort with
 * the location).  Nothing else exits: every failure says why. */
#ifndef ZGC_ORACLE_H
#define ZGC_ORACLE_H

#include "zgc.h"

typedef struct ZtStats {
    long events;        /* events read */
    long messages;      /* matched messages (control included) */
    long choices;       /* choice events */
    long cpl_checked;   /* CPL guard values compared */
    long plain_checked; /* plain guard values compared */
    long values;        /* values recomputed and compared */
    long unverified;    /* values or guards this checker could not evaluate */
} ZtStats;

/* model.c — a workflow ready for checking traces against. */
typedef struct ZtModel ZtModel;

/* Compiles `text` (named `path` in diagnostics) through parse, resolve
 * and check; workflow NULL selects the only or last one.
 * Diagnostics go to diag.  NULL when the program has errors. */
ZtModel *zt_model_new(const char *path, const char *text, size_t len, const char *workflow,
                      FILE *diag);
/* Reads and compiles a file; NULL (with a message on diag) on failure. */
ZtModel *zt_model_load(const char *path, const char *workflow, FILE *diag);
void zt_model_free(ZtModel *m);

/* check.c — checks one trace (the bytes text[0..len), named trace_name in
 * messages).  Returns 0 when every check passes, 1 otherwise with the
 * first disagreement in *msg ("TRACE:LINE: lifeline L event i: …";
 * malloc'd, free it).  st may be NULL. */
int zt_check(const ZtModel *m, const char *trace_name, const char *text, size_t len, char **msg,
             ZtStats *st);

/* cli.c — `zgc trace …` (argv[0] is "trace"). */
int zt_main(int argc, char **argv);

#endif
