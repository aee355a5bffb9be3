/* natskv.c — the NATS backend: the documents in a JetStream key-value
 * bucket, for processes on any number of hosts
 *
 * A document (kind, key) is the bucket key "KIND.k<key>" (bytes outside
 * [A-Za-z0-9_-] of the key written =XX), its value the JSON text.  Two
 * keys of the bucket are the machinery of the sections:
 *
 *   "lock"    {"owner": "<random id>", "until": <ms since the epoch>}, or
 *             {} when free.  A section takes it with a revision check
 *             (kvStore_Create when it never existed, kvStore_Update on the
 *             revision read when it is free or its lease ran out), so one
 *             handle of all processes holds it at a time; a holder that
 *             died (kill -9, a lost host) is taken over when its lease
 *             ends.
 *   "intent"  the changes of a section being committed: {"owner", "puts":
 *             {bucket key: document or null}}.  A committing section
 *             renews its lease with a revision check (so a holder whose
 *             lease was taken over writes nothing), writes the intent — the
 *             commit point, one atomic write —, applies each change, then
 *             deletes the intent.  The next section of any handle finds an
 *             intent left by a holder that died half-way and applies it
 *             again first (every change is a plain put: applying twice is
 *             applying once).
 *
 * Inside a section, gets read through the section's own changes; nothing
 * reaches the bucket before the commit, so a section that fails leaves
 * the bucket as it was.  Leases use the hosts' clocks (CLOCK_REALTIME):
 * they must agree to well within the lease (ZST_NATS_LEASE_MS). */
#include <errno.h>
#include <fcntl.h>
#include <nats/nats.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "zst_internal.h"

#define ZST_NATS_LEASE_MS 5000

typedef struct {
    zst_backend b;
    pthread_mutex_t mu;
    jsCtx *js;
    kvStore *kv;
    char bucket[256];
    char owner[33];
    uint64_t lock_rev; /* the lock's revision while this handle holds it */
    int busy_ms;
    char why[200]; /* the server's last refusal of the lock */
    json_t *puts;  /* this section's changes: bucket key -> document or null */
} zst_nkv;

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void pause_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {}
}

static int nkv_fail(zst_nkv *q, natsStatus s, const char *what)
{
    const char *last = nats_GetLastError(NULL);
    return zst_fail(ZST_EIO, "store bucket %s: %s: %s%s%s", q->bucket, what, natsStatus_GetText(s),
                    last && *last ? ": " : "", last && *last ? last : "");
}

/* The bucket key of (kind, key). */
static void bucket_key(char *out, size_t n, const char *kind, const char *key)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = (size_t)snprintf(out, n, "%s.k", kind);
    for (const unsigned char *p = (const unsigned char *)key; *p && o + 4 < n; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            *p == '_' || *p == '-') {
            out[o++] = (char)*p;
        } else {
            out[o++] = '=';
            out[o++] = hex[*p >> 4];
            out[o++] = hex[*p & 15];
        }
    }
    out[o] = 0;
}

/* The JSON object at bucket key k: ZST_OK with *out, 1 when absent. */
static int get_doc(zst_nkv *q, const char *k, json_t **out, uint64_t *rev)
{
    *out = NULL;
    kvEntry *e = NULL;
    /* a read changes nothing: one that timed out (a server slowed by its
     * host's load) is asked again until the busy timeout */
    int64_t deadline = now_ms() + q->busy_ms;
    natsStatus s;
    while ((s = kvStore_Get(&e, q->kv, k)) == NATS_TIMEOUT && now_ms() < deadline) {}
    if (s == NATS_NOT_FOUND) return 1;
    if (s != NATS_OK) return nkv_fail(q, s, "reading");
    if (rev) *rev = kvEntry_Revision(e);
    json_error_t je;
    json_t *doc = json_loadb(kvEntry_Value(e), (size_t)kvEntry_ValueLen(e), 0, &je);
    kvEntry_Destroy(e);
    if (!doc || !json_is_object(doc)) {
        json_decref(doc);
        return zst_fail(ZST_ECORRUPT, "store bucket %s: the value of '%s' is not a JSON object",
                        q->bucket, k);
    }
    *out = doc;
    return ZST_OK;
}

static char *dump(json_t *doc) { return json_dumps(doc, JSON_COMPACT); }

static int put_raw(zst_nkv *q, const char *k, json_t *doc)
{
    if (!doc || json_is_null(doc)) {
        natsStatus s = kvStore_Delete(q->kv, k);
        return s == NATS_OK ? ZST_OK : nkv_fail(q, s, "deleting");
    }
    char *text = dump(doc);
    if (!text) return zst_fail(ZST_ENOMEM, "out of memory");
    natsStatus s = kvStore_Put(NULL, q->kv, k, text, (int)strlen(text));
    free(text);
    return s == NATS_OK ? ZST_OK : nkv_fail(q, s, "writing");
}

