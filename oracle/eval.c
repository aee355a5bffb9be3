/* eval.c — the oracle's own expression evaluator.  It is independent of
 * the compiler's constant folder and of the runtime on purpose: a value
 * in the trace is checked against a second computation, not against the
 * same code run twice.  Values are read from the stores rebuilt along
 * the trace (chart.c); a term @B.x reads B's store after the last event
 * of B that causally precedes the current one (the computed vector
 * clock).  What this evaluator cannot compute is V_UNKNOWN, and leaves
 * the value unverified instead of failing. */
#include "zt.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static Val from_json(Check *c, json_t *j, const ZType *t)
{
    if (!j) return vmk(V_UNDEF);
    if (!t) return vmk(V_UNKNOWN);
    Val v = {0};
    switch (t->kind) {
    case TY_INT:
        if (!json_is_integer(j)) return vmk(V_UNKNOWN);
        v.k = V_INT, v.i = json_integer_value(j);
        return v;
    case TY_FLOAT:
        if (!json_is_number(j)) return vmk(V_UNKNOWN);
        v.k = V_FLOAT, v.f = json_number_value(j);
        return v;
    case TY_BOOL:
        if (!json_is_boolean(j)) return vmk(V_UNKNOWN);
        v.k = V_BOOL, v.i = json_is_true(j);
        return v;
    case TY_STR:
        if (!json_is_string(j)) return vmk(V_UNKNOWN);
        v.k = V_STR, v.s = json_string_value(j), v.n = json_string_length(j);
        return v;
    case TY_ENUM: {
        if (!json_is_string(j) || !t->enum_decl) return vmk(V_UNKNOWN);
        const ZDecl *en = t->enum_decl;
        for (int k = 0; k < en->members.len; k++) {
            const ZParam *p = ZU_VEC_AT(en->members, k);
            if (!strcmp(p->name, json_string_value(j))) {
                v.k = V_ENUM, v.i = k, v.en = en;
                return v;
            }
        }
        return vmk(V_UNKNOWN);
    }
    case TY_JSON: v.k = V_JSON, v.j = j; return v;
    default: return vmk(V_UNKNOWN);
    }
    (void)c;
}

json_t *zt_to_json(const Val *v)
{
    switch (v->k) {
    case V_INT: return json_integer(v->i);
    case V_FLOAT: return json_real(v->f);
    case V_BOOL: return json_boolean(v->i);
    case V_STR: return json_stringn_nocheck(v->s, v->n);
    case V_ENUM: {
        if (!v->en || v->i < 0 || v->i >= v->en->members.len) return NULL;
        const ZParam *p = ZU_VEC_AT(v->en->members, (int)v->i);
        return json_string(p->name);
    }
    case V_JSON: return v->j ? json_incref(v->j) : json_null();
    default: return NULL;
    }
}

static bool is_bad(const Val *v) { return v->k == V_UNKNOWN || v->k == V_UNDEF || v->k == V_ERROR; }

static int cmp_vals(const Val *a, const Val *b, bool *ok)
{
    *ok = true;
    if (a->k == V_INT && b->k == V_INT) return a->i < b->i ? -1 : a->i > b->i;
    if (a->k == V_FLOAT && b->k == V_FLOAT) {
        if (a->f != a->f || b->f != b->f) {
            *ok = false;
            return 0;
        }
        return a->f < b->f ? -1 : a->f > b->f;
    }
    if (a->k == V_STR && b->k == V_STR) {
        size_t n = a->n < b->n ? a->n : b->n;
        int r = memcmp(a->s, b->s, n);
        if (r) return r < 0 ? -1 : 1;
        return a->n < b->n ? -1 : a->n > b->n;
    }
    if ((a->k == V_BOOL && b->k == V_BOOL) || (a->k == V_ENUM && b->k == V_ENUM))
        return a->i < b->i ? -1 : a->i > b->i;
    if (a->k == V_JSON && b->k == V_JSON) {
        bool eq = (a->j == NULL && b->j == NULL) || (a->j && b->j && json_equal(a->j, b->j)) ||
                  (!a->j && b->j && json_is_null(b->j)) || (!b->j && a->j && json_is_null(a->j));
        return eq ? 0 : 2; /* only == and != are meaningful */
    }
    *ok = false;
    return 0;
}

