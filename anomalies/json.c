/* json.c — one line of an operation history as a flat array of tokens.
 *
 * The reader's fast path.  jansson built a tree of heap nodes (and a hash
 * table per object) for every record: 85 % of `zgc anomalies` on 10^6
 * records (about 13 of 15.5 s) went there.  This parser writes the values
 * of a line into one reused array, in order (a value's children follow
 * it; `next` skips them), pointing into the line for strings without
 * escapes, so a record costs no allocation.
 *
 * It accepts a subset of what jansson (JSON_REJECT_DUPLICATES |
 * JSON_DECODE_ANY) accepts, never more: strict RFC 8259 syntax, UTF-8
 * checked as jansson checks it (no overlong forms, no surrogates, nothing
 * above U+10FFFF), no \u0000, no duplicate key in an object, integers of
 * at most 18 digits, reals that do not overflow, nesting below 2,048.
 * Whatever it refuses goes to jansson (zgan_json_from_jansson), which
 * either accepts it — a long integer, say — or gives the error message
 * the reader has always printed.  Reals, arrays and objects used as
 * values keep their text (or jansson node), which the reader turns into
 * jansson's canonical form (reader.c: get_value).
 */
#include "internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define MAX_DEPTH 2048

typedef struct {
    zgan_jdoc *d;
    const char *s, *end;
} parser;

static uint32_t new_tok(parser *p, uint8_t kind)
{
    zgan_jdoc *d = p->d;
    if (d->n >= d->cap) zgan_grow((void **)&d->t, &d->cap, d->n + 1, sizeof *d->t);
    zgan_jtok *t = &d->t[d->n];
    memset(t, 0, sizeof *t);
    t->kind = kind;
    return (uint32_t)d->n++;
}

static void skip_ws(parser *p)
{
    while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r'))
        p->s++;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int hex4(const char *s)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(s[i]);
        if (h < 0) return -1;
        v = v * 16 + h;
    }
    return v;
}

/* The length of the valid UTF-8 sequence at s (< end), or 0. */
static int utf8_len(const unsigned char *s, const unsigned char *end)
{
    unsigned c = s[0];
    int n;
    unsigned min;
    if (c < 0x80) return 1;
    if (c < 0xC2) return 0;
    if (c < 0xE0)
        n = 2, min = 0x80;
    else if (c < 0xF0)
        n = 3, min = 0x800;
    else if (c < 0xF5)
        n = 4, min = 0x10000;
    else
        return 0;
    if (end - s < n) return 0;
    unsigned v = c & (0x3F >> (n - 1));
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    return n;
}

static void put_utf8(zgan_jdoc *d, unsigned v)
{
    char b[4];
    int n;
    if (v < 0x80)
        b[0] = (char)v, n = 1;
    else if (v < 0x800)
        b[0] = (char)(0xC0 | v >> 6), b[1] = (char)(0x80 | (v & 0x3F)), n = 2;
    else if (v < 0x10000)
        b[0] = (char)(0xE0 | v >> 12), b[1] = (char)(0x80 | ((v >> 6) & 0x3F)),
        b[2] = (char)(0x80 | (v & 0x3F)), n = 3;
    else
        b[0] = (char)(0xF0 | v >> 18), b[1] = (char)(0x80 | ((v >> 12) & 0x3F)),
        b[2] = (char)(0x80 | ((v >> 6) & 0x3F)), b[3] = (char)(0x80 | (v & 0x3F)), n = 4;
    zgan_grow((void **)&d->buf, &d->capbuf, d->nbuf + (size_t)n, 1);
    memcpy(d->buf + d->nbuf, b, (size_t)n);
    d->nbuf += (size_t)n;
}

/* A string at p->s (on the quote). */
static int parse_string(parser *p)
{
    uint32_t k = new_tok(p, ZGAN_J_STRING);
    const char *s = ++p->s, *start = s;
    /* the common case: no escape, ASCII */
#ifdef __SSE2__
    /* 16 bytes at a time: a quote, a backslash, or a byte below 0x20 or
     * above 0x7f (negative as a signed byte) ends the plain run */
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'),
                  space = _mm_set1_epi8(0x20);
    while (p->end - s >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
        __m128i ends =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
                         _mm_cmplt_epi8(v, space));
        int mask = _mm_movemask_epi8(ends);
        if (mask) {
            s += __builtin_ctz((unsigned)mask);
            break;
        }
        s += 16;
    }
