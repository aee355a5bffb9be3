/* zp.h — state shared by the lexer (lexer.l), the parser (parser.y) and
 * their driver (syntax.c).  Internal to grammar/: the interface is
 * grammar.h. */
#ifndef ZGC_ZP_H
#define ZGC_ZP_H
#include "grammar.h"

#define ZP_MAX_NESTING 256 /* brackets and braces open at once */
#define ZP_MAX_EXPR_DEPTH 1000

typedef struct ZParser {
    ZArena *arena;
    ZDiag *diag;
    ZProgram *prog;
    void *scanner;
    int file; /* ZSpan.file of every token */
    /* lexer position (1-based line, code-point column) */
    int line, col;
    /* the most recent token, for "unexpected `x`": a pointer into the
     * scanner's buffer, which holds the whole input and is not moved */
    const char *last_ptr;
    size_t last_len;
    int last_kind;
    /* the token before it, and where each ended (the position just after
     * it), for "expected `;` after `0`" at the end of the previous line */
    const char *prev_ptr;
    size_t prev_len;
    int prev_end_line, prev_end_col;
    int last_end_line, last_end_col;
    /* open brackets: kind ('{', '(') and where */
    char open_kind[ZP_MAX_NESTING];
    ZSpan open_at[ZP_MAX_NESTING];
    int depth;
    bool too_deep;    /* nesting limit hit: the parse is abandoned */
    ZSpan comment_at; /* where the open block comment started */
    bool in_error;    /* syntax error seen */
} ZParser;

/* text.c */
/* The most recent token's text, copied into the arena. */
const char *zp_last_text(ZParser *ps);
void zp_lex_error(ZParser *ps, ZSpan at, const char *fmt, ...) ZG_PRINTF(3, 4);
/* Decodes the body of a string literal (without quotes); reports bad
 * escapes.  triple: a """ string (indentation stripped). */
const char *zp_decode_string(ZParser *ps, const char *s, size_t n, bool triple, ZSpan at,
                             size_t *out_len);
/* Reports the first sequence that is not UTF-8; false then. */
bool zp_check_utf8(const ZSource *src, ZDiag *d);
#endif
