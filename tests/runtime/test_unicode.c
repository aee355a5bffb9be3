/* test_unicode.c — upper(), lower() and trim() of the runtime (builtins.c
 * on the tables generated into unicode.c) against ICU, a second
 * implementation of the same Unicode rules (language reference §5.3), for
 * every code point: the full case mappings, the Final_Sigma context of
 * lower(), and the properties White_Space, Cased and Case_Ignorable.  The
 * tables and ICU 72 are both Unicode 15.0; a disagreement is either a
 * mistake in the generator or the lookups, or a newer ICU — then
 * regenerate unicode.c from the same version (scripts/gen-unicode.py). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unicode/uchar.h>
#include <unicode/ustring.h>

#include "helpers.h"

/* The UTF-8 of ICU's root-locale upper or lower case of s[0..n). */
static char *icu_case(const char *s, size_t n, int up, int32_t *outn)
{
    UErrorCode err = U_ZERO_ERROR;
    int32_t n16 = 0, cap = 3 * (int32_t)n + 1, m, n8 = 0;
    UChar *src = malloc(sizeof *src * (n + 1)), *dst = malloc(sizeof *dst * (size_t)cap);
    u_strFromUTF8(src, (int32_t)n + 1, &n16, s, (int32_t)n, &err);
    m = up ? u_strToUpper(dst, cap, src, n16, "", &err)
           : u_strToLower(dst, cap, src, n16, "", &err);
    char *out = malloc((size_t)(4 * m + 1));
    u_strToUTF8(out, 4 * m + 1, &n8, dst, m, &err);
    if (U_FAILURE(err)) n8 = -1;
    free(src);
    free(dst);
    *outn = n8;
    return out;
}

static int put_cp(char *o, UChar32 c)
{
    int32_t k = 0;
    U8_APPEND_UNSAFE(o, k, c);
    return k;
}

/* Disagreements, found in the lifeline's thread, asserted afterwards. */
static long ncases, nbad;
static char first_bad[512];

static void bad(const char *fmt, unsigned long cp)
{
    if (!nbad) snprintf(first_bad, sizeof first_bad, fmt, cp);
    nbad++;
}

/* The runtime's builtin on s[0..n) against ICU. */
static void compare(zgrt_ctx *ctx, int32_t id, const char *s, size_t n, unsigned long block,
                    const char *what)
{
    zgrt_value a = {.tag = ZGRT_STR, .u.s = zri_str(zri_ctx_heap(ctx), s, n)}, out;
    zgrt_builtin(ctx, id, 1, &a, &out, 0);
    int32_t wn;
    char *want = icu_case(s, n, id == ZGRT_BI_UPPER, &wn);
    ncases++;
    if (wn < 0 || out.u.s->len != wn || memcmp(out.u.s->data, want, (size_t)wn) != 0)
        bad(what, block);
    free(want);
}

/* Every code point but the surrogates, in blocks of 256: upper() and
 * lower() of the block, and lower() of a capital sigma next to each code
 * point X of it, in four contexts: "AΣX " (final unless X is cased, or
 * case-ignorable and followed by a cased letter: it is not), "XΣ " (final
 * when X is cased), "AXΣ " (X case-ignorable: skipped) and "AΣXB" (not
 * final when X is case-ignorable). */
static void unicode_body(zgrt_ctx *ctx)
{
    static char buf[256 * 12 + 8];
    for (UChar32 base = 0; base <= 0x10ffff; base += 256) {
        for (int ctxk = 0; ctxk < 5; ctxk++) {
            int n = 0;
            for (UChar32 c = base; c < base + 256; c++) {
                if (c >= 0xd800 && c <= 0xdfff) continue;
                switch (ctxk) {
                case 0: n += put_cp(buf + n, c); break;
                case 1:
                    n += put_cp(buf + n, 'A');
                    n += put_cp(buf + n, 0x03a3);
                    n += put_cp(buf + n, c);
                    buf[n++] = ' ';
                    break;
                case 2:
                    n += put_cp(buf + n, c);
                    n += put_cp(buf + n, 0x03a3);
                    buf[n++] = ' ';
                    break;
                case 3:
                    n += put_cp(buf + n, 'A');
                    n += put_cp(buf + n, c);
                    n += put_cp(buf + n, 0x03a3);
                    buf[n++] = ' ';
                    break;
                default:
                    n += put_cp(buf + n, 'A');
                    n += put_cp(buf + n, 0x03a3);
                    n += put_cp(buf + n, c);
                    n += put_cp(buf + n, 'B');
                    buf[n++] = ' ';
                    break;
                }
            }
            if (n == 0) continue;
            if (ctxk == 0) {
                compare(ctx, ZGRT_BI_UPPER, buf, (size_t)n, (unsigned long)base,
                        "upper() of the code points from U+%04lX");
                compare(ctx, ZGRT_BI_LOWER, buf, (size_t)n, (unsigned long)base,
                        "lower() of the code points from U+%04lX");
            } else {
                compare(ctx, ZGRT_BI_LOWER, buf, (size_t)n, (unsigned long)base,
                        ctxk == 1   ? "lower() of \"AΣX \", X from U+%04lX"
                        : ctxk == 2 ? "lower() of \"XΣ \", X from U+%04lX"
                        : ctxk == 3 ? "lower() of \"AXΣ \", X from U+%04lX"
                                    : "lower() of \"AΣXB\", X from U+%04lX");
            }
        }
    }
}

