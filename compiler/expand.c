/* expand.c — fragments (language reference §3.3, §4).
 *
 * A fragment is a named piece of a global workflow with parameters of
 * three kinds: lifelines (`W: lifeline`), variables of the user's
 * (`x: T`, passed by name: the fragment reads and writes the caller's
 * variable) and constants (`const n: T`, a literal or a named constant).
 * It may declare variables of its own (`var y: T;`).
 *
 * zx_expand works in two steps.
 *
 *  1. Every fragment is checked where it is declared, once, used or not:
 *     its parameters (unique, known types), its variables, every name its
 *     body uses (a parameter, one of its variables, or a constant, enum
 *     member, guard or action of the program), the arguments of the
 *     fragments it uses, and the absence of recursion among fragments.
 *     Hygiene is a rule here: a fragment reaches the program's lifelines
 *     and variables only through its parameters, so naming one of them
 *     directly is an error ("capture"), and inside the fragment its
 *     parameters and variables hide the program's declarations of the same
 *     names.
 *  2. Every use in a workflow is checked against the fragment's parameters
 *     (arity, kind and type of each argument) and replaced by a copy of
 *     the fragment's body: lifeline and variable parameters renamed to the
 *     arguments, constant parameters replaced by copies of theirs, the
 *     fragment's own variables renamed to fresh program variables named
 *     "fragment#N.name" (N counts expansions), which no source can name, so
 *     that neither side can capture the other's names.  Uses inside the
 *     copy expand in turn.  Every span of a copy records its expansion
 *     (ZSpan.exp), so that the later passes' diagnostics point at the
 *     fragment's line and, through diag.c, at every use that led there.
 *
 * Types and definedness are checked after expansion, by the checker, on
 * the copies: a fragment's body is only meaningful with its arguments (a
 * variable parameter may be defined before the use or not). */
#include "zgc.h"

#include <string.h>

typedef struct X {
    ZArena *a;
    ZProgram *p;
    ZDiag *d;
    ZVec *xs;
    /* the program's names, by interned pointer */
    ZIMap frags, lifes, vars, inputs, values, enums, acts;
    long stmts;   /* statements made by expansions */
    bool too_big; /* ZX_MAX_STMTS reached (reported once) */
    int counter;  /* expansions so far: the N of fresh names */
    ZDecl *frag;  /* the fragment being checked, or NULL */
} X;

static uint64_t key(const char *name) { return (uint64_t)(uintptr_t)name; }

static void *get(const ZIMap *m, const char *name)
{
    uintptr_t *v = name ? zu_imap_get(m, key(name)) : NULL;
    return v ? (void *)*v : NULL;
}

static void put(ZIMap *m, const char *name, void *val)
{
    bool added;
    uintptr_t *v = zu_imap_put(m, key(name), &added);
    if (added)
        *v = (uintptr_t)val; /* the first declaration wins; the
                                       resolver reports duplicates */
}

static void collect(X *x)
{
    for (int i = 0; i < x->p->decls.len; i++) {
        ZDecl *d = x->p->decls.items[i];
        if (!d->name) continue;
        switch (d->kind) {
        case D_LIFELINE: put(&x->lifes, d->name, d); break;
        case D_VAR: put(&x->vars, d->name, d); break;
        case D_CONST:
        case D_GUARD: put(&x->values, d->name, d); break;
        case D_ENUM:
            put(&x->enums, d->name, d);
            for (int k = 0; k < d->members.len; k++)
                put(&x->values, ((ZParam *)d->members.items[k])->name, d);
            break;
        case D_ACTION: put(&x->acts, d->name, d); break;
        case D_FRAGMENT:
            if (get(&x->frags, d->name)) break; /* a duplicate: the resolver says so */
            put(&x->frags, d->name, d);
            zu_vec_push(x->a, &x->p->fragments, d);
            break;
        case D_WORKFLOW:
            /* an input `x: T @ A` declares the variable x */
            for (int k = 0; k < d->params.len; k++) {
                ZParam *in = d->params.items[k];
                if (in->name) put(&x->inputs, in->name, in);
            }
            break;
        default: break;
        }
    }
}

