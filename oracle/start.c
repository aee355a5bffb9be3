/* start.c — the start stores against the declarations (language
 * reference §3, §3.2): a run starts every lifeline with every variable's
 * default and, on the owner of each workflow input, the input's value
 * (--arg); every other variable has no value.  So each start store holds
 * exactly
 *
 *   - the inputs its lifeline owns, with any value of their type (the
 *     inputs are the run's own choice: their values are not checked,
 *     their presence and type are);
 *   - every other variable with a default, with the default's value (a
 *     constant expression, folded by the compiler's checker: oracle.h);
 *   - nothing else.
 *
 * Types were checked before (types.c). */
#include "zt.h"

#include <string.h>

/* The input of the workflow that initialises x on lifeline l, or NULL. */
static const ZParam *input_of(const ZtModel *m, const ZDecl *x, int l)
{
    for (int i = 0; i < m->wf->params.len; i++) {
        const ZParam *in = ZU_VEC_AT(m->wf->params, i);
        if (in->var == x && in->owner_index == l) return in;
    }
    return NULL;
}

void zt_check_starts(Check *c)
{
    const ZtModel *m = c->m;
    for (int l = 0; l < m->nl; l++) {
        json_t *st = c->start[l];
        int line = c->start_line[l];
        const char *L = m->lnames[l];
        for (int x = 0; x < m->nvars; x++) {
            const ZDecl *v = m->vars[x];
            json_t *got = json_object_get(st, v->name);
            if (input_of(m, v, l)) {
                if (!got)
                    zt_fail(c, line,
                            "start store of lifeline %s lacks %s, an input of %s (a run starts "
                            "with every input of its lifelines)",
                            L, v->name, L);
                continue;
            }
            if (!v->expr) {
                if (got)
                    zt_fail(c, line,
                            "start store of lifeline %s has %s = %s, but %s has no default and is "
                            "not an input of %s: it has no value when the run starts",
                            L, v->name, zt_jtext(c, got), v->name, L);
                continue;
            }
            Env env = {.c = c, .life = l, .index = 0};
            Val d = zt_eval(&env, v->expr);
            json_t *want = zt_to_json(&d);
            if (!want) ZU_ICE("the default of %s is not a value the oracle computes", v->name);
            bool eq = got && json_equal(want, got);
            const char *wt = zt_jtext(c, want);
            json_decref(want);
            if (!got)
                zt_fail(c, line,
                        "start store of lifeline %s lacks %s, whose default is %s (every lifeline "
                        "starts with it)",
                        L, v->name, wt);
            if (!eq)
                zt_fail(c, line,
                        "start store of lifeline %s: %s is %s, but its declared default is %s", L,
                        v->name, zt_jtext(c, got), wt);
        }
    }
}
