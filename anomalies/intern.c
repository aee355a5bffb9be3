/* intern.c — dense ids for cells, values, agents, tools and txn ids.
 *
 * An id stands for a text: a JSON string for its contents, an integer for
 * its decimal digits, any other JSON value for its compact serialization.
 * So 1 and "1" are the same id; the first occurrence decides how the id is
 * printed.  Id 0 (ZGAN_NULL) is the null value, whose text is "NULL". */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* FNV-1a, folded to 32 bits: a slot keeps it, which both places the
 * slot (its low bits) and screens out other texts before they are compared
 * (all of it), and lets the table grow without reading a text again. */
static uint32_t hash_text(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    h ^= h >> 29;
    return (uint32_t)(h ^ (h >> 32));
}

static bool same_text(const zgan_intern *t, uint32_t id, const char *s, size_t len)
{
    const zgan_entry *e = &t->entries[id];
    return e->len == len && memcmp(t->chars + e->off, s, len) == 0;
}

static void rehash(zgan_intern *t, size_t nslots)
{
    zgan_slot *old = t->slots;
    size_t nold = t->nslots;
    t->slots = zgan_xmalloc(nslots * sizeof *t->slots);
    for (size_t i = 0; i < nslots; i++) t->slots[i] = (zgan_slot){ZGAN_NONE, 0};
    t->nslots = nslots;
    for (size_t k = 0; k < nold; k++) {
        if (old[k].id == ZGAN_NONE) continue;
        size_t i = old[k].hash & (nslots - 1);
        while (t->slots[i].id != ZGAN_NONE) i = (i + 1) & (nslots - 1);
        t->slots[i] = old[k];
    }
    free(old);
}

void zgan_intern_init(zgan_intern *t)
{
    memset(t, 0, sizeof *t);
    rehash(t, 64);
    zgan_intern_add(t, "NULL", 4, ZGAN_TEXT_NULL);
}

void zgan_intern_free(zgan_intern *t)
{
    free(t->small);
    free(t->chars);
    free(t->entries);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

/* The slot holding `text`, or the empty slot where it would go. */
static size_t find_slot(const zgan_intern *t, const char *text, size_t len, uint32_t hash)
{
    size_t i = hash & (t->nslots - 1);
    while (t->slots[i].id != ZGAN_NONE &&
           !(t->slots[i].hash == hash && same_text(t, t->slots[i].id, text, len)))
        i = (i + 1) & (t->nslots - 1);
    return i;
}

uint32_t zgan_intern_find(const zgan_intern *t, const char *text, size_t len)
{
    return t->slots[find_slot(t, text, len, hash_text(text, len))].id;
}

uint32_t zgan_intern_add(zgan_intern *t, const char *text, size_t len, zgan_text_kind kind)
{
    uint32_t hash = hash_text(text, len);
    size_t i = find_slot(t, text, len, hash);
    if (t->slots[i].id != ZGAN_NONE) return t->slots[i].id;
    if (t->n >= (size_t)UINT32_MAX - 1 || len >= UINT32_MAX) return ZGAN_NONE;
    if (2 * (t->n + 1) > t->nslots) {
        rehash(t, 2 * t->nslots);
        i = find_slot(t, text, len, hash);
    }
    zgan_grow((void **)&t->chars, &t->capchars, t->nchars + len + 1, 1);
    memcpy(t->chars + t->nchars, text, len);
    t->chars[t->nchars + len] = '\0';
    zgan_grow((void **)&t->entries, &t->cap, t->n + 1, sizeof *t->entries);
    uint32_t id = (uint32_t)t->n++;
    t->entries[id] = (zgan_entry){.off = t->nchars, .len = (uint32_t)len, .kind = (uint8_t)kind};
    t->nchars += len + 1;
    t->slots[i] = (zgan_slot){id, hash};
    return id;
}

void zgan_intern_reserve(zgan_intern *t, size_t n, size_t nchars)
{
    size_t nslots = t->nslots;
    while (nslots < 2 * (t->n + n)) nslots *= 2;
    if (nslots > t->nslots) rehash(t, nslots);
    zgan_grow((void **)&t->entries, &t->cap, t->n + n, sizeof *t->entries);
    zgan_grow((void **)&t->chars, &t->capchars, t->nchars + nchars, 1);
}

uint32_t zgan_intern_int(zgan_intern *t, int64_t v)
{
    if (v >= 0 && (uint64_t)v < t->nsmall && t->small[v] != ZGAN_NONE) return t->small[v];
    /* decimal digits, as "%" PRId64 writes them */
    char buf[24], *e = buf + sizeof buf, *p = e;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do *--p = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0) *--p = '-';
    uint32_t id = zgan_intern_add(t, p, (size_t)(e - p), ZGAN_TEXT_INT);
    /* remembered for integers up to a few times the number of ids (txn
     * ids, record numbers): the array stays in proportion to the table */
    if (id != ZGAN_NONE && v >= 0 && (uint64_t)v < 4 * (uint64_t)t->n + 65536) {
        if ((uint64_t)v >= t->nsmall) {
            size_t old = t->nsmall, n = old ? old : 1024;
            while (n <= (uint64_t)v) n *= 2;
            t->small = zgan_xrealloc(t->small, n * sizeof *t->small);
            memset(t->small + old, 0xff, (n - old) * sizeof *t->small); /* ZGAN_NONE */
            t->nsmall = n;
        }
        t->small[v] = id;
    }
    return id;
}

