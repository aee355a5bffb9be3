/* format.c — the canonical layout of a .zg source.
 *
 * The layout works on the token stream with its comments, not on the
 * syntax tree: every token is written once, in its order, and only the
 * white space between tokens is chosen (the one exception: the trailing
 * comma of an enum's members, written when the members take a line each
 * and left out when they share one, which the grammar allows both ways).
 * So the meaning cannot change by construction, and zf_format proves it
 * anyway by parsing its output and comparing the trees (same.c).
 *
 * The rules:
 *   - declarations and statements start a line of their own; a block's
 *     body is indented by ZF_INDENT spaces; `} else {` share a line; an
 *     empty block is `{}`;
 *   - one blank line at most is kept where the source had one or more
 *     (between declarations and between statements, never first in a
 *     block);
 *   - spaces around binary operators, `=`, `->` and the ternary's `?` and
 *     `:`, after `,` and after a label's or a parameter's `:`; none inside
 *     brackets, before `(` of a call or a message, after a prefix `!`, `-`
 *     or `@`, around `.`;
 *   - a statement longer than ZF_WIDTH is broken, first after `->`, then
 *     after the first `=`, then before the loosest operator (`||`, `&&`,
 *     `+`), then inside its outermost brackets with one element a line;
 *     continuation lines are indented one level more;
 *   - comments stay where they were: one after a token on its line stays
 *     after it on its line (one space before); one on a line of its own
 *     stays on a line of its own, indented as the code it precedes; a
 *     line comment ends the line;
 *   - a """ string is written as it is; when its first line moves left or
 *     right, its other lines move by as much, so that they stay aligned
 *     with it (the common indentation is stripped from its value, so the
 *     value is the same).
 */
#include "fmt.h"

#include <stdlib.h>

#include "grammar.h"

/* What a token is, for spacing. */
typedef enum {
    K_WORD,    /* identifier */
    K_KEYWORD, /* keyword */
    K_NUMBER,
    K_STRING,
    K_PUNCT, /* punctuation and operators */
} Kind;

typedef struct Comment {
    const char *text;
    size_t len;
    bool blank_before; /* a blank line before it in the source */
    bool line;         /* a // comment: nothing may follow on its line */
    struct Comment *next;
} Comment;

typedef struct Tok {
    const char *text;
    size_t len;
    ZSpan span;
    Kind kind;
    bool unary;            /* a prefix `!`, `-` or `@` */
    bool ternary;          /* the `:` of `c ? a : b` */
    bool blank_before;     /* a blank line before it (or before its first comment) */
    bool blank_after_lead; /* a blank line between its comments and it */
    bool lead_done;        /* its comments are written */
    Comment *lead;         /* comments on lines of their own before it */
    Comment *trail;        /* comments after it on its line */
    int match;             /* brackets: index of the matching one */
} Tok;

typedef struct Fmt {
    Tok *t;
    int n; /* tokens; t[n] is the end of the file (its lead comments) */
    ZBuf *out;
    int col;         /* output column (code points) */
    int line_indent; /* indentation level of the current line */
    bool line_start; /* nothing written on the current line yet */
    bool indented;   /* the current line's indentation is written */
    bool must_break; /* a line comment was written: the next token starts a line */
    int prev;        /* the last token written, -1 at the start */
} Fmt;

static bool is(const Tok *t, const char *s)
{
    size_t n = strlen(s);
    return t->len == n && !memcmp(t->text, s, n);
}

/* Width in code points of the first line of s (n bytes). */
static int width(const char *s, size_t n)
{
    int w = 0;
    for (size_t i = 0; i < n && s[i] != '\n'; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80) w++;
    return w;
}

static bool multiline(const char *s, size_t n) { return memchr(s, '\n', n) != NULL; }

/* ---- reading the tokens ------------------------------------------------------- */

