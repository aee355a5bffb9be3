/* eval.c — the oracle's own expression evaluator.  It is independent of
 * the compiler's constant folder and of the runtime on purpose: a value
 * in the trace is checked against a second computation, not against the
 * same code run twice.  Values are read from the stores rebuilt along
 * the trace (chart.c); a term @B.x reads B's store after the last event
 * of B that causally precedes the current one (the computed vector
 * clock).  What this evaluator cannot compute is V_UNKNOWN with the
 * reason, and leaves the value unverified instead of failing: the result
 * of an `extern pure` action called inside a pure action's body, an
 * expression nested beyond ZT_MAX_DEPTH, a string beyond what ICU maps
 * (over 512 MB).  A run-time error (overflow, division by zero, a failed
 * conversion) is V_ERROR with its cause: the run would have stopped
 * there, so a trace that goes on is a disagreement (replay.c, cpl.c).
 * Pure actions with a tuple result give one value per output
 * (zt_eval_results).
 *
 * The rules are those of the language reference §5.2 and §5.3, written
 * again here: / and % round towards negative infinity (% has the
 * divisor's sign, ints and floats); int(s) and float(s) take the number
 * between White_Space; str() of a float is the shortest text that reads
 * back (Python's repr), found here by another method than the runtime's:
 * from the exact decimal expansion of the double (glibc prints it
 * exactly), the two candidates bracketing it at each count of digits,
 * read back with strtod; str() of json and json_str() serialise with the
 * oracle's own writer.  upper(), lower() and trim() are ICU's (root
 * locale: the default full case mappings with Final_Sigma; the
 * White_Space property): an implementation of the Unicode rules that
 * shares neither code nor tables with the runtime's (unicode.c, generated
 * from the Unicode Character Database).  ICU is loaded when a trace
 * first needs it (dlopen), not by every zgc command: with the C++ runtime
 * it pulls in, loading it was most of a small `zgc check`'s time.
 * (jansson holds valid UTF-8 only, so every string of a trace is UTF-8.) */
#include "zt.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unicode/uchar.h>
#include <unicode/ustring.h>

/* An operand of a type the checked program cannot give it: not reached
 * for a typed trace (types.c), and left unknown rather than guessed. */
static Val mistyped(void) { return vunknown("an operand of an unexpected type"); }
static Val overflow(void) { return verr("integer overflow"); }

