/* cpl.c — guards: at every choice event the guard is evaluated and must
 * equal the recorded decision.  A guard with a temporal or causal
 * operator or an @B.x term (named guards looked through) is a CPL guard,
 * evaluated by Definition 3 of the CPL paper directly over its source
 * syntax tree (the parser's output, resolved and typed: ZStmt.expr of the
 * if/while), on the chart rebuilt from the trace (chart.c).  Nothing of
 * the compiler's guards pass (unfolding, sub(Φ), monitor tables) is used.
 * Any other guard is plain, evaluated on the owner's store before the
 * choice (eval.c).
 *
 * The formula.  The source tree is read once into nodes of our own:
 *   - connectives between formulas: `!`, `&&`, `||`, `==` and `!=` with
 *     bool operands (equivalence and its negation), `c ? φ : ψ` (bool);
 *   - the CPL operators @B(φ), prev, since, once, historically, past, seen;
 *   - a named guard stands for its formula (the node of its tree);
 *   - everything else in formula position is an atom: a comparison of
 *     values, a Boolean builtin or pure action call, a Boolean variable or
 *     @B.x term, a literal or constant.  Connectives inside an atom (in a
 *     call's argument, in a `?:` whose value is not bool) belong to the
 *     atom's terms.
 *
 * Definition 3, at event e of lifeline A (0 false, 1 true, 2 unknown):
 *   atom       false when a term is undefined (x: no value on A after e;
 *              @B.x: no B-event visible from e, or x has no value there;
 *              eval.c), else its value on A's store after e;
 *   @B(φ)      φ at e when B = A; else φ at last_B(e), the vc(e)[B]-th
 *              event of B (vector clocks of chart.c), false when none;
 *   seen B     @B(true);
 *   prev φ     φ at the previous event of A, false at the first;
 *   φ since ψ  ψ at e, or φ at e and (φ since ψ) at the previous event;
 *   once φ     φ at e or once φ at the previous event (true since φ);
 *   historically φ   φ at e and historically φ at the previous event
 *              (true before the first: !(once !φ));
 *   past φ     OR over all lifelines B of @B(once φ);
 *   connectives as usual (Kleene's three values for "unknown").
 * Values are memoised per (node, event): a node's table is allocated the
 * first time the node is evaluated, and since/once/historically fill it
 * forward along the lifeline from the last event already known, so the
 * recursion is only as deep as the formula.  "Unknown" (a value eval.c
 * cannot compute) leaves the guard unverified instead of failing. */
#include "zt.h"

#include <stdlib.h>
#include <string.h>

typedef enum {
    N_UNKNOWN, /* beyond ZT_MAX_FORMULA_DEPTH: always unknown */
    N_ATOM,
    N_NOT,
    N_AND,
    N_OR,
    N_IFF, /* φ == ψ between formulas */
    N_XOR, /* φ != ψ between formulas */
    N_COND,
    N_AT,
    N_SEEN,
    N_PREV,
    N_SINCE,
    N_ONCE,
    N_HIST,
    N_PAST, /* operand: the once-node of its formula */
} NodeKind;

typedef struct Node {
    NodeKind kind;
    const ZExpr *atom; /* N_ATOM */
    int a, b, c;       /* operands (node ids); N_COND: c ? a : b */
    int life;          /* N_AT, N_SEEN */
    bool cpl;          /* it or a node below it needs the chart */
    uint8_t *val;      /* per event id: 0, 1, 2 (unknown), UNSET; NULL before use */
} Node;

#define UNSET 3

/* The nodes of one check, and the source expressions already read. */
typedef struct Cpl {
    Check *c;
    Node *n;
    int len, cap;
    const ZExpr **keys; /* open addressing: expression -> node id */
    int *ids;
    int hcap, hcount;
    long cells; /* memo cells allocated */
} Cpl;

/* ===================================================================== */
/* Nodes from the source tree                                             */
/* ===================================================================== */

static unsigned long hash_ptr(const void *p)
{
    unsigned long h = (unsigned long)(uintptr_t)p;
    h ^= h >> 17;
    h *= 0xed5ad4bbul;
    h ^= h >> 11;
    return h;
}

