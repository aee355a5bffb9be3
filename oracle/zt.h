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
 *             tags (ZtModel)
 *   trace.c   the trace: JSON Lines read with jansson within the limits
 *             below, events numbered per lifeline, start and end lines;
 *             zt_fail and the other ways of naming what disagrees
 *   chart.c   the message sequence chart rebuilt from the trace alone:
 *             messages matched by id (FIFO per channel), the causal
 *             order (acyclic) and its vector clocks, the stores after
 *             each event
 *   eval.c    the oracle's own expression evaluator over those stores
 *   replay.c  erasure: the global workflow replayed per lifeline against
 *             its events, the values sent, received and computed
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
#define ZT_MAX_CELLS 60000000L    /* events × variables, events × lifelines */
#define ZT_MAX_DEPTH 200          /* expression evaluation depth */
#define ZT_MAX_FORMULA_DEPTH 2000 /* guard formula nesting, named guards looked through */

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

/* ===================================================================== */
/* trace.c — the trace                                                    */
/* ===================================================================== */

#define ZT_KIND_ENUM(id, name) K_##id,
enum { ZV_EVENT_KINDS(ZT_KIND_ENUM) K__COUNT };
#undef ZT_KIND_ENUM
extern const char *const zt_kind_names[]; /* by K_ */

typedef struct Ev {
    int life, index, kind, line;
    int peer;              /* send: to; recv: from */
    const char *chan;      /* namespace */
    const char *ctl;       /* control tag, or NULL */
    json_t *values;        /* array */
    const char *msg;       /* message id */
    const char *action;    /* act: name or NULL */
    const char *construct; /* choice */
    int value;             /* choice */
    json_t *writes;        /* object */
    json_t *vc;            /* object */
    int match;             /* the matched event (send <-> recv), or -1 */
    int64_t *cvc;          /* computed vector clock */
} Ev;

/* A channel of the chart (chart.c): the sends from A to B on one
 * namespace, and how many of them were received. */
typedef struct Chan {
    char *key;  /* "A>B@ns" */
    int *sends; /* event ids in order */
    int nsends, capsends, nrecvs;
} Chan;

/* One check of one trace.  Each group of fields is built by the section
 * named beside it and only read after. */
typedef struct Check {
    const ZtModel *m;
    ZArena *a;
    const char *name;
    jmp_buf fail_jb;
    ZBuf msg;
    int fail_line;
    ZtStats st;
    /* lines (trace.c) */
    json_t **lines;
    int nlines, caplines;
    /* events (trace.c; Ev.match and Ev.cvc: chart.c) */
    Ev *ev;
    long nev, capev;
    int **byl; /* per lifeline: event ids by index-1 */
    int *nbyl, *capbyl;
    json_t **start; /* per lifeline: start store object (or NULL) */
    int *start_line;
    int nends, capends;
    bool ended_error; /* some end line reports an error */
    json_t **end_results;
    int *end_lines;
    int64_t *vcs; /* computed vector clocks, nev × nl (chart.c) */
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
} Check;

/* Reads the trace's lines into c: events, start and end lines. */
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
    const char *s; /* str */
    size_t n;
    const ZDecl *en; /* enum */
    json_t *j;       /* json (borrowed or owned by the check's pool) */
} Val;

typedef struct Env {
    Check *c;
    int life, index;   /* valuation: the store of life after its index-th event */
    const Val *params; /* pure action body */
    int depth;
    bool undef; /* a term was undefined */
} Env;

static inline Val vmk(VKind k) { return (Val){.k = k}; }
static inline Val vint(int64_t i) { return (Val){.k = V_INT, .i = i}; }
static inline Val vbool(bool b) { return (Val){.k = V_BOOL, .i = b}; }
static inline Val vfloat(double f)
{
    if (!isfinite(f)) return vmk(V_ERROR);
    return (Val){.k = V_FLOAT, .f = f};
}

/* The value of e in env; V_UNKNOWN for what this evaluator cannot
 * compute, V_UNDEF for an undefined term, V_ERROR for a run-time error. */
Val zt_eval(Env *env, const ZExpr *e);
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
/* cpl.c — guards                                                         */
/* ===================================================================== */

/* Every guard at its choice event against the recorded decision. */
void zt_check_guards(Check *c);

#endif
