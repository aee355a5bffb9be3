/* fiber.c — fibers on a pool of worker threads (fiber.h).
 *
 * States of a fiber (atomic):
 *   RUNNING   on a worker;
 *   PARKING   switching back to its worker to park;
 *   PARKED    suspended, waiting for a wake;
 *   NOTIFIED  a wake came while it was RUNNING or PARKING: the next park
 *             returns at once (or the worker puts it back on the queue);
 *   RUNNABLE  on a run queue or a worker's slot.
 * zfb_wake moves PARKED to RUNNABLE (and queues it), RUNNING/PARKING to
 * NOTIFIED.  A fiber switches back to its worker's own context to park,
 * yield, end or hand off; the worker then does what it asked (f->after)
 * on its own stack, so a fiber is never queued before its registers are
 * saved.
 *
 * Run queues: one shared FIFO (under the scheduler's mutex) and one slot
 * per worker (`next`, atomic) for the last fiber a fiber of that worker
 * woke.  A worker takes its slot first, then the queue; with nothing
 * there it spins up to ZFB_SPIN_NS looking at the queue and at the other
 * workers' slots (taking a fiber that has sat in one for ZFB_STEAL_NS of
 * its own looking: the waking path reads no clock),
 * then sleeps on `cv`.  A wake signals a sleeping worker only when no
 * worker spins.  With a seed (--schedule) the slot is not used and the
 * queue is taken in a seeded random order among its first entries.
 *
 * Polling (zfb_set_poll): a worker that would sleep calls poll_fn
 * instead when no other worker polls (`poller`, under mu); whoever makes
 * a fiber runnable, starts one or stops the scheduler while nobody sleeps
 * or spins writes wake_fd (once per poll: `poked`) and calls poke_fn,
 * unless it is the poller itself (the fibers its poll_fn wakes are
 * queued, and it runs them when poll_fn returns).  Its spin before
 * polling is ZFB_POLL_SPIN_NS (none: one look).  A fiber about to park
 * may poll instead, on its own stack (zfb_poll_here), when nothing else
 * is runnable and nobody polls (with a seed, in a seeded half of its
 * waits): it then becomes the poller itself, with no switch to its
 * worker and back; a wake of that fiber from another thread writes
 * wake_fd (`polling`).  When it is the only live fiber its poll is told
 * so (`alone`): nothing but another thread can wake it then, and the
 * poll function may leave wake_fd out (one descriptor less to wait on
 * per message) and return within a short time instead.
 *
 * Blocking hand-off: zfb_block_begin takes the worker out of the pool
 * (`free_workers`) and lets a spare thread in, or starts a new one (up to
 * MAX_THREADS; past it the fiber keeps its worker while it blocks);
 * zfb_block_end switches to the worker's context, which puts the fiber
 * on the queue; a worker finding more free workers than wanted becomes a
 * spare (sleeps on spare_cv).  With no other fiber alive nothing is
 * handed off; fibers announced with zfb_expect count as alive before
 * their zfb_spawn (`expected`), so that a run's first lifeline does not
 * keep its worker through a call made before the others are spawned. */
#define _GNU_SOURCE
#include "fiber.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) && !defined(ZFB_FORCE_UCONTEXT)
#define ZFB_ASM 1
#else
#include <ucontext.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define ZFB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ZFB_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define ZFB_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ZFB_TSAN 1
#endif
#endif

#ifdef ZFB_ASAN
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old,
                                     size_t *size_old);
#endif
#ifdef ZFB_TSAN
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
#endif

#define MAX_THREADS 1024
#define POOL_KEEP 256
#define PICK_SPAN 8

static inline void cpu_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* ---- stacks and the switch ------------------------------------------------ */

int zfb_stack_alloc(zfb_stack *st, size_t size)
{
    long pg = sysconf(_SC_PAGESIZE);
    size_t page = pg > 0 ? (size_t)pg : 4096;
    size = (size + page - 1) / page * page;
    size_t len = size + page;
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (m == MAP_FAILED) return -1;
    if (mprotect(m, page, PROT_NONE) != 0) {
        int e = errno;
        munmap(m, len);
        errno = e;
        return -1;
    }
    st->map = m;
    st->maplen = len;
    st->lo = (char *)m + page;
    st->size = size;
    return 0;
}

void zfb_stack_free(zfb_stack *st)
{
    if (st->map) munmap(st->map, st->maplen);
    memset(st, 0, sizeof *st);
}

#ifdef ZFB_ASM
/* zfb_swap(&from_sp, to_sp): pushes the callee-saved registers and the
 * SSE/x87 control words on the current stack, saves the stack pointer,
 * loads the other one and pops the same.  A new context's stack holds
 * zfb_start as the return address, with the entry in r13 and its
 * argument in r12. */
