/* body.c — local programs to LLVM IR: the lifeline module.
 *
 * Lifelines.  `void zg.body.L(i8* ctx)` runs π_L.  It reads the store
 * returned by zgrt_store(ctx) (variable x at byte 16 * x.index) and never
 * writes it: every event is a runtime call.  A parallel region calls
 * zgrt_par with one internal function per branch (zg.par.L.p.k).  A
 * statement list longer than ZB_BODY_PART statements is cut into parts,
 * internal functions zg.part.L.n called in order, never inlined: LLVM's
 * -O2 is superlinear on one long function (10,000 assignments on one
 * lifeline took 10.2 s of CPU, 2.6 times 5,000).  The
 * lifeline's module also holds its monitor evaluation function (eval.c)
 * and the pure actions and plain named guards it uses (expr.c).
 */
#include "gen.h"

/* ------------------------------------------------------------------ */
/* local programs                                                      */
/* ------------------------------------------------------------------ */

static void stmts(ZbFn *f, const ZVec *v);

static int action_slot(ZbGen *g, const ZDecl *act)
{
    for (int i = 0; i < g->nacts; i++)
        if (g->acts[i] == act) return i;
    ZU_ICE("action `%s` is not in the action table", act ? act->name : "?");
}

static void gen_send(ZbFn *f, const ZLocal *l)
{
    int n = l->vals.len;
    ZbVal *vs = zu_alloc(f->g->a, sizeof *vs * (size_t)n);
    for (int i = 0; i < n; i++) vs[i] = zb_expr(f, ZU_VEC_AT(l->vals, i));
    LLVMValueRef arr = zb_value_array(f, vs, n);
    LLVMValueRef args[6] = {f->ctx,
                            ci32(f->g, l->peer),
                            ci32(f->g, l->chan),
                            ci32(f->g, n),
                            arr,
                            ci32(f->g, zb_loc(f->g, l->src->span))};
    zb_call_rt(f, ZB_RT_zgrt_send, args, 6);
}

static void gen_recv(ZbFn *f, const ZLocal *l)
{
    int n = l->vals.len;
    int32_t *binds = zu_alloc(f->g->a, sizeof *binds * (size_t)n);
    ZbVal *cs = zu_alloc(f->g->a, sizeof *cs * (size_t)n);
    bool any_const = false;
    for (int i = 0; i < n; i++) {
        const ZExpr *x = ZU_VEC_AT(l->vals, i);
        binds[i] = zb_var_of(x);
        if (binds[i] >= 0) {
            cs[i] = zb_error_val(f);
        } else {
            if (!zb_lit_val(f->md, x, &cs[i]))
                ZU_ICE("receive binding is neither a variable nor a constant");
            any_const = true;
        }
    }
    LLVMValueRef args[7] = {f->ctx,
                            ci32(f->g, l->peer),
                            ci32(f->g, l->chan),
                            ci32(f->g, n),
                            zb_int_array(f, binds, n),
                            any_const ? zb_value_array(f, cs, n) : cnull(f->g),
                            ci32(f->g, zb_loc(f->g, l->src->span))};
    zb_call_rt(f, ZB_RT_zgrt_recv, args, 7);
}

static void assign_call(ZbFn *f, const char *action, int n, const int32_t *vars, LLVMValueRef vals,
                        int loc)
{
    LLVMValueRef args[6] = {f->ctx,        action ? zb_cstr(f->md, action) : cnull(f->g),
                            ci32(f->g, n), zb_int_array(f, vars, n),
                            vals,          ci32(f->g, loc)};
    zb_call_rt(f, ZB_RT_zgrt_assign, args, 6);
}

