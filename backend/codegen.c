/* codegen.c — local programs, guards and the program descriptor to LLVM IR.
 *
 * Values.  A workflow value is a zgrt_value {i64 tag, i64 payload}; an
 * expression compiles to a pair of i64 SSA values (Val).  The tag of an
 * expression is known from its checked type, so tags are constants; the
 * payload is the integer, the bool (0/1), the enum value (enum index << 32 |
 * member), the bits of the double, or the address of a zgrt_str / json_t.
 * A json `null` is a json value with a NULL payload.
 *
 * Lifelines.  `void zg.body.L(i8* ctx)` runs π_L.  It reads the store
 * returned by zgrt_store(ctx) (variable x at byte 16 * x.index) and never
 * writes it: every event is a runtime call.  A parallel region calls
 * zgrt_par with one internal function per branch.
 *
 * Checks.  Integer + - * use the overflow intrinsics; / and % check for a
 * zero divisor and INT64_MIN / -1; float results must be finite.  A failed
 * check calls zgrt_trap (which does not return) with a location index.
 *
 * Monitor.  `void zg.eval.L(i8* ctx, i8* val, i8* old)` computes the
 * subformulas lifeline L evaluates, bottom-up (CPL paper, Algorithm 2).
 * An atom reads its unqualified variables from the store and @B.x from the
 * store (B == L) or zgrt_varview; when any of its terms is undefined it is
 * false, whatever its operators.  @B(ψ) with B ≠ L reads zgrt_view.  The
 * runtime keeps only the views some eval function reads, in SLOTS: the
 * slot tables (zgrt_program.views, .varviews) are the union over all
 * lifelines of the guard table's bool views (B, ψ) and var views (B, x),
 * sorted by (B, ψ or variable index) without duplicates, and zgrt_view /
 * zgrt_varview take the slot's index, a constant.  When B cannot reach L
 * in the message graph, @B(ψ) is constantly false and @B.x undefined on L
 * (no B-event is ever in L's causal past) and no call is made; otherwise
 * a missing slot is an internal error.
 *
 * Descriptor.  The zgrt_program constant mirrors the C structs of
 * runtime/zgrt_abi.h field by field; LLVM's non-packed structs use the same
 * alignment rules as the C ABI (checked by tests/backend).
  * Symbols.  Generated functions are named with dots (zg.body.L,
 * zg.eval.L, zg.pure.f, zg.par.L.p.k, zg.program), which no C identifier
 * can be, so they never clash with the user's zg_<action> functions.
 */
#include <stdlib.h>
#include <string.h>

#include "zb_internal.h"
#include "zgrt_abi.h"

#include <llvm-c/Analysis.h>

/* ------------------------------------------------------------------ */
/* the runtime ABI table                                               */
/* ------------------------------------------------------------------ */

#define ZB_ABI_ENTRY(name, sig, ret, params) {#name, sig},
static const struct {
    const char *name, *sig;
} abi_table[] = {ZGRT_ABI(ZB_ABI_ENTRY)};
#undef ZB_ABI_ENTRY

#define ZB_ABI_ID(name, sig, ret, params) RT_##name,
typedef enum { ZGRT_ABI(ZB_ABI_ID) RT__COUNT } RtId;
#undef ZB_ABI_ID

int zb_abi_count(void) { return RT__COUNT; }
const char *zb_abi_name(int i) { return i >= 0 && i < RT__COUNT ? abi_table[i].name : NULL; }
const char *zb_abi_signature(int i) { return i >= 0 && i < RT__COUNT ? abi_table[i].sig : NULL; }

static LLVMTypeRef abi_letter(LLVMContextRef lc, char c)
{
    switch (c) {
    case 'v': return LLVMVoidTypeInContext(lc);
    case 'p': return LLVMPointerType(LLVMInt8TypeInContext(lc), 0);
    case 'i': return LLVMInt32TypeInContext(lc);
    case 'l': return LLVMInt64TypeInContext(lc);
    case 'd': return LLVMDoubleTypeInContext(lc);
    default: return NULL;
    }
}

LLVMTypeRef zb_abi_fn_type(LLVMContextRef lc, const char *sig)
{
    if (!sig || !sig[0]) return NULL;
    LLVMTypeRef ret = abi_letter(lc, sig[0]);
    LLVMTypeRef params[16];
    unsigned n = 0;
    if (!ret) return NULL;
    for (const char *s = sig + 1; *s; s++) {
        if (*s == 'v' || n >= 16) return NULL;
        params[n] = abi_letter(lc, *s);
        if (!params[n]) return NULL;
        n++;
    }
    return LLVMFunctionType(ret, params, n, 0);
}

LLVMValueRef zb_abi_declare(LLVMModuleRef m, const char *name)
{
    for (int i = 0; i < RT__COUNT; i++) {
        if (strcmp(abi_table[i].name, name) != 0) continue;
        LLVMValueRef f = LLVMGetNamedFunction(m, name);
        if (f) return f;
        LLVMTypeRef ty = zb_abi_fn_type(LLVMGetModuleContext(m), abi_table[i].sig);
        if (!ty) ZU_ICE("malformed ABI signature `%s` for %s", abi_table[i].sig, name);
        return LLVMAddFunction(m, name, ty);
    }
    return NULL;
}

/* ------------------------------------------------------------------ */
/* descriptor types                                                    */
/* ------------------------------------------------------------------ */

static LLVMTypeRef named_struct(LLVMContextRef lc, const char *name, LLVMTypeRef *fields,
                                unsigned n)
{
    LLVMTypeRef t = LLVMGetTypeByName2(lc, name);
    if (t) return t;
    t = LLVMStructCreateNamed(lc, name);
    LLVMStructSetBody(t, fields, n, 0);
    return t;
}

LLVMTypeRef zb_desc_type(LLVMContextRef lc, ZbDescType k)
{
    LLVMTypeRef i32 = LLVMInt32TypeInContext(lc), i64 = LLVMInt64TypeInContext(lc);
    LLVMTypeRef dbl = LLVMDoubleTypeInContext(lc);
    LLVMTypeRef p = LLVMPointerType(LLVMInt8TypeInContext(lc), 0);
    switch (k) {
    case ZB_TY_VALUE: {
        LLVMTypeRef f[] = {i64, i64};
        return named_struct(lc, "zgrt_value", f, 2);
    }
    case ZB_TY_TYPE: {
        LLVMTypeRef f[] = {i32, i32};
        return named_struct(lc, "zgrt_type", f, 2);
    }
    case ZB_TY_LOC: {
        LLVMTypeRef f[] = {i32, i32};
        return named_struct(lc, "zgrt_loc", f, 2);
    }
    case ZB_TY_ENUM: {
        LLVMTypeRef f[] = {p, i32, p};
        return named_struct(lc, "zgrt_enum", f, 3);
    }
    case ZB_TY_VAR: {
        LLVMTypeRef f[] = {p, zb_desc_type(lc, ZB_TY_TYPE), i32, zb_desc_type(lc, ZB_TY_VALUE)};
        return named_struct(lc, "zgrt_var", f, 4);
    }
    case ZB_TY_ACTION: {
        LLVMTypeRef f[] = {
            p,   /* name */
            i32, /* kind */
            i32, /* nparams */
            p,   /* param_names */
            p,   /* param_types */
            i32, /* nresults */
            p,   /* result_names */
            p,   /* result_types */
            p,   /* system */
            p,   /* user */
            i32, /* parse */
            i32, /* retries */
            p,   /* model */
            dbl, /* temperature */
            i32, /* has_temperature */
            i32, /* has_fallback */
            p,   /* fallback */
            i32, /* human_kind */
            p,   /* prompt */
            p,   /* fn */
        };
        return named_struct(lc, "zgrt_action", f, sizeof f / sizeof f[0]);
    }
    case ZB_TY_INPUT: {
        LLVMTypeRef f[] = {i32, i32};
        return named_struct(lc, "zgrt_input", f, 2);
    }
    case ZB_TY_RESULT: {
        LLVMTypeRef f[] = {i32, i32};
        return named_struct(lc, "zgrt_result", f, 2);
    }
    case ZB_TY_SLOT: {
        LLVMTypeRef f[] = {i32, i32};
        return named_struct(lc, "zgrt_slot", f, 2);
    }
    case ZB_TY_PROGRAM: {
        LLVMTypeRef f[] = {
            i32, /* abi_version */
            i32, /* nlifelines */
            p,   /* source */
            p,   /* workflow */
            p,   /* lifelines */
            p,   /* bodies */
            p,   /* evals */
            i32, /* nvars */
            i32, /* nenums */
            p,   /* vars */
            p,   /* enums */
            i32, /* nchans */
            i32, /* ntags */
            p,   /* chans */
            p,   /* tags */
            i32, /* nlocs */
            i32, /* nactions */
            p,   /* locs */
            p,   /* actions */
            i32, /* ninputs */
            i32, /* nresults */
            p,   /* inputs */
            p,   /* results */
            i32, /* result_tuple */
            i32, /* monitor */
            i32, /* nsubs */
            i32, /* pad */
            i32, /* nviews */
            i32, /* nvarviews */
            p,   /* views */
            p,   /* varviews */
        };
        return named_struct(lc, "zgrt_program", f, sizeof f / sizeof f[0]);
    }
    case ZB_TY__COUNT: break;
    }
    ZU_UNREACHABLE();
}

/* ------------------------------------------------------------------ */
/* generator state                                                     */
/* ------------------------------------------------------------------ */

typedef struct Loc {
    int32_t line, col;
} Loc;

/* A view slot: (lifeline, subformula id) or (lifeline, variable index). */
typedef struct ZbSlot {
    int life, index;
} ZbSlot;

struct ZbGen {
    LLVMContextRef lc;
    ZArena *a;
    const ZProgram *p;
    const ZDecl *wf;
    const ZLocalSet *ls;
    const ZGuardTable *gt;
    ZDiag *d;
    int nlife;
    /* the location table, shared by every module of the program */
    Loc *locs;
    int nlocs, caplocs;
    int *lochash; /* open addressing: loc index + 1, 0 = empty */
    int lochcap;
    /* non-pure actions: their position in zgrt_program.actions */
    const ZDecl **acts;
    int nacts;
    const ZDecl **enums;
    int nenums;
    /* the monitor's slot tables, sorted by (life, index), no duplicates */
    ZbSlot *views, *varviews;
    int nviews, nvarviews;
    bool failed;
    /* types */
    LLVMTypeRef t_void, t_i1, t_i8, t_i32, t_i64, t_dbl, t_ptr, t_val;
};

/* A string cache (content -> global), per module. */
typedef struct StrEnt {
    const char *s;
    size_t n;
    LLVMValueRef v;
} StrEnt;
typedef struct StrMap {
    StrEnt *ents;
    size_t cap, len;
} StrMap;

typedef struct Mod {
    ZbGen *g;
    LLVMModuleRef m;
    LLVMValueRef rt[RT__COUNT];
    LLVMTypeRef rtty[RT__COUNT];
    StrMap cstrs, zstrs;
    int nglobals;
} Mod;

