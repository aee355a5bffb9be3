/* floor_onecore.c — the hand-offs of pingpong.zg between two coroutines
 * on ONE thread: per iteration A passes the decision and the counter to
 * B, B increments it and passes it back; each hand-off is one context
 * switch.  The switch is the runtime's own (runtime/fiber.c, compiled in)
 * or swapcontext(3).
 * usage: floor_onecore asm|ucontext ROUNDS    prints nanoseconds per iteration */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>

#include "fiber.h"

static long rounds;
static volatile int64_t slot_go, slot_n;
static int use_uc;
static zfb_context ctx_a, ctx_b;
static ucontext_t uc_a, uc_b;

static void to_b(void)
{
    if (use_uc)
        swapcontext(&uc_a, &uc_b);
    else
        zfb_context_switch(&ctx_a, &ctx_b);
}

static void to_a(void)
{
    if (use_uc)
        swapcontext(&uc_b, &uc_a);
    else
        zfb_context_switch(&ctx_b, &ctx_a);
}

static void side_b(void *arg)
{
    (void)arg;
    for (;;) {
        if (!slot_go) to_a();
        slot_n = slot_n + 1;
        to_a();
    }
}

static void uc_b_entry(void) { side_b(NULL); }

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "asm") && strcmp(argv[1], "ucontext"))) {
        fprintf(stderr, "usage: floor_onecore asm|ucontext ROUNDS\n");
        return 2;
    }
    use_uc = !strcmp(argv[1], "ucontext");
    rounds = atol(argv[2]);
    zfb_stack st;
    if (zfb_stack_alloc(&st, 256 * 1024) != 0) {
        perror("floor_onecore: stack");
        return 1;
    }
    if (use_uc) {
        if (getcontext(&uc_b) != 0) return 1;
        uc_b.uc_stack.ss_sp = st.lo;
        uc_b.uc_stack.ss_size = st.size;
        makecontext(&uc_b, uc_b_entry, 0);
    } else if (zfb_context_make(&ctx_b, &st, side_b, NULL) != 0) {
        return 1;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int64_t n = 0;
    for (long i = 0; i < rounds; i++) {
        slot_go = 1;
        slot_n = n;
        to_b();
        n = slot_n;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (n != rounds) {
        fprintf(stderr, "floor_onecore: counted %lld, expected %ld\n", (long long)n, rounds);
        return 1;
    }
    double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
    printf("%.1f\n", rounds ? ns / (double)rounds : 0.0);
    return 0;
}
