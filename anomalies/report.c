/* report.c — reports: witnesses, their lists per anomaly, the level and
 * the anomalies' names.  Used by every detector (detect.c, detect_a1.c,
 * oracle.c) and by output.c; calls none of them. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

zgan_witness zgan_witness_none(void)
{
    return (zgan_witness){ZGAN_NONE, ZGAN_NONE, ZGAN_NONE, ZGAN_NONE,
                          ZGAN_NONE, ZGAN_NONE, ZGAN_NONE};
}

void zgan_report_init(zgan_report *r)
{
    memset(r, 0, sizeof *r);
    r->a3_used = ZGAN_A3_PRECISE;
    r->level = 4;
}

void zgan_report_add(zgan_report *r, zgan_kind k, zgan_witness w)
{
    size_t n = r->n[k];
    if ((n & (n - 1)) == 0) /* 0, 1, 2, 4, ...: grow at powers of two */
        r->w[k] = zgan_xrealloc(r->w[k], (n ? 2 * n : 1) * sizeof *r->w[k]);
    r->w[k][r->n[k]++] = w;
}

void zgan_report_free(zgan_report *r)
{
    for (int k = 0; k < ZGAN_NKINDS; k++) free(r->w[k]);
    memset(r, 0, sizeof *r);
}

int zgan_level(const size_t n[ZGAN_NKINDS])
{
    if (n[ZGAN_A1]) return 0;
    if (n[ZGAN_A3]) return 1;
    if (n[ZGAN_A6]) return 2;
    if (n[ZGAN_A2]) return 3;
    return 4;
}

const char *zgan_kind_name(zgan_kind k)
{
    static const char *const names[] = {"A1", "A2", "A3", "A6"};
    return k < ZGAN_NKINDS ? names[k] : "?";
}
