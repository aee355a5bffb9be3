/* helpers.h — support for the runtime tests: running a hand-written
 * program through zgrt_main with stdout/stderr captured, reading traces,
 * and checking a trace against the MSC it describes. */
#ifndef ZGRT_TEST_HELPERS_H
#define ZGRT_TEST_HELPERS_H

#include <jansson.h>

#include "rt.h"

/* The result of one zgrt_main call. */
typedef struct run_out {
    int status;
    char *out, *err; /* captured stdout and stderr (malloc'd) */
} run_out;

/* Runs zgrt_main(p, argv) in this process with stdout and stderr
 * redirected; args is NULL-terminated (without the program name). */
run_out run_prog(const zgrt_program *p, const char *const *args);
void run_out_free(run_out *r);

/* A fresh temporary file name (malloc'd) in the test's directory. */
char *temp_path(const char *stem);
/* The whole file (malloc'd), or NULL. */
char *read_file(const char *path);
/* The lines of a JSON Lines file as a JSON array (new reference), or NULL. */
json_t *read_jsonl(const char *path);

/* Checks a trace: start lines for every lifeline, events with indices
 * 1..n per lifeline, every receive matching one send (same id, channel,
 * endpoints, values, control), per-channel FIFO numbering, and every
 * vector clock equal to the number of causally preceding events per
 * lifeline computed by graph reachability over the rebuilt MSC; an end
 * line last.  Returns 0, or -1 with the first problem in why. */
int check_trace(json_t *lines, char *why, size_t whylen);

/* Value constructors for descriptors and bodies. */
static inline zgrt_value v_int(int64_t i)
{
    zgrt_value v = {.tag = ZGRT_INT, .u.i = i};
    return v;
}
static inline zgrt_value v_bool(int b)
{
    zgrt_value v = {.tag = ZGRT_BOOL, .u.i = b != 0};
    return v;
}
static inline zgrt_value v_float(double f)
{
    zgrt_value v = {.tag = ZGRT_FLOAT, .u.f = f};
    return v;
}
static inline zgrt_value v_enum(int e, int m)
{
    zgrt_value v = {.tag = ZGRT_ENUM, .u.i = ((int64_t)e << 32) | m};
    return v;
}
/* A str value in the context's heap. */
zgrt_value v_str(zgrt_ctx *ctx, const char *s);

#define T_BOOL ((zgrt_type){ZGRT_BOOL, -1})
#define T_INT ((zgrt_type){ZGRT_INT, -1})
#define T_FLOAT ((zgrt_type){ZGRT_FLOAT, -1})
#define T_STR ((zgrt_type){ZGRT_STR, -1})
#define T_JSON ((zgrt_type){ZGRT_JSON, -1})
#define T_ENUM(e) ((zgrt_type){ZGRT_ENUM, (e)})

#endif