static Val from_json(Check *c, json_t *j, const ZType *t)
{
    if (!j) return vmk(V_UNDEF);
    if (!t) return mistyped();
    Val v = {0};
    switch (t->kind) {
    case TY_INT:
        if (!json_is_integer(j)) return mistyped();
        v.k = V_INT, v.i = json_integer_value(j);
        return v;
    case TY_FLOAT:
        if (!json_is_number(j)) return mistyped();
        v.k = V_FLOAT, v.f = json_number_value(j);
        return v;
    case TY_BOOL:
        if (!json_is_boolean(j)) return mistyped();
        v.k = V_BOOL, v.i = json_is_true(j);
        return v;
    case TY_STR:
        if (!json_is_string(j)) return mistyped();
        v.k = V_STR, v.s = json_string_value(j), v.n = json_string_length(j);
        return v;
    case TY_ENUM: {
        if (!json_is_string(j) || !t->enum_decl) return mistyped();
        const ZDecl *en = t->enum_decl;
        for (int k = 0; k < en->members.len; k++) {
            const ZParam *p = ZU_VEC_AT(en->members, k);
            if (!strcmp(p->name, json_string_value(j))) {
                v.k = V_ENUM, v.i = k, v.en = en;
                return v;
            }
        }
        return mistyped();
    }
    case TY_JSON: v.k = V_JSON, v.j = j; return v;
    default: return mistyped();
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

/* a / b and a % b on ints: the quotient rounded down (towards negative
 * infinity), the remainder a - b * quotient, which has b's sign. */
static Val int_div(ZOp op, int64_t a, int64_t b)
{
    if (b == 0) return verr("division by zero");
    if (b == -1) /* the one divisor whose C quotient can overflow */
        return op == OP_MOD ? vint(0) : a == INT64_MIN ? verr("integer overflow") : vint(-a);
    int64_t q = a / b, r = a - q * b; /* C: truncated */
    if (r != 0 && (r > 0) != (b > 0)) {
        q -= 1;
        r += b;
    }
    return vint(op == OP_DIV ? q : r);
}

/* a % b on floats with b's sign (b != 0); an exact zero takes b's sign. */
static double float_rem(double a, double b)
{
    double r = fmod(a, b); /* exact, with a's sign */
    if (r == 0) return b < 0 ? -0.0 : 0.0;
    return (r > 0) == (b > 0) ? r : r + b;
}

static Val binary(Env *env, const ZExpr *e)
{
    if (e->op == OP_AND || e->op == OP_OR) {
        Val a = zt_eval(env, e->a);
        if (is_bad(&a)) return a;
        if (a.k != V_BOOL) return mistyped();
        if (e->op == OP_AND && !a.i) return vbool(false);
        if (e->op == OP_OR && a.i) return vbool(true);
        Val b = zt_eval(env, e->b);
        if (is_bad(&b)) return b;
        if (b.k != V_BOOL) return mistyped();
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
            case OP_ADD: return __builtin_add_overflow(a.i, b.i, &r) ? overflow() : vint(r);
            case OP_SUB: return __builtin_sub_overflow(a.i, b.i, &r) ? overflow() : vint(r);
            case OP_MUL: return __builtin_mul_overflow(a.i, b.i, &r) ? overflow() : vint(r);
            default: return int_div(e->op, a.i, b.i);
            }
        }
        if (a.k == V_FLOAT && b.k == V_FLOAT) {
            switch (e->op) {
            case OP_ADD: return vfloat(a.f + b.f);
            case OP_SUB: return vfloat(a.f - b.f);
            case OP_MUL: return vfloat(a.f * b.f);
            default:
                if (b.f == 0.0) return verr("division by zero");
                return vfloat(e->op == OP_DIV ? a.f / b.f : float_rem(a.f, b.f));
            }
        }
        if (e->op == OP_ADD && a.k == V_STR && b.k == V_STR) {
            char *s = zu_alloc(env->c->a, a.n + b.n + 1);
            memcpy(s, a.s, a.n);
            memcpy(s + a.n, b.s, b.n);
            Val v = {.k = V_STR, .s = s, .n = a.n + b.n};
            return v;
        }
        return mistyped();
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
            return mistyped();
        }
        if (k == 2) {
            if (e->op == OP_EQ) return vbool(false);
            if (e->op == OP_NE) return vbool(true);
            return mistyped();
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
    default: return mistyped();
    }
}

/* ---- text of numbers ---------------------------------------------------- */

/* [+-]digits, the whole of s[0..n); false when it is not that or out of
 * the range of int. */
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

static bool is_digit(char ch) { return ch >= '0' && ch <= '9'; }

/* [+-](digits[.digits*] | .digits)[(e|E)[+-]digits], the whole of
 * s[0..n), read by strtod; false when it is not that or not finite. */
static bool parse_float_text(const char *s, size_t n, double *out)
{
    size_t i = 0, mant = 0;
    if (i < n && (s[i] == '-' || s[i] == '+')) i++;
    for (; i < n && is_digit(s[i]); i++) mant++;
    if (i < n && s[i] == '.')
        for (i++; i < n && is_digit(s[i]); i++) mant++;
    if (mant == 0) return false;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '-' || s[i] == '+')) i++;
        size_t ex = 0;
        for (; i < n && is_digit(s[i]); i++) ex++;
        if (ex == 0) return false;
    }
    if (i != n) return false;
    char *t = zu_xmalloc(n + 1);
    memcpy(t, s, n);
    t[n] = '\0';
    double d = strtod(t, NULL);
    free(t);
    if (!isfinite(d)) return false;
    *out = d;
    return true;
}

