/* hello.c — the connection handshake: who the peer is, that it belongs to
 * this run, and the key of the frames that follow.  Pure: it builds and
 * checks handshake payloads, and socket.c moves them.
 *
 * Every connection carries frames one way, from the side that connected
 * (C, a lifeline sending to its peer) to the side that accepted (S); the
 * handshake is its only traffic the other way.  Four frames, each a u32
 * big-endian length and a payload that begins with magic 0x5A, version
 * 2 and its kind:
 *
 *   C -> S  HELLO  (kind 3)  id nlifelines from to heartbeat nonce_C
 *                            workflow lifeline
 *   S -> C  ANSWER (kind 4)  id nlifelines from to heartbeat nonce_S
 *                            status workflow lifeline reason mac_S
 *   C -> S  PROOF  (kind 5)  mac_C
 *   S -> C  ACCEPT (kind 6)  mac_A
 *
 *   id        32 bytes: the program identity (zri_program_id): SHA-256 of
 *             everything that shapes frames (workflow, lifelines,
 *             variables and their types, enums, channels, tags, the
 *             monitor plan) and of the program's fingerprint, which the
 *             compiler computes over the generated code of every lifeline,
 *             the declarations and the C files (backend/link.c): two
 *             different programs, even with the same declarations, never
 *             talk
 *   nlifelines, from, to   varints: the sender's lifeline count and index,
 *             and the index of the lifeline it means to talk to (in an
 *             ANSWER: the connecting lifeline)
 *   heartbeat varint: the sender's --heartbeat in milliseconds (0: off)
 *   nonce     32 random bytes, fresh for every connection
 *   status    u8: 0 accepted so far, 1 refused (reason says why)
 *   workflow, lifeline, reason   varint length + bytes (at most
 *             ZRI_HELLO_NAME_MAX each; in messages, control characters
 *             become '?')
 *   mac_S = HMAC(secret, "zgc answer\0" || L(hello) || L(answer without mac_S))
 *   mac_C = HMAC(secret, "zgc proof\0"  || L(hello) || L(answer))
 *   mac_A = HMAC(secret, "zgc accept\0" || L(hello) || L(answer) || L(proof))
 *   key   = HMAC(secret, "zgc frames\0" || L(hello) || L(answer))
 *   where L(x) is x's length (u32 big-endian) and x, the whole payload
 *   as sent, and HMAC is HMAC-SHA256 with the run's secret (auth.c).
 *
 * What each step proves.  mac_S covers nonce_C, which C just drew: an
 * ANSWER that checks comes from a holder of the secret, now.  mac_C
 * covers nonce_S: a PROOF that checks comes from a holder of the secret
 * that saw this ANSWER, so a recorded handshake replayed to S fails
 * (nonce_S differs).  mac_A tells C that S took its PROOF, so C sends
 * frames only on connections S has adopted (a connection S dropped before
 * that is retried by C).  The labels differ, so no MAC of one step passes
 * for another.  The key binds both nonces: every connection has its own,
 * and a frame recorded on one connection fails on any other (auth.c: frame
 * tags).
 *
 * Refusals.  S checks a HELLO before it answers: well-formed, the same
 * workflow and program identity, a lifeline of the program other than S
 * named as it should be, addressed to S.  A HELLO that is not even
 * well-formed gets no answer (ZRI_HS_DROP); one that is but does not
 * match gets an ANSWER with status 1 and the reason (ZRI_HS_REFUSE), so
 * that the other side learns why.  C checks mac_S of a refusal like any
 * answer; when it checks, C sends its PROOF all the same and fails with
 * the reason.  S then knows who was refused: a holder of the secret that
 * does not match is a lifeline of this very run, built or started wrong
 * (another program, a swapped address), and S fails too; anything else —
 * no PROOF, a wrong one — was a stray, and S drops the connection and goes
 * on waiting for the peers of its run (socket.c notes it in one line).  A
 * stray connection never stops a run; a misbuilt run stops on every side
 * that sees it, with an error naming both lifelines.
 */
#include <stdio.h>
#include <string.h>

