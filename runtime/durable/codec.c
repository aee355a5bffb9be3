/* codec.c — journal entries as bytes (the format: durable.h, zrd_encode).
 *
 * Compact and exact: a replay must give back the very values the run had
 * (floats by their bits), and the journal of a loop of one action and two
 * messages grows by a few bytes an iteration.  Decoding trusts nothing:
 * every length is checked against what is left of the chunk and every
 * count against a bound, so a damaged journal is an error, never a crash.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "durable.h"

/* Bounds a decoded entry must keep (far above what a run makes). */
#define MAX_VALS (1 << 20)
#define MAX_META (1 << 20)

static void put_u8(zri_buf *b, uint8_t v) { zri_buf_add(b, (const char *)&v, 1); }

static void put_varint(zri_buf *b, uint64_t v)
{
    uint8_t tmp[10];
    int n = 0;
    do {
        tmp[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    zri_buf_add(b, (const char *)tmp, (size_t)n);
}

static uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static int64_t unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

static void put_bytes(zri_buf *b, const char *s, size_t n)
{
    put_varint(b, n);
    zri_buf_add(b, s, n);
}

static void put_value(zri_buf *b, const zgrt_value *v)
{
    put_u8(b, (uint8_t)v->tag);
    switch (v->tag) {
    case ZGRT_BOOL:
    case ZGRT_INT: put_varint(b, zigzag(v->u.i)); break;
    case ZGRT_ENUM: put_varint(b, (uint64_t)v->u.i); break;
    case ZGRT_FLOAT: {
        uint64_t bits;
        memcpy(&bits, &v->u.f, 8);
        uint8_t le[8];
        for (int i = 0; i < 8; i++) le[i] = (uint8_t)(bits >> (8 * i));
        zri_buf_add(b, (const char *)le, 8);
        break;
    }
    case ZGRT_STR:
        if (v->u.s)
            put_bytes(b, v->u.s->data, (size_t)v->u.s->len);
        else
            put_bytes(b, "", 0);
        break;
    case ZGRT_JSON: {
        char *text = v->u.j ? json_dumps(v->u.j, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
        if (v->u.j && !text) zri_oom();
        put_bytes(b, text ? text : "null", text ? strlen(text) : 4);
        free(text);
        break;
    }
    default: break; /* undef */
    }
}

void zrd_encode(zri_buf *b, const char *path, const zri_jentry *e)
{
    put_u8(b, (uint8_t)e->kind);
    const char *tp = e->kind == ZRI_J_TURN && e->path ? e->path : path;
    put_bytes(b, tp ? tp : "", tp ? strlen(tp) : 0);
    put_varint(b, (uint64_t)e->pos);
    switch (e->kind) {
    case ZRI_J_ACT:
        put_varint(b, (uint64_t)e->a);
        put_varint(b, (uint64_t)e->b);
        put_varint(b, (uint64_t)e->c);
        put_varint(b, (uint64_t)e->nvals);
        for (int32_t k = 0; k < e->nvals; k++) put_value(b, &e->vals[k]);
        put_bytes(b, e->raw ? e->raw : "", e->raw ? strlen(e->raw) : 0);
        break;
    case ZRI_J_PICK: put_varint(b, (uint64_t)e->a); break;
    case ZRI_J_CHOICE:
        put_varint(b, (uint64_t)e->a);
        put_u8(b, (uint8_t)(e->b != 0));
        break;
    case ZRI_J_READ:
    case ZRI_J_COMMIT:
        put_varint(b, (uint64_t)e->a);
        put_u8(b, (uint8_t)(e->b != 0));
        put_varint(b, zigzag(e->txn));
        put_varint(b, zigzag(e->ver));
        put_varint(b, (uint64_t)e->nvals);
        for (int32_t k = 0; k < e->nvals; k++) put_value(b, &e->vals[k]);
        break;
    case ZRI_J_MSG: {
        const zri_msg *m = e->msg;
        put_varint(b, (uint64_t)m->from);
        put_varint(b, (uint64_t)m->chan);
        put_varint(b, (uint64_t)m->kind);
        put_varint(b, (uint64_t)m->tag);
        put_varint(b, (uint64_t)m->value);
        put_varint(b, (uint64_t)m->seq);
        put_varint(b, (uint64_t)m->nvals);
        for (int32_t k = 0; k < m->nvals; k++) put_value(b, &m->vals[k]);
        int32_t nvc = m->has_meta ? m->nvc : 0, nv = m->has_meta ? m->nviews : 0,
                nvv = m->has_meta ? m->nvarviews : 0;
        put_varint(b, (uint64_t)m->has_meta);
        put_varint(b, (uint64_t)nvc);
        put_varint(b, (uint64_t)nv);
        put_varint(b, (uint64_t)nvv);
        for (int32_t k = 0; k < nvc; k++) put_varint(b, zigzag(m->vc[k]));
        if (nv) zri_buf_add(b, (const char *)m->views, (size_t)nv);
        for (int32_t k = 0; k < nvv; k++) put_value(b, &m->varviews[k]);
        break;
    }
    default: break; /* TURN: the path says it */
    }
}

/* ---- decoding ---------------------------------------------------------------- */

typedef struct rd {
    const uint8_t *p;
    size_t len, pos;
    int bad;
} rd;

static uint8_t get_u8(rd *r)
{
    if (r->pos >= r->len) {
        r->bad = 1;
        return 0;
    }
    return r->p[r->pos++];
}

static uint64_t get_varint(rd *r)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        uint8_t c = get_u8(r);
        if (r->bad) return 0;
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) return v;
    }
    r->bad = 1;
    return 0;
}

