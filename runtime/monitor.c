/* monitor.c — the CPL monitor: Algorithm 1 of the CPL paper, one instance
 * per lifeline (struct zri_monitor, rt.h), driven by the core's events.
 *
 * State of lifeline `self`: its vector clock vc (how many events of each
 * lifeline causally precede its latest one), and when some guard uses
 * Causal Past Logic (zgrt_program.monitor) the compact views: one byte
 * view(B, ψ) per view slot and one value var(B, x) per variable-view slot
 * of the descriptor (zgrt_program.views / .varviews, sorted by lifeline;
 * zgrt_abi.h), and the values val / old of the subformulas at the current
 * and the previous event.  The slots of lifeline B are the range
 * [vstart[B], vstart[B + 1]) (vvstart for variable views), computed once
 * per run (zri_plan).
 *
 * Algorithm 1, as the core runs it for every event of `self` (core.c,
 * do_event, under the lifeline's lock while a parallel region runs):
 *   receive:  for every B with msg.vc[B] > vc[B], copy B's view and
 *             variable-view slots from the message, and vc[B] = msg.vc[B]
 *             (zri_monitor_merge);
 *   event:    vc[self] += 1 (the core, inline: every event takes it);
 *             the store effect of the event (the core);
 *             old = the previous val; val = evals[self](…) — the
 *             lifeline's generated evaluation (Algorithm 2), reading
 *             old, the store and the accessors below; then self's own
 *             slots: view(self, ψ) = val[ψ], var(self, x) = store[x]
 *             (zri_monitor_update);
 *   send:     the message carries (vc, views, varviews)
 *             (zri_monitor_stamp).
 * Without CPL guards there are no views: messages carry the vector clock
 * only, and only when a trace is written or the peers are other processes.
 *
 * A message carries vc + views + varviews: 8 * nl + nviews + 16 * nvarviews
 * bytes (frames: net/frame.c).
 */
#include <stdlib.h>
#include <string.h>

#include "rt.h"

void zri_plan_init(zri_plan *pl, const zgrt_program *p)
{
    pl->prog = p;
    pl->nl = p->nlifelines;
    pl->on = p->monitor != 0;
    /* slot ranges per lifeline (zri_program_check validated the tables) */
    pl->vstart = zri_xcalloc((size_t)pl->nl + 1, sizeof(int32_t));
    pl->vvstart = zri_xcalloc((size_t)pl->nl + 1, sizeof(int32_t));
    for (int32_t b = 0, s = 0, t = 0; b <= pl->nl; b++) {
        while (s < p->nviews && p->views[s].lifeline < b) s++;
        while (t < p->nvarviews && p->varviews[t].lifeline < b) t++;
        pl->vstart[b] = s;
        pl->vvstart[b] = t;
    }
}

void zri_plan_free(zri_plan *pl)
{
    free(pl->vstart);
    free(pl->vvstart);
}

void zri_monitor_init(zri_monitor *M, const zri_plan *pl, int32_t self, const zgrt_value *store)
{
    const zgrt_program *p = pl->prog;
    size_t nsubs = (size_t)p->nsubs;
    M->plan = pl;
    M->self = self;
    M->store = store;
    M->vc = zri_xcalloc((size_t)pl->nl, sizeof(int64_t));
    M->eval = p->evals ? p->evals[self] : NULL;
    M->nsubs = nsubs;
    M->v0 = pl->vstart[self];
    M->v1 = pl->vstart[self + 1];
    M->vv0 = pl->vvstart[self];
    M->vv1 = pl->vvstart[self + 1];
    if (pl->on) {
        M->views = zri_xcalloc((size_t)p->nviews, 1);
        M->varviews = zri_xcalloc((size_t)p->nvarviews, sizeof(zgrt_value));
        M->old = zri_xcalloc(nsubs, 1);
        M->val = zri_xcalloc(nsubs, 1);
    }
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
    for (int32_t b = 0; b < pl->nl; b++) {
        if (m->vc[b] <= M->vc[b]) continue;
        if (pl->on) {
            /* B's slots, copied as one range */
            int32_t s0 = pl->vstart[b], s1 = pl->vstart[b + 1];
            if (s1 > s0 && m->views) memcpy(M->views + s0, m->views + s0, (size_t)(s1 - s0));
            s0 = pl->vvstart[b], s1 = pl->vvstart[b + 1];
            if (s1 > s0 && m->varviews)
                memcpy(M->varviews + s0, m->varviews + s0, (size_t)(s1 - s0) * sizeof(zgrt_value));
        }
        M->vc[b] = m->vc[b];
    }
}

