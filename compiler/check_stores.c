/* check_stores.c — stores and atomic blocks (language reference §11).
 *
 * A store declares typed cells, each with a constant default, a registry
 * of tools (effect actions) and its consistency level L0..L4.  An atomic
 * block `A: atomic S { … }` is one operation on the store, on lifeline A:
 * its reads come first, then local statements and calls (an `effect`
 * action called there must be one of the store's tools), then its writes.
 * Messages and control statements are not allowed inside it: the block
 * is one read-generate-write record, run by one lifeline without waiting
 * for anybody.  The walk of the workflow (check.c) calls ck_atomic_rules
 * and the item checks here, and does the definedness of the items. */
#include "check.h"

/* The level named "L0".."L4", or -1. */
int zk_level(const char *name)
{
    if (name && name[0] == 'L' && name[1] >= '0' && name[1] <= '4' && name[2] == 0)
        return name[1] - '0';
    return -1;
}

void ck_store_decl(Ck *c, ZDecl *st)
{
    for (int i = 0; i < st->cells.len; i++) {
        ZDecl *cell = st->cells.items[i];
        if (!cell->expr) {
            zd_error(c->d, cell->name_span,
                     "cell `%s` of store `%s` needs a default value: a cell always has one "
                     "(`cell %s: %s = …;`)",
                     cell->name, st->name, cell->name, za_type_name(c->a, cell->type));
            continue;
        }
        ZType *t = ck_type(c, cell->expr, X_CONST);
        if (!ck_assignable(cell->type, t)) {
            zd_error(c->d, cell->expr->span, "cannot assign `%s` to cell `%s` of type `%s`",
                     za_type_name(c->a, t), cell->name, za_type_name(c->a, cell->type));
            continue;
        }
        ZValue v;
        if (!is_err(t)) ck_fold_into(c, &cell->expr, &v);
    }
    for (int i = 0; i < st->tools.len; i++) {
        ZParam *t = st->tools.items[i];
        if (t->ref && t->ref->action != ACT_EFFECT) {
            ZActionKind k = t->ref->action;
            zd_error(c->d, t->span,
                     "`%s` is %s %s action, not a tool: a tool is an `effect` action", t->name,
                     k == ACT_EXTERN_PURE || k == ACT_LLM ? "an" : "a", za_action_kind_name(k));
            zd_note(c->d, t->ref->name_span, "`%s` is declared here", t->name);
        }
    }
    st->level = zk_level(st->level_name);
    if (!st->level_name)
        zd_error(c->d, st->name_span,
                 "store `%s` declares no consistency level: add `consistency L0;` (or L1 to L4)",
                 st->name);
    else if (st->level < 0)
        zd_error(c->d, st->level_span,
                 "unknown consistency level `%s`: the levels are L0, L1, L2, L3 and L4",
                 st->level_name);
    if (st->level_twice)
        zd_error(c->d, st->level_again, "store `%s` declares its consistency level twice",
                 st->name);
}

/* The item's place in an atomic block: 0 reads, 1 the rest, 2 writes. */
static int phase(const ZStmt *s) { return s->kind == S_READ ? 0 : s->kind == S_WRITE ? 2 : 1; }

static const char *what(const ZStmt *s)
{
    switch (s->kind) {
    case S_MSG: return "a message";
    case S_IF: return "an `if`";
    case S_WHILE: return "a `while`";
    case S_PAR: return "a `parallel`";
    case S_SKIP: return "`skip`";
    default: return "this statement";
    }
}

void ck_atomic_rules(Ck *c, ZStmt *s)
{
    const ZDecl *st = s->store;
    int seen = 0; /* highest phase so far */
    for (int i = 0; i < s->body.len; i++) {
        ZStmt *it = s->body.items[i];
        if (it->kind != S_READ && it->kind != S_WRITE && it->kind != S_ASSIGN) {
            zd_error(c->d, first_line(it->span),
                     "%s cannot be inside an atomic block: the block is one operation of %s on "
                     "store `%s`, which waits for nobody",
                     what(it), s->life.name, s->store_name);
            continue;
        }
        int ph = phase(it);
        if (ph < seen) {
            if (ph == 0)
                zd_error(c->d, first_line(it->span),
                         "a read must come before the other items of an atomic block: the "
                         "operation reads, then generates, then writes");
            else
                zd_error(c->d, first_line(it->span),
                         "this statement comes after a write: the writes of an atomic block "
                         "come last (the operation reads, then generates, then writes)");
            continue;
        }
        seen = ph;
        if (it->kind == S_ASSIGN && it->is_action && it->expr && it->expr->decl &&
            it->expr->decl->kind == D_ACTION && it->expr->decl->action == ACT_EFFECT && st) {
            bool tool = false;
            for (int k = 0; k < st->tools.len && !tool; k++)
                tool = ((ZParam *)st->tools.items[k])->ref == it->expr->decl;
            if (!tool)
                zd_error(c->d, it->expr->name_span,
                         "`%s` is not a tool of store `%s`: an atomic block calls only the "
                         "effect actions its store lists in `tools`",
                         it->expr->name, st->name);
        }
        if (it->kind == S_WRITE) {
            for (int k = 0; k < i; k++) {
                ZStmt *o = s->body.items[k];
                if (o->kind != S_WRITE || o->registry != it->registry) continue;
                if (it->registry || (it->cell_decl && o->cell_decl == it->cell_decl)) {
                    if (it->registry)
                        zd_error(c->d, it->cell_span,
                                 "the tool registry is written twice in this atomic block");
                    else
                        zd_error(c->d, it->cell_span,
                                 "cell `%s` is written twice in this atomic block", it->cell);
                    zd_note(c->d, o->cell_span, "first written here");
                    break;
                }
            }
        }
    }
}

void ck_read_item(Ck *c, ZStmt *it)
{
    ZTarget *t = it->targets.items[0];
    if (!t->var || !it->cell_decl) return;
    if (!ck_assignable(t->var->type, it->cell_decl->type))
        zd_error(c->d, t->span, "cannot read cell `%s` of type `%s` into `%s` of type `%s`",
                 it->cell, za_type_name(c->a, it->cell_decl->type), t->name,
                 za_type_name(c->a, t->var->type));
}

void ck_write_item(Ck *c, ZStmt *it)
{
    if (it->registry || !it->expr) return;
    ZType *t = ck_type(c, it->expr, X_STMT);
    if (it->cell_decl && !ck_assignable(it->cell_decl->type, t))
        zd_error(c->d, it->expr->span, "cannot write `%s` to cell `%s` of type `%s`",
                 za_type_name(c->a, t), it->cell, za_type_name(c->a, it->cell_decl->type));
}
