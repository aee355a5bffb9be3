/* project.c — projection of a global workflow to local programs (§7).
 *
 * The projection runs in two passes.
 *
 *  1. annotate: one bottom-up walk over the workflow builds a shadow tree
 *     (PNode/PList) that records, for every statement, its participation
 *     set part(P) and, for parallel regions, the channel namespace of each
 *     branch.  Namespaces are registered in pre-order, so their ids are
 *     stable: "main" is 0, then "main/par1.1", "main/par1.2", ...
 *
 *  2. project: for every lifeline L, a walk over the shadow tree emits
 *     π_L.  A subtree whose participation set does not contain L is skipped
 *     without being entered, so each statement is looked at O(1) times per
 *     lifeline and the whole projection is O(|W| · |lifelines|) (control
 *     broadcasts add at most |lifelines| sends per construct).
 *
 * Participation sets (Definition 12 of the projection paper, §7):
 *   message A -> B        {A, B}    (a self message: {A})
 *   coregion              senders ∪ {receiver}
 *   action, block, skip   {its lifeline}
 *   if / while            {owner} ∪ part(then) ∪ part(else)
 *   parallel              ∪ part(branch)
 *   return                ∅
 * The return statement is not a participation construct: it can only be
 * the last statement of the workflow body, so it never sits inside an
 * owned construct and cannot influence any broadcast set.  Giving it the
 * empty set keeps part() a property of the protocol alone.
 */
#include <string.h>

#include "zgc.h"

/* ------------------------------------------------------------------ */
/* participation sets                                                  */
/* ------------------------------------------------------------------ */

static void set_union(ZLifeSet *into, const ZLifeSet *from)
{
    for (size_t i = 0; i < sizeof into->w / sizeof into->w[0]; i++) into->w[i] |= from->w[i];
}

static void set_add_checked(ZLifeSet *s, int i)
{
    if (i >= 0 && i < ZJ_MAX_LIFELINES) zj_set_add(s, i);
}

/* part() of a statement whose children's sets are already known. */
static ZLifeSet part_leaf(const ZStmt *s)
{
    ZLifeSet r;
    memset(&r, 0, sizeof r);
    switch (s->kind) {
    case S_MSG:
        set_add_checked(&r, s->life.index);
        set_add_checked(&r, s->to.index);
        break;
    case S_ASSIGN:
    case S_BLOCK:
    case S_ATOMIC:
    case S_READ:
    case S_WRITE:
    case S_SKIP:
    case S_IF:
    case S_WHILE: set_add_checked(&r, s->life.index); break;
    case S_COREGION:
        for (int i = 0; i < s->body.len; i++) {
            const ZStmt *m = ZU_VEC_AT(s->body, i);
            set_add_checked(&r, m->life.index);
            set_add_checked(&r, m->to.index);
        }
        break;
    case S_PAR:
    case S_RETURN:
    case S_USE: /* expanded before resolution */
    case S__COUNT: break;
    }
    return r;
}

ZLifeSet zj_part_stmt(const ZStmt *s)
{
    ZLifeSet r = part_leaf(s);
    ZLifeSet sub;
    switch (s->kind) {
    case S_IF:
    case S_WHILE:
        sub = zj_part_list(&s->body);
        set_union(&r, &sub);
        sub = zj_part_list(&s->els);
        set_union(&r, &sub);
        break;
    case S_PAR:
        for (int i = 0; i < s->branches.len; i++) {
            const ZBranch *br = ZU_VEC_AT(s->branches, i);
            sub = zj_part_list(&br->body);
            set_union(&r, &sub);
        }
        break;
    default: break;
    }
    return r;
}

ZLifeSet zj_part_list(const ZVec *stmts)
{
    ZLifeSet r;
    memset(&r, 0, sizeof r);
    for (int i = 0; i < stmts->len; i++) {
        ZLifeSet s = zj_part_stmt(ZU_VEC_AT(*stmts, i));
        set_union(&r, &s);
    }
    return r;
}

/* ------------------------------------------------------------------ */
/* pass 1: the annotated shadow tree                                   */
/* ------------------------------------------------------------------ */

typedef struct PNode PNode;

typedef struct PList {
    PNode *items;
    int n;
    ZLifeSet part;
} PList;

