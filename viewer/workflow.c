/* workflow.c — the page of a workflow (viewer.h): `zgc view FILE.zg` draws
 * the global workflow's statements, `--lifeline L` one lifeline's
 * projected local program (compiler/project.c), as a chart with the same
 * page as a run.
 *
 * The data (viewer/page/viewer.js, mode "workflow") is a tree of items in
 * statement order, each with its source line:
 *   {"k":"msg","from":A,"to":B,"label":"x → y","control":TAG?}
 *   {"k":"act","l":A,"label":"y = f(x)","action":"f","akind":"llm"}
 *   {"k":"if"|"while","owner":A,"guard":"…","tag":"if#1","body":[…],"else":[…]}
 *       (a local program's recipient side: "decided":"Owner" instead of a guard)
 *   {"k":"par","branches":[[…],…]}   {"k":"coregion","body":[…]}
 *   {"k":"return","l":A,"label":"return x"}   {"k":"skip","l":A}
 * with lifelines as indices into "lifelines" (declaration order).
 */
#include "viewer.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static json_t *jstr(const char *s)
{
    json_t *j = json_string(s ? s : "");
    if (!j) j = json_string("?"); /* names and printed source are UTF-8 */
    if (!j) zu_oom();
    return j;
}

static void set(json_t *o, const char *k, json_t *v)
{
    if (!v || json_object_set_new(o, k, v) != 0) zu_oom();
}

static void push(json_t *a, json_t *v)
{
    if (!v || json_array_append_new(a, v) != 0) zu_oom();
}

static json_t *item(const char *k, int line)
{
    json_t *o = json_object();
    if (!o) zu_oom();
    set(o, "k", jstr(k));
    if (line > 0) set(o, "line", json_integer(line));
    return o;
}

static char *exprs(const ZVec *v)
{
    ZBuf b = {0};
    for (int i = 0; i < v->len; i++) {
        if (i) zu_buf_puts(&b, ", ");
        za_print_expr(&b, ZU_VEC_AT(*v, i));
    }
    if (!b.data) zu_buf_puts(&b, "");
    return b.data;
}

static char *expr_text(const ZExpr *e)
{
    ZBuf b = {0};
    if (e) za_print_expr(&b, e);
    if (!b.data) zu_buf_puts(&b, "");
    return b.data;
}

/* "x, y → p, q", or "x" when both sides print the same */
static json_t *msg_label(const ZVec *args, const ZVec *params)
{
    char *a = exprs(args), *p = exprs(params);
    ZBuf b = {0};
    zu_buf_puts(&b, a);
    if (strcmp(a, p)) zu_buf_printf(&b, " → %s", p);
    json_t *j = jstr(b.data);
    free(a), free(p), zu_buf_free(&b);
    return j;
}

/* "y = f(x)" of an assignment statement */
static json_t *assign_label(const ZStmt *s)
{
    ZBuf b = {0};
    for (int i = 0; i < s->targets.len; i++) {
        const ZTarget *t = ZU_VEC_AT(s->targets, i);
        zu_buf_printf(&b, "%s%s", i ? ", " : "", t->name);
    }
    if (s->targets.len) zu_buf_puts(&b, " = ");
    char *e = expr_text(s->expr);
    zu_buf_puts(&b, e);
    free(e);
    json_t *j = jstr(b.data);
    zu_buf_free(&b);
    return j;
}

static void act_kind(json_t *o, const ZStmt *s)
{
    const ZExpr *e = s->expr;
    if (s->is_action && e && e->kind == E_CALL && e->decl && e->decl->kind == D_ACTION) {
        set(o, "action", jstr(e->decl->name));
        set(o, "akind", jstr(za_action_kind_name(e->decl->action)));
    } else {
        set(o, "akind", jstr("local"));
    }
}

/* An atomic block as one box: "atomic Board (read plan; write plan)",
 * its tool calls named too. */
