/* kv.c — the run store's operations (durable/storage.h) over a JetStream
 * key-value bucket: --journal nats (journal.h has the keys).
 *
 * Every value is written with a revision check: the run's record is
 * created once (kvStore_Create), a lifeline's record is updated with the
 * revision this process read or wrote last (kvStore_Update), and a chunk
 * is created under a key no other attempt uses.  The record of this
 * process's lifeline is kept in memory (rec) and written whole.
 *
 * `zgc runs cancel --nats` marks the run's record "cancelled": the
 * lifelines find it in the status (compose) and at a commit (at most
 * once a second).  Human tasks are records RUN.T.<N> of the bucket,
 * answered by `zgc answer --nats` (kv_task).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conn.h"
#include "journal.h"

#define KV_SETUP_S 15.0
#define KV_RETRY_MS 250

typedef struct kvj {
    const zgrt_program *p;
    int self;
    char run[ZRI_NATS_RUN_MAX + 1];
    char bucket[128];
    char where[768];
    char url[512];
    char host[256];
    natsConnection *nc;
    jsCtx *js;
    kvStore *kv;
    pthread_mutex_t mu;
    json_t *rec;  /* this lifeline's record, as last written */
    uint64_t rev; /* its revision (0: not read yet) */
    int attempt;
    double cancel_checked; /* when the run's record was read last (cancelled_now) */
    /* the server's last asynchronous error (a permissions violation
     * comes so: the request itself only times out), under elock */
    pthread_mutex_t elock;
    char async_err[512];
} kvj;

static void on_async_error(natsConnection *nc, natsSubscription *sub, natsStatus s, void *closure)
{
    (void)sub;
    kvj *k = closure;
    const char *txt = NULL;
    natsConnection_GetLastError(nc, &txt);
    pthread_mutex_lock(&k->elock);
    snprintf(k->async_err, sizeof k->async_err, "%s", txt && *txt ? txt : natsStatus_GetText(s));
    pthread_mutex_unlock(&k->elock);
}

/* ---- helpers --------------------------------------------------------------- */