struct PNode {
    const ZStmt *s;
    ZLifeSet part;
    const char *tag;  /* if/while: control tag */
    PList body, els;  /* if/while */
    PList *branches;  /* parallel: one list per branch */
    int *branch_chan; /* parallel: namespace id of each branch */
};

typedef struct Proj {
    ZArena *arena;
    const ZProgram *prog;
    ZLocalSet *ls;
    int nlife;
} Proj;

static int add_namespace(Proj *pj, const char *name)
{
    zu_vec_push(pj->arena, &pj->ls->namespaces, (void *)name);
    return pj->ls->namespaces.len - 1;
}

static void annotate_list(Proj *pj, const ZVec *stmts, int chan, PList *out);

static void annotate_stmt(Proj *pj, const ZStmt *s, int chan, PNode *n)
{
    n->s = s;
    n->part = part_leaf(s);
    switch (s->kind) {
    case S_IF:
    case S_WHILE:
        n->tag = za_construct_tag(pj->arena, s);
        annotate_list(pj, &s->body, chan, &n->body);
        annotate_list(pj, &s->els, chan, &n->els);
        set_union(&n->part, &n->body.part);
        set_union(&n->part, &n->els.part);
        break;
    case S_PAR: {
        int nb = s->branches.len;
        const char *parent = ZU_VEC_AT(pj->ls->namespaces, chan);
        n->branches = zu_alloc(pj->arena, sizeof(PList) * (size_t)(nb > 0 ? nb : 1));
        n->branch_chan = zu_alloc(pj->arena, sizeof(int) * (size_t)(nb > 0 ? nb : 1));
        for (int k = 0; k < nb; k++) {
            const ZBranch *br = ZU_VEC_AT(s->branches, k);
            n->branch_chan[k] =
                add_namespace(pj, zu_fmt(pj->arena, ZV_BRANCH_FMT, parent, s->construct, k + 1));
            annotate_list(pj, &br->body, n->branch_chan[k], &n->branches[k]);
            set_union(&n->part, &n->branches[k].part);
        }
        break;
    }
    default: break;
    }
}

static void annotate_list(Proj *pj, const ZVec *stmts, int chan, PList *out)
{
    memset(out, 0, sizeof *out);
    out->n = stmts->len;
    if (out->n == 0) return;
    out->items = zu_alloc(pj->arena, sizeof(PNode) * (size_t)out->n);
    for (int i = 0; i < out->n; i++) {
        annotate_stmt(pj, ZU_VEC_AT(*stmts, i), chan, &out->items[i]);
        set_union(&out->part, &out->items[i].part);
    }
}

/* ------------------------------------------------------------------ */
/* pass 2: π_L                                                         */
/* ------------------------------------------------------------------ */

static ZLocal *new_local(Proj *pj, ZLocalKind k, const ZStmt *src, int chan)
{
    ZLocal *l = zu_alloc(pj->arena, sizeof *l);
    l->kind = k;
    l->src = src;
    l->peer = -1;
    l->chan = chan;
    l->ret_index = -1;
    return l;
}

/* The local program shares the statement's expression list (read-only). */
static void copy_exprs(Proj *pj, ZVec *into, const ZVec *from)
{
    (void)pj;
    *into = *from;
    into->cap = into->len; /* a push would reallocate, never write into the shared array */
}

/* send-ctl R (value, tag) for every member of R in declaration order. */
static void broadcast(Proj *pj, const PNode *n, int owner, bool value, int chan, ZVec *out)
{
    for (int r = 0; r < pj->nlife; r++) {
        if (r == owner || !zj_set_has(&n->part, r)) continue;
        ZLocal *l = new_local(pj, L_SEND_CTL, n->s, chan);
        l->peer = r;
        l->ctl_value = value;
        l->tag = n->tag;
        zu_vec_push(pj->arena, out, l);
    }
}

static bool has_recipients(const PNode *n, int owner)
{
    for (size_t i = 0; i < sizeof n->part.w / sizeof n->part.w[0]; i++) {
        uint64_t w = n->part.w[i];
        if (owner >= 0 && (size_t)(owner >> 6) == i) w &= ~((uint64_t)1 << (owner & 63));
        if (w) return true;
    }
    return false;
}

static void project_list(Proj *pj, int L, const PList *pl, int chan, ZVec *out);