static int lookup(const Cpl *k, const ZExpr *e)
{
    if (!k->hcap) return -1;
    for (int i = (int)(hash_ptr(e) % (unsigned long)k->hcap);; i = (i + 1) % k->hcap) {
        if (!k->keys[i]) return -1;
        if (k->keys[i] == e) return k->ids[i];
    }
}

static void remember(Cpl *k, const ZExpr *e, int id)
{
    if ((k->hcount + 1) * 2 > k->hcap) {
        int ncap = k->hcap ? k->hcap * 2 : 64;
        const ZExpr **nk = zu_alloc(k->c->a, sizeof *nk * (size_t)ncap);
        int *ni = zu_alloc(k->c->a, sizeof *ni * (size_t)ncap);
        for (int i = 0; i < k->hcap; i++) {
            if (!k->keys[i]) continue;
            int j = (int)(hash_ptr(k->keys[i]) % (unsigned long)ncap);
            while (nk[j]) j = (j + 1) % ncap;
            nk[j] = k->keys[i];
            ni[j] = k->ids[i];
        }
        k->keys = nk;
        k->ids = ni;
        k->hcap = ncap;
    }
    int i = (int)(hash_ptr(e) % (unsigned long)k->hcap);
    while (k->keys[i]) i = (i + 1) % k->hcap;
    k->keys[i] = e;
    k->ids[i] = id;
    k->hcount++;
}

/* A new node (operands made before it: the array may move). */
static int add(Cpl *k, NodeKind kind, int a, int b, int cc)
{
    if (k->len == k->cap) {
        int ncap = k->cap ? k->cap * 2 : 32;
        Node *nn = zu_alloc(k->c->a, sizeof *nn * (size_t)ncap);
        if (k->len) memcpy(nn, k->n, sizeof *nn * (size_t)k->len);
        k->n = nn;
        k->cap = ncap;
    }
    Node *x = &k->n[k->len];
    memset(x, 0, sizeof *x);
    x->kind = kind;
    x->a = a, x->b = b, x->c = cc;
    x->life = -1;
    x->cpl = kind == N_UNKNOWN || kind >= N_AT; /* unknown: never read as plain */
    for (int i = 0; i < 3; i++) {
        int o = i == 0 ? a : i == 1 ? b : cc;
        if (o >= 0 && k->n[o].cpl) x->cpl = true;
    }
    return k->len++;
}

static int node_of(Cpl *k, const ZExpr *e, int depth);

/* An @B.x term inside an atom (constants have none; a named guard's
 * answer is its node's, so each guard is looked through once). */
static bool has_at_var(Cpl *k, const ZExpr *e, int depth)
{
    if (!e || depth > ZT_MAX_FORMULA_DEPTH) return false;
    if (e->kind == E_AT_VAR) return true;
    if (e->kind == E_NAME && e->name_kind == NAME_GUARD && e->decl)
        return k->n[node_of(k, e->decl->expr, depth + 1)].cpl;
    if (has_at_var(k, e->a, depth + 1) || has_at_var(k, e->b, depth + 1) ||
        has_at_var(k, e->c, depth + 1))
        return true;
    for (int i = 0; i < e->args.len; i++)
        if (has_at_var(k, ZU_VEC_AT(e->args, i), depth + 1)) return true;
    return false;
}

static bool is_bool(const ZExpr *e) { return e && e->type && e->type->kind == TY_BOOL; }

/* An atom: cpl when it has an @B.x term. */
static int add_atom(Cpl *k, const ZExpr *e, int depth)
{
    bool cpl = has_at_var(k, e, depth); /* may add nodes: before this one */
    int id = add(k, N_ATOM, -1, -1, -1);
    k->n[id].atom = e;
    k->n[id].cpl = cpl;
    return id;
}

