/* check.h — the checker's shared context, internal to compiler/check*.c.
 *
 * The checker (zk_check, zgc.h) is split by concern; shared internal
 * functions have the prefix ck_, the public entry points keep zk_:
 *
 *   check.c          zk_check: the declarations, then one walk of each
 *                    workflow in source order (statements, the joins of
 *                    if/while/parallel, inputs and the final return)
 *   check_types.c    types of expressions and of statements; constants
 *                    and named guards typed on first use, variable
 *                    defaults; the shape of guard formulas; zk_is_cpl
 *   check_fold.c     constant folding: constant expressions evaluated by
 *                    eval.c and replaced by their values
 *   check_actions.c  action declarations: properties (vocab/vocab.h),
 *                    prompt placeholders, pure bodies
 *   check_defined.c  definedness: bit sets over (lifeline, variable) for
 *                    the path being walked and its trail, reads and
 *                    writes, "not defined" reports
 *   check_parallel.c the parallel rule (conflicting accesses of branches)
 *                    and the coregion rules
 *   check_stores.c   store declarations and the rules of atomic blocks
 *
 * Calls go one way, without cycles (scripts/check-layers.sh checks it):
 * check.c uses check_types.c, check_actions.c, check_defined.c,
 * check_parallel.c and check_stores.c; check_stores.c uses check_types.c
 * and check_fold.c; check_actions.c uses check_types.c and check_fold.c;
 * check_types.c uses check_fold.c, which uses eval.c; check_defined.c uses
 * check_parallel.c (accesses are recorded for the conflict rule);
 * check_parallel.c uses check_types.c (the messages of a coregion).
 * Errors are diagnostics (zgc.h's convention); what the checker builds
 * lives in the compilation's arena.
 */
#ifndef ZGC_CHECK_H
#define ZGC_CHECK_H

#include "zgc.h"

#include <stdlib.h>
#include <string.h>

/* ---- context ------------------------------------------------------------ */

/* Where an expression is checked; decides which names, calls and CPL
 * operators are allowed. */
typedef enum {
    X_CONST, /* constants, variable defaults, property values */
    X_PURE,  /* the body of a pure action */
    X_STMT,  /* statements: local computations, message values, arguments */
    X_GUARD, /* if/while conditions and guard declarations */
} XKind;

/* Accesses of one parallel branch: for the conflict rule. */
typedef struct Rec {
    int bit;
    bool write;
    ZSpan span;
} Rec;

typedef struct Access {
    ZVec recs;    /* Rec*: the first read and the first write of each bit */
    ZIMap seen;   /* bit -> 1 read recorded | 2 write recorded */
    ZIMap writes; /* bit -> 1: what the branch may write (its statements) */
} Access;

/* The parallel branches enclosing the statement being walked. */
typedef struct ParCtx {
    Access *acc;         /* this branch's accesses */
    const ZIMap *writes; /* bit -> how many branches of the region may write it */
    struct ParCtx *up;
} ParCtx;

/* Definedness of the path being walked, bit (lifeline * nvars + var):
 * must holds what is defined on every path to here, maybe what on some
 * path.  One pair of bit sets per workflow: a construct with several
 * paths walks each on the same sets and undoes it, keeping what it added
 * (a trail of the bits set), then joins what the paths added.  So a
 * construct costs what its paths define, not the size of the sets
 * (lifelines × variables): copying them per construct and per branch made
 * 4,000 parallel branches, each defining a variable of its own, take 2 s
 * to check and 20,000 branches minutes. */
#define CK_MAYBE 1u /* a trail entry is bit << 1 | CK_MAYBE for maybe */
typedef struct Delta {
    uint32_t *e; /* trail entries, heap (free()) */
    size_t n;
} Delta;