static void project_control(Proj *pj, int L, const PNode *n, int chan, ZVec *out)
{
    const ZStmt *s = n->s;
    int owner = s->life.index;
    bool is_if = s->kind == S_IF;
    ZLocal *l;
    if (L == owner) {
        l = new_local(pj, is_if ? L_IF : L_WHILE, s, chan);
        l->guard = s->expr;
        l->tag = n->tag;
        broadcast(pj, n, owner, true, chan, &l->body);
        project_list(pj, L, &n->body, chan, &l->body);
        broadcast(pj, n, owner, false, chan, &l->els);
        project_list(pj, L, &n->els, chan, &l->els);
        l->has_else = has_recipients(n, owner) || l->els.len > 0;
    } else {
        l = new_local(pj, is_if ? L_IF_RECV : L_WHILE_RECV, s, chan);
        l->peer = owner;
        l->tag = n->tag;
        project_list(pj, L, &n->body, chan, &l->body);
        project_list(pj, L, &n->els, chan, &l->els);
        l->has_else = l->els.len > 0;
    }
    zu_vec_push(pj->arena, out, l);
}

static void project_stmt(Proj *pj, int L, const PNode *n, int chan, ZVec *out)
{
    const ZStmt *s = n->s;
    ZLocal *l;
    switch (s->kind) {
    case S_MSG:
        if (s->life.index == s->to.index) {
            /* self message: a local assignment params := args */
            l = new_local(pj, L_ASSIGN, s, chan);
            copy_exprs(pj, &l->vals, &s->args);
        } else if (L == s->life.index) {
            l = new_local(pj, L_SEND, s, chan);
            l->peer = s->to.index;
            copy_exprs(pj, &l->vals, &s->args);
        } else {
            l = new_local(pj, L_RECV, s, chan);
            l->peer = s->life.index;
            copy_exprs(pj, &l->vals, &s->params);
        }
        zu_vec_push(pj->arena, out, l);
        break;
    case S_ASSIGN: zu_vec_push(pj->arena, out, new_local(pj, L_ASSIGN, s, chan)); break;
    case S_BLOCK:
        for (int i = 0; i < s->body.len; i++)
            zu_vec_push(pj->arena, out, new_local(pj, L_ASSIGN, ZU_VEC_AT(s->body, i), chan));
        break;
    case S_ATOMIC: zu_vec_push(pj->arena, out, new_local(pj, L_ATOMIC, s, chan)); break;
    case S_SKIP: break;
    case S_IF:
    case S_WHILE: project_control(pj, L, n, chan, out); break;
    case S_PAR:
        l = new_local(pj, L_PAR, s, chan);
        for (int k = 0; k < s->branches.len; k++) {
            if (!zj_set_has(&n->branches[k].part, L)) continue;
            ZLocal *br = new_local(pj, L_PAR, s, n->branch_chan[k]);
            project_list(pj, L, &n->branches[k], n->branch_chan[k], &br->body);
            zu_vec_push(pj->arena, &l->body, br);
        }
        zu_vec_push(pj->arena, out, l);
        break;
    case S_COREGION: {
        const ZStmt *first = s->body.len ? ZU_VEC_AT(s->body, 0) : NULL;
        if (first && L == first->to.index) {
            l = new_local(pj, L_RECV_ANY, s, chan);
            for (int i = 0; i < s->body.len; i++) {
                const ZStmt *m = ZU_VEC_AT(s->body, i);
                ZLocal *arm = new_local(pj, L_RECV, m, chan);
                arm->peer = m->life.index;
                copy_exprs(pj, &arm->vals, &m->params);
                zu_vec_push(pj->arena, &l->body, arm);
            }
            zu_vec_push(pj->arena, out, l);
        } else {
            for (int i = 0; i < s->body.len; i++) {
                const ZStmt *m = ZU_VEC_AT(s->body, i);
                if (m->life.index != L) continue;
                l = new_local(pj, L_SEND, m, chan);
                l->peer = m->to.index;
                copy_exprs(pj, &l->vals, &m->args);
                zu_vec_push(pj->arena, out, l);
            }
        }
        break;
    }
    case S_RETURN:
        for (int i = 0; i < s->items.len; i++) {
            const ZReturnItem *it = ZU_VEC_AT(s->items, i);
            if (it->at.index != L) continue;
            l = new_local(pj, L_RETURN, s, chan);
            l->ret_index = s->tuple_ret ? i : -1;
            zu_vec_push(pj->arena, &l->vals, it->value);
            zu_vec_push(pj->arena, out, l);
        }
        break;
    case S_USE:
    case S_READ: /* items of an atomic block, projected with it */
    case S_WRITE:
    case S__COUNT: ZU_UNREACHABLE();
    }
}

