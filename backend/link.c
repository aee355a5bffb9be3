/* link.c — zb_build and zb_emit_llvm: codegen, objects, executables.
 *
 * zb_build writes, into a temporary directory (or out_dir with
 * keep_objects):
 *   <wf>.body.<L>.o    one per lifeline (body, branches, monitor, pure actions)
 *   <wf>.prog.o        descriptor + main of the all-in-one executable
 *   <wf>.prog.<L>.o    descriptor + main of lifeline L's executable
 *   <wf>.user<k>.o     the user's C files, compiled once each
 * and links out_dir/<wf> (every body) and out_dir/<wf>.<L> (L's body) with
 * the system C compiler, libzgrt, jansson, libcrypto (the handshake of
 * lifeline processes), SQLite (the run store of durable runs), pthreads
 * and libm.  Commands run through fork/execvp (no
 * shell); their output is shown when they fail.
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
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "gen.h"

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

static const ZSpan no_span = {0, 0, 0, 0};

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
 * combined stdout/stderr in *out (in the arena, NUL-terminated). */
static int run(const Argv *cmd, bool verbose, char **out)
{
    *out = NULL;
    if (verbose) {
        for (int i = 0; i < cmd->n; i++) fprintf(stderr, "%s%s", i ? " " : "", cmd->v[i]);
        fputc('\n', stderr);
    }
    int fds[2];
    if (pipe(fds) < 0) return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        execvp(cmd->v[0], cmd->v);
        fprintf(stderr, "cannot run `%s`: %s\n", cmd->v[0], strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    char *text = zu_alloc(cmd->a, 4096);
    size_t len = 0, cap = 4096;
    for (;;) {
        if (cap - len < 2048) {
            text = zb_grow(cmd->a, text, (int)len, (int)(cap * 2), 1);
            cap *= 2;
        }
        ssize_t k = read(fds[0], text + len, cap - len - 1);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        len += (size_t)k;
    }
    close(fds[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return -1;
    text[len] = 0;
    *out = text;
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

static bool emit_module(Build *b, LLVMModuleRef m, const char *path)
{
    zb_verify(m);
    const char *err = NULL;
    int rc = zb_target_emit(b->tm, m, path, &err);
    LLVMDisposeModule(m);
    if (!b->o->keep_objects) zu_vec_push(b->a, &b->made, (void *)path);
    if (rc) {
        zd_error(b->d, no_span, "cannot write `%s`: %s", path, err ? err : "");
        return false;
    }
    return true;
}

static void cc_words(Build *b, Argv *cmd)
{
    argv_split(cmd, b->cc, " \t");
    if (cmd->n == 0) argv_push(cmd, "cc");
}

static bool compile_user_file(Build *b, const char *src, const char *obj)
{
    Argv cmd = {.a = b->a};
    cc_words(b, &cmd);
    argv_push(&cmd, "-c");
    argv_push(&cmd, "-O2");
    argv_push(&cmd, "-fPIC");
    argv_push(&cmd, "-I");
    argv_push(&cmd, env_or("ZGC_RUNTIME_INCLUDE", ZGC_RUNTIME_INCLUDE));
    argv_push(&cmd, src);
    argv_push(&cmd, "-o");
    argv_push(&cmd, obj);
    char *out = NULL;
    int rc = run(&cmd, b->o->verbose, &out);
    if (!b->o->keep_objects) zu_vec_push(b->a, &b->made, (void *)obj);
    if (rc != 0) {
        if (rc == 127 || rc < 0)
            zd_error(b->d, no_span, "cannot run the C compiler `%s` on `%s`", cmd.v[0], src);
        else
            zd_error(b->d, no_span, "the C compiler failed on `%s`:", src);
        if (out && *out) fputs(out, b->d->out);
    } else if (out && *out) {
        fputs(out, stderr); /* warnings */
    }
    return rc == 0;
}

/* Links objs into `path`, the temporary name of the executable `exe` (the
 * name messages use). */
static bool link_exe(Build *b, const char *path, const char *exe, const char *const *objs,
                     int nobjs)
{
    Argv cmd = {.a = b->a};
    cc_words(b, &cmd);
    argv_push(&cmd, "-o");
    argv_push(&cmd, path);
    for (int i = 0; i < nobjs; i++) argv_push(&cmd, objs[i]);
    argv_push(&cmd, env_or("ZGC_RUNTIME_LIB", ZGC_RUNTIME_LIB));
    const char *jl = ZGC_JANSSON_LIBS;
    if (!*jl) jl = "-ljansson";
    argv_split(&cmd, jl, "|");
    const char *cl = ZGC_CRYPTO_LIBS;
    argv_split(&cmd, *cl ? cl : "-lcrypto", "|");
    argv_split(&cmd, ZGC_RUNTIME_LDFLAGS, "| ");
    argv_push(&cmd, "-lsqlite3"); /* the run store (runtime/durable) */
    argv_push(&cmd, "-lnats");    /* the NATS transport (runtime/nats) */
    argv_push(&cmd, "-lpthread");
    argv_push(&cmd, "-lm");
    char *out = NULL;
    int rc = run(&cmd, b->o->verbose, &out);
    if (rc != 0) {
        if (rc == 127 || rc < 0)
            zd_error(b->d, no_span, "cannot run the C compiler `%s` to link `%s`", cmd.v[0], exe);
        else
            zd_error(b->d, no_span, "linking `%s` failed:", exe);
        if (out && *out) fputs(out, b->d->out);
    } else if (out && *out) {
        fputs(out, stderr);
    }
    return rc == 0;
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
    zb_gen_descriptor(g, m, -1);
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

static int build(Build *b)
{
    const ZBuildOptions *o = b->o;
    const char *wfn = b->wf->name;
    int nl = b->p->lifelines.len;
    const char *out_dir = o->out_dir && *o->out_dir ? o->out_dir : ".";

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
    const char *lib = env_or("ZGC_RUNTIME_LIB", ZGC_RUNTIME_LIB);
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
    if (o->keep_objects) {
        b->objdir = out_dir;
    } else {
        const char *tmp = env_or("TMPDIR", "/tmp");
        char *tpl = zu_fmt(b->a, "%s/zgc-build-XXXXXX", tmp);
        if (!mkdtemp(tpl)) {
            zd_error(b->d, no_span, "cannot create a temporary directory in `%s`: %s", tmp,
                     strerror(errno));
            return 1;
        }
        b->objdir = tpl;
    }

    const char *err = NULL;
    b->tm = zb_target_new(b->a, o->opt_level, &err);
    if (!b->tm) {
        zd_error(b->d, no_span, "%s", err ? err : "no native target");
        return 1;
    }

    /* lifeline modules first: they number the source locations */
    char *parts = NULL;
    const char **body_objs = zu_alloc(b->a, sizeof *body_objs * (size_t)(nl + 1));
    for (int L = 0; L < nl; L++) {
        const ZDecl *ld = ZU_VEC_AT(b->p->lifelines, L);
        char *name = zu_fmt(b->a, "%s.%s", wfn, ld->name);
        LLVMModuleRef m = zb_gen_module(b->gen, name);
        zb_target_prepare(b->tm, m);
        if (!zb_gen_lifeline(b->gen, m, L)) {
            LLVMDisposeModule(m);
            return 1;
        }
        body_objs[L] = zu_fmt(b->a, "%s/%s.body.%s.o", b->objdir, wfn, ld->name);
        if (!fp_module(b->a, &parts, zu_fmt(b->a, "lifeline %s", ld->name), m)) {
            LLVMDisposeModule(m);
            zd_error(b->d, no_span, "cannot compute the program's fingerprint (libcrypto failed)");
            return 1;
        }
        if (!emit_module(b, m, body_objs[L])) return 1;
    }
    if (!fingerprint(b, &parts)) return 1;
    const char *prog_obj = zu_fmt(b->a, "%s/%s.prog.o", b->objdir, wfn);
    LLVMModuleRef m = zb_gen_module(b->gen, zu_fmt(b->a, "%s.prog", wfn));
    zb_target_prepare(b->tm, m);
    zb_gen_descriptor(b->gen, m, -1);
    if (!emit_module(b, m, prog_obj)) return 1;
    const char **prog_objs = zu_alloc(b->a, sizeof *prog_objs * (size_t)(nl + 1));
    for (int L = 0; L < nl; L++) {
        const ZDecl *ld = ZU_VEC_AT(b->p->lifelines, L);
        prog_objs[L] = zu_fmt(b->a, "%s/%s.prog.%s.o", b->objdir, wfn, ld->name);
        m = zb_gen_module(b->gen, zu_fmt(b->a, "%s.prog.%s", wfn, ld->name));
        zb_target_prepare(b->tm, m);
        zb_gen_descriptor(b->gen, m, L);
        if (!emit_module(b, m, prog_objs[L])) return 1;
    }

    int nu = o->n_c_files;
    const char **user_objs = zu_alloc(b->a, sizeof *user_objs * (size_t)(nu + 1));
    for (int k = 0; k < nu; k++) {
        user_objs[k] = zu_fmt(b->a, "%s/%s.user%d.o", b->objdir, wfn, k + 1);
        if (!compile_user_file(b, o->c_files[k], user_objs[k])) return 1;
    }

    /* The executables are linked under temporary names in out_dir and
     * renamed into place only when every one of them linked: a failed
     * build leaves the executables of an earlier build as they were. */
    const char **final = zu_alloc(b->a, sizeof *final * (size_t)(nl + 1));
    const char **temp = zu_alloc(b->a, sizeof *temp * (size_t)(nl + 1));
    final[0] = zu_fmt(b->a, "%s/%s", out_dir, wfn);
    for (int L = 0; L < nl; L++) {
        const ZDecl *ld = ZU_VEC_AT(b->p->lifelines, L);
        final[L + 1] = zu_fmt(b->a, "%s/%s.%s", out_dir, wfn, ld->name);
    }
    for (int e = 0; e <= nl; e++) {
        const char *base = strrchr(final[e], '/') + 1;
        temp[e] = zu_fmt(b->a, "%s/.%s.zgc-%ld", out_dir, base, (long)getpid());
        zu_vec_push(b->a, &b->made, (void *)temp[e]); /* removed unless renamed */
    }
    /* out_dir/<wf>: every lifeline */
    const char **objs = zu_alloc(b->a, sizeof *objs * (size_t)(nl + nu + 2));
    int n = 0;
    for (int L = 0; L < nl; L++) objs[n++] = body_objs[L];
    objs[n++] = prog_obj;
    for (int k = 0; k < nu; k++) objs[n++] = user_objs[k];
    if (!link_exe(b, temp[0], final[0], objs, n)) return 1;
    /* out_dir/<wf>.<L>: one lifeline */
    for (int L = 0; L < nl; L++) {
        n = 0;
        objs[n++] = body_objs[L];
        objs[n++] = prog_objs[L];
        for (int k = 0; k < nu; k++) objs[n++] = user_objs[k];
        if (!link_exe(b, temp[L + 1], final[L + 1], objs, n)) return 1;
    }
    for (int e = 0; e <= nl; e++)
        if (rename(temp[e], final[e]) != 0) {
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

int zb_runtime_id(char out[17], const char **err)
{
    const char *lib = env_or("ZGC_RUNTIME_LIB", ZGC_RUNTIME_LIB);
    size_t len;
    char *data = zu_read_file(lib, &len, err);
    if (!data) return 1;
    char hex[65];
    bool ok = sha256_hex(data, len, hex);
    free(data);
    if (!ok) {
        *err = "libcrypto failed";
        return 1;
    }
    memcpy(out, hex, 16);
    out[16] = 0;
    return 0;
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
        if (!zb_gen_lifeline(gen, m, L)) rc = 1;
    if (rc == 0) {
        zb_gen_descriptor(gen, m, -1);
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
