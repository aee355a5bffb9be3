/* check_types.c — types of expressions and statements (language
 * reference §4.1, §5, §6.1).
 *
 * Every expression gets its `type`.  Where it is checked (XKind) decides
 * what it may contain: no variables or calls in constant expressions, no
 * workflow variables in pure bodies, CPL operators and named guards only
 * in guards.  Constants and named guards are typed on first use, so a
 * declaration may use one declared after it; a cycle among constants is
 * reported at the use that closes it.  A constant's expression and a
 * variable's default are folded (check_fold.c) once typed.
 *
 * Errors never cascade: an expression whose type cannot be known gets
 * TY_ERROR, which every check accepts silently.
 */
#include "check.h"

#include <stdlib.h>

/* ---- types -------------------------------------------------------------- */

bool ck_assignable(const ZType *to, const ZType *from)
{
    if (is_err(to) || is_err(from)) return true;
    if (from->kind == TY_NULL) return to->kind == TY_JSON || to->kind == TY_NULL;
    return za_type_eq(to, from);
}

/* ---- zk_is_cpl ---------------------------------------------------------- */

/* Whether a named guard's formula is CPL is found once and kept in the
 * declaration, so a guard used n times, or a chain of n guards each using
 * the previous one, costs O(n) in all (looking through every use again
 * took 4.5 s for a chain of 4,000 guards).  A guard being looked at (only
 * in a cycle, which the resolver has reported) counts as plain. */
static bool is_cpl(const ZExpr *e)
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
    case E_SEEN: return true;
    case E_NAME: {
        if (e->name_kind != NAME_GUARD || !e->decl) return false;
        ZDecl *g = e->decl;
        if (g->cpl == 0) {
            g->cpl = 3;
            g->cpl = is_cpl(g->expr) ? 2 : 1;
        }
        return g->cpl == 2;
    }
    default: break;
    }
    if (is_cpl(e->a) || is_cpl(e->b) || is_cpl(e->c)) return true;
    for (int i = 0; i < e->args.len; i++)
        if (is_cpl(e->args.items[i])) return true;
    return false;
}

bool zk_is_cpl(const ZExpr *e) { return is_cpl(e); }

/* ---- expressions -------------------------------------------------------- */

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
            zd_error(c->d, e->span,
                     "%s action `%s` cannot read variable `%s`: pass it as a parameter",
                     za_action_kind_name(ACT_PURE), c->pure ? c->pure->name : "?", e->name);
            return c->t_err;
        }
        return d->type ? d->type : c->t_err;
    case NAME_CONST: return ck_const_decl(c, d, e->span);
    case NAME_MEMBER: return d->type ? d->type : c->t_err;
    case NAME_GUARD:
        if (x != X_GUARD) {
            zd_error(c->d, e->span, "guard `%s` can only be used in a guard formula", e->name);
            return c->t_err;
        }
        ck_guard_decl(c, d);
        return c->t_bool;
    case NAME_PARAM:
        if (e->member >= 0 && e->member < d->params.len) {
            ZParam *pp = d->params.items[e->member];
            return pp->type ? pp->type : c->t_err;
        }
        return c->t_err;
    default: return c->t_err;
    }
}

static bool numeric(const ZType *t) { return t->kind == TY_INT || t->kind == TY_FLOAT; }

