/* monitor.c — the CPL monitor: Algorithm 1 of the CPL paper, one instance
 * per lifeline (struct zri_monitor, rt.h), driven by the core's events,
 * on the compiler's per-lifeline plan (compiler/plan.c; zgrt_abi.h:
 * zgrt_keep, zgrt_edge).
 *
 * State of lifeline `self` (zgrt_program.keeps[self]): the clock entries
 * vc of the lifelines it keeps entries about (itself included), one byte
 * per view (B, ψ) and one value per variable view (B, x) it keeps (B ≠
 * self), and the values val / old of the subformulas it evaluates at the
 * current and the previous event.  A lifeline without a monitor keeps
 * nothing.  In a traced run (zri_plan.full) the clock is the whole vector
 * clock (index = lifeline), which every trace line shows.
 *
 * Algorithm 1, as the core runs it for every event of `self` (core.c,
 * do_event, under the lifeline's lock while a parallel region runs):
 *   receive:  for every group of the message's edge (one per lifeline B
 *             the edge carries) with msg.vc[B] > vc[B], copy B's entries
 *             from the message into their slots, and vc[B] = msg.vc[B]
 *             (zri_monitor_merge); a full clock is merged entry by entry;
 *   event:    vc[self] += 1 (the core, inline: every event takes it);
 *             the store effect of the event (the core);
 *             old = the previous val; val = evals[self](…) — the
 *             lifeline's generated evaluation (Algorithm 2), reading
 *             old, the store and the accessors below (zri_monitor_update);
 *   send:     the message gets the edge's clock entries and entries, each
 *             from the position the plan names: the sender's own views
 *             from val, its own variables from the store, the others from
 *             its slots (zri_monitor_stamp).
 * The plan's carry lists make both loops index copies: no set logic per
 * message.  Without CPL guards there is nothing to keep: messages carry
 * the vector clock only in a traced run.
 */
#include <stdlib.h>
#include <string.h>

#include "rt.h"

/* ---- the plan ---------------------------------------------------------- */

const zgrt_edge *zri_program_edge(const zgrt_program *p, int32_t from, int32_t to)
{
    int32_t lo = 0, hi = p->edges ? p->nedges : 0;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        const zgrt_edge *e = &p->edges[mid];
        if (e->from < from || (e->from == from && e->to < to))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (p->edges && lo < p->nedges && p->edges[lo].from == from && p->edges[lo].to == to)
        return &p->edges[lo];
    return NULL;
}

size_t zri_msg_meta(const zgrt_program *p, int32_t from, int32_t to, int full, int32_t *form,
                    int32_t *nvc, int32_t *nviews, int32_t *nvarviews)
{
    const zgrt_edge *e = zri_program_edge(p, from, to);
    *nviews = e ? e->nviews : 0;
    *nvarviews = e ? e->nvarviews : 0;
    if (full) {
        *form = ZRI_META_FULL;
        *nvc = p->nlifelines;
    } else {
        *nvc = e ? e->ngroups : 0;
        *form = *nvc > 0 ? ZRI_META_EDGE : ZRI_META_NONE;
    }
    return 8 * (size_t)*nvc + (size_t)*nviews + 16 * (size_t)*nvarviews;
}

/* What lifeline l keeps (nothing when the program has no keep tables). */
static const zgrt_keep *keep_of(const zgrt_program *p, int32_t l)
{
    static const zgrt_keep none;
    return p->keeps ? &p->keeps[l] : &none;
}

