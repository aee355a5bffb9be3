/* Idempotency keys and replayed reads (zst.h: zst_op_key, zst_read_replay,
 * zst_drop), the store side of durable runs: a commit whose key the store
 * has applies nothing and gives the recorded outcome; a replayed read is
 * validated at the commit like a read. */
#include <stdio.h>
#include <string.h>

#include "helpers.h"

static void k_open(t_store *t, int level, bool sqlite)
{
    t_store_open(t, level, sqlite, (const char *const[]){"ctr", NULL});
}

/* lines of the records file containing `what` */
static int k_count(const t_store *t, const char *what)
{
    FILE *f = fopen(t->rec, "r");
    if (!f) return 0;
    char line[8192];
    int n = 0;
    while (fgets(line, sizeof line, f)) n += strstr(line, what) != NULL;
    fclose(f);
    return n;
}

static int64_t k_ctr(zst_store *s)
{
    zst_op *op = zst_begin(s, "check");
    cr_assert_not_null(op);
    zgrt_value v;
    cr_assert_eq(zst_read(op, "ctr", &v), ZST_OK);
    zst_drop(op);
    return v.u.i;
}

/* An increment keyed `key`: its commit's outcome, its txn in *txn. */
static int k_inc(zst_store *s, const char *key, int64_t *txn)
{
    zst_op *op = zst_begin(s, "a");
    cr_assert_not_null(op);
    zgrt_value v;
    cr_assert_eq(zst_read(op, "ctr", &v), ZST_OK);
    cr_assert_eq(zst_write(op, "ctr", t_int(v.u.i + 1)), ZST_OK);
    cr_assert_eq(zst_op_key(op, key), ZST_OK);
    int rc = zst_commit(op);
    *txn = zst_txn(op);
    int end = zst_end(op);
    cr_assert_eq(end, ZST_OK, "end: %d %s", end, zst_error());
    return rc;
}

static void commit_twice(int level, bool sqlite)
{
    t_store t;
    k_open(&t, level, sqlite);
    int64_t t1 = 0, t2 = 0, t3 = 0;
    cr_assert_eq(k_inc(t.s, "run/A/7", &t1), ZST_OK, "%s", zst_error());
    cr_assert_eq(k_inc(t.s, "run/A/7", &t2), ZST_OK, "%s", zst_error());
    cr_assert_eq(t2, t1, "the second commit's txn %lld, the first's %lld", (long long)t2,
                 (long long)t1);
    cr_assert_eq(k_ctr(t.s), 1, "one commit applied");
    cr_assert_eq(k_count(&t, "\"aborted\":false"), 1, "one committed record");
    /* another key commits */
    cr_assert_eq(k_inc(t.s, "run/A/9", &t3), ZST_OK, "%s", zst_error());
    cr_assert_gt(t3, t1);
    cr_assert_eq(k_ctr(t.s), 2);
    cr_assert_eq(k_count(&t, "\"aborted\":false"), 2);
    t_close(&t);
}

Test(store_key, commit_twice_memory) { commit_twice(1, false); }
Test(store_key, commit_twice_sqlite) { commit_twice(1, true); }
Test(store_key, commit_twice_sqlite_l3) { commit_twice(3, true); }

/* A commit made and not ended (the process died between the two): the
 * keyed commit again gives its outcome, and its end finishes it. */
Test(store_key, commit_not_ended)
{
    t_store t;
    k_open(&t, 2, true);
    zst_op *op = zst_begin(t.s, "a");
    zgrt_value v;
    cr_assert_eq(zst_read(op, "ctr", &v), ZST_OK);
    cr_assert_eq(zst_write(op, "ctr", t_int(5)), ZST_OK);
    cr_assert_eq(zst_op_key(op, "k"), ZST_OK);
    cr_assert_eq(zst_commit(op), ZST_OK);
    int64_t first = zst_txn(op);
    zst_drop(op); /* lost: never ended */
    cr_assert_eq(k_count(&t, "\"aborted\""), 0, "not final yet");
    int64_t again = 0;
    cr_assert_eq(k_inc(t.s, "k", &again), ZST_OK, "%s", zst_error());
    cr_assert_eq(again, first);
    cr_assert_eq(k_ctr(t.s), 5);
    cr_assert_eq(k_count(&t, "\"aborted\":false"), 1, "final once");
    t_close(&t);
}

