/* net.h — messages between processes (runtime/net/): the frame codec, the
 * handshake and the socket transport of per-lifeline executables.  Prefix
 * zri_, hidden; builds on the runtime's core header (rt.h: values,
 * messages, the transport interface) and nothing else of it.  zgrt_main
 * (main.c) reads the run's secret, opens the transport, gives the run its
 * zri_transport and the run's zri_run_deliver / zri_run_lost /
 * zri_run_ended as the callbacks.
 *
 *   auth.c    the cryptography, on OpenSSL's libcrypto: the secret file,
 *             random nonces, SHA-256, HMAC-SHA256, frame tags
 *   frame.c   message frames: a length-prefixed, validated binary codec
 *   hello.c   the connection handshake: program identity, membership of
 *             the run (HMAC challenge and response), the frame key
 *   socket.c  Unix-domain and TCP stream sockets between the processes:
 *             connections, stray connections, tagged frames, heartbeats,
 *             buffered sends
 *
 * Errors follow rt.h: 0 or -1 (NULL) with a message in err.
 */
#ifndef ZGRT_NET_H
#define ZGRT_NET_H

#include <stddef.h>
#include <stdint.h>

#include "rt.h"

/* ===================================================================== */
/* auth.c                                                                 */
/* ===================================================================== */

/* The run's secret: the bytes of the --secret-file (see auth.c). */
#define ZRI_SECRET_MIN 16
#define ZRI_SECRET_MAX 4096
typedef struct zri_secret {
    uint8_t key[ZRI_SECRET_MAX];
    size_t len;
} zri_secret;

#define ZRI_HASH_BYTES 32 /* SHA-256, HMAC-SHA256 */
#define ZRI_TAG_BYTES 16  /* the tag after every frame's payload */

typedef struct zri_bytes {
    const void *d;
    size_t n;
} zri_bytes;

/* Reads the secret file: a regular file of ZRI_SECRET_MIN to
 * ZRI_SECRET_MAX bytes without permissions for group or others. */
ZRI_HIDDEN int zri_secret_load(const char *path, zri_secret *s, char *err, size_t errlen);
ZRI_HIDDEN int zri_random(uint8_t *out, size_t n, char *err, size_t errlen);
/* SHA-256 / HMAC-SHA256 of the concatenated parts; -1 when libcrypto
 * fails (for lack of memory). */
ZRI_HIDDEN int zri_sha256(const zri_bytes *parts, int nparts, uint8_t out[ZRI_HASH_BYTES]);
ZRI_HIDDEN int zri_hmac(const uint8_t *key, size_t klen, const zri_bytes *parts, int nparts,
                        uint8_t out[ZRI_HASH_BYTES]);
/* 1 when the n bytes are equal (constant time). */
ZRI_HIDDEN int zri_equal(const uint8_t *a, const uint8_t *b, size_t n);
/* The tags of one connection's frames, keyed with the connection's key;
 * one thread at a time. */
typedef struct zri_mac zri_mac;
ZRI_HIDDEN zri_mac *zri_mac_new(const uint8_t key[ZRI_HASH_BYTES], char *err, size_t errlen);
/* The tag of frame number seq with this payload (libcrypto's SHA-256
 * compression, which cannot fail, on states zri_mac_new made). */
ZRI_HIDDEN void zri_mac_tag(zri_mac *m, uint64_t seq, const uint8_t *payload, size_t len,
                            uint8_t tag[ZRI_TAG_BYTES]);
ZRI_HIDDEN void zri_mac_free(zri_mac *m);

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
/* The same, into room (cap bytes, may be NULL) when the frame fits: *buf
 * is then room, else a malloc'd buffer (free it when it is not room). */
ZRI_HIDDEN int zri_frame_encode_in(const zgrt_program *p, const zri_msg *m, uint8_t *room,
                                   size_t cap, uint8_t **buf, size_t *len);
ZRI_HIDDEN int zri_frame_decode(const zgrt_program *p, zri_heap *h, const uint8_t *payload,
                                size_t len, zri_msg **out, char *err, size_t errlen);
/* Where a decoded message's block comes from: a block from → to on chan
 * with room for nvals values and the metadata of form, laid out as
 * zri_msg_new's and freed with free(), or NULL for zri_msg_new's (the
 * run's recycled blocks: zri_run_block). */