void zri_plan_init(zri_plan *pl, const zgrt_program *p, int full)
{
    size_t nl = (size_t)p->nlifelines;
    pl->prog = p;
    pl->nl = p->nlifelines;
    pl->on = p->monitor != 0;
    pl->full = full;
    /* zri_program_check validated the tables */
    pl->edge = zri_xcalloc(nl * nl, sizeof *pl->edge);
    pl->groups = zri_xcalloc(nl * nl, sizeof *pl->groups);
    pl->vcpos = zri_xmalloc(nl * nl * sizeof *pl->vcpos);
    pl->shape = zri_xcalloc(nl * nl, sizeof *pl->shape);
    for (size_t f = 0; f < nl; f++)
        for (size_t t = 0; t < nl; t++) {
            zri_msg *sh = &pl->shape[f * nl + t];
            zri_msg_meta(p, (int32_t)f, (int32_t)t, full, &sh->has_meta, &sh->nvc, &sh->nviews,
                         &sh->nvarviews);
        }
    for (size_t l = 0; l < nl; l++) {
        const zgrt_keep *k = keep_of(p, (int32_t)l);
        for (size_t b = 0; b < nl; b++) pl->vcpos[l * nl + b] = full ? (int32_t)b : -1;
        for (int32_t i = 0; i < k->nvc && !full; i++) pl->vcpos[l * nl + (size_t)k->vc[i]] = i;
    }
    for (int32_t i = 0; i < p->nedges; i++) {
        const zgrt_edge *e = &p->edges[i];
        size_t at = (size_t)e->from * nl + (size_t)e->to;
        pl->edge[at] = e;
        zri_group *gs = zri_xcalloc((size_t)e->ngroups + 1, sizeof *gs);
        for (int32_t k = 0, v = 0, vv = 0; k < e->ngroups; k++) {
            const zgrt_group *g = &e->groups[k];
            gs[k] = (zri_group){.mvc = full ? g->lifeline : k,
                                .svc = full ? g->lifeline : g->from_vc,
                                .rvc = full ? g->lifeline : g->to_vc,
                                .v0 = v,
                                .v1 = g->views_end,
                                .vv0 = vv,
                                .vv1 = g->varviews_end,
                                .own = g->lifeline == e->from};
            v = g->views_end;
            vv = g->varviews_end;
        }
        pl->groups[at] = gs;
    }
}

void zri_plan_free(zri_plan *pl)
{
    size_t n = (size_t)pl->nl * (size_t)pl->nl;
    for (size_t i = 0; pl->groups && i < n; i++) free(pl->groups[i]);
    free(pl->groups);
    free(pl->edge);
    free(pl->vcpos);
    free(pl->shape);
}

/* ---- a lifeline's monitor ------------------------------------------------ */

void zri_monitor_init(zri_monitor *M, const zri_plan *pl, int32_t self, const zgrt_value *store)
{
    const zgrt_program *p = pl->prog;
    const zgrt_keep *k = keep_of(p, self);
    memset(M, 0, sizeof *M);
    M->plan = pl;
    M->self = self;
    M->store = store;
    M->keep = k;
    M->vcpos = &pl->vcpos[(size_t)self * (size_t)pl->nl];
    M->eval = p->evals ? p->evals[self] : NULL;
    M->nevals = (size_t)k->nevals;
    M->nvc = pl->full ? pl->nl : k->nvc;
    M->selfpos = M->vcpos[self];
    /* exactly what the plan gives this lifeline (zgc guards prints it) */
    size_t nv = (size_t)k->nviews, nvv = (size_t)k->nvarviews;
    if (M->nvc) M->vc = zri_xcalloc((size_t)M->nvc, sizeof(int64_t));
    if (nv) M->views = zri_xcalloc(nv, 1);
    if (nvv) M->varviews = zri_xcalloc(nvv, sizeof(zgrt_value));
    if (M->nevals) {
        M->old = zri_xcalloc(M->nevals, 1);
        M->val = zri_xcalloc(M->nevals, 1);
    }
    M->state_bytes =
        (size_t)M->nvc * sizeof(int64_t) + nv + nvv * sizeof(zgrt_value) + 2 * M->nevals;
}

void zri_monitor_free(zri_monitor *M)
{
    free(M->vc);
    free(M->views);
    free(M->varviews);
    free(M->old);
    free(M->val);
}

void zri_monitor_merge(zri_monitor *M, const zri_msg *m)
{
    const zri_plan *pl = M->plan;
    if (!m->has_meta || !m->vc) return;
    size_t at = (size_t)m->from * (size_t)pl->nl + (size_t)m->to;
    const zgrt_edge *e = pl->edge[at];
    if (e && m->nviews == e->nviews && m->nvarviews == e->nvarviews) {
        const zri_group *gs = pl->groups[at];
        const zgrt_pair *vp = e->views, *vvp = e->varviews;
        for (int32_t k = 0; k < e->ngroups; k++) {
            const zri_group *g = &gs[k];
            int64_t t = m->vc[g->mvc];
            if (t <= M->vc[g->rvc]) continue;
            for (int32_t j = g->v0; j < g->v1; j++) M->views[vp[j].to] = m->views[j];
            for (int32_t j = g->vv0; j < g->vv1; j++) M->varviews[vvp[j].to] = m->varviews[j];
            M->vc[g->rvc] = t;
        }
    }
    if (m->has_meta == ZRI_META_FULL && pl->full)
        for (int32_t b = 0; b < pl->nl; b++)
            if (m->vc[b] > M->vc[b]) M->vc[b] = m->vc[b];
}

