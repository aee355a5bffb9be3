/* nats.c — the transport between per-lifeline processes over a NATS
 * server (core NATS, the C client libnats): lifelines find one another
 * through subjects, not addresses.
 *
 * Subjects.  Lifeline A sends to lifeline B on zg.RUN.B.A (RUN: --run,
 * the run id) and reads its inbox zg.RUN.B.* (one subscription).  A
 * deployment's server permissions therefore give lifeline A publish on
 * zg.RUN.*.A and subscribe on zg.RUN.A.* only (docs/runtime.md,
 * "Distributed runs"): a lifeline cannot publish under another's name
 * then, and frames are authenticated besides (below).
 *
 * Wire.  A NATS message's data is
 *     counter payload tag
 *   counter  u64 big-endian: the frame's number from A to B, from 1 (0:
 *            a HELLO, not numbered)
 *   payload  a frame payload (frame.c; without its length): a user or
 *            control message, or one of the kinds below
 *   tag      ZRI_TAG_BYTES of HMAC-SHA256 over counter and payload
 *            (auth.c: zri_mac_tag), keyed with the key of the direction
 *            A → B:
 *              HMAC(secret, "zgc nats frames\0" || id || RUN || "\0" ||
 *                   A || "\0" || B)       (id: the program identity)
 *            and a HELLO with the same key without id ("zgc nats
 *            hello\0"), so that a lifeline of another program with the
 *            secret is told so instead of being ignored.
 *   The kinds of frames of this transport, beyond frame.c's messages:
 *     HELLO  magic version 3 from to heard heartbeat_ms id   (from, to:
 *            u16; heard u8: the sender has heard from the receiver;
 *            heartbeat_ms u32; id: 32 bytes)
 *     BEAT   magic version 7 heartbeat_ms (a heartbeat; u32: the sender's
 *            --heartbeat, as in its HELLO, which a peer may never see)
 *     BYE    frame.c's BYE: the sender ended normally, its last frame
 *     STOP   magic version 10: the sender's run failed; its peers stop
 *     BATCH  magic version 11 (u32 length, payload)...: durable runs, the
 *            frames a lifeline sent to one peer between two flushes (the
 *            runtime flushes before a lifeline may wait), as one message
 *            of the stream, acknowledged once the journal has committed
 *            every frame of it (a loop's decision and the message after
 *            it cost one stored message, not two)
 *   A frame whose tag does not check (another run, a process without the
 *   secret, a forgery, a frame published under another lifeline's name)
 *   is dropped with a note (at most NOTES_MAX) and never delivered; a
 *   message whose own from/to differ from its subject fails the run.  An
 *   authentic frame whose counter is not the next one: a copy (dropped
 *   with a note) or a gap (frames were lost, as when the server restarts
 *   while they are in flight: core NATS delivers at most once), which
 *   fails the peer.
 *
 * Presence.  Core NATS drops a message that finds no subscriber, so a
 * lifeline may send to B only once B's subscription is known to exist.
 * Each lifeline subscribes, then publishes a HELLO to every peer every
 * HELLO_EVERY_S until that peer has said it heard it (a HELLO with heard
 * set, or any numbered frame); a lifeline sends numbered frames to B only
 * after it has heard from B (anything B published was published after B
 * subscribed, and the server keeps one publisher's order).
 * zri_nats_open returns once every peer has been heard from.
 *
 * Heartbeats, lost peers, end.  As over sockets (socket.c): every
 * lifeline sends a BEAT to each peer every limit/BEATS_PER_LIMIT from
 * this module's thread; a peer heard from that then sends nothing for the
 * limit (the larger of the two --heartbeat values, off when either is 0)
 * is lost.  A process that exits without BYE (killed) is found so; one
 * whose run failed sends STOP first, and its peers stop at once.  BYE
 * tells the run that the peer ended (zri_run_ended).  Losing the server
 * connection for good (the client's reconnection gave up) fails the run;
 * while it reconnects, heartbeats decide.
 *
 * Threads.  The subscription that carries a run's messages is
 * synchronous: an idle worker of the run takes its messages (t_wait:
 * natsSubscription_NextMsg) and runs on_msg (on_js_msg for a durable
 * run's stream deliveries) on its own thread, so the receive that waited
 * runs next on that thread without a hand-off; local work ends that wait
 * through t_wake (an empty message to the lifeline's own subject,
 * zg.RUN.SELF.SELF, or zg.RUN.SELF.SELF.c in a durable run); while no
 * worker has waited for HANDBACK_S (a long action, before the run) this
 * module's thread takes them instead.  Core NATS: that subscription is
 * the inbox zg.RUN.SELF.*.  Durable runs: it is zg.RUN.SELF.SELF.c, the
 * consumer's deliver subject (the server delivers a push consumer's
 * messages only to a subscription of that very subject, not to a
 * wildcard one), whose deliveries keep their stream subject
 * zg.RUN.SELF.FROM; HELLO, BEAT and STOP come on zg.RUN.SELF.FROM.c, one
 * asynchronous subscription per peer (the client's delivery thread runs
 * on_msg).  rd_mu makes one taker at a time, and cb_lock one on_msg (the
 * only users of the heap and of the receiving tags).  One thread of this module sends HELLOs and BEATs and checks
 * silence; senders take the peer's lock (counter, tag and publish stay
 * in one order).  Once close or abort
 * begins, `closing` (under cb_lock, which on_msg holds while it works)
 * stops every callback.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <nats/nats.h>
#include <poll.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conn.h"
#include "transport.h"

#define HELLO_EVERY_S 0.02 /* a HELLO costs one small publish */
#define BEATS_PER_LIMIT 5  /* as over sockets: four beats may be missed */
#define DEFAULT_TIMEOUT 30.0
#define NOTES_MAX 20
#define KIND_STOP 10
#define BATCH_BYTES (256 << 10) /* a batch is published once it holds this */
#define HELLO_LEN (3 + 2 + 2 + 1 + 4 + ZRI_HASH_BYTES)
#define COUNTER_BYTES 8
/* The client's reconnection: every 250 ms for 2 minutes (a server
 * restart takes about a second); a NATS message is at most 1 MB by
 * default (max_payload), frames are at most ZRI_FRAME_MAX. */
#define RECONNECT_WAIT_MS 250
#define RECONNECT_TRIES 480
#define CLOSE_FLUSH_MS 5000
/* Durable runs.  A message published to the stream is acknowledged by
 * the server within JS_PUBLISH_WAIT_MS or published again, for at most
 * JS_PUBLISH_S (as long as the client tries to reconnect); a message delivered and not acknowledged
 * (its effect not committed: a crash, a delivery lost while the server
 * restarted) is delivered again after JS_ACK_WAIT_S; the stream drops a
 * message published again within JS_DUPLICATES_S (a resumed sender). */
#define JS_PUBLISH_WAIT_MS 2000
#define JS_PUBLISH_S 120.0
#define JS_ACK_WAIT_S 2
#define JS_DUPLICATES_S 600
#define JS_MAX_ACK_PENDING (1 << 30)
#define JS_SETUP_S 15.0 /* a forming cluster elects its leaders in seconds */
/* Core NATS runs read their subscription synchronously (see "Threads"):
 * a worker's wait takes messages for at most WAIT_SLICE_MS before it
 * looks at its scheduler again; this module's thread reads while no
 * worker has waited for HANDBACK_S, in slices of PUMP_SLICE_MS. */
#define WAIT_SLICE_MS 100
#define HANDBACK_S 0.02
#define PUMP_SLICE_MS 5

typedef struct peer {
    char subject[256]; /* where this lifeline publishes to it */
    char ctl[260];     /* durable runs: the subject of HELLO, BEAT and STOP */
    pthread_mutex_t lock;
    zri_mac *out_mac, *hello_out; /* under lock */
    uint64_t sent;                /* numbered frames sent (under lock) */
    zri_mac *in_mac, *hello_in;   /* the delivery thread's */
    uint64_t got;                 /* numbered frames received */
    /* under n->lock */
    int heard;      /* something authentic came from it */
    int heard_me;   /* it said it heard from this lifeline */
    int told;       /* a HELLO saying this lifeline heard it went out */
    int done;       /* BYE, STOP or failed: nothing more is taken */
    int ended;      /* BYE: no heartbeats to it either */
    double last;    /* when its last authentic frame came */
    uint32_t hb_ms; /* its --heartbeat */
    int away;       /* durable runs: silent beyond the limit, waited for */
    /* durable runs: the frames sent since the last flush (under lock),
     * published together as one message of the stream: ZRI_BATCH_HEAD, then
     * each frame's payload after its u32 length; oid: the first one's
     * de-duplication id */
    uint8_t *ob;
    size_t olen, ocap;
    int ocount;
    char oid[96];
} peer;

/* Durable runs: a message of the stream taken by this lifeline, with one
 * reference for each of its frames held until the journal commits it and
 * one for the callback that takes its frames; acknowledged when the last
 * goes, unless a frame of it was dropped to be delivered again (`keep`).
 * Under zri_nats.ack_lock. */
struct jref {
    natsMsg *m;
    int refs;
    int keep;
};

