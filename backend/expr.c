/* expr.c — expressions and pure actions to LLVM IR.
 *
 * Values.  A workflow value is a zgrt_value {i64 tag, i64 payload}; an
 * expression compiles to a pair of i64 SSA values (ZbVal).  The tag of an
 * expression is known from its checked type, so tags are constants; the
 * payload is the integer, the bool (0/1), the enum value (enum index << 32 |
 * member), the bits of the double, or the address of a zgrt_str / json_t.
 * A json `null` is a json value with a NULL payload.
 *
 * Checks.  Integer + - * use the overflow intrinsics; / and % check for a
 * zero divisor, / for INT64_MIN / -1; float results must be finite.  A
 * failed check calls zgrt_trap (which does not return) with a location
 * index.
 *
 * Division.  / on ints rounds towards negative infinity and % (int and
 * float) takes the sign of the divisor (language reference §5.2; the
 * rules are listed in compiler/eval.c): LLVM's sdiv, srem and frem
 * truncate, so the quotient is lowered by one, or the divisor added to the
 * remainder, when the remainder is not zero and its sign differs from the
 * divisor's.
 *
 * Pure actions.  `void zg.pure.f(i8* ctx, i8* args, i8* outs)` computes
 * pure action f's body; it is internal to each module that calls it and
 * compiled there on first use.
 *
 * Named guards.  A plain named guard used in an expression (a plain
 * condition, or a term of a CPL atom) is inlined when the program uses
 * it once and the function being generated has inlined fewer than
 * ZB_GUARD_INLINE_NODES nodes of guards; otherwise it is a call of
 * `i1 zg.guard.g(i8* ctx, i8* store, i64 gen)`, internal to each module
 * that uses it and never inlined by LLVM, which computes the guard at
 * most once per evaluation (a memo table, gen_guard_body).  So a guard's code is generated once per
 * function, however often and however deep guards use one another (a
 * guard using another twice, 30 levels deep, was 2^30 copies), and no
 * function grows past the budget: a chain of 16,000 guards each using the
 * previous one once was one function, on which LLVM's -O2 is superlinear
 * (5.7 s of CPU, 2.8 times the 8,000-guard chain), and one function per
 * guard costs LLVM about 0.8 ms each (14 s).  Guard functions are
 * generated from a work list (zb_mod_finish), not recursively: a chain is
 * as long as the resolver allows (ZR_MAX_GUARD_DEPTH).
 */
#include <string.h>

#include "gen.h"

/* ------------------------------------------------------------------ */
/* helpers                                                             */
/* ------------------------------------------------------------------ */

/* Stops the run at loc with msg when cond (i1) holds. */
static void trap_if(ZbFn *f, LLVMValueRef cond, int loc, const char *msg)
{
    LLVMBasicBlockRef bad = zb_block(f, "trap"), ok = zb_block(f, "ok");
    LLVMBuildCondBr(f->b, cond, bad, ok);
    LLVMPositionBuilderAtEnd(f->b, bad);
    LLVMValueRef args[3] = {f->ctx, ci32(f->g, loc), zb_cstr(f->md, msg)};
    zb_call_rt(f, ZB_RT_zgrt_trap, args, 3);
    LLVMBuildUnreachable(f->b);
    LLVMPositionBuilderAtEnd(f->b, ok);
}

static LLVMValueRef intrinsic(ZbFn *f, const char *name, LLVMTypeRef overload, LLVMTypeRef *fnty)
{
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    if (!id) ZU_ICE("unknown intrinsic %s", name);
    *fnty = LLVMIntrinsicGetType(f->g->lc, id, &overload, 1);
    return LLVMGetIntrinsicDeclaration(f->md->m, id, &overload, 1);
}

