/* check_parallel.c — the parallel rule and the coregion rules (language
 * reference §4.4, §4).
 *
 * Parallel: the branches of one region must not write a variable on a
 * lifeline that another branch of the same region reads or writes (nested
 * regions count towards the enclosing branch).  While a branch is walked
 * (check.c), every definition and read (check_defined.c) is recorded for
 * it; the region's conflicts are reported when all its branches are done.
 *
 * Coregion: only messages, no self message, one receiver, one message per
 * sender, no variable bound twice; the types of each message are checked
 * on the way (check_types.c).
 */
#include "check.h"

/* ---- accesses ----------------------------------------------------------- */

void ck_record(Ck *c, int bit, bool write, ZSpan at)
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

bool ck_written_by_sibling(const Ck *c, int bit)
{
    for (const ParCtx *p = c->par; p; p = p->up)
        if (bit_has(p->sib, bit)) return true;
    return false;
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
                if (p->kind == E_NAME && p->name_kind == NAME_VAR &&
                    var_ok(c, s->to.index, p->decl))
                    bit_add(w, bit_of(c, s->to.index, p->decl));
            }
            break;
        case S_ASSIGN:
            for (int k = 0; k < s->targets.len; k++) {
                const ZTarget *t = s->targets.items[k];
                if (var_ok(c, s->life.index, t->var)) bit_add(w, bit_of(c, s->life.index, t->var));
            }
            break;
        default: break;
        }
        writes_of(c, &s->body, w);
        writes_of(c, &s->els, w);
        for (int k = 0; k < s->branches.len; k++) {
            const ZBranch *b = s->branches.items[k];
            writes_of(c, &b->body, w);
        }
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
                const char *ln = za_lifeline_name(c->p, r->bit / c->nv);
                if (r->write && o->write) {
                    zd_error(c->d, r->span,
                             "`%s` on %s is written by two branches of this `parallel`", var->name,
                             ln);
                    zd_note(c->d, o->span, "the other write is here");
                } else {
                    Rec *w = r->write ? r : o, *rd = r->write ? o : r;
                    zd_error(
                        c->d, w->span,
                        "`%s` on %s is written here but read by another branch of this `parallel`",
                        var->name, ln);
                    zd_note(c->d, rd->span, "read here");
                }
                break;
            }
        }
    }
}

/* ---- regions ----------------------------------------------------------- */

bool ck_par_begin(Ck *c, ParRegion *r, const ZStmt *s)
{
    int n = s->branches.len;
    if (n == 0) {
        zd_error(c->d, first_line(s->span), "`parallel` needs at least one branch");
        return false;
    }
    r->n = n;
    r->acc = zu_alloc(c->a, sizeof *r->acc * (size_t)n);
    r->w = zu_alloc(c->a, sizeof *r->w * (size_t)n);
    for (int i = 0; i < n; i++) {
        ZBranch *b = s->branches.items[i];
        r->w[i] = bits_new(c);
        writes_of(c, &b->body, r->w[i]);
        r->acc[i].r = bits_new(c);
        r->acc[i].w = bits_new(c);
    }
    return true;
}

void ck_par_enter(Ck *c, ParRegion *r, int branch)
{
    uint64_t *sib = bits_new(c);
    for (int k = 0; k < r->n; k++)
        if (k != branch)
            for (int q = 0; q < c->nwords; q++) sib[q] |= r->w[k][q];
    r->ctx = (ParCtx){&r->acc[branch], sib, c->par};
    c->par = &r->ctx;
}

void ck_par_leave(Ck *c, ParRegion *r) { c->par = r->ctx.up; }

void ck_par_end(Ck *c, ParRegion *r)
{
    Access *acc = r->acc;
    int n = r->n;
    par_conflicts(c, acc, n);
    /* the enclosing branch sees every access of this region */
    for (int i = 0; i < n && c->par; i++)
        for (int k = 0; k < acc[i].recs.len; k++) {
            Rec *x = acc[i].recs.items[k];
            ck_record(c, x->bit, x->write, x->span);
        }
}

/* ---- coregions ---------------------------------------------------------- */

void ck_coregion(Ck *c, ZStmt *s)
{
    ZStmt *first = NULL;
    for (int i = 0; i < s->body.len; i++) {
        ZStmt *m = s->body.items[i];
        if (m->kind != S_MSG) {
            zd_error(c->d, first_line(m->span), "only messages are allowed in a `coregion`");
            continue;
        }
        ck_msg(c, m);
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
            if (o->kind == S_MSG && o != m && o->life.index == m->life.index &&
                o->life.index >= 0 && o->life.index != o->to.index) {
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
                zd_error(c->d, p->span, "`%s` is bound by two messages of this `coregion`",
                         p->name);
                zd_note(c->d, clash->span, "also bound here");
            }
        }
    }
    if (!first && s->body.len == 0)
        zd_error(c->d, first_line(s->span), "`coregion` needs at least one message");
}