/* ---- names inside a fragment --------------------------------------------- */

/* A name of the fragment's own: a parameter (index >= 0, *param set) or one
 * of its variables (*local set). */
static bool own(const ZDecl *f, const char *name, ZParam **param, ZDecl **local, int *index)
{
    *param = NULL;
    *local = NULL;
    if (!name) return false;
    for (int i = 0; i < f->params.len; i++) {
        ZParam *p = f->params.items[i];
        if (p->name && !strcmp(p->name, name)) {
            *param = p;
            if (index) *index = i;
            return true;
        }
    }
    for (int i = 0; i < f->locals.len; i++) {
        ZDecl *v = f->locals.items[i];
        if (v->name && !strcmp(v->name, name)) {
            *local = v;
            if (index) *index = i;
            return true;
        }
    }
    return false;
}

static const char *fkind_name(ZFragParamKind k)
{
    switch (k) {
    case FP_LIFELINE: return "lifeline parameter";
    case FP_VAR: return "variable parameter";
    case FP_CONST: return "constant parameter";
    default: return "parameter";
    }
}

static void capture_var(X *x, const char *name, ZSpan at)
{
    zd_error(x->d, at,
             "fragment `%s` uses the program's variable `%s`: a fragment reaches variables only "
             "through its parameters",
             x->frag->name, name);
}

/* A lifeline named in the fragment being checked. */
static void def_life(X *x, const char *name, ZSpan at)
{
    ZParam *p;
    ZDecl *v;
    if (!name) return;
    if (own(x->frag, name, &p, &v, NULL)) {
        if (p && p->fkind == FP_LIFELINE) return;
        zd_error(x->d, at, "`%s` is a %s of `%s`, not a lifeline", name,
                 p ? fkind_name(p->fkind) : "variable", x->frag->name);
    } else if (get(&x->lifes, name)) {
        zd_error(x->d, at,
                 "fragment `%s` names the program's lifeline `%s`: a fragment reaches lifelines "
                 "only through its parameters",
                 x->frag->name, name);
    } else {
        zd_error(x->d, at, "unknown lifeline `%s`", name);
    }
}

/* A variable read or written by name (a target, `@B.x`). */
static void def_var(X *x, const char *name, ZSpan at, bool written)
{
    ZParam *p;
    ZDecl *v;
    if (!name) return;
    if (own(x->frag, name, &p, &v, NULL)) {
        if (v || p->fkind == FP_VAR) return;
        if (p->fkind == FP_CONST && written)
            zd_error(x->d, at, "cannot assign to the constant parameter `%s`", name);
        else if (p->fkind == FP_LIFELINE)
            zd_error(x->d, at, "`%s` is a lifeline parameter of `%s`, not a variable", name,
                     x->frag->name);
        else
            zd_error(x->d, at, "`%s` is a constant parameter of `%s`, not a variable", name,
                     x->frag->name);
    } else if (get(&x->vars, name) || get(&x->inputs, name)) {
        capture_var(x, name, at);
    } else if (written || !get(&x->values, name)) {
        zd_error(x->d, at, "unknown variable `%s`", name);
    }
}

static void def_expr(X *x, const ZExpr *e)
{
    if (!e) return;
    ZParam *p;
    ZDecl *v;
    switch (e->kind) {
    case E_NAME:
        if (own(x->frag, e->name, &p, &v, NULL)) {
            if (p && p->fkind == FP_LIFELINE)
                zd_error(x->d, e->span, "`%s` is a lifeline parameter of `%s`, not a value",
                         e->name, x->frag->name);
        } else if (get(&x->vars, e->name) || get(&x->inputs, e->name)) {
            capture_var(x, e->name, e->span);
        } else if (!get(&x->values, e->name)) {
            zd_error(x->d, e->span, "unknown name `%s`", e->name);
        }
        return;
    case E_AT_VAR:
        def_life(x, e->lifeline, e->lifeline_span);
        def_var(x, e->name, e->name_span, false);
        return;
    case E_AT:
    case E_SEEN: def_life(x, e->lifeline, e->lifeline_span); break;
    default: break;
    }
    def_expr(x, e->a);
    def_expr(x, e->b);
    def_expr(x, e->c);
    for (int i = 0; i < e->args.len; i++) def_expr(x, e->args.items[i]);
}

