/* link.c — zb_build and zb_emit_llvm: codegen, objects, executables.
 *
 * zb_build writes, into a temporary directory (or out_dir with
 * keep_objects):
 *   <wf>.body.<L>.o    one per lifeline (body, branches, pure actions)
 *   <wf>.eval.<L>.o    lifeline L's evaluation of guards, when it has one
 *                      (optimised at every level: emit.c)
 *   <wf>.prog.o        descriptor + main
 *   <wf>.user<k>.o     the user's C files, compiled once each
 * and links out_dir/<wf> (every lifeline) with the system C compiler,
 * libzgrt, jansson, libcrypto (the handshake of lifeline processes),
 * SQLite (the run store of durable runs), NATS, pthreads and libm; with
 * gold when the default `cc` links with it (found when zgc is built:
 * ZGC_FAST_LD; ld.bfd takes three times as long).  Each per-lifeline
 * executable out_dir/<wf>.<L> is a copy of out_dir/<wf> whose role record
 * (zgrt_abi.h) names L: one link for the program, not one per lifeline
 * (a link costs about 0.1 s, most of a small build).  Commands run
 * through fork/execvp (no shell); their output is shown when they fail.
 *
 * Parallel.  LLVM IR is generated in one context, in order (the lifeline
 * modules number the source locations the descriptors list), and each
 * module is kept as bitcode; objects are then optimised and emitted by
 * `jobs` threads, each with its own LLVM context, target machine and
 * arena, which also run the C compiler on the user's files; the
 * executable is linked when they are done.  An object's
 * bytes do not depend on the thread that made it.  Errors of a job are
 * kept with it and reported, in order, after all have ended.
 *
 * Only what is asked is written (ZBuildOptions.link): `zgc run` runs the
 * all-in-one executable or, with --processes, the per-lifeline ones.
 *
 * Fingerprint.  Every descriptor carries the program's fingerprint
 * (zgrt_abi.h), which a durable run checks before it resumes and which
 * lifeline processes compare when they connect (runtime/net/hello.c), so
 * a lifeline built from another program is refused: SHA-256
 * (libcrypto) of each lifeline's module as LLVM IR before optimisation
 * (so -O levels do not change it), of the descriptor without its source
 * path and locations, and of each C file's contents; then of those parts.
 *
 * Extern functions: the descriptor refers to zg_<action> weakly, so a
 * program whose C files do not define one still links, and the runtime
 * reports the missing function when the action runs.
 *
 * Where the runtime is: ZGC_RUNTIME_LIB / ZGC_RUNTIME_INCLUDE from the build
 * (backend/CMakeLists.txt), overridable by the environment variables of
 * the same names.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pthread.h>

#include <llvm-c/BitReader.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Object.h>
#include <openssl/evp.h>

#include "gen.h"
#include "zgc_build_id.h"

#ifndef ZGC_PLANNER_LIB
#define ZGC_PLANNER_LIB "libzgplanner.so"
#endif
#ifndef ZGC_RUNTIME_LIB
#define ZGC_RUNTIME_LIB "libzgrt.a"
#endif
#ifndef ZGC_RUNTIME_INCLUDE
#define ZGC_RUNTIME_INCLUDE "."
#endif
#ifndef ZGC_JANSSON_LIBS
#define ZGC_JANSSON_LIBS "-ljansson"
#endif
#ifndef ZGC_CRYPTO_LIBS
#define ZGC_CRYPTO_LIBS "-lcrypto"
#endif
#ifndef ZGC_RUNTIME_LDFLAGS
#define ZGC_RUNTIME_LDFLAGS ""
#endif
#ifndef ZGC_FAST_LD
#define ZGC_FAST_LD ""
#endif
#ifndef ZGC_KEEP_DEBUG
#define ZGC_KEEP_DEBUG 0
#endif

static const ZSpan no_span = {0};

/* ------------------------------------------------------------------ */
/* argument vectors                                                    */
/* ------------------------------------------------------------------ */

/* A command line in the arena, NULL-terminated for execvp. */
typedef struct Argv {
    ZArena *a;
    char **v;
    int n, cap;
} Argv;

static void argv_push(Argv *a, const char *s)
{
    if (a->n + 2 > a->cap) {
        int cap = a->cap ? a->cap * 2 : 32;
        a->v = zb_grow(a->a, a->v, a->n, cap, sizeof *a->v);
        a->cap = cap;
    }
    a->v[a->n] = zu_strdup(a->a, s);
    a->n++;
    a->v[a->n] = NULL;
}

/* Pushes the words of s split at `sep` characters (empty words skipped). */
static void argv_split(Argv *a, const char *s, const char *seps)
{
    const char *p = s;
    while (*p) {
        size_t k = strcspn(p, seps);
        if (k > 0) argv_push(a, zu_strndup(a->a, p, k));
        p += k;
        if (*p) p++;
    }
}

/* ------------------------------------------------------------------ */
/* running commands                                                    */
/* ------------------------------------------------------------------ */

/* Runs argv; returns its exit status (-1 when it could not run) and its
 * combined stdout/stderr in *out (malloc'd, NUL-terminated, or NULL).
 * Touches no arena: the build's threads run commands at once. */
