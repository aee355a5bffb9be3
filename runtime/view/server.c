/* server.c — the live view's HTTP server (view.h).
 *
 * One thread polls the listening socket, a wake pipe and every client.
 * The history is one growing buffer of SSE records ("id: N\ndata: LINE\n\n")
 * with the offset of each; pushes append under the mutex, and the thread
 * copies at most CHUNK bytes at a time of it into a client's own buffer
 * (under the mutex) and writes that without it, so a push waits at most
 * for one such copy.  Requests are read up to REQ_MAX bytes; only GET of
 * the two paths is served, everything else gets a short error and the
 * connection is closed.
 */
#define _GNU_SOURCE
#include "view.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* A client that accepts no byte for this long is dropped (a browser tab
 * that is alive takes an event stream as fast as the run makes it). */
#define ZRV_STALL_S 10.0
/* At most this much history is kept (a run's events as JSON: about 150
 * bytes each, so some 1.7 million events). */
#define ZRV_HISTORY_MAX ((size_t)256 << 20)
#define MAX_CLIENTS 32
#define REQ_MAX 8192
#define CHUNK 65536
#define POLL_MS 200

/* generated: build/runtime/view/page_data.c (cmake/EmbedPage.cmake) */
extern const unsigned char zrv_page_html[], zrv_page_css[], zrv_page_js[];
extern const unsigned long zrv_page_html_len, zrv_page_css_len, zrv_page_js_len;

enum { C_FREE, C_REQUEST, C_REPLY, C_EVENTS };

typedef struct client {
    int fd, state;
    char req[REQ_MAX + 1];
    size_t rlen;
    const char *out; /* C_REPLY: what to send (the page or a short reply) */
    size_t olen, opos;
    char *own;   /* a reply's header made for this client */
    size_t line; /* C_EVENTS: the next history line to copy */
    char *buf;   /* C_EVENTS: copied history not yet written */
    size_t blen, bpos;
    double since; /* when it last took a byte, or connected */
} client;

struct zrv_server {
    int lfd, wake[2];
    pthread_t th;
    char token[33];
    char *page; /* the whole page response: header and body */
    size_t page_len;
    pthread_mutex_t mu;
    /* under mu */
    char *hist;
    size_t hlen, hcap;
    size_t *loff; /* nlines + 1 offsets: line k is [loff[k], loff[k+1]) */
    size_t nlines, lcap;
    int overflow, closing;
    double deadline;
    int wake_pending;
    /* the thread's */
    client clients[MAX_CLIENTS];
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fprintf(stderr, "%s: error: out of memory\n", program_invocation_short_name);
        exit(1);
    }
    return q;
}

/* ---- the page ------------------------------------------------------------ */

typedef struct sbuf {
    char *d;
    size_t len, cap;
} sbuf;

static void put(sbuf *b, const void *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->d = xrealloc(b->d, b->cap);
    }
    memcpy(b->d + b->len, p, n);
    b->len += n;
    b->d[b->len] = '\0';
}
static void puts_(sbuf *b, const char *s) { put(b, s, strlen(s)); }

/* a JSON string safe inside <script>: `<`, `>`, `&` and controls escaped */
static void put_jstring(sbuf *b, const char *s)
{
    puts_(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char e[8];
        if (*p == '"' || *p == '\\') {
            e[0] = '\\', e[1] = (char)*p, e[2] = 0;
            puts_(b, e);
        } else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&') {
            snprintf(e, sizeof e, "\\u%04x", *p);
            puts_(b, e);
        } else {
            put(b, p, 1);
        }
    }
    puts_(b, "\"");
}

static char *make_page(const char *title, int n, const char *const *names, size_t *len)
{
    static const char *const marks[3] = {"/*@CSS@*/", "/*@DATA@*/", "/*@JS@*/"};
    sbuf body = {0};
    const char *html = (const char *)zrv_page_html;
    size_t at = 0;
    for (int k = 0; k < 3; k++) {
        const char *m = strstr(html + at, marks[k]);
        if (!m) return NULL;
        size_t pos = (size_t)(m - html);
        put(&body, html + at, pos - at);
        if (k == 0) put(&body, zrv_page_css, zrv_page_css_len);
        if (k == 2) put(&body, zrv_page_js, zrv_page_js_len);
        if (k == 1) {
            puts_(&body, "{\"mode\":\"live\",\"title\":");
            put_jstring(&body, title ? title : "");
            puts_(&body, ",\"lifelines\":[");
            for (int i = 0; i < n; i++) {
                if (i) puts_(&body, ",");
                put_jstring(&body, names[i]);
            }
            puts_(&body, "]}");
        }
        at = pos + strlen(marks[k]);
    }
    put(&body, html + at, zrv_page_html_len - at);
    sbuf r = {0};
    char head[256];
    snprintf(head, sizeof head,
             "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
             "Content-Length: %zu\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
             body.len);
    puts_(&r, head);
    put(&r, body.d, body.len);
    free(body.d);
    *len = r.len;
    return r.d;
}

