/* builtins.c — the value functions generated code calls with its context
 * (zgrt_abi.h): string concatenation and the builtins (len, lower, upper,
 * trim, contains, starts_with, ends_with, str, int, float, json_get,
 * json_str).  zgrt_compare needs no context and lives with the values
 * (values.c).
 *
 * Strings are UTF-8.  len() counts code points; lower() and upper() map
 * ASCII letters only (other characters are kept as they are); trim() strips
 * ASCII whitespace (space, \t, \n, \v, \f, \r) at both ends.
 *
 * Results are allocated in the lifeline's heap (zri_ctx_heap) and live
 * until the end of the run.  A builtin that fails (int("x"), a wrong
 * argument from broken generated code) stops the run through zgrt_trap,
 * which does not return.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rt.h"

/* ---- concatenation ------------------------------------------------------ */

void zgrt_concat(zgrt_ctx *ctx, const zgrt_value *a, const zgrt_value *b, zgrt_value *out)
{
    if (a->tag != ZGRT_STR || b->tag != ZGRT_STR || !a->u.s || !b->u.s) {
        zgrt_trap(ctx, -1, "internal error: concatenation of values that are not strings");
        return;
    }
    size_t na = (size_t)a->u.s->len, nb = (size_t)b->u.s->len;
    zgrt_str *s = zri_str_new(zri_ctx_heap(ctx), na + nb);
    memcpy(s->data, a->u.s->data, na);
    memcpy(s->data + na, b->u.s->data, nb);
    out->tag = ZGRT_STR;
    out->u.s = s;
}

static const char *const builtin_names[] = {
    "?",         "len", "lower", "upper", "trim",     "contains", "starts_with",
    "ends_with", "str", "int",   "float", "json_get", "json_str",
};

