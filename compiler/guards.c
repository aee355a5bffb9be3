/* guards.c — CPL guard enumeration: unfolding, sub(Φ), Vars(Φ) and the
 * per-lifeline monitor tables (§6, CPL paper §4–§5).
 *
 * 1. Unfolding.  Every guard that zk_is_cpl() reports as CPL is unfolded
 *    to primitive CPL (Definition 2): named guards are inlined; `once φ`
 *    becomes `true since φ`; `historically φ` becomes `!(true since !φ)`;
 *    `past φ` becomes `@B1(true since φ) || … || @Bn(true since φ)` over
 *    all lifelines in declaration order; `seen B` becomes `@B(true)`.
 *    `!`, `&&`, `||`, `==`/`!=` between bool operands and `?:` with a bool
 *    result are connectives wherever they occur, with or without a
 *    temporal operator inside: `a == b` becomes `(a && b) || (!a && !b)`,
 *    `a != b` becomes `(a && !b) || (!a && b)`, `c ? a : b` becomes
 *    `(c && a) || (!c && b)`.  An atom is a maximal subterm that is not a
 *    connective: a comparison of non-bool terms, a Boolean-valued call, a
 *    Boolean variable (x or @B.x) or constant; named guards inside its
 *    terms are inlined, so an atom never refers to a guard.  `true` is the
 *    constant F_TRUE and `false` is `!true`, the node a written `!true`
 *    gets.  An atom with an undefined term is false (Definition 3), so
 *    small atoms make `!(@B.x == 0)` true while x is undefined on B.
 *    Formulas are hash-consed: atoms by their printed text, other nodes by
 *    kind, lifeline and operands.  The evaluation lifeline is not part of
 *    a formula's identity: sub(Φ) is lifeline independent and the lifeline
 *    indexes the monitor tables.  Nodes are created children first, so
 *    creation order is a bottom-up order and a node's id is its position
 *    in sub(Φ).
 *    Sharing: formulas form a DAG, and everything below walks it, never
 *    the tree it stands for.  A named guard is unfolded once (its formula
 *    is kept by declaration) and every use refers to that formula; `past
 *    φ` makes one `true since φ` that each @B refers to.  A guard using
 *    another twice, 30 levels deep, is 33 subformulas (it took minutes:
 *    2^30 copies were unfolded and then hash-consed away), and `past`
 *    nested 10 deep over 10 lifelines 202 (3 GB to print).  An atom whose
 *    terms use named guards is inlined up to ZG_ATOM_INLINE_MAX nodes
 *    written out (so that small atoms read as before) and keeps their
 *    names beyond; the walks of an atom's terms never enter a guard (only
 *    plain guards occur in terms, and they have no @B.x).  The walks of
 *    formulas (mark, the printer) use explicit stacks: a formula is as
 *    deep as the chain of guards it uses.
 *
 * 2. Evaluation lifelines.  A guard is evaluated by its owner; inside
 *    @B(θ) the evaluation lifeline switches to B.  The walk visits each
 *    (subformula, lifeline) pair once.  For @B(θ) evaluated on E ≠ B:
 *      - if B cannot reach E in the message graph, @B(θ) is constantly
 *        false on E (no B-event is ever in E's causal past), so nothing is
 *        required and θ is not evaluated on B on its behalf;
 *      - otherwise E requires view(B, θ), and B evaluates θ at every one
 *        of its events.
 *    An @B.x term of an atom evaluated on E ≠ B likewise requires
 *    var(B, x) on E when B can reach E (when E = B it is the local store).
 *
 * 3. Forwarding rule.  The message graph has an edge Y → X for every send
 *    and send-ctl of the projected programs (user and control messages
 *    both carry monitor metadata); ⇝ is its reflexive-transitive closure
 *    and over-approximates every causal path of every run (kept in the
 *    table for the backend: zg_reaches).  A requirement
 *    "E needs entry (B, θ)" (or (B, x)) is carried by exactly the
 *    lifelines
 *          C(E, B) = { Y | B ⇝ Y and Y ⇝ E }
 *    (B itself exports the entry, E keeps it, everybody in between
 *    forwards it).  A message from Y to X carries what both keep, K(X) ∩
 *    K(Y): the plan (plan.c) lists it per edge, and its header shows that
 *    this is every entry X keeps about every B ≠ X that can reach Y, with
 *    the clock entries vc[B] of the same lifelines; a lifeline without a
 *    monitor keeps and sends nothing, which receivers read as the zero
 *    clock.
 *
 *    Why this preserves Algorithm 1's invariant (for every kept entry
 *    (B, θ) of X with vc_X(B) = k > 0, view_X(B, θ) is θ at B's k-th
 *    event): the invariant can only break on a receive at X from Y where
 *    the message is ahead on B (μ.vc(B) > vc_X(B)) but does not carry
 *    (B, θ).  Being ahead on B means a B-event reached Y, so B ⇝ Y; X ∈
 *    C(E, B) gives X ⇝ E, hence Y → X ⇝ E; so Y ∈ C(E, B) keeps the
 *    entry, it is in K(X) ∩ K(Y) and travels, and Y's own copy is correct
 *    by induction over the causally closed prefix.  The same argument
 *    shows that a lifeline without a monitor, or without entries about
 *    B, is never ahead on B when its receiver keeps entries about B, so
 *    reading its missing clock entries as zero loses nothing, and that
 *    vc_X(B) is exact for every B that X keeps entries about.
 *    Lifelines that cannot reach E never influence E's causal past and
 *    need nothing.  Entries not required anywhere only ever feed
 *    subformulas that are not evaluated, so dropping them changes no
 *    guard value.  Hence every guard value equals Definition 3 at its
 *    choice event.
 *
 * 4. State size: what the runtime allocates for lifeline L's monitor
 *    (runtime/monitor.c), in bytes; 0 for a lifeline without a monitor:
 *      vc      8 × |clock|        one 64-bit entry per kept lifeline: L
 *                                 and every B of its entries
 *      values  |evaluates|        one byte per subformula L evaluates
 *      old     |evaluates|        the previous event's values
 *      views   |remote views|     one byte per view(B, θ), B ≠ L (L's own
 *                                 are its values); presence is vc[B] > 0
 *      vars    16 × |remote vars| one tagged value per var(B, x), B ≠ L
 *                                 (L's own are its store)
 *    A traced run keeps the full clock instead (every event's trace line
 *    has it): 8 × |lifelines| for vc, on every lifeline.  The plan
 *    (plan.c) lays the same entries out and checks that it arrives at
 *    these sizes; `zgc guards` prints them.
 */