void zfb_swap(void **from_sp, void *to_sp);
void zfb_start(void);
__asm__(".text\n"
        ".globl zfb_swap\n"
        ".hidden zfb_swap\n"
        ".type zfb_swap,@function\n"
        "zfb_swap:\n"
        "  pushq %rbp\n"
        "  pushq %rbx\n"
        "  pushq %r12\n"
        "  pushq %r13\n"
        "  pushq %r14\n"
        "  pushq %r15\n"
        "  subq $8, %rsp\n"
        "  stmxcsr (%rsp)\n"
        "  fnstcw 4(%rsp)\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  ldmxcsr (%rsp)\n"
        "  fldcw 4(%rsp)\n"
        "  addq $8, %rsp\n"
        "  popq %r15\n"
        "  popq %r14\n"
        "  popq %r13\n"
        "  popq %r12\n"
        "  popq %rbx\n"
        "  popq %rbp\n"
        "  ret\n"
        ".size zfb_swap,.-zfb_swap\n"
        ".globl zfb_start\n"
        ".hidden zfb_start\n"
        ".type zfb_start,@function\n"
        "zfb_start:\n"
        "  movq %r12, %rdi\n"
        "  callq *%r13\n"
        "  ud2\n"
        ".size zfb_start,.-zfb_start\n");

int zfb_context_make(zfb_context *c, zfb_stack *st, void (*entry)(void *), void *arg)
{
    uintptr_t top = ((uintptr_t)st->lo + st->size) & ~(uintptr_t)15;
    uint64_t *sp = (uint64_t *)(top - 80);     /* 16-aligned: after the ret, rsp % 16 == 0 */
    sp[0] = 0x1F80 | ((uint64_t)0x037F << 32); /* mxcsr, x87 control word */
    sp[1] = 0;                                 /* r15 */
    sp[2] = 0;                                 /* r14 */
    sp[3] = (uint64_t)(uintptr_t)entry;        /* r13 */
    sp[4] = (uint64_t)(uintptr_t)arg;          /* r12 */
    sp[5] = 0;                                 /* rbx */
    sp[6] = 0;                                 /* rbp */
    sp[7] = (uint64_t)(uintptr_t)zfb_start;    /* return address */
    sp[8] = 0;
    sp[9] = 0;
    c->sp = sp;
    c->uc = NULL;
    return 0;
}

void zfb_context_free(zfb_context *c) { (void)c; }

void zfb_context_switch(zfb_context *from, zfb_context *to) { zfb_swap(&from->sp, to->sp); }

const char *zfb_switch_kind(void) { return "asm"; }
#else
/* ucontext: makecontext passes ints only, so the entry and its argument
 * go through a pointer split in two. */
typedef struct uc_start {
    void (*entry)(void *);
    void *arg;
} uc_start;

static void uc_trampoline(unsigned hi, unsigned lo)
{
    uc_start *s = (uc_start *)(((uintptr_t)hi << 32) | (uintptr_t)lo);
    s->entry(s->arg);
    abort();
}

int zfb_context_make(zfb_context *c, zfb_stack *st, void (*entry)(void *), void *arg)
{
    ucontext_t *uc = calloc(1, sizeof *uc + sizeof(uc_start));
    if (!uc) return -1;
    uc_start *s = (uc_start *)(uc + 1);
    s->entry = entry;
    s->arg = arg;
    if (getcontext(uc) != 0) {
        free(uc);
        return -1;
    }
    uc->uc_stack.ss_sp = st->lo;
    uc->uc_stack.ss_size = st->size;
    uc->uc_link = NULL;
    uintptr_t p = (uintptr_t)s;
    makecontext(uc, (void (*)(void))uc_trampoline, 2, (unsigned)(p >> 32), (unsigned)p);
    c->uc = uc;
    c->sp = NULL;
    return 0;
}

void zfb_context_free(zfb_context *c)
{
    free(c->uc);
    c->uc = NULL;
}

void zfb_context_switch(zfb_context *from, zfb_context *to)
{
    if (!from->uc) {
        from->uc = calloc(1, sizeof(ucontext_t) + sizeof(uc_start));
        if (!from->uc) abort();
    }
    swapcontext(from->uc, to->uc);
}

const char *zfb_switch_kind(void) { return "ucontext"; }
#endif

/* ---- the scheduler --------------------------------------------------------- */

enum { F_RUNNING, F_PARKING, F_PARKED, F_NOTIFIED, F_RUNNABLE };
enum { A_PARK, A_YIELD, A_EXIT, A_HANDOFF };

struct zfb_fiber {
    zfb_context ctx;
    zfb_stack stack; /* made when it first runs */
    zfb_fn fn, fail;
    void *arg;
    zfb_sched *s;
    int state;   /* atomic */
    int after;   /* what the worker does when the fiber switches back */
    int polling; /* atomic: in poll_fn on its own stack (zfb_poll_here) */
    zfb_fiber *qnext;
#ifdef ZFB_ASAN
    void *asan_fake;
#endif
#ifdef ZFB_TSAN
    void *tsan;
#endif
};

typedef struct worker {
    zfb_sched *s;
    zfb_context ctx;   /* the thread's own context */
    zfb_fiber *cur;    /* the fiber it runs */
    zfb_fiber *next;   /* atomic: a fiber woken by its fiber */
    uint64_t next_seq; /* atomic: how many times `next` was set (no clock
                          on the waking path: a spinning worker times how
                          long it sees the same value) */
    int held;          /* its fiber is in a blocking call */
    pthread_t th;
#ifdef ZFB_ASAN
    void *asan_fake;
    const void *stack_lo;
    size_t stack_size;
#endif
#ifdef ZFB_TSAN
    void *tsan;
#endif
} worker;