static json_t *atomic_item(const ZStmt *s, int l)
{
    json_t *o = item("act", s->span.first_line);
    set(o, "l", json_integer(l));
    ZBuf b = {0};
    zu_buf_printf(&b, "atomic %s (", s->store_name);
    const char *sep = "";
    for (int i = 0; i < s->body.len; i++) {
        const ZStmt *it = ZU_VEC_AT(s->body, i);
        if (it->kind == S_READ)
            zu_buf_printf(&b, "%sread %s", sep, it->cell);
        else if (it->kind == S_WRITE)
            zu_buf_printf(&b, "%swrite %s", sep, it->registry ? "tools" : it->cell);
        else if (it->is_action && it->expr && it->expr->kind == E_CALL && it->expr->decl &&
                 it->expr->decl->kind == D_ACTION && it->expr->decl->action == ACT_EFFECT)
            zu_buf_printf(&b, "%stool %s", sep, it->expr->decl->name);
        else
            continue;
        sep = "; ";
    }
    zu_buf_puts(&b, ")");
    set(o, "label", jstr(b.data));
    set(o, "akind", jstr("atomic"));
    zu_buf_free(&b);
    return o;
}

/* ---- the global workflow ------------------------------------------------- */

static json_t *global_list(const ZVec *body, int life);

static void global_stmt(json_t *out, const ZStmt *s, int life)
{
    int line = s->span.first_line;
    int l = s->life.index >= 0 ? s->life.index : life;
    switch (s->kind) {
    case S_MSG: {
        json_t *o = item("msg", line);
        set(o, "from", json_integer(s->life.index));
        set(o, "to", json_integer(s->to.index));
        set(o, "label", msg_label(&s->args, &s->params));
        push(out, o);
        break;
    }
    case S_ASSIGN: {
        json_t *o = item("act", line);
        set(o, "l", json_integer(l));
        set(o, "label", assign_label(s));
        act_kind(o, s);
        push(out, o);
        break;
    }
    case S_BLOCK:
        for (int i = 0; i < s->body.len; i++) global_stmt(out, ZU_VEC_AT(s->body, i), l);
        break;
    case S_IF:
    case S_WHILE: {
        json_t *o = item(s->kind == S_IF ? "if" : "while", line);
        set(o, "owner", json_integer(s->life.index));
        char *g = expr_text(s->expr);
        set(o, "guard", jstr(g));
        free(g);
        set(o, "body", global_list(&s->body, l));
        if (s->els.len) set(o, "else", global_list(&s->els, l));
        push(out, o);
        break;
    }
    case S_SKIP: {
        if (l < 0) break;
        json_t *o = item("skip", line);
        set(o, "l", json_integer(l));
        set(o, "label", jstr("skip"));
        push(out, o);
        break;
    }
    case S_PAR: {
        json_t *o = item("par", line), *br = json_array();
        if (!br) zu_oom();
        for (int i = 0; i < s->branches.len; i++) {
            const ZBranch *b = ZU_VEC_AT(s->branches, i);
            push(br, global_list(&b->body, l));
        }
        set(o, "branches", br);
        push(out, o);
        break;
    }
    case S_COREGION: {
        json_t *o = item("coregion", line);
        set(o, "body", global_list(&s->body, l));
        push(out, o);
        break;
    }
    case S_ATOMIC: push(out, atomic_item(s, l)); break;
    case S_RETURN:
        for (int i = 0; i < s->items.len; i++) {
            const ZReturnItem *r = ZU_VEC_AT(s->items, i);
            json_t *o = item("return", line);
            char *v = expr_text(r->value);
            ZBuf b = {0};
            zu_buf_printf(&b, "return %s", v);
            set(o, "l", json_integer(r->at.index));
            set(o, "label", jstr(b.data));
            free(v), zu_buf_free(&b);
            push(out, o);
        }
        break;
    default: break;
    }
}

static json_t *global_list(const ZVec *body, int life)
{
    json_t *out = json_array();
    if (!out) zu_oom();
    for (int i = 0; i < body->len; i++) global_stmt(out, ZU_VEC_AT(*body, i), life);
    return out;
}

/* ---- a local program --------------------------------------------------------- */

static json_t *local_list(const ZLocalSet *ls, const ZVec *body, int self);

