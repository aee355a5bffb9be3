/* internal.h — data layout shared by the anomaly modules (not installed).
 *
 * A history is a flat array of records.  Every cell, value, agent, tool
 * and transaction id is interned to a dense uint32_t (ZGAN_NULL = 0 is the
 * null value), so the detectors compare integers and can index arrays by
 * id.  Per-record lists live in two pools (pairs and ids) addressed by
 * spans. */
#ifndef ZGAN_INTERNAL_H
#define ZGAN_INTERNAL_H

#include "anomalies.h"

#include <jansson.h>

/* ---- allocation (aborts with a message when memory runs out) ---- */

void *zgan_xmalloc(size_t n);
void *zgan_xcalloc(size_t n, size_t size);
void *zgan_xrealloc(void *p, size_t n);
/* Grows *p (element size `size`) so that it holds at least `need`
 * elements; *cap is updated. */
void zgan_grow(void **p, size_t *cap, size_t need, size_t size);

/* ---- threads (util.c) ---- */

enum { ZGAN_MAX_THREADS = 8 };
/* The processors this process may run on (at most ZGAN_MAX_THREADS). */
int zgan_threads(void);
/* Makes zgan_threads return n (0: the processors again); for the tests,
 * before any thread runs. */
void zgan_set_threads(int n);
/* Runs fn on each of the n (at most ZGAN_MAX_THREADS) argument blocks
 * args, args + size, ..., the first in the calling thread, and returns
 * when all are done. */
void zgan_parallel(void (*fn)(void *), void *args, size_t size, int n);

/* ---- interning (intern.c) ---- */

typedef enum { ZGAN_TEXT_NULL, ZGAN_TEXT_STRING, ZGAN_TEXT_INT, ZGAN_TEXT_JSON } zgan_text_kind;

typedef struct {
    size_t off; /* into chars: the id's text, NUL-terminated */
    uint32_t len;
    uint8_t kind; /* how the first occurrence was written (for display) */
} zgan_entry;

/* A slot of the intern table: an id and its text's 32-bit hash, side by
 * side (one cache line read per probe; growing reads no text). */
typedef struct {
    uint32_t id, hash;
} zgan_slot;

typedef struct {
    char *chars;
    size_t nchars, capchars;
    zgan_entry *entries;
    size_t n, cap;
    zgan_slot *slots; /* open addressing; id ZGAN_NONE = empty */
    size_t nslots;
    uint32_t *small; /* the ids of small non-negative integers (ZGAN_NONE: not yet) */
    size_t nsmall;
} zgan_intern;

void zgan_intern_init(zgan_intern *t);
void zgan_intern_free(zgan_intern *t);
/* The id of `text` (len bytes), adding it with display kind `kind` if new.
 * Returns ZGAN_NONE only if the table is full (2^32 - 2 ids). */
uint32_t zgan_intern_add(zgan_intern *t, const char *text, size_t len, zgan_text_kind kind);
/* Makes room for n more texts of nchars bytes (NULs included) in all. */
void zgan_intern_reserve(zgan_intern *t, size_t n, size_t nchars);
/* zgan_intern_add of the decimal digits of v (display kind
 * ZGAN_TEXT_INT), without hashing them again for a small v seen before. */
uint32_t zgan_intern_int(zgan_intern *t, int64_t v);
uint32_t zgan_intern_find(const zgan_intern *t, const char *text, size_t len);
const char *zgan_intern_text(const zgan_intern *t, uint32_t id);
/* Appends the id as JSON text (strings quoted and escaped) to `f`. */
void zgan_intern_print(const zgan_intern *t, uint32_t id, FILE *f);
/* The same as jansson's JSON_INDENT(2) writes it as a value at `depth`
 * (an array or object over several lines); depth < 0: compact. */
void zgan_intern_write(const zgan_intern *t, uint32_t id, int depth, FILE *f);
/* A new jansson value for the id. */
json_t *zgan_intern_json(const zgan_intern *t, uint32_t id);

/* ---- one line of JSON as tokens (json.c) ---- */

typedef enum {
    ZGAN_J_NULL,
    ZGAN_J_FALSE,
    ZGAN_J_TRUE,
    ZGAN_J_INT,
    ZGAN_J_REAL,
    ZGAN_J_STRING,
    ZGAN_J_ARRAY,
    ZGAN_J_OBJECT
} zgan_jkind;

#define ZGAN_JNONE UINT32_MAX

/* A value; its children (an object's key and value tokens in turn) follow
 * it, and `next` is the index after them. */
typedef struct {
    uint8_t kind, esc; /* esc: a decoded string (in the document's buffer) */
    uint32_t n;        /* string: bytes; real: bytes of its text; array:
                          elements; object: members */
    uint32_t next;
    uint32_t off;    /* esc: offset in the buffer */
    uint32_t rawlen; /* array, object: bytes of its text */
    const char *s;   /* string: its bytes; real, array, object: its text */
    int64_t i;       /* integer */
    json_t *jv;      /* from jansson: the real, array or object node */
} zgan_jtok;

typedef struct {
    zgan_jtok *t;
    size_t n, cap;
    char *buf; /* decoded strings */
    size_t nbuf, capbuf;
    json_t *root; /* the tree of zgan_json_from_jansson, or NULL */
} zgan_jdoc;

