/* check.c — types and definedness (language reference §3–§6).
 *
 * zk_check runs after zr_resolve.  It gives every expression its `type`,
 * checks the declarations (constants, defaults, guards, actions and their
 * properties) and then walks each workflow once, in source order, checking
 * each statement's types and, on the same walk, the definedness of every
 * variable per lifeline (§4 rule 4) and the parallel and coregion rules.
 *
 * Errors never cascade: an expression whose type cannot be known gets
 * TY_ERROR, which every check accepts silently, and an undefined variable
 * is reported once per (lifeline, variable) and then treated as defined.
 *
 * Decisions the reference leaves open:
 *   - constants fold at compile time (literals, constants, enum members,
 *     unary and binary operators, `?:`); afterwards a D_CONST's `expr` and a
 *     variable default are the folded literal (an enum member stays an
 *     E_NAME), so later passes never evaluate constant expressions;
 *   - llm actions need `parse` and at least one of `system`/`user`; human
 *     actions need `kind` and `prompt`.  Human kinds and their outputs:
 *       confirm -> one bool, input and edit -> one str,
 *       select -> one value of an enum type (the choices are its members),
 *       ack -> no output or one bool;
 *   - a placeholder is `{name}` with `name` an identifier; any other brace
 *     is literal text.  Placeholder columns are exact: they are found in the
 *     source text of the literal (escapes skipped), with the decoded string
 *     and a single-line estimate as a fallback when the source cannot be
 *     matched;
 *   - definedness: `if` joins by intersection; a `while` body is checked as
 *     its first iteration and may not run, so after the loop only what was
 *     defined before it and what its `else` (exit protocol, run once)
 *     defines is defined; after `parallel` everything any branch defines is
 *     defined; a coregion's sends read before all its receives define.
 *     Terms of a guard with temporal or causal operators may be undefined
 *     (the atom is false), so those guards are not checked for definedness.
 *   - a read of a variable that another branch of an enclosing `parallel`
 *     writes is reported once, as a parallel conflict, not also as
 *     undefined. */
#include "zgc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- context ------------------------------------------------------------ */

typedef struct CVal {
    ZTypeKind k; /* TY_INT, TY_FLOAT, TY_BOOL, TY_STR, TY_ENUM, TY_NULL */
    int64_t i;
    double f;
    bool b;
    const char *s;
    size_t n;
    ZDecl *en;
    int member;
} CVal;

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
    ZVec recs; /* Rec* */
    uint64_t *r, *w;
} Access;

/* The parallel branches enclosing the statement being walked. */
typedef struct ParCtx {
    Access *acc;         /* this branch's accesses */
    const uint64_t *sib; /* what the sibling branches write */
    struct ParCtx *up;
} ParCtx;

/* Definedness state: bit (lifeline * nvars + var). */
typedef struct Flow {
    uint64_t *must;  /* defined on every path */
    uint64_t *maybe; /* defined on some path */
} Flow;

typedef struct Ck {
    ZArena *a;
    ZProgram *p;
    ZDiag *d;
    ZType *t_err, *t_bool, *t_int, *t_float, *t_str, *t_json, *t_null, *t_void;
    /* constants, by declaration index */
    unsigned char *const_state; /* 0 unchecked, 1 in progress, 2 done */
    bool *const_ok;             /* value known */
    CVal *const_val;
    unsigned char *guard_state;
    int n_guard;
    unsigned *guard_gen; /* reads(): guards expanded in the current expression */
    unsigned gen;
    const ZDecl *pure; /* the pure action being checked (X_PURE) */
    /* workflow walk */
    const ZDecl *wf;
    int nl, nv, nwords;
    bool *has_site;
    ZSpan *site;        /* first definition of (lifeline, var) */
    const ZStmt **partial; /* construct after which it is defined on some paths only */
    uint64_t *reported;
    ParCtx *par;
} Ck;

static const char *pl(int n) { return n == 1 ? "" : "s"; }
static const char *were(int n) { return n == 1 ? "was" : "were"; }
static bool is_err(const ZType *t) { return !t || t->kind == TY_ERROR; }

static ZType *mk_type(Ck *c, ZTypeKind k)
{
    static const ZSpan none = {0, 0, 0, 0};
    return za_type(c->a, k, none);
}

static bool same_type(const ZType *x, const ZType *y)
{
    if (x->kind != y->kind) return false;
    if (x->kind == TY_ENUM) return x->enum_decl == y->enum_decl;
    if (x->kind == TY_TUPLE) {
        if (x->elems.len != y->elems.len) return false;
        for (int i = 0; i < x->elems.len; i++)
            if (!same_type(x->elems.items[i], y->elems.items[i])) return false;
    }
    return true;
}

/* Can a value of type `from` be stored where `to` is expected? */
static bool assignable(const ZType *to, const ZType *from)
{
    if (is_err(to) || is_err(from)) return true;
    if (from->kind == TY_NULL) return to->kind == TY_JSON || to->kind == TY_NULL;
    return same_type(to, from);
}

static const char *tstr(Ck *c, const ZType *t)
{
    if (!t) return "?";
    switch (t->kind) {
    case TY_BOOL: return "bool";
    case TY_INT: return "int";
    case TY_FLOAT: return "float";
    case TY_STR: return "str";
    case TY_JSON: return "json";
    case TY_NULL: return "null";
    case TY_VOID: return "nothing";
    case TY_ENUM:
    case TY_NAMED: return t->name ? t->name : "?";
    case TY_TUPLE: {
        ZBuf b = {0};
        zu_buf_putc(&b, '(');
        for (int i = 0; i < t->elems.len; i++)
            zu_buf_printf(&b, "%s%s", i ? ", " : "", tstr(c, t->elems.items[i]));
        zu_buf_putc(&b, ')');
        char *s = zu_strdup(c->a, b.data);
        zu_buf_free(&b);
        return s;
    }
    default: return "?";
    }
}

static bool is_pure_kind(ZActionKind k) { return k == ACT_PURE || k == ACT_EXTERN_PURE; }

static const char *life_name(Ck *c, int l)
{
    if (l < 0 || l >= c->p->lifelines.len) return "?";
    return ((ZDecl *)c->p->lifelines.items[l])->name;
}

/* A short source-like text for a message value or binding. */
static const char *expr_text(Ck *c, const ZExpr *e)
{
    switch (e->kind) {
    case E_NAME: return e->name ? e->name : "?";
    case E_INT: return zu_fmt(c->a, "%lld", (long long)e->lit.i);
    case E_FLOAT: return zu_fmt(c->a, "%g", e->lit.f);
    case E_BOOL: return e->lit.b ? "true" : "false";
    case E_NULL: return "null";
    case E_STR:
        if (e->slen <= 24 && e->lit.s && !memchr(e->lit.s, '\n', e->slen))
            return zu_fmt(c->a, "\"%.*s\"", (int)e->slen, e->lit.s);
        return "\"...\"";
    default: return "value";
    }
}

static bool is_literal(const ZExpr *e)
{
    return e->kind == E_INT || e->kind == E_FLOAT || e->kind == E_STR || e->kind == E_BOOL ||
           e->kind == E_NULL;
}

/* A variable, a constant, an enum member or a literal: what message values
 * and arguments of non-pure actions may be. */
static bool is_simple(const ZExpr *e)
{
    if (is_literal(e)) return true;
    return e->kind == E_NAME && (e->name_kind == NAME_VAR || e->name_kind == NAME_CONST ||
                                 e->name_kind == NAME_MEMBER);
}

/* The span of a construct's first line only (the keyword's line). */
static ZSpan first_line(ZSpan s)
{
    if (s.last_line != s.first_line) {
        s.last_line = s.first_line;
        s.last_column = 1 << 30;
    }
    return s;
}

/* ---- zk_is_cpl ---------------------------------------------------------- */

/* Named guards already looked through: each is expanded once, so shared
 * subformulas cost nothing more. */
typedef struct Seen {
    const ZDecl **d;
    int len, cap;
} Seen;

static bool seen_add(Seen *s, const ZDecl *d)
{
    for (int i = 0; i < s->len; i++)
        if (s->d[i] == d) return false;
    if (s->len == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 8;
        s->d = zu_xrealloc(s->d, sizeof *s->d * (size_t)s->cap);
    }
    s->d[s->len++] = d;
    return true;
}

static bool is_cpl(const ZExpr *e, Seen *seen)
{
    if (!e) return false;
    switch (e->kind) {
    case E_AT:
    case E_AT_VAR:
    case E_PREV:
    case E_SINCE:
    case E_ONCE:
    case E_HIST:
    case E_PAST:
    case E_SEEN:
        return true;
    case E_NAME:
        return e->name_kind == NAME_GUARD && e->decl && seen_add(seen, e->decl) &&
               is_cpl(e->decl->expr, seen);
    default:
        break;
    }
    if (is_cpl(e->a, seen) || is_cpl(e->b, seen) || is_cpl(e->c, seen)) return true;
    for (int i = 0; i < e->args.len; i++)
        if (is_cpl(e->args.items[i], seen)) return true;
    return false;
}

bool zk_is_cpl(const ZExpr *e)
{
    Seen seen = {0};
    bool r = is_cpl(e, &seen);
    free(seen.d);
    return r;
}

/* ---- expressions -------------------------------------------------------- */

static ZType *tc(Ck *c, ZExpr *e, XKind x);
static ZType *const_type(Ck *c, ZDecl *d, ZSpan use);
static ZType *guard_type(Ck *c, ZDecl *d);

static ZType *set(ZExpr *e, ZType *t)
{
    e->type = t;
    return t;
}