/* A count within [0, max]. */
static int32_t get_count(rd *r, int32_t max)
{
    uint64_t v = get_varint(r);
    if (v > (uint64_t)max) r->bad = 1;
    return r->bad ? 0 : (int32_t)v;
}

static const uint8_t *get_bytes(rd *r, size_t *n)
{
    uint64_t k = get_varint(r);
    if (r->bad || k > r->len - r->pos) {
        r->bad = 1;
        *n = 0;
        return NULL;
    }
    const uint8_t *s = r->p + r->pos;
    r->pos += (size_t)k;
    *n = (size_t)k;
    return s;
}

/* A value into out (made in h), or skipped when h is NULL. */
static void get_value(rd *r, zri_heap *h, zgrt_value *out)
{
    zgrt_value v;
    memset(&v, 0, sizeof v);
    v.tag = get_u8(r);
    switch (v.tag) {
    case ZGRT_UNDEF: break;
    case ZGRT_BOOL:
    case ZGRT_INT: v.u.i = unzigzag(get_varint(r)); break;
    case ZGRT_ENUM: v.u.i = (int64_t)get_varint(r); break;
    case ZGRT_FLOAT: {
        if (r->len - r->pos < 8) {
            r->bad = 1;
            break;
        }
        uint64_t bits = 0;
        for (int i = 0; i < 8; i++) bits |= (uint64_t)r->p[r->pos + (size_t)i] << (8 * i);
        r->pos += 8;
        memcpy(&v.u.f, &bits, 8);
        break;
    }
    case ZGRT_STR: {
        size_t n;
        const uint8_t *s = get_bytes(r, &n);
        if (h && s) v.u.s = zri_str(h, (const char *)s, n);
        break;
    }
    case ZGRT_JSON: {
        size_t n;
        const uint8_t *s = get_bytes(r, &n);
        if (h && s) {
            json_error_t je;
            json_t *j = json_loadb((const char *)s, n, JSON_DECODE_ANY, &je);
            if (!j) {
                r->bad = 1;
                break;
            }
            v.u.j = zri_json_keep(h, j);
            json_decref(j);
        }
        break;
    }
    default: r->bad = 1; break;
    }
    if (out) *out = v;
}

