/* core.c — running a workflow: the run and the event functions that the
 * generated code calls (zgrt_abi.h).
 *
 * A run (struct zri_run) holds one `life` per lifeline: its store, its
 * monitor (vector clock and CPL views: monitor.c), message counters, value
 * heap and inbox.  Generated code runs each lifeline's body on its own
 * thread with a context (zgrt_ctx) naming the run and the lifeline;
 * parallel regions add threads with child contexts of the same lifeline.
 * zgrt_main (main.c) makes the run, wires it and runs it (zri_run_exec).
 *
 * What the core does not know: the trace, the sockets, the actions and the
 * run store.  It reaches them through the interfaces of rt.h, given by
 * zgrt_main: an observer (zri_observer: the trace), a transport
 * (zri_transport: net/), an action runner (zri_action_fn: agent/) and, in
 * a durable run, a journal and human tasks (zri_journal, zri_task_fn:
 * durable/).
 *
 * Durable runs.  Each thread knows its journal key (its path and the
 * number of its events, rt.h: zri_journal); the core records an entry
 * where the program depends on something it cannot recompute (zgrt_act,
 * zgrt_wait_any, the turns of do_event inside parallel regions, take in
 * per-lifeline mode) and a decision at every choice, and while a thread's
 * cursor has entries it takes them instead of running the action or
 * picking by arrival, and waits for its turn; a replay that differs from
 * the journal fails the run.  Output commit: before a frame leaves
 * (send_remote, net_flush) and before an action the outside sees
 * (action_visible), the journal commits what could not be made again.
 *
 * Modes
 *   in-process      every body is present (or there is one lifeline): one
 *                   thread per lifeline, messages go straight into the
 *                   receiver's inbox;
 *   per-lifeline    exactly one body is present: the other lifelines are
 *                   processes reached through the transport (--listen,
 *                   --peer), which hands their messages to zri_run_deliver;
 *                   the result is the {"<index>": value} object of this
 *                   lifeline's components.
 *
 * Events (Algorithm 1 of the CPL paper, monitor.c), each under the
 * lifeline's mutex while a parallel region of the lifeline runs, so that
 * its branches are serialised (a lifeline with one thread takes no lock):
 *   on a receive, merge the message's metadata; then vc[self] += 1 (when
 *   the lifeline keeps a clock); apply the store effect; with CPL guards,
 *   evaluate the lifeline's subformulas; a send then carries its values
 *   and the metadata of the plan's edge (sender, receiver): the clock
 *   entries and slots the receiver keeps and the sender has (zgrt_abi.h,
 *   zgrt_edge).  A traced run (an observer is attached) keeps the full
 *   vector clock on every lifeline and sends it on every message instead
 *   of the edge's clock entries; otherwise a program without CPL guards
 *   sends no metadata at all, in one process or between processes.
 *
 * Channels: one lock-free FIFO queue per (sender, receiver, channel
 * namespace) in the receiver's inbox (see struct queue); sends never
 * block; a receive that finds its queue empty watches it for up to
 * SPIN_NS (pausing, or yielding the processor when threads outnumber
 * processors), then sleeps on the inbox's condition variable until the
 * head of its queue exists; a sender takes the inbox's lock and wakes it
 * only when a receiver sleeps there.  Messages carry their number on the
 * channel (checked on receipt) and their arrival order at the receiver (a
 * coregion takes the earliest head).
 *
 * Errors and cancellation (the convention of rt.h): the first error is
 * recorded (later ones are dropped), the run's cancel flag is set and
 * every inbox is woken.  Each thread calls the generated code from a
 * trampoline that did setjmp; a runtime function that finds the run
 * cancelled (on entry or after waking) longjmps back to it, so generated
 * code never continues after an error and never sees a made-up value.
 * Locks are never held across a longjmp.  zgrt_main then prints the one
 * error message and returns 1.  If some thread does not come back within
 * CANCEL_GRACE_S seconds of the cancellation (a foreign C function that
 * never returns), the process prints the error and exits with status 1 at
 * once.
 *
 * Deadlocks (in-process mode only): the run counts its running threads
 * (`active`) and the threads blocked in a receive (`blocked`).  A thread
 * that blocks or ends takes `active` down; a sender that wakes a blocked
 * receiver brings it back up on the receiver's behalf (a receiver that
 * finds its message without that, having woken by itself, brings it up
 * before it lets go of its inbox's lock: wait_heads); a parallel region
 * hands its count to its branches and gets it back from the last one.
 * When `active` reaches 0 with a thread still blocked, no message can ever
 * arrive: the run fails with "deadlock: …" instead of hanging.  Projected
 * programs cannot deadlock; this guards against broken generated code.
 *
 * Global state: none in this file; everything belongs to the run that
 * zgrt_main creates (the runtime's per-process state is listed in rt.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "fiber.h"
#include "rt.h"
#include "suggest.h"

#define CANCEL_GRACE_S 5.0
/* A receive that finds nothing watches its queues for up to SPIN_NS before
 * sleeping on the condition variable: a reply is often microseconds away,
 * and a sleep/wake pair costs more than that.  Each thread adapts its own
 * budget: after a wait that lasted longer than SPIN_LONG_NS it halves,
 * down to SPIN_MIN_NS, and after a shorter one it is SPIN_NS again; every
 * SPIN_PROBE-th wait spins the full budget.  So threads that wait long
 * (for a model, a human) stop burning a processor that others need.
 * (Measured on the project machine: shrinking the budget already after
 * waits of a few tens of microseconds, as between processes, made those
 * runs slower, not faster.) */
#define SPIN_NS 20000L
#define SPIN_MIN_NS 500L
#define SPIN_LONG_NS 1000000L
#define SPIN_PROBE 64

static inline void spin_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* ---- data ---------------------------------------------------------------- */

/* A channel (sender, receiver, namespace): a single-producer
 * single-consumer linked queue.  At any time one thread sends on a channel
 * (the sender's thread for that namespace, or the transport's thread) and
 * one thread receives from it, so the queue needs no lock: the producer
 * links a message with a release store into the `next` of the last one,
 * and the consumer reads `head->next` with an acquire load.  `head` is the
 * last message taken (first the stub): it stays in the queue, because the
 * producer may still write its `next`, and is released when the following
 * message is taken.  Released blocks go back to the channel's sender in
 * batches, for its next messages on the channel: steady traffic allocates
 * nothing.  head and tail start NULL, meaning the stub (so that
 * the run does not touch the memory of channels it never uses). */
struct waiter;

typedef struct queue {
    /* consumer's line */
    struct waiter *waiter; /* the receive waiting on this queue (under the inbox's mu) */
    zri_msg *head;         /* the last message taken, NULL: &stub */
    int64_t last_seq;      /* seq of the last message taken */
    int64_t jseq;          /* journaled run, per-lifeline mode: seq of the last message
                         the journal holds (taken ones are recorded past it) */
    int64_t got_seq;       /* journaled run, per-lifeline mode: seq of the last message
                         put in the queue (the transport's thread; copies of
                         earlier ones are dropped) */
    zri_msg *cfree;        /* released blocks not yet handed back … */
    int32_t ncfree;
    /* producer's line */
    _Alignas(64) zri_msg *tail; /* the last message linked, NULL: &stub */
    zri_msg *pfree;             /* blocks to reuse */
    /* … handed back to the producer in batches (atomic) */
    _Alignas(64) zri_msg *returned;
    zri_msg stub;
} queue;

/* Released blocks go back to the producer RECYCLE_BATCH at a time (one
 * exchange of cache lines per batch, not per message); a consumer keeps
 * at most RECYCLE_KEEP of them while the producer has not taken the last
 * batch. */
#define RECYCLE_BATCH 8
#define RECYCLE_KEEP 64

/* A thread sleeping in a receive or zgrt_wait_any (lives on its stack). */
typedef struct waiter {
    struct waiter *next, **pprev; /* the inbox's list */
    int32_t chan, n;
    const int32_t *peers;
    int64_t done_mask;
    int counted;      /* counted as blocked (deadlock accounting) */
    int woken;        /* a sender counted this thread active again */
    zfb_fiber *fiber; /* the fiber to wake (fibers), or NULL: the condition variable */
} waiter;

/* Sleeping and waking.  A receiver that finds its queue empty (after
 * spinning) takes `mu`, registers in `waiters`, raises `nwait`, checks
 * its queues again and only then waits on `cv`; a sender links the
 * message, then reads `nwait` and takes `mu` to wake only when someone may
 * sleep.  Both writes and both reads are sequentially consistent atomics,
 * so either the receiver sees the message or the sender sees the sleeper:
 * a hand-off to a receiver that is awake costs no lock and no system
 * call. */
typedef struct inbox {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    queue *q;        /* [from * nchans + chan] */
    waiter *waiters; /* under mu */
    int nwait;       /* atomic: registered waiters */
    int lone;        /* atomic: the process's only fiber waits unregistered (wait_heads) */
    _Alignas(64) uint64_t arrivals; /* atomic: messages delivered */
} inbox;

struct zri_run;

typedef struct life {
    struct zri_run *run;
    int32_t index;
    pthread_mutex_t mu; /* serialises this lifeline's events … */
    int pars;           /* … while parallel regions run (atomic): with
                              one thread the lock is skipped */
    zgrt_value *store;  /* nvars */
    zri_monitor mon;    /* vector clock and CPL views (monitor.c) */
    int64_t *sent;      /* [to * nchans + chan]: messages sent */
    /* ZGRT_MONITOR_STATS only, [to]: messages sent and the least and most
     * metadata bytes one of them carried (under the lifeline's lock) */
    uint64_t *meta_count;
    size_t *meta_min, *meta_max;
    uint64_t action_calls;
    int64_t nevents; /* events so far (under mu while parallel regions run) */
    /* journaled runs: replay of the order of events in parallel regions */
    pthread_cond_t turn_cv; /* with mu */
    int turn_live;          /* the journal has no more turns: events record theirs */
    zri_heap *heap;
    inbox in;
} life;

typedef struct zri_run {
    const zgrt_program *prog;
    const zri_options *opts;
    int32_t nl;
    life *lives;
    int32_t self;      /* per-lifeline mode: the local lifeline; else -1 */
    int monitor;       /* prog->monitor: lifelines evaluate subformulas */
    zri_plan plan;     /* the monitor plan of the run (full clocks when traced) */
    const char *stats; /* ZGRT_MONITOR_STATS: where to append the sizes */
    zri_observer obs;  /* the trace, or no functions */
    zri_transport net; /* per-lifeline mode: the other processes */
    /* atomic: net is set (zri_run_connect).  The transport's own thread
     * may deliver (deliver_local) before it is: it reads net only after
     * seeing this */
    int net_set;
    zri_action_fn run_action;
    zri_stores stores; /* stores.impl NULL: none wired (a program without stores) */
    /* a durable run (runtime/durable): its journal and human tasks */
    zri_journal jr; /* jr.impl NULL: not journaled */
    char run_id[80];
    zri_task_fn task;
    void *task_user;
    int humans; /* atomic: threads waiting for a human task */
    /* ZGRT_KILL_AT_EVENT=N (testing): the process kills itself with
     * SIGKILL at its N-th event, counted over its lifelines */
    int64_t kill_at, nevents_all;
    int waiting; /* stopped: nothing but human tasks could go on */
    int lost;    /* the error is a lost peer process */
    volatile int cancel;
    pthread_mutex_t err_mu;
    char *error;       /* the first error: "lifeline L: file:l:c: cause" */
    int64_t error_ns;  /* when it occurred (CLOCK_MONOTONIC) */
    int32_t error_loc; /* where in the source (a locs index), or -1 */
    int *ended;        /* per-lifeline mode, [l] (atomic): lifeline l ended (its BYE came) */
    /* deadlock detection (in-process mode) */
    int deadlock_check;
    int accounting;      /* active and blocked are counted: deadlock_check or
                            --exit-when-waiting */
    int active, blocked; /* atomics */
    int ncpu;            /* receivers spin only while active <= ncpu */
    zfb_sched *fibers;   /* the fibers' scheduler, or NULL: a thread per body and branch */
    /* completion: body threads still running, woken on errors too */
    pthread_mutex_t done_mu;
    pthread_cond_t done_cv;
    int running;
} run;

struct zgrt_ctx {
    zri_monitor *mon; /* first: see zri_ctx_monitor (rt.h) */
    run *run;
    life *life;
    int in_event;   /* an eval function is running … */
    int locked;     /* … and this thread holds life->mu */
    void *hold[3];  /* … and owns these blocks (a message, results): freed on unwinding */
    uint64_t rng;   /* --schedule: this thread's perturbation generator (0: off) */
    long spin_ns;   /* this thread's spinning budget (0: SPIN_NS) */
    uint32_t waits; /* waits that spun (for SPIN_PROBE) */
    int any;        /* the next receive is a coregion's (zgrt_wait_any chose it) */
    /* the journal's key of this thread (rt.h: zri_journal) */
    const char *path; /* "" for a lifeline's body */
    int64_t tpos;     /* events this thread made (a body's count takes in its regions') */
    void *jcur;       /* replay: the thread's entries; NULL: live */
    /* the store operation this thread runs (zgrt_op_begin … commit) */
    void *op;                     /* the store's handle, or NULL */
    int32_t op_store;             /* its store */
    int32_t op_attempt;           /* its attempt, from 1 */
    char op_id[128];              /* the operation's position (its events' "op") */
    int32_t op_retry;             /* 1 + the store whose commit was just refused, or 0 */
    zgrt_value *op_cells;         /* the cells' written values (ZGRT_UNDEF: none) */
    int32_t op_ntools;            /* `write tools`: how many, or -1 */
    int32_t *op_tools;            /* … and which (action indices) */
    struct op_effect *op_effects; /* tool calls still running (below L3) */
    jmp_buf jb;
};

_Static_assert(offsetof(struct zgrt_ctx, mon) == 0,
               "zri_ctx_monitor reads a context's first member");

/* ---- small helpers ------------------------------------------------------ */

static int cancelled(run *R) { return __atomic_load_n(&R->cancel, __ATOMIC_ACQUIRE); }

static void unwind(zgrt_ctx *ctx)
#if defined(__GNUC__)
    __attribute__((noreturn))
#endif
    ;
static void unwind(zgrt_ctx *ctx)
{
    /* a trap inside an eval function (a builtin in a guard's atom) comes
     * here with the lifeline's lock held */
    if (ctx->in_event) {
        ctx->in_event = 0;
        if (ctx->locked) pthread_mutex_unlock(&ctx->life->mu);
        ctx->locked = 0;
        for (int i = 0; i < 3; i++) {
            free(ctx->hold[i]);
            ctx->hold[i] = NULL;
        }
    }
    longjmp(ctx->jb, 1);
}

/* Entry of every runtime function: a cancelled run unwinds at once. */
static void enter(zgrt_ctx *ctx)
{
    if (cancelled(ctx->run)) unwind(ctx);
}

/* ---- --schedule SEED: perturbed scheduling -------------------------------
 * Testing aid: every thread of a lifeline (body or parallel branch) draws
 * from its own generator, seeded from the schedule seed, the lifeline and
 * the branch, and before each event and each receive it randomly goes on,
 * yields, spins for up to ~40 µs or sleeps for up to ~400 µs.  How often a
 * lifeline is delayed also depends on the seed (some lifelines are slow in
 * one schedule and fast in the next), so messages arrive in different
 * orders at coregions and receivers, branches interleave differently, and
 * different message sequence charts of one workflow occur.  Only timing
 * changes: channels stay FIFO and no event is added, dropped or reordered
 * within a thread.  Works the same in per-lifeline processes. */
static uint64_t sched_mix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t sched_next(zgrt_ctx *ctx)
{
    ctx->rng = sched_mix(ctx->rng);
    return ctx->rng ? ctx->rng : 1;
}

/* Seeds a thread's generator (no-op without --schedule). */
static void sched_seed(zgrt_ctx *ctx, uint64_t base, uint64_t salt)
{
    if (!ctx->run->opts->schedule) return;
    ctx->rng = sched_mix(base ^ sched_mix(salt + 0x632BE59BD9B4E019ull));
    if (!ctx->rng) ctx->rng = 1;
}

