/* gen.h — the backend's internal table of contents (prefix zb_).
 *
 *   abi.c         the runtime functions generated code may call, from the
 *                 ZGRT_ABI table of runtime/zgrt_abi.h, as LLVM declarations
 *   types.c       the C structs of zgrt_abi.h as LLVM struct types
 *   gen.c         ZbGen (one per build: the location table, the action and
 *                 enum tables, the monitor plan), module constants, builder
 *                 helpers shared by the files below, module verification
 *   expr.c        expressions, pure actions (zg.pure.f) and plain named
 *                 guards (zg.guard.g)
 *   body.c        local programs: zg.body.L, parallel branches zg.par.L.p.k,
 *                 parts of long statement lists zg.part.L.n; the lifeline
 *                 module (zb_gen_lifeline)
 *   eval.c        monitor evaluation functions (zg.eval.L)
 *   descriptor.c  the zgrt_program descriptor (zg.program) and `main`
 *   emit.c        ZbTarget: the host target machine, optimisation, objects
 *   link.c        zb_build, zb_emit_llvm (backend.h)
 *
 * Calls run one way: link.c uses body.c, descriptor.c and emit.c; body.c
 * uses eval.c and expr.c; eval.c uses expr.c; all of them use gen.c and
 * types.c; gen.c uses abi.c.
 *
 * Module layout of a build: one module per lifeline L (zg.body.L, its
 * parallel branches zg.par.L.<region>.<k>, the parts zg.part.L.<n> of long
 * statement lists, zg.eval.L and its parts zg.eval.L.<k> when L evaluates
 * subformulas, and internal copies of the pure actions and plain named
 * guards it uses, with the guards' memo table), then one
 * descriptor module per executable (the `zgrt_program` constant and
 * `main`).  Source locations are numbered across all lifeline modules, so
 * every lifeline module must be generated before the first descriptor.
 *
 * Symbols.  Generated functions are named with dots (zg.body.L,
 * zg.eval.L, zg.pure.f, zg.guard.g, zg.par.L.p.k, zg.part.L.n,
 * zg.program), which no C identifier
 * can be, so they never clash with the user's zg_<action> functions.
 *
 * Memory: everything the backend allocates (the generator, scratch
 * arrays, hash tables, command lines) lives in the compilation's arena;
 * LLVM objects and messages are disposed explicitly.  Functions shared
 * between the files are zb_; the one-line builder shorthands below (ci32,
 * cnull, …) are static inline.
 */
#ifndef ZGC_BACKEND_GEN_H
#define ZGC_BACKEND_GEN_H

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "backend.h"
#include "zgrt_abi.h"

/* ---- abi.c -------------------------------------------------------------- */

/* The runtime functions, numbered in ZGRT_ABI order: ZB_RT_zgrt_send, … */
#define ZB_ABI_ID(name, sig, ret, params) ZB_RT_##name,
typedef enum { ZGRT_ABI(ZB_ABI_ID) ZB_RT__COUNT } ZbRtId;
#undef ZB_ABI_ID

int zb_abi_count(void);
const char *zb_abi_name(int i);
const char *zb_abi_signature(int i);
/* The LLVM function type of a signature code ("vpiiipi"); NULL if the
 * code is malformed. */
LLVMTypeRef zb_abi_fn_type(LLVMContextRef lc, const char *sig);
/* Declares (or finds) runtime function `name` in m from the ABI table;
 * NULL if the table has no such function. */
LLVMValueRef zb_abi_declare(LLVMModuleRef m, const char *name);

/* ---- types.c ------------------------------------------------------------ */

/* The C structs of zgrt_abi.h as LLVM struct types (named, created once
 * per context).  Pointers are i8*. */
typedef enum {
    ZB_TY_VALUE,
    ZB_TY_TYPE,
    ZB_TY_LOC,
    ZB_TY_ENUM,
    ZB_TY_VAR,
    ZB_TY_ACTION,
    ZB_TY_INPUT,
    ZB_TY_RESULT,
    ZB_TY_SLOT,
    ZB_TY_KEEP,
    ZB_TY_GROUP,
    ZB_TY_PAIR,
    ZB_TY_EDGE,
    ZB_TY_CELL,
    ZB_TY_STORE,
    ZB_TY_PROGRAM,
    ZB_TY__COUNT
} ZbDescType;
LLVMTypeRef zb_desc_type(LLVMContextRef lc, ZbDescType k);

