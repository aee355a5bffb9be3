/* mutate.c — the mutations of a recorded trace (campaign.c lists them),
 * each handed to try_mutant: at every value of every line, and
 * structural (lines, messages, decisions, events, the run's end). */
#include "campaign.h"

/* ===================================================================== */
/* Mutations                                                              */
/* ===================================================================== */

/* The names a field of this kind may hold, for "another name". */
typedef struct Names {
    json_t *lifelines, *kinds, *channels, *tags, *actions, *vars, *members, *msgs, *strings;
} Names;

static void add_name(json_t *set, const char *s)
{
    if (!s) return;
    for (size_t i = 0; i < json_array_size(set); i++)
        if (!strcmp(json_string_value(json_array_get(set, i)), s)) return;
    json_array_append_new(set, json_string(s));
}

static void collect_strings(json_t *set, const json_t *v)
{
    if (json_is_string(v)) add_name(set, json_string_value(v));
    size_t i;
    json_t *x;
    const char *k;
    if (json_is_array(v))
        for (i = 0; i < json_array_size(v); i++) collect_strings(set, json_array_get(v, i));
    if (json_is_object(v)) json_object_foreach((json_t *)v, k, x)
        {
            collect_strings(set, x);
        }
}

static Names names_of(const Case *c)
{
    Names n = {json_array(), json_array(), json_array(), json_array(), json_array(),
               json_array(), json_array(), json_array(), json_array()};
    for (int l = 0; l < c->nl; l++) add_name(n.lifelines, c->lnames[l]);
    static const char *const kinds[] = {"start", "send", "recv", "act", "choice", "retry", "end"};
    for (int k = 0; k < 7; k++) add_name(n.kinds, kinds[k]);
    add_name(n.channels, "main");
    add_name(n.channels, "main/par1.1");
    const ZProgram *p = c->comp.prog;
    for (int i = 0; i < p->decls.len; i++) {
        const ZDecl *d = ZU_VEC_AT(p->decls, i);
        if (d->kind == D_ACTION) add_name(n.actions, d->name);
        if (d->kind == D_ENUM)
            for (int m = 0; m < d->members.len; m++)
                add_name(n.members, ((ZParam *)ZU_VEC_AT(d->members, m))->name);
    }
    for (int i = 0; i < p->vars.len; i++) add_name(n.vars, ((ZDecl *)ZU_VEC_AT(p->vars, i))->name);
    add_name(n.tags, "if#1");
    add_name(n.tags, "while#1");
    size_t i;
    json_t *l;
    json_array_foreach(c->orig, i, l)
    {
        add_name(n.channels, str_of(l, "channel"));
        add_name(n.tags, str_of(l, "construct"));
        add_name(n.tags, str_of(l, "control"));
        add_name(n.msgs, str_of(l, "msg"));
        collect_strings(n.strings, json_object_get(l, "values"));
        collect_strings(n.strings, json_object_get(l, "writes"));
        collect_strings(n.strings, json_object_get(l, "store"));
    }
    return n;
}

static void names_free(Names *n)
{
    json_t **all[] = {&n->lifelines, &n->kinds,   &n->channels, &n->tags,   &n->actions,
                      &n->vars,      &n->members, &n->msgs,     &n->strings};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) json_decref(*all[i]);
}

/* A position inside a line: the keys and indexes from the line down. */
typedef struct Step {
    const char *key; /* NULL: index */
    size_t idx;
} Step;

typedef struct Gen {
    Case *c;
    Names *names;
    size_t line;
    Step path[32];
    int depth;
} Gen;

static const char *path_text(const Gen *g, char *buf, size_t n)
{
    size_t o = (size_t)snprintf(buf, n, "line %zu", g->line + 1);
    for (int i = 0; i < g->depth && o < n; i++)
        o += g->path[i].key ? (size_t)snprintf(buf + o, n - o, ".%s", g->path[i].key)
                            : (size_t)snprintf(buf + o, n - o, "[%zu]", g->path[i].idx);
    return buf;
}

