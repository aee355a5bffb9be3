/* fakepeer — a scripted hostile peer for per-lifeline executables, speaking
 * the transport's wire protocol (wire.c).  The tests in run_hostile.sh
 * put it next to real executables built by zgc.
 *
 *   fakepeer relay LISTEN TARGET [--kind user|ctl|any] [--drop N]
 *                  [--dup N] [--flip N] [--stall N]
 *       Listens on LISTEN and relays every connection to TARGET (both
 *       unix:PATH), frame by frame, without the secret: the handshake
 *       untouched, then the frames of the connecting side counted (those
 *       of the given kind; default any, heartbeats included) and the N-th
 *       dropped, sent twice, changed (its last payload byte's lowest bit:
 *       a control frame's decision when it carries no monitor metadata) or
 *       the N-th and all after it held back (stall: the connections stay
 *       open, the bytes are read and thrown away).
 *
 *   fakepeer member NAME LISTEN PEER SECRET_FILE SCRIPT
 *       Plays lifeline NAME of a two-lifeline run: listens on LISTEN,
 *       where the real lifeline connects to it, learns the program from
 *       that lifeline's HELLO, completes the handshake with the secret,
 *       connects back to PEER and then follows SCRIPT:
 *         bye      says goodbye at once, without the messages it owes
 *         prefix   sends the length of a 64 MB frame, then nothing
 *         silent   sends nothing, heartbeats neither
 *       It reads and drops what the real lifeline sends and keeps its
 *       connections open until it is killed or the other side closes.
 *       With another secret than the run's, or SCRIPT forge (a HELLO with
 *       another program identity), the handshake fails; it says so on
 *       stderr and exits 3.
 *
 *   fakepeer http ADDR          an HTTP request (unix:PATH or
 *                               tcp:HOST:PORT); exits 0 when the other
 *                               side hangs up on it within 10 s
 *   fakepeer idle ADDR N SECS   opens N connections and holds them, idle,
 *                               for SECS seconds
 *
 * Exit status: 0, 1 on a failed step, 2 on bad usage, 3 when a handshake
 * was refused. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "wire.h"

static int usage(void)
{
    fputs("usage: fakepeer relay LISTEN TARGET [--kind user|ctl|any] [--drop N] [--dup N]\n"
          "                      [--flip N] [--stall N]\n"
          "       fakepeer member NAME LISTEN PEER SECRET_FILE bye|prefix|silent|forge\n"
          "       fakepeer http ADDR\n"
          "       fakepeer idle ADDR N SECONDS\n",
          stderr);
    return 2;
}

static void die(const char *what)
{
    fprintf(stderr, "fakepeer: %s: %s\n", what, strerror(errno));
    exit(1);
}

/* ---- addresses ---- */

static int connect_to(const char *addr)
{
    if (!strncmp(addr, "unix:", 5)) {
        struct sockaddr_un sa;
        memset(&sa, 0, sizeof sa);
        sa.sun_family = AF_UNIX;
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", addr + 5);
        for (int tries = 0; tries < 500; tries++) { /* up to 5 s while it starts */
            int fd = socket(AF_UNIX, SOCK_STREAM, 0);
            if (fd < 0) die("socket");
            if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) return fd;
            close(fd);
            usleep(10000);
        }
        die(addr);
    }
    if (!strncmp(addr, "tcp:", 4)) {
        char host[256];
        snprintf(host, sizeof host, "%s", addr + 4);
        char *colon = strrchr(host, ':');
        if (!colon) exit(usage());
        *colon = 0;
        struct addrinfo hints, *res;
        memset(&hints, 0, sizeof hints);
        hints.ai_socktype = SOCK_STREAM;
        if (getaddrinfo(host, colon + 1, &hints, &res)) die(addr);
        for (int tries = 0; tries < 500; tries++) {
            int fd = socket(res->ai_family, SOCK_STREAM, 0);
            if (fd < 0) die("socket");
            if (connect(fd, res->ai_addr, res->ai_addrlen) == 0) {
                freeaddrinfo(res);
                return fd;
            }
            close(fd);
            usleep(10000);
        }
        die(addr);
    }
    exit(usage());
}

