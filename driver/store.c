/* store.c — the run store's SQL on the zgc command's side (store.h).
 *
 * Reads with plain SELECTs (WAL: a reader never waits for a running
 * run's writes); writes (an answer, a cancellation, gc) in transactions
 * begun IMMEDIATE, under the same busy timeout as the runtime's
 * (ZS_BUSY_MS, or $ZGC_STORE_TIMEOUT seconds).  Every return code is
 * checked. */
#define _GNU_SOURCE
#include "store.h"
#include "procid.h"
#include "zgc.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ZS_BUSY_MS 10000

struct ZsStore {
    sqlite3 *db;
    char *path;
    int busy_ms; /* ZS_BUSY_MS, or $ZGC_STORE_TIMEOUT seconds */
    bool empty;  /* no table yet: a run was stopped while it made the store */
};

static int fail(ZsStore *s, int rc, const char *step, char *err)
{
    const char *why = s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc);
    switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        snprintf(err, ZS_ERRLEN,
                 "run store %s: %s: the store is locked by another process (waited %g s)", s->path,
                 step, s->busy_ms / 1000.0);
        break;
    case SQLITE_FULL:
        snprintf(err, ZS_ERRLEN, "run store %s: %s: the disk is full (%s)", s->path, step, why);
        break;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
        snprintf(err, ZS_ERRLEN, "run store %s is damaged: %s: %s", s->path, step, why);
        break;
    default: snprintf(err, ZS_ERRLEN, "run store %s: %s: %s", s->path, step, why); break;
    }
    return -1;
}

static char *dup_col(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    if (!t) return NULL;
    char *s = strndup((const char *)t, (size_t)sqlite3_column_bytes(st, i));
    if (!s) zu_oom();
    return s;
}

char *zs_path(const char *given)
{
    const char *env = getenv("ZGC_STORE");
    const char *p = given && *given ? given : env && *env ? env : ".zgc/runs.db";
    char *out;
    if (p[0] == '/') {
        out = strdup(p);
    } else {
        char *cwd = getcwd(NULL, 0);
        if (!cwd) zu_oom();
        if (asprintf(&out, "%s/%s", cwd, p) < 0) out = NULL;
        free(cwd);
    }
    if (!out) zu_oom();
    return out;
}

char *zs_secret_path(const char *given, const char *run)
{
    char *store = zs_path(given), *out;
    char *slash = strrchr(store, '/');
    if (asprintf(&out, "%.*s/secrets/%s.key", slash ? (int)(slash - store) : 1, slash ? store : ".",
                 run) < 0)
        zu_oom();
    free(store);
    return out;
}

ZsStore *zs_open(const char *path, char *err)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        snprintf(err, ZS_ERRLEN, "no run store at %s: %s (durable runs make it)", path,
                 strerror(errno));
        return NULL;
    }
    ZsStore *s = zu_xcalloc(1, sizeof *s);
    s->path = strdup(path);
    if (!s->path) zu_oom();
    int rc = sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE, NULL);
    if (rc != SQLITE_OK) {
        snprintf(err, ZS_ERRLEN, "cannot open the run store %s: %s", path,
                 s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
        zs_close(s);
        return NULL;
    }
    sqlite3_extended_result_codes(s->db, 1);
    s->busy_ms = ZS_BUSY_MS;
    const char *t = getenv("ZGC_STORE_TIMEOUT");
    char *end = NULL;
    double secs = t && *t ? strtod(t, &end) : -1;
    if (t && *t && end && !*end && secs >= 0 && secs <= 86400) s->busy_ms = (int)(secs * 1000);
    sqlite3_stmt *st = NULL;
    if ((rc = sqlite3_busy_timeout(s->db, s->busy_ms)) == SQLITE_OK &&
        (rc = sqlite3_prepare_v2(s->db, "SELECT count(*) FROM sqlite_master", -1, &st, NULL)) ==
            SQLITE_OK &&
        (rc = sqlite3_step(st)) == SQLITE_ROW && sqlite3_column_int(st, 0) == 0) {
        sqlite3_finalize(st);
        s->empty = true;
        return s;
    }
    sqlite3_finalize(st);
    st = NULL;
    if ((rc = sqlite3_busy_timeout(s->db, s->busy_ms)) != SQLITE_OK ||
        (rc = sqlite3_prepare_v2(s->db, "SELECT version FROM zgc_schema", -1, &st, NULL)) !=
            SQLITE_OK ||
        (rc = sqlite3_step(st)) != SQLITE_ROW) {
        if ((rc & 0xff) == SQLITE_ERROR)
            snprintf(err, ZS_ERRLEN, "%s is not a run store (it has no zgc_schema table)", path);
        else
            fail(s, rc == SQLITE_DONE ? SQLITE_CORRUPT : rc, "reading the schema version", err);
        sqlite3_finalize(st);
        zs_close(s);
        return NULL;
    }
    int v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (v != ZS_SCHEMA_VERSION) {
        snprintf(err, ZS_ERRLEN, "run store %s has schema version %d; this zgc reads version %d",
                 path, v, ZS_SCHEMA_VERSION);
        zs_close(s);
        return NULL;
    }
    return s;
}

