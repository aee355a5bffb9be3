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
}

static const char *const SOLO[] = {"A"};
static const char *const MAIN_CHAN[] = {"main"};
static const zgrt_loc LOCS[] = {{3, 7}};

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
    static const char *const want[] = {"17",
                                       "\"  h\xc3\xa9llo, world!\\t\\n\"",
                                       "\"  H\xc3\xa9LLO, WORLD!\\t\\n\"",
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
                                       "-9223372036854775808"};
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
    default: zgrt_builtin(ctx, 99, 0, NULL, &out, 0); break;
    }
}

Test(builtins, errors, .timeout = 20)
{
    static const char *const want[] = {
        "zgc: error: lifeline A: b.zg:3:7: int(\"4x2\"): not an integer\n",
        "zgc: error: lifeline A: b.zg:3:7: int(1e+30): out of the range of int\n",
        "zgc: error: lifeline A: b.zg:3:7: float(\"one\"): not a number\n",
        "zgc: error: lifeline A: b.zg:3:7: int(\"99999999999999999999\"): out of the range of "
        "int\n",
        "zgc: error: lifeline A: b.zg:3:7: int(9.223372036854776e+18): out of the range of int\n",
        "zgc: error: lifeline A: b.zg:3:7: internal error: builtin 99 called with 0 arguments\n"};
    zgrt_body_fn bodies[] = {builtin_error_body};
    zgrt_program p = bprog(bodies);
    for (error_case = 0; error_case < 6; error_case++) {
        ngot = 0;
        run_out r = run_prog(&p, NULL);
        cr_expect_eq(r.status, 1);
        cr_expect_str_eq(r.out, "");
        cr_expect_str_eq(r.err, want[error_case]);
        run_out_free(&r);
        for (int i = 0; i < ngot; i++) free(got[i]);
    }
}