/* ---- the address ------------------------------------------------------------ */

static int is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6)
        return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
    return 0;
}

static int listen_on(const char *addr, char *host_out, size_t hostlen, int *port_out, char *err,
                     size_t errlen)
{
    char host[256] = "127.0.0.1", port[16] = "0";
    if (addr && *addr) {
        const char *colon = strrchr(addr, ':');
        const char *h = addr, *p = colon ? colon + 1 : addr;
        size_t hl = colon ? (size_t)(colon - addr) : 0;
        if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') h++, hl -= 2;
        if (strlen(p) == 0 || strlen(p) >= sizeof port || strspn(p, "0123456789") != strlen(p) ||
            atol(p) > 65535 || hl >= sizeof host || (colon && hl == 0)) {
            snprintf(err, errlen,
                     "--view expects PORT or HOST:PORT on the loopback address, got '%s'", addr);
            return -1;
        }
        if (colon) memcpy(host, h, hl), host[hl] = '\0';
        memcpy(port, p, strlen(p) + 1);
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICSERV | AI_PASSIVE};
    struct addrinfo *res = NULL;
    int gai = getaddrinfo(host, port, &hints, &res);
    if (gai != 0) {
        snprintf(err, errlen, "--view: cannot resolve '%s': %s", host, gai_strerror(gai));
        return -1;
    }
    int fd = -1, saved = 0;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        if (!is_loopback(ai->ai_addr)) {
            snprintf(err, errlen,
                     "--view: %s is not a loopback address (the live view shows prompts and "
                     "answers: it serves 127.0.0.1 or [::1] only)",
                     host);
            freeaddrinfo(res);
            return -1;
        }
    }
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) {
            saved = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 16) != 0) {
            saved = errno;
            close(fd);
            fd = -1;
            continue;
        }
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        getsockname(fd, (struct sockaddr *)&ss, &sl);
        char num[INET6_ADDRSTRLEN];
        if (ss.ss_family == AF_INET6) {
            inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, num, sizeof num);
            snprintf(host_out, hostlen, "[%s]", num);
            *port_out = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
        } else {
            inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, num, sizeof num);
            snprintf(host_out, hostlen, "%s", num);
            *port_out = ntohs(((struct sockaddr_in *)&ss)->sin_port);
        }
    }
    freeaddrinfo(res);
    if (fd < 0)
        snprintf(err, errlen, "--view: cannot listen on %s:%s: %s", host, port, strerror(saved));
    return fd;
}

/* ---- clients ----------------------------------------------------------------- */

static void drop(client *c)
{
    if (c->fd >= 0) close(c->fd);
    free(c->own);
    free(c->buf);
    memset(c, 0, sizeof *c);
    c->fd = -1;
    c->state = C_FREE;
}

static void reply(client *c, const char *status, const char *text)
{
    char *r;
    if (asprintf(&r,
                 "HTTP/1.1 %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %zu\r\n"
                 "Cache-Control: no-store\r\nConnection: close\r\n\r\n%s",
                 status, strlen(text), text) < 0) {
        drop(c);
        return;
    }
    c->own = r;
    c->out = r;
    c->olen = strlen(r);
    c->opos = 0;
    c->state = C_REPLY;
}

/* constant time in the token's length, so the token does not leak by timing */
static int token_eq(const char *a, size_t alen, const char *token)
{
    size_t n = strlen(token);
    unsigned d = alen != n;
    for (size_t i = 0; i < n; i++) d |= (unsigned)(i < alen ? a[i] : 0) ^ (unsigned)token[i];
    return d == 0;
}

static void handle_request(zrv_server *s, client *c)
{
    char *end = strstr(c->req, "\r\n\r\n");
    if (!end) end = strstr(c->req, "\n\n");
    if (!end) {
        if (c->rlen >= REQ_MAX) reply(c, "431 Request Header Fields Too Large", "too large\n");
        return;
    }
    char method[8], target[512];
    if (sscanf(c->req, "%7s %511s", method, target) != 2 || strcmp(method, "GET") != 0) {
        reply(c, "405 Method Not Allowed", "only GET\n");
        return;
    }
    /* /TOKEN/, /TOKEN/events, /TOKEN (redirected) */
    const char *p = target[0] == '/' ? target + 1 : target;
    const char *slash = strchr(p, '/');
    size_t tl = slash ? (size_t)(slash - p) : strcspn(p, "?");
    if (!token_eq(p, tl, s->token)) {
        reply(c, "404 Not Found", "not found\n");
        return;
    }
    const char *rest = slash ? slash : "";
    if (!*rest || *rest == '?') {
        char *r;
        if (asprintf(&r,
                     "HTTP/1.1 301 Moved Permanently\r\nLocation: /%s/\r\nContent-Length: 0\r\n"
                     "Connection: close\r\n\r\n",
                     s->token) < 0) {
            drop(c);
            return;
        }
        c->own = r, c->out = r, c->olen = strlen(r), c->opos = 0, c->state = C_REPLY;
    } else if (!strcmp(rest, "/") || !strncmp(rest, "/?", 2)) {
        c->out = s->page, c->olen = s->page_len, c->opos = 0, c->state = C_REPLY;
    } else if (!strcmp(rest, "/events") || !strncmp(rest, "/events?", 8)) {
        /* Last-Event-ID: N resumes after line N (lines count from 1) */
        size_t from = 0;
        for (char *h = strchr(c->req, '\n'); h && h < end; h = strchr(h + 1, '\n')) {
            if (!strncasecmp(h + 1, "Last-Event-ID:", 14)) {
                unsigned long long id = strtoull(h + 15, NULL, 10);
                from = (size_t)id;
            }
        }
        static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                   "Cache-Control: no-store\r\nConnection: keep-alive\r\n\r\n"
                                   "retry: 1000\n\n";
        c->buf = xrealloc(NULL, CHUNK + sizeof head);
        memcpy(c->buf, head, sizeof head - 1);
        c->blen = sizeof head - 1, c->bpos = 0;
        pthread_mutex_lock(&s->mu);
        c->line = from < s->nlines ? from : s->nlines;
        pthread_mutex_unlock(&s->mu);
        c->state = C_EVENTS;
    } else {
        reply(c, "404 Not Found", "not found\n");
    }
}

/* Writes what it can; returns 1 when something was written, 0 when the
 * socket is full, -1 when the client is gone. */
static int write_some(client *c, const char *p, size_t n, size_t *pos)
{
    int wrote = 0;
    while (*pos < n) {
        ssize_t k = send(c->fd, p + *pos, n - *pos, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k > 0) {
            *pos += (size_t)k;
            wrote = 1;
            continue;
        }
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return wrote;
        return -1;
    }
    return 1;
}

/* An event client: refill its buffer from the history, write.  Returns 0
 * to keep it, -1 to drop it (gone, stalled, or done after the end). */
static int serve_events(zrv_server *s, client *c, double t, int closing)
{
    for (;;) {
        if (c->bpos == c->blen) {
            c->bpos = c->blen = 0;
            pthread_mutex_lock(&s->mu);
            if (c->line < s->nlines) {
                size_t a = s->loff[c->line], b = a;
                size_t k = c->line;
                /* whole records, at least one, up to CHUNK bytes */
                while (k < s->nlines && (b == a || s->loff[k + 1] - a <= CHUNK)) b = s->loff[++k];
                if (b - a > CHUNK) c->buf = xrealloc(c->buf, b - a);
                memcpy(c->buf, s->hist + a, b - a);
                c->blen = b - a;
                c->line = k;
            }
            pthread_mutex_unlock(&s->mu);
            if (c->blen == 0) return closing ? -1 : 0; /* all sent */
        }
        int r = write_some(c, c->buf, c->blen, &c->bpos);
        if (r < 0) return -1;
        if (r > 0) c->since = t;
        if (c->bpos < c->blen) return t - c->since > ZRV_STALL_S ? -1 : 0;
    }
}

