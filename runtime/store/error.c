/* error.c — the calling thread's last message (zst_error). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "zst_internal.h"

static __thread char zst_msg[512];

int zst_fail(int code, const char *fmt, ...)
{
    char buf[sizeof zst_msg]; /* fmt's arguments may be zst_error() itself */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    memcpy(zst_msg, buf, sizeof buf);
    return code;
}

const char *zst_error(void) { return zst_msg; }
