/* test_fmt.c — the formatter: on every .zg file of the repository and on
 * random workflows (tests/gen), the layout keeps the syntax tree, keeps
 * every comment, is idempotent and does not depend on the white space it
 * was given; golden layouts for the tricky cases (tests/fmt/cases). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "grammar.h"
#include "zggen.h"

#ifndef ZGC_SOURCE_DIR
#error "ZGC_SOURCE_DIR is the repository's root"
#endif

/* Formats text; NULL when it does not parse (diagnostics to /dev/null). */
static char *format(const char *name, const char *text, size_t len)
{
    FILE *devnull = fopen("/dev/null", "w");
    cr_assert(devnull);
    ZBuf out = {0};
    zu_buf_puts(&out, "");
    bool ok = zf_format(name, text, len, devnull, &out);
    fclose(devnull);
    if (!ok) {
        zu_buf_free(&out);
        return NULL;
    }
    return out.data;
}

static ZProgram *parse(ZArena *a, const char *name, const char *text)
{
    ZSource *src = zu_alloc(a, sizeof *src);
    src->path = name;
    src->text = zu_strdup(a, text);
    src->len = strlen(text);
    FILE *devnull = fopen("/dev/null", "w");
    ZDiag d;
    zd_init(&d, src, devnull);
    ZProgram *p = zp_parse(a, src, &d);
    fclose(devnull);
    cr_assert_eq(d.errors, 0, "%s does not parse", name);
    return p;
}

/* The comments of text, in order, joined by newlines. */
static char *comments(ZArena *a, const char *text)
{
    ZSource src = {.path = "c", .text = text, .len = strlen(text)};
    FILE *devnull = fopen("/dev/null", "w");
    ZDiag d;
    zd_init(&d, &src, devnull);
    ZVec v = zp_tokenize_trivia(a, &src, &d);
    fclose(devnull);
    ZBuf b = {0};
    zu_buf_puts(&b, "");
    for (int i = 0; i < v.len; i++)
        if (zp_is_comment(v.items[i])) {
            zu_buf_puts(&b, ((ZToken *)v.items[i])->text);
            zu_buf_putc(&b, '\n');
        }
    char *s = zu_strdup(a, b.data);
    zu_buf_free(&b);
    return s;
}

/* What every formatted source must satisfy.  Returns the formatted text
 * (malloc'd) or NULL when the source does not parse. */
static char *check_one(const char *name, const char *text)
{
    char *once = format(name, text, strlen(text));
    if (!once) return NULL;
    ZArena *a = zu_arena_new();
    ZBuf why = {0};
    bool same = zf_same_program(parse(a, name, text), parse(a, name, once), &why);
    cr_assert(same, "%s: the formatted program differs: %s", name, why.data);
    zu_buf_free(&why);
    cr_assert_str_eq(comments(a, text), comments(a, once), "%s: comments lost or changed", name);
    char *twice = format(name, once, strlen(once));
    cr_assert(twice, "%s: the formatted text does not parse", name);
    cr_assert_str_eq(once, twice, "%s: not idempotent", name);
    free(twice);
    /* no line longer than the width unless one token makes it so, no
     * trailing blanks, one final newline */
    for (const char *l = once; *l;) {
        const char *e = strchr(l, '\n');
        cr_assert(e, "%s: no final newline", name);
        cr_assert(e == l || e[-1] != ' ', "%s: trailing blank", name);
        l = e + 1;
    }
    zu_arena_free(a);
    return once;
}

/* ---- every .zg file of the repository -------------------------------------- */

static int n_files, n_parsed;

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    const char *base = path + ftw->base;
    if (type == FTW_D &&
        (base[0] == '.' || !strncmp(base, "build", 5) || !strcmp(base, "node_modules")))
        return FTW_SKIP_SUBTREE;
    size_t n = strlen(path);
    if (type != FTW_F || n < 3 || strcmp(path + n - 3, ".zg")) return FTW_CONTINUE;
    size_t len;
    const char *err;
    char *text = zu_read_file(path, &len, &err);
    cr_assert(text, "%s: %s", path, err);
    n_files++;
    char *out = check_one(path, text);
    if (out) n_parsed++;
    /* the rejected programs of tests/fail are the only ones allowed not
     * to parse (those with syntax errors) */
    cr_assert(out || strstr(path, "/tests/fail/") || strstr(path, "/tests/fuzz/"),
              "%s does not parse", path);
    free(out);
    free(text);
    return FTW_CONTINUE;
}

Test(fmt, repository)
{
    cr_assert_eq(nftw(ZGC_SOURCE_DIR, visit, 32, FTW_PHYS | FTW_ACTIONRETVAL), 0);
    cr_assert_gt(n_files, 100, "only %d .zg files found", n_files);
    cr_assert_gt(n_parsed, 80, "only %d of %d .zg files parse", n_parsed, n_files);
}

/* ---- random workflows -------------------------------------------------------- */

/* The source with the white space between tokens redrawn: a space, a
 * newline or a run of blanks, at random (no blank line). */
