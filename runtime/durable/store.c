/* store.c — the run store: one SQLite file, every SQL statement of the
 * runtime.  `zgc runs`, `zgc tasks` and `zgc answer` (driver/store.c)
 * read and write the same tables with their own statements; this schema
 * is the contract between the two, documented in docs/runtime.md
 * ("Durable runs") and versioned by the table zgc_schema.
 *
 *   zgc_schema(version)                       one row: ZRD_SCHEMA_VERSION
 *   runs(rid, id, workflow, source, fingerprint, fingerprint_parts, mode,
 *        lifelines, cwd, executable, options, status, attempts, result,
 *        error, created, updated)             one row a run
 *   lifelines(rid, lifeline, name, executable, options, status, attempt,
 *        pid, pid_start, events, state, recent, error, updated)
 *   results(rid, component, value)            per-lifeline mode: the
 *                                             result components
 *   journal(rid, lifeline, chunk, data)       the entries of one commit
 *                                             of one lifeline (codec.c)
 *   channels(rid, receiver, sender, chan, taken)   per-lifeline mode: the
 *                                             messages a lifeline's journal
 *                                             holds per channel (a resumed
 *                                             sender does not send them
 *                                             again)
 *   tasks(rid, task, lifeline, action, key, kind, prompt, type, members,
 *        current, status, answer, created, answered)
 *
 * The connection: WAL (readers never block the writer, and the commands
 * read while a run writes), synchronous=FULL (a commit is on disk when
 * COMMIT returns: the journal's promise), a busy timeout of
 * ZRD_BUSY_TIMEOUT_MS (or $ZGC_STORE_TIMEOUT seconds) for the processes of one run and the commands that
 * write (zgc answer, zgc runs cancel).  Every write is a transaction begun
 * IMMEDIATE (the write lock first, so two writers never deadlock on an
 * upgrade).  The connection is shared by a run's threads: a mutex keeps
 * each call, transaction and all, to one thread.  Every return code is
 * checked; a failure is a message naming the store, the step and
 * SQLite's reason, with the causes a user can act on said plainly: the
 * store is locked, damaged, or the disk is full. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "durable.h"

struct zrd_store {
    zrd_backend be; /* another backend (be.u set): every call goes to it */
    sqlite3 *db;
    char *path;
    int busy_ms;             /* ZRD_BUSY_TIMEOUT_MS, or $ZGC_STORE_TIMEOUT seconds */
    struct timespec busy_t0; /* when the current wait for a lock began */
    pthread_mutex_t mu;
    /* prepared statements of the commit, kept (by SQL text) */
    const char *sql[8];
    sqlite3_stmt *stmt[8];
    int nstmt;
};

static const char SCHEMA[] =
    "CREATE TABLE zgc_schema(version INTEGER NOT NULL);"
    "CREATE TABLE runs(rid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, workflow TEXT NOT NULL,"
    " source TEXT NOT NULL, fingerprint TEXT NOT NULL, fingerprint_parts TEXT NOT NULL,"
    " mode TEXT NOT NULL, lifelines INTEGER NOT NULL, cwd TEXT NOT NULL, executable TEXT,"
    " options TEXT NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL, result TEXT,"
    " error TEXT, created REAL NOT NULL, updated REAL NOT NULL);"
    "CREATE TABLE lifelines(rid INTEGER NOT NULL, lifeline INTEGER NOT NULL, name TEXT NOT NULL,"
    " executable TEXT, options TEXT, status TEXT NOT NULL, attempt INTEGER NOT NULL,"
    " pid INTEGER, pid_start INTEGER, events INTEGER NOT NULL DEFAULT 0, state TEXT, recent TEXT,"
    " error TEXT, updated REAL NOT NULL, PRIMARY KEY(rid, lifeline));"
    "CREATE TABLE results(rid INTEGER NOT NULL, component INTEGER NOT NULL, value TEXT NOT NULL,"
    " PRIMARY KEY(rid, component));"
    "CREATE TABLE journal(rid INTEGER NOT NULL, lifeline INTEGER NOT NULL, chunk INTEGER NOT NULL,"
    " data BLOB NOT NULL, PRIMARY KEY(rid, lifeline, chunk)) WITHOUT ROWID;"
    "CREATE TABLE channels(rid INTEGER NOT NULL, receiver INTEGER NOT NULL,"
    " sender INTEGER NOT NULL, chan INTEGER NOT NULL, taken INTEGER NOT NULL,"
    " PRIMARY KEY(rid, receiver, sender, chan)) WITHOUT ROWID;"
    "CREATE TABLE tasks(rid INTEGER NOT NULL, task INTEGER NOT NULL, lifeline TEXT NOT NULL,"
    " action TEXT NOT NULL, key TEXT NOT NULL, kind TEXT NOT NULL, prompt TEXT NOT NULL,"
    " type TEXT NOT NULL, members TEXT, current TEXT, status TEXT NOT NULL, answer TEXT,"
    " created REAL NOT NULL, answered REAL, PRIMARY KEY(rid, task), UNIQUE(rid, key));";

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The message of a failed step: what it was, and SQLite's reason, with
 * the causes a user can act on said plainly. */
static int fail(zrd_store *st, int rc, const char *step, char *err, size_t errlen)
{
    const char *why = st->db ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc);
    switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        zri_err(err, errlen,
                "run store %s: %s: the store is locked by another process (waited %g s)", st->path,
                step, st->busy_ms / 1000.0);
        break;
    case SQLITE_FULL:
        zri_err(err, errlen, "run store %s: %s: the disk is full (%s)", st->path, step, why);
        break;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
        zri_err(err, errlen, "run store %s is damaged: %s: %s", st->path, step, why);
        break;
    case SQLITE_IOERR:
        zri_err(err, errlen, "run store %s: %s: input/output error (%s%s%s)", st->path, step, why,
                errno ? ": " : "", errno ? strerror(errno) : "");
        break;
    default: zri_err(err, errlen, "run store %s: %s: %s", st->path, step, why); break;
    }
    return -1;
}