static LLVMValueRef to_dbl(ZbFn *f, LLVMValueRef bits)
{
    return LLVMBuildBitCast(f->b, bits, f->g->t_dbl, "");
}
static LLVMValueRef from_dbl(ZbFn *f, LLVMValueRef d)
{
    return LLVMBuildBitCast(f->b, d, f->g->t_i64, "");
}
static LLVMValueRef truth(ZbFn *f, LLVMValueRef pay)
{
    return LLVMBuildICmp(f->b, LLVMIntNE, pay, ci64(f->g, 0), "");
}
static ZbVal bool_val(ZbFn *f, LLVMValueRef i1)
{
    return (ZbVal){ci64(f->g, ZGRT_BOOL), LLVMBuildZExt(f->b, i1, f->g->t_i64, "")};
}

/* ------------------------------------------------------------------ */
/* expressions                                                         */
/* ------------------------------------------------------------------ */

LLVMValueRef zb_cond_i1(ZbFn *f, const ZExpr *e) { return truth(f, zb_expr(f, e).pay); }

ZbVal zb_error_val(ZbFn *f) { return (ZbVal){ci64(f->g, ZGRT_UNDEF), ci64(f->g, 0)}; }

/* The payload of variable `var` in the store (its tag is known from the
 * variable's type). */
static LLVMValueRef read_var(ZbFn *f, int var)
{
    if (!f->store) ZU_ICE("variable read outside a lifeline function");
    return zb_load_at(f, f->g->t_i64, f->store, 16 * (int64_t)var + 8);
}

LLVMValueRef zb_term_ptr(ZbFn *f, const ZExpr *e)
{
    for (int i = 0; i < f->nterms; i++)
        if (f->terms[i].e == e) return f->terms[i].ptr;
    return NULL;
}

static ZbVal name_val(ZbFn *f, const ZExpr *e)
{
    ZbVal v;
    if (zb_lit_val(f->md, e, &v)) return v;
    switch (e->name_kind) {
    case NAME_VAR: return (ZbVal){ci64(f->g, zb_tag_of_type(e->type)), read_var(f, e->decl->index)};
    case NAME_GUARD: {
        const ZDecl *g = e->decl;
        if (!g || !g->expr) ZU_ICE("guard `%s` without a formula", e->name);
        if (!f->store) ZU_ICE("guard `%s` read outside a lifeline function", e->name);
        /* a guard used once is inlined while the function has room; any
         * other is a call: a guard using another twice, n levels deep,
         * would be 2^n copies inline */
        int k = g->index;
        if (k >= 0 && k < f->g->nguards && f->g->guard_uses[k] == 1 &&
            f->g->guard_nodes[k] <= f->inline_left) {
            f->inline_left -= f->g->guard_nodes[k];
            return zb_expr(f, g->expr);
        }
        LLVMValueRef fn = zb_get_guard(f->md, g);
        if (!f->gen) ZU_ICE("guard `%s` evaluated outside a guard evaluation", e->name);
        LLVMValueRef args[3] = {f->ctx, f->store, f->gen};
        return bool_val(f, LLVMBuildCall2(f->b, LLVMGlobalGetValueType(fn), fn, args, 3, ""));
    }
    case NAME_PARAM:
        if (f->mode != ZB_FN_PURE) ZU_ICE("parameter `%s` read outside a pure action", e->name);
        return (ZbVal){ci64(f->g, zb_tag_of_type(e->type)),
                       zb_load_at(f, f->g->t_i64, f->args, 16 * (int64_t)e->member + 8)};
    default: ZU_ICE("unresolved name `%s` in generated code", e->name ? e->name : "?");
    }
}

static ZbVal at_var_val(ZbFn *f, const ZExpr *e)
{
    if (f->mode != ZB_FN_EVAL) ZU_ICE("@%s.%s outside a monitor function", e->lifeline, e->name);
    LLVMValueRef tag = ci64(f->g, zb_tag_of_type(e->type));
    if (e->life == f->life) return (ZbVal){tag, read_var(f, e->decl->index)};
    LLVMValueRef p = zb_term_ptr(f, e);
    if (!p) ZU_ICE("@%s.%s read before its definedness check", e->lifeline, e->name);
    return (ZbVal){tag, zb_load_at(f, f->g->t_i64, p, 8)};
}

