/* gen.c — the generator of a build: its tables, module constants and the
 * builder helpers shared by expr.c, body.c, eval.c and descriptor.c.
 *
 * One ZbGen per build numbers the source locations of every module (a
 * trap or an event names its location by index in zgrt_program.locs),
 * lists the non-pure actions and the enums in descriptor order, and holds
 * the monitor plan (compiler/plan.c) that eval.c and descriptor.c emit.
 * Everything it allocates lives in the compilation's arena.
 */
#include <string.h>

#include "gen.h"

#include <llvm-c/Analysis.h>

/* ------------------------------------------------------------------ */
/* small helpers                                                       */
/* ------------------------------------------------------------------ */

void *zb_grow(ZArena *a, const void *old, int n, int cap, size_t size)
{
    void *p = zu_alloc(a, size * (size_t)cap);
    if (n > 0) memcpy(p, old, size * (size_t)n);
    return p;
}

static int64_t double_bits(double d)
{
    int64_t i;
    memcpy(&i, &d, sizeof i);
    return i;
}

int zb_tag_of_type(const ZType *t)
{
    if (!t) return ZGRT_UNDEF;
    switch (t->kind) {
    case TY_BOOL: return ZGRT_BOOL;
    case TY_INT: return ZGRT_INT;
    case TY_FLOAT: return ZGRT_FLOAT;
    case TY_STR: return ZGRT_STR;
    case TY_JSON:
    case TY_NULL: return ZGRT_JSON;
    case TY_ENUM: return ZGRT_ENUM;
    default: return ZGRT_UNDEF;
    }
}

int zb_loc(ZbGen *g, ZSpan s)
{
    ZbLoc l = {s.first_line, s.first_column, s.file};
    if (g->nlocs * 2 >= g->lochcap) {
        int ncap = g->lochcap ? g->lochcap * 2 : 256;
        int *nh = zu_alloc(g->a, sizeof *nh * (size_t)ncap);
        for (int i = 0; i < g->nlocs; i++) {
            uint32_t h = ((uint32_t)g->locs[i].line * 2654435761u) ^
                         ((uint32_t)g->locs[i].col * 40503u) ^ (uint32_t)g->locs[i].file;
            size_t k = h & (size_t)(ncap - 1);
            while (nh[k]) k = (k + 1) & (size_t)(ncap - 1);
            nh[k] = i + 1;
        }
        g->lochash = nh;
        g->lochcap = ncap;
    }
    uint32_t h = ((uint32_t)l.line * 2654435761u) ^ ((uint32_t)l.col * 40503u) ^ (uint32_t)l.file;
    size_t k = h & (size_t)(g->lochcap - 1);
    while (g->lochash[k]) {
        const ZbLoc *o = &g->locs[g->lochash[k] - 1];
        if (o->line == l.line && o->col == l.col && o->file == l.file) return g->lochash[k] - 1;
        k = (k + 1) & (size_t)(g->lochcap - 1);
    }
    if (g->nlocs == g->caplocs) {
        g->caplocs = g->caplocs ? g->caplocs * 2 : 64;
        g->locs = zb_grow(g->a, g->locs, g->nlocs, g->caplocs, sizeof *g->locs);
    }
    g->locs[g->nlocs] = l;
    g->lochash[k] = ++g->nlocs;
    return g->nlocs - 1;
}

int zb_gen_nlocs(const ZbGen *g) { return g->nlocs; }

int zb_var_of(const ZExpr *e)
{
    if (e && e->kind == E_NAME && e->name_kind == NAME_VAR && e->decl) return e->decl->index;
    return -1;
}

LLVMTypeRef zb_body_type(ZbGen *g) { return LLVMFunctionType(g->t_void, &g->t_ptr, 1, 0); }

/* ------------------------------------------------------------------ */
/* module-level constants                                              */
/* ------------------------------------------------------------------ */

static uint64_t str_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603u;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211u;
    return h;
}

static LLVMValueRef strmap_get(ZbStrMap *sm, const char *s, size_t n)
{
    if (!sm->cap) return NULL;
    for (size_t k = str_hash(s, n) & (sm->cap - 1);; k = (k + 1) & (sm->cap - 1)) {
        ZbStrEnt *e = &sm->ents[k];
        if (!e->v) return NULL;
        if (e->n == n && memcmp(e->s, s, n) == 0) return e->v;
    }
}

