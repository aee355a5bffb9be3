/* floor_socketpair.c — the hand-offs of pingpong.zg between two processes
 * over a Unix socketpair: A writes the decision and the counter (one write
 * of 16 bytes), B reads them, increments and writes the reply (8 bytes).
 *
 * --tag: every write also carries a 16-byte tag, the first bytes of
 * HMAC-SHA256(K, seq || len || payload) as the transport between lifeline
 * processes computes it (runtime/net/auth.c: libcrypto's SHA-256 from the
 * two states after the key's inner and outer pad blocks, made once; a key
 * per direction; seq the write's number, u64 big-endian, len u32
 * big-endian), and the reader checks it (a mismatch exits 1); the tags of
 * each direction's first three frames are also compared with libcrypto's
 * one-shot HMAC().  The floor with the transport's authentication and
 * nothing else of the runtime.
 *
 * Variants, to measure a part of the runtime's cost in isolation:
 * --wait read (the default: a blocking read), poll (poll on the socket
 * and an eventfd, as a poller that other threads can wake, then a
 * non-blocking recv), poll-socket (the same on the socket alone), epoll
 * (epoll_wait on both, registered once) or ppoll (ppoll on the socket
 * with a signal unblocked while it waits, a signal's wake instead of the
 * eventfd's); --touch BYTES: every iteration each process writes one byte
 * in every 64-byte line of a buffer of BYTES (memory touched between two
 * waits, which a switch on one core must bring back).
 *
 * --pair two (the default: a socketpair per direction, each used one way,
 * as the transport's two connections between two lifeline processes) or
 * one (a single socketpair both ways).  With one, each read also frees
 * room in the writer's send buffer, and the kernel then wakes the writer,
 * which is waiting to read on that very socket: a wake-up for nothing
 * per message (2 context switches an iteration with two pairs, about 3.4
 * with one, `perf stat -e context-switches`), so one pair is not the
 * floor.
 *
 * --rcvtimeo MS: the socket each process reads has a receive timeout of
 * MS milliseconds (SO_RCVTIMEO), as the connection a lone lifeline waits
 * on has (runtime/net/socket.c, ZRI_ALONE_MS: 50): every read that
 * blocks then sets a kernel timer and cancels it.  --thread: each
 * process also runs a second thread that wakes every 20 ms until the end
 * (as the transport's own thread looks at the connections while the
 * lifeline reads them), so that its file table is shared, as a
 * lifeline process's is.  With --tag, the two make the floor of what the
 * kernel sees of the lifeline processes, for bench/pingpong/ladder.
 *
 * --busy NS: a busy wait of NS nanoseconds before every write and after
 * every read (time between two waits, as the tag's, without the tag);
 * --pad BYTES: every write carries BYTES more bytes (at most 32), zeros,
 * unchecked (the tag's length, without the tag).  With them, whether
 * a tag's cost comes from its time, its bytes or its instructions.
 *
 * --split: the parent (A) runs on processor 0 and the child (B) on
 * processor 1, each pinned there after the fork (bench/pingpong/run
 * --split pins the two lifeline processes the same way): every hand-off
 * then crosses between two processors, whatever the kernel would choose.
 *
 * usage: floor_socketpair [--tag] [--wait HOW] [--touch BYTES] [--pair two|one]
 *                         [--rcvtimeo MS] [--thread] [--split] [--busy NS]
 *                         [--pad BYTES] ROUNDS
 *        prints nanoseconds per iteration */
#define _GNU_SOURCE
#define OPENSSL_SUPPRESS_DEPRECATED /* SHA256_*, as runtime/net/auth.c */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#define TAG 16