/* The node of e, a bool expression in formula position. */
static int node_of(Cpl *k, const ZExpr *e, int depth)
{
    if (!e || depth > ZT_MAX_FORMULA_DEPTH) return add(k, N_UNKNOWN, -1, -1, -1);
    int id = lookup(k, e);
    if (id >= 0) return id;
    int a = -1, b = -1, cc = -1;
    switch (e->kind) {
    case E_NAME:
        if (e->name_kind == NAME_GUARD && e->decl && e->decl->expr)
            id = node_of(k, e->decl->expr, depth + 1);
        else
            id = add_atom(k, e, depth);
        break;
    case E_UNARY:
        if (e->op != OP_NOT) {
            id = add_atom(k, e, depth);
            break;
        }
        a = node_of(k, e->a, depth + 1);
        id = add(k, N_NOT, a, -1, -1);
        break;
    case E_BINARY:
        if (!(e->op == OP_AND || e->op == OP_OR ||
              ((e->op == OP_EQ || e->op == OP_NE) && is_bool(e->a) && is_bool(e->b)))) {
            id = add_atom(k, e, depth); /* a comparison */
            break;
        }
        a = node_of(k, e->a, depth + 1);
        b = node_of(k, e->b, depth + 1);
        id = add(k,
                 e->op == OP_AND  ? N_AND
                 : e->op == OP_OR ? N_OR
                 : e->op == OP_EQ ? N_IFF
                                  : N_XOR,
                 a, b, -1);
        break;
    case E_COND:
        if (!is_bool(e)) {
            id = add_atom(k, e, depth);
            break;
        }
        cc = node_of(k, e->c, depth + 1);
        a = node_of(k, e->a, depth + 1);
        b = node_of(k, e->b, depth + 1);
        id = add(k, N_COND, a, b, cc);
        break;
    case E_AT:
    case E_SEEN:
        if (e->kind == E_AT) a = node_of(k, e->a, depth + 1);
        id = add(k, e->kind == E_AT ? N_AT : N_SEEN, a, -1, -1);
        k->n[id].life = e->life;
        break;
    case E_PREV:
    case E_ONCE:
    case E_HIST:
        a = node_of(k, e->a, depth + 1);
        id = add(k, e->kind == E_PREV ? N_PREV : e->kind == E_ONCE ? N_ONCE : N_HIST, a, -1, -1);
        break;
    case E_SINCE:
        a = node_of(k, e->a, depth + 1);
        b = node_of(k, e->b, depth + 1);
        id = add(k, N_SINCE, a, b, -1);
        break;
    case E_PAST:
        a = node_of(k, e->a, depth + 1);
        a = add(k, N_ONCE, a, -1, -1);
        id = add(k, N_PAST, a, -1, -1);
        break;
    default: id = add_atom(k, e, depth); break;
    }
    remember(k, e, id);
    return id;
}

/* ===================================================================== */
/* Definition 3                                                           */
/* ===================================================================== */

static uint8_t and3(uint8_t a, uint8_t b)
{
    return (a == 0 || b == 0) ? 0 : (a == 2 || b == 2) ? 2 : 1;
}
static uint8_t or3(uint8_t a, uint8_t b)
{
    return (a == 1 || b == 1) ? 1 : (a == 2 || b == 2) ? 2 : 0;
}
static uint8_t not3(uint8_t a) { return a == 2 ? 2 : (uint8_t)!a; }

/* The source text of a guard or atom, for messages. */
static const char *expr_text(Check *c, const ZExpr *e)
{
    ZBuf b = {0};
    za_print_expr(&b, e);
    const char *t = zu_fmt(c->a, "%s", b.data ? b.data : "?");
    zu_buf_free(&b);
    return t;
}

/* An atom at l's i-th event: false with an undefined term; a run-time
 * error in it is a disagreement, since the monitor evaluates the atom at
 * that event and the run stops there (the event is never written). */
static uint8_t atom_at(Check *c, const ZExpr *atom, int l, int i)
{
    Env env = {.c = c, .life = l, .index = i};
    if (!zt_terms_defined(&env, atom, 0)) return 0;
    env.undef = false;
    Val v = zt_eval(&env, atom);
    if (env.undef) return 0;
    if (v.k == V_ERROR) {
        const Ev *e = &c->ev[c->byl[l][i - 1]];
        const char *text = expr_text(c, atom);
        zt_fail(c, e->line,
                "%s: the guard atom `%s` fails here (%s): the monitor evaluates it after this "
                "event, so the run would have stopped with this error",
                zt_ev_where(c, e), text, v.s ? v.s : "a run-time error");
    }
    if (v.k != V_BOOL) return 2;
    return v.i ? 1 : 0;
}

