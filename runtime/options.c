/* options.c — the run options of a built workflow (and of `zgc run`).
 *
 * The options, their metavariables and their help texts are the run
 * options of the vocabulary (vocab/vocab.h: ZV_RUN_OPTIONS; scope ZV_RUN
 * for every executable, ZV_EXE for --listen, --peer, --secret-file,
 * --result-file and --error-file of the per-lifeline executables); this
 * file checks their values and prints the usage.  Values: --seed and --schedule take a non-negative integer
 * (--schedule 0: off), --scheduler fibers or threads, --workers 1 to 256,
 * --timeout and --llm-timeout a positive number of
 * seconds, --heartbeat a non-negative number of seconds (default 5; 0:
 * off; at most 10^6), --peer-wait likewise (default 300), --backoff-scale a non-negative factor; --arg,
 * --llm-for and --peer may be repeated.  `-h` and `--help` print the
 * usage on stdout.
 *
 * Every option with a value accepts both `--opt value` and `--opt=value`;
 * --durable and --view take an optional value, only as `--durable=STORE`
 * and `--view=ADDR`, and --exit-when-waiting none (vocab.h: zv_option_value).  A durable run
 * stores the run options it was given (zri_options.stored), so that a
 * resume needs only the run's id.  Parsing only
 * checks the options' own syntax and names (lifelines, actions); which
 * inputs must be given is checked by the core.  The strings in zri_options
 * point into argv, except the route names, which are allocated.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"
#include "suggest.h"

static const char *prog_name(const zgrt_program *p)
{
    return p && p->workflow ? p->workflow : "workflow";
}

static int usage_error(const zgrt_program *p, const char *fmt, ...) ZRI_PRINTF(2, 3);
static int usage_error(const zgrt_program *p, const char *fmt, ...)
{
    va_list ap;
    zri_say_prefix("error");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(run with --help for the options of %s)\n", prog_name(p));
    return -1;
}

static int find_lifeline(const zgrt_program *p, const char *name, size_t n)
{
    for (int i = 0; i < p->nlifelines; i++)
        if (strlen(p->lifelines[i]) == n && memcmp(p->lifelines[i], name, n) == 0) return i;
    return -1;
}

static int find_action(const zgrt_program *p, const char *name)
{
    for (int i = 0; i < p->nactions; i++)
        if (strcmp(p->actions[i].name, name) == 0) return i;
    return -1;
}

static void print_help(const zgrt_program *p)
{
    FILE *o = stdout;
    fprintf(o, "usage: %s [options]\n\n", prog_name(p));
    fprintf(o, "Runs the workflow %s", prog_name(p));
    if (p->source) fprintf(o, " (%s)", p->source);
    fputs(" and prints its result as JSON on stdout.\n\n", o);
    if (p->ninputs) {
        fputs("Inputs, each given once with --arg NAME=VALUE:\n", o);
        for (int i = 0; i < p->ninputs; i++) {
            const zgrt_var *v = &p->vars[p->inputs[i].var];
            fprintf(o, "  %-24s %s, owned by %s\n", v->name, zri_type_name(p, v->type),
                    p->lifelines[p->inputs[i].owner]);
        }
        fputs("  (str values are taken literally, json values are JSON text,\n"
              "   enum values are member names)\n\n",
              o);
    } else {
        fputs("The workflow has no inputs.\n\n", o);
    }
    fputs("Options:\n", o);
    zv_print_options(o, ZV_RUN | ZV_EXE, 27);
    fputs("  -h, --help               show this help\n\n"
          "Exit status: 0 success, 1 run-time error, 2 bad usage.\n",
          o);
    if (p->nlifelines > 1) {
        fputs("\nLifelines:", o);
        for (int i = 0; i < p->nlifelines; i++) fprintf(o, " %s", p->lifelines[i]);
        fputc('\n', o);
    }
}

static void push_pair(int *n, const char ***names, const char ***vals, const char *name,
                      const char *val)
{
    *names = zri_xrealloc((void *)*names, (size_t)(*n + 1) * sizeof **names);
    *vals = zri_xrealloc((void *)*vals, (size_t)(*n + 1) * sizeof **vals);
    (*names)[*n] = name;
    (*vals)[*n] = val;
    (*n)++;
}

/* --arg / --peer: NAME=VALUE with a non-empty NAME */
static int split_pair(const char *s, const char **name_end)
{
    const char *eq = strchr(s, '=');
    if (!eq || eq == s) return -1;
    *name_end = eq;
    return 0;
}

/* A run id: what --run-id accepts and generated ids are (docs/runtime.md). */
static int run_id_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 64 || s[0] == '-') return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

static int parse_route(const zgrt_program *p, const char *s, zri_options *o)
{
    const char *eq = strchr(s, '=');
    if (!eq || eq == s || !eq[1])
        return usage_error(p, "--llm-for expects LIFELINE=SPEC or LIFELINE.ACTION=SPEC, got '%s'",
                           s);
    const char *dot = memchr(s, '.', (size_t)(eq - s));
    size_t ln = (size_t)((dot ? dot : eq) - s);
    if (find_lifeline(p, s, ln) < 0)
        return usage_error(p, "--llm-for: unknown lifeline '%.*s'", (int)ln, s);
    zri_route r = {0};
    r.lifeline = zri_xstrndup(s, ln);
    if (dot) {
        char *act = zri_xstrndup(dot + 1, (size_t)(eq - dot - 1));
        int a = find_action(p, act);
        if (a < 0 || p->actions[a].kind != ZGRT_ACT_LLM) {
            usage_error(p, "--llm-for: '%s' is not an llm action of the workflow", act);
            free(act);
            free((void *)r.lifeline);
            return -1;
        }
        r.action = act;
    }
    r.spec = eq + 1;
    o->routes = zri_xrealloc(o->routes, (size_t)(o->nroutes + 1) * sizeof *o->routes);
    o->routes[o->nroutes++] = r;
    return 0;
}

void zri_options_keep(zri_options *o, const char *opt, const char *val)
{
    size_t len = strlen(opt) + 1 + strlen(val) + 1;
    char *item = zri_xmalloc(len);
    snprintf(item, len, "%s=%s", opt, val);
    o->stored = zri_xrealloc(o->stored, (size_t)(o->nstored + 1) * sizeof *o->stored);
    o->stored[o->nstored++] = item;
}

int zri_options_parse(const zgrt_program *p, int argc, char **argv, zri_options *o)
{
    memset(o, 0, sizeof *o);
    o->llm = "mock";
    o->backoff_scale = 1.0;
    o->heartbeat = ZRI_HEARTBEAT_DEFAULT;
    o->peer_wait = ZRI_PEER_WAIT_DEFAULT;
    const zv_option_info *table = zv_option_table();
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            print_help(p);
            zri_options_free(o);
            return 1;
        }
        /* the option and its value */
        int id = zv_option_lookup(a, ZV_RUN | ZV_EXE);
        if (id < 0) {
            zri_options_free(o);
            if (a[0] == '-') {
                /* the closest option of a run, by name (without =VALUE) */
                ZvSuggest sg;
                zv_suggest_init_until(&sg, a, "=");
                for (int j = 0; j < ZV_OPT__COUNT; j++)
                    if (table[j].scope & (ZV_RUN | ZV_EXE)) zv_suggest_try(&sg, table[j].name);
                if (sg.best)
                    return usage_error(p, "unknown option '%s'; did you mean '%s'?", a, sg.best);
                return usage_error(p, "unknown option '%s'", a);
            }
            return usage_error(p, "unexpected argument '%s' (inputs are given as --arg NAME=VALUE)",
                               a);
        }
        const char *opt = table[id].name, *val;
        size_t n = strlen(opt);
        int how = zv_option_value(&table[id]);
        if (how == ZV_VALUE_NONE && a[n] == '=') {
            zri_options_free(o);
            return usage_error(p, "%s takes no value", opt);
        } else if (how != ZV_VALUE_REQUIRED) {
            val = a[n] == '=' ? a + n + 1 : NULL; /* never the next argument */
        } else if (a[n] == '=') {
            val = a + n + 1;
        } else if (i + 1 < argc) {
            val = argv[++i];
        } else {
            zri_options_free(o);
            return usage_error(p, "%s expects a value", opt);
        }
        if ((table[id].scope & ZV_RUN) && id != ZV_OPT_DURABLE && id != ZV_OPT_RESUME &&
            id != ZV_OPT_RUN_ID && id != ZV_OPT_EXIT_WHEN_WAITING && id != ZV_OPT_VIEW &&
            id != ZV_OPT_OPRECORDS && id != ZV_OPT_STORE_FILE && id != ZV_OPT_STORE_DIR &&
            !(id >= ZV_OPT_NATS && id <= ZV_OPT_NATS_KEY)) {
            /* what a durable run stores of its options (rt.h); a live view
             * belongs to one attempt, the NATS server and credentials to
             * one process (each lifeline's own, on its host); the stores'
             * options are kept by main.c once it knows the workflow has
             * stores (keep_store_options) */
            zri_options_keep(o, opt, val);
        }
        const char *end;
        int bad = 0;
        if (id == ZV_OPT_ARG) {
            if (split_pair(val, &end) < 0) {
                bad = usage_error(p, "--arg expects NAME=VALUE, got '%s'", val);
            } else {
                push_pair(&o->nargs, &o->arg_names, &o->arg_values,
                          zri_xstrndup(val, (size_t)(end - val)), end + 1);
            }
        } else if (id == ZV_OPT_LLM) {
            if (!*val) bad = usage_error(p, "--llm expects a model specification");
            o->llm = val;
        } else if (id == ZV_OPT_LLM_FOR) {
            bad = parse_route(p, val, o);
        } else if (id == ZV_OPT_SEED) {
            char *e;
            errno = 0;
            unsigned long long s = strtoull(val, &e, 10);
            if (!*val || *e || errno || val[0] == '-' || val[0] == '+' || val[0] == ' ')
                bad = usage_error(p, "--seed expects a non-negative integer, got '%s'", val);
            o->seed = (uint64_t)s;
        } else if (id == ZV_OPT_OPRECORDS) {
            if (!*val) bad = usage_error(p, "--oprecords expects a file name");
            o->oprecords = val;
        } else if (id == ZV_OPT_STORE_FILE) {
            if (!*val) bad = usage_error(p, "--store-file expects a file name");
            o->store_file = val;
        } else if (id == ZV_OPT_STORE_DIR) {
            if (!*val) bad = usage_error(p, "--store-dir expects a directory");
            o->store_dir = val;
        } else if (id == ZV_OPT_TRACE) {
            if (!*val) bad = usage_error(p, "--trace expects a file name");
            o->trace = val;
        } else if (id == ZV_OPT_TIMEOUT) {
            double t;
            if (zri_parse_float(val, strlen(val), &t) < 0 || !(t > 0) || t > 1e9)
                bad =
                    usage_error(p, "--timeout expects a positive number of seconds, got '%s'", val);
            else
                o->timeout = t;
        } else if (id == ZV_OPT_LLM_TIMEOUT) {
            double t;
            if (zri_parse_float(val, strlen(val), &t) < 0 || !(t > 0) || t > 1e9)
                bad = usage_error(p, "--llm-timeout expects a positive number of seconds, got '%s'",
                                  val);
            else
                o->llm_timeout = t;
        } else if (id == ZV_OPT_BACKOFF_SCALE) {
            double t;
            if (zri_parse_float(val, strlen(val), &t) < 0 || !(t >= 0) || t > 1e6)
                bad =
                    usage_error(p, "--backoff-scale expects a non-negative number, got '%s'", val);
            else
                o->backoff_scale = t;
        } else if (id == ZV_OPT_SCHEDULE) {
            char *e;
            errno = 0;
            unsigned long long s = strtoull(val, &e, 10);
            if (!*val || *e || errno || val[0] == '-' || val[0] == '+')
                bad =
                    usage_error(p, "--schedule expects a non-negative integer seed, got '%s'", val);
            o->schedule = (uint64_t)s;
        } else if (id == ZV_OPT_SCHEDULER) {
            if (!strcmp(val, "fibers"))
                o->threads = 0;
            else if (!strcmp(val, "threads"))
                o->threads = 1;
            else
                bad = usage_error(p, "--scheduler expects fibers or threads, got '%s'", val);
        } else if (id == ZV_OPT_WORKERS) {
            char *e;
            errno = 0;
            long w = strtol(val, &e, 10);
            if (!*val || *e || errno || w < 1 || w > 256 || val[0] == '+')
                bad = usage_error(
                    p, "--workers expects a number of threads from 1 to 256, got '%s'", val);
            else
                o->workers = (int)w;
        } else if (id == ZV_OPT_ANSWERS) {
            if (!*val) bad = usage_error(p, "--answers expects a file name");
            o->answers = val;
        } else if (id == ZV_OPT_LISTEN) {
            if (!*val) bad = usage_error(p, "--listen expects an address");
            o->listen = val;
        } else if (id == ZV_OPT_PEER) {
            if (split_pair(val, &end) < 0 || !end[1]) {
                bad = usage_error(p, "--peer expects NAME=ADDR, got '%s'", val);
            } else if (find_lifeline(p, val, (size_t)(end - val)) < 0) {
                bad = usage_error(p, "--peer: unknown lifeline '%.*s'", (int)(end - val), val);
            } else {
                for (int j = 0; j < o->npeers; j++)
                    if (strlen(o->peer_names[j]) == (size_t)(end - val) &&
                        memcmp(o->peer_names[j], val, (size_t)(end - val)) == 0)
                        bad = usage_error(p, "--peer: lifeline '%s' given twice", o->peer_names[j]);
                if (!bad) {
                    push_pair(&o->npeers, &o->peer_names, &o->peer_addrs,
                              zri_xstrndup(val, (size_t)(end - val)), end + 1);
                }
            }
        } else if (id == ZV_OPT_HEARTBEAT) {
            double t;
            if (zri_parse_float(val, strlen(val), &t) < 0 || !(t >= 0) || t > 1e6)
                bad = usage_error(
                    p, "--heartbeat expects a non-negative number of seconds (0: off), got '%s'",
                    val);
            else
                o->heartbeat = t;
        } else if (id == ZV_OPT_PEER_WAIT) {
            double t;
            if (zri_parse_float(val, strlen(val), &t) < 0 || !(t >= 0) || t > 1e6)
                bad = usage_error(
                    p, "--peer-wait expects a non-negative number of seconds (0: off), got '%s'",
                    val);
            else
                o->peer_wait = t;
        } else if (id == ZV_OPT_SECRET_FILE) {
            if (!*val) bad = usage_error(p, "--secret-file expects a file name");
            o->secret_file = val;
        } else if (id == ZV_OPT_NATS_REPLICAS) {
            int64_t r;
            if (zri_parse_int(val, strlen(val), &r) < 0 || r < 1 || r > 5)
                bad = usage_error(p, "--nats-replicas expects 1 to 5, got '%s'", val);
            else
                o->nats_replicas = (int)r;
        } else if (id == ZV_OPT_JOURNAL) {
            if (strcmp(val, "sqlite") != 0 && strcmp(val, "nats") != 0 &&
                strncmp(val, "nats:", 5) != 0)
                bad =
                    usage_error(p, "--journal expects sqlite, nats or nats:BUCKET, got '%s'", val);
            else
                o->journal = val;
        } else if (id >= ZV_OPT_NATS && id <= ZV_OPT_RUN) {
            /* checked when the transport opens (runtime/nats) */
            const char **slot = id == ZV_OPT_NATS              ? &o->nats
                                : id == ZV_OPT_NATS_CREDS      ? &o->nats_creds
                                : id == ZV_OPT_NATS_USER       ? &o->nats_user
                                : id == ZV_OPT_NATS_TOKEN_FILE ? &o->nats_token_file
                                : id == ZV_OPT_NATS_NKEY       ? &o->nats_nkey
                                : id == ZV_OPT_NATS_CA         ? &o->nats_ca
                                : id == ZV_OPT_NATS_CERT       ? &o->nats_cert
                                : id == ZV_OPT_NATS_KEY        ? &o->nats_key
                                                               : &o->nats_run;
            if (!*val) bad = usage_error(p, "%s expects a value", opt);
            *slot = val;
        } else if (id == ZV_OPT_VIEW) {
            o->view = val ? val : ""; /* the address is checked when the view opens */
        } else if (id == ZV_OPT_RESULT_FILE) {
            if (!*val) bad = usage_error(p, "--result-file expects a file name");
            o->result_file = val;
        } else if (id == ZV_OPT_ERROR_FILE) {
            if (!*val) bad = usage_error(p, "--error-file expects a file name");
            o->error_file = val;
        } else if (id == ZV_OPT_DURABLE) {
            if (val && !*val) bad = usage_error(p, "--durable= expects a file name");
            o->durable = 1;
            if (val) o->store = val;
        } else if (id == ZV_OPT_RESUME || id == ZV_OPT_RUN_ID) {
            if (!run_id_ok(val))
                bad = usage_error(p,
                                  "%s expects a run id (1 to 64 letters, digits, '.', '_' or '-', "
                                  "not starting with '-'), got '%s'",
                                  opt, val);
            if (id == ZV_OPT_RESUME) {
                o->resume = val;
                o->durable = 1;
            } else {
                o->run_id = val;
            }
        } else if (id == ZV_OPT_EXIT_WHEN_WAITING) {
            o->exit_when_waiting = 1;
        }
        if (bad) {
            zri_options_free(o);
            return -1;
        }
    }
    return 0;
}

void zri_options_free(zri_options *o)
{
    for (int i = 0; i < o->nargs; i++) free((void *)o->arg_names[i]);
    free((void *)o->arg_names);
    free((void *)o->arg_values);
    for (int i = 0; i < o->nroutes; i++) {
        free((void *)o->routes[i].lifeline);
        free((void *)o->routes[i].action);
    }
    free(o->routes);
    for (int i = 0; i < o->npeers; i++) free((void *)o->peer_names[i]);
    free((void *)o->peer_names);
    free((void *)o->peer_addrs);
    for (int i = 0; i < o->nstored; i++) free(o->stored[i]);
    free(o->stored);
    memset(o, 0, sizeof *o);
}
