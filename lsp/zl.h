/* zl.h — what the language server's files share (internal to lsp/; the
 * interface is lsp.h). */
#ifndef ZGC_ZL_H
#define ZGC_ZL_H

#include <jansson.h>

#include "lsp.h"
#include "zgc.h"

/* ---- rpc.c ---------------------------------------------------------------- */

/* The largest message body taken; a longer one is skipped with an error
 * (64 MiB: a 10,000-statement workflow is about 400 KB). */
#define ZL_MAX_BODY ((size_t)64 << 20)
/* The longest header block before its blank line. */
#define ZL_MAX_HEADER 8192

/* Called for each message body, or with body NULL and err set when the
 * framing is broken (the bytes in question are dropped). */
typedef void ZlOnMessage(void *ctx, const char *body, size_t len, const char *err);

typedef struct ZlFramer {
    ZBuf buf;
    size_t body; /* length of the body being read; SIZE_MAX while in headers */
    size_t skip; /* bytes still to drop (a body over ZL_MAX_BODY) */
} ZlFramer;

void zl_framer_init(ZlFramer *f);
void zl_framer_push(ZlFramer *f, const char *data, size_t n, ZlOnMessage *cb, void *ctx);
void zl_framer_free(ZlFramer *f);
/* Writes one message (Content-Length framing); takes the reference to msg. */
void zl_send(FILE *out, json_t *msg);

/* ---- text.c ----------------------------------------------------------------- */

/* The byte offset of LSP position (line, UTF-16 character) in text; past
 * the end of a line it is the line's end, past the last line the text's
 * end. */
size_t zl_offset(const char *text, size_t len, int line, int character);
/* An LSP range {start, end} for a compiler span (1-based, code points,
 * last inclusive) in text. */
json_t *zl_range(const char *text, size_t len, ZSpan at);
/* The compiler's (line, code-point column) of an LSP position. */
void zl_position(const char *text, size_t len, int line, int character, int *zline, int *zcol);

/* The file path of a file:// URI (percent-decoded), or the URI itself;
 * the file:// URI of a path (made absolute).  Both malloc'd. */
char *zl_path_of(const char *uri);
char *zl_uri_of(const char *path);

/* ---- index.c ------------------------------------------------------------------ */

typedef struct ZlIndex ZlIndex;
/* Compiles text (through the checks, every workflow) and indexes it. */
ZlIndex *zl_index_new(const char *path, const char *text, size_t len);
void zl_index_free(ZlIndex *ix);
/* LSP Diagnostic[] for uri. */
json_t *zl_index_diagnostics(ZlIndex *ix, const char *uri);
/* The requests at a compiler position; json null when nothing is there. */
json_t *zl_index_definition(ZlIndex *ix, const char *uri, int line, int col);
json_t *zl_index_references(ZlIndex *ix, const char *uri, int line, int col, bool with_decl);
json_t *zl_index_hover(ZlIndex *ix, int line, int col);
json_t *zl_index_symbols(ZlIndex *ix);
json_t *zl_index_completion(ZlIndex *ix);

#endif
