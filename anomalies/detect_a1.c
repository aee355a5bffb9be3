/* detect_a1.c — A1 stale-generation in O(n log n).
 *
 * Definition 1: records i, j with different agents and a cell c read by i
 * and written by j such that
 *
 *     read_time(i) < write_time(j) < write_time(i)
 *     and  read_values(i)[c] != write_values(j)[c].
 *
 * Witness: one per (reader i, cell c) that has such a j, naming the j with
 * the smallest (write_time, record index).
 *
 * Method.  All writes are put in one array W sorted by (cell, time,
 * record), so the writes of c inside i's window are a contiguous range
 * W[L, R) found by two binary searches.  A write in the range fails to
 * qualify when it has i's agent or i's value; with three further orders of
 * W's positions — by (cell, agent), by (cell, value), by (cell, agent,
 * value) — the number of failing writes in any W[L, m) is
 *
 *     #agent + #value - #(agent and value)
 *
 * each counted by two binary searches.  So "is there a qualifying write in
 * W[L, m)" costs O(log n), and the earliest one is found by galloping
 * from L and bisecting (after a look at the window's first few writes,
 * where it most often is).  Without the agent conjunct (--a1-same-agent)
 * only the value count is needed.  The three orders are built with stable
 * counting sorts over the dense ids, in linear time. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    int64_t time;
    uint32_t cell, agent, value, rec;
} write_entry;

typedef struct {
    const write_entry *w;
    size_t n;
    uint32_t *lo, *hi;  /* cell id -> block of W (and of every order) */
    uint32_t *by_agent; /* positions of W sorted by (cell, agent, pos) */
    uint32_t *by_value; /* ... by (cell, value, pos) */
    uint32_t *by_both;  /* ... by (cell, agent, value, pos) */
} write_index;

static int cmp_write(const void *pa, const void *pb)
{
    const write_entry *a = pa, *b = pb;
    if (a->cell != b->cell) return a->cell < b->cell ? -1 : 1;
    if (a->time != b->time) return a->time < b->time ? -1 : 1;
    return a->rec < b->rec ? -1 : a->rec > b->rec;
}

/* Stable counting sort of the positions in `order` by field `f` of W. */
enum { F_CELL, F_AGENT, F_VALUE };

static uint32_t field(const write_entry *e, int f)
{
    return f == F_CELL ? e->cell : f == F_AGENT ? e->agent : e->value;
}

static void sort_by(const write_entry *w, uint32_t *order, uint32_t *tmp, size_t n, int f,
                    size_t *count, size_t nids)
{
    memset(count, 0, (nids + 1) * sizeof *count);
    for (size_t i = 0; i < n; i++) count[field(&w[order[i]], f) + 1]++;
    for (size_t k = 0; k < nids; k++) count[k + 1] += count[k];
    for (size_t i = 0; i < n; i++) tmp[count[field(&w[order[i]], f)]++] = order[i];
    memcpy(order, tmp, n * sizeof *order);
}

static uint32_t *sorted_positions(const write_entry *w, size_t n, const int *fields, int nf,
                                  uint32_t *tmp, size_t *count, size_t nids)
{
    uint32_t *order = zgan_xmalloc((n ? n : 1) * sizeof *order);
    for (size_t i = 0; i < n; i++) order[i] = (uint32_t)i;
    for (int k = nf - 1; k >= 0; k--) /* least significant key first */
        sort_by(w, order, tmp, n, fields[k], count, nids);
    return order;
}

/* ---- building the index on the processors there are ---- */

/* Large histories are worked on in parallel (a history of 10^6 records
 * has 1.5 million writes and 2 million reads); below these sizes one
 * thread does it all. */
enum { PAR_WRITES = 1 << 16, PAR_RECORDS = 1 << 15 };

typedef struct {
    write_entry *w;
    size_t n;
} sort_job;

static void sort_one(void *p)
{
    sort_job *j = p;
    qsort(j->w, j->n, sizeof *j->w, cmp_write);
}

/* W sorted by (cell, time, record): parts sorted in parallel, then merged
 * (the order is total, so the result is the one qsort gives). */
static void sort_writes(write_entry *w, size_t n)
{
    int t = n >= PAR_WRITES ? zgan_threads() : 1;
    if (t < 2) {
        qsort(w, n, sizeof *w, cmp_write);
        return;
    }
    t = 2; /* two halves, one merge */
    sort_job j[2] = {{w, n / 2}, {w + n / 2, n - n / 2}};
    zgan_parallel(sort_one, j, sizeof j[0], t);
    write_entry *out = zgan_xmalloc(n * sizeof *out);
    size_t a = 0, b = n / 2, k = 0;
    while (a < n / 2 && b < n) out[k++] = cmp_write(&w[b], &w[a]) < 0 ? w[b++] : w[a++];
    while (a < n / 2) out[k++] = w[a++];
    while (b < n) out[k++] = w[b++];
    memcpy(w, out, n * sizeof *w);
    free(out);
}

