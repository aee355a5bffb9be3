/* check_actions.c — action declarations (language reference §3.1).
 *
 * llm actions need `parse` and at least one of `system`/`user`; human
 * actions need `kind` and `prompt`.  The property keys, parse modes and
 * human kinds are the vocabulary's (vocab/vocab.h): the lists of allowed
 * words in messages are generated from it.  Human kinds and their outputs:
 *   confirm -> one bool, input and edit -> one str,
 *   select -> one value of an enum type (the choices are its members),
 *   ack -> no output or one bool.
 * A placeholder is `{name}` with `name` an identifier; any other brace is
 * literal text.  Placeholder columns are exact: they are found in the
 * source text of the literal (escapes skipped), with the decoded string and
 * a single-line estimate as a fallback when the source cannot be matched.
 * Constant properties (`model`, `temperature`, `retries`, `fallback`) are
 * folded (check_fold.c).
 */
#include "check.h"
#include "suggest.h"

/* ---- the vocabulary ----------------------------------------------------- */

/* The property keys are zgc.h's (PROP_SYSTEM, ..., za_prop_name). */

#define ZK_ID(id, word) K_##id,
#define ZK_WORD(id, word) word,
enum { ZV_HUMAN_KINDS(ZK_ID) K__COUNT };
static const char *const human_kinds[] = {ZV_HUMAN_KINDS(ZK_WORD)};
#undef ZK_ID
#undef ZK_WORD

#define ZK_MODE(id, word, type) {word, TY_##type},
static const struct {
    const char *word;
    ZTypeKind output; /* TY_JSON: any outputs */
} parse_modes[] = {ZV_PARSE_MODES(ZK_MODE)};
#undef ZK_MODE
enum { N_PARSE_MODES = sizeof parse_modes / sizeof parse_modes[0] };

/* "a, b and c" (last: " and ") for messages, in the arena; `tick` puts
 * each word in backquotes. */
static const char *word_list(Ck *c, const char *const *words, int n, const char *last, bool tick)
{
    ZBuf b = {0};
    for (int i = 0; i < n; i++) {
        if (i) zu_buf_puts(&b, i == n - 1 ? last : ", ");
        zu_buf_printf(&b, tick ? "`%s`" : "%s", words[i]);
    }
    const char *s = zu_strdup(c->a, b.data ? b.data : "");
    zu_buf_free(&b);
    return s;
}

/* The own properties of llm, human or planner actions: [*from, *to). */
static void prop_range(ZActionKind k, int *from, int *to)
{
    *from = k == ACT_LLM ? 0 : k == ACT_HUMAN ? PROP__NLLM : PROP__NHUMAN;
    *to = k == ACT_LLM ? PROP__NLLM : k == ACT_HUMAN ? PROP__NHUMAN : PROP__COUNT;
}

#define ZK_SHARED(id) PROP_##id,
static const ZPropKey planner_shared[] = {ZV_PLANNER_SHARED(ZK_SHARED)};
#undef ZK_SHARED
enum { N_PLANNER_SHARED = sizeof planner_shared / sizeof planner_shared[0] };

/* The property `key` of an action of kind k, or -1. */
static int prop_of(const char *key, ZActionKind k)
{
    int from, to;
    prop_range(k, &from, &to);
    for (int i = from; i < to; i++)
        if (strcmp(key, za_prop_name(i)) == 0) return i;
    for (int i = 0; k == ACT_PLANNER && i < N_PLANNER_SHARED; i++)
        if (strcmp(key, za_prop_name(planner_shared[i])) == 0) return planner_shared[i];
    return -1;
}

/* "system, user, ... and fallback": the properties of actions of kind k;
 * `tick` puts each in backquotes. */
static const char *prop_list(Ck *c, ZActionKind k, bool tick)
{
    const char *words[PROP__COUNT];
    int from, to, n = 0;
    prop_range(k, &from, &to);
    for (int i = from; i < to; i++) words[n++] = za_prop_name(i);
    for (int i = 0; k == ACT_PLANNER && i < N_PLANNER_SHARED; i++)
        words[n++] = za_prop_name(planner_shared[i]);
    return word_list(c, words, n, " and ", tick);
}

