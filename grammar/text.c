/* text.c — what the lexer and the parser ask of the source text: token
 * text, lexical errors, UTF-8 validation and the decoding of string
 * literals.  Called by lexer.l, parser.y and syntax.c; calls neither. */
#include "zp.h"

#include <stdlib.h>
#include <string.h>

const char *zp_last_text(ZParser *ps)
{
    return ps->last_ptr ? zu_strndup(ps->arena, ps->last_ptr, ps->last_len) : "";
}

void zp_lex_error(ZParser *ps, ZSpan at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    zd_vreport(ps->diag, ZD_ERROR, at, fmt, ap);
    va_end(ap);
}

/* Returns the length of the valid UTF-8 sequence at s (n bytes left), or 0. */
static int utf8_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    if (c < 0x80) return 1;
    int need;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF)
        need = 1;
    else if (c == 0xE0)
        need = 2, lo = 0xA0;
    else if (c >= 0xE1 && c <= 0xEC)
        need = 2;
    else if (c == 0xED)
        need = 2, hi = 0x9F; /* no surrogates */
    else if (c >= 0xEE && c <= 0xEF)
        need = 2;
    else if (c == 0xF0)
        need = 3, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3)
        need = 3;
    else if (c == 0xF4)
        need = 3, hi = 0x8F;
    else
        return 0;
    if ((size_t)need >= n) return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (int i = 2; i <= need; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    return need + 1;
}

/* Reports the first invalid UTF-8 sequence; returns false if there is one. */
bool zp_check_utf8(const ZSource *src, ZDiag *d)
{
    const unsigned char *s = (const unsigned char *)src->text;
    int line = 1, col = 1;
    for (size_t i = 0; i < src->len;) {
        int k = utf8_len(s + i, src->len - i);
        if (k == 0) {
            ZSpan at = {line, col, line, col, src->index, 0};
            zd_error(d, at, "invalid UTF-8 (byte 0x%02X): source files must be UTF-8", s[i]);
            return false;
        }
        if (s[i] == '\n')
            line++, col = 1;
        else
            col++;
        i += (size_t)k;
    }
    return true;
}

