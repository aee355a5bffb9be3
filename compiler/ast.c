/* ast.c — AST constructors, names of kinds, and printers. */
#include "zgc.h"

#include <inttypes.h>
#include <string.h>

ZExpr *za_expr(ZArena *a, ZExprKind k, ZSpan span)
{
    ZExpr *e = zu_alloc(a, sizeof *e);
    e->kind = k;
    e->span = span;
    e->life = -1;
    return e;
}

ZStmt *za_stmt(ZArena *a, ZStmtKind k, ZSpan span)
{
    ZStmt *s = zu_alloc(a, sizeof *s);
    s->kind = k;
    s->span = span;
    s->life.index = s->to.index = -1;
    return s;
}

ZDecl *za_decl(ZArena *a, ZDeclKind k, ZSpan span)
{
    ZDecl *d = zu_alloc(a, sizeof *d);
    d->kind = k;
    d->span = span;
    return d;
}

ZType *za_type(ZArena *a, ZTypeKind k, ZSpan span)
{
    ZType *t = zu_alloc(a, sizeof *t);
    t->kind = k;
    t->span = span;
    return t;
}

#define ZA_NAME(k, s) [k] = s,
static const char *const expr_names[] = {ZA_EXPR_KINDS(ZA_NAME)};
static const char *const stmt_names[] = {ZA_STMT_KINDS(ZA_NAME)};
static const char *const decl_names[] = {ZA_DECL_KINDS(ZA_NAME)};

const char *za_expr_kind_name(ZExprKind k) { return k < E__COUNT ? expr_names[k] : "?"; }
const char *za_stmt_kind_name(ZStmtKind k) { return k < S__COUNT ? stmt_names[k] : "?"; }
const char *za_decl_kind_name(ZDeclKind k) { return k < D__COUNT ? decl_names[k] : "?"; }

const char *za_op_text(ZOp op)
{
    switch (op) {
    case OP_NEG: return "-";
    case OP_NOT: return "!";
    case OP_ADD: return "+";
    case OP_SUB: return "-";
    case OP_MUL: return "*";
    case OP_DIV: return "/";
    case OP_MOD: return "%";
    case OP_EQ: return "==";
    case OP_NE: return "!=";
    case OP_LT: return "<";
    case OP_LE: return "<=";
    case OP_GT: return ">";
    case OP_GE: return ">=";
    case OP_AND: return "&&";
    case OP_OR: return "||";
    }
    return "?";
}

#define ZA_BI_NAME(k, s, n) [k] = s,
#define ZA_BI_ARITY(k, s, n) [k] = n,
static const char *const builtin_names[] = {[BI_NONE] = "", ZA_BUILTINS(ZA_BI_NAME)};
static const int builtin_arity[] = {[BI_NONE] = 0, ZA_BUILTINS(ZA_BI_ARITY)};

const char *za_builtin_name(ZBuiltin b) { return b < BI__COUNT ? builtin_names[b] : "?"; }
int za_builtin_arity(ZBuiltin b) { return b < BI__COUNT ? builtin_arity[b] : 0; }

ZBuiltin za_builtin_lookup(const char *name)
{
    for (int i = 1; i < BI__COUNT; i++)
        if (strcmp(builtin_names[i], name) == 0) return (ZBuiltin)i;
    return BI_NONE;
}

const char *za_action_kind_name(ZActionKind k)
{
#define NAME(k, s) s,
    static const char *const names[] = {ZV_ACTION_KINDS(NAME)};
#undef NAME
    return k >= 0 && k < ACT__COUNT ? names[k] : "?";
}

const char *za_name_kind_name(ZNameKind k)
{
    switch (k) {
    case NAME_VAR: return "variable";
    case NAME_CONST: return "constant";
    case NAME_MEMBER: return "enum member";
    case NAME_GUARD: return "guard";
    case NAME_PARAM: return "parameter";
    default: return "name";
    }
}

