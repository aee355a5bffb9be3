/* cpl.c — guards: at every choice event the guard is evaluated and must
 * equal the recorded decision.  CPL guards are evaluated by Definition 3
 * of the CPL paper on the chart rebuilt from the trace (chart.c), over
 * the formula tables the compiler's guards pass (compiler/guards.c)
 * enumerates: sub(Φ) bottom-up; plain guards on the owner's store before
 * the choice (eval.c).
 *
 * CPL (Definition 3).  For every subformula ψ of sub(Φ) (bottom-up) and
 * every event e of every lifeline A, val(ψ, e) ∈ {false, true, unknown}:
 * atoms read A's store after e and @B.x from the store after last_B(e),
 * the vc(e)[B]-th event of B (computed by reachability in chart.c); an atom
 * with an undefined term is false; prev and since move along A's line;
 * @B(θ) is θ at e when B = A, else θ at last_B(e) or false.  "unknown"
 * (a value this evaluator cannot compute) propagates and leaves the guard
 * unverified instead of failing. */
#include "zt.h"

#include <stdlib.h>
#include <string.h>

static uint8_t and3(uint8_t a, uint8_t b)
{
    return (a == 0 || b == 0) ? 0 : (a == 2 || b == 2) ? 2 : 1;
}
static uint8_t or3(uint8_t a, uint8_t b)
{
    return (a == 1 || b == 1) ? 1 : (a == 2 || b == 2) ? 2 : 0;
}
static uint8_t not3(uint8_t a) { return a == 2 ? 2 : (uint8_t)!a; }

static uint8_t atom_at(Check *c, const ZExpr *atom, int l, int i)
{
    Env env = {.c = c, .life = l, .index = i};
    if (!zt_terms_defined(&env, atom, 0)) return 0;
    env.undef = false;
    Val v = zt_eval(&env, atom);
    if (env.undef) return 0;
    if (v.k != V_BOOL) return 2;
    return v.i ? 1 : 0;
}

static void eval_subs(Check *c)
{
    const ZGuardTable *t = c->m->guards;
    int ns = t->subs.len;
    if (!ns) return;
    if ((long)ns * c->nev > ZT_MAX_CELLS * 4L)
        zt_fail(c, 0, "trace too large to check guards (%ld events)", c->nev);
    c->fval = zu_xcalloc((size_t)ns, sizeof *c->fval);
    for (int s = 0; s < ns; s++) {
        const ZFormula *f = ZU_VEC_AT(t->subs, s);
        uint8_t *v = zu_xcalloc((size_t)(c->nev ? c->nev : 1), 1);
        c->fval[s] = v;
        for (int l = 0; l < c->m->nl; l++)
            for (int i = 1; i <= c->nbyl[l]; i++) {
                int id = c->byl[l][i - 1];
                int prev = i > 1 ? c->byl[l][i - 2] : -1;
                uint8_t r = 2;
                switch (f->kind) {
                case F_TRUE: r = 1; break;
                case F_ATOM: r = atom_at(c, f->atom, l, i); break;
                case F_NOT: r = not3(c->fval[f->a->id][id]); break;
                case F_AND: r = and3(c->fval[f->a->id][id], c->fval[f->b->id][id]); break;
                case F_OR: r = or3(c->fval[f->a->id][id], c->fval[f->b->id][id]); break;
                case F_PREV: r = prev < 0 ? 0 : c->fval[f->a->id][prev]; break;
                case F_SINCE: {
                    /* ψ now, or φ now and (φ since ψ) at the previous event */
                    uint8_t keep = prev < 0 ? 0 : and3(c->fval[f->a->id][id], v[prev]);
                    r = or3(c->fval[f->b->id][id], keep);
                    break;
                }
                case F_AT:
                    if (f->life == l) {
                        r = c->fval[f->a->id][id];
                    } else if (f->life < 0 || f->life >= c->m->nl) {
                        r = 2;
                    } else {
                        int64_t k = c->ev[id].cvc[f->life];
                        r = k <= 0 ? 0 : c->fval[f->a->id][c->byl[f->life][k - 1]];
                    }
                    break;
                }
                v[id] = r;
            }
    }
}

void zt_check_guards(Check *c)
{
    const ZtModel *m = c->m;
    bool any_cpl = false;
    for (int k = 1; k <= m->nconstructs; k++)
        if (m->ginfo[k] && m->ginfo[k]->cpl && m->ginfo[k]->root) any_cpl = true;
    if (any_cpl) eval_subs(c);
    for (int l = 0; l < m->nl; l++)
        for (int i = 1; i <= c->nbyl[l]; i++) {
            Ev *e = &c->ev[c->byl[l][i - 1]];
            if (e->kind != K_CHOICE) continue;
            int cn = zt_construct_index(m, e->construct);
            if (cn < 0) continue;
            const ZGuardInfo *g = m->ginfo[cn];
            const ZExpr *src = g ? g->source : m->constructs[cn]->expr;
            ZBuf gb = {0};
            za_print_expr(&gb, src);
            const char *gtext = zu_fmt(c->a, "%s", gb.data ? gb.data : "?");
            zu_buf_free(&gb);
            if (g && g->cpl && g->root && c->fval) {
                uint8_t v = c->fval[g->root->id][c->byl[l][i - 1]];
                if (v == 2) {
                    c->st.unverified++;
                    continue;
                }
                if (v != e->value)
                    zt_fail(c, e->line,
                            "%s: CPL guard of %s `%s` is %s by Definition 3 on the rebuilt chart, "
                            "but the recorded decision is %s",
                            zt_ev_where(c, e), e->construct, gtext, v ? "true" : "false",
                            e->value ? "true" : "false");
                c->st.cpl_checked++;
            } else {
                /* plain: the store before the choice */
                Env env = {.c = c, .life = l, .index = i - 1};
                Val v = zt_eval(&env, src);
                if (v.k != V_BOOL) {
                    c->st.unverified++;
                    continue;
                }
                if ((v.i != 0) != (e->value != 0))
                    zt_fail(
                        c, e->line,
                        "%s: guard of %s `%s` is %s on the store, but the recorded decision is %s",
                        zt_ev_where(c, e), e->construct, gtext, v.i ? "true" : "false",
                        e->value ? "true" : "false");
                c->st.plain_checked++;
            }
        }
}
