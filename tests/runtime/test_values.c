/* test_values.c — values.c and builtins.c: the heap, comparison, JSON text in and out,
 * --arg parsing per type, UTF-8, and the builtins (run inside a one-lifeline
 * program, as generated code calls them). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "programs.h"

static const char *const COLOR_M[] = {"red", "green", "blue"};
static const zgrt_enum ENUMS[] = {{"Color", 3, COLOR_M}};
static const zgrt_program EP = {.abi_version = ZGRT_ABI_VERSION, .nenums = 1, .enums = ENUMS};

static char *to_json(const zgrt_value *v) { return zri_value_to_json(&EP, v, T_INT); }

#define EXPECT_JSON(v, text)        \
    do {                            \
        zgrt_value v_ = (v);        \
        char *s_ = to_json(&v_);    \
        cr_expect_str_eq(s_, text); \
        free(s_);                   \
    } while (0)

Test(values, heap_strings)
{
    zri_heap *h = zri_heap_new();
    const zgrt_str *a = zri_str(h, "hello", 5);
    cr_expect_eq(a->len, 5);
    cr_expect_str_eq(a->data, "hello");
    char *big = malloc(100000);
    memset(big, 'x', 100000);
    const zgrt_str *b = zri_str(h, big, 100000);
    cr_expect_eq(b->len, 100000);
    cr_expect_eq(b->data[99999], 'x');
    cr_expect_eq(b->data[100000], '\0');
    for (int i = 0; i < 10000; i++) {
        const zgrt_str *c = zri_str(h, "abc", (size_t)(i % 4));
        cr_assert_eq(c->len, i % 4);
        cr_assert_eq(c->data[c->len], '\0');
    }
    cr_expect_str_eq(a->data, "hello"); /* still intact */
    free(big);
    zri_heap_free(h);
}

Test(values, compare)
{
    zri_heap *h = zri_heap_new();
    zgrt_value a = {.tag = ZGRT_STR, .u.s = zri_str(h, "a", 1)};
    zgrt_value ab = {.tag = ZGRT_STR, .u.s = zri_str(h, "ab", 2)};
    zgrt_value b = {.tag = ZGRT_STR, .u.s = zri_str(h, "b", 1)};
    zgrt_value a0 = {.tag = ZGRT_STR, .u.s = zri_str(h, "a\0", 2)};
    cr_expect_lt(zgrt_compare(&a, &b), 0);
    cr_expect_gt(zgrt_compare(&ab, &a), 0);
    cr_expect_lt(zgrt_compare(&a, &a0), 0);
    cr_expect_eq(zgrt_compare(&a, &a), 0);
    zgrt_value i1 = v_int(-3), i2 = v_int(7);
    cr_expect_lt(zgrt_compare(&i1, &i2), 0);
    cr_expect_gt(zgrt_compare(&i2, &i1), 0);
    zgrt_value f1 = v_float(0.5), f2 = v_float(-1e300);
    cr_expect_gt(zgrt_compare(&f1, &f2), 0);
    cr_expect_eq(zgrt_compare(&f1, &f1), 0);
    zgrt_value e1 = v_enum(0, 1), e2 = v_enum(0, 2);
    cr_expect_lt(zgrt_compare(&e1, &e2), 0);
    cr_expect(zri_value_eq(&e1, &e1));
    zgrt_value t = v_bool(1), fa = v_bool(0);
    cr_expect_gt(zgrt_compare(&t, &fa), 0);
    zgrt_value j1, j2, j3;
    char err[256];
    cr_assert_eq(zri_value_from_text(&EP, h, "{\"a\":[1,2]}", T_JSON, &j1, err, sizeof err), 0);
    cr_assert_eq(zri_value_from_text(&EP, h, "{ \"a\" : [1, 2] }", T_JSON, &j2, err, sizeof err),
                 0);
    cr_assert_eq(zri_value_from_text(&EP, h, "{\"a\":[2,1]}", T_JSON, &j3, err, sizeof err), 0);
    cr_expect_eq(zgrt_compare(&j1, &j2), 0);
    cr_expect_eq(zgrt_compare(&j1, &j3), 1);
    cr_expect_neq(zgrt_compare(&i1, &f1), 0); /* different types never equal */
    zri_heap_free(h);
}