static ZbVal int_arith(ZbFn *f, const ZExpr *e, LLVMValueRef a, LLVMValueRef b)
{
    ZbGen *g = f->g;
    int loc = zb_loc(g, e->span);
    const char *iname = NULL;
    const char *msg = NULL;
    switch (e->op) {
    case OP_ADD:
        iname = "llvm.sadd.with.overflow";
        msg = "integer overflow in `+`";
        break;
    case OP_SUB:
        iname = "llvm.ssub.with.overflow";
        msg = "integer overflow in `-`";
        break;
    case OP_MUL:
        iname = "llvm.smul.with.overflow";
        msg = "integer overflow in `*`";
        break;
    case OP_DIV:
    case OP_MOD: {
        trap_if(f, LLVMBuildICmp(f->b, LLVMIntEQ, b, ci64(g, 0), ""), loc, "division by zero");
        LLVMValueRef neg1 = LLVMBuildICmp(f->b, LLVMIntEQ, b, ci64(g, -1), "");
        if (e->op == OP_DIV) {
            LLVMValueRef minv = LLVMBuildICmp(f->b, LLVMIntEQ, a, ci64(g, INT64_MIN), "");
            trap_if(f, LLVMBuildAnd(f->b, minv, neg1, ""), loc, "integer overflow in `/`");
        } else {
            /* x % -1 is 0, and so is x % 1: srem by 1 keeps INT64_MIN % -1
             * away from srem's undefined case */
            b = LLVMBuildSelect(f->b, neg1, ci64(g, 1), b, "");
        }
        LLVMValueRef rem = LLVMBuildSRem(f->b, a, b, "");
        LLVMValueRef off = LLVMBuildAnd(
            f->b, LLVMBuildICmp(f->b, LLVMIntNE, rem, ci64(g, 0), ""),
            LLVMBuildICmp(f->b, LLVMIntSLT, LLVMBuildXor(f->b, rem, b, ""), ci64(g, 0), ""), "");
        LLVMValueRef r;
        if (e->op == OP_DIV)
            r = LLVMBuildSub(f->b, LLVMBuildSDiv(f->b, a, b, ""),
                             LLVMBuildZExt(f->b, off, g->t_i64, ""), "");
        else /* rem and b have opposite signs: the sum cannot overflow */
            r = LLVMBuildSelect(f->b, off, LLVMBuildAdd(f->b, rem, b, ""), rem, "");
        return (ZbVal){ci64(g, ZGRT_INT), r};
    }
    default: ZU_UNREACHABLE();
    }
    LLVMTypeRef fty;
    LLVMValueRef fn = intrinsic(f, iname, g->t_i64, &fty);
    LLVMValueRef args[2] = {a, b};
    LLVMValueRef pair = LLVMBuildCall2(f->b, fty, fn, args, 2, "");
    LLVMValueRef r = LLVMBuildExtractValue(f->b, pair, 0, "");
    trap_if(f, LLVMBuildExtractValue(f->b, pair, 1, ""), loc, msg);
    return (ZbVal){ci64(g, ZGRT_INT), r};
}

static void check_finite(ZbFn *f, LLVMValueRef d, int loc)
{
    LLVMTypeRef fty;
    LLVMValueRef fabs_fn = intrinsic(f, "llvm.fabs", f->g->t_dbl, &fty);
    LLVMValueRef m = LLVMBuildCall2(f->b, fty, fabs_fn, &d, 1, "");
    /* ordered: false for NaN as well as for infinity */
    LLVMValueRef ok =
        LLVMBuildFCmp(f->b, LLVMRealOLT, m, LLVMConstReal(f->g->t_dbl, 1.0 / 0.0), "");
    trap_if(f, LLVMBuildNot(f->b, ok, ""), loc, "float result is not finite");
}

/* x % y with the sign of y (y != 0): frem (C fmod), plus y when the
 * signs differ; a zero remainder takes y's sign. */
