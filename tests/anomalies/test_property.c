/* Property: on random histories the fast detectors return exactly the
 * oracle's report — counts, witnesses and their order, level — under every
 * combination of options.  Histories are written as JSON text and go
 * through the reader, with few agents, cells, values and times so that
 * windows, ties, repeated values and permutations collide often. */
#include "helpers.h"

typedef struct {
    uint64_t s;
} rng;

static uint64_t next(rng *r)
{ /* splitmix64 */
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static unsigned pick(rng *r, unsigned n) { return (unsigned)(next(r) % n); }
static bool chance(rng *r, unsigned percent) { return pick(r, 100) < percent; }

typedef struct {
    char *s;
    size_t len;
    FILE *f;
} membuf;

typedef struct {
    unsigned agents, cells, values, times, tools;
} shape;

static void cell(rng *r, const shape *sh, FILE *f) { fprintf(f, "\"c%u\"", pick(r, sh->cells)); }

static void value(rng *r, const shape *sh, FILE *f)
{
    unsigned v = pick(r, sh->values + 1);
    if (v == sh->values)
        fputs(chance(r, 50) ? "null" : "\"NULL\"", f);
    else if (chance(r, 20))
        fprintf(f, "%u", v); /* the same value as the string "v" below */
    else
        fprintf(f, "\"%u\"", v);
}

static void cell_list(rng *r, const shape *sh, FILE *f, unsigned max)
{
    unsigned n = pick(r, max + 1);
    fputc('[', f);
    for (unsigned i = 0; i < n; i++) {
        if (i) fputc(',', f);
        cell(r, sh, f);
    }
    fputc(']', f);
}

static void value_map(rng *r, const shape *sh, FILE *f)
{
    unsigned n = pick(r, sh->cells + 2);
    bool object = chance(r, 60);
    fputc(object ? '{' : '[', f);
    bool used[16] = {false};
    unsigned written = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned c = pick(r, sh->cells);
        if (object && used[c]) continue; /* objects cannot repeat a key */
        used[c] = true;
        if (written++) fputc(',', f);
        if (object)
            fprintf(f, "\"c%u\":", c);
        else
            fprintf(f, "[\"c%u\",", c);
        value(r, sh, f);
        if (!object) fputc(']', f);
    }
    fputc(object ? '}' : ']', f);
}

static void sequence(rng *r, const shape *sh, FILE *f, unsigned *cells, unsigned *vals, unsigned n)
{
    fputc('[', f);
    for (unsigned i = 0; i < n; i++)
        fprintf(f, "%s[\"c%u\",\"%u\"]", i ? "," : "", cells[i], vals[i]);
    fputc(']', f);
    (void)r;
    (void)sh;
}

/* io, and a co that is equal, a permutation, or something else. */
static void effects(rng *r, const shape *sh, FILE *f)
{
    unsigned n = pick(r, 5), cells[8], vals[8];
    for (unsigned i = 0; i < n; i++) {
        cells[i] = pick(r, sh->cells);
        vals[i] = pick(r, 2);
    }
    fputs(",\"io\":", f);
    sequence(r, sh, f, cells, vals, n);
    if (chance(r, 15)) return; /* no co */
    unsigned m = n;
    switch (pick(r, 4)) {
    case 0: /* equal */ break;
    case 1: /* shuffled (maybe into the same order) */
        for (unsigned i = n; i > 1; i--) {
            unsigned j = pick(r, i), c = cells[i - 1], v = vals[i - 1];
            cells[i - 1] = cells[j], vals[i - 1] = vals[j];
            cells[j] = c, vals[j] = v;
        }
        break;
    case 2: /* one element changed */
        if (n) vals[pick(r, n)] ^= 1;
        break;
    default: /* one more or one fewer */
        if (n && chance(r, 50))
            m = n - 1;
        else
            cells[m] = pick(r, sh->cells), vals[m] = pick(r, 2), m++;
        break;
    }
    fputs(",\"co\":", f);
    sequence(r, sh, f, cells, vals, m);
}

static void tool_list(rng *r, const shape *sh, FILE *f)
{
    fputc('[', f);
    unsigned n = pick(r, sh->tools + 1);
    for (unsigned i = 0; i < n; i++) fprintf(f, "%s\"t%u\"", i ? "," : "", pick(r, sh->tools));
    fputc(']', f);
}