typedef enum { FN_BODY, FN_PURE, FN_EVAL } FnMode;

typedef struct Term {
    const ZExpr *e;
    LLVMValueRef ptr; /* @B.x with B != L: the zgrt_varview pointer */
} Term;

typedef struct Fn {
    Mod *md;
    ZbGen *g;
    LLVMBuilderRef b;
    LLVMBuilderRef ab; /* allocas, at the end of the entry block */
    LLVMValueRef fn, ctx, store, args, outs, val, old;
    LLVMBasicBlockRef entry, start;
    FnMode mode;
    int life;
    Term *terms;
    int nterms, capterms;
} Fn;

typedef struct Val {
    LLVMValueRef tag, pay;
} Val;

/* ------------------------------------------------------------------ */
/* small helpers                                                       */
/* ------------------------------------------------------------------ */

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (!q) ZU_ICE("out of memory");
    return q;
}

static LLVMValueRef ci32(ZbGen *g, int64_t v) { return LLVMConstInt(g->t_i32, (unsigned long long)v, 1); }
static LLVMValueRef ci64(ZbGen *g, int64_t v) { return LLVMConstInt(g->t_i64, (unsigned long long)v, 1); }
static LLVMValueRef ci8(ZbGen *g, int64_t v) { return LLVMConstInt(g->t_i8, (unsigned long long)v, 0); }
static LLVMValueRef cnull(ZbGen *g) { return LLVMConstPointerNull(g->t_ptr); }

static int64_t double_bits(double d)
{
    int64_t i;
    memcpy(&i, &d, sizeof i);
    return i;
}

static int tag_of_type(const ZType *t)
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

static int loc_of(ZbGen *g, ZSpan s)
{
    Loc l = {s.first_line, s.first_column};
    if (g->nlocs * 2 >= g->lochcap) {
        int ncap = g->lochcap ? g->lochcap * 2 : 256;
        int *nh = calloc((size_t)ncap, sizeof *nh);
        if (!nh) ZU_ICE("out of memory");
        for (int i = 0; i < g->nlocs; i++) {
            uint32_t h = ((uint32_t)g->locs[i].line * 2654435761u) ^ ((uint32_t)g->locs[i].col * 40503u);
            size_t k = h & (size_t)(ncap - 1);
            while (nh[k]) k = (k + 1) & (size_t)(ncap - 1);
            nh[k] = i + 1;
        }
        free(g->lochash);
        g->lochash = nh;
        g->lochcap = ncap;
    }
    uint32_t h = ((uint32_t)l.line * 2654435761u) ^ ((uint32_t)l.col * 40503u);
    size_t k = h & (size_t)(g->lochcap - 1);
    while (g->lochash[k]) {
        const Loc *o = &g->locs[g->lochash[k] - 1];
        if (o->line == l.line && o->col == l.col) return g->lochash[k] - 1;
        k = (k + 1) & (size_t)(g->lochcap - 1);
    }
    if (g->nlocs == g->caplocs) {
        g->caplocs = g->caplocs ? g->caplocs * 2 : 64;
        g->locs = xrealloc(g->locs, sizeof *g->locs * (size_t)g->caplocs);
    }
    g->locs[g->nlocs] = l;
    g->lochash[k] = ++g->nlocs;
    return g->nlocs - 1;
}

int zb_gen_nlocs(const ZbGen *g) { return g->nlocs; }

static const ZDecl *life_decl(ZbGen *g, int i) { return ZU_VEC_AT(g->p->lifelines, i); }

static int action_slot(ZbGen *g, const ZDecl *act)
{
    for (int i = 0; i < g->nacts; i++)
        if (g->acts[i] == act) return i;
    ZU_ICE("action `%s` is not in the action table", act ? act->name : "?");
}

/* ------------------------------------------------------------------ */
/* module-level constants                                              */
/* ------------------------------------------------------------------ */

static uint64_t str_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603u;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211u;
    return h;
}

static LLVMValueRef strmap_get(StrMap *sm, const char *s, size_t n)
{
    if (!sm->cap) return NULL;
    for (size_t k = str_hash(s, n) & (sm->cap - 1);; k = (k + 1) & (sm->cap - 1)) {
        StrEnt *e = &sm->ents[k];
        if (!e->v) return NULL;
        if (e->n == n && memcmp(e->s, s, n) == 0) return e->v;
    }
}

static void strmap_put(StrMap *sm, const char *s, size_t n, LLVMValueRef v)
{
    if ((sm->len + 1) * 2 > sm->cap) {
        size_t ncap = sm->cap ? sm->cap * 2 : 64;
        StrEnt *ne = calloc(ncap, sizeof *ne);
        if (!ne) ZU_ICE("out of memory");
        for (size_t i = 0; i < sm->cap; i++) {
            StrEnt *e = &sm->ents[i];
            if (!e->v) continue;
            size_t k = str_hash(e->s, e->n) & (ncap - 1);
            while (ne[k].v) k = (k + 1) & (ncap - 1);
            ne[k] = *e;
        }
        free(sm->ents);
        sm->ents = ne;
        sm->cap = ncap;
    }
    size_t k = str_hash(s, n) & (sm->cap - 1);
    while (sm->ents[k].v) k = (k + 1) & (sm->cap - 1);
    sm->ents[k] = (StrEnt){s, n, v};
    sm->len++;
}

static LLVMValueRef private_global(Mod *md, LLVMTypeRef ty, LLVMValueRef init, const char *prefix)
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

static LLVMValueRef as_ptr(Mod *md, LLVMValueRef c) { return LLVMConstBitCast(c, md->g->t_ptr); }

/* A NUL-terminated C string: i8*. */
static LLVMValueRef cstr(Mod *md, const char *s)
{
    if (!s) return cnull(md->g);
    size_t n = strlen(s);
    LLVMValueRef v = strmap_get(&md->cstrs, s, n);
    if (v) return v;
    LLVMValueRef init = LLVMConstStringInContext(md->g->lc, s, (unsigned)n, 0);
    LLVMValueRef gv = private_global(md, LLVMTypeOf(init), init, "str");
    LLVMSetAlignment(gv, 1);
    v = as_ptr(md, gv);
    strmap_put(&md->cstrs, s, n, v);
    return v;
}

/* A constant zgrt_str {i64 len, [n+1 x i8]}: its address as i64. */
static LLVMValueRef zstr(Mod *md, const char *s, size_t n)
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
    strmap_put(&md->zstrs, s, n, v);
    return v;
}

/* A private constant array; i8* to its first element, NULL when n == 0. */
static LLVMValueRef const_array(Mod *md, LLVMTypeRef elem, LLVMValueRef *vals, int n, const char *prefix)
{
    if (n == 0) return cnull(md->g);
    LLVMValueRef init = LLVMConstArray(elem, vals, (unsigned)n);
    LLVMValueRef gv = private_global(md, LLVMTypeOf(init), init, prefix);
    return as_ptr(md, gv);
}

static LLVMValueRef const_value(Mod *md, int64_t tag, LLVMValueRef pay)
{
    LLVMValueRef f[2] = {ci64(md->g, tag), pay};
    return LLVMConstNamedStruct(zb_desc_type(md->g->lc, ZB_TY_VALUE), f, 2);
}

/* The value of a literal, a constant or an enum member; false if e is not
 * constant. */
static bool lit_val(Mod *md, const ZExpr *e, Val *out)
{
    ZbGen *g = md->g;
    switch (e->kind) {
    case E_INT: *out = (Val){ci64(g, ZGRT_INT), ci64(g, e->lit.i)}; return true;
    case E_FLOAT: *out = (Val){ci64(g, ZGRT_FLOAT), ci64(g, double_bits(e->lit.f))}; return true;
    case E_BOOL: *out = (Val){ci64(g, ZGRT_BOOL), ci64(g, e->lit.b ? 1 : 0)}; return true;
    case E_NULL: *out = (Val){ci64(g, ZGRT_JSON), ci64(g, 0)}; return true;
    case E_STR: {
        const char *s = e->lit.s ? e->lit.s : "";
        *out = (Val){ci64(g, ZGRT_STR), zstr(md, s, e->slen)};
        return true;
    }
    case E_NAME:
        if (e->name_kind == NAME_MEMBER && e->decl) {
            int64_t v = ((int64_t)e->decl->index << 32) | (uint32_t)e->member;
            *out = (Val){ci64(g, ZGRT_ENUM), ci64(g, v)};
            return true;
        }
        if (e->name_kind == NAME_CONST && e->decl && e->decl->expr && e->decl->expr != e)
            return lit_val(md, e->decl->expr, out);
        return false;
    default: return false;
    }
}

static LLVMValueRef rt_fn(Mod *md, RtId id)
{
    if (!md->rt[id]) {
        md->rt[id] = zb_abi_declare(md->m, abi_table[id].name);
        md->rtty[id] = zb_abi_fn_type(md->g->lc, abi_table[id].sig);
    }
    return md->rt[id];
}

static void mod_init(Mod *md, ZbGen *g, LLVMModuleRef m)
{
    memset(md, 0, sizeof *md);
    md->g = g;
    md->m = m;
    /* keep global names unique when several passes add to one module */
    LLVMValueRef gv = LLVMGetFirstGlobal(m);
    for (; gv; gv = LLVMGetNextGlobal(gv)) md->nglobals++;
}

static void mod_done(Mod *md)
{
    free(md->cstrs.ents);
    free(md->zstrs.ents);
}

/* ------------------------------------------------------------------ */
/* function-level helpers                                              */
/* ------------------------------------------------------------------ */

static void fn_begin(Fn *f, Mod *md, LLVMValueRef fn, FnMode mode, int life)
{
    memset(f, 0, sizeof *f);
    f->md = md;
    f->g = md->g;
    f->fn = fn;
    f->mode = mode;
    f->life = life;
    f->b = LLVMCreateBuilderInContext(md->g->lc);
    f->ab = LLVMCreateBuilderInContext(md->g->lc);
    f->entry = LLVMAppendBasicBlockInContext(md->g->lc, fn, "entry");
    f->start = LLVMAppendBasicBlockInContext(md->g->lc, fn, "start");
    LLVMPositionBuilderAtEnd(f->ab, f->entry);
    LLVMPositionBuilderAtEnd(f->b, f->start);
    f->ctx = LLVMGetParam(fn, 0);
}

static void fn_end(Fn *f)
{
    LLVMPositionBuilderAtEnd(f->ab, f->entry);
    LLVMBuildBr(f->ab, f->start);
    LLVMDisposeBuilder(f->b);
    LLVMDisposeBuilder(f->ab);
    free(f->terms);
}

static LLVMBasicBlockRef new_block(Fn *f, const char *name)
{
    return LLVMAppendBasicBlockInContext(f->g->lc, f->fn, name);
}