int32_t zri_monitor_pos(const zri_monitor *M, int32_t sub)
{
    const int32_t *t = M->keep->evals;
    int32_t lo = 0, hi = M->keep->nevals;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (t[mid] < sub)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < M->keep->nevals && t[lo] == sub ? lo : -1;
}

int zri_monitor_update(zri_monitor *M, zgrt_ctx *ctx, int32_t pos)
{
    if (!M->nevals) return 0;
    /* old = the values at the previous event (zero at the first) */
    uint8_t *prev = M->val;
    M->val = M->old;
    M->old = prev;
    memset(M->val, 0, M->nevals);
    if (M->eval) M->eval(ctx, M->val, M->old);
    return pos >= 0 && (size_t)pos < M->nevals ? M->val[pos] != 0 : 0;
}

void zri_monitor_stamp(const zri_monitor *M, zri_msg *m)
{
    const zri_plan *pl = M->plan;
    if (!m->has_meta || !m->vc) return;
    if (m->has_meta == ZRI_META_FULL) memcpy(m->vc, M->vc, (size_t)pl->nl * sizeof(int64_t));
    size_t at = (size_t)m->from * (size_t)pl->nl + (size_t)m->to;
    const zgrt_edge *e = pl->edge[at];
    if (!e || m->nviews != e->nviews || m->nvarviews != e->nvarviews) return;
    const zri_group *gs = pl->groups[at];
    const zgrt_pair *vp = e->views, *vvp = e->varviews;
    for (int32_t k = 0; k < e->ngroups; k++) {
        const zri_group *g = &gs[k];
        m->vc[g->mvc] = M->vc[g->svc];
        const uint8_t *vsrc = g->own ? M->val : M->views;
        const zgrt_value *vvsrc = g->own ? M->store : M->varviews;
        for (int32_t j = g->v0; j < g->v1; j++) m->views[j] = vsrc[vp[j].from];
        for (int32_t j = g->vv0; j < g->vv1; j++) m->varviews[j] = vvsrc[vvp[j].from];
    }
}

/* ---- generated-code accessors -------------------------------------------- */

int64_t zgrt_vc(zgrt_ctx *ctx, int32_t lifeline)
{
    const zri_monitor *M = zri_ctx_monitor(ctx);
    if (lifeline < 0 || lifeline >= M->plan->nl) return 0;
    int32_t k = M->vcpos[lifeline];
    return k < 0 ? 0 : M->vc[k];
}

/* The monitor accessors are meant for eval functions, which run inside an
 * event under the lifeline's lock; they take a position in the calling
 * lifeline's keep tables, which must hold an entry about `lifeline`. */
int32_t zgrt_view(zgrt_ctx *ctx, int32_t lifeline, int32_t slot)
{
    const zri_monitor *M = zri_ctx_monitor(ctx);
    const zgrt_keep *k = M->keep;
    if (lifeline < 0 || lifeline >= M->plan->nl || slot < 0 || slot >= k->nviews ||
        k->views[slot].lifeline != lifeline)
        return 0;
    int32_t c = M->vcpos[lifeline];
    if (c < 0 || M->vc[c] == 0) return 0;
    return M->views[slot];
}

const zgrt_value *zgrt_varview(zgrt_ctx *ctx, int32_t lifeline, int32_t slot)
{
    const zri_monitor *M = zri_ctx_monitor(ctx);
    const zgrt_keep *k = M->keep;
    if (lifeline < 0 || lifeline >= M->plan->nl || slot < 0 || slot >= k->nvarviews ||
        k->varviews[slot].lifeline != lifeline)
        return NULL;
    int32_t c = M->vcpos[lifeline];
    if (c < 0 || M->vc[c] == 0) return NULL;
    const zgrt_value *v = &M->varviews[slot];
    return v->tag == ZGRT_UNDEF ? NULL : v;
}