/* str() of a float: the fewest significant digits that strtod reads back
 * as d, the nearest to d of those (the even one on a tie), laid out as
 * Python's repr(): positional for 1e-4 <= |d| < 1e16 with at least one
 * digit after the point, else d.ddde±XX with at least two exponent
 * digits.  NULL if no text reads back (a broken strtod). */
static const char *float_text(ZArena *ar, double d)
{
    char exact[840], cand[48], digits[24] = "";
    const char *sign = signbit(d) ? "-" : "";
    d = fabs(d);
    if (d == 0) return zu_fmt(ar, "%s0.0", sign);
    /* every double has at most 767 significant digits: this is exact */
    snprintf(exact, sizeof exact, "%.800e", d);
    char *ep = strchr(exact, 'e');
    int x10 = atoi(ep + 1);
    char all[820]; /* the digits without the point */
    size_t na = 0;
    for (const char *c = exact; c < ep; c++)
        if (*c != '.') all[na++] = *c;
    all[na] = '\0';
    int x = 0;
    for (int p = 1; p <= 17; p++) {
        uint64_t down = 0;
        for (int k = 0; k < p; k++) down = down * 10 + (uint64_t)(all[k] - '0');
        const char *rest = all + p;
        bool whole = strspn(rest, "0") == strlen(rest);
        uint64_t pick = 0;
        bool found = false;
        if (whole) { /* d has p digits exactly */
            pick = down;
            found = true;
        } else {
            snprintf(cand, sizeof cand, "%" PRIu64 "e%d", down, x10 - p + 1);
            bool ok_down = strtod(cand, NULL) == d;
            snprintf(cand, sizeof cand, "%" PRIu64 "e%d", down + 1, x10 - p + 1);
            bool ok_up = strtod(cand, NULL) == d;
            if (ok_down && ok_up) {
                /* the nearer: the rest against one half */
                int half = rest[0] > '5' ? 1 : rest[0] < '5' ? -1 : 0;
                if (half == 0) half = strspn(rest + 1, "0") == strlen(rest + 1) ? 0 : 1;
                pick = half > 0 || (half == 0 && down % 2) ? down + 1 : down;
                found = true;
            } else if (ok_down || ok_up) {
                pick = ok_down ? down : down + 1;
                found = true;
            }
        }
        if (found) {
            int n = snprintf(digits, sizeof digits, "%" PRIu64, pick);
            x = x10 + (n - p); /* down + 1 may have one digit more: 10^p */
            while (n > 1 && digits[n - 1] == '0') digits[--n] = '\0';
            break;
        }
    }
    size_t n = strlen(digits);
    if (n == 0) return NULL; /* not reached: 17 digits always read back */
    ZBuf b = {0};
    zu_buf_puts(&b, sign);
    if (x < -4 || x >= 16) {
        zu_buf_putc(&b, digits[0]);
        if (n > 1) zu_buf_printf(&b, ".%s", digits + 1);
        zu_buf_printf(&b, "e%c%02d", x < 0 ? '-' : '+', abs(x));
    } else if (x < 0) {
        zu_buf_puts(&b, "0.");
        for (int k = 0; k < -x - 1; k++) zu_buf_putc(&b, '0');
        zu_buf_puts(&b, digits);
    } else {
        for (int k = 0; k <= x; k++) zu_buf_putc(&b, (size_t)k < n ? digits[k] : '0');
        zu_buf_puts(&b, ".");
        zu_buf_puts(&b, (size_t)x + 1 < n ? digits + x + 1 : "0");
    }
    const char *r = zu_fmt(ar, "%s", b.data);
    zu_buf_free(&b);
    return r;
}

/* ---- JSON text, as str() and json_str() write it ------------------------ */

/* Compact: no spaces, members in their order, strings with \" \\ \n \t
 * \r \b \f and \u00XX for the other control characters escaped, the rest
 * as it is; floats as str() writes them. */
