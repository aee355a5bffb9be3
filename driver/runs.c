/* runs.c — the commands of durable runs (prefix zo_): `zgc runs
 * list|show|cancel|gc|resume`, `zgc tasks` and `zgc answer`, on the run
 * store (store.c).  They never link the runtime: what they know of a run
 * is what the store says (docs/runtime.md, "Durable runs"), and a resume
 * starts the run's executables (launch.c) with --resume.
 *
 * Exit status: 0 success, 1 an error (an unknown run or task, an answer
 * that does not fit, a run that cannot be resumed, a run that failed), 2
 * bad usage, 3 a resumed run stopped to wait for humans
 * (--exit-when-waiting), 4 the run store cannot be used. */
#define _GNU_SOURCE
#include "runs.h"
#include "kvstore.h"
#include "launch.h"
#include "store.h"
#include "usage.h"
#include "zgc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The credentials of --nats, as the lifelines' executables take them. */
#define NATS_AUTH_HELP                                                          \
    "  --nats-creds FILE    NATS: user credentials (JWT and NKey seed)\n"       \
    "  --nats-user USER     NATS: a user, its password in $ZGC_NATS_PASSWORD\n" \
    "  --nats-token-file FILE  NATS: a token (else $ZGC_NATS_TOKEN)\n"          \
    "  --nats-nkey FILE     NATS: an NKey user seed\n"                          \
    "  --nats-ca FILE       NATS over TLS: the trusted certificates\n"          \
    "  --nats-cert FILE, --nats-key FILE  NATS over TLS: a client certificate\n"

static const char usage_runs[] =
    "usage: zgc runs list [--json] [--store STORE | --nats URL [--journal nats[:BUCKET]]]\n"
    "       zgc runs show RUN [--json] [--store STORE | --nats URL [--journal nats[:BUCKET]]]\n"
    "       zgc runs cancel RUN [--store STORE | --nats URL [--journal nats[:BUCKET]]]\n"
    "       zgc runs gc [--failed] [--store STORE | --nats URL [--journal nats[:BUCKET]]]\n"
    "       zgc runs resume RUN [--exit-when-waiting] [--store STORE |\n"
    "                       --nats URL [--journal nats[:BUCKET]] [--secret-file FILE]]\n"
    "\n"
    "Durable runs (zgc run --durable) in the run store STORE (default:\n"
    "$ZGC_STORE, else .zgc/runs.db):\n"
    "  list     every run: id, workflow, status, attempts, pending tasks\n"
    "  show     one run: per lifeline its status, where it is, its last actions;\n"
    "           its pending tasks and its result or error\n"
    "  cancel   stops the run (a process running it stops at its next commit)\n"
    "           and cancels its pending tasks; it cannot be resumed\n"
    "  gc       removes the runs that are done or cancelled (with --failed, the\n"
    "           failed ones too) and the cached builds no run needs any more\n"
    "  resume   continues a run that was interrupted, failed or waited for\n"
    "           humans, with its stored program, inputs and options\n"
    "\n"
    "  --json               the output as JSON\n"
    "  --store STORE        the run store\n"
    "  --nats URL           the runs journaled in a key-value bucket (--journal nats)\n"
    "                       of the NATS server at URL (resume: starts here the\n"
    "                       executables of the lifelines that have not ended)\n"
    "  --journal nats:BUCKET  that bucket (default ZGC_JOURNAL)\n"
    "  --secret-file FILE   resume --nats: the run's secret (default: the one `zgc run\n"
    "                       --processes --nats --durable` kept, "
    ".zgc/secrets/RUN.key)\n" NATS_AUTH_HELP "  --failed             gc: remove failed runs too\n"
    "  --exit-when-waiting  resume: stop (exit 3) when only humans can go on\n"
    "  -h, --help           show this help\n"
    "\n"
    "Run status: running, waiting (for human tasks), done, failed, cancelled,\n"
    "interrupted (marked running, but no process runs it: resume it).\n"
    "\n"
    "exit status: 0 success, 1 error, 2 bad usage, 3 the resumed run waits for\n"
    "humans, 4 the run store cannot be used.\n";

static const char usage_tasks[] =
    "usage: zgc tasks [RUN] [--all] [--json] [--store STORE | --nats URL [--journal "
    "nats[:BUCKET]]]\n"
    "\n"
    "Lists the pending human tasks of durable runs (of RUN only, when given):\n"
    "a human action that no terminal, pipe or --answers file answered waits\n"
    "for `zgc answer`.  Each task has its run, number, lifeline, action, kind\n"
    "(confirm, input, select, edit, ack), the answer's type and the prompt.\n"
    "\n"
    "  --all          every task, answered and cancelled ones too\n"
    "  --json         the output as JSON\n"
    "  --store STORE  the run store (default: $ZGC_STORE, else .zgc/runs.db)\n"
    "  --nats URL     the runs journaled in a key-value bucket (--journal nats) of\n"
    "                 the NATS server at URL; --journal nats:BUCKET names the\n"
    "                 bucket (default ZGC_JOURNAL)\n" NATS_AUTH_HELP
    "  -h, --help     show this help\n"
    "\n"
    "exit status: 0 success, 1 error, 2 bad usage, 4 the run store cannot be used.\n";

static const char usage_answer[] =
    "usage: zgc answer RUN TASK VALUE [--store STORE | --nats URL [--journal nats[:BUCKET]]]\n"
    "\n"
    "Answers human task TASK of durable run RUN; the waiting lifeline goes on\n"
    "(or takes the answer when the run is resumed).  VALUE is read as on a\n"
    "terminal and checked against the task:\n"
    "  confirm  y, yes, true or n, no, false (any case)\n"
    "  input    the text\n"
    "  select   a member's name or its number (from 1)\n"
    "  edit     the new text (an empty VALUE keeps the current one)\n"
    "  ack      anything\n"
    "\n"
    "  --store STORE  the run store (default: $ZGC_STORE, else .zgc/runs.db)\n"
    "  --nats URL     a run journaled in a key-value bucket (--journal nats) of the\n"
    "                 NATS server at URL; --journal nats:BUCKET names the bucket\n"
    "                 (default ZGC_JOURNAL)\n" NATS_AUTH_HELP "  -h, --help     show this help\n"
    "\n"
    "exit status: 0 answered, 1 no such pending task or a VALUE that does not\n"
    "fit, 2 bad usage, 4 the run store cannot be used.\n";

static int usage_error(const char *usage, const char *fmt, const char *arg)
{
    return zus_error(usage, fmt, arg);
}