typedef zri_msg *(*zri_block_fn)(void *user, int32_t nvals, int32_t from, int32_t to, int32_t chan,
                                 int form);
/* zri_frame_decode taking a user or control message's block from block
 * (may be NULL). */
ZRI_HIDDEN int zri_frame_decode_in(const zgrt_program *p, zri_heap *h, zri_block_fn block,
                                   void *block_user, const uint8_t *payload, size_t len,
                                   zri_msg **out, char *err, size_t errlen);
/* The most common frames — a message or control decision without
 * metadata, with one-byte indexes and counts and int or bool values —
 * are read and written on a short path
 * (frame.c: decode_short, encode_short) that accepts and produces exactly
 * what the general code does.  zri_frame_decode_long is the general
 * reader alone, to hold the short path to (tests); zri_frame_encode, with
 * no room, always writes with the general writer. */
ZRI_HIDDEN int zri_frame_decode_long(const zgrt_program *p, zri_heap *h, zri_block_fn block,
                                     void *block_user, const uint8_t *payload, size_t len,
                                     zri_msg **out, char *err, size_t errlen);
#define ZRI_FRAME_MAX (64u << 20) /* largest accepted payload */
#define ZRI_FRAME_MAGIC 0x5Au
#define ZRI_FRAME_VERSION 4u
/* Payload kinds that zri_frame_decode does not take: the handshake's
 * (hello.c), the heartbeat (socket.c: magic, version, kind, nothing
 * else) and the counts frames (zri_counts_decode). */
enum { ZRI_KIND_HELLO = 3, ZRI_KIND_ANSWER = 4, ZRI_KIND_PROOF = 5, ZRI_KIND_ACCEPT = 6 };
enum { ZRI_KIND_BEAT = 7, ZRI_KIND_ACK = 8, ZRI_KIND_SYNC = 9 };
/* A frame of frames, under one tag: magic, version, ZRI_KIND_BATCH
 * (ZRI_BATCH_HEAD bytes), then each frame's payload after its length
 * (u32, big-endian, at least 1).  Sockets: the frames written together to
 * a peer (socket.c); NATS: a durable run's frames to a peer between two
 * flushes, one message of the stream (nats.c).  Kind 10 is NATS's STOP. */
enum { ZRI_KIND_BATCH = 11 };
#define ZRI_BATCH_HEAD 3
/* Whether payload (len bytes) is a batch. */
ZRI_HIDDEN int zri_is_batch(const uint8_t *payload, size_t len);
/* The batch's next frame from *at (ZRI_BATCH_HEAD first): 1 with *item
 * and *ilen set and *at past it, 0 at its end, -1 when a length is 0 or
 * overruns the batch. */
ZRI_HIDDEN int zri_batch_next(const uint8_t *payload, size_t len, size_t *at, const uint8_t **item,
                              size_t *ilen);

/* A stream (sender, receiver, channel) numbers its messages 1, 2, ...:
 * with `received` of them in, message seq is the next one, a copy of one
 * already in (sent again after a reconnection: drop it), or a gap (a
 * message lost: fail). */
enum { ZRI_SEQ_GAP = -1, ZRI_SEQ_NEXT = 0, ZRI_SEQ_COPY = 1 };
ZRI_HIDDEN int zri_seq_check(int64_t received, int64_t seq);

/* Counts frames of durable runs (the stream peer → the frame's sender, on
 * chan): SYNC, the first frame on a new connection, says how many
 * messages the sender of the frame holds (received) and how many of them
 * its journal has committed; ACK, after a commit, says committed (and
 * received is taken equal).  encode: a malloc'd frame (length included),
 * -1 when the counts break a rule decode checks (increasing channels,
 * 0 <= committed <= received).  decode: the payload; *out malloc'd. */
typedef struct zri_count {
    int32_t chan;
    int64_t received, committed;
} zri_count;
ZRI_HIDDEN int zri_counts_encode(const zgrt_program *p, int kind, int32_t from, int32_t to,
                                 const zri_count *c, int32_t n, uint8_t **buf, size_t *len);
ZRI_HIDDEN int zri_counts_decode(const zgrt_program *p, const uint8_t *payload, size_t len,
                                 int *kind, int32_t *from, int32_t *to, zri_count **out, int32_t *n,
                                 char *err, size_t errlen);