static LLVMValueRef float_mod(ZbFn *f, LLVMValueRef x, LLVMValueRef y)
{
    LLVMValueRef zero = LLVMConstReal(f->g->t_dbl, 0.0);
    LLVMValueRef r = LLVMBuildFRem(f->b, x, y, "");
    LLVMValueRef differ = LLVMBuildXor(f->b, LLVMBuildFCmp(f->b, LLVMRealOLT, r, zero, ""),
                                       LLVMBuildFCmp(f->b, LLVMRealOLT, y, zero, ""), "");
    LLVMValueRef nonzero = LLVMBuildFCmp(f->b, LLVMRealONE, r, zero, "");
    r = LLVMBuildSelect(f->b, LLVMBuildAnd(f->b, nonzero, differ, ""),
                        LLVMBuildFAdd(f->b, r, y, ""), r, "");
    LLVMTypeRef fty;
    LLVMValueRef copysign = intrinsic(f, "llvm.copysign", f->g->t_dbl, &fty);
    LLVMValueRef signed_zero =
        LLVMBuildCall2(f->b, fty, copysign, (LLVMValueRef[]){zero, y}, 2, "");
    return LLVMBuildSelect(f->b, nonzero, r, signed_zero, "");
}

static ZbVal float_arith(ZbFn *f, const ZExpr *e, LLVMValueRef a, LLVMValueRef b)
{
    ZbGen *g = f->g;
    int loc = zb_loc(g, e->span);
    LLVMValueRef x = to_dbl(f, a), y = to_dbl(f, b), r;
    if (e->op == OP_DIV || e->op == OP_MOD)
        trap_if(f, LLVMBuildFCmp(f->b, LLVMRealOEQ, y, LLVMConstReal(g->t_dbl, 0.0), ""), loc,
                "division by zero");
    switch (e->op) {
    case OP_ADD: r = LLVMBuildFAdd(f->b, x, y, ""); break;
    case OP_SUB: r = LLVMBuildFSub(f->b, x, y, ""); break;
    case OP_MUL: r = LLVMBuildFMul(f->b, x, y, ""); break;
    case OP_DIV: r = LLVMBuildFDiv(f->b, x, y, ""); break;
    case OP_MOD: r = float_mod(f, x, y); break;
    default: ZU_UNREACHABLE();
    }
    check_finite(f, r, loc);
    return (ZbVal){ci64(g, ZGRT_FLOAT), from_dbl(f, r)};
}

static LLVMValueRef runtime_compare(ZbFn *f, ZbVal a, ZbVal b)
{
    ZbVal vs[2] = {a, b};
    LLVMValueRef arr = zb_value_array(f, vs, 2);
    LLVMValueRef args[2] = {
        arr, LLVMBuildGEP2(f->b, f->g->t_i8, arr, (LLVMValueRef[]){ci64(f->g, 16)}, 1, "")};
    return zb_call_rt(f, ZB_RT_zgrt_compare, args, 2);
}

static LLVMValueRef compare(ZbFn *f, const ZExpr *e, ZbVal a, ZbVal b)
{
    ZTypeKind k = e->a->type ? e->a->type->kind : TY_ERROR;
    if (k == TY_NULL && e->b->type) k = e->b->type->kind;
    static const LLVMIntPredicate ipred[] = {LLVMIntEQ,  LLVMIntNE,  LLVMIntSLT,
                                             LLVMIntSLE, LLVMIntSGT, LLVMIntSGE};
    static const LLVMRealPredicate fpred[] = {LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT,
                                              LLVMRealOLE, LLVMRealOGT, LLVMRealOGE};
    int i = (int)e->op - (int)OP_EQ;
    if (i < 0 || i > 5) ZU_UNREACHABLE();
    switch (k) {
    case TY_INT:
    case TY_BOOL:
    case TY_ENUM: return LLVMBuildICmp(f->b, ipred[i], a.pay, b.pay, "");
    case TY_FLOAT: return LLVMBuildFCmp(f->b, fpred[i], to_dbl(f, a.pay), to_dbl(f, b.pay), "");
    case TY_STR:
    case TY_JSON:
    case TY_NULL: {
        LLVMValueRef c = runtime_compare(f, a, b);
        return LLVMBuildICmp(f->b, ipred[i], c, ci32(f->g, 0), "");
    }
    default: ZU_ICE("comparison of values of type kind %d", (int)k);
    }
}

