/* models.c — model backends for `llm` actions, and answer scripts.
 *
 * Backends in this version:
 *
 *   mock               deterministic answers (see mock_value below)
 *   scripted:FILE      answers read from a JSON file
 *
 * Answer scripts are JSON objects keyed by `Lifeline.action` or `action`
 * (the more specific key wins).  A key maps to one answer object, reused
 * at every call, or to a list of answer objects consumed in call order;
 * running past the end of a list is an error.  An answer object maps the
 * action's output names (`value` for an unnamed output) to values.  The
 * same format serves the `--answers FILE` of human actions (actions.c).
 *
 * Each file is read once per run and cached until zri_actions_shutdown.
 * Lifelines run concurrently: taking an answer is serialised by one mutex,
 * so the answers of a key shared by several lifelines go out in the order
 * the calls arrive, which depends on scheduling.  Keys of the form
 * `Lifeline.action` are consumed by one lifeline only and give
 * deterministic runs.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "rt.h"

/* ---- answer scripts -------------------------------------------------- */

typedef struct zri_cursor {
    char *key;
    size_t next; /* index of the next answer of a list */
    struct zri_cursor *link;
} zri_cursor;

typedef struct zri_script {
    char *what; /* role of the file in messages ("scripted model", …) */
    char *path;
    json_t *root;
    zri_cursor *cursors;
    struct zri_script *link;
} zri_script;

static pthread_mutex_t script_mu = PTHREAD_MUTEX_INITIALIZER;
static zri_script *scripts;

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* Reads and checks a script file.  Called with script_mu held. */
static int script_load(const char *path, const char *what, json_t **out, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot read `%s`: %s", what, path, strerror(errno));
        return -1;
    }
    json_error_t je;
    json_t *root = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
    fclose(f);
    if (!root) {
        snprintf(err, errlen, "%s: `%s` is not valid JSON (line %d, column %d): %s", what, path,
                 je.line, je.column, je.text);
        return -1;
    }
    if (!json_is_object(root)) {
        json_decref(root);
        snprintf(err, errlen,
                 "%s: `%s` must hold a JSON object keyed by `Lifeline.action` or `action`", what,
                 path);
        return -1;
    }
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v)
    {
        int ok = json_is_object(v);
        if (json_is_array(v)) {
            ok = 1;
            size_t i;
            json_t *e;
            json_array_foreach(v, i, e)
            {
                if (!json_is_object(e)) {
                    snprintf(err, errlen,
                             "%s: `%s`: answer %zu for %s is not a JSON object (an answer maps "
                             "output names to values)",
                             what, path, i + 1, key);
                    json_decref(root);
                    return -1;
                }
            }
        }
        if (!ok) {
            snprintf(err, errlen,
                     "%s: `%s`: the value of %s must be an answer object or a list of them", what,
                     path, key);
            json_decref(root);
            return -1;
        }
    }
    *out = root;
    return 0;
}

/* The cached script for (what, path), loading it on first use.  Called
 * with script_mu held. */
static zri_script *script_get(const char *path, const char *what, char *err, size_t errlen)
{
    for (zri_script *s = scripts; s; s = s->link)
        if (strcmp(s->path, path) == 0 && strcmp(s->what, what) == 0)
            return s;
    json_t *root;
    if (script_load(path, what, &root, err, errlen) < 0)
        return NULL;
    zri_script *s = calloc(1, sizeof *s);
    if (s) {
        s->path = dup_str(path);
        s->what = dup_str(what);
    }
    if (!s || !s->path || !s->what) {
        if (s) {
            free(s->path);
            free(s->what);
        }
        free(s);
        json_decref(root);
        snprintf(err, errlen, "%s: out of memory", what);
        return NULL;
    }
    s->root = root;
    s->link = scripts;
    scripts = s;
    return s;
}

static zri_cursor *cursor_get(zri_script *s, const char *key)
{
    for (zri_cursor *c = s->cursors; c; c = c->link)
        if (strcmp(c->key, key) == 0)
            return c;
    zri_cursor *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->key = dup_str(key);
    if (!c->key) {
        free(c);
        return NULL;
    }
    c->link = s->cursors;
    s->cursors = c;
    return c;
}