static ZType *check_unary(Ck *c, ZExpr *e, XKind x)
{
    ZType *t = ck_type(c, e->a, x);
    if (e->op == OP_NOT) {
        if (!is_err(t) && t->kind != TY_BOOL)
            zd_error(c->d, e->a->span, "operator `!` needs a `bool` operand, not `%s`",
                     za_type_name(c->a, t));
        return c->t_bool;
    }
    if (is_err(t)) return c->t_err;
    if (!numeric(t)) {
        zd_error(c->d, e->a->span, "operator `-` needs an `int` or `float` operand, not `%s`",
                 za_type_name(c->a, t));
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
    ZType *l = ck_type(c, e->a, x);
    ZType *r = ck_type(c, e->b, x);
    const char *op = za_op_text(e->op);
    switch (e->op) {
    case OP_AND:
    case OP_OR:
        if (!is_err(l) && l->kind != TY_BOOL)
            zd_error(c->d, e->a->span, "operator `%s` needs `bool` operands, not `%s`", op,
                     za_type_name(c->a, l));
        if (!is_err(r) && r->kind != TY_BOOL)
            zd_error(c->d, e->b->span, "operator `%s` needs `bool` operands, not `%s`", op,
                     za_type_name(c->a, r));
        return c->t_bool;
    case OP_EQ:
    case OP_NE:
        if (is_err(l) || is_err(r)) return c->t_bool;
        if (numeric(l) && numeric(r) && l->kind != r->kind) {
            mix_error(c, e);
        } else if (!ck_assignable(l, r) && !ck_assignable(r, l)) {
            zd_error(c->d, e->span, "cannot compare `%s` with `%s`", za_type_name(c->a, l),
                     za_type_name(c->a, r));
        } else if (l->kind == TY_TUPLE || l->kind == TY_VOID) {
            zd_error(c->d, e->span, "cannot compare values of type `%s`", za_type_name(c->a, l));
        }
        return c->t_bool;
    case OP_LT:
    case OP_LE:
    case OP_GT:
    case OP_GE:
        if (is_err(l) || is_err(r)) return c->t_bool;
        if (numeric(l) && numeric(r) && l->kind != r->kind) {
            mix_error(c, e);
        } else if (!za_type_eq(l, r)) {
            zd_error(c->d, e->span, "cannot compare `%s` with `%s`", za_type_name(c->a, l),
                     za_type_name(c->a, r));
        } else if (!numeric(l) && l->kind != TY_STR) {
            zd_error(c->d, e->span,
                     "operator `%s` needs `int`, `float` or `str` operands, not `%s`", op,
                     za_type_name(c->a, l));
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
                         za_type_name(c->a, l), za_type_name(c->a, r));
            else
                zd_error(c->d, e->span, "operator `%s` needs `int` or `float` operands, not `%s`",
                         op, za_type_name(c->a, bad));
        }
        return c->t_err;
    }
}

static ZType *check_cond(Ck *c, ZExpr *e, XKind x)
{
    ZType *ct = ck_type(c, e->c, x);
    ZType *a = ck_type(c, e->a, x);
    ZType *b = ck_type(c, e->b, x);
    if (!is_err(ct) && ct->kind != TY_BOOL)
        zd_error(c->d, e->c->span, "condition of `?:` must be `bool`, not `%s`",
                 za_type_name(c->a, ct));
    if (is_err(a) || is_err(b)) return c->t_err;
    if (ck_assignable(a, b)) return a->kind == TY_NULL ? b : a;
    if (ck_assignable(b, a)) return b;
    zd_error(c->d, e->span, "the branches of `?:` have different types `%s` and `%s`",
             za_type_name(c->a, a), za_type_name(c->a, b));
    return c->t_err;
}

/* Argument count and types of a call of an action.  simple: arguments
 * must be variables or constants (action statements of non-pure actions). */
void ck_action_args(Ck *c, ZExpr *e, const ZDecl *act, XKind x, bool simple)
{
    int n = act->params.len, m = e->args.len;
    if (n != m)
        zd_error(c->d, e->span, "`%s` takes %d argument%s but %d %s given", act->name, n, pl(n), m,
                 were(m));
    for (int i = 0; i < m; i++) {
        ZExpr *arg = e->args.items[i];
        ZType *t = ck_type(c, arg, x);
        if (simple && !is_err(t) && !is_simple(arg)) {
            zd_error(c->d, arg->span, "arguments of %s action `%s` must be variables or constants",
                     za_action_kind_name(act->action), act->name);
            continue;
        }
        if (i >= n) continue;
        ZParam *pp = act->params.items[i];
        if (!ck_assignable(pp->type, t))
            zd_error(c->d, arg->span, "argument `%s` of `%s` must be `%s`, not `%s`", pp->name,
                     act->name, za_type_name(c->a, pp->type), za_type_name(c->a, t));
    }
}

