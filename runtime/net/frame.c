/* frame.c — message frames between lifelines: a length-prefixed binary
 * codec, every field validated against the program descriptor.
 *
 * Frame format
 * ------------
 *   frame    = length payload
 *   length   = u32, big-endian: the payload's size in bytes,
 *              1 <= length <= ZRI_FRAME_MAX
 *   payload  = magic version kind body
 *   magic    = 0x5A ('Z')
 *   version  = 0x04 (1 and 2: the dense views of runtime ABIs 1 and 2,
 *              every slot of the program on every message; 3: sequence
 *              numbers from 0 and no counts frames; all refused); the
 *              handshake's frames carry its own version (hello.c)
 *   kind     = u8: 0 user message, 1 control message, 2 BYE, 3 to 6 the
 *              handshake (hello.c), 7 heartbeat (socket.c: no body),
 *              8 ACK and 9 SYNC (counts frames, durable runs), 10 STOP
 *              (NATS), 11 a batch
 *
 *   body of a user message (kind 0):
 *       flags from to chan seq nvals value{nvals} [meta]
 *   body of a control message (kind 1):
 *       flags from to chan seq tag decision [meta]
 *   body of a BYE (kind 2), a lifeline's last frame on a connection:
 *       from to
 *   body of an ACK (kind 8), a receiver's journal has committed messages:
 *       from to n (chan committed){n}
 *   body of a SYNC (kind 9), the first frame on a new connection of a
 *   durable run:
 *       from to n (chan received committed){n}
 *   body of a batch (kind 11), frames under one tag (zri_batch_next):
 *       (length payload)...   each length u32, big-endian, >= 1; no
 *       payload a batch itself.  Sockets: the frames written together to
 *       a peer; NATS: a durable run's frames to a peer between flushes
 *   kinds 3 to 6, the connection handshake, are encoded and checked by
 *       hello.c (their layout is described there), a heartbeat (kind 7)
 *       by socket.c, and ACK and SYNC by zri_counts_decode;
 *       zri_frame_decode accepts none of them.
 *
 *   On a connection, after the handshake, every payload is followed by
 *   its tag (auth.c), and the length counts both (socket.c).
 *
 *   flags    = u8: bit 0 set when meta follows, bit 1 set when its clock
 *              is the full vector clock (a traced run; only with bit 0);
 *              the other bits are zero
 *   from, to = varint lifeline indices (< nlifelines, from != to)
 *   chan     = varint channel index (< nchans)
 *   seq      = varint, the message's position on its stream (sender,
 *              receiver, chan): 1, 2, ... (1 <= seq <= INT64_MAX); a
 *              receiver takes seq = received + 1, drops seq <= received (a
 *              copy sent again after a reconnection) and fails on a gap
 *              (zri_seq_check)
 *   nvals    = varint (<= ZRI_FRAME_VALS_MAX); control messages carry none
 *   tag      = varint control tag index (< ntags)
 *   decision = u8, 0 or 1
 *
 *   n        = varint count of the (chan ...) entries (<= nchans), in
 *              strictly increasing chan order (each channel once)
 *   received, committed = varint message counts (<= INT64_MAX) of the
 *              stream (to → from, chan), whose receiver sends the frame:
 *              how many messages it holds (received, in memory or in its
 *              journal) and how many of them its journal has committed
 *              (committed <= received); the stream's sender then resends
 *              what follows `received` and frees what `committed` covers
 *
 *   varint   = unsigned LEB128: 7 bits a byte, least significant group
 *              first, high bit set on every byte but the last; at most 10
 *              bytes, at most 64 bits, minimal (no trailing zero group)
 *
 *   value    = type payload, type a u8 zgrt_tag:
 *       1 bool   u8 0 or 1
 *       2 int    8 bytes, big-endian two's complement
 *       3 float  8 bytes, big-endian IEEE 754 binary64, finite
 *       4 str    varint n, then n bytes of UTF-8 without NUL
 *       5 json   varint n, then n bytes of JSON text (any JSON value,
 *                nested at most ZRI_JSON_DEPTH_MAX deep, UTF-8, no NUL)
 *       6 enum   varint enum index (< nenums), varint member index
 *                (< that enum's nmembers)
 *       0 undef  nothing; only in varviews
 *
 *   meta     = vc views varviews: exactly what the monitor plan's edge
 *              (from, to) carries (zgrt_program.edges, zgrt_abi.h:
 *              zgrt_edge), in its order
 *       vc       = varint{ngroups}: the clock entry of each group's
 *                  lifeline; with flag bit 1 instead varint{nlifelines},
 *                  the whole clock; each <= INT64_MAX
 *       views    = nviews bits, one per carried view, entry k in byte k/8,
 *                  bit k%8 (least significant bit first), unused bits of
 *                  the last byte zero
 *       varviews = value{nvarviews}, one per carried variable view (B, x)
 *                  (the receiver's keep.varviews[to]): undef or of the
 *                  declared type of x (same enum)
 *   An edge without groups carries no meta unless the clock is full; a
 *   pair of lifelines without an edge carries only a full clock.  Both
 *   ends have the same descriptor, so the counts are implied: e.g. an
 *   edge of 2 groups, 3 views and 1 variable view gives at least 2 + 1 +
 *   1 bytes of meta.  The receiving run checks that the form (none, the
 *   edge's, full) is the one it runs (core.c, zri_run_deliver).

 * A user message's tag and value fields are not sent (decoded as 0); a
 * control message's decision travels in its value field.  The decoder
 * rejects everything else, trailing bytes included, with a message naming
 * the offending field; the encoder refuses (-1) any message the decoder
 * would reject, so that every encoded frame decodes.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "net.h"

#define FRAME_MAGIC ZRI_FRAME_MAGIC
#define FRAME_VERSION ZRI_FRAME_VERSION
#define FRAME_HAS_META 0x01u
#define FRAME_FULL_CLOCK 0x02u
/* Largest value count in one message (a send lists its values in the
 * source, so real messages carry a handful). */
#define ZRI_FRAME_VALS_MAX 65536
/* Deepest JSON nesting accepted (arrays and objects). */
#define ZRI_JSON_DEPTH_MAX 512

/* ===================================================================== */
/* messages                                                               */
/* ===================================================================== */

static size_t align16(size_t n) { return (n + 15) & ~(size_t)15; }

