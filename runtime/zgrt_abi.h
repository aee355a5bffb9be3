/* zgrt_abi.h — the contract between generated code (backend/) and the
 * runtime (runtime/).  Not for users: see zgrt.h.
 *
 * A built workflow is one module per lifeline plus a program descriptor
 * (zgrt_program, constant data emitted by the backend) and a `main` that
 * calls zgrt_main.  Each lifeline is a function `void body(zgrt_ctx *)`
 * running its local program; every event of the local program (send,
 * receive, action or assignment, choice) is one call into the runtime, which
 * keeps the store, the vector clock and the monitor, writes the trace, and
 * moves messages.  Generated code reads the store directly
 * (zgrt_store) but never writes it: writes go through the event calls, so
 * the runtime sees every change with the event that made it.
 *
 * ZGRT_ABI below lists every runtime function the generated code may call,
 * with an LLVM signature code; the backend declares them from this table and
 * tests/abi checks the table against the prototypes.
 *
 * All indices are 0-based: lifelines and variables in declaration order
 * (zgc.h: ZDecl.index), channels = ZLocalSet.namespaces, tags = control
 * construct number - 1, locs = the program's source-location table, subs =
 * ZFormula ids, actions = index in zgrt_program.actions, view slots and
 * variable-view slots = positions in the calling lifeline's
 * zgrt_program.keeps[L].views / varviews.
 */
#ifndef ZGRT_ABI_H
#define ZGRT_ABI_H

#include "vocab.h"
#include "zgrt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZGRT_ABI_VERSION 8

typedef struct zgrt_ctx zgrt_ctx; /* one running lifeline (opaque) */

typedef void (*zgrt_body_fn)(zgrt_ctx *ctx);
/* Evaluates, bottom-up, the subformulas this lifeline evaluates at every
 * event (Algorithm 2): writes val[k] (0/1) for each of them, k its
 * position in the lifeline's keep.evals, reading old[k] (the values at the
 * previous event of this lifeline, 0 at the first), the store, zgrt_vc,
 * zgrt_view and zgrt_varview. */
typedef void (*zgrt_eval_fn)(zgrt_ctx *ctx, uint8_t *val, const uint8_t *old);

/* Types in descriptors: a zgrt_tag, and for ZGRT_ENUM the enum index. */
typedef struct zgrt_type {
    int32_t tag;
    int32_t enum_id; /* -1 unless tag == ZGRT_ENUM */
} zgrt_type;

typedef struct zgrt_loc {
    int32_t line, col;
    const char *file; /* NULL: zgrt_program.source; else an imported file */
} zgrt_loc;

typedef struct zgrt_enum {
    const char *name;
    int32_t nmembers;
    const char *const *members;
} zgrt_enum;

typedef struct zgrt_var {
    const char *name;
    zgrt_type type;
    int32_t has_default;
    zgrt_value def; /* strings point to constant zgrt_str data */
} zgrt_var;

/* Action kinds, parse modes and human kinds: the vocabulary's lists
 * (vocab/vocab.h), numbered from 0 in its order, which is part of this
 * ABI.  ZGRT_ACT_PURE is compiled inline and never reaches zgrt_act. */
#define ZGRT_ACT_(id, name) ZGRT_ACT_##id,
#define ZGRT_PARSE_(id, name, type) ZGRT_PARSE_##id,
#define ZGRT_HUMAN_(id, name) ZGRT_HUMAN_##id,
typedef enum zgrt_action_kind { ZV_ACTION_KINDS(ZGRT_ACT_) } zgrt_action_kind;
typedef enum zgrt_parse { ZV_PARSE_MODES(ZGRT_PARSE_) } zgrt_parse;
typedef enum zgrt_human_kind { ZV_HUMAN_KINDS(ZGRT_HUMAN_) } zgrt_human_kind;
#undef ZGRT_ACT_
#undef ZGRT_PARSE_
#undef ZGRT_HUMAN_

typedef struct zgrt_action {
    const char *name;
    int32_t kind; /* zgrt_action_kind */
    int32_t nparams;
    const char *const *param_names;
    const zgrt_type *param_types;
    int32_t nresults;
    const char *const *result_names; /* NULL entries for unnamed results */
    const zgrt_type *result_types;
    /* llm */
    const char *system; /* prompt templates with {param} placeholders, or NULL */
    const char *user;
    int32_t parse;     /* zgrt_parse */
    int32_t retries;   /* -1: forever; default 3 */
    const char *model; /* or NULL */
    double temperature;
    int32_t has_temperature;
    int32_t has_fallback;
    const zgrt_value *fallback; /* nresults values when has_fallback */
    /* human */
    int32_t human_kind; /* zgrt_human_kind */
    const char *prompt;
    /* extern pure / effect: zg_<name>, or NULL when not linked in;
     * planner: zpl_act of the planner library (planner/planner.h) */
    zgrt_action_fn fn;
    /* planner: its context, the source text its generated workflows are
     * compiled with (compiler/zgc.h: za_planner_context); else NULL */
    const char *plan;
} zgrt_action;

