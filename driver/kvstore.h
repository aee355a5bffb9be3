/* kvstore.h — durable runs whose journals live in a JetStream key-value
 * bucket (--journal nats), as `zgc runs list|show|cancel --nats URL` see
 * them (prefix zk_).  The driver reads the bucket with the NATS C client
 * and never links the runtime: the keys are those docs/runtime.md
 * ("Journals in a key-value bucket") describes and runtime/nats/kv.c
 * writes — RUN.run (the run), RUN.L.<L> (lifeline L).  The runs and
 * lifelines come back in store.h's structures, so that the commands print
 * them as they print a run store's.
 *
 * Errors: as store.h: 0 (or 1 for "found") on success, -1 with a message
 * in err (ZS_ERRLEN bytes); the commands exit with status 4 then. */
#ifndef ZGC_KVSTORE_H
#define ZGC_KVSTORE_H
#include "store.h"

#define ZK_BUCKET "ZGC_JOURNAL" /* the bucket of --journal nats */

typedef struct ZkStore ZkStore;

/* Connects to the NATS server(s) at url (nats://HOST:PORT, several
 * separated by commas; user and password or a token may be in the URL),
 * with the credentials file creds (NULL: none), and opens bucket (which
 * must exist). */
ZkStore *zk_open(const char *url, const char *creds, const char *bucket, char *err);
void zk_close(ZkStore *k);
/* "key-value bucket B on URL" */
const char *zk_where(const ZkStore *k);

/* Every run of the bucket, by id. */
int zk_runs(ZkStore *k, ZsRun **out, int *n, char *err);
/* 1 with the run, 0 when there is none. */
int zk_run(ZkStore *k, const char *id, ZsRun *out, char *err);
/* The records of the lifelines that have started, in the order of their
 * names. */
int zk_lifelines(ZkStore *k, const ZsRun *r, ZsLife **out, int *n, char *err);
/* Cancels a run that has not ended: its record gets "cancelled" (written
 * with the revision it was read at, so that it replaces nothing it did
 * not see); its lifelines' processes find it at their next commit or
 * within a second and stop.  1 done, 0 with a message when the run had
 * ended (or does not exist). */
int zk_cancel(ZkStore *k, const char *id, char *err);
#endif