static void json_text(ZBuf *b, ZArena *ar, const json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        const char *key;
        json_t *val;
        bool first = true;
        zu_buf_putc(b, '{');
        json_object_foreach((json_t *)j, key, val)
        {
            if (!first) zu_buf_putc(b, ',');
            first = false;
            json_t *k = json_string(key);
            json_text(b, ar, k);
            json_decref(k);
            zu_buf_putc(b, ':');
            json_text(b, ar, val);
        }
        zu_buf_putc(b, '}');
        return;
    }
    case JSON_ARRAY:
        zu_buf_putc(b, '[');
        for (size_t i = 0; i < json_array_size(j); i++) {
            if (i) zu_buf_putc(b, ',');
            json_text(b, ar, json_array_get(j, i));
        }
        zu_buf_putc(b, ']');
        return;
    case JSON_STRING: {
        const char *s = json_string_value(j);
        size_t n = json_string_length(j);
        zu_buf_putc(b, '"');
        for (size_t i = 0; i < n; i++) {
            unsigned char ch = (unsigned char)s[i];
            switch (ch) {
            case '"': zu_buf_puts(b, "\\\""); break;
            case '\\': zu_buf_puts(b, "\\\\"); break;
            case '\n': zu_buf_puts(b, "\\n"); break;
            case '\t': zu_buf_puts(b, "\\t"); break;
            case '\r': zu_buf_puts(b, "\\r"); break;
            case '\b': zu_buf_puts(b, "\\b"); break;
            case '\f': zu_buf_puts(b, "\\f"); break;
            default:
                if (ch < 0x20)
                    zu_buf_printf(b, "\\u%04x", ch);
                else
                    zu_buf_putc(b, (char)ch);
            }
        }
        zu_buf_putc(b, '"');
        return;
    }
    case JSON_INTEGER: zu_buf_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(j)); return;
    case JSON_REAL: {
        const char *t = float_text(ar, json_real_value(j));
        zu_buf_puts(b, t ? t : "?");
        return;
    }
    case JSON_TRUE: zu_buf_puts(b, "true"); return;
    case JSON_FALSE: zu_buf_puts(b, "false"); return;
    default: zu_buf_puts(b, "null"); return;
    }
}

static Val json_text_val(ZArena *ar, const json_t *j)
{
    ZBuf b = {0};
    if (j)
        json_text(&b, ar, j);
    else
        zu_buf_puts(&b, "null");
    Val v = {.k = V_STR, .s = zu_fmt(ar, "%s", b.data), .n = b.len};
    zu_buf_free(&b);
    return v;
}

/* ---- Unicode, by ICU ------------------------------------------------------ */

/* [*b, *e): s[0..n) without the White_Space code points at both ends;
 * false when s is not UTF-8. */
/* ---- ICU, loaded on first use ------------------------------------------ */

/* ICU's names carry its version (u_strToUpper is u_strToUpper_72, by its
 * headers' renaming macros): the strings of the expanded names */
#define ICU_STR2(x) #x
#define ICU_STR(x) ICU_STR2(x)
#define ICU_LIB "libicuuc.so." ICU_STR(U_ICU_VERSION_MAJOR_NUM)

static struct {
    UBool (*is_white_space)(UChar32);
    UChar *(*from_utf8)(UChar *, int32_t, int32_t *, const char *, int32_t, UErrorCode *);
    char *(*to_utf8)(char *, int32_t, int32_t *, const UChar *, int32_t, UErrorCode *);
    int32_t (*to_upper)(UChar *, int32_t, const UChar *, int32_t, const char *, UErrorCode *);
    int32_t (*to_lower)(UChar *, int32_t, const UChar *, int32_t, const char *, UErrorCode *);
} icu;
static pthread_once_t icu_once = PTHREAD_ONCE_INIT;

static void *icu_sym(void *lib, const char *name)
{
    void *f = dlsym(lib, name);
    if (!f) {
        fprintf(stderr,
                "zgc: error: %s has no %s: the ICU library is not the one zgc was built with\n",
                ICU_LIB, name);
        exit(1);
    }
    return f;
}