typedef struct Ck {
    ZArena *a;
    ZProgram *p;
    ZDiag *d;
    ZType *t_err, *t_bool, *t_int, *t_float, *t_str, *t_json, *t_null, *t_void;
    /* constants, by declaration index */
    unsigned char *const_state; /* 0 unchecked, 1 in progress, 2 done */
    bool *const_ok;             /* value known */
    ZValue *const_val;
    unsigned char *guard_state;
    int n_guard;
    unsigned *guard_gen; /* reads(): guards expanded in the current expression */
    unsigned gen;
    const ZDecl *pure; /* the pure action being checked (X_PURE) */
    /* workflow walk */
    const ZDecl *wf;
    int nl, nv, nwords;
    uint64_t *must, *maybe; /* the path being walked */
    uint32_t *trail;        /* what was set on the path, in order (heap) */
    size_t ntrail, captrail;
    uint64_t *scratch; /* all clear between two uses (joins) */
    ZIMap site;        /* bit -> ZSpan*: its first definition */
    ZIMap partial;     /* bit -> ZStmt*: the construct after which it is
                          defined on some paths only */
    uint64_t *reported;
    ParCtx *par;
} Ck;

static inline const char *pl(int n) { return n == 1 ? "" : "s"; }
static inline const char *were(int n) { return n == 1 ? "was" : "were"; }
static inline bool is_err(const ZType *t) { return !t || t->kind == TY_ERROR; }

static inline ZType *mk_type(Ck *c, ZTypeKind k)
{
    static const ZSpan none = {0, 0, 0, 0, 0, 0};
    return za_type(c->a, k, none);
}

static inline bool is_pure_kind(ZActionKind k) { return k == ACT_PURE || k == ACT_EXTERN_PURE; }

static inline bool is_literal(const ZExpr *e)
{
    return e->kind == E_INT || e->kind == E_FLOAT || e->kind == E_STR || e->kind == E_BOOL ||
           e->kind == E_NULL;
}

/* A variable, a constant, an enum member or a literal: what message values
 * and arguments of non-pure actions may be. */
static inline bool is_simple(const ZExpr *e)
{
    if (is_literal(e)) return true;
    return e->kind == E_NAME &&
           (e->name_kind == NAME_VAR || e->name_kind == NAME_CONST || e->name_kind == NAME_MEMBER);
}

/* The span of a construct's first line only (the keyword's line). */
static inline ZSpan first_line(ZSpan s)
{
    if (s.last_line != s.first_line) {
        s.last_line = s.first_line;
        s.last_column = 1 << 30;
    }
    return s;
}

/* ---- bit sets over (lifeline, variable) --------------------------------- */

static inline uint64_t *bits_new(Ck *c)
{
    return zu_alloc(c->a, sizeof(uint64_t) * (size_t)(c->nwords ? c->nwords : 1));
}
static inline bool bit_has(const uint64_t *b, int i) { return (b[i >> 6] >> (i & 63)) & 1u; }
static inline void bit_add(uint64_t *b, int i) { b[i >> 6] |= (uint64_t)1 << (i & 63); }

static inline int bit_of(const Ck *c, int life, const ZDecl *var)
{
    return life * c->nv + var->index;
}

static inline bool var_ok(const Ck *c, int life, const ZDecl *var)
{
    return var && var->kind == D_VAR && life >= 0 && life < c->nl && var->index >= 0 &&
           var->index < c->nv;
}

/* ---- check_types.c ------------------------------------------------------ */

/* Types `e` (and all its subexpressions) in context `x`. */
ZType *ck_type(Ck *c, ZExpr *e, XKind x);
/* Can a value of type `from` be stored where `to` is expected? */
bool ck_assignable(const ZType *to, const ZType *from);
/* The result type of an action: nothing, one type or a tuple. */
ZType *ck_result_type(Ck *c, const ZDecl *act);
/* Argument count and types of a call of an action.  simple: arguments
 * must be variables or constants (action statements of non-pure actions). */
void ck_action_args(Ck *c, ZExpr *e, const ZDecl *act, XKind x, bool simple);
/* The declarations, typed on first use (a use inside another declaration
 * may come first). */
ZType *ck_const_decl(Ck *c, ZDecl *d, ZSpan use);
ZType *ck_guard_decl(Ck *c, ZDecl *d);
void ck_var_decl(Ck *c, ZDecl *d);
/* The shape of a guard: CPL formulas combine only through !, &&, ||, ==,
 * != and ?:.  ctx: NULL in formula position. */
