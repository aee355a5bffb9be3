/* cpl3.c — a third evaluator of guards, written only for the
 * differential test (tests/cpl/run), directly from the clauses of the CPL
 * paper (Definitions 1–3) and docs/language.md §6.2.  It shares nothing
 * with the oracle (oracle/) nor with the compiler's passes after name
 * resolution: the workflow is parsed and resolved by the compiler's
 * pipeline (up to ZC_RESOLVE: names to declarations, lifelines to
 * indices, if/while construct numbers), the trace is read with jansson,
 * and everything else is here, written the simple way rather than the
 * fast way:
 *
 *   - the causal order ≤ is the reflexive-transitive closure of the local
 *     successor and message edges (a receive matched with the send of the
 *     same message id), one bit row per event, iterated to a fixpoint;
 *   - last_B(e) is the greatest event f of B with f ≤ e (e itself when e
 *     is on B); last_loc(e) the event before e on its lifeline;
 *   - ν_e is the lifeline's start store with the writes of its events up
 *     to and including e (a choice writes nothing: the store before it);
 *   - Definition 3, clause by clause, at the choice event:
 *       α            false when a term is undefined (x has no value in
 *                    ν_e; @B.x: no last_B(e), or x has no value there),
 *                    else its value;
 *       @B(φ)        φ at last_B(e), false when there is none;
 *       Y φ (prev)   φ at last_loc(e), false when there is none;
 *       φ S ψ        some f ≤_A e with ψ at f and φ at every g,
 *                    f <_A g ≤_A e;
 *       ¬ ∧ ∨        as usual; `==`/`!=` between formulas are ↔ and its
 *                    negation, c ? φ : ψ is (c ∧ φ) ∨ (¬c ∧ ψ);
 *     and the derived forms of the paper and §6.1: once φ = true S φ,
 *     historically φ = ¬(once ¬φ), past φ = ∨_B @B(true S φ),
 *     seen B = @B(true); a named guard is its formula;
 *   - an atom is whatever is in formula position and is none of the
 *     above (a comparison, a Boolean builtin or pure action call, a
 *     Boolean variable or @B.x, a literal or constant); its terms are
 *     evaluated by a small evaluator of values below.
 *
 * Values are three: true, false and unknown (what the small evaluator
 * does not compute: floats beyond + - * and comparisons, negative `/` and
 * `%`, text beyond ASCII, json; Kleene's connectives).  Results are
 * memoised per (formula node, event); that changes no value.
 *
 * usage: cpl3 [--strict] FILE.zg TRACE.jsonl...
 *
 * Prints each disagreement with the recorded decision as
 * "TRACE:LINE: lifeline L event i: guard of TAG `TEXT` is V by the
 * paper's clauses, but the recorded decision is W", then one summary line
 * "cpl3: …".  Exit status: 0 every decision agrees (with --strict: and
 * none is unknown), 1 otherwise, 2 bad usage or unreadable input. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grammar.h"
#include "zgc.h"

#define MAX_EVENTS 20000 /* the closure is a bit matrix: n² bits */

enum { K_SEND, K_RECV, K_ACT, K_CHOICE };
enum { F = 0, T = 1, U = 2 }; /* truth values */
#define UNDEF_SEEN 4          /* memo flag: an atom below met an undefined term */

static const ZProgram *prog;
static const char *srctext;
static int nl;

/* ===================================================================== */
/* The trace                                                              */
/* ===================================================================== */

typedef struct Ev {
    int life, index, kind, line;
    const char *msg;
    const char *construct;
    int value;
    json_t *writes;
    json_t *store; /* ν_e */
    int match;     /* receive: the send */
} Ev;

typedef struct Tr {
    const char *name;
    json_t **lines;
    int nlines;
    Ev *ev;
    int n;
    int **byl; /* per lifeline: event numbers by index - 1 */
    int *nbyl;
    json_t **start;
    uint64_t *pred; /* n rows of `words` words: bit f of row e iff f ≤ e */
    int words;
    int *last; /* n × nl: last_B(e), -2 not yet computed */
    /* memo: (node, event) -> value | UNDEF_SEEN */
    const ZExpr **mk;
    int *me;
    unsigned char *mv;
    size_t mcap, mcount;
} Tr;

static int life_index(const char *name)
{
    for (int i = 0; i < nl; i++)
        if (!strcmp(((ZDecl *)ZU_VEC_AT(prog->lifelines, i))->name, name)) return i;
    return -1;
}

static void *xcalloc(size_t n, size_t s)
{
    void *p = calloc(n ? n : 1, s);
    if (!p) {
        fputs("cpl3: out of memory\n", stderr);
        exit(2);
    }
    return p;
}

