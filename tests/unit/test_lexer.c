/* Lexer: token kinds, spans (1-based, code-point columns), literals and
 * lexical errors. */
#include <criterion/criterion.h>

#include "helpers.h"
#include "zp.h"
#include "parser.h"

typedef struct Lexed {
    ZArena *arena;
    ZSource src;
    ZDiag diag;
    char *errs;
    size_t errs_len;
    FILE *errf;
    ZVec toks;
} Lexed;

static Lexed *lex_n(const char *text, size_t len)
{
    Lexed *l = calloc(1, sizeof *l);
    l->arena = zu_arena_new();
    l->src = (ZSource){.path = "t.zg", .text = text, .len = len};
    l->errf = open_memstream(&l->errs, &l->errs_len);
    zd_init(&l->diag, &l->src, l->errf);
    l->toks = zp_tokenize(l->arena, &l->src, &l->diag);
    fflush(l->errf);
    return l;
}

static Lexed *lex(const char *text) { return lex_n(text, strlen(text)); }

static void lex_free(Lexed *l)
{
    fclose(l->errf);
    free(l->errs);
    zu_arena_free(l->arena);
    free(l);
}

static ZToken *tk(Lexed *l, int i) { return l->toks.items[i]; }

static void expect_span(ZToken *t, int l1, int c1, int l2, int c2)
{
    cr_expect_eq(t->span.first_line, l1, "first_line %d != %d (`%s`)", t->span.first_line, l1,
                 t->text);
    cr_expect_eq(t->span.first_column, c1, "first_column %d != %d (`%s`)", t->span.first_column, c1,
                 t->text);
    cr_expect_eq(t->span.last_line, l2, "last_line %d != %d (`%s`)", t->span.last_line, l2,
                 t->text);
    cr_expect_eq(t->span.last_column, c2, "last_column %d != %d (`%s`)", t->span.last_column, c2,
                 t->text);
}

Test(lexer, keywords_and_identifiers)
{
    Lexed *l = lex("lifeline A, Bob_2;\nwhile whiles");
    cr_assert_eq(l->toks.len, 7);
    cr_expect_eq(tk(l, 0)->kind, KW_LIFELINE);
    cr_expect_eq(tk(l, 1)->kind, IDENT);
    cr_expect_eq(tk(l, 2)->kind, ',');
    cr_expect_eq(tk(l, 3)->kind, IDENT);
    cr_expect_str_eq(tk(l, 3)->text, "Bob_2");
    cr_expect_eq(tk(l, 4)->kind, ';');
    cr_expect_eq(tk(l, 5)->kind, KW_WHILE);
    cr_expect_eq(tk(l, 6)->kind, IDENT); /* `whiles` is not a keyword */
    expect_span(tk(l, 0), 1, 1, 1, 8);
    expect_span(tk(l, 3), 1, 13, 1, 17);
    expect_span(tk(l, 5), 2, 1, 2, 5);
    cr_expect_eq(l->diag.errors, 0);
    lex_free(l);
}

Test(lexer, import_and_fragment)
{
    Lexed *l = lex("import \"lib/a.zg\";\nfragment f(");
    cr_assert_eq(l->toks.len, 6);
    cr_expect_eq(tk(l, 0)->kind, KW_IMPORT);
    cr_expect_eq(tk(l, 1)->kind, STR_LIT);
    cr_expect_eq(tk(l, 3)->kind, KW_FRAGMENT);
    expect_span(tk(l, 1), 1, 8, 1, 17);
    expect_span(tk(l, 3), 2, 1, 2, 8);
    cr_expect_eq(tk(l, 1)->span.file, 0);
    lex_free(l);
}

Test(lexer, every_keyword_is_reserved)
{
    const char *kws[] = {"lifeline", "const",  "enum",   "var",         "guard",        "llm",
                         "pure",     "extern", "effect", "human",       "workflow",     "return",
                         "if",       "else",   "while",  "skip",        "parallel",     "branch",
                         "coregion", "prev",   "since",  "once",        "historically", "past",
                         "seen",     "true",   "false",  "null",        "bool",         "int",
                         "float",    "str",    "json",   "store",       "cell",         "tools",
                         "atomic",   "read",   "write",  "consistency", "import",       "fragment"};
    for (size_t i = 0; i < sizeof kws / sizeof kws[0]; i++) {
        Lexed *l = lex(kws[i]);
        cr_assert_eq(l->toks.len, 1);
        cr_expect_neq(tk(l, 0)->kind, IDENT, "`%s` lexed as an identifier", kws[i]);
        lex_free(l);
    }
}

Test(lexer, operators)
{
    Lexed *l = lex("-> == != <= >= && || < > ! ? @ . + - * / % = : ;");
    int want[] = {ARROW, EQ,  NE,  LE,  GE,  AND, OR,  '<', '>', '!', '?',
                  '@',   '.', '+', '-', '*', '/', '%', '=', ':', ';'};
    cr_assert_eq(l->toks.len, (int)(sizeof want / sizeof want[0]));
    for (int i = 0; i < l->toks.len; i++) cr_expect_eq(tk(l, i)->kind, want[i], "token %d", i);
    lex_free(l);
}

