/* warn.c — warnings (prefix zw_): declarations nothing uses, lifelines
 * that take part in nothing, loops that cannot end, constant conditions.
 *
 * zw_count_uses runs right after name resolution, before constant folding
 * replaces references to constants by their values: it counts, for every
 * declaration, the references to it anywhere in the program (every
 * workflow, fragment, guard, constant, variable default and pure action
 * body).  zw_warn runs after the checks passed and reports, for the
 * declarations and statements of the compiled file itself (never of an
 * imported library), through zd_warn, which knows which warnings are on.
 *
 *   unused-variable   a `var` no statement reads or writes (workflow
 *                     inputs are used by the caller); the unused-
 *                     warnings only for a file with a workflow (a file
 *                     without one is a library)
 *   unused-const      a `const` nothing refers to
 *   unused-action     an action nothing calls
 *   unused-lifeline   a lifeline that sends, receives, acts and decides
 *                     nothing in a workflow
 *   constant-guard    an `if` or `while` condition of constants only
 *   unseen-lifeline   a CPL guard that reads lifeline B (`@B.x`, `@B(…)`)
 *                     at an owner no chain of messages ever leads to from
 *                     B — messages in any order, the control messages of
 *                     decisions included: B is never in the owner's
 *                     causal past, so the term is always undefined
 *   endless-loop      a `while` whose condition, once true, stays true:
 *                     a constant `true`, or a plain condition (no CPL
 *                     operator) over variables none of which the loop
 *                     writes on the owner
 */
#include "zgc.h"

#include <string.h>

/* ---- uses --------------------------------------------------------------- */

static void use(ZDecl *d)
{
    if (d) d->uses++;
}

static void count_expr(const ZExpr *e)
{
    if (!e) return;
    switch (e->kind) {
    case E_NAME:
        if (e->name_kind != NAME_PARAM) use(e->decl); /* a parameter's decl is its action */
        break;
    case E_AT_VAR:
    case E_CALL: use(e->decl); break;
    default: break;
    }
    count_expr(e->a);
    count_expr(e->b);
    count_expr(e->c);
    for (int i = 0; i < e->args.len; i++) count_expr(ZU_VEC_AT(e->args, i));
}

static void count_body(const ZVec *body);

static void count_stmt(const ZStmt *s)
{
    for (int i = 0; i < s->args.len; i++) count_expr(ZU_VEC_AT(s->args, i));
    for (int i = 0; i < s->params.len; i++) count_expr(ZU_VEC_AT(s->params, i));
    for (int i = 0; i < s->targets.len; i++) use(((ZTarget *)ZU_VEC_AT(s->targets, i))->var);
    count_expr(s->expr);
    count_body(&s->body);
    count_body(&s->els);
    for (int i = 0; i < s->branches.len; i++)
        count_body(&((ZBranch *)ZU_VEC_AT(s->branches, i))->body);
    for (int i = 0; i < s->items.len; i++)
        count_expr(((ZReturnItem *)ZU_VEC_AT(s->items, i))->value);
}

static void count_body(const ZVec *body)
{
    for (int i = 0; i < body->len; i++) count_stmt(ZU_VEC_AT(*body, i));
}

void zw_count_uses(ZProgram *p)
{
    for (int i = 0; i < p->decls.len; i++) {
        ZDecl *d = ZU_VEC_AT(p->decls, i);
        d->uses = 0;
    }
    for (int i = 0; i < p->decls.len; i++) {
        ZDecl *d = ZU_VEC_AT(p->decls, i);
        count_expr(d->expr); /* constants, defaults, guards, pure bodies */
        for (int k = 0; k < d->props.len; k++) count_expr(((ZProp *)ZU_VEC_AT(d->props, k))->value);
        if (d->kind == D_WORKFLOW || d->kind == D_FRAGMENT) {
            count_body(&d->body);
            if (d->ret && (d->body.len == 0 || ZU_VEC_AT(d->body, d->body.len - 1) != d->ret))
                count_stmt(d->ret);
        }
        if (d->kind == D_STORE) { /* its tools are in its registry */
            for (int k = 0; k < d->tools.len; k++) use(((ZParam *)ZU_VEC_AT(d->tools, k))->ref);
            for (int k = 0; k < d->cells.len; k++)
                count_expr(((ZDecl *)ZU_VEC_AT(d->cells, k))->expr);
        }
        if (d->kind == D_WORKFLOW) /* an input is set by the caller */
            for (int k = 0; k < d->params.len; k++) use(((ZParam *)ZU_VEC_AT(d->params, k))->var);
    }
}

/* ---- the warnings --------------------------------------------------------- */

/* Only what the compiled file itself declares or says: a library's unused
 * declarations are not its user's concern. */
static bool own(ZSpan s) { return s.file == 0; }

static bool constant(void *user, const ZDecl *d, ZValue *v)
{
    const ZEval *ev = user;
    return d->kind == D_CONST && d->expr && ze_eval(ev, d->expr, v);
}

static void no_error(void *user, const ZExpr *at, ZEvalError err)
{
    (void)user, (void)at, (void)err;
}

/* Whether e has a CPL operator or a guard name (a guard may be one). */
static bool temporal(const ZExpr *e)
{
    if (!e) return false;
    switch (e->kind) {
    case E_AT_VAR:
    case E_AT:
    case E_PREV:
    case E_SINCE:
    case E_ONCE:
    case E_HIST:
    case E_PAST:
    case E_SEEN: return true;
    case E_NAME:
        if (e->name_kind == NAME_GUARD) return true;
        break;
    default: break;
    }
    if (temporal(e->a) || temporal(e->b) || temporal(e->c)) return true;
    for (int i = 0; i < e->args.len; i++)
        if (temporal(ZU_VEC_AT(e->args, i))) return true;
    return false;
}

/* Adds the variables e reads to vars (ZDecl*). */
static void vars_of(ZArena *a, const ZExpr *e, ZVec *vars)
{
    if (!e) return;
    if (e->kind == E_NAME && e->name_kind == NAME_VAR && e->decl) zu_vec_push(a, vars, e->decl);
    vars_of(a, e->a, vars);
    vars_of(a, e->b, vars);
    vars_of(a, e->c, vars);
    for (int i = 0; i < e->args.len; i++) vars_of(a, ZU_VEC_AT(e->args, i), vars);
}

/* Whether the statements write variable v on lifeline life. */
static bool writes(const ZVec *body, const ZDecl *v, int life)
{
    for (int i = 0; i < body->len; i++) {
        const ZStmt *s = ZU_VEC_AT(*body, i);
        if (s->kind == S_ASSIGN && s->life.index == life)
            for (int k = 0; k < s->targets.len; k++)
                if (((ZTarget *)ZU_VEC_AT(s->targets, k))->var == v) return true;
        if (s->kind == S_BLOCK && s->life.index == life && writes(&s->body, v, life)) return true;
        if (s->kind == S_MSG && s->to.index == life)
            for (int k = 0; k < s->params.len; k++) {
                const ZExpr *p = ZU_VEC_AT(s->params, k);
                if (p->kind == E_NAME && p->decl == v) return true;
            }
        if (writes(&s->body, v, life) || writes(&s->els, v, life)) return true;
        for (int k = 0; k < s->branches.len; k++)
            if (writes(&((ZBranch *)ZU_VEC_AT(s->branches, k))->body, v, life)) return true;
    }
    return false;
}

typedef struct W {
    ZArena *a;
    ZDiag *d;
    const ZProgram *p;
    bool *takes_part; /* per lifeline, in the workflow being looked at */
    bool *edge;       /* nl × nl: a message from i to j somewhere */
    bool *reach;      /* nl × nl: a chain of messages from i to j */
    unsigned walk;    /* this condition's number (ZDecl.walk) */
} W;

/* ---- who can ever see whom ------------------------------------------------ */

static void edge(W *w, int from, int to)
{
    int nl = w->p->lifelines.len;
    if (from >= 0 && to >= 0 && from < nl && to < nl && from != to) w->edge[from * nl + to] = true;
}

/* The lifelines the statements involve (senders, receivers, actors,
 * owners). */
static void involved(W *w, const ZVec *body, bool *in)
{
    int nl = w->p->lifelines.len;
    for (int i = 0; i < body->len; i++) {
        const ZStmt *s = ZU_VEC_AT(*body, i);
        if (s->life.index >= 0 && s->life.index < nl) in[s->life.index] = true;
        if (s->kind == S_MSG && s->to.index >= 0 && s->to.index < nl) in[s->to.index] = true;
        involved(w, &s->body, in);
        involved(w, &s->els, in);
        for (int k = 0; k < s->branches.len; k++)
            involved(w, &((ZBranch *)ZU_VEC_AT(s->branches, k))->body, in);
    }
}

