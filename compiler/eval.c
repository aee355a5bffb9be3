/* eval.c — the compiler's one evaluator of expressions (prefix ze_).
 *
 * Pure: it computes values and reports what went wrong by its return
 * value and through the caller's callback; it prints nothing and changes
 * nothing but the arena it is handed for new strings.  The checker folds
 * constant expressions with it (check_fold.c); nothing else in the
 * compiler evaluates an expression.
 *
 * The rules (language reference §5.2, §5.4).  They are spelled out in two
 * more places, which must agree with these:
 *   - the backend emits them as LLVM IR for run time (backend/expr.c: the
 *     overflow intrinsics, the zero-divisor and INT64_MIN / -1 checks, the
 *     floor adjustment of / and %, the finiteness check), with strings
 *     compared and concatenated by the runtime (zgrt_compare in
 *     runtime/values.c, zgrt_concat in runtime/builtins.c);
 *   - the oracle (oracle/eval.c) keeps its own evaluator on purpose: it
 *     recomputes traced values as an independent second implementation,
 *     so it must not share this code.
 * tests/run/fold_agree.zg and tests/run/rules_*.zg check that folding at
 * compile time, evaluation at run time and the oracle give the same
 * values on the edge cases.
 *
 *   int     64-bit two's complement.  + - * never wrap: overflow is an
 *           error, and so is unary - of INT64_MIN.  / rounds towards
 *           negative infinity and % takes the sign of the divisor, as in
 *           Python (-7 / 2 == -4, -7 % 2 == 1, 7 % -2 == -1), so that
 *           a == (a / b) * b + a % b; a zero divisor is an error;
 *           INT64_MIN / -1 is an overflow error, INT64_MIN % -1 is 0.
 *   float   IEEE 754 double.  / and % by zero (0.0 or -0.0) are errors;
 *           % takes the sign of the divisor, as in Python: C fmod, plus
 *           the divisor when the signs differ, and a zero remainder has
 *           the divisor's sign (-7.5 % 2.0 == 0.5); a result of + - * /
 *           % that is not finite is an error.  Unary - never fails
 *           (-0.0 == 0.0).
 *   str     + concatenates the bytes.  < <= > >= compare bytes (code
 *           points, as the text is UTF-8); a proper prefix is smaller.
 *   == !=   two values of the same kind: ints and floats by value, bools,
 *           strings by bytes, enum values by enum and member, null == null.
 *   && || ?:  evaluate every operand.  At run time they short-circuit,
 *           so an error in an operand that run time would skip (the right
 *           of `false && …`, the untaken branch of `?:`) is still an error
 *           when the expression is folded.
 * Calls are not constant expressions (§5.4), so there are no builtins
 * here: the runtime computes them (runtime/builtins.c, §5.3), and the
 * oracle again.
 *
 * The messages differ between the two sides: folding says "division by
 * zero", "integer overflow", "float overflow" (the checker adds "in
 * constant expression"), run time "division by zero", "integer overflow
 * in `+`", "float result is not finite".
 */
#include "zgc.h"

#include <math.h>
#include <string.h>

const char *ze_error_text(ZEvalError err)
{
#define ZE_TEXT(id, text) [id] = text,
    static const char *const texts[] = {ZE_ERRORS(ZE_TEXT)};
#undef ZE_TEXT
    return err >= 0 && err < ZE__COUNT ? texts[err] : "?";
}

/* <0, 0, >0 for values of the same kind (only 0 or not for bools, enum
 * values and null). */
static int compare(const ZValue *x, const ZValue *y)
{
    switch (x->k) {
    case TY_INT: return (x->i > y->i) - (x->i < y->i);
    case TY_FLOAT: return (x->f > y->f) - (x->f < y->f);
    case TY_STR: {
        size_t n = x->n < y->n ? x->n : y->n;
        int r = memcmp(x->s, y->s, n);
        if (r) return r < 0 ? -1 : 1;
        return (x->n > y->n) - (x->n < y->n);
    }
    case TY_BOOL: return x->b != y->b;
    case TY_ENUM: return x->en != y->en || x->member != y->member;
    default: return 0;
    }
}