static ZbVal logical(ZbFn *f, const ZExpr *e)
{
    bool is_and = e->op == OP_AND;
    LLVMValueRef l = zb_cond_i1(f, e->a);
    LLVMBasicBlockRef lbb = LLVMGetInsertBlock(f->b);
    LLVMBasicBlockRef rhs = zb_block(f, is_and ? "and.rhs" : "or.rhs");
    LLVMBasicBlockRef join = zb_block(f, is_and ? "and.end" : "or.end");
    if (is_and)
        LLVMBuildCondBr(f->b, l, rhs, join);
    else
        LLVMBuildCondBr(f->b, l, join, rhs);
    LLVMPositionBuilderAtEnd(f->b, rhs);
    LLVMValueRef r = zb_cond_i1(f, e->b);
    LLVMBasicBlockRef rbb = LLVMGetInsertBlock(f->b);
    LLVMBuildBr(f->b, join);
    LLVMPositionBuilderAtEnd(f->b, join);
    LLVMValueRef phi = LLVMBuildPhi(f->b, f->g->t_i1, "");
    LLVMValueRef vals[2] = {LLVMConstInt(f->g->t_i1, is_and ? 0 : 1, 0), r};
    LLVMBasicBlockRef bbs[2] = {lbb, rbb};
    LLVMAddIncoming(phi, vals, bbs, 2);
    return bool_val(f, phi);
}

static ZbVal binary(ZbFn *f, const ZExpr *e)
{
    if (e->op == OP_AND || e->op == OP_OR) return logical(f, e);
    ZbVal a = zb_expr(f, e->a);
    ZbVal b = zb_expr(f, e->b);
    if (e->op >= OP_EQ && e->op <= OP_GE) return bool_val(f, compare(f, e, a, b));
    ZTypeKind k = e->type ? e->type->kind : TY_ERROR;
    if (k == TY_INT) return int_arith(f, e, a.pay, b.pay);
    if (k == TY_FLOAT) return float_arith(f, e, a.pay, b.pay);
    if (k == TY_STR && e->op == OP_ADD) {
        ZbVal vs[2] = {a, b};
        LLVMValueRef arr = zb_value_array(f, vs, 2);
        LLVMValueRef out = zb_stack_array(f, zb_desc_type(f->g->lc, ZB_TY_VALUE), 1);
        LLVMValueRef args[4] = {f->ctx, arr, zb_byte_at(f, arr, 16), out};
        zb_call_rt(f, ZB_RT_zgrt_concat, args, 4);
        return (ZbVal){ci64(f->g, ZGRT_STR), zb_load_at(f, f->g->t_i64, out, 8)};
    }
    ZU_ICE("operator %s on type kind %d", za_op_text(e->op), (int)k);
}

static ZbVal unary(ZbFn *f, const ZExpr *e)
{
    ZbVal a = zb_expr(f, e->a);
    if (e->op == OP_NOT)
        return (ZbVal){ci64(f->g, ZGRT_BOOL), LLVMBuildXor(f->b, a.pay, ci64(f->g, 1), "")};
    if (e->type && e->type->kind == TY_FLOAT)
        return (ZbVal){ci64(f->g, ZGRT_FLOAT),
                       from_dbl(f, LLVMBuildFNeg(f->b, to_dbl(f, a.pay), ""))};
    int loc = zb_loc(f->g, e->span);
    trap_if(f, LLVMBuildICmp(f->b, LLVMIntEQ, a.pay, ci64(f->g, INT64_MIN), ""), loc,
            "integer overflow in `-`");
    return (ZbVal){ci64(f->g, ZGRT_INT), LLVMBuildNeg(f->b, a.pay, "")};
}

