/* text.c — positions and file URIs.  LSP counts characters in UTF-16 code units (the
 * protocol's default; a code point above U+FFFF is two), the compiler in
 * code points (columns, 1-based); both count lines from a `\n`. */
#define _GNU_SOURCE
#include "zl.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* The start of line `line` (0-based) in text, or len past the last one. */
static size_t line_start(const char *text, size_t len, int line)
{
    size_t i = 0;
    for (int l = 0; l < line; l++) {
        const char *nl = memchr(text + i, '\n', len - i);
        if (!nl) return len;
        i = (size_t)(nl - text) + 1;
    }
    return i;
}

/* The length in bytes of the UTF-8 sequence that starts with byte c (1 for
 * a byte that starts none). */
static size_t seq_len(unsigned char c) { return c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1; }

size_t zl_offset(const char *text, size_t len, int line, int character)
{
    if (line < 0) return 0;
    size_t i = line_start(text, len, line);
    int units = 0;
    while (i < len && text[i] != '\n' && units < character) {
        size_t k = seq_len((unsigned char)text[i]);
        if (i + k > len) k = len - i;
        units += k == 4 ? 2 : 1;
        i += k;
    }
    return i;
}

void zl_position(const char *text, size_t len, int line, int character, int *zline, int *zcol)
{
    size_t start = line_start(text, len, line < 0 ? 0 : line);
    size_t at = zl_offset(text, len, line, character);
    int col = 1;
    for (size_t i = start; i < at; i++)
        if (((unsigned char)text[i] & 0xC0) != 0x80) col++;
    *zline = (line < 0 ? 0 : line) + 1;
    *zcol = col;
}

/* UTF-16 character of compiler column `col` (1-based code points) on line
 * `line` (1-based). */
static int character(const char *text, size_t len, int line, int col)
{
    size_t i = line_start(text, len, line - 1);
    int units = 0;
    for (int c = 1; c < col && i < len && text[i] != '\n';) {
        size_t k = seq_len((unsigned char)text[i]);
        if (i + k > len) k = len - i;
        units += k == 4 ? 2 : 1;
        i += k;
        c++;
    }
    return units;
}

static json_t *pos(int line, int ch)
{
    return json_pack("{s:i,s:i}", "line", line, "character", ch);
}

json_t *zl_range(const char *text, size_t len, ZSpan at)
{
    if (at.first_line < 1) return json_pack("{s:o,s:o}", "start", pos(0, 0), "end", pos(0, 0));
    int sl = at.first_line - 1, el = at.last_line - 1;
    int sc = character(text, len, at.first_line, at.first_column);
    /* last_column is inclusive: the end is after it */
    int ec = character(text, len, at.last_line, at.last_column + 1);
    if (el < sl || (el == sl && ec < sc)) el = sl, ec = sc;
    return json_pack("{s:o,s:o}", "start", pos(sl, sc), "end", pos(el, ec));
}

/* ---- file URIs ----------------------------------------------------------------- */

char *zl_path_of(const char *uri)
{
    static const char scheme[] = "file://";
    if (strncmp(uri, scheme, sizeof scheme - 1)) {
        char *copy = zu_xmalloc(strlen(uri) + 1);
        strcpy(copy, uri);
        return copy;
    }
    const char *p = uri + sizeof scheme - 1;
    char *out = zu_xmalloc(strlen(p) + 1), *o = out;
    for (; *p; p++) {
        int hi, lo;
        if (p[0] == '%' && (hi = hexval(p[1])) >= 0 && (lo = hexval(p[2])) >= 0) {
            *o++ = (char)(hi * 16 + lo);
            p += 2;
        } else {
            *o++ = *p;
        }
    }
    *o = 0;
    return out;
}

char *zl_uri_of(const char *path)
{
    char *abs = realpath(path, NULL);
    const char *p = abs ? abs : path;
    ZBuf b = {0};
    zu_buf_puts(&b, "file://");
    for (; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (isalnum(c) || strchr("/-._~", c))
            zu_buf_putc(&b, (char)c);
        else
            zu_buf_printf(&b, "%%%02X", c);
    }
    free(abs);
    return b.data;
}
