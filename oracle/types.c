/* types.c — every value whose type a declaration gives has that type, as
 * the runtime writes values (runtime/values.c): an int is a JSON integer,
 * a float a JSON real (the runtime always prints a point or an exponent:
 * 1.0, 1e+16; never a bare 1), a bool true or false, a str a string, an
 * enum value one of its members' names, a json value anything.  Checked
 * here: every value of a start store and of an event's writes against its
 * variable.  The values of messages are checked against the statement's
 * types where the replay matches them (replay.c), results against the
 * workflow's result types (check.c).  A wrong type is a disagreement with
 * the line, the value and the type; it is never left unverified, and
 * nothing computed from it is evaluated. */
#include "zt.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

bool zt_has_type(const json_t *j, const ZType *t)
{
    if (!j || !t) return false;
    switch (t->kind) {
    case TY_INT: return json_is_integer(j);
    case TY_FLOAT: return json_is_real(j);
    case TY_BOOL: return json_is_boolean(j);
    case TY_STR: return json_is_string(j);
    case TY_JSON: return true;
    case TY_NULL: return json_is_null(j);
    case TY_ENUM: {
        if (!json_is_string(j) || !t->enum_decl) return false;
        const ZDecl *en = t->enum_decl;
        for (int k = 0; k < en->members.len; k++) {
            const ZParam *p = ZU_VEC_AT(en->members, k);
            if (!strcmp(p->name, json_string_value(j))) return true;
        }
        return false;
    }
    default: return false; /* no value has an erroneous, void or tuple type */
    }
}

void zt_want_type(Check *c, int line, const json_t *j, const ZType *t, const char *fmt, ...)
{
    if (zt_has_type(j, t)) return;
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const char *tn = za_type_name(c->a, t);
    if (t && t->kind == TY_FLOAT && json_is_integer(j))
        zt_fail(c, line,
                "%s is %s, not a value of type %s (a float is written with a point or an "
                "exponent)",
                what, zt_jtext(c, j), tn);
    zt_fail(c, line, "%s is %s, not a value of type %s", what, zt_jtext(c, j), tn);
}

void zt_check_types(Check *c)
{
    const ZtModel *m = c->m;
    const char *key;
    json_t *val;
    for (int l = 0; l < m->nl; l++) json_object_foreach(c->start[l], key, val)
        {
            const ZDecl *x = m->vars[zt_var_index(m, key)];
            zt_want_type(c, c->start_line[l], val, x->type, "start store of lifeline %s: %s",
                         m->lnames[l], key);
        }
    for (long i = 0; i < c->nev; i++) {
        Ev *e = &c->ev[i];
        /* a store operation's values have their cells' types */
        if (e->kind == K_ST_READ) {
            const ZDecl *cell = zt_cell(zt_store(m, e->store), e->cell);
            zt_want_type(c, e->line, e->rvalue, cell->type,
                         "lifeline %s event %d: the value read from %s.%s", m->lnames[e->life],
                         e->index, e->store, e->cell);
        }
        if (e->kind == K_ST_COMMIT) json_object_foreach(e->cells, key, val)
            {
                const ZDecl *cell = zt_cell(zt_store(m, e->store), key);
                zt_want_type(c, e->line, val, cell->type,
                             "lifeline %s event %d: the value committed to %s.%s",
                             m->lnames[e->life], e->index, e->store, key);
            }
        json_object_foreach(e->writes, key, val)
        {
            const ZDecl *x = m->vars[zt_var_index(m, key)];
            zt_want_type(c, e->line, val, x->type, "lifeline %s event %d: the written value of %s",
                         m->lnames[e->life], e->index, key);
        }
    }
}
