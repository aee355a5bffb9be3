/* check.c — types and definedness (language reference §3–§6).
 *
 * zk_check runs after zr_resolve.  It gives every expression its `type`,
 * checks the declarations (constants, defaults, guards, actions and their
 * properties) and then walks each workflow once, in source order, checking
 * each statement's types and, on the same walk, the definedness of every
 * variable per lifeline (§4 rule 4) and the parallel and coregion rules.
 * This file holds that walk and the driver; the concerns it calls on are
 * in check_types.c, check_fold.c, check_actions.c, check_defined.c and
 * check_parallel.c, with the shared context in check.h.
 *
 * Errors never cascade: an expression whose type cannot be known gets
 * TY_ERROR, which every check accepts silently, and an undefined variable
 * is reported once per (lifeline, variable) and then treated as defined.
 *
 * Decisions the reference leaves open:
 *   - constants fold at compile time (literals, constants, enum members,
 *     unary and binary operators, `?:`); afterwards a D_CONST's `expr` and a
 *     variable default are the folded literal (an enum member stays an
 *     E_NAME), so later passes never evaluate constant expressions
 *     (check_fold.c, eval.c);
 *   - llm actions need `parse` and at least one of `system`/`user`; human
 *     actions need `kind` and `prompt`; placeholders are `{name}`
 *     (check_actions.c);
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
#include "check.h"

/* ---- statements --------------------------------------------------------- */

static void stmts(Ck *c, ZVec *body);

static void msg_reads(Ck *c, ZStmt *s)
{
    for (int i = 0; i < s->args.len; i++) ck_reads(c, s->life.index, s->args.items[i], true);
}

static void msg_writes(Ck *c, ZStmt *s)
{
    for (int i = 0; i < s->params.len; i++) {
        ZExpr *p = s->params.items[i];
        if (p->kind == E_NAME && p->name_kind == NAME_VAR)
            ck_define(c, s->to.index, p->decl, p->span);
    }
}

static void check_assign(Ck *c, ZStmt *s)
{
    if (!s->expr) return;
    ck_assign(c, s);
    ck_reads(c, s->life.index, s->expr, true);
    for (int i = 0; i < s->targets.len; i++) {
        ZTarget *t = s->targets.items[i];
        ck_define(c, s->life.index, t->var, t->span);
    }
}

static void check_guard_expr(Ck *c, ZStmt *s)
{
    ck_condition(c, s);
    ck_reads(c, s->life.index, s->expr, !zk_is_cpl(s->expr));
}

/* The two paths of an `if` each walked from here and undone: defined on
 * every path after it is what both define, on some path what either does;
 * what only one defines is partial (for the notes of later errors). */
static void check_if(Ck *c, ZStmt *s)
{
    check_guard_expr(c, s);
    size_t m = ck_mark(c);
    stmts(c, &s->body);
    Delta t = ck_undo(c, m);
    stmts(c, &s->els);
    Delta e = ck_undo(c, m);
    uint64_t *both = c->scratch; /* t's must bits, cleared again below */
    for (size_t i = 0; i < t.n; i++)
        if (!(t.e[i] & CK_MAYBE)) bit_add(both, (int)(t.e[i] >> 1));
    for (size_t i = 0; i < e.n; i++) {
        int bit = (int)(e.e[i] >> 1);
        if (e.e[i] & CK_MAYBE) continue;
        if (bit_has(both, bit)) {
            ck_redo(c, e.e[i]);
            both[bit >> 6] &= ~((uint64_t)1 << (bit & 63));
        } else {
            ck_set_partial(c, bit, s);
        }
    }
    for (size_t i = 0; i < t.n; i++) {
        int bit = (int)(t.e[i] >> 1);
        if (t.e[i] & CK_MAYBE) {
            ck_redo(c, t.e[i]);
        } else if (bit_has(both, bit)) {
            ck_set_partial(c, bit, s);
            both[bit >> 6] &= ~((uint64_t)1 << (bit & 63));
        }
    }
    for (size_t i = 0; i < e.n; i++)
        if (e.e[i] & CK_MAYBE) ck_redo(c, e.e[i]);
    free(t.e);
    free(e.e);
}

/* The body walked from here and undone, then the exit protocol from here
 * and kept: after the loop only what was defined before it and what the
 * exit defines is defined; what the body defines is defined on some path,
 * partially when the exit does not define it too. */
static void check_while(Ck *c, ZStmt *s)
{
    check_guard_expr(c, s);
    size_t m = ck_mark(c);
    stmts(c, &s->body);
    Delta body = ck_undo(c, m);
    stmts(c, &s->els);
    for (size_t i = 0; i < body.n; i++) {
        int bit = (int)(body.e[i] >> 1);
        if (body.e[i] & CK_MAYBE)
            ck_redo(c, body.e[i]);
        else if (!ck_must(c, bit))
            ck_set_partial(c, bit, s);
    }
    free(body.e);
}

/* Each branch walked from here and undone; afterwards everything any
 * branch defines is defined. */
