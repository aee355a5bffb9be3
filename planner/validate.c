/* validate.c — a planner's restrictions on a generated workflow
 * (planner.h: zpl_validate).  Runs after the front end has accepted the
 * program, so names are resolved and types known; every breach is a
 * diagnostic at its place in the answer, which goes back to the model. */
#include <string.h>

#include "planner.h"

typedef struct V {
    ZCompilation *c;
    const ZplSpec *s;
    int lines;
    int statements;
    bool size_reported;
} V;

static bool in_answer(const V *v, ZSpan sp) { return sp.file == 0 && sp.first_line <= v->lines; }

static bool has_name(const ZVec *names, const char *n)
{
    for (int i = 0; i < names->len; i++)
        if (strcmp(names->items[i], n) == 0) return true;
    return false;
}

static void check_expr(V *v, const ZExpr *e)
{
    if (!e) return;
    if (e->kind == E_CALL && e->decl && e->decl->kind == D_ACTION) {
        const ZDecl *d = e->decl;
        if (!has_name(&v->s->actions, d->name) && !in_answer(v, d->span))
            zd_error(&v->c->diag, e->span,
                     "`%s` is not among the actions this planner may use (%s)", d->name,
                     v->s->actions.len ? "see the list above" : "it offers none");
    }
    check_expr(v, e->a);
    check_expr(v, e->b);
    check_expr(v, e->c);
    for (int i = 0; i < e->args.len; i++) check_expr(v, e->args.items[i]);
}

static void check_body(V *v, const ZVec *body);

static void check_stmt(V *v, const ZStmt *st)
{
    ZDiag *d = &v->c->diag;
    if (++v->statements > v->s->max_statements && !v->size_reported) {
        v->size_reported = true;
        zd_error(d, st->span,
                 "the workflow has more than %ld statements, this planner's max_statements",
                 v->s->max_statements);
    }
    switch (st->kind) {
    case S_IF:
        if (!v->s->allow_if)
            zd_error(d, st->span, "`if` is not allowed in this planner's workflows");
        break;
    case S_WHILE:
        if (!v->s->allow_while)
            zd_error(d, st->span, "`while` is not allowed in this planner's workflows");
        break;
    case S_PAR:
    case S_COREGION:
    case S_USE:
        zd_error(d, st->span, "`%s` is not allowed in a planner's workflows",
                 st->kind == S_PAR        ? "parallel"
                 : st->kind == S_COREGION ? "coregion"
                                          : "fragment");
        break;
    case S_ATOMIC:
        zd_error(d, st->span,
                 "`atomic` is not allowed in a planner's workflows (an operation on store `%s`): "
                 "generated workflows share no store",
                 st->store_name);
        break;
    default: break;
    }
    check_expr(v, st->expr);
    for (int i = 0; i < st->args.len; i++) check_expr(v, st->args.items[i]);
    check_body(v, &st->body);
    check_body(v, &st->els);
    for (int i = 0; i < st->branches.len; i++) {
        const ZBranch *b = st->branches.items[i];
        check_body(v, &b->body);
    }
}

static void check_body(V *v, const ZVec *body)
{
    for (int i = 0; i < body->len; i++) check_stmt(v, body->items[i]);
}

/* The end: `W(x) -> Owner(y); return y @ Owner;` with W a worker. */
static void check_end(V *v, const ZDecl *wf)
{
    ZDiag *d = &v->c->diag;
    const char *owner = v->s->owner;
    int n = wf->body.len;
    const ZStmt *ret = n > 0 ? wf->body.items[n - 1] : NULL;
    const ZStmt *msg = n > 1 ? wf->body.items[n - 2] : NULL;
    const char *want = "the workflow must end with a worker sending the result to %s, then "
                       "`return` of it at %s";
    if (!ret || ret->kind != S_RETURN || ret->items.len != 1) {
        zd_error(d, ret ? ret->span : wf->name_span, want, owner, owner);
        return;
    }
    const ZReturnItem *it = ret->items.items[0];
    if (strcmp(it->at.name, owner) != 0) {
        zd_error(d, it->at.span, "the workflow must return its result at %s, the planner's owner",
                 owner);
        return;
    }
    if (!msg || msg->kind != S_MSG || strcmp(msg->to.name, owner) != 0 ||
        strcmp(msg->life.name, owner) == 0) {
        zd_error(d, msg ? msg->span : ret->span, want, owner, owner);
        return;
    }
    const char *rv = it->value && it->value->kind == E_NAME ? it->value->name : NULL;
    bool bound = false;
    for (int i = 0; rv && i < msg->params.len; i++) {
        const ZExpr *p = msg->params.items[i];
        if (p->kind == E_NAME && p->name && strcmp(p->name, rv) == 0) bound = true;
    }
    if (!bound)
        zd_error(d, it->value ? it->value->span : ret->span,
                 "the workflow must return what its last message gives %s", owner);
}

