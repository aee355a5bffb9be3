/* resolve.c — names (language reference §3, §4 rule 5).
 *
 * zr_resolve builds one symbol table per namespace and binds every name in
 * the program to its declaration:
 *
 *   lifelines   `lifeline A, B;`
 *   values      variables, constants, enum members and named guards share
 *               one namespace: `x` in an expression must mean one thing, so
 *               an enum member may not have the name of a variable (or of a
 *               member of another enum)
 *   types       enums
 *   actions     every action kind; a name of a builtin function is refused
 *   workflows
 *   stores      `store S { … }`; a store's cells are names within it
 *
 * A workflow input `x: T @ A` initialises the variable `x`; when no `var x`
 * is declared the input declares it (an implicit D_VAR appended to
 * p->vars).  Several workflows may share such an implicit variable; the
 * checker verifies that all the types agree.
 *
 * Besides names, the resolver checks what is purely structural: duplicate
 * declarations, parameters, outputs and inputs, `return` as the last
 * statement of a workflow, recursion among pure actions and among named
 * guards.  It numbers if/while constructs and parallel regions in pre-order
 * (per workflow) and marks action statements.
 *
 * After zr_resolve, `index` is the ordinal within its kind for every
 * declaration (lifelines and variables as documented in zgc.h; constants,
 * enums, guards, actions and workflows likewise), and an enum's `type` is
 * the TY_ENUM type naming it. */
#include "zgc.h"
#include "suggest.h"

#include <stdlib.h>
#include <string.h>

/* ---- symbol tables ------------------------------------------------------ */

typedef struct Sym {
    const char *name;
    ZNameKind kind; /* values namespace */
    ZDecl *decl;
    int member; /* enum member index */
    ZSpan span; /* where it was declared */
} Sym;

typedef struct Table {
    Sym **slots;
    int cap, len;
} Table;

static Sym *tab_get(const Table *t, const char *name)
{
    if (!t->cap || !name) return NULL;
    size_t mask = (size_t)(t->cap - 1);
    for (size_t i = zu_hash_str(name) & mask;; i = (i + 1) & mask) {
        Sym *s = t->slots[i];
        if (!s) return NULL;
        if (s->name == name || strcmp(s->name, name) == 0) return s;
    }
}

static void tab_put(ZArena *a, Table *t, Sym *sym)
{
    if ((t->len + 1) * 2 > t->cap) {
        int ncap = t->cap ? t->cap * 2 : 32;
        Sym **ns = zu_alloc(a, sizeof *ns * (size_t)ncap);
        for (int i = 0; i < t->cap; i++) {
            Sym *s = t->slots[i];
            if (!s) continue;
            size_t j = zu_hash_str(s->name) & (size_t)(ncap - 1);
            while (ns[j]) j = (j + 1) & (size_t)(ncap - 1);
            ns[j] = s;
        }
        t->slots = ns;
        t->cap = ncap;
    }
    size_t j = zu_hash_str(sym->name) & (size_t)(t->cap - 1);
    while (t->slots[j]) j = (j + 1) & (size_t)(t->cap - 1);
    t->slots[j] = sym;
    t->len++;
}

typedef struct R {
    ZArena *a;
    ZProgram *p;
    ZDiag *d;
    Table lifes, vals, types, acts, wfs, stores;
    ZDecl *pure; /* the pure action whose body is being resolved */
    int n_ctl, n_par;
    int counts[D__COUNT];
} R;

/* Declares `name` in `t`; reports a duplicate and returns NULL if taken.
 * `what` names the new declaration's kind; `old_what` (may be NULL) the
 * kind of what is already there when it can differ. */
static Sym *declare(R *r, Table *t, const char *name, ZSpan at, const char *what)
{
    if (!name) return NULL;
    Sym *old = tab_get(t, name);
    if (old) {
        const char *old_what =
            t == &r->vals   ? za_name_kind_name(old->kind)
            : t == &r->acts ? (old->decl && old->decl->kind == D_FRAGMENT ? "fragment" : "action")
                            : what;
        if (strcmp(old_what, what) == 0)
            zd_error(r->d, at, "duplicate %s `%s`", what, name);
        else
            zd_error(r->d, at, "%s `%s` clashes with %s `%s`", what, name, old_what, name);
        zd_note(r->d, old->span, "previous declaration of `%s` here", name);
        return NULL;
    }
    Sym *s = zu_alloc(r->a, sizeof *s);
    s->name = name;
    s->span = at;
    tab_put(r->a, t, s);
    return s;
}

/* ---- suggestions -------------------------------------------------------- */

