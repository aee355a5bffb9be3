/* store.h — the run store as the zgc command sees it (prefix zs_):
 * `zgc runs`, `zgc tasks`, `zgc answer` and `zgc run --durable` read and
 * write the SQLite file that durable runs keep (the runtime's side is
 * runtime/durable/store.c; the schema between them is documented in
 * docs/runtime.md, "Durable runs", and versioned: ZS_SCHEMA_VERSION).
 * The driver never links the runtime; every statement of this side is in
 * store.c.
 *
 * Errors: 0 (or 1 for "found") on success, -1 with a message in err
 * (ZS_ERRLEN bytes).  A store that cannot be used (missing, damaged,
 * locked past the busy timeout, of another schema version, a full disk)
 * is such an error; the commands exit with status 4 then. */
#ifndef ZGC_STORE_H
#define ZGC_STORE_H
#include <stdbool.h>
#include <stddef.h>

#define ZS_SCHEMA_VERSION 1
#define ZS_ERRLEN 1024
#define ZS_EXIT_STORE 4

typedef struct ZsStore ZsStore;

/* The store's path: given, else $ZGC_STORE, else .zgc/runs.db in the
 * working directory, absolute (malloc'd). */
char *zs_path(const char *given);
/* Where a durable run over NATS started by `zgc run --processes` keeps
 * its secret until it is done: DIR/secrets/RUN.key beside the store path
 * (zs_path(given) = DIR/FILE), malloc'd. */
char *zs_secret_path(const char *given, const char *run);
/* Opens an existing store; a missing file is an error that says so. */
ZsStore *zs_open(const char *path, char *err);
void zs_close(ZsStore *s);
const char *zs_file(const ZsStore *s);

typedef struct ZsRun {
    long long rid;
    char *id, *workflow, *source, *mode, *cwd, *executable, *options, *status, *result, *error;
    char *fingerprint;
    int attempts, nlifelines, pending; /* pending: its pending tasks */
    double created, updated;
    bool live; /* a process of it runs (its lifelines' pids, /proc) */
} ZsRun;

typedef struct ZsLife {
    int lifeline;
    char *name, *executable, *options, *status, *state, *recent, *error;
    int attempt;
    long long events, pid;
    bool live;
} ZsLife;

typedef struct ZsTask {
    long long task;
    char *run, *lifeline, *action, *kind, *prompt, *type, *members, *current, *status, *answer;
    double created, answered;
} ZsTask;

void zs_run_free(ZsRun *r);
void zs_life_free(ZsLife *l);
void zs_task_free(ZsTask *t);
/* A run's status as users see it: the stored one, except that a run
 * marked running without a live process is "interrupted". */
const char *zs_status(const ZsRun *r);

/* Every run, newest first. */
int zs_runs(ZsStore *s, ZsRun **out, int *n, char *err);
/* 1 with the run, 0 when there is none. */
int zs_run(ZsStore *s, const char *id, ZsRun *out, char *err);
int zs_lifelines(ZsStore *s, const ZsRun *r, ZsLife **out, int *n, char *err);
/* The tasks of run `id` (every run: NULL), pending ones only unless all. */
int zs_tasks(ZsStore *s, const char *id, bool all, ZsTask **out, int *n, char *err);
/* Answers a pending task with answer (JSON text, {"value": …}): 1 done,
 * 0 with a message when it is not pending (or does not exist). */
int zs_answer(ZsStore *s, const char *id, long long task, const char *answer, char *err);
/* Cancels a run that has not ended: 1 done, 0 with a message when it had
 * (or does not exist). */
int zs_cancel(ZsStore *s, const char *id, char *err);
/* Removes the runs that are done or cancelled (and failed ones with
 * failed), with their journals, lifelines, results and tasks; *removed
 * their number; *keep (malloc'd, NULL-terminated) the executables the
 * remaining runs need. */
int zs_gc(ZsStore *s, bool failed, int *removed, char ***keep, char *err);

/* /proc: whether process pid with this start time runs. */
bool zs_alive(long long pid, long long start);
#endif
