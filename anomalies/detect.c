/* detect.c — zgan_detect, and the fast detectors for A2, A3 and A6.
 *
 * All three are linear in the size of the history (expected, with
 * hashing); A1 lives in detect_a1.c.  Witness definitions and their order
 * are fixed in anomalies.h and reproduced exactly by oracle.c. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

zgan_a3_mode zgan_a3_resolve(const zgan_history *h, zgan_a3_mode mode)
{
    if (mode == ZGAN_A3_AUTO) return h->provenance ? ZGAN_A3_PRECISE : ZGAN_A3_RESIDUE;
    return mode;
}

void zgan_detect(const zgan_history *h, const zgan_options *opt, zgan_report *out)
{
    zgan_report_init(out);
    out->a3_used = zgan_a3_resolve(h, opt->a3);
    zgan_detect_a1(h, opt->a1_same_agent, out);
    zgan_detect_a2(h, out);
    if (out->a3_used == ZGAN_A3_PRECISE)
        zgan_detect_a3_precise(h, out);
    else
        zgan_detect_a3_residue(h, out);
    zgan_detect_a6(h, opt->a6_any_diff, out);
    out->level = zgan_level(out->n);
}

/* ------------------------------------------------------------------ */
/* a hash map from (cell, value) to a dense index                       */

typedef struct {
    uint64_t *keys;
    uint32_t *idx; /* ZGAN_NONE = empty slot */
    size_t mask;
    uint32_t n;
} pairmap;

static uint64_t pair_key(zgan_pair p) { return (uint64_t)p.cell << 32 | p.value; }

static size_t pair_hash(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (size_t)k;
}

static void pairmap_init(pairmap *m, size_t expected)
{
    size_t cap = 16;
    while (cap < 2 * expected + 2) cap *= 2;
    m->keys = zgan_xmalloc(cap * sizeof *m->keys);
    m->idx = zgan_xmalloc(cap * sizeof *m->idx);
    memset(m->idx, 0xff, cap * sizeof *m->idx);
    m->mask = cap - 1;
    m->n = 0;
}

static void pairmap_free(pairmap *m)
{
    free(m->keys);
    free(m->idx);
}

static size_t pairmap_slot(const pairmap *m, uint64_t key)
{
    size_t i = pair_hash(key) & m->mask;
    while (m->idx[i] != ZGAN_NONE && m->keys[i] != key) i = (i + 1) & m->mask;
    return i;
}

static uint32_t pairmap_find(const pairmap *m, zgan_pair p)
{
    return m->idx[pairmap_slot(m, pair_key(p))];
}

/* The index of p, adding it if new (the map never needs to grow: it is
 * sized for every key the caller can insert). */
static uint32_t pairmap_insert(pairmap *m, zgan_pair p, bool *fresh)
{
    uint64_t key = pair_key(p);
    size_t i = pairmap_slot(m, key);
    *fresh = m->idx[i] == ZGAN_NONE;
    if (*fresh) {
        m->keys[i] = key;
        m->idx[i] = m->n++;
    }
    return m->idx[i];
}

/* ------------------------------------------------------------------ */
/* A2 phantom-tool                                                      */

static bool has_id(const zgan_history *h, zgan_span s, uint32_t id)
{
    const uint32_t *ids = zgan_ids(h, s);
    for (uint32_t i = 0; i < s.len; i++)
        if (ids[i] == id) return true;
    return false;
}

void zgan_detect_a2(const zgan_history *h, zgan_report *r)
{
    for (size_t i = 0; i < h->nrec; i++) {
        const zgan_record *x = &h->rec[i];
        uint32_t t = x->planned_tool;
        if (t == ZGAN_NULL || !(x->flags & ZGAN_HAS_READ_REG) || !(x->flags & ZGAN_HAS_WRITE_REG))
            continue;
        if (has_id(h, x->read_reg, t) && !has_id(h, x->write_reg, t)) {
            zgan_witness w = zgan_witness_none();
            w.record = (uint32_t)i;
            w.value = t;
            zgan_report_add(r, ZGAN_A2, w);
        }
    }
}

/* ------------------------------------------------------------------ */
/* A3 causal-cascade, precise (Definition 3)                            */

void zgan_detect_a3_precise(const zgan_history *h, zgan_report *r)
{
    size_t nid = h->strings.n;
    uint32_t *owner = zgan_xmalloc(nid * sizeof *owner); /* txn id -> record */
    memset(owner, 0xff, nid * sizeof *owner);
    for (size_t i = 0; i < h->nrec; i++)
        if (h->rec[i].id != ZGAN_NONE) owner[h->rec[i].id] = (uint32_t)i;
    for (size_t j = 0; j < h->nrec; j++) {
        const zgan_record *x = &h->rec[j];
        if (x->flags & ZGAN_ABORTED) continue;
        const uint32_t *preds = zgan_ids(h, x->preds); /* already a set */
        for (uint32_t k = 0; k < x->preds.len; k++) {
            uint32_t p = owner[preds[k]];
            if (p != ZGAN_NONE && (h->rec[p].flags & ZGAN_ABORTED)) {
                zgan_witness w = zgan_witness_none();
                w.record = (uint32_t)j;
                w.other = p;
                zgan_report_add(r, ZGAN_A3, w);
            }
        }
    }
    free(owner);
}

/* ------------------------------------------------------------------ */
/* A3 residue: a committed read of c = v (v not null) that no other     */
/* committed record wrote at or before the read.  "Committed" = not     */
/* aborted, so the residue is taken on the projected flat history.      */

