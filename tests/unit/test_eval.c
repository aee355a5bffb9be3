/* Unit tests for the compiler's evaluator (eval.c): the arithmetic rules
 * on values as one table of cases, and evaluation of expressions, with
 * every failing operator reported once. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>

#include "helpers.h"

/* ---- operators on values ------------------------------------------------ */

/* One operator on two ints or two floats: the error, or the result (an
 * int, a float, or a bool for comparisons). */
typedef struct Case {
    const char *what;
    ZOp op;
    ZTypeKind k; /* of both operands */
    int64_t li, ri;
    double lf, rf;
    ZEvalError err;
    ZTypeKind rk; /* of the result */
    int64_t i;
    double f;
    bool b;
} Case;

#define INT(w, o, l, r, v)                                   \
    {                                                        \
        w, o, TY_INT, l, r, 0, 0, ZE_OK, TY_INT, v, 0, false \
    }
#define INT_ERR(w, o, l, r, e)                             \
    {                                                      \
        w, o, TY_INT, l, r, 0, 0, e, TY_ERROR, 0, 0, false \
    }
#define INT_CMP(w, o, l, r, v)                            \
    {                                                     \
        w, o, TY_INT, l, r, 0, 0, ZE_OK, TY_BOOL, 0, 0, v \
    }
#define FLT(w, o, l, r, v)                                       \
    {                                                            \
        w, o, TY_FLOAT, 0, 0, l, r, ZE_OK, TY_FLOAT, 0, v, false \
    }
#define FLT_ERR(w, o, l, r, e)                               \
    {                                                        \
        w, o, TY_FLOAT, 0, 0, l, r, e, TY_ERROR, 0, 0, false \
    }
#define FLT_CMP(w, o, l, r, v)                              \
    {                                                       \
        w, o, TY_FLOAT, 0, 0, l, r, ZE_OK, TY_BOOL, 0, 0, v \
    }

