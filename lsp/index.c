/* index.c — one analysis of a document: the compilation through the
 * checks (every workflow, as `zgc check`), its diagnostics as data, and
 * every occurrence of a name with the symbol it refers to (from the
 * resolver's links: a name the resolver could not resolve has none).
 * Definition, references, hover, symbols and completion read it. */
#include "zl.h"

#include <stdlib.h>

#include "grammar.h"

/* What a name can refer to. */
typedef enum {
    SK_LIFELINE,
    SK_VAR,
    SK_CONST,
    SK_ENUM,
    SK_MEMBER,
    SK_GUARD,
    SK_ACTION,
    SK_WORKFLOW,
    SK_PARAM,
    SK_FRAGMENT,
} SymKind;

typedef struct Sym {
    SymKind kind;
    const char *name;
    ZSpan def; /* the name where it is declared */
    ZDecl *decl;
    int member;   /* SK_MEMBER, SK_PARAM: the index */
    ZVec writers; /* SK_VAR: lifeline indices (intptr_t + 1) that define it */
} Sym;

typedef struct Occ {
    ZSpan at;
    Sym *sym;
} Occ;

typedef struct Item {
    ZDiagLevel level;
    ZSpan at;
    char *msg;
    ZVec notes; /* Item* */
} Item;

struct ZlIndex {
    ZCompilation c;
    char *path;
    const char *text;
    size_t len;
    ZVec items;   /* Item* */
    ZVec syms;    /* Sym* */
    ZVec occs;    /* Occ* */
    ZIMap by_key; /* (decl, member) -> Sym* */
};

/* ---- diagnostics -------------------------------------------------------------- */

static void sink(void *ctx, ZDiagLevel lvl, ZSpan at, const char *msg)
{
    ZlIndex *ix = ctx;
    ZArena *a = ix->c.arena;
    Item *it = zu_alloc(a, sizeof *it);
    it->level = lvl;
    it->at = at;
    it->msg = zu_strdup(a, msg);
    if (lvl == ZD_NOTE && ix->items.len > 0) {
        Item *prev = ix->items.items[ix->items.len - 1];
        zu_vec_push(a, &prev->notes, it);
        return;
    }
    zu_vec_push(a, &ix->items, it);
}

static json_t *location(ZlIndex *ix, const char *uri, ZSpan s);

json_t *zl_index_diagnostics(ZlIndex *ix, const char *uri)
{
    json_t *arr = json_array();
    for (int i = 0; i < ix->items.len; i++) {
        Item *it = ix->items.items[i];
        int sev = it->level == ZD_ERROR ? 1 : it->level == ZD_WARNING ? 2 : 3;
        /* a diagnostic of an imported file (or of a fragment's copy made
         * there) stands at the first of its notes in this document: the
         * import, or the use that expanded it */
        ZSpan at = it->at;
        const char *msg = it->msg;
        if (at.file != 0) {
            for (int k = 0; k < it->notes.len; k++) {
                Item *n = it->notes.items[k];
                if (n->at.file == 0 && n->at.first_line > 0) {
                    const ZSource *src = zd_source(&ix->c.diag, at);
                    msg = zu_fmt(ix->c.arena, "%s:%d:%d: %s", src && src->path ? src->path : "?",
                                 at.first_line, at.first_column, it->msg);
                    at = n->at;
                    break;
                }
            }
            if (at.file != 0) at = (ZSpan){0};
        }
        json_t *d = json_pack("{s:o,s:i,s:s,s:s}", "range", zl_range(ix->text, ix->len, at),
                              "severity", sev, "source", "zgc", "message", msg);
        if (it->notes.len || at.first_line != it->at.first_line) {
            json_t *rel = json_array();
            if (it->at.file != 0)
                json_array_append_new(rel,
                                      json_pack("{s:o,s:s}", "location", location(ix, uri, it->at),
                                                "message", it->msg));
            for (int k = 0; k < it->notes.len; k++) {
                Item *n = it->notes.items[k];
                json_array_append_new(rel, json_pack("{s:o,s:s}", "location",
                                                     location(ix, uri, n->at), "message", n->msg));
            }
            if (json_array_size(rel))
                json_object_set_new(d, "relatedInformation", rel);
            else
                json_decref(rel);
        }
        json_array_append_new(arr, d);
    }
    return arr;
}