ZType *ck_result_type(Ck *c, const ZDecl *act)
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
        ZType *t = ck_type(c, e->args.items[i], x);
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
    case BI_JSON_GET:
        res = c->t_json;
        want[0] = TY_JSON;
        break;
    case BI_JSON_STR:
        res = c->t_str;
        want[0] = TY_JSON;
        break;
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
                zd_error(c->d, arg->span, "argument of `str` must be a value, not `%s`",
                         za_type_name(c->a, t));
        } else if (e->builtin == BI_INT || e->builtin == BI_FLOAT) {
            if (!numeric(t) && t->kind != TY_STR)
                zd_error(c->d, arg->span,
                         "argument of `%s` must be `int`, `float` or `str`, not `%s`", name,
                         za_type_name(c->a, t));
        } else if (t->kind != want[i]) {
            if (n == 1)
                zd_error(c->d, arg->span, "argument of `%s` must be `%s`, not `%s`", name,
                         want[i] == TY_JSON ? "json" : "str", za_type_name(c->a, t));
            else
                zd_error(c->d, arg->span, "argument %d of `%s` must be `%s`, not `%s`", i + 1, name,
                         want[i] == TY_JSON ? "json" : "str", za_type_name(c->a, t));
        }
    }
    return res;
}

static ZType *check_call(Ck *c, ZExpr *e, XKind x)
{
    if (x == X_CONST && (e->builtin != BI_NONE || e->decl)) {
        zd_error(c->d, e->span, "cannot call `%s` in a constant expression", e->name);
        for (int i = 0; i < e->args.len; i++) ck_type(c, e->args.items[i], X_STMT);
        return c->t_err;
    }
    if (e->builtin != BI_NONE) return check_builtin(c, e, x);
    const ZDecl *act = e->decl;
    if (!act || act->kind != D_ACTION) {
        for (int i = 0; i < e->args.len; i++) ck_type(c, e->args.items[i], x);
        return c->t_err;
    }
    if (act->action !=
        ACT_PURE) { /* extern pure runs through the runtime: a statement of its own */
        zd_error(c->d, e->span,
                 "%s action `%s` can only be called as the whole right-hand side of an assignment",
                 za_action_kind_name(act->action), act->name);
        for (int i = 0; i < e->args.len; i++) ck_type(c, e->args.items[i], x);
        return c->t_err;
    }
    ck_action_args(c, e, act, x, false);
    if (act->results.len != 1) {
        if (act->results.len > 1)
            zd_error(
                c->d, e->span,
                "`%s` returns %d values: call it as the whole right-hand side of an assignment",
                act->name, act->results.len);
        return c->t_err;
    }
    return ck_result_type(c, act);
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
            zd_error(c->d, e->span, "causal operator `@%s(...)` is only allowed in guards",
                     e->lifeline);
        else if (e->kind == E_AT_VAR)
            zd_error(c->d, e->span, "causal term `@%s.%s` is only allowed in guards", e->lifeline,
                     e->name);
        else if (e->kind == E_SEEN)
            zd_error(c->d, e->span, "causal operator `seen` is only allowed in guards");
        else
            zd_error(c->d, e->span, "temporal operator `%s` is only allowed in guards",
                     cpl_op_name(e));
        /* type the operands without repeating the error */
        if (e->a) ck_type(c, e->a, X_GUARD);
        if (e->b) ck_type(c, e->b, X_GUARD);
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
        ZType *t = ck_type(c, ops[i], x);
        if (is_err(t) || t->kind == TY_BOOL) continue;
        if (e->kind == E_AT)
            zd_error(c->d, ops[i]->span, "operand of `@%s(...)` must be `bool`, not `%s`",
                     e->lifeline, za_type_name(c->a, t));
        else
            zd_error(c->d, ops[i]->span, "operand of `%s` must be `bool`, not `%s`", cpl_op_name(e),
                     za_type_name(c->a, t));
    }
    return c->t_bool;
}

/* Types `e` (and all its subexpressions) in context `x`. */
ZType *ck_type(Ck *c, ZExpr *e, XKind x)
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
                 "a tuple is only allowed as a `%s` value or as the body of a %s action",
                 za_prop_name(PROP_FALLBACK), za_action_kind_name(ACT_PURE));
        for (int i = 0; i < e->args.len; i++) ck_type(c, e->args.items[i], x);
        return set(e, c->t_err);
    case E_AT:
    case E_AT_VAR:
    case E_PREV:
    case E_SINCE:
    case E_ONCE:
    case E_HIST:
    case E_PAST:
    case E_SEEN: return set(e, check_cpl(c, e, x));
    default: return set(e, c->t_err);
    }
}