static void check_use(X *x, const ZStmt *s);

static void def_stmts(X *x, const ZVec *v);

static void def_stmt(X *x, const ZStmt *s)
{
    switch (s->kind) {
    case S_MSG:
        def_life(x, s->life.name, s->life.span);
        def_life(x, s->to.name, s->to.span);
        for (int i = 0; i < s->args.len; i++) def_expr(x, s->args.items[i]);
        for (int i = 0; i < s->params.len; i++) {
            const ZExpr *b = s->params.items[i];
            /* a receive binds variables (or matches a constant) */
            ZParam *p;
            ZDecl *v;
            if (b->kind == E_NAME && own(x->frag, b->name, &p, &v, NULL) && p &&
                p->fkind == FP_CONST)
                continue;
            if (b->kind == E_NAME)
                def_var(x, b->name, b->span, false);
            else
                def_expr(x, b);
        }
        break;
    case S_ASSIGN:
        def_life(x, s->life.name, s->life.span);
        for (int i = 0; i < s->targets.len; i++) {
            const ZTarget *t = s->targets.items[i];
            def_var(x, t->name, t->span, true);
        }
        def_expr(x, s->expr);
        break;
    case S_BLOCK:
        def_life(x, s->life.name, s->life.span);
        for (int i = 0; i < s->body.len; i++) {
            const ZStmt *b = s->body.items[i];
            for (int k = 0; k < b->targets.len; k++) {
                const ZTarget *t = b->targets.items[k];
                def_var(x, t->name, t->span, true);
            }
            def_expr(x, b->expr);
        }
        break;
    case S_IF:
    case S_WHILE:
        def_life(x, s->life.name, s->life.span);
        def_expr(x, s->expr);
        def_stmts(x, &s->body);
        def_stmts(x, &s->els);
        break;
    case S_SKIP: def_life(x, s->life.name, s->life.span); break;
    case S_PAR:
        for (int i = 0; i < s->branches.len; i++)
            def_stmts(x, &((ZBranch *)s->branches.items[i])->body);
        break;
    case S_COREGION: def_stmts(x, &s->body); break;
    case S_RETURN:
        zd_error(x->d, s->span,
                 "a fragment cannot `return`: the workflow that uses it returns its result");
        break;
    case S_USE: check_use(x, s); break;
    case S_ATOMIC:
        zd_error(x->d, s->span,
                 "a fragment cannot hold a store operation: write the atomic block in the "
                 "workflow");
        break;
    case S_READ:
    case S_WRITE:
    case S__COUNT: break;
    }
}

static void def_stmts(X *x, const ZVec *v)
{
    for (int i = 0; i < v->len; i++) def_stmt(x, v->items[i]);
}

static bool known_type(X *x, const ZType *t)
{
    if (!t || t->kind != TY_NAMED) return true;
    if (get(&x->enums, t->name)) return true;
    zd_error(x->d, t->span, "unknown type `%s`", t->name ? t->name : "?");
    return false;
}