/* The closest name in `t` within distance 2 (and shorter than the name). */
static const Sym *closest(const Table *t, const char *name, bool vars_only)
{
    const Sym *best = NULL;
    ZvSuggest sg;
    zv_suggest_init(&sg, name);
    for (int i = 0; i < t->cap; i++) {
        const Sym *s = t->slots[i];
        if (!s || (vars_only && s->kind != NAME_VAR)) continue;
        const char *before = sg.best;
        zv_suggest_try(&sg, s->name);
        if (sg.best != before) best = s;
    }
    return best;
}

static void suggest(R *r, const Table *t, const char *name, bool vars_only)
{
    const Sym *s = closest(t, name, vars_only);
    if (s) zd_note(r->d, s->span, "did you mean `%s`?", s->name);
}

/* ---- lifelines and types ------------------------------------------------ */

static int resolve_lifeline(R *r, const char *name, ZSpan at)
{
    if (!name) return -1;
    Sym *s = tab_get(&r->lifes, name);
    if (s) return s->decl->index;
    zd_error(r->d, at, "unknown lifeline `%s`", name);
    suggest(r, &r->lifes, name, false);
    return -1;
}

static void resolve_life_ref(R *r, ZLifeRef *l)
{
    l->index = resolve_lifeline(r, l->name, l->span);
}

static void resolve_type(R *r, ZType *t)
{
    if (!t) return;
    if (t->kind == TY_TUPLE) {
        for (int i = 0; i < t->elems.len; i++) resolve_type(r, t->elems.items[i]);
        return;
    }
    if (t->kind != TY_NAMED) return;
    Sym *s = tab_get(&r->types, t->name);
    if (!s) {
        /* the names other languages give the builtin types */
        static const char *const other[][2] = {
            {"string", "str"},   {"String", "str"},   {"text", "str"},     {"integer", "int"},
            {"long", "int"},     {"boolean", "bool"}, {"Boolean", "bool"}, {"double", "float"},
            {"number", "float"}, {"real", "float"},   {"object", "json"},  {"dict", "json"},
            {"any", "json"},     {"list", "json"},    {"array", "json"}};
        const char *name = t->name ? t->name : "?";
        const char *builtin = NULL;
        for (size_t i = 0; i < sizeof other / sizeof other[0] && !builtin; i++)
            if (!strcmp(other[i][0], name)) builtin = other[i][1];
        if (!builtin) { /* a near miss of a builtin type: `flaot` */
            static const char *const builtins[] = {"bool", "int", "float", "str", "json"};
            ZvSuggest sg;
            zv_suggest_init(&sg, name);
            for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
                zv_suggest_try(&sg, builtins[i]);
            builtin = sg.best;
        }
        if (builtin) {
            zd_error(r->d, t->span, "unknown type `%s`; did you mean `%s`?", name, builtin);
            t->kind = TY_ERROR;
            return;
        }
        zd_error(r->d, t->span, "unknown type `%s`", name);
        suggest(r, &r->types, t->name ? t->name : "", false);
        t->kind = TY_ERROR;
        return;
    }
    t->kind = TY_ENUM;
    t->enum_decl = s->decl;
}

/* ---- expressions -------------------------------------------------------- */

static void resolve_expr(R *r, ZExpr *e);

static void unknown_value(R *r, const char *name, ZSpan at)
{
    zd_error(r->d, at, "unknown variable `%s`", name);
    suggest(r, &r->vals, name, false);
}

static void resolve_name(R *r, ZExpr *e)
{
    if (r->pure) {
        for (int i = 0; i < r->pure->params.len; i++) {
            ZParam *pp = r->pure->params.items[i];
            if (pp->name && strcmp(pp->name, e->name) == 0) {
                e->name_kind = NAME_PARAM;
                e->decl = r->pure;
                e->member = i;
                return;
            }
        }
    }
    Sym *s = tab_get(&r->vals, e->name);
    if (!s) {
        unknown_value(r, e->name, e->name_span);
        return;
    }
    e->name_kind = s->kind;
    e->decl = s->decl;
    e->member = s->member;
}

static void resolve_call(R *r, ZExpr *e)
{
    ZBuiltin b = za_builtin_lookup(e->name);
    if (b != BI_NONE) {
        e->builtin = b;
        return;
    }
    Sym *s = tab_get(&r->acts, e->name);
    if (s) {
        e->decl = s->decl;
        return;
    }
    zd_error(r->d, e->name_span, "unknown action `%s`", e->name);
    suggest(r, &r->acts, e->name, false);
}