/* A mutant to be: the original's lines, shared (own() before a change). */
static json_t *copy_orig(const Case *c)
{
    json_t *m = json_array();
    for (size_t i = 0; i < json_array_size(c->orig); i++)
        json_array_append(m, json_array_get(c->orig, i));
    return m;
}

/* Line i of mutant m made its own copy, to be changed. */
static json_t *own(json_t *m, size_t i)
{
    json_t *l = json_deep_copy(json_array_get(m, i));
    json_array_set_new(m, i, l);
    return l;
}

/* The mutant with the slot at g's path edited: the parent container and
 * the step are handed to edit. */
typedef void EditFn(json_t *parent, const Step *st, void *arg);

static void emit_edit(Gen *g, EditFn *edit, void *arg, const char *op)
{
    json_t *mut = copy_orig(g->c);
    json_t *cur = own(mut, g->line);
    for (int i = 0; i < g->depth - 1; i++)
        cur = g->path[i].key ? json_object_get(cur, g->path[i].key)
                             : json_array_get(cur, g->path[i].idx);
    edit(cur, &g->path[g->depth - 1], arg);
    char where[512];
    char *what = fmt("%s: %s", path_text(g, where, sizeof where), op);
    try_mutant(g->c, mut, what);
    free(what);
}

static void ed_set(json_t *parent, const Step *st, void *arg)
{
    json_t *v = json_deep_copy(arg);
    if (st->key)
        json_object_set_new(parent, st->key, v);
    else
        json_array_set_new(parent, st->idx, v);
}

static void ed_del(json_t *parent, const Step *st, void *arg)
{
    (void)arg;
    if (st->key)
        json_object_del(parent, st->key);
    else
        json_array_remove(parent, st->idx);
}

static void ed_dup(json_t *parent, const Step *st, void *arg)
{
    (void)arg;
    json_array_insert_new(parent, st->idx + 1, json_deep_copy(json_array_get(parent, st->idx)));
}

/* arg: the new key */
static void ed_rename(json_t *parent, const Step *st, void *arg)
{
    json_t *v = json_incref(json_object_get(parent, st->key));
    json_object_del(parent, st->key);
    json_object_set_new(parent, json_string_value(arg), v);
}

/* arg: a key to add beside this one, with a copy of this value */
static void ed_addkey(json_t *parent, const Step *st, void *arg)
{
    json_t *v = st->key ? json_object_get(parent, st->key) : json_array_get(parent, st->idx);
    json_object_set_new(parent, json_string_value(arg), json_deep_copy(v));
}

/* swap with the next element, or with the key named by arg */
static void ed_swap(json_t *parent, const Step *st, void *arg)
{
    if (!st->key) {
        json_t *a = json_incref(json_array_get(parent, st->idx));
        json_t *b = json_incref(json_array_get(parent, st->idx + 1));
        json_array_set_new(parent, st->idx, b);
        json_array_set_new(parent, st->idx + 1, a);
        return;
    }
    const char *other = json_string_value(arg);
    json_t *a = json_incref(json_object_get(parent, st->key));
    json_t *b = json_incref(json_object_get(parent, other));
    json_object_set_new(parent, st->key, b);
    json_object_set_new(parent, other, a);
}

static void set_to(Gen *g, json_t *v, const char *op)
{
    emit_edit(g, ed_set, v, op);
    json_decref(v);
}

/* The category of the value at g's path: the nearest key. */
static const char *category(const Gen *g)
{
    for (int i = g->depth - 1; i >= 0; i--)
        if (g->path[i].key) return g->path[i].key;
    return "";
}

static void other_names(Gen *g, const json_t *set, const char *cur, const char *what, int most)
{
    size_t i;
    json_t *s;
    int n = 0;
    json_array_foreach(set, i, s)
    {
        if (n >= most) break;
        if (cur && !strcmp(json_string_value(s), cur)) continue;
        char *op = fmt("%s -> %s \"%s\"", cur ? cur : "value", what, json_string_value(s));
        set_to(g, json_incref(s), op);
        free(op);
        n++;
    }
}