/* Applies an intent's changes. */
static int apply(zst_nkv *q, json_t *puts)
{
    const char *k;
    json_t *doc;
    json_object_foreach(puts, k, doc)
    {
        int rc = put_raw(q, k, doc);
        if (rc != ZST_OK) return rc;
    }
    return ZST_OK;
}

/* The lock document for this handle with a fresh lease, as text. */
static char *lease_text(zst_nkv *q)
{
    json_t *l = json_pack("{s:s, s:I}", "owner", q->owner, "until",
                          (json_int_t)(now_ms() + ZST_NATS_LEASE_MS));
    char *t = l ? dump(l) : NULL;
    json_decref(l);
    return t;
}

static int take_lock(zst_nkv *q)
{
    int64_t deadline = now_ms() + q->busy_ms;
    int wait = 1;
    q->why[0] = 0;
    for (;;) {
        json_t *cur = NULL;
        uint64_t rev = 0;
        int rc = get_doc(q, "lock", &cur, &rev);
        if (rc < 0) return rc;
        bool free_now = rc == 1 || !json_object_get(cur, "owner") ||
                        json_integer_value(json_object_get(cur, "until")) < now_ms();
        json_decref(cur);
        if (free_now) {
            char *t = lease_text(q);
            if (!t) return zst_fail(ZST_ENOMEM, "out of memory");
            uint64_t got = 0;
            natsStatus s = rc == 1 ? kvStore_Create(&got, q->kv, "lock", t, (int)strlen(t))
                                   : kvStore_Update(&got, q->kv, "lock", t, (int)strlen(t), rev);
            free(t);
            if (s == NATS_OK) {
                q->lock_rev = got;
                return ZST_OK;
            }
            /* another handle was quicker (the server refuses a write on a
             * revision that is no longer the last): wait */
            if (s != NATS_ERR && s != NATS_MISMATCH) return nkv_fail(q, s, "taking the lock");
            const char *last = nats_GetLastError(NULL);
            snprintf(q->why, sizeof q->why, "%s", last && *last ? last : natsStatus_GetText(s));
        }
        if (now_ms() > deadline)
            return zst_fail(ZST_EIO,
                            "store bucket %s: the store is locked by another process for "
                            "longer than the busy timeout (%d ms)%s%s",
                            q->bucket, q->busy_ms, q->why[0] ? "; last refusal: " : "", q->why);
        pause_ms(wait);
        if (wait < 16) wait *= 2;
    }
}

/* Frees the lock if this handle still holds it (a revision check). */
static void release_lock(zst_nkv *q)
{
    if (!q->lock_rev) return;
    kvStore_Update(NULL, q->kv, "lock", "{}", 2, q->lock_rev);
    q->lock_rev = 0;
}

static int nkv_lock(zst_backend *b, bool write)
{
    (void)write; /* readers take the lock too: a reader between the
                    changes of a commit would see half of it */
    zst_nkv *q = (zst_nkv *)b;
    pthread_mutex_lock(&q->mu);
    int rc = take_lock(q);
    if (rc == ZST_OK) {
        /* a holder that died while applying its changes: apply them */
        json_t *intent = NULL;
        rc = get_doc(q, "intent", &intent, NULL);
        if (rc == ZST_OK) {
            json_t *puts = json_object_get(intent, "puts");
            rc = json_is_object(puts)
                     ? apply(q, puts)
                     : zst_fail(ZST_ECORRUPT, "store bucket %s: a damaged intent", q->bucket);
            if (rc == ZST_OK) {
                natsStatus s = kvStore_Delete(q->kv, "intent");
                if (s != NATS_OK) rc = nkv_fail(q, s, "deleting the intent");
            }
            json_decref(intent);
        } else if (rc == 1) {
            rc = ZST_OK;
        }
    }
    if (rc == ZST_OK) {
        q->puts = json_object();
        if (!q->puts) rc = zst_fail(ZST_ENOMEM, "out of memory");
    }
    if (rc != ZST_OK) {
        release_lock(q);
        pthread_mutex_unlock(&q->mu);
    }
    return rc;
}

static int nkv_unlock(zst_backend *b, bool commit)
{
    zst_nkv *q = (zst_nkv *)b;
    int rc = ZST_OK;
    if (commit && json_object_size(q->puts) > 0) {
        /* still the holder?  (renews the lease; refused if it was taken over) */
        char *t = lease_text(q);
        uint64_t got = 0;
        natsStatus s = t ? kvStore_Update(&got, q->kv, "lock", t, (int)strlen(t), q->lock_rev)
                         : NATS_NO_MEMORY;
        free(t);
        if (s != NATS_OK) {
            q->lock_rev = 0;
            rc = s == NATS_NO_MEMORY
                     ? zst_fail(ZST_ENOMEM, "out of memory")
                     : zst_fail(ZST_EIO,
                                "store bucket %s: the section took longer than its "
                                "lease (%d ms) and the lock was taken over: nothing "
                                "was written",
                                q->bucket, ZST_NATS_LEASE_MS);
        } else {
            q->lock_rev = got;
            json_t *intent = json_pack("{s:s, s:O}", "owner", q->owner, "puts", q->puts);
            rc = intent ? put_raw(q, "intent", intent) : zst_fail(ZST_ENOMEM, "out of memory");
            json_decref(intent);
            /* from here on the section is committed: a failure below leaves
             * the intent, which the next section applies */
            if (rc == ZST_OK && apply(q, q->puts) == ZST_OK) {
                natsStatus d = kvStore_Delete(q->kv, "intent");
                (void)d;
            }
        }
    }
    json_decref(q->puts);
    q->puts = NULL;
    release_lock(q);
    pthread_mutex_unlock(&q->mu);
    return rc;
}

