/* socket.c — the transport between per-lifeline processes: Unix-domain or TCP
 * stream sockets carrying frames (frame.c).
 *
 * Connections.  Every lifeline listens on its own address and opens one
 * connection to every other lifeline; it sends on the connections it
 * opened ("outgoing") and reads from the ones it accepted ("incoming").
 * So between two lifelines there are two connections, one per direction,
 * and the frames of one direction arrive in the order they were sent.
 *
 * Handshake.  The first frame on a connection, in both directions, is a
 * hello (frame kind 3):
 *
 *   magic version 3 id nlifelines from to status workflow lifeline reason
 *
 *   id         8 bytes big-endian: a hash of everything that shapes frames
 *              (workflow, lifelines, variables and their types, enums,
 *              channels, tags, monitor size and view slots), so that two different
 *              programs, or two builds of one, never talk
 *   nlifelines, from, to   varints: the sender's lifeline count and index,
 *              and the index of the lifeline it believes it talks to
 *   status     u8: 0 ok, 1 refused (the reason says why)
 *   workflow, lifeline, reason   varint length + bytes (at most 1024 each):
 *              the sender's workflow and lifeline names, for messages
 *
 * The connecting side sends its hello; the accepting side checks it,
 * answers with its own hello (refused, with the reason, when the check
 * failed) and the connecting side checks that answer.  Either side that
 * finds a mismatch makes zri_net_open fail with a message naming the
 * address or lifeline.  zri_net_open returns once every outgoing and every
 * incoming connection has been checked.
 *
 * Threads.  One thread per zri_net polls the listening socket and the
 * connections: during zri_net_open it accepts connections and answers
 * hellos; after it returns it reads frames from the incoming connections
 * (non-blocking, partial reads buffered), decodes them (it is the only
 * thread of this module using the heap) and calls cb->deliver; a
 * malformed or unexpected frame, or a connection that ends without BYE,
 * calls cb->fail once for that peer, and that peer is not read any more.
 * No callback runs before zri_net_open returns or after zri_net_close
 * starts.
 *
 * Sending.  zri_net_send encodes the frame on the caller's thread into the
 * peer's output buffer (one lock per peer); zri_net_flush writes the
 * buffers out, one system call per peer for everything sent since the last
 * flush.  The runtime flushes before a lifeline can wait (a receive that
 * finds nothing, an action, a parallel region) and zri_net_close before its
 * BYE, so frames never sit in a buffer while their sender is blocked; a
 * buffer that grows past OUT_FLUSH bytes is written at once.  Consecutive
 * messages to one peer (a decision and the message after it) thus leave in
 * one write and wake the peer once.
 *
 * BYE.  zri_net_close sends a BYE frame to every peer before closing: the
 * peer then knows the lifeline ended normally, reads every frame sent
 * before (stream sockets keep written data readable after the writer
 * closes) and ignores the end of the connection.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "net.h"

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0 /* SO_NOSIGPIPE is set instead */
#endif

#define HELLO_MAGIC 0x5Au
#define HELLO_VERSION 1u
#define HELLO_KIND 3u
#define HELLO_MAX 4096      /* largest hello payload */
#define HELLO_NAME_MAX 1024 /* longest name or reason in a hello */
#define PENDING_MAX 64      /* accepted connections still owing their hello */
#define DEFAULT_TIMEOUT 60.0
#define OUT_FLUSH (64u << 10) /* output buffer size that is written at once */
#define BYE_TIMEOUT 5.0       /* zri_net_close gives up on peers that do not read */
#define READ_CHUNK 65536

/* ===================================================================== */
/* small helpers                                                          */
/* ===================================================================== */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
    if (s <= 0) return;
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {}
}

/* Milliseconds until deadline for poll(); deadline 0: forever (-1). */
static int ms_left(double deadline)
{
    if (deadline <= 0) return -1;
    double left = deadline - now_s();
    if (left <= 0) return 0;
    return left > 1e6 ? 1000000000 : (int)(left * 1000) + 1;
}

static int set_nonblock(int fd, int on)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0) return -1;
    fl = on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK;
    return fcntl(fd, F_SETFL, fl);
}

static void set_cloexec(int fd)
{
    int fl = fcntl(fd, F_GETFD);
    if (fl >= 0) fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
}

static void sock_opts(int fd, int tcp)
{
    int one = 1;
    set_cloexec(fd);
#ifdef SO_NOSIGPIPE
    setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
#endif
    if (tcp) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* Writes all of b; deadline 0: no limit.  -1 with errno on failure. */
static int write_all(int fd, const uint8_t *b, size_t n, double deadline)
{
    while (n) {
        ssize_t k = send(fd, b, n, MSG_NOSIGNAL | (deadline > 0 ? MSG_DONTWAIT : 0));
        if (k > 0) {
            b += k;
            n -= (size_t)k;
            continue;
        }
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd pf = {fd, POLLOUT, 0};
            int ms = ms_left(deadline);
            if (ms == 0) {
                errno = ETIMEDOUT;
                return -1;
            }
            if (poll(&pf, 1, ms) < 0 && errno != EINTR) return -1;
            continue;
        }
        if (k == 0) errno = EPIPE;
        return -1;
    }
    return 0;
}

/* A name received from a peer, made printable for messages. */
static void printable(char *dst, size_t dstlen, const uint8_t *s, size_t n)
{
    size_t j = 0;
    for (size_t i = 0; i < n && j + 1 < dstlen; i++)
        dst[j++] = (s[i] < 0x20 || s[i] == 0x7F) ? '?' : (char)s[i];
    if (dstlen) dst[j] = 0;
}

/* ===================================================================== */
/* addresses                                                              */
/* ===================================================================== */

typedef struct zaddr {
    int is_unix;
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    char host[256];
    char port[8];
} zaddr;