/* The index of the word that names `e` among `words`, or -1. */
static int word_of(const ZExpr *e, const char *const *words, int n)
{
    if (e->kind != E_NAME || !e->name) return -1;
    for (int i = 0; i < n; i++)
        if (strcmp(e->name, words[i]) == 0) return i;
    return -1;
}

/* "; did you mean `w`?" for the word of words closest to e's name, or "". */
static const char *near_word(Ck *c, const ZExpr *e, const char *const *words, int n)
{
    if (e->kind != E_NAME || !e->name) return "";
    ZvSuggest sg;
    zv_suggest_init(&sg, e->name);
    for (int i = 0; i < n; i++) zv_suggest_try(&sg, words[i]);
    return sg.best ? zu_fmt(c->a, "; did you mean `%s`?", sg.best) : "";
}

/* ---- prompt placeholders ------------------------------------------------ */

/* Byte offset of (line, column) in the source, or -1. */
static long source_offset(const ZSource *src, int line, int col)
{
    if (!src || !src->text || line < 1 || col < 1) return -1;
    size_t i = 0;
    for (int l = 1; l < line; i++) {
        if (i >= src->len) return -1;
        if (src->text[i] == '\n') l++;
    }
    for (int k = 1; k < col; i++) {
        if (i >= src->len || src->text[i] == '\n') return -1;
        if (((unsigned char)src->text[i] & 0xC0) != 0x80) {
            /* count a column when the next code point starts */
            size_t j = i + 1;
            while (j < src->len && ((unsigned char)src->text[j] & 0xC0) == 0x80) j++;
            i = j - 1;
            k++;
        }
    }
    return (long)i;
}

static bool ident_start(char ch)
{
    return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}
static bool ident_char(char ch) { return ident_start(ch) || (ch >= '0' && ch <= '9'); }

static bool is_input(const ZDecl *act, const char *s, size_t n)
{
    for (int i = 0; i < act->params.len; i++) {
        ZParam *pp = act->params.items[i];
        if (pp->name && strlen(pp->name) == n && memcmp(pp->name, s, n) == 0) return true;
    }
    return false;
}

static void bad_placeholder(Ck *c, const ZDecl *act, const char *s, size_t n, ZSpan str, int line,
                            int col)
{
    ZSpan at = {line, col, line, col + (int)n + 1, str.file, str.exp};
    char *name = zu_strndup(c->a, s, n);
    ZvSuggest sg;
    zv_suggest_init(&sg, name);
    for (int i = 0; i < act->params.len; i++)
        zv_suggest_try(&sg, ((ZParam *)act->params.items[i])->name);
    if (sg.best)
        zd_error(c->d, at,
                 "placeholder `{%s}` does not name an input of `%s`; did you mean `{%s}`?", name,
                 act->name, sg.best);
    else
        zd_error(c->d, at, "placeholder `{%s}` does not name an input of `%s`", name, act->name);
}