static const Ev *sort_ev;
static int by_msg(const void *x, const void *y)
{
    return strcmp(sort_ev[*(const int *)x].msg, sort_ev[*(const int *)y].msg);
}

static void free_trace(Tr *t);

/* Reads one trace; NULL with a message when it cannot be used. */
static Tr *read_trace(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "cpl3: cannot read %s\n", path);
        return NULL;
    }
    Tr *t = xcalloc(1, sizeof *t);
    t->name = path;
    int cap = 0;
    char *buf = NULL;
    size_t bcap = 0;
    ssize_t len;
    while ((len = getline(&buf, &bcap, f)) >= 0) {
        if (t->nlines == cap) {
            cap = cap ? cap * 2 : 256;
            t->lines = realloc(t->lines, sizeof *t->lines * (size_t)cap);
        }
        t->lines[t->nlines++] = json_loadb(buf, (size_t)len, 0, NULL);
    }
    free(buf);
    fclose(f);
    t->byl = xcalloc((size_t)nl, sizeof *t->byl);
    t->nbyl = xcalloc((size_t)nl, sizeof(int));
    t->start = xcalloc((size_t)nl, sizeof *t->start);
    t->ev = xcalloc((size_t)t->nlines, sizeof *t->ev);
    static const char *const kinds[] = {"send", "recv", "act", "choice"};
    for (int ln = 0; ln < t->nlines; ln++) {
        json_t *o = t->lines[ln];
        if (!json_is_object(o)) continue;
        const char *kind = json_string_value(json_object_get(o, "kind"));
        const char *life = json_string_value(json_object_get(o, "lifeline"));
        if (!kind || !life) continue;
        int l = life_index(life);
        if (l < 0) continue;
        if (!strcmp(kind, "start")) {
            t->start[l] = json_object_get(o, "store");
            continue;
        }
        int k = -1;
        for (int i = 0; i < 4; i++)
            if (!strcmp(kind, kinds[i])) k = i;
        if (k < 0) continue;
        Ev *e = &t->ev[t->n];
        e->life = l;
        e->kind = k;
        e->line = ln + 1;
        e->index = (int)json_integer_value(json_object_get(o, "index"));
        e->msg = json_string_value(json_object_get(o, "msg"));
        e->construct = json_string_value(json_object_get(o, "construct"));
        e->value = json_is_true(json_object_get(o, "value"));
        e->writes = json_object_get(o, "writes");
        e->match = -1;
        if (e->index != t->nbyl[l] + 1) {
            fprintf(stderr, "%s:%d: events of %s out of order\n", path, ln + 1, life);
            free_trace(t);
            return NULL;
        }
        t->byl[l] = realloc(t->byl[l], sizeof(int) * (size_t)(t->nbyl[l] + 1));
        t->byl[l][t->nbyl[l]++] = t->n++;
    }
    if (t->n > MAX_EVENTS) {
        fprintf(stderr, "%s: %d events, more than this evaluator takes (%d)\n", path, t->n,
                MAX_EVENTS);
        free_trace(t);
        return NULL;
    }
    /* stores */
    for (int l = 0; l < nl; l++) {
        json_t *s = t->start[l] ? json_copy(t->start[l]) : json_object();
        for (int i = 0; i < t->nbyl[l]; i++) {
            Ev *e = &t->ev[t->byl[l][i]];
            json_t *next = json_copy(s);
            if (json_is_object(e->writes)) json_object_update(next, e->writes);
            json_decref(s);
            e->store = next;
            s = json_incref(next);
        }
        json_decref(s);
    }
    /* messages: a receive and the send with the same id */
    int *sends = xcalloc((size_t)t->n, sizeof(int));
    int ns = 0;
    for (int s = 0; s < t->n; s++)
        if (t->ev[s].kind == K_SEND && t->ev[s].msg) sends[ns++] = s;
    sort_ev = t->ev;
    qsort(sends, (size_t)ns, sizeof(int), by_msg);
    for (int r = 0; r < t->n; r++) {
        if (t->ev[r].kind != K_RECV || !t->ev[r].msg) continue;
        int lo = 0, hi = ns;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (strcmp(t->ev[sends[mid]].msg, t->ev[r].msg) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < ns && !strcmp(t->ev[sends[lo]].msg, t->ev[r].msg)) t->ev[r].match = sends[lo];
    }
    free(sends);
    /* the causal order: closure of the edges, to a fixpoint */
    t->words = (t->n + 63) / 64;
    t->pred = xcalloc((size_t)t->n * (size_t)t->words, sizeof(uint64_t));
    for (int e = 0; e < t->n; e++) t->pred[(size_t)e * t->words + e / 64] |= 1ull << (e % 64);
    for (bool changed = true; changed;) {
        changed = false;
        for (int e = 0; e < t->n; e++) {
            uint64_t *row = &t->pred[(size_t)e * t->words];
            int from[2] = {-1, t->ev[e].match};
            if (t->ev[e].index > 1) from[0] = t->byl[t->ev[e].life][t->ev[e].index - 2];
            for (int k = 0; k < 2; k++) {
                if (from[k] < 0) continue;
                const uint64_t *src = &t->pred[(size_t)from[k] * t->words];
                for (int w = 0; w < t->words; w++)
                    if (src[w] & ~row[w]) {
                        row[w] |= src[w];
                        changed = true;
                    }
            }
        }
    }
    t->last = xcalloc((size_t)t->n * (size_t)nl, sizeof(int));
    for (size_t i = 0; i < (size_t)t->n * (size_t)nl; i++) t->last[i] = -2;
    return t;
}