static void local_stmt(json_t *out, const ZLocalSet *ls, const ZLocal *l, int self)
{
    int line = l->src ? l->src->span.first_line : 0;
    switch (l->kind) {
    case L_SEND:
    case L_RECV: {
        json_t *o = item("msg", line);
        set(o, "from", json_integer(l->kind == L_SEND ? self : l->peer));
        set(o, "to", json_integer(l->kind == L_SEND ? l->peer : self));
        char *v = exprs(&l->vals);
        set(o, "label", jstr(v));
        free(v);
        push(out, o);
        break;
    }
    case L_SEND_CTL: {
        json_t *o = item("msg", line);
        set(o, "from", json_integer(self));
        set(o, "to", json_integer(l->peer));
        set(o, "control", jstr(l->tag));
        ZBuf b = {0};
        zu_buf_printf(&b, "%s = %s", l->tag, l->ctl_value ? "true" : "false");
        set(o, "label", jstr(b.data));
        zu_buf_free(&b);
        push(out, o);
        break;
    }
    case L_ASSIGN: {
        json_t *o = item("act", line);
        set(o, "l", json_integer(self));
        if (l->src && l->src->kind == S_MSG) {
            /* a message to itself: params := args */
            char *p = exprs(&l->src->params), *v = exprs(&l->vals);
            ZBuf b = {0};
            zu_buf_printf(&b, "%s = %s", p, v);
            set(o, "label", jstr(b.data));
            set(o, "akind", jstr("local"));
            free(p), free(v), zu_buf_free(&b);
        } else if (l->src) {
            set(o, "label", assign_label(l->src));
            act_kind(o, l->src);
        }
        push(out, o);
        break;
    }
    case L_IF:
    case L_WHILE:
    case L_IF_RECV:
    case L_WHILE_RECV: {
        bool owner = l->kind == L_IF || l->kind == L_WHILE;
        json_t *o = item(l->kind == L_IF || l->kind == L_IF_RECV ? "if" : "while", line);
        set(o, "tag", jstr(l->tag));
        json_t *body = local_list(ls, &l->body, self);
        if (owner) {
            set(o, "owner", json_integer(self));
            char *g = expr_text(l->guard);
            set(o, "guard", jstr(g));
            free(g);
        } else {
            set(o, "owner", json_integer(l->peer));
            set(o, "decided", jstr(za_lifeline_name(ls->prog, l->peer)));
            /* the decision arrives first */
            json_t *c = item("msg", line);
            set(c, "from", json_integer(l->peer));
            set(c, "to", json_integer(self));
            set(c, "control", jstr(l->tag));
            set(c, "label", jstr(l->tag));
            if (json_array_insert_new(body, 0, c) != 0) zu_oom();
        }
        set(o, "body", body);
        if (l->els.len) set(o, "else", local_list(ls, &l->els, self));
        push(out, o);
        break;
    }
    case L_RECV_ANY: {
        json_t *o = item("coregion", line);
        set(o, "body", local_list(ls, &l->body, self));
        push(out, o);
        break;
    }
    case L_PAR: {
        json_t *o = item("par", line), *br = json_array();
        if (!br) zu_oom();
        for (int i = 0; i < l->body.len; i++) {
            const ZLocal *b = ZU_VEC_AT(l->body, i);
            push(br, local_list(ls, &b->body, self));
        }
        set(o, "branches", br);
        push(out, o);
        break;
    }
    case L_ATOMIC:
        if (l->src) push(out, atomic_item(l->src, self));
        break;
    case L_RETURN: {
        json_t *o = item("return", line);
        char *v = exprs(&l->vals);
        ZBuf b = {0};
        zu_buf_printf(&b, "return %s", v);
        set(o, "l", json_integer(self));
        set(o, "label", jstr(b.data));
        free(v), zu_buf_free(&b);
        push(out, o);
        break;
    }
    default: break;
    }
}

static json_t *local_list(const ZLocalSet *ls, const ZVec *body, int self)
{
    json_t *out = json_array();
    if (!out) zu_oom();
    for (int i = 0; i < body->len; i++) local_stmt(out, ls, ZU_VEC_AT(*body, i), self);
    return out;
}

/* ---- guards, for trace pages ------------------------------------------------------ */

/* ---- what a CPL guard reads ----------------------------------------------------- */