static ZType *name_type(Ck *c, ZExpr *e, XKind x)
{
    ZDecl *d = e->decl;
    if (!d) return c->t_err;
    switch (e->name_kind) {
    case NAME_VAR:
        if (x == X_CONST) {
            zd_error(c->d, e->span, "cannot read variable `%s` in a constant expression", e->name);
            return c->t_err;
        }
        if (x == X_PURE) {
            zd_error(c->d, e->span, "pure action `%s` cannot read variable `%s`: pass it as a parameter",
                     c->pure ? c->pure->name : "?", e->name);
            return c->t_err;
        }
        return d->type ? d->type : c->t_err;
    case NAME_CONST:
        return const_type(c, d, e->span);
    case NAME_MEMBER:
        return d->type ? d->type : c->t_err;
    case NAME_GUARD:
        if (x != X_GUARD) {
            zd_error(c->d, e->span, "guard `%s` can only be used in a guard formula", e->name);
            return c->t_err;
        }
        guard_type(c, d);
        return c->t_bool;
    case NAME_PARAM:
        if (e->member >= 0 && e->member < d->params.len) {
            ZParam *pp = d->params.items[e->member];
            return pp->type ? pp->type : c->t_err;
        }
        return c->t_err;
    default:
        return c->t_err;
    }
}

static bool numeric(const ZType *t) { return t->kind == TY_INT || t->kind == TY_FLOAT; }

static ZType *check_unary(Ck *c, ZExpr *e, XKind x)
{
    ZType *t = tc(c, e->a, x);
    if (e->op == OP_NOT) {
        if (!is_err(t) && t->kind != TY_BOOL)
            zd_error(c->d, e->a->span, "operator `!` needs a `bool` operand, not `%s`", tstr(c, t));
        return c->t_bool;
    }
    if (is_err(t)) return c->t_err;
    if (!numeric(t)) {
        zd_error(c->d, e->a->span, "operator `-` needs an `int` or `float` operand, not `%s`",
                 tstr(c, t));
        return c->t_err;
    }
    return t;
}

static void mix_error(Ck *c, ZExpr *e)
{
    zd_error(c->d, e->span, "cannot mix `int` and `float` in `%s`: use float(x) or int(x)",
             za_op_text(e->op));
}

static ZType *check_binary(Ck *c, ZExpr *e, XKind x)
{
    ZType *l = tc(c, e->a, x);
    ZType *r = tc(c, e->b, x);
    const char *op = za_op_text(e->op);
    switch (e->op) {
    case OP_AND:
    case OP_OR:
        if (!is_err(l) && l->kind != TY_BOOL)
            zd_error(c->d, e->a->span, "operator `%s` needs `bool` operands, not `%s`", op, tstr(c, l));
        if (!is_err(r) && r->kind != TY_BOOL)
            zd_error(c->d, e->b->span, "operator `%s` needs `bool` operands, not `%s`", op, tstr(c, r));
        return c->t_bool;
    case OP_EQ:
    case OP_NE:
        if (is_err(l) || is_err(r)) return c->t_bool;
        if (numeric(l) && numeric(r) && l->kind != r->kind) {
            mix_error(c, e);
        } else if (!assignable(l, r) && !assignable(r, l)) {
            zd_error(c->d, e->span, "cannot compare `%s` with `%s`", tstr(c, l), tstr(c, r));
        } else if (l->kind == TY_TUPLE || l->kind == TY_VOID) {
            zd_error(c->d, e->span, "cannot compare values of type `%s`", tstr(c, l));
        }
        return c->t_bool;
    case OP_LT:
    case OP_LE:
    case OP_GT:
    case OP_GE:
        if (is_err(l) || is_err(r)) return c->t_bool;
        if (numeric(l) && numeric(r) && l->kind != r->kind) {
            mix_error(c, e);
        } else if (!same_type(l, r)) {
            zd_error(c->d, e->span, "cannot compare `%s` with `%s`", tstr(c, l), tstr(c, r));
        } else if (!numeric(l) && l->kind != TY_STR) {
            zd_error(c->d, e->span, "operator `%s` needs `int`, `float` or `str` operands, not `%s`",
                     op, tstr(c, l));
        }
        return c->t_bool;
    default: /* arithmetic */
        if (is_err(l) || is_err(r)) return c->t_err;
        if (numeric(l) && numeric(r)) {
            if (l->kind != r->kind) {
                mix_error(c, e);
                return c->t_err;
            }
            return l;
        }
        if (e->op == OP_ADD && l->kind == TY_STR && r->kind == TY_STR) return l;
        {
            const ZType *bad = numeric(l) || (e->op == OP_ADD && l->kind == TY_STR) ? r : l;
            if (e->op == OP_ADD)
                zd_error(c->d, e->span, "operator `+` needs numbers or strings, not `%s` and `%s`",
                         tstr(c, l), tstr(c, r));
            else
                zd_error(c->d, e->span, "operator `%s` needs `int` or `float` operands, not `%s`", op,
                         tstr(c, bad));
        }
        return c->t_err;
    }
}

static ZType *check_cond(Ck *c, ZExpr *e, XKind x)
{
    ZType *ct = tc(c, e->c, x);
    ZType *a = tc(c, e->a, x);
    ZType *b = tc(c, e->b, x);
    if (!is_err(ct) && ct->kind != TY_BOOL)
        zd_error(c->d, e->c->span, "condition of `?:` must be `bool`, not `%s`", tstr(c, ct));
    if (is_err(a) || is_err(b)) return c->t_err;
    if (assignable(a, b)) return a->kind == TY_NULL ? b : a;
    if (assignable(b, a)) return b;
    zd_error(c->d, e->span, "the branches of `?:` have different types `%s` and `%s`", tstr(c, a),
             tstr(c, b));
    return c->t_err;
}

/* Argument count and types of a call of an action.  simple: arguments
 * must be variables or constants (action statements of non-pure actions). */
static void check_action_args(Ck *c, ZExpr *e, const ZDecl *act, XKind x, bool simple)
{
    int n = act->params.len, m = e->args.len;
    if (n != m)
        zd_error(c->d, e->span, "`%s` takes %d argument%s but %d %s given", act->name, n, pl(n), m,
                 were(m));
    for (int i = 0; i < m; i++) {
        ZExpr *arg = e->args.items[i];
        ZType *t = tc(c, arg, x);
        if (simple && !is_err(t) && !is_simple(arg)) {
            zd_error(c->d, arg->span, "arguments of %s action `%s` must be variables or constants",
                     za_action_kind_name(act->action), act->name);
            continue;
        }
        if (i >= n) continue;
        ZParam *pp = act->params.items[i];
        if (!assignable(pp->type, t))
            zd_error(c->d, arg->span, "argument `%s` of `%s` must be `%s`, not `%s`", pp->name,
                     act->name, tstr(c, pp->type), tstr(c, t));
    }
}

static ZType *result_type(Ck *c, const ZDecl *act)
{
    if (act->results.len == 0) return c->t_void;
    if (act->results.len == 1) {
        ZParam *r = act->results.items[0];
        return r->type ? r->type : c->t_err;
    }
    ZType *t = mk_type(c, TY_TUPLE);
    for (int i = 0; i < act->results.len; i++) {
        ZParam *r = act->results.items[i];
        zu_vec_push(c->a, &t->elems, r->type ? r->type : c->t_err);
    }
    return t;
}

static ZType *check_builtin(Ck *c, ZExpr *e, XKind x)
{
    const char *name = za_builtin_name(e->builtin);
    int n = za_builtin_arity(e->builtin), m = e->args.len;
    ZType *at[2] = {NULL, NULL};
    for (int i = 0; i < m; i++) {
        ZType *t = tc(c, e->args.items[i], x);
        if (i < 2) at[i] = t;
    }
    ZType *res;
    ZTypeKind want[2] = {TY_STR, TY_STR};
    switch (e->builtin) {
    case BI_LEN: res = c->t_int; break;
    case BI_LOWER:
    case BI_UPPER:
    case BI_TRIM: res = c->t_str; break;
    case BI_CONTAINS:
    case BI_STARTS_WITH:
    case BI_ENDS_WITH: res = c->t_bool; break;
    case BI_STR: res = c->t_str; break;
    case BI_INT: res = c->t_int; break;
    case BI_FLOAT: res = c->t_float; break;
    case BI_JSON_GET: res = c->t_json; want[0] = TY_JSON; break;
    case BI_JSON_STR: res = c->t_str; want[0] = TY_JSON; break;
    default: return c->t_err;
    }
    if (n != m) {
        zd_error(c->d, e->span, "`%s` takes %d argument%s but %d %s given", name, n, pl(n), m,
                 were(m));
        return res;
    }
    for (int i = 0; i < n && i < 2; i++) {
        ZType *t = at[i];
        ZExpr *arg = e->args.items[i];
        if (is_err(t)) continue;
        if (e->builtin == BI_STR) {
            if (t->kind == TY_TUPLE || t->kind == TY_VOID)
                zd_error(c->d, arg->span, "argument of `str` must be a value, not `%s`", tstr(c, t));
        } else if (e->builtin == BI_INT || e->builtin == BI_FLOAT) {
            if (!numeric(t) && t->kind != TY_STR)
                zd_error(c->d, arg->span, "argument of `%s` must be `int`, `float` or `str`, not `%s`",
                         name, tstr(c, t));
        } else if (t->kind != want[i]) {
            if (n == 1)
                zd_error(c->d, arg->span, "argument of `%s` must be `%s`, not `%s`", name,
                         want[i] == TY_JSON ? "json" : "str", tstr(c, t));
            else
                zd_error(c->d, arg->span, "argument %d of `%s` must be `%s`, not `%s`", i + 1, name,
                         want[i] == TY_JSON ? "json" : "str", tstr(c, t));
        }
    }
    return res;
}