static void mutate_string(Gen *g, const char *s)
{
    const char *cat = category(g);
    const Names *n = g->names;
    if (!strcmp(cat, "lifeline") || !strcmp(cat, "to") || !strcmp(cat, "from"))
        other_names(g, n->lifelines, s, "lifeline", 8);
    else if (!strcmp(cat, "kind"))
        other_names(g, n->kinds, s, "kind", 8);
    else if (!strcmp(cat, "channel"))
        other_names(g, n->channels, s, "channel", 6);
    else if (!strcmp(cat, "construct") || !strcmp(cat, "control"))
        other_names(g, n->tags, s, "tag", 6);
    else if (!strcmp(cat, "action"))
        other_names(g, n->actions, s, "action", 8);
    else if (!strcmp(cat, "msg"))
        other_names(g, n->msgs, s, "message id", 6);
    else {
        /* a value: enum members and other strings of the run */
        other_names(g, n->members, s, "member", 6);
        other_names(g, n->strings, s, "string", 4);
    }
    size_t len = strlen(s);
    char *t = fmt("%sx", s);
    set_to(g, json_string(t), "string + \"x\"");
    free(t);
    if (len) set_to(g, json_string(""), "string -> \"\"");
    if (len > 1) {
        t = xstrdup(s);
        t[len - 1] = 0;
        set_to(g, json_string(t), "string without its last byte");
        free(t);
    }
    t = xstrdup(s);
    for (char *p = t; *p; p++)
        if (*p >= 'a' && *p <= 'z') {
            *p = (char)(*p - 'a' + 'A');
            break;
        } else if (*p >= 'A' && *p <= 'Z') {
            *p = (char)(*p - 'A' + 'a');
            break;
        }
    if (strcmp(t, s)) set_to(g, json_string(t), "string with a letter's case changed");
    free(t);
    /* a message id: its number off by one */
    const char *hash = strrchr(s, '#');
    if (hash && hash[1]) {
        long k = strtol(hash + 1, NULL, 10);
        for (int d = -1; d <= 1; d += 2) {
            t = fmt("%.*s#%ld", (int)(hash - s), s, k + d);
            set_to(g, json_string(t), d < 0 ? "number - 1" : "number + 1");
            free(t);
        }
    }
    /* another type */
    set_to(g, json_integer((json_int_t)len), "string -> int");
    set_to(g, json_null(), "string -> null");
    set_to(g, json_pack("[s]", s), "string -> array");
}

static void mutate_value(Gen *g, json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_INTEGER: {
        json_int_t n = json_integer_value(v);
        set_to(g, json_integer(n + 1), "int + 1");
        set_to(g, json_integer(n - 1), "int - 1");
        if (n) set_to(g, json_integer(0), "int -> 0");
        if (n && n != INT64_MIN) set_to(g, json_integer(-n), "int negated");
        set_to(g, json_integer(n > 1000000 ? n / 2 : n + 1000), "int + 1000");
        set_to(g, json_integer(INT64_MAX), "int -> max");
        set_to(g, json_real((double)n), "int -> float");
        char *s = fmt("%" JSON_INTEGER_FORMAT, n);
        set_to(g, json_string(s), "int -> string");
        free(s);
        set_to(g, json_boolean(n != 0), "int -> bool");
        set_to(g, json_null(), "int -> null");
        break;
    }
    case JSON_REAL: {
        double f = json_real_value(v);
        set_to(g, json_real(f + 1.0), "float + 1");
        set_to(g, json_real(f - 0.5), "float - 0.5");
        if (f != 0) set_to(g, json_real(-f), "float negated");
        if (f != 0) set_to(g, json_real(0.0), "float -> 0.0");
        set_to(g, json_real(nextafter(f, INFINITY)), "float + 1 ulp");
        if (fabs(f) < 9e18) set_to(g, json_integer((json_int_t)f), "float -> int");
        char *s = fmt("%g", f);
        set_to(g, json_string(s), "float -> string");
        free(s);
        set_to(g, json_null(), "float -> null");
        break;
    }
    case JSON_TRUE:
    case JSON_FALSE:
        set_to(g, json_boolean(!json_is_true(v)), "bool flipped");
        set_to(g, json_integer(json_is_true(v)), "bool -> int");
        set_to(g, json_string(json_is_true(v) ? "true" : "false"), "bool -> string");
        set_to(g, json_null(), "bool -> null");
        break;
    case JSON_STRING: mutate_string(g, json_string_value(v)); break;
    case JSON_NULL:
        set_to(g, json_integer(0), "null -> 0");
        set_to(g, json_string(""), "null -> \"\"");
        set_to(g, json_false(), "null -> false");
        set_to(g, json_object(), "null -> {}");
        break;
    case JSON_OBJECT:
        set_to(g, json_array(), "object -> array");
        set_to(g, json_null(), "object -> null");
        set_to(g, json_string(""), "object -> string");
        break;
    case JSON_ARRAY:
        set_to(g, json_object(), "array -> object");
        set_to(g, json_null(), "array -> null");
        if (json_array_size(v)) set_to(g, json_deep_copy(json_array_get(v, 0)), "array unwrapped");
        break;
    }
}

