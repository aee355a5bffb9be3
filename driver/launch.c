/* launch.c — `zgc run`: runs a built workflow, in one process or one process
 * per lifeline (`--processes`), and forwards its result and exit status.
 *
 * In process mode every lifeline's executable listens on a Unix socket in
 * the build directory (private: mode 0700) and is told where its peers
 * listen and where the run's secret is: DIR/run.key, 32 random bytes
 * (getrandom) written for this run only, mode 0600 (`--secret-file`), with
 * which the lifelines authenticate one another (runtime/net/hello.c).
 * Each writes the result components it holds to a file (`--result-file`),
 * an error to another (`--error-file`, with the time it occurred) and,
 * with `--trace FILE`, its own events to FILE.<Lifeline>.  The launcher
 * waits for all of them, stops the others when one fails, and assembles
 * the result (and the trace: the start lines, then every lifeline's
 * events, then the end line) exactly as the all-in-one executable prints
 * it.
 *
 * The first error wins.  When one lifeline fails, its peers fail too
 * (they lose its connection, or are stopped), and each has an error to
 * tell.  A lifeline writes its error before it closes its connections, so
 * the error with the cause occurred before every error it caused; the
 * launcher prints the one that occurred first (CLOCK_MONOTONIC, the same
 * clock for every process of the machine), whatever order the lifelines
 * ended in.
 *
 * With --view the launcher serves the live view itself (runtime/view):
 * the lifelines are not given --view but write their traces, and a thread
 * follows the files FILE.<Lifeline> as they grow, handing every whole line
 * to the view (their own end lines excepted: the launcher's end line, the
 * assembled result or the first lifeline's error, comes last).  The page
 * orders the lines causally whatever order they come in.
 *
 * With --nats URL among the run options the lifelines talk through that
 * NATS server instead (runtime/nats): no sockets; each gets --run, a
 * fresh run id that scopes the run's subjects, and the same secret.
 *
 * A durable run (--durable or --resume among the run options, with a
 * --peer-wait that is not 0): a lifeline process killed by a signal zgc
 * did not send does not stop the others — they wait for it to be
 * restarted (docs/runtime.md, "Restarting one lifeline process").  The
 * launcher prints the command that restarts it, waits for the others,
 * and then, for at most the peer wait, for the store to show the
 * restarted lifeline done or failed; its result file is then read like
 * the others'. */
#define _GNU_SOURCE
#include "launch.h"
#include "zgc.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "store.h"
#include "view.h"

/* ---- signals ----------------------------------------------------------- */

/* The processes this zgc started and have not been waited for, and the
 * signal received: the launcher's only per-process state, shared with the
 * signal handler (which may only read these and call kill). */
#define MAX_CHILDREN (ZJ_MAX_LIFELINES + 1)
static volatile pid_t children[MAX_CHILDREN];
static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
    if (!got_signal) got_signal = sig;
    for (int i = 0; i < MAX_CHILDREN; i++)
        if (children[i] > 0) kill(children[i], sig);
}

void zx_signals_catch(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaction(sigs[i], &sa, NULL);
}

int zx_signal_received(void) { return got_signal; }

void zx_signal_exit(void)
{
    int sig = got_signal;
    if (!sig) return;
    signal(sig, SIG_DFL);
    raise(sig);
}

static void child_add(pid_t pid)
{
    for (int i = 0; i < MAX_CHILDREN; i++)
        if (children[i] <= 0) {
            children[i] = pid;
            /* a signal that came while the child was being started */
            if (got_signal) kill(pid, got_signal);
            return;
        }
}

static void child_gone(pid_t pid)
{
    for (int i = 0; i < MAX_CHILDREN; i++)
        if (children[i] == pid) children[i] = 0;
}

static pid_t spawn(char **argv, int out_fd)
{
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        /* die with zgc, even when it is killed without a chance to forward */
        if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent) _exit(1);
        if (out_fd >= 0) {
            dup2(out_fd, STDOUT_FILENO);
            close(out_fd);
        }
        /* the program's messages begin "zgc:" like zgc's own */
        if (setenv("ZGC_NAME", "zgc", 1) != 0) _exit(1);
        execv(argv[0], argv);
        fprintf(stderr, "zgc: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    child_add(pid);
    return pid;
}

static int exit_status(int st)
{
    if (WIFEXITED(st)) return WEXITSTATUS(st);
    if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
    return 1;
}

