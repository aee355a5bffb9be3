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
    uintptr_t *seen = zu_imap_put(&acc->seen, (uint64_t)bit, NULL);
    uintptr_t kind = write ? 2 : 1;
    if (*seen & kind) return; /* the first access of each kind is enough */
    *seen |= kind;
    Rec *r = zu_alloc(c->a, sizeof *r);
    r->bit = bit;
    r->write = write;
    r->span = at;
    zu_vec_push(c->a, &acc->recs, r);
}

bool ck_written_by_sibling(const Ck *c, int bit)
{
    for (const ParCtx *p = c->par; p; p = p->up) {
        const uintptr_t *n = zu_imap_get(p->writes, (uint64_t)bit);
        if (n && *n > (zu_imap_get(&p->acc->writes, (uint64_t)bit) ? 1u : 0u)) return true;
    }
    return false;
}

/* What a statement list may write (for parallel siblings). */
static void writes_of(Ck *c, const ZVec *body, ZIMap *w)
{
    for (int i = 0; i < body->len; i++) {
        const ZStmt *s = body->items[i];
        switch (s->kind) {
        case S_MSG:
            for (int k = 0; k < s->params.len; k++) {
                const ZExpr *p = s->params.items[k];
                if (p->kind == E_NAME && p->name_kind == NAME_VAR &&
                    var_ok(c, s->to.index, p->decl))
                    zu_imap_put(w, (uint64_t)bit_of(c, s->to.index, p->decl), NULL);
            }
            break;
        case S_ASSIGN:
        case S_READ:
            for (int k = 0; k < s->targets.len; k++) {
                const ZTarget *t = s->targets.items[k];
                if (var_ok(c, s->life.index, t->var))
                    zu_imap_put(w, (uint64_t)bit_of(c, s->life.index, t->var), NULL);
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

/* The first access of a bit by the branches walked so far: the first of
 * any kind and the first write (for the conflicts of later branches). */
typedef struct First {
    const Rec *any, *write;
    bool done; /* its conflict is reported */
} First;

static void report_conflict(Ck *c, const Rec *r, const Rec *o)
{
    const ZDecl *var = c->p->vars.items[r->bit % c->nv];
    const char *ln = za_lifeline_name(c->p, r->bit / c->nv);
    if (r->write && o->write) {
        zd_error(c->d, r->span, "`%s` on %s is written by two branches of this `parallel`",
                 var->name, ln);
        zd_note(c->d, o->span, "the other write is here");
    } else {
        const Rec *w = r->write ? r : o, *rd = r->write ? o : r;
        zd_error(c->d, w->span,
                 "`%s` on %s is written here but read by another branch of this `parallel`",
                 var->name, ln);
        zd_note(c->d, rd->span, "read here");
    }
}

/* The branches of one region must not share a written variable.  Each
 * access of branch j is compared with the first conflicting access of
 * the earliest branch before j (one table over the region's accesses, so
 * a region costs its accesses, not their square). */
static void par_conflicts(Ck *c, Access *acc, int n)
{
    ZIMap first = {0}; /* bit -> First* */
    for (int j = 0; j < n; j++) {
        for (int k = 0; k < acc[j].recs.len; k++) {
            const Rec *r = acc[j].recs.items[k];
            uintptr_t *fp = zu_imap_get(&first, (uint64_t)r->bit);
            First *f = fp ? (First *)*fp : NULL;
            if (!f || f->done) continue;
            const Rec *o = r->write ? f->any : f->write;
            if (!o) continue;
            f->done = true;
            report_conflict(c, r, o);
        }
        for (int k = 0; k < acc[j].recs.len; k++) {
            const Rec *r = acc[j].recs.items[k];
            uintptr_t *fp = zu_imap_put(&first, (uint64_t)r->bit, NULL);
            if (!*fp) *fp = (uintptr_t)zu_alloc(c->a, sizeof(First));
            First *f = (First *)*fp;
            if (!f->any) f->any = r;
            if (r->write && !f->write) f->write = r;
        }
    }
    zu_imap_free(&first);
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
    r->acc = zu_xcalloc((size_t)n, sizeof *r->acc);
    r->writes = (ZIMap){0};
    for (int i = 0; i < n; i++) {
        ZBranch *b = s->branches.items[i];
        writes_of(c, &b->body, &r->acc[i].writes);
        ZIMap *w = &r->acc[i].writes;
        ZU_IMAP_EACH(w, k)(*zu_imap_put(&r->writes, ZU_IMAP_KEY(w, k), NULL))++;
    }
    return true;
}

void ck_par_enter(Ck *c, ParRegion *r, int branch)
{
    r->ctx = (ParCtx){&r->acc[branch], &r->writes, c->par};
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
    for (int i = 0; i < n; i++) {
        zu_imap_free(&acc[i].seen);
        zu_imap_free(&acc[i].writes);
    }
    free(acc);
    zu_imap_free(&r->writes);
}

/* ---- coregions ---------------------------------------------------------- */

/* Each message is compared with the earlier ones through two tables (the
 * first message from each sender, the first binding of each variable),
 * so a coregion costs its messages, not their square. */
void ck_coregion(Ck *c, ZStmt *s)
{
    ZStmt *first = NULL;
    ZIMap sender = {0}; /* lifeline -> first ZStmt* from it */
    ZIMap bound = {0};  /* variable index -> first binding ZExpr* */
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
        } else if (m->to.index != first->to.index && m->to.index >= 0 && first->to.index >= 0) {
            zd_error(c->d, m->to.span, "all messages of a `coregion` must have the same receiver");
            zd_note(c->d, first->to.span, "the first message goes to %s here", first->to.name);
        } else {
            uintptr_t *o =
                m->life.index >= 0 ? zu_imap_get(&sender, (uint64_t)m->life.index) : NULL;
            if (o) {
                const ZStmt *om = (const ZStmt *)*o;
                zd_error(c->d, m->life.span, "two messages of this `coregion` come from %s",
                         m->life.name);
                zd_note(c->d, om->life.span, "the other message from %s is here", om->life.name);
            }
            for (int k = 0; k < m->params.len; k++) {
                ZExpr *p = m->params.items[k];
                if (p->kind != E_NAME || p->name_kind != NAME_VAR || !p->decl) continue;
                uintptr_t *clash = zu_imap_get(&bound, (uint64_t)p->decl->index);
                if (clash) {
                    zd_error(c->d, p->span, "`%s` is bound by two messages of this `coregion`",
                             p->name);
                    zd_note(c->d, ((const ZExpr *)*clash)->span, "also bound here");
                }
            }
        }
        /* what later messages are compared with */
        if (m->life.index == m->to.index) continue;
        if (m->life.index >= 0) {
            uintptr_t *o = zu_imap_put(&sender, (uint64_t)m->life.index, NULL);
            if (!*o) *o = (uintptr_t)m;
        }
        for (int k = 0; k < m->params.len; k++) {
            ZExpr *p = m->params.items[k];
            if (p->kind != E_NAME || p->name_kind != NAME_VAR || !p->decl) continue;
            uintptr_t *b = zu_imap_put(&bound, (uint64_t)p->decl->index, NULL);
            if (!*b) *b = (uintptr_t)p;
        }
    }
    zu_imap_free(&sender);
    zu_imap_free(&bound);
    if (!first && s->body.len == 0)
        zd_error(c->d, first_line(s->span), "`coregion` needs at least one message");
}
