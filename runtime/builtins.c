/* builtins.c — the value functions generated code calls with its context
 * (zgrt_abi.h): string concatenation and the builtins (len, lower, upper,
 * trim, contains, starts_with, ends_with, str, int, float, json_get,
 * json_str).  zgrt_compare needs no context and lives with the values
 * (values.c).
 *
 * Strings are UTF-8 (language reference §5.3).  len() counts code points.
 * upper() and lower() apply Unicode's default full case mappings (§3.13
 * of the standard), whatever the process's locale: the unconditional ones
 * of SpecialCasing.txt (ß → SS, İ → i̇), else the simple ones of
 * UnicodeData.txt, and, for lower(), Σ → ς in the Final_Sigma context (after
 * a cased letter and not before one, case-ignorable characters skipped
 * both ways, as Python and ICU do).  trim() strips the White_Space code
 * points at both ends; int() and float() accept them around the number.
 * The tables are data generated from the Unicode Character Database
 * (unicode.c); a byte that is not part of valid UTF-8 is kept as it is.
 *
 * Results are allocated in the lifeline's heap (zri_ctx_heap) and live
 * until the end of the run.  A builtin that fails (int("x"), a wrong
 * argument from broken generated code) stops the run through zgrt_trap,
 * which does not return.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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

/* ---- Unicode -------------------------------------------------------------- */

/* The code point at s[*i] (at most n - *i bytes), advancing *i; a byte that
 * does not start a valid sequence is returned as -1 - byte, one byte. */
static int32_t utf8_next(const char *s, int64_t n, int64_t *i)
{
    const unsigned char *u = (const unsigned char *)s + *i;
    int64_t left = n - *i;
    int len = u[0] < 0x80                    ? 1
              : u[0] >= 0xc2 && u[0] <= 0xdf ? 2
              : u[0] >= 0xe0 && u[0] <= 0xef ? 3
              : u[0] >= 0xf0 && u[0] <= 0xf4 ? 4
                                             : 0;
    if (len == 1) {
        (*i)++;
        return u[0];
    }
    if (len == 0 || left < len) goto bad;
    int32_t cp = u[0] & (0x7f >> len);
    for (int k = 1; k < len; k++) {
        if ((u[k] & 0xc0) != 0x80) goto bad;
        cp = (cp << 6) | (u[k] & 0x3f);
    }
    static const int32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) goto bad;
    *i += len;
    return cp;
bad:
    (*i)++;
    return -1 - (int32_t)u[0];
}

/* Appends code point cp (or the byte of a -1 - byte from utf8_next). */
static void utf8_put(zri_buf *b, int32_t cp)
{
    char t[4];
    size_t n;
    if (cp < 0) {
        t[0] = (char)(-1 - cp);
        n = 1;
    } else if (cp < 0x80) {
        t[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        t[0] = (char)(0xc0 | cp >> 6);
        t[1] = (char)(0x80 | (cp & 0x3f));
        n = 2;
    } else if (cp < 0x10000) {
        t[0] = (char)(0xe0 | cp >> 12);
        t[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        t[2] = (char)(0x80 | (cp & 0x3f));
        n = 3;
    } else {
        t[0] = (char)(0xf0 | cp >> 18);
        t[1] = (char)(0x80 | (cp >> 12 & 0x3f));
        t[2] = (char)(0x80 | (cp >> 6 & 0x3f));
        t[3] = (char)(0x80 | (cp & 0x3f));
        n = 4;
    }
    zri_buf_add(b, t, n);
}

static int in_ranges(const zri_uc_range *r, int n, int32_t cp)
{
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if ((uint32_t)cp < r[mid].lo)
            hi = mid - 1;
        else if ((uint32_t)cp > r[mid].hi)
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}

static int is_space_cp(int32_t cp)
{
    return cp >= 0 && in_ranges(zri_uc_white_space, zri_uc_nwhite_space, cp);
}

/* Appends the full case mapping of cp (to upper case when up). */
static void map_case(zri_buf *b, int32_t cp, int up)
{
    if (cp < 0) {
        utf8_put(b, cp);
        return;
    }
    const zri_uc_multi *m = up ? zri_uc_upper_multi : zri_uc_lower_multi;
    int lo = 0, hi = (up ? zri_uc_nupper_multi : zri_uc_nlower_multi) - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if ((uint32_t)cp == m[mid].cp) {
            for (int k = 0; k < 3 && m[mid].to[k]; k++) utf8_put(b, (int32_t)m[mid].to[k]);
            return;
        }
        if ((uint32_t)cp < m[mid].cp)
            hi = mid - 1;
        else
            lo = mid + 1;
    }
    const zri_uc_delta *d = up ? zri_uc_upper : zri_uc_lower;
    lo = 0, hi = (up ? zri_uc_nupper : zri_uc_nlower) - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if ((uint32_t)cp == d[mid].cp) {
            utf8_put(b, cp + d[mid].delta);
            return;
        }
        if ((uint32_t)cp < d[mid].cp)
            hi = mid - 1;
        else
            lo = mid + 1;
    }
    utf8_put(b, cp);
}