/* Copies argv[0..n) into a NULL-terminated vector after `head` items. */
static char **build_argv(int nhead, char **head, int n, char **rest, int ntail, char **tail)
{
    char **v = zu_xcalloc((size_t)(nhead + n + ntail + 1), sizeof *v);
    int k = 0;
    for (int i = 0; i < nhead; i++) v[k++] = head[i];
    for (int i = 0; i < n; i++) v[k++] = rest[i];
    for (int i = 0; i < ntail; i++) v[k++] = tail[i];
    v[k] = NULL;
    return v;
}

int zx_run_single(const char *exe, int argc, char **argv)
{
    char *head[] = {(char *)exe};
    char **v = build_argv(1, head, argc, argv, 0, NULL);
    pid_t pid = spawn(v, -1);
    free(v);
    if (pid < 0) {
        fprintf(stderr, "zgc: cannot start %s: %s\n", exe, strerror(errno));
        return 1;
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    child_gone(pid);
    return exit_status(st);
}

/* Appends the lines of `path` whose "kind" is (or is not) "start".
 * Returns 0, or -1 with errno set when `path` cannot be read. */
static int copy_trace_lines(FILE *out, const char *path, bool starts)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    errno = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        /* the line's own kind, its first key (runtime/trace.c), not one
         * of a planner's nested run inside it */
        static const char *const st[] = {"{\"kind\":\"start\"", "{\"kind\": \"start\""};
        static const char *const en[] = {"{\"kind\":\"end\"", "{\"kind\": \"end\""};
        bool is_start = false, is_end = false;
        for (int k = 0; k < 2; k++) {
            is_start |= !strncmp(line, st[k], strlen(st[k]));
            is_end |= !strncmp(line, en[k], strlen(en[k]));
        }
        if (is_end) continue;
        if (is_start == starts) fwrite(line, 1, (size_t)n, out);
    }
    int failed = ferror(f);
    int saved = errno;
    free(line);
    fclose(f);
    errno = saved;
    return failed ? -1 : 0;
}

/* Merges the per-lifeline traces FILE.<Lifeline> into FILE (the start
 * lines, then every lifeline's events, then the end line), through a
 * temporary file renamed into place, so FILE is whole or absent.  The
 * per-lifeline traces are removed only once FILE is written.  Returns 0,
 * or 1 after printing why. */
static int merge_traces(const ZxProcessRun *r, const char *result)
{
    int n = r->nlifelines;
    char *tmp;
    if (asprintf(&tmp, "%s.XXXXXX", r->trace) < 0) zu_oom();
    int fd = mkstemp(tmp);
    FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!out) {
        fprintf(stderr, "zgc: error: cannot write the trace %s: %s\n", r->trace, strerror(errno));
        if (fd >= 0) close(fd), unlink(tmp);
        free(tmp);
        return 1;
    }
    const char *why = NULL;
    char *bad = NULL;
    for (int pass = 0; pass < 2 && !why; pass++)
        for (int i = 0; i < n && !why; i++) {
            if (asprintf(&bad, "%s.%s", r->trace, r->lifelines[i]) < 0) zu_oom();
            if (copy_trace_lines(out, bad, pass == 0) < 0)
                why = strerror(errno);
            else
                free(bad), bad = NULL;
        }
    if (!why) {
        fprintf(out, "{\"kind\":\"" ZV_TRACE_END "\",\"result\":%s}\n", result);
        if (fflush(out) != 0 || ferror(out) || fsync(fileno(out)) != 0) why = strerror(errno);
    }
    if (fclose(out) != 0 && !why) why = strerror(errno);
    if (!why && rename(tmp, r->trace) != 0) why = strerror(errno);
    if (why) {
        if (bad)
            fprintf(stderr, "zgc: error: cannot read the trace %s: %s\n", bad, why);
        else
            fprintf(stderr, "zgc: error: cannot write the trace %s: %s\n", r->trace, why);
        unlink(tmp);
        free(tmp);
        free(bad);
        return 1;
    }
    free(tmp);
    for (int i = 0; i < n; i++) {
        char *path;
        if (asprintf(&path, "%s.%s", r->trace, r->lifelines[i]) < 0) zu_oom();
        unlink(path);
        free(path);
    }
    return 0;
}

/* DIR/run.key: the run's secret, 32 random bytes only this user can
 * read.  Returns 0, or 1 after printing why. */
