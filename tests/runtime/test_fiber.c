/* test_fiber.c — fibers (runtime/fiber.c): the context switch alone, the
 * scheduler (park and wake across workers, the blocking hand-off, seeded
 * orders, 20,000 fibers suspended at once, an idle worker polling
 * instead of sleeping, a woken fiber taken over from a busy worker), and a run with 20,000 parallel branches waiting
 * at once (fibers, the default scheduler). */
#include <criterion/criterion.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fiber.h"
#include "helpers.h"

/* ---- the switch alone ------------------------------------------------------- */

static zfb_context main_ctx, co_ctx;
static volatile long co_count;
static char co_text[64];

static void co_entry(void *arg)
{
    double f = *(double *)arg; /* a float kept across switches */
    for (;;) {
        co_count++;
        f += 1.0;
        /* printf's formatting uses aligned SSE stores: a misaligned stack
         * crashes here */
        snprintf(co_text, sizeof co_text, "%.2f", f);
        zfb_context_switch(&co_ctx, &main_ctx);
    }
}

Test(fiber, switch_round_trips_keep_registers_and_alignment)
{
    zfb_stack st;
    cr_assert_eq(zfb_stack_alloc(&st, ZFB_STACK_SIZE), 0);
    double start = 0.75;
    cr_assert_eq(zfb_context_make(&co_ctx, &st, co_entry, &start), 0);
    long mine = 12345;
    double keep = 3.25;
    for (int i = 0; i < 1000; i++) {
        zfb_context_switch(&main_ctx, &co_ctx);
        mine += i;
        keep += 1.0;
    }
    cr_assert_eq(co_count, 1000);
    cr_assert_eq(mine, 12345 + 999 * 1000 / 2);
    cr_assert_float_eq(keep, 1003.25, 1e-9);
    cr_assert_str_eq(co_text, "1000.75");
    zfb_context_free(&co_ctx);
    zfb_stack_free(&st);
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GUARD_TEST_DISABLED 1 /* the sanitizers' own SIGSEGV handlers report it */
#else
#define GUARD_TEST_DISABLED 0
#endif

Test(fiber, stack_has_a_guard_page, .signal = SIGSEGV, .disabled = GUARD_TEST_DISABLED)
{
    zfb_stack st;
    cr_assert_eq(zfb_stack_alloc(&st, 64 * 1024), 0);
    ((volatile char *)st.lo)[-1] = 1; /* the page below the stack */
}

/* ---- the scheduler ------------------------------------------------------ */

typedef struct pp {
    zfb_fiber *f[2];
    int turn; /* atomic: whose turn */
    long n, rounds;
    int ready; /* atomic: both fibers known */
    /* wakes happen under mu, and a side takes mu before it ends: a fiber
     * is never woken after it has ended */
    pthread_mutex_t mu;
} pp;

static void pp_pass(pp *p, int me)
{
    pthread_mutex_lock(&p->mu);
    __atomic_store_n(&p->turn, 1 - me, __ATOMIC_RELEASE);
    zfb_wake(p->f[1 - me]);
    pthread_mutex_unlock(&p->mu);
}

static void pp_side(pp *p, int me)
{
    p->f[me] = zfb_self();
    __atomic_add_fetch(&p->ready, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&p->ready, __ATOMIC_SEQ_CST) < 2) zfb_yield();
    for (;;) {
        while (__atomic_load_n(&p->turn, __ATOMIC_ACQUIRE) != me) zfb_park();
        if (p->n >= p->rounds) {
            if (p->n == p->rounds) {
                p->n++; /* the other side ends too */
                pp_pass(p, me);
            }
            pthread_mutex_lock(&p->mu);
            pthread_mutex_unlock(&p->mu);
            return;
        }
        p->n++;
        pp_pass(p, me);
    }
}

static void pp0(void *a) { pp_side(a, 0); }
static void pp1(void *a) { pp_side(a, 1); }

