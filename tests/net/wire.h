/* wire.h — the transport's wire protocol as the tests speak it, written
 * apart from the runtime from its description (runtime/net/hello.c,
 * socket.c, auth.c) on OpenSSL's one-shot HMAC: the handshake from either
 * side, tagged frames, frame boundaries.  Prefix tw_.  Used by the
 * transport tests (test_net.c) and by the scripted fake peer (fakepeer.c),
 * so a hostile peer can forge exactly the part it means to forge. */
#ifndef ZGC_TESTS_WIRE_H
#define ZGC_TESTS_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define TW_ID 32
#define TW_NONCE 32
#define TW_MAC 32
#define TW_TAG 16
#define TW_HELLO_MAX 4096
#define TW_NAME_MAX 1024
#define TW_MAGIC 0x5A
#define TW_HS_VERSION 2
#define TW_FRAME_VERSION 4
enum { TW_USER = 0, TW_CTL = 1, TW_BYE = 2, TW_HELLO = 3, TW_ANSWER = 4, TW_PROOF = 5 };
enum { TW_ACCEPT = 6, TW_BEAT = 7, TW_BATCH = 11 };

/* Who a fake lifeline says it is, and what it knows. */
typedef struct tw_self {
    uint8_t id[TW_ID];
    char workflow[TW_NAME_MAX + 1];
    uint64_t nlifelines;
    uint64_t index;
    char name[TW_NAME_MAX + 1];
    uint8_t secret[4096];
    size_t secret_len;
    uint32_t heartbeat_ms;
} tw_self;

/* A HELLO or an ANSWER, decoded. */
typedef struct tw_greeting {
    uint8_t id[TW_ID];
    uint64_t nlifelines, from, to, heartbeat_ms;
    uint8_t nonce[TW_NONCE];
    int status;
    char workflow[TW_NAME_MAX + 1], lifeline[TW_NAME_MAX + 1], reason[TW_NAME_MAX + 1];
    uint8_t mac[TW_MAC];
} tw_greeting;

/* One connection, once its handshake is done: the key, the number of the
 * next frame (sent or received, the connection's one direction). */
typedef struct tw_conn {
    int fd;
    uint8_t hello[TW_HELLO_MAX], answer[TW_HELLO_MAX], proof[64];
    size_t hello_len, answer_len, proof_len;
    uint8_t key[TW_MAC];
    uint64_t seq;
    tw_greeting peer; /* what the other side said */
} tw_conn;

/* ---- bytes on a socket (timeouts in seconds) ---- */
/* 0, or -1 when the other side is gone */
int tw_write(int fd, const void *d, size_t n);
/* 0; -1 at the end of the stream or an error; -2 on timeout */
int tw_read(int fd, void *d, size_t n, double timeout);
/* a length-prefixed frame: its payload, as tw_read */
int tw_read_frame(int fd, uint8_t *payload, size_t cap, size_t *n, double timeout);
int tw_write_frame(int fd, const uint8_t *payload, size_t n);

/* ---- the handshake ---- */
void tw_random(uint8_t *d, size_t n);
/* HMAC-SHA256(secret, label NUL || L(a) || L(b) || L(c)), NULL parts left out */
void tw_mac(const uint8_t *secret, size_t slen, const char *label, const uint8_t *a, size_t an,
            const uint8_t *b, size_t bn, const uint8_t *c, size_t cn, uint8_t out[TW_MAC]);
size_t tw_hello_payload(const tw_self *me, uint64_t to, const uint8_t nonce[TW_NONCE], uint8_t *d);
/* An ANSWER payload to hello (mac included). */
size_t tw_answer_payload(const tw_self *me, uint64_t to, int status, const char *reason,
                         const uint8_t nonce[TW_NONCE], const uint8_t *hello, size_t hello_len,
                         uint8_t *d);
/* 0, or -1 when malformed */
int tw_parse_greeting(const uint8_t *d, size_t n, int answer, tw_greeting *g);
/* id, workflow and lifeline count from a HELLO or an ANSWER someone sent */
void tw_learn(tw_self *me, const tw_greeting *g);

/* As the connecting side to the lifeline `to` listening on fd's other
 * end: HELLO, ANSWER, PROOF, ACCEPT.  0 when accepted; -1 refused or
 * failed (c->peer holds the answer if one came; why says what happened). */
int tw_connect(tw_conn *c, int fd, const tw_self *me, uint64_t to, double timeout, char *why,
               size_t whylen);
/* As the accepting side of a lifeline's connection: reads its HELLO
 * (c->peer), answers, checks its PROOF, accepts.  0, or -1 (why).  A me
 * with nlifelines 0 takes the program identity, workflow, lifeline count,
 * heartbeat and its own index from the HELLO (a fake that learns who it
 * must be). */
int tw_accept(tw_conn *c, int fd, const tw_self *me, double timeout, char *why, size_t whylen);

/* ---- frames after the handshake ---- */
/* The tag of frame seq. */
void tw_tag(const uint8_t key[TW_MAC], uint64_t seq, const uint8_t *payload, size_t n,
            uint8_t tag[TW_TAG]);
/* A whole frame (length, payload, tag of frame c->seq, which is counted)
 * into out (n + 4 + TW_TAG bytes); returns its size. */
size_t tw_seal(tw_conn *c, const uint8_t *payload, size_t n, uint8_t *out);
/* tw_seal and write. */
int tw_send(tw_conn *c, const uint8_t *payload, size_t n);
/* Reads one frame and checks its tag: 0 with the payload; -1 end, -2
 * timeout, -3 bad tag. */
int tw_recv(tw_conn *c, uint8_t *payload, size_t cap, size_t *n, double timeout);
/* A heartbeat / a BYE from lifeline from to lifeline to (payloads). */
size_t tw_beat_payload(uint8_t *d);
size_t tw_bye_payload(uint64_t from, uint64_t to, uint8_t *d);

#endif
