/* test_monitor.c — the CPL monitor (Algorithm 1): vector clocks, boolean
 * views and variable views merged on receives, with the merge example of
 * the CPL paper and a hand-written eval function for the guard
 *
 *   @TestRunner(status != failed since status == passed)
 *     && @TestRunner.candidate == candidate          (owner: Committer)
 *
 * subformulas, bottom-up:
 *   0  status != failed        (evaluated on TestRunner)
 *   1  status == passed        (TestRunner)
 *   2  0 since 1               (TestRunner)
 *   3  @TestRunner(2)          (Committer)
 *   4  @TestRunner.candidate == candidate   (Committer)
 *   5  3 && 4                  (Committer; the guard's root)
 *
 * The monitor plan (zgrt_abi.h: zgrt_keep, zgrt_edge) for the messages
 * Orchestrator → TestRunner, Orchestrator → Committer, TestRunner →
 * Committer, TestRunner → Relay and Relay → Committer, as compiler/plan.c
 * makes it:
 *   Orchestrator  keeps nothing (no TestRunner event reaches it)
 *   TestRunner    evals 0 1 2; vc TestRunner
 *   Committer     evals 3 4 5; vc TestRunner Committer;
 *                 views 0 (TestRunner, 2);
 *                 varviews 0 (TestRunner, candidate)
 *                          1 (TestRunner, status)  read by the relay test
 *   Relay         vc TestRunner Relay; the Committer's views and varviews,
 *                 which it forwards
 *   edges to the Committer and the Relay carry vc[TestRunner] and the
 *   three entries (from TestRunner: val[2] and its store); the
 *   Orchestrator's edges carry nothing.
 */
#include <criterion/criterion.h>
#include <semaphore.h>
#include <string.h>
#include <unistd.h>

#include "net/net.h"
#include "programs.h"

enum { ORCH, TR, COMM, RELAY };
enum { V_CAND, V_STATUS, V_D1, V_D2, V_SEEN, V_TV };
enum { PENDING, PASSED, FAILED };

static const char *const LIVES[] = {"Orchestrator", "TestRunner", "Committer", "Relay"};
static const char *const CHANS[] = {"main"};
static const char *const TAGS[] = {"if#1", "if#2"};
static const zgrt_loc LOCS[] = {{1, 1, NULL}};
static const char *const STATUS_M[] = {"pending", "passed", "failed"};
static const zgrt_enum ENUMS[] = {{"TestStatus", 3, STATUS_M}};
static const zgrt_str C1 = {2, "c1"};
static const zgrt_var VARS[] = {{"candidate", {ZGRT_STR, -1}, 0, {0}},
                                {"status", {ZGRT_ENUM, 0}, 1, {.tag = ZGRT_ENUM, .u.i = PENDING}},
                                {"d1", {ZGRT_BOOL, -1}, 1, {.tag = ZGRT_BOOL, .u.i = 0}},
                                {"d2", {ZGRT_BOOL, -1}, 1, {.tag = ZGRT_BOOL, .u.i = 0}},
                                {"seen", {ZGRT_INT, -1}, 1, {.tag = ZGRT_INT, .u.i = 0}},
                                {"tv", {ZGRT_ENUM, 0}, 1, {.tag = ZGRT_ENUM, .u.i = PENDING}}};
/* the relay programs give every lifeline the candidate c1 */
static const zgrt_var VARS_C1[] = {
    {"candidate", {ZGRT_STR, -1}, 1, {.tag = ZGRT_STR, .u.s = &C1}},
    {"status", {ZGRT_ENUM, 0}, 1, {.tag = ZGRT_ENUM, .u.i = PENDING}},
    {"d1", {ZGRT_BOOL, -1}, 1, {.tag = ZGRT_BOOL, .u.i = 0}},
    {"d2", {ZGRT_BOOL, -1}, 1, {.tag = ZGRT_BOOL, .u.i = 0}},
    {"seen", {ZGRT_INT, -1}, 1, {.tag = ZGRT_INT, .u.i = 0}},
    {"tv", {ZGRT_ENUM, 0}, 1, {.tag = ZGRT_ENUM, .u.i = PENDING}}};
static const zgrt_input INPUTS[] = {{V_CAND, ORCH}};