const char *za_lifeline_name(const ZProgram *p, int i)
{
    if (i < 0 || i >= p->lifelines.len) return "?";
    const ZDecl *d = ZU_VEC_AT(p->lifelines, i);
    return d->name;
}

const char *za_prop_name(ZPropKey k)
{
#define NAME(k, s) s,
    static const char *const names[] = {ZV_LLM_PROPS(NAME) ZV_HUMAN_PROPS(NAME)
                                            ZV_PLANNER_PROPS(NAME)};
#undef NAME
    return k >= 0 && k < PROP__COUNT ? names[k] : "?";
}

const ZProp *za_prop(const ZDecl *act, ZPropKey k)
{
    const char *key = za_prop_name(k);
    for (int i = 0; i < act->props.len; i++) {
        const ZProp *pr = ZU_VEC_AT(act->props, i);
        if (pr->key && pr->value && strcmp(pr->key, key) == 0) return pr;
    }
    return NULL;
}

/* The byte offset of (line, col) in text (columns count code points), or
 * -1. */
static long text_offset(const char *text, size_t len, int line, int col)
{
    size_t i = 0;
    int l = 1, c = 1;
    while (i < len && (l < line || (l == line && c < col))) {
        unsigned char ch = (unsigned char)text[i++];
        if ((ch & 0xC0) == 0x80) continue;
        if (ch == '\n')
            l++, c = 1;
        else
            c++;
    }
    while (i < len && ((unsigned char)text[i] & 0xC0) == 0x80) i++;
    return l == line && c == col ? (long)i : -1;
}

const char *za_span_text(ZArena *a, const ZVec *files, ZSpan s)
{
    if (!files || s.file < 0 || s.file >= files->len || s.exp) return NULL;
    const ZSource *src = ZU_VEC_AT(*files, s.file);
    long from = text_offset(src->text, src->len, s.first_line, s.first_column);
    long to = text_offset(src->text, src->len, s.last_line, s.last_column);
    if (from < 0 || to < from) return NULL;
    /* the last character, whole */
    to++;
    while ((size_t)to < src->len && ((unsigned char)src->text[to] & 0xC0) == 0x80) to++;
    return zu_strndup(a, src->text + from, (size_t)(to - from));
}

/* The action named n among p's declarations (resolve.c's tables are not
 * needed for so few). */
static const ZDecl *action_named(const ZProgram *p, const char *n)
{
    for (int i = 0; i < p->decls.len; i++) {
        const ZDecl *d = p->decls.items[i];
        if (d->kind == D_ACTION && d->name && strcmp(d->name, n) == 0) return d;
    }
    return NULL;
}

static void context_add(ZArena *a, const ZProgram *p, const ZDecl *d, const ZDecl **seen,
                        int *nseen, int cap)
{
    for (int i = 0; i < *nseen; i++)
        if (seen[i] == d) return;
    if (*nseen >= cap) return;
    seen[(*nseen)++] = d;
    if (d->kind != D_ACTION || d->action != ACT_PLANNER) return;
    const ZProp *pr = za_prop(d, PROP_ACTIONS);
    if (!pr) return;
    ZVec one = {0};
    const ZVec *names = &pr->value->args;
    if (pr->value->kind == E_NAME) {
        zu_vec_push(a, &one, pr->value);
        names = &one;
    }
    for (int i = 0; i < names->len; i++) {
        const ZExpr *e = names->items[i];
        const ZDecl *x = e->kind == E_NAME && e->name ? action_named(p, e->name) : NULL;
        if (x) context_add(a, p, x, seen, nseen, cap);
    }
}