static int parse_addr(const char *s, zaddr *a, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    if (!s) {
        zri_err(err, errlen, "missing address");
        return -1;
    }
    if (!strncmp(s, "unix:", 5)) {
        const char *path = s + 5;
        size_t n = strlen(path);
        if (!n) {
            zri_err(err, errlen, "bad address '%s': empty socket path", s);
            return -1;
        }
        if (n >= sizeof a->path) {
            zri_err(err, errlen, "bad address '%s': socket path longer than %zu bytes", s,
                    sizeof a->path - 1);
            return -1;
        }
        a->is_unix = 1;
        memcpy(a->path, path, n + 1);
        return 0;
    }
    if (!strncmp(s, "tcp:", 4)) {
        const char *hp = s + 4, *colon = strrchr(hp, ':');
        if (!colon) {
            zri_err(err, errlen, "bad address '%s': expected tcp:HOST:PORT", s);
            return -1;
        }
        const char *h = hp;
        size_t hn = (size_t)(colon - hp);
        if (hn >= 2 && h[0] == '[' && h[hn - 1] == ']')
            h++, hn -= 2; /* [IPv6] */
        else if (memchr(h, ':', hn)) {
            zri_err(err, errlen, "bad address '%s': write an IPv6 host in brackets, tcp:[::1]:PORT",
                    s);
            return -1;
        }
        if (!hn || hn >= sizeof a->host) {
            zri_err(err, errlen, "bad address '%s': %s host", s, hn ? "too long a" : "empty");
            return -1;
        }
        const char *port = colon + 1;
        size_t pn = strlen(port);
        long pv = 0;
        for (size_t i = 0; i < pn; i++) {
            if (port[i] < '0' || port[i] > '9' || pv > 65535) {
                pv = -1;
                break;
            }
            pv = pv * 10 + (port[i] - '0');
        }
        if (!pn || pv < 1 || pv > 65535) {
            zri_err(err, errlen, "bad address '%s': the port must be a number from 1 to 65535", s);
            return -1;
        }
        memcpy(a->host, h, hn);
        a->host[hn] = 0;
        snprintf(a->port, sizeof a->port, "%ld", pv);
        return 0;
    }
    zri_err(err, errlen, "bad address '%s': expected unix:PATH or tcp:HOST:PORT", s);
    return -1;
}

static int resolve(const zaddr *a, int passive, struct addrinfo **res, const char *text, char *err,
                   size_t errlen)
{
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
    int rc = getaddrinfo(a->host, a->port, &hints, res);
    if (rc) {
        zri_err(err, errlen, "cannot resolve the host of %s: %s", text, gai_strerror(rc));
        return -1;
    }
    return 0;
}

/* ===================================================================== */
/* program identity and hello frames                                      */
/* ===================================================================== */

static void fnv(uint64_t *h, const void *d, size_t n)
{
    const uint8_t *b = d;
    for (size_t i = 0; i < n; i++) {
        *h ^= b[i];
        *h *= 0x100000001b3ULL;
    }
}

static void fnv_str(uint64_t *h, const char *s)
{
    s = s ? s : "";
    fnv(h, s, strlen(s) + 1);
}

static void fnv_i32(uint64_t *h, int32_t v) { fnv(h, &v, sizeof v); }

static uint64_t program_id(const zgrt_program *p)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    fnv_i32(&h, p->abi_version);
    fnv_str(&h, p->workflow);
    fnv_i32(&h, p->nlifelines);
    for (int32_t i = 0; i < p->nlifelines; i++) fnv_str(&h, p->lifelines[i]);
    fnv_i32(&h, p->nvars);
    for (int32_t i = 0; i < p->nvars; i++) {
        fnv_str(&h, p->vars[i].name);
        fnv_i32(&h, p->vars[i].type.tag);
        fnv_i32(&h, p->vars[i].type.enum_id);
    }
    fnv_i32(&h, p->nenums);
    for (int32_t i = 0; i < p->nenums; i++) {
        fnv_str(&h, p->enums[i].name);
        fnv_i32(&h, p->enums[i].nmembers);
        for (int32_t k = 0; k < p->enums[i].nmembers; k++) fnv_str(&h, p->enums[i].members[k]);
    }
    fnv_i32(&h, p->nchans);
    for (int32_t i = 0; i < p->nchans; i++) fnv_str(&h, p->chans[i]);
    fnv_i32(&h, p->ntags);
    for (int32_t i = 0; i < p->ntags; i++) fnv_str(&h, p->tags[i]);
    fnv_i32(&h, p->monitor);
    fnv_i32(&h, p->nsubs);
    /* the monitor plan shapes the metadata of every frame */
    for (int32_t l = 0; l < p->nlifelines && p->keeps; l++) {
        const zgrt_keep *k = &p->keeps[l];
        fnv_i32(&h, k->nevals);
        fnv_i32(&h, k->nvc);
        for (int32_t i = 0; i < k->nvc; i++) fnv_i32(&h, k->vc[i]);
        fnv_i32(&h, k->nviews);
        for (int32_t i = 0; i < k->nviews; i++) {
            fnv_i32(&h, k->views[i].lifeline);
            fnv_i32(&h, k->views[i].index);
        }
        fnv_i32(&h, k->nvarviews);
        for (int32_t i = 0; i < k->nvarviews; i++) {
            fnv_i32(&h, k->varviews[i].lifeline);
            fnv_i32(&h, k->varviews[i].index);
        }
    }
    fnv_i32(&h, p->nedges);
    for (int32_t i = 0; i < p->nedges && p->edges; i++) {
        const zgrt_edge *e = &p->edges[i];
        fnv_i32(&h, e->from);
        fnv_i32(&h, e->to);
        fnv_i32(&h, e->ngroups);
        for (int32_t k = 0; k < e->ngroups; k++) fnv(&h, &e->groups[k], sizeof e->groups[k]);
        fnv_i32(&h, e->nviews);
        for (int32_t k = 0; k < e->nviews; k++) fnv(&h, &e->views[k], sizeof e->views[k]);
        fnv_i32(&h, e->nvarviews);
        for (int32_t k = 0; k < e->nvarviews; k++) fnv(&h, &e->varviews[k], sizeof e->varviews[k]);
    }
    return h;
}

typedef struct hello {
    uint64_t id;
    uint64_t nlifelines, from, to;
    int status;
    char workflow[HELLO_NAME_MAX + 1], lifeline[HELLO_NAME_MAX + 1], reason[HELLO_NAME_MAX + 1];
} hello;

static size_t put_varint(uint8_t *d, uint64_t v)
{
    size_t n = 0;
    do {
        uint8_t b = v & 0x7F;
        v >>= 7;
        d[n++] = b | (v ? 0x80 : 0);
    } while (v);
    return n;
}

static size_t put_name(uint8_t *d, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n > HELLO_NAME_MAX) n = HELLO_NAME_MAX;
    size_t k = put_varint(d, n);
    if (n) memcpy(d + k, s, n);
    return k + n;
}