static void resolve_expr(R *r, ZExpr *e)
{
    if (!e) return;
    switch (e->kind) {
    case E_NAME:
        if (e->name) resolve_name(r, e);
        break;
    case E_AT_VAR: {
        e->life = resolve_lifeline(r, e->lifeline, e->lifeline_span);
        Sym *s = e->name ? tab_get(&r->vals, e->name) : NULL;
        if (!s) {
            if (e->name) unknown_value(r, e->name, e->name_span);
        } else if (s->kind != NAME_VAR) {
            zd_error(r->d, e->name_span, "`@%s.%s` needs a variable, but `%s` is a %s", e->lifeline,
                     e->name, e->name, za_name_kind_name(s->kind));
        } else {
            e->name_kind = NAME_VAR;
            e->decl = s->decl;
        }
        break;
    }
    case E_AT:
        e->life = resolve_lifeline(r, e->lifeline, e->lifeline_span);
        resolve_expr(r, e->a);
        break;
    case E_SEEN: e->life = resolve_lifeline(r, e->lifeline, e->lifeline_span); break;
    case E_CALL:
        if (e->name) resolve_call(r, e);
        for (int i = 0; i < e->args.len; i++) resolve_expr(r, e->args.items[i]);
        break;
    case E_TUPLE:
        for (int i = 0; i < e->args.len; i++) resolve_expr(r, e->args.items[i]);
        break;
    default:
        resolve_expr(r, e->a);
        resolve_expr(r, e->b);
        resolve_expr(r, e->c);
        break;
    }
}

/* ---- statements --------------------------------------------------------- */

static void resolve_target(R *r, ZTarget *t)
{
    Sym *s = tab_get(&r->vals, t->name);
    if (!s) {
        zd_error(r->d, t->span, "unknown variable `%s`", t->name);
        suggest(r, &r->vals, t->name, true);
    } else if (s->kind != NAME_VAR) {
        zd_error(r->d, t->span, "cannot assign to %s `%s`", za_name_kind_name(s->kind), t->name);
        zd_note(r->d, s->span, "`%s` is declared here", t->name);
    } else {
        t->var = s->decl;
    }
}

static void resolve_stmts(R *r, ZVec *body);

static void resolve_assign(R *r, ZStmt *s)
{
    resolve_life_ref(r, &s->life);
    for (int i = 0; i < s->targets.len; i++) resolve_target(r, s->targets.items[i]);
    resolve_expr(r, s->expr);
    s->is_action =
        s->expr && s->expr->kind == E_CALL && s->expr->decl && s->expr->decl->kind == D_ACTION;
}

static void resolve_stmt(R *r, ZStmt *s);

/* The cell `s` names in its store, or NULL (reported). */
static ZDecl *resolve_cell(R *r, const ZDecl *store, const char *name, ZSpan at)
{
    if (!store || !name) return NULL;
    ZvSuggest sg;
    zv_suggest_init(&sg, name);
    for (int i = 0; i < store->cells.len; i++) {
        ZDecl *c = store->cells.items[i];
        if (c->name && strcmp(c->name, name) == 0) return c;
        zv_suggest_try(&sg, c->name);
    }
    zd_error(r->d, at, "store `%s` has no cell `%s`", store->name, name);
    if (sg.best) zd_note(r->d, at, "did you mean `%s`?", sg.best);
    return NULL;
}

/* A store operation: its store, and its items on its lifeline. */
static void resolve_atomic(R *r, ZStmt *s)
{
    resolve_life_ref(r, &s->life);
    Sym *st = tab_get(&r->stores, s->store_name);
    if (!st) {
        zd_error(r->d, s->store_span, "unknown store `%s`", s->store_name);
        suggest(r, &r->stores, s->store_name, false);
    } else {
        s->store = st->decl;
    }
    for (int i = 0; i < s->body.len; i++) {
        ZStmt *in = s->body.items[i];
        in->store = s->store;
        switch (in->kind) {
        case S_READ:
            in->life = s->life;
            resolve_target(r, in->targets.items[0]);
            in->cell_decl = resolve_cell(r, s->store, in->cell, in->cell_span);
            break;
        case S_WRITE:
            in->life = s->life;
            if (!in->registry) {
                in->cell_decl = resolve_cell(r, s->store, in->cell, in->cell_span);
                resolve_expr(r, in->expr);
                break;
            }
            for (int k = 0; k < in->tools.len; k++) {
                ZParam *t = in->tools.items[k];
                for (int j = 0; s->store && j < s->store->tools.len && !t->ref; j++) {
                    ZParam *u = s->store->tools.items[j];
                    if (strcmp(u->name, t->name) == 0) t->ref = u->ref ? u->ref : (ZDecl *)u;
                }
                if (s->store && !t->ref)
                    zd_error(r->d, t->span, "`%s` is not a tool of store `%s`", t->name,
                             s->store->name);
            }
            break;
        case S_ASSIGN:
            in->life = s->life;
            for (int k = 0; k < in->targets.len; k++) resolve_target(r, in->targets.items[k]);
            resolve_expr(r, in->expr);
            in->is_action = in->expr && in->expr->kind == E_CALL && in->expr->decl &&
                            in->expr->decl->kind == D_ACTION;
            break;
        default: resolve_stmt(r, in); break;
        }
    }
}