ZEvalError ze_unary(ZOp op, const ZValue *a, ZValue *out)
{
    *out = *a;
    if (op == OP_NOT)
        out->b = !a->b;
    else if (a->k == TY_FLOAT)
        out->f = -a->f;
    else if (a->i == INT64_MIN)
        return ZE_INT_OVERFLOW;
    else
        out->i = -a->i;
    return ZE_OK;
}

/* a / b rounded towards negative infinity (b != 0); false when it
 * overflows (INT64_MIN / -1). */
static bool floor_div(int64_t a, int64_t b, int64_t *q)
{
    if (a == INT64_MIN && b == -1) return false;
    int64_t t = a / b; /* C truncates: one too high when the exact
                        * quotient is negative and not whole */
    if (a % b != 0 && (a < 0) != (b < 0)) t--;
    *q = t;
    return true;
}

/* a % b with the sign of b (b != 0); never overflows.  x % -1 is 0, and
 * computing it as x % 1 keeps INT64_MIN % -1 out of C's undefined case. */
static int64_t floor_mod(int64_t a, int64_t b)
{
    if (b == -1) b = 1;
    int64_t m = a % b;
    if (m != 0 && (m < 0) != (b < 0)) m += b;
    return m;
}

/* x % y with the sign of y (y != 0), as Python's float %. */
static double float_mod(double x, double y)
{
    double m = fmod(x, y);
    if (m == 0) return copysign(0.0, y);
    if ((m < 0) != (y < 0)) m += y;
    return m;
}

static ZEvalError arith(ZArena *a, ZOp op, const ZValue *l, const ZValue *r, ZValue *v)
{
    v->k = l->k;
    if (l->k == TY_STR) { /* + */
        char *s = zu_alloc(a, l->n + r->n + 1);
        memcpy(s, l->s, l->n);
        memcpy(s + l->n, r->s, r->n);
        v->s = s;
        v->n = l->n + r->n;
        return ZE_OK;
    }
    if (l->k == TY_FLOAT) {
        switch (op) {
        case OP_ADD: v->f = l->f + r->f; break;
        case OP_SUB: v->f = l->f - r->f; break;
        case OP_MUL: v->f = l->f * r->f; break;
        case OP_DIV:
            if (r->f == 0) return ZE_DIV_ZERO;
            v->f = l->f / r->f;
            break;
        case OP_MOD:
            if (r->f == 0) return ZE_DIV_ZERO;
            v->f = float_mod(l->f, r->f);
            break;
        default: return ZE_NO_VALUE;
        }
        if (!isfinite(v->f)) return ZE_FLOAT_OVERFLOW;
        return ZE_OK;
    }
    bool over = false;
    switch (op) {
    case OP_ADD: over = __builtin_add_overflow(l->i, r->i, &v->i); break;
    case OP_SUB: over = __builtin_sub_overflow(l->i, r->i, &v->i); break;
    case OP_MUL: over = __builtin_mul_overflow(l->i, r->i, &v->i); break;
    case OP_DIV:
    case OP_MOD:
        if (r->i == 0) return ZE_DIV_ZERO;
        if (op == OP_DIV)
            over = !floor_div(l->i, r->i, &v->i);
        else
            v->i = floor_mod(l->i, r->i);
        break;
    default: return ZE_NO_VALUE;
    }
    if (over) return ZE_INT_OVERFLOW;
    return ZE_OK;
}