static void project_list(Proj *pj, int L, const PList *pl, int chan, ZVec *out)
{
    if (!zj_set_has(&pl->part, L)) {
        /* only a return can concern L outside the participation sets */
        if (pl->n == 0 || pl->items[pl->n - 1].s->kind != S_RETURN) return;
        project_stmt(pj, L, &pl->items[pl->n - 1], chan, out);
        return;
    }
    for (int i = 0; i < pl->n; i++) {
        const PNode *n = &pl->items[i];
        if (n->s->kind == S_RETURN || zj_set_has(&n->part, L)) project_stmt(pj, L, n, chan, out);
    }
}

ZLocalSet *zj_project(ZArena *a, const ZProgram *p, const ZDecl *wf)
{
    Proj pj;
    memset(&pj, 0, sizeof pj);
    pj.arena = a;
    pj.prog = p;
    pj.ls = zu_alloc(a, sizeof *pj.ls);
    pj.ls->prog = p;
    pj.ls->wf = wf;
    pj.nlife = p->lifelines.len;
    if (pj.nlife > ZJ_MAX_LIFELINES)
        ZU_ICE("%d lifelines exceed the limit of %d", pj.nlife, ZJ_MAX_LIFELINES);
    add_namespace(&pj, ZV_CHANNEL_MAIN);

    PList root;
    annotate_list(&pj, &wf->body, 0, &root);
    for (int L = 0; L < pj.nlife; L++) {
        const ZDecl *d = ZU_VEC_AT(p->lifelines, L);
        ZLocalProgram *lp = zu_alloc(a, sizeof *lp);
        lp->lifeline = L;
        lp->name = d->name;
        project_list(&pj, L, &root, 0, &lp->body);
        zu_vec_push(a, &pj.ls->programs, lp);
    }
    return pj.ls;
}

/* ------------------------------------------------------------------ */
/* text form                                                           */
/* ------------------------------------------------------------------ */

static void indent(ZBuf *b, int depth)
{
    for (int i = 0; i < depth; i++) zu_buf_puts(b, "  ");
}

static void put_expr_list(ZBuf *b, const ZVec *v)
{
    for (int i = 0; i < v->len; i++) {
        if (i) zu_buf_puts(b, ", ");
        za_print_expr(b, ZU_VEC_AT(*v, i));
    }
}

static void put_assign(ZBuf *b, const ZLocal *l)
{
    const ZStmt *s = l->src;
    if (s->kind == S_MSG) {
        /* self message: params := args, componentwise */
        bool tuple = s->params.len != 1;
        if (tuple) zu_buf_putc(b, '(');
        put_expr_list(b, &s->params);
        zu_buf_puts(b, tuple ? ") = (" : " = ");
        put_expr_list(b, &l->vals);
        zu_buf_puts(b, tuple ? ");" : ";");
        return;
    }
    int nt = s->targets.len;
    if (nt > 0) {
        bool tuple = nt > 1 || s->tuple_lhs;
        if (tuple) zu_buf_putc(b, '(');
        for (int i = 0; i < nt; i++) {
            const ZTarget *t = ZU_VEC_AT(s->targets, i);
            if (i) zu_buf_puts(b, ", ");
            zu_buf_puts(b, t->name);
        }
        zu_buf_puts(b, tuple ? ") = " : " = ");
    }
    if (s->expr) za_print_expr(b, s->expr);
    zu_buf_putc(b, ';');
}

static void put_list(ZBuf *b, const ZLocalSet *ls, const ZVec *v, int depth);

static void put_block(ZBuf *b, const ZLocalSet *ls, const ZLocal *l, int depth)
{
    zu_buf_puts(b, " {\n");
    put_list(b, ls, &l->body, depth + 1);
    indent(b, depth);
    zu_buf_putc(b, '}');
    if (l->has_else || l->els.len > 0) {
        zu_buf_puts(b, " else {\n");
        put_list(b, ls, &l->els, depth + 1);
        indent(b, depth);
        zu_buf_putc(b, '}');
    }
    zu_buf_putc(b, '\n');
}