static void strmap_put(ZArena *a, ZbStrMap *sm, const char *s, size_t n, LLVMValueRef v)
{
    if ((sm->len + 1) * 2 > sm->cap) {
        size_t ncap = sm->cap ? sm->cap * 2 : 64;
        ZbStrEnt *ne = zu_alloc(a, sizeof *ne * ncap);
        for (size_t i = 0; i < sm->cap; i++) {
            ZbStrEnt *e = &sm->ents[i];
            if (!e->v) continue;
            size_t k = str_hash(e->s, e->n) & (ncap - 1);
            while (ne[k].v) k = (k + 1) & (ncap - 1);
            ne[k] = *e;
        }
        sm->ents = ne;
        sm->cap = ncap;
    }
    size_t k = str_hash(s, n) & (sm->cap - 1);
    while (sm->ents[k].v) k = (k + 1) & (sm->cap - 1);
    sm->ents[k] = (ZbStrEnt){s, n, v};
    sm->len++;
}

static LLVMValueRef private_global(ZbMod *md, LLVMTypeRef ty, LLVMValueRef init, const char *prefix)
{
    char name[64];
    snprintf(name, sizeof name, "%s.%d", prefix, md->nglobals++);
    LLVMValueRef gv = LLVMAddGlobal(md->m, ty, name);
    LLVMSetInitializer(gv, init);
    LLVMSetGlobalConstant(gv, 1);
    LLVMSetLinkage(gv, LLVMPrivateLinkage);
    LLVMSetUnnamedAddress(gv, LLVMGlobalUnnamedAddr);
    return gv;
}

LLVMValueRef zb_cstr(ZbMod *md, const char *s)
{
    if (!s) return cnull(md->g);
    size_t n = strlen(s);
    LLVMValueRef v = strmap_get(&md->cstrs, s, n);
    if (v) return v;
    LLVMValueRef init = LLVMConstStringInContext(md->g->lc, s, (unsigned)n, 0);
    LLVMValueRef gv = private_global(md, LLVMTypeOf(init), init, "str");
    LLVMSetAlignment(gv, 1);
    v = as_ptr(md, gv);
    strmap_put(md->g->a, &md->cstrs, s, n, v);
    return v;
}

/* A constant zgrt_str {i64 len, [n+1 x i8]}: its address as i64. */
static LLVMValueRef zstr(ZbMod *md, const char *s, size_t n)
{
    LLVMValueRef v = strmap_get(&md->zstrs, s, n);
    if (v) return v;
    ZbGen *g = md->g;
    LLVMValueRef fields[2] = {ci64(g, (int64_t)n),
                              LLVMConstStringInContext(g->lc, s, (unsigned)n, 0)};
    LLVMValueRef init = LLVMConstStructInContext(g->lc, fields, 2, 0);
    LLVMValueRef gv = private_global(md, LLVMTypeOf(init), init, "zstr");
    LLVMSetAlignment(gv, 8);
    v = LLVMConstPtrToInt(gv, g->t_i64);
    strmap_put(md->g->a, &md->zstrs, s, n, v);
    return v;
}

LLVMValueRef zb_const_array(ZbMod *md, LLVMTypeRef elem, LLVMValueRef *vals, int n,
                            const char *prefix)
{
    if (n == 0) return cnull(md->g);
    LLVMValueRef init = LLVMConstArray(elem, vals, (unsigned)n);
    LLVMValueRef gv = private_global(md, LLVMTypeOf(init), init, prefix);
    return as_ptr(md, gv);
}

LLVMValueRef zb_const_value(ZbMod *md, int64_t tag, LLVMValueRef pay)
{
    LLVMValueRef f[2] = {ci64(md->g, tag), pay};
    return LLVMConstNamedStruct(zb_desc_type(md->g->lc, ZB_TY_VALUE), f, 2);
}