/* A refused keyed commit is refused again, with the same aborted txn,
 * and records nothing more. */
Test(store_key, refused_twice)
{
    t_store t;
    k_open(&t, 1, true);
    zst_op *a = zst_begin(t.s, "a");
    zgrt_value v;
    cr_assert_eq(zst_read(a, "ctr", &v), ZST_OK);
    int64_t tb = 0;
    cr_assert_eq(k_inc(t.s, "b", &tb), ZST_OK);
    cr_assert_eq(zst_write(a, "ctr", t_int(v.u.i + 1)), ZST_OK);
    cr_assert_eq(zst_op_key(a, "a1"), ZST_OK);
    cr_assert_eq(zst_commit(a), ZST_RETRY);
    int64_t ta = zst_txn(a);
    zst_end(a);
    int aborted = k_count(&t, "\"aborted\":true");
    cr_assert_eq(aborted, 1);
    zst_op *a2 = zst_begin(t.s, "a");
    cr_assert_eq(zst_write(a2, "ctr", t_int(100)), ZST_OK);
    cr_assert_eq(zst_op_key(a2, "a1"), ZST_OK);
    cr_assert_eq(zst_commit(a2), ZST_RETRY);
    cr_assert_eq(zst_txn(a2), ta);
    zst_end(a2);
    cr_assert_eq(k_count(&t, "\"aborted\":true"), aborted, "nothing more recorded");
    cr_assert_eq(k_ctr(t.s), 1);
    t_close(&t);
}

/* A replayed read is validated like a read: at its version the commit
 * goes through, at an older one it is refused (L1). */
Test(store_key, replayed_read_validated)
{
    t_store t;
    k_open(&t, 1, true);
    zst_op *r = zst_begin(t.s, "a");
    zgrt_value v;
    int64_t by = -1, ver = -1;
    cr_assert_eq(zst_read_version(r, "ctr", &v, &by, &ver), ZST_OK);
    zst_drop(r);
    cr_assert_eq(by, 0);
    /* the read as journaled, now: its version stands */
    zst_op *a = zst_begin(t.s, "a");
    cr_assert_eq(zst_read_replay(a, "ctr", v, by, ver), ZST_OK);
    zgrt_value again;
    cr_assert_eq(zst_read(a, "ctr", &again), ZST_OK);
    cr_assert_eq(again.u.i, v.u.i);
    cr_assert_eq(zst_write(a, "ctr", t_int(v.u.i + 1)), ZST_OK);
    cr_assert_eq(zst_commit(a), ZST_OK, "%s", zst_error());
    zst_end(a);
    /* the same journaled read again: the cell was written since */
    zst_op *b = zst_begin(t.s, "a");
    cr_assert_eq(zst_read_replay(b, "ctr", v, by, ver), ZST_OK);
    cr_assert_eq(zst_write(b, "ctr", t_int(v.u.i + 1)), ZST_OK);
    cr_assert_eq(zst_commit(b), ZST_RETRY);
    zst_end(b);
    cr_assert_eq(k_ctr(t.s), 1);
    t_close(&t);
}

/* zst_drop records nothing; zst_op_key checks its arguments. */
Test(store_key, drop_and_usage)
{
    t_store t;
    k_open(&t, 1, false);
    zst_op *a = zst_begin(t.s, "a");
    cr_assert_eq(zst_op_key(a, ""), ZST_EUSAGE);
    cr_assert_eq(zst_op_key(NULL, "k"), ZST_EUSAGE);
    cr_assert_eq(zst_read_replay(a, "nope", t_int(1), 0, 0), ZST_EUNKNOWN);
    zst_drop(a);
    cr_assert_eq(k_count(&t, "\"txn\""), 0);
    t_close(&t);
}