static void free_trace(Tr *t)
{
    if (!t) return;
    for (int i = 0; i < t->n; i++) json_decref(t->ev[i].store);
    for (int i = 0; i < t->nlines; i++) json_decref(t->lines[i]);
    for (int l = 0; l < nl; l++) free(t->byl[l]);
    free(t->byl);
    free(t->nbyl);
    free(t->start);
    free(t->lines);
    free(t->ev);
    free(t->pred);
    free(t->last);
    free(t->mk);
    free(t->me);
    free(t->mv);
    free(t);
}

static bool precedes(const Tr *t, int f, int e)
{
    return (t->pred[(size_t)e * t->words + f / 64] >> (f % 64)) & 1;
}

/* last_B(e), or -1 */
static int last_of(Tr *t, int b, int e)
{
    int *slot = &t->last[(size_t)e * nl + b];
    if (*slot != -2) return *slot;
    *slot = -1;
    for (int k = t->nbyl[b]; k >= 1; k--)
        if (precedes(t, t->byl[b][k - 1], e)) {
            *slot = t->byl[b][k - 1];
            break;
        }
    return *slot;
}

/* last_loc(e), or -1 */
static int last_loc(const Tr *t, int e)
{
    const Ev *x = &t->ev[e];
    return x->index > 1 ? t->byl[x->life][x->index - 2] : -1;
}

/* ===================================================================== */
/* Values of terms                                                        */
/* ===================================================================== */

typedef enum { V_BAD, V_INT, V_FLOAT, V_BOOL, V_STR, V_NULL } VK;
typedef struct V {
    VK k;
    long long i;
    double f;
    const char *s;
    size_t n;
} V;

static V bad(void) { return (V){.k = V_BAD}; }

static V of_json(const json_t *j)
{
    if (json_is_integer(j)) return (V){.k = V_INT, .i = json_integer_value(j)};
    if (json_is_real(j)) return (V){.k = V_FLOAT, .f = json_real_value(j)};
    if (json_is_boolean(j)) return (V){.k = V_BOOL, .i = json_is_true(j)};
    if (json_is_string(j))
        return (V){.k = V_STR, .s = json_string_value(j), .n = json_string_length(j)};
    if (json_is_null(j)) return (V){.k = V_NULL};
    return bad();
}

/* The value of x in ν_e, or NULL when it has none. */
static json_t *var_at(Tr *t, int e, const ZDecl *x)
{
    if (e < 0 || !x || !x->name) return NULL;
    return json_object_get(t->ev[e].store, x->name);
}

static int sat(Tr *t, const ZExpr *phi, int e);

static bool ascii(const V *v)
{
    for (size_t i = 0; i < v->n; i++)
        if ((unsigned char)v->s[i] >= 0x80) return false;
    return true;
}

/* Text produced while evaluating one atom (lower, upper, str, +). */
static char scratch[1 << 16];
static size_t scratch_used;

static char *scratch_alloc(size_t n)
{
    if (scratch_used + n + 1 > sizeof scratch) return NULL;
    char *p = scratch + scratch_used;
    scratch_used += n + 1;
    return p;
}

static V term(Tr *t, const ZExpr *x, int e, const V *params, int depth);