static void perturb(zgrt_ctx *ctx)
{
    if (!ctx->rng) return;
    run *R = ctx->run;
    /* the lifeline's slowness in this schedule: 0 (rarely delayed) .. 3 */
    int slow =
        (int)(sched_mix(R->opts->schedule * 0x9E3779B97F4A7C15ull + (uint64_t)ctx->life->index) &
              3);
    uint64_t r = sched_next(ctx);
    int roll = (int)(r % 16);
    if (roll < 7 - 2 * slow) return;
    if (R->fibers) {
        /* fibers: let others run first, once or a few times, or sleep
         * (which holds this fiber's worker) */
        if (roll < 14)
            for (int k = 0; k <= (int)((r >> 8) % 3); k++) zfb_yield();
        else {
            struct timespec d = {0, (long)((r >> 8) % 200000)};
            nanosleep(&d, NULL);
        }
        return;
    }
    if (roll < 10 - slow) {
        sched_yield();
    } else if (roll < 14) {
        struct timespec t0, t;
        long ns = (long)((r >> 8) % 40000);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do {
            spin_pause();
            clock_gettime(CLOCK_MONOTONIC, &t);
        } while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < ns);
    } else {
        struct timespec d = {0, (long)((r >> 8) % 400000)};
        nanosleep(&d, NULL);
    }
}

static const char *lname(run *R, int32_t l) { return R->prog->lifelines[l]; }
static const char *cname(run *R, int32_t c) { return R->prog->chans[c]; }

static void loc_text(const zgrt_program *p, int32_t loc, char *out, size_t n)
{
    out[0] = '\0';
    if (loc >= 0 && loc < p->nlocs && p->locs)
        snprintf(out, n, "%s:%d:%d: ",
                 p->locs[loc].file ? p->locs[loc].file
                 : p->source       ? p->source
                                   : "?",
                 (int)p->locs[loc].line, (int)p->locs[loc].col);
}

static void wake_all(run *R);

/* Records the run's first error and cancels the run.  lifeline/loc < 0:
 * not given. */
static void run_verror(run *R, int32_t lifeline, int32_t loc, const char *fmt, va_list ap)
{
    zri_buf b = {0};
    char where[512];
    if (lifeline >= 0) zri_buf_printf(&b, "lifeline %s: ", lname(R, lifeline));
    loc_text(R->prog, loc, where, sizeof where);
    zri_buf_puts(&b, where);
    char cause[2048];
    vsnprintf(cause, sizeof cause, fmt, ap);
    zri_buf_puts(&b, cause);
    pthread_mutex_lock(&R->err_mu);
    if (!R->error) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        R->error_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
        R->error_loc = loc >= 0 && loc < R->prog->nlocs ? loc : -1;
        R->error = zri_buf_take(&b);
    }
    pthread_mutex_unlock(&R->err_mu);
    zri_buf_free(&b);
    __atomic_store_n(&R->cancel, 1, __ATOMIC_RELEASE);
    wake_all(R);
}

static void run_error(run *R, int32_t lifeline, int32_t loc, const char *fmt, ...) ZRI_PRINTF(4, 5);
static void run_error(run *R, int32_t lifeline, int32_t loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    run_verror(R, lifeline, loc, fmt, ap);
    va_end(ap);
}

/* Fails the run from a lifeline thread; does not return. */
static void ctx_fail(zgrt_ctx *ctx, int32_t loc, const char *fmt, ...) ZRI_PRINTF(3, 4)
#if defined(__GNUC__)
    __attribute__((noreturn))
#endif
    ;
static void ctx_fail(zgrt_ctx *ctx, int32_t loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    run_verror(ctx->run, ctx->life->index, loc, fmt, ap);
    va_end(ap);
    unwind(ctx);
}

/* Wakes every receive waiting in in. */
static void inbox_wake(inbox *in)
{
    pthread_mutex_lock(&in->mu);
    for (waiter *w = in->waiters; w; w = w->next)
        if (w->fiber) zfb_wake(w->fiber);
    pthread_cond_broadcast(&in->cv);
    pthread_mutex_unlock(&in->mu);
}

static void wake_all(run *R)
{
    for (int32_t l = 0; l < R->nl; l++) inbox_wake(&R->lives[l].in);
    pthread_mutex_lock(&R->done_mu);
    pthread_cond_broadcast(&R->done_cv);
    pthread_mutex_unlock(&R->done_mu);
}

/* A value for messages: JSON text, cut to a readable length. */
static void value_text(run *R, const zgrt_value *v, char *out, size_t n)
{
    zri_buf b = {0};
    zri_buf_json_value(&b, R->prog, v);
    if (b.len > 200) {
        b.len = 197;
        zri_buf_puts(&b, "...");
    }
    snprintf(out, n, "%s", b.data);
    zri_buf_free(&b);
}

/* ---- deadlock accounting ------------------------------------------------ */

static void describe_waits(run *R, zri_buf *b)
{
    int first = 1;
    for (int32_t l = 0; l < R->nl; l++) {
        inbox *in = &R->lives[l].in;
        pthread_mutex_lock(&in->mu);
        for (waiter *w = in->waiters; w; w = w->next) {
            zri_buf_puts(b, first ? "" : "; ");
            first = 0;
            zri_buf_printf(b, "%s waits for a message from ", lname(R, l));
            int k2 = 0;
            for (int32_t k = 0; k < w->n; k++) {
                if ((w->done_mask >> k) & 1) continue;
                zri_buf_printf(b, "%s%s", k2++ ? " or " : "", lname(R, w->peers[k]));
            }
            zri_buf_printf(b, " on %s", cname(R, w->chan));
        }
        pthread_mutex_unlock(&in->mu);
    }
}

static void report_deadlock(run *R)
{
    zri_buf b = {0};
    describe_waits(R, &b);
    run_error(R, -1, -1, "deadlock: no lifeline can go on (%s)", b.data ? b.data : "");
    zri_buf_free(&b);
}

/* --exit-when-waiting: nothing but human tasks can go on, so the run
 * stops without an error (zri_run_waiting); the tasks stay pending. */
static void stop_waiting(run *R)
{
    R->waiting = 1;
    __atomic_store_n(&R->cancel, 1, __ATOMIC_RELEASE);
    wake_all(R);
}

/* No thread is running (active reached 0): the run waits for humans (and
 * stops when --exit-when-waiting says so), or, in one process, when a
 * thread waits for a message, it is deadlocked.  Returns 1 when the
 * caller, about to wait, must not (the run stops). */
static int all_idle(run *R, int caller_blocks)
{
    if (cancelled(R)) return 0;
    if (__atomic_load_n(&R->humans, __ATOMIC_SEQ_CST) > 0) {
        if (!R->opts->exit_when_waiting) return 0;
        if (!caller_blocks) stop_waiting(R);
        return 1;
    }
    if (!R->deadlock_check ||
        (!caller_blocks && __atomic_load_n(&R->blocked, __ATOMIC_SEQ_CST) == 0))
        return 0;
    if (!caller_blocks) report_deadlock(R);
    return 1;
}

/* A thread stops running for good (its body or branch ended). */
static void thread_gone(run *R)
{
    if (!R->accounting) return;
    if (__atomic_sub_fetch(&R->active, 1, __ATOMIC_SEQ_CST) == 0) all_idle(R, 0);
}

/* ---- the journal (durable runs, rt.h: zri_journal) ------------------------- */

static int journaled(const run *R) { return R->jr.impl != NULL; }

static const char *jkind_name(int32_t k)
{
    switch (k) {
    case ZRI_J_ACT: return "an action";
    case ZRI_J_PICK: return "a coregion's pick";
    case ZRI_J_CHOICE: return "a decision";
    case ZRI_J_TURN: return "a turn";
    case ZRI_J_MSG: return "a message";
    case ZRI_J_READ: return "a store read";
    case ZRI_J_COMMIT: return "a store commit";
    default: return "an unknown entry";
    }
}

/* Replay: the thread's next entry in *e (1), or 0 when it has none left:
 * the thread runs live from then on. */
static int replay_next(zgrt_ctx *ctx, int32_t loc, zri_jentry *e)
{
    if (!ctx->jcur) return 0;
    run *R = ctx->run;
    char err[512] = "";
    memset(e, 0, sizeof *e);
    int r = R->jr.next(R->jr.impl, ctx->jcur, ctx->life->heap, e, err, sizeof err);
    if (r < 0) ctx_fail(ctx, loc, "%s", err);
    if (r == 0) ctx->jcur = NULL;
    return r > 0;
}

/* A replay that does not do what the journal says: the program or its
 * inputs are not those of the run (a divergence is an error, never
 * silent). */
static void diverged(zgrt_ctx *ctx, int32_t loc, const char *fmt, ...) ZRI_PRINTF(3, 4)
#if defined(__GNUC__)
    __attribute__((noreturn))
#endif
    ;
static void diverged(zgrt_ctx *ctx, int32_t loc, const char *fmt, ...)
{
    char what[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    ctx_fail(ctx, loc, "the resumed run diverged from its journal at event %s%" PRId64 ": %s",
             ctx->path, ctx->tpos + 1, what);
}

/* The replayed entry must be of this kind, at this position. */
static void replay_expect(zgrt_ctx *ctx, int32_t loc, const zri_jentry *e, int32_t kind)
{
    if (e->kind == kind && e->pos == ctx->tpos + 1) return;
    diverged(ctx, loc, "the program makes %s, the journal has %s at event %s%" PRId64,
             jkind_name(kind), jkind_name(e->kind), ctx->path, e->pos);
}

static void journal_record(zgrt_ctx *ctx, zri_jentry *e)
{
    run *R = ctx->run;
    R->jr.record(R->jr.impl, ctx->life->index, ctx->path, e);
}

/* Output commit: before anything outside the run sees what this lifeline
 * did (a frame to another process, an effect, a model call, a human's
 * question), the journal's entries are committed. */
static void output_commit(zgrt_ctx *ctx, int32_t loc)
{
    run *R = ctx->run;
    if (!journaled(R)) return;
    char err[512] = "";
    int tok = zfb_block_begin(); /* a commit may wait for the disk */
    int rc = R->jr.commit(R->jr.impl, err, sizeof err);
    zfb_block_end(tok);
    if (rc != 0) ctx_fail(ctx, loc, "%s", err);
}

/* Inside a parallel region, with the lifeline's lock: replay makes the
 * lifeline's events in the order of the journal's turns (the branches'
 * interleaving decides vector clocks, views and event numbers); once the
 * turns run out, each event records its own.  The condition variable is
 * waited on with a timeout, so that a cancelled run is noticed without
 * taking this lock from wake_all (which may run under it). */
static void turn_wait(zgrt_ctx *ctx)
{
    run *R = ctx->run;
    life *L = ctx->life;
    while (!L->turn_live) {
        /* the next event of the lifeline: others make theirs meanwhile */
        int64_t idx = L->nevents + 1;
        const char *want = NULL;
        int r = R->jr.turn(R->jr.impl, L->index, idx, &want);
        if (r == 0) {
            L->turn_live = 1;
            break;
        }
        if (r < 0)
            ctx_fail(ctx, -1,
                     "the resumed run diverged from its journal: event %" PRId64
                     " of lifeline %s, in a parallel region, has no recorded turn",
                     idx, lname(R, L->index));
        if (strcmp(want, ctx->path) == 0) return;
        if (cancelled(R)) unwind(ctx);
        if (R->fibers) {
            /* the branch whose turn it is may run on this worker: let it */
            pthread_mutex_unlock(&L->mu);
            zfb_yield();
            if (++ctx->waits % 16 == 0) {
                struct timespec d = {0, 200000};
                nanosleep(&d, NULL);
            }
            pthread_mutex_lock(&L->mu);
            continue;
        }
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += 10000000L;
        if (t.tv_nsec >= 1000000000L) t.tv_sec++, t.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&L->turn_cv, &L->mu, &t);
    }
    zri_jentry e = {.kind = ZRI_J_TURN, .pos = L->nevents + 1, .path = ctx->path};
    journal_record(ctx, &e);
}

/* ---- messages ----------------------------------------------------------- */

/* Bytes of a message block with room for cap values and the metadata of
 * shape (zri_msg_meta): the values, then the varviews, the clock and the
 * views; the offsets of the last three. */
static size_t msg_layout(const zri_msg *shape, int32_t cap, size_t *vc_off, size_t *vv_off,
                         size_t *v_off)
{
    size_t sz = sizeof(zri_msg) + (size_t)cap * sizeof(zgrt_value);
    *vv_off = sz;
    sz += (size_t)shape->nvarviews * sizeof(zgrt_value);
    *vc_off = sz;
    sz += (size_t)shape->nvc * sizeof(int64_t);
    *v_off = sz;
    return sz + (size_t)shape->nviews;
}

size_t zri_msg_block_size(const zgrt_program *p, int32_t from, int32_t to, int32_t cap, int full)
{
    zri_msg shape;
    size_t vc_off, vv_off, v_off;
    zri_msg_meta(p, from, to, full, &shape.has_meta, &shape.nvc, &shape.nviews, &shape.nvarviews);
    return msg_layout(&shape, cap, &vc_off, &vv_off, &v_off);
}

/* A message with nvals values from `from` to `to` on chan: a block the
 * channel's receiver handed back when there is one big enough, else a new
 * one (only the channel's sender calls this).  Every
 * field is reset except the metadata arrays, which the send overwrites
 * whole.  Free with msg_release or free(). */
static zri_msg *msg_alloc(run *R, int32_t from, int32_t to, int32_t chan, int32_t nvals)
{
    queue *q = &R->lives[to].in.q[(size_t)from * (size_t)R->prog->nchans + (size_t)chan];
    if (!q->pfree && __atomic_load_n(&q->returned, __ATOMIC_RELAXED))
        q->pfree = __atomic_exchange_n(&q->returned, NULL, __ATOMIC_ACQUIRE);
    zri_msg *m = q->pfree;
    if (m) q->pfree = m->next;
    size_t vc_off, vv_off, v_off;
    /* the metadata of the plan's edge from → to (precomputed per run) */
    const zri_msg *shape = &R->plan.shape[(size_t)from * (size_t)R->nl + (size_t)to];
    if (m && m->cap < nvals) {
        free(m);
        m = NULL;
    }
    if (!m) {
        int32_t cap = nvals < 4 ? 4 : nvals;
        m = zri_xmalloc(msg_layout(shape, cap, &vc_off, &vv_off, &v_off));
        m->cap = cap;
    } else {
        msg_layout(shape, m->cap, &vc_off, &vv_off, &v_off);
    }
    unsigned char *mem = (unsigned char *)m;
    int32_t cap = m->cap;
    memset(m, 0, sizeof *m);
    m->reusable = 1;
    m->cap = cap;
    m->from = from;
    m->to = to;
    m->chan = chan;
    m->nvals = nvals;
    m->vals = nvals ? (zgrt_value *)(mem + sizeof(zri_msg)) : NULL;
    if (shape->has_meta) {
        m->has_meta = shape->has_meta;
        m->nvc = shape->nvc;
        m->nviews = shape->nviews;
        m->nvarviews = shape->nvarviews;
        m->vc = (int64_t *)(mem + vc_off);
        m->varviews = (zgrt_value *)(mem + vv_off);
        m->views = mem + v_off;
    }
    return m;
}

/* A message the run is done with (only the channel's receiver calls this,
 * or its sender for a message sent to another process): kept for the
 * channel's sender when it is a reusable block, else freed. */
static void msg_release(run *R, zri_msg *m)
{
    if (!m) return;
    if (!m->reusable || m->to < 0 || m->to >= R->nl || m->from < 0 || m->from >= R->nl) {
        free(m);
        return;
    }
    queue *q = &R->lives[m->to].in.q[(size_t)m->from * (size_t)R->prog->nchans + (size_t)m->chan];
    if (q->ncfree >= RECYCLE_KEEP) {
        free(m);
        return;
    }
    m->next = q->cfree;
    q->cfree = m;
    if (++q->ncfree >= RECYCLE_BATCH && !__atomic_load_n(&q->returned, __ATOMIC_RELAXED)) {
        __atomic_store_n(&q->returned, q->cfree, __ATOMIC_RELEASE);
        q->cfree = NULL;
        q->ncfree = 0;
    }
}

static int waits_for(const waiter *w, int32_t from, int32_t chan)
{
    if (w->chan != chan) return 0;
    for (int32_t k = 0; k < w->n; k++)
        if (!((w->done_mask >> k) & 1) && w->peers[k] == from) return 1;
    return 0;
}

/* Links m at the end of its channel and wakes its receiver if it may be
 * sleeping.  Only the channel's producer thread calls this. */
static void deliver_local(run *R, zri_msg *m)
{
    inbox *in = &R->lives[m->to].in;
    queue *q = &in->q[(size_t)m->from * (size_t)R->prog->nchans + (size_t)m->chan];
    m->next = NULL;
    m->arrival = __atomic_add_fetch(&in->arrivals, 1, __ATOMIC_RELAXED);
    __atomic_store_n(q->tail ? &q->tail->next : &q->stub.next, m, __ATOMIC_SEQ_CST);
    q->tail = m;
    if (__atomic_load_n(&in->nwait, __ATOMIC_SEQ_CST) == 0) {
        /* the lifeline's only fiber may be waiting unregistered
         * (wait_heads): a message that another thread than its own
         * delivered — the transport's, or an idle worker's — ends its
         * wait (the transport's wake; its own poll delivers the others,
         * and it looks at its channels when the poll returns) */
        if (__atomic_load_n(&in->lone, __ATOMIC_SEQ_CST) && !zfb_self() &&
            __atomic_load_n(&R->net_set, __ATOMIC_ACQUIRE) && R->net.wake)
            R->net.wake(R->net.impl);
        return;
    }
    pthread_mutex_lock(&in->mu);
    /* the one receive that may wait for this queue (its consumer) */
    waiter *w = q->waiter;
    if (w && waits_for(w, m->from, m->chan)) {
        if (w->fiber)
            zfb_wake(w->fiber);
        else
            pthread_cond_broadcast(&in->cv);
        if (w->counted && !w->woken) {
            w->woken = 1;
            __atomic_add_fetch(&R->active, 1, __ATOMIC_SEQ_CST);
            __atomic_sub_fetch(&R->blocked, 1, __ATOMIC_SEQ_CST);
        }
    }
    pthread_mutex_unlock(&in->mu);
}

/* The next message of a channel, or NULL (consumer only). */
static zri_msg *queue_peek(queue *q)
{
    /* sequentially consistent: see struct inbox (on x86 a plain load) */
    return __atomic_load_n(q->head ? &q->head->next : &q->stub.next, __ATOMIC_SEQ_CST);
}

/* The position k of the peer whose next message arrived first, or -1. */
static int32_t pick_head(run *R, inbox *in, int32_t chan, int32_t n, const int32_t *peers,
                         int64_t done_mask)
{
    int32_t best = -1;
    uint64_t when = 0;
    for (int32_t k = 0; k < n; k++) {
        if ((done_mask >> k) & 1) continue;
        zri_msg *h = queue_peek(&in->q[(size_t)peers[k] * (size_t)R->prog->nchans + (size_t)chan]);
        if (h && (best < 0 || h->arrival < when)) {
            best = k;
            when = h->arrival;
        }
    }
    return best;
}

/* Under in->mu: w joins the inbox's list and the queues it waits on. */
static void link_waiter(run *R, inbox *in, waiter *w)
{
    w->next = in->waiters;
    if (w->next) w->next->pprev = &w->next;
    w->pprev = &in->waiters;
    in->waiters = w;
    for (int32_t k = 0; k < w->n; k++)
        if (!((w->done_mask >> k) & 1))
            in->q[(size_t)w->peers[k] * (size_t)R->prog->nchans + (size_t)w->chan].waiter = w;
}

static void unlink_waiter(run *R, inbox *in, waiter *w)
{
    *w->pprev = w->next;
    if (w->next) w->next->pprev = w->pprev;
    for (int32_t k = 0; k < w->n; k++) {
        queue *q = &in->q[(size_t)w->peers[k] * (size_t)R->prog->nchans + (size_t)w->chan];
        if (q->waiter == w) q->waiter = NULL;
    }
}

/* More threads are running than there are processors: a waiting thread
 * then yields the processor between looks at its queues from the start
 * (the sender may be waiting for that processor), which is still far
 * cheaper than sleeping and being woken. */
static int crowded(run *R)
{
    if (!R->deadlock_check) return 0;
    return __atomic_load_n(&R->active, __ATOMIC_RELAXED) > R->ncpu;
}

/* Per-lifeline mode: writes the frames sent so far to the other processes
 * (the transport buffers them).  Called before a thread of this lifeline may wait
 * (a receive that finds nothing, an action, a parallel region) and when
 * it ends, so that no frame stays buffered while the threads that could
 * write it are all waiting. */
static void net_flush(zgrt_ctx *ctx, int32_t loc)
{
    run *R = ctx->run;
    if (!R->net.flush) return;
    output_commit(ctx, loc);
    char err[512];
    err[0] = '\0';
    if (R->net.flush(R->net.impl, err, sizeof err) != 0) ctx_fail(ctx, loc, "%s", err);
}

/* Per-lifeline mode: the position k of a peer, not in done_mask, that has
 * ended (its BYE came) and left nothing on the queue (peers[k] → self,
 * chan), or -1.  ended is read before the queue: the transport links a
 * lifeline's last message before it marks the lifeline ended, so an
 * empty queue after that stays empty, and the receive can never be
 * served. */
static int32_t ended_peer(run *R, inbox *in, int32_t chan, int32_t n, const int32_t *peers,
                          int64_t done_mask)
{
    if (!R->ended) return -1;
    for (int32_t k = 0; k < n; k++) {
        if ((done_mask >> k) & 1) continue;
        if (!__atomic_load_n(&R->ended[peers[k]], __ATOMIC_ACQUIRE)) continue;
        if (!queue_peek(&in->q[(size_t)peers[k] * (size_t)R->prog->nchans + (size_t)chan]))
            return k;
    }
    return -1;
}

/* Blocks until one of the queues (peers[k] → self, chan), k not in
 * done_mask, has a message; returns k.  Unwinds when the run is cancelled;
 * fails (at loc) when a peer it waits for has ended. */
static int32_t wait_heads(zgrt_ctx *ctx, int32_t chan, int32_t n, const int32_t *peers,
                          int64_t done_mask, int32_t loc)
{
    run *R = ctx->run;
    inbox *in = &ctx->life->in;
    int32_t k;
    struct timespec t0, t;
    perturb(ctx);
    if ((k = pick_head(R, in, chan, n, peers, done_mask)) >= 0) return k;
    net_flush(ctx, -1);
    /* a fiber parks at once: its worker runs the others meanwhile */
    zfb_fiber *fib = R->fibers ? zfb_self() : NULL;

    /* Per-lifeline mode, the process's only live fiber (zfb_poll_alone):
     * no other fiber can wake it, and while it reads the transport itself
     * only its own poll delivers, so it waits without registering and
     * without the inbox's lock.  A message another thread delivers
     * meanwhile (the transport's, while the fiber was on its way to
     * poll) ends its wait through in->lone (deliver_local).  What this
     * path does not wait for — a run cancelled, a peer ended, a fiber that
     * may not poll alone — the registered wait below handles. */
    if (fib && R->self >= 0 && R->net.wake && !R->accounting) {
        __atomic_store_n(&in->lone, 1, __ATOMIC_SEQ_CST);
        while ((k = pick_head(R, in, chan, n, peers, done_mask)) < 0 && !cancelled(R) &&
               ended_peer(R, in, chan, n, peers, done_mask) < 0 && zfb_poll_alone()) {}
        __atomic_store_n(&in->lone, 0, __ATOMIC_RELAXED);
        if (k >= 0) return k;
    }

    /* a message is often a few microseconds away: watch the queues for a
     * short while before sleeping */
    long budget = ctx->spin_ns && ++ctx->waits % SPIN_PROBE ? ctx->spin_ns : SPIN_NS;
    if (!fib) clock_gettime(CLOCK_MONOTONIC, &t0); /* (a fiber does not spin) */
    for (int i = 1, yield = crowded(R); !fib; i++) {
        if ((k = pick_head(R, in, chan, n, peers, done_mask)) >= 0) {
            ctx->spin_ns = SPIN_NS;
            return k;
        }
        if (cancelled(R)) unwind(ctx);
        if (yield)
            sched_yield();
        else
            spin_pause();
        if (yield || i % 64 == 0) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            long ns = (t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec);
            if (ns > budget) break;
            /* in one process, past half the budget: the sender may be
             * waiting for this processor */
            yield = yield || (R->deadlock_check && ns > budget / 2);
        }
    }

    /* sleep; an observer (the live view) hears what for */
    if (R->obs.wait) {
        char what[512];
        int len = snprintf(what, sizeof what, "a message from ");
        for (int32_t j = 0, first = 1; j < n && len < (int)sizeof what - 80; j++) {
            if (done_mask & ((int64_t)1 << j)) continue;
            len += snprintf(what + len, sizeof what - (size_t)len, "%s%s", first ? "" : " or ",
                            lname(R, peers[j]));
            first = 0;
        }
        snprintf(what + len, sizeof what - (size_t)len, " on %s", cname(R, chan));
        R->obs.wait(R->obs.user, ctx->life->index, what);
    }
    waiter w = {.chan = chan, .n = n, .peers = peers, .done_mask = done_mask, .fiber = fib};
    int deadlock = 0;
    int32_t gone = -1;
    pthread_mutex_lock(&in->mu);
    link_waiter(R, in, &w);
    __atomic_add_fetch(&in->nwait, 1, __ATOMIC_SEQ_CST);
    for (;;) {
        k = pick_head(R, in, chan, n, peers, done_mask);
        if (k >= 0 || cancelled(R)) break;
        if ((gone = ended_peer(R, in, chan, n, peers, done_mask)) >= 0) break;
        if (R->accounting && !w.counted) {
            /* counted only after the check above found nothing: a sender
             * that links a message from now on sees this waiter */
            w.counted = 1;
            w.woken = 0;
            __atomic_add_fetch(&R->blocked, 1, __ATOMIC_SEQ_CST);
            if (__atomic_sub_fetch(&R->active, 1, __ATOMIC_SEQ_CST) == 0 && all_idle(R, 1)) {
                deadlock = 1;
                break;
            }
        }
        if (fib) {
            /* a wake after the unlock is kept: the park then returns.
             * Per-lifeline mode: with nothing else to run, the fiber reads
             * the transport itself instead of parking (zfb_poll_here) */
            pthread_mutex_unlock(&in->mu);
            if (!zfb_poll_here()) zfb_park();
            pthread_mutex_lock(&in->mu);
        } else {
            pthread_cond_wait(&in->cv, &in->mu);
        }
        if (w.woken) w.counted = w.woken = 0; /* a sender counted us active again */
    }
    /* A receive that found its message while still counted blocked (it
     * woke by itself: a wake left from an earlier receive, or a spurious
     * one) counts itself active again before it lets the lock go: until
     * then its sender, still in deliver_local, is running; once it is
     * unlinked the sender no longer counts it and may block in turn, and
     * a thread preempted between the two would leave active at 0 while it
     * runs — a deadlock reported that is none. */
    if (w.counted && !w.woken && !deadlock) {
        w.counted = 0;
        __atomic_add_fetch(&R->active, 1, __ATOMIC_SEQ_CST);
        __atomic_sub_fetch(&R->blocked, 1, __ATOMIC_SEQ_CST);
    }
    if (deadlock) {
        pthread_mutex_unlock(&in->mu);
        /* describes this waiter too */
        if (__atomic_load_n(&R->humans, __ATOMIC_SEQ_CST) > 0)
            stop_waiting(R);
        else
            report_deadlock(R);
        pthread_mutex_lock(&in->mu);
    }
    unlink_waiter(R, in, &w);
    __atomic_sub_fetch(&in->nwait, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&in->mu);
    if (k < 0 && gone >= 0 && !cancelled(R))
        ctx_fail(ctx, loc,
                 "waits for a message from %s on %s, but lifeline %s has ended: it said goodbye "
                 "without sending it",
                 lname(R, peers[gone]), cname(R, chan), lname(R, peers[gone]));
    if (k < 0) unwind(ctx);
    if (fib) return k; /* (a fiber does not spin) */
    /* adapt the budget to how long this wait lasted */
    clock_gettime(CLOCK_MONOTONIC, &t);
    long ns = (t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec);
    budget = ctx->spin_ns ? ctx->spin_ns : SPIN_NS;
    ctx->spin_ns = ns <= SPIN_LONG_NS         ? SPIN_NS
                   : budget / 2 < SPIN_MIN_NS ? SPIN_MIN_NS
                                              : budget / 2;
    return k;
}

/* Takes the next message of (peer → self, chan), waiting for it.  The
 * message stays the queue's head until the next one is taken: read it,
 * never free it. */
static zri_msg *take(zgrt_ctx *ctx, int32_t peer, int32_t chan, int64_t *expect_seq, int32_t loc)
{
    run *R = ctx->run;
    inbox *in = &ctx->life->in;
    wait_heads(ctx, chan, 1, &peer, 0, loc);
    queue *q = &in->q[(size_t)peer * (size_t)R->prog->nchans + (size_t)chan];
    zri_msg *m = queue_peek(q);
    zri_msg *old = q->head;
    q->head = m;
    if (old) msg_release(R, old);
    *expect_seq = ++q->last_seq;
    if (R->self >= 0 && journaled(R) && peer != R->self && q->last_seq > q->jseq) {
        /* per-lifeline mode: a message from another process is an input
         * the journal keeps (the restored ones it has already) */
        zri_jentry e = {.kind = ZRI_J_MSG, .pos = ctx->tpos + 1, .msg = m, .again = 1};
        journal_record(ctx, &e);
        q->jseq = q->last_seq;
    }
    return m;
}

/* ---- events --------------------------------------------------------------- */

/* ZGRT_MONITOR_STATS: the metadata bytes out carries, as the plan counts
 * them (8 per clock entry, 1 per view, 16 per variable view). */
static void count_meta(life *L, const zri_msg *out)
{
    size_t bytes = out->has_meta
                       ? 8 * (size_t)out->nvc + (size_t)out->nviews + 16 * (size_t)out->nvarviews
                       : 0;
    int32_t to = out->to;
    if (!L->meta_count[to] || bytes < L->meta_min[to]) L->meta_min[to] = bytes;
    if (!L->meta_count[to] || bytes > L->meta_max[to]) L->meta_max[to] = bytes;
    L->meta_count[to]++;
}

/* One event of ctx's lifeline (Algorithm 1).  e describes it for the trace
 * and gives the store writes; in: the received message (merged); out: the
 * message to send (filled and, in-process, delivered).  Returns val[root]
 * (root >= 0) or 0.  The caller has checked everything that can fail,
 * except the eval function: if it traps, the blocks in `hold` (the
 * message to send and the caller's malloc'd results, or NULL) are freed.
 * The lifeline's lock is taken only while a parallel region runs. */