#include "net.h"

#define HELLO_MAGIC 0x5Au
#define HELLO_VERSION 2u
#define KIND_HELLO 3u
#define KIND_ANSWER 4u
#define KIND_PROOF 5u
#define KIND_ACCEPT 6u

/* ===================================================================== */
/* the program identity                                                   */
/* ===================================================================== */

static void put_i32(zri_buf *b, int32_t v)
{
    uint8_t d[4] = {(uint8_t)((uint32_t)v >> 24), (uint8_t)((uint32_t)v >> 16),
                    (uint8_t)((uint32_t)v >> 8), (uint8_t)v};
    zri_buf_add(b, (const char *)d, 4);
}

static void put_str(zri_buf *b, const char *s)
{
    s = s ? s : "";
    zri_buf_add(b, s, strlen(s) + 1);
}

static void put_ints(zri_buf *b, const int32_t *v, int32_t n)
{
    put_i32(b, n);
    for (int32_t i = 0; i < n && v; i++) put_i32(b, v[i]);
}

static void put_slots(zri_buf *b, const zgrt_slot *s, int32_t n)
{
    put_i32(b, n);
    for (int32_t i = 0; i < n && s; i++) {
        put_i32(b, s[i].lifeline);
        put_i32(b, s[i].index);
    }
}

static void put_pairs(zri_buf *b, const zgrt_pair *s, int32_t n)
{
    put_i32(b, n);
    for (int32_t i = 0; i < n && s; i++) {
        put_i32(b, s[i].from);
        put_i32(b, s[i].to);
    }
}

void zri_program_id(const zgrt_program *p, uint8_t id[ZRI_HASH_BYTES])
{
    zri_buf b = {0};
    zri_buf_puts(&b, "zgc program identity 1");
    put_i32(&b, p->abi_version);
    put_str(&b, p->workflow);
    put_i32(&b, p->nlifelines);
    for (int32_t i = 0; i < p->nlifelines; i++) put_str(&b, p->lifelines[i]);
    put_i32(&b, p->nvars);
    for (int32_t i = 0; i < p->nvars; i++) {
        put_str(&b, p->vars[i].name);
        put_i32(&b, p->vars[i].type.tag);
        put_i32(&b, p->vars[i].type.enum_id);
    }
    put_i32(&b, p->nenums);
    for (int32_t i = 0; i < p->nenums; i++) {
        put_str(&b, p->enums[i].name);
        put_i32(&b, p->enums[i].nmembers);
        for (int32_t k = 0; k < p->enums[i].nmembers; k++) put_str(&b, p->enums[i].members[k]);
    }
    put_i32(&b, p->nchans);
    for (int32_t i = 0; i < p->nchans; i++) put_str(&b, p->chans[i]);
    put_i32(&b, p->ntags);
    for (int32_t i = 0; i < p->ntags; i++) put_str(&b, p->tags[i]);
    put_i32(&b, p->monitor);
    put_i32(&b, p->nsubs);
    /* the monitor plan shapes the metadata of every frame */
    for (int32_t l = 0; l < p->nlifelines && p->keeps; l++) {
        const zgrt_keep *k = &p->keeps[l];
        put_i32(&b, k->nevals);
        put_ints(&b, k->vc, k->nvc);
        put_slots(&b, k->views, k->nviews);
        put_slots(&b, k->varviews, k->nvarviews);
    }
    put_i32(&b, p->nedges);
    for (int32_t i = 0; i < p->nedges && p->edges; i++) {
        const zgrt_edge *e = &p->edges[i];
        put_i32(&b, e->from);
        put_i32(&b, e->to);
        put_i32(&b, e->ngroups);
        for (int32_t k = 0; k < e->ngroups && e->groups; k++) {
            const zgrt_group *g = &e->groups[k];
            put_i32(&b, g->lifeline);
            put_i32(&b, g->from_vc);
            put_i32(&b, g->to_vc);
            put_i32(&b, g->views_end);
            put_i32(&b, g->varviews_end);
        }
        put_pairs(&b, e->views, e->nviews);
        put_pairs(&b, e->varviews, e->nvarviews);
    }
    /* the code: the compiler's fingerprint of the program (its lifelines'
     * code, declarations and C files; empty for a descriptor made by hand) */
    const char *fp = p->fingerprint ? p->fingerprint : "";
    put_i32(&b, (int32_t)strlen(fp));
    zri_buf_add(&b, fp, strlen(fp));
    zri_bytes part = {b.data, b.len};
    if (zri_sha256(&part, 1, id) < 0) zri_oom(); /* libcrypto fails only without memory */
    zri_buf_free(&b);
}

