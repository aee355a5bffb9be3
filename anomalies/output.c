/* output.c — text and JSON reports.
 *
 * Records are printed by their 1-based record number (the paper's h[i]),
 * followed by the txn id when the record has one; io/co positions are
 * 0-based array indices. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static const char *const kind_title[ZGAN_NKINDS] = {"stale-generation", "phantom-tool",
                                                    "causal-cascade", "tool-effect reordering"};

static const char *a3_name(zgan_a3_mode m) { return m == ZGAN_A3_RESIDUE ? "residue" : "precise"; }

void zgan_summary_add(zgan_summary *s, const zgan_report *r)
{
    s->histories++;
    for (int k = 0; k < ZGAN_NKINDS; k++)
        if (r->n[k]) s->with[k]++;
    s->levels[r->level]++;
}

/* ------------------------------------------------------------------ */
/* text                                                                 */

static void put_id(FILE *f, const zgan_history *h, uint32_t id)
{
    if (id == ZGAN_NONE)
        fputs("(nothing)", f);
    else
        zgan_intern_print(&h->strings, id, f);
}

static void put_record(FILE *f, const zgan_history *h, uint32_t i)
{
    fprintf(f, "record %lu", (unsigned long)i + 1);
    if (h->rec[i].flags & ZGAN_HAS_TXN) {
        fputs(" (txn ", f);
        put_id(f, h, h->rec[i].id);
        fputc(')', f);
    }
}

static void put_pair(FILE *f, const zgan_history *h, uint32_t cell, uint32_t value)
{
    if (cell == ZGAN_NONE) {
        fputs("(end)", f);
        return;
    }
    fputc('[', f);
    put_id(f, h, cell);
    fputs(", ", f);
    put_id(f, h, value);
    fputc(']', f);
}

static void put_witness(FILE *f, const zgan_history *h, const zgan_report *r, zgan_kind k,
                        const zgan_witness *w)
{
    const zgan_record *x = &h->rec[w->record];
    fprintf(f, "    %s ", zgan_kind_name(k));
    put_record(f, h, w->record);
    switch (k) {
    case ZGAN_A1: {
        const zgan_record *y = &h->rec[w->other];
        fputs(" read ", f);
        put_id(f, h, w->cell);
        fputs(" = ", f);
        put_id(f, h, w->value);
        fprintf(f, " at %lld; ", (long long)x->read_time);
        put_record(f, h, w->other);
        fputs(" of agent ", f);
        put_id(f, h, y->agent);
        fputs(" wrote ", f);
        put_id(f, h, w->value2);
        fprintf(f, " at %lld; the reader (agent ", (long long)y->write_time);
        put_id(f, h, x->agent);
        fprintf(f, ") committed at %lld\n", (long long)x->write_time);
        break;
    }
    case ZGAN_A2:
        fputs(" planned tool ", f);
        put_id(f, h, w->value);
        fputs(", in its read registry but not in its write registry\n", f);
        break;
    case ZGAN_A3:
        if (r->a3_used == ZGAN_A3_PRECISE) {
            fputs(" is not aborted but its predecessor ", f);
            put_record(f, h, w->other);
            fputs(" is\n", f);
        } else {
            fputs(" read ", f);
            put_id(f, h, w->cell);
            fputs(" = ", f);
            put_id(f, h, w->value);
            fprintf(f, " at %lld, a value no other committed record wrote by then\n",
                    (long long)x->read_time);
        }
        break;
    case ZGAN_A6:
        fprintf(f, " issued io[%lu] = ", (unsigned long)w->pos);
        put_pair(f, h, w->cell, w->value);
        fprintf(f, " but committed co[%lu] = ", (unsigned long)w->pos);
        put_pair(f, h, w->cell2, w->value2);
        fputc('\n', f);
        break;
    default: break;
    }
}