const char *za_planner_context(ZArena *a, const ZProgram *p, const ZVec *files,
                               const ZDecl *planner)
{
    int cap = p->decls.len + 1, n = 0;
    const ZDecl **seen = zu_alloc(a, sizeof *seen * (size_t)cap);
    for (int i = 0; i < p->decls.len; i++) {
        const ZDecl *d = p->decls.items[i];
        if (d->kind == D_ENUM || d->kind == D_CONST ||
            (d->kind == D_ACTION && d->action == ACT_PURE))
            seen[n++] = d;
    }
    context_add(a, p, planner, seen, &n, cap);
    ZBuf b = {0};
    for (int i = 0; i < n; i++) {
        if (seen[i] == planner) continue;
        const char *t = za_span_text(a, files, seen[i]->span);
        if (!t) continue;
        zu_buf_puts(&b, t);
        zu_buf_puts(&b, "\n");
    }
    const char *t = za_span_text(a, files, planner->span);
    zu_buf_puts(&b, ZA_PLANNER_MARK);
    zu_buf_puts(&b, t ? t : "");
    zu_buf_puts(&b, "\n");
    const char *s = zu_strdup(a, b.data ? b.data : "");
    zu_buf_free(&b);
    return s;
}

const char *za_construct_tag(ZArena *a, const ZStmt *s)
{
#define ID(k, s) CON_##k,
#define NAME(k, s) s,
    enum { ZV_CONSTRUCTS(ID) };
    static const char *const words[] = {ZV_CONSTRUCTS(NAME)};
#undef ID
#undef NAME
    if (s->kind != S_IF && s->kind != S_WHILE) ZU_ICE("a tag for a %s", za_stmt_kind_name(s->kind));
    return zu_fmt(a, ZV_TAG_FMT, words[s->kind == S_IF ? CON_IF : CON_WHILE], s->construct);
}

/* The word for a type that is not a tuple.  diag: as messages name it
 * (`nothing` for no value, `?` when unknown); otherwise as the AST printer
 * shows it. */
static const char *type_word(const ZType *t, bool diag)
{
    if (!t) return diag ? "?" : "<none>";
    switch (t->kind) {
    case TY_ERROR: return diag ? "?" : "<error>";
    case TY_BOOL: return "bool";
    case TY_INT: return "int";
    case TY_FLOAT: return "float";
    case TY_STR: return "str";
    case TY_JSON: return "json";
    case TY_VOID: return diag ? "nothing" : "()";
    case TY_NULL: return "null";
    case TY_ENUM:
    case TY_NAMED: return t->name ? t->name : "?";
    case TY_TUPLE: break;
    }
    return "?";
}

static void type_to_buf(ZBuf *b, const ZType *t, bool diag)
{
    if (!t || t->kind != TY_TUPLE) {
        zu_buf_puts(b, type_word(t, diag));
        return;
    }
    zu_buf_putc(b, '(');
    for (int i = 0; i < t->elems.len; i++) {
        if (i) zu_buf_puts(b, ", ");
        type_to_buf(b, t->elems.items[i], diag);
    }
    zu_buf_putc(b, ')');
}

static const char *type_text(ZArena *a, const ZType *t, bool diag)
{
    if (!t || t->kind != TY_TUPLE) return type_word(t, diag);
    ZBuf b = {0};
    type_to_buf(&b, t, diag);
    const char *s = zu_strdup(a, b.data ? b.data : "");
    zu_buf_free(&b);
    return s;
}

const char *za_type_str(ZArena *a, const ZType *t) { return type_text(a, t, false); }
const char *za_type_name(ZArena *a, const ZType *t) { return type_text(a, t, true); }

/* ---- expression printer ---------------------------------------------------- */

/* Binding strength, loosest first, mirroring grammar/parser.y. */
enum { P_COND = 1, P_OR, P_AND, P_SINCE, P_PREFIX, P_EQ, P_REL, P_ADD, P_MUL, P_UNARY, P_PRIMARY };

static int prec(const ZExpr *e)
{
    switch (e->kind) {
    case E_COND: return P_COND;
    case E_SINCE: return P_SINCE;
    case E_PREV:
    case E_ONCE:
    case E_HIST:
    case E_PAST: return P_PREFIX;
    case E_UNARY: return P_UNARY;
    case E_BINARY:
        switch (e->op) {
        case OP_OR: return P_OR;
        case OP_AND: return P_AND;
        case OP_EQ:
        case OP_NE: return P_EQ;
        case OP_LT:
        case OP_LE:
        case OP_GT:
        case OP_GE: return P_REL;
        case OP_ADD:
        case OP_SUB: return P_ADD;
        default: return P_MUL;
        }
    case E_INT: return e->lit.i < 0 ? P_UNARY : P_PRIMARY;
    case E_FLOAT: return e->lit.f < 0 ? P_UNARY : P_PRIMARY;
    default: return P_PRIMARY;
    }
}

