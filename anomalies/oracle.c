/* oracle.c — the direct, quadratic transcription of Definitions 1-4.
 *
 * Used by the tests (as the reference the fast detectors must match,
 * witnesses included) and by the benchmark.  It is built into the separate
 * library zgc_anomalies_oracle so the zgc binary does not carry it.  Every
 * loop below is one quantifier of the paper's predicate; nothing is
 * indexed, sorted or hashed. */
#include "internal.h"

#include <stdlib.h>

/* The value record x writes to (or read from) cell c, or ZGAN_NONE when c
 * is not in the set. */
static uint32_t lookup(const zgan_history *h, zgan_span s, uint32_t c)
{
    const zgan_pair *p = zgan_pairs(h, s);
    for (uint32_t k = 0; k < s.len; k++)
        if (p[k].cell == c) return p[k].value;
    return ZGAN_NONE;
}

static bool member(const zgan_history *h, zgan_span s, uint32_t id)
{
    const uint32_t *ids = zgan_ids(h, s);
    for (uint32_t k = 0; k < s.len; k++)
        if (ids[k] == id) return true;
    return false;
}

/* Definition 1.  ∃ i ≠ j, agent(i) ≠ agent(j), c ∈ read_set(i) ∩ write_set(j):
 * read_time(i) < write_time(j) < write_time(i) ∧ read(i)[c] ≠ write(j)[c]. */
void zgan_oracle_a1(const zgan_history *h, bool same_agent, zgan_report *r)
{
    for (size_t i = 0; i < h->nrec; i++) {
        const zgan_record *ri = &h->rec[i];
        if (!(ri->flags & ZGAN_HAS_READ_TIME) || !(ri->flags & ZGAN_HAS_WRITE_TIME)) continue;
        const zgan_pair *reads = zgan_pairs(h, ri->reads);
        for (uint32_t k = 0; k < ri->reads.len; k++) {
            uint32_t c = reads[k].cell, best = ZGAN_NONE, best_value = ZGAN_NONE;
            for (size_t j = 0; j < h->nrec; j++) {
                const zgan_record *rj = &h->rec[j];
                if (j == i || (!same_agent && ri->agent == rj->agent)) continue;
                if (!(rj->flags & ZGAN_HAS_WRITE_TIME)) continue;
                uint32_t wv = lookup(h, rj->writes, c);
                if (wv == ZGAN_NONE) continue;
                if (!(ri->read_time < rj->write_time && rj->write_time < ri->write_time)) continue;
                if (reads[k].value == wv) continue;
                if (best == ZGAN_NONE || rj->write_time < h->rec[best].write_time) {
                    best = (uint32_t)j; /* j ascends, so ties keep the lower index */
                    best_value = wv;
                }
            }
            if (best != ZGAN_NONE) {
                zgan_witness w = zgan_witness_none();
                w.record = (uint32_t)i;
                w.other = best;
                w.cell = c;
                w.value = reads[k].value;
                w.value2 = best_value;
                zgan_report_add(r, ZGAN_A1, w);
            }
        }
    }
}

/* Definition 2.  planned ≠ NULL ∧ planned ∈ read_registry ∧ planned ∉ write_registry. */
void zgan_oracle_a2(const zgan_history *h, zgan_report *r)
{
    for (size_t i = 0; i < h->nrec; i++) {
        const zgan_record *x = &h->rec[i];
        if (!(x->flags & ZGAN_HAS_READ_REG) || !(x->flags & ZGAN_HAS_WRITE_REG)) continue;
        if (x->planned_tool != ZGAN_NULL && member(h, x->read_reg, x->planned_tool) &&
            !member(h, x->write_reg, x->planned_tool)) {
            zgan_witness w = zgan_witness_none();
            w.record = (uint32_t)i;
            w.value = x->planned_tool;
            zgan_report_add(r, ZGAN_A2, w);
        }
    }
}

/* Definition 3.  ∃ j, p: ¬aborted(j) ∧ p ∈ preds(j) ∧ aborted(p). */
void zgan_oracle_a3_precise(const zgan_history *h, zgan_report *r)
{
    for (size_t j = 0; j < h->nrec; j++) {
        const zgan_record *rj = &h->rec[j];
        if (rj->flags & ZGAN_ABORTED) continue;
        const uint32_t *preds = zgan_ids(h, rj->preds);
        for (uint32_t k = 0; k < rj->preds.len; k++)
            for (size_t p = 0; p < h->nrec; p++)
                if (h->rec[p].id == preds[k] && (h->rec[p].flags & ZGAN_ABORTED)) {
                    zgan_witness w = zgan_witness_none();
                    w.record = (uint32_t)j;
                    w.other = (uint32_t)p;
                    zgan_report_add(r, ZGAN_A3, w);
                }
    }
}