/* A store's declarations: cell types and defaults, tools. */
static void resolve_store(R *r, ZDecl *d)
{
    for (int i = 0; i < d->cells.len; i++) {
        ZDecl *c = d->cells.items[i];
        resolve_type(r, c->type);
        resolve_expr(r, c->expr);
        for (int j = 0; j < i; j++) {
            ZDecl *o = d->cells.items[j];
            if (strcmp(o->name, c->name) == 0) {
                zd_error(r->d, c->name_span, "duplicate cell `%s` in store `%s`", c->name, d->name);
                zd_note(r->d, o->name_span, "previous declaration of `%s` here", c->name);
                break;
            }
        }
    }
    for (int i = 0; i < d->tools.len; i++) {
        ZParam *t = d->tools.items[i];
        bool dup = false;
        for (int j = 0; j < i && !dup; j++) {
            ZParam *o = d->tools.items[j];
            if (strcmp(o->name, t->name) == 0) {
                zd_error(r->d, t->span, "tool `%s` is listed twice in store `%s`", t->name,
                         d->name);
                zd_note(r->d, o->span, "previous mention of `%s` here", t->name);
                dup = true;
            }
        }
        if (dup) continue;
        Sym *a = tab_get(&r->acts, t->name);
        if (!a || !a->decl || a->decl->kind != D_ACTION) {
            zd_error(r->d, t->span, "unknown action `%s`: a tool is an `effect` action", t->name);
            suggest(r, &r->acts, t->name, false);
        } else {
            t->ref = a->decl;
        }
    }
}

static void resolve_stmt(R *r, ZStmt *s)
{
    switch (s->kind) {
    case S_ATOMIC: resolve_atomic(r, s); break;
    case S_MSG:
        resolve_life_ref(r, &s->life);
        resolve_life_ref(r, &s->to);
        for (int i = 0; i < s->args.len; i++) resolve_expr(r, s->args.items[i]);
        for (int i = 0; i < s->params.len; i++) resolve_expr(r, s->params.items[i]);
        break;
    case S_ASSIGN: resolve_assign(r, s); break;
    case S_BLOCK:
        resolve_life_ref(r, &s->life);
        for (int i = 0; i < s->body.len; i++) {
            ZStmt *in = s->body.items[i];
            if (in->kind == S_ASSIGN) {
                in->life = s->life;
                for (int k = 0; k < in->targets.len; k++) resolve_target(r, in->targets.items[k]);
                resolve_expr(r, in->expr);
                in->is_action = in->expr && in->expr->kind == E_CALL && in->expr->decl &&
                                in->expr->decl->kind == D_ACTION;
            } else {
                resolve_stmt(r, in);
            }
        }
        break;
    case S_IF:
    case S_WHILE:
        s->construct = ++r->n_ctl;
        resolve_life_ref(r, &s->life);
        resolve_expr(r, s->expr);
        resolve_stmts(r, &s->body);
        resolve_stmts(r, &s->els);
        break;
    case S_SKIP: resolve_life_ref(r, &s->life); break;
    case S_PAR:
        s->construct = ++r->n_par;
        for (int i = 0; i < s->branches.len; i++) {
            ZBranch *b = s->branches.items[i];
            resolve_stmts(r, &b->body);
        }
        break;
    case S_COREGION: resolve_stmts(r, &s->body); break;
    case S_RETURN:
        for (int i = 0; i < s->items.len; i++) {
            ZReturnItem *it = s->items.items[i];
            resolve_expr(r, it->value);
            resolve_life_ref(r, &it->at);
        }
        break;
    default: break;
    }
}

static void resolve_stmts(R *r, ZVec *body)
{
    for (int i = 0; i < body->len; i++) resolve_stmt(r, body->items[i]);
}