static void print_str_lit(ZBuf *b, const char *s, size_t n)
{
    zu_buf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': zu_buf_puts(b, "\\\""); break;
        case '\\': zu_buf_puts(b, "\\\\"); break;
        case '\n': zu_buf_puts(b, "\\n"); break;
        case '\t': zu_buf_puts(b, "\\t"); break;
        case '\r': zu_buf_puts(b, "\\r"); break;
        default:
            if (c < 0x20 || c == 0x7f)
                zu_buf_printf(b, "\\u{%x}", c);
            else
                zu_buf_putc(b, (char)c);
        }
    }
    zu_buf_putc(b, '"');
}

static void pe(ZBuf *b, const ZExpr *e, int min);

static void pe_list(ZBuf *b, const ZVec *v)
{
    for (int i = 0; i < v->len; i++) {
        if (i) zu_buf_puts(b, ", ");
        pe(b, v->items[i], P_COND);
    }
}

static void pe(ZBuf *b, const ZExpr *e, int min)
{
    if (!e) {
        zu_buf_puts(b, "<null>");
        return;
    }
    int p = prec(e);
    bool paren = p < min;
    if (paren) zu_buf_putc(b, '(');
    switch (e->kind) {
    case E_INT: zu_buf_printf(b, "%" PRId64, e->lit.i); break;
    case E_FLOAT: {
        char tmp[64];
        snprintf(tmp, sizeof tmp, "%.17g", e->lit.f);
        if (!strpbrk(tmp, ".eEn")) strcat(tmp, ".0");
        zu_buf_puts(b, tmp);
        break;
    }
    case E_STR: print_str_lit(b, e->lit.s ? e->lit.s : "", e->slen); break;
    case E_BOOL: zu_buf_puts(b, e->lit.b ? "true" : "false"); break;
    case E_NULL: zu_buf_puts(b, "null"); break;
    case E_NAME: zu_buf_puts(b, e->name); break;
    case E_AT_VAR: zu_buf_printf(b, "@%s.%s", e->lifeline, e->name); break;
    case E_UNARY:
        zu_buf_puts(b, za_op_text(e->op));
        pe(b, e->a, P_UNARY);
        break;
    case E_BINARY:
        /* left-associative: the right operand binds one level tighter */
        pe(b, e->a, p);
        zu_buf_printf(b, " %s ", za_op_text(e->op));
        pe(b, e->b, p + 1);
        break;
    case E_COND:
        pe(b, e->c, P_OR);
        zu_buf_puts(b, " ? ");
        pe(b, e->a, P_COND);
        zu_buf_puts(b, " : ");
        pe(b, e->b, P_COND);
        break;
    case E_CALL:
        zu_buf_printf(b, "%s(", e->name);
        pe_list(b, &e->args);
        zu_buf_putc(b, ')');
        break;
    case E_TUPLE:
        zu_buf_putc(b, '(');
        pe_list(b, &e->args);
        zu_buf_putc(b, ')');
        break;
    case E_AT:
        zu_buf_printf(b, "@%s(", e->lifeline);
        pe(b, e->a, P_COND);
        zu_buf_putc(b, ')');
        break;
    case E_PREV:
        zu_buf_puts(b, "prev ");
        pe(b, e->a, P_PREFIX);
        break;
    case E_ONCE:
        zu_buf_puts(b, "once ");
        pe(b, e->a, P_PREFIX);
        break;
    case E_HIST:
        zu_buf_puts(b, "historically ");
        pe(b, e->a, P_PREFIX);
        break;
    case E_PAST:
        zu_buf_puts(b, "past ");
        pe(b, e->a, P_PREFIX);
        break;
    case E_SINCE:
        pe(b, e->a, P_SINCE);
        zu_buf_puts(b, " since ");
        pe(b, e->b, P_PREFIX);
        break;
    case E_SEEN: zu_buf_printf(b, "seen %s", e->lifeline); break;
    default: zu_buf_puts(b, "?"); break;
    }
    if (paren) zu_buf_putc(b, ')');
}