/* A kept statement for sql (a constant of this file), reset. */
static sqlite3_stmt *kept(zrd_store *st, const char *sql, int *rc)
{
    for (int i = 0; i < st->nstmt; i++)
        if (st->sql[i] == sql) {
            sqlite3_reset(st->stmt[i]);
            sqlite3_clear_bindings(st->stmt[i]);
            *rc = SQLITE_OK;
            return st->stmt[i];
        }
    sqlite3_stmt *s = NULL;
    *rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
    if (*rc != SQLITE_OK) return NULL;
    if (st->nstmt < (int)(sizeof st->stmt / sizeof st->stmt[0])) {
        st->sql[st->nstmt] = sql;
        st->stmt[st->nstmt++] = s;
    }
    return s;
}

/* Releases a statement from kept() unless it is kept. */
static void done_stmt(zrd_store *st, sqlite3_stmt *s)
{
    for (int i = 0; i < st->nstmt; i++)
        if (st->stmt[i] == s) {
            sqlite3_reset(s);
            return;
        }
    sqlite3_finalize(s);
}

static int exec(zrd_store *st, const char *sql, const char *step, char *err, size_t errlen)
{
    int rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : fail(st, rc, step, err, errlen);
}

static int begin(zrd_store *st, char *err, size_t errlen)
{
    return exec(st, "BEGIN IMMEDIATE", "beginning a transaction", err, errlen);
}

static int commit(zrd_store *st, char *err, size_t errlen)
{
    int rc = sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL);
    if (rc == SQLITE_OK) return 0;
    fail(st, rc, "committing", err, errlen);
    sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}

static int rollback(zrd_store *st)
{
    sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}

static char *col_text(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    return t ? zri_xstrndup((const char *)t, (size_t)sqlite3_column_bytes(s, i)) : NULL;
}

