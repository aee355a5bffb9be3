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
    /* / truncates towards zero, % has the sign of the dividend */
    INT("-7 / 2", OP_DIV, -7, 2, -3),
    INT("-7 % 2", OP_MOD, -7, 2, -1),
    INT("7 / -2", OP_DIV, 7, -2, -3),
    INT("7 % -2", OP_MOD, 7, -2, 1),
    INT("-7 / -2", OP_DIV, -7, -2, 3),
    INT("-7 % -2", OP_MOD, -7, -2, -1),
    INT("MIN / 2", OP_DIV, INT64_MIN, 2, INT64_MIN / 2),
    INT("MIN % 3", OP_MOD, INT64_MIN, 3, -2),
    INT("MIN / 1", OP_DIV, INT64_MIN, 1, INT64_MIN),
    INT("-2^62 * 2", OP_MUL, -((int64_t)1 << 62), 2, INT64_MIN),
    INT("MAX - MAX", OP_SUB, INT64_MAX, INT64_MAX, 0),
    INT_ERR("5 / 0", OP_DIV, 5, 0, ZE_DIV_ZERO),
    INT_ERR("5 % 0", OP_MOD, 5, 0, ZE_DIV_ZERO),
    INT_ERR("MIN / -1", OP_DIV, INT64_MIN, -1, ZE_INT_OVERFLOW),
    INT_ERR("MIN % -1", OP_MOD, INT64_MIN, -1, ZE_INT_OVERFLOW),
    INT_ERR("MAX + 1", OP_ADD, INT64_MAX, 1, ZE_INT_OVERFLOW),
    INT_ERR("MIN - 1", OP_SUB, INT64_MIN, 1, ZE_INT_OVERFLOW),
    INT_ERR("2^62 * 2", OP_MUL, (int64_t)1 << 62, 2, ZE_INT_OVERFLOW),
    INT_CMP("1 < 2", OP_LT, 1, 2, true),
    INT_CMP("MIN < MAX", OP_LT, INT64_MIN, INT64_MAX, true),
    INT_CMP("3 >= 3", OP_GE, 3, 3, true),
    INT_CMP("3 != 3", OP_NE, 3, 3, false),
    /* % is fmod; a zero divisor or a result that is not finite is an error */
    FLT("-7.5 % 2.0", OP_MOD, -7.5, 2.0, -1.5),
    FLT("7.5 % -2.0", OP_MOD, 7.5, -2.0, 1.5),
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

static const ZSpan none = {0, 0, 0, 0};

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
    cr_expect_eq(v.i, -1);
    ZExpr *lit = ze_literal(a, &v, none, ti);
    cr_assert_not_null(lit);
    cr_expect_eq(lit->kind, E_INT);
    cr_expect_eq(lit->lit.i, -1);
    cr_expect_eq(lit->type, ti);
    ZEval unknown = {a, NULL, NULL, NULL};
    cr_expect_not(ze_eval(&unknown, e, &v), "a constant without a value");
    zu_arena_free(a);
}