static void gen_assign(ZbFn *f, const ZLocal *l)
{
    const ZStmt *s = l->src;
    int loc = zb_loc(f->g, s->span);
    if (s->kind == S_MSG) { /* self message: params := args */
        int n = l->vals.len;
        ZbVal *vs = zu_alloc(f->g->a, sizeof *vs * (size_t)n);
        int32_t *vars = zu_alloc(f->g->a, sizeof *vars * (size_t)n);
        for (int i = 0; i < n; i++) {
            vs[i] = zb_expr(f, ZU_VEC_AT(l->vals, i));
            vars[i] = zb_var_of(i < s->params.len ? ZU_VEC_AT(s->params, i) : NULL);
            if (vars[i] < 0) ZU_ICE("self message binds a non-variable");
        }
        assign_call(f, NULL, n, vars, zb_value_array(f, vs, n), loc);
        return;
    }
    if (s->kind != S_ASSIGN || !s->expr)
        ZU_ICE("assignment from a %s statement", za_stmt_kind_name(s->kind));
    int nt = s->targets.len;
    int32_t *targets = zu_alloc(f->g->a, sizeof *targets * (size_t)nt);
    for (int i = 0; i < nt; i++) {
        const ZTarget *t = ZU_VEC_AT(s->targets, i);
        targets[i] = t->var ? t->var->index : -1;
    }
    const ZExpr *call = s->expr;
    const ZDecl *act = s->is_action && call->kind == E_CALL ? call->decl : NULL;
    if (act && act->kind == D_ACTION && act->action == ACT_PURE) {
        int nr = act->results.len;
        int na = call->args.len;
        ZbVal *vs = zu_alloc(f->g->a, sizeof *vs * (size_t)na);
        for (int i = 0; i < na; i++) vs[i] = zb_expr(f, ZU_VEC_AT(call->args, i));
        LLVMValueRef args = zb_value_array(f, vs, na);
        LLVMValueRef outs = zb_stack_array(f, zb_desc_type(f->g->lc, ZB_TY_VALUE), nr);
        LLVMValueRef fn = zb_get_pure(f->md, act);
        LLVMValueRef a[3] = {f->ctx, args, outs};
        LLVMBuildCall2(f->b, LLVMGlobalGetValueType(fn), fn, a, 3, "");
        /* without targets the results are dropped, but the event happens */
        assign_call(f, act->name, nt < nr ? nt : nr, targets, outs, loc);
    } else if (act && act->kind == D_ACTION) {
        int nr = act->results.len;
        int na = call->args.len;
        ZbVal *vs = zu_alloc(f->g->a, sizeof *vs * (size_t)na);
        int32_t *outs = zu_alloc(f->g->a, sizeof *outs * (size_t)nr);
        for (int i = 0; i < na; i++) vs[i] = zb_expr(f, ZU_VEC_AT(call->args, i));
        for (int i = 0; i < nr; i++) outs[i] = i < nt ? targets[i] : -1;
        LLVMValueRef args[6] = {
            f->ctx,         ci32(f->g, action_slot(f->g, act)), zb_value_array(f, vs, na),
            ci32(f->g, nr), zb_int_array(f, outs, nr),          ci32(f->g, loc)};
        zb_call_rt(f, ZB_RT_zgrt_act, args, 6);
    } else {
        ZbVal v = zb_expr(f, call);
        if (nt == 1) {
            const ZTarget *t = ZU_VEC_AT(s->targets, 0);
            if (t->var) v.tag = ci64(f->g, zb_tag_of_type(t->var->type));
        }
        assign_call(f, NULL, nt > 1 ? 1 : nt, targets, zb_value_array(f, &v, 1), loc);
    }
}

static const ZGuardInfo *guard_info(ZbGen *g, const ZStmt *construct)
{
    if (!g->gt) return NULL;
    int k = construct->construct - 1;
    if (k >= 0 && k < g->gt->guards.len) {
        const ZGuardInfo *gi = ZU_VEC_AT(g->gt->guards, k);
        if (gi->construct == construct) return gi;
    }
    for (int i = 0; i < g->gt->guards.len; i++) {
        const ZGuardInfo *gi = ZU_VEC_AT(g->gt->guards, i);
        if (gi->construct == construct) return gi;
    }
    return NULL;
}

