/* races.c — the race analysis of store operations (language reference
 * §11.3), prefix zq_.
 *
 * Every atomic block of a workflow is one operation (an OpRecord of
 * docs/anomalies.md).  Two operations on one store race when some
 * execution runs an instance of each without either in the other's
 * causal past.  The analysis walks the global workflow in source order,
 * which every execution's causal order respects (a message and a control
 * decision are sent and received at their statement; a lifeline's events
 * follow the statements, but for the branches of a `parallel`, which are
 * concurrent), keeping two sets:
 *
 *   know[L]  the operations X such that, on every path to here, every
 *            instance of X so far is in L's causal past (the latest is,
 *            and X's earlier instances come before it on X's lifeline;
 *            at the start every X, which has no instance yet);
 *   occ      the operations that may have run so far.
 *
 * An operation X on A removes X from every know[L], L ≠ A (they know at
 * most an older instance), and adds it to know[A]; a message A -> B adds
 * know[A] to know[B]; an `if`/`while` decided by A adds know[A] to the
 * know of every lifeline the decision is sent to.  Paths join by
 * intersection (know) and union (occ); a `while` is walked to a fixpoint
 * before its operations are looked at.  At an operation X on A, every Y
 * in occ that is not in know[A] may run concurrently with X: some
 * instance of Y comes before X in source order without being in X's
 * causal past.  Operations in different branches of one `parallel` are
 * concurrent.  The sets are must-sets: when in doubt an operation is not
 * known, so "ordered" is never claimed for a pair some execution runs
 * unordered.
 *
 * Which anomalies a racing pair (X, Y) makes possible:
 *   A1  one reads a cell the other writes;
 *   A6  both call tools (effects whose commit order can differ from their
 *       issue order);
 *   A2  one calls a tool the other removes from the registry.
 * A3 (a causal cascade) needs an operation retracted after another read
 * from it; a workflow's operations commit at their end and are never
 * retracted, so no pair makes it possible.  The lowest safe level is L4
 * with A2, else L3 with A6, else L1 with A1, else L0. */
#include "zgc.h"

#include <stdlib.h>
#include <string.h>

/* ---- operations ------------------------------------------------------ */

typedef struct Op {
    ZqOp pub;
    ZIMap reads, writes; /* cell index -> 1 */
} Op;

typedef struct A {
    ZArena *a;
    const ZProgram *p;
    int nops, nl, w; /* w: words per bit set */
    Op **ops;        /* by index */
    ZIMap index;     /* ZStmt* -> index + 1 */
    uint64_t *conc;  /* nops × nops: may run concurrently */
    int loops;       /* loops whose fixpoint is being computed */
} A;

/* How many loops deep fixpoints are computed, and in how many rounds at
 * most (walk_while). */
#define ZQ_EXACT_LOOPS 4
#define ZQ_MAX_ROUNDS 8
/* Racing pairs shown as notes under one -Wstore-level warning. */
#define ZQ_MAX_NOTES 10

static int store_index(const ZProgram *p, const ZDecl *st)
{
    for (int i = 0; i < p->stores.len; i++)
        if (p->stores.items[i] == st) return i;
    return -1;
}

static int cell_index(const ZDecl *st, const ZDecl *cell)
{
    for (int i = 0; i < st->cells.len; i++)
        if (st->cells.items[i] == cell) return i;
    return -1;
}

static void collect(A *an, const ZVec *body, ZVec *out);

static void collect_stmt(A *an, const ZStmt *s, ZVec *out)
{
    if (s->kind == S_ATOMIC && s->store) {
        Op *op = zu_xcalloc(1, sizeof *op);
        op->pub.s = s;
        op->pub.life = s->life.index;
        op->pub.store = store_index(an->p, s->store);
        op->pub.index = out->len;
        for (int i = 0; i < s->body.len; i++) {
            const ZStmt *it = s->body.items[i];
            if (it->kind == S_READ && it->cell_decl) {
                zu_imap_put(&op->reads, (uint64_t)cell_index(s->store, it->cell_decl), NULL);
            } else if (it->kind == S_WRITE && it->registry) {
                op->pub.registry = it;
            } else if (it->kind == S_WRITE && it->cell_decl) {
                zu_imap_put(&op->writes, (uint64_t)cell_index(s->store, it->cell_decl), NULL);
            } else if (it->kind == S_ASSIGN && it->is_action && it->expr->decl &&
                       it->expr->decl->kind == D_ACTION && it->expr->decl->action == ACT_EFFECT) {
                zu_vec_push(an->a, &op->pub.tools, it->expr->decl);
            }
        }
        zu_vec_push(an->a, out, op);
        *zu_imap_put(&an->index, (uint64_t)(uintptr_t)s, NULL) = (uintptr_t)out->len;
    }
    collect(an, &s->body, out);
    collect(an, &s->els, out);
    for (int k = 0; k < s->branches.len; k++)
        collect(an, &((ZBranch *)s->branches.items[k])->body, out);
}