/* ---- symbols ------------------------------------------------------------------------ */

static uint64_t key(const void *decl, int member)
{
    return ((uint64_t)(uintptr_t)decl << 20) ^ (uint64_t)(member + 1);
}

static Sym *sym_add(ZlIndex *ix, SymKind k, const char *name, ZSpan def, ZDecl *d, int member)
{
    Sym *s = zu_alloc(ix->c.arena, sizeof *s);
    s->kind = k;
    s->name = name;
    s->def = def;
    s->decl = d;
    s->member = member;
    zu_vec_push(ix->c.arena, &ix->syms, s);
    *zu_imap_put(&ix->by_key, key(d, member), NULL) = (uintptr_t)s;
    return s;
}

static Sym *sym_of(ZlIndex *ix, const void *d, int member)
{
    if (!d) return NULL;
    uintptr_t *v = zu_imap_get(&ix->by_key, key(d, member));
    return v ? (Sym *)*v : NULL;
}

static void occ(ZlIndex *ix, ZSpan at, Sym *s)
{
    /* only what is written in this document: not imported files, not the
     * copies fragment expansions made */
    if (!s || at.first_line < 1 || at.file != 0 || at.exp != 0) return;
    Occ *o = zu_alloc(ix->c.arena, sizeof *o);
    o->at = at;
    o->sym = s;
    zu_vec_push(ix->c.arena, &ix->occs, o);
}

static Sym *lifeline(ZlIndex *ix, int index)
{
    ZProgram *p = ix->c.prog;
    if (index < 0 || index >= p->lifelines.len) return NULL;
    return sym_of(ix, p->lifelines.items[index], -1);
}

static void writer(ZlIndex *ix, ZDecl *var, int life)
{
    Sym *s = sym_of(ix, var, -1);
    if (!s || life < 0) return;
    for (int i = 0; i < s->writers.len; i++)
        if ((intptr_t)s->writers.items[i] == life + 1) return;
    zu_vec_push(ix->c.arena, &s->writers, (void *)(intptr_t)(life + 1));
}

static void walk_type(ZlIndex *ix, const ZType *t)
{
    if (!t) return;
    if (t->kind == TY_ENUM) occ(ix, t->span, sym_of(ix, t->enum_decl, -1));
    for (int i = 0; i < t->elems.len; i++) walk_type(ix, t->elems.items[i]);
}

static void walk_expr(ZlIndex *ix, const ZExpr *e)
{
    if (!e) return;
    switch (e->kind) {
    case E_NAME:
        if (e->name_kind == NAME_MEMBER)
            occ(ix, e->name_span, sym_of(ix, e->decl, e->member));
        else if (e->name_kind == NAME_PARAM)
            occ(ix, e->name_span, sym_of(ix, e->decl, 1000000 + e->member));
        else
            occ(ix, e->name_span, sym_of(ix, e->decl, -1));
        break;
    case E_AT_VAR:
        occ(ix, e->lifeline_span, lifeline(ix, e->life));
        occ(ix, e->name_span, sym_of(ix, e->decl, -1));
        break;
    case E_AT:
    case E_SEEN: occ(ix, e->lifeline_span, lifeline(ix, e->life)); break;
    case E_CALL:
        if (!e->builtin) occ(ix, e->name_span, sym_of(ix, e->decl, -1));
        break;
    default: break;
    }
    walk_expr(ix, e->a);
    walk_expr(ix, e->b);
    walk_expr(ix, e->c);
    for (int i = 0; i < e->args.len; i++) walk_expr(ix, e->args.items[i]);
}

static void walk_stmts(ZlIndex *ix, const ZVec *v);

static Sym *fragment(ZlIndex *ix, const char *name)
{
    for (int i = 0; name && i < ix->syms.len; i++) {
        Sym *s = ix->syms.items[i];
        if (s->kind == SK_FRAGMENT && !strcmp(s->name, name)) return s;
    }
    return NULL;
}