/* A `return` anywhere but as the last statement of the workflow body. */
static void misplaced_returns(R *r, ZVec *body, bool top)
{
    for (int i = 0; i < body->len; i++) {
        ZStmt *s = body->items[i];
        if (s->kind == S_RETURN && !(top && i == body->len - 1))
            zd_error(r->d, s->span, "`return` must be the last statement of the workflow");
        misplaced_returns(r, &s->body, false);
        misplaced_returns(r, &s->els, false);
        for (int k = 0; k < s->branches.len; k++) {
            ZBranch *b = s->branches.items[k];
            misplaced_returns(r, &b->body, false);
        }
    }
}

/* ---- declarations ------------------------------------------------------- */

static void declare_value(R *r, ZDecl *d, ZNameKind k)
{
    Sym *s = declare(r, &r->vals, d->name, d->name_span, za_name_kind_name(k));
    if (!s) return;
    s->kind = k;
    s->decl = d;
}

static void collect(R *r, ZDecl *d)
{
    d->index = r->counts[d->kind]++;
    Sym *s;
    switch (d->kind) {
    case D_LIFELINE:
        if (d->name && strlen(d->name) > ZV_LIFELINE_NAME_MAX)
            zd_error(r->d, d->name_span,
                     "lifeline name too long (%zu bytes; at most %d): it names executables, "
                     "sockets and subjects",
                     strlen(d->name), ZV_LIFELINE_NAME_MAX);
        if ((s = declare(r, &r->lifes, d->name, d->name_span, "lifeline"))) s->decl = d;
        zu_vec_push(r->a, &r->p->lifelines, d);
        d->index = r->p->lifelines.len - 1;
        break;
    case D_CONST: declare_value(r, d, NAME_CONST); break;
    case D_VAR:
        declare_value(r, d, NAME_VAR);
        zu_vec_push(r->a, &r->p->vars, d);
        d->index = r->p->vars.len - 1;
        break;
    case D_GUARD: declare_value(r, d, NAME_GUARD); break;
    case D_ENUM: {
        if ((s = declare(r, &r->types, d->name, d->name_span, "enum"))) s->decl = d;
        ZType *t = za_type(r->a, TY_ENUM, d->name_span);
        t->name = d->name;
        t->enum_decl = d;
        d->type = t;
        for (int i = 0; i < d->members.len; i++) {
            ZParam *m = d->members.items[i];
            Sym *ms = declare(r, &r->vals, m->name, m->span, "enum member");
            if (!ms) continue;
            ms->kind = NAME_MEMBER;
            ms->decl = d;
            ms->member = i;
        }
        break;
    }
    case D_ACTION:
        if (d->name && za_builtin_lookup(d->name) != BI_NONE) {
            zd_error(r->d, d->name_span, "action `%s` has the name of a builtin function", d->name);
            break;
        }
        if ((s = declare(r, &r->acts, d->name, d->name_span, "action"))) s->decl = d;
        break;
    case D_FRAGMENT:
        /* expanded already; its name is taken like an action's */
        if ((s = declare(r, &r->acts, d->name, d->name_span, "fragment"))) s->decl = d;
        break;
    case D_STORE:
        if ((s = declare(r, &r->stores, d->name, d->name_span, "store"))) s->decl = d;
        zu_vec_push(r->a, &r->p->stores, d);
        break;
    case D_WORKFLOW:
        if (d->name && strlen(d->name) > ZV_WORKFLOW_NAME_MAX)
            zd_error(r->d, d->name_span,
                     "workflow name too long (%zu bytes; at most %d): it names executables",
                     strlen(d->name), ZV_WORKFLOW_NAME_MAX);
        if ((s = declare(r, &r->wfs, d->name, d->name_span, "workflow"))) s->decl = d;
        zu_vec_push(r->a, &r->p->workflows, d);
        break;
    default: break;
    }
}

/* Reports the second of two equal names in a ZParam list. */
static void unique_params(R *r, const ZVec *ps, const char *what)
{
    for (int i = 0; i < ps->len; i++) {
        ZParam *x = ps->items[i];
        if (!x->name) continue;
        for (int j = 0; j < i; j++) {
            ZParam *y = ps->items[j];
            if (y->name && strcmp(x->name, y->name) == 0) {
                zd_error(r->d, x->span, "duplicate %s `%s`", what, x->name);
                zd_note(r->d, y->span, "previous declaration of `%s` here", x->name);
                break;
            }
        }
    }
}

static void resolve_signature(R *r, ZDecl *d)
{
    for (int i = 0; i < d->params.len; i++) resolve_type(r, ((ZParam *)d->params.items[i])->type);
    for (int i = 0; i < d->results.len; i++) resolve_type(r, ((ZParam *)d->results.items[i])->type);
    if (d->kind == D_ACTION) unique_params(r, &d->params, "parameter");
    unique_params(r, &d->results, "output");
}