static V call(Tr *t, const ZExpr *x, int e, const V *params, int depth)
{
    V a[8];
    int n = x->args.len;
    if (n > 8) return bad();
    for (int i = 0; i < n; i++) {
        a[i] = term(t, ZU_VEC_AT(x->args, i), e, params, depth + 1);
        if (a[i].k == V_BAD) return bad();
    }
    switch (x->builtin) {
    case BI_NONE: {
        const ZDecl *d = x->decl;
        if (!d || d->kind != D_ACTION || d->action != ACT_PURE || !d->expr) return bad();
        return term(t, d->expr, e, a, depth + 1);
    }
    case BI_LEN: {
        if (a[0].k != V_STR) return bad();
        long long c = 0;
        for (size_t i = 0; i < a[0].n; i++) c += ((unsigned char)a[0].s[i] & 0xC0) != 0x80;
        return (V){.k = V_INT, .i = c};
    }
    case BI_LOWER:
    case BI_UPPER: {
        if (a[0].k != V_STR || !ascii(&a[0])) return bad();
        char *p = scratch_alloc(a[0].n);
        if (!p) return bad();
        for (size_t i = 0; i < a[0].n; i++) {
            char c = a[0].s[i];
            if (x->builtin == BI_LOWER && c >= 'A' && c <= 'Z') c = (char)(c + 32);
            if (x->builtin == BI_UPPER && c >= 'a' && c <= 'z') c = (char)(c - 32);
            p[i] = c;
        }
        return (V){.k = V_STR, .s = p, .n = a[0].n};
    }
    case BI_TRIM: {
        /* only where every rule agrees: ASCII without \v and \f */
        if (a[0].k != V_STR || !ascii(&a[0]) || memchr(a[0].s, '\v', a[0].n) ||
            memchr(a[0].s, '\f', a[0].n))
            return bad();
        size_t b = 0, en = a[0].n;
        const char *s = a[0].s;
        while (b < en && (s[b] == ' ' || s[b] == '\t' || s[b] == '\n' || s[b] == '\r')) b++;
        while (en > b &&
               (s[en - 1] == ' ' || s[en - 1] == '\t' || s[en - 1] == '\n' || s[en - 1] == '\r'))
            en--;
        return (V){.k = V_STR, .s = s + b, .n = en - b};
    }
    case BI_CONTAINS:
    case BI_STARTS_WITH:
    case BI_ENDS_WITH: {
        if (a[0].k != V_STR || a[1].k != V_STR) return bad();
        const V *s = &a[0], *p = &a[1];
        bool r = false;
        if (p->n <= s->n) {
            if (x->builtin == BI_STARTS_WITH)
                r = !memcmp(s->s, p->s, p->n);
            else if (x->builtin == BI_ENDS_WITH)
                r = !memcmp(s->s + s->n - p->n, p->s, p->n);
            else
                for (size_t i = 0; i + p->n <= s->n && !r; i++) r = !memcmp(s->s + i, p->s, p->n);
        }
        return (V){.k = V_BOOL, .i = r};
    }
    case BI_STR: {
        if (a[0].k == V_STR) return a[0]; /* enum members are their names already */
        if (a[0].k == V_BOOL)
            return (V){.k = V_STR, .s = a[0].i ? "true" : "false", .n = a[0].i ? 4 : 5};
        if (a[0].k != V_INT) return bad();
        char *p = scratch_alloc(24);
        if (!p) return bad();
        snprintf(p, 24, "%lld", a[0].i);
        return (V){.k = V_STR, .s = p, .n = strlen(p)};
    }
    case BI_INT: return a[0].k == V_INT ? a[0] : bad();
    default: return bad();
    }
}

static int cmp(const V *a, const V *b, bool *ok)
{
    *ok = true;
    if (a->k == V_INT && b->k == V_INT) return (a->i > b->i) - (a->i < b->i);
    if (a->k == V_FLOAT && b->k == V_FLOAT && a->f == a->f && b->f == b->f)
        return (a->f > b->f) - (a->f < b->f);
    if (a->k == V_BOOL && b->k == V_BOOL) return (a->i > b->i) - (a->i < b->i);
    if (a->k == V_NULL && b->k == V_NULL) return 0;
    if (a->k == V_STR && b->k == V_STR) {
        size_t n = a->n < b->n ? a->n : b->n;
        int r = memcmp(a->s, b->s, n);
        if (r) return r < 0 ? -1 : 1;
        return (a->n > b->n) - (a->n < b->n);
    }
    *ok = false;
    return 0;
}