void zri_id_text(const uint8_t id[ZRI_HASH_BYTES], char out[ZRI_ID_TEXT])
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < (ZRI_ID_TEXT - 1) / 2; i++) {
        out[2 * i] = hex[id[i] >> 4];
        out[2 * i + 1] = hex[id[i] & 15];
    }
    out[ZRI_ID_TEXT - 1] = 0;
}

/* ===================================================================== */
/* payloads                                                               */
/* ===================================================================== */

typedef struct wr {
    uint8_t *d;
    size_t n, cap;
} wr;

static void w_u8(wr *w, unsigned v)
{
    if (w->n < w->cap) w->d[w->n] = (uint8_t)v;
    w->n++;
}

static void w_raw(wr *w, const void *s, size_t k)
{
    if (w->n + k <= w->cap) memcpy(w->d + w->n, s, k);
    w->n += k;
}

static void w_varint(wr *w, uint64_t v)
{
    do {
        uint8_t b = v & 0x7F;
        v >>= 7;
        w_u8(w, b | (v ? 0x80u : 0u));
    } while (v);
}

static void w_name(wr *w, const char *s)
{
    size_t k = s ? strlen(s) : 0;
    if (k > ZRI_HELLO_NAME_MAX) k = ZRI_HELLO_NAME_MAX;
    w_varint(w, k);
    w_raw(w, s, k);
}

typedef struct rd {
    const uint8_t *d;
    size_t n, pos;
} rd;