zri_msg *zri_msg_new(const zgrt_program *p, int32_t nvals, int32_t from, int32_t to, int form)
{
    if (nvals < 0 || nvals > ZRI_FRAME_VALS_MAX) return NULL;
    size_t nl = 0, nv = 0, nvv = 0;
    if (form != ZRI_META_NONE) {
        /* the plan's edge (zgrt_abi.h: zgrt_edge) */
        const zgrt_edge *e = zri_program_edge(p, from, to);
        nl = form == ZRI_META_FULL ? (size_t)(p->nlifelines > 0 ? p->nlifelines : 0)
             : e && e->ngroups > 0 ? (size_t)e->ngroups
                                   : 0;
        nv = e && e->nviews > 0 ? (size_t)e->nviews : 0;
        nvv = e && e->nvarviews > 0 ? (size_t)e->nvarviews : 0;
    }
    /* program sizes are small; guard against overflow anyway */
    if (nl > SIZE_MAX / 64 || nv > SIZE_MAX / 64 || nvv > SIZE_MAX / 64) return NULL;

    size_t off_vals = align16(sizeof(zri_msg));
    size_t off_varviews = align16(off_vals + (size_t)nvals * sizeof(zgrt_value));
    size_t off_vc = align16(off_varviews + nvv * sizeof(zgrt_value));
    size_t off_views = align16(off_vc + nl * sizeof(int64_t));
    size_t total = off_views + nv;

    /* malloc and memset rather than calloc: glibc's calloc never takes
     * a block from the thread's cache, malloc does (a message is decoded
     * and freed on one thread, one after the other) */
    unsigned char *b = zri_xmalloc(total);
    memset(b, 0, total);
    zri_msg *m = (zri_msg *)b;
    m->nvals = nvals;
    m->from = from;
    m->to = to;
    m->vals = (zgrt_value *)(b + off_vals);
    if (form != ZRI_META_NONE && nl > 0) {
        m->has_meta = form;
        m->nvc = (int32_t)nl;
        m->nviews = (int32_t)nv;
        m->nvarviews = (int32_t)nvv;
        m->vc = (int64_t *)(b + off_vc);
        m->views = b + off_views;
        m->varviews = (zgrt_value *)(b + off_varviews);
    }
    return m;
}

/* ===================================================================== */
/* shared checks                                                          */
/* ===================================================================== */

/* Nesting depth of the arrays and objects in JSON text (strings skipped);
 * stops counting past limit.  Only a bound: jansson validates the text. */
static int json_depth_exceeds(const uint8_t *s, size_t n, int limit)
{
    int depth = 0, in_str = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_str = 0;
        } else if (c == '"') {
            in_str = 1;
        } else if (c == '[' || c == '{') {
            if (++depth > limit) return 1;
        } else if ((c == ']' || c == '}') && depth > 0) {
            depth--;
        }
    }
    return 0;
}

static const char *tag_name(int64_t tag)
{
    switch (tag) {
    case ZGRT_UNDEF: return "undefined";
    case ZGRT_BOOL: return "bool";
    case ZGRT_INT: return "int";
    case ZGRT_FLOAT: return "float";
    case ZGRT_STR: return "string";
    case ZGRT_JSON: return "json";
    case ZGRT_ENUM: return "enum";
    default: return "unknown";
    }
}

/* ===================================================================== */
/* encoding                                                               */
/* ===================================================================== */

typedef struct wbuf {
    uint8_t *b;
    size_t len, cap;
    int bad;       /* the frame would exceed ZRI_FRAME_MAX */
    uint8_t *room; /* the caller's buffer (b, until it is outgrown) */
} wbuf;

static uint8_t *w_grow(wbuf *w, size_t k);

/* k more bytes at the end of w, or NULL once w went bad (a frame past
 * ZRI_FRAME_MAX, which zri_frame_encode_in also checks at its end). */
static inline uint8_t *w_room(wbuf *w, size_t k)
{
    if (__builtin_expect(k <= w->cap - w->len && !w->bad, 1)) {
        uint8_t *r = w->b + w->len;
        w->len += k;
        return r;
    }
    return w_grow(w, k);
}

static uint8_t *w_grow(wbuf *w, size_t k)
{
    if (w->bad) return NULL;
    if (k > (size_t)ZRI_FRAME_MAX + 4 - w->len) {
        w->bad = 1;
        return NULL;
    }
    if (w->len + k > w->cap) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap < w->len + k) cap *= 2;
        if (w->b && w->b == w->room) {
            uint8_t *b = zri_xmalloc(cap);
            memcpy(b, w->b, w->len);
            w->b = b;
        } else {
            w->b = zri_xrealloc(w->b, cap);
        }
        w->cap = cap;
    }
    uint8_t *r = w->b + w->len;
    w->len += k;
    return r;
}

static inline void w_u8(wbuf *w, unsigned v)
{
    uint8_t *d = w_room(w, 1);
    if (d) d[0] = (uint8_t)v;
}

static void w_varint_long(wbuf *w, uint64_t v);

/* (most varints of a frame are one byte: written here, the rest out of
 * line) */
static inline void w_varint(wbuf *w, uint64_t v)
{
    if (__builtin_expect(v < 0x80, 1))
        w_u8(w, (unsigned)v);
    else
        w_varint_long(w, v);
}

static void w_varint_long(wbuf *w, uint64_t v)
{
    size_t n = (size_t)(64 - __builtin_clzll(v) + 6) / 7; /* v >= 0x80 */
    uint8_t *d = w_room(w, n);
    if (!d) return;
    for (size_t i = 0; i + 1 < n; i++, v >>= 7) d[i] = (uint8_t)(v | 0x80);
    d[n - 1] = (uint8_t)v;
}

static inline void w_u64be(wbuf *w, uint64_t v)
{
    uint8_t *d = w_room(w, 8);
    if (!d) return;
    v = __builtin_bswap64(v);
    memcpy(d, &v, 8);
}

static void w_bytes(wbuf *w, const void *s, size_t n)
{
    w_varint(w, n);
    uint8_t *d = w_room(w, n);
    if (d && n) memcpy(d, s, n);
}

/* Writes one value; -1 when it cannot be represented (the decoder would
 * reject it).  want: the declared type for varviews, or NULL. */