static V term(Tr *t, const ZExpr *x, int e, const V *params, int depth)
{
    if (!x || depth > 500) return bad();
    switch (x->kind) {
    case E_INT: return (V){.k = V_INT, .i = x->lit.i};
    case E_FLOAT: return (V){.k = V_FLOAT, .f = x->lit.f};
    case E_BOOL: return (V){.k = V_BOOL, .i = x->lit.b};
    case E_STR: return (V){.k = V_STR, .s = x->lit.s, .n = x->slen};
    case E_NULL: return (V){.k = V_NULL};
    case E_NAME:
        switch (x->name_kind) {
        case NAME_VAR: {
            json_t *j = var_at(t, e, x->decl);
            return j ? of_json(j) : bad();
        }
        case NAME_CONST: return x->decl ? term(t, x->decl->expr, e, params, depth + 1) : bad();
        case NAME_MEMBER: {
            if (!x->decl || x->member < 0 || x->member >= x->decl->members.len) return bad();
            const ZParam *m = ZU_VEC_AT(x->decl->members, x->member);
            return (V){.k = V_STR, .s = m->name, .n = strlen(m->name)};
        }
        case NAME_PARAM:
            return params && x->member >= 0 && x->member < 8 ? params[x->member] : bad();
        default: return bad();
        }
    case E_AT_VAR: {
        json_t *j = var_at(t, x->life >= 0 && x->life < nl ? last_of(t, x->life, e) : -1, x->decl);
        return j ? of_json(j) : bad();
    }
    case E_UNARY: {
        V a = term(t, x->a, e, params, depth + 1);
        if (x->op == OP_NOT && a.k == V_BOOL) return (V){.k = V_BOOL, .i = !a.i};
        if (x->op == OP_NEG && a.k == V_INT && a.i != INT64_MIN) return (V){.k = V_INT, .i = -a.i};
        return bad();
    }
    case E_COND: {
        V c = term(t, x->c, e, params, depth + 1);
        if (c.k != V_BOOL) return bad();
        return term(t, c.i ? x->a : x->b, e, params, depth + 1);
    }
    case E_CALL: return call(t, x, e, params, depth);
    case E_BINARY: break;
    default: return bad(); /* CPL operators inside a term, tuples */
    }
    V a = term(t, x->a, e, params, depth + 1);
    if (a.k == V_BAD) return a;
    if (x->op == OP_AND || x->op == OP_OR) {
        if (a.k != V_BOOL) return bad();
        if ((x->op == OP_AND) != (a.i != 0)) return a;
        V b = term(t, x->b, e, params, depth + 1);
        return b.k == V_BOOL ? b : bad();
    }
    V b = term(t, x->b, e, params, depth + 1);
    if (b.k == V_BAD) return b;
    long long r;
    switch (x->op) {
    case OP_ADD:
        if (a.k == V_STR && b.k == V_STR) {
            char *p = scratch_alloc(a.n + b.n);
            if (!p) return bad();
            memcpy(p, a.s, a.n);
            memcpy(p + a.n, b.s, b.n);
            return (V){.k = V_STR, .s = p, .n = a.n + b.n};
        }
        /* fall through */
    case OP_SUB:
    case OP_MUL:
        if (a.k != V_INT || b.k != V_INT) return bad();
        if (x->op == OP_ADD   ? __builtin_add_overflow(a.i, b.i, &r)
            : x->op == OP_SUB ? __builtin_sub_overflow(a.i, b.i, &r)
                              : __builtin_mul_overflow(a.i, b.i, &r))
            return bad();
        return (V){.k = V_INT, .i = r};
    case OP_DIV:
    case OP_MOD:
        /* only where every rule agrees: non-negative operands */
        if (a.k != V_INT || b.k != V_INT || a.i < 0 || b.i <= 0) return bad();
        return (V){.k = V_INT, .i = x->op == OP_DIV ? a.i / b.i : a.i % b.i};
    default: {
        bool ok;
        int c = cmp(&a, &b, &ok);
        if (!ok) return bad();
        bool v = x->op == OP_EQ   ? c == 0
                 : x->op == OP_NE ? c != 0
                 : x->op == OP_LT ? c < 0
                 : x->op == OP_LE ? c <= 0
                 : x->op == OP_GT ? c > 0
                                  : c >= 0;
        if (a.k == V_BOOL || a.k == V_NULL) /* only == and != */
            if (x->op != OP_EQ && x->op != OP_NE) return bad();
        return (V){.k = V_BOOL, .i = v};
    }
    }
}

/* Every term of atom x is defined at e (named guards looked through;
 * a pure action's body reads only its parameters). */
