/* models.c — model backends for `llm` actions, and answer scripts.
 *
 * Backends:
 *
 *   mock               deterministic answers (see mock_value below)
 *   scripted:FILE      answers read from a JSON file
 *   openai[:MODEL]     an OpenAI-compatible chat completions server:
 *                      $OPENAI_BASE_URL (default https://api.openai.com/v1)
 *                      + /chat/completions, key $OPENAI_API_KEY
 *   ollama[:MODEL]     Ollama's OpenAI-compatible endpoint: $OLLAMA_HOST
 *                      (default http://127.0.0.1:11434) + /v1/chat/completions
 *
 * The network backends (see "OpenAI-compatible servers" below) send the
 * filled prompts, plus one line saying what form the answer must take, and
 * parse the answer's text by the action's `parse`.  One call is one
 * attempt; the retry policy is in actions.c.  The API key is only ever put
 * in the Authorization header (http.c) and is replaced by [redacted]
 * wherever it would appear in a message.
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
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "agent.h"
#include "suggest.h"

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

/* Per-process state: the answer scripts read so far, with their cursors.
 * They are the agent side's memory across the calls of one run (an
 * action call gets an environment, not the run), shared by the lifelines
 * (hence the lock); zgrt_main empties the cache at the end of every run
 * (zri_actions_shutdown), so a later run reads its files afresh. */
static pthread_mutex_t script_mu = PTHREAD_MUTEX_INITIALIZER;
static zri_script *scripts;