Test(values, json_text_of_values)
{
    zri_heap *h = zri_heap_new();
    EXPECT_JSON(v_int(-42), "-42");
    EXPECT_JSON(v_int(INT64_MIN), "-9223372036854775808");
    EXPECT_JSON(v_bool(1), "true");
    EXPECT_JSON(v_float(0.1), "0.1");
    EXPECT_JSON(v_float(1.0), "1.0");
    EXPECT_JSON(v_float(-0.0), "-0.0");
    EXPECT_JSON(v_float(1e300), "1e+300");
    EXPECT_JSON(v_float(1.0 / 3), "0.3333333333333333");
    EXPECT_JSON(v_float(2.5), "2.5");
    EXPECT_JSON(v_enum(0, 2), "\"blue\"");
    zgrt_value u = {0};
    EXPECT_JSON(u, "null");
    zgrt_value s = {.tag = ZGRT_STR, .u.s = zri_str(h, "q\"\\\n\t\x01\x7f\xc3\xa9\xff/", 11)};
    EXPECT_JSON(s, "\"q\\\"\\\\\\n\\t\\u0001\x7f\xc3\xa9\\ufffd/\"");
    zgrt_value nul = {.tag = ZGRT_STR, .u.s = zri_str(h, "a\0b", 3)};
    EXPECT_JSON(nul, "\"a\\u0000b\"");
    zri_heap_free(h);
}

/* The text of floats as Python's repr() gives it (the table was made with
 * CPython 3.11, whose repr is David Gay's shortest round trip): the
 * layout around 1e-4 and 1e16, subnormals, the largest double, and powers
 * of two (2^-1017, 2^-1007, …, 2^973) whose shortest text is not the
 * nearest 16-digit one, plus random doubles. */
