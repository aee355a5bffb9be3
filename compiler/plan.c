/* plan.c — the monitor plan: what each lifeline's monitor keeps and what
 * each message carries, the plan the runtime executes (prefix zm_).
 *
 * The guard tables (guards.c) give every lifeline L its monitor: the
 * subformulas it evaluates, the bool views (B, ψ) and var views (B, x) it
 * keeps and forwards (the forwarding rule C(E, B) = {Y | B ⇝ Y and Y ⇝ E},
 * proved in guards.c, 3.).  The plan lays them out:
 *
 *   keep     lifeline L keeps (ZPlanLifeline), each table sorted:
 *              evals     the subformula ids it evaluates; val and old
 *                        hold one byte per entry, in this order;
 *              vc        the clock entries of L and of every B it keeps
 *                        an entry about;
 *              views     (B, ψ) with B ≠ L, one byte each;
 *              varviews  (B, x) with B ≠ L, one value each;
 *            L's own views are its val, its own var views its store.  A
 *            lifeline without a monitor keeps nothing.  Generated code
 *            addresses val/old, views and varviews by these positions
 *            (zm_eval_pos, zm_view_slot, zm_varview_slot).
 *   edges    for every edge Y → X of the message graph (a send or
 *            send-ctl of the projected programs), the metadata of every
 *            message from Y to X: one group per lifeline B ≠ X that both
 *            keep clock entries about, with vc[B] and X's entries about
 *            B, each with the position the sender takes it from and the
 *            one the receiver puts it in (ZPlanEdge).  The runtime packs
 *            and unpacks by these lists; it does no set logic per
 *            message.
 *   sizes    state bytes per lifeline, 8 · |vc| + 2 · |evals| + |views| +
 *            16 · |varviews| (guards.c computes the same model, 4., and
 *            the plan checks that it arrives at it), and metadata bytes
 *            per message of an edge, 8 · |groups| + |views| + 16 ·
 *            |varviews|, in memory.
 *   traced   a run that writes a trace needs the full vector clock of
 *            every event: every lifeline then keeps all nlifelines clock
 *            entries and every message carries them (8 · nlifelines
 *            bytes) instead of the groups' entries, plus the same slots;
 *            the plan gives both sizes.
 *
 * What an edge carries, and why it is enough.  Write K(L) for the entries
 * L keeps (its own included) and V(L) for its clock entries.  The edge
 * Y → X carries, for every B ∈ V(X) ∩ V(Y) with B ≠ X, vc[B] and all of
 * X's entries about B.  That these are in K(Y) is the forwarding rule's
 * claim, checked here for every edge (an internal error otherwise):
 *   - X keeps (B, θ) only when X ∈ C(E, B) for some E: B ⇝ X ⇝ E.  If
 *     B ⇝ Y, then Y → X ⇝ E puts Y in C(E, B): Y keeps (B, θ) too (for
 *     B = Y: Y evaluates θ, or owns x).  So X's entries about B are in
 *     K(X) ∩ K(Y), and B ∈ V(Y).
 *   - If B ∉ V(Y), the same argument shows B ⇝̸ Y: no B-event is ever in
 *     Y's causal past, Y's true vc[B] is 0 and a message from Y is never
 *     ahead on B; leaving vc[B] out is reading it as 0, which is exact.
 *   - B = X is never carried: no message to X is ahead of X on X.
 *   - Entries about B ∉ V(X) are not kept by X, so carrying them would
 *     change nothing X reads.
 * Hence X's merge (Algorithm 1: for every B with μ.vc[B] > vc_X[B], take
 * B's entries and vc[B]) sees every clock entry that can be ahead and,
 * with it, every entry X keeps about that lifeline; X's vc[B] stays exact
 * for every B ∈ V(X) (it is the maximum over the causal past, and every
 * message that could raise it carries it), so vc[B] == 0 still means
 * that no B-event is visible (zgrt_view) and vc[X] counts X's events.
 * The invariant of guards.c, 3., holds on every kept entry, so every
 * guard value is Definition 3 at its choice event.
 *
 * The backend emits these tables and the eval functions
 * (zgrt_program.keeps, .edges, .evals: runtime/zgrt_abi.h); `zgc guards`
 * prints the sizes (zm_print_guards) and `zgc guards --plan` every entry
 * (zm_print); tests/backend reads the descriptor back and compares it
 * with the plan, and tests/runtime/run_plan_sizes.sh compares what a run
 * allocates and sends with what `zgc guards` prints.
 */