/* The value table of node id. */
static uint8_t *table(Cpl *k, int id)
{
    Node *x = &k->n[id];
    if (!x->val) {
        Check *c = k->c;
        k->cells += c->nev;
        if (k->cells > ZT_MAX_CELLS * 4L)
            zt_fail(c, 0, "trace too large to check guards (%ld events)", c->nev);
        x->val = zu_alloc(c->a, (size_t)(c->nev ? c->nev : 1));
        memset(x->val, UNSET, (size_t)(c->nev ? c->nev : 1));
    }
    return x->val;
}

static uint8_t val(Cpl *k, int id, int l, int i);

/* since, once, historically at l's i-th event: from the last event of l
 * whose value is known (or before the first), forward to i. */
static uint8_t temporal(Cpl *k, int id, int l, int i)
{
    Check *c = k->c;
    uint8_t *t = table(k, id);
    NodeKind kind = k->n[id].kind;
    int a = k->n[id].a, b = k->n[id].b;
    int j = i - 1;
    while (j >= 1 && t[c->byl[l][j - 1]] == UNSET) j--;
    uint8_t before = j >= 1 ? t[c->byl[l][j - 1]] : kind == N_HIST ? 1 : 0;
    for (int m = j + 1; m <= i; m++) {
        uint8_t r;
        if (kind == N_SINCE)
            r = or3(val(k, b, l, m), and3(val(k, a, l, m), before));
        else if (kind == N_ONCE)
            r = or3(val(k, a, l, m), before);
        else
            r = and3(val(k, a, l, m), before);
        t[c->byl[l][m - 1]] = r; /* tables live in the arena: they never move */
        before = r;
    }
    return before;
}

/* Node id at l's i-th event (1-based). */
static uint8_t val(Cpl *k, int id, int l, int i)
{
    Check *c = k->c;
    int ev = c->byl[l][i - 1];
    uint8_t *t = table(k, id);
    if (t[ev] != UNSET) return t[ev];
    Node x = k->n[id];
    const int64_t *vc = c->ev[ev].cvc;
    uint8_t r = 2;
    switch (x.kind) {
    case N_UNKNOWN: r = 2; break;
    case N_ATOM: r = atom_at(c, x.atom, l, i); break;
    case N_NOT: r = not3(val(k, x.a, l, i)); break;
    case N_AND: {
        uint8_t p = val(k, x.a, l, i);
        r = p == 0 ? 0 : and3(p, val(k, x.b, l, i));
        break;
    }
    case N_OR: {
        uint8_t p = val(k, x.a, l, i);
        r = p == 1 ? 1 : or3(p, val(k, x.b, l, i));
        break;
    }
    case N_IFF:
    case N_XOR: {
        uint8_t p = val(k, x.a, l, i), q = val(k, x.b, l, i);
        r = (p == 2 || q == 2) ? 2 : (uint8_t)((p == q) == (x.kind == N_IFF));
        break;
    }
    case N_COND: {
        uint8_t cv = val(k, x.c, l, i);
        if (cv != 2) {
            r = val(k, cv ? x.a : x.b, l, i);
        } else {
            uint8_t p = val(k, x.a, l, i), q = val(k, x.b, l, i);
            r = p == q ? p : 2;
        }
        break;
    }
    case N_AT:
        if (x.life == l)
            r = val(k, x.a, l, i);
        else if (x.life < 0 || x.life >= c->m->nl)
            r = 2;
        else
            r = vc[x.life] <= 0 ? 0 : val(k, x.a, x.life, (int)vc[x.life]);
        break;
    case N_SEEN: r = x.life == l ? 1 : x.life < 0 || x.life >= c->m->nl ? 2 : vc[x.life] > 0; break;
    case N_PREV: r = i > 1 ? val(k, x.a, l, i - 1) : 0; break;
    case N_SINCE:
    case N_ONCE:
    case N_HIST: r = temporal(k, id, l, i); break;
    case N_PAST:
        /* x.a is once φ */
        r = 0;
        for (int bl = 0; bl < c->m->nl && r != 1; bl++) {
            if (bl == l)
                r = or3(r, val(k, x.a, l, i));
            else if (vc[bl] > 0)
                r = or3(r, val(k, x.a, bl, (int)vc[bl]));
        }
        break;
    }
    k->n[id].val[ev] = r;
    return r;
}

/* ===================================================================== */
/* The guards at their choice events                                      */
/* ===================================================================== */