static void icu_load(void)
{
    void *lib = dlopen(ICU_LIB, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "zgc: error: trace check needs ICU's %s (package libicu72): %s\n", ICU_LIB,
                dlerror());
        exit(1);
    }
    *(void **)&icu.is_white_space = icu_sym(lib, ICU_STR(u_isUWhiteSpace));
    *(void **)&icu.from_utf8 = icu_sym(lib, ICU_STR(u_strFromUTF8));
    *(void **)&icu.to_utf8 = icu_sym(lib, ICU_STR(u_strToUTF8));
    *(void **)&icu.to_upper = icu_sym(lib, ICU_STR(u_strToUpper));
    *(void **)&icu.to_lower = icu_sym(lib, ICU_STR(u_strToLower));
}

static void icu_need(void) { pthread_once(&icu_once, icu_load); }

static bool ws_bounds(const char *s, size_t n, size_t *b, size_t *e)
{
    if (n > INT32_MAX) return false;
    int32_t i = 0, len = (int32_t)n;
    size_t first = n, last = n;
    bool inner = false;
    icu_need();
    while (i < len) {
        int32_t at = i;
        UChar32 c;
        U8_NEXT(s, i, len, c);
        if (c < 0) return false;
        if (icu.is_white_space(c)) continue;
        if (!inner) first = (size_t)at;
        inner = true;
        last = (size_t)i;
    }
    *b = first;
    *e = inner ? last : n;
    return true;
}

/* upper() or lower(): ICU's full case mapping in the root locale. */
static Val icu_case(ZArena *ar, const Val *a, bool up)
{
    if (a->n > INT32_MAX / 4) return vunknown("a string too long for ICU's case mapping");
    UErrorCode err = U_ZERO_ERROR;
    int32_t n16 = 0, cap = 3 * (int32_t)a->n + 1, m = 0, n8 = 0;
    UChar *src = zu_xmalloc(sizeof *src * (a->n + 1)), *dst = zu_xmalloc(sizeof *dst * cap);
    Val r = vunknown("a string ICU cannot map");
    icu_need();
    icu.from_utf8(src, (int32_t)a->n + 1, &n16, a->s, (int32_t)a->n, &err);
    if (U_SUCCESS(err))
        m = up ? icu.to_upper(dst, cap, src, n16, "", &err)
               : icu.to_lower(dst, cap, src, n16, "", &err);
    if (U_SUCCESS(err)) {
        icu.to_utf8(NULL, 0, &n8, dst, m, &err); /* the length */
        if (err == U_BUFFER_OVERFLOW_ERROR) err = U_ZERO_ERROR;
    }
    if (U_SUCCESS(err)) {
        char *out = zu_alloc(ar, (size_t)n8 + 1);
        icu.to_utf8(out, n8 + 1, &n8, dst, m, &err);
        if (U_SUCCESS(err)) r = (Val){.k = V_STR, .s = out, .n = (size_t)n8};
    }
    free(src);
    free(dst);
    return r;
}

Val zt_str(ZArena *ar, const Val *a)
{
    switch (a->k) {
    case V_STR: return *a;
    case V_INT: {
        const char *t = zu_fmt(ar, "%" PRId64, a->i);
        return (Val){.k = V_STR, .s = t, .n = strlen(t)};
    }
    case V_FLOAT: {
        const char *t = float_text(ar, a->f);
        if (!t) return mistyped();
        return (Val){.k = V_STR, .s = t, .n = strlen(t)};
    }
    case V_BOOL: return (Val){.k = V_STR, .s = a->i ? "true" : "false", .n = a->i ? 4 : 5};
    case V_ENUM:
        if (a->en && a->i >= 0 && a->i < a->en->members.len) {
            const ZParam *p = ZU_VEC_AT(a->en->members, (int)a->i);
            return (Val){.k = V_STR, .s = p->name, .n = strlen(p->name)};
        }
        return mistyped();
    case V_JSON: return json_text_val(ar, a->j);
    default: return mistyped();
    }
}

static Val too_deep(void) { return vunknown("an expression nested beyond the evaluator's limit"); }

/* The arguments of the call e (in the check's arena); NULL with *bad the
 * first argument that is not a value. */