typedef struct {
    const write_entry *w;
    size_t n, nids;
    const int *fields;
    int nf;
    uint32_t *out;
} order_job;

static void order_one(void *p)
{
    order_job *j = p;
    uint32_t *tmp = zgan_xmalloc((j->n ? j->n : 1) * sizeof *tmp);
    size_t *count = zgan_xmalloc((j->nids + 1) * sizeof *count);
    j->out = sorted_positions(j->w, j->n, j->fields, j->nf, tmp, count, j->nids);
    free(tmp);
    free(count);
}

static void index_build(const zgan_history *h, write_index *x)
{
    size_t n = 0;
    for (size_t i = 0; i < h->nrec; i++)
        if (h->rec[i].flags & ZGAN_HAS_WRITE_TIME) n += h->rec[i].writes.len;
    write_entry *w = zgan_xmalloc((n ? n : 1) * sizeof *w);
    n = 0;
    for (size_t i = 0; i < h->nrec; i++) {
        const zgan_record *r = &h->rec[i];
        if (!(r->flags & ZGAN_HAS_WRITE_TIME)) continue;
        const zgan_pair *ws = zgan_pairs(h, r->writes);
        for (uint32_t k = 0; k < r->writes.len; k++)
            w[n++] = (write_entry){r->write_time, ws[k].cell, r->agent, ws[k].value, (uint32_t)i};
    }
    sort_writes(w, n);

    size_t nids = h->strings.n;
    x->w = w;
    x->n = n;
    x->lo = zgan_xcalloc(nids, sizeof *x->lo);
    x->hi = zgan_xcalloc(nids, sizeof *x->hi);
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || w[i - 1].cell != w[i].cell) x->lo[w[i].cell] = (uint32_t)i;
        x->hi[w[i].cell] = (uint32_t)(i + 1);
    }
    static const int agent[] = {F_CELL, F_AGENT}, value[] = {F_CELL, F_VALUE},
                     both[] = {F_CELL, F_AGENT, F_VALUE};
    order_job j[3] = {
        {w, n, nids, both, 3, NULL}, {w, n, nids, agent, 2, NULL}, {w, n, nids, value, 2, NULL}};
    int t = n >= PAR_WRITES ? zgan_threads() : 1;
    zgan_parallel(order_one, j, sizeof j[0], t >= 3 ? 3 : t);
    if (t == 2) {
        order_one(&j[2]); /* by_both and by_agent took as long as by_value */
    } else if (t < 2) {
        order_one(&j[1]);
        order_one(&j[2]);
    }
    x->by_both = j[0].out;
    x->by_agent = j[1].out;
    x->by_value = j[2].out;
}

static void index_free(write_index *x)
{
    free((void *)x->w);
    free(x->lo);
    free(x->hi);
    free(x->by_agent);
    free(x->by_value);
    free(x->by_both);
}

/* ---- binary searches ---- */

/* First position in the cell block [lo, hi) of W with time > t (strict)
 * or time >= t. */
static size_t first_after(const write_entry *w, size_t lo, size_t hi, int64_t t, bool strict)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w[mid].time < t || (strict && w[mid].time == t))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* A key of one of the orders: the (agent, value) fields compared, then
 * the position. */
typedef struct {
    bool agent, value;
    uint32_t a, v;
} group;

static bool before(const write_entry *w, uint32_t p, const group *g, uint32_t pos)
{
    const write_entry *e = &w[p];
    if (g->agent && e->agent != g->a) return e->agent < g->a;
    if (g->value && e->value != g->v) return e->value < g->v;
    return p < pos;
}

/* Number of entries of `order`'s cell block [lo, hi) in group g whose
 * position is below pos. */
static size_t rank(const write_entry *w, const uint32_t *order, size_t lo, size_t hi,
                   const group *g, uint32_t pos)
{
    size_t a = lo, b = hi;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (before(w, order[mid], g, pos))
            a = mid + 1;
        else
            b = mid;
    }
    return a;
}

typedef struct {
    const write_index *x;
    size_t lo, hi; /* the cell's block */
    group ga, gv, gav;
    bool same_agent;
} query;

/* Writes in W[L, m) that do NOT qualify (same agent or same value). */
static size_t failing(const query *q, const size_t base[3], uint32_t m)
{
    const write_index *x = q->x;
    size_t nv = rank(x->w, x->by_value, q->lo, q->hi, &q->gv, m) - base[1];
    if (q->same_agent) return nv;
    size_t na = rank(x->w, x->by_agent, q->lo, q->hi, &q->ga, m) - base[0];
    size_t nav = rank(x->w, x->by_both, q->lo, q->hi, &q->gav, m) - base[2];
    return na + nv - nav;
}