static void check_inputs(V *v, const ZDecl *wf)
{
    ZDiag *d = &v->c->diag;
    const ZDecl *pl = v->s->decl;
    bool same = wf->results.len == pl->results.len;
    for (int i = 0; same && i < wf->results.len; i++) {
        const ZParam *w = wf->results.items[i], *p = pl->results.items[i];
        same = strcmp(za_type_name(v->c->arena, w->type), za_type_name(v->c->arena, p->type)) == 0;
    }
    if (!same) {
        ZBuf b = {0};
        for (int i = 0; i < pl->results.len; i++) {
            const ZParam *p = pl->results.items[i];
            zu_buf_printf(&b, "%s%s", i ? ", " : "", za_type_name(v->c->arena, p->type));
        }
        zd_error(d, wf->name_span, "the workflow must return %s%s%s",
                 pl->results.len > 1 ? "(" : "", b.data ? b.data : "nothing",
                 pl->results.len > 1 ? ")" : "");
        zu_buf_free(&b);
    }
    if (wf->params.len != pl->params.len) {
        zd_error(d, wf->name_span, "the workflow must take the planner's %d input%s",
                 pl->params.len, pl->params.len == 1 ? "" : "s");
        return;
    }
    for (int i = 0; i < wf->params.len; i++) {
        const ZParam *w = wf->params.items[i], *p = pl->params.items[i];
        const char *wt = za_type_name(v->c->arena, w->type);
        const char *pt = za_type_name(v->c->arena, p->type);
        if (strcmp(w->name, p->name) != 0 || strcmp(wt, pt) != 0)
            zd_error(d, w->span, "input %d must be `%s: %s @ %s`", i + 1, p->name, pt, v->s->owner);
        else if (!w->owner || strcmp(w->owner, v->s->owner) != 0)
            zd_error(d, w->span, "input `%s` must be at %s, the planner's owner", w->name,
                     v->s->owner);
    }
}

int zpl_validate(ZCompilation *c, const ZplSpec *s, int answer_lines)
{
    V v = {c, s, answer_lines, 0, false};
    ZDiag *d = &c->diag;
    int before = d->errors;
    const ZDecl *wf = NULL;
    for (int i = 0; i < c->prog->decls.len; i++) {
        const ZDecl *x = c->prog->decls.items[i];
        if (!in_answer(&v, x->span)) continue;
        switch (x->kind) {
        case D_WORKFLOW:
            if (wf)
                zd_error(d, x->name_span, "the answer must hold one workflow");
            else
                wf = x;
            break;
        case D_LIFELINE:
            zd_error(d, x->span, "the lifelines are given (%s and the workers): declare none",
                     s->owner);
            break;
        case D_IMPORT:
        case D_FRAGMENT:
            zd_error(d, x->span, "a planner's workflow may not use %s",
                     x->kind == D_IMPORT ? "`import`" : "fragments");
            break;
        case D_STORE:
            zd_error(d, x->name_span,
                     "a planner's workflow may not declare a store (`%s`): generated workflows "
                     "share no store",
                     x->name);
            break;
        case D_ACTION:
            if (x->action == ACT_LLM && !s->allow_llm)
                zd_error(d, x->name_span, "this planner's workflows may not define llm actions");
            else if (x->action == ACT_PURE && !s->allow_pure)
                zd_error(d, x->name_span, "this planner's workflows may not define pure actions");
            else if (x->action != ACT_LLM && x->action != ACT_PURE)
                zd_error(d, x->name_span,
                         "a planner's workflow may not declare %s actions: only the allowed "
                         "llm and pure ones",
                         za_action_kind_name(x->action));
            break;
        default: break;
        }
    }
    if (!wf) {
        zd_error(d, (ZSpan){1, 1, 1, 1, 0, 0}, "the answer holds no workflow");
        return d->errors - before;
    }
    check_inputs(&v, wf);
    check_body(&v, &wf->body);
    check_end(&v, wf);
    return d->errors - before;
}
