/* trace_edit.h — editing trace texts in the trace checker's tests: each
 * function returns a malloc'd copy of text with one change, and fails the
 * test when the text to change is not there. */
#ifndef ZGC_TESTS_TRACE_EDIT_H
#define ZGC_TESTS_TRACE_EDIT_H

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

/* Replaces the first occurrence of `from` by `to` in a copy of text. */
static inline char *subst(const char *text, const char *from, const char *to)
{
    const char *p = strstr(text, from);
    cr_assert_not_null(p, "no `%s` in the trace", from);
    size_t n = strlen(text), a = (size_t)(p - text), f = strlen(from), t = strlen(to);
    char *r = malloc(n - f + t + 1);
    memcpy(r, text, a);
    memcpy(r + a, to, t);
    memcpy(r + a + t, p + f, n - a - f + 1);
    return r;
}

/* Removes the line containing `needle`. */
static inline char *drop_line(const char *text, const char *needle)
{
    const char *p = strstr(text, needle);
    cr_assert_not_null(p);
    const char *b = p, *e = p;
    while (b > text && b[-1] != '\n') b--;
    while (*e && *e != '\n') e++;
    if (*e) e++;
    size_t n = strlen(text);
    char *r = malloc(n + 1);
    memcpy(r, text, (size_t)(b - text));
    memcpy(r + (b - text), e, n - (size_t)(e - text) + 1);
    return r;
}

/* Replaces every occurrence of `from` by `to` in a copy of text (at least one). */
static inline char *subst_all(const char *text, const char *from, const char *to)
{
    cr_assert_not_null(strstr(text, from), "no `%s` in the trace", from);
    size_t f = strlen(from), t = strlen(to), n = 0;
    for (const char *p = text; (p = strstr(p, from)); p += f) n++;
    char *r = malloc(strlen(text) + n * t + 1), *o = r;
    for (const char *p = text;;) {
        const char *q = strstr(p, from);
        if (!q) {
            strcpy(o, p);
            break;
        }
        memcpy(o, p, (size_t)(q - p));
        o += q - p;
        memcpy(o, to, t);
        o += t;
        p = q + f;
    }
    return r;
}

#endif