static int listen_on(const char *addr)
{
    if (strncmp(addr, "unix:", 5)) exit(usage());
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", addr + 5);
    unlink(sa.sun_path);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 16) < 0) die(addr);
    return fd;
}

/* ---- relay ---- */

typedef struct script {
    int kind; /* -1 any */
    long drop, dup, flip, stall;
} script;

/* One frame (length and rest) from fd into buf; its size, or 0 at the end. */
static size_t read_whole(int fd, uint8_t **buf, size_t *cap)
{
    uint8_t h[4];
    if (tw_read(fd, h, 4, 1e9) != 0) return 0;
    size_t len = (size_t)h[0] << 24 | (size_t)h[1] << 16 | (size_t)h[2] << 8 | h[3];
    if (len > (64u << 20) + 64) return 0;
    if (4 + len > *cap) {
        *cap = 4 + len;
        *buf = realloc(*buf, *cap);
        if (!*buf) die("realloc");
    }
    memcpy(*buf, h, 4);
    if (len && tw_read(fd, *buf + 4, len, 1e9) != 0) return 0;
    return 4 + len;
}

static void relay_one(int c, const char *target, const script *sc)
{
    int s = connect_to(target);
    uint8_t *buf = NULL;
    size_t cap = 0, n;
    /* the handshake: HELLO ->, ANSWER <-, PROOF ->, ACCEPT <- */
    for (int i = 0; i < 4; i++) {
        int from = i % 2 ? s : c, to = i % 2 ? c : s;
        if (!(n = read_whole(from, &buf, &cap)) || tw_write(to, buf, n) < 0) _exit(0);
    }
    long count = 0;
    int stalled = 0;
    while ((n = read_whole(c, &buf, &cap))) {
        /* frames are counted; with --kind, the frames of that kind, also
         * those inside a batch (which the script's action then hits as a
         * whole, a flip in that frame's last byte) */
        long before = count;
        size_t flip_at = 0;
        if (sc->kind >= 0 && n >= 7 + TW_TAG && buf[6] == TW_BATCH) {
            size_t at = 7, end = n - TW_TAG;
            while (end - at >= 4) {
                size_t k = (size_t)buf[at] << 24 | (size_t)buf[at + 1] << 16 |
                           (size_t)buf[at + 2] << 8 | buf[at + 3];
                if (k < 3 || k > end - at - 4) break;
                if (buf[at + 4 + 2] == sc->kind && ++count == sc->flip) flip_at = at + 4 + k - 1;
                at += 4 + k;
            }
        } else if (sc->kind < 0 || (n >= 7 && buf[6] == sc->kind)) {
            if (++count == sc->flip && n > 4 + TW_TAG) flip_at = n - TW_TAG - 1;
        }
        int counted = count > before;
        if (counted && sc->stall && count >= sc->stall) stalled = 1;
        if (stalled) continue;
        if (counted && sc->drop > before && sc->drop <= count) continue;
        if (flip_at) buf[flip_at] ^= 1;
        if (tw_write(s, buf, n) < 0) break;
        if (counted && sc->dup > before && sc->dup <= count && tw_write(s, buf, n) < 0) break;
    }
    _exit(0);
}

static int relay(int argc, char **argv)
{
    if (argc < 2) return usage();
    script sc = {-1, 0, 0, 0, 0};
    for (int i = 2; i + 1 < argc; i += 2) {
        long v = strtol(argv[i + 1], NULL, 10);
        if (!strcmp(argv[i], "--kind"))
            sc.kind = !strcmp(argv[i + 1], "user")  ? TW_USER
                      : !strcmp(argv[i + 1], "ctl") ? TW_CTL
                                                    : -1;
        else if (!strcmp(argv[i], "--drop"))
            sc.drop = v;
        else if (!strcmp(argv[i], "--dup"))
            sc.dup = v;
        else if (!strcmp(argv[i], "--flip"))
            sc.flip = v;
        else if (!strcmp(argv[i], "--stall"))
            sc.stall = v;
        else
            return usage();
    }
    signal(SIGCHLD, SIG_IGN);
    int lfd = listen_on(argv[0]);
    for (;;) {
        int c = accept(lfd, NULL, NULL);
        if (c < 0) {
            if (errno == EINTR) continue;
            die("accept");
        }
        pid_t pid = fork();
        if (pid < 0) die("fork");
        if (pid == 0) {
            close(lfd);
            relay_one(c, argv[1], &sc);
        }
        close(c);
    }
}