/* ===================================================================== */
/* hello.c — the handshake                                                */
/* ===================================================================== */

#define ZRI_NONCE_BYTES 32
#define ZRI_HELLO_MAX 4096      /* largest handshake payload */
#define ZRI_HELLO_NAME_MAX 1024 /* longest name or reason in a handshake */
#define ZRI_ID_TEXT 13          /* a program identity in messages: 12 hex digits */

/* The program identity the lifelines compare (hello.c). */
ZRI_HIDDEN void zri_program_id(const zgrt_program *p, uint8_t id[ZRI_HASH_BYTES]);
ZRI_HIDDEN void zri_id_text(const uint8_t id[ZRI_HASH_BYTES], char out[ZRI_ID_TEXT]);

/* One connection's handshake, on either side. */
typedef struct zri_hs {
    const zgrt_program *p;
    const zri_secret *secret;
    int self;
    uint32_t heartbeat_ms; /* this lifeline's --heartbeat */
    uint8_t id[ZRI_HASH_BYTES];
    uint8_t nonce[ZRI_NONCE_BYTES];
    uint8_t hello[ZRI_HELLO_MAX], answer[ZRI_HELLO_MAX], proof[64];
    size_t hello_len, answer_len, proof_len;
    /* once the handshake got that far: the other lifeline, its
     * --heartbeat, and the key of the frames (after ACCEPT) */
    int peer;
    uint32_t peer_heartbeat_ms;
    uint8_t key[ZRI_HASH_BYTES];
    char refusal[ZRI_HELLO_NAME_MAX + 1]; /* the accepting side refused: why */
} zri_hs;

/* id: zri_program_id of p; draws the nonce. */
ZRI_HIDDEN int zri_hs_init(zri_hs *h, const zgrt_program *p, int self, const zri_secret *secret,
                           uint32_t heartbeat_ms, const uint8_t id[ZRI_HASH_BYTES], char *err,
                           size_t errlen);
/* The connecting side.  zri_hs_hello writes the HELLO frame (length
 * included; ZRI_HELLO_MAX + 4 bytes) to lifeline `to` and returns its
 * size; zri_hs_answer checks the ANSWER payload and writes the PROOF
 * frame (0); zri_hs_accepted checks the ACCEPT payload and derives the
 * key.  -1: a mismatch that fails this lifeline, with the message (naming
 * addr) in err; zri_hs_answer returns 1 for an authentic refusal: the
 * message in err, and a PROOF in frame to send before failing. */
ZRI_HIDDEN size_t zri_hs_hello(zri_hs *h, int to, uint8_t *frame);
ZRI_HIDDEN int zri_hs_answer(zri_hs *h, const uint8_t *d, size_t n, const char *addr,
                             uint8_t *frame, size_t *flen, char *err, size_t errlen);
ZRI_HIDDEN int zri_hs_accepted(zri_hs *h, const uint8_t *d, size_t n, const char *addr, char *err,
                               size_t errlen);
/* The accepting side.  zri_hs_on_hello checks a HELLO payload: returns
 * ZRI_HS_ANSWER (frame: the ANSWER to send; then wait for the PROOF),
 * ZRI_HS_REFUSE (frame: a refusal to send, then wait for the PROOF; why:
 * the reason) or ZRI_HS_DROP (drop without an answer; why).
 * zri_hs_on_proof checks the PROOF payload: 0 (frame: the ACCEPT to send;
 * h->peer and h->key are set), ZRI_HS_DROP (a stray: drop it; why) or,
 * after a refusal, ZRI_HS_REFUSE (the refused peer holds the secret: a
 * lifeline of this run that does not match, an error; why: the reason). */
enum { ZRI_HS_DROP = -1, ZRI_HS_ANSWER = 0, ZRI_HS_REFUSE = 1 };
ZRI_HIDDEN int zri_hs_on_hello(zri_hs *h, const uint8_t *d, size_t n, uint8_t *frame, size_t *flen,
                               char *why, size_t whylen);
ZRI_HIDDEN int zri_hs_on_proof(zri_hs *h, const uint8_t *d, size_t n, uint8_t *frame, size_t *flen,
                               char *why, size_t whylen);

/* ===================================================================== */
/* socket.c — transport between per-lifeline processes                    */
/* ===================================================================== */