void zs_close(ZsStore *s)
{
    if (!s) return;
    if (s->db) sqlite3_close(s->db);
    free(s->path);
    free(s);
}

const char *zs_file(const ZsStore *s) { return s->path; }

/* ---- processes -------------------------------------------------------------- */

/* The runtime records a lifeline's pid with its start time (vocab/procid.h). */
bool zs_alive(long long pid, long long start) { return pid > 0 && zv_proc_start(pid) == start; }

/* ---- reading ------------------------------------------------------------------ */

void zs_run_free(ZsRun *r)
{
    char **f[] = {&r->id,      &r->workflow, &r->source, &r->mode,  &r->cwd,        &r->executable,
                  &r->options, &r->status,   &r->result, &r->error, &r->fingerprint};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) free(*f[i]);
    memset(r, 0, sizeof *r);
}

void zs_life_free(ZsLife *l)
{
    char **f[] = {&l->name,  &l->executable, &l->options, &l->status,
                  &l->state, &l->recent,     &l->error};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) free(*f[i]);
    memset(l, 0, sizeof *l);
}

void zs_task_free(ZsTask *t)
{
    char **f[] = {&t->run,  &t->lifeline, &t->action,  &t->kind,   &t->prompt,
                  &t->type, &t->members,  &t->current, &t->status, &t->answer};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) free(*f[i]);
    memset(t, 0, sizeof *t);
}

const char *zs_status(const ZsRun *r)
{
    if (r->status && !strcmp(r->status, "running") && !r->live) return "interrupted";
    return r->status ? r->status : "?";
}

static const char RUN_COLS[] =
    "SELECT rid, id, workflow, source, mode, cwd, executable, options, status, result, error,"
    " fingerprint, attempts, lifelines, created, updated,"
    " (SELECT count(*) FROM tasks t WHERE t.rid = runs.rid AND t.status = 'pending')"
    " FROM runs";

/* Whether a process of run rid runs. */
static int run_live(ZsStore *s, long long rid, bool *live, char *err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(
        s->db, "SELECT pid, pid_start FROM lifelines WHERE rid = ? AND status = 'running'", -1, &st,
        NULL);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 1, rid);
    *live = false;
    while (rc == SQLITE_OK || rc == SQLITE_ROW) {
        rc = sqlite3_step(st);
        if (rc != SQLITE_ROW) break;
        if (zs_alive(sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1))) *live = true;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : fail(s, rc, "reading the lifelines", err);
}

static void read_run(sqlite3_stmt *st, ZsRun *r)
{
    memset(r, 0, sizeof *r);
    r->rid = sqlite3_column_int64(st, 0);
    char **f[] = {&r->id,      &r->workflow, &r->source, &r->mode,  &r->cwd,        &r->executable,
                  &r->options, &r->status,   &r->result, &r->error, &r->fingerprint};
    for (int i = 0; i < 11; i++) *f[i] = dup_col(st, i + 1);
    r->attempts = sqlite3_column_int(st, 12);
    r->nlifelines = sqlite3_column_int(st, 13);
    r->created = sqlite3_column_double(st, 14);
    r->updated = sqlite3_column_double(st, 15);
    r->pending = sqlite3_column_int(st, 16);
}

int zs_runs(ZsStore *s, ZsRun **out, int *n, char *err)
{
    *out = NULL;
    *n = 0;
    if (s->empty) return 0;
    char *sql;
    if (asprintf(&sql, "%s ORDER BY created DESC, rid DESC", RUN_COLS) < 0) zu_oom();
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
    free(sql);
    int cap = 0;
    while (rc == SQLITE_OK || rc == SQLITE_ROW) {
        rc = sqlite3_step(st);
        if (rc != SQLITE_ROW) break;
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            *out = zu_xrealloc(*out, (size_t)cap * sizeof **out);
        }
        read_run(st, &(*out)[(*n)++]);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return fail(s, rc, "reading the runs", err);
    for (int i = 0; i < *n; i++)
        if (run_live(s, (*out)[i].rid, &(*out)[i].live, err) < 0) return -1;
    return 0;
}

int zs_run(ZsStore *s, const char *id, ZsRun *out, char *err)
{
    if (s->empty) return 0;
    char *sql;
    if (asprintf(&sql, "%s WHERE id = ?", RUN_COLS) < 0) zu_oom();
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
    free(sql);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK) rc = sqlite3_step(st);
    int found = rc == SQLITE_ROW;
    if (found) read_run(st, out);
    sqlite3_finalize(st);
    if (!found && rc != SQLITE_DONE) return fail(s, rc, "reading the run", err);
    if (found && run_live(s, out->rid, &out->live, err) < 0) return -1;
    return found;
}