/* The options every command here takes; the others are positional. */
typedef struct Args {
    const char *store;
    const char *nats, *bucket; /* --nats URL, --journal nats[:BUCKET] */
    ZkAuth auth;               /* --nats-creds, --nats-user, … */
    const char *nats_auth;     /* one of those options given (for messages) */
    bool json, all, failed, exit_when_waiting;
    const char *secret_file; /* runs resume --nats: --secret-file FILE */
    const char *pos[4];
    int npos;
} Args;

/* The options of a bucket's runs (each takes a value). */
static const char *const nats_names[] = {"--nats",      "--journal",         "--nats-creds",
                                         "--nats-user", "--nats-token-file", "--nats-nkey",
                                         "--nats-ca",   "--nats-cert",       "--nats-key"};

/* The index in nats_names of option s (or OPT=VALUE), or -1. */
static int nats_option(const char *s)
{
    size_t n = strcspn(s, "=");
    for (size_t i = 0; i < sizeof nats_names / sizeof nats_names[0]; i++)
        if (strlen(nats_names[i]) == n && !strncmp(s, nats_names[i], n)) return (int)i;
    return -1;
}

/* -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, const char *usage, const char *flags, int maxpos,
                      Args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
            fputs(usage, stdout);
            return 0;
        } else if (!strcmp(s, "--store")) {
            if (++i >= argc) return usage_error(usage, "%s needs a file", s);
            a->store = argv[i];
        } else if (!strncmp(s, "--store=", 8)) {
            a->store = s + 8;
        } else if (nats_option(s) >= 0 && strchr(flags, 'n')) {
            /* --nats URL, --journal nats[:BUCKET], the credentials; or OPT=VALUE */
            int which = nats_option(s);
            const char *eq = strchr(s, '=');
            if (!eq && ++i >= argc) return usage_error(usage, "%s needs a value", s);
            const char *v = eq ? eq + 1 : argv[i];
            const char **slot[] = {
                &a->nats,      NULL,        &a->auth.creds, &a->auth.user, &a->auth.token_file,
                &a->auth.nkey, &a->auth.ca, &a->auth.cert,  &a->auth.key};
            if (slot[which]) {
                *slot[which] = v;
                if (which > 0) a->nats_auth = nats_names[which];
            } else if (!strcmp(v, "nats")) {
                a->bucket = ZK_BUCKET;
            } else if (!strncmp(v, "nats:", 5) && v[5]) {
                a->bucket = v + 5;
            } else {
                return usage_error(usage,
                                   "--journal takes nats or nats:BUCKET here (the run store is "
                                   "--store), got `%s`",
                                   v);
            }
        } else if (!strcmp(s, "--json") && strchr(flags, 'j')) {
            a->json = true;
        } else if (!strcmp(s, "--all") && strchr(flags, 'a')) {
            a->all = true;
        } else if (!strcmp(s, "--failed") && strchr(flags, 'f')) {
            a->failed = true;
        } else if (!strcmp(s, "--exit-when-waiting") && strchr(flags, 'w')) {
            a->exit_when_waiting = true;
        } else if (!strncmp(s, "--secret-file", 13) && (!s[13] || s[13] == '=') &&
                   strchr(flags, 's')) {
            if (!s[13] && ++i >= argc) return usage_error(usage, "%s needs a file", s);
            a->secret_file = s[13] ? s + 14 : argv[i];
        } else if (s[0] == '-' && s[1] && strcmp(s, "--") != 0) {
            return usage_error(usage, "unknown option `%s`", s);
        } else {
            if (!strcmp(s, "--")) {
                if (++i >= argc) break;
                s = argv[i];
            }
            if (a->npos >= maxpos) return usage_error(usage, "unexpected argument `%s`", s);
            a->pos[a->npos++] = s;
        }
    }
    if ((a->bucket || a->nats_auth) && !a->nats)
        return usage_error(usage, "%s needs --nats URL", a->bucket ? "--journal" : a->nats_auth);
    if (a->nats && a->store)
        return usage_error(usage, "%s", "--store and --nats name two different places");
    if (a->nats && !a->bucket) a->bucket = ZK_BUCKET;
    return -1;
}

/* Where the runs are: a run store, or a key-value bucket (--nats). */
typedef struct Src {
    ZsStore *s;
    ZkStore *k;
} Src;

/* 0 with src, else the exit status after printing why. */
static int src_open(const Args *a, Src *src)
{
    char err[ZS_ERRLEN];
    memset(src, 0, sizeof *src);
    if (a->nats) {
        src->k = zk_open(a->nats, &a->auth, a->bucket, err);
    } else {
        char *path = zs_path(a->store);
        src->s = zs_open(path, err);
        free(path);
    }
    if (src->s || src->k) return 0;
    fprintf(stderr, "zgc: error: %s\n", err);
    return ZS_EXIT_STORE;
}

static void src_close(Src *src)
{
    if (src->s) zs_close(src->s);
    if (src->k) zk_close(src->k);
}

static const char *src_where(const Src *src)
{
    if (src->k) return zk_where(src->k);
    return zs_file(src->s);
}

static int src_runs(Src *src, ZsRun **out, int *n, char *err)
{
    return src->k ? zk_runs(src->k, out, n, err) : zs_runs(src->s, out, n, err);
}

static int src_run(Src *src, const char *id, ZsRun *out, char *err)
{
    return src->k ? zk_run(src->k, id, out, err) : zs_run(src->s, id, out, err);
}

static int src_tasks(Src *src, const char *id, bool all, ZsTask **out, int *n, char *err)
{
    return src->k ? zk_tasks(src->k, id, all, out, n, err) : zs_tasks(src->s, id, all, out, n, err);
}

/* Its lifelines and tasks. */
static int src_details(Src *src, const ZsRun *r, ZsLife **lives, int *nl, ZsTask **tasks, int *nt,
                       char *err)
{
    *tasks = NULL;
    *nt = 0;
    if (src->k)
        return zk_lifelines(src->k, r, lives, nl, err) < 0
                   ? -1
                   : zk_tasks(src->k, r->id, true, tasks, nt, err);
    if (zs_lifelines(src->s, r, lives, nl, err) < 0) return -1;
    return zs_tasks(src->s, r->id, true, tasks, nt, err);
}

/* Opens the store of a; NULL after printing why (exit ZS_EXIT_STORE). */
static ZsStore *open_store(const Args *a)
{
    char err[ZS_ERRLEN];
    char *path = zs_path(a->store);
    ZsStore *s = zs_open(path, err);
    free(path);
    if (!s) fprintf(stderr, "zgc: error: %s\n", err);
    return s;
}

static int store_error(const char *err)
{
    fprintf(stderr, "zgc: error: %s\n", err);
    return ZS_EXIT_STORE;
}