/* ---- gen.c: the generator ----------------------------------------------- */

typedef struct ZbLoc {
    int32_t line, col;
    int32_t file; /* ZSpan.file: 0 the program's file, else an imported one */
} ZbLoc;

typedef struct ZbGen {
    LLVMContextRef lc;
    ZArena *a;
    const ZProgram *p;
    const ZDecl *wf;
    const ZLocalSet *ls;
    const ZGuardTable *gt;
    const ZMonitorPlan *plan; /* the slot tables and eval functions (compiler/plan.c) */
    ZDiag *d;
    int nlife;
    /* the location table, shared by every module of the program */
    ZbLoc *locs;
    int nlocs, caplocs;
    int *lochash; /* open addressing: loc index + 1, 0 = empty */
    int lochcap;
    /* non-pure actions: their position in zgrt_program.actions */
    const ZDecl **acts;
    int nacts;
    const ZDecl **enums;
    int nenums;
    /* named guards, by declaration index: how often the program refers
     * to each (in guards and in the workflow's conditions) and the nodes
     * of its own formula (expr.c decides inline or call with them) */
    int nguards;
    int *guard_uses, *guard_nodes;
    int nparts; /* zg.part.L.n functions so far (body.c) */
    bool failed;
    /* the program's fingerprint and its parts (link.c), or NULL; while
     * for_hash, the descriptor leaves out what does not change the program
     * (its source path and locations) and the fingerprint itself */
    const char *fingerprint, *fingerprint_parts;
    bool for_hash;
    /* types */
    LLVMTypeRef t_void, t_i1, t_i8, t_i32, t_i64, t_dbl, t_ptr, t_val;
} ZbGen;

/* A generator for one build of compilation c (run up to ZC_PLAN), in its
 * arena (freed with it). */
ZbGen *zb_gen_new(LLVMContextRef lc, ZCompilation *c);
/* A new empty module in g's context. */
LLVMModuleRef zb_gen_module(ZbGen *g, const char *name);
/* Number of source locations numbered so far. */
int zb_gen_nlocs(const ZbGen *g);
/* The index of a source location in the program's location table. */
int zb_loc(ZbGen *g, ZSpan s);
/* LLVMVerifyModule; a failure is an internal compiler error (the module
 * and the verifier's message are printed, then zgc aborts). */
void zb_verify(LLVMModuleRef m);
/* Forwards LLVM's diagnostics to stderr. */
void zb_install_diagnostics(LLVMContextRef lc);
/* A copy of the n elements of `size` bytes at old in a new arena array of
 * cap elements (the rest zeroed). */
void *zb_grow(ZArena *a, const void *old, int n, int cap, size_t size);

static inline LLVMValueRef ci32(ZbGen *g, int64_t v)
{
    return LLVMConstInt(g->t_i32, (unsigned long long)v, 1);
}
static inline LLVMValueRef ci64(ZbGen *g, int64_t v)
{
    return LLVMConstInt(g->t_i64, (unsigned long long)v, 1);
}
static inline LLVMValueRef ci8(ZbGen *g, int64_t v)
{
    return LLVMConstInt(g->t_i8, (unsigned long long)v, 0);
}
static inline LLVMValueRef cnull(ZbGen *g) { return LLVMConstPointerNull(g->t_ptr); }
static inline const ZDecl *life_decl(ZbGen *g, int i) { return ZU_VEC_AT(g->p->lifelines, i); }

/* The zgrt_tag of a value of type t. */
int zb_tag_of_type(const ZType *t);
/* The store index of a variable name, or -1. */
int zb_var_of(const ZExpr *e);
/* void (i8* ctx): bodies and parallel branches. */
LLVMTypeRef zb_body_type(ZbGen *g);

/* ---- gen.c: module constants -------------------------------------------- */

/* A string cache (content -> global), per module. */
typedef struct ZbStrEnt {
    const char *s;
    size_t n;
    LLVMValueRef v;
} ZbStrEnt;
typedef struct ZbStrMap {
    ZbStrEnt *ents;
    size_t cap, len;
} ZbStrMap;