static void walk_stmt(ZlIndex *ix, const ZStmt *s)
{
    if (s->kind == S_USE) {
        occ(ix, s->life.span, fragment(ix, s->life.name));
        for (int i = 0; i < s->args.len; i++) walk_expr(ix, s->args.items[i]);
        return;
    }
    if (s->kind != S_RETURN) occ(ix, s->life.span, lifeline(ix, s->life.index));
    if (s->kind == S_MSG) occ(ix, s->to.span, lifeline(ix, s->to.index));
    for (int i = 0; i < s->args.len; i++) walk_expr(ix, s->args.items[i]);
    for (int i = 0; i < s->params.len; i++) {
        const ZExpr *p = s->params.items[i];
        walk_expr(ix, p);
        if (p->kind == E_NAME && p->name_kind == NAME_VAR) writer(ix, p->decl, s->to.index);
    }
    for (int i = 0; i < s->targets.len; i++) {
        const ZTarget *t = s->targets.items[i];
        occ(ix, t->span, sym_of(ix, t->var, -1));
        writer(ix, t->var, s->life.index);
    }
    walk_expr(ix, s->expr);
    walk_stmts(ix, &s->body);
    walk_stmts(ix, &s->els);
    for (int i = 0; i < s->branches.len; i++)
        walk_stmts(ix, &((ZBranch *)s->branches.items[i])->body);
    for (int i = 0; i < s->items.len; i++) {
        const ZReturnItem *r = s->items.items[i];
        walk_expr(ix, r->value);
        occ(ix, r->at.span, lifeline(ix, r->at.index));
    }
}

static void walk_stmts(ZlIndex *ix, const ZVec *v)
{
    for (int i = 0; i < v->len; i++) walk_stmt(ix, v->items[i]);
}

static void build(ZlIndex *ix)
{
    ZProgram *p = ix->c.prog;
    /* the declarations first: uses may come before them */
    for (int i = 0; i < p->decls.len; i++) {
        ZDecl *d = p->decls.items[i];
        static const SymKind kinds[] = {
            [D_LIFELINE] = SK_LIFELINE, [D_CONST] = SK_CONST,      [D_ENUM] = SK_ENUM,
            [D_VAR] = SK_VAR,           [D_GUARD] = SK_GUARD,      [D_ACTION] = SK_ACTION,
            [D_WORKFLOW] = SK_WORKFLOW, [D_FRAGMENT] = SK_FRAGMENT};
        if (!d->name || d->kind == D_IMPORT || (unsigned)d->kind >= sizeof kinds / sizeof *kinds)
            continue;
        sym_add(ix, kinds[d->kind], d->name, d->name_span, d, -1);
        for (int k = 0; d->kind == D_ENUM && k < d->members.len; k++) {
            ZParam *m = d->members.items[k];
            sym_add(ix, SK_MEMBER, m->name, m->span, d, k);
        }
        for (int k = 0; d->kind == D_ACTION && k < d->params.len; k++) {
            ZParam *m = d->params.items[k];
            sym_add(ix, SK_PARAM, m->name, m->span, d, 1000000 + k);
        }
    }
    /* the variables a workflow's inputs declare */
    for (int i = 0; i < p->decls.len; i++) {
        ZDecl *d = p->decls.items[i];
        if (d->kind != D_WORKFLOW) continue;
        for (int k = 0; k < d->params.len; k++) {
            ZParam *in = d->params.items[k];
            if (in->var && !sym_of(ix, in->var, -1))
                sym_add(ix, SK_VAR, in->var->name, in->var->name_span, in->var, -1);
        }
    }
    for (int i = 0; i < ix->syms.len; i++) {
        Sym *s = ix->syms.items[i];
        occ(ix, s->def, s);
    }
    for (int i = 0; i < p->decls.len; i++) {
        ZDecl *d = p->decls.items[i];
        walk_expr(ix, d->expr);
        walk_type(ix, d->type);
        for (int k = 0; k < d->params.len; k++) {
            ZParam *in = d->params.items[k];
            walk_type(ix, in->type);
            if (d->kind == D_WORKFLOW) {
                occ(ix, in->owner_span, lifeline(ix, in->owner_index));
                if (!in->var) continue;
                writer(ix, in->var, in->owner_index);
                /* an input of a declared variable names it */
                if (memcmp(&in->var->name_span, &in->span, sizeof in->span))
                    occ(ix, in->span, sym_of(ix, in->var, -1));
            }
        }
        for (int k = 0; k < d->results.len; k++)
            walk_type(ix, ((ZParam *)d->results.items[k])->type);
        for (int k = 0; k < d->props.len; k++) walk_expr(ix, ((ZProp *)d->props.items[k])->value);
        walk_stmts(ix, &d->body);
        /* the fragment uses as written (the body has their expansions) */
        walk_stmts(ix, &d->written);
    }
}