static void time_text(double t, char *out, size_t n)
{
    time_t s = (time_t)t;
    struct tm tm;
    localtime_r(&s, &tm);
    strftime(out, n, "%Y-%m-%d %H:%M:%S", &tm);
}

/* Prints a JSON value on stdout, indented. */
static void print_json(json_t *v)
{
    char *s = json_dumps(v, JSON_INDENT(2) | JSON_ENCODE_ANY);
    if (!s) zu_oom();
    puts(s);
    free(s);
    json_decref(v);
}

static json_t *jstr(const char *s) { return s ? json_string(s) : json_null(); }

/* A stored JSON text as a value (or its text, when it is not JSON). */
static json_t *jparse(const char *s)
{
    if (!s) return json_null();
    json_error_t e;
    json_t *v = json_loads(s, JSON_DECODE_ANY, &e);
    return v ? v : json_string(s);
}

static json_t *run_json(const ZsRun *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "run", jstr(r->id));
    json_object_set_new(o, "workflow", jstr(r->workflow));
    json_object_set_new(o, "source", jstr(r->source));
    json_object_set_new(o, "status", json_string(zs_status(r)));
    json_object_set_new(o, "mode", jstr(r->mode));
    json_object_set_new(o, "attempts", json_integer(r->attempts));
    json_object_set_new(o, "pending_tasks", json_integer(r->pending));
    json_object_set_new(o, "created", json_real(r->created));
    json_object_set_new(o, "updated", json_real(r->updated));
    return o;
}

static int runs_list(const Args *a)
{
    Src s;
    int rc = src_open(a, &s);
    if (rc) return rc;
    char err[ZS_ERRLEN];
    ZsRun *runs;
    int n;
    if (src_runs(&s, &runs, &n, err) < 0) {
        src_close(&s);
        return store_error(err);
    }
    if (a->json) {
        json_t *arr = json_array();
        for (int i = 0; i < n; i++) json_array_append_new(arr, run_json(&runs[i]));
        print_json(arr);
    } else if (n == 0) {
        printf("no runs in %s\n", src_where(&s));
    } else {
        printf("%-28s %-20s %-12s %8s %6s  %s\n", "RUN", "WORKFLOW", "STATUS", "ATTEMPTS", "TASKS",
               "UPDATED");
        for (int i = 0; i < n; i++) {
            char t[64];
            time_text(runs[i].updated, t, sizeof t);
            printf("%-28s %-20s %-12s %8d %6d  %s\n", runs[i].id, runs[i].workflow,
                   zs_status(&runs[i]), runs[i].attempts, runs[i].pending, t);
        }
    }
    for (int i = 0; i < n; i++) zs_run_free(&runs[i]);
    free(runs);
    src_close(&s);
    return 0;
}

static json_t *task_json(const ZsTask *t)
{
    json_t *o = json_object();
    json_object_set_new(o, "run", jstr(t->run));
    json_object_set_new(o, "task", json_integer(t->task));
    json_object_set_new(o, "lifeline", jstr(t->lifeline));
    json_object_set_new(o, "action", jstr(t->action));
    json_object_set_new(o, "kind", jstr(t->kind));
    json_object_set_new(o, "type", jstr(t->type));
    json_object_set_new(o, "prompt", jstr(t->prompt));
    json_object_set_new(o, "members", jparse(t->members));
    json_object_set_new(o, "current", jstr(t->current));
    json_object_set_new(o, "status", jstr(t->status));
    json_object_set_new(o, "answer", jparse(t->answer));
    return o;
}

/* One line of a prompt: its first line, cut. */
static void print_prompt(const char *p)
{
    size_t n = strcspn(p ? p : "", "\n");
    printf("%.*s%s", (int)(n > 60 ? 60 : n), p ? p : "", n > 60 || (p && p[n]) ? "…" : "");
}

static void print_tasks_table(const ZsTask *t, int n, bool with_run)
{
    if (with_run) printf("%-28s ", "RUN");
    printf("%5s %-12s %-16s %-8s %-10s %-9s %s\n", "TASK", "LIFELINE", "ACTION", "KIND", "TYPE",
           "STATUS", "PROMPT");
    for (int i = 0; i < n; i++) {
        if (with_run) printf("%-28s ", t[i].run);
        printf("%5lld %-12s %-16s %-8s %-10s %-9s ", t[i].task, t[i].lifeline, t[i].action,
               t[i].kind, t[i].type, t[i].status);
        print_prompt(t[i].prompt);
        putchar('\n');
    }
}

