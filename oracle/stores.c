/* stores.c — store operations over the whole trace.  Replay (replay.c)
 * has checked each operation on its lifeline: its attempts in order, the
 * values its reads bound, its commit's cells against the block's writes.
 * What no single lifeline shows is checked here, per store, against the
 * commits of every lifeline:
 *
 *   - transaction ids are unique (commits and aborts share one counter);
 *   - a read's version 0 is the cell's default, read with the default's
 *     value (the declaration's constant expression); a version T > 0 is
 *     the transaction id of a commit of that store that wrote the cell,
 *     read with the value that commit wrote;
 *   - a committed attempt read only versions older than its commit;
 *   - from L1 up, a committed attempt's reads were still current when it
 *     committed: no commit with a transaction id strictly between a
 *     read's version and the attempt's commit wrote the cell (a stale
 *     generation, A1, is what L1 refuses); an abort is allowed (the
 *     refusal, after which the operation runs again);
 *   - at L0, which never refuses a commit, stale reads are allowed and an
 *     abort is a disagreement.
 *
 * Not checked: a retraction (L2 cascades, saga compensation) writes no
 * event, so a commit that was retracted later is read as standing; the
 * order of effects (L3) and the pinned registry (L4), which the trace
 * does not record. */
#include "zt.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* A commit or an abort of the store being checked, by transaction id. */
typedef struct Txn {
    int64_t txn;
    int ev; /* event id */
} Txn;

static int by_txn(const void *a, const void *b)
{
    int64_t x = ((const Txn *)a)->txn, y = ((const Txn *)b)->txn;
    return (x > y) - (x < y);
}

/* The entry of transaction id t, or NULL. */
static const Txn *find_txn(const Txn *v, int n, int64_t t)
{
    Txn key = {.txn = t};
    return bsearch(&key, v, (size_t)n, sizeof *v, by_txn);
}

static const char *commit_where(Check *c, const Ev *e)
{
    return zu_fmt(c->a, "commit #%" PRId64 " (lifeline %s event %d)", e->txn, c->m->lnames[e->life],
                  e->index);
}

/* The value of a cell's default (its declaration's constant expression)
 * as JSON; NULL when the evaluator cannot give it.  A new reference. */
static json_t *default_value(Check *c, const ZDecl *cell)
{
    Env env = {.c = c, .life = 0, .index = 0};
    Val v = zt_eval(&env, cell->expr);
    return zt_to_json(&v);
}

/* A read against the version it names (T = 0: the default). */
static void check_read(Check *c, const ZDecl *st, const Txn *txns, int ntx, const Ev *e)
{
    const ZDecl *cell = zt_cell(st, e->cell);
    if (e->version == 0) {
        json_t *d = default_value(c, cell);
        if (!d) {
            c->st.unverified++;
            return;
        }
        bool same = json_equal(d, e->rvalue);
        const char *dt = zt_jtext(c, d);
        json_decref(d);
        if (!same)
            zt_fail(c, e->line,
                    "%s: reads %s.%s = %s at version 0 (the default), but the cell's default "
                    "is %s",
                    zt_ev_where(c, e), st->name, e->cell, zt_jtext(c, e->rvalue), dt);
        c->st.values++;
        return;
    }
    const Txn *t = find_txn(txns, ntx, e->version);
    const Ev *w = t ? &c->ev[t->ev] : NULL;
    if (!w || w->kind != K_ST_COMMIT)
        zt_fail(c, e->line,
                "%s: reads %s.%s at version %" PRId64 ", which names no commit of store %s%s",
                zt_ev_where(c, e), st->name, e->cell, e->version, st->name,
                w ? " (an abort has that transaction id)" : "");
    json_t *v = json_object_get(w->cells, e->cell);
    if (!v)
        zt_fail(c, e->line, "%s: reads %s.%s at version %" PRId64 ", but %s did not write %s",
                zt_ev_where(c, e), st->name, e->cell, e->version, commit_where(c, w), e->cell);
    if (!json_equal(v, e->rvalue))
        zt_fail(c, e->line, "%s: reads %s.%s = %s at version %" PRId64 ", but %s wrote %s",
                zt_ev_where(c, e), st->name, e->cell, zt_jtext(c, e->rvalue), e->version,
                commit_where(c, w), zt_jtext(c, v));
    c->st.values++;
}

/* The reads of a committed attempt (chained from its commit, replay.c):
 * older than the commit, and from L1 up still current at it. */
