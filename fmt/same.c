/* same.c — structural equality of syntax trees, spans aside: what the
 * formatter must keep.  Compares what the parser sets (zp_parse), before
 * resolution: names as written, literals, operators, flags and every list
 * in order.  A new field of the AST that the parser sets belongs here. */
#include "fmt.h"

#include <math.h>

typedef struct Cmp {
    ZBuf *why;
    const char *where; /* "decl 3", "decl 3 stmt 2" */
    ZArena *arena;
} Cmp;

static bool differ(Cmp *c, const char *fmt, const char *x, const char *y)
{
    if (c->why && c->why->len == 0) {
        zu_buf_printf(c->why, "%s: ", c->where);
        zu_buf_printf(c->why, fmt, x ? x : "(none)", y ? y : "(none)");
    }
    return false;
}

static bool same_str(const char *x, const char *y)
{
    if (!x || !y) return x == y;
    return x == y || !strcmp(x, y);
}

#define NAME(what, x, y) (same_str((x), (y)) || differ(c, what " `%s` vs `%s`", (x), (y)))
#define FLAG(what, x, y) \
    ((x) == (y) || differ(c, what " %s vs %s", (x) ? "yes" : "no", (y) ? "yes" : "no"))
#define KIND(what, x, y, namefn) ((x) == (y) || differ(c, what " %s vs %s", namefn(x), namefn(y)))

static const char *type_kind_name(int k)
{
    static const char *const names[] = {"error", "bool",  "int",   "float", "str", "json",
                                        "enum",  "named", "tuple", "void",  "null"};
    return k >= 0 && k < (int)(sizeof names / sizeof *names) ? names[k] : "?";
}
static const char *expr_kind(int k) { return za_expr_kind_name((ZExprKind)k); }
static const char *stmt_kind(int k) { return za_stmt_kind_name((ZStmtKind)k); }
static const char *decl_kind(int k) { return za_decl_kind_name((ZDeclKind)k); }
static const char *op_text(int k) { return za_op_text((ZOp)k); }
static const char *act_kind(int k) { return za_action_kind_name((ZActionKind)k); }

static bool same_len(Cmp *c, const char *what, int x, int y)
{
    if (x == y) return true;
    if (c->why && c->why->len == 0) zu_buf_printf(c->why, "%s: %d %s vs %d", c->where, x, what, y);
    return false;
}

static bool same_type(Cmp *c, const ZType *x, const ZType *y)
{
    if (!x || !y)
        return x == y || differ(c, "type %s vs %s", x ? "present" : NULL, y ? "present" : NULL);
    if (!KIND("type", x->kind, y->kind, type_kind_name)) return false;
    if (!NAME("type name", x->name, y->name)) return false;
    if (!same_len(c, "tuple elements", x->elems.len, y->elems.len)) return false;
    for (int i = 0; i < x->elems.len; i++)
        if (!same_type(c, x->elems.items[i], y->elems.items[i])) return false;
    return true;
}

static bool same_expr(Cmp *c, const ZExpr *x, const ZExpr *y);

static bool same_exprs(Cmp *c, const ZVec *x, const ZVec *y)
{
    if (!same_len(c, "expressions", x->len, y->len)) return false;
    for (int i = 0; i < x->len; i++)
        if (!same_expr(c, x->items[i], y->items[i])) return false;
    return true;
}

static bool same_expr(Cmp *c, const ZExpr *x, const ZExpr *y)
{
    if (!x || !y)
        return x == y ||
               differ(c, "expression %s vs %s", x ? "present" : NULL, y ? "present" : NULL);
    if (!KIND("expression", x->kind, y->kind, expr_kind)) return false;
    switch (x->kind) {
    case E_INT:
        if (x->lit.i != y->lit.i)
            return differ(c, "integer %s vs %s", zu_fmt(c->arena, "%lld", (long long)x->lit.i),
                          zu_fmt(c->arena, "%lld", (long long)y->lit.i));
        break;
    case E_FLOAT:
        /* the same bits: -0.0 and 0.0 differ */
        if (memcmp(&x->lit.f, &y->lit.f, sizeof x->lit.f))
            return differ(c, "float %s vs %s", zu_fmt(c->arena, "%.17g", x->lit.f),
                          zu_fmt(c->arena, "%.17g", y->lit.f));
        break;
    case E_STR:
        if (x->slen != y->slen || memcmp(x->lit.s, y->lit.s, x->slen))
            return differ(c, "string \"%s\" vs \"%s\"", x->lit.s, y->lit.s);
        break;
    case E_BOOL:
        if (!FLAG("boolean", x->lit.b, y->lit.b)) return false;
        break;
    case E_UNARY:
    case E_BINARY:
        if (!KIND("operator", x->op, y->op, op_text)) return false;
        break;
    default: break;
    }
    return NAME("name", x->name, y->name) && NAME("lifeline", x->lifeline, y->lifeline) &&
           same_expr(c, x->a, y->a) && same_expr(c, x->b, y->b) && same_expr(c, x->c, y->c) &&
           same_exprs(c, &x->args, &y->args);
}

static const char *fkind_name(int k)
{
    static const char *const names[] = {"none", "lifeline", "variable", "constant"};
    return k >= 0 && k < 4 ? names[k] : "?";
}

static bool same_param(Cmp *c, const ZParam *x, const ZParam *y)
{
    return NAME("parameter", x->name, y->name) && same_type(c, x->type, y->type) &&
           KIND("parameter kind", x->fkind, y->fkind, fkind_name) &&
           NAME("owner", x->owner, y->owner);
}

