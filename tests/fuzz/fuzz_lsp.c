/* libFuzzer target: the language server (lsp/) on arbitrary input bytes:
 * the Content-Length framing, the JSON, the JSON-RPC envelope and every
 * request and notification on whatever documents the input opens.  The
 * first byte cuts the rest into pieces of that size (the framing must not
 * care how its input arrives); the server's messages go to /dev/null.
 * Any crash, sanitizer report or hang is a bug.  Seeds: whole sessions in
 * tests/fuzz/corpus/lsp. */
#include <stdint.h>
#include <stdio.h>

#include "lsp.h"

static FILE *devnull;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!devnull) devnull = fopen("/dev/null", "w");
    if (size == 0) return 0;
    size_t piece = data[0] ? data[0] : size;
    data++, size--;
    ZlServer *s = zl_server_new(devnull);
    for (size_t off = 0; off < size && !zl_server_done(s, NULL); off += piece)
        zl_server_feed(s, (const char *)data + off, size - off < piece ? size - off : piece);
    zl_server_free(s);
    return 0;
}