static ZbVal cond_expr(ZbFn *f, const ZExpr *e)
{
    LLVMValueRef c = zb_cond_i1(f, e->c);
    LLVMBasicBlockRef tb = zb_block(f, "cond.then"), eb = zb_block(f, "cond.else");
    LLVMBasicBlockRef join = zb_block(f, "cond.end");
    LLVMBuildCondBr(f->b, c, tb, eb);
    LLVMPositionBuilderAtEnd(f->b, tb);
    ZbVal a = zb_expr(f, e->a);
    LLVMBasicBlockRef ta = LLVMGetInsertBlock(f->b);
    LLVMBuildBr(f->b, join);
    LLVMPositionBuilderAtEnd(f->b, eb);
    ZbVal b = zb_expr(f, e->b);
    LLVMBasicBlockRef tb2 = LLVMGetInsertBlock(f->b);
    LLVMBuildBr(f->b, join);
    LLVMPositionBuilderAtEnd(f->b, join);
    LLVMBasicBlockRef bbs[2] = {ta, tb2};
    LLVMValueRef pay = LLVMBuildPhi(f->b, f->g->t_i64, "");
    LLVMValueRef pv[2] = {a.pay, b.pay};
    LLVMAddIncoming(pay, pv, bbs, 2);
    return (ZbVal){ci64(f->g, zb_tag_of_type(e->type)), pay};
}

static ZbVal call_expr(ZbFn *f, const ZExpr *e)
{
    int n = e->args.len;
    ZbVal *vs = zu_alloc(f->g->a, sizeof *vs * (size_t)n);
    if (e->builtin == BI_NONE && e->decl && e->decl->kind == D_ACTION &&
        e->decl->action != ACT_PURE) {
        zd_error(f->g->d, e->span,
                 "the backend cannot call %s action `%s` inside an expression yet: "
                 "assign its result first (`y = %s(...);`)",
                 e->decl->action == ACT_EXTERN_PURE ? za_action_kind_name(ACT_EXTERN_PURE) : "this",
                 e->name, e->name);
        f->g->failed = true;
        return zb_error_val(f);
    }
    for (int i = 0; i < n; i++) vs[i] = zb_expr(f, ZU_VEC_AT(e->args, i));
    LLVMValueRef args = zb_value_array(f, vs, n);
    LLVMValueRef out = zb_stack_array(f, zb_desc_type(f->g->lc, ZB_TY_VALUE), 1);
    if (e->builtin != BI_NONE) {
        LLVMValueRef a[6] = {f->ctx, ci32(f->g, (int)e->builtin),      ci32(f->g, n), args,
                             out,    ci32(f->g, zb_loc(f->g, e->span))};
        zb_call_rt(f, ZB_RT_zgrt_builtin, a, 6);
    } else {
        const ZDecl *act = e->decl;
        if (!act || act->kind != D_ACTION) ZU_ICE("call of `%s` without a declaration", e->name);
        LLVMValueRef fn = zb_get_pure(f->md, act);
        LLVMValueRef a[3] = {f->ctx, args, out};
        LLVMBuildCall2(f->b, LLVMGlobalGetValueType(fn), fn, a, 3, "");
    }
    return (ZbVal){ci64(f->g, zb_tag_of_type(e->type)), zb_load_at(f, f->g->t_i64, out, 8)};
}

ZbVal zb_expr(ZbFn *f, const ZExpr *e)
{
    ZbVal v;
    if (!e) ZU_ICE("missing expression");
    switch (e->kind) {
    case E_INT:
    case E_FLOAT:
    case E_STR:
    case E_BOOL:
    case E_NULL:
        if (!zb_lit_val(f->md, e, &v)) ZU_UNREACHABLE();
        return v;
    case E_NAME: return name_val(f, e);
    case E_AT_VAR: return at_var_val(f, e);
    case E_UNARY: return unary(f, e);
    case E_BINARY: return binary(f, e);
    case E_COND: return cond_expr(f, e);
    case E_CALL: return call_expr(f, e);
    default: ZU_ICE("expression kind %s in generated code", za_expr_kind_name(e->kind));
    }
}

/* ------------------------------------------------------------------ */
/* pure actions                                                        */
/* ------------------------------------------------------------------ */

