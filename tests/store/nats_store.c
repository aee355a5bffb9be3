/* nats_store.c — one process on a store kept in a JetStream key-value
 * bucket (runtime/store/natskv.c), for tests/store/nats.sh:
 *
 *   nats_store URL BUCKET LEVEL RECORDS incr N SEED
 *       N operations: read the int cell `counter`, "generate" for 0–2 ms,
 *       write it back plus one; a refused commit (ZST_RETRY) runs the
 *       operation again.  Prints the number of refused attempts.
 *   nats_store URL BUCKET LEVEL RECORDS get
 *       one operation that reads `counter`; prints its value.
 *   nats_store URL BUCKET LEVEL RECORDS dead-holder MS [VALUE]
 *       leaves what a process killed inside a section leaves: the lock
 *       with a lease that ends in MS ms and, with VALUE, an intent that
 *       sets `counter` to VALUE (written straight into the bucket).
 *   nats_store URL BUCKET LEVEL RECORDS busy MS
 *       an operation with a busy timeout of MS ms.
 *
 * RECORDS "-": no OpRecords.  Exit 0, or 1 with the error on stderr. */
#include <nats/nats.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "zst.h"

static int fail(const char *what)
{
    fprintf(stderr, "nats_store: %s: %s\n", what, zst_error());
    return 1;
}

static zst_store *open_store(natsConnection *nc, const char *bucket, int level, const char *rec,
                             int busy_ms)
{
    char err[512];
    zst_config c = {.level = level,
                    .nats = nc,
                    .nats_bucket = bucket,
                    .oprecords = strcmp(rec, "-") ? rec : NULL,
                    .busy_ms = busy_ms};
    zst_store *s = zst_open(&c, err, sizeof err);
    if (!s) {
        fprintf(stderr, "nats_store: %s\n", err);
        return NULL;
    }
    zgrt_value zero = {.tag = ZGRT_INT, .u = {.i = 0}};
    if (zst_cell(s, "counter", ZGRT_INT, zero) != ZST_OK) {
        fprintf(stderr, "nats_store: declaring the cell: %s\n", zst_error());
        zst_close(s);
        return NULL;
    }
    return s;
}

static int read_counter(zst_store *s, long long *out)
{
    zst_op *op = zst_begin(s, "reader");
    if (!op) return fail("begin");
    zgrt_value v;
    if (zst_read(op, "counter", &v) != ZST_OK) return fail("read");
    *out = v.u.i;
    int rc = zst_commit_end(op);
    return rc == ZST_OK ? 0 : fail("commit");
}

/* The lock and intent a killed process leaves (natskv.c's layout). */
static int dead_holder(natsConnection *nc, const char *bucket, int ms, const char *value)
{
    jsCtx *js = NULL;
    kvStore *kv = NULL;
    natsStatus s = natsConnection_JetStream(&js, nc, NULL);
    if (s == NATS_OK) s = js_KeyValue(&kv, js, bucket);
    if (s == NATS_OK && value) {
        kvEntry *e = NULL;
        s = kvStore_Get(&e, kv, "cell.kcounter");
        if (s == NATS_OK) {
            char doc[256];
            /* the cell document with the new value, one version later */
            snprintf(doc, sizeof doc,
                     "{\"owner\":\"dead\",\"puts\":{\"cell.kcounter\":"
                     "{\"t\":%d,\"v\":%s,\"ver\":999999,\"by\":0}}}",
                     (int)ZGRT_INT, value);
            kvEntry_Destroy(e);
            s = kvStore_Put(NULL, kv, "intent", doc, (int)strlen(doc));
        }
    }
    if (s == NATS_OK) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        char lock[128];
        snprintf(lock, sizeof lock, "{\"owner\":\"dead\",\"until\":%lld}",
                 (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000 + ms);
        s = kvStore_Put(NULL, kv, "lock", lock, (int)strlen(lock));
    }
    if (kv) kvStore_Destroy(kv);
    if (js) jsCtx_Destroy(js);
    if (s != NATS_OK) {
        fprintf(stderr, "nats_store: dead-holder: %s\n", natsStatus_GetText(s));
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: nats_store URL BUCKET LEVEL RECORDS incr N SEED | get | "
                        "dead-holder MS [VALUE] | busy MS\n");
        return 2;
    }
    const char *url = argv[1], *bucket = argv[2], *rec = argv[4], *mode = argv[5];
    int level = atoi(argv[3]);
    natsConnection *nc = NULL;
    natsStatus ns = natsConnection_ConnectTo(&nc, url);
    if (ns != NATS_OK) {
        fprintf(stderr, "nats_store: cannot connect to %s: %s\n", url, natsStatus_GetText(ns));
        return 1;
    }
    int ret = 0;
    if (!strcmp(mode, "dead-holder") && argc >= 7) {
        /* the bucket must exist: open a store once */
        zst_store *s = open_store(nc, bucket, level, "-", 0);
        if (!s) return 1;
        zst_close(s);
        ret = dead_holder(nc, bucket, atoi(argv[6]), argc >= 8 ? argv[7] : NULL);
    } else {
        int busy = !strcmp(mode, "busy") && argc >= 7 ? atoi(argv[6]) : 0;
        zst_store *s = open_store(nc, bucket, level, rec, busy);
        if (!s) {
            natsConnection_Destroy(nc);
            return 1;
        }
        if (!strcmp(mode, "get") || !strcmp(mode, "busy")) {
            long long v = 0;
            ret = read_counter(s, &v);
            if (!ret) printf("%lld\n", v);
        } else if (!strcmp(mode, "incr") && argc >= 8) {
            int n = atoi(argv[6]);
            unsigned seed = (unsigned)atoi(argv[7]);
            long retries = 0;
            char agent[32];
            snprintf(agent, sizeof agent, "incr%u", seed);
            for (int i = 0; i < n && !ret; i++) {
                for (;;) {
                    zst_op *op = zst_begin(s, agent);
                    if (!op) {
                        ret = fail("begin");
                        break;
                    }
                    zgrt_value v;
                    if (zst_read(op, "counter", &v) != ZST_OK) {
                        ret = fail("read");
                        zst_end(op);
                        break;
                    }
                    struct timespec g = {0, (long)(rand_r(&seed) % 2000) * 1000L};
                    nanosleep(&g, NULL);
                    v.u.i++;
                    if (zst_write(op, "counter", v) != ZST_OK) {
                        ret = fail("write");
                        zst_end(op);
                        break;
                    }
                    int rc = zst_commit_end(op);
                    if (rc == ZST_OK) break;
                    if (rc != ZST_RETRY) {
                        ret = fail("commit");
                        break;
                    }
                    retries++;
                }
            }
            if (!ret) printf("%ld\n", retries);
        } else {
            fprintf(stderr, "nats_store: bad mode %s\n", mode);
            ret = 2;
        }
        zst_close(s);
    }
    natsConnection_Destroy(nc);
    return ret;
}