static void kv_error(kvj *k, natsStatus s, const char *what, const char *key, char *err,
                     size_t errlen)
{
    natsStatus ls;
    const char *txt = nats_GetLastError(&ls);
    char async[512];
    pthread_mutex_lock(&k->elock);
    snprintf(async, sizeof async, "%s", k->async_err);
    pthread_mutex_unlock(&k->elock);
    zri_err(
        err, errlen, "%s %s in the key-value bucket %s on the NATS server %s failed: %s%s%s%s%s%s",
        what, key, k->bucket, k->url, natsStatus_GetText(s), txt && *txt ? ": " : "",
        txt && *txt ? txt : "", *async ? " (the server reported: " : "", async, *async ? ")" : "");
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *dupz(const char *s) { return s ? zri_xstrndup(s, strlen(s)) : NULL; }

static const char *jstr(json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static int64_t jint(json_t *o, const char *key)
{
    return (int64_t)json_integer_value(json_object_get(o, key));
}

static void set_str(json_t *o, const char *key, const char *v)
{
    if (json_object_set_new(o, key, v ? json_string(v) : json_null()) != 0) zri_oom();
}

static void set_int(json_t *o, const char *key, int64_t v)
{
    if (json_object_set_new(o, key, json_integer((json_int_t)v)) != 0) zri_oom();
}

/* The JSON value of key: 1 with *out (and *rev), 0 when there is none. */
static int get_json(kvj *k, const char *key, json_t **out, uint64_t *rev, char *err, size_t errlen)
{
    kvEntry *e = NULL;
    *out = NULL;
    natsStatus s = kvStore_Get(&e, k->kv, key);
    if (s == NATS_NOT_FOUND) return 0;
    if (s != NATS_OK) {
        kv_error(k, s, "reading", key, err, errlen);
        return -1;
    }
    json_error_t je;
    json_t *j = json_loadb((const char *)kvEntry_Value(e), (size_t)kvEntry_ValueLen(e), 0, &je);
    if (rev) *rev = kvEntry_Revision(e);
    kvEntry_Destroy(e);
    if (!json_is_object(j)) {
        json_decref(j);
        zri_err(err, errlen, "the key-value bucket %s is damaged: %s is not a JSON object",
                k->bucket, key);
        return -1;
    }
    *out = j;
    return 1;
}

static void key_life(const kvj *k, int32_t l, char *out, size_t n)
{
    snprintf(out, n, "%s.L.%s", k->run, k->p->lifelines[l]);
}

/* Writes this lifeline's record with the revision check. */
static int put_rec(kvj *k, char *err, size_t errlen)
{
    char key[256];
    key_life(k, k->self, key, sizeof key);
    char *text = json_dumps(k->rec, JSON_COMPACT);
    if (!text) zri_oom();
    uint64_t rev = 0;
    natsStatus s = k->rev ? kvStore_Update(&rev, k->kv, key, text, (int)strlen(text), k->rev)
                          : kvStore_Create(&rev, k->kv, key, text, (int)strlen(text));
    free(text);
    if (s != NATS_OK) {
        natsStatus ls;
        const char *txt = nats_GetLastError(&ls);
        if (txt && (strstr(txt, "wrong last sequence") || strstr(txt, "key exists"))) {
            zri_err(err, errlen,
                    "the journal of lifeline %s of run %s (key %s in the key-value bucket %s) was "
                    "written by another process: another process runs this lifeline",
                    k->p->lifelines[k->self], k->run, key, k->bucket);
            return -1;
        }
        kv_error(k, s, "writing", key, err, errlen);
        return -1;
    }
    k->rev = rev;
    return 0;
}

/* The run's status from its lifelines' records (per-lifeline mode: all
 * done: done; one failed: failed; one cancelled: cancelled; one
 * waiting: waiting; else running), and with every lifeline done the
 * result composed from the components. */
static int compose(kvj *k, char **status, char **result, int *attempts, char *err, size_t errlen)
{
    int nl = k->p->nlifelines, ndone = 0, failed = 0, waiting = 0, cancelled = 0;
    /* `zgc runs cancel --nats` marks the run's record */
    char rkey[256];
    snprintf(rkey, sizeof rkey, "%s.run", k->run);
    json_t *run = NULL;
    if (get_json(k, rkey, &run, NULL, err, errlen) < 0) return -1;
    cancelled = json_is_true(json_object_get(run, "cancelled"));
    json_decref(run);
    int nres = -1, tuple = 0, maxatt = 0;
    json_t *res = json_object();
    if (!res) zri_oom();
    for (int32_t l = 0; l < nl; l++) {
        char key[256];
        key_life(k, l, key, sizeof key);
        json_t *r = NULL;
        int got = get_json(k, key, &r, NULL, err, errlen);
        if (got < 0) {
            json_decref(res);
            return -1;
        }
        if (!got) continue;
        const char *st = jstr(r, "status");
        if (st && strcmp(st, "done") == 0) ndone++;
        if (st && strcmp(st, "failed") == 0) failed = 1;
        if (st && strcmp(st, "waiting") == 0) waiting = 1;
        if (st && strcmp(st, "cancelled") == 0) cancelled = 1;
        if ((int)jint(r, "attempts") > maxatt) maxatt = (int)jint(r, "attempts");
        if (json_object_get(r, "nresults")) {
            nres = (int)jint(r, "nresults");
            tuple = json_is_true(json_object_get(r, "tuple"));
        }
        json_object_update(res, json_object_get(r, "results"));
        json_decref(r);
    }
    *status = dupz(cancelled     ? "cancelled"
                   : failed      ? "failed"
                   : waiting     ? "waiting"
                   : ndone == nl ? "done"
                                 : "running");
    if (attempts) *attempts = maxatt;
    if (result) *result = NULL;
    if (result && ndone == nl && nres >= 0) {
        zri_buf b = {0};
        int complete = 1;
        if (nres == 0) zri_buf_puts(&b, "null");
        if (tuple) zri_buf_puts(&b, "[");
        for (int i = 0; i < nres; i++) {
            char idx[16];
            snprintf(idx, sizeof idx, "%d", i);
            const char *v = jstr(res, idx);
            if (!v) complete = 0;
            if (i) zri_buf_puts(&b, ", ");
            zri_buf_puts(&b, v ? v : "null");
        }
        if (tuple) zri_buf_puts(&b, "]");
        if (complete)
            *result = zri_buf_take(&b);
        else
            zri_buf_free(&b);
    }
    json_decref(res);
    return 0;
}

/* ---- the operations ---------------------------------------------------------- */

static const char *kv_where(void *u)
{
    kvj *k = u;
    return k->where;
}

static int kv_find(void *u, const char *id, zrd_runrow *r, char *err, size_t errlen)
{
    kvj *k = u;
    memset(r, 0, sizeof *r);
    pthread_mutex_lock(&k->mu);
    char key[256];
    snprintf(key, sizeof key, "%s.run", k->run);
    json_t *j = NULL;
    int got = get_json(k, key, &j, NULL, err, errlen);
    int rc = got;
    if (got > 0 && (!jstr(j, "id") || strcmp(jstr(j, "id"), id) != 0)) {
        zri_err(err, errlen,
                "the run of --run %s in the key-value bucket %s is run %s, not %s (resume it "
                "with --resume and --run of the same run)",
                k->run, k->bucket, jstr(j, "id") ? jstr(j, "id") : "?", id);
        rc = -1;
    } else if (got > 0) {
        r->rid = 1;
        r->id = dupz(jstr(j, "id"));
        r->workflow = dupz(jstr(j, "workflow") ? jstr(j, "workflow") : "");
        r->source = dupz(jstr(j, "source") ? jstr(j, "source") : "");
        r->fingerprint = dupz(jstr(j, "fingerprint") ? jstr(j, "fingerprint") : "");
        r->fingerprint_parts =
            dupz(jstr(j, "fingerprint_parts") ? jstr(j, "fingerprint_parts") : "");
        r->mode = dupz(jstr(j, "mode") ? jstr(j, "mode") : "");
        r->cwd = dupz(jstr(j, "cwd"));
        r->executable = dupz(jstr(j, "executable"));
        r->options = dupz(jstr(j, "options") ? jstr(j, "options") : "[]");
        r->nlifelines = (int)jint(j, "nlifelines");
        if (compose(k, &r->status, &r->result, &r->attempts, err, errlen) < 0) {
            char **f[] = {&r->id,          &r->workflow,          &r->source,
                          &r->fingerprint, &r->fingerprint_parts, &r->mode,
                          &r->cwd,         &r->executable,        &r->options};
            for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) free(*f[i]), *f[i] = NULL;
            rc = -1;
        }
    }
    json_decref(j);
    pthread_mutex_unlock(&k->mu);
    return rc;
}

static json_t *life_record(const zrd_liferow *lr, const char *status)
{
    json_t *o = json_object();
    if (!o) zri_oom();
    set_str(o, "name", lr->name);
    set_str(o, "status", status);
    set_str(o, "executable", lr->executable);
    set_str(o, "options", lr->options);
    set_int(o, "attempts", 0);
    set_int(o, "next", 0);
    set_int(o, "events", 0);
    if (json_object_set_new(o, "segments", json_array()) != 0 ||
        json_object_set_new(o, "taken", json_array()) != 0 ||
        json_object_set_new(o, "results", json_object()) != 0)
        zri_oom();
    return o;
}

static int kv_begin(void *u, zrd_runrow *r, int nlives, const zrd_liferow *lives, int nothers,
                    const zrd_liferow *others, int *attempt, char *err, size_t errlen)
{
    kvj *k = u;
    if (nlives != 1 || lives[0].lifeline != k->self) {
        zri_err(err, errlen, "a key-value journal keeps one lifeline's process (internal error)");
        return -1;
    }
    pthread_mutex_lock(&k->mu);
    int rc = -1;
    char key[256];
    json_t *j = NULL, *cur = NULL;
    uint64_t rev = 0;
    if (r->rid == 0) {
        /* a new run: its record, unless another lifeline made it */
        snprintf(key, sizeof key, "%s.run", k->run);
        j = json_object();
        if (!j) zri_oom();
        set_str(j, "id", r->id);
        set_str(j, "workflow", r->workflow);
        set_str(j, "source", r->source);
        set_str(j, "fingerprint", r->fingerprint);
        set_str(j, "fingerprint_parts", r->fingerprint_parts);
        set_str(j, "mode", r->mode);
        set_str(j, "cwd", r->cwd);
        set_str(j, "executable", r->executable);
        set_str(j, "options", r->options);
        set_int(j, "nlifelines", r->nlifelines);
        /* the lifelines' names: a resume starts those that never did */
        json_t *names = json_array();
        if (!names) zri_oom();
        for (int32_t l = 0; l < k->p->nlifelines; l++)
            if (json_array_append_new(names, json_string(k->p->lifelines[l])) != 0) zri_oom();
        if (json_object_set_new(j, "lifelines", names) != 0) zri_oom();
        char journal[160];
        snprintf(journal, sizeof journal, "nats:%s", k->bucket);
        set_str(j, "journal", journal);
        char *text = json_dumps(j, JSON_COMPACT);
        if (!text) zri_oom();
        natsStatus s = kvStore_Create(NULL, k->kv, key, text, (int)strlen(text));
        free(text);
        if (s != NATS_OK) {
            json_t *old = NULL;
            int got = get_json(k, key, &old, NULL, err, errlen);
            if (got <= 0) {
                if (got == 0) kv_error(k, s, "creating", key, err, errlen);
                goto out;
            }
            int same = jstr(old, "id") && strcmp(jstr(old, "id"), r->id) == 0 &&
                       jstr(old, "fingerprint") &&
                       strcmp(jstr(old, "fingerprint"), r->fingerprint) == 0 && jstr(old, "mode") &&
                       strcmp(jstr(old, "mode"), "processes") == 0;
            json_decref(old);
            if (!same) {
                zri_err(err, errlen,
                        "the NATS run %s has a run in the key-value bucket %s already (key %s), "
                        "another run or of another program: choose another --run",
                        k->run, k->bucket, key);
                goto out;
            }
        }
        r->rid = 1;
        /* (the others' records are theirs to write: a lifeline that has
         * not started has none) */
        (void)nothers, (void)others;
    }
    key_life(k, k->self, key, sizeof key);
    int got = get_json(k, key, &cur, &rev, err, errlen);
    if (got < 0) goto out;
    if (got && j && (!jstr(cur, "status") || strcmp(jstr(cur, "status"), "new") != 0)) {
        /* a new run whose lifeline has started before: the id is taken */
        zri_err(err, errlen,
                "a run %s exists already and its lifeline %s has started (key %s in the "
                "key-value bucket %s)",
                k->run, k->p->lifelines[k->self], key, k->bucket);
        goto out;
    }
    if (!got) cur = life_record(&lives[0], "new");
    set_str(cur, "status", "running");
    set_str(cur, "state", "running");
    set_str(cur, "host", k->host);
    set_int(cur, "pid", lives[0].pid);
    set_int(cur, "pid_start", lives[0].pid_start);
    if (lives[0].executable) set_str(cur, "executable", lives[0].executable);
    if (lives[0].options && !jstr(cur, "options")) set_str(cur, "options", lives[0].options);
    set_int(cur, "attempts", jint(cur, "attempts") + 1);
    json_decref(k->rec);
    k->rec = cur;
    cur = NULL;
    k->rev = got ? rev : 0;
    if (put_rec(k, err, errlen) < 0) goto out;
    k->attempt = (int)jint(k->rec, "attempts");
    *attempt = k->attempt;
    r->attempts = k->attempt;
    rc = 0;
out:
    json_decref(j);
    json_decref(cur);
    pthread_mutex_unlock(&k->mu);
    return rc;
}

static int kv_lifeline(void *u, int64_t rid, int32_t l, char **status, int64_t *pid,
                       int64_t *pid_start, char **options, char *err, size_t errlen)
{
    (void)rid;
    kvj *k = u;
    *status = *options = NULL;
    *pid = *pid_start = 0;
    pthread_mutex_lock(&k->mu);
    char key[256];
    key_life(k, l, key, sizeof key);
    json_t *j = NULL;
    int got = get_json(k, key, &j, NULL, err, errlen);
    if (got > 0) {
        *status = dupz(jstr(j, "status"));
        *options = dupz(jstr(j, "options"));
        /* a process on another host cannot be looked at: the revision
         * checks refuse a second writer instead */
        if (jstr(j, "host") && strcmp(jstr(j, "host"), k->host) == 0) {
            *pid = jint(j, "pid");
            *pid_start = jint(j, "pid_start");
        }
    }
    json_decref(j);
    pthread_mutex_unlock(&k->mu);
    return got;
}

static int kv_load(void *u, int64_t rid, int32_t l, zri_buf *out, int64_t *next, char *err,
                   size_t errlen)
{
    (void)rid;
    kvj *k = u;
    if (l != k->self) {
        zri_err(err, errlen, "a key-value journal loads its own lifeline's journal only");
        return -1;
    }
    pthread_mutex_lock(&k->mu);
    int rc = 0;
    *next = jint(k->rec, "next");
    json_t *segs = json_object_get(k->rec, "segments");
    size_t i;
    json_t *seg;
    json_array_foreach(segs, i, seg)
    {
        int64_t a = (int64_t)json_integer_value(json_array_get(seg, 0));
        int64_t first = (int64_t)json_integer_value(json_array_get(seg, 1));
        int64_t count = (int64_t)json_integer_value(json_array_get(seg, 2));
        for (int64_t c = first; c < first + count && rc == 0; c++) {
            char key[320];
            snprintf(key, sizeof key, "%s.C.%s.%" PRId64 ".%" PRId64, k->run, k->p->lifelines[l], a,
                     c);
            kvEntry *e = NULL;
            natsStatus s = kvStore_Get(&e, k->kv, key);
            if (s != NATS_OK) {
                if (s == NATS_NOT_FOUND)
                    zri_err(err, errlen,
                            "the key-value bucket %s is damaged: chunk %s of the journal is "
                            "missing",
                            k->bucket, key);
                else
                    kv_error(k, s, "reading", key, err, errlen);
                rc = -1;
                break;
            }
            zri_buf_add(out, kvEntry_Value(e), (size_t)kvEntry_ValueLen(e));
            kvEntry_Destroy(e);
        }
        if (rc) break;
    }
    pthread_mutex_unlock(&k->mu);
    return rc;
}

/* The record's taken entries: (sender, chan) → seq, the larger kept. */
static void merge_taken(json_t *arr, const zrd_taken *t)
{
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e)
    {
        if (json_integer_value(json_array_get(e, 0)) == t->sender &&
            json_integer_value(json_array_get(e, 1)) == t->chan) {
            if (json_integer_value(json_array_get(e, 2)) < t->seq)
                json_array_set_new(e, 2, json_integer(t->seq));
            return;
        }
    }
    json_t *n = json_pack("[iiI]", (int)t->sender, (int)t->chan, (json_int_t)t->seq);
    if (!n || json_array_append_new(arr, n) != 0) zri_oom();
}