/* Scans the literal in the source: exact line and column. */
static bool placeholders_in_source(Ck *c, const ZExpr *str, const ZDecl *act)
{
    const ZSource *src = zd_source(c->d, str->span);
    long off = source_offset(src, str->span.first_line, str->span.first_column);
    if (off < 0 || src->text[off] != '"') return false;
    const char *t = src->text;
    size_t n = src->len, i = (size_t)off;
    bool triple = i + 2 < n && t[i + 1] == '"' && t[i + 2] == '"';
    int line = str->span.first_line, col = str->span.first_column;
    size_t skip = triple ? 3 : 1;
    i += skip;
    col += (int)skip;
    while (i < n) {
        char ch = t[i];
        if (triple ? (ch == '"' && i + 2 < n && t[i + 1] == '"' && t[i + 2] == '"') : ch == '"')
            break;
        if (!triple && ch == '\n') break;
        size_t step = 1;
        if (ch == '\\' && i + 1 < n) {
            step = 2;
            if (t[i + 1] == 'u' && i + 2 < n && t[i + 2] == '{') {
                while (i + step < n && t[i + step] != '}' && t[i + step] != '"' &&
                       t[i + step] != '\n')
                    step++;
                if (i + step < n && t[i + step] == '}') step++;
            }
        } else if (ch == '{' && i + 1 < n && ident_start(t[i + 1])) {
            size_t j = i + 1;
            while (j < n && ident_char(t[j])) j++;
            if (j < n && t[j] == '}') {
                if (!is_input(act, t + i + 1, j - i - 1))
                    bad_placeholder(c, act, t + i + 1, j - i - 1, str->span, line, col);
                step = j + 1 - i;
            }
        }
        for (size_t k = 0; k < step; k++) {
            unsigned char b = (unsigned char)t[i + k];
            if (b == '\n') {
                line++;
                col = 1;
            } else if ((b & 0xC0) != 0x80) {
                col++;
            }
        }
        i += step;
    }
    return true;
}

/* Placeholders of a prompt must name inputs of the action. */
static void check_placeholders(Ck *c, const ZExpr *str, const ZDecl *act)
{
    if (placeholders_in_source(c, str, act)) return;
    /* fallback: the decoded text, columns estimated on the first line */
    const char *s = str->lit.s ? str->lit.s : "";
    int col = str->span.first_column + 1;
    for (size_t i = 0; i < str->slen; i++) {
        if (s[i] == '{' && i + 1 < str->slen && ident_start(s[i + 1])) {
            size_t j = i + 1;
            while (j < str->slen && ident_char(s[j])) j++;
            if (j < str->slen && s[j] == '}' && !is_input(act, s + i + 1, j - i - 1))
                bad_placeholder(c, act, s + i + 1, j - i - 1, str->span, str->span.first_line, col);
        }
        if (((unsigned char)s[i] & 0xC0) != 0x80) col++;
    }
}

/* ---- properties --------------------------------------------------------- */

/* Exactly one output, of the given kind. */
static bool one_output(const ZDecl *act, ZTypeKind k)
{
    if (act->results.len != 1) return false;
    ZParam *r = act->results.items[0];
    return is_err(r->type) || r->type->kind == k;
}

static void check_parse_prop(Ck *c, const ZDecl *act, ZExpr *v)
{
    v->type = c->t_void;
    for (int i = 0; i < N_PARSE_MODES; i++) {
        const char *mode = parse_modes[i].word;
        ZTypeKind out = parse_modes[i].output;
        if (v->kind != E_NAME || !v->name || strcmp(v->name, mode) != 0) continue;
        if (out == TY_JSON || one_output(act, out)) return;
        if (out == TY_ENUM) {
            zd_error(c->d, v->span, "`%s = %s` needs exactly one output of an enum type",
                     za_prop_name(PROP_PARSE), mode);
        } else {
            ZType t = {.kind = out};
            zd_error(c->d, v->span, "`%s = %s` needs exactly one `%s` output",
                     za_prop_name(PROP_PARSE), mode, za_type_name(c->a, &t));
        }
        return;
    }
    const char *modes[N_PARSE_MODES];
    for (int i = 0; i < N_PARSE_MODES; i++) modes[i] = parse_modes[i].word;
    zd_error(c->d, v->span, "`%s` must be one of %s%s", za_prop_name(PROP_PARSE),
             word_list(c, modes, N_PARSE_MODES, " or ", false),
             near_word(c, v, modes, N_PARSE_MODES));
}

