/* values.c — workflow values; depends on nothing else of the runtime.
 *
 *   - allocation that never fails (zri_xmalloc, …; zri_oom);
 *   - the value heap: strings and JSON values that live until the end of
 *     the run (one heap per lifeline, plus one for the run's inputs and one
 *     for messages decoded from the network);
 *   - a growable text buffer and the JSON serialiser used for results, the
 *     trace and error messages; a float prints as Python's repr() does
 *     (zri_format_float: the shortest digits that read back to the same
 *     double, so 0.1 prints 0.1 where jansson would print 17 digits);
 *   - conversions between values and jansson / --arg text;
 *   - comparison, and the generated-code entry point zgrt_compare (the
 *     entry points that need a context are in builtins.c).
 *
 * Thread safety: a heap has its own mutex, so the branches of a parallel
 * region (several threads of one lifeline) may allocate in it at the same
 * time.  Values are immutable once made and may be read from any thread;
 * JSON values are never modified after creation and their reference counts
 * only change when a heap is freed at the end of the run.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

/* ---- memory ---------------------------------------------------------- */

static const char *self_name = "zgc";

void zri_set_name(const char *argv0)
{
    const char *given = getenv("ZGC_NAME");
    if (given && *given) argv0 = given;
    if (!argv0 || !*argv0) return;
    const char *slash = strrchr(argv0, '/');
    if (slash && slash[1])
        self_name = slash + 1;
    else if (!slash)
        self_name = argv0;
}

const char *zri_name(void) { return self_name; }

void zri_say_prefix(const char *kind) { fprintf(stderr, "%s: %s: ", self_name, kind); }

void zri_say(const char *kind, const char *fmt, ...)
{
    va_list ap;
    zri_say_prefix(kind);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

void zri_oom(void)
{
    zri_say("error", "out of memory\n");
    _Exit(1);
}

void *zri_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) zri_oom();
    return p;
}

void *zri_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) zri_oom();
    return p;
}

void *zri_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) zri_oom();
    return q;
}

char *zri_xstrndup(const char *s, size_t n)
{
    char *r = zri_xmalloc(n + 1);
    memcpy(r, s, n);
    r[n] = '\0';
    return r;
}

/* ---- the heap -------------------------------------------------------- */

typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    /* data follows, 8-byte aligned (the header is three words) */
} chunk;

#define CHUNK_SIZE ((size_t)16384)
#define CHUNK_DATA(c) ((unsigned char *)(c) + sizeof(chunk))

struct zri_heap {
    pthread_mutex_t mu;
    chunk *chunks;  /* head: the chunk being filled */
    json_t **jsons; /* references held until the end */
    size_t njsons, capjsons;
};

zri_heap *zri_heap_new(void)
{
    zri_heap *h = zri_xmalloc(sizeof *h);
    memset(h, 0, sizeof *h);
    pthread_mutex_init(&h->mu, NULL);
    return h;
}

