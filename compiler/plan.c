/* plan.c — the monitor plan: the one slot/view plan the runtime executes
 * (prefix zm_).
 *
 * The guard tables (guards.c) give every lifeline its own monitor: the
 * subformulas it evaluates, the bool views (B, ψ) and var views (B, x) it
 * keeps and forwards.  The runtime today runs one plan for all lifelines:
 *
 *   slots    the union over all lifelines of the bool views (the view
 *            slots) and of the var views (the variable-view slots), each
 *            table sorted by (B, ψ or variable index) without duplicates,
 *            so that the slots of lifeline B form one range, [first,
 *            end); a generated eval function reads @B(ψ) and @B.x through
 *            the slot's index (zgrt_view, zgrt_varview), a constant;
 *   evals    lifeline L has an eval function when it evaluates some
 *            subformula, and it computes exactly those (bottom-up);
 *   state    with a monitor, every lifeline keeps its vector clock, one
 *            byte per subformula for the current and the previous values,
 *            one byte per view slot and one 16-byte value per
 *            variable-view slot — all the program's slots, so that any
 *            message can be merged by any lifeline; without one, the
 *            vector clock only;
 *   messages every message of a program with a monitor carries the
 *            sender's vector clock and all its slots: 8 · nlifelines +
 *            nviews + 16 · nvarviews bytes in memory; without a monitor
 *            the vector clock only, and only when a trace is written or
 *            the lifelines are separate processes.
 *
 * The backend emits the slot tables and the eval functions from this plan
 * (zgrt_program.views, .varviews, .evals: runtime/zgrt_abi.h), and
 * `zgc guards --plan` prints it (zm_print).  The runtime derives the
 * ranges and sizes from the descriptor the same way (runtime/core.c);
 * tests/backend reads the descriptor back and compares it with the plan.
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

/* The index in prog->vars of a variable named in a var view. */
static int var_decl_index(const ZProgram *p, const char *name)
{
    for (int i = 0; i < p->vars.len; i++) {
        const ZDecl *v = ZU_VEC_AT(p->vars, i);
        if (v->name && name && strcmp(v->name, name) == 0) {
            if (v->index != i)
                ZU_ICE("variable `%s` has index %d at position %d", name, v->index, i);
            return i;
        }
    }
    ZU_ICE("variable view of unknown variable `%s`", name ? name : "?");
}

/* The slot tables: the union over every lifeline's monitor of its bool
 * views (B, ψ) and var views (B, x). */
static void build_slots(ZArena *a, ZMonitorPlan *pl, const ZGuardTable *gt)
{
    int nv = 0, nvv = 0;
    for (int i = 0; i < gt->monitors.len; i++) {
        const ZLifelineMonitor *m = ZU_VEC_AT(gt->monitors, i);
        nv += m->bool_views.len;
        nvv += m->var_views.len;
    }
    pl->views = zu_alloc(a, sizeof *pl->views * ((size_t)nv + 1));
    pl->varviews = zu_alloc(a, sizeof *pl->varviews * ((size_t)nvv + 1));
    for (int i = 0; i < gt->monitors.len; i++) {
        const ZLifelineMonitor *m = ZU_VEC_AT(gt->monitors, i);
        for (int k = 0; k < m->bool_views.len; k++) {
            const ZViewEntry *ve = ZU_VEC_AT(m->bool_views, k);
            if (ve->life < 0 || ve->life >= pl->nlifelines || ve->sub < 0 || ve->sub >= pl->nsubs)
                ZU_ICE("view entry (%d, φ%d) out of range", ve->life, ve->sub);
            pl->views[pl->nviews++] = (ZPlanSlot){ve->life, ve->sub};
        }
        for (int k = 0; k < m->var_views.len; k++) {
            const ZViewEntry *ve = ZU_VEC_AT(m->var_views, k);
            if (ve->life < 0 || ve->life >= pl->nlifelines)
                ZU_ICE("variable view entry on lifeline %d out of range", ve->life);
            pl->varviews[pl->nvarviews++] =
                (ZPlanSlot){ve->life, var_decl_index(gt->prog, ve->var)};
        }
    }
    pl->nviews = slot_sort(pl->views, pl->nviews);
    pl->nvarviews = slot_sort(pl->varviews, pl->nvarviews);
}

static const ZLifelineMonitor *monitor_of(const ZGuardTable *gt, int life)
{
    for (int i = 0; i < gt->monitors.len; i++) {
        const ZLifelineMonitor *m = ZU_VEC_AT(gt->monitors, i);
        if (m->life == life) return m;
    }
    return NULL;
}