#include <stdlib.h>
#include <string.h>

#include "zgc.h"

typedef struct Triple {
    int y;   /* carrier lifeline */
    int b;   /* entry lifeline */
    int key; /* formula id or variable index */
} Triple;

typedef struct TripleVec {
    Triple *items;
    size_t len, cap;
} TripleVec;

typedef struct Enum {
    ZArena *arena;
    const ZProgram *prog;
    ZGuardTable *t;
    int nlife;
    /* hash-consing of formulas */
    ZFormula **htab;
    size_t hcap, hcount;
    ZVec texts; /* const char* per formula id: atom text (NULL otherwise) */
    /* named guards, by declaration index: each is unfolded once */
    int nguards;
    ZFormula **gform;      /* its formula, once unfolded */
    size_t *gsize;         /* its expanded size (see expanded_size), 0 unknown */
    unsigned char *gstate; /* 1 while being looked through (cycle protection) */
    int *var_pos;          /* per variable (prog->vars index): position in Vars(Φ), -1 */
    int *var_decl;         /* per position in Vars(Φ): the variable's prog->vars index */
    /* monitor tables */
    ZLifeSet *adj;     /* adj[Y]: lifelines Y sends to */
    ZLifeSet *reach;   /* reach[Y]: lifelines reachable from Y (reflexive) */
    ZLifeSet *evalset; /* per formula id: its evaluation lifelines */
    TripleVec views, vars;
} Enum;

/* ------------------------------------------------------------------ */
/* hash-consing                                                        */
/* ------------------------------------------------------------------ */

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
}

static uint64_t fhash(ZFormulaKind k, const char *text, int life, const ZFormula *a,
                      const ZFormula *b)
{
    uint64_t h = mix(0x12345, (uint64_t)k);
    h = mix(h, (uint64_t)(uintptr_t)text);
    h = mix(h, (uint64_t)(life + 1));
    h = mix(h, (uint64_t)(a ? a->id + 1 : 0));
    h = mix(h, (uint64_t)(b ? b->id + 1 : 0));
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return h;
}

static const char *text_of(const Enum *en, const ZFormula *f)
{
    return ZU_VEC_AT(en->texts, f->id);
}

static bool fsame(const Enum *en, const ZFormula *f, ZFormulaKind k, const char *text, int life,
                  const ZFormula *a, const ZFormula *b)
{
    return f->kind == k && text_of(en, f) == text && f->life == life && f->a == a && f->b == b;
}

static void rehash(Enum *en)
{
    size_t ncap = en->hcap ? en->hcap * 2 : 256;
    ZFormula **nt = zu_xcalloc(ncap, sizeof *nt);
    for (size_t i = 0; i < en->hcap; i++) {
        ZFormula *f = en->htab[i];
        if (!f) continue;
        size_t j = fhash(f->kind, text_of(en, f), f->life, f->a, f->b) & (ncap - 1);
        while (nt[j]) j = (j + 1) & (ncap - 1);
        nt[j] = f;
    }
    free(en->htab);
    en->htab = nt;
    en->hcap = ncap;
}

static ZFormula *mk(Enum *en, ZFormulaKind k, const ZExpr *atom, const char *text, int life,
                    ZFormula *a, ZFormula *b)
{
    if ((en->hcount + 1) * 2 > en->hcap) rehash(en);
    size_t j = fhash(k, text, life, a, b) & (en->hcap - 1);
    for (ZFormula *f; (f = en->htab[j]) != NULL; j = (j + 1) & (en->hcap - 1))
        if (fsame(en, f, k, text, life, a, b)) return f;
    ZFormula *f = zu_alloc(en->arena, sizeof *f);
    f->kind = k;
    f->id = en->t->subs.len;
    f->atom = atom;
    f->life = life;
    f->a = a;
    f->b = b;
    zu_vec_push(en->arena, &en->t->subs, f);
    zu_vec_push(en->arena, &en->texts, (void *)text);
    en->htab[j] = f;
    en->hcount++;
    return f;
}

static ZFormula *mk_true(Enum *en) { return mk(en, F_TRUE, NULL, NULL, -1, NULL, NULL); }
static ZFormula *mk1(Enum *en, ZFormulaKind k, ZFormula *a)
{
    return mk(en, k, NULL, NULL, -1, a, NULL);
}
static ZFormula *mk2(Enum *en, ZFormulaKind k, ZFormula *a, ZFormula *b)
{
    return mk(en, k, NULL, NULL, -1, a, b);
}
static ZFormula *mk_at(Enum *en, int life, ZFormula *a)
{
    return mk(en, F_AT, NULL, NULL, life, a, NULL);
}

/* ------------------------------------------------------------------ */
/* unfolding                                                           */
/* ------------------------------------------------------------------ */

static const ZDecl *guard_ref(const Enum *en, const ZExpr *e)
{
    if (e->kind == E_NAME && e->name_kind == NAME_GUARD && e->decl && e->decl->expr &&
        e->decl->index >= 0 && e->decl->index < en->nguards && !en->gstate[e->decl->index])
        return e->decl;
    return NULL;
}