static void check_par(Ck *c, ZStmt *s)
{
    ParRegion r;
    if (!ck_par_begin(c, &r, s)) return;
    size_t m = ck_mark(c);
    Delta *d = zu_xcalloc((size_t)r.n, sizeof *d);
    for (int i = 0; i < r.n; i++) {
        ZBranch *b = s->branches.items[i];
        ck_par_enter(c, &r, i);
        stmts(c, &b->body);
        ck_par_leave(c, &r);
        d[i] = ck_undo(c, m);
    }
    ck_par_end(c, &r);
    for (int i = 0; i < r.n; i++) {
        for (size_t k = 0; k < d[i].n; k++) ck_redo(c, d[i].e[k]);
        free(d[i].e);
    }
    free(d);
}

static void check_coregion(Ck *c, ZStmt *s)
{
    ck_coregion(c, s);
    for (int i = 0; i < s->body.len; i++) {
        ZStmt *m = s->body.items[i];
        if (m->kind == S_MSG) msg_reads(c, m);
    }
    for (int i = 0; i < s->body.len; i++) {
        ZStmt *m = s->body.items[i];
        if (m->kind == S_MSG) msg_writes(c, m);
    }
}

/* One store operation: its rules, then its items in order on its
 * lifeline (a read defines its variable). */
static void check_atomic(Ck *c, ZStmt *s)
{
    ck_atomic_rules(c, s);
    for (int i = 0; i < s->body.len; i++) {
        ZStmt *it = s->body.items[i];
        switch (it->kind) {
        case S_READ: {
            ck_read_item(c, it);
            ZTarget *t = it->targets.items[0];
            ck_define(c, s->life.index, t->var, t->span);
            break;
        }
        case S_WRITE:
            ck_write_item(c, it);
            if (it->expr && !it->registry) ck_reads(c, s->life.index, it->expr, true);
            break;
        case S_ASSIGN: check_assign(c, it); break;
        default: break; /* reported by ck_atomic_rules */
        }
    }
}

static void stmt(Ck *c, ZStmt *s)
{
    switch (s->kind) {
    case S_MSG:
        ck_msg(c, s);
        msg_reads(c, s);
        msg_writes(c, s);
        break;
    case S_ASSIGN: check_assign(c, s); break;
    case S_BLOCK:
        for (int i = 0; i < s->body.len; i++) stmt(c, s->body.items[i]);
        break;
    case S_IF: check_if(c, s); break;
    case S_WHILE: check_while(c, s); break;
    case S_PAR: check_par(c, s); break;
    case S_COREGION: check_coregion(c, s); break;
    case S_ATOMIC: check_atomic(c, s); break;
    case S_SKIP:
    case S_RETURN: /* the workflow's final return is checked by check_return */
    default: break;
    }
}

static void stmts(Ck *c, ZVec *body)
{
    for (int i = 0; i < body->len; i++) stmt(c, body->items[i]);
}

/* ---- workflows ---------------------------------------------------------- */

static void check_return(Ck *c, const ZDecl *wf, ZStmt *ret)
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
                     za_name_kind_name(v->name_kind), v->name);
            continue;
        }
        ZType *t = ck_type(c, v, X_STMT);
        if (counts) {
            ZParam *r = wf->results.items[i];
            if (!ck_assignable(r->type, t))
                zd_error(c->d, v->span, "workflow `%s` returns `%s` but `%s` is `%s`", wf->name,
                         za_type_name(c->a, r->type), v->name, za_type_name(c->a, t));
        }
        if (v->kind == E_NAME && v->name_kind == NAME_VAR) ck_use(c, it->at.index, v, NULL, true);
    }
}

static void check_inputs(Ck *c, const ZDecl *wf)
{
    for (int i = 0; i < wf->params.len; i++) {
        ZParam *in = wf->params.items[i];
        const ZDecl *var = in->var;
        if (!var) continue;
        if (var->type != in->type && !is_err(var->type) && !is_err(in->type) &&
            !za_type_eq(var->type, in->type)) {
            zd_error(c->d, in->type->span, "input `%s` is `%s` but variable `%s` is `%s`", in->name,
                     za_type_name(c->a, in->type), var->name, za_type_name(c->a, var->type));
            zd_note(c->d, var->name_span, "`%s` is declared here", var->name);
        }
        ck_define(c, in->owner_index, var, in->span);
    }
}

static void check_workflow(Ck *c, ZDecl *wf)
{
    c->wf = wf;
    ck_walk_begin(c);
    check_inputs(c, wf);
    stmts(c, &wf->body);
    if (wf->ret)
        check_return(c, wf, wf->ret);
    else if (wf->results.len)
        zd_error(c->d, wf->name_span,
                 "workflow `%s` declares a result but does not end with `return`", wf->name);
    ck_walk_end(c);
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
            if (x->expr) ck_const_decl(&c, x, x->name_span);
            break;
        case D_VAR: ck_var_decl(&c, x); break;
        case D_GUARD:
            if (x->expr) ck_guard_decl(&c, x);
            break;
        case D_ACTION: ck_action_decl(&c, x); break;
        case D_STORE: ck_store_decl(&c, x); break;
        default: break;
        }
    }
    if (wf) {
        check_workflow(&c, wf);
    } else {
        for (int i = 0; i < p->workflows.len; i++) check_workflow(&c, p->workflows.items[i]);
    }
    return d->errors == errors;
}
