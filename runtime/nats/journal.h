/* journal.h — durable per-lifeline runs journaled in a JetStream
 * key-value bucket instead of the SQLite run store (--journal nats), so
 * that a lifeline can be resumed on a host with no copy of its disk
 * (runtime/nats/kv.c).  Prefix zri_nats_kv_, hidden.  It implements the
 * run store's operations (runtime/durable/storage.h, the only part of
 * runtime/durable it sees); zgrt_main (main.c) opens it and gives it to
 * the durable run.
 *
 * What lives in the bucket (docs/runtime.md, "Journals in a key-value
 * bucket"), keys of run RUN and lifeline L:
 *   RUN.run            the run: workflow, source, fingerprint, mode,
 *                      directory, options, its journal (nats:BUCKET)
 *                      (JSON; written once, by the first lifeline to
 *                      start)
 *   RUN.L.<L>          lifeline L: status, process (host, pid), attempts,
 *                      its executable and options, the journal's chunks
 *                      (segments of attempt, first, count), events,
 *                      recent acts, state, error, result components and
 *                      the messages its journal holds per channel (JSON)
 *   RUN.C.<L>.<A>.<N>  chunk N of L's journal, written in attempt A (the
 *                      codec's bytes)
 *   RUN.T.<N>          human task N (JSON), answered by `zgc answer --nats`
 * Only lifeline L's process writes RUN.L.<L>, each time with the revision
 * it read or wrote last (a KV update with an expected revision): a second
 * process writing the same lifeline's journal is refused, and the first
 * one, whose revision is then stale, fails with that error too.
 */
#ifndef ZGRT_NATS_JOURNAL_H
#define ZGRT_NATS_JOURNAL_H

#include <stddef.h>

#include "durable/storage.h"
#include "transport.h"

/* The bucket of --journal nats (--journal nats:BUCKET names another). */
#define ZRI_NATS_KV_BUCKET "ZGC_JOURNAL"

/* Connects to the server of c (c->servers, its authentication and TLS)
 * and opens the bucket, with `create` (a new run) creating it when it
 * does not exist (file storage, history 1, c->replicas); the journal of
 * lifeline `self` of run c->run.
 * 0 with the backend in *be, or -1 with a message (the server is down,
 * JetStream is off, the bucket is missing and may not be created,
 * permission denied). */
ZRI_HIDDEN int zri_nats_kv_open(const zgrt_program *p, int self, const zri_nats_config *c,
                                const char *bucket, int create, zrd_backend *be, char *err,
                                size_t errlen);

/* The bucket on the server of c that holds run c->run, looked for in
 * every key-value bucket the server lets this user see: 1 with its name
 * in bucket, 0 (none), or -1 with a message. */
ZRI_HIDDEN int zri_nats_kv_find_run(const zgrt_program *p, int self, const zri_nats_config *c,
                                    char *bucket, size_t bucketlen, char *err, size_t errlen);

/* Whether the bucket on the server of c holds run c->run (its record
 * RUN.run): 1, 0 (no such bucket or record), or -1 with a message (the
 * server cannot be reached, JetStream is off, permission denied).  Never
 * creates the bucket. */
ZRI_HIDDEN int zri_nats_kv_has_run(const zgrt_program *p, int self, const zri_nats_config *c,
                                   const char *bucket, char *err, size_t errlen);

#endif