/* The number of nodes of e with every named guard written out, at most
 * ZG_ATOM_INLINE_MAX + 1; each guard's is found once. */
static size_t expanded_size(Enum *en, const ZExpr *e)
{
    if (!e) return 0;
    const ZDecl *g = guard_ref(en, e);
    if (g) {
        size_t *m = &en->gsize[g->index];
        if (!*m) {
            en->gstate[g->index] = 1;
            *m = expanded_size(en, g->expr);
            en->gstate[g->index] = 0;
        }
        return *m;
    }
    size_t n = 1 + expanded_size(en, e->a) + expanded_size(en, e->b) + expanded_size(en, e->c);
    for (int i = 0; i < e->args.len && n <= ZG_ATOM_INLINE_MAX; i++)
        n += expanded_size(en, ZU_VEC_AT(e->args, i));
    return n > ZG_ATOM_INLINE_MAX ? ZG_ATOM_INLINE_MAX + 1 : n;
}

/* The expression with every named-guard reference replaced by the guard's
 * formula (copy on write: unchanged subtrees are shared).  Only for atoms
 * of at most ZG_ATOM_INLINE_MAX nodes written out. */
static const ZExpr *inline_guards(Enum *en, const ZExpr *e)
{
    if (!e) return NULL;
    const ZDecl *g = guard_ref(en, e);
    if (g) {
        en->gstate[g->index] = 1;
        const ZExpr *r = inline_guards(en, g->expr);
        en->gstate[g->index] = 0;
        return r;
    }
    const ZExpr *a = inline_guards(en, e->a);
    const ZExpr *b = inline_guards(en, e->b);
    const ZExpr *c = inline_guards(en, e->c);
    bool changed = a != e->a || b != e->b || c != e->c;
    const ZExpr **args = NULL;
    if (e->args.len) {
        args = zu_alloc(en->arena, sizeof *args * (size_t)e->args.len);
        for (int i = 0; i < e->args.len; i++) {
            args[i] = inline_guards(en, ZU_VEC_AT(e->args, i));
            changed |= args[i] != ZU_VEC_AT(e->args, i);
        }
    }
    if (!changed) return e;
    ZExpr *n = zu_alloc(en->arena, sizeof *n);
    *n = *e;
    n->a = (ZExpr *)a;
    n->b = (ZExpr *)b;
    n->c = (ZExpr *)c;
    memset(&n->args, 0, sizeof n->args);
    for (int i = 0; i < e->args.len; i++) zu_vec_push(en->arena, &n->args, (void *)args[i]);
    return n;
}

/* The position in Vars(Φ) of the variable of an @B.x term, or -1. */
static int var_pos(const Enum *en, const ZExpr *e)
{
    const ZDecl *v = e->decl;
    if (!v || v->kind != D_VAR || v->index < 0 || v->index >= en->prog->vars.len) return -1;
    return en->var_pos[v->index];
}

static void note_vars(Enum *en, const ZExpr *e)
{
    if (!e) return;
    if (e->kind == E_AT_VAR && e->name) {
        const ZDecl *v = e->decl;
        if (!v || v->kind != D_VAR || v->index < 0 || v->index >= en->prog->vars.len)
            ZU_ICE("@%s.%s without its variable", e->lifeline ? e->lifeline : "?", e->name);
        if (en->var_pos[v->index] < 0) {
            en->var_pos[v->index] = en->t->vars.len;
            en->var_decl[en->t->vars.len] = v->index;
            zu_vec_push(en->arena, &en->t->vars,
                        (void *)zu_intern(en->arena, e->name, strlen(e->name)));
        }
    }
    note_vars(en, e->a);
    note_vars(en, e->b);
    note_vars(en, e->c);
    for (int i = 0; i < e->args.len; i++) note_vars(en, ZU_VEC_AT(e->args, i));
}

/* The temporal or causal operator inside a term, or NULL (@B.x is a term). */
static const ZExpr *formula_op_in(const ZExpr *e)
{
    if (!e) return NULL;
    switch (e->kind) {
    case E_AT:
    case E_PREV:
    case E_SINCE:
    case E_ONCE:
    case E_HIST:
    case E_PAST:
    case E_SEEN: return e;
    default: break;
    }
    const ZExpr *r = formula_op_in(e->a);
    if (!r) r = formula_op_in(e->b);
    if (!r) r = formula_op_in(e->c);
    for (int i = 0; i < e->args.len && !r; i++) r = formula_op_in(ZU_VEC_AT(e->args, i));
    return r;
}

/* An atom: a comparison, a Boolean-valued call, a Boolean variable (x or
 * @B.x) or constant.  Named guards inside its terms (plain ones: the
 * checker allows no other there) are inlined when the atom written out
 * has at most ZG_ATOM_INLINE_MAX nodes; a larger atom keeps their names,
 * so that neither its text nor the code that evaluates it grows with
 * the guards' expansion (a guard using another twice doubles it). */
static ZFormula *mk_atom(Enum *en, const ZExpr *e)
{
    const ZExpr *x = expanded_size(en, e) <= ZG_ATOM_INLINE_MAX ? inline_guards(en, e) : e;
    ZBuf b = {0};
    za_print_expr(&b, x);
    const char *text = zu_intern(en->arena, b.data ? b.data : "", b.len);
    zu_buf_free(&b);
    int before = en->t->subs.len;
    ZFormula *f = mk(en, F_ATOM, x, text, -1, NULL, NULL);
    if (en->t->subs.len > before) {
        const ZExpr *op = formula_op_in(x);
        if (op)
            ZU_ICE("CPL operator %s inside the atom %s (the checker should have rejected it)",
                   za_expr_kind_name(op->kind), text);
        note_vars(en, x);
    }
    return f;
}