void za_print_expr(ZBuf *b, const ZExpr *e) { pe(b, e, P_COND); }

/* ---- program printer (`zgc parse --ast`) ----------------------------------- */

static void indent(FILE *out, int n)
{
    for (int i = 0; i < n; i++) fputs("  ", out);
}

static void print_expr_line(FILE *out, const ZExpr *e)
{
    ZBuf b = {0};
    za_print_expr(&b, e);
    fputs(b.data ? b.data : "", out);
    zu_buf_free(&b);
}

static void print_type(FILE *out, const ZType *t)
{
    ZBuf b = {0};
    type_to_buf(&b, t, false);
    fputs(b.data ? b.data : "", out);
    zu_buf_free(&b);
}

static void print_exprs(FILE *out, const ZVec *v)
{
    for (int i = 0; i < v->len; i++) {
        if (i) fputs(", ", out);
        print_expr_line(out, v->items[i]);
    }
}

static void print_span(FILE *out, ZSpan s)
{
    fprintf(out, " <%d:%d-%d:%d>", s.first_line, s.first_column, s.last_line, s.last_column);
}

static void print_stmts(FILE *out, const ZVec *v, int d);

static void print_stmt(FILE *out, const ZStmt *s, int d)
{
    indent(out, d);
    fputs(za_stmt_kind_name(s->kind), out);
    switch (s->kind) {
    case S_MSG:
        fprintf(out, " %s(", s->life.name);
        print_exprs(out, &s->args);
        fprintf(out, ") -> %s(", s->to.name);
        print_exprs(out, &s->params);
        fputc(')', out);
        break;
    case S_ASSIGN:
        fprintf(out, " %s: ", s->life.name);
        if (s->targets.len || s->tuple_lhs) {
            if (s->tuple_lhs) fputc('(', out);
            for (int i = 0; i < s->targets.len; i++)
                fprintf(out, "%s%s", i ? ", " : "", ((ZTarget *)s->targets.items[i])->name);
            if (s->tuple_lhs) fputc(')', out);
            fputs(" = ", out);
        }
        print_expr_line(out, s->expr);
        if (s->is_action) fputs(" [action]", out);
        break;
    case S_BLOCK:
    case S_SKIP: fprintf(out, " %s", s->life.name); break;
    case S_ATOMIC: fprintf(out, " %s: %s", s->life.name, s->store_name); break;
    case S_READ:
        fprintf(out, " %s: %s = %s", s->life.name, ((ZTarget *)s->targets.items[0])->name, s->cell);
        break;
    case S_WRITE:
        fprintf(out, " %s: ", s->life.name);
        if (s->registry) {
            fputs("tools = (", out);
            for (int i = 0; i < s->tools.len; i++)
                fprintf(out, "%s%s", i ? ", " : "", ((ZParam *)s->tools.items[i])->name);
            fputc(')', out);
        } else {
            fprintf(out, "%s = ", s->cell);
            print_expr_line(out, s->expr);
        }
        break;
    case S_IF:
    case S_WHILE:
        if (s->construct) fprintf(out, "#%d", s->construct);
        fputc(' ', out);
        print_expr_line(out, s->expr);
        fprintf(out, " @ %s", s->life.name);
        break;
    case S_PAR:
        if (s->construct) fprintf(out, " par%d", s->construct);
        break;
    case S_COREGION: break;
    case S_USE:
        fprintf(out, " %s(", s->life.name);
        print_exprs(out, &s->args);
        fputc(')', out);
        break;
    case S_RETURN:
        for (int i = 0; i < s->items.len; i++) {
            ZReturnItem *r = s->items.items[i];
            fprintf(out, "%s %s @ %s", i ? "," : "", r->value->name, r->at.name);
        }
        break;
    default: break;
    }
    print_span(out, s->span);
    fputc('\n', out);
    switch (s->kind) {
    case S_BLOCK:
    case S_ATOMIC:
    case S_COREGION: print_stmts(out, &s->body, d + 1); break;
    case S_IF:
    case S_WHILE:
        print_stmts(out, &s->body, d + 1);
        if (s->has_else) {
            indent(out, d);
            fputs("else\n", out);
            print_stmts(out, &s->els, d + 1);
        }
        break;
    case S_PAR:
        for (int i = 0; i < s->branches.len; i++) {
            indent(out, d + 1);
            fprintf(out, "branch %d\n", i + 1);
            print_stmts(out, &((ZBranch *)s->branches.items[i])->body, d + 2);
        }
        break;
    default: break;
    }
}