/* A message of an MSG entry, made when h is given (one malloc block). */
static zri_msg *get_msg(rd *r, zri_heap *h)
{
    int32_t from = get_count(r, INT32_MAX), chan = get_count(r, INT32_MAX), kind = get_count(r, 2),
            tag = get_count(r, INT32_MAX), value = get_count(r, 1);
    int64_t seq = (int64_t)get_varint(r);
    int32_t nvals = get_count(r, MAX_VALS);
    if (r->bad) return NULL;
    size_t at = r->pos;
    for (int32_t k = 0; k < nvals && !r->bad; k++) get_value(r, NULL, NULL);
    int32_t has_meta = get_count(r, ZRI_META_FULL), nvc = get_count(r, MAX_META),
            nv = get_count(r, MAX_META), nvv = get_count(r, MAX_META);
    if (r->bad) return NULL;
    zri_msg *m = NULL;
    if (h) {
        size_t sz = sizeof(zri_msg) + ((size_t)nvals + (size_t)nvv) * sizeof(zgrt_value) +
                    (size_t)nvc * sizeof(int64_t) + (size_t)nv;
        unsigned char *mem = zri_xcalloc(1, sz);
        m = (zri_msg *)mem;
        m->from = from;
        m->chan = chan;
        m->kind = kind;
        m->tag = tag;
        m->value = value;
        m->seq = seq;
        m->nvals = nvals;
        m->vals = (zgrt_value *)(mem + sizeof(zri_msg));
        m->varviews = m->vals + nvals;
        m->vc = (int64_t *)(void *)(m->varviews + nvv);
        m->views = (uint8_t *)(m->vc + nvc);
        m->has_meta = has_meta;
        m->nvc = nvc;
        m->nviews = nv;
        m->nvarviews = nvv;
        if (!nvals) m->vals = NULL;
        /* the values again, now made */
        size_t end = r->pos;
        r->pos = at;
        for (int32_t k = 0; k < nvals && !r->bad; k++) get_value(r, h, &m->vals[k]);
        r->pos = end;
    }
    for (int32_t k = 0; k < nvc && !r->bad; k++) {
        int64_t c = unzigzag(get_varint(r));
        if (m) m->vc[k] = c;
    }
    if (nv && !r->bad) {
        if (r->len - r->pos < (size_t)nv)
            r->bad = 1;
        else if (m)
            memcpy(m->views, r->p + r->pos, (size_t)nv);
        r->pos += r->bad ? 0 : (size_t)nv;
    }
    for (int32_t k = 0; k < nvv && !r->bad; k++) get_value(r, h, m ? &m->varviews[k] : NULL);
    if (r->bad) {
        free(m);
        return NULL;
    }
    return m;
}