static Val binary(Env *env, const ZExpr *e)
{
    if (e->op == OP_AND || e->op == OP_OR) {
        Val a = zt_eval(env, e->a);
        if (is_bad(&a)) return a;
        if (a.k != V_BOOL) return vmk(V_UNKNOWN);
        if (e->op == OP_AND && !a.i) return vbool(false);
        if (e->op == OP_OR && a.i) return vbool(true);
        Val b = zt_eval(env, e->b);
        if (is_bad(&b)) return b;
        if (b.k != V_BOOL) return vmk(V_UNKNOWN);
        return vbool(b.i != 0);
    }
    Val a = zt_eval(env, e->a);
    if (is_bad(&a)) return a;
    Val b = zt_eval(env, e->b);
    if (is_bad(&b)) return b;
    int64_t r;
    switch (e->op) {
    case OP_ADD:
    case OP_SUB:
    case OP_MUL:
    case OP_DIV:
    case OP_MOD:
        if (a.k == V_INT && b.k == V_INT) {
            switch (e->op) {
            case OP_ADD: return __builtin_add_overflow(a.i, b.i, &r) ? vmk(V_ERROR) : vint(r);
            case OP_SUB: return __builtin_sub_overflow(a.i, b.i, &r) ? vmk(V_ERROR) : vint(r);
            case OP_MUL: return __builtin_mul_overflow(a.i, b.i, &r) ? vmk(V_ERROR) : vint(r);
            default:
                if (b.i == 0 || (a.i == INT64_MIN && b.i == -1)) return vmk(V_ERROR);
                return vint(e->op == OP_DIV ? a.i / b.i : a.i % b.i);
            }
        }
        if (a.k == V_FLOAT && b.k == V_FLOAT) {
            switch (e->op) {
            case OP_ADD: return vfloat(a.f + b.f);
            case OP_SUB: return vfloat(a.f - b.f);
            case OP_MUL: return vfloat(a.f * b.f);
            default:
                if (b.f == 0.0) return vmk(V_ERROR);
                return vfloat(e->op == OP_DIV ? a.f / b.f : fmod(a.f, b.f));
            }
        }
        if (e->op == OP_ADD && a.k == V_STR && b.k == V_STR) {
            char *s = zu_alloc(env->c->a, a.n + b.n + 1);
            memcpy(s, a.s, a.n);
            memcpy(s + a.n, b.s, b.n);
            Val v = {.k = V_STR, .s = s, .n = a.n + b.n};
            return v;
        }
        return vmk(V_UNKNOWN);
    case OP_EQ:
    case OP_NE:
    case OP_LT:
    case OP_LE:
    case OP_GT:
    case OP_GE: {
        bool ok;
        int k = cmp_vals(&a, &b, &ok);
        if (!ok) {
            /* a NaN compares unequal to everything */
            if ((a.k == V_FLOAT || b.k == V_FLOAT) && a.k == b.k) return vbool(e->op == OP_NE);
            return vmk(V_UNKNOWN);
        }
        if (k == 2) {
            if (e->op == OP_EQ) return vbool(false);
            if (e->op == OP_NE) return vbool(true);
            return vmk(V_UNKNOWN);
        }
        switch (e->op) {
        case OP_EQ: return vbool(k == 0);
        case OP_NE: return vbool(k != 0);
        case OP_LT: return vbool(k < 0);
        case OP_LE: return vbool(k <= 0);
        case OP_GT: return vbool(k > 0);
        default: return vbool(k >= 0);
        }
    }
    default: return vmk(V_UNKNOWN);
    }
}

static bool parse_int_text(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
    if (i == n) return false;
    uint64_t v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        if (v > (UINT64_MAX - 9) / 10) return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX) return false;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

static bool is_space_ch(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; }