static LLVMTypeRef body3_type(ZbGen *g)
{
    LLVMTypeRef ps[3] = {g->t_ptr, g->t_ptr, g->t_ptr};
    return LLVMFunctionType(g->t_void, ps, 3, 0);
}

LLVMValueRef zb_get_pure(ZbMod *md, const ZDecl *act)
{
    char *name = zu_fmt(md->g->a, "zg.pure.%s", act->name);
    LLVMValueRef fn = LLVMGetNamedFunction(md->m, name);
    if (fn) return fn;
    fn = LLVMAddFunction(md->m, name, body3_type(md->g));
    LLVMSetLinkage(fn, LLVMInternalLinkage);
    ZbFn f;
    zb_fn_begin(&f, md, fn, ZB_FN_PURE, -1);
    f.args = LLVMGetParam(fn, 1);
    f.outs = LLVMGetParam(fn, 2);
    const ZExpr *body = act->expr;
    if (!body) ZU_ICE("pure action `%s` without a body", act->name);
    if (body->kind == E_TUPLE) {
        for (int i = 0; i < body->args.len; i++) {
            const ZExpr *x = ZU_VEC_AT(body->args, i);
            ZbVal v = zb_expr(&f, x);
            zb_store_val(&f, f.outs, 16 * (int64_t)i, v);
        }
    } else {
        ZbVal v = zb_expr(&f, body);
        if (act->results.len == 1) {
            const ZParam *r = ZU_VEC_AT(act->results, 0);
            v.tag = ci64(md->g, zb_tag_of_type(r->type));
        }
        zb_store_val(&f, f.outs, 0, v);
    }
    LLVMBuildRetVoid(f.b);
    zb_fn_end(&f);
    return fn;
}

/* ------------------------------------------------------------------ */
/* named guards                                                        */
/* ------------------------------------------------------------------ */

bool zb_uses_guard(const ZExpr *e)
{
    if (!e) return false;
    if (e->kind == E_NAME && e->name_kind == NAME_GUARD) return true;
    if (zb_uses_guard(e->a) || zb_uses_guard(e->b) || zb_uses_guard(e->c)) return true;
    for (int i = 0; i < e->args.len; i++)
        if (zb_uses_guard(ZU_VEC_AT(e->args, i))) return true;
    return false;
}

/* The module's generation counter, thread-local: one per LLVM module, so
 * that the stamps of every memo table in it come from one sequence. */
static LLVMValueRef gen_counter(ZbMod *md)
{
    LLVMValueRef c = LLVMGetNamedGlobal(md->m, "zg.guard.gen");
    if (c) return c;
    c = LLVMAddGlobal(md->m, md->g->t_i64, "zg.guard.gen");
    LLVMSetLinkage(c, LLVMInternalLinkage);
    LLVMSetInitializer(c, ci64(md->g, 0));
    LLVMSetThreadLocal(c, 1);
    return c;
}

void zb_guard_generation(ZbFn *f)
{
    LLVMValueRef c = gen_counter(f->md);
    LLVMValueRef g =
        LLVMBuildAdd(f->b, LLVMBuildLoad2(f->b, f->g->t_i64, c, ""), ci64(f->g, 1), "");
    LLVMBuildStore(f->b, g, c);
    f->gen = g;
}