/* The owner's choice event: the guard's value as i1. */
static LLVMValueRef gen_choice(ZbFn *f, const ZLocal *l)
{
    const ZStmt *s = l->src;
    int loc = zb_loc(f->g, s->span);
    LLVMValueRef tag = ci32(f->g, s->construct - 1);
    const ZGuardInfo *gi = guard_info(f->g, s);
    if (gi ? gi->cpl : zk_is_cpl(l->guard)) {
        if (!gi || !gi->root) ZU_ICE("CPL guard of %s without a formula", l->tag ? l->tag : "?");
        LLVMValueRef args[4] = {f->ctx, tag, ci32(f->g, gi->root->id), ci32(f->g, loc)};
        LLVMValueRef v = zb_call_rt(f, ZB_RT_zgrt_choice_cpl, args, 4);
        return LLVMBuildICmp(f->b, LLVMIntNE, v, ci32(f->g, 0), "");
    }
    if (zb_uses_guard(l->guard)) zb_guard_generation(f);
    LLVMValueRef c = zb_cond_i1(f, l->guard);
    f->gen = NULL;
    LLVMValueRef args[4] = {f->ctx, tag, LLVMBuildZExt(f->b, c, f->g->t_i32, ""), ci32(f->g, loc)};
    zb_call_rt(f, ZB_RT_zgrt_choice, args, 4);
    return c;
}

static LLVMValueRef gen_recv_ctl(ZbFn *f, const ZLocal *l)
{
    const ZStmt *s = l->src;
    LLVMValueRef args[5] = {f->ctx, ci32(f->g, l->peer), ci32(f->g, l->chan),
                            ci32(f->g, s->construct - 1), ci32(f->g, zb_loc(f->g, s->span))};
    LLVMValueRef v = zb_call_rt(f, ZB_RT_zgrt_recv_ctl, args, 5);
    return LLVMBuildICmp(f->b, LLVMIntNE, v, ci32(f->g, 0), "");
}

static void gen_if(ZbFn *f, const ZLocal *l)
{
    LLVMValueRef c = l->kind == L_IF ? gen_choice(f, l) : gen_recv_ctl(f, l);
    LLVMBasicBlockRef tb = zb_block(f, "if.then"), eb = zb_block(f, "if.else");
    LLVMBasicBlockRef join = zb_block(f, "if.end");
    LLVMBuildCondBr(f->b, c, tb, eb);
    LLVMPositionBuilderAtEnd(f->b, tb);
    stmts(f, &l->body);
    LLVMBuildBr(f->b, join);
    LLVMPositionBuilderAtEnd(f->b, eb);
    stmts(f, &l->els);
    LLVMBuildBr(f->b, join);
    LLVMPositionBuilderAtEnd(f->b, join);
}

static void gen_while(ZbFn *f, const ZLocal *l)
{
    LLVMBasicBlockRef head = zb_block(f, "while.head"), body = zb_block(f, "while.body");
    LLVMBasicBlockRef exit = zb_block(f, "while.exit");
    LLVMBuildBr(f->b, head);
    LLVMPositionBuilderAtEnd(f->b, head);
    LLVMValueRef c = l->kind == L_WHILE ? gen_choice(f, l) : gen_recv_ctl(f, l);
    LLVMBuildCondBr(f->b, c, body, exit);
    LLVMPositionBuilderAtEnd(f->b, body);
    stmts(f, &l->body);
    LLVMBuildBr(f->b, head);
    LLVMPositionBuilderAtEnd(f->b, exit);
    stmts(f, &l->els);
}

static void gen_send_ctl(ZbFn *f, const ZLocal *l)
{
    const ZStmt *s = l->src;
    LLVMValueRef args[6] = {f->ctx,
                            ci32(f->g, l->peer),
                            ci32(f->g, l->chan),
                            ci32(f->g, s->construct - 1),
                            ci32(f->g, l->ctl_value ? 1 : 0),
                            ci32(f->g, zb_loc(f->g, s->span))};
    zb_call_rt(f, ZB_RT_zgrt_send_ctl, args, 6);
}