static bool terms_defined(Tr *t, const ZExpr *x, int e, int depth)
{
    if (!x || depth > 500) return true;
    if (x->kind == E_NAME && x->name_kind == NAME_VAR) return var_at(t, e, x->decl) != NULL;
    if (x->kind == E_AT_VAR)
        return x->life >= 0 && x->life < nl && var_at(t, last_of(t, x->life, e), x->decl) != NULL;
    if (x->kind == E_NAME && x->name_kind == NAME_GUARD && x->decl)
        return terms_defined(t, x->decl->expr, e, depth + 1);
    if (!terms_defined(t, x->a, e, depth + 1) || !terms_defined(t, x->b, e, depth + 1) ||
        !terms_defined(t, x->c, e, depth + 1))
        return false;
    for (int i = 0; i < x->args.len; i++)
        if (!terms_defined(t, ZU_VEC_AT(x->args, i), e, depth + 1)) return false;
    return true;
}

/* ===================================================================== */
/* Formulas                                                               */
/* ===================================================================== */

/* Is x a formula, i.e. of type bool?  Types from declarations. */
static bool formula(const ZExpr *x, int depth)
{
    if (!x || depth > 500) return false;
    switch (x->kind) {
    case E_BOOL:
    case E_AT:
    case E_PREV:
    case E_SINCE:
    case E_ONCE:
    case E_HIST:
    case E_PAST:
    case E_SEEN: return true;
    case E_NAME:
        switch (x->name_kind) {
        case NAME_VAR: return x->decl && x->decl->type && x->decl->type->kind == TY_BOOL;
        case NAME_CONST: return x->decl && formula(x->decl->expr, depth + 1);
        case NAME_GUARD: return true;
        case NAME_PARAM: {
            if (!x->decl || x->member < 0 || x->member >= x->decl->params.len) return false;
            const ZParam *p = ZU_VEC_AT(x->decl->params, x->member);
            return p->type && p->type->kind == TY_BOOL;
        }
        default: return false;
        }
    case E_AT_VAR: return x->decl && x->decl->type && x->decl->type->kind == TY_BOOL;
    case E_UNARY: return x->op == OP_NOT;
    case E_BINARY:
        return x->op != OP_ADD && x->op != OP_SUB && x->op != OP_MUL && x->op != OP_DIV &&
               x->op != OP_MOD;
    case E_COND: return formula(x->a, depth + 1);
    case E_CALL:
        if (x->builtin == BI_CONTAINS || x->builtin == BI_STARTS_WITH || x->builtin == BI_ENDS_WITH)
            return true;
        if (x->builtin == BI_NONE && x->decl && x->decl->results.len == 1) {
            const ZParam *r = ZU_VEC_AT(x->decl->results, 0);
            return r->type && r->type->kind == TY_BOOL;
        }
        return false;
    default: return false;
    }
}

static int k_not(int a) { return a == U ? U : !a; }
static int k_and(int a, int b) { return a == F || b == F ? F : a == U || b == U ? U : T; }
static int k_or(int a, int b) { return a == T || b == T ? T : a == U || b == U ? U : F; }

/* The memo of sat: the value with UNDEF_SEEN, or -1. */
static size_t mslot(const Tr *t, const ZExpr *x, int e)
{
    uint64_t h =
        (uint64_t)(uintptr_t)x * 0x9E3779B97F4A7C15ull ^ (uint64_t)e * 0xC2B2AE3D27D4EB4Full;
    h ^= h >> 29;
    size_t i = (size_t)(h % t->mcap);
    while (t->mk[i] && (t->mk[i] != x || t->me[i] != e)) i = (i + 1) % t->mcap;
    return i;
}

static void mput(Tr *t, const ZExpr *x, int e, unsigned char v)
{
    if ((t->mcount + 1) * 2 > t->mcap) {
        Tr old = *t;
        t->mcap = t->mcap ? t->mcap * 2 : 4096;
        t->mk = xcalloc(t->mcap, sizeof *t->mk);
        t->me = xcalloc(t->mcap, sizeof *t->me);
        t->mv = xcalloc(t->mcap, 1);
        for (size_t i = 0; i < old.mcap; i++)
            if (old.mk[i]) {
                size_t j = mslot(t, old.mk[i], old.me[i]);
                t->mk[j] = old.mk[i], t->me[j] = old.me[i], t->mv[j] = old.mv[i];
            }
        free(old.mk);
        free(old.me);
        free(old.mv);
    }
    size_t i = mslot(t, x, e);
    if (!t->mk[i]) t->mcount++;
    t->mk[i] = x, t->me[i] = e, t->mv[i] = v;
}

static int mget(const Tr *t, const ZExpr *x, int e)
{
    if (!t->mcap) return -1;
    size_t i = mslot(t, x, e);
    return t->mk[i] ? t->mv[i] : -1;
}