static void def_fragment(X *x, ZDecl *f)
{
    x->frag = f;
    for (int i = 0; i < f->params.len; i++) {
        ZParam *p = f->params.items[i];
        for (int j = 0; j < i; j++) {
            ZParam *q = f->params.items[j];
            if (!strcmp(p->name, q->name)) {
                zd_error(x->d, p->span, "duplicate parameter `%s`", p->name);
                zd_note(x->d, q->span, "previous declaration of `%s` here", p->name);
                break;
            }
        }
        known_type(x, p->type);
    }
    for (int i = 0; i < f->locals.len; i++) {
        ZDecl *v = f->locals.items[i];
        ZParam *p;
        ZDecl *w;
        own(f, v->name, &p, &w, NULL);
        if (p) {
            zd_error(x->d, v->name_span, "variable `%s` has the name of a parameter of `%s`",
                     v->name, f->name);
            zd_note(x->d, p->span, "the parameter is declared here");
        } else if (w != v) {
            zd_error(x->d, v->name_span, "duplicate variable `%s`", v->name);
            zd_note(x->d, w->name_span, "previous declaration of `%s` here", v->name);
        }
        known_type(x, v->type);
    }
    def_stmts(x, &f->body);
    x->frag = NULL;
}

/* ---- uses ---------------------------------------------------------------- */

/* What a name means where a use stands: in x->frag's body, or in a
 * workflow (x->frag NULL). */
typedef enum { K_NONE, K_LIFELINE, K_VAR, K_CONST } Kind;

static Kind kind_of(X *x, const char *name, const ZType **type)
{
    *type = NULL;
    if (!name) return K_NONE;
    if (x->frag) {
        ZParam *p;
        ZDecl *v;
        if (own(x->frag, name, &p, &v, NULL)) {
            if (v) {
                *type = v->type;
                return K_VAR;
            }
            *type = p->type;
            return p->fkind == FP_LIFELINE ? K_LIFELINE : p->fkind == FP_VAR ? K_VAR : K_CONST;
        }
        /* the program's lifelines and variables are not the fragment's */
        if (get(&x->lifes, name) || get(&x->vars, name) || get(&x->inputs, name)) return K_NONE;
    }
    if (get(&x->lifes, name)) return K_LIFELINE;
    ZDecl *v = get(&x->vars, name);
    if (v) {
        *type = v->type;
        return K_VAR;
    }
    ZParam *in = get(&x->inputs, name);
    if (in) {
        *type = in->type;
        return K_VAR;
    }
    ZDecl *c = get(&x->values, name);
    if (c && c->kind == D_ENUM) { /* a member: of the enum's type */
        ZType *t = za_type(x->a, TY_NAMED, c->name_span);
        t->name = c->name;
        *type = t;
        return K_CONST;
    }
    if (c && c->kind == D_CONST) return K_CONST; /* typed by the checker */
    return K_NONE;
}

/* A named type's rendering for messages. */
static const char *tname(X *x, const ZType *t) { return t ? za_type_name(x->a, t) : "?"; }

static bool same_type(const ZType *a, const ZType *b)
{
    if (!a || !b) return true; /* unknown: the checker decides */
    if (a->kind == TY_NAMED && b->kind == TY_NAMED) return !strcmp(a->name, b->name);
    return za_type_eq(a, b);
}

/* The type of a literal argument, or NULL. */
static ZType *literal_type(X *x, const ZExpr *e)
{
    ZTypeKind k;
    switch (e->kind) {
    case E_INT: k = TY_INT; break;
    case E_FLOAT: k = TY_FLOAT; break;
    case E_STR: k = TY_STR; break;
    case E_BOOL: k = TY_BOOL; break;
    case E_NULL: k = TY_JSON; break;
    default: return NULL;
    }
    return za_type(x->a, k, e->span);
}

/* Checks a use's arguments against the fragment's parameters; false (after
 * reporting) when it cannot be expanded. */