static void check_kind_prop(Ck *c, const ZDecl *act, ZExpr *v)
{
    v->type = c->t_void;
    int k = word_of(v, human_kinds, K__COUNT);
    const char *kind = za_prop_name(PROP_KIND);
    switch (k) {
    case K_CONFIRM:
        if (!one_output(act, TY_BOOL))
            zd_error(c->d, v->span, "`%s = %s` needs exactly one `bool` output", kind, v->name);
        break;
    case K_INPUT:
    case K_EDIT:
        if (!one_output(act, TY_STR))
            zd_error(c->d, v->span, "`%s = %s` needs exactly one `str` output", kind, v->name);
        break;
    case K_SELECT:
        if (!one_output(act, TY_ENUM))
            zd_error(c->d, v->span, "`%s = %s` needs exactly one output of an enum type", kind,
                     v->name);
        break;
    case K_ACK:
        if (act->results.len != 0 && !one_output(act, TY_BOOL))
            zd_error(c->d, v->span, "`%s = %s` needs no output or one `bool` output", kind,
                     v->name);
        break;
    default:
        zd_error(c->d, v->span, "`%s` must be one of %s%s", kind,
                 word_list(c, human_kinds, K__COUNT, " or ", false),
                 near_word(c, v, human_kinds, K__COUNT));
        break;
    }
}

static void check_fallback(Ck *c, const ZDecl *act, ZProp *pr)
{
    ZExpr *v = pr->value;
    int n = act->results.len;
    bool tuple = v->kind == E_TUPLE;
    int m = tuple ? v->args.len : 1;
    if (tuple) v->type = c->t_void;
    if (n == 0) {
        zd_error(c->d, v->span, "`%s` given but `%s` has no outputs", za_prop_name(PROP_FALLBACK),
                 act->name);
        return;
    }
    if (m != n) {
        zd_error(c->d, v->span, "`%s` has %d value%s but `%s` has %d output%s",
                 za_prop_name(PROP_FALLBACK), m, pl(m), act->name, n, pl(n));
        return;
    }
    for (int i = 0; i < m; i++) {
        ZExpr **slot = tuple ? (ZExpr **)&v->args.items[i] : &pr->value;
        ZType *t = ck_type(c, *slot, X_CONST);
        ZParam *out = act->results.items[i];
        if (!ck_assignable(out->type, t)) {
            if (out->name)
                zd_error(c->d, (*slot)->span, "%s value for `%s` must be `%s`, not `%s`",
                         za_prop_name(PROP_FALLBACK), out->name, za_type_name(c->a, out->type),
                         za_type_name(c->a, t));
            else
                zd_error(c->d, (*slot)->span, "%s value %d must be `%s`, not `%s`",
                         za_prop_name(PROP_FALLBACK), i + 1, za_type_name(c->a, out->type),
                         za_type_name(c->a, t));
            continue;
        }
        ZValue cv;
        if (!is_err(t)) ck_fold_into(c, slot, &cv);
    }
}

static void check_number_prop(Ck *c, ZProp *pr, bool temperature)
{
    ZExpr *e = pr->value;
    if (!temperature && e->kind == E_NAME && e->name && strcmp(e->name, ZV_RETRIES_FOREVER) == 0) {
        pr->value->type = c->t_void;
        return;
    }
    ZType *t = ck_type(c, pr->value, X_CONST);
    if (is_err(t)) return;
    ZValue v;
    bool ok = (t->kind == TY_INT || (temperature && t->kind == TY_FLOAT)) &&
              ck_fold_into(c, &pr->value, &v);
    if (ok && temperature) {
        double x = v.k == TY_INT ? (double)v.i : v.f;
        ok = x >= 0 && x <= 1;
    } else if (ok) {
        ok = v.i >= 0;
    }
    if (ok) return;
    if (temperature)
        zd_error(c->d, pr->value->span, "`%s` must be a number between 0 and 1",
                 za_prop_name(PROP_TEMPERATURE));
    else
        zd_error(c->d, pr->value->span, "`%s` must be a non-negative integer or `%s`",
                 za_prop_name(PROP_RETRIES), ZV_RETRIES_FOREVER);
}

static void check_prompt_prop(Ck *c, const ZDecl *act, ZProp *pr)
{
    ZExpr *v = pr->value;
    if (v->kind != E_STR) {
        ck_type(c, v, X_CONST);
        zd_error(c->d, v->span, "`%s` must be a string literal", pr->key);
        return;
    }
    v->type = c->t_str;
    check_placeholders(c, v, act);
}