static int full(ssize_t (*io)(int, void *, size_t), int fd, void *buf, size_t n)
{
    char *p = buf;
    while (n > 0) {
        ssize_t r = io(fd, p, n);
        if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue; /* (--wait: woken early) */
        if (r <= 0) return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

enum { W_READ, W_POLL, W_POLL_SOCKET, W_EPOLL, W_PPOLL };
static int wait_how = W_READ;
static int wake_fd = -1, ep_fd = -1; /* this process's (after the fork) */
static sigset_t while_waiting;       /* --wait ppoll: the mask during ppoll */
static size_t touch;
static unsigned char *touched;
static int pairs = 2;    /* --pair */
static long rcvtimeo_ms; /* --rcvtimeo */
static int with_thread;  /* --thread */

/* --thread: wakes every 20 ms, for the life of the process. */
static void *ticker(void *arg)
{
    (void)arg;
    for (;;) poll(NULL, 0, 20);
    return NULL;
}

static void on_signal(int sig) { (void)sig; }

/* --touch: one byte in every line of the buffer. */
static void touch_lines(void)
{
    for (size_t i = 0; i < touch; i += 64) touched[i]++;
}

/* This process's waiting set-up (after the fork): its eventfd, epoll. */
static void wait_setup(int fd)
{
    if (wait_how == W_POLL || wait_how == W_EPOLL)
        if ((wake_fd = eventfd(0, EFD_NONBLOCK)) < 0) exit(1);
    if (wait_how == W_EPOLL) {
        struct epoll_event e = {.events = EPOLLIN, .data.fd = fd};
        if ((ep_fd = epoll_create1(0)) < 0 || epoll_ctl(ep_fd, EPOLL_CTL_ADD, fd, &e) < 0) exit(1);
        e.data.fd = wake_fd;
        if (epoll_ctl(ep_fd, EPOLL_CTL_ADD, wake_fd, &e) < 0) exit(1);
    }
    if (touch && !(touched = calloc(1, touch))) exit(1);
    if (rcvtimeo_ms > 0) {
        struct timeval tv = {rcvtimeo_ms / 1000, (rcvtimeo_ms % 1000) * 1000};
        if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0) {
            perror("floor_socketpair: --rcvtimeo");
            exit(1);
        }
    }
    pthread_t th;
    if (with_thread && pthread_create(&th, NULL, ticker, NULL) != 0) {
        fprintf(stderr, "floor_socketpair: --thread: cannot start a thread\n");
        exit(1);
    }
}

/* Waits for bytes as --wait says, then reads what is there. */
static ssize_t rd(int fd, void *b, size_t n)
{
    if (wait_how == W_READ) return read(fd, b, n);
    if (wait_how == W_POLL || wait_how == W_POLL_SOCKET) {
        struct pollfd p[2] = {{fd, POLLIN, 0}, {wake_fd, POLLIN, 0}};
        if (poll(p, wait_how == W_POLL ? 2 : 1, -1) < 0) return -1;
    } else if (wait_how == W_EPOLL) {
        struct epoll_event e[2];
        if (epoll_wait(ep_fd, e, 2, -1) < 0) return -1;
    } else {
        struct pollfd p = {fd, POLLIN, 0};
        if (ppoll(&p, 1, NULL, &while_waiting) < 0) return -1;
    }
    return recv(fd, b, n, MSG_DONTWAIT);
}
static ssize_t wr(int fd, void *b, size_t n) { return write(fd, b, n); }

/* One direction's key, its two pad states and frame count (--tag). */
typedef struct {
    unsigned char key[32];
    SHA256_CTX inner, outer;
    uint64_t seq;
} dir;

static int use_tags;
static int split;    /* --split */
static long busy_ns; /* --busy */
static size_t pad;   /* --pad */

/* --busy: spins for busy_ns on the monotonic clock. */
static void busy(void)
{
    if (busy_ns <= 0) return;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < busy_ns);
}

static void die(const char *what)
{
    fprintf(stderr, "floor_socketpair: %s\n", what);
    exit(1);
}

/* --split: this process on processor cpu alone. */
static void pin_to(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) < 0) {
        fprintf(stderr, "floor_socketpair: --split: cannot run on processor %d: %s\n", cpu,
                strerror(errno));
        exit(1);
    }
}

