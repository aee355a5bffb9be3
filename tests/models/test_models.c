/* The openai and ollama model backends against fake_openai, a real HTTP
 * server started for each test on 127.0.0.1: answers, retries, backoff
 * and Retry-After, permanent errors, timeouts, cancellation, parsing,
 * model choice, API key redaction, progress notes and trace lines; and the
 * examples end to end.  Workflows are built and run with `zgc run`. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#define KEY "sk-test-Q7vL2pZ9xW4m"
#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static pid_t srv_pid = -1;
static int srv_port;
static char work[] = "/tmp/zgc-models-XXXXXX";
static int nruns;

/* ---- the server ------------------------------------------------------------ */

static void srv_start(void)
{
    int p[2];
    cr_assert_eq(pipe(p), 0);
    srv_pid = fork();
    cr_assert_neq(srv_pid, -1);
    if (srv_pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        dup2(p[1], STDOUT_FILENO);
        close(p[0]);
        close(p[1]);
        execl(FAKE_OPENAI_BIN, "fake_openai", (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    char line[32] = "";
    size_t n = 0;
    while (n + 1 < sizeof line) {
        ssize_t r = read(p[0], line + n, 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0 || line[n] == '\n') break;
        n++;
    }
    line[n] = 0;
    close(p[0]);
    srv_port = atoi(line);
    cr_assert_gt(srv_port, 0, "fake_openai did not print its port");
}

static void srv_stop(void)
{
    if (srv_pid > 0) {
        kill(srv_pid, SIGKILL);
        waitpid(srv_pid, NULL, 0);
    }
    srv_pid = -1;
}

static void setup(void)
{
    cr_assert_not_null(mkdtemp(work));
    srv_start();
}

static void teardown(void)
{
    srv_stop();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", work);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", work);
}

TestSuite(models, .init = setup, .fini = teardown, .timeout = 60);

/* GET path from the server: the body (malloc'd). */
static char *http_get(const char *path)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(fd, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)srv_port);
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    char req[512];
    snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
             path);
    cr_assert_eq(write(fd, req, strlen(req)), (ssize_t)strlen(req));
    size_t n = 0, cap = 4096;
    char *buf = malloc(cap);
    for (;;) {
        if (n + 1024 > cap) buf = realloc(buf, cap *= 2);
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = 0;
    char *body = strstr(buf, "\r\n\r\n");
    cr_assert_not_null(body, "bad reply from the server: %s", buf);
    char *out = strdup(body + 4);
    free(buf);
    return out;
}

/* How many completions the server was asked for with this model. */
static int count(const char *model)
{
    char path[256];
    snprintf(path, sizeof path, "/count?model=%s", model);
    char *b = http_get(path);
    int n = atoi(b);
    free(b);
    return n;
}

/* The last request for this model: {"body": …, "auth": "…"}. */
static json_t *last(const char *model)
{
    char path[256];
    snprintf(path, sizeof path, "/last?model=%s", model);
    char *b = http_get(path);
    json_t *j = json_loads(b, 0, NULL);
    cr_assert_not_null(j, "%s", b);
    free(b);
    return j;
}

/* ---- running workflows ------------------------------------------------------ */

typedef struct run_out {
    int status;
    char *out, *err, *trace;
    double secs;
} run_out;

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return strdup("");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = 0;
    fclose(f);
    return s;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* `zgc run FILE ARGS… --trace T` in the source directory, with the model
 * environment pointing at the server; env: more "NAME=VALUE" settings, or
 * "NAME" to unset a variable.  FILE without a slash is in tests/models.
 * The API key must appear nowhere in the output, errors and trace. */
static run_out zg(const char *file, const char *const *args, const char *const *env)
{
    char path[1024], out[256], err[256], trace[256];
    if (strchr(file, '/'))
        snprintf(path, sizeof path, "%s", file);
    else
        snprintf(path, sizeof path, "%s/%s", MODELS_DIR, file);
    nruns++;
    snprintf(out, sizeof out, "%s/out%d", work, nruns);
    snprintf(err, sizeof err, "%s/err%d", work, nruns);
    snprintf(trace, sizeof trace, "%s/trace%d.jsonl", work, nruns);
    const char *argv[64];
    int argc = 0;
    argv[argc++] = "zgc";
    argv[argc++] = "run";
    argv[argc++] = path;
    for (int i = 0; args && args[i]; i++) argv[argc++] = args[i];
    argv[argc++] = "--trace";
    argv[argc++] = trace;
    argv[argc] = NULL;
    double t0 = now_s();
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        char url[128], host[64];
        snprintf(url, sizeof url, "http://127.0.0.1:%d/v1", srv_port);
        snprintf(host, sizeof host, "127.0.0.1:%d", srv_port);
        setenv("OPENAI_BASE_URL", url, 1);
        setenv("OPENAI_API_KEY", KEY, 1);
        setenv("OLLAMA_HOST", host, 1);
        static const char *const proxies[] = {"http_proxy",  "https_proxy", "HTTP_PROXY",
                                              "HTTPS_PROXY", "all_proxy",   "ALL_PROXY"};
        for (size_t i = 0; i < sizeof proxies / sizeof proxies[0]; i++) unsetenv(proxies[i]);
        setenv("NO_PROXY", "*", 1);
        for (int i = 0; env && env[i]; i++) {
            const char *eq = strchr(env[i], '=');
            if (eq) {
                char name[128];
                snprintf(name, sizeof name, "%.*s", (int)(eq - env[i]), env[i]);
                setenv(name, eq + 1, 1);
            } else {
                unsetenv(env[i]);
            }
        }
        int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fo < 0 || fe < 0 || chdir(SOURCE_DIR) != 0) _exit(126);
        dup2(fo, STDOUT_FILENO);
        dup2(fe, STDERR_FILENO);
        int fi = open("/dev/null", O_RDONLY);
        if (fi >= 0) dup2(fi, STDIN_FILENO);
        execv(ZGC_BIN, (char *const *)argv);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    run_out r;
    r.secs = now_s() - t0;
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r.out = slurp(out);
    r.err = slurp(err);
    r.trace = slurp(trace);
    /* nor any 8 characters of it, in any case (a server may echo it
     * upper-cased or cut in pieces) */
    const char *key = KEY;
    for (size_t i = 0; i + 8 <= strlen(key); i++) {
        char part[9];
        memcpy(part, key + i, 8);
        part[8] = 0;
        cr_assert_null(strcasestr(r.out, part), "part `%s` of the API key is on stdout", part);
        cr_assert_null(strcasestr(r.err, part), "part `%s` of the API key is on stderr: %s", part,
                       r.err);
        cr_assert_null(strcasestr(r.trace, part), "part `%s` of the API key is in the trace: %s",
                       part, r.trace);
    }
    return r;
}

