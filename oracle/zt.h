/* zt.h — the trace checker's table of contents: the state its sections
 * share.  Internal to oracle/: the interface is oracle.h.
 *
 * One check (zt_check) runs the sections in order over one Check; each
 * section reads what the ones before it built and reports the first
 * disagreement it finds through zt_fail, which leaves the check:
 *
 *   model.c   the workflow, parsed, resolved and checked by the
 *             compiler's pipeline and indexed: lifelines, variables,
 *             constructs (with their guards' source trees) and their
 *             tags, stores and their cells (ZtModel)
 *   trace.c   the trace: JSON Lines read with jansson within the limits
 *             below, every line of the form its kind has (exactly its
 *             keys), events numbered per lifeline, start, retry and end
 *             lines in the places the runtime writes them; zt_fail and
 *             the other ways of naming what disagrees
 *   types.c   every value whose type a declaration gives has it: start
 *             stores, writes, results (message values: replay.c)
 *   start.c   the start stores against the declared initial values
 *   chart.c   the message sequence chart rebuilt from the trace alone:
 *             messages matched by id (FIFO per channel), the causal
 *             order (acyclic) and its vector clocks, the stores after
 *             each event
 *   eval.c    the oracle's own expression evaluator over those stores
 *   replay.c  erasure: the global workflow replayed per lifeline against
 *             its events, the values sent, received and computed
 *   attempts.c  the act events' attempts against the retry lines and the
 *             actions' declared retries
 *   stores.c  store operations over the whole trace: the versions their
 *             reads name, the values read, transaction ids, stale reads
 *             and aborts against each store's consistency level
 *   cpl.c     guards at choice events: CPL guards by Definition 3 over
 *             their source trees on the rebuilt chart, plain guards on
 *             the store
 *   check.c   zt_check: the sections in order, then the result
 *   cli.c     `zgc trace …`
 *
 * Memory: strings of a check (keys, messages) and cpl.c's formula nodes
 * and value tables live in the check's arena c->a; other arrays are heap
 * scratch (zu_xmalloc, zu_xcalloc, zt_grow), freed by zt_check at the
 * end; the trace's JSON values belong to c->lines and are borrowed
 * everywhere else.  The model's data live in its compilation's arena. */
#ifndef ZGC_ZT_H
#define ZGC_ZT_H

#include <jansson.h>
#include <math.h>
#include <setjmp.h>

#include "oracle.h"

/* Limits that keep a hostile trace from exhausting memory. */
#define ZT_MAX_EVENTS 4000000L
#define ZT_MAX_CELLS 60000000L /* events × variables, events × lifelines */
/* expression evaluation depth: the parser allows 1000 levels
 * (ZP_MAX_EXPR_DEPTH), pure actions nest up to the checker's 100,000
 * levels (about 300 bytes of stack a level: 200,000 levels take 60 MB of
 * the check's ZC_STACK_BYTES, check.c); named guards add none (eval.c
 * evaluates them bottom-up) */
#define ZT_MAX_DEPTH 200000
#define ZT_MAX_FORMULA_DEPTH 200000 /* guard formula nesting, named guards looked through */

/* ===================================================================== */
/* model.c — the workflow                                                 */
/* ===================================================================== */

struct ZtModel {
    ZCompilation comp; /* the program, up to ZC_CHECK of the compiler's pipeline */
    ZArena *arena;     /* comp.arena */
    ZProgram *prog;
    ZDecl *wf;
    int nl, nvars;
    const char **lnames; /* lifeline names by index */
    ZDecl **vars;        /* by var index */
    int nconstructs;
    const ZStmt **constructs; /* by construct number (1-based) */
    const char **tags;        /* "if#3" by construct number */
};

/* Indexes by name; -1 when there is none. */
int zt_life_index(const ZtModel *m, const char *name);
int zt_var_index(const ZtModel *m, const char *name);
/* The number of the construct tagged `tag` ("if#3"); -1 when none is. */
int zt_construct_index(const ZtModel *m, const char *tag);
/* The action named `name`, or NULL. */
const ZDecl *zt_action(const ZtModel *m, const char *name);
/* The store named `name` (prog->stores) and the cell `name` of a store;
 * NULL when there is none. */
const ZDecl *zt_store(const ZtModel *m, const char *name);
const ZDecl *zt_cell(const ZDecl *store, const char *name);