static int w_value(wbuf *w, const zgrt_program *p, const zgrt_value *v, int allow_undef,
                   const zgrt_type *want)
{
    if (want && v->tag != ZGRT_UNDEF) {
        if (v->tag != want->tag) return -1;
        if (v->tag == ZGRT_ENUM && (v->u.i >> 32) != want->enum_id) return -1;
    }
    switch (v->tag) {
    case ZGRT_UNDEF:
        if (!allow_undef) return -1;
        w_u8(w, ZGRT_UNDEF);
        return 0;
    case ZGRT_BOOL:
        if (v->u.i != 0 && v->u.i != 1) return -1;
        w_u8(w, ZGRT_BOOL);
        w_u8(w, (unsigned)v->u.i);
        return 0;
    case ZGRT_INT:
        w_u8(w, ZGRT_INT);
        w_u64be(w, (uint64_t)v->u.i);
        return 0;
    case ZGRT_FLOAT: {
        if (!isfinite(v->u.f)) return -1;
        uint64_t bits;
        memcpy(&bits, &v->u.f, sizeof bits);
        w_u8(w, ZGRT_FLOAT);
        w_u64be(w, bits);
        return 0;
    }
    case ZGRT_STR: {
        const zgrt_str *s = v->u.s;
        if (!s || s->len < 0 || (uint64_t)s->len > ZRI_FRAME_MAX) return -1;
        const uint8_t *d = (const uint8_t *)s->data;
        if (memchr(d, 0, (size_t)s->len) || !zri_utf8_valid(s->data, (size_t)s->len)) return -1;
        w_u8(w, ZGRT_STR);
        w_bytes(w, d, (size_t)s->len);
        return 0;
    }
    case ZGRT_JSON: {
        /* a NULL payload is JSON null */
        char *text = json_dumps(v->u.j ? (const json_t *)v->u.j : json_null(),
                                JSON_ENCODE_ANY | JSON_COMPACT);
        if (!text) return -1;
        size_t n = strlen(text);
        int ok = zri_utf8_valid(text, n) &&
                 !json_depth_exceeds((const uint8_t *)text, n, ZRI_JSON_DEPTH_MAX);
        if (ok) {
            w_u8(w, ZGRT_JSON);
            w_bytes(w, text, n);
        }
        free(text);
        return ok ? 0 : -1;
    }
    case ZGRT_ENUM: {
        int64_t e = v->u.i >> 32, mem = v->u.i & 0xFFFFFFFF;
        if (e < 0 || e >= p->nenums || mem >= p->enums[e].nmembers) return -1;
        w_u8(w, ZGRT_ENUM);
        w_varint(w, (uint64_t)e);
        w_varint(w, (uint64_t)mem);
        return 0;
    }
    default: return -1;
    }
}

static int index_ok(int32_t i, int32_t n) { return i >= 0 && i < n; }

/* The variable of carried variable view k of edge e (the receiver's
 * keep.varviews[to]), or NULL when the descriptor is malformed (zgrt_main
 * validates descriptors before a run; this keeps the codec safe with any
 * descriptor). */
static const zgrt_slot *edge_varview(const zgrt_program *p, const zgrt_edge *e, size_t k)
{
    if (!e || !p->keeps || !e->varviews || k >= (size_t)(e->nvarviews > 0 ? e->nvarviews : 0) ||
        !index_ok(e->to, p->nlifelines))
        return NULL;
    const zgrt_keep *x = &p->keeps[e->to];
    int32_t to = e->varviews[k].to;
    if (!index_ok(to, x->nvarviews) || !x->varviews) return NULL;
    const zgrt_slot *s = &x->varviews[to];
    if (!index_ok(s->lifeline, p->nlifelines) || !index_ok(s->index, p->nvars) || !p->vars)
        return NULL;
    return s;
}

/* The metadata counts of a message from → to in form `full` (1: a full
 * clock) or the edge's: -1 when the edge carries none in that form. */
static int meta_shape(const zgrt_program *p, int32_t from, int32_t to, int full,
                      const zgrt_edge **e, size_t *nvc, size_t *nv, size_t *nvv)
{
    *e = zri_program_edge(p, from, to);
    *nv = *e && (*e)->nviews > 0 ? (size_t)(*e)->nviews : 0;
    *nvv = *e && (*e)->nvarviews > 0 ? (size_t)(*e)->nvarviews : 0;
    *nvc = full ? (size_t)p->nlifelines : *e && (*e)->ngroups > 0 ? (size_t)(*e)->ngroups : 0;
    return *nvc > 0 ? 0 : -1;
}

/* Frees w's buffer unless it is the caller's. */
static void w_free(wbuf *w)
{
    if (w->b != w->room) free(w->b);
}

/* The frame in w (its first 4 bytes reserved): fills in the length and
 * hands the buffer over; -1 (and frees it) when w went bad. */
static int w_finish(wbuf *w, uint8_t **buf, size_t *len)
{
    if (w->bad) {
        w_free(w);
        return -1;
    }
    size_t plen = w->len - 4;
    w->b[0] = (uint8_t)(plen >> 24);
    w->b[1] = (uint8_t)(plen >> 16);
    w->b[2] = (uint8_t)(plen >> 8);
    w->b[3] = (uint8_t)plen;
    *buf = w->b;
    *len = w->len;
    return 0;
}

int zri_frame_encode(const zgrt_program *p, const zri_msg *m, uint8_t **buf, size_t *len)
{
    return zri_frame_encode_in(p, m, NULL, 0, buf, len);
}

/* The frames decode_short reads, written without the general writer
 * into room (when it has the space): the same bytes
 * (tests/net/test_frame.c, frame/short_path_encodes_as_the_general_one).  0 when it wrote the
 * frame, -1 to leave it to the general writer. */
static int encode_short(const zgrt_program *p, const zri_msg *m, uint8_t *room, size_t cap,
                        uint8_t **buf, size_t *len)
{
    if (!room || (m->kind != ZRI_MSG_USER && m->kind != ZRI_MSG_CTL) ||
        m->has_meta != ZRI_META_NONE)
        return -1;
    if (!index_ok(m->from, p->nlifelines) || !index_ok(m->to, p->nlifelines) || m->from == m->to ||
        !index_ok(m->chan, p->nchans) || ((m->from | m->to | m->chan) & ~0x7F))
        return -1;
    if (m->seq < 1 || m->nvals < 0 || m->nvals >= 0x80) return -1;
    if (cap < 24 || (size_t)m->nvals > (cap - 24) / 9) return -1;
    uint8_t *d = room;
    size_t at = 4;
    d[at++] = FRAME_MAGIC;
    d[at++] = FRAME_VERSION;
    d[at++] = (uint8_t)m->kind;
    d[at++] = 0; /* flags: no metadata */
    d[at++] = (uint8_t)m->from;
    d[at++] = (uint8_t)m->to;
    d[at++] = (uint8_t)m->chan;
    for (uint64_t v = (uint64_t)m->seq;; v >>= 7) { /* a varint of 1 to 9 bytes */
        if (v < 0x80) {
            d[at++] = (uint8_t)v;
            break;
        }
        d[at++] = (uint8_t)(v | 0x80);
    }
    if (m->kind == ZRI_MSG_CTL) {
        if (!index_ok(m->tag, p->ntags) || (m->tag & ~0x7F) || (m->value != 0 && m->value != 1) ||
            m->nvals != 0)
            return -1;
        d[at++] = (uint8_t)m->tag;
        d[at++] = (uint8_t)m->value;
    } else {
        if (m->nvals && !m->vals) return -1;
        d[at++] = (uint8_t)m->nvals;
        for (int32_t i = 0; i < m->nvals; i++) {
            const zgrt_value *v = &m->vals[i];
            if (v->tag == ZGRT_INT) {
                uint64_t bits = __builtin_bswap64((uint64_t)v->u.i);
                d[at] = ZGRT_INT;
                memcpy(d + at + 1, &bits, 8);
                at += 9;
            } else if (v->tag == ZGRT_BOOL && (v->u.i == 0 || v->u.i == 1)) {
                d[at++] = ZGRT_BOOL;
                d[at++] = (uint8_t)v->u.i;
            } else {
                return -1;
            }
        }
    }
    size_t plen = at - 4;
    d[0] = 0;
    d[1] = 0;
    d[2] = (uint8_t)(plen >> 8);
    d[3] = (uint8_t)plen;
    *buf = d;
    *len = at;
    return 0;
}

