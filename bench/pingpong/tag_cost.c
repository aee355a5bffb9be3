/* tag_cost.c — the time of one frame tag (runtime/net/auth.c: HMAC-SHA256
 * with the connection's key, truncated to 16 bytes) for payloads of 8 to
 * 64 bytes, the best of 5 rounds of 1,000,000 tags.  Linked against the
 * runtime's archive:
 *
 *   cc -O2 -Iruntime -Ivocab bench/pingpong/tag_cost.c build/runtime/libzgrt.a \
 *      -o /tmp/tag_cost -lcrypto -ljansson -lpthread -lm -ldl && /tmp/tag_cost
 */
#include <stdio.h>
#include <time.h>

#include "net/net.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(void)
{
    uint8_t key[32] = {1}, payload[64] = {0x5A, 3, 1}, tag[16];
    char err[200];
    zri_mac *m = zri_mac_new(key, err, sizeof err);
    if (!m) {
        fprintf(stderr, "tag_cost: %s\n", err);
        return 1;
    }
    for (int size = 8; size <= 64; size *= 2) {
        const int n = 1000000;
        double best = 1e9;
        for (int round = 0; round < 5; round++) {
            double t0 = now();
            for (int i = 0; i < n; i++) zri_mac_tag(m, (uint64_t)i, payload, (size_t)size, tag);
            double ns = (now() - t0) / n * 1e9;
            if (ns < best) best = ns;
        }
        printf("tag of a %d-byte payload: %.0f ns\n", size, best);
    }
    zri_mac_free(m);
    return 0;
}
