/* conn.h — what nats.c and kv.c share of a connection to the NATS
 * server (runtime/nats/, internal: includes the NATS C client's header).
 */
#ifndef ZGRT_NATS_CONN_H
#define ZGRT_NATS_CONN_H

#include <nats/nats.h>

#include "transport.h"

/* The authentication and TLS of c (--nats-creds, --nats-user, a token,
 * --nats-nkey, --nats-ca, --nats-cert/--nats-key) set on o. */
ZRI_HIDDEN natsStatus zri_nats_auth_options(natsOptions *o, const zri_nats_config *c);
/* natsConnection_Connect, tried up to three times when the server refused
 * a key-signed login (--nats-nkey, --nats-creds; nats.c has the why). */
ZRI_HIDDEN natsStatus zri_nats_dial(natsConnection **nc, natsOptions *o, const zri_nats_config *c);
/* Connects to c's servers with its credentials, reconnecting for up to
 * two minutes; the connection's name `name`, on_error (or NULL) its
 * asynchronous error handler. */
ZRI_HIDDEN natsStatus zri_nats_connect(natsConnection **nc, const zri_nats_config *c,
                                       const char *name, natsErrHandler on_error, void *u);

#endif