static void collect(A *an, const ZVec *body, ZVec *out)
{
    for (int i = 0; i < body->len; i++) collect_stmt(an, body->items[i], out);
}

static int op_of(const A *an, const ZStmt *s)
{
    uintptr_t *v = zu_imap_get(&an->index, (uint64_t)(uintptr_t)s);
    return v ? (int)*v - 1 : -1;
}

/* ---- bit sets -------------------------------------------------------- */

static inline bool has(const uint64_t *b, int i) { return (b[i >> 6] >> (i & 63)) & 1u; }
static inline void set(uint64_t *b, int i) { b[i >> 6] |= (uint64_t)1 << (i & 63); }
static inline void clr(uint64_t *b, int i) { b[i >> 6] &= ~((uint64_t)1 << (i & 63)); }

/* The state: know[0..nl) then occ, each w words. */
typedef uint64_t St;

static St *st_new(const A *an) { return zu_xcalloc((size_t)(an->nl + 1) * (size_t)an->w, 8); }
static St *st_copy(const A *an, const St *s)
{
    St *t = st_new(an);
    memcpy(t, s, (size_t)(an->nl + 1) * (size_t)an->w * 8);
    return t;
}
static uint64_t *know(const A *an, St *s, int l) { return s + (size_t)l * (size_t)an->w; }
static uint64_t *occ(const A *an, St *s) { return s + (size_t)an->nl * (size_t)an->w; }

/* to ⊓= from: know by intersection, occ by union */
static void meet(const A *an, St *to, const St *from)
{
    size_t k = (size_t)an->nl * (size_t)an->w;
    for (size_t i = 0; i < k; i++) to[i] &= from[i];
    for (size_t i = 0; i < (size_t)an->w; i++) to[k + i] |= from[k + i];
}

static bool same(const A *an, const St *x, const St *y)
{
    return memcmp(x, y, (size_t)(an->nl + 1) * (size_t)an->w * 8) == 0;
}

static void learn(const A *an, St *s, int to, int from)
{
    if (to < 0 || from < 0 || to == from) return;
    uint64_t *t = know(an, s, to), *f = know(an, s, from);
    for (int i = 0; i < an->w; i++) t[i] |= f[i];
}

/* ---- the walk -------------------------------------------------------- */

static void walk(A *an, St *s, const ZVec *body, bool record);

/* The operations a statement list holds (syntactically). */
static void ops_in(const A *an, const ZVec *body, uint64_t *out)
{
    for (int i = 0; i < body->len; i++) {
        const ZStmt *x = body->items[i];
        int k = op_of(an, x);
        if (k >= 0) set(out, k);
        ops_in(an, &x->body, out);
        ops_in(an, &x->els, out);
        for (int b = 0; b < x->branches.len; b++)
            ops_in(an, &((ZBranch *)x->branches.items[b])->body, out);
    }
}

static void broadcast(const A *an, St *s, const ZStmt *ctl)
{
    ZLifeSet part = zj_part_stmt(ctl);
    for (int l = 0; l < an->nl; l++)
        if (l != ctl->life.index && zj_set_has(&part, l)) learn(an, s, l, ctl->life.index);
}

static void mark(A *an, int x, int y)
{
    set(an->conc + (size_t)x * (size_t)an->w, y);
    set(an->conc + (size_t)y * (size_t)an->w, x);
}

static void operation(A *an, St *s, int x, bool record)
{
    int life = an->ops[x]->pub.life;
    if (life < 0) return;
    uint64_t *k = know(an, s, life), *o = occ(an, s);
    if (record)
        for (int y = 0; y < an->nops; y++)
            if (y != x && has(o, y) && !has(k, y)) mark(an, x, y);
    for (int l = 0; l < an->nl; l++) clr(know(an, s, l), x);
    set(k, x);
    set(o, x);
}