static int nkv_get(zst_backend *b, const char *kind, const char *key, json_t **out)
{
    zst_nkv *q = (zst_nkv *)b;
    char k[600];
    bucket_key(k, sizeof k, kind, key);
    json_t *mine = q->puts ? json_object_get(q->puts, k) : NULL;
    if (mine) {
        *out = json_is_null(mine) ? NULL : json_deep_copy(mine);
        if (json_is_null(mine)) return 1;
        return *out ? ZST_OK : zst_fail(ZST_ENOMEM, "out of memory");
    }
    return get_doc(q, k, out, NULL);
}

static int nkv_put(zst_backend *b, const char *kind, const char *key, json_t *doc)
{
    zst_nkv *q = (zst_nkv *)b;
    if (!q->puts)
        return zst_fail(ZST_EUSAGE, "store bucket %s: a write outside a section", q->bucket);
    char k[600];
    bucket_key(k, sizeof k, kind, key);
    json_t *copy = doc ? json_deep_copy(doc) : json_null();
    if (!copy || json_object_set_new(q->puts, k, copy) != 0)
        return zst_fail(ZST_ENOMEM, "out of memory");
    return ZST_OK;
}

static void nkv_close(zst_backend *b)
{
    zst_nkv *q = (zst_nkv *)b;
    if (q->kv) kvStore_Destroy(q->kv);
    if (q->js) jsCtx_Destroy(q->js);
    json_decref(q->puts);
    pthread_mutex_destroy(&q->mu);
    free(q);
}

static int random_owner(char *out)
{
    unsigned char r[16];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, r, sizeof r) : -1;
    if (fd >= 0) close(fd);
    if (n != (ssize_t)sizeof r) return -1;
    for (int i = 0; i < 16; i++) sprintf(out + 2 * i, "%02x", r[i]);
    return 0;
}

zst_backend *zst_nats_open(void *conn, const char *bucket, int busy_ms, char *err, size_t errlen)
{
    zst_nkv *q = calloc(1, sizeof *q);
    if (!q) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&q->mu, NULL);
    q->b = (zst_backend){nkv_lock, nkv_unlock, nkv_get, nkv_put, nkv_close};
    q->busy_ms = busy_ms > 0 ? busy_ms : 10000;
    snprintf(q->bucket, sizeof q->bucket, "%s", bucket ? bucket : "");
    if (!conn || !bucket || !*bucket) {
        snprintf(err, errlen, "a NATS store needs a connection and a bucket name");
        nkv_close(&q->b);
        return NULL;
    }
    for (const char *p = bucket; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '-')) {
            snprintf(err, errlen,
                     "store bucket '%s': a bucket name has only letters, digits, '_' and '-'",
                     bucket);
            nkv_close(&q->b);
            return NULL;
        }
    if (random_owner(q->owner) != 0) {
        snprintf(err, errlen, "store bucket %s: cannot read /dev/urandom", bucket);
        nkv_close(&q->b);
        return NULL;
    }
    natsStatus s = natsConnection_JetStream(&q->js, (natsConnection *)conn, NULL);
    if (s == NATS_OK) s = js_KeyValue(&q->kv, q->js, bucket);
    if (s == NATS_NOT_FOUND) {
        /* history 1: the store needs no old values; file storage: it
         * outlives the server's restarts */
        kvConfig kc;
        kvConfig_Init(&kc);
        kc.Bucket = bucket;
        kc.History = 1;
        kc.StorageType = js_FileStorage;
        s = js_CreateKeyValue(&q->kv, q->js, &kc);
        /* another process created it first */
        if (s != NATS_OK) s = js_KeyValue(&q->kv, q->js, bucket);
    }
    if (s != NATS_OK) {
        const char *last = nats_GetLastError(NULL);
        snprintf(err, errlen,
                 "store bucket %s: cannot open or create the key-value bucket (is JetStream "
                 "enabled on the server, may this user use it?): %s%s%s",
                 bucket, natsStatus_GetText(s), last && *last ? ": " : "", last ? last : "");
        nkv_close(&q->b);
        return NULL;
    }
    return &q->b;
}
