/* kvstore.h — durable runs whose journals live in a JetStream key-value
 * bucket (--journal nats), as `zgc runs list|show|cancel --nats URL` see
 * them (prefix zk_).  The driver reads the bucket with the NATS C client
 * and never links the runtime: the keys are those docs/runtime.md
 * ("Journals in a key-value bucket") describes and runtime/nats/kv.c
 * writes — RUN.run (the run), RUN.L.<L> (lifeline L), RUN.T.<N> (human
 * task N).  The runs and
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

/* How to authenticate to the server, as the lifelines' executables do
 * (docs/runtime.md, "Distributed runs"); each NULL when not given. */
typedef struct ZkAuth {
    const char *creds;      /* --nats-creds FILE: JWT and NKey seed */
    const char *user;       /* --nats-user USER, password from $ZGC_NATS_PASSWORD */
    const char *token_file; /* --nats-token-file FILE (else $ZGC_NATS_TOKEN) */
    const char *nkey;       /* --nats-nkey FILE: an NKey user seed */
    const char *ca;         /* --nats-ca FILE: trusted certificates (TLS) */
    const char *cert, *key; /* --nats-cert / --nats-key: a client certificate */
} ZkAuth;

/* Connects to the NATS server(s) at url (nats://HOST:PORT, several
 * separated by commas; user and password or a token may be in the URL),
 * authenticated as auth says (NULL: no options), and opens bucket (which
 * must exist).  Secrets are never part of a message. */
ZkStore *zk_open(const char *url, const ZkAuth *auth, const char *bucket, char *err);
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
/* The names of run id's lifelines, as its record keeps them (none, *n 0,
 * for a run whose record does not: made by an earlier zgc).  0, or -1. */
int zk_run_names(ZkStore *k, const char *id, char ***out, int *n, char *err);
/* The tasks of run id (every run's: NULL), pending ones only unless all,
 * by run and number. */
int zk_tasks(ZkStore *k, const char *id, bool all, ZsTask **out, int *n, char *err);
/* Answers pending task `task` of run id with answer (JSON text): its record
 * becomes answered (a revision check: an answer given meanwhile is not
 * overwritten).  1 done, 0 with a message when it is not pending (or does
 * not exist). */
int zk_answer(ZkStore *k, const char *id, long long task, const char *answer, char *err);
/* Cancels a run that has not ended: its record gets "cancelled" (written
 * with the revision it was read at, so that it replaces nothing it did
 * not see), and its pending tasks too; its lifelines' processes find it
 * at their next commit or within a second and stop.  1 done, 0 with a message when the run had
 * ended (or does not exist). */
int zk_cancel(ZkStore *k, const char *id, char *err);
/* Removes the runs that are done or cancelled (with failed, the failed
 * ones too) and whose processes have all stopped: every key of the run
 * (RUN.>, purged from the bucket's stream) and the run's message stream
 * ZG_RUN.  Their number in *removed; 0, or -1 with a message (what was
 * removed before stays removed). */
int zk_gc(ZkStore *k, bool failed, int *removed, char *err);
#endif
