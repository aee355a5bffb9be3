/* pipeline.c — one compilation, pass by pass.
 *
 * The one place where the passes are put in order.  The driver, the
 * oracle, the tests and the fuzzers all compile through zc_run, so they
 * see the same program.  The passes run on a thread with a large stack:
 * they look through named guards recursively, as deep as the resolver
 * allows (ZR_MAX_GUARD_DEPTH). */
#include "zgc.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#ifndef ZGC_STDLIB_DIR
#define ZGC_STDLIB_DIR "stdlib"
#endif

/* ---- the search path ------------------------------------------------ */

#define MAX_INCLUDE_DIRS 64
static const char *include_dirs[MAX_INCLUDE_DIRS];
static int n_include_dirs;

void zc_add_include_dir(const char *dir)
{
    if (n_include_dirs == MAX_INCLUDE_DIRS) {
        fprintf(stderr, "zgc: error: more than %d -I directories\n", MAX_INCLUDE_DIRS);
        exit(2);
    }
    include_dirs[n_include_dirs++] = dir;
}

static const char *stdlib_dir;

void zc_set_stdlib_dir(const char *dir) { stdlib_dir = dir; }

const char *zc_stdlib_dir(void)
{
    const char *env = getenv("ZGC_STDLIB");
    if (env && *env) return env;
    return stdlib_dir ? stdlib_dir : ZGC_STDLIB_DIR;
}

const char *zc_stage_name(ZStage s)
{
#define NAME(k, text) text,
    static const char *const names[] = {ZC_STAGES(NAME)};
#undef NAME
    return s >= 0 && s < ZC__COUNT ? names[s] : "?";
}

void zc_init(ZCompilation *c, ZParseFn *parse, const char *path, const char *text, size_t len,
             FILE *diag_out)
{
    memset(c, 0, sizeof *c);
    c->parse = parse;
    c->arena = zu_arena_new();
    c->text = zu_xmalloc(len + 1);
    memcpy(c->text, text, len);
    c->text[len] = 0;
    c->src.path = path;
    c->src.text = c->text;
    c->src.len = len;
    zu_vec_push(c->arena, &c->files, &c->src);
    zd_init(&c->diag, &c->src, diag_out);
    c->diag.files = &c->files;
    c->diag.expansions = &c->expansions;
}

bool zc_init_file(ZCompilation *c, ZParseFn *parse, const char *path, FILE *diag_out)
{
    const char *err;
    size_t len;
    char *text = zu_read_file(path, &len, &err);
    if (!text) {
        memset(c, 0, sizeof *c);
        fprintf(diag_out, "zgc: error: cannot read %s: %s\n", path, err);
        return false;
    }
    zc_init(c, parse, path, text, len, diag_out);
    free(text);
    return true;
}

void zc_free(ZCompilation *c)
{
    zu_arena_free(c->arena);
    free(c->text);
    memset(c, 0, sizeof *c);
}

/* ---- imports ---------------------------------------------------------- */

/* The file system's ZLoadFn. */
static char *load_file(void *user, const char *path, size_t *len, char **key, const char **err,
                       bool *missing)
{
    (void)user;
    *missing = false;
    char *real = realpath(path, NULL);
    if (!real) {
        if (errno == ENOENT || errno == ENOTDIR) {
            *missing = true;
            return NULL;
        }
        if (errno == ENOMEM) zu_oom();
        *err = strerror(errno);
        return NULL;
    }
    char *text = zu_read_file(real, len, err);
    if (!text) {
        free(real);
        return NULL;
    }
    *key = real;
    return text;
}

typedef struct Loader {
    ZCompilation *c;
    ZVec keys;  /* char* (arena), one per file */
    ZVec state; /* per file: (void *)1 while its imports are read, 2 after */
    ZVec stack; /* ZSource*: the files being read, outermost first */
    ZVec paths; /* char*: the paths read so far, and in files, */
    ZVec files; /* the index (as a pointer) of the file each one read */
} Loader;

/* `dir` of path (up to its last slash, empty without one) joined with name. */
static char *join(ZArena *a, const char *from, size_t dirlen, const char *name)
{
    if (name[0] == '/' || dirlen == 0) return zu_strdup(a, name);
    return zu_fmt(a, "%.*s/%s", (int)dirlen, from, name);
}

/* The file an import names: its index in c->files (read and parsed now
 * when new), or -1 after an error. */