/* ---- declarations ------------------------------------------------------- */

ZType *ck_const_decl(Ck *c, ZDecl *d, ZSpan use)
{
    int i = d->index;
    if (c->const_state[i] == 2) return d->type ? d->type : c->t_err;
    if (c->const_state[i] == 1) {
        zd_error(c->d, use, "constant `%s` is defined in terms of itself", d->name);
        return c->t_err;
    }
    c->const_state[i] = 1;
    ZType *t = ck_type(c, d->expr, X_CONST);
    if (!is_err(t) && t->kind != TY_INT && t->kind != TY_FLOAT && t->kind != TY_BOOL &&
        t->kind != TY_STR) {
        zd_error(c->d, d->expr->span,
                 "constant `%s` must be `int`, `float`, `bool` or `str`, not `%s`", d->name,
                 za_type_name(c->a, t));
        t = c->t_err;
    }
    d->type = t;
    c->const_state[i] = 2;
    if (!is_err(t)) c->const_ok[i] = ck_fold_into(c, &d->expr, &c->const_val[i]);
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
    case E_AT:
    case E_PREV:
    case E_SINCE:
    case E_ONCE:
    case E_HIST:
    case E_PAST:
    case E_SEEN: return true;
    case E_NAME: return e->name_kind == NAME_GUARD && zk_is_cpl(e);
    default: return false;
    }
}

/* `==` and `!=` between bool operands are connectives of the formula;
 * between other values they are comparisons, atoms (compiler/guards.c),
 * inside which a formula cannot occur: `(prev ok ? x : 2) == 1` is an
 * error. */
static bool compares_formulas(const ZExpr *e)
{
    if (e->op != OP_EQ && e->op != OP_NE) return false;
    const ZType *t = e->a ? e->a->type : NULL;
    return !t || t->kind == TY_ERROR || t->kind == TY_BOOL;
}

void ck_formula_shape(Ck *c, const ZExpr *e, const ZExpr *ctx)
{
    if (!e) return;
    if (is_formula_op(e)) {
        if (ctx) {
            const char *what = e->kind == E_NAME   ? e->name
                               : e->kind == E_AT   ? "@(...)"
                               : e->kind == E_SEEN ? "seen"
                                                   : cpl_op_name(e);
            if (ctx->kind == E_CALL)
                zd_error(c->d, e->span,
                         "`%s` cannot be an argument of `%s`: combine temporal and causal "
                         "formulas only with `!`, `&&`, `||`, `==`, `!=` and `?:`",
                         what, ctx->name);
            else
                zd_error(c->d, e->span,
                         "`%s` cannot be an operand of `%s`: combine temporal and causal "
                         "formulas only with `!`, `&&`, `||`, `==`, `!=` and `?:`",
                         what, za_op_text(ctx->op));
            return;
        }
        ck_formula_shape(c, e->a, NULL);
        ck_formula_shape(c, e->b, NULL);
        return;
    }
    const ZExpr *inner = ctx;
    switch (e->kind) {
    case E_UNARY:
        if (e->op != OP_NOT) inner = e;
        break;
    case E_BINARY:
        if (e->op != OP_AND && e->op != OP_OR && !compares_formulas(e)) inner = e;
        break;
    case E_CALL: inner = e; break;
    default: break;
    }
    ck_formula_shape(c, e->a, inner);
    ck_formula_shape(c, e->b, inner);
    ck_formula_shape(c, e->c, inner);
    for (int i = 0; i < e->args.len; i++) ck_formula_shape(c, e->args.items[i], inner);
}

ZType *ck_guard_decl(Ck *c, ZDecl *d)
{
    int i = d->index;
    if (c->guard_state[i]) return c->t_bool;
    c->guard_state[i] = 1;
    ZType *t = ck_type(c, d->expr, X_GUARD);
    if (!is_err(t) && t->kind != TY_BOOL)
        zd_error(c->d, d->expr->span, "guard `%s` must be a `bool` formula, not `%s`", d->name,
                 za_type_name(c->a, t));
    else if (!is_err(t))
        ck_formula_shape(c, d->expr, NULL);
    /* found here, on the compiler's stack (pipeline.c), so that later
     * passes and the backend read it without looking through guards */
    if (d->cpl == 0) {
        d->cpl = 3;
        d->cpl = is_cpl(d->expr) ? 2 : 1;
    }
    c->guard_state[i] = 2;
    return c->t_bool;
}