static bool use_ok(X *x, const ZStmt *s, ZDecl **callee)
{
    ZDecl *f = get(&x->frags, s->life.name);
    *callee = f;
    if (!f) {
        if (get(&x->acts, s->life.name))
            zd_error(
                x->d, s->life.span,
                "`%s` is an action, not a fragment: an action runs on a lifeline (`A: %s(…);`)",
                s->life.name, s->life.name);
        else if (get(&x->lifes, s->life.name))
            zd_error(x->d, s->span,
                     "`%s` is a lifeline, not a fragment: a message is `%s(…) -> B(…);`",
                     s->life.name, s->life.name);
        else
            zd_error(x->d, s->life.span, "unknown fragment `%s`", s->life.name);
        return false;
    }
    if (s->args.len != f->params.len) {
        zd_error(x->d, s->span, "fragment `%s` takes %d argument%s, not %d", f->name, f->params.len,
                 f->params.len == 1 ? "" : "s", s->args.len);
        zd_note(x->d, f->name_span, "`%s` is declared here", f->name);
        return false;
    }
    bool ok = true;
    for (int i = 0; i < s->args.len; i++) {
        const ZExpr *e = s->args.items[i];
        const ZParam *p = f->params.items[i];
        const ZType *t = NULL;
        Kind k = e->kind == E_NAME ? kind_of(x, e->name, &t) : K_NONE;
        switch (p->fkind) {
        case FP_LIFELINE:
            if (k == K_LIFELINE) continue;
            zd_error(x->d, e->span, "argument %d of `%s` must be a lifeline (parameter `%s`)",
                     i + 1, f->name, p->name);
            break;
        case FP_VAR:
            if (k == K_VAR && same_type(t, p->type)) continue;
            if (k == K_VAR)
                zd_error(x->d, e->span, "argument %d of `%s` has type %s; parameter `%s` is %s",
                         i + 1, f->name, tname(x, t), p->name, tname(x, p->type));
            else
                zd_error(x->d, e->span,
                         "argument %d of `%s` must be a variable of type %s (parameter `%s`)",
                         i + 1, f->name, tname(x, p->type), p->name);
            break;
        case FP_CONST: {
            const ZType *lt = literal_type(x, e);
            if (lt) {
                if (same_type(lt, p->type)) continue;
                zd_error(x->d, e->span, "argument %d of `%s` has type %s; parameter `%s` is %s",
                         i + 1, f->name, tname(x, lt), p->name, tname(x, p->type));
                break;
            }
            if (k == K_CONST) {
                if (t && !same_type(t, p->type)) {
                    zd_error(x->d, e->span, "argument %d of `%s` has type %s; parameter `%s` is %s",
                             i + 1, f->name, tname(x, t), p->name, tname(x, p->type));
                    break;
                }
                continue;
            }
            zd_error(x->d, e->span,
                     "argument %d of `%s` must be a literal or a named constant (parameter `const "
                     "%s`)",
                     i + 1, f->name, p->name);
            break;
        }
        default: ZU_UNREACHABLE();
        }
        ok = false;
    }
    return ok;
}

static void check_use(X *x, const ZStmt *s)
{
    ZDecl *f;
    use_ok(x, s, &f);
}

/* ---- recursion ----------------------------------------------------------- */

/* Depth-first over the uses in fragment bodies: 1 while a fragment is on
 * the path, 2 once it is done. */
static bool uses_cycle(X *x, ZDecl *f, ZIMap *state, ZVec *path);

static bool stmts_cycle(X *x, const ZVec *v, ZIMap *state, ZVec *path)
{
    for (int i = 0; i < v->len; i++) {
        const ZStmt *s = v->items[i];
        switch (s->kind) {
        case S_USE: {
            ZDecl *g = get(&x->frags, s->life.name);
            if (!g) break;
            uintptr_t *st = zu_imap_get(state, key(g->name));
            if (st && *st == 1) {
                ZBuf b = {0};
                int k = 0;
                while (((ZDecl *)path->items[k]) != g) k++;
                for (int j = k; j < path->len; j++)
                    zu_buf_printf(&b, "%s -> ", ((ZDecl *)path->items[j])->name);
                zu_buf_puts(&b, g->name);
                zd_error(x->d, s->span, "fragment `%s` uses itself: %s", g->name, b.data);
                zu_buf_free(&b);
                return true;
            }
            if (!st && uses_cycle(x, g, state, path)) return true;
            break;
        }
        case S_IF:
        case S_WHILE:
            if (stmts_cycle(x, &s->body, state, path) || stmts_cycle(x, &s->els, state, path))
                return true;
            break;
        case S_PAR:
            for (int k = 0; k < s->branches.len; k++)
                if (stmts_cycle(x, &((ZBranch *)s->branches.items[k])->body, state, path))
                    return true;
            break;
        case S_COREGION:
            if (stmts_cycle(x, &s->body, state, path)) return true;
            break;
        default: break;
        }
    }
    return false;
}

