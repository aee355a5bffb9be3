/* eval.c — monitor evaluation functions to LLVM IR.
 *
 * Monitor.  `void zg.eval.L(i8* ctx, i8* val, i8* old)` computes the
 * subformulas lifeline L evaluates, bottom-up (CPL paper, Algorithm 2).
 * An atom reads its unqualified variables from the store and @B.x from the
 * store (B == L) or zgrt_varview; when any of its terms is undefined it is
 * false, whatever its operators.  @B(ψ) with B ≠ L reads zgrt_view.  The
 * monitor plan (compiler/plan.c) gives what L keeps: val and old hold the
 * subformulas L evaluates at their positions in its keep.evals, and
 * zgrt_view / zgrt_varview take the position of the view in L's
 * keep.views / keep.varviews, constants.  When B cannot reach L in the message
 * graph, @B(ψ) is constantly false and @B.x undefined on L (no B-event is
 * ever in L's causal past) and no call is made; otherwise a missing slot
 * is an internal error.
 *
 * Size.  An eval function computes every subformula L evaluates, one
 * after the other; beyond ZB_EVAL_CHUNK of them it calls parts
 * zg.eval.L.k of that many each (in order: a part reads the values of
 * earlier ones from val), never inlined.  LLVM's -O2 is superlinear on
 * one huge function: a chain of 16,000 named guards (32,000 subformulas
 * on one lifeline) took 36 s of CPU to build in one function, 4.1 times
 * the 8,000-guard chain.
 */
#include <stdlib.h>

#include "gen.h"

/* The terms of an atom: every @B.x occurrence (the code finds each one's
 * view by its node, zb_term_ptr), and every variable it reads on the
 * store, once, also through the named guards its terms use.  Each guard
 * is looked through once and without recursion: a chain of guards is as
 * long as the resolver allows (ZR_MAX_GUARD_DEPTH), and a guard using
 * another twice would otherwise be walked 2^depth times. */
static void collect_terms(ZbFn *f, const ZExpr *atom, const ZExpr ***list, int *n)
{
    ZArena *a = f->g->a;
    int cap = 0, sp = 0, scap = 16;
    const ZExpr **st = zu_xmalloc(sizeof *st * (size_t)scap);
    ZIMap guards = {0}, vars = {0};
    st[sp++] = atom;
    while (sp > 0) {
        const ZExpr *e = st[--sp];
        if (!e) continue;
        bool added = true;
        if ((e->kind == E_NAME && e->name_kind == NAME_VAR) || e->kind == E_AT_VAR) {
            if (e->kind == E_NAME) zu_imap_put(&vars, (uint64_t)e->decl->index, &added);
            if (!added) continue;
            if (*n == cap) {
                cap = cap ? cap * 2 : 8;
                *list = zb_grow(a, *list, *n, cap, sizeof **list);
            }
            (*list)[(*n)++] = e;
            continue;
        }
        if (sp + 4 + e->args.len > scap) {
            scap = 2 * (sp + 4 + e->args.len);
            st = zu_xrealloc(st, sizeof *st * (size_t)scap);
        }
        if (e->kind == E_NAME && e->name_kind == NAME_GUARD && e->decl) {
            zu_imap_put(&guards, (uint64_t)e->decl->index, &added);
            if (added) st[sp++] = e->decl->expr;
            continue;
        }
        /* children pushed last first: visited in source order */
        for (int i = e->args.len - 1; i >= 0; i--) st[sp++] = ZU_VEC_AT(e->args, i);
        st[sp++] = e->c;
        st[sp++] = e->b;
        st[sp++] = e->a;
    }
    free(st);
    zu_imap_free(&guards);
    zu_imap_free(&vars);
}

