/* backend.h — the native backend (prefix zb_).
 *
 *   codegen.c  local programs, guards and the program descriptor to LLVM IR
 *              (one module per lifeline + one module with the descriptor and
 *              main per executable), verified with LLVMVerifyModule
 *   emit.c     target machine setup, object files (LLVMTargetMachineEmitToFile)
 *   link.c     linking objects, libzgrt and the user's C files with the
 *              system C compiler
 */
#ifndef ZGC_BACKEND_H
#define ZGC_BACKEND_H

#include "zgc.h"

typedef struct ZBuildOptions {
    const char *out_dir;        /* where the executables go (created if missing) */
    const char *const *c_files; /* user C files with zg_<action> functions */
    int n_c_files;
    const char *cc;             /* C compiler used to link (default: $CC or "cc") */
    int opt_level;              /* 0..3 (default 2) */
    bool keep_objects;          /* keep the .o files in out_dir */
    bool verbose;               /* print the commands run */
} ZBuildOptions;

/* Builds out_dir/<workflow> (every lifeline in one process) and
 * out_dir/<workflow>.<Lifeline> (one per lifeline).  Errors (a failed
 * link, an unwritable directory, a missing extern function) are reported
 * to d.  Returns 0 on success, 1 on error. */
int zb_build(ZArena *a, const ZProgram *p, const ZDecl *wf, const ZLocalSet *ls,
             const ZGuardTable *gt, const ZBuildOptions *o, ZDiag *d);

/* Prints the LLVM IR of the all-in-one executable (one module). */
int zb_emit_llvm(FILE *out, ZArena *a, const ZProgram *p, const ZDecl *wf, const ZLocalSet *ls,
                 const ZGuardTable *gt, ZDiag *d);
#endif