static void run_free(run_out *r)
{
    free(r->out);
    free(r->err);
    free(r->trace);
}

/* stdout without its final newline. */
static const char *result(run_out *r)
{
    size_t n = strlen(r->out);
    while (n > 0 && r->out[n - 1] == '\n') r->out[--n] = 0;
    return r->out;
}

static void expect_ok(run_out *r, const char *want)
{
    cr_assert_eq(r->status, 0, "exit %d, stderr: %s", r->status, r->err);
    cr_assert_str_eq(result(r), want, "stderr: %s", r->err);
}

static void expect_status(run_out *r, int status, const char *text)
{
    cr_assert_eq(r->status, status, "exit %d, stdout: %s, stderr: %s", r->status, r->out, r->err);
    cr_assert_str_eq(r->out, "", "no result after an error");
    cr_assert_not_null(strstr(r->err, text), "stderr lacks `%s`: %s", text, r->err);
}

static void expect_error(run_out *r, const char *text)
{
    cr_assert_eq(r->status, 1, "exit %d, stdout: %s, stderr: %s", r->status, r->out, r->err);
    cr_assert_str_eq(r->out, "", "no result after an error");
    cr_assert_not_null(strstr(r->err, text), "stderr lacks `%s`: %s", text, r->err);
}

/* The trace's lines as a JSON array. */
static json_t *trace_lines(const run_out *r)
{
    json_t *all = json_array();
    const char *s = r->trace;
    while (*s) {
        size_t n = strcspn(s, "\n");
        json_error_t je;
        json_t *j = json_loadb(s, n, 0, &je);
        cr_assert_not_null(j, "trace line is not JSON: %.*s", (int)n, s);
        json_array_append_new(all, j);
        s += n;
        if (*s) s++;
    }
    return all;
}

static int nkind(json_t *lines, const char *kind)
{
    int n = 0;
    size_t i;
    json_t *l;
    json_array_foreach(lines, i, l)
    {
        const char *k = json_string_value(json_object_get(l, "kind"));
        n += k && strcmp(k, kind) == 0;
    }
    return n;
}

/* The attempts of the act line of action (the first one). */
static int act_attempts(json_t *lines, const char *action)
{
    size_t i;
    json_t *l;
    json_array_foreach(lines, i, l)
    {
        const char *k = json_string_value(json_object_get(l, "kind"));
        const char *a = json_string_value(json_object_get(l, "action"));
        if (k && a && !strcmp(k, "act") && !strcmp(a, action))
            return (int)json_integer_value(json_object_get(l, "attempts"));
    }
    cr_assert_fail("no act line for %s", action);
    return -1;
}

/* The k-th (0-based) retry line. */
static json_t *retry_line(json_t *lines, int k)
{
    size_t i;
    json_t *l;
    json_array_foreach(lines, i, l)
    {
        const char *kind = json_string_value(json_object_get(l, "kind"));
        if (kind && !strcmp(kind, "retry") && k-- == 0) return l;
    }
    cr_assert_fail("no retry line %d", k);
    return NULL;
}