static char *respace(ZArena *a, const char *text, uint64_t *seed)
{
    ZSource src = {.path = "g", .text = text, .len = strlen(text)};
    ZDiag d;
    FILE *devnull = fopen("/dev/null", "w");
    zd_init(&d, &src, devnull);
    ZVec v = zp_tokenize_trivia(a, &src, &d);
    fclose(devnull);
    ZBuf b = {0};
    zu_buf_puts(&b, "");
    for (int i = 0; i < v.len; i++) {
        ZToken *t = v.items[i];
        *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
        unsigned r = (unsigned)(*seed >> 33) % 4;
        /* a line comment needs its newline */
        if (i && zp_is_comment(v.items[i - 1]) && ((ZToken *)v.items[i - 1])->text[1] == '/') r = 1;
        zu_buf_puts(&b, r == 0 ? " " : r == 1 ? "\n" : r == 2 ? "   " : "\n\t ");
        zu_buf_puts(&b, t->text);
    }
    zu_buf_putc(&b, '\n');
    char *s = zu_strdup(a, b.data);
    zu_buf_free(&b);
    return s;
}

/* The source with comments after some tokens and before some lines. */
static char *commented(ZArena *a, const char *text, uint64_t *seed)
{
    ZBuf b = {0};
    zu_buf_puts(&b, "");
    int k = 0;
    for (const char *p = text; *p; p++) {
        *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
        unsigned r = (unsigned)(*seed >> 33) % 23;
        if (*p == '\n' && r == 0) zu_buf_printf(&b, " // after %d", k++);
        if (*p == ';' && r == 1) {
            zu_buf_printf(&b, "; /* in %d */", k++);
            continue;
        }
        zu_buf_putc(&b, *p);
        if (*p == '\n' && r == 2) zu_buf_printf(&b, "// own line %d\n", k++);
        if (*p == '\n' && r == 3) zu_buf_printf(&b, "\n/* block %d\n   two lines */\n", k++);
    }
    char *s = zu_strdup(a, b.data);
    zu_buf_free(&b);
    return s;
}

Test(fmt, random_workflows)
{
    ZArena *a = zu_arena_new();
    for (uint64_t seed = 1; seed <= 120; seed++) {
        ZGenOptions o = {.seed = seed,
                         .lifelines = 2 + (int)(seed % 4),
                         .statements = 25,
                         .max_depth = 3,
                         .cpl = true,
                         .parallel = seed % 2 == 0,
                         .rich = seed % 3 != 0,
                         .cpl_full = seed % 5 == 0,
                         .actions = seed % 4 == 1};
        ZBuf g = {0};
        zu_buf_puts(&g, "");
        zggen_program(&g, &o);
        char *name = zu_fmt(a, "zggen seed %llu", (unsigned long long)seed);
        char *canon = check_one(name, g.data);
        cr_assert(canon, "%s does not parse", name);
        /* the layout depends on the tokens only: the same program with
         * its white space redrawn formats the same */
        uint64_t rs = seed;
        for (int round = 0; round < 3; round++) {
            char *m = respace(a, canon, &rs);
            char *again = check_one(name, m);
            cr_assert(again);
            cr_assert_str_eq(again, canon, "%s: white space changed the layout", name);
            free(again);
        }
        /* comments everywhere: kept (check_one compares them), idempotent */
        free(check_one(name, commented(a, canon, &rs)));
        free(canon);
        zu_buf_free(&g);
    }
    zu_arena_free(a);
}

/* ---- golden layouts -------------------------------------------------------------- */

static char *slurp(const char *path)
{
    size_t len;
    const char *err;
    char *s = zu_read_file(path, &len, &err);
    cr_assert(s, "%s: %s", path, err);
    return s;
}

Test(fmt, golden)
{
    const char *dir = ZGC_SOURCE_DIR "/tests/fmt/cases";
    DIR *d = opendir(dir);
    cr_assert(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t k = strlen(e->d_name);
        if (k < 4 || strcmp(e->d_name + k - 3, ".in")) continue;
        char in[4096], want[4096];
        snprintf(in, sizeof in, "%s/%s", dir, e->d_name);
        snprintf(want, sizeof want, "%s/%.*s.out", dir, (int)(k - 3), e->d_name);
        char *src = slurp(in), *expected = slurp(want);
        char *got = check_one(in, src);
        cr_assert(got, "%s does not parse", in);
        if (strcmp(got, expected)) {
            /* ZGC_FMT_UPDATE=1 rewrites the expected layouts */
            if (getenv("ZGC_FMT_UPDATE")) {
                FILE *f = fopen(want, "w");
                cr_assert(f && fputs(got, f) >= 0 && fclose(f) == 0);
            } else {
                cr_assert_str_eq(got, expected, "%s: the layout differs from %s", in, want);
            }
        }
        free(got);
        free(src);
        free(expected);
        n++;
    }
    closedir(d);
    cr_assert_geq(n, 3, "only %d golden layouts", n);
}

/* ---- errors -------------------------------------------------------------------------- */

Test(fmt, unparsable_input_is_refused)
{
    ZBuf out = {0};
    char *diag = NULL;
    size_t dlen = 0;
    FILE *mem = open_memstream(&diag, &dlen);
    cr_assert(mem);
    const char *bad = "lifeline A\nworkflow w() { }\n";
    cr_assert_not(zf_format("bad.zg", bad, strlen(bad), mem, &out));
    fclose(mem);
    cr_assert(strstr(diag, "bad.zg:1:11: error: expected `;`"), "diagnostic: %s", diag);
    cr_assert_eq(out.len, 0, "something was written");
    free(diag);
    zu_buf_free(&out);
}