static const char *const SOLO[] = {"A"};
static const char *const MAIN_CHAN[] = {"main"};
static const zgrt_loc LOCS[] = {{1, 1, NULL}};

static zgrt_program program(zgrt_body_fn *bodies)
{
    zgrt_program p = {.abi_version = ZGRT_ABI_VERSION,
                      .source = "u.zg",
                      .workflow = "u",
                      .nlifelines = 1,
                      .lifelines = SOLO,
                      .bodies = bodies,
                      .nchans = 1,
                      .chans = MAIN_CHAN,
                      .nlocs = 1,
                      .locs = LOCS};
    return p;
}

Test(unicode, case_mapping_agrees_with_icu, .timeout = 300)
{
    zgrt_body_fn bodies[] = {unicode_body};
    zgrt_program p = program(bodies);
    ncases = nbad = 0;
    run_out r = run_prog(&p, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_eq(ncases, 4352L * 2 + 4352L * 4 - 8 * 6, "strings compared: %ld", ncases);
    cr_expect_eq(nbad, 0, "%ld disagreements with ICU; the first: %s", nbad, first_bad);
    run_out_free(&r);
}

static int in_ranges(const zri_uc_range *r, int n, UChar32 c)
{
    for (int i = 0; i < n; i++)
        if ((uint32_t)c >= r[i].lo && (uint32_t)c <= r[i].hi) return 1;
    return 0;
}

Test(unicode, properties_agree_with_icu)
{
    for (UChar32 c = 0; c <= 0x10ffff; c++) {
        cr_assert_eq(in_ranges(zri_uc_white_space, zri_uc_nwhite_space, c), u_isUWhiteSpace(c) != 0,
                     "White_Space of U+%04X", (unsigned)c);
        cr_assert_eq(in_ranges(zri_uc_cased, zri_uc_ncased, c),
                     u_hasBinaryProperty(c, UCHAR_CASED) != 0, "Cased of U+%04X", (unsigned)c);
        cr_assert_eq(in_ranges(zri_uc_case_ignorable, zri_uc_ncase_ignorable, c),
                     u_hasBinaryProperty(c, UCHAR_CASE_IGNORABLE) != 0, "Case_Ignorable of U+%04X",
                     (unsigned)c);
    }
}

/* trim() of each White_Space code point and of some that look like it. */
static const char *trimmed[16];
static void trim_body(zgrt_ctx *ctx)
{
    static const char *const in[] = {
        "\t\n\v\f\r x \xc2\x85",                 /* ASCII, NEL */
        "\xc2\xa0\xe1\x9a\x80x\xe2\x80\x80",     /* U+00A0, U+1680, U+2000 */
        "\xe2\x80\x8ax\xe2\x80\xa8\xe2\x80\xa9", /* U+200A, U+2028, U+2029 */
        "\xe2\x80\xafx\xe2\x81\x9f\xe3\x80\x80", /* U+202F, U+205F, U+3000 */
        "\xe2\x80\x8bx\xef\xbb\xbf",             /* U+200B, U+FEFF: kept */
        "\xe1\xa0\x8ex\x1c",                     /* U+180E, U+001C: kept */
        " \xc2\xa0 ",                            /* only white space */
    };
    for (size_t i = 0; i < sizeof in / sizeof *in; i++) {
        zgrt_value a = {.tag = ZGRT_STR, .u.s = zri_str(zri_ctx_heap(ctx), in[i], strlen(in[i]))},
                   out;
        zgrt_builtin(ctx, ZGRT_BI_TRIM, 1, &a, &out, 0);
        trimmed[i] = strndup(out.u.s->data, (size_t)out.u.s->len);
    }
}

Test(unicode, trim_strips_white_space_only)
{
    zgrt_body_fn bodies[] = {trim_body};
    zgrt_program p = program(bodies);
    run_out r = run_prog(&p, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    static const char *const want[] = {
        "x", "x", "x", "x", "\xe2\x80\x8bx\xef\xbb\xbf", "\xe1\xa0\x8ex\x1c", ""};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        cr_expect_str_eq(trimmed[i], want[i], "case %zu", i);
        free((char *)trimmed[i]);
    }
    run_out_free(&r);
}