static int count_lines(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

/* `zgc trace check` accepts the run's trace (retry lines are not events). */
static void check_trace(const run_out *r, const char *file)
{
    char zgpath[1024], tpath[256];
    if (strchr(file, '/'))
        snprintf(zgpath, sizeof zgpath, "%s/%s", SOURCE_DIR, file);
    else
        snprintf(zgpath, sizeof zgpath, "%s/%s", MODELS_DIR, file);
    snprintf(tpath, sizeof tpath, "%s/check%d.jsonl", work, nruns);
    FILE *f = fopen(tpath, "w");
    cr_assert_not_null(f);
    fputs(r->trace, f);
    fclose(f);
    char cmd[2400];
    snprintf(cmd, sizeof cmd, "'%s' trace check -q '%s' '%s' > /dev/null 2> '%s.err'", ZGC_BIN,
             zgpath, tpath, tpath);
    int st = system(cmd);
    char epath[300];
    snprintf(epath, sizeof epath, "%s.err", tpath);
    char *msg = slurp(epath);
    cr_assert_eq(st, 0, "%s: the trace check failed: %s", file, msg);
    free(msg);
}

/* ---- answers ------------------------------------------------------------------ */

Test(models, normal_text_answer)
{
    run_out r = zg("ask.zg", ARGS("--arg", "q=hello", "--llm", "openai:test-model"), NULL);
    expect_ok(&r, "\"echo: Q: hello\"");
    cr_assert_eq(count("test-model"), 1);
    json_t *l = last("test-model");
    cr_assert_str_eq(json_string_value(json_object_get(l, "auth")), "Bearer " KEY);
    json_t *body = json_object_get(l, "body");
    json_t *want = json_loads("[{\"role\":\"system\",\"content\":\"Be brief.\"},"
                              "{\"role\":\"user\",\"content\":\"Q: hello\"}]",
                              0, NULL);
    cr_assert(json_equal(json_object_get(body, "messages"), want));
    cr_assert_null(json_object_get(body, "temperature"), "no temperature declared");
    cr_assert_null(json_object_get(body, "response_format"));
    json_decref(want);
    json_decref(l);
    json_t *lines = trace_lines(&r);
    cr_assert_eq(act_attempts(lines, "ask"), 1);
    cr_assert_eq(nkind(lines, "retry"), 0);
    cr_assert_null(strstr(r.err, "note"), "no progress note without a retry: %s", r.err);
    json_decref(lines);
    run_free(&r);
}

Test(models, json_request_and_temperature)
{
    run_out r = zg("pair.zg", ARGS("--arg", "text=t", "--llm", "openai:test-model"), NULL);
    expect_ok(&r, "[\"[verdict]\", 7]");
    json_t *l = last("test-model");
    json_t *body = json_object_get(l, "body");
    cr_assert_float_eq(json_number_value(json_object_get(body, "temperature")), 0.25, 1e-9);
    json_t *rf = json_object_get(body, "response_format");
    cr_assert_str_eq(json_string_value(json_object_get(rf, "type")), "json_schema");
    json_t *schema = json_object_get(json_object_get(rf, "json_schema"), "schema");
    json_t *want = json_loads("{\"type\":\"object\",\"properties\":{\"verdict\":{\"type\":"
                              "\"string\"},\"score\":{\"type\":\"integer\"}},\"required\":["
                              "\"verdict\",\"score\"],\"additionalProperties\":false}",
                              0, NULL);
    cr_assert(json_equal(schema, want), "%s", json_dumps(schema, 0));
    const char *sys = json_string_value(
        json_object_get(json_array_get(json_object_get(body, "messages"), 0), "content"));
    cr_assert_str_eq(sys, "Rate the text.\n\nAnswer with a JSON object with exactly these keys: "
                          "\"verdict\" (a string), \"score\" (an integer).");
    json_decref(want);
    json_decref(l);
    run_free(&r);
}

Test(models, ollama_backend)
{
    /* OLLAMA_HOST as HOST:PORT; no Authorization header even with a key set */
    run_out r = zg("ask.zg", ARGS("--arg", "q=hi", "--llm", "ollama:test-model"), NULL);
    expect_ok(&r, "\"echo: Q: hi\"");
    cr_assert_eq(count("test-model"), 1);
    json_t *l = last("test-model");
    cr_assert_str_eq(json_string_value(json_object_get(l, "auth")), "");
    json_decref(l);
    run_free(&r);

    /* with a scheme and a trailing slash */
    char host[64];
    snprintf(host, sizeof host, "OLLAMA_HOST=http://127.0.0.1:%d/", srv_port);
    r = zg("ask.zg", ARGS("--arg", "q=again", "--llm", "ollama:test-model"), ARGS(host));
    expect_ok(&r, "\"echo: Q: again\"");
    cr_assert_eq(count("test-model"), 2);
    run_free(&r);
}

Test(models, model_choice)
{
    /* the action's model */
    run_out r = zg("fallback.zg", ARGS("--arg", "q=x", "--llm", "openai"), NULL);
    expect_ok(&r, "\"echo: x\"");
    cr_assert_eq(count("from-action"), 1);
    run_free(&r);
    /* the spec's model wins over the action's */
    r = zg("fallback.zg", ARGS("--arg", "q=x", "--llm", "openai:spec-model"), NULL);
    expect_ok(&r, "\"echo: x\"");
    cr_assert_eq(count("spec-model"), 1);
    cr_assert_eq(count("from-action"), 1);
    run_free(&r);
    /* the default model, and routing per lifeline */
    r = zg("ask.zg", ARGS("--arg", "q=x", "--llm", "openai"), NULL);
    expect_ok(&r, "\"echo: Q: x\"");
    cr_assert_eq(count("gpt-4o-mini"), 1);
    run_free(&r);
    r = zg("ask.zg", ARGS("--arg", "q=x", "--llm-for", "Bot=ollama:routed"), NULL);
    expect_ok(&r, "\"echo: Q: x\"");
    cr_assert_eq(count("routed"), 1);
    run_free(&r);
    r = zg("ask.zg", ARGS("--arg", "q=x", "--llm", "ollama"), NULL);
    expect_ok(&r, "\"echo: Q: x\"");
    cr_assert_eq(count("llama3.2"), 1);
    run_free(&r);
}

/* ---- retries ------------------------------------------------------------------- */

Test(models, rate_limited_then_ok)
{
    run_out r =
        zg("ask.zg", ARGS("--arg", "q=a", "--llm", "openai:429-then-ok", "--backoff-scale", "0"),
           NULL);
    expect_ok(&r, "\"echo: Q: a\"");
    cr_assert_eq(count("429-then-ok"), 2);
    check_trace(&r, "ask.zg");
    json_t *lines = trace_lines(&r);
    cr_assert_eq(act_attempts(lines, "ask"), 2);
    cr_assert_eq(nkind(lines, "retry"), 1);
    json_t *rl = retry_line(lines, 0);
    cr_assert_str_eq(json_string_value(json_object_get(rl, "lifeline")), "Bot");
    cr_assert_str_eq(json_string_value(json_object_get(rl, "action")), "ask");
    cr_assert_eq(json_integer_value(json_object_get(rl, "attempt")), 1);
    cr_assert_float_eq(json_number_value(json_object_get(rl, "delay")), 0.0, 1e-9);
    cr_assert_str_eq(json_string_value(json_object_get(rl, "error")),
                     "openai:429-then-ok: HTTP 429: Rate limit reached for test-model");
    cr_assert_null(json_object_get(rl, "index"), "retry lines are not events");
    cr_assert_null(json_object_get(rl, "vc"));
    cr_assert_not_null(strstr(r.err, "zgc: note: lifeline Bot: llm ask: attempt 1 failed: "
                                     "openai:429-then-ok: HTTP 429: Rate limit reached for "
                                     "test-model; retrying\n"),
                       "%s", r.err);
    json_decref(lines);
    run_free(&r);
}

Test(models, retry_after_is_honoured)
{
    /* Retry-After: 5 beats the first backoff (2 s); both scaled by 0.1 */
    run_out r =
        zg("ask.zg", ARGS("--arg", "q=a", "--llm", "openai:429-then-ok", "--backoff-scale", "0.1"),
           NULL);
    expect_ok(&r, "\"echo: Q: a\"");
    cr_assert_eq(count("429-then-ok"), 2);
    json_t *lines = trace_lines(&r);
    cr_assert_float_eq(json_number_value(json_object_get(retry_line(lines, 0), "delay")), 0.5,
                       1e-9);
    cr_assert_geq(r.secs, 0.45, "took %g s", r.secs);
    cr_assert_not_null(strstr(r.err, "retrying in 0.5 s"), "%s", r.err);
    json_decref(lines);
    run_free(&r);
}

Test(models, backoff_doubles)
{
    /* 2 s, then 4 s, scaled by 0.05 */
    run_out r = zg("ask.zg",
                   ARGS("--arg", "q=a", "--llm", "openai:500x2", "--backoff-scale", "0.05"), NULL);
    expect_ok(&r, "\"echo: Q: a\"");
    json_t *lines = trace_lines(&r);
    cr_assert_float_eq(json_number_value(json_object_get(retry_line(lines, 0), "delay")), 0.1,
                       1e-9);
    cr_assert_float_eq(json_number_value(json_object_get(retry_line(lines, 1), "delay")), 0.2,
                       1e-9);
    cr_assert_geq(r.secs, 0.28, "took %g s", r.secs);
    json_decref(lines);
    run_free(&r);
}

Test(models, server_errors_then_ok)
{
    run_out r =
        zg("ask.zg", ARGS("--arg", "q=a", "--llm", "openai:500x2", "--backoff-scale", "0"), NULL);
    expect_ok(&r, "\"echo: Q: a\"");
    cr_assert_eq(count("500x2"), 3);
    check_trace(&r, "ask.zg");
    json_t *lines = trace_lines(&r);
    cr_assert_eq(act_attempts(lines, "ask"), 3);
    cr_assert_eq(nkind(lines, "retry"), 2);
    cr_assert_eq(json_integer_value(json_object_get(retry_line(lines, 1), "attempt")), 2);
    cr_assert_eq(count_lines(r.err, "zgc: note: lifeline Bot: llm ask: attempt "), 2, "%s", r.err);
    cr_assert_not_null(strstr(r.err, "attempt 2 failed: openai:500x2: HTTP 500: fake server "
                                     "error; retrying\n"),
                       "%s", r.err);
    json_decref(lines);
    run_free(&r);
}

Test(models, unauthorized_fails_at_once)
{
    run_out r =
        zg("ask.zg", ARGS("--arg", "q=a", "--llm", "openai:401", "--backoff-scale", "0"), NULL);
    expect_error(&r, "zgc: error: lifeline Bot: ");
    expect_error(&r, "action ask: failed at attempt 1 (not retried): openai:401: HTTP 401: "
                     "Incorrect API key provided: [redacted]. You can find your API key");
    cr_assert_eq(count("401"), 1);
    cr_assert_null(strstr(r.err, "note"), "no retry: %s", r.err);
    json_t *lines = trace_lines(&r);
    cr_assert_eq(nkind(lines, "retry"), 0);
    json_decref(lines);
    run_free(&r);

    /* a declared fallback is used for a permanent error */
    r = zg("fallback.zg", ARGS("--arg", "q=a", "--llm", "openai:401"), NULL);
    expect_ok(&r, "\"fallback used\"");
    cr_assert_eq(count("401"), 2);
    cr_assert_not_null(strstr(r.err, "llm ask: using the fallback after 1 attempt: openai:401: "
                                     "HTTP 401: Incorrect API key provided: [redacted]"),
                       "%s", r.err);
    run_free(&r);

    /* without a key: the message says so */
    r = zg("ask.zg", ARGS("--arg", "q=a", "--llm", "openai:401"), ARGS("OPENAI_API_KEY"));
    expect_error(&r, "HTTP 401: Incorrect API key provided: (none). You can find your API key "
                     "in your account settings. (OPENAI_API_KEY is not set)");
    run_free(&r);
}

Test(models, key_echoes_are_redacted_or_refused)
{
    /* an error that repeats the key upper-cased and cut in two */
    run_out r = zg("ask.zg", ARGS("--arg", "q=a", "--llm", "openai:401-mangled"), NULL);
    expect_error(&r, "HTTP 401: Incorrect API key provided: [redacted] [redacted].");
    run_free(&r);
    /* a successful answer that repeats the key, as sent, upper-cased or
     * split: refused as a model error, not retried, never a value */
    const char *models[] = {"openai:echo-key", "openai:echo-key-upper", "openai:echo-key-split"};
    for (int i = 0; i < 3; i++) {
        r = zg("ask.zg", ARGS("--arg", "q=a", "--llm", models[i], "--backoff-scale", "0"), NULL);
        expect_error(&r, "the answer contains the API key (OPENAI_API_KEY); it is refused");
        cr_assert_eq(count(models[i] + 7), 1, "%s: not retried", models[i]);
        run_free(&r);
    }
}

Test(models, bad_keys_and_urls_fail_at_once)
{
    /* a key with a line break would inject request headers: refused
     * before any request */
    run_out r = zg("ask.zg", ARGS("--arg", "q=a", "--llm", "openai:crlf-key"),
                   ARGS("OPENAI_API_KEY=" KEY "\r\nX-Injected: 1"));
    /* found before the run starts: a usage error */
    expect_status(&r, 2,
                  "OPENAI_API_KEY contains a space, a control character or a character that "
                  "is not ASCII");
    cr_assert_eq(count("crlf-key"), 0);
    run_free(&r);
    /* URLs that can never work: no retries, no waiting */
    const char *bad[] = {"OPENAI_BASE_URL=file:///etc", "OPENAI_BASE_URL=ftp://127.0.0.1/v1",
                         "OPENAI_BASE_URL=http://zgc-no-such-host.invalid/v1",
                         "OPENAI_BASE_URL=http://[::1/v1"};
    const char *want[] = {"OPENAI_BASE_URL must be an http:// or https:// URL, not "
                          "`file:///etc/chat/completions`",
                          "must be an http:// or https:// URL",
                          "cannot reach http://zgc-no-such-host.invalid/v1/chat/completions",
                          "cannot reach http://[::1/v1/chat/completions"};
    for (int i = 0; i < 4; i++) {
        r = zg("ask.zg", ARGS("--arg", "q=a", "--llm", "openai:test-model"), ARGS(bad[i]));
        /* a URL of another scheme is found before the run (exit 2); a host
           that cannot be reached at the first call (exit 1) */
        expect_status(&r, i < 2 ? 2 : 1, want[i]);
        cr_assert_eq(count_lines(r.err, "zgc: error:"), 1, "%s", r.err);
        cr_assert_null(strstr(r.err, "note"), "no retry: %s", r.err);
        cr_assert_lt(r.secs, 10.0, "%s took %.1f s", bad[i], r.secs);
        run_free(&r);
    }
}

Test(models, other_permanent_statuses)
{
    static const char *const models[] = {"status-400", "status-403", "status-404"};
    for (int i = 0; i < 3; i++) {
        char spec[64], want[128];
        snprintf(spec, sizeof spec, "openai:%s", models[i]);
        snprintf(want, sizeof want, "failed at attempt 1 (not retried): %s: HTTP %s: fake status",
                 spec, models[i] + 7);
        run_out r = zg("ask.zg", ARGS("--arg", "q=a", "--llm", spec, "--backoff-scale", "0"), NULL);
        expect_error(&r, want);
        cr_assert_eq(count(models[i]), 1, "%s", models[i]);
        run_free(&r);
    }
    /* the other transient statuses are retried */
    static const char *const transient[] = {"408", "409", "425", "502", "503", "504"};
    for (int i = 0; i < 6; i++) {
        char model[64], spec[96];
        snprintf(model, sizeof model, "status-%s-then-ok", transient[i]);
        snprintf(spec, sizeof spec, "openai:%s", model);
        run_out r = zg("ask.zg", ARGS("--arg", "q=a", "--llm", spec, "--backoff-scale", "0"), NULL);
        expect_ok(&r, "\"echo: Q: a\"");
        cr_assert_eq(count(model), 2, "%s", model);
        run_free(&r);
    }
}

Test(models, attempts_run_out)
{
    /* retries 3: 4 attempts, then the run fails with the count and the message */
    run_out r = zg(
        "ask.zg", ARGS("--arg", "q=a", "--llm", "openai:status-500", "--backoff-scale", "0"), NULL);
    expect_error(&r, "lifeline Bot: ");
    expect_error(&r, "action ask: no answer after 4 attempts: openai:status-500: HTTP 500: fake "
                     "status 500");
    cr_assert_eq(count("status-500"), 4);
    cr_assert_eq(count_lines(r.err, "zgc: note:"), 3, "%s", r.err);
    json_t *lines = trace_lines(&r);
    cr_assert_eq(nkind(lines, "retry"), 3);
    json_decref(lines);
    run_free(&r);

    /* retries 1 and a fallback: 2 attempts, then the fallback */
    r = zg("fallback.zg",
           ARGS("--arg", "q=a", "--llm", "openai:status-503", "--backoff-scale", "0"), NULL);
    expect_ok(&r, "\"fallback used\"");
    cr_assert_eq(count("status-503"), 2);
    cr_assert_not_null(strstr(r.err, "using the fallback after 2 attempts"), "%s", r.err);
    lines = trace_lines(&r);
    cr_assert_eq(act_attempts(lines, "ask"), 2);
    json_decref(lines);
    run_free(&r);
}

Test(models, malformed_reply_then_ok)
{
    run_out r =
        zg("ask.zg",
           ARGS("--arg", "q=a", "--llm", "openai:badjson-then-ok", "--backoff-scale", "0"), NULL);
    expect_ok(&r, "\"echo: Q: a\"");
    cr_assert_eq(count("badjson-then-ok"), 2);
    cr_assert_not_null(strstr(r.err, "attempt 1 failed: openai:badjson-then-ok: the server's "
                                     "reply is not JSON"),
                       "%s", r.err);
    run_free(&r);
}

Test(models, missing_key_then_ok)
{
    run_out r =
        zg("pair.zg",
           ARGS("--arg", "text=t", "--llm", "openai:missing-key-then-ok", "--backoff-scale", "0"),
           NULL);
    expect_ok(&r, "[\"[verdict]\", 7]");
    cr_assert_eq(count("missing-key-then-ok"), 2);
    check_trace(&r, "pair.zg");
    json_t *lines = trace_lines(&r);
    cr_assert_str_eq(json_string_value(json_object_get(retry_line(lines, 0), "error")),
                     "openai:missing-key-then-ok: the answer: missing key `score`");
    cr_assert_eq(act_attempts(lines, "rate"), 2);
    json_decref(lines);
    run_free(&r);
}

/* Two lifelines each wait 1.5 s for a model at the same time.  With
 * fibers on ONE worker the calls overlap (the worker is handed to another
 * thread while a call blocks): the run takes about 1.5 s longer than the
 * same run with instant answers, not 3 s.  The threads scheduler too. */
Test(models, blocking_calls_overlap_on_one_worker)
{
    const char *const scheds[][4] = {{"--scheduler", "fibers", "--workers", "1"},
                                     {"--scheduler", "threads", "--workers", "1"}};
    for (int k = 0; k < 2; k++) {
        /* the same build first (cached after), with instant answers */
        run_out fast = zg("overlap.zg",
                          ARGS("--arg", "q=hi", "--llm", "openai:test-model", scheds[k][0],
                               scheds[k][1], scheds[k][2], scheds[k][3]),
                          NULL);
        expect_ok(&fast, "[\"echo: A: hi\", \"echo: B: hi\"]");
        fast.secs = 0;
        run_out again = zg("overlap.zg",
                           ARGS("--arg", "q=hi", "--llm", "openai:test-model", scheds[k][0],
                                scheds[k][1], scheds[k][2], scheds[k][3]),
                           NULL);
        expect_ok(&again, "[\"echo: A: hi\", \"echo: B: hi\"]");
        run_out slow = zg("overlap.zg",
                          ARGS("--arg", "q=hi", "--llm", "openai:sleep-1500", scheds[k][0],
                               scheds[k][1], scheds[k][2], scheds[k][3]),
                          NULL);
        expect_ok(&slow, "[\"echo: A: hi\", \"echo: B: hi\"]");
        cr_assert_eq(count("sleep-1500"), 2 * (k + 1));
        double extra = slow.secs - again.secs;
        cr_assert_geq(slow.secs, 1.5, "%s: the run took %g s", scheds[k][1], slow.secs);
        cr_assert_lt(extra, 2.4, "%s: the calls took %g s: they did not overlap", scheds[k][1],
                     extra);
        run_free(&fast);
        run_free(&again);
        run_free(&slow);
    }
}

Test(models, hang_times_out)
{
    /* judge: retries 1, so two attempts of 1 s each */
    run_out r = zg("judge.zg",
                   ARGS("--arg", "text=t", "--llm", "openai:hang", "--llm-timeout", "1",
                        "--backoff-scale", "0"),
                   NULL);
    expect_error(&r, "action judge: no answer after 2 attempts: openai:hang: no complete answer "
                     "within 1 s (--llm-timeout)");
    cr_assert_eq(count("hang"), 2);
    cr_assert_geq(r.secs, 1.9, "took %g s", r.secs);
    cr_assert_lt(r.secs, 10.0, "took %g s", r.secs);
    run_free(&r);
}

Test(models, transport_error)
{
    /* a port nobody listens on */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &al), 0);
    char url[128], want[160];
    snprintf(url, sizeof url, "OPENAI_BASE_URL=http://127.0.0.1:%d/v1/", ntohs(a.sin_port));
    snprintf(want, sizeof want,
             "cannot reach http://127.0.0.1:%d/v1/chat/completions: ", ntohs(a.sin_port));
    run_out r = zg("judge.zg",
                   ARGS("--arg", "text=t", "--llm", "openai:test-model", "--backoff-scale", "0"),
                   ARGS(url));
    close(fd);
    expect_error(&r, "action judge: no answer after 2 attempts: openai:test-model: ");
    expect_error(&r, want);
    cr_assert_eq(count_lines(r.err, "zgc: note:"), 1, "%s", r.err);
    run_free(&r);
}