/* An atom on lifeline f->life: false when one of its terms is undefined. */
static LLVMValueRef eval_atom(ZbFn *f, const ZExpr *atom)
{
    ZbGen *g = f->g;
    const ZExpr **terms = NULL;
    int n = 0;
    collect_terms(f, atom, &terms, &n);
    f->nterms = 0;
    /* an @B.x term whose lifeline cannot reach this one is never defined
     * here: the atom is constantly false */
    for (int i = 0; i < n; i++) {
        const ZExpr *t = terms[i];
        if (t->kind == E_AT_VAR && t->life != f->life && !zg_reaches(g->gt, t->life, f->life))
            return LLVMConstInt(g->t_i1, 0, 0);
    }
    LLVMValueRef defined = LLVMConstInt(g->t_i1, 1, 0);
    for (int i = 0; i < n; i++) {
        const ZExpr *t = terms[i];
        LLVMValueRef ok;
        if (t->kind == E_NAME || t->life == f->life) {
            LLVMValueRef tag = zb_load_at(f, g->t_i64, f->store, 16 * (int64_t)t->decl->index);
            ok = LLVMBuildICmp(f->b, LLVMIntNE, tag, ci64(g, ZGRT_UNDEF), "");
        } else {
            if (zb_term_ptr(f, t)) continue;
            int slot = zm_varview_slot(g->plan, f->life, t->life, t->decl->index);
            if (slot < 0)
                ZU_ICE("@%s.%s on lifeline %s has no variable-view slot", t->lifeline, t->name,
                       life_decl(g, f->life)->name);
            LLVMValueRef args[3] = {f->ctx, ci32(g, t->life), ci32(g, slot)};
            LLVMValueRef p = zb_call_rt(f, ZB_RT_zgrt_varview, args, 3);
            if (f->nterms == f->capterms) {
                f->capterms = f->capterms ? f->capterms * 2 : 8;
                f->terms = zb_grow(g->a, f->terms, f->nterms, f->capterms, sizeof *f->terms);
            }
            f->terms[f->nterms++] = (ZbTerm){t, p};
            ok = LLVMBuildIsNotNull(f->b, p, "");
        }
        defined = LLVMBuildAnd(f->b, defined, ok, "");
    }
    if (n == 0) return zb_cond_i1(f, atom);
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(f->b);
    LLVMBasicBlockRef evb = zb_block(f, "atom.eval"), join = zb_block(f, "atom.end");
    LLVMBuildCondBr(f->b, defined, evb, join);
    LLVMPositionBuilderAtEnd(f->b, evb);
    LLVMValueRef v = zb_cond_i1(f, atom);
    LLVMBasicBlockRef evend = LLVMGetInsertBlock(f->b);
    LLVMBuildBr(f->b, join);
    LLVMPositionBuilderAtEnd(f->b, join);
    LLVMValueRef phi = LLVMBuildPhi(f->b, g->t_i1, "");
    LLVMValueRef vals[2] = {LLVMConstInt(g->t_i1, 0, 0), v};
    LLVMBasicBlockRef bbs[2] = {pre, evend};
    LLVMAddIncoming(phi, vals, bbs, 2);
    f->nterms = 0;
    return phi;
}

/* The position of subformula id in the lifeline's val and old (its
 * keep.evals), a compile-time constant. */
static int val_pos(ZbFn *f, int id)
{
    int k = zm_eval_pos(f->g->plan, f->life, id);
    if (k < 0) ZU_ICE("φ%d is not evaluated on lifeline %s", id, life_decl(f->g, f->life)->name);
    return k;
}

static LLVMValueRef flag(ZbFn *f, LLVMValueRef arr, int id)
{
    LLVMValueRef b = zb_load_at(f, f->g->t_i8, arr, val_pos(f, id));
    return LLVMBuildICmp(f->b, LLVMIntNE, b, ci8(f->g, 0), "");
}

/* Evaluates evaluates[from, to) into fn, a function of the eval
 * signature. */