ZlIndex *zl_index_new(const char *path, const char *text, size_t len)
{
    ZlIndex *ix = zu_xcalloc(1, sizeof *ix);
    /* the compilation keeps the path: a copy that lives as long as it */
    ix->path = zu_xmalloc(strlen(path) + 1);
    strcpy(ix->path, path);
    zc_init(&ix->c, zp_parse, ix->path, text, len, stderr);
    ix->c.diag.sink = sink;
    ix->c.diag.sink_ctx = ix;
    ix->c.all_workflows = true;
    ix->c.warnings = true; /* as `zgc check` reports them */
    ix->text = ix->c.src.text;
    ix->len = ix->c.src.len;
    zc_run(&ix->c, ZC_CHECK);
    /* the names are linked once resolution ran, even with errors */
    if (ix->c.prog && ix->c.done > ZC_RESOLVE) build(ix);
    return ix;
}

void zl_index_free(ZlIndex *ix)
{
    if (!ix) return;
    zu_imap_free(&ix->by_key);
    zc_free(&ix->c);
    free(ix->path);
    free(ix);
}

/* ---- requests ------------------------------------------------------------------------ */

static bool inside(ZSpan s, int line, int col)
{
    if (line < s.first_line || line > s.last_line) return false;
    if (line == s.first_line && col < s.first_column) return false;
    /* the position just after the name counts too (a cursor at its end) */
    if (line == s.last_line && col > s.last_column + 1) return false;
    return true;
}

static Sym *at(ZlIndex *ix, int line, int col)
{
    for (int i = 0; i < ix->occs.len; i++) {
        Occ *o = ix->occs.items[i];
        if (inside(o->at, line, col)) return o->sym;
    }
    return NULL;
}

/* A location: in this document, or in the imported file the span is in. */
static json_t *location(ZlIndex *ix, const char *uri, ZSpan s)
{
    if (s.file != 0) {
        const ZSource *src = zd_source(&ix->c.diag, s);
        if (src && src->index == s.file && src->path) {
            char *other = zl_uri_of(src->path);
            json_t *loc =
                json_pack("{s:s,s:o}", "uri", other, "range", zl_range(src->text, src->len, s));
            free(other);
            return loc;
        }
    }
    return json_pack("{s:s,s:o}", "uri", uri, "range", zl_range(ix->text, ix->len, s));
}

json_t *zl_index_definition(ZlIndex *ix, const char *uri, int line, int col)
{
    Sym *s = at(ix, line, col);
    return s ? location(ix, uri, s->def) : json_null();
}

json_t *zl_index_references(ZlIndex *ix, const char *uri, int line, int col, bool with_decl)
{
    Sym *s = at(ix, line, col);
    if (!s) return json_null();
    json_t *arr = json_array();
    for (int i = 0; i < ix->occs.len; i++) {
        Occ *o = ix->occs.items[i];
        if (o->sym != s) continue;
        if (!with_decl && !memcmp(&o->at, &s->def, sizeof o->at)) continue;
        json_array_append_new(arr, location(ix, uri, o->at));
    }
    return arr;
}

