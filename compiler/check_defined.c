/* check_defined.c — definedness (language reference §4.3).
 *
 * Every variable is read only where it is defined on the reading
 * lifeline, on every path.  The state is two bit sets over (lifeline,
 * variable) (check.h): what is defined on every path and what on some
 * path.  `if` joins by intersection; a `while` body is checked as its
 * first iteration and may not run, so after the loop only what was defined
 * before it and what its `else` (exit protocol, run once) defines is
 * defined; after `parallel` everything any branch defines is defined; a
 * coregion's sends read before all its receives define (the joins are in
 * check.c).  Terms of a guard with temporal or causal operators may be
 * undefined (the atom is false), so those guards are not checked for
 * definedness.  An undefined variable is reported once per (lifeline,
 * variable) and then treated as defined; a read of a variable that another
 * branch of an enclosing `parallel` writes is reported once, as a parallel
 * conflict (check_parallel.c), not also as undefined.
 */
#include "check.h"

/* ---- flows -------------------------------------------------------------- */

Flow ck_flow_copy(Ck *c, const Flow *f)
{
    Flow g = {bits_new(c), bits_new(c)};
    memcpy(g.must, f->must, sizeof(uint64_t) * (size_t)c->nwords);
    memcpy(g.maybe, f->maybe, sizeof(uint64_t) * (size_t)c->nwords);
    return g;
}

void ck_define(Ck *c, Flow *f, int life, const ZDecl *var, ZSpan at)
{
    if (!var_ok(c, life, var)) return;
    int bit = bit_of(c, life, var);
    bit_add(f->must, bit);
    bit_add(f->maybe, bit);
    if (!c->has_site[bit]) {
        c->has_site[bit] = true;
        c->site[bit] = at;
    }
    if (c->par) ck_record(c, bit, true, at); /* inside a parallel branch */
}

/* via: the named guard through which `var` is read (at its use, `at`);
 * inner: the variable in the guard's formula. */
static void undefined(Ck *c, Flow *f, int life, const ZDecl *var, ZSpan at, const ZExpr *via,
                      ZSpan inner)
{
    int bit = bit_of(c, life, var);
    bit_add(f->must, bit); /* report once on this path */
    if (bit_has(c->reported, bit)) return;
    bit_add(c->reported, bit);
    if (ck_written_by_sibling(c, bit)) return; /* a parallel conflict, reported as such */
    zd_error(c->d, at, "`%s` is not defined on %s here", var->name, za_lifeline_name(c->p, life));
    if (via) zd_note(c->d, inner, "`%s` is read by guard `%s` here", var->name, via->name);
    const ZStmt *part = c->partial[bit];
    if (bit_has(f->maybe, bit) && part) {
        if (part->kind == S_WHILE)
            zd_note(c->d, first_line(part->span),
                    "`%s` is defined on %s inside this `while`, whose body may not run", var->name,
                    za_lifeline_name(c->p, life));
        else
            zd_note(c->d, first_line(part->span),
                    "`%s` is defined on %s on only some paths through this `if`", var->name,
                    za_lifeline_name(c->p, life));
        return;
    }
    for (int l = 0; l < c->nl; l++) {
        int b = l * c->nv + var->index;
        if (l != life && c->has_site[b]) {
            zd_note(c->d, c->site[b], "`%s` is defined on %s here", var->name,
                    za_lifeline_name(c->p, l));
            return;
        }
    }
}

void ck_use(Ck *c, Flow *f, int life, const ZExpr *e, const ZExpr *via, bool check)
{
    const ZDecl *var = e->decl;
    if (!var_ok(c, life, var)) return;
    int bit = bit_of(c, life, var);
    ZSpan at = via ? via->span : e->span;
    if (c->par) ck_record(c, bit, false, at);
    if (check && !bit_has(f->must, bit)) undefined(c, f, life, var, at, via, e->span);
}

/* Whether a named guard is looked through for the first time in this
 * expression (each is expanded once per expression). */
static bool first_visit(Ck *c, const ZDecl *g)
{
    if (g->index < 0 || g->index >= c->n_guard) return false;
    if (c->guard_gen[g->index] == c->gen) return false;
    c->guard_gen[g->index] = c->gen;
    return true;
}

/* The variables an expression reads on `life`.  Named guards are looked
 * through (reported at the guard's use, `via`); terms under @B(...) and
 * @B.x are read from views, not from `life`'s store. */
static void reads_in(Ck *c, Flow *f, int life, const ZExpr *e, const ZExpr *via, bool check)
{
    if (!e) return;
    switch (e->kind) {
    case E_NAME:
        if (e->name_kind == NAME_VAR)
            ck_use(c, f, life, e, via, check);
        else if (e->name_kind == NAME_GUARD && e->decl && first_visit(c, e->decl))
            reads_in(c, f, life, e->decl->expr, via ? via : e, check);
        return;
    case E_AT:
    case E_AT_VAR:
    case E_SEEN: return;
    default: break;
    }
    reads_in(c, f, life, e->a, via, check);
    reads_in(c, f, life, e->b, via, check);
    reads_in(c, f, life, e->c, via, check);
    for (int i = 0; i < e->args.len; i++) reads_in(c, f, life, e->args.items[i], via, check);
}

void ck_reads(Ck *c, Flow *f, int life, const ZExpr *e, bool check)
{
    c->gen++;
    reads_in(c, f, life, e, NULL, check);
}

/* Marks what only some of the joined paths define. */
void ck_mark_partial(Ck *c, const uint64_t *a, const uint64_t *b, const ZStmt *s)
{
    for (int w = 0; w < c->nwords; w++) {
        uint64_t x = a[w] ^ b[w];
        while (x) {
            int k = __builtin_ctzll(x);
            x &= x - 1;
            c->partial[w * 64 + k] = s;
        }
    }
}
