/* Property test: for hundreds of random well-typed workflows (fixed seeds),
 * the front end accepts them, projection succeeds, and every lifeline's
 * local program mentions exactly
 *   - the messages in which that lifeline participates (as sender or
 *     receiver; self messages become local assignments), and
 *   - the control messages of the constructs it participates in: the owner
 *     broadcasts to exactly the other participants, in declaration order,
 *     on both outcomes; each other participant receives the construct's
 *     tag exactly once; nobody else mentions the tag.
 * Participation is computed here, from the global AST, independently of
 * the projection's own code. */
#include <criterion/criterion.h>

#include "helpers.h"
#include "zggen.h"

#define MAXL 64

/* ---- the global side ------------------------------------------------------ */

static void parts_list(const ZVec *v, bool *set);

static void parts(const ZStmt *s, bool *set)
{
    switch (s->kind) {
    case S_MSG: set[s->life.index] = set[s->to.index] = true; break;
    case S_ASSIGN:
    case S_BLOCK:
    case S_SKIP: set[s->life.index] = true; break;
    case S_IF:
    case S_WHILE:
        set[s->life.index] = true;
        parts_list(&s->body, set);
        parts_list(&s->els, set);
        break;
    case S_PAR:
        for (int i = 0; i < s->branches.len; i++)
            parts_list(&((ZBranch *)s->branches.items[i])->body, set);
        break;
    case S_COREGION: parts_list(&s->body, set); break;
    default: break;
    }
}

static void parts_list(const ZVec *v, bool *set)
{
    for (int i = 0; i < v->len; i++) parts(v->items[i], set);
}

typedef struct Expect {
    /* per lifeline: how often each global message statement appears as a
     * send (dir 0) or receive (dir 1); indexed by a running message id */
    int nmsg;
    const ZStmt *msgs[20000];
    int nctl;
    const ZStmt *ctls[5000];
} Expect;

static void collect(Expect *x, const ZVec *v)
{
    for (int i = 0; i < v->len; i++) {
        const ZStmt *s = v->items[i];
        if (s->kind == S_MSG && s->life.index != s->to.index) x->msgs[x->nmsg++] = s;
        if (s->kind == S_IF || s->kind == S_WHILE) x->ctls[x->nctl++] = s;
        if (s->kind == S_PAR)
            for (int k = 0; k < s->branches.len; k++)
                collect(x, &((ZBranch *)s->branches.items[k])->body);
        collect(x, &s->body);
        collect(x, &s->els);
    }
}

/* ---- the local side -------------------------------------------------------- */

typedef struct Seen {
    int sends, recvs; /* for one message statement */
} Seen;

typedef struct Walk {
    const Expect *x;
    int life;
    Seen msg[20000];
    int owner_true[5000][MAXL]; /* construct × recipient: send-ctl true */
    int owner_false[5000][MAXL];
    int order_bad; /* broadcasts out of declaration order */
    int recv_ctl[5000];
    int owner_nodes[5000];
} Walk;

static int msg_id(const Expect *x, const ZStmt *s)
{
    for (int i = 0; i < x->nmsg; i++)
        if (x->msgs[i] == s) return i;
    return -1;
}

static int ctl_id(const Expect *x, const ZStmt *s)
{
    for (int i = 0; i < x->nctl; i++)
        if (x->ctls[i] == s) return i;
    return -1;
}

static void walk_list(Walk *w, const ZVec *v, int ctx);