int zs_lifelines(ZsStore *s, const ZsRun *r, ZsLife **out, int *n, char *err)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db,
                                "SELECT lifeline, name, executable, options, status, state, recent,"
                                " error, attempt, events, pid, pid_start FROM lifelines"
                                " WHERE rid = ? ORDER BY lifeline",
                                -1, &st, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 1, r->rid);
    int cap = 0;
    while (rc == SQLITE_OK || rc == SQLITE_ROW) {
        rc = sqlite3_step(st);
        if (rc != SQLITE_ROW) break;
        if (*n == cap) {
            cap = cap ? cap * 2 : 8;
            *out = zu_xrealloc(*out, (size_t)cap * sizeof **out);
        }
        ZsLife *l = &(*out)[(*n)++];
        memset(l, 0, sizeof *l);
        l->lifeline = sqlite3_column_int(st, 0);
        char **f[] = {&l->name,  &l->executable, &l->options, &l->status,
                      &l->state, &l->recent,     &l->error};
        for (int i = 0; i < 7; i++) *f[i] = dup_col(st, i + 1);
        l->attempt = sqlite3_column_int(st, 8);
        l->events = sqlite3_column_int64(st, 9);
        l->pid = sqlite3_column_int64(st, 10);
        l->live = l->status && !strcmp(l->status, "running") &&
                  zs_alive(l->pid, sqlite3_column_int64(st, 11));
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : fail(s, rc, "reading the lifelines", err);
}

int zs_tasks(ZsStore *s, const char *id, bool all, ZsTask **out, int *n, char *err)
{
    *out = NULL;
    *n = 0;
    if (s->empty) return 0;
    char *sql;
    if (asprintf(&sql,
                 "SELECT r.id, t.task, t.lifeline, t.action, t.kind, t.prompt, t.type, t.members,"
                 " t.current, t.status, t.answer, t.created, t.answered FROM tasks t"
                 " JOIN runs r ON r.rid = t.rid WHERE (?1 IS NULL OR r.id = ?1) %s"
                 " ORDER BY r.created, r.rid, t.task",
                 all ? "" : "AND t.status = 'pending'") < 0)
        zu_oom();
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
    free(sql);
    if (rc == SQLITE_OK)
        rc = id ? sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, 1);
    int cap = 0;
    while (rc == SQLITE_OK || rc == SQLITE_ROW) {
        rc = sqlite3_step(st);
        if (rc != SQLITE_ROW) break;
        if (*n == cap) {
            cap = cap ? cap * 2 : 8;
            *out = zu_xrealloc(*out, (size_t)cap * sizeof **out);
        }
        ZsTask *t = &(*out)[(*n)++];
        memset(t, 0, sizeof *t);
        t->run = dup_col(st, 0);
        t->task = sqlite3_column_int64(st, 1);
        char **f[] = {&t->lifeline, &t->action,  &t->kind,   &t->prompt, &t->type,
                      &t->members,  &t->current, &t->status, &t->answer};
        for (int i = 0; i < 9; i++) *f[i] = dup_col(st, i + 2);
        t->created = sqlite3_column_double(st, 11);
        t->answered = sqlite3_column_double(st, 12);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : fail(s, rc, "reading the tasks", err);
}

/* ---- writing --------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int exec(ZsStore *s, const char *sql, const char *step, char *err)
{
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : fail(s, rc, step, err);
}

static int rollback(ZsStore *s)
{
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}

static int commit(ZsStore *s, char *err)
{
    if (exec(s, "COMMIT", "committing", err) == 0) return 0;
    return rollback(s);
}

/* A statement of one row change, bound by the caller: its step. */
static int change(ZsStore *s, sqlite3_stmt *st, int rc, const char *step, char *err)
{
    if (rc == SQLITE_OK) rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : fail(s, rc, step, err);
}