typedef struct zgrt_input {
    int32_t var;
    int32_t owner;
} zgrt_input;

typedef struct zgrt_result {
    int32_t var;
    int32_t lifeline;
} zgrt_result;

/* The monitor plan (compiler/plan.c), per lifeline and per edge.  A
 * lifeline's monitor keeps only its own entries, and a message carries
 * only what its receiver keeps and its sender has.
 *
 * An entry (B, index): a view (B, ψ), index = the subformula id ψ (<
 * nsubs), or a variable view (B, x), index = the variable x (< nvars). */
typedef struct zgrt_slot {
    int32_t lifeline; /* B */
    int32_t index;    /* subformula id (views) or variable index (varviews) */
} zgrt_slot;

/* What lifeline L's monitor keeps, every table ascending without
 * duplicates.  Positions in these tables are what generated code passes
 * and the runtime stores: val/old[k] is the value of evals[k] (the eval
 * function's arguments), view slot k is views[k], variable-view slot k is
 * varviews[k].  vc lists the lifelines whose clock entries L keeps: L and
 * every B of its views and variable views; views and varviews never name
 * L (its own values are val, its own variables the store).  A lifeline
 * without a monitor keeps nothing (all counts 0).  State: 8 * nvc + 2 *
 * nevals + nviews + 16 * nvarviews bytes; in a traced run the clock has
 * nlifelines entries (index = lifeline) instead of nvc. */
typedef struct zgrt_keep {
    int32_t nevals;
    int32_t nvc;
    int32_t nviews;
    int32_t nvarviews;
    const int32_t *evals;      /* subformula ids */
    const int32_t *vc;         /* lifelines */
    const zgrt_slot *views;    /* (B, ψ), B != L */
    const zgrt_slot *varviews; /* (B, x), B != L */
} zgrt_keep;

/* One lifeline B's part of an edge's metadata: the clock entry vc[B] (at
 * from_vc in the sender's clock, to_vc in the receiver's) and B's entries,
 * [the previous group's views_end, views_end) of the edge's views, the
 * same for varviews.  B is never the receiver. */
typedef struct zgrt_group {
    int32_t lifeline;
    int32_t from_vc, to_vc;
    int32_t views_end, varviews_end;
} zgrt_group;

/* One carried entry: the sender's position `from` and the receiver's `to`
 * (in its keep.views / keep.varviews).  In the group of the sender itself,
 * `from` is a position in the sender's evals (views: the value val[from])
 * or a variable index (varviews: the sender's store). */
typedef struct zgrt_pair {
    int32_t from, to;
} zgrt_pair;

/* The metadata of every message from `from` to `to`: the groups' clock
 * entries, then the views (one byte each), then the variable views (one
 * value each, ZGRT_UNDEF where undefined), in the order of the lists:
 * 8 * ngroups + nviews + 16 * nvarviews bytes in memory.  A traced run
 * sends the sender's full clock (nlifelines entries) instead of the
 * groups' entries.  Edges are the program's sends and control sends,
 * sorted by (from, to); a pair of lifelines without an edge exchanges no
 * metadata (nothing but a traced run's clock). */
typedef struct zgrt_edge {
    int32_t from, to;
    int32_t ngroups;
    int32_t nviews;
    int32_t nvarviews;
    int32_t pad;
    const zgrt_group *groups;
    const zgrt_pair *views;
    const zgrt_pair *varviews;
} zgrt_edge;

/* A store (docs/language.md §11): its cells, the registry it starts with
 * (effect actions, as indices in zgrt_program.actions) and the
 * consistency level it runs at.  Cells are numbered from 0 in declaration
 * order within their store (zgrt_op_read / zgrt_op_write). */
typedef struct zgrt_cell {
    const char *name;
    zgrt_type type;
    zgrt_value def; /* strings point to constant zgrt_str data */
} zgrt_cell;

typedef struct zgrt_store_decl {
    const char *name;
    int32_t level; /* 0..4 */
    int32_t ncells;
    const zgrt_cell *cells;
    int32_t ntools;
    int32_t pad;
    const int32_t *tools; /* action indices */
} zgrt_store_decl;