Test(values, float_text_is_pythons_repr)
{
    static const struct {
        uint64_t bits;
        const char *text;
    } cases[] = {
        {0x3fb999999999999aull, "0.1"},
        {0x3fd3333333333334ull, "0.30000000000000004"},
        {0x3fd5555555555555ull, "0.3333333333333333"},
        {0x3fe5555555555555ull, "0.6666666666666666"},
        {0x4341c37937e08000ull, "1e+16"},
        {0x430c6bf526340000ull, "1000000000000000.0"},
        {0x4341c37937e07fffull, "9999999999999998.0"},
        {0x3f1a36e2eb1c432dull, "0.0001"},
        {0x3ee4f8b588e368f1ull, "1e-05"},
        {0x3f23a92a30553261ull, "0.00015"},
        {0x4059000000000000ull, "100.0"},
        {0x3ff0000000000000ull, "1.0"},
        {0xbff0000000000000ull, "-1.0"},
        {0x0000000000000000ull, "0.0"},
        {0x8000000000000000ull, "-0.0"},
        {0x0000000000000001ull, "5e-324"},
        {0x7fefffffffffffffull, "1.7976931348623157e+308"},
        {0x0010000000000000ull, "2.2250738585072014e-308"},
        {0x000fffffffffffffull, "2.225073858507201e-308"},
        {0x419d6f3454800000ull, "123456789.125"},
        {0x43b0000000000000ull, "1.152921504606847e+18"},
        {0x4480f0cf064dd592ull, "1e+22"},
        {0x44b52d02c7e14af6ull, "1e+23"},
        {0x4340000000000000ull, "9007199254740992.0"},
        {0x3fe0000000000000ull, "0.5"},
        {0x444b1ae4d6e2ef50ull, "1e+21"},
        {0xbe90c6f7a0b5ed8dull, "-2.5e-07"},
        {0x43e56a95319d63e1ull, "1.2345678901234567e+19"},
        {0x0060000000000000ull, "7.120236347223045e-307"},
        {0x0100000000000000ull, "7.291122019556398e-304"},
        {0x0420000000000000ull, "8.209073602596753e-289"},
        {0x0660000000000000ull, "5.641232424577593e-278"},
        {0x0d70000000000000ull, "5.858190679279809e-244"},
        {0x0e80000000000000ull, "7.678447687145631e-239"},
        {0x75e0000000000000ull, "6.150157786156811e+259"},
        {0x77f0000000000000ull, "5.282945311356653e+269"},
        {0x7cf0000000000000ull, "6.386688990511104e+293"},
        {0xf2a74de452e6b438ull, "-1.989032661366619e+244"},
        {0x6513270e269e0d37ull, "7.761117632285041e+178"},
        {0x0c5c7fd0a6a3a450ull, "3.980498358697587e-249"},
        {0xd23f0824128b2f33ull, "-1.5432835417340557e+88"},
        {0x1818e811892f902bull, "1.3647584518757569e-192"},
        {0x9531985d5d9dc9f8ull, "-1.3701135617873088e-206"},
        {0xe8e25d940ed90475ull, "-1.7160537630466207e+197"},
        {0x36f675cc81e74ef5ull, "6.294675241195386e-44"},
        {0x1600a35a099950d8ull, "1.0613447212142254e-202"},
        {0x6b0d549b6f03675aull, "4.708325160387546e+207"},
        {0x3d9c172411e20b8full, "6.387016158513563e-12"},
        {0x8d116ece1738f7d9ull, "-9.973130378568733e-246"},
        {0x0f21ddb66cad4a26ull, "8.779753225680271e-236"},
        {0x90c192cfd3ac94afull, "-5.795503248498993e-228"},
        {0xf28c105d1fb17c23ull, "-5.988180159386011e+243"},
        {0xa170b33839263059ull, "-1.306052388527796e-147"},
        {0x953f48f1a09f76b5ull, "-2.436117699484841e-206"},
        {0x0fd630f1f29d0da9ull, "2.233386999150174e-232"},
        {0x95e60af593bd04cfull, "-3.51527970626667e-203"},
        {0x0cb1e29c658cda14ull, "1.5987381841032883e-247"},
        {0x410c4c7000000000ull, "231822.0"},
        {0x40b6cd0f5c28f5c3ull, "5837.06"},
        {0x3fd36f75d9a0f0a6ull, "0.303678"},
        {0x3f58c86e186175bcull, "0.00151263"},
        {0x4028b3f7ced91687ull, "12.3515"},
        {0x40b6f2bae147ae14ull, "5874.73"},
        {0x405b03f7ced91687ull, "108.062"},
        {0x40e311199999999aull, "39048.8"},
        {0x40ec0b6666666666ull, "57435.2"},
        {0x41220f5000000000ull, "591784.0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        double d;
        memcpy(&d, &cases[i].bits, sizeof d);
        char buf[32];
        zri_format_float(d, buf);
        cr_expect_str_eq(buf, cases[i].text, "%016llx", (unsigned long long)cases[i].bits);
    }
    char buf[32];
    zri_format_float(NAN, buf);
    cr_expect_str_eq(buf, "nan");
    zri_format_float(-INFINITY, buf);
    cr_expect_str_eq(buf, "-inf");
}

Test(values, float_text_round_trips)
{
    /* shortest text that reads back exactly, for a spread of doubles */
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double d;
        memcpy(&d, &x, sizeof d);
        if (!isfinite(d)) continue;
        char buf[32];
        zri_format_float(d, buf);
        cr_assert_eq(strtod(buf, NULL), d, "%s", buf);
        json_t *j = json_loads(buf, JSON_DECODE_ANY, NULL);
        cr_assert_not_null(j, "%s", buf);
        cr_assert(json_is_real(j), "%s is not a JSON real", buf);
        cr_assert_eq(json_real_value(j), d);
        json_decref(j);
    }
}