void zri_heap_free(zri_heap *h)
{
    if (!h) return;
    for (chunk *c = h->chunks, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    for (size_t i = 0; i < h->njsons; i++) json_decref(h->jsons[i]);
    free(h->jsons);
    pthread_mutex_destroy(&h->mu);
    free(h);
}

static void *heap_alloc(zri_heap *h, size_t n)
{
    n = (n + 7) & ~(size_t)7;
    pthread_mutex_lock(&h->mu);
    void *p;
    if (n > CHUNK_SIZE / 4) {
        /* a block of its own, linked behind the chunk being filled */
        chunk *c = zri_xmalloc(sizeof(chunk) + n);
        c->used = c->cap = n;
        if (h->chunks) {
            c->next = h->chunks->next;
            h->chunks->next = c;
        } else {
            c->next = NULL;
            h->chunks = c;
        }
        p = CHUNK_DATA(c);
    } else {
        chunk *c = h->chunks;
        if (!c || c->cap - c->used < n) {
            c = zri_xmalloc(sizeof(chunk) + CHUNK_SIZE);
            c->used = 0;
            c->cap = CHUNK_SIZE;
            c->next = h->chunks;
            h->chunks = c;
        }
        p = CHUNK_DATA(c) + c->used;
        c->used += n;
    }
    pthread_mutex_unlock(&h->mu);
    return p;
}

/* A writable string of n bytes (plus the NUL) in h. */
zgrt_str *zri_str_new(zri_heap *h, size_t n)
{
    if (n > (size_t)INT64_MAX - sizeof(zgrt_str) - 16) zri_oom();
    zgrt_str *s = heap_alloc(h, sizeof(zgrt_str) + n + 1);
    s->len = (int64_t)n;
    s->data[n] = '\0';
    return s;
}

const zgrt_str *zri_str(zri_heap *h, const char *s, size_t n)
{
    zgrt_str *r = zri_str_new(h, n);
    if (n) memcpy(r->data, s, n);
    return r;
}

void *zri_json_keep(zri_heap *h, void *json)
{
    if (!json) return NULL;
    json_incref((json_t *)json);
    pthread_mutex_lock(&h->mu);
    if (h->njsons == h->capjsons) {
        h->capjsons = h->capjsons ? 2 * h->capjsons : 16;
        h->jsons = zri_xrealloc(h->jsons, h->capjsons * sizeof *h->jsons);
    }
    h->jsons[h->njsons++] = json;
    pthread_mutex_unlock(&h->mu);
    return json;
}

/* Keeps a json_t the caller owns (steals the caller's reference). */
static json_t *keep_owned(zri_heap *h, json_t *j)
{
    zri_json_keep(h, j);
    json_decref(j);
    return j;
}

zgrt_value zri_value_copy(zri_heap *h, const zgrt_value *v)
{
    zgrt_value r = *v;
    if (v->tag == ZGRT_STR && v->u.s) {
        r.u.s = zri_str(h, v->u.s->data, (size_t)v->u.s->len);
    } else if (v->tag == ZGRT_JSON && v->u.j) {
        json_t *c = json_deep_copy((json_t *)v->u.j);
        if (!c) zri_oom();
        r.u.j = keep_owned(h, c);
    }
    return r;
}

/* ---- comparison -------------------------------------------------------- */

static int str_cmp(const zgrt_str *a, const zgrt_str *b)
{
    int64_t n = a->len < b->len ? a->len : b->len;
    int c = n ? memcmp(a->data, b->data, (size_t)n) : 0;
    if (c) return c < 0 ? -1 : 1;
    return a->len < b->len ? -1 : a->len > b->len ? 1 : 0;
}

int32_t zgrt_compare(const zgrt_value *a, const zgrt_value *b)
{
    if (a->tag != b->tag) return a->tag < b->tag ? -1 : 1;
    switch (a->tag) {
    case ZGRT_UNDEF: return 0;
    case ZGRT_BOOL:
    case ZGRT_INT:
    case ZGRT_ENUM: return a->u.i < b->u.i ? -1 : a->u.i > b->u.i ? 1 : 0;
    case ZGRT_FLOAT: return a->u.f < b->u.f ? -1 : a->u.f > b->u.f ? 1 : 0;
    case ZGRT_STR: return str_cmp(a->u.s, b->u.s);
    case ZGRT_JSON: /* a NULL payload is JSON null (the literal `null` in generated code) */
        return json_equal(a->u.j ? (json_t *)a->u.j : json_null(),
                          b->u.j ? (json_t *)b->u.j : json_null())
                   ? 0
                   : 1;
    default: return 1;
    }
}

int zri_value_eq(const zgrt_value *a, const zgrt_value *b) { return zgrt_compare(a, b) == 0; }

int zri_value_check(const zgrt_program *p, const zgrt_value *v, zgrt_type t)
{
    if (v->tag != t.tag) return 0;
    switch (t.tag) {
    case ZGRT_BOOL: return v->u.i == 0 || v->u.i == 1;
    case ZGRT_INT: return 1;
    case ZGRT_FLOAT: return isfinite(v->u.f);
    case ZGRT_STR: return v->u.s != NULL;
    case ZGRT_JSON: return 1; /* a NULL payload is JSON null */
    case ZGRT_ENUM: {
        int64_t e = v->u.i >> 32, m = v->u.i & 0xffffffff;
        if (e != t.enum_id || !p || e < 0 || e >= p->nenums) return 0;
        return m < p->enums[e].nmembers;
    }
    default: return 0;
    }
}

const char *zri_type_name(const zgrt_program *p, zgrt_type t)
{
    switch (t.tag) {
    case ZGRT_BOOL: return "bool";
    case ZGRT_INT: return "int";
    case ZGRT_FLOAT: return "float";
    case ZGRT_STR: return "str";
    case ZGRT_JSON: return "json";
    case ZGRT_ENUM:
        if (p && t.enum_id >= 0 && t.enum_id < p->nenums) return p->enums[t.enum_id].name;
        return "enum";
    default: return "undefined";
    }
}

/* ---- UTF-8 ----------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x80) return 1;
    size_t len;
    unsigned min;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
        min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        min = 0x10000;
    } else {
        return 0;
    }
    if (n < len) return 0;
    unsigned cp = c & (0x7f >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return len;
}

int zri_utf8_valid(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t k = utf8_seq(u + i, n - i);
        if (!k) return 0;
        i += k;
    }
    return 1;
}

/* ---- text buffer and JSON serialisation --------------------------------- */

void zri_buf_add(zri_buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + n + 1) cap *= 2;
        b->data = zri_xrealloc(b->data, cap);
        b->cap = cap;
    }
    if (n) memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void zri_buf_puts(zri_buf *b, const char *s) { zri_buf_add(b, s, strlen(s)); }