static void walk_if(A *an, St *s, const ZStmt *x, bool record)
{
    broadcast(an, s, x);
    St *e = st_copy(an, s);
    walk(an, s, &x->body, record);
    walk(an, e, &x->els, record);
    meet(an, s, e);
    free(e);
}

/* The loop head without a fixpoint: the operations the loop holds are
 * known nowhere and may have run; the rest is as before the loop (only an
 * operation running removes it from a set).  Below every state of the
 * fixpoint, so walking from it is sound, if less precise. */
static void loop_head(const A *an, St *s, const ZStmt *x)
{
    uint64_t *in = zu_xcalloc((size_t)an->w, 8);
    ZVec one = {&(void *){(void *)x}, 1, 1};
    ops_in(an, &one, in);
    for (int l = 0; l < an->nl; l++)
        for (int w = 0; w < an->w; w++) know(an, s, l)[w] &= ~in[w];
    for (int w = 0; w < an->w; w++) occ(an, s)[w] |= in[w];
    free(in);
}

static void walk_while(A *an, St *s, const ZStmt *x, bool record)
{
    /* the loop head: what holds before every evaluation of the guard, a
     * fixpoint; loops nested deeper than ZQ_EXACT_LOOPS, or a fixpoint not
     * reached in ZQ_MAX_ROUNDS rounds, start from loop_head instead (so
     * nested loops cost a bounded number of walks each) */
    bool fixed = false;
    if (an->loops < ZQ_EXACT_LOOPS) {
        an->loops++;
        for (int round = 0; round < ZQ_MAX_ROUNDS && !fixed; round++) {
            St *b = st_copy(an, s);
            broadcast(an, b, x);
            walk(an, b, &x->body, false);
            St *h = st_copy(an, s);
            meet(an, h, b);
            free(b);
            fixed = same(an, h, s);
            memcpy(s, h, (size_t)(an->nl + 1) * (size_t)an->w * 8);
            free(h);
        }
        an->loops--;
    }
    if (!fixed) loop_head(an, s, x);
    if (record) {
        St *b = st_copy(an, s);
        broadcast(an, b, x);
        walk(an, b, &x->body, true);
        free(b);
    }
    broadcast(an, s, x);
    walk(an, s, &x->els, record);
}

static void walk_par(A *an, St *s, const ZStmt *x, bool record)
{
    int n = x->branches.len;
    if (!n) return;
    St **b = zu_xcalloc((size_t)n, sizeof *b);
    uint64_t **in = zu_xcalloc((size_t)n, sizeof *in);
    for (int i = 0; i < n; i++) {
        const ZBranch *br = x->branches.items[i];
        b[i] = st_copy(an, s);
        in[i] = zu_xcalloc((size_t)an->w, 8);
        ops_in(an, &br->body, in[i]);
        walk(an, b[i], &br->body, record);
    }
    if (record) { /* every pair of two branches: by lists, not by bit sets */
        int *list = zu_xcalloc((size_t)an->nops + 1, sizeof *list);
        int *start = zu_xcalloc((size_t)n + 1, sizeof *start);
        int len = 0;
        for (int i = 0; i < n; i++) {
            start[i] = len;
            for (int p = 0; p < an->nops; p++)
                if (has(in[i], p)) list[len++] = p;
        }
        start[n] = len;
        for (int i = 0; i < n; i++)
            for (int ka = start[i]; ka < start[i + 1]; ka++)
                for (int kb = start[i + 1]; kb < len; kb++) mark(an, list[ka], list[kb]);
        free(list);
        free(start);
    }
    /* know[L] after: known in some branch, and in every branch that runs it */
    for (int l = 0; l < an->nl; l++) {
        uint64_t *k = know(an, s, l);
        for (int w = 0; w < an->w; w++) {
            uint64_t any = 0, ok = ~(uint64_t)0;
            for (int i = 0; i < n; i++) {
                uint64_t ki = know(an, b[i], l)[w];
                any |= ki;
                ok &= ~in[i][w] | ki;
            }
            k[w] = any & ok;
        }
    }
    for (int w = 0; w < an->w; w++) {
        uint64_t u = 0;
        for (int i = 0; i < n; i++) u |= occ(an, b[i])[w];
        occ(an, s)[w] = u;
    }
    for (int i = 0; i < n; i++) {
        free(b[i]);
        free(in[i]);
    }
    free(b);
    free(in);
}