static Val call(Env *env, const ZExpr *e)
{
    int n = e->args.len;
    Val args[8];
    if (n > 8) return vmk(V_UNKNOWN);
    for (int i = 0; i < n; i++) {
        args[i] = zt_eval(env, ZU_VEC_AT(e->args, i));
        if (is_bad(&args[i])) return args[i];
    }
    ZArena *ar = env->c->a;
    if (e->builtin != BI_NONE) {
        const Val *a = &args[0];
        switch (e->builtin) {
        case BI_LEN: {
            if (a->k != V_STR) return vmk(V_UNKNOWN);
            int64_t cnt = 0;
            for (size_t i = 0; i < a->n; i++)
                if (((unsigned char)a->s[i] & 0xC0) != 0x80) cnt++;
            return vint(cnt);
        }
        case BI_LOWER:
        case BI_UPPER: {
            if (a->k != V_STR) return vmk(V_UNKNOWN);
            char *s = zu_alloc(ar, a->n + 1);
            for (size_t i = 0; i < a->n; i++) {
                char ch = a->s[i];
                if (e->builtin == BI_LOWER && ch >= 'A' && ch <= 'Z') ch = (char)(ch - 'A' + 'a');
                if (e->builtin == BI_UPPER && ch >= 'a' && ch <= 'z') ch = (char)(ch - 'a' + 'A');
                s[i] = ch;
            }
            return (Val){.k = V_STR, .s = s, .n = a->n};
        }
        case BI_TRIM: {
            if (a->k != V_STR) return vmk(V_UNKNOWN);
            size_t b = 0, en = a->n;
            while (b < en && is_space_ch(a->s[b])) b++;
            while (en > b && is_space_ch(a->s[en - 1])) en--;
            /* other white space (\v, \f) is left to the runtime: unknown */
            if ((b < en && (a->s[b] == '\v' || a->s[b] == '\f')) ||
                (en > b && (a->s[en - 1] == '\v' || a->s[en - 1] == '\f')))
                return vmk(V_UNKNOWN);
            return (Val){.k = V_STR, .s = a->s + b, .n = en - b};
        }
        case BI_CONTAINS:
        case BI_STARTS_WITH:
        case BI_ENDS_WITH: {
            if (a->k != V_STR || args[1].k != V_STR) return vmk(V_UNKNOWN);
            const Val *p = &args[1];
            if (p->n > a->n) return vbool(false);
            if (e->builtin == BI_STARTS_WITH) return vbool(memcmp(a->s, p->s, p->n) == 0);
            if (e->builtin == BI_ENDS_WITH)
                return vbool(memcmp(a->s + a->n - p->n, p->s, p->n) == 0);
            for (size_t i = 0; i + p->n <= a->n; i++)
                if (memcmp(a->s + i, p->s, p->n) == 0) return vbool(true);
            return vbool(false);
        }
        case BI_STR:
            if (a->k == V_STR) return *a;
            if (a->k == V_INT) {
                const char *s = zu_fmt(ar, "%" PRId64, a->i);
                return (Val){.k = V_STR, .s = s, .n = strlen(s)};
            }
            if (a->k == V_BOOL)
                return (Val){.k = V_STR, .s = a->i ? "true" : "false", .n = a->i ? 4 : 5};
            if (a->k == V_ENUM && a->en && a->i >= 0 && a->i < a->en->members.len) {
                const ZParam *p = ZU_VEC_AT(a->en->members, (int)a->i);
                return (Val){.k = V_STR, .s = p->name, .n = strlen(p->name)};
            }
            return vmk(V_UNKNOWN);
        case BI_INT:
            if (a->k == V_INT) return *a;
            if (a->k == V_FLOAT) {
                if (!(a->f >= -9223372036854775808.0 && a->f < 9223372036854775808.0))
                    return vmk(V_ERROR);
                return vint((int64_t)a->f);
            }
            if (a->k == V_STR) {
                int64_t v;
                if (!parse_int_text(a->s, a->n, &v)) return vmk(V_UNKNOWN);
                return vint(v);
            }
            return vmk(V_UNKNOWN);
        case BI_FLOAT:
            if (a->k == V_FLOAT) return *a;
            if (a->k == V_INT) return vfloat((double)a->i);
            return vmk(V_UNKNOWN);
        default: return vmk(V_UNKNOWN); /* json_get, json_str */
        }
    }
    const ZDecl *d = e->decl;
    if (d && d->kind == D_ACTION && d->action == ACT_PURE && d->expr && d->results.len == 1) {
        if (env->depth > ZT_MAX_DEPTH) return vmk(V_UNKNOWN);
        Env sub = *env;
        sub.params = args;
        sub.depth = env->depth + 1;
        Val v = zt_eval(&sub, d->expr);
        env->undef |= sub.undef;
        return v;
    }
    return vmk(V_UNKNOWN);
}

