/* lsp.h — the language server (prefix zl_): `zgc lsp`, the Language
 * Server Protocol over standard input and output, on top of the
 * compiler's pipeline and the formatter.
 *
 *   rpc.c       the framing (Content-Length headers) as a push parser, and
 *               JSON-RPC messages out
 *   server.c    the session: lifecycle, open documents and their edits,
 *               the requests
 *   index.c     one analysis of a document: the compiler's diagnostics,
 *               every name's occurrences and what it refers to, hovers,
 *               symbols
 *   text.c      positions: LSP's UTF-16 line/character against byte
 *               offsets and the compiler's code-point columns
 *
 * Errors: a malformed message or an unknown method is a JSON-RPC error
 * response (or, for a notification, nothing) and the server goes on; only
 * `exit` or the end of its input ends it.  Out of memory is zu_oom. */
#ifndef ZGC_LSP_H
#define ZGC_LSP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* A session.  Messages it sends go to out. */
typedef struct ZlServer ZlServer;
ZlServer *zl_server_new(FILE *out);
/* Hands n bytes of the input to the server, which handles every whole
 * message in them (and keeps the rest for the next call). */
void zl_server_feed(ZlServer *s, const char *data, size_t n);
/* After `exit`: true, with the exit status (0 when `shutdown` came
 * first, 1 otherwise). */
bool zl_server_done(const ZlServer *s, int *status);
void zl_server_free(ZlServer *s);

/* `zgc lsp`: argv[0] is "lsp". */
int zl_main(int argc, char **argv);
extern const char zl_usage[];

#endif