/* Which lifeline an executable runs.  zgc build links one executable, the
 * all-in-one <wf>, whose role record says -1 (every lifeline), and writes
 * each per-lifeline executable <wf>.<L> as a copy of it with `lifeline`
 * set to L (backend/link.c finds the record by its magic, which appears
 * nowhere else in the executable: the runtime never names it).  A
 * renamed copy keeps its role. */
#define ZGRT_ROLE_MAGIC "\177zgrt-role:v1\001\002" /* 15 bytes and the NUL */
typedef struct zgrt_role {
    char magic[16];
    int32_t lifeline; /* -1: every lifeline; L: lifeline L only */
} zgrt_role;

typedef struct zgrt_program {
    int32_t abi_version; /* ZGRT_ABI_VERSION */
    int32_t nlifelines;
    const char *source; /* path of the .zg file, for messages */
    const char *workflow;
    const char *const *lifelines; /* names */
    const zgrt_body_fn *bodies;   /* per lifeline; NULL when not in this executable */
    const zgrt_eval_fn *evals;    /* per lifeline; NULL when it evaluates nothing */
    int32_t nvars;
    int32_t nenums;
    const zgrt_var *vars;
    const zgrt_enum *enums;
    int32_t nchans;
    int32_t ntags;
    const char *const *chans; /* "main", "main/par1.2", … */
    const char *const *tags;  /* "while#1", "if#2", … (index = construct - 1) */
    int32_t nlocs;
    int32_t nactions;
    const zgrt_loc *locs;
    const zgrt_action *actions;
    int32_t ninputs;
    int32_t nresults;
    const zgrt_input *inputs;
    const zgrt_result *results;
    int32_t result_tuple; /* 1: print the results as a JSON array */
    int32_t monitor;      /* 1: some guard needs the CPL monitor */
    int32_t nsubs;        /* |sub(Φ)| */
    int32_t nedges;
    /* the monitor plan (zgrt_keep, zgrt_edge above) */
    const zgrt_keep *keeps; /* per lifeline */
    const zgrt_edge *edges; /* nedges */
    /* The program's fingerprint (backend/link.c), what a durable run
     * checks before it resumes: 64 hex digits of a SHA-256 over its parts,
     * which are one "NAME HEX" line each: "lifeline L …" (the code
     * generated for lifeline L), "declarations …" (the descriptor without
     * source path and locations: variables, actions and their prompts,
     * inputs, results, the monitor plan) and "C file NAME …" (each C file
     * given to zgc build, by its contents). */
    const char *fingerprint;
    const char *fingerprint_parts;
    /* the stores, in declaration order */
    int32_t nstores;
    const zgrt_store_decl *stores;
    const zgrt_role *role; /* NULL: every lifeline whose body is present */
} zgrt_program;

/* The executable's entry point: parses the run options (see docs/runtime.md),
 * runs the lifelines whose bodies are present (all of them in the
 * all-in-one executable, one in a per-lifeline executable: the one its
 * role names), prints the
 * result as JSON on stdout and returns the exit status. */
int zgrt_main(const zgrt_program *prog, int argc, char **argv);

/* ---- functions called by generated code -------------------------------- */

/* The lifeline's store: nvars values, read-only for generated code. */
const zgrt_value *zgrt_store(zgrt_ctx *ctx);

/* send event: the values are copied. */
void zgrt_send(zgrt_ctx *ctx, int32_t peer, int32_t chan, int32_t n, const zgrt_value *vals,
               int32_t loc);
/* receive event: takes the message at the head of channel (peer → this,
 * chan), blocking until there is one.  binds[k] >= 0: store the k-th value
 * in that variable; binds[k] < 0: the k-th value must equal consts[k] (a
 * constant binding; a mismatch fails the run naming both values). */
void zgrt_recv(zgrt_ctx *ctx, int32_t peer, int32_t chan, int32_t n, const int32_t *binds,
               const zgrt_value *consts, int32_t loc);
/* recv-any helper (not an event): blocks until one of the peers whose bit
 * is not set in done_mask has a message at the head of its channel, and
 * returns that peer's position k in peers[]; the caller then calls
 * zgrt_recv for peers[k]. */
int32_t zgrt_wait_any(zgrt_ctx *ctx, int32_t chan, int32_t n, const int32_t *peers,
                      int64_t done_mask, int32_t loc);
/* control send event: decision `value` of construct `tag`. */
void zgrt_send_ctl(zgrt_ctx *ctx, int32_t peer, int32_t chan, int32_t tag, int32_t value,
                   int32_t loc);