enum { VS_TR_2, NV };                   /* the Committer's and Relay's view slots */
enum { VV_TR_CAND, VV_TR_STATUS, NVV }; /* their variable-view slots */
static const zgrt_slot VIEWS[] = {{TR, 2}};
static const zgrt_slot VARVIEWS[] = {{TR, V_CAND}, {TR, V_STATUS}};
static const int32_t TR_EVALS[] = {0, 1, 2}, COMM_EVALS[] = {3, 4, 5};
static const int32_t TR_VC[] = {TR}, COMM_VC[] = {TR, COMM}, RELAY_VC[] = {TR, RELAY};
static const zgrt_keep KEEPS[] = {
    {0, 0, 0, 0, NULL, NULL, NULL, NULL},
    {3, 1, 0, 0, TR_EVALS, TR_VC, NULL, NULL},
    {3, 2, NV, NVV, COMM_EVALS, COMM_VC, VIEWS, VARVIEWS},
    {0, 2, NV, NVV, NULL, RELAY_VC, VIEWS, VARVIEWS},
};
/* TestRunner's group: vc[TestRunner] at 0 on every end, its entries */
static const zgrt_group G_TR[] = {{TR, 0, 0, 1, 2}};
static const zgrt_pair OWN_VIEWS[] = {{2, 0}};                        /* val[2] */
static const zgrt_pair OWN_VARVIEWS[] = {{V_CAND, 0}, {V_STATUS, 1}}; /* the store */
static const zgrt_pair FWD_VIEWS[] = {{0, 0}};
static const zgrt_pair FWD_VARVIEWS[] = {{0, 0}, {1, 1}};
static const zgrt_edge EDGES[] = {
    {ORCH, TR, 0, 0, 0, 0, NULL, NULL, NULL},
    {ORCH, COMM, 0, 0, 0, 0, NULL, NULL, NULL},
    {TR, COMM, 1, 1, 2, 0, G_TR, OWN_VIEWS, OWN_VARVIEWS},
    {TR, RELAY, 1, 1, 2, 0, G_TR, OWN_VIEWS, OWN_VARVIEWS},
    {RELAY, COMM, 1, 1, 2, 0, G_TR, FWD_VIEWS, FWD_VARVIEWS},
};
#define SLOTS .keeps = KEEPS, .nedges = 5, .edges = EDGES

static int is_status(const zgrt_value *v, int m)
{
    return v && v->tag == ZGRT_ENUM && (v->u.i & 0xffffffff) == m;
}

static int eval_calls[4];

static void eval_tr(zgrt_ctx *ctx, uint8_t *val, const uint8_t *old)
{
    const zgrt_value *s = zgrt_store(ctx);
    eval_calls[TR]++;
    val[0] = s[V_STATUS].tag != ZGRT_UNDEF && !is_status(&s[V_STATUS], FAILED);
    val[1] = is_status(&s[V_STATUS], PASSED);
    val[2] = val[1] || (val[0] && zgrt_vc(ctx, TR) > 1 && old[2]);
}

/* the Committer's val[k] holds subformula 3 + k */
static void eval_comm(zgrt_ctx *ctx, uint8_t *val, const uint8_t *old)
{
    (void)old;
    eval_calls[COMM]++;
    val[0] = zgrt_vc(ctx, TR) > 0 ? (uint8_t)zgrt_view(ctx, TR, VS_TR_2) : 0;
    const zgrt_value *theirs = zgrt_varview(ctx, TR, VV_TR_CAND), *mine = &zgrt_store(ctx)[V_CAND];
    val[1] = theirs && mine->tag != ZGRT_UNDEF && zgrt_compare(theirs, mine) == 0;
    val[2] = val[0] && val[1];
}

static const zgrt_eval_fn EVALS[] = {NULL, eval_tr, eval_comm, NULL};

static void assign1(zgrt_ctx *ctx, int32_t var, zgrt_value v)
{
    zgrt_assign(ctx, NULL, 1, &var, &v, 0);
}

static void send1(zgrt_ctx *ctx, int32_t to, int32_t var)
{
    zgrt_send(ctx, to, 0, 1, &zgrt_store(ctx)[var], 0);
}

static void recv1(zgrt_ctx *ctx, int32_t from, int32_t var)
{
    zgrt_recv(ctx, from, 0, 1, &var, NULL, 0);
}

static void nothing(zgrt_ctx *ctx) { (void)ctx; }

/* ---- the merge example: a failure in transit does not block ------------------ */

static sem_t failure_sent;
static int other_candidate; /* the Committer is asked about another candidate */

static void m_orch(zgrt_ctx *ctx)
{
    send1(ctx, TR, V_CAND);
    if (other_candidate) assign1(ctx, V_CAND, v_str(ctx, "c2"));
    send1(ctx, COMM, V_CAND);
}