#endif
    while (s < p->end && *s != '"' && *s != '\\' && (unsigned char)*s >= 0x20 &&
           (unsigned char)*s < 0x80)
        s++;
    if (s < p->end && *s == '"') {
        zgan_jtok *t = &p->d->t[k];
        t->s = start;
        t->n = (uint32_t)(s - start);
        p->s = s + 1;
        return 0;
    }
    /* escapes or UTF-8: decoded into d->buf; the pointer is set when the
     * line is done (the buffer may move) */
    zgan_jdoc *d = p->d;
    size_t off = d->nbuf;
    /* (one byte more: the buffer exists even for an empty prefix) */
    zgan_grow((void **)&d->buf, &d->capbuf, d->nbuf + (size_t)(s - start) + 1, 1);
    memcpy(d->buf + d->nbuf, start, (size_t)(s - start));
    d->nbuf += (size_t)(s - start);
    while (s < p->end && *s != '"') {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20) return -1;
        if (c == '\\') {
            if (p->end - s < 2) return -1;
            char e = s[1];
            unsigned v;
            s += 2;
            switch (e) {
            case '"': v = '"'; break;
            case '\\': v = '\\'; break;
            case '/': v = '/'; break;
            case 'b': v = '\b'; break;
            case 'f': v = '\f'; break;
            case 'n': v = '\n'; break;
            case 'r': v = '\r'; break;
            case 't': v = '\t'; break;
            case 'u': {
                if (p->end - s < 4) return -1;
                int h = hex4(s);
                if (h < 0) return -1;
                s += 4;
                v = (unsigned)h;
                if (v >= 0xDC00 && v <= 0xDFFF) return -1;
                if (v >= 0xD800 && v <= 0xDBFF) {
                    if (p->end - s < 6 || s[0] != '\\' || s[1] != 'u') return -1;
                    int lo = hex4(s + 2);
                    if (lo < 0xDC00 || lo > 0xDFFF) return -1;
                    s += 6;
                    v = 0x10000 + ((v - 0xD800) << 10) + ((unsigned)lo - 0xDC00);
                }
                if (v == 0) return -1;
                break;
            }
            default: return -1;
            }
            put_utf8(d, v);
            continue;
        }
        int n = utf8_len((const unsigned char *)s, (const unsigned char *)p->end);
        if (n == 0) return -1;
        zgan_grow((void **)&d->buf, &d->capbuf, d->nbuf + (size_t)n, 1);
        memcpy(d->buf + d->nbuf, s, (size_t)n);
        d->nbuf += (size_t)n;
        s += n;
    }
    if (s >= p->end) return -1;
    zgan_jtok *t = &d->t[k];
    t->esc = 1;
    t->off = (uint32_t)off;
    t->n = (uint32_t)(d->nbuf - off);
    if (d->nbuf > UINT32_MAX) return -1;
    p->s = s + 1;
    return 0;
}

static int parse_number(parser *p)
{
    const char *s = p->s, *start = s;
    bool neg = false;
    if (*s == '-') neg = true, s++;
    if (s >= p->end || *s < '0' || *s > '9') return -1;
    if (*s == '0' && s + 1 < p->end && s[1] >= '0' && s[1] <= '9') return -1;
    const char *digits = s;
    int64_t v = 0; /* exact up to 18 digits; longer ones go to jansson */
    for (; s < p->end && *s >= '0' && *s <= '9'; s++)
        if (s - digits < 18) v = v * 10 + (*s - '0');
    bool real = false;
    if (s < p->end && *s == '.') {
        real = true;
        s++;
        if (s >= p->end || *s < '0' || *s > '9') return -1;
        while (s < p->end && *s >= '0' && *s <= '9') s++;
    }
    if (s < p->end && (*s == 'e' || *s == 'E')) {
        real = true;
        s++;
        if (s < p->end && (*s == '+' || *s == '-')) s++;
        if (s >= p->end || *s < '0' || *s > '9') return -1;
        while (s < p->end && *s >= '0' && *s <= '9') s++;
    }
    if (real) {
        /* jansson refuses a real that overflows */
        char buf[64];
        size_t n = (size_t)(s - start);
        if (n >= sizeof buf) return -1;
        memcpy(buf, start, n);
        buf[n] = 0;
        errno = 0;
        double d = strtod(buf, NULL);
        if (errno == ERANGE && isinf(d)) return -1;
        uint32_t k = new_tok(p, ZGAN_J_REAL);
        p->d->t[k].s = start;
        p->d->t[k].n = (uint32_t)n;
    } else {
        if (s - digits > 18) return -1; /* jansson decides (long long) */
        uint32_t k = new_tok(p, ZGAN_J_INT);
        p->d->t[k].i = neg ? -v : v;
    }
    p->s = s;
    return 0;
}