static LLVMValueRef call_rt(Fn *f, RtId id, LLVMValueRef *args, unsigned n)
{
    LLVMValueRef fn = rt_fn(f->md, id);
    return LLVMBuildCall2(f->b, f->md->rtty[id], fn, args, n, "");
}

/* i8* p + off */
static LLVMValueRef byte_at(Fn *f, LLVMValueRef p, int64_t off)
{
    if (off == 0) return p;
    LLVMValueRef idx = ci64(f->g, off);
    return LLVMBuildGEP2(f->b, f->g->t_i8, p, &idx, 1, "");
}

static LLVMValueRef load_at(Fn *f, LLVMTypeRef t, LLVMValueRef p, int64_t off)
{
    LLVMValueRef q = LLVMBuildBitCast(f->b, byte_at(f, p, off), LLVMPointerType(t, 0), "");
    return LLVMBuildLoad2(f->b, t, q, "");
}

static void store_at(Fn *f, LLVMValueRef v, LLVMValueRef p, int64_t off)
{
    LLVMValueRef q = LLVMBuildBitCast(f->b, byte_at(f, p, off), LLVMPointerType(LLVMTypeOf(v), 0), "");
    LLVMBuildStore(f->b, v, q);
}

/* An uninitialised stack array of n 16-byte values (or 4-byte ints): i8*. */
static LLVMValueRef stack_array(Fn *f, LLVMTypeRef elem, int n)
{
    LLVMValueRef a = LLVMBuildAlloca(f->ab, LLVMArrayType(elem, (unsigned)(n > 0 ? n : 1)), "");
    LLVMSetAlignment(a, 8);
    return LLVMBuildBitCast(f->ab, a, f->g->t_ptr, "");
}

static void store_val(Fn *f, LLVMValueRef p, int64_t off, Val v)
{
    store_at(f, v.tag, p, off);
    store_at(f, v.pay, p, off + 8);
}

/* A value array holding vs: a constant global when every value is
 * constant, a stack array otherwise. */
static LLVMValueRef value_array(Fn *f, const Val *vs, int n)
{
    if (n == 0) return cnull(f->g);
    bool all_const = true;
    for (int i = 0; i < n && all_const; i++)
        all_const = LLVMIsConstant(vs[i].tag) && LLVMIsConstant(vs[i].pay);
    if (all_const) {
        LLVMValueRef *cs = calloc((size_t)(n > 0 ? n : 1), sizeof *cs);
        if (!cs) ZU_ICE("out of memory");
        for (int i = 0; i < n; i++) {
            LLVMValueRef fl[2] = {vs[i].tag, vs[i].pay};
            cs[i] = LLVMConstNamedStruct(zb_desc_type(f->g->lc, ZB_TY_VALUE), fl, 2);
        }
        LLVMValueRef r = const_array(f->md, zb_desc_type(f->g->lc, ZB_TY_VALUE), cs, n, "vals");
        free(cs);
        return r;
    }
    LLVMValueRef arr = stack_array(f, zb_desc_type(f->g->lc, ZB_TY_VALUE), n);
    for (int i = 0; i < n; i++) store_val(f, arr, 16 * (int64_t)i, vs[i]);
    return arr;
}

static LLVMValueRef int_array(Fn *f, const int32_t *xs, int n)
{
    if (n == 0) return cnull(f->g);
    LLVMValueRef *cs = calloc((size_t)(n > 0 ? n : 1), sizeof *cs);
    if (!cs) ZU_ICE("out of memory");
    for (int i = 0; i < n; i++) cs[i] = ci32(f->g, xs[i]);
    LLVMValueRef r = const_array(f->md, f->g->t_i32, cs, n, "ints");
    free(cs);
    return r;
}

/* Stops the run at loc with msg when cond (i1) holds. */
static void trap_if(Fn *f, LLVMValueRef cond, int loc, const char *msg)
{
    LLVMBasicBlockRef bad = new_block(f, "trap"), ok = new_block(f, "ok");
    LLVMBuildCondBr(f->b, cond, bad, ok);
    LLVMPositionBuilderAtEnd(f->b, bad);
    LLVMValueRef args[3] = {f->ctx, ci32(f->g, loc), cstr(f->md, msg)};
    call_rt(f, RT_zgrt_trap, args, 3);
    LLVMBuildUnreachable(f->b);
    LLVMPositionBuilderAtEnd(f->b, ok);
}

static LLVMValueRef intrinsic(Fn *f, const char *name, LLVMTypeRef overload, LLVMTypeRef *fnty)
{
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    if (!id) ZU_ICE("unknown intrinsic %s", name);
    *fnty = LLVMIntrinsicGetType(f->g->lc, id, &overload, 1);
    return LLVMGetIntrinsicDeclaration(f->md->m, id, &overload, 1);
}

static LLVMValueRef to_dbl(Fn *f, LLVMValueRef bits) { return LLVMBuildBitCast(f->b, bits, f->g->t_dbl, ""); }
static LLVMValueRef from_dbl(Fn *f, LLVMValueRef d) { return LLVMBuildBitCast(f->b, d, f->g->t_i64, ""); }
static LLVMValueRef truth(Fn *f, LLVMValueRef pay) { return LLVMBuildICmp(f->b, LLVMIntNE, pay, ci64(f->g, 0), ""); }
static Val bool_val(Fn *f, LLVMValueRef i1)
{
    return (Val){ci64(f->g, ZGRT_BOOL), LLVMBuildZExt(f->b, i1, f->g->t_i64, "")};
}

/* ------------------------------------------------------------------ */
/* expressions                                                         */
/* ------------------------------------------------------------------ */

static Val expr(Fn *f, const ZExpr *e);
static LLVMValueRef get_pure(Mod *md, const ZDecl *act);

static LLVMValueRef cond_i1(Fn *f, const ZExpr *e) { return truth(f, expr(f, e).pay); }

static Val error_val(Fn *f) { return (Val){ci64(f->g, ZGRT_UNDEF), ci64(f->g, 0)}; }

/* The payload of variable `var` in the store (its tag is known from the
 * variable's type). */
static LLVMValueRef read_var(Fn *f, int var)
{
    if (!f->store) ZU_ICE("variable read outside a lifeline function");
    return load_at(f, f->g->t_i64, f->store, 16 * (int64_t)var + 8);
}

static LLVMValueRef term_ptr(Fn *f, const ZExpr *e)
{
    for (int i = 0; i < f->nterms; i++)
        if (f->terms[i].e == e) return f->terms[i].ptr;
    return NULL;
}

static Val name_val(Fn *f, const ZExpr *e)
{
    Val v;
    if (lit_val(f->md, e, &v)) return v;
    switch (e->name_kind) {
    case NAME_VAR: return (Val){ci64(f->g, tag_of_type(e->type)), read_var(f, e->decl->index)};
    case NAME_GUARD:
        if (!e->decl || !e->decl->expr) ZU_ICE("guard `%s` without a formula", e->name);
        return expr(f, e->decl->expr);
    case NAME_PARAM:
        if (f->mode != FN_PURE) ZU_ICE("parameter `%s` read outside a pure action", e->name);
        return (Val){ci64(f->g, tag_of_type(e->type)),
                     load_at(f, f->g->t_i64, f->args, 16 * (int64_t)e->member + 8)};
    default: ZU_ICE("unresolved name `%s` in generated code", e->name ? e->name : "?");
    }
}

static Val at_var_val(Fn *f, const ZExpr *e)
{
    if (f->mode != FN_EVAL) ZU_ICE("@%s.%s outside a monitor function", e->lifeline, e->name);
    LLVMValueRef tag = ci64(f->g, tag_of_type(e->type));
    if (e->life == f->life) return (Val){tag, read_var(f, e->decl->index)};
    LLVMValueRef p = term_ptr(f, e);
    if (!p) ZU_ICE("@%s.%s read before its definedness check", e->lifeline, e->name);
    return (Val){tag, load_at(f, f->g->t_i64, p, 8)};
}

static Val int_arith(Fn *f, const ZExpr *e, LLVMValueRef a, LLVMValueRef b)
{
    ZbGen *g = f->g;
    int loc = loc_of(g, e->span);
    const char *iname = NULL;
    const char *msg = NULL;
    switch (e->op) {
    case OP_ADD: iname = "llvm.sadd.with.overflow"; msg = "integer overflow in `+`"; break;
    case OP_SUB: iname = "llvm.ssub.with.overflow"; msg = "integer overflow in `-`"; break;
    case OP_MUL: iname = "llvm.smul.with.overflow"; msg = "integer overflow in `*`"; break;
    case OP_DIV:
    case OP_MOD: {
        trap_if(f, LLVMBuildICmp(f->b, LLVMIntEQ, b, ci64(g, 0), ""), loc, "division by zero");
        LLVMValueRef minv = LLVMBuildICmp(f->b, LLVMIntEQ, a, ci64(g, INT64_MIN), "");
        LLVMValueRef neg1 = LLVMBuildICmp(f->b, LLVMIntEQ, b, ci64(g, -1), "");
        trap_if(f, LLVMBuildAnd(f->b, minv, neg1, ""), loc,
                e->op == OP_DIV ? "integer overflow in `/`" : "integer overflow in `%`");
        LLVMValueRef r = e->op == OP_DIV ? LLVMBuildSDiv(f->b, a, b, "") : LLVMBuildSRem(f->b, a, b, "");
        return (Val){ci64(g, ZGRT_INT), r};
    }
    default: ZU_UNREACHABLE();
    }
    LLVMTypeRef fty;
    LLVMValueRef fn = intrinsic(f, iname, g->t_i64, &fty);
    LLVMValueRef args[2] = {a, b};
    LLVMValueRef pair = LLVMBuildCall2(f->b, fty, fn, args, 2, "");
    LLVMValueRef r = LLVMBuildExtractValue(f->b, pair, 0, "");
    trap_if(f, LLVMBuildExtractValue(f->b, pair, 1, ""), loc, msg);
    return (Val){ci64(g, ZGRT_INT), r};
}

static void check_finite(Fn *f, LLVMValueRef d, int loc)
{
    LLVMTypeRef fty;
    LLVMValueRef fabs_fn = intrinsic(f, "llvm.fabs", f->g->t_dbl, &fty);
    LLVMValueRef m = LLVMBuildCall2(f->b, fty, fabs_fn, &d, 1, "");
    /* ordered: false for NaN as well as for infinity */
    LLVMValueRef ok = LLVMBuildFCmp(f->b, LLVMRealOLT, m, LLVMConstReal(f->g->t_dbl, 1.0 / 0.0), "");
    trap_if(f, LLVMBuildNot(f->b, ok, ""), loc, "float result is not finite");
}