typedef struct zri_net zri_net;
typedef struct zri_net_callbacks {
    /* a decoded message addressed to this lifeline (ownership passes) */
    void (*deliver)(void *user, zri_msg *m);
    /* a peer failed: malformed, forged or unexpected frame, lost
     * connection, silence beyond the heartbeat limit */
    void (*fail)(void *user, const char *msg);
    /* lifeline l ended normally (its BYE came after its last message) */
    void (*ended)(void *user, int l);
    /* a connection that is not a lifeline of this run was dropped, or (keep
     * mode) a peer was lost and is waited for, or came back (one line, no
     * newline); may be NULL */
    void (*note)(void *user, const char *msg);
    /* how many messages of the stream from -> self on chan this lifeline
     * holds (zri_run_received): the reader delivers only the next one
     * (zri_seq_check) and the SYNC frames say it; may be NULL (no check) */
    int64_t (*received)(void *user, int32_t from, int32_t chan);
    void *user;
    /* where decoded messages' blocks come from (zri_frame_decode_in); may
     * be NULL */
    zri_block_fn block;
} zri_net_callbacks;

typedef struct zri_net_config {
    const char *listen;            /* ADDR: unix:PATH, tcp:HOST:PORT, tcp:PORT, tcp:*:PORT */
    const char *const *peer_addrs; /* [l]: lifeline l's ADDR (not self's) */
    const zri_secret *secret;      /* the run's secret (required) */
    double timeout_s;              /* for connecting (<= 0: 60 s) */
    double heartbeat_s;            /* silence limit (0: none; socket.c) */
    /* durable runs: how long a lost peer is waited for (0: a lost peer
     * fails at once; > 0: keep mode, socket.c "Lost peers") */
    double peer_wait_s;
    /* [l] non-zero: lifeline l's process has ended (a resume: not
     * connected, told to the run as ended); may be NULL */
    const uint8_t *ended;
    /* asked while connecting fails: 1 when lifeline l has ended meanwhile
     * (a resume racing with a peer's end: it is then treated as ended);
     * may be NULL */
    int (*peer_ended)(void *u, int32_t l);
    void *peer_ended_u;
} zri_net_config;

/* Listens on c->listen and connects to every other lifeline (retrying
 * until it answers or timeout_s passes), each connection authenticated
 * both ways.  Returns NULL with a message in err.  The callbacks run on
 * the transport's own thread, or on a worker of the run in the
 * transport's wait (zri_net_transport), one thread at a time (the one
 * that allocates in h), from the
 * moment a peer's connection is adopted — possibly before zri_net_open
 * returns (a peer already running sends early; its messages wait in the
 * run's queues) — and never once zri_net_close has begun.  zri_net_close
 * says BYE to every peer: call it only when the lifeline ended normally
 * (a process that just exits makes its peers report the lost
 * connection). */
ZRI_HIDDEN zri_net *zri_net_open(const zgrt_program *p, int self, const zri_net_config *c,
                                 zri_heap *h, const zri_net_callbacks *cb, char *err,
                                 size_t errlen);
/* zri_net_send buffers the frame; zri_net_flush writes every buffered
 * frame (call it before the lifeline may wait).  Both return 0, or -1
 * with a message in err when a connection is broken. */
ZRI_HIDDEN int zri_net_send(zri_net *n, const zri_msg *m, char *err, size_t errlen);
ZRI_HIDDEN int zri_net_flush(zri_net *n, char *err, size_t errlen);
/* Keep mode: this lifeline's journal has committed `committed` messages
 * of the stream from -> self on chan; tells lifeline `from` (an ACK), so
 * that it frees them.  Any thread (the journal's commits). */
ZRI_HIDDEN void zri_net_ack(zri_net *n, int32_t from, int32_t chan, int64_t committed);
/* Keep mode, before zri_net_close: waits (at most peer_wait_s) until
 * every peer that has not ended is connected and has acknowledged every
 * message this lifeline sent it; -1 when time ran out.  0 at once
 * otherwise. */
ZRI_HIDDEN int zri_net_drain(zri_net *n);
ZRI_HIDDEN void zri_net_close(zri_net *n);
/* Closes without BYE (after a failed run): the peers report the failure. */
ZRI_HIDDEN void zri_net_abort(zri_net *n);
/* The transport as the run's zri_transport (send and flush above). */
ZRI_HIDDEN zri_transport zri_net_transport(zri_net *n);

#endif