typedef struct {
    int64_t t1, t2; /* the two earliest write times of (c, v) ... */
    uint32_t r1;    /* ... t1 by record r1, t2 by another record */
    bool has2;
} producers;

void zgan_detect_a3_residue(const zgan_history *h, zgan_report *r)
{
    size_t nwrites = 0;
    for (size_t k = 0; k < h->nrec; k++) nwrites += h->rec[k].writes.len;
    pairmap m;
    pairmap_init(&m, nwrites);
    producers *prod = zgan_xmalloc((nwrites ? nwrites : 1) * sizeof *prod);

    for (size_t k = 0; k < h->nrec; k++) {
        const zgan_record *x = &h->rec[k];
        if ((x->flags & ZGAN_ABORTED) || !(x->flags & ZGAN_HAS_WRITE_TIME)) continue;
        const zgan_pair *ws = zgan_pairs(h, x->writes);
        for (uint32_t i = 0; i < x->writes.len; i++) {
            if (ws[i].value == ZGAN_NULL) continue; /* never matches a non-null read */
            bool fresh;
            producers *p = &prod[pairmap_insert(&m, ws[i], &fresh)];
            int64_t t = x->write_time;
            if (fresh) {
                *p = (producers){.t1 = t, .r1 = (uint32_t)k};
            } else if (t < p->t1) {
                p->t2 = p->t1;
                p->has2 = true;
                p->t1 = t;
                p->r1 = (uint32_t)k;
            } else if (!p->has2 || t < p->t2) {
                p->t2 = t;
                p->has2 = true;
            }
        }
    }

    for (size_t j = 0; j < h->nrec; j++) {
        const zgan_record *x = &h->rec[j];
        if ((x->flags & ZGAN_ABORTED) || !(x->flags & ZGAN_HAS_READ_TIME)) continue;
        const zgan_pair *rs = zgan_pairs(h, x->reads);
        for (uint32_t i = 0; i < x->reads.len; i++) {
            if (rs[i].value == ZGAN_NULL) continue;
            uint32_t at = pairmap_find(&m, rs[i]);
            bool produced = false;
            if (at != ZGAN_NONE) {
                const producers *p = &prod[at];
                if (p->r1 != j)
                    produced = p->t1 <= x->read_time;
                else
                    produced = p->has2 && p->t2 <= x->read_time;
            }
            if (!produced) {
                zgan_witness w = zgan_witness_none();
                w.record = (uint32_t)j;
                w.cell = rs[i].cell;
                w.value = rs[i].value;
                zgan_report_add(r, ZGAN_A3, w);
            }
        }
    }
    free(prod);
    pairmap_free(&m);
}

/* ------------------------------------------------------------------ */
/* A6 tool-effect reordering                                            */

/* The first position where io and co differ (the shorter length if one is
 * a prefix of the other); UINT32_MAX if they are equal. */
static uint32_t first_difference(const zgan_pair *io, uint32_t nio, const zgan_pair *co,
                                 uint32_t nco)
{
    uint32_t n = nio < nco ? nio : nco;
    for (uint32_t k = 0; k < n; k++)
        if (io[k].cell != co[k].cell || io[k].value != co[k].value) return k;
    return nio == nco ? UINT32_MAX : n;
}

static void a6_witness(const zgan_history *h, uint32_t record, uint32_t pos, zgan_witness *w)
{
    const zgan_record *x = &h->rec[record];
    *w = zgan_witness_none();
    w->record = record;
    w->pos = pos;
    if (pos < x->io.len) {
        w->cell = zgan_pairs(h, x->io)[pos].cell;
        w->value = zgan_pairs(h, x->io)[pos].value;
    }
    if (pos < x->co.len) {
        w->cell2 = zgan_pairs(h, x->co)[pos].cell;
        w->value2 = zgan_pairs(h, x->co)[pos].value;
    }
}

void zgan_detect_a6(const zgan_history *h, bool any_diff, zgan_report *r)
{
    size_t nio = 0;
    for (size_t i = 0; i < h->nrec; i++) nio += h->rec[i].io.len;
    pairmap m;
    pairmap_init(&m, nio);
    int64_t *count = zgan_xcalloc(nio ? nio : 1, sizeof *count);

    for (size_t i = 0; i < h->nrec; i++) {
        const zgan_record *x = &h->rec[i];
        const zgan_pair *io = zgan_pairs(h, x->io), *co = zgan_pairs(h, x->co);
        if (any_diff ? x->io.len == 0 : (x->io.len < 2 || x->co.len != x->io.len)) continue;
        uint32_t pos = first_difference(io, x->io.len, co, x->co.len);
        if (pos == UINT32_MAX) continue;
        bool fires = true;
        if (!any_diff) { /* co must be a permutation of io (same lengths here) */
            bool fresh;
            for (uint32_t k = 0; k < x->io.len; k++) count[pairmap_insert(&m, io[k], &fresh)]++;
            for (uint32_t k = 0; k < x->co.len && fires; k++) {
                uint32_t at = pairmap_find(&m, co[k]);
                if (at == ZGAN_NONE || count[at] == 0)
                    fires = false;
                else
                    count[at]--;
            }
            for (uint32_t k = 0; k < x->io.len; k++) count[pairmap_find(&m, io[k])] = 0;
        }
        if (fires) {
            zgan_witness w;
            a6_witness(h, (uint32_t)i, pos, &w);
            zgan_report_add(r, ZGAN_A6, w);
        }
    }
    free(count);
    pairmap_free(&m);
}
