/* sqlite.c — the SQLite backend: one table of documents
 *
 *     zst_docs(kind TEXT, key TEXT, body TEXT, PRIMARY KEY (kind, key))
 *
 * in a file shared by the processes of one host (WAL; every section is a
 * transaction: BEGIN IMMEDIATE for a writing one, BEGIN for a reading
 * one; a lock held by another process is waited for up to busy_ms).  A
 * committed section is durable (synchronous=FULL).  The handle's threads
 * share its connection under a mutex. */
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "zst_internal.h"

typedef struct {
    zst_backend b;
    pthread_mutex_t mu;
    sqlite3 *db;
    sqlite3_stmt *get, *put, *del;
    char path[512];
} zst_sql;

static int sql_fail(zst_sql *q, const char *what)
{
    int rc = sqlite3_extended_errcode(q->db);
    int code =
        (rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB ? ZST_ECORRUPT : ZST_EIO;
    return zst_fail(code, "store %s: %s: %s", q->path, what, sqlite3_errmsg(q->db));
}

static int sql_exec(zst_sql *q, const char *sql)
{
    if (sqlite3_exec(q->db, sql, NULL, NULL, NULL) != SQLITE_OK) return sql_fail(q, sql);
    return ZST_OK;
}

static int sql_lock(zst_backend *b, bool write)
{
    zst_sql *q = (zst_sql *)b;
    pthread_mutex_lock(&q->mu);
    int rc = sql_exec(q, write ? "BEGIN IMMEDIATE" : "BEGIN");
    if (rc != ZST_OK) pthread_mutex_unlock(&q->mu);
    return rc;
}

static int sql_unlock(zst_backend *b, bool commit)
{
    zst_sql *q = (zst_sql *)b;
    int rc = ZST_OK;
    if (commit) {
        rc = sql_exec(q, "COMMIT");
        if (rc != ZST_OK) sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
    } else if (sqlite3_get_autocommit(q->db) == 0) {
        sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
    }
    pthread_mutex_unlock(&q->mu);
    return rc;
}

static int sql_get(zst_backend *b, const char *kind, const char *key, json_t **out)
{
    zst_sql *q = (zst_sql *)b;
    *out = NULL;
    sqlite3_reset(q->get);
    sqlite3_bind_text(q->get, 1, kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(q->get, 2, key, -1, SQLITE_STATIC);
    int rc = sqlite3_step(q->get);
    if (rc == SQLITE_DONE) {
        sqlite3_reset(q->get);
        return 1;
    }
    if (rc != SQLITE_ROW) {
        int e = sql_fail(q, "reading");
        sqlite3_reset(q->get);
        return e;
    }
    const char *body = (const char *)sqlite3_column_text(q->get, 0);
    json_error_t je;
    json_t *doc = body ? json_loads(body, 0, &je) : NULL;
    sqlite3_reset(q->get);
    if (!doc || !json_is_object(doc)) {
        json_decref(doc);
        return zst_fail(ZST_ECORRUPT, "store %s: the %s document '%s' is not a JSON object",
                        q->path, kind, key);
    }
    *out = doc;
    return ZST_OK;
}

static int sql_put(zst_backend *b, const char *kind, const char *key, json_t *doc)
{
    zst_sql *q = (zst_sql *)b;
    sqlite3_stmt *st = doc ? q->put : q->del;
    char *body = NULL;
    if (doc && !(body = json_dumps(doc, JSON_COMPACT)))
        return zst_fail(ZST_ENOMEM, "out of memory");
    sqlite3_reset(st);
    sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
    if (doc) sqlite3_bind_text(st, 3, body, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st);
    free(body);
    int ret = rc == SQLITE_DONE ? ZST_OK : sql_fail(q, "writing");
    sqlite3_reset(st);
    return ret;
}

static void sql_close(zst_backend *b)
{
    zst_sql *q = (zst_sql *)b;
    sqlite3_finalize(q->get);
    sqlite3_finalize(q->put);
    sqlite3_finalize(q->del);
    sqlite3_close(q->db);
    pthread_mutex_destroy(&q->mu);
    free(q);
}

zst_backend *zst_sqlite_open(const char *path, int busy_ms, char *err, size_t errlen)
{
    zst_sql *q = calloc(1, sizeof *q);
    if (!q) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    snprintf(q->path, sizeof q->path, "%s", path);
    pthread_mutex_init(&q->mu, NULL);
    q->b = (zst_backend){sql_lock, sql_unlock, sql_get, sql_put, sql_close};
    int rc = sqlite3_open_v2(
        path, &q->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "store %s: cannot open: %s", path,
                 q->db ? sqlite3_errmsg(q->db) : sqlite3_errstr(rc));
        sql_close(&q->b);
        return NULL;
    }
    sqlite3_busy_timeout(q->db, busy_ms > 0 ? busy_ms : 10000);
    const char *setup[] = {
        "PRAGMA journal_mode=WAL",
        "PRAGMA synchronous=FULL",
        "CREATE TABLE IF NOT EXISTS zst_docs (kind TEXT NOT NULL, key TEXT NOT NULL, "
        "body TEXT NOT NULL, PRIMARY KEY (kind, key)) WITHOUT ROWID",
    };
    /* Processes that open a new file at once race to set it up: switching
     * to WAL can answer SQLITE_BUSY without waiting through the busy
     * handler, so each statement is tried again until busy_ms have
     * passed. */
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long limit_ms = busy_ms > 0 ? busy_ms : 10000;
    for (size_t i = 0; i < sizeof setup / sizeof *setup; i++) {
        /* journal_mode answers a row; sqlite3_exec steps through it */
        for (long wait_us = 100;; wait_us = wait_us < 20000 ? wait_us * 2 : 20000) {
            rc = sqlite3_exec(q->db, setup[i], NULL, NULL, NULL);
            clock_gettime(CLOCK_MONOTONIC, &now);
            long spent_ms =
                (now.tv_sec - t0.tv_sec) * 1000L + (now.tv_nsec - t0.tv_nsec) / 1000000L;
            if (((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED) ||
                spent_ms >= limit_ms)
                break;
            struct timespec d = {0, wait_us * 1000L};
            nanosleep(&d, NULL);
        }
        if (rc != SQLITE_OK) {
            snprintf(err, errlen, "store %s: %s", path, sqlite3_errmsg(q->db));
            sql_close(&q->b);
            return NULL;
        }
    }
    if (sqlite3_prepare_v2(q->db, "SELECT body FROM zst_docs WHERE kind = ?1 AND key = ?2", -1,
                           &q->get, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(q->db,
                           "INSERT INTO zst_docs (kind, key, body) VALUES (?1, ?2, ?3) "
                           "ON CONFLICT (kind, key) DO UPDATE SET body = excluded.body",
                           -1, &q->put, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(q->db, "DELETE FROM zst_docs WHERE kind = ?1 AND key = ?2", -1, &q->del,
                           NULL) != SQLITE_OK) {
        snprintf(err, errlen, "store %s: %s", path, sqlite3_errmsg(q->db));
        sql_close(&q->b);
        return NULL;
    }
    return &q->b;
}