/* A whole hello frame (length included) in buf (HELLO_MAX + 4 bytes). */
static size_t hello_encode(const zgrt_program *p, int self, int to, int status, const char *reason,
                           uint8_t *buf)
{
    uint8_t *d = buf + 4;
    size_t n = 0;
    d[n++] = HELLO_MAGIC;
    d[n++] = HELLO_VERSION;
    d[n++] = HELLO_KIND;
    uint64_t id = program_id(p);
    for (int i = 0; i < 8; i++) d[n++] = (uint8_t)(id >> (56 - 8 * i));
    n += put_varint(d + n, (uint64_t)p->nlifelines);
    n += put_varint(d + n, (uint64_t)self);
    n += put_varint(d + n, (uint64_t)to);
    d[n++] = (uint8_t)status;
    n += put_name(d + n, p->workflow);
    n += put_name(d + n, p->lifelines[self]);
    n += put_name(d + n, reason);
    buf[0] = (uint8_t)(n >> 24);
    buf[1] = (uint8_t)(n >> 16);
    buf[2] = (uint8_t)(n >> 8);
    buf[3] = (uint8_t)n;
    return n + 4;
}

static int get_varint(const uint8_t *d, size_t n, size_t *pos, uint64_t *out)
{
    uint64_t v = 0;
    for (int i = 0; i < 10; i++) {
        if (*pos >= n) return -1;
        uint8_t b = d[(*pos)++];
        if (i == 9 && b > 1) return -1;
        v |= (uint64_t)(b & 0x7F) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

static int get_name(const uint8_t *d, size_t n, size_t *pos, char *out)
{
    uint64_t len;
    if (get_varint(d, n, pos, &len) < 0 || len > HELLO_NAME_MAX || len > n - *pos) return -1;
    printable(out, HELLO_NAME_MAX + 1, d + *pos, (size_t)len);
    *pos += (size_t)len;
    return 0;
}

/* Decodes a hello payload; -1 with the reason in err. */
static int hello_decode(const uint8_t *d, size_t n, hello *hl, char *err, size_t errlen)
{
    size_t pos = 3;
    memset(hl, 0, sizeof *hl);
    if (n < 3 || d[0] != HELLO_MAGIC) {
        zri_err(err, errlen, "bad magic");
        return -1;
    }
    if (d[1] != HELLO_VERSION) {
        zri_err(err, errlen, "frame version %u, expected %u", (unsigned)d[1], HELLO_VERSION);
        return -1;
    }
    if (d[2] != HELLO_KIND) {
        zri_err(err, errlen, "first frame is not a hello (kind %u)", (unsigned)d[2]);
        return -1;
    }
    if (n - pos < 8) goto bad;
    for (int i = 0; i < 8; i++) hl->id = (hl->id << 8) | d[pos++];
    if (get_varint(d, n, &pos, &hl->nlifelines) < 0 || get_varint(d, n, &pos, &hl->from) < 0 ||
        get_varint(d, n, &pos, &hl->to) < 0 || pos >= n)
        goto bad;
    hl->status = d[pos++];
    if (hl->status > 1 || get_name(d, n, &pos, hl->workflow) < 0 ||
        get_name(d, n, &pos, hl->lifeline) < 0 || get_name(d, n, &pos, hl->reason) < 0 || pos != n)
        goto bad;
    return 0;
bad:
    zri_err(err, errlen, "malformed hello");
    return -1;
}

/* ===================================================================== */
/* reading frames from a stream                                           */
/* ===================================================================== */

typedef struct rx {
    uint8_t hdr[4];
    size_t hdr_got;
    uint8_t *buf;
    size_t cap, need, got;
} rx;

static void rx_free(rx *r)
{
    free(r->buf);
    memset(r, 0, sizeof *r);
}

typedef int (*frame_fn)(void *user, const uint8_t *payload, size_t len);

/* Feeds n received bytes; calls fn for every complete payload (stops when
 * fn returns non-zero and returns that).  max: the largest payload
 * accepted; a larger or empty length returns -2 with *badlen set. */
static int rx_feed(rx *r, const uint8_t *d, size_t n, size_t max, frame_fn fn, void *user,
                   uint32_t *badlen)
{
    while (n) {
        if (r->hdr_got < 4) {
            size_t k = 4 - r->hdr_got < n ? 4 - r->hdr_got : n;
            memcpy(r->hdr + r->hdr_got, d, k);
            r->hdr_got += k, d += k, n -= k;
            if (r->hdr_got < 4) break;
            uint32_t len = (uint32_t)r->hdr[0] << 24 | (uint32_t)r->hdr[1] << 16 |
                           (uint32_t)r->hdr[2] << 8 | r->hdr[3];
            if (len == 0 || len > max) {
                *badlen = len;
                return -2;
            }
            r->need = len, r->got = 0;
            continue;
        }
        int rc;
        if (r->got == 0 && n >= r->need) { /* whole payload in this chunk */
            rc = fn(user, d, r->need);
            d += r->need, n -= r->need;
        } else {
            size_t k = r->need - r->got < n ? r->need - r->got : n;
            if (r->got + k > r->cap) { /* grows with the bytes that arrived */
                size_t cap = r->cap ? r->cap : 4096;
                while (cap < r->got + k) cap *= 2;
                if (cap > r->need) cap = r->need;
                r->buf = zri_xrealloc(r->buf, cap);
                r->cap = cap;
            }
            memcpy(r->buf + r->got, d, k);
            r->got += k, d += k, n -= k;
            if (r->got < r->need) break;
            rc = fn(user, r->buf, r->need);
            if (r->cap > (1u << 20)) { /* do not keep a large buffer around */
                free(r->buf);
                r->buf = NULL, r->cap = 0;
            }
        }
        r->hdr_got = 0, r->need = 0, r->got = 0;
        if (rc) return rc;
    }
    return 0;
}

/* ===================================================================== */
/* the transport                                                          */
/* ===================================================================== */

enum { PHASE_SETUP, PHASE_RUNNING, PHASE_CLOSING };

typedef struct peer {
    const char *addr; /* as given */
    int out_fd;       /* we send here */
    int out_broken;   /* a send failed: later sends fail at once */
    char out_err[256];
    pthread_mutex_t send_mu;
    uint8_t *obuf; /* frames not yet written (under send_mu) */
    size_t olen, ocap;
    int in_fd; /* we read here (reader thread) */
    rx in;
    int done; /* BYE seen or failed: not read any more */
} peer;

typedef struct pending {
    int fd;
    rx in;
} pending;

struct zri_net {
    const zgrt_program *p;
    int self;
    zri_heap *h;
    zri_net_callbacks cb;
    char *listen_text;
    zaddr listen;
    int listen_fd;
    int unlink_path; /* the unix socket file is ours */
    dev_t path_dev;
    ino_t path_ino;
    int wake[2];
    pthread_t thread;
    int thread_started;
    peer *peers;
    pending pend[PENDING_MAX];
    int npend;
    uint8_t *chunk; /* reader thread's read buffer */
    int dirty;      /* atomic: some output buffer may hold frames */

    pthread_mutex_t mu; /* phase, nin, setup_err; signals cv */
    pthread_cond_t cv;
    int phase;
    int nin;             /* incoming connections checked */
    char setup_err[512]; /* first error found by the reader thread during setup */
};

static void wake_thread(zri_net *n)
{
    uint8_t b = 1;
    while (write(n->wake[1], &b, 1) < 0 && errno == EINTR) {}
}

static void setup_error(zri_net *n, const char *msg)
{
    pthread_mutex_lock(&n->mu);
    if (!n->setup_err[0]) snprintf(n->setup_err, sizeof n->setup_err, "%s", msg);
    pthread_cond_broadcast(&n->cv);
    pthread_mutex_unlock(&n->mu);
}

static void unlink_ours(zri_net *n)
{
    struct stat st;
    if (!n->unlink_path) return;
    n->unlink_path = 0;
    if (lstat(n->listen.path, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_dev == n->path_dev &&
        st.st_ino == n->path_ino)
        unlink(n->listen.path);
}

/* ---- listening ---------------------------------------------------------- */

static int listen_unix(zri_net *n, char *err, size_t errlen)
{
    const char *path = n->listen.path;
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, path, strlen(path) + 1);

    struct stat st;
    if (lstat(path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            zri_err(err, errlen, "cannot listen on %s: the path exists and is not a socket",
                    n->listen_text);
            return -1;
        }
        /* a socket file: in use if something accepts on it, else stale */
        int probe = socket(AF_UNIX, SOCK_STREAM, 0);
        if (probe >= 0) {
            int rc = connect(probe, (struct sockaddr *)&sa, sizeof sa);
            close(probe);
            if (rc == 0) {
                zri_err(err, errlen, "cannot listen on %s: another process is listening there",
                        n->listen_text);
                return -1;
            }
        }
        unlink(path);
    }
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) {
        zri_err(err, errlen, "cannot listen on %s: socket: %s", n->listen_text, strerror(errno));
        return -1;
    }
    set_cloexec(fd);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 64) < 0) {
        zri_err(err, errlen, "cannot listen on %s: %s", n->listen_text, strerror(errno));
        close(fd);
        return -1;
    }
    if (lstat(path, &st) == 0) {
        n->unlink_path = 1;
        n->path_dev = st.st_dev;
        n->path_ino = st.st_ino;
    }
    n->listen_fd = fd;
    return 0;
}