static Case cases[] = {
    /* / rounds down (towards negative infinity), % has the sign of the
     * divisor, as in Python; a == (a / b) * b + a % b */
    INT("-7 / 2", OP_DIV, -7, 2, -4),
    INT("-7 % 2", OP_MOD, -7, 2, 1),
    INT("7 / -2", OP_DIV, 7, -2, -4),
    INT("7 % -2", OP_MOD, 7, -2, -1),
    INT("-7 / -2", OP_DIV, -7, -2, 3),
    INT("-7 % -2", OP_MOD, -7, -2, -1),
    INT("7 / 2", OP_DIV, 7, 2, 3),
    INT("7 % 2", OP_MOD, 7, 2, 1),
    INT("-8 / 2", OP_DIV, -8, 2, -4),
    INT("-8 % 2", OP_MOD, -8, 2, 0),
    INT("-1 % 3", OP_MOD, -1, 3, 2),
    INT("0 / -5", OP_DIV, 0, -5, 0),
    INT("MIN / 2", OP_DIV, INT64_MIN, 2, INT64_MIN / 2),
    INT("MIN / 3", OP_DIV, INT64_MIN, 3, -3074457345618258603),
    INT("MIN % 3", OP_MOD, INT64_MIN, 3, 1),
    INT("MIN / 1", OP_DIV, INT64_MIN, 1, INT64_MIN),
    INT("MIN / MAX", OP_DIV, INT64_MIN, INT64_MAX, -2),
    INT("MIN % MAX", OP_MOD, INT64_MIN, INT64_MAX, INT64_MAX - 1),
    INT("MAX / -2", OP_DIV, INT64_MAX, -2, -4611686018427387904),
    INT("MAX % -2", OP_MOD, INT64_MAX, -2, -1),
    INT("MAX / -1", OP_DIV, INT64_MAX, -1, -INT64_MAX),
    INT("MIN % MIN", OP_MOD, INT64_MIN, INT64_MIN, 0),
    INT("5 % MIN", OP_MOD, 5, INT64_MIN, INT64_MIN + 5),
    INT("-5 % MIN", OP_MOD, -5, INT64_MIN, -5),
    INT("5 / MIN", OP_DIV, 5, INT64_MIN, -1),
    /* x % -1 is 0 for every x: the remainder always fits */
    INT("MIN % -1", OP_MOD, INT64_MIN, -1, 0),
    INT("5 % -1", OP_MOD, 5, -1, 0),
    INT("-2^62 * 2", OP_MUL, -((int64_t)1 << 62), 2, INT64_MIN),
    INT("MAX - MAX", OP_SUB, INT64_MAX, INT64_MAX, 0),
    INT_ERR("5 / 0", OP_DIV, 5, 0, ZE_DIV_ZERO),
    INT_ERR("5 % 0", OP_MOD, 5, 0, ZE_DIV_ZERO),
    INT_ERR("MIN / -1", OP_DIV, INT64_MIN, -1, ZE_INT_OVERFLOW),
    INT_ERR("MIN % 0", OP_MOD, INT64_MIN, 0, ZE_DIV_ZERO),
    INT_ERR("MAX + 1", OP_ADD, INT64_MAX, 1, ZE_INT_OVERFLOW),
    INT_ERR("MIN - 1", OP_SUB, INT64_MIN, 1, ZE_INT_OVERFLOW),
    INT_ERR("2^62 * 2", OP_MUL, (int64_t)1 << 62, 2, ZE_INT_OVERFLOW),
    INT_CMP("1 < 2", OP_LT, 1, 2, true),
    INT_CMP("MIN < MAX", OP_LT, INT64_MIN, INT64_MAX, true),
    INT_CMP("3 >= 3", OP_GE, 3, 3, true),
    INT_CMP("3 != 3", OP_NE, 3, 3, false),
    /* % has the sign of the divisor (Python's float %), a zero remainder
     * the divisor's sign; a zero divisor or a result that is not finite is
     * an error */
    FLT("-7.5 % 2.0", OP_MOD, -7.5, 2.0, 0.5),
    FLT("7.5 % -2.0", OP_MOD, 7.5, -2.0, -0.5),
    FLT("-7.5 % -2.0", OP_MOD, -7.5, -2.0, -1.5),
    FLT("7.5 % 2.0", OP_MOD, 7.5, 2.0, 1.5),
    FLT("-4.0 % 2.0", OP_MOD, -4.0, 2.0, 0.0),
    FLT("4.0 % -2.0", OP_MOD, 4.0, -2.0, -0.0),
    FLT("-0.0 % 2.0", OP_MOD, -0.0, 2.0, 0.0),
    FLT("0.0 % -2.0", OP_MOD, 0.0, -2.0, -0.0),
    FLT("-1e-300 % 1.0", OP_MOD, -1e-300, 1.0, 1.0),
    FLT("1e300 % -3.0", OP_MOD, 1e300, -3.0, -0.0),
    FLT("5.5 % 2.5", OP_MOD, 5.5, 2.5, 0.5),
    FLT("0.1 + 0.2", OP_ADD, 0.1, 0.2, 0.30000000000000004),
    FLT("1.0 / 3.0", OP_DIV, 1.0, 3.0, 1.0 / 3.0),
    FLT_ERR("1.0 / 0.0", OP_DIV, 1.0, 0.0, ZE_DIV_ZERO),
    FLT_ERR("1.0 / -0.0", OP_DIV, 1.0, -0.0, ZE_DIV_ZERO),
    FLT_ERR("1.5 % 0.0", OP_MOD, 1.5, 0.0, ZE_DIV_ZERO),
    FLT_ERR("1e308 * 10.0", OP_MUL, 1e308, 10.0, ZE_FLOAT_OVERFLOW),
    FLT_ERR("-1e308 - 1e308", OP_SUB, -1e308, 1e308, ZE_FLOAT_OVERFLOW),
    FLT_CMP("-0.0 == 0.0", OP_EQ, -0.0, 0.0, true),
    FLT_CMP("-0.0 < 0.0", OP_LT, -0.0, 0.0, false),
    FLT_CMP("0.1 + 0.2 > 0.3", OP_GT, 0.30000000000000004, 0.3, true),
};