struct zfb_sched {
    pthread_mutex_t mu;
    pthread_cond_t cv;       /* idle workers */
    pthread_cond_t spare_cv; /* spare threads */
    pthread_cond_t done_cv;  /* zfb_sched_free: live reached 0 */
    zfb_fiber *qhead, *qtail;
    int qlen;         /* atomic reads by spinners */
    int target;       /* workers wanted */
    int free_workers; /* threads in the worker loop, not held */
    int nsleep;       /* workers asleep on cv */
    int nspin;        /* atomic: workers spinning */
    int nspare, want_spare;
    worker *ws[MAX_THREADS];
    int nws; /* atomic */
    int stop;
    int live;     /* fibers not yet ended, and those expected (zfb_expect) */
    int expected; /* fibers expected, not yet spawned */
    uint64_t seed, rng;
    zfb_stack pool[POOL_KEEP];
    int npool;
    int nstacks;
    zfb_stats st;
    /* zfb_set_poll: an idle worker polls instead of sleeping (one at a
     * time, `poller`, under mu); wake_fd (an eventfd) ends its poll,
     * `poked` says it was written since the poll began */
    void (*poll_fn)(void *user, int wake_fd, int alone);
    void (*poke_fn)(void *user);
    void *poll_user;
    int wake_fd;
    worker *poller;
    int poked;
};

static __thread worker *tls_worker;

static void *worker_main(void *arg);
static int slot_waiting(zfb_sched *s);

/* The calling thread's worker.  Not inlined and with a compiler barrier:
 * a fiber may resume on another thread, so the address of the
 * thread-local variable must not be kept across a switch. */
__attribute__((noinline)) static worker *cur_worker(void)
{
    __asm__ __volatile__("" ::: "memory");
    return tls_worker;
}

/* Under s->mu: a fiber became runnable or the scheduler stops; the
 * polling worker, if there is one and it is not the caller, returns from
 * its poll to look. */
static void poke_poller(zfb_sched *s)
{
    if (!s->poller || s->poked || s->poller == cur_worker()) return;
    s->poked = 1;
    uint64_t one = 1;
    /* a full counter (never: it is drained after each poll) still wakes */
    while (write(s->wake_fd, &one, sizeof one) < 0 && errno == EINTR) {}
    if (s->poke_fn) s->poke_fn(s->poll_user);
}

