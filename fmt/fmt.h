/* fmt.h — the formatter (prefix zf_): `zgc fmt`, one canonical layout for
 * .zg sources, and the syntax-tree comparison that proves it keeps the
 * meaning.  A tool on top of the compiler's pipeline, like the viewer.
 *
 *   format.c   the layout: tokens with their comments (the grammar's
 *              zp_tokenize_trivia) to text
 *   same.c     structural equality of two syntax trees, spans aside
 *   cli.c      the `zgc fmt` command line
 *
 * Errors: a source that does not parse is not formatted; its diagnostics
 * go to the caller's ZDiag and zf_format returns false.  A layout that
 * would change the syntax tree is a bug in zgc (ZU_ICE): it is checked on
 * every run, before anything is written. */
#ifndef ZGC_FMT_H
#define ZGC_FMT_H

#include "zgc.h"

/* The width the layout keeps lines within when it can (code points); a
 * token longer than that (a long string) stays whole on a line of its own
 * continuation.  100: the C sources' limit (.clang-format). */
#define ZF_WIDTH 100
#define ZF_INDENT 4 /* spaces per level */

/* Formats path's text (len bytes) into *out (appended).  False, with the
 * parser's diagnostics written to diag_out, when it does not parse. */
bool zf_format(const char *path, const char *text, size_t len, FILE *diag_out, ZBuf *out);

/* Whether two programs are the same syntax tree, spans aside (names,
 * literals, operators, every list in order).  When they differ and why is
 * not NULL, appends where they first differ ("decl 3: name `a` vs `b`"). */
bool zf_same_program(const ZProgram *x, const ZProgram *y, ZBuf *why);

/* `zgc fmt [--check | --write] [FILES...]`: argv[0] is "fmt". */
int zf_main(int argc, char **argv);
extern const char zf_usage[];

#endif