/* ---- member ---- */

static int member(int argc, char **argv)
{
    if (argc != 5) return usage();
    const char *name = argv[0], *what = argv[4];
    tw_self me;
    memset(&me, 0, sizeof me);
    snprintf(me.name, sizeof me.name, "%s", name);
    FILE *f = fopen(argv[3], "rb");
    if (!f) die(argv[3]);
    me.secret_len = fread(me.secret, 1, sizeof me.secret, f);
    fclose(f);
    int lfd = listen_on(argv[1]);
    int in_fd = accept(lfd, NULL, NULL);
    if (in_fd < 0) die("accept");
    tw_conn in, out;
    char why[1200];
    if (tw_accept(&in, in_fd, &me, 10, why, sizeof why) < 0) {
        fprintf(stderr, "fakepeer: %s: the real lifeline's handshake failed: %s\n", name, why);
        return 3;
    }
    tw_learn(&me, &in.peer);
    me.index = in.peer.to;
    /* the real lifeline's heartbeat limit, so that it applies (announcing
     * 0 would turn silence detection off for the pair) */
    me.heartbeat_ms = (uint32_t)in.peer.heartbeat_ms;
    if (!strcmp(what, "forge")) me.id[0] ^= 0x80;
    int out_fd = connect_to(argv[2]);
    if (tw_connect(&out, out_fd, &me, in.peer.from, 10, why, sizeof why) < 0) {
        fprintf(stderr, "fakepeer: %s: connecting back failed: %s\n", name, why);
        return 3;
    }
    if (!strcmp(what, "bye")) {
        uint8_t bye[32];
        if (tw_send(&out, bye, tw_bye_payload(me.index, in.peer.from, bye)) < 0) return 1;
    } else if (!strcmp(what, "prefix")) {
        if (tw_write(out_fd, "\x04\0\0\0", 4) < 0) return 1;
    } else if (strcmp(what, "silent")) {
        return usage();
    }
    /* drain what the real lifeline sends until it goes */
    uint8_t buf[65536];
    for (;;) {
        ssize_t k = recv(in_fd, buf, sizeof buf, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
    }
    return 0;
}

/* ---- strangers ---- */

static int http(int argc, char **argv)
{
    if (argc != 1) return usage();
    int fd = connect_to(argv[0]);
    const char req[] = "GET / HTTP/1.1\r\nHost: localhost\r\nUser-Agent: fakepeer\r\n\r\n";
    if (tw_write(fd, req, sizeof req - 1) < 0) die("write");
    char c;
    int rc = tw_read(fd, &c, 1, 10);
    if (rc == 0) {
        fprintf(stderr, "fakepeer: the lifeline answered an HTTP request\n");
        return 1;
    }
    if (rc == -2) {
        fprintf(stderr, "fakepeer: the lifeline kept an HTTP request open for 10 s\n");
        return 1;
    }
    return 0;
}

static int idle(int argc, char **argv)
{
    if (argc != 3) return usage();
    int n = atoi(argv[1]);
    double secs = atof(argv[2]);
    for (int i = 0; i < n; i++) connect_to(argv[0]);
    struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {}
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) return usage();
    signal(SIGPIPE, SIG_IGN);
    const char *cmd = argv[1];
    if (!strcmp(cmd, "relay")) return relay(argc - 2, argv + 2);
    if (!strcmp(cmd, "member")) return member(argc - 2, argv + 2);
    if (!strcmp(cmd, "http")) return http(argc - 2, argv + 2);
    if (!strcmp(cmd, "idle")) return idle(argc - 2, argv + 2);
    return usage();
}
