/* durable.h — durable runs (runtime/durable/): the run store, the
 * journal and human tasks.  Prefix zrd_, hidden.  Builds on the runtime's
 * core header (rt.h: values, options, messages, the trace, the journal
 * and task interfaces) and SQLite; the core knows nothing of it: zgrt_main
 * (main.c) opens a durable run, gives the run its zri_journal and
 * zri_task_fn, and ends it.
 *
 *   store.c    the SQLite store: its schema (the contract with `zgc runs`,
 *              docs/runtime.md "Durable runs") and every SQL statement of
 *              the runtime
 *   codec.c    journal entries as bytes
 *   journal.c  the zri_journal: recording, group and output commit, the
 *              commit thread, replay cursors
 *   run.c      a durable run: open (new or resume: the fingerprint, mode
 *              and status checks), start, human tasks, finish
 *
 * Errors follow rt.h: 0 or -1 (NULL) with a one-line message in err.  A
 * failure of the store (it cannot be opened, is damaged, locked past the
 * busy timeout, or the disk is full) is reported as such and ends the run
 * with exit status 4 (ZRD_EXIT_STORE); what was committed stays.
 */
#ifndef ZGRT_DURABLE_H
#define ZGRT_DURABLE_H

#include <stddef.h>
#include <stdint.h>

#include "storage.h"
#include "rt.h"

/* Exit statuses of durable runs, besides rt.h's 0, 1 and 2. */
enum {
    ZRD_EXIT_WAITING = 3, /* --exit-when-waiting: stopped, human tasks pending */
    ZRD_EXIT_STORE = 4,   /* the run store failed */
    ZRD_EXIT_LOST = 5,    /* per-lifeline mode: a peer process was lost and not
                             restarted within --peer-wait; the run can be
                             resumed */
};

/* How long a statement waits for another process's lock on the store
 * (sqlite3_busy_timeout) before it is an error. */
#define ZRD_BUSY_TIMEOUT_MS 10000
/* Group commit: what is recorded while nothing leaves the run is
 * committed at least this often, or when this much waits. */
#define ZRD_COMMIT_INTERVAL_MS 50
#define ZRD_COMMIT_BYTES (1u << 20)

/* ===================================================================== */
/* store.c                                                                */
/* ===================================================================== */

typedef struct zrd_store zrd_store;

/* The schema's version (table zgc_schema); a store of another version is
 * refused. */
#define ZRD_SCHEMA_VERSION 1

/* The store's path: --durable=STORE, else $ZGC_STORE, else .zgc/runs.db
 * in the working directory, made absolute (malloc'd). */
ZRI_HIDDEN char *zrd_store_path(const char *given);
/* Opens the store (creating its directory, the file and the schema):
 * WAL, synchronous FULL, the busy timeout.  NULL with a message. */
ZRI_HIDDEN zrd_store *zrd_store_open(const char *path, char *err, size_t errlen);
/* A store kept by another backend (storage.h; --journal nats): every
 * zrd_store_* call below goes to it; zrd_store_close closes it. */
ZRI_HIDDEN zrd_store *zrd_store_backend(const zrd_backend *be);
/* 1 when the store is SQLite's (a file: zgc runs, human tasks). */
ZRI_HIDDEN int zrd_store_is_file(const zrd_store *st);
ZRI_HIDDEN void zrd_store_close(zrd_store *st);
ZRI_HIDDEN const char *zrd_store_file(const zrd_store *st);

ZRI_HIDDEN void zrd_runrow_free(zrd_runrow *r);

/* 1 with the run in *r, 0 when there is no such run, -1 with a message. */
ZRI_HIDDEN int zrd_store_find(zrd_store *st, const char *id, zrd_runrow *r, char *err,
                              size_t errlen);

/* Starts an attempt in one transaction.  A new run (r->rid == 0): inserts
 * it (an id that exists is an error, except in per-lifeline mode for a
 * run of the same program whose lifeline has not started yet: the
 * processes of one run start together) with a row for each of `others`
 * (per-lifeline mode: the other lifelines, not started); a resume: the
 * run is running again, with one more attempt.  Every lifeline of `lives`
 * is marked running by this process, its attempt counted.  *attempt: the
 * attempt of lives[0].  0, or -1 with a message. */
ZRI_HIDDEN int zrd_store_begin(zrd_store *st, zrd_runrow *r, int nlives, const zrd_liferow *lives,
                               int nothers, const zrd_liferow *others, int *attempt, char *err,
                               size_t errlen);
/* The lifeline's status, pid and start time (whether its process runs),
 * 1; 0 when the run has no such lifeline row. */
ZRI_HIDDEN int zrd_store_lifeline(zrd_store *st, int64_t rid, int32_t l, char **status,
                                  int64_t *pid, int64_t *pid_start, char **options, char *err,
                                  size_t errlen);
/* The journal of lifeline l: its chunks in order, appended to out; *next
 * the number the next chunk gets. */
ZRI_HIDDEN int zrd_store_load(zrd_store *st, int64_t rid, int32_t l, zri_buf *out, int64_t *next,
                              char *err, size_t errlen);