static int do_event(zgrt_ctx *ctx, zri_event *e, zri_msg *in, zri_msg *out, void *extra,
                    int32_t root)
{
    run *R = ctx->run;
    life *L = ctx->life;
    const zgrt_program *p = R->prog;
    int32_t self = L->index;
    int result = 0;

    perturb(ctx);
    int locked = __atomic_load_n(&L->pars, __ATOMIC_ACQUIRE) > 0;
    if (locked) {
        pthread_mutex_lock(&L->mu);
        if (journaled(R)) {
            /* a failure frees these blocks and releases the lock */
            ctx->hold[0] = out;
            ctx->hold[1] = extra;
            ctx->in_event = ctx->locked = 1;
            turn_wait(ctx);
            ctx->in_event = ctx->locked = 0;
            ctx->hold[0] = ctx->hold[1] = NULL;
        }
    }
    __atomic_store_n(&L->nevents, L->nevents + 1, __ATOMIC_RELAXED); /* read by the journal */
    ctx->tpos++;
    if (R->kill_at && __atomic_add_fetch(&R->nevents_all, 1, __ATOMIC_RELAXED) == R->kill_at)
        raise(SIGKILL);
    /* Algorithm 1 (monitor.c): merge on a receive, the event's own clock
     * entry (inline here: every event takes this step, with or without a
     * monitor), the store effect, then the evaluation and own slots */
    if (in && in->has_meta) zri_monitor_merge(&L->mon, in);
    if (L->mon.selfpos >= 0) L->mon.vc[L->mon.selfpos]++;
    for (int32_t k = 0; k < e->nwrites; k++)
        if (e->write_vars[k] >= 0) L->store[e->write_vars[k]] = e->write_vals[k];
    if (R->monitor) {
        /* the eval function may trap: unwind then frees these blocks and
         * releases the lock */
        ctx->hold[0] = out;
        ctx->hold[1] = extra;
        ctx->in_event = 1;
        ctx->locked = locked;
        result = zri_monitor_update(&L->mon, ctx, root);
        ctx->in_event = ctx->locked = 0;
        ctx->hold[0] = ctx->hold[1] = ctx->hold[2] = NULL;
    }
    if (e->kind == ZRI_EV_CHOICE && root >= 0) e->value = result;
    if (out) {
        int64_t *cnt = &L->sent[(size_t)out->to * (size_t)p->nchans + (size_t)out->chan];
        out->seq = ++*cnt;
        e->seq = out->seq;
        if (out->has_meta) zri_monitor_stamp(&L->mon, out);
        if (L->meta_count) count_meta(L, out);
    }
    if (R->obs.event) {
        e->lifeline = self;
        e->index = L->mon.vc[self]; /* an observer: full clocks */
        e->vc = L->mon.vc;
        R->obs.event(R->obs.user, e);
    }
    /* in-process: deliver under the lifeline's lock (lock order: lifeline,
     * then inbox), after the send's trace line */
    if (out && (R->self < 0 || out->to == R->self)) deliver_local(R, out);
    if (locked) {
        if (journaled(R)) pthread_cond_broadcast(&L->turn_cv);
        pthread_mutex_unlock(&L->mu);
    }
    return result;
}

static void check_peer(zgrt_ctx *ctx, int32_t peer, int32_t chan, int32_t loc)
{
    const zgrt_program *p = ctx->run->prog;
    if (peer < 0 || peer >= p->nlifelines || chan < 0 || chan >= p->nchans)
        ctx_fail(ctx, loc, "internal error: message with lifeline %d on channel %d", (int)peer,
                 (int)chan);
}

/* Sends m (filled by do_event) to another process; frees it. */
static void send_remote(zgrt_ctx *ctx, zri_msg *m, int32_t loc)
{
    run *R = ctx->run;
    char err[512];
    err[0] = '\0';
    if (journaled(R) && m->seq <= R->jr.taken(R->jr.impl, m->from, m->to, m->chan)) {
        /* the receiver's journal has it: a resumed receiver takes it from there */
        msg_release(R, m);
        return;
    }
    if (journaled(R)) {
        int tok = zfb_block_begin(); /* a commit may wait for the disk */
        int rc = R->jr.commit(R->jr.impl, err, sizeof err);
        zfb_block_end(tok);
        if (rc != 0) {
            free(m);
            ctx_fail(ctx, loc, "%s", err);
        }
    }
    int rc = R->net.send(R->net.impl, m, err, sizeof err);
    int32_t to = m->to;
    msg_release(R, m);
    if (rc != 0) ctx_fail(ctx, loc, "cannot send to %s: %s", lname(R, to), err);
}

static void send_msg(zgrt_ctx *ctx, zri_msg *m, zri_event *e, int32_t loc)
{
    run *R = ctx->run;
    int remote = R->self >= 0 && m->to != R->self;
    do_event(ctx, e, NULL, m, NULL, -1);
    if (remote) send_remote(ctx, m, loc);
}

void zgrt_send(zgrt_ctx *ctx, int32_t peer, int32_t chan, int32_t n, const zgrt_value *vals,
               int32_t loc)
{
    enter(ctx);
    check_peer(ctx, peer, chan, loc);
    if (n < 0) ctx_fail(ctx, loc, "internal error: message of %d values", (int)n);
    zri_msg *m = msg_alloc(ctx->run, ctx->life->index, peer, chan, n);
    m->kind = ZRI_MSG_USER;
    if (n) memcpy(m->vals, vals, (size_t)n * sizeof(zgrt_value));
    zri_event e = {.kind = ZRI_EV_SEND,
                   .peer = peer,
                   .chan = chan,
                   .ctl_tag = -1,
                   .nvals = n,
                   .vals = m->vals,
                   .attempts = 1};
    /* the trace reads the values before the message is delivered */
    send_msg(ctx, m, &e, loc);
}

void zgrt_send_ctl(zgrt_ctx *ctx, int32_t peer, int32_t chan, int32_t tag, int32_t value,
                   int32_t loc)
{
    enter(ctx);
    check_peer(ctx, peer, chan, loc);
    if (tag < 0 || tag >= ctx->run->prog->ntags)
        ctx_fail(ctx, loc, "internal error: control tag %d", (int)tag);
    zri_msg *m = msg_alloc(ctx->run, ctx->life->index, peer, chan, 0);
    m->kind = ZRI_MSG_CTL;
    m->tag = tag;
    m->value = value != 0;
    zgrt_value decision = {.tag = ZGRT_BOOL, .u.i = value != 0};
    zri_event e = {.kind = ZRI_EV_SEND,
                   .peer = peer,
                   .chan = chan,
                   .ctl_tag = tag,
                   .nvals = 1,
                   .vals = &decision,
                   .attempts = 1};
    send_msg(ctx, m, &e, loc);
}

/* "a message of 2 values" / "control message while#1" */
static void msg_shape(run *R, const zri_msg *m, char *out, size_t n)
{
    if (m->kind == ZRI_MSG_CTL) {
        if (m->tag >= 0 && m->tag < R->prog->ntags)
            snprintf(out, n, "control message %s", R->prog->tags[m->tag]);
        else
            snprintf(out, n, "control message #%d", (int)m->tag);
    } else {
        snprintf(out, n, "a message of %d value%s", (int)m->nvals, m->nvals == 1 ? "" : "s");
    }
}

/* Checks the taken message's sequence number; fails if wrong. */
static void check_seq(zgrt_ctx *ctx, zri_msg *m, int64_t expect, int32_t peer, int32_t chan,
                      int32_t loc)
{
    if (m->seq == expect && m->from == peer && m->chan == chan && m->to == ctx->life->index) return;
    run *R = ctx->run;
    int64_t got = m->seq;
    ctx_fail(ctx, loc,
             "malformed message from %s to %s on %s: message number %" PRId64 ", expected %" PRId64,
             lname(R, peer), lname(R, ctx->life->index), cname(R, chan), got, expect);
}

void zgrt_recv(zgrt_ctx *ctx, int32_t peer, int32_t chan, int32_t n, const int32_t *binds,
               const zgrt_value *consts, int32_t loc)
{
    enter(ctx);
    check_peer(ctx, peer, chan, loc);
    run *R = ctx->run;
    const zgrt_program *p = R->prog;
    int32_t self = ctx->life->index;
    int64_t expect;
    zri_msg *m = take(ctx, peer, chan, &expect, loc);
    check_seq(ctx, m, expect, peer, chan, loc);
    if (m->kind != ZRI_MSG_USER || m->nvals != n) {
        char got[160];
        msg_shape(R, m, got, sizeof got);
        ctx_fail(
            ctx, loc,
            "malformed message from %s to %s on %s: %s expects a message of %d value%s, got %s",
            lname(R, peer), lname(R, self), cname(R, chan), lname(R, self), (int)n,
            n == 1 ? "" : "s", got);
    }
    for (int32_t k = 0; k < n; k++) {
        const zgrt_value *v = &m->vals[k];
        if (binds[k] >= 0) {
            if (binds[k] >= p->nvars) {
                ctx_fail(ctx, loc, "internal error: variable %d", (int)binds[k]);
            }
            const zgrt_var *x = &p->vars[binds[k]];
            if (!zri_value_check(p, v, x->type)) {
                char got[256];
                value_text(R, v, got, sizeof got);
                ctx_fail(
                    ctx, loc,
                    "malformed message from %s to %s on %s: value %d is %s, but %s is of type %s",
                    lname(R, peer), lname(R, self), cname(R, chan), (int)k + 1, got, x->name,
                    zri_type_name(p, x->type));
            }
        } else if (!consts || !zri_value_eq(&consts[k], v)) {
            char want[256], got[256];
            if (consts)
                value_text(R, &consts[k], want, sizeof want);
            else
                snprintf(want, sizeof want, "a constant");
            value_text(R, v, got, sizeof got);
            ctx_fail(ctx, loc, "constant binding mismatch: expected %s, got %s", want, got);
        }
    }
    zri_event e = {.kind = ZRI_EV_RECV,
                   .peer = peer,
                   .chan = chan,
                   .ctl_tag = -1,
                   .seq = m->seq,
                   .nvals = n,
                   .vals = m->vals,
                   .attempts = 1,
                   .coregion = ctx->any,
                   .nwrites = n,
                   .write_vars = binds,
                   .write_vals = m->vals};
    ctx->any = 0;
    do_event(ctx, &e, m, NULL, NULL, -1);
}

int32_t zgrt_recv_ctl(zgrt_ctx *ctx, int32_t owner, int32_t chan, int32_t tag, int32_t loc)
{
    enter(ctx);
    check_peer(ctx, owner, chan, loc);
    run *R = ctx->run;
    int32_t self = ctx->life->index;
    int64_t expect;
    zri_msg *m = take(ctx, owner, chan, &expect, loc);
    check_seq(ctx, m, expect, owner, chan, loc);
    if (m->kind != ZRI_MSG_CTL || m->tag != tag || (m->value != 0 && m->value != 1)) {
        char got[160];
        msg_shape(R, m, got, sizeof got);
        if (m->kind == ZRI_MSG_CTL && m->tag == tag)
            snprintf(got, sizeof got, "decision %d", (int)m->value);
        ctx_fail(ctx, loc,
                 "malformed message from %s to %s on %s: %s expects control message %s, got %s",
                 lname(R, owner), lname(R, self), cname(R, chan), lname(R, self),
                 tag >= 0 && tag < R->prog->ntags ? R->prog->tags[tag] : "?", got);
    }
    int32_t value = m->value;
    zgrt_value decision = {.tag = ZGRT_BOOL, .u.i = value};
    zri_event e = {.kind = ZRI_EV_RECV,
                   .peer = owner,
                   .chan = chan,
                   .ctl_tag = tag,
                   .seq = m->seq,
                   .nvals = 1,
                   .vals = &decision,
                   .attempts = 1};
    do_event(ctx, &e, m, NULL, NULL, -1);
    return value;
}

int32_t zgrt_wait_any(zgrt_ctx *ctx, int32_t chan, int32_t n, const int32_t *peers,
                      int64_t done_mask, int32_t loc)
{
    enter(ctx);
    if (n <= 0 || n > 64 || chan < 0 || chan >= ctx->run->prog->nchans)
        ctx_fail(ctx, loc, "internal error: waiting for %d senders", (int)n);
    int64_t all = n == 64 ? -1 : (int64_t)((UINT64_C(1) << n) - 1);
    if ((done_mask & all) == all) ctx_fail(ctx, loc, "internal error: waiting for no sender");
    for (int32_t k = 0; k < n; k++) check_peer(ctx, peers[k], chan, loc);
    zri_jentry je;
    if (replay_next(ctx, loc, &je)) {
        /* the sender the coregion took from in the journaled run */
        replay_expect(ctx, loc, &je, ZRI_J_PICK);
        for (int32_t k = 0; k < n; k++)
            if (!((done_mask >> k) & 1) && peers[k] == je.a) {
                wait_heads(ctx, chan, 1, &peers[k], 0, loc);
                ctx->any = 1;
                return k;
            }
        diverged(ctx, loc,
                 "the journal's coregion took a message from lifeline %d, not awaited here",
                 (int)je.a);
    }
    int32_t k = wait_heads(ctx, chan, n, peers, done_mask, loc);
    ctx->any = 1;
    if (journaled(ctx->run)) {
        /* A coregion's receives bind distinct variables, so the state
         * after it is the same in any order: a re-execution that picks
         * otherwise sends and decides the same, and no output waits for
         * the pick's commit.  Only the CPL monitor sees the order (its
         * past operators read the lifeline's order of events, and its
         * values travel with messages): with a monitor, it does. */
        zri_jentry e = {.kind = ZRI_J_PICK,
                        .pos = ctx->tpos + 1,
                        .a = peers[k],
                        .again = !ctx->run->prog->monitor};
        journal_record(ctx, &e);
    }
    return k;
}

/* A decision: replayed ones must come out as the journal has them. */
static void choice_replay(zgrt_ctx *ctx, int32_t loc, int32_t tag, const zri_jentry *je,
                          int32_t value)
{
    replay_expect(ctx, loc, je, ZRI_J_CHOICE);
    const zgrt_program *p = ctx->run->prog;
    if (je->a != tag || je->b != (value != 0))
        diverged(ctx, loc, "%s decides %s, the journal has %s deciding %s",
                 tag >= 0 && tag < p->ntags ? p->tags[tag] : "?", value ? "true" : "false",
                 je->a >= 0 && je->a < p->ntags ? p->tags[je->a] : "?", je->b ? "true" : "false");
}

static void choice_record(zgrt_ctx *ctx, int32_t tag, int32_t value)
{
    zri_jentry e = {
        .kind = ZRI_J_CHOICE, .pos = ctx->tpos + 1, .a = tag, .b = value != 0, .again = 1};
    journal_record(ctx, &e);
}

void zgrt_choice(zgrt_ctx *ctx, int32_t tag, int32_t value, int32_t loc)
{
    enter(ctx);
    if (tag < 0 || tag >= ctx->run->prog->ntags)
        ctx_fail(ctx, loc, "internal error: construct %d", (int)tag);
    zri_jentry je;
    if (replay_next(ctx, loc, &je))
        choice_replay(ctx, loc, tag, &je, value);
    else if (journaled(ctx->run))
        choice_record(ctx, tag, value);
    zri_event e = {.kind = ZRI_EV_CHOICE, .construct = tag, .value = value != 0, .attempts = 1};
    do_event(ctx, &e, NULL, NULL, NULL, -1);
}

int32_t zgrt_choice_cpl(zgrt_ctx *ctx, int32_t tag, int32_t root, int32_t loc)
{
    enter(ctx);
    const zgrt_program *p = ctx->run->prog;
    if (tag < 0 || tag >= p->ntags) ctx_fail(ctx, loc, "internal error: construct %d", (int)tag);
    int32_t pos = root >= 0 && root < p->nsubs ? zri_monitor_pos(&ctx->life->mon, root) : -1;
    if (!ctx->run->monitor || pos < 0)
        ctx_fail(ctx, loc, "internal error: CPL guard %d without its monitor", (int)root);
    zri_jentry je;
    int replayed = replay_next(ctx, loc, &je);
    if (replayed) replay_expect(ctx, loc, &je, ZRI_J_CHOICE);
    zri_event e = {.kind = ZRI_EV_CHOICE, .construct = tag, .attempts = 1};
    int32_t value = do_event(ctx, &e, NULL, NULL, NULL, pos);
    /* the guard's value is known after the event: compared after it */
    ctx->tpos--;
    if (replayed)
        choice_replay(ctx, loc, tag, &je, value);
    else if (journaled(ctx->run))
        choice_record(ctx, tag, value);
    ctx->tpos++;
    return value;
}