void zri_buf_printf(zri_buf *b, const char *fmt, ...)
{
    char small[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof small) {
        zri_buf_add(b, small, (size_t)n);
        return;
    }
    char *big = zri_xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    zri_buf_add(b, big, (size_t)n);
    free(big);
}

void zri_buf_free(zri_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

char *zri_buf_take(zri_buf *b)
{
    if (!b->data) zri_buf_add(b, "", 0);
    char *s = b->data;
    b->data = NULL;
    b->len = b->cap = 0;
    return s;
}

/* The shortest decimal digits that read back to d (finite, > 0): the
 * digits, without trailing zeros, in dig (NUL-terminated); returns the
 * decimal exponent of the first (d ≈ d1.d2d3… × 10^exp).  For each count
 * of digits p = 1, 2, …, 17 the nearest p-digit decimal (printf rounds
 * correctly) is tried first; if it does not read back, its neighbour on
 * the other side of d may still do (when d is a power of two the doubles
 * below it are closer together than those above), and it is tried too.
 * The nearest 17 digits always read back. */
static int shortest_digits(double d, char dig[24])
{
    char buf[48];
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*e", p - 1, d);
        char *e = strchr(buf, 'e');
        int exp10 = atoi(e + 1);
        uint64_t m = 0;
        for (const char *c = buf; c < e; c++)
            if (*c != '.') m = m * 10 + (uint64_t)(*c - '0');
        /* m × 10^(exp10 - p + 1) is the nearest; then the two next to it */
        uint64_t cands[3] = {m, m + 1, m - 1};
        int cexp[3] = {exp10 - p + 1, exp10 - p + 1, exp10 - p + 1};
        uint64_t low = 1; /* 10^(p-1): the smallest p-digit mantissa */
        for (int i = 1; i < p; i++) low *= 10;
        if (m == low) { /* below 10^exp10 the grid is ten times finer */
            cands[2] = low * 10 - 1;
            cexp[2] -= 1;
        }
        for (int k = 0; k < 3; k++) {
            if (cands[k] == 0) continue;
            char t[48];
            snprintf(t, sizeof t, "%" PRIu64 "e%d", cands[k], cexp[k]);
            if (p < 17 && strtod(t, NULL) != d) continue;
            int n = snprintf(dig, 24, "%" PRIu64, cands[k]);
            int x = cexp[k] + n - 1;
            while (n > 1 && dig[n - 1] == '0') dig[--n] = '\0';
            return x;
        }
    }
    return 0; /* not reached: p == 17 returns */
}