/* Whether the run's record says it was cancelled (zgc runs cancel
 * --nats), read at most once a second (under k->mu). */
static int cancelled_now(kvj *k)
{
    double now = now_s();
    if (now - k->cancel_checked < 1.0) return 0;
    k->cancel_checked = now;
    char key[256], err[256];
    snprintf(key, sizeof key, "%s.run", k->run);
    json_t *j = NULL;
    int cancelled = get_json(k, key, &j, NULL, err, sizeof err) > 0 &&
                    json_is_true(json_object_get(j, "cancelled"));
    json_decref(j);
    return cancelled;
}

static int kv_commit(void *u, int64_t rid, int n, const zrd_chunk *chunks, char **status, char *err,
                     size_t errlen)
{
    (void)rid;
    kvj *k = u;
    *status = NULL;
    pthread_mutex_lock(&k->mu);
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        const zrd_chunk *c = &chunks[i];
        if (c->lifeline != k->self) continue;
        if (c->len) {
            char key[320];
            snprintf(key, sizeof key, "%s.C.%s.%d.%" PRId64, k->run, k->p->lifelines[k->self],
                     k->attempt, c->chunk);
            natsStatus s = kvStore_Put(NULL, k->kv, key, c->data, (int)c->len);
            if (s != NATS_OK) {
                kv_error(k, s, "writing", key, err, errlen);
                rc = -1;
                break;
            }
            json_t *segs = json_object_get(k->rec, "segments");
            json_t *last = json_array_get(segs, json_array_size(segs) - 1);
            if (last && json_integer_value(json_array_get(last, 0)) == k->attempt &&
                json_integer_value(json_array_get(last, 1)) +
                        json_integer_value(json_array_get(last, 2)) ==
                    c->chunk) {
                json_array_set_new(last, 2,
                                   json_integer(json_integer_value(json_array_get(last, 2)) + 1));
            } else {
                json_t *seg = json_pack("[iIi]", k->attempt, (json_int_t)c->chunk, 1);
                if (!seg || json_array_append_new(segs, seg) != 0) zri_oom();
            }
            set_int(k->rec, "next", c->chunk + 1);
        }
        set_int(k->rec, "events", c->events);
        if (c->recent) set_str(k->rec, "recent", c->recent);
        for (int t = 0; t < c->ntaken; t++)
            merge_taken(json_object_get(k->rec, "taken"), &c->taken[t]);
        rc = put_rec(k, err, errlen);
    }
    if (rc == 0) *status = dupz(cancelled_now(k) ? "cancelled" : "running");
    pthread_mutex_unlock(&k->mu);
    return rc;
}