void zgan_print_text(FILE *f, const zgan_history *h, const zgan_report *r)
{
    fprintf(f, "%s: %lu record%s, level L%d\n", h->name, (unsigned long)h->nrec,
            h->nrec == 1 ? "" : "s", r->level);
    fputs("  ", f);
    for (int k = 0; k < ZGAN_NKINDS; k++) {
        fprintf(f, "%s%s %lu", k ? ", " : "", zgan_kind_name(k), (unsigned long)r->n[k]);
        if (k == ZGAN_A3) fprintf(f, " (%s)", a3_name(r->a3_used));
    }
    fputc('\n', f);
    for (int k = 0; k < ZGAN_NKINDS; k++)
        for (size_t i = 0; i < r->n[k]; i++) put_witness(f, h, r, k, &r->w[k][i]);
}

void zgan_print_summary(FILE *f, const zgan_summary *s)
{
    fprintf(f, "\n%-34s %8lu\n", "histories", (unsigned long)s->histories);
    for (int k = 0; k < ZGAN_NKINDS; k++) {
        char label[64];
        snprintf(label, sizeof label, "with %s (%s)", zgan_kind_name(k), kind_title[k]);
        fprintf(f, "%-34s %8lu\n", label, (unsigned long)s->with[k]);
    }
    for (int l = 0; l < 5; l++)
        fprintf(f, "level L%d %25s %8lu\n", l, "", (unsigned long)s->levels[l]);
}

/* ------------------------------------------------------------------ */
/* JSON                                                                 */

static json_t *id_json(const zgan_history *h, uint32_t id)
{
    return id == ZGAN_NONE ? json_null() : zgan_intern_json(&h->strings, id);
}

static void set_record(json_t *o, const zgan_history *h, const char *key, const char *txn_key,
                       uint32_t i)
{
    json_object_set_new(o, key, json_integer((json_int_t)i + 1));
    if (h->rec[i].flags & ZGAN_HAS_TXN) json_object_set_new(o, txn_key, id_json(h, h->rec[i].id));
}

static json_t *pair_json(const zgan_history *h, uint32_t cell, uint32_t value)
{
    if (cell == ZGAN_NONE) return json_null();
    json_t *a = json_array();
    json_array_append_new(a, id_json(h, cell));
    json_array_append_new(a, id_json(h, value));
    return a;
}

static json_t *witness_json(const zgan_history *h, const zgan_report *r, zgan_kind k,
                            const zgan_witness *w)
{
    json_t *o = json_object();
    switch (k) {
    case ZGAN_A1:
        set_record(o, h, "reader", "reader_txn", w->record);
        set_record(o, h, "writer", "writer_txn", w->other);
        json_object_set_new(o, "cell", id_json(h, w->cell));
        json_object_set_new(o, "read_value", id_json(h, w->value));
        json_object_set_new(o, "write_value", id_json(h, w->value2));
        break;
    case ZGAN_A2:
        set_record(o, h, "record", "txn", w->record);
        json_object_set_new(o, "tool", id_json(h, w->value));
        break;
    case ZGAN_A3:
        set_record(o, h, "record", "txn", w->record);
        if (r->a3_used == ZGAN_A3_PRECISE) {
            set_record(o, h, "predecessor", "predecessor_txn", w->other);
        } else {
            json_object_set_new(o, "cell", id_json(h, w->cell));
            json_object_set_new(o, "read_value", id_json(h, w->value));
        }
        break;
    case ZGAN_A6:
        set_record(o, h, "record", "txn", w->record);
        json_object_set_new(o, "index", json_integer(w->pos));
        json_object_set_new(o, "issued", pair_json(h, w->cell, w->value));
        json_object_set_new(o, "committed", pair_json(h, w->cell2, w->value2));
        break;
    default: break;
    }
    return o;
}

/* A path as a JSON string; bytes that are not UTF-8 become "\\xNN". */
static json_t *path_json(const char *path)
{
    json_t *j = json_string(path);
    if (j) return j;
    size_t n = strlen(path);
    char *s = zgan_xmalloc(4 * n + 1), *p = s;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)path[i];
        if (c < 0x80)
            *p++ = (char)c;
        else
            p += sprintf(p, "\\x%02x", c);
    }
    *p = '\0';
    j = json_string(s);
    free(s);
    return j ? j : json_string("?");
}

json_t *zgan_file_json(const zgan_history *h, const zgan_report *r)
{
    json_t *anomalies = json_object();
    for (int k = 0; k < ZGAN_NKINDS; k++) {
        json_t *a = json_array();
        for (size_t i = 0; i < r->n[k]; i++)
            json_array_append_new(a, witness_json(h, r, k, &r->w[k][i]));
        json_object_set_new(anomalies, zgan_kind_name(k), a);
    }
    char level[3] = {'L', (char)('0' + r->level), '\0'};
    json_t *o = json_object();
    json_object_set_new(o, "path", path_json(h->name));
    json_object_set_new(o, "records", json_integer((json_int_t)h->nrec));
    json_object_set_new(o, "a3_predicate", json_string(a3_name(r->a3_used)));
    json_object_set_new(o, "anomalies", anomalies);
    json_object_set_new(o, "level", json_string(level));
    return o;
}

json_t *zgan_summary_json(const zgan_summary *s, json_t *files)
{
    json_t *with = json_object(), *levels = json_object();
    for (int k = 0; k < ZGAN_NKINDS; k++)
        json_object_set_new(with, zgan_kind_name(k), json_integer((json_int_t)s->with[k]));
    for (int l = 0; l < 5; l++) {
        char name[3] = {'L', (char)('0' + l), '\0'};
        json_object_set_new(levels, name, json_integer((json_int_t)s->levels[l]));
    }
    json_t *o = json_object();
    json_object_set_new(o, "histories", json_integer((json_int_t)s->histories));
    json_object_set_new(o, "with", with);
    json_object_set_new(o, "levels", levels);
    json_object_set_new(o, "files", files);
    return o;
}

/* ------------------------------------------------------------------ */
/* JSON, written as it goes                                             */

/* The same bytes as json_dumpf(JSON_INDENT(2)) of the trees above, without
 * building them: on 10^6 records the tree of a report cost more than
 * reading the history.  Depth d: the value is written as a value at depth
 * d of the whole document (its members on lines indented 2(d + 1)). */

static void w_indent(FILE *f, int depth)
{
    putc('\n', f);
    for (int i = 0; i < depth; i++) fputs("  ", f);
}

/* Starts member `key` of an object at depth-1 (first: no comma). */
static void w_key(FILE *f, int depth, bool *first, const char *key)
{
    if (!*first) putc(',', f);
    *first = false;
    w_indent(f, depth);
    fprintf(f, "\"%s\": ", key);
}

static void w_id(FILE *f, const zgan_history *h, uint32_t id, int depth)
{
    if (id == ZGAN_NONE)
        fputs("null", f);
    else
        zgan_intern_write(&h->strings, id, depth, f);
}

static void w_record(FILE *f, int depth, bool *first, const zgan_history *h, const char *key,
                     const char *txn_key, uint32_t i)
{
    w_key(f, depth, first, key);
    fprintf(f, "%lu", (unsigned long)i + 1);
    if (h->rec[i].flags & ZGAN_HAS_TXN) {
        w_key(f, depth, first, txn_key);
        w_id(f, h, h->rec[i].id, depth);
    }
}

static void w_pair(FILE *f, const zgan_history *h, uint32_t cell, uint32_t value, int depth)
{
    if (cell == ZGAN_NONE) {
        fputs("null", f);
        return;
    }
    putc('[', f);
    w_indent(f, depth + 1);
    w_id(f, h, cell, depth + 1);
    putc(',', f);
    w_indent(f, depth + 1);
    w_id(f, h, value, depth + 1);
    w_indent(f, depth);
    putc(']', f);
}