void zgrt_assign(zgrt_ctx *ctx, const char *action, int32_t n, const int32_t *vars,
                 const zgrt_value *vals, int32_t loc)
{
    enter(ctx);
    const zgrt_program *p = ctx->run->prog;
    for (int32_t k = 0; k < n; k++) {
        if (vars[k] < 0) continue;
        if (vars[k] >= p->nvars || !zri_value_check(p, &vals[k], p->vars[vars[k]].type))
            ctx_fail(ctx, loc, "internal error: assignment of a wrong value to variable %d",
                     (int)vars[k]);
    }
    zri_event e = {.kind = ZRI_EV_ACT,
                   .action = action,
                   .attempts = 1,
                   .nwrites = n,
                   .write_vars = vars,
                   .write_vals = vals};
    do_event(ctx, &e, NULL, NULL, NULL, -1);
}

/* Progress notes of actions (retries, …) go to stderr. */
typedef struct note_user {
    zgrt_ctx *ctx;
    const char *action;
    const char *detail[5]; /* system, user, question, answer, subrun (action_detail) */
    int visible;           /* the action did something outside the run sees */
} note_user;

static const char *const detail_keys[5] = {"system", "user", "question", "answer", "subrun"};

/* What the action records for its event (only with an observer), kept in
 * the lifeline's heap like the run's values: nothing to free, even when
 * the run ends in the middle of the event. */
static void action_detail(void *user, const char *key, const char *text)
{
    note_user *u = user;
    for (int k = 0; k < 5; k++)
        if (!strcmp(key, detail_keys[k]))
            u->detail[k] = text ? zri_str(u->ctx->life->heap, text, strlen(text))->data : NULL;
}

/* Output commit before an action does something outside the run sees
 * (rt.h: zri_action_env.visible). */
static int action_visible(void *user, char *err, size_t errlen)
{
    note_user *u = user;
    run *R = u->ctx->run;
    u->visible = 1;
    return R->jr.commit(R->jr.impl, err, errlen);
}

/* A human task (durable runs): the thread waits for a human, which the
 * accounting counts apart from running and blocked threads, so that
 * --exit-when-waiting can tell when nothing but humans can go on. */
static void human_waits(void *u, int on)
{
    run *R = u;
    if (!R->accounting) return;
    if (on) {
        __atomic_add_fetch(&R->humans, 1, __ATOMIC_SEQ_CST);
        if (__atomic_sub_fetch(&R->active, 1, __ATOMIC_SEQ_CST) == 0) all_idle(R, 0);
    } else {
        __atomic_add_fetch(&R->active, 1, __ATOMIC_SEQ_CST);
        __atomic_sub_fetch(&R->humans, 1, __ATOMIC_SEQ_CST);
    }
}

static int action_task(void *user, const zri_task *t, void **answer, char *err, size_t errlen)
{
    note_user *u = user;
    run *R = u->ctx->run;
    return R->task(R->task_user, t, &R->cancel, human_waits, R, answer, err, errlen);
}

static void action_note(void *user, const char *fmt, ...) ZRI_PRINTF(2, 3);
static void action_note(void *user, const char *fmt, ...)
{
    note_user *u = user;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    (void)u->action; /* the notes name their action themselves */
    zri_say("note", "lifeline %s: %s\n", lname(u->ctx->run, u->ctx->life->index), msg);
}

/* Retried llm attempts go to the observer (the trace's "retry" lines; not
 * events). */
static void action_retry(void *user, int attempt, const char *error, double delay)
{
    note_user *u = user;
    run *R = u->ctx->run;
    if (R->obs.retry)
        R->obs.retry(R->obs.user, u->ctx->life->index, u->action, attempt, error, delay);
}

/* ---- store operations ------------------------------------------------------------
 * An atomic block is a loop of attempts (zgrt_abi.h: zgrt_op_begin).  The
 * store itself is behind zri_stores (runtime/store: zsr_).  A tool call of
 * an operation (an effect action called inside the block) is issued to
 * the store and run: from L3 up on the lifeline, one at a time in issue
 * order, so that effects take place in the order they were issued; below
 * L3 an effect without results runs on a thread of its own while the
 * block goes on, and takes place whenever it completes (the operation
 * waits for its effects at the commit).  docs/runtime.md, "Stores". */

typedef struct op_effect {
    struct op_effect *next;
    pthread_t th;
    zgrt_ctx *ctx;
    void *op;
    int32_t action;
    int ticket;
    zgrt_value *args;
    note_user nu;
    zri_action_env env;
    int rc;
    char err[900];
} op_effect;

static const zgrt_store_decl *op_decl(zgrt_ctx *ctx)
{
    return &ctx->run->prog->stores[ctx->op_store];
}

static void *effect_thread(void *arg)
{
    op_effect *x = arg;
    run *R = x->ctx->run;
    zgrt_value outs[1];
    int attempts = 1;
    x->rc = R->run_action
                ? R->run_action(&x->env, x->action, x->args, outs, &attempts, x->err, sizeof x->err)
                : -1;
    if (!R->run_action) snprintf(x->err, sizeof x->err, "this executable cannot run actions");
    if (x->rc == 0 && R->stores.complete(R->stores.impl, x->op, x->ticket, x->err, sizeof x->err))
        x->rc = -1;
    return NULL;
}

/* Waits for the tool calls still running; the first failure's message in
 * err (-1), else 0. */
static int effects_join(zgrt_ctx *ctx, char *err, size_t errlen)
{
    int rc = 0;
    int tok = ctx->op_effects ? zfb_block_begin() : 0;
    while (ctx->op_effects) {
        op_effect *x = ctx->op_effects;
        ctx->op_effects = x->next;
        pthread_join(x->th, NULL);
        if (x->rc != 0 && rc == 0) {
            snprintf(err, errlen, "action %s: %s", ctx->run->prog->actions[x->action].name,
                     x->err[0] ? x->err : "failed");
            rc = -1;
        }
        free((void *)x->env.key);
        free(x->args);
        free(x);
    }
    if (tok) zfb_block_end(tok);
    return rc;
}

static void op_clear(zgrt_ctx *ctx)
{
    ctx->op = NULL;
    free(ctx->op_cells);
    free(ctx->op_tools);
    ctx->op_cells = NULL;
    ctx->op_tools = NULL;
    ctx->op_ntools = -1;
}

/* The thread ends (or unwinds) in the middle of an operation. */
static void op_drop(zgrt_ctx *ctx)
{
    char err[64];
    effects_join(ctx, err, sizeof err);
    if (ctx->op) ctx->run->stores.abandon(ctx->run->stores.impl, ctx->op);
    op_clear(ctx);
}

static void op_need(zgrt_ctx *ctx, int32_t loc)
{
    if (!ctx->op) ctx_fail(ctx, loc, "internal error: a store operation's step outside one");
}

void zgrt_op_begin(zgrt_ctx *ctx, int32_t store, int32_t loc)
{
    enter(ctx);
    run *R = ctx->run;
    const zgrt_program *p = R->prog;
    if (store < 0 || store >= p->nstores)
        ctx_fail(ctx, loc, "internal error: store %d", (int)store);
    if (!R->stores.impl)
        ctx_fail(ctx, loc, "store %s: this run has no stores (a nested run cannot use them)",
                 p->stores[store].name);
    if (ctx->op) ctx_fail(ctx, loc, "internal error: an operation inside an operation");
    ctx->op_attempt = ctx->op_retry == store + 1 ? ctx->op_attempt + 1 : 1;
    ctx->op_retry = 0;
    /* its position on the lifeline, kept by its next attempts: the trace
     * names the operation of every store event with it */
    if (ctx->op_attempt == 1)
        snprintf(ctx->op_id, sizeof ctx->op_id, "%s%" PRId64, ctx->path, ctx->tpos + 1);
    ctx->op_store = store;
    char err[1024];
    int tok = zfb_block_begin();
    void *op = R->stores.begin(R->stores.impl, store, ctx->life->index, err, sizeof err);
    zfb_block_end(tok);
    if (!op) ctx_fail(ctx, loc, "store %s: %s", p->stores[store].name, err);
    ctx->op = op;
    ctx->op_cells = zri_xcalloc((size_t)(p->stores[store].ncells + 1), sizeof(zgrt_value));
    for (int32_t k = 0; k < p->stores[store].ncells; k++) ctx->op_cells[k].tag = ZGRT_UNDEF;
    ctx->op_ntools = -1;
}

void zgrt_op_read(zgrt_ctx *ctx, int32_t cell, int32_t var, int32_t loc)
{
    enter(ctx);
    op_need(ctx, loc);
    run *R = ctx->run;
    const zgrt_program *p = R->prog;
    const zgrt_store_decl *st = op_decl(ctx);
    if (cell < 0 || cell >= st->ncells || var < 0 || var >= p->nvars)
        ctx_fail(ctx, loc, "internal error: read of cell %d into variable %d", (int)cell, (int)var);
    zgrt_value v;
    int64_t by = 0, ver = 0;
    char err[1024];
    zri_jentry je;
    int rc;
    if (replay_next(ctx, loc, &je)) {
        /* what the read saw in the journaled run; the operation still
         * knows it, to validate it if its commit is not journaled */
        replay_expect(ctx, loc, &je, ZRI_J_READ);
        if (je.a != cell || je.nvals != 1)
            diverged(ctx, loc, "the program reads cell %s, the journal has another read",
                     st->cells[cell].name);
        v = je.vals[0];
        by = je.txn;
        ver = je.ver;
        rc = R->stores.replay_read(R->stores.impl, ctx->op, cell, &v, by, ver, err, sizeof err);
    } else {
        int tok = zfb_block_begin();
        rc = R->stores.read(R->stores.impl, ctx->op, cell, ctx->life->heap, &v, &by, &ver, err,
                            sizeof err);
        zfb_block_end(tok);
        if (rc == 0 && journaled(R)) {
            zri_jentry e = {.kind = ZRI_J_READ,
                            .pos = ctx->tpos + 1,
                            .a = cell,
                            .nvals = 1,
                            .vals = &v,
                            .txn = by,
                            .ver = ver};
            journal_record(ctx, &e);
        }
    }
    if (rc != 0)
        ctx_fail(ctx, loc, "store %s: reading %s: %s", st->name, st->cells[cell].name, err);
    if (!zri_value_check(p, &v, p->vars[var].type))
        ctx_fail(ctx, loc, "store %s: cell %s holds a value of another type than variable %s",
                 st->name, st->cells[cell].name, p->vars[var].name);
    zri_event e = {.kind = ZRI_EV_READ,
                   .op_store = ctx->op_store + 1,
                   .op_attempt = ctx->op_attempt,
                   .op_id = ctx->op_id,
                   .op_cell = cell,
                   .op_txn = by,
                   .op_value = &v,
                   .nwrites = 1,
                   .write_vars = &var,
                   .write_vals = &v};
    do_event(ctx, &e, NULL, NULL, NULL, -1);
}

void zgrt_op_write(zgrt_ctx *ctx, int32_t cell, const zgrt_value *val, int32_t loc)
{
    enter(ctx);
    op_need(ctx, loc);
    run *R = ctx->run;
    const zgrt_store_decl *st = op_decl(ctx);
    if (cell < 0 || cell >= st->ncells || !zri_value_check(R->prog, val, st->cells[cell].type))
        ctx_fail(ctx, loc, "internal error: a wrong write of cell %d", (int)cell);
    char err[1024];
    if (R->stores.write(R->stores.impl, ctx->op, cell, val, err, sizeof err) != 0)
        ctx_fail(ctx, loc, "store %s: writing %s: %s", st->name, st->cells[cell].name, err);
    ctx->op_cells[cell] = *val;
}

void zgrt_op_tools(zgrt_ctx *ctx, int32_t n, const int32_t *tools, int32_t loc)
{
    enter(ctx);
    op_need(ctx, loc);
    run *R = ctx->run;
    const zgrt_store_decl *st = op_decl(ctx);
    for (int32_t k = 0; k < n; k++)
        if (tools[k] < 0 || tools[k] >= R->prog->nactions)
            ctx_fail(ctx, loc, "internal error: tool %d", (int)tools[k]);
    char err[1024];
    if (R->stores.tools(R->stores.impl, ctx->op, n, tools, err, sizeof err) != 0)
        ctx_fail(ctx, loc, "store %s: writing the registry: %s", st->name, err);
    free(ctx->op_tools);
    ctx->op_tools = zri_xcalloc((size_t)n + 1, sizeof *ctx->op_tools);
    if (n) memcpy(ctx->op_tools, tools, (size_t)n * sizeof *tools);
    ctx->op_ntools = n;
}

int32_t zgrt_op_commit(zgrt_ctx *ctx, int32_t loc)
{
    enter(ctx);
    op_need(ctx, loc);
    run *R = ctx->run;
    const zgrt_store_decl *st = op_decl(ctx);
    char err[1200] = "";
    if (effects_join(ctx, err, sizeof err) != 0) ctx_fail(ctx, loc, "%s", err);
    int64_t txn = 0;
    int rc;
    zri_jentry je;
    if (replay_next(ctx, loc, &je)) {
        /* the journaled outcome: the store is not asked again */
        replay_expect(ctx, loc, &je, ZRI_J_COMMIT);
        if (je.a != ctx->op_store)
            diverged(ctx, loc, "the program commits to store %s, the journal has another store",
                     st->name);
        rc = je.b ? 0 : 1;
        txn = je.txn;
        if (rc && je.nvals == 1 && je.vals[0].tag == ZGRT_STR && je.vals[0].u.s)
            snprintf(err, sizeof err, "%.*s", (int)je.vals[0].u.s->len, je.vals[0].u.s->data);
        R->stores.drop(R->stores.impl, ctx->op);
    } else {
        /* the commit is an output: what the operation read (and the
         * calls before it) are durable first.  Its key makes it happen
         * once: a resumed run that repeats it gets the recorded outcome */
        output_commit(ctx, loc);
        zri_buf key = {0};
        if (journaled(R))
            zri_buf_printf(&key, "%s/%s/%s%" PRId64, R->run_id, lname(R, ctx->life->index),
                           ctx->path, ctx->tpos + 1);
        int tok = zfb_block_begin();
        rc = R->stores.commit(R->stores.impl, ctx->op, key.data, &txn, err, sizeof err);
        zfb_block_end(tok);
        zri_buf_free(&key);
        if (rc >= 0 && journaled(R)) {
            zgrt_value why = {.tag = ZGRT_STR};
            if (rc) why.u.s = zri_str(ctx->life->heap, err, strlen(err));
            zri_jentry e = {.kind = ZRI_J_COMMIT,
                            .pos = ctx->tpos + 1,
                            .a = ctx->op_store,
                            .b = rc == 0,
                            .txn = txn,
                            .nvals = rc ? 1 : 0,
                            .vals = &why};
            journal_record(ctx, &e);
        }
    }
    ctx->op = NULL; /* ended by the commit, whatever came of it */
    if (rc < 0) {
        op_clear(ctx);
        ctx_fail(ctx, loc, "store %s: %s", st->name, err);
    }
    zri_event e = {.kind = rc == 0 ? ZRI_EV_COMMIT : ZRI_EV_ABORT,
                   .op_store = ctx->op_store + 1,
                   .op_attempt = ctx->op_attempt,
                   .op_id = ctx->op_id,
                   .op_txn = txn,
                   .op_cells = ctx->op_cells,
                   .op_ntools = ctx->op_ntools,
                   .op_tools = ctx->op_tools,
                   .op_reason = rc == 0 ? NULL : err};
    do_event(ctx, &e, NULL, NULL, NULL, -1);
    op_clear(ctx);
    ctx->op_retry = rc == 0 ? 0 : ctx->op_store + 1;
    return rc == 0 ? 1 : 0;
}

/* A tool call of the operation (zgrt_act): issued, then either run here
 * (*async 0: the caller runs it and calls tool_done) or started on a
 * thread of its own (*async 1: done). */