static void walk(A *an, St *s, const ZVec *body, bool record)
{
    for (int i = 0; i < body->len; i++) {
        const ZStmt *x = body->items[i];
        switch (x->kind) {
        case S_MSG: learn(an, s, x->to.index, x->life.index); break;
        case S_COREGION:
            for (int k = 0; k < x->body.len; k++) {
                const ZStmt *m = x->body.items[k];
                if (m->kind == S_MSG) learn(an, s, m->to.index, m->life.index);
            }
            break;
        case S_ATOMIC: {
            int k = op_of(an, x);
            if (k >= 0) operation(an, s, k, record);
            break;
        }
        case S_IF: walk_if(an, s, x, record); break;
        case S_WHILE: walk_while(an, s, x, record); break;
        case S_PAR: walk_par(an, s, x, record); break;
        default: break;
        }
    }
}

/* ---- classes --------------------------------------------------------- */

/* The first cell x reads that y writes, or -1. */
static int read_written(const Op *x, const Op *y)
{
    int best = -1;
    ZU_IMAP_EACH(&x->reads, i)
    {
        int c = (int)ZU_IMAP_KEY(&x->reads, i);
        if (zu_imap_get(&y->writes, (uint64_t)c) && (best < 0 || c < best)) best = c;
    }
    return best;
}

/* The first tool x calls that y's registry write leaves out, or NULL. */
static const ZDecl *phantom(const Op *x, const Op *y)
{
    if (!y->pub.registry) return NULL;
    for (int i = 0; i < x->pub.tools.len; i++) {
        const ZDecl *t = x->pub.tools.items[i];
        bool kept = false;
        for (int k = 0; k < y->pub.registry->tools.len && !kept; k++)
            kept = ((ZParam *)y->pub.registry->tools.items[k])->ref == t;
        if (!kept) return t;
    }
    return NULL;
}

static unsigned classify(const Op *x, const Op *y, int *cell, const ZDecl **tool)
{
    unsigned c = 0;
    int rw = read_written(x, y), wr = read_written(y, x);
    *cell = rw >= 0 ? rw : wr;
    if (rw >= 0 || wr >= 0) c |= ZQ_A1;
    if (x->pub.tools.len && y->pub.tools.len) c |= ZQ_A6;
    *tool = phantom(x, y);
    if (!*tool) *tool = phantom(y, x);
    if (*tool) c |= ZQ_A2;
    return c;
}

int zq_level_needed(unsigned classes)
{
    return classes & ZQ_A2 ? 4 : classes & ZQ_A6 ? 3 : classes & ZQ_A1 ? 1 : 0;
}

void zq_classes_text(ZBuf *b, unsigned classes)
{
    static const struct {
        unsigned bit;
        const char *name;
    } all[] = {{ZQ_A1, "A1"}, {ZQ_A6, "A6"}, {ZQ_A2, "A2"}};
    bool first = true;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (classes & all[i].bit) {
            zu_buf_printf(b, "%s%s", first ? "" : " ", all[i].name);
            first = false;
        }
    if (first) zu_buf_puts(b, "-");
}

/* ---- the report ------------------------------------------------------ */