/* A witness: an object at depth d, its members at d + 1. */
static void w_witness(FILE *f, const zgan_history *h, const zgan_report *r, zgan_kind k,
                      const zgan_witness *w, int d)
{
    bool first = true;
    int m = d + 1;
    putc('{', f);
    switch (k) {
    case ZGAN_A1:
        w_record(f, m, &first, h, "reader", "reader_txn", w->record);
        w_record(f, m, &first, h, "writer", "writer_txn", w->other);
        w_key(f, m, &first, "cell");
        w_id(f, h, w->cell, m);
        w_key(f, m, &first, "read_value");
        w_id(f, h, w->value, m);
        w_key(f, m, &first, "write_value");
        w_id(f, h, w->value2, m);
        break;
    case ZGAN_A2:
        w_record(f, m, &first, h, "record", "txn", w->record);
        w_key(f, m, &first, "tool");
        w_id(f, h, w->value, m);
        break;
    case ZGAN_A3:
        w_record(f, m, &first, h, "record", "txn", w->record);
        if (r->a3_used == ZGAN_A3_PRECISE) {
            w_record(f, m, &first, h, "predecessor", "predecessor_txn", w->other);
        } else {
            w_key(f, m, &first, "cell");
            w_id(f, h, w->cell, m);
            w_key(f, m, &first, "read_value");
            w_id(f, h, w->value, m);
        }
        break;
    case ZGAN_A6:
        w_record(f, m, &first, h, "record", "txn", w->record);
        w_key(f, m, &first, "index");
        fprintf(f, "%lu", (unsigned long)w->pos);
        w_key(f, m, &first, "issued");
        w_pair(f, h, w->cell, w->value, m);
        w_key(f, m, &first, "committed");
        w_pair(f, h, w->cell2, w->value2, m);
        break;
    default: break;
    }
    if (first) { /* no member: {} */
        putc('}', f);
        return;
    }
    w_indent(f, d);
    putc('}', f);
}

void zgan_write_file_json(FILE *f, const zgan_history *h, const zgan_report *r, int d)
{
    bool first = true;
    int m = d + 1;
    putc('{', f);
    w_key(f, m, &first, "path");
    json_t *p = path_json(h->name);
    json_dumpf(p, f, JSON_ENCODE_ANY);
    json_decref(p);
    w_key(f, m, &first, "records");
    fprintf(f, "%lu", (unsigned long)h->nrec);
    w_key(f, m, &first, "a3_predicate");
    fprintf(f, "\"%s\"", a3_name(r->a3_used));
    w_key(f, m, &first, "anomalies");
    putc('{', f);
    bool kfirst = true;
    for (int k = 0; k < ZGAN_NKINDS; k++) {
        w_key(f, m + 1, &kfirst, zgan_kind_name(k));
        if (r->n[k] == 0) {
            fputs("[]", f);
            continue;
        }
        putc('[', f);
        for (size_t i = 0; i < r->n[k]; i++) {
            if (i) putc(',', f);
            w_indent(f, m + 2);
            w_witness(f, h, r, k, &r->w[k][i], m + 2);
        }
        w_indent(f, m + 1);
        putc(']', f);
    }
    w_indent(f, m);
    putc('}', f);
    w_key(f, m, &first, "level");
    fprintf(f, "\"L%d\"", r->level);
    w_indent(f, d);
    putc('}', f);
}

void zgan_write_summary_json(FILE *f, const zgan_summary *s, const char *files, size_t nfiles,
                             size_t len)
{
    bool first = true;
    putc('{', f);
    w_key(f, 1, &first, "histories");
    fprintf(f, "%lu", (unsigned long)s->histories);
    w_key(f, 1, &first, "with");
    putc('{', f);
    bool wfirst = true;
    for (int k = 0; k < ZGAN_NKINDS; k++) {
        w_key(f, 2, &wfirst, zgan_kind_name(k));
        fprintf(f, "%lu", (unsigned long)s->with[k]);
    }
    w_indent(f, 1);
    putc('}', f);
    w_key(f, 1, &first, "levels");
    putc('{', f);
    bool lfirst = true;
    for (int l = 0; l < 5; l++) {
        char name[3] = {'L', (char)('0' + l), '\0'};
        w_key(f, 2, &lfirst, name);
        fprintf(f, "%lu", (unsigned long)s->levels[l]);
    }
    w_indent(f, 1);
    putc('}', f);
    w_key(f, 1, &first, "files");
    if (nfiles == 0) {
        fputs("[]", f);
    } else {
        putc('[', f);
        fwrite(files, 1, len, f);
        w_indent(f, 1);
        putc(']', f);
    }
    w_indent(f, 0);
    putc('}', f);
}