/* ---- cancellation ------------------------------------------------------------- */

Test(models, forever_until_the_run_stops)
{
    run_out r = zg("forever.zg",
                   ARGS("--arg", "q=a", "--llm", "openai:status-503", "--backoff-scale", "0.01",
                        "--timeout", "2"),
                   NULL);
    expect_error(&r, "timeout after 2 s");
    cr_assert_null(strstr(r.err, "fallback"), "no fallback: %s", r.err);
    cr_assert_gt(count("status-503"), 5, "kept retrying");
    cr_assert_lt(r.secs, 5.0, "took %g s", r.secs);
    run_free(&r);
}

Test(models, cancellation_interrupts_the_backoff)
{
    /* the first retry would wait 20 s; the run stops after 0.5 s (a lifeline
     * that did not come back would hold the run for 5 s more) */
    run_out r = zg("forever.zg",
                   ARGS("--arg", "q=a", "--llm", "openai:status-503", "--backoff-scale", "10",
                        "--timeout", "0.5"),
                   NULL);
    expect_error(&r, "timeout after 0.5 s");
    cr_assert_eq(count("status-503"), 1);
    cr_assert_lt(r.secs, 4.0, "took %g s", r.secs);
    cr_assert_null(strstr(r.err, "fallback"), "%s", r.err);
    run_free(&r);
}