static void *serve(void *arg)
{
    zrv_server *s = arg;
    struct pollfd pf[MAX_CLIENTS + 2];
    for (;;) {
        pthread_mutex_lock(&s->mu);
        int closing = s->closing;
        double deadline = s->deadline;
        s->wake_pending = 0;
        size_t nlines = s->nlines;
        pthread_mutex_unlock(&s->mu);
        double t = now();
        /* serve what can be served without waiting */
        int busy = 0;
        for (int i = 0; i < MAX_CLIENTS; i++) {
            client *c = &s->clients[i];
            if (c->state == C_REPLY) {
                int r = write_some(c, c->out, c->olen, &c->opos);
                if (r > 0) c->since = t;
                if (r < 0 || c->opos == c->olen || t - c->since > ZRV_STALL_S) drop(c);
            } else if (c->state == C_EVENTS) {
                if (serve_events(s, c, t, closing) < 0)
                    drop(c);
                else if (c->bpos < c->blen || c->line < nlines)
                    busy = 1;
            } else if (c->state == C_REQUEST && t - c->since > ZRV_STALL_S) {
                drop(c);
            }
            if (c->state == C_REPLY) busy = 1;
        }
        if (closing && (!busy || t >= deadline)) break;
        /* wait */
        int n = 0;
        pf[n++] = (struct pollfd){.fd = s->wake[0], .events = POLLIN};
        pf[n++] = (struct pollfd){.fd = s->lfd, .events = POLLIN};
        int idx[MAX_CLIENTS];
        for (int i = 0; i < MAX_CLIENTS; i++) {
            client *c = &s->clients[i];
            if (c->state == C_FREE) continue;
            short ev = c->state == C_REQUEST                      ? POLLIN
                       : c->state == C_REPLY || c->bpos < c->blen ? POLLOUT
                                                                  : POLLIN;
            idx[n - 2] = i;
            pf[n++] = (struct pollfd){.fd = c->fd, .events = ev};
        }
        if (poll(pf, (nfds_t)n, POLL_MS) < 0 && errno != EINTR) break;
        if (pf[0].revents & POLLIN) {
            char junk[256];
            while (read(s->wake[0], junk, sizeof junk) > 0) {}
        }
        t = now();
        if (pf[1].revents & POLLIN) {
            for (;;) {
                int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0) break;
                client *c = NULL;
                for (int i = 0; i < MAX_CLIENTS && !c; i++)
                    if (s->clients[i].state == C_FREE) c = &s->clients[i];
                if (!c) {
                    close(fd); /* too many: the browser retries */
                    continue;
                }
                memset(c, 0, sizeof *c);
                c->fd = fd, c->state = C_REQUEST, c->since = t;
            }
        }
        for (int k = 2; k < n; k++) {
            client *c = &s->clients[idx[k - 2]];
            if (!pf[k].revents) continue;
            if (c->state == C_REQUEST && (pf[k].revents & POLLIN)) {
                ssize_t r = recv(c->fd, c->req + c->rlen, REQ_MAX - c->rlen, 0);
                if (r <= 0) {
                    if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
                    drop(c);
                    continue;
                }
                c->rlen += (size_t)r;
                c->req[c->rlen] = '\0';
                handle_request(s, c);
            } else if (c->state == C_EVENTS && (pf[k].revents & (POLLIN | POLLHUP | POLLERR))) {
                /* a browser sends nothing more on an event stream: data or
                 * end of file means it is closing */
                char junk[512];
                ssize_t r = recv(c->fd, junk, sizeof junk, MSG_DONTWAIT);
                if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) drop(c);
            } else if (pf[k].revents & (POLLHUP | POLLERR)) {
                drop(c);
            }
        }
    }
    for (int i = 0; i < MAX_CLIENTS; i++)
        if (s->clients[i].state != C_FREE) drop(&s->clients[i]);
    return NULL;
}

/* ---- the interface ---------------------------------------------------------- */