ZqReport *zq_analyze(ZArena *a, const ZProgram *p, const ZDecl *wf)
{
    ZqReport *r = zu_alloc(a, sizeof *r);
    r->prog = p;
    r->wf = wf;
    r->nstores = p->stores.len;
    r->stores = zu_alloc(a, sizeof *r->stores * (size_t)(r->nstores ? r->nstores : 1));
    for (int i = 0; i < r->nstores; i++) {
        r->stores[i].store = p->stores.items[i];
        r->stores[i].declared = r->stores[i].store->level;
    }
    A an = {0};
    an.a = a;
    an.p = p;
    an.nl = p->lifelines.len;
    ZVec ops = {0};
    collect(&an, &wf->body, &ops);
    an.nops = ops.len;
    an.ops = (Op **)ops.items;
    if (an.nops) {
        an.w = (an.nops + 63) / 64;
        an.conc = zu_xcalloc((size_t)an.nops * (size_t)an.w, 8);
        St *s = st_new(&an);
        for (int l = 0; l < an.nl; l++)
            for (int k = 0; k < an.nops; k++) set(know(&an, s, l), k);
        walk(&an, s, &wf->body, true);
        free(s);
    }
    for (int i = 0; i < an.nops; i++) {
        Op *x = an.ops[i];
        ZqOp *pub = zu_alloc(a, sizeof *pub);
        *pub = x->pub;
        if (x->pub.store >= 0) {
            ZqStore *st = &r->stores[x->pub.store];
            zu_vec_push(a, &st->ops, pub);
        }
    }
    for (int i = 0; i < an.nops; i++)
        for (int j = i + 1; j < an.nops; j++) {
            Op *x = an.ops[i], *y = an.ops[j];
            if (x->pub.store != y->pub.store || x->pub.store < 0) continue;
            if (!has(an.conc + (size_t)i * (size_t)an.w, j)) continue;
            int cell;
            const ZDecl *tool;
            unsigned c = classify(x, y, &cell, &tool);
            if (!c) continue;
            ZqPair *pr = zu_alloc(a, sizeof *pr);
            pr->a = x->pub.s;
            pr->b = y->pub.s;
            pr->classes = c;
            const ZDecl *st = x->pub.s->store;
            pr->cell = cell >= 0 ? ((ZDecl *)st->cells.items[cell])->name : NULL;
            pr->tool = tool ? tool->name : NULL;
            ZqStore *rs = &r->stores[x->pub.store];
            zu_vec_push(a, &rs->pairs, pr);
            rs->classes |= c;
        }
    for (int i = 0; i < r->nstores; i++)
        r->stores[i].needed = zq_level_needed(r->stores[i].classes);
    for (int i = 0; i < an.nops; i++) {
        zu_imap_free(&an.ops[i]->reads);
        zu_imap_free(&an.ops[i]->writes);
        free(an.ops[i]);
    }
    zu_imap_free(&an.index);
    free(an.conc);
    return r;
}

/* ---- diagnostics ----------------------------------------------------- */

static ZSpan first_line(ZSpan s)
{
    if (s.last_line != s.first_line) {
        s.last_line = s.first_line;
        s.last_column = 1 << 30;
    }
    return s;
}

static const char *where(ZArena *a, ZSpan s)
{
    return zu_fmt(a, "%d:%d", s.first_line, s.first_column);
}

void zq_diagnose(ZArena *a, const ZqReport *r, ZDiag *d, bool strict)
{
    for (int i = 0; i < r->nstores; i++) {
        const ZqStore *st = &r->stores[i];
        const ZDecl *sd = st->store;
        if (st->declared < 0) continue; /* no valid level: reported */
        if (st->declared < st->needed) {
            const char *msg =
                zu_fmt(a,
                       "store `%s` is declared L%d, but in workflow `%s` its operations can race: "
                       "L%d is the lowest safe level",
                       sd->name, st->declared, r->wf->name, st->needed);
            if (strict)
                zd_error(d, sd->level_span, "%s", msg);
            else
                zd_warn(d, ZW_STORE_LEVEL, sd->level_span, "%s", msg);
            int shown = 0, more = 0;
            for (int k = 0; k < st->pairs.len; k++) {
                const ZqPair *pr = st->pairs.items[k];
                if (zq_level_needed(pr->classes) <= st->declared) continue;
                if (shown == ZQ_MAX_NOTES) {
                    more++;
                    continue;
                }
                shown++;
                ZBuf b = {0};
                zq_classes_text(&b, pr->classes);
                if (pr->cell || pr->tool)
                    zu_buf_printf(&b, " (%s%s%s%s%s%s%s)", pr->cell ? "cell `" : "",
                                  pr->cell ? pr->cell : "", pr->cell ? "`" : "",
                                  pr->cell && pr->tool ? ", " : "", pr->tool ? "tool `" : "",
                                  pr->tool ? pr->tool : "", pr->tool ? "`" : "");
                zd_note(d, first_line(pr->a->span),
                        "this operation of %s and the one of %s at %s are not ordered: %s",
                        pr->a->life.name, pr->b->life.name, where(a, pr->b->span), b.data);
                zu_buf_free(&b);
            }
            if (more)
                zd_note(d, sd->level_span,
                        "and %d more racing pair%s (`zgc anomalies --static` lists them all)", more,
                        more == 1 ? "" : "s");
        } else if (st->declared > st->needed && st->ops.len) {
            /* a note of its own, silenced with the warning */
            d->muted = (d->warn_off >> ZW_STORE_LEVEL) & 1u;
            zd_note(d, sd->level_span,
                    "store `%s` is declared L%d; in workflow `%s` L%d is enough (its "
                    "operations race with %s)",
                    sd->name, st->declared, r->wf->name, st->needed,
                    st->classes ? "fewer anomalies" : "no anomaly");
        }
    }
}