const char *zgan_intern_text(const zgan_intern *t, uint32_t id)
{
    return t->chars + t->entries[id].off;
}

json_t *zgan_intern_json(const zgan_intern *t, uint32_t id)
{
    const zgan_entry *e = &t->entries[id];
    const char *s = t->chars + e->off;
    json_t *j = NULL;
    switch (e->kind) {
    case ZGAN_TEXT_NULL: return json_null();
    case ZGAN_TEXT_INT: return json_integer(strtoll(s, NULL, 10));
    case ZGAN_TEXT_JSON: j = json_loadb(s, e->len, JSON_DECODE_ANY, NULL); break;
    default: break;
    }
    return j ? j : json_stringn(s, e->len);
}

/* A string as jansson writes it (JSON_ENCODE_ANY, no ensure-ASCII): the
 * quote, the backslash and the control characters escaped, the rest (valid
 * UTF-8: the reader takes nothing else) as is. */
static void put_string(const char *s, size_t len, FILE *f)
{
    putc('"', f);
    size_t run = 0; /* bytes s[run..i) not yet written */
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        fwrite(s + run, 1, i - run, f);
        run = i + 1;
        switch (c) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\b': fputs("\\b", f); break;
        case '\f': fputs("\\f", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default: fprintf(f, "\\u%04X", c); break;
        }
    }
    fwrite(s + run, 1, len - run, f);
    putc('"', f);
}

static void put_indent(int depth, FILE *f)
{
    putc('\n', f);
    for (int i = 0; i < depth; i++) fputs("  ", f);
}

/* Compact JSON text (jansson's, of an array or object) as jansson's
 * JSON_INDENT(2) writes the value at `depth`: a member or element on a
 * line of its own, "key": value, [] and {} when empty. */
static void put_indented(const char *s, int depth, FILE *f)
{
    bool str = false;
    for (; *s; s++) {
        char c = *s;
        if (str) {
            putc(c, f);
            if (c == '\\' && s[1])
                putc(*++s, f);
            else if (c == '"')
                str = false;
            continue;
        }
        switch (c) {
        case '"':
            str = true;
            putc(c, f);
            break;
        case '[':
        case '{':
            putc(c, f);
            if (s[1] == (c == '[' ? ']' : '}'))
                putc(*++s, f);
            else
                put_indent(++depth, f);
            break;
        case ']':
        case '}':
            put_indent(--depth, f);
            putc(c, f);
            break;
        case ',':
            putc(c, f);
            put_indent(depth, f);
            break;
        case ':': fputs(": ", f); break;
        default: putc(c, f); break;
        }
    }
}

void zgan_intern_write(const zgan_intern *t, uint32_t id, int depth, FILE *f)
{
    const zgan_entry *e = &t->entries[id];
    const char *s = t->chars + e->off;
    switch (e->kind) {
    case ZGAN_TEXT_NULL: fputs("null", f); break;
    case ZGAN_TEXT_INT: fputs(s, f); break;
    case ZGAN_TEXT_JSON:
        if (depth >= 0 && (s[0] == '[' || s[0] == '{'))
            put_indented(s, depth, f);
        else
            fputs(s, f);
        break;
    default: put_string(s, e->len, f); break;
    }
}

void zgan_intern_print(const zgan_intern *t, uint32_t id, FILE *f)
{
    zgan_intern_write(t, id, -1, f);
}
