/* gen.c — synthetic operation histories for the anomaly benchmark.
 *
 *   gen N SEED > history.jsonl
 *
 * N operations by 16 agents over 256 cells and 8 values.  Operation i
 * reads 1-3 cells at logical time i — the values current at that time —
 * generates for 1-64 time steps, and commits 1-2 writes at i + duration.
 * Writes become visible in commit order, so reads are snapshot-consistent
 * and stale generations arise only from overlapping windows, as in the
 * paper's model.  Besides: a planned tool that sometimes disappears from
 * the registry (A2), preds naming the last writers of the cells read, with
 * rare operations retracted after commit without cascading (A3), and
 * issuance/commit orders that are sometimes reversed (A6), and rare reads
 * of values supplied from outside the store (which only the A3 residue
 * reports). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { AGENTS = 16, CELLS = 256, VALUES = 8, MAXDUR = 64, TOOLS = 4 };

static uint64_t state;

static uint64_t next(void)
{ /* splitmix64 */
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static unsigned pick(unsigned n) { return (unsigned)(next() % n); }

typedef struct {
    unsigned cell, value;
    long writer; /* operation index */
} pending;

/* Writes waiting to commit, bucketed by commit time modulo MAXDUR + 1. */
typedef struct {
    pending *v;
    size_t n, cap;
} bucket;

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: gen N SEED\n");
        return 2;
    }
    long n = atol(argv[1]);
    state = strtoull(argv[2], NULL, 10);
    int memory[CELLS];
    long last_writer[CELLS];
    for (int c = 0; c < CELLS; c++) memory[c] = -1, last_writer[c] = -1;
    bucket buckets[MAXDUR + 1];
    memset(buckets, 0, sizeof buckets);
    char *aborted = calloc((size_t)n + 1, 1);

    for (long i = 0; i < n; i++) {
        /* commit everything due at time i */
        bucket *due = &buckets[i % (MAXDUR + 1)];
        for (size_t k = 0; k < due->n; k++) {
            memory[due->v[k].cell] = (int)due->v[k].value;
            last_writer[due->v[k].cell] = due->v[k].writer;
        }
        due->n = 0;

        unsigned agent = pick(AGENTS), dur = 1 + pick(MAXDUR);
        unsigned nr = 1 + pick(3), nw = 1 + pick(2), rc[3], wc[2], wv[2];
        for (unsigned k = 0; k < nr; k++) /* distinct cells */
            for (int fresh = 0; !fresh;) {
                rc[k] = pick(CELLS);
                fresh = 1;
                for (unsigned m = 0; m < k; m++) fresh &= rc[m] != rc[k];
            }
        for (unsigned k = 0; k < nw; k++) {
            wc[k] = pick(CELLS);
            wv[k] = pick(VALUES);
        }
        if (nw == 2 && wc[1] == wc[0]) nw = 1;
        aborted[i] = pick(1000) == 0;

        printf("{\"txn\":%ld,\"agent\":\"agent%u\",\"read_set\":[", i, agent);
        for (unsigned k = 0; k < nr; k++) printf("%s\"cell%u\"", k ? "," : "", rc[k]);
        printf("],\"read_values\":{");
        for (unsigned k = 0; k < nr; k++) {
            fputs(k ? "," : "", stdout);
            if (pick(1000) == 0) /* supplied from outside the store */
                printf("\"cell%u\":\"external\"", rc[k]);
            else if (memory[rc[k]] < 0)
                printf("\"cell%u\":\"NULL\"", rc[k]);
            else
                printf("\"cell%u\":\"v%d\"", rc[k], memory[rc[k]]);
        }
        printf("},\"read_time\":%ld,\"write_set\":[", i);
        for (unsigned k = 0; k < nw; k++) printf("%s\"cell%u\"", k ? "," : "", wc[k]);
        printf("],\"write_values\":{");
        for (unsigned k = 0; k < nw; k++)
            printf("%s\"cell%u\":\"v%u\"", k ? "," : "", wc[k], wv[k]);
        printf("},\"write_time\":%ld", i + dur);

        unsigned tool = pick(TOOLS);
        printf(",\"planned_tool\":\"tool%u\",\"read_registry\":[\"tool0\",\"tool1\",\"tool2\","
               "\"tool3\"],\"write_registry\":[",
               tool);
        unsigned removed = pick(200) == 0 ? tool : TOOLS; /* removed mid-generation */
        for (unsigned t = 0, first = 1; t < TOOLS; t++)
            if (t != removed) {
                printf("%s\"tool%u\"", first ? "" : ",", t);
                first = 0;
            }
        printf("]");

        int reorder = nw == 2 && pick(500) == 0;
        printf(",\"io\":[");
        for (unsigned k = 0; k < nw; k++)
            printf("%s[\"cell%u\",\"v%u\"]", k ? "," : "", wc[k], wv[k]);
        printf("],\"co\":[");
        for (unsigned k = 0; k < nw; k++) {
            unsigned m = reorder ? nw - 1 - k : k;
            printf("%s[\"cell%u\",\"v%u\"]", k ? "," : "", wc[m], wv[m]);
        }
        printf("]");

        /* causal predecessors: the last committed writers of the cells read */
        printf(",\"preds\":[");
        for (unsigned k = 0, first = 1; k < nr; k++)
            if (last_writer[rc[k]] >= 0) {
                printf("%s%ld", first ? "" : ",", last_writer[rc[k]]);
                first = 0;
            }
        printf("],\"aborted\":%s}\n", aborted[i] ? "true" : "false");

        /* an aborted operation commits too and is retracted later, without
     * cascading: its readers keep it as a predecessor (A3) */
        bucket *b = &buckets[(i + dur) % (MAXDUR + 1)];
        for (unsigned k = 0; k < nw; k++) {
            if (b->n == b->cap) {
                b->cap = b->cap ? 2 * b->cap : 16;
                b->v = realloc(b->v, b->cap * sizeof *b->v);
                if (!b->v) return 1;
            }
            b->v[b->n++] = (pending){wc[k], wv[k], i};
        }
    }
    for (int k = 0; k <= MAXDUR; k++) free(buckets[k].v);
    free(aborted);
    return 0;
}