static void gen_evals(ZbGen *g, ZbMod *md, LLVMValueRef fn, int life, const ZVec *evaluates,
                      int from, int to)
{
    const char *lname = life_decl(g, life)->name;
    ZbFn f;
    zb_fn_begin(&f, md, fn, ZB_FN_EVAL, life);
    f.val = LLVMGetParam(fn, 1);
    f.old = LLVMGetParam(fn, 2);
    zb_fn_load_store(&f);
    LLVMValueRef vc_args[2] = {f.ctx, ci32(g, life)};
    LLVMValueRef vc_self = zb_call_rt(&f, ZB_RT_zgrt_vc, vc_args, 2);
    LLVMValueRef not_first = LLVMBuildICmp(f.b, LLVMIntSGT, vc_self, ci64(g, 1), "");
    /* one guard evaluation for the whole event: the store does not change */
    for (int i = from; i < to && !f.gen; i++) {
        const ZFormula *phi = ZU_VEC_AT(*evaluates, i);
        if (phi->kind == F_ATOM && zb_uses_guard(phi->atom)) zb_guard_generation(&f);
    }
    for (int i = from; i < to; i++) {
        const ZFormula *phi = ZU_VEC_AT(*evaluates, i);
        LLVMValueRef v;
        switch (phi->kind) {
        case F_TRUE: v = LLVMConstInt(g->t_i1, 1, 0); break;
        case F_ATOM: v = eval_atom(&f, phi->atom); break;
        case F_NOT: v = LLVMBuildNot(f.b, flag(&f, f.val, phi->a->id), ""); break;
        case F_AND:
            v = LLVMBuildAnd(f.b, flag(&f, f.val, phi->a->id), flag(&f, f.val, phi->b->id), "");
            break;
        case F_OR:
            v = LLVMBuildOr(f.b, flag(&f, f.val, phi->a->id), flag(&f, f.val, phi->b->id), "");
            break;
        case F_PREV: v = LLVMBuildAnd(f.b, not_first, flag(&f, f.old, phi->a->id), ""); break;
        case F_SINCE: {
            LLVMValueRef keep =
                LLVMBuildAnd(f.b, flag(&f, f.val, phi->a->id),
                             LLVMBuildAnd(f.b, not_first, flag(&f, f.old, phi->id), ""), "");
            v = LLVMBuildOr(f.b, flag(&f, f.val, phi->b->id), keep, "");
            break;
        }
        case F_AT:
            if (phi->life == life) {
                v = flag(&f, f.val, phi->a->id);
            } else if (!zg_reaches(g->gt, phi->life, life)) {
                /* no event of B is ever in this lifeline's causal past */
                v = LLVMConstInt(g->t_i1, 0, 0);
            } else {
                /* zgrt_view is 0 while no B-event is visible (vc[B] == 0) */
                int slot = zm_view_slot(g->plan, life, phi->life, phi->a->id);
                if (slot < 0)
                    ZU_ICE("@%s(φ%d) on lifeline %s has no view slot",
                           life_decl(g, phi->life)->name, phi->a->id, lname);
                LLVMValueRef a3[3] = {f.ctx, ci32(g, phi->life), ci32(g, slot)};
                LLVMValueRef view = zb_call_rt(&f, ZB_RT_zgrt_view, a3, 3);
                v = LLVMBuildICmp(f.b, LLVMIntNE, view, ci32(g, 0), "");
            }
            break;
        default: ZU_UNREACHABLE();
        }
        zb_store_at(&f, LLVMBuildZExt(f.b, v, g->t_i8, ""), f.val, val_pos(&f, phi->id));
    }
    LLVMBuildRetVoid(f.b);
    zb_fn_end(&f);
}

bool zb_has_eval(const ZbGen *g, int life) { return zm_has_eval(g->plan, life); }

void zb_gen_eval(ZbGen *g, ZbMod *md, int life)
{
    if (!zm_has_eval(g->plan, life)) return;
    const ZVec *evaluates = g->plan->lifelines[life].evaluates;
    const char *lname = life_decl(g, life)->name;
    LLVMTypeRef ps[3] = {g->t_ptr, g->t_ptr, g->t_ptr};
    LLVMTypeRef ty = LLVMFunctionType(g->t_void, ps, 3, 0);
    LLVMValueRef fn = LLVMAddFunction(md->m, zu_fmt(g->a, "zg.eval.%s", lname), ty);
    int n = evaluates->len;
    if (n <= ZB_EVAL_CHUNK) {
        gen_evals(g, md, fn, life, evaluates, 0, n);
        return;
    }
    ZbFn f;
    zb_fn_begin(&f, md, fn, ZB_FN_EVAL, life);
    LLVMValueRef args[3] = {f.ctx, LLVMGetParam(fn, 1), LLVMGetParam(fn, 2)};
    for (int k = 0, from = 0; from < n; k++, from += ZB_EVAL_CHUNK) {
        LLVMValueRef part = LLVMAddFunction(md->m, zu_fmt(g->a, "zg.eval.%s.%d", lname, k), ty);
        LLVMSetLinkage(part, LLVMInternalLinkage);
        zb_set_noinline(g, part);
        gen_evals(g, md, part, life, evaluates, from,
                  n - from < ZB_EVAL_CHUNK ? n : from + ZB_EVAL_CHUNK);
        LLVMBuildCall2(f.b, ty, part, args, 3, "");
    }
    LLVMBuildRetVoid(f.b);
    zb_fn_end(&f);
}