static int tool_issue(zgrt_ctx *ctx, int32_t action, const zgrt_value *args, int32_t loc,
                      int *async)
{
    run *R = ctx->run;
    const zgrt_program *p = R->prog;
    const zgrt_action *A = &p->actions[action];
    const zgrt_store_decl *st = op_decl(ctx);
    char err[1024];
    int ticket = -1;
    if (R->stores.issue(R->stores.impl, ctx->op, action, args, &ticket, err, sizeof err) != 0)
        ctx_fail(ctx, loc, "store %s: tool %s: %s", st->name, A->name, err);
    *async = st->level < 3 && A->nresults == 0 && !journaled(R);
    if (!*async) return ticket;
    op_effect *x = zri_xcalloc(1, sizeof *x);
    x->ctx = ctx;
    x->op = ctx->op;
    x->action = action;
    x->ticket = ticket;
    x->args = zri_xcalloc((size_t)A->nparams + 1, sizeof *x->args);
    if (A->nparams) memcpy(x->args, args, (size_t)A->nparams * sizeof *args);
    x->nu = (note_user){ctx, A->name, {NULL, NULL, NULL, NULL, NULL}, 0};
    zri_buf key = {0};
    zri_buf_printf(&key, "%s/%s/%s%" PRId64, R->run_id, lname(R, ctx->life->index), ctx->path,
                   ctx->tpos + 1);
    x->env = (zri_action_env){.prog = p,
                              .opts = R->opts,
                              .lifeline = ctx->life->index,
                              .heap = ctx->life->heap,
                              .call_index =
                                  __atomic_fetch_add(&ctx->life->action_calls, 1, __ATOMIC_RELAXED),
                              .cancel = &R->cancel,
                              .note = action_note,
                              .note_user = &x->nu,
                              .key = zri_buf_take(&key)};
    if (pthread_create(&x->th, NULL, effect_thread, x) != 0) {
        free((void *)x->env.key);
        free(x->args);
        free(x);
        ctx_fail(ctx, loc, "store %s: tool %s: cannot start a thread", st->name, A->name);
    }
    x->next = ctx->op_effects;
    ctx->op_effects = x;
    return ticket;
}

static void tool_done(zgrt_ctx *ctx, int ticket, int32_t loc)
{
    run *R = ctx->run;
    char err[1024];
    if (R->stores.complete(R->stores.impl, ctx->op, ticket, err, sizeof err) != 0)
        ctx_fail(ctx, loc, "store %s: %s", op_decl(ctx)->name, err);
}

void zgrt_act(zgrt_ctx *ctx, int32_t action, const zgrt_value *args, int32_t nouts,
              const int32_t *outs, int32_t loc)
{
    enter(ctx);
    run *R = ctx->run;
    life *L = ctx->life;
    const zgrt_program *p = R->prog;
    if (action < 0 || action >= p->nactions)
        ctx_fail(ctx, loc, "internal error: action %d", (int)action);
    const zgrt_action *A = &p->actions[action];
    if (nouts != A->nresults)
        ctx_fail(ctx, loc, "internal error: action %s with %d outputs", A->name, (int)nouts);
    /* a tool call of the store operation this thread runs */
    int ticket = -1, async = 0;
    if (ctx->op && A->kind == ZGRT_ACT_EFFECT) {
        ticket = tool_issue(ctx, action, args, loc, &async);
        if (async) {
            zri_event e = {.kind = ZRI_EV_ACT,
                           .action = A->name,
                           .attempts = 1,
                           .op_store = ctx->op_store + 1,
                           .op_id = ctx->op_id};
            do_event(ctx, &e, NULL, NULL, NULL, -1);
            return;
        }
    }
    zgrt_value small[8], *res = small;
    if (A->nresults > 8) res = zri_xcalloc((size_t)A->nresults, sizeof *res);
    memset(res, 0, (size_t)(A->nresults > 8 ? A->nresults : 8) * sizeof *res);

    uint64_t call_index = __atomic_fetch_add(&L->action_calls, 1, __ATOMIC_RELAXED);

    /* the idempotency key (zgrt.h: zgrt_call_key): run, lifeline, position */
    zri_buf key = {0};
    if (A->kind != ZGRT_ACT_LLM)
        zri_buf_printf(&key, "%s/%s/%s%" PRId64, R->run_id, lname(R, L->index), ctx->path,
                       ctx->tpos + 1);
    note_user nu = {ctx, A->name, {NULL, NULL, NULL, NULL, NULL}, 0};
    zri_action_env env = {.prog = p,
                          .opts = R->opts,
                          .lifeline = L->index,
                          .heap = L->heap,
                          .call_index = call_index,
                          .cancel = &R->cancel,
                          .note = action_note,
                          .note_user = &nu,
                          .retry = action_retry,
                          .detail = R->obs.event ? action_detail : NULL,
                          .key = key.data,
                          .visible = journaled(R) ? action_visible : NULL,
                          .task = R->task ? action_task : NULL};
    if (R->obs.wait) {
        char what[256];
        snprintf(what, sizeof what, "action %s", A->name);
        R->obs.wait(R->obs.user, L->index, what);
    }
    int attempts = 1;
    char err[1024] = "";
    zri_jentry je;
    int rc;
    if (replay_next(ctx, loc, &je)) {
        /* a completed call: its results come from the journal */
        replay_expect(ctx, loc, &je, ZRI_J_ACT);
        if (je.a != action || je.nvals != A->nresults) {
            zri_buf_free(&key);
            if (res != small) free(res);
            diverged(ctx, loc, "the program calls %s, the journal has a call of %s", A->name,
                     je.a >= 0 && je.a < p->nactions ? p->actions[je.a].name : "?");
        }
        if (A->nresults) memcpy(res, je.vals, (size_t)A->nresults * sizeof *res);
        attempts = je.b;
        rc = 0;
        if (je.c && R->run_action) {
            /* what its attempts took from answer scripts is taken again */
            zgrt_value scratch[8], *sc = scratch;
            if (A->nresults > 8) sc = zri_xcalloc((size_t)A->nresults, sizeof *sc);
            env.replay_attempts = attempts;
            env.replay_source = je.c;
            int tok = zfb_block_begin();
            rc = R->run_action(&env, action, args, sc, &attempts, err, sizeof err);
            zfb_block_end(tok);
            attempts = je.b;
            if (sc != scratch) free(sc);
        }
    } else {
        net_flush(ctx, loc);
        /* models, humans and C functions block: the fiber's worker is
         * handed to another thread meanwhile (fiber.h) */
        int tok = zfb_block_begin();
        rc =
            R->run_action ? R->run_action(&env, action, args, res, &attempts, err, sizeof err) : -1;
        zfb_block_end(tok);
        if (!R->run_action) snprintf(err, sizeof err, "this executable cannot run actions");
        if (rc == 0 && !cancelled(R) && journaled(R)) {
            zri_jentry e = {.kind = ZRI_J_ACT,
                            .pos = ctx->tpos + 1,
                            .a = action,
                            .b = attempts,
                            .c = env.source,
                            .nvals = A->nresults,
                            .vals = res,
                            .raw = env.raw,
                            /* a mock model or an extern pure action makes it
                             * again; not inside a parallel region, whose
                             * calls may number differently */
                            .again =
                                !nu.visible && !(env.source & ZRI_SRC_SCRIPT) && !ctx->path[0]};
            journal_record(ctx, &e);
            /* a call the outside saw is committed at once: only a call in
             * flight at a crash may be repeated, never a completed one */
            if (nu.visible) {
                int tok2 = zfb_block_begin();
                if (R->jr.commit(R->jr.impl, err, sizeof err) != 0) rc = -1;
                zfb_block_end(tok2);
            }
        }
    }
    zri_buf_free(&key);
    free(env.raw);
    if (rc != 0 || cancelled(R)) {
        if (res != small) free(res);
        if (cancelled(R)) unwind(ctx);
        ctx_fail(ctx, loc, "action %s: %s", A->name, err[0] ? err : "failed");
    }
    for (int32_t k = 0; k < A->nresults; k++) {
        if (zri_value_check(p, &res[k], A->result_types[k])) continue;
        char got[256];
        value_text(R, &res[k], got, sizeof got);
        if (res != small) free(res);
        ctx_fail(ctx, loc, "action %s: result %d is %s, expected a value of type %s", A->name,
                 (int)k + 1, got, zri_type_name(p, A->result_types[k]));
    }
    if (ticket >= 0) tool_done(ctx, ticket, loc);
    zri_event e = {.kind = ZRI_EV_ACT,
                   .action = A->name,
                   .attempts = attempts,
                   .op_store = ticket >= 0 ? ctx->op_store + 1 : 0,
                   .op_id = ticket >= 0 ? ctx->op_id : NULL,
                   .system = nu.detail[0],
                   .user = nu.detail[1],
                   .question = nu.detail[2],
                   .answer = nu.detail[3],
                   .subrun = nu.detail[4],
                   .nwrites = nouts,
                   .write_vars = outs,
                   .write_vals = res};
    do_event(ctx, &e, NULL, NULL, res != small ? res : NULL, -1);
    if (res != small) free(res);
}

/* ---- parallel regions ---------------------------------------------------------- */

/* A region's branches: with fibers, the parent parks until `remaining`
 * is 0; the last branch wakes it under `mu`, so that the parent, which
 * reads `remaining` under `mu` too, cannot return (and end) before that
 * wake is done. */
typedef struct par_region {
    pthread_mutex_t mu;
    int remaining;
    zfb_fiber *parent;
} par_region;

typedef struct par_child {
    zgrt_ctx ctx;
    zgrt_body_fn fn;
    par_region *region;
    pthread_t th;
} par_child;

static void par_end(par_child *c)
{
    par_region *g = c->region;
    run *R = c->ctx.run; /* c and g are the parent's: gone once it has seen 0 */
    pthread_mutex_lock(&g->mu);
    /* the last branch to end hands its count back to the waiting parent */
    int left = --g->remaining;
    if (left == 0) zfb_wake(g->parent);
    pthread_mutex_unlock(&g->mu);
    if (left > 0) thread_gone(R);
}

static void par_run(void *arg)
{
    par_child *c = arg;
    if (setjmp(c->ctx.jb) == 0) {
        c->fn(&c->ctx);
        net_flush(&c->ctx, -1); /* the other branches may be waiting for these frames */
    }
    op_drop(&c->ctx);
    par_end(c);
}

static void *par_thread(void *arg)
{
    par_run(arg);
    return NULL;
}

/* A branch's fiber could not get a stack. */
static void par_fail(void *arg)
{
    par_child *c = arg;
    run_error(c->ctx.run, c->ctx.life->index, -1,
              "cannot start a fiber for a parallel branch (no memory for its stack: see "
              "vm.max_map_count)");
    par_end(c);
}

void zgrt_par(zgrt_ctx *ctx, int32_t n, const zgrt_body_fn *branches, int32_t loc)
{
    enter(ctx);
    run *R = ctx->run;
    if (n <= 0) return;
    net_flush(ctx, loc);
    par_child *c = zri_xcalloc((size_t)n, sizeof *c);
    par_region g = {.remaining = n, .parent = R->fibers ? zfb_self() : NULL};
    pthread_mutex_init(&g.mu, NULL);
    if (R->accounting) __atomic_add_fetch(&R->active, n - 1, __ATOMIC_SEQ_CST);
    /* from now on this lifeline's events take its lock */
    __atomic_add_fetch(&ctx->life->pars, 1, __ATOMIC_ACQ_REL);
    int32_t started = 0;
    for (; started < n; started++) {
        c[started].ctx.mon = ctx->mon;
        c[started].ctx.run = R;
        c[started].ctx.life = ctx->life;
        /* the branch's journal key (rt.h: zri_journal) */
        zri_buf path = {0};
        zri_buf_printf(&path, "%s%" PRId64 ".%d/", ctx->path, ctx->tpos, (int)started + 1);
        c[started].ctx.path = zri_buf_take(&path);
        if (journaled(R))
            c[started].ctx.jcur = R->jr.cursor(R->jr.impl, ctx->life->index, c[started].ctx.path);
        sched_seed(&c[started].ctx, ctx->rng, (uint64_t)started + 1);
        c[started].fn = branches[started];
        c[started].region = &g;
        if (g.parent) {
            if (zfb_spawn(R->fibers, par_run, par_fail, &c[started]) != 0) break;
        } else if (pthread_create(&c[started].th, NULL, par_thread, &c[started]) != 0) {
            break;
        }
    }
    if (started < n) {
        run_error(R, ctx->life->index, loc, "cannot start a %s for a parallel branch",
                  g.parent ? "fiber" : "thread");
        /* the branches that did not start are done */
        pthread_mutex_lock(&g.mu);
        g.remaining -= n - started;
        pthread_mutex_unlock(&g.mu);
    }
    if (g.parent) {
        for (;;) {
            pthread_mutex_lock(&g.mu);
            int left = g.remaining;
            pthread_mutex_unlock(&g.mu);
            if (left == 0) break;
            zfb_park();
        }
    } else {
        for (int32_t k = 0; k < started; k++) pthread_join(c[k].th, NULL);
    }
    pthread_mutex_destroy(&g.mu);
    __atomic_sub_fetch(&ctx->life->pars, 1, __ATOMIC_ACQ_REL);
    /* the region's events count on this thread too */
    for (int32_t k = 0; k < n; k++) {
        ctx->tpos += c[k].ctx.tpos;
        free((void *)c[k].ctx.path);
    }
    free(c);
    enter(ctx);
}

/* ---- generated-code accessors ------------------------------------------- */

const zgrt_value *zgrt_store(zgrt_ctx *ctx) { return ctx->life->store; }

zri_heap *zri_ctx_heap(zgrt_ctx *ctx) { return ctx->life->heap; }

const zgrt_program *zri_ctx_program(zgrt_ctx *ctx) { return ctx->run->prog; }

void zgrt_trap(zgrt_ctx *ctx, int32_t loc, const char *msg)
{
    if (cancelled(ctx->run)) unwind(ctx);
    ctx_fail(ctx, loc, "%s", msg ? msg : "run-time error");
}

/* ---- run setup and teardown ------------------------------------------------ */

static void life_init(run *R, life *L, int32_t index)
{
    const zgrt_program *p = R->prog;
    size_t nl = (size_t)R->nl, nvars = (size_t)p->nvars, nchans = (size_t)p->nchans;
    L->run = R;
    L->index = index;
    pthread_mutex_init(&L->mu, NULL);
    pthread_cond_init(&L->turn_cv, NULL);
    L->store = zri_xcalloc(nvars, sizeof(zgrt_value));
    zri_monitor_init(&L->mon, &R->plan, index, L->store);
    L->sent = zri_xcalloc(nl * nchans, sizeof(int64_t));
    if (R->stats) {
        L->meta_count = zri_xcalloc(nl, sizeof *L->meta_count);
        L->meta_min = zri_xcalloc(nl, sizeof *L->meta_min);
        L->meta_max = zri_xcalloc(nl, sizeof *L->meta_max);
    }
    L->heap = zri_heap_new();
    pthread_mutex_init(&L->in.mu, NULL);
    pthread_cond_init(&L->in.cv, NULL);
    L->in.q = zri_xcalloc(nl * nchans, sizeof(queue));
}

static void life_free(run *R, life *L)
{
    size_t nq = (size_t)R->nl * (size_t)R->prog->nchans;
    if (L->in.q)
        for (size_t i = 0; i < nq; i++) {
            queue *q = &L->in.q[i];
            for (zri_msg *m = q->head ? q->head : q->stub.next, *nx; m; m = nx) {
                nx = m->next;
                free(m);
            }
            zri_msg *lists[3] = {q->cfree, q->pfree, q->returned};
            for (int k = 0; k < 3; k++)
                for (zri_msg *m = lists[k], *nx; m; m = nx) {
                    nx = m->next;
                    free(m);
                }
        }
    free(L->in.q);
    pthread_cond_destroy(&L->in.cv);
    pthread_mutex_destroy(&L->in.mu);
    free(L->store);
    zri_monitor_free(&L->mon);
    free(L->sent);
    free(L->meta_count);
    free(L->meta_min);
    free(L->meta_max);
    zri_heap_free(L->heap);
    pthread_cond_destroy(&L->turn_cv);
    pthread_mutex_destroy(&L->mu);
}