void zri_format_float(double d, char out[32])
{
    if (!isfinite(d)) {
        snprintf(out, 32, "%s", isnan(d) ? "nan" : d > 0 ? "inf" : "-inf");
        return;
    }
    char *o = out;
    if (signbit(d)) *o++ = '-';
    d = fabs(d);
    if (d == 0) {
        strcpy(o, "0.0");
        return;
    }
    char dig[24];
    int x = shortest_digits(d, dig), n = (int)strlen(dig);
    if (x < -4 || x >= 16) { /* 1e-05, 1.5e+300 */
        *o++ = dig[0];
        if (n > 1) {
            *o++ = '.';
            memcpy(o, dig + 1, (size_t)n - 1);
            o += n - 1;
        }
        int ax = x < 0 ? -x : x; /* at most 324 */
        *o++ = 'e';
        *o++ = x < 0 ? '-' : '+';
        if (ax >= 100) *o++ = (char)('0' + ax / 100);
        *o++ = (char)('0' + ax / 10 % 10);
        *o++ = (char)('0' + ax % 10);
        *o = '\0';
    } else if (x < 0) { /* 0.00015 */
        memcpy(o, "0.000", (size_t)(1 - x));
        o += 1 - x;
        memcpy(o, dig, (size_t)n + 1);
    } else if (n <= x + 1) { /* 1500.0 */
        memcpy(o, dig, (size_t)n);
        o += n;
        memset(o, '0', (size_t)(x + 1 - n));
        o += x + 1 - n;
        strcpy(o, ".0");
    } else { /* 15.25 */
        memcpy(o, dig, (size_t)x + 1);
        o += x + 1;
        *o++ = '.';
        memcpy(o, dig + x + 1, (size_t)(n - x - 1) + 1);
    }
}

void zri_buf_json_string(zri_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *u = (const unsigned char *)s;
    zri_buf_add(b, "\"", 1);
    size_t run = 0; /* start of the pending run of bytes copied verbatim */
    for (size_t i = 0; i < n;) {
        unsigned c = u[i];
        const char *esc = NULL;
        char ubuf[7];
        size_t k = 1;
        if (c == '"')
            esc = "\\\"";
        else if (c == '\\')
            esc = "\\\\";
        else if (c == '\n')
            esc = "\\n";
        else if (c == '\t')
            esc = "\\t";
        else if (c == '\r')
            esc = "\\r";
        else if (c == '\b')
            esc = "\\b";
        else if (c == '\f')
            esc = "\\f";
        else if (c < 0x20) {
            memcpy(ubuf, "\\u00", 4);
            ubuf[4] = hex[c >> 4];
            ubuf[5] = hex[c & 15];
            ubuf[6] = '\0';
            esc = ubuf;
        } else if (c >= 0x80) {
            k = utf8_seq(u + i, n - i);
            if (!k) {
                esc = "\\ufffd"; /* not UTF-8: the replacement character */
                k = 1;
            }
        }
        if (esc) {
            zri_buf_add(b, s + run, i - run);
            zri_buf_puts(b, esc);
            run = i + k;
        }
        i += k;
    }
    zri_buf_add(b, s + run, n - run);
    zri_buf_add(b, "\"", 1);
}

void zri_buf_jansson(zri_buf *b, const void *json, int spaced)
{
    const json_t *j = json;
    char num[32];
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        const char *key;
        json_t *val;
        int first = 1;
        zri_buf_add(b, "{", 1);
        /* jansson keeps insertion order */
        json_object_foreach((json_t *)j, key, val)
        {
            if (!first) zri_buf_puts(b, spaced ? ", " : ",");
            first = 0;
            zri_buf_json_string(b, key, strlen(key));
            zri_buf_puts(b, spaced ? ": " : ":");
            zri_buf_jansson(b, val, spaced);
        }
        zri_buf_add(b, "}", 1);
        break;
    }
    case JSON_ARRAY:
        zri_buf_add(b, "[", 1);
        for (size_t i = 0; i < json_array_size(j); i++) {
            if (i) zri_buf_puts(b, spaced ? ", " : ",");
            zri_buf_jansson(b, json_array_get(j, i), spaced);
        }
        zri_buf_add(b, "]", 1);
        break;
    case JSON_STRING: zri_buf_json_string(b, json_string_value(j), json_string_length(j)); break;
    case JSON_INTEGER: zri_buf_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(j)); break;
    case JSON_REAL:
        if (isfinite(json_real_value(j))) {
            zri_format_float(json_real_value(j), num);
            zri_buf_puts(b, num);
        } else {
            zri_buf_puts(b, "null");
        }
        break;
    case JSON_TRUE: zri_buf_puts(b, "true"); break;
    case JSON_FALSE: zri_buf_puts(b, "false"); break;
    default: zri_buf_puts(b, "null"); break;
    }
}