static int kv_taken(void *u, int64_t rid, int32_t sender, zrd_taken **out, int *n, char *err,
                    size_t errlen)
{
    (void)rid;
    kvj *k = u;
    *out = NULL;
    *n = 0;
    pthread_mutex_lock(&k->mu);
    int rc = 0;
    for (int32_t l = 0; l < k->p->nlifelines && rc == 0; l++) {
        if (l == sender) continue;
        char key[256];
        key_life(k, l, key, sizeof key);
        json_t *j = NULL;
        int got = get_json(k, key, &j, NULL, err, errlen);
        if (got < 0) rc = -1;
        size_t i;
        json_t *e;
        json_array_foreach(json_object_get(j, "taken"), i, e)
        {
            if (json_integer_value(json_array_get(e, 0)) != sender) continue;
            *out = zri_xrealloc(*out, (size_t)(*n + 1) * sizeof **out);
            (*out)[*n].sender = l; /* here: the receiver */
            (*out)[*n].chan = (int32_t)json_integer_value(json_array_get(e, 1));
            (*out)[*n].seq = (int64_t)json_integer_value(json_array_get(e, 2));
            (*n)++;
        }
        json_decref(j);
    }
    pthread_mutex_unlock(&k->mu);
    return rc;
}

static int kv_status(void *u, int64_t rid, char **status, char *err, size_t errlen)
{
    (void)rid;
    kvj *k = u;
    pthread_mutex_lock(&k->mu);
    int rc = compose(k, status, NULL, NULL, err, errlen);
    pthread_mutex_unlock(&k->mu);
    return rc;
}