static int listen_tcp(zri_net *n, char *err, size_t errlen)
{
    struct addrinfo *res, *ai;
    if (resolve(&n->listen, 1, &res, n->listen_text, err, errlen) < 0) return -1;
    int fd = -1, e = 0;
    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
        if (fd < 0) {
            e = errno;
            continue;
        }
        int one = 1;
        set_cloexec(fd);
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 64) == 0) break;
        e = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        zri_err(err, errlen, "cannot listen on %s: %s", n->listen_text, strerror(e));
        return -1;
    }
    n->listen_fd = fd;
    return 0;
}

/* ---- the reader thread ---------------------------------------------------- */

typedef struct in_ctx {
    zri_net *n;
    int l;    /* peer lifeline */
    int stop; /* 1: BYE seen; 2: failed, msg says why */
    char msg[600];
} in_ctx;

/* One frame from established peer l. */
static int on_frame(void *user, const uint8_t *d, size_t len)
{
    in_ctx *c = user;
    zri_net *n = c->n;
    const zgrt_program *p = n->p;
    const char *who = p->lifelines[c->l];
    char err[400];
    zri_msg *m;
    if (zri_frame_decode(p, n->h, d, len, &m, err, sizeof err) < 0) {
        snprintf(c->msg, sizeof c->msg, "malformed frame from %s: %s", who, err);
        return c->stop = 2;
    }
    if (m->from != c->l) {
        snprintf(c->msg, sizeof c->msg,
                 "unexpected frame from %s: it claims to come from lifeline %s", who,
                 p->lifelines[m->from]);
        c->stop = 2;
    } else if (m->to != n->self) {
        snprintf(c->msg, sizeof c->msg,
                 "unexpected frame from %s: addressed to lifeline %s, this is lifeline %s", who,
                 p->lifelines[m->to], p->lifelines[n->self]);
        c->stop = 2;
    } else if (m->kind == ZRI_MSG_BYE) {
        c->stop = 1;
    } else {
        if (n->cb.deliver)
            n->cb.deliver(n->cb.user, m);
        else
            free(m);
        return 0;
    }
    free(m);
    return c->stop;
}

/* Stops reading peer l; with a message, reports the failure. */
static void peer_done(zri_net *n, int l, const char *failure)
{
    peer *pe = &n->peers[l];
    close(pe->in_fd);
    pe->in_fd = -1;
    pe->done = 1;
    rx_free(&pe->in);
    if (failure && n->cb.fail) n->cb.fail(n->cb.user, failure);
}

