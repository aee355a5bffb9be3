/* floor.c — the floors of the NATS benchmark (bench/nats/run): the same
 * hand-offs as the workflows, written directly with the NATS C client and
 * nothing else, one process per party (forked).
 *
 *   floor [--js [--state file:PATH|kv [--state-ms MS]]] [--workers N]
 *         URL ROUNDS
 *                                             prints nanoseconds per round
 *
 * Without --workers: ping-pong, two processes, a request carrying the
 * counter and a reply carrying it incremented.  Core NATS: request/reply
 * through the server (natsConnection_Request).
 *
 * --workers N: fan-out, a coordinator and N worker processes; each round
 * the coordinator sends the round's number to every worker, then takes the
 * N replies (number + 1) in arrival order and adds them up.
 *
 * --js: every message goes through a JetStream stream with the settings
 * of a durable zgc run: file storage, a de-duplication window, each
 * message published under a Nats-Msg-Id, the stream's acknowledgements
 * of everything a party published awaited before it waits for a message
 * (as a durable run does: its sends are not acknowledged one after
 * another), each receiver a durable push consumer of its own subject with
 * explicit acknowledgement, acknowledged ("+ACK") once the message is
 * taken, before the reply goes out.  Ping-pong under --js is the
 * fan-out with one worker.  The stream is deleted at the end.
 *
 * --state file:PATH | --state kv (with --js): the same, durable the way a
 * durable zgc run is: nothing is acknowledged before its effect is
 * stored.  The coordinator's state (the round and the sum so far) is
 * written after it has taken a round's replies, before it acknowledges
 * them and before the next round: in PATH, 16 bytes written in place and
 * fdatasync'ed (as the SQLite run store commits), or as a value in a
 * key-value bucket of the same server (as --journal nats).  A worker's
 * reply is a function of the request alone, so a worker keeps no state:
 * it acknowledges a request once the stream has acknowledged its reply.
 * Without --state, the coordinator acknowledges each reply when it takes
 * it, and a crash would lose the sum.
 *
 * The floors send no loop decisions of their own: a durable run's
 * decision travels with the message after it (one message of the stream,
 * runtime/nats/nats.c: BATCH), so its messages are as many as theirs.
 *
 * --state-ms MS: the state is stored at the end of a round only once MS
 * milliseconds have passed since it was stored last (and after the last
 * round), the replies taken meanwhile acknowledged then (held until:
 * the stream delivers them again after a crash).  As a durable zgc run's
 * group commit (every 50 ms): a coordinator whose next messages do not
 * depend on the order in which the replies came (a sum) needs no store
 * a round.  A zgc coordinator that gathers replies in a coregion commits
 * every round: which reply it took first is a choice its next messages
 * may depend on.
 *
 * Every run checks its result and exits 1 when it is wrong. */
#include <nats/nats.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WAIT_MS 10000
#define MAX_WORKERS 64

static char prefix[64]; /* floor.PID: every subject of this run */
static char stream[64]; /* FLOOR_PID */

enum { STATE_NONE, STATE_FILE, STATE_KV };
static int state_kind = STATE_NONE;
static const char *state_path; /* STATE_FILE */
static long state_ms;          /* --state-ms: 0, every round */

static void die(const char *what, natsStatus s)
{
    const char *txt = nats_GetLastError(NULL);
    fprintf(stderr, "floor: %s: %s%s%s\n", what, natsStatus_GetText(s), txt && *txt ? ": " : "",
            txt && *txt ? txt : "");
    exit(1);
}

static natsConnection *connect_to(const char *url)
{
    natsOptions *o = NULL;
    natsConnection *nc = NULL;
    natsStatus s = natsOptions_Create(&o);
    if (s == NATS_OK) s = natsOptions_SetURL(o, url);
    if (s == NATS_OK) s = natsOptions_SetSendAsap(o, true);
    if (s == NATS_OK) s = natsConnection_Connect(&nc, o);
    if (s != NATS_OK) die("cannot connect", s);
    natsOptions_Destroy(o);
    return nc;
}

/* ---- core ping-pong: request/reply ---- */

static void on_request(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure)
{
    (void)sub, (void)closure;
    int64_t n = 0;
    if (natsMsg_GetDataLength(msg) == sizeof n) memcpy(&n, natsMsg_GetData(msg), sizeof n);
    n++;
    natsConnection_Publish(nc, natsMsg_GetReply(msg), &n, sizeof n);
    natsMsg_Destroy(msg);
}

/* ---- the parts of the fan-out (core or JetStream) ---- */