static int write_secret(const char *path)
{
    uint8_t key[32];
    size_t got = 0;
    while (got < sizeof key) {
        ssize_t k = getrandom(key + got, sizeof key - got, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            fprintf(stderr, "zgc: error: no random bytes for the run's secret: %s\n",
                    strerror(errno));
            return 1;
        }
        got += (size_t)k;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    int ok = fd >= 0;
    for (size_t off = 0; ok && off < sizeof key;) {
        ssize_t k = write(fd, key + off, sizeof key - off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) ok = 0;
        off += k > 0 ? (size_t)k : 0;
    }
    int e = errno;
    if (fd >= 0 && close(fd) != 0 && ok) ok = 0, e = errno;
    explicit_bzero(key, sizeof key);
    if (!ok) {
        fprintf(stderr, "zgc: error: cannot write the run's secret %s: %s\n", path, strerror(e));
        return 1;
    }
    return 0;
}

/* A fresh run id for the subjects of a run over NATS (--run): 32 hex
 * digits, so that two runs on one server never share a subject.  0, or 1
 * after printing why. */
static int new_nats_run(char *out) /* 33 bytes */
{
    uint8_t b[16];
    size_t got = 0;
    while (got < sizeof b) {
        ssize_t k = getrandom(b + got, sizeof b - got, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            fprintf(stderr, "zgc: error: no random bytes for the run's id: %s\n", strerror(errno));
            return 1;
        }
        got += (size_t)k;
    }
    for (size_t i = 0; i < sizeof b; i++) snprintf(out + 2 * i, 3, "%02x", b[i]);
    return 0;
}

/* A lifeline's --error-file: {"time_ns": T, "error": "…"[, "excerpt":
 * "…"]}.  Returns the message (malloc'd), its time and its source excerpt
 * (malloc'd, or NULL), or NULL when there is none. */
static char *read_error(const char *path, int64_t *time_ns, char **excerpt)
{
    *excerpt = NULL;
    json_error_t e;
    json_t *j = json_load_file(path, 0, &e);
    if (!j) return NULL;
    json_t *t = json_object_get(j, "time_ns"), *m = json_object_get(j, "error");
    json_t *x = json_object_get(j, "excerpt");
    char *msg = NULL;
    if (json_is_integer(t) && json_is_string(m)) {
        *time_ns = json_integer_value(t);
        msg = strdup(json_string_value(m));
        if (!msg) zu_oom();
        if (json_is_string(x) && !(*excerpt = strdup(json_string_value(x)))) zu_oom();
    }
    json_decref(j);
    return msg;
}

/* After a failed run: prints the first error of the run by the time it
 * occurred and returns it (malloc'd; NULL when no lifeline told one);
 * first: the lifeline that ended first with a failure; codes: exit
 * statuses. */
static char *report_failure(const ZxProcessRun *r, char **errfiles, const int *codes, int first)
{
    /* a lifeline killed by a signal zgc did not send may tell the cause */
    if (first >= 0 && codes[first] >= 128)
        fprintf(stderr, "zgc: lifeline %s was killed by signal %d\n", r->lifelines[first],
                codes[first] - 128);
    char *best = NULL, *best_x = NULL;
    int64_t best_t = 0;
    for (int i = 0; i < r->nlifelines; i++) {
        int64_t t = 0;
        char *x;
        char *msg = read_error(errfiles[i], &t, &x);
        if (!msg) continue;
        if (!best || t < best_t) {
            free(best);
            free(best_x);
            best = msg, best_t = t, best_x = x;
        } else {
            free(msg);
            free(x);
        }
    }
    if (best) fprintf(stderr, "zgc: error: %s\n", best);
    if (best_x) fprintf(stderr, "%s\n", best_x);
    free(best_x);
    return best;
}

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

/* Reads a per-lifeline result file, {"<index>": value, …}, and keeps each
 * value's text.  jansson finds where each value ends. */
static void read_components(const char *path, char **comp, int ncomp)
{
    size_t len;
    const char *err;
    char *data = zu_read_file(path, &len, &err);
    if (!data) return;
    const char *p = data, *end = data + len;
    p = skip_ws(p, end);
    if (p < end && *p == '{') p++;
    for (;;) {
        p = skip_ws(p, end);
        if (p >= end || *p != '"') break;
        char *q;
        long k = strtol(p + 1, &q, 10);
        if (*q != '"') break;
        p = skip_ws(q + 1, end);
        if (p >= end || *p != ':') break;
        p = skip_ws(p + 1, end);
        json_error_t e;
        json_t *v = json_loadb(p, (size_t)(end - p), JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK, &e);
        if (!v) break;
        json_decref(v);
        size_t used = (size_t)e.position;
        if (k >= 0 && k < ncomp && !comp[k]) comp[k] = strndup(p, used);
        p = skip_ws(p + used, end);
        if (p < end && *p == ',') p++;
    }
    free(data);
}

/* ---- the merged live view ------------------------------------------------- */

/* How often the traces are looked at while the lifelines run: a picture
 * 50 ms late is live enough, and a look costs one read per lifeline. */
#define FOLLOW_MS 50
#define VIEW_LINGER_S 2.0

typedef struct follower {
    zrv_server *view;
    int n;
    char **paths; /* FILE.<Lifeline> */
    FILE **files;
    char **partial;  /* a line not yet whole, per lifeline */
    char *error_end; /* the first lifeline's end line with an error */
    pthread_t th;
    pthread_mutex_t mu;
    int stop;
} follower;

/* Hands the new whole lines of every trace to the view. */
static void follow_once(follower *fo)
{
    char buf[65536];
    for (int i = 0; i < fo->n; i++) {
        /* the lifeline writes FILE.<Lifeline>.partial and renames it when
         * it is whole; the stream goes on in the same file either way */
        if (!fo->files[i]) {
            char *partial;
            if (asprintf(&partial, "%s" ZV_TRACE_PARTIAL, fo->paths[i]) < 0) zu_oom();
            fo->files[i] = fopen(partial, "r");
            free(partial);
            if (!fo->files[i]) fo->files[i] = fopen(fo->paths[i], "r");
            if (!fo->files[i]) continue;
        }
        size_t k;
        clearerr(fo->files[i]);
        while ((k = fread(buf, 1, sizeof buf, fo->files[i])) > 0) {
            size_t from = 0;
            for (size_t j = 0; j < k; j++) {
                if (buf[j] != '\n') continue;
                char *line;
                if (asprintf(&line, "%s%.*s", fo->partial[i] ? fo->partial[i] : "", (int)(j - from),
                             buf + from) < 0)
                    zu_oom();
                free(fo->partial[i]);
                fo->partial[i] = NULL;
                from = j + 1;
                if (strstr(line, "\"kind\":\"" ZV_TRACE_END "\"")) {
                    if (strstr(line, "\"error\":") && !fo->error_end)
                        fo->error_end = line;
                    else
                        free(line);
                    continue;
                }
                zrv_push(fo->view, line, strlen(line));
                free(line);
            }
            if (from < k) {
                char *rest;
                if (asprintf(&rest, "%s%.*s", fo->partial[i] ? fo->partial[i] : "", (int)(k - from),
                             buf + from) < 0)
                    zu_oom();
                free(fo->partial[i]);
                fo->partial[i] = rest;
            }
        }
    }
}

static void *follow(void *arg)
{
    follower *fo = arg;
    for (;;) {
        pthread_mutex_lock(&fo->mu);
        int stop = fo->stop;
        pthread_mutex_unlock(&fo->mu);
        follow_once(fo);
        if (stop) return NULL;
        struct timespec ts = {0, FOLLOW_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
}

static follower *follow_start(const ZxProcessRun *r, const char *trace)
{
    char url[256], err[512];
    zrv_server *view = zrv_open(r->view, r->workflow, r->nlifelines, r->lifelines, url, sizeof url,
                                err, sizeof err);
    if (!view) {
        fprintf(stderr, "zgc: error: %s\n", err);
        return NULL;
    }
    fprintf(stderr, "zgc: view: %s\n", url);
    fflush(stderr);
    follower *fo = zu_xcalloc(1, sizeof *fo);
    fo->view = view;
    fo->n = r->nlifelines;
    fo->paths = zu_xcalloc((size_t)fo->n, sizeof *fo->paths);
    fo->files = zu_xcalloc((size_t)fo->n, sizeof *fo->files);
    fo->partial = zu_xcalloc((size_t)fo->n, sizeof *fo->partial);
    for (int i = 0; i < fo->n; i++) {
        if (asprintf(&fo->paths[i], "%s.%s", trace, r->lifelines[i]) < 0) zu_oom();
        /* a file of an earlier run is not this run's */
        char *partial;
        if (asprintf(&partial, "%s" ZV_TRACE_PARTIAL, fo->paths[i]) < 0) zu_oom();
        unlink(partial);
        free(partial);
        unlink(fo->paths[i]);
    }
    pthread_mutex_init(&fo->mu, NULL);
    if (pthread_create(&fo->th, NULL, follow, fo) != 0) {
        /* no thread: the lines are handed over once, at the end */
        fo->th = 0;
    }
    return fo;
}

/* The lifelines have ended: the rest of their lines, then the end line
 * (result: the assembled result's JSON text, or NULL after a failure;
 * error: the run's first error, the one the launcher printed, or NULL). */
static void follow_end(follower *fo, const char *result, const char *error)
{
    if (!fo) return;
    pthread_mutex_lock(&fo->mu);
    fo->stop = 1;
    pthread_mutex_unlock(&fo->mu);
    if (fo->th)
        pthread_join(fo->th, NULL);
    else
        follow_once(fo);
    char *end = NULL;
    if (result) {
        if (asprintf(&end, "{\"kind\":\"" ZV_TRACE_END "\",\"result\":%s}", result) < 0) zu_oom();
    } else if (error) {
        json_t *j = json_pack("{s:s, s:s}", "kind", ZV_TRACE_END, "error", error);
        end = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref(j);
        if (!end) zu_oom();
    } else if (!fo->error_end) {
        end = zu_xcalloc(1, 128);
        strcpy(end, "{\"kind\":\"" ZV_TRACE_END "\",\"error\":\"the run was stopped\"}");
    }
    const char *e = end ? end : fo->error_end;
    zrv_push(fo->view, e, strlen(e));
    free(end);
    zrv_close(fo->view, VIEW_LINGER_S);
    for (int i = 0; i < fo->n; i++) {
        if (fo->files[i]) fclose(fo->files[i]);
        free(fo->paths[i]);
        free(fo->partial[i]);
    }
    free(fo->paths), free(fo->files), free(fo->partial), free(fo->error_end);
    pthread_mutex_destroy(&fo->mu);
    free(fo);
}

/* Which exit of a lifeline explains the run's (zx_run_processes): bad
 * usage, then a failure of the store, then an error, then a stop to wait
 * for humans; a lifeline killed, or stopped by a lost peer (5, durable
 * runs), only follows the others. */
static int exit_rank(int code)
{
    switch (code) {
    case 0: return 0;
    case 2: return 6;
    case 4: return 5;
    case 1: return 4;
    case 3: return 3;
    case 5: return 2;
    default: return 1;
    }
}

/* The value of run option NAME in argv (--NAME VALUE or --NAME=VALUE), or
 * NULL; *given: the option is there (with or without a value). */
static const char *run_option(int argc, char **argv, const char *name, bool *given)
{
    size_t k = strlen(name);
    const char *v = NULL;
    if (given) *given = false;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], name, k) != 0 || (argv[i][k] && argv[i][k] != '=')) continue;
        if (given) *given = true;
        v = argv[i][k] == '=' ? argv[i] + k + 1 : i + 1 < argc ? argv[i + 1] : NULL;
    }
    return v;
}