static void read_peer(zri_net *n, int l)
{
    peer *pe = &n->peers[l];
    in_ctx c = {n, l, 0, ""};
    const char *who = n->p->lifelines[l];
    for (int rounds = 0; rounds < 16; rounds++) { /* then let the others in */
        ssize_t k = recv(pe->in_fd, n->chunk, READ_CHUNK, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (k == 0) {
            snprintf(c.msg, sizeof c.msg,
                     "lifeline %s (%s) closed its connection without BYE: its process ended "
                     "abnormally or was killed",
                     who, pe->addr);
            break;
        }
        if (k < 0) {
            snprintf(c.msg, sizeof c.msg, "lost the connection from lifeline %s (%s): %s", who,
                     pe->addr, strerror(errno));
            break;
        }
        uint32_t badlen = 0;
        int rc = rx_feed(&pe->in, n->chunk, (size_t)k, ZRI_FRAME_MAX, on_frame, &c, &badlen);
        if (rc == -2) {
            if (badlen)
                snprintf(c.msg, sizeof c.msg,
                         "malformed frame from %s: frame length %u exceeds the limit of %u bytes",
                         who, (unsigned)badlen, (unsigned)ZRI_FRAME_MAX);
            else
                snprintf(c.msg, sizeof c.msg, "malformed frame from %s: frame length 0", who);
            break;
        }
        if (c.stop == 1) { /* BYE: whatever follows is not read */
            peer_done(n, l, NULL);
            return;
        }
        if (c.stop) break;
    }
    if (c.msg[0]) peer_done(n, l, c.msg);
}

static void drop_pending(zri_net *n, int i)
{
    close(n->pend[i].fd);
    rx_free(&n->pend[i].in);
    n->pend[i] = n->pend[--n->npend];
}

typedef struct hello_ctx {
    zri_net *n;
    int fd;
    int result; /* 0 waiting, 1 accepted, -1 refused */
} hello_ctx;

/* A connecting peer's hello: check it, answer, record the outcome. */
static int on_hello(void *user, const uint8_t *d, size_t len)
{
    hello_ctx *c = user;
    zri_net *n = c->n;
    const zgrt_program *p = n->p;
    const char *me = p->lifelines[n->self];
    hello hl;
    char why[300], reason[1024];
    reason[0] = 0;
    if (hello_decode(d, len, &hl, why, sizeof why) < 0) {
        snprintf(reason, sizeof reason,
                 "an incoming connection on %s is not from a zgc lifeline (%s)", n->listen_text,
                 why);
    } else if (strcmp(hl.workflow, p->workflow ? p->workflow : "")) {
        snprintf(reason, sizeof reason,
                 "lifeline %.200s of workflow %.200s connected to %s, which is lifeline %s of "
                 "workflow %s",
                 hl.lifeline, hl.workflow, n->listen_text, me, p->workflow);
    } else if (hl.id != program_id(p) || hl.nlifelines != (uint64_t)p->nlifelines ||
               hl.from >= (uint64_t)p->nlifelines || strcmp(hl.lifeline, p->lifelines[hl.from])) {
        snprintf(reason, sizeof reason,
                 "lifeline %.200s connected to %s with a different build of workflow %s "
                 "(program identity mismatch)",
                 hl.lifeline, n->listen_text, p->workflow);
    } else if (hl.from == (uint64_t)n->self) {
        snprintf(reason, sizeof reason, "a connection to %s claims to come from lifeline %s itself",
                 n->listen_text, me);
    } else if (hl.to != (uint64_t)n->self) {
        snprintf(reason, sizeof reason,
                 "lifeline %.200s connected to %s expecting lifeline %s, but this is lifeline %s",
                 hl.lifeline, n->listen_text,
                 hl.to < (uint64_t)p->nlifelines ? p->lifelines[hl.to] : "?", me);
    } else if (hl.status != 0) {
        snprintf(reason, sizeof reason, "lifeline %.200s sent a refusal as its hello", hl.lifeline);
    } else if (n->peers[hl.from].in_fd >= 0) {
        snprintf(reason, sizeof reason, "two connections to %s claim to be lifeline %.200s",
                 n->listen_text, hl.lifeline);
    }
    uint8_t out[HELLO_MAX + 4];
    int to = hl.from < (uint64_t)p->nlifelines ? (int)hl.from : 0;
    size_t k = hello_encode(p, n->self, to, reason[0] ? 1 : 0, reason, out);
    /* record a mismatch before answering: once answered, the other side
     * may close and make this side's own connect fail first */
    if (reason[0]) setup_error(n, reason);
    int wrote = write_all(c->fd, out, k, now_s() + 2.0);
    if (reason[0]) {
        c->result = -1;
    } else if (wrote < 0) {
        c->result = -1; /* the peer went away; it will report it */
    } else {
        c->result = 1;
        pthread_mutex_lock(&n->mu);
        n->peers[hl.from].in_fd = c->fd;
        n->nin++;
        pthread_cond_broadcast(&n->cv);
        pthread_mutex_unlock(&n->mu);
    }
    return 1;
}

static void read_pending(zri_net *n, int i)
{
    pending *pd = &n->pend[i];
    for (;;) {
        ssize_t k = recv(pd->fd, n->chunk, READ_CHUNK, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (k <= 0) { /* gone before its hello: nothing to check */
            drop_pending(n, i);
            return;
        }
        hello_ctx c = {n, pd->fd, 0};
        uint32_t badlen = 0;
        int rc = rx_feed(&pd->in, n->chunk, (size_t)k, HELLO_MAX, on_hello, &c, &badlen);
        if (rc == -2) {
            char msg[300];
            snprintf(msg, sizeof msg,
                     "an incoming connection on %s is not from a zgc lifeline (bad hello)",
                     n->listen_text);
            setup_error(n, msg);
            drop_pending(n, i);
            return;
        }
        if (c.result == 1) { /* the connection now belongs to its peer */
            rx_free(&pd->in);
            n->pend[i] = n->pend[--n->npend];
            return;
        }
        if (c.result < 0) {
            drop_pending(n, i);
            return;
        }
        /* bytes after the hello are ignored until the run starts: the
         * connecting side sends nothing before it gets our answer */
    }
}

static void accept_all(zri_net *n)
{
    for (;;) {
        int fd = accept(n->listen_fd, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR) continue;
            return; /* EAGAIN, or a transient error */
        }
        sock_opts(fd, !n->listen.is_unix);
        set_nonblock(fd, 1);
        if (n->npend == PENDING_MAX) {
            close(fd);
            continue;
        }
        pending *pd = &n->pend[n->npend++];
        memset(pd, 0, sizeof *pd);
        pd->fd = fd;
    }
}

static void *reader_main(void *arg)
{
    zri_net *n = arg;
    int nl = n->p->nlifelines;
    struct pollfd *pf = zri_xcalloc((size_t)nl + PENDING_MAX + 2, sizeof *pf);
    int *who = zri_xcalloc((size_t)nl + PENDING_MAX + 2, sizeof *who); /* peer, or -1-pending */
    for (;;) {
        pthread_mutex_lock(&n->mu);
        int phase = n->phase;
        pthread_mutex_unlock(&n->mu);
        if (phase == PHASE_CLOSING) break;
        if (phase == PHASE_RUNNING && n->listen_fd >= 0) { /* no more connections */
            close(n->listen_fd);
            n->listen_fd = -1;
            while (n->npend) drop_pending(n, n->npend - 1);
            unlink_ours(n);
        }

        int k = 0;
        pf[k] = (struct pollfd){n->wake[0], POLLIN, 0};
        who[k++] = INT32_MIN;
        if (phase == PHASE_SETUP) {
            pf[k] = (struct pollfd){n->listen_fd, POLLIN, 0};
            who[k++] = INT32_MAX;
            for (int i = 0; i < n->npend; i++) {
                pf[k] = (struct pollfd){n->pend[i].fd, POLLIN, 0};
                who[k++] = -1 - i;
            }
        } else {
            for (int l = 0; l < nl; l++) {
                if (n->peers[l].in_fd < 0 || n->peers[l].done) continue;
                pf[k] = (struct pollfd){n->peers[l].in_fd, POLLIN, 0};
                who[k++] = l;
            }
        }
        if (poll(pf, (nfds_t)k, -1) < 0) {
            if (errno == EINTR) continue;
            sleep_s(0.01);
            continue;
        }
        if (pf[0].revents) {
            uint8_t buf[64];
            while (read(n->wake[0], buf, sizeof buf) > 0) {}
            continue; /* look at the phase again */
        }
        /* pending connections from the end, so that removals do not shift
         * the ones still to visit */
        for (int i = k - 1; i >= 1; i--) {
            if (!pf[i].revents) continue;
            if (who[i] == INT32_MAX)
                accept_all(n);
            else if (who[i] < 0)
                read_pending(n, -1 - who[i]);
            else
                read_peer(n, who[i]);
        }
    }
    free(pf);
    free(who);
    return NULL;
}

/* ---- connecting ------------------------------------------------------------ */

/* One non-blocking connect attempt to a resolved address; 0 with *fd, or
 * -1 with errno. */
static int try_connect(const struct sockaddr *sa, socklen_t salen, int family, double deadline,
                       int *fdp)
{
    int fd = socket(family, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    sock_opts(fd, family != AF_UNIX);
    set_nonblock(fd, 1);
    if (connect(fd, sa, salen) < 0) {
        if (errno != EINPROGRESS) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        struct pollfd pf = {fd, POLLOUT, 0};
        int rc;
        do rc = poll(&pf, 1, ms_left(deadline));
        while (rc < 0 && errno == EINTR);
        int e = 0;
        socklen_t el = sizeof e;
        if (rc == 0)
            e = ETIMEDOUT;
        else if (rc < 0)
            e = errno;
        else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0)
            e = errno;
        if (e) {
            close(fd);
            errno = e;
            return -1;
        }
    }
    *fdp = fd;
    return 0;
}

static int setup_failed(zri_net *n, char *err, size_t errlen)
{
    pthread_mutex_lock(&n->mu);
    int bad = n->setup_err[0] != 0;
    if (bad) zri_err(err, errlen, "%s", n->setup_err);
    pthread_mutex_unlock(&n->mu);
    return bad;
}

/* Reads exactly n bytes from fd (non-blocking) before deadline; gives up
 * early when the reader thread found a setup error. */
static int read_exact(zri_net *n, int fd, uint8_t *d, size_t len, const char *addr, double deadline,
                      char *err, size_t errlen)
{
    while (len) {
        if (setup_failed(n, err, errlen)) return -1;
        int ms = ms_left(deadline);
        if (ms == 0) {
            zri_err(err, errlen, "the peer at %s did not answer the handshake in time", addr);
            return -1;
        }
        struct pollfd pf = {fd, POLLIN, 0};
        int pr = poll(&pf, 1, ms > 100 ? 100 : ms);
        if (pr < 0 && errno != EINTR) {
            zri_err(err, errlen, "poll: %s", strerror(errno));
            return -1;
        }
        if (pr <= 0) continue;
        ssize_t k = recv(fd, d, len, 0);
        if (k < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
        if (k <= 0) {
            int e = errno;
            if (setup_failed(n, err, errlen)) return -1; /* the first cause */
            errno = e;
            zri_err(err, errlen, "the peer at %s closed the connection during the handshake%s%s",
                    addr, k < 0 ? ": " : "", k < 0 ? strerror(errno) : "");
            return -1;
        }
        d += k;
        len -= (size_t)k;
    }
    return 0;
}

/* Reads the accepting side's hello answer (and nothing after it). */
static int read_answer(zri_net *n, int fd, const char *addr, double deadline, hello *hl, char *err,
                       size_t errlen)
{
    uint8_t hdr[4], d[HELLO_MAX];
    if (read_exact(n, fd, hdr, 4, addr, deadline, err, errlen) < 0) return -1;
    uint32_t len = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 | (uint32_t)hdr[2] << 8 | hdr[3];
    if (len == 0 || len > HELLO_MAX) {
        zri_err(err, errlen, "the peer at %s is not a zgc lifeline (bad hello)", addr);
        return -1;
    }
    if (read_exact(n, fd, d, len, addr, deadline, err, errlen) < 0) return -1;
    char why[300];
    if (hello_decode(d, len, hl, why, sizeof why) < 0) {
        zri_err(err, errlen, "the peer at %s is not a zgc lifeline (%s)", addr, why);
        return -1;
    }
    return 0;
}

static int connect_peer(zri_net *n, int l, double deadline, double timeout, char *err,
                        size_t errlen)
{
    const zgrt_program *p = n->p;
    peer *pe = &n->peers[l];
    const char *name = p->lifelines[l];
    zaddr a;
    if (parse_addr(pe->addr, &a, err, errlen) < 0) return -1;

    struct addrinfo *res = NULL;
    struct sockaddr_un sun;
    if (a.is_unix) {
        memset(&sun, 0, sizeof sun);
        sun.sun_family = AF_UNIX;
        memcpy(sun.sun_path, a.path, strlen(a.path) + 1);
    } else if (resolve(&a, 0, &res, pe->addr, err, errlen) < 0) {
        return -1;
    }

    int fd = -1, last = 0;
    double pause = 0.005;
    for (;;) {
        if (setup_failed(n, err, errlen)) goto fail;
        if (a.is_unix) {
            if (try_connect((struct sockaddr *)&sun, sizeof sun, AF_UNIX, deadline, &fd) == 0)
                break;
            last = errno;
        } else {
            for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
                if (try_connect(ai->ai_addr, ai->ai_addrlen, ai->ai_family, deadline, &fd) == 0)
                    break;
                last = errno;
                fd = -1;
            }
            if (fd >= 0) break;
        }
        if (now_s() >= deadline) {
            zri_err(err, errlen, "could not connect to lifeline %s at %s within %g s: %s", name,
                    pe->addr, timeout, strerror(last));
            goto fail;
        }
        double left = deadline - now_s();
        sleep_s(pause < left ? pause : left);
        if (pause < 0.1) pause *= 2;
    }
    if (res) freeaddrinfo(res);
    res = NULL;

    uint8_t out[HELLO_MAX + 4];
    size_t k = hello_encode(p, n->self, l, 0, "", out);
    if (write_all(fd, out, k, deadline) < 0) {
        int e = errno;
        if (setup_failed(n, err, errlen)) goto fail;
        errno = e;
        zri_err(err, errlen, "lost the connection to lifeline %s at %s during the handshake: %s",
                name, pe->addr, strerror(errno));
        goto fail;
    }
    hello hl;
    if (read_answer(n, fd, pe->addr, deadline, &hl, err, errlen) < 0) goto fail;
    if (strcmp(hl.workflow, p->workflow ? p->workflow : "") || strcmp(hl.lifeline, name)) {
        zri_err(err, errlen,
                "peer at %s is lifeline %.200s of workflow %.200s, expected lifeline %s of "
                "workflow %s",
                pe->addr, hl.lifeline, hl.workflow, name, p->workflow);
        goto fail;
    }
    if (hl.id != program_id(p) || hl.nlifelines != (uint64_t)p->nlifelines ||
        hl.from != (uint64_t)l) {
        zri_err(err, errlen,
                "peer at %s runs a different build of workflow %s (program identity mismatch)",
                pe->addr, p->workflow);
        goto fail;
    }
    if (hl.status != 0) {
        zri_err(err, errlen, "lifeline %s at %s refused the connection: %.700s", name, pe->addr,
                hl.reason);
        goto fail;
    }
    set_nonblock(fd, 0);
    pe->out_fd = fd;
    return 0;
fail:
    if (res) freeaddrinfo(res);
    if (fd >= 0) close(fd);
    return -1;
}

/* ---- open, send, close ------------------------------------------------------ */

static void net_free(zri_net *n)
{
    if (n->thread_started) {
        pthread_mutex_lock(&n->mu);
        n->phase = PHASE_CLOSING;
        pthread_mutex_unlock(&n->mu);
        wake_thread(n);
        pthread_join(n->thread, NULL);
    }
    if (n->listen_fd >= 0) close(n->listen_fd);
    unlink_ours(n);
    while (n->npend) drop_pending(n, n->npend - 1);
    if (n->peers) {
        for (int l = 0; l < n->p->nlifelines; l++) {
            peer *pe = &n->peers[l];
            if (pe->out_fd >= 0) close(pe->out_fd);
            if (pe->in_fd >= 0) close(pe->in_fd);
            rx_free(&pe->in);
            free(pe->obuf);
            pthread_mutex_destroy(&pe->send_mu);
        }
    }
    if (n->wake[0] >= 0) close(n->wake[0]);
    if (n->wake[1] >= 0) close(n->wake[1]);
    pthread_mutex_destroy(&n->mu);
    pthread_cond_destroy(&n->cv);
    free(n->peers);
    free(n->chunk);
    free(n->listen_text);
    free(n);
}

zri_net *zri_net_open(const zgrt_program *p, int self, const char *listen_addr,
                      const char *const *peer_addrs, zri_heap *h, const zri_net_callbacks *cb,
                      double timeout_s, char *err, size_t errlen)
{
    if (err && errlen) err[0] = 0;
    if (self < 0 || self >= p->nlifelines) {
        zri_err(err, errlen, "lifeline index %d out of range", self);
        return NULL;
    }
    zaddr la;
    if (parse_addr(listen_addr, &la, err, errlen) < 0) return NULL;
    for (int l = 0; l < p->nlifelines; l++) {
        if (l == self) continue;
        zaddr pa;
        if (!peer_addrs || !peer_addrs[l]) {
            zri_err(err, errlen, "no address for lifeline %s", p->lifelines[l]);
            return NULL;
        }
        if (parse_addr(peer_addrs[l], &pa, err, errlen) < 0) return NULL;
    }
    double timeout = timeout_s > 0 ? timeout_s : DEFAULT_TIMEOUT;
    double deadline = now_s() + timeout;

    zri_net *n = zri_xcalloc(1, sizeof *n);
    n->p = p;
    n->self = self;
    n->h = h;
    if (cb) n->cb = *cb;
    n->listen = la;
    n->listen_fd = -1;
    n->wake[0] = n->wake[1] = -1;
    pthread_mutex_init(&n->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&n->cv, &ca);
    pthread_condattr_destroy(&ca);
    n->peers = zri_xcalloc((size_t)p->nlifelines, sizeof *n->peers);
    for (int l = 0; l < p->nlifelines; l++) {
        peer *pe = &n->peers[l];
        pe->addr = l == self ? listen_addr : peer_addrs[l];
        pe->out_fd = pe->in_fd = -1;
        pthread_mutex_init(&pe->send_mu, NULL);
    }
    n->listen_text = zri_xstrndup(listen_addr, strlen(listen_addr));
    n->chunk = zri_xmalloc(READ_CHUNK);
    if (pipe(n->wake) < 0) {
        zri_err(err, errlen, "pipe: %s", strerror(errno));
        n->wake[0] = n->wake[1] = -1;
        net_free(n);
        return NULL;
    }
    set_cloexec(n->wake[0]);
    set_cloexec(n->wake[1]);
    set_nonblock(n->wake[0], 1);
    set_nonblock(n->wake[1], 1);

    if ((la.is_unix ? listen_unix(n, err, errlen) : listen_tcp(n, err, errlen)) < 0) {
        net_free(n);
        return NULL;
    }
    set_nonblock(n->listen_fd, 1);
    if (pthread_create(&n->thread, NULL, reader_main, n)) {
        zri_err(err, errlen, "cannot start the network thread");
        net_free(n);
        return NULL;
    }
    n->thread_started = 1;

    /* peers start in any order: each connect retries until the deadline */
    for (int l = 0; l < p->nlifelines; l++) {
        if (l == self) continue;
        if (connect_peer(n, l, deadline, timeout, err, errlen) < 0) {
            net_free(n);
            return NULL;
        }
    }

    /* wait until every peer has connected here */
    pthread_mutex_lock(&n->mu);
    while (n->nin < p->nlifelines - 1 && !n->setup_err[0]) {
        double left = deadline - now_s();
        if (left <= 0) break;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        double slice = left < 0.2 ? left : 0.2;
        ts.tv_sec += (time_t)slice;
        ts.tv_nsec += (long)((slice - (double)(time_t)slice) * 1e9);
        if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&n->cv, &n->mu, &ts);
    }
    int ok = n->nin == p->nlifelines - 1 && !n->setup_err[0];
    if (ok) {
        n->phase = PHASE_RUNNING;
    } else if (n->setup_err[0]) {
        zri_err(err, errlen, "%s", n->setup_err);
    } else {
        char missing[400] = "";
        size_t used = 0;
        for (int l = 0; l < p->nlifelines && used < sizeof missing - 1; l++) {
            if (l == self || n->peers[l].in_fd >= 0) continue;
            int w = snprintf(missing + used, sizeof missing - used, "%s%s", used ? ", " : "",
                             p->lifelines[l]);
            if (w > 0) used += (size_t)w;
        }
        if (used >= sizeof missing) used = sizeof missing - 1;
        zri_err(err, errlen, "timed out after %g s waiting for lifeline%s %s to connect to %s",
                timeout, strchr(missing, ',') ? "s" : "", missing, listen_addr);
    }
    pthread_mutex_unlock(&n->mu);
    if (!ok) {
        net_free(n);
        return NULL;
    }
    wake_thread(n);
    return n;
}

