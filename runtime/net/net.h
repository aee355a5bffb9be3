/* net.h — messages between processes (runtime/net/): the frame codec and
 * the socket transport of per-lifeline executables.  Prefix zri_, hidden;
 * builds on the runtime's core header (rt.h: values, messages, the
 * transport interface) and nothing else of it.  zgrt_main (main.c) opens
 * the transport, gives the run its zri_transport and the run's
 * zri_run_deliver / zri_run_lost as the callbacks.
 *
 *   frame.c   message frames: a length-prefixed, validated binary codec
 *   socket.c  Unix-domain and TCP stream sockets between the processes,
 *             the connection handshake, buffered sends
 *
 * Errors follow rt.h: 0 or -1 (NULL) with a message in err.
 */
#ifndef ZGRT_NET_H
#define ZGRT_NET_H

#include <stddef.h>
#include <stdint.h>

#include "rt.h"

/* ===================================================================== */
/* frame.c                                                                */
/* ===================================================================== */

/* A message from → to and its arrays in one malloc block, with room for
 * the metadata of form (ZRI_META_*: none, the plan's edge, a full clock
 * and the edge's entries; an edge without groups gets none unless the
 * clock is full); free with free().  NULL when nvals is out of range
 * (negative or more than a frame may carry). */
ZRI_HIDDEN zri_msg *zri_msg_new(const zgrt_program *p, int32_t nvals, int32_t from, int32_t to,
                                int form);

/* Frame: u32 big-endian payload length, then the payload (see frame.c).
 * encode: a malloc'd buffer holding the whole frame (length included);
 * -1 when m breaks a rule decode checks (nothing is allocated).
 * decode: the payload only (without the 4 length bytes); every field is
 * validated against the program (lifeline, channel, tag and value
 * ranges, value types, lengths, UTF-8); strings and json are allocated in
 * h.  Returns 0, or -1 with a message in err. */
ZRI_HIDDEN int zri_frame_encode(const zgrt_program *p, const zri_msg *m, uint8_t **buf,
                                size_t *len);
ZRI_HIDDEN int zri_frame_decode(const zgrt_program *p, zri_heap *h, const uint8_t *payload,
                                size_t len, zri_msg **out, char *err, size_t errlen);
#define ZRI_FRAME_MAX (64u << 20) /* largest accepted payload */

/* ===================================================================== */
/* socket.c — transport between per-lifeline processes                    */
/* ===================================================================== */

typedef struct zri_net zri_net;
typedef struct zri_net_callbacks {
    /* a decoded message addressed to this lifeline (ownership passes) */
    void (*deliver)(void *user, zri_msg *m);
    /* a peer failed: malformed or unexpected frame, lost connection */
    void (*fail)(void *user, const char *msg);
    void *user;
} zri_net_callbacks;

/* ADDR: unix:PATH or tcp:HOST:PORT.  Listens on listen_addr and connects
 * to peer_addrs[l] for every other lifeline l (retrying until it answers
 * or timeout_s passes; <= 0: 60 s).  Returns NULL with a message in err.
 * The callbacks run on the transport's own thread (the only one that
 * allocates in h), never before zri_net_open returns nor once
 * zri_net_close has begun.  zri_net_close says BYE to every peer: call it
 * only when the lifeline ended normally (a process that just exits
 * makes its peers report the lost connection). */
ZRI_HIDDEN zri_net *zri_net_open(const zgrt_program *p, int self, const char *listen_addr,
                                 const char *const *peer_addrs, zri_heap *h,
                                 const zri_net_callbacks *cb, double timeout_s, char *err,
                                 size_t errlen);
/* zri_net_send buffers the frame; zri_net_flush writes every buffered
 * frame (call it before the lifeline may wait).  Both return 0, or -1
 * with a message in err when a connection is broken. */
ZRI_HIDDEN int zri_net_send(zri_net *n, const zri_msg *m, char *err, size_t errlen);
ZRI_HIDDEN int zri_net_flush(zri_net *n, char *err, size_t errlen);
ZRI_HIDDEN void zri_net_close(zri_net *n);
/* Closes without BYE (after a failed run): the peers report the failure. */
ZRI_HIDDEN void zri_net_abort(zri_net *n);
/* The transport as the run's zri_transport (send and flush above). */
ZRI_HIDDEN zri_transport zri_net_transport(zri_net *n);

#endif