static Val term(Env *env, int life, const ZDecl *var)
{
    Check *c = env->c;
    if (!var || var->kind != D_VAR || var->index < 0 || var->index >= c->m->nvars)
        return vmk(V_UNKNOWN);
    int l = env->life, i = env->index;
    if (life >= 0 && life != env->life) {
        if (life >= c->m->nl || i <= 0) {
            env->undef = true;
            return vmk(V_UNDEF);
        }
        const Ev *e = &c->ev[c->byl[env->life][i - 1]];
        int64_t k = e->cvc[life];
        if (k <= 0) {
            env->undef = true;
            return vmk(V_UNDEF);
        }
        l = life;
        i = (int)k;
    }
    Val v = from_json(c, zt_store_at(c, l, i, var->index), var->type);
    if (v.k == V_UNDEF) env->undef = true;
    return v;
}

Val zt_eval(Env *env, const ZExpr *e)
{
    if (!e) return vmk(V_UNKNOWN);
    if (env->depth > ZT_MAX_DEPTH) return vmk(V_UNKNOWN);
    env->depth++;
    Val r;
    switch (e->kind) {
    case E_INT: r = vint(e->lit.i); break;
    case E_FLOAT: r = vfloat(e->lit.f); break;
    case E_BOOL: r = vbool(e->lit.b); break;
    case E_STR: r = (Val){.k = V_STR, .s = e->lit.s, .n = e->slen}; break;
    case E_NULL: r = (Val){.k = V_JSON, .j = NULL}; break;
    case E_NAME:
        switch (e->name_kind) {
        case NAME_VAR: r = term(env, -1, e->decl); break;
        case NAME_CONST: r = e->decl ? zt_eval(env, e->decl->expr) : vmk(V_UNKNOWN); break;
        case NAME_GUARD: r = e->decl ? zt_eval(env, e->decl->expr) : vmk(V_UNKNOWN); break;
        case NAME_MEMBER:
            r = (Val){.k = V_ENUM,
                      .i = e->member,
                      .en = e->decl && e->decl->kind == D_ENUM ? e->decl
                            : e->type                          ? e->type->enum_decl
                                                               : NULL};
            break;
        case NAME_PARAM:
            r = env->params && e->member >= 0 && e->member < 8 ? env->params[e->member]
                                                               : vmk(V_UNKNOWN);
            break;
        default: r = vmk(V_UNKNOWN); break;
        }
        break;
    case E_AT_VAR: r = term(env, e->life, e->decl); break;
    case E_UNARY: {
        Val a = zt_eval(env, e->a);
        if (is_bad(&a))
            r = a;
        else if (e->op == OP_NOT && a.k == V_BOOL)
            r = vbool(!a.i);
        else if (e->op == OP_NEG && a.k == V_INT)
            r = a.i == INT64_MIN ? vmk(V_ERROR) : vint(-a.i);
        else if (e->op == OP_NEG && a.k == V_FLOAT)
            r = vfloat(-a.f);
        else
            r = vmk(V_UNKNOWN);
        break;
    }
    case E_BINARY: r = binary(env, e); break;
    case E_COND: {
        Val cnd = zt_eval(env, e->c);
        if (is_bad(&cnd))
            r = cnd;
        else if (cnd.k != V_BOOL)
            r = vmk(V_UNKNOWN);
        else
            r = zt_eval(env, cnd.i ? e->a : e->b);
        break;
    }
    case E_CALL: r = call(env, e); break;
    default: r = vmk(V_UNKNOWN); break; /* tuples, CPL operators */
    }
    env->depth--;
    return r;
}

bool zt_terms_defined(Env *env, const ZExpr *e, int depth)
{
    if (!e || depth > ZT_MAX_DEPTH) return true;
    if (e->kind == E_NAME && e->name_kind == NAME_VAR) {
        Val v = term(env, -1, e->decl);
        return v.k != V_UNDEF;
    }
    if (e->kind == E_AT_VAR) {
        Val v = term(env, e->life, e->decl);
        return v.k != V_UNDEF;
    }
    if (e->kind == E_NAME && e->name_kind == NAME_GUARD && e->decl)
        return zt_terms_defined(env, e->decl->expr, depth + 1);
    if (!zt_terms_defined(env, e->a, depth + 1) || !zt_terms_defined(env, e->b, depth + 1) ||
        !zt_terms_defined(env, e->c, depth + 1))
        return false;
    for (int i = 0; i < e->args.len; i++)
        if (!zt_terms_defined(env, ZU_VEC_AT(e->args, i), depth + 1)) return false;
    return true;
}