bool zb_lit_val(ZbMod *md, const ZExpr *e, ZbVal *out)
{
    ZbGen *g = md->g;
    switch (e->kind) {
    case E_INT: *out = (ZbVal){ci64(g, ZGRT_INT), ci64(g, e->lit.i)}; return true;
    case E_FLOAT: *out = (ZbVal){ci64(g, ZGRT_FLOAT), ci64(g, double_bits(e->lit.f))}; return true;
    case E_BOOL: *out = (ZbVal){ci64(g, ZGRT_BOOL), ci64(g, e->lit.b ? 1 : 0)}; return true;
    case E_NULL: *out = (ZbVal){ci64(g, ZGRT_JSON), ci64(g, 0)}; return true;
    case E_STR: {
        const char *s = e->lit.s ? e->lit.s : "";
        *out = (ZbVal){ci64(g, ZGRT_STR), zstr(md, s, e->slen)};
        return true;
    }
    case E_NAME:
        if (e->name_kind == NAME_MEMBER && e->decl) {
            int64_t v = ((int64_t)e->decl->index << 32) | (uint32_t)e->member;
            *out = (ZbVal){ci64(g, ZGRT_ENUM), ci64(g, v)};
            return true;
        }
        if (e->name_kind == NAME_CONST && e->decl && e->decl->expr && e->decl->expr != e)
            return zb_lit_val(md, e->decl->expr, out);
        return false;
    default: return false;
    }
}

static LLVMValueRef rt_fn(ZbMod *md, ZbRtId id)
{
    if (!md->rt[id]) {
        md->rt[id] = zb_abi_declare(md->m, zb_abi_name(id));
        md->rtty[id] = zb_abi_fn_type(md->g->lc, zb_abi_signature(id));
    }
    return md->rt[id];
}

void zb_mod_init(ZbMod *md, ZbGen *g, LLVMModuleRef m)
{
    memset(md, 0, sizeof *md);
    md->g = g;
    md->m = m;
    /* keep global names unique when several passes add to one module */
    LLVMValueRef gv = LLVMGetFirstGlobal(m);
    for (; gv; gv = LLVMGetNextGlobal(gv)) md->nglobals++;
}

/* ------------------------------------------------------------------ */
/* function-level helpers                                              */
/* ------------------------------------------------------------------ */

void zb_fn_begin(ZbFn *f, ZbMod *md, LLVMValueRef fn, ZbFnMode mode, int life)
{
    memset(f, 0, sizeof *f);
    f->md = md;
    f->g = md->g;
    f->fn = fn;
    f->mode = mode;
    f->life = life;
    f->inline_left = ZB_GUARD_INLINE_NODES;
    f->b = LLVMCreateBuilderInContext(md->g->lc);
    f->ab = LLVMCreateBuilderInContext(md->g->lc);
    f->entry = LLVMAppendBasicBlockInContext(md->g->lc, fn, "entry");
    f->start = LLVMAppendBasicBlockInContext(md->g->lc, fn, "start");
    LLVMPositionBuilderAtEnd(f->ab, f->entry);
    LLVMPositionBuilderAtEnd(f->b, f->start);
    f->ctx = LLVMGetParam(fn, 0);
}

void zb_fn_end(ZbFn *f)
{
    LLVMPositionBuilderAtEnd(f->ab, f->entry);
    LLVMBuildBr(f->ab, f->start);
    LLVMDisposeBuilder(f->b);
    LLVMDisposeBuilder(f->ab);
}

void zb_fn_load_store(ZbFn *f) { f->store = zb_call_rt(f, ZB_RT_zgrt_store, &f->ctx, 1); }

void zb_set_noinline(ZbGen *g, LLVMValueRef fn)
{
    unsigned kind = LLVMGetEnumAttributeKindForName("noinline", 8);
    if (!kind) ZU_ICE("LLVM knows no attribute `noinline`");
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(g->lc, kind, 0));
}

LLVMBasicBlockRef zb_block(ZbFn *f, const char *name)
{
    return LLVMAppendBasicBlockInContext(f->g->lc, f->fn, name);
}

LLVMValueRef zb_call_rt(ZbFn *f, ZbRtId id, LLVMValueRef *args, unsigned n)
{
    LLVMValueRef fn = rt_fn(f->md, id);
    return LLVMBuildCall2(f->b, f->md->rtty[id], fn, args, n, "");
}

LLVMValueRef zb_byte_at(ZbFn *f, LLVMValueRef p, int64_t off)
{
    if (off == 0) return p;
    LLVMValueRef idx = ci64(f->g, off);
    return LLVMBuildGEP2(f->b, f->g->t_i8, p, &idx, 1, "");
}