static void gen_recv_any(ZbFn *f, const ZLocal *l)
{
    ZbGen *g = f->g;
    int n = l->body.len;
    if (n == 0) return;
    if (n > 63) {
        zd_error(g->d, l->src->span,
                 "a coregion with %d messages to one receiver is more than "
                 "the 63 the backend supports",
                 n);
        g->failed = true;
        return;
    }
    int32_t *peers = zu_alloc(f->g->a, sizeof *peers * (size_t)n);
    for (int i = 0; i < n; i++) peers[i] = ((const ZLocal *)ZU_VEC_AT(l->body, i))->peer;
    LLVMValueRef peer_arr = zb_int_array(f, peers, n);
    int loc = zb_loc(g, l->src->span);
    /* for (i = 0, mask = 0; i < n; i++) { k = wait_any(mask); recv arm k; mask |= 1 << k; } */
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(f->b);
    LLVMBasicBlockRef head = zb_block(f, "any.head"), latch = zb_block(f, "any.next");
    LLVMBasicBlockRef done = zb_block(f, "any.done"), bad = zb_block(f, "any.bad");
    LLVMBuildBr(f->b, head);
    LLVMPositionBuilderAtEnd(f->b, head);
    LLVMValueRef iv = LLVMBuildPhi(f->b, g->t_i32, "i");
    LLVMValueRef mask = LLVMBuildPhi(f->b, g->t_i64, "mask");
    LLVMValueRef wargs[6] = {f->ctx, ci32(g, l->chan), ci32(g, n), peer_arr, mask, ci32(g, loc)};
    LLVMValueRef k = zb_call_rt(f, ZB_RT_zgrt_wait_any, wargs, 6);
    LLVMValueRef sw = LLVMBuildSwitch(f->b, k, bad, (unsigned)n);
    for (int i = 0; i < n; i++) {
        LLVMBasicBlockRef arm = zb_block(f, "any.arm");
        LLVMAddCase(sw, ci32(g, i), arm);
        LLVMPositionBuilderAtEnd(f->b, arm);
        gen_recv(f, ZU_VEC_AT(l->body, i));
        LLVMBuildBr(f->b, latch);
    }
    LLVMPositionBuilderAtEnd(f->b, bad);
    LLVMValueRef targs[3] = {f->ctx, ci32(g, loc),
                             zb_cstr(f->md, "internal error: bad coregion arm")};
    zb_call_rt(f, ZB_RT_zgrt_trap, targs, 3);
    LLVMBuildUnreachable(f->b);
    LLVMPositionBuilderAtEnd(f->b, latch);
    LLVMValueRef bit = LLVMBuildShl(f->b, ci64(g, 1), LLVMBuildZExt(f->b, k, g->t_i64, ""), "");
    LLVMValueRef nmask = LLVMBuildOr(f->b, mask, bit, "");
    LLVMValueRef ni = LLVMBuildAdd(f->b, iv, ci32(g, 1), "");
    LLVMBuildCondBr(f->b, LLVMBuildICmp(f->b, LLVMIntSLT, ni, ci32(g, n), ""), head, done);
    LLVMValueRef iv_in[2] = {ci32(g, 0), ni};
    LLVMValueRef mask_in[2] = {ci64(g, 0), nmask};
    LLVMBasicBlockRef from[2] = {pre, latch};
    LLVMAddIncoming(iv, iv_in, from, 2);
    LLVMAddIncoming(mask, mask_in, from, 2);
    LLVMPositionBuilderAtEnd(f->b, done);
}

static void gen_par(ZbFn *f, const ZLocal *l)
{
    ZbGen *g = f->g;
    int n = l->body.len;
    const char *lname = life_decl(g, f->life)->name;
    LLVMValueRef *fns = zu_alloc(f->g->a, sizeof *fns * (size_t)n);
    for (int k = 0; k < n; k++) {
        const ZLocal *br = ZU_VEC_AT(l->body, k);
        char *name = zu_fmt(g->a, "zg.par.%s.%d.%d", lname, l->src->construct, k + 1);
        LLVMValueRef fn = LLVMAddFunction(f->md->m, name, zb_body_type(g));
        LLVMSetLinkage(fn, LLVMInternalLinkage);
        ZbFn bf;
        zb_fn_begin(&bf, f->md, fn, ZB_FN_BODY, f->life);
        zb_fn_load_store(&bf);
        stmts(&bf, &br->body);
        LLVMBuildRetVoid(bf.b);
        zb_fn_end(&bf);
        fns[k] = as_ptr(f->md, fn);
    }
    LLVMValueRef arr = zb_const_array(f->md, g->t_ptr, fns, n, "branches");
    LLVMValueRef args[4] = {f->ctx, ci32(g, n), arr, ci32(g, zb_loc(g, l->src->span))};
    zb_call_rt(f, ZB_RT_zgrt_par, args, 4);
}

