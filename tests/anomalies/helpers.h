/* Shared helpers for the anomaly-detector tests. */
#ifndef ZGAN_TEST_HELPERS_H
#define ZGAN_TEST_HELPERS_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Parses an in-memory history (named "test.jsonl"); fails the test on error. */
static inline zgan_history *t_load(const char *text)
{
    zgan_history *h = NULL;
    char err[512];
    int rc = zgan_read_buffer("test.jsonl", text, strlen(text), &h, err, sizeof err);
    cr_assert_eq(rc, 0, "unexpected reader error: %s", err);
    return h;
}

/* The reader's error message for `text`; fails the test if it parses. */
static inline char *t_load_error(const char *text, size_t len)
{
    zgan_history *h = NULL;
    static char err[512];
    int rc = zgan_read_buffer("bad.jsonl", text, len, &h, err, sizeof err);
    cr_assert_eq(rc, -1, "expected a reader error for: %.*s", (int)len, text);
    cr_assert_null(h);
    return err;
}

static inline const char *t_kind(int k) { return zgan_kind_name((zgan_kind)k); }

/* Whether two reports agree on everything (witnesses in order included);
 * on disagreement describes the first difference in `why`. */
static inline bool t_same_report(const zgan_report *a, const zgan_report *b, char *why, size_t n)
{
    if (a->a3_used != b->a3_used) {
        snprintf(why, n, "A3 predicate differs");
        return false;
    }
    for (int k = 0; k < ZGAN_NKINDS; k++) {
        if (a->n[k] != b->n[k]) {
            snprintf(why, n, "%s: %zu witnesses vs %zu", t_kind(k), a->n[k], b->n[k]);
            return false;
        }
        for (size_t i = 0; i < a->n[k]; i++)
            if (memcmp(&a->w[k][i], &b->w[k][i], sizeof a->w[k][i]) != 0) {
                const zgan_witness *x = &a->w[k][i], *y = &b->w[k][i];
                snprintf(
                    why, n,
                    "%s witness %zu: (rec %u other %u pos %u cell %u val %u cell2 %u val2 %u) vs "
                    "(rec %u other %u pos %u cell %u val %u cell2 %u val2 %u)",
                    t_kind(k), i, x->record, x->other, x->pos, x->cell, x->value, x->cell2,
                    x->value2, y->record, y->other, y->pos, y->cell, y->value, y->cell2, y->value2);
                return false;
            }
    }
    if (a->level != b->level) {
        snprintf(why, n, "level L%d vs L%d", a->level, b->level);
        return false;
    }
    return true;
}

/* Runs the fast detectors and the oracle, asserts they agree and returns
 * the fast report. */
static inline void t_detect(const zgan_history *h, const zgan_options *opt, zgan_report *r)
{
    zgan_report o;
    char why[512];
    zgan_detect(h, opt, r);
    zgan_oracle(h, opt, &o);
    bool same = t_same_report(r, &o, why, sizeof why);
    zgan_report_free(&o);
    cr_assert(same, "fast detectors and oracle disagree: %s", why);
}

/* The id of a name in h (must exist). */
static inline uint32_t t_id(const zgan_history *h, const char *text)
{
    uint32_t id = zgan_history_lookup(h, text);
    cr_assert_neq(id, ZGAN_NONE, "no id for %s", text);
    return id;
}

/* Output of one CLI run. */
typedef struct {
    int status;
    char *out, *err;
    size_t out_len, err_len;
} t_run_result;

/* Runs `zgc anomalies ARGS...` (args NULL-terminated), capturing output. */
static inline t_run_result t_run(const char *const *args)
{
    t_run_result r = {0};
    char *argv[64];
    int argc = 0;
    argv[argc++] = (char *)"anomalies";
    for (; args[argc - 1] && argc < 63; argc++) argv[argc] = (char *)args[argc - 1];
    argv[argc] = NULL;
    FILE *out = open_memstream(&r.out, &r.out_len);
    FILE *err = open_memstream(&r.err, &r.err_len);
    r.status = zgan_run(argc, argv, out, err);
    fclose(out);
    fclose(err);
    return r;
}

static inline void t_run_free(t_run_result *r)
{
    free(r->out);
    free(r->err);
}

/* A fresh directory under /tmp; write files into it with t_write. */
static inline char *t_tmpdir(void)
{
    char *d = strdup("/tmp/zgan-test-XXXXXX");
    cr_assert_not_null(mkdtemp(d));
    return d;
}

static inline char *t_write(const char *dir, const char *name, const char *text)
{
    char *p;
    cr_assert(asprintf(&p, "%s/%s", dir, name) > 0);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f, "cannot create %s", p);
    fputs(text, f);
    fclose(f);
    return p;
}

static inline void t_rmtree(const char *dir)
{
    char *cmd;
    if (asprintf(&cmd, "rm -rf '%s'", dir) > 0) {
        int rc = system(cmd);
        (void)rc;
        free(cmd);
    }
}

#endif