/* Keys an object at this place may have instead of or beside key. */
static const json_t *key_names(const Gen *g)
{
    const char *cat = g->depth >= 2 ? g->path[g->depth - 2].key : NULL;
    if (!cat) return NULL;
    if (!strcmp(cat, "writes") || !strcmp(cat, "store")) return g->names->vars;
    if (!strcmp(cat, "vc")) return g->names->lifelines;
    return NULL;
}

/* Every mutation of the value v at g's path, then of its parts. */
static void walk(Gen *g, json_t *v)
{
    if (g->depth > 0) {
        mutate_value(g, v);
        emit_edit(g, ed_del, NULL, "deleted");
        Step *st = &g->path[g->depth - 1];
        json_t *parent = json_array_get(g->c->orig, g->line);
        for (int i = 0; i < g->depth - 1; i++)
            parent = g->path[i].key ? json_object_get(parent, g->path[i].key)
                                    : json_array_get(parent, g->path[i].idx);
        if (!st->key) {
            emit_edit(g, ed_dup, NULL, "duplicated");
            if (st->idx + 1 < json_array_size(parent))
                emit_edit(g, ed_swap, NULL, "swapped with the next element");
        } else {
            const json_t *alt = key_names(g);
            int n = 0;
            for (size_t i = 0; alt && i < json_array_size(alt) && n < 6; i++) {
                json_t *ks = json_array_get(alt, i);
                const char *k = json_string_value(ks);
                if (!strcmp(k, st->key)) continue;
                n++;
                char *op;
                if (json_object_get(parent, k)) {
                    op = fmt("value swapped with \"%s\"'s", k);
                    emit_edit(g, ed_swap, ks, op);
                } else {
                    op = fmt("key renamed to \"%s\"", k);
                    emit_edit(g, ed_rename, ks, op);
                    free(op);
                    op = fmt("copied to a new key \"%s\"", k);
                    emit_edit(g, ed_addkey, ks, op);
                }
                free(op);
            }
            /* swapped with the next key of the object */
            bool next = false;
            const char *k;
            json_t *x;
            json_object_foreach(parent, k, x)
            {
                if (next) {
                    json_t *ks = json_string(k);
                    char *op = fmt("value swapped with \"%s\"'s", k);
                    emit_edit(g, ed_swap, ks, op);
                    free(op);
                    json_decref(ks);
                    break;
                }
                next = !strcmp(k, st->key);
            }
        }
    }
    if (g->depth >= 31) return;
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach(v, k, x)
        {
            g->path[g->depth++] = (Step){k, 0};
            walk(g, x);
            g->depth--;
        }
        if (g->depth == 0) {
            json_t *ks = json_string("extra");
            g->path[g->depth++] = (Step){"kind", 0};
            emit_edit(g, ed_addkey, ks, "an unknown field added");
            g->depth--;
            json_decref(ks);
        }
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            g->path[g->depth++] = (Step){NULL, i};
            walk(g, json_array_get(v, i));
            g->depth--;
        }
    }
}