ZMonitorPlan *zm_plan(ZArena *a, const ZGuardTable *gt)
{
    ZMonitorPlan *pl = zu_alloc(a, sizeof *pl);
    pl->guards = gt;
    if (!gt) return pl;
    pl->nlifelines = gt->prog->lifelines.len;
    pl->nsubs = gt->subs.len;
    for (int i = 0; i < gt->guards.len; i++)
        if (((const ZGuardInfo *)ZU_VEC_AT(gt->guards, i))->cpl) pl->monitor = true;
    build_slots(a, pl, gt);

    size_t nl = (size_t)pl->nlifelines;
    size_t vc = 8 * nl;
    size_t state = vc;
    if (pl->monitor)
        state += 2 * (size_t)pl->nsubs + (size_t)pl->nviews + 16 * (size_t)pl->nvarviews;
    pl->message_bytes = vc + (size_t)pl->nviews + 16 * (size_t)pl->nvarviews;

    pl->lifelines = zu_alloc(a, sizeof *pl->lifelines * (nl + 1));
    /* the ranges as the runtime finds them: the first slot of B is the
     * first whose lifeline is not before B */
    for (int b = 0, s = 0, t = 0; b < pl->nlifelines; b++) {
        ZPlanLifeline *pll = &pl->lifelines[b];
        const ZLifelineMonitor *m = monitor_of(gt, b);
        pll->evaluates = m && m->evaluates.len > 0 ? &m->evaluates : NULL;
        while (s < pl->nviews && pl->views[s].life < b) s++;
        while (t < pl->nvarviews && pl->varviews[t].life < b) t++;
        pll->views_first = s;
        pll->varviews_first = t;
        while (s < pl->nviews && pl->views[s].life == b) s++;
        while (t < pl->nvarviews && pl->varviews[t].life == b) t++;
        pll->views_end = s;
        pll->varviews_end = t;
        pll->state_bytes = state;
    }
    return pl;
}

int zm_view_slot(const ZMonitorPlan *pl, int life, int sub)
{
    return slot_find(pl->views, pl->nviews, life, sub);
}

int zm_varview_slot(const ZMonitorPlan *pl, int life, int var)
{
    return slot_find(pl->varviews, pl->nvarviews, life, var);
}

bool zm_has_eval(const ZMonitorPlan *pl, int life)
{
    return life >= 0 && life < pl->nlifelines && pl->lifelines[life].evaluates;
}

/* ------------------------------------------------------------------ */
/* printing                                                            */
/* ------------------------------------------------------------------ */

static void put_slots(ZBuf *b, const char *what, int first, int end)
{
    if (first == end) return;
    zu_buf_printf(b, " %s", what);
    for (int s = first; s < end; s++) zu_buf_printf(b, " %d", s);
}

void zm_print(FILE *out, const ZMonitorPlan *pl)
{
    const ZGuardTable *gt = pl->guards;
    if (!gt) return;
    const ZProgram *p = gt->prog;
    ZBuf b = {0};

    if (pl->monitor)
        zu_buf_printf(&b, "monitor: yes (sub(Φ): %d)\n", pl->nsubs);
    else
        zu_buf_puts(&b, "monitor: no (no CPL guard)\n");

    zu_buf_printf(&b, "\nview slots: %d\n", pl->nviews);
    for (int i = 0; i < pl->nviews; i++) {
        const ZPlanSlot *s = &pl->views[i];
        zu_buf_printf(&b, "  %-3d view(%s, φ%d)  ", i, za_lifeline_name(p, s->life), s->index);
        zg_print_formula(&b, gt, ZU_VEC_AT(gt->subs, s->index));
        zu_buf_putc(&b, '\n');
    }
    zu_buf_printf(&b, "variable-view slots: %d\n", pl->nvarviews);
    for (int i = 0; i < pl->nvarviews; i++) {
        const ZPlanSlot *s = &pl->varviews[i];
        const ZDecl *v = ZU_VEC_AT(p->vars, s->index);
        zu_buf_printf(&b, "  %-3d var(%s, %s)\n", i, za_lifeline_name(p, s->life), v->name);
    }

    size_t nl = (size_t)pl->nlifelines;
    for (int L = 0; L < pl->nlifelines; L++) {
        const ZPlanLifeline *pll = &pl->lifelines[L];
        zu_buf_printf(&b, "\nlifeline %s\n  eval function:", za_lifeline_name(p, L));
        if (!pll->evaluates) zu_buf_puts(&b, " none");
        for (int k = 0; pll->evaluates && k < pll->evaluates->len; k++) {
            const ZFormula *f = ZU_VEC_AT(*pll->evaluates, k);
            zu_buf_printf(&b, " φ%d", f->id);
        }
        zu_buf_puts(&b, "\n  own slots:");
        if (pll->views_first == pll->views_end && pll->varviews_first == pll->varviews_end)
            zu_buf_puts(&b, " none");
        put_slots(&b, "view", pll->views_first, pll->views_end);
        if (pll->views_first != pll->views_end && pll->varviews_first != pll->varviews_end)
            zu_buf_putc(&b, ';');
        put_slots(&b, "variable view", pll->varviews_first, pll->varviews_end);
        zu_buf_printf(&b, "\n  state: vc %zu × 8 B", nl);
        if (pl->monitor)
            zu_buf_printf(&b, " + values %d B + old %d B + views %d B + vars %d × 16 B", pl->nsubs,
                          pl->nsubs, pl->nviews, pl->nvarviews);
        zu_buf_printf(&b, " = %zu B\n", pll->state_bytes);
    }

    zu_buf_printf(&b, "\nmessage metadata: vc %zu × 8 B", nl);
    if (pl->monitor) zu_buf_printf(&b, " + views %d B + vars %d × 16 B", pl->nviews, pl->nvarviews);
    zu_buf_printf(&b, " = %zu B, %s\n", pl->message_bytes,
                  pl->monitor ? "on every message"
                              : "only when a trace is written or the lifelines are processes");
    fwrite(b.data, 1, b.len, out);
    zu_buf_free(&b);
}