/* The variables a guard reads, for a decision's details: every @B.x term,
 * and every unqualified variable (read on the evaluation lifeline: the
 * owner, or B inside @B(…)), with the chain of @ operators above it and the
 * past operator, if any, it is under.  The page computes their values from
 * the trace (viewer.js, readSections).  Unfolded formulas are shared DAGs
 * (a chain of 20,000 named guards is one: bench/hostile), so the walk is
 * iterative, visits each (subformula, context) once and stops after
 * READS_MAX_VISITS visits or READS_MAX entries ("more": true). */
enum { READS_MAX = 64, READS_MAX_VISITS = 4096, READS_MAX_PATH = 8 };

typedef struct reads_ctx {
    const ZFormula *f;
    int path[READS_MAX_PATH]; /* evaluation lifelines: the owner, then each @B */
    int npath;
    int past;  /* 0, 1: under prev, 2: under since (innermost) */
    bool deep; /* an @ under a past operator, past operators nested, or a
                  path longer than READS_MAX_PATH: the page does not
                  compute its value */
} reads_ctx;

typedef struct reads {
    const ZProgram *prog;
    json_t *list, *seen;
    bool more;
} reads;

static void reads_add(reads *r, const reads_ctx *x, int life, const char *var, bool at)
{
    ZBuf key = {0};
    zu_buf_printf(&key, "%s%s.%s/%d/%d", at ? "@" : "", za_lifeline_name(r->prog, life), var,
                  x->past, x->deep);
    for (int i = 0; i < x->npath; i++) zu_buf_printf(&key, "/%d", x->path[i]);
    bool dup = json_object_get(r->seen, key.data) != NULL;
    if (!dup && json_array_size(r->list) >= READS_MAX) r->more = true;
    if (!dup && !r->more) {
        if (json_object_set_new(r->seen, key.data, json_true()) != 0) zu_oom();
        json_t *o = json_object(), *path = json_array();
        if (!o || !path) zu_oom();
        ZBuf term = {0};
        if (at)
            zu_buf_printf(&term, "@%s.%s", za_lifeline_name(r->prog, life), var);
        else
            zu_buf_puts(&term, var);
        set(o, "term", jstr(term.data));
        zu_buf_free(&term);
        set(o, "life", jstr(za_lifeline_name(r->prog, life)));
        set(o, "var", jstr(var));
        for (int i = 0; i < x->npath; i++) push(path, jstr(za_lifeline_name(r->prog, x->path[i])));
        set(o, "path", path);
        set(o, "past", x->past == 1 ? jstr("prev") : x->past == 2 ? jstr("since") : json_null());
        set(o, "deep", json_boolean(x->deep));
        push(r->list, o);
    }
    zu_buf_free(&key);
}

static void reads_expr(reads *r, const reads_ctx *x, const ZExpr *e)
{
    if (!e || r->more) return;
    if (e->kind == E_AT_VAR && e->life >= 0)
        reads_add(r, x, e->life, e->name, true);
    else if (e->kind == E_NAME && e->name_kind == NAME_VAR)
        reads_add(r, x, x->path[x->npath - 1], e->name, false);
    reads_expr(r, x, e->a);
    reads_expr(r, x, e->b);
    reads_expr(r, x, e->c);
    for (int i = 0; i < e->args.len; i++) reads_expr(r, x, ZU_VEC_AT(e->args, i));
}