/* Writes peer l's output buffer (its send_mu held); deadline as for
 * write_all.  -1 when the connection is broken (the reason in out_err). */
static int flush_peer(zri_net *n, int l, double deadline)
{
    peer *pe = &n->peers[l];
    if (pe->out_broken) return -1;
    if (!pe->olen) return 0;
    int rc = write_all(pe->out_fd, pe->obuf, pe->olen, deadline);
    pe->olen = 0;
    if (rc < 0) {
        snprintf(pe->out_err, sizeof pe->out_err, "lost the connection to lifeline %s (%s): %s",
                 n->p->lifelines[l], pe->addr, strerror(errno));
        pe->out_broken = 1;
    }
    return rc;
}

int zri_net_send(zri_net *n, const zri_msg *m, char *err, size_t errlen)
{
    const zgrt_program *p = n->p;
    if (m->to < 0 || m->to >= p->nlifelines || m->to == n->self) {
        zri_err(err, errlen, "cannot send to lifeline index %d", (int)m->to);
        return -1;
    }
    peer *pe = &n->peers[m->to];
    const char *name = p->lifelines[m->to];
    uint8_t *buf;
    size_t len;
    if (zri_frame_encode(p, m, &buf, &len) < 0) {
        zri_err(err, errlen,
                "cannot send a message to lifeline %s: a value cannot be encoded (invalid value, "
                "or the message exceeds %u bytes)",
                name, (unsigned)ZRI_FRAME_MAX);
        return -1;
    }
    int rc = 0;
    pthread_mutex_lock(&pe->send_mu);
    if (pe->out_broken) {
        rc = -1;
    } else {
        if (pe->olen + len > pe->ocap) {
            size_t cap = pe->ocap ? pe->ocap : 4096;
            while (cap < pe->olen + len) cap *= 2;
            pe->obuf = zri_xrealloc(pe->obuf, cap);
            pe->ocap = cap;
        }
        memcpy(pe->obuf + pe->olen, buf, len);
        pe->olen += len;
        if (pe->olen >= OUT_FLUSH)
            rc = flush_peer(n, m->to, 0);
        else
            __atomic_store_n(&n->dirty, 1, __ATOMIC_RELEASE);
    }
    if (rc < 0) zri_err(err, errlen, "%s", pe->out_err);
    pthread_mutex_unlock(&pe->send_mu);
    free(buf);
    return rc;
}