static void m_tr(zgrt_ctx *ctx)
{
    recv1(ctx, ORCH, V_CAND);
    assign1(ctx, V_STATUS, v_enum(0, PASSED)); /* the required checks pass */
    send1(ctx, COMM, V_STATUS);
    assign1(ctx, V_STATUS, v_enum(0, FAILED)); /* the full suite fails */
    send1(ctx, COMM, V_STATUS);
    sem_post(&failure_sent);
}

static void m_comm(zgrt_ctx *ctx)
{
    recv1(ctx, TR, V_STATUS);
    recv1(ctx, ORCH, V_CAND);
    /* the failure is already in the inbox, but not received: not visible */
    sem_wait(&failure_sent);
    int ok = zgrt_choice_cpl(ctx, 1, 5, 0);
    assign1(ctx, V_D1, v_bool(ok));
    assign1(ctx, V_SEEN, v_int(zgrt_vc(ctx, TR)));
    recv1(ctx, TR, V_STATUS);
    ok = zgrt_choice_cpl(ctx, 1, 5, 0);
    assign1(ctx, V_D2, v_bool(ok));
}

static const zgrt_body_fn M_BODIES[] = {m_orch, m_tr, m_comm, nothing};
static const zgrt_result M_RES[] = {{V_D1, COMM}, {V_D2, COMM}, {V_SEEN, COMM}};

static const zgrt_program prog_merge = {
    .abi_version = ZGRT_ABI_VERSION,
    .source = "merge.zg",
    .workflow = "merge",
    .nlifelines = 4,
    .lifelines = LIVES,
    .bodies = M_BODIES,
    .evals = EVALS,
    .nvars = 6,
    .vars = VARS,
    .nenums = 1,
    .enums = ENUMS,
    .nchans = 1,
    .chans = CHANS,
    .ntags = 2,
    .tags = TAGS,
    .nlocs = 1,
    .locs = LOCS,
    .ninputs = 1,
    .inputs = INPUTS,
    .nresults = 3,
    .results = M_RES,
    .result_tuple = 1,
    .monitor = 1,
    .nsubs = 6,
    SLOTS,
};

Test(monitor, failure_in_transit_does_not_block_then_blocks, .timeout = 20)
{
    other_candidate = 0;
    for (int i = 0; i < 5; i++) {
        sem_init(&failure_sent, 0, 0);
        memset(eval_calls, 0, sizeof eval_calls);
        run_out r = run_prog(&prog_merge, (const char *const[]){"--arg", "candidate=c1", NULL});
        cr_expect_eq(r.status, 0, "%s", r.err);
        /* merged at the first decision, blocked once the failure arrived */
        cr_expect_str_eq(r.out, "[true, false, 3]\n");
        /* the monitor runs at every event of the evaluating lifelines */
        cr_expect_eq(eval_calls[TR], 5);
        cr_expect_eq(eval_calls[COMM], 8);
        run_out_free(&r);
        sem_destroy(&failure_sent);
    }
}

Test(monitor, other_candidate_blocks, .timeout = 20)
{
    /* the Committer is asked about c2 while the TestRunner's result is for c1 */
    other_candidate = 1;
    sem_init(&failure_sent, 0, 0);
    run_out r = run_prog(&prog_merge, (const char *const[]){"--arg", "candidate=c1", NULL});
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_str_eq(r.out, "[false, false, 3]\n");
    run_out_free(&r);
    sem_destroy(&failure_sent);
    other_candidate = 0;
}

/* ---- relays: the causally latest state wins, not the latest message ------------ */

static int relay_newer; /* 0: the relay carries an older state; 1: a newer one */

static void r_tr(zgrt_ctx *ctx)
{
    if (!relay_newer) {
        assign1(ctx, V_STATUS, v_enum(0, FAILED));
        send1(ctx, RELAY, V_STATUS); /* old news, sent the long way */
        assign1(ctx, V_STATUS, v_enum(0, PASSED));
        send1(ctx, COMM, V_STATUS);
    } else {
        assign1(ctx, V_STATUS, v_enum(0, PASSED));
        send1(ctx, COMM, V_STATUS);
        assign1(ctx, V_STATUS, v_enum(0, FAILED));
        send1(ctx, RELAY, V_STATUS); /* news, sent the long way */
    }
}

static void r_relay(zgrt_ctx *ctx)
{
    recv1(ctx, TR, V_STATUS);
    send1(ctx, COMM, V_STATUS);
}

