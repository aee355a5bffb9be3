/* Shared helpers for the compiler's unit tests. */
#ifndef ZGC_TEST_HELPERS_H
#define ZGC_TEST_HELPERS_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "zgc.h"

/* One compilation of an in-memory source, up to the requested pass. */
typedef enum { T_PARSE, T_RESOLVE, T_CHECK, T_PROJECT, T_GUARDS } TStage;

typedef struct TComp {
    ZArena *arena;
    ZSource src;
    ZDiag diag;
    char *diag_text;   /* everything the diagnostics printed */
    size_t diag_len;
    FILE *diag_file;
    ZProgram *prog;
    ZDecl *wf;
    ZLocalSet *locals;
    ZGuardTable *guards;
    bool ok;           /* no error up to the requested stage */
} TComp;

/* Runs the pipeline on `text` (named "test.zg") up to `stage`, stopping at
 * the first stage that reports an error.  Diagnostics are captured in
 * c->diag_text (NUL-terminated). */
static inline TComp *t_compile(const char *text, TStage stage)
{
    TComp *c = calloc(1, sizeof *c);
    c->arena = zu_arena_new();
    c->src.path = "test.zg";
    c->src.text = text;
    c->src.len = strlen(text);
    c->diag_file = open_memstream(&c->diag_text, &c->diag_len);
    zd_init(&c->diag, &c->src, c->diag_file);
    c->prog = zp_parse(c->arena, &c->src, &c->diag);
    c->ok = c->diag.errors == 0;
    if (c->ok && stage >= T_RESOLVE) {
        c->ok = zr_resolve(c->arena, c->prog, &c->diag);
        if (c->ok) {
            c->wf = zr_select_workflow(c->prog, NULL, &c->diag);
            c->ok = c->diag.errors == 0;
        }
    }
    if (c->ok && stage >= T_CHECK)
        c->ok = zk_check(c->arena, c->prog, c->wf, &c->diag);
    if (c->ok && stage >= T_PROJECT && c->wf)
        c->locals = zj_project(c->arena, c->prog, c->wf);
    if (c->ok && stage >= T_GUARDS && c->wf)
        c->guards = zg_enumerate(c->arena, c->prog, c->wf, c->locals);
    fflush(c->diag_file);
    return c;
}

static inline void t_free(TComp *c)
{
    if (!c) return;
    fclose(c->diag_file);
    free(c->diag_text);
    zu_arena_free(c->arena);
    free(c);
}

/* Captures what `fn(out, ...)` prints into a malloc'd string. */
#define T_CAPTURE(var, call_with_out)                         \
    char *var = NULL;                                         \
    do {                                                      \
        size_t var##_len = 0;                                 \
        FILE *out = open_memstream(&var, &var##_len);         \
        call_with_out;                                        \
        fclose(out);                                          \
    } while (0)

#endif
