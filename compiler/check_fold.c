/* check_fold.c — constant folding (language reference §5.4).
 *
 * Constants, variable defaults and the constant properties of actions
 * (`model`, `temperature`, `retries`, `fallback`) are evaluated at compile
 * time by the compiler's one evaluator (eval.c, where the arithmetic rules
 * are written down).  Afterwards a D_CONST's `expr` and a variable default
 * are the folded literal (an enum member stays an E_NAME), so later passes
 * never evaluate constant expressions.  An evaluation error is reported at
 * the operator: "division by zero in constant expression".
 */
#include "check.h"

/* The value of a constant, once it is typed and folded. */
static bool constant(void *user, const ZDecl *d, ZValue *v)
{
    Ck *c = user;
    if (c->const_state[d->index] != 2 || !c->const_ok[d->index]) return false;
    *v = c->const_val[d->index];
    return true;
}

static void fold_error(void *user, const ZExpr *e, ZEvalError err)
{
    Ck *c = user;
    zd_error(c->d, e->span, "%s in constant expression", ze_error_text(err));
}

bool ck_fold_into(Ck *c, ZExpr **slot, ZValue *v)
{
    ZExpr *e = *slot;
    ZEval ev = {c->a, constant, fold_error, c};
    if (!ze_eval(&ev, e, v)) return false;
    if (!is_literal(e) && e->kind != E_NAME) {
        ZExpr *lit = ze_literal(c->a, v, e->span, e->type);
        if (lit) *slot = lit;
    } else if (e->kind == E_NAME && e->name_kind == NAME_CONST) {
        ZExpr *lit = ze_literal(c->a, v, e->span, e->type);
        if (lit) *slot = lit;
    }
    return true;
}