Test(models, cancellation_interrupts_a_call)
{
    run_out r =
        zg("forever.zg", ARGS("--arg", "q=a", "--llm", "openai:hang", "--timeout", "0.5"), NULL);
    expect_error(&r, "timeout after 0.5 s");
    cr_assert_eq(count("hang"), 1);
    cr_assert_lt(r.secs, 4.0, "took %g s", r.secs);
    cr_assert_null(strstr(r.err, "fallback"), "%s", r.err);
    run_free(&r);
}

/* ---- parsing ------------------------------------------------------------------ */

Test(models, yes_text_for_a_bool)
{
    run_out r = zg("judge.zg", ARGS("--arg", "text=t", "--llm", "openai:yes-text"), NULL);
    expect_ok(&r, "true");
    cr_assert_eq(count("yes-text"), 1);
    run_free(&r);
}

/* Runs FILE with --llm openai:say, the answer being `text`. */
static run_out say(const char *file, const char *text)
{
    char arg[512];
    snprintf(arg, sizeof arg, "text=%s", text);
    return zg(file, ARGS("--arg", arg, "--llm", "openai:say", "--backoff-scale", "0"), NULL);
}

Test(models, bool_variants)
{
    static const char *const yes[] = {"yes", "  TRUE\n", "1", "**Yes**", "'true'", "Yes!"};
    static const char *const no[] = {"no", "False.", "0", "NO", "(no)", " false "};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        run_out r = say("judge.zg", yes[i]);
        expect_ok(&r, "true");
        run_free(&r);
    }
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        run_out r = say("judge.zg", no[i]);
        expect_ok(&r, "false");
        run_free(&r);
    }
    run_out r = say("judge.zg", "maybe");
    expect_error(&r, "action judge: no valid answer after 2 attempts: openai:say: the answer is "
                     "not yes/no/true/false/1/0: \"maybe\"");
    cr_assert_eq(count("say"), 14);
    run_free(&r);
    r = say("judge.zg", "yes, it is");
    expect_error(&r, "not yes/no/true/false/1/0: \"yes, it is\"");
    run_free(&r);
}