static bool same_params(Cmp *c, const char *what, const ZVec *x, const ZVec *y)
{
    if (!same_len(c, what, x->len, y->len)) return false;
    for (int i = 0; i < x->len; i++)
        if (!same_param(c, x->items[i], y->items[i])) return false;
    return true;
}

static bool same_stmts(Cmp *c, const ZVec *x, const ZVec *y);

static bool same_stmt(Cmp *c, const ZStmt *x, const ZStmt *y)
{
    if (!KIND("statement", x->kind, y->kind, stmt_kind)) return false;
    if (!NAME("lifeline", x->life.name, y->life.name) || !NAME("receiver", x->to.name, y->to.name))
        return false;
    if (!same_exprs(c, &x->args, &y->args) || !same_exprs(c, &x->params, &y->params)) return false;
    if (!same_len(c, "targets", x->targets.len, y->targets.len)) return false;
    for (int i = 0; i < x->targets.len; i++)
        if (!NAME("target", ((ZTarget *)x->targets.items[i])->name,
                  ((ZTarget *)y->targets.items[i])->name))
            return false;
    if (!FLAG("tuple targets", x->tuple_lhs, y->tuple_lhs) || !same_expr(c, x->expr, y->expr))
        return false;
    if (!same_stmts(c, &x->body, &y->body)) return false;
    if (!FLAG("else", x->has_else, y->has_else) || !same_stmts(c, &x->els, &y->els)) return false;
    if (!same_len(c, "branches", x->branches.len, y->branches.len)) return false;
    for (int i = 0; i < x->branches.len; i++)
        if (!same_stmts(c, &((ZBranch *)x->branches.items[i])->body,
                        &((ZBranch *)y->branches.items[i])->body))
            return false;
    if (!same_len(c, "return items", x->items.len, y->items.len)) return false;
    for (int i = 0; i < x->items.len; i++) {
        const ZReturnItem *a = x->items.items[i], *b = y->items.items[i];
        if (!same_expr(c, a->value, b->value) || !NAME("return lifeline", a->at.name, b->at.name))
            return false;
    }
    /* store operations and their items */
    if (!NAME("store", x->store_name, y->store_name) || !NAME("cell", x->cell, y->cell) ||
        !FLAG("registry", x->registry, y->registry) ||
        !same_params(c, "tools", &x->tools, &y->tools))
        return false;
    return FLAG("tuple return", x->tuple_ret, y->tuple_ret);
}

static bool same_stmts(Cmp *c, const ZVec *x, const ZVec *y)
{
    if (!same_len(c, "statements", x->len, y->len)) return false;
    const char *outer = c->where;
    for (int i = 0; i < x->len; i++) {
        c->where = zu_fmt(c->arena, "%s stmt %d", outer, i + 1);
        if (!same_stmt(c, x->items[i], y->items[i])) return false;
    }
    c->where = outer;
    return true;
}

static bool same_decl(Cmp *c, const ZDecl *x, const ZDecl *y)
{
    if (!KIND("declaration", x->kind, y->kind, decl_kind)) return false;
    if (!NAME("name", x->name, y->name) || !same_expr(c, x->expr, y->expr) ||
        !same_type(c, x->type, y->type))
        return false;
    if (!same_params(c, "members", &x->members, &y->members)) return false;
    if (x->kind == D_ACTION && !KIND("action", x->action, y->action, act_kind)) return false;
    if (!same_params(c, "parameters", &x->params, &y->params) ||
        !same_params(c, "results", &x->results, &y->results))
        return false;
    if (!FLAG("named results", x->named_results, y->named_results) ||
        !FLAG("body", x->has_body, y->has_body))
        return false;
    if (!same_len(c, "properties", x->props.len, y->props.len)) return false;
    for (int i = 0; i < x->props.len; i++) {
        const ZProp *a = x->props.items[i], *b = y->props.items[i];
        if (!NAME("property", a->key, b->key) || !same_expr(c, a->value, b->value)) return false;
    }
    if (!FLAG("return", x->ret != NULL, y->ret != NULL)) return false;
    /* a fragment's own variables */
    if (!same_len(c, "fragment variables", x->locals.len, y->locals.len)) return false;
    for (int i = 0; i < x->locals.len; i++)
        if (!same_decl(c, x->locals.items[i], y->locals.items[i])) return false;
    /* a store's cells, tools and level */
    if (!same_len(c, "cells", x->cells.len, y->cells.len)) return false;
    for (int i = 0; i < x->cells.len; i++)
        if (!same_decl(c, x->cells.items[i], y->cells.items[i])) return false;
    if (!same_params(c, "tools", &x->tools, &y->tools) ||
        !NAME("consistency", x->level_name, y->level_name) ||
        !FLAG("consistency twice", x->level_twice, y->level_twice))
        return false;
    return same_stmts(c, &x->body, &y->body);
}

bool zf_same_program(const ZProgram *x, const ZProgram *y, ZBuf *why)
{
    ZArena *a = zu_arena_new();
    Cmp c = {.why = why, .where = "program", .arena = a};
    bool same = same_len(&c, "declarations", x->decls.len, y->decls.len);
    for (int i = 0; same && i < x->decls.len; i++) {
        c.where = zu_fmt(a, "decl %d", i + 1);
        same = same_decl(&c, x->decls.items[i], y->decls.items[i]);
    }
    zu_arena_free(a);
    return same;
}
