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

static void stmts(Ck *c, Flow *f, ZVec *body);

static void msg_reads(Ck *c, Flow *f, ZStmt *s)
{
    for (int i = 0; i < s->args.len; i++) ck_reads(c, f, s->life.index, s->args.items[i], true);
}

static void msg_writes(Ck *c, Flow *f, ZStmt *s)
{
    for (int i = 0; i < s->params.len; i++) {
        ZExpr *p = s->params.items[i];
        if (p->kind == E_NAME && p->name_kind == NAME_VAR)
            ck_define(c, f, s->to.index, p->decl, p->span);
    }
}

static void check_assign(Ck *c, Flow *f, ZStmt *s)
{
    if (!s->expr) return;
    ck_assign(c, s);
    ck_reads(c, f, s->life.index, s->expr, true);
    for (int i = 0; i < s->targets.len; i++) {
        ZTarget *t = s->targets.items[i];
        ck_define(c, f, s->life.index, t->var, t->span);
    }
}

static void check_guard_expr(Ck *c, Flow *f, ZStmt *s)
{
    ck_condition(c, s);
    ck_reads(c, f, s->life.index, s->expr, !zk_is_cpl(s->expr));
}

static void check_if(Ck *c, Flow *f, ZStmt *s)
{
    check_guard_expr(c, f, s);
    Flow t = ck_flow_copy(c, f), e = ck_flow_copy(c, f);
    stmts(c, &t, &s->body);
    stmts(c, &e, &s->els);
    ck_mark_partial(c, t.must, e.must, s);
    for (int w = 0; w < c->nwords; w++) {
        f->must[w] = t.must[w] & e.must[w];
        f->maybe[w] = t.maybe[w] | e.maybe[w];
    }
}

static void check_while(Ck *c, Flow *f, ZStmt *s)
{
    check_guard_expr(c, f, s);
    Flow body = ck_flow_copy(c, f), exit = ck_flow_copy(c, f);
    stmts(c, &body, &s->body);
    stmts(c, &exit, &s->els);
    /* what the body defines is not defined after the loop */
    uint64_t *lost = bits_new(c);
    for (int w = 0; w < c->nwords; w++) lost[w] = body.must[w] & ~exit.must[w];
    uint64_t *zero = bits_new(c);
    ck_mark_partial(c, lost, zero, s);
    for (int w = 0; w < c->nwords; w++) {
        f->must[w] = exit.must[w];
        f->maybe[w] = body.maybe[w] | exit.maybe[w];
    }
}

static void check_par(Ck *c, Flow *f, ZStmt *s)
{
    ParRegion r;
    if (!ck_par_begin(c, &r, s)) return;
    Flow out = ck_flow_copy(c, f);
    for (int i = 0; i < r.n; i++) {
        ZBranch *b = s->branches.items[i];
        ck_par_enter(c, &r, i);
        Flow g = ck_flow_copy(c, f);
        stmts(c, &g, &b->body);
        ck_par_leave(c, &r);
        for (int q = 0; q < c->nwords; q++) {
            out.must[q] |= g.must[q];
            out.maybe[q] |= g.maybe[q];
        }
    }
    ck_par_end(c, &r);
    *f = out;
}

static void check_coregion(Ck *c, Flow *f, ZStmt *s)
{
    ck_coregion(c, s);
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
        ck_msg(c, s);
        msg_reads(c, f, s);
        msg_writes(c, f, s);
        break;
    case S_ASSIGN: check_assign(c, f, s); break;
    case S_BLOCK:
        for (int i = 0; i < s->body.len; i++) stmt(c, f, s->body.items[i]);
        break;
    case S_IF: check_if(c, f, s); break;
    case S_WHILE: check_while(c, f, s); break;
    case S_PAR: check_par(c, f, s); break;
    case S_COREGION: check_coregion(c, f, s); break;
    case S_SKIP:
    case S_RETURN: /* the workflow's final return is checked by check_return */
    default: break;
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
        if (v->kind == E_NAME && v->name_kind == NAME_VAR)
            ck_use(c, f, it->at.index, v, NULL, true);
    }
}

static void check_inputs(Ck *c, const ZDecl *wf, Flow *f)
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
        ck_define(c, f, in->owner_index, var, in->span);
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
    if (wf->ret)
        check_return(c, &f, wf, wf->ret);
    else if (wf->results.len)
        zd_error(c->d, wf->name_span,
                 "workflow `%s` declares a result but does not end with `return`", wf->name);
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