static void params_str(ZBuf *b, ZArena *a, const ZVec *v, bool owners)
{
    for (int i = 0; i < v->len; i++) {
        const ZParam *p = v->items[i];
        if (i) zu_buf_puts(b, ", ");
        if (p->name) zu_buf_printf(b, "%s: ", p->name);
        zu_buf_puts(b, za_type_str(a, p->type));
        if (owners && p->owner) zu_buf_printf(b, " @ %s", p->owner);
    }
}

static void results_str(ZBuf *b, ZArena *a, const ZDecl *d)
{
    if (d->results.len == 0) return;
    zu_buf_puts(b, " -> ");
    bool paren = d->results.len > 1 || d->named_results;
    if (paren) zu_buf_putc(b, '(');
    params_str(b, a, &d->results, false);
    if (paren) zu_buf_putc(b, ')');
}

/* The hover text of a symbol: its declaration as code, then what else is
 * known (a variable's owners). */
static char *describe(ZlIndex *ix, const Sym *s)
{
    ZArena *a = ix->c.arena;
    ZBuf b = {0};
    zu_buf_puts(&b, "```zg\n");
    const ZDecl *d = s->decl;
    switch (s->kind) {
    case SK_LIFELINE: zu_buf_printf(&b, "lifeline %s", s->name); break;
    case SK_VAR: zu_buf_printf(&b, "var %s: %s", s->name, za_type_str(a, d->type)); break;
    case SK_CONST:
        zu_buf_printf(&b, "const %s", s->name);
        if (d->type) zu_buf_printf(&b, ": %s", za_type_str(a, d->type));
        zu_buf_puts(&b, " = ");
        za_print_expr(&b, d->expr);
        break;
    case SK_ENUM:
        zu_buf_printf(&b, "enum %s {", s->name);
        for (int i = 0; i < d->members.len; i++)
            zu_buf_printf(&b, "%s %s", i ? "," : "", ((ZParam *)d->members.items[i])->name);
        zu_buf_puts(&b, " }");
        break;
    case SK_MEMBER: zu_buf_printf(&b, "%s: %s", s->name, d->name); break;
    case SK_GUARD:
        zu_buf_printf(&b, "guard %s = ", s->name);
        za_print_expr(&b, d->expr);
        break;
    case SK_ACTION:
        zu_buf_printf(&b, "%s %s(", za_action_kind_name(d->action), s->name);
        params_str(&b, a, &d->params, false);
        zu_buf_putc(&b, ')');
        results_str(&b, a, d);
        break;
    case SK_WORKFLOW:
        zu_buf_printf(&b, "workflow %s(", s->name);
        params_str(&b, a, &d->params, true);
        zu_buf_putc(&b, ')');
        results_str(&b, a, d);
        break;
    case SK_PARAM: {
        const ZParam *p = d->params.items[s->member - 1000000];
        zu_buf_printf(&b, "%s: %s", s->name, za_type_str(a, p->type));
        break;
    }
    case SK_FRAGMENT:
        zu_buf_printf(&b, "fragment %s(", s->name);
        for (int i = 0; i < d->params.len; i++) {
            const ZParam *p = d->params.items[i];
            zu_buf_printf(&b, "%s%s%s: %s", i ? ", " : "", p->fkind == FP_CONST ? "const " : "",
                          p->name, p->fkind == FP_LIFELINE ? "lifeline" : za_type_str(a, p->type));
        }
        zu_buf_putc(&b, ')');
        break;
    }
    zu_buf_puts(&b, "\n```");
    if (s->kind == SK_VAR) {
        if (s->writers.len == 0) {
            zu_buf_puts(&b, "\n\nno lifeline defines it");
        } else {
            zu_buf_puts(&b, s->writers.len == 1 ? "\n\nowner: " : "\n\nowners: ");
            for (int i = 0; i < s->writers.len; i++)
                zu_buf_printf(&b, "%s%s", i ? ", " : "",
                              za_lifeline_name(ix->c.prog, (int)(intptr_t)s->writers.items[i] - 1));
        }
    } else if (s->kind == SK_MEMBER) {
        zu_buf_printf(&b, "\n\nmember of enum %s", d->name);
    } else if (s->kind == SK_PARAM) {
        zu_buf_printf(&b, "\n\nparameter of %s", d->name);
    }
    char *out = zu_strdup(a, b.data);
    zu_buf_free(&b);
    return out;
}

