/* diag.c — diagnostics: `file:line:col: error: message`, the source line
 * and a caret underline.
 *
 * A compilation reads several files (imports): a span names its file, and
 * an error in an imported file is followed by notes at the import lines
 * that brought it in; one inside a fragment expansion by notes at the
 * uses that expanded it.
 *
 * Columns count code points: a byte that is not a UTF-8 continuation byte
 * starts a new column (the lexer counts the same way), so a tab is one
 * column and the caret line reproduces tabs to stay aligned. */
#include "zgc.h"

#include <string.h>

void zd_init(ZDiag *d, const ZSource *src, FILE *out)
{
    memset(d, 0, sizeof *d);
    d->src = src;
    d->out = out ? out : stderr;
    d->max_errors = 100;
}

const ZSource *zd_source(const ZDiag *d, ZSpan at)
{
    if (at.file > 0 && d->files && at.file < d->files->len) return d->files->items[at.file];
    return d->src;
}

ZSpan zd_join(ZSpan a, ZSpan b)
{
    ZSpan r = a;
    r.last_line = b.last_line;
    r.last_column = b.last_column;
    return r;
}

static bool is_cont(unsigned char c) { return (c & 0xC0) == 0x80; }

/* Finds line `line` (1-based) in the source; returns its start and length. */
static const char *find_line(const ZSource *src, int line, size_t *len)
{
    if (!src || !src->text || line < 1) return NULL;
    const char *p = src->text, *end = src->text + src->len;
    for (int l = 1; l < line; l++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) return NULL;
        p = nl + 1;
    }
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
    if (n && p[n - 1] == '\r') n--;
    *len = n;
    return p;
}

/* Prints the line with control bytes and invalid sequences made visible
 * but without changing the column count. */
static void put_line(FILE *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\t' || (c >= 0x20 && c != 0x7f && c < 0x80))
            fputc(c, out);
        else if (c >= 0x80) {
            /* keep well-formed multi-byte sequences, replace the rest */
            int need = c >= 0xF0 && c <= 0xF4 ? 3 : c >= 0xE0 ? 2 : c >= 0xC2 && c < 0xE0 ? 1 : -1;
            if (need > 0 && i + (size_t)need < n + 0) {
                bool ok = true;
                for (int k = 1; k <= need; k++)
                    if (!is_cont((unsigned char)s[i + (size_t)k])) ok = false;
                if (ok) {
                    fwrite(s + i, 1, (size_t)need + 1, out);
                    i += (size_t)need;
                    continue;
                }
            }
            if (!is_cont(c)) fputc('?', out);
        } else
            fputc('?', out);
    }
}

/* Byte offset of column `col` (1-based) in a line of n bytes. */
static size_t col_offset(const char *line, size_t n, int col)
{
    size_t i = 0;
    for (int c = 1; i < n; i++) {
        if (is_cont((unsigned char)line[i])) continue;
        if (c == col) return i;
        c++;
    }
    return n;
}

#define EXCERPT_WIDTH 160 /* longer lines are shown as a window around the caret */

static void excerpt(ZDiag *d, ZSpan at)
{
    size_t n;
    const char *line = find_line(zd_source(d, at), at.first_line, &n);
    if (!line) return;
    int ncols = 0;
    for (size_t j = 0; j < n; j++)
        if (!is_cont((unsigned char)line[j])) ncols++;
    int first = at.first_column < 1 ? 1 : at.first_column;
    if (first > ncols + 1) first = ncols + 1;
    int last = at.last_line == at.first_line ? at.last_column : ncols;
    if (last < first) last = first;
    /* the window of columns [ws, we] that is shown */
    int ws = 1, we = ncols;
    if (ncols > EXCERPT_WIDTH) {
        ws = first > 40 ? first - 40 : 1;
        we = ws + EXCERPT_WIDTH - 1;
        if (we > ncols) we = ncols;
    }
    if (last > we) last = we >= first ? we : first;
    size_t bs = col_offset(line, n, ws), be = col_offset(line, n, we + 1);
    fprintf(d->out, "%5d | %s", at.first_line, ws > 1 ? "..." : "");
    put_line(d->out, line + bs, be - bs);
    fputs(we < ncols ? "...\n" : "\n", d->out);
    fputs("      | ", d->out);
    if (ws > 1) fputs("   ", d->out);
    for (size_t i = bs; i < n && i < col_offset(line, n, first); i++) {
        unsigned char c = (unsigned char)line[i];
        if (is_cont(c)) continue;
        fputc(c == '\t' ? '\t' : ' ', d->out);
    }
    fputc('^', d->out);
    for (int k = first + 1; k <= last; k++) fputc('~', d->out);
    fputc('\n', d->out);
}