/* ===================================================================== */
/* trace.c — the trace                                                    */
/* ===================================================================== */

#define ZT_KIND_ENUM(id, name) K_##id,
enum { ZV_EVENT_KINDS(ZT_KIND_ENUM) K__COUNT };
#undef ZT_KIND_ENUM
/* The events of a store operation (docs/oracle.md, "Stores"): an
 * attempt's reads, then its commit or abort (vocab/vocab.h:
 * ZV_STORE_EVENT_KINDS), numbered after the other kinds. */
#define ZT_STORE_ENUM(id, name) K_ST_##id,
enum { K__STORE_FIRST = K__COUNT - 1, ZV_STORE_EVENT_KINDS(ZT_STORE_ENUM) K__ALL };
#undef ZT_STORE_ENUM
extern const char *const zt_kind_names[]; /* by K_ (K__ALL of them) */

typedef struct Ev {
    int life, index, kind, line;
    int peer;              /* send: to; recv: from */
    const char *chan;      /* namespace */
    const char *ctl;       /* control tag, or NULL */
    json_t *values;        /* array */
    const char *msg;       /* message id */
    const char *action;    /* act: name or NULL */
    int64_t attempts;      /* act */
    const char *construct; /* choice */
    int value;             /* choice */
    /* optional fields (trace.c): a coregion's receive; what an llm or a
     * human action recorded */
    int coregion;     /* recv: "coregion":true */
    json_t *prompt;   /* act: {"system": …, "user": …}, or NULL */
    json_t *question; /* act: a human action's question (a string), or NULL */
    int has_answer;   /* act: an "answer" */
    json_t *subrun;   /* act of a planner: its nested run, or NULL */
    /* store operations (trace.c): the store (read, commit, abort; an
     * act's optional "store": a tool call), the cell and value read (rvalue), the
     * version read (0: the default), the transaction id, the attempt of
     * the operation, a commit's cells (object) and registry (array, or
     * NULL); op_prev: the event id of the attempt's read before it (a
     * read) or of its last read (a commit or an abort), -1 for none
     * (replay.c); op_id: the operation's "op" (its position on the
     * lifeline, the same for all its attempts), or NULL */
    const char *store, *cell, *op_id;
    json_t *rvalue, *cells, *registry;
    int64_t version, txn, op_attempt;
    int op_prev;
    json_t *writes; /* object */
    json_t *vc;     /* object */
    int match;      /* the matched event (send <-> recv), or -1 */
    int pred;       /* the index of the event before it on its thread (its
                              branch, forks and joins included; 0: none) (replay.c) */
    int64_t *cvc;   /* computed vector clock */
} Ev;

/* A retry line (trace.c): a failed attempt of an llm call that is
 * retried; not an event. */
typedef struct Retry {
    int life, line;
    const char *action;
    int64_t attempt;
    int after; /* events of its lifeline before it, in line order */
} Retry;

/* A channel of the chart (chart.c): the sends from A to B on one
 * namespace, and how many of them were received. */
typedef struct Chan {
    char *key;  /* "A>B@ns" */
    int *sends; /* event ids in order */
    int nsends, capsends, nrecvs;
} Chan;

/* What a line is (trace.c: where the lines stand). */
enum { L_START, L_EVENT, L_RETRY, L_END };
typedef struct LineInfo {
    int what, life, line; /* life: -1 for an end line */
} LineInfo;

/* One check of one trace.  Each group of fields is built by the section
 * named beside it and only read after. */
/* The values of named guards in one valuation (eval.c): each guard is
 * evaluated once per valuation, however often it is used, so a tower of
 * guards that each use the one below twice costs its size, not
 * 2^height.  The valuation is the store of `life` after its `index`-th
 * event; the table is emptied when another one is asked for. */
typedef struct GuardMemo {
    const ZDecl **keys; /* open addressing by pointer; NULL: empty */
    struct Val *vals;
    bool *undef; /* the evaluation met an undefined term */
    int cap, len;
    int life, index; /* the valuation; life -1: none yet */
} GuardMemo;