/* Residue, on the committed (non-aborted) records:
 * ∃ j, c ∈ read_set(j): v = read(j)[c] ≠ NULL ∧ ∀ k ≠ j:
 * ¬(c ∈ write_set(k) ∧ write_time(k) ≤ read_time(j) ∧ write(k)[c] = v). */
void zgan_oracle_a3_residue(const zgan_history *h, zgan_report *r)
{
    for (size_t j = 0; j < h->nrec; j++) {
        const zgan_record *rj = &h->rec[j];
        if ((rj->flags & ZGAN_ABORTED) || !(rj->flags & ZGAN_HAS_READ_TIME)) continue;
        const zgan_pair *reads = zgan_pairs(h, rj->reads);
        for (uint32_t c = 0; c < rj->reads.len; c++) {
            if (reads[c].value == ZGAN_NULL) continue;
            bool produced = false;
            for (size_t k = 0; k < h->nrec && !produced; k++) {
                const zgan_record *rk = &h->rec[k];
                if (k == j || (rk->flags & ZGAN_ABORTED) || !(rk->flags & ZGAN_HAS_WRITE_TIME))
                    continue;
                produced = lookup(h, rk->writes, reads[c].cell) == reads[c].value &&
                           rk->write_time <= rj->read_time;
            }
            if (!produced) {
                zgan_witness w = zgan_witness_none();
                w.record = (uint32_t)j;
                w.cell = reads[c].cell;
                w.value = reads[c].value;
                zgan_report_add(r, ZGAN_A3, w);
            }
        }
    }
}

static bool same_pair(zgan_pair a, zgan_pair b) { return a.cell == b.cell && a.value == b.value; }

/* co is a permutation of io: every element of co matched to a distinct
 * element of io, and the lengths agree. */
static bool permutation(const zgan_pair *io, uint32_t nio, const zgan_pair *co, uint32_t nco)
{
    if (nio != nco) return false;
    bool *used = zgan_xcalloc(nio, sizeof *used), all = true;
    for (uint32_t a = 0; a < nco && all; a++) {
        bool matched = false;
        for (uint32_t b = 0; b < nio && !matched; b++)
            if (!used[b] && same_pair(co[a], io[b])) used[b] = matched = true;
        all = matched;
    }
    free(used);
    return all;
}

/* Definition 4.  |io| ≥ 2 ∧ co ≠ io ∧ co is a permutation of io.
 * (any_diff: io ≠ ⟨⟩ ∧ co ≠ io.) */
void zgan_oracle_a6(const zgan_history *h, bool any_diff, zgan_report *r)
{
    for (size_t i = 0; i < h->nrec; i++) {
        const zgan_record *x = &h->rec[i];
        const zgan_pair *io = zgan_pairs(h, x->io), *co = zgan_pairs(h, x->co);
        uint32_t pos = 0;
        while (pos < x->io.len && pos < x->co.len && same_pair(io[pos], co[pos])) pos++;
        bool equal = pos == x->io.len && pos == x->co.len;
        bool fires = any_diff
                         ? x->io.len >= 1 && !equal
                         : x->io.len >= 2 && !equal && permutation(io, x->io.len, co, x->co.len);
        if (!fires) continue;
        zgan_witness w = zgan_witness_none();
        w.record = (uint32_t)i;
        w.pos = pos;
        if (pos < x->io.len) {
            w.cell = io[pos].cell;
            w.value = io[pos].value;
        }
        if (pos < x->co.len) {
            w.cell2 = co[pos].cell;
            w.value2 = co[pos].value;
        }
        zgan_report_add(r, ZGAN_A6, w);
    }
}

void zgan_oracle(const zgan_history *h, const zgan_options *opt, zgan_report *out)
{
    zgan_report_init(out);
    out->a3_used = zgan_a3_resolve(h, opt->a3);
    zgan_oracle_a1(h, opt->a1_same_agent, out);
    zgan_oracle_a2(h, out);
    if (out->a3_used == ZGAN_A3_PRECISE)
        zgan_oracle_a3_precise(h, out);
    else
        zgan_oracle_a3_residue(h, out);
    zgan_oracle_a6(h, opt->a6_any_diff, out);
    out->level = zgan_level(out->n);
}
