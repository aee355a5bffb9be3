/* reader.c — JSON Lines operation histories.
 *
 * One record per line; blank (all-whitespace) lines are skipped.  Every
 * key is optional; unknown keys are ignored.  Types:
 *
 *   agent, planned_tool          string | integer | null | "NULL"
 *   txn                          string | integer
 *   read_set, write_set, preds   array of string | integer
 *   read_registry, write_registry, tools_visible_at_read, tools_used
 *                                array of string | integer | null
 *   read_values, write_values    object {cell: value} or array of [cell, value]
 *   io, co                       array of [cell, value]
 *   read_time, write_time        integer | null
 *   aborted                      boolean | null
 *
 * Values are any JSON; null and "NULL" are the null value.  Sets are read
 * as sets (first occurrence kept); a read or written cell without an entry
 * in the value map has the null value.  When write_values is absent the
 * values come from co; when read_set / write_set is absent the cells of
 * the value map (or of co) are the set.  Any other shape is an error
 * "NAME:LINE: error: ...".
 *
 * A line is read by the parser of json.c into reused tokens; a line it
 * does not take goes to jansson, whose message an invalid line gets
 * ("invalid JSON: …"), and whose tree is read the same way otherwise. */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A map from interned id to something, valid for one "generation". */
typedef struct {
    uint32_t *stamp;
    uint32_t *val;
    size_t cap;
    uint32_t cur;
} scratch;

typedef struct {
    zgan_history *h;
    char *err;
    size_t errlen;
    uint32_t line;
    scratch seen;    /* dedupe of set elements */
    scratch map;     /* cell -> value of the value map being read */
    uint32_t *order; /* cells of that map in first-occurrence order */
    size_t norder, caporder;
    bool any_txn;
    zgan_jdoc doc;      /* the current line */
    uint32_t field[17]; /* its record's members (find_fields) */
} builder;

#define TOK(b, i) (&(b)->doc.t[i])
/* The keys of a record.  parse_record finds them all in one pass over
 * the record's members (field); the helpers below name a key by one of
 * these arrays, which field() finds by address. */
enum {
    K_AGENT,
    K_PLANNED_TOOL,
    K_TXN,
    K_ABORTED,
    K_READ_TIME,
    K_WRITE_TIME,
    K_READ_VALUES,
    K_READ_SET,
    K_IO,
    K_CO,
    K_WRITE_VALUES,
    K_WRITE_SET,
    K_READ_REGISTRY,
    K_TOOLS_VISIBLE_AT_READ,
    K_WRITE_REGISTRY,
    K_TOOLS_USED,
    K_PREDS,
};
enum { NKEYS = 17 };
_Static_assert(sizeof((builder *)0)->field / sizeof(uint32_t) == NKEYS, "builder.field");
static const char *const keys[NKEYS] = {"agent",
                                        "planned_tool",
                                        "txn",
                                        "aborted",
                                        "read_time",
                                        "write_time",
                                        "read_values",
                                        "read_set",
                                        "io",
                                        "co",
                                        "write_values",
                                        "write_set",
                                        "read_registry",
                                        "tools_visible_at_read",
                                        "write_registry",
                                        "tools_used",
                                        "preds"};

/* The value of key k (an element of keys) of the current record, or
 * ZGAN_JNONE. */
static uint32_t field(const builder *b, const char *k)
{
    for (int i = 0; i < NKEYS; i++)
        if (keys[i] == k) return b->field[i];
    return ZGAN_JNONE;
}

/* Their lengths (strlen of every key for every member was 3 % of a large
 * history's reading). */
#define L(s) (sizeof s - 1)
static const uint8_t keylen[NKEYS] = {L("agent"),
                                      L("planned_tool"),
                                      L("txn"),
                                      L("aborted"),
                                      L("read_time"),
                                      L("write_time"),
                                      L("read_values"),
                                      L("read_set"),
                                      L("io"),
                                      L("co"),
                                      L("write_values"),
                                      L("write_set"),
                                      L("read_registry"),
                                      L("tools_visible_at_read"),
                                      L("write_registry"),
                                      L("tools_used"),
                                      L("preds")};
#undef L

/* Fills b->field for the record object o (the first of repeated keys:
 * there are none, the parser refuses them). */