int zfb_default_workers(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

zfb_fiber *zfb_self(void)
{
    worker *w = cur_worker();
    return w ? w->cur : NULL;
}

static uint64_t mix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Under s->mu. */
static void q_push(zfb_sched *s, zfb_fiber *f)
{
    f->qnext = NULL;
    if (s->qtail)
        s->qtail->qnext = f;
    else
        s->qhead = f;
    s->qtail = f;
    __atomic_store_n(&s->qlen, s->qlen + 1, __ATOMIC_RELAXED);
}

/* Under s->mu: the first fiber, or with a seed one of the first
 * PICK_SPAN at random. */
static zfb_fiber *q_pop(zfb_sched *s)
{
    if (!s->qhead) return NULL;
    zfb_fiber **pp = &s->qhead, *prev = NULL;
    if (s->seed) {
        s->rng = mix(s->rng);
        int span = s->qlen < PICK_SPAN ? s->qlen : PICK_SPAN;
        int k = (int)(s->rng % (uint64_t)span);
        for (int i = 0; i < k && (*pp)->qnext; i++) {
            prev = *pp;
            pp = &(*pp)->qnext;
        }
    }
    zfb_fiber *f = *pp;
    *pp = f->qnext;
    if (s->qtail == f) s->qtail = prev;
    __atomic_store_n(&s->qlen, s->qlen - 1, __ATOMIC_RELAXED);
    f->qnext = NULL;
    return f;
}

static void push_global(zfb_sched *s, zfb_fiber *f)
{
    pthread_mutex_lock(&s->mu);
    q_push(s, f);
    /* the polling worker woke it (a message it read): it runs it next */
    if (!s->poller || s->poller != cur_worker()) {
        if (__atomic_load_n(&s->nspin, __ATOMIC_SEQ_CST) == 0) {
            if (s->nsleep > 0)
                pthread_cond_signal(&s->cv);
            else
                poke_poller(s);
        }
    }
    pthread_mutex_unlock(&s->mu);
}

/* f became runnable: into the slot of the waking fiber's worker, else the
 * shared queue. */
static void make_runnable(zfb_fiber *f)
{
    zfb_sched *s = f->s;
    worker *w = cur_worker();
    if (w && w->s == s && w->cur && !w->held && !s->seed) {
        __atomic_store_n(&w->next_seq, w->next_seq + 1, __ATOMIC_RELAXED);
        zfb_fiber *old = __atomic_exchange_n(&w->next, f, __ATOMIC_ACQ_REL);
        /* in one process no signal: most often the waking fiber parks
         * next and this worker runs f; if it keeps running, an idle worker
         * looks at the slots while any worker is busy (find_work) and
         * takes f over.  With a poll function (per-lifeline processes) an
         * idle worker takes f over if this one keeps running. */
        if (old) {
            push_global(s, old);
        } else if (__atomic_load_n(&s->poll_fn, __ATOMIC_ACQUIRE) &&
                   __atomic_load_n(&s->nspin, __ATOMIC_SEQ_CST) == 0 &&
                   __atomic_load_n(&s->nsleep, __ATOMIC_RELAXED) > 0) {
            pthread_mutex_lock(&s->mu);
            if (s->nsleep > 0) pthread_cond_signal(&s->cv);
            pthread_mutex_unlock(&s->mu);
        }
        return;
    }
    push_global(s, f);
}

void zfb_wake(zfb_fiber *f)
{
    if (!f) return;
    int st = __atomic_load_n(&f->state, __ATOMIC_SEQ_CST);
    for (;;) {
        if (st == F_PARKED) {
            if (__atomic_compare_exchange_n(&f->state, &st, F_RUNNABLE, 0, __ATOMIC_SEQ_CST,
                                            __ATOMIC_SEQ_CST)) {
                make_runnable(f);
                return;
            }
        } else if (st == F_RUNNING || st == F_PARKING) {
            if (__atomic_compare_exchange_n(&f->state, &st, F_NOTIFIED, 0, __ATOMIC_SEQ_CST,
                                            __ATOMIC_SEQ_CST)) {
                /* it polls on its own stack: its poll returns (unless
                 * the wake comes from that poll) */
                if (__atomic_load_n(&f->polling, __ATOMIC_SEQ_CST) && zfb_self() != f) {
                    pthread_mutex_lock(&f->s->mu);
                    poke_poller(f->s);
                    pthread_mutex_unlock(&f->s->mu);
                }
                return;
            }
        } else {
            return; /* NOTIFIED or RUNNABLE: it will look again */
        }
    }
}

/* From the fiber f to its worker's context; returns when f is resumed. */
static void to_worker(zfb_fiber *f, int exiting)
{
    worker *w = cur_worker();
#ifdef ZFB_ASAN
    __sanitizer_start_switch_fiber(exiting ? NULL : &f->asan_fake, w->stack_lo, w->stack_size);
#endif
#ifdef ZFB_TSAN
    __tsan_switch_to_fiber(w->tsan, 0);
#endif
    (void)exiting;
    zfb_context_switch(&f->ctx, &w->ctx);
#ifdef ZFB_ASAN
    __sanitizer_finish_switch_fiber(f->asan_fake, NULL, NULL);
#endif
}

static void fiber_entry(void *arg)
{
    zfb_fiber *f = arg;
#ifdef ZFB_ASAN
    __sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif
    f->fn(f->arg);
    f->after = A_EXIT;
    to_worker(f, 1);
    abort(); /* never resumed */
}

void zfb_park(void)
{
    worker *w = cur_worker();
    zfb_fiber *f = w ? w->cur : NULL;
    if (!f) return;
    int st = F_NOTIFIED;
    if (__atomic_compare_exchange_n(&f->state, &st, F_RUNNING, 0, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST))
        return;
    st = F_RUNNING;
    if (!__atomic_compare_exchange_n(&f->state, &st, F_PARKING, 0, __ATOMIC_SEQ_CST,
                                     __ATOMIC_SEQ_CST)) {
        __atomic_store_n(&f->state, F_RUNNING, __ATOMIC_SEQ_CST); /* woken just now */
        return;
    }
    f->after = A_PARK;
    to_worker(f, 0);
}

/* Under s->mu: a poll function is set, nothing is runnable and nobody
 * polls: w may poll. */
static int may_poll(zfb_sched *s, worker *w)
{
    return s->poll_fn && !s->poller && !s->qhead && !s->stop &&
           !__atomic_load_n(&w->next, __ATOMIC_ACQUIRE) && !slot_waiting(s);
}

/* Under s->mu: w polls from now on. */
static void poll_begin(zfb_sched *s, worker *w)
{
    s->poller = w;
    s->poked = 0;
    s->st.polls++;
}

/* Under s->mu: the poll has returned; a write to wake_fd is read. */
static void poll_end(zfb_sched *s)
{
    s->poller = NULL;
    if (s->poked) {
        uint64_t v;
        while (read(s->wake_fd, &v, sizeof v) < 0 && errno == EINTR) {}
        s->poked = 0;
    }
}

static int poll_here(int only_alone)
{
    worker *w = cur_worker();
    zfb_fiber *f = w ? w->cur : NULL;
    if (!f || w->held) return 0;
    zfb_sched *s = w->s;
    if (!__atomic_load_n(&s->poll_fn, __ATOMIC_ACQUIRE)) return 0;
    pthread_mutex_lock(&s->mu);
    /* with a seed (--schedule), half of the waits at random park and go
     * through the queue, where the seed orders what runs: both ways of
     * waiting are explored */
    if (!may_poll(s, w) || (only_alone && s->live != 1) ||
        (s->seed && ((s->rng = mix(s->rng)) & 1))) {
        pthread_mutex_unlock(&s->mu);
        return 0;
    }
    poll_begin(s, w);
    /* the only live fiber: no fiber can wake it, so the poll need not
     * watch wake_fd (zfb_set_poll) */
    int alone = s->live == 1;
    pthread_mutex_unlock(&s->mu);
    /* polling is set before the state is read, and a waker sets the state
     * before it reads polling: one of the two sees the other */
    __atomic_store_n(&f->polling, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&f->state, __ATOMIC_SEQ_CST) != F_NOTIFIED)
        s->poll_fn(s->poll_user, s->wake_fd, alone);
    __atomic_store_n(&f->polling, 0, __ATOMIC_SEQ_CST);
    pthread_mutex_lock(&s->mu);
    poll_end(s);
    /* what the poll made runnable waits for a worker while this fiber
     * runs on: a sleeping one takes it */
    if (s->nsleep > 0 && s->qhead) pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    /* a wake that came while it polled is seen: the caller looks again */
    int st = F_NOTIFIED;
    __atomic_compare_exchange_n(&f->state, &st, F_RUNNING, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return 1;
}

int zfb_poll_here(void) { return poll_here(0); }

int zfb_poll_alone(void) { return poll_here(1); }

void zfb_yield(void)
{
    worker *w = cur_worker();
    zfb_fiber *f = w ? w->cur : NULL;
    if (!f) {
        sched_yield();
        return;
    }
    f->after = A_YIELD;
    to_worker(f, 0);
}

int zfb_block_begin(void)
{
    worker *w = cur_worker();
    if (!w || !w->cur || w->held) return 0;
    zfb_sched *s = w->s;
    pthread_mutex_lock(&s->mu);
    if (s->live <= 1 && !s->qhead) {
        /* nothing else could run meanwhile */
        pthread_mutex_unlock(&s->mu);
        return 0;
    }
    int token = 1;
    if (s->nspare > s->want_spare) {
        s->want_spare++;
        pthread_cond_signal(&s->spare_cv);
    } else if (__atomic_load_n(&s->nws, __ATOMIC_ACQUIRE) < MAX_THREADS) {
        worker *nw = calloc(1, sizeof *nw);
        if (!nw) {
            token = 0;
        } else {
            nw->s = s;
            s->free_workers++;
            if (pthread_create(&nw->th, NULL, worker_main, nw) != 0) {
                s->free_workers--;
                free(nw);
                token = 0;
            } else {
                s->ws[s->nws] = nw;
                __atomic_store_n(&s->nws, s->nws + 1, __ATOMIC_RELEASE);
                s->st.threads++;
            }
        }
    } else {
        token = 0;
    }
    if (token) {
        w->held = 1;
        s->free_workers--;
        s->st.handoffs++;
        /* the fiber woken last goes where the other workers find it */
        zfb_fiber *nf = __atomic_exchange_n(&w->next, NULL, __ATOMIC_ACQ_REL);
        if (nf) {
            q_push(s, nf);
            if (s->nsleep > 0)
                pthread_cond_signal(&s->cv);
            else
                poke_poller(s);
        }
    }
    pthread_mutex_unlock(&s->mu);
    return token;
}

void zfb_block_end(int token)
{
    if (!token) return;
    worker *w = cur_worker();
    zfb_fiber *f = w->cur;
    f->after = A_HANDOFF;
    to_worker(f, 0);
}

static void fiber_free(zfb_sched *s, zfb_fiber *f)
{
#ifdef ZFB_TSAN
    __tsan_destroy_fiber(f->tsan);
#endif
    zfb_context_free(&f->ctx);
    pthread_mutex_lock(&s->mu);
    if (f->stack.map) {
        if (s->npool < POOL_KEEP) {
            s->pool[s->npool++] = f->stack;
        } else {
            zfb_stack_free(&f->stack);
            s->nstacks--;
        }
    }
    if (--s->live == 0) pthread_cond_broadcast(&s->done_cv);
    pthread_mutex_unlock(&s->mu);
    free(f);
}

/* Makes f's stack and context (a pooled stack if there is one). */
static int fiber_prepare(zfb_sched *s, zfb_fiber *f)
{
    pthread_mutex_lock(&s->mu);
    int got = 0;
    if (s->npool > 0) {
        f->stack = s->pool[--s->npool];
        got = 1;
    }
    pthread_mutex_unlock(&s->mu);
    if (!got) {
        if (zfb_stack_alloc(&f->stack, ZFB_STACK_SIZE) != 0) return -1;
        pthread_mutex_lock(&s->mu);
        if (++s->nstacks > s->st.max_stacks) s->st.max_stacks = s->nstacks;
        pthread_mutex_unlock(&s->mu);
    }
    return zfb_context_make(&f->ctx, &f->stack, fiber_entry, f);
}

/* Runs f on w until it switches back, then does what it asked. */
static void run_fiber(worker *w, zfb_fiber *f)
{
    zfb_sched *s = w->s;
    if (!f->stack.map && fiber_prepare(s, f) != 0) {
        if (f->fail) f->fail(f->arg);
        f->fn = NULL;
        fiber_free(s, f);
        return;
    }
    __atomic_store_n(&f->state, F_RUNNING, __ATOMIC_SEQ_CST);
    __atomic_store_n(&w->cur, f, __ATOMIC_RELAXED);
    __atomic_add_fetch(&s->st.switches, 1, __ATOMIC_RELAXED);
#ifdef ZFB_ASAN
    __sanitizer_start_switch_fiber(&w->asan_fake, f->stack.lo, f->stack.size);
#endif
#ifdef ZFB_TSAN
    __tsan_switch_to_fiber(f->tsan, 0);
#endif
    zfb_context_switch(&w->ctx, &f->ctx);
#ifdef ZFB_ASAN
    __sanitizer_finish_switch_fiber(w->asan_fake, NULL, NULL);
#endif
    __atomic_store_n(&w->cur, NULL, __ATOMIC_RELAXED);
    switch (f->after) {
    case A_PARK: {
        int st = F_PARKING;
        if (!__atomic_compare_exchange_n(&f->state, &st, F_PARKED, 0, __ATOMIC_SEQ_CST,
                                         __ATOMIC_SEQ_CST)) {
            /* NOTIFIED while switching: runnable again */
            __atomic_store_n(&f->state, F_RUNNABLE, __ATOMIC_SEQ_CST);
            push_global(s, f);
        }
        break;
    }
    case A_YIELD:
        __atomic_store_n(&f->state, F_RUNNABLE, __ATOMIC_SEQ_CST);
        push_global(s, f);
        break;
    case A_HANDOFF:
        __atomic_store_n(&f->state, F_RUNNABLE, __ATOMIC_SEQ_CST);
        pthread_mutex_lock(&s->mu);
        w->held = 0;
        s->free_workers++;
        q_push(s, f);
        if (s->nsleep > 0)
            pthread_cond_signal(&s->cv);
        else
            poke_poller(s);
        pthread_mutex_unlock(&s->mu);
        break;
    case A_EXIT: fiber_free(s, f); break;
    }
}

/* Spins up to ZFB_SPIN_NS for a fiber on the queue or one that waited
 * ZFB_STEAL_NS in another worker's slot. */
static zfb_fiber *spin_for_work(worker *w)
{
    zfb_sched *s = w->s;
    /* with a poll function the idle time goes to polling (one look, no
     * spin): a spin would take the processor from the peer process that
     * is to answer, and the poll wakes on local work too */
    int64_t limit = __atomic_load_n(&s->poll_fn, __ATOMIC_ACQUIRE) ? ZFB_POLL_SPIN_NS : ZFB_SPIN_NS;
    __atomic_add_fetch(&s->nspin, 1, __ATOMIC_SEQ_CST);
    int64_t t0 = now_ns();
    zfb_fiber *f = NULL;
    /* per other worker: the slot's count when this one first saw it, and
     * when: a fiber still there ZFB_STEAL_NS later is taken over */
    static __thread uint64_t seen_seq[MAX_THREADS];
    static __thread int64_t seen_at[MAX_THREADS];
    int nseen = __atomic_load_n(&s->nws, __ATOMIC_ACQUIRE);
    for (int k = 0; k < nseen; k++)
        seen_seq[k] = __atomic_load_n(&s->ws[k]->next_seq, __ATOMIC_RELAXED), seen_at[k] = t0;
    for (int i = 1;; i++) {
        if ((f = __atomic_exchange_n(&w->next, NULL, __ATOMIC_ACQ_REL))) break;
        if (__atomic_load_n(&s->qlen, __ATOMIC_RELAXED) > 0) {
            pthread_mutex_lock(&s->mu);
            f = q_pop(s);
            pthread_mutex_unlock(&s->mu);
            if (f) break;
        }
        if (__atomic_load_n(&s->stop, __ATOMIC_RELAXED) || limit == 0) break;
        cpu_pause();
        if (i % 32) continue;
        int64_t t = now_ns();
        int n = __atomic_load_n(&s->nws, __ATOMIC_ACQUIRE);
        for (int k = 0; k < n && !f; k++) {
            worker *o = s->ws[k];
            if (o == w) continue;
            zfb_fiber *c = __atomic_load_n(&o->next, __ATOMIC_ACQUIRE);
            uint64_t seq = __atomic_load_n(&o->next_seq, __ATOMIC_RELAXED);
            if (k >= nseen) { /* a worker started meanwhile */
                for (int j = nseen; j <= k; j++)
                    seen_seq[j] = __atomic_load_n(&s->ws[j]->next_seq, __ATOMIC_RELAXED),
                    seen_at[j] = t;
                nseen = k + 1;
                continue;
            }
            if (seq != seen_seq[k]) {
                seen_seq[k] = seq, seen_at[k] = t;
                continue;
            }
            if (!c || t - seen_at[k] < ZFB_STEAL_NS) continue;
            if (__atomic_compare_exchange_n(&o->next, &c, NULL, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE)) {
                f = c;
                __atomic_add_fetch(&s->st.steals, 1, __ATOMIC_RELAXED);
            }
        }
        if (f || t - t0 > limit) break;
    }
    __atomic_sub_fetch(&s->nspin, 1, __ATOMIC_SEQ_CST);
    return f;
}

/* Some worker's slot holds a fiber (a sleeping worker must not miss it). */
static int slot_waiting(zfb_sched *s)
{
    int n = __atomic_load_n(&s->nws, __ATOMIC_ACQUIRE);
    for (int k = 0; k < n; k++)
        if (__atomic_load_n(&s->ws[k]->next, __ATOMIC_ACQUIRE) &&
            __atomic_load_n(&s->ws[k]->cur, __ATOMIC_RELAXED))
            return 1;
    return 0;
}

/* Another worker than w runs a fiber (its slot may fill). */
static int busy_elsewhere(zfb_sched *s, worker *w)
{
    int n = __atomic_load_n(&s->nws, __ATOMIC_ACQUIRE);
    for (int k = 0; k < n; k++)
        if (s->ws[k] != w && !s->ws[k]->held && __atomic_load_n(&s->ws[k]->cur, __ATOMIC_RELAXED))
            return 1;
    return 0;
}

/* The next fiber for w, or NULL when the scheduler stops. */
static zfb_fiber *find_work(worker *w)
{
    zfb_sched *s = w->s;
    for (;;) {
        zfb_fiber *f = __atomic_exchange_n(&w->next, NULL, __ATOMIC_ACQ_REL);
        if (f) return f;
        pthread_mutex_lock(&s->mu);
        if (s->free_workers > s->target && !s->stop) {
            /* one thread too many since a blocking call ended: a spare */
            s->free_workers--;
            s->nspare++;
            /* what is queued goes to a sleeping worker (a waker that saw
             * this one spinning signalled nobody) */
            if (s->qhead) {
                if (s->nsleep > 0)
                    pthread_cond_signal(&s->cv);
                else
                    poke_poller(s);
            }
            while (!s->want_spare && !s->stop) pthread_cond_wait(&s->spare_cv, &s->mu);
            s->nspare--;
            if (s->stop) {
                pthread_mutex_unlock(&s->mu);
                return NULL;
            }
            s->want_spare--;
            s->free_workers++;
        }
        f = q_pop(s);
        int stop = s->stop;
        pthread_mutex_unlock(&s->mu);
        if (f) return f;
        if (stop) return NULL;
        if ((f = spin_for_work(w))) return f;
        pthread_mutex_lock(&s->mu);
        if (may_poll(s, w)) {
            /* nothing to run: this worker receives the transport's
             * messages itself (their fibers are queued as it reads) */
            poll_begin(s, w);
            pthread_mutex_unlock(&s->mu);
            s->poll_fn(s->poll_user, s->wake_fd, 0);
            pthread_mutex_lock(&s->mu);
            poll_end(s);
            /* more than this worker takes next, or other fibers that may
             * wait for messages while it runs: a sleeping one helps (and
             * polls in its turn) */
            if (s->nsleep > 0 && s->qhead && (s->qhead->qnext || s->live > 1))
                pthread_cond_signal(&s->cv);
            pthread_mutex_unlock(&s->mu);
            continue;
        }
        __atomic_add_fetch(&s->nsleep, 1, __ATOMIC_SEQ_CST);
        while (!s->qhead && !s->stop && !__atomic_load_n(&w->next, __ATOMIC_ACQUIRE)) {
            s->st.sleeps++;
            if (__atomic_load_n(&s->poll_fn, __ATOMIC_ACQUIRE) ? slot_waiting(s)
                                                               : busy_elsewhere(s, w)) {
                /* a fiber may wait, or come to wait, in a busy worker's
                 * slot (putting one there signals nobody): look again soon */
                struct timespec t;
                clock_gettime(CLOCK_REALTIME, &t);
                t.tv_nsec += 100000;
                if (t.tv_nsec >= 1000000000L) t.tv_sec++, t.tv_nsec -= 1000000000L;
                pthread_cond_timedwait(&s->cv, &s->mu, &t);
                break;
            }
            if (s->poll_fn && !s->poller) break; /* nobody polls: this one does */
            pthread_cond_wait(&s->cv, &s->mu);
        }
        __atomic_sub_fetch(&s->nsleep, 1, __ATOMIC_SEQ_CST);
        pthread_mutex_unlock(&s->mu);
    }
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    tls_worker = w;
#ifdef ZFB_TSAN
    w->tsan = __tsan_get_current_fiber();
#endif
#ifdef ZFB_ASAN
    pthread_attr_t a;
    if (pthread_getattr_np(pthread_self(), &a) == 0) {
        void *lo;
        size_t sz;
        if (pthread_attr_getstack(&a, &lo, &sz) == 0) {
            w->stack_lo = lo;
            w->stack_size = sz;
        }
        pthread_attr_destroy(&a);
    }
#endif
    zfb_fiber *f;
    while ((f = find_work(w))) run_fiber(w, f);
    tls_worker = NULL;
    return NULL;
}

zfb_sched *zfb_sched_new(int workers, uint64_t seed, char *err, size_t errlen)
{
    if (workers < 1) workers = 1;
    if (workers > MAX_THREADS / 2) workers = MAX_THREADS / 2;
    zfb_sched *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    pthread_cond_init(&s->spare_cv, NULL);
    pthread_cond_init(&s->done_cv, NULL);
    s->target = workers;
    s->wake_fd = -1;
    s->seed = seed;
    s->rng = seed ? mix(seed) : 0;
    pthread_mutex_lock(&s->mu);
    for (int k = 0; k < workers; k++) {
        worker *w = calloc(1, sizeof *w);
        if (!w) break;
        w->s = s;
        s->free_workers++;
        int e = pthread_create(&w->th, NULL, worker_main, w);
        if (e != 0) {
            s->free_workers--;
            free(w);
            snprintf(err, errlen, "cannot start a worker thread: %s", strerror(e));
            break;
        }
        s->ws[s->nws] = w;
        __atomic_store_n(&s->nws, s->nws + 1, __ATOMIC_RELEASE);
        s->st.threads++;
    }
    int ok = s->nws == workers;
    pthread_mutex_unlock(&s->mu);
    if (!ok) {
        if (!err[0]) snprintf(err, errlen, "out of memory");
        zfb_sched_free(s);
        return NULL;
    }
    return s;
}

int zfb_spawn(zfb_sched *s, zfb_fn fn, zfb_fn fail, void *arg)
{
    zfb_fiber *f = calloc(1, sizeof *f);
    if (!f) return -1;
    f->fn = fn;
    f->fail = fail;
    f->arg = arg;
    f->s = s;
    f->state = F_RUNNABLE;
#ifdef ZFB_TSAN
    f->tsan = __tsan_create_fiber(0);
#endif
    pthread_mutex_lock(&s->mu);
    if (s->stop) {
        pthread_mutex_unlock(&s->mu);
#ifdef ZFB_TSAN
        __tsan_destroy_fiber(f->tsan);
#endif
        free(f);
        return -1;
    }
    if (s->expected > 0)
        s->expected--; /* counted already */
    else
        s->live++;
    if (s->live > s->st.max_live) s->st.max_live = s->live;
    /* new fibers queue up behind the runnable ones */
    q_push(s, f);
    if (__atomic_load_n(&s->nspin, __ATOMIC_SEQ_CST) == 0) {
        if (s->nsleep > 0)
            pthread_cond_signal(&s->cv);
        else
            poke_poller(s);
    }
    pthread_mutex_unlock(&s->mu);
    return 0;
}

void zfb_expect(zfb_sched *s, int n)
{
    pthread_mutex_lock(&s->mu);
    if (n < -s->expected) n = -s->expected;
    s->expected += n;
    s->live += n;
    if (n < 0 && s->live == 0) pthread_cond_broadcast(&s->done_cv);
    pthread_mutex_unlock(&s->mu);
}

void zfb_sched_free(zfb_sched *s)
{
    if (!s) return;
    pthread_mutex_lock(&s->mu);
    while (s->live > 0) pthread_cond_wait(&s->done_cv, &s->mu);
    __atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
    pthread_cond_broadcast(&s->cv);
    pthread_cond_broadcast(&s->spare_cv);
    poke_poller(s);
    pthread_mutex_unlock(&s->mu);
    int n = __atomic_load_n(&s->nws, __ATOMIC_ACQUIRE);
    /* all joined before any is freed: a spinning worker reads the others' slots */
    for (int k = 0; k < n; k++) pthread_join(s->ws[k]->th, NULL);
    for (int k = 0; k < n; k++) free(s->ws[k]);
    for (int k = 0; k < s->npool; k++) zfb_stack_free(&s->pool[k]);
    if (s->wake_fd >= 0) close(s->wake_fd);
    pthread_cond_destroy(&s->done_cv);
    pthread_cond_destroy(&s->spare_cv);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

void zfb_sched_stats(zfb_sched *s, zfb_stats *out)
{
    pthread_mutex_lock(&s->mu);
    out->sleeps = s->st.sleeps;
    out->handoffs = s->st.handoffs;
    out->polls = s->st.polls;
    out->threads = s->st.threads;
    out->max_live = s->st.max_live;
    out->max_stacks = s->st.max_stacks;
    out->switches = __atomic_load_n(&s->st.switches, __ATOMIC_RELAXED);
    out->steals = __atomic_load_n(&s->st.steals, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&s->mu);
}

int zfb_set_poll(zfb_sched *s, void (*fn)(void *user, int wake_fd, int alone),
                 void (*poke)(void *user), void *user, char *err, size_t errlen)
{
    int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot make an eventfd: %s", strerror(errno));
        return -1;
    }
    pthread_mutex_lock(&s->mu);
    if (s->wake_fd >= 0) close(s->wake_fd);
    s->wake_fd = fd;
    s->poll_user = user;
    s->poke_fn = poke;
    __atomic_store_n(&s->poll_fn, fn, __ATOMIC_RELEASE);
    /* the sleeping workers look again: one of them polls */
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return 0;
}