static bool qualifies_upto(const query *q, const size_t base[3], uint32_t L, uint32_t m)
{
    return (m - L) > failing(q, base, m);
}

/* The first A1_SCAN writes of a window are looked at one by one before
 * the counts are asked: the earliest qualifying write is most often among
 * them, and a direct look costs less than the six binary searches of one
 * count. */
enum { A1_SCAN = 8 };

/* The position of the earliest qualifying write in W[L, R), or ZGAN_NONE. */
static uint32_t earliest(const query *q, uint32_t L, uint32_t R)
{
    const write_index *x = q->x;
    uint32_t scan_end = R - L > A1_SCAN ? L + A1_SCAN : R;
    for (uint32_t p = L; p < scan_end; p++) {
        const write_entry *e = &x->w[p];
        if (e->value != q->gv.v && (q->same_agent || e->agent != q->ga.a)) return p;
    }
    if (scan_end == R) return ZGAN_NONE;
    L = scan_end; /* none qualifies before: the counts start here */
    size_t base[3] = {0, 0, 0};
    base[1] = rank(x->w, x->by_value, q->lo, q->hi, &q->gv, L);
    if (!q->same_agent) {
        base[0] = rank(x->w, x->by_agent, q->lo, q->hi, &q->ga, L);
        base[2] = rank(x->w, x->by_both, q->lo, q->hi, &q->gav, L);
    }
    if (!qualifies_upto(q, base, L, R)) return ZGAN_NONE;
    /* gallop: none qualifies in [L, lo); one does in [L, hi) */
    uint32_t lo = L, hi = L + 1, step = 1;
    while (!qualifies_upto(q, base, L, hi)) {
        lo = hi;
        step = step < (UINT32_MAX >> 1) ? 2 * step : step;
        hi = (R - L > step) ? L + step : R;
    }
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (qualifies_upto(q, base, L, mid))
            hi = mid;
        else
            lo = mid;
    }
    return hi - 1;
}

/* The witnesses of the readers in records [from, to), in order. */
typedef struct {
    const zgan_history *h;
    const write_index *x;
    bool same_agent;
    size_t from, to;
    zgan_report r;
} query_job;

static void query_range(void *p)
{
    query_job *j = p;
    const zgan_history *h = j->h;
    const write_index *x = j->x;
    for (size_t i = j->from; i < j->to; i++) {
        const zgan_record *rd = &h->rec[i];
        if (!(rd->flags & ZGAN_HAS_READ_TIME) || !(rd->flags & ZGAN_HAS_WRITE_TIME) ||
            rd->read_time >= rd->write_time)
            continue;
        const zgan_pair *rs = zgan_pairs(h, rd->reads);
        for (uint32_t k = 0; k < rd->reads.len; k++) {
            uint32_t c = rs[k].cell;
            query q = {.x = x, .lo = x->lo[c], .hi = x->hi[c], .same_agent = j->same_agent};
            if (q.lo == q.hi) continue;
            uint32_t L = (uint32_t)first_after(x->w, q.lo, q.hi, rd->read_time, true);
            uint32_t R = (uint32_t)first_after(x->w, L, q.hi, rd->write_time, false);
            if (L >= R) continue;
            q.ga = (group){.agent = true, .a = rd->agent};
            q.gv = (group){.value = true, .v = rs[k].value};
            q.gav = (group){.agent = true, .value = true, .a = rd->agent, .v = rs[k].value};
            uint32_t at = earliest(&q, L, R);
            if (at == ZGAN_NONE) continue;
            zgan_witness w = zgan_witness_none();
            w.record = (uint32_t)i;
            w.other = x->w[at].rec;
            w.cell = c;
            w.value = rs[k].value;
            w.value2 = x->w[at].value;
            zgan_report_add(&j->r, ZGAN_A1, w);
        }
    }
}

void zgan_detect_a1(const zgan_history *h, bool same_agent, zgan_report *r)
{
    write_index x;
    index_build(h, &x);
    /* the readers in consecutive ranges, one per thread; their witnesses
     * joined in the order of the ranges are the witnesses in record order */
    query_job j[ZGAN_MAX_THREADS];
    int t = h->nrec >= PAR_RECORDS ? zgan_threads() : 1;
    for (int k = 0; k < t; k++) {
        j[k] = (query_job){.h = h,
                           .x = &x,
                           .same_agent = same_agent,
                           .from = h->nrec * (size_t)k / (size_t)t,
                           .to = h->nrec * (size_t)(k + 1) / (size_t)t};
        zgan_report_init(&j[k].r);
    }
    zgan_parallel(query_range, j, sizeof j[0], t);
    for (int k = 0; k < t; k++) {
        for (size_t i = 0; i < j[k].r.n[ZGAN_A1]; i++)
            zgan_report_add(r, ZGAN_A1, j[k].r.w[ZGAN_A1][i]);
        zgan_report_free(&j[k].r);
    }
    index_free(&x);
}