struct zri_nats {
    const zgrt_program *p;
    int self, nl;
    zri_heap *h;
    zri_net_callbacks cb;
    char url[512];     /* for messages */
    int tls, has_cert; /* TLS asked for (--nats-ca, tls://), a client certificate given */
    char run[ZRI_NATS_RUN_MAX + 1];
    natsConnection *nc;
    natsSubscription *sub;
    peer *peers;
    uint32_t hb_ms;
    pthread_mutex_t lock; /* the peers' states, closing, csub_done */
    pthread_cond_t cond;
    pthread_mutex_t cb_lock; /* held by on_msg while it works */
    int closing;
    int conn_closed; /* the client called on_closed, its last callback */
    int notes;
    int failed_conn; /* the connection failed, or the server refused something */
    char why[1024];  /* its message */
    pthread_t thread;
    int thread_on, stop;
    /* sub is synchronous; whoever holds rd_mu takes its messages (a
     * worker in t_wait, or this module's thread while no worker waits:
     * `polling`, `poll_end` (now_ns) and `want`, atomic) */
    pthread_mutex_t rd_mu;
    int polling, want;
    int64_t poll_end;
    char wake_subject[300]; /* an empty message here ends a wait: t_wake */
    /* durable runs (JetStream) */
    int durable;
    double lost_s; /* silence after which a peer is lost (its --peer-wait) */
    int replicas;
    jsCtx *js;
    char stream[ZRI_NATS_RUN_MAX + 8];
    /* messages published to the stream and not yet acknowledged by it
     * (under lock; pub_cond): zri_nats_flush waits for them */
    int64_t inflight;
    double pub_failing; /* since when publishes fail (0: they do not) */
    int pub_failed;     /* one was given up: pub_why says why */
    char pub_why[768];
    pthread_cond_t pub_cond;
    natsSubscription **csub; /* [peer]: its HELLO, BEAT and STOP (async) */
    int csubs, csub_done;    /* how many, and how many have completed */
    /* the messages taken but not yet committed by the journal, per stream
     * (from * nchans + chan), acknowledged once it has (zri_nats_ack) */
    pthread_mutex_t ack_lock;
    struct held {
        int64_t seq;
        struct jref *r;
    } * *held;
    int *nheld, *capheld;
    int64_t *committed;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *lname(const zri_nats *n, int l) { return n->p->lifelines[l]; }

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ===================================================================== */
/* options: run ids, tokens, NKeys                                        */
/* ===================================================================== */

int zri_nats_run_ok(const char *s)
{
    size_t k = strlen(s);
    if (k == 0 || k > ZRI_NATS_RUN_MAX) return 0;
    for (size_t i = 0; i < k; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

/* A small private file (a token, a seed): its first line. */
static char *read_line_file(const char *path, const char *what, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        zri_err(err, errlen, "cannot read the %s file %s: %s", what, path, strerror(errno));
        return NULL;
    }
    char buf[4096];
    size_t k = fread(buf, 1, sizeof buf - 1, f);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        zri_err(err, errlen, "cannot read the %s file %s", what, path);
        return NULL;
    }
    buf[k] = '\0';
    size_t len = strcspn(buf, "\r\n");
    if (len == 0) {
        zri_err(err, errlen, "the %s file %s is empty", what, path);
        explicit_bzero(buf, sizeof buf);
        return NULL;
    }
    char *s = zri_xstrndup(buf, len);
    explicit_bzero(buf, sizeof buf);
    return s;
}

char *zri_nats_read_token(const char *path, char *err, size_t errlen)
{
    return read_line_file(path, "token", err, errlen);
}

/* NKeys (the NATS server's nkeys): base32 (RFC 4648, no padding) of a
 * prefix, the key and a CRC-16 (XMODEM, little-endian).  A user seed's
 * prefix is two bytes (seed, user); a user public key's one byte ('U'). */
#define NKEY_PREFIX_SEED (18u << 3)
#define NKEY_PREFIX_USER (20u << 3)

static uint16_t crc16(const uint8_t *d, size_t n)
{
    uint16_t crc = 0;
    for (size_t i = 0; i < n; i++) {
        crc ^= (uint16_t)(d[i] << 8);
        for (int b = 0; b < 8; b++)
            crc = (crc & 0x8000) ? (uint16_t)(crc << 1 ^ 0x1021) : (uint16_t)(crc << 1);
    }
    return crc;
}

static const char B32[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

static int b32_decode(const char *s, uint8_t *out, size_t cap, size_t *n)
{
    uint32_t acc = 0;
    int bits = 0;
    size_t k = 0;
    for (; *s; s++) {
        const char *c = strchr(B32, *s);
        if (!c || !*s) return -1;
        acc = acc << 5 | (uint32_t)(c - B32);
        bits += 5;
        if (bits >= 8) {
            if (k == cap) return -1;
            out[k++] = (uint8_t)(acc >> (bits - 8));
            bits -= 8;
        }
    }
    *n = k;
    return 0;
}

static void b32_encode(const uint8_t *d, size_t n, char *out)
{
    uint32_t acc = 0;
    int bits = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        acc = acc << 8 | d[i];
        bits += 8;
        while (bits >= 5) {
            out[k++] = B32[(acc >> (bits - 5)) & 31];
            bits -= 5;
        }
    }
    if (bits > 0) out[k++] = B32[(acc << (5 - bits)) & 31];
    out[k] = '\0';
}

int zri_nats_nkey_public(const char *seed_file, char pub[57], char *err, size_t errlen)
{
    char *seed = read_line_file(seed_file, "NKey seed", err, errlen);
    if (!seed) return -1;
    uint8_t raw[64];
    size_t n = 0;
    int ok = b32_decode(seed, raw, sizeof raw, &n) == 0 && n == 36;
    explicit_bzero(seed, strlen(seed));
    free(seed);
    ok = ok && (raw[0] & 0xF8) == NKEY_PREFIX_SEED &&
         (uint8_t)((raw[0] & 7) << 5 | (raw[1] & 0xF8) >> 3) == NKEY_PREFIX_USER &&
         crc16(raw, 34) == (uint16_t)(raw[34] | raw[35] << 8);
    if (!ok) {
        explicit_bzero(raw, sizeof raw);
        zri_err(err, errlen, "%s does not hold an NKey user seed (SU…)", seed_file);
        return -1;
    }
    EVP_PKEY *k = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, raw + 2, 32);
    explicit_bzero(raw, sizeof raw);
    uint8_t key[35];
    size_t klen = 32;
    if (!k || EVP_PKEY_get_raw_public_key(k, key + 1, &klen) != 1 || klen != 32) {
        EVP_PKEY_free(k);
        zri_err(err, errlen, "the NKey seed in %s is not a valid Ed25519 key", seed_file);
        return -1;
    }
    EVP_PKEY_free(k);
    key[0] = NKEY_PREFIX_USER;
    uint16_t c = crc16(key, 33);
    key[33] = (uint8_t)(c & 0xFF);
    key[34] = (uint8_t)(c >> 8);
    b32_encode(key, 35, pub);
    return 0;
}

/* ===================================================================== */
/* keys and frames                                                        */
/* ===================================================================== */

static int direction_key(const zri_nats *n, const zri_secret *s, int hello, int from, int to,
                         uint8_t key[ZRI_HASH_BYTES])
{
    uint8_t id[ZRI_HASH_BYTES];
    zri_program_id(n->p, id);
    static const char zero = 0;
    const char *label = hello ? "zgc nats hello" : "zgc nats frames";
    zri_bytes parts[] = {{label, strlen(label) + 1},
                         {id, hello ? 0 : sizeof id},
                         {n->run, strlen(n->run)},
                         {&zero, 1},
                         {lname(n, from), strlen(lname(n, from))},
                         {&zero, 1},
                         {lname(n, to), strlen(lname(n, to))}};
    return zri_hmac(s->key, s->len, parts, 7, key);
}

static void put_u64(uint8_t *d, uint64_t v)
{
    for (int i = 7; i >= 0; i--) d[i] = (uint8_t)v, v >>= 8;
}

static uint64_t get_u64(const uint8_t *d)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | d[i];
    return v;
}

/* Publishes counter payload tag to peer `to`; numbered (counter: the
 * next) unless it is a HELLO.  Takes the peer's lock. */
static int publish(zri_nats *n, int to, int hello, const uint8_t *payload, size_t len, char *err,
                   size_t errlen)
{
    peer *pe = &n->peers[to];
    size_t wire = COUNTER_BYTES + len + ZRI_TAG_BYTES;
    uint8_t stack[256];
    uint8_t *d = wire <= sizeof stack ? stack : zri_xmalloc(wire);
    pthread_mutex_lock(&pe->lock);
    uint64_t counter = hello ? 0 : pe->sent + 1;
    put_u64(d, counter);
    memcpy(d + COUNTER_BYTES, payload, len);
    int rc = -1;
    /* the tag covers the counter and the payload (one buffer: the counter
     * is the first bytes of what zri_mac_tag hashes after its own seq) */
    zri_mac_tag(hello ? pe->hello_out : pe->out_mac, counter, d, COUNTER_BYTES + len,
                d + COUNTER_BYTES + len);
    natsStatus s = natsConnection_Publish(n->nc, n->durable ? pe->ctl : pe->subject, d, (int)wire);
    if (s == NATS_OK) {
        if (!hello) pe->sent = counter;
        rc = 0;
    } else {
        zri_err(err, errlen, "cannot publish to lifeline %s on the NATS server %s: %s",
                lname(n, to), n->url, natsStatus_GetText(s));
    }
    pthread_mutex_unlock(&pe->lock);
    if (d != stack) free(d);
    return rc;
}

static void pub_error(zri_nats *n, natsStatus s, const char *subject, char *out, size_t outlen)
{
    const char *txt = NULL;
    natsConnection_GetLastError(n->nc, &txt);
    snprintf(out, outlen,
             "cannot store a message (%s) in the stream %s of the NATS server %s within %g s: "
             "%s%s%s",
             subject, n->stream, n->url, JS_PUBLISH_S, natsStatus_GetText(s),
             txt && *txt ? ": " : "", txt && *txt ? txt : "");
}

/* After a publish the client refused at once (its connection broken
 * under the write while the server went away, say) or the stream did not
 * acknowledge: whether to publish it again — not when the connection has
 * failed for good, nor (async: the lifeline's asynchronous publishes
 * share one fate) when the lifeline is closing or another publish has
 * failed for good, nor once *since (the first refusal's time, set here
 * when 0) is JS_PUBLISH_S ago; else after RECONNECT_WAIT_MS, the client's
 * reconnection pace. */
static int publish_again(zri_nats *n, double *since, int async)
{
    double t = now_s();
    if (*since == 0) *since = t;
    pthread_mutex_lock(&n->lock);
    int stop = n->failed_conn || (async && (n->closing || n->pub_failed));
    pthread_mutex_unlock(&n->lock);
    if (stop || t - *since > JS_PUBLISH_S) return 0;
    struct timespec ts = {0, RECONNECT_WAIT_MS * 1000000L};
    nanosleep(&ts, NULL);
    return 1;
}

/* on_pub_ack: whether to give msg up after status s — when the lifeline
 * is closing, its connection has failed, another publish has failed for
 * good, or publishes have failed for JS_PUBLISH_S (counted across the
 * lifeline's messages: an acknowledged one restarts it); giving up fails
 * the lifeline's publishing, with s's message. */