static void dir_init(dir *d, const unsigned char key[32])
{
    unsigned char ipad[64], opad[64];
    memset(ipad, 0x36, sizeof ipad);
    memset(opad, 0x5c, sizeof opad);
    for (int i = 0; i < 32; i++) ipad[i] ^= key[i], opad[i] ^= key[i];
    memcpy(d->key, key, 32);
    if (SHA256_Init(&d->inner) != 1 || SHA256_Update(&d->inner, ipad, 64) != 1 ||
        SHA256_Init(&d->outer) != 1 || SHA256_Update(&d->outer, opad, 64) != 1)
        die("cannot set up HMAC-SHA256");
    d->seq = 0;
}

static void tag_of(dir *d, const void *payload, size_t len, unsigned char tag[TAG])
{
    unsigned char head[12], md[32];
    for (int i = 0; i < 8; i++) head[i] = (unsigned char)(d->seq >> (56 - 8 * i));
    for (int i = 0; i < 4; i++) head[8 + i] = (unsigned char)((uint64_t)len >> (24 - 8 * i));
    SHA256_CTX c = d->inner;
    if (SHA256_Update(&c, head, 12) != 1 || SHA256_Update(&c, payload, len) != 1 ||
        SHA256_Final(md, &c) != 1)
        die("SHA-256 failed");
    c = d->outer;
    if (SHA256_Update(&c, md, 32) != 1 || SHA256_Final(md, &c) != 1) die("SHA-256 failed");
    if (d->seq < 3) { /* the same bytes as libcrypto's HMAC */
        unsigned char msg[12 + 64], want[32];
        unsigned int n = 0;
        memcpy(msg, head, 12);
        memcpy(msg + 12, payload, len);
        if (!HMAC(EVP_sha256(), d->key, 32, msg, 12 + len, want, &n) || memcmp(md, want, 32))
            die("the tag is not HMAC-SHA256");
    }
    memcpy(tag, md, TAG);
    d->seq++;
}

/* Writes len bytes (and their tag). */
static int send_frame(int fd, dir *d, const void *payload, size_t len)
{
    unsigned char buf[96];
    busy();
    memcpy(buf, payload, len);
    if (use_tags) tag_of(d, payload, len, buf + len);
    size_t n = len + (use_tags ? TAG : 0);
    memset(buf + n, 0, pad);
    return full(wr, fd, buf, n + pad);
}

/* Reads len bytes (and checks their tag). */
static int recv_frame(int fd, dir *d, void *payload, size_t len)
{
    unsigned char buf[96], want[TAG];
    if (full(rd, fd, buf, len + (use_tags ? TAG : 0) + pad) < 0) return -1;
    busy();
    if (use_tags) {
        tag_of(d, buf, len, want);
        if (CRYPTO_memcmp(want, buf + len, TAG) != 0) die("a frame's tag does not check");
    }
    memcpy(payload, buf, len);
    return 0;
}

