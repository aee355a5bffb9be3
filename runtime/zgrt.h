/* zgrt.h — the public interface of the zgc runtime library (libzgrt).
 *
 * This is the only header a user needs: it describes workflow values and
 * the C interface of `extern pure` and `effect` actions.
 *
 * A `.zg` declaration
 *
 *     extern pure score(text: str) -> float;
 *     effect send_reply(to: str, body: str) -> str;
 *
 * binds to C functions with the signature zgrt_action_fn:
 *
 *     int zg_score(zgrt_call *call);
 *     int zg_send_reply(zgrt_call *call);
 *
 * given on the `zgc build` command line (`zgc build flow.zg actions.c`).
 * The function reads its arguments with zgrt_arg_*() and sets every result
 * with zgrt_ret_*(), then returns 0; on failure it returns
 * zgrt_fail(call, "…"), which stops the run with that message, the action's
 * name, its lifeline and its source location.
 *
 * Threading: an action runs on the thread of its lifeline; actions of
 * different lifelines may run at the same time.  `extern pure` functions
 * must not have side effects; `effect` functions may.  A zgrt_call and the
 * values it hands out are valid only during the call.
 */
#ifndef ZGRT_H
#define ZGRT_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The kinds of values. */
typedef enum zgrt_tag {
    ZGRT_UNDEF = 0, /* a variable without a value */
    ZGRT_BOOL = 1,
    ZGRT_INT = 2,   /* int64_t */
    ZGRT_FLOAT = 3, /* finite double */
    ZGRT_STR = 4,   /* immutable UTF-8 */
    ZGRT_JSON = 5,  /* any JSON value */
    ZGRT_ENUM = 6,  /* the index of an enum member */
} zgrt_tag;

/* An immutable string: `len` bytes of UTF-8 followed by a NUL. */
typedef struct zgrt_str {
    int64_t len;
    char data[];
} zgrt_str;

/* A value: 16 bytes, a tag and a payload.  An enum value's payload is
 * (enum index << 32) | member index, so a value names its enum; enum
 * indices count the program's enum declarations from 0. */
typedef struct zgrt_value {
    int64_t tag; /* zgrt_tag */
    union {
        int64_t i;         /* ZGRT_INT, ZGRT_BOOL (0/1), ZGRT_ENUM (see above) */
        double f;          /* ZGRT_FLOAT */
        const zgrt_str *s; /* ZGRT_STR */
        void *j;           /* ZGRT_JSON: a jansson json_t * */
    } u;
} zgrt_value;

/* ---- user actions ---------------------------------------------------- */

typedef struct zgrt_call zgrt_call;
typedef int (*zgrt_action_fn)(zgrt_call *call);

/* The action's name, and the lifeline it runs on. */
const char *zgrt_call_action(const zgrt_call *call);
const char *zgrt_call_lifeline(const zgrt_call *call);
/* The call's idempotency key, "RUN/LIFELINE/POSITION": the run's id (a
 * durable run's id; another run has a random one), the lifeline, and the
 * position of the call on its lifeline (its event index, or for a call in
 * a parallel branch the branch's path and the call's position in it,
 * "5.2/3").  A durable run that is resumed after a crash repeats at most
 * the one call of each lifeline that was in flight at the crash (started,
 * its result not yet committed), with the same key, so an effect can use
 * the key to do its work once; a call whose result was committed is never
 * repeated.  The string is valid during the call. */
const char *zgrt_call_key(const zgrt_call *call);

/* Arguments, in declaration order.  The accessor must match the declared
 * type (checked: a mismatch fails the run). */
int zgrt_argc(const zgrt_call *call);
const zgrt_value *zgrt_arg(const zgrt_call *call, int i);
const char *zgrt_arg_str(zgrt_call *call, int i); /* NUL-terminated */
int64_t zgrt_arg_int(zgrt_call *call, int i);
double zgrt_arg_float(zgrt_call *call, int i);
bool zgrt_arg_bool(zgrt_call *call, int i);
int zgrt_arg_enum(zgrt_call *call, int i); /* member index */
/* A json argument as JSON text (valid during the call). */
const char *zgrt_arg_json(zgrt_call *call, int i);

/* Results, in declaration order; every result must be set. */
int zgrt_resc(const zgrt_call *call);
void zgrt_ret_str(zgrt_call *call, int i, const char *utf8);
void zgrt_ret_int(zgrt_call *call, int i, int64_t v);
void zgrt_ret_float(zgrt_call *call, int i, double v);
void zgrt_ret_bool(zgrt_call *call, int i, bool v);
void zgrt_ret_enum(zgrt_call *call, int i, int member);
/* A json result from JSON text; returns -1 (and fails the call) if the
 * text is not JSON. */
int zgrt_ret_json(zgrt_call *call, int i, const char *json_text);

/* Records a failure; `return zgrt_fail(call, "…", …);` */
int zgrt_fail(zgrt_call *call, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif
