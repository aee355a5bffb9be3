/* actions.c — running `llm`, `human`, `extern pure` and `effect` actions.
 *
 * llm     The model is chosen by routing: `--llm-for Lifeline.action=SPEC`,
 *         then `--llm-for Lifeline=SPEC`, then `--llm SPEC`, then `mock`
 *         (among routes of the same specificity the last one given wins).
 *         The prompt templates get `{param}` replaced by the argument's
 *         text (a str as is, an enum member by name, anything else as JSON
 *         text).  An attempt is one model call: transport, HTTP status,
 *         parsing and type check.  Invalid answers and transient failures
 *         (transport errors, timeouts, HTTP 408/409/425/429/500/502/503/
 *         504) are retried (`retries` more attempts, `forever` without a
 *         bound); network backends wait 2, 4, 8 … s (at most 30 s, or the
 *         server's Retry-After, at most 600 s) times --backoff-scale
 *         before each retry, checking for a cancellation every 50 ms.  A
 *         call that still fails, or fails permanently (HTTP 400/401/403/
 *         404, …), uses the declared `fallback`, else fails the run with
 *         the number of attempts and the last error.  A cancelled run
 *         stops at once and never takes the fallback.  Bad specs and
 *         unreadable script files fail whatever the fallback.  Each retry
 *         is a progress note (stderr) and a "retry" trace line.
 * human   Answers come from `--answers FILE.json` (the format of scripted
 *         models, models.c), else from the terminal when stdin is one:
 *         the prompt goes to stderr and the answer is one line of stdin.
 *         One mutex keeps two lifelines from asking at the same time.
 *         An answer object holds the output under its name, or `value`:
 *           confirm  {"value": true}         input  {"value": "text"}
 *           select   {"value": "member"} or {"value": 2} (1-based number)
 *           edit     {"value": "the new text"}
 *           ack      {} (or {"value": true} with a bool output)
 *         On the terminal: confirm takes y/yes/true or n/no/false, select
 *         a number or a member name, edit a replacement line (an empty
 *         line keeps the current text, the first str argument), ack any
 *         line; an invalid answer is asked again, end of input is an
 *         error, and a cancelled run stops the wait within 0.1 s.
 * extern  `extern pure` and `effect` actions call the user's zg_<name>
 *         with a zgrt_call (the zgrt.h interface, defined here).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "agent.h"

#if defined(__GNUC__)
#define ZRI_PUBLIC __attribute__((visibility("default")))
#else
#define ZRI_PUBLIC
#endif

/* ---- small helpers ----------------------------------------------------- */

/* the run's flag, set by another thread (atomic, as http.c reads it) */
static int cancelled(const zri_action_env *env)
{
    return env->cancel && __atomic_load_n(env->cancel, __ATOMIC_ACQUIRE);
}

static const char *lifeline_name(const zri_action_env *env)
{
    const zgrt_program *p = env->prog;
    if (env->lifeline >= 0 && env->lifeline < p->nlifelines && p->lifelines[env->lifeline])
        return p->lifelines[env->lifeline];
    return "?";
}

static const zgrt_enum *enum_of(const zgrt_program *p, zgrt_type t)
{
    if (t.tag != ZGRT_ENUM || t.enum_id < 0 || t.enum_id >= p->nenums) return NULL;
    return &p->enums[t.enum_id];
}

static int value_matches(const zgrt_program *p, zgrt_type t, const zgrt_value *v)
{
    if (v->tag != t.tag) return 0;
    if (t.tag == ZGRT_ENUM) {
        const zgrt_enum *e = enum_of(p, t);
        uint64_t u = (uint64_t)v->u.i;
        return e && (int32_t)(u >> 32) == t.enum_id && (u & 0xffffffffu) < (uint64_t)e->nmembers;
    }
    if (t.tag == ZGRT_FLOAT) return isfinite(v->u.f);
    if (t.tag == ZGRT_STR) return v->u.s != NULL;
    return 1;
}

static zgrt_value enum_value(int32_t enum_id, int member)
{
    zgrt_value v;
    memset(&v, 0, sizeof v);
    v.tag = ZGRT_ENUM;
    v.u.i = (int64_t)(((uint64_t)(uint32_t)enum_id << 32) | (uint32_t)member);
    return v;
}

/* The text of an argument in a prompt. */
static void buf_arg(zri_buf *b, const zgrt_program *p, zgrt_type t, const zgrt_value *v)
{
    if (v->tag == ZGRT_STR && v->u.s) {
        zri_buf_add(b, v->u.s->data, (size_t)v->u.s->len);
        return;
    }
    if (v->tag == ZGRT_ENUM) {
        const zgrt_enum *e = enum_of(p, t);
        uint64_t m = (uint64_t)v->u.i & 0xffffffffu;
        if (e && m < (uint64_t)e->nmembers) {
            zri_buf_puts(b, e->members[m]);
            return;
        }
    }
    if (v->tag == ZGRT_UNDEF) return;
    char *text = zri_value_to_json(p, v, t);
    if (text) zri_buf_puts(b, text);
    free(text);
}

/* Fills a prompt template: `{name}` naming a parameter becomes the
 * argument's text; every other brace is literal.  Returns a malloc'd
 * string. */
static char *fill_prompt(const zgrt_program *p, const zgrt_action *a, const char *tmpl,
                         const zgrt_value *args)
{
    zri_buf b = {0};
    zri_buf_add(&b, "", 0);
    const char *s = tmpl;
    while (*s) {
        const char *open = strchr(s, '{');
        if (!open) {
            zri_buf_puts(&b, s);
            break;
        }
        zri_buf_add(&b, s, (size_t)(open - s));
        const char *q = open + 1;
        int param = -1;
        if ((*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') || *q == '_') {
            const char *id = q;
            while ((*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') || *q == '_' ||
                   (*q >= '0' && *q <= '9'))
                q++;
            if (*q == '}') {
                size_t n = (size_t)(q - id);
                for (int k = 0; k < a->nparams && param < 0; k++)
                    if (strlen(a->param_names[k]) == n && memcmp(a->param_names[k], id, n) == 0)
                        param = k;
            }
        }
        if (param >= 0) {
            buf_arg(&b, p, a->param_types[param], &args[param]);
            s = q + 1;
        } else {
            zri_buf_add(&b, "{", 1);
            s = open + 1;
        }
    }
    return b.data;
}

/* ---- llm --------------------------------------------------------------- */

/* The spec of the scripted model: its answers are a file's, read in order
 * (ZRI_SRC_SCRIPT); mock and scripted calls stay inside the run. */
#define SCRIPTED "scripted:"

/* The model spec for action a on the env's lifeline. */
static const char *route_spec(const zri_action_env *env, const zgrt_action *a)
{
    const zri_options *o = env->opts;
    if (!o) return "mock";
    const char *lifeline = lifeline_name(env);
    const char *best = NULL;
    int best_rank = -1;
    for (int i = 0; i < o->nroutes; i++) {
        const zri_route *r = &o->routes[i];
        if (!r->spec) continue;
        if (r->lifeline && strcmp(r->lifeline, lifeline) != 0) continue;
        if (r->action && strcmp(r->action, a->name) != 0) continue;
        int rank = (r->lifeline ? 2 : 0) + (r->action ? 1 : 0);
        if (rank >= best_rank) {
            best = r->spec;
            best_rank = rank;
        }
    }
    if (best && best_rank > 0) return best;
    if (o->llm) return o->llm;
    return best ? best : "mock";
}

static int use_fallback(const zri_action_env *env, const zgrt_action *a, zgrt_value *outs,
                        char *err, size_t errlen)
{
    for (int k = 0; k < a->nresults; k++) {
        zgrt_value v = a->fallback[k];
        if (a->result_types[k].tag == ZGRT_JSON && v.tag == ZGRT_JSON && !v.u.j) {
            /* `null` */
            json_t *j = json_null();
            char why[256] = "";
            if (zri_value_from_jansson(env->prog, env->heap, j, a->result_types[k], &v, why,
                                       sizeof why) < 0) {
                snprintf(err, errlen, "fallback of llm action `%s`: %s", a->name, why);
                return -1;
            }
        }
        if (!value_matches(env->prog, a->result_types[k], &v)) {
            snprintf(err, errlen, "fallback value %d of llm action `%s` is not a %s", k + 1,
                     a->name, zri_type_name(env->prog, a->result_types[k]));
            return -1;
        }
        outs[k] = v;
    }
    return 0;
}

#define BACKOFF_CAP_S 30.0      /* longest backoff between two attempts */
#define RETRY_AFTER_CAP_S 600.0 /* longest Retry-After honoured */

/* The wait before the retry that follows failed attempt k (1, 2, …). */
static double retry_delay(const zri_action_env *env, int k, const zri_model_wait *w)
{
    if (!w->backoff) return 0.0;
    double d = k < 5 ? (double)(1 << k) : BACKOFF_CAP_S; /* 2, 4, 8, 16, 30, 30, … */
    if (d > BACKOFF_CAP_S) d = BACKOFF_CAP_S;
    if (w->retry_after > d)
        d = w->retry_after < RETRY_AFTER_CAP_S ? w->retry_after : RETRY_AFTER_CAP_S;
    double scale = env->opts ? env->opts->backoff_scale : 1.0;
    return scale > 0 ? d * scale : 0.0;
}

/* Sleeps for delay seconds, in slices of 50 ms; -1 as soon as the run is
 * cancelled. */
static int wait_retry(const zri_action_env *env, double delay)
{
    struct timespec now, end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    double whole = floor(delay);
    end.tv_sec += (time_t)whole;
    end.tv_nsec += (long)((delay - whole) * 1e9);
    if (end.tv_nsec >= 1000000000L) {
        end.tv_sec++;
        end.tv_nsec -= 1000000000L;
    }
    for (;;) {
        if (cancelled(env)) return -1;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double left = (double)(end.tv_sec - now.tv_sec) + (double)(end.tv_nsec - now.tv_nsec) / 1e9;
        if (left <= 0) return 0;
        if (left > 0.05) left = 0.05;
        struct timespec ts = {0, (long)(left * 1e9)};
        nanosleep(&ts, NULL);
    }
}

static int run_llm(zri_action_env *env, const zgrt_action *a, const zgrt_value *args,
                   zgrt_value *outs, int *attempts, char *err, size_t errlen)
{
    const zgrt_program *p = env->prog;
    const char *spec = route_spec(env, a);
    char *system = a->system ? fill_prompt(p, a, a->system, args) : NULL;
    char *user = a->user ? fill_prompt(p, a, a->user, args) : NULL;
    if (env->detail) {
        env->detail(env->note_user, "system", system);
        env->detail(env->note_user, "user", user);
    }
    int64_t max_attempts = a->retries < 0 ? -1 : (int64_t)a->retries + 1;
    int n = 0;
    int rc;
    int remote = 0; /* a network backend: messages count the attempts */
    char why[1024] = "";
    if (strncmp(spec, SCRIPTED, strlen(SCRIPTED)) == 0) {
        env->source |= ZRI_SRC_SCRIPT;
    } else if (strcmp(spec, "mock") != 0 && env->visible &&
               env->visible(env->note_user, err, errlen) < 0) {
        /* a request leaves the run: what it depends on is committed first */
        free(system);
        free(user);
        return -1;
    }
    for (;;) {
        if (cancelled(env)) goto cancel;
        n++;
        zri_model_wait w = {0, -1.0};
        why[0] = 0;
        rc = zri_model_call(env, a, spec, system, user, outs, &w, why, sizeof why);
        if (cancelled(env)) goto cancel;
        remote = w.backoff;
        for (int k = 0; rc == ZRI_MODEL_OK && k < a->nresults; k++) {
            if (!value_matches(p, a->result_types[k], &outs[k])) {
                snprintf(why, sizeof why, "model `%s` gave a value that is not a %s for output %d",
                         spec, zri_type_name(p, a->result_types[k]), k + 1);
                rc = ZRI_MODEL_FAILED;
            }
        }
        if (rc != ZRI_MODEL_INVALID && rc != ZRI_MODEL_RETRY) break;
        if ((max_attempts >= 0 && n >= max_attempts) || n == INT32_MAX) break;
        double delay = retry_delay(env, n, &w);
        if (env->note) {
            if (delay > 0)
                env->note(env->note_user, "llm %s: attempt %d failed: %s; retrying in %.3g s",
                          a->name, n, why, delay);
            else
                env->note(env->note_user, "llm %s: attempt %d failed: %s; retrying", a->name, n,
                          why);
        }
        if (env->retry) env->retry(env->note_user, n, why, delay);
        if (delay > 0 && wait_retry(env, delay) < 0) goto cancel;
    }
    free(system);
    free(user);
    *attempts = n;
    if (rc == ZRI_MODEL_OK) return 0;
    if (rc != ZRI_MODEL_CONFIG && a->has_fallback && a->fallback) {
        if (use_fallback(env, a, outs, err, errlen) < 0) return -1;
        if (env->note)
            env->note(env->note_user, "llm %s: using the fallback after %d attempt%s: %s", a->name,
                      n, n == 1 ? "" : "s", why);
        return 0;
    }
    const char *plural = n == 1 ? "" : "s";
    if (rc == ZRI_MODEL_INVALID && (n > 1 || remote))
        snprintf(err, errlen, "no valid answer after %d attempt%s: %s", n, plural, why);
    else if (rc == ZRI_MODEL_RETRY)
        snprintf(err, errlen, "no answer after %d attempt%s: %s", n, plural, why);
    else if (rc == ZRI_MODEL_FAILED && remote)
        snprintf(err, errlen, "failed at attempt %d (not retried): %s", n, why);
    else
        snprintf(err, errlen, "%s", why);
    return -1;

cancel:
    free(system);
    free(user);
    *attempts = n;
    snprintf(err, errlen, "cancelled");
    return -1;
}

/* ---- human ------------------------------------------------------------- */

/* Per-process state: a process has one terminal, whatever the runs and
 * lifelines that ask on it, so the lock that keeps two questions from
 * interleaving is the process's too.  Never held across a run's end. */
static pthread_mutex_t term_mu = PTHREAD_MUTEX_INITIALIZER;

/* `kind = …` of human actions, by zgrt_human_kind (vocab/vocab.h). */
static const char *human_kind_name(int32_t k)
{
#define ZRI_NAME(id, name) name,
    static const char *const names[] = {ZV_HUMAN_KINDS(ZRI_NAME)};
#undef ZRI_NAME
    return k >= 0 && k < (int32_t)(sizeof names / sizeof *names) ? names[k] : "?";
}

/* Checks that a human action's outputs fit its kind. */
static int human_shape_ok(const zgrt_program *p, const zgrt_action *a)
{
    int one = a->nresults == 1;
    zgrt_type t = one ? a->result_types[0] : (zgrt_type){ZGRT_UNDEF, -1};
    switch (a->human_kind) {
    case ZGRT_HUMAN_CONFIRM: return one && t.tag == ZGRT_BOOL;
    case ZGRT_HUMAN_INPUT:
    case ZGRT_HUMAN_EDIT: return one && t.tag == ZGRT_STR;
    case ZGRT_HUMAN_SELECT: {
        const zgrt_enum *e = one ? enum_of(p, t) : NULL;
        return e && e->nmembers > 0;
    }
    case ZGRT_HUMAN_ACK: return a->nresults == 0 || (one && t.tag == ZGRT_BOOL);
    default: return 0;
    }
}

/* The current text of an edit: the first str argument. */
static const zgrt_str *edit_current(const zgrt_action *a, const zgrt_value *args)
{
    for (int k = 0; k < a->nparams; k++)
        if (a->param_types[k].tag == ZGRT_STR && args[k].tag == ZGRT_STR && args[k].u.s)
            return args[k].u.s;
    return NULL;
}

static void set_str(zri_action_env *env, zgrt_value *out, const char *s, size_t n)
{
    memset(out, 0, sizeof *out);
    out->tag = ZGRT_STR;
    out->u.s = zri_str(env->heap, s, n);
}

static int human_from_answer(zri_action_env *env, const zgrt_action *a, void *answer, int index,
                             zgrt_value *outs, char *err, size_t errlen)
{
    char where[256];
    if (index > 0)
        snprintf(where, sizeof where, "answer %d for %s.%s", index, lifeline_name(env), a->name);
    else
        snprintf(where, sizeof where, "the answer for %s.%s", lifeline_name(env), a->name);
    json_t *obj = answer;
    if (a->human_kind == ZGRT_HUMAN_ACK) {
        /* {} acknowledges; with a bool output, {"value": true} too */
        if (a->nresults == 1 && json_object_size(obj) == 0) {
            memset(&outs[0], 0, sizeof outs[0]);
            outs[0].tag = ZGRT_BOOL;
            outs[0].u.i = 1;
            return 0;
        }
    }
    char why[512];
    if (zri_answer_values(env, a, answer, a->human_kind == ZGRT_HUMAN_SELECT, outs, why,
                          sizeof why) < 0) {
        snprintf(err, errlen, "human answers: %s: %s", where, why);
        return -1;
    }
    if (a->human_kind == ZGRT_HUMAN_ACK && a->nresults == 1 && !outs[0].u.i) {
        snprintf(err, errlen, "human answers: %s: an ack answer is true (or {})", where);
        return -1;
    }
    return 0;
}

/* Reads one line from stdin without blocking past a cancellation.
 * Returns 0 with a malloc'd line (without its newline), 1 at end of input
 * before any character, -1 on cancellation or error (message in err). */
static int read_line(const zri_action_env *env, char **line, char *err, size_t errlen)
{
    zri_buf b = {0};
    zri_buf_add(&b, "", 0);
    for (;;) {
        if (cancelled(env)) {
            free(b.data);
            snprintf(err, errlen, "cancelled");
            return -1;
        }
        struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
        int pr = poll(&pfd, 1, 100);
        if (pr < 0) {
            if (errno == EINTR) continue;
            free(b.data);
            snprintf(err, errlen, "cannot read the terminal: %s", strerror(errno));
            return -1;
        }
        if (pr == 0) continue;
        char c;
        ssize_t r = read(STDIN_FILENO, &c, 1);
        if (r < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            free(b.data);
            snprintf(err, errlen, "cannot read the terminal: %s", strerror(errno));
            return -1;
        }
        if (r == 0 || c == '\n') {
            if (r == 0 && b.len == 0) {
                free(b.data);
                return 1;
            }
            break;
        }
        zri_buf_add(&b, &c, 1);
        if (b.len > (1u << 20)) {
            free(b.data);
            snprintf(err, errlen, "the answer is longer than 1 MiB");
            return -1;
        }
    }
    if (b.len && b.data[b.len - 1] == '\r') b.data[--b.len] = 0;
    *line = b.data;
    return 0;
}

static char *trim_inplace(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = 0;
    return s;
}

/* Asks on the terminal (or the pipe or file of standard input); called
 * with term_mu held.  1 (with a message) when the input ended before an
 * answer. */
static int ask_terminal(zri_action_env *env, const zgrt_action *a, const zgrt_value *args,
                        zgrt_value *outs, char *err, size_t errlen)
{
    const zgrt_program *p = env->prog;
    char *prompt = fill_prompt(p, a, a->prompt ? a->prompt : "", args);
    fprintf(stderr, "\n[%s] %s\n", lifeline_name(env), a->name);
    if (*prompt) fprintf(stderr, "%s\n", prompt);
    free(prompt);

    const zgrt_enum *e = a->nresults == 1 ? enum_of(p, a->result_types[0]) : NULL;
    const zgrt_str *current = edit_current(a, args);
    switch (a->human_kind) {
    case ZGRT_HUMAN_SELECT:
        for (int m = 0; m < e->nmembers; m++) fprintf(stderr, "  %d) %s\n", m + 1, e->members[m]);
        break;
    case ZGRT_HUMAN_EDIT:
        fprintf(stderr, "current text:\n%s\n", current ? current->data : "");
        break;
    default: break;
    }

    for (;;) {
        const char *ask = "> ";
        switch (a->human_kind) {
        case ZGRT_HUMAN_CONFIRM: ask = "(y/n) > "; break;
        case ZGRT_HUMAN_SELECT: ask = "number or name > "; break;
        case ZGRT_HUMAN_EDIT: ask = "replacement (empty keeps it) > "; break;
        case ZGRT_HUMAN_ACK: ask = "press Enter to continue "; break;
        default: break;
        }
        fputs(ask, stderr);
        fflush(stderr);
        char *line = NULL;
        int rc = read_line(env, &line, err, errlen);
        if (rc == 1) {
            snprintf(err, errlen, "human action `%s` on %s: end of input before an answer", a->name,
                     lifeline_name(env));
            return 1;
        }
        if (rc < 0) return -1;
        if (env->detail) env->detail(env->note_user, "answer", line);
        /* confirm and select ignore surrounding blanks; input and edit keep them */
        char *t = a->human_kind == ZGRT_HUMAN_CONFIRM || a->human_kind == ZGRT_HUMAN_SELECT
                      ? trim_inplace(line)
                      : line;
        int done = 0;
        switch (a->human_kind) {
        case ZGRT_HUMAN_CONFIRM:
            memset(&outs[0], 0, sizeof outs[0]);
            outs[0].tag = ZGRT_BOOL;
            if (!strcasecmp(t, "y") || !strcasecmp(t, "yes") || !strcasecmp(t, "true")) {
                outs[0].u.i = 1;
                done = 1;
            } else if (!strcasecmp(t, "n") || !strcasecmp(t, "no") || !strcasecmp(t, "false")) {
                outs[0].u.i = 0;
                done = 1;
            } else {
                fputs("please answer y or n\n", stderr);
            }
            break;
        case ZGRT_HUMAN_SELECT: {
            int pick = -1;
            char *end;
            errno = 0;
            long num = strtol(t, &end, 10);
            if (*t && !*end && errno == 0 && num >= 1 && num <= e->nmembers) pick = (int)num - 1;
            for (int m = 0; m < e->nmembers && pick < 0; m++)
                if (strcmp(t, e->members[m]) == 0) pick = m;
            if (pick >= 0) {
                outs[0] = enum_value(a->result_types[0].enum_id, pick);
                done = 1;
            } else {
                fprintf(stderr, "please give a number from 1 to %d or a member name\n",
                        (int)e->nmembers);
            }
            break;
        }
        case ZGRT_HUMAN_INPUT:
        case ZGRT_HUMAN_EDIT:
            if (a->human_kind == ZGRT_HUMAN_EDIT && *line == 0) {
                const char *cur = current ? current->data : "";
                size_t n = current ? (size_t)current->len : 0;
                set_str(env, &outs[0], cur, n);
                done = 1;
            } else if (!zri_utf8_valid(line, strlen(line))) {
                fputs("the answer is not valid UTF-8; please type it again\n", stderr);
            } else {
                set_str(env, &outs[0], line, strlen(line));
                done = 1;
            }
            break;
        case ZGRT_HUMAN_ACK:
            if (a->nresults == 1) {
                memset(&outs[0], 0, sizeof outs[0]);
                outs[0].tag = ZGRT_BOOL;
                outs[0].u.i = 1;
            }
            done = 1;
            break;
        default: break;
        }
        free(line);
        if (done) return 0;
    }
}

/* Standard input can answer: a terminal, or a pipe or file that has a
 * line (or its end) to read within STDIN_GRACE_MS — so `printf 'y\n' |
 * zgc run …` answers, and an idle pipe the run inherited does not hang it. */
#define STDIN_GRACE_MS 100
static int stdin_answers(void)
{
    if (isatty(STDIN_FILENO)) return 1;
    struct stat sb;
    if (fstat(STDIN_FILENO, &sb) != 0 || !(S_ISFIFO(sb.st_mode) || S_ISREG(sb.st_mode))) return 0;
    struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
    return poll(&pfd, 1, STDIN_GRACE_MS) > 0;
}

/* A durable run's human task (rt.h: zri_task): nothing else could
 * answer, so the question waits in the run store for `zgc answer`. */
static int human_task(zri_action_env *env, const zgrt_action *a, const zgrt_value *args,
                      zgrt_value *outs, char *err, size_t errlen)
{
    const zgrt_program *p = env->prog;
    const zgrt_enum *e = a->nresults == 1 ? enum_of(p, a->result_types[0]) : NULL;
    const zgrt_str *current = edit_current(a, args);
    char *prompt = fill_prompt(p, a, a->prompt ? a->prompt : "", args);
    const char *type = a->nresults == 0 ? "none"
                       : a->human_kind == ZGRT_HUMAN_SELECT && e
                           ? e->name
                           : zri_type_name(p, a->result_types[0]);
    zri_task t = {.lifeline = lifeline_name(env),
                  .action = a->name,
                  .key = env->key ? env->key : "",
                  .kind = human_kind_name(a->human_kind),
                  .prompt = prompt,
                  .type = type,
                  .nmembers = a->human_kind == ZGRT_HUMAN_SELECT && e ? e->nmembers : 0,
                  .members = a->human_kind == ZGRT_HUMAN_SELECT && e ? e->members : NULL,
                  .current = a->human_kind == ZGRT_HUMAN_EDIT && current ? current->data : NULL};
    void *answer = NULL;
    int rc = env->visible ? env->visible(env->note_user, err, errlen) : 0;
    if (rc == 0) rc = env->task(env->note_user, &t, &answer, err, errlen);
    free(prompt);
    if (rc == 1) snprintf(err, errlen, "cancelled");
    if (rc != 0) return -1;
    if (env->detail) {
        char *text = json_dumps(answer, JSON_COMPACT | JSON_ENCODE_ANY);
        env->detail(env->note_user, "answer", text);
        free(text);
    }
    rc = human_from_answer(env, a, answer, 0, outs, err, errlen);
    json_decref(answer);
    return rc;
}

static int run_human(zri_action_env *env, const zgrt_action *a, const zgrt_value *args,
                     zgrt_value *outs, char *err, size_t errlen)
{
    const zgrt_program *p = env->prog;
    if (!human_shape_ok(p, a)) {
        snprintf(err, errlen, "human action `%s`: kind `%s` does not fit its outputs", a->name,
                 human_kind_name(a->human_kind));
        return -1;
    }
    if (env->detail) {
        char *q = fill_prompt(p, a, a->prompt ? a->prompt : "", args);
        env->detail(env->note_user, "question", q);
        free(q);
    }
    const char *answers = env->opts ? env->opts->answers : NULL;
    if (answers) {
        void *answer;
        int index;
        int rc = zri_script_next(answers, "human answers", lifeline_name(env), a->name, &answer,
                                 &index, err, errlen);
        if (rc == ZRI_MODEL_OK && env->detail) {
            char *text = json_dumps(answer, JSON_COMPACT | JSON_ENCODE_ANY);
            env->detail(env->note_user, "answer", text);
            free(text);
        }
        if (rc == ZRI_MODEL_OK) {
            env->source |= ZRI_SRC_SCRIPT;
            return human_from_answer(env, a, answer, index, outs, err, errlen);
        }
        if (rc >= 0) return -1;
    }
    int rc = 1;
    snprintf(err, errlen, "human action `%s` on %s needs a terminal or an answer in --answers FILE",
             a->name, lifeline_name(env));
    if (stdin_answers()) {
        /* the human sees the question: what it depends on is committed */
        if (env->visible && env->visible(env->note_user, err, errlen) < 0) return -1;
        pthread_mutex_lock(&term_mu);
        if (cancelled(env)) {
            snprintf(err, errlen, "cancelled");
            rc = -1;
        } else {
            rc = ask_terminal(env, a, args, outs, err, errlen);
        }
        pthread_mutex_unlock(&term_mu);
    }
    if (rc != 1) return rc;
    if (!env->task) return -1;
    return human_task(env, a, args, outs, err, errlen);
}

/* ---- extern pure / effect: the zgrt.h interface -------------------------- */

struct zgrt_call {
    zri_action_env *env;
    const zgrt_action *a;
    const zgrt_value *args;
    zgrt_value *outs;
    unsigned char *set; /* per result: set by zgrt_ret_* */
    int failed;
    char msg[1024];
    char **texts; /* JSON texts handed out by zgrt_arg_json */
    int ntexts, captexts;
};

static void call_fail(zgrt_call *c, const char *fmt, ...) ZRI_PRINTF(2, 3);
static void call_fail(zgrt_call *c, const char *fmt, ...)
{
    if (c->failed) return; /* the first failure is the cause */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->msg, sizeof c->msg, fmt, ap);
    va_end(ap);
    c->failed = 1;
}

static const char *ordinal_name(const char *const *names, int i)
{
    return names && names[i] ? names[i] : NULL;
}

/* The argument i when it exists and has the tag; else fails the call. */
static const zgrt_value *arg_of(zgrt_call *c, int i, int32_t tag, const char *fn)
{
    const zgrt_action *a = c->a;
    if (i < 0 || i >= a->nparams) {
        call_fail(c, "%s(call, %d): `%s` has %d argument%s", fn, i, a->name, (int)a->nparams,
                  a->nparams == 1 ? "" : "s");
        return NULL;
    }
    zgrt_type t = a->param_types[i];
    if (t.tag != tag) {
        const char *name = ordinal_name(a->param_names, i);
        call_fail(c, "%s(call, %d): argument %d%s%s%s of `%s` is a %s", fn, i, i, name ? " (`" : "",
                  name ? name : "", name ? "`)" : "", a->name, zri_type_name(c->env->prog, t));
        return NULL;
    }
    return &c->args[i];
}

/* The result i when it exists and has the tag; else fails the call. */
static int res_ok(zgrt_call *c, int i, int32_t tag, const char *fn)
{
    const zgrt_action *a = c->a;
    if (i < 0 || i >= a->nresults) {
        call_fail(c, "%s(call, %d): `%s` has %d result%s", fn, i, a->name, (int)a->nresults,
                  a->nresults == 1 ? "" : "s");
        return 0;
    }
    zgrt_type t = a->result_types[i];
    if (t.tag != tag) {
        call_fail(c, "%s(call, %d): result %d of `%s` is a %s", fn, i, i, a->name,
                  zri_type_name(c->env->prog, t));
        return 0;
    }
    return 1;
}

ZRI_PUBLIC const char *zgrt_call_action(const zgrt_call *call) { return call ? call->a->name : ""; }

ZRI_PUBLIC const char *zgrt_call_lifeline(const zgrt_call *call)
{
    return call ? lifeline_name(call->env) : "";
}

ZRI_PUBLIC const char *zgrt_call_key(const zgrt_call *call)
{
    return call && call->env->key ? call->env->key : "";
}

ZRI_PUBLIC int zgrt_argc(const zgrt_call *call) { return call ? (int)call->a->nparams : 0; }

ZRI_PUBLIC const zgrt_value *zgrt_arg(const zgrt_call *call, int i)
{
    if (!call || i < 0 || i >= call->a->nparams) return NULL;
    return &call->args[i];
}

ZRI_PUBLIC const char *zgrt_arg_str(zgrt_call *call, int i)
{
    if (!call) return "";
    const zgrt_value *v = arg_of(call, i, ZGRT_STR, "zgrt_arg_str");
    return v && v->tag == ZGRT_STR && v->u.s ? v->u.s->data : "";
}

ZRI_PUBLIC int64_t zgrt_arg_int(zgrt_call *call, int i)
{
    if (!call) return 0;
    const zgrt_value *v = arg_of(call, i, ZGRT_INT, "zgrt_arg_int");
    return v ? v->u.i : 0;
}

ZRI_PUBLIC double zgrt_arg_float(zgrt_call *call, int i)
{
    if (!call) return 0.0;
    const zgrt_value *v = arg_of(call, i, ZGRT_FLOAT, "zgrt_arg_float");
    return v ? v->u.f : 0.0;
}

ZRI_PUBLIC bool zgrt_arg_bool(zgrt_call *call, int i)
{
    if (!call) return false;
    const zgrt_value *v = arg_of(call, i, ZGRT_BOOL, "zgrt_arg_bool");
    return v ? v->u.i != 0 : false;
}

ZRI_PUBLIC int zgrt_arg_enum(zgrt_call *call, int i)
{
    if (!call) return 0;
    const zgrt_value *v = arg_of(call, i, ZGRT_ENUM, "zgrt_arg_enum");
    return v ? (int)((uint64_t)v->u.i & 0xffffffffu) : 0;
}

ZRI_PUBLIC const char *zgrt_arg_json(zgrt_call *call, int i)
{
    if (!call) return "null";
    const zgrt_value *v = arg_of(call, i, ZGRT_JSON, "zgrt_arg_json");
    if (!v || !v->u.j) return "null";
    char *text = json_dumps((const json_t *)v->u.j, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!text) {
        call_fail(call, "zgrt_arg_json(call, %d): out of memory", i);
        return "null";
    }
    if (call->ntexts == call->captexts) {
        int cap = call->captexts ? call->captexts * 2 : 4;
        call->texts = zri_xrealloc(call->texts, (size_t)cap * sizeof *call->texts);
        call->captexts = cap;
    }
    call->texts[call->ntexts++] = text;
    return text;
}

ZRI_PUBLIC int zgrt_resc(const zgrt_call *call) { return call ? (int)call->a->nresults : 0; }

ZRI_PUBLIC void zgrt_ret_str(zgrt_call *call, int i, const char *utf8)
{
    if (!call || !res_ok(call, i, ZGRT_STR, "zgrt_ret_str")) return;
    if (!utf8) {
        call_fail(call, "zgrt_ret_str(call, %d): NULL string", i);
        return;
    }
    size_t n = strlen(utf8);
    if (!zri_utf8_valid(utf8, n)) {
        call_fail(call, "zgrt_ret_str(call, %d): the string is not valid UTF-8", i);
        return;
    }
    set_str(call->env, &call->outs[i], utf8, n);
    call->set[i] = 1;
}

ZRI_PUBLIC void zgrt_ret_int(zgrt_call *call, int i, int64_t v)
{
    if (!call || !res_ok(call, i, ZGRT_INT, "zgrt_ret_int")) return;
    memset(&call->outs[i], 0, sizeof call->outs[i]);
    call->outs[i].tag = ZGRT_INT;
    call->outs[i].u.i = v;
    call->set[i] = 1;
}

ZRI_PUBLIC void zgrt_ret_float(zgrt_call *call, int i, double v)
{
    if (!call || !res_ok(call, i, ZGRT_FLOAT, "zgrt_ret_float")) return;
    if (!isfinite(v)) {
        call_fail(call, "zgrt_ret_float(call, %d): %g is not a finite float", i, v);
        return;
    }
    memset(&call->outs[i], 0, sizeof call->outs[i]);
    call->outs[i].tag = ZGRT_FLOAT;
    call->outs[i].u.f = v;
    call->set[i] = 1;
}

ZRI_PUBLIC void zgrt_ret_bool(zgrt_call *call, int i, bool v)
{
    if (!call || !res_ok(call, i, ZGRT_BOOL, "zgrt_ret_bool")) return;
    memset(&call->outs[i], 0, sizeof call->outs[i]);
    call->outs[i].tag = ZGRT_BOOL;
    call->outs[i].u.i = v ? 1 : 0;
    call->set[i] = 1;
}

ZRI_PUBLIC void zgrt_ret_enum(zgrt_call *call, int i, int member)
{
    if (!call || !res_ok(call, i, ZGRT_ENUM, "zgrt_ret_enum")) return;
    zgrt_type t = call->a->result_types[i];
    const zgrt_enum *e = enum_of(call->env->prog, t);
    if (!e || member < 0 || member >= e->nmembers) {
        call_fail(call, "zgrt_ret_enum(call, %d): %d is not a member of %s (0..%d)", i, member,
                  zri_type_name(call->env->prog, t), e ? (int)e->nmembers - 1 : -1);
        return;
    }
    call->outs[i] = enum_value(t.enum_id, member);
    call->set[i] = 1;
}

ZRI_PUBLIC int zgrt_ret_json(zgrt_call *call, int i, const char *json_text)
{
    if (!call || !res_ok(call, i, ZGRT_JSON, "zgrt_ret_json")) return -1;
    if (!json_text) {
        call_fail(call, "zgrt_ret_json(call, %d): NULL text", i);
        return -1;
    }
    json_error_t je;
    json_t *j = json_loads(json_text, JSON_DECODE_ANY, &je);
    if (!j) {
        call_fail(call, "zgrt_ret_json(call, %d): not JSON (column %d): %s", i, je.column, je.text);
        return -1;
    }
    char why[256] = "";
    zgrt_value v;
    int rc = zri_value_from_jansson(call->env->prog, call->env->heap, j, call->a->result_types[i],
                                    &v, why, sizeof why);
    json_decref(j);
    if (rc < 0) {
        call_fail(call, "zgrt_ret_json(call, %d): %s", i, why);
        return -1;
    }
    call->outs[i] = v;
    call->set[i] = 1;
    return 0;
}

ZRI_PUBLIC int zgrt_fail(zgrt_call *call, const char *fmt, ...)
{
    if (!call) return -1;
    if (!fmt) {
        call_fail(call, "failed");
        return -1;
    }
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    call_fail(call, "%s", buf);
    return -1;
}

zri_action_env *zri_call_env(zgrt_call *call) { return call->env; }
const zgrt_action *zri_call_desc(const zgrt_call *call) { return call->a; }

int zri_call_text(zgrt_call *call, const char *system, const char *user, char **answer, char *err,
                  size_t errlen)
{
    const zgrt_action *a = call->a;
    static const char *const names[] = {"plan"};
    static const zgrt_type types[] = {{ZGRT_STR, -1}};
    zgrt_action q = {.name = a->name,
                     .kind = ZGRT_ACT_LLM,
                     .nresults = 1,
                     .result_names = names,
                     .result_types = types,
                     .system = system,
                     .user = user,
                     .parse = ZGRT_PARSE_TEXT,
                     .retries = 3,
                     .model = a->model,
                     .temperature = a->temperature,
                     .has_temperature = a->has_temperature};
    zgrt_value out;
    memset(&out, 0, sizeof out);
    int attempts = 0;
    if (run_llm(call->env, &q, NULL, &out, &attempts, err, errlen) != 0) return -1;
    if (out.tag != ZGRT_STR || !out.u.s) {
        snprintf(err, errlen, "the model gave no text");
        return -1;
    }
    *answer = zri_xstrndup(out.u.s->data, (size_t)out.u.s->len);
    return 0;
}

static int run_extern(zri_action_env *env, const zgrt_action *a, const zgrt_value *args,
                      zgrt_value *outs, char *err, size_t errlen)
{
    const char *what = a->kind == ZGRT_ACT_EFFECT    ? "effect"
                       : a->kind == ZGRT_ACT_PLANNER ? "planner"
                                                     : "extern action";
    if (a->kind == ZGRT_ACT_PLANNER && !a->fn) {
        snprintf(err, errlen, "planner `%s`: the planner library is not linked in", a->name);
        return -1;
    }
    if (!a->fn) {
        snprintf(err, errlen, "%s `%s` is not linked: give zgc build a C file that defines zg_%s",
                 what, a->name, a->name);
        return -1;
    }
    zgrt_call c;
    memset(&c, 0, sizeof c);
    c.env = env;
    c.a = a;
    c.args = args;
    c.outs = outs;
    c.set = zri_xcalloc((size_t)(a->nresults > 0 ? a->nresults : 1), 1);
    for (int k = 0; k < a->nresults; k++) memset(&outs[k], 0, sizeof outs[k]);
    /* an effect is seen outside the run: what it depends on is committed */
    if (a->kind == ZGRT_ACT_EFFECT && env->visible &&
        env->visible(env->note_user, err, errlen) < 0) {
        free(c.set);
        return -1;
    }

    int r = a->fn(&c);

    int rc = 0;
    if (c.failed) {
        snprintf(err, errlen, "%s", c.msg);
        rc = -1;
    } else if (r != 0) {
        snprintf(err, errlen, "zg_%s returned %d without calling zgrt_fail", a->name, r);
        rc = -1;
    } else {
        for (int k = 0; k < a->nresults; k++) {
            if (!c.set[k]) {
                const char *name = ordinal_name(a->result_names, k);
                snprintf(err, errlen, "zg_%s did not set result %d%s%s%s (a %s)", a->name, k,
                         name ? " (`" : "", name ? name : "", name ? "`)" : "",
                         zri_type_name(env->prog, a->result_types[k]));
                rc = -1;
                break;
            }
        }
    }
    for (int k = 0; k < c.ntexts; k++) free(c.texts[k]);
    free(c.texts);
    free(c.set);
    if (rc != 0 && a->kind == ZGRT_ACT_PLANNER && a->has_fallback && a->fallback) {
        if (env->note)
            env->note(env->note_user, "planner %s: using the fallback: %s", a->name, err);
        char why[64];
        if (use_fallback(env, a, outs, why, sizeof why) < 0) return -1;
        if (errlen) err[0] = 0;
        return 0;
    }
    return rc;
}

/* ---- entry points ------------------------------------------------------ */

/* A replayed call (its results come from the journal): the answers its
 * attempts took from a script (a scripted model, --answers) are taken
 * again, so that the calls after it get the answers they would have. */
static int replay(zri_action_env *env, const zgrt_action *a, char *err, size_t errlen)
{
    if (!(env->replay_source & ZRI_SRC_SCRIPT)) return 0;
    const char *path = NULL, *what = NULL;
    if (a->kind == ZGRT_ACT_LLM) {
        const char *spec = route_spec(env, a);
        if (strncmp(spec, SCRIPTED, strlen(SCRIPTED)) == 0)
            path = spec + strlen(SCRIPTED), what = "scripted model";
    } else if (a->kind == ZGRT_ACT_HUMAN) {
        path = env->opts ? env->opts->answers : NULL, what = "human answers";
    }
    if (!path) {
        snprintf(err, errlen, "the journal says `%s` took scripted answers, but it has no script",
                 a->name);
        return -1;
    }
    for (int i = 0; i < env->replay_attempts; i++) {
        void *answer;
        int index;
        int rc =
            zri_script_next(path, what, lifeline_name(env), a->name, &answer, &index, err, errlen);
        if (rc != ZRI_MODEL_OK) {
            if (rc < 0)
                snprintf(err, errlen, "%s: `%s` has no answer for %s.%s any more", what, path,
                         lifeline_name(env), a->name);
            return -1;
        }
    }
    return 0;
}

int zri_run_action(zri_action_env *env, int32_t action, const zgrt_value *args, zgrt_value *outs,
                   int *attempts, char *err, size_t errlen)
{
    int tries_dummy;
    if (!attempts) attempts = &tries_dummy;
    *attempts = 1;
    if (errlen) err[0] = 0;
    const zgrt_program *p = env->prog;
    if (!p || action < 0 || action >= p->nactions) {
        snprintf(err, errlen, "no action number %d in this program", (int)action);
        return -1;
    }
    const zgrt_action *a = &p->actions[action];
    if (env->replay_attempts > 0) return replay(env, a, err, errlen);
    switch (a->kind) {
    case ZGRT_ACT_LLM: return run_llm(env, a, args, outs, attempts, err, errlen);
    case ZGRT_ACT_HUMAN: return run_human(env, a, args, outs, err, errlen);
    case ZGRT_ACT_EXTERN_PURE:
    case ZGRT_ACT_EFFECT:
    case ZGRT_ACT_PLANNER: return run_extern(env, a, args, outs, err, errlen);
    case ZGRT_ACT_PURE:
        snprintf(err, errlen, "pure action `%s` is compiled inline and cannot be run here",
                 a->name);
        return -1;
    default:
        snprintf(err, errlen, "action `%s` has an unknown kind %d", a->name, (int)a->kind);
        return -1;
    }
}

void zri_actions_shutdown(void) { zri_models_shutdown(); }

int zri_actions_check(const zri_options *o, char *err, size_t errlen)
{
    char why[1024];
    if (o->llm && zri_model_check(o->llm, why, sizeof why) < 0) {
        snprintf(err, errlen, "--llm: %s", why);
        return -1;
    }
    for (int i = 0; i < o->nroutes; i++)
        if (zri_model_check(o->routes[i].spec, why, sizeof why) < 0) {
            snprintf(err, errlen, "--llm-for %s: %s",
                     o->routes[i].lifeline ? o->routes[i].lifeline : "", why);
            return -1;
        }
    if (o->answers && zri_script_check(o->answers, "human answers", why, sizeof why) < 0) {
        snprintf(err, errlen, "--answers: %s", why);
        return -1;
    }
    return 0;
}