typedef struct party {
    natsConnection *nc;
    jsCtx *js;             /* --js only */
    natsSubscription *sub; /* this party's subject (core) or deliver subject (--js) */
    uint64_t sent;         /* for the Nats-Msg-Id */
    const char *name;      /* c, w1, w2, ... */
    /* --state: messages taken, acknowledged once their effect is stored */
    natsMsg **held;
    int nheld, capheld;
    int ack_when_stored; /* a worker: once the stream has its reply */
    int state_fd;        /* the coordinator, --state file */
    kvStore *kv;         /* the coordinator, --state kv */
} party;

static void subject_of(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s.%s", prefix, name);
}

static void make_stream(jsCtx *js)
{
    char subjects[80];
    snprintf(subjects, sizeof subjects, "%s.*", prefix);
    const char *subj[1] = {subjects};
    jsStreamConfig sc;
    jsStreamConfig_Init(&sc);
    sc.Name = stream;
    sc.Subjects = subj;
    sc.SubjectsLen = 1;
    sc.Storage = js_FileStorage;
    sc.Duplicates = 600LL * 1000000000LL;
    sc.Replicas = 1;
    jsStreamInfo *si = NULL;
    jsErrCode jerr = 0;
    natsStatus s = js_AddStream(&si, js, &sc, NULL, &jerr);
    jsStreamInfo_Destroy(si);
    if (s != NATS_OK && jerr != JSStreamNameExistErr) die("cannot create the stream", s);
}

static party open_party(const char *url, const char *name, int use_js)
{
    party p = {.nc = connect_to(url), .name = name};
    char subject[96];
    subject_of(subject, sizeof subject, name);
    natsStatus s = NATS_OK;
    if (!use_js) {
        s = natsConnection_SubscribeSync(&p.sub, p.nc, subject);
    } else {
        s = natsConnection_JetStream(&p.js, p.nc, NULL);
        if (s != NATS_OK) die("no JetStream context", s);
        make_stream(p.js);
        natsInbox *inbox = NULL;
        if ((s = natsInbox_Create(&inbox)) != NATS_OK) die("no inbox", s);
        s = natsConnection_SubscribeSync(&p.sub, p.nc, inbox);
        jsConsumerConfig cc;
        jsConsumerConfig_Init(&cc);
        cc.Durable = name;
        cc.FilterSubject = subject;
        cc.DeliverSubject = inbox;
        cc.AckPolicy = js_AckExplicit;
        cc.AckWait = 2LL * 1000000000LL;
        cc.MaxAckPending = -1;
        cc.DeliverPolicy = js_DeliverAll;
        jsConsumerInfo *ci = NULL;
        jsErrCode jerr = 0;
        if (s == NATS_OK) s = js_AddConsumer(&ci, p.js, stream, &cc, NULL, &jerr);
        jsConsumerInfo_Destroy(ci);
        natsInbox_Destroy(inbox);
    }
    if (s == NATS_OK) s = natsConnection_Flush(p.nc);
    if (s != NATS_OK) die("cannot subscribe", s);
    return p;
}

/* Sends n to party `to`: a plain publish with the reply subject unused
 * (core), or a stored message whose acknowledgement take() awaits. */
static void send_to(party *p, const char *to, int64_t n)
{
    char subject[96];
    subject_of(subject, sizeof subject, to);
    natsStatus s;
    if (!p->js) {
        s = natsConnection_Publish(p->nc, subject, &n, sizeof n);
    } else {
        natsMsg *m = NULL;
        char id[96];
        snprintf(id, sizeof id, "%s.%s.%llu", p->name, to, (unsigned long long)++p->sent);
        s = natsMsg_Create(&m, subject, NULL, (const char *)&n, sizeof n);
        if (s == NATS_OK) s = natsMsgHeader_Set(m, "Nats-Msg-Id", id);
        jsPubOptions po;
        jsPubOptions_Init(&po);
        po.MaxWait = 2000;
        if (s == NATS_OK) s = js_PublishMsgAsync(p->js, &m, &po);
        natsMsg_Destroy(m); /* (NULL when the client took it) */
    }
    if (s != NATS_OK) die("cannot send", s);
}

static void ack_held(party *p)
{
    for (int i = 0; i < p->nheld; i++) {
        const char *reply = natsMsg_GetReply(p->held[i]);
        natsStatus s = NATS_OK;
        if (reply && (s = natsConnection_PublishString(p->nc, reply, "+ACK")) != NATS_OK)
            die("cannot acknowledge", s);
        natsMsg_Destroy(p->held[i]);
    }
    p->nheld = 0;
}

/* --state: the coordinator's state, stored before its replies are
 * acknowledged. */
static void store_state(party *p, int64_t round, int64_t acc)
{
    int64_t v[2] = {round, acc};
    if (state_kind == STATE_FILE) {
        if (pwrite(p->state_fd, v, sizeof v, 0) != (ssize_t)sizeof v) {
            perror("floor: writing the state");
            exit(1);
        }
        if (fdatasync(p->state_fd) != 0) {
            perror("floor: fdatasync of the state");
            exit(1);
        }
    } else if (state_kind == STATE_KV) {
        natsStatus s = kvStore_Put(NULL, p->kv, "c", v, (int)sizeof v);
        if (s != NATS_OK) die("cannot store the state in the key-value bucket", s);
    }
}

