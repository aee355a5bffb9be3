/* wire.c — the tests' own implementation of the transport's wire protocol
 * (wire.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "wire.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- bytes on a socket ---- */

int tw_write(int fd, const void *d, size_t n)
{
    const uint8_t *b = d;
    while (n) {
        ssize_t k = send(fd, b, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

int tw_read(int fd, void *d, size_t n, double timeout)
{
    uint8_t *b = d;
    double end = now() + timeout;
    while (n) {
        double left = end - now();
        if (left <= 0) return -2;
        struct pollfd pf = {fd, POLLIN, 0};
        int pr = poll(&pf, 1, (int)(left * 1000) + 1);
        if (pr < 0 && errno == EINTR) continue;
        if (pr < 0) return -1;
        if (pr == 0) continue;
        ssize_t k = recv(fd, b, n, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

int tw_read_frame(int fd, uint8_t *payload, size_t cap, size_t *n, double timeout)
{
    uint8_t h[4];
    int rc = tw_read(fd, h, 4, timeout);
    if (rc) return rc;
    size_t len = (size_t)h[0] << 24 | (size_t)h[1] << 16 | (size_t)h[2] << 8 | h[3];
    if (len > cap) return -1;
    *n = len;
    return tw_read(fd, payload, len, timeout);
}

int tw_write_frame(int fd, const uint8_t *payload, size_t n)
{
    uint8_t h[4] = {(uint8_t)(n >> 24), (uint8_t)(n >> 16), (uint8_t)(n >> 8), (uint8_t)n};
    if (tw_write(fd, h, 4) < 0) return -1;
    return tw_write(fd, payload, n);
}

/* ---- encoding ---- */

static size_t varint(uint8_t *d, uint64_t v)
{
    size_t n = 0;
    do {
        uint8_t b = v & 0x7F;
        v >>= 7;
        d[n++] = b | (v ? 0x80 : 0);
    } while (v);
    return n;
}

static size_t name(uint8_t *d, const char *s)
{
    size_t k = strlen(s);
    size_t n = varint(d, k);
    memcpy(d + n, s, k);
    return n + k;
}

static int get_varint(const uint8_t *d, size_t n, size_t *pos, uint64_t *out)
{
    uint64_t v = 0;
    for (int i = 0; i < 10; i++) {
        if (*pos >= n) return -1;
        uint8_t b = d[(*pos)++];
        v |= (uint64_t)(b & 0x7F) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

static int get_name(const uint8_t *d, size_t n, size_t *pos, char *out)
{
    uint64_t k;
    if (get_varint(d, n, pos, &k) < 0 || k > TW_NAME_MAX || k > n - *pos) return -1;
    memcpy(out, d + *pos, k);
    out[k] = 0;
    *pos += k;
    return 0;
}

void tw_random(uint8_t *d, size_t n)
{
    if (RAND_bytes(d, (int)n) != 1) memset(d, 0x42, n);
}

void tw_mac(const uint8_t *secret, size_t slen, const char *label, const uint8_t *a, size_t an,
            const uint8_t *b, size_t bn, const uint8_t *c, size_t cn, uint8_t out[TW_MAC])
{
    /* the message as one buffer, then the one-shot HMAC */
    static __thread uint8_t msg[3 * (TW_HELLO_MAX + 4) + 64];
    size_t k = strlen(label) + 1;
    memcpy(msg, label, k);
    const uint8_t *ps[3] = {a, b, c};
    size_t ns[3] = {an, bn, cn};
    for (int i = 0; i < 3; i++) {
        if (!ps[i]) continue;
        msg[k++] = (uint8_t)(ns[i] >> 24), msg[k++] = (uint8_t)(ns[i] >> 16);
        msg[k++] = (uint8_t)(ns[i] >> 8), msg[k++] = (uint8_t)ns[i];
        memcpy(msg + k, ps[i], ns[i]);
        k += ns[i];
    }
    unsigned int len = 0;
    HMAC(EVP_sha256(), secret, (int)slen, msg, k, out, &len);
}

size_t tw_hello_payload(const tw_self *me, uint64_t to, const uint8_t nonce[TW_NONCE], uint8_t *d)
{
    size_t n = 0;
    d[n++] = TW_MAGIC, d[n++] = TW_HS_VERSION, d[n++] = TW_HELLO;
    memcpy(d + n, me->id, TW_ID), n += TW_ID;
    n += varint(d + n, me->nlifelines);
    n += varint(d + n, me->index);
    n += varint(d + n, to);
    n += varint(d + n, me->heartbeat_ms);
    memcpy(d + n, nonce, TW_NONCE), n += TW_NONCE;
    n += name(d + n, me->workflow);
    n += name(d + n, me->name);
    return n;
}

size_t tw_answer_payload(const tw_self *me, uint64_t to, int status, const char *reason,
                         const uint8_t nonce[TW_NONCE], const uint8_t *hello, size_t hello_len,
                         uint8_t *d)
{
    size_t n = 0;
    d[n++] = TW_MAGIC, d[n++] = TW_HS_VERSION, d[n++] = TW_ANSWER;
    memcpy(d + n, me->id, TW_ID), n += TW_ID;
    n += varint(d + n, me->nlifelines);
    n += varint(d + n, me->index);
    n += varint(d + n, to);
    n += varint(d + n, me->heartbeat_ms);
    memcpy(d + n, nonce, TW_NONCE), n += TW_NONCE;
    d[n++] = (uint8_t)status;
    n += name(d + n, me->workflow);
    n += name(d + n, me->name);
    n += name(d + n, reason ? reason : "");
    tw_mac(me->secret, me->secret_len, "zgc answer", hello, hello_len, d, n, NULL, 0, d + n);
    return n + TW_MAC;
}

int tw_parse_greeting(const uint8_t *d, size_t n, int answer, tw_greeting *g)
{
    memset(g, 0, sizeof *g);
    size_t pos = 3;
    if (n < 3 || d[0] != TW_MAGIC || d[1] != TW_HS_VERSION ||
        d[2] != (answer ? TW_ANSWER : TW_HELLO))
        return -1;
    if (n - pos < TW_ID) return -1;
    memcpy(g->id, d + pos, TW_ID), pos += TW_ID;
    if (get_varint(d, n, &pos, &g->nlifelines) || get_varint(d, n, &pos, &g->from) ||
        get_varint(d, n, &pos, &g->to) || get_varint(d, n, &pos, &g->heartbeat_ms) ||
        n - pos < TW_NONCE)
        return -1;
    memcpy(g->nonce, d + pos, TW_NONCE), pos += TW_NONCE;
    if (answer) {
        if (pos >= n) return -1;
        g->status = d[pos++];
    }
    if (get_name(d, n, &pos, g->workflow) || get_name(d, n, &pos, g->lifeline)) return -1;
    if (answer) {
        if (get_name(d, n, &pos, g->reason) || n - pos != TW_MAC) return -1;
        memcpy(g->mac, d + pos, TW_MAC), pos += TW_MAC;
    }
    return pos == n ? 0 : -1;
}

void tw_learn(tw_self *me, const tw_greeting *g)
{
    memcpy(me->id, g->id, TW_ID);
    snprintf(me->workflow, sizeof me->workflow, "%s", g->workflow);
    me->nlifelines = g->nlifelines;
}

static void short_frame(int kind, const uint8_t mac[TW_MAC], uint8_t *d)
{
    d[0] = TW_MAGIC, d[1] = TW_HS_VERSION, d[2] = (uint8_t)kind;
    memcpy(d + 3, mac, TW_MAC);
}

int tw_connect(tw_conn *c, int fd, const tw_self *me, uint64_t to, double timeout, char *why,
               size_t whylen)
{
    memset(c, 0, sizeof *c);
    c->fd = fd;
    uint8_t nonce[TW_NONCE], mac[TW_MAC];
    tw_random(nonce, sizeof nonce);
    c->hello_len = tw_hello_payload(me, to, nonce, c->hello);
    if (tw_write_frame(fd, c->hello, c->hello_len) < 0) {
        snprintf(why, whylen, "closed before the hello");
        return -1;
    }
    int rc = tw_read_frame(fd, c->answer, sizeof c->answer, &c->answer_len, timeout);
    if (rc) {
        snprintf(why, whylen, rc == -2 ? "no answer" : "closed without an answer");
        return -1;
    }
    if (tw_parse_greeting(c->answer, c->answer_len, 1, &c->peer) < 0) {
        snprintf(why, whylen, "malformed answer");
        return -1;
    }
    tw_mac(me->secret, me->secret_len, "zgc answer", c->hello, c->hello_len, c->answer,
           c->answer_len - TW_MAC, NULL, 0, mac);
    if (memcmp(mac, c->peer.mac, TW_MAC)) {
        snprintf(why, whylen, "the answer's mac is wrong");
        return -1;
    }
    if (c->peer.status) {
        snprintf(why, whylen, "refused: %s", c->peer.reason);
        return -1;
    }
    tw_mac(me->secret, me->secret_len, "zgc proof", c->hello, c->hello_len, c->answer,
           c->answer_len, NULL, 0, mac);
    short_frame(TW_PROOF, mac, c->proof);
    c->proof_len = 3 + TW_MAC;
    if (tw_write_frame(fd, c->proof, c->proof_len) < 0) {
        snprintf(why, whylen, "closed before the proof");
        return -1;
    }
    uint8_t acc[64];
    size_t an;
    rc = tw_read_frame(fd, acc, sizeof acc, &an, timeout);
    if (rc) {
        snprintf(why, whylen, rc == -2 ? "not accepted in time" : "closed instead of accepting");
        return -1;
    }
    tw_mac(me->secret, me->secret_len, "zgc accept", c->hello, c->hello_len, c->answer,
           c->answer_len, c->proof, c->proof_len, mac);
    if (an != 3 + TW_MAC || acc[2] != TW_ACCEPT || memcmp(acc + 3, mac, TW_MAC)) {
        snprintf(why, whylen, "bad accept");
        return -1;
    }
    tw_mac(me->secret, me->secret_len, "zgc frames", c->hello, c->hello_len, c->answer,
           c->answer_len, NULL, 0, c->key);
    return 0;
}

int tw_accept(tw_conn *c, int fd, const tw_self *me, double timeout, char *why, size_t whylen)
{
    memset(c, 0, sizeof *c);
    c->fd = fd;
    int rc = tw_read_frame(fd, c->hello, sizeof c->hello, &c->hello_len, timeout);
    if (rc || tw_parse_greeting(c->hello, c->hello_len, 0, &c->peer) < 0) {
        snprintf(why, whylen, "no hello");
        return -1;
    }
    tw_self learnt;
    if (me->nlifelines == 0) { /* whoever the caller means to be */
        learnt = *me;
        tw_learn(&learnt, &c->peer);
        learnt.index = c->peer.to;
        learnt.heartbeat_ms = (uint32_t)c->peer.heartbeat_ms;
        me = &learnt;
    }
    uint8_t nonce[TW_NONCE], mac[TW_MAC];
    tw_random(nonce, sizeof nonce);
    c->answer_len =
        tw_answer_payload(me, c->peer.from, 0, "", nonce, c->hello, c->hello_len, c->answer);
    if (tw_write_frame(fd, c->answer, c->answer_len) < 0) {
        snprintf(why, whylen, "closed before the answer");
        return -1;
    }
    rc = tw_read_frame(fd, c->proof, sizeof c->proof, &c->proof_len, timeout);
    if (rc) {
        snprintf(why, whylen, "no proof");
        return -1;
    }
    tw_mac(me->secret, me->secret_len, "zgc proof", c->hello, c->hello_len, c->answer,
           c->answer_len, NULL, 0, mac);
    if (c->proof_len != 3 + TW_MAC || memcmp(c->proof + 3, mac, TW_MAC)) {
        snprintf(why, whylen, "bad proof");
        return -1;
    }
    tw_mac(me->secret, me->secret_len, "zgc accept", c->hello, c->hello_len, c->answer,
           c->answer_len, c->proof, c->proof_len, mac);
    uint8_t acc[3 + TW_MAC];
    short_frame(TW_ACCEPT, mac, acc);
    if (tw_write_frame(fd, acc, sizeof acc) < 0) {
        snprintf(why, whylen, "closed before the accept");
        return -1;
    }
    tw_mac(me->secret, me->secret_len, "zgc frames", c->hello, c->hello_len, c->answer,
           c->answer_len, NULL, 0, c->key);
    return 0;
}

/* ---- frames ---- */

void tw_tag(const uint8_t key[TW_MAC], uint64_t seq, const uint8_t *payload, size_t n,
            uint8_t tag[TW_TAG])
{
    uint8_t *msg = malloc(12 + n), full[TW_MAC];
    if (!msg) abort();
    for (int i = 0; i < 8; i++) msg[i] = (uint8_t)(seq >> (56 - 8 * i));
    for (int i = 0; i < 4; i++) msg[8 + i] = (uint8_t)((uint64_t)n >> (24 - 8 * i));
    memcpy(msg + 12, payload, n);
    unsigned int len = 0;
    HMAC(EVP_sha256(), key, TW_MAC, msg, 12 + n, full, &len);
    free(msg);
    memcpy(tag, full, TW_TAG);
}

size_t tw_seal(tw_conn *c, const uint8_t *payload, size_t n, uint8_t *out)
{
    size_t len = n + TW_TAG;
    out[0] = (uint8_t)(len >> 24), out[1] = (uint8_t)(len >> 16);
    out[2] = (uint8_t)(len >> 8), out[3] = (uint8_t)len;
    memcpy(out + 4, payload, n);
    tw_tag(c->key, c->seq++, payload, n, out + 4 + n);
    return 4 + len;
}

int tw_send(tw_conn *c, const uint8_t *payload, size_t n)
{
    static __thread uint8_t out[4 + 70000 + TW_TAG];
    if (n > 70000) return -1;
    size_t k = tw_seal(c, payload, n, out);
    return tw_write(c->fd, out, k);
}

int tw_recv(tw_conn *c, uint8_t *payload, size_t cap, size_t *n, double timeout)
{
    size_t len;
    int rc = tw_read_frame(c->fd, payload, cap, &len, timeout);
    if (rc) return rc;
    if (len < TW_TAG) return -3;
    uint8_t tag[TW_TAG];
    tw_tag(c->key, c->seq, payload, len - TW_TAG, tag);
    if (memcmp(tag, payload + len - TW_TAG, TW_TAG)) return -3;
    c->seq++;
    *n = len - TW_TAG;
    return 0;
}

size_t tw_beat_payload(uint8_t *d)
{
    d[0] = TW_MAGIC, d[1] = TW_FRAME_VERSION, d[2] = TW_BEAT;
    return 3;
}

size_t tw_bye_payload(uint64_t from, uint64_t to, uint8_t *d)
{
    size_t n = 0;
    d[n++] = TW_MAGIC, d[n++] = TW_FRAME_VERSION, d[n++] = TW_BYE;
    n += varint(d + n, from);
    n += varint(d + n, to);
    return n;
}