LLVMValueRef zb_load_at(ZbFn *f, LLVMTypeRef t, LLVMValueRef p, int64_t off)
{
    LLVMValueRef q = LLVMBuildBitCast(f->b, zb_byte_at(f, p, off), LLVMPointerType(t, 0), "");
    return LLVMBuildLoad2(f->b, t, q, "");
}

void zb_store_at(ZbFn *f, LLVMValueRef v, LLVMValueRef p, int64_t off)
{
    LLVMValueRef q =
        LLVMBuildBitCast(f->b, zb_byte_at(f, p, off), LLVMPointerType(LLVMTypeOf(v), 0), "");
    LLVMBuildStore(f->b, v, q);
}

LLVMValueRef zb_stack_array(ZbFn *f, LLVMTypeRef elem, int n)
{
    LLVMValueRef a = LLVMBuildAlloca(f->ab, LLVMArrayType(elem, (unsigned)(n > 0 ? n : 1)), "");
    LLVMSetAlignment(a, 8);
    return LLVMBuildBitCast(f->ab, a, f->g->t_ptr, "");
}

void zb_store_val(ZbFn *f, LLVMValueRef p, int64_t off, ZbVal v)
{
    zb_store_at(f, v.tag, p, off);
    zb_store_at(f, v.pay, p, off + 8);
}

LLVMValueRef zb_value_array(ZbFn *f, const ZbVal *vs, int n)
{
    if (n == 0) return cnull(f->g);
    bool all_const = true;
    for (int i = 0; i < n && all_const; i++)
        all_const = LLVMIsConstant(vs[i].tag) && LLVMIsConstant(vs[i].pay);
    if (all_const) {
        LLVMValueRef *cs = zu_alloc(f->g->a, sizeof *cs * (size_t)n);
        for (int i = 0; i < n; i++) {
            LLVMValueRef fl[2] = {vs[i].tag, vs[i].pay};
            cs[i] = LLVMConstNamedStruct(zb_desc_type(f->g->lc, ZB_TY_VALUE), fl, 2);
        }
        return zb_const_array(f->md, zb_desc_type(f->g->lc, ZB_TY_VALUE), cs, n, "vals");
    }
    LLVMValueRef arr = zb_stack_array(f, zb_desc_type(f->g->lc, ZB_TY_VALUE), n);
    for (int i = 0; i < n; i++) zb_store_val(f, arr, 16 * (int64_t)i, vs[i]);
    return arr;
}

LLVMValueRef zb_int_array(ZbFn *f, const int32_t *xs, int n)
{
    if (n == 0) return cnull(f->g);
    LLVMValueRef *cs = zu_alloc(f->g->a, sizeof *cs * (size_t)n);
    for (int i = 0; i < n; i++) cs[i] = ci32(f->g, xs[i]);
    return zb_const_array(f->md, f->g->t_i32, cs, n, "ints");
}

/* ------------------------------------------------------------------ */
/* setup                                                               */
/* ------------------------------------------------------------------ */

/* Counts the references to named guards in e and its nodes. */
static int count_guard_uses(ZbGen *g, const ZExpr *e)
{
    if (!e) return 0;
    if (e->kind == E_NAME && e->name_kind == NAME_GUARD && e->decl && e->decl->index >= 0 &&
        e->decl->index < g->nguards)
        g->guard_uses[e->decl->index]++;
    int n = 1 + count_guard_uses(g, e->a) + count_guard_uses(g, e->b) + count_guard_uses(g, e->c);
    for (int i = 0; i < e->args.len; i++) n += count_guard_uses(g, ZU_VEC_AT(e->args, i));
    return n;
}

static void count_condition_uses(ZbGen *g, const ZVec *stmts)
{
    for (int i = 0; i < stmts->len; i++) {
        const ZStmt *s = ZU_VEC_AT(*stmts, i);
        if (s->kind == S_IF || s->kind == S_WHILE) count_guard_uses(g, s->expr);
        count_condition_uses(g, &s->body);
        count_condition_uses(g, &s->els);
        for (int k = 0; k < s->branches.len; k++)
            count_condition_uses(g, &((const ZBranch *)ZU_VEC_AT(s->branches, k))->body);
    }
}