/* `x: T @ A` initialises the variable x, declaring it when needed. */
static void resolve_inputs(R *r, ZDecl *wf)
{
    for (int i = 0; i < wf->params.len; i++) {
        ZParam *in = wf->params.items[i];
        if (!in->name) continue;
        ZParam *dup = NULL;
        for (int j = 0; j < i && !dup; j++) {
            ZParam *o = wf->params.items[j];
            if (o->name && strcmp(o->name, in->name) == 0) dup = o;
        }
        Sym *s = tab_get(&r->vals, in->name);
        if (dup) {
            zd_error(r->d, in->span, "duplicate input `%s`", in->name);
            zd_note(r->d, dup->span, "previous declaration of `%s` here", in->name);
        } else if (s && s->kind != NAME_VAR) {
            zd_error(r->d, in->span, "input `%s` clashes with %s `%s`", in->name,
                     za_name_kind_name(s->kind), in->name);
            zd_note(r->d, s->span, "previous declaration of `%s` here", in->name);
        }
        in->owner_index = resolve_lifeline(r, in->owner, in->owner_span);
        if (dup || (s && s->kind != NAME_VAR)) continue;
        if (!s) {
            ZDecl *v = za_decl(r->a, D_VAR, in->span);
            v->name = in->name;
            v->name_span = in->span;
            v->type = in->type;
            zu_vec_push(r->a, &r->p->vars, v);
            v->index = r->p->vars.len - 1;
            s = declare(r, &r->vals, v->name, v->name_span, "variable");
            s->kind = NAME_VAR;
            s->decl = v;
        }
        in->var = s->decl;
    }
}

static bool key_is(const ZProp *pr, ZPropKey k) { return strcmp(pr->key, za_prop_name(k)) == 0; }

static void resolve_props(R *r, ZDecl *d)
{
    for (int i = 0; i < d->props.len; i++) {
        ZProp *pr = d->props.items[i];
        if (!pr->key || !pr->value) continue;
        /* keyword-valued properties and prompts (string literals) are read
         * by the checker */
        if (key_is(pr, PROP_PARSE) || key_is(pr, PROP_KIND)) continue;
        /* a planner's vocabulary: its actions, by name (the checker says
         * what is not one); its workers are no lifelines of this program */
        if (key_is(pr, PROP_ACTIONS)) {
            ZExpr *v = pr->value;
            int n = v->kind == E_TUPLE ? v->args.len : 1;
            for (int k = 0; k < n; k++) {
                ZExpr *e = v->kind == E_TUPLE ? v->args.items[k] : v;
                ZDecl *x = e->kind == E_NAME && e->name ? zr_lookup(r->p, e->name) : NULL;
                if (x && x->kind == D_ACTION) e->decl = x;
            }
            continue;
        }
        if (key_is(pr, PROP_RETRIES) && pr->value->kind == E_NAME && pr->value->name &&
            strcmp(pr->value->name, ZV_RETRIES_FOREVER) == 0)
            continue;
        if (key_is(pr, PROP_FALLBACK) || key_is(pr, PROP_MODEL) || key_is(pr, PROP_TEMPERATURE) ||
            key_is(pr, PROP_RETRIES))
            resolve_expr(r, pr->value);
    }
}

/* ---- recursion among pure actions and named guards ---------------------- */

/* One depth-first walk over the uses among guards and pure actions finds
 * cycles and bounds how deep the later passes recurse: they look through
 * a named guard wherever it is used (check.c, guards.c), so a chain of
 * guards each using the next is as deep as the chain, whatever its text.
 * Two limits (ZR_MAX_GUARD_DEPTH): the walk itself stops at a chain of
 * that many declarations, and a guard's formula with every guard it uses
 * written out (its expanded depth) may not be deeper.  The compiler's
 * passes run on a stack that holds such depths (pipeline.c). */
typedef struct Cyc {
    R *r;
    ZDecl **stack;
    int depth;
    unsigned char *act_color, *guard_color; /* 0 new, 1 on stack, 2 done */
    int *guard_depth;                       /* expanded depth, at most the limit + 1 */
} Cyc;

static void visit_decl(Cyc *c, ZDecl *d);

static unsigned char *color_of(Cyc *c, const ZDecl *d)
{
    return d->kind == D_GUARD ? &c->guard_color[d->index] : &c->act_color[d->index];
}