static int ack_give_up(zri_nats *n, natsStatus s, natsMsg *msg)
{
    pthread_mutex_lock(&n->lock);
    double t = now_s();
    if (n->pub_failing == 0) n->pub_failing = t;
    int give_up =
        n->closing || n->failed_conn || n->pub_failed || t - n->pub_failing > JS_PUBLISH_S;
    if (give_up && !n->pub_failed && !n->closing) {
        n->pub_failed = 1;
        pub_error(n, s, natsMsg_GetSubject(msg), n->pub_why, sizeof n->pub_why);
    }
    pthread_mutex_unlock(&n->lock);
    return give_up;
}

/* Durable runs: the stream's answer to a message published with
 * js_publish_async (the client's thread).  A message refused or not
 * answered within JS_PUBLISH_WAIT_MS (a server restarting, a stream
 * whose leader is being elected) is published again, under the same
 * de-duplication id, until publishes have failed for JS_PUBLISH_S; so is
 * one whose publishing again the client refuses at once. */
static void on_pub_ack(jsCtx *js, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae, void *closure)
{
    zri_nats *n = closure;
    int done = 1;
    if (pae) {
        int give_up = ack_give_up(n, pae->Err, msg);
        /* a timeout has waited already; an error answers at once */
        int pause = pae->Err != NATS_TIMEOUT;
        while (!give_up) {
            if (pause) {
                struct timespec ts = {0, RECONNECT_WAIT_MS * 1000000L};
                nanosleep(&ts, NULL);
            }
            jsPubOptions po;
            jsPubOptions_Init(&po);
            po.MaxWait = JS_PUBLISH_WAIT_MS;
            natsStatus s = js_PublishMsgAsync(js, &msg, &po);
            if (s == NATS_OK) {
                done = 0; /* still in flight: the client owns msg again */
                break;
            }
            give_up = ack_give_up(n, s, msg);
            pause = 1;
        }
    }
    if (done) {
        pthread_mutex_lock(&n->lock);
        if (pa) n->pub_failing = 0;
        n->inflight--;
        pthread_cond_broadcast(&n->pub_cond);
        pthread_mutex_unlock(&n->lock);
    }
    natsMsg_Destroy(msg); /* (NULL when published again) */
}

/* Durable runs: waits until every message published to the stream is
 * acknowledged by it (at most timeout_s; with `all`, until on_pub_ack has
 * answered for every one, even after a failure).  0, or -1 with a
 * message. */
static int pub_drain(zri_nats *n, double timeout_s, int all, char *err, size_t errlen)
{
    pthread_mutex_lock(&n->lock);
    double deadline = now_s() + timeout_s;
    while (n->inflight > 0 && (all || !n->pub_failed) && now_s() < deadline) {
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_nsec += 100 * 1000000L;
        if (dl.tv_nsec >= 1000000000L) dl.tv_sec++, dl.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&n->pub_cond, &n->lock, &dl);
    }
    int rc = 0;
    if (n->pub_failed) {
        zri_err(err, errlen, "%s", n->pub_why);
        rc = -1;
    } else if (n->inflight > 0) {
        zri_err(err, errlen,
                "the stream %s of the NATS server %s did not acknowledge %lld message(s) within "
                "%g s",
                n->stream, n->url, (long long)n->inflight, timeout_s);
        rc = -1;
    }
    pthread_mutex_unlock(&n->lock);
    return rc;
}

/* Builds a tagged message of the stream (counter payload tag, under the
 * de-duplication id): NULL with a message.  The caller holds the peer's
 * lock. */
static natsMsg *js_message(zri_nats *n, int to, const uint8_t *payload, size_t len, const char *id,
                           char *err, size_t errlen)
{
    peer *pe = &n->peers[to];
    size_t wire = COUNTER_BYTES + len + ZRI_TAG_BYTES;
    uint8_t *d = zri_xmalloc(wire);
    put_u64(d, 1); /* not counted: the stream's order and seq numbers */
    memcpy(d + COUNTER_BYTES, payload, len);
    zri_mac_tag(pe->out_mac, 1, d, COUNTER_BYTES + len, d + COUNTER_BYTES + len);
    natsMsg *m = NULL;
    natsStatus s = natsMsg_Create(&m, pe->subject, NULL, (const char *)d, (int)wire);
    free(d);
    if (s == NATS_OK) s = natsMsgHeader_Set(m, "Nats-Msg-Id", id);
    if (s != NATS_OK) {
        natsMsg_Destroy(m);
        zri_err(err, errlen, "cannot make a message to lifeline %s: %s", lname(n, to),
                natsStatus_GetText(s));
        return NULL;
    }
    return m;
}

/* Durable runs: a message into the run's stream, not waiting for the
 * stream's acknowledgement (on_pub_ack takes it; zri_nats_flush waits
 * for every one before the lifeline waits, and so before its end); a
 * publish the client refuses at once is tried again as js_publish does.  The
 * de-duplication id ("from.to.chan.seq" of its first frame, "+count" for
 * a batch of count frames): a message published again (a resumed sender,
 * or on_pub_ack after a timeout) within the stream's window is dropped by
 * the server, later by the receiver's sequence check (a resumed sender
 * may batch differently: the frames it had sent are copies then); the
 * receiver also drops a message that comes before an earlier one that had
 * to be published again, which the stream then delivers again after it.
 * The caller holds the peer's lock (the stream keeps the order of the
 * publishes). */
static int js_publish_async(zri_nats *n, int to, const uint8_t *payload, size_t len, const char *id,
                            char *err, size_t errlen)
{
    natsMsg *m = js_message(n, to, payload, len, id, err, errlen);
    if (!m) return -1;
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MaxWait = JS_PUBLISH_WAIT_MS;
    pthread_mutex_lock(&n->lock);
    int failed = n->pub_failed;
    if (!failed) n->inflight++;
    pthread_mutex_unlock(&n->lock);
    natsStatus s = NATS_ERR;
    double since = 0;
    while (!failed) {
        s = js_PublishMsgAsync(n->js, &m, &po);
        if (s == NATS_OK || !publish_again(n, &since, 1)) break;
    }
    if (s != NATS_OK && !failed) {
        pthread_mutex_lock(&n->lock);
        n->inflight--;
        pthread_cond_broadcast(&n->pub_cond);
        pthread_mutex_unlock(&n->lock);
        pub_error(n, s, n->peers[to].subject, err, errlen);
    } else if (failed) {
        pthread_mutex_lock(&n->lock);
        zri_err(err, errlen, "%s", n->pub_why);
        pthread_mutex_unlock(&n->lock);
    }
    natsMsg_Destroy(m); /* (NULL when the client took it) */
    return s == NATS_OK ? 0 : -1;
}

/* Durable runs: publishes the frames to peer `to` sent since the last
 * flush (its lock held): one frame as itself, several as one BATCH.  0,
 * or -1 with a message. */
static int js_flush_peer(zri_nats *n, int to, char *err, size_t errlen)
{
    peer *pe = &n->peers[to];
    if (pe->ocount == 0) return 0;
    int rc;
    if (pe->ocount == 1) {
        rc = js_publish_async(n, to, pe->ob + ZRI_BATCH_HEAD + 4, pe->olen - ZRI_BATCH_HEAD - 4,
                              pe->oid, err, errlen);
    } else {
        char id[128];
        snprintf(id, sizeof id, "%s+%d", pe->oid, pe->ocount);
        rc = js_publish_async(n, to, pe->ob, pe->olen, id, err, errlen);
    }
    pe->olen = 0, pe->ocount = 0;
    return rc;
}

/* Durable runs: a frame (its payload) to peer `to` joins the frames that
 * go out at the next flush. */
static int js_queue(zri_nats *n, int to, const uint8_t *payload, size_t len, const char *id,
                    char *err, size_t errlen)
{
    peer *pe = &n->peers[to];
    pthread_mutex_lock(&pe->lock);
    int rc = 0;
    if (pe->ocount > 0 && pe->olen + 4 + len > BATCH_BYTES) rc = js_flush_peer(n, to, err, errlen);
    if (rc == 0) {
        if (pe->ocount == 0) {
            snprintf(pe->oid, sizeof pe->oid, "%s", id);
            pe->olen = ZRI_BATCH_HEAD;
        }
        size_t need = pe->olen + 4 + len;
        if (need > pe->ocap) {
            pe->ocap = need > 2 * pe->ocap ? need : 2 * pe->ocap;
            pe->ob = zri_xrealloc(pe->ob, pe->ocap);
        }
        uint8_t *o = pe->ob;
        o[0] = ZRI_FRAME_MAGIC, o[1] = ZRI_FRAME_VERSION, o[2] = ZRI_KIND_BATCH;
        o += pe->olen;
        o[0] = (uint8_t)(len >> 24), o[1] = (uint8_t)(len >> 16);
        o[2] = (uint8_t)(len >> 8), o[3] = (uint8_t)len;
        memcpy(o + 4, payload, len);
        pe->olen = need;
        pe->ocount++;
    }
    pthread_mutex_unlock(&pe->lock);
    return rc;
}

/* Durable runs: a message or BYE into the run's stream, under its
 * de-duplication id ("from.to.chan.seq", "from.to.bye"): a resumed sender
 * that publishes it again within the stream's window is dropped by the
 * server, later by the receiver's sequence check.  Waits for the stream's
 * acknowledgement, retrying while the server is away (a restart), for at
 * most JS_PUBLISH_S. */
static int js_publish(zri_nats *n, int to, const uint8_t *payload, size_t len, const char *id,
                      char *err, size_t errlen)
{
    pthread_mutex_lock(&n->peers[to].lock);
    natsMsg *m = js_message(n, to, payload, len, id, err, errlen);
    pthread_mutex_unlock(&n->peers[to].lock);
    if (!m) return -1;
    natsStatus s = NATS_OK;
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MaxWait = JS_PUBLISH_WAIT_MS;
    double since = 0;
    jsErrCode jerr = 0;
    for (;;) {
        jsPubAck *pa = NULL;
        s = js_PublishMsg(&pa, n->js, m, &po, &jerr);
        jsPubAck_Destroy(pa);
        /* but for a failed connection, anything may pass: a server
         * restarting, a stream whose leader is being elected again (no
         * responders) */
        if (s == NATS_OK || !publish_again(n, &since, 0)) break;
    }
    natsMsg_Destroy(m);
    if (s != NATS_OK) {
        const char *txt = NULL;
        natsConnection_GetLastError(n->nc, &txt);
        zri_err(err, errlen,
                "cannot store a message to lifeline %s in the stream %s of the NATS server %s: "
                "%s%s%s",
                lname(n, to), n->stream, n->url, natsStatus_GetText(s), txt && *txt ? ": " : "",
                txt && *txt ? txt : "");
        return -1;
    }
    return 0;
}