static int find_import(Loader *ld, const ZSource *from, const ZDecl *imp, ZProgram **prog)
{
    ZCompilation *c = ld->c;
    const char *name = imp->name;
    *prog = NULL;
    if (!name[0] || strlen(name) >= PATH_MAX) {
        zd_error(&c->diag, imp->name_span, "`%s` is not a file name", name);
        return -1;
    }
    /* the candidates, in order */
    ZVec cands = {0};
    const char *slash = strrchr(from->path, '/');
    zu_vec_push(c->arena, &cands,
                join(c->arena, from->path, slash ? (size_t)(slash - from->path) : 0, name));
    if (name[0] != '/') {
        for (int i = 0; i < n_include_dirs; i++)
            zu_vec_push(c->arena, &cands,
                        join(c->arena, include_dirs[i], strlen(include_dirs[i]), name));
        const char *std = zc_stdlib_dir();
        if (std && std[0]) zu_vec_push(c->arena, &cands, join(c->arena, std, strlen(std), name));
    }
    ZLoadFn *load = c->load ? c->load : load_file;
    for (int i = 0; i < cands.len; i++) {
        const char *path = cands.items[i];
        for (int k = 0; k < ld->paths.len; k++) /* read already by this path */
            if (!strcmp(ld->paths.items[k], path)) return (int)(intptr_t)ld->files.items[k];
        size_t len = 0;
        char *key = NULL;
        const char *err = "unreadable";
        bool missing = false;
        char *text = load(c->load_user, path, &len, &key, &err, &missing);
        if (!text) {
            if (missing) continue;
            zd_error(&c->diag, imp->name_span, "cannot read `%s`: %s", path, err);
            return -1;
        }
        zu_vec_push(c->arena, &ld->paths, (void *)path);
        for (int f = 0; f < ld->keys.len; f++)
            if (!strcmp(ld->keys.items[f], key)) { /* the same file by another path */
                free(text);
                free(key);
                zu_vec_push(c->arena, &ld->files, (void *)(intptr_t)f);
                return f;
            }
        if (c->files.len >= ZC_MAX_FILES) {
            free(text);
            free(key);
            zd_error(&c->diag, imp->name_span, "more than %d files imported", ZC_MAX_FILES);
            return -1;
        }
        ZSource *src = zu_alloc(c->arena, sizeof *src);
        char *copy = zu_alloc(c->arena, len + 1);
        memcpy(copy, text, len);
        free(text);
        src->path = path;
        src->text = copy;
        src->len = len;
        src->index = c->files.len;
        src->imported_at = imp->name_span;
        zu_vec_push(c->arena, &c->files, src);
        zu_vec_push(c->arena, &ld->keys, zu_strdup(c->arena, key));
        zu_vec_push(c->arena, &ld->state, NULL);
        zu_vec_push(c->arena, &ld->files, (void *)(intptr_t)src->index);
        free(key);
        *prog = c->parse(c->arena, src, &c->diag);
        return src->index;
    }
    zd_error(&c->diag, imp->name_span, "cannot find `%s`", name);
    ZBuf b = {0};
    for (int i = 0; i < cands.len; i++) {
        const char *p = cands.items[i];
        zu_buf_printf(&b, "%s%s", i ? ", " : "", p);
    }
    zd_note(&c->diag, imp->name_span, "looked for %s", b.data);
    zu_buf_free(&b);
    return -1;
}

/* Appends the declarations of file `file` (program fp) to out, each
 * imported file's where its first import stands. */
static void merge(Loader *ld, int file, ZProgram *fp, ZVec *out)
{
    ZCompilation *c = ld->c;
    ld->state.items[file] = (void *)1;
    zu_vec_push(c->arena, &ld->stack, c->files.items[file]);
    for (int i = 0; i < fp->decls.len; i++) {
        ZDecl *d = fp->decls.items[i];
        zu_vec_push(c->arena, out, d);
        if (d->kind != D_IMPORT) continue;
        ZProgram *ip;
        int f = find_import(ld, c->files.items[file], d, &ip);
        d->import_file = f;
        if (f < 0) continue;
        if (ip) {
            merge(ld, f, ip, out);
        } else if (ld->state.items[f] == (void *)1) {
            ZBuf b = {0};
            int k = 0;
            while (ld->stack.items[k] != c->files.items[f]) k++;
            for (int j = k; j < ld->stack.len; j++)
                zu_buf_printf(&b, "%s -> ", ((const ZSource *)ld->stack.items[j])->path);
            zu_buf_puts(&b, ((const ZSource *)c->files.items[f])->path);
            zd_error(&c->diag, d->name_span, "import cycle: %s", b.data);
            zu_buf_free(&b);
        }
    }
    ld->stack.len--;
    ld->state.items[file] = (void *)2;
}