/* control receive event: returns the owner's decision for `tag`. */
int32_t zgrt_recv_ctl(zgrt_ctx *ctx, int32_t owner, int32_t chan, int32_t tag, int32_t loc);
/* choice event with a plain guard already evaluated by generated code. */
void zgrt_choice(zgrt_ctx *ctx, int32_t tag, int32_t value, int32_t loc);
/* choice event with a CPL guard: runs the monitor for the event and
 * returns the value of subformula `root`. */
int32_t zgrt_choice_cpl(zgrt_ctx *ctx, int32_t tag, int32_t root, int32_t loc);
/* act event for a local computation, a pure action or a self message:
 * stores vals[k] in vars[k].  `action` is the action's name or NULL. */
void zgrt_assign(zgrt_ctx *ctx, const char *action, int32_t n, const int32_t *vars,
                 const zgrt_value *vals, int32_t loc);
/* act event for an llm, human, extern pure or effect action: runs it and
 * stores its results in outs[k] (skipped when outs[k] < 0). */
void zgrt_act(zgrt_ctx *ctx, int32_t action, const zgrt_value *args, int32_t nouts,
              const int32_t *outs, int32_t loc);
/* A parallel region on this lifeline: runs the n branch functions
 * concurrently (each on its own thread, with a context of the same
 * lifeline: one store, one event sequence) and returns when all have
 * ended.  Branch k's code uses its own channel namespace. */
void zgrt_par(zgrt_ctx *ctx, int32_t n, const zgrt_body_fn *branches, int32_t loc);
/* Stops the run with a run-time error at loc (overflow, division by zero,
 * a failed builtin).  Does not return. */
void zgrt_trap(zgrt_ctx *ctx, int32_t loc, const char *msg);

/* Store operations (atomic blocks, docs/runtime.md "Stores").  An atomic
 * block of store S is a loop:
 *
 *     do {
 *         zgrt_op_begin(ctx, S, loc);        // an attempt begins
 *         zgrt_op_read(ctx, c, x, loc);       // read events: cell c into x
 *         ... zgrt_assign / zgrt_act ...      // the local statements
 *         zgrt_op_write(ctx, c, &v, loc);     // writes, buffered
 *         zgrt_op_tools(ctx, n, tools, loc);  // `write tools = (...)`
 *     } while (!zgrt_op_commit(ctx, loc));    // commit (or abort) event
 *
 * One operation at a time per thread of a lifeline.  An effect action
 * called (zgrt_act) between begin and commit is a tool call of the
 * operation.  zgrt_op_commit returns 1 when the operation committed, 0
 * when the store's discipline refused it: the block runs again from its
 * reads (the next attempt). */
void zgrt_op_begin(zgrt_ctx *ctx, int32_t store, int32_t loc);
/* read event: the cell's value into variable var. */
void zgrt_op_read(zgrt_ctx *ctx, int32_t cell, int32_t var, int32_t loc);
/* a write of the cell, buffered until the commit (the value is copied). */
void zgrt_op_write(zgrt_ctx *ctx, int32_t cell, const zgrt_value *val, int32_t loc);
/* the registry becomes these n tools (action indices) at the commit. */
void zgrt_op_tools(zgrt_ctx *ctx, int32_t n, const int32_t *tools, int32_t loc);
/* commit or abort event: 1 committed, 0 retry. */
int32_t zgrt_op_commit(zgrt_ctx *ctx, int32_t loc);

/* Values: string concatenation, comparison, builtins.  Results that need
 * memory (strings, json) stay valid until the end of the run. */
void zgrt_concat(zgrt_ctx *ctx, const zgrt_value *a, const zgrt_value *b, zgrt_value *out);
/* <0, 0, >0 for str (bytewise), int, float, bool, enum; json: 0 when equal,
 * 1 otherwise. */
int32_t zgrt_compare(const zgrt_value *a, const zgrt_value *b);
/* Builtins, numbered as ZBuiltin in compiler/zgc.h (checked by a test). */
enum zgrt_builtin_id {
    ZGRT_BI_LEN = 1,
    ZGRT_BI_LOWER,
    ZGRT_BI_UPPER,
    ZGRT_BI_TRIM,
    ZGRT_BI_CONTAINS,
    ZGRT_BI_STARTS_WITH,
    ZGRT_BI_ENDS_WITH,
    ZGRT_BI_STR,
    ZGRT_BI_INT,
    ZGRT_BI_FLOAT,
    ZGRT_BI_JSON_GET,
    ZGRT_BI_JSON_STR,
};
/* A builtin on n arguments. */
void zgrt_builtin(zgrt_ctx *ctx, int32_t builtin, int32_t n, const zgrt_value *args,
                  zgrt_value *out, int32_t loc);