static void r_comm(zgrt_ctx *ctx)
{
    recv1(ctx, TR, V_STATUS);
    recv1(ctx, RELAY, V_STATUS);
    int ok = zgrt_choice_cpl(ctx, 1, 5, 0);
    assign1(ctx, V_D1, v_bool(ok));
    assign1(ctx, V_SEEN, v_int(zgrt_vc(ctx, TR)));
    const zgrt_value *tv = zgrt_varview(ctx, TR, VV_TR_STATUS);
    assign1(ctx, V_TV, tv ? *tv : v_enum(0, PENDING));
}

static const zgrt_body_fn R_BODIES[] = {nothing, r_tr, r_comm, r_relay};
static const zgrt_result R_RES[] = {{V_D1, COMM}, {V_SEEN, COMM}, {V_TV, COMM}, {V_STATUS, COMM}};

static const zgrt_program prog_relay = {
    .abi_version = ZGRT_ABI_VERSION,
    .source = "relay.zg",
    .workflow = "relay",
    .nlifelines = 4,
    .lifelines = LIVES,
    .bodies = R_BODIES,
    .evals = EVALS,
    .nvars = 6,
    .vars = VARS_C1,
    .nenums = 1,
    .enums = ENUMS,
    .nchans = 1,
    .chans = CHANS,
    .ntags = 2,
    .tags = TAGS,
    .nlocs = 1,
    .locs = LOCS,
    .nresults = 4,
    .results = R_RES,
    .result_tuple = 1,
    .monitor = 1,
    .nsubs = 6,
    SLOTS,
};

Test(monitor, stale_relay_does_not_override, .timeout = 20)
{
    relay_newer = 0;
    run_out r = run_prog(&prog_relay, (const char *const[]){"--seed", "0", NULL});
    cr_expect_eq(r.status, 0, "%s", r.err);
    /* the Committer's own status holds the relayed (old) value, but the
     * latest visible TestRunner state is its 4th event: passed */
    cr_expect_str_eq(r.out, "[true, 4, \"passed\", \"failed\"]\n");
    run_out_free(&r);
}

Test(monitor, newer_state_through_relay_wins, .timeout = 20)
{
    relay_newer = 1;
    run_out r = run_prog(&prog_relay, (const char *const[]){"--seed", "0", NULL});
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_str_eq(r.out, "[false, 4, \"failed\", \"failed\"]\n");
    run_out_free(&r);
}

/* ---- without CPL guards: vector clocks only ------------------------------------------ */

static void plain_orch(zgrt_ctx *ctx)
{
    assign1(ctx, V_STATUS, v_enum(0, PASSED));
    send1(ctx, COMM, V_STATUS);
}

static void plain_comm(zgrt_ctx *ctx)
{
    recv1(ctx, ORCH, V_STATUS);
    /* no views without the monitor: nothing is kept, every slot is
     * undefined; only a traced run keeps the (full) vector clock */
    int ok = zgrt_varview(ctx, ORCH, 0) == NULL && zgrt_view(ctx, ORCH, 0) == 0 &&
             zgrt_varview(ctx, COMM, 0) == NULL;
    assign1(ctx, V_D1, v_bool(ok));
    assign1(ctx, V_SEEN, v_int(zgrt_vc(ctx, ORCH) * 10 + zgrt_vc(ctx, COMM)));
}

static const zgrt_body_fn P_BODIES[] = {plain_orch, nothing, plain_comm, nothing};
static const zgrt_result P_RES[] = {{V_D1, COMM}, {V_SEEN, COMM}};

static const zgrt_program prog_plain = {
    .abi_version = ZGRT_ABI_VERSION,
    .source = "plain.zg",
    .workflow = "plain",
    .nlifelines = 4,
    .lifelines = LIVES,
    .bodies = P_BODIES,
    .nvars = 6,
    .vars = VARS_C1,
    .nenums = 1,
    .enums = ENUMS,
    .nchans = 1,
    .chans = CHANS,
    .ntags = 2,
    .tags = TAGS,
    .nlocs = 1,
    .locs = LOCS,
    .nresults = 2,
    .results = P_RES,
    .result_tuple = 1,
};

Test(monitor, no_monitor_vector_clock_only, .timeout = 20)
{
    char *path = temp_path("trace");
    run_out r = run_prog(&prog_plain, (const char *const[]){"--trace", path, NULL});
    cr_expect_eq(r.status, 0, "%s", r.err);
    /* after the receive and one act: Orchestrator 2, Committer 2 */
    cr_expect_str_eq(r.out, "[true, 22]\n");
    run_out_free(&r);
    unlink(path);
    free(path);
}

Test(monitor, no_trace_no_metadata, .timeout = 20)
{
    /* without a trace and without a monitor lifelines keep no clock and
     * messages carry none: every entry reads 0 */
    run_out r = run_prog(&prog_plain, (const char *const[]){"--seed", "0", NULL});
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_str_eq(r.out, "[true, 0]\n");
    run_out_free(&r);
}