static bool uses_cycle(X *x, ZDecl *f, ZIMap *state, ZVec *path)
{
    *zu_imap_put(state, key(f->name), NULL) = 1;
    zu_vec_push(x->a, path, f);
    bool cyc = stmts_cycle(x, &f->body, state, path);
    path->len--;
    *zu_imap_put(state, key(f->name), NULL) = 2;
    return cyc;
}

/* ---- copies -------------------------------------------------------------- */

/* One expansion: the fragment, its arguments in the caller's terms, the
 * fresh names of its variables, and the expansion's number. */
typedef struct Env {
    const ZDecl *frag;
    ZExpr **args;
    const char **locals;
    int exp;
} Env;

static ZSpan mark(ZSpan s, const Env *env)
{
    s.exp = env->exp;
    return s;
}

/* The caller's name for a lifeline or variable name of the fragment. */
static const char *subst_name(const Env *env, const char *name, bool *is_const, int *arg)
{
    ZParam *p;
    ZDecl *v;
    int i;
    *is_const = false;
    *arg = -1;
    if (!env || !own(env->frag, name, &p, &v, &i)) return name;
    if (v) return env->locals[i];
    if (p->fkind == FP_CONST) {
        *is_const = true;
        *arg = i;
        return name;
    }
    return env->args[i]->name;
}

static ZExpr *copy_expr(X *x, const ZExpr *e, const Env *env);

static ZVec copy_exprs(X *x, const ZVec *v, const Env *env)
{
    ZVec out = {0};
    for (int i = 0; i < v->len; i++) zu_vec_push(x->a, &out, copy_expr(x, v->items[i], env));
    return out;
}

/* A copy of e for the expansion env (NULL: a plain copy with its spans). */
static ZExpr *copy_expr(X *x, const ZExpr *e, const Env *env)
{
    if (!e) return NULL;
    bool is_const;
    int arg;
    if (e->kind == E_NAME && env) {
        const char *n = subst_name(env, e->name, &is_const, &arg);
        if (is_const) return copy_expr(x, env->args[arg], NULL);
        ZExpr *c = za_expr(x->a, E_NAME, mark(e->span, env));
        c->name = n;
        c->name_span = mark(e->name_span, env);
        c->depth = e->depth;
        return c;
    }
    ZExpr *c = zu_alloc(x->a, sizeof *c);
    *c = *e;
    c->type = NULL;
    c->decl = NULL;
    c->name_kind = NAME_UNRESOLVED;
    c->life = -1;
    c->member = 0;
    c->builtin = BI_NONE;
    if (env) {
        c->span = mark(e->span, env);
        c->name_span = mark(e->name_span, env);
        c->lifeline_span = mark(e->lifeline_span, env);
        if (e->lifeline) c->lifeline = subst_name(env, e->lifeline, &is_const, &arg);
        if (e->kind == E_AT_VAR) c->name = subst_name(env, e->name, &is_const, &arg);
    }
    c->a = copy_expr(x, e->a, env);
    c->b = copy_expr(x, e->b, env);
    c->c = copy_expr(x, e->c, env);
    c->args = copy_exprs(x, &e->args, env);
    return c;
}

static ZLifeRef copy_life(ZLifeRef r, const Env *env)
{
    bool is_const;
    int arg;
    ZLifeRef c = {subst_name(env, r.name, &is_const, &arg), mark(r.span, env), -1};
    return c;
}

static void copy_stmts(X *x, const ZVec *v, const Env *env, ZVec *out);
static void expand_use(X *x, const ZStmt *s, const Env *outer, ZVec *out);