static bool is_bool(const ZExpr *e) { return e && e->type && e->type->kind == TY_BOOL; }

/* A connective of the formula language: its operands are formulas. */
static bool is_connective(const ZExpr *e)
{
    switch (e->kind) {
    case E_UNARY: return e->op == OP_NOT;
    case E_BINARY:
        if (e->op == OP_AND || e->op == OP_OR) return true;
        return (e->op == OP_EQ || e->op == OP_NE) && is_bool(e->a) && is_bool(e->b);
    case E_COND: return is_bool(e);
    default: return false;
    }
}

/* The formula of the Boolean expression `e` of a CPL guard.  Children are
 * unfolded left to right, so atoms (and Vars(Φ)) appear in source order. */
static ZFormula *unfold(Enum *en, const ZExpr *e)
{
    const ZDecl *g = guard_ref(en, e);
    if (g) { /* once per guard: a guard used twice is one subformula */
        ZFormula **m = &en->gform[g->index];
        if (!*m) {
            en->gstate[g->index] = 1;
            *m = unfold(en, g->expr);
            en->gstate[g->index] = 0;
        }
        return *m;
    }
    ZFormula *fa, *fb, *fc, *t;
    switch (e->kind) {
    case E_BOOL: /* false is !true: the same node as a written `!true` */
        t = mk_true(en);
        return e->lit.b ? t : mk1(en, F_NOT, t);
    case E_AT: return mk_at(en, e->life, unfold(en, e->a));
    case E_SEEN: return mk_at(en, e->life, mk_true(en));
    case E_PREV: return mk1(en, F_PREV, unfold(en, e->a));
    case E_SINCE:
        fa = unfold(en, e->a);
        fb = unfold(en, e->b);
        return mk2(en, F_SINCE, fa, fb);
    case E_ONCE: t = mk_true(en); return mk2(en, F_SINCE, t, unfold(en, e->a));
    case E_HIST:
        t = mk_true(en);
        fa = mk1(en, F_NOT, unfold(en, e->a));
        return mk1(en, F_NOT, mk2(en, F_SINCE, t, fa));
    case E_PAST: {
        t = mk_true(en);
        ZFormula *inner = mk2(en, F_SINCE, t, unfold(en, e->a));
        ZFormula *r = NULL;
        for (int i = 0; i < en->nlife; i++) {
            ZFormula *at = mk_at(en, i, inner);
            r = r ? mk2(en, F_OR, r, at) : at;
        }
        return r ? r : mk_true(en);
    }
    default: break;
    }
    if (!is_connective(e)) return mk_atom(en, e);
    if (e->kind == E_UNARY) return mk1(en, F_NOT, unfold(en, e->a));
    if (e->kind == E_COND) { /* c ? a : b on formulas: (c && a) || (!c && b) */
        fc = unfold(en, e->c);
        fa = unfold(en, e->a);
        fb = unfold(en, e->b);
        return mk2(en, F_OR, mk2(en, F_AND, fc, fa), mk2(en, F_AND, mk1(en, F_NOT, fc), fb));
    }
    fa = unfold(en, e->a);
    fb = unfold(en, e->b);
    switch (e->op) {
    case OP_AND: return mk2(en, F_AND, fa, fb);
    case OP_OR: return mk2(en, F_OR, fa, fb);
    case OP_EQ: /* a == b on formulas: (a && b) || (!a && !b) */
        return mk2(en, F_OR, mk2(en, F_AND, fa, fb),
                   mk2(en, F_AND, mk1(en, F_NOT, fa), mk1(en, F_NOT, fb)));
    case OP_NE: /* (a && !b) || (!a && b) */
        return mk2(en, F_OR, mk2(en, F_AND, fa, mk1(en, F_NOT, fb)),
                   mk2(en, F_AND, mk1(en, F_NOT, fa), fb));
    default: ZU_UNREACHABLE();
    }
}

/* ------------------------------------------------------------------ */
/* guards of the workflow                                              */
/* ------------------------------------------------------------------ */

static void collect_guards(Enum *en, const ZVec *stmts)
{
    for (int i = 0; i < stmts->len; i++) {
        const ZStmt *s = ZU_VEC_AT(*stmts, i);
        switch (s->kind) {
        case S_IF:
        case S_WHILE: {
            ZGuardInfo *gi = zu_alloc(en->arena, sizeof *gi);
            gi->construct = s;
            gi->tag = za_construct_tag(en->arena, s);
            gi->owner = s->life.index;
            gi->source = s->expr;
            gi->cpl = s->expr && zk_is_cpl(s->expr);
            if (gi->cpl) gi->root = unfold(en, s->expr);
            zu_vec_push(en->arena, &en->t->guards, gi);
            collect_guards(en, &s->body);
            collect_guards(en, &s->els);
            break;
        }
        case S_PAR:
            for (int k = 0; k < s->branches.len; k++) {
                const ZBranch *br = ZU_VEC_AT(s->branches, k);
                collect_guards(en, &br->body);
            }
            break;
        default: break;
        }
    }
}

/* ------------------------------------------------------------------ */
/* message graph                                                       */
/* ------------------------------------------------------------------ */

static void add_edges(Enum *en, int from, const ZVec *locals)
{
    for (int i = 0; i < locals->len; i++) {
        const ZLocal *l = ZU_VEC_AT(*locals, i);
        if ((l->kind == L_SEND || l->kind == L_SEND_CTL) && l->peer >= 0 && l->peer < en->nlife)
            zj_set_add(&en->adj[from], l->peer);
        add_edges(en, from, &l->body);
        add_edges(en, from, &l->els);
    }
}