#include <stdlib.h>
#include <string.h>

#include "zgc.h"

static int slot_cmp(const void *x, const void *y)
{
    const ZPlanSlot *a = x, *b = y;
    if (a->life != b->life) return a->life < b->life ? -1 : 1;
    if (a->index != b->index) return a->index < b->index ? -1 : 1;
    return 0;
}

/* Sorts a slot table and removes duplicates; returns the new length. */
static int slot_sort(ZPlanSlot *t, int n)
{
    if (n <= 1) return n;
    qsort(t, (size_t)n, sizeof *t, slot_cmp);
    int k = 1;
    for (int i = 1; i < n; i++)
        if (slot_cmp(&t[i], &t[k - 1]) != 0) t[k++] = t[i];
    return k;
}

/* The position of (life, index) in a sorted slot table, or -1. */
static int slot_find(const ZPlanSlot *t, int n, int life, int index)
{
    ZPlanSlot key = {life, index};
    const ZPlanSlot *hit = n > 0 ? bsearch(&key, t, (size_t)n, sizeof *t, slot_cmp) : NULL;
    return hit ? (int)(hit - t) : -1;
}

/* The position of v in an ascending int table, or -1. */
static int int_find(const int *t, int n, int v)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (t[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && t[lo] == v ? lo : -1;
}

/* The index in prog->vars of the variable of a var view. */
static int var_decl_index(const ZProgram *p, const ZViewEntry *ve)
{
    int i = ve->var_decl;
    if (i < 0 || i >= p->vars.len)
        ZU_ICE("variable view of unknown variable `%s`", ve->var ? ve->var : "?");
    const ZDecl *v = ZU_VEC_AT(p->vars, i);
    if (v->index != i || !v->name || !ve->var || strcmp(v->name, ve->var) != 0)
        ZU_ICE("variable view of `%s` names variable %d", ve->var ? ve->var : "?", i);
    return i;
}

static const ZLifelineMonitor *monitor_of(const ZGuardTable *gt, int life)
{
    for (int i = 0; i < gt->monitors.len; i++) {
        const ZLifelineMonitor *m = ZU_VEC_AT(gt->monitors, i);
        if (m->life == life) return m;
    }
    ZU_ICE("lifeline %d has no monitor table", life);
}

/* What lifeline L keeps, from its monitor table m. */
static void plan_lifeline(ZArena *a, const ZMonitorPlan *pl, ZPlanLifeline *pll, int L,
                          const ZLifelineMonitor *m)
{
    const ZProgram *p = pl->guards->prog;
    int nl = pl->nlifelines;
    pll->monitor = m->needs_monitor;
    pll->evaluates = m->evaluates.len > 0 ? &m->evaluates : NULL;
    pll->nevals = m->evaluates.len;
    pll->evals = zu_alloc(a, sizeof *pll->evals * ((size_t)pll->nevals + 1));
    for (int k = 0; k < pll->nevals; k++) {
        const ZFormula *f = ZU_VEC_AT(m->evaluates, k);
        if (f->id < 0 || f->id >= pl->nsubs || (k > 0 && f->id <= pll->evals[k - 1]))
            ZU_ICE("lifeline %d evaluates φ%d out of order", L, f->id);
        pll->evals[k] = f->id;
    }
    pll->views = zu_alloc(a, sizeof *pll->views * ((size_t)m->bool_views.len + 1));
    for (int k = 0; k < m->bool_views.len; k++) {
        const ZViewEntry *ve = ZU_VEC_AT(m->bool_views, k);
        if (ve->life < 0 || ve->life >= nl || ve->sub < 0 || ve->sub >= pl->nsubs)
            ZU_ICE("view entry (%d, φ%d) out of range", ve->life, ve->sub);
        if (ve->life != L) pll->views[pll->nviews++] = (ZPlanSlot){ve->life, ve->sub};
    }
    pll->nviews = slot_sort(pll->views, pll->nviews);
    pll->varviews = zu_alloc(a, sizeof *pll->varviews * ((size_t)m->var_views.len + 1));
    for (int k = 0; k < m->var_views.len; k++) {
        const ZViewEntry *ve = ZU_VEC_AT(m->var_views, k);
        if (ve->life < 0 || ve->life >= nl)
            ZU_ICE("variable view entry on lifeline %d out of range", ve->life);
        if (ve->life != L)
            pll->varviews[pll->nvarviews++] = (ZPlanSlot){ve->life, var_decl_index(p, ve)};
    }
    pll->nvarviews = slot_sort(pll->varviews, pll->nvarviews);
    pll->vc = zu_alloc(a, sizeof *pll->vc * ((size_t)nl + 1));
    for (int b = 0; b < nl && pll->monitor; b++)
        if (zj_set_has(&m->clock, b)) pll->vc[pll->nvc++] = b;
    /* the clock covers L and every lifeline of its entries */
    if (pll->monitor && int_find(pll->vc, pll->nvc, L) < 0)
        ZU_ICE("lifeline %d keeps no clock entry of its own", L);
    for (int k = 0; k < pll->nviews; k++)
        if (int_find(pll->vc, pll->nvc, pll->views[k].life) < 0)
            ZU_ICE("lifeline %d keeps a view of %d without its clock entry", L, pll->views[k].life);
    for (int k = 0; k < pll->nvarviews; k++)
        if (int_find(pll->vc, pll->nvc, pll->varviews[k].life) < 0)
            ZU_ICE("lifeline %d keeps a variable view of %d without its clock entry", L,
                   pll->varviews[k].life);

    size_t rest = 2 * (size_t)pll->nevals + (size_t)pll->nviews + 16 * (size_t)pll->nvarviews;
    pll->state_bytes = pll->monitor ? 8 * (size_t)pll->nvc + rest : 0;
    pll->traced_state_bytes = 8 * (size_t)nl + (pll->monitor ? rest : 0);
    if (pll->state_bytes != m->state_bytes || pll->traced_state_bytes != m->traced_state_bytes)
        ZU_ICE("lifeline %d: the plan keeps %zu B (traced %zu B), the guard tables say %zu B "
               "(%zu B)",
               L, pll->state_bytes, pll->traced_state_bytes, m->state_bytes, m->traced_state_bytes);
}

/* The metadata of the edge from → to (see the header). */
static void plan_edge(ZArena *a, const ZMonitorPlan *pl, ZPlanEdge *e, int from, int to)
{
    const ZGuardTable *gt = pl->guards;
    const ZPlanLifeline *Y = &pl->lifelines[from], *X = &pl->lifelines[to];
    e->from = from;
    e->to = to;
    e->groups = zu_alloc(a, sizeof *e->groups * ((size_t)X->nvc + 1));
    e->views = zu_alloc(a, sizeof *e->views * ((size_t)X->nviews + 1));
    e->varviews = zu_alloc(a, sizeof *e->varviews * ((size_t)X->nvarviews + 1));
    /* X's views and varviews are sorted by lifeline, like its vc: one pass */
    int j = 0, jw = 0;
    for (int k = 0; k < X->nvc; k++) {
        int b = X->vc[k];
        while (j < X->nviews && X->views[j].life < b) j++;
        while (jw < X->nvarviews && X->varviews[jw].life < b) jw++;
        if (b == to) continue; /* never ahead of the receiver on itself */
        int from_vc = int_find(Y->vc, Y->nvc, b);
        if (from_vc < 0) {
            /* Y keeps nothing about b: then no b-event ever reaches Y */
            if (zg_reaches(gt, b, from))
                ZU_ICE("forwarding rule: lifeline %d keeps entries about %d, which reaches its "
                       "sender %d, but the sender keeps none",
                       to, b, from);
            continue;
        }
        for (; j < X->nviews && X->views[j].life == b; j++) {
            const ZPlanSlot *s = &X->views[j];
            int src = b == from ? int_find(Y->evals, Y->nevals, s->index)
                                : slot_find(Y->views, Y->nviews, b, s->index);
            if (src < 0)
                ZU_ICE("forwarding rule: lifeline %d keeps view (%d, φ%d), its sender %d does not",
                       to, b, s->index, from);
            e->views[e->nviews++] = (ZPlanPair){src, j};
        }
        for (; jw < X->nvarviews && X->varviews[jw].life == b; jw++) {
            const ZPlanSlot *s = &X->varviews[jw];
            int src = b == from ? s->index : slot_find(Y->varviews, Y->nvarviews, b, s->index);
            if (src < 0)
                ZU_ICE("forwarding rule: lifeline %d keeps variable view (%d, %d), its sender %d "
                       "does not",
                       to, b, s->index, from);
            e->varviews[e->nvarviews++] = (ZPlanPair){src, jw};
        }
        e->groups[e->ngroups++] = (ZPlanGroup){b, from_vc, k, e->nviews, e->nvarviews};
    }
    size_t slots = (size_t)e->nviews + 16 * (size_t)e->nvarviews;
    e->meta_bytes = 8 * (size_t)e->ngroups + slots;
    e->traced_meta_bytes = 8 * (size_t)pl->nlifelines + slots;
}

ZMonitorPlan *zm_plan(ZArena *a, const ZGuardTable *gt)
{
    ZMonitorPlan *pl = zu_alloc(a, sizeof *pl);
    pl->guards = gt;
    if (!gt) return pl;
    int nl = gt->prog->lifelines.len;
    pl->nlifelines = nl;
    pl->nsubs = gt->subs.len;
    for (int i = 0; i < gt->guards.len; i++)
        if (((const ZGuardInfo *)ZU_VEC_AT(gt->guards, i))->cpl) pl->monitor = true;
    pl->lifelines = zu_alloc(a, sizeof *pl->lifelines * ((size_t)nl + 1));
    for (int L = 0; L < nl; L++) plan_lifeline(a, pl, &pl->lifelines[L], L, monitor_of(gt, L));

    int nedges = 0;
    for (int y = 0; y < nl; y++)
        for (int x = 0; x < nl; x++) nedges += x != y && gt->adj && zj_set_has(&gt->adj[y], x);
    pl->edges = zu_alloc(a, sizeof *pl->edges * ((size_t)nedges + 1));
    for (int y = 0; y < nl; y++)
        for (int x = 0; x < nl; x++)
            if (x != y && gt->adj && zj_set_has(&gt->adj[y], x))
                plan_edge(a, pl, &pl->edges[pl->nedges++], y, x);
    return pl;
}

int zm_view_slot(const ZMonitorPlan *pl, int life, int b, int sub)
{
    if (life < 0 || life >= pl->nlifelines) return -1;
    const ZPlanLifeline *pll = &pl->lifelines[life];
    return slot_find(pll->views, pll->nviews, b, sub);
}

int zm_varview_slot(const ZMonitorPlan *pl, int life, int b, int var)
{
    if (life < 0 || life >= pl->nlifelines) return -1;
    const ZPlanLifeline *pll = &pl->lifelines[life];
    return slot_find(pll->varviews, pll->nvarviews, b, var);
}

int zm_eval_pos(const ZMonitorPlan *pl, int life, int sub)
{
    if (life < 0 || life >= pl->nlifelines) return -1;
    const ZPlanLifeline *pll = &pl->lifelines[life];
    return int_find(pll->evals, pll->nevals, sub);
}

bool zm_has_eval(const ZMonitorPlan *pl, int life)
{
    return life >= 0 && life < pl->nlifelines && pl->lifelines[life].evaluates;
}

const ZPlanEdge *zm_edge(const ZMonitorPlan *pl, int from, int to)
{
    int lo = 0, hi = pl->nedges;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        const ZPlanEdge *e = &pl->edges[mid];
        if (e->from < from || (e->from == from && e->to < to))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < pl->nedges && pl->edges[lo].from == from && pl->edges[lo].to == to)
        return &pl->edges[lo];
    return NULL;
}