/* Reads and checks a script file.  Called with script_mu held. */
static int script_load(const char *path, const char *what, json_t **out, char *err, size_t errlen)
{
    /* only regular files: a FIFO would block the run, a device never ends
     * (O_NONBLOCK keeps open() from waiting for a FIFO's writer) */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    const char *why = fd < 0                 ? strerror(errno)
                      : fstat(fd, &st) != 0  ? strerror(errno)
                      : S_ISDIR(st.st_mode)  ? strerror(EISDIR)
                      : !S_ISREG(st.st_mode) ? "not a regular file"
                                             : NULL;
    FILE *f = why ? NULL : fdopen(fd, "rb");
    if (!f) {
        if (!why) why = strerror(errno);
        if (fd >= 0) close(fd);
        snprintf(err, errlen, "%s: cannot read `%s`: %s", what, path, why);
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
        if (strcmp(s->path, path) == 0 && strcmp(s->what, what) == 0) return s;
    json_t *root;
    if (script_load(path, what, &root, err, errlen) < 0) return NULL;
    zri_script *s = zri_xcalloc(1, sizeof *s);
    s->path = zri_xstrndup(path, strlen(path));
    s->what = zri_xstrndup(what, strlen(what));
    s->root = root;
    s->link = scripts;
    scripts = s;
    return s;
}

static zri_cursor *cursor_get(zri_script *s, const char *key)
{
    for (zri_cursor *c = s->cursors; c; c = c->link)
        if (strcmp(c->key, key) == 0) return c;
    zri_cursor *c = zri_xcalloc(1, sizeof *c);
    c->key = zri_xstrndup(key, strlen(key));
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
    char *full = zri_xmalloc(n);
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
    zri_http_shutdown();
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
    if (used + 1 < n) snprintf(buf + used, n - used, "%s", text);
}

static int value_matches(zgrt_type t, const zgrt_value *v)
{
    if (v->tag != t.tag) return 0;
    if (t.tag == ZGRT_ENUM && (int32_t)((uint64_t)v->u.i >> 32) != t.enum_id) return 0;
    if (t.tag == ZGRT_FLOAT && !isfinite(v->u.f)) return 0;
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
                snprintf(err, errlen,
                         "`%s`: %" JSON_INTEGER_FORMAT " is not a member number of %s (1..%d)", key,
                         n, p->enums[t.enum_id].name, (int)p->enums[t.enum_id].nmembers);
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
        char *s = zri_xmalloc(n);
        if (name)
            snprintf(s, n, "[%s:%s]", a->name, name);
        else
            snprintf(s, n, "[%s]", a->name);
        out->u.s = zri_str(env->heap, s, strlen(s));
        free(s);
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

#define AVAILABLE "(available: mock, scripted:FILE, openai[:MODEL], ollama[:MODEL])"

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
    if (rc != ZRI_MODEL_OK) return rc;
    if (env->detail) {
        char *text = json_dumps(answer, JSON_COMPACT | JSON_ENCODE_ANY);
        env->detail(env->note_user, "answer", text);
        free(text);
    }
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

/* ---- OpenAI-compatible servers ----------------------------------------- */

/* Defaults (docs/runtime.md, "Models"). */
#define OPENAI_BASE_DEFAULT "https://api.openai.com/v1"
#define OPENAI_MODEL_DEFAULT "gpt-4o-mini"
#define OLLAMA_HOST_DEFAULT "http://127.0.0.1:11434"
#define OLLAMA_MODEL_DEFAULT "llama3.2"
#define LLM_TIMEOUT_DEFAULT 120.0 /* seconds per call without --llm-timeout */
#define QUOTE_MAX 200             /* bytes of an answer quoted in a message */
#define SERVER_MSG_MAX 300        /* bytes of a server's error message */

static int is_space(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static int is_punct(int c)
{
    return c > ' ' && c < 127 &&
           !((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'));
}

/* The first occurrence of needle (m bytes) in s (n bytes), or NULL. */
static const char *find_bytes(const char *s, size_t n, const char *needle, size_t m)
{
    if (m == 0 || m > n) return NULL;
    for (size_t i = 0; i + m <= n; i++)
        if (s[i] == needle[0] && memcmp(s + i, needle, m) == 0) return s + i;
    return NULL;
}

/* Redaction matches parts of the key, not only the whole key: a server
 * may echo it in another case or cut into pieces (split over lines, or
 * around a value it inserted).  A part is REDACT_PART bytes or more of the
 * key, compared without case; a key shorter than that is matched whole.
 * Eight bytes of a random key do not occur in ordinary text; a common key
 * prefix ("sk-proj-") may be redacted too, which loses nothing. */
#define REDACT_PART 8

static int lower_ascii(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

/* Marks in hit[0..n) the bytes of s that belong to a part of key (see
 * above): for every (i, j), run[j] is the length of the longest common
 * run of s and key ending at s[i] and key[j].  Returns whether any byte is
 * marked.  O(n * |key|). */
static int mark_key_parts(const char *s, size_t n, const char *key, unsigned char *hit)
{
    size_t kn = key ? strlen(key) : 0;
    if (kn == 0 || n == 0) return 0;
    size_t part = kn < REDACT_PART ? kn : REDACT_PART;
    size_t *run = zri_xcalloc(kn + 1, sizeof *run); /* run[j + 1]: ending at key[j] */
    int any = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = kn; j > 0; j--) {
            run[j] = lower_ascii((unsigned char)s[i]) == lower_ascii((unsigned char)key[j - 1])
                         ? run[j - 1] + 1
                         : 0;
            if (run[j] >= part) {
                memset(hit + i + 1 - run[j], 1, run[j]);
                any = 1;
            }
        }
    }
    free(run);
    return any;
}

/* Whether s (n bytes) contains the key or a part of it (see above). */
static int has_key_part(const char *s, size_t n, const char *key)
{
    if (!key || !*key || n == 0) return 0;
    unsigned char *hit = zri_xcalloc(n, 1);
    int any = mark_key_parts(s, n, key, hit);
    free(hit);
    return any;
}

/* Appends s (n bytes) with every part of the key (see above) replaced by
 * [redacted]. */
static void add_redacted(zri_buf *b, const char *s, size_t n, const char *key)
{
    unsigned char *hit = n ? zri_xcalloc(n, 1) : NULL;
    if (!hit || !mark_key_parts(s, n, key, hit)) {
        zri_buf_add(b, s, n);
        free(hit);
        return;
    }
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && hit[j] == hit[i]) j++;
        if (hit[i])
            zri_buf_puts(b, "[redacted]");
        else
            zri_buf_add(b, s + i, j - i);
        i = j;
    }
    free(hit);
}

/* Length of the longest prefix of s (n bytes) of at most max bytes that
 * does not end inside a UTF-8 sequence. */
static size_t cut_utf8(const char *s, size_t n, size_t max)
{
    if (n <= max) return n;
    size_t m = max;
    while (m > 0 && ((unsigned char)s[m] & 0xC0) == 0x80) m--;
    return m;
}

/* Appends text as a JSON string, the key redacted first, cut to QUOTE_MAX
 * bytes ("…" after the closing quote when cut). */
static void add_quoted(zri_buf *b, const char *text, size_t n, const char *key)
{
    zri_buf r = {0};
    zri_buf_add(&r, "", 0);
    add_redacted(&r, text, n, key);
    size_t m = cut_utf8(r.data ? r.data : "", r.len, QUOTE_MAX);
    zri_buf_json_string(b, r.data ? r.data : "", m);
    if (m < r.len) zri_buf_puts(b, "…");
    zri_buf_free(&r);
}

/* Copies text into err, the key redacted, cut at a character boundary. */
static void put_message(char *err, size_t errlen, const char *text, const char *key)
{
    if (!errlen) return;
    zri_buf r = {0};
    zri_buf_add(&r, "", 0);
    add_redacted(&r, text ? text : "", text ? strlen(text) : 0, key);
    size_t m = cut_utf8(r.data ? r.data : "", r.len, errlen - 1);
    if (m) memcpy(err, r.data, m);
    err[m] = 0;
    zri_buf_free(&r);
}

/* Skips whitespace, and punctuation when punct is set (but not `_` when
 * keep_underscore is set), at both ends of [*s, *s + *n). */
static void trim(const char **s, size_t *n, int punct, int keep_underscore)
{
    const char *p = *s;
    size_t m = *n;
#define TRIMMED(c)                   \
    (is_space((unsigned char)(c)) || \
     (punct && is_punct((unsigned char)(c)) && !(keep_underscore && (c) == '_')))
    while (m > 0 && TRIMMED(p[0])) p++, m--;
    while (m > 0 && TRIMMED(p[m - 1])) m--;
#undef TRIMMED
    *s = p;
    *n = m;
}

/* A number's text: whitespace, markdown emphasis, quotes and one final
 * period around it are dropped ("**42**", "`3.5`", "7."). */
static void trim_number(const char **s, size_t *n)
{
    static const char around[] = "*`\"'";
    const char *p = *s;
    size_t m = *n;
    for (int again = 1; again;) {
        again = 0;
        trim(&p, &m, 0, 0);
        if (m > 0 && strchr(around, p[0])) {
            p++, m--, again = 1;
        }
        if (m > 0 && strchr(around, p[m - 1])) {
            m--, again = 1;
        }
    }
    if (m > 1 && p[m - 1] == '.' && p[m - 2] >= '0' && p[m - 2] <= '9') m--;
    *s = p;
    *n = m;
}

/* The body of the first fenced block (```json … ``` or ``` … ```) of
 * [s, s + n): 1 and the body in *body, *blen; 0 when there is none. */
static int fenced_block(const char *s, size_t n, const char **body, size_t *blen)
{
    const char *open = find_bytes(s, n, "```", 3);
    if (!open) return 0;
    const char *end = s + n;
    const char *p = open + 3;
    while (p < end && ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                       (*p >= '0' && *p <= '9') || *p == '-' || *p == '_'))
        p++; /* the language tag */
    const char *close = find_bytes(p, (size_t)(end - p), "```", 3);
    *body = p;
    *blen = (size_t)((close ? close : end) - p);
    trim(body, blen, 0, 0);
    return 1;
}

static int ieq(const char *s, size_t n, const char *word)
{
    return strlen(word) == n && strncasecmp(s, word, n) == 0;
}

/* What the answer must look like, appended to the system prompt: the
 * keys and their types for json, the accepted words otherwise. */
static void add_answer_format(zri_buf *b, const zgrt_program *p, const zgrt_action *a)
{
    zgrt_type t = a->nresults > 0 ? a->result_types[0] : (zgrt_type){ZGRT_UNDEF, -1};
    const zgrt_enum *e = NULL;
    switch (a->parse) {
    case ZGRT_PARSE_JSON:
        zri_buf_puts(b, "Answer with a JSON object with exactly these keys: ");
        for (int k = 0; k < a->nresults; k++) {
            char key[256];
            output_key(a, k, key, sizeof key);
            zgrt_type tk = a->result_types[k];
            if (k) zri_buf_puts(b, ", ");
            zri_buf_json_string(b, key, strlen(key));
            switch (tk.tag) {
            case ZGRT_STR: zri_buf_puts(b, " (a string)"); break;
            case ZGRT_INT: zri_buf_puts(b, " (an integer)"); break;
            case ZGRT_FLOAT: zri_buf_puts(b, " (a number)"); break;
            case ZGRT_BOOL: zri_buf_puts(b, " (true or false)"); break;
            case ZGRT_ENUM:
                e = tk.enum_id >= 0 && tk.enum_id < p->nenums ? &p->enums[tk.enum_id] : NULL;
                zri_buf_puts(b, " (one of");
                for (int m = 0; e && m < e->nmembers; m++) {
                    zri_buf_puts(b, m ? ", " : " ");
                    zri_buf_json_string(b, e->members[m], strlen(e->members[m]));
                }
                zri_buf_puts(b, ")");
                break;
            default: zri_buf_puts(b, " (any JSON value)"); break;
            }
        }
        zri_buf_puts(b, ".");
        break;
    case ZGRT_PARSE_BOOL: zri_buf_puts(b, "Answer with yes or no only."); break;
    case ZGRT_PARSE_INT: zri_buf_puts(b, "Answer with an integer only."); break;
    case ZGRT_PARSE_FLOAT: zri_buf_puts(b, "Answer with a number only."); break;
    case ZGRT_PARSE_ENUM:
        e = t.tag == ZGRT_ENUM && t.enum_id >= 0 && t.enum_id < p->nenums ? &p->enums[t.enum_id]
                                                                          : NULL;
        zri_buf_puts(b, "Answer with exactly one of:");
        for (int m = 0; e && m < e->nmembers; m++) {
            zri_buf_puts(b, m ? ", " : " ");
            zri_buf_puts(b, e->members[m]);
        }
        zri_buf_puts(b, ".");
        break;
    default: break;
    }
}

/* The JSON schema of a value of type t (new reference). */
static json_t *type_schema(const zgrt_program *p, zgrt_type t)
{
    json_t *s = json_object();
    switch (t.tag) {
    case ZGRT_STR: json_object_set_new(s, "type", json_string("string")); break;
    case ZGRT_INT: json_object_set_new(s, "type", json_string("integer")); break;
    case ZGRT_FLOAT: json_object_set_new(s, "type", json_string("number")); break;
    case ZGRT_BOOL: json_object_set_new(s, "type", json_string("boolean")); break;
    case ZGRT_ENUM: {
        json_object_set_new(s, "type", json_string("string"));
        json_t *members = json_array();
        if (t.enum_id >= 0 && t.enum_id < p->nenums)
            for (int m = 0; m < p->enums[t.enum_id].nmembers; m++)
                json_array_append_new(members, json_string(p->enums[t.enum_id].members[m]));
        json_object_set_new(s, "enum", members);
        break;
    }
    default: break; /* json: any value */
    }
    return s;
}

/* The chat completions request (malloc'd JSON text), or NULL with a
 * message in why. */
static char *request_body(const zgrt_program *p, const zgrt_action *a, const char *model,
                          const char *system, const char *user, zri_buf *why)
{
    if ((system && !zri_utf8_valid(system, strlen(system))) ||
        (user && !zri_utf8_valid(user, strlen(user)))) {
        zri_buf_puts(why, "the prompt is not valid UTF-8");
        return NULL;
    }
    if (!zri_utf8_valid(model, strlen(model))) {
        zri_buf_puts(why, "the model name is not valid UTF-8");
        return NULL;
    }
    zri_buf sys = {0};
    zri_buf_add(&sys, "", 0);
    if (system) zri_buf_puts(&sys, system);
    zri_buf fmt = {0};
    zri_buf_add(&fmt, "", 0);
    add_answer_format(&fmt, p, a);
    if (fmt.len) {
        if (sys.len) zri_buf_puts(&sys, "\n\n");
        zri_buf_add(&sys, fmt.data, fmt.len);
    }
    zri_buf_free(&fmt);

    json_t *req = json_object();
    json_object_set_new(req, "model", json_string(model));
    json_t *msgs = json_array();
    if (sys.len) {
        json_t *m = json_object();
        json_object_set_new(m, "role", json_string("system"));
        json_object_set_new(m, "content", json_stringn(sys.data, sys.len));
        json_array_append_new(msgs, m);
    }
    if (user || !sys.len) {
        json_t *m = json_object();
        json_object_set_new(m, "role", json_string("user"));
        json_object_set_new(m, "content", json_string(user ? user : ""));
        json_array_append_new(msgs, m);
    }
    zri_buf_free(&sys);
    json_object_set_new(req, "messages", msgs);
    if (a->has_temperature) json_object_set_new(req, "temperature", json_real(a->temperature));
    if (a->parse == ZGRT_PARSE_JSON) {
        json_t *schema = json_object(), *props = json_object(), *required = json_array();
        for (int k = 0; k < a->nresults; k++) {
            char key[256];
            output_key(a, k, key, sizeof key);
            json_object_set_new(props, key, type_schema(p, a->result_types[k]));
            json_array_append_new(required, json_string(key));
        }
        json_object_set_new(schema, "type", json_string("object"));
        json_object_set_new(schema, "properties", props);
        json_object_set_new(schema, "required", required);
        json_object_set_new(schema, "additionalProperties", json_false());
        json_t *js = json_object();
        json_object_set_new(js, "name", json_string(a->name));
        json_object_set_new(js, "schema", schema);
        json_t *rf = json_object();
        json_object_set_new(rf, "type", json_string("json_schema"));
        json_object_set_new(rf, "json_schema", js);
        json_object_set_new(req, "response_format", rf);
    }
    json_object_set_new(req, "stream", json_false());
    char *text = req ? json_dumps(req, JSON_COMPACT) : NULL;
    json_decref(req);
    if (!text) zri_buf_puts(why, "out of memory");
    return text;
}

/* The text of a server's error reply: error.message, error, message or
 * detail of a JSON body, else the body itself; one line, the key
 * redacted, cut to SERVER_MSG_MAX bytes. */
static void add_server_message(zri_buf *b, const char *body, size_t len, const char *key)
{
    json_t *root = json_loadb(body, len, 0, NULL);
    const char *msg = NULL;
    size_t mlen = 0;
    if (json_is_object(root)) {
        json_t *e = json_object_get(root, "error");
        json_t *m = json_is_object(e) ? json_object_get(e, "message") : e;
        if (!json_is_string(m)) m = json_object_get(root, "message");
        if (!json_is_string(m)) m = json_object_get(root, "detail");
        if (json_is_string(m)) {
            msg = json_string_value(m);
            mlen = json_string_length(m);
        }
    }
    if (!msg) {
        msg = body;
        mlen = len;
    }
    zri_buf r = {0};
    zri_buf_add(&r, "", 0);
    add_redacted(&r, msg, mlen, key);
    json_decref(root);
    for (size_t i = 0; i < r.len; i++)
        if ((unsigned char)r.data[i] < ' ' || r.data[i] == 127) r.data[i] = ' ';
    const char *s = r.data;
    size_t n = r.len;
    trim(&s, &n, 0, 0);
    if (n == 0) {
        zri_buf_puts(b, "(no message)");
    } else {
        size_t m = cut_utf8(s, n, SERVER_MSG_MAX);
        zri_buf_add(b, s, m);
        if (m < n) zri_buf_puts(b, "…");
    }
    zri_buf_free(&r);
}

/* Types the text of an answer by the action's `parse`.  Returns a
 * ZRI_MODEL_* code; why gets the reason of a failure. */
static int parse_answer(zri_action_env *env, const zgrt_action *a, const char *text, size_t n,
                        zgrt_value *outs, const char *key, zri_buf *why)
{
    const zgrt_program *p = env->prog;
    if (a->parse == ZGRT_PARSE_JSON) {
        const char *s = text;
        size_t m = n;
        trim(&s, &m, 0, 0);
        json_error_t je;
        json_t *obj = json_loadb(s, m, JSON_REJECT_DUPLICATES, &je);
        const char *body;
        size_t blen;
        if (!obj && fenced_block(s, m, &body, &blen))
            obj = json_loadb(body, blen, JSON_REJECT_DUPLICATES, &je);
        if (!obj) {
            zri_buf_printf(why, "the answer is not JSON (%s): ", je.text);
            add_quoted(why, text, n, key);
            return ZRI_MODEL_INVALID;
        }
        if (!json_is_object(obj)) {
            json_decref(obj);
            zri_buf_puts(why, "the answer is not a JSON object: ");
            add_quoted(why, text, n, key);
            return ZRI_MODEL_INVALID;
        }
        char w[1024];
        int rc = zri_answer_values(env, a, obj, 0, outs, w, sizeof w);
        json_decref(obj);
        if (rc < 0) {
            zri_buf_printf(why, "the answer: %s", w);
            return ZRI_MODEL_INVALID;
        }
        return ZRI_MODEL_OK;
    }

    /* the parse modes and the output type each needs (vocab/vocab.h) */
#define ZRI_PARSE_NAME(id, name, type) name,
#define ZRI_PARSE_TAG(id, name, type) ZGRT_##type,
    static const char *const parse_names[] = {ZV_PARSE_MODES(ZRI_PARSE_NAME)};
    static const int32_t parse_tags[] = {ZV_PARSE_MODES(ZRI_PARSE_TAG)};
#undef ZRI_PARSE_NAME
#undef ZRI_PARSE_TAG
    if (a->parse < 0 || a->parse >= (int32_t)(sizeof parse_names / sizeof *parse_names)) {
        zri_buf_printf(why, "llm action `%s` has an unknown parse mode %d", a->name, (int)a->parse);
        return ZRI_MODEL_CONFIG;
    }
    if (a->nresults != 1 || a->result_types[0].tag != parse_tags[a->parse]) {
        zri_buf_printf(why, "llm action `%s`: parse = %s needs exactly one output of that type",
                       a->name, parse_names[a->parse]);
        return ZRI_MODEL_CONFIG;
    }
    zgrt_type t = a->result_types[0];
    zgrt_value *out = &outs[0];
    memset(out, 0, sizeof *out);
    const char *s = text;
    size_t m = n;
    switch (a->parse) {
    case ZGRT_PARSE_TEXT:
        out->tag = ZGRT_STR;
        out->u.s = zri_str(env->heap, text, n);
        return ZRI_MODEL_OK;
    case ZGRT_PARSE_BOOL:
        trim(&s, &m, 1, 0);
        out->tag = ZGRT_BOOL;
        if (ieq(s, m, "true") || ieq(s, m, "yes") || ieq(s, m, "1")) {
            out->u.i = 1;
            return ZRI_MODEL_OK;
        }
        if (ieq(s, m, "false") || ieq(s, m, "no") || ieq(s, m, "0")) {
            out->u.i = 0;
            return ZRI_MODEL_OK;
        }
        zri_buf_puts(why, "the answer is not yes/no/true/false/1/0: ");
        break;
    case ZGRT_PARSE_INT: {
        trim_number(&s, &m);
        int64_t v;
        int rc = zri_parse_int(s, m, &v);
        if (rc == 0) {
            out->tag = ZGRT_INT;
            out->u.i = v;
            return ZRI_MODEL_OK;
        }
        zri_buf_puts(why, rc == -2 ? "the answer is an integer out of range: "
                                   : "the answer is not an integer: ");
        break;
    }
    case ZGRT_PARSE_FLOAT: {
        trim_number(&s, &m);
        double v;
        int rc = zri_parse_float(s, m, &v);
        if (rc == 0) {
            out->tag = ZGRT_FLOAT;
            out->u.f = v;
            return ZRI_MODEL_OK;
        }
        zri_buf_puts(why, rc == -2 ? "the answer is a number out of range: "
                                   : "the answer is not a number: ");
        break;
    }
    case ZGRT_PARSE_ENUM: {
        const zgrt_enum *e = t.enum_id >= 0 && t.enum_id < p->nenums ? &p->enums[t.enum_id] : NULL;
        if (!e) {
            zri_buf_printf(why, "llm action `%s` has a bad enum output", a->name);
            return ZRI_MODEL_CONFIG;
        }
        trim(&s, &m, 1, 1);
        size_t en = strlen(e->name);
        if (m > en + 1 && memcmp(s, e->name, en) == 0 && s[en] == '.') {
            s += en + 1;
            m -= en + 1;
        }
        int pick = -1, folded = -1, nfolded = 0;
        for (int k = 0; k < e->nmembers; k++) {
            if (strlen(e->members[k]) == m && memcmp(e->members[k], s, m) == 0)
                pick = k;
            else if (ieq(s, m, e->members[k]))
                folded = k, nfolded++;
        }
        if (pick < 0 && nfolded == 1) pick = folded;
        if (pick >= 0) {
            out->tag = ZGRT_ENUM;
            out->u.i = (int64_t)(((uint64_t)(uint32_t)t.enum_id << 32) | (uint32_t)pick);
            return ZRI_MODEL_OK;
        }
        zri_buf_printf(why, "the answer is not one member of %s (", e->name);
        for (int k = 0; k < e->nmembers; k++) {
            zri_buf_puts(why, k ? ", " : "");
            zri_buf_puts(why, e->members[k]);
        }
        zri_buf_puts(why, "): ");
        break;
    }
    default: break;
    }
    add_quoted(why, text, n, key);
    return ZRI_MODEL_INVALID;
}

/* The answer text of a 2xx reply: choices[0].message.content. */
static int reply_answer(zri_action_env *env, const zgrt_action *a, const zri_http_reply *rep,
                        zgrt_value *outs, const char *key, zri_buf *why)
{
    json_error_t je;
    json_t *root = json_loadb(rep->body, rep->len, 0, &je);
    if (!root) {
        zri_buf_printf(why, "the server's reply is not JSON (%s): ", je.text);
        add_quoted(why, rep->body, rep->len, key);
        return ZRI_MODEL_INVALID;
    }
    json_t *choice = json_array_get(json_object_get(root, "choices"), 0);
    json_t *msg = json_object_get(choice, "message");
    json_t *content = json_object_get(msg, "content");
    int rc;
    if (json_is_string(content) &&
        has_key_part(json_string_value(content), json_string_length(content), key)) {
        /* a server that echoes the Authorization header would put the key
         * into the run's values, its result and its trace */
        zri_buf_puts(why, "the answer contains the API key (OPENAI_API_KEY); it is refused");
        rc = ZRI_MODEL_FAILED;
    } else if (json_is_string(content)) {
        /* the reply's text as it came (it holds no part of the key: above) */
        if (env->detail) env->detail(env->note_user, "answer", json_string_value(content));
        free(env->raw); /* the raw answer, for a durable run's journal */
        env->raw = zri_xstrndup(json_string_value(content), json_string_length(content));
        rc = parse_answer(env, a, json_string_value(content), json_string_length(content), outs,
                          key, why);
    } else if (json_is_string(json_object_get(msg, "refusal"))) {
        json_t *r = json_object_get(msg, "refusal");
        zri_buf_puts(why, "the model refused: ");
        add_quoted(why, json_string_value(r), json_string_length(r), key);
        rc = ZRI_MODEL_INVALID;
    } else if (json_object_get(root, "error")) {
        zri_buf_puts(why, "the server answered with an error: ");
        add_server_message(why, rep->body, rep->len, key);
        rc = ZRI_MODEL_INVALID;
    } else {
        zri_buf_puts(why, "the server's reply has no choices[0].message.content: ");
        add_quoted(why, rep->body, rep->len, key);
        rc = ZRI_MODEL_INVALID;
    }
    json_decref(root);
    return rc;
}

/* HTTP statuses worth another attempt. */
static int transient_status(long s)
{
    return s == 408 || s == 409 || s == 425 || s == 429 || s == 500 || s == 502 || s == 503 ||
           s == 504;
}

/* The chat completions URL of a backend (malloc'd).  Only http and https
 * are spoken (http.c); anything else is a configuration error. */
static char *endpoint(int ollama)
{
    const char *base = getenv(ollama ? "OLLAMA_HOST" : "OPENAI_BASE_URL");
    if (!base || !*base) base = ollama ? OLLAMA_HOST_DEFAULT : OPENAI_BASE_DEFAULT;
    size_t n = strlen(base);
    while (n > 0 && base[n - 1] == '/') n--;
    zri_buf b = {0};
    if (ollama && !strstr(base, "://")) /* OLLAMA_HOST may be HOST:PORT or :PORT */
        zri_buf_puts(&b, base[0] == ':' ? "http://127.0.0.1" : "http://");
    zri_buf_add(&b, base, n);
    zri_buf_puts(&b, ollama ? "/v1/chat/completions" : "/chat/completions");
    return zri_buf_take(&b);
}

static int remote_call(zri_action_env *env, const zgrt_action *a, const char *spec, int ollama,
                       const char *system, const char *user, zgrt_value *outs, zri_model_wait *wait,
                       char *err, size_t errlen)
{
    const char *backend = ollama ? "ollama" : "openai";
    size_t bn = strlen(backend);
    const char *model = spec[bn] == ':' && spec[bn + 1] ? spec + bn + 1
                        : a->model && *a->model         ? a->model
                        : ollama                        ? OLLAMA_MODEL_DEFAULT
                                                        : OPENAI_MODEL_DEFAULT;
    /* the key is redacted from every message, whichever backend */
    const char *key = getenv("OPENAI_API_KEY");
    if (key && !*key) key = NULL;
    wait->backoff = 1;
    wait->retry_after = -1;

    zri_buf why = {0};
    zri_buf_printf(&why, "%s:%s: ", backend, model);
    /* a header value with a line break would add headers of its own: only
     * printable ASCII without spaces makes a key (never printed) */
    for (const char *k = key; k && *k; k++)
        if (*k < 0x21 || *k > 0x7e) {
            zri_buf_puts(&why, "OPENAI_API_KEY contains a space, a control character or a "
                               "character that is not ASCII");
            put_message(err, errlen, why.data, key);
            zri_buf_free(&why);
            return ZRI_MODEL_CONFIG;
        }
    char *url = endpoint(ollama);
    if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) {
        zri_buf_printf(&why, "%s must be an http:// or https:// URL, not `",
                       ollama ? "OLLAMA_HOST" : "OPENAI_BASE_URL");
        add_redacted(&why, url, strlen(url), key);
        zri_buf_puts(&why, "`");
        put_message(err, errlen, why.data, key);
        zri_buf_free(&why);
        free(url);
        return ZRI_MODEL_CONFIG;
    }
    char *body = request_body(env->prog, a, model, system, user, &why);
    if (!body) {
        put_message(err, errlen, why.data, key);
        zri_buf_free(&why);
        free(url);
        return ZRI_MODEL_FAILED;
    }
    double timeout =
        env->opts && env->opts->llm_timeout > 0 ? env->opts->llm_timeout : LLM_TIMEOUT_DEFAULT;
    zri_http_reply rep;
    char herr[1024] = "";
    int h = zri_http_post(url, ollama ? NULL : key, body, timeout, env->cancel, &rep, herr,
                          sizeof herr);
    free(body);
    int rc;
    switch (h) {
    case ZRI_HTTP_OK:
        if (rep.status >= 200 && rep.status < 300) {
            rc = reply_answer(env, a, &rep, outs, key, &why);
        } else {
            zri_buf_printf(&why, "HTTP %ld: ", rep.status);
            add_server_message(&why, rep.body, rep.len, key);
            if (rep.status == 401 && !ollama && !key)
                zri_buf_puts(&why, " (OPENAI_API_KEY is not set)");
            if (transient_status(rep.status)) {
                rc = ZRI_MODEL_RETRY;
                wait->retry_after = rep.retry_after;
            } else {
                rc = ZRI_MODEL_FAILED;
            }
        }
        zri_http_reply_free(&rep);
        break;
    case ZRI_HTTP_TIMEOUT:
        zri_buf_printf(&why, "%s (--llm-timeout)", herr);
        rc = ZRI_MODEL_RETRY;
        break;
    case ZRI_HTTP_TRANSPORT:
        zri_buf_printf(&why, "cannot reach %s: %s", url, herr);
        rc = ZRI_MODEL_RETRY;
        break;
    case ZRI_HTTP_CONFIG:
        /* a host name that does not resolve, a malformed URL: retrying
         * would only wait */
        zri_buf_printf(&why, "cannot reach %s: %s", url, herr);
        rc = ZRI_MODEL_CONFIG;
        break;
    case ZRI_HTTP_CANCELLED:
        zri_buf_puts(&why, "cancelled");
        rc = ZRI_MODEL_FAILED;
        break;
    default:
        zri_buf_puts(&why, herr);
        rc = ZRI_MODEL_FAILED;
        break;
    }
    put_message(err, errlen, why.data, key);
    zri_buf_free(&why);
    free(url);
    return rc;
}

