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

/* The --json report written as it goes is the bytes of jansson's dump of
 * the report as a tree. */
static void t_same_json(const zgan_history *h, const zgan_report *r)
{
    json_t *tree = zgan_file_json(h, r);
    char *want = json_dumps(tree, JSON_INDENT(2));
    json_decref(tree);
    membuf got = {0};
    got.f = open_memstream(&got.s, &got.len);
    fputs("\n    ", got.f); /* as the document's files array puts it */
    zgan_write_file_json(got.f, h, r, 2);
    fclose(got.f);
    /* the tree is dumped at depth 0: indent it as at depth 2 */
    membuf w = {0};
    w.f = open_memstream(&w.s, &w.len);
    fputs("\n    ", w.f);
    for (const char *c = want; *c; c++) {
        fputc(*c, w.f);
        if (*c == '\n') fputs("    ", w.f);
    }
    fclose(w.f);
    cr_assert_str_eq(got.s, w.s);
    free(want);
    free(got.s);
    free(w.s);
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
                if (!same && !any) t_same_json(h, &fast);
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

/* Writes `text` to a new file in `dir`. */
static char *write_file(const char *dir, const char *name, const char *text, size_t len)
{
    char *path = NULL;
    cr_assert_gt(asprintf(&path, "%s/%s", dir, name), 0);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(text, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
    return path;
}

static bool same_span(zgan_span a, zgan_span b) { return a.off == b.off && a.len == b.len; }

/* Whether two histories are the same: records, pools and ids (texts and
 * display kinds) alike. */
static bool same_history(const zgan_history *a, const zgan_history *b)
{
    if (a->nrec != b->nrec || a->npairs != b->npairs || a->nids != b->nids ||
        a->provenance != b->provenance || a->strings.n != b->strings.n)
        return false;
    for (size_t i = 0; i < a->nrec; i++) { /* field by field: not the padding */
        const zgan_record *x = &a->rec[i], *y = &b->rec[i];
        if (x->line != y->line || x->flags != y->flags || x->agent != y->agent || x->id != y->id ||
            x->planned_tool != y->planned_tool || x->read_time != y->read_time ||
            x->write_time != y->write_time || !same_span(x->reads, y->reads) ||
            !same_span(x->writes, y->writes) || !same_span(x->io, y->io) ||
            !same_span(x->co, y->co) || !same_span(x->read_reg, y->read_reg) ||
            !same_span(x->write_reg, y->write_reg) || !same_span(x->preds, y->preds))
            return false;
    }
    if (memcmp(a->pairs, b->pairs, a->npairs * sizeof *a->pairs) ||
        memcmp(a->ids, b->ids, a->nids * sizeof *a->ids))
        return false;
    for (size_t i = 0; i < a->strings.n; i++) {
        const zgan_entry *x = &a->strings.entries[i], *y = &b->strings.entries[i];
        if (x->kind != y->kind || x->len != y->len ||
            memcmp(a->strings.chars + x->off, b->strings.chars + y->off, x->len))
            return false;
    }
    return true;
}

/* Large histories are read in parts and checked on several threads: the
 * history (ids included, through the printed reports), the witnesses and
 * the errors are those of one thread reading in one pass, for any number
 * of parts, with blank lines, CRLF, long lines, escapes and values that
 * are not strings (nested arrays, objects, reals) scattered through. */
Test(property, parts_and_threads_change_nothing)
{
    rng r = {99};
    const shape sh = {.agents = 6, .cells = 12, .values = 5, .times = 4000, .tools = 3};
    char *dir = t_tmpdir();
    for (int round = 0; round < 2; round++) {
        membuf t = {0};
        t.f = open_memstream(&t.s, &t.len);
        int txn_mode = round == 0 ? 1 : 0;
        unsigned n = 40000;
        for (unsigned i = 0; i < n; i++) {
            switch (pick(&r, 400)) {
            case 0: fputs("\n", t.f); break;
            case 1: fputs("  \r\n", t.f); break;
            case 2:
                fprintf(t.f,
                        "{\"agent\":\"a\\u00e9\\n%u\",\"read_set\":[\"c1\"],\"read_values\":"
                        "{\"c1\":[1,{\"k\":[2.5,\"x,y\"],\"b\":{}},[]]},\"read_time\":%u,"
                        "\"write_time\":%u,\"write_values\":{\"c2\":1.25e3}}\r\n",
                        i, i % 4000, i % 4000 + 3);
                continue;
            default: break;
            }
            record(&r, &sh, t.f, i, n, txn_mode);
        }
        fclose(t.f);
        if (round == 1) { /* no newline at the end */
            cr_assert_gt(t.len, 0);
            t.s[--t.len] = '\0';
        }
        char *path = write_file(dir, "h.jsonl", t.s, t.len);
        zgan_options opt = {.a3 = ZGAN_A3_AUTO};
        char err[512];
        zgan_history *want = NULL;
        zgan_report want_r;
        for (int parts = 1; parts <= 3; parts++) {
            zgan_history *h = NULL;
            zgan_set_threads(parts);
            cr_assert_eq(zgan_read_file_parts(path, parts, &h, err, sizeof err), 0, "%s", err);
            zgan_report got_r;
            zgan_detect(h, &opt, &got_r);
            if (parts == 1) {
                want = h;
                want_r = got_r;
                cr_assert_gt(want_r.n[ZGAN_A1], 100, "A1 witnesses: %zu", want_r.n[ZGAN_A1]);
                cr_assert_gt(h->nrec, 39000);
                continue;
            }
            char why[512];
            cr_assert(same_history(h, want), "%d parts: the histories differ", parts);
            cr_assert(t_same_report(&got_r, &want_r, why, sizeof why), "%d parts: %s", parts, why);
            zgan_report_free(&got_r);
            zgan_history_free(h);
        }
        zgan_set_threads(0);
        zgan_history_free(want);
        zgan_report_free(&want_r);

        /* an error in a late part: the message of the one-pass reader */
        char *bad = t.s + t.len * 4 / 5;
        while (*bad != '\n') bad++;
        memcpy(bad + 1, "{\"txn\":[", 8);
        free(path);
        path = write_file(dir, "h.jsonl", t.s, t.len);
        char err1[512], err4[512];
        zgan_history *h = NULL;
        cr_assert_eq(zgan_read_file_parts(path, 1, &h, err1, sizeof err1), -1);
        cr_assert_eq(zgan_read_file_parts(path, 4, &h, err4, sizeof err4), -1);
        cr_assert_null(h);
        cr_assert_str_eq(err4, err1);
        cr_assert(strstr(err1, "h.jsonl:") && strstr(err1, "error:"), "%s", err1);
        free(path);
        free(t.s);
    }
    t_rmtree(dir);
    free(dir);
}

/* Values that are not strings (nested arrays and objects, reals, empty
 * ones), escapes and integer txn ids in every kind of witness, --json
 * written as it goes against jansson's dump of the tree. */
Test(property, json_of_unusual_values)
{
    static const char text[] =
        "{\"txn\":1,\"agent\":\"a\\\"\\u0001\",\"read_set\":[\"c\"],\"read_values\":"
        "{\"c\":[1,{\"k\":[2.5,\"x,y:\"],\"b\":{}},[],{}]},\"read_time\":0,\"write_time\":9,"
        "\"planned_tool\":\"t\",\"read_registry\":[\"t\"],\"write_registry\":[],"
        "\"io\":[[\"c\",{\"z\":[]}],[\"d\",2]],\"co\":[[\"d\",2],[\"c\",{\"z\":[]}]],\"preds\":[2]}"
        "\n"
        "{\"txn\":2,\"agent\":\"b\",\"write_set\":[\"c\"],\"write_values\":{\"c\":-1.5e-7},"
        "\"write_time\":3,\"aborted\":true}\n";
    zgan_history *h = t_load(text);
    zgan_options opt = {.a3 = ZGAN_A3_AUTO};
    zgan_report r;
    t_detect(h, &opt, &r);
    for (int k = 0; k < ZGAN_NKINDS; k++) cr_assert_gt(r.n[k], 0, "%s", t_kind(k));
    t_same_json(h, &r);
    zgan_report_free(&r);
    opt.a3 = ZGAN_A3_RESIDUE;
    t_detect(h, &opt, &r);
    t_same_json(h, &r);
    zgan_report_free(&r);
    zgan_history_free(h);
}