static int kv_finish(void *u, int64_t rid, int nlives, const int32_t *lives, int per_lifeline,
                     const zrd_finish_info *fi, char *err, size_t errlen)
{
    (void)rid, (void)nlives, (void)lives, (void)per_lifeline;
    kvj *k = u;
    pthread_mutex_lock(&k->mu);
    set_str(k->rec, "status", fi->status);
    if (fi->state) set_str(k->rec, "state", fi->state);
    set_str(k->rec, "error", fi->error);
    set_int(k->rec, "nresults", fi->nresults);
    if (json_object_set_new(k->rec, "tuple", json_boolean(fi->result_tuple)) != 0) zri_oom();
    json_t *res = json_object_get(k->rec, "results");
    for (int i = 0; i < fi->nres; i++) {
        char idx[16];
        snprintf(idx, sizeof idx, "%d", (int)fi->res_index[i]);
        set_str(res, idx, fi->res_text[i]);
    }
    int rc = put_rec(k, err, errlen);
    pthread_mutex_unlock(&k->mu);
    return rc;
}

static int kv_state(void *u, int64_t rid, int32_t l, const char *state, char *err, size_t errlen)
{
    (void)rid;
    kvj *k = u;
    if (l != k->self) return 0;
    pthread_mutex_lock(&k->mu);
    set_str(k->rec, "state", state);
    int rc = put_rec(k, err, errlen);
    pthread_mutex_unlock(&k->mu);
    return rc;
}

/* Human tasks: RUN.T.<N>, task N of the run (JSON: its lifeline, action,
 * idempotency key, kind, prompt, answer type, members, current text,
 * status pending, answered or cancelled, the answer, times), created
 * here and answered by `zgc answer --nats` with a revision check. */

/* The numbers of the run's tasks (the keys RUN.T.*): 0 with *out, or -1. */
static int task_numbers(kvj *k, int64_t **out, int *n, char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    char pattern[256];
    snprintf(pattern, sizeof pattern, "%s.T.*", k->run);
    kvWatchOptions wo;
    kvWatchOptions_Init(&wo);
    wo.IgnoreDeletes = true;
    wo.MetaOnly = true;
    kvWatcher *w = NULL;
    natsStatus s = kvStore_Watch(&w, k->kv, pattern, &wo);
    while (s == NATS_OK) {
        kvEntry *e = NULL;
        s = kvWatcher_Next(&e, w, 5000);
        if (s != NATS_OK || !e) break; /* NULL: every key came */
        const char *dot = strrchr(kvEntry_Key(e), '.');
        *out = zri_xrealloc(*out, (size_t)(*n + 1) * sizeof **out);
        (*out)[(*n)++] = dot ? strtoll(dot + 1, NULL, 10) : 0;
        kvEntry_Destroy(e);
    }
    kvWatcher_Destroy(w);
    if (s != NATS_OK) {
        kv_error(k, s, "listing the tasks", pattern, err, errlen);
        free(*out);
        *out = NULL;
        *n = 0;
        return -1;
    }
    return 0;
}

static void key_task(const kvj *k, int64_t task, char *out, size_t n)
{
    snprintf(out, n, "%s.T.%" PRId64, k->run, task);
}