static int runs_show(const Args *a)
{
    if (a->npos != 1) return usage_error(usage_runs, "%s", "runs show needs a RUN");
    Src s;
    int rc = src_open(a, &s);
    if (rc) return rc;
    char err[ZS_ERRLEN];
    ZsRun r;
    int found = src_run(&s, a->pos[0], &r, err);
    if (found <= 0) {
        rc = found < 0 ? store_error(err) : 1;
        if (!found)
            fprintf(stderr, "zgc: error: no run %s in the %s%s\n", a->pos[0],
                    s.k ? "" : "run store ", src_where(&s));
        src_close(&s);
        return rc;
    }
    ZsLife *lives = NULL;
    ZsTask *tasks = NULL;
    int nl = 0, nt = 0;
    if (src_details(&s, &r, &lives, &nl, &tasks, &nt, err) < 0) rc = store_error(err);
    if (rc == 0 && a->json) {
        json_t *o = run_json(&r);
        json_object_set_new(o, "fingerprint", jstr(r.fingerprint));
        json_object_set_new(o, "cwd", jstr(r.cwd));
        json_object_set_new(o, "executable", jstr(r.executable));
        json_object_set_new(o, "options", jparse(r.options));
        json_object_set_new(o, "result", jparse(r.result));
        json_object_set_new(o, "error", jstr(r.error));
        json_t *ls = json_array();
        for (int i = 0; i < nl; i++) {
            json_t *l = json_object();
            json_object_set_new(l, "lifeline", jstr(lives[i].name));
            /* marked running, but its process is gone: interrupted (in a
             * run whose other processes go on, they wait for it) */
            bool gone = lives[i].status && !strcmp(lives[i].status, "running") && !lives[i].live;
            json_object_set_new(l, "status", jstr(gone ? "interrupted" : lives[i].status));
            json_object_set_new(l, "state", jstr(lives[i].state));
            json_object_set_new(l, "attempt", json_integer(lives[i].attempt));
            json_object_set_new(l, "events", json_integer(lives[i].events));
            json_object_set_new(l, "process",
                                lives[i].live ? json_integer(lives[i].pid) : json_null());
            json_object_set_new(l, "recent", jparse(lives[i].recent));
            json_object_set_new(l, "error", jstr(lives[i].error));
            json_array_append_new(ls, l);
        }
        json_object_set_new(o, "lifelines", ls);
        json_t *ts = json_array();
        for (int i = 0; i < nt; i++) json_array_append_new(ts, task_json(&tasks[i]));
        json_object_set_new(o, "tasks", ts);
        print_json(o);
    } else if (rc == 0) {
        printf("run %s: workflow %s (%s), %s\n", r.id, r.workflow, r.source,
               !strcmp(r.mode, "processes") ? "one process per lifeline" : "one process");
        printf("status: %s, attempt %d\n", zs_status(&r), r.attempts);
        char t1[64], t2[64];
        time_text(r.created, t1, sizeof t1);
        time_text(r.updated, t2, sizeof t2);
        printf("started %s, updated %s\n", t1, t2);
        printf("fingerprint: %.16s…\n", r.fingerprint ? r.fingerprint : "");
        printf("lifelines:\n");
        for (int i = 0; i < nl; i++) {
            const ZsLife *l = &lives[i];
            const char *st =
                l->status && !strcmp(l->status, "running") && !l->live ? "interrupted" : l->status;
            printf("  %-12s %-12s %6lld events  %s\n", l->name, st, l->events,
                   l->state ? l->state : "");
            if (r.live && st != l->status)
                printf("      its peers wait for it (--peer-wait): restart %s with --resume %s and "
                       "the wiring options it was started with\n",
                       l->executable ? l->executable : "its executable", r.id);
            json_t *rec = l->recent ? jparse(l->recent) : NULL;
            size_t k;
            json_t *e;
            json_array_foreach(rec, k, e)
            {
                char *txt = json_dumps(json_object_get(e, "results"), JSON_COMPACT);
                char *raw = json_dumps(json_object_get(e, "answer"), JSON_ENCODE_ANY);
                printf("      %s -> %s%s%s%s\n", json_string_value(json_object_get(e, "action")),
                       txt ? txt : "?", raw ? " (the model's answer: " : "", raw ? raw : "",
                       raw ? ")" : "");
                free(txt);
                free(raw);
            }
            json_decref(rec);
        }
        int pending = 0;
        for (int i = 0; i < nt; i++) pending += !strcmp(tasks[i].status, "pending");
        if (nt) {
            printf("tasks (%d pending):\n", pending);
            print_tasks_table(tasks, nt, false);
        }
        if (r.result) printf("result: %s\n", r.result);
        if (r.error) printf("error: %s\n", r.error);
    }
    for (int i = 0; i < nl; i++) zs_life_free(&lives[i]);
    for (int i = 0; i < nt; i++) zs_task_free(&tasks[i]);
    free(lives);
    free(tasks);
    zs_run_free(&r);
    src_close(&s);
    return rc;
}

static int runs_cancel(const Args *a)
{
    if (a->npos != 1) return usage_error(usage_runs, "%s", "runs cancel needs a RUN");
    Src s;
    int rc = src_open(a, &s);
    if (rc) return rc;
    char err[ZS_ERRLEN];
    rc = s.k ? zk_cancel(s.k, a->pos[0], err) : zs_cancel(s.s, a->pos[0], err);
    src_close(&s);
    if (rc < 0) return store_error(err);
    if (rc == 0) {
        fprintf(stderr, "zgc: error: %s\n", err);
        return 1;
    }
    printf("cancelled run %s\n", a->pos[0]);
    return 0;
}

/* ---- the cache of builds ----------------------------------------------------- */

char *zo_cache_dir(const char *store)
{
    char *dir;
    const char *slash = strrchr(store, '/');
    if (asprintf(&dir, "%.*s/cache", slash ? (int)(slash - store) : 1, slash ? store : ".") < 0)
        zu_oom();
    return dir;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    if (remove(path) != 0 && errno != ENOENT)
        fprintf(stderr, "zgc: warning: cannot remove %s: %s\n", path, strerror(errno));
    return 0;
}