static int keycmp(const zgan_jtok *a, const zgan_jtok *b)
{
    if (a->n != b->n) return a->n < b->n ? -1 : 1;
    return memcmp(a->s, b->s, a->n);
}

/* (per thread: the reader parses parts of a file in parallel) */
static _Thread_local const zgan_jdoc *sort_doc;
static int cmp_keys(const void *x, const void *y)
{
    return keycmp(&sort_doc->t[*(const uint32_t *)x], &sort_doc->t[*(const uint32_t *)y]);
}

/* Resolves the pointers of decoded strings in tokens [from, d->n). */
static void resolve(zgan_jdoc *d, size_t from)
{
    for (size_t i = from; i < d->n; i++)
        if (d->t[i].esc) d->t[i].s = d->buf + d->t[i].off;
}

/* Whether the object at k has a key twice (compared decoded). */
static bool duplicate_keys(zgan_jdoc *d, uint32_t k)
{
    uint32_t n = d->t[k].n;
    if (n < 2) return false;
    resolve(d, k);
    uint32_t keys[16], *ks = n <= 16 ? keys : zgan_xmalloc(n * sizeof *ks);
    uint32_t i = k + 1;
    for (uint32_t m = 0; m < n; m++) {
        ks[m] = i;
        i = d->t[i + 1].next;
    }
    bool dup = false;
    if (n <= 16) {
        for (uint32_t a = 0; a < n && !dup; a++)
            for (uint32_t b = a + 1; b < n && !dup; b++)
                dup = keycmp(&d->t[ks[a]], &d->t[ks[b]]) == 0;
    } else {
        sort_doc = d;
        qsort(ks, n, sizeof *ks, cmp_keys);
        for (uint32_t a = 1; a < n && !dup; a++) dup = keycmp(&d->t[ks[a - 1]], &d->t[ks[a]]) == 0;
        free(ks);
    }
    return dup;
}

static int parse_value(parser *p, int depth)
{
    if (p->s >= p->end) return -1;
    char c = *p->s;
    zgan_jdoc *d = p->d;
    uint32_t k;
    switch (c) {
    case '"':
        if (parse_string(p) < 0) return -1;
        k = (uint32_t)d->n - 1;
        break;
    case '{':
    case '[': {
        if (depth >= MAX_DEPTH) return -1;
        bool obj = c == '{';
        k = new_tok(p, obj ? ZGAN_J_OBJECT : ZGAN_J_ARRAY);
        const char *start = p->s++;
        uint32_t n = 0;
        skip_ws(p);
        if (p->s < p->end && *p->s == (obj ? '}' : ']')) {
            p->s++;
        } else {
            for (;;) {
                skip_ws(p);
                if (obj) {
                    if (p->s >= p->end || *p->s != '"' || parse_string(p) < 0) return -1;
                    d->t[d->n - 1].next = (uint32_t)d->n;
                    skip_ws(p);
                    if (p->s >= p->end || *p->s != ':') return -1;
                    p->s++;
                    skip_ws(p);
                }
                if (parse_value(p, depth + 1) < 0) return -1;
                n++;
                skip_ws(p);
                if (p->s < p->end && *p->s == ',') {
                    p->s++;
                    continue;
                }
                if (p->s < p->end && *p->s == (obj ? '}' : ']')) {
                    p->s++;
                    break;
                }
                return -1;
            }
        }
        d->t[k].n = n;
        d->t[k].s = start;
        d->t[k].rawlen = (uint32_t)(p->s - start);
        d->t[k].next = (uint32_t)d->n;
        if (obj && duplicate_keys(d, k)) return -1;
        return 0;
    }
    case 't':
    case 'f':
    case 'n': {
        const char *w = c == 't' ? "true" : c == 'f' ? "false" : "null";
        size_t n = strlen(w);
        if ((size_t)(p->end - p->s) < n || memcmp(p->s, w, n)) return -1;
        k = new_tok(p, c == 't' ? ZGAN_J_TRUE : c == 'f' ? ZGAN_J_FALSE : ZGAN_J_NULL);
        p->s += n;
        break;
    }
    default:
        if (c != '-' && (c < '0' || c > '9')) return -1;
        if (parse_number(p) < 0) return -1;
        k = (uint32_t)d->n - 1;
        break;
    }
    d->t[k].next = (uint32_t)d->n;
    return 0;
}

