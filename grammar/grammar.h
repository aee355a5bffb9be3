/* grammar.h — the grammar's interface (prefix zp_): source text to the
 * compiler's AST (compiler/zgc.h).
 *
 *   lexer.l    flex: tokens, spans, string literals
 *   parser.y   bison: the grammar; its actions build AST nodes and nothing
 *              else (no lookups, no semantics)
 *   syntax.c   the parser driver: runs the lexer and the parser, token
 *              dumps, decoding of string literals
 *
 * The grammar builds on the compiler's data structures; the compiler
 * includes nothing from here.  A compilation (compiler/pipeline.c) is
 * given zp_parse as its first pass: zc_init(&c, zp_parse).
 *
 * Errors: syntax and lexical errors are diagnostics (ZDiag) and parsing
 * goes on after them; memory comes from the compilation's arena. */
#ifndef ZGC_GRAMMAR_H
#define ZGC_GRAMMAR_H

#include "zgc.h"

typedef struct ZToken {
    int kind; /* bison token number */
    ZSpan span;
    const char *text; /* source text of the token */
} ZToken;

/* Parses src; reports syntax errors to d.  Returns a program (possibly
 * partial) even after errors; d->errors tells whether it is usable.
 * Matches ZParseFn (zgc.h). */
ZProgram *zp_parse(ZArena *a, const ZSource *src, ZDiag *d);
/* Token dump (`zgc parse --tokens`): one line per token, with spans. */
void zp_dump_tokens(FILE *out, ZArena *a, const ZSource *src, ZDiag *d);
/* For unit tests: lex the whole source into an arena vector of ZToken*. */
ZVec zp_tokenize(ZArena *a, const ZSource *src, ZDiag *d);
/* The same with the comments kept, as tokens of their own in source order
 * (the formatter and the language server: the parser never sees them). */
ZVec zp_tokenize_trivia(ZArena *a, const ZSource *src, ZDiag *d);
bool zp_is_comment(const ZToken *t);
/* Name of a token kind for printing ("identifier", "'->'", "'while'"). */
const char *zp_token_name(int kind);

#endif