static int r_varint(rd *r, uint64_t *out)
{
    uint64_t v = 0;
    for (int i = 0; i < 10; i++) {
        if (r->pos >= r->n) return -1;
        uint8_t b = r->d[r->pos++];
        if (i == 9 && b > 1) return -1;
        v |= (uint64_t)(b & 0x7F) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

static int r_raw(rd *r, void *out, size_t k)
{
    if (r->n - r->pos < k) return -1;
    memcpy(out, r->d + r->pos, k);
    r->pos += k;
    return 0;
}

/* A name, made printable for messages. */
static int r_name(rd *r, char out[ZRI_HELLO_NAME_MAX + 1])
{
    uint64_t k;
    if (r_varint(r, &k) < 0 || k > ZRI_HELLO_NAME_MAX || k > r->n - r->pos) return -1;
    for (size_t i = 0; i < k; i++) {
        uint8_t c = r->d[r->pos + i];
        out[i] = (c < 0x20 || c == 0x7F) ? '?' : (char)c;
    }
    out[k] = 0;
    r->pos += (size_t)k;
    return 0;
}

/* The fields of a HELLO or an ANSWER. */
typedef struct greeting {
    uint8_t id[ZRI_HASH_BYTES];
    uint64_t nlifelines, from, to, heartbeat_ms;
    uint8_t nonce[ZRI_NONCE_BYTES];
    int status;
    char workflow[ZRI_HELLO_NAME_MAX + 1], lifeline[ZRI_HELLO_NAME_MAX + 1],
        reason[ZRI_HELLO_NAME_MAX + 1];
    uint8_t mac[ZRI_HASH_BYTES];
} greeting;

/* Writes the frame (length and payload) of a HELLO (answer 0) or an
 * ANSWER (answer 1, whose mac_S is left to the caller: the last
 * ZRI_HASH_BYTES bytes) into buf (ZRI_HELLO_MAX + 4 bytes); returns its
 * size. */
static size_t greeting_encode(const zri_hs *h, int answer, int to, int status, const char *reason,
                              uint8_t *buf)
{
    wr w = {buf + 4, 0, ZRI_HELLO_MAX};
    w_u8(&w, HELLO_MAGIC);
    w_u8(&w, HELLO_VERSION);
    w_u8(&w, answer ? KIND_ANSWER : KIND_HELLO);
    w_raw(&w, h->id, ZRI_HASH_BYTES);
    w_varint(&w, (uint64_t)h->p->nlifelines);
    w_varint(&w, (uint64_t)h->self);
    w_varint(&w, (uint64_t)to);
    w_varint(&w, h->heartbeat_ms);
    w_raw(&w, h->nonce, ZRI_NONCE_BYTES);
    if (answer) w_u8(&w, (unsigned)status);
    w_name(&w, h->p->workflow);
    w_name(&w, h->p->lifelines[h->self]);
    if (answer) {
        w_name(&w, reason);
        uint8_t zero[ZRI_HASH_BYTES] = {0};
        w_raw(&w, zero, ZRI_HASH_BYTES);
    }
    /* 3 names of at most ZRI_HELLO_NAME_MAX bytes and the fixed fields fit */
    size_t n = w.n;
    buf[0] = (uint8_t)(n >> 24);
    buf[1] = (uint8_t)(n >> 16);
    buf[2] = (uint8_t)(n >> 8);
    buf[3] = (uint8_t)n;
    return n + 4;
}

static int header(const uint8_t *d, size_t n, unsigned kind, char *why, size_t whylen)
{
    if (n < 3 || d[0] != HELLO_MAGIC) {
        zri_err(why, whylen, "bad magic");
        return -1;
    }
    if (d[1] != HELLO_VERSION) {
        zri_err(why, whylen, "handshake version %u, expected %u", (unsigned)d[1], HELLO_VERSION);
        return -1;
    }
    if (d[2] != kind) {
        zri_err(why, whylen, "frame kind %u where the handshake expects kind %u", (unsigned)d[2],
                kind);
        return -1;
    }
    return 0;
}

static int greeting_decode(const uint8_t *d, size_t n, int answer, greeting *g, char *why,
                           size_t whylen)
{
    memset(g, 0, sizeof *g);
    if (header(d, n, answer ? KIND_ANSWER : KIND_HELLO, why, whylen) < 0) return -1;
    rd r = {d, n, 3};
    if (r_raw(&r, g->id, ZRI_HASH_BYTES) < 0 || r_varint(&r, &g->nlifelines) < 0 ||
        r_varint(&r, &g->from) < 0 || r_varint(&r, &g->to) < 0 ||
        r_varint(&r, &g->heartbeat_ms) < 0 || g->heartbeat_ms > UINT32_MAX ||
        r_raw(&r, g->nonce, ZRI_NONCE_BYTES) < 0)
        goto bad;
    if (answer) {
        uint8_t st;
        if (r_raw(&r, &st, 1) < 0 || st > 1) goto bad;
        g->status = st;
    }
    if (r_name(&r, g->workflow) < 0 || r_name(&r, g->lifeline) < 0) goto bad;
    if (answer && (r_name(&r, g->reason) < 0 || r_raw(&r, g->mac, ZRI_HASH_BYTES) < 0)) goto bad;
    if (r.pos != n) goto bad;
    return 0;
bad:
    zri_err(why, whylen, "malformed %s", answer ? "answer" : "hello");
    return -1;
}

/* ===================================================================== */
/* MACs                                                                   */
/* ===================================================================== */

/* HMAC(secret, label || L(a) || L(b) || L(c)) (parts with d == NULL are
 * left out). */
static void mac3(const zri_hs *h, const char *label, zri_bytes a, zri_bytes b, zri_bytes c,
                 uint8_t out[ZRI_HASH_BYTES])
{
    zri_bytes parts[7];
    uint8_t lens[3][4];
    int k = 0;
    parts[k++] = (zri_bytes){label, strlen(label) + 1};
    zri_bytes xs[3] = {a, b, c};
    for (int i = 0; i < 3; i++) {
        if (!xs[i].d) continue;
        uint32_t n = (uint32_t)xs[i].n;
        lens[i][0] = (uint8_t)(n >> 24), lens[i][1] = (uint8_t)(n >> 16);
        lens[i][2] = (uint8_t)(n >> 8), lens[i][3] = (uint8_t)n;
        parts[k++] = (zri_bytes){lens[i], 4};
        parts[k++] = xs[i];
    }
    if (zri_hmac(h->secret->key, h->secret->len, parts, k, out) < 0) zri_oom();
}

static const zri_bytes none = {NULL, 0};

static void answer_mac(const zri_hs *h, uint8_t out[ZRI_HASH_BYTES])
{
    mac3(h, "zgc answer", (zri_bytes){h->hello, h->hello_len},
         (zri_bytes){h->answer, h->answer_len - ZRI_HASH_BYTES}, none, out);
}

static void proof_mac(const zri_hs *h, uint8_t out[ZRI_HASH_BYTES])
{
    mac3(h, "zgc proof", (zri_bytes){h->hello, h->hello_len}, (zri_bytes){h->answer, h->answer_len},
         none, out);
}

static void accept_mac(const zri_hs *h, const uint8_t *proof, size_t proof_len,
                       uint8_t out[ZRI_HASH_BYTES])
{
    mac3(h, "zgc accept", (zri_bytes){h->hello, h->hello_len},
         (zri_bytes){h->answer, h->answer_len}, (zri_bytes){proof, proof_len}, out);
}

static void derive_key(zri_hs *h)
{
    mac3(h, "zgc frames", (zri_bytes){h->hello, h->hello_len},
         (zri_bytes){h->answer, h->answer_len}, none, h->key);
}

/* A PROOF or an ACCEPT frame: header and mac. */
static size_t short_frame(unsigned kind, const uint8_t mac[ZRI_HASH_BYTES], uint8_t *buf)
{
    size_t n = 3 + ZRI_HASH_BYTES;
    buf[0] = buf[1] = buf[2] = 0;
    buf[3] = (uint8_t)n;
    buf[4] = HELLO_MAGIC;
    buf[5] = HELLO_VERSION;
    buf[6] = (uint8_t)kind;
    memcpy(buf + 7, mac, ZRI_HASH_BYTES);
    return n + 4;
}

/* ===================================================================== */
/* the two sides                                                          */
/* ===================================================================== */

int zri_hs_init(zri_hs *h, const zgrt_program *p, int self, const zri_secret *secret,
                uint32_t heartbeat_ms, const uint8_t id[ZRI_HASH_BYTES], char *err, size_t errlen)
{
    memset(h, 0, sizeof *h);
    h->p = p;
    h->self = self;
    h->secret = secret;
    h->heartbeat_ms = heartbeat_ms;
    h->peer = -1;
    memcpy(h->id, id, ZRI_HASH_BYTES);
    return zri_random(h->nonce, ZRI_NONCE_BYTES, err, errlen);
}

size_t zri_hs_hello(zri_hs *h, int to, uint8_t *frame)
{
    size_t k = greeting_encode(h, 0, to, 0, NULL, frame);
    memcpy(h->hello, frame + 4, k - 4);
    h->hello_len = k - 4;
    h->peer = to;
    return k;
}

int zri_hs_answer(zri_hs *h, const uint8_t *d, size_t n, const char *addr, uint8_t *frame,
                  size_t *flen, char *err, size_t errlen)
{
    const zgrt_program *p = h->p;
    const char *want = p->lifelines[h->peer];
    greeting g;
    char why[200];
    if (n > ZRI_HELLO_MAX || greeting_decode(d, n, 1, &g, why, sizeof why) < 0) {
        zri_err(err, errlen, "the peer at %s is not a zgc lifeline (%s)", addr,
                n > ZRI_HELLO_MAX ? "answer too long" : why);
        return -1;
    }
    memcpy(h->answer, d, n);
    h->answer_len = n;
    uint8_t mac[ZRI_HASH_BYTES];
    answer_mac(h, mac);
    if (!zri_equal(mac, g.mac, ZRI_HASH_BYTES)) {
        zri_err(err, errlen,
                "the peer at %s does not hold this run's secret (its answer fails "
                "authentication): every lifeline of a run needs the same --secret-file",
                addr);
        return -1;
    }
    if (g.status != 0) {
        /* prove membership all the same: S then knows that its refusal
         * reached a lifeline of its own run */
        uint8_t pm[ZRI_HASH_BYTES];
        proof_mac(h, pm);
        *flen = short_frame(KIND_PROOF, pm, frame);
        zri_err(err, errlen, "lifeline %s at %s refused the connection: %s", want, addr, g.reason);
        return 1;
    }
    if (strcmp(g.workflow, p->workflow ? p->workflow : "") || strcmp(g.lifeline, want)) {
        zri_err(err, errlen,
                "peer at %s is lifeline %.200s of workflow %.200s, expected lifeline %s of "
                "workflow %s",
                addr, g.lifeline, g.workflow, want, p->workflow);
        return -1;
    }
    if (!zri_equal(g.id, h->id, ZRI_HASH_BYTES) || g.nlifelines != (uint64_t)p->nlifelines ||
        g.from != (uint64_t)h->peer || g.to != (uint64_t)h->self) {
        char mine[ZRI_ID_TEXT], theirs[ZRI_ID_TEXT];
        zri_id_text(h->id, mine);
        zri_id_text(g.id, theirs);
        zri_err(err, errlen,
                "lifeline %s at %s runs a different program: lifeline %s here is program %s of "
                "workflow %s, lifeline %s there is program %s (build every lifeline from the "
                "same source)",
                want, addr, p->lifelines[h->self], mine, p->workflow, want, theirs);
        return -1;
    }
    h->peer_heartbeat_ms = (uint32_t)g.heartbeat_ms;
    uint8_t pm[ZRI_HASH_BYTES];
    proof_mac(h, pm);
    *flen = short_frame(KIND_PROOF, pm, frame);
    memcpy(h->proof, frame + 4, *flen - 4);
    h->proof_len = *flen - 4;
    return 0;
}

int zri_hs_accepted(zri_hs *h, const uint8_t *d, size_t n, const char *addr, char *err,
                    size_t errlen)
{
    char why[200];
    uint8_t mac[ZRI_HASH_BYTES];
    if (header(d, n, KIND_ACCEPT, why, sizeof why) < 0 || n != 3 + ZRI_HASH_BYTES) {
        zri_err(err, errlen, "the peer at %s is not a zgc lifeline (%s)", addr,
                n >= 3 && d[0] == HELLO_MAGIC && d[1] == HELLO_VERSION && d[2] == KIND_ACCEPT
                    ? "malformed accept"
                    : why);
        return -1;
    }
    accept_mac(h, h->proof, h->proof_len, mac);
    if (!zri_equal(mac, d + 3, ZRI_HASH_BYTES)) {
        zri_err(err, errlen,
                "the peer at %s does not hold this run's secret (its acceptance fails "
                "authentication)",
                addr);
        return -1;
    }
    derive_key(h);
    return 0;
}

int zri_hs_on_hello(zri_hs *h, const uint8_t *d, size_t n, uint8_t *frame, size_t *flen, char *why,
                    size_t whylen)
{
    const zgrt_program *p = h->p;
    const char *me = p->lifelines[h->self];
    greeting g;
    char bad[200];
    if (n > ZRI_HELLO_MAX || greeting_decode(d, n, 0, &g, bad, sizeof bad) < 0) {
        zri_err(why, whylen, "not a zgc lifeline (%s)", n > ZRI_HELLO_MAX ? "hello too long" : bad);
        return ZRI_HS_DROP;
    }
    memcpy(h->hello, d, n);
    h->hello_len = n;
    char reason[ZRI_HELLO_NAME_MAX + 1] = "";
    char mine[ZRI_ID_TEXT], theirs[ZRI_ID_TEXT];
    zri_id_text(h->id, mine);
    zri_id_text(g.id, theirs);
    if (strcmp(g.workflow, p->workflow ? p->workflow : "")) {
        snprintf(reason, sizeof reason,
                 "lifeline %.200s of workflow %.200s connected to lifeline %s of workflow %s",
                 g.lifeline, g.workflow, me, p->workflow);
    } else if (!zri_equal(g.id, h->id, ZRI_HASH_BYTES) || g.nlifelines != (uint64_t)p->nlifelines ||
               g.from >= (uint64_t)p->nlifelines || strcmp(g.lifeline, p->lifelines[g.from])) {
        snprintf(reason, sizeof reason,
                 "lifeline %.200s (program %s) connected to lifeline %s (program %s): they were "
                 "built from different programs of workflow %s",
                 g.lifeline, theirs, me, mine, p->workflow);
    } else if (g.from == (uint64_t)h->self) {
        snprintf(reason, sizeof reason, "a connection claims to come from lifeline %s itself", me);
    } else if (g.to != (uint64_t)h->self) {
        snprintf(reason, sizeof reason,
                 "lifeline %.200s expected lifeline %s at this address, but this is lifeline %s",
                 g.lifeline, g.to < (uint64_t)p->nlifelines ? p->lifelines[g.to] : "?", me);
    }
    int to = g.from < (uint64_t)p->nlifelines ? (int)g.from : 0;
    size_t k = greeting_encode(h, 1, to, reason[0] ? 1 : 0, reason, frame);
    memcpy(h->answer, frame + 4, k - 4);
    h->answer_len = k - 4;
    answer_mac(h, h->answer + h->answer_len - ZRI_HASH_BYTES);
    memcpy(frame + k - ZRI_HASH_BYTES, h->answer + h->answer_len - ZRI_HASH_BYTES, ZRI_HASH_BYTES);
    *flen = k;
    if (reason[0]) {
        zri_err(why, whylen, "%s", reason);
        snprintf(h->refusal, sizeof h->refusal, "%s", reason);
        return ZRI_HS_REFUSE;
    }
    h->peer = (int)g.from;
    h->peer_heartbeat_ms = (uint32_t)g.heartbeat_ms;
    return ZRI_HS_ANSWER;
}

int zri_hs_on_proof(zri_hs *h, const uint8_t *d, size_t n, uint8_t *frame, size_t *flen, char *why,
                    size_t whylen)
{
    const char *who = h->peer >= 0 ? h->p->lifelines[h->peer] : "?";
    char bad[200];
    if (header(d, n, KIND_PROOF, bad, sizeof bad) < 0 || n != 3 + ZRI_HASH_BYTES) {
        if (h->refusal[0]) {
            zri_err(why, whylen, "%s", h->refusal);
            return ZRI_HS_DROP;
        }
        zri_err(why, whylen, "a connection claiming to be lifeline %s sent no valid proof (%s)",
                who,
                n >= 3 && d[0] == HELLO_MAGIC && d[1] == HELLO_VERSION && d[2] == KIND_PROOF
                    ? "malformed proof"
                    : bad);
        return ZRI_HS_DROP;
    }
    uint8_t mac[ZRI_HASH_BYTES];
    proof_mac(h, mac);
    if (!zri_equal(mac, d + 3, ZRI_HASH_BYTES)) {
        if (h->refusal[0])
            zri_err(why, whylen, "%s", h->refusal);
        else
            zri_err(why, whylen,
                    "a connection claiming to be lifeline %s failed authentication: it does "
                    "not hold this run's secret, or replays an old handshake",
                    who);
        return ZRI_HS_DROP;
    }
    if (h->refusal[0]) { /* a lifeline of this run, refused */
        zri_err(why, whylen, "%s", h->refusal);
        return ZRI_HS_REFUSE;
    }
    memcpy(h->proof, d, n);
    h->proof_len = n;
    accept_mac(h, h->proof, h->proof_len, mac);
    *flen = short_frame(KIND_ACCEPT, mac, frame);
    derive_key(h);
    return 0;
}