int zgan_json_parse(zgan_jdoc *d, const char *s, size_t len)
{
    d->n = 0;
    d->nbuf = 0;
    if (d->root) {
        json_decref(d->root);
        d->root = NULL;
    }
    if (len >= UINT32_MAX) return -1;
    parser p = {d, s, s + len};
    skip_ws(&p);
    if (parse_value(&p, 0) < 0) return -1;
    skip_ws(&p);
    if (p.s != p.end) return -1;
    resolve(d, 0);
    return 0;
}

/* ---- the fallback: a tree jansson parsed, as tokens ---------------------------- */

static void from_node(zgan_jdoc *d, json_t *v)
{
    parser p = {d, NULL, NULL};
    uint32_t k;
    switch (json_typeof(v)) {
    case JSON_NULL: k = new_tok(&p, ZGAN_J_NULL); break;
    case JSON_TRUE: k = new_tok(&p, ZGAN_J_TRUE); break;
    case JSON_FALSE: k = new_tok(&p, ZGAN_J_FALSE); break;
    case JSON_INTEGER:
        k = new_tok(&p, ZGAN_J_INT);
        d->t[k].i = json_integer_value(v);
        break;
    case JSON_REAL:
        k = new_tok(&p, ZGAN_J_REAL);
        d->t[k].jv = v;
        break;
    case JSON_STRING:
        k = new_tok(&p, ZGAN_J_STRING);
        d->t[k].s = json_string_value(v);
        d->t[k].n = (uint32_t)json_string_length(v);
        break;
    case JSON_ARRAY: {
        k = new_tok(&p, ZGAN_J_ARRAY);
        d->t[k].jv = v;
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) from_node(d, e);
        d->t[k].n = (uint32_t)json_array_size(v);
        break;
    }
    default: { /* JSON_OBJECT */
        k = new_tok(&p, ZGAN_J_OBJECT);
        d->t[k].jv = v;
        const char *key;
        size_t klen;
        json_t *e;
        json_object_keylen_foreach(v, key, klen, e)
        {
            uint32_t kk = new_tok(&p, ZGAN_J_STRING);
            d->t[kk].s = key;
            d->t[kk].n = (uint32_t)klen;
            d->t[kk].next = (uint32_t)d->n;
            from_node(d, e);
        }
        d->t[k].n = (uint32_t)json_object_size(v);
        break;
    }
    }
    d->t[k].next = (uint32_t)d->n;
}

void zgan_json_from_jansson(zgan_jdoc *d, json_t *root)
{
    d->n = 0;
    d->nbuf = 0;
    if (d->root) json_decref(d->root);
    d->root = root; /* the strings point into it: kept until the next line */
    from_node(d, root);
}

uint32_t zgan_json_get(const zgan_jdoc *d, uint32_t obj, const char *key)
{
    const zgan_jtok *o = &d->t[obj];
    if (o->kind != ZGAN_J_OBJECT) return ZGAN_JNONE;
    size_t klen = strlen(key);
    uint32_t i = obj + 1;
    for (uint32_t m = 0; m < o->n; m++) {
        if (d->t[i].n == klen && !memcmp(d->t[i].s, key, klen)) return i + 1;
        i = d->t[i + 1].next;
    }
    return ZGAN_JNONE;
}

void zgan_json_free(zgan_jdoc *d)
{
    free(d->t);
    free(d->buf);
    if (d->root) json_decref(d->root);
    memset(d, 0, sizeof *d);
}