static void record(rng *r, const shape *sh, FILE *f, unsigned index, unsigned nrec, int txn_mode)
{
    fputc('{', f);
    fputs("\"kind\":\"op\"", f); /* an unknown key, ignored */
    if (chance(r, 90)) fprintf(f, ",\"agent\":\"a%u\"", pick(r, sh->agents));
    if (chance(r, 90)) {
        int rt = (int)pick(r, sh->times);
        fprintf(f, ",\"read_time\":%d", rt);
        if (chance(r, 90)) fprintf(f, ",\"write_time\":%d", rt + (int)pick(r, sh->times));
    } else if (chance(r, 50)) {
        fprintf(f, ",\"write_time\":%u", pick(r, sh->times));
    }
    if (chance(r, 85)) {
        fputs(",\"read_set\":", f);
        cell_list(r, sh, f, sh->cells + 1);
    }
    if (chance(r, 85)) {
        fputs(",\"read_values\":", f);
        value_map(r, sh, f);
    }
    if (chance(r, 85)) {
        fputs(",\"write_set\":", f);
        cell_list(r, sh, f, sh->cells);
    }
    if (chance(r, 85)) {
        fputs(",\"write_values\":", f);
        value_map(r, sh, f);
    }
    if (chance(r, 40)) effects(r, sh, f);
    if (chance(r, 50)) {
        if (chance(r, 80))
            fprintf(f, ",\"planned_tool\":\"t%u\"", pick(r, sh->tools));
        else
            fputs(",\"planned_tool\":\"NULL\"", f);
        static const char *const reg[] = {"read_registry", "tools_visible_at_read",
                                          "write_registry", "tools_used"};
        for (int k = 0; k < 4; k++)
            if (chance(r, 60)) {
                fprintf(f, ",\"%s\":", reg[k]);
                tool_list(r, sh, f);
            }
    }
    /* txn_mode 0: none; 1: all; 2: some */
    if (txn_mode == 1 || (txn_mode == 2 && chance(r, 60))) {
        if (chance(r, 50))
            fprintf(f, ",\"txn\":%u", index);
        else
            fprintf(f, ",\"txn\":\"%u\"", index);
    }
    if (chance(r, 60)) {
        fputs(",\"preds\":[", f);
        unsigned n = pick(r, 4);
        for (unsigned i = 0; i < n; i++)
            fprintf(f, "%s%u", i ? "," : "", pick(r, nrec + 2)); /* some dangle */
        fputc(']', f);
    }
    if (chance(r, 60)) fprintf(f, ",\"aborted\":%s", chance(r, 30) ? "true" : "false");
    fputs("}\n", f);
}

static char *history(rng *r, const shape *sh, unsigned nrec)
{
    membuf t = {0};
    t.f = open_memstream(&t.s, &t.len);
    int txn_mode = (int)pick(r, 3);
    for (unsigned i = 0; i < nrec; i++) record(r, sh, t.f, i, nrec, txn_mode);
    fclose(t.f);
    return t.s;
}

/* Checks fast == oracle under all 12 option combinations; returns the
 * number of (history, options) pairs in which each anomaly fired. */
static void check_all_options(const char *text, size_t fired[ZGAN_NKINDS])
{
    zgan_history *h = t_load(text);
    const zgan_a3_mode modes[] = {ZGAN_A3_AUTO, ZGAN_A3_PRECISE, ZGAN_A3_RESIDUE};
    for (int m = 0; m < 3; m++)
        for (int same = 0; same < 2; same++)
            for (int any = 0; any < 2; any++) {
                zgan_options opt = {.a3 = modes[m], .a1_same_agent = same, .a6_any_diff = any};
                zgan_report fast, slow;
                char why[512];
                zgan_detect(h, &opt, &fast);
                zgan_oracle(h, &opt, &slow);
                bool same_report = t_same_report(&fast, &slow, why, sizeof why);
                cr_assert(same_report, "options a3=%d same_agent=%d any_diff=%d: %s\nhistory:\n%s",
                          m, same, any, why, text);
                for (int k = 0; k < ZGAN_NKINDS; k++) fired[k] += fast.n[k] > 0;
                zgan_report_free(&fast);
                zgan_report_free(&slow);
            }
    zgan_history_free(h);
}

Test(property, small_random_histories_match_oracle)
{
    rng r = {20240611};
    size_t fired[ZGAN_NKINDS] = {0};
    const shape sh = {.agents = 2, .cells = 2, .values = 2, .times = 5, .tools = 2};
    for (int i = 0; i < 10000; i++) {
        char *t = history(&r, &sh, pick(&r, 9));
        check_all_options(t, fired);
        free(t);
    }
    /* the generator must exercise every predicate, both ways */
    for (int k = 0; k < ZGAN_NKINDS; k++) {
        cr_assert_gt(fired[k], 1000, "%s fired too rarely (%zu)", t_kind(k), fired[k]);
        cr_assert_lt(fired[k], 10000 * 12 - 1000, "%s fired too often (%zu)", t_kind(k), fired[k]);
    }
}

Test(property, wider_random_histories_match_oracle)
{
    rng r = {77};
    size_t fired[ZGAN_NKINDS] = {0};
    const shape sh = {.agents = 3, .cells = 4, .values = 3, .times = 12, .tools = 3};
    for (int i = 0; i < 1500; i++) {
        char *t = history(&r, &sh, 5 + pick(&r, 20));
        check_all_options(t, fired);
        free(t);
    }
}

/* Long per-cell write lists with few agents and values: long runs of
 * non-qualifying writes inside one window, exercising the galloping and
 * bisection of the A1 search. */
Test(property, long_windows_match_oracle)
{
    rng r = {4242};
    const shape sh = {.agents = 2, .cells = 1, .values = 2, .times = 40, .tools = 1};
    size_t fired[ZGAN_NKINDS] = {0};
    for (int i = 0; i < 150; i++) {
        char *t = history(&r, &sh, 60 + pick(&r, 140));
        check_all_options(t, fired);
        free(t);
    }
    cr_assert_gt(fired[ZGAN_A1], 0);
}
