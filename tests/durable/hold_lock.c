/* hold_lock — holds the write lock of a SQLite file for a while, as
 * another process of a run store would (tests/durable/run_errors.sh).
 *
 *   hold_lock FILE SECONDS    prints "locked" once it holds the lock */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: hold_lock FILE SECONDS\n");
        return 2;
    }
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
        sqlite3_exec(db, "BEGIN EXCLUSIVE", NULL, NULL, NULL) != SQLITE_OK) {
        fprintf(stderr, "hold_lock: %s\n", db ? sqlite3_errmsg(db) : "cannot open");
        return 1;
    }
    printf("locked\n");
    fflush(stdout);
    sleep((unsigned)atoi(argv[2]));
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(db);
    return 0;
}
