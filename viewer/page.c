/* page.c — the viewer page (viewer.h): viewer/page/index.html with its
 * style, its script and the data inlined, and the page of a trace.
 *
 * index.html marks where the parts go with the comments / *@CSS@* /,
 * / *@DATA@* / and / *@JS@* / (without the spaces); the three files are
 * embedded at build time (cmake/EmbedPage.cmake: zvw_page_html, _css,
 * _js).  A trace page is about as large as the trace: the page's own
 * ~60 KB, then every line of the trace as it is, with `<`, `>` and `&`
 * escaped (6 bytes each instead of 1).
 */
#define _GNU_SOURCE
#include "viewer.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* generated: build/viewer/page.c */
extern const unsigned char zvw_page_html[], zvw_page_css[], zvw_page_js[];
extern const unsigned long zvw_page_html_len, zvw_page_css_len, zvw_page_js_len;

int zvw_put_json(FILE *out, const char *json, size_t len)
{
    size_t from = 0;
    for (size_t i = 0; i < len; i++) {
        const char *esc = json[i] == '<'   ? "\\u003c"
                          : json[i] == '>' ? "\\u003e"
                          : json[i] == '&' ? "\\u0026"
                                           : NULL;
        if (!esc) continue;
        if (fwrite(json + from, 1, i - from, out) != i - from || fputs(esc, out) < 0) return -1;
        from = i + 1;
    }
    return fwrite(json + from, 1, len - from, out) == len - from ? 0 : -1;
}

static int put_bytes(FILE *out, const unsigned char *p, size_t n)
{
    return fwrite(p, 1, n, out) == n ? 0 : -1;
}

int zvw_page_write(FILE *out, int (*data)(FILE *out, void *user), void *user)
{
    static const char *const marks[3] = {"/*@CSS@*/", "/*@DATA@*/", "/*@JS@*/"};
    const char *html = (const char *)zvw_page_html;
    size_t at = 0;
    for (int k = 0; k < 3; k++) {
        const char *m = strstr(html + at, marks[k]);
        if (!m) ZU_ICE("the viewer page has no %s", marks[k]);
        size_t pos = (size_t)(m - html);
        if (put_bytes(out, zvw_page_html + at, pos - at) != 0) return -1;
        int rc = k == 0   ? put_bytes(out, zvw_page_css, zvw_page_css_len)
                 : k == 1 ? data(out, user)
                          : put_bytes(out, zvw_page_js, zvw_page_js_len);
        if (rc != 0) return -1;
        at = pos + strlen(marks[k]);
    }
    return put_bytes(out, zvw_page_html + at, zvw_page_html_len - at);
}

/* ---- trace pages ------------------------------------------------------------ */

typedef struct trace_page {
    const ZvwTrace *t;
    const char *title;
    const char *guards;
} trace_page;

static int put_string(FILE *out, const char *s)
{
    json_t *j = json_string(s);
    if (!j) return -1; /* not UTF-8: callers pass checked text */
    char *text = json_dumps(j, JSON_ENCODE_ANY);
    json_decref(j);
    if (!text) zu_oom();
    int rc = zvw_put_json(out, text, strlen(text));
    free(text);
    return rc;
}

static int trace_data(FILE *out, void *user)
{
    const trace_page *tp = user;
    const ZvwTrace *t = tp->t;
    if (fputs("{\"mode\":\"trace\",\"title\":", out) < 0 || put_string(out, tp->title) != 0 ||
        fputs(",", out) < 0)
        return -1;
    if (tp->guards &&
        (fputs("\"guards\":", out) < 0 || zvw_put_json(out, tp->guards, strlen(tp->guards)) != 0 ||
         fputs(",", out) < 0))
        return -1;
    if (fputs("\"lines\":[\n", out) < 0) return -1;
    for (int i = 0; i < t->nlines; i++) {
        const ZvwLine *ln = &t->lines[i];
        if ((i && fputs(",\n", out) < 0) || zvw_put_json(out, t->text + ln->off, ln->len) != 0)
            return -1;
    }
    return fputs("\n]}", out) < 0 ? -1 : 0;
}

int zvw_trace_page(FILE *out, const ZvwTrace *t, const char *title, const char *guards)
{
    trace_page tp = {t, title, guards};
    return zvw_page_write(out, trace_data, &tp);
}

int zvw_write_file(const char *path, int (*write_page)(FILE *out, void *user), void *user,
                   char *err, size_t errlen)
{
    if (!strcmp(path, "-")) {
        if (write_page(stdout, user) != 0 || fflush(stdout) != 0 || ferror(stdout)) {
            snprintf(err, errlen, "cannot write to standard output: %s", strerror(errno));
            return -1;
        }
        return 0;
    }
    char *tmp;
    if (asprintf(&tmp, "%s.XXXXXX", path) < 0) zu_oom();
    int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        if (fd >= 0) close(fd), unlink(tmp);
        free(tmp);
        return -1;
    }
    int rc = write_page(f, user);
    if (fflush(f) != 0 || ferror(f)) rc = -1;
    int saved = errno;
    if (fclose(f) != 0 && rc == 0) rc = -1, saved = errno;
    /* mkstemp made it 0600; the page gets the mode of a file the shell makes */
    mode_t mask = umask(0);
    umask(mask);
    if (rc == 0 && chmod(tmp, 0666 & ~mask) != 0) rc = -1, saved = errno;
    if (rc == 0 && rename(tmp, path) != 0) rc = -1, saved = errno;
    if (rc != 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(saved));
        unlink(tmp);
    }
    free(tmp);
    return rc;
}