/* Takes the next message (acknowledged under --js, or held under
 * --state), returns its number. */
static int64_t take(party *p)
{
    natsMsg *m = NULL;
    natsStatus s = NATS_OK;
    if (p->js) {
        jsPubOptions po;
        jsPubOptions_Init(&po);
        po.MaxWait = WAIT_MS;
        if ((s = js_PublishAsyncComplete(p->js, &po)) != NATS_OK) die("not stored", s);
        if (p->ack_when_stored) ack_held(p); /* the replies are stored */
    }
    s = natsSubscription_NextMsg(&m, p->sub, WAIT_MS);
    if (s != NATS_OK) die("no message", s);
    int64_t n = 0;
    if (natsMsg_GetDataLength(m) != sizeof n) {
        fprintf(stderr, "floor: a message of %d bytes\n", natsMsg_GetDataLength(m));
        exit(1);
    }
    memcpy(&n, natsMsg_GetData(m), sizeof n);
    if (p->js && state_kind != STATE_NONE) {
        if (p->nheld == p->capheld) {
            p->capheld = p->capheld ? 2 * p->capheld : 64;
            p->held = realloc(p->held, (size_t)p->capheld * sizeof *p->held);
            if (!p->held) {
                fprintf(stderr, "floor: out of memory\n");
                exit(1);
            }
        }
        p->held[p->nheld++] = m;
        return n;
    }
    const char *reply = natsMsg_GetReply(m);
    if (p->js && reply && (s = natsConnection_PublishString(p->nc, reply, "+ACK")) != NATS_OK)
        die("cannot acknowledge", s);
    natsMsg_Destroy(m);
    return n;
}

static void worker(const char *url, const char *name, int use_js, int ready_fd)
{
    party p = open_party(url, name, use_js);
    p.ack_when_stored = 1;
    if (write(ready_fd, "r", 1) != 1) _exit(1);
    close(ready_fd);
    for (;;) {
        int64_t n = take(&p);
        if (n < 0) break; /* the coordinator's end */
        send_to(&p, "c", n + 1);
    }
    ack_held(&p);
    natsConnection_Destroy(p.nc);
    _exit(0);
}

static pid_t spawn_worker(const char *url, const char *name, int use_js)
{
    int ready[2];
    if (pipe(ready) != 0) {
        perror("floor: pipe");
        exit(1);
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("floor: fork");
        exit(1);
    }
    if (pid == 0) {
        close(ready[0]);
        worker(url, name, use_js, ready[1]);
    }
    close(ready[1]);
    char c;
    if (read(ready[0], &c, 1) != 1) {
        fprintf(stderr, "floor: worker %s did not start\n", name);
        exit(1);
    }
    close(ready[0]);
    return pid;
}

static double since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1e9 + (double)(t1.tv_nsec - t0->tv_nsec);
}

static double fanout(const char *url, int64_t rounds, int workers, int use_js)
{
    static char names[MAX_WORKERS][8];
    pid_t pids[MAX_WORKERS];
    for (int k = 0; k < workers; k++) {
        snprintf(names[k], sizeof names[k], "w%d", k + 1);
        pids[k] = spawn_worker(url, names[k], use_js);
    }
    party c = open_party(url, "c", use_js);
    char bucket[64];
    snprintf(bucket, sizeof bucket, "FLOOR_KV_%d", (int)getpid());
    if (state_kind == STATE_FILE) {
        c.state_fd = open(state_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (c.state_fd < 0) {
            fprintf(stderr, "floor: cannot open %s: %s\n", state_path, strerror(errno));
            exit(1);
        }
    } else if (state_kind == STATE_KV) {
        kvConfig kc;
        kvConfig_Init(&kc);
        kc.Bucket = bucket;
        kc.History = 1;
        kc.StorageType = js_FileStorage;
        natsStatus s = js_CreateKeyValue(&c.kv, c.js, &kc);
        if (s != NATS_OK) die("cannot create the key-value bucket", s);
    }
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int64_t acc = 0;
    struct timespec stored = t0;
    for (int64_t i = 0; i < rounds; i++) {
        for (int k = 0; k < workers; k++) send_to(&c, names[k], i);
        for (int k = 0; k < workers; k++) acc += take(&c);
        if (state_kind != STATE_NONE &&
            (i + 1 == rounds || since(&stored) >= (double)state_ms * 1e6)) {
            store_state(&c, i + 1, acc);
            ack_held(&c);
            clock_gettime(CLOCK_MONOTONIC, &stored);
        }
    }
    double ns = since(&t0);
    if (state_kind == STATE_FILE && close(c.state_fd) != 0) {
        perror("floor: closing the state");
        exit(1);
    }
    if (c.kv) {
        kvStore_Destroy(c.kv);
        natsStatus s = js_DeleteKeyValue(c.js, bucket);
        if (s != NATS_OK) die("cannot delete the key-value bucket", s);
    }
    for (int k = 0; k < workers; k++) send_to(&c, names[k], -1);
    for (int k = 0; k < workers; k++) {
        int st = 0;
        if (waitpid(pids[k], &st, 0) != pids[k] || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "floor: worker %s failed\n", names[k]);
            exit(1);
        }
    }
    if (c.js) {
        jsErrCode jerr = 0;
        natsStatus s = js_DeleteStream(c.js, stream, NULL, &jerr);
        if (s != NATS_OK) die("cannot delete the stream", s);
        jsCtx_Destroy(c.js);
    }
    natsSubscription_Destroy(c.sub);
    natsConnection_Destroy(c.nc);
    int64_t want = (int64_t)workers * rounds * (rounds + 1) / 2;
    if (acc != want) {
        fprintf(stderr, "floor: the replies add up to %lld, expected %lld\n", (long long)acc,
                (long long)want);
        exit(1);
    }
    return ns;
}

