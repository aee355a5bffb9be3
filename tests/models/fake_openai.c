/* fake_openai.c — a small OpenAI-compatible chat completions server for
 * the model tests.
 *
 *   fake_openai            listens on 127.0.0.1, on a port of the system's
 *                          choosing, and prints the port on stdout
 *
 * HTTP/1.1, one thread per connection, one request per connection
 * (`Connection: close`).  Routes:
 *
 *   POST /v1/chat/completions   a chat completion; the scenario is chosen
 *                               by the request's "model"
 *   GET /count?model=NAME       how many completions NAME was asked for
 *   GET /last?model=NAME        {"body": last request, "auth": its
 *                               Authorization header or ""}
 *
 * Scenarios (model names):
 *   429-then-ok          429 with Retry-After: 5, then normal answers
 *   500x2                500 twice, then normal answers
 *   401                  always 401; the message repeats the bearer token
 *                        (to check that clients redact it)
 *   badjson-then-ok      a 200 reply that is not JSON, then normal answers
 *   missing-key-then-ok  a JSON answer missing its last key, then normal
 *   hang                 never answers (until the client goes away)
 *   401-mangled          always 401; the message repeats the bearer token
 *                        upper-cased and cut in two by a line break
 *   echo-key[-upper|-split]  a 200 answer that repeats the bearer token
 *                        (as sent, upper-cased, or cut in two by a line
 *                        break), as a server reflecting the Authorization
 *                        header would
 *   sleep-MS             a normal answer after MS milliseconds
 *   yes-text             the answer "Yes."
 *   say                  the answer is the last user message, verbatim
 *   status-NNN           always HTTP NNN with an error message
 *   status-NNN-then-ok   HTTP NNN once, then normal answers
 *   anything else        normal answers:
 *     - a JSON-mode request (response_format json_schema) gets an object
 *       with the schema's keys: strings "[key]", integers 7, numbers 0.5,
 *       booleans true, enums their first member, anything else {};
 *     - a system prompt asking for yes or no / an integer / a number /
 *       one of a list gets "yes" / "7" / "0.5" / the first item;
 *     - otherwise "echo: " followed by the last user message.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#define HEAD_MAX (64 * 1024)
#define BODY_MAX (16 * 1024 * 1024)

/* ---- per-model counters -------------------------------------------------- */

typedef struct entry {
    char *model;
    int count;
    char *last_body;
    char *last_auth;
    struct entry *next;
} entry;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static entry *entries;

static entry *entry_get(const char *model)
{
    for (entry *e = entries; e; e = e->next)
        if (strcmp(e->model, model) == 0) return e;
    entry *e = calloc(1, sizeof *e);
    if (!e || !(e->model = strdup(model))) abort();
    e->next = entries;
    entries = e;
    return e;
}

/* Counts a request for model; returns its number (1, 2, …). */
static int record(const char *model, const char *body, const char *auth)
{
    pthread_mutex_lock(&mu);
    entry *e = entry_get(model);
    int n = ++e->count;
    free(e->last_body);
    free(e->last_auth);
    e->last_body = strdup(body);
    e->last_auth = strdup(auth ? auth : "");
    pthread_mutex_unlock(&mu);
    return n;
}

/* ---- I/O ------------------------------------------------------------------ */

static int write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

static void respond(int fd, int status, const char *extra_headers, const char *type,
                    const char *body)
{
    const char *reason = status == 200 ? "OK" : status == 404 ? "Not Found" : "Error";
    char head[512];
    size_t n = strlen(body);
    snprintf(head, sizeof head,
             "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%sConnection: "
             "close\r\n\r\n",
             status, reason, type, n, extra_headers ? extra_headers : "");
    if (write_all(fd, head, strlen(head)) == 0) write_all(fd, body, n);
}

static void respond_json(int fd, int status, const char *extra_headers, json_t *j)
{
    char *text = json_dumps(j, JSON_COMPACT);
    respond(fd, status, extra_headers, "application/json", text ? text : "{}");
    free(text);
}

static void respond_error(int fd, int status, const char *extra_headers, const char *msg)
{
    json_t *j = json_pack("{s:{s:s,s:s}}", "error", "message", msg, "type", "fake_error");
    respond_json(fd, status, extra_headers, j);
    json_decref(j);
}