static void check_committed(Check *c, const ZDecl *st, const Txn *txns, int ntx, const Ev *cm)
{
    for (int r = cm->op_prev; r >= 0; r = c->ev[r].op_prev) {
        const Ev *e = &c->ev[r];
        if (e->version >= cm->txn)
            zt_fail(c, e->line,
                    "%s: reads %s.%s at version %" PRId64 ", not older than its own attempt's "
                    "%s",
                    zt_ev_where(c, e), st->name, e->cell, e->version, commit_where(c, cm));
        if (st->level < 1) continue;
        /* the first transaction after the version read */
        int lo = 0, hi = ntx;
        while (lo < hi) {
            int mid = lo + (hi - lo) / 2;
            if (txns[mid].txn <= e->version)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (int k = lo; k < ntx && txns[k].txn < cm->txn; k++) {
            const Ev *w = &c->ev[txns[k].ev];
            if (w->kind != K_ST_COMMIT || !json_object_get(w->cells, e->cell)) continue;
            zt_fail(c, e->line,
                    "%s: a stale read: reads %s.%s at version %" PRId64 ", but %s wrote %s "
                    "before its attempt's %s, which store %s (L%d) must have refused",
                    zt_ev_where(c, e), st->name, e->cell, e->version, commit_where(c, w), e->cell,
                    commit_where(c, cm), st->name, st->level);
        }
    }
}

static void check_store(Check *c, const ZDecl *st, Txn **scratch, int *cap, bool committed)
{
    int ntx = 0;
    for (long i = 0; i < c->nev; i++) {
        const Ev *e = &c->ev[i];
        if ((e->kind != K_ST_COMMIT && e->kind != K_ST_ABORT) || strcmp(e->store, st->name))
            continue;
        if (e->kind == K_ST_ABORT && st->level < 1)
            zt_fail(c, e->line,
                    "%s: an abort of attempt %" PRId64 " on store %s, which is L0: L0 never "
                    "refuses a commit",
                    zt_ev_where(c, e), e->op_attempt, st->name);
        *scratch = zt_grow(*scratch, cap, ntx + 1, sizeof **scratch);
        (*scratch)[ntx++] = (Txn){.txn = e->txn, .ev = (int)i};
    }
    Txn *txns = *scratch;
    qsort(txns, (size_t)ntx, sizeof *txns, by_txn);
    for (int k = 1; k < ntx; k++)
        if (txns[k].txn == txns[k - 1].txn) {
            const Ev *a = &c->ev[txns[k - 1].ev], *b = &c->ev[txns[k].ev];
            if (b->line < a->line) {
                const Ev *t = a;
                a = b;
                b = t;
            }
            zt_fail(c, b->line,
                    "%s: %s of store %s with transaction id %" PRId64 ", which the %s of "
                    "lifeline %s event %d has already (transaction ids are unique per store)",
                    zt_ev_where(c, b), zt_kind_names[b->kind], st->name, b->txn,
                    zt_kind_names[a->kind], c->m->lnames[a->life], a->index);
        }
    if (!committed) {
        for (long i = 0; i < c->nev; i++) {
            const Ev *e = &c->ev[i];
            if (e->kind == K_ST_READ && !strcmp(e->store, st->name))
                check_read(c, st, txns, ntx, e);
        }
        return;
    }
    for (int k = 0; k < ntx; k++) {
        const Ev *e = &c->ev[txns[k].ev];
        if (e->kind == K_ST_COMMIT) check_committed(c, st, txns, ntx, e);
    }
}

static void check_stores(Check *c, bool committed)
{
    const ZtModel *m = c->m;
    if (m->prog->stores.len == 0) return;
    Txn *scratch = NULL;
    int cap = 0;
    jmp_buf saved;
    memcpy(saved, c->fail_jb, sizeof saved);
    bool failed = false;
    if (setjmp(c->fail_jb) == 0) {
        for (int i = 0; i < m->prog->stores.len; i++)
            check_store(c, ZU_VEC_AT(m->prog->stores, i), &scratch, &cap, committed);
    } else {
        failed = true;
    }
    memcpy(c->fail_jb, saved, sizeof saved);
    free(scratch);
    if (failed) longjmp(c->fail_jb, 1);
}

void zt_check_store_reads(Check *c) { check_stores(c, false); }

void zt_check_stores(Check *c) { check_stores(c, true); }