static void ping_pong(int workers, uint64_t seed)
{
    char err[128] = "";
    zfb_sched *s = zfb_sched_new(workers, seed, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    pp p = {.rounds = 200000, .mu = PTHREAD_MUTEX_INITIALIZER};
    cr_assert_eq(zfb_spawn(s, pp0, NULL, &p), 0);
    cr_assert_eq(zfb_spawn(s, pp1, NULL, &p), 0);
    zfb_sched_free(s);
    cr_assert_eq(p.n, 200001);
}

Test(fiber, park_and_wake_on_one_worker) { ping_pong(1, 0); }
Test(fiber, park_and_wake_across_workers) { ping_pong(3, 0); }
Test(fiber, park_and_wake_seeded) { ping_pong(2, 7); }

/* 20,000 fibers parked at once, woken from another thread. */
#define NMANY 20000
static int parked_now, parked_max, many_go;
static zfb_fiber *many[NMANY];
static pthread_mutex_t many_mu = PTHREAD_MUTEX_INITIALIZER;

static void many_fiber(void *arg)
{
    long k = (long)arg;
    pthread_mutex_lock(&many_mu);
    many[k] = zfb_self();
    if (++parked_now > parked_max) parked_max = parked_now;
    pthread_mutex_unlock(&many_mu);
    while (!__atomic_load_n(&many_go, __ATOMIC_ACQUIRE)) zfb_park();
    pthread_mutex_lock(&many_mu);
    parked_now--;
    pthread_mutex_unlock(&many_mu);
}

Test(fiber, twenty_thousand_suspended_at_once)
{
    char err[128] = "";
    zfb_sched *s = zfb_sched_new(2, 0, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    for (long k = 0; k < NMANY; k++) cr_assert_eq(zfb_spawn(s, many_fiber, NULL, (void *)k), 0);
    for (;;) {
        pthread_mutex_lock(&many_mu);
        int n = parked_now;
        pthread_mutex_unlock(&many_mu);
        if (n == NMANY) break;
        usleep(1000);
    }
    __atomic_store_n(&many_go, 1, __ATOMIC_RELEASE);
    for (long k = 0; k < NMANY; k++) zfb_wake(many[k]);
    zfb_stats st;
    zfb_sched_stats(s, &st);
    zfb_sched_free(s);
    cr_assert_eq(parked_max, NMANY);
    cr_assert_eq(st.max_live, NMANY);
    cr_assert_geq(st.max_stacks, NMANY);
}

/* The blocking hand-off: on ONE worker, a fiber that blocks for 300 ms
 * does not hold up another one. */
static double mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double blocked_until, other_done;

static void blocker(void *arg)
{
    (void)arg;
    int tok = zfb_block_begin();
    usleep(300000);
    zfb_block_end(tok);
    blocked_until = mono();
}

static void other(void *arg)
{
    (void)arg;
    for (int i = 0; i < 10; i++) zfb_yield();
    other_done = mono();
}

Test(fiber, blocking_call_hands_the_worker_off)
{
    char err[128] = "";
    zfb_sched *s = zfb_sched_new(1, 0, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    double t0 = mono();
    cr_assert_eq(zfb_spawn(s, blocker, NULL, NULL), 0);
    cr_assert_eq(zfb_spawn(s, other, NULL, NULL), 0);
    zfb_sched_free(s);
    cr_assert_geq(blocked_until - t0, 0.29);
    cr_assert_lt(other_done, blocked_until - 0.1, "the other fiber waited for the blocking one");
}

/* A seed changes the order in which runnable fibers run (on one worker). */
static char order[64];
static int norder;

static void logger(void *arg)
{
    for (int r = 0; r < 2; r++) {
        order[__atomic_fetch_add(&norder, 1, __ATOMIC_SEQ_CST)] = (char)(long)arg;
        zfb_yield();
    }
}

/* The loggers are started from a fiber, so that all eight are queued
 * before the one worker runs the first (started from this thread, the
 * worker may run 'a' before 'b' is queued). */
static int starter_failed;

static void starter(void *arg)
{
    for (long k = 0; k < 8; k++)
        if (zfb_spawn(arg, logger, NULL, (void *)('a' + k)) != 0) starter_failed = 1;
}

static void run_order(uint64_t seed, char *out)
{
    char err[128] = "";
    memset(order, 0, sizeof order);
    norder = 0;
    starter_failed = 0;
    zfb_sched *s = zfb_sched_new(1, seed, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    cr_assert_eq(zfb_spawn(s, starter, NULL, s), 0);
    zfb_sched_free(s);
    cr_assert_eq(starter_failed, 0);
    memcpy(out, order, 17);
}

Test(fiber, seeds_give_other_orders)
{
    char a[17], b[17];
    run_order(0, a);
    run_order(0, b);
    cr_assert_str_eq(a, b, "no seed: first in, first out");
    cr_assert_str_eq(a, "abcdefghabcdefgh");
    int distinct = 0;
    char seen[8][17];
    for (uint64_t seed = 1; seed <= 8; seed++) {
        char o[17];
        run_order(seed, o);
        cr_assert_eq(strlen(o), 16);
        int dup = 0;
        for (int k = 0; k < distinct; k++) dup |= !strcmp(seen[k], o);
        if (!dup) memcpy(seen[distinct++], o, 17);
    }
    cr_assert_geq(distinct, 4, "only %d orders from 8 seeds", distinct);
}

/* ---- a run with 20,000 parallel branches waiting at once ------------------ */

#define NWIDE 20000
static const char *wide_chans[NWIDE + 1];
static const zgrt_var WIDE_V[] = {{"x", {ZGRT_INT, -1}, 1, {.tag = ZGRT_INT, .u.i = 1}},
                                  {"n", {ZGRT_INT, -1}, 1, {.tag = ZGRT_INT, .u.i = 0}}};
static const zgrt_result WIDE_RES[] = {{1, 0}};
static const char *const WIDE_L[] = {"A", "B"};
static int wide_a_next, wide_b_next, wide_waiting, wide_max, wide_got;
static zgrt_body_fn wide_a_br[NWIDE], wide_b_br[NWIDE];

/* Branch k of A receives on channel k; the k-th branch of B to run sends
 * on channel k (so each channel has one sender and one receiver). */
static void wide_a_branch(zgrt_ctx *ctx)
{
    int32_t k = __atomic_add_fetch(&wide_a_next, 1, __ATOMIC_SEQ_CST);
    int w = __atomic_add_fetch(&wide_waiting, 1, __ATOMIC_SEQ_CST);
    int m = __atomic_load_n(&wide_max, __ATOMIC_SEQ_CST);
    while (w > m &&
           !__atomic_compare_exchange_n(&wide_max, &m, w, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {}
    int32_t b[] = {0};
    zgrt_recv(ctx, 1, k, 1, b, NULL, 1);
    __atomic_sub_fetch(&wide_waiting, 1, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&wide_got, 1, __ATOMIC_SEQ_CST);
}

static void wide_b_branch(zgrt_ctx *ctx)
{
    int32_t k = __atomic_add_fetch(&wide_b_next, 1, __ATOMIC_SEQ_CST);
    zgrt_send(ctx, 0, k, 1, &zgrt_store(ctx)[0], 1);
}

static void wide_a(zgrt_ctx *ctx)
{
    zgrt_par(ctx, NWIDE, wide_a_br, 1);
    zgrt_value v = v_int(__atomic_load_n(&wide_got, __ATOMIC_SEQ_CST));
    int32_t w[] = {1};
    zgrt_assign(ctx, NULL, 1, w, &v, 1);
}

static void wide_b(zgrt_ctx *ctx) { zgrt_par(ctx, NWIDE, wide_b_br, 1); }
static const zgrt_body_fn WIDE_B[] = {wide_a, wide_b};
static const char *const WIDE_TAGS[] = {"par#1"};
static const zgrt_loc WIDE_LOCS[] = {{1, 1, NULL}, {2, 5, NULL}};

static run_out run_wide(const char *workers)
{
    static char names[NWIDE + 1][24];
    for (int k = 0; k <= NWIDE; k++) {
        snprintf(names[k], sizeof names[k], k ? "main/par1.%d" : "main", k);
        wide_chans[k] = names[k];
    }
    for (int k = 0; k < NWIDE; k++) {
        wide_a_br[k] = wide_a_branch;
        wide_b_br[k] = wide_b_branch;
    }
    static zgrt_program p;
    memset(&p, 0, sizeof p);
    p.abi_version = ZGRT_ABI_VERSION;
    p.source = "wide.zg";
    p.workflow = "wide";
    p.chans = wide_chans;
    p.nchans = NWIDE + 1;
    p.tags = WIDE_TAGS;
    p.ntags = 1;
    p.locs = WIDE_LOCS;
    p.nlocs = 2;
    p.nlifelines = 2;
    p.lifelines = WIDE_L;
    p.bodies = WIDE_B;
    p.nvars = 2;
    p.vars = WIDE_V;
    p.nresults = 1;
    p.results = WIDE_RES;
    return run_prog(&p, (const char *const[]){"--workers", workers, NULL});
}

/* On one worker the branches run in order: all of A's are waiting in
 * their receive before the first of B's sends. */
Test(fiber, twenty_thousand_branches_wait_at_once, .timeout = 60)
{
    run_out r = run_wide("1");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert_str_eq(r.out, "20000\n", "stderr: %s", r.err);
    cr_assert_eq(wide_max, NWIDE);
    run_out_free(&r);
}

Test(fiber, twenty_thousand_branches_on_two_workers, .timeout = 60)
{
    run_out r = run_wide("2");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert_str_eq(r.out, "20000\n", "stderr: %s", r.err);
    run_out_free(&r);
}

/* ---- polling instead of sleeping (zfb_set_poll) ----------------------------- */

/* A stand-in transport: a pipe that a feeder thread writes one byte to per
 * message; the idle worker's poll reads it and wakes the waiting fiber on
 * its own thread. */
#define NPOLL_MSGS 2000
static struct {
    int pipe[2];
    int got, waiting;    /* atomic: messages read; the fiber waits */
    zfb_fiber *receiver; /* atomic */
    pthread_t deliverer; /* the thread of the last delivery */
    int same_thread;     /* wakes that ran the fiber on the delivering thread */
    int late_ran;        /* atomic */
    int on_fiber;        /* atomic: messages read on a fiber (zfb_poll_here) */
    int here;            /* zfb_poll_here returned 1 */
    int woken;           /* atomic: the last wake is due */
    double wake_at, woke_at;
    int alone, not_alone; /* atomic: polls on a fiber told it is alone, or not */
    int worker_alone;     /* atomic: polls on a worker told it is alone (never) */
    zfb_fiber *companion; /* atomic: a fiber that lives while the receiver polls */
    int companion_go;     /* atomic: it may end */
} pl;

static void pl_poll(void *user, int wake_fd, int alone)
{
    (void)user;
    if (!zfb_self())
        __atomic_add_fetch(&pl.worker_alone, alone, __ATOMIC_SEQ_CST);
    else
        __atomic_add_fetch(alone ? &pl.alone : &pl.not_alone, 1, __ATOMIC_SEQ_CST);
    /* (the test's poll watches wake_fd even when alone: a fiber is
     * started from outside while it polls) */
    struct pollfd pf[2] = {{pl.pipe[0], POLLIN, 0}, {wake_fd, POLLIN, 0}};
    if (poll(pf, 2, -1) <= 0 || !(pf[0].revents & POLLIN)) return;
    char b;
    if (read(pl.pipe[0], &b, 1) != 1) return;
    pl.deliverer = pthread_self();
    if (zfb_self()) __atomic_add_fetch(&pl.on_fiber, 1, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&pl.got, 1, __ATOMIC_SEQ_CST);
    zfb_wake(__atomic_load_n(&pl.receiver, __ATOMIC_ACQUIRE));
}

static void pl_receiver(void *arg)
{
    (void)arg;
    __atomic_store_n(&pl.receiver, zfb_self(), __ATOMIC_RELEASE);
    for (int k = 1; k <= NPOLL_MSGS; k++) {
        __atomic_store_n(&pl.waiting, k, __ATOMIC_SEQ_CST);
        while (__atomic_load_n(&pl.got, __ATOMIC_SEQ_CST) < k) zfb_park();
        if (pthread_equal(pl.deliverer, pthread_self())) pl.same_thread++;
    }
}

static void *pl_feeder(void *arg)
{
    (void)arg;
    for (int k = 1; k <= NPOLL_MSGS; k++) {
        while (__atomic_load_n(&pl.waiting, __ATOMIC_SEQ_CST) < k) sched_yield();
        char b = 1;
        if (write(pl.pipe[1], &b, 1) != 1) abort();
    }
    return NULL;
}

static void pl_late(void *arg)
{
    (void)arg;
    __atomic_store_n(&pl.late_ran, 1, __ATOMIC_SEQ_CST);
}

/* Every message is read by the idle worker, which runs its receiver next
 * on the same thread (no hand-off to another thread); a fiber started
 * from outside while the worker polls runs (the scheduler's wake_fd ends
 * the poll). */
static void pl_companion(void *arg)
{
    (void)arg;
    __atomic_store_n(&pl.companion, zfb_self(), __ATOMIC_RELEASE);
    while (!__atomic_load_n(&pl.companion_go, __ATOMIC_SEQ_CST)) zfb_park();
}

/* A scheduler polling pl's pipe, whose receiver has had every message
 * (and pl_companion alive beside it, if companion). */
static zfb_sched *pl_start_with(int workers, uint64_t seed, zfb_fn receiver, int companion)
{
    memset(&pl, 0, sizeof pl);
    cr_assert_eq(pipe(pl.pipe), 0);
    char err[128] = "";
    zfb_sched *s = zfb_sched_new(workers, seed, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    cr_assert_eq(zfb_set_poll(s, pl_poll, NULL, NULL, err, sizeof err), 0, "%s", err);
    if (companion) {
        cr_assert_eq(zfb_spawn(s, pl_companion, NULL, NULL), 0);
        while (!__atomic_load_n(&pl.companion, __ATOMIC_ACQUIRE)) usleep(1000);
    }
    pthread_t feeder;
    cr_assert_eq(pthread_create(&feeder, NULL, pl_feeder, NULL), 0);
    cr_assert_eq(zfb_spawn(s, receiver, NULL, NULL), 0);
    pthread_join(feeder, NULL);
    return s;
}

/* Lets pl_companion end (if it was started), frees s, closes pl's pipe. */
static void pl_finish(zfb_sched *s, int companion)
{
    if (companion) {
        __atomic_store_n(&pl.companion_go, 1, __ATOMIC_SEQ_CST);
        zfb_wake(__atomic_load_n(&pl.companion, __ATOMIC_ACQUIRE));
    }
    zfb_sched_free(s);
    close(pl.pipe[0]);
    close(pl.pipe[1]);
}

static zfb_sched *pl_start(int workers, uint64_t seed, zfb_fn receiver)
{
    return pl_start_with(workers, seed, receiver, 0);
}

static void poll_run(int workers)
{
    zfb_sched *s = pl_start(workers, 0, pl_receiver);
    /* the worker now polls a pipe that stays empty */
    while (__atomic_load_n(&pl.got, __ATOMIC_SEQ_CST) < NPOLL_MSGS) usleep(1000);
    usleep(50000);
    cr_assert_eq(zfb_spawn(s, pl_late, NULL, NULL), 0);
    double t0 = mono();
    while (!__atomic_load_n(&pl.late_ran, __ATOMIC_SEQ_CST) && mono() - t0 < 10) usleep(1000);
    cr_assert(pl.late_ran, "a fiber started while the worker polled did not run");
    zfb_stats st;
    zfb_sched_stats(s, &st);
    zfb_sched_free(s);
    close(pl.pipe[0]);
    close(pl.pipe[1]);
    cr_assert_eq(pl.got, NPOLL_MSGS);
    cr_assert_geq(st.polls, (uint64_t)NPOLL_MSGS);
    /* (a worker asleep when its poll ended may take one over, rarely) */
    cr_assert_geq(pl.same_thread, NPOLL_MSGS * 9 / 10, "%d of %d on the delivering thread",
                  pl.same_thread, NPOLL_MSGS);
}

/* (one worker: only wake_fd can end its poll for the late fiber) */
Test(fiber, an_idle_worker_polls_one_worker, .timeout = 60) { poll_run(1); }
Test(fiber, an_idle_worker_polls_two_workers, .timeout = 60) { poll_run(2); }

/* A fiber about to wait polls itself (zfb_poll_here), on its own stack,
 * when nothing else is runnable: the messages are read on the fiber; a
 * wake from another thread ends such a poll, and so does a fiber started
 * from outside, which then runs while the poller keeps its worker.  With
 * a seed it polls itself in a seeded half of its waits and parks in the
 * others (both ways are explored).  Its poll is told when it is the
 * only live fiber (alone), and not while another one lives. */
static void pl_polling_receiver(void *arg)
{
    (void)arg;
    __atomic_store_n(&pl.receiver, zfb_self(), __ATOMIC_RELEASE);
    for (int k = 1; k <= NPOLL_MSGS; k++) {
        __atomic_store_n(&pl.waiting, k, __ATOMIC_SEQ_CST);
        while (__atomic_load_n(&pl.got, __ATOMIC_SEQ_CST) < k)
            if (zfb_poll_here())
                pl.here++;
            else
                zfb_park();
    }
    /* nothing more comes: only a wake from another thread ends this */
    __atomic_store_n(&pl.waiting, NPOLL_MSGS + 1, __ATOMIC_SEQ_CST);
    while (!__atomic_load_n(&pl.woken, __ATOMIC_SEQ_CST))
        if (!zfb_poll_here()) zfb_park();
    pl.woke_at = mono();
}

static void poll_here_run(uint64_t seed, int companion)
{
    zfb_sched *s = pl_start_with(2, seed, pl_polling_receiver, companion);
    while (__atomic_load_n(&pl.waiting, __ATOMIC_SEQ_CST) <= NPOLL_MSGS) usleep(1000);
    usleep(50000);
    /* a fiber started from outside runs while the receiver polls */
    cr_assert_eq(zfb_spawn(s, pl_late, NULL, NULL), 0);
    double t0 = mono();
    while (!__atomic_load_n(&pl.late_ran, __ATOMIC_SEQ_CST) && mono() - t0 < 10) usleep(1000);
    cr_assert(pl.late_ran, "a fiber started while a fiber polled did not run");
    usleep(50000);
    int alone = __atomic_load_n(&pl.alone, __ATOMIC_SEQ_CST);
    pl.wake_at = mono();
    __atomic_store_n(&pl.woken, 1, __ATOMIC_SEQ_CST);
    zfb_wake(__atomic_load_n(&pl.receiver, __ATOMIC_ACQUIRE));
    pl_finish(s, companion);
    cr_assert_eq(pl.got, NPOLL_MSGS);
    cr_assert_lt(pl.woke_at - pl.wake_at, 1.0, "the wake ended the fiber's poll after %.3f s",
                 pl.woke_at - pl.wake_at);
    cr_assert_eq(pl.worker_alone, 0, "a worker's poll was told it was alone");
    if (companion) {
        cr_assert_eq(alone, 0, "%d polls told alone while another fiber lived", alone);
        cr_assert_geq(pl.not_alone, pl.on_fiber, "%d of %d polls on the fiber told not alone",
                      pl.not_alone, pl.on_fiber);
    } else /* (all but those while the late fiber lived) */
        cr_assert_geq(alone, pl.on_fiber - 2, "%d of %d polls on the fiber told alone", alone,
                      pl.on_fiber);
    if (seed) {
        cr_assert(pl.on_fiber > NPOLL_MSGS / 4 && pl.on_fiber < NPOLL_MSGS * 3 / 4,
                  "with a seed, %d of %d messages read on the fiber", pl.on_fiber, NPOLL_MSGS);
    } else {
        /* (a worker that is just ending its own poll may read one) */
        cr_assert_geq(pl.on_fiber, NPOLL_MSGS * 9 / 10, "%d of %d messages read on the fiber",
                      pl.on_fiber, NPOLL_MSGS);
    }
}

Test(fiber, a_waiting_fiber_polls_itself, .timeout = 60) { poll_here_run(0, 0); }
Test(fiber, a_waiting_fiber_polls_itself_half_the_time_with_a_seed, .timeout = 60)
{
    poll_here_run(7, 0);
}
Test(fiber, a_polling_fiber_with_company_is_not_alone, .timeout = 60) { poll_here_run(0, 1); }

/* zfb_poll_alone polls (1) only for the scheduler's only live fiber:
 * with another fiber alive it does nothing and returns 0 (the caller
 * then waits as any fiber does). */
static int pa_result;
static void pa_fiber(void *arg)
{
    int companion = *(const int *)arg;
    __atomic_store_n(&pl.receiver, zfb_self(), __ATOMIC_RELEASE);
    char b = 1;
    /* alone, the poll finds a byte at once; beside a companion nothing is
     * written (a poll would wait, and the test time out) */
    if (!companion && write(pl.pipe[1], &b, 1) != 1) abort();
    pa_result = zfb_poll_alone();
    /* (an idle worker's poll after this fiber's end wakes nobody) */
    __atomic_store_n(&pl.receiver, NULL, __ATOMIC_RELEASE);
    __atomic_store_n(&pl.late_ran, 1, __ATOMIC_SEQ_CST);
}

static void poll_alone_run(int companion)
{
    memset(&pl, 0, sizeof pl);
    pa_result = -1;
    cr_assert_eq(pipe(pl.pipe), 0);
    char err[128] = "";
    zfb_sched *s = zfb_sched_new(1, 0, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    cr_assert_eq(zfb_set_poll(s, pl_poll, NULL, NULL, err, sizeof err), 0, "%s", err);
    if (companion) {
        cr_assert_eq(zfb_spawn(s, pl_companion, NULL, NULL), 0);
        while (!__atomic_load_n(&pl.companion, __ATOMIC_ACQUIRE)) usleep(1000);
    }
    cr_assert_eq(zfb_spawn(s, pa_fiber, NULL, &companion), 0);
    double t0 = mono();
    while (!__atomic_load_n(&pl.late_ran, __ATOMIC_SEQ_CST) && mono() - t0 < 10) usleep(1000);
    pl_finish(s, companion);
    if (companion) {
        cr_assert_eq(pa_result, 0, "zfb_poll_alone polled beside another fiber");
        cr_assert_eq(pl.alone + pl.not_alone, 0, "a fiber's poll ran beside another fiber");
    } else {
        cr_assert_eq(pa_result, 1, "zfb_poll_alone did not poll for the only fiber");
        cr_assert_eq(pl.alone, 1, "%d polls told alone", pl.alone);
        cr_assert_eq(pl.got, 1);
    }
}

Test(fiber, poll_alone_polls_for_the_only_fiber, .timeout = 30) { poll_alone_run(0); }
Test(fiber, poll_alone_leaves_a_fiber_with_company, .timeout = 30) { poll_alone_run(1); }

/* Fibers announced with zfb_expect count as alive before they are
 * spawned: the first one's blocking call, made before the second exists,
 * hands the only worker over, and the second runs during the call. */
static double ex_block_end, ex_second_ran;

static void ex_blocker(void *arg)
{
    (void)arg;
    int token = zfb_block_begin();
    usleep(300000);
    ex_block_end = mono();
    zfb_block_end(token);
}

static void ex_second(void *arg)
{
    (void)arg;
    ex_second_ran = mono();
}

Test(fiber, expected_fibers_let_a_blocking_call_hand_over, .timeout = 30)
{
    char err[128] = "";
    zfb_sched *s = zfb_sched_new(1, 0, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    ex_block_end = ex_second_ran = 0;
    zfb_expect(s, 2);
    cr_assert_eq(zfb_spawn(s, ex_blocker, NULL, NULL), 0);
    usleep(50000); /* the first one is in its call */
    cr_assert_eq(zfb_spawn(s, ex_second, NULL, NULL), 0);
    zfb_sched_free(s);
    cr_assert_gt(ex_second_ran, 0.0);
    cr_assert_lt(ex_second_ran, ex_block_end,
                 "the second fiber waited for the first one's blocking call");
}

/* An expectation taken back (a fiber that was not spawned after all)
 * lets the scheduler end. */
Test(fiber, an_expectation_taken_back, .timeout = 30)
{
    char err[128] = "";
    zfb_sched *s = zfb_sched_new(1, 0, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    zfb_expect(s, 3);
    cr_assert_eq(zfb_spawn(s, ex_second, NULL, NULL), 0);
    zfb_expect(s, -2);
    zfb_sched_free(s); /* returns: nothing is alive */
}

/* A fiber woken into the slot of a worker whose fiber keeps running (no
 * park, no yield) is taken over by the idle worker: the wake signals
 * nobody, the idle worker looks at the slots while another is busy. */
static zfb_fiber *slot_b;
static int slot_go;
static double slot_b_ran;
static int slot_b_done;

static void slot_waiter(void *arg)
{
    (void)arg;
    __atomic_store_n(&slot_b, zfb_self(), __ATOMIC_SEQ_CST);
    while (!__atomic_load_n(&slot_go, __ATOMIC_SEQ_CST)) zfb_park();
    slot_b_ran = mono();
    __atomic_store_n(&slot_b_done, 1, __ATOMIC_SEQ_CST);
}

static double slot_woken_at, slot_busy_until;

static void slot_waker(void *arg)
{
    (void)arg;
    zfb_fiber *b;
    while (!(b = __atomic_load_n(&slot_b, __ATOMIC_SEQ_CST))) zfb_yield();
    for (int i = 0; i < 100; i++) zfb_yield(); /* b parks meanwhile */
    /* busy 20 ms first: the other worker, with nothing to run, sleeps */
    for (double t0 = mono(); mono() - t0 < 0.02;) {}
    slot_woken_at = mono();
    __atomic_store_n(&slot_go, 1, __ATOMIC_SEQ_CST);
    zfb_wake(b);
    /* busy, without giving the worker back, for up to 2 s */
    while (!__atomic_load_n(&slot_b_done, __ATOMIC_SEQ_CST) && mono() - slot_woken_at < 2.0) {}
    slot_busy_until = mono();
}

Test(fiber, a_woken_fiber_is_taken_over_from_a_busy_worker, .timeout = 30)
{
    char err[128] = "";
    zfb_sched *s = zfb_sched_new(2, 0, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    cr_assert_eq(zfb_spawn(s, slot_waiter, NULL, NULL), 0);
    cr_assert_eq(zfb_spawn(s, slot_waker, NULL, NULL), 0);
    zfb_sched_free(s);
    cr_assert_gt(slot_b_ran, 0.0);
    cr_assert_lt(slot_b_ran - slot_woken_at, 1.0,
                 "the woken fiber waited %.3f s for its busy waker's worker",
                 slot_b_ran - slot_woken_at);
    cr_assert_lt(slot_b_ran, slot_busy_until + 1e-9, "it ran while its waker was busy");
}