static void report_cycle(Cyc *c, ZDecl *to, ZSpan at)
{
    int k = c->depth - 1;
    while (k > 0 && c->stack[k] != to) k--;
    ZBuf b = {0};
    for (int i = k; i < c->depth; i++) zu_buf_printf(&b, "`%s` -> ", c->stack[i]->name);
    zu_buf_printf(&b, "`%s`", to->name);
    if (to->kind == D_GUARD)
        zd_error(c->r->d, at, "guard `%s` refers to itself: %s", to->name, b.data);
    else
        zd_error(c->r->d, at, "recursion among pure actions: %s", b.data);
    zu_buf_free(&b);
}

/* The expanded depth of e (named guards written out; a pure action's body
 * is a function of its own and does not count), at most the limit + 1.
 * *deep: a guard it uses is already too deep (reported there). */
static int visit_edges(Cyc *c, ZExpr *e, bool *deep)
{
    if (!e) return 0;
    ZDecl *to = NULL;
    ZSpan at = e->span;
    if (e->kind == E_CALL && e->decl && e->decl->kind == D_ACTION && e->decl->action == ACT_PURE &&
        e->decl->expr) {
        to = e->decl;
        at = e->name_span;
    } else if (e->kind == E_NAME && e->name_kind == NAME_GUARD && e->decl) {
        to = e->decl;
    }
    int used = 0; /* the expanded depth of the guard `to` */
    if (to) {
        unsigned char *col = color_of(c, to);
        if (*col == 1) {
            report_cycle(c, to, at);
        } else if (*col == 0 && c->depth >= ZR_MAX_GUARD_DEPTH) {
            zd_error(c->r->d, at,
                     "`%s` starts a chain of more than %d guards and pure actions, each using "
                     "the next (the limit is %d)",
                     to->name, ZR_MAX_GUARD_DEPTH, ZR_MAX_GUARD_DEPTH);
            *deep = true;
        } else if (*col == 0) {
            visit_decl(c, to);
        }
        if (to->kind == D_GUARD && *col == 2) {
            used = c->guard_depth[to->index];
            if (used > ZR_MAX_GUARD_DEPTH) *deep = true;
        }
    }
    int d = visit_edges(c, e->a, deep);
    int x = visit_edges(c, e->b, deep);
    if (x > d) d = x;
    x = visit_edges(c, e->c, deep);
    if (x > d) d = x;
    for (int i = 0; i < e->args.len; i++) {
        x = visit_edges(c, e->args.items[i], deep);
        if (x > d) d = x;
    }
    d = d + 1 > used ? d + 1 : used;
    return d > ZR_MAX_GUARD_DEPTH ? ZR_MAX_GUARD_DEPTH + 1 : d;
}

static void visit_decl(Cyc *c, ZDecl *d)
{
    *color_of(c, d) = 1;
    c->stack[c->depth++] = d;
    bool deep = false;
    int depth = visit_edges(c, d->expr, &deep);
    c->depth--;
    *color_of(c, d) = 2;
    if (d->kind != D_GUARD) return;
    c->guard_depth[d->index] = depth;
    if (depth > ZR_MAX_GUARD_DEPTH && !deep)
        zd_error(c->r->d, d->name_span,
                 "guard `%s` is nested too deeply: with the guards it uses written out it is more "
                 "than %d levels deep (the limit is %d)",
                 d->name, ZR_MAX_GUARD_DEPTH, ZR_MAX_GUARD_DEPTH);
}

static void check_cycles(R *r)
{
    Cyc c = {r, NULL, 0, NULL, NULL, NULL};
    int n = r->p->decls.len + 1;
    c.stack = zu_xcalloc((size_t)n, sizeof *c.stack);
    c.act_color = zu_xcalloc((size_t)r->counts[D_ACTION] + 1, 1);
    c.guard_color = zu_xcalloc((size_t)r->counts[D_GUARD] + 1, 1);
    c.guard_depth = zu_xcalloc((size_t)r->counts[D_GUARD] + 1, sizeof *c.guard_depth);
    for (int i = 0; i < r->p->decls.len; i++) {
        ZDecl *d = r->p->decls.items[i];
        bool node = d->kind == D_GUARD || (d->kind == D_ACTION && d->action == ACT_PURE);
        if (node && d->expr && *color_of(&c, d) == 0) visit_decl(&c, d);
    }
    free(c.stack);
    free(c.act_color);
    free(c.guard_color);
    free(c.guard_depth);
}

/* ---- driver ------------------------------------------------------------- */