const char *zri_enum_member(const zgrt_program *p, int64_t payload)
{
    int64_t e = payload >> 32, m = payload & 0xffffffff;
    if (!p || e < 0 || e >= p->nenums || m >= p->enums[e].nmembers) return NULL;
    return p->enums[e].members[m];
}

static void buf_value(zri_buf *b, const zgrt_program *p, const zgrt_value *v, int spaced)
{
    char num[32];
    switch (v->tag) {
    case ZGRT_BOOL: zri_buf_puts(b, v->u.i ? "true" : "false"); break;
    case ZGRT_INT: zri_buf_printf(b, "%" PRId64, v->u.i); break;
    case ZGRT_FLOAT:
        if (isfinite(v->u.f)) {
            zri_format_float(v->u.f, num);
            zri_buf_puts(b, num);
        } else {
            zri_buf_puts(b, "null");
        }
        break;
    case ZGRT_STR:
        if (v->u.s)
            zri_buf_json_string(b, v->u.s->data, (size_t)v->u.s->len);
        else
            zri_buf_puts(b, "null");
        break;
    case ZGRT_JSON:
        if (v->u.j)
            zri_buf_jansson(b, v->u.j, spaced);
        else
            zri_buf_puts(b, "null");
        break;
    case ZGRT_ENUM: {
        const char *m = zri_enum_member(p, v->u.i);
        if (m)
            zri_buf_json_string(b, m, strlen(m));
        else
            zri_buf_printf(b, "%" PRId64, v->u.i & 0xffffffff);
        break;
    }
    default: zri_buf_puts(b, "null"); break;
    }
}

void zri_buf_json_value(zri_buf *b, const zgrt_program *p, const zgrt_value *v)
{
    buf_value(b, p, v, 0);
}

void zri_buf_json_result(zri_buf *b, const zgrt_program *p, const zgrt_value *v)
{
    buf_value(b, p, v, 1);
}

char *zri_value_to_json(const zgrt_program *p, const zgrt_value *v, zgrt_type t)
{
    (void)t; /* a value names its own type (enums carry their enum index) */
    zri_buf b = {0};
    zri_buf_json_value(&b, p, v);
    return zri_buf_take(&b);
}

void *zri_value_to_jansson(const zgrt_program *p, const zgrt_value *v, zgrt_type t)
{
    (void)t;
    json_t *j = NULL;
    switch (v->tag) {
    case ZGRT_BOOL: j = json_boolean(v->u.i); break;
    case ZGRT_INT: j = json_integer(v->u.i); break;
    case ZGRT_FLOAT: j = isfinite(v->u.f) ? json_real(v->u.f) : json_null(); break;
    case ZGRT_STR:
        if (!v->u.s) {
            j = json_null();
            break;
        }
        j = json_stringn(v->u.s->data, (size_t)v->u.s->len);
        if (!j) {
            /* not UTF-8: go through the serialiser, which replaces bad bytes */
            zri_buf b = {0};
            zri_buf_json_string(&b, v->u.s->data, (size_t)v->u.s->len);
            j = json_loads(b.data, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
            zri_buf_free(&b);
        }
        break;
    case ZGRT_JSON: j = v->u.j ? json_deep_copy(v->u.j) : json_null(); break;
    case ZGRT_ENUM: {
        const char *m = zri_enum_member(p, v->u.i);
        j = m ? json_string(m) : json_integer(v->u.i & 0xffffffff);
        break;
    }
    default: j = json_null(); break;
    }
    if (!j) zri_oom();
    return j;
}

/* ---- parsing ------------------------------------------------------------ */

void zri_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* A short rendering of bad input for messages: JSON text, cut at 60 bytes. */
void zri_quote_short(char *out, size_t outlen, const char *s, size_t n)
{
    zri_buf b = {0};
    zri_buf_json_string(&b, s, n > 60 ? 60 : n);
    if (n > 60) {
        b.len--; /* drop the closing quote */
        zri_buf_puts(&b, "...\"");
    }
    snprintf(out, outlen, "%s", b.data);
    zri_buf_free(&b);
}

/* Whole string a decimal integer: [+-]digits. */
int zri_parse_int(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    int neg = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    if (i == n) return -1;
    uint64_t acc = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        unsigned d = (unsigned)(s[i] - '0');
        if (acc > (lim - d) / 10) return -2;
        acc = acc * 10 + d;
    }
    *out = neg ? (acc == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)acc) : (int64_t)acc;
    return 0;
}