/* ---- structural ------------------------------------------------------------ */

static void structural(Case *c)
{
    size_t n = json_array_size(c->orig);
    char *what;
    for (size_t i = 0; i < n; i++) {
        json_t *m = copy_orig(c);
        json_array_remove(m, i);
        what = fmt("line %zu dropped", i + 1);
        try_mutant(c, m, what);
        free(what);
        m = copy_orig(c);
        json_array_insert_new(m, i + 1, json_deep_copy(json_array_get(m, i)));
        what = fmt("line %zu duplicated", i + 1);
        try_mutant(c, m, what);
        free(what);
        if (i + 1 < n) {
            m = copy_orig(c);
            json_t *a = json_incref(json_array_get(m, i));
            json_array_remove(m, i);
            json_array_insert_new(m, i + 1, a);
            what = fmt("lines %zu and %zu swapped", i + 1, i + 2);
            try_mutant(c, m, what);
            free(what);
        }
        /* moved elsewhere */
        size_t j = (size_t)(rnd() % n);
        if (j != i) {
            m = copy_orig(c);
            json_t *a = json_incref(json_array_get(m, i));
            json_array_remove(m, i);
            json_array_insert_new(m, j, a);
            what = fmt("line %zu moved to %zu", i + 1, j + 1);
            try_mutant(c, m, what);
            free(what);
        }
        /* the run stopped after this line: the later lines dropped, the
         * end an error */
        if (i + 2 < n) {
            m = copy_orig(c);
            while (json_array_size(m) > i + 1) json_array_remove(m, i + 1);
            json_array_append_new(m, json_pack("{s:s,s:s}", "kind", "end", "error", "stopped"));
            what = fmt("the run cut after line %zu", i + 1);
            try_mutant(c, m, what);
            free(what);
        }
    }
    /* the end lines: an error instead of the result */
    for (size_t i = 0; i < n; i++) {
        json_t *l = json_array_get(c->orig, i);
        if (!is_kind(l, "end") || !json_object_get(l, "result")) continue;
        json_t *m = copy_orig(c);
        json_array_set_new(m, i, json_pack("{s:s,s:s}", "kind", "end", "error", "stopped"));
        what = fmt("end line %zu: an error instead of the result", i + 1);
        try_mutant(c, m, what);
        free(what);
    }
    /* messages: dropped, duplicated, values swapped; decisions flipped with
     * their broadcasts; events dropped or swapped with the numbering kept */
    for (size_t i = 0; i < n; i++) {
        json_t *s = json_array_get(c->orig, i);
        const char *life = str_of(s, "lifeline");
        if (is_kind(s, "send")) {
            const char *id = str_of(s, "msg");
            size_t r = n;
            for (size_t k = 0; k < n; k++)
                if (k != i && is_kind(json_array_get(c->orig, k), "recv") && id &&
                    !strcmp(str_of(json_array_get(c->orig, k), "msg"), id))
                    r = k;
            if (r == n) continue;
            json_t *m = copy_orig(c);
            json_array_remove(m, i > r ? i : r);
            json_array_remove(m, i > r ? r : i);
            what = fmt("message %s dropped (lines %zu, %zu)", id, i + 1, r + 1);
            try_mutant(c, m, what);
            free(what);
            m = copy_orig(c);
            size_t hi = i > r ? i : r, lo = i > r ? r : i;
            json_array_insert_new(m, hi + 1, json_deep_copy(json_array_get(m, hi)));
            json_array_insert_new(m, lo + 1, json_deep_copy(json_array_get(m, lo)));
            what = fmt("message %s duplicated", id);
            try_mutant(c, m, what);
            free(what);
            /* values swapped with the next message on the same channel */
            for (size_t k = i + 1; k < n; k++) {
                json_t *s2 = json_array_get(c->orig, k);
                if (!is_kind(s2, "send") || strcmp(str_of(s2, "lifeline"), life) ||
                    strcmp(str_of(s2, "to"), str_of(s, "to")) ||
                    json_equal(json_object_get(s2, "values"), json_object_get(s, "values")))
                    continue;
                const char *id2 = str_of(s2, "msg");
                m = copy_orig(c);
                for (size_t idx = 0; idx < json_array_size(m); idx++) {
                    const char *lid = str_of(json_array_get(m, idx), "msg");
                    if (!lid) continue;
                    json_t *other = NULL;
                    if (!strcmp(lid, id)) other = s2;
                    if (!strcmp(lid, id2)) other = s;
                    if (other)
                        json_object_set_new(own(m, idx), "values",
                                            json_deep_copy(json_object_get(other, "values")));
                }
                what = fmt("messages %s and %s: values swapped", id, id2);
                try_mutant(c, m, what);
                free(what);
                break;
            }
        }
        if (is_kind(s, "choice")) {
            /* the decision and the control messages carrying it */
            json_t *m = copy_orig(c);
            bool v = json_is_true(json_object_get(s, "value"));
            json_object_set_new(own(m, i), "value", json_boolean(!v));
            int64_t at = json_integer_value(json_object_get(s, "index"));
            for (size_t idx = 0; idx < json_array_size(m); idx++) {
                json_t *l = json_array_get(m, idx);
                const char *ctl = str_of(l, "control");
                if (!ctl || strcmp(ctl, str_of(s, "construct"))) continue;
                /* the broadcasts right after this choice: from its owner,
                 * and their receives */
                const char *from = is_kind(l, "send") ? str_of(l, "lifeline") : str_of(l, "from");
                if (!from || strcmp(from, life)) continue;
                json_t *send = l;
                if (is_kind(l, "recv"))
                    for (size_t k = 0; k < n; k++) {
                        json_t *x = json_array_get(c->orig, k);
                        if (is_kind(x, "send") && !strcmp(str_of(x, "msg"), str_of(l, "msg")))
                            send = x;
                    }
                int64_t si = json_integer_value(json_object_get(send, "index"));
                if (si <= at || si > at + c->nl) continue;
                json_array_set_new(json_object_get(own(m, idx), "values"), 0, json_boolean(!v));
            }
            what = fmt("choice on line %zu flipped with its broadcasts", i + 1);
            try_mutant(c, m, what);
            free(what);
        }
        if (json_object_get(s, "index") && life) {
            /* dropped, the later events of its lifeline renumbered */
            int64_t at = json_integer_value(json_object_get(s, "index"));
            json_t *m = copy_orig(c);
            json_array_remove(m, i);
            for (size_t idx = 0; idx < json_array_size(m); idx++) {
                json_t *l = json_array_get(m, idx);
                const char *ll = str_of(l, "lifeline");
                json_t *ix = json_object_get(l, "index");
                if (ll && ix && !strcmp(ll, life) && json_integer_value(ix) > at)
                    json_object_set_new(own(m, idx), "index",
                                        json_integer(json_integer_value(ix) - 1));
            }
            what = fmt("event on line %zu dropped, its lifeline renumbered", i + 1);
            try_mutant(c, m, what);
            free(what);
            /* swapped with the lifeline's next event, indexes kept in place */
            for (size_t k = i + 1; k < n; k++) {
                json_t *x = json_array_get(c->orig, k);
                if (!json_object_get(x, "index") || strcmp(str_of(x, "lifeline"), life)) continue;
                m = copy_orig(c);
                json_t *a = json_deep_copy(s), *b = json_deep_copy(x);
                json_object_set(a, "index", json_object_get(x, "index"));
                json_object_set(b, "index", json_object_get(s, "index"));
                json_array_set_new(m, i, b);
                json_array_set_new(m, k, a);
                what = fmt("events on lines %zu and %zu swapped, renumbered", i + 1, k + 1);
                try_mutant(c, m, what);
                free(what);
                break;
            }
        }
    }
}

void mutate_case(Case *c)
{
    Names names = names_of(c);
    Gen g = {.c = c, .names = &names};
    for (size_t i = 0; i < json_array_size(c->orig); i++) {
        g.line = i;
        g.depth = 0;
        walk(&g, json_array_get(c->orig, i));
    }
    structural(c);
    names_free(&names);
}