static int index_in(const ZVec *v, const void *x, const char *what)
{
    for (int i = 0; i < v->len; i++)
        if (v->items[i] == x) return i;
    ZU_ICE("%s is not where it is declared", what);
}

/* A store operation: do { begin; reads; local statements; writes } while
 * (!commit) — a refused commit runs the block again from its reads
 * (zgrt_abi.h: zgrt_op_begin). */
static void gen_atomic(ZbFn *f, const ZLocal *l)
{
    ZbGen *g = f->g;
    const ZStmt *s = l->src;
    const ZDecl *st = s->store;
    if (!st) ZU_ICE("atomic block without its store");
    LLVMBasicBlockRef again = zb_block(f, "op.begin"), done = zb_block(f, "op.done");
    LLVMBuildBr(f->b, again);
    LLVMPositionBuilderAtEnd(f->b, again);
    LLVMValueRef bargs[3] = {f->ctx, ci32(g, index_in(&g->p->stores, st, "store")),
                             ci32(g, zb_loc(g, s->span))};
    zb_call_rt(f, ZB_RT_zgrt_op_begin, bargs, 3);
    for (int i = 0; i < s->body.len; i++) {
        const ZStmt *it = ZU_VEC_AT(s->body, i);
        int loc = zb_loc(g, it->span);
        if (it->kind == S_READ) {
            const ZTarget *t = it->targets.len ? ZU_VEC_AT(it->targets, 0) : NULL;
            if (!t || !t->var || !it->cell_decl) ZU_ICE("read without its variable or cell");
            LLVMValueRef a[4] = {f->ctx, ci32(g, index_in(&st->cells, it->cell_decl, "cell")),
                                 ci32(g, t->var->index), ci32(g, loc)};
            zb_call_rt(f, ZB_RT_zgrt_op_read, a, 4);
        } else if (it->kind == S_WRITE && it->registry) {
            int n = it->tools.len;
            int32_t *tools = zu_alloc(g->a, sizeof *tools * ((size_t)n + 1));
            for (int k = 0; k < n; k++) {
                const ZParam *tp = ZU_VEC_AT(it->tools, k);
                tools[k] = action_slot(g, tp->ref);
            }
            LLVMValueRef a[4] = {f->ctx, ci32(g, n), n ? zb_int_array(f, tools, n) : cnull(g),
                                 ci32(g, loc)};
            zb_call_rt(f, ZB_RT_zgrt_op_tools, a, 4);
        } else if (it->kind == S_WRITE) {
            if (!it->cell_decl || !it->expr) ZU_ICE("write without its cell or value");
            ZbVal v = zb_expr(f, it->expr);
            v.tag = ci64(g, zb_tag_of_type(it->cell_decl->type));
            LLVMValueRef a[4] = {f->ctx, ci32(g, index_in(&st->cells, it->cell_decl, "cell")),
                                 zb_value_array(f, &v, 1), ci32(g, loc)};
            zb_call_rt(f, ZB_RT_zgrt_op_write, a, 4);
        } else if (it->kind == S_ASSIGN) {
            ZLocal item = {.kind = L_ASSIGN, .src = it, .chan = l->chan};
            gen_assign(f, &item);
        } else {
            ZU_ICE("a %s statement inside an atomic block", za_stmt_kind_name(it->kind));
        }
    }
    LLVMValueRef cargs[2] = {f->ctx, ci32(g, zb_loc(g, s->span))};
    LLVMValueRef ok = zb_call_rt(f, ZB_RT_zgrt_op_commit, cargs, 2);
    LLVMBuildCondBr(f->b, LLVMBuildICmp(f->b, LLVMIntNE, ok, ci32(g, 0), ""), done, again);
    LLVMPositionBuilderAtEnd(f->b, done);
}

