/* pipeline.c — one compilation, pass by pass.
 *
 * The one place where the passes are put in order.  The driver, the
 * oracle, the tests and the fuzzers all compile through zc_run, so they
 * see the same program.  The passes run on a thread with a large stack:
 * they look through named guards recursively, as deep as the resolver
 * allows (ZR_MAX_GUARD_DEPTH). */
#include "zgc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

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
    zd_init(&c->diag, &c->src, diag_out);
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

/* Runs pass s; false when it reported errors. */
static bool run_pass(ZCompilation *c, ZStage s)
{
    switch (s) {
    case ZC_PARSE:
        if (!c->parse) ZU_ICE("a compilation without a parser");
        c->prog = c->parse(c->arena, &c->src, &c->diag);
        return c->diag.errors == 0;
    case ZC_RESOLVE:
        if (!zr_resolve(c->arena, c->prog, &c->diag)) return false;
        if (c->workflow || !c->all_workflows) {
            c->wf = zr_select_workflow(c->prog, c->workflow, &c->diag);
            return c->wf != NULL;
        }
        return true;
    case ZC_CHECK: return zk_check(c->arena, c->prog, c->wf, &c->diag);
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