void zo_remove_tree(const char *dir) { nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

/* The builds in the cache (directories FINGERPRINT-RUNTIME: 64 and 16
 * hex digits) that no executable of keep is in, and builds that were left
 * unfinished (build-XXXXXX, an hour old). */
static int gc_cache(const char *store, char **keep)
{
    char *cache = zo_cache_dir(store);
    int removed = 0;
    struct dirent **ents;
    int k = scandir(cache, &ents, NULL, alphasort);
    for (int i = 0; i < k; i++) {
        const char *nm = ents[i]->d_name;
        /* FINGERPRINT-RUNTIME (driver/main.c), and builds left behind */
        bool build = strlen(nm) == 81 && strspn(nm, "0123456789abcdef") == 64 && nm[64] == '-' &&
                     strspn(nm + 65, "0123456789abcdef") == 16;
        if (build || !strncmp(nm, "build-", 6)) {
            char *dir;
            if (asprintf(&dir, "%s/%s/", cache, nm) < 0) zu_oom();
            /* an unfinished build younger than an hour may be going on */
            struct stat sb;
            bool used = !build && stat(dir, &sb) == 0 && time(NULL) - sb.st_mtime < 3600;
            for (char **kp = keep; kp && *kp && !used; kp++) used = !strncmp(*kp, dir, strlen(dir));
            if (!used) {
                dir[strlen(dir) - 1] = 0;
                zo_remove_tree(dir);
                removed++;
            }
            free(dir);
        }
        free(ents[i]);
    }
    if (k > 0) free(ents);
    free(cache);
    return removed;
}

/* The stores of durable runs (DIR/stores/RUN, runtime/durable: beside the
 * run store DIR/FILE) whose run is no longer in the store. */
static int gc_stores(ZsStore *s)
{
    const char *file = zs_file(s);
    const char *slash = strrchr(file, '/');
    char *dir;
    if (asprintf(&dir, "%.*s/stores", slash ? (int)(slash - file) : 1, slash ? file : ".") < 0)
        zu_oom();
    int removed = 0;
    struct dirent **ents;
    int k = scandir(dir, &ents, NULL, alphasort);
    for (int i = 0; i < k; i++) {
        const char *nm = ents[i]->d_name;
        char err[ZS_ERRLEN];
        ZsRun r;
        int have = nm[0] == '.' ? 1 : zs_run(s, nm, &r, err);
        if (have > 0 && nm[0] != '.') zs_run_free(&r);
        if (have == 0) {
            char *path;
            if (asprintf(&path, "%s/%s", dir, nm) < 0) zu_oom();
            zo_remove_tree(path);
            free(path);
            removed++;
        } else if (have < 0) {
            fprintf(stderr, "zgc: warning: the stores of run %s stay: %s\n", nm, err);
        }
        free(ents[i]);
    }
    if (k > 0) free(ents);
    free(dir);
    return removed;
}

static int runs_gc(const Args *a)
{
    if (a->nats) {
        Src src;
        int rc = src_open(a, &src);
        if (rc) return rc;
        char err[ZS_ERRLEN];
        int removed = 0;
        rc = zk_gc(src.k, a->failed, &removed, err);
        src_close(&src);
        printf("removed %d run%s\n", removed, removed == 1 ? "" : "s");
        return rc < 0 ? store_error(err) : 0;
    }
    ZsStore *s = open_store(a);
    if (!s) return ZS_EXIT_STORE;
    char err[ZS_ERRLEN];
    int removed;
    char **keep;
    int rc = zs_gc(s, a->failed, &removed, &keep, err);
    if (rc < 0) {
        zs_close(s);
        return store_error(err);
    }
    int builds = gc_cache(zs_file(s), keep);
    int stores = gc_stores(s);
    for (char **k = keep; *k; k++) free(*k);
    free(keep);
    printf("removed %d run%s and %d cached build%s", removed, removed == 1 ? "" : "s", builds,
           builds == 1 ? "" : "s");
    if (stores) printf(", and the stores of %d run%s", stores, stores == 1 ? "" : "s");
    printf("\n");
    zs_close(s);
    return 0;
}

/* ---- resume ----------------------------------------------------------------- */

/* The value of option `name` ("--trace") in a stored options array. */
static char *stored_option(const char *options, const char *name)
{
    json_error_t e;
    json_t *arr = options ? json_loads(options, 0, &e) : NULL;
    char *val = NULL;
    size_t i;
    json_t *it;
    size_t n = strlen(name);
    json_array_foreach(arr, i, it)
    {
        const char *s = json_string_value(it);
        if (s && !strncmp(s, name, n) && s[n] == '=') {
            free(val);
            val = strdup(s + n + 1);
        }
    }
    json_decref(arr);
    return val;
}

/* The result the lifelines of a resumed run composed in the store. */
typedef struct Stored {
    const char *path, *id;
} Stored;

static char *stored_result(void *u)
{
    Stored *st = u;
    char err[ZS_ERRLEN];
    ZsStore *s = zs_open(st->path, err);
    ZsRun r;
    char *text = NULL;
    int found = s ? zs_run(s, st->id, &r, err) : -1;
    if (found < 0)
        fprintf(stderr, "zgc: error: %s\n", err);
    else if (!found || !r.result)
        fprintf(stderr, "zgc: error: run %s ended without a result in the run store\n", st->id);
    else
        text = strdup(r.result);
    if (found > 0) zs_run_free(&r);
    zs_close(s);
    return text;
}

/* Appends the option name=value (when value is given) to args. */
static void add_opt(char ***args, int *n, const char *name, const char *value)
{
    if (!value) return;
    *args = realloc(*args, (size_t)(*n + 3) * sizeof **args);
    if (!*args) zu_oom();
    (*args)[(*n)++] = (char *)name;
    (*args)[(*n)++] = (char *)value;
    (*args)[*n] = NULL;
}

/* zgc runs resume RUN --nats URL: the run's lifelines that have not
 * ended, each started here from the executable its record names, with
 * --resume, the server, the bucket, the run's secret and these
 * credentials; the result composed in the bucket is printed. */
static int resume_nats_with(const Args *a);
static int resume_nats(const Args *a)
{
    const char *id = a->pos[0];
    /* without --secret-file: the secret `zgc run --processes --nats
     * --durable` kept beside the run store (launch.c) */
    char *kept = a->secret_file ? NULL : zs_secret_path(a->store, id);
    if (kept && access(kept, R_OK) != 0) {
        free(kept);
        return usage_error(usage_runs, "%s",
                           "runs resume --nats needs the run's secret: --secret-file FILE (the "
                           "file its lifelines were started with)");
    }
    Args with_key = *a;
    if (kept) with_key.secret_file = kept;
    int krc = resume_nats_with(&with_key);
    if (kept && krc == 0) unlink(kept); /* the run is done: its kept secret goes */
    free(kept);
    return krc;
}

/* The executables of run r's lifelines that have no record (their
 * processes never started): beside a started one's, DIR/<workflow>.<Lifeline>,
 * as zgc build names them.  0 with *out, or 1 after a message. */
static int never_started(ZkStore *k, const ZsRun *r, const ZsLife *lives, int nl, char ***out,
                         int *nout)
{
    *out = NULL;
    *nout = 0;
    char err[ZS_ERRLEN], **names = NULL;
    int nn = 0;
    if (zk_run_names(k, r->id, &names, &nn, err) < 0) return store_error(err);
    const char *beside = NULL;
    for (int i = 0; i < nl && !beside; i++)
        if (lives[i].executable && strrchr(lives[i].executable, '/')) beside = lives[i].executable;
    int rc = 0;
    if (nn != r->nlifelines || !beside) {
        /* a record of an earlier zgc (no names), or no started lifeline
         * with an executable to look beside */
        fprintf(stderr,
                "zgc: error: run %s cannot be resumed here: %d of its %d lifelines never "
                "started (start them with their executables and --run %s)\n",
                r->id, r->nlifelines - nl, r->nlifelines, r->id);
        rc = 1;
    }
    char **exes = zu_xcalloc((size_t)nn + 1, sizeof *exes);
    int m = 0;
    int dirlen = beside ? (int)(strrchr(beside, '/') - beside) : 0;
    for (int i = 0; i < nn && rc == 0; i++) {
        bool started = false;
        for (int j = 0; j < nl && !started; j++)
            started = lives[j].name && !strcmp(lives[j].name, names[i]);
        if (started) continue;
        char *exe;
        if (asprintf(&exe, "%.*s/%s.%s", dirlen, beside, r->workflow, names[i]) < 0) zu_oom();
        if (access(exe, X_OK) != 0) {
            fprintf(stderr,
                    "zgc: error: run %s cannot be resumed here: lifeline %s never started and "
                    "its executable is not beside the others (%s); start it with its executable "
                    "and --run %s\n",
                    r->id, names[i], exe, r->id);
            free(exe);
            rc = 1;
        } else {
            exes[m++] = exe;
        }
    }
    for (int i = 0; i < nn; i++) free(names[i]);
    free(names);
    if (rc) {
        for (int i = 0; i < m; i++) free(exes[i]);
        free(exes);
        return rc;
    }
    *out = exes;
    *nout = m;
    return 0;
}

static int resume_nats_with(const Args *a)
{
    const char *id = a->pos[0];
    Src src;
    int rc = src_open(a, &src);
    if (rc) return rc;
    char err[ZS_ERRLEN];
    ZsRun r;
    int found = zk_run(src.k, id, &r, err);
    if (found <= 0) {
        if (found < 0)
            fprintf(stderr, "zgc: error: %s\n", err);
        else
            fprintf(stderr, "zgc: error: no run %s in the %s\n", id, src_where(&src));
        src_close(&src);
        return found < 0 ? ZS_EXIT_STORE : 1;
    }
    ZsLife *lives = NULL;
    int nl = 0, nfresh = 0;
    char **fresh = NULL; /* the executables of lifelines that never started */
    rc = 0;
    if (!strcmp(r.status, "done")) {
        fprintf(stderr, "zgc: note: run %s has finished; its result:\n", id);
        printf("%s\n", r.result ? r.result : "null");
    } else if (!strcmp(r.status, "cancelled")) {
        fprintf(stderr, "zgc: error: run %s was cancelled; it cannot be resumed\n", id);
        rc = 1;
    } else if (r.live) {
        fprintf(stderr,
                "zgc: error: run %s is running (a lifeline's process runs here, or its record "
                "names another host, where it cannot be looked at: resume that lifeline there "
                "with its executable and --resume %s)\n",
                id, id);
        rc = 1;
    } else if (zk_lifelines(src.k, &r, &lives, &nl, err) < 0) {
        rc = store_error(err);
    } else if (nl < r.nlifelines) {
        rc = never_started(src.k, &r, lives, nl, &fresh, &nfresh);
    }
    for (int i = 0; rc == 0 && i < nl && strcmp(r.status, "done") != 0; i++)
        if (strcmp(lives[i].status ? lives[i].status : "", "done") != 0 &&
            (!lives[i].executable || access(lives[i].executable, X_OK) != 0)) {
            fprintf(stderr,
                    "zgc: error: run %s cannot be resumed here: the executable of lifeline %s "
                    "(%s) is not on this host; resume that lifeline where it is, with --resume "
                    "%s\n",
                    id, lives[i].name ? lives[i].name : "?",
                    lives[i].executable ? lives[i].executable : "none recorded", id);
            rc = 1;
        }
    if (rc == 0 && strcmp(r.status, "done") != 0) {
        char journal[200];
        snprintf(journal, sizeof journal, "nats:%s", a->bucket);
        /* the lifelines not done, and those that never started (which
         * --resume starts from the beginning) */
        int nstart = 0;
        const char **start = zu_xcalloc((size_t)(nl + nfresh) + 1, sizeof *start);
        for (int i = 0; i < nl; i++)
            if (!lives[i].status || strcmp(lives[i].status, "done") != 0)
                start[nstart++] = lives[i].executable;
        for (int i = 0; i < nfresh; i++) start[nstart++] = fresh[i];
        pid_t *pids = zu_xcalloc((size_t)nstart + 1, sizeof *pids);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        /* each lifeline prints its part of the result: the whole one is
         * printed below, from the bucket */
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        extern char **environ;
        for (int i = 0; i < nstart && rc == 0; i++) {
            char **args = NULL;
            int n = 0;
            args = zu_xcalloc(2, sizeof *args);
            args[n++] = (char *)start[i];
            add_opt(&args, &n, "--nats", a->nats);
            add_opt(&args, &n, "--run", id);
            add_opt(&args, &n, "--resume", id);
            add_opt(&args, &n, "--journal", journal);
            add_opt(&args, &n, "--secret-file", a->secret_file);
            add_opt(&args, &n, "--nats-creds", a->auth.creds);
            add_opt(&args, &n, "--nats-user", a->auth.user);
            add_opt(&args, &n, "--nats-token-file", a->auth.token_file);
            add_opt(&args, &n, "--nats-nkey", a->auth.nkey);
            add_opt(&args, &n, "--nats-ca", a->auth.ca);
            add_opt(&args, &n, "--nats-cert", a->auth.cert);
            add_opt(&args, &n, "--nats-key", a->auth.key);
            if (a->exit_when_waiting) {
                args = realloc(args, (size_t)(n + 2) * sizeof *args);
                if (!args) zu_oom();
                args[n++] = "--exit-when-waiting";
                args[n] = NULL;
            }
            int e = posix_spawn(&pids[i], start[i], &fa, NULL, args, environ);
            free(args);
            if (e != 0) {
                fprintf(stderr, "zgc: error: cannot start %s: %s\n", start[i], strerror(e));
                pids[i] = 0;
                rc = 1;
            }
        }
        posix_spawn_file_actions_destroy(&fa);
        free(start);
        /* every process started is waited for (one that failed stops its
         * peers: they fail or stop at once) */
        for (int i = 0; i < nstart; i++) {
            if (pids[i] <= 0) continue;
            int st = 0;
            while (waitpid(pids[i], &st, 0) < 0 && errno == EINTR) {}
            int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            if (code != 0 && rc == 0) rc = code;
        }
        free(pids);
        if (rc == 0) {
            ZsRun done;
            found = zk_run(src.k, id, &done, err);
            if (found < 0) {
                rc = store_error(err);
            } else if (found == 0 || !done.result) {
                fprintf(stderr, "zgc: error: run %s ended without a result in the %s\n", id,
                        src_where(&src));
                rc = 1;
            } else {
                printf("%s\n", done.result);
            }
            if (found > 0) zs_run_free(&done);
        }
    }
    for (int i = 0; i < nl; i++) zs_life_free(&lives[i]);
    free(lives);
    for (int i = 0; i < nfresh; i++) free(fresh[i]);
    free(fresh);
    zs_run_free(&r);
    src_close(&src);
    return rc;
}

static int runs_resume(const Args *a)
{
    if (a->npos != 1) return usage_error(usage_runs, "%s", "runs resume needs a RUN");
    if (a->nats) return resume_nats(a);
    if (a->secret_file)
        return usage_error(usage_runs, "%s", "--secret-file goes with --nats (a bucket's run)");
    char *path = zs_path(a->store);
    int rc = zo_resume(path, a->pos[0], NULL, a->exit_when_waiting);
    free(path);
    return rc;
}

int zo_resume(const char *path, const char *id, const char *exe_dir, bool exit_when_waiting)
{
    char err[ZS_ERRLEN];
    ZsStore *s = zs_open(path, err);
    if (!s) return store_error(err);
    ZsRun r;
    int found = zs_run(s, id, &r, err);
    if (found <= 0) {
        if (found < 0)
            fprintf(stderr, "zgc: error: %s\n", err);
        else
            fprintf(stderr, "zgc: error: no run %s in the run store %s\n", id, path);
        zs_close(s);
        return found < 0 ? ZS_EXIT_STORE : 1;
    }
    int rc = 0;
    ZsLife *lives = NULL;
    int nl = 0;
    if (!strcmp(r.status, "done")) {
        fprintf(stderr, "zgc: note: run %s has finished; its result:\n", id);
        printf("%s\n", r.result ? r.result : "null");
    } else if (!strcmp(r.status, "cancelled")) {
        fprintf(stderr, "zgc: error: run %s was cancelled; it cannot be resumed\n", id);
        rc = 1;
    } else if (r.live) {
        fprintf(stderr, "zgc: error: run %s is running\n", id);
        /* per-lifeline mode: a lost lifeline whose peers wait for it is
         * restarted alone, with the wiring its peers know */
        if (zs_lifelines(s, &r, &lives, &nl, err) >= 0)
            for (int i = 0; i < nl; i++)
                if (lives[i].status && !strcmp(lives[i].status, "running") && !lives[i].live)
                    fprintf(stderr,
                            "zgc: note: lifeline %s's process is gone and its peers wait for it: "
                            "restart it alone with %s --resume %s and the options --listen, "
                            "--peer, --secret-file and --result-file it was started with (zgc "
                            "run printed the command)\n",
                            lives[i].name,
                            lives[i].executable ? lives[i].executable : "its executable", id);
        rc = 1;
    } else if (zs_lifelines(s, &r, &lives, &nl, err) < 0) {
        rc = store_error(err);
    } else {
        zs_close(s);
        s = NULL;
        char *store_opt;
        if (asprintf(&store_opt, "--durable=%s", path) < 0) zu_oom();
        char *args[4] = {"--resume", (char *)id, store_opt, "--exit-when-waiting"};
        int nargs = exit_when_waiting ? 4 : 3;
        zx_signals_catch();
        if (exe_dir) {
            /* a fresh build of the program (zgc run FILE.zg --resume RUN) */
            free(r.executable);
            if (asprintf(&r.executable, "%s/%s", exe_dir, r.workflow) < 0) zu_oom();
            for (int i = 0; i < nl; i++) {
                free(lives[i].executable);
                if (asprintf(&lives[i].executable, "%s/%s.%s", exe_dir, r.workflow, lives[i].name) <
                    0)
                    zu_oom();
            }
        }
        if (strcmp(r.mode, "processes") != 0) {
            if (!r.executable || access(r.executable, X_OK) != 0) {
                fprintf(stderr,
                        "zgc: error: the executable %s of run %s is gone; rebuild the program "
                        "(zgc run --durable FILE.zg --resume %s builds it again)\n",
                        r.executable ? r.executable : "(none)", id, id);
                rc = 1;
            } else {
                rc = zx_run_single(r.executable, nargs, args);
            }
        } else {
            const char **names = zu_xcalloc((size_t)r.nlifelines + 1, sizeof *names);
            const char **exes = zu_xcalloc((size_t)r.nlifelines + 1, sizeof *exes);
            for (int i = 0; i < nl; i++)
                if (lives[i].lifeline >= 0 && lives[i].lifeline < r.nlifelines) {
                    names[lives[i].lifeline] = lives[i].name;
                    exes[lives[i].lifeline] = lives[i].executable;
                }
            for (int i = 0; i < r.nlifelines && rc == 0; i++)
                if (!exes[i] || access(exes[i], X_OK) != 0) {
                    fprintf(stderr,
                            "zgc: error: run %s cannot be resumed here: %s (rebuild the program: "
                            "zgc run --durable --processes FILE.zg --resume %s)\n",
                            id,
                            exes[i] ? "an executable of it is gone"
                                    : "a lifeline's process never started",
                            id);
                    rc = 1;
                }
            char *trace = stored_option(nl ? lives[0].options : r.options, "--trace");
            /* the launcher waits for a lost lifeline as long as the
             * resumed lifelines do (they take it from the store too) */
            char *peer_wait = stored_option(nl ? lives[0].options : r.options, "--peer-wait");
            if (trace && trace[0] != '/' && r.cwd) {
                /* the lifelines work in the run's directory */
                char *abs;
                if (asprintf(&abs, "%s/%s", r.cwd, trace) < 0) zu_oom();
                free(trace);
                trace = abs;
            }
            const char *tmp = getenv("TMPDIR");
            char *dir;
            if (asprintf(&dir, "%s/zgc-run-XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0) zu_oom();
            if (rc == 0 && !mkdtemp(dir)) {
                fprintf(stderr, "zgc: cannot create a temporary directory: %s\n", strerror(errno));
                rc = 1;
            }
            if (rc == 0) {
                /* the workflow's result shape comes from the store: the
                 * resumed processes compose it (the runs row) */
                Stored st = {path, id};
                ZxProcessRun pr = {.dir = dir,
                                   .workflow = r.workflow,
                                   .nlifelines = r.nlifelines,
                                   .lifelines = names,
                                   .exes = exes,
                                   .trace = trace,
                                   .trace_stored = true,
                                   .peer_wait = peer_wait,
                                   .stored_result = stored_result,
                                   .u = &st};
                rc = zx_run_processes(&pr, nargs, args);
                zo_remove_tree(dir);
            }
            free(dir);
            free(trace);
            free(peer_wait);
            free(names);
            free(exes);
        }
        free(store_opt);
        zx_signal_exit();
    }
    for (int i = 0; i < nl; i++) zs_life_free(&lives[i]);
    free(lives);
    zs_run_free(&r);
    zs_close(s);
    return rc;
}

int zo_runs_main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage_runs, stderr);
        return 2;
    }
    const char *sub = argv[1];
    if (!strcmp(sub, "-h") || !strcmp(sub, "--help")) {
        fputs(usage_runs, stdout);
        return 0;
    }
    Args a;
    int rc;
    if (!strcmp(sub, "list")) {
        if ((rc = parse_args(argc - 1, argv + 1, usage_runs, "jn", 0, &a)) >= 0) return rc;
        return runs_list(&a);
    } else if (!strcmp(sub, "show")) {
        if ((rc = parse_args(argc - 1, argv + 1, usage_runs, "jn", 1, &a)) >= 0) return rc;
        return runs_show(&a);
    } else if (!strcmp(sub, "cancel")) {
        if ((rc = parse_args(argc - 1, argv + 1, usage_runs, "n", 1, &a)) >= 0) return rc;
        return runs_cancel(&a);
    } else if (!strcmp(sub, "gc")) {
        if ((rc = parse_args(argc - 1, argv + 1, usage_runs, "fn", 0, &a)) >= 0) return rc;
        return runs_gc(&a);
    } else if (!strcmp(sub, "resume")) {
        if ((rc = parse_args(argc - 1, argv + 1, usage_runs, "wns", 1, &a)) >= 0) return rc;
        return runs_resume(&a);
    }
    return usage_error(usage_runs, "unknown runs command `%s`", sub);
}

