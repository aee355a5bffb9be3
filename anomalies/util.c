/* util.c — checked allocation and fork-join threads for the anomaly
 * modules. */
#define _GNU_SOURCE /* sched_getaffinity */
#include "internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void out_of_memory(void)
{
    fputs("zgc anomalies: error: out of memory\n", stderr);
    exit(1);
}

void *zgan_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) out_of_memory();
    return p;
}

void *zgan_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) out_of_memory();
    return p;
}

void *zgan_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) out_of_memory();
    return q;
}

enum { BIG = 2u << 20 }; /* a huge page */

void zgan_grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return;
    size_t c = *cap ? *cap : 16;
    while (c < need) {
        if (c > SIZE_MAX / 2 / size) out_of_memory();
        c *= 2;
    }
    size_t bytes = c * size;
    if (bytes < BIG) {
        *p = zgan_xrealloc(*p, bytes);
    } else {
        /* a large array: a new block in huge pages where the system gives
         * them on request (one page fault per 2 MB instead of per 4 kB:
         * on this VM faults were a fifth of reading 10^6 records), the
         * old contents copied (realloc would move the pages, splitting
         * huge ones) */
        bytes = (bytes + BIG - 1) / BIG * BIG;
        void *q = aligned_alloc(BIG, bytes);
        if (!q) out_of_memory();
#ifdef MADV_HUGEPAGE
        (void)madvise(q, bytes, MADV_HUGEPAGE); /* only advice */
#endif
        if (*p) memcpy(q, *p, *cap * size);
        free(*p);
        *p = q;
        c = bytes / size;
    }
    *cap = c;
}

static int threads_set; /* zgan_set_threads (tests) */

void zgan_set_threads(int n)
{
    threads_set = n < 0 ? 0 : n > ZGAN_MAX_THREADS ? ZGAN_MAX_THREADS : n;
}

int zgan_threads(void)
{
    if (threads_set) return threads_set;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
#ifdef CPU_COUNT
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) < n) n = CPU_COUNT(&set);
#endif
    if (n > ZGAN_MAX_THREADS) n = ZGAN_MAX_THREADS;
    return n < 1 ? 1 : (int)n;
}

typedef struct {
    void (*fn)(void *);
    void *arg;
} task;

static void *run_task(void *p)
{
    task *t = p;
    t->fn(t->arg);
    return NULL;
}

void zgan_parallel(void (*fn)(void *), void *args, size_t size, int n)
{
    pthread_t th[ZGAN_MAX_THREADS];
    task t[ZGAN_MAX_THREADS];
    bool started[ZGAN_MAX_THREADS] = {false};
    if (n > ZGAN_MAX_THREADS) n = ZGAN_MAX_THREADS;
    for (int i = 1; i < n; i++) {
        t[i] = (task){fn, (char *)args + (size_t)i * size};
        started[i] = pthread_create(&th[i], NULL, run_task, &t[i]) == 0;
    }
    if (n > 0) fn(args);
    for (int i = 1; i < n; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        else
            fn((char *)args + (size_t)i * size); /* no thread: here */
    }
}
