/* check_defined.c — definedness (language reference §4.3).
 *
 * Every variable is read only where it is defined on the reading
 * lifeline, on every path.  The state is two bit sets over (lifeline,
 * variable) of the path being walked (check.h): what is defined on every
 * path and what on some path; constructs with several paths walk each
 * and undo it, then join what they added (check.c).  `if` joins by
 * intersection; a `while` body is checked as its
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

/* ---- the path and its trail ---------------------------------------------- */

static void set_entry(Ck *c, uint32_t entry)
{
    int bit = (int)(entry >> 1);
    uint64_t *set = entry & CK_MAYBE ? c->maybe : c->must;
    if (bit_has(set, bit)) return;
    bit_add(set, bit);
    if (c->ntrail == c->captrail) {
        c->captrail = c->captrail ? c->captrail * 2 : 256;
        c->trail = zu_xrealloc(c->trail, c->captrail * sizeof *c->trail);
    }
    c->trail[c->ntrail++] = entry;
}

static void set_must(Ck *c, int bit) { set_entry(c, (uint32_t)bit << 1); }
static void set_maybe(Ck *c, int bit) { set_entry(c, (uint32_t)bit << 1 | CK_MAYBE); }

void ck_redo(Ck *c, uint32_t entry) { set_entry(c, entry); }

Delta ck_undo(Ck *c, size_t m)
{
    Delta d = {NULL, c->ntrail - m};
    d.e = zu_xmalloc((d.n ? d.n : 1) * sizeof *d.e);
    if (d.n) memcpy(d.e, c->trail + m, d.n * sizeof *d.e);
    for (size_t i = 0; i < d.n; i++) {
        int bit = (int)(d.e[i] >> 1);
        uint64_t *set = d.e[i] & CK_MAYBE ? c->maybe : c->must;
        set[bit >> 6] &= ~((uint64_t)1 << (bit & 63));
    }
    c->ntrail = m;
    return d;
}

void ck_set_partial(Ck *c, int bit, const ZStmt *s)
{
    *zu_imap_put(&c->partial, (uint64_t)bit, NULL) = (uintptr_t)s;
}

void ck_walk_begin(Ck *c)
{
    c->must = bits_new(c);
    c->maybe = bits_new(c);
    c->scratch = bits_new(c);
    c->reported = bits_new(c);
    c->ntrail = 0;
    c->par = NULL;
    for (int v = 0; v < c->nv; v++) {
        const ZDecl *var = c->p->vars.items[v];
        if (!var->expr) continue;
        for (int l = 0; l < c->nl; l++) {
            bit_add(c->must, l * c->nv + v);
            bit_add(c->maybe, l * c->nv + v);
        }
    }
}

void ck_walk_end(Ck *c)
{
    free(c->trail);
    c->trail = NULL;
    c->ntrail = c->captrail = 0;
    zu_imap_free(&c->site);
    zu_imap_free(&c->partial);
}

/* ---- definitions and reads ------------------------------------------------ */

void ck_define(Ck *c, int life, const ZDecl *var, ZSpan at)
{
    if (!var_ok(c, life, var)) return;
    int bit = bit_of(c, life, var);
    set_must(c, bit);
    set_maybe(c, bit);
    bool added;
    uintptr_t *site = zu_imap_put(&c->site, (uint64_t)bit, &added);
    if (added) {
        ZSpan *sp = zu_alloc(c->a, sizeof *sp);
        *sp = at;
        *site = (uintptr_t)sp;
    }
    if (c->par) ck_record(c, bit, true, at); /* inside a parallel branch */
}

/* via: the named guard through which `var` is read (at its use, `at`);
 * inner: the variable in the guard's formula. */
static void undefined(Ck *c, int life, const ZDecl *var, ZSpan at, const ZExpr *via, ZSpan inner)
{
    int bit = bit_of(c, life, var);
    set_must(c, bit); /* report once on this path */
    if (bit_has(c->reported, bit)) return;
    bit_add(c->reported, bit);
    if (ck_written_by_sibling(c, bit)) return; /* a parallel conflict, reported as such */
    zd_error(c->d, at, "`%s` is not defined on %s here", var->name, za_lifeline_name(c->p, life));
    if (via) zd_note(c->d, inner, "`%s` is read by guard `%s` here", var->name, via->name);
    uintptr_t *part = zu_imap_get(&c->partial, (uint64_t)bit);
    if (bit_has(c->maybe, bit) && part && *part) {
        const ZStmt *ps = (const ZStmt *)*part;
        if (ps->kind == S_WHILE)
            zd_note(c->d, first_line(ps->span),
                    "`%s` is defined on %s inside this `while`, whose body may not run", var->name,
                    za_lifeline_name(c->p, life));
        else
            zd_note(c->d, first_line(ps->span),
                    "`%s` is defined on %s on only some paths through this `if`", var->name,
                    za_lifeline_name(c->p, life));
        return;
    }
    for (int l = 0; l < c->nl; l++) {
        uintptr_t *site =
            l != life ? zu_imap_get(&c->site, (uint64_t)(l * c->nv + var->index)) : NULL;
        if (site) {
            zd_note(c->d, *(const ZSpan *)*site, "`%s` is defined on %s here", var->name,
                    za_lifeline_name(c->p, l));
            return;
        }
    }
}

void ck_use(Ck *c, int life, const ZExpr *e, const ZExpr *via, bool check)
{
    const ZDecl *var = e->decl;
    if (!var_ok(c, life, var)) return;
    int bit = bit_of(c, life, var);
    ZSpan at = via ? via->span : e->span;
    if (c->par) ck_record(c, bit, false, at);
    if (check && !bit_has(c->must, bit)) undefined(c, life, var, at, via, e->span);
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
 * through (reported at the guard's use, `via`), each once per
 * expression; terms under @B(...) and @B.x are read from views, not from
 * `life`'s store. */
static void reads_in(Ck *c, int life, const ZExpr *e, const ZExpr *via, bool check)
{
    if (!e) return;
    switch (e->kind) {
    case E_NAME:
        if (e->name_kind == NAME_VAR)
            ck_use(c, life, e, via, check);
        else if (e->name_kind == NAME_GUARD && e->decl && first_visit(c, e->decl))
            reads_in(c, life, e->decl->expr, via ? via : e, check);
        return;
    case E_AT:
    case E_AT_VAR:
    case E_SEEN: return;
    default: break;
    }
    reads_in(c, life, e->a, via, check);
    reads_in(c, life, e->b, via, check);
    reads_in(c, life, e->c, via, check);
    for (int i = 0; i < e->args.len; i++) reads_in(c, life, e->args.items[i], via, check);
}

void ck_reads(Ck *c, int life, const ZExpr *e, bool check)
{
    c->gen++;
    reads_in(c, life, e, NULL, check);
}