static int kv_task(void *u, int64_t rid, const zri_task *t, int64_t *task, char **answer,
                   int *created, char *err, size_t errlen)
{
    (void)rid;
    kvj *k = u;
    *answer = NULL;
    *created = 0;
    pthread_mutex_lock(&k->mu);
    int rc = -1;
    for (int tries = 0; tries < 20; tries++) {
        int64_t *nums = NULL, next = 1;
        int n = 0;
        if (task_numbers(k, &nums, &n, err, errlen) < 0) break;
        int found = 0;
        for (int i = 0; i < n && !found && rc != 0; i++) {
            char key[256];
            key_task(k, nums[i], key, sizeof key);
            json_t *j = NULL;
            int got = get_json(k, key, &j, NULL, err, errlen);
            if (got < 0) {
                free(nums);
                json_decref(j);
                goto out;
            }
            if (nums[i] >= next) next = nums[i] + 1;
            if (got && jstr(j, "key") && t->key && strcmp(jstr(j, "key"), t->key) == 0) {
                /* the same call's task (a resume): its answer, if any */
                *task = nums[i];
                if (jstr(j, "status") && strcmp(jstr(j, "status"), "answered") == 0)
                    *answer = dupz(jstr(j, "answer"));
                found = 1;
            }
            json_decref(j);
        }
        free(nums);
        if (found) {
            rc = 0;
            break;
        }
        json_t *j = json_object();
        if (!j) zri_oom();
        set_int(j, "task", next);
        set_str(j, "lifeline", t->lifeline);
        set_str(j, "action", t->action);
        set_str(j, "key", t->key);
        set_str(j, "kind", t->kind);
        set_str(j, "prompt", t->prompt);
        set_str(j, "type", t->type);
        if (t->nmembers > 0) {
            zri_buf members = {0};
            zri_buf_puts(&members, "[");
            for (int i = 0; i < t->nmembers; i++) {
                if (i) zri_buf_puts(&members, ",");
                zri_buf_json_string(&members, t->members[i], strlen(t->members[i]));
            }
            zri_buf_puts(&members, "]");
            set_str(j, "members", members.data);
            zri_buf_free(&members);
        }
        set_str(j, "current", t->current);
        set_str(j, "status", "pending");
        if (json_object_set_new(j, "created", json_real((double)time(NULL))) != 0) zri_oom();
        char *text = json_dumps(j, JSON_COMPACT);
        json_decref(j);
        if (!text) zri_oom();
        char key[256];
        key_task(k, next, key, sizeof key);
        natsStatus s = kvStore_Create(NULL, k->kv, key, text, (int)strlen(text));
        free(text);
        if (s == NATS_OK) {
            *task = next;
            *created = 1;
            rc = 0;
            break;
        }
        natsStatus ls;
        const char *txt = nats_GetLastError(&ls);
        if (!(txt && (strstr(txt, "wrong last sequence") || strstr(txt, "key exists")))) {
            kv_error(k, s, "creating", key, err, errlen);
            break;
        }
        /* another lifeline took the number meanwhile: count again */
    }
    if (rc != 0 && !*err)
        zri_err(err, errlen, "cannot number a task of run %s in the key-value bucket %s", k->run,
                k->bucket);
out:
    pthread_mutex_unlock(&k->mu);
    return rc;
}

static int kv_task_poll(void *u, int64_t rid, int64_t task, char **answer, char **run_status,
                        char *err, size_t errlen)
{
    (void)rid;
    kvj *k = u;
    *answer = NULL;
    *run_status = NULL;
    pthread_mutex_lock(&k->mu);
    char key[256];
    key_task(k, task, key, sizeof key);
    json_t *j = NULL;
    int got = get_json(k, key, &j, NULL, err, errlen);
    int rc = got < 0 ? -1 : 0;
    if (got == 0) {
        zri_err(err, errlen, "the key-value bucket %s is damaged: task %s is missing", k->bucket,
                key);
        rc = -1;
    }
    if (got > 0 && jstr(j, "status") && strcmp(jstr(j, "status"), "answered") == 0)
        *answer = dupz(jstr(j, "answer"));
    json_decref(j);
    if (rc == 0) {
        /* the run's status: cancelled, or still going */
        char rkey[256];
        snprintf(rkey, sizeof rkey, "%s.run", k->run);
        json_t *r = NULL;
        if (get_json(k, rkey, &r, NULL, err, errlen) < 0) {
            free(*answer);
            *answer = NULL;
            rc = -1;
        } else {
            *run_status =
                dupz(json_is_true(json_object_get(r, "cancelled")) ? "cancelled" : "waiting");
        }
        json_decref(r);
    }
    pthread_mutex_unlock(&k->mu);
    return rc;
}

static void kv_close(void *u)
{
    kvj *k = u;
    if (!k) return;
    kvStore_Destroy(k->kv);
    jsCtx_Destroy(k->js);
    if (k->nc) {
        natsConnection_FlushTimeout(k->nc, 2000);
        natsConnection_Destroy(k->nc);
    }
    json_decref(k->rec);
    pthread_mutex_destroy(&k->mu);
    pthread_mutex_destroy(&k->elock);
    free(k);
}

/* ---- open ----------------------------------------------------------------------- */

/* The text of a failed call on k's connection, "STATUS: the client's last
 * error"; 1 when the server refused it for permissions. */