Test(models, json_answers)
{
    run_out r = say("pair.zg", "{\"verdict\": \"ok\", \"score\": 3}");
    expect_ok(&r, "[\"ok\", 3]");
    run_free(&r);
    r = say("pair.zg", "```json\n{\"verdict\": \"fenced\", \"score\": 4}\n```");
    expect_ok(&r, "[\"fenced\", 4]");
    run_free(&r);
    r = say("pair.zg", "Here it is:\n```\n{\"score\": 5, \"verdict\": \"plain fence\"}\n```\n");
    expect_ok(&r, "[\"plain fence\", 5]");
    run_free(&r);
    r = say("pair.zg", "{\"verdict\": \"x\", \"score\": \"high\"}");
    expect_error(&r, "no valid answer after 2 attempts: openai:say: the answer: `score`: ");
    run_free(&r);
    r = say("pair.zg", "{\"verdict\": \"x\", \"score\": 1, \"extra\": true}");
    expect_error(&r, "the answer: unexpected key `extra`");
    run_free(&r);
    r = say("pair.zg", "[1, 2]");
    expect_error(&r, "the answer is not a JSON object: \"[1, 2]\"");
    run_free(&r);
    r = say("pair.zg", "sure!");
    expect_error(&r, "the answer is not JSON");
    run_free(&r);
}

