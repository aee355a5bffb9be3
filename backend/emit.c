/* emit.c — the host target machine, optimisation and object files.
 *
 * One ZbTarget per build: the native target for the default triple, a
 * generic CPU (executables of one workflow may run on different machines of
 * the same architecture), position-independent code.  Modules are optimised
 * with the new pass manager (LLVMRunPasses, "default<On>") and written with
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
    LLVMDisposeMessage(t->triple);
}

LLVMTargetDataRef zb_target_layout(ZbTarget *t) { return t->layout; }

void zb_target_prepare(ZbTarget *t, LLVMModuleRef m)
{
    LLVMSetTarget(m, t->triple);
    LLVMSetModuleDataLayout(m, t->layout);
}

static int optimise(ZbTarget *t, LLVMModuleRef m, const char **err)
{
    if (t->opt_level == 0) return 0;
    char passes[32];
    snprintf(passes, sizeof passes, "default<O%d>", t->opt_level);
    LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
    LLVMErrorRef e = LLVMRunPasses(m, passes, t->tm, opts);
    LLVMDisposePassBuilderOptions(opts);
    if (e) {
        char *msg = LLVMGetErrorMessage(e);
        *err = dup_message(t->a, msg);
        LLVMDisposeErrorMessage(msg);
        return -1;
    }
    return 0;
}

int zb_target_emit(ZbTarget *t, LLVMModuleRef m, const char *path, const char **err)
{
    *err = NULL;
    zb_target_prepare(t, m);
    if (optimise(t, m, err)) return -1;
    char *msg = NULL;
    /* the C API takes a non-const file name */
    char *file = zu_strdup(t->a, path);
    LLVMBool failed = LLVMTargetMachineEmitToFile(t->tm, m, file, LLVMObjectFile, &msg);
    if (failed) {
        *err = dup_message(t->a, msg);
        LLVMDisposeMessage(msg);
        return -1;
    }
    LLVMDisposeMessage(msg);
    return 0;
}