static ZType *check_call(Ck *c, ZExpr *e, XKind x)
{
    if (x == X_CONST && (e->builtin != BI_NONE || e->decl)) {
        zd_error(c->d, e->span, "cannot call `%s` in a constant expression", e->name);
        for (int i = 0; i < e->args.len; i++) tc(c, e->args.items[i], X_STMT);
        return c->t_err;
    }
    if (e->builtin != BI_NONE) return check_builtin(c, e, x);
    const ZDecl *act = e->decl;
    if (!act || act->kind != D_ACTION) {
        for (int i = 0; i < e->args.len; i++) tc(c, e->args.items[i], x);
        return c->t_err;
    }
    if (act->action != ACT_PURE) { /* extern pure runs through the runtime: a statement of its own */
        zd_error(c->d, e->span,
                 "%s action `%s` can only be called as the whole right-hand side of an assignment",
                 za_action_kind_name(act->action), act->name);
        for (int i = 0; i < e->args.len; i++) tc(c, e->args.items[i], x);
        return c->t_err;
    }
    check_action_args(c, e, act, x, false);
    if (act->results.len != 1) {
        if (act->results.len > 1)
            zd_error(c->d, e->span,
                     "`%s` returns %d values: call it as the whole right-hand side of an assignment",
                     act->name, act->results.len);
        return c->t_err;
    }
    return result_type(c, act);
}

static const char *cpl_op_name(const ZExpr *e)
{
    switch (e->kind) {
    case E_PREV: return "prev";
    case E_SINCE: return "since";
    case E_ONCE: return "once";
    case E_HIST: return "historically";
    case E_PAST: return "past";
    default: return "?";
    }
}

/* @B(φ), @B.x, prev, since, once, historically, past, seen. */
static ZType *check_cpl(Ck *c, ZExpr *e, XKind x)
{
    if (x != X_GUARD) {
        if (e->kind == E_AT)
            zd_error(c->d, e->span, "causal operator `@%s(...)` is only allowed in guards", e->lifeline);
        else if (e->kind == E_AT_VAR)
            zd_error(c->d, e->span, "causal term `@%s.%s` is only allowed in guards", e->lifeline,
                     e->name);
        else if (e->kind == E_SEEN)
            zd_error(c->d, e->span, "causal operator `seen` is only allowed in guards");
        else
            zd_error(c->d, e->span, "temporal operator `%s` is only allowed in guards", cpl_op_name(e));
        /* type the operands without repeating the error */
        if (e->a) tc(c, e->a, X_GUARD);
        if (e->b) tc(c, e->b, X_GUARD);
        return c->t_err;
    }
    if (e->kind == E_AT_VAR) {
        if (!e->decl) return c->t_err;
        return e->decl->type ? e->decl->type : c->t_err;
    }
    if (e->kind == E_SEEN) return c->t_bool;
    ZExpr *ops[2] = {e->a, e->b};
    for (int i = 0; i < 2; i++) {
        if (!ops[i]) continue;
        ZType *t = tc(c, ops[i], x);
        if (is_err(t) || t->kind == TY_BOOL) continue;
        if (e->kind == E_AT)
            zd_error(c->d, ops[i]->span, "operand of `@%s(...)` must be `bool`, not `%s`", e->lifeline,
                     tstr(c, t));
        else
            zd_error(c->d, ops[i]->span, "operand of `%s` must be `bool`, not `%s`", cpl_op_name(e),
                     tstr(c, t));
    }
    return c->t_bool;
}

/* Types `e` (and all its subexpressions) in context `x`. */
static ZType *tc(Ck *c, ZExpr *e, XKind x)
{
    if (!e) return c->t_err;
    switch (e->kind) {
    case E_INT: return set(e, c->t_int);
    case E_FLOAT: return set(e, c->t_float);
    case E_STR: return set(e, c->t_str);
    case E_BOOL: return set(e, c->t_bool);
    case E_NULL: return set(e, c->t_null);
    case E_NAME: return set(e, name_type(c, e, x));
    case E_UNARY: return set(e, check_unary(c, e, x));
    case E_BINARY: return set(e, check_binary(c, e, x));
    case E_COND: return set(e, check_cond(c, e, x));
    case E_CALL: return set(e, check_call(c, e, x));
    case E_TUPLE:
        zd_error(c->d, e->span,
                 "a tuple is only allowed as a `fallback` value or as the body of a pure action");
        for (int i = 0; i < e->args.len; i++) tc(c, e->args.items[i], x);
        return set(e, c->t_err);
    case E_AT:
    case E_AT_VAR:
    case E_PREV:
    case E_SINCE:
    case E_ONCE:
    case E_HIST:
    case E_PAST:
    case E_SEEN:
        return set(e, check_cpl(c, e, x));
    default:
        return set(e, c->t_err);
    }
}

/* ---- constant folding --------------------------------------------------- */

static bool fold(Ck *c, const ZExpr *e, CVal *v);

static bool fold_error(Ck *c, const ZExpr *e, const char *what)
{
    zd_error(c->d, e->span, "%s in constant expression", what);
    return false;
}

static int cval_cmp(const CVal *x, const CVal *y)
{
    switch (x->k) {
    case TY_INT: return (x->i > y->i) - (x->i < y->i);
    case TY_FLOAT: return (x->f > y->f) - (x->f < y->f);
    case TY_STR: {
        size_t n = x->n < y->n ? x->n : y->n;
        int r = memcmp(x->s, y->s, n);
        if (r) return r < 0 ? -1 : 1;
        return (x->n > y->n) - (x->n < y->n);
    }
    case TY_BOOL: return x->b != y->b;
    case TY_ENUM: return x->en != y->en || x->member != y->member;
    default: return 0;
    }
}

static bool fold_arith(Ck *c, const ZExpr *e, const CVal *l, const CVal *r, CVal *v)
{
    v->k = l->k;
    if (l->k == TY_STR) { /* + */
        char *s = zu_alloc(c->a, l->n + r->n + 1);
        memcpy(s, l->s, l->n);
        memcpy(s + l->n, r->s, r->n);
        v->s = s;
        v->n = l->n + r->n;
        return true;
    }
    if (l->k == TY_FLOAT) {
        switch (e->op) {
        case OP_ADD: v->f = l->f + r->f; break;
        case OP_SUB: v->f = l->f - r->f; break;
        case OP_MUL: v->f = l->f * r->f; break;
        case OP_DIV:
            if (r->f == 0) return fold_error(c, e, "division by zero");
            v->f = l->f / r->f;
            break;
        case OP_MOD:
            if (r->f == 0) return fold_error(c, e, "division by zero");
            v->f = fmod(l->f, r->f);
            break;
        default: return false;
        }
        if (!isfinite(v->f)) return fold_error(c, e, "float overflow");
        return true;
    }
    bool over = false;
    switch (e->op) {
    case OP_ADD: over = __builtin_add_overflow(l->i, r->i, &v->i); break;
    case OP_SUB: over = __builtin_sub_overflow(l->i, r->i, &v->i); break;
    case OP_MUL: over = __builtin_mul_overflow(l->i, r->i, &v->i); break;
    case OP_DIV:
    case OP_MOD:
        if (r->i == 0) return fold_error(c, e, "division by zero");
        if (l->i == INT64_MIN && r->i == -1) over = true;
        else v->i = e->op == OP_DIV ? l->i / r->i : l->i % r->i;
        break;
    default: return false;
    }
    if (over) return fold_error(c, e, "integer overflow");
    return true;
}

static bool fold_binary(Ck *c, const ZExpr *e, CVal *v)
{
    CVal l = {0}, r = {0};
    bool ok_l = fold(c, e->a, &l), ok_r = fold(c, e->b, &r); /* report both sides */
    if (!ok_l || !ok_r) return false;
    switch (e->op) {
    case OP_AND: v->k = TY_BOOL; v->b = l.b && r.b; return true;
    case OP_OR: v->k = TY_BOOL; v->b = l.b || r.b; return true;
    case OP_EQ:
    case OP_NE:
        v->k = TY_BOOL;
        v->b = (l.k == r.k && cval_cmp(&l, &r) == 0) == (e->op == OP_EQ);
        return true;
    case OP_LT: v->k = TY_BOOL; v->b = cval_cmp(&l, &r) < 0; return true;
    case OP_LE: v->k = TY_BOOL; v->b = cval_cmp(&l, &r) <= 0; return true;
    case OP_GT: v->k = TY_BOOL; v->b = cval_cmp(&l, &r) > 0; return true;
    case OP_GE: v->k = TY_BOOL; v->b = cval_cmp(&l, &r) >= 0; return true;
    default: return fold_arith(c, e, &l, &r, v);
    }
}

/* Evaluates a type-correct constant expression.  False when it is not
 * constant (already reported) or evaluation fails (reported here). */
static bool fold(Ck *c, const ZExpr *e, CVal *v)
{
    if (!e || is_err(e->type)) return false;
    memset(v, 0, sizeof *v);
    switch (e->kind) {
    case E_INT: v->k = TY_INT; v->i = e->lit.i; return true;
    case E_FLOAT: v->k = TY_FLOAT; v->f = e->lit.f; return true;
    case E_BOOL: v->k = TY_BOOL; v->b = e->lit.b; return true;
    case E_STR: v->k = TY_STR; v->s = e->lit.s ? e->lit.s : ""; v->n = e->slen; return true;
    case E_NULL: v->k = TY_NULL; return true;
    case E_NAME:
        if (e->name_kind == NAME_MEMBER && e->decl) {
            v->k = TY_ENUM;
            v->en = e->decl;
            v->member = e->member;
            return true;
        }
        if (e->name_kind == NAME_CONST && e->decl && c->const_state[e->decl->index] == 2 &&
            c->const_ok[e->decl->index]) {
            *v = c->const_val[e->decl->index];
            return true;
        }
        return false;
    case E_UNARY: {
        CVal a;
        if (!fold(c, e->a, &a)) return false;
        *v = a;
        if (e->op == OP_NOT) v->b = !a.b;
        else if (a.k == TY_FLOAT) v->f = -a.f;
        else if (a.i == INT64_MIN) return fold_error(c, e, "integer overflow");
        else v->i = -a.i;
        return true;
    }
    case E_BINARY: return fold_binary(c, e, v);
    case E_COND: {
        CVal cv, a, b;
        bool ok_c = fold(c, e->c, &cv), ok_a = fold(c, e->a, &a), ok_b = fold(c, e->b, &b);
        if (!ok_c || !ok_a || !ok_b) return false;
        *v = cv.b ? a : b;
        return true;
    }
    default: return false;
    }
}

