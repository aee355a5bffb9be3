/* emit.c — the host target machine, optimisation and object files.
 *
 * One ZbTarget per build: the native target for the default triple, a
 * generic CPU (executables of one workflow may run on different machines of
 * the same architecture), position-independent code.  Modules are optimised
 * with the new pass manager (LLVMRunPasses, "default<On>"; at level 0 only
 * a module of guards' evaluation, GUARD_PASSES) and written with
 * LLVMTargetMachineEmitToFile.  Every LLVM object and message is disposed;
 * the target and its error messages live in the compilation's arena.
 */
#include "gen.h"

#include <pthread.h>

#include <llvm-c/Error.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>

struct ZbTarget {
    ZArena *a;
    LLVMTargetMachineRef tm;
    LLVMTargetMachineRef tm_guards; /* level 0: for guards' modules, made when needed */
    LLVMTargetRef target;
    LLVMTargetDataRef layout;
    char *triple;
    int opt_level;
};

static const char *dup_message(ZArena *a, const char *s)
{
    return zu_strdup(a, s ? s : "unknown error");
}

/* LLVM's target registry is filled once per process, before the threads
 * that emit objects (link.c) make their own target machines. */
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static bool init_failed;
static void init_native(void)
{
    init_failed = LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter();
}

ZbTarget *zb_target_new(ZArena *a, int opt_level, const char **err)
{
    *err = NULL;
    pthread_once(&init_once, init_native);
    if (init_failed) {
        *err = dup_message(a, "the native LLVM target is not available");
        return NULL;
    }
    ZbTarget *t = zu_alloc(a, sizeof *t);
    t->a = a;
    t->opt_level = opt_level < 0 ? 0 : opt_level > 3 ? 3 : opt_level;
    t->triple = LLVMGetDefaultTargetTriple();
    LLVMTargetRef target;
    char *msg = NULL;
    if (LLVMGetTargetFromTriple(t->triple, &target, &msg)) {
        *err = dup_message(a, msg);
        LLVMDisposeMessage(msg);
        zb_target_free(t);
        return NULL;
    }
    LLVMDisposeMessage(msg);
    t->target = target;
    static const LLVMCodeGenOptLevel levels[] = {LLVMCodeGenLevelNone, LLVMCodeGenLevelLess,
                                                 LLVMCodeGenLevelDefault,
                                                 LLVMCodeGenLevelAggressive};
    t->tm = LLVMCreateTargetMachine(target, t->triple, "generic", "", levels[t->opt_level],
                                    LLVMRelocPIC, LLVMCodeModelDefault);
    if (!t->tm) {
        *err = dup_message(a, "cannot create a target machine for the host");
        zb_target_free(t);
        return NULL;
    }
    t->layout = LLVMCreateTargetDataLayout(t->tm);
    return t;
}

void zb_target_free(ZbTarget *t)
{
    if (!t) return;
    if (t->layout) LLVMDisposeTargetData(t->layout);
    if (t->tm) LLVMDisposeTargetMachine(t->tm);
    if (t->tm_guards) LLVMDisposeTargetMachine(t->tm_guards);
    LLVMDisposeMessage(t->triple);
}

LLVMTargetDataRef zb_target_layout(ZbTarget *t) { return t->layout; }

void zb_target_prepare(ZbTarget *t, LLVMModuleRef m)
{
    LLVMSetTarget(m, t->triple);
    LLVMSetModuleDataLayout(m, t->layout);
}

/* Level 0 leaves a module unoptimised and generates its code the fast
 * way (every value goes to the stack and back), except a module of
 * guards' evaluation (zb_gen_lifeline's em): its functions run at every
 * event of a monitored lifeline, and compiled that way they cost two to
 * three times as much per event as optimised (bench/README.md, "CPL
 * monitor"), so it gets GUARD_PASSES (GVN and DSE matter most: the
 * evaluation reads and writes its subformulas' values through pointers)
 * and level 1's code generation, and costs about what level 2 does. */
#define GUARD_PASSES "function(sroa,early-cse,instcombine,simplifycfg,gvn,dse,simplifycfg)"

static int optimise(ZbTarget *t, LLVMTargetMachineRef tm, LLVMModuleRef m, bool guards,
                    const char **err)
{
    char passes[32];
    const char *pipeline = passes;
    if (t->opt_level > 0)
        snprintf(passes, sizeof passes, "default<O%d>", t->opt_level);
    else if (guards)
        pipeline = GUARD_PASSES;
    else
        return 0;
    LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
    LLVMErrorRef e = LLVMRunPasses(m, pipeline, tm, opts);
    LLVMDisposePassBuilderOptions(opts);
    if (e) {
        char *msg = LLVMGetErrorMessage(e);
        *err = dup_message(t->a, msg);
        LLVMDisposeErrorMessage(msg);
        return -1;
    }
    return 0;
}

int zb_target_emit(ZbTarget *t, LLVMModuleRef m, const char *path, bool guards, const char **err)
{
    *err = NULL;
    zb_target_prepare(t, m);
    LLVMTargetMachineRef tm = t->tm;
    if (guards && t->opt_level == 0) {
        if (!t->tm_guards)
            t->tm_guards =
                LLVMCreateTargetMachine(t->target, t->triple, "generic", "", LLVMCodeGenLevelLess,
                                        LLVMRelocPIC, LLVMCodeModelDefault);
        if (!t->tm_guards) {
            *err = dup_message(t->a, "cannot create a target machine for the host");
            return -1;
        }
        tm = t->tm_guards;
    }
    if (optimise(t, tm, m, guards, err)) return -1;
    char *msg = NULL;
    /* the C API takes a non-const file name */
    char *file = zu_strdup(t->a, path);
    LLVMBool failed = LLVMTargetMachineEmitToFile(tm, m, file, LLVMObjectFile, &msg);
    if (failed) {
        *err = dup_message(t->a, msg);
        LLVMDisposeMessage(msg);
        return -1;
    }
    LLVMDisposeMessage(msg);
    return 0;
}