static void compute_reach(Enum *en, const ZLocalSet *ls)
{
    int n = en->nlife;
    for (int i = 0; i < ls->programs.len; i++) {
        const ZLocalProgram *lp = ZU_VEC_AT(ls->programs, i);
        if (lp->lifeline >= 0 && lp->lifeline < n) add_edges(en, lp->lifeline, &lp->body);
    }
    int *stack = zu_xmalloc(sizeof *stack * (size_t)(n > 0 ? n : 1));
    for (int s = 0; s < n; s++) {
        ZLifeSet *r = &en->reach[s];
        int sp = 0;
        zj_set_add(r, s);
        stack[sp++] = s;
        while (sp > 0) {
            int u = stack[--sp];
            for (int v = 0; v < n; v++) {
                if (zj_set_has(&en->adj[u], v) && !zj_set_has(r, v)) {
                    zj_set_add(r, v);
                    stack[sp++] = v;
                }
            }
        }
    }
    free(stack);
}

static bool reaches(const Enum *en, int from, int to) { return zj_set_has(&en->reach[from], to); }

/* ------------------------------------------------------------------ */
/* evaluation lifelines and view requirements                          */
/* ------------------------------------------------------------------ */

static void push_triple(TripleVec *v, int y, int b, int key)
{
    if (v->len == v->cap) {
        size_t ncap = v->cap ? v->cap * 2 : 64;
        Triple *n = zu_xrealloc(v->items, ncap * sizeof *n);
        v->items = n;
        v->cap = ncap;
    }
    v->items[v->len++] = (Triple){y, b, key};
}

/* E needs an entry about B: every lifeline on a path B ⇝ Y ⇝ E carries it. */
static void require(Enum *en, TripleVec *into, int e, int b, int key)
{
    for (int y = 0; y < en->nlife; y++)
        if (reaches(en, y, e) && reaches(en, b, y)) push_triple(into, y, b, key);
}

static void scan_terms(Enum *en, const ZExpr *e, int eval)
{
    if (!e) return;
    if (e->kind == E_AT_VAR && e->name && e->life >= 0 && e->life < en->nlife && e->life != eval &&
        reaches(en, e->life, eval)) {
        int x = var_pos(en, e);
        if (x < 0) ZU_ICE("@%s.%s missing from Vars(Φ)", e->lifeline ? e->lifeline : "?", e->name);
        require(en, &en->vars, eval, e->life, x);
    }
    scan_terms(en, e->a, eval);
    scan_terms(en, e->b, eval);
    scan_terms(en, e->c, eval);
    for (int i = 0; i < e->args.len; i++) scan_terms(en, ZU_VEC_AT(e->args, i), eval);
}

/* Marks the (subformula, lifeline) pairs evaluated for f on `eval` and
 * the entries they require (2. above).  Each pair is visited once, with
 * an explicit stack: a formula is as deep as the guards it uses. */
typedef struct Mark {
    const ZFormula *f;
    int eval;
} Mark;

static void mark(Enum *en, const ZFormula *root, int eval0)
{
    size_t cap = 64, sp = 0;
    Mark *st = zu_xmalloc(cap * sizeof *st);
    st[sp++] = (Mark){root, eval0};
    while (sp > 0) {
        Mark m = st[--sp];
        const ZFormula *f = m.f;
        int eval = m.eval;
        if (zj_set_has(&en->evalset[f->id], eval)) continue;
        zj_set_add(&en->evalset[f->id], eval);
        if (sp + 2 > cap) {
            cap *= 2;
            st = zu_xrealloc(st, cap * sizeof *st);
        }
        switch (f->kind) {
        case F_TRUE: break;
        case F_ATOM: scan_terms(en, f->atom, eval); break;
        case F_NOT:
        case F_PREV: st[sp++] = (Mark){f->a, eval}; break;
        case F_AND:
        case F_OR:
        case F_SINCE:
            st[sp++] = (Mark){f->b, eval};
            st[sp++] = (Mark){f->a, eval};
            break;
        case F_AT:
            if (f->life == eval) {
                st[sp++] = (Mark){f->a, eval};
            } else if (f->life >= 0 && f->life < en->nlife && reaches(en, f->life, eval)) {
                require(en, &en->views, eval, f->life, f->a->id);
                st[sp++] = (Mark){f->a, f->life};
            }
            break;
        }
    }
    free(st);
}

static int cmp_triple(const void *x, const void *y)
{
    const Triple *a = x, *b = y;
    if (a->y != b->y) return a->y < b->y ? -1 : 1;
    if (a->b != b->b) return a->b < b->b ? -1 : 1;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return 0;
}

/* Sorts, removes duplicates and distributes the entries to the monitors. */
static void distribute(Enum *en, TripleVec *v, bool is_var)
{
    if (v->len == 0) return;
    qsort(v->items, v->len, sizeof *v->items, cmp_triple);
    for (size_t i = 0; i < v->len; i++) {
        const Triple *tr = &v->items[i];
        if (i > 0 && cmp_triple(tr, &v->items[i - 1]) == 0) continue;
        ZLifelineMonitor *m = ZU_VEC_AT(en->t->monitors, tr->y);
        ZViewEntry *ve = zu_alloc(en->arena, sizeof *ve);
        ve->life = tr->b;
        if (is_var) {
            ve->sub = -1;
            ve->var = ZU_VEC_AT(en->t->vars, tr->key);
            ve->var_decl = en->var_decl[tr->key];
            zu_vec_push(en->arena, &m->var_views, ve);
        } else {
            ve->sub = tr->key;
            zu_vec_push(en->arena, &m->bool_views, ve);
        }
    }
}

/* The clock entries, the remote entries and the state size of m
 * (4. above). */