static int bind_text(sqlite3_stmt *s, int i, const char *t)
{
    return t ? sqlite3_bind_text(s, i, t, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(s, i);
}

/* Runs a statement whose parameters are bound to its end (no rows). */
static int step_done(zrd_store *st, sqlite3_stmt *s, const char *step, char *err, size_t errlen)
{
    int rc = sqlite3_step(s);
    if (rc != SQLITE_DONE) {
        fail(st, rc, step, err, errlen);
        done_stmt(st, s);
        return -1;
    }
    done_stmt(st, s);
    return 0;
}

/* ---- opening ------------------------------------------------------------ */

char *zrd_store_path(const char *given)
{
    const char *env = getenv("ZGC_STORE");
    const char *p = given && *given ? given : env && *env ? env : ".zgc/runs.db";
    if (p[0] == '/') return zri_xstrndup(p, strlen(p));
    char *cwd = getcwd(NULL, 0);
    if (!cwd) return zri_xstrndup(p, strlen(p));
    zri_buf b = {0};
    zri_buf_printf(&b, "%s/%s", cwd, p);
    free(cwd);
    return zri_buf_take(&b);
}

/* mkdir -p of path's directory. */
static int make_dir(const char *path, char *err, size_t errlen)
{
    char *d = zri_xstrndup(path, strlen(path));
    char *slash = strrchr(d, '/');
    if (!slash || slash == d) {
        free(d);
        return 0;
    }
    *slash = 0;
    for (char *p = d + 1;; p++) {
        if (*p == '/' || *p == 0) {
            char c = *p;
            *p = 0;
            if (mkdir(d, 0777) != 0 && errno != EEXIST) {
                zri_err(err, errlen, "cannot create the directory %s of the run store: %s", d,
                        strerror(errno));
                free(d);
                return -1;
            }
            *p = c;
            if (!c) break;
        }
    }
    free(d);
    return 0;
}

/* The schema: created in an empty store, checked in another. */
static int schema(zrd_store *st, char *err, size_t errlen)
{
    if (begin(st, err, errlen) < 0) return -1;
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(
        st->db, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='zgc_schema'", -1,
        &s, NULL);
    if (rc != SQLITE_OK || (rc = sqlite3_step(s)) != SQLITE_ROW) {
        fail(st, rc, "reading the schema", err, errlen);
        sqlite3_finalize(s);
        return rollback(st);
    }
    int have = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
    if (!have) {
        if (exec(st, SCHEMA, "creating the schema", err, errlen) < 0) return rollback(st);
        char sql[80];
        snprintf(sql, sizeof sql, "INSERT INTO zgc_schema VALUES (%d)", ZRD_SCHEMA_VERSION);
        if (exec(st, sql, "creating the schema", err, errlen) < 0) return rollback(st);
    } else {
        rc = sqlite3_prepare_v2(st->db, "SELECT version FROM zgc_schema", -1, &s, NULL);
        if (rc != SQLITE_OK || (rc = sqlite3_step(s)) != SQLITE_ROW) {
            fail(st, rc == SQLITE_DONE ? SQLITE_CORRUPT : rc, "reading the schema version", err,
                 errlen);
            sqlite3_finalize(s);
            return rollback(st);
        }
        int v = sqlite3_column_int(s, 0);
        sqlite3_finalize(s);
        if (v != ZRD_SCHEMA_VERSION) {
            zri_err(err, errlen,
                    "run store %s has schema version %d; this runtime reads version %d", st->path,
                    v, ZRD_SCHEMA_VERSION);
            return rollback(st);
        }
    }
    return commit(st, err, errlen);
}

/* The busy handler: waits for another process's lock by polling it
 * every 50 µs at first, up to every 1 ms, until busy_ms have passed.
 * (SQLite's own busy timeout sleeps 1, 2, 5, 10, 15, 20, 25 ms and more
 * between attempts: the processes of a per-lifeline run, whose commits
 * hold the write lock for one fsync each, lost whole milliseconds a
 * commit waiting for a lock long free.)  The poll is a file lock attempt
 * of SQLite's, cheap. */
static int busy_wait(void *u, int count)
{
    zrd_store *st = u;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (count == 0) st->busy_t0 = now;
    double waited_ms = (double)(now.tv_sec - st->busy_t0.tv_sec) * 1e3 +
                       (double)(now.tv_nsec - st->busy_t0.tv_nsec) / 1e6;
    if (waited_ms >= st->busy_ms) return 0;
    long us = count < 5 ? 50L << count : 1000L; /* 50, 100, 200, 400, 800, then 1000 µs */
    double left_us = ((double)st->busy_ms - waited_ms) * 1e3;
    if ((double)us > left_us) us = (long)left_us + 1;
    struct timespec d = {us / 1000000L, (us % 1000000L) * 1000L};
    nanosleep(&d, NULL);
    return 1;
}

zrd_store *zrd_store_open(const char *path, char *err, size_t errlen)
{
    if (make_dir(path, err, errlen) < 0) return NULL;
    zrd_store *st = zri_xcalloc(1, sizeof *st);
    st->path = zri_xstrndup(path, strlen(path));
    pthread_mutex_init(&st->mu, NULL);
    int rc = sqlite3_open_v2(
        path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL);
    if (rc != SQLITE_OK) {
        zri_err(err, errlen, "cannot open the run store %s: %s", path,
                st->db ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc));
        zrd_store_close(st);
        return NULL;
    }
    sqlite3_extended_result_codes(st->db, 1);
    st->busy_ms = ZRD_BUSY_TIMEOUT_MS;
    const char *t = getenv("ZGC_STORE_TIMEOUT");
    double secs;
    if (t && *t && zri_parse_float(t, strlen(t), &secs) == 0 && secs >= 0 && secs <= 86400)
        st->busy_ms = (int)(secs * 1000);
    if ((rc = sqlite3_busy_handler(st->db, busy_wait, st)) != SQLITE_OK) {
        fail(st, rc, "setting the busy timeout", err, errlen);
        zrd_store_close(st);
        return NULL;
    }
    /* WAL: asked for unless the store has it (the change needs a lock the
     * busy handler does not always wait for: while another process
     * recovers the WAL of a killed one, SQLite may answer busy at once, so
     * this step is retried until the busy timeout passes) */
    int wal = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (const char *sql = "PRAGMA journal_mode";;) {
        sqlite3_stmt *s = NULL;
        rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
        if (rc == SQLITE_OK) rc = sqlite3_step(s);
        const char *mode = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(s, 0) : NULL;
        wal = mode && strcmp(mode, "wal") == 0;
        sqlite3_finalize(s);
        if (rc == SQLITE_ROW && (wal || strcmp(sql, "PRAGMA journal_mode") != 0)) break;
        if (rc == SQLITE_ROW) {
            sql = "PRAGMA journal_mode=WAL";
            continue;
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double waited = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        if ((rc & 0xff) != SQLITE_BUSY || waited * 1000 > st->busy_ms) {
            fail(st, rc, "switching to WAL mode", err, errlen);
            zrd_store_close(st);
            return NULL;
        }
        struct timespec d = {0, 20000000L};
        nanosleep(&d, NULL);
    }
    if (!wal) {
        zri_err(err, errlen, "run store %s: the file system does not allow WAL mode", path);
        zrd_store_close(st);
        return NULL;
    }
    if (exec(st, "PRAGMA synchronous=FULL", "setting synchronous=FULL", err, errlen) < 0 ||
        schema(st, err, errlen) < 0) {
        zrd_store_close(st);
        return NULL;
    }
    return st;
}

zrd_store *zrd_store_backend(const zrd_backend *be)
{
    zrd_store *st = zri_xcalloc(1, sizeof *st);
    st->be = *be;
    return st;
}

int zrd_store_is_file(const zrd_store *st) { return st->be.u == NULL; }

void zrd_store_close(zrd_store *st)
{
    if (!st) return;
    if (st->be.u) {
        st->be.close(st->be.u);
        free(st);
        return;
    }
    for (int i = 0; i < st->nstmt; i++) sqlite3_finalize(st->stmt[i]);
    if (st->db) sqlite3_close(st->db);
    pthread_mutex_destroy(&st->mu);
    free(st->path);
    free(st);
}

const char *zrd_store_file(const zrd_store *st)
{
    return st->be.u ? st->be.where(st->be.u) : st->path;
}

/* ---- runs ---------------------------------------------------------------- */

void zrd_runrow_free(zrd_runrow *r)
{
    char **f[] = {&r->id,     &r->workflow, &r->source,     &r->fingerprint, &r->fingerprint_parts,
                  &r->mode,   &r->cwd,      &r->executable, &r->options,     &r->status,
                  &r->result, &r->error};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        free(*f[i]);
        *f[i] = NULL;
    }
}

static const char SQL_FIND[] =
    "SELECT rid, id, workflow, source, fingerprint, fingerprint_parts, mode, cwd, executable,"
    " options, status, result, error, attempts FROM runs WHERE id = ?";

int zrd_store_find(zrd_store *st, const char *id, zrd_runrow *r, char *err, size_t errlen)
{
    if (st->be.u) return st->be.find(st->be.u, id, r, err, errlen);
    memset(r, 0, sizeof *r);
    pthread_mutex_lock(&st->mu);
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(st->db, SQL_FIND, -1, &s, NULL);
    if (rc == SQLITE_OK) rc = bind_text(s, 1, id);
    if (rc == SQLITE_OK) rc = sqlite3_step(s);
    int found = 0;
    if (rc == SQLITE_ROW) {
        found = 1;
        r->rid = sqlite3_column_int64(s, 0);
        char **f[] = {
            &r->id,     &r->workflow, &r->source,     &r->fingerprint, &r->fingerprint_parts,
            &r->mode,   &r->cwd,      &r->executable, &r->options,     &r->status,
            &r->result, &r->error};
        for (int i = 0; i < 12; i++) *f[i] = col_text(s, i + 1);
        r->attempts = sqlite3_column_int(s, 13);
    } else if (rc != SQLITE_DONE) {
        fail(st, rc, "reading the run", err, errlen);
        found = -1;
    }
    sqlite3_finalize(s);
    pthread_mutex_unlock(&st->mu);
    return found;
}