static void hello_payload(zri_nats *n, int to, int heard, uint8_t out[HELLO_LEN])
{
    out[0] = ZRI_FRAME_MAGIC;
    out[1] = ZRI_FRAME_VERSION;
    out[2] = ZRI_KIND_HELLO;
    out[3] = (uint8_t)(n->self >> 8), out[4] = (uint8_t)n->self;
    out[5] = (uint8_t)(to >> 8), out[6] = (uint8_t)to;
    out[7] = (uint8_t)(heard != 0);
    out[8] = (uint8_t)(n->hb_ms >> 24), out[9] = (uint8_t)(n->hb_ms >> 16);
    out[10] = (uint8_t)(n->hb_ms >> 8), out[11] = (uint8_t)n->hb_ms;
    zri_program_id(n->p, out + 12);
}

/* ===================================================================== */
/* receiving                                                              */
/* ===================================================================== */

static void note(zri_nats *n, const char *fmt, ...) ZRI_PRINTF(2, 3);
static void note(zri_nats *n, const char *fmt, ...)
{
    if (!n->cb.note || n->notes > NOTES_MAX) return;
    char line[1024];
    if (n->notes++ == NOTES_MAX) {
        snprintf(line, sizeof line, "lifeline %s: more frames dropped; no more notes of them",
                 lname(n, n->self));
    } else {
        char msg[900];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        snprintf(line, sizeof line, "lifeline %s: %s", lname(n, n->self), msg);
    }
    n->cb.note(n->cb.user, line);
}

/* Peer `from` failed: the run hears it once; nothing more is taken. */
static void fail_peer(zri_nats *n, int from, const char *fmt, ...) ZRI_PRINTF(3, 4);
static void fail_peer(zri_nats *n, int from, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&n->lock);
    int first = from < 0 ? !n->failed_conn : !n->peers[from].done;
    if (from >= 0) n->peers[from].done = 1;
    if (from < 0 && first) {
        /* zri_nats_open stops waiting for the peers */
        n->failed_conn = 1;
        snprintf(n->why, sizeof n->why, "%s", msg);
        pthread_cond_broadcast(&n->cond);
    }
    int closing = n->closing;
    pthread_mutex_unlock(&n->lock);
    if (!first || closing) return;
    n->cb.fail(n->cb.user, msg);
}

/* Durable runs: a peer that was away sends again (its new process). */
static void say_back(zri_nats *n, int from)
{
    if (!n->cb.note) return;
    char line[512];
    snprintf(line, sizeof line, "lifeline %s: lifeline %s is back", lname(n, n->self),
             lname(n, from));
    n->cb.note(n->cb.user, line);
}

static void take_hello(zri_nats *n, int from, const uint8_t *pl, size_t len)
{
    if (len != HELLO_LEN || (pl[3] << 8 | pl[4]) != from || (pl[5] << 8 | pl[6]) != n->self) {
        note(n, "a malformed HELLO from lifeline %s was dropped", lname(n, from));
        return;
    }
    uint8_t id[ZRI_HASH_BYTES];
    zri_program_id(n->p, id);
    if (!zri_equal(id, pl + 12, ZRI_HASH_BYTES)) {
        char mine[ZRI_ID_TEXT], theirs[ZRI_ID_TEXT];
        zri_id_text(id, mine);
        zri_id_text(pl + 12, theirs);
        /* one HELLO back, so that the other side learns it too */
        uint8_t back[HELLO_LEN];
        hello_payload(n, from, 1, back);
        char err[256];
        (void)publish(n, from, 1, back, sizeof back, err, sizeof err);
        fail_peer(n, from,
                  "lifeline %s of run %s on %s runs another program (program %s; this one is "
                  "%s): rebuild and start every lifeline from the same build",
                  lname(n, from), n->run, n->url, theirs, mine);
        return;
    }
    pthread_mutex_lock(&n->lock);
    peer *pe = &n->peers[from];
    pe->heard = 1;
    if (pl[7]) pe->heard_me = 1;
    pe->hb_ms = (uint32_t)pl[8] << 24 | (uint32_t)pl[9] << 16 | (uint32_t)pl[10] << 8 | pl[11];
    pe->last = now_s();
    int back = pe->away;
    pe->away = 0;
    pthread_cond_broadcast(&n->cond);
    pthread_mutex_unlock(&n->lock);
    if (back) say_back(n, from);
}

/* Acknowledges a message of the stream: "+ACK" to its reply subject (the
 * JetStream protocol; the deliveries come to a plain subscription of the
 * consumer's deliver subject, not one natsMsg_Ack knows). */
static void ack(zri_nats *n, natsMsg *m)
{
    const char *reply = natsMsg_GetReply(m);
    if (reply && *reply) (void)natsConnection_PublishString(n->nc, reply, "+ACK");
}

/* Drops a reference to r (ack_lock held); the last acknowledges its
 * message unless it is kept for a delivery again, and frees it. */
static void unref(zri_nats *n, struct jref *r)
{
    if (--r->refs > 0) return;
    if (!r->keep) ack(n, r->m);
    natsMsg_Destroy(r->m);
    free(r);
}

/* Durable runs: holds a reference to r until the journal has committed
 * message seq of the stream from -> self on chan (none when it has). */
static void hold(zri_nats *n, int from, int32_t chan, int64_t seq, struct jref *r)
{
    int k = from * n->p->nchans + chan;
    pthread_mutex_lock(&n->ack_lock);
    if (seq <= n->committed[k]) {
        pthread_mutex_unlock(&n->ack_lock);
        return;
    }
    r->refs++;
    if (n->nheld[k] == n->capheld[k]) {
        n->capheld[k] = n->capheld[k] ? 2 * n->capheld[k] : 8;
        n->held[k] = zri_xrealloc(n->held[k], (size_t)n->capheld[k] * sizeof *n->held[k]);
    }
    n->held[k][n->nheld[k]].seq = seq;
    n->held[k][n->nheld[k]++].r = r;
    pthread_mutex_unlock(&n->ack_lock);
}

/* An authentic frame from `from`.  r: the JetStream message it came in
 * (durable runs), which take_frame holds until the journal commits the
 * frame, or marks to be delivered again. */
static void take_frame(zri_nats *n, int from, const uint8_t *pl, size_t len, struct jref *r)
{
    pthread_mutex_lock(&n->lock);
    peer *pe = &n->peers[from];
    int back = 0;
    if (!r) {
        /* a live frame (a stream's may be older than the peer's process) */
        pe->heard = pe->heard_me = 1; /* it numbers frames only after hearing from us */
        pe->last = now_s();
        back = pe->away;
        pe->away = 0;
    }
    int done = pe->done;
    pthread_cond_broadcast(&n->cond);
    pthread_mutex_unlock(&n->lock);
    if (back) say_back(n, from);
    if (done) goto drop;
    if (!r && len == 7 && pl[2] == ZRI_KIND_BEAT) {
        pthread_mutex_lock(&n->lock);
        pe->hb_ms = (uint32_t)pl[3] << 24 | (uint32_t)pl[4] << 16 | (uint32_t)pl[5] << 8 | pl[6];
        pthread_mutex_unlock(&n->lock);
        return;
    }
    if (!r && len == 3 && pl[2] == KIND_STOP) {
        fail_peer(n, from, "lifeline %s (%s) stopped: its run failed (its own error says why)",
                  lname(n, from), n->url);
        return;
    }
    if (n->durable && !r) {
        note(n, "a message frame from lifeline %s outside the run's stream was dropped",
             lname(n, from));
        return;
    }
    char err[512];
    zri_msg *m = NULL;
    if (zri_frame_decode(n->p, n->h, pl, len, &m, err, sizeof err) < 0) {
        fail_peer(n, from, "lifeline %s (%s) sent a malformed frame: %s", lname(n, from), n->url,
                  err);
        goto drop;
    }
    if (m->from != from || m->to != n->self) {
        int mf = m->from, mt = m->to;
        free(m);
        fail_peer(n, from,
                  "a frame on the subject of lifeline %s (%s) says it is from lifeline %s to "
                  "lifeline %s: refused",
                  lname(n, from), n->url, lname(n, mf), lname(n, mt));
        goto drop;
    }
    if (m->kind == ZRI_MSG_BYE) {
        free(m);
        pthread_mutex_lock(&n->lock);
        int was = pe->ended;
        pe->ended = 1;
        if (!n->durable) pe->done = 1;
        pthread_mutex_unlock(&n->lock);
        if (!was) n->cb.ended(n->cb.user, from);
        /* never acknowledged: a resumed process of this lifeline gets it
         * again (the stream's copies in between are dropped) */
        goto drop;
    }
    if (n->cb.received) {
        int64_t have = n->cb.received(n->cb.user, from, m->chan);
        int c = zri_seq_check(have, m->seq);
        if (c != ZRI_SEQ_NEXT) {
            int64_t seq = m->seq;
            int32_t chan = m->chan;
            free(m);
            if (c == ZRI_SEQ_COPY) {
                /* (a stream's copy is acknowledged with the original) */
                if (r) hold(n, from, chan, seq, r);
                return;
            }
            if (r) goto drop; /* an earlier one is redelivered first */
            fail_peer(n, from,
                      "lifeline %s (%s) sent message %lld on channel %s, but %lld came before: "
                      "messages were lost",
                      lname(n, from), n->url, (long long)seq, n->p->chans[chan], (long long)have);
            return;
        }
    }
    if (r) hold(n, from, m->chan, m->seq, r);
    n->cb.deliver(n->cb.user, m);
    return;
drop:
    if (r) r->keep = 1;
}

void zri_nats_ack(zri_nats *n, int32_t from, int32_t chan, int64_t committed)
{
    int k = from * n->p->nchans + chan;
    pthread_mutex_lock(&n->ack_lock);
    if (committed > n->committed[k]) n->committed[k] = committed;
    int keep = 0;
    for (int i = 0; i < n->nheld[k]; i++) {
        struct held *h = &n->held[k][i];
        if (h->seq <= committed) {
            unref(n, h->r);
        } else {
            n->held[k][keep++] = *h;
        }
    }
    n->nheld[k] = keep;
    pthread_mutex_unlock(&n->ack_lock);
}