int main(int argc, char **argv)
{
    int a = 1;
    for (; a < argc && argv[a][0] == '-'; a++) {
        if (strcmp(argv[a], "--tag") == 0) {
            use_tags = 1;
        } else if (strcmp(argv[a], "--wait") == 0 && a + 1 < argc) {
            const char *how = argv[++a];
            wait_how = !strcmp(how, "read")          ? W_READ
                       : !strcmp(how, "poll")        ? W_POLL
                       : !strcmp(how, "poll-socket") ? W_POLL_SOCKET
                       : !strcmp(how, "epoll")       ? W_EPOLL
                       : !strcmp(how, "ppoll")       ? W_PPOLL
                                                     : -1;
            if (wait_how < 0) {
                fprintf(stderr,
                        "floor_socketpair: --wait: read, poll, poll-socket, epoll or ppoll\n");
                return 2;
            }
        } else if (strcmp(argv[a], "--rcvtimeo") == 0 && a + 1 < argc) {
            rcvtimeo_ms = atol(argv[++a]);
            if (rcvtimeo_ms <= 0) {
                fprintf(stderr, "floor_socketpair: --rcvtimeo: a positive number of ms\n");
                return 2;
            }
        } else if (strcmp(argv[a], "--thread") == 0) {
            with_thread = 1;
        } else if (strcmp(argv[a], "--busy") == 0 && a + 1 < argc) {
            busy_ns = atol(argv[++a]);
            if (busy_ns <= 0) {
                fprintf(stderr, "floor_socketpair: --busy: a positive number of ns\n");
                return 2;
            }
        } else if (strcmp(argv[a], "--pad") == 0 && a + 1 < argc) {
            long b = atol(argv[++a]);
            if (b <= 0 || b > 32) {
                fprintf(stderr, "floor_socketpair: --pad: 1 to 32 bytes\n");
                return 2;
            }
            pad = (size_t)b;
        } else if (strcmp(argv[a], "--split") == 0) {
            split = 1;
        } else if (strcmp(argv[a], "--touch") == 0 && a + 1 < argc) {
            touch = (size_t)atoll(argv[++a]);
        } else if (strcmp(argv[a], "--pair") == 0 && a + 1 < argc) {
            const char *how = argv[++a];
            pairs = !strcmp(how, "two") ? 2 : !strcmp(how, "one") ? 1 : -1;
            if (pairs < 0) {
                fprintf(stderr, "floor_socketpair: --pair: two or one\n");
                return 2;
            }
        } else {
            fprintf(stderr, "usage: floor_socketpair [--tag] [--wait HOW] [--touch BYTES] "
                            "[--pair two|one] [--rcvtimeo MS] [--thread] [--split] [--busy NS] "
                            "[--pad BYTES] ROUNDS\n");
            return 2;
        }
    }
    int64_t rounds = a < argc ? atoll(argv[a]) : 1000000;
    if (wait_how == W_PPOLL) { /* the signal blocked but while waiting */
        sigset_t block;
        sigemptyset(&block);
        sigaddset(&block, SIGUSR1);
        signal(SIGUSR1, on_signal);
        if (sigprocmask(SIG_BLOCK, &block, &while_waiting) < 0) die("sigprocmask");
    }
    unsigned char k_ab[32], k_ba[32];
    dir ab = {0}, ba = {0};
    if (use_tags) {
        if (RAND_bytes(k_ab, 32) != 1 || RAND_bytes(k_ba, 32) != 1) die("no random bytes");
        dir_init(&ab, k_ab);
        dir_init(&ba, k_ba);
    }
    /* ab: A writes ab[0], B reads ab[1]; ba: B writes ba[0], A reads
     * ba[1] (with one pair, ba is ab the other way round) */
    int ab_fd[2], ba_fd[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, ab_fd) < 0) return 1;
    if (pairs == 2) {
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, ba_fd) < 0) return 1;
    } else {
        ba_fd[0] = ab_fd[1];
        ba_fd[1] = ab_fd[0];
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid < 0) die("fork");
    if (split) pin_to(pid == 0 ? 1 : 0);
    if (pid == 0) {
        close(ab_fd[0]);
        if (pairs == 2) close(ba_fd[1]);
        wait_setup(ab_fd[1]);
        int64_t m[2];
        while (recv_frame(ab_fd[1], &ab, m, sizeof m) == 0 && m[0]) {
            touch_lines();
            int64_t r = m[1] + 1;
            if (send_frame(ba_fd[0], &ba, &r, sizeof r) < 0) _exit(1);
        }
        _exit(0);
    }
    close(ab_fd[1]);
    if (pairs == 2) close(ba_fd[0]);
    wait_setup(ba_fd[1]);
    int64_t n = 0;
    while (n < rounds) {
        touch_lines();
        int64_t m[2] = {1, n};
        if (send_frame(ab_fd[0], &ab, m, sizeof m) < 0 ||
            recv_frame(ba_fd[1], &ba, &n, sizeof n) < 0)
            return 1;
    }
    int64_t stop[2] = {0, 0};
    send_frame(ab_fd[0], &ab, stop, sizeof stop);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) die("the reader failed");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
    printf("%.1f\n", ns / (double)rounds);
    return 0;
}