static Val *call_args(Env *env, const ZExpr *e, Val *bad)
{
    int n = e->args.len;
    Val *args = zu_alloc(env->c->a, sizeof *args * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) {
        args[i] = zt_eval(env, ZU_VEC_AT(e->args, i));
        if (is_bad(&args[i])) {
            *bad = args[i];
            return NULL;
        }
    }
    return args;
}

/* body (a pure action's expression, or one component of its tuple) with
 * the action's parameters bound to args. */
static Val pure_body(Env *env, const ZExpr *body, const Val *args, int n)
{
    if (env->depth > ZT_MAX_DEPTH) return too_deep();
    Env sub = *env;
    sub.params = args;
    sub.nparams = n;
    sub.depth = env->depth + 1;
    Val v = zt_eval(&sub, body);
    env->undef |= sub.undef;
    return v;
}

/* The value of calling an action that is not pure: not computable. */
static Val not_pure(Env *env, const ZDecl *d)
{
    return vunknown(
        zu_fmt(env->c->a, "the result of %s action `%s`", za_action_kind_name(d->action), d->name));
}

bool zt_eval_results(Env *env, const ZExpr *e, Val *out, int n)
{
    const ZDecl *d = e && e->kind == E_CALL ? e->decl : NULL;
    if (!d || d->kind != D_ACTION || d->action != ACT_PURE || !d->expr || d->results.len != n)
        return false;
    if (n > 1 && (d->expr->kind != E_TUPLE || d->expr->args.len != n)) return false;
    Val bad;
    Val *args = call_args(env, e, &bad);
    for (int k = 0; k < n; k++) {
        if (!args)
            out[k] = bad;
        else
            out[k] =
                pure_body(env, n == 1 ? d->expr : ZU_VEC_AT(d->expr->args, k), args, e->args.len);
    }
    return true;
}

static Val call(Env *env, const ZExpr *e)
{
    Val bad;
    Val *args = call_args(env, e, &bad);
    if (!args) return bad;
    ZArena *ar = env->c->a;
    if (e->builtin != BI_NONE) {
        const Val *a = &args[0];
        switch (e->builtin) {
        case BI_LEN: {
            if (a->k != V_STR) return mistyped();
            int64_t cnt = 0;
            for (size_t i = 0; i < a->n; i++)
                if (((unsigned char)a->s[i] & 0xC0) != 0x80) cnt++;
            return vint(cnt);
        }
        case BI_LOWER:
        case BI_UPPER:
            if (a->k != V_STR) return mistyped();
            return icu_case(ar, a, e->builtin == BI_UPPER);
        case BI_TRIM: {
            size_t b, en;
            if (a->k != V_STR || !ws_bounds(a->s, a->n, &b, &en)) return mistyped();
            return (Val){.k = V_STR, .s = a->s + b, .n = en - b};
        }
        case BI_CONTAINS:
        case BI_STARTS_WITH:
        case BI_ENDS_WITH: {
            if (a->k != V_STR || args[1].k != V_STR) return mistyped();
            const Val *p = &args[1];
            if (p->n > a->n) return vbool(false);
            if (e->builtin == BI_STARTS_WITH) return vbool(memcmp(a->s, p->s, p->n) == 0);
            if (e->builtin == BI_ENDS_WITH)
                return vbool(memcmp(a->s + a->n - p->n, p->s, p->n) == 0);
            for (size_t i = 0; i + p->n <= a->n; i++)
                if (memcmp(a->s + i, p->s, p->n) == 0) return vbool(true);
            return vbool(false);
        }
        case BI_STR: return zt_str(ar, a);
        case BI_INT:
            if (a->k == V_INT) return *a;
            if (a->k == V_FLOAT) { /* truncated towards zero */
                if (!(a->f >= -9223372036854775808.0 && a->f < 9223372036854775808.0))
                    return verr("int() of a float beyond the range of int");
                return vint((int64_t)a->f);
            }
            if (a->k == V_STR) {
                size_t b, en;
                int64_t v;
                if (!ws_bounds(a->s, a->n, &b, &en)) return mistyped();
                if (!parse_int_text(a->s + b, en - b, &v))
                    return verr("int() of text that is not an integer");
                return vint(v);
            }
            return mistyped();
        case BI_FLOAT:
            if (a->k == V_FLOAT) return *a;
            if (a->k == V_INT) return vfloat((double)a->i);
            if (a->k == V_STR) {
                size_t b, en;
                double v;
                if (!ws_bounds(a->s, a->n, &b, &en)) return mistyped();
                if (!parse_float_text(a->s + b, en - b, &v))
                    return verr("float() of text that is not a finite number");
                return vfloat(v);
            }
            return mistyped();
        case BI_JSON_GET: {
            if (a->k != V_JSON || args[1].k != V_STR) return mistyped();
            const Val *key = &args[1];
            json_t *m = NULL;
            /* a key with a NUL byte names no member */
            if (a->j && json_is_object(a->j) && !memchr(key->s, 0, key->n)) {
                char *k = zu_xmalloc(key->n + 1);
                memcpy(k, key->s, key->n);
                k[key->n] = '\0';
                m = json_object_get(a->j, k);
                free(k);
            }
            return (Val){.k = V_JSON, .j = m}; /* NULL: null */
        }
        case BI_JSON_STR:
            if (a->k != V_JSON) return mistyped();
            if (a->j && json_is_string(a->j))
                return (Val){
                    .k = V_STR, .s = json_string_value(a->j), .n = json_string_length(a->j)};
            return json_text_val(ar, a->j);
        default: return mistyped();
        }
    }
    const ZDecl *d = e->decl;
    if (d && d->kind == D_ACTION && d->action == ACT_PURE && d->expr && d->results.len == 1)
        return pure_body(env, d->expr, args, e->args.len);
    if (d && d->kind == D_ACTION && d->action != ACT_PURE) return not_pure(env, d);
    return mistyped();
}