static void size_monitor(const Enum *en, ZLifelineMonitor *m)
{
    size_t full = 8 * (size_t)en->nlife;
    m->traced_state_bytes = full;
    if (!m->needs_monitor) return;
    zj_set_add(&m->clock, m->life);
    for (int i = 0; i < m->bool_views.len; i++) {
        const ZViewEntry *v = ZU_VEC_AT(m->bool_views, i);
        zj_set_add(&m->clock, v->life);
        m->remote_views += v->life != m->life;
    }
    for (int i = 0; i < m->var_views.len; i++) {
        const ZViewEntry *v = ZU_VEC_AT(m->var_views, i);
        zj_set_add(&m->clock, v->life);
        m->remote_vars += v->life != m->life;
    }
    for (int b = 0; b < en->nlife; b++) m->nclock += zj_set_has(&m->clock, b);
    size_t rest =
        2 * (size_t)m->evaluates.len + (size_t)m->remote_views + 16 * (size_t)m->remote_vars;
    m->state_bytes = 8 * (size_t)m->nclock + rest;
    m->traced_state_bytes = full + rest;
}

static void build_monitors(Enum *en)
{
    ZGuardTable *t = en->t;
    int nsub = t->subs.len;
    for (int L = 0; L < en->nlife; L++) {
        ZLifelineMonitor *m = zu_alloc(en->arena, sizeof *m);
        m->life = L;
        m->traced_state_bytes = 8 * (size_t)en->nlife;
        zu_vec_push(en->arena, &t->monitors, m);
    }
    if (nsub == 0) return;
    en->evalset = zu_xcalloc((size_t)nsub, sizeof *en->evalset);
    for (int i = 0; i < t->guards.len; i++) {
        const ZGuardInfo *gi = ZU_VEC_AT(t->guards, i);
        if (gi->root && gi->owner >= 0 && gi->owner < en->nlife) mark(en, gi->root, gi->owner);
    }
    distribute(en, &en->views, false);
    distribute(en, &en->vars, true);
    for (int L = 0; L < en->nlife; L++) {
        ZLifelineMonitor *m = ZU_VEC_AT(t->monitors, L);
        for (int id = 0; id < nsub; id++)
            if (zj_set_has(&en->evalset[id], L))
                zu_vec_push(en->arena, &m->evaluates, ZU_VEC_AT(t->subs, id));
        m->needs_monitor = m->evaluates.len > 0 || m->bool_views.len > 0 || m->var_views.len > 0;
        size_monitor(en, m);
    }
}

bool zg_reaches(const ZGuardTable *t, int from, int to)
{
    int n = t && t->prog ? t->prog->lifelines.len : 0;
    if (!t || !t->reach || from < 0 || from >= n || to < 0 || to >= n) return false;
    return zj_set_has(&t->reach[from], to);
}

ZGuardTable *zg_enumerate(ZArena *a, const ZProgram *p, const ZDecl *wf, const ZLocalSet *ls)
{
    Enum en;
    memset(&en, 0, sizeof en);
    en.arena = a;
    en.prog = p;
    en.nlife = p->lifelines.len;
    if (en.nlife > ZJ_MAX_LIFELINES)
        ZU_ICE("%d lifelines exceed the limit of %d", en.nlife, ZJ_MAX_LIFELINES);
    en.t = zu_alloc(a, sizeof *en.t);
    en.t->prog = p;
    if (!ls) ls = zj_project(a, p, wf);
    for (int i = 0; i < p->decls.len; i++) {
        const ZDecl *d = ZU_VEC_AT(p->decls, i);
        if (d->kind == D_GUARD && d->index >= en.nguards) en.nguards = d->index + 1;
    }
    en.gform = zu_xcalloc((size_t)en.nguards + 1, sizeof *en.gform);
    en.gsize = zu_xcalloc((size_t)en.nguards + 1, sizeof *en.gsize);
    en.gstate = zu_xcalloc((size_t)en.nguards + 1, 1);
    size_t nv = (size_t)p->vars.len + 1;
    en.var_pos = zu_xmalloc(nv * sizeof *en.var_pos);
    en.var_decl = zu_xmalloc(nv * sizeof *en.var_decl);
    for (size_t i = 0; i < nv; i++) en.var_pos[i] = en.var_decl[i] = -1;

    collect_guards(&en, &wf->body);

    size_t nl = (size_t)(en.nlife > 0 ? en.nlife : 1);
    en.adj = zu_xcalloc(nl, sizeof *en.adj);
    en.reach = zu_xcalloc(nl, sizeof *en.reach);
    compute_reach(&en, ls);
    build_monitors(&en);
    en.t->reach = zu_alloc(a, sizeof *en.t->reach * nl);
    memcpy(en.t->reach, en.reach, sizeof *en.t->reach * nl);
    en.t->adj = zu_alloc(a, sizeof *en.t->adj * nl);
    memcpy(en.t->adj, en.adj, sizeof *en.t->adj * nl);

    free(en.htab);
    free(en.gform);
    free(en.gsize);
    free(en.gstate);
    free(en.var_pos);
    free(en.var_decl);
    free(en.adj);
    free(en.reach);
    free(en.evalset);
    free(en.views.items);
    free(en.vars.items);
    return en.t;
}

/* ------------------------------------------------------------------ */
/* printing                                                            */
/* ------------------------------------------------------------------ */

/* Precedence of formula-level syntax: || 1, && 2, since 3, prefix 4,
 * comparison and arithmetic atoms 5, primaries 6. */
static int atom_prec(const ZExpr *e)
{
    switch (e->kind) {
    case E_BINARY:
        if (e->op == OP_OR) return 1;
        if (e->op == OP_AND) return 2;
        return 5;
    case E_UNARY: return 4;
    case E_COND: return 0;
    default: return 6;
    }
}

static int fprec(const ZFormula *f)
{
    switch (f->kind) {
    case F_OR: return 1;
    case F_AND: return 2;
    case F_SINCE: return 3;
    case F_NOT:
    case F_PREV: return 4;
    case F_ATOM: return atom_prec(f->atom);
    case F_TRUE:
    case F_AT: return 6;
    }
    return 6;
}