/* ---- answers -------------------------------------------------------------- */

/* The content of the last message with this role, or "". */
static const char *last_content(json_t *req, const char *role)
{
    json_t *msgs = json_object_get(req, "messages");
    const char *found = "";
    size_t i;
    json_t *m;
    json_array_foreach(msgs, i, m)
    {
        const char *r = json_string_value(json_object_get(m, "role"));
        const char *c = json_string_value(json_object_get(m, "content"));
        if (r && c && strcmp(r, role) == 0) found = c;
    }
    return found;
}

/* The normal answer's content (malloc'd). */
static char *normal_answer(json_t *req, int drop_last_key)
{
    json_t *rf = json_object_get(req, "response_format");
    const char *rft = json_string_value(json_object_get(rf, "type"));
    if (rft && strcmp(rft, "json_schema") == 0) {
        json_t *schema = json_object_get(json_object_get(rf, "json_schema"), "schema");
        json_t *props = json_object_get(schema, "properties");
        json_t *required = json_object_get(schema, "required");
        json_t *obj = json_object();
        size_t i, n = json_array_size(required);
        for (i = 0; i < n; i++) {
            if (drop_last_key && i + 1 == n) break;
            const char *key = json_string_value(json_array_get(required, i));
            if (!key) continue;
            json_t *ps = json_object_get(props, key);
            const char *t = json_string_value(json_object_get(ps, "type"));
            json_t *members = json_object_get(ps, "enum");
            json_t *v;
            if (json_array_size(members) > 0) {
                v = json_copy(json_array_get(members, 0));
            } else if (t && strcmp(t, "string") == 0) {
                char buf[300];
                snprintf(buf, sizeof buf, "[%s]", key);
                v = json_string(buf);
            } else if (t && strcmp(t, "integer") == 0) {
                v = json_integer(7);
            } else if (t && strcmp(t, "number") == 0) {
                v = json_real(0.5);
            } else if (t && strcmp(t, "boolean") == 0) {
                v = json_true();
            } else {
                v = json_object();
            }
            json_object_set_new(obj, key, v);
        }
        char *text = json_dumps(obj, JSON_COMPACT);
        json_decref(obj);
        return text;
    }
    const char *sys = last_content(req, "system");
    if (strstr(sys, "Answer with yes or no only.")) return strdup("yes");
    if (strstr(sys, "Answer with an integer only.")) return strdup("7");
    if (strstr(sys, "Answer with a number only.")) return strdup("0.5");
    const char *one = strstr(sys, "Answer with exactly one of: ");
    if (one) {
        one += strlen("Answer with exactly one of: ");
        return strndup(one, strcspn(one, ",."));
    }
    const char *user = last_content(req, "user");
    char *text = malloc(strlen(user) + 7);
    if (text) sprintf(text, "echo: %s", user);
    return text;
}

static void respond_answer(int fd, const char *model, const char *content)
{
    json_t *j = json_pack("{s:s,s:s,s:i,s:s,s:[{s:i,s:{s:s,s:s},s:s}],s:{s:i,s:i,s:i}}", "id",
                          "chatcmpl-fake", "object", "chat.completion", "created", 0, "model",
                          model, "choices", "index", 0, "message", "role", "assistant", "content",
                          content, "finish_reason", "stop", "usage", "prompt_tokens", 1,
                          "completion_tokens", 1, "total_tokens", 2);
    respond_json(fd, 200, NULL, j);
    json_decref(j);
}

/* Waits until the client closes the connection (at most 60 s). */
static void hang(int fd)
{
    for (int i = 0; i < 600; i++) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, 100);
        if (r > 0) {
            char c;
            ssize_t got = recv(fd, &c, 1, 0);
            if (got <= 0) return;
        }
    }
}

