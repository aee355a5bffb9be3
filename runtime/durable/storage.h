/* storage.h — where a durable run keeps its run record and journals
 * (runtime/durable/): the operations of the run store as a table, so
 * that another library can keep them elsewhere.  Prefix zrd_, hidden.
 * The SQLite run store (store.c) is the default; runtime/nats/kv.c keeps
 * a per-lifeline run in a JetStream key-value bucket (--journal nats).
 * This header is the whole contract: it includes only the core header
 * (rt.h), so a backend's library never depends on runtime/durable's code
 * (scripts/check-layers.sh: header only).
 *
 * Every operation returns 0 (find and lifeline: 1 found, 0 not) or -1
 * with a one-line message in err; strings given back are malloc'd and
 * the caller's.  The operations are called from the run's threads and
 * from the journal's commit thread: a backend locks what it shares.
 */
#ifndef ZGRT_DURABLE_STORAGE_H
#define ZGRT_DURABLE_STORAGE_H

#include <stddef.h>
#include <stdint.h>

#include "rt.h"

/* A run as the store has it. */
typedef struct zrd_runrow {
    int64_t rid;
    char *id, *workflow, *source, *fingerprint, *fingerprint_parts;
    char *mode; /* "process" or "processes" */
    char *cwd, *executable;
    char *options; /* JSON array of "--name=VALUE" */
    char *status;  /* running, waiting, done, failed, cancelled */
    char *result, *error;
    int attempts;
    int nlifelines;
} zrd_runrow;

/* One lifeline's row (the parts a start writes). */
typedef struct zrd_liferow {
    int32_t lifeline;
    const char *name;
    const char *executable; /* per-lifeline mode: its executable */
    const char *options;    /* per-lifeline mode: its run options (JSON) */
    int64_t pid, pid_start;
} zrd_liferow;

/* Per-lifeline mode: the last message a lifeline's journal holds of one
 * channel (sender, chan). */
typedef struct zrd_taken {
    int32_t sender, chan;
    int64_t seq;
} zrd_taken;

/* A commit: per lifeline a chunk (or none), the channels whose taken
 * messages it adds to, and what `zgc runs show` prints of it; and the
 * run's status as the store has it afterwards. */
typedef struct zrd_chunk {
    int32_t lifeline;
    int64_t chunk;
    const void *data;
    size_t len;
    int64_t events;     /* the lifeline's events so far */
    const char *recent; /* JSON array of its last acts, or NULL */
    int ntaken;
    const zrd_taken *taken;
} zrd_chunk;

typedef struct zrd_finish_info {
    const char *status; /* the lifelines' */
    const char *state;
    const char *error;
    int nres;
    const int32_t *res_index;
    char *const *res_text;
    int nlifelines_all; /* the program's lifelines */
    int nresults;       /* the program's result components */
    int result_tuple;   /* print them as an array */
    const char *run_status;
    const char *result;
} zrd_finish_info;

/* The operations (durable.h: the zrd_store_* function of the same name
 * says what each does).  rid is the backend's number of the run, set by
 * find and begin (r->rid). */
typedef struct zrd_backend {
    void *u;
    /* where the run is kept, for messages ("bucket B on nats://…") */
    const char *(*where)(void *u);
    int (*find)(void *u, const char *id, zrd_runrow *r, char *err, size_t errlen);
    int (*begin)(void *u, zrd_runrow *r, int nlives, const zrd_liferow *lives, int nothers,
                 const zrd_liferow *others, int *attempt, char *err, size_t errlen);
    int (*lifeline)(void *u, int64_t rid, int32_t l, char **status, int64_t *pid,
                    int64_t *pid_start, char **options, char *err, size_t errlen);
    int (*load)(void *u, int64_t rid, int32_t l, zri_buf *out, int64_t *next, char *err,
                size_t errlen);
    int (*commit)(void *u, int64_t rid, int n, const zrd_chunk *chunks, char **status, char *err,
                  size_t errlen);
    int (*taken)(void *u, int64_t rid, int32_t sender, zrd_taken **out, int *n, char *err,
                 size_t errlen);
    int (*status)(void *u, int64_t rid, char **status, char *err, size_t errlen);
    int (*finish)(void *u, int64_t rid, int nlives, const int32_t *lives, int per_lifeline,
                  const zrd_finish_info *fi, char *err, size_t errlen);
    int (*state)(void *u, int64_t rid, int32_t l, const char *state, char *err, size_t errlen);
    int (*task)(void *u, int64_t rid, const zri_task *t, int64_t *task, char **answer, int *created,
                char *err, size_t errlen);
    int (*task_poll)(void *u, int64_t rid, int64_t task, char **answer, char **run_status,
                     char *err, size_t errlen);
    void (*close)(void *u);
} zrd_backend;

#endif
