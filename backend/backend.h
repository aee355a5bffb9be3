/* backend.h — the native backend (prefix zb_): a compiled workflow (local
 * programs, guard tables) to LLVM IR, objects and executables.
 *
 *   codegen   abi.c, types.c, gen.c, expr.c, body.c, eval.c, descriptor.c:
 *             one module per lifeline (its body, parallel branches, monitor
 *             evaluation function and the pure actions it uses) and one
 *             module per executable (the zgrt_program descriptor and main),
 *             each verified with LLVMVerifyModule; the monitor's slot
 *             tables and eval functions follow the monitor plan
 *             (compiler/plan.c, zm_plan)
 *   emit.c    target machine setup, object files (LLVMTargetMachineEmitToFile)
 *   link.c    linking objects, libzgrt and the user's C files with the
 *             system C compiler; lifeline modules are optimised and
 *             emitted by `jobs` threads (one LLVM context each), the
 *             executables linked in parallel too
 *   load.c    zb_load: the zgc command's way to the above, which it does
 *             not link: they are the module zgc-backend.so (with libLLVM),
 *             loaded with dlopen by the commands that generate code only
 * (backend/gen.h is the internal table of contents.)  The backend builds
 * on compiler/ and includes nothing of the runtime but zgrt_abi.h (and
 * zgrt.h through it), the contract of the code it generates.
 *
 * Errors: a failure the user can act on (a construct the backend cannot
 * compile, an unwritable or uncreatable directory, a missing runtime
 * library or C file, a failed C compiler or link) is a diagnostic on the
 * compilation's ZDiag, and the call returns 1 (the driver exits 1).  An
 * extern function the user's C files do not define is no build error: it
 * is referenced weakly and the runtime reports it when the action runs.
 * A module that fails LLVMVerifyModule is a bug in zgc: ZU_ICE.  Out of
 * memory is zu_oom ("zgc: error: out of memory", exit 1).  Memory: all in
 * the compilation's arena.
 */
#ifndef ZGC_BACKEND_H
#define ZGC_BACKEND_H

#include "zgc.h"

/* The function a planner action's descriptor names (zgrt_action.fn): the
 * planner library's entry (planner/planner.h: zpl_act). */
#define ZB_PLANNER_ENTRY "zpl_act"

/* Which executables zb_build links (bits; 0 means both). */
enum { ZB_LINK_WHOLE = 1, ZB_LINK_LIFELINES = 2 };

typedef struct ZBuildOptions {
    const char *out_dir;        /* where the executables go (created if missing) */
    const char *const *c_files; /* user C files with zg_<action> functions */
    int n_c_files;
    const char *cc;    /* C compiler used to link (default: $CC or "cc") */
    int opt_level;     /* 0..3 (zgc build and run: 0) */
    bool keep_objects; /* keep the .o files in out_dir */
    bool verbose;      /* print the commands run */
    /* keep the debugging information of the runtime library (and of the
     * user's C files: compiled with -g) in the executables; without it the
     * link drops it (-Wl,--strip-debug: a third less time a link, half
     * the size), unless zgc was built with the sanitizers (their reports
     * name lines) */
    bool debug_info;
    /* link even when an extern pure or effect action has no C function
     * (zg_NAME) in the C files: the action fails when it runs.  Without
     * it such a build is refused, naming every missing function. */
    bool allow_unlinked;
    int *unlinked;     /* when not NULL: the number of actions linked so */
    char *fingerprint; /* when not NULL: gets the program's fingerprint (65 bytes:
                          64 hex digits, zgrt_abi.h: zgrt_program.fingerprint) */
    int link;          /* ZB_LINK_* bits: the executables to link (0: all) */
    int jobs;          /* threads emitting objects and linking (<= 0: the cores) */
    /* When not NULL: called once the fingerprint is known, before any
     * object is emitted, with it and 16 hex digits that identify what the
     * executables hold besides it (the source path and location table of
     * run-time errors); when it returns true the build stops there,
     * successfully, with *cached set (the caller has the build already). */
    bool (*have)(void *user, const char *fingerprint, const char *locations);
    void *user;
    bool *cached;
} ZBuildOptions;

/* Both take a compilation run up to ZC_PLAN (compiler/pipeline.c): the
 * local programs, the guard tables and the monitor plan, in its arena;
 * errors go to its diagnostics. */

/* Builds out_dir/<workflow> (every lifeline in one process) and
 * out_dir/<workflow>.<Lifeline> (one per lifeline).  Errors (a failed
 * link, an unwritable directory, …: see above) are reported as
 * diagnostics.  Returns 0 on success, 1 on error. */
int zb_build(ZCompilation *c, const ZBuildOptions *o);

/* Prints the LLVM IR of the all-in-one executable (one module). */
int zb_emit_llvm(FILE *out, ZCompilation *c);

/* The program as one module in context lc (every lifeline and the
 * descriptor `zg.program`, no `main`), verified: what the planner library
 * runs in this process (planner/); NULL after a diagnostic. */
typedef struct LLVMOpaqueContext *LLVMContextRef; /* llvm-c/Types.h */
typedef struct LLVMOpaqueModule *LLVMModuleRef;
LLVMModuleRef zb_gen_whole(LLVMContextRef lc, ZCompilation *c);

/* The path of the runtime library executables are linked with. */
const char *zb_runtime_lib(void);

/* ---- the backend module (load.c) ------------------------------------------ */

/* What the module zgc-backend.so exports, as the data symbol `zb_module`:
 * the build it belongs to (ZGC_BUILD_ID, generated/zgc_build_id.h) and
 * the functions above. */
typedef struct ZbModule {
    const char *build_id;
    int (*build)(ZCompilation *c, const ZBuildOptions *o);
    int (*emit_llvm)(FILE *out, ZCompilation *c);
    const char *(*runtime_lib)(void);
} ZbModule;

/* The backend module, loaded on first use: $ZGC_BACKEND, else
 * zgc-backend.so beside the running zgc, else ../lib/zgc/zgc-backend.so
 * from it.  NULL with the reason in err (a missing module, or a module of
 * another build of zgc). */
const ZbModule *zb_load(char *err, size_t errlen);
#endif