static void print_stmts(FILE *out, const ZVec *v, int d)
{
    for (int i = 0; i < v->len; i++) print_stmt(out, v->items[i], d);
}

static void print_params(FILE *out, const ZVec *v)
{
    for (int i = 0; i < v->len; i++) {
        ZParam *p = v->items[i];
        if (i) fputs(", ", out);
        if (p->fkind == FP_CONST) fputs("const ", out);
        if (p->name) fprintf(out, "%s: ", p->name);
        if (p->fkind == FP_LIFELINE)
            fputs("lifeline", out);
        else
            print_type(out, p->type);
        if (p->owner) fprintf(out, " @ %s", p->owner);
    }
}

void za_print_program(FILE *out, const ZProgram *p)
{
    for (int i = 0; i < p->decls.len; i++) {
        const ZDecl *d = p->decls.items[i];
        switch (d->kind) {
        case D_LIFELINE: fprintf(out, "lifeline %s", d->name); break;
        case D_CONST:
            fprintf(out, "const %s = ", d->name);
            print_expr_line(out, d->expr);
            break;
        case D_ENUM:
            fprintf(out, "enum %s {", d->name);
            for (int k = 0; k < d->members.len; k++)
                fprintf(out, "%s %s", k ? "," : "", ((ZParam *)d->members.items[k])->name);
            fputs(" }", out);
            break;
        case D_VAR:
            fprintf(out, "var %s: ", d->name);
            print_type(out, d->type);
            if (d->expr) {
                fputs(" = ", out);
                print_expr_line(out, d->expr);
            }
            break;
        case D_GUARD:
            fprintf(out, "guard %s = ", d->name);
            print_expr_line(out, d->expr);
            break;
        case D_ACTION:
            fprintf(out, "%s %s(", za_action_kind_name(d->action), d->name);
            print_params(out, &d->params);
            fputs(") -> (", out);
            print_params(out, &d->results);
            fputc(')', out);
            if (d->expr) {
                fputs(" = ", out);
                print_expr_line(out, d->expr);
            }
            break;
        case D_WORKFLOW:
            fprintf(out, "workflow %s(", d->name);
            print_params(out, &d->params);
            fputs(") -> (", out);
            print_params(out, &d->results);
            fputc(')', out);
            break;
        case D_IMPORT: fprintf(out, "import \"%s\"", d->name); break;
        case D_FRAGMENT:
            fprintf(out, "fragment %s(", d->name);
            print_params(out, &d->params);
            fputc(')', out);
            break;
        case D_STORE:
            fprintf(out, "store %s", d->name);
            if (d->level_name) fprintf(out, " consistency %s", d->level_name);
            break;
        default: break;
        }
        print_span(out, d->span);
        fputc('\n', out);
        if (d->kind == D_ACTION)
            for (int k = 0; k < d->props.len; k++) {
                ZProp *pr = d->props.items[k];
                fprintf(out, "  %s = ", pr->key);
                print_expr_line(out, pr->value);
                fputc('\n', out);
            }
        if (d->kind == D_FRAGMENT)
            for (int k = 0; k < d->locals.len; k++) {
                const ZDecl *v = d->locals.items[k];
                fprintf(out, "  var %s: ", v->name);
                print_type(out, v->type);
                print_span(out, v->span);
                fputc('\n', out);
            }
        if (d->kind == D_STORE) {
            for (int k = 0; k < d->cells.len; k++) {
                const ZDecl *c = d->cells.items[k];
                fprintf(out, "  cell %s: ", c->name);
                print_type(out, c->type);
                if (c->expr) {
                    fputs(" = ", out);
                    print_expr_line(out, c->expr);
                }
                print_span(out, c->span);
                fputc('\n', out);
            }
            for (int k = 0; k < d->tools.len; k++) {
                const ZParam *t = d->tools.items[k];
                fprintf(out, "  tool %s", t->name);
                print_span(out, t->span);
                fputc('\n', out);
            }
        }
        if (d->kind == D_WORKFLOW || d->kind == D_FRAGMENT) print_stmts(out, &d->body, 1);
    }
}