Test(lexer, numbers)
{
    Lexed *l = lex("42 3.5 1e-3 2.5E+2 9223372036854775807");
    cr_assert_eq(l->toks.len, 5);
    cr_expect_eq(tk(l, 0)->kind, INT_LIT);
    cr_expect_eq(tk(l, 1)->kind, FLOAT_LIT);
    cr_expect_eq(tk(l, 2)->kind, FLOAT_LIT);
    cr_expect_eq(tk(l, 3)->kind, FLOAT_LIT);
    cr_expect_eq(tk(l, 4)->kind, INT_LIT);
    cr_expect_eq(l->diag.errors, 0);
    lex_free(l);
}

Test(lexer, integer_overflow_is_an_error)
{
    Lexed *l = lex("x = 9223372036854775808;");
    cr_expect_eq(l->diag.errors, 1);
    cr_expect(strstr(
        l->errs, "t.zg:1:5: error: integer literal `9223372036854775808` does not fit in 64 bits"));
    lex_free(l);
}

Test(lexer, float_out_of_range)
{
    Lexed *l = lex("1e999");
    cr_expect(strstr(l->errs, "t.zg:1:1: error: float literal `1e999` is out of range"));
    lex_free(l);
}

Test(lexer, columns_count_code_points_and_tabs)
{
    /* "é" is two bytes but one column; a tab is one column */
    Lexed *l = lex("\"é\"\tx");
    cr_assert_eq(l->toks.len, 2);
    expect_span(tk(l, 0), 1, 1, 1, 3);
    expect_span(tk(l, 1), 1, 5, 1, 5);
    lex_free(l);
}

Test(lexer, comments)
{
    Lexed *l = lex("a // line comment\n/* block\n comment */ b");
    cr_assert_eq(l->toks.len, 2);
    expect_span(tk(l, 1), 3, 13, 3, 13);
    lex_free(l);
}

Test(lexer, unterminated_comment)
{
    Lexed *l = lex("a\n  /* no end");
    cr_expect_eq(l->diag.errors, 1);
    cr_expect(strstr(l->errs, "t.zg:2:3: error: unterminated comment"));
    lex_free(l);
}

Test(lexer, multiline_token_span)
{
    Lexed *l = lex("x \"\"\"one\n  two\"\"\" y");
    cr_assert_eq(l->toks.len, 3);
    expect_span(tk(l, 1), 1, 3, 2, 8);
    expect_span(tk(l, 2), 2, 10, 2, 10);
    lex_free(l);
}

Test(lexer, unterminated_strings)
{
    Lexed *l = lex("\"abc\nx");
    cr_expect(strstr(l->errs, "t.zg:1:1: error: unterminated string"));
    lex_free(l);
    l = lex("\"\"\"abc\n\"");
    cr_expect(strstr(l->errs, "t.zg:1:1: error: unterminated string"));
    lex_free(l);
}

Test(lexer, raw_control_characters_in_strings)
{
    /* a raw NUL, like its escape \u{0}, is refused; other raw control
     * characters must be written as escapes; tabs are text, and so are
     * the line breaks of triple-quoted strings */
    static const char nul[] = "x = \"a\0b\";";
    Lexed *l = lex_n(nul, sizeof nul - 1);
    cr_expect_eq(l->diag.errors, 1);
    cr_expect(strstr(l->errs, "t.zg:1:7: error: a NUL byte is not allowed in a string"), "%s",
              l->errs);
    lex_free(l);
    l = lex("x = \"a\x1b[1m\";\ny = \"\x7f\";");
    cr_expect_eq(l->diag.errors, 2);
    cr_expect(strstr(l->errs, "t.zg:1:7: error: raw control character U+001B in a string: write "
                              "it as `\\u{1b}`"),
              "%s", l->errs);
    cr_expect(strstr(l->errs, "t.zg:2:6: error: raw control character U+007F"), "%s", l->errs);
    lex_free(l);
    l = lex("x = \"a\tb\";\ny = \"\"\"\n  one\r\n  two\n  \"\"\";\nz = \"\\u{1b}\";");
    cr_expect_eq(l->diag.errors, 0, "%s", l->errs);
    lex_free(l);
}

Test(lexer, unexpected_characters)
{
    Lexed *l = lex("a # b € c");
    cr_expect_eq(l->diag.errors, 2);
    cr_expect(strstr(l->errs, "t.zg:1:3: error: unexpected character `#`"));
    cr_expect(strstr(l->errs, "t.zg:1:7: error: unexpected character `€`"));
    cr_expect_eq(l->toks.len, 3);
    lex_free(l);
}

Test(lexer, invalid_utf8_is_one_error)
{
    Lexed *l = lex("ab\n c\xff\xfe d");
    cr_expect_eq(l->diag.errors, 1);
    cr_expect(strstr(l->errs, "t.zg:2:3: error: invalid UTF-8 (byte 0xFF)"));
    lex_free(l);
}

Test(lexer, invalid_number)
{
    Lexed *l = lex("12abc");
    cr_expect(strstr(l->errs, "t.zg:1:1: error: invalid number `12abc`"));
    lex_free(l);
}

Test(lexer, caret_excerpt)
{
    Lexed *l = lex("lifeline A;\n  x $ y\n");
    cr_expect(strstr(l->errs, "t.zg:2:5: error: unexpected character `$`\n"
                              "    2 |   x $ y\n"
                              "      |     ^\n"),
              "got: %s", l->errs);
    lex_free(l);
}
