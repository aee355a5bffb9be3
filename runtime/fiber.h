/* fiber.h — fibers: coroutines on a pool of worker threads.
 *
 * A scheduler (zfb_sched) runs fibers on N worker threads.  A fiber runs
 * until it parks (zfb_park), yields (zfb_yield) or ends; a worker with
 * nothing to run watches the run queue for a short, bounded while
 * (ZFB_SPIN_NS) and then sleeps on a condition variable, or, with a
 * poll function (zfb_set_poll), one of the idle workers polls.  zfb_wake makes
 * a parked fiber runnable again; a wake that comes before the park is
 * kept (a permit), so "check a condition, then park" never loses a wake
 * when the waker sets the condition before waking.  A fiber woken by a
 * fiber goes to its waker's worker first (it usually runs as soon as the
 * waker parks: a hand-off without a thread switch); an idle worker takes
 * it over when it has waited there for ZFB_STEAL_NS.
 *
 * Blocking calls (a model's HTTP request, a human's answer, an fsync):
 * zfb_block_begin hands the calling fiber's worker role to another thread
 * (a spare one, or a new one), so that the other fibers keep running; the
 * fiber blocks on its thread; zfb_block_end puts the fiber back on the
 * run queue and the extra thread becomes a spare.
 *
 * Stacks are mmap'ed (ZFB_STACK_SIZE, committed by the kernel as they are
 * touched) with a guard page below; a stack is made when a fiber first
 * runs and kept for reuse when it ends.  Each stack is two mappings, so
 * the fibers that exist at once are limited by vm.max_map_count / 2.
 *
 * The context switch is hand-written on x86-64 (callee-saved registers
 * and the stack pointer) and ucontext elsewhere; both annotate the switch
 * for AddressSanitizer and ThreadSanitizer.
 *
 * Threading: zfb_wake may be called from any thread; zfb_park, zfb_yield,
 * zfb_block_* only from a fiber; zfb_sched_new/zfb_sched_free from a
 * thread that is not a worker.  One scheduler at a time per process. */
#ifndef ZGC_RUNTIME_FIBER_H
#define ZGC_RUNTIME_FIBER_H

#include <stddef.h>
#include <stdint.h>

#define ZFB_STACK_SIZE ((size_t)512 * 1024)
#define ZFB_SPIN_NS 20000L
#define ZFB_POLL_SPIN_NS 0L /* with a poll function (zfb_set_poll): one look */
#define ZFB_STEAL_NS 3000L

/* ---- the low-level switch (also used by tests and benchmarks) ---------- */

typedef struct zfb_stack {
    void *map;     /* the mapping: guard page, then the stack */
    size_t maplen; /* its length */
    void *lo;      /* the lowest usable byte */
    size_t size;   /* usable bytes */
} zfb_stack;

/* A saved context: the stack pointer (x86-64) or a ucontext. */
typedef struct zfb_context {
    void *sp;
    void *uc;
} zfb_context;

/* 0, or -1 with errno set (mmap or mprotect failed). */
int zfb_stack_alloc(zfb_stack *st, size_t size);
void zfb_stack_free(zfb_stack *st);
/* Prepares c to run entry(arg) on st when switched to; entry must never
 * return (switch away for good instead).  0, or -1 (out of memory). */
int zfb_context_make(zfb_context *c, zfb_stack *st, void (*entry)(void *), void *arg);
void zfb_context_free(zfb_context *c);
/* Saves the current context in from and resumes to. */
void zfb_context_switch(zfb_context *from, zfb_context *to);
/* "asm" or "ucontext": the switch compiled in. */
const char *zfb_switch_kind(void);

/* ---- the scheduler ------------------------------------------------------ */

typedef struct zfb_sched zfb_sched;
typedef struct zfb_fiber zfb_fiber;
typedef void (*zfb_fn)(void *arg);

/* The default number of workers: the processors this process may use. */
int zfb_default_workers(void);