static void chat(int fd, const char *body, const char *auth)
{
    json_error_t je;
    json_t *req = json_loads(body, 0, &je);
    if (!json_is_object(req)) {
        json_decref(req);
        respond_error(fd, 400, NULL, "the request is not a JSON object");
        return;
    }
    const char *model = json_string_value(json_object_get(req, "model"));
    if (!model) model = "";
    int n = record(model, body, auth);
    int status = 0, then_ok = 0;
    char *content = NULL;
    if (strcmp(model, "429-then-ok") == 0 && n == 1) {
        respond_error(fd, 429, "Retry-After: 5\r\n", "Rate limit reached for test-model");
    } else if (strcmp(model, "500x2") == 0 && n <= 2) {
        respond_error(fd, 500, NULL, "fake server error");
    } else if (strcmp(model, "401") == 0) {
        char msg[512];
        const char *token = auth && strncmp(auth, "Bearer ", 7) == 0 ? auth + 7 : "(none)";
        snprintf(msg, sizeof msg,
                 "Incorrect API key provided: %s. You can find your API key "
                 "in your account settings.",
                 token);
        respond_error(fd, 401, NULL, msg);
    } else if (strcmp(model, "401-mangled") == 0 || strncmp(model, "echo-key", 8) == 0) {
        const char *token = auth && strncmp(auth, "Bearer ", 7) == 0 ? auth + 7 : "(none)";
        size_t tn = strlen(token);
        char mangled[512];
        int upper = !strcmp(model, "401-mangled") || !strcmp(model, "echo-key-upper");
        int split = !strcmp(model, "401-mangled") || !strcmp(model, "echo-key-split");
        size_t k = 0;
        for (size_t i = 0; i < tn && k + 3 < sizeof mangled; i++) {
            if (split && i == tn / 2) mangled[k++] = '\n';
            char c = token[i];
            mangled[k++] = upper && c >= 'a' && c <= 'z' ? (char)(c - 32) : c;
        }
        mangled[k] = 0;
        char msg[600];
        if (model[0] == '4') {
            snprintf(msg, sizeof msg, "Incorrect API key provided: %s.", mangled);
            respond_error(fd, 401, NULL, msg);
        } else {
            snprintf(msg, sizeof msg, "your request carried %s", mangled);
            respond_answer(fd, model, msg);
        }
    } else if (strcmp(model, "badjson-then-ok") == 0 && n == 1) {
        respond(fd, 200, NULL, "application/json", "{\"choices\": [ this is not JSON");
    } else if (strcmp(model, "hang") == 0) {
        hang(fd);
    } else if (sscanf(model, "sleep-%d", &status) == 1 && status > 0 && status <= 60000) {
        struct timespec d = {status / 1000, (long)(status % 1000) * 1000000L};
        while (nanosleep(&d, &d) != 0 && errno == EINTR) {}
        content = normal_answer(req, 0);
        respond_answer(fd, model, content ? content : "");
    } else if (sscanf(model, "status-%d", &status) == 1 && status >= 100 && status <= 599 &&
               (!(then_ok = strstr(model, "-then-ok") != NULL) || n == 1)) {
        char msg[64];
        snprintf(msg, sizeof msg, "fake status %d", status);
        respond_error(fd, status, NULL, msg);
    } else {
        if (strcmp(model, "yes-text") == 0)
            content = strdup("Yes.");
        else if (strcmp(model, "say") == 0)
            content = strdup(last_content(req, "user"));
        else
            content = normal_answer(req, strcmp(model, "missing-key-then-ok") == 0 && n == 1);
        respond_answer(fd, model, content ? content : "");
    }
    free(content);
    json_decref(req);
}

/* The value of query parameter `name` (malloc'd, %XX decoded), or NULL. */
static char *query_param(const char *path, const char *name)
{
    const char *q = strchr(path, '?');
    size_t nl = strlen(name);
    while (q) {
        q++;
        if (strncmp(q, name, nl) == 0 && q[nl] == '=') {
            const char *v = q + nl + 1;
            size_t len = strcspn(v, "&");
            char *out = malloc(len + 1), *o = out;
            if (!out) return NULL;
            for (size_t i = 0; i < len; i++) {
                unsigned hi;
                if (v[i] == '%' && i + 2 < len && sscanf(v + i + 1, "%2x", &hi) == 1) {
                    *o++ = (char)hi;
                    i += 2;
                } else {
                    *o++ = v[i] == '+' ? ' ' : v[i];
                }
            }
            *o = 0;
            return out;
        }
        q = strchr(q, '&');
    }
    return NULL;
}