Test(values, json_round_trip)
{
    const char *texts[] = {"null",
                           "true",
                           "0",
                           "-1",
                           "1.5",
                           "\"\\u00e9\\n\"",
                           "[]",
                           "{}",
                           "[1,[2,[3,{\"a\":null}]]]",
                           "{\"z\":1,\"a\":{\"b\":[true,false]}}",
                           "1e-300",
                           "\"\\u0000\""};
    zri_heap *h = zri_heap_new();
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        zgrt_value v;
        char err[256];
        cr_assert_eq(zri_value_from_text(&EP, h, texts[i], T_JSON, &v, err, sizeof err), 0,
                     "%s: %s", texts[i], err);
        char *out = to_json(&v);
        json_t *a = json_loads(texts[i], JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
        json_t *b = json_loads(out, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
        cr_expect(b && json_equal(a, b), "%s -> %s", texts[i], out);
        /* and through jansson values */
        json_t *c = zri_value_to_jansson(&EP, &v, T_JSON);
        cr_expect(json_equal(a, c), "%s through jansson", texts[i]);
        json_decref(a);
        json_decref(b);
        json_decref(c);
        free(out);
    }
    /* object keys keep their order */
    zgrt_value v;
    char err[256];
    zri_value_from_text(&EP, h, "{\"z\": 1, \"a\": 2}", T_JSON, &v, err, sizeof err);
    char *out = to_json(&v);
    cr_expect_str_eq(out, "{\"z\":1,\"a\":2}");
    free(out);
    zri_buf b = {0};
    zri_buf_json_result(&b, &EP, &v);
    cr_expect_str_eq(b.data, "{\"z\": 1, \"a\": 2}");
    zri_buf_free(&b);
    zri_heap_free(h);
}

Test(values, from_text_per_type)
{
    zri_heap *h = zri_heap_new();
    zgrt_value v;
    char err[256];
    cr_expect_eq(zri_value_from_text(&EP, h, "-17", T_INT, &v, err, sizeof err), 0);
    cr_expect(v.tag == ZGRT_INT && v.u.i == -17);
    cr_expect_eq(zri_value_from_text(&EP, h, "+9223372036854775807", T_INT, &v, err, sizeof err),
                 0);
    cr_expect_eq(v.u.i, INT64_MAX);
    cr_expect_eq(zri_value_from_text(&EP, h, "-9223372036854775809", T_INT, &v, err, sizeof err),
                 -1);
    cr_expect_str_eq(err, "int out of range: \"-9223372036854775809\"");
    cr_expect_eq(zri_value_from_text(&EP, h, " 1", T_INT, &v, err, sizeof err), -1);
    cr_expect_eq(zri_value_from_text(&EP, h, "1.0", T_INT, &v, err, sizeof err), -1);
    cr_expect_eq(zri_value_from_text(&EP, h, "", T_INT, &v, err, sizeof err), -1);
    cr_expect_eq(zri_value_from_text(&EP, h, "3", T_FLOAT, &v, err, sizeof err), 0);
    cr_expect(v.tag == ZGRT_FLOAT && v.u.f == 3.0);
    cr_expect_eq(zri_value_from_text(&EP, h, "-.5e-2", T_FLOAT, &v, err, sizeof err), 0);
    cr_expect_eq(v.u.f, -0.005);
    cr_expect_eq(zri_value_from_text(&EP, h, "nan", T_FLOAT, &v, err, sizeof err), -1);
    cr_expect_eq(zri_value_from_text(&EP, h, "inf", T_FLOAT, &v, err, sizeof err), -1);
    cr_expect_eq(zri_value_from_text(&EP, h, "0x10", T_FLOAT, &v, err, sizeof err), -1);
    cr_expect_eq(zri_value_from_text(&EP, h, "1e", T_FLOAT, &v, err, sizeof err), -1);
    cr_expect_eq(zri_value_from_text(&EP, h, "true", T_BOOL, &v, err, sizeof err), 0);
    cr_expect(v.tag == ZGRT_BOOL && v.u.i == 1);
    cr_expect_eq(zri_value_from_text(&EP, h, "True", T_BOOL, &v, err, sizeof err), -1);
    cr_expect_eq(zri_value_from_text(&EP, h, "  spaced \"text\" ", T_STR, &v, err, sizeof err), 0);
    cr_expect_str_eq(v.u.s->data, "  spaced \"text\" ");
    cr_expect_eq(zri_value_from_text(&EP, h, "\xc3\x28", T_STR, &v, err, sizeof err), -1);
    cr_expect_eq(zri_value_from_text(&EP, h, "blue", T_ENUM(0), &v, err, sizeof err), 0);
    cr_expect(v.tag == ZGRT_ENUM && v.u.i == 2);
    cr_expect_eq(zri_value_from_text(&EP, h, "Color.green", T_ENUM(0), &v, err, sizeof err), 0);
    cr_expect_eq(v.u.i, 1);
    cr_expect_eq(zri_value_from_text(&EP, h, "Blue", T_ENUM(0), &v, err, sizeof err), -1);
    cr_expect_str_eq(err, "expected a member of Color (red, green, blue), got \"Blue\"");
    cr_expect_eq(zri_value_from_text(&EP, h, "[1,", T_JSON, &v, err, sizeof err), -1);
    cr_expect(strstr(err, "invalid JSON"), "%s", err);
    cr_expect_eq(zri_value_from_text(&EP, h, "42", T_JSON, &v, err, sizeof err), 0);
    cr_expect(v.tag == ZGRT_JSON && json_integer_value(v.u.j) == 42);
    zri_heap_free(h);
}

Test(values, from_jansson_per_type)
{
    zri_heap *h = zri_heap_new();
    zgrt_value v;
    char err[256];
    json_t *j = json_real(3.0);
    cr_expect_eq(zri_value_from_jansson(&EP, h, j, T_INT, &v, err, sizeof err), 0);
    cr_expect_eq(v.u.i, 3);
    json_decref(j);
    j = json_real(3.5);
    cr_expect_eq(zri_value_from_jansson(&EP, h, j, T_INT, &v, err, sizeof err), -1);
    cr_expect_str_eq(err, "expected int, got 3.5");
    json_decref(j);
    j = json_integer(2);
    cr_expect_eq(zri_value_from_jansson(&EP, h, j, T_FLOAT, &v, err, sizeof err), 0);
    cr_expect(v.tag == ZGRT_FLOAT && v.u.f == 2.0);
    json_decref(j);
    j = json_string("green");
    cr_expect_eq(zri_value_from_jansson(&EP, h, j, T_ENUM(0), &v, err, sizeof err), 0);
    cr_expect_eq(v.u.i, 1);
    cr_expect_eq(zri_value_from_jansson(&EP, h, j, T_BOOL, &v, err, sizeof err), -1);
    cr_expect_str_eq(err, "expected bool, got \"green\"");
    json_decref(j);
    /* json values are copied: changing the source afterwards changes nothing */
    j = json_pack("{s:[i,i]}", "k", 1, 2);
    cr_expect_eq(zri_value_from_jansson(&EP, h, j, T_JSON, &v, err, sizeof err), 0);
    json_array_append_new(json_object_get(j, "k"), json_integer(3));
    char *s = to_json(&v);
    cr_expect_str_eq(s, "{\"k\":[1,2]}");
    free(s);
    json_decref(j);
    zri_heap_free(h);
}

Test(values, value_copy_and_check)
{
    zri_heap *h1 = zri_heap_new(), *h2 = zri_heap_new();
    zgrt_value s = {.tag = ZGRT_STR, .u.s = zri_str(h1, "xyz", 3)};
    zgrt_value c = zri_value_copy(h2, &s);
    zri_heap_free(h1);
    cr_expect_str_eq(c.u.s->data, "xyz");
    cr_expect(zri_value_check(&EP, &c, T_STR));
    cr_expect(!zri_value_check(&EP, &c, T_INT));
    zgrt_value e = v_enum(0, 3), e1 = v_enum(1, 0), ok = v_enum(0, 2);
    cr_expect(!zri_value_check(&EP, &e, T_ENUM(0)));
    cr_expect(!zri_value_check(&EP, &e1, T_ENUM(0)));
    cr_expect(zri_value_check(&EP, &ok, T_ENUM(0)));
    zri_heap_free(h2);
}

Test(values, utf8)
{
    cr_expect(zri_utf8_valid("", 0));
    cr_expect(zri_utf8_valid("a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 10));
    cr_expect(!zri_utf8_valid("\xc0\x80", 2));         /* overlong */
    cr_expect(!zri_utf8_valid("\xed\xa0\x80", 3));     /* surrogate */
    cr_expect(!zri_utf8_valid("\xf4\x90\x80\x80", 4)); /* > U+10FFFF */
    cr_expect(!zri_utf8_valid("\xe2\x82", 2));         /* truncated */
    cr_expect(!zri_utf8_valid("\x80", 1));
}

/* ---- builtins, from generated code -------------------------------------------- */

#define NB 64
static char *got[NB];
static int ngot;

static void record(const zgrt_value *v)
{
    if (ngot < NB) got[ngot++] = zri_value_to_json(NULL, v, T_INT);
}

static void bi1(zgrt_ctx *ctx, int32_t id, zgrt_value a)
{
    zgrt_value out;
    zgrt_builtin(ctx, id, 1, &a, &out, 0);
    record(&out);
}

static void bi2(zgrt_ctx *ctx, int32_t id, zgrt_value a, zgrt_value b)
{
    zgrt_value args[2] = {a, b}, out;
    zgrt_builtin(ctx, id, 2, args, &out, 0);
    record(&out);
}

static zgrt_value jv(zgrt_ctx *ctx, const char *text)
{
    zgrt_value v;
    char err[128];
    zri_value_from_text(NULL, zri_ctx_heap(ctx), text, T_JSON, &v, err, sizeof err);
    return v;
}

static void builtins_body(zgrt_ctx *ctx)
{
    zgrt_value s = v_str(ctx, "  H\xc3\xa9llo, World!\t\n");
    bi1(ctx, ZGRT_BI_LEN, s);                                       /* 0: code points */
    bi1(ctx, ZGRT_BI_LOWER, s);                                     /* 1 */
    bi1(ctx, ZGRT_BI_UPPER, s);                                     /* 2 */
    bi1(ctx, ZGRT_BI_TRIM, s);                                      /* 3 */
    bi2(ctx, ZGRT_BI_CONTAINS, s, v_str(ctx, "World"));             /* 4 */
    bi2(ctx, ZGRT_BI_CONTAINS, s, v_str(ctx, "world"));             /* 5 */
    bi2(ctx, ZGRT_BI_CONTAINS, s, v_str(ctx, ""));                  /* 6 */
    bi2(ctx, ZGRT_BI_STARTS_WITH, s, v_str(ctx, "  H"));            /* 7 */
    bi2(ctx, ZGRT_BI_ENDS_WITH, s, v_str(ctx, "!\t\n"));            /* 8 */
    bi2(ctx, ZGRT_BI_ENDS_WITH, v_str(ctx, "a"), v_str(ctx, "ba")); /* 9 */
    bi1(ctx, ZGRT_BI_STR, v_int(-12));                              /* 10 */
    bi1(ctx, ZGRT_BI_STR, v_float(0.1));                            /* 11 */
    bi1(ctx, ZGRT_BI_STR, v_float(3.0));                            /* 12 */
    bi1(ctx, ZGRT_BI_STR, v_bool(0));                               /* 13 */
    bi1(ctx, ZGRT_BI_STR, v_enum(0, 1));                            /* 14 */
    bi1(ctx, ZGRT_BI_STR, v_str(ctx, "same"));                      /* 15 */
    bi1(ctx, ZGRT_BI_STR, jv(ctx, "{\"a\": [1, \"x\"]}"));          /* 16 */
    bi1(ctx, ZGRT_BI_INT, v_float(-2.9));                           /* 17 */
    bi1(ctx, ZGRT_BI_INT, v_str(ctx, "-42"));                       /* 18 */
    bi1(ctx, ZGRT_BI_INT, v_int(5));                                /* 19 */
    bi1(ctx, ZGRT_BI_FLOAT, v_int(7));                              /* 20 */
    bi1(ctx, ZGRT_BI_FLOAT, v_str(ctx, "2.5e1"));                   /* 21 */
    zgrt_value obj = jv(ctx, "{\"user\": \"ada\", \"n\": 3, \"o\": {\"p\": true}}");
    bi2(ctx, ZGRT_BI_JSON_GET, obj, v_str(ctx, "n"));            /* 22 */
    bi2(ctx, ZGRT_BI_JSON_GET, obj, v_str(ctx, "missing"));      /* 23 */
    bi2(ctx, ZGRT_BI_JSON_GET, jv(ctx, "[1]"), v_str(ctx, "n")); /* 24 */
    zgrt_value user, args[2] = {obj, v_str(ctx, "user")};
    zgrt_builtin(ctx, ZGRT_BI_JSON_GET, 2, args, &user, 0);
    bi1(ctx, ZGRT_BI_JSON_STR, user);                 /* 25 */
    bi2(ctx, ZGRT_BI_JSON_GET, obj, v_str(ctx, "o")); /* 26 */
    args[1] = v_str(ctx, "o");
    zgrt_value o;
    zgrt_builtin(ctx, ZGRT_BI_JSON_GET, 2, args, &o, 0);
    bi1(ctx, ZGRT_BI_JSON_STR, o);              /* 27 */
    bi1(ctx, ZGRT_BI_LEN, v_str(ctx, ""));      /* 28 */
    bi1(ctx, ZGRT_BI_TRIM, v_str(ctx, " \t ")); /* 29 */
    zgrt_value a = v_str(ctx, "ab"), b = v_str(ctx, "\xc3\xa9"), c;
    zgrt_concat(ctx, &a, &b, &c);
    record(&c);                                             /* 30 */
    bi1(ctx, ZGRT_BI_INT, v_float(-9223372036854775808.0)); /* 31 */
    /* beyond ASCII (language reference §5.3) */
    zgrt_value u = v_str(ctx, "stra\xc3\x9f"
                              "e \xef\xac\x81 \xce\x9f\xce\x94\xce\x9f\xce\xa3 "
                              "\xc4\xb0 \xc4\xb1i"); /* straße ﬁ ΟΔΟΣ İ ıi */
    bi1(ctx, ZGRT_BI_UPPER, u);                      /* 32 */
    bi1(ctx, ZGRT_BI_LOWER, u);                      /* 33 */
    /* no-break space, ideographic space, line separator, NEL around;
     * zero width space and BOM are not White_Space */
    bi1(ctx, ZGRT_BI_TRIM, v_str(ctx, "\xc2\xa0\xe3\x80\x80 a b\xe2\x80\xa8\xc2\x85")); /* 34 */
    bi1(ctx, ZGRT_BI_TRIM,
        v_str(ctx, "\xe2\x80\x8b"
                   "a\xef\xbb\xbf"));                            /* 35 */
    bi1(ctx, ZGRT_BI_INT, v_str(ctx, " 42\n"));                  /* 36 */
    bi1(ctx, ZGRT_BI_INT, v_str(ctx, "\xe3\x80\x80-7\xc2\xa0")); /* 37 */
    bi1(ctx, ZGRT_BI_FLOAT, v_str(ctx, "\t.5 "));                /* 38 */
    bi1(ctx, ZGRT_BI_STR, v_float(1e16));                        /* 39 */
    bi1(ctx, ZGRT_BI_STR, v_float(1e15));                        /* 40 */
    bi1(ctx, ZGRT_BI_STR, jv(ctx, "[0.1, 1e16, -0.0]"));         /* 41 */
    bi1(ctx, ZGRT_BI_LOWER, v_str(ctx, "\xce\xa3"));             /* 42: a lone Σ is not final */
    bi1(ctx, ZGRT_BI_UPPER,
        v_str(ctx, "a\xff"
                   "b")); /* 43: not UTF-8: kept */
}

static const char *const SOLO[] = {"A"};
static const char *const MAIN_CHAN[] = {"main"};
static const zgrt_loc LOCS[] = {{3, 7, NULL}};

static zgrt_program bprog(zgrt_body_fn *bodies)
{
    zgrt_program p = {.abi_version = ZGRT_ABI_VERSION,
                      .source = "b.zg",
                      .workflow = "b",
                      .nlifelines = 1,
                      .lifelines = SOLO,
                      .bodies = bodies,
                      .nchans = 1,
                      .chans = MAIN_CHAN,
                      .nenums = 1,
                      .enums = ENUMS,
                      .nlocs = 1,
                      .locs = LOCS};
    return p;
}

Test(builtins, results, .timeout = 20)
{
    zgrt_body_fn bodies[] = {builtins_body};
    zgrt_program p = bprog(bodies);
    ngot = 0;
    run_out r = run_prog(&p, NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    static const char *const want[] = {
        "17",
        "\"  h\xc3\xa9llo, world!\\t\\n\"",
        "\"  H\xc3\x89LLO, WORLD!\\t\\n\"",
        "\"H\xc3\xa9llo, World!\"",
        "true",
        "false",
        "true",
        "true",
        "true",
        "false",
        "\"-12\"",
        "\"0.1\"",
        "\"3.0\"",
        "\"false\"",
        "\"green\"",
        "\"same\"",
        "\"{\\\"a\\\":[1,\\\"x\\\"]}\"",
        "-2",
        "-42",
        "5",
        "7.0",
        "25.0",
        "3",
        "null",
        "null",
        "\"ada\"",
        "{\"p\":true}",
        "\"{\\\"p\\\":true}\"",
        "0",
        "\"\"",
        "\"ab\xc3\xa9\"",
        "-9223372036854775808",
        "\"STRASSE FI \xce\x9f\xce\x94\xce\x9f\xce\xa3 \xc4\xb0 II\"",
        "\"stra\xc3\x9f"
        "e \xef\xac\x81 \xce\xbf\xce\xb4\xce\xbf\xcf\x82 i\xcc\x87 \xc4\xb1i\"",
        "\"a b\"",
        "\"\xe2\x80\x8b"
        "a\xef\xbb\xbf\"",
        "42",
        "-7",
        "0.5",
        "\"1e+16\"",
        "\"1000000000000000.0\"",
        "\"[0.1,1e+16,-0.0]\"",
        "\"\xcf\x83\"",
        "\"A\\ufffdB\""};
    cr_assert_eq(ngot, (int)(sizeof want / sizeof *want));
    for (int i = 0; i < ngot; i++) {
        cr_expect_str_eq(got[i], want[i], "case %d", i);
        free(got[i]);
    }
    run_out_free(&r);
}

static int error_case;

static void builtin_error_body(zgrt_ctx *ctx)
{
    zgrt_value out;
    switch (error_case) {
    case 0: bi1(ctx, ZGRT_BI_INT, v_str(ctx, "4x2")); break;
    case 1: bi1(ctx, ZGRT_BI_INT, v_float(1e30)); break;
    case 2: bi1(ctx, ZGRT_BI_FLOAT, v_str(ctx, "one")); break;
    case 3: bi1(ctx, ZGRT_BI_INT, v_str(ctx, "99999999999999999999")); break;
    case 4: bi1(ctx, ZGRT_BI_INT, v_float(9223372036854775808.0)); break;
    case 5: bi1(ctx, ZGRT_BI_INT, v_str(ctx, " 4 2 ")); break; /* white space inside */
    case 6:
        bi1(ctx, ZGRT_BI_INT,
            v_str(ctx, "\xe2\x80\x8b"
                       "42"));
        break; /* U+200B */
    case 7: bi1(ctx, ZGRT_BI_FLOAT, v_str(ctx, "\t\n")); break;
    default: zgrt_builtin(ctx, 99, 0, NULL, &out, 0); break;
    }
}

Test(builtins, errors, .timeout = 20)
{
    static const char *const want[] = {
        "prog: error: lifeline A: b.zg:3:7: int(\"4x2\"): not an integer\n",
        "prog: error: lifeline A: b.zg:3:7: int(1e+30): out of the range of int\n",
        "prog: error: lifeline A: b.zg:3:7: float(\"one\"): not a number\n",
        "prog: error: lifeline A: b.zg:3:7: int(\"99999999999999999999\"): out of the range of "
        "int\n",
        "prog: error: lifeline A: b.zg:3:7: int(9.223372036854776e+18): out of the range of int\n",
        "prog: error: lifeline A: b.zg:3:7: int(\" 4 2 \"): not an integer\n",
        "prog: error: lifeline A: b.zg:3:7: int(\"\xe2\x80\x8b"
        "42\"): not an integer\n",
        "prog: error: lifeline A: b.zg:3:7: float(\"\\t\\n\"): not a number\n",
        "prog: error: lifeline A: b.zg:3:7: internal error: builtin 99 called with 0 arguments\n"};
    zgrt_body_fn bodies[] = {builtin_error_body};
    zgrt_program p = bprog(bodies);
    for (error_case = 0; error_case < 9; error_case++) {
        ngot = 0;
        run_out r = run_prog(&p, NULL);
        cr_expect_eq(r.status, 1);
        cr_expect_str_eq(r.out, "");
        cr_expect_str_eq(r.err, want[error_case]);
        run_out_free(&r);
        for (int i = 0; i < ngot; i++) free(got[i]);
    }
}
