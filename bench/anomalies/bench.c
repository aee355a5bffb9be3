/* bench.c — times the fast detectors, and optionally the oracle, on one
 * history.
 *
 *   bench FILE [--oracle]
 *
 * Prints `parse SECONDS RECORDS`, then one line per detector
 *
 *   DETECTOR FAST_SECONDS WITNESSES [ORACLE_SECONDS same|DIFFERENT]
 *
 * for A1, A2, A3 (precise), A3 (residue) and A6, and finally
 * `total FAST_SECONDS [ORACLE_SECONDS]`.  Lines are flushed as they are
 * written, so a run cut short by a timeout still shows what finished. */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

typedef void (*detector)(const zgan_history *, zgan_report *);

static void fast_a1(const zgan_history *h, zgan_report *r) { zgan_detect_a1(h, false, r); }
static void fast_a6(const zgan_history *h, zgan_report *r) { zgan_detect_a6(h, false, r); }
static void slow_a1(const zgan_history *h, zgan_report *r) { zgan_oracle_a1(h, false, r); }
static void slow_a6(const zgan_history *h, zgan_report *r) { zgan_oracle_a6(h, false, r); }

static const struct {
    const char *name;
    zgan_kind kind;
    detector fast, slow;
} detectors[] = {
    {"A1", ZGAN_A1, fast_a1, slow_a1},
    {"A2", ZGAN_A2, zgan_detect_a2, zgan_oracle_a2},
    {"A3-precise", ZGAN_A3, zgan_detect_a3_precise, zgan_oracle_a3_precise},
    {"A3-residue", ZGAN_A3, zgan_detect_a3_residue, zgan_oracle_a3_residue},
    {"A6", ZGAN_A6, fast_a6, slow_a6},
};

static double timed(detector d, const zgan_history *h, zgan_report *r)
{
    zgan_report_init(r);
    double t0 = now();
    d(h, r);
    return now() - t0;
}

int main(int argc, char **argv)
{
    bool oracle = argc == 3 && !strcmp(argv[2], "--oracle");
    if (argc < 2 || argc > 3 || (argc == 3 && !oracle)) {
        fprintf(stderr, "usage: bench FILE [--oracle]\n");
        return 2;
    }
    char err[1024];
    zgan_history *h;
    double t0 = now();
    if (zgan_read_file(argv[1], &h, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    printf("parse %.4f %zu\n", now() - t0, zgan_history_records(h));
    fflush(stdout);

    double fast_total = 0, slow_total = 0;
    int status = 0;
    for (size_t i = 0; i < sizeof detectors / sizeof detectors[0]; i++) {
        zgan_report f, s;
        double tf = timed(detectors[i].fast, h, &f);
        fast_total += tf;
        zgan_kind k = detectors[i].kind;
        printf("%s %.4f %zu", detectors[i].name, tf, f.n[k]);
        fflush(stdout);
        if (oracle) {
            double ts = timed(detectors[i].slow, h, &s);
            slow_total += ts;
            bool same = f.n[k] == s.n[k] &&
                        (f.n[k] == 0 || memcmp(f.w[k], s.w[k], f.n[k] * sizeof *f.w[k]) == 0);
            printf(" %.4f %s", ts, same ? "same" : "DIFFERENT");
            status |= !same;
            zgan_report_free(&s);
        }
        putchar('\n');
        fflush(stdout);
        zgan_report_free(&f);
    }
    if (oracle)
        printf("total %.4f %.4f\n", fast_total, slow_total);
    else
        printf("total %.4f\n", fast_total);
    zgan_history_free(h);
    return status;
}
