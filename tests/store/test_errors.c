/* Bad use of the store: every case is a clear error, never a crash. */
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "helpers.h"

static zst_store *open_mem(int level, const char *rec)
{
    char err[512];
    zst_config c = {.level = level, .oprecords = rec};
    zst_store *s = zst_open(&c, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    cr_assert_eq(zst_cell(s, "n", ZGRT_INT, t_int(0)), ZST_OK);
    return s;
}

Test(store_errors, unknown_cell_and_wrong_type)
{
    zst_store *s = open_mem(1, NULL);
    zst_op *op = zst_begin(s, "a");
    zgrt_value v;
    cr_assert_eq(zst_read(op, "nope", &v), ZST_EUNKNOWN);
    cr_assert(strstr(zst_error(), "unknown cell 'nope'"), "%s", zst_error());
    cr_assert_eq(zst_write(op, "nope", t_int(1)), ZST_EUNKNOWN);
    zgrt_value b = {.tag = ZGRT_BOOL, .u.i = 1};
    cr_assert_eq(zst_write(op, "n", b), ZST_ETYPE);
    cr_assert(strstr(zst_error(), "bool value where a int"), "%s", zst_error());
    zgrt_value f = {.tag = ZGRT_FLOAT, .u.f = 1.0 / 0.0};
    cr_assert_eq(zst_cell(s, "x", ZGRT_FLOAT, f), ZST_ETYPE);
    cr_assert_eq(zst_cell(s, "n", ZGRT_STR, t_int(0)), ZST_ETYPE);
    cr_assert_eq(zst_plan(op, "missing"), ZST_EUNKNOWN);
    zst_end(op);
    zst_close(s);
}

Test(store_errors, out_of_order_calls)
{
    zst_store *s = open_mem(3, NULL);
    zst_op *op = zst_begin(s, "a");
    cr_assert_eq(zst_retract(op), ZST_EUSAGE); /* not committed */
    int k;
    cr_assert_eq(zst_issue(op, "t", t_int(1), &k), ZST_OK);
    cr_assert_eq(zst_commit(op), ZST_EUSAGE); /* effect not completed */
    cr_assert(strstr(zst_error(), "completed"), "%s", zst_error());
    cr_assert_eq(zst_complete(op, k), ZST_OK);
    cr_assert_eq(zst_complete(op, k), ZST_EUSAGE);
    cr_assert_eq(zst_complete(op, 5), ZST_EUSAGE);
    cr_assert_eq(zst_write(op, "n", t_int(1)), ZST_OK);
    cr_assert_eq(zst_commit(op), ZST_OK);
    cr_assert_eq(zst_write(op, "n", t_int(2)), ZST_EUSAGE);
    cr_assert(strstr(zst_error(), "after the commit"), "%s", zst_error());
    cr_assert_eq(zst_commit(op), ZST_EUSAGE);
    int64_t txn = zst_txn(op);
    cr_assert_eq(zst_end(op), ZST_OK);
    cr_assert_eq(zst_retract_txn(s, txn), ZST_EUSAGE); /* final */
    cr_assert(strstr(zst_error(), "is final"), "%s", zst_error());
    cr_assert_eq(zst_retract_txn(s, 999), ZST_EUNKNOWN);
    cr_assert_eq(zst_tool_remove(s, "never"), ZST_EUNKNOWN);
    cr_assert_eq(zst_tool_put(s, "a@b", NULL), ZST_EUSAGE);
    zst_close(s);
    char err[128];
    zst_config c = {.level = 5};
    cr_assert_null(zst_open(&c, err, sizeof err));
    cr_assert(strstr(err, "0..4"));
}

Test(store_errors, sqlite_not_writable)
{
    char err[512];
    zst_config c = {.level = 1, .sqlite = "/nonexistent-dir/zst/store.db"};
    cr_assert_null(zst_open(&c, err, sizeof err));
    cr_assert(strstr(err, "cannot open"), "%s", err);
    char *d = t_dir();
    c.sqlite = d; /* a directory */
    cr_assert_null(zst_open(&c, err, sizeof err));
    cr_assert(strstr(err, d), "%s", err);
    c.sqlite = NULL;
    char rec[600];
    snprintf(rec, sizeof rec, "%s/missing/ops.jsonl", d);
    c.oprecords = rec;
    cr_assert_null(zst_open(&c, err, sizeof err));
    cr_assert(strstr(err, "OpRecord file"), "%s", err);
    t_rmdir(d);
}

Test(store_errors, record_write_fails)
{
    /* /dev/full: every write fails with ENOSPC */
    zst_store *s = open_mem(1, "/dev/full");
    zst_op *op = zst_begin(s, "a");
    cr_assert_eq(zst_write(op, "n", t_int(1)), ZST_OK);
    cr_assert_eq(zst_commit(op), ZST_OK);
    cr_assert_eq(zst_end(op), ZST_EIO);
    cr_assert(strstr(zst_error(), "No space left"), "%s", zst_error());
    op = zst_begin(s, "a");
    cr_assert_eq(zst_write(op, "n", t_int(2)), ZST_OK);
    cr_assert_eq(zst_commit_end(op), ZST_EIO);
    cr_assert(strstr(zst_error(), "No space left"), "%s", zst_error());
    /* nothing of the failed commit stands */
    op = zst_begin(s, "b");
    zgrt_value v;
    cr_assert_eq(zst_read(op, "n", &v), ZST_OK);
    cr_assert_eq(v.u.i, 1);
    zst_end(op);
    zst_close(s);
}

Test(store_errors, corrupt_and_mismatched)
{
    char *d = t_dir();
    char db[600], err[512];
    snprintf(db, sizeof db, "%s/store.db", d);
    /* not a database */
    FILE *f = fopen(db, "w");
    cr_assert_not_null(f);
    for (int i = 0; i < 200; i++) fputs("this is not a SQLite file\n", f);
    cr_assert_eq(fclose(f), 0);
    zst_config c = {.level = 2, .sqlite = db};
    cr_assert_null(zst_open(&c, err, sizeof err));
    cr_assert(strstr(err, "not a database"), "%s", err);
    cr_assert_eq(unlink(db), 0);
    /* a store of another level; a cell of another type */
    zst_store *s = zst_open(&c, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    cr_assert_eq(zst_cell(s, "n", ZGRT_INT, t_int(3)), ZST_OK);
    c.level = 3;
    cr_assert_null(zst_open(&c, err, sizeof err));
    cr_assert(strstr(err, "has level L2"), "%s", err);
    c.level = 2;
    zst_store *s2 = zst_open(&c, err, sizeof err);
    cr_assert_not_null(s2, "%s", err);
    zgrt_value b = {.tag = ZGRT_BOOL};
    cr_assert_eq(zst_cell(s2, "n", ZGRT_BOOL, b), ZST_ETYPE);
    cr_assert(strstr(zst_error(), "int cell in the store"), "%s", zst_error());
    zst_close(s2);
    /* a document damaged behind the library's back */
    sqlite3 *raw;
    cr_assert_eq(sqlite3_open(db, &raw), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(raw, "UPDATE zst_docs SET body = '{broken' WHERE kind = 'cell'", NULL,
                              NULL, NULL),
                 SQLITE_OK);
    sqlite3_close(raw);
    zst_op *op = zst_begin(s, "a");
    zgrt_value v;
    cr_assert_eq(zst_read(op, "n", &v), ZST_ECORRUPT);
    cr_assert(strstr(zst_error(), "not a JSON object"), "%s", zst_error());
    zst_end(op);
    zst_close(s);
    t_rmdir(d);
}

Test(store_errors, sqlite_state_is_durable)
{
    char *d = t_dir();
    char db[600], err[512];
    snprintf(db, sizeof db, "%s/store.db", d);
    zst_config c = {.level = 1, .sqlite = db};
    zst_store *s = zst_open(&c, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    cr_assert_eq(zst_cell(s, "name", ZGRT_STR, (zgrt_value){.tag = ZGRT_STR, .u.s = NULL}),
                 ZST_ETYPE);
    static const struct {
        int64_t len;
        char data[4];
    } init = {3, "abc"}, next = {3, "xyz"};
    cr_assert_eq(zst_cell(s, "name", ZGRT_STR,
                          (zgrt_value){.tag = ZGRT_STR, .u.s = (const zgrt_str *)&init}),
                 ZST_OK);
    zst_op *op = zst_begin(s, "a");
    cr_assert_eq(
        zst_write(op, "name", (zgrt_value){.tag = ZGRT_STR, .u.s = (const zgrt_str *)&next}),
        ZST_OK);
    cr_assert_eq(zst_commit(op), ZST_OK);
    zst_end(op);
    int64_t ver;
    cr_assert_eq(zst_tool_put(s, "mail", &ver), ZST_OK);
    zst_close(s);
    /* another handle, after the first is gone, sees the committed state */
    s = zst_open(&c, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    cr_assert_eq(zst_cell(s, "name", ZGRT_STR,
                          (zgrt_value){.tag = ZGRT_STR, .u.s = (const zgrt_str *)&init}),
                 ZST_OK);
    op = zst_begin(s, "b");
    zgrt_value v;
    cr_assert_eq(zst_read(op, "name", &v), ZST_OK);
    cr_assert_str_eq(v.u.s->data, "xyz");
    cr_assert_eq(zst_plan(op, "mail"), ZST_OK);
    zst_end(op);
    cr_assert_eq(zst_tool_put(s, "mail", &ver), ZST_OK);
    cr_assert_eq(ver, 2);
    zst_close(s);
    t_rmdir(d);
}

Test(store_errors, sqlite_busy_timeout)
{
    char *d = t_dir();
    char db[600], err[512];
    snprintf(db, sizeof db, "%s/store.db", d);
    zst_config c = {.level = 1, .sqlite = db, .busy_ms = 200};
    zst_store *s = zst_open(&c, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    cr_assert_eq(zst_cell(s, "n", ZGRT_INT, t_int(0)), ZST_OK);
    /* another connection holds the write lock past the busy timeout */
    sqlite3 *raw;
    cr_assert_eq(sqlite3_open(db, &raw), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(raw, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
    zst_op *op = zst_begin(s, "a");
    cr_assert_not_null(op, "%s", zst_error()); /* reads do not wait (WAL) */
    cr_assert_eq(zst_write(op, "n", t_int(1)), ZST_OK);
    cr_assert_eq(zst_commit(op), ZST_EIO);
    cr_assert(strstr(zst_error(), "locked"), "%s", zst_error());
    cr_assert_eq(zst_tool_put(s, "t", NULL), ZST_EIO);
    /* released: the operation can commit */
    cr_assert_eq(sqlite3_exec(raw, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(raw);
    cr_assert_eq(zst_commit(op), ZST_OK, "%s", zst_error());
    cr_assert_eq(zst_end(op), ZST_OK);
    zst_close(s);
    t_rmdir(d);
}

/* Processes that open a new store file at the same moment (per-lifeline
 * processes starting together): every one opens it, none answers "database
 * is locked" while another sets the file up. */
Test(store_errors, sqlite_opened_by_many_processes_at_once, .timeout = 60)
{
    enum { PROCS = 8, ROUNDS = 10 };
    char *d = t_dir();
    for (int round = 0; round < ROUNDS; round++) {
        char db[600];
        snprintf(db, sizeof db, "%s/fresh%d.db", d, round);
        int go[2];
        cr_assert_eq(pipe(go), 0);
        pid_t pids[PROCS];
        for (int i = 0; i < PROCS; i++) {
            pids[i] = fork();
            cr_assert_geq(pids[i], 0);
            if (pids[i] == 0) {
                char b, err[512];
                close(go[1]);
                /* all wait on the pipe, and start when it is closed */
                if (read(go[0], &b, 1) < 0) _exit(3);
                zst_config c = {.level = 1, .sqlite = db, .busy_ms = 5000};
                zst_store *s = zst_open(&c, err, sizeof err);
                if (!s) {
                    fprintf(stderr, "process %d: %s\n", i, err);
                    _exit(1);
                }
                int rc = zst_cell(s, "n", ZGRT_INT, t_int(0));
                if (rc != ZST_OK) fprintf(stderr, "process %d: %s\n", i, zst_error());
                zst_close(s);
                _exit(rc == ZST_OK ? 0 : 2);
            }
        }
        close(go[0]);
        close(go[1]);
        for (int i = 0; i < PROCS; i++) {
            int st = 0;
            cr_assert_eq(waitpid(pids[i], &st, 0), pids[i]);
            cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0,
                      "round %d: process %d could not open the new store (status %d)", round, i,
                      st);
        }
    }
    t_rmdir(d);
}