/* ctx: the construct whose branch this list is (-1: none) */
static void walk(Walk *w, const ZLocal *l, int ctx)
{
    switch (l->kind) {
    case L_SEND:
    case L_RECV: {
        int id = msg_id(w->x, l->src);
        cr_assert_geq(id, 0, "local message without a global message statement");
        if (l->kind == L_SEND)
            w->msg[id].sends++;
        else
            w->msg[id].recvs++;
        break;
    }
    case L_SEND_CTL: {
        int id = ctl_id(w->x, l->src);
        cr_assert_geq(id, 0, "send-ctl without a global construct");
        cr_assert_lt(l->peer, MAXL);
        if (l->ctl_value)
            w->owner_true[id][l->peer]++;
        else
            w->owner_false[id][l->peer]++;
        break;
    }
    case L_IF:
    case L_WHILE: {
        int id = ctl_id(w->x, l->src);
        cr_assert_geq(id, 0);
        w->owner_nodes[id]++;
        /* broadcasts come first in each branch, in declaration order */
        for (int pass = 0; pass < 2; pass++) {
            const ZVec *v = pass ? &l->els : &l->body;
            int last = -1;
            for (int i = 0; i < v->len; i++) {
                const ZLocal *k = v->items[i];
                if (k->kind != L_SEND_CTL || k->src != l->src) break;
                if (k->peer <= last) w->order_bad++;
                last = k->peer;
            }
        }
        walk_list(w, &l->body, id);
        walk_list(w, &l->els, id);
        break;
    }
    case L_IF_RECV:
    case L_WHILE_RECV: {
        int id = ctl_id(w->x, l->src);
        cr_assert_geq(id, 0);
        w->recv_ctl[id]++;
        walk_list(w, &l->body, id);
        walk_list(w, &l->els, id);
        break;
    }
    case L_RECV_ANY:
    case L_PAR: walk_list(w, &l->body, ctx); break;
    default: break;
    }
}

static void walk_list(Walk *w, const ZVec *v, int ctx)
{
    for (int i = 0; i < v->len; i++) walk(w, v->items[i], ctx);
}

/* totals over a test, so that a test that checked nothing fails */
static long total_msgs, total_ctls, total_recv_ctls;

static void check_one(uint64_t seed, int lifelines, int statements, bool cpl)
{
    ZGenOptions o = {.seed = seed,
                     .lifelines = lifelines,
                     .statements = statements,
                     .max_depth = 3,
                     .cpl = cpl,
                     .parallel = true};
    ZBuf src = {0};
    zggen_program(&src, &o);
    TComp *c = t_compile(src.data, T_GUARDS);
    cr_assert(c->ok, "seed %llu: generated program rejected:\n%s\n%s", (unsigned long long)seed,
              c->diag_text, src.data);
    cr_assert_not_null(c->comp.locals);
    cr_assert_not_null(c->comp.guards);

    static Expect x;
    memset(&x, 0, sizeof x);
    collect(&x, &c->comp.wf->body);
    total_msgs += x.nmsg;
    total_ctls += x.nctl;
    int n = c->comp.prog->lifelines.len;
    cr_assert_eq(c->comp.locals->programs.len, n);

    static Walk w;
    for (int L = 0; L < n; L++) {
        memset(&w, 0, sizeof w);
        w.x = &x;
        w.life = L;
        const ZLocalProgram *lp = c->comp.locals->programs.items[L];
        cr_assert_eq(lp->lifeline, L);
        walk_list(&w, &lp->body, -1);
        for (int m = 0; m < x.nmsg; m++) {
            const ZStmt *s = x.msgs[m];
            int want_send = s->life.index == L, want_recv = s->to.index == L;
            cr_assert_eq(w.msg[m].sends, want_send,
                         "seed %llu: L%d mentions the send of line %d %d times",
                         (unsigned long long)seed, L, s->span.first_line, w.msg[m].sends);
            cr_assert_eq(w.msg[m].recvs, want_recv,
                         "seed %llu: L%d mentions the receive of line %d %d times",
                         (unsigned long long)seed, L, s->span.first_line, w.msg[m].recvs);
        }
        cr_assert_eq(w.order_bad, 0, "seed %llu: broadcasts out of declaration order",
                     (unsigned long long)seed);
        for (int k = 0; k < x.nctl; k++) {
            const ZStmt *s = x.ctls[k];
            bool set[MAXL] = {0};
            parts(s, set);
            int owner = s->life.index;
            if (L == owner) {
                cr_assert_eq(w.owner_nodes[k], 1,
                             "seed %llu: owner L%d has %d nodes for construct at line %d",
                             (unsigned long long)seed, L, w.owner_nodes[k], s->span.first_line);
                for (int r = 0; r < n; r++) {
                    int want = r != owner && set[r];
                    cr_assert_eq(w.owner_true[k][r], want,
                                 "seed %llu: L%d send-ctl true to L%d at line %d",
                                 (unsigned long long)seed, L, r, s->span.first_line);
                    cr_assert_eq(w.owner_false[k][r], want,
                                 "seed %llu: L%d send-ctl false to L%d at line %d",
                                 (unsigned long long)seed, L, r, s->span.first_line);
                }
                cr_assert_eq(w.recv_ctl[k], 0);
            } else {
                cr_assert_eq(w.owner_nodes[k], 0);
                total_recv_ctls += w.recv_ctl[k];
                cr_assert_eq(w.recv_ctl[k], set[L] ? 1 : 0,
                             "seed %llu: L%d receives the tag of the construct at line %d %d times",
                             (unsigned long long)seed, L, s->span.first_line, w.recv_ctl[k]);
                for (int r = 0; r < n; r++)
                    cr_assert_eq(w.owner_true[k][r] + w.owner_false[k][r], 0);
            }
        }
    }
    /* the printed form mentions every tag the owner broadcasts */
    T_CAPTURE(text, zj_print(out, c->comp.locals, -1));
    cr_assert_not_null(text);
    free(text);
    t_free(c);
    zu_buf_free(&src);
}