int zri_script_next(const char *path, const char *what, const char *lifeline, const char *action,
                    void **answer, int *index, char *err, size_t errlen)
{
    *answer = NULL;
    *index = 0;
    size_t n = strlen(lifeline) + strlen(action) + 2;
    char *full = malloc(n);
    if (!full) {
        snprintf(err, errlen, "%s: out of memory", what);
        return ZRI_MODEL_CONFIG;
    }
    snprintf(full, n, "%s.%s", lifeline, action);

    int rc = ZRI_MODEL_OK;
    pthread_mutex_lock(&script_mu);
    zri_script *s = script_get(path, what, err, errlen);
    if (!s) {
        rc = ZRI_MODEL_CONFIG;
        goto out;
    }
    const char *key = full;
    json_t *v = json_object_get(s->root, full);
    if (!v) {
        key = action;
        v = json_object_get(s->root, action);
    }
    if (!v) {
        rc = -1;
        goto out;
    }
    if (json_is_object(v)) {
        *answer = v;
        goto out;
    }
    zri_cursor *c = cursor_get(s, key);
    if (!c) {
        snprintf(err, errlen, "%s: out of memory", what);
        rc = ZRI_MODEL_CONFIG;
        goto out;
    }
    size_t total = json_array_size(v);
    if (c->next >= total) {
        snprintf(err, errlen, "%s: no answer left for %s (%zu given)", what, key, total);
        rc = ZRI_MODEL_FAILED;
        goto out;
    }
    *answer = json_array_get(v, c->next);
    c->next++;
    *index = (int)c->next;
out:
    pthread_mutex_unlock(&script_mu);
    free(full);
    return rc;
}

static void script_free_all(void)
{
    pthread_mutex_lock(&script_mu);
    zri_script *s = scripts;
    scripts = NULL;
    pthread_mutex_unlock(&script_mu);
    while (s) {
        zri_script *next = s->link;
        zri_cursor *c = s->cursors;
        while (c) {
            zri_cursor *cn = c->link;
            free(c->key);
            free(c);
            c = cn;
        }
        json_decref(s->root);
        free(s->path);
        free(s->what);
        free(s);
        s = next;
    }
}

void zri_models_shutdown(void)
{
    script_free_all();
}

/* ---- typing answers ---------------------------------------------------- */

/* The answer key of output k. */
static void output_key(const zgrt_action *a, int k, char *buf, size_t n)
{
    if (a->result_names && a->result_names[k])
        snprintf(buf, n, "%s", a->result_names[k]);
    else if (a->nresults == 1)
        snprintf(buf, n, "value");
    else
        snprintf(buf, n, "value%d", k + 1);
}

/* Appends `text` to buf (NUL-terminated, size n), truncating. */
static void append(char *buf, size_t n, const char *text)
{
    size_t used = strlen(buf);
    if (used + 1 < n)
        snprintf(buf + used, n - used, "%s", text);
}

static int value_matches(zgrt_type t, const zgrt_value *v)
{
    if (v->tag != t.tag)
        return 0;
    if (t.tag == ZGRT_ENUM && (int32_t)((uint64_t)v->u.i >> 32) != t.enum_id)
        return 0;
    if (t.tag == ZGRT_FLOAT && !isfinite(v->u.f))
        return 0;
    return 1;
}