/* One module being generated. */
typedef struct ZbMod {
    ZbGen *g;
    LLVMModuleRef m;
    LLVMValueRef rt[ZB_RT__COUNT];
    LLVMTypeRef rtty[ZB_RT__COUNT];
    ZbStrMap cstrs, zstrs;
    int nglobals;
    /* named guards declared (zb_get_guard) whose bodies are still to be
     * generated (zb_mod_finish), with their slots in the memo table */
    const ZDecl **guards;
    LLVMValueRef *guard_fns;
    int *guard_slots;
    int nguards, capguards;
    int nslots;                 /* guard functions declared by this ZbMod */
    LLVMValueRef memo, gen_tls; /* i64* to the memo table (a placeholder until
                                   zb_mod_finish); the generation counter */
} ZbMod;

/* A value: zgrt_value's tag and payload as two i64. */
typedef struct ZbVal {
    LLVMValueRef tag, pay;
} ZbVal;

void zb_mod_init(ZbMod *md, ZbGen *g, LLVMModuleRef m);
static inline LLVMValueRef as_ptr(ZbMod *md, LLVMValueRef c)
{
    return LLVMConstBitCast(c, md->g->t_ptr);
}
/* A NUL-terminated C string: i8*. */
LLVMValueRef zb_cstr(ZbMod *md, const char *s);
/* A private constant array; i8* to its first element, NULL when n == 0. */
LLVMValueRef zb_const_array(ZbMod *md, LLVMTypeRef elem, LLVMValueRef *vals, int n,
                            const char *prefix);
/* A constant zgrt_value. */
LLVMValueRef zb_const_value(ZbMod *md, int64_t tag, LLVMValueRef pay);
/* The value of a literal, a constant or an enum member; false if e is not
 * constant. */
bool zb_lit_val(ZbMod *md, const ZExpr *e, ZbVal *out);

/* ---- gen.c: functions ---------------------------------------------------- */

typedef enum { ZB_FN_BODY, ZB_FN_PURE, ZB_FN_EVAL, ZB_FN_GUARD } ZbFnMode;

typedef struct ZbTerm {
    const ZExpr *e;
    LLVMValueRef ptr; /* @B.x with B != L: the zgrt_varview pointer */
} ZbTerm;

/* One function being generated. */
typedef struct ZbFn {
    ZbMod *md;
    ZbGen *g;
    LLVMBuilderRef b;
    LLVMBuilderRef ab; /* allocas, at the end of the entry block */
    LLVMValueRef fn, ctx, store, args, outs, val, old;
    LLVMBasicBlockRef entry, start;
    ZbFnMode mode;
    int life;
    int inline_left;  /* nodes of named guards it may still inline (expr.c) */
    LLVMValueRef gen; /* i64: the generation of the guard evaluation under way */
    ZbTerm *terms;
    int nterms, capterms;
} ZbFn;

void zb_fn_begin(ZbFn *f, ZbMod *md, LLVMValueRef fn, ZbFnMode mode, int life);
void zb_fn_end(ZbFn *f);
/* f->store = zgrt_store(ctx): bodies, branches and eval functions. */
void zb_fn_load_store(ZbFn *f);
LLVMBasicBlockRef zb_block(ZbFn *f, const char *name);
/* Marks fn `noinline`: generated parts that LLVM must keep apart. */
void zb_set_noinline(ZbGen *g, LLVMValueRef fn);
LLVMValueRef zb_call_rt(ZbFn *f, ZbRtId id, LLVMValueRef *args, unsigned n);
/* i8* p + off */
LLVMValueRef zb_byte_at(ZbFn *f, LLVMValueRef p, int64_t off);
LLVMValueRef zb_load_at(ZbFn *f, LLVMTypeRef t, LLVMValueRef p, int64_t off);
void zb_store_at(ZbFn *f, LLVMValueRef v, LLVMValueRef p, int64_t off);
/* An uninitialised stack array of n 16-byte values (or 4-byte ints): i8*. */
LLVMValueRef zb_stack_array(ZbFn *f, LLVMTypeRef elem, int n);
void zb_store_val(ZbFn *f, LLVMValueRef p, int64_t off, ZbVal v);
/* A value array holding vs: a constant global when every value is
 * constant, a stack array otherwise. */