static Val term(Env *env, int life, const ZDecl *var)
{
    Check *c = env->c;
    if (!var || var->kind != D_VAR || var->index < 0 || var->index >= c->m->nvars)
        return mistyped();
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

/* ---- named guards: one value per valuation ---- */

static uint64_t ptr_hash(const void *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

static int memo_find(const GuardMemo *m, const ZDecl *d)
{
    if (!m->cap) return -1;
    for (uint64_t i = ptr_hash(d) & (uint64_t)(m->cap - 1);; i = (i + 1) & (uint64_t)(m->cap - 1)) {
        if (!m->keys[i]) return -1;
        if (m->keys[i] == d) return (int)i;
    }
}

static void memo_put(GuardMemo *m, const ZDecl *d, Val v, bool undef)
{
    if (2 * (m->len + 1) > m->cap) {
        GuardMemo n = {.cap = m->cap ? 2 * m->cap : 64, .life = m->life, .index = m->index};
        n.keys = zu_xcalloc((size_t)n.cap, sizeof *n.keys);
        n.vals = zu_xcalloc((size_t)n.cap, sizeof *n.vals);
        n.undef = zu_xcalloc((size_t)n.cap, sizeof *n.undef);
        for (int i = 0; i < m->cap; i++)
            if (m->keys[i]) memo_put(&n, m->keys[i], m->vals[i], m->undef[i]);
        zt_guard_memo_free(m);
        *m = n;
    }
    uint64_t i = ptr_hash(d) & (uint64_t)(m->cap - 1);
    while (m->keys[i]) i = (i + 1) & (uint64_t)(m->cap - 1);
    m->keys[i] = d;
    m->vals[i] = v;
    m->undef[i] = undef;
    m->len++;
}

void zt_guard_memo_free(GuardMemo *m)
{
    free(m->keys);
    free(m->vals);
    free(m->undef);
    m->keys = NULL, m->vals = NULL, m->undef = NULL;
    m->cap = m->len = 0;
}

/* The named guards e uses directly, appended to out. */
static void guard_refs(Check *c, const ZExpr *e, ZVec *out, int depth)
{
    if (!e || depth > ZT_MAX_DEPTH) return;
    if (e->kind == E_NAME && e->name_kind == NAME_GUARD && e->decl) {
        zu_vec_push(c->a, out, (void *)e->decl);
        return;
    }
    guard_refs(c, e->a, out, depth + 1);
    guard_refs(c, e->b, out, depth + 1);
    guard_refs(c, e->c, out, depth + 1);
    for (int i = 0; i < e->args.len; i++) guard_refs(c, ZU_VEC_AT(e->args, i), out, depth + 1);
}

/* The value of named guard g in env: the guards it reaches are evaluated
 * first, bottom-up with an explicit stack, so that a chain of thousands of
 * guards neither recurses thousands deep nor is evaluated twice. */
static Val guard_value(Env *env, const ZDecl *g)
{
    Check *c = env->c;
    GuardMemo *m = &c->guards;
    if (m->len && (m->life != env->life || m->index != env->index)) {
        memset(m->keys, 0, sizeof *m->keys * (size_t)m->cap);
        m->len = 0;
    }
    m->life = env->life, m->index = env->index;
    int at = memo_find(m, g);
    if (at < 0) {
        /* post-order over the guards not known yet; frame k is guard
         * stack[k], its uses pushed once open[k] */
        int cap = 64, n = 0;
        const ZDecl **stack = zu_xmalloc(sizeof *stack * (size_t)cap);
        bool *open = zu_xmalloc(sizeof *open * (size_t)cap);
        stack[n] = g, open[n++] = false;
        ZVec refs = {0};
        while (n) {
            const ZDecl *d = stack[n - 1];
            if (memo_find(m, d) >= 0) {
                n--;
                continue;
            }
            if (!open[n - 1]) {
                open[n - 1] = true;
                refs.len = 0;
                guard_refs(c, d->expr, &refs, 0);
                for (int i = 0; i < refs.len; i++) {
                    const ZDecl *r = ZU_VEC_AT(refs, i);
                    if (memo_find(m, r) >= 0) continue;
                    if (n == cap) {
                        cap *= 2;
                        stack = zu_xrealloc(stack, sizeof *stack * (size_t)cap);
                        open = zu_xrealloc(open, sizeof *open * (size_t)cap);
                    }
                    stack[n] = r, open[n++] = false;
                }
                continue;
            }
            /* its uses are known: one evaluation, shallow */
            bool saved = env->undef;
            env->undef = false;
            Val v = d->expr ? zt_eval(env, d->expr) : mistyped();
            memo_put(m, d, v, env->undef);
            env->undef = saved;
            n--;
        }
        free(stack);
        free(open);
        at = memo_find(m, g);
        if (at < 0) return mistyped();
    }
    if (m->undef[at]) env->undef = true;
    return m->vals[at];
}

Val zt_eval(Env *env, const ZExpr *e)
{
    if (!e) return mistyped();
    if (env->depth > ZT_MAX_DEPTH) return too_deep();
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
        case NAME_CONST: r = e->decl ? zt_eval(env, e->decl->expr) : mistyped(); break;
        case NAME_GUARD: r = e->decl ? guard_value(env, e->decl) : mistyped(); break;
        case NAME_MEMBER:
            r = (Val){.k = V_ENUM,
                      .i = e->member,
                      .en = e->decl && e->decl->kind == D_ENUM ? e->decl
                            : e->type                          ? e->type->enum_decl
                                                               : NULL};
            break;
        case NAME_PARAM:
            r = env->params && e->member >= 0 && e->member < env->nparams ? env->params[e->member]
                                                                          : mistyped();
            break;
        default: r = mistyped(); break;
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
            r = a.i == INT64_MIN ? overflow() : vint(-a.i);
        else if (e->op == OP_NEG && a.k == V_FLOAT)
            r = vfloat(-a.f);
        else
            r = mistyped();
        break;
    }
    case E_BINARY: r = binary(env, e); break;
    case E_COND: {
        Val cnd = zt_eval(env, e->c);
        if (is_bad(&cnd))
            r = cnd;
        else if (cnd.k != V_BOOL)
            r = mistyped();
        else
            r = zt_eval(env, cnd.i ? e->a : e->b);
        break;
    }
    case E_CALL: r = call(env, e); break;
    default: r = mistyped(); break; /* tuples, CPL operators */
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