ZbGen *zb_gen_new(LLVMContextRef lc, ZCompilation *c)
{
    if (c->failed || c->done <= ZC_PLAN) ZU_ICE("code generation before the monitor plan");
    ZArena *a = c->arena;
    const ZProgram *p = c->prog;
    ZbGen *g = zu_alloc(a, sizeof *g);
    g->lc = lc;
    g->a = a;
    g->p = p;
    g->wf = c->wf;
    g->ls = c->locals;
    g->gt = c->guards;
    g->plan = c->plan;
    g->d = &c->diag;
    g->nlife = p->lifelines.len;
    g->t_void = LLVMVoidTypeInContext(lc);
    g->t_i1 = LLVMInt1TypeInContext(lc);
    g->t_i8 = LLVMInt8TypeInContext(lc);
    g->t_i32 = LLVMInt32TypeInContext(lc);
    g->t_i64 = LLVMInt64TypeInContext(lc);
    g->t_dbl = LLVMDoubleTypeInContext(lc);
    g->t_ptr = LLVMPointerType(g->t_i8, 0);
    g->t_val = zb_desc_type(lc, ZB_TY_VALUE);
    int nd = p->decls.len;
    g->acts = zu_alloc(a, sizeof *g->acts * ((size_t)nd + 1));
    g->enums = zu_alloc(a, sizeof *g->enums * ((size_t)nd + 1));
    /* enums by index, non-pure actions in declaration order */
    for (int i = 0; i < nd; i++) {
        const ZDecl *x = ZU_VEC_AT(p->decls, i);
        if (x->kind == D_ENUM) {
            if (x->index < 0 || x->index >= nd) ZU_ICE("enum `%s` has index %d", x->name, x->index);
            g->enums[x->index] = x;
            if (x->index + 1 > g->nenums) g->nenums = x->index + 1;
        } else if (x->kind == D_ACTION && x->action != ACT_PURE) {
            g->acts[g->nacts++] = x;
        }
    }
    for (int i = 0; i < g->nenums; i++)
        if (!g->enums[i]) ZU_ICE("enum index %d is missing", i);
    for (int i = 0; i < nd; i++) {
        const ZDecl *x = ZU_VEC_AT(p->decls, i);
        if (x->kind == D_GUARD && x->index >= g->nguards) g->nguards = x->index + 1;
    }
    g->guard_uses = zu_alloc(a, sizeof *g->guard_uses * ((size_t)g->nguards + 1));
    g->guard_nodes = zu_alloc(a, sizeof *g->guard_nodes * ((size_t)g->nguards + 1));
    for (int i = 0; i < nd; i++) {
        const ZDecl *x = ZU_VEC_AT(p->decls, i);
        if (x->kind == D_GUARD && x->index >= 0)
            g->guard_nodes[x->index] = count_guard_uses(g, x->expr);
    }
    if (g->wf) count_condition_uses(g, &g->wf->body);
    return g;
}

LLVMModuleRef zb_gen_module(ZbGen *g, const char *name)
{
    LLVMModuleRef m = LLVMModuleCreateWithNameInContext(name, g->lc);
    if (g->p->src && g->p->src->path)
        LLVMSetSourceFileName(m, g->p->src->path, strlen(g->p->src->path));
    return m;
}

void zb_verify(LLVMModuleRef m)
{
    char *msg = NULL;
    if (LLVMVerifyModule(m, LLVMReturnStatusAction, &msg)) {
        char *ir = LLVMPrintModuleToString(m);
        fprintf(stderr, "%s\n", ir);
        LLVMDisposeMessage(ir);
        fprintf(stderr, "zgc: the generated module does not verify:\n%s\n", msg ? msg : "");
        LLVMDisposeMessage(msg);
        ZU_ICE("invalid LLVM module");
    }
    LLVMDisposeMessage(msg);
}

/* Errors and warnings go to stderr; remarks and notes (optimisation
 * statistics) are dropped. */
static void diagnostic(LLVMDiagnosticInfoRef di, void *user)
{
    (void)user;
    LLVMDiagnosticSeverity sev = LLVMGetDiagInfoSeverity(di);
    if (sev != LLVMDSError && sev != LLVMDSWarning) return;
    char *s = LLVMGetDiagInfoDescription(di);
    fprintf(stderr, "zgc: llvm %s: %s\n", sev == LLVMDSError ? "error" : "warning", s ? s : "");
    LLVMDisposeMessage(s);
}

void zb_install_diagnostics(LLVMContextRef lc)
{
    LLVMContextSetDiagnosticHandler(lc, diagnostic, NULL);
}
