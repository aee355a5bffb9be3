/* floor.c — the floor of a durable step: one committed, fsync'ed SQLite
 * transaction of one small row, on a store set up as the run store is
 * (WAL, synchronous=FULL; runtime/durable/store.c).
 *
 *   floor FILE COMMITS    prints the nanoseconds per commit */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void check(sqlite3 *db, int rc, const char *what)
{
    if (rc == SQLITE_OK || rc == SQLITE_DONE || rc == SQLITE_ROW) return;
    fprintf(stderr, "floor: %s: %s\n", what, sqlite3_errmsg(db));
    exit(1);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: floor FILE COMMITS\n");
        return 2;
    }
    int n = atoi(argv[2]);
    sqlite3 *db = NULL;
    check(db, sqlite3_open(argv[1], &db), "open");
    check(db, sqlite3_exec(db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL), "wal");
    check(db, sqlite3_exec(db, "PRAGMA synchronous=FULL", NULL, NULL, NULL), "synchronous");
    check(db,
          sqlite3_exec(db, "CREATE TABLE IF NOT EXISTS steps(k INTEGER PRIMARY KEY, v BLOB)", NULL,
                       NULL, NULL),
          "create");
    sqlite3_stmt *ins = NULL;
    check(db, sqlite3_prepare_v2(db, "INSERT INTO steps(v) VALUES (?)", -1, &ins, NULL), "prepare");
    static const char row[32] = "one journaled step, 32 bytes...";
    long long t0 = now_ns();
    for (int i = 0; i < n; i++) {
        check(db, sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL), "begin");
        sqlite3_reset(ins);
        check(db, sqlite3_bind_blob(ins, 1, row, sizeof row, SQLITE_STATIC), "bind");
        check(db, sqlite3_step(ins), "insert");
        check(db, sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), "commit");
    }
    long long t1 = now_ns();
    sqlite3_finalize(ins);
    sqlite3_close(db);
    printf("%lld\n", (t1 - t0) / (n > 0 ? n : 1));
    return 0;
}