zrv_server *zrv_open(const char *addr, const char *title, int nlifelines,
                     const char *const *lifelines, char *url, size_t urllen, char *err,
                     size_t errlen)
{
    char host[INET6_ADDRSTRLEN + 2];
    int port = 0;
    int fd = listen_on(addr, host, sizeof host, &port, err, errlen);
    if (fd < 0) return NULL;
    zrv_server *s = calloc(1, sizeof *s);
    if (!s) {
        fprintf(stderr, "%s: error: out of memory\n", program_invocation_short_name);
        exit(1);
    }
    s->lfd = fd;
    unsigned char rnd[16];
    size_t got = 0;
    while (got < sizeof rnd) {
        ssize_t k = getrandom(rnd + got, sizeof rnd - got, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            snprintf(err, errlen, "--view: no random token: %s", strerror(errno));
            close(fd);
            free(s);
            return NULL;
        }
        got += (size_t)k;
    }
    for (int i = 0; i < 16; i++) snprintf(s->token + 2 * i, 3, "%02x", rnd[i]);
    s->page = make_page(title, nlifelines, lifelines, &s->page_len);
    if (!s->page || pipe2(s->wake, O_NONBLOCK | O_CLOEXEC) != 0) {
        snprintf(err, errlen, "--view: %s", s->page ? strerror(errno) : "the page has no markers");
        close(fd);
        free(s->page);
        free(s);
        return NULL;
    }
    for (int i = 0; i < MAX_CLIENTS; i++) s->clients[i].fd = -1;
    s->loff = xrealloc(NULL, 64 * sizeof *s->loff);
    s->lcap = 64;
    s->loff[0] = 0;
    pthread_mutex_init(&s->mu, NULL);
    if (pthread_create(&s->th, NULL, serve, s) != 0) {
        snprintf(err, errlen, "--view: cannot start its thread");
        pthread_mutex_destroy(&s->mu);
        close(fd), close(s->wake[0]), close(s->wake[1]);
        free(s->page), free(s->loff), free(s);
        return NULL;
    }
    snprintf(url, urllen, "http://%s:%d/%s/", host, port, s->token);
    return s;
}

static void append(zrv_server *s, const char *line, size_t len)
{
    char head[48];
    int hn = snprintf(head, sizeof head, "id: %zu\ndata: ", s->nlines + 1);
    size_t need = (size_t)hn + len + 2;
    if (s->hlen + need > s->hcap) {
        s->hcap = (s->hlen + need) * 2;
        s->hist = xrealloc(s->hist, s->hcap);
    }
    memcpy(s->hist + s->hlen, head, (size_t)hn);
    memcpy(s->hist + s->hlen + hn, line, len);
    memcpy(s->hist + s->hlen + hn + len, "\n\n", 2);
    s->hlen += need;
    if (s->nlines + 2 > s->lcap) {
        s->lcap *= 2;
        s->loff = xrealloc(s->loff, s->lcap * sizeof *s->loff);
    }
    s->loff[++s->nlines] = s->hlen;
}

void zrv_push(zrv_server *s, const char *line, size_t len)
{
    /* a line break would end the SSE record early: the lines are JSON
     * text, where line breaks are escapes, so one only comes from a bug */
    if (memchr(line, '\n', len) || memchr(line, '\r', len)) return;
    pthread_mutex_lock(&s->mu);
    int wake = 0;
    if (!s->overflow && s->hlen + len + 64 > ZRV_HISTORY_MAX) {
        static const char note[] =
            "{\"kind\":\"note\",\"text\":\"the live view keeps 256 MiB of events and "
            "stopped here; the run goes on (its trace file has every event)\"}";
        append(s, note, sizeof note - 1);
        s->overflow = 1;
        wake = 1;
    } else if (!s->overflow) {
        append(s, line, len);
        wake = !s->wake_pending;
    }
    if (wake) s->wake_pending = 1;
    pthread_mutex_unlock(&s->mu);
    if (wake) {
        ssize_t w = write(s->wake[1], "", 1); /* a full pipe already wakes it */
        (void)w;
    }
}

void zrv_close(zrv_server *s, double linger)
{
    if (!s) return;
    pthread_mutex_lock(&s->mu);
    s->closing = 1;
    s->deadline = now() + (linger > 0 ? linger : 0);
    pthread_mutex_unlock(&s->mu);
    ssize_t w = write(s->wake[1], "", 1);
    (void)w;
    pthread_join(s->th, NULL);
    close(s->lfd), close(s->wake[0]), close(s->wake[1]);
    pthread_mutex_destroy(&s->mu);
    free(s->hist), free(s->loff), free(s->page), free(s);
}