/* ---- a trap inside an eval function (a builtin in a guard's atom) ------------------ */

static const char *const SOLO[] = {"A"};
static const char *const PAR_CHANS[] = {"main", "main/par1.1", "main/par1.2"};

static void eval_trapping(zgrt_ctx *ctx, uint8_t *val, const uint8_t *old)
{
    (void)old;
    val[0] = 1;
    if (zgrt_vc(ctx, 0) == 5) {
        zgrt_value s = v_str(ctx, "five"), out;
        zgrt_builtin(ctx, ZGRT_BI_INT, 1, &s, &out, 0); /* traps */
    }
}

static void busy_branch(zgrt_ctx *ctx)
{
    for (;;) zgrt_choice(ctx, 0, 1, 0);
}

static const zgrt_body_fn BUSY[] = {busy_branch, busy_branch};
static void busy_main(zgrt_ctx *ctx) { zgrt_par(ctx, 2, BUSY, 0); }
static const zgrt_body_fn BUSY_B[] = {busy_main};
static const zgrt_eval_fn TRAP_EVALS[] = {eval_trapping};
static const int32_t ONE_EVAL[] = {0}, VC_A[] = {0}, VC_B[] = {1};
static const zgrt_keep SOLO_KEEP[] = {{1, 1, 0, 0, ONE_EVAL, VC_A, NULL, NULL}};

static const zgrt_program prog_eval_trap = {
    .abi_version = ZGRT_ABI_VERSION,
    .source = "g.zg",
    .workflow = "g",
    .nlifelines = 1,
    .lifelines = SOLO,
    .bodies = BUSY_B,
    .evals = TRAP_EVALS,
    .nvars = 1,
    .vars = VARS,
    .nchans = 3,
    .chans = PAR_CHANS,
    .ntags = 2,
    .tags = TAGS,
    .nlocs = 1,
    .locs = LOCS,
    .monitor = 1,
    .nsubs = 1,
    .keeps = SOLO_KEEP,
};

Test(monitor, trap_in_eval_releases_the_lifeline, .timeout = 20)
{
    for (int i = 0; i < 10; i++) {
        run_out r = run_prog(&prog_eval_trap, (const char *const[]){"--seed", "0", NULL});
        cr_expect_eq(r.status, 1);
        cr_expect_str_eq(r.err,
                         "prog: error: lifeline A: g.zg:1:1: int(\"five\"): not an integer\n");
        run_out_free(&r);
    }
}

static void eval_trap_on_recv(zgrt_ctx *ctx, uint8_t *val, const uint8_t *old)
{
    (void)old;
    val[0] = 0;
    if (zgrt_vc(ctx, 1) == 3) zgrt_trap(ctx, 0, "trap in a guard");
}

static void sender(zgrt_ctx *ctx)
{
    for (int i = 0; i < 5; i++) send1(ctx, 1, V_SEEN);
}

static void receiver(zgrt_ctx *ctx)
{
    for (int i = 0; i < 5; i++) recv1(ctx, 0, V_SEEN);
}

static const char *const TWO[] = {"A", "B"};
static const zgrt_body_fn SR_B[] = {sender, receiver};
static const zgrt_eval_fn SR_EVALS[] = {NULL, eval_trap_on_recv};
static const zgrt_keep SR_KEEPS[] = {{0, 0, 0, 0, NULL, NULL, NULL, NULL},
                                     {1, 1, 0, 0, ONE_EVAL, VC_B, NULL, NULL}};
static const zgrt_edge SR_EDGES[] = {{0, 1, 0, 0, 0, 0, NULL, NULL, NULL}};

static const zgrt_program prog_eval_trap_recv = {
    .abi_version = ZGRT_ABI_VERSION,
    .source = "g.zg",
    .workflow = "g",
    .nlifelines = 2,
    .lifelines = TWO,
    .bodies = SR_B,
    .evals = SR_EVALS,
    .nvars = 6,
    .vars = VARS,
    .nenums = 1,
    .enums = ENUMS,
    .nchans = 1,
    .chans = CHANS,
    .ntags = 2,
    .tags = TAGS,
    .nlocs = 1,
    .locs = LOCS,
    .monitor = 1,
    .nsubs = 1,
    .keeps = SR_KEEPS,
    .nedges = 1,
    .edges = SR_EDGES,
};

