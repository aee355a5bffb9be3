/* floor_threads.c — the hand-offs of pingpong.zg between two threads of one
 * process, with the synchronisation a runtime could use: a single-producer
 * single-consumer queue per direction; the consumer spins briefly on an
 * atomic counter, then sleeps on a condition variable.  Per iteration A
 * sends the decision and the counter, B increments and replies.
 * usage: floor_threads ROUNDS    prints nanoseconds per iteration */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct Queue {
    _Atomic int64_t put; /* values put so far */
    int64_t slot[64];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int sleeping;
} Queue;

static Queue to_b, to_a;

static void put(Queue *q, int64_t v)
{
    int64_t k = atomic_load_explicit(&q->put, memory_order_relaxed);
    q->slot[k & 63] = v;
    atomic_store_explicit(&q->put, k + 1, memory_order_release);
    pthread_mutex_lock(&q->mu);
    if (q->sleeping) pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

static int64_t take(Queue *q, int64_t *taken)
{
    for (int spin = 0; spin < 200000; spin++)
        if (atomic_load_explicit(&q->put, memory_order_acquire) > *taken) goto ready;
    pthread_mutex_lock(&q->mu);
    q->sleeping = 1;
    while (atomic_load_explicit(&q->put, memory_order_acquire) <= *taken)
        pthread_cond_wait(&q->cv, &q->mu);
    q->sleeping = 0;
    pthread_mutex_unlock(&q->mu);
ready:;
    int64_t v = q->slot[*taken & 63];
    (*taken)++;
    return v;
}

static void *side_b(void *arg)
{
    (void)arg;
    int64_t taken = 0;
    while (take(&to_b, &taken)) {        /* the decision */
        int64_t n = take(&to_b, &taken); /* the counter */
        put(&to_a, n + 1);               /* the reply */
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int64_t rounds = argc > 1 ? atoll(argv[1]) : 1000000;
    Queue *qs[] = {&to_b, &to_a};
    for (int i = 0; i < 2; i++) {
        pthread_mutex_init(&qs[i]->mu, NULL);
        pthread_cond_init(&qs[i]->cv, NULL);
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_t t;
    pthread_create(&t, NULL, side_b, NULL);
    int64_t n = 0, taken = 0;
    while (n < rounds) {
        put(&to_b, 1);
        put(&to_b, n);
        n = take(&to_a, &taken);
    }
    put(&to_b, 0);
    pthread_join(t, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
    printf("%.1f\n", ns / (double)rounds);
    return n == rounds ? 0 : 1;
}