/* The message edges: every message, and the control messages an owner of
 * an `if` or `while` sends to the lifelines its branches involve. */
static void edges(W *w, const ZVec *body)
{
    int nl = w->p->lifelines.len;
    for (int i = 0; i < body->len; i++) {
        const ZStmt *s = ZU_VEC_AT(*body, i);
        if (s->kind == S_MSG) edge(w, s->life.index, s->to.index);
        if (s->kind == S_IF || s->kind == S_WHILE) {
            bool *in = zu_alloc(w->a, sizeof *in * (size_t)(nl + 1));
            involved(w, &s->body, in);
            involved(w, &s->els, in);
            for (int l = 0; l < nl; l++)
                if (in[l]) edge(w, s->life.index, l);
        }
        edges(w, &s->body);
        edges(w, &s->els);
        for (int k = 0; k < s->branches.len; k++)
            edges(w, &((ZBranch *)ZU_VEC_AT(s->branches, k))->body);
    }
}

static void closure(W *w)
{
    int nl = w->p->lifelines.len;
    for (int i = 0; i < nl * nl; i++) w->reach[i] = w->edge[i];
    for (int k = 0; k < nl; k++)
        for (int i = 0; i < nl; i++)
            if (w->reach[i * nl + k])
                for (int j = 0; j < nl; j++)
                    if (w->reach[k * nl + j]) w->reach[i * nl + j] = true;
}

/* Reports the first lifeline e reads (through @B.x, @B(…), seen B, and
 * named guards, each looked into once per condition) that never reaches
 * the owner. */
static bool unseen(W *w, const ZExpr *e, int owner, const ZStmt *s)
{
    if (!e) return false;
    int nl = w->p->lifelines.len;
    if ((e->kind == E_AT_VAR || e->kind == E_AT || e->kind == E_SEEN) && e->life >= 0 &&
        e->life < nl && e->life != owner && !w->reach[e->life * nl + owner]) {
        const ZDecl *b = ZU_VEC_AT(w->p->lifelines, e->life);
        const ZDecl *o = ZU_VEC_AT(w->p->lifelines, owner);
        zd_warn(w->d, ZW_UNSEEN_LIFELINE, e->span,
                "no message ever leads from %s to %s, the owner: %s is never in its causal past, "
                "so this term is always undefined",
                b->name, o->name, b->name);
        return true;
    }
    if (e->kind == E_NAME && e->name_kind == NAME_GUARD && e->decl && e->decl->expr) {
        if (e->decl->walk == w->walk) return false;
        e->decl->walk = w->walk;
        return unseen(w, e->decl->expr, owner, s);
    }
    if (unseen(w, e->a, owner, s) || unseen(w, e->b, owner, s) || unseen(w, e->c, owner, s))
        return true;
    for (int i = 0; i < e->args.len; i++)
        if (unseen(w, ZU_VEC_AT(e->args, i), owner, s)) return true;
    return false;
}

static void part(W *w, const ZLifeRef *l)
{
    if (l->index >= 0 && l->index < w->p->lifelines.len) w->takes_part[l->index] = true;
}

static void check_condition(W *w, const ZStmt *s)
{
    if (!own(s->expr->span)) return;
    if (s->life.index >= 0 && s->life.index < w->p->lifelines.len) {
        w->walk++;
        unseen(w, s->expr, s->life.index, s);
    }
    ZEval ev = {w->a, constant, no_error, NULL};
    ev.user = &ev;
    ZValue v;
    bool is_const = !temporal(s->expr) && ze_eval(&ev, s->expr, &v) && v.k == TY_BOOL;
    if (s->kind == S_WHILE && is_const && v.b) {
        zd_warn(w->d, ZW_ENDLESS_LOOP, s->expr->span,
                "this loop never ends: its condition is always true");
        return;
    }
    if (is_const) {
        zd_warn(w->d, ZW_CONSTANT_GUARD, s->expr->span, "this condition is always %s: the %s %s",
                v.b ? "true" : "false",
                s->kind == S_WHILE ? "loop"
                : v.b              ? "else branch"
                                   : "then branch",
                s->kind == S_WHILE ? "never runs" : "never runs");
        return;
    }
    if (s->kind != S_WHILE || temporal(s->expr)) return;
    ZVec vars = {0};
    vars_of(w->a, s->expr, &vars);
    if (vars.len == 0) return; /* calls of builtins on constants only: no claim */
    for (int i = 0; i < vars.len; i++)
        if (writes(&s->body, ZU_VEC_AT(vars, i), s->life.index)) return;
    const ZDecl *first = ZU_VEC_AT(vars, 0);
    zd_warn(w->d, ZW_ENDLESS_LOOP, s->expr->span,
            "this loop never ends once entered: its body never writes %s%s%s on %s, the "
            "owner",
            vars.len == 1 ? "`" : "the variables of its condition (`", first->name,
            vars.len == 1 ? "`" : "`, …)", s->life.name);
}