/* ------------------------------------------------------------------ */
/* printing                                                            */
/* ------------------------------------------------------------------ */

static const char *lname(const ZMonitorPlan *pl, int l)
{
    return za_lifeline_name(pl->guards->prog, l);
}

static const char *vname(const ZMonitorPlan *pl, int x)
{
    const ZDecl *v = ZU_VEC_AT(pl->guards->prog->vars, x);
    return v->name;
}

/* "vc 1 × 8 B + views 1 B + vars 1 × 16 B = 25 B; traced: vc 4 × 8 B, 49 B" */
static void put_meta(ZBuf *b, const ZMonitorPlan *pl, const ZPlanEdge *e)
{
    if (e->meta_bytes == 0)
        zu_buf_puts(b, "none");
    else
        zu_buf_printf(b, "vc %d × 8 B + views %d B + vars %d × 16 B = %zu B", e->ngroups, e->nviews,
                      e->nvarviews, e->meta_bytes);
    zu_buf_printf(b, "; traced: vc %d × 8 B, %zu B\n", pl->nlifelines, e->traced_meta_bytes);
}

static void put_edges(ZBuf *b, const ZMonitorPlan *pl)
{
    zu_buf_puts(b, "\nmessage metadata (bytes per message, in memory):");
    if (pl->nedges == 0) zu_buf_puts(b, " no messages");
    zu_buf_putc(b, '\n');
    for (int i = 0; i < pl->nedges; i++) {
        const ZPlanEdge *e = &pl->edges[i];
        zu_buf_printf(b, "  %s -> %s: ", lname(pl, e->from), lname(pl, e->to));
        put_meta(b, pl, e);
    }
}