static void check_planner_prop(Ck *c, const ZDecl *act, ZProp *pr, int k);

static void check_props(Ck *c, const ZDecl *act)
{
    for (int i = 0; i < act->props.len; i++) {
        ZProp *pr = act->props.items[i];
        if (!pr->key || !pr->value) continue;
        bool dup = false;
        for (int j = 0; j < i && !dup; j++) {
            ZProp *o = act->props.items[j];
            if (o->key && strcmp(o->key, pr->key) == 0) {
                zd_error(c->d, pr->span, "duplicate property `%s`", pr->key);
                zd_note(c->d, o->span, "previous `%s` here", pr->key);
                dup = true;
            }
        }
        if (dup) {
            ck_type(c, pr->value, X_CONST);
            continue;
        }
        int k = prop_of(pr->key, act->action);
        if (k < 0) {
            zd_error(c->d, pr->span, "unknown property `%s` in %s action `%s`", pr->key,
                     za_action_kind_name(act->action), act->name);
            zd_note(c->d, act->name_span, "the properties of %s actions are %s",
                    za_action_kind_name(act->action), prop_list(c, act->action, false));
            pr->value->type = c->t_void;
            continue;
        }
        switch (k) {
        case PROP_SYSTEM:
        case PROP_USER:
        case PROP_PROMPT: check_prompt_prop(c, act, pr); break;
        case PROP_PARSE: check_parse_prop(c, act, pr->value); break;
        case PROP_KIND: check_kind_prop(c, act, pr->value); break;
        case PROP_MODEL: {
            ZType *t = ck_type(c, pr->value, X_CONST);
            ZValue v;
            if (!is_err(t) && t->kind != TY_STR)
                zd_error(c->d, pr->value->span, "`%s` must be a string, not `%s`",
                         za_prop_name(PROP_MODEL), za_type_name(c->a, t));
            else if (!is_err(t))
                ck_fold_into(c, &pr->value, &v);
            break;
        }
        case PROP_TEMPERATURE:
        case PROP_RETRIES: check_number_prop(c, pr, k == PROP_TEMPERATURE); break;
        case PROP_FALLBACK: check_fallback(c, act, pr); break;
        default:
            if (k < PROP__NHUMAN) ZU_UNREACHABLE();
            check_planner_prop(c, act, pr, k);
            break;
        }
    }
}

static bool has_prop(const ZDecl *act, ZPropKey key) { return za_prop(act, key) != NULL; }

/* ---- pure bodies -------------------------------------------------------- */

/* The body of a pure action: one expression, or a tuple of expressions
 * for a tuple result. */
static void check_pure_body(Ck *c, ZDecl *act)
{
    ZExpr *body = act->expr;
    int n = act->results.len;
    if (n == 0) {
        ck_type(c, body, X_PURE);
        return;
    }
    if (body->kind == E_TUPLE || n > 1) {
        int m = body->kind == E_TUPLE ? body->args.len : 1;
        if (m != n) {
            zd_error(c->d, body->span, "the body of `%s` gives %d value%s but `%s` returns %d",
                     act->name, m, pl(m), act->name, n);
            if (body->kind == E_TUPLE)
                for (int i = 0; i < m; i++) ck_type(c, body->args.items[i], X_PURE);
            else
                ck_type(c, body, X_PURE);
            body->type = c->t_err;
            return;
        }
        for (int i = 0; i < n; i++) {
            ZExpr *e = body->args.items[i];
            ZParam *r = act->results.items[i];
            ZType *t = ck_type(c, e, X_PURE);
            if (!ck_assignable(r->type, t))
                zd_error(c->d, e->span,
                         "value %d of the body of `%s` is `%s` but `%s` returns `%s`", i + 1,
                         act->name, za_type_name(c->a, t), act->name, za_type_name(c->a, r->type));
        }
        body->type = ck_result_type(c, act);
        return;
    }
    ZParam *r = act->results.items[0];
    ZType *t = ck_type(c, body, X_PURE);
    if (!ck_assignable(r->type, t))
        zd_error(c->d, body->span, "the body of `%s` is `%s` but `%s` returns `%s`", act->name,
                 za_type_name(c->a, t), act->name, za_type_name(c->a, r->type));
}