static void report(ZDiag *d, ZDiagLevel lvl, ZSpan at, const char *fmt, va_list ap);

static void note(ZDiag *d, ZSpan at, const char *fmt, ...) ZG_PRINTF(3, 4);
static void note(ZDiag *d, ZSpan at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(d, ZD_NOTE, at, fmt, ap);
    va_end(ap);
}

/* Expansions nest at most as deep as fragments use fragments, and imports
 * as deep as files import files; the walk is bounded anyway. */
#define CHAIN_MAX 1000

/* Where an error at `at` comes from: the uses that expanded it (innermost
 * first), then the imports that read the file of the outermost use. */
static void origins(ZDiag *d, ZSpan at)
{
    int steps = 0;
    while (at.exp > 0 && d->expansions && at.exp <= d->expansions->len && steps++ < CHAIN_MAX) {
        const ZExpansion *x = d->expansions->items[at.exp - 1];
        note(d, x->at, "in fragment `%s`, expanded from here", x->fragment);
        at = x->at;
    }
    const ZSource *s = zd_source(d, at);
    while (s != d->src && s->imported_at.first_line > 0 && steps++ < CHAIN_MAX) {
        note(d, s->imported_at, "`%s` is imported here", s->path);
        s = zd_source(d, s->imported_at);
    }
}

void zd_vreport(ZDiag *d, ZDiagLevel lvl, ZSpan at, const char *fmt, va_list ap)
{
    int before = d->errors;
    report(d, lvl, at, fmt, ap);
    if (lvl == ZD_NOTE || (lvl == ZD_ERROR && d->errors == before + 1 &&
                           d->errors > (d->max_errors ? d->max_errors : 100)))
        return;
    origins(d, at);
}

static void report(ZDiag *d, ZDiagLevel lvl, ZSpan at, const char *fmt, va_list ap)
{
    if (lvl == ZD_ERROR) {
        d->errors++;
        int max = d->max_errors ? d->max_errors : 100;
        if (d->errors > max) {
            if (d->errors == max + 1) fprintf(d->out, "zgc: too many errors, stopping here\n");
            return;
        }
    } else if (lvl == ZD_NOTE) {
        int max = d->max_errors ? d->max_errors : 100;
        if (d->errors > max) return;
    }
    const char *what = lvl == ZD_ERROR ? "error" : lvl == ZD_WARNING ? "warning" : "note";
    const ZSource *src = zd_source(d, at);
    const char *path = src && src->path ? src->path : "<input>";
    if (at.first_line > 0)
        fprintf(d->out, "%s:%d:%d: %s: ", path, at.first_line, at.first_column, what);
    else
        fprintf(d->out, "%s: %s: ", path, what);
    vfprintf(d->out, fmt, ap);
    fputc('\n', d->out);
    if (at.first_line > 0) excerpt(d, at);
}

void zd_error(ZDiag *d, ZSpan at, const char *fmt, ...)
{
    d->muted = false;
    va_list ap;
    va_start(ap, fmt);
    zd_vreport(d, ZD_ERROR, at, fmt, ap);
    va_end(ap);
}

void zd_warning(ZDiag *d, ZSpan at, const char *fmt, ...)
{
    d->muted = false;
    va_list ap;
    va_start(ap, fmt);
    zd_vreport(d, ZD_WARNING, at, fmt, ap);
    va_end(ap);
}

static const char *const warning_names[] = {
#define NAME(k, name, help) name,
    ZD_WARNINGS(NAME)
#undef NAME
};
static const char *const warning_helps[] = {
#define HELP(k, name, help) help,
    ZD_WARNINGS(HELP)
#undef HELP
};

int zd_warning_lookup(const char *name)
{
    for (int i = 0; i < ZW__COUNT; i++)
        if (!strcmp(warning_names[i], name)) return i;
    return -1;
}

const char *zd_warning_name(ZWarning w) { return w < ZW__COUNT ? warning_names[w] : "?"; }
const char *zd_warning_help(ZWarning w) { return w < ZW__COUNT ? warning_helps[w] : "?"; }

void zd_warn(ZDiag *d, ZWarning w, ZSpan at, const char *fmt, ...)
{
    d->muted = (d->warn_off >> w) & 1u;
    if (d->muted) return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    d->warnings++;
    if (d->werror)
        zd_error(d, at, "%s [-Werror,-W%s]", msg, warning_names[w]);
    else
        zd_warning(d, at, "%s [-W%s]", msg, warning_names[w]);
}

void zd_note(ZDiag *d, ZSpan at, const char *fmt, ...)
{
    if (d->muted) return;
    va_list ap;
    va_start(ap, fmt);
    zd_vreport(d, ZD_NOTE, at, fmt, ap);
    va_end(ap);
}