static Kind kind_of(const ZToken *zt)
{
    const char *name = zp_token_name(zt->kind);
    if (!strcmp(name, "identifier")) return K_WORD;
    if (!strcmp(name, "keyword") || !strcmp(name, "reserved")) return K_KEYWORD;
    if (!strcmp(name, "integer") || !strcmp(name, "float")) return K_NUMBER;
    if (!strcmp(name, "string")) return K_STRING;
    return K_PUNCT;
}

/* Ends an operand: after it, `-` and `@` are binary. */
static bool ends_operand(const Tok *t)
{
    if (t->kind == K_WORD || t->kind == K_NUMBER || t->kind == K_STRING) return true;
    if (t->kind == K_KEYWORD)
        return is(t, "true") || is(t, "false") || is(t, "null") || is(t, "int") || is(t, "float") ||
               is(t, "str") || is(t, "bool") || is(t, "json");
    return is(t, ")");
}

/* Reads the tokens and comments; false when the lexer reported errors. */
static bool read_tokens(Fmt *f, ZArena *a, const ZSource *src, ZDiag *d)
{
    ZVec v = zp_tokenize_trivia(a, src, d);
    if (d->errors) return false;
    f->t = zu_alloc(a, sizeof(Tok) * ((size_t)v.len + 1));
    f->n = 0;
    int last_line = 0;      /* last source line of the previous token or comment */
    int prev_tok_line = -1; /* last source line of the previous token (or of
                               the block comment after it on its line) */
    Comment *lead = NULL, **lead_end = &lead;
    bool lead_blank = false;
    for (int i = 0; i < v.len; i++) {
        ZToken *zt = v.items[i];
        size_t len = strlen(zt->text);
        bool blank = last_line && zt->span.first_line > last_line + 1;
        if (zp_is_comment(zt)) {
            Comment *c = zu_alloc(a, sizeof *c);
            c->text = zt->text;
            c->len = len;
            c->line = len >= 2 && zt->text[1] == '/';
            if (f->n > 0 && lead == NULL && zt->span.first_line == prev_tok_line) {
                Comment **p = &f->t[f->n - 1].trail;
                while (*p) p = &(*p)->next;
                *p = c;
                prev_tok_line = zt->span.last_line; /* a block comment may go on */
            } else {
                c->blank_before = blank;
                if (!lead) lead_blank = blank;
                *lead_end = c;
                lead_end = &c->next;
            }
            last_line = zt->span.last_line;
            continue;
        }
        Tok *t = &f->t[f->n++];
        t->text = zt->text;
        t->len = len;
        t->span = zt->span;
        t->kind = kind_of(zt);
        t->lead = lead;
        t->blank_before = lead ? lead_blank : blank;
        t->blank_after_lead = lead && blank;
        lead = NULL;
        lead_end = &lead;
        last_line = prev_tok_line = zt->span.last_line;
        t->match = -1;
    }
    Tok *eof = &f->t[f->n];
    memset(eof, 0, sizeof *eof);
    eof->text = "";
    eof->kind = K_PUNCT;
    eof->lead = lead;
    eof->blank_before = lead_blank;
    eof->match = -1;

    /* brackets, prefix operators, ternary colons */
    int *stack = zu_alloc(a, sizeof(int) * ((size_t)f->n + 1));
    int *qs = zu_alloc(a, sizeof(int) * ((size_t)f->n + 2)); /* `?` waiting for their `:`,
                                                                 per bracket level */
    int depth = 0;
    qs[0] = 0;
    for (int i = 0; i < f->n; i++) {
        Tok *t = &f->t[i];
        const Tok *p = i ? &f->t[i - 1] : NULL;
        if (is(t, "(") || is(t, "{")) {
            stack[depth++] = i;
            qs[depth] = 0;
        } else if ((is(t, ")") || is(t, "}")) && depth > 0) {
            int o = stack[--depth];
            f->t[o].match = i;
            t->match = o;
        } else if (is(t, "?")) {
            qs[depth]++;
        } else if (is(t, ":") && qs[depth] > 0) {
            qs[depth]--;
            t->ternary = true;
        } else if (is(t, "!") || ((is(t, "-") || is(t, "@")) && !(p && ends_operand(p)))) {
            t->unary = true;
        }
    }
    return true;
}