/* The parse pass: the file, then every file it imports, once each. */
static bool parse_all(ZCompilation *c)
{
    c->prog = c->parse(c->arena, &c->src, &c->diag);
    Loader ld = {.c = c};
    /* the compiled file's key, so that importing it again is a cycle */
    char *real = c->load ? NULL : realpath(c->src.path, NULL);
    zu_vec_push(c->arena, &ld.keys, zu_strdup(c->arena, real ? real : c->src.path));
    free(real);
    zu_vec_push(c->arena, &ld.state, NULL);
    ZVec all = {0};
    merge(&ld, 0, c->prog, &all);
    c->prog->decls = all;
    return c->diag.errors == 0;
}

/* Runs pass s; false when it reported errors. */
static bool run_pass(ZCompilation *c, ZStage s)
{
    switch (s) {
    case ZC_PARSE:
        if (!c->parse) ZU_ICE("a compilation without a parser");
        return parse_all(c);
    case ZC_EXPAND: return zx_expand(c->arena, c->prog, &c->expansions, &c->diag);
    case ZC_RESOLVE:
        if (!zr_resolve(c->arena, c->prog, &c->diag)) return false;
        zw_count_uses(c->prog);
        if (c->workflow || !c->all_workflows) {
            c->wf = zr_select_workflow(c->prog, c->workflow, &c->diag);
            return c->wf != NULL;
        }
        return true;
    case ZC_CHECK:
        if (!zk_check(c->arena, c->prog, c->wf, &c->diag)) return false;
        if (c->warnings || c->strict) {
            int before = c->diag.errors;
            if (c->warnings) zw_warn(c->arena, c->prog, c->wf, &c->diag);
            if (c->prog->stores.len) {
                if (c->wf) {
                    zq_diagnose(c->arena, zq_analyze(c->arena, c->prog, c->wf), &c->diag,
                                c->strict);
                } else {
                    for (int i = 0; i < c->prog->workflows.len; i++)
                        zq_diagnose(c->arena,
                                    zq_analyze(c->arena, c->prog, c->prog->workflows.items[i]),
                                    &c->diag, c->strict);
                }
            }
            return c->diag.errors == before; /* -Werror, --strict */
        }
        return true;
    case ZC_PROJECT:
        if (!c->wf) {
            /* every workflow was checked; projection needs the one */
            c->wf = zr_select_workflow(c->prog, NULL, &c->diag);
            if (!c->wf) return false;
        }
        c->locals = zj_project(c->arena, c->prog, c->wf);
        return true;
    case ZC_GUARDS: c->guards = zg_enumerate(c->arena, c->prog, c->wf, c->locals); return true;
    case ZC_PLAN: c->plan = zm_plan(c->arena, c->guards); return true;
    case ZC__COUNT: break;
    }
    ZU_UNREACHABLE();
}

static void run_passes(ZCompilation *c, ZStage upto)
{
    while (!c->failed && c->done <= (int)upto) {
        if (!run_pass(c, (ZStage)c->done))
            c->failed = true;
        else
            c->done++;
    }
}

typedef struct Job {
    ZCompilation *c;
    ZStage upto;
} Job;

static void *run_job(void *p)
{
    Job *j = p;
    run_passes(j->c, j->upto);
    return NULL;
}

bool zc_run(ZCompilation *c, ZStage upto)
{
    /* The passes on a thread of their own with ZC_STACK_BYTES of stack
     * (see zgc.h); the pages are only touched as deep as a program goes.
     * Where no such thread can be made (an address-space limit), they run
     * here, on the caller's stack. */
    pthread_attr_t attr;
    pthread_t t;
    Job job = {c, upto};
    bool threaded = false;
    if (pthread_attr_init(&attr) == 0) {
        threaded = pthread_attr_setstacksize(&attr, ZC_STACK_BYTES) == 0 &&
                   pthread_create(&t, &attr, run_job, &job) == 0;
        pthread_attr_destroy(&attr);
    }
    if (!threaded)
        run_passes(c, upto);
    else if (pthread_join(t, NULL) != 0)
        ZU_ICE("cannot join the compiler's thread");
    return !c->failed && c->done > (int)upto;
}