/* A literal (or enum member) expression for a folded value. */
static ZExpr *literal_of(Ck *c, const CVal *v, ZSpan at, ZType *t)
{
    ZExpr *e;
    switch (v->k) {
    case TY_INT: e = za_expr(c->a, E_INT, at); e->lit.i = v->i; break;
    case TY_FLOAT: e = za_expr(c->a, E_FLOAT, at); e->lit.f = v->f; break;
    case TY_BOOL: e = za_expr(c->a, E_BOOL, at); e->lit.b = v->b; break;
    case TY_STR: e = za_expr(c->a, E_STR, at); e->lit.s = v->s; e->slen = v->n; break;
    case TY_NULL: e = za_expr(c->a, E_NULL, at); break;
    case TY_ENUM: {
        e = za_expr(c->a, E_NAME, at);
        ZParam *m = v->en->members.items[v->member];
        e->name = m->name;
        e->name_span = at;
        e->name_kind = NAME_MEMBER;
        e->decl = v->en;
        e->member = v->member;
        break;
    }
    default: return NULL;
    }
    e->life = -1;
    e->type = t;
    return e;
}

/* Folds *slot (already typed) and replaces it by its value when that is
 * simpler.  Returns whether the value is known. */
static bool fold_into(Ck *c, ZExpr **slot, CVal *v)
{
    ZExpr *e = *slot;
    if (!fold(c, e, v)) return false;
    if (!is_literal(e) && e->kind != E_NAME) {
        ZExpr *lit = literal_of(c, v, e->span, e->type);
        if (lit) *slot = lit;
    } else if (e->kind == E_NAME && e->name_kind == NAME_CONST) {
        ZExpr *lit = literal_of(c, v, e->span, e->type);
        if (lit) *slot = lit;
    }
    return true;
}

static ZType *const_type(Ck *c, ZDecl *d, ZSpan use)
{
    int i = d->index;
    if (c->const_state[i] == 2) return d->type ? d->type : c->t_err;
    if (c->const_state[i] == 1) {
        zd_error(c->d, use, "constant `%s` is defined in terms of itself", d->name);
        return c->t_err;
    }
    c->const_state[i] = 1;
    ZType *t = tc(c, d->expr, X_CONST);
    if (!is_err(t) && t->kind != TY_INT && t->kind != TY_FLOAT && t->kind != TY_BOOL &&
        t->kind != TY_STR) {
        zd_error(c->d, d->expr->span, "constant `%s` must be `int`, `float`, `bool` or `str`, not `%s`",
                 d->name, tstr(c, t));
        t = c->t_err;
    }
    d->type = t;
    c->const_state[i] = 2;
    if (!is_err(t)) c->const_ok[i] = fold_into(c, &d->expr, &c->const_val[i]);
    return t;
}

/* In a guard, temporal and causal formulas combine only through `!`, `&&`,
 * `||`, `==`, `!=` and `?:` (and the CPL operators themselves).  Under any
 * other operator or inside a call they would be values of an expression,
 * which the monitor does not compute.  `ctx` is the innermost enclosing
 * operator or call that needs values, or NULL in formula position. */
static bool is_formula_op(const ZExpr *e)
{
    switch (e->kind) {
    case E_AT: case E_PREV: case E_SINCE: case E_ONCE: case E_HIST: case E_PAST: case E_SEEN:
        return true;
    case E_NAME: return e->name_kind == NAME_GUARD && zk_is_cpl(e);
    default: return false;
    }
}

static void check_formula_shape(Ck *c, const ZExpr *e, const ZExpr *ctx)
{
    if (!e) return;
    if (is_formula_op(e)) {
        if (ctx) {
            const char *what = e->kind == E_NAME ? e->name
                             : e->kind == E_AT ? "@(...)"
                             : e->kind == E_SEEN ? "seen" : cpl_op_name(e);
            if (ctx->kind == E_CALL)
                zd_error(c->d, e->span, "`%s` cannot be an argument of `%s`: combine temporal and causal "
                         "formulas only with `!`, `&&`, `||`, `==`, `!=` and `?:`", what, ctx->name);
            else
                zd_error(c->d, e->span, "`%s` cannot be an operand of `%s`: combine temporal and causal "
                         "formulas only with `!`, `&&`, `||`, `==`, `!=` and `?:`", what, za_op_text(ctx->op));
            return;
        }
        check_formula_shape(c, e->a, NULL);
        check_formula_shape(c, e->b, NULL);
        return;
    }
    const ZExpr *inner = ctx;
    switch (e->kind) {
    case E_UNARY: if (e->op != OP_NOT) inner = e; break;
    case E_BINARY:
        if (e->op != OP_AND && e->op != OP_OR && e->op != OP_EQ && e->op != OP_NE) inner = e;
        break;
    case E_CALL: inner = e; break;
    default: break;
    }
    check_formula_shape(c, e->a, inner);
    check_formula_shape(c, e->b, inner);
    check_formula_shape(c, e->c, inner);
    for (int i = 0; i < e->args.len; i++) check_formula_shape(c, e->args.items[i], inner);
}

static ZType *guard_type(Ck *c, ZDecl *d)
{
    int i = d->index;
    if (c->guard_state[i]) return c->t_bool;
    c->guard_state[i] = 1;
    ZType *t = tc(c, d->expr, X_GUARD);
    if (!is_err(t) && t->kind != TY_BOOL)
        zd_error(c->d, d->expr->span, "guard `%s` must be a `bool` formula, not `%s`", d->name,
                 tstr(c, t));
    else if (!is_err(t))
        check_formula_shape(c, d->expr, NULL);
    c->guard_state[i] = 2;
    return c->t_bool;
}

static void check_var(Ck *c, ZDecl *d)
{
    if (!d->expr) return;
    ZType *t = tc(c, d->expr, X_CONST);
    if (!assignable(d->type, t)) {
        zd_error(c->d, d->expr->span, "cannot assign `%s` to `%s` of type `%s`", tstr(c, t), d->name,
                 tstr(c, d->type));
        return;
    }
    CVal v;
    if (!is_err(t)) fold_into(c, &d->expr, &v);
}

/* ---- actions ------------------------------------------------------------ */

/* Byte offset of (line, column) in the source, or -1. */
static long source_offset(const ZSource *src, int line, int col)
{
    if (!src || !src->text || line < 1 || col < 1) return -1;
    size_t i = 0;
    for (int l = 1; l < line; i++) {
        if (i >= src->len) return -1;
        if (src->text[i] == '\n') l++;
    }
    for (int k = 1; k < col; i++) {
        if (i >= src->len || src->text[i] == '\n') return -1;
        if (((unsigned char)src->text[i] & 0xC0) != 0x80) {
            /* count a column when the next code point starts */
            size_t j = i + 1;
            while (j < src->len && ((unsigned char)src->text[j] & 0xC0) == 0x80) j++;
            i = j - 1;
            k++;
        }
    }
    return (long)i;
}

static bool ident_start(char ch)
{
    return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}
static bool ident_char(char ch) { return ident_start(ch) || (ch >= '0' && ch <= '9'); }

static bool is_input(const ZDecl *act, const char *s, size_t n)
{
    for (int i = 0; i < act->params.len; i++) {
        ZParam *pp = act->params.items[i];
        if (pp->name && strlen(pp->name) == n && memcmp(pp->name, s, n) == 0) return true;
    }
    return false;
}

static void bad_placeholder(Ck *c, const ZDecl *act, const char *s, size_t n, int line, int col)
{
    ZSpan at = {line, col, line, col + (int)n + 1};
    zd_error(c->d, at, "placeholder `{%.*s}` does not name an input of `%s`", (int)n, s, act->name);
}

/* Scans the literal in the source: exact line and column. */
static bool placeholders_in_source(Ck *c, const ZExpr *str, const ZDecl *act)
{
    const ZSource *src = c->p->src;
    long off = source_offset(src, str->span.first_line, str->span.first_column);
    if (off < 0 || src->text[off] != '"') return false;
    const char *t = src->text;
    size_t n = src->len, i = (size_t)off;
    bool triple = i + 2 < n && t[i + 1] == '"' && t[i + 2] == '"';
    int line = str->span.first_line, col = str->span.first_column;
    size_t skip = triple ? 3 : 1;
    i += skip;
    col += (int)skip;
    while (i < n) {
        char ch = t[i];
        if (triple ? (ch == '"' && i + 2 < n && t[i + 1] == '"' && t[i + 2] == '"') : ch == '"') break;
        if (!triple && ch == '\n') break;
        size_t step = 1;
        if (ch == '\\' && i + 1 < n) {
            step = 2;
            if (t[i + 1] == 'u' && i + 2 < n && t[i + 2] == '{') {
                while (i + step < n && t[i + step] != '}' && t[i + step] != '"' && t[i + step] != '\n')
                    step++;
                if (i + step < n && t[i + step] == '}') step++;
            }
        } else if (ch == '{' && i + 1 < n && ident_start(t[i + 1])) {
            size_t j = i + 1;
            while (j < n && ident_char(t[j])) j++;
            if (j < n && t[j] == '}') {
                if (!is_input(act, t + i + 1, j - i - 1))
                    bad_placeholder(c, act, t + i + 1, j - i - 1, line, col);
                step = j + 1 - i;
            }
        }
        for (size_t k = 0; k < step; k++) {
            unsigned char b = (unsigned char)t[i + k];
            if (b == '\n') {
                line++;
                col = 1;
            } else if ((b & 0xC0) != 0x80) {
                col++;
            }
        }
        i += step;
    }
    return true;
}

