/* Shared helpers for the compiler's unit tests. */
#ifndef ZGC_TEST_HELPERS_H
#define ZGC_TEST_HELPERS_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "grammar.h"
#include "zgc.h"

/* One compilation of an in-memory source, up to the requested pass,
 * through the compiler's pipeline (compiler/pipeline.c). */
typedef enum {
    T_PARSE = ZC_PARSE,
    T_RESOLVE = ZC_RESOLVE,
    T_CHECK = ZC_CHECK,
    T_PROJECT = ZC_PROJECT,
    T_GUARDS = ZC_GUARDS,
    T_PLAN = ZC_PLAN
} TStage;

typedef struct TComp {
    ZCompilation comp;
    char *diag_text; /* everything the diagnostics printed */
    size_t diag_len;
    FILE *diag_file;
    bool ok; /* no error up to the requested stage */
} TComp;

/* Runs the pipeline on `text`, named `path` (its imports are looked for
 * beside it), up to `stage`, stopping at the first stage that reports an
 * error.  Diagnostics are captured in c->diag_text (NUL-terminated). */
static inline TComp *t_compile_at(const char *path, const char *text, TStage stage)
{
    TComp *c = calloc(1, sizeof *c);
    c->diag_file = open_memstream(&c->diag_text, &c->diag_len);
    zc_init(&c->comp, zp_parse, path, text, strlen(text), c->diag_file);
    c->ok = zc_run(&c->comp, (ZStage)stage);
    fflush(c->diag_file);
    return c;
}

/* The same for a text named "test.zg". */
static inline TComp *t_compile(const char *text, TStage stage)
{
    return t_compile_at("test.zg", text, stage);
}

static inline void t_free(TComp *c)
{
    if (!c) return;
    fclose(c->diag_file);
    free(c->diag_text);
    zc_free(&c->comp);
    free(c);
}

/* Captures what `fn(out, ...)` prints into a malloc'd string. */
#define T_CAPTURE(var, call_with_out)                 \
    char *var = NULL;                                 \
    do {                                              \
        size_t var##_len = 0;                         \
        FILE *out = open_memstream(&var, &var##_len); \
        call_with_out;                                \
        fclose(out);                                  \
    } while (0)

#endif