static json_t *guard_reads(const ZProgram *prog, const ZGuardInfo *g)
{
    reads r = {prog, json_array(), json_object(), false};
    if (!r.list || !r.seen) zu_oom();
    ZVec stack = {0};
    ZArena *arena = zu_arena_new();
    reads_ctx *top = zu_alloc(arena, sizeof *top);
    top->f = g->root;
    top->path[0] = g->owner;
    top->npath = 1;
    zu_vec_push(arena, &stack, top);
    int visits = 0;
    while (stack.len > 0 && !r.more) {
        const reads_ctx *x = ZU_VEC_AT(stack, --stack.len);
        ZBuf key = {0};
        zu_buf_printf(&key, "%d/%d/%d", x->f->id, x->past, x->deep);
        for (int i = 0; i < x->npath; i++) zu_buf_printf(&key, "/%d", x->path[i]);
        bool seen = json_object_get(r.seen, key.data) != NULL;
        if (!seen && json_object_set_new(r.seen, key.data, json_false()) != 0) zu_oom();
        zu_buf_free(&key);
        if (seen) continue;
        if (++visits > READS_MAX_VISITS) {
            r.more = true;
            break;
        }
        const ZFormula *f = x->f;
        if (f->kind == F_ATOM) {
            reads_expr(&r, x, f->atom);
            continue;
        }
        const ZFormula *ops[2] = {f->a, f->b};
        for (int k = 1; k >= 0; k--) { /* the left operand is popped first */
            if (!ops[k]) continue;
            reads_ctx *y = zu_alloc(arena, sizeof *y);
            *y = *x;
            y->f = ops[k];
            if (f->kind == F_AT && y->path[y->npath - 1] != f->life) {
                if (y->past || y->npath == READS_MAX_PATH)
                    y->deep = true;
                else
                    y->path[y->npath++] = f->life;
            } else if (f->kind == F_PREV || f->kind == F_SINCE) {
                if (y->past) y->deep = true;
                y->past = f->kind == F_PREV ? 1 : 2;
            }
            zu_vec_push(arena, &stack, y);
        }
    }
    zu_arena_free(arena);
    json_decref(r.seen);
    json_t *o = json_object();
    if (!o) zu_oom();
    set(o, "list", r.list);
    set(o, "more", json_boolean(r.more));
    return o;
}

char *zvw_guards_json(const ZCompilation *c)
{
    json_t *d = json_object();
    if (!d) zu_oom();
    const ZGuardTable *gt = c->guards;
    for (int i = 0; gt && i < gt->guards.len; i++) {
        const ZGuardInfo *g = ZU_VEC_AT(gt->guards, i);
        json_t *o = json_object();
        if (!o) zu_oom();
        set(o, "owner", jstr(za_lifeline_name(c->prog, g->owner)));
        char *src = expr_text(g->source);
        set(o, "guard", jstr(src));
        free(src);
        if (g->cpl && g->root) {
            ZBuf b = {0};
            zg_print_formula(&b, gt, g->root);
            set(o, "cpl", jstr(b.data));
            zu_buf_free(&b);
            set(o, "reads", guard_reads(c->prog, g));
        } else {
            set(o, "cpl", json_null());
        }
        set(o, "line", json_integer(g->construct ? g->construct->span.first_line : 0));
        set(d, g->tag, o);
    }
    char *text = json_dumps(d, JSON_COMPACT);
    json_decref(d);
    if (!text) zu_oom();
    return text;
}

/* ---- the page ------------------------------------------------------------------ */

static int workflow_data(FILE *out, void *user)
{
    json_t *d = user;
    char *text = json_dumps(d, JSON_COMPACT);
    if (!text) zu_oom();
    int rc = zvw_put_json(out, text, strlen(text));
    free(text);
    return rc;
}

int zvw_workflow_page(FILE *out, const ZCompilation *c, int lifeline)
{
    const ZProgram *p = c->prog;
    json_t *d = json_object(), *lifes = json_array();
    if (!d || !lifes) zu_oom();
    set(d, "mode", jstr("workflow"));
    for (int i = 0; i < p->lifelines.len; i++)
        push(lifes, jstr(((ZDecl *)ZU_VEC_AT(p->lifelines, i))->name));
    set(d, "lifelines", lifes);
    ZBuf title = {0};
    /* the file's name without its directory: a page looks the same
     * wherever the sources are */
    const char *slash = strrchr(c->src.path, '/');
    const char *file = slash ? slash + 1 : c->src.path;
    if (lifeline >= 0) {
        const ZLocalProgram *lp = ZU_VEC_AT(c->locals->programs, lifeline);
        zu_buf_printf(&title, "lifeline %s of %s (%s)", lp->name, c->wf->name, file);
        set(d, "focus", jstr(lp->name));
        set(d, "items", local_list(c->locals, &lp->body, lifeline));
    } else {
        zu_buf_printf(&title, "workflow %s (%s)", c->wf->name, file);
        set(d, "focus", json_null());
        set(d, "items", global_list(&c->wf->body, -1));
    }
    set(d, "title", jstr(title.data));
    zu_buf_free(&title);
    int rc = zvw_page_write(out, workflow_data, d);
    json_decref(d);
    return rc;
}