int zri_frame_encode_in(const zgrt_program *p, const zri_msg *m, uint8_t *room, size_t cap,
                        uint8_t **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    if (encode_short(p, m, room, cap, buf, len) == 0) return 0;
    if (m->kind != ZRI_MSG_USER && m->kind != ZRI_MSG_CTL && m->kind != ZRI_MSG_BYE) return -1;
    if (!index_ok(m->from, p->nlifelines) || !index_ok(m->to, p->nlifelines) || m->from == m->to)
        return -1;

    wbuf w = {.b = room, .cap = room ? cap : 0, .room = room};
    w_room(&w, 4); /* the length, filled in at the end */
    w_u8(&w, FRAME_MAGIC);
    w_u8(&w, FRAME_VERSION);
    w_u8(&w, (unsigned)m->kind);
    if (m->kind == ZRI_MSG_BYE) {
        w_varint(&w, (uint64_t)m->from);
        w_varint(&w, (uint64_t)m->to);
    } else {
        if (!index_ok(m->chan, p->nchans) || m->seq < 1) goto bad;
        if (m->kind == ZRI_MSG_CTL &&
            (!index_ok(m->tag, p->ntags) || (m->value != 0 && m->value != 1) || m->nvals != 0))
            goto bad;
        if (m->nvals < 0 || m->nvals > ZRI_FRAME_VALS_MAX || (m->nvals && !m->vals)) goto bad;
        if (m->has_meta != ZRI_META_NONE && m->has_meta != ZRI_META_EDGE &&
            m->has_meta != ZRI_META_FULL)
            goto bad;
        w_u8(&w, m->has_meta == ZRI_META_FULL   ? FRAME_HAS_META | FRAME_FULL_CLOCK
                 : m->has_meta == ZRI_META_EDGE ? FRAME_HAS_META
                                                : 0);
        w_varint(&w, (uint64_t)m->from);
        w_varint(&w, (uint64_t)m->to);
        w_varint(&w, (uint64_t)m->chan);
        w_varint(&w, (uint64_t)m->seq);
        if (m->kind == ZRI_MSG_USER) {
            w_varint(&w, (uint64_t)m->nvals);
            for (int32_t i = 0; i < m->nvals; i++)
                if (w_value(&w, p, &m->vals[i], 0, NULL) < 0) goto bad;
        } else {
            w_varint(&w, (uint64_t)m->tag);
            w_u8(&w, (unsigned)m->value);
        }
        if (m->has_meta) {
            const zgrt_edge *e;
            size_t nvc, nbits, nvv;
            if (meta_shape(p, m->from, m->to, m->has_meta == ZRI_META_FULL, &e, &nvc, &nbits,
                           &nvv) < 0)
                goto bad;
            if (!m->vc || (size_t)m->nvc != nvc || (size_t)m->nviews != nbits ||
                (size_t)m->nvarviews != nvv || (nbits && !m->views) || (nvv && !m->varviews))
                goto bad;
            for (size_t l = 0; l < nvc; l++) {
                if (m->vc[l] < 0) goto bad;
                w_varint(&w, (uint64_t)m->vc[l]);
            }
            uint8_t *d = w_room(&w, (nbits + 7) / 8);
            if (d) {
                memset(d, 0, (nbits + 7) / 8);
                for (size_t k = 0; k < nbits; k++) {
                    if (m->views[k] > 1) goto bad;
                    d[k / 8] |= (uint8_t)(m->views[k] << (k % 8));
                }
            }
            for (size_t k = 0; k < nvv; k++) {
                const zgrt_slot *s = edge_varview(p, e, k);
                if (!s || w_value(&w, p, &m->varviews[k], 1, &p->vars[s->index].type) < 0) goto bad;
            }
        }
    }
    if (w.len - 4 > ZRI_FRAME_MAX) w.bad = 1;
    return w_finish(&w, buf, len);
bad:
    w_free(&w);
    return -1;
}

/* ===================================================================== */
/* decoding                                                               */
/* ===================================================================== */

/* The name of a value in messages: "value N" of a message's values, or
 * "value of L.x" of a variable view (var set), or a lifeline (life only).
 * Formatted only when a message is written: a frame that decodes formats
 * nothing. */
typedef struct vname {
    uint64_t n;
    const char *life, *var;
} vname;

static const char *vname_text(const vname *v, char *buf, size_t len)
{
    if (v->var)
        snprintf(buf, len, "value of %s.%s", v->life, v->var);
    else if (v->life)
        snprintf(buf, len, "%s", v->life);
    else
        snprintf(buf, len, "value %llu", (unsigned long long)v->n);
    return buf;
}

typedef struct rbuf {
    const uint8_t *p;
    size_t n, pos;
    char *err;
    size_t errlen;
    /* what the reads given no `what` are of (r_about): pre, then type and
     * a space, then the value's name */
    const char *w_pre, *w_type;
    const vname *w_val;
} rbuf;

static void r_about(rbuf *r, const char *pre, const char *type, const vname *val)
{
    r->w_pre = pre;
    r->w_type = type;
    r->w_val = val;
}

/* what, or when it is NULL the text r_about set: built only for a message */
static const char *what_text(const rbuf *r, const char *what, char *buf, size_t len)
{
    if (what) return what;
    char v[160] = "";
    if (r->w_val) vname_text(r->w_val, v, sizeof v);
    snprintf(buf, len, "%s%s%s%s", r->w_pre ? r->w_pre : "", r->w_type ? r->w_type : "",
             r->w_type ? " " : "", v);
    return buf;
}

