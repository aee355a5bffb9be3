/* rpc.c — LSP's base protocol: messages framed by a `Content-Length`
 * header block, read as a push parser (the input may come in any pieces),
 * and written whole. */
#include "zl.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

void zl_framer_init(ZlFramer *f)
{
    memset(f, 0, sizeof *f);
    f->body = SIZE_MAX;
}

void zl_framer_free(ZlFramer *f) { zu_buf_free(&f->buf); }

static void drop(ZlFramer *f, size_t n)
{
    memmove(f->buf.data, f->buf.data + n, f->buf.len - n);
    f->buf.len -= n;
}

/* The Content-Length of a header block (n bytes, without the blank line),
 * or an error. */
static const char *content_length(const char *h, size_t n, size_t *out)
{
    bool found = false;
    for (size_t i = 0; i < n;) {
        size_t e = i;
        while (e < n && h[e] != '\r' && h[e] != '\n') e++;
        static const char name[] = "content-length:";
        size_t k = sizeof name - 1;
        if (e - i >= k && !strncasecmp(h + i, name, k)) {
            size_t j = i + k;
            while (j < e && (h[j] == ' ' || h[j] == '\t')) j++;
            if (j == e) return "Content-Length without a value";
            uint64_t v = 0;
            for (; j < e && isdigit((unsigned char)h[j]); j++) {
                if (v > UINT64_MAX / 10 - 10) return "Content-Length too large";
                v = v * 10 + (uint64_t)(h[j] - '0');
            }
            while (j < e && (h[j] == ' ' || h[j] == '\t')) j++;
            if (j != e) return "Content-Length is not a number";
            *out = v > SIZE_MAX / 2 ? SIZE_MAX / 2 : (size_t)v;
            found = true;
        }
        i = e;
        while (i < n && (h[i] == '\r' || h[i] == '\n')) i++;
    }
    return found ? NULL : "a header block without Content-Length";
}

void zl_framer_push(ZlFramer *f, const char *data, size_t n, ZlOnMessage *cb, void *ctx)
{
    if (f->skip) {
        size_t k = n < f->skip ? n : f->skip;
        f->skip -= k;
        data += k;
        n -= k;
    }
    for (size_t i = 0; i < n; i++) zu_buf_putc(&f->buf, data[i]);
    for (;;) {
        if (f->body == SIZE_MAX) {
            /* the headers end at a blank line: \r\n\r\n (or \n\n from a
             * lenient client) */
            const char *b = f->buf.data;
            size_t end = SIZE_MAX, after = 0;
            for (size_t i = 0; i + 1 < f->buf.len; i++) {
                if (b[i] == '\n' && b[i + 1] == '\n') {
                    end = i, after = i + 2;
                    break;
                }
                if (i + 3 < f->buf.len && !memcmp(b + i, "\r\n\r\n", 4)) {
                    end = i, after = i + 4;
                    break;
                }
            }
            if (end == SIZE_MAX) {
                if (f->buf.len > ZL_MAX_HEADER) {
                    f->buf.len = 0;
                    cb(ctx, NULL, 0, "a header block longer than 8192 bytes");
                }
                return;
            }
            size_t len = 0;
            const char *err = content_length(b, end, &len);
            drop(f, after);
            if (err) {
                cb(ctx, NULL, 0, err);
                continue;
            }
            if (len > ZL_MAX_BODY) {
                size_t k = f->buf.len < len ? f->buf.len : len;
                drop(f, k);
                f->skip = len - k;
                cb(ctx, NULL, 0, "a message longer than 64 MiB");
                if (f->skip) return;
                continue;
            }
            f->body = len;
        }
        if (f->buf.len < f->body) return;
        size_t len = f->body;
        f->body = SIZE_MAX;
        /* the body, NUL-terminated for the JSON parser, then dropped */
        char *body = zu_xmalloc(len + 1);
        memcpy(body, f->buf.data, len);
        body[len] = 0;
        drop(f, len);
        cb(ctx, body, len, NULL);
        free(body);
    }
}

void zl_send(FILE *out, json_t *msg)
{
    json_object_set_new(msg, "jsonrpc", json_string("2.0"));
    char *s = json_dumps(msg, JSON_COMPACT | JSON_ENSURE_ASCII);
    json_decref(msg);
    if (!s) zu_oom();
    size_t n = strlen(s);
    if (fprintf(out, "Content-Length: %zu\r\n\r\n", n) < 0 || fwrite(s, 1, n, out) != n ||
        fflush(out) != 0) {
        /* the client is gone: nobody to tell */
        fprintf(stderr, "zgc: lsp: cannot write a message: %s\n", strerror(errno));
    }
    free(s);
}
