/* anomalies.h — shared-state anomaly detectors for operation histories.
 *
 * `zgc anomalies` reads JSON Lines operation histories and decides, for
 * each history, the four anomaly predicates of the concurrency-anomaly
 * catalog (A1 stale-generation, A2 phantom-tool, A3 causal-cascade, A6
 * tool-effect reordering) and the level L0..L4 of the chain
 *
 *     L0 ⊊ L1 ⊊ L2 ⊊ L3 ⊊ L4,   L1 = ¬A1, L2 = L1 ∧ ¬A3,
 *                               L3 = L2 ∧ ¬A6, L4 = L3 ∧ ¬A2.
 *
 * docs/anomalies.md describes the record format, the predicates, the
 * witnesses and the options in plain words.
 *
 * A tool of its own: it includes nothing of the compiler or the runtime,
 * and the driver (driver/main.c) only hands `zgc anomalies` over to
 * zgan_main.  Modules (all external symbols start with zgan_; internal.h
 * holds the data layout they share):
 *
 *   util.c       checked allocation
 *   intern.c     interning of cells, values, agents, tools and txn ids
 *   reader.c     JSON Lines -> zgan_history (never crashes on bad input)
 *   report.c     witnesses, reports, the level, the anomalies' names
 *   detect.c     zgan_detect; fast A2, A3 (precise and residue), A6
 *   detect_a1.c  fast A1: per-cell write lists sorted by time
 *   oracle.c     the quadratic transcription of each definition
 *                (library zgc_anomalies_oracle; tests and bench only)
 *   output.c     text and JSON reports
 *   cli.c        zgan_main: options, paths, directory walk
 *
 * Errors: bad input (unreadable file, malformed record) is a message
 * "NAME:LINE: error: …" returned to the caller, who goes on with the next
 * history and exits 1 at the end; bad usage exits 2; out of memory prints
 * "zgc anomalies: error: out of memory" and exits 1 (util.c).
 */
#ifndef ZGAN_ANOMALIES_H
#define ZGAN_ANOMALIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* "no such id / not applicable" in witnesses and lookups. */
#define ZGAN_NONE UINT32_MAX
/* The interned id of the null value (JSON null or the string "NULL"). */
#define ZGAN_NULL 0u

/* ---------------------------------------------------------------- */
/* Histories                                                        */
/* ---------------------------------------------------------------- */

typedef struct zgan_history zgan_history;

/* Reads one history.  On success returns 0 and stores a new history in
 * *out.  On malformed or unreadable input returns -1, stores nothing, and
 * writes "NAME:LINE: error: ..." (or "NAME: error: ..." when no line is
 * involved) into errbuf (always NUL-terminated when errlen > 0). */
int zgan_read_file(const char *path, zgan_history **out, char *errbuf, size_t errlen);
int zgan_read_buffer(const char *name, const char *buf, size_t len, zgan_history **out,
                     char *errbuf, size_t errlen);
void zgan_history_free(zgan_history *h);

const char *zgan_history_name(const zgan_history *h);
size_t zgan_history_records(const zgan_history *h);
/* Whether any record carries a `preds` key (selects the precise A3). */
bool zgan_history_has_provenance(const zgan_history *h);
/* The interned id of a string id or value, or ZGAN_NONE. */
uint32_t zgan_history_lookup(const zgan_history *h, const char *text);
/* The text an interned id stands for ("NULL" for ZGAN_NULL; a string's
 * contents; an integer's digits; other JSON compactly serialized). */
const char *zgan_history_text(const zgan_history *h, uint32_t id);

/* ---------------------------------------------------------------- */
/* Detection                                                        */
/* ---------------------------------------------------------------- */

typedef enum { ZGAN_A1, ZGAN_A2, ZGAN_A3, ZGAN_A6, ZGAN_NKINDS } zgan_kind;

typedef enum {
    ZGAN_A3_AUTO,    /* precise if any record has `preds`, else residue */
    ZGAN_A3_PRECISE, /* Definition 3: survivor with an aborted predecessor */
    ZGAN_A3_RESIDUE  /* the flat-trace over-approximation */
} zgan_a3_mode;

typedef struct {
    zgan_a3_mode a3;
    /* --a1-same-agent: drop the distinct-agents conjunct of Definition 1,
   * as the published Rust detect_a1 does. */
    bool a1_same_agent;
    /* --a6-any-diff: fire on any record with a non-empty io and co != io,
   * as the published Rust detect_a6 does (no length or permutation test). */
    bool a6_any_diff;
} zgan_options;

/* One witness.  Records are 0-based indices into the history (printed
 * 1-based, as in the paper).  Unused fields are ZGAN_NONE.  Witnesses are
 * listed by record, then in the order of the record's set or list.
 *
 *   A1          one per (reader i, cell c read by i) with a qualifying
 *               writer: record = i, other = the qualifying j with the
 *               smallest (write_time, index), cell = c, value = value i
 *               read, value2 = value j wrote
 *   A2          one per record: record, value = the planned tool
 *   A3 precise  one per (surviving j, aborted p in preds(j)):
 *               record = j, other = p
 *   A3 residue  one per (reader j, cell c): record = j, cell = c,
 *               value = value read
 *   A6          one per record: pos = first index where io and co differ,
 *               cell/value = io[pos], cell2/value2 = co[pos]
 *               (ZGAN_NONE past the end of the shorter sequence) */
typedef struct {
    uint32_t record;
    uint32_t other;
    uint32_t pos;
    uint32_t cell;
    uint32_t value;
    uint32_t cell2;
    uint32_t value2;
} zgan_witness;

typedef struct {
    zgan_witness *w[ZGAN_NKINDS];
    size_t n[ZGAN_NKINDS];
    zgan_a3_mode a3_used; /* ZGAN_A3_PRECISE or ZGAN_A3_RESIDUE */
    int level;            /* 0..4 */
} zgan_report;

/* The fast detectors (O(n log n) for A1, linear for the others). */
void zgan_detect(const zgan_history *h, const zgan_options *opt, zgan_report *out);
/* The direct quadratic transcription of each definition (oracle.c, in
 * the separate library zgc_anomalies_oracle).  Same witnesses, same order. */
void zgan_oracle(const zgan_history *h, const zgan_options *opt, zgan_report *out);
void zgan_report_free(zgan_report *r);
/* Level from the anomaly counts: L0 if A1, L1 if A3, L2 if A6, L3 if A2,
 * else L4. */
int zgan_level(const size_t n[ZGAN_NKINDS]);
zgan_a3_mode zgan_a3_resolve(const zgan_history *h, zgan_a3_mode mode);
const char *zgan_kind_name(zgan_kind k); /* "A1", "A2", "A3", "A6" */

/* ---------------------------------------------------------------- */
/* Command line                                                     */
/* ---------------------------------------------------------------- */

/* `zgc anomalies ...`: argv[0] is "anomalies".  Returns the exit status:
 * 0 success (anomalies found or not), 1 unreadable or malformed input,
 * 2 bad usage. */
int zgan_main(int argc, char **argv);
/* The same, writing results to `out` and messages to `err`. */
int zgan_run(int argc, char **argv, FILE *out, FILE *err);

#endif