Test(models, enum_answers)
{
    static const char *const ok[][2] = {{"green", "\"green\""},
                                        {"Blue.", "\"blue\""},
                                        {"**red**", "\"red\""},
                                        {"Color.green", "\"green\""},
                                        {" `blue`\n", "\"blue\""}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        run_out r = say("color.zg", ok[i][0]);
        expect_ok(&r, ok[i][1]);
        run_free(&r);
    }
    run_out r = say("color.zg", "purple");
    expect_error(&r, "action pick: no valid answer after 1 attempt: openai:say: the answer is not "
                     "one member of Color (red, green, blue): \"purple\"");
    run_free(&r);
    r = say("color.zg", "red or green");
    expect_error(&r, "not one member of Color");
    run_free(&r);
    /* the normal answer: the instruction lists the members */
    r = zg("color.zg", ARGS("--arg", "text=t", "--llm", "openai:test-model"), NULL);
    expect_ok(&r, "\"red\"");
    json_t *l = last("test-model");
    const char *sys = json_string_value(json_object_get(
        json_array_get(json_object_get(json_object_get(l, "body"), "messages"), 0), "content"));
    cr_assert_str_eq(sys, "Answer with exactly one of: red, green, blue.");
    json_decref(l);
    run_free(&r);
}

Test(models, number_answers)
{
    run_out r = say("numbers.zg", "42");
    expect_ok(&r, "[42, 42.0]");
    run_free(&r);
    r = say("numbers.zg", " **-7.** ");
    expect_ok(&r, "[-7, -7.0]");
    run_free(&r);
    r = say("numbers.zg", "3.5");
    expect_error(&r, "action count: no valid answer after 1 attempt: openai:say: the answer is not "
                     "an integer: \"3.5\"");
    run_free(&r);
    r = say("numbers.zg", "99999999999999999999");
    expect_error(&r, "the answer is an integer out of range");
    run_free(&r);
    r = zg("numbers.zg", ARGS("--arg", "text=t", "--llm", "openai:test-model"), NULL);
    expect_ok(&r, "[7, 0.5]");
    run_free(&r);
}