/* Placeholders of a prompt must name inputs of the action. */
static void check_placeholders(Ck *c, const ZExpr *str, const ZDecl *act)
{
    if (placeholders_in_source(c, str, act)) return;
    /* fallback: the decoded text, columns estimated on the first line */
    const char *s = str->lit.s ? str->lit.s : "";
    int col = str->span.first_column + 1;
    for (size_t i = 0; i < str->slen; i++) {
        if (s[i] == '{' && i + 1 < str->slen && ident_start(s[i + 1])) {
            size_t j = i + 1;
            while (j < str->slen && ident_char(s[j])) j++;
            if (j < str->slen && s[j] == '}' && !is_input(act, s + i + 1, j - i - 1))
                bad_placeholder(c, act, s + i + 1, j - i - 1, str->span.first_line, col);
        }
        if (((unsigned char)s[i] & 0xC0) != 0x80) col++;
    }
}

/* Exactly one output, of the given kind. */
static bool one_output(const ZDecl *act, ZTypeKind k)
{
    if (act->results.len != 1) return false;
    ZParam *r = act->results.items[0];
    return is_err(r->type) || r->type->kind == k;
}

static bool name_is(const ZExpr *e, const char *s)
{
    return e->kind == E_NAME && e->name && strcmp(e->name, s) == 0;
}

static void check_parse_prop(Ck *c, const ZDecl *act, ZExpr *v)
{
    static const char *const names[] = {"text", "json", "bool", "int", "float", "enum"};
    static const ZTypeKind kinds[] = {TY_STR, TY_JSON, TY_BOOL, TY_INT, TY_FLOAT, TY_ENUM};
    v->type = c->t_void;
    for (int i = 0; i < 6; i++) {
        if (!name_is(v, names[i])) continue;
        if (kinds[i] == TY_JSON || one_output(act, kinds[i])) return;
        if (kinds[i] == TY_ENUM)
            zd_error(c->d, v->span, "`parse = enum` needs exactly one output of an enum type");
        else
            zd_error(c->d, v->span, "`parse = %s` needs exactly one `%s` output", names[i],
                     i == 0 ? "str" : names[i]);
        return;
    }
    zd_error(c->d, v->span, "`parse` must be one of text, json, bool, int, float or enum");
}

static void check_kind_prop(Ck *c, const ZDecl *act, ZExpr *v)
{
    v->type = c->t_void;
    if (name_is(v, "confirm")) {
        if (!one_output(act, TY_BOOL))
            zd_error(c->d, v->span, "`kind = confirm` needs exactly one `bool` output");
    } else if (name_is(v, "input") || name_is(v, "edit")) {
        if (!one_output(act, TY_STR))
            zd_error(c->d, v->span, "`kind = %s` needs exactly one `str` output", v->name);
    } else if (name_is(v, "select")) {
        if (!one_output(act, TY_ENUM))
            zd_error(c->d, v->span, "`kind = select` needs exactly one output of an enum type");
    } else if (name_is(v, "ack")) {
        if (act->results.len != 0 && !one_output(act, TY_BOOL))
            zd_error(c->d, v->span, "`kind = ack` needs no output or one `bool` output");
    } else {
        zd_error(c->d, v->span, "`kind` must be one of confirm, input, select, edit or ack");
    }
}

static void check_fallback(Ck *c, const ZDecl *act, ZProp *pr)
{
    ZExpr *v = pr->value;
    int n = act->results.len;
    bool tuple = v->kind == E_TUPLE;
    int m = tuple ? v->args.len : 1;
    if (tuple) v->type = c->t_void;
    if (n == 0) {
        zd_error(c->d, v->span, "`fallback` given but `%s` has no outputs", act->name);
        return;
    }
    if (m != n) {
        zd_error(c->d, v->span, "`fallback` has %d value%s but `%s` has %d output%s", m, pl(m),
                 act->name, n, pl(n));
        return;
    }
    for (int i = 0; i < m; i++) {
        ZExpr **slot = tuple ? (ZExpr **)&v->args.items[i] : &pr->value;
        ZType *t = tc(c, *slot, X_CONST);
        ZParam *out = act->results.items[i];
        if (!assignable(out->type, t)) {
            if (out->name)
                zd_error(c->d, (*slot)->span, "fallback value for `%s` must be `%s`, not `%s`",
                         out->name, tstr(c, out->type), tstr(c, t));
            else
                zd_error(c->d, (*slot)->span, "fallback value %d must be `%s`, not `%s`", i + 1,
                         tstr(c, out->type), tstr(c, t));
            continue;
        }
        CVal cv;
        if (!is_err(t)) fold_into(c, slot, &cv);
    }
}

static void check_number_prop(Ck *c, ZProp *pr, bool temperature)
{
    if (!temperature && name_is(pr->value, "forever")) {
        pr->value->type = c->t_void;
        return;
    }
    ZType *t = tc(c, pr->value, X_CONST);
    if (is_err(t)) return;
    CVal v;
    bool ok = (t->kind == TY_INT || (temperature && t->kind == TY_FLOAT)) &&
              fold_into(c, &pr->value, &v);
    if (ok && temperature) {
        double x = v.k == TY_INT ? (double)v.i : v.f;
        ok = x >= 0 && x <= 1;
    } else if (ok) {
        ok = v.i >= 0;
    }
    if (ok) return;
    if (temperature)
        zd_error(c->d, pr->value->span, "`temperature` must be a number between 0 and 1");
    else
        zd_error(c->d, pr->value->span, "`retries` must be a non-negative integer or `forever`");
}

static void check_prompt_prop(Ck *c, const ZDecl *act, ZProp *pr)
{
    ZExpr *v = pr->value;
    if (v->kind != E_STR) {
        tc(c, v, X_CONST);
        zd_error(c->d, v->span, "`%s` must be a string literal", pr->key);
        return;
    }
    v->type = c->t_str;
    check_placeholders(c, v, act);
}

static bool key_in(const char *key, const char *const *keys)
{
    for (; *keys; keys++)
        if (strcmp(key, *keys) == 0) return true;
    return false;
}

static void check_props(Ck *c, const ZDecl *act)
{
    static const char *const llm_keys[] = {"system", "user", "parse", "model",
                                           "temperature", "retries", "fallback", NULL};
    static const char *const human_keys[] = {"kind", "prompt", NULL};
    bool llm = act->action == ACT_LLM;
    for (int i = 0; i < act->props.len; i++) {
        ZProp *pr = act->props.items[i];
        if (!pr->key || !pr->value) continue;
        bool dup = false;
        for (int j = 0; j < i && !dup; j++) {
            ZProp *o = act->props.items[j];
            if (o->key && strcmp(o->key, pr->key) == 0) {
                zd_error(c->d, pr->span, "duplicate property `%s`", pr->key);
                zd_note(c->d, o->span, "previous `%s` here", pr->key);
                dup = true;
            }
        }
        if (dup) {
            tc(c, pr->value, X_CONST);
            continue;
        }
        if (!key_in(pr->key, llm ? llm_keys : human_keys)) {
            zd_error(c->d, pr->span, "unknown property `%s` in %s action `%s`", pr->key,
                     za_action_kind_name(act->action), act->name);
            zd_note(c->d, act->name_span, "the properties of %s actions are %s",
                    za_action_kind_name(act->action),
                    llm ? "system, user, parse, model, temperature, retries and fallback"
                        : "kind and prompt");
            pr->value->type = c->t_void;
            continue;
        }
        const char *k = pr->key;
        if (!strcmp(k, "system") || !strcmp(k, "user") || !strcmp(k, "prompt")) {
            check_prompt_prop(c, act, pr);
        } else if (!strcmp(k, "parse")) {
            check_parse_prop(c, act, pr->value);
        } else if (!strcmp(k, "kind")) {
            check_kind_prop(c, act, pr->value);
        } else if (!strcmp(k, "model")) {
            ZType *t = tc(c, pr->value, X_CONST);
            CVal v;
            if (!is_err(t) && t->kind != TY_STR)
                zd_error(c->d, pr->value->span, "`model` must be a string, not `%s`", tstr(c, t));
            else if (!is_err(t))
                fold_into(c, &pr->value, &v);
        } else if (!strcmp(k, "temperature") || !strcmp(k, "retries")) {
            check_number_prop(c, pr, k[0] == 't');
        } else if (!strcmp(k, "fallback")) {
            check_fallback(c, act, pr);
        }
    }
}

static const ZProp *find_prop(const ZDecl *act, const char *key)
{
    for (int i = 0; i < act->props.len; i++) {
        const ZProp *pr = act->props.items[i];
        if (pr->key && strcmp(pr->key, key) == 0) return pr;
    }
    return NULL;
}

/* The body of a pure action: one expression, or a tuple of expressions
 * for a tuple result. */
static void check_pure_body(Ck *c, ZDecl *act)
{
    ZExpr *body = act->expr;
    int n = act->results.len;
    if (n == 0) {
        tc(c, body, X_PURE);
        return;
    }
    if (body->kind == E_TUPLE || n > 1) {
        int m = body->kind == E_TUPLE ? body->args.len : 1;
        if (m != n) {
            zd_error(c->d, body->span, "the body of `%s` gives %d value%s but `%s` returns %d",
                     act->name, m, pl(m), act->name, n);
            if (body->kind == E_TUPLE)
                for (int i = 0; i < m; i++) tc(c, body->args.items[i], X_PURE);
            else
                tc(c, body, X_PURE);
            body->type = c->t_err;
            return;
        }
        for (int i = 0; i < n; i++) {
            ZExpr *e = body->args.items[i];
            ZParam *r = act->results.items[i];
            ZType *t = tc(c, e, X_PURE);
            if (!assignable(r->type, t))
                zd_error(c->d, e->span, "value %d of the body of `%s` is `%s` but `%s` returns `%s`",
                         i + 1, act->name, tstr(c, t), act->name, tstr(c, r->type));
        }
        body->type = result_type(c, act);
        return;
    }
    ZParam *r = act->results.items[0];
    ZType *t = tc(c, body, X_PURE);
    if (!assignable(r->type, t))
        zd_error(c->d, body->span, "the body of `%s` is `%s` but `%s` returns `%s`", act->name,
                 tstr(c, t), act->name, tstr(c, r->type));
}

