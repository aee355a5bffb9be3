/* libFuzzer target for `zgc anomalies`: the history reader, the fast
 * detectors (checked against the quadratic oracle on small histories) and
 * both report printers.
 *
 * Build: clang -fsanitize=fuzzer,address,undefined with the sources of
 * anomalies/ (the zgc_anomalies and zgc_anomalies_oracle
 * libraries) and -ljansson.  Seeds: tests/fuzz/corpus/anomalies/. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static bool same_report(const zgan_report *a, const zgan_report *b)
{
    if (a->a3_used != b->a3_used || a->level != b->level) return false;
    for (int k = 0; k < ZGAN_NKINDS; k++)
        if (a->n[k] != b->n[k] ||
            (a->n[k] && memcmp(a->w[k], b->w[k], a->n[k] * sizeof *a->w[k]) != 0))
            return false;
    return true;
}

/* Small enough for the quadratic oracle to stay fast. */
static bool small(const zgan_history *h) { return h->nrec <= 200 && h->npairs <= 2000; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!sink && !(sink = fopen("/dev/null", "w"))) abort();
    zgan_history *h = NULL;
    char err[256];
    if (zgan_read_buffer("fuzz.jsonl", (const char *)data, size, &h, err, sizeof err) < 0) {
        if (h || strncmp(err, "fuzz.jsonl", 10) != 0 || !strstr(err, "error: "))
            abort(); /* every failure is reported as NAME[:LINE]: error: ... */
        return 0;
    }
    /* vary the options with the input */
    unsigned bits = size ? data[size - 1] : 0;
    zgan_options opt = {.a3 = (zgan_a3_mode)(bits % 3),
                        .a1_same_agent = (bits >> 2) & 1,
                        .a6_any_diff = (bits >> 3) & 1};
    zgan_report fast;
    zgan_detect(h, &opt, &fast);
    if (small(h)) {
        zgan_report slow;
        zgan_oracle(h, &opt, &slow);
        if (!same_report(&fast, &slow)) abort();
        zgan_report_free(&slow);
    }
    zgan_print_text(sink, h, &fast);
    json_t *j = zgan_file_json(h, &fast);
    if (!j) abort();
    json_dumpf(j, sink, JSON_COMPACT);
    json_decref(j);
    zgan_report_free(&fast);
    zgan_history_free(h);
    return 0;
}