/* Monitor state, for generated eval functions and CPL atoms.  zgrt_vc: the
 * lifeline's vector clock entry for `lifeline` (0 when it keeps none). */
int64_t zgrt_vc(zgrt_ctx *ctx, int32_t lifeline);
/* view(B, ψ) for @B(ψ): `slot` is the position of (B, ψ) in the calling
 * lifeline's keeps[L].views (a compile-time constant), not the subformula
 * id.  0 when no B-event is visible (vc[B] == 0), and for a slot that is
 * not (B, ·). */
int32_t zgrt_view(zgrt_ctx *ctx, int32_t lifeline, int32_t slot);
/* var(B, x) for @B.x, B not the calling lifeline (whose variables are its
 * store): `slot` is the position of (B, x) in keeps[L].varviews, not the
 * variable index.  NULL when undefined (no visible B-event, or x has no
 * value) and for a slot that is not (B, ·). */
const zgrt_value *zgrt_varview(zgrt_ctx *ctx, int32_t lifeline, int32_t slot);

/* X(name, llvm_signature, c_return, c_params): the signature code is the
 * return type then the parameter types, one letter each:
 *   v void   p pointer   i int32_t   l int64_t   d double */
#define ZGRT_ABI(X)                                                                              \
    X(zgrt_store, "pp", const zgrt_value *, (zgrt_ctx *))                                        \
    X(zgrt_send, "vpiiipi", void,                                                                \
      (zgrt_ctx *, int32_t, int32_t, int32_t, const zgrt_value *, int32_t))                      \
    X(zgrt_recv, "vpiiippi", void,                                                               \
      (zgrt_ctx *, int32_t, int32_t, int32_t, const int32_t *, const zgrt_value *, int32_t))     \
    X(zgrt_wait_any, "ipiipli", int32_t,                                                         \
      (zgrt_ctx *, int32_t, int32_t, const int32_t *, int64_t, int32_t))                         \
    X(zgrt_send_ctl, "vpiiiii", void, (zgrt_ctx *, int32_t, int32_t, int32_t, int32_t, int32_t)) \
    X(zgrt_recv_ctl, "ipiiii", int32_t, (zgrt_ctx *, int32_t, int32_t, int32_t, int32_t))        \
    X(zgrt_choice, "vpiii", void, (zgrt_ctx *, int32_t, int32_t, int32_t))                       \
    X(zgrt_choice_cpl, "ipiii", int32_t, (zgrt_ctx *, int32_t, int32_t, int32_t))                \
    X(zgrt_assign, "vppippi", void,                                                              \
      (zgrt_ctx *, const char *, int32_t, const int32_t *, const zgrt_value *, int32_t))         \
    X(zgrt_act, "vpipipi", void,                                                                 \
      (zgrt_ctx *, int32_t, const zgrt_value *, int32_t, const int32_t *, int32_t))              \
    X(zgrt_par, "vpipi", void, (zgrt_ctx *, int32_t, const zgrt_body_fn *, int32_t))             \
    X(zgrt_trap, "vpip", void, (zgrt_ctx *, int32_t, const char *))                              \
    X(zgrt_concat, "vpppp", void,                                                                \
      (zgrt_ctx *, const zgrt_value *, const zgrt_value *, zgrt_value *))                        \
    X(zgrt_compare, "ipp", int32_t, (const zgrt_value *, const zgrt_value *))                    \
    X(zgrt_builtin, "vpiippi", void,                                                             \
      (zgrt_ctx *, int32_t, int32_t, const zgrt_value *, zgrt_value *, int32_t))                 \
    X(zgrt_vc, "lpi", int64_t, (zgrt_ctx *, int32_t))                                            \
    X(zgrt_view, "ipii", int32_t, (zgrt_ctx *, int32_t, int32_t))                                \
    X(zgrt_varview, "ppii", const zgrt_value *, (zgrt_ctx *, int32_t, int32_t))                  \
    X(zgrt_op_begin, "vpii", void, (zgrt_ctx *, int32_t, int32_t))                               \
    X(zgrt_op_read, "vpiii", void, (zgrt_ctx *, int32_t, int32_t, int32_t))                      \
    X(zgrt_op_write, "vpipi", void, (zgrt_ctx *, int32_t, const zgrt_value *, int32_t))          \
    X(zgrt_op_tools, "vpipi", void, (zgrt_ctx *, int32_t, const int32_t *, int32_t))             \
    X(zgrt_op_commit, "ipi", int32_t, (zgrt_ctx *, int32_t))                                     \
    X(zgrt_main, "ipip", int, (const zgrt_program *, int, char **))

#ifdef __cplusplus
}
#endif
#endif