int zo_tasks_main(int argc, char **argv)
{
    Args a;
    int rc;
    if ((rc = parse_args(argc, argv, usage_tasks, "jan", 1, &a)) >= 0) return rc;
    Src s;
    if ((rc = src_open(&a, &s)) != 0) return rc;
    char err[ZS_ERRLEN];
    ZsTask *t;
    int n;
    if (a.npos) {
        ZsRun r;
        int found = src_run(&s, a.pos[0], &r, err);
        if (found <= 0) {
            if (!found)
                fprintf(stderr, "zgc: error: no run %s in the %s%s\n", a.pos[0],
                        s.k ? "" : "run store ", src_where(&s));
            src_close(&s);
            return found < 0 ? store_error(err) : 1;
        }
        zs_run_free(&r);
    }
    if (src_tasks(&s, a.npos ? a.pos[0] : NULL, a.all, &t, &n, err) < 0) {
        src_close(&s);
        return store_error(err);
    }
    if (a.json) {
        json_t *arr = json_array();
        for (int i = 0; i < n; i++) json_array_append_new(arr, task_json(&t[i]));
        print_json(arr);
    } else if (n == 0) {
        printf("no %stasks\n", a.all ? "" : "pending ");
    } else {
        print_tasks_table(t, n, true);
    }
    for (int i = 0; i < n; i++) zs_task_free(&t[i]);
    free(t);
    src_close(&s);
    return 0;
}