/* Reads one JSON text (len bytes) into d (token 0 is its value); -1 when
 * this parser does not take it (see json.c), which jansson then decides. */
int zgan_json_parse(zgan_jdoc *d, const char *s, size_t len);
/* The tokens of a tree jansson parsed; d keeps root until its next use. */
void zgan_json_from_jansson(zgan_jdoc *d, json_t *root);
/* The value of member `key` of object token obj, or ZGAN_JNONE. */
uint32_t zgan_json_get(const zgan_jdoc *d, uint32_t obj, const char *key);
void zgan_json_free(zgan_jdoc *d);

/* ---- reading (reader.c) ---- */

/* zgan_read_file, the file read in `nparts` parts in parallel (0: as many
 * as it has processors, for a file of at least 8 MB per part; 1: in one
 * pass).  The history, or the error, is the same for every nparts. */
int zgan_read_file_parts(const char *path, int nparts, zgan_history **out, char *errbuf,
                         size_t errlen);

/* ---- records ---- */

typedef struct {
    uint32_t off, len;
} zgan_span;

typedef struct {
    uint32_t cell, value;
} zgan_pair;

enum {
    ZGAN_HAS_READ_TIME = 1u << 0,
    ZGAN_HAS_WRITE_TIME = 1u << 1,
    ZGAN_ABORTED = 1u << 2,
    ZGAN_HAS_READ_REG = 1u << 3,  /* read_registry or tools_visible_at_read */
    ZGAN_HAS_WRITE_REG = 1u << 4, /* write_registry or tools_used */
    ZGAN_HAS_TXN = 1u << 5,       /* an explicit `txn` key */
};

typedef struct {
    uint32_t line;         /* 1-based line of the record in its file */
    uint32_t flags;        /* ZGAN_HAS_* / ZGAN_ABORTED */
    uint32_t agent;        /* ZGAN_NULL when absent */
    uint32_t id;           /* txn id (or record number, see reader.c); ZGAN_NONE */
    uint32_t planned_tool; /* ZGAN_NULL when absent */
    int64_t read_time, write_time;
    zgan_span reads;                      /* pairs: distinct cells read, with the values read */
    zgan_span writes;                     /* pairs: distinct cells written, with the values */
    zgan_span io, co;                     /* pairs: issuance and commit order */
    zgan_span read_reg, write_reg, preds; /* ids */
} zgan_record;

struct zgan_history {
    char *name;
    zgan_intern strings;
    zgan_record *rec;
    size_t nrec, caprec;
    zgan_pair *pairs;
    size_t npairs, cappairs;
    uint32_t *ids;
    size_t nids, capids;
    bool provenance; /* some record has `preds` */
};

static inline const zgan_pair *zgan_pairs(const zgan_history *h, zgan_span s)
{
    return h->pairs + s.off;
}
static inline const uint32_t *zgan_ids(const zgan_history *h, zgan_span s)
{
    return h->ids + s.off;
}

/* ---- reports ---- */

void zgan_report_init(zgan_report *r);
void zgan_report_add(zgan_report *r, zgan_kind k, zgan_witness w);
zgan_witness zgan_witness_none(void);

/* fast detectors, one per predicate (detect.c, detect_a1.c) */
void zgan_detect_a1(const zgan_history *h, bool same_agent, zgan_report *r);
void zgan_detect_a2(const zgan_history *h, zgan_report *r);
void zgan_detect_a3_precise(const zgan_history *h, zgan_report *r);
void zgan_detect_a3_residue(const zgan_history *h, zgan_report *r);
void zgan_detect_a6(const zgan_history *h, bool any_diff, zgan_report *r);

/* the oracle, one per predicate (oracle.c, library zgc_anomalies_oracle) */
void zgan_oracle_a1(const zgan_history *h, bool same_agent, zgan_report *r);
void zgan_oracle_a2(const zgan_history *h, zgan_report *r);
void zgan_oracle_a3_precise(const zgan_history *h, zgan_report *r);
void zgan_oracle_a3_residue(const zgan_history *h, zgan_report *r);
void zgan_oracle_a6(const zgan_history *h, bool any_diff, zgan_report *r);

/* ---- output (output.c) ---- */

typedef struct {
    size_t histories;
    size_t with[ZGAN_NKINDS];
    size_t levels[5];
} zgan_summary;

void zgan_summary_add(zgan_summary *s, const zgan_report *r);
void zgan_print_text(FILE *f, const zgan_history *h, const zgan_report *r);
void zgan_print_summary(FILE *f, const zgan_summary *s);
json_t *zgan_file_json(const zgan_history *h, const zgan_report *r);
json_t *zgan_summary_json(const zgan_summary *s, json_t *files);
/* The same, written as json_dumpf(JSON_INDENT(2)) writes those trees:
 * the object of one file as a value at depth d (2 in the document), and
 * the document around the `nfiles` file objects already written into
 * files[0, len) (each after a comma but the first, and a newline and 4
 * spaces). */
void zgan_write_file_json(FILE *f, const zgan_history *h, const zgan_report *r, int d);
void zgan_write_summary_json(FILE *f, const zgan_summary *s, const char *files, size_t nfiles,
                             size_t len);

#endif