/* Whole string a decimal number: [+-]digits[.digits][(e|E)[+-]digits], or
 * [+-].digits…; finite. */
int zri_parse_float(const char *s, size_t n, double *out)
{
    size_t i = 0, digits = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) i++;
    while (i < n && s[i] >= '0' && s[i] <= '9') i++, digits++;
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9') i++, digits++;
    }
    if (!digits) return -1;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) i++;
        size_t ed = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9') i++, ed++;
        if (!ed) return -1;
    }
    if (i != n) return -1;
    char small[64], *buf = n < sizeof small ? small : zri_xmalloc(n + 1);
    memcpy(buf, s, n);
    buf[n] = '\0';
    errno = 0;
    double d = strtod(buf, NULL);
    if (buf != small) free(buf);
    if (!isfinite(d)) return -2;
    *out = d;
    return 0;
}

static int enum_lookup(const zgrt_program *p, int32_t e, const char *s, size_t n)
{
    if (!p || e < 0 || e >= p->nenums) return -1;
    const zgrt_enum *en = &p->enums[e];
    size_t nl = strlen(en->name);
    /* "member" or "Enum.member" */
    if (n > nl + 1 && memcmp(s, en->name, nl) == 0 && s[nl] == '.') {
        s += nl + 1;
        n -= nl + 1;
    }
    for (int32_t m = 0; m < en->nmembers; m++)
        if (strlen(en->members[m]) == n && memcmp(en->members[m], s, n) == 0) return m;
    return -1;
}

static void enum_members_text(const zgrt_program *p, int32_t e, char *out, size_t outlen)
{
    size_t k = 0;
    out[0] = '\0';
    if (!p || e < 0 || e >= p->nenums) return;
    for (int32_t m = 0; m < p->enums[e].nmembers && k + 1 < outlen; m++) {
        int w = snprintf(out + k, outlen - k, "%s%s", m ? ", " : "", p->enums[e].members[m]);
        if (w < 0) break;
        k += (size_t)w;
    }
}