static int builtin_arity(int32_t id)
{
    return (id == ZGRT_BI_CONTAINS || id == ZGRT_BI_STARTS_WITH || id == ZGRT_BI_ENDS_WITH ||
            id == ZGRT_BI_JSON_GET)
               ? 2
               : 1;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static void trapf(zgrt_ctx *ctx, int32_t loc, const char *fmt, ...) ZRI_PRINTF(3, 4);
static void trapf(zgrt_ctx *ctx, int32_t loc, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    zgrt_trap(ctx, loc, msg);
}

static int arg_ok(const zgrt_value *v, int64_t tag)
{
    if (v->tag != tag) return 0;
    if (tag == ZGRT_STR) return v->u.s != NULL;
    return 1; /* json: a NULL payload is JSON null */
}

static int64_t utf8_count(const zgrt_str *s)
{
    int64_t n = 0;
    for (int64_t i = 0; i < s->len; i++)
        if (((unsigned char)s->data[i] & 0xc0) != 0x80) n++;
    return n;
}

static int str_find(const zgrt_str *s, const zgrt_str *sub)
{
    if (sub->len == 0) return 1;
    if (sub->len > s->len) return 0;
    const char *p = s->data, *end = s->data + (s->len - sub->len);
    while (p <= end) {
        p = memchr(p, sub->data[0], (size_t)(end - p) + 1);
        if (!p) return 0;
        if (memcmp(p, sub->data, (size_t)sub->len) == 0) return 1;
        p++;
    }
    return 0;
}

static void set_str(zgrt_value *out, const zgrt_str *s)
{
    out->tag = ZGRT_STR;
    out->u.s = s;
}

static void set_int(zgrt_value *out, int64_t i)
{
    out->tag = ZGRT_INT;
    out->u.i = i;
}

static void set_bool(zgrt_value *out, int b)
{
    out->tag = ZGRT_BOOL;
    out->u.i = b != 0;
}

static void set_float(zgrt_value *out, double f)
{
    out->tag = ZGRT_FLOAT;
    out->u.f = f;
}

void zgrt_builtin(zgrt_ctx *ctx, int32_t builtin, int32_t n, const zgrt_value *args,
                  zgrt_value *out, int32_t loc)
{
    if (builtin < ZGRT_BI_LEN || builtin > ZGRT_BI_JSON_STR || n != builtin_arity(builtin)) {
        trapf(ctx, loc, "internal error: builtin %d called with %d arguments", builtin, n);
        return;
    }
    const char *name = builtin_names[builtin];
    /* argument types: str for the string functions, json first for json_*,
     * anything for str(), int/float/str for int() and float() */
    for (int i = 0; i < n; i++) {
        int64_t want = ZGRT_STR;
        if (builtin == ZGRT_BI_STR || builtin == ZGRT_BI_INT || builtin == ZGRT_BI_FLOAT) want = -1;
        if (i == 0 && (builtin == ZGRT_BI_JSON_GET || builtin == ZGRT_BI_JSON_STR))
            want = ZGRT_JSON;
        if (want >= 0 && !arg_ok(&args[i], want)) {
            trapf(ctx, loc, "internal error: %s: argument %d has the wrong type", name, i + 1);
            return;
        }
    }
    zri_heap *h = zri_ctx_heap(ctx);
    const zgrt_value *a = &args[0];
    const zgrt_str *s = a->tag == ZGRT_STR ? a->u.s : NULL;
    switch (builtin) {
    case ZGRT_BI_LEN: set_int(out, utf8_count(s)); return;
    case ZGRT_BI_LOWER:
    case ZGRT_BI_UPPER: {
        zgrt_str *r = zri_str_new(h, (size_t)s->len);
        for (int64_t i = 0; i < s->len; i++) {
            char c = s->data[i];
            if (builtin == ZGRT_BI_LOWER && c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
            if (builtin == ZGRT_BI_UPPER && c >= 'a' && c <= 'z') c = (char)(c - 'a' + 'A');
            r->data[i] = c;
        }
        set_str(out, r);
        return;
    }
    case ZGRT_BI_TRIM: {
        int64_t b = 0, e = s->len;
        while (b < e && is_space(s->data[b])) b++;
        while (e > b && is_space(s->data[e - 1])) e--;
        if (b == 0 && e == s->len)
            set_str(out, s);
        else
            set_str(out, zri_str(h, s->data + b, (size_t)(e - b)));
        return;
    }
    case ZGRT_BI_CONTAINS: set_bool(out, str_find(s, args[1].u.s)); return;
    case ZGRT_BI_STARTS_WITH: {
        const zgrt_str *p = args[1].u.s;
        set_bool(out, p->len <= s->len && memcmp(s->data, p->data, (size_t)p->len) == 0);
        return;
    }
    case ZGRT_BI_ENDS_WITH: {
        const zgrt_str *p = args[1].u.s;
        set_bool(out, p->len <= s->len &&
                          memcmp(s->data + (s->len - p->len), p->data, (size_t)p->len) == 0);
        return;
    }
    case ZGRT_BI_STR: {
        if (a->tag == ZGRT_STR && a->u.s) {
            set_str(out, a->u.s);
            return;
        }
        if (a->tag == ZGRT_UNDEF) {
            trapf(ctx, loc, "str: the argument has no value");
            return;
        }
        zri_buf b = {0};
        if (a->tag == ZGRT_ENUM) {
            const char *m = zri_enum_member(zri_ctx_program(ctx), a->u.i);
            zri_buf_puts(&b, m ? m : "?");
        } else {
            zri_buf_json_value(&b, zri_ctx_program(ctx), a);
        }
        set_str(out, zri_str(h, b.data, b.len));
        zri_buf_free(&b);
        return;
    }
    case ZGRT_BI_INT:
        if (a->tag == ZGRT_INT) {
            *out = *a;
        } else if (a->tag == ZGRT_FLOAT) {
            double d = a->u.f;
            if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) {
                char num[32];
                zri_format_float(d, num);
                trapf(ctx, loc, "int(%s): out of the range of int", num);
                return;
            }
            set_int(out, (int64_t)d); /* truncates toward zero */
        } else if (a->tag == ZGRT_STR && a->u.s) {
            int64_t v;
            int r = zri_parse_int(a->u.s->data, (size_t)a->u.s->len, &v);
            if (r) {
                char q[96];
                zri_quote_short(q, sizeof q, a->u.s->data, (size_t)a->u.s->len);
                trapf(ctx, loc,
                      r == -2 ? "int(%s): out of the range of int" : "int(%s): not an integer", q);
                return;
            }
            set_int(out, v);
        } else {
            trapf(ctx, loc, "internal error: int: argument has the wrong type");
        }
        return;
    case ZGRT_BI_FLOAT:
        if (a->tag == ZGRT_FLOAT) {
            *out = *a;
        } else if (a->tag == ZGRT_INT) {
            set_float(out, (double)a->u.i);
        } else if (a->tag == ZGRT_STR && a->u.s) {
            double d;
            int r = zri_parse_float(a->u.s->data, (size_t)a->u.s->len, &d);
            if (r) {
                char q[96];
                zri_quote_short(q, sizeof q, a->u.s->data, (size_t)a->u.s->len);
                trapf(ctx, loc,
                      r == -2 ? "float(%s): out of the range of float" : "float(%s): not a number",
                      q);
                return;
            }
            set_float(out, d);
        } else {
            trapf(ctx, loc, "internal error: float: argument has the wrong type");
        }
        return;
    case ZGRT_BI_JSON_GET: {
        json_t *j = a->u.j ? a->u.j : json_null(), *m = NULL;
        if (json_is_object(j)) {
            /* keys with a NUL byte cannot be members */
            const zgrt_str *k = args[1].u.s;
            if (strlen(k->data) == (size_t)k->len) m = json_object_get(j, k->data);
        }
        out->tag = ZGRT_JSON;
        /* the member stays alive with its parent, which lives until the end
         * of the run; json_null() is a static singleton */
        out->u.j = m ? m : json_null();
        return;
    }
    case ZGRT_BI_JSON_STR: {
        json_t *j = a->u.j ? a->u.j : json_null();
        if (json_is_string(j)) {
            set_str(out, zri_str(h, json_string_value(j), json_string_length(j)));
            return;
        }
        zri_buf b = {0};
        zri_buf_jansson(&b, j, 0);
        set_str(out, zri_str(h, b.data, b.len));
        zri_buf_free(&b);
        return;
    }
    default: return;
    }
}