/* The sender named by a subject zg.RUN.SELF.FROM[.c], or -1. */
static int subject_from(const zri_nats *n, const char *subj)
{
    size_t pre = 3 + strlen(n->run) + 1 + strlen(lname(n, n->self)) + 1;
    if (!subj || strlen(subj) <= pre) return -1;
    const char *f = subj + pre;
    size_t len = strcspn(f, ".");
    for (int l = 0; l < n->nl; l++)
        if (strlen(lname(n, l)) == len && memcmp(lname(n, l), f, len) == 0) return l;
    return -1;
}

/* Checks a message's tag: the payload (in d) and its counter, or NULL
 * after a note. */
static const uint8_t *authentic(zri_nats *n, int from, const char *subj, const uint8_t *d,
                                size_t len, uint64_t *counter, size_t *plen)
{
    if (from < 0 || from == n->self) {
        note(n, "a message on %s names no other lifeline of the program: dropped",
             subj ? subj : "?");
        return NULL;
    }
    if (len < COUNTER_BYTES + 3 + ZRI_TAG_BYTES ||
        len > COUNTER_BYTES + ZRI_FRAME_MAX + ZRI_TAG_BYTES) {
        note(n, "a message of %zu bytes on %s is not a frame: dropped", len, subj);
        return NULL;
    }
    peer *pe = &n->peers[from];
    *counter = get_u64(d);
    *plen = len - COUNTER_BYTES - ZRI_TAG_BYTES;
    uint8_t tag[ZRI_TAG_BYTES];
    zri_mac_tag(*counter == 0 ? pe->hello_in : pe->in_mac, *counter, d, COUNTER_BYTES + *plen, tag);
    if (!zri_equal(tag, d + COUNTER_BYTES + *plen, ZRI_TAG_BYTES)) {
        note(n,
             "a frame on %s failed authentication (another run or program, a process without "
             "the run's secret, or a forgery): dropped",
             subj);
        return NULL;
    }
    return d + COUNTER_BYTES;
}

/* Durable runs: a message of the run's stream, delivered by this
 * lifeline's consumer. */
static void on_js_msg(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure)
{
    (void)nc, (void)sub;
    zri_nats *n = closure;
    pthread_mutex_lock(&n->cb_lock);
    if (n->closing) {
        natsMsg_Destroy(msg); /* not acknowledged: delivered again to a resume */
        pthread_mutex_unlock(&n->cb_lock);
        return;
    }
    const char *subj = natsMsg_GetSubject(msg);
    int from = subject_from(n, subj);
    uint64_t counter;
    size_t plen;
    const uint8_t *pl = authentic(n, from, subj, (const uint8_t *)natsMsg_GetData(msg),
                                  (size_t)natsMsg_GetDataLength(msg), &counter, &plen);
    if (pl && counter != 0) {
        struct jref *r = zri_xmalloc(sizeof *r);
        r->m = msg, r->refs = 1, r->keep = 0;
        if (zri_is_batch(pl, plen)) {
            /* (the tag checked the whole) */
            size_t at = ZRI_BATCH_HEAD, k;
            const uint8_t *item;
            int more;
            while ((more = zri_batch_next(pl, plen, &at, &item, &k)) > 0)
                take_frame(n, from, item, k, r);
            if (more < 0) {
                r->keep = 1;
                fail_peer(n, from, "lifeline %s (%s) sent a malformed batch of frames",
                          lname(n, from), n->url);
            }
        } else {
            take_frame(n, from, pl, plen, r);
        }
        pthread_mutex_lock(&n->ack_lock);
        unref(n, r);
        pthread_mutex_unlock(&n->ack_lock);
    } else {
        /* a foreign message in the stream: acknowledged, so that it is not
         * delivered again and again */
        ack(n, msg);
        natsMsg_Destroy(msg);
    }
    pthread_mutex_unlock(&n->cb_lock);
}

/* Core NATS: every frame of a run without --durable; of a durable run,
 * HELLO, BEAT and STOP (its messages come through on_js_msg). */
static void on_msg(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure)
{
    (void)nc, (void)sub;
    zri_nats *n = closure;
    pthread_mutex_lock(&n->cb_lock);
    if (n->closing) goto out;
    const char *subj = natsMsg_GetSubject(msg);
    int from = subject_from(n, subj);
    uint64_t counter;
    size_t plen;
    const uint8_t *pl = authentic(n, from, subj, (const uint8_t *)natsMsg_GetData(msg),
                                  (size_t)natsMsg_GetDataLength(msg), &counter, &plen);
    if (!pl) goto out;
    peer *pe = &n->peers[from];
    if (counter == 0) {
        if (plen >= 3 && pl[2] == ZRI_KIND_HELLO)
            take_hello(n, from, pl, plen);
        else
            note(n, "a frame on %s numbered 0 is not a HELLO: dropped", subj);
        goto out;
    }
    if (!n->durable) {
        if (counter <= pe->got) {
            note(n, "frame %llu from lifeline %s came again: dropped", (unsigned long long)counter,
                 lname(n, from));
            goto out;
        }
        if (counter != pe->got + 1) {
            fail_peer(n, from,
                      "%llu frames from lifeline %s (%s) were lost (core NATS delivers at most "
                      "once: did the server restart or the connection drop?)",
                      (unsigned long long)(counter - pe->got - 1), lname(n, from), n->url);
            goto out;
        }
        pe->got = counter;
    }
    take_frame(n, from, pl, plen, NULL);
out:
    pthread_mutex_unlock(&n->cb_lock);
    natsMsg_Destroy(msg);
}

/* Under rd_mu: takes the messages of the synchronous subscription,
 * waiting up to timeout_ms for the first, and handles them as on_msg or
 * on_js_msg (on this thread).  An empty message on the wake subject only
 * ends the wait. */
static natsStatus pump(zri_nats *n, int64_t timeout_ms)
{
    natsMsg *m = NULL;
    natsStatus st = natsSubscription_NextMsg(&m, n->sub, timeout_ms);
    if (st != NATS_OK) return st;
    for (;;) {
        const char *subj = natsMsg_GetSubject(m);
        if (natsMsg_GetDataLength(m) == 0 && subj && strcmp(subj, n->wake_subject) == 0)
            natsMsg_Destroy(m);
        else if (n->durable)
            on_js_msg(n->nc, n->sub, m, n);
        else
            on_msg(n->nc, n->sub, m, n);
        int msgs = 0, bytes = 0;
        if (natsSubscription_GetPending(n->sub, &msgs, &bytes) != NATS_OK || msgs <= 0)
            return NATS_OK;
        m = NULL;
        if (natsSubscription_NextMsg(&m, n->sub, 1) != NATS_OK) return NATS_OK;
    }
}

/* This module's thread: reads the subscription for a slice of `ms`
 * unless a worker reads it (or did lately); 1 when it did. */
static int pump_idle(zri_nats *n, int ms)
{
    if (__atomic_load_n(&n->polling, __ATOMIC_ACQUIRE) ||
        now_ns() - __atomic_load_n(&n->poll_end, __ATOMIC_ACQUIRE) < (int64_t)(HANDBACK_S * 1e9))
        return 0;
    int64_t until = now_ns() + (int64_t)ms * 1000000;
    while (now_ns() < until && !__atomic_load_n(&n->want, __ATOMIC_ACQUIRE)) {
        if (pthread_mutex_trylock(&n->rd_mu) != 0) return 0;
        natsStatus st = pump(n, PUMP_SLICE_MS);
        pthread_mutex_unlock(&n->rd_mu);
        if (st != NATS_OK && st != NATS_TIMEOUT) return 0; /* closed: sleep instead */
    }
    return 1;
}

/* Durable runs: the run's stream (made by whichever lifeline comes first:
 * the same configuration from every one) and this lifeline's consumer of
 * its inbox, delivering to n->wake_subject (zg.RUN.SELF.SELF.c).  A consumer left by an earlier
 * process of this lifeline tells where to go on: its acknowledgement
 * floor (every message up to it is committed); it is replaced by one
 * starting right after, so that what the old process took but did not
 * commit comes at once rather than after the acknowledgement wait.  0, or
 * -1 with a message. */