static bool undef_seen; /* an atom met an undefined term (since reset) */

static int sat_at(Tr *t, const ZExpr *phi, int f) { return f < 0 ? F : sat(t, phi, f); }

/* ∃ f ≤_A e with ψ at f and φ at every g, f <_A g ≤_A e (φ NULL: true). */
static int since(Tr *t, const ZExpr *phi, const ZExpr *psi, int e)
{
    int r = F, all = T; /* all: φ at every g after f up to e */
    for (int f = e; f >= 0 && all != F; f = last_loc(t, f)) {
        r = k_or(r, k_and(sat(t, psi, f), all));
        if (phi) all = k_and(all, sat(t, phi, f));
    }
    return r;
}

/* ∃ f ≤_A e with ¬φ at f */
static int once_not(Tr *t, const ZExpr *phi, int e)
{
    int r = F;
    for (int f = e; f >= 0; f = last_loc(t, f)) r = k_or(r, k_not(sat(t, phi, f)));
    return r;
}

static int atom(Tr *t, const ZExpr *x, int e)
{
    if (!terms_defined(t, x, e, 0)) {
        undef_seen = true;
        return F;
    }
    scratch_used = 0;
    V v = term(t, x, e, NULL, 0);
    return v.k == V_BOOL ? (int)v.i : U;
}

static int sat(Tr *t, const ZExpr *x, int e)
{
    int m = mget(t, x, e);
    if (m >= 0) {
        if (m & UNDEF_SEEN) undef_seen = true;
        return m & 3;
    }
    bool outer = undef_seen;
    undef_seen = false;
    int r;
    switch (x->kind) {
    case E_UNARY:
        if (x->op != OP_NOT) goto as_atom;
        r = k_not(sat(t, x->a, e));
        break;
    case E_BINARY:
        if (x->op == OP_AND) {
            r = k_and(sat(t, x->a, e), sat(t, x->b, e));
        } else if (x->op == OP_OR) {
            r = k_or(sat(t, x->a, e), sat(t, x->b, e));
        } else if ((x->op == OP_EQ || x->op == OP_NE) && formula(x->a, 0) && formula(x->b, 0)) {
            int a = sat(t, x->a, e), b = sat(t, x->b, e);
            r = a == U || b == U ? U : (a == b) == (x->op == OP_EQ);
        } else {
            goto as_atom;
        }
        break;
    case E_COND:
        if (!formula(x, 0)) goto as_atom;
        {
            int c = sat(t, x->c, e);
            r = k_or(k_and(c, sat(t, x->a, e)), k_and(k_not(c), sat(t, x->b, e)));
        }
        break;
    case E_AT:
        r = x->life < 0 || x->life >= nl ? U : sat_at(t, x->a, last_of(t, x->life, e));
        break;
    case E_SEEN: r = x->life < 0 || x->life >= nl ? U : last_of(t, x->life, e) >= 0; break;
    case E_PREV: r = sat_at(t, x->a, last_loc(t, e)); break;
    case E_SINCE: r = since(t, x->a, x->b, e); break;
    case E_ONCE: r = since(t, NULL, x->a, e); break;
    case E_HIST: r = k_not(once_not(t, x->a, e)); break;
    case E_PAST:
        r = F;
        for (int b = 0; b < nl; b++) {
            int f = last_of(t, b, e);
            if (f >= 0) r = k_or(r, since(t, NULL, x->a, f));
        }
        break;
    case E_NAME:
        if (x->name_kind == NAME_GUARD && x->decl && x->decl->expr) {
            r = sat(t, x->decl->expr, e);
            break;
        }
        goto as_atom;
    default:
    as_atom:
        r = atom(t, x, e);
        break;
    }
    mput(t, x, e, (unsigned char)(r | (undef_seen ? UNDEF_SEEN : 0)));
    undef_seen = undef_seen || outer;
    return r;
}

/* ===================================================================== */
/* The guards at their choice events                                      */
/* ===================================================================== */

typedef struct Con {
    const ZStmt *s;
    char tag[32];
    bool cpl;
} Con;

static Con *cons;
static int ncons;

/* Has x a CPL operator or an @B.x term (named guards looked through)? */
static bool is_cpl(const ZExpr *x, int depth)
{
    if (!x || depth > 500) return false;
    switch (x->kind) {
    case E_AT:
    case E_AT_VAR:
    case E_PREV:
    case E_SINCE:
    case E_ONCE:
    case E_HIST:
    case E_PAST:
    case E_SEEN: return true;
    case E_NAME: return x->name_kind == NAME_GUARD && x->decl && is_cpl(x->decl->expr, depth + 1);
    default: break;
    }
    if (is_cpl(x->a, depth + 1) || is_cpl(x->b, depth + 1) || is_cpl(x->c, depth + 1)) return true;
    for (int i = 0; i < x->args.len; i++)
        if (is_cpl(ZU_VEC_AT(x->args, i), depth + 1)) return true;
    return false;
}

