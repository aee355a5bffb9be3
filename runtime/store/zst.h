/* zst.h — shared stores of typed cells and a tool registry, kept under one
 * of five isolation disciplines L0..L4 (docs/runtime.md, "Stores").
 *
 * A store holds cells (a name, a type, a default value) and a tool
 * registry (tool names, each with a version).  Agents change it through
 * operations: one read → generate → write on one lifeline, written as one
 * OpRecord line (docs/anomalies.md) to the store's record file.
 *
 *     zst_op *op = zst_begin(s, "writer");
 *     zgrt_value v;
 *     zst_read(op, "plan", &v);            // reads
 *     zst_plan(op, "search");              // the tool the generation chose
 *     int k; zst_issue(op, "search", arg, &k);  // an external effect issued
 *     zst_complete(op, k);                 // ... and completed (any thread)
 *     zst_write(op, "plan", v2);           // writes (buffered)
 *     int rc = zst_commit(op);             // ZST_OK, or ZST_RETRY: re-run
 *     zst_end(op);                         // the operation is over
 *
 * (zst_commit_end(op) does both, for an operation that will not be
 * retracted.)
 *
 * Levels (each includes the ones below):
 *   L0  no synchronisation: reads see the latest committed value, commits
 *       overwrite.
 *   L1  commit-time validation of the read set: a commit whose reads were
 *       overwritten returns ZST_RETRY (its attempt is recorded aborted).
 *   L2  causal tracking (preds: the causal closure of the operations whose
 *       writes were read) and cascading retraction: retracting an operation
 *       retracts every unfinished operation that read from it, and an
 *       operation's record is final only once its predecessors are.
 *   L3  a commit-order sequencer: effects are externalised in issue order,
 *       whatever order they complete in.
 *   L4  the tool registry as of the operation's begin is pinned: effects
 *       dispatch against it, and a commit whose planned tool was removed or
 *       replaced since returns ZST_RETRY.
 *
 * Return values: ZST_OK (0), ZST_RETRY / ZST_RETRACTED (positive, normal
 * outcomes), or a negative ZST_E* error; zst_error() then gives a one-line
 * message for the calling thread.
 *
 * Threads: a zst_store may be used from any number of threads (and, with
 * the SQLite backend, processes) at once.  A zst_op belongs to one thread
 * at a time, except zst_complete(), which any thread may call.
 */
#ifndef ZST_H
#define ZST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zgrt.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    ZST_OK = 0,
    ZST_RETRY = 1,     /* commit refused by the discipline: run the operation again */
    ZST_RETRACTED = 2, /* zst_end: the operation was retracted (cascade) */
    ZST_EUSAGE = -1,   /* bad argument or call out of order */
    ZST_EUNKNOWN = -2, /* unknown cell or tool */
    ZST_ETYPE = -3,    /* value of the wrong type */
    ZST_EIO = -4,      /* backend or record file failed (full disk, busy timeout, ...) */
    ZST_ECORRUPT = -5, /* the backend holds something this library did not write */
    ZST_ENOMEM = -6,
};

typedef struct zst_store zst_store;
typedef struct zst_op zst_op;

/* Called once per effect when it is externalised, in externalisation
 * order (issue order from L3 up); `arg` is valid during the call. */
typedef void (*zst_effect_fn)(void *user, int64_t txn, const char *tool, const zgrt_value *arg);

typedef struct zst_config {
    int level;          /* 0..4 */
    const char *sqlite; /* NULL: in memory; else the SQLite file (created) */
    /* or a JetStream key-value bucket (created) on the NATS server this
     * natsConnection * of the NATS C client is connected to; the caller
     * keeps the connection open while the store is */
    void *nats;
    const char *nats_bucket;
    const char *oprecords; /* NULL: no records; else the JSONL file (appended) */
    int busy_ms;           /* SQLite lock wait (0: 10000) */
    zst_effect_fn on_effect;
    void *effect_user;
    /* the registry of a store this call creates (a new SQLite file, or in
     * memory): ntools tool names, each at version 1; an existing store
     * keeps its own */
    int ntools;
    const char *const *tools;
} zst_config;

/* Opens a store; NULL with a message in err on failure.  A SQLite store
 * keeps the level it was created with; opening it at another is an error. */
zst_store *zst_open(const zst_config *cfg, char *err, size_t errlen);
void zst_close(zst_store *s);
int zst_level(const zst_store *s);