static void find_fields(builder *b, uint32_t o)
{
    for (int i = 0; i < NKEYS; i++) b->field[i] = ZGAN_JNONE;
    uint32_t k = o + 1;
    for (uint32_t m = 0; m < TOK(b, o)->n; m++, k = TOK(b, k + 1)->next) {
        const zgan_jtok *t = TOK(b, k);
        for (int i = 0; i < NKEYS; i++)
            if (keylen[i] == t->n && !memcmp(keys[i], t->s, t->n)) {
                b->field[i] = k + 1;
                break;
            }
    }
}

/* ------------------------------------------------------------------ */

static int fail(builder *b, const char *fmt, ...)
{
    if (b->errlen == 0) return -1;
    int n = b->line ? snprintf(b->err, b->errlen, "%s:%" PRIu32 ": error: ", b->h->name, b->line)
                    : snprintf(b->err, b->errlen, "%s: error: ", b->h->name);
    if (n >= 0 && (size_t)n < b->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(b->err + n, b->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static void scratch_fit(scratch *s, size_t n)
{
    if (n <= s->cap) return;
    size_t cap = s->cap ? s->cap : 64;
    while (cap < n) cap *= 2;
    s->stamp = zgan_xrealloc(s->stamp, cap * sizeof *s->stamp);
    s->val = zgan_xrealloc(s->val, cap * sizeof *s->val);
    memset(s->stamp + s->cap, 0, (cap - s->cap) * sizeof *s->stamp);
    s->cap = cap;
}

static void scratch_begin(scratch *s)
{
    if (++s->cur == 0) { /* wrapped: forget every old stamp */
        memset(s->stamp, 0, s->cap * sizeof *s->stamp);
        s->cur = 1;
    }
}

/* Marks id; returns true if it was already marked in this generation. */
static bool scratch_mark(scratch *s, uint32_t id)
{
    if (s->stamp[id] == s->cur) return true;
    s->stamp[id] = s->cur;
    return false;
}

static uint32_t intern(builder *b, const char *text, size_t len, zgan_text_kind kind)
{
    uint32_t id = zgan_intern_add(&b->h->strings, text, len, kind);
    if (id != ZGAN_NONE) {
        scratch_fit(&b->seen, b->h->strings.n);
        scratch_fit(&b->map, b->h->strings.n);
    }
    return id;
}

/* ------------------------------------------------------------------ */
/* scalars                                                              */

/* A cell, agent, tool or txn id: a string or an integer (null allowed
 * only where `allow_null`). */
static int get_id(builder *b, uint32_t v, bool allow_null, const char *what, uint32_t *out)
{
    uint32_t id;
    const zgan_jtok *t = TOK(b, v);
    if (t->kind == ZGAN_J_STRING) {
        id = intern(b, t->s, t->n, ZGAN_TEXT_STRING);
    } else if (t->kind == ZGAN_J_INT) {
        id = zgan_intern_int(&b->h->strings, t->i);
        if (id != ZGAN_NONE) {
            scratch_fit(&b->seen, b->h->strings.n);
            scratch_fit(&b->map, b->h->strings.n);
        }
    } else if (t->kind == ZGAN_J_NULL) {
        id = ZGAN_NULL;
    } else {
        return fail(b, "%s must be a string or an integer", what);
    }
    if (id == ZGAN_NONE) return fail(b, "too many distinct names and values");
    if (id == ZGAN_NULL && !allow_null) return fail(b, "%s must not be null", what);
    *out = id;
    return 0;
}

/* A value: any JSON.  Other than strings, integers and null, its text is
 * jansson's compact form with sorted keys, as it always was. */
static int get_value(builder *b, uint32_t v, uint32_t *out)
{
    const zgan_jtok *t = TOK(b, v);
    if (t->kind == ZGAN_J_STRING || t->kind == ZGAN_J_INT || t->kind == ZGAN_J_NULL)
        return get_id(b, v, true, "a value", out);
    char *text = NULL;
    if (t->kind == ZGAN_J_TRUE || t->kind == ZGAN_J_FALSE) {
        text = strdup(t->kind == ZGAN_J_TRUE ? "true" : "false");
    } else {
        json_t *j = t->jv;
        if (j) {
            json_incref(j);
        } else {
            json_error_t je;
            j = json_loadb(t->s, t->kind == ZGAN_J_REAL ? t->n : t->rawlen,
                           JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
        }
        if (j) text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        json_decref(j);
    }
    if (!text) return fail(b, "cannot represent a value");
    uint32_t id = intern(b, text, strlen(text), ZGAN_TEXT_JSON);
    free(text);
    if (id == ZGAN_NONE) return fail(b, "too many distinct names and values");
    *out = id;
    return 0;
}

static bool is_null(builder *b, uint32_t v)
{
    return v == ZGAN_JNONE || TOK(b, v)->kind == ZGAN_J_NULL;
}

static int get_time(builder *b, uint32_t o, const char *key, uint32_t flag, zgan_record *r,
                    int64_t *out)
{
    uint32_t v = field(b, key);
    if (is_null(b, v)) return 0;
    if (TOK(b, v)->kind != ZGAN_J_INT) return fail(b, "%s must be an integer", key);
    *out = TOK(b, v)->i;
    r->flags |= flag;
    return 0;
}

/* ------------------------------------------------------------------ */
/* lists                                                                */

static int push_id(builder *b, uint32_t id)
{
    zgan_history *h = b->h;
    if (h->nids >= UINT32_MAX) return fail(b, "history too large");
    zgan_grow((void **)&h->ids, &h->capids, h->nids + 1, sizeof *h->ids);
    h->ids[h->nids++] = id;
    return 0;
}

static int push_pair(builder *b, uint32_t cell, uint32_t value)
{
    zgan_history *h = b->h;
    if (h->npairs >= UINT32_MAX) return fail(b, "history too large");
    zgan_grow((void **)&h->pairs, &h->cappairs, h->npairs + 1, sizeof *h->pairs);
    h->pairs[h->npairs++] = (zgan_pair){cell, value};
    return 0;
}

/* Iterates the elements e of array token a (i: the running index). */
#define ARRAY_FOREACH(b, a, m, e) \
    for (uint32_t m = 0, e = (a) + 1; m < TOK(b, a)->n; m++, e = TOK(b, e)->next)

/* An array of ids into the id pool; `set` drops repeated elements. */
static int get_id_list(builder *b, uint32_t o, const char *key, bool allow_null, bool set,
                       bool *present, zgan_span *out)
{
    uint32_t a = field(b, key);
    *present = !is_null(b, a);
    out->off = (uint32_t)b->h->nids;
    out->len = 0;
    if (!*present) return 0;
    if (TOK(b, a)->kind != ZGAN_J_ARRAY) return fail(b, "%s must be an array", key);
    scratch_begin(&b->seen);
    ARRAY_FOREACH(b, a, m, e)
    {
        uint32_t id;
        if (get_id(b, e, allow_null, "an element of a set", &id) < 0) return -1;
        if (set && scratch_mark(&b->seen, id)) continue;
        if (push_id(b, id) < 0) return -1;
    }
    out->len = (uint32_t)(b->h->nids - out->off);
    return 0;
}

/* An element of an array of [cell, value] pairs. */
static int get_pair(builder *b, const char *key, uint32_t e, uint32_t *cell, uint32_t *value)
{
    if (TOK(b, e)->kind != ZGAN_J_ARRAY || TOK(b, e)->n != 2)
        return fail(b, "%s must be an array of [cell, value] pairs", key);
    if (get_id(b, e + 1, false, "a cell", cell) < 0) return -1;
    return get_value(b, TOK(b, e + 1)->next, value);
}

/* io / co: the sequence as written. */
static int get_sequence(builder *b, uint32_t o, const char *key, zgan_span *out)
{
    uint32_t a = field(b, key);
    out->off = (uint32_t)b->h->npairs;
    out->len = 0;
    if (is_null(b, a)) return 0;
    if (TOK(b, a)->kind != ZGAN_J_ARRAY)
        return fail(b, "%s must be an array of [cell, value] pairs", key);
    ARRAY_FOREACH(b, a, m, e)
    {
        uint32_t cell, value;
        if (get_pair(b, key, e, &cell, &value) < 0 || push_pair(b, cell, value) < 0) return -1;
    }
    out->len = (uint32_t)(b->h->npairs - out->off);
    return 0;
}

static void map_put(builder *b, uint32_t cell, uint32_t value)
{
    if (scratch_mark(&b->map, cell)) return; /* first match wins */
    b->map.val[cell] = value;
    zgan_grow((void **)&b->order, &b->caporder, b->norder + 1, sizeof *b->order);
    b->order[b->norder++] = cell;
}

/* Loads a value map (object or pair array) into b->map / b->order. */
static int get_value_map(builder *b, uint32_t o, const char *key, bool *present)
{
    uint32_t m = field(b, key);
    *present = !is_null(b, m);
    scratch_begin(&b->map);
    b->norder = 0;
    if (!*present) return 0;
    if (TOK(b, m)->kind == ZGAN_J_OBJECT) {
        uint32_t k = m + 1;
        for (uint32_t i = 0; i < TOK(b, m)->n; i++, k = TOK(b, k + 1)->next) {
            uint32_t cell = intern(b, TOK(b, k)->s, TOK(b, k)->n, ZGAN_TEXT_STRING), value;
            if (cell == ZGAN_NONE) return fail(b, "too many distinct names and values");
            if (cell == ZGAN_NULL) return fail(b, "a cell must not be null");
            if (get_value(b, k + 1, &value) < 0) return -1;
            map_put(b, cell, value);
        }
        return 0;
    }
    if (TOK(b, m)->kind != ZGAN_J_ARRAY)
        return fail(b, "%s must be an object or an array of [cell, value] pairs", key);
    ARRAY_FOREACH(b, m, i, e)
    {
        uint32_t cell, value;
        if (get_pair(b, key, e, &cell, &value) < 0) return -1;
        map_put(b, cell, value);
    }
    return 0;
}

/* Reads the cells of `set_key` (or, when absent, of the loaded map) as
 * (cell, value) pairs. */
static int get_cells(builder *b, uint32_t o, const char *set_key, zgan_span *out)
{
    zgan_history *h = b->h;
    uint32_t a = field(b, set_key);
    out->off = (uint32_t)h->npairs;
    if (!is_null(b, a)) {
        if (TOK(b, a)->kind != ZGAN_J_ARRAY) return fail(b, "%s must be an array", set_key);
        scratch_begin(&b->seen);
        ARRAY_FOREACH(b, a, m, e)
        {
            uint32_t cell;
            if (get_id(b, e, false, "a cell", &cell) < 0) return -1;
            if (scratch_mark(&b->seen, cell)) continue;
            uint32_t value = b->map.stamp[cell] == b->map.cur ? b->map.val[cell] : ZGAN_NULL;
            if (push_pair(b, cell, value) < 0) return -1;
        }
    } else {
        for (size_t i = 0; i < b->norder; i++)
            if (push_pair(b, b->order[i], b->map.val[b->order[i]]) < 0) return -1;
    }
    out->len = (uint32_t)(h->npairs - out->off);
    return 0;
}

/* ------------------------------------------------------------------ */
/* records                                                              */

static int get_registry(builder *b, uint32_t o, const char *key, const char *fallback,
                        uint32_t flag, zgan_record *r, zgan_span *out)
{
    bool present, fb_present;
    zgan_span fb;
    if (get_id_list(b, o, key, true, false, &present, out) < 0) return -1;
    if (get_id_list(b, o, fallback, true, false, &fb_present, &fb) < 0) return -1;
    if (!present) *out = fb;
    if (present || fb_present) r->flags |= flag;
    return 0;
}

static int parse_record(builder *b, uint32_t o, zgan_record *r)
{
    memset(r, 0, sizeof *r);
    r->line = b->line;
    r->id = ZGAN_NONE;
    if (TOK(b, o)->kind != ZGAN_J_OBJECT) return fail(b, "a record must be a JSON object");
    find_fields(b, o);

    uint32_t v;
    if ((v = field(b, keys[K_AGENT])) != ZGAN_JNONE && get_id(b, v, true, "agent", &r->agent) < 0)
        return -1;
    if ((v = field(b, keys[K_PLANNED_TOOL])) != ZGAN_JNONE &&
        get_id(b, v, true, "planned_tool", &r->planned_tool) < 0)
        return -1;
    if (!is_null(b, v = field(b, keys[K_TXN]))) {
        if (get_id(b, v, false, "txn", &r->id) < 0) return -1;
        r->flags |= ZGAN_HAS_TXN;
        b->any_txn = true;
    }
    if (!is_null(b, v = field(b, keys[K_ABORTED]))) {
        uint8_t k = TOK(b, v)->kind;
        if (k != ZGAN_J_TRUE && k != ZGAN_J_FALSE) return fail(b, "aborted must be a boolean");
        if (k == ZGAN_J_TRUE) r->flags |= ZGAN_ABORTED;
    }
    if (get_time(b, o, keys[K_READ_TIME], ZGAN_HAS_READ_TIME, r, &r->read_time) < 0 ||
        get_time(b, o, keys[K_WRITE_TIME], ZGAN_HAS_WRITE_TIME, r, &r->write_time) < 0)
        return -1;

    bool present;
    if (get_value_map(b, o, keys[K_READ_VALUES], &present) < 0 ||
        get_cells(b, o, keys[K_READ_SET], &r->reads) < 0)
        return -1;
    if (get_sequence(b, o, keys[K_IO], &r->io) < 0 || get_sequence(b, o, keys[K_CO], &r->co) < 0)
        return -1;
    if (get_value_map(b, o, keys[K_WRITE_VALUES], &present) < 0) return -1;
    if (!present) { /* the paper derives write_values from co */
        const zgan_pair *co = zgan_pairs(b->h, r->co);
        for (uint32_t i = 0; i < r->co.len; i++) map_put(b, co[i].cell, co[i].value);
    }
    if (get_cells(b, o, keys[K_WRITE_SET], &r->writes) < 0) return -1;

    if (get_registry(b, o, keys[K_READ_REGISTRY], keys[K_TOOLS_VISIBLE_AT_READ], ZGAN_HAS_READ_REG,
                     r, &r->read_reg) < 0 ||
        get_registry(b, o, keys[K_WRITE_REGISTRY], keys[K_TOOLS_USED], ZGAN_HAS_WRITE_REG, r,
                     &r->write_reg) < 0)
        return -1;
    if (get_id_list(b, o, keys[K_PREDS], false, true, &present, &r->preds) < 0) return -1;
    if (present) b->h->provenance = true;
    return 0;
}

static bool blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n' && s[i] != '\f' &&
            s[i] != '\v')
            return false;
    return true;
}

static int add_line(builder *b, const char *s, size_t len)
{
    if (blank(s, len)) return 0;
    zgan_history *h = b->h;
    if (h->nrec >= UINT32_MAX - 1) return fail(b, "too many records");
    if (zgan_json_parse(&b->doc, s, len) < 0) {
        /* jansson decides: its message, or its tree */
        json_error_t je;
        json_t *o = json_loadb(s, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
        if (!o) return fail(b, "invalid JSON: %s (column %d)", je.text, je.column);
        zgan_json_from_jansson(&b->doc, o);
    }
    zgan_grow((void **)&h->rec, &h->caprec, h->nrec + 1, sizeof *h->rec);
    int rc = parse_record(b, 0, &h->rec[h->nrec]);
    if (rc == 0) h->nrec++;
    return rc;
}

/* Gives every record its id and rejects repeated txn ids.  Without any
 * `txn` key a record's id is its 1-based record number, so `preds` can
 * name records as in the paper's Definition 3; once some record has a
 * `txn`, records without one cannot be named. */
static int finish(builder *b)
{
    zgan_history *h = b->h;
    for (size_t i = 0; i < h->nrec && !b->any_txn; i++) {
        b->line = h->rec[i].line;
        h->rec[i].id = zgan_intern_int(&h->strings, (int64_t)i + 1);
        if (h->rec[i].id == ZGAN_NONE) return fail(b, "too many distinct names and values");
    }
    uint32_t *owner = zgan_xmalloc((h->strings.n ? h->strings.n : 1) * sizeof *owner);
    memset(owner, 0xff, h->strings.n * sizeof *owner);
    int rc = 0;
    for (size_t i = 0; i < h->nrec && rc == 0; i++) {
        uint32_t id = h->rec[i].id;
        if (id == ZGAN_NONE) continue;
        if (owner[id] != ZGAN_NONE) {
            b->line = h->rec[i].line;
            rc = fail(b, "duplicate txn %s (also on line %" PRIu32 ")",
                      zgan_intern_text(&h->strings, id), h->rec[owner[id]].line);
        }
        owner[id] = (uint32_t)i;
    }
    free(owner);
    return rc;
}

/* ------------------------------------------------------------------ */

static void builder_init(builder *b, const char *name, char *err, size_t errlen)
{
    memset(b, 0, sizeof *b);
    b->err = err;
    b->errlen = errlen;
    if (errlen) err[0] = '\0';
    b->h = zgan_xcalloc(1, sizeof *b->h);
    size_t n = strlen(name);
    b->h->name = zgan_xmalloc(n + 1);
    memcpy(b->h->name, name, n + 1);
    zgan_intern_init(&b->h->strings);
    /* the pools are never NULL, so pointer arithmetic on empty spans is defined */
    zgan_grow((void **)&b->h->pairs, &b->h->cappairs, 1, sizeof *b->h->pairs);
    zgan_grow((void **)&b->h->ids, &b->h->capids, 1, sizeof *b->h->ids);
    scratch_fit(&b->seen, b->h->strings.n);
    scratch_fit(&b->map, b->h->strings.n);
}

static int builder_done(builder *b, int rc, zgan_history **out)
{
    if (rc == 0) rc = finish(b);
    free(b->seen.stamp);
    free(b->seen.val);
    free(b->map.stamp);
    free(b->map.val);
    free(b->order);
    zgan_json_free(&b->doc);
    if (rc == 0) {
        *out = b->h;
    } else {
        zgan_history_free(b->h);
    }
    return rc;
}

static uint32_t next_line(uint32_t line) { return line < UINT32_MAX ? line + 1 : line; }

int zgan_read_buffer(const char *name, const char *buf, size_t len, zgan_history **out,
                     char *errbuf, size_t errlen)
{
    builder b;
    builder_init(&b, name, errbuf, errlen);
    int rc = 0;
    size_t start = 0;
    while (rc == 0 && start < len) {
        const char *nl = memchr(buf + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - buf) : len;
        b.line = next_line(b.line);
        rc = add_line(&b, buf + start, end - start);
        start = end + 1;
    }
    return builder_done(&b, rc, out);
}

/* ------------------------------------------------------------------ */
/* a large file: parts read in parallel                                 */

/* Part k of a file of n parts owns the lines that start in [from, to):
 * from = size * k / n (the last part reads on to the end, however far it
 * is).  Each part is read into a history of its own, with its own ids;
 * append_part then renames them into the first part's table.  Taking the
 * parts' new texts in order, each in the order of its first occurrence,
 * gives every text the id and display form the one-pass reader gives it
 * (the first occurrence in the file decides both), so the history is the
 * same, record for record and id for id.  Any error (a bad record, a read
 * error, a limit) sends the whole file to the one-pass reader, whose
 * message and line are then the ones reported. */
typedef struct {
    builder b;
    int fd;
    uint64_t from, to;
    int rc;
} part;

enum { PART_BLOCK = 1 << 22, PART_MIN = 1 << 23 };

static ssize_t read_at(int fd, char *buf, size_t n, uint64_t off)
{
    for (;;) {
        ssize_t r = pread(fd, buf, n, (off_t)off);
        if (r >= 0 || errno != EINTR) return r;
    }
}

/* A line as the one-pass reader sees it (with its newline, as getline). */
static int part_line(part *p, const char *s, size_t len)
{
    p->b.line = next_line(p->b.line);
    return add_line(&p->b, s, len);
}

static void read_part(void *arg)
{
    part *p = arg;
    size_t cap = PART_BLOCK, n = 0, i = 0; /* data[i, n) not yet read; data[0] is at `off` */
    char *data = zgan_xmalloc(cap);
    uint64_t off = p->from ? p->from - 1 : 0;
    bool skip = p->from > 0; /* the line that starts before `from` is not ours */
    p->rc = 0;
    for (;;) {
        for (;;) {
            if (!skip && off + i >= p->to) goto done;
            const char *nl = memchr(data + i, '\n', n - i);
            if (!nl) break;
            size_t end = (size_t)(nl - data) + 1;
            if (!skip && part_line(p, data + i, end - i) < 0) goto failed;
            skip = false;
            i = end;
        }
        memmove(data, data + i, n - i);
        off += i;
        n -= i;
        i = 0;
        if (n == cap) {
            cap *= 2;
            data = zgan_xrealloc(data, cap);
        }
        ssize_t r = read_at(p->fd, data + n, cap - n, off + n);
        if (r < 0) goto failed;
        if (r == 0) { /* the end: a last line without a newline */
            if (!skip && n > 0 && part_line(p, data, n) < 0) goto failed;
            goto done;
        }
        n += (size_t)r;
    }
failed:
    p->rc = -1;
done:
    free(data);
}

/* A share of one part's records and pools, copied into the history with
 * its ids renamed (the shares of a part are copied in parallel). */
typedef struct {
    zgan_history *h;
    const zgan_history *g;
    const uint32_t *to;
    uint32_t base, poff, ioff; /* lines before the part; where its pools go */
    size_t rec0, rec1, pair0, pair1, id0, id1;
} copy_job;

static void copy_share(void *arg)
{
    const copy_job *j = arg;
    const uint32_t *to = j->to;
    zgan_pair *pairs = j->h->pairs + j->poff;
    uint32_t *ids = j->h->ids + j->ioff;
    zgan_record *rec = j->h->rec + (j->h->nrec);
    for (size_t i = j->pair0; i < j->pair1; i++)
        pairs[i] = (zgan_pair){to[j->g->pairs[i].cell], to[j->g->pairs[i].value]};
    for (size_t i = j->id0; i < j->id1; i++) ids[i] = to[j->g->ids[i]];
    for (size_t i = j->rec0; i < j->rec1; i++) {
        zgan_record r = j->g->rec[i];
        r.line += j->base;
        r.agent = to[r.agent];
        r.planned_tool = to[r.planned_tool];
        if (r.id != ZGAN_NONE) r.id = to[r.id];
        r.reads.off += j->poff;
        r.writes.off += j->poff;
        r.io.off += j->poff;
        r.co.off += j->poff;
        r.read_reg.off += j->ioff;
        r.write_reg.off += j->ioff;
        r.preds.off += j->ioff;
        rec[i] = r;
    }
}

/* Appends the history of q to b's, q's ids renamed into b's table and its
 * lines counted after `base` lines; -1 if a limit would be passed (the
 * one-pass reader then says which). */
static int append_part(builder *b, const builder *q, uint32_t base)
{
    zgan_history *h = b->h;
    const zgan_history *g = q->h;
    if (h->nrec + g->nrec >= UINT32_MAX - 1 || h->npairs + g->npairs >= UINT32_MAX ||
        h->nids + g->nids >= UINT32_MAX || (uint64_t)base + q->line >= UINT32_MAX)
        return -1;
    /* the part's texts in the order of their ids: new ones get the next ids */
    zgan_intern_reserve(&h->strings, g->strings.n, g->strings.nchars);
    uint32_t *to = zgan_xmalloc(g->strings.n * sizeof *to);
    for (size_t id = 0; id < g->strings.n; id++) {
        const zgan_entry *e = &g->strings.entries[id];
        const char *text = g->strings.chars + e->off;
        to[id] = e->kind == ZGAN_TEXT_INT && text[0] != '-'
                     ? zgan_intern_int(&h->strings, strtoll(text, NULL, 10))
                     : zgan_intern_add(&h->strings, text, e->len, e->kind);
        if (to[id] == ZGAN_NONE) {
            free(to);
            return -1;
        }
    }
    zgan_grow((void **)&h->pairs, &h->cappairs, h->npairs + g->npairs, sizeof *h->pairs);
    zgan_grow((void **)&h->ids, &h->capids, h->nids + g->nids, sizeof *h->ids);
    zgan_grow((void **)&h->rec, &h->caprec, h->nrec + g->nrec, sizeof *h->rec);
    copy_job j[ZGAN_MAX_THREADS];
    int t = zgan_threads();
    for (int k = 0; k < t; k++)
        j[k] = (copy_job){.h = h,
                          .g = g,
                          .to = to,
                          .base = base,
                          .poff = (uint32_t)h->npairs,
                          .ioff = (uint32_t)h->nids,
                          .rec0 = g->nrec * (size_t)k / (size_t)t,
                          .rec1 = g->nrec * (size_t)(k + 1) / (size_t)t,
                          .pair0 = g->npairs * (size_t)k / (size_t)t,
                          .pair1 = g->npairs * (size_t)(k + 1) / (size_t)t,
                          .id0 = g->nids * (size_t)k / (size_t)t,
                          .id1 = g->nids * (size_t)(k + 1) / (size_t)t};
    zgan_parallel(copy_share, j, sizeof j[0], t);
    h->npairs += g->npairs;
    h->nids += g->nids;
    h->nrec += g->nrec;
    free(to);
    h->provenance |= g->provenance;
    b->any_txn |= q->any_txn;
    return 0;
}

/* Reads the regular file fd (`size` bytes when opened) in `nparts` parts,
 * the first in the calling thread; -1 if any part or the merge fails. */
static int read_parts(builder *b, int fd, uint64_t size, int nparts)
{
    part *p = zgan_xcalloc((size_t)nparts, sizeof *p);
    for (int k = 0; k < nparts; k++) {
        if (k > 0) builder_init(&p[k].b, b->h->name, NULL, 0);
        p[k].fd = fd;
        p[k].from = size * (uint64_t)k / (uint64_t)nparts;
        p[k].to = k + 1 < nparts ? size * (uint64_t)(k + 1) / (uint64_t)nparts : UINT64_MAX;
    }
    /* part 0 is read into b itself (its messages unused: see above) */
    p[0].b = *b;
    p[0].b.err = NULL;
    p[0].b.errlen = 0;
    zgan_parallel(read_part, p, sizeof *p, nparts);
    p[0].b.err = b->err;
    p[0].b.errlen = b->errlen;
    *b = p[0].b;
    int rc = p[0].rc;
    uint32_t base = b->line;
    for (int k = 1; k < nparts; k++) {
        if (rc == 0) rc = p[k].rc;
        if (rc == 0) rc = append_part(b, &p[k].b, base);
        base += p[k].b.line;
        zgan_history *unused;
        builder_done(&p[k].b, -1, &unused);
    }
    free(p);
    return rc;
}

/* The number of parts for a file of `size` bytes: one per processor this
 * process may run on, each at least PART_MIN bytes. */
static int auto_parts(uint64_t size)
{
    uint64_t n = (uint64_t)zgan_threads();
    if (n > size / PART_MIN) n = size / PART_MIN;
    return n < 1 ? 1 : (int)n;
}

int zgan_read_file_parts(const char *path, int nparts, zgan_history **out, char *errbuf,
                         size_t errlen)
{
    builder b;
    builder_init(&b, path, errbuf, errlen);
    /* only regular files: a FIFO would block and a device (/dev/zero)
     * never ends; O_NONBLOCK keeps open() from waiting for a FIFO's writer */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return builder_done(&b, fail(&b, "cannot open: %s", strerror(errno)), out);
    struct stat st;
    const char *why = fstat(fd, &st) != 0    ? strerror(errno)
                      : S_ISDIR(st.st_mode)  ? strerror(EISDIR)
                      : !S_ISREG(st.st_mode) ? "not a regular file"
                                             : NULL;
    if (!why) {
        uint64_t size = st.st_size > 0 ? (uint64_t)st.st_size : 0;
        if (nparts <= 0) nparts = auto_parts(size);
        if (nparts > ZGAN_MAX_THREADS) nparts = ZGAN_MAX_THREADS;
        if (nparts > 1) {
            if (read_parts(&b, fd, size, nparts) == 0) {
                close(fd);
                return builder_done(&b, 0, out);
            }
            zgan_history *unused;
            builder_done(&b, -1, &unused);
            builder_init(&b, path, errbuf, errlen); /* again, in one pass */
        }
    }
    FILE *f = why ? NULL : fdopen(fd, "rb");
    if (!f) {
        if (!why) why = strerror(errno);
        close(fd);
        return builder_done(&b, fail(&b, "cannot read: %s", why), out);
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = 0;
    /* getline returns -1 both at the end and on an error (ENOMEM for a
     * line that does not fit): errno, cleared before each call, tells them
     * apart, so a history is never cut short silently */
    for (;;) {
        errno = 0;
        if (rc != 0 || (n = getline(&line, &cap, f)) < 0) break;
        b.line = next_line(b.line);
        rc = add_line(&b, line, (size_t)n);
    }
    if (rc == 0 && (ferror(f) || errno != 0)) {
        b.line = 0;
        rc = fail(&b, "cannot read: %s", strerror(errno ? errno : EIO));
    }
    free(line);
    fclose(f);
    return builder_done(&b, rc, out);
}

int zgan_read_file(const char *path, zgan_history **out, char *errbuf, size_t errlen)
{
    return zgan_read_file_parts(path, 0, out, errbuf, errlen);
}

/* ------------------------------------------------------------------ */

void zgan_history_free(zgan_history *h)
{
    if (!h) return;
    zgan_intern_free(&h->strings);
    free(h->name);
    free(h->rec);
    free(h->pairs);
    free(h->ids);
    free(h);
}

const char *zgan_history_name(const zgan_history *h) { return h->name; }
size_t zgan_history_records(const zgan_history *h) { return h->nrec; }
bool zgan_history_has_provenance(const zgan_history *h) { return h->provenance; }

uint32_t zgan_history_lookup(const zgan_history *h, const char *text)
{
    return zgan_intern_find(&h->strings, text, strlen(text));
}

const char *zgan_history_text(const zgan_history *h, uint32_t id)
{
    return zgan_intern_text(&h->strings, id);
}