/* ---- dispatch ---------------------------------------------------------- */

/* spec == name, or spec starts with "name:" */
static int spec_is(const char *spec, const char *name)
{
    size_t n = strlen(name);
    return strncmp(spec, name, n) == 0 && (spec[n] == 0 || spec[n] == ':');
}

int zri_script_check(const char *path, const char *what, char *err, size_t errlen)
{
    pthread_mutex_lock(&script_mu);
    zri_script *s = script_get(path, what, err, errlen);
    pthread_mutex_unlock(&script_mu);
    return s ? 0 : -1;
}

int zri_model_check(const char *spec, char *err, size_t errlen)
{
    if (strcmp(spec, "mock") == 0) return 0;
    if (spec_is(spec, "scripted")) {
        if (spec[8] != ':' || spec[9] == 0) {
            snprintf(err, errlen, "model spec `%s` needs a file: scripted:FILE.json", spec);
            return -1;
        }
        return zri_script_check(spec + 9, "scripted model", err, errlen);
    }
    int ollama = spec_is(spec, "ollama");
    if (ollama || spec_is(spec, "openai")) {
        const char *key = ollama ? NULL : getenv("OPENAI_API_KEY");
        for (const char *k = key; k && *k; k++)
            if (*k < 0x21 || *k > 0x7e) {
                snprintf(err, errlen,
                         "%s: OPENAI_API_KEY contains a space, a control character or a "
                         "character that is not ASCII",
                         spec);
                return -1;
            }
        char *url = endpoint(ollama);
        int ok = strncmp(url, "http://", 7) == 0 || strncmp(url, "https://", 8) == 0;
        if (!ok) {
            zri_buf why = {0};
            zri_buf_printf(&why, "%s: %s must be an http:// or https:// URL, not `", spec,
                           ollama ? "OLLAMA_HOST" : "OPENAI_BASE_URL");
            add_redacted(&why, url, strlen(url), key);
            zri_buf_puts(&why, "`");
            put_message(err, errlen, why.data, key);
            zri_buf_free(&why);
        }
        free(url);
        return ok ? 0 : -1;
    }
    /* the backend's name: the part before ':' */
    size_t n = strcspn(spec, ":");
    ZvSuggest sg;
    zv_suggest_init_until(&sg, spec, ":");
    static const char *const backends[] = {"mock", "scripted", "openai", "ollama"};
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
        zv_suggest_try(&sg, backends[i]);
    if (sg.best)
        snprintf(err, errlen, "unknown model spec `%s`; did you mean `%s%s`? " AVAILABLE, spec,
                 sg.best, spec + n);
    else
        snprintf(err, errlen, "unknown model spec `%s` " AVAILABLE, spec);
    return -1;
}