ParameterizedTestParameters(eval, binary)
{
    return cr_make_param_array(Case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(Case *c, eval, binary)
{
    ZArena *a = zu_arena_new();
    ZValue l = {.k = c->k, .i = c->li, .f = c->lf}, r = {.k = c->k, .i = c->ri, .f = c->rf};
    ZValue v;
    ZEvalError err = ze_binary(a, c->op, &l, &r, &v);
    cr_expect_eq(err, c->err, "%s: %s, expected %s", c->what, ze_error_text(err),
                 ze_error_text(c->err));
    if (err == ZE_OK && c->err == ZE_OK) {
        cr_expect_eq(v.k, c->rk, "%s: result kind", c->what);
        if (c->rk == TY_INT)
            cr_expect_eq(v.i, c->i, "%s: %lld, expected %lld", c->what, (long long)v.i,
                         (long long)c->i);
        else if (c->rk == TY_FLOAT)
            cr_expect(v.f == c->f && signbit(v.f) == signbit(c->f), "%s: %.17g, expected %.17g",
                      c->what, v.f, c->f);
        else
            cr_expect_eq(v.b, c->b, "%s", c->what);
    }
    zu_arena_free(a);
}

/* / and % against their definition in 128-bit arithmetic: q = ⌊a / b⌋,
 * r = a - q * b, over random operands and the ends of the range. */
Test(eval, floor_division_by_definition)
{
    ZArena *a = zu_arena_new();
    static const int64_t ends[] = {INT64_MIN, INT64_MIN + 1, -3,       -2, -1, 1, 2,
                                   3,         INT64_MAX - 1, INT64_MAX};
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 200000; i++) {
        int64_t l, r;
        if (i < 100) {
            l = ends[i / 10];
            r = ends[i % 10];
        } else {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            l = (int64_t)x >> (x % 61);
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            r = (int64_t)x >> (x % 63);
        }
        if (r == 0) continue;
        __int128 q = (__int128)l / r, m = (__int128)l % r;
        if (m != 0 && (m < 0) != (r < 0)) q -= 1;
        __int128 rem = (__int128)l - q * r;
        ZValue lv = {.k = TY_INT, .i = l}, rv = {.k = TY_INT, .i = r}, v;
        ZEvalError err = ze_binary(a, OP_DIV, &lv, &rv, &v);
        if (q > INT64_MAX)
            cr_assert_eq(err, ZE_INT_OVERFLOW, "%lld / %lld", (long long)l, (long long)r);
        else
            cr_assert(err == ZE_OK && v.i == (int64_t)q, "%lld / %lld: %lld", (long long)l,
                      (long long)r, (long long)v.i);
        err = ze_binary(a, OP_MOD, &lv, &rv, &v);
        cr_assert(err == ZE_OK && v.i == (int64_t)rem, "%lld %% %lld: %lld", (long long)l,
                  (long long)r, (long long)v.i);
    }
    zu_arena_free(a);
}

static ZValue str_val(const char *s) { return (ZValue){.k = TY_STR, .s = s, .n = strlen(s)}; }

static bool str_op(ZArena *a, ZOp op, const char *x, const char *y)
{
    ZValue l = str_val(x), r = str_val(y), v;
    cr_assert_eq(ze_binary(a, op, &l, &r, &v), ZE_OK);
    cr_assert_eq(v.k, TY_BOOL);
    return v.b;
}

Test(eval, strings)
{
    ZArena *a = zu_arena_new();
    ZValue l = str_val("ab"), r = str_val("\xc3\xa9"), v; /* é */
    cr_assert_eq(ze_binary(a, OP_ADD, &l, &r, &v), ZE_OK);
    cr_expect_eq(v.k, TY_STR);
    cr_expect_eq(v.n, 4);
    cr_expect(memcmp(v.s, "ab\xc3\xa9", 4) == 0);
    cr_expect(str_op(a, OP_LT, "ab", "abc"), "a proper prefix is smaller");
    cr_expect(str_op(a, OP_GT, "\xc3\xa9", "z"), "by code point: é > z");
    cr_expect(str_op(a, OP_EQ, "abc", "abc"));
    cr_expect(str_op(a, OP_NE, "abc", "abd"));
    cr_expect(str_op(a, OP_LE, "", ""));
    zu_arena_free(a);
}

Test(eval, unary)
{
    ZValue v, min = {.k = TY_INT, .i = INT64_MIN}, seven = {.k = TY_INT, .i = 7};
    cr_expect_eq(ze_unary(OP_NEG, &min, &v), ZE_INT_OVERFLOW, "-MIN overflows");
    cr_expect_eq(ze_unary(OP_NEG, &seven, &v), ZE_OK);
    cr_expect_eq(v.i, -7);
    ZValue zero = {.k = TY_FLOAT, .f = 0.0};
    cr_expect_eq(ze_unary(OP_NEG, &zero, &v), ZE_OK);
    cr_expect(v.f == 0.0 && signbit(v.f), "-0.0");
    ZValue t = {.k = TY_BOOL, .b = true};
    cr_expect_eq(ze_unary(OP_NOT, &t, &v), ZE_OK);
    cr_expect_eq(v.b, false);
}

Test(eval, equality_of_kinds)
{
    ZArena *a = zu_arena_new();
    ZDecl en = {.kind = D_ENUM};
    ZValue p = {.k = TY_ENUM, .en = &en, .member = 0}, q = {.k = TY_ENUM, .en = &en, .member = 1};
    ZValue n1 = {.k = TY_NULL}, n2 = {.k = TY_NULL}, v;
    cr_expect_eq(ze_binary(a, OP_EQ, &p, &q, &v), ZE_OK);
    cr_expect_not(v.b, "different members");
    cr_expect_eq(ze_binary(a, OP_EQ, &p, &p, &v), ZE_OK);
    cr_expect(v.b, "the same member");
    cr_expect_eq(ze_binary(a, OP_EQ, &n1, &n2, &v), ZE_OK);
    cr_expect(v.b, "null == null");
    zu_arena_free(a);
}

/* ---- expressions -------------------------------------------------------- */

typedef struct Errors {
    int n;
    const ZExpr *at[4];
    ZEvalError err[4];
} Errors;

static void collect(void *user, const ZExpr *at, ZEvalError err)
{
    Errors *es = user;
    if (es->n < 4) {
        es->at[es->n] = at;
        es->err[es->n] = err;
    }
    es->n++;
}

static const ZSpan none = {0, 0, 0, 0, 0, 0};

static ZExpr *int_lit(ZArena *a, ZType *t, int64_t i)
{
    ZExpr *e = za_expr(a, E_INT, none);
    e->lit.i = i;
    e->type = t;
    return e;
}

static ZExpr *bin(ZArena *a, ZType *t, ZOp op, ZExpr *l, ZExpr *r)
{
    ZExpr *e = za_expr(a, E_BINARY, none);
    e->op = op;
    e->a = l;
    e->b = r;
    e->type = t;
    return e;
}

Test(eval, every_failing_operator_is_reported)
{
    ZArena *a = zu_arena_new();
    ZType *ti = za_type(a, TY_INT, none), *tb = za_type(a, TY_BOOL, none);
    /* 1 / 0 + 5 % 0: both sides are evaluated, each error reported */
    ZExpr *div = bin(a, ti, OP_DIV, int_lit(a, ti, 1), int_lit(a, ti, 0));
    ZExpr *mod = bin(a, ti, OP_MOD, int_lit(a, ti, 5), int_lit(a, ti, 0));
    ZExpr *sum = bin(a, ti, OP_ADD, div, mod);
    Errors es = {0};
    ZEval ev = {a, NULL, collect, &es};
    ZValue v;
    cr_expect_not(ze_eval(&ev, sum, &v));
    cr_assert_eq(es.n, 2);
    cr_expect_eq(es.at[0], div);
    cr_expect_eq(es.err[0], ZE_DIV_ZERO);
    cr_expect_eq(es.at[1], mod);
    /* false && 1 / 0 == 1: folding evaluates every operand (run time would
     * skip the right side) */
    ZExpr *f = za_expr(a, E_BOOL, none);
    f->type = tb;
    ZExpr *div2 = bin(a, ti, OP_DIV, int_lit(a, ti, 1), int_lit(a, ti, 0));
    ZExpr *conj = bin(a, tb, OP_AND, f, bin(a, tb, OP_EQ, div2, int_lit(a, ti, 1)));
    es = (Errors){0};
    cr_expect_not(ze_eval(&ev, conj, &v));
    cr_expect_eq(es.n, 1);
    cr_expect_eq(es.at[0], div2);
    zu_arena_free(a);
}

static bool seven(void *user, const ZDecl *d, ZValue *v)
{
    (void)user;
    (void)d;
    *v = (ZValue){.k = TY_INT, .i = 7};
    return true;
}

Test(eval, constants_and_literals)
{
    ZArena *a = zu_arena_new();
    ZType *ti = za_type(a, TY_INT, none);
    ZDecl k = {.kind = D_CONST, .name = "K"};
    ZExpr *name = za_expr(a, E_NAME, none);
    name->name_kind = NAME_CONST;
    name->decl = &k;
    name->type = ti;
    ZExpr *e = bin(a, ti, OP_MOD, za_expr(a, E_UNARY, none), int_lit(a, ti, 2));
    e->a->op = OP_NEG;
    e->a->a = name;
    e->a->type = ti;
    ZEval ev = {a, seven, NULL, NULL};
    ZValue v;
    cr_assert(ze_eval(&ev, e, &v), "-K % 2 with K = 7");
    cr_expect_eq(v.k, TY_INT);
    cr_expect_eq(v.i, 1); /* the sign of the divisor */
    ZExpr *lit = ze_literal(a, &v, none, ti);
    cr_assert_not_null(lit);
    cr_expect_eq(lit->kind, E_INT);
    cr_expect_eq(lit->lit.i, 1);
    cr_expect_eq(lit->type, ti);
    ZEval unknown = {a, NULL, NULL, NULL};
    cr_expect_not(ze_eval(&unknown, e, &v), "a constant without a value");
    zu_arena_free(a);
}
