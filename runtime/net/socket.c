/* socket.c — the transport between per-lifeline processes: Unix-domain or
 * TCP stream sockets carrying frames (frame.c), each connection
 * authenticated (hello.c) and every frame tagged (auth.c).
 *
 * Connections.  Every lifeline listens on its own address and opens one
 * connection to every other lifeline; it sends on the connections it
 * opened ("outgoing") and reads from the ones it accepted ("incoming").
 * So between two lifelines there are two connections, one per direction,
 * and the frames of one direction arrive in the order they were sent.
 *
 * Addresses.  unix:PATH, or tcp:HOST:PORT (tcp:[IPv6]:PORT).  tcp:PORT
 * and tcp::PORT mean 127.0.0.1: a lifeline listens on the loopback
 * interface unless told otherwise, and only tcp:*:PORT (every interface)
 * or an explicit address (tcp:0.0.0.0:PORT, tcp:10.0.0.5:PORT) opens it to
 * the network.  `*` is for --listen only.
 *
 * Handshake (hello.c).  The connecting side sends HELLO, the accepting
 * side answers, the connecting side proves that it holds the run's secret,
 * the accepting side accepts; only then is the connection the peer's.
 * zri_net_open returns once every outgoing connection was accepted and
 * every peer's incoming connection was adopted.  A mismatch found by the
 * connecting side (another program, a peer without the secret, a
 * refusal) fails zri_net_open with a message naming the address; a
 * connection closed during the handshake is tried again until the
 * deadline (the other side may have dropped it as a stray, below).
 *
 * Stray connections.  During setup, a connection that is not (yet) a
 * lifeline of this run — an HTTP request, garbage, an idle connection, a
 * peer without the secret, a replayed handshake, another program — is
 * dropped, with one note (cb->note) saying why, and the run goes on
 * waiting for its peers.  At most PENDING_MAX connections wait for their
 * handshake at once; one more drops the oldest of them that has not sent
 * a well-formed HELLO (or else the oldest); each is dropped after
 * PENDING_TIMEOUT_S.  At most NOTES_MAX notes are printed.  Two
 * authenticated connections for the same lifeline are an error (two
 * processes run it with the secret).  Once every peer is in, the
 * listening socket is closed.
 *
 * Frames after the handshake.  Each payload is followed by its tag
 * (auth.c: HMAC-SHA256 with the connection's key over the frame's number
 * on the connection and the payload, truncated to ZRI_TAG_BYTES), and the
 * u32 length counts both.  A frame whose tag does not check — modified,
 * or a frame before it dropped, duplicated or reordered — fails the peer.
 *
 * Heartbeats.  --heartbeat SECONDS (zri_net_config.heartbeat_s, default
 * 5 s, 0: off) is the silence limit: every lifeline sends a heartbeat
 * frame (kind 7, tagged like the others) on each outgoing connection
 * every SECONDS/BEATS_PER_LIMIT, from this module's thread, whatever its
 * lifeline is doing (a long model call, a human answer); a peer from
 * which nothing at all has arrived for the limit is lost: "lifeline B
 * (ADDR) has sent nothing for 5 s …".  Both sides announce their limit in
 * the handshake, and a connection uses the larger one (off when either is
 * off, so that one lifeline under a debugger is enough to say so).  A
 * write that makes no progress for the limit fails the same way (a peer
 * that no longer reads).  Detection therefore comes between the limit and
 * the limit plus one poll round after the peer fell silent; a dropped
 * frame shows at the next heartbeat at the latest (its successor's tag
 * fails).
 *
 * Threads.  One thread per zri_net polls the listening socket, the
 * pending connections and the peers: during zri_net_open it accepts
 * connections and runs their handshakes; from a peer's adoption on (a
 * peer may be running while this lifeline still waits for another) it
 * reads frames from its incoming connection (non-blocking, partial reads
 * buffered), checks their tags, decodes them and calls cb->deliver; a
 * malformed, forged or unexpected frame, a connection that ends without
 * BYE or a silent peer calls cb->fail once for that peer, and that peer
 * is not read any more.  It also sends the heartbeats (taking a peer's
 * send lock only when it is free: a sender holding it keeps the
 * connection busy anyway).  No callback runs after zri_net_close starts.
 *   Direct reads.  Once the run has begun (and outside keep mode) an idle
 * worker of the run reads the peers itself (transport_wait, the
 * transport's `wait`): it polls their connections and the scheduler's
 * wake_fd, and the messages it reads are delivered on its thread, whose
 * next fiber is the receive that waited for them: no hand-off from this
 * module's thread.  rd_mu makes one reader at a time (the incoming side
 * of the peers, the read buffer, the heap); the module's thread leaves
 * the connections to the workers while one polls or did within
 * HANDBACK_S, and reads them again after that (a lifeline inside a long
 * action with its only worker), so heartbeats are heard and silence is
 * found either way (the worker's poll ends at the next silence limit).
 *
 * Sending.  zri_net_send encodes and tags the frame on the caller's thread
 * into the peer's output buffer (one lock per peer); zri_net_flush writes
 * the buffers out, one system call per peer for everything sent since the
 * last flush.  The runtime flushes before a lifeline can wait (a receive
 * that finds nothing, an action, a parallel region) and zri_net_close
 * before its BYE, so frames never sit in a buffer while their sender is
 * blocked; a buffer that grows past OUT_FLUSH bytes is written at once.
 *
 * BYE.  zri_net_close sends a BYE frame to every peer before closing: the
 * peer then knows the lifeline ended normally, reads every frame sent
 * before (stream sockets keep written data readable after the writer
 * closes), tells the run (cb->ended: a receive from that lifeline can
 * never be served now) and stops expecting heartbeats from it.
 *
 * Streams.  Every message carries its number on its stream (sender,
 * receiver, channel; frame.c); the reader delivers only the stream's
 * next one (zri_seq_check against cb->received): a copy — sent again
 * after a reconnection — is dropped, a gap fails the peer.
 *
 * Lost peers (durable runs, zri_net_config.peer_wait_s > 0: "keep
 * mode").  A peer whose connection ends without BYE, or that falls
 * silent, is not a failure at once: it is "away".  Both its connections
 * are closed; the run goes on (a receive from it waits, a send to it is
 * kept); the listening socket stays open for its new process, which
 * connects with the same secret and lifeline (a connection of a lifeline
 * already connected replaces the old one).  Once its incoming connection
 * is adopted, this lifeline connects back to it.  A peer away for longer
 * than peer_wait_s fails the run as before (cb->fail).
 *   Every message sent is kept, per stream, until the receiver's journal
 * has committed it: after each commit a receiver sends each sender an ACK
 * (zri_net_ack: per channel, how many messages of the stream its journal
 * holds), and the sender frees what the ACK covers; so what is kept is
 * what is not yet committed on the other side.  The first frame on every
 * new outgoing connection is a SYNC: per channel, how many messages of
 * the stream peer → self this lifeline holds (received, cb->received)
 * and how many of those its journal has committed (its last ACK).  A
 * sender writes no message on a connection before the receiver's SYNC
 * has come (they are kept meanwhile); then it frees what `committed`
 * covers and writes again, in order, every kept message after
 * `received`, then the new ones: nothing lost, and what is written twice
 * is dropped as a copy by the receiver.
 *   zri_net_close first waits (at most peer_wait_s) until every peer that
 * has not ended is connected and has acknowledged everything: a lifeline
 * that ends never leaves a message that only it could send again.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <math.h>
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
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "net.h"

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0 /* SO_NOSIGPIPE is set instead */
#endif

/* Connections waiting for their handshake.  A real peer needs one for a
 * few milliseconds; 64 leave room for every lifeline of a large run
 * connecting at once plus strays, and 64 * sizeof(pending) (14 KB each)
 * stays small. */
#define PENDING_MAX 64
/* A real peer's handshake takes two round trips (under a millisecond on
 * one machine); 5 s leaves room for a loaded machine and bounds how long
 * an idle stray holds a slot. */
#define PENDING_TIMEOUT_S 5.0
#define NOTES_MAX 20 /* notes of dropped connections, then one more saying so */
#define DEFAULT_TIMEOUT 60.0
#define OUT_FLUSH (64u << 10) /* output buffer size that is written at once */
#define BATCH_MAX (64u << 10) /* frames appended beyond this start another frame */
#define BYE_TIMEOUT 5.0       /* zri_net_close gives up on peers that do not read */
#define READ_CHUNK 65536
/* Heartbeats per silence limit: with 5, a peer may miss four in a row
 * (a descheduled process, a slow link) before it is declared lost. */
#define BEATS_PER_LIMIT 5
#define WIRE_MAX ((size_t)ZRI_FRAME_MAX + ZRI_TAG_BYTES) /* largest length field */
/* Keep mode: a connection back to a peer that came back gets this long
 * (its process listens already: a handshake takes milliseconds), and
 * output left over by a non-blocking write is retried this often. */
#define RECONNECT_TIMEOUT 5.0
#define PENDING_OUT_POLL 0.01
/* Keep mode: a peer without an outgoing connection is tried again this
 * often (a refused connection costs a system call). */
#define RETRY_S 0.1
/* The run's workers read the connections themselves while they wait
 * (transport_wait); the reader thread takes them back when no worker has
 * polled for this long (the lifeline is in a long action, say), so that
 * heartbeats are heard and failures seen.  It looks this often. */
#define HANDBACK_S 0.02
/* An upper bound on the coarse clock's tick (coarse_s), in milliseconds. */
#define COARSE_TICK_MS 10

/* ===================================================================== */
/* small helpers                                                          */
/* ===================================================================== */

/* A peer's connection is read and written through these: the system calls
 * without glibc's cancellation points, which cost two atomic
 * read-modify-writes a call in a threaded process; no thread of the
 * runtime is ever cancelled. */
static ssize_t sys_send(int fd, const void *b, size_t len, int flags)
{
    return syscall(SYS_sendto, fd, b, len, flags, NULL, 0);
}

static ssize_t sys_recv(int fd, void *b, size_t len, int flags)
{
    return syscall(SYS_recvfrom, fd, b, len, flags, NULL, 0);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* CLOCK_MONOTONIC as of the kernel's last tick (at most a tick behind,
 * a few milliseconds, and several times cheaper to read): for a worker's
 * poll, on every message's path.  Its deadlines are heartbeat limits (5 s
 * by default, heartbeats sent BEATS_PER_LIMIT times within one), so a
 * silence judged up to a tick early or a poll a tick longer than needed
 * changes nothing; `poll_end` the reader thread compares with mono_ns()
 * within HANDBACK_S, so it may take the peers back a tick early. */