/* ---- planners ----------------------------------------------------------- */

/* The names of a list property: one name, or a tuple of names. */
static bool name_list(Ck *c, ZProp *pr, ZVec *out)
{
    ZExpr *v = pr->value;
    *out = (ZVec){0};
    if (v->kind == E_NAME && v->name) {
        zu_vec_push(c->a, out, v);
    } else if (v->kind == E_TUPLE) {
        for (int i = 0; i < v->args.len; i++) {
            ZExpr *e = v->args.items[i];
            if (e->kind != E_NAME || !e->name) {
                zd_error(c->d, e->span, "`%s` must list names, as in `%s = (A, B)`", pr->key,
                         pr->key);
                return false;
            }
            zu_vec_push(c->a, out, e);
        }
    } else {
        zd_error(c->d, v->span, "`%s` must be a name or a list of names, as in `%s = (A, B)`",
                 pr->key, pr->key);
        return false;
    }
    for (int i = 0; i < out->len; i++)
        for (int j = 0; j < i; j++) {
            const ZExpr *a = out->items[i], *b = out->items[j];
            if (strcmp(a->name, b->name) == 0) {
                zd_error(c->d, a->span, "`%s` names `%s` twice", pr->key, a->name);
                return false;
            }
        }
    return true;
}

#define ZK_ALLOW(id, word) word,
static const char *const allow_words[] = {ZV_PLANNER_ALLOW(ZK_ALLOW)};
#undef ZK_ALLOW
enum { N_ALLOW = sizeof allow_words / sizeof allow_words[0] };

static void check_planner_prop(Ck *c, const ZDecl *act, ZProp *pr, int k)
{
    ZExpr *v = pr->value;
    v->type = c->t_void;
    ZVec names;
    switch ((ZPropKey)k) {
    case PROP_DESCRIPTION:
    case PROP_INSTRUCTIONS:
        if (v->kind != E_STR) zd_error(c->d, v->span, "`%s` must be a string literal", pr->key);
        break;
    case PROP_WORKERS:
        if (!name_list(c, pr, &names)) break;
        for (int i = 0; i < names.len; i++) {
            const ZExpr *e = names.items[i];
            const ZDecl *d = zr_lookup(c->p, e->name);
            if (d && d->kind == D_LIFELINE)
                zd_error(c->d, e->span,
                         "worker `%s` of planner `%s` is a lifeline of this program: workers "
                         "live only in the generated workflow",
                         e->name, act->name);
        }
        break;
    case PROP_ACTIONS:
        if (!name_list(c, pr, &names)) break;
        for (int i = 0; i < names.len; i++) {
            const ZExpr *e = names.items[i];
            const ZDecl *d = zr_lookup(c->p, e->name);
            if (!d || d->kind != D_ACTION)
                zd_error(c->d, e->span, "`%s` of planner `%s` is not an action", e->name,
                         act->name);
            else if (d->action == ACT_EFFECT || d->action == ACT_EXTERN_PURE)
                zd_error(c->d, e->span,
                         "planner `%s` cannot offer %s action `%s`: generated workflows run no "
                         "C code",
                         act->name, za_action_kind_name(d->action), e->name);
            else if (d->action == ACT_HUMAN)
                zd_error(c->d, e->span, "planner `%s` cannot offer human action `%s`", act->name,
                         e->name);
        }
        break;
    case PROP_ALLOW: {
        ZVec items = {0};
        if (v->kind == E_TUPLE)
            items = v->args;
        else
            zu_vec_push(c->a, &items, v);
        for (int i = 0; i < items.len; i++) {
            const ZExpr *e = items.items[i];
            int w = -1;
            for (int j = 0; e->kind == E_STR && j < N_ALLOW && w < 0; j++)
                if (strcmp(e->lit.s, allow_words[j]) == 0) w = j;
            if (w < 0)
                zd_error(c->d, e->span, "`%s` takes strings among %s", pr->key,
                         word_list(c, allow_words, N_ALLOW, " and ", true));
        }
        break;
    }
    case PROP_MAX_STATEMENTS:
    case PROP_MAX_ITERATIONS:
    case PROP_TIMEOUT:
        /* read from the source text at run time: a literal */
        if (v->kind != E_INT || v->lit.i <= 0)
            zd_error(c->d, v->span, "`%s` must be a positive integer literal", pr->key);
        break;
    default: ZU_UNREACHABLE();
    }
}

