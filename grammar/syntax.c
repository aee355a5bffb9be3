/* syntax.c — the parser driver: runs the flex lexer and the bison parser
 * (lexer.l, parser.y) over a source, dumps tokens, names token kinds. */
#include "zp.h"

#include <stdlib.h>
#include <string.h>

#include "parser.h"
#define YYSTYPE ZPYSTYPE
#define YYLTYPE ZPYLTYPE
#include "lexer.h"

static void *scanner_new(ZParser *ps, const ZSource *src, YY_BUFFER_STATE *buf)
{
    yyscan_t sc;
    if (zpylex_init_extra(ps, &sc) != 0) ZU_ICE("cannot create the lexer");
    *buf = zpy_scan_bytes(src->text, (int)src->len, sc);
    ps->line = ps->col = 1;
    return sc;
}

static void scanner_free(void *sc, YY_BUFFER_STATE buf)
{
    zpy_delete_buffer(buf, sc);
    zpylex_destroy(sc);
}

ZProgram *zp_parse(ZArena *a, const ZSource *src, ZDiag *d)
{
    ZProgram *p = zu_alloc(a, sizeof *p);
    p->src = src;
    if (src->len > (size_t)0x7fffffff) {
        zd_error(d, (ZSpan){.file = src->index}, "source file too large");
        return p;
    }
    if (!zp_check_utf8(src, d)) return p;
    ZParser ps = {.arena = a, .diag = d, .prog = p, .file = src->index};
    YY_BUFFER_STATE buf;
    ps.scanner = scanner_new(&ps, src, &buf);
    int rc = zpyparse(ps.scanner, &ps);
    if (rc != 0 && d->errors == 0)
        zd_error(d, (ZSpan){.file = src->index}, "cannot parse this file");
    scanner_free(ps.scanner, buf);
    return p;
}

static ZVec tokenize(ZArena *a, const ZSource *src, ZDiag *d, bool comments)
{
    ZVec out = {0};
    if (!zp_check_utf8(src, d)) return out;
    ZParser ps = {.arena = a, .diag = d, .file = src->index, .keep_comments = comments};
    YY_BUFFER_STATE buf;
    ps.scanner = scanner_new(&ps, src, &buf);
    for (;;) {
        YYSTYPE v;
        ZSpan loc;
        memset(&v, 0, sizeof v);
        int k = zpylex(&v, &loc, ps.scanner);
        if (k == 0) break;
        ZToken *t = zu_alloc(a, sizeof *t);
        t->kind = k;
        t->span = loc;
        t->text = zp_last_text(&ps);
        zu_vec_push(a, &out, t);
    }
    scanner_free(ps.scanner, buf);
    return out;
}

ZVec zp_tokenize(ZArena *a, const ZSource *src, ZDiag *d) { return tokenize(a, src, d, false); }

ZVec zp_tokenize_trivia(ZArena *a, const ZSource *src, ZDiag *d)
{
    return tokenize(a, src, d, true);
}

bool zp_is_comment(const ZToken *t) { return t->kind == COMMENT; }

const char *zp_token_name(int kind)
{
    switch (kind) {
    case IDENT: return "identifier";
    case INT_LIT: return "integer";
    case FLOAT_LIT: return "float";
    case STR_LIT: return "string";
    case ARROW:
    case EQ:
    case NE:
    case LE:
    case GE:
    case AND:
    case OR: return "operator";
    case COMMENT: return "comment";
    default:
        if (kind > 0 && kind < 128) return "punct";
        return "keyword";
    }
}

void zp_dump_tokens(FILE *out, ZArena *a, const ZSource *src, ZDiag *d)
{
    ZVec v = zp_tokenize(a, src, d);
    for (int i = 0; i < v.len; i++) {
        ZToken *t = v.items[i];
        fprintf(out, "%d:%d-%d:%d %s `%s`\n", t->span.first_line, t->span.first_column,
                t->span.last_line, t->span.last_column, zp_token_name(t->kind), t->text);
    }
}