Test(property, small_workflows_with_cpl_guards)
{
    for (uint64_t seed = 1; seed <= 300; seed++)
        check_one(seed, 2 + (int)(seed % 5), 10 + (int)(seed % 40), true);
    cr_expect_gt(total_msgs, 2000, "only %ld messages checked", total_msgs);
    cr_expect_gt(total_ctls, 300, "only %ld control constructs checked", total_ctls);
    cr_expect_gt(total_recv_ctls, 300, "only %ld control receptions checked", total_recv_ctls);
}

Test(property, plain_guards)
{
    for (uint64_t seed = 1000; seed < 1100; seed++) check_one(seed, 2 + (int)(seed % 7), 30, false);
}

Test(property, larger_workflows)
{
    for (uint64_t seed = 5000; seed < 5010; seed++)
        check_one(seed, 16 + (int)(seed % 48), 400, true);
}

/* The property must be able to fail: a generated program with one message
 * removed from a local program is caught.  (Checks the checker.) */
Test(property, detects_a_missing_message)
{
    ZGenOptions o = {
        .seed = 7, .lifelines = 3, .statements = 20, .max_depth = 2, .cpl = true, .parallel = true};
    ZBuf src = {0};
    zggen_program(&src, &o);
    TComp *c = t_compile(src.data, T_PROJECT);
    cr_assert(c->ok, "%s", c->diag_text);
    static Expect x;
    memset(&x, 0, sizeof x);
    collect(&x, &c->comp.wf->body);
    /* drop the first send of lifeline 0 */
    ZLocalProgram *lp = c->comp.locals->programs.items[0];
    int dropped = 0;
    for (int i = 0; i < lp->body.len && !dropped; i++)
        if (((ZLocal *)lp->body.items[i])->kind == L_SEND) {
            memmove(&lp->body.items[i], &lp->body.items[i + 1],
                    (size_t)(lp->body.len - i - 1) * sizeof(void *));
            lp->body.len--;
            dropped = 1;
        }
    cr_assert(dropped, "test program has no top-level send on L0");
    static Walk w;
    memset(&w, 0, sizeof w);
    w.x = &x;
    walk_list(&w, &lp->body, -1);
    int mismatches = 0;
    for (int m = 0; m < x.nmsg; m++)
        if (w.msg[m].sends != (x.msgs[m]->life.index == 0)) mismatches++;
    cr_expect_eq(mismatches, 1);
    t_free(c);
    zu_buf_free(&src);
}