static void get(int fd, const char *path)
{
    char *model = query_param(path, "model");
    if (!model) {
        respond(fd, 404, NULL, "text/plain", "no such page\n");
        return;
    }
    pthread_mutex_lock(&mu);
    entry *e = entry_get(model);
    if (strncmp(path, "/count?", 7) == 0) {
        char buf[32];
        snprintf(buf, sizeof buf, "%d", e->count);
        pthread_mutex_unlock(&mu);
        respond(fd, 200, NULL, "text/plain", buf);
    } else if (strncmp(path, "/last?", 6) == 0) {
        json_t *body = e->last_body ? json_loads(e->last_body, 0, NULL) : NULL;
        json_t *j = json_pack("{s:o,s:s}", "body", body ? body : json_null(), "auth",
                              e->last_auth ? e->last_auth : "");
        pthread_mutex_unlock(&mu);
        respond_json(fd, 200, NULL, j);
        json_decref(j);
    } else {
        pthread_mutex_unlock(&mu);
        respond(fd, 404, NULL, "text/plain", "no such page\n");
    }
    free(model);
}

/* ---- connections ---------------------------------------------------------- */

/* The value of header `name` in head (malloc'd), or NULL. */
static char *header(const char *head, const char *name)
{
    size_t nl = strlen(name);
    const char *line = strstr(head, "\r\n");
    while (line && line[2] != '\r') {
        line += 2;
        if (strncasecmp(line, name, nl) == 0 && line[nl] == ':') {
            const char *v = line + nl + 1;
            while (*v == ' ' || *v == '\t') v++;
            return strndup(v, strcspn(v, "\r\n"));
        }
        line = strstr(line, "\r\n");
    }
    return NULL;
}

static void *serve(void *arg)
{
    int fd = (int)(intptr_t)arg;
    char *buf = malloc(HEAD_MAX + 1);
    size_t n = 0;
    char *end = NULL;
    while (buf && n < HEAD_MAX) {
        ssize_t r = recv(fd, buf + n, HEAD_MAX - n, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        n += (size_t)r;
        buf[n] = 0;
        if ((end = strstr(buf, "\r\n\r\n"))) break;
    }
    if (!end) goto out;
    end[2] = 0; /* the head, with its last CRLF */
    char method[16], path[2048];
    if (sscanf(buf, "%15s %2047s", method, path) != 2) goto out;
    char *cl = header(buf, "Content-Length");
    char *auth = header(buf, "Authorization");
    size_t len = cl ? strtoul(cl, NULL, 10) : 0;
    free(cl);
    if (len > BODY_MAX) {
        respond_error(fd, 413, NULL, "too large");
        free(auth);
        goto out;
    }
    char *body = malloc(len + 1);
    size_t have = n - (size_t)(end + 4 - buf);
    if (!body) {
        free(auth);
        goto out;
    }
    if (have > len) have = len;
    memcpy(body, end + 4, have);
    while (have < len) {
        ssize_t r = recv(fd, body + have, len - have, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        have += (size_t)r;
    }
    body[have] = 0;
    if (strcmp(method, "POST") == 0 && strcmp(path, "/v1/chat/completions") == 0)
        chat(fd, body, auth);
    else if (strcmp(method, "GET") == 0)
        get(fd, path);
    else
        respond(fd, 404, NULL, "text/plain", "no such page\n");
    free(body);
    free(auth);
out:
    free(buf);
    close(fd);
    return NULL;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    if (ls < 0) {
        perror("socket");
        return 1;
    }
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t al = sizeof a;
    if (bind(ls, (struct sockaddr *)&a, sizeof a) < 0 || listen(ls, 64) < 0 ||
        getsockname(ls, (struct sockaddr *)&a, &al) < 0) {
        perror("fake_openai");
        return 1;
    }
    printf("%d\n", (int)ntohs(a.sin_port));
    fflush(stdout);
    for (;;) {
        int fd = accept(ls, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            perror("accept");
            return 1;
        }
        pthread_t t;
        if (pthread_create(&t, NULL, serve, (void *)(intptr_t)fd) != 0) {
            close(fd);
            continue;
        }
        pthread_detach(t);
    }
}