int zrd_decode(const uint8_t *buf, size_t len, size_t *pos, const zgrt_program *p, zri_heap *h,
               zri_jentry *e, size_t *pathlen, zgrt_value **vals, int32_t *capvals)
{
    (void)p;
    rd r = {buf, len, *pos, 0};
    memset(e, 0, sizeof *e);
    e->kind = get_u8(&r);
    size_t pn;
    const uint8_t *path = get_bytes(&r, &pn);
    e->path = (const char *)path;
    if (pathlen) *pathlen = pn;
    e->pos = (int64_t)get_varint(&r);
    switch (e->kind) {
    case ZRI_J_ACT: {
        e->a = get_count(&r, INT32_MAX);
        e->b = get_count(&r, INT32_MAX);
        e->c = get_count(&r, INT32_MAX);
        e->nvals = get_count(&r, MAX_VALS);
        if (r.bad) break;
        if (h && e->nvals > *capvals) {
            *vals = zri_xrealloc(*vals, (size_t)e->nvals * sizeof **vals);
            *capvals = e->nvals;
        }
        for (int32_t k = 0; k < e->nvals && !r.bad; k++) get_value(&r, h, h ? &(*vals)[k] : NULL);
        e->vals = h ? *vals : NULL;
        size_t rn;
        get_bytes(&r, &rn); /* the raw answer: kept, not replayed */
        break;
    }
    case ZRI_J_PICK: e->a = get_count(&r, INT32_MAX); break;
    case ZRI_J_CHOICE:
        e->a = get_count(&r, INT32_MAX);
        e->b = get_u8(&r);
        if (e->b > 1) r.bad = 1;
        break;
    case ZRI_J_READ:
    case ZRI_J_COMMIT:
        e->a = get_count(&r, INT32_MAX);
        e->b = get_u8(&r);
        if (e->b > 1) r.bad = 1;
        e->txn = unzigzag(get_varint(&r));
        e->ver = unzigzag(get_varint(&r));
        e->nvals = get_count(&r, 1);
        if (r.bad) break;
        if (h && e->nvals > *capvals) {
            *vals = zri_xrealloc(*vals, (size_t)e->nvals * sizeof **vals);
            *capvals = e->nvals;
        }
        for (int32_t k = 0; k < e->nvals && !r.bad; k++) get_value(&r, h, h ? &(*vals)[k] : NULL);
        e->vals = h ? *vals : NULL;
        break;
    case ZRI_J_TURN: break;
    case ZRI_J_MSG: {
        zri_msg *m = get_msg(&r, h);
        e->msg = m;
        break;
    }
    default: r.bad = 1; break;
    }
    if (r.bad || e->pos <= 0) {
        if (e->kind == ZRI_J_MSG) free((void *)e->msg);
        e->msg = NULL;
        return -1;
    }
    *pos = r.pos;
    return 0;
}

void zrd_act_text(zri_buf *out, const zgrt_program *p, const uint8_t *buf, size_t len, size_t pos)
{
    rd r = {buf, len, pos, 0};
    if (get_u8(&r) != ZRI_J_ACT) return;
    size_t pn;
    get_bytes(&r, &pn);
    get_varint(&r);
    int32_t action = get_count(&r, INT32_MAX);
    get_varint(&r);
    get_varint(&r);
    int32_t n = get_count(&r, MAX_VALS);
    if (r.bad || action >= p->nactions) return;
    zri_buf_puts(out, "{\"action\":");
    zri_buf_json_string(out, p->actions[action].name, strlen(p->actions[action].name));
    zri_buf_puts(out, ",\"results\":[");
    for (int32_t k = 0; k < n && !r.bad; k++) {
        if (k) zri_buf_puts(out, ",");
        uint8_t tag = r.pos < r.len ? r.p[r.pos] : 0;
        if (tag == ZGRT_STR || tag == ZGRT_JSON) {
            get_u8(&r);
            size_t sn;
            const uint8_t *s = get_bytes(&r, &sn);
            if (!s) break;
            /* long texts are cut: this is a summary */
            size_t keep = sn > 200 ? 200 : sn;
            while (keep < sn && keep > 0 && (s[keep] & 0xc0) == 0x80) keep--;
            if (tag == ZGRT_STR || keep < sn)
                zri_buf_json_string(out, (const char *)s, keep);
            else
                zri_buf_add(out, (const char *)s, sn);
        } else {
            zgrt_value v;
            get_value(&r, NULL, &v);
            if (!r.bad) zri_buf_json_value(out, p, &v);
        }
    }
    zri_buf_puts(out, "]");
    size_t rn;
    const uint8_t *raw = get_bytes(&r, &rn);
    if (raw && rn) {
        size_t keep = rn > 200 ? 200 : rn;
        while (keep < rn && keep > 0 && (raw[keep] & 0xc0) == 0x80) keep--;
        zri_buf_puts(out, ",\"answer\":");
        zri_buf_json_string(out, (const char *)raw, keep);
    }
    zri_buf_puts(out, "}");
}