/* Prints f in source-like syntax, without recursion (a formula is as deep
 * as the guards it uses).  printed: NULL to print every subformula in
 * full; otherwise a subformula other than `true` already printed (printed
 * [id] set) is printed as its reference φid, so that the text is linear
 * in the number of distinct subformulas. */
typedef struct PItem {
    const ZFormula *f; /* NULL: print lit */
    int ctx;
    const char *lit;
} PItem;

static void put_formula(ZBuf *b, const ZGuardTable *t, const ZFormula *root, unsigned char *printed)
{
    size_t cap = 64, sp = 0;
    PItem *st = zu_xmalloc(cap * sizeof *st);
    st[sp++] = (PItem){root, 0, NULL};
    while (sp > 0) {
        PItem it = st[--sp];
        if (!it.f) {
            zu_buf_puts(b, it.lit);
            continue;
        }
        const ZFormula *f = it.f;
        if (printed && f->kind != F_TRUE) {
            if (printed[f->id]) {
                zu_buf_printf(b, "φ%d", f->id);
                continue;
            }
            printed[f->id] = 1;
        }
        if (sp + 5 > cap) {
            cap *= 2;
            st = zu_xrealloc(st, cap * sizeof *st);
        }
        if (fprec(f) < it.ctx) {
            zu_buf_putc(b, '(');
            st[sp++] = (PItem){NULL, 0, ")"};
        }
        switch (f->kind) {
        case F_TRUE: zu_buf_puts(b, "true"); break;
        case F_ATOM: za_print_expr(b, f->atom); break;
        case F_NOT:
            zu_buf_putc(b, '!');
            st[sp++] = (PItem){f->a, 6, NULL};
            break;
        case F_PREV:
            zu_buf_puts(b, "prev ");
            st[sp++] = (PItem){f->a, 6, NULL};
            break;
        case F_AND:
        case F_OR:
            st[sp++] = (PItem){f->b, fprec(f) + 1, NULL};
            st[sp++] = (PItem){NULL, 0, f->kind == F_AND ? " && " : " || "};
            st[sp++] = (PItem){f->a, fprec(f), NULL};
            break;
        case F_SINCE:
            st[sp++] = (PItem){f->b, 4, NULL};
            st[sp++] = (PItem){NULL, 0, " since "};
            st[sp++] = (PItem){f->a, 4, NULL};
            break;
        case F_AT:
            zu_buf_printf(b, "@%s(", za_lifeline_name(t->prog, f->life));
            st[sp++] = (PItem){NULL, 0, ")"};
            st[sp++] = (PItem){f->a, 0, NULL};
            break;
        }
    }
    free(st);
}

void zg_print_formula(ZBuf *b, const ZGuardTable *t, const ZFormula *f)
{
    put_formula(b, t, f, NULL);
}

/* An upper bound of the length of every subformula printed in full (with
 * every pair of parentheses it might need), at most ZG_PRINT_INLINE_MAX
 * + 1: sub(Φ) is bottom-up, so one pass in id order. */
static size_t *full_lengths(const ZGuardTable *t)
{
    const size_t cap = ZG_PRINT_INLINE_MAX + 1;
    size_t *len = zu_xcalloc((size_t)t->subs.len + 1, sizeof *len);
    ZBuf b = {0};
    for (int i = 0; i < t->subs.len; i++) {
        const ZFormula *f = ZU_VEC_AT(t->subs, i);
        size_t n = 2; /* parentheses */
        switch (f->kind) {
        case F_TRUE: n += 4; break;
        case F_ATOM:
            b.len = 0;
            za_print_expr(&b, f->atom);
            n += b.len;
            break;
        case F_NOT: n += 1 + len[f->a->id]; break;
        case F_PREV: n += 5 + len[f->a->id]; break;
        case F_AND:
        case F_OR: n += len[f->a->id] + 4 + len[f->b->id]; break;
        case F_SINCE: n += len[f->a->id] + 7 + len[f->b->id]; break;
        case F_AT: n += strlen(za_lifeline_name(t->prog, f->life)) + 3 + len[f->a->id]; break;
        }
        len[f->id] = n < cap ? n : cap;
    }
    zu_buf_free(&b);
    return len;
}

static const char *fkind_name(ZFormulaKind k)
{
    switch (k) {
    case F_TRUE: return "true";
    case F_ATOM: return "atom";
    case F_NOT: return "not";
    case F_AND: return "and";
    case F_OR: return "or";
    case F_PREV: return "prev";
    case F_SINCE: return "since";
    case F_AT: return "at";
    }
    return "?";
}

static void put_sub_row(ZBuf *b, const ZGuardTable *t, const ZFormula *f)
{
    zu_buf_printf(b, "  φ%-4d %-6s ", f->id, fkind_name(f->kind));
    switch (f->kind) {
    case F_TRUE: zu_buf_puts(b, "true"); break;
    case F_ATOM: za_print_expr(b, f->atom); break;
    case F_NOT: zu_buf_printf(b, "!φ%d", f->a->id); break;
    case F_PREV: zu_buf_printf(b, "prev φ%d", f->a->id); break;
    case F_AND: zu_buf_printf(b, "φ%d && φ%d", f->a->id, f->b->id); break;
    case F_OR: zu_buf_printf(b, "φ%d || φ%d", f->a->id, f->b->id); break;
    case F_SINCE: zu_buf_printf(b, "φ%d since φ%d", f->a->id, f->b->id); break;
    case F_AT: zu_buf_printf(b, "@%s(φ%d)", za_lifeline_name(t->prog, f->life), f->a->id); break;
    }
    zu_buf_putc(b, '\n');
}

/* Distinct @B.x terms of the atoms of sub(Φ), in sub(Φ) order; seen:
 * (lifeline, variable) pairs already listed. */