static const char SQL_NEW_RUN[] =
    "INSERT INTO runs(id, workflow, source, fingerprint, fingerprint_parts, mode, lifelines, cwd,"
    " executable, options, status, attempts, created, updated)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', 1, ?, ?)";
static const char SQL_RESUME_RUN[] =
    "UPDATE runs SET status = 'running', attempts = max(attempts + ?, ?), error = NULL,"
    " updated = ? WHERE rid = ?";
static const char SQL_LIFE_GET[] = "SELECT attempt FROM lifelines WHERE rid = ? AND lifeline = ?";
static const char SQL_LIFE_NEW[] =
    "INSERT INTO lifelines(rid, lifeline, name, executable, options, status, attempt, pid,"
    " pid_start, state, updated) VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?)";
static const char SQL_LIFE_RESUME[] =
    "UPDATE lifelines SET status = 'running', attempt = attempt + 1, pid = ?, pid_start = ?,"
    " state = 'running', error = NULL, updated = ? WHERE rid = ? AND lifeline = ?";

/* 1 + the attempt of lifeline l's row (whose attempt is 0 when the row
 * was made before its process started), 0 when it has none, -1 on
 * error. */
static int life_attempt(zrd_store *st, int64_t rid, int32_t l, char *err, size_t errlen)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(st->db, SQL_LIFE_GET, -1, &s, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 1, rid);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(s, 2, l);
    if (rc == SQLITE_OK) rc = sqlite3_step(s);
    int a = rc == SQLITE_ROW ? 1 + sqlite3_column_int(s, 0) : rc == SQLITE_DONE ? 0 : -1;
    if (a < 0) fail(st, rc, "reading a lifeline", err, errlen);
    sqlite3_finalize(s);
    return a;
}

/* Inserts a lifeline's row: its attempt (0: its process has not started),
 * its process. */
static int new_life(zrd_store *st, int64_t rid, const zrd_liferow *lr, int attempt, double t,
                    char *err, size_t errlen)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(st->db, SQL_LIFE_NEW, -1, &s, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 1, rid);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(s, 2, lr->lifeline);
    if (rc == SQLITE_OK) rc = bind_text(s, 3, lr->name);
    if (rc == SQLITE_OK) rc = bind_text(s, 4, lr->executable);
    if (rc == SQLITE_OK) rc = bind_text(s, 5, lr->options);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(s, 6, attempt);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 7, lr->pid);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 8, lr->pid_start);
    if (rc == SQLITE_OK) rc = bind_text(s, 9, attempt ? "running" : "not started");
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(s, 10, t);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(s);
        return fail(st, rc, "starting a lifeline", err, errlen);
    }
    return step_done(st, s, "starting a lifeline", err, errlen);
}

static int begin_run(zrd_store *st, zrd_runrow *r, int nlives, int nothers,
                     const zrd_liferow *others, char *err, size_t errlen)
{
    double t = now_s();
    sqlite3_stmt *s = NULL;
    if (r->rid) {
        int rc = sqlite3_prepare_v2(st->db, SQL_RESUME_RUN, -1, &s, NULL);
        /* one process: one more attempt; per-lifeline: the most any
         * lifeline has (set when the lifelines are) */
        if (rc == SQLITE_OK) rc = sqlite3_bind_int(s, 1, nlives > 1 ? 1 : 0);
        if (rc == SQLITE_OK) rc = sqlite3_bind_int(s, 2, 1);
        if (rc == SQLITE_OK) rc = sqlite3_bind_double(s, 3, t);
        if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 4, r->rid);
        if (rc != SQLITE_OK) {
            sqlite3_finalize(s);
            return fail(st, rc, "resuming the run", err, errlen);
        }
        return step_done(st, s, "resuming the run", err, errlen);
    }
    /* per-lifeline mode: the processes of a new run start together, the
     * first makes the run */
    zrd_runrow old;
    memset(&old, 0, sizeof old);
    sqlite3_stmt *f = NULL;
    int rc = sqlite3_prepare_v2(st->db, SQL_FIND, -1, &f, NULL);
    if (rc == SQLITE_OK) rc = bind_text(f, 1, r->id);
    if (rc == SQLITE_OK) rc = sqlite3_step(f);
    if (rc == SQLITE_ROW) {
        int64_t rid = sqlite3_column_int64(f, 0);
        char *fp = col_text(f, 4), *mode = col_text(f, 6);
        int same = strcmp(r->mode, "processes") == 0 && mode && strcmp(mode, "processes") == 0 &&
                   fp && strcmp(fp, r->fingerprint) == 0;
        free(fp);
        free(mode);
        sqlite3_finalize(f);
        if (!same) {
            zri_err(err, errlen, "run store %s: a run with id %s exists already", st->path, r->id);
            return -1;
        }
        r->rid = rid;
        return 0;
    }
    sqlite3_finalize(f);
    if (rc != SQLITE_DONE) return fail(st, rc, "reading the run", err, errlen);
    rc = sqlite3_prepare_v2(st->db, SQL_NEW_RUN, -1, &s, NULL);
    const char *texts[] = {r->id,          r->workflow,          r->source,
                           r->fingerprint, r->fingerprint_parts, r->mode};
    for (int i = 0; i < 6 && rc == SQLITE_OK; i++) rc = bind_text(s, i + 1, texts[i]);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(s, 7, r->nlifelines);
    if (rc == SQLITE_OK) rc = bind_text(s, 8, r->cwd);
    if (rc == SQLITE_OK) rc = bind_text(s, 9, r->executable);
    if (rc == SQLITE_OK) rc = bind_text(s, 10, r->options);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(s, 11, t);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(s, 12, t);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(s);
        return fail(st, rc, "creating the run", err, errlen);
    }
    if (step_done(st, s, "creating the run", err, errlen) < 0) return -1;
    r->rid = sqlite3_last_insert_rowid(st->db);
    /* per-lifeline mode: every lifeline has its row from the start, so
     * that a run stopped before some of its processes started can be
     * resumed with all of them */
    for (int i = 0; i < nothers; i++)
        if (new_life(st, r->rid, &others[i], 0, t, err, errlen) < 0) return -1;
    return 0;
}