static int rfail(rbuf *r, const char *fmt, ...) ZRI_PRINTF(2, 3);
static int rfail(rbuf *r, const char *fmt, ...)
{
    if (r->err && r->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->err, r->errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static size_t r_left(const rbuf *r) { return r->n - r->pos; }

/* The readers: what a read is of, for its message, or NULL for the
 * text r_about set. */
static int r_truncated(rbuf *r, const char *what)
{
    char wb[160];
    return rfail(r, "frame truncated in %s", what_text(r, what, wb, sizeof wb));
}

static inline int r_u8(rbuf *r, uint8_t *out, const char *what)
{
    *out = 0;
    if (__builtin_expect(r->pos >= r->n, 0)) return r_truncated(r, what);
    *out = r->p[r->pos++];
    return 0;
}

static int r_varint_long(rbuf *r, uint64_t *out, const char *what);

/* (most varints of a frame are one byte: read here, the rest out of line) */
static inline int r_varint(rbuf *r, uint64_t *out, const char *what)
{
    if (__builtin_expect(r->pos < r->n && !(r->p[r->pos] & 0x80), 1)) {
        *out = r->p[r->pos++];
        return 0;
    }
    /* two bytes (a sequence number up to 16383), minimal */
    if (r->n - r->pos >= 2 && (uint8_t)(r->p[r->pos + 1] - 1) < 0x7F) {
        *out = (uint64_t)(r->p[r->pos] & 0x7F) | (uint64_t)r->p[r->pos + 1] << 7;
        r->pos += 2;
        return 0;
    }
    return r_varint_long(r, out, what);
}

static int r_varint_long(rbuf *r, uint64_t *out, const char *what)
{
    char wb[160];
    uint64_t v = 0;
    *out = 0;
    for (int i = 0;; i++) {
        if (r->pos >= r->n) return r_truncated(r, what);
        uint8_t b = r->p[r->pos++];
        if (i == 9 && b > 1)
            return rfail(r, "varint too large in %s", what_text(r, what, wb, sizeof wb));
        v |= (uint64_t)(b & 0x7F) << (7 * i);
        if (!(b & 0x80)) {
            if (b == 0 && i > 0)
                return rfail(r, "non-minimal varint in %s", what_text(r, what, wb, sizeof wb));
            break;
        }
    }
    *out = v;
    return 0;
}

static inline int r_fixed(rbuf *r, size_t k, const uint8_t **out, const char *what)
{
    *out = NULL;
    if (__builtin_expect(r_left(r) < k, 0)) return r_truncated(r, what);
    *out = r->p + r->pos;
    r->pos += k;
    return 0;
}

static int r_index_bad(rbuf *r, uint64_t v, int32_t limit, const char *what, const char *unit)
{
    return rfail(r, "%s index %llu out of range (the program has %d %s)", what,
                 (unsigned long long)v, (int)limit, unit);
}

/* A varint index < limit; what: "sender lifeline", unit: "lifelines". */
static inline int r_index(rbuf *r, int32_t limit, int32_t *out, const char *what, const char *unit)
{
    uint64_t v;
    *out = 0;
    if (r_varint(r, &v, what) < 0) return -1;
    if (__builtin_expect(limit <= 0 || v >= (uint64_t)limit, 0))
        return r_index_bad(r, v, limit, what, unit);
    *out = (int32_t)v;
    return 0;
}

/* A length-prefixed byte string of a value: checked against the bytes
 * left before anything is done with it. */
static int r_blob(rbuf *r, const char *type, const vname *label, const uint8_t **d, size_t *n)
{
    *d = NULL;
    *n = 0;
    r_about(r, "the length of ", type, label);
    uint64_t len;
    if (r_varint(r, &len, NULL) < 0) return -1;
    char lb[160];
    if (len > r_left(r))
        return rfail(r, "%s %s: length %llu exceeds the frame (%zu bytes left)", type,
                     vname_text(label, lb, sizeof lb), (unsigned long long)len, r_left(r));
    *d = r->p + r->pos;
    *n = (size_t)len;
    r->pos += (size_t)len;
    return 0;
}

/* One value.  label: "value 2", "value of Writer.draft".  want: the
 * declared type (varviews) or NULL. */
static int r_value(rbuf *r, const zgrt_program *p, zri_heap *h, const vname *name, int allow_undef,
                   const zgrt_type *want, zgrt_value *out)
{
    /* the value's name, formatted for a message only (lb) */
    char lb[160];
#define LABEL vname_text(name, lb, sizeof lb)
    r_about(r, "the type of ", NULL, name);
    uint8_t tag;
    if (r_u8(r, &tag, NULL) < 0) return -1;
    if (tag > ZGRT_ENUM) return rfail(r, "%s has unknown type tag %u", LABEL, (unsigned)tag);
    if (tag == ZGRT_UNDEF && !allow_undef) return rfail(r, "%s is undefined", LABEL);
    if (want && tag != ZGRT_UNDEF && tag != want->tag)
        return rfail(r, "%s is a %s, but the variable is declared %s", LABEL, tag_name(tag),
                     tag_name(want->tag));
    out->tag = tag;
    out->u.i = 0;
    r_about(r, "", tag_name(tag), name);
    const uint8_t *d;
    switch (tag) {
    case ZGRT_UNDEF: return 0;
    case ZGRT_BOOL: {
        uint8_t b;
        if (r_u8(r, &b, NULL) < 0) return -1;
        if (b > 1) return rfail(r, "bool %s is %u, not 0 or 1", LABEL, (unsigned)b);
        out->u.i = b;
        return 0;
    }
    case ZGRT_INT:
    case ZGRT_FLOAT: {
        if (r_fixed(r, 8, &d, NULL) < 0) return -1;
        uint64_t bits = 0;
        for (int i = 0; i < 8; i++) bits = (bits << 8) | d[i];
        if (tag == ZGRT_INT) {
            out->u.i = (int64_t)bits;
        } else {
            double f;
            memcpy(&f, &bits, sizeof f);
            if (!isfinite(f)) return rfail(r, "float %s is not finite", LABEL);
            out->u.f = f;
        }
        return 0;
    }
    case ZGRT_STR: {
        size_t n;
        if (r_blob(r, "string", name, &d, &n) < 0) return -1;
        if (memchr(d, 0, n)) return rfail(r, "string %s contains a NUL byte", LABEL);
        if (!zri_utf8_valid((const char *)d, n))
            return rfail(r, "string %s is not valid UTF-8", LABEL);
        out->u.s = zri_str(h, (const char *)d, n);
        return 0;
    }
    case ZGRT_JSON: {
        size_t n;
        if (r_blob(r, "json", name, &d, &n) < 0) return -1;
        if (memchr(d, 0, n)) return rfail(r, "json %s contains a NUL byte", LABEL);
        if (!zri_utf8_valid((const char *)d, n))
            return rfail(r, "json %s is not valid UTF-8", LABEL);
        if (json_depth_exceeds(d, n, ZRI_JSON_DEPTH_MAX))
            return rfail(r, "json %s nests deeper than %d levels", LABEL, ZRI_JSON_DEPTH_MAX);
        json_error_t jerr;
        json_t *j = json_loadb((const char *)d, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
        if (!j)
            return rfail(r, "json %s is not valid JSON: %s at byte %d", LABEL, jerr.text,
                         jerr.position);
        out->u.j = zri_json_keep(h, j);
        json_decref(j);
        return 0;
    }
    default: { /* ZGRT_ENUM */
        uint64_t e, mem;
        r_about(r, "the enum index of ", NULL, name);
        if (r_varint(r, &e, NULL) < 0) return -1;
        if (e >= (uint64_t)(p->nenums > 0 ? p->nenums : 0))
            return rfail(r, "enum %s: enum index %llu out of range (the program has %d enums)",
                         LABEL, (unsigned long long)e, (int)p->nenums);
        r_about(r, "the member of enum ", NULL, name);
        if (r_varint(r, &mem, NULL) < 0) return -1;
        const zgrt_enum *en = &p->enums[e];
        if (mem >= (uint64_t)(en->nmembers > 0 ? en->nmembers : 0))
            return rfail(r, "enum %s: member %llu out of range for enum %s (%d members)", LABEL,
                         (unsigned long long)mem, en->name, (int)en->nmembers);
        if (want && (int64_t)e != want->enum_id)
            return rfail(r, "%s is a member of enum %s, but the variable is declared enum %s",
                         LABEL, en->name,
                         want->enum_id >= 0 && want->enum_id < p->nenums
                             ? p->enums[want->enum_id].name
                             : "?");
        out->u.i = (int64_t)((e << 32) | mem);
        return 0;
    }
    }
}
#undef LABEL

static int r_meta(rbuf *r, const zgrt_program *p, zri_heap *h, zri_msg *m)
{
    const zgrt_edge *e = zri_program_edge(p, m->from, m->to);
    int full = m->has_meta == ZRI_META_FULL;
    for (int32_t k = 0; k < m->nvc; k++) {
        uint64_t v;
        int32_t l = full ? k : e->groups[k].lifeline;
        if (!index_ok(l, p->nlifelines)) return rfail(r, "the plan's edge is malformed");
        vname life = {.life = p->lifelines[l]};
        r_about(r, "the vector clock entry of ", NULL, &life);
        if (r_varint(r, &v, NULL) < 0) return -1;
        if (v > (uint64_t)INT64_MAX)
            return rfail(r, "the vector clock entry of %s is out of range", p->lifelines[l]);
        m->vc[k] = (int64_t)v;
    }

    size_t nbits = (size_t)m->nviews, nvv = (size_t)m->nvarviews;
    const uint8_t *bits;
    if (r_fixed(r, (nbits + 7) / 8, &bits, "the monitor views") < 0) return -1;
    for (size_t k = 0; k < nbits; k++) m->views[k] = (bits[k / 8] >> (k % 8)) & 1;
    if (nbits % 8 && (bits[nbits / 8] >> (nbits % 8)))
        return rfail(r, "unused bits of the monitor views are not zero");

    for (size_t k = 0; k < nvv; k++) {
        const zgrt_slot *s = edge_varview(p, e, k);
        if (!s) return rfail(r, "variable view %zu of the plan's edge is malformed", k);
        vname name = {.life = p->lifelines[s->lifeline], .var = p->vars[s->index].name};
        if (r_value(r, p, h, &name, 1, &p->vars[s->index].type, &m->varviews[k]) < 0) return -1;
    }
    return 0;
}

int zri_frame_decode(const zgrt_program *p, zri_heap *h, const uint8_t *payload, size_t len,
                     zri_msg **out, char *err, size_t errlen)
{
    return zri_frame_decode_in(p, h, NULL, NULL, payload, len, out, err, errlen);
}

/* A decoded message's block — block's, else zri_msg_new's — with room
 * for nvals values and the metadata of form, its kind, lifelines and
 * channel set. */
static zri_msg *msg_begin(const zgrt_program *p, zri_block_fn block, void *block_user, int32_t kind,
                          int32_t nvals, int32_t from, int32_t to, int32_t chan, int form)
{
    zri_msg *m = block ? block(block_user, nvals, from, to, chan, form) : NULL;
    if (!m) m = zri_msg_new(p, nvals, from, to, form);
    m->kind = kind;
    m->from = from;
    m->to = to;
    m->chan = chan;
    return m;
}

/* The most common frames, decoded without the general reader: a message
 * or a control decision without metadata, its lifelines, channel, tag
 * and value count one byte each, its values ints and bools, the whole at
 * most 255 bytes.  It accepts only frames the general reader accepts, and
 * decodes them to the same message (tests/net/test_frame.c,
 * frame/short_path_decodes_as_the_general_one); anything else, well-formed
 * or not, it leaves to the general reader (NULL), which also says what is
 * wrong. */
static zri_msg *decode_short(const zgrt_program *p, zri_block_fn block, void *block_user,
                             const uint8_t *d, size_t len)
{
    if (len < 9 || len > 255 || d[0] != FRAME_MAGIC || d[1] != FRAME_VERSION || d[3] != 0)
        return NULL;
    int32_t kind = d[2];
    if (kind != ZRI_MSG_USER && kind != ZRI_MSG_CTL) return NULL;
    if ((d[4] | d[5] | d[6]) & 0x80) return NULL; /* longer varints */
    int32_t from = d[4], to = d[5], chan = d[6];
    if (from >= p->nlifelines || to >= p->nlifelines || from == to || chan >= p->nchans)
        return NULL;
    /* the sequence number: a minimal varint of up to 9 bytes (below 2^63),
     * not 0 */
    size_t at = 7;
    uint64_t seq = 0;
    for (int i = 0;; i++) {
        if (i == 9 || at >= len) return NULL;
        uint8_t b = d[at++];
        seq |= (uint64_t)(b & 0x7F) << (7 * i);
        if (!(b & 0x80)) {
            if (b == 0 && i > 0) return NULL;
            break;
        }
    }
    if (seq == 0) return NULL;
    int32_t nvals = 0, tag = 0, value = 0;
    if (kind == ZRI_MSG_CTL) {
        if (len - at != 2 || d[at] >= 0x80 || d[at] >= p->ntags || d[at + 1] > 1) return NULL;
        tag = d[at];
        value = d[at + 1];
        at = len;
    } else {
        if (at >= len || d[at] >= 0x80) return NULL;
        nvals = d[at++];
        /* walk the values first: the block is taken only for a frame
         * decoded whole */
        size_t v = at;
        for (int32_t i = 0; i < nvals; i++) {
            if (v >= len) return NULL;
            if (d[v] == ZGRT_INT) {
                if (len - v < 9) return NULL;
                v += 9;
            } else if (d[v] == ZGRT_BOOL) {
                if (len - v < 2 || d[v + 1] > 1) return NULL;
                v += 2;
            } else {
                return NULL;
            }
        }
        if (v != len) return NULL;
    }
    zri_msg *m = msg_begin(p, block, block_user, kind, nvals, from, to, chan, ZRI_META_NONE);
    m->seq = (int64_t)seq;
    m->tag = tag;
    m->value = value;
    for (int32_t i = 0; i < nvals; i++) {
        zgrt_value *x = &m->vals[i];
        x->tag = d[at];
        if (d[at] == ZGRT_INT) {
            uint64_t bits;
            memcpy(&bits, d + at + 1, 8);
            x->u.i = (int64_t)__builtin_bswap64(bits);
            at += 9;
        } else {
            x->u.i = d[at + 1];
            at += 2;
        }
    }
    return m;
}

int zri_frame_decode_in(const zgrt_program *p, zri_heap *h, zri_block_fn block, void *block_user,
                        const uint8_t *payload, size_t len, zri_msg **out, char *err, size_t errlen)
{
    if (err && errlen) err[0] = 0;
    if (payload && (*out = decode_short(p, block, block_user, payload, len))) return 0;
    return zri_frame_decode_long(p, h, block, block_user, payload, len, out, err, errlen);
}

int zri_frame_decode_long(const zgrt_program *p, zri_heap *h, zri_block_fn block, void *block_user,
                          const uint8_t *payload, size_t len, zri_msg **out, char *err,
                          size_t errlen)
{
    rbuf r = {.p = payload, .n = payload ? len : 0, .err = err, .errlen = errlen};
    zri_msg *m = NULL;
    *out = NULL;
    if (err && errlen) err[0] = 0;
    if (len > ZRI_FRAME_MAX)
        return rfail(&r, "frame of %zu bytes exceeds the limit of %u bytes", len,
                     (unsigned)ZRI_FRAME_MAX);

    uint8_t magic, version, kind, flags;
    if (r_u8(&r, &magic, "the header") < 0) return -1;
    if (magic != FRAME_MAGIC)
        return rfail(&r, "bad magic byte 0x%02x (not a zgc frame)", (unsigned)magic);
    if (r_u8(&r, &version, "the header") < 0) return -1;
    if (r_u8(&r, &kind, "the header") < 0) return -1;
    /* the handshake's frames have their own version (hello.c) */
    if (kind >= ZRI_KIND_HELLO && kind <= ZRI_KIND_ACCEPT)
        return rfail(&r, "unexpected handshake frame (kind %u)", (unsigned)kind);
    if (kind == ZRI_KIND_BEAT) return rfail(&r, "unexpected heartbeat");
    if (kind == ZRI_KIND_ACK || kind == ZRI_KIND_SYNC)
        return rfail(&r, "unexpected counts frame (kind %u)", (unsigned)kind);
    if (version != FRAME_VERSION)
        return rfail(&r, "unsupported frame version %u (expected %u)", (unsigned)version,
                     FRAME_VERSION);
    if (kind != ZRI_MSG_USER && kind != ZRI_MSG_CTL && kind != ZRI_MSG_BYE)
        return rfail(&r, "unknown frame kind %u", (unsigned)kind);

    int32_t from, to;
    if (kind == ZRI_MSG_BYE) {
        if (r_index(&r, p->nlifelines, &from, "sender lifeline", "lifelines") < 0 ||
            r_index(&r, p->nlifelines, &to, "receiver lifeline", "lifelines") < 0)
            return -1;
        if (from == to) return rfail(&r, "BYE from lifeline %s to itself", p->lifelines[from]);
        if (r.pos != r.n) goto trailing;
        m = zri_msg_new(p, 0, from, to, ZRI_META_NONE);
        m->kind = ZRI_MSG_BYE;
        m->from = from;
        m->to = to;
        *out = m;
        return 0;
    }

    if (r_u8(&r, &flags, "the flags") < 0) return -1;
    if (flags & ~(FRAME_HAS_META | FRAME_FULL_CLOCK))
        return rfail(&r, "unknown flags 0x%02x", (unsigned)flags);
    if ((flags & FRAME_FULL_CLOCK) && !(flags & FRAME_HAS_META))
        return rfail(&r, "a full clock without metadata (flags 0x%02x)", (unsigned)flags);
    if (r_index(&r, p->nlifelines, &from, "sender lifeline", "lifelines") < 0 ||
        r_index(&r, p->nlifelines, &to, "receiver lifeline", "lifelines") < 0)
        return -1;
    if (from == to) return rfail(&r, "message from lifeline %s to itself", p->lifelines[from]);
    int32_t chan;
    if (r_index(&r, p->nchans, &chan, "channel", "channels") < 0) return -1;
    uint64_t seq;
    if (r_varint(&r, &seq, "the sequence number") < 0) return -1;
    if (seq > (uint64_t)INT64_MAX) return rfail(&r, "sequence number out of range");
    if (seq == 0) return rfail(&r, "sequence number 0 (a stream's messages count from 1)");

    uint64_t nvals = 0;
    int32_t tag = 0, value = 0;
    if (kind == ZRI_MSG_USER) {
        if (r_varint(&r, &nvals, "the value count") < 0) return -1;
        if (nvals > ZRI_FRAME_VALS_MAX)
            return rfail(&r, "too many values (%llu, at most %d)", (unsigned long long)nvals,
                         ZRI_FRAME_VALS_MAX);
        if (nvals > r_left(&r) / 2) /* every value takes at least 2 bytes */
            return rfail(&r, "value count %llu exceeds the frame (%zu bytes left)",
                         (unsigned long long)nvals, r_left(&r));
    } else {
        uint8_t d;
        if (r_index(&r, p->ntags, &tag, "control tag", "tags") < 0) return -1;
        if (r_u8(&r, &d, "the control decision") < 0) return -1;
        if (d > 1) return rfail(&r, "control decision %u is not 0 or 1", (unsigned)d);
        value = d;
    }

    int form = !(flags & FRAME_HAS_META)    ? ZRI_META_NONE
               : (flags & FRAME_FULL_CLOCK) ? ZRI_META_FULL
                                            : ZRI_META_EDGE;
    if (form != ZRI_META_NONE) {
        const zgrt_edge *e;
        size_t nvc, nv, nvv;
        if (meta_shape(p, from, to, form == ZRI_META_FULL, &e, &nvc, &nv, &nvv) < 0)
            return rfail(&r, "metadata from %s to %s, which the monitor plan does not send",
                         p->lifelines[from], p->lifelines[to]);
    }
    m = msg_begin(p, block, block_user, kind, (int32_t)nvals, from, to, chan, form);
    m->seq = (int64_t)seq;
    m->tag = tag;
    m->value = value;
    for (uint64_t i = 0; i < nvals; i++) {
        vname name = {.n = i + 1};
        if (r_value(&r, p, h, &name, 0, NULL, &m->vals[i]) < 0) goto fail;
    }
    if ((flags & FRAME_HAS_META) && r_meta(&r, p, h, m) < 0) goto fail;
    if (r.pos != r.n) goto trailing;
    *out = m;
    return 0;

trailing:
    rfail(&r, "%zu trailing byte%s after the frame", r.n - r.pos, r.n - r.pos == 1 ? "" : "s");
fail:
    free(m);
    return -1;
}

/* ===================================================================== */
/* streams and counts frames                                              */
/* ===================================================================== */

int zri_is_batch(const uint8_t *payload, size_t len)
{
    return len >= ZRI_BATCH_HEAD && payload[0] == FRAME_MAGIC && payload[1] == FRAME_VERSION &&
           payload[2] == ZRI_KIND_BATCH;
}

int zri_batch_next(const uint8_t *payload, size_t len, size_t *at, const uint8_t **item,
                   size_t *ilen)
{
    if (*at >= len) return 0;
    if (len - *at < 4) return -1;
    const uint8_t *d = payload + *at;
    size_t k = (size_t)d[0] << 24 | (size_t)d[1] << 16 | (size_t)d[2] << 8 | d[3];
    if (k == 0 || k > len - *at - 4) return -1;
    *item = d + 4;
    *ilen = k;
    *at += 4 + k;
    return 1;
}

int zri_seq_check(int64_t received, int64_t seq)
{
    if (seq == received + 1) return ZRI_SEQ_NEXT;
    return seq <= received ? ZRI_SEQ_COPY : ZRI_SEQ_GAP;
}

int zri_counts_encode(const zgrt_program *p, int kind, int32_t from, int32_t to, const zri_count *c,
                      int32_t n, uint8_t **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    if (kind != ZRI_KIND_ACK && kind != ZRI_KIND_SYNC) return -1;
    if (!index_ok(from, p->nlifelines) || !index_ok(to, p->nlifelines) || from == to) return -1;
    if (n < 0 || n > p->nchans || (n && !c)) return -1;
    wbuf w = {0};
    w_room(&w, 4);
    w_u8(&w, FRAME_MAGIC);
    w_u8(&w, FRAME_VERSION);
    w_u8(&w, (unsigned)kind);
    w_varint(&w, (uint64_t)from);
    w_varint(&w, (uint64_t)to);
    w_varint(&w, (uint64_t)n);
    for (int32_t i = 0; i < n; i++) {
        if (!index_ok(c[i].chan, p->nchans) || (i && c[i].chan <= c[i - 1].chan) ||
            c[i].committed < 0 || c[i].received < c[i].committed ||
            (kind == ZRI_KIND_ACK && c[i].received != c[i].committed))
            goto bad;
        w_varint(&w, (uint64_t)c[i].chan);
        if (kind == ZRI_KIND_SYNC) w_varint(&w, (uint64_t)c[i].received);
        w_varint(&w, (uint64_t)c[i].committed);
    }
    return w_finish(&w, buf, len);
bad:
    free(w.b);
    return -1;
}

static int r_count(rbuf *r, int64_t *out, const char *what)
{
    uint64_t v;
    if (r_varint(r, &v, what) < 0) return -1;
    if (v > (uint64_t)INT64_MAX) return rfail(r, "%s out of range", what);
    *out = (int64_t)v;
    return 0;
}

int zri_counts_decode(const zgrt_program *p, const uint8_t *payload, size_t len, int *kind,
                      int32_t *from, int32_t *to, zri_count **out, int32_t *nout, char *err,
                      size_t errlen)
{
    rbuf r = {.p = payload, .n = payload ? len : 0, .err = err, .errlen = errlen};
    *out = NULL;
    *nout = 0;
    if (err && errlen) err[0] = 0;
    uint8_t magic, version, k;
    if (r_u8(&r, &magic, "the header") < 0) return -1;
    if (magic != FRAME_MAGIC)
        return rfail(&r, "bad magic byte 0x%02x (not a zgc frame)", (unsigned)magic);
    if (r_u8(&r, &version, "the header") < 0 || r_u8(&r, &k, "the header") < 0) return -1;
    if (version != FRAME_VERSION)
        return rfail(&r, "unsupported frame version %u (expected %u)", (unsigned)version,
                     FRAME_VERSION);
    if (k != ZRI_KIND_ACK && k != ZRI_KIND_SYNC)
        return rfail(&r, "not a counts frame (kind %u)", (unsigned)k);
    if (r_index(&r, p->nlifelines, from, "sender lifeline", "lifelines") < 0 ||
        r_index(&r, p->nlifelines, to, "receiver lifeline", "lifelines") < 0)
        return -1;
    if (*from == *to) return rfail(&r, "counts from lifeline %s to itself", p->lifelines[*from]);
    uint64_t n;
    if (r_varint(&r, &n, "the channel count") < 0) return -1;
    if (n > (uint64_t)p->nchans)
        return rfail(&r, "%llu channel counts (the program has %d channels)", (unsigned long long)n,
                     (int)p->nchans);
    zri_count *c = zri_xcalloc(n ? (size_t)n : 1, sizeof *c);
    for (uint64_t i = 0; i < n; i++) {
        if (r_index(&r, p->nchans, &c[i].chan, "channel", "channels") < 0) goto fail;
        if (i && c[i].chan <= c[i - 1].chan) {
            rfail(&r, "channel %d after channel %d: counts must be in increasing channel order",
                  (int)c[i].chan, (int)c[i - 1].chan);
            goto fail;
        }
        if (k == ZRI_KIND_SYNC && r_count(&r, &c[i].received, "the received count") < 0) goto fail;
        if (r_count(&r, &c[i].committed, "the committed count") < 0) goto fail;
        if (k == ZRI_KIND_ACK) c[i].received = c[i].committed;
        if (c[i].committed > c[i].received) {
            rfail(&r, "channel %d: %lld committed of %lld received", (int)c[i].chan,
                  (long long)c[i].committed, (long long)c[i].received);
            goto fail;
        }
    }
    if (r.pos != r.n) {
        rfail(&r, "%zu trailing byte%s after the frame", r.n - r.pos, r.n - r.pos == 1 ? "" : "s");
        goto fail;
    }
    *kind = k;
    *out = c;
    *nout = (int32_t)n;
    return 0;
fail:
    free(c);
    return -1;
}
