/* launch.c — `zgc run`: runs a built workflow, in one process or one process
 * per lifeline (`--processes`), and forwards its result and exit status.
 *
 * In process mode every lifeline's executable listens on a Unix socket in
 * the build directory and is told where its peers listen; each writes the
 * result components it holds to a file (`--result-file`) and, with
 * `--trace FILE`, its own events to FILE.<Lifeline>.  The launcher waits for
 * all of them, stops the others when one fails, and assembles the result
 * (and the trace: the start lines, then every lifeline's events, then the
 * end line) exactly as the all-in-one executable prints it. */
#define _GNU_SOURCE
#include "launch.h"
#include "zgc.h"

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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
        bool is_start = strstr(line, "\"kind\":\"start\"") || strstr(line, "\"kind\": \"start\"");
        bool is_end = strstr(line, "\"kind\":\"end\"") || strstr(line, "\"kind\": \"end\"");
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

int zx_run_processes(const ZxProcessRun *r, int argc, char **argv)
{
    int n = r->nlifelines;
    pid_t *pids = zu_xcalloc((size_t)n, sizeof *pids);
    char **socks = zu_xcalloc((size_t)n, sizeof *socks);
    char **results = zu_xcalloc((size_t)n, sizeof *results);
    for (int i = 0; i < n; i++) {
        if (asprintf(&socks[i], "unix:%s/%s.sock", r->dir, r->lifelines[i]) < 0 ||
            asprintf(&results[i], "%s/%s.result", r->dir, r->lifelines[i]) < 0)
            zu_oom();
        unlink(results[i]);
    }
    int status = 0;
    int started = 0;
    /* names are bounded (ZV_LIFELINE_NAME_MAX), but $TMPDIR is not */
    size_t sun_max = sizeof(((struct sockaddr_un *)0)->sun_path) - 1;
    for (int i = 0; i < n && status == 0; i++)
        if (strlen(socks[i]) - 5 > sun_max) {
            fprintf(stderr,
                    "zgc: error: the socket path %s is too long for a Unix socket (%zu bytes; "
                    "at most %zu): set TMPDIR to a shorter directory\n",
                    socks[i] + 5, strlen(socks[i]) - 5, sun_max);
            status = 1;
        }
    for (int i = 0; i < n && status == 0; i++) {
        /* exe --listen ADDR --peer M=ADDR … --result-file F [--trace T.L] run options */
        int nextra = 4 + 2 * (n - 1) + (r->trace && !r->trace_stored ? 2 : 0);
        char **extra = zu_xcalloc((size_t)nextra + 1, sizeof *extra);
        char **owned = zu_xcalloc((size_t)n + 2, sizeof *owned);
        int k = 0, o = 0;
        extra[k++] = "--listen";
        extra[k++] = socks[i];
        for (int j = 0; j < n; j++) {
            if (j == i) continue;
            if (asprintf(&owned[o], "%s=%s", r->lifelines[j], socks[j]) < 0) zu_oom();
            extra[k++] = "--peer";
            extra[k++] = owned[o++];
        }
        extra[k++] = "--result-file";
        extra[k++] = results[i];
        if (r->trace && !r->trace_stored) {
            extra[k++] = "--trace";
            extra[k++] = (char *)r->trace;
        }
        char *exe;
        if (r->exes && r->exes[i]) {
            exe = strdup(r->exes[i]);
            if (!exe) zu_oom();
        } else if (asprintf(&exe, "%s/%s.%s", r->dir, r->workflow, r->lifelines[i]) < 0) {
            zu_oom();
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
    int left = started;
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
        if (code != 0 && exit_rank(code) > worst) {
            worst = exit_rank(code);
            /* a signal zgc forwarded, or its own stop, needs no news */
            if (code >= 128 && !got_signal && !stopping)
                fprintf(stderr, "zgc: lifeline %s was killed by signal %d\n", r->lifelines[idx],
                        code - 128);
            status = code == 2 || code == 3 || code == 4 ? code : 1;
        }
        if (code != 0 && !stopping) {
            stopping = true;
            for (int i = 0; i < started; i++)
                if (pids[i] > 0) kill(pids[i], SIGTERM);
        }
    }
    if (status == 0 && r->stored_result) {
        char *text = r->stored_result(r->u);
        if (!text) {
            status = 1;
        } else {
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
            if (r->trace && merge_traces(r, text) != 0) status = 1;
            /* the driver checks that stdout took it (driver/main.c) */
            printf("%s\n", text);
        }
        free(text);
    }
    for (int i = 0; i < n; i++) {
        unlink(results[i]);
        free(socks[i]);
        free(results[i]);
    }
    free(socks);
    free(results);
    free(pids);
    return status;
}