int zs_answer(ZsStore *s, const char *id, long long task, const char *answer, char *err)
{
    if (s->empty) {
        snprintf(err, ZS_ERRLEN, "no run %s in the run store %s", id, s->path);
        return 0;
    }
    if (exec(s, "BEGIN IMMEDIATE", "beginning a transaction", err) < 0) return -1;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db,
                                "SELECT t.status FROM tasks t JOIN runs r ON r.rid = t.rid"
                                " WHERE r.id = ? AND t.task = ?",
                                -1, &st, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 2, task);
    if (rc == SQLITE_OK) rc = sqlite3_step(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        sqlite3_finalize(st);
        fail(s, rc, "reading the task", err);
        return rollback(s);
    }
    char *status = rc == SQLITE_ROW ? dup_col(st, 0) : NULL;
    sqlite3_finalize(st);
    if (!status || strcmp(status, "pending") != 0) {
        if (status)
            snprintf(err, ZS_ERRLEN, "task %lld of run %s is %s, not pending", task, id, status);
        else
            snprintf(err, ZS_ERRLEN, "run %s has no task %lld", id, task);
        free(status);
        rollback(s);
        return 0;
    }
    free(status);
    rc = sqlite3_prepare_v2(s->db,
                            "UPDATE tasks SET status = 'answered', answer = ?, answered = ?"
                            " WHERE rid = (SELECT rid FROM runs WHERE id = ?) AND task = ?",
                            -1, &st, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 1, answer, -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 2, now_s());
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 3, id, -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 4, task);
    if (change(s, st, rc, "answering the task", err) < 0) return rollback(s);
    return commit(s, err) < 0 ? -1 : 1;
}

int zs_cancel(ZsStore *s, const char *id, char *err)
{
    if (s->empty) {
        snprintf(err, ZS_ERRLEN, "no run %s in the run store %s", id, s->path);
        return 0;
    }
    if (exec(s, "BEGIN IMMEDIATE", "beginning a transaction", err) < 0) return -1;
    ZsRun r;
    int found = zs_run(s, id, &r, err);
    if (found < 0) return rollback(s);
    if (!found || !strcmp(r.status, "done") || !strcmp(r.status, "cancelled")) {
        if (found)
            snprintf(err, ZS_ERRLEN, "run %s is %s already", id, r.status);
        else
            snprintf(err, ZS_ERRLEN, "no run %s in the run store %s", id, s->path);
        if (found) zs_run_free(&r);
        rollback(s);
        return 0;
    }
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(
        s->db, "UPDATE runs SET status = 'cancelled', updated = ? WHERE rid = ?", -1, &st, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(st, 1, now_s());
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 2, r.rid);
    if (change(s, st, rc, "cancelling the run", err) < 0) {
        zs_run_free(&r);
        return rollback(s);
    }
    rc = sqlite3_prepare_v2(
        s->db, "UPDATE tasks SET status = 'cancelled' WHERE rid = ? AND status = 'pending'", -1,
        &st, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 1, r.rid);
    zs_run_free(&r);
    if (change(s, st, rc, "cancelling the run's tasks", err) < 0) return rollback(s);
    return commit(s, err) < 0 ? -1 : 1;
}

int zs_gc(ZsStore *s, bool failed, int *removed, char ***keep, char *err)
{
    *removed = 0;
    *keep = NULL;
    if (s->empty) {
        *keep = zu_xcalloc(1, sizeof **keep);
        return 0;
    }
    if (exec(s, "BEGIN IMMEDIATE", "beginning a transaction", err) < 0) return -1;
    const char *which =
        failed ? "status IN ('done', 'cancelled', 'failed')" : "status IN ('done', 'cancelled')";
    static const char *const tables[] = {"journal", "lifelines", "results", "tasks", "channels"};
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
        char *sql;
        if (asprintf(&sql, "DELETE FROM %s WHERE rid IN (SELECT rid FROM runs WHERE %s)", tables[i],
                     which) < 0)
            zu_oom();
        int rc = exec(s, sql, "removing finished runs", err);
        free(sql);
        if (rc < 0) return rollback(s);
    }
    char *sql;
    if (asprintf(&sql, "DELETE FROM runs WHERE %s", which) < 0) zu_oom();
    int rc = exec(s, sql, "removing finished runs", err);
    free(sql);
    if (rc < 0) return rollback(s);
    *removed = sqlite3_changes(s->db);
    if (commit(s, err) < 0) return -1;
    /* the executables the remaining runs resume with */
    sqlite3_stmt *st = NULL;
    rc = sqlite3_prepare_v2(s->db,
                            "SELECT executable FROM runs WHERE executable IS NOT NULL UNION"
                            " SELECT executable FROM lifelines WHERE executable IS NOT NULL",
                            -1, &st, NULL);
    int n = 0, cap = 0;
    char **k = NULL;
    while (rc == SQLITE_OK || rc == SQLITE_ROW) {
        rc = sqlite3_step(st);
        if (rc != SQLITE_ROW) break;
        if (n + 2 > cap) {
            cap = cap ? cap * 2 : 16;
            k = zu_xrealloc(k, (size_t)cap * sizeof *k);
        }
        k[n++] = dup_col(st, 0);
        k[n] = NULL;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        for (int i = 0; i < n; i++) free(k[i]);
        free(k);
        return fail(s, rc, "reading the executables of the runs", err);
    }
    if (!k) k = zu_xcalloc(1, sizeof *k);
    *keep = k;
    return 0;
}