static int run(char *const *argv, bool verbose, char **out)
{
    *out = NULL;
    if (verbose) {
        char *line = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&line, &n);
        if (!f) zu_oom();
        for (int i = 0; argv[i]; i++) fprintf(f, "%s%s", i ? " " : "", argv[i]);
        fputc('\n', f);
        if (fclose(f) != 0) zu_oom();
        fputs(line, stderr); /* one write per command */
        free(line);
    }
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0) return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        execvp(argv[0], argv);
        dprintf(2, "cannot run `%s`: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    size_t len = 0, cap = 4096;
    char *text = malloc(cap);
    if (!text) zu_oom();
    for (;;) {
        if (cap - len < 2048) {
            text = realloc(text, cap *= 2);
            if (!text) zu_oom();
        }
        ssize_t k = read(fds[0], text + len, cap - len - 1);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        len += (size_t)k;
    }
    close(fds[0]);
    text[len] = 0;
    *out = text;
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return -1;
    if (WIFEXITED(st)) return WEXITSTATUS(st);
    return -1;
}

/* ------------------------------------------------------------------ */
/* files                                                               */
/* ------------------------------------------------------------------ */

static int mkdir_p(ZArena *a, const char *path)
{
    char *p = zu_strdup(a, path);
    size_t n = strlen(p);
    for (size_t i = 1; i <= n; i++) {
        if (p[i] != '/' && p[i] != 0) continue;
        char c = p[i];
        p[i] = 0;
        if (mkdir(p, 0777) < 0 && errno != EEXIST) return -1;
        p[i] = c;
    }
    struct stat sb;
    if (stat(path, &sb) < 0) return -1;
    if (!S_ISDIR(sb.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* the fingerprint                                                     */
/* ------------------------------------------------------------------ */

/* SHA-256 of n bytes as 64 hex digits; false when libcrypto fails. */
static bool sha256_hex(const void *data, size_t n, char out[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (!EVP_Digest(data, n, md, &len, EVP_sha256(), NULL) || len != 32) return false;
    for (unsigned i = 0; i < len; i++) snprintf(out + 2 * i, 3, "%02x", md[i]);
    return true;
}

/* Appends the part "NAME HEX\n" for n bytes at data. */
static bool fp_part(ZArena *a, char **parts, const char *name, const void *data, size_t n)
{
    char hex[65];
    if (!sha256_hex(data, n, hex)) return false;
    *parts = zu_fmt(a, "%s%s %s\n", *parts ? *parts : "", name, hex);
    return true;
}

/* The part of a module: its IR text, without the source file's name (the
 * same program in another file is the same program). */
static bool fp_module(ZArena *a, char **parts, const char *name, LLVMModuleRef m)
{
    size_t n = 0;
    const char *src = LLVMGetSourceFileName(m, &n);
    char *keep = zu_strndup(a, src ? src : "", n);
    LLVMSetSourceFileName(m, "", 0);
    char *ir = LLVMPrintModuleToString(m);
    LLVMSetSourceFileName(m, keep, strlen(keep));
    bool ok = fp_part(a, parts, name, ir, strlen(ir));
    LLVMDisposeMessage(ir);
    return ok;
}

static const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

/* ------------------------------------------------------------------ */
/* the build                                                           */
/* ------------------------------------------------------------------ */

typedef struct Build {
    ZArena *a;
    const ZProgram *p;
    const ZDecl *wf;
    const ZBuildOptions *o;
    ZDiag *d;
    LLVMContextRef lc;
    ZbTarget *tm;
    ZbGen *gen;
    const char *objdir;
    ZVec made; /* files to remove at the end (char*) */
    const char *cc;
} Build;

/* What the executables hold besides the fingerprint: the source's path
 * and the source location table (line, column and file of every place a
 * run-time error can name), as 16 hex digits of their SHA-256.  Two builds
 * of one fingerprint differ in their messages when this differs (a line
 * added above a statement), so a cache of builds keys on both. */
static bool locations_id(Build *b, char out[17])
{
    const ZbGen *g = b->gen;
    EVP_MD_CTX *x = EVP_MD_CTX_new();
    bool ok = x && EVP_DigestInit_ex(x, EVP_sha256(), NULL);
    const char *src = b->p->src && b->p->src->path ? b->p->src->path : "";
    char line[64];
    int n = snprintf(line, sizeof line, "%zu %d\n", strlen(src), g->nlocs);
    ok = ok && EVP_DigestUpdate(x, line, (size_t)n) && EVP_DigestUpdate(x, src, strlen(src));
    for (int i = 0; ok && i < g->nlocs; i++) {
        const ZbLoc *l = &g->locs[i];
        const ZSource *f = l->file ? zd_source(b->d, (ZSpan){.file = l->file}) : NULL;
        const char *path = f && f->path ? f->path : "";
        n = snprintf(line, sizeof line, "\n%d %d %zu ", l->line, l->col, strlen(path));
        ok = EVP_DigestUpdate(x, line, (size_t)n) && EVP_DigestUpdate(x, path, strlen(path));
    }
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    ok = ok && EVP_DigestFinal_ex(x, md, &len) && len >= 8;
    EVP_MD_CTX_free(x);
    for (unsigned i = 0; ok && i < 8; i++) snprintf(out + 2 * i, 3, "%02x", md[i]);
    return ok;
}

/* ---- the C functions of actions ------------------------------------------ */

/* Adds the names of the symbols the object at path defines (a symbol in a
 * section) to *names; false with a message when it cannot be read. */
static bool defined_symbols(Build *b, const char *path, ZVec *names)
{
    LLVMMemoryBufferRef buf = NULL;
    char *msg = NULL;
    if (LLVMCreateMemoryBufferWithContentsOfFile(path, &buf, &msg)) {
        zd_error(b->d, no_span, "cannot read the object `%s`: %s", path, msg ? msg : "");
        LLVMDisposeMessage(msg);
        return false;
    }
    LLVMBinaryRef bin = LLVMCreateBinary(buf, b->lc, &msg);
    if (!bin) {
        zd_error(b->d, no_span, "cannot read the object `%s`: %s", path, msg ? msg : "");
        LLVMDisposeMessage(msg);
        LLVMDisposeMemoryBuffer(buf);
        return false;
    }
    LLVMSymbolIteratorRef sym = LLVMObjectFileCopySymbolIterator(bin);
    LLVMSectionIteratorRef sect = LLVMObjectFileCopySectionIterator(bin);
    for (; sym && !LLVMObjectFileIsSymbolIteratorAtEnd(bin, sym); LLVMMoveToNextSymbol(sym)) {
        LLVMMoveToContainingSection(sect, sym);
        if (LLVMObjectFileIsSectionIteratorAtEnd(bin, sect)) continue; /* undefined */
        const char *name = LLVMGetSymbolName(sym);
        if (name) zu_vec_push(b->a, names, zu_strndup(b->a, name, strlen(name)));
    }
    if (sect) LLVMDisposeSectionIterator(sect);
    if (sym) LLVMDisposeSymbolIterator(sym);
    LLVMDisposeBinary(bin);
    LLVMDisposeMemoryBuffer(buf);
    return true;
}

/* Every extern pure and effect action the program runs needs its C
 * function zg_NAME in one of the C files (compiled to objs): otherwise
 * the build is refused, every missing function named, unless the caller
 * allows it (ZBuildOptions.allow_unlinked). */
static bool check_linked(Build *b, const char *const *objs, int nobjs)
{
    ZVec have = {0};
    for (int k = 0; k < nobjs; k++)
        if (!defined_symbols(b, objs[k], &have)) return false;
    const ZDecl **missing = zu_alloc(b->a, sizeof *missing * (size_t)(b->gen->nacts + 1));
    int nmissing = 0;
    for (int i = 0; i < b->gen->nacts; i++) {
        const ZDecl *act = b->gen->acts[i];
        if (act->action != ACT_EXTERN_PURE && act->action != ACT_EFFECT) continue;
        char *sym = zu_fmt(b->a, "zg_%s", act->name);
        bool found = false;
        for (int k = 0; k < have.len && !found; k++) found = !strcmp(ZU_VEC_AT(have, k), sym);
        if (!found) missing[nmissing++] = act;
    }
    if (b->o->unlinked) *b->o->unlinked = nmissing;
    if (nmissing == 0 || b->o->allow_unlinked) return true;
    if (nmissing == 1)
        zd_error(b->d, no_span,
                 "%s `%s` has no C function: give zgc a C file that defines zg_%s (or "
                 "--allow-unlinked to build anyway; the action then fails when it runs)",
                 za_action_kind_name(missing[0]->action), missing[0]->name, missing[0]->name);
    else
        zd_error(b->d, no_span,
                 "%d actions have no C function: give zgc a C file that defines them (or "
                 "--allow-unlinked to build anyway; the actions then fail when they run)",
                 nmissing);
    for (int i = 0; i < nmissing; i++)
        zd_note(b->d, missing[i]->span, "%s `%s` needs `int zg_%s(zgrt_call *call)`",
                za_action_kind_name(missing[i]->action), missing[i]->name, missing[i]->name);
    return false;
}

/* ---- jobs: objects, C files and links, run by the build's threads ---- */

typedef enum { JOB_OBJECT, JOB_COMPILE, JOB_LINK } JobKind;

typedef struct Job {
    JobKind kind;
    LLVMMemoryBufferRef bc; /* JOB_OBJECT: the module as bitcode */
    const char *path;       /* JOB_OBJECT: the object to write */
    bool guards;            /* JOB_OBJECT: a module of guards' evaluation */
    char **argv;            /* JOB_COMPILE, JOB_LINK: the command */
    const char *what;       /* the C file, or the executable's name */
    int rc;                 /* 0, or the command's status (-1, 127: not run) */
    char *out;              /* malloc'd: the command's output, or LLVM's error */
} Job;

typedef struct Pool {
    Job *jobs;
    int n;
    int next; /* the next job to take, under mu */
    pthread_mutex_t mu;
    int opt_level;
    bool verbose;
} Pool;

/* Emits one object: the bitcode read into a context of its own (a
 * context keeps every constant it has seen: one per object keeps the
 * memory of a build to the modules in flight), optimised and written. */
static void do_object(Job *j, ZbTarget **tm, ZArena *a, int opt_level)
{
    const char *err = NULL;
    if (!*tm) *tm = zb_target_new(a, opt_level, &err);
    if (!*tm) {
        j->rc = -1;
        j->out = strdup(err ? err : "no native target");
        return;
    }
    LLVMContextRef lc = LLVMContextCreate();
    zb_install_diagnostics(lc);
    LLVMModuleRef m = NULL;
    LLVMBool bad = LLVMParseBitcodeInContext2(lc, j->bc, &m);
    LLVMDisposeMemoryBuffer(j->bc); /* read: no longer needed */
    j->bc = NULL;
    if (bad) {
        j->rc = -1;
        j->out = strdup("cannot read back the module's bitcode");
    } else {
        if (zb_target_emit(*tm, m, j->path, j->guards, &err)) {
            j->rc = -1;
            j->out = strdup(err ? err : "");
        }
        LLVMDisposeModule(m);
    }
    LLVMContextDispose(lc);
}

/* Runs the pool's jobs until none is left; `max` of them at most (-1: no
 * limit). */
static void work(Pool *p, int max)
{
    ZbTarget *tm = NULL;
    ZArena *a = NULL;
    for (; max != 0; max--) {
        pthread_mutex_lock(&p->mu);
        int k = p->next < p->n ? p->next++ : -1;
        pthread_mutex_unlock(&p->mu);
        if (k < 0) break;
        Job *j = &p->jobs[k];
        if (j->kind == JOB_OBJECT) {
            if (!a) a = zu_arena_new();
            do_object(j, &tm, a, p->opt_level);
        } else {
            j->rc = run(j->argv, p->verbose, &j->out);
        }
        if (j->out && !*j->out) {
            free(j->out);
            j->out = NULL;
        }
    }
    zb_target_free(tm);
    if (a) zu_arena_free(a);
}

static void *worker(void *arg)
{
    work(arg, -1);
    return NULL;
}

static int default_jobs(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

/* Runs the jobs on min(jobs, n) threads (the calling one among them). */
static void run_jobs(Build *b, Job *jobs, int n)
{
    Pool p = {.jobs = jobs, .n = n, .opt_level = b->o->opt_level, .verbose = b->o->verbose};
    pthread_mutex_init(&p.mu, NULL);
    int nt = b->o->jobs > 0 ? b->o->jobs : default_jobs();
    if (nt > n) nt = n;
    pthread_t *ts = zu_alloc(b->a, sizeof *ts * (size_t)(nt > 0 ? nt : 1));
    /* The first object of each kind (a lifeline's body, a module of
     * guards: other passes, another code generation level) on this thread
     * alone: LLVM makes its lazily built globals (timers, pass registries)
     * then, before any other thread starts, so no two threads race to
     * build them (ThreadSanitizer saw them do so).  The jobs are
     * independent: moving one changes only the order of their reports. */
    if (nt > 1 && n > 0 && jobs[0].kind == JOB_OBJECT) {
        work(&p, 1);
        for (int k = 1; k < n; k++)
            if (jobs[k].kind == JOB_OBJECT && jobs[k].guards != jobs[0].guards) {
                Job t = jobs[1];
                jobs[1] = jobs[k];
                jobs[k] = t;
                work(&p, 1);
                break;
            }
    }
    int started = 0;
    for (int i = 1; i < nt; i++) {
        if (pthread_create(&ts[i], NULL, worker, &p) != 0) break; /* fewer threads */
        started = i;
    }
    worker(&p);
    for (int i = 1; i <= started; i++) pthread_join(ts[i], NULL);
    pthread_mutex_destroy(&p.mu);
}

/* Reports the failed jobs in order; false when one failed. */
static bool report_jobs(Build *b, Job *jobs, int n)
{
    bool ok = true;
    for (int i = 0; i < n; i++) {
        Job *j = &jobs[i];
        if (j->rc != 0) {
            ok = false;
            if (j->kind == JOB_OBJECT) {
                zd_error(b->d, no_span, "cannot write `%s`: %s", j->path, j->out ? j->out : "");
            } else {
                const char *cc = j->argv[0];
                if (j->kind == JOB_COMPILE && (j->rc == 127 || j->rc < 0))
                    zd_error(b->d, no_span, "cannot run the C compiler `%s` on `%s`", cc, j->what);
                else if (j->kind == JOB_COMPILE)
                    zd_error(b->d, no_span, "the C compiler failed on `%s`:", j->what);
                else if (j->rc == 127 || j->rc < 0)
                    zd_error(b->d, no_span, "cannot run the C compiler `%s` to link `%s`", cc,
                             j->what);
                else
                    zd_error(b->d, no_span, "linking `%s` failed:", j->what);
                if (j->out) fputs(j->out, b->d->out);
            }
        } else if (j->out && j->kind != JOB_OBJECT) {
            fputs(j->out, stderr); /* warnings */
        }
        free(j->out);
        j->out = NULL;
        if (j->bc) LLVMDisposeMemoryBuffer(j->bc);
        j->bc = NULL;
    }
    return ok;
}

/* Verifies m and returns it as bitcode (m is disposed): IR in memory is
 * about ten times its bitcode, and a build keeps every module until its
 * fingerprint is known. */
static LLVMMemoryBufferRef to_bitcode(LLVMModuleRef m)
{
    zb_verify(m);
    LLVMMemoryBufferRef bc = LLVMWriteBitcodeToMemoryBuffer(m);
    LLVMDisposeModule(m);
    if (!bc) zu_oom();
    return bc;
}

/* An object job for bitcode bc (the job owns it). */
static void object_job(Build *b, Job *j, LLVMMemoryBufferRef bc, const char *path)
{
    j->kind = JOB_OBJECT;
    j->bc = bc;
    j->path = path;
    if (!b->o->keep_objects) zu_vec_push(b->a, &b->made, (void *)path);
}

static void cc_words(Build *b, Argv *cmd)
{
    argv_split(cmd, b->cc, " \t");
    if (cmd->n == 0) argv_push(cmd, "cc");
}

static void compile_job(Build *b, Job *j, const char *src, const char *obj)
{
    Argv cmd = {.a = b->a};
    cc_words(b, &cmd);
    argv_push(&cmd, "-c");
    argv_push(&cmd, "-O2");
    if (b->o->debug_info) argv_push(&cmd, "-g");
    argv_push(&cmd, "-fPIC");
    argv_push(&cmd, "-I");
    argv_push(&cmd, env_or("ZGC_RUNTIME_INCLUDE", ZGC_RUNTIME_INCLUDE));
    argv_push(&cmd, src);
    argv_push(&cmd, "-o");
    argv_push(&cmd, obj);
    if (!b->o->keep_objects) zu_vec_push(b->a, &b->made, (void *)obj);
    j->kind = JOB_COMPILE;
    j->argv = cmd.v;
    j->what = src;
}

/* Whether p declares a planner: its executables link the planner library. */
static bool has_planner(const ZProgram *p)
{
    for (int i = 0; i < p->decls.len; i++) {
        const ZDecl *d = p->decls.items[i];
        if (d->kind == D_ACTION && d->action == ACT_PLANNER) return true;
    }
    return false;
}

/* Links objs into `path`, the temporary name of the executable `exe` (the
 * name messages use). */
static void link_job(Build *b, Job *j, const char *path, const char *exe, const char *const *objs,
                     int nobjs)
{
    Argv cmd = {.a = b->a};
    cc_words(b, &cmd);
    /* the faster linker the build found `cc` links with (CMakeLists.txt) */
    if (!strcmp(b->cc, "cc")) argv_split(&cmd, ZGC_FAST_LD, " ");
    argv_push(&cmd, "-o");
    argv_push(&cmd, path);
    for (int i = 0; i < nobjs; i++) argv_push(&cmd, objs[i]);
    if (has_planner(b->gen->p)) {
        /* the planner library (planner/), found where it is at run time
         * too; it reaches the runtime through the functions named here */
        const char *pl = env_or("ZGC_PLANNER_LIB", ZGC_PLANNER_LIB);
        argv_push(&cmd, pl);
        const char *slash = strrchr(pl, '/');
        argv_push(&cmd, zu_fmt(b->a, "-Wl,-rpath,%s",
                               slash ? zu_strndup(b->a, pl, (size_t)(slash - pl)) : "."));
        static const char *const need[] = {"zgrt_abi_symbols", "zgrt_call_plan", "zgrt_call_model",
                                           "zgrt_call_subrun"};
        for (size_t k = 0; k < sizeof need / sizeof need[0]; k++)
            argv_push(&cmd, zu_fmt(b->a, "-Wl,--undefined=%s", need[k]));
    }
    argv_push(&cmd, zb_runtime_lib());
    const char *jl = ZGC_JANSSON_LIBS;
    if (!*jl) jl = "-ljansson";
    argv_split(&cmd, jl, "|");
    const char *cl = ZGC_CRYPTO_LIBS;
    argv_split(&cmd, *cl ? cl : "-lcrypto", "|");
    argv_split(&cmd, ZGC_RUNTIME_LDFLAGS, "| ");
    argv_push(&cmd, "-lsqlite3"); /* the run store (runtime/durable), stores (runtime/store) */
    argv_push(&cmd, "-lnats");    /* the NATS transport (runtime/nats) */
    argv_push(&cmd, "-lpthread");
    argv_push(&cmd, "-lm");
    /* the runtime library's DWARF: half of an executable's bytes */
    if (!b->o->debug_info && !ZGC_KEEP_DEBUG) argv_push(&cmd, "-Wl,--strip-debug");
    j->kind = JOB_LINK;
    j->argv = cmd.v;
    j->what = exe;
}

/* The fingerprint's other parts (the declarations, the C files) after
 * the lifelines' in *parts, then the fingerprint of them all, for the
 * descriptors.  false after reporting why. */
static bool fingerprint(Build *b, char **parts)
{
    ZbGen *g = b->gen;
    LLVMModuleRef m = zb_gen_module(g, "declarations");
    zb_target_prepare(b->tm, m);
    g->for_hash = true;
    zb_gen_descriptor(g, m);
    g->for_hash = false;
    bool ok = fp_module(b->a, parts, "declarations", m);
    LLVMDisposeModule(m);
    for (int k = 0; ok && k < b->o->n_c_files; k++) {
        const char *path = b->o->c_files[k];
        const char *why = NULL;
        size_t len;
        char *text = zu_read_file(path, &len, &why);
        if (!text) {
            zd_error(b->d, no_span, "cannot read the C file `%s`: %s", path, why ? why : "");
            return false;
        }
        const char *base = strrchr(path, '/');
        ok = fp_part(b->a, parts, zu_fmt(b->a, "C file %s", base ? base + 1 : path), text, len);
        free(text);
    }
    char hex[65];
    if (!ok || !sha256_hex(*parts, strlen(*parts), hex)) {
        zd_error(b->d, no_span, "cannot compute the program's fingerprint (libcrypto failed)");
        return false;
    }
    g->fingerprint = zu_strdup(b->a, hex);
    g->fingerprint_parts = *parts;
    if (b->o->fingerprint) memcpy(b->o->fingerprint, hex, 65);
    return true;
}

/* ---- per-lifeline executables --------------------------------------------- */

/* Writes the executable of lifeline L, `path`, as a copy of the all-in-one
 * one (`exe`, n bytes, file mode `mode`) whose role record, at offset
 * `at`, names L (zgrt_abi.h).  false after reporting why. */
static bool write_role_copy(Build *b, const char *path, const char *shown, char *exe, size_t n,
                            size_t at, int32_t L, mode_t mode)
{
    memcpy(exe + at + offsetof(zgrt_role, lifeline), &L, sizeof L);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    const char *why = NULL;
    if (fd < 0) {
        why = strerror(errno);
    } else {
        for (size_t off = 0; off < n && !why;) {
            ssize_t k = write(fd, exe + off, n - off);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) why = k < 0 ? strerror(errno) : "no byte written";
            off += k > 0 ? (size_t)k : 0;
        }
        if (close(fd) != 0 && !why) why = strerror(errno);
    }
    if (why) zd_error(b->d, no_span, "cannot write `%s`: %s", shown, why);
    return !why;
}

/* The per-lifeline executables, from the all-in-one one linked at `whole`:
 * temp[L + 1] for every lifeline L (final[L + 1] in messages).  One link
 * instead of one per lifeline: each link costs about as much as the
 * all-in-one one. */
static bool write_lifelines(Build *b, const char *whole, const char **temp, const char **final,
                            int nl)
{
    size_t n = 0;
    const char *why = NULL;
    char *exe = zu_read_file(whole, &n, &why);
    struct stat st;
    if (!exe || stat(whole, &st) != 0) {
        zd_error(b->d, no_span, "cannot read the executable `%s`: %s", whole,
                 why ? why : strerror(errno));
        free(exe);
        return false;
    }
    /* the role record: its magic once, and the all-lifelines role */
    static const char magic[] = ZGRT_ROLE_MAGIC;
    size_t at = 0;
    int found = 0;
    for (const char *q = exe;
         n >= sizeof(zgrt_role) && (q = memmem(q, n - (size_t)(q - exe), magic, sizeof magic));
         q++) {
        if (++found == 1) at = (size_t)(q - exe);
    }
    int32_t role = 0;
    if (found == 1 && at + sizeof(zgrt_role) <= n)
        memcpy(&role, exe + at + offsetof(zgrt_role, lifeline), sizeof role);
    if (found != 1 || role != -1) {
        zd_error(b->d, no_span,
                 "internal error: the executable `%s` has %d role records (one with role -1 "
                 "expected): the per-lifeline executables cannot be made from it",
                 whole, found);
        free(exe);
        return false;
    }
    bool ok = true;
    for (int L = 0; L < nl && ok; L++)
        ok = write_role_copy(b, temp[L + 1], final[L + 1], exe, n, at, L, st.st_mode & 07777);
    free(exe);
    return ok;
}

static int build(Build *b)
{
    const ZBuildOptions *o = b->o;
    const char *wfn = b->wf->name;
    int nl = b->p->lifelines.len;
    const char *out_dir = o->out_dir && *o->out_dir ? o->out_dir : ".";
    bool whole = !o->link || (o->link & ZB_LINK_WHOLE);
    bool per_life = !o->link || (o->link & ZB_LINK_LIFELINES);

    if (mkdir_p(b->a, out_dir) < 0) {
        zd_error(b->d, no_span, "cannot create the output directory `%s`: %s", out_dir,
                 strerror(errno));
        return 1;
    }
    if (access(out_dir, W_OK) < 0) {
        zd_error(b->d, no_span, "cannot write to the output directory `%s`: %s", out_dir,
                 strerror(errno));
        return 1;
    }
    const char *lib = zb_runtime_lib();
    if (access(lib, R_OK) < 0) {
        zd_error(b->d, no_span, "the runtime library `%s` is missing: %s", lib, strerror(errno));
        return 1;
    }
    for (int i = 0; i < o->n_c_files; i++) {
        if (access(o->c_files[i], R_OK) < 0) {
            zd_error(b->d, no_span, "cannot read the C file `%s`: %s", o->c_files[i],
                     strerror(errno));
            return 1;
        }
    }

    const char *err = NULL;
    b->tm = zb_target_new(b->a, o->opt_level, &err);
    if (!b->tm) {
        zd_error(b->d, no_span, "%s", err ? err : "no native target");
        return 1;
    }

    /* The IR, in order: lifeline modules first (they number the source
     * locations), each hashed for the fingerprint and kept as bitcode. */
    int nu = o->n_c_files;
    /* jobs: per lifeline its body and its guards, the descriptor, the C files */
    Job *jobs = zu_alloc(b->a, sizeof *jobs * (size_t)(2 * nl + nu + 1));
    int nj = 0;
    char *parts = NULL;
    /* per lifeline its body and, in a module of its own (emit.c
     * optimises it even at -O0), its evaluation of guards */
    LLVMMemoryBufferRef *bcs = zu_alloc(b->a, sizeof *bcs * (size_t)(nl + 1));
    LLVMMemoryBufferRef *ebcs = zu_alloc(b->a, sizeof *ebcs * (size_t)(nl + 1));
    int ok = 1;
    for (int L = 0; L < nl && ok; L++) {
        const ZDecl *ld = ZU_VEC_AT(b->p->lifelines, L);
        char *name = zu_fmt(b->a, "%s.%s", wfn, ld->name);
        LLVMModuleRef m = zb_gen_module(b->gen, name);
        zb_target_prepare(b->tm, m);
        LLVMModuleRef em = NULL;
        if (zb_has_eval(b->gen, L)) {
            em = zb_gen_module(b->gen, zu_fmt(b->a, "%s.eval", name));
            zb_target_prepare(b->tm, em);
        }
        if (!zb_gen_lifeline(b->gen, m, em ? em : m, L)) {
            ok = 0;
        } else if (!fp_module(b->a, &parts, zu_fmt(b->a, "lifeline %s", ld->name), m) ||
                   (em &&
                    !fp_module(b->a, &parts, zu_fmt(b->a, "lifeline %s, guards", ld->name), em))) {
            zd_error(b->d, no_span, "cannot compute the program's fingerprint (libcrypto failed)");
            ok = 0;
        } else {
            bcs[L] = to_bitcode(m);
            if (em) ebcs[L] = to_bitcode(em);
            continue;
        }
        LLVMDisposeModule(m);
        if (em) LLVMDisposeModule(em);
    }
    if (ok && !fingerprint(b, &parts)) ok = 0;
    /* the caller may have this build already: then no object is made */
    char locs[17] = "";
    if (ok && o->have && !locations_id(b, locs)) {
        zd_error(b->d, no_span, "cannot compute the program's fingerprint (libcrypto failed)");
        ok = 0;
    }
    if (ok && o->have && o->have(o->user, b->gen->fingerprint, locs)) {
        if (o->cached) *o->cached = true;
        ok = 2;
    }
    if (ok != 1) {
        for (int L = 0; L < nl; L++) {
            if (bcs[L]) LLVMDisposeMemoryBuffer(bcs[L]);
            if (ebcs[L]) LLVMDisposeMemoryBuffer(ebcs[L]);
        }
        return ok == 2 ? 0 : 1;
    }

    if (o->keep_objects) {
        b->objdir = out_dir;
    } else {
        const char *tmp = env_or("TMPDIR", "/tmp");
        char *tpl = zu_fmt(b->a, "%s/zgc-build-XXXXXX", tmp);
        if (!mkdtemp(tpl)) {
            zd_error(b->d, no_span, "cannot create a temporary directory in `%s`: %s", tmp,
                     strerror(errno));
            for (int L = 0; L < nl; L++) {
                LLVMDisposeMemoryBuffer(bcs[L]);
                if (ebcs[L]) LLVMDisposeMemoryBuffer(ebcs[L]);
            }
            return 1;
        }
        b->objdir = tpl;
    }
    const char **body_objs = zu_alloc(b->a, sizeof *body_objs * (size_t)(nl + 1));
    const char **eval_objs = zu_alloc(b->a, sizeof *eval_objs * (size_t)(nl + 1));
    for (int L = 0; L < nl; L++) {
        const ZDecl *ld = ZU_VEC_AT(b->p->lifelines, L);
        body_objs[L] = zu_fmt(b->a, "%s/%s.body.%s.o", b->objdir, wfn, ld->name);
        object_job(b, &jobs[nj++], bcs[L], body_objs[L]);
        if (ebcs[L]) {
            eval_objs[L] = zu_fmt(b->a, "%s/%s.eval.%s.o", b->objdir, wfn, ld->name);
            object_job(b, &jobs[nj], ebcs[L], eval_objs[L]);
            jobs[nj++].guards = true;
        }
    }
    const char *prog_obj = zu_fmt(b->a, "%s/%s.prog.o", b->objdir, wfn);
    LLVMModuleRef whole_m = zb_gen_module(b->gen, zu_fmt(b->a, "%s.prog", wfn));
    zb_target_prepare(b->tm, whole_m);
    zb_gen_descriptor(b->gen, whole_m);
    object_job(b, &jobs[nj++], to_bitcode(whole_m), prog_obj);
    const char **user_objs = zu_alloc(b->a, sizeof *user_objs * (size_t)(nu + 1));
    for (int k = 0; k < nu; k++) {
        user_objs[k] = zu_fmt(b->a, "%s/%s.user%d.o", b->objdir, wfn, k + 1);
        compile_job(b, &jobs[nj++], o->c_files[k], user_objs[k]);
    }
    run_jobs(b, jobs, nj);
    if (!report_jobs(b, jobs, nj)) return 1;
    if (!check_linked(b, user_objs, nu)) return 1;

    /* One link: the all-in-one executable; each per-lifeline one is a copy
     * of it whose role record names its lifeline (write_lifelines).  They
     * are written under temporary names in out_dir and renamed into place
     * only when every one of them is made: a failed build leaves the
     * executables of an earlier build as they were. */
    const char **final = zu_alloc(b->a, sizeof *final * (size_t)(nl + 1));
    const char **temp = zu_alloc(b->a, sizeof *temp * (size_t)(nl + 1));
    bool *made = zu_alloc(b->a, sizeof *made * (size_t)(nl + 1));
    final[0] = zu_fmt(b->a, "%s/%s", out_dir, wfn);
    made[0] = whole;
    for (int L = 0; L < nl; L++) {
        const ZDecl *ld = ZU_VEC_AT(b->p->lifelines, L);
        final[L + 1] = zu_fmt(b->a, "%s/%s.%s", out_dir, wfn, ld->name);
        made[L + 1] = per_life;
    }
    for (int e = 0; e <= nl; e++) {
        const char *base = strrchr(final[e], '/') + 1;
        temp[e] = zu_fmt(b->a, "%s/.%s.zgc-%ld", out_dir, base, (long)getpid());
        zu_vec_push(b->a, &b->made, (void *)temp[e]); /* removed unless renamed */
    }
    const char **objs = zu_alloc(b->a, sizeof *objs * (size_t)(2 * nl + nu + 2));
    int n = 0;
    for (int L = 0; L < nl; L++) {
        objs[n++] = body_objs[L];
        if (eval_objs[L]) objs[n++] = eval_objs[L];
    }
    objs[n++] = prog_obj;
    for (int k = 0; k < nu; k++) objs[n++] = user_objs[k];
    Job link;
    memset(&link, 0, sizeof link);
    link_job(b, &link, temp[0], final[0], objs, n);
    run_jobs(b, &link, 1);
    if (!report_jobs(b, &link, 1)) return 1;
    if (per_life && !write_lifelines(b, temp[0], temp, final, nl)) return 1;
    for (int e = 0; e <= nl; e++)
        if (made[e] && rename(temp[e], final[e]) != 0) {
            zd_error(b->d, no_span, "cannot write `%s`: %s", final[e], strerror(errno));
            return 1;
        }
    return 0;
}

int zb_build(ZCompilation *c, const ZBuildOptions *o)
{
    Build b;
    memset(&b, 0, sizeof b);
    b.a = c->arena;
    b.p = c->prog;
    b.wf = c->wf;
    b.o = o;
    b.d = &c->diag;
    b.cc = o->cc && *o->cc ? o->cc : env_or("CC", "cc");
    if (o->cached) *o->cached = false;
    b.lc = LLVMContextCreate();
    zb_install_diagnostics(b.lc);
    b.gen = zb_gen_new(b.lc, c);
    int rc = build(&b);
    for (int i = 0; i < b.made.len; i++) unlink(ZU_VEC_AT(b.made, i));
    if (!o->keep_objects && b.objdir) rmdir(b.objdir);
    zb_target_free(b.tm);
    LLVMContextDispose(b.lc);
    return rc;
}

const char *zb_runtime_lib(void) { return env_or("ZGC_RUNTIME_LIB", ZGC_RUNTIME_LIB); }

LLVMModuleRef zb_gen_whole(LLVMContextRef lc, ZCompilation *c)
{
    zb_install_diagnostics(lc);
    ZbGen *gen = zb_gen_new(lc, c);
    LLVMModuleRef m = zb_gen_module(gen, c->wf->name);
    for (int L = 0; L < c->prog->lifelines.len; L++)
        if (!zb_gen_lifeline(gen, m, m, L)) {
            LLVMDisposeModule(m);
            return NULL;
        }
    zb_gen_descriptor(gen, m);
    /* no `main`: the descriptor is what the caller runs, by its name */
    LLVMValueRef mainf = LLVMGetNamedFunction(m, "main");
    if (mainf) LLVMDeleteFunction(mainf);
    LLVMValueRef prog = LLVMGetNamedGlobal(m, "zg.program");
    if (prog) LLVMSetLinkage(prog, LLVMExternalLinkage);
    zb_verify(m);
    return m;
}

int zb_emit_llvm(FILE *out, ZCompilation *c)
{
    ZArena *a = c->arena;
    const ZProgram *p = c->prog;
    const ZDecl *wf = c->wf;
    LLVMContextRef lc = LLVMContextCreate();
    zb_install_diagnostics(lc);
    ZbGen *gen = zb_gen_new(lc, c);
    const char *err = NULL;
    /* without a native target the IR is printed without a triple */
    ZbTarget *tm = zb_target_new(a, 0, &err);
    LLVMModuleRef m = zb_gen_module(gen, wf->name);
    if (tm) zb_target_prepare(tm, m);
    int rc = 0;
    for (int L = 0; L < p->lifelines.len && rc == 0; L++)
        if (!zb_gen_lifeline(gen, m, m, L)) rc = 1;
    if (rc == 0) {
        zb_gen_descriptor(gen, m);
        zb_verify(m);
        char *ir = LLVMPrintModuleToString(m);
        fputs(ir, out);
        LLVMDisposeMessage(ir);
    }
    LLVMDisposeModule(m);
    zb_target_free(tm);
    LLVMContextDispose(lc);
    return rc;
}

/* The module's entry points (load.c finds them by this name). */
const ZbModule zb_module = {
    .build_id = ZGC_BUILD_ID,
    .build = zb_build,
    .emit_llvm = zb_emit_llvm,
    .runtime_lib = zb_runtime_lib,
};