static int conn_error(kvj *k, natsStatus s, char *out, size_t n)
{
    const char *txt = NULL;
    natsConnection_GetLastError(k->nc, &txt);
    snprintf(out, n, "%s%s%s", natsStatus_GetText(s), txt && *txt ? ": " : "",
             txt && *txt ? txt : "");
    return txt && strstr(txt, "ermission") != NULL;
}

natsStatus zri_nats_connect(natsConnection **nc, const zri_nats_config *c, const char *name,
                            natsErrHandler on_error, void *u)
{
    natsOptions *o = NULL;
    natsStatus s = natsOptions_Create(&o);
    char *copy = zri_xstrndup(c->servers, strlen(c->servers));
    const char *urls[64];
    int nurls = 0;
    for (char *save = NULL, *t = strtok_r(copy, ",", &save); t && nurls < 64;
         t = strtok_r(NULL, ",", &save))
        if (*t) urls[nurls++] = t;
    if (s == NATS_OK) s = natsOptions_SetServers(o, urls, nurls);
    free(copy);
    if (s == NATS_OK) s = natsOptions_SetName(o, name);
    if (s == NATS_OK) s = natsOptions_SetTimeout(o, 5000);
    if (s == NATS_OK) s = natsOptions_SetMaxReconnect(o, 480);
    if (s == NATS_OK) s = natsOptions_SetReconnectWait(o, KV_RETRY_MS);
    if (s == NATS_OK) s = natsOptions_SetSendAsap(o, true);
    if (s == NATS_OK && on_error) s = natsOptions_SetErrorHandler(o, on_error, u);
    if (s == NATS_OK) s = zri_nats_auth_options(o, c);
    if (s == NATS_OK) s = zri_nats_dial(nc, o, c);
    natsOptions_Destroy(o);
    return s;
}

void *zri_nats_store_connect(const zri_nats_config *c, char *err, size_t errlen)
{
    natsConnection *nc = NULL;
    char name[256];
    snprintf(name, sizeof name, "zgc %s stores", c->run ? c->run : "-");
    natsStatus s = zri_nats_connect(&nc, c, name, NULL, NULL);
    if (s != NATS_OK) {
        const char *txt = nats_GetLastError(NULL);
        const char *why = s == NATS_CONNECTION_AUTH_FAILED || s == NATS_NOT_PERMITTED
                              ? "authorization failed (wrong or missing credentials)"
                              : natsStatus_GetText(s);
        zri_err(err, errlen, "the stores: cannot connect to the NATS server %s: %s%s%s", c->servers,
                why, txt && *txt ? ": " : "", txt && *txt ? txt : "");
        return NULL;
    }
    return nc;
}

void zri_nats_store_close(void *conn)
{
    if (conn) natsConnection_Destroy((natsConnection *)conn);
}

/* Connects and opens the bucket (see zri_nats_kv_open).  0 with *out, or
 * -1 with a message; *missing is set when the bucket does not exist and
 * `create` is off. */
static int kvj_open(const zgrt_program *p, int self, const zri_nats_config *c, const char *bucket,
                    int create, int *missing, kvj **out, char *err, size_t errlen)
{
    *missing = 0;
    *out = NULL;
    if (!zri_nats_run_ok(c->run)) {
        zri_err(err, errlen, "bad run id '%s' (1 to %d letters, digits, '_' or '-')", c->run,
                ZRI_NATS_RUN_MAX);
        return -1;
    }
    const char *bn = bucket ? bucket : "-"; /* (NULL: no bucket to open) */
    for (const char *b = bn; *b; b++)
        if (!((*b >= 'a' && *b <= 'z') || (*b >= 'A' && *b <= 'Z') || (*b >= '0' && *b <= '9') ||
              *b == '_' || *b == '-') ||
            b - bn > 64) {
            zri_err(err, errlen,
                    "--journal nats:%s: a bucket name is 1 to 64 letters, digits, '_' or '-'",
                    bucket);
            return -1;
        }
    if (bucket && !*bucket) {
        zri_err(err, errlen, "--journal nats: expects a bucket name after the colon");
        return -1;
    }
    kvj *k = zri_xcalloc(1, sizeof *k);
    k->p = p, k->self = self;
    pthread_mutex_init(&k->mu, NULL);
    pthread_mutex_init(&k->elock, NULL);
    snprintf(k->run, sizeof k->run, "%s", c->run);
    snprintf(k->bucket, sizeof k->bucket, "%s", bucket ? bucket : "-");
    snprintf(k->url, sizeof k->url, "%s", c->servers);
    snprintf(k->where, sizeof k->where, "key-value bucket %s on %s", k->bucket, c->servers);
    if (gethostname(k->host, sizeof k->host - 1) != 0) snprintf(k->host, sizeof k->host, "?");

    char name[256];
    snprintf(name, sizeof name, "zgc %s %s journal", k->run, p->lifelines[self]);
    natsStatus s = zri_nats_connect(&k->nc, c, name, on_async_error, k);
    if (s != NATS_OK) {
        natsStatus ls;
        const char *txt = nats_GetLastError(&ls);
        const char *why = s == NATS_CONNECTION_AUTH_FAILED || s == NATS_NOT_PERMITTED
                              ? "authorization failed (wrong or missing credentials)"
                              : natsStatus_GetText(s);
        zri_err(err, errlen, "--journal nats: cannot connect to the NATS server %s: %s%s%s", k->url,
                why, txt && *txt ? ": " : "", txt && *txt ? txt : "");
        kv_close(k);
        return -1;
    }
    s = natsConnection_JetStream(&k->js, k->nc, NULL);
    double deadline = now_s() + KV_SETUP_S;
    while (s == NATS_OK && bucket) {
        s = js_KeyValue(&k->kv, k->js, bucket);
        if (s != NATS_NOT_FOUND) break;
        if (!create) {
            *missing = 1;
            zri_err(err, errlen,
                    "--journal nats: the key-value bucket %s does not exist on the NATS server %s "
                    "(a resumed run's journals are there: the same server and bucket as the run "
                    "started with?)",
                    bucket, k->url);
            kv_close(k);
            return -1;
        }
        /* missing: created (history 1: a journal needs no old values) */
        kvConfig kc;
        kvConfig_Init(&kc);
        kc.Bucket = bucket;
        kc.History = 1;
        kc.StorageType = js_FileStorage;
        kc.Replicas = c->replicas > 0 ? c->replicas : 1;
        s = js_CreateKeyValue(&k->kv, k->js, &kc);
        if (s == NATS_OK) break;
        char why[600];
        int permission = conn_error(k, s, why, sizeof why);
        if (permission || now_s() > deadline) {
            zri_err(err, errlen,
                    "--journal nats: the key-value bucket %s does not exist on the NATS server "
                    "%s and cannot be created (%s): create it (nats kv add %s --history 1) "
                    "or give this user the permission",
                    bucket, k->url, why, bucket);
            kv_close(k);
            return -1;
        }
        struct timespec w = {0, KV_RETRY_MS * 1000000L};
        nanosleep(&w, NULL);
        s = NATS_OK;
    }
    if (s != NATS_OK) {
        char why[600];
        conn_error(k, s, why, sizeof why);
        zri_err(err, errlen,
                "--journal nats: cannot open %s%s on the NATS server %s (is JetStream enabled: "
                "nats-server -js? may this user use it?): %s",
                bucket ? "the key-value bucket " : "JetStream", bucket ? bucket : "", k->url, why);
        kv_close(k);
        return -1;
    }
    *out = k;
    return 0;
}