int zri_answer_values(zri_action_env *env, const zgrt_action *a, void *answer, int enum_numbers,
                      zgrt_value *outs, char *err, size_t errlen)
{
    const zgrt_program *p = env->prog;
    json_t *obj = answer;
    if (!json_is_object(obj)) {
        snprintf(err, errlen, "the answer is not a JSON object");
        return -1;
    }
    char key[256], list[512];

    /* missing keys, then unexpected ones: all of them in one message */
    list[0] = 0;
    int nmissing = 0;
    for (int k = 0; k < a->nresults; k++) {
        output_key(a, k, key, sizeof key);
        if (!json_object_get(obj, key)) {
            append(list, sizeof list, nmissing++ ? ", `" : "`");
            append(list, sizeof list, key);
            append(list, sizeof list, "`");
        }
    }
    if (nmissing) {
        snprintf(err, errlen, "missing %s %s", nmissing > 1 ? "keys" : "key", list);
        return -1;
    }
    int nextra = 0;
    const char *jkey;
    json_t *jv;
    json_object_foreach(obj, jkey, jv)
    {
        int known = 0;
        for (int k = 0; k < a->nresults && !known; k++) {
            output_key(a, k, key, sizeof key);
            known = strcmp(key, jkey) == 0;
        }
        if (!known) {
            append(list, sizeof list, nextra++ ? ", `" : "`");
            append(list, sizeof list, jkey);
            append(list, sizeof list, "`");
        }
    }
    if (nextra) {
        snprintf(err, errlen, "unexpected %s %s (outputs of %s: ", nextra > 1 ? "keys" : "key",
                 list, a->name);
        for (int k = 0; k < a->nresults; k++) {
            output_key(a, k, key, sizeof key);
            append(err, errlen, k ? ", `" : "`");
            append(err, errlen, key);
            append(err, errlen, "`");
        }
        append(err, errlen, a->nresults ? ")" : "none)");
        return -1;
    }

    for (int k = 0; k < a->nresults; k++) {
        zgrt_type t = a->result_types[k];
        output_key(a, k, key, sizeof key);
        json_t *v = json_object_get(obj, key);
        if (t.tag == ZGRT_ENUM && enum_numbers && json_is_integer(v) && t.enum_id >= 0 &&
            t.enum_id < p->nenums) {
            json_int_t n = json_integer_value(v);
            if (n < 1 || n > p->enums[t.enum_id].nmembers) {
                snprintf(err, errlen, "`%s`: %" JSON_INTEGER_FORMAT " is not a member number of %s (1..%d)",
                         key, n, p->enums[t.enum_id].name, (int)p->enums[t.enum_id].nmembers);
                return -1;
            }
            outs[k].tag = ZGRT_ENUM;
            outs[k].u.i = (int64_t)(((uint64_t)(uint32_t)t.enum_id << 32) | (uint64_t)(n - 1));
            continue;
        }
        char why[256] = "";
        if (zri_value_from_jansson(p, env->heap, v, t, &outs[k], why, sizeof why) < 0) {
            if (why[0])
                snprintf(err, errlen, "`%s`: %s", key, why);
            else
                snprintf(err, errlen, "`%s`: expected %s", key, zri_type_name(p, t));
            return -1;
        }
        if (!value_matches(t, &outs[k])) {
            snprintf(err, errlen, "`%s`: expected %s", key, zri_type_name(p, t));
            return -1;
        }
    }
    return 0;
}

/* ---- mock ---------------------------------------------------------------- */