/* ---- writing ------------------------------------------------------------------------ */

static void put(Fmt *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) zu_buf_putc(f->out, s[i]);
    const char *nl = NULL;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '\n') nl = s + i;
    if (nl)
        f->col = width(nl + 1, (size_t)(s + n - nl - 1));
    else
        f->col += width(s, n);
    if (n) f->line_start = false;
}

static void newline(Fmt *f)
{
    while (f->out->len && f->out->data[f->out->len - 1] == ' ') f->out->len--;
    zu_buf_putc(f->out, '\n');
    f->col = 0;
    f->line_start = true;
    f->indented = false;
    f->must_break = false;
}

static void blank_line(Fmt *f)
{
    /* one blank line: the output ends with "\n" (a line just ended) */
    if (f->out->len >= 2 && f->out->data[f->out->len - 2] == '\n') return;
    zu_buf_putc(f->out, '\n');
}

/* Indents the current line, which has nothing else yet. */
static void indent(Fmt *f, int level)
{
    while (f->col > 0 && f->out->len && f->out->data[f->out->len - 1] == ' ')
        f->out->len--, f->col--;
    for (int i = 0; i < level * ZF_INDENT; i++) zu_buf_putc(f->out, ' ');
    f->col = level * ZF_INDENT;
    f->line_indent = level;
    f->indented = true;
}

static void start_line(Fmt *f, int level)
{
    if (!f->line_start) newline(f);
    indent(f, level);
}

/* A """ string whose first line now starts `delta` columns right of
 * where it was: its other lines move by as much (left only as far as all
 * of them have blanks). */
static void put_multiline_string(Fmt *f, const Tok *t)
{
    int delta = f->col - (t->span.first_column - 1);
    const char *s = t->text, *end = s + t->len;
    if (delta < 0) {
        for (const char *p = memchr(s, '\n', t->len); p && p < end;
             p = memchr(p, '\n', (size_t)(end - p))) {
            p++;
            int k = 0;
            while (p + k < end && k < -delta && (p[k] == ' ' || p[k] == '\t')) k++;
            bool blank = p + k >= end || p[k] == '\n' || p[k] == '\r';
            if (k < -delta && !blank) {
                delta = 0;
                break;
            }
        }
    }
    const char *nl = memchr(s, '\n', t->len);
    if (!nl || delta == 0) {
        put(f, s, t->len);
        return;
    }
    put(f, s, (size_t)(nl - s));
    for (const char *p = nl; p < end;) {
        zu_buf_putc(f->out, '\n');
        p++;
        const char *q = memchr(p, '\n', (size_t)(end - p));
        if (!q) q = end;
        if (delta > 0) {
            for (int i = 0; i < delta; i++) zu_buf_putc(f->out, ' ');
        } else {
            int k = 0;
            while (p < q && k < -delta && (*p == ' ' || *p == '\t')) p++, k++;
        }
        f->col = 0;
        put(f, p, (size_t)(q - p));
        p = q;
    }
}

static bool space_between(const Tok *p, const Tok *t)
{
    if (is(t, ",") || is(t, ";") || is(t, ")") || is(t, ".")) return false;
    if (is(p, "(") || is(p, ".")) return false;
    if (is(p, "{") && is(t, "}")) return false; /* {} */
    if (p->unary) return false;
    if (is(t, "(")) {
        if (p->kind == K_WORD) return false;
        if (ends_operand(p) && p->kind == K_KEYWORD && !is(p, "true") && !is(p, "false") &&
            !is(p, "null"))
            return false; /* int(x), str(x), float(x) */
        return true;
    }
    if (is(t, ":") && !t->ternary) return false;
    return true;
}

static void put_comment(Fmt *f, const Comment *c)
{
    put(f, c->text, c->len);
    if (c->line) f->must_break = true;
}

/* Writes the comments before token i, each on a line of its own, at
 * `level`; blank lines between them as in the source, and before the first
 * one when allow_blank. */