ZEvalError ze_binary(ZArena *a, ZOp op, const ZValue *l, const ZValue *r, ZValue *v)
{
    memset(v, 0, sizeof *v);
    switch (op) {
    case OP_AND:
        v->k = TY_BOOL;
        v->b = l->b && r->b;
        return ZE_OK;
    case OP_OR:
        v->k = TY_BOOL;
        v->b = l->b || r->b;
        return ZE_OK;
    case OP_EQ:
    case OP_NE:
        v->k = TY_BOOL;
        v->b = (l->k == r->k && compare(l, r) == 0) == (op == OP_EQ);
        return ZE_OK;
    case OP_LT:
        v->k = TY_BOOL;
        v->b = compare(l, r) < 0;
        return ZE_OK;
    case OP_LE:
        v->k = TY_BOOL;
        v->b = compare(l, r) <= 0;
        return ZE_OK;
    case OP_GT:
        v->k = TY_BOOL;
        v->b = compare(l, r) > 0;
        return ZE_OK;
    case OP_GE:
        v->k = TY_BOOL;
        v->b = compare(l, r) >= 0;
        return ZE_OK;
    default: return arith(a, op, l, r, v);
    }
}

/* A failed operation: reported through the callback, no value. */
static bool failed(const ZEval *ev, const ZExpr *e, ZEvalError err)
{
    if (err == ZE_OK) return true;
    if (err != ZE_NO_VALUE && ev->error) ev->error(ev->user, e, err);
    return false;
}

bool ze_eval(const ZEval *ev, const ZExpr *e, ZValue *v)
{
    if (!e || !e->type || e->type->kind == TY_ERROR) return false;
    memset(v, 0, sizeof *v);
    switch (e->kind) {
    case E_INT:
        v->k = TY_INT;
        v->i = e->lit.i;
        return true;
    case E_FLOAT:
        v->k = TY_FLOAT;
        v->f = e->lit.f;
        return true;
    case E_BOOL:
        v->k = TY_BOOL;
        v->b = e->lit.b;
        return true;
    case E_STR:
        v->k = TY_STR;
        v->s = e->lit.s ? e->lit.s : "";
        v->n = e->slen;
        return true;
    case E_NULL: v->k = TY_NULL; return true;
    case E_NAME:
        if (e->name_kind == NAME_MEMBER && e->decl) {
            v->k = TY_ENUM;
            v->en = e->decl;
            v->member = e->member;
            return true;
        }
        if (e->name_kind == NAME_CONST && e->decl && ev->constant)
            return ev->constant(ev->user, e->decl, v);
        return false;
    case E_UNARY: {
        ZValue a;
        if (!ze_eval(ev, e->a, &a)) return false;
        return failed(ev, e, ze_unary(e->op, &a, v));
    }
    case E_BINARY: {
        ZValue l = {0}, r = {0};
        bool ok_l = ze_eval(ev, e->a, &l), ok_r = ze_eval(ev, e->b, &r); /* report both sides */
        if (!ok_l || !ok_r) return false;
        return failed(ev, e, ze_binary(ev->arena, e->op, &l, &r, v));
    }
    case E_COND: {
        ZValue cv, a, b;
        bool ok_c = ze_eval(ev, e->c, &cv), ok_a = ze_eval(ev, e->a, &a),
             ok_b = ze_eval(ev, e->b, &b);
        if (!ok_c || !ok_a || !ok_b) return false;
        *v = cv.b ? a : b;
        return true;
    }
    default: return false;
    }
}

ZExpr *ze_literal(ZArena *a, const ZValue *v, ZSpan at, ZType *t)
{
    ZExpr *e;
    switch (v->k) {
    case TY_INT:
        e = za_expr(a, E_INT, at);
        e->lit.i = v->i;
        break;
    case TY_FLOAT:
        e = za_expr(a, E_FLOAT, at);
        e->lit.f = v->f;
        break;
    case TY_BOOL:
        e = za_expr(a, E_BOOL, at);
        e->lit.b = v->b;
        break;
    case TY_STR:
        e = za_expr(a, E_STR, at);
        e->lit.s = v->s;
        e->slen = v->n;
        break;
    case TY_NULL: e = za_expr(a, E_NULL, at); break;
    case TY_ENUM: {
        e = za_expr(a, E_NAME, at);
        ZParam *m = v->en->members.items[v->member];
        e->name = m->name;
        e->name_span = at;
        e->name_kind = NAME_MEMBER;
        e->decl = v->en;
        e->member = v->member;
        break;
    }
    default: return NULL;
    }
    e->life = -1;
    e->type = t;
    return e;
}
