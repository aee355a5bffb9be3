/* Shared helpers of the store tests. */
#ifndef ZST_TEST_HELPERS_H
#define ZST_TEST_HELPERS_H
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "anomalies.h"
#include "zst.h"

/* A fresh directory for one test's files. */
static inline char *t_dir(void)
{
    char *d = strdup("/tmp/zst-test-XXXXXX");
    cr_assert_not_null(mkdtemp(d));
    return d;
}

static inline void t_rmdir(char *d)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
    cr_assert_eq(system(cmd), 0);
    free(d);
}

static inline zgrt_value t_int(int64_t i) { return (zgrt_value){.tag = ZGRT_INT, .u.i = i}; }

/* A store of a test in a temporary directory (its SQLite file and its
 * records file there), with the int cells named in `cells` (NULL-ended). */
typedef struct {
    char *dir;
    char db[600], rec[600];
    zst_store *s;
} t_store;

static inline void t_store_open(t_store *t, int level, bool sqlite, const char *const *cells)
{
    t->dir = t_dir();
    snprintf(t->db, sizeof t->db, "%s/store.db", t->dir);
    snprintf(t->rec, sizeof t->rec, "%s/ops.jsonl", t->dir);
    char err[512];
    zst_config c = {.level = level, .sqlite = sqlite ? t->db : NULL, .oprecords = t->rec};
    t->s = zst_open(&c, err, sizeof err);
    cr_assert_not_null(t->s, "%s", err);
    for (const char *const *n = cells; *n; n++)
        cr_assert_eq(zst_cell(t->s, *n, ZGRT_INT, t_int(0)), ZST_OK, "%s", zst_error());
}

static inline void t_close(t_store *t)
{
    zst_close(t->s);
    t_rmdir(t->dir);
}

/* The anomaly counts of the history in `path` (docs/anomalies.md,
 * default options: A3 precise, since every record has preds). */
static inline void t_detect(const char *path, size_t n[ZGAN_NKINDS], size_t *records, int *level)
{
    zgan_history *h = NULL;
    char err[512];
    cr_assert_eq(zgan_read_file(path, &h, err, sizeof err), 0, "zgc anomalies reader: %s", err);
    zgan_options o = {0};
    zgan_report r;
    zgan_detect(h, &o, &r);
    cr_assert_eq(r.a3_used, ZGAN_A3_PRECISE);
    for (int k = 0; k < ZGAN_NKINDS; k++) n[k] = r.n[k];
    if (records) *records = zgan_history_records(h);
    if (level) *level = r.level;
    zgan_report_free(&r);
    zgan_history_free(h);
}
#endif