/* The answer object for VALUE, checked against the task as the terminal
 * checks an answer; NULL with a message in err. */
static char *answer_for(const ZsTask *t, const char *value, char *err, size_t errlen)
{
    json_t *v = NULL;
    const char *k = t->kind ? t->kind : "";
    char *trimmed = strdup(value);
    if (!trimmed) zu_oom();
    char *b = trimmed;
    while (*b == ' ' || *b == '\t') b++;
    size_t n = strlen(b);
    while (n && (b[n - 1] == ' ' || b[n - 1] == '\t')) b[--n] = 0;
    if (!strcmp(k, "confirm")) {
        if (!strcasecmp(b, "y") || !strcasecmp(b, "yes") || !strcasecmp(b, "true"))
            v = json_true();
        else if (!strcasecmp(b, "n") || !strcasecmp(b, "no") || !strcasecmp(b, "false"))
            v = json_false();
        else
            snprintf(err, errlen,
                     "task %lld (confirm) takes y, yes, true or n, no, false, not '%s'", t->task,
                     value);
    } else if (!strcmp(k, "input") || !strcmp(k, "edit")) {
        const char *text = !strcmp(k, "edit") && !*value && t->current ? t->current : value;
        v = json_string(text);
        if (!v) snprintf(err, errlen, "the answer of task %lld is not valid UTF-8", t->task);
    } else if (!strcmp(k, "select")) {
        json_error_t e;
        json_t *members = t->members ? json_loads(t->members, 0, &e) : NULL;
        size_t nm = json_array_size(members);
        char *end;
        long num = strtol(b, &end, 10);
        if (*b && !*end && num >= 1 && (size_t)num <= nm)
            v = json_incref(json_array_get(members, (size_t)num - 1));
        for (size_t i = 0; !v && i < nm; i++)
            if (!strcmp(json_string_value(json_array_get(members, i)), b))
                v = json_incref(json_array_get(members, i));
        if (!v) {
            char *list = json_dumps(members, JSON_COMPACT);
            snprintf(err, errlen,
                     "task %lld (select) takes a member's name or number 1..%zu of %s, not '%s'",
                     t->task, nm, list ? list : "[]", value);
            free(list);
        }
        json_decref(members);
    } else if (!strcmp(k, "ack")) {
        free(trimmed);
        return strdup(t->type && !strcmp(t->type, "bool") ? "{\"value\": true}" : "{}");
    } else {
        snprintf(err, errlen, "task %lld has an unknown kind '%s'", t->task, k);
    }
    free(trimmed);
    if (!v) return NULL;
    json_t *o = json_object();
    json_object_set_new(o, "value", v);
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (!s) zu_oom();
    return s;
}