ZRI_HIDDEN int zrd_store_commit(zrd_store *st, int64_t rid, int n, const zrd_chunk *chunks,
                                char **status, char *err, size_t errlen);
/* What the other lifelines' journals hold of the messages `sender` sent
 * them (per receiver, in .sender, and channel). */
ZRI_HIDDEN int zrd_store_taken(zrd_store *st, int64_t rid, int32_t sender, zrd_taken **out, int *n,
                               char *err, size_t errlen);
/* The run's status (cancellation checks). */
ZRI_HIDDEN int zrd_store_status(zrd_store *st, int64_t rid, char **status, char *err,
                                size_t errlen);
/* The end of an attempt.  Every lifeline of `lives` gets status, state and
 * error; per-lifeline mode gives its result components (nres texts at
 * indices res_index) and the run's status follows from its lifelines
 * (all done: done, with the result composed from every component; one
 * failed: failed; one waiting: waiting); in one process the run gets
 * run_status, result and error. */
ZRI_HIDDEN int zrd_store_finish(zrd_store *st, int64_t rid, int nlives, const int32_t *lives,
                                int per_lifeline, const zrd_finish_info *fi, char *err,
                                size_t errlen);
/* A lifeline's state text (where it waits). */
ZRI_HIDDEN int zrd_store_state(zrd_store *st, int64_t rid, int32_t l, const char *state, char *err,
                               size_t errlen);

/* Human tasks.  get: the task of t->key, created pending when there is
 * none (*task its number); *answer: its answer (malloc'd JSON text) once
 * answered, else NULL.  poll: the answer of a task and whether the run was
 * cancelled. */
ZRI_HIDDEN int zrd_store_task(zrd_store *st, int64_t rid, const zri_task *t, int64_t *task,
                              char **answer, int *created, char *err, size_t errlen);
ZRI_HIDDEN int zrd_store_task_poll(zrd_store *st, int64_t rid, int64_t task, char **answer,
                                   char **run_status, char *err, size_t errlen);

/* ===================================================================== */
/* codec.c                                                                */
/* ===================================================================== */

/* An entry (rt.h: zri_jentry) of thread `path` appended as bytes:
 *   kind u8, path (varint length, bytes), pos varint, then per kind
 *   ACT     action, attempts, source varints, nvals varint, values, the
 *           raw answer of a network model (varint length, bytes; 0: none)
 *   PICK    the sender varint       CHOICE  tag varint, decision u8
 *   TURN    nothing (the path is the thread that made the event)
 *   MSG     from, chan, kind, tag, value, seq, nvals varints, values,
 *           has_meta, nvc, nviews, nvarviews varints, nvc clock entries
 *           (zigzag varints), nviews bytes, nvarviews values
 *   READ, COMMIT  cell / store varint, committed u8 (COMMIT), txn and
 *           version zigzag varints, nvals varint (0 or 1), the value read /
 *           the refusal's reason
 * A value: its tag u8, then bool, int and enum as a zigzag varint, float
 * as 8 bytes (IEEE 754, little-endian), str and json (JSON text) as a
 * varint length and bytes, undef as nothing.  Varints are LEB128. */
ZRI_HIDDEN void zrd_encode(zri_buf *b, const char *path, const zri_jentry *e);
/* Decodes the entry at *pos of buf[0, len) and moves *pos past it.  With
 * h (and p for messages), values, strings and the message are made (in h,
 * msg malloc'd); without, the entry is only skipped over (e->path still
 * points into buf, not NUL-terminated: *pathlen).  0, or -1 when the bytes
 * are not an entry. */
ZRI_HIDDEN int zrd_decode(const uint8_t *buf, size_t len, size_t *pos, const zgrt_program *p,
                          zri_heap *h, zri_jentry *e, size_t *pathlen, zgrt_value **vals,
                          int32_t *capvals);
/* The JSON text of the values of an encoded ACT entry (for `zgc runs
 * show`), appended to out. */
ZRI_HIDDEN void zrd_act_text(zri_buf *out, const zgrt_program *p, const uint8_t *buf, size_t len,
                             size_t pos);

/* ===================================================================== */
/* journal.c                                                              */
/* ===================================================================== */

typedef struct zrd_journal zrd_journal;

/* Trace lines are released after the commits they depend on (trace.c):
 * mark before the entries are taken, release after they are committed. */
typedef struct zrd_output {
    size_t (*mark)(void *u);
    int (*release)(void *u, size_t mark);
    void *u;
    /* Per-lifeline mode, after each commit: the journal now holds
     * `committed` messages of the stream from -> this lifeline on chan
     * (the transport's ACK, net.h: zri_net_ack); may be NULL. */
    void (*acked)(void *acked_u, int32_t from, int32_t chan, int64_t committed);
    void *acked_u;
} zrd_output;

/* The journal of the lifelines of `lives` (every lifeline, or one) of run
 * rid; with replay, their recorded chunks are loaded for the replay.  The
 * run is failed (zri_run_fail) when a background commit fails or finds the
 * run cancelled.  NULL with a message. */