static void check_action(Ck *c, ZDecl *act)
{
    switch (act->action) {
    case ACT_LLM:
        if (act->results.len == 0) {
            zd_error(c->d, act->name_span, "llm action `%s` must declare its outputs", act->name);
        } else if (!act->named_results) {
            ZParam *r = act->results.items[0];
            zd_error(c->d, r->span, "outputs of llm action `%s` must be named, as in `-> (answer: %s)`",
                     act->name, tstr(c, r->type));
        }
        if (!act->has_body) {
            zd_error(c->d, act->name_span, "llm action `%s` needs a body with its prompts", act->name);
            break;
        }
        check_props(c, act);
        if (!find_prop(act, "parse"))
            zd_error(c->d, act->name_span, "llm action `%s` needs `parse = ...`", act->name);
        if (!find_prop(act, "system") && !find_prop(act, "user"))
            zd_error(c->d, act->name_span, "llm action `%s` needs a prompt: `system` or `user`",
                     act->name);
        break;
    case ACT_HUMAN:
        if (!act->has_body) {
            zd_error(c->d, act->name_span, "human action `%s` needs a body with `kind` and `prompt`",
                     act->name);
            break;
        }
        check_props(c, act);
        if (!find_prop(act, "kind"))
            zd_error(c->d, act->name_span, "human action `%s` needs `kind = ...`", act->name);
        if (!find_prop(act, "prompt"))
            zd_error(c->d, act->name_span, "human action `%s` needs `prompt = ...`", act->name);
        break;
    case ACT_PURE:
    case ACT_EXTERN_PURE:
        if (act->results.len == 0)
            zd_error(c->d, act->name_span, "pure action `%s` must return a value", act->name);
        if (act->action == ACT_PURE && act->expr) {
            c->pure = act;
            check_pure_body(c, act);
            c->pure = NULL;
        }
        break;
    case ACT_EFFECT:
        break;
    case ACT__COUNT:
        ZU_UNREACHABLE();
    }
}

/* ---- definedness: bit sets ---------------------------------------------- */

static uint64_t *bits_new(Ck *c)
{
    return zu_alloc(c->a, sizeof(uint64_t) * (size_t)(c->nwords ? c->nwords : 1));
}
static bool bit_has(const uint64_t *b, int i) { return (b[i >> 6] >> (i & 63)) & 1u; }
static void bit_add(uint64_t *b, int i) { b[i >> 6] |= (uint64_t)1 << (i & 63); }

static Flow flow_copy(Ck *c, const Flow *f)
{
    Flow g = {bits_new(c), bits_new(c)};
    memcpy(g.must, f->must, sizeof(uint64_t) * (size_t)c->nwords);
    memcpy(g.maybe, f->maybe, sizeof(uint64_t) * (size_t)c->nwords);
    return g;
}

static int bit_of(Ck *c, int life, const ZDecl *var) { return life * c->nv + var->index; }

static bool var_ok(Ck *c, int life, const ZDecl *var)
{
    return var && var->kind == D_VAR && life >= 0 && life < c->nl && var->index >= 0 &&
           var->index < c->nv;
}

static void record(Ck *c, int bit, bool write, ZSpan at)
{
    if (!c->par) return;
    Access *acc = c->par->acc;
    uint64_t *set = write ? acc->w : acc->r;
    if (bit_has(set, bit)) return; /* the first access of each kind is enough */
    bit_add(set, bit);
    Rec *r = zu_alloc(c->a, sizeof *r);
    r->bit = bit;
    r->write = write;
    r->span = at;
    zu_vec_push(c->a, &acc->recs, r);
}

static void define(Ck *c, Flow *f, int life, const ZDecl *var, ZSpan at)
{
    if (!var_ok(c, life, var)) return;
    int bit = bit_of(c, life, var);
    bit_add(f->must, bit);
    bit_add(f->maybe, bit);
    if (!c->has_site[bit]) {
        c->has_site[bit] = true;
        c->site[bit] = at;
    }
    record(c, bit, true, at);
}

static bool written_by_sibling(const Ck *c, int bit)
{
    for (const ParCtx *p = c->par; p; p = p->up)
        if (bit_has(p->sib, bit)) return true;
    return false;
}

/* via: the named guard through which `var` is read (at its use, `at`);
 * inner: the variable in the guard's formula. */
static void undefined(Ck *c, Flow *f, int life, const ZDecl *var, ZSpan at, const ZExpr *via,
                      ZSpan inner)
{
    int bit = bit_of(c, life, var);
    bit_add(f->must, bit); /* report once on this path */
    if (bit_has(c->reported, bit)) return;
    bit_add(c->reported, bit);
    if (written_by_sibling(c, bit)) return; /* a parallel conflict, reported as such */
    zd_error(c->d, at, "`%s` is not defined on %s here", var->name, life_name(c, life));
    if (via)
        zd_note(c->d, inner, "`%s` is read by guard `%s` here", var->name, via->name);
    const ZStmt *part = c->partial[bit];
    if (bit_has(f->maybe, bit) && part) {
        if (part->kind == S_WHILE)
            zd_note(c->d, first_line(part->span),
                    "`%s` is defined on %s inside this `while`, whose body may not run", var->name,
                    life_name(c, life));
        else
            zd_note(c->d, first_line(part->span),
                    "`%s` is defined on %s on only some paths through this `if`", var->name,
                    life_name(c, life));
        return;
    }
    for (int l = 0; l < c->nl; l++) {
        int b = l * c->nv + var->index;
        if (l != life && c->has_site[b]) {
            zd_note(c->d, c->site[b], "`%s` is defined on %s here", var->name, life_name(c, l));
            return;
        }
    }
}

static void use(Ck *c, Flow *f, int life, const ZExpr *e, const ZExpr *via, bool check)
{
    const ZDecl *var = e->decl;
    if (!var_ok(c, life, var)) return;
    int bit = bit_of(c, life, var);
    ZSpan at = via ? via->span : e->span;
    record(c, bit, false, at);
    if (check && !bit_has(f->must, bit)) undefined(c, f, life, var, at, via, e->span);
}

/* Whether a named guard is looked through for the first time in this
 * expression (each is expanded once per expression). */
static bool first_visit(Ck *c, const ZDecl *g)
{
    if (g->index < 0 || g->index >= c->n_guard) return false;
    if (c->guard_gen[g->index] == c->gen) return false;
    c->guard_gen[g->index] = c->gen;
    return true;
}

/* The variables an expression reads on `life`.  Named guards are looked
 * through (reported at the guard's use, `via`); terms under @B(...) and
 * @B.x are read from views, not from `life`'s store. */
static void reads_in(Ck *c, Flow *f, int life, const ZExpr *e, const ZExpr *via, bool check)
{
    if (!e) return;
    switch (e->kind) {
    case E_NAME:
        if (e->name_kind == NAME_VAR)
            use(c, f, life, e, via, check);
        else if (e->name_kind == NAME_GUARD && e->decl && first_visit(c, e->decl))
            reads_in(c, f, life, e->decl->expr, via ? via : e, check);
        return;
    case E_AT:
    case E_AT_VAR:
    case E_SEEN:
        return;
    default:
        break;
    }
    reads_in(c, f, life, e->a, via, check);
    reads_in(c, f, life, e->b, via, check);
    reads_in(c, f, life, e->c, via, check);
    for (int i = 0; i < e->args.len; i++) reads_in(c, f, life, e->args.items[i], via, check);
}

static void reads(Ck *c, Flow *f, int life, const ZExpr *e, bool check)
{
    c->gen++;
    reads_in(c, f, life, e, NULL, check);
}

/* What a statement list may write (for parallel siblings). */
static void writes_of(Ck *c, const ZVec *body, uint64_t *w)
{
    for (int i = 0; i < body->len; i++) {
        const ZStmt *s = body->items[i];
        switch (s->kind) {
        case S_MSG:
            for (int k = 0; k < s->params.len; k++) {
                const ZExpr *p = s->params.items[k];
                if (p->kind == E_NAME && p->name_kind == NAME_VAR && var_ok(c, s->to.index, p->decl))
                    bit_add(w, bit_of(c, s->to.index, p->decl));
            }
            break;
        case S_ASSIGN:
            for (int k = 0; k < s->targets.len; k++) {
                const ZTarget *t = s->targets.items[k];
                if (var_ok(c, s->life.index, t->var)) bit_add(w, bit_of(c, s->life.index, t->var));
            }
            break;
        default:
            break;
        }
        writes_of(c, &s->body, w);
        writes_of(c, &s->els, w);
        for (int k = 0; k < s->branches.len; k++) {
            const ZBranch *b = s->branches.items[k];
            writes_of(c, &b->body, w);
        }
    }
}

/* ---- statements --------------------------------------------------------- */

static void stmts(Ck *c, Flow *f, ZVec *body);

static ZSpan params_span(const ZStmt *s)
{
    ZSpan at = s->to.span;
    if (s->params.len) at = zd_join(at, ((ZExpr *)s->params.items[s->params.len - 1])->span);
    return at;
}