static Val float_arith(Fn *f, const ZExpr *e, LLVMValueRef a, LLVMValueRef b)
{
    ZbGen *g = f->g;
    int loc = loc_of(g, e->span);
    LLVMValueRef x = to_dbl(f, a), y = to_dbl(f, b), r;
    if (e->op == OP_DIV || e->op == OP_MOD)
        trap_if(f, LLVMBuildFCmp(f->b, LLVMRealOEQ, y, LLVMConstReal(g->t_dbl, 0.0), ""), loc,
                "division by zero");
    switch (e->op) {
    case OP_ADD: r = LLVMBuildFAdd(f->b, x, y, ""); break;
    case OP_SUB: r = LLVMBuildFSub(f->b, x, y, ""); break;
    case OP_MUL: r = LLVMBuildFMul(f->b, x, y, ""); break;
    case OP_DIV: r = LLVMBuildFDiv(f->b, x, y, ""); break;
    case OP_MOD: r = LLVMBuildFRem(f->b, x, y, ""); break;
    default: ZU_UNREACHABLE();
    }
    check_finite(f, r, loc);
    return (Val){ci64(g, ZGRT_FLOAT), from_dbl(f, r)};
}

static LLVMValueRef runtime_compare(Fn *f, Val a, Val b)
{
    Val vs[2] = {a, b};
    LLVMValueRef arr = value_array(f, vs, 2);
    LLVMValueRef args[2] = {arr, LLVMBuildGEP2(f->b, f->g->t_i8, arr, (LLVMValueRef[]){ci64(f->g, 16)}, 1, "")};
    return call_rt(f, RT_zgrt_compare, args, 2);
}

