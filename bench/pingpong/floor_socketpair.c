/* floor_socketpair.c — the hand-offs of pingpong.zg between two processes
 * over a Unix socketpair: A writes the decision and the counter (one write
 * of 16 bytes), B reads them, increments and writes the reply (8 bytes).
 * usage: floor_socketpair ROUNDS    prints nanoseconds per iteration */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int full(ssize_t (*io)(int, void *, size_t), int fd, void *buf, size_t n)
{
    char *p = buf;
    while (n > 0) {
        ssize_t r = io(fd, p, n);
        if (r <= 0) return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static ssize_t rd(int fd, void *b, size_t n) { return read(fd, b, n); }
static ssize_t wr(int fd, void *b, size_t n) { return write(fd, b, n); }

int main(int argc, char **argv)
{
    int64_t rounds = argc > 1 ? atoll(argv[1]) : 1000000;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) return 1;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        int64_t m[2];
        while (full(rd, sv[1], m, sizeof m) == 0 && m[0]) {
            int64_t r = m[1] + 1;
            if (full(wr, sv[1], &r, sizeof r) < 0) _exit(1);
        }
        _exit(0);
    }
    close(sv[1]);
    int64_t n = 0;
    while (n < rounds) {
        int64_t m[2] = {1, n};
        if (full(wr, sv[0], m, sizeof m) < 0 || full(rd, sv[0], &n, sizeof n) < 0) return 1;
    }
    int64_t stop[2] = {0, 0};
    full(wr, sv[0], stop, sizeof stop);
    waitpid(pid, NULL, 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
    printf("%.1f\n", ns / (double)rounds);
    return 0;
}