/* A scheduler with `workers` threads (>= 1).  seed != 0: the run queue is
 * taken in a seeded random order and woken fibers always go through it
 * (testing: other interleavings).  NULL on failure, with a message in err. */
zfb_sched *zfb_sched_new(int workers, uint64_t seed, char *err, size_t errlen);
/* Waits until every fiber has ended, stops and joins the threads. */
void zfb_sched_free(zfb_sched *s);
/* Starts fn(arg) on a new fiber.  When its stack cannot be made, fail(arg)
 * is called instead (on a worker thread, not on a fiber).  0, or -1 when
 * the scheduler is stopping. */
int zfb_spawn(zfb_sched *s, zfb_fn fn, zfb_fn fail, void *arg);

/* n more fibers are about to be started with zfb_spawn (n < 0: that many
 * will not be after all): they count as alive from now on, so that a
 * blocking call of one started before them hands its worker over
 * (zfb_block_begin) as if they were queued already. */
void zfb_expect(zfb_sched *s, int n);

/* The calling fiber, or NULL on a thread that is not running a fiber. */
zfb_fiber *zfb_self(void);
/* Suspends the calling fiber until zfb_wake (returns at once if a wake
 * came since the last park).  May return without a wake: callers check
 * their condition in a loop. */
void zfb_park(void);
void zfb_wake(zfb_fiber *f);
/* For a fiber about to park until something arrives through the poll
 * function (zfb_set_poll): when no other fiber is runnable and no worker
 * polls, calls it here, on the fiber's own stack, and returns 1 (a wake
 * of this fiber from another thread makes it return); the caller then
 * looks again at what it waits for.  0 when it did not poll (the caller
 * parks).  With a seed (zfb_sched_new), only in a seeded half of the
 * calls. */
int zfb_poll_here(void);
/* zfb_poll_here when the calling fiber is the scheduler's only live one
 * (no other fiber can wake it then); 0 otherwise. */
int zfb_poll_alone(void);
/* Lets the other runnable fibers run first. */
void zfb_yield(void);
/* Around a call that may block the thread: returns a token for
 * zfb_block_end.  No-op (0) off a fiber. */
int zfb_block_begin(void);
void zfb_block_end(int token);

/* Polling instead of sleeping (a transport's sockets): from now on, a
 * worker with nothing to run calls fn(user, wake_fd, alone) instead of
 * sleeping on its condition variable, one worker at a time.  fn blocks
 * until it has something (it makes fibers runnable with zfb_wake on the
 * calling thread: the worker runs them when fn returns) or wake_fd (an
 * eventfd the scheduler writes when a fiber becomes runnable elsewhere or
 * the scheduler stops) is readable; it must not read wake_fd.  alone: fn
 * runs on the stack of the scheduler's only live fiber (zfb_poll_here),
 * so no fiber can wake it — only another thread (the end of a run, from
 * outside), which still writes wake_fd: fn may leave wake_fd out of its
 * wait then, and return within a short time instead.  poke (may be NULL)
 * is called with wake_fd's writes, under the scheduler's lock, for an fn
 * that cannot watch wake_fd: it must make fn return soon.  Call it before
 * the first fiber waits.  0, or -1 with a message in err. */
int zfb_set_poll(zfb_sched *s, void (*fn)(void *user, int wake_fd, int alone),
                 void (*poke)(void *user), void *user, char *err, size_t errlen);

/* Counters of a scheduler (for tests and benchmarks). */
typedef struct zfb_stats {
    uint64_t switches; /* fibers resumed */
    uint64_t steals;   /* fibers taken from another worker's slot */
    uint64_t sleeps;   /* times a worker slept */
    uint64_t handoffs; /* blocking calls that handed a worker off */
    uint64_t polls;    /* times an idle worker polled (zfb_set_poll) */
    int threads;       /* threads made (workers and spares) */
    int max_live;      /* most fibers alive at once */
    int max_stacks;    /* most stacks mapped at once */
} zfb_stats;
void zfb_sched_stats(zfb_sched *s, zfb_stats *out);

#endif
