/* util.c — checked allocation for the anomaly modules. */
#include "internal.h"

#include <stdlib.h>

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

void zgan_grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return;
    size_t c = *cap ? *cap : 16;
    while (c < need) {
        if (c > SIZE_MAX / 2 / size) out_of_memory();
        c *= 2;
    }
    *p = zgan_xrealloc(*p, c * size);
    *cap = c;
}