int zrd_store_begin(zrd_store *st, zrd_runrow *r, int nlives, const zrd_liferow *lives, int nothers,
                    const zrd_liferow *others, int *attempt, char *err, size_t errlen)
{
    if (st->be.u)
        return st->be.begin(st->be.u, r, nlives, lives, nothers, others, attempt, err, errlen);
    pthread_mutex_lock(&st->mu);
    int resume = r->rid != 0;
    if (begin(st, err, errlen) < 0) goto fail_unlocked;
    if (begin_run(st, r, nlives, nothers, others, err, errlen) < 0) goto fail;
    double t = now_s();
    for (int i = 0; i < nlives; i++) {
        const zrd_liferow *lr = &lives[i];
        int a = life_attempt(st, r->rid, lr->lifeline, err, errlen);
        if (a < 0) goto fail;
        if (a > 1 && !resume) {
            zri_err(err, errlen, "run store %s: run %s already has a process for lifeline %s",
                    st->path, r->id, lr->name);
            goto fail;
        }
        if (a == 0) {
            if (new_life(st, r->rid, lr, 1, t, err, errlen) < 0) goto fail;
            if (i == 0) *attempt = 1;
            continue;
        }
        sqlite3_stmt *s = NULL;
        int rc;
        {
            rc = sqlite3_prepare_v2(st->db, SQL_LIFE_RESUME, -1, &s, NULL);
            if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 1, lr->pid);
            if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 2, lr->pid_start);
            if (rc == SQLITE_OK) rc = sqlite3_bind_double(s, 3, t);
            if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 4, r->rid);
            if (rc == SQLITE_OK) rc = sqlite3_bind_int(s, 5, lr->lifeline);
        }
        if (rc != SQLITE_OK) {
            sqlite3_finalize(s);
            fail(st, rc, "starting a lifeline", err, errlen);
            goto fail;
        }
        if (step_done(st, s, "starting a lifeline", err, errlen) < 0) goto fail;
        if (i == 0) *attempt = a; /* one more than before */
    }
    if (resume && nlives == 1) {
        /* per-lifeline mode: the run's attempts are its lifelines' most */
        sqlite3_stmt *s = NULL;
        int rc = sqlite3_prepare_v2(
            st->db, "UPDATE runs SET attempts = max(attempts, ?) WHERE rid = ?", -1, &s, NULL);
        if (rc == SQLITE_OK) rc = sqlite3_bind_int(s, 1, *attempt);
        if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 2, r->rid);
        if (rc != SQLITE_OK) {
            sqlite3_finalize(s);
            fail(st, rc, "resuming the run", err, errlen);
            goto fail;
        }
        if (step_done(st, s, "resuming the run", err, errlen) < 0) goto fail;
    }
    if (commit(st, err, errlen) < 0) goto fail_unlocked;
    pthread_mutex_unlock(&st->mu);
    return 0;
fail:
    rollback(st);
fail_unlocked:
    pthread_mutex_unlock(&st->mu);
    return -1;
}

int zrd_store_lifeline(zrd_store *st, int64_t rid, int32_t l, char **status, int64_t *pid,
                       int64_t *pid_start, char **options, char *err, size_t errlen)
{
    if (st->be.u)
        return st->be.lifeline(st->be.u, rid, l, status, pid, pid_start, options, err, errlen);
    pthread_mutex_lock(&st->mu);
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(
        st->db,
        "SELECT status, pid, pid_start, options FROM lifelines WHERE rid = ? AND lifeline = ?", -1,
        &s, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 1, rid);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(s, 2, l);
    if (rc == SQLITE_OK) rc = sqlite3_step(s);
    int found = rc == SQLITE_ROW;
    if (found) {
        if (status) *status = col_text(s, 0);
        *pid = sqlite3_column_int64(s, 1);
        *pid_start = sqlite3_column_int64(s, 2);
        if (options) *options = col_text(s, 3);
    } else if (rc != SQLITE_DONE) {
        found = -1;
        fail(st, rc, "reading a lifeline", err, errlen);
    }
    sqlite3_finalize(s);
    pthread_mutex_unlock(&st->mu);
    return found;
}

/* ---- the journal ---------------------------------------------------------- */

int zrd_store_load(zrd_store *st, int64_t rid, int32_t l, zri_buf *out, int64_t *next, char *err,
                   size_t errlen)
{
    if (st->be.u) return st->be.load(st->be.u, rid, l, out, next, err, errlen);
    pthread_mutex_lock(&st->mu);
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(
        st->db, "SELECT chunk, data FROM journal WHERE rid = ? AND lifeline = ? ORDER BY chunk", -1,
        &s, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 1, rid);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(s, 2, l);
    *next = 0;
    while (rc == SQLITE_OK || rc == SQLITE_ROW) {
        rc = sqlite3_step(s);
        if (rc != SQLITE_ROW) break;
        int64_t c = sqlite3_column_int64(s, 0);
        const void *d = sqlite3_column_blob(s, 1);
        int n = sqlite3_column_bytes(s, 1);
        if (d && n > 0) zri_buf_add(out, d, (size_t)n);
        *next = c + 1;
    }
    int ok = rc == SQLITE_DONE;
    if (!ok) fail(st, rc, "reading the journal", err, errlen);
    sqlite3_finalize(s);
    pthread_mutex_unlock(&st->mu);
    return ok ? 0 : -1;
}

