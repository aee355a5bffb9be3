/* Diagnostic assertions shared by the front-end tests. */
#ifndef ZGC_TEST_EXPECT_H
#define ZGC_TEST_EXPECT_H
#include <criterion/criterion.h>

#include "helpers.h"

/* How many times `what` occurs in `text`. */
static inline int t_count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; p && (p = strstr(p, what)); p += strlen(what)) n++;
    return n;
}

/* Compiling `text` up to `stage` fails with exactly `errors` errors, `want`
 * ("test.zg:L:C: error: message") among them, and the note when given. */
static inline void t_expect_errors(const char *text, TStage stage, int errors, const char *want,
                                   const char *note)
{
    TComp *c = t_compile(text, stage);
    const char *got = c->diag_text ? c->diag_text : "";
    cr_expect(!c->ok, "accepted:\n%s", text);
    cr_expect(strstr(got, want) != NULL, "missing `%s` in:\n%s", want, got);
    if (note) cr_expect(strstr(got, note) != NULL, "missing note `%s` in:\n%s", note, got);
    cr_expect_eq(t_count(got, ": error: "), errors, "expected %d errors, got:\n%s", errors, got);
    t_free(c);
}
#endif