/* Types of one message; its reads and writes are left to the caller. */
static void check_msg(Ck *c, ZStmt *s)
{
    ZType **st = zu_alloc(c->a, sizeof *st * (size_t)(s->args.len + 1));
    for (int i = 0; i < s->args.len; i++) {
        ZExpr *a = s->args.items[i];
        st[i] = tc(c, a, X_STMT);
        if (!is_err(st[i]) && !is_simple(a)) {
            zd_error(c->d, a->span, "message values must be variables or constants");
            st[i] = c->t_err;
        }
    }
    ZType **rt = zu_alloc(c->a, sizeof *rt * (size_t)(s->params.len + 1));
    for (int i = 0; i < s->params.len; i++) {
        ZExpr *p = s->params.items[i];
        rt[i] = tc(c, p, X_STMT);
        if (!is_err(rt[i]) && !is_simple(p)) {
            zd_error(c->d, p->span, "message bindings must be variables, literals or constants");
            rt[i] = c->t_err;
        } else if (!is_err(rt[i]) && s->life.index == s->to.index &&
                   (p->kind != E_NAME || p->name_kind != NAME_VAR)) {
            /* a self message is the assignment `p := e`: nothing to check a constant against */
            zd_error(c->d, p->span, "a self message must bind variables, not `%s`", expr_text(c, p));
            rt[i] = c->t_err;
        }
        if (p->kind != E_NAME || p->name_kind != NAME_VAR) continue;
        for (int j = 0; j < i; j++) {
            ZExpr *q = s->params.items[j];
            if (q->kind == E_NAME && q->name_kind == NAME_VAR && q->decl == p->decl) {
                zd_error(c->d, p->span, "`%s` is bound twice in this message", p->name);
                break;
            }
        }
    }
    if (s->args.len != s->params.len) {
        zd_error(c->d, params_span(s), "message sends %d value%s but %s binds %d", s->args.len,
                 pl(s->args.len), s->to.name, s->params.len);
        return;
    }
    for (int i = 0; i < s->args.len; i++) {
        ZExpr *p = s->params.items[i];
        if (!assignable(rt[i], st[i]) && !assignable(st[i], rt[i]))
            zd_error(c->d, p->span, "message sends `%s` but `%s` is `%s`", tstr(c, st[i]),
                     expr_text(c, p), tstr(c, rt[i]));
    }
}

static void msg_reads(Ck *c, Flow *f, ZStmt *s)
{
    for (int i = 0; i < s->args.len; i++) reads(c, f, s->life.index, s->args.items[i], true);
}

static void msg_writes(Ck *c, Flow *f, ZStmt *s)
{
    for (int i = 0; i < s->params.len; i++) {
        ZExpr *p = s->params.items[i];
        if (p->kind == E_NAME && p->name_kind == NAME_VAR) define(c, f, s->to.index, p->decl, p->span);
    }
}

static ZSpan targets_span(const ZStmt *s)
{
    ZSpan first = ((ZTarget *)s->targets.items[0])->span;
    return zd_join(first, ((ZTarget *)s->targets.items[s->targets.len - 1])->span);
}

static void check_action_stmt(Ck *c, ZStmt *s)
{
    ZExpr *call = s->expr;
    const ZDecl *act = call->decl;
    check_action_args(c, call, act, X_STMT, !is_pure_kind(act->action));
    call->type = result_type(c, act);
    int n = act->results.len, m = s->targets.len;
    if (m == 0) return;
    if (n == 0) {
        zd_error(c->d, targets_span(s), "`%s` returns nothing but %d %s assigned", act->name, m,
                 m == 1 ? "is" : "are");
        return;
    }
    if (m != n) {
        zd_error(c->d, targets_span(s), "`%s` returns %d value%s but %d %s assigned", act->name, n,
                 pl(n), m, m == 1 ? "is" : "are");
        return;
    }
    for (int i = 0; i < m; i++) {
        ZTarget *t = s->targets.items[i];
        ZParam *r = act->results.items[i];
        if (t->var && !assignable(t->var->type, r->type))
            zd_error(c->d, t->span, "cannot assign `%s` to `%s` of type `%s`", tstr(c, r->type),
                     t->name, tstr(c, t->var->type));
    }
}

static void check_assign(Ck *c, Flow *f, ZStmt *s)
{
    if (!s->expr) return;
    for (int i = 0; i < s->targets.len; i++) {
        ZTarget *t = s->targets.items[i];
        for (int j = 0; j < i; j++) {
            ZTarget *o = s->targets.items[j];
            if (t->var && o->var == t->var) {
                zd_error(c->d, t->span, "`%s` is assigned twice in this statement", t->name);
                break;
            }
        }
    }
    if (s->is_action && s->expr->decl && s->expr->decl->kind == D_ACTION) {
        check_action_stmt(c, s);
    } else {
        ZType *t = tc(c, s->expr, X_STMT);
        int m = s->targets.len;
        if (m == 0) {
            if (!is_err(t))
                zd_error(c->d, s->expr->span, "the value of this expression is not used");
        } else if (m > 1) {
            if (!is_err(t))
                zd_error(c->d, targets_span(s), "an expression gives one value but %d are assigned", m);
        } else {
            ZTarget *tg = s->targets.items[0];
            if (tg->var && !assignable(tg->var->type, t))
                zd_error(c->d, s->expr->span, "cannot assign `%s` to `%s` of type `%s`", tstr(c, t),
                         tg->name, tstr(c, tg->var->type));
        }
    }
    reads(c, f, s->life.index, s->expr, true);
    for (int i = 0; i < s->targets.len; i++) {
        ZTarget *t = s->targets.items[i];
        define(c, f, s->life.index, t->var, t->span);
    }
}

static void check_guard_expr(Ck *c, Flow *f, ZStmt *s)
{
    ZType *t = tc(c, s->expr, X_GUARD);
    if (!is_err(t) && t->kind != TY_BOOL)
        zd_error(c->d, s->expr->span, "condition must be `bool`, not `%s`", tstr(c, t));
    else if (!is_err(t))
        check_formula_shape(c, s->expr, NULL);
    reads(c, f, s->life.index, s->expr, !zk_is_cpl(s->expr));
}

/* Marks what only some of the joined paths define. */
static void mark_partial(Ck *c, const uint64_t *a, const uint64_t *b, const ZStmt *s)
{
    for (int w = 0; w < c->nwords; w++) {
        uint64_t x = a[w] ^ b[w];
        while (x) {
            int k = __builtin_ctzll(x);
            x &= x - 1;
            c->partial[w * 64 + k] = s;
        }
    }
}

static void check_if(Ck *c, Flow *f, ZStmt *s)
{
    check_guard_expr(c, f, s);
    Flow t = flow_copy(c, f), e = flow_copy(c, f);
    stmts(c, &t, &s->body);
    stmts(c, &e, &s->els);
    mark_partial(c, t.must, e.must, s);
    for (int w = 0; w < c->nwords; w++) {
        f->must[w] = t.must[w] & e.must[w];
        f->maybe[w] = t.maybe[w] | e.maybe[w];
    }
}

static void check_while(Ck *c, Flow *f, ZStmt *s)
{
    check_guard_expr(c, f, s);
    Flow body = flow_copy(c, f), exit = flow_copy(c, f);
    stmts(c, &body, &s->body);
    stmts(c, &exit, &s->els);
    /* what the body defines is not defined after the loop */
    uint64_t *lost = bits_new(c);
    for (int w = 0; w < c->nwords; w++) lost[w] = body.must[w] & ~exit.must[w];
    uint64_t *zero = bits_new(c);
    mark_partial(c, lost, zero, s);
    for (int w = 0; w < c->nwords; w++) {
        f->must[w] = exit.must[w];
        f->maybe[w] = body.maybe[w] | exit.maybe[w];
    }
}

/* The branches of one region must not share a written variable. */
static void par_conflicts(Ck *c, Access *acc, int n)
{
    uint64_t *done = bits_new(c);
    for (int j = 1; j < n; j++) {
        for (int k = 0; k < acc[j].recs.len; k++) {
            Rec *r = acc[j].recs.items[k];
            if (bit_has(done, r->bit)) continue;
            for (int i = 0; i < j; i++) {
                Rec *o = NULL;
                for (int q = 0; q < acc[i].recs.len && !o; q++) {
                    Rec *x = acc[i].recs.items[q];
                    if (x->bit == r->bit && (r->write || x->write)) o = x;
                }
                if (!o) continue;
                bit_add(done, r->bit);
                const ZDecl *var = c->p->vars.items[r->bit % c->nv];
                const char *ln = life_name(c, r->bit / c->nv);
                if (r->write && o->write) {
                    zd_error(c->d, r->span, "`%s` on %s is written by two branches of this `parallel`",
                             var->name, ln);
                    zd_note(c->d, o->span, "the other write is here");
                } else {
                    Rec *w = r->write ? r : o, *rd = r->write ? o : r;
                    zd_error(c->d, w->span,
                             "`%s` on %s is written here but read by another branch of this `parallel`",
                             var->name, ln);
                    zd_note(c->d, rd->span, "read here");
                }
                break;
            }
        }
    }
}

static void check_par(Ck *c, Flow *f, ZStmt *s)
{
    int n = s->branches.len;
    if (n == 0) {
        zd_error(c->d, first_line(s->span), "`parallel` needs at least one branch");
        return;
    }
    Access *acc = zu_alloc(c->a, sizeof *acc * (size_t)n);
    uint64_t **w = zu_alloc(c->a, sizeof *w * (size_t)n);
    for (int i = 0; i < n; i++) {
        ZBranch *b = s->branches.items[i];
        w[i] = bits_new(c);
        writes_of(c, &b->body, w[i]);
        acc[i].r = bits_new(c);
        acc[i].w = bits_new(c);
    }
    Flow out = flow_copy(c, f);
    for (int i = 0; i < n; i++) {
        ZBranch *b = s->branches.items[i];
        uint64_t *sib = bits_new(c);
        for (int k = 0; k < n; k++)
            if (k != i)
                for (int q = 0; q < c->nwords; q++) sib[q] |= w[k][q];
        ParCtx pc = {&acc[i], sib, c->par};
        c->par = &pc;
        Flow g = flow_copy(c, f);
        stmts(c, &g, &b->body);
        c->par = pc.up;
        for (int q = 0; q < c->nwords; q++) {
            out.must[q] |= g.must[q];
            out.maybe[q] |= g.maybe[q];
        }
    }
    par_conflicts(c, acc, n);
    /* the enclosing branch sees every access of this region */
    for (int i = 0; i < n && c->par; i++)
        for (int k = 0; k < acc[i].recs.len; k++) {
            Rec *r = acc[i].recs.items[k];
            record(c, r->bit, r->write, r->span);
        }
    *f = out;
}