Test(monitor, trap_in_eval_of_a_receive, .timeout = 20)
{
    run_out r = run_prog(&prog_eval_trap_recv, (const char *const[]){"--seed", "0", NULL});
    cr_expect_eq(r.status, 1);
    cr_expect_str_eq(r.err, "prog: error: lifeline B: g.zg:1:1: trap in a guard\n");
    run_out_free(&r);
}

/* ---- compact views: the accessors take slots of the caller's lifeline ------------ */

static void s_tr(zgrt_ctx *ctx)
{
    assign1(ctx, V_CAND, v_str(ctx, "c1"));
    assign1(ctx, V_STATUS, v_enum(0, PASSED));
    send1(ctx, COMM, V_STATUS);
}

static void s_comm(zgrt_ctx *ctx)
{
    /* nothing visible yet: every view is 0 / undefined */
    int before = zgrt_view(ctx, TR, VS_TR_2) == 0 && zgrt_varview(ctx, TR, VV_TR_STATUS) == NULL;
    recv1(ctx, TR, V_STATUS);
    const zgrt_value *st = zgrt_varview(ctx, TR, VV_TR_STATUS),
                     *cand = zgrt_varview(ctx, TR, VV_TR_CAND);
    int seen = is_status(st, PASSED) && cand && cand->tag == ZGRT_STR &&
               strcmp(cand->u.s->data, "c1") == 0 && zgrt_view(ctx, TR, VS_TR_2) == 1;
    /* the lifeline's own variables are its store, not a slot */
    assign1(ctx, V_CAND, v_str(ctx, "mine"));
    int self = zgrt_varview(ctx, COMM, VV_TR_CAND) == NULL && zgrt_view(ctx, COMM, 0) == 0;
    /* a slot that is not the lifeline's, or out of the table: 0 / NULL */
    int wrong = zgrt_varview(ctx, ORCH, VV_TR_CAND) == NULL &&
                zgrt_varview(ctx, RELAY, VV_TR_STATUS) == NULL &&
                zgrt_varview(ctx, TR, NVV) == NULL && zgrt_varview(ctx, TR, -1) == NULL &&
                zgrt_varview(ctx, 4, 0) == NULL && zgrt_varview(ctx, -1, 0) == NULL &&
                zgrt_view(ctx, COMM, VS_TR_2) == 0 && zgrt_view(ctx, TR, NV) == 0 &&
                zgrt_view(ctx, TR, -1) == 0 && zgrt_view(ctx, 4, 0) == 0;
    assign1(ctx, V_SEEN, v_int(before * 1000 + seen * 100 + self * 10 + wrong));
}

static const zgrt_body_fn S_BODIES[] = {nothing, s_tr, s_comm, nothing};
static const zgrt_result S_RES[] = {{V_SEEN, COMM}};

static const zgrt_program prog_slots = {
    .abi_version = ZGRT_ABI_VERSION,
    .source = "slots.zg",
    .workflow = "slots",
    .nlifelines = 4,
    .lifelines = LIVES,
    .bodies = S_BODIES,
    .evals = EVALS,
    .nvars = 6,
    .vars = VARS,
    .nenums = 1,
    .enums = ENUMS,
    .nchans = 1,
    .chans = CHANS,
    .ntags = 2,
    .tags = TAGS,
    .nlocs = 1,
    .locs = LOCS,
    .nresults = 1,
    .results = S_RES,
    .monitor = 1,
    .nsubs = 6,
    SLOTS,
};

Test(monitor, accessors_take_the_lifelines_slots, .timeout = 20)
{
    run_out r = run_prog(&prog_slots, (const char *const[]){"--seed", "0", NULL});
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_str_eq(r.out, "1111\n");
    run_out_free(&r);
}

/* ---- message metadata: what the edge carries, not the program's slots -------------- */