int zri_monitor_update(zri_monitor *M, zgrt_ctx *ctx, int32_t root)
{
    int result = 0;
    if (M->nsubs) {
        /* old = the values at the previous event (zero at the first) */
        uint8_t *prev = M->val;
        M->val = M->old;
        M->old = prev;
        memset(M->val, 0, M->nsubs);
        if (M->eval) M->eval(ctx, M->val, M->old);
        if (root >= 0) result = M->val[root] != 0;
    }
    /* this lifeline's own slots: view(self, ψ) = val[ψ], var(self, x) = store[x] */
    if (M->v1 > M->v0 || M->vv1 > M->vv0) {
        const zgrt_program *p = M->plan->prog;
        for (int32_t s = M->v0; s < M->v1; s++) M->views[s] = M->val[p->views[s].index];
        for (int32_t s = M->vv0; s < M->vv1; s++) M->varviews[s] = M->store[p->varviews[s].index];
    }
    return result;
}

void zri_monitor_stamp(const zri_monitor *M, zri_msg *m)
{
    const zri_plan *pl = M->plan;
    const zgrt_program *p = pl->prog;
    memcpy(m->vc, M->vc, (size_t)pl->nl * sizeof(int64_t));
    if (pl->on) {
        if (m->views && p->nviews) memcpy(m->views, M->views, (size_t)p->nviews);
        if (m->varviews && p->nvarviews)
            memcpy(m->varviews, M->varviews, (size_t)p->nvarviews * sizeof(zgrt_value));
    }
}

/* ---- generated-code accessors -------------------------------------------- */

int64_t zgrt_vc(zgrt_ctx *ctx, int32_t lifeline)
{
    const zri_monitor *M = zri_ctx_monitor(ctx);
    if (lifeline < 0 || lifeline >= M->plan->nl) return 0;
    return M->vc[lifeline];
}

/* The monitor accessors are meant for eval functions, which run inside an
 * event under the lifeline's lock; they take a slot of the descriptor's
 * tables, which must be one of the lifeline's.  view(self, ·) holds the
 * values of the previous event until the current one is evaluated
 * (Algorithm 2 evaluates @self(θ) directly); var(self, x) is the current
 * store. */
int32_t zgrt_view(zgrt_ctx *ctx, int32_t lifeline, int32_t slot)
{
    const zri_monitor *M = zri_ctx_monitor(ctx);
    const zri_plan *pl = M->plan;
    if (!pl->on || lifeline < 0 || lifeline >= pl->nl || slot < pl->vstart[lifeline] ||
        slot >= pl->vstart[lifeline + 1])
        return 0;
    if (M->vc[lifeline] == 0) return 0;
    return M->views[slot];
}

const zgrt_value *zgrt_varview(zgrt_ctx *ctx, int32_t lifeline, int32_t slot)
{
    const zri_monitor *M = zri_ctx_monitor(ctx);
    const zri_plan *pl = M->plan;
    if (lifeline < 0 || lifeline >= pl->nl || slot < pl->vvstart[lifeline] ||
        slot >= pl->vvstart[lifeline + 1])
        return NULL;
    const zgrt_value *v;
    if (lifeline == M->self) {
        v = &M->store[pl->prog->varviews[slot].index];
    } else {
        if (!pl->on || M->vc[lifeline] == 0) return NULL;
        v = &M->varviews[slot];
    }
    return v->tag == ZGRT_UNDEF ? NULL : v;
}