static int js_setup(zri_nats *n, char *err, size_t errlen)
{
    jsErrCode jerr = 0;
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.PublishAsync.AckHandler = on_pub_ack;
    jo.PublishAsync.AckHandlerClosure = n;
    natsStatus s = natsConnection_JetStream(&n->js, n->nc, &jo);
    char subjects[128];
    snprintf(subjects, sizeof subjects, "zg.%s.*.*", n->run);
    const char *subj[1] = {subjects};
    if (s == NATS_OK) {
        jsStreamConfig sc;
        jsStreamConfig_Init(&sc);
        sc.Name = n->stream;
        sc.Subjects = subj;
        sc.SubjectsLen = 1;
        sc.Storage = js_FileStorage;
        sc.Duplicates = (int64_t)JS_DUPLICATES_S * 1000000000LL;
        sc.Replicas = n->replicas > 0 ? n->replicas : 1;
        /* a cluster that is still forming (no metadata leader yet, fewer
         * servers than replicas) refuses for a few seconds: retried */
        double deadline = now_s() + JS_SETUP_S;
        for (;;) {
            jsStreamInfo *si = NULL;
            jerr = 0;
            s = js_AddStream(&si, n->js, &sc, NULL, &jerr);
            jsStreamInfo_Destroy(si);
            if (s != NATS_OK && jerr == JSStreamNameExistErr) s = NATS_OK, jerr = 0;
            if (s == NATS_OK || now_s() > deadline) break;
            struct timespec ts = {0, RECONNECT_WAIT_MS * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    if (s != NATS_OK) {
        natsStatus ls;
        const char *txt = nats_GetLastError(&ls);
        zri_err(err, errlen,
                "cannot create the stream %s on the NATS server %s within %g s (is JetStream "
                "enabled: nats-server -js? as many servers as --nats-replicas?): %s (JetStream "
                "error %d)%s%s",
                n->stream, n->url, JS_SETUP_S, natsStatus_GetText(s), (int)jerr,
                txt && *txt ? ": " : "", txt && *txt ? txt : "");
        return -1;
    }
    const char *me = lname(n, n->self);
    uint64_t start = 0;
    jsConsumerInfo *ci = NULL;
    if (js_GetConsumerInfo(&ci, n->js, n->stream, me, NULL, &jerr) == NATS_OK) {
        start = ci->AckFloor.Stream + 1;
        jsConsumerInfo_Destroy(ci);
        ci = NULL;
        (void)js_DeleteConsumer(n->js, n->stream, me, NULL, &jerr);
    }
    char filter[256];
    snprintf(filter, sizeof filter, "zg.%s.%s.*", n->run, me);
    jsConsumerConfig cc;
    jsConsumerConfig_Init(&cc);
    cc.Durable = me;
    cc.FilterSubject = filter;
    cc.DeliverSubject = n->wake_subject;
    cc.AckPolicy = js_AckExplicit;
    cc.AckWait = (int64_t)JS_ACK_WAIT_S * 1000000000LL;
    /* a lifeline may hold many messages it has not taken yet: delivery
     * must never stall on them (a message it needs first may come after).
     * (-1 is not sent by the client, and the server's default is 1,000.) */
    cc.MaxAckPending = JS_MAX_ACK_PENDING;
    if (start > 1) {
        cc.DeliverPolicy = js_DeliverByStartSequence;
        cc.OptStartSeq = start;
    } else {
        cc.DeliverPolicy = js_DeliverAll;
    }
    double deadline = now_s() + JS_SETUP_S;
    for (;;) {
        jerr = 0;
        ci = NULL;
        s = js_AddConsumer(&ci, n->js, n->stream, &cc, NULL, &jerr);
        jsConsumerInfo_Destroy(ci);
        if (s == NATS_OK || now_s() > deadline) break;
        struct timespec ts = {0, RECONNECT_WAIT_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (s != NATS_OK) {
        const char *txt = NULL;
        natsConnection_GetLastError(n->nc, &txt);
        zri_err(err, errlen,
                "cannot create the consumer %s of the stream %s on the NATS server %s: %s%s%s", me,
                n->stream, n->url, natsStatus_GetText(s), txt && *txt ? ": " : "",
                txt && *txt ? txt : "");
        return -1;
    }
    return 0;
}

static void on_closed(natsConnection *nc, void *closure)
{
    (void)nc;
    zri_nats *n = closure;
    fail_peer(n, -1, "lost the connection to the NATS server %s for good (reconnection gave up)",
              n->url);
    /* the client's last callback: finish() may free n now */
    pthread_mutex_lock(&n->lock);
    n->conn_closed = 1;
    pthread_cond_broadcast(&n->cond);
    pthread_mutex_unlock(&n->lock);
}

static void on_error(natsConnection *nc, natsSubscription *sub, natsStatus s, void *closure)
{
    (void)sub;
    zri_nats *n = closure;
    const char *txt = NULL;
    natsConnection_GetLastError(nc, &txt);
    /* a permissions violation or a slow consumer: messages were refused
     * or dropped, which the run cannot survive */
    fail_peer(n, -1, "the NATS server %s reported: %s", n->url,
              txt && *txt ? txt : natsStatus_GetText(s));
}

/* ===================================================================== */
/* the thread: HELLOs, BEATs, silence                                     */
/* ===================================================================== */

static void *run_thread(void *arg)
{
    zri_nats *n = arg;
    double beat = n->hb_ms ? (double)n->hb_ms / 1000.0 / BEATS_PER_LIMIT : 0;
    double next_beat = now_s(), next_hello = now_s();
    uint8_t *todo = zri_xcalloc((size_t)n->nl, 2);
    for (;;) {
        pthread_mutex_lock(&n->lock);
        if (n->stop) {
            pthread_mutex_unlock(&n->lock);
            break;
        }
        double t = now_s();
        int do_beat = beat > 0 && t >= next_beat;
        int do_hello = t >= next_hello;
        if (do_hello) next_hello = t + 0.5;
        int lost = -1, away = -1;
        double lost_limit = 0, away_limit = 0;
        for (int l = 0; l < n->nl; l++) {
            peer *pe = &n->peers[l];
            todo[2 * l] = todo[2 * l + 1] = 0;
            if (l == n->self || pe->done || pe->ended) continue;
            /* a HELLO, heard or not (a durable run waits for nobody: a
             * HELLO only tells the program and the heartbeat, twice a
             * second) */
            if (!(pe->heard_me && pe->told) && (!n->durable || do_hello)) {
                todo[2 * l] = 1 + (pe->heard != 0);
                if (pe->heard) pe->told = 1;
            }
            if (do_beat && pe->heard) todo[2 * l + 1] = 1;
            /* a durable run does not wait for its peers at the start: one
             * never heard from is silent since then, with this lifeline's
             * limit */
            uint32_t phb = pe->hb_ms ? pe->hb_ms : n->durable && !pe->heard ? n->hb_ms : 0;
            uint32_t lim = n->hb_ms && phb ? (n->hb_ms > phb ? n->hb_ms : phb) : 0;
            /* a durable run waits --peer-wait more for a lost peer's new
             * process (away) */
            double limit = lim / 1000.0, silent = t - pe->last;
            if ((!pe->heard && !n->durable) || pe->ended || limit <= 0 || silent <= limit) continue;
            if (n->durable && n->lost_s > 0 && silent <= limit + n->lost_s) {
                if (!pe->away) {
                    pe->away = 1;
                    away = l;
                    away_limit = limit;
                }
            } else if (lost < 0) {
                lost = l, lost_limit = limit;
            }
        }
        pthread_mutex_unlock(&n->lock);
        if (do_beat) next_beat = t + beat;
        char err[512];
        for (int l = 0; l < n->nl; l++) {
            if (todo[2 * l]) {
                uint8_t pl[HELLO_LEN];
                hello_payload(n, l, todo[2 * l] == 2, pl);
                (void)publish(n, l, 1, pl, sizeof pl, err, sizeof err);
            }
            if (todo[2 * l + 1]) {
                uint8_t b[7] = {
                    ZRI_FRAME_MAGIC,           ZRI_FRAME_VERSION,         ZRI_KIND_BEAT,
                    (uint8_t)(n->hb_ms >> 24), (uint8_t)(n->hb_ms >> 16), (uint8_t)(n->hb_ms >> 8),
                    (uint8_t)n->hb_ms};
                (void)publish(n, l, 0, b, sizeof b, err, sizeof err);
            }
        }
        if (away >= 0 && n->cb.note) {
            char line[1024];
            snprintf(line, sizeof line,
                     "lifeline %s: lifeline %s (%s) has sent nothing for %g s; waiting up to %g s "
                     "for lifeline %s to come back (restart it with --resume)",
                     lname(n, n->self), lname(n, away), n->url, away_limit, n->lost_s,
                     lname(n, away));
            n->cb.note(n->cb.user, line);
        }
        if (lost >= 0 && n->durable && n->lost_s > 0)
            fail_peer(n, lost,
                      "lifeline %s (%s) has sent nothing for %g s: its process is stopped, hung "
                      "or cut off from the NATS server; it did not come back within %g s "
                      "(--peer-wait)",
                      lname(n, lost), n->url, lost_limit, n->lost_s);
        else if (lost >= 0)
            fail_peer(n, lost,
                      "lifeline %s (%s) has sent nothing for %g s: its process is stopped, hung "
                      "or cut off from the NATS server",
                      lname(n, lost), n->url, lost_limit);
        if (!pump_idle(n, (int)(HELLO_EVERY_S * 1000))) {
            struct timespec ts = {0, (long)(HELLO_EVERY_S * 1e9)};
            nanosleep(&ts, NULL);
        }
    }
    free(todo);
    return NULL;
}

/* ===================================================================== */
/* open, send, close                                                      */
/* ===================================================================== */

static void connect_error(zri_nats *n, natsStatus s, char *err, size_t errlen)
{
    natsStatus ls;
    const char *txt = nats_GetLastError(&ls);
    const char *why = natsStatus_GetText(s);
    if (s == NATS_CONNECTION_AUTH_FAILED || s == NATS_NOT_PERMITTED)
        why = "authorization failed (wrong or missing credentials: --nats-creds, --nats-user "
              "with $ZGC_NATS_PASSWORD, --nats-token-file or $ZGC_NATS_TOKEN, --nats-nkey)";
    else if (s == NATS_SSL_ERROR || s == NATS_SECURE_CONNECTION_REQUIRED ||
             s == NATS_SECURE_CONNECTION_WANTED)
        why = "TLS failed (check --nats-ca, --nats-cert and --nats-key against the server's "
              "certificates)";
    /* a server that verifies clients closes a TLS connection without a
     * certificate with no reason given */
    const char *hint = n->tls && !n->has_cert && s != NATS_CONNECTION_AUTH_FAILED &&
                               s != NATS_NOT_PERMITTED && s != NATS_SSL_ERROR
                           ? " (the server may require a client certificate: --nats-cert and "
                             "--nats-key)"
                           : "";
    zri_err(err, errlen, "cannot connect to the NATS server %s: %s%s%s%s", n->url, why,
            txt && *txt ? ": " : "", txt && *txt ? txt : "", hint);
}

static void free_nats(zri_nats *n)
{
    if (n->sub) natsSubscription_Destroy(n->sub);
    for (int l = 0; n->csub && l < n->nl; l++)
        if (n->csub[l]) natsSubscription_Destroy(n->csub[l]);
    free(n->csub);
    /* what the journal did not commit is not acknowledged: the stream
     * delivers it again to the lifeline's next process */
    for (int k = 0; n->held && k < n->nl * n->p->nchans; k++) {
        for (int i = 0; i < n->nheld[k]; i++) {
            n->held[k][i].r->keep = 1;
            unref(n, n->held[k][i].r);
        }
        free(n->held[k]);
    }
    free(n->held);
    free(n->nheld);
    free(n->capheld);
    free(n->committed);
    if (n->js) jsCtx_Destroy(n->js);
    if (n->nc) natsConnection_Destroy(n->nc);
    for (int l = 0; n->peers && l < n->nl; l++) {
        zri_mac_free(n->peers[l].out_mac);
        zri_mac_free(n->peers[l].hello_out);
        zri_mac_free(n->peers[l].in_mac);
        zri_mac_free(n->peers[l].hello_in);
        pthread_mutex_destroy(&n->peers[l].lock);
        free(n->peers[l].ob);
    }
    free(n->peers);
    pthread_mutex_destroy(&n->lock);
    pthread_mutex_destroy(&n->cb_lock);
    pthread_mutex_destroy(&n->rd_mu);
    pthread_mutex_destroy(&n->ack_lock);
    pthread_cond_destroy(&n->cond);
    pthread_cond_destroy(&n->pub_cond);
    free(n);
}

/* Stops the thread and the subscription; after it no callback runs. */
static void shut(zri_nats *n)
{
    pthread_mutex_lock(&n->cb_lock);
    pthread_mutex_lock(&n->lock);
    n->closing = 1;
    n->stop = 1;
    pthread_mutex_unlock(&n->lock);
    pthread_mutex_unlock(&n->cb_lock);
    if (n->thread_on) pthread_join(n->thread, NULL);
    n->thread_on = 0;
}

static void finish(zri_nats *n)
{
    /* the stream's answers to what is in flight (closing: none is
     * published again) come or time out within JS_PUBLISH_WAIT_MS, and
     * on_pub_ack must not outlive n */
    char err[64];
    (void)pub_drain(n, JS_PUBLISH_WAIT_MS / 1000.0 + 2, 1, err, sizeof err);
    /* synchronous: no delivery thread holds n (and shut() stopped this
     * module's thread, the only other reader besides the run's workers,
     * which have ended) */
    if (n->sub) (void)natsSubscription_Unsubscribe(n->sub);
    /* the control subscriptions' delivery thread lets go of n before it
     * is freed */
    int waiting = 0;
    for (int l = 0; n->csub && l < n->nl; l++)
        if (n->csub[l] && natsSubscription_Unsubscribe(n->csub[l]) == NATS_OK) waiting++;
    if (waiting) {
        pthread_mutex_lock(&n->lock);
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_sec += 5;
        while (n->csub_done < n->csubs)
            if (pthread_cond_timedwait(&n->cond, &n->lock, &dl) == ETIMEDOUT) break;
        pthread_mutex_unlock(&n->lock);
    }
    if (n->nc) {
        /* the client calls on_closed (and any error handler before it) on
         * a thread of its own, after natsConnection_Close returns: n must
         * outlive them */
        natsConnection_Close(n->nc);
        pthread_mutex_lock(&n->lock);
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_sec += 5;
        while (!n->conn_closed)
            if (pthread_cond_timedwait(&n->cond, &n->lock, &dl) == ETIMEDOUT) break;
        pthread_mutex_unlock(&n->lock);
    }
    free_nats(n);
}

static void on_csub_complete(void *closure)
{
    zri_nats *n = closure;
    pthread_mutex_lock(&n->lock);
    n->csub_done++;
    pthread_cond_broadcast(&n->cond);
    pthread_mutex_unlock(&n->lock);
}

static natsStatus set_options(natsOptions *o, zri_nats *n, const zri_nats_config *c)
{
    /* URL[,URL…]: natsOptions_SetServers takes an array */
    char *copy = zri_xstrndup(c->servers, strlen(c->servers));
    const char *urls[64];
    int k = 0;
    for (char *save = NULL, *t = strtok_r(copy, ",", &save); t && k < 64;
         t = strtok_r(NULL, ",", &save))
        if (*t) urls[k++] = t;
    natsStatus s = natsOptions_SetServers(o, urls, k);
    free(copy);
    char name[256];
    snprintf(name, sizeof name, "zgc %s %s", n->run, lname(n, n->self));
    if (s == NATS_OK) s = natsOptions_SetName(o, name);
    if (s == NATS_OK) s = natsOptions_SetMaxReconnect(o, RECONNECT_TRIES);
    if (s == NATS_OK) s = natsOptions_SetReconnectWait(o, RECONNECT_WAIT_MS);
    if (s == NATS_OK) s = natsOptions_SetTimeout(o, 5000);
    if (s == NATS_OK) s = natsOptions_SetClosedCB(o, on_closed, n);
    if (s == NATS_OK) s = natsOptions_SetErrorHandler(o, on_error, n);
    /* a frame goes out when it is published, not at the flusher's next
     * round: the ping-pong of bench/nats took 0.33 ms an iteration so, and
     * 2.3 to 2.7 ms with the flusher (3,000 iterations, a loaded 2-core
     * machine) */
    if (s == NATS_OK) s = natsOptions_SetSendAsap(o, true);
    /* durable runs: the peers' control subscriptions share one delivery
     * thread */
    if (s == NATS_OK && n->durable) s = natsOptions_UseGlobalMessageDelivery(o, true);
    if (s == NATS_OK) s = zri_nats_auth_options(o, c);
    return s;
}

/* The NATS C client sometimes sends its login to a server that asked for
 * a key's signature of its nonce without that signature: the server logs
 * "Signature missing" and refuses the login as a wrong key (about one
 * connection in 150–300 on the project machine when its cores are busy,
 * with the right key).  A key-signed login refused is therefore tried
 * twice more, 10 ms apart; a wrong key is refused every time. */
natsStatus zri_nats_dial(natsConnection **nc, natsOptions *o, const zri_nats_config *c)
{
    natsStatus s = natsConnection_Connect(nc, o);
    for (int i = 1; i < 3 && (c->nkey_seed || c->creds) &&
                    (s == NATS_CONNECTION_AUTH_FAILED || s == NATS_NOT_PERMITTED);
         i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
        s = natsConnection_Connect(nc, o);
    }
    return s;
}

natsStatus zri_nats_auth_options(natsOptions *o, const zri_nats_config *c)
{
    natsStatus s = NATS_OK;
    if (s == NATS_OK && c->creds) s = natsOptions_SetUserCredentialsFromFiles(o, c->creds, NULL);
    if (s == NATS_OK && c->user)
        s = natsOptions_SetUserInfo(o, c->user, c->password ? c->password : "");
    if (s == NATS_OK && c->token) s = natsOptions_SetToken(o, c->token);
    if (s == NATS_OK && c->nkey_seed) s = natsOptions_SetNKeyFromSeed(o, c->nkey_pub, c->nkey_seed);
    if (s == NATS_OK && (c->ca || c->cert)) s = natsOptions_SetSecure(o, true);
    if (s == NATS_OK && c->ca) s = natsOptions_LoadCATrustedCertificates(o, c->ca);
    if (s == NATS_OK && c->cert) s = natsOptions_LoadCertificatesChain(o, c->cert, c->key);
    return s;
}

zri_nats *zri_nats_open(const zgrt_program *p, int self, const zri_nats_config *c, zri_heap *h,
                        const zri_net_callbacks *cb, char *err, size_t errlen)
{
    if (!zri_nats_run_ok(c->run)) {
        zri_err(err, errlen, "bad run id '%s' (1 to %d letters, digits, '_' or '-')", c->run,
                ZRI_NATS_RUN_MAX);
        return NULL;
    }
    zri_nats *n = zri_xcalloc(1, sizeof *n);
    n->p = p, n->self = self, n->nl = p->nlifelines, n->h = h, n->cb = *cb;
    n->durable = c->durable;
    n->lost_s = c->peer_wait_s;
    n->replicas = c->replicas;
    snprintf(n->stream, sizeof n->stream, "ZG_%s", c->run);
    pthread_mutex_init(&n->ack_lock, NULL);
    size_t nstreams = (size_t)n->nl * (size_t)(p->nchans > 0 ? p->nchans : 1);
    n->held = zri_xcalloc(nstreams, sizeof *n->held);
    n->nheld = zri_xcalloc(nstreams, sizeof *n->nheld);
    n->capheld = zri_xcalloc(nstreams, sizeof *n->capheld);
    n->committed = zri_xcalloc(nstreams, sizeof *n->committed);
    snprintf(n->url, sizeof n->url, "%s", c->servers);
    n->tls = c->ca || c->cert || strstr(c->servers, "tls://");
    n->has_cert = c->cert != NULL;
    snprintf(n->run, sizeof n->run, "%s", c->run);
    n->hb_ms = (uint32_t)(c->heartbeat_s * 1000.0 + 0.5);
    pthread_mutex_init(&n->lock, NULL);
    pthread_mutex_init(&n->cb_lock, NULL);
    pthread_mutex_init(&n->rd_mu, NULL);
    pthread_cond_init(&n->cond, NULL);
    pthread_cond_init(&n->pub_cond, NULL);
    n->peers = zri_xcalloc((size_t)n->nl, sizeof *n->peers);
    for (int l = 0; l < n->nl; l++) {
        peer *pe = &n->peers[l];
        pthread_mutex_init(&pe->lock, NULL);
        if (l == self) continue;
        snprintf(pe->subject, sizeof pe->subject, "zg.%s.%s.%s", n->run, lname(n, l),
                 lname(n, self));
        snprintf(pe->ctl, sizeof pe->ctl, "%s.c", pe->subject);
        pe->last = now_s();
        pe->ended = c->ended && c->ended[l];
        uint8_t k[4][ZRI_HASH_BYTES];
        if (direction_key(n, c->secret, 0, self, l, k[0]) < 0 ||
            direction_key(n, c->secret, 1, self, l, k[1]) < 0 ||
            direction_key(n, c->secret, 0, l, self, k[2]) < 0 ||
            direction_key(n, c->secret, 1, l, self, k[3]) < 0 ||
            !(pe->out_mac = zri_mac_new(k[0], err, errlen)) ||
            !(pe->hello_out = zri_mac_new(k[1], err, errlen)) ||
            !(pe->in_mac = zri_mac_new(k[2], err, errlen)) ||
            !(pe->hello_in = zri_mac_new(k[3], err, errlen))) {
            explicit_bzero(k, sizeof k);
            if (!*err) zri_err(err, errlen, "cannot derive the frame keys (libcrypto failed)");
            free_nats(n);
            return NULL;
        }
        explicit_bzero(k, sizeof k);
    }

    natsOptions *o = NULL;
    natsStatus s = natsOptions_Create(&o);
    if (s == NATS_OK) s = set_options(o, n, c);
    if (s != NATS_OK) {
        natsStatus ls;
        const char *txt = nats_GetLastError(&ls);
        zri_err(err, errlen, "cannot use the NATS options for %s: %s%s%s", n->url,
                natsStatus_GetText(s), txt && *txt ? ": " : "", txt && *txt ? txt : "");
        natsOptions_Destroy(o);
        free_nats(n);
        return NULL;
    }
    s = zri_nats_dial(&n->nc, o, c);
    natsOptions_Destroy(o);
    if (s != NATS_OK) {
        connect_error(n, s, err, errlen);
        n->nc = NULL;
        free_nats(n);
        return NULL;
    }
    char inbox[256];
    snprintf(inbox, sizeof inbox, "zg.%s.%s.*", n->run, lname(n, self));
    /* read by the run's workers (t_wait), without the hand-off from the
     * client's delivery thread: the inbox (core NATS) or the consumer's
     * deliver subject (durable runs) */
    snprintf(n->wake_subject, sizeof n->wake_subject, "zg.%s.%s.%s%s", n->run, lname(n, self),
             lname(n, self), n->durable ? ".c" : "");
    s = natsConnection_SubscribeSync(&n->sub, n->nc, n->durable ? n->wake_subject : inbox);
    /* a run's messages are never dropped by the client: no pending limit */
    if (s == NATS_OK) s = natsSubscription_SetPendingLimits(n->sub, -1, -1);
    if (n->durable) n->csub = zri_xcalloc((size_t)n->nl, sizeof *n->csub);
    for (int l = 0; n->durable && s == NATS_OK && l < n->nl; l++) {
        if (l == self) continue;
        snprintf(inbox, sizeof inbox, "zg.%s.%s.%s.c", n->run, lname(n, self), lname(n, l));
        s = natsConnection_Subscribe(&n->csub[l], n->nc, inbox, on_msg, n);
        if (s == NATS_OK) n->csubs++;
        if (s == NATS_OK) s = natsSubscription_SetPendingLimits(n->csub[l], -1, -1);
        if (s == NATS_OK) s = natsSubscription_SetOnCompleteCB(n->csub[l], on_csub_complete, n);
    }
    /* the server has the subscription before any HELLO says so */
    if (s == NATS_OK) s = natsConnection_FlushTimeout(n->nc, 10000);
    if (s != NATS_OK) {
        const char *txt = NULL;
        natsConnection_GetLastError(n->nc, &txt);
        zri_err(err, errlen, "cannot subscribe to %s on the NATS server %s: %s", inbox, n->url,
                txt && *txt ? txt : natsStatus_GetText(s));
        shut(n);
        finish(n);
        return NULL;
    }
    if (n->durable) {
        /* what the journal restored is committed: copies of it that the
         * stream delivers again are acknowledged at once */
        for (int l = 0; l < n->nl && cb->received; l++)
            for (int32_t ch = 0; l != self && ch < p->nchans; ch++)
                n->committed[l * p->nchans + ch] = cb->received(cb->user, l, ch);
        /* the consumer's deliveries have their subscription (n->sub)
         * before it exists */
        if (js_setup(n, err, errlen) < 0) {
            shut(n);
            finish(n);
            return NULL;
        }
    }
    if (pthread_create(&n->thread, NULL, run_thread, n) != 0) {
        zri_err(err, errlen, "cannot start the NATS transport's thread");
        shut(n);
        finish(n);
        return NULL;
    }
    n->thread_on = 1;

    /* presence: wait until every peer was heard from */
    double timeout = c->timeout_s > 0 ? c->timeout_s : DEFAULT_TIMEOUT;
    double deadline = now_s() + timeout;
    pthread_mutex_lock(&n->lock);
    int missing = -1;
    for (;;) {
        missing = -1;
        /* a durable run's stream keeps what a peer not there yet is sent */
        for (int l = 0; l < n->nl && missing < 0 && !n->durable; l++)
            if (l != self && !(n->peers[l].heard && n->peers[l].heard_me) && !n->peers[l].done)
                missing = l;
        if (missing < 0 || n->failed_conn || now_s() > deadline) break;
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_nsec += 50 * 1000000L;
        if (dl.tv_nsec >= 1000000000L) dl.tv_sec++, dl.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&n->cond, &n->lock, &dl);
    }
    int failed = n->failed_conn;
    pthread_mutex_unlock(&n->lock);
    if (missing >= 0 || failed) {
        if (failed)
            zri_err(err, errlen, "%s", n->why);
        else
            zri_err(err, errlen,
                    "lifeline %s of run %s did not answer on the NATS server %s within %g s (is "
                    "its process running, with --run %s and the same server?)",
                    lname(n, missing), n->run, n->url, timeout, n->run);
        shut(n);
        finish(n);
        return NULL;
    }
    return n;
}

int zri_nats_send(zri_nats *n, const zri_msg *m, char *err, size_t errlen)
{
    uint8_t *buf;
    size_t len;
    if (zri_frame_encode(n->p, m, &buf, &len) < 0) {
        zri_err(err, errlen, "internal error: a message to lifeline %s cannot be encoded",
                lname(n, m->to));
        return -1;
    }
    int rc;
    if (n->durable) {
        char id[96];
        snprintf(id, sizeof id, "%d.%d.%d.%lld", (int)m->from, (int)m->to, (int)m->chan,
                 (long long)m->seq);
        rc = js_queue(n, m->to, buf + 4, len - 4, id, err, errlen);
    } else {
        rc = publish(n, m->to, 0, buf + 4, len - 4, err, errlen);
    }
    free(buf);
    return rc;
}

int zri_nats_flush(zri_nats *n, char *err, size_t errlen)
{
    /* every publish went out at once (natsOptions_SetSendAsap); a broken
     * connection shows at the next publish or through on_closed.  A
     * durable run's messages are stored before the lifeline waits (the
     * stream's acknowledgements of all of them, not one after another) */
    if (!n->durable) return 0;
    int rc = 0;
    for (int l = 0; l < n->nl; l++) {
        if (l == n->self) continue;
        pthread_mutex_lock(&n->peers[l].lock);
        if (js_flush_peer(n, l, err, errlen) != 0) rc = -1;
        pthread_mutex_unlock(&n->peers[l].lock);
        if (rc) return rc;
    }
    return pub_drain(n, JS_PUBLISH_S + JS_PUBLISH_WAIT_MS / 1000.0 + 1, 0, err, errlen);
}

static void say_all(zri_nats *n, int bye)
{
    char err[512];
    for (int l = 0; l < n->nl; l++) {
        if (l == n->self) continue;
        pthread_mutex_lock(&n->lock);
        int skip = n->peers[l].ended;
        pthread_mutex_unlock(&n->lock);
        if (skip) continue;
        if (bye) {
            zri_msg m;
            memset(&m, 0, sizeof m);
            m.from = n->self, m.to = l, m.kind = ZRI_MSG_BYE;
            uint8_t *buf;
            size_t len;
            if (zri_frame_encode(n->p, &m, &buf, &len) == 0) {
                if (n->durable) {
                    /* (the runtime flushed before its end: nothing waits) */
                    pthread_mutex_lock(&n->peers[l].lock);
                    (void)js_flush_peer(n, l, err, sizeof err);
                    pthread_mutex_unlock(&n->peers[l].lock);
                    char id[64];
                    snprintf(id, sizeof id, "%d.%d.bye", n->self, l);
                    (void)js_publish(n, l, buf + 4, len - 4, id, err, sizeof err);
                } else {
                    (void)publish(n, l, 0, buf + 4, len - 4, err, sizeof err);
                }
                free(buf);
            }
        } else {
            static const uint8_t stop[3] = {ZRI_FRAME_MAGIC, ZRI_FRAME_VERSION, KIND_STOP};
            (void)publish(n, l, 0, stop, sizeof stop, err, sizeof err);
        }
    }
    /* what was published reaches the server before the connection closes */
    (void)natsConnection_FlushTimeout(n->nc, CLOSE_FLUSH_MS);
}

void zri_nats_close(zri_nats *n)
{
    if (!n) return;
    shut(n);
    say_all(n, 1);
    finish(n);
}

void zri_nats_abort(zri_nats *n)
{
    if (!n) return;
    shut(n);
    say_all(n, 0);
    finish(n);
}

static int t_send(void *impl, const zri_msg *m, char *err, size_t errlen)
{
    return zri_nats_send(impl, m, err, errlen);
}

static int t_flush(void *impl, char *err, size_t errlen)
{
    return zri_nats_flush(impl, err, errlen);
}

/* A worker with nothing to run takes the subscription's
 * messages itself (rt.h: zri_transport.wait); t_wake ends its wait when
 * local work appears (an empty message to its own subject, which only
 * this lifeline may publish). */
static void t_wait(void *impl, int wake_fd, int timeout_ms, int alone)
{
    zri_nats *n = impl;
    (void)alone; /* its wake is a message on the subscription it pumps */
    __atomic_store_n(&n->want, 1, __ATOMIC_RELEASE);
    pthread_mutex_lock(&n->rd_mu);
    __atomic_store_n(&n->want, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&n->polling, 1, __ATOMIC_RELEASE);
    int ms = timeout_ms < 0 || timeout_ms > WAIT_SLICE_MS ? WAIT_SLICE_MS : timeout_ms;
    struct pollfd pf = {wake_fd, POLLIN, 0};
    pthread_mutex_lock(&n->lock);
    int stop = n->stop;
    pthread_mutex_unlock(&n->lock);
    natsStatus st = NATS_TIMEOUT;
    if (!stop && poll(&pf, 1, 0) == 0) st = pump(n, ms > 0 ? ms : 1);
    /* a closed connection or subscription answers at once: wait for
     * local work instead of turning round (the run fails through
     * on_closed, or ends) */
    if (st != NATS_OK && st != NATS_TIMEOUT) poll(&pf, 1, ms);
    __atomic_store_n(&n->poll_end, now_ns(), __ATOMIC_RELEASE);
    __atomic_store_n(&n->polling, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&n->rd_mu);
}

static void t_wake(void *impl)
{
    zri_nats *n = impl;
    (void)natsConnection_Publish(n->nc, n->wake_subject, NULL, 0);
}

zri_transport zri_nats_transport(zri_nats *n)
{
    zri_transport t = {.send = t_send, .flush = t_flush, .wait = t_wait, .wake = t_wake, .impl = n};
    return t;
}