static double coarse_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
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

/* ms_left on the coarse clock: one tick more, so that the poll never
 * ends before the deadline it waits for. */
static int ms_left_coarse(double deadline)
{
    double left = deadline - coarse_s();
    if (left <= 0) return 0;
    return left > 1e6 ? 1000000000 : (int)(left * 1000) + 1 + COARSE_TICK_MS;
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

/* Writes all of b before deadline (0: no limit).  -1 with errno. */
static int write_all(int fd, const uint8_t *b, size_t n, double deadline)
{
    while (n) {
        ssize_t k = send(fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT);
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

static uint32_t be32(const uint8_t *d)
{
    return (uint32_t)d[0] << 24 | (uint32_t)d[1] << 16 | (uint32_t)d[2] << 8 | d[3];
}

static void put_be32(uint8_t *d, uint32_t v)
{
    d[0] = (uint8_t)(v >> 24), d[1] = (uint8_t)(v >> 16), d[2] = (uint8_t)(v >> 8);
    d[3] = (uint8_t)v;
}

/* ===================================================================== */
/* addresses                                                              */
/* ===================================================================== */

typedef struct zaddr {
    int is_unix;
    int any; /* tcp:*:PORT: every interface */
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    char host[256];
    char port[8];
} zaddr;

static int parse_port(const char *s, const char *port, zaddr *a, char *err, size_t errlen)
{
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
    snprintf(a->port, sizeof a->port, "%ld", pv);
    return 0;
}

/* listening: the address of --listen (which may be tcp:*:PORT). */
static int parse_addr(const char *s, int listening, zaddr *a, char *err, size_t errlen)
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
        if (!colon) { /* tcp:PORT */
            strcpy(a->host, "127.0.0.1");
            return parse_port(s, hp, a, err, errlen);
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
        if (hn >= sizeof a->host) {
            zri_err(err, errlen, "bad address '%s': too long a host", s);
            return -1;
        }
        if (hn == 0 && colon == hp) { /* tcp::PORT */
            strcpy(a->host, "127.0.0.1");
        } else if (hn == 0) {
            zri_err(err, errlen, "bad address '%s': empty host", s);
            return -1;
        } else if (hn == 1 && h[0] == '*') {
            if (!listening) {
                zri_err(err, errlen,
                        "bad address '%s': '*' (every interface) is for --listen; a peer's "
                        "address names its host",
                        s);
                return -1;
            }
            a->any = 1;
        } else {
            memcpy(a->host, h, hn);
            a->host[hn] = 0;
        }
        return parse_port(s, colon + 1, a, err, errlen);
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
    int rc = getaddrinfo(a->any ? NULL : a->host, a->port, &hints, res);
    if (rc) {
        zri_err(err, errlen, "cannot resolve the host of %s: %s", text, gai_strerror(rc));
        return -1;
    }
    return 0;
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
            uint32_t len = be32(r->hdr);
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

/* Keep mode: a message sent and not yet acknowledged (its frame, length
 * included, as encoded). */
typedef struct kept {
    struct kept *next;
    int64_t seq;
    uint8_t *frame;
    size_t len;
} kept;

/* Keep mode, the state of the outgoing side: no connection (the peer is
 * away, or a write failed), connected and waiting for the peer's SYNC,
 * or up. */
enum { LINK_DOWN, LINK_SYNC, LINK_UP };

typedef struct peer {
    const char *addr; /* as given */
    /* the outgoing connection, under send_mu */
    pthread_mutex_t send_mu;
    int out_fd;
    zri_mac *out_mac;
    uint64_t out_seq; /* number of the next frame */
    double out_limit; /* a write without progress for this long fails (0: never) */
    int out_broken;   /* a send failed: later sends fail at once */
    char out_err[320];
    uint8_t *obuf; /* frames not yet written */
    size_t olen, ocap;
    /* the last of them still open (out_append): a batch at obuf + open_at
     * of open_n frames, its length and tag written when it is sealed */
    size_t open_at;
    int open_n;
    /* the incoming connection, on the reader thread */
    int in_fd;
    int in_waits; /* in_fd blocks, for at most ZRI_ALONE_MS (SO_RCVTIMEO): a recv may wait */
    zri_mac *in_mac;
    uint64_t in_seq; /* number of the next frame expected */
    double in_limit; /* silence limit (0: none) */
    double last_rx;  /* when bytes last came */
    double beat_at;  /* when the next heartbeat is due (0: not yet connected) */
    rx in;
    int done;  /* BYE seen or failed: not read any more */
    int ended; /* atomic: BYE seen: no heartbeats to it either */
    int lost;  /* atomic: failed: a blocked write to it gives up */
    /* keep mode, under send_mu */
    int link;
    kept **khead, **ktail; /* [nchans]: messages not acknowledged */
    int64_t nkept;
    int64_t *acked;  /* [nchans]: committed counts of the stream peer -> self told */
    zri_count *sync; /* the peer's SYNC, not yet applied (link not LINK_SYNC yet) */
    int32_t nsync;   /* -1: none */
    int opending;    /* atomic: output left in obuf by a non-blocking write */
    /* keep mode, reader thread */
    int away;           /* lost; waiting for its new process */
    double away_until;  /* ... until then (0: not away since it was last back) */
    double retry_at;    /* when to try connecting to it again */
    int gone;           /* atomic: away past the limit: failed */
    char away_why[600]; /* why it was lost */
} peer;

enum { PEND_HELLO, PEND_PROOF };

typedef struct pending {
    int fd;
    int state;
    double since;
    uint8_t hdr[4];
    size_t hdr_got, need, got;
    uint8_t buf[ZRI_HELLO_MAX];
    zri_hs hs;
} pending;

struct zri_net {
    const zgrt_program *p;
    int self;
    zri_heap *h;
    zri_net_callbacks cb;
    const zri_secret *secret;
    uint8_t id[ZRI_HASH_BYTES];
    uint32_t hb_ms; /* --heartbeat in milliseconds (0: off) */
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
    pending *pend[PENDING_MAX];
    int npend;
    int nnotes;
    uint8_t *chunk; /* read buffer (under rd_mu) */
    /* Reading the peers' connections: whoever holds rd_mu (the reader
     * thread, or a worker of the run in zri_net's wait: "direct"), which
     * guards the peers' incoming state (in_fd, rx, tags, done, last_rx),
     * the chunk and the heap h.  `polling` (atomic) is set while a worker
     * polls, `poll_end` (atomic, ns on the coarse clock: coarse_s) when one last stopped; the reader
     * thread leaves the connections to the workers until none has polled
     * for HANDBACK_S. */
    pthread_mutex_t rd_mu;
    int polling;
    int64_t poll_end;
    int poked;        /* atomic: a wake (transport_wake) that no wait has seen yet */
    int dirty;        /* atomic: some output buffer may hold frames */
    double peer_wait; /* keep mode (> 0): how long a lost peer is waited for */
    int (*peer_ended)(void *u, int32_t l); /* zri_net_config's */
    void *peer_ended_u;

    pthread_mutex_t mu; /* phase, nin, setup_err, peers' in_fd; signals cv */
    pthread_cond_t cv;
    int phase;
    int nin;                                  /* incoming connections adopted */
    char setup_err[ZRI_HELLO_NAME_MAX + 400]; /* first error of the reader thread in setup */
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

static int setup_failed(zri_net *n, char *err, size_t errlen)
{
    pthread_mutex_lock(&n->mu);
    int bad = n->setup_err[0] != 0;
    if (bad) zri_err(err, errlen, "%s", n->setup_err);
    pthread_mutex_unlock(&n->mu);
    return bad;
}

/* One line about a dropped connection (reader thread). */
static void note(zri_net *n, const char *fmt, ...) ZRI_PRINTF(2, 3);
static void note(zri_net *n, const char *fmt, ...)
{
    if (!n->cb.note || n->nnotes > NOTES_MAX) return;
    char msg[900], line[1000];
    if (n->nnotes++ == NOTES_MAX) {
        snprintf(msg, sizeof msg, "more connections to %s were dropped (not reported one by one)",
                 n->listen_text);
    } else {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
    }
    snprintf(line, sizeof line, "lifeline %s: %s", n->p->lifelines[n->self], msg);
    n->cb.note(n->cb.user, line);
}

/* The silence limit between this lifeline and one that announced peer_ms. */
static double pair_limit(const zri_net *n, uint32_t peer_ms)
{
    if (!n->hb_ms || !peer_ms) return 0;
    return (n->hb_ms > peer_ms ? n->hb_ms : peer_ms) / 1000.0;
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

/* ---- sending --------------------------------------------------------------- */

/* Seals peer l's open frame (its send_mu held): a batch of one becomes
 * that frame alone; the length and the tag are written. */
static void out_seal(zri_net *n, int l)
{
    peer *pe = &n->peers[l];
    if (!pe->open_n) return;
    uint8_t *f = pe->obuf + pe->open_at;
    size_t plen;
    if (pe->open_n == 1) {
        plen = be32(f + 4 + ZRI_BATCH_HEAD);
        memmove(f + 4, f + 4 + ZRI_BATCH_HEAD + 4, plen);
    } else {
        plen = pe->olen - pe->open_at - 4;
    }
    put_be32(f, (uint32_t)(plen + ZRI_TAG_BYTES));
    zri_mac_tag(pe->out_mac, pe->out_seq, f + 4, plen, f + 4 + plen);
    pe->out_seq++;
    pe->olen = pe->open_at + 4 + plen + ZRI_TAG_BYTES;
    pe->open_n = 0;
}

/* Appends one frame's payload (plen bytes) to peer l's output (its
 * send_mu held): frames appended until the output is written go out as
 * one frame under one tag (ZRI_KIND_BATCH; out_seal). */
static void out_append(zri_net *n, int l, const uint8_t *payload, size_t plen)
{
    peer *pe = &n->peers[l];
    if (pe->open_n && pe->olen - pe->open_at + 4 + plen > BATCH_MAX) out_seal(n, l);
    size_t need = (pe->open_n ? 0 : 4 + ZRI_BATCH_HEAD) + 4 + plen + ZRI_TAG_BYTES;
    if (pe->olen + need > pe->ocap) {
        size_t cap = pe->ocap ? pe->ocap : 4096;
        while (cap < pe->olen + need) cap *= 2;
        pe->obuf = zri_xrealloc(pe->obuf, cap);
        pe->ocap = cap;
    }
    if (!pe->open_n) {
        uint8_t *h = pe->obuf + pe->olen;
        pe->open_at = pe->olen;
        h[4] = ZRI_FRAME_MAGIC, h[5] = ZRI_FRAME_VERSION, h[6] = ZRI_KIND_BATCH;
        pe->olen += 4 + ZRI_BATCH_HEAD;
    }
    uint8_t *d = pe->obuf + pe->olen;
    put_be32(d, (uint32_t)plen);
    memcpy(d + 4, payload, plen);
    pe->olen += 4 + plen;
    pe->open_n++;
}

/* Writes peer l's output buffer (its send_mu held).  block: wait until
 * all is written (giving up at deadline when > 0, when the reader thread
 * lost the peer, or after out_limit without progress); else write what
 * the socket takes now and keep the rest.  -1 when the connection is
 * broken (the reason in out_err). */
static int flush_peer(zri_net *n, int l, int block, double deadline)
{
    peer *pe = &n->peers[l];
    const char *name = n->p->lifelines[l];
    if (pe->out_broken) return -1;
    out_seal(n, l);
    size_t off = 0;
    double progress = 0;
    while (off < pe->olen) {
        ssize_t k =
            sys_send(pe->out_fd, pe->obuf + off, pe->olen - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k > 0) {
            off += (size_t)k;
            progress = 0;
            continue;
        }
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!block) break;
            double t = now_s();
            if (progress == 0) progress = t;
            if (__atomic_load_n(&pe->lost, __ATOMIC_ACQUIRE)) {
                snprintf(pe->out_err, sizeof pe->out_err, "lost lifeline %s (%s)", name, pe->addr);
            } else if (deadline > 0 && t >= deadline) {
                snprintf(pe->out_err, sizeof pe->out_err,
                         "lifeline %s (%s) did not read what this lifeline sent", name, pe->addr);
            } else if (pe->out_limit > 0 && t - progress > pe->out_limit) {
                snprintf(pe->out_err, sizeof pe->out_err,
                         "lifeline %s (%s) has read nothing for %g s: its process is stopped, "
                         "hung or cut off",
                         name, pe->addr, pe->out_limit);
            } else {
                struct pollfd pf = {pe->out_fd, POLLOUT, 0};
                if (poll(&pf, 1, 100) < 0 && errno != EINTR) {
                    snprintf(pe->out_err, sizeof pe->out_err, "poll: %s", strerror(errno));
                } else {
                    continue;
                }
            }
        } else {
            snprintf(pe->out_err, sizeof pe->out_err, "lost the connection to lifeline %s (%s): %s",
                     name, pe->addr, k == 0 ? strerror(EPIPE) : strerror(errno));
        }
        pe->out_broken = 1;
        __atomic_store_n(&pe->lost, 1, __ATOMIC_RELEASE);
        break;
    }
    if (off) {
        memmove(pe->obuf, pe->obuf + off, pe->olen - off);
        pe->olen -= off;
    }
    if (pe->out_broken) {
        pe->olen = 0;
        pe->open_n = 0;
        __atomic_store_n(&pe->opending, 0, __ATOMIC_RELAXED);
        if (n->peer_wait > 0 && pe->khead) {
            /* keep mode: every message is kept; the connection closes, and
             * the reader thread connects again (keep_links) */
            close(pe->out_fd);
            pe->out_fd = -1;
            zri_mac_free(pe->out_mac);
            pe->out_mac = NULL;
            pe->out_seq = 0;
            pe->out_broken = 0;
            pe->link = LINK_DOWN;
            __atomic_store_n(&pe->lost, 0, __ATOMIC_RELEASE);
            return 0;
        }
        return -1;
    }
    __atomic_store_n(&pe->opending, pe->olen > 0, __ATOMIC_RELAXED);
    return 0;
}

/* ---- keep mode --------------------------------------------------------------- */

static void kept_free_upto(peer *pe, int32_t chan, int64_t committed)
{
    kept *k;
    while ((k = pe->khead[chan]) && k->seq <= committed) {
        pe->khead[chan] = k->next;
        if (!k->next) pe->ktail[chan] = NULL;
        free(k->frame);
        free(k);
        pe->nkept--;
    }
}

/* Appends peer l's SYNC (send_mu held): the counts of the stream l -> self. */
static int append_sync(zri_net *n, int l)
{
    peer *pe = &n->peers[l];
    const zgrt_program *p = n->p;
    zri_count *c = zri_xcalloc((size_t)(p->nchans > 0 ? p->nchans : 1), sizeof *c);
    int32_t k = 0;
    for (int32_t ch = 0; ch < p->nchans; ch++) {
        int64_t got = n->cb.received ? n->cb.received(n->cb.user, l, ch) : 0;
        int64_t com = pe->acked[ch] < got ? pe->acked[ch] : got;
        if (got > 0) c[k++] = (zri_count){ch, got, com};
    }
    uint8_t *buf;
    size_t len;
    int rc = zri_counts_encode(p, ZRI_KIND_SYNC, n->self, l, c, k, &buf, &len);
    free(c);
    if (rc == 0) {
        out_append(n, l, buf + 4, len - 4);
        free(buf);
    }
    return rc;
}

/* Peer l's SYNC has come and the outgoing connection is new (send_mu
 * held, link LINK_SYNC): frees what it committed, writes again what it
 * lacks, in order; the link is up. */
static void apply_sync(zri_net *n, int l)
{
    peer *pe = &n->peers[l];
    int32_t j = 0;
    for (int32_t ch = 0; ch < n->p->nchans; ch++) {
        int64_t got = 0, com = 0;
        if (j < pe->nsync && pe->sync[j].chan == ch)
            got = pe->sync[j].received, com = pe->sync[j++].committed;
        kept_free_upto(pe, ch, com);
        for (kept *k = pe->khead[ch]; k; k = k->next)
            if (k->seq > got) out_append(n, l, k->frame + 4, k->len - 4);
    }
    free(pe->sync);
    pe->sync = NULL;
    pe->nsync = -1;
    pe->link = LINK_UP;
    flush_peer(n, l, 0, 0);
}

/* A new outgoing connection to peer l (keep mode): its SYNC first, then
 * what the peer's SYNC says, if it has come. */
static void start_link(zri_net *n, int l)
{
    peer *pe = &n->peers[l];
    pthread_mutex_lock(&pe->send_mu);
    pe->link = LINK_SYNC;
    if (append_sync(n, l) == 0) {
        if (pe->nsync >= 0)
            apply_sync(n, l);
        else
            flush_peer(n, l, 0, 0);
    }
    pthread_mutex_unlock(&pe->send_mu);
}

/* Heartbeats due now (reader thread); returns when the next one is due
 * (0: none planned). */
static double beat_all(zri_net *n, double now)
{
    if (!n->hb_ms) return 0;
    double interval = n->hb_ms / 1000.0 / BEATS_PER_LIMIT, next = 0;
    static const uint8_t beat[3] = {ZRI_FRAME_MAGIC, ZRI_FRAME_VERSION, ZRI_KIND_BEAT};
    for (int l = 0; l < n->p->nlifelines; l++) {
        peer *pe = &n->peers[l];
        if (l == n->self || __atomic_load_n(&pe->ended, __ATOMIC_ACQUIRE)) continue;
        if (now >= pe->beat_at) {
            if (pthread_mutex_trylock(&pe->send_mu) == 0) {
                if (pe->out_fd >= 0 && !pe->out_broken && (!pe->khead || pe->link != LINK_DOWN)) {
                    /* the first look at a new connection only plans */
                    if (pe->beat_at > 0) {
                        out_append(n, l, beat, sizeof beat);
                        flush_peer(n, l, 0, 0);
                    }
                    pe->beat_at = now + interval;
                } else if (pe->out_fd < 0 || pe->khead) {
                    pe->beat_at = 0; /* not connected (yet, or again): look again */
                } else {
                    pe->beat_at = now + 1e9; /* broken: no more */
                }
                pthread_mutex_unlock(&pe->send_mu);
            } else {
                pe->beat_at = now + interval / 8; /* a sender is busy: soon again */
            }
        }
        double at = pe->beat_at > 0 ? pe->beat_at : now + 0.05;
        if (next == 0 || at < next) next = at;
    }
    return next;
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
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, PENDING_MAX) < 0) {
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
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, PENDING_MAX) == 0) break;
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

/* ---- the reader thread: peers --------------------------------------------- */

static int connect_peer(zri_net *n, int l, double deadline, double timeout, int once, char *err,
                        size_t errlen);

typedef struct in_ctx {
    zri_net *n;
    int l;    /* peer lifeline */
    int stop; /* 1: BYE seen; 2: failed, msg says why */
    char msg[700];
} in_ctx;

/* An ACK or SYNC from peer l (keep mode only). */
static int on_counts(in_ctx *c, const uint8_t *d, size_t len)
{
    zri_net *n = c->n;
    peer *pe = &n->peers[c->l];
    const char *who = n->p->lifelines[c->l];
    int kind;
    int32_t from, to, nc;
    zri_count *cnt;
    char err[300];
    if (!pe->khead) {
        snprintf(c->msg, sizeof c->msg,
                 "unexpected frame from %s: counts (kind %u) in a run that "
                 "is not durable",
                 who, (unsigned)d[2]);
        return c->stop = 2;
    }
    if (zri_counts_decode(n->p, d, len, &kind, &from, &to, &cnt, &nc, err, sizeof err) < 0) {
        snprintf(c->msg, sizeof c->msg, "malformed frame from %s: %s", who, err);
        return c->stop = 2;
    }
    if (from != c->l || to != n->self) {
        free(cnt);
        snprintf(c->msg, sizeof c->msg, "unexpected frame from %s: counts from %s to %s", who,
                 n->p->lifelines[from], n->p->lifelines[to]);
        return c->stop = 2;
    }
    pthread_mutex_lock(&pe->send_mu);
    if (kind == ZRI_KIND_ACK) {
        for (int32_t i = 0; i < nc; i++) kept_free_upto(pe, cnt[i].chan, cnt[i].committed);
        free(cnt);
    } else if (pe->nsync >= 0 || pe->link == LINK_UP) {
        free(cnt);
        snprintf(c->msg, sizeof c->msg, "unexpected frame from %s: a second SYNC", who);
        c->stop = 2;
    } else {
        pe->sync = cnt;
        pe->nsync = nc;
        if (pe->link == LINK_SYNC) apply_sync(n, c->l);
    }
    pthread_mutex_unlock(&pe->send_mu);
    return c->stop;
}

static int on_payload(in_ctx *c, const uint8_t *d, size_t plen);

/* One frame (payload and tag) from established peer l: a frame, or a
 * batch of them (ZRI_KIND_BATCH) under the one tag. */
static int on_frame(void *user, const uint8_t *d, size_t len)
{
    in_ctx *c = user;
    zri_net *n = c->n;
    const zgrt_program *p = n->p;
    peer *pe = &n->peers[c->l];
    const char *who = p->lifelines[c->l];
    if (len < 3 + ZRI_TAG_BYTES) {
        snprintf(c->msg, sizeof c->msg, "malformed frame from %s: %zu bytes, too short", who, len);
        return c->stop = 2;
    }
    size_t plen = len - ZRI_TAG_BYTES;
    uint8_t tag[ZRI_TAG_BYTES];
    zri_mac_tag(pe->in_mac, pe->in_seq, d, plen, tag);
    if (!zri_equal(tag, d + plen, ZRI_TAG_BYTES)) {
        snprintf(c->msg, sizeof c->msg,
                 "frame %llu from lifeline %s (%s) failed its integrity check: it was modified, "
                 "or frames were dropped, duplicated or reordered on the way",
                 (unsigned long long)pe->in_seq, who, pe->addr);
        return c->stop = 2;
    }
    pe->in_seq++;
    if (!zri_is_batch(d, plen)) return on_payload(c, d, plen);
    size_t at = ZRI_BATCH_HEAD, k;
    const uint8_t *item;
    int more;
    while ((more = zri_batch_next(d, plen, &at, &item, &k)) > 0) {
        if (zri_is_batch(item, k)) {
            snprintf(c->msg, sizeof c->msg, "malformed frame from %s: a batch inside a batch", who);
            return c->stop = 2;
        }
        if (on_payload(c, item, k)) return c->stop;
    }
    if (more < 0) {
        snprintf(c->msg, sizeof c->msg,
                 "malformed frame from %s: in a batch, the frame at byte %zu has a length of 0 "
                 "or one past the batch's end",
                 who, at);
        return c->stop = 2;
    }
    return 0;
}

/* One frame's payload, its tag checked (alone or in a batch): a
 * heartbeat, counts or a message.  Non-zero: c->stop. */
static int on_payload(in_ctx *c, const uint8_t *d, size_t plen)
{
    zri_net *n = c->n;
    const zgrt_program *p = n->p;
    const char *who = p->lifelines[c->l];
    if (plen == 3 && d[0] == ZRI_FRAME_MAGIC && d[1] == ZRI_FRAME_VERSION && d[2] == ZRI_KIND_BEAT)
        return 0;
    char err[400];
    if (plen >= 3 && (d[2] == ZRI_KIND_ACK || d[2] == ZRI_KIND_SYNC)) return on_counts(c, d, plen);
    zri_msg *m;
    if (zri_frame_decode_in(p, n->h, n->cb.block, n->cb.user, d, plen, &m, err, sizeof err) < 0) {
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
        /* the stream's next message only (net.h: zri_seq_check) */
        int64_t got = n->cb.received ? n->cb.received(n->cb.user, m->from, m->chan) : m->seq - 1;
        int k = zri_seq_check(got, m->seq);
        if (k == ZRI_SEQ_COPY) {
            free(m);
            return 0;
        }
        if (k == ZRI_SEQ_GAP) {
            snprintf(c->msg, sizeof c->msg,
                     "lost a message from lifeline %s on channel %s: message %lld came after %lld",
                     who, p->chans[m->chan], (long long)m->seq, (long long)got);
            free(m);
            return c->stop = 2;
        }
        if (n->cb.deliver)
            n->cb.deliver(n->cb.user, m);
        else
            free(m);
        return 0;
    }
    free(m);
    return c->stop;
}

/* Keep mode: peer l was lost (why); both its connections close and it is
 * waited for until peer_wait has passed since it was first lost. */
static void go_away(zri_net *n, int l, const char *why, double now)
{
    peer *pe = &n->peers[l];
    if (pe->in_fd >= 0) close(pe->in_fd);
    pthread_mutex_lock(&n->mu);
    pe->in_fd = -1;
    pthread_mutex_unlock(&n->mu);
    zri_mac_free(pe->in_mac);
    pe->in_mac = NULL;
    pe->in_seq = 0;
    rx_free(&pe->in);
    pe->beat_at = 0;
    if (!pe->away_until) {
        pe->away_until = now + n->peer_wait;
        snprintf(pe->away_why, sizeof pe->away_why, "%s", why);
        if (n->cb.note) {
            char line[900];
            snprintf(line, sizeof line,
                     "lifeline %s: %s; waiting up to %g s for lifeline %s to come back "
                     "(restart its process with --resume)",
                     n->p->lifelines[n->self], why, n->peer_wait, n->p->lifelines[l]);
            n->cb.note(n->cb.user, line);
        }
    }
    pe->away = 1;
    /* a write blocked on the old connection gives up (flush_peer) */
    __atomic_store_n(&pe->lost, 1, __ATOMIC_RELEASE);
    pthread_mutex_lock(&pe->send_mu);
    if (pe->out_fd >= 0) close(pe->out_fd);
    pe->out_fd = -1;
    zri_mac_free(pe->out_mac);
    pe->out_mac = NULL;
    pe->out_seq = 0;
    pe->olen = 0;
    pe->open_n = 0;
    pe->out_broken = 0;
    pe->link = LINK_DOWN;
    free(pe->sync);
    pe->sync = NULL;
    pe->nsync = -1;
    __atomic_store_n(&pe->opending, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&pe->lost, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&pe->send_mu);
}

/* Stops reading peer l; with a message, reports the failure.  In keep
 * mode a lost connection or a silence (not fatal) makes it away instead;
 * a malformed, forged or unexpected frame fails the run all the same. */
static void peer_done(zri_net *n, int l, const char *failure, int fatal)
{
    peer *pe = &n->peers[l];
    if (failure && pe->khead && !fatal) {
        go_away(n, l, failure, now_s());
        return;
    }
    close(pe->in_fd);
    pthread_mutex_lock(&n->mu);
    pe->in_fd = -1;
    pthread_mutex_unlock(&n->mu);
    pe->done = 1;
    rx_free(&pe->in);
    if (failure) {
        __atomic_store_n(&pe->lost, 1, __ATOMIC_RELEASE);
        if (n->cb.fail) n->cb.fail(n->cb.user, failure);
    } else {
        __atomic_store_n(&pe->ended, 1, __ATOMIC_RELEASE);
        if (n->cb.ended) n->cb.ended(n->cb.user, l);
    }
}

/* Reads what peer l sent (under rd_mu) and handles its frames; *nowp is
 * the time the bytes count as heard.  wait: the first recv waits (the
 * connection's SO_RCVTIMEO, ZRI_ALONE_MS: in_waits), and *nowp becomes
 * the time it returned.  1 when the peer was heard from (bytes, its end or
 * a failure), 0 when nothing was there. */
static int read_peer(zri_net *n, int l, double *nowp, int wait)
{
    peer *pe = &n->peers[l];
    in_ctx c; /* (its 700-byte message not cleared: written only on a failure) */
    c.n = n;
    c.l = l;
    c.stop = 0;
    c.msg[0] = '\0';
    int rc_bad = 0; /* a malformed length: fatal */
    int heard = 0;
    const char *who = n->p->lifelines[l];
    double now = *nowp;
    for (int rounds = 0; rounds < 16; rounds++) { /* then let the others in */
        ssize_t k = sys_recv(pe->in_fd, n->chunk, READ_CHUNK, wait ? 0 : MSG_DONTWAIT);
        if (wait) {
            /* it waited (up to ZRI_ALONE_MS): the time is now */
            wait = 0;
            *nowp = now = coarse_s();
        }
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return heard;
        heard = 1;
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
        pe->last_rx = now;
        uint32_t badlen = 0;
        int rc = rx_feed(&pe->in, n->chunk, (size_t)k, WIRE_MAX, on_frame, &c, &badlen);
        /* a short read emptied the socket: no recv to hear EAGAIN */
        if (rc != -2 && !c.stop && k < READ_CHUNK) return 1;
        if (rc == -2) {
            rc_bad = 1;
            if (badlen)
                snprintf(c.msg, sizeof c.msg,
                         "malformed frame from %s: frame length %u exceeds the limit of %u bytes",
                         who, (unsigned)badlen, (unsigned)WIRE_MAX);
            else
                snprintf(c.msg, sizeof c.msg, "malformed frame from %s: frame length 0", who);
            break;
        }
        if (c.stop == 1) { /* BYE: whatever follows is not read */
            peer_done(n, l, NULL, 0);
            return 1;
        }
        if (c.stop) break;
    }
    if (c.msg[0]) peer_done(n, l, c.msg, c.stop == 2 || rc_bad);
    return 1;
}

/* A peer that has sent nothing for its limit (not read in this round). */
static void check_silence(zri_net *n, int l, double now)
{
    peer *pe = &n->peers[l];
    if (pe->in_limit <= 0 || now - pe->last_rx <= pe->in_limit) return;
    char msg[600], part[160] = "";
    if (pe->in.hdr_got == 4)
        snprintf(part, sizeof part, ", in the middle of a frame (%zu of %zu bytes received)",
                 pe->in.got, pe->in.need);
    else if (pe->in.hdr_got > 0)
        snprintf(part, sizeof part, ", in the middle of a frame's length");
    snprintf(msg, sizeof msg,
             "lifeline %s (%s) has sent nothing for %g s%s: its process is stopped, hung or cut "
             "off",
             n->p->lifelines[l], pe->addr, pe->in_limit, part);
    peer_done(n, l, msg, 0);
}

/* ---- the reader thread: connections waiting for their handshake -------- */

static void drop_pending(zri_net *n, int i, const char *why)
{
    pending *pd = n->pend[i];
    if (why) note(n, "dropped a connection to %s: %s", n->listen_text, why);
    close(pd->fd);
    free(pd);
    n->pend[i] = n->pend[--n->npend];
}

/* Sends a handshake frame without waiting (it is small, and the socket
 * new); -1 when it does not go out whole. */
static int send_now(int fd, const uint8_t *d, size_t len)
{
    ssize_t k;
    do k = send(fd, d, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (k < 0 && errno == EINTR);
    return k == (ssize_t)len ? 0 : -1;
}

/* A whole handshake payload from pending connection i: 0 while it is
 * still pending, -1 once it is gone (dropped, or adopted as its peer's). */
static int pending_payload(zri_net *n, int i, double now)
{
    pending *pd = n->pend[i];
    uint8_t out[ZRI_HELLO_MAX + 4];
    size_t olen = 0;
    char why[ZRI_HELLO_NAME_MAX + 200];
    if (pd->state == PEND_HELLO) {
        int rc = zri_hs_on_hello(&pd->hs, pd->buf, pd->need, out, &olen, why, sizeof why);
        if (rc == ZRI_HS_DROP) {
            drop_pending(n, i, why);
            return -1;
        }
        if (send_now(pd->fd, out, olen) < 0) {
            drop_pending(n, i, rc == ZRI_HS_REFUSE ? why : "it went away during the handshake");
            return -1;
        }
        /* after a refusal too: a proof tells a lifeline of this run */
        pd->state = PEND_PROOF;
        return 0;
    }
    int rc = zri_hs_on_proof(&pd->hs, pd->buf, pd->need, out, &olen, why, sizeof why);
    if (rc == ZRI_HS_REFUSE) {
        setup_error(n, why);
        drop_pending(n, i, NULL);
        return -1;
    }
    if (rc != 0) {
        drop_pending(n, i, why);
        return -1;
    }
    int l = pd->hs.peer;
    peer *pe = &n->peers[l];
    pthread_mutex_lock(&n->mu);
    int twice = pe->in_fd >= 0;
    pthread_mutex_unlock(&n->mu);
    if (pe->done || pe->gone) {
        drop_pending(n, i, "its lifeline has ended or failed in this run");
        return -1;
    }
    if (twice && pe->khead) {
        /* keep mode: a new process of the lifeline; the old one is gone */
        go_away(n, l, "a new connection replaced the old one", now);
        twice = 0;
    }
    if (twice) {
        char msg[300];
        snprintf(msg, sizeof msg,
                 "two processes connected to %s as lifeline %s, both with this run's secret",
                 n->listen_text, n->p->lifelines[l]);
        setup_error(n, msg);
        drop_pending(n, i, NULL);
        return -1;
    }
    char err[300];
    zri_mac *mac = zri_mac_new(pd->hs.key, err, sizeof err);
    if (!mac) {
        setup_error(n, err);
        drop_pending(n, i, NULL);
        return -1;
    }
    if (send_now(pd->fd, out, olen) < 0) {
        zri_mac_free(mac);
        drop_pending(n, i, "it went away during the handshake");
        return -1;
    }
    pe->in_mac = mac;
    pe->in_seq = 0;
    /* a lone fiber's wait for this peer alone is a recv that blocks
     * (transport_wait), for at most ZRI_ALONE_MS; every other read of it
     * passes MSG_DONTWAIT.  Without the bound it stays non-blocking. */
    struct timeval tv = {0, ZRI_ALONE_MS * 1000};
    pe->in_waits = setsockopt(pd->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0 &&
                   set_nonblock(pd->fd, 0) == 0;
    pe->in_limit = pair_limit(n, pd->hs.peer_heartbeat_ms);
    pe->last_rx = now;
    pthread_mutex_lock(&n->mu);
    pe->in_fd = pd->fd;
    if (!pe->away) n->nin++;
    pthread_cond_broadcast(&n->cv);
    pthread_mutex_unlock(&n->mu);
    free(pd);
    n->pend[i] = n->pend[--n->npend];
    /* keep mode: it came back; the reader connects back (keep_links) */
    pe->away = 0;
    pe->retry_at = 0;
    return -1;
}

/* Keep mode, running (reader thread): connects to every peer without an
 * outgoing connection (a new process of a lost one, or one whose
 * connection broke), one attempt every RETRY_S; a peer with both
 * connections again is back.  Returns when to look again (0: nothing
 * planned). */
static double keep_links(zri_net *n, double now)
{
    double due = 0;
    for (int l = 0; l < n->p->nlifelines; l++) {
        peer *pe = &n->peers[l];
        if (l == n->self || !pe->khead || pe->done || __atomic_load_n(&pe->gone, __ATOMIC_ACQUIRE))
            continue;
        pthread_mutex_lock(&pe->send_mu);
        int out_ok = pe->out_fd >= 0;
        pthread_mutex_unlock(&pe->send_mu);
        if (!out_ok && now >= pe->retry_at) {
            char why[600];
            if (connect_peer(n, l, now_s() + RECONNECT_TIMEOUT, RECONNECT_TIMEOUT, 1, why,
                             sizeof why) == 0) {
                start_link(n, l);
                out_ok = 1;
            } else {
                pe->retry_at = now_s() + RETRY_S;
            }
        }
        if (!out_ok && (due == 0 || pe->retry_at < due)) due = pe->retry_at;
        if (pe->away_until && out_ok && pe->in_fd >= 0) {
            pe->away_until = 0;
            if (n->cb.note) {
                char line[300];
                snprintf(line, sizeof line, "lifeline %s: lifeline %s is back",
                         n->p->lifelines[n->self], n->p->lifelines[l]);
                n->cb.note(n->cb.user, line);
            }
        }
    }
    return due;
}

/* Reads pending connection i: only the bytes of its current frame, so
 * that nothing after the handshake is taken from the stream. */
static void read_pending(zri_net *n, int i, double now)
{
    for (;;) {
        pending *pd = n->pend[i];
        uint8_t *dst;
        size_t want;
        if (pd->hdr_got < 4)
            dst = pd->hdr + pd->hdr_got, want = 4 - pd->hdr_got;
        else
            dst = pd->buf + pd->got, want = pd->need - pd->got;
        ssize_t k = recv(pd->fd, dst, want, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (k <= 0) {
            drop_pending(n, i,
                         pd->hs.refusal[0] ? pd->hs.refusal
                         : pd->state == PEND_HELLO && pd->hdr_got == 0
                             ? "it closed without a handshake"
                             : "it closed during the handshake");
            return;
        }
        if (pd->hdr_got < 4) {
            pd->hdr_got += (size_t)k;
            if (pd->hdr_got < 4) continue;
            uint32_t len = be32(pd->hdr);
            if (len == 0 || len > ZRI_HELLO_MAX) {
                char why[120];
                if (memcmp(pd->hdr, "GET ", 4) == 0 || memcmp(pd->hdr, "POST", 4) == 0 ||
                    memcmp(pd->hdr, "HEAD", 4) == 0)
                    snprintf(why, sizeof why, "not a zgc lifeline (an HTTP request)");
                else
                    snprintf(why, sizeof why, "not a zgc lifeline (a handshake frame of %u bytes)",
                             (unsigned)len);
                drop_pending(n, i, why);
                return;
            }
            pd->need = len, pd->got = 0;
            continue;
        }
        pd->got += (size_t)k;
        if (pd->got < pd->need) continue;
        pd->hdr_got = 0;
        if (pending_payload(n, i, now) < 0) return;
    }
}

/* Drops pending connection i to make room: the oldest one that has not
 * sent a well-formed HELLO, else the oldest. */
static void evict(zri_net *n)
{
    int victim = -1;
    for (int pass = 0; pass < 2 && victim < 0; pass++)
        for (int i = 0; i < n->npend; i++) {
            if (pass == 0 && n->pend[i]->state != PEND_HELLO) continue;
            if (victim < 0 || n->pend[i]->since < n->pend[victim]->since) victim = i;
        }
    char why[160];
    snprintf(why, sizeof why,
             "%d connections were waiting for their handshake; the oldest gave way to a new one",
             PENDING_MAX);
    drop_pending(n, victim, why);
}

static void accept_all(zri_net *n, double now)
{
    for (;;) {
        int fd = accept(n->listen_fd, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR) continue;
            return; /* EAGAIN, or a transient error */
        }
        sock_opts(fd, !n->listen.is_unix);
        set_nonblock(fd, 1);
        char err[300];
        pending *pd = zri_xcalloc(1, sizeof *pd);
        if (zri_hs_init(&pd->hs, n->p, n->self, n->secret, n->hb_ms, n->id, err, sizeof err) < 0) {
            note(n, "dropped a connection to %s: %s", n->listen_text, err);
            close(fd);
            free(pd);
            continue;
        }
        if (n->npend == PENDING_MAX) evict(n);
        pd->fd = fd;
        pd->since = now;
        pd->state = PEND_HELLO;
        n->pend[n->npend++] = pd;
    }
}

/* ---- the reader thread ------------------------------------------------------- */

static void *reader_main(void *arg)
{
    zri_net *n = arg;
    int nl = n->p->nlifelines;
    struct pollfd *pf = zri_xcalloc((size_t)nl + PENDING_MAX + 2, sizeof *pf);
    int *who = zri_xcalloc((size_t)nl + PENDING_MAX + 2, sizeof *who); /* peer, or -1-pending */
    uint8_t *seen = zri_xcalloc((size_t)nl, 1);
    int running = 0;
    for (;;) {
        pthread_mutex_lock(&n->mu);
        int phase = n->phase;
        pthread_mutex_unlock(&n->mu);
        if (phase == PHASE_CLOSING) break;
        double now = now_s();
        if (phase == PHASE_RUNNING && !running && n->peer_wait > 0) {
            running = 1; /* keep mode: a lost peer's new process connects here */
        } else if (phase == PHASE_RUNNING && !running) { /* every peer is in */
            running = 1;
            close(n->listen_fd);
            n->listen_fd = -1;
            while (n->npend) {
                pending *pd = n->pend[n->npend - 1];
                drop_pending(n, n->npend - 1,
                             pd->hs.refusal[0] ? pd->hs.refusal
                                               : "the run began before it completed the handshake");
            }
            unlink_ours(n);
        }

        /* the peers' connections are this thread's to read unless a worker
         * of the run reads them (transport_wait) or did so lately */
        int owner = pthread_mutex_trylock(&n->rd_mu) == 0;
        int direct = __atomic_load_n(&n->polling, __ATOMIC_ACQUIRE) ||
                     mono_ns() - __atomic_load_n(&n->poll_end, __ATOMIC_ACQUIRE) <
                         (int64_t)(HANDBACK_S * 1e9);
        int watch = owner && !direct;

        /* what is due: heartbeats, silent peers, expired handshakes, lost
         * peers past their limit, output left over */
        double due = beat_all(n, now);
        if (running && n->peer_wait > 0 && owner) {
            double at = keep_links(n, now);
            if (at > 0 && (due == 0 || at < due)) due = at;
            now = now_s();
        }
        for (int l = 0; l < nl && n->peer_wait > 0 && owner; l++) {
            peer *pe = &n->peers[l];
            if (pe->away_until && now >= pe->away_until) {
                char msg[900];
                snprintf(msg, sizeof msg, "%s; it did not come back within %g s (--peer-wait)",
                         pe->away_why, n->peer_wait);
                pe->away = 0;
                pe->away_until = 0; /* reported once; no more deadline to wake for */
                pe->done = 1;
                __atomic_store_n(&pe->gone, 1, __ATOMIC_RELEASE);
                if (n->cb.fail) n->cb.fail(n->cb.user, msg);
                continue;
            }
            if (pe->away_until && (due == 0 || pe->away_until < due)) due = pe->away_until;
            if (__atomic_load_n(&pe->opending, __ATOMIC_RELAXED)) {
                if (pthread_mutex_trylock(&pe->send_mu) == 0) {
                    if (pe->olen) flush_peer(n, l, 0, 0);
                    pthread_mutex_unlock(&pe->send_mu);
                }
                if (__atomic_load_n(&pe->opending, __ATOMIC_RELAXED) &&
                    (due == 0 || now + PENDING_OUT_POLL < due))
                    due = now + PENDING_OUT_POLL;
            }
        }
        for (int l = 0; l < nl && watch; l++) {
            peer *pe = &n->peers[l];
            if (pe->in_fd < 0 || pe->done || pe->in_limit <= 0) continue;
            double at = pe->last_rx + pe->in_limit;
            if (due == 0 || at < due) due = at;
        }
        /* left to the workers: look again soon, to take them back when
         * they stop polling */
        if (!watch && (due == 0 || due > now + HANDBACK_S)) due = now + HANDBACK_S;
        for (int i = n->npend - 1; i >= 0; i--) {
            if (now - n->pend[i]->since > PENDING_TIMEOUT_S) {
                char why[120];
                snprintf(why, sizeof why, "it did not complete the handshake within %g s",
                         PENDING_TIMEOUT_S);
                drop_pending(n, i, n->pend[i]->hs.refusal[0] ? n->pend[i]->hs.refusal : why);
                continue;
            }
            double at = n->pend[i]->since + PENDING_TIMEOUT_S;
            if (due == 0 || at < due) due = at;
        }

        /* the wake-up pipe, the listening socket and the pending
         * connections while setting up, and every adopted peer (read from
         * its adoption on: a peer that is running already must not find
         * this lifeline silent or stop it with a full buffer) */
        int k = 0;
        pf[k] = (struct pollfd){n->wake[0], POLLIN, 0};
        who[k++] = INT32_MIN;
        if (!running || n->peer_wait > 0) {
            pf[k] = (struct pollfd){n->listen_fd, POLLIN, 0};
            who[k++] = INT32_MAX;
            for (int i = 0; i < n->npend; i++) {
                pf[k] = (struct pollfd){n->pend[i]->fd, POLLIN, 0};
                who[k++] = -1 - i;
            }
        }
        for (int l = 0; l < nl && watch; l++) {
            if (n->peers[l].in_fd < 0 || n->peers[l].done) continue;
            pf[k] = (struct pollfd){n->peers[l].in_fd, POLLIN, 0};
            who[k++] = l;
        }
        if (owner) pthread_mutex_unlock(&n->rd_mu);
        int ms = due > 0 ? ms_left(due) : -1;
        if (poll(pf, (nfds_t)k, ms) < 0) {
            if (errno == EINTR) continue;
            sleep_s(0.01);
            continue;
        }
        if (pf[0].revents) {
            uint8_t buf[64];
            while (read(n->wake[0], buf, sizeof buf) > 0) {}
            continue; /* look at the phase again */
        }
        now = now_s();
        memset(seen, 0, (size_t)nl);
        /* a worker that began polling meanwhile reads the peers: this
         * thread leaves them (and their silence) to it.  (Workers poll
         * only once the run has begun, so no connection is pending then,
         * but for the one round before this thread sees the phase.) */
        if (pthread_mutex_trylock(&n->rd_mu) != 0) continue;
        /* from the end: the peers, then the pending connections (so that
         * removals do not shift the ones still to visit), then new ones */
        for (int i = k - 1; i >= 1; i--) {
            if (!pf[i].revents) continue;
            if (who[i] == INT32_MAX) {
                accept_all(n, now);
            } else if (who[i] < 0) {
                read_pending(n, -1 - who[i], now);
            } else if (watch && n->peers[who[i]].in_fd == pf[i].fd && !n->peers[who[i]].done) {
                seen[who[i]] = 1;
                read_peer(n, who[i], &now, 0);
            }
        }
        /* silence: only peers with nothing to read in this round (what
         * waited while this thread was busy counts as heard) */
        for (int l = 0; l < nl && watch; l++)
            if (!seen[l] && n->peers[l].in_fd >= 0 && !n->peers[l].done) check_silence(n, l, now);
        pthread_mutex_unlock(&n->rd_mu);
    }
    free(pf);
    free(who);
    free(seen);
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

/* Reads exactly len bytes from fd before deadline.  0; 1 when the peer
 * closed the connection (worth another try); -1 with a message in err
 * (time is up, or the reader thread found a setup error). */
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
        ssize_t k = recv(fd, d, len, MSG_DONTWAIT);
        if (k < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
        if (k <= 0) return 1;
        d += k;
        len -= (size_t)k;
    }
    return 0;
}

/* One handshake frame: its payload in d (ZRI_HELLO_MAX bytes), as
 * read_exact. */
static int read_hs_frame(zri_net *n, int fd, uint8_t *d, size_t *len, const char *addr,
                         double deadline, char *err, size_t errlen)
{
    uint8_t hdr[4];
    int rc = read_exact(n, fd, hdr, 4, addr, deadline, err, errlen);
    if (rc) return rc;
    uint32_t k = be32(hdr);
    if (k == 0 || k > ZRI_HELLO_MAX) {
        zri_err(err, errlen, "the peer at %s is not a zgc lifeline (a handshake frame of %u bytes)",
                addr, (unsigned)k);
        return -1;
    }
    *len = k;
    return read_exact(n, fd, d, k, addr, deadline, err, errlen);
}

/* The connecting side's handshake with lifeline l on fd: 0 (the
 * connection is l's), 1 (closed by the other side: try again), -1 (err). */
static int handshake(zri_net *n, int l, int fd, double deadline, char *err, size_t errlen)
{
    peer *pe = &n->peers[l];
    zri_hs *hs = zri_xmalloc(sizeof *hs);
    uint8_t *out = zri_xmalloc(ZRI_HELLO_MAX + 4), *in = zri_xmalloc(ZRI_HELLO_MAX);
    size_t k, len = 0;
    int rc = -1;
    if (zri_hs_init(hs, n->p, n->self, n->secret, n->hb_ms, n->id, err, errlen) < 0) goto out;
    k = zri_hs_hello(hs, l, out);
    if (write_all(fd, out, k, deadline) < 0) goto lost;
    if ((rc = read_hs_frame(n, fd, in, &len, pe->addr, deadline, err, errlen)) != 0) goto out;
    rc = zri_hs_answer(hs, in, len, pe->addr, out, &k, err, errlen);
    if (rc > 0) { /* refused: the proof tells the other side, then fail */
        write_all(fd, out, k, deadline);
        rc = -1;
    }
    if (rc < 0) goto out;
    rc = -1;
    if (write_all(fd, out, k, deadline) < 0) goto lost;
    if ((rc = read_hs_frame(n, fd, in, &len, pe->addr, deadline, err, errlen)) != 0) goto out;
    rc = -1;
    if (zri_hs_accepted(hs, in, len, pe->addr, err, errlen) < 0) goto out;
    zri_mac *mac = zri_mac_new(hs->key, err, errlen);
    if (!mac) goto out;
    pthread_mutex_lock(&pe->send_mu);
    if (pe->out_fd >= 0) close(pe->out_fd); /* keep mode: a connection of before */
    zri_mac_free(pe->out_mac);
    pe->out_fd = fd;
    pe->out_mac = mac;
    pe->out_seq = 0;
    pe->olen = 0;
    pe->open_n = 0;
    pe->out_broken = 0;
    pe->link = LINK_DOWN; /* keep mode: start_link follows */
    pe->out_limit = pair_limit(n, hs->peer_heartbeat_ms);
    pthread_mutex_unlock(&pe->send_mu);
    rc = 0;
    goto out;
lost:
    if (errno == EPIPE || errno == ECONNRESET) {
        rc = 1;
    } else if (!setup_failed(n, err, errlen)) {
        zri_err(err, errlen, "lost the connection to lifeline %s at %s during the handshake: %s",
                n->p->lifelines[l], pe->addr, strerror(errno));
    }
out:
    free(hs);
    free(out);
    free(in);
    return rc;
}

/* once: a single attempt (keep mode's reconnections: a refused one is
 * tried again later, without holding up the reader thread). */
static int connect_peer(zri_net *n, int l, double deadline, double timeout, int once, char *err,
                        size_t errlen)
{
    peer *pe = &n->peers[l];
    const char *name = n->p->lifelines[l];
    zaddr a;
    if (parse_addr(pe->addr, 0, &a, err, errlen) < 0) return -1;

    struct addrinfo *res = NULL;
    struct sockaddr_un sun;
    if (a.is_unix) {
        memset(&sun, 0, sizeof sun);
        sun.sun_family = AF_UNIX;
        memcpy(sun.sun_path, a.path, strlen(a.path) + 1);
    } else if (resolve(&a, 0, &res, pe->addr, err, errlen) < 0) {
        return -1;
    }

    char why[200] = "";
    double pause = 0.005;
    int rc = -1;
    for (;;) {
        if (setup_failed(n, err, errlen)) break;
        if (n->peer_ended && n->peer_ended(n->peer_ended_u, l)) {
            rc = 1; /* it ended meanwhile (a resume): not to be connected */
            break;
        }
        int fd = -1, last = 0;
        if (a.is_unix) {
            if (try_connect((struct sockaddr *)&sun, sizeof sun, AF_UNIX, deadline, &fd) < 0)
                last = errno, fd = -1;
        } else {
            for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
                if (try_connect(ai->ai_addr, ai->ai_addrlen, ai->ai_family, deadline, &fd) == 0)
                    break;
                last = errno;
                fd = -1;
            }
        }
        if (fd >= 0) {
            int hr = handshake(n, l, fd, deadline, err, errlen);
            if (hr == 0) {
                rc = 0;
                break;
            }
            close(fd);
            if (hr < 0) break;
            snprintf(why, sizeof why, "it closed the connection during the handshake");
        } else {
            snprintf(why, sizeof why, "%s", strerror(last));
        }
        if (now_s() >= deadline || once) {
            zri_err(err, errlen, "could not connect to lifeline %s at %s within %g s: %s", name,
                    pe->addr, timeout, why);
            break;
        }
        double left = deadline - now_s();
        sleep_s(pause < left ? pause : left);
        if (pause < 0.1) pause *= 2;
    }
    if (res) freeaddrinfo(res);
    return rc;
}

/* ---- open, send, close ------------------------------------------------------ */

static void net_free(zri_net *n)
{
    if (n->thread_started) {
        pthread_mutex_lock(&n->mu);
        __atomic_store_n(&n->phase, PHASE_CLOSING, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&n->mu);
        wake_thread(n);
        pthread_join(n->thread, NULL);
    }
    if (n->listen_fd >= 0) close(n->listen_fd);
    unlink_ours(n);
    while (n->npend) drop_pending(n, n->npend - 1, NULL);
    if (n->peers) {
        for (int l = 0; l < n->p->nlifelines; l++) {
            peer *pe = &n->peers[l];
            if (pe->out_fd >= 0) close(pe->out_fd);
            if (pe->in_fd >= 0) close(pe->in_fd);
            zri_mac_free(pe->out_mac);
            zri_mac_free(pe->in_mac);
            rx_free(&pe->in);
            free(pe->obuf);
            if (pe->khead)
                for (int32_t ch = 0; ch < n->p->nchans; ch++) kept_free_upto(pe, ch, INT64_MAX);
            free(pe->khead);
            free(pe->ktail);
            free(pe->acked);
            free(pe->sync);
            pthread_mutex_destroy(&pe->send_mu);
        }
    }
    if (n->wake[0] >= 0) close(n->wake[0]);
    if (n->wake[1] >= 0) close(n->wake[1]);
    pthread_mutex_destroy(&n->mu);
    pthread_mutex_destroy(&n->rd_mu);
    pthread_cond_destroy(&n->cv);
    free(n->peers);
    free(n->chunk);
    free(n->listen_text);
    free(n);
}

zri_net *zri_net_open(const zgrt_program *p, int self, const zri_net_config *c, zri_heap *h,
                      const zri_net_callbacks *cb, char *err, size_t errlen)
{
    if (err && errlen) err[0] = 0;
    if (self < 0 || self >= p->nlifelines) {
        zri_err(err, errlen, "lifeline index %d out of range", self);
        return NULL;
    }
    if (!c->secret || c->secret->len < ZRI_SECRET_MIN) {
        zri_err(err, errlen, "no secret for the connections between the lifelines");
        return NULL;
    }
    if (!(c->heartbeat_s >= 0 && c->heartbeat_s <= 1e6)) {
        zri_err(err, errlen, "heartbeat limit %g s out of range", c->heartbeat_s);
        return NULL;
    }
    if (!(c->peer_wait_s >= 0 && c->peer_wait_s <= 1e7)) {
        zri_err(err, errlen, "peer wait %g s out of range", c->peer_wait_s);
        return NULL;
    }
    zaddr la;
    if (parse_addr(c->listen, 1, &la, err, errlen) < 0) return NULL;
    for (int l = 0; l < p->nlifelines; l++) {
        if (l == self || (c->ended && c->ended[l])) continue;
        zaddr pa;
        if (!c->peer_addrs || !c->peer_addrs[l]) {
            zri_err(err, errlen, "no address for lifeline %s", p->lifelines[l]);
            return NULL;
        }
        if (parse_addr(c->peer_addrs[l], 0, &pa, err, errlen) < 0) return NULL;
    }
    double timeout = c->timeout_s > 0 ? c->timeout_s : DEFAULT_TIMEOUT;
    double deadline = now_s() + timeout;

    zri_net *n = zri_xcalloc(1, sizeof *n);
    n->p = p;
    n->self = self;
    n->h = h;
    if (cb) n->cb = *cb;
    n->secret = c->secret;
    zri_program_id(p, n->id);
    n->hb_ms = (uint32_t)llround(c->heartbeat_s * 1000);
    if (c->heartbeat_s > 0 && n->hb_ms == 0) n->hb_ms = 1;
    n->listen = la;
    n->listen_fd = -1;
    n->wake[0] = n->wake[1] = -1;
    pthread_mutex_init(&n->mu, NULL);
    pthread_mutex_init(&n->rd_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&n->cv, &ca);
    pthread_condattr_destroy(&ca);
    n->peer_wait = c->peer_wait_s;
    n->peer_ended = c->peer_ended;
    n->peer_ended_u = c->peer_ended_u;
    n->peers = zri_xcalloc((size_t)p->nlifelines, sizeof *n->peers);
    int nended = 0;
    /* the lifelines found ended here (not by a BYE, which the transport's
     * thread reports itself): told to the run when the transport is open */
    uint8_t *told_here = zri_xcalloc((size_t)p->nlifelines, 1);
    for (int l = 0; l < p->nlifelines; l++) {
        peer *pe = &n->peers[l];
        pe->addr = l == self ? c->listen : c->peer_addrs[l];
        pe->out_fd = pe->in_fd = -1;
        pe->nsync = -1;
        pthread_mutex_init(&pe->send_mu, NULL);
        if (l != self && c->ended && c->ended[l]) {
            /* a resume: that lifeline's process has ended (nothing of it
             * is missing here: it waited for its messages to be
             * acknowledged before it ended) */
            pe->done = pe->ended = 1;
            told_here[l] = 1;
            nended++;
            continue;
        }
        if (n->peer_wait > 0 && l != self) {
            size_t nc = (size_t)(p->nchans > 0 ? p->nchans : 1);
            pe->khead = zri_xcalloc(nc, sizeof *pe->khead);
            pe->ktail = zri_xcalloc(nc, sizeof *pe->ktail);
            pe->acked = zri_xcalloc(nc, sizeof *pe->acked);
            /* what this process holds now (restored from its journal) is
             * committed */
            for (int32_t ch = 0; ch < p->nchans; ch++)
                pe->acked[ch] = cb && cb->received ? cb->received(cb->user, l, ch) : 0;
        }
    }
    n->listen_text = zri_xstrndup(c->listen, strlen(c->listen));
    n->chunk = zri_xmalloc(READ_CHUNK);
    if (pipe(n->wake) < 0) {
        zri_err(err, errlen, "pipe: %s", strerror(errno));
        n->wake[0] = n->wake[1] = -1;
        free(told_here);
        net_free(n);
        return NULL;
    }
    set_cloexec(n->wake[0]);
    set_cloexec(n->wake[1]);
    set_nonblock(n->wake[0], 1);
    set_nonblock(n->wake[1], 1);

    if ((la.is_unix ? listen_unix(n, err, errlen) : listen_tcp(n, err, errlen)) < 0) {
        free(told_here);
        net_free(n);
        return NULL;
    }
    set_nonblock(n->listen_fd, 1);
    if (pthread_create(&n->thread, NULL, reader_main, n)) {
        zri_err(err, errlen, "cannot start the network thread");
        free(told_here);
        net_free(n);
        return NULL;
    }
    n->thread_started = 1;

    /* peers start in any order: each connect retries until the deadline */
    for (int l = 0; l < p->nlifelines; l++) {
        if (l == self || __atomic_load_n(&n->peers[l].ended, __ATOMIC_ACQUIRE)) continue;
        int rc = connect_peer(n, l, deadline, timeout, 0, err, errlen);
        if (rc < 0) {
            free(told_here);
            net_free(n);
            return NULL;
        }
        if (rc > 0) {
            pthread_mutex_lock(&n->mu);
            n->peers[l].done = 1; /* the reader leaves it alone from now on */
            __atomic_store_n(&n->peers[l].ended, 1, __ATOMIC_RELEASE);
            told_here[l] = 1;
            nended++;
            pthread_mutex_unlock(&n->mu);
            continue;
        }
        if (n->peers[l].khead) start_link(n, l);
    }

    /* wait until every peer has connected here */
    int want = p->nlifelines - 1 - nended;
    pthread_mutex_lock(&n->mu);
    while (n->nin < want && !n->setup_err[0]) {
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
    int ok = n->nin == want && !n->setup_err[0];
    if (ok) {
        __atomic_store_n(&n->phase, PHASE_RUNNING, __ATOMIC_RELEASE);
    } else if (n->setup_err[0]) {
        zri_err(err, errlen, "%s", n->setup_err);
    } else {
        char missing[400] = "";
        size_t used = 0;
        for (int l = 0; l < p->nlifelines && used < sizeof missing - 1; l++) {
            if (l == self || n->peers[l].in_fd >= 0 ||
                __atomic_load_n(&n->peers[l].ended, __ATOMIC_ACQUIRE))
                continue;
            int w = snprintf(missing + used, sizeof missing - used, "%s%s", used ? ", " : "",
                             p->lifelines[l]);
            if (w > 0) used += (size_t)w;
        }
        if (used >= sizeof missing) used = sizeof missing - 1;
        zri_err(err, errlen, "timed out after %g s waiting for lifeline%s %s to connect to %s",
                timeout, strchr(missing, ',') ? "s" : "", missing, c->listen);
    }
    pthread_mutex_unlock(&n->mu);
    if (!ok) {
        free(told_here);
        net_free(n);
        return NULL;
    }
    wake_thread(n);
    for (int l = 0; l < p->nlifelines; l++)
        if (told_here[l] && n->cb.ended) n->cb.ended(n->cb.user, l);
    free(told_here);
    return n;
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
    uint8_t *buf, room[512]; /* most frames fit: no allocation */
    size_t len;
    if (zri_frame_encode_in(p, m, room, sizeof room, &buf, &len) < 0) {
        zri_err(err, errlen,
                "cannot send a message to lifeline %s: a value cannot be encoded (invalid value, "
                "or the message exceeds %u bytes)",
                name, (unsigned)ZRI_FRAME_MAX);
        return -1;
    }
    int rc = 0;
    pthread_mutex_lock(&pe->send_mu);
    if (pe->khead && !pe->out_broken) {
        /* keep mode: kept until acknowledged; written once the link is up */
        kept *k = zri_xmalloc(sizeof *k);
        if (buf == room) {
            buf = zri_xmalloc(len);
            memcpy(buf, room, len);
        }
        *k = (kept){NULL, m->seq, buf, len};
        if (pe->ktail[m->chan])
            pe->ktail[m->chan]->next = k;
        else
            pe->khead[m->chan] = k;
        pe->ktail[m->chan] = k;
        pe->nkept++;
        buf = NULL;
        if (pe->link != LINK_UP) {
            pthread_mutex_unlock(&pe->send_mu);
            return 0;
        }
        out_append(n, m->to, k->frame + 4, k->len - 4);
    } else if (pe->out_broken) {
        rc = -1;
    } else {
        out_append(n, m->to, buf + 4, len - 4);
    }
    if (rc == 0 && pe->olen >= OUT_FLUSH)
        rc = flush_peer(n, m->to, 1, 0);
    else if (rc == 0)
        __atomic_store_n(&n->dirty, 1, __ATOMIC_RELEASE);
    if (rc < 0) zri_err(err, errlen, "%s", pe->out_err);
    pthread_mutex_unlock(&pe->send_mu);
    if (buf != room) free(buf);
    return rc;
}

void zri_net_ack(zri_net *n, int32_t from, int32_t chan, int64_t committed)
{
    const zgrt_program *p = n->p;
    if (from < 0 || from >= p->nlifelines || from == n->self || chan < 0 || chan >= p->nchans)
        return;
    peer *pe = &n->peers[from];
    if (!pe->khead) return;
    pthread_mutex_lock(&pe->send_mu);
    if (committed > pe->acked[chan]) {
        pe->acked[chan] = committed;
        /* on a link that is down, the next SYNC carries it */
        if (pe->link != LINK_DOWN && pe->out_fd >= 0 && !pe->out_broken) {
            zri_count c = {chan, committed, committed};
            uint8_t *buf;
            size_t len;
            if (zri_counts_encode(p, ZRI_KIND_ACK, n->self, from, &c, 1, &buf, &len) == 0) {
                out_append(n, from, buf + 4, len - 4);
                flush_peer(n, from, 0, 0);
                free(buf);
            }
        }
    }
    pthread_mutex_unlock(&pe->send_mu);
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
        if (pe->olen && flush_peer(n, l, 1, 0) < 0 && rc == 0) {
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

/* A worker of the run with nothing to do reads the peers' connections
 * itself (rt.h: zri_transport.wait): one poll of the connections and
 * wake_fd, then what arrived is delivered on this thread, and silent
 * peers are found as the reader thread finds them.  The run's only
 * fiber (alone) waits without wake_fd, for at most ZRI_ALONE_MS: with
 * one connection to read, in a recv on it (read_peer's wait); with
 * more, in a poll of them. */
static void transport_wait(void *impl, int wake_fd, int timeout_ms, int alone)
{
    zri_net *n = impl;
    int nl = n->p->nlifelines;
    struct pollfd pf[65];
    int who[65];
    int phase = __atomic_load_n(&n->phase, __ATOMIC_ACQUIRE); /* written under mu */
    if (phase != PHASE_RUNNING || nl > 64) {
        /* not (or no longer) running, or more peers than this poll
         * takes: the reader thread reads; this waits for local work */
        struct pollfd w = {wake_fd, POLLIN, 0};
        poll(&w, 1, timeout_ms);
        return;
    }
    pthread_mutex_lock(&n->rd_mu);
    if (__atomic_exchange_n(&n->poked, 0, __ATOMIC_ACQ_REL)) {
        /* woken before this wait began (a message the reader thread
         * delivered while this one waited for rd_mu, say): not waiting */
        pthread_mutex_unlock(&n->rd_mu);
        return;
    }
    __atomic_store_n(&n->polling, 1, __ATOMIC_RELEASE);
    double now, due = 0;
    int k = 0;
    pf[k] = (struct pollfd){alone ? -1 : wake_fd, POLLIN, 0}; /* poll skips -1 */
    who[k++] = -1;
    for (int l = 0; l < nl; l++) {
        peer *pe = &n->peers[l];
        if (pe->in_fd < 0 || pe->done) continue;
        pf[k] = (struct pollfd){pe->in_fd, POLLIN, 0};
        who[k++] = l;
        if (pe->in_limit > 0 && (due == 0 || pe->last_rx + pe->in_limit < due))
            due = pe->last_rx + pe->in_limit;
    }
    if (alone && k == 2 && n->peers[who[1]].in_waits &&
        (timeout_ms < 0 || timeout_ms >= ZRI_ALONE_MS) &&
        (due == 0 || due - (double)__atomic_load_n(&n->poll_end, __ATOMIC_RELAXED) / 1e9 >
                         ZRI_ALONE_MS / 1000.0)) {
        /* the one connection to wait on: a recv that waits (for at most
         * ZRI_ALONE_MS, its SO_RCVTIMEO) instead of a poll and a recv —
         * one system call and one wait queue less per message.  Whether
         * its silence limit comes sooner is judged from the end of the
         * last wait, without reading the clock: a limit is then seen at
         * most ZRI_ALONE_MS late (limits are seconds). */
        int l = who[1];
        now = 0;
        if (!read_peer(n, l, &now, 1) && !n->peers[l].done && n->peers[l].in_fd >= 0)
            check_silence(n, l, now);
        __atomic_store_n(&n->poll_end, (int64_t)(now * 1e9), __ATOMIC_RELEASE);
        __atomic_store_n(&n->polling, 0, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&n->rd_mu);
        return;
    }
    int ms = due > 0 ? ms_left_coarse(due) : -1;
    if (timeout_ms >= 0 && (ms < 0 || timeout_ms < ms)) ms = timeout_ms;
    if (alone && (ms < 0 || ms > ZRI_ALONE_MS)) ms = ZRI_ALONE_MS;
    int rc = poll(pf, (nfds_t)k, ms);
    now = coarse_s();
    uint8_t seen[64] = {0};
    for (int i = 1; i < k && rc > 0; i++) {
        if (!pf[i].revents) continue;
        seen[who[i]] = 1;
        read_peer(n, who[i], &now, 0);
    }
    for (int i = 1; i < k; i++)
        if (!seen[who[i]] && !n->peers[who[i]].done && n->peers[who[i]].in_fd >= 0)
            check_silence(n, who[i], now);
    __atomic_store_n(&n->poll_end, (int64_t)(now * 1e9), __ATOMIC_RELEASE);
    __atomic_store_n(&n->polling, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&n->rd_mu);
}

/* A lone wait leaves wake_fd out: a wake that comes before it reads
 * (transport_wait takes rd_mu, which a reader delivering holds) ends it
 * at once; one that comes while it reads is seen at its end, within
 * ZRI_ALONE_MS (no other thread delivers meanwhile). */
static void transport_wake(void *impl)
{
    zri_net *n = impl;
    __atomic_store_n(&n->poked, 1, __ATOMIC_RELEASE);
}

zri_transport zri_net_transport(zri_net *n)
{
    /* keep mode: lost peers come back through the reader thread, which
     * alone reads the connections then */
    zri_transport t = {.send = transport_send,
                       .flush = transport_flush,
                       .wait = n->peer_wait > 0 ? NULL : transport_wait,
                       .wake = n->peer_wait > 0 ? NULL : transport_wake,
                       .impl = n};
    return t;
}

static void net_close(zri_net *n, int bye_ok);

void zri_net_close(zri_net *n) { net_close(n, 1); }

/* After a failed run: no BYE, so the peers see a connection that ended
 * without it, report the failure and stop too. */
void zri_net_abort(zri_net *n) { net_close(n, 0); }

/* Keep mode, before a BYE: 1 when every peer that has not ended is
 * connected and has acknowledged every message (or has failed). */
static int all_acked(zri_net *n)
{
    int ok = 1;
    for (int l = 0; l < n->p->nlifelines && ok; l++) {
        peer *pe = &n->peers[l];
        if (l == n->self || !pe->khead || __atomic_load_n(&pe->ended, __ATOMIC_ACQUIRE) ||
            __atomic_load_n(&pe->gone, __ATOMIC_ACQUIRE))
            continue;
        pthread_mutex_lock(&pe->send_mu);
        ok = pe->link == LINK_UP && pe->nkept == 0;
        pthread_mutex_unlock(&pe->send_mu);
    }
    return ok;
}

int zri_net_drain(zri_net *n)
{
    if (!n || n->peer_wait <= 0) return 0;
    /* keep mode: a lifeline that ends leaves nothing only it could send
     * again (socket.c: Lost peers) */
    double until = now_s() + n->peer_wait;
    while (!all_acked(n)) {
        if (now_s() >= until) return -1;
        char err[320];
        zri_net_flush(n, err, sizeof err);
        sleep_s(0.005);
    }
    return 0;
}

static void net_close(zri_net *n, int bye_ok)
{
    if (!n) return;
    const zgrt_program *p = n->p;
    /* stop reading first: the end of a peer's connection is no failure now */
    pthread_mutex_lock(&n->mu);
    __atomic_store_n(&n->phase, PHASE_CLOSING, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&n->mu);
    wake_thread(n);
    pthread_join(n->thread, NULL);
    n->thread_started = 0;

    double deadline = now_s() + BYE_TIMEOUT;
    for (int l = 0; l < p->nlifelines; l++) {
        peer *pe = &n->peers[l];
        if (pe->out_fd < 0) continue;
        pthread_mutex_lock(&pe->send_mu);
        if (bye_ok && !pe->out_broken) {
            zri_msg bye;
            memset(&bye, 0, sizeof bye);
            bye.kind = ZRI_MSG_BYE;
            bye.from = n->self;
            bye.to = l;
            uint8_t *buf;
            size_t len;
            if (zri_frame_encode(p, &bye, &buf, &len) == 0) {
                out_append(n, l, buf + 4, len - 4);
                free(buf);
            }
            flush_peer(n, l, 1, deadline > now_s() ? deadline : now_s() + 0.01);
        }
        shutdown(pe->out_fd, SHUT_WR);
        close(pe->out_fd);
        pe->out_fd = -1;
        pthread_mutex_unlock(&pe->send_mu);
    }
    net_free(n);
}