void za_print_atomic_item(ZBuf *b, const ZStmt *s)
{
    switch (s->kind) {
    case S_READ:
        zu_buf_printf(b, "%s = read %s;", ((ZTarget *)s->targets.items[0])->name, s->cell);
        break;
    case S_WRITE:
        if (s->registry) {
            zu_buf_puts(b, "write tools = (");
            for (int i = 0; i < s->tools.len; i++)
                zu_buf_printf(b, "%s%s", i ? ", " : "", ((ZParam *)s->tools.items[i])->name);
            zu_buf_puts(b, ");");
        } else {
            zu_buf_printf(b, "write %s = ", s->cell);
            za_print_expr(b, s->expr);
            zu_buf_putc(b, ';');
        }
        break;
    case S_ASSIGN:
        if (s->targets.len || s->tuple_lhs) {
            if (s->tuple_lhs) zu_buf_putc(b, '(');
            for (int i = 0; i < s->targets.len; i++)
                zu_buf_printf(b, "%s%s", i ? ", " : "", ((ZTarget *)s->targets.items[i])->name);
            if (s->tuple_lhs) zu_buf_putc(b, ')');
            zu_buf_puts(b, " = ");
        }
        za_print_expr(b, s->expr);
        zu_buf_putc(b, ';');
        break;
    default: zu_buf_printf(b, "%s;", za_stmt_kind_name(s->kind)); break;
    }
}

/* ---- source printer (`zgc project --global`) -------------------------------- */

static void src_stmts(FILE *out, const ZVec *v, int d);

static void src_targets(FILE *out, const ZStmt *s)
{
    if (!s->targets.len && !s->tuple_lhs) return;
    if (s->tuple_lhs) fputc('(', out);
    for (int i = 0; i < s->targets.len; i++)
        fprintf(out, "%s%s", i ? ", " : "", ((ZTarget *)s->targets.items[i])->name);
    if (s->tuple_lhs) fputc(')', out);
    fputs(" = ", out);
}

static void src_block(FILE *out, const ZVec *v, int d)
{
    fputs("{\n", out);
    src_stmts(out, v, d + 1);
    indent(out, 2 * d);
    fputc('}', out);
}