static double pingpong_core(const char *url, int64_t rounds)
{
    char subject[80];
    subject_of(subject, sizeof subject, "b");
    int ready[2];
    if (pipe(ready) != 0) return -1;
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        /* B: replies until its parent stops it */
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
        exit(1);
    }
    natsConnection *nc = connect_to(url);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int64_t n = 0;
    for (int64_t i = 0; i < rounds; i++) {
        natsMsg *reply = NULL;
        natsStatus s = natsConnection_Request(&reply, nc, subject, &n, sizeof n, WAIT_MS);
        if (s != NATS_OK) die("request failed", s);
        memcpy(&n, natsMsg_GetData(reply), sizeof n);
        natsMsg_Destroy(reply);
    }
    double ns = since(&t0);
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    natsConnection_Destroy(nc);
    if (n != rounds) {
        fprintf(stderr, "floor: counted %lld, expected %lld\n", (long long)n, (long long)rounds);
        exit(1);
    }
    return ns;
}

static int usage(void)
{
    fprintf(stderr, "usage: floor [--js [--state file:PATH|kv [--state-ms MS]]] [--workers N] URL "
                    "ROUNDS\n");
    return 2;
}

int main(int argc, char **argv)
{
    int use_js = 0, workers = 0, a = 1;
    for (; a < argc && argv[a][0] == '-'; a++) {
        if (strcmp(argv[a], "--js") == 0) {
            use_js = 1;
        } else if (strcmp(argv[a], "--state") == 0 && a + 1 < argc) {
            const char *v = argv[++a];
            if (strcmp(v, "kv") == 0) {
                state_kind = STATE_KV;
            } else if (strncmp(v, "file:", 5) == 0 && v[5]) {
                state_kind = STATE_FILE;
                state_path = v + 5;
            } else {
                fprintf(stderr, "floor: --state takes file:PATH or kv\n");
                return 2;
            }
        } else if (strcmp(argv[a], "--state-ms") == 0 && a + 1 < argc) {
            char *end = NULL;
            state_ms = strtol(argv[++a], &end, 10);
            if (*end || state_ms < 0 || state_ms > 60000) {
                fprintf(stderr, "floor: --state-ms takes 0..60000\n");
                return 2;
            }
        } else if (strcmp(argv[a], "--workers") == 0 && a + 1 < argc) {
            char *end = NULL;
            long w = strtol(argv[++a], &end, 10);
            if (*end || w < 1 || w > MAX_WORKERS) {
                fprintf(stderr, "floor: --workers takes 1..%d\n", MAX_WORKERS);
                return 2;
            }
            workers = (int)w;
        } else {
            return usage();
        }
    }
    if (argc - a != 2 || (state_kind != STATE_NONE && !use_js)) return usage();
    const char *url = argv[a];
    char *end = NULL;
    long long rounds = strtoll(argv[a + 1], &end, 10);
    if (*end || rounds < 1) {
        fprintf(stderr, "floor: ROUNDS must be a positive number\n");
        return 2;
    }
    snprintf(prefix, sizeof prefix, "floor.%d", (int)getpid());
    snprintf(stream, sizeof stream, "FLOOR_%d", (int)getpid());
    double ns = workers == 0 && !use_js ? pingpong_core(url, rounds)
                                        : fanout(url, rounds, workers ? workers : 1, use_js);
    if (ns < 0) {
        perror("floor");
        return 1;
    }
    printf("%.1f\n", ns / (double)rounds);
    nats_Close();
    return 0;
}