static void check_planner(Ck *c, ZDecl *act)
{
    const char *kind = za_action_kind_name(act->action);
    if (act->results.len == 0)
        zd_error(c->d, act->name_span, "%s action `%s` must declare its outputs", kind, act->name);
    check_props(c, act);
    if (!has_prop(act, PROP_DESCRIPTION))
        zd_error(c->d, act->name_span, "%s action `%s` needs `%s = \"...\"`", kind, act->name,
                 za_prop_name(PROP_DESCRIPTION));
    if (!has_prop(act, PROP_WORKERS))
        zd_error(c->d, act->name_span,
                 "%s action `%s` needs `%s = (...)`: the lifelines of the "
                 "workflows it makes",
                 kind, act->name, za_prop_name(PROP_WORKERS));
}

/* ---- declarations ------------------------------------------------------- */

void ck_action_decl(Ck *c, ZDecl *act)
{
    const char *kind = za_action_kind_name(act->action);
    switch (act->action) {
    case ACT_LLM:
        if (act->results.len == 0) {
            zd_error(c->d, act->name_span, "%s action `%s` must declare its outputs", kind,
                     act->name);
        } else if (!act->named_results) {
            ZParam *r = act->results.items[0];
            zd_error(c->d, r->span,
                     "outputs of %s action `%s` must be named, as in `-> (answer: %s)`", kind,
                     act->name, za_type_name(c->a, r->type));
        }
        if (!act->has_body) {
            zd_error(c->d, act->name_span, "%s action `%s` needs a body with its prompts", kind,
                     act->name);
            break;
        }
        check_props(c, act);
        if (!has_prop(act, PROP_PARSE))
            zd_error(c->d, act->name_span, "%s action `%s` needs `%s = ...`", kind, act->name,
                     za_prop_name(PROP_PARSE));
        if (!has_prop(act, PROP_SYSTEM) && !has_prop(act, PROP_USER))
            zd_error(c->d, act->name_span, "%s action `%s` needs a prompt: `%s` or `%s`", kind,
                     act->name, za_prop_name(PROP_SYSTEM), za_prop_name(PROP_USER));
        break;
    case ACT_HUMAN:
        if (!act->has_body) {
            zd_error(c->d, act->name_span, "%s action `%s` needs a body with %s", kind, act->name,
                     prop_list(c, ACT_HUMAN, true));
            break;
        }
        check_props(c, act);
        if (!has_prop(act, PROP_KIND))
            zd_error(c->d, act->name_span, "%s action `%s` needs `%s = ...`", kind, act->name,
                     za_prop_name(PROP_KIND));
        if (!has_prop(act, PROP_PROMPT))
            zd_error(c->d, act->name_span, "%s action `%s` needs `%s = ...`", kind, act->name,
                     za_prop_name(PROP_PROMPT));
        break;
    case ACT_PURE:
    case ACT_EXTERN_PURE:
        if (act->results.len == 0)
            zd_error(c->d, act->name_span, "%s action `%s` must return a value",
                     za_action_kind_name(ACT_PURE), act->name);
        if (act->action == ACT_PURE && act->expr) {
            c->pure = act;
            check_pure_body(c, act);
            c->pure = NULL;
        }
        break;
    case ACT_EFFECT: break;
    case ACT_PLANNER: check_planner(c, act); break;
    case ACT__COUNT: ZU_UNREACHABLE();
    }
}