int zri_net_flush(zri_net *n, char *err, size_t errlen)
{
    if (!__atomic_load_n(&n->dirty, __ATOMIC_ACQUIRE)) return 0;
    __atomic_store_n(&n->dirty, 0, __ATOMIC_RELEASE);
    int rc = 0;
    for (int l = 0; l < n->p->nlifelines; l++) {
        peer *pe = &n->peers[l];
        if (l == n->self) continue;
        pthread_mutex_lock(&pe->send_mu);
        if (pe->olen && flush_peer(n, l, 0) < 0 && rc == 0) {
            zri_err(err, errlen, "%s", pe->out_err);
            rc = -1;
        }
        pthread_mutex_unlock(&pe->send_mu);
    }
    return rc;
}

static int transport_send(void *n, const zri_msg *m, char *err, size_t errlen)
{
    return zri_net_send(n, m, err, errlen);
}

static int transport_flush(void *n, char *err, size_t errlen)
{
    return zri_net_flush(n, err, errlen);
}

zri_transport zri_net_transport(zri_net *n)
{
    zri_transport t = {transport_send, transport_flush, n};
    return t;
}

static void net_close(zri_net *n, int bye_ok);

void zri_net_close(zri_net *n) { net_close(n, 1); }

/* After a failed run: no BYE, so the peers see a connection that ended
 * without it, report the failure and stop too. */