static void collect_terms(const ZProgram *p, const ZExpr *e, ZVec *terms, ZArena *scratch,
                          ZIMap *seen)
{
    if (!e) return;
    if (e->kind == E_AT_VAR && e->decl) {
        bool added;
        zu_imap_put(seen, (uint64_t)e->life * (uint64_t)p->vars.len + (uint64_t)e->decl->index,
                    &added);
        if (added) zu_vec_push(scratch, terms, (void *)e);
    }
    collect_terms(p, e->a, terms, scratch, seen);
    collect_terms(p, e->b, terms, scratch, seen);
    collect_terms(p, e->c, terms, scratch, seen);
    for (int i = 0; i < e->args.len; i++)
        collect_terms(p, ZU_VEC_AT(e->args, i), terms, scratch, seen);
}

void zg_print(FILE *out, const ZGuardTable *t)
{
    ZBuf b = {0};
    const ZProgram *p = t->prog;

    /* An unfolded guard longer than ZG_PRINT_INLINE_MAX is printed with
     * references: a subformula printed once (on this line or an earlier
     * long one) is φk after that.  A guard using another twice, n levels
     * deep, would otherwise print 2^n copies. */
    size_t *len = full_lengths(t);
    unsigned char *printed = zu_xcalloc((size_t)t->subs.len + 1, 1);
    for (int i = 0; i < t->guards.len; i++) {
        const ZGuardInfo *gi = ZU_VEC_AT(t->guards, i);
        zu_buf_printf(&b, "guard %s @ %s: ", gi->tag, za_lifeline_name(p, gi->owner));
        if (gi->source) za_print_expr(&b, gi->source);
        zu_buf_putc(&b, '\n');
        if (gi->root) {
            zu_buf_puts(&b, "  unfolded: ");
            put_formula(&b, t, gi->root, len[gi->root->id] > ZG_PRINT_INLINE_MAX ? printed : NULL);
            zu_buf_printf(&b, "  [φ%d]\n", gi->root->id);
            zu_buf_puts(&b, "  kind: cpl\n");
        } else {
            zu_buf_puts(&b, "  kind: plain (no monitor)\n");
        }
    }
    if (t->guards.len == 0) zu_buf_puts(&b, "no guards\n");
    free(len);
    free(printed);

    zu_buf_printf(&b, "\nsub(Φ): %d\n", t->subs.len);
    for (int i = 0; i < t->subs.len; i++) put_sub_row(&b, t, ZU_VEC_AT(t->subs, i));

    zu_buf_puts(&b, "\nVars(Φ):");
    if (t->vars.len == 0) zu_buf_puts(&b, " none");
    for (int i = 0; i < t->vars.len; i++)
        zu_buf_printf(&b, " %s", (const char *)ZU_VEC_AT(t->vars, i));
    zu_buf_putc(&b, '\n');
    if (t->vars.len) {
        ZArena *scratch = zu_arena_new();
        ZVec terms = {0};
        ZIMap seen = {0};
        for (int i = 0; i < t->subs.len; i++) {
            const ZFormula *f = ZU_VEC_AT(t->subs, i);
            if (f->kind == F_ATOM) collect_terms(p, f->atom, &terms, scratch, &seen);
        }
        zu_imap_free(&seen);
        zu_buf_puts(&b, "  terms:");
        for (int i = 0; i < terms.len; i++) {
            const ZExpr *e = ZU_VEC_AT(terms, i);
            zu_buf_printf(&b, " @%s.%s", za_lifeline_name(p, e->life), e->name);
        }
        zu_buf_putc(&b, '\n');
        zu_arena_free(scratch);
    }

    for (int i = 0; i < t->monitors.len; i++) {
        const ZLifelineMonitor *m = ZU_VEC_AT(t->monitors, i);
        zu_buf_putc(&b, '\n');
        int nl = p->lifelines.len;
        if (!m->needs_monitor) {
            /* the state lines are what the runtime allocates (4. above) */
            zu_buf_printf(&b, "lifeline %s: no monitor (state 0 B; traced: vc %d × 8 B = %zu B)\n",
                          za_lifeline_name(p, m->life), nl, m->traced_state_bytes);
            continue;
        }
        zu_buf_printf(&b, "lifeline %s: monitor\n", za_lifeline_name(p, m->life));
        zu_buf_puts(&b, "  evaluates:");
        if (m->evaluates.len == 0) zu_buf_puts(&b, " none");
        for (int k = 0; k < m->evaluates.len; k++) {
            const ZFormula *f = ZU_VEC_AT(m->evaluates, k);
            zu_buf_printf(&b, " φ%d", f->id);
        }
        zu_buf_puts(&b, "\n  bool views:");
        if (m->bool_views.len == 0) zu_buf_puts(&b, " none");
        for (int k = 0; k < m->bool_views.len; k++) {
            const ZViewEntry *v = ZU_VEC_AT(m->bool_views, k);
            zu_buf_printf(&b, " view(%s, φ%d)", za_lifeline_name(p, v->life), v->sub);
        }
        zu_buf_puts(&b, "\n  var views:");
        if (m->var_views.len == 0) zu_buf_puts(&b, " none");
        for (int k = 0; k < m->var_views.len; k++) {
            const ZViewEntry *v = ZU_VEC_AT(m->var_views, k);
            zu_buf_printf(&b, " var(%s, %s)", za_lifeline_name(p, v->life), v->var);
        }
        zu_buf_printf(&b,
                      "\n  state: vc %d × 8 B + values %d B + old %d B + views %d B + vars %d × "
                      "16 B = %zu B; traced: vc %d × 8 B, %zu B\n",
                      m->nclock, m->evaluates.len, m->evaluates.len, m->remote_views,
                      m->remote_vars, m->state_bytes, nl, m->traced_state_bytes);
    }
    if (b.len) fwrite(b.data, 1, b.len, out);
    zu_buf_free(&b);
}