Test(monitor, message_metadata_follows_the_edge)
{
    const zgrt_program *p = &prog_merge;
    size_t bare = zri_msg_block_size(p, ORCH, TR, 2, 0);
    /* the Orchestrator's edges carry nothing: no metadata at all */
    cr_expect_eq(zri_msg_block_size(p, ORCH, COMM, 2, 0), bare);
    /* TestRunner → Committer: vc[TestRunner], one view, two variable views */
    cr_expect_eq(zri_msg_block_size(p, TR, COMM, 2, 0) - bare, 8 + 1 + 2 * 16);
    /* values do not change the metadata */
    cr_expect_eq(zri_msg_block_size(p, TR, COMM, 7, 0) - zri_msg_block_size(p, ORCH, TR, 7, 0),
                 8 + 1 + 2 * 16);
    /* a traced run: the full clock instead of the groups' entries, on every edge */
    cr_expect_eq(zri_msg_block_size(p, TR, COMM, 2, 1) - bare, 8 * 4 + 1 + 2 * 16);
    cr_expect_eq(zri_msg_block_size(p, ORCH, TR, 2, 1) - bare, 8 * 4);
    cr_expect_eq(zri_msg_block_size(p, COMM, ORCH, 2, 1) - bare, 8 * 4);
    int32_t form, nvc, nv, nvv;
    cr_expect_eq(zri_msg_meta(p, RELAY, COMM, 0, &form, &nvc, &nv, &nvv), 41);
    cr_expect(form == ZRI_META_EDGE && nvc == 1 && nv == 1 && nvv == 2);
    cr_expect_eq(zri_msg_meta(p, ORCH, COMM, 0, &form, &nvc, &nv, &nvv), 0);
    cr_expect_eq(form, ZRI_META_NONE);
    /* the frame codec's messages have room for exactly the edge's entries */
    zri_msg *m = zri_msg_new(p, 0, TR, COMM, ZRI_META_EDGE);
    cr_assert_not_null(m);
    cr_expect(m->has_meta == ZRI_META_EDGE && m->nvc == 1 && m->nviews == 1 && m->nvarviews == 2);
    cr_expect_eq((uint8_t *)m->vc - (uint8_t *)m->varviews, 2 * sizeof(zgrt_value));
    free(m);
    m = zri_msg_new(p, 0, ORCH, TR, ZRI_META_EDGE);
    cr_expect_eq(m->has_meta, ZRI_META_NONE);
    free(m);
    m = zri_msg_new(p, 0, ORCH, TR, ZRI_META_FULL);
    cr_expect(m->has_meta == ZRI_META_FULL && m->nvc == 4 && m->nviews == 0);
    free(m);
}

/* ---- a malformed plan is a clear error ----------------------------------------------- */

static int64_t malformed_runs;
static void count_body(zgrt_ctx *ctx)
{
    (void)ctx;
    __atomic_add_fetch(&malformed_runs, 1, __ATOMIC_RELAXED);
}