static void stmt(ZbFn *f, const ZLocal *l)
{
    switch (l->kind) {
    case L_SEND: gen_send(f, l); break;
    case L_RECV: gen_recv(f, l); break;
    case L_ASSIGN: gen_assign(f, l); break;
    case L_SEND_CTL: gen_send_ctl(f, l); break;
    case L_IF:
    case L_IF_RECV: gen_if(f, l); break;
    case L_WHILE:
    case L_WHILE_RECV: gen_while(f, l); break;
    case L_RECV_ANY: gen_recv_any(f, l); break;
    case L_PAR: gen_par(f, l); break;
    case L_RETURN: break; /* the runtime reads the results from the store */
    case L_ATOMIC: gen_atomic(f, l); break;
    case L__COUNT: ZU_UNREACHABLE();
    }
}

/* The number of local statements in l, nested ones included. */
static long local_size(const ZLocal *l)
{
    long n = 1;
    for (int i = 0; i < l->body.len; i++) n += local_size(ZU_VEC_AT(l->body, i));
    for (int i = 0; i < l->els.len; i++) n += local_size(ZU_VEC_AT(l->els, i));
    return n;
}

/* v[from, to) as a function of its own, called here. */
static void stmts_part(ZbFn *f, const ZVec *v, int from, int to)
{
    ZbGen *g = f->g;
    char *name = zu_fmt(g->a, "zg.part.%s.%d", life_decl(g, f->life)->name, ++g->nparts);
    LLVMValueRef fn = LLVMAddFunction(f->md->m, name, zb_body_type(g));
    LLVMSetLinkage(fn, LLVMInternalLinkage);
    zb_set_noinline(g, fn);
    ZbFn pf;
    zb_fn_begin(&pf, f->md, fn, ZB_FN_BODY, f->life);
    zb_fn_load_store(&pf);
    for (int i = from; i < to; i++) stmt(&pf, ZU_VEC_AT(*v, i));
    LLVMBuildRetVoid(pf.b);
    zb_fn_end(&pf);
    LLVMBuildCall2(f->b, zb_body_type(g), fn, &f->ctx, 1, "");
}

/* A statement list; one longer than ZB_BODY_PART statements (nested ones
 * included) is cut into parts of about that many, each a function (the
 * statements share nothing but the context and the store). */
static void stmts(ZbFn *f, const ZVec *v)
{
    long total = 0;
    for (int i = 0; i < v->len && total <= ZB_BODY_PART; i++) total += local_size(ZU_VEC_AT(*v, i));
    if (total <= ZB_BODY_PART) {
        for (int i = 0; i < v->len; i++) stmt(f, ZU_VEC_AT(*v, i));
        return;
    }
    long size = 0;
    int from = 0;
    for (int i = 0; i < v->len; i++) {
        size += local_size(ZU_VEC_AT(*v, i));
        if (size >= ZB_BODY_PART || i == v->len - 1) {
            stmts_part(f, v, from, i + 1);
            from = i + 1;
            size = 0;
        }
    }
}

bool zb_gen_lifeline(ZbGen *g, LLVMModuleRef m, LLVMModuleRef em, int life)
{
    const ZLocalProgram *lp = NULL;
    for (int i = 0; i < g->ls->programs.len; i++) {
        const ZLocalProgram *x = ZU_VEC_AT(g->ls->programs, i);
        if (x->lifeline == life) lp = x;
    }
    if (!lp) ZU_ICE("no local program for lifeline %d", life);
    ZbMod md;
    zb_mod_init(&md, g, m);
    LLVMValueRef fn = LLVMAddFunction(m, zu_fmt(g->a, "zg.body.%s", lp->name), zb_body_type(g));
    ZbFn f;
    zb_fn_begin(&f, &md, fn, ZB_FN_BODY, life);
    zb_fn_load_store(&f);
    stmts(&f, &lp->body);
    LLVMBuildRetVoid(f.b);
    zb_fn_end(&f);
    if (em == m) {
        zb_gen_eval(g, &md, life);
    } else if (zb_has_eval(g, life)) {
        ZbMod emd;
        zb_mod_init(&emd, g, em);
        zb_gen_eval(g, &emd, life);
        zb_mod_finish(&emd);
    }
    zb_mod_finish(&md);
    return !g->failed;
}