static void put_lead(Fmt *f, int i, int level, bool allow_blank)
{
    Tok *t = &f->t[i];
    if (t->lead_done) return;
    t->lead_done = true;
    for (Comment *c = t->lead; c; c = c->next) {
        if (!f->line_start) newline(f);
        if (c->blank_before && allow_blank) blank_line(f);
        allow_blank = true;
        indent(f, level);
        put_comment(f, c);
        newline(f);
    }
}

/* put_lead for the first token of a line, and the blank line between the
 * comments and it. */
static void put_lead_item(Fmt *f, int i, int level, bool allow_blank)
{
    const Tok *t = &f->t[i];
    if (!t->lead || t->lead_done) return;
    put_lead(f, i, level, allow_blank);
    if (t->blank_after_lead) blank_line(f);
}

/* Writes token i where the output is, `cont` the level of a continuation
 * line: its comments, the space before it, the token, the comments after
 * it on its line. */
static void put_tok(Fmt *f, int i, int cont)
{
    const Tok *t = &f->t[i];
    if (t->lead && !t->lead_done) {
        int level = f->line_start ? f->line_indent : cont;
        put_lead(f, i, level, false);
        indent(f, level);
    }
    if (f->must_break) newline(f);
    if (f->line_start && !f->indented) indent(f, cont);
    if (!f->line_start && f->prev >= 0 && space_between(&f->t[f->prev], t))
        zu_buf_putc(f->out, ' '), f->col++;
    if (t->kind == K_STRING && multiline(t->text, t->len))
        put_multiline_string(f, t);
    else
        put(f, t->text, t->len);
    f->prev = i;
    for (Comment *c = t->trail; c; c = c->next) {
        zu_buf_putc(f->out, ' ');
        f->col++;
        put_comment(f, c);
    }
}

/* ---- measuring ------------------------------------------------------------------------ */

enum { NO_FIT = 1 << 28 };

/* The enum member list's trailing comma: token i is a `,` right before the
 * `}` of an enum. */
static bool enum_trailing_comma(const Fmt *f, int i)
{
    return is(&f->t[i], ",") && i + 1 < f->n && is(&f->t[i + 1], "}");
}

/* The width of tokens [lo, hi) on one line, or NO_FIT when a comment or a
 * line break inside them forbids one line (a trailing comment of the last
 * token is written after it and does not count). */
static int flat_width(const Fmt *f, int lo, int hi)
{
    int w = 0;
    for (int i = lo; i < hi; i++) {
        const Tok *t = &f->t[i];
        if ((i > lo && t->lead) || (i < hi - 1 && t->trail)) return NO_FIT;
        if (enum_trailing_comma(f, i)) continue;
        if (i > lo && space_between(&f->t[i - 1], t)) w++;
        w += width(t->text, t->len);
        /* a """ string of several lines: what follows it is on its last line */
        if (t->kind == K_STRING && multiline(t->text, t->len)) return w;
        if (w >= NO_FIT) return NO_FIT;
    }
    return w;
}

static bool fits(const Fmt *f, int lo, int hi, int tail)
{
    int w = flat_width(f, lo, hi);
    return w < NO_FIT && f->col + (f->line_start ? 0 : 1) + w + tail <= ZF_WIDTH;
}

/* ---- statements ------------------------------------------------------------------------ */

static void layout(Fmt *f, int lo, int hi, int cont, int tail);

/* Writes tokens [lo, hi) as they come, on one line unless comments break it. */
static void put_flat(Fmt *f, int lo, int hi, int cont)
{
    for (int i = lo; i < hi; i++) {
        if (enum_trailing_comma(f, i) && !f->t[i].trail && !f->t[i + 1].lead) continue;
        put_tok(f, i, cont);
    }
}

/* The first token in [lo, hi) outside brackets that is one of ops, or -1. */
static int top_level(const Fmt *f, int lo, int hi, const char *op)
{
    for (int i = lo; i < hi; i++) {
        const Tok *t = &f->t[i];
        if ((is(t, "(") || is(t, "{")) && t->match > i) {
            i = t->match;
            continue;
        }
        if (is(t, op) && !t->unary) return i;
    }
    return -1;
}