void ck_var_decl(Ck *c, ZDecl *d)
{
    if (!d->expr) return;
    ZType *t = ck_type(c, d->expr, X_CONST);
    if (!ck_assignable(d->type, t)) {
        zd_error(c->d, d->expr->span, "cannot assign `%s` to `%s` of type `%s`",
                 za_type_name(c->a, t), d->name, za_type_name(c->a, d->type));
        return;
    }
    ZValue v;
    if (!is_err(t)) ck_fold_into(c, &d->expr, &v);
}

/* ---- statements --------------------------------------------------------- */

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

static ZSpan params_span(const ZStmt *s)
{
    ZSpan at = s->to.span;
    if (s->params.len) at = zd_join(at, ((ZExpr *)s->params.items[s->params.len - 1])->span);
    return at;
}

/* Types of one message; its reads and writes are left to the caller. */
void ck_msg(Ck *c, ZStmt *s)
{
    ZType **st = zu_alloc(c->a, sizeof *st * (size_t)(s->args.len + 1));
    for (int i = 0; i < s->args.len; i++) {
        ZExpr *a = s->args.items[i];
        st[i] = ck_type(c, a, X_STMT);
        if (!is_err(st[i]) && !is_simple(a)) {
            zd_error(c->d, a->span, "message values must be variables or constants");
            st[i] = c->t_err;
        }
    }
    ZType **rt = zu_alloc(c->a, sizeof *rt * (size_t)(s->params.len + 1));
    for (int i = 0; i < s->params.len; i++) {
        ZExpr *p = s->params.items[i];
        rt[i] = ck_type(c, p, X_STMT);
        if (!is_err(rt[i]) && !is_simple(p)) {
            zd_error(c->d, p->span, "message bindings must be variables, literals or constants");
            rt[i] = c->t_err;
        } else if (!is_err(rt[i]) && s->life.index == s->to.index &&
                   (p->kind != E_NAME || p->name_kind != NAME_VAR)) {
            /* a self message is the assignment `p := e`: nothing to check a constant against */
            zd_error(c->d, p->span, "a self message must bind variables, not `%s`",
                     expr_text(c, p));
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
        if (!ck_assignable(rt[i], st[i]) && !ck_assignable(st[i], rt[i]))
            zd_error(c->d, p->span, "message sends `%s` but `%s` is `%s`",
                     za_type_name(c->a, st[i]), expr_text(c, p), za_type_name(c->a, rt[i]));
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
    ck_action_args(c, call, act, X_STMT, !is_pure_kind(act->action));
    call->type = ck_result_type(c, act);
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
        if (t->var && !ck_assignable(t->var->type, r->type))
            zd_error(c->d, t->span, "cannot assign `%s` to `%s` of type `%s`",
                     za_type_name(c->a, r->type), t->name, za_type_name(c->a, t->var->type));
    }
}

void ck_assign(Ck *c, ZStmt *s)
{
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
        ZType *t = ck_type(c, s->expr, X_STMT);
        int m = s->targets.len;
        if (m == 0) {
            if (!is_err(t))
                zd_error(c->d, s->expr->span, "the value of this expression is not used");
        } else if (m > 1) {
            if (!is_err(t))
                zd_error(c->d, targets_span(s), "an expression gives one value but %d are assigned",
                         m);
        } else {
            ZTarget *tg = s->targets.items[0];
            if (tg->var && !ck_assignable(tg->var->type, t))
                zd_error(c->d, s->expr->span, "cannot assign `%s` to `%s` of type `%s`",
                         za_type_name(c->a, t), tg->name, za_type_name(c->a, tg->var->type));
        }
    }
}

void ck_condition(Ck *c, ZStmt *s)
{
    ZType *t = ck_type(c, s->expr, X_GUARD);
    if (!is_err(t) && t->kind != TY_BOOL)
        zd_error(c->d, s->expr->span, "condition must be `bool`, not `%s`", za_type_name(c->a, t));
    else if (!is_err(t))
        ck_formula_shape(c, s->expr, NULL);
}
