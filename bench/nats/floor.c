/* floor.c — the floor of the NATS ping-pong (bench/nats/run): the same
 * hand-off as one iteration of pingpong.zg over NATS, written directly
 * with the NATS C client and nothing else — two processes, a request
 * carrying the counter and a reply carrying it incremented (core NATS
 * request/reply through the server).
 * usage: floor URL ROUNDS    prints nanoseconds per iteration */
#include <nats/nats.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void on_request(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure)
{
    (void)sub, (void)closure;
    int64_t n = 0;
    if (natsMsg_GetDataLength(msg) == sizeof n) memcpy(&n, natsMsg_GetData(msg), sizeof n);
    n++;
    natsConnection_Publish(nc, natsMsg_GetReply(msg), &n, sizeof n);
    natsMsg_Destroy(msg);
}

static natsConnection *connect_to(const char *url)
{
    natsOptions *o = NULL;
    natsConnection *nc = NULL;
    if (natsOptions_Create(&o) != NATS_OK || natsOptions_SetURL(o, url) != NATS_OK ||
        natsOptions_SetSendAsap(o, true) != NATS_OK || natsConnection_Connect(&nc, o) != NATS_OK) {
        fprintf(stderr, "floor: cannot connect to %s\n", url);
        exit(1);
    }
    natsOptions_Destroy(o);
    return nc;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: floor URL ROUNDS\n");
        return 2;
    }
    const char *url = argv[1];
    int64_t rounds = atoll(argv[2]);
    char subject[64];
    snprintf(subject, sizeof subject, "floor.%d", (int)getpid());
    int ready[2];
    if (pipe(ready) != 0) return 1;
    pid_t pid = fork();
    if (pid == 0) {
        /* B: replies until its parent says stop (stdin closed: pipe) */
        close(ready[0]);
        natsConnection *nc = connect_to(url);
        natsSubscription *sub = NULL;
        if (natsConnection_Subscribe(&sub, nc, subject, on_request, NULL) != NATS_OK ||
            natsConnection_Flush(nc) != NATS_OK)
            _exit(1);
        if (write(ready[1], "r", 1) != 1) _exit(1);
        close(ready[1]);
        pause();
        _exit(0);
    }
    close(ready[1]);
    char c;
    if (read(ready[0], &c, 1) != 1) {
        fprintf(stderr, "floor: the responder did not start\n");
        return 1;
    }
    natsConnection *nc = connect_to(url);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int64_t n = 0;
    for (int64_t i = 0; i < rounds; i++) {
        natsMsg *reply = NULL;
        if (natsConnection_Request(&reply, nc, subject, &n, sizeof n, 5000) != NATS_OK) {
            fprintf(stderr, "floor: request %lld failed\n", (long long)i);
            return 1;
        }
        memcpy(&n, natsMsg_GetData(reply), sizeof n);
        natsMsg_Destroy(reply);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    if (n != rounds) {
        fprintf(stderr, "floor: counted %lld, expected %lld\n", (long long)n, (long long)rounds);
        return 1;
    }
    double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
    printf("%.1f\n", rounds > 0 ? ns / (double)rounds : 0.0);
    natsConnection_Destroy(nc);
    return 0;
}
