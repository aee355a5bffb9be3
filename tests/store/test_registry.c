/* The library's parts for a run's stores: the initial registry of a new
 * store, the writer a read saw (zst_read_from) and registry writes inside
 * an operation (zst_write_tools) with their records. */
#include <jansson.h>

#include "helpers.h"

static zst_store *open_at(int level, const char *db, const char *rec)
{
    static const char *const tools[] = {"search", "mail"};
    char err[512];
    zst_config c = {.level = level, .sqlite = db, .oprecords = rec, .ntools = 2, .tools = tools};
    zst_store *s = zst_open(&c, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    cr_assert_eq(zst_cell(s, "n", ZGRT_INT, t_int(0)), ZST_OK);
    return s;
}

/* the i-th record of the file as JSON */
static json_t *record(const char *path, int i)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    char line[8192];
    json_t *j = NULL;
    for (int k = 0; k <= i && fgets(line, sizeof line, f); k++)
        if (k == i) j = json_loads(line, 0, NULL);
    fclose(f);
    cr_assert_not_null(j, "no record %d in %s", i, path);
    return j;
}

/* the entries of a registry list, sorted and joined by spaces */
static void joined(json_t *list, char *out, size_t n)
{
    const char *e[16];
    size_t k = json_array_size(list);
    cr_assert_leq(k, 16);
    for (size_t i = 0; i < k; i++) e[i] = json_string_value(json_array_get(list, i));
    for (size_t i = 1; i < k; i++)
        for (size_t j = i; j > 0 && strcmp(e[j - 1], e[j]) > 0; j--) {
            const char *t = e[j];
            e[j] = e[j - 1];
            e[j - 1] = t;
        }
    out[0] = '\0';
    for (size_t i = 0; i < k; i++) {
        strncat(out, e[i], n - strlen(out) - 1);
        if (i + 1 < k) strncat(out, " ", n - strlen(out) - 1);
    }
}

static void registries(json_t *r, const char *read, const char *written)
{
    char a[512], b[512];
    joined(json_object_get(r, "read_registry"), a, sizeof a);
    joined(json_object_get(r, "write_registry"), b, sizeof b);
    cr_expect_str_eq(a, read);
    cr_expect_str_eq(b, written);
}

Test(store_registry, initial_tools_read_from_and_registry_writes)
{
    char *d = t_dir();
    char db[600], rec[600];
    snprintf(db, sizeof db, "%s/s.db", d);
    snprintf(rec, sizeof rec, "%s/ops.jsonl", d);
    zst_store *s = open_at(4, db, rec);
    /* a read of the default comes from no operation */
    zst_op *a = zst_begin(s, "a");
    zgrt_value v;
    int64_t by = -1;
    cr_assert_eq(zst_read_from(a, "n", &v, &by), ZST_OK);
    cr_expect_eq(by, 0);
    cr_assert_eq(zst_plan(a, "search"), ZST_OK);
    cr_assert_eq(zst_write(a, "n", t_int(7)), ZST_OK);
    const char *keep[] = {"mail", "index"};
    cr_assert_eq(zst_write_tools(a, keep, 2), ZST_OK);
    cr_assert_eq(zst_commit(a), ZST_OK);
    int64_t ta = zst_txn(a);
    cr_assert_eq(zst_end(a), ZST_OK);
    /* the next reads name their writer, twice the same */
    zst_op *b = zst_begin(s, "b");
    cr_assert_eq(zst_read_from(b, "n", &v, &by), ZST_OK);
    cr_expect_eq(v.u.i, 7);
    cr_expect_eq(by, ta);
    by = -1;
    cr_assert_eq(zst_read_from(b, "n", &v, &by), ZST_OK);
    cr_expect_eq(by, ta);
    /* search is gone: L4 refuses it at the issue */
    int ticket;
    cr_expect_eq(zst_issue(b, "search", t_int(1), &ticket), ZST_EUNKNOWN);
    cr_assert_eq(zst_commit(b), ZST_OK);
    zst_end(b);
    zst_close(s);
    /* an existing store keeps its registry: opening it again adds nothing */
    s = open_at(4, db, rec);
    zst_op *c = zst_begin(s, "c");
    cr_expect_eq(zst_plan(c, "search"), ZST_EUNKNOWN);
    cr_expect_eq(zst_plan(c, "index"), ZST_OK);
    cr_expect_eq(zst_write_tools(c, NULL, 0), ZST_OK); /* empties it */
    cr_assert_eq(zst_commit(c), ZST_OK);
    zst_end(c);
    zst_close(s);
    json_t *r0 = record(rec, 0), *r2 = record(rec, 2);
    registries(r0, "mail@1 search@1", "index@1 mail@1");
    registries(r2, "index@1 mail@1", "");
    json_decref(r0);
    json_decref(r2);
    t_rmdir(d);
}

/* A2 at L3: a planned tool removed by another operation's registry write
 * while it ran; L4 retries the same interleaving. */
Test(store_registry, registry_write_makes_a2_below_l4)
{
    for (int level = 3; level <= 4; level++) {
        char *d = t_dir();
        char rec[600];
        snprintf(rec, sizeof rec, "%s/ops.jsonl", d);
        zst_store *s = open_at(level, NULL, rec);
        zst_op *caller = zst_begin(s, "caller");
        cr_assert_eq(zst_plan(caller, "search"), ZST_OK);
        zst_op *remover = zst_begin(s, "remover");
        const char *only[] = {"mail"};
        cr_assert_eq(zst_write_tools(remover, only, 1), ZST_OK);
        cr_assert_eq(zst_commit(remover), ZST_OK);
        zst_end(remover);
        int rc = zst_commit(caller);
        cr_expect_eq(rc, level == 4 ? ZST_RETRY : ZST_OK);
        zst_end(caller);
        zst_close(s);
        size_t n[ZGAN_NKINDS];
        t_detect(rec, n, NULL, NULL);
        cr_expect_eq(n[ZGAN_A2], level == 4 ? 0u : 1u, "L%d: A2 %zu", level, n[ZGAN_A2]);
        t_rmdir(d);
    }
}

Test(store_registry, bad_registry_writes)
{
    zst_store *s = open_at(0, NULL, NULL);
    zst_op *op = zst_begin(s, "a");
    const char *bad[] = {"x@1"};
    cr_expect_eq(zst_write_tools(op, bad, 1), ZST_EUSAGE);
    cr_expect_eq(zst_write_tools(op, NULL, 1), ZST_EUSAGE);
    cr_assert_eq(zst_commit(op), ZST_OK);
    cr_expect_eq(zst_write_tools(op, NULL, 0), ZST_EUSAGE); /* after the commit */
    zst_end(op);
    zst_close(s);
}