typedef struct Check {
    const ZtModel *m;
    /* checks a nested run's trace (oracle.h: zt_check), for replay.c */
    int (*nested)(const ZtModel *m, const char *trace_name, const char *text, size_t len,
                  char **msg, ZtStats *st);
    ZArena *a;
    const char *name;
    jmp_buf fail_jb;
    ZBuf msg;
    int fail_line;
    ZtStats st;
    /* lines (trace.c) */
    json_t **lines;
    int nlines, caplines;
    LineInfo *li; /* the non-blank lines */
    int nli, capli;
    /* events (trace.c; Ev.match and Ev.cvc: chart.c) */
    Ev *ev;
    long nev, capev;
    int **byl; /* per lifeline: event ids by index-1 */
    int *nbyl, *capbyl;
    json_t **start; /* per lifeline: start store object (or NULL) */
    int *start_line;
    Retry *retries; /* in line order */
    int nretries, capretries;
    /* End lines: one for a trace of one process (every lifeline), or one
     * per lifeline for per-lifeline traces put together, each closing its
     * lifeline's segment. */
    int nends, capends;
    /* a durable run's attempts (trace.c), per lifeline: the attempt of its
     * last resume line (0: none yet) and the highest "run_attempt" of its
     * events so far; the run's id */
    int64_t *attempt, *attempt_seen;
    const char *run_id;
    json_t **end_results; /* NULL: the end line reports an error */
    int *end_lines;
    int *end_life;    /* per end line: its segment's lifeline, -1 for all */
    int *life_end;    /* per lifeline: its end line (index into the ends) */
    bool *life_error; /* per lifeline: its run ended with an error */
    int64_t *vcs;     /* computed vector clocks, nev × nl (chart.c) */
    /* channels (chart.c) */
    Chan *chans;
    int nchans, capchans;
    int *htab;
    int hcap;
    /* stores: per lifeline, (n+1) × nvars values after each event (chart.c) */
    json_t ***stores;
    /* decisions per construct: the owner's recorded values in order (replay.c) */
    int **dec;
    int *ndec, *capdec;
    GuardMemo guards; /* named guards' values (eval.c) */
} Check;

/* Reads the trace's lines into c: events, start, retry and end lines,
 * each of its kind's form, in the places the runtime writes them. */
void zt_read_trace(Check *c, const char *text, size_t len);

/* Records the first disagreement ("TRACE:LINE: …"; line 0: no line) and
 * leaves the check (longjmp to c->fail_jb). */
ZG_NORETURN void zt_fail(Check *c, int line, const char *fmt, ...) ZG_PRINTF(3, 4);
/* p, an array of *cap elements of elem bytes, grown (doubling) to hold
 * at least need; out of memory is zu_oom. */
void *zt_grow(void *p, int *cap, int need, size_t elem);
/* JSON text of a value, cut to a readable length (arena string). */
const char *zt_jtext(Check *c, const json_t *j);
/* "lifeline L event i" */
const char *zt_ev_where(Check *c, const Ev *e);

/* ===================================================================== */
/* types.c — declared types                                               */
/* ===================================================================== */

/* True when j is a value of type t as the runtime writes it: int a JSON
 * integer, float a JSON real, bool, str a string, an enum one of its
 * members' names, json anything, null (the literal's type) null. */
bool zt_has_type(const json_t *j, const ZType *t);
/* Fails at the line unless j has type t: "WHAT is J, not a value of type
 * T", WHAT formatted from fmt only then (the check's hot path formats
 * nothing). */
void zt_want_type(Check *c, int line, const json_t *j, const ZType *t, const char *fmt, ...)
    ZG_PRINTF(5, 6);
/* Every value of a start store, a write and a result has its declared type. */
void zt_check_types(Check *c);

/* ===================================================================== */
/* start.c — start stores                                                 */
/* ===================================================================== */

/* Each start store holds exactly the declared initial values: every
 * default, the inputs of its lifeline (any value of their type: they are
 * the run's --arg), nothing else. */
void zt_check_starts(Check *c);

/* ===================================================================== */
/* chart.c — messages, causal order, vector clocks, stores                */
/* ===================================================================== */

/* Matches every receive with its send: message ids, control tags and
 * values; FIFO per channel; nothing left unreceived in a finished run. */
void zt_check_messages(Check *c);
/* The causal order is acyclic; computes every event's vector clock
 * (Ev.cvc) and compares it with the recorded one. */
void zt_check_causal(Check *c);
/* The store of every lifeline after each of its events (c->stores). */
void zt_build_stores(Check *c);