Test(monitor, malformed_plans_are_rejected, .timeout = 20)
{
    static const zgrt_body_fn bodies[] = {count_body, count_body, count_body, count_body};
    static const zgrt_slot dup[] = {{TR, 2}, {TR, 2}};
    static const zgrt_slot own[] = {{COMM, 2}};
    static const zgrt_slot no_clock[] = {{ORCH, 2}};
    static const zgrt_slot bad_sub[] = {{TR, 6}};
    static const zgrt_slot bad_var[] = {{TR, V_CAND}, {TR, 6}};
    static const int32_t unsorted_vc[] = {COMM, TR};
    static const int32_t no_self[] = {TR};
    static const int32_t bad_eval[] = {3, 9, 5};
    static const zgrt_group bad_to_vc[] = {{TR, 0, 1, 1, 2}};
    static const zgrt_group to_self[] = {{COMM, 0, 1, 1, 2}};
    static const zgrt_group short_end[] = {{TR, 0, 0, 0, 2}};
    static const zgrt_pair wrong_sub[] = {{1, 0}};
    static const zgrt_pair wrong_var[] = {{V_STATUS, 0}, {V_STATUS, 1}};
    enum { K, E };
    struct {
        int what; /* K: replace the Committer's keep; E: replace edge TestRunner → Committer */
        zgrt_keep keep;
        zgrt_edge edge;
        const char *msg;
    } cases[] = {
        {K,
         {3, 2, 2, NVV, COMM_EVALS, COMM_VC, dup, VARVIEWS},
         {0},
         "lifeline 2: view slot 1 (lifeline 1, index 2): not sorted by (lifeline, index) "
         "without duplicates"},
        {K,
         {3, 2, 1, NVV, COMM_EVALS, COMM_VC, own, VARVIEWS},
         {0},
         "lifeline 2: view slot 0 (lifeline 2, index 2): lifeline out of range"},
        {K,
         {3, 2, 1, NVV, COMM_EVALS, COMM_VC, no_clock, VARVIEWS},
         {0},
         "lifeline 2: view slot 0 (lifeline 0, index 2): no clock entry for its lifeline"},
        {K,
         {3, 2, 1, NVV, COMM_EVALS, COMM_VC, bad_sub, VARVIEWS},
         {0},
         "lifeline 2: view slot 0 (lifeline 1, index 6): index out of range"},
        {K,
         {3, 2, NV, 2, COMM_EVALS, COMM_VC, VIEWS, bad_var},
         {0},
         "lifeline 2: variable-view slot 1 (lifeline 1, index 6): index out of range"},
        {K,
         {3, 2, NV, NVV, COMM_EVALS, unsorted_vc, VIEWS, VARVIEWS},
         {0},
         "lifeline 2: clock entries"},
        {K,
         {3, 1, 0, 0, COMM_EVALS, no_self, NULL, NULL},
         {0},
         "lifeline 2 keeps no clock entry of its own"},
        {K,
         {3, 2, NV, NVV, bad_eval, COMM_VC, VIEWS, VARVIEWS},
         {0},
         "lifeline 2: evaluated subformulas"},
        {K,
         {-1, 2, NV, NVV, COMM_EVALS, COMM_VC, VIEWS, VARVIEWS},
         {0},
         "lifeline 2: evaluated subformulas"},
        {E,
         {0},
         {TR, COMM, 1, 1, 2, 0, bad_to_vc, OWN_VIEWS, OWN_VARVIEWS},
         "edge 1 -> 2: group 0 (lifeline 1)"},
        {E,
         {0},
         {TR, COMM, 1, 1, 2, 0, to_self, OWN_VIEWS, OWN_VARVIEWS},
         "edge 1 -> 2: group 0 (lifeline 2)"},
        {E,
         {0},
         {TR, COMM, 1, 1, 2, 0, short_end, OWN_VIEWS, OWN_VARVIEWS},
         "edge 1 -> 2: group 0 (lifeline 1)"},
        {E, {0}, {TR, COMM, 1, 1, 2, 0, G_TR, wrong_sub, OWN_VARVIEWS}, "edge 1 -> 2: view 0"},
        {E,
         {0},
         {TR, COMM, 1, 1, 2, 0, G_TR, OWN_VIEWS, wrong_var},
         "edge 1 -> 2: variable view 0"},
        {E, {0}, {TR, COMM, 1, 1, 2, 0, G_TR, FWD_VIEWS, OWN_VARVIEWS}, "edge 1 -> 2: view 0"},
        {E,
         {0},
         {TR, COMM, 0, 1, 0, 0, NULL, OWN_VIEWS, NULL},
         "edge 1 -> 2: entries without a group"},
        {E, {0}, {TR, COMM, -1, 0, 0, 0, NULL, NULL, NULL}, "edge 2: counts"},
        {E, {0}, {COMM, COMM, 0, 0, 0, 0, NULL, NULL, NULL}, "edge 2: lifelines 2 -> 2"},
        {E,
         {0},
         {ORCH, TR, 0, 0, 0, 0, NULL, NULL, NULL},
         "edge 2: not sorted by (from, to) without duplicates"},
    };
    malformed_runs = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        zgrt_program p = prog_merge;
        zgrt_keep keeps[4];
        zgrt_edge edges[5];
        memcpy(keeps, KEEPS, sizeof keeps);
        memcpy(edges, EDGES, sizeof edges);
        if (cases[i].what == K)
            keeps[COMM] = cases[i].keep;
        else
            edges[2] = cases[i].edge;
        p.bodies = bodies;
        p.keeps = keeps;
        p.edges = edges;
        run_out r = run_prog(&p, (const char *const[]){"--arg", "candidate=c1", NULL});
        cr_expect_eq(r.status, 1, "case %zu", i);
        char want[512];
        snprintf(want, sizeof want,
                 "prog: error: internal error: malformed program descriptor: %s\n", cases[i].msg);
        cr_expect_str_eq(r.err, want, "case %zu", i);
        cr_expect_str_eq(r.out, "");
        run_out_free(&r);
    }
    /* a monitor needs its keep tables; edges need them too */
    zgrt_program p = prog_merge;
    p.bodies = bodies;
    p.keeps = NULL;
    run_out r = run_prog(&p, (const char *const[]){"--arg", "candidate=c1", NULL});
    cr_expect_str_eq(r.err, "prog: error: internal error: malformed program descriptor: 5 edges\n");
    run_out_free(&r);
    p.nedges = 0;
    r = run_prog(&p, (const char *const[]){"--arg", "candidate=c1", NULL});
    cr_expect_str_eq(
        r.err, "prog: error: internal error: malformed program descriptor: a monitor without keep "
               "tables\n");
    run_out_free(&r);
    /* rejected before any lifeline ran */
    cr_expect_eq(malformed_runs, 0);
    /* the same tables well-formed: the run goes ahead */
    p = prog_merge;
    p.bodies = bodies;
    p.nresults = 0;
    r = run_prog(&p, (const char *const[]){"--arg", "candidate=c1", NULL});
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_eq(malformed_runs, 4);
    run_out_free(&r);
}