static void src_stmt(FILE *out, const ZStmt *s, int d)
{
    indent(out, 2 * d);
    switch (s->kind) {
    case S_MSG:
        fprintf(out, "%s(", s->life.name);
        print_exprs(out, &s->args);
        fprintf(out, ") -> %s(", s->to.name);
        print_exprs(out, &s->params);
        fputs(");", out);
        break;
    case S_ASSIGN:
        fprintf(out, "%s: ", s->life.name);
        src_targets(out, s);
        print_expr_line(out, s->expr);
        fputc(';', out);
        break;
    case S_BLOCK:
        fprintf(out, "%s {\n", s->life.name);
        for (int i = 0; i < s->body.len; i++) {
            const ZStmt *b = s->body.items[i];
            indent(out, 2 * (d + 1));
            src_targets(out, b);
            print_expr_line(out, b->expr);
            fputs(";\n", out);
        }
        indent(out, 2 * d);
        fputc('}', out);
        break;
    case S_IF:
    case S_WHILE:
        fputs(s->kind == S_IF ? "if " : "while ", out);
        print_expr_line(out, s->expr);
        fprintf(out, " @ %s ", s->life.name);
        src_block(out, &s->body, d);
        if (s->has_else) {
            fputs(" else ", out);
            src_block(out, &s->els, d);
        }
        break;
    case S_SKIP: fprintf(out, "skip %s;", s->life.name); break;
    case S_ATOMIC:
        fprintf(out, "%s: atomic %s {\n", s->life.name, s->store_name);
        for (int i = 0; i < s->body.len; i++) {
            ZBuf b = {0};
            za_print_atomic_item(&b, s->body.items[i]);
            indent(out, 2 * (d + 1));
            fprintf(out, "%s\n", b.data);
            zu_buf_free(&b);
        }
        indent(out, 2 * d);
        fputc('}', out);
        break;
    case S_READ:
    case S_WRITE: {
        ZBuf b = {0};
        za_print_atomic_item(&b, s);
        fputs(b.data, out);
        zu_buf_free(&b);
        break;
    }
    case S_PAR:
        fputs("parallel {\n", out);
        for (int i = 0; i < s->branches.len; i++) {
            indent(out, 2 * (d + 1));
            fputs("branch ", out);
            src_block(out, &((ZBranch *)s->branches.items[i])->body, d + 1);
            fputc('\n', out);
        }
        indent(out, 2 * d);
        fputc('}', out);
        break;
    case S_COREGION:
        fputs("coregion ", out);
        src_block(out, &s->body, d);
        break;
    case S_RETURN:
        fputs("return ", out);
        if (s->tuple_ret) fputc('(', out);
        for (int i = 0; i < s->items.len; i++) {
            const ZReturnItem *r = s->items.items[i];
            fprintf(out, "%s%s @ %s", i ? ", " : "", r->value->name, r->at.name);
        }
        if (s->tuple_ret) fputc(')', out);
        fputc(';', out);
        break;
    case S_USE:
        fprintf(out, "%s(", s->life.name);
        print_exprs(out, &s->args);
        fputs(");", out);
        break;
    case S__COUNT: break;
    }
    fputc('\n', out);
}

static void src_stmts(FILE *out, const ZVec *v, int d)
{
    for (int i = 0; i < v->len; i++) src_stmt(out, v->items[i], d);
}

void za_print_workflow(FILE *out, const ZProgram *p, const ZDecl *wf, bool written)
{
    const ZVec *body = written && wf->written.len ? &wf->written : &wf->body;
    if (!written) {
        /* the variables the expansions made (their names are not source) */
        for (int i = 0; i < p->decls.len; i++) {
            const ZDecl *v = p->decls.items[i];
            if (v->kind != D_VAR || !v->name || !strchr(v->name, '#')) continue;
            fprintf(out, "var %s: ", v->name);
            print_type(out, v->type);
            fputs(";\n", out);
        }
    }
    fprintf(out, "workflow %s(", wf->name);
    for (int i = 0; i < wf->params.len; i++) {
        const ZParam *in = wf->params.items[i];
        fprintf(out, "%s%s: ", i ? ", " : "", in->name);
        print_type(out, in->type);
        fprintf(out, " @ %s", in->owner);
    }
    fputc(')', out);
    if (wf->results.len == 1) {
        fputs(" -> ", out);
        print_type(out, ((ZParam *)wf->results.items[0])->type);
    } else if (wf->results.len > 1) {
        fputs(" -> (", out);
        for (int i = 0; i < wf->results.len; i++) {
            if (i) fputs(", ", out);
            print_type(out, ((ZParam *)wf->results.items[i])->type);
        }
        fputc(')', out);
    }
    fputs(" {\n", out);
    src_stmts(out, body, 1);
    fputs("}\n", out);
}