int zo_answer_main(int argc, char **argv)
{
    Args a;
    int rc;
    if ((rc = parse_args(argc, argv, usage_answer, "n", 3, &a)) >= 0) return rc;
    if (a.npos != 3) return usage_error(usage_answer, "%s", "answer needs RUN TASK VALUE");
    char *end;
    long long task = strtoll(a.pos[1], &end, 10);
    if (!*a.pos[1] || *end || task < 1)
        return usage_error(usage_answer, "TASK is a task's number, not `%s`", a.pos[1]);
    Src s;
    if ((rc = src_open(&a, &s)) != 0) return rc;
    char err[ZS_ERRLEN];
    ZsTask *t;
    int n;
    if (src_tasks(&s, a.pos[0], true, &t, &n, err) < 0) {
        src_close(&s);
        return store_error(err);
    }
    const ZsTask *it = NULL;
    for (int i = 0; i < n; i++)
        if (t[i].task == task) it = &t[i];
    char *answer = NULL;
    if (!it) {
        ZsRun r;
        int found = src_run(&s, a.pos[0], &r, err);
        if (found > 0) zs_run_free(&r);
        if (found < 0)
            rc = store_error(err);
        else {
            fprintf(stderr,
                    found ? "zgc: error: run %s has no task %s\n"
                          : "zgc: error: no run %s in the %s (task %s)\n",
                    a.pos[0],
                    found ? a.pos[1]
                    : s.k ? src_where(&s)
                          : "run store",
                    a.pos[1]);
            rc = 1;
        }
    } else if (strcmp(it->status, "pending") != 0) {
        fprintf(stderr, "zgc: error: task %lld of run %s is %s, not pending\n", task, a.pos[0],
                it->status);
        rc = 1;
    } else if (!(answer = answer_for(it, a.pos[2], err, sizeof err))) {
        fprintf(stderr, "zgc: error: %s\n", err);
        rc = 1;
    } else {
        int r = s.k ? zk_answer(s.k, a.pos[0], task, answer, err)
                    : zs_answer(s.s, a.pos[0], task, answer, err);
        if (r < 0)
            rc = store_error(err);
        else if (r == 0) {
            fprintf(stderr, "zgc: error: %s\n", err);
            rc = 1;
        } else {
            printf("answered task %lld of run %s: %s\n", task, a.pos[0], answer);
            rc = 0;
        }
    }
    free(answer);
    for (int i = 0; i < n; i++) zs_task_free(&t[i]);
    free(t);
    src_close(&s);
    return rc;
}