/* ---- the examples --------------------------------------------------------------- */

/* The results of the examples when every model is the fake server's normal
 * answer; examples not listed must just succeed. */
static const char *const example_results[][2] = {
    {"hello.zg", "\"echo: hi\""},
    {"increment.zg", "3"},
    {"consensus.zg", "\"[verdict]\""},
    {"merge.zg", "\"blocked c1\""},
    {"parallel.zg", "\"text\\n--\\nlegal: echo: text\\nstyle: echo: text\""},
    {"coregion.zg", "\"echo: City: Paris\\nWeather: echo: Paris\\nTraffic: echo: Paris\""},
    {"extern/score.zg", "\"published 17 bytes (score 1.00)\""},
};

static void run_example(const char *name, char *opts, int processes)
{
    const char *args[40];
    int n = 0;
    if (processes) args[n++] = "--processes";
    for (char *w = strtok(opts, " \t"); w && n < 34; w = strtok(NULL, " \t")) args[n++] = w;
    args[n++] = "--llm";
    args[n++] = "openai:test-model";
    args[n] = NULL;
    char path[512];
    snprintf(path, sizeof path, "examples/%s", name);
    run_out r = zg(path, args, NULL);
    cr_assert_eq(r.status, 0, "%s: exit %d: %s", name, r.status, r.err);
    const char *want = NULL;
    for (size_t i = 0; i < sizeof example_results / sizeof example_results[0]; i++)
        if (!strcmp(example_results[i][0], name)) want = example_results[i][1];
    if (want)
        cr_assert_str_eq(result(&r), want, "%s", name);
    else
        cr_assert_str_neq(result(&r), "", "%s", name);
    cr_assert_null(strstr(r.err, "note"), "%s: %s", name, r.err);
    check_trace(&r, path);
    run_free(&r);
}

Test(models, examples_end_to_end, .timeout = 120)
{
    FILE *f = fopen(SOURCE_DIR "/tests/run/examples.txt", "r");
    cr_assert_not_null(f);
    char line[1024];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || !strchr(line, '|')) continue;
        char *bar1 = strchr(line, '|');
        char *bar2 = strchr(bar1 + 1, '|');
        cr_assert_not_null(bar2, "%s", line);
        *bar1 = 0;
        *bar2 = 0;
        char name[256];
        if (sscanf(line, "%255s", name) != 1) continue;
        char opts[512];
        snprintf(opts, sizeof opts, "%s", bar1 + 1);
        run_example(name, opts, 0);
        n++;
    }
    fclose(f);
    cr_assert_geq(n, 7);
    cr_assert_geq(count("test-model"), 7);
    char opts[] = "--arg topic=hi";
    run_example("hello.zg", opts, 1);
}