/* The code points of s (bytes that are not UTF-8 as -1 - byte); malloc'd. */
static int32_t *code_points(const zgrt_str *s, int64_t *n)
{
    int32_t *cps = zri_xmalloc(sizeof *cps * (size_t)(s->len ? s->len : 1));
    int64_t k = 0;
    for (int64_t i = 0; i < s->len;) cps[k++] = utf8_next(s->data, s->len, &i);
    *n = k;
    return cps;
}

/* Whether the code point at cps[at] is in the Final_Sigma context: a cased
 * code point before it and none after it, case-ignorable ones skipped. */
static int final_sigma(const int32_t *cps, int64_t n, int64_t at)
{
    int64_t j = at - 1;
    while (j >= 0 && cps[j] >= 0 &&
           in_ranges(zri_uc_case_ignorable, zri_uc_ncase_ignorable, cps[j]))
        j--;
    if (j < 0 || cps[j] < 0 || !in_ranges(zri_uc_cased, zri_uc_ncased, cps[j])) return 0;
    j = at + 1;
    while (j < n && cps[j] >= 0 && in_ranges(zri_uc_case_ignorable, zri_uc_ncase_ignorable, cps[j]))
        j++;
    return j == n || cps[j] < 0 || !in_ranges(zri_uc_cased, zri_uc_ncased, cps[j]);
}

static const zgrt_str *change_case(zri_heap *h, const zgrt_str *s, int up)
{
    int64_t n;
    int32_t *cps = code_points(s, &n);
    zri_buf b = {0};
    for (int64_t i = 0; i < n; i++) {
        if (!up && cps[i] == 0x03a3 && final_sigma(cps, n, i))
            utf8_put(&b, 0x03c2); /* ς */
        else
            map_case(&b, cps[i], up);
    }
    const zgrt_str *r = zri_str(h, b.data ? b.data : "", b.len);
    zri_buf_free(&b);
    free(cps);
    return r;
}

/* The bounds [*b, *e) of s without the White_Space at both ends. */
static void trim_bounds(const char *s, int64_t n, int64_t *b, int64_t *e)
{
    int64_t i = 0, start = 0;
    while (i < n && is_space_cp(utf8_next(s, n, &i))) start = i;
    *b = start;
    int64_t end = start, j = start;
    while (j < n)
        if (!is_space_cp(utf8_next(s, n, &j))) end = j;
    *e = end;
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
    case ZGRT_BI_UPPER: set_str(out, change_case(h, s, builtin == ZGRT_BI_UPPER)); return;
    case ZGRT_BI_TRIM: {
        int64_t b, e;
        trim_bounds(s->data, s->len, &b, &e);
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
            int64_t v, b, e;
            trim_bounds(a->u.s->data, a->u.s->len, &b, &e);
            int r = zri_parse_int(a->u.s->data + b, (size_t)(e - b), &v);
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
            int64_t b, e;
            trim_bounds(a->u.s->data, a->u.s->len, &b, &e);
            int r = zri_parse_float(a->u.s->data + b, (size_t)(e - b), &d);
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