static LLVMValueRef compare(Fn *f, const ZExpr *e, Val a, Val b)
{
    ZTypeKind k = e->a->type ? e->a->type->kind : TY_ERROR;
    if (k == TY_NULL && e->b->type) k = e->b->type->kind;
    static const LLVMIntPredicate ipred[] = {LLVMIntEQ, LLVMIntNE, LLVMIntSLT,
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

static Val logical(Fn *f, const ZExpr *e)
{
    bool is_and = e->op == OP_AND;
    LLVMValueRef l = cond_i1(f, e->a);
    LLVMBasicBlockRef lbb = LLVMGetInsertBlock(f->b);
    LLVMBasicBlockRef rhs = new_block(f, is_and ? "and.rhs" : "or.rhs");
    LLVMBasicBlockRef join = new_block(f, is_and ? "and.end" : "or.end");
    if (is_and) LLVMBuildCondBr(f->b, l, rhs, join);
    else LLVMBuildCondBr(f->b, l, join, rhs);
    LLVMPositionBuilderAtEnd(f->b, rhs);
    LLVMValueRef r = cond_i1(f, e->b);
    LLVMBasicBlockRef rbb = LLVMGetInsertBlock(f->b);
    LLVMBuildBr(f->b, join);
    LLVMPositionBuilderAtEnd(f->b, join);
    LLVMValueRef phi = LLVMBuildPhi(f->b, f->g->t_i1, "");
    LLVMValueRef vals[2] = {LLVMConstInt(f->g->t_i1, is_and ? 0 : 1, 0), r};
    LLVMBasicBlockRef bbs[2] = {lbb, rbb};
    LLVMAddIncoming(phi, vals, bbs, 2);
    return bool_val(f, phi);
}

static Val binary(Fn *f, const ZExpr *e)
{
    if (e->op == OP_AND || e->op == OP_OR) return logical(f, e);
    Val a = expr(f, e->a);
    Val b = expr(f, e->b);
    if (e->op >= OP_EQ && e->op <= OP_GE) return bool_val(f, compare(f, e, a, b));
    ZTypeKind k = e->type ? e->type->kind : TY_ERROR;
    if (k == TY_INT) return int_arith(f, e, a.pay, b.pay);
    if (k == TY_FLOAT) return float_arith(f, e, a.pay, b.pay);
    if (k == TY_STR && e->op == OP_ADD) {
        Val vs[2] = {a, b};
        LLVMValueRef arr = value_array(f, vs, 2);
        LLVMValueRef out = stack_array(f, zb_desc_type(f->g->lc, ZB_TY_VALUE), 1);
        LLVMValueRef args[4] = {f->ctx, arr, byte_at(f, arr, 16), out};
        call_rt(f, RT_zgrt_concat, args, 4);
        return (Val){ci64(f->g, ZGRT_STR), load_at(f, f->g->t_i64, out, 8)};
    }
    ZU_ICE("operator %s on type kind %d", za_op_text(e->op), (int)k);
}

static Val unary(Fn *f, const ZExpr *e)
{
    Val a = expr(f, e->a);
    if (e->op == OP_NOT) return (Val){ci64(f->g, ZGRT_BOOL), LLVMBuildXor(f->b, a.pay, ci64(f->g, 1), "")};
    if (e->type && e->type->kind == TY_FLOAT)
        return (Val){ci64(f->g, ZGRT_FLOAT), from_dbl(f, LLVMBuildFNeg(f->b, to_dbl(f, a.pay), ""))};
    int loc = loc_of(f->g, e->span);
    trap_if(f, LLVMBuildICmp(f->b, LLVMIntEQ, a.pay, ci64(f->g, INT64_MIN), ""), loc,
            "integer overflow in `-`");
    return (Val){ci64(f->g, ZGRT_INT), LLVMBuildNeg(f->b, a.pay, "")};
}

static Val cond_expr(Fn *f, const ZExpr *e)
{
    LLVMValueRef c = cond_i1(f, e->c);
    LLVMBasicBlockRef tb = new_block(f, "cond.then"), eb = new_block(f, "cond.else");
    LLVMBasicBlockRef join = new_block(f, "cond.end");
    LLVMBuildCondBr(f->b, c, tb, eb);
    LLVMPositionBuilderAtEnd(f->b, tb);
    Val a = expr(f, e->a);
    LLVMBasicBlockRef ta = LLVMGetInsertBlock(f->b);
    LLVMBuildBr(f->b, join);
    LLVMPositionBuilderAtEnd(f->b, eb);
    Val b = expr(f, e->b);
    LLVMBasicBlockRef tb2 = LLVMGetInsertBlock(f->b);
    LLVMBuildBr(f->b, join);
    LLVMPositionBuilderAtEnd(f->b, join);
    LLVMBasicBlockRef bbs[2] = {ta, tb2};
    LLVMValueRef pay = LLVMBuildPhi(f->b, f->g->t_i64, "");
    LLVMValueRef pv[2] = {a.pay, b.pay};
    LLVMAddIncoming(pay, pv, bbs, 2);
    return (Val){ci64(f->g, tag_of_type(e->type)), pay};
}

static Val call_expr(Fn *f, const ZExpr *e)
{
    int n = e->args.len;
    Val *vs = calloc((size_t)(n > 0 ? n : 1), sizeof *vs);
    if (!vs) ZU_ICE("out of memory");
    if (e->builtin == BI_NONE && e->decl && e->decl->kind == D_ACTION &&
        e->decl->action != ACT_PURE) {
        zd_error(f->g->d, e->span,
                 "the backend cannot call %s action `%s` inside an expression yet: "
                 "assign its result first (`y = %s(...);`)",
                 e->decl->action == ACT_EXTERN_PURE ? "extern pure" : "this", e->name, e->name);
        f->g->failed = true;
        free(vs);
        return error_val(f);
    }
    for (int i = 0; i < n; i++) vs[i] = expr(f, ZU_VEC_AT(e->args, i));
    LLVMValueRef args = value_array(f, vs, n);
    free(vs);
    LLVMValueRef out = stack_array(f, zb_desc_type(f->g->lc, ZB_TY_VALUE), 1);
    if (e->builtin != BI_NONE) {
        LLVMValueRef a[6] = {f->ctx, ci32(f->g, (int)e->builtin), ci32(f->g, n), args, out,
                             ci32(f->g, loc_of(f->g, e->span))};
        call_rt(f, RT_zgrt_builtin, a, 6);
    } else {
        const ZDecl *act = e->decl;
        if (!act || act->kind != D_ACTION) ZU_ICE("call of `%s` without a declaration", e->name);
        LLVMValueRef fn = get_pure(f->md, act);
        LLVMValueRef a[3] = {f->ctx, args, out};
        LLVMBuildCall2(f->b, LLVMGlobalGetValueType(fn), fn, a, 3, "");
    }
    return (Val){ci64(f->g, tag_of_type(e->type)), load_at(f, f->g->t_i64, out, 8)};
}

static Val expr(Fn *f, const ZExpr *e)
{
    Val v;
    if (!e) ZU_ICE("missing expression");
    switch (e->kind) {
    case E_INT:
    case E_FLOAT:
    case E_STR:
    case E_BOOL:
    case E_NULL:
        if (!lit_val(f->md, e, &v)) ZU_UNREACHABLE();
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

/* `void zg.pure.<name>(i8* ctx, i8* args, i8* outs)`, internal to the
 * module, compiled on first use. */
static LLVMValueRef get_pure(Mod *md, const ZDecl *act)
{
    char *name = zu_fmt(md->g->a, "zg.pure.%s", act->name);
    LLVMValueRef fn = LLVMGetNamedFunction(md->m, name);
    if (fn) return fn;
    fn = LLVMAddFunction(md->m, name, body3_type(md->g));
    LLVMSetLinkage(fn, LLVMInternalLinkage);
    Fn f;
    fn_begin(&f, md, fn, FN_PURE, -1);
    f.args = LLVMGetParam(fn, 1);
    f.outs = LLVMGetParam(fn, 2);
    const ZExpr *body = act->expr;
    if (!body) ZU_ICE("pure action `%s` without a body", act->name);
    if (body->kind == E_TUPLE) {
        for (int i = 0; i < body->args.len; i++) {
            const ZExpr *x = ZU_VEC_AT(body->args, i);
            Val v = expr(&f, x);
            store_val(&f, f.outs, 16 * (int64_t)i, v);
        }
    } else {
        Val v = expr(&f, body);
        if (act->results.len == 1) {
            const ZParam *r = ZU_VEC_AT(act->results, 0);
            v.tag = ci64(md->g, tag_of_type(r->type));
        }
        store_val(&f, f.outs, 0, v);
    }
    LLVMBuildRetVoid(f.b);
    fn_end(&f);
    return fn;
}

/* ------------------------------------------------------------------ */
/* local programs                                                      */
/* ------------------------------------------------------------------ */

static void stmts(Fn *f, const ZVec *v);

static LLVMTypeRef body_type(ZbGen *g) { return LLVMFunctionType(g->t_void, &g->t_ptr, 1, 0); }

static void body_prologue(Fn *f)
{
    f->store = call_rt(f, RT_zgrt_store, &f->ctx, 1);
}

static int var_of(const ZExpr *e)
{
    if (e && e->kind == E_NAME && e->name_kind == NAME_VAR && e->decl) return e->decl->index;
    return -1;
}

static void gen_send(Fn *f, const ZLocal *l)
{
    int n = l->vals.len;
    Val *vs = calloc((size_t)(n > 0 ? n : 1), sizeof *vs);
    if (!vs) ZU_ICE("out of memory");
    for (int i = 0; i < n; i++) vs[i] = expr(f, ZU_VEC_AT(l->vals, i));
    LLVMValueRef arr = value_array(f, vs, n);
    free(vs);
    LLVMValueRef args[6] = {f->ctx, ci32(f->g, l->peer), ci32(f->g, l->chan), ci32(f->g, n), arr,
                            ci32(f->g, loc_of(f->g, l->src->span))};
    call_rt(f, RT_zgrt_send, args, 6);
}

static void gen_recv(Fn *f, const ZLocal *l)
{
    int n = l->vals.len;
    int32_t *binds = calloc((size_t)(n > 0 ? n : 1), sizeof *binds);
    Val *cs = calloc((size_t)(n > 0 ? n : 1), sizeof *cs);
    if (!binds || !cs) ZU_ICE("out of memory");
    bool any_const = false;
    for (int i = 0; i < n; i++) {
        const ZExpr *x = ZU_VEC_AT(l->vals, i);
        binds[i] = var_of(x);
        if (binds[i] >= 0) {
            cs[i] = error_val(f);
        } else {
            if (!lit_val(f->md, x, &cs[i])) ZU_ICE("receive binding is neither a variable nor a constant");
            any_const = true;
        }
    }
    LLVMValueRef args[7] = {f->ctx,
                            ci32(f->g, l->peer),
                            ci32(f->g, l->chan),
                            ci32(f->g, n),
                            int_array(f, binds, n),
                            any_const ? value_array(f, cs, n) : cnull(f->g),
                            ci32(f->g, loc_of(f->g, l->src->span))};
    call_rt(f, RT_zgrt_recv, args, 7);
    free(binds);
    free(cs);
}

static void assign_call(Fn *f, const char *action, int n, const int32_t *vars, LLVMValueRef vals,
                        int loc)
{
    LLVMValueRef args[6] = {f->ctx, action ? cstr(f->md, action) : cnull(f->g), ci32(f->g, n),
                            int_array(f, vars, n), vals, ci32(f->g, loc)};
    call_rt(f, RT_zgrt_assign, args, 6);
}

static void gen_assign(Fn *f, const ZLocal *l)
{
    const ZStmt *s = l->src;
    int loc = loc_of(f->g, s->span);
    if (s->kind == S_MSG) { /* self message: params := args */
        int n = l->vals.len;
        Val *vs = calloc((size_t)(n > 0 ? n : 1), sizeof *vs);
        int32_t *vars = calloc((size_t)(n > 0 ? n : 1), sizeof *vars);
        if (!vs || !vars) ZU_ICE("out of memory");
        for (int i = 0; i < n; i++) {
            vs[i] = expr(f, ZU_VEC_AT(l->vals, i));
            vars[i] = var_of(i < s->params.len ? ZU_VEC_AT(s->params, i) : NULL);
            if (vars[i] < 0) ZU_ICE("self message binds a non-variable");
        }
        assign_call(f, NULL, n, vars, value_array(f, vs, n), loc);
        free(vs);
        free(vars);
        return;
    }
    if (s->kind != S_ASSIGN || !s->expr) ZU_ICE("assignment from a %s statement", za_stmt_kind_name(s->kind));
    int nt = s->targets.len;
    int32_t *targets = calloc((size_t)(nt > 0 ? nt : 1), sizeof *targets);
    if (!targets) ZU_ICE("out of memory");
    for (int i = 0; i < nt; i++) {
        const ZTarget *t = ZU_VEC_AT(s->targets, i);
        targets[i] = t->var ? t->var->index : -1;
    }
    const ZExpr *call = s->expr;
    const ZDecl *act = s->is_action && call->kind == E_CALL ? call->decl : NULL;
    if (act && act->kind == D_ACTION && act->action == ACT_PURE) {
        int nr = act->results.len;
        int na = call->args.len;
        Val *vs = calloc((size_t)(na > 0 ? na : 1), sizeof *vs);
        if (!vs) ZU_ICE("out of memory");
        for (int i = 0; i < na; i++) vs[i] = expr(f, ZU_VEC_AT(call->args, i));
        LLVMValueRef args = value_array(f, vs, na);
        free(vs);
        LLVMValueRef outs = stack_array(f, zb_desc_type(f->g->lc, ZB_TY_VALUE), nr);
        LLVMValueRef fn = get_pure(f->md, act);
        LLVMValueRef a[3] = {f->ctx, args, outs};
        LLVMBuildCall2(f->b, LLVMGlobalGetValueType(fn), fn, a, 3, "");
        /* without targets the results are dropped, but the event happens */
        assign_call(f, act->name, nt < nr ? nt : nr, targets, outs, loc);
    } else if (act && act->kind == D_ACTION) {
        int nr = act->results.len;
        int na = call->args.len;
        Val *vs = calloc((size_t)(na > 0 ? na : 1), sizeof *vs);
        int32_t *outs = calloc((size_t)(nr > 0 ? nr : 1), sizeof *outs);
        if (!vs || !outs) ZU_ICE("out of memory");
        for (int i = 0; i < na; i++) vs[i] = expr(f, ZU_VEC_AT(call->args, i));
        for (int i = 0; i < nr; i++) outs[i] = i < nt ? targets[i] : -1;
        LLVMValueRef args[6] = {f->ctx,
                                ci32(f->g, action_slot(f->g, act)),
                                value_array(f, vs, na),
                                ci32(f->g, nr),
                                int_array(f, outs, nr),
                                ci32(f->g, loc)};
        call_rt(f, RT_zgrt_act, args, 6);
        free(vs);
        free(outs);
    } else {
        Val v = expr(f, call);
        if (nt == 1) {
            const ZTarget *t = ZU_VEC_AT(s->targets, 0);
            if (t->var) v.tag = ci64(f->g, tag_of_type(t->var->type));
        }
        assign_call(f, NULL, nt > 1 ? 1 : nt, targets, value_array(f, &v, 1), loc);
    }
    free(targets);
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
static LLVMValueRef gen_choice(Fn *f, const ZLocal *l)
{
    const ZStmt *s = l->src;
    int loc = loc_of(f->g, s->span);
    LLVMValueRef tag = ci32(f->g, s->construct - 1);
    const ZGuardInfo *gi = guard_info(f->g, s);
    if (gi ? gi->cpl : zk_is_cpl(l->guard)) {
        if (!gi || !gi->root) ZU_ICE("CPL guard of %s without a formula", l->tag ? l->tag : "?");
        LLVMValueRef args[4] = {f->ctx, tag, ci32(f->g, gi->root->id), ci32(f->g, loc)};
        LLVMValueRef v = call_rt(f, RT_zgrt_choice_cpl, args, 4);
        return LLVMBuildICmp(f->b, LLVMIntNE, v, ci32(f->g, 0), "");
    }
    LLVMValueRef c = cond_i1(f, l->guard);
    LLVMValueRef args[4] = {f->ctx, tag, LLVMBuildZExt(f->b, c, f->g->t_i32, ""), ci32(f->g, loc)};
    call_rt(f, RT_zgrt_choice, args, 4);
    return c;
}

static LLVMValueRef gen_recv_ctl(Fn *f, const ZLocal *l)
{
    const ZStmt *s = l->src;
    LLVMValueRef args[5] = {f->ctx, ci32(f->g, l->peer), ci32(f->g, l->chan),
                            ci32(f->g, s->construct - 1), ci32(f->g, loc_of(f->g, s->span))};
    LLVMValueRef v = call_rt(f, RT_zgrt_recv_ctl, args, 5);
    return LLVMBuildICmp(f->b, LLVMIntNE, v, ci32(f->g, 0), "");
}

static void gen_if(Fn *f, const ZLocal *l)
{
    LLVMValueRef c = l->kind == L_IF ? gen_choice(f, l) : gen_recv_ctl(f, l);
    LLVMBasicBlockRef tb = new_block(f, "if.then"), eb = new_block(f, "if.else");
    LLVMBasicBlockRef join = new_block(f, "if.end");
    LLVMBuildCondBr(f->b, c, tb, eb);
    LLVMPositionBuilderAtEnd(f->b, tb);
    stmts(f, &l->body);
    LLVMBuildBr(f->b, join);
    LLVMPositionBuilderAtEnd(f->b, eb);
    stmts(f, &l->els);
    LLVMBuildBr(f->b, join);
    LLVMPositionBuilderAtEnd(f->b, join);
}

static void gen_while(Fn *f, const ZLocal *l)
{
    LLVMBasicBlockRef head = new_block(f, "while.head"), body = new_block(f, "while.body");
    LLVMBasicBlockRef exit = new_block(f, "while.exit");
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

static void gen_send_ctl(Fn *f, const ZLocal *l)
{
    const ZStmt *s = l->src;
    LLVMValueRef args[6] = {f->ctx,
                            ci32(f->g, l->peer),
                            ci32(f->g, l->chan),
                            ci32(f->g, s->construct - 1),
                            ci32(f->g, l->ctl_value ? 1 : 0),
                            ci32(f->g, loc_of(f->g, s->span))};
    call_rt(f, RT_zgrt_send_ctl, args, 6);
}

static void gen_recv_any(Fn *f, const ZLocal *l)
{
    ZbGen *g = f->g;
    int n = l->body.len;
    if (n == 0) return;
    if (n > 63) {
        zd_error(g->d, l->src->span, "a coregion with %d messages to one receiver is more than "
                 "the 63 the backend supports", n);
        g->failed = true;
        return;
    }
    int32_t *peers = calloc((size_t)n, sizeof *peers);
    if (!peers) ZU_ICE("out of memory");
    for (int i = 0; i < n; i++) peers[i] = ((const ZLocal *)ZU_VEC_AT(l->body, i))->peer;
    LLVMValueRef peer_arr = int_array(f, peers, n);
    free(peers);
    int loc = loc_of(g, l->src->span);
    /* for (i = 0, mask = 0; i < n; i++) { k = wait_any(mask); recv arm k; mask |= 1 << k; } */
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(f->b);
    LLVMBasicBlockRef head = new_block(f, "any.head"), latch = new_block(f, "any.next");
    LLVMBasicBlockRef done = new_block(f, "any.done"), bad = new_block(f, "any.bad");
    LLVMBuildBr(f->b, head);
    LLVMPositionBuilderAtEnd(f->b, head);
    LLVMValueRef iv = LLVMBuildPhi(f->b, g->t_i32, "i");
    LLVMValueRef mask = LLVMBuildPhi(f->b, g->t_i64, "mask");
    LLVMValueRef wargs[6] = {f->ctx, ci32(g, l->chan), ci32(g, n), peer_arr, mask, ci32(g, loc)};
    LLVMValueRef k = call_rt(f, RT_zgrt_wait_any, wargs, 6);
    LLVMValueRef sw = LLVMBuildSwitch(f->b, k, bad, (unsigned)n);
    for (int i = 0; i < n; i++) {
        LLVMBasicBlockRef arm = new_block(f, "any.arm");
        LLVMAddCase(sw, ci32(g, i), arm);
        LLVMPositionBuilderAtEnd(f->b, arm);
        gen_recv(f, ZU_VEC_AT(l->body, i));
        LLVMBuildBr(f->b, latch);
    }
    LLVMPositionBuilderAtEnd(f->b, bad);
    LLVMValueRef targs[3] = {f->ctx, ci32(g, loc), cstr(f->md, "internal error: bad coregion arm")};
    call_rt(f, RT_zgrt_trap, targs, 3);
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

static void gen_par(Fn *f, const ZLocal *l)
{
    ZbGen *g = f->g;
    int n = l->body.len;
    const char *lname = life_decl(g, f->life)->name;
    LLVMValueRef *fns = calloc((size_t)(n > 0 ? n : 1), sizeof *fns);
    if (!fns) ZU_ICE("out of memory");
    for (int k = 0; k < n; k++) {
        const ZLocal *br = ZU_VEC_AT(l->body, k);
        char *name = zu_fmt(g->a, "zg.par.%s.%d.%d", lname, l->src->construct, k + 1);
        LLVMValueRef fn = LLVMAddFunction(f->md->m, name, body_type(g));
        LLVMSetLinkage(fn, LLVMInternalLinkage);
        Fn bf;
        fn_begin(&bf, f->md, fn, FN_BODY, f->life);
        body_prologue(&bf);
        stmts(&bf, &br->body);
        LLVMBuildRetVoid(bf.b);
        fn_end(&bf);
        fns[k] = as_ptr(f->md, fn);
    }
    LLVMValueRef arr = const_array(f->md, g->t_ptr, fns, n, "branches");
    free(fns);
    LLVMValueRef args[4] = {f->ctx, ci32(g, n), arr, ci32(g, loc_of(g, l->src->span))};
    call_rt(f, RT_zgrt_par, args, 4);
}

static void stmt(Fn *f, const ZLocal *l)
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
    case L__COUNT: ZU_UNREACHABLE();
    }
}

static void stmts(Fn *f, const ZVec *v)
{
    for (int i = 0; i < v->len; i++) stmt(f, ZU_VEC_AT(*v, i));
}

/* ------------------------------------------------------------------ */
/* monitor evaluation                                                  */
/* ------------------------------------------------------------------ */

static int slot_cmp(const void *x, const void *y)
{
    const ZbSlot *a = x, *b = y;
    if (a->life != b->life) return a->life < b->life ? -1 : 1;
    if (a->index != b->index) return a->index < b->index ? -1 : 1;
    return 0;
}

/* The position of (life, index) in a sorted slot table, or -1. */
static int slot_find(const ZbSlot *t, int n, int life, int index)
{
    ZbSlot key = {life, index};
    const ZbSlot *hit = n > 0 ? bsearch(&key, t, (size_t)n, sizeof *t, slot_cmp) : NULL;
    return hit ? (int)(hit - t) : -1;
}

/* Sorts a slot table and removes duplicates; returns the new length. */
static int slot_sort(ZbSlot *t, int n)
{
    if (n <= 1) return n;
    qsort(t, (size_t)n, sizeof *t, slot_cmp);
    int k = 1;
    for (int i = 1; i < n; i++)
        if (slot_cmp(&t[i], &t[k - 1]) != 0) t[k++] = t[i];
    return k;
}

/* The index in prog->vars of a variable named in a var view. */
static int var_decl_index(ZbGen *g, const char *name)
{
    for (int i = 0; i < g->p->vars.len; i++) {
        const ZDecl *v = ZU_VEC_AT(g->p->vars, i);
        if (v->name && name && strcmp(v->name, name) == 0) {
            if (v->index != i) ZU_ICE("variable `%s` has index %d at position %d", name, v->index, i);
            return i;
        }
    }
    ZU_ICE("variable view of unknown variable `%s`", name ? name : "?");
}

/* The slot tables: the union over every lifeline's monitor of its bool
 * views (B, ψ) and var views (B, x). */
static void build_slots(ZbGen *g)
{
    if (!g->gt) return;
    int nv = 0, nvv = 0;
    for (int i = 0; i < g->gt->monitors.len; i++) {
        const ZLifelineMonitor *m = ZU_VEC_AT(g->gt->monitors, i);
        nv += m->bool_views.len;
        nvv += m->var_views.len;
    }
    g->views = calloc((size_t)nv + 1, sizeof *g->views);
    g->varviews = calloc((size_t)nvv + 1, sizeof *g->varviews);
    if (!g->views || !g->varviews) ZU_ICE("out of memory");
    int nsubs = g->gt->subs.len;
    for (int i = 0; i < g->gt->monitors.len; i++) {
        const ZLifelineMonitor *m = ZU_VEC_AT(g->gt->monitors, i);
        for (int k = 0; k < m->bool_views.len; k++) {
            const ZViewEntry *ve = ZU_VEC_AT(m->bool_views, k);
            if (ve->life < 0 || ve->life >= g->nlife || ve->sub < 0 || ve->sub >= nsubs)
                ZU_ICE("view entry (%d, φ%d) out of range", ve->life, ve->sub);
            g->views[g->nviews++] = (ZbSlot){ve->life, ve->sub};
        }
        for (int k = 0; k < m->var_views.len; k++) {
            const ZViewEntry *ve = ZU_VEC_AT(m->var_views, k);
            if (ve->life < 0 || ve->life >= g->nlife)
                ZU_ICE("variable view entry on lifeline %d out of range", ve->life);
            g->varviews[g->nvarviews++] = (ZbSlot){ve->life, var_decl_index(g, ve->var)};
        }
    }
    g->nviews = slot_sort(g->views, g->nviews);
    g->nvarviews = slot_sort(g->varviews, g->nvarviews);
}

static LLVMValueRef slot_table(Mod *md, const ZbSlot *t, int n, const char *prefix)
{
    ZbGen *g = md->g;
    LLVMValueRef *vals = calloc((size_t)n + 1, sizeof *vals);
    if (!vals) ZU_ICE("out of memory");
    for (int i = 0; i < n; i++) {
        LLVMValueRef f[2] = {ci32(g, t[i].life), ci32(g, t[i].index)};
        vals[i] = LLVMConstNamedStruct(zb_desc_type(g->lc, ZB_TY_SLOT), f, 2);
    }
    LLVMValueRef v = const_array(md, zb_desc_type(g->lc, ZB_TY_SLOT), vals, n, prefix);
    free(vals);
    return v;
}

static void collect_terms(Fn *f, const ZExpr *e, const ZExpr ***list, int *n, int *cap)
{
    if (!e) return;
    if ((e->kind == E_NAME && e->name_kind == NAME_VAR) || e->kind == E_AT_VAR) {
        if (*n == *cap) {
            *cap = *cap ? *cap * 2 : 8;
            *list = xrealloc(*list, sizeof **list * (size_t)*cap);
        }
        (*list)[(*n)++] = e;
        return;
    }
    if (e->kind == E_NAME && e->name_kind == NAME_GUARD && e->decl) {
        collect_terms(f, e->decl->expr, list, n, cap);
        return;
    }
    collect_terms(f, e->a, list, n, cap);
    collect_terms(f, e->b, list, n, cap);
    collect_terms(f, e->c, list, n, cap);
    for (int i = 0; i < e->args.len; i++) collect_terms(f, ZU_VEC_AT(e->args, i), list, n, cap);
}

/* An atom on lifeline f->life: false when one of its terms is undefined. */
static LLVMValueRef eval_atom(Fn *f, const ZExpr *atom)
{
    ZbGen *g = f->g;
    const ZExpr **terms = NULL;
    int n = 0, cap = 0;
    collect_terms(f, atom, &terms, &n, &cap);
    f->nterms = 0;
    /* an @B.x term whose lifeline cannot reach this one is never defined
     * here: the atom is constantly false */
    for (int i = 0; i < n; i++) {
        const ZExpr *t = terms[i];
        if (t->kind == E_AT_VAR && t->life != f->life && !zg_reaches(g->gt, t->life, f->life)) {
            free(terms);
            return LLVMConstInt(g->t_i1, 0, 0);
        }
    }
    LLVMValueRef defined = LLVMConstInt(g->t_i1, 1, 0);
    for (int i = 0; i < n; i++) {
        const ZExpr *t = terms[i];
        LLVMValueRef ok;
        if (t->kind == E_NAME || t->life == f->life) {
            LLVMValueRef tag = load_at(f, g->t_i64, f->store, 16 * (int64_t)t->decl->index);
            ok = LLVMBuildICmp(f->b, LLVMIntNE, tag, ci64(g, ZGRT_UNDEF), "");
        } else {
            if (term_ptr(f, t)) continue;
            int slot = slot_find(g->varviews, g->nvarviews, t->life, t->decl->index);
            if (slot < 0)
                ZU_ICE("@%s.%s on lifeline %s has no variable-view slot", t->lifeline, t->name,
                       life_decl(g, f->life)->name);
            LLVMValueRef args[3] = {f->ctx, ci32(g, t->life), ci32(g, slot)};
            LLVMValueRef p = call_rt(f, RT_zgrt_varview, args, 3);
            if (f->nterms == f->capterms) {
                f->capterms = f->capterms ? f->capterms * 2 : 8;
                f->terms = xrealloc(f->terms, sizeof *f->terms * (size_t)f->capterms);
            }
            f->terms[f->nterms++] = (Term){t, p};
            ok = LLVMBuildIsNotNull(f->b, p, "");
        }
        defined = LLVMBuildAnd(f->b, defined, ok, "");
    }
    free(terms);
    if (n == 0) return cond_i1(f, atom);
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(f->b);
    LLVMBasicBlockRef evb = new_block(f, "atom.eval"), join = new_block(f, "atom.end");
    LLVMBuildCondBr(f->b, defined, evb, join);
    LLVMPositionBuilderAtEnd(f->b, evb);
    LLVMValueRef v = cond_i1(f, atom);
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

static LLVMValueRef flag(Fn *f, LLVMValueRef arr, int id)
{
    LLVMValueRef b = load_at(f, f->g->t_i8, arr, id);
    return LLVMBuildICmp(f->b, LLVMIntNE, b, ci8(f->g, 0), "");
}

static void gen_eval(ZbGen *g, Mod *md, int life, const ZLifelineMonitor *mon)
{
    const char *lname = life_decl(g, life)->name;
    LLVMTypeRef ps[3] = {g->t_ptr, g->t_ptr, g->t_ptr};
    LLVMValueRef fn = LLVMAddFunction(md->m, zu_fmt(g->a, "zg.eval.%s", lname),
                                      LLVMFunctionType(g->t_void, ps, 3, 0));
    Fn f;
    fn_begin(&f, md, fn, FN_EVAL, life);
    f.val = LLVMGetParam(fn, 1);
    f.old = LLVMGetParam(fn, 2);
    body_prologue(&f);
    LLVMValueRef vc_args[2] = {f.ctx, ci32(g, life)};
    LLVMValueRef vc_self = call_rt(&f, RT_zgrt_vc, vc_args, 2);
    LLVMValueRef not_first = LLVMBuildICmp(f.b, LLVMIntSGT, vc_self, ci64(g, 1), "");
    for (int i = 0; i < mon->evaluates.len; i++) {
        const ZFormula *phi = ZU_VEC_AT(mon->evaluates, i);
        LLVMValueRef v;
        switch (phi->kind) {
        case F_TRUE: v = LLVMConstInt(g->t_i1, 1, 0); break;
        case F_ATOM: v = eval_atom(&f, phi->atom); break;
        case F_NOT: v = LLVMBuildNot(f.b, flag(&f, f.val, phi->a->id), ""); break;
        case F_AND: v = LLVMBuildAnd(f.b, flag(&f, f.val, phi->a->id), flag(&f, f.val, phi->b->id), ""); break;
        case F_OR: v = LLVMBuildOr(f.b, flag(&f, f.val, phi->a->id), flag(&f, f.val, phi->b->id), ""); break;
        case F_PREV: v = LLVMBuildAnd(f.b, not_first, flag(&f, f.old, phi->a->id), ""); break;
        case F_SINCE: {
            LLVMValueRef keep = LLVMBuildAnd(f.b, flag(&f, f.val, phi->a->id),
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
                int slot = slot_find(g->views, g->nviews, phi->life, phi->a->id);
                if (slot < 0)
                    ZU_ICE("@%s(φ%d) on lifeline %s has no view slot", life_decl(g, phi->life)->name,
                           phi->a->id, lname);
                LLVMValueRef a3[3] = {f.ctx, ci32(g, phi->life), ci32(g, slot)};
                LLVMValueRef view = call_rt(&f, RT_zgrt_view, a3, 3);
                v = LLVMBuildICmp(f.b, LLVMIntNE, view, ci32(g, 0), "");
            }
            break;
        default: ZU_UNREACHABLE();
        }
        store_at(&f, LLVMBuildZExt(f.b, v, g->t_i8, ""), f.val, phi->id);
    }
    LLVMBuildRetVoid(f.b);
    fn_end(&f);
}

static const ZLifelineMonitor *monitor_of(ZbGen *g, int life)
{
    if (!g->gt) return NULL;
    for (int i = 0; i < g->gt->monitors.len; i++) {
        const ZLifelineMonitor *m = ZU_VEC_AT(g->gt->monitors, i);
        if (m->life == life) return m;
    }
    return NULL;
}

static bool has_eval(ZbGen *g, int life)
{
    const ZLifelineMonitor *m = monitor_of(g, life);
    return m && m->evaluates.len > 0;
}

bool zb_gen_lifeline(ZbGen *g, LLVMModuleRef m, int life)
{
    const ZLocalProgram *lp = NULL;
    for (int i = 0; i < g->ls->programs.len; i++) {
        const ZLocalProgram *x = ZU_VEC_AT(g->ls->programs, i);
        if (x->lifeline == life) lp = x;
    }
    if (!lp) ZU_ICE("no local program for lifeline %d", life);
    Mod md;
    mod_init(&md, g, m);
    LLVMValueRef fn = LLVMAddFunction(m, zu_fmt(g->a, "zg.body.%s", lp->name), body_type(g));
    Fn f;
    fn_begin(&f, &md, fn, FN_BODY, life);
    body_prologue(&f);
    stmts(&f, &lp->body);
    LLVMBuildRetVoid(f.b);
    fn_end(&f);
    const ZLifelineMonitor *mon = monitor_of(g, life);
    if (mon && mon->evaluates.len > 0) gen_eval(g, &md, life, mon);
    mod_done(&md);
    return !g->failed;
}

/* ------------------------------------------------------------------ */
/* the program descriptor                                              */
/* ------------------------------------------------------------------ */

static LLVMValueRef cstruct(ZbGen *g, ZbDescType k, LLVMValueRef *f, unsigned n)
{
    return LLVMConstNamedStruct(zb_desc_type(g->lc, k), f, n);
}

static LLVMValueRef type_desc(ZbGen *g, const ZType *t)
{
    LLVMValueRef f[2] = {ci32(g, tag_of_type(t)),
                         ci32(g, t && t->kind == TY_ENUM && t->enum_decl ? t->enum_decl->index : -1)};
    return cstruct(g, ZB_TY_TYPE, f, 2);
}

static LLVMValueRef value_desc(Mod *md, const ZExpr *e)
{
    Val v;
    if (!e || !lit_val(md, e, &v)) return const_value(md, ZGRT_UNDEF, ci64(md->g, 0));
    LLVMValueRef f[2] = {v.tag, v.pay};
    return cstruct(md->g, ZB_TY_VALUE, f, 2);
}

static const ZProp *prop(const ZDecl *act, const char *key)
{
    for (int i = 0; i < act->props.len; i++) {
        const ZProp *pr = ZU_VEC_AT(act->props, i);
        if (pr->key && pr->value && strcmp(pr->key, key) == 0) return pr;
    }
    return NULL;
}

static int name_code(const ZExpr *e, const char *const *names, int dflt)
{
    if (!e || e->kind != E_NAME || !e->name) return dflt;
    for (int i = 0; names[i]; i++)
        if (strcmp(e->name, names[i]) == 0) return i;
    return dflt;
}

static LLVMValueRef prop_str(Mod *md, const ZDecl *act, const char *key)
{
    const ZProp *pr = prop(act, key);
    if (!pr || pr->value->kind != E_STR) return cnull(md->g);
    return cstr(md, pr->value->lit.s ? pr->value->lit.s : "");
}

static LLVMValueRef names_array(Mod *md, const ZVec *params, const char *prefix)
{
    int n = params->len;
    LLVMValueRef *vs = calloc((size_t)(n > 0 ? n : 1), sizeof *vs);
    if (!vs) ZU_ICE("out of memory");
    for (int i = 0; i < n; i++) {
        const ZParam *pp = ZU_VEC_AT(*params, i);
        vs[i] = cstr(md, pp->name);
    }
    LLVMValueRef r = const_array(md, md->g->t_ptr, vs, n, prefix);
    free(vs);
    return r;
}

static LLVMValueRef types_array(Mod *md, const ZVec *params)
{
    int n = params->len;
    LLVMValueRef *vs = calloc((size_t)(n > 0 ? n : 1), sizeof *vs);
    if (!vs) ZU_ICE("out of memory");
    for (int i = 0; i < n; i++) {
        const ZParam *pp = ZU_VEC_AT(*params, i);
        vs[i] = type_desc(md->g, pp->type);
    }
    LLVMValueRef r = const_array(md, zb_desc_type(md->g->lc, ZB_TY_TYPE), vs, n, "types");
    free(vs);
    return r;
}

static LLVMValueRef action_desc(Mod *md, const ZDecl *act)
{
    static const char *const parse_names[] = {"text", "json", "bool", "int", "float", "enum", NULL};
    static const char *const human_names[] = {"confirm", "input", "select", "edit", "ack", NULL};
    ZbGen *g = md->g;
    int kind;
    switch (act->action) {
    case ACT_LLM: kind = ZGRT_ACT_LLM; break;
    case ACT_PURE: kind = ZGRT_ACT_PURE; break;
    case ACT_EXTERN_PURE: kind = ZGRT_ACT_EXTERN_PURE; break;
    case ACT_EFFECT: kind = ZGRT_ACT_EFFECT; break;
    case ACT_HUMAN: kind = ZGRT_ACT_HUMAN; break;
    default: ZU_UNREACHABLE();
    }
    int nres = act->results.len;
    /* retries: forever = -1, default 3 */
    int retries = 3;
    const ZProp *pr = prop(act, "retries");
    if (pr && pr->value->kind == E_NAME && pr->value->name && !strcmp(pr->value->name, "forever"))
        retries = -1;
    else if (pr && pr->value->kind == E_INT)
        retries = pr->value->lit.i > INT32_MAX ? INT32_MAX : (int)pr->value->lit.i;
    double temp = 0;
    int has_temp = 0;
    pr = prop(act, "temperature");
    if (pr && pr->value->kind == E_INT) temp = (double)pr->value->lit.i, has_temp = 1;
    else if (pr && pr->value->kind == E_FLOAT) temp = pr->value->lit.f, has_temp = 1;
    LLVMValueRef fallback = cnull(g);
    pr = prop(act, "fallback");
    if (pr && nres > 0) {
        LLVMValueRef *vs = calloc((size_t)nres, sizeof *vs);
        if (!vs) ZU_ICE("out of memory");
        for (int i = 0; i < nres; i++) {
            const ZExpr *x = pr->value->kind == E_TUPLE
                                 ? (i < pr->value->args.len ? ZU_VEC_AT(pr->value->args, i) : NULL)
                                 : (i == 0 ? pr->value : NULL);
            vs[i] = value_desc(md, x);
        }
        fallback = const_array(md, zb_desc_type(g->lc, ZB_TY_VALUE), vs, nres, "fallback");
        free(vs);
    }
    LLVMValueRef fnp = cnull(g);
    if (act->action == ACT_EXTERN_PURE || act->action == ACT_EFFECT) {
        /* a weak reference: NULL when the user linked no zg_<name>, which
         * the runtime reports when the action runs */
        const char *sym = zu_fmt(g->a, "zg_%s", act->name);
        LLVMValueRef ext = LLVMGetNamedFunction(md->m, sym);
        if (!ext) {
            LLVMTypeRef pt = g->t_ptr;
            ext = LLVMAddFunction(md->m, sym, LLVMFunctionType(g->t_i32, &pt, 1, 0));
            LLVMSetLinkage(ext, LLVMExternalWeakLinkage);
        }
        fnp = as_ptr(md, ext);
    }
    const ZProp *parse = prop(act, "parse");
    const ZProp *hk = prop(act, "kind");
    LLVMValueRef f[] = {
        cstr(md, act->name),
        ci32(g, kind),
        ci32(g, act->params.len),
        names_array(md, &act->params, "pnames"),
        types_array(md, &act->params),
        ci32(g, nres),
        names_array(md, &act->results, "rnames"),
        types_array(md, &act->results),
        prop_str(md, act, "system"),
        prop_str(md, act, "user"),
        ci32(g, name_code(parse ? parse->value : NULL, parse_names, ZGRT_PARSE_TEXT)),
        ci32(g, retries),
        prop_str(md, act, "model"),
        LLVMConstReal(g->t_dbl, temp),
        ci32(g, has_temp),
        ci32(g, prop(act, "fallback") && nres > 0 ? 1 : 0),
        fallback,
        ci32(g, name_code(hk ? hk->value : NULL, human_names, ZGRT_HUMAN_CONFIRM)),
        prop_str(md, act, "prompt"),
        fnp,
    };
    return cstruct(g, ZB_TY_ACTION, f, sizeof f / sizeof f[0]);
}

static LLVMValueRef fn_ref(Mod *md, const char *name, LLVMTypeRef ty)
{
    LLVMValueRef fn = LLVMGetNamedFunction(md->m, name);
    if (!fn) fn = LLVMAddFunction(md->m, name, ty);
    return as_ptr(md, fn);
}

void zb_gen_descriptor(ZbGen *g, LLVMModuleRef m, int only)
{
    Mod md;
    mod_init(&md, g, m);
    const ZProgram *p = g->p;
    int nl = g->nlife;
    LLVMTypeRef pt = g->t_ptr;
    LLVMValueRef *tmp;

    /* lifelines, bodies, evals */
    LLVMValueRef *names = calloc((size_t)nl + 1, sizeof *names);
    LLVMValueRef *bodies = calloc((size_t)nl + 1, sizeof *bodies);
    LLVMValueRef *evals = calloc((size_t)nl + 1, sizeof *evals);
    if (!names || !bodies || !evals) ZU_ICE("out of memory");
    LLVMTypeRef eps[3] = {pt, pt, pt};
    LLVMTypeRef eval_ty = LLVMFunctionType(g->t_void, eps, 3, 0);
    for (int i = 0; i < nl; i++) {
        const char *ln = life_decl(g, i)->name;
        names[i] = cstr(&md, ln);
        bool here = only < 0 || only == i;
        bodies[i] = here ? fn_ref(&md, zu_fmt(g->a, "zg.body.%s", ln), body_type(g)) : cnull(g);
        evals[i] = here && has_eval(g, i) ? fn_ref(&md, zu_fmt(g->a, "zg.eval.%s", ln), eval_ty) : cnull(g);
    }
    LLVMValueRef lifelines_v = const_array(&md, pt, names, nl, "lifelines");
    LLVMValueRef bodies_v = const_array(&md, pt, bodies, nl, "bodies");
    LLVMValueRef evals_v = const_array(&md, pt, evals, nl, "evals");
    free(names);
    free(bodies);
    free(evals);

    /* variables */
    int nv = p->vars.len;
    tmp = calloc((size_t)nv + 1, sizeof *tmp);
    if (!tmp) ZU_ICE("out of memory");
    for (int i = 0; i < nv; i++) {
        const ZDecl *v = ZU_VEC_AT(p->vars, i);
        Val dv;
        bool has = v->expr && lit_val(&md, v->expr, &dv);
        LLVMValueRef def = const_value(&md, ZGRT_UNDEF, ci64(g, 0));
        if (has) {
            LLVMValueRef vf[2] = {dv.tag, dv.pay};
            def = cstruct(g, ZB_TY_VALUE, vf, 2);
        }
        LLVMValueRef f[4] = {cstr(&md, v->name), type_desc(g, v->type), ci32(g, has ? 1 : 0), def};
        tmp[i] = cstruct(g, ZB_TY_VAR, f, 4);
    }
    LLVMValueRef vars_v = const_array(&md, zb_desc_type(g->lc, ZB_TY_VAR), tmp, nv, "vars");
    free(tmp);

    /* enums */
    tmp = calloc((size_t)g->nenums + 1, sizeof *tmp);
    if (!tmp) ZU_ICE("out of memory");
    for (int i = 0; i < g->nenums; i++) {
        const ZDecl *en = g->enums[i];
        LLVMValueRef f[3] = {cstr(&md, en->name), ci32(g, en->members.len),
                             names_array(&md, &en->members, "members")};
        tmp[i] = cstruct(g, ZB_TY_ENUM, f, 3);
    }
    LLVMValueRef enums_v = const_array(&md, zb_desc_type(g->lc, ZB_TY_ENUM), tmp, g->nenums, "enums");
    free(tmp);

    /* channels and tags */
    int nc = g->ls->namespaces.len;
    tmp = calloc((size_t)nc + 1, sizeof *tmp);
    if (!tmp) ZU_ICE("out of memory");
    for (int i = 0; i < nc; i++) tmp[i] = cstr(&md, ZU_VEC_AT(g->ls->namespaces, i));
    LLVMValueRef chans_v = const_array(&md, pt, tmp, nc, "chans");
    free(tmp);
    int nt = p->n_controls;
    if (g->gt)
        for (int i = 0; i < g->gt->guards.len; i++) {
            const ZGuardInfo *gi = ZU_VEC_AT(g->gt->guards, i);
            if (gi->construct && gi->construct->construct > nt) nt = gi->construct->construct;
        }
    tmp = calloc((size_t)nt + 1, sizeof *tmp);
    if (!tmp) ZU_ICE("out of memory");
    for (int i = 0; i < nt; i++) tmp[i] = NULL;
    if (g->gt)
        for (int i = 0; i < g->gt->guards.len; i++) {
            const ZGuardInfo *gi = ZU_VEC_AT(g->gt->guards, i);
            int k = gi->construct ? gi->construct->construct - 1 : -1;
            if (k >= 0 && k < nt && gi->tag) tmp[k] = cstr(&md, gi->tag);
        }
    for (int i = 0; i < nt; i++)
        if (!tmp[i]) tmp[i] = cstr(&md, "?");
    LLVMValueRef tags_v = const_array(&md, pt, tmp, nt, "tags");
    free(tmp);

    /* locations */
    tmp = calloc((size_t)g->nlocs + 1, sizeof *tmp);
    if (!tmp) ZU_ICE("out of memory");
    for (int i = 0; i < g->nlocs; i++) {
        LLVMValueRef f[2] = {ci32(g, g->locs[i].line), ci32(g, g->locs[i].col)};
        tmp[i] = cstruct(g, ZB_TY_LOC, f, 2);
    }
    LLVMValueRef locs_v = const_array(&md, zb_desc_type(g->lc, ZB_TY_LOC), tmp, g->nlocs, "locs");
    free(tmp);

    /* actions */
    tmp = calloc((size_t)g->nacts + 1, sizeof *tmp);
    if (!tmp) ZU_ICE("out of memory");
    for (int i = 0; i < g->nacts; i++) tmp[i] = action_desc(&md, g->acts[i]);
    LLVMValueRef acts_v = const_array(&md, zb_desc_type(g->lc, ZB_TY_ACTION), tmp, g->nacts, "actions");
    free(tmp);

    /* inputs and results */
    const ZDecl *wf = g->wf;
    int ni = wf->params.len;
    tmp = calloc((size_t)ni + 1, sizeof *tmp);
    if (!tmp) ZU_ICE("out of memory");
    for (int i = 0; i < ni; i++) {
        const ZParam *pp = ZU_VEC_AT(wf->params, i);
        LLVMValueRef f[2] = {ci32(g, pp->var ? pp->var->index : -1), ci32(g, pp->owner_index)};
        tmp[i] = cstruct(g, ZB_TY_INPUT, f, 2);
    }
    LLVMValueRef inputs_v = const_array(&md, zb_desc_type(g->lc, ZB_TY_INPUT), tmp, ni, "inputs");
    free(tmp);
    int nr = wf->ret ? wf->ret->items.len : 0;
    tmp = calloc((size_t)nr + 1, sizeof *tmp);
    if (!tmp) ZU_ICE("out of memory");
    for (int i = 0; i < nr; i++) {
        const ZReturnItem *it = ZU_VEC_AT(wf->ret->items, i);
        LLVMValueRef f[2] = {ci32(g, var_of(it->value)), ci32(g, it->at.index)};
        tmp[i] = cstruct(g, ZB_TY_RESULT, f, 2);
    }
    LLVMValueRef results_v = const_array(&md, zb_desc_type(g->lc, ZB_TY_RESULT), tmp, nr, "results");
    free(tmp);

    bool monitor = false;
    if (g->gt)
        for (int i = 0; i < g->gt->guards.len; i++)
            if (((const ZGuardInfo *)ZU_VEC_AT(g->gt->guards, i))->cpl) monitor = true;

    LLVMValueRef f[] = {
        ci32(g, ZGRT_ABI_VERSION),
        ci32(g, nl),
        cstr(&md, p->src && p->src->path ? p->src->path : "?"),
        cstr(&md, wf->name),
        lifelines_v,
        bodies_v,
        evals_v,
        ci32(g, nv),
        ci32(g, g->nenums),
        vars_v,
        enums_v,
        ci32(g, nc),
        ci32(g, nt),
        chans_v,
        tags_v,
        ci32(g, g->nlocs),
        ci32(g, g->nacts),
        locs_v,
        acts_v,
        ci32(g, ni),
        ci32(g, nr),
        inputs_v,
        results_v,
        ci32(g, wf->ret && wf->ret->tuple_ret ? 1 : 0),
        ci32(g, monitor ? 1 : 0),
        ci32(g, g->gt ? g->gt->subs.len : 0),
        ci32(g, 0),
        ci32(g, g->nviews),
        ci32(g, g->nvarviews),
        slot_table(&md, g->views, g->nviews, "views"),
        slot_table(&md, g->varviews, g->nvarviews, "varviews"),
    };
    LLVMValueRef init = cstruct(g, ZB_TY_PROGRAM, f, sizeof f / sizeof f[0]);
    LLVMValueRef prog = LLVMAddGlobal(m, zb_desc_type(g->lc, ZB_TY_PROGRAM), "zg.program");
    LLVMSetInitializer(prog, init);
    LLVMSetGlobalConstant(prog, 1);
    LLVMSetLinkage(prog, LLVMInternalLinkage);

    /* int main(int argc, char **argv) { return zgrt_main(&zg.program, argc, argv); } */
    LLVMTypeRef mps[2] = {g->t_i32, pt};
    LLVMValueRef mainf = LLVMAddFunction(m, "main", LLVMFunctionType(g->t_i32, mps, 2, 0));
    Fn mf;
    fn_begin(&mf, &md, mainf, FN_BODY, -1);
    LLVMValueRef args[3] = {as_ptr(&md, prog), LLVMGetParam(mainf, 0), LLVMGetParam(mainf, 1)};
    LLVMValueRef rc = call_rt(&mf, RT_zgrt_main, args, 3);
    LLVMBuildRet(mf.b, rc);
    fn_end(&mf);
    mod_done(&md);
}

/* ------------------------------------------------------------------ */
/* setup                                                               */
/* ------------------------------------------------------------------ */

ZbGen *zb_gen_new(LLVMContextRef lc, ZArena *a, const ZProgram *p, const ZDecl *wf,
                  const ZLocalSet *ls, const ZGuardTable *gt, ZDiag *d)
{
    ZbGen *g = calloc(1, sizeof *g);
    if (!g) ZU_ICE("out of memory");
    g->lc = lc;
    g->a = a;
    g->p = p;
    g->wf = wf;
    g->ls = ls;
    g->gt = gt;
    g->d = d;
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
    g->acts = calloc((size_t)nd + 1, sizeof *g->acts);
    g->enums = calloc((size_t)nd + 1, sizeof *g->enums);
    if (!g->acts || !g->enums) ZU_ICE("out of memory");
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
    build_slots(g);
    return g;
}

void zb_gen_free(ZbGen *g)
{
    if (!g) return;
    free(g->locs);
    free(g->lochash);
    free(g->acts);
    free(g->enums);
    free(g->views);
    free(g->varviews);
    free(g);
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

void zb_install_diagnostics(LLVMContextRef lc) { LLVMContextSetDiagnosticHandler(lc, diagnostic, NULL); }