LLVMValueRef zb_value_array(ZbFn *f, const ZbVal *vs, int n);
LLVMValueRef zb_int_array(ZbFn *f, const int32_t *xs, int n);

/* ---- expr.c ------------------------------------------------------------- */

ZbVal zb_expr(ZbFn *f, const ZExpr *e);
/* A boolean expression as i1. */
LLVMValueRef zb_cond_i1(ZbFn *f, const ZExpr *e);
/* The undefined value (after a reported error, or a placeholder). */
ZbVal zb_error_val(ZbFn *f);
/* The varview pointer read for @B.x term e in the current atom, or NULL. */
LLVMValueRef zb_term_ptr(ZbFn *f, const ZExpr *e);
/* `void zg.pure.<name>(i8* ctx, i8* args, i8* outs)`, internal to the
 * module, compiled on first use. */
LLVMValueRef zb_get_pure(ZbMod *md, const ZDecl *act);
/* A function inlines the formulas of named guards used once in the
 * program up to this many expression nodes in all, and calls the others
 * (zb_get_guard). */
#define ZB_GUARD_INLINE_NODES 200
/* `i1 zg.guard.<name>(i8* ctx, i8* store, i64 gen)`: plain named guard
 * `g` on a store, internal to the module, never inlined; declared on
 * first use, its body is generated by zb_mod_finish. */
LLVMValueRef zb_get_guard(ZbMod *md, const ZDecl *g);
/* Whether e refers to a named guard (not looking through them). */
bool zb_uses_guard(const ZExpr *e);
/* Starts an evaluation that may call guard functions: f->gen becomes a
 * new generation (the memo of every guard function is stale). */
void zb_guard_generation(ZbFn *f);
/* Generates the bodies of the guards declared in md so far (and of those
 * they use). */
void zb_mod_finish(ZbMod *md);

/* ---- body.c ------------------------------------------------------------- */

/* Statements per part of a long statement list (body.c). */
#define ZB_BODY_PART 200
/* Adds lifeline `life`'s functions to m: its body and branches and the
 * pure actions they use; and its eval function (zb_gen_eval) to em, which
 * is m or a module of its own (zb_target_emit's `guards`).  Returns false
 * after reporting a construct the backend cannot compile to g's
 * diagnostics. */
bool zb_gen_lifeline(ZbGen *g, LLVMModuleRef m, LLVMModuleRef em, int life);

/* ---- eval.c ------------------------------------------------------------- */

/* Adds zg.eval.L to md when the monitor plan gives lifeline `life` an
 * eval function; with more than ZB_EVAL_CHUNK subformulas it calls parts
 * zg.eval.L.k of that many each. */
#define ZB_EVAL_CHUNK 256
void zb_gen_eval(ZbGen *g, ZbMod *md, int life);
/* Whether lifeline `life` has an eval function. */
bool zb_has_eval(const ZbGen *g, int life);

/* ---- descriptor.c ------------------------------------------------------- */

/* Adds the zgrt_program descriptor and `main` to m: with the bodies and
 * evaluation functions of every lifeline, the role record (every
 * lifeline; a per-lifeline executable is a copy with it patched) and the
 * program's fingerprint (g->fingerprint). */
void zb_gen_descriptor(ZbGen *g, LLVMModuleRef m);

/* ---- emit.c ------------------------------------------------------------- */

typedef struct ZbTarget ZbTarget;

/* The host target at optimisation level 0..3, in a.  NULL with a message
 * in *err (in a) on failure. */
ZbTarget *zb_target_new(ZArena *a, int opt_level, const char **err);
/* Disposes the target's LLVM objects. */
void zb_target_free(ZbTarget *t);
/* The target's data layout (owned by t). */
LLVMTargetDataRef zb_target_layout(ZbTarget *t);
/* Sets m's target triple and data layout. */
void zb_target_prepare(ZbTarget *t, LLVMModuleRef m);
/* Optimises m and writes an object file.  `guards`: m holds only the
 * evaluation of guards (zb_gen_eval), which is optimised even at level 0.
 * Returns 0, or -1 with a message in *err (in the target's arena). */
int zb_target_emit(ZbTarget *t, LLVMModuleRef m, const char *path, bool guards, const char **err);

#endif