/* The value of variable x on lifeline l after its i-th event (0: start). */
static inline json_t *zt_store_at(Check *c, int l, int i, int x)
{
    return c->stores[l][(size_t)i * (size_t)c->m->nvars + (size_t)x];
}

/* ===================================================================== */
/* eval.c — expressions                                                   */
/* ===================================================================== */

typedef enum { V_UNKNOWN, V_UNDEF, V_ERROR, V_INT, V_FLOAT, V_BOOL, V_STR, V_ENUM, V_JSON } VKind;

typedef struct Val {
    VKind k;
    int64_t i; /* int, bool, enum member */
    double f;
    const char *s; /* str; V_ERROR, V_UNKNOWN: why */
    size_t n;
    const ZDecl *en; /* enum */
    json_t *j;       /* json (borrowed or owned by the check's pool) */
} Val;

typedef struct Env {
    Check *c;
    int life, index;   /* valuation: the store of life after its index-th event */
    const Val *params; /* pure action body */
    int nparams;
    int depth;
    bool undef; /* a term was undefined */
} Env;

static inline Val vmk(VKind k) { return (Val){.k = k}; }
/* A run-time error (the run stops there) and what it is. */
static inline Val verr(const char *why) { return (Val){.k = V_ERROR, .s = why}; }
/* What this evaluator cannot compute, and why. */
static inline Val vunknown(const char *why) { return (Val){.k = V_UNKNOWN, .s = why}; }
static inline Val vint(int64_t i) { return (Val){.k = V_INT, .i = i}; }
static inline Val vbool(bool b) { return (Val){.k = V_BOOL, .i = b}; }
static inline Val vfloat(double f)
{
    if (!isfinite(f)) return verr("a float result that is not finite");
    return (Val){.k = V_FLOAT, .f = f};
}

/* The value of e in env; V_UNKNOWN for what this evaluator cannot
 * compute (the result of an `extern pure` action called in a pure body,
 * or beyond ZT_MAX_DEPTH), V_UNDEF for an undefined term, V_ERROR for a
 * run-time error. */
Val zt_eval(Env *env, const ZExpr *e);
/* str(v): the text of a value as the builtin str() gives it (V_STR); the
 * same text fills a prompt's placeholder.  mistyped: V_UNKNOWN. */
Val zt_str(ZArena *ar, const Val *v);
/* Frees the named guards' table of a check. */
void zt_guard_memo_free(GuardMemo *m);
/* The n results of the call e of a pure action (a tuple body gives one
 * value per output) into out[0..n); false when e is not such a call. */
bool zt_eval_results(Env *env, const ZExpr *e, Val *out, int n);
/* True when every term of the atom (variables, @B.x, looking through
 * named guards and constants) is defined in env. */
bool zt_terms_defined(Env *env, const ZExpr *e, int depth);
/* A new JSON value for v (a new reference), or NULL when unknown. */
json_t *zt_to_json(const Val *v);

/* ===================================================================== */
/* replay.c — erasure                                                     */
/* ===================================================================== */

/* Every choice names a construct its lifeline owns; collects each
 * owner's recorded decisions per construct, in its order. */
void zt_collect_decisions(Check *c);
/* Replays every lifeline; of their disagreements, reports the one on the
 * earliest trace line. */
void zt_replay_all(Check *c);

/* ===================================================================== */
/* attempts.c — attempts and retry lines                                  */
/* ===================================================================== */

/* Every act event's "attempts" is 1 but for an llm action, whose failed
 * and retried attempts each have a retry line before it (so attempts is
 * their number plus one), within the action's declared retries. */
void zt_check_attempts(Check *c);

/* ===================================================================== */
/* stores.c — store operations                                            */
/* ===================================================================== */

/* Per store over the whole trace, before replay: transaction ids
 * unique, no abort at L0, every read's version names the default (0) or
 * a commit of the store that wrote the cell, with the value read. */
void zt_check_store_reads(Check *c);
/* After replay (which chains each attempt's reads to its end): a
 * committed attempt's reads older than its commit, and from L1 up no
 * commit between a read's version and its attempt's commit wrote the
 * cell. */
void zt_check_stores(Check *c);

/* ===================================================================== */
/* cpl.c — guards                                                         */
/* ===================================================================== */

/* Every guard at its choice event against the recorded decision. */
void zt_check_guards(Check *c);

#endif