int zri_nats_kv_open(const zgrt_program *p, int self, const zri_nats_config *c, const char *bucket,
                     int create, zrd_backend *be, char *err, size_t errlen)
{
    kvj *k = NULL;
    int missing = 0;
    if (kvj_open(p, self, c, bucket, create, &missing, &k, err, errlen) < 0) return -1;
    *be = (zrd_backend){.u = k,
                        .where = kv_where,
                        .find = kv_find,
                        .begin = kv_begin,
                        .lifeline = kv_lifeline,
                        .load = kv_load,
                        .commit = kv_commit,
                        .taken = kv_taken,
                        .status = kv_status,
                        .finish = kv_finish,
                        .state = kv_state,
                        .task = kv_task,
                        .task_poll = kv_task_poll,
                        .close = kv_close};
    return 0;
}

int zri_nats_kv_find_run(const zgrt_program *p, int self, const zri_nats_config *c, char *bucket,
                         size_t bucketlen, char *err, size_t errlen)
{
    kvj *k = NULL;
    int missing = 0;
    if (kvj_open(p, self, c, NULL, 0, &missing, &k, err, errlen) < 0) return -1;
    /* every key-value bucket is a stream KV_<bucket> of subjects
     * $KV.<bucket>.> */
    char filter[160];
    snprintf(filter, sizeof filter, "$KV.*.%s.run", k->run);
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.Stream.Info.SubjectsFilter = filter;
    jsStreamNamesList *names = NULL;
    jsErrCode jerr = 0;
    natsStatus s = js_StreamNames(&names, k->js, &jo, &jerr);
    int found = 0;
    if (s == NATS_NOT_FOUND) s = NATS_OK; /* no stream at all */
    if (s != NATS_OK) kv_error(k, s, "listing the buckets for run", k->run, err, errlen);
    for (int i = 0; s == NATS_OK && names && i < names->Count && !found; i++) {
        const char *name = names->List[i];
        if (strncmp(name, "KV_", 3) != 0) continue;
        kvStore *kv = NULL;
        if (js_KeyValue(&kv, k->js, name + 3) != NATS_OK) continue;
        char key[256];
        snprintf(key, sizeof key, "%s.run", k->run);
        kvEntry *e = NULL;
        natsStatus g = kvStore_Get(&e, kv, key);
        if (g == NATS_OK) {
            snprintf(bucket, bucketlen, "%s", name + 3);
            found = 1;
        }
        kvEntry_Destroy(e);
        kvStore_Destroy(kv);
    }
    jsStreamNamesList_Destroy(names);
    kv_close(k);
    return s == NATS_OK ? found : -1;
}

int zri_nats_kv_has_run(const zgrt_program *p, int self, const zri_nats_config *c,
                        const char *bucket, char *err, size_t errlen)
{
    kvj *k = NULL;
    int missing = 0;
    if (kvj_open(p, self, c, bucket, 0, &missing, &k, err, errlen) < 0) return missing ? 0 : -1;
    char key[256];
    snprintf(key, sizeof key, "%s.run", k->run);
    json_t *j = NULL;
    int got = get_json(k, key, &j, NULL, err, errlen);
    json_decref(j);
    kv_close(k);
    return got;
}