static void collect(const ZVec *body)
{
    for (int i = 0; i < body->len; i++) {
        const ZStmt *s = ZU_VEC_AT(*body, i);
        if (s->kind == S_IF || s->kind == S_WHILE) {
            Con *c = &cons[ncons++];
            c->s = s;
            snprintf(c->tag, sizeof c->tag, "%s#%d", s->kind == S_IF ? "if" : "while",
                     s->construct);
            c->cpl = is_cpl(s->expr, 0);
            collect(&s->body);
            collect(&s->els);
        } else if (s->kind == S_PAR) {
            for (int k = 0; k < s->branches.len; k++)
                collect(&((const ZBranch *)ZU_VEC_AT(s->branches, k))->body);
        }
    }
}

/* The guard's text, from the source (its first line). */
static void print_source(FILE *out, ZSpan sp)
{
    const char *p = srctext;
    for (int l = 1; l < sp.first_line && *p; p++)
        if (*p == '\n') l++;
    int col = 0; /* the code point of the byte at p, from 1 */
    for (; *p && *p != '\n'; p++) {
        if (((unsigned char)*p & 0xC0) != 0x80) col++;
        if (col >= sp.first_column && (sp.last_line > sp.first_line || col <= sp.last_column))
            fputc(*p, out);
    }
}

typedef struct Stats {
    long traces, choices, cpl, plain, unknown, disagree, undef, undef_true;
} Stats;

static void check_trace(Tr *t, Stats *st)
{
    for (int e = 0; e < t->n; e++) {
        const Ev *x = &t->ev[e];
        if (x->kind != K_CHOICE || !x->construct) continue;
        const Con *c = NULL;
        for (int k = 0; k < ncons; k++)
            if (!strcmp(cons[k].tag, x->construct)) c = &cons[k];
        st->choices++;
        if (!c) {
            st->unknown++;
            continue;
        }
        undef_seen = false;
        int v = sat(t, c->s->expr, e);
        if (v == U) {
            st->unknown++;
            continue;
        }
        if (c->cpl && undef_seen) st->undef++, st->undef_true += v == T;
        if (v == x->value) {
            if (c->cpl)
                st->cpl++;
            else
                st->plain++;
        } else {
            st->disagree++;
            printf("%s:%d: lifeline %s event %d: guard of %s `", t->name, x->line,
                   ((ZDecl *)ZU_VEC_AT(prog->lifelines, x->life))->name, x->index, c->tag);
            print_source(stdout, c->s->expr->span);
            printf("` is %s by the paper's clauses, but the recorded decision is %s\n",
                   v ? "true" : "false", x->value ? "true" : "false");
        }
    }
}

int main(int argc, char **argv)
{
    int a = 1;
    bool strict = false;
    if (a < argc && !strcmp(argv[a], "--strict")) strict = true, a++;
    if (argc - a < 2) {
        fputs("usage: cpl3 [--strict] FILE.zg TRACE.jsonl...\n", stderr);
        return 2;
    }
    ZCompilation comp;
    if (!zc_init_file(&comp, zp_parse, argv[a], stderr)) return 2;
    if (!zc_run(&comp, ZC_RESOLVE)) return 2;
    prog = comp.prog;
    srctext = comp.text;
    nl = prog->lifelines.len;
    cons = xcalloc((size_t)prog->n_controls + 1, sizeof *cons);
    collect(&comp.wf->body);
    Stats st = {0};
    int rc = 0;
    for (int i = a + 1; i < argc; i++) {
        Tr *t = read_trace(argv[i]);
        if (!t) {
            rc = 2;
            continue;
        }
        st.traces++;
        check_trace(t, &st);
        free_trace(t);
    }
    printf("cpl3: %ld traces, %ld choices: %ld CPL and %ld plain guards agree, %ld disagree, "
           "%ld unknown; an atom had an undefined term at %ld CPL choices (%ld true)\n",
           st.traces, st.choices, st.cpl, st.plain, st.disagree, st.unknown, st.undef,
           st.undef_true);
    free(cons);
    zc_free(&comp);
    if (rc) return rc;
    return st.disagree || (strict && st.unknown) ? 1 : 0;
}