static void copy_stmt(X *x, const ZStmt *s, const Env *env, ZVec *out)
{
    if (x->too_big) return;
    if (s->kind == S_USE) {
        expand_use(x, s, env, out);
        return;
    }
    if (++x->stmts > ZX_MAX_STMTS) {
        x->too_big = true;
        return;
    }
    ZStmt *c = za_stmt(x->a, s->kind, mark(s->span, env));
    c->life = copy_life(s->life, env);
    c->to = copy_life(s->to, env);
    c->args = copy_exprs(x, &s->args, env);
    c->params = copy_exprs(x, &s->params, env);
    for (int i = 0; i < s->targets.len; i++) {
        const ZTarget *t = s->targets.items[i];
        ZTarget *ct = zu_alloc(x->a, sizeof *ct);
        bool is_const;
        int arg;
        ct->name = subst_name(env, t->name, &is_const, &arg);
        ct->span = mark(t->span, env);
        zu_vec_push(x->a, &c->targets, ct);
    }
    c->expr = copy_expr(x, s->expr, env);
    c->tuple_lhs = s->tuple_lhs;
    copy_stmts(x, &s->body, env, &c->body);
    if (s->kind == S_BLOCK) /* the block's assignments carry its lifeline */
        for (int i = 0; i < c->body.len; i++) ((ZStmt *)c->body.items[i])->life = c->life;
    copy_stmts(x, &s->els, env, &c->els);
    c->has_else = s->has_else;
    c->else_span = mark(s->else_span, env);
    for (int i = 0; i < s->branches.len; i++) {
        const ZBranch *b = s->branches.items[i];
        ZBranch *cb = zu_alloc(x->a, sizeof *cb);
        cb->span = mark(b->span, env);
        copy_stmts(x, &b->body, env, &cb->body);
        zu_vec_push(x->a, &c->branches, cb);
    }
    zu_vec_push(x->a, out, c);
}

static void copy_stmts(X *x, const ZVec *v, const Env *env, ZVec *out)
{
    for (int i = 0; i < v->len && !x->too_big; i++) copy_stmt(x, v->items[i], env, out);
}

/* Expands the use s (in the terms of `outer`, NULL in a workflow) into out. */
static void expand_use(X *x, const ZStmt *s, const Env *outer, ZVec *out)
{
    ZDecl *f = get(&x->frags, s->life.name);
    if (!f) ZU_ICE("a use of an unchecked fragment");
    ZExpansion *xp = zu_alloc(x->a, sizeof *xp);
    xp->fragment = f->name;
    xp->at = outer ? mark(s->span, outer) : s->span;
    zu_vec_push(x->a, x->xs, xp);
    Env env = {.frag = f, .exp = x->xs->len};
    env.args = zu_alloc(x->a, sizeof *env.args * (size_t)(s->args.len + 1));
    for (int i = 0; i < s->args.len; i++) env.args[i] = copy_expr(x, s->args.items[i], outer);
    env.locals = zu_alloc(x->a, sizeof *env.locals * (size_t)(f->locals.len + 1));
    int n = ++x->counter;
    for (int i = 0; i < f->locals.len; i++) {
        const ZDecl *v = f->locals.items[i];
        const char *fresh = zu_fmt(x->a, "%s#%d.%s", f->name, n, v->name);
        fresh = zu_intern(x->a, fresh, strlen(fresh));
        env.locals[i] = fresh;
        ZDecl *d = za_decl(x->a, D_VAR, mark(v->span, &env));
        d->name = fresh;
        d->name_span = mark(v->name_span, &env);
        d->type = za_type(x->a, v->type->kind, mark(v->type->span, &env));
        d->type->name = v->type->name;
        zu_vec_push(x->a, &x->p->decls, d);
    }
    copy_stmts(x, &f->body, &env, out);
}

/* ---- workflows ----------------------------------------------------------- */