bool zr_resolve(ZArena *a, ZProgram *p, ZDiag *d)
{
    int errors = d->errors;
    R r = {0};
    r.a = a;
    r.p = p;
    r.d = d;
    p->lifelines = (ZVec){0};
    p->vars = (ZVec){0};
    p->workflows = (ZVec){0};
    p->stores = (ZVec){0};

    for (int i = 0; i < p->decls.len; i++) {
        ZDecl *x = p->decls.items[i];
        if (x->name) collect(&r, x);
    }
    if (p->lifelines.len > ZJ_MAX_LIFELINES)
        zd_error(d, ((ZDecl *)p->lifelines.items[ZJ_MAX_LIFELINES])->name_span,
                 "too many lifelines (the limit is %d)", ZJ_MAX_LIFELINES);

    for (int i = 0; i < p->decls.len; i++) {
        ZDecl *x = p->decls.items[i];
        if (!x->name) continue;
        if (x->kind == D_VAR) resolve_type(&r, x->type);
        if (x->kind == D_ACTION || x->kind == D_WORKFLOW) resolve_signature(&r, x);
    }
    for (int i = 0; i < p->workflows.len; i++) resolve_inputs(&r, p->workflows.items[i]);

    for (int i = 0; i < p->decls.len; i++) {
        ZDecl *x = p->decls.items[i];
        if (!x->name) continue;
        switch (x->kind) {
        case D_CONST:
        case D_VAR:
        case D_GUARD: resolve_expr(&r, x->expr); break;
        case D_STORE: resolve_store(&r, x); break;
        case D_ACTION:
            r.pure = x;
            resolve_expr(&r, x->expr);
            r.pure = NULL;
            resolve_props(&r, x);
            break;
        case D_WORKFLOW:
            r.n_ctl = r.n_par = 0;
            resolve_stmts(&r, &x->body);
            misplaced_returns(&r, &x->body, true);
            x->ret = NULL;
            if (x->body.len && ((ZStmt *)x->body.items[x->body.len - 1])->kind == S_RETURN)
                x->ret = x->body.items[x->body.len - 1];
            break;
        default: break;
        }
    }
    check_cycles(&r);
    return d->errors == errors;
}

/* ---- lookups ------------------------------------------------------------ */

ZDecl *zr_lookup(const ZProgram *p, const char *name)
{
    if (!name) return NULL;
    for (int i = 0; i < p->decls.len; i++) {
        ZDecl *d = p->decls.items[i];
        if (d->name && strcmp(d->name, name) == 0) return d;
    }
    for (int i = 0; i < p->vars.len; i++) {
        ZDecl *d = p->vars.items[i];
        if (d->name && strcmp(d->name, name) == 0) return d;
    }
    return NULL;
}

ZDecl *zr_lifeline(const ZProgram *p, const char *name)
{
    if (!name) return NULL;
    for (int i = 0; i < p->lifelines.len; i++) {
        ZDecl *d = p->lifelines.items[i];
        if (d->name && strcmp(d->name, name) == 0) return d;
    }
    return NULL;
}

static void count_constructs(const ZVec *body, int *ctl, int *par)
{
    for (int i = 0; i < body->len; i++) {
        const ZStmt *s = body->items[i];
        if ((s->kind == S_IF || s->kind == S_WHILE) && s->construct > *ctl) *ctl = s->construct;
        if (s->kind == S_PAR && s->construct > *par) *par = s->construct;
        count_constructs(&s->body, ctl, par);
        count_constructs(&s->els, ctl, par);
        for (int k = 0; k < s->branches.len; k++) {
            const ZBranch *b = s->branches.items[k];
            count_constructs(&b->body, ctl, par);
        }
    }
}

ZDecl *zr_select_workflow(ZProgram *p, const char *name, ZDiag *d)
{
    static const ZSpan top = {1, 1, 1, 1, 0, 0};
    ZDecl *wf = NULL;
    if (p->workflows.len == 0) {
        zd_error(d, top, "no workflow in this file");
        return NULL;
    }
    if (name) {
        for (int i = 0; i < p->workflows.len && !wf; i++) {
            ZDecl *w = p->workflows.items[i];
            if (w->name && strcmp(w->name, name) == 0) wf = w;
        }
        if (!wf) {
            zd_error(d, top, "unknown workflow `%s`", name);
            ZBuf b = {0};
            for (int i = 0; i < p->workflows.len; i++) {
                ZDecl *w = p->workflows.items[i];
                zu_buf_printf(&b, "%s`%s`", i ? ", " : "", w->name);
            }
            zd_note(d, top, "the workflows in this file are %s", b.data);
            zu_buf_free(&b);
            return NULL;
        }
    } else {
        wf = p->workflows.items[p->workflows.len - 1];
    }
    p->n_controls = p->n_pars = 0;
    count_constructs(&wf->body, &p->n_controls, &p->n_pars);
    return wf;
}