static const char SQL_CHUNK[] =
    "INSERT INTO journal(rid, lifeline, chunk, data) VALUES (?, ?, ?, ?)";
static const char SQL_SUMMARY[] =
    "UPDATE lifelines SET events = ?, recent = coalesce(?, recent), updated = ?"
    " WHERE rid = ? AND lifeline = ?";
static const char SQL_STATUS[] = "SELECT status FROM runs WHERE rid = ?";
static const char SQL_TAKEN[] =
    "INSERT INTO channels(rid, receiver, sender, chan, taken) VALUES (?, ?, ?, ?, ?)"
    " ON CONFLICT(rid, receiver, sender, chan) DO UPDATE SET taken = max(taken, excluded.taken)";

static int read_status(zrd_store *st, int64_t rid, char **status, char *err, size_t errlen)
{
    int rc;
    sqlite3_stmt *s = kept(st, SQL_STATUS, &rc);
    if (s) rc = sqlite3_bind_int64(s, 1, rid);
    if (rc == SQLITE_OK) rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        *status = col_text(s, 0);
        done_stmt(st, s);
        return 0;
    }
    if (s) done_stmt(st, s);
    return fail(st, rc == SQLITE_DONE ? SQLITE_CORRUPT : rc, "reading the run's status", err,
                errlen);
}

int zrd_store_commit(zrd_store *st, int64_t rid, int n, const zrd_chunk *chunks, char **status,
                     char *err, size_t errlen)
{
    if (st->be.u) return st->be.commit(st->be.u, rid, n, chunks, status, err, errlen);
    pthread_mutex_lock(&st->mu);
    *status = NULL;
    if (begin(st, err, errlen) < 0) goto fail_unlocked;
    double t = now_s();
    for (int i = 0; i < n; i++) {
        const zrd_chunk *c = &chunks[i];
        int rc;
        sqlite3_stmt *s;
        if (c->len) {
            s = kept(st, SQL_CHUNK, &rc);
            if (s) rc = sqlite3_bind_int64(s, 1, rid);
            if (rc == SQLITE_OK) rc = sqlite3_bind_int(s, 2, c->lifeline);
            if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 3, c->chunk);
            if (rc == SQLITE_OK) rc = sqlite3_bind_blob64(s, 4, c->data, c->len, SQLITE_STATIC);
            if (rc != SQLITE_OK) {
                if (s) done_stmt(st, s);
                fail(st, rc, "writing the journal", err, errlen);
                goto fail;
            }
            if (step_done(st, s, "writing the journal", err, errlen) < 0) goto fail;
        }
        s = kept(st, SQL_SUMMARY, &rc);
        if (s) rc = sqlite3_bind_int64(s, 1, c->events);
        if (rc == SQLITE_OK) rc = bind_text(s, 2, c->recent);
        if (rc == SQLITE_OK) rc = sqlite3_bind_double(s, 3, t);
        if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 4, rid);
        if (rc == SQLITE_OK) rc = sqlite3_bind_int(s, 5, c->lifeline);
        if (rc != SQLITE_OK) {
            if (s) done_stmt(st, s);
            fail(st, rc, "writing the journal", err, errlen);
            goto fail;
        }
        if (step_done(st, s, "writing the journal", err, errlen) < 0) goto fail;
        for (int k = 0; k < c->ntaken; k++) {
            const zrd_taken *tk = &c->taken[k];
            s = kept(st, SQL_TAKEN, &rc);
            if (s) rc = sqlite3_bind_int64(s, 1, rid);
            if (rc == SQLITE_OK) rc = sqlite3_bind_int(s, 2, c->lifeline);
            if (rc == SQLITE_OK) rc = sqlite3_bind_int(s, 3, tk->sender);
            if (rc == SQLITE_OK) rc = sqlite3_bind_int(s, 4, tk->chan);
            if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 5, tk->seq);
            if (rc != SQLITE_OK) {
                if (s) done_stmt(st, s);
                fail(st, rc, "writing the journal", err, errlen);
                goto fail;
            }
            if (step_done(st, s, "writing the journal", err, errlen) < 0) goto fail;
        }
    }
    if (read_status(st, rid, status, err, errlen) < 0) goto fail;
    if (commit(st, err, errlen) < 0) goto fail_unlocked;
    pthread_mutex_unlock(&st->mu);
    return 0;
fail:
    rollback(st);
fail_unlocked:
    free(*status);
    *status = NULL;
    pthread_mutex_unlock(&st->mu);
    return -1;
}

int zrd_store_taken(zrd_store *st, int64_t rid, int32_t sender, zrd_taken **out, int *n, char *err,
                    size_t errlen)
{
    if (st->be.u) return st->be.taken(st->be.u, rid, sender, out, n, err, errlen);
    pthread_mutex_lock(&st->mu);
    *out = NULL;
    *n = 0;
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(
        st->db, "SELECT receiver, chan, taken FROM channels WHERE rid = ? AND sender = ?", -1, &s,
        NULL);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 1, rid);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(s, 2, sender);
    while (rc == SQLITE_OK || rc == SQLITE_ROW) {
        rc = sqlite3_step(s);
        if (rc != SQLITE_ROW) break;
        *out = zri_xrealloc(*out, (size_t)(*n + 1) * sizeof **out);
        (*out)[*n].sender = sqlite3_column_int(s, 0); /* here: the receiver */
        (*out)[*n].chan = sqlite3_column_int(s, 1);
        (*out)[*n].seq = sqlite3_column_int64(s, 2);
        (*n)++;
    }
    int ok = rc == SQLITE_DONE;
    if (!ok) fail(st, rc, "reading the channels", err, errlen);
    sqlite3_finalize(s);
    pthread_mutex_unlock(&st->mu);
    return ok ? 0 : -1;
}