static void walk(W *w, const ZVec *body)
{
    for (int i = 0; i < body->len; i++) {
        const ZStmt *s = ZU_VEC_AT(*body, i);
        part(w, &s->life);
        if (s->kind == S_MSG) part(w, &s->to);
        if ((s->kind == S_IF || s->kind == S_WHILE) && s->expr) check_condition(w, s);
        for (int k = 0; k < s->items.len; k++)
            part(w, &((ZReturnItem *)ZU_VEC_AT(s->items, k))->at);
        walk(w, &s->body);
        walk(w, &s->els);
        for (int k = 0; k < s->branches.len; k++)
            walk(w, &((ZBranch *)ZU_VEC_AT(s->branches, k))->body);
    }
}

static void workflow(W *w, const ZDecl *wf)
{
    int nl = w->p->lifelines.len;
    w->takes_part = zu_alloc(w->a, sizeof *w->takes_part * (size_t)(nl + 1));
    w->edge = zu_alloc(w->a, sizeof *w->edge * (size_t)(nl * nl + 1));
    w->reach = zu_alloc(w->a, sizeof *w->reach * (size_t)(nl * nl + 1));
    edges(w, &wf->body);
    closure(w);
    walk(w, &wf->body);
    if (wf->ret && (wf->body.len == 0 || ZU_VEC_AT(wf->body, wf->body.len - 1) != wf->ret)) {
        ZVec one = {0};
        zu_vec_push(w->a, &one, wf->ret);
        walk(w, &one);
    }
    for (int k = 0; k < wf->params.len; k++) { /* an input's owner receives it */
        const ZParam *pa = ZU_VEC_AT(wf->params, k);
        if (pa->owner_index >= 0 && pa->owner_index < nl) w->takes_part[pa->owner_index] = true;
    }
    for (int l = 0; l < nl; l++) {
        const ZDecl *ld = ZU_VEC_AT(w->p->lifelines, l);
        if (!w->takes_part[l] && own(ld->span))
            zd_warn(w->d, ZW_UNUSED_LIFELINE, ld->name_span,
                    "lifeline `%s` takes part in nothing in workflow `%s`", ld->name, wf->name);
    }
}

void zw_warn(ZArena *a, const ZProgram *p, const ZDecl *wf, ZDiag *d)
{
    /* a compilation's declarations start with walk 0 (zu_alloc zeroes) */
    W w = {.a = a, .d = d, .p = p, .walk = 0};
    /* a file without a workflow of its own is a library: its declarations
       are for the files that import it */
    bool library = true;
    for (int i = 0; i < p->workflows.len; i++)
        if (own(((const ZDecl *)ZU_VEC_AT(p->workflows, i))->span)) library = false;
    for (int i = 0; i < p->decls.len && !library; i++) {
        const ZDecl *x = ZU_VEC_AT(p->decls, i);
        if (x->uses > 0 || !own(x->span) || x->span.exp) continue;
        if (x->kind == D_VAR)
            zd_warn(d, ZW_UNUSED_VARIABLE, x->name_span, "variable `%s` is never used", x->name);
        else if (x->kind == D_CONST)
            zd_warn(d, ZW_UNUSED_CONST, x->name_span, "constant `%s` is never used", x->name);
        else if (x->kind == D_ACTION)
            zd_warn(d, ZW_UNUSED_ACTION, x->name_span, "%s action `%s` is never called",
                    za_action_kind_name(x->action), x->name);
    }
    for (int i = 0; i < p->workflows.len; i++) {
        const ZDecl *x = ZU_VEC_AT(p->workflows, i);
        if ((!wf || x == wf) && own(x->span)) workflow(&w, x);
    }
}
