/* zst_internal.h — the parts of the store library (runtime/store/, prefix
 * zst_, hidden):
 *
 *   error.c   the calling thread's last message
 *   store.c   the disciplines L0..L4, operations, OpRecords
 *   value.c   zgrt_value <-> JSON
 *   mem.c     the in-memory backend (one process, a mutex)
 *   sqlite.c  the SQLite backend (processes on one host, one file)
 *   natskv.c  the NATS backend (processes on any hosts, a JetStream
 *             key-value bucket)
 *
 * A backend is a map of JSON documents keyed by (kind, key) with
 * exclusive sections: every read or change of the store's state happens
 * between lock and unlock, and a section that fails is rolled back.
 * Kinds: "cell" (one per cell), "op" (one per committed operation),
 * "meta" ("state": clock, next txn, level; "live": the committed
 * operations not yet final), "reg" ("tools": name -> version).
 */
#ifndef ZST_INTERNAL_H
#define ZST_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>

#include "zst.h"

#define ZST_HIDDEN __attribute__((visibility("hidden")))

typedef struct zst_backend zst_backend;
struct zst_backend {
    /* write: the section may change documents (SQLite: BEGIN IMMEDIATE) */
    int (*lock)(zst_backend *b, bool write);
    /* commit false: undo every put of the section */
    int (*unlock)(zst_backend *b, bool commit);
    /* *out: a new reference the caller owns; 1 if absent (*out NULL) */
    int (*get)(zst_backend *b, const char *kind, const char *key, json_t **out);
    /* doc NULL removes; the backend keeps its own copy */
    int (*put)(zst_backend *b, const char *kind, const char *key, json_t *doc);
    void (*close)(zst_backend *b);
};

ZST_HIDDEN zst_backend *zst_mem_open(void);
ZST_HIDDEN zst_backend *zst_sqlite_open(const char *path, int busy_ms, char *err, size_t errlen);
/* conn: a natsConnection * of the NATS C client, kept open by the caller */
ZST_HIDDEN zst_backend *zst_nats_open(void *conn, const char *bucket, int busy_ms, char *err,
                                      size_t errlen);

/* Sets the calling thread's message; returns code. */
ZST_HIDDEN int zst_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* value.c */
ZST_HIDDEN const char *zst_type_name(int tag);
/* The JSON form of v, which must be of type `tag`; NULL (ZST_ETYPE set) if not. */
ZST_HIDDEN json_t *zst_value_to_json(const zgrt_value *v, int tag);
/* The value of JSON j as type `tag`; strings and JSON are allocated and
 * appended to *owned (freed with zst_owned_free). */
ZST_HIDDEN int zst_value_from_json(json_t *j, int tag, zgrt_value *out, json_t *owned);
#endif