static void check_coregion(Ck *c, Flow *f, ZStmt *s)
{
    ZStmt *first = NULL;
    for (int i = 0; i < s->body.len; i++) {
        ZStmt *m = s->body.items[i];
        if (m->kind != S_MSG) {
            zd_error(c->d, first_line(m->span), "only messages are allowed in a `coregion`");
            continue;
        }
        check_msg(c, m);
        if (m->life.index >= 0 && m->life.index == m->to.index) {
            zd_error(c->d, m->span, "self message in a `coregion`");
            continue;
        }
        if (!first) {
            first = m;
            continue;
        }
        if (m->to.index != first->to.index && m->to.index >= 0 && first->to.index >= 0) {
            zd_error(c->d, m->to.span, "all messages of a `coregion` must have the same receiver");
            zd_note(c->d, first->to.span, "the first message goes to %s here", first->to.name);
            continue;
        }
        for (int j = 0; j < i; j++) {
            ZStmt *o = s->body.items[j];
            if (o->kind == S_MSG && o != m && o->life.index == m->life.index && o->life.index >= 0 &&
                o->life.index != o->to.index) {
                zd_error(c->d, m->life.span, "two messages of this `coregion` come from %s",
                         m->life.name);
                zd_note(c->d, o->life.span, "the other message from %s is here", o->life.name);
                break;
            }
        }
        for (int k = 0; k < m->params.len; k++) {
            ZExpr *p = m->params.items[k];
            if (p->kind != E_NAME || p->name_kind != NAME_VAR) continue;
            ZExpr *clash = NULL;
            for (int j = 0; j < i && !clash; j++) {
                ZStmt *o = s->body.items[j];
                if (o->kind != S_MSG || o->life.index == o->to.index) continue;
                for (int q = 0; q < o->params.len && !clash; q++) {
                    ZExpr *op = o->params.items[q];
                    if (op->kind == E_NAME && op->name_kind == NAME_VAR && op->decl == p->decl)
                        clash = op;
                }
            }
            if (clash) {
                zd_error(c->d, p->span, "`%s` is bound by two messages of this `coregion`", p->name);
                zd_note(c->d, clash->span, "also bound here");
            }
        }
    }
    if (!first && s->body.len == 0)
        zd_error(c->d, first_line(s->span), "`coregion` needs at least one message");
    for (int i = 0; i < s->body.len; i++) {
        ZStmt *m = s->body.items[i];
        if (m->kind == S_MSG) msg_reads(c, f, m);
    }
    for (int i = 0; i < s->body.len; i++) {
        ZStmt *m = s->body.items[i];
        if (m->kind == S_MSG) msg_writes(c, f, m);
    }
}

static void stmt(Ck *c, Flow *f, ZStmt *s)
{
    switch (s->kind) {
    case S_MSG:
        check_msg(c, s);
        msg_reads(c, f, s);
        msg_writes(c, f, s);
        break;
    case S_ASSIGN:
        check_assign(c, f, s);
        break;
    case S_BLOCK:
        for (int i = 0; i < s->body.len; i++) stmt(c, f, s->body.items[i]);
        break;
    case S_IF:
        check_if(c, f, s);
        break;
    case S_WHILE:
        check_while(c, f, s);
        break;
    case S_PAR:
        check_par(c, f, s);
        break;
    case S_COREGION:
        check_coregion(c, f, s);
        break;
    case S_SKIP:
    case S_RETURN: /* the workflow's final return is checked by check_return */
    default:
        break;
    }
}

static void stmts(Ck *c, Flow *f, ZVec *body)
{
    for (int i = 0; i < body->len; i++) stmt(c, f, body->items[i]);
}

/* ---- workflows ---------------------------------------------------------- */

static void check_return(Ck *c, Flow *f, const ZDecl *wf, ZStmt *ret)
{
    int n = wf->results.len, m = ret->items.len;
    bool counts = true;
    if (n == 0) {
        zd_error(c->d, first_line(ret->span), "workflow `%s` declares no result but returns one",
                 wf->name);
        counts = false;
    } else if (m != n) {
        zd_error(c->d, first_line(ret->span), "workflow `%s` returns %d value%s but declares %d",
                 wf->name, m, pl(m), n);
        counts = false;
    }
    for (int i = 0; i < m; i++) {
        ZReturnItem *it = ret->items.items[i];
        ZExpr *v = it->value;
        if (v->kind == E_NAME && v->decl && v->name_kind != NAME_VAR) {
            v->type = c->t_err;
            zd_error(c->d, v->span, "`return` needs a variable, not the %s `%s`",
                     v->name_kind == NAME_CONST    ? "constant"
                     : v->name_kind == NAME_MEMBER ? "enum member"
                                                   : "guard",
                     v->name);
            continue;
        }
        ZType *t = tc(c, v, X_STMT);
        if (counts) {
            ZParam *r = wf->results.items[i];
            if (!assignable(r->type, t))
                zd_error(c->d, v->span, "workflow `%s` returns `%s` but `%s` is `%s`", wf->name,
                         tstr(c, r->type), v->name, tstr(c, t));
        }
        if (v->kind == E_NAME && v->name_kind == NAME_VAR) use(c, f, it->at.index, v, NULL, true);
    }
}

static void check_inputs(Ck *c, const ZDecl *wf, Flow *f)
{
    for (int i = 0; i < wf->params.len; i++) {
        ZParam *in = wf->params.items[i];
        const ZDecl *var = in->var;
        if (!var) continue;
        if (var->type != in->type && !is_err(var->type) && !is_err(in->type) &&
            !same_type(var->type, in->type)) {
            zd_error(c->d, in->type->span, "input `%s` is `%s` but variable `%s` is `%s`", in->name,
                     tstr(c, in->type), var->name, tstr(c, var->type));
            zd_note(c->d, var->name_span, "`%s` is declared here", var->name);
        }
        define(c, f, in->owner_index, var, in->span);
    }
}

static void check_workflow(Ck *c, ZDecl *wf)
{
    c->wf = wf;
    size_t nbits = (size_t)c->nl * (size_t)c->nv;
    c->has_site = zu_alloc(c->a, sizeof *c->has_site * (nbits ? nbits : 1));
    c->site = zu_alloc(c->a, sizeof *c->site * (nbits ? nbits : 1));
    c->partial = zu_alloc(c->a, sizeof *c->partial * (nbits ? nbits : 1));
    c->reported = bits_new(c);
    c->par = NULL;
    Flow f = {bits_new(c), bits_new(c)};
    for (int v = 0; v < c->nv; v++) {
        const ZDecl *var = c->p->vars.items[v];
        if (!var->expr) continue;
        for (int l = 0; l < c->nl; l++) {
            bit_add(f.must, l * c->nv + v);
            bit_add(f.maybe, l * c->nv + v);
        }
    }
    check_inputs(c, wf, &f);
    stmts(c, &f, &wf->body);
    if (wf->ret) check_return(c, &f, wf, wf->ret);
    else if (wf->results.len)
        zd_error(c->d, wf->name_span, "workflow `%s` declares a result but does not end with `return`",
                 wf->name);
}

/* ---- driver ------------------------------------------------------------- */

bool zk_check(ZArena *a, ZProgram *p, ZDecl *wf, ZDiag *d)
{
    int errors = d->errors;
    Ck c = {0};
    c.a = a;
    c.p = p;
    c.d = d;
    c.t_err = mk_type(&c, TY_ERROR);
    c.t_bool = mk_type(&c, TY_BOOL);
    c.t_int = mk_type(&c, TY_INT);
    c.t_float = mk_type(&c, TY_FLOAT);
    c.t_str = mk_type(&c, TY_STR);
    c.t_json = mk_type(&c, TY_JSON);
    c.t_null = mk_type(&c, TY_NULL);
    c.t_void = mk_type(&c, TY_VOID);
    int n_const = 0, n_guard = 0;
    for (int i = 0; i < p->decls.len; i++) {
        ZDecl *x = p->decls.items[i];
        if (x->kind == D_CONST && x->index >= n_const) n_const = x->index + 1;
        if (x->kind == D_GUARD && x->index >= n_guard) n_guard = x->index + 1;
    }
    c.const_state = zu_alloc(a, (size_t)n_const + 1);
    c.const_ok = zu_alloc(a, sizeof *c.const_ok * ((size_t)n_const + 1));
    c.const_val = zu_alloc(a, sizeof *c.const_val * ((size_t)n_const + 1));
    c.guard_state = zu_alloc(a, (size_t)n_guard + 1);
    c.guard_gen = zu_alloc(a, sizeof *c.guard_gen * ((size_t)n_guard + 1));
    c.n_guard = n_guard;
    c.nl = p->lifelines.len;
    c.nv = p->vars.len;
    c.nwords = (int)(((size_t)c.nl * (size_t)c.nv + 63) / 64);

    for (int i = 0; i < p->decls.len; i++) {
        ZDecl *x = p->decls.items[i];
        if (!x->name) continue;
        switch (x->kind) {
        case D_CONST:
            if (x->expr) const_type(&c, x, x->name_span);
            break;
        case D_VAR:
            check_var(&c, x);
            break;
        case D_GUARD:
            if (x->expr) guard_type(&c, x);
            break;
        case D_ACTION:
            check_action(&c, x);
            break;
        default:
            break;
        }
    }
    if (wf) {
        check_workflow(&c, wf);
    } else {
        for (int i = 0; i < p->workflows.len; i++) check_workflow(&c, p->workflows.items[i]);
    }
    return d->errors == errors;
}