int zri_model_call(zri_action_env *env, const zgrt_action *a, const char *spec, const char *system,
                   const char *user, zgrt_value *outs, zri_model_wait *wait, char *err,
                   size_t errlen)
{
    wait->backoff = 0;
    wait->retry_after = -1;
    if (strcmp(spec, "mock") == 0) {
        /* the prompts are for real models; mock and scripted answer without them */
        for (int k = 0; k < a->nresults; k++)
            if (mock_value(env, a, k, &outs[k], err, errlen) < 0) return ZRI_MODEL_CONFIG;
        return ZRI_MODEL_OK;
    }
    if (spec_is(spec, "scripted")) {
        if (spec[8] != ':' || spec[9] == 0) {
            snprintf(err, errlen, "model spec `%s` needs a file: scripted:FILE.json", spec);
            return ZRI_MODEL_CONFIG;
        }
        return scripted_call(env, a, spec + 9, outs, err, errlen);
    }
    if (spec_is(spec, "openai"))
        return remote_call(env, a, spec, 0, system, user, outs, wait, err, errlen);
    if (spec_is(spec, "ollama"))
        return remote_call(env, a, spec, 1, system, user, outs, wait, err, errlen);
    snprintf(err, errlen, "unknown model spec `%s` " AVAILABLE, spec);
    return ZRI_MODEL_CONFIG;
}