static void put_local(ZBuf *b, const ZLocalSet *ls, const ZLocal *l, int depth)
{
    indent(b, depth);
    switch (l->kind) {
    case L_SEND:
        zu_buf_printf(b, "send %s (", za_lifeline_name(ls->prog, l->peer));
        put_expr_list(b, &l->vals);
        zu_buf_puts(b, ");\n");
        break;
    case L_RECV:
        zu_buf_printf(b, "recv %s (", za_lifeline_name(ls->prog, l->peer));
        put_expr_list(b, &l->vals);
        zu_buf_puts(b, ");\n");
        break;
    case L_ASSIGN:
        put_assign(b, l);
        zu_buf_putc(b, '\n');
        break;
    case L_ATOMIC:
        zu_buf_printf(b, "atomic %s {\n", l->src->store_name);
        for (int i = 0; i < l->src->body.len; i++) {
            indent(b, depth + 1);
            za_print_atomic_item(b, l->src->body.items[i]);
            zu_buf_putc(b, '\n');
        }
        indent(b, depth);
        zu_buf_puts(b, "}\n");
        break;
    case L_SEND_CTL:
        zu_buf_printf(b, "send-ctl %s (%s, %s);\n", za_lifeline_name(ls->prog, l->peer),
                      l->ctl_value ? "true" : "false", l->tag);
        break;
    case L_IF:
    case L_WHILE:
        zu_buf_puts(b, l->kind == L_IF ? "if " : "while ");
        za_print_expr(b, l->guard);
        put_block(b, ls, l, depth);
        break;
    case L_IF_RECV:
    case L_WHILE_RECV:
        zu_buf_printf(b, "%s recv-ctl %s %s", l->kind == L_IF_RECV ? "if" : "while",
                      za_lifeline_name(ls->prog, l->peer), l->tag);
        put_block(b, ls, l, depth);
        break;
    case L_RECV_ANY:
        zu_buf_puts(b, "recv-any {\n");
        for (int i = 0; i < l->body.len; i++) {
            const ZLocal *arm = ZU_VEC_AT(l->body, i);
            indent(b, depth + 1);
            zu_buf_printf(b, "%s (", za_lifeline_name(ls->prog, arm->peer));
            put_expr_list(b, &arm->vals);
            zu_buf_puts(b, ");\n");
        }
        indent(b, depth);
        zu_buf_puts(b, "}\n");
        break;
    case L_PAR:
        zu_buf_puts(b, "parallel {\n");
        for (int i = 0; i < l->body.len; i++) {
            const ZLocal *br = ZU_VEC_AT(l->body, i);
            indent(b, depth + 1);
            zu_buf_printf(b, "branch %s {\n", (const char *)ZU_VEC_AT(ls->namespaces, br->chan));
            put_list(b, ls, &br->body, depth + 2);
            indent(b, depth + 1);
            zu_buf_puts(b, "}\n");
        }
        indent(b, depth);
        zu_buf_puts(b, "}\n");
        break;
    case L_RETURN:
        if (l->ret_index >= 0)
            zu_buf_printf(b, "return[%d] ", l->ret_index);
        else
            zu_buf_puts(b, "return ");
        if (l->vals.len) za_print_expr(b, ZU_VEC_AT(l->vals, 0));
        zu_buf_puts(b, ";\n");
        break;
    case L__COUNT: ZU_UNREACHABLE();
    }
}

static void put_list(ZBuf *b, const ZLocalSet *ls, const ZVec *v, int depth)
{
    for (int i = 0; i < v->len; i++) put_local(b, ls, ZU_VEC_AT(*v, i), depth);
}

void zj_print(FILE *out, const ZLocalSet *ls, int lifeline)
{
    ZBuf b = {0};
    bool first = true;
    for (int i = 0; i < ls->programs.len; i++) {
        const ZLocalProgram *lp = ZU_VEC_AT(ls->programs, i);
        if (lifeline >= 0 && lp->lifeline != lifeline) continue;
        if (!first) zu_buf_putc(&b, '\n');
        first = false;
        zu_buf_printf(&b, "lifeline %s {\n", lp->name);
        put_list(&b, ls, &lp->body, 1);
        zu_buf_puts(&b, "}\n");
        /* one lifeline at a time: the buffer stays small */
        fwrite(b.data, 1, b.len, out);
        b.len = 0;
    }
    zu_buf_free(&b);
}
