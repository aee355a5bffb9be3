/* zb_internal.h — the backend's internal table of contents (prefix zb_).
 *
 *   codegen.c  ZbGen: local programs, pure actions, monitor evaluation
 *              functions and the zgrt_program descriptor to LLVM IR; the
 *              descriptor struct types; runtime declarations from the
 *              ZGRT_ABI table; module verification
 *   emit.c     ZbTarget: the host target machine, optimisation, objects
 *   link.c     zb_build, zb_emit_llvm (backend.h)
 *
 * Module layout of a build: one module per lifeline L (zg.body.L, its
 * parallel branches zg.par.L.<region>.<k>, zg.eval.L when L evaluates
 * subformulas, and internal copies of the pure actions it uses), then one
 * descriptor module per executable (the `zgrt_program` constant and
 * `main`).  Source locations are numbered across all lifeline modules, so
 * every lifeline module must be generated before the first descriptor.
 */
#ifndef ZGC_ZB_INTERNAL_H
#define ZGC_ZB_INTERNAL_H

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include "backend.h"

/* ---- codegen.c ---------------------------------------------------------- */

typedef struct ZbGen ZbGen;

ZbGen *zb_gen_new(LLVMContextRef lc, ZArena *a, const ZProgram *p, const ZDecl *wf,
                  const ZLocalSet *ls, const ZGuardTable *gt, ZDiag *d);
void zb_gen_free(ZbGen *g);
/* A new empty module in g's context. */
LLVMModuleRef zb_gen_module(ZbGen *g, const char *name);
/* Adds lifeline `life`'s functions to m.  Returns false after reporting a
 * construct the backend cannot compile to g's diagnostics. */
bool zb_gen_lifeline(ZbGen *g, LLVMModuleRef m, int life);
/* Adds the zgrt_program descriptor and `main` to m: with the bodies and
 * evaluation functions of every lifeline (only < 0) or of lifeline `only`
 * (NULL elsewhere). */
void zb_gen_descriptor(ZbGen *g, LLVMModuleRef m, int only);
/* Number of source locations numbered so far. */
int zb_gen_nlocs(const ZbGen *g);
/* LLVMVerifyModule; a failure is an internal compiler error (the module
 * and the verifier's message are printed, then zgc aborts). */
void zb_verify(LLVMModuleRef m);
/* Forwards LLVM's diagnostics to stderr. */
void zb_install_diagnostics(LLVMContextRef lc);

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
    ZB_TY_PROGRAM,
    ZB_TY__COUNT
} ZbDescType;
LLVMTypeRef zb_desc_type(LLVMContextRef lc, ZbDescType k);

/* The runtime functions generated code may call (runtime/zgrt_abi.h). */
int zb_abi_count(void);
const char *zb_abi_name(int i);
const char *zb_abi_signature(int i);
/* The LLVM function type of a signature code ("vpiiipi"); NULL if the
 * code is malformed. */
LLVMTypeRef zb_abi_fn_type(LLVMContextRef lc, const char *sig);
/* Declares (or finds) runtime function `name` in m from the ABI table;
 * NULL if the table has no such function. */
LLVMValueRef zb_abi_declare(LLVMModuleRef m, const char *name);

/* ---- emit.c ------------------------------------------------------------- */

typedef struct ZbTarget ZbTarget;

/* The host target at optimisation level 0..3.  NULL with a malloc'd
 * message in *err on failure. */
ZbTarget *zb_target_new(int opt_level, char **err);
void zb_target_free(ZbTarget *t);
/* The target's data layout (owned by t). */
LLVMTargetDataRef zb_target_layout(ZbTarget *t);
/* Sets m's target triple and data layout. */
void zb_target_prepare(ZbTarget *t, LLVMModuleRef m);
/* Optimises m and writes an object file.  Returns 0, or -1 with a
 * malloc'd message in *err. */
int zb_target_emit(ZbTarget *t, LLVMModuleRef m, const char *path, char **err);

#endif