json_t *zl_index_hover(ZlIndex *ix, int line, int col)
{
    for (int i = 0; i < ix->occs.len; i++) {
        Occ *o = ix->occs.items[i];
        if (!inside(o->at, line, col)) continue;
        return json_pack("{s:{s:s,s:s},s:o}", "contents", "kind", "markdown", "value",
                         describe(ix, o->sym), "range", zl_range(ix->text, ix->len, o->at));
    }
    return json_null();
}

/* LSP's SymbolKind and CompletionItemKind numbers. */
static int symbol_kind(SymKind k)
{
    switch (k) {
    case SK_LIFELINE: return 5; /* Class */
    case SK_VAR: return 13;     /* Variable */
    case SK_CONST: return 14;   /* Constant */
    case SK_ENUM: return 10;    /* Enum */
    case SK_MEMBER: return 22;  /* EnumMember */
    case SK_GUARD: return 17;   /* Boolean */
    case SK_ACTION: return 12;  /* Function */
    case SK_WORKFLOW: return 6; /* Method */
    case SK_PARAM: return 13;
    case SK_FRAGMENT: return 12;
    }
    return 13;
}

static int completion_kind(SymKind k)
{
    switch (k) {
    case SK_LIFELINE: return 7; /* Class */
    case SK_VAR: return 6;      /* Variable */
    case SK_CONST: return 21;   /* Constant */
    case SK_ENUM: return 13;    /* Enum */
    case SK_MEMBER: return 20;  /* EnumMember */
    case SK_GUARD: return 6;
    case SK_ACTION: return 3; /* Function */
    case SK_WORKFLOW: return 2;
    case SK_PARAM: return 6;
    case SK_FRAGMENT: return 15; /* Snippet */
    }
    return 6;
}

json_t *zl_index_symbols(ZlIndex *ix)
{
    json_t *arr = json_array();
    ZProgram *p = ix->c.prog;
    if (!p) return arr;
    for (int i = 0; i < p->decls.len; i++) {
        ZDecl *d = p->decls.items[i];
        Sym *s = sym_of(ix, d, -1);
        if (!s || d->span.file != 0) continue;
        json_t *sym = json_pack("{s:s,s:i,s:o,s:o}", "name", s->name, "kind", symbol_kind(s->kind),
                                "range", zl_range(ix->text, ix->len, d->span), "selectionRange",
                                zl_range(ix->text, ix->len, s->def));
        if (d->kind == D_ENUM) {
            json_t *kids = json_array();
            for (int k = 0; k < d->members.len; k++) {
                ZParam *m = d->members.items[k];
                json_array_append_new(
                    kids, json_pack("{s:s,s:i,s:o,s:o}", "name", m->name, "kind", 22, "range",
                                    zl_range(ix->text, ix->len, m->span), "selectionRange",
                                    zl_range(ix->text, ix->len, m->span)));
            }
            json_object_set_new(sym, "children", kids);
        }
        json_array_append_new(arr, sym);
    }
    return arr;
}

json_t *zl_index_completion(ZlIndex *ix)
{
    json_t *arr = json_array();
    for (int i = 0; i < ix->syms.len; i++) {
        Sym *s = ix->syms.items[i];
        if (s->kind == SK_PARAM) continue; /* in scope only inside its action */
        char *detail = describe(ix, s);
        /* the declaration line without the code fence */
        char *code = detail + 6;
        char *end = strstr(code, "\n```");
        if (end) *end = 0;
        json_array_append_new(arr, json_pack("{s:s,s:i,s:s}", "label", s->name, "kind",
                                             completion_kind(s->kind), "detail", code));
    }
    return json_pack("{s:b,s:o}", "isIncomplete", 0, "items", arr);
}