static bool has_use(const ZVec *v)
{
    for (int i = 0; i < v->len; i++) {
        const ZStmt *s = v->items[i];
        if (s->kind == S_USE || has_use(&s->body) || has_use(&s->els)) return true;
        for (int k = 0; k < s->branches.len; k++)
            if (has_use(&((ZBranch *)s->branches.items[k])->body)) return true;
    }
    return false;
}

static void check_uses(X *x, const ZVec *v, bool *ok)
{
    for (int i = 0; i < v->len; i++) {
        const ZStmt *s = v->items[i];
        ZDecl *f;
        if (s->kind == S_USE && !use_ok(x, s, &f)) *ok = false;
        check_uses(x, &s->body, ok);
        check_uses(x, &s->els, ok);
        for (int k = 0; k < s->branches.len; k++)
            check_uses(x, &((ZBranch *)s->branches.items[k])->body, ok);
    }
}

/* The list with its uses expanded; statements without uses inside stay
 * shared with the written form. */
static ZVec expand_list(X *x, const ZVec *v)
{
    ZVec out = {0};
    for (int i = 0; i < v->len && !x->too_big; i++) {
        ZStmt *s = v->items[i];
        if (s->kind == S_USE) {
            expand_use(x, s, NULL, &out);
            if (x->too_big)
                zd_error(x->d, s->span,
                         "fragment expansion too large: more than %d statements in this program",
                         ZX_MAX_STMTS);
            continue;
        }
        bool inner = has_use(&s->body) || has_use(&s->els);
        for (int k = 0; k < s->branches.len; k++)
            if (has_use(&((ZBranch *)s->branches.items[k])->body)) inner = true;
        if (!inner) {
            zu_vec_push(x->a, &out, s);
            continue;
        }
        ZStmt *c = zu_alloc(x->a, sizeof *c);
        *c = *s;
        c->body = expand_list(x, &s->body);
        c->els = expand_list(x, &s->els);
        c->branches = (ZVec){0};
        for (int k = 0; k < s->branches.len; k++) {
            const ZBranch *b = s->branches.items[k];
            ZBranch *cb = zu_alloc(x->a, sizeof *cb);
            *cb = *b;
            cb->body = expand_list(x, &b->body);
            zu_vec_push(x->a, &c->branches, cb);
        }
        zu_vec_push(x->a, &out, c);
    }
    return out;
}

bool zx_expand(ZArena *a, ZProgram *p, ZVec *xs, ZDiag *d)
{
    X x = {.a = a, .p = p, .d = d, .xs = xs};
    int errors = d->errors;
    collect(&x);
    for (int i = 0; i < p->fragments.len; i++) def_fragment(&x, p->fragments.items[i]);
    ZIMap state = {0};
    ZVec path = {0};
    for (int i = 0; i < p->fragments.len; i++) {
        ZDecl *f = p->fragments.items[i];
        if (!zu_imap_get(&state, key(f->name))) uses_cycle(&x, f, &state, &path);
    }
    zu_imap_free(&state);
    bool any = false;
    int ndecls = p->decls.len;
    for (int i = 0; i < ndecls; i++) {
        ZDecl *w = p->decls.items[i];
        if (w->kind != D_WORKFLOW || !has_use(&w->body)) continue;
        any = true;
        bool ok = true;
        check_uses(&x, &w->body, &ok);
    }
    if (any && d->errors == errors) {
        for (int i = 0; i < ndecls && !x.too_big; i++) {
            ZDecl *w = p->decls.items[i];
            if (w->kind != D_WORKFLOW || !has_use(&w->body)) continue;
            w->written = w->body;
            w->body = expand_list(&x, &w->body);
        }
    }
    zu_imap_free(&x.frags);
    zu_imap_free(&x.lifes);
    zu_imap_free(&x.vars);
    zu_imap_free(&x.inputs);
    zu_imap_free(&x.values);
    zu_imap_free(&x.enums);
    zu_imap_free(&x.acts);
    return d->errors == errors;
}
