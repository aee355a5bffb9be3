/* http.h — one HTTP POST of a JSON body over libcurl, for the model
 * backends of models.c.  Internal to the runtime (zri_ prefix, hidden). */
#ifndef ZGRT_HTTP_H
#define ZGRT_HTTP_H

#include <stddef.h>

#include "rt.h"

typedef struct zri_http_reply {
    long status;        /* the HTTP status code */
    char *body;         /* malloc'd, NUL-terminated (len bytes before the NUL) */
    size_t len;
    double retry_after; /* the Retry-After header in seconds, or -1 */
} zri_http_reply;

enum {
    ZRI_HTTP_OK = 0,         /* a reply arrived (any status) */
    ZRI_HTTP_TRANSPORT = -1, /* no reply: connection, TLS, protocol error */
    ZRI_HTTP_TIMEOUT = -2,   /* no complete reply within the time limit */
    ZRI_HTTP_CANCELLED = -3, /* *cancel became non-zero */
    ZRI_HTTP_SETUP = -4,     /* libcurl could not be set up (or out of memory) */
};

/* POSTs body (JSON) to url with `Authorization: Bearer <bearer>` when
 * bearer is non-NULL and non-empty.  Gives up after timeout_s seconds and
 * within about 0.1 s of *cancel becoming non-zero.  Returns ZRI_HTTP_OK
 * with the reply in *out (release with zri_http_reply_free), or a negative
 * ZRI_HTTP_* code with a message in err; the message never contains the
 * bearer token. */
ZRI_HIDDEN int zri_http_post(const char *url, const char *bearer, const char *body,
                             double timeout_s, volatile int *cancel, zri_http_reply *out,
                             char *err, size_t errlen);
ZRI_HIDDEN void zri_http_reply_free(zri_http_reply *r);
/* Releases libcurl's global state; no call may be running. */
ZRI_HIDDEN void zri_http_shutdown(void);

#endif