int zrd_store_status(zrd_store *st, int64_t rid, char **status, char *err, size_t errlen)
{
    if (st->be.u) return st->be.status(st->be.u, rid, status, err, errlen);
    pthread_mutex_lock(&st->mu);
    int rc = read_status(st, rid, status, err, errlen);
    pthread_mutex_unlock(&st->mu);
    return rc;
}

/* ---- the end of an attempt --------------------------------------------------- */

/* Per-lifeline mode: when every lifeline is done, the run's result from
 * the components, as `zgc run --processes` prints it. */
static int compose_result(zrd_store *st, int64_t rid, const zrd_finish_info *fi, char **result,
                          char *err, size_t errlen)
{
    *result = NULL;
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(
        st->db, "SELECT component, value FROM results WHERE rid = ? ORDER BY component", -1, &s,
        NULL);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 1, rid);
    zri_buf b = {0};
    int k = 0;
    if (fi->nresults == 0) zri_buf_puts(&b, "null");
    if (fi->result_tuple) zri_buf_puts(&b, "[");
    while (rc == SQLITE_OK || rc == SQLITE_ROW) {
        rc = sqlite3_step(s);
        if (rc != SQLITE_ROW) break;
        if (sqlite3_column_int(s, 0) != k) break;
        if (k) zri_buf_puts(&b, ", ");
        const unsigned char *v = sqlite3_column_text(s, 1);
        zri_buf_puts(&b, v ? (const char *)v : "null");
        k++;
    }
    if (fi->result_tuple) zri_buf_puts(&b, "]");
    int ok = rc == SQLITE_DONE || rc == SQLITE_ROW;
    sqlite3_finalize(s);
    if (!ok) {
        zri_buf_free(&b);
        return fail(st, rc, "reading the result", err, errlen);
    }
    if (k != fi->nresults) {
        zri_buf_free(&b);
        return 0; /* a component is missing: no result */
    }
    *result = zri_buf_take(&b);
    return 0;
}

int zrd_store_finish(zrd_store *st, int64_t rid, int nlives, const int32_t *lives, int per_lifeline,
                     const zrd_finish_info *fi, char *err, size_t errlen)
{
    if (st->be.u) return st->be.finish(st->be.u, rid, nlives, lives, per_lifeline, fi, err, errlen);
    pthread_mutex_lock(&st->mu);
    char *result = NULL;
    if (begin(st, err, errlen) < 0) goto fail_unlocked;
    double t = now_s();
    for (int i = 0; i < nlives; i++) {
        sqlite3_stmt *s = NULL;
        int rc = sqlite3_prepare_v2(
            st->db,
            "UPDATE lifelines SET status = ?, state = coalesce(?, state), error = ?,"
            " updated = ? WHERE rid = ? AND lifeline = ?",
            -1, &s, NULL);
        if (rc == SQLITE_OK) rc = bind_text(s, 1, fi->status);
        if (rc == SQLITE_OK) rc = bind_text(s, 2, fi->state);
        if (rc == SQLITE_OK) rc = bind_text(s, 3, fi->error);
        if (rc == SQLITE_OK) rc = sqlite3_bind_double(s, 4, t);
        if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 5, rid);
        if (rc == SQLITE_OK) rc = sqlite3_bind_int(s, 6, lives[i]);
        if (rc != SQLITE_OK) {
            sqlite3_finalize(s);
            fail(st, rc, "ending a lifeline", err, errlen);
            goto fail;
        }
        if (step_done(st, s, "ending a lifeline", err, errlen) < 0) goto fail;
    }
    for (int i = 0; i < fi->nres; i++) {
        sqlite3_stmt *s = NULL;
        int rc = sqlite3_prepare_v2(
            st->db, "INSERT OR REPLACE INTO results(rid, component, value) VALUES (?, ?, ?)", -1,
            &s, NULL);
        if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 1, rid);
        if (rc == SQLITE_OK) rc = sqlite3_bind_int(s, 2, fi->res_index[i]);
        if (rc == SQLITE_OK) rc = bind_text(s, 3, fi->res_text[i]);
        if (rc != SQLITE_OK) {
            sqlite3_finalize(s);
            fail(st, rc, "writing the result", err, errlen);
            goto fail;
        }
        if (step_done(st, s, "writing the result", err, errlen) < 0) goto fail;
    }
    const char *run_status = fi->run_status;
    const char *run_result = fi->result;
    if (per_lifeline) {
        /* the run's status follows from its lifelines' */
        sqlite3_stmt *s = NULL;
        int rc = sqlite3_prepare_v2(st->db,
                                    "SELECT count(*), sum(status = 'done'), sum(status = 'failed'),"
                                    " sum(status = 'waiting') FROM lifelines WHERE rid = ?",
                                    -1, &s, NULL);
        if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 1, rid);
        if (rc == SQLITE_OK) rc = sqlite3_step(s);
        if (rc != SQLITE_ROW) {
            sqlite3_finalize(s);
            fail(st, rc, "reading the lifelines", err, errlen);
            goto fail;
        }
        int all = sqlite3_column_int(s, 0), done = sqlite3_column_int(s, 1),
            failed = sqlite3_column_int(s, 2), waiting = sqlite3_column_int(s, 3);
        sqlite3_finalize(s);
        run_status = NULL;
        if (failed)
            run_status = "failed";
        else if (waiting)
            run_status = "waiting";
        else if (done == all && all == fi->nlifelines_all) {
            if (compose_result(st, rid, fi, &result, err, errlen) < 0) goto fail;
            if (result) {
                run_status = "done";
                run_result = result;
            }
        }
    }
    if (run_status) {
        sqlite3_stmt *s = NULL;
        int rc = sqlite3_prepare_v2(st->db,
                                    "UPDATE runs SET status = ?, result = ?,"
                                    " error = coalesce(?, error), updated = ?"
                                    " WHERE rid = ? AND status != 'cancelled'",
                                    -1, &s, NULL);
        if (rc == SQLITE_OK) rc = bind_text(s, 1, run_status);
        if (rc == SQLITE_OK) rc = bind_text(s, 2, run_result);
        if (rc == SQLITE_OK) rc = bind_text(s, 3, fi->error);
        if (rc == SQLITE_OK) rc = sqlite3_bind_double(s, 4, t);
        if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 5, rid);
        if (rc != SQLITE_OK) {
            sqlite3_finalize(s);
            fail(st, rc, "ending the run", err, errlen);
            goto fail;
        }
        if (step_done(st, s, "ending the run", err, errlen) < 0) goto fail;
    }
    if (commit(st, err, errlen) < 0) goto fail_unlocked;
    free(result);
    pthread_mutex_unlock(&st->mu);
    return 0;
fail:
    rollback(st);
fail_unlocked:
    free(result);
    pthread_mutex_unlock(&st->mu);
    return -1;
}

int zrd_store_state(zrd_store *st, int64_t rid, int32_t l, const char *state, char *err,
                    size_t errlen)
{
    if (st->be.u) return st->be.state(st->be.u, rid, l, state, err, errlen);
    pthread_mutex_lock(&st->mu);
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(
        st->db, "UPDATE lifelines SET state = ?, updated = ? WHERE rid = ? AND lifeline = ?", -1,
        &s, NULL);
    if (rc == SQLITE_OK) rc = bind_text(s, 1, state);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(s, 2, now_s());
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 3, rid);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(s, 4, l);
    int r;
    if (rc != SQLITE_OK) {
        sqlite3_finalize(s);
        r = fail(st, rc, "writing a lifeline's state", err, errlen);
    } else {
        r = step_done(st, s, "writing a lifeline's state", err, errlen);
    }
    pthread_mutex_unlock(&st->mu);
    return r;
}

/* ---- human tasks ---------------------------------------------------------- */

int zrd_store_task(zrd_store *st, int64_t rid, const zri_task *t, int64_t *task, char **answer,
                   int *created, char *err, size_t errlen)
{
    if (st->be.u) return st->be.task(st->be.u, rid, t, task, answer, created, err, errlen);
    pthread_mutex_lock(&st->mu);
    *answer = NULL;
    *created = 0;
    if (begin(st, err, errlen) < 0) goto fail_unlocked;
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(
        st->db, "SELECT task, status, answer FROM tasks WHERE rid = ? AND key = ?", -1, &s, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 1, rid);
    if (rc == SQLITE_OK) rc = bind_text(s, 2, t->key);
    if (rc == SQLITE_OK) rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        *task = sqlite3_column_int64(s, 0);
        const unsigned char *status = sqlite3_column_text(s, 1);
        if (status && strcmp((const char *)status, "answered") == 0) *answer = col_text(s, 2);
        sqlite3_finalize(s);
        if (commit(st, err, errlen) < 0) goto fail_unlocked;
        pthread_mutex_unlock(&st->mu);
        return 0;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) {
        fail(st, rc, "reading the tasks", err, errlen);
        goto fail;
    }
    /* a new task: the next number of the run */
    rc = sqlite3_prepare_v2(st->db, "SELECT coalesce(max(task), 0) + 1 FROM tasks WHERE rid = ?",
                            -1, &s, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 1, rid);
    if (rc == SQLITE_OK) rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(s);
        fail(st, rc, "numbering a task", err, errlen);
        goto fail;
    }
    *task = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    zri_buf members = {0};
    if (t->nmembers > 0) {
        zri_buf_puts(&members, "[");
        for (int i = 0; i < t->nmembers; i++) {
            if (i) zri_buf_puts(&members, ",");
            zri_buf_json_string(&members, t->members[i], strlen(t->members[i]));
        }
        zri_buf_puts(&members, "]");
    }
    rc =
        sqlite3_prepare_v2(st->db,
                           "INSERT INTO tasks(rid, task, lifeline, action, key, kind, prompt, type,"
                           " members, current, status, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?,"
                           " ?, 'pending', ?)",
                           -1, &s, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 1, rid);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 2, *task);
    const char *texts[] = {t->lifeline, t->action, t->key,       t->kind,
                           t->prompt,   t->type,   members.data, t->current};
    for (int i = 0; i < 8 && rc == SQLITE_OK; i++) rc = bind_text(s, i + 3, texts[i]);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(s, 11, now_s());
    zri_buf_free(&members);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(s);
        fail(st, rc, "creating a task", err, errlen);
        goto fail;
    }
    if (step_done(st, s, "creating a task", err, errlen) < 0) goto fail;
    if (commit(st, err, errlen) < 0) goto fail_unlocked;
    *created = 1;
    pthread_mutex_unlock(&st->mu);
    return 0;
fail:
    rollback(st);
fail_unlocked:
    pthread_mutex_unlock(&st->mu);
    return -1;
}

int zrd_store_task_poll(zrd_store *st, int64_t rid, int64_t task, char **answer, char **run_status,
                        char *err, size_t errlen)
{
    if (st->be.u) return st->be.task_poll(st->be.u, rid, task, answer, run_status, err, errlen);
    pthread_mutex_lock(&st->mu);
    *answer = NULL;
    *run_status = NULL;
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(st->db,
                                "SELECT t.status, t.answer, r.status FROM tasks t JOIN runs r"
                                " ON r.rid = t.rid WHERE t.rid = ? AND t.task = ?",
                                -1, &s, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 1, rid);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 2, task);
    if (rc == SQLITE_OK) rc = sqlite3_step(s);
    int r = 0;
    if (rc == SQLITE_ROW) {
        const unsigned char *status = sqlite3_column_text(s, 0);
        if (status && strcmp((const char *)status, "answered") == 0) *answer = col_text(s, 1);
        *run_status = col_text(s, 2);
    } else {
        r = fail(st, rc == SQLITE_DONE ? SQLITE_CORRUPT : rc, "reading a task", err, errlen);
    }
    sqlite3_finalize(s);
    pthread_mutex_unlock(&st->mu);
    return r;
}