LLVMValueRef zb_get_guard(ZbMod *md, const ZDecl *g)
{
    ZbGen *gen = md->g;
    char *name = zu_fmt(gen->a, "zg.guard.%s", g->name);
    LLVMValueRef fn = LLVMGetNamedFunction(md->m, name);
    if (fn) return fn;
    LLVMTypeRef ps[3] = {gen->t_ptr, gen->t_ptr, gen->t_i64};
    fn = LLVMAddFunction(md->m, name, LLVMFunctionType(gen->t_i1, ps, 3, 0));
    LLVMSetLinkage(fn, LLVMInternalLinkage);
    zb_set_noinline(gen, fn);
    if (!md->memo) {
        /* the table's size is known when the module is finished */
        md->memo = LLVMAddGlobal(md->m, gen->t_i64, "zg.guard.memo.placeholder");
        md->gen_tls = gen_counter(md);
    }
    if (md->nguards == md->capguards) {
        int ncap = md->capguards ? md->capguards * 2 : 8;
        md->guards = zb_grow(gen->a, md->guards, md->nguards, ncap, sizeof *md->guards);
        md->guard_fns = zb_grow(gen->a, md->guard_fns, md->nguards, ncap, sizeof *md->guard_fns);
        md->guard_slots =
            zb_grow(gen->a, md->guard_slots, md->nguards, ncap, sizeof *md->guard_slots);
        md->capguards = ncap;
    }
    md->guards[md->nguards] = g;
    md->guard_slots[md->nguards] = md->nslots++;
    md->guard_fns[md->nguards++] = fn;
    return fn;
}

/* The body of a guard function: its memo slot holds gen << 1 | value once
 * it is computed in generation gen (the store does not change during one
 * evaluation, and a guard has no effect but a trap, after which nothing
 * is read), so a guard is computed at most once per evaluation however
 * often the guards that use it refer to it: a tower of 30 levels, each
 * guard using the previous one twice, would otherwise be evaluated 2^30
 * times. */
static void gen_guard_body(ZbMod *md, const ZDecl *g, LLVMValueRef fn, int slot)
{
    ZbGen *gen = md->g;
    ZbFn f;
    zb_fn_begin(&f, md, fn, ZB_FN_GUARD, -1);
    f.store = LLVMGetParam(fn, 1);
    f.gen = LLVMGetParam(fn, 2);
    LLVMValueRef one = ci64(gen, 1);
    LLVMValueRef p =
        LLVMBuildGEP2(f.b, gen->t_i64, md->memo, (LLVMValueRef[]){ci64(gen, slot)}, 1, "");
    LLVMValueRef m = LLVMBuildLoad2(f.b, gen->t_i64, p, "");
    LLVMValueRef hit = LLVMBuildICmp(f.b, LLVMIntEQ, LLVMBuildLShr(f.b, m, one, ""), f.gen, "");
    LLVMBasicBlockRef known = zb_block(&f, "memo.hit"), compute = zb_block(&f, "memo.miss");
    LLVMBuildCondBr(f.b, hit, known, compute);
    LLVMPositionBuilderAtEnd(f.b, known);
    LLVMBuildRet(f.b, LLVMBuildTrunc(f.b, m, gen->t_i1, ""));
    LLVMPositionBuilderAtEnd(f.b, compute);
    LLVMValueRef v = zb_cond_i1(&f, g->expr);
    LLVMValueRef stamp = LLVMBuildOr(f.b, LLVMBuildShl(f.b, f.gen, one, ""),
                                     LLVMBuildZExt(f.b, v, gen->t_i64, ""), "");
    LLVMBuildStore(f.b, stamp, p);
    LLVMBuildRet(f.b, v);
    zb_fn_end(&f);
}

void zb_mod_finish(ZbMod *md)
{
    while (md->nguards > 0) {
        md->nguards--;
        gen_guard_body(md, md->guards[md->nguards], md->guard_fns[md->nguards],
                       md->guard_slots[md->nguards]);
    }
    if (!md->memo) return;
    /* the memo table, thread-local (parallel branches of a lifeline run
     * on threads of their own), in place of the placeholder */
    LLVMTypeRef ty = LLVMArrayType(md->g->t_i64, (unsigned)md->nslots);
    LLVMValueRef table = LLVMAddGlobal(md->m, ty, "zg.guard.memo");
    LLVMSetLinkage(table, LLVMInternalLinkage);
    LLVMSetInitializer(table, LLVMConstNull(ty));
    LLVMSetThreadLocal(table, 1);
    LLVMReplaceAllUsesWith(md->memo, LLVMConstBitCast(table, LLVMTypeOf(md->memo)));
    LLVMDeleteGlobal(md->memo);
    md->memo = NULL;
}