/* Declares a cell (every handle of a store declares the cells it uses).
 * A new cell starts at `def`; an existing one must have the same type. */
int zst_cell(zst_store *s, const char *name, zgrt_tag type, zgrt_value def);

/* The registry: zst_tool_put adds a tool or replaces it with a new version
 * (the version is returned in *version if not NULL); zst_tool_remove
 * removes it (ZST_EUNKNOWN if absent). */
int zst_tool_put(zst_store *s, const char *tool, int64_t *version);
int zst_tool_remove(zst_store *s, const char *tool);

/* An operation of `agent`; NULL (zst_error()) on failure. */
zst_op *zst_begin(zst_store *s, const char *agent);
/* Reads a cell.  *out stays valid until zst_end(op).  Reading a cell
 * twice gives the first value; reading a cell written by this operation
 * gives the written value. */
int zst_read(zst_op *op, const char *cell, zgrt_value *out);
/* zst_read, and *by: the transaction whose committed write was read (0:
 * the cell's default; the same for every read of the cell in the
 * operation). */
int zst_read_from(zst_op *op, const char *cell, zgrt_value *out, int64_t *by);
/* zst_read_from, and *ver: the version of the cell that was read (what
 * L1 validates; the same for every read of the cell in the operation). */
int zst_read_version(zst_op *op, const char *cell, zgrt_value *out, int64_t *by, int64_t *ver);
/* Registers a read made by an earlier execution of this operation (a
 * durable run's replay, docs/runtime.md "Stores"): the operation saw v,
 * written by `by`, at version ver, without reading the store now; the
 * commit validates that version like a read's.  A cell the operation has
 * read or written already keeps what it has. */
int zst_read_replay(zst_op *op, const char *cell, zgrt_value v, int64_t by, int64_t ver);
/* The tool the generation chose, resolved against the registry seen at
 * begin (ZST_EUNKNOWN if it is not there). */
int zst_plan(zst_op *op, const char *tool);
/* Issues an effect of `tool` with `arg`; *ticket numbers it for
 * zst_complete.  At L4 the tool must be in the pinned registry. */
int zst_issue(zst_op *op, const char *tool, zgrt_value arg, int *ticket);
/* The effect `ticket` completed (any thread). */
int zst_complete(zst_op *op, int ticket);
/* Buffers a write (checked against the cell's type). */
int zst_write(zst_op *op, const char *cell, zgrt_value v);
/* Buffers a write of the registry: at the commit it becomes these n
 * tools (n = 0: empty).  A tool it keeps keeps its version; one it adds
 * gets the version after the one the operation saw at begin, else 1.
 * The record's write_registry is the registry after the commit. */
int zst_write_tools(zst_op *op, const char *const *tools, int n);
/* The idempotency key of the operation (before its commit): the commit
 * stores it with its outcome in the same backend section, and a commit
 * whose key the store has already applies nothing and returns the
 * recorded outcome (ZST_OK and that transaction, or ZST_RETRY). */
int zst_op_key(zst_op *op, const char *key);
/* Commits: ZST_OK, or ZST_RETRY (the attempt is recorded aborted; end
 * the operation and begin a new one).  Every issued effect must have
 * completed. */
int zst_commit(zst_op *op);
/* zst_commit and zst_end in one step (one backend section, so the
 * operation is never committed without being finished: it cannot be
 * retracted, and from L2 up nothing waits for its end).  Frees the
 * operation; returns what zst_commit returns. */
int zst_commit_end(zst_op *op);
/* Retracts a committed operation before its end (saga compensation, a
 * veto): its writes are undone where they still stand, its record is
 * aborted, and from L2 up every unfinished operation that read from it
 * is retracted too. */
int zst_retract(zst_op *op);
/* The same for the operation `txn` of any handle of the store. */
int zst_retract_txn(zst_store *s, int64_t txn);
/* The operation's transaction id (0 before it commits or aborts). */
int64_t zst_txn(const zst_op *op);
/* Ends and frees the operation: an uncommitted one is aborted (recorded
 * aborted); a committed one is finished.  Returns ZST_RETRACTED if it was
 * retracted. */
int zst_end(zst_op *op);

/* Frees an uncommitted operation and records nothing (its outcome is
 * known from elsewhere: a durable run's replay). */
void zst_drop(zst_op *op);

/* The calling thread's last error message. */
const char *zst_error(void);

#ifdef __cplusplus
}
#endif
#endif