void zri_net_abort(zri_net *n) { net_close(n, 0); }

static void net_close(zri_net *n, int bye_ok)
{
    if (!n) return;
    const zgrt_program *p = n->p;
    /* stop reading first: the end of a peer's connection is no failure now */
    pthread_mutex_lock(&n->mu);
    n->phase = PHASE_CLOSING;
    pthread_mutex_unlock(&n->mu);
    wake_thread(n);
    pthread_join(n->thread, NULL);
    n->thread_started = 0;

    double deadline = now_s() + BYE_TIMEOUT;
    for (int l = 0; l < p->nlifelines; l++) {
        peer *pe = &n->peers[l];
        if (pe->out_fd < 0) continue;
        pthread_mutex_lock(&pe->send_mu);
        zri_msg bye;
        memset(&bye, 0, sizeof bye);
        bye.kind = ZRI_MSG_BYE;
        bye.from = n->self;
        bye.to = l;
        uint8_t *buf;
        size_t len;
        if (bye_ok) flush_peer(n, l, deadline > now_s() ? deadline : now_s() + 0.01);
        if (bye_ok && !pe->out_broken && zri_frame_encode(p, &bye, &buf, &len) == 0) {
            write_all(pe->out_fd, buf, len, deadline > now_s() ? deadline : now_s() + 0.01);
            free(buf);
        }
        shutdown(pe->out_fd, SHUT_WR);
        close(pe->out_fd);
        pe->out_fd = -1;
        pthread_mutex_unlock(&pe->send_mu);
    }
    net_free(n);
}