static void put_utf8(ZBuf *b, uint32_t cp)
{
    if (cp < 0x80)
        zu_buf_putc(b, (char)cp);
    else if (cp < 0x800) {
        zu_buf_putc(b, (char)(0xC0 | (cp >> 6)));
        zu_buf_putc(b, (char)(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        zu_buf_putc(b, (char)(0xE0 | (cp >> 12)));
        zu_buf_putc(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
        zu_buf_putc(b, (char)(0x80 | (cp & 0x3F)));
    } else {
        zu_buf_putc(b, (char)(0xF0 | (cp >> 18)));
        zu_buf_putc(b, (char)(0x80 | ((cp >> 12) & 0x3F)));
        zu_buf_putc(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
        zu_buf_putc(b, (char)(0x80 | (cp & 0x3F)));
    }
}

/* Strips the common leading indentation of a """ string (see
 * docs/language.md, "Strings"): a newline right after the opening quotes is
 * dropped, the smallest indentation of the non-blank lines (the first line
 * counts only when it starts on a line of its own) is removed from every
 * line, and a last line holding only blanks before the closing quotes is
 * dropped. */
static char *dedent(const char *s, size_t n, size_t *out_n)
{
    bool own_first = false;
    if (n && s[0] == '\n')
        s++, n--, own_first = true;
    else if (n >= 2 && s[0] == '\r' && s[1] == '\n')
        s += 2, n -= 2, own_first = true;
    size_t min = SIZE_MAX;
    size_t i = 0;
    for (int line = 0; i <= n; line++) {
        size_t start = i;
        while (i < n && s[i] != '\n') i++;
        size_t ind = 0;
        while (start + ind < i && (s[start + ind] == ' ' || s[start + ind] == '\t')) ind++;
        bool blank = start + ind == i || (start + ind + 1 == i && s[i - 1] == '\r');
        if (!blank && (line > 0 || own_first) && ind < min) min = ind;
        i++;
    }
    if (min == SIZE_MAX) min = 0;
    char *out = malloc(n + 1);
    size_t o = 0;
    i = 0;
    for (int line = 0; i <= n; line++) {
        size_t start = i;
        while (i < n && s[i] != '\n') i++;
        size_t skip = 0;
        if (line > 0 || own_first)
            while (skip < min && start + skip < i &&
                   (s[start + skip] == ' ' || s[start + skip] == '\t'))
                skip++;
        memcpy(out + o, s + start + skip, i - start - skip);
        o += i - start - skip;
        if (i < n) out[o++] = '\n';
        i++;
    }
    /* drop a trailing blank line (the closing quotes on a line of their own) */
    size_t k = o;
    while (k > 0 && (out[k - 1] == ' ' || out[k - 1] == '\t')) k--;
    if (k > 0 && out[k - 1] == '\n')
        o = k - 1;
    else if (k == 0)
        o = 0;
    out[o] = 0;
    *out_n = o;
    return out;
}

const char *zp_decode_string(ZParser *ps, const char *s, size_t n, bool triple, ZSpan at,
                             size_t *out_len)
{
    char *owned = NULL;
    if (triple) {
        owned = dedent(s, n, &n);
        s = owned;
    }
    ZBuf b = {0};
    zu_buf_puts(&b, "");
    int col = at.first_column + (triple ? 3 : 1); /* column of s[i] (single-line strings) */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        /* raw control characters are refused: a NUL would cut the text in
         * some execution modes and not in others, and the rest are
         * invisible in the source; tabs, and line breaks of """ strings,
         * are text */
        if ((c < 0x20 || c == 0x7f) && c != '\t' && !(triple && (c == '\n' || c == '\r'))) {
            ZSpan bad =
                triple ? at : (ZSpan){at.first_line, col, at.first_line, col, at.file, at.exp};
            if (c == 0)
                zp_lex_error(ps, bad, "a NUL byte is not allowed in a string");
            else
                zp_lex_error(ps, bad,
                             "raw control character U+%04X in a string: write it as `\\u{%x}`", c,
                             c);
            col++;
            continue;
        }
        if (c != '\\') {
            zu_buf_putc(&b, (char)c);
            if ((c & 0xC0) != 0x80) col++;
            continue;
        }
        ZSpan esc =
            triple ? at : (ZSpan){at.first_line, col, at.first_line, col + 1, at.file, at.exp};
        char e = i + 1 < n ? s[i + 1] : 0;
        i++;
        col += 2;
        switch (e) {
        case 'n': zu_buf_putc(&b, '\n'); break;
        case 't': zu_buf_putc(&b, '\t'); break;
        case 'r': zu_buf_putc(&b, '\r'); break;
        case '"': zu_buf_putc(&b, '"'); break;
        case '\\': zu_buf_putc(&b, '\\'); break;
        case 'u': {
            if (i + 1 >= n || s[i + 1] != '{') {
                zp_lex_error(ps, esc, "invalid escape `\\u`: write `\\u{hex}`");
                break;
            }
            size_t j = i + 2;
            uint32_t cp = 0;
            int digits = 0;
            while (j < n && digits <= 6) {
                char h = s[j];
                int v = h >= '0' && h <= '9'   ? h - '0'
                        : h >= 'a' && h <= 'f' ? h - 'a' + 10
                        : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                               : -1;
                if (v < 0) break;
                cp = cp * 16 + (uint32_t)v;
                digits++;
                j++;
            }
            if (j >= n || s[j] != '}' || digits == 0 || digits > 6) {
                zp_lex_error(ps, esc, "invalid escape: `\\u{…}` takes 1 to 6 hex digits");
                break;
            }
            if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
                zp_lex_error(ps, esc, "invalid escape: U+%04X is not allowed in a string", cp);
            } else
                put_utf8(&b, cp);
            col += (int)(j - i);
            i = j;
            break;
        }
        default:
            if (e)
                zp_lex_error(ps, esc,
                             "unknown escape `\\%c` (use \\n \\t \\r \\\" \\\\ or \\u{hex})", e);
            else
                zp_lex_error(ps, esc, "unknown escape `\\` at the end of the string");
        }
    }
    const char *r = zu_strndup(ps->arena, b.data, b.len);
    *out_len = b.len;
    zu_buf_free(&b);
    free(owned);
    return r;
}