int zri_value_from_text(const zgrt_program *p, zri_heap *h, const char *text, zgrt_type t,
                        zgrt_value *out, char *err, size_t errlen)
{
    size_t n = strlen(text);
    char q[96];
    memset(out, 0, sizeof *out);
    switch (t.tag) {
    case ZGRT_STR:
        if (!zri_utf8_valid(text, n)) {
            zri_err(err, errlen, "expected str, got text that is not UTF-8");
            return -1;
        }
        out->tag = ZGRT_STR;
        out->u.s = zri_str(h, text, n);
        return 0;
    case ZGRT_JSON: {
        json_error_t je;
        json_t *j = json_loadb(text, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
        if (!j) {
            zri_err(err, errlen, "expected json, got invalid JSON (%s at position %d)", je.text,
                    je.position);
            return -1;
        }
        out->tag = ZGRT_JSON;
        out->u.j = keep_owned(h, j);
        return 0;
    }
    case ZGRT_BOOL:
        if (strcmp(text, "true") == 0 || strcmp(text, "false") == 0) {
            out->tag = ZGRT_BOOL;
            out->u.i = text[0] == 't';
            return 0;
        }
        zri_quote_short(q, sizeof q, text, n);
        zri_err(err, errlen, "expected bool (true or false), got %s", q);
        return -1;
    case ZGRT_INT: {
        int64_t v;
        int r = zri_parse_int(text, n, &v);
        if (r == 0) {
            out->tag = ZGRT_INT;
            out->u.i = v;
            return 0;
        }
        zri_quote_short(q, sizeof q, text, n);
        zri_err(err, errlen, r == -2 ? "int out of range: %s" : "expected int, got %s", q);
        return -1;
    }
    case ZGRT_FLOAT: {
        double d;
        int r = zri_parse_float(text, n, &d);
        if (r == 0) {
            out->tag = ZGRT_FLOAT;
            out->u.f = d;
            return 0;
        }
        zri_quote_short(q, sizeof q, text, n);
        zri_err(err, errlen, r == -2 ? "float out of range: %s" : "expected float, got %s", q);
        return -1;
    }
    case ZGRT_ENUM: {
        int m = enum_lookup(p, t.enum_id, text, n);
        if (m >= 0) {
            out->tag = ZGRT_ENUM;
            out->u.i = ((int64_t)t.enum_id << 32) | m;
            return 0;
        }
        char members[256];
        enum_members_text(p, t.enum_id, members, sizeof members);
        zri_quote_short(q, sizeof q, text, n);
        zri_err(err, errlen, "expected a member of %s (%s), got %s", zri_type_name(p, t), members,
                q);
        return -1;
    }
    default: zri_err(err, errlen, "values of this type cannot be given"); return -1;
    }
}

int zri_value_from_jansson(const zgrt_program *p, zri_heap *h, void *json, zgrt_type t,
                           zgrt_value *out, char *err, size_t errlen)
{
    json_t *j = json;
    memset(out, 0, sizeof *out);
    if (!j) {
        zri_err(err, errlen, "expected %s, got nothing", zri_type_name(p, t));
        return -1;
    }
    switch (t.tag) {
    case ZGRT_BOOL:
        if (json_is_boolean(j)) {
            out->tag = ZGRT_BOOL;
            out->u.i = json_is_true(j);
            return 0;
        }
        break;
    case ZGRT_INT:
        if (json_is_integer(j)) {
            out->tag = ZGRT_INT;
            out->u.i = json_integer_value(j);
            return 0;
        }
        if (json_is_real(j)) {
            /* an integral real such as 3.0 */
            double d = json_real_value(j);
            if (d == trunc(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0) {
                out->tag = ZGRT_INT;
                out->u.i = (int64_t)d;
                return 0;
            }
        }
        break;
    case ZGRT_FLOAT:
        if (json_is_number(j) && isfinite(json_number_value(j))) {
            out->tag = ZGRT_FLOAT;
            out->u.f = json_number_value(j);
            return 0;
        }
        break;
    case ZGRT_STR:
        if (json_is_string(j)) {
            out->tag = ZGRT_STR;
            out->u.s = zri_str(h, json_string_value(j), json_string_length(j));
            return 0;
        }
        break;
    case ZGRT_JSON: {
        json_t *c = json_deep_copy(j);
        if (!c) zri_oom();
        out->tag = ZGRT_JSON;
        out->u.j = keep_owned(h, c);
        return 0;
    }
    case ZGRT_ENUM:
        if (json_is_string(j)) {
            int m = enum_lookup(p, t.enum_id, json_string_value(j), json_string_length(j));
            if (m >= 0) {
                out->tag = ZGRT_ENUM;
                out->u.i = ((int64_t)t.enum_id << 32) | m;
                return 0;
            }
        }
        break;
    default: break;
    }
    zri_buf b = {0};
    zri_buf_jansson(&b, j, 0);
    if (b.len > 60) {
        b.len = 57;
        zri_buf_puts(&b, "...");
    }
    if (t.tag == ZGRT_ENUM) {
        char members[256];
        enum_members_text(p, t.enum_id, members, sizeof members);
        zri_err(err, errlen, "expected a member of %s (%s), got %s", zri_type_name(p, t), members,
                b.data);
    } else {
        zri_err(err, errlen, "expected %s, got %s", zri_type_name(p, t), b.data);
    }
    zri_buf_free(&b);
    return -1;
}