void ck_formula_shape(Ck *c, const ZExpr *e, const ZExpr *ctx);
/* Types of one message; its reads and writes are left to the caller. */
void ck_msg(Ck *c, ZStmt *s);
/* Types of an assignment (an action statement or a local expression). */
void ck_assign(Ck *c, ZStmt *s);
/* The condition of an if/while: bool, well-shaped. */
void ck_condition(Ck *c, ZStmt *s);

/* ---- check_fold.c ------------------------------------------------------- */

/* Folds *slot (already typed) and replaces it by its value when that is
 * simpler.  Returns whether the value is known; evaluation errors are
 * reported ("division by zero in constant expression"). */
bool ck_fold_into(Ck *c, ZExpr **slot, ZValue *v);

/* ---- check_actions.c ---------------------------------------------------- */

void ck_action_decl(Ck *c, ZDecl *act);

/* ---- check_defined.c ---------------------------------------------------- */

/* Starts the definedness walk of a workflow: nothing defined but the
 * variables with an initial value.  ck_walk_end frees what it uses. */
void ck_walk_begin(Ck *c);
void ck_walk_end(Ck *c);
/* var is written on life at `at`. */
void ck_define(Ck *c, int life, const ZDecl *var, ZSpan at);
/* The variable of E_NAME `e` is read on life; via: the named guard
 * through which it is read; check: report it when it is not defined. */
void ck_use(Ck *c, int life, const ZExpr *e, const ZExpr *via, bool check);
/* Every variable expression `e` reads on life. */
void ck_reads(Ck *c, int life, const ZExpr *e, bool check);
/* A position on the path: what was set so far. */
static inline size_t ck_mark(const Ck *c) { return c->ntrail; }
/* What was set since mark m, unset again (the path is back at m). */
Delta ck_undo(Ck *c, size_t m);
/* Sets one entry of a Delta on the path (no-op when already set). */
void ck_redo(Ck *c, uint32_t entry);
/* Defined on every path to here. */
static inline bool ck_must(const Ck *c, int bit) { return (c->must[bit >> 6] >> (bit & 63)) & 1u; }
/* bit is defined on some paths only after construct s. */
void ck_set_partial(Ck *c, int bit, const ZStmt *s);

/* ---- check_stores.c ----------------------------------------------------- */

/* A store declaration: cell defaults, tools, the level. */
void ck_store_decl(Ck *c, ZDecl *st);
/* The rules of an atomic block (what it may hold, in which order, tools,
 * cells written once); its items' types are ck_read_item/ck_write_item
 * and ck_assign. */
void ck_atomic_rules(Ck *c, ZStmt *s);
void ck_read_item(Ck *c, ZStmt *it);
void ck_write_item(Ck *c, ZStmt *it);

/* ---- check_parallel.c --------------------------------------------------- */

/* An access of bit by the statement being walked, for the conflict rule of
 * the enclosing parallel branches (nothing outside a region). */
void ck_record(Ck *c, int bit, bool write, ZSpan at);
/* Whether a sibling branch of an enclosing region writes bit. */
bool ck_written_by_sibling(const Ck *c, int bit);

/* One parallel region being walked: ck_par_begin (false, reported, when
 * it has no branch), then for each branch ck_par_enter ... ck_par_leave
 * around its walk, then ck_par_end (reports the conflicts, frees the
 * region's tables). */
typedef struct ParRegion {
    int n;
    Access *acc;  /* per branch */
    ZIMap writes; /* bit -> how many branches may write it */
    ParCtx ctx;   /* the branch being walked */
} ParRegion;
bool ck_par_begin(Ck *c, ParRegion *r, const ZStmt *s);
void ck_par_enter(Ck *c, ParRegion *r, int branch);
void ck_par_leave(Ck *c, ParRegion *r);
void ck_par_end(Ck *c, ParRegion *r);
/* The rules of a coregion and the types of its messages. */
void ck_coregion(Ck *c, ZStmt *s);

#endif
