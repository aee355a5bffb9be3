/* transport.h — the NATS transport between per-lifeline processes
 * (runtime/nats/).  Prefix zri_nats_, hidden.  It builds on the runtime's
 * core header (rt.h: messages, the transport interface) and on net/'s
 * frame codec, secret, HMAC tags and program identity (net/net.h), and is
 * the only part of the runtime linked with the NATS C client (libnats).
 * zgrt_main (main.c) opens it instead of the socket transport when the
 * run has --nats, with the same callbacks (zri_net_callbacks).
 *
 *   nats.c   connection to the NATS server(s) (authentication, TLS),
 *            subjects, tagged frames, the presence handshake, heartbeats,
 *            BYE
 *
 * Errors follow rt.h: 0 or -1 (NULL) with a message in err.
 */
#ifndef ZGRT_NATS_TRANSPORT_H
#define ZGRT_NATS_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "net/net.h"
#include "rt.h"

/* The longest run id: a subject token of letters, digits, '_' and '-'. */
#define ZRI_NATS_RUN_MAX 64

typedef struct zri_nats zri_nats;

typedef struct zri_nats_config {
    const char *servers;      /* --nats URL[,URL…] */
    const char *run;          /* --run RUN: the subjects' scope */
    const zri_secret *secret; /* the run's secret (required) */
    double timeout_s;         /* for the peers to answer (<= 0: 30 s) */
    double heartbeat_s;       /* silence limit (0: none) */
    /* durable runs: messages through a JetStream stream (nats.c), and how
     * long a silent peer is waited for (its --peer-wait) */
    int durable;
    double peer_wait_s;
    int replicas; /* the stream's replicas (a JetStream cluster; 0: 1) */
    /* [l] non-zero: lifeline l's process has ended (a resume: its BYE may
     * have been taken before); may be NULL */
    const uint8_t *ended;
    /* authentication and TLS (each NULL when not given) */
    const char *creds;      /* --nats-creds FILE: JWT and NKey seed */
    const char *user;       /* --nats-user USER; the password: password */
    const char *password;   /* from $ZGC_NATS_PASSWORD (never an option) */
    const char *token;      /* from --nats-token-file or $ZGC_NATS_TOKEN */
    const char *nkey_seed;  /* --nats-nkey FILE: an NKey seed file */
    const char *nkey_pub;   /* its public key (zri_nats_nkey_public) */
    const char *ca;         /* --nats-ca FILE: trusted certificates */
    const char *cert, *key; /* --nats-cert / --nats-key: client certificate */
} zri_nats_config;

/* 1 when s is a valid run id for subjects (1 to ZRI_NATS_RUN_MAX letters,
 * digits, '_' or '-'). */
ZRI_HIDDEN int zri_nats_run_ok(const char *s);
/* Reads the token file (its first line, without the line break): a
 * malloc'd string, or NULL with a message. */
ZRI_HIDDEN char *zri_nats_read_token(const char *path, char *err, size_t errlen);
/* The public key ("U…", 56 characters and a NUL) of the NKey user seed in
 * the file ("SU…").  0, or -1 with a message. */
ZRI_HIDDEN int zri_nats_nkey_public(const char *seed_file, char pub[57], char *err, size_t errlen);

/* Connects to the server, subscribes to this lifeline's inbox and waits
 * until every other lifeline of the run has answered (the presence
 * handshake, nats.c), at most timeout_s.  The callbacks run on a worker
 * of the run waiting in the transport (zri_transport.wait), on this
 * module's thread or on the client's delivery thread (a durable run's
 * HELLO, BEAT and STOP), possibly before zri_nats_open returns, and
 * never once zri_nats_close or zri_nats_abort has begun; decoded values
 * are allocated in h.  NULL with a message in err. */
ZRI_HIDDEN zri_nats *zri_nats_open(const zgrt_program *p, int self, const zri_nats_config *c,
                                   zri_heap *h, const zri_net_callbacks *cb, char *err,
                                   size_t errlen);
ZRI_HIDDEN int zri_nats_send(zri_nats *n, const zri_msg *m, char *err, size_t errlen);
/* Durable runs: waits until the stream has acknowledged every message
 * zri_nats_send published (they are not waited for one by one); -1 with
 * a message when one could not be stored.  Core NATS: nothing to do. */
ZRI_HIDDEN int zri_nats_flush(zri_nats *n, char *err, size_t errlen);
/* Durable runs: this lifeline's journal has committed `committed`
 * messages of the stream from -> self on chan; the stream's messages up
 * to there are acknowledged.  Any thread (the journal's commits). */
ZRI_HIDDEN void zri_nats_ack(zri_nats *n, int32_t from, int32_t chan, int64_t committed);
/* After a normal end: BYE to every peer, then the connection closes. */
ZRI_HIDDEN void zri_nats_close(zri_nats *n);
/* After an error: STOP to every peer (they fail at once), then closes. */
ZRI_HIDDEN void zri_nats_abort(zri_nats *n);
ZRI_HIDDEN zri_transport zri_nats_transport(zri_nats *n);

/* A connection for the workflow's stores in JetStream key-value buckets
 * (runtime/store: zst_config.nats): a natsConnection * with c's servers
 * and credentials, or NULL with a message. */
ZRI_HIDDEN void *zri_nats_store_connect(const zri_nats_config *c, char *err, size_t errlen);
ZRI_HIDDEN void zri_nats_store_close(void *conn);

#endif