/* A bracket group [open, close] that does not fit: one element a line. */
static void put_group(Fmt *f, int open, int close)
{
    int base = f->line_indent;
    bool brace = is(&f->t[open], "{");
    put_tok(f, open, base + 1);
    int i = open + 1;
    while (i < close) {
        int j = i;
        while (j < close && !is(&f->t[j], ",")) {
            if (f->t[j].match > j) j = f->t[j].match;
            j++;
        }
        start_line(f, base + 1);
        layout(f, i, j, base + 2, 1);
        if (j < close) {
            put_tok(f, j, base + 2);
            j++;
        } else if (brace && !f->must_break) {
            /* an enum's members, one a line, all end with a comma (not
             * after a line comment, which would take it) */
            put(f, ",", 1);
        }
        i = j;
    }
    put_lead(f, close, base + 1, false);
    if (!f->line_start) newline(f);
    indent(f, base);
    put_tok(f, close, base + 1);
}

/* Tokens [lo, hi) of one statement or declaration head, broken to fit. */
static void layout(Fmt *f, int lo, int hi, int cont, int tail)
{
    if (lo >= hi) return;
    if (fits(f, lo, hi, tail)) {
        put_flat(f, lo, hi, cont);
        return;
    }
    /* after `=`: the value on a line of its own when it fits there */
    int k = top_level(f, lo, hi, "=");
    if (k >= 0 && k + 1 < hi) {
        layout(f, lo, k + 1, cont, 0);
        int w = flat_width(f, k + 1, hi);
        bool groups = false;
        for (int i = k + 1; i < hi; i++) groups |= is(&f->t[i], "(");
        if (!fits(f, k + 1, hi, tail) && (w + tail + cont * ZF_INDENT <= ZF_WIDTH || !groups))
            start_line(f, cont);
        layout(f, k + 1, hi, cont, tail);
        return;
    }
    /* a message after `->`: A(x) -> B(x) (a declaration's head breaks its
     * parameters instead) */
    k = f->t[lo].kind == K_WORD ? top_level(f, lo, hi, "->") : -1;
    if (k >= 0 && k + 1 < hi) {
        layout(f, lo, k + 1, cont, 0);
        if (!fits(f, k + 1, hi, tail)) start_line(f, cont);
        layout(f, k + 1, hi, cont, tail);
        return;
    }
    /* before the loosest operator */
    static const char *const ops[] = {"||", "&&", "+"};
    for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) {
        k = top_level(f, lo, hi, ops[o]);
        if (k < 0 || k == lo) continue;
        int start = lo;
        while (k >= 0) {
            layout(f, start, k, cont, 0);
            start_line(f, cont);
            start = k;
            k = top_level(f, k + 1, hi, ops[o]);
        }
        layout(f, start, hi, cont, tail);
        return;
    }
    /* inside brackets */
    for (int i = lo; i < hi; i++) {
        const Tok *t = &f->t[i];
        if ((is(t, "(") || is(t, "{")) && t->match > i && t->match < hi) {
            int m = t->match;
            bool empty = m == i + 1 && !f->t[m].lead;
            /* the first group breaks when the rest does not fit after it */
            if (!empty && !fits(f, i, hi, tail)) {
                put_group(f, i, m);
                i = m;
                continue;
            }
            put_flat(f, i, m + 1, cont);
            i = m;
            continue;
        }
        put_tok(f, i, cont);
    }
}

/* The end of the item (declaration or statement) starting at lo, before
 * hi: after its `;` outside brackets, or after the `}` of its block unless
 * `else` follows. */
static int item_end(const Fmt *f, int lo, int hi)
{
    bool list = is(&f->t[lo], "enum");
    for (int i = lo; i < hi; i++) {
        const Tok *t = &f->t[i];
        if (is(t, "(") && t->match > i) {
            i = t->match;
            continue;
        }
        if (is(t, "{") && t->match > i) {
            int m = t->match;
            if (list) return m + 1;
            if (m + 1 < hi && is(&f->t[m + 1], "else")) {
                i = m;
                continue;
            }
            return m + 1;
        }
        if (is(t, ";")) return i + 1;
    }
    return hi;
}