/* splitmix64's output function: a fixed bijective mixer. */
static uint64_t mix64(uint64_t x)
{
    x += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

/* A pseudo-random word for output k of the current call: a function of the
 * seed, the lifeline, the call's position among the lifeline's action calls
 * and the output index only, so it does not depend on thread scheduling. */
static uint64_t mock_word(const zri_action_env *env, int k)
{
    uint64_t seed = env->opts ? env->opts->seed : 0;
    uint64_t x = mix64(seed);
    x = mix64(x ^ (uint64_t)(uint32_t)env->lifeline);
    x = mix64(x ^ env->call_index);
    return mix64(x ^ (uint64_t)(uint32_t)k);
}

/* The mock answer for output k:
 *   str    "[<action>:<output>]", or "[<action>]" for an unnamed output
 *   bool   pseudo-random
 *   int    pseudo-random in 0..10
 *   float  pseudo-random in 0.0..10.0 with one decimal (n / 10, n in 0..100)
 *   json   {}
 *   enum   its first member */
static int mock_value(zri_action_env *env, const zgrt_action *a, int k, zgrt_value *out, char *err,
                      size_t errlen)
{
    zgrt_type t = a->result_types[k];
    uint64_t w = mock_word(env, k);
    memset(out, 0, sizeof *out);
    out->tag = t.tag;
    switch (t.tag) {
    case ZGRT_STR: {
        const char *name = a->result_names ? a->result_names[k] : NULL;
        size_t n = strlen(a->name) + (name ? strlen(name) + 1 : 0) + 3;
        char *s = malloc(n);
        if (!s) {
            snprintf(err, errlen, "mock model: out of memory");
            return -1;
        }
        if (name)
            snprintf(s, n, "[%s:%s]", a->name, name);
        else
            snprintf(s, n, "[%s]", a->name);
        out->u.s = zri_str(env->heap, s, strlen(s));
        free(s);
        if (!out->u.s) {
            snprintf(err, errlen, "mock model: out of memory");
            return -1;
        }
        return 0;
    }
    case ZGRT_BOOL: out->u.i = (int64_t)(w >> 63); return 0;
    case ZGRT_INT: out->u.i = (int64_t)(w % 11); return 0;
    case ZGRT_FLOAT: out->u.f = (double)(w % 101) / 10.0; return 0;
    case ZGRT_ENUM:
        if (t.enum_id < 0 || t.enum_id >= env->prog->nenums ||
            env->prog->enums[t.enum_id].nmembers < 1) {
            snprintf(err, errlen, "mock model: output %d of %s has a bad enum type", k, a->name);
            return -1;
        }
        out->u.i = (int64_t)((uint64_t)(uint32_t)t.enum_id << 32);
        return 0;
    case ZGRT_JSON: {
        json_t *o = json_object();
        char why[256] = "";
        int rc = o ? zri_value_from_jansson(env->prog, env->heap, o, t, out, why, sizeof why) : -1;
        json_decref(o);
        if (rc < 0) {
            snprintf(err, errlen, "mock model: %s", o ? why : "out of memory");
            return -1;
        }
        return 0;
    }
    default:
        snprintf(err, errlen, "mock model: output %d of %s has an unknown type", k, a->name);
        return -1;
    }
}

/* ---- backends ---------------------------------------------------------- */

#define AVAILABLE "(available: mock, scripted:FILE)"

static int scripted_call(zri_action_env *env, const zgrt_action *a, const char *path,
                         zgrt_value *outs, char *err, size_t errlen)
{
    static const char what[] = "scripted model";
    const char *lifeline = env->prog->lifelines[env->lifeline];
    void *answer;
    int index;
    int rc = zri_script_next(path, what, lifeline, a->name, &answer, &index, err, errlen);
    if (rc < 0) {
        snprintf(err, errlen, "%s: `%s` has no answer for %s.%s (no key `%s.%s` or `%s`)", what,
                 path, lifeline, a->name, lifeline, a->name, a->name);
        return ZRI_MODEL_CONFIG;
    }
    if (rc != ZRI_MODEL_OK)
        return rc;
    char why[512];
    if (zri_answer_values(env, a, answer, 0, outs, why, sizeof why) < 0) {
        if (index > 0) {
            snprintf(err, errlen, "%s: answer %d for %s.%s: %s", what, index, lifeline, a->name,
                     why);
            return ZRI_MODEL_INVALID;
        }
        /* a single answer reused at every call: retrying cannot help */
        snprintf(err, errlen, "%s: the answer for %s.%s: %s", what, lifeline, a->name, why);
        return ZRI_MODEL_FAILED;
    }
    return ZRI_MODEL_OK;
}

/* spec == name, or spec starts with "name:" */
static int spec_is(const char *spec, const char *name)
{
    size_t n = strlen(name);
    return strncmp(spec, name, n) == 0 && (spec[n] == 0 || spec[n] == ':');
}

int zri_model_call(zri_action_env *env, const zgrt_action *a, const char *spec, const char *system,
                   const char *user, zgrt_value *outs, char *err, size_t errlen)
{
    (void)system; /* the prompts are for real models; mock and scripted answer without them */
    (void)user;
    if (strcmp(spec, "mock") == 0) {
        for (int k = 0; k < a->nresults; k++)
            if (mock_value(env, a, k, &outs[k], err, errlen) < 0)
                return ZRI_MODEL_CONFIG;
        return ZRI_MODEL_OK;
    }
    if (spec_is(spec, "scripted")) {
        if (spec[8] != ':' || spec[9] == 0) {
            snprintf(err, errlen, "model spec `%s` needs a file: scripted:FILE.json", spec);
            return ZRI_MODEL_CONFIG;
        }
        return scripted_call(env, a, spec + 9, outs, err, errlen);
    }
    static const char *const planned[] = {"openai", "ollama"};
    for (size_t i = 0; i < sizeof planned / sizeof planned[0]; i++) {
        if (spec_is(spec, planned[i])) {
            snprintf(err, errlen, "model backend `%s` is not available in this build " AVAILABLE,
                     planned[i]);
            return ZRI_MODEL_CONFIG;
        }
    }
    snprintf(err, errlen, "unknown model spec `%s` " AVAILABLE, spec);
    return ZRI_MODEL_CONFIG;
}