zri_run *zri_run_new(const zgrt_program *p, const zri_options *o, int32_t self)
{
    run *R = zri_xcalloc(1, sizeof *R);
    R->prog = p;
    R->opts = o;
    R->nl = p->nlifelines;
    R->self = self;
    R->monitor = p->monitor != 0;
    const char *kill_at = getenv("ZGRT_KILL_AT_EVENT");
    if (kill_at && *kill_at) R->kill_at = strtoll(kill_at, NULL, 10);
    R->stats = getenv("ZGRT_MONITOR_STATS");
    if (R->stats && !*R->stats) R->stats = NULL;
    R->deadlock_check = R->self < 0;
    R->accounting = R->deadlock_check || (o && o->exit_when_waiting);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    R->ncpu = ncpu > 0 ? (int)ncpu : 1;
    pthread_mutex_init(&R->err_mu, NULL);
    pthread_mutex_init(&R->done_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&R->done_cv, &ca);
    pthread_condattr_destroy(&ca);
    /* a run that writes a trace needs every event's full clock */
    zri_plan_init(&R->plan, p, o && o->trace);
    R->lives = zri_xcalloc((size_t)R->nl, sizeof(life));
    for (int32_t l = 0; l < R->nl; l++) life_init(R, &R->lives[l], l);
    if (self >= 0) R->ended = zri_xcalloc((size_t)R->nl, sizeof *R->ended);
    /* a run that is not durable has a random id (idempotency keys) */
    uint64_t rnd = 0;
    if (getrandom(&rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
        rnd = (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ull ^ (uint64_t)getpid();
    snprintf(R->run_id, sizeof R->run_id, "%016" PRIx64, rnd);
    return R;
}

void zri_run_free(zri_run *R)
{
    for (int32_t l = 0; l < R->nl; l++)
        if (R->lives[l].run) life_free(R, &R->lives[l]);
    free(R->lives);
    free(R->ended);
    zri_plan_free(&R->plan);
    free(R->error);
    pthread_cond_destroy(&R->done_cv);
    pthread_mutex_destroy(&R->done_mu);
    pthread_mutex_destroy(&R->err_mu);
    free(R);
}

const zgrt_value *zri_run_store(zri_run *R, int32_t l) { return R->lives[l].store; }

void zri_run_observe(zri_run *R, const zri_observer *obs)
{
    R->obs = *obs;
    if (R->plan.full) return;
    /* an observer sees the full vector clock of every event: nothing has
     * run yet, so the monitors start over with full clocks */
    for (int32_t l = 0; l < R->nl; l++) zri_monitor_free(&R->lives[l].mon);
    zri_plan_free(&R->plan);
    zri_plan_init(&R->plan, R->prog, 1);
    for (int32_t l = 0; l < R->nl; l++)
        zri_monitor_init(&R->lives[l].mon, &R->plan, l, R->lives[l].store);
}

void zri_run_connect(zri_run *R, const zri_transport *t)
{
    R->net = *t;
    __atomic_store_n(&R->net_set, 1, __ATOMIC_RELEASE);
}

void zri_run_set_actions(zri_run *R, zri_action_fn run_action) { R->run_action = run_action; }

void zri_run_set_stores(zri_run *R, const zri_stores *s) { R->stores = *s; }

void zri_run_set_id(zri_run *R, const char *run_id)
{
    snprintf(R->run_id, sizeof R->run_id, "%s", run_id);
}

void zri_run_set_journal(zri_run *R, const zri_journal *j) { R->jr = *j; }

void zri_run_set_tasks(zri_run *R, zri_task_fn task, void *user)
{
    R->task = task;
    R->task_user = user;
}

int zri_run_waiting(zri_run *R) { return R->waiting && !R->error; }

int zri_run_lost_peer(zri_run *R) { return R->lost; }

int64_t zri_run_events(zri_run *R, int32_t l)
{
    return __atomic_load_n(&R->lives[l].nevents, __ATOMIC_RELAXED);
}

/* A journaled message goes back into its channel (zri_run_restore). */
static void restore_take(void *user, zri_msg *m)
{
    run *R = user;
    const zgrt_program *p = R->prog;
    if (!m) return;
    if (m->to != R->self || m->from < 0 || m->from >= R->nl || m->from == R->self || m->chan < 0 ||
        m->chan >= p->nchans || m->nvals < 0) {
        free(m);
        run_error(R, -1, -1, "the journal holds a message with wrong addressing");
        return;
    }
    queue *q = &R->lives[m->to].in.q[(size_t)m->from * (size_t)p->nchans + (size_t)m->chan];
    if (m->seq != q->got_seq + 1) {
        int64_t want = q->got_seq + 1, got = m->seq;
        free(m);
        run_error(R, -1, -1,
                  "the journal's messages skip on a channel: message %" PRId64
                  ", expected %" PRId64,
                  got, want);
        return;
    }
    q->got_seq = q->jseq = m->seq;
    deliver_local(R, m);
}

int zri_run_restore(zri_run *R)
{
    if (!journaled(R) || R->self < 0 || !R->jr.messages) return 0;
    char err[512] = "";
    if (R->jr.messages(R->jr.impl, R->self, R->lives[R->self].heap, restore_take, R, err,
                       sizeof err) != 0) {
        run_error(R, R->self, -1, "%s", err);
        return -1;
    }
    return cancelled(R) ? -1 : 0;
}

void zri_run_fail(zri_run *R, int32_t lifeline, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    run_verror(R, lifeline, -1, fmt, ap);
    va_end(ap);
}

const char *zri_run_error(zri_run *R) { return R->error; }

int64_t zri_run_error_time(zri_run *R) { return R->error ? R->error_ns : 0; }

int32_t zri_run_error_loc(zri_run *R) { return R->error ? R->error_loc : -1; }

static void input_desc(const zgrt_program *p, int32_t i, char *out, size_t n)
{
    const zgrt_var *v = &p->vars[p->inputs[i].var];
    snprintf(out, n, "%s (%s, owned by %s)", v->name, zri_type_name(p, v->type),
             p->lifelines[p->inputs[i].owner]);
}

/* Matches --arg options to the workflow's inputs and stores their values.
 * Returns 0, or 2 after printing usage errors. */
static int setup_inputs(run *R)
{
    const zgrt_program *p = R->prog;
    const zri_options *o = R->opts;
    int bad = 0;
    int *given = zri_xcalloc((size_t)(p->ninputs > 0 ? p->ninputs : 1), sizeof(int));
    /* an input a misspelt --arg was meant for: one error for the mistake,
       not a second one for the input missing */
    int *meant = zri_xcalloc((size_t)(p->ninputs > 0 ? p->ninputs : 1), sizeof(int));
    char desc[512];
    for (int a = 0; a < o->nargs; a++) {
        int32_t i;
        for (i = 0; i < p->ninputs; i++)
            if (strcmp(p->vars[p->inputs[i].var].name, o->arg_names[a]) == 0) break;
        if (i == p->ninputs) {
            ZvSuggest sg;
            zv_suggest_init(&sg, o->arg_names[a]);
            int32_t close = -1;
            for (int32_t j = 0; j < p->ninputs; j++) {
                const char *before = sg.best;
                zv_suggest_try(&sg, p->vars[p->inputs[j].var].name);
                if (sg.best != before) close = j;
            }
            if (close >= 0) {
                input_desc(p, close, desc, sizeof desc);
                zri_say("error", "unknown input '%s' in --arg; did you mean %s?\n", o->arg_names[a],
                        desc);
                meant[close] = 1;
                bad = 1;
                continue;
            }
            zri_buf b = {0};
            for (int32_t j = 0; j < p->ninputs; j++) {
                input_desc(p, j, desc, sizeof desc);
                zri_buf_printf(&b, "%s%s", j ? ", " : "", desc);
            }
            if (p->ninputs)
                zri_say("error", "unknown input '%s' in --arg; the inputs of %s are: %s\n",
                        o->arg_names[a], p->workflow ? p->workflow : "the workflow", b.data);
            else
                zri_say("error", "unknown input '%s' in --arg; %s has no inputs\n", o->arg_names[a],
                        p->workflow ? p->workflow : "the workflow");
            zri_buf_free(&b);
            bad = 1;
            continue;
        }
        input_desc(p, i, desc, sizeof desc);
        if (given[i]++) {
            zri_say("error", "input %s is given more than once\n", desc);
            bad = 1;
            continue;
        }
        const zgrt_var *v = &p->vars[p->inputs[i].var];
        int32_t owner = p->inputs[i].owner;
        zgrt_value val;
        char err[512];
        if (zri_value_from_text(p, R->lives[owner].heap, o->arg_values[a], v->type, &val, err,
                                sizeof err) != 0) {
            zri_say("error", "--arg %s: %s\n", desc, err);
            bad = 1;
            continue;
        }
        R->lives[owner].store[p->inputs[i].var] = val;
    }
    for (int32_t i = 0; i < p->ninputs; i++) {
        /* a per-lifeline executable needs the inputs of its own lifeline only */
        if (given[i] || meant[i] || (R->self >= 0 && p->inputs[i].owner != R->self)) continue;
        input_desc(p, i, desc, sizeof desc);
        zri_say("error", "missing input %s: give it with --arg %s=VALUE\n", desc,
                p->vars[p->inputs[i].var].name);
        bad = 1;
    }
    free(given);
    free(meant);
    if (bad)
        fprintf(stderr, "(run with --help for the options of %s)\n",
                p->workflow ? p->workflow : "the workflow");
    return bad ? 2 : 0;
}

/* Variable defaults; a json default may be given as JSON text. */
static int setup_defaults(run *R)
{
    const zgrt_program *p = R->prog;
    for (int32_t l = 0; l < R->nl; l++) {
        for (int32_t x = 0; x < p->nvars; x++) {
            const zgrt_var *v = &p->vars[x];
            if (!v->has_default) continue;
            zgrt_value d = v->def;
            if (v->type.tag == ZGRT_JSON && d.tag == ZGRT_STR && d.u.s) {
                char err[256];
                if (zri_value_from_text(p, R->lives[l].heap, d.u.s->data, v->type, &d, err,
                                        sizeof err) != 0) {
                    zri_say("error", "default of %s: %s\n", v->name, err);
                    return 1;
                }
            } else if (!zri_value_check(p, &d, v->type)) {
                zri_say("error", "internal error: bad default for variable %s\n", v->name);
                return 1;
            }
            R->lives[l].store[x] = d;
        }
    }
    return 0;
}

static void body_end(run *R)
{
    thread_gone(R);
    pthread_mutex_lock(&R->done_mu);
    R->running--;
    pthread_cond_broadcast(&R->done_cv);
    pthread_mutex_unlock(&R->done_mu);
}

static void body_run(void *arg)
{
    zgrt_ctx *ctx = arg;
    run *R = ctx->run;
    if (setjmp(ctx->jb) == 0) {
        R->prog->bodies[ctx->life->index](ctx);
        net_flush(ctx, -1);
    }
    op_drop(ctx);
    body_end(R);
}

static void *body_thread(void *arg)
{
    body_run(arg);
    return NULL;
}

/* A body's fiber could not get a stack. */
static void body_fail(void *arg)
{
    zgrt_ctx *ctx = arg;
    run_error(ctx->run, ctx->life->index, -1,
              "cannot start the lifeline's fiber (no memory for its stack)");
    body_end(ctx->run);
}

static const char *meta_form_name(int32_t form)
{
    switch (form) {
    case ZRI_META_NONE: return "absent";
    case ZRI_META_EDGE: return "the edge's";
    case ZRI_META_FULL: return "a full clock";
    default: return "of an unknown form";
    }
}

/* The transport's callbacks (per-lifeline mode): on its own thread, or
 * on a worker that polls it (net_poll), one at a time. */
void zri_run_deliver(void *user, zri_msg *m)
{
    run *R = user;
    const zgrt_program *p = R->prog;
    if (!m) return;
    if (m->to != R->self || m->from < 0 || m->from >= R->nl || m->from == R->self || m->chan < 0 ||
        m->chan >= p->nchans || m->nvals < 0) {
        int32_t from = m->from;
        free(m);
        run_error(R, -1, -1, "malformed message from %s: wrong addressing",
                  from >= 0 && from < R->nl ? lname(R, from) : "another process");
        return;
    }
    /* the metadata must be what the plan's edge carries in this run's form
     * (the frame decoder checked the counts against the edge) */
    const zri_msg *shape = &R->plan.shape[(size_t)m->from * (size_t)R->nl + (size_t)m->to];
    int32_t form = shape->has_meta, nvc = shape->nvc, nv = shape->nviews, nvv = shape->nvarviews;
    if (m->has_meta != form ||
        (form && (!m->vc || m->nvc != nvc || m->nviews != nv || m->nvarviews != nvv ||
                  (nv && !m->views) || (nvv && !m->varviews)))) {
        int32_t from = m->from, got = m->has_meta;
        free(m);
        run_error(R, -1, -1,
                  "malformed message from %s: its monitor metadata is %s, the plan expects %s "
                  "(do both processes write a trace, or neither?)",
                  lname(R, from), meta_form_name(got), meta_form_name(form));
        return;
    }
    /* the transport took only the stream's next message (net.h:
     * zri_seq_check: copies sent again after a reconnection are dropped,
     * a gap fails the peer) */
    queue *q = &R->lives[m->to].in.q[(size_t)m->from * (size_t)p->nchans + (size_t)m->chan];
    /* atomic: the transport's thread reads it for its SYNC frames while
     * this one writes it (zri_run_received) */
    __atomic_store_n(&q->got_seq, m->seq, __ATOMIC_RELAXED);
    deliver_local(R, m);
}

int64_t zri_run_received(void *user, int32_t from, int32_t chan)
{
    run *R = user;
    const zgrt_program *p = R->prog;
    if (R->self < 0 || from < 0 || from >= R->nl || chan < 0 || chan >= p->nchans) return 0;
    queue *q = &R->lives[R->self].in.q[(size_t)from * (size_t)p->nchans + (size_t)chan];
    return __atomic_load_n(&q->got_seq, __ATOMIC_RELAXED);
}

zri_msg *zri_run_block(void *user, int32_t nvals, int32_t from, int32_t to, int32_t chan, int form)
{
    run *R = user;
    if (R->self < 0 || to != R->self || from < 0 || from >= R->nl || from == to || chan < 0 ||
        chan >= R->prog->nchans || nvals < 0 ||
        form != R->plan.shape[(size_t)from * (size_t)R->nl + (size_t)to].has_meta)
        return NULL;
    /* the channel's producer here is the transport's reader */
    return msg_alloc(R, from, to, chan, nvals);
}

void zri_run_lost(void *user, const char *msg)
{
    run *R = user;
    pthread_mutex_lock(&R->err_mu);
    if (!R->error) R->lost = 1;
    pthread_mutex_unlock(&R->err_mu);
    run_error(R, -1, -1, "%s", msg ? msg : "connection failed");
}

void zri_run_ended(void *user, int32_t lifeline)
{
    run *R = user;
    if (!R->ended || lifeline < 0 || lifeline >= R->nl || R->self < 0) return;
    __atomic_store_n(&R->ended[lifeline], 1, __ATOMIC_RELEASE);
    /* a receive of this lifeline may be asleep waiting for it */
    inbox_wake(&R->lives[R->self].in);
}

/* Fibers, per-lifeline mode: an idle worker receives the transport's
 * messages itself (zfb_set_poll); the fibers they wake run on it next. */
static void net_poll(void *user, int wake_fd, int alone)
{
    run *R = user;
    R->net.wait(R->net.impl, wake_fd, -1, alone);
}

static void net_poke(void *user)
{
    run *R = user;
    R->net.wake(R->net.impl);
}

static void timespec_add(struct timespec *t, double s)
{
    double whole = (double)(time_t)s;
    t->tv_sec += (time_t)s;
    t->tv_nsec += (long)((s - whole) * 1e9);
    if (t->tv_nsec >= 1000000000L) {
        t->tv_sec++;
        t->tv_nsec -= 1000000000L;
    }
}

/* Waits for the body threads; fires the --timeout; returns 0, or -1 when
 * threads did not come back after a cancellation. */
static int wait_threads(run *R)
{
    struct timespec timeout_at, grace_at;
    int has_timeout = R->opts->timeout > 0, grace = 0;
    clock_gettime(CLOCK_MONOTONIC, &timeout_at);
    timespec_add(&timeout_at, R->opts->timeout);
    pthread_mutex_lock(&R->done_mu);
    while (R->running > 0) {
        if (cancelled(R) && !grace) {
            grace = 1;
            clock_gettime(CLOCK_MONOTONIC, &grace_at);
            timespec_add(&grace_at, CANCEL_GRACE_S);
        }
        int rc;
        if (grace)
            rc = pthread_cond_timedwait(&R->done_cv, &R->done_mu, &grace_at);
        else if (has_timeout)
            rc = pthread_cond_timedwait(&R->done_cv, &R->done_mu, &timeout_at);
        else
            rc = pthread_cond_wait(&R->done_cv, &R->done_mu);
        if (rc == ETIMEDOUT && R->running > 0) {
            if (grace) {
                pthread_mutex_unlock(&R->done_mu);
                return -1;
            }
            has_timeout = 0;
            pthread_mutex_unlock(&R->done_mu);
            run_error(R, -1, -1, "timeout after %g s", R->opts->timeout);
            pthread_mutex_lock(&R->done_mu);
        }
    }
    pthread_mutex_unlock(&R->done_mu);
    return 0;
}

char *zri_run_result_json(zri_run *R)
{
    const zgrt_program *p = R->prog;
    zri_buf b = {0};
    if (R->self >= 0) {
        zri_buf_puts(&b, "{");
        int first = 1;
        for (int32_t k = 0; k < p->nresults; k++) {
            if (p->results[k].lifeline != R->self) continue;
            zri_buf_printf(&b, "%s\"%d\": ", first ? "" : ", ", (int)k);
            first = 0;
            zri_buf_json_result(&b, p, &R->lives[R->self].store[p->results[k].var]);
        }
        zri_buf_puts(&b, "}");
    } else if (p->nresults == 0) {
        zri_buf_puts(&b, "null");
    } else if (p->result_tuple) {
        zri_buf_puts(&b, "[");
        for (int32_t k = 0; k < p->nresults; k++) {
            if (k) zri_buf_puts(&b, ", ");
            zri_buf_json_result(&b, p, &R->lives[p->results[k].lifeline].store[p->results[k].var]);
        }
        zri_buf_puts(&b, "]");
    } else {
        zri_buf_json_result(&b, p, &R->lives[p->results[0].lifeline].store[p->results[0].var]);
    }
    return zri_buf_take(&b);
}

/* ---- the descriptor's monitor plan (zgrt_abi.h: zgrt_keep, zgrt_edge) ---- */

static int plan_bad(const zgrt_program *p, const char *fmt, ...) ZRI_PRINTF(2, 3);
static int plan_bad(const zgrt_program *p, const char *fmt, ...)
{
    (void)p;
    va_list ap;
    va_start(ap, fmt);
    zri_say("error", "internal error: malformed program descriptor: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return -1;
}

/* n >= 0 ints, each in [0, limit), ascending without duplicates. */
static int check_ints(const int32_t *t, int32_t n, int32_t limit)
{
    if (n < 0 || (n > 0 && !t)) return -1;
    for (int32_t i = 0; i < n; i++)
        if (t[i] < 0 || t[i] >= limit || (i > 0 && t[i] <= t[i - 1])) return -1;
    return 0;
}

/* The position of v in an ascending int table, or -1. */
static int32_t int_pos(const int32_t *t, int32_t n, int32_t v)
{
    for (int32_t lo = 0, hi = n; lo < hi;) {
        int32_t mid = lo + (hi - lo) / 2;
        if (t[mid] == v) return mid;
        if (t[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* A slot table of lifeline l's keep: n >= 0 slots (B, index), B != l with
 * a clock entry in the keep, index < limit, sorted without duplicates. */
static int check_slots(const zgrt_program *p, int32_t l, const char *what, int32_t n,
                       const zgrt_slot *t, int32_t limit)
{
    const zgrt_keep *k = &p->keeps[l];
    if (n < 0 || (n > 0 && !t)) return plan_bad(p, "lifeline %d: %s: %d slots", l, what, n);
    for (int32_t i = 0; i < n; i++) {
        const char *bad = NULL;
        if (t[i].lifeline < 0 || t[i].lifeline >= p->nlifelines || t[i].lifeline == l)
            bad = "lifeline out of range";
        else if (int_pos(k->vc, k->nvc, t[i].lifeline) < 0)
            bad = "no clock entry for its lifeline";
        else if (t[i].index < 0 || t[i].index >= limit)
            bad = "index out of range";
        else if (i > 0 && (t[i].lifeline < t[i - 1].lifeline ||
                           (t[i].lifeline == t[i - 1].lifeline && t[i].index <= t[i - 1].index)))
            bad = "not sorted by (lifeline, index) without duplicates";
        if (bad)
            return plan_bad(p, "lifeline %d: %s slot %d (lifeline %d, index %d): %s", l, what, i,
                            t[i].lifeline, t[i].index, bad);
    }
    return 0;
}

static int check_keep(const zgrt_program *p, int32_t l)
{
    const zgrt_keep *k = &p->keeps[l];
    if (check_ints(k->evals, k->nevals, p->nsubs) < 0)
        return plan_bad(p, "lifeline %d: evaluated subformulas", l);
    if (check_ints(k->vc, k->nvc, p->nlifelines) < 0)
        return plan_bad(p, "lifeline %d: clock entries", l);
    int keeps = k->nevals || k->nviews || k->nvarviews || k->nvc;
    if (keeps && int_pos(k->vc, k->nvc, l) < 0)
        return plan_bad(p, "lifeline %d keeps no clock entry of its own", l);
    if (keeps && !p->monitor) return plan_bad(p, "lifeline %d keeps entries without a monitor", l);
    if (check_slots(p, l, "view", k->nviews, k->views, p->nsubs) < 0 ||
        check_slots(p, l, "variable-view", k->nvarviews, k->varviews, p->nvars) < 0)
        return -1;
    return 0;
}

/* An edge: groups ascending by lifeline (never the receiver), each clock
 * entry at its positions on both ends, every pair naming the same entry
 * on both ends, and every entry of a group about its lifeline. */
static int check_edge(const zgrt_program *p, int32_t i)
{
    const zgrt_edge *e = &p->edges[i];
    int32_t nl = p->nlifelines;
    if (e->from < 0 || e->from >= nl || e->to < 0 || e->to >= nl || e->from == e->to)
        return plan_bad(p, "edge %d: lifelines %d -> %d", i, e->from, e->to);
    if (i > 0 && (e->from < e[-1].from || (e->from == e[-1].from && e->to <= e[-1].to)))
        return plan_bad(p, "edge %d: not sorted by (from, to) without duplicates", i);
    if (e->ngroups < 0 || e->nviews < 0 || e->nvarviews < 0 || (e->ngroups && !e->groups) ||
        (e->nviews && !e->views) || (e->nvarviews && !e->varviews))
        return plan_bad(p, "edge %d: counts", i);
    const zgrt_keep *Y = &p->keeps[e->from], *X = &p->keeps[e->to];
    for (int32_t g = 0, v = 0, vv = 0; g < e->ngroups; g++) {
        const zgrt_group *gr = &e->groups[g];
        int32_t b = gr->lifeline;
        if (b < 0 || b >= nl || b == e->to || (g > 0 && b <= e->groups[g - 1].lifeline) ||
            gr->from_vc < 0 || gr->from_vc >= Y->nvc || Y->vc[gr->from_vc] != b || gr->to_vc < 0 ||
            gr->to_vc >= X->nvc || X->vc[gr->to_vc] != b || gr->views_end < v ||
            gr->views_end > e->nviews || gr->varviews_end < vv || gr->varviews_end > e->nvarviews ||
            (g == e->ngroups - 1 &&
             (gr->views_end != e->nviews || gr->varviews_end != e->nvarviews)))
            return plan_bad(p, "edge %d -> %d: group %d (lifeline %d)", e->from, e->to, g, b);
        for (; v < gr->views_end; v++) {
            const zgrt_pair *pr = &e->views[v];
            if (pr->to < 0 || pr->to >= X->nviews || X->views[pr->to].lifeline != b)
                return plan_bad(p, "edge %d -> %d: view %d", e->from, e->to, v);
            int32_t sub = X->views[pr->to].index;
            int ok = b == e->from
                         ? pr->from >= 0 && pr->from < Y->nevals && Y->evals[pr->from] == sub
                         : pr->from >= 0 && pr->from < Y->nviews &&
                               Y->views[pr->from].lifeline == b && Y->views[pr->from].index == sub;
            if (!ok) return plan_bad(p, "edge %d -> %d: view %d", e->from, e->to, v);
        }
        for (; vv < gr->varviews_end; vv++) {
            const zgrt_pair *pr = &e->varviews[vv];
            if (pr->to < 0 || pr->to >= X->nvarviews || X->varviews[pr->to].lifeline != b)
                return plan_bad(p, "edge %d -> %d: variable view %d", e->from, e->to, vv);
            int32_t x = X->varviews[pr->to].index;
            int ok = b == e->from ? pr->from == x
                                  : pr->from >= 0 && pr->from < Y->nvarviews &&
                                        Y->varviews[pr->from].lifeline == b &&
                                        Y->varviews[pr->from].index == x;
            if (!ok) return plan_bad(p, "edge %d -> %d: variable view %d", e->from, e->to, vv);
        }
    }
    if (e->ngroups == 0 && (e->nviews || e->nvarviews))
        return plan_bad(p, "edge %d -> %d: entries without a group", e->from, e->to);
    return 0;
}

static int check_plan(const zgrt_program *p)
{
    if (p->nedges < 0 || (p->nedges > 0 && (!p->edges || !p->keeps)))
        return plan_bad(p, "%d edges", p->nedges);
    if (p->monitor && !p->keeps) return plan_bad(p, "a monitor without keep tables");
    for (int32_t l = 0; p->keeps && l < p->nlifelines; l++)
        if (check_keep(p, l) < 0) return -1;
    for (int32_t i = 0; i < p->nedges; i++)
        if (check_edge(p, i) < 0) return -1;
    return 0;
}

int zri_program_check(const zgrt_program *p)
{
    if (!p) return -1;
    if (p->abi_version != ZGRT_ABI_VERSION) {
        zri_say("error", "the program was built for runtime ABI %d, this runtime has ABI %d\n",
                (int)p->abi_version, ZGRT_ABI_VERSION);
        return -1;
    }
    if (p->nlifelines <= 0 || !p->lifelines || !p->bodies || p->nvars < 0 ||
        (p->nvars > 0 && !p->vars) || p->nchans < 0 || p->nsubs < 0 || p->ninputs < 0 ||
        p->nresults < 0 || (p->nresults > 0 && !p->results)) {
        zri_say("error", "internal error: malformed program descriptor\n");
        return -1;
    }
    if (p->nstores < 0 || (p->nstores > 0 && !p->stores))
        return plan_bad(p, "a malformed store table");
    for (int32_t i = 0; i < p->nstores; i++) {
        const zgrt_store_decl *st = &p->stores[i];
        if (!st->name || st->level < 0 || st->level > 4 || st->ncells < 0 || st->ntools < 0 ||
            (st->ncells > 0 && !st->cells) || (st->ntools > 0 && !st->tools))
            return plan_bad(p, "store %d is malformed", (int)i);
        for (int32_t k = 0; k < st->ntools; k++)
            if (st->tools[k] < 0 || st->tools[k] >= p->nactions)
                return plan_bad(p, "store %s has a tool %d", st->name, (int)st->tools[k]);
    }
    return check_plan(p);
}

int zri_run_setup(zri_run *R)
{
    if (setup_defaults(R) != 0) return 1;
    return setup_inputs(R);
}

/* ZGRT_MONITOR_STATS=FILE: appends, for every lifeline of this process,
 * the bytes its monitor allocated, and for every lifeline it sent to, the
 * least and most metadata bytes of a message and their number, one line
 * each written whole (processes of one run may share the file):
 *   state LIFELINE BYTES FORM
 *   meta FROM TO MIN MAX COUNT FORM
 * FORM: "plan", or "traced" (full clocks).  tests/runtime compares them
 * with what `zgc guards` prints. */
static void write_stats(run *R)
{
    int fd = open(R->stats, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return;
    const char *form = R->plan.full ? "traced" : "plan";
    char line[1024];
    for (int32_t l = 0; l < R->nl; l++) {
        if (R->self >= 0 && l != R->self) continue;
        const life *L = &R->lives[l];
        int n =
            snprintf(line, sizeof line, "state %s %zu %s\n", lname(R, l), L->mon.state_bytes, form);
        if (n > 0 && (size_t)n < sizeof line && write(fd, line, (size_t)n) < 0) break;
        for (int32_t to = 0; to < R->nl; to++) {
            if (!L->meta_count[to]) continue;
            n = snprintf(line, sizeof line, "meta %s %s %zu %zu %" PRIu64 " %s\n", lname(R, l),
                         lname(R, to), L->meta_min[to], L->meta_max[to], L->meta_count[to], form);
            if (n > 0 && (size_t)n < sizeof line && write(fd, line, (size_t)n) < 0) break;
        }
    }
    close(fd);
}

void zri_run_exec(zri_run *R)
{
    /* the lifeline threads */
    int32_t nthreads = R->self >= 0 ? 1 : R->nl;
    zgrt_ctx *ctxs = zri_xcalloc((size_t)nthreads, sizeof *ctxs);
    pthread_t *ths = zri_xcalloc((size_t)nthreads, sizeof *ths);
    int32_t started = 0;
    if (!R->opts->threads && !cancelled(R)) {
        char err[256] = "";
        int workers = R->opts->workers > 0 ? R->opts->workers : zfb_default_workers();
        R->fibers = zfb_sched_new(workers, R->opts->schedule, err, sizeof err);
        if (!R->fibers) run_error(R, -1, -1, "cannot start the run's workers: %s", err);
        /* without an eventfd the transport's thread goes on reading alone */
        if (R->fibers && R->net.wait)
            zfb_set_poll(R->fibers, net_poll, R->net.wake ? net_poke : NULL, R, err, sizeof err);
    }
    if (!cancelled(R)) {
        R->active = nthreads;
        R->running = nthreads;
        /* all lifelines count as alive from the first one's start: a
         * model call it makes before the others are spawned still hands
         * its worker over */
        if (R->fibers) zfb_expect(R->fibers, nthreads);
        for (; started < nthreads; started++) {
            int32_t l = R->self >= 0 ? R->self : started;
            ctxs[started].mon = &R->lives[l].mon;
            ctxs[started].run = R;
            ctxs[started].life = &R->lives[l];
            ctxs[started].path = "";
            if (journaled(R)) ctxs[started].jcur = R->jr.cursor(R->jr.impl, l, "");
            sched_seed(&ctxs[started], R->opts->schedule, (uint64_t)l * 0x100000001B3ull + 7);
            if (R->fibers) {
                if (zfb_spawn(R->fibers, body_run, body_fail, &ctxs[started]) != 0) break;
            } else if (pthread_create(&ths[started], NULL, body_thread, &ctxs[started]) != 0) {
                break;
            }
        }
        if (started < nthreads) {
            if (R->fibers) zfb_expect(R->fibers, -(nthreads - started));
            pthread_mutex_lock(&R->done_mu);
            R->running -= nthreads - started;
            pthread_mutex_unlock(&R->done_mu);
            run_error(R, -1, -1, "cannot start the lifeline threads");
        }
    }
    if (wait_threads(R) < 0) {
        /* a thread is stuck in foreign code: report and leave */
        pthread_mutex_lock(&R->err_mu);
        zri_say("error", "%s\n", R->error ? R->error : "run cancelled");
        pthread_mutex_unlock(&R->err_mu);
        fflush(stderr);
        _Exit(1);
    }
    if (R->fibers) {
        zfb_sched_free(R->fibers);
        R->fibers = NULL;
    } else {
        for (int32_t k = 0; k < started; k++) pthread_join(ths[k], NULL);
    }
    free(ths);
    free(ctxs);
    if (R->stats) write_stats(R);
}