static void put_items(Fmt *f, int lo, int hi, int level);

/* One declaration or statement, tokens [lo, hi), at `level`. */
static void put_item(Fmt *f, int lo, int hi, int level)
{
    bool list = is(&f->t[lo], "enum");
    int i = lo;
    while (i < hi) {
        /* the head, up to a block's `{` */
        int j = i;
        while (j < hi && !(is(&f->t[j], "{") && !list)) {
            if ((is(&f->t[j], "(") || is(&f->t[j], "{")) && f->t[j].match > j) j = f->t[j].match;
            j++;
        }
        if (j == hi) {
            layout(f, i, hi, level + 1, 0);
            break;
        }
        int close = f->t[j].match;
        layout(f, i, j, level + 1, 2);
        bool empty = close == j + 1 && !f->t[j].trail && !f->t[close].lead;
        put_tok(f, j, level + 1);
        if (!empty) {
            put_items(f, j + 1, close, level + 1);
            put_lead(f, close, level + 1, close > j + 1);
            start_line(f, level);
        }
        f->prev = j;
        put_tok(f, close, level + 1);
        i = close + 1;
        if (i < hi && is(&f->t[i], "else")) {
            /* `} else`, on one line unless comments come between */
            if (f->t[i].lead) put_lead(f, i, level, false);
            if (f->line_start) indent(f, level);
        }
    }
}

static void put_items(Fmt *f, int lo, int hi, int level)
{
    bool first = true;
    for (int i = lo; i < hi;) {
        int j = item_end(f, i, hi);
        const Tok *t = &f->t[i];
        if (!f->line_start) newline(f);
        if (t->blank_before && !first) blank_line(f);
        put_lead_item(f, i, level, !first);
        start_line(f, level);
        f->prev = -1;
        put_item(f, i, j, level);
        first = false;
        i = j;
    }
}

/* The syntax tree of one file, as written: imports are not read (a file
 * is formatted on its own), fragments not expanded.  NULL when it does not
 * parse (the diagnostics written to diag_out). */
static ZProgram *parse_alone(ZArena *a, const char *path, const char *text, size_t len,
                             FILE *diag_out, ZSource **srcp)
{
    ZSource *src = zu_alloc(a, sizeof *src);
    src->path = path;
    src->text = zu_strndup(a, text, len);
    src->len = len;
    ZDiag d;
    zd_init(&d, src, diag_out);
    ZProgram *p = zp_parse(a, src, &d);
    *srcp = src;
    return d.errors ? NULL : p;
}

bool zf_format(const char *path, const char *text, size_t len, FILE *diag_out, ZBuf *out)
{
    ZArena *a = zu_arena_new();
    ZSource *src;
    ZProgram *prog = parse_alone(a, path, text, len, diag_out, &src);
    Fmt f = {.out = out, .prev = -1, .line_start = true};
    ZDiag d;
    zd_init(&d, src, diag_out);
    if (!prog || !read_tokens(&f, a, src, &d)) {
        zu_arena_free(a);
        return false;
    }
    size_t start = out->len;
    put_items(&f, 0, f.n, 0);
    if (f.t[f.n].lead) {
        if (!f.line_start) newline(&f);
        put_lead(&f, f.n, 0, f.n > 0);
    }
    if (!f.line_start) newline(&f);
    /* nothing but a final newline */
    if (out->len == start + 1) out->len = start;

    /* the proof: the same syntax tree */
    ZSource *again_src;
    ZProgram *again = parse_alone(a, path, out->data ? out->data + start : "", out->len - start,
                                  diag_out, &again_src);
    ZBuf why = {0};
    if (!again || !zf_same_program(prog, again, &why))
        ZU_ICE("the layout of %s changed its syntax tree: %s", path,
               again ? why.data : "it does not parse");
    zu_buf_free(&why);
    zu_arena_free(a);
    return true;
}