ZRI_HIDDEN zrd_journal *zrd_journal_new(zrd_store *st, const zgrt_program *p, int64_t rid,
                                        const char *run_id, int nlives, const int32_t *lives,
                                        int replay, char *err, size_t errlen);
ZRI_HIDDEN void zrd_journal_output(zrd_journal *J, const zrd_output *out);
/* Forgets the output's acked callback (the transport is about to close). */
ZRI_HIDDEN void zrd_journal_no_acks(zrd_journal *J);
/* Starts the commit thread; the journal then belongs to run R. */
ZRI_HIDDEN int zrd_journal_start(zrd_journal *J, zri_run *R, char *err, size_t errlen);
/* The rt.h interface of the journal. */
ZRI_HIDDEN zri_journal zrd_journal_iface(zrd_journal *J);
/* Commits everything recorded (the end of an attempt); 0 or -1. */
ZRI_HIDDEN int zrd_journal_flush(zrd_journal *J, char *err, size_t errlen);
/* Stops the commit thread and forgets the output (the trace is about to
 * close); later commits are the caller's. */
ZRI_HIDDEN void zrd_journal_stop(zrd_journal *J);
/* 1 when the store failed under it (exit status 4). */
ZRI_HIDDEN int zrd_journal_failed(const zrd_journal *J);
/* Stops the commit thread and frees the journal. */
ZRI_HIDDEN void zrd_journal_free(zrd_journal *J);

/* ===================================================================== */
/* run.c — what zgrt_main calls                                          */
/* ===================================================================== */

typedef struct zrd_run zrd_run;

/* Whether the SQLite run store of o (--durable=STORE, $ZGC_STORE, else
 * .zgc/runs.db) holds run id, without making the store when it does not
 * exist: 1 with its file in *file (malloc'd), 0, or -1 with a message. */
ZRI_HIDDEN int zrd_store_has(const zri_options *o, const char *id, char **file, char *err,
                             size_t errlen);

/* Opens the store of a durable run (o->durable).  With o->resume, reads
 * the run and checks it: it exists, was not cancelled, has no process
 * running it, was started by this program (the fingerprint; a mismatch
 * names what changed) in this mode.  be: the store's backend
 * (storage.h; closed with the run), or NULL: the SQLite run store.  Prints the error and returns the
 * exit status (1, 2 or 4), else 0 with *out. */
ZRI_HIDDEN int zrd_open(const zgrt_program *p, const zri_options *o, int32_t self,
                        const zrd_backend *be, zrd_run **out);
/* A resume: the stored run options ("--name=VALUE" each, owned by D) and
 * the directory the run started in; a run that is done: its result (the
 * caller prints it), else NULL. */
ZRI_HIDDEN char **zrd_stored(zrd_run *D, int *n);
ZRI_HIDDEN const char *zrd_cwd(zrd_run *D);
ZRI_HIDDEN const char *zrd_done_result(zrd_run *D);
ZRI_HIDDEN const char *zrd_id(zrd_run *D);
/* After zrd_start: the directory of the run's stores by default (made if
 * missing): DIR/stores/RUN beside the SQLite run store DIR/FILE, the same
 * for every process and attempt of the run.  Prints the error and returns
 * the exit status (2: the run store is not a file), else 0. */
ZRI_HIDDEN int zrd_store_dir(zrd_run *D, char *out, size_t n);
/* After zri_run_setup: creates the run (or begins its next attempt),
 * loads its journal and gives it to R (zri_run_set_id, _journal, _tasks);
 * *attempt: this attempt's number.  Prints the error and returns the
 * exit status, else 0. */
ZRI_HIDDEN int zrd_start(zrd_run *D, zri_run *R, const zri_options *o, int *attempt);
/* Right before the run's threads start: where trace lines wait for
 * commits (or NULL), and the commit thread starts.  Prints the error and
 * returns the exit status, else 0. */
ZRI_HIDDEN int zrd_go(zrd_run *D, const zrd_output *out);
/* A resume in per-lifeline mode: 1 when lifeline l has ended in the store
 * (its process is gone for good: the restarted lifeline does not connect
 * to it), 0 otherwise or on a new run. */
ZRI_HIDDEN int zrd_ended(zrd_run *D, int32_t l);
/* No more acked calls (zrd_output): the transport closes. */
ZRI_HIDDEN void zrd_no_acks(zrd_run *D);
/* The run's zri_task_fn (user: D). */
ZRI_HIDDEN int zrd_task(void *user, const zri_task *t, volatile int *cancel, zri_waits_fn waits,
                        void *waits_u, void **answer, char *err, size_t errlen);
/* The end of an attempt, first: commits everything (trace lines are
 * released).  0, or ZRD_EXIT_STORE after printing why. */
ZRI_HIDDEN int zrd_flush(zrd_run *D, const char *error);
/* The end of an attempt: commits, and records the outcome (result or
 * error, waiting, or an interruption by a lost peer).  Returns the exit
 * status: status unchanged, or ZRD_EXIT_STORE after printing why. */
ZRI_HIDDEN int zrd_finish(zrd_run *D, zri_run *R, const char *result_json, const char *error,
                          int status);
ZRI_HIDDEN void zrd_close(zrd_run *D);

#endif