void zt_check_guards(Check *c)
{
    const ZtModel *m = c->m;
    Cpl k = {.c = c};
    /* per construct: its root node, built at its first choice event */
    int *root = zu_alloc(c->a, sizeof(int) * (size_t)(m->nconstructs + 2));
    for (int cn = 0; cn <= m->nconstructs + 1; cn++) root[cn] = -1;
    for (int l = 0; l < m->nl; l++)
        for (int i = 1; i <= c->nbyl[l]; i++) {
            Ev *e = &c->ev[c->byl[l][i - 1]];
            if (e->kind != K_CHOICE) continue;
            int cn = zt_construct_index(m, e->construct);
            if (cn < 0) continue;
            const ZExpr *src = m->constructs[cn]->expr;
            if (root[cn] < 0) root[cn] = node_of(&k, src, 0);
            if (k.n[root[cn]].cpl) {
                uint8_t v = val(&k, root[cn], l, i);
                if (v == 2) {
                    c->st.unverified++;
                    continue;
                }
                if (v != e->value)
                    zt_fail(c, e->line,
                            "%s: CPL guard of %s `%s` is %s by Definition 3 on the rebuilt chart, "
                            "but the recorded decision is %s",
                            zt_ev_where(c, e), e->construct, expr_text(c, src),
                            v ? "true" : "false", e->value ? "true" : "false");
                c->st.cpl_checked++;
            } else {
                /* plain: the store before the choice */
                Env env = {.c = c, .life = l, .index = i - 1};
                Val v = zt_eval(&env, src);
                if (v.k == V_ERROR)
                    zt_fail(c, e->line,
                            "%s: the guard of %s `%s` fails on the store (%s): the run would have "
                            "stopped with this error instead of deciding",
                            zt_ev_where(c, e), e->construct, expr_text(c, src),
                            v.s ? v.s : "a run-time error");
                if (v.k == V_UNDEF)
                    zt_fail(c, e->line,
                            "%s: the guard of %s `%s` reads a variable that has no value here, "
                            "which no run does",
                            zt_ev_where(c, e), e->construct, expr_text(c, src));
                if (v.k != V_BOOL) {
                    c->st.unverified++;
                    continue;
                }
                if ((v.i != 0) != (e->value != 0))
                    zt_fail(
                        c, e->line,
                        "%s: guard of %s `%s` is %s on the store, but the recorded decision is %s",
                        zt_ev_where(c, e), e->construct, expr_text(c, src), v.i ? "true" : "false",
                        e->value ? "true" : "false");
                c->st.plain_checked++;
            }
        }
    /* the owner's monitor evaluates every atom of its CPL guards at each
     * of its events, whether or not the choice comes (a run-time error in
     * one stops the run there): the atoms of the owner's own scope, at
     * every event of the owner */
    for (int cn = 1; cn <= m->nconstructs; cn++) {
        const ZStmt *st = m->constructs[cn];
        if (!st || !st->expr) continue;
        int owner = st->life.index;
        if (owner < 0 || owner >= m->nl) continue;
        if (root[cn] < 0) root[cn] = node_of(&k, st->expr, 0);
        if (!k.n[root[cn]].cpl) continue;
        /* in the arena: val() may leave through zt_fail */
        bool *seen = zu_alloc(c->a, sizeof *seen * (size_t)k.len);
        int *stack = zu_alloc(c->a, sizeof *stack * (size_t)k.len);
        int *atoms = zu_alloc(c->a, sizeof *atoms * (size_t)k.len);
        int natoms = 0, sp = 0;
        stack[sp++] = root[cn];
        seen[root[cn]] = true;
        while (sp) {
            Node x = k.n[stack[--sp]];
            if (x.kind == N_ATOM) {
                atoms[natoms++] = stack[sp];
                continue;
            }
            if (x.kind == N_AT && x.life != owner) continue; /* another lifeline's scope */
            int ops[3] = {x.a, x.b, x.c};
            for (int o = 0; o < 3; o++)
                if (ops[o] >= 0 && !seen[ops[o]]) {
                    seen[ops[o]] = true;
                    stack[sp++] = ops[o];
                }
        }
        for (int i = 1; i <= c->nbyl[owner]; i++)
            for (int a = 0; a < natoms; a++) val(&k, atoms[a], owner, i);
    }
}
