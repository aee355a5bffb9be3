/* oracle.h — `zgc trace check`: an independent checker of run traces
 * (prefix zt_; oracle/zt.h is the table of contents of its sections).
 *
 * Given a workflow and a JSON Lines trace written by the runtime
 * (--trace), zt_check rebuilds the message sequence chart from the trace
 * alone and checks, in this order (the first disagreement is the answer):
 *
 *   1. form: every line is a JSON object of one of the kinds the runtime
 *      writes (start, send, recv, act, choice, read, commit, abort,
 *      retry, resume, end) with exactly
 *      the keys of its kind, each of its JSON type; events name known
 *      lifelines and variables and are numbered 1, 2, … per lifeline;
 *      the lines stand where the runtime writes them: one process's trace
 *      begins with one start line per lifeline in declaration order and
 *      ends with its end line; per-lifeline traces put together (one end
 *      line per lifeline) are one segment per lifeline, its start line,
 *      its own lines, its end line;
 *   2. types: every value of a start store and of a write has its
 *      variable's declared type as the runtime writes it (an int a JSON
 *      integer, a float a JSON real, an enum one of its members' names;
 *      types.c), and so do message values (the statement's types) and
 *      results (the workflow's);
 *   3. start stores: exactly the declared initial values — every default
 *      on every lifeline, each input on its owner (any value of its type:
 *      the run's --arg), nothing else (start.c);
 *   4. messages: each receive matches one send (message id, channel,
 *      control tag, equal values), FIFO per (sender, receiver, channel);
 *      a receiver whose run ended normally took every message sent to it;
 *   5. the causal order (local successors and messages) is acyclic, and
 *      every "vc" equals the per-lifeline counts of causally preceding
 *      events computed by reachability;
 *   6. erasure equivalence: each lifeline's events are exactly those the
 *      global workflow produces for the owners' recorded decisions
 *      (parallel branches in any interleaving, coregion receives in any
 *      order), the control messages being where projection puts them, a
 *      lifeline whose run ended normally having no event missing; stores
 *      are rebuilt along the events and every sent value, received
 *      binding, self message, local computation and pure action result
 *      (tuples too) is recomputed; a computation that fails (overflow,
 *      division by zero, a failed conversion) or reads an undefined
 *      variable where the trace goes on is a disagreement, the run would
 *      have stopped there;
 *   7. attempts: an act event of an llm action has as many attempts as
 *      its call has retry lines (numbered 1, 2, …, after the event before
 *      it on its thread) plus one, within the action's declared retries;
 *      every other act event has 1; a lifeline whose run ended normally
 *      leaves no retried call without its act event (attempts.c);
 *   8. store operations (replay.c, stores.c): an atomic block is, on its
 *      lifeline, attempts numbered 1, 2, …: a read event per read item
 *      binding its variable to the value read (of the cell's type), the
 *      acts of its local statements ("store" on an effect's act only),
 *      then a commit whose cells are exactly the block's writes, each its
 *      expression's value, and whose registry is exactly the tools of a
 *      `write tools` (absent without one), or an abort and the next
 *      attempt.  Per store over the whole trace: transaction ids unique;
 *      a read's version 0 the cell's default with its value, a version
 *      T > 0 a commit of the store that wrote the cell, with the value
 *      it wrote; a committed attempt's versions older than its commit;
 *      from L1 up no commit between a read's version and its attempt's
 *      commit wrote the cell (a stale read), at L0 no abort;
 *   9. guards: at every choice event the guard is evaluated — CPL guards by
 *      Definition 3 of the CPL paper over the guard's source syntax tree on
 *      the rebuilt chart, plain guards on the store — and must equal the
 *      recorded decision; an atom or a plain guard that fails where the
 *      runtime evaluates it (the atoms of an owner's CPL guards at each of
 *      its events) is a disagreement;
 *  10. the results on the end lines have the workflow's result types and
 *      equal the returned variables' values (per-lifeline end lines: every
 *      component returned at that lifeline, no other).
 *
 * Unverified: values no checker can recompute from the workflow, whose
 * types are checked all the same and which are then used as recorded:
 *   - the outputs of llm actions (the model's answers);
 *   - the outputs of human actions (an `ack` with a bool output excepted:
 *     always true, checked);
 *   - the results of `extern pure` and `effect` actions (C code);
 *   - a value computed from the result of an `extern pure` action called
 *     inside a pure action's body;
 *   - beyond the evaluator's limits: an expression nested deeper than
 *     ZT_MAX_DEPTH (200,000) levels, counting the bodies of the pure actions
 *     it calls (the parser allows 1000 in one expression), upper() or
 *     lower() of a string over 512 MB.
 * The summary counts them ("unverified"); a guard whose value depends on
 * none of them is always checked.  Workflow inputs are not unverified but
 * free: any value of their type is a run's.
 *
 * Deliberately unchecked, because no workflow determines them:
 *   - the order of the lines of different lifelines (the runtime writes
 *     events as they happen, `zgc run --processes` merges lifeline after
 *     lifeline; the chart comes from indexes and message ids);
 *   - a retry line's "error" (the model server's or model's message) and
 *     "delay" (a float of at least 0.0: the backoff or the server's
 *     Retry-After, times --backoff-scale);
 *   - an end line's "error" text (any run-time error, a --timeout, a
 *     cancellation: the events before it are checked as a run that
 *     stopped there);
 *   - an act's raw "answer" (the model's reply text, the person's line,
 *     the scripted or --answers entry): the outputs parsed from it are the
 *     values above, and which backend wrote it the trace does not say;
 *   - whether the optional fields are there at all: an act's "prompt" and
 *     "question", a receive's "coregion" (a trace written by hand may
 *     leave them out); when they are there, the prompts and the question
 *     must equal the action's templates filled with the call's arguments,
 *     and "coregion" stand on a receive of a coregion only;
 *   - an abort's "reason" (the discipline's words), and what the trace
 *     does not record of a store: retractions (a commit retracted later
 *     is read as standing), the order effects took effect in (L3), the
 *     registry an operation saw (L4);
 *   - an atom inside @B(…) or `past` that fails at an event of B whose
 *     value Definition 3 never needs (which of B's events the runtime's
 *     monitor evaluates depends on the monitor plan, not read here).
 *
 * What it shares.  Nothing with the runtime or the backend.  From the
 * compiler it uses the front of the pipeline only (compiler/pipeline.c
 * up to ZC_CHECK): the grammar's parser, name resolution and the type and
 * definedness checker, so traces are checked against the same resolved
 * and typed syntax tree the code was generated from (a guard is read as
 * the parser wrote it: named guards are looked through by the oracle
 * itself, through each name's resolved declaration; the checker's types
 * tell `==` between formulas from `==` between values, and its constant
 * folding, compiler/eval.c, gives the values of `const`s, of variable
 * defaults and of the `retries` property, which it folds into
 * literals); and from compiler/ast.c the construct tags ("if#3"), an
 * action's properties (za_prop: `retries`, a human action's `kind`), and
 * the names of types and action kinds and the printer of guard texts in
 * messages.  It does not run projection, the guards pass or the
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