/* Durable runs: the restarted lifeline l of run id ended (its status in
 * the store is done or failed); waits at most `wait` seconds. */
static bool restarted_done(const char *store, const char *id, const char *name, double wait)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char *path = zs_path(store);
    bool done = false;
    for (;;) {
        char err[ZS_ERRLEN];
        ZsStore *s = zs_open(path, err);
        ZsRun run;
        ZsLife *lives = NULL;
        int nl = 0;
        if (s && zs_run(s, id, &run, err) > 0) {
            if (zs_lifelines(s, &run, &lives, &nl, err) >= 0)
                for (int i = 0; i < nl; i++)
                    if (!strcmp(lives[i].name, name) && lives[i].status &&
                        (!strcmp(lives[i].status, "done") || !strcmp(lives[i].status, "failed")))
                        done = true;
            for (int i = 0; i < nl; i++) zs_life_free(&lives[i]);
            free(lives);
            zs_run_free(&run);
        }
        if (s) zs_close(s);
        clock_gettime(CLOCK_MONOTONIC, &t);
        double el = (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9;
        if (done || el > wait || got_signal) break;
        struct timespec pause = {0, 100000000}; /* 0.1 s */
        nanosleep(&pause, NULL);
    }
    free(path);
    return done;
}

int zx_run_processes(const ZxProcessRun *r, int argc, char **argv)
{
    int n = r->nlifelines;
    /* a durable run whose lifelines wait for a lost peer (see above) */
    bool durable, resuming;
    const char *store = run_option(argc, argv, "--durable", &durable);
    const char *run_id = run_option(argc, argv, "--resume", &resuming);
    if (!resuming) run_id = run_option(argc, argv, "--run-id", NULL);
    /* over NATS the lifelines find one another by the run's id: a
     * durable run's own (so that its journals, messages and stores are all
     * under the run's id, and a resume finds them), else a fresh one */
    const char *nats = run_option(argc, argv, "--nats", NULL);
    char nats_run[65] = "";
    if (nats && run_id && (durable || resuming)) {
        size_t len = strlen(run_id);
        if (len == 0 || len >= sizeof nats_run ||
            strspn(run_id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") !=
                len) {
            fprintf(stderr,
                    "zgc: error: run id '%s': a durable run over NATS is named by its run id, "
                    "which must be 1 to %d letters, digits, '_' or '-'\n",
                    run_id, (int)sizeof nats_run - 1);
            return 2;
        }
        memcpy(nats_run, run_id, len + 1);
    } else if (nats && new_nats_run(nats_run) != 0) {
        return 1;
    }
    const char *wait_text = run_option(argc, argv, "--peer-wait", NULL);
    if (!wait_text) wait_text = r->peer_wait; /* a resumed run's, as its lifelines have it */
    double peer_wait = wait_text ? strtod(wait_text, NULL) : 300.0;
    bool keep = (durable || resuming) && run_id && peer_wait > 0;
    char **restart = zu_xcalloc((size_t)n, sizeof *restart); /* the command restarting l */
    bool *lost = zu_xcalloc((size_t)n, sizeof *lost);
    pid_t *pids = zu_xcalloc((size_t)n, sizeof *pids);
    int *codes = zu_xcalloc((size_t)n, sizeof *codes);
    char **socks = zu_xcalloc((size_t)n, sizeof *socks);
    char **results = zu_xcalloc((size_t)n, sizeof *results);
    char **errfiles = zu_xcalloc((size_t)n, sizeof *errfiles);
    /* the run's secret: in the run's directory, or for a new durable run
     * over NATS beside the run store (DIR/secrets/RUN.key, until it is done),
     * where `zgc runs resume RUN --nats URL` finds it after this command
     * has ended: the messages in the run's stream are signed with it */
    bool kept_key = nats && run_id && durable && !resuming;
    char *key;
    if (kept_key)
        key = zs_secret_path(store, run_id);
    else if (asprintf(&key, "%s/run.key", r->dir) < 0)
        zu_oom();
    for (int i = 0; i < n; i++) {
        if (asprintf(&socks[i], "unix:%s/%s.sock", r->dir, r->lifelines[i]) < 0 ||
            asprintf(&results[i], "%s/%s.result", r->dir, r->lifelines[i]) < 0 ||
            asprintf(&errfiles[i], "%s/%s.error", r->dir, r->lifelines[i]) < 0)
            zu_oom();
        unlink(results[i]);
        unlink(errfiles[i]);
    }
    int status = 0;
    if (kept_key) {
        /* DIR and DIR/secrets (only this user's) */
        char *dir = strdup(key);
        if (!dir) zu_oom();
        *strrchr(dir, '/') = 0;
        char *up = strrchr(dir, '/');
        if (up) *up = 0;
        if (mkdir(dir, 0700) != 0 && errno != EEXIST) status = 1;
        if (up) *up = '/';
        if (status == 0 && mkdir(dir, 0700) != 0 && errno != EEXIST) status = 1;
        if (status)
            fprintf(stderr, "zgc: error: cannot make %s for the run's secret: %s\n", dir,
                    strerror(errno));
        free(dir);
    }
    unlink(key);
    if (status == 0) status = write_secret(key);
    int started = 0;
    /* names are bounded (ZV_LIFELINE_NAME_MAX), but $TMPDIR is not */
    size_t sun_max = sizeof(((struct sockaddr_un *)0)->sun_path) - 1;
    for (int i = 0; i < n && status == 0 && !nats; i++)
        if (strlen(socks[i]) - 5 > sun_max) {
            fprintf(stderr,
                    "zgc: error: the socket path %s is too long for a Unix socket (%zu bytes; "
                    "at most %zu): set TMPDIR to a shorter directory\n",
                    socks[i] + 5, strlen(socks[i]) - 5, sun_max);
            status = 1;
        }
    /* the live view follows the lifelines' traces: the asked-for ones, or
     * its own in the run's directory */
    char *view_trace = NULL;
    const char *trace = r->trace;
    follower *fo = NULL;
    if (r->view && status == 0) {
        if (!trace) {
            if (asprintf(&view_trace, "%s/view.jsonl", r->dir) < 0) zu_oom();
            trace = view_trace;
        }
        fo = follow_start(r, trace);
        if (!fo) status = 2;
    }
    /* the workflow's stores, if it has any, are shared by the lifelines'
     * processes in SQLite files in the run's directory (over NATS: in
     * key-value buckets of the run), unless the run options name their
     * own (runtime/store: zsr.h); a durable run's stay beside its run
     * store, where a resume finds them (docs/runtime.md, "Stores") */
    bool own_store = durable || resuming || run_option(argc, argv, "--store-file", NULL) ||
                     run_option(argc, argv, "--store-dir", NULL);
    for (int i = 0; i < n && status == 0; i++) {
        /* exe --listen ADDR --peer M=ADDR … --secret-file K --result-file F
         * --error-file E [--trace T] [--store-dir D] run options */
        int nextra = 10 + 2 * (n - 1) + (trace && !r->trace_stored ? 2 : 0);
        char **extra = zu_xcalloc((size_t)nextra + 1, sizeof *extra);
        char **owned = zu_xcalloc((size_t)n + 2, sizeof *owned);
        int k = 0, o = 0;
        if (nats) {
            extra[k++] = "--run";
            extra[k++] = nats_run;
        } else {
            extra[k++] = "--listen";
            extra[k++] = socks[i];
        }
        for (int j = 0; j < n && !nats; j++) {
            if (j == i) continue;
            if (asprintf(&owned[o], "%s=%s", r->lifelines[j], socks[j]) < 0) zu_oom();
            extra[k++] = "--peer";
            extra[k++] = owned[o++];
        }
        extra[k++] = "--secret-file";
        extra[k++] = key;
        extra[k++] = "--result-file";
        extra[k++] = results[i];
        extra[k++] = "--error-file";
        extra[k++] = errfiles[i];
        if (trace && !r->trace_stored) {
            extra[k++] = "--trace";
            extra[k++] = (char *)trace;
        }
        if (!own_store && !nats) {
            extra[k++] = "--store-dir";
            extra[k++] = (char *)r->dir;
        }
        char *exe;
        if (r->exes && r->exes[i]) {
            exe = strdup(r->exes[i]);
            if (!exe) zu_oom();
        } else if (asprintf(&exe, "%s/%s.%s", r->dir, r->workflow, r->lifelines[i]) < 0) {
            zu_oom();
        }

        if (keep) {
            char *cmd = NULL;
            size_t clen = 0;
            FILE *c = open_memstream(&cmd, &clen);
            fprintf(c, "%s", exe);
            for (int j = 0; j < k; j++)
                if (strcmp(extra[j], "--trace") && (j == 0 || strcmp(extra[j - 1], "--trace")))
                    fprintf(c, " %s", extra[j]);
            /* the NATS options are not stored with the run (each
             * process's own): the restarted one gets them again */
            for (int j = 0; j < argc; j++)
                if (!strncmp(argv[j], "--nats", 6)) {
                    bool joined = strchr(argv[j], '=') != NULL;
                    fprintf(c, " %s", argv[j]);
                    if (!joined && j + 1 < argc) fprintf(c, " %s", argv[++j]);
                }
            if (store) fprintf(c, " --durable=%s", store);
            fprintf(c, " --resume %s", run_id);
            fclose(c);
            restart[i] = cmd;
        }
        char *head[] = {exe};
        char **v = build_argv(1, head, argc, argv, k, extra);
        pids[i] = spawn(v, -1);
        free(v);
        free(exe);
        for (int j = 0; j < o; j++) free(owned[j]);
        free(owned);
        free(extra);
        if (pids[i] < 0) {
            fprintf(stderr, "zgc: cannot start lifeline %s: %s\n", r->lifelines[i],
                    strerror(errno));
            status = 1;
            break;
        }
        started++;
    }
    /* wait; when one fails, stop the others */
    int left = started, first = -1;
    int worst = status ? exit_rank(status) : 0; /* the rank of the exit that explains status */
    bool stopping = status != 0;
    if (stopping)
        for (int i = 0; i < started; i++) kill(pids[i], SIGTERM);
    while (left > 0) {
        int st;
        pid_t pid = waitpid(-1, &st, 0);
        if (pid < 0) {
            if (errno == EINTR) continue;
            break;
        }
        int idx = -1;
        for (int i = 0; i < started; i++)
            if (pids[i] == pid) idx = i;
        if (idx < 0) continue;
        child_gone(pid);
        pids[idx] = 0;
        left--;
        int code = exit_status(st);
        codes[idx] = code;
        if (keep && code > 128 && !got_signal && !stopping) {
            /* killed from outside: the others wait for its restart */
            lost[idx] = true;
            fprintf(stderr,
                    "zgc: note: lifeline %s was killed by signal %d; the others wait for it "
                    "(--peer-wait %g s): restart it with\n  %s\n",
                    r->lifelines[idx], code - 128, peer_wait, restart[idx]);
            continue;
        }
        if (code != 0 && exit_rank(code) > worst) {
            worst = exit_rank(code);
            status = code == 2 || code == 3 || code == 4 ? code : 1;
        }
        if (code != 0 && !stopping) {
            first = idx;
            stopping = true;
            for (int i = 0; i < started; i++)
                if (pids[i] > 0) kill(pids[i], SIGTERM);
        }
    }
    /* every lifeline process killed: nobody waits for a restart, so none
       is waited for here either — the whole run is resumed */
    int nlost = 0;
    for (int i = 0; i < started; i++) nlost += lost[i];
    if (status == 0 && started > 0 && nlost == started) {
        fprintf(stderr,
                "zgc: error: every lifeline process was killed; resume the run with zgc runs "
                "resume %s\n",
                run_id);
        status = 5; /* resumable, as after a lost peer */
    }
    /* restarted lifelines: their end is in the store */
    for (int i = 0; i < started && status == 0; i++) {
        if (!lost[i]) continue;
        if (!restarted_done(store, run_id, r->lifelines[i], peer_wait)) {
            fprintf(stderr,
                    "zgc: error: lifeline %s was not restarted; resume the run with zgc runs "
                    "resume %s\n",
                    r->lifelines[i], run_id);
            status = 1;
        } else if (access(errfiles[i], F_OK) == 0) {
            codes[i] = 1;
            first = i;
            status = 1;
        } else {
            codes[i] = 0;
        }
    }
    /* a signal zgc forwarded needs no news about each lifeline; a stop to
     * wait for humans is no failure */
    char *first_error = NULL;
    if (status != 0 && status != 3 && started > 0 && !got_signal)
        first_error = report_failure(r, errfiles, codes, first);
    if (status == 0 && r->stored_result) {
        char *text = r->stored_result(r->u);
        if (!text) {
            status = 1;
        } else {
            follow_end(fo, text, NULL); /* before the merge removes the lifelines' traces */
            fo = NULL;
            if (r->trace && merge_traces(r, text) != 0) status = 1;
            printf("%s\n", text);
            free(text);
        }
    } else if (status == 0) {
        /* assemble the result: the components' JSON texts are copied as the
         * lifelines wrote them (no reformatting, so numbers print exactly as
         * in an all-in-one run), a tuple as `[a, b]` */
        char **comp = zu_xcalloc((size_t)(r->nresults > 0 ? r->nresults : 1), sizeof *comp);
        for (int i = 0; i < n; i++) read_components(results[i], comp, r->nresults);
        char *text = NULL;
        size_t tlen = 0;
        FILE *t = open_memstream(&text, &tlen);
        int missing = 0;
        if (r->nresults == 0) fputs("null", t);
        if (r->result_tuple) fputc('[', t);
        for (int i = 0; i < r->nresults; i++) {
            if (!comp[i]) missing++;
            fprintf(t, "%s%s", i ? ", " : "", comp[i] ? comp[i] : "null");
            free(comp[i]);
        }
        free(comp);
        if (r->result_tuple) fputc(']', t);
        fclose(t);
        if (missing) {
            fprintf(stderr, "zgc: the lifelines ended without a result\n");
            status = 1;
        } else {
            follow_end(fo, text, NULL); /* before the merge removes the lifelines' traces */
            fo = NULL;
            if (r->trace && merge_traces(r, text) != 0) status = 1;
            /* the driver checks that stdout took it (driver/main.c) */
            printf("%s\n", text);
        }
        free(text);
    }
    follow_end(fo, NULL, first_error);
    free(first_error);
    free(view_trace);
    for (int i = 0; i < n; i++) {
        unlink(results[i]);
        unlink(errfiles[i]);
        free(socks[i]);
        free(results[i]);
        free(errfiles[i]);
    }
    /* a kept secret goes once the run is done */
    if (!kept_key || status == 0) unlink(key);
    free(key);
    for (int i = 0; i < n; i++) free(restart[i]);
    free(restart);
    free(lost);
    free(socks);
    free(results);
    free(errfiles);
    free(codes);
    free(pids);
    return status;
}