void zm_print_guards(FILE *out, const ZMonitorPlan *pl)
{
    if (!pl->guards) return;
    zg_print(out, pl->guards);
    ZBuf b = {0};
    put_edges(&b, pl);
    fwrite(b.data, 1, b.len, out);
    zu_buf_free(&b);
}

void zm_print(FILE *out, const ZMonitorPlan *pl)
{
    const ZGuardTable *gt = pl->guards;
    if (!gt) return;
    ZBuf b = {0};

    if (pl->monitor)
        zu_buf_printf(&b, "monitor: yes (sub(Φ): %d)\n", pl->nsubs);
    else
        zu_buf_puts(&b, "monitor: no (no CPL guard)\n");

    for (int L = 0; L < pl->nlifelines; L++) {
        const ZPlanLifeline *pll = &pl->lifelines[L];
        zu_buf_printf(&b, "\nlifeline %s\n", lname(pl, L));
        if (!pll->monitor) {
            zu_buf_printf(&b, "  keeps: nothing\n  state: 0 B; traced: vc %d × 8 B, %zu B\n",
                          pl->nlifelines, pll->traced_state_bytes);
            continue;
        }
        zu_buf_puts(&b, "  eval function:");
        if (!pll->evaluates) zu_buf_puts(&b, " none");
        for (int k = 0; k < pll->nevals; k++) zu_buf_printf(&b, " %d:φ%d", k, pll->evals[k]);
        zu_buf_puts(&b, "\n  vc:");
        for (int k = 0; k < pll->nvc; k++) zu_buf_printf(&b, " %d:%s", k, lname(pl, pll->vc[k]));
        zu_buf_puts(&b, "\n  views:");
        if (pll->nviews == 0) zu_buf_puts(&b, " none");
        for (int k = 0; k < pll->nviews; k++)
            zu_buf_printf(&b, " %d:(%s, φ%d)", k, lname(pl, pll->views[k].life),
                          pll->views[k].index);
        zu_buf_puts(&b, "\n  variable views:");
        if (pll->nvarviews == 0) zu_buf_puts(&b, " none");
        for (int k = 0; k < pll->nvarviews; k++)
            zu_buf_printf(&b, " %d:(%s, %s)", k, lname(pl, pll->varviews[k].life),
                          vname(pl, pll->varviews[k].index));
        zu_buf_printf(&b,
                      "\n  state: vc %d × 8 B + values %d B + old %d B + views %d B + vars %d × "
                      "16 B = %zu B; traced: vc %d × 8 B, %zu B\n",
                      pll->nvc, pll->nevals, pll->nevals, pll->nviews, pll->nvarviews,
                      pll->state_bytes, pl->nlifelines, pll->traced_state_bytes);
    }

    for (int i = 0; i < pl->nedges; i++) {
        const ZPlanEdge *e = &pl->edges[i];
        const ZPlanLifeline *X = &pl->lifelines[e->to];
        zu_buf_printf(&b, "\nedge %s -> %s\n", lname(pl, e->from), lname(pl, e->to));
        for (int g = 0, v = 0, w = 0; g < e->ngroups; g++) {
            const ZPlanGroup *gr = &e->groups[g];
            bool own = gr->life == e->from;
            zu_buf_printf(&b, "  %s: vc %d -> %d", lname(pl, gr->life), gr->from_vc, gr->to_vc);
            for (; v < gr->views_end; v++)
                zu_buf_printf(&b, "; φ%d %s%d -> %d", X->views[e->views[v].to].index,
                              own ? "val " : "", e->views[v].from, e->views[v].to);
            for (; w < gr->varviews_end; w++) {
                const ZPlanPair *pr = &e->varviews[w];
                if (own)
                    zu_buf_printf(&b, "; %s store -> %d", vname(pl, pr->from), pr->to);
                else
                    zu_buf_printf(&b, "; %s %d -> %d", vname(pl, X->varviews[pr->to].index),
                                  pr->from, pr->to);
            }
            zu_buf_putc(&b, '\n');
        }
        zu_buf_puts(&b, "  metadata: ");
        put_meta(&b, pl, e);
    }
    fwrite(b.data, 1, b.len, out);
    zu_buf_free(&b);
}
