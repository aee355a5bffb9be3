/* kvstore.c — runs journaled in a JetStream key-value bucket, for `zgc
 * runs` (kvstore.h).  Reads RUN.run and RUN.L.<L> as runtime/nats/kv.c
 * writes them; a cancel adds "cancelled" to RUN.run with a revision
 * check.  The run's status is composed as the lifelines' processes
 * compose it: cancelled (the record says so), else one lifeline failed:
 * failed; one cancelled: cancelled; one waiting: waiting; all done: done;
 * else running. */
#define _GNU_SOURCE
#include "kvstore.h"

#include <jansson.h>
#include <nats/nats.h>
#include <openssl/evp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WAIT_MS 5000

struct ZkStore {
    natsConnection *nc;
    jsCtx *js;
    kvStore *kv;
    char bucket[128];
    char where[768];
    char host[256];
};

static void nats_error(char *err, const char *what, natsStatus s)
{
    const char *txt = nats_GetLastError(NULL);
    snprintf(err, ZS_ERRLEN, "%s: %s%s%s", what, natsStatus_GetText(s), txt && *txt ? ": " : "",
             txt && *txt ? txt : "");
}

static char *dupz(const char *s) { return s ? strdup(s) : NULL; }

static const char *jstr(json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* ---- authentication ------------------------------------------------------- */

/* The first line of a small private file (a token, a seed), malloc'd, or
 * NULL with a message.  (runtime/nats/nats.c reads them the same way; the
 * driver does not link the runtime.) */
static char *read_line_file(const char *path, const char *what, char *err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, ZS_ERRLEN, "cannot read the %s file %s: %s", what, path, strerror(errno));
        return NULL;
    }
    char buf[4096];
    size_t k = fread(buf, 1, sizeof buf - 1, f);
    int bad = ferror(f);
    fclose(f);
    buf[k] = '\0';
    size_t len = strcspn(buf, "\r\n");
    char *line = bad || len == 0 ? NULL : strndup(buf, len);
    explicit_bzero(buf, sizeof buf);
    if (!line)
        snprintf(err, ZS_ERRLEN, bad ? "cannot read the %s file %s" : "the %s file %s is empty",
                 what, path);
    return line;
}

/* NKeys: base32 (RFC 4648, no padding) of a prefix, the key and a CRC-16
 * (XMODEM, little-endian); a user seed "SU…", its public key "U…". */
#define NKEY_PREFIX_SEED (18u << 3)
#define NKEY_PREFIX_USER (20u << 3)

static uint16_t crc16(const uint8_t *d, size_t n)
{
    uint16_t crc = 0;
    for (size_t i = 0; i < n; i++) {
        crc ^= (uint16_t)(d[i] << 8);
        for (int b = 0; b < 8; b++)
            crc = (crc & 0x8000) ? (uint16_t)(crc << 1 ^ 0x1021) : (uint16_t)(crc << 1);
    }
    return crc;
}

static const char B32[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/* The public key (56 characters) of the NKey user seed in file seed_file:
 * 0, or -1 with a message. */
static int nkey_public(const char *seed_file, char pub[57], char *err)
{
    char *seed = read_line_file(seed_file, "NKey seed", err);
    if (!seed) return -1;
    uint8_t raw[64];
    size_t n = 0;
    uint32_t acc = 0;
    int bits = 0, ok = 1;
    for (const char *c = seed; *c && ok; c++) {
        const char *at = strchr(B32, *c);
        if (!at || n == sizeof raw) {
            ok = 0;
            break;
        }
        acc = acc << 5 | (uint32_t)(at - B32);
        if ((bits += 5) >= 8) raw[n++] = (uint8_t)(acc >> (bits - 8)), bits -= 8;
    }
    explicit_bzero(seed, strlen(seed));
    free(seed);
    ok = ok && n == 36 && (raw[0] & 0xF8) == NKEY_PREFIX_SEED &&
         (uint8_t)((raw[0] & 7) << 5 | (raw[1] & 0xF8) >> 3) == NKEY_PREFIX_USER &&
         crc16(raw, 34) == (uint16_t)(raw[34] | raw[35] << 8);
    EVP_PKEY *pk = ok ? EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, raw + 2, 32) : NULL;
    explicit_bzero(raw, sizeof raw);
    uint8_t key[35];
    size_t klen = 32;
    if (!pk || EVP_PKEY_get_raw_public_key(pk, key + 1, &klen) != 1 || klen != 32) {
        EVP_PKEY_free(pk);
        snprintf(err, ZS_ERRLEN, "%s does not hold an NKey user seed (SU…)", seed_file);
        return -1;
    }
    EVP_PKEY_free(pk);
    key[0] = NKEY_PREFIX_USER;
    uint16_t c = crc16(key, 33);
    key[33] = (uint8_t)(c & 0xFF), key[34] = (uint8_t)(c >> 8);
    size_t k = 0;
    acc = 0, bits = 0;
    for (size_t i = 0; i < sizeof key; i++) {
        acc = acc << 8 | key[i];
        for (bits += 8; bits >= 5; bits -= 5) pub[k++] = B32[(acc >> (bits - 5)) & 31];
    }
    if (bits > 0) pub[k++] = B32[(acc << (5 - bits)) & 31];
    pub[k] = '\0';
    return 0;
}

/* The options of auth on o: 0, or -1 with a message (a file that cannot
 * be read, a password missing, a certificate without its key). */
static int set_auth(natsOptions *o, const ZkAuth *a, char *err)
{
    if (!a) return 0;
    if ((a->cert != NULL) != (a->key != NULL)) {
        snprintf(err, ZS_ERRLEN,
                 "--nats-cert and --nats-key go together (a client certificate and its key)");
        return -1;
    }
    const char *password = getenv("ZGC_NATS_PASSWORD");
    if (a->user && !password) {
        snprintf(err, ZS_ERRLEN, "--nats-user %s needs its password in $ZGC_NATS_PASSWORD",
                 a->user);
        return -1;
    }
    char *token = NULL, pub[57];
    if (a->token_file) {
        if (!(token = read_line_file(a->token_file, "token", err))) return -1;
    } else if (getenv("ZGC_NATS_TOKEN") && *getenv("ZGC_NATS_TOKEN")) {
        token = strdup(getenv("ZGC_NATS_TOKEN"));
    }
    if (a->nkey && nkey_public(a->nkey, pub, err) < 0) {
        if (token) explicit_bzero(token, strlen(token));
        free(token);
        return -1;
    }
    natsStatus s = NATS_OK;
    const char *what = "";
    if (a->creds && (s = natsOptions_SetUserCredentialsFromFiles(o, a->creds, NULL)) != NATS_OK)
        what = "--nats-creds";
    if (s == NATS_OK && a->user && (s = natsOptions_SetUserInfo(o, a->user, password)) != NATS_OK)
        what = "--nats-user";
    if (s == NATS_OK && token && (s = natsOptions_SetToken(o, token)) != NATS_OK)
        what = "the token";
    if (s == NATS_OK && a->nkey && (s = natsOptions_SetNKeyFromSeed(o, pub, a->nkey)) != NATS_OK)
        what = "--nats-nkey";
    if (s == NATS_OK && (a->ca || a->cert) && (s = natsOptions_SetSecure(o, true)) != NATS_OK)
        what = "TLS";
    if (s == NATS_OK && a->ca && (s = natsOptions_LoadCATrustedCertificates(o, a->ca)) != NATS_OK)
        what = "--nats-ca";
    if (s == NATS_OK && a->cert &&
        (s = natsOptions_LoadCertificatesChain(o, a->cert, a->key)) != NATS_OK)
        what = "--nats-cert/--nats-key";
    if (token) explicit_bzero(token, strlen(token));
    free(token);
    if (s != NATS_OK) {
        char w[128];
        snprintf(w, sizeof w, "cannot use %s", what);
        nats_error(err, w, s);
        return -1;
    }
    return 0;
}

ZkStore *zk_open(const char *url, const ZkAuth *auth, const char *bucket, char *err)
{
    ZkStore *k = calloc(1, sizeof *k);
    if (!k) {
        snprintf(err, ZS_ERRLEN, "out of memory");
        return NULL;
    }
    snprintf(k->bucket, sizeof k->bucket, "%s", bucket);
    snprintf(k->where, sizeof k->where, "key-value bucket %s on %s", bucket, url);
    if (gethostname(k->host, sizeof k->host - 1) != 0) snprintf(k->host, sizeof k->host, "?");
    natsOptions *o = NULL;
    natsStatus s = natsOptions_Create(&o);
    char *copy = strdup(url);
    const char *urls[64];
    int nurls = 0;
    for (char *save = NULL, *t = copy ? strtok_r(copy, ",", &save) : NULL; t && nurls < 64;
         t = strtok_r(NULL, ",", &save))
        if (*t) urls[nurls++] = t;
    if (s == NATS_OK && nurls == 0) s = NATS_INVALID_ARG;
    if (s == NATS_OK) s = natsOptions_SetServers(o, urls, nurls);
    free(copy);
    if (s == NATS_OK) s = natsOptions_SetName(o, "zgc runs");
    if (s == NATS_OK) s = natsOptions_SetTimeout(o, WAIT_MS);
    if (s == NATS_OK && set_auth(o, auth, err) < 0) {
        natsOptions_Destroy(o);
        zk_close(k);
        return NULL;
    }
    if (s == NATS_OK) s = natsConnection_Connect(&k->nc, o);
    /* a key-signed login refused is tried twice more (runtime/nats/nats.c,
     * zri_nats_dial: the client sometimes leaves the signature out) */
    for (int i = 1; i < 3 && (auth->nkey || auth->creds) &&
                    (s == NATS_CONNECTION_AUTH_FAILED || s == NATS_NOT_PERMITTED);
         i++) {
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
        s = natsConnection_Connect(&k->nc, o);
    }
    natsOptions_Destroy(o);
    char what[700];
    if (s != NATS_OK) {
        const char *why =
            s == NATS_CONNECTION_AUTH_FAILED || s == NATS_NOT_PERMITTED
                ? " (authorization failed: wrong or missing credentials: --nats-creds, "
                  "--nats-user with $ZGC_NATS_PASSWORD, --nats-token-file or $ZGC_NATS_TOKEN, "
                  "--nats-nkey)"
            : s == NATS_SSL_ERROR || s == NATS_SECURE_CONNECTION_REQUIRED ||
                    s == NATS_SECURE_CONNECTION_WANTED
                ? " (TLS failed: check --nats-ca, --nats-cert and --nats-key against the "
                  "server's certificates)"
                : "";
        snprintf(what, sizeof what, "cannot connect to the NATS server %s%s", url, why);
        nats_error(err, what, s);
        zk_close(k);
        return NULL;
    }
    s = natsConnection_JetStream(&k->js, k->nc, NULL);
    if (s == NATS_OK) s = js_KeyValue(&k->kv, k->js, bucket);
    if (s != NATS_OK) {
        if (s == NATS_NOT_FOUND) {
            snprintf(err, ZS_ERRLEN,
                     "the key-value bucket %s does not exist on the NATS server %s (no run has "
                     "journaled there: --journal nats:BUCKET names another)",
                     bucket, url);
        } else {
            snprintf(what, sizeof what,
                     "cannot open the key-value bucket %s on the NATS server %s (JetStream "
                     "enabled? may this user use it?)",
                     bucket, url);
            nats_error(err, what, s);
        }
        zk_close(k);
        return NULL;
    }
    return k;
}

void zk_close(ZkStore *k)
{
    if (!k) return;
    kvStore_Destroy(k->kv);
    jsCtx_Destroy(k->js);
    natsConnection_Destroy(k->nc);
    free(k);
}

const char *zk_where(const ZkStore *k) { return k->where; }

/* The JSON object of key: 1 (with its revision and time), 0 (none), -1. */
static int get_json(ZkStore *k, const char *key, json_t **out, uint64_t *rev, double *created,
                    char *err)
{
    kvEntry *e = NULL;
    *out = NULL;
    natsStatus s = kvStore_Get(&e, k->kv, key);
    if (s == NATS_NOT_FOUND) return 0;
    if (s != NATS_OK) {
        char what[1200];
        snprintf(what, sizeof what, "reading %s in the %s", key, k->where);
        nats_error(err, what, s);
        return -1;
    }
    json_t *j = json_loadb(kvEntry_Value(e), (size_t)kvEntry_ValueLen(e), 0, NULL);
    if (rev) *rev = kvEntry_Revision(e);
    if (created) *created = (double)kvEntry_Created(e) / 1e9;
    kvEntry_Destroy(e);
    if (!json_is_object(j)) {
        json_decref(j);
        snprintf(err, ZS_ERRLEN, "the %s is damaged: %s is not a JSON object", k->where, key);
        return -1;
    }
    *out = j;
    return 1;
}

/* The keys matching pattern (a wildcard), sorted: a watcher's initial
 * values, metadata only. */
static int keys(ZkStore *k, const char *pattern, char ***out, int *n, char *err)
{
    *out = NULL;
    *n = 0;
    kvWatchOptions wo;
    kvWatchOptions_Init(&wo);
    wo.IgnoreDeletes = true;
    wo.MetaOnly = true;
    kvWatcher *w = NULL;
    natsStatus s = kvStore_Watch(&w, k->kv, pattern, &wo);
    while (s == NATS_OK) {
        kvEntry *e = NULL;
        s = kvWatcher_Next(&e, w, WAIT_MS);
        if (s != NATS_OK || !e) break; /* NULL: every initial value came */
        char **grown = realloc(*out, (size_t)(*n + 1) * sizeof **out);
        if (!grown) {
            kvEntry_Destroy(e);
            s = NATS_NO_MEMORY;
            break;
        }
        *out = grown;
        (*out)[(*n)++] = strdup(kvEntry_Key(e));
        kvEntry_Destroy(e);
    }
    kvWatcher_Destroy(w);
    if (s != NATS_OK) {
        char what[1200];
        snprintf(what, sizeof what, "listing the keys %s of the %s", pattern, k->where);
        nats_error(err, what, s);
        for (int i = 0; i < *n; i++) free((*out)[i]);
        free(*out);
        *out = NULL;
        *n = 0;
        return -1;
    }
    for (int i = 1; i < *n; i++) /* (few keys: insertion sort) */
        for (int j = i; j > 0 && strcmp((*out)[j - 1], (*out)[j]) > 0; j--) {
            char *t = (*out)[j];
            (*out)[j] = (*out)[j - 1];
            (*out)[j - 1] = t;
        }
    return 0;
}

static void free_keys(char **v, int n)
{
    for (int i = 0; i < n; i++) free(v[i]);
    free(v);
}

/* The lifelines' records of run id, with their times. */
typedef struct lives {
    json_t **rec;
    double *updated;
    int n;
} lives;

static void lives_free(lives *L)
{
    for (int i = 0; i < L->n; i++) json_decref(L->rec[i]);
    free(L->rec);
    free(L->updated);
    memset(L, 0, sizeof *L);
}

static int read_lives(ZkStore *k, const char *id, lives *L, char *err)
{
    memset(L, 0, sizeof *L);
    char pattern[256], **names = NULL;
    int n = 0;
    snprintf(pattern, sizeof pattern, "%s.L.*", id);
    if (keys(k, pattern, &names, &n, err) < 0) return -1;
    L->rec = calloc((size_t)n + 1, sizeof *L->rec);
    L->updated = calloc((size_t)n + 1, sizeof *L->updated);
    int rc = L->rec && L->updated ? 0 : -1;
    if (rc) snprintf(err, ZS_ERRLEN, "out of memory");
    for (int i = 0; i < n && rc == 0; i++) {
        int got = get_json(k, names[i], &L->rec[L->n], NULL, &L->updated[L->n], err);
        if (got < 0) rc = -1;
        if (got > 0) L->n++;
    }
    free_keys(names, n);
    if (rc) lives_free(L);
    return rc;
}

/* Whether lifeline record l's process runs: on this host /proc says; on
 * another one it is taken as running (it cannot be looked at). */
static bool life_live(ZkStore *k, json_t *l)
{
    const char *host = jstr(l, "host");
    if (host && strcmp(host, k->host) != 0) return true;
    return zs_alive((long long)json_integer_value(json_object_get(l, "pid")),
                    (long long)json_integer_value(json_object_get(l, "pid_start")));
}

/* The run of record j (key id.run) and its lifelines' records. */
static int fill_run(ZkStore *k, json_t *j, double created, ZsRun *r, char *err)
{
    memset(r, 0, sizeof *r);
    lives L;
    if (read_lives(k, jstr(j, "id") ? jstr(j, "id") : "", &L, err) < 0) return -1;
    r->id = dupz(jstr(j, "id"));
    r->workflow = dupz(jstr(j, "workflow") ? jstr(j, "workflow") : "?");
    r->source = dupz(jstr(j, "source") ? jstr(j, "source") : "");
    r->mode = dupz(jstr(j, "mode") ? jstr(j, "mode") : "processes");
    r->cwd = dupz(jstr(j, "cwd"));
    r->executable = dupz(jstr(j, "executable"));
    r->options = dupz(jstr(j, "options"));
    r->fingerprint = dupz(jstr(j, "fingerprint"));
    r->nlifelines = (int)json_integer_value(json_object_get(j, "nlifelines"));
    /* (a cancelled run's record was written again: its first time kept) */
    if (json_is_number(json_object_get(j, "created")))
        created = json_number_value(json_object_get(j, "created"));
    r->created = r->updated = created;
    int ndone = 0, failed = 0, cancelled = 0, waiting = 0, nres = -1, tuple = 0;
    json_t *res = json_object();
    const char *error = NULL;
    for (int i = 0; i < L.n; i++) {
        json_t *l = L.rec[i];
        const char *st = jstr(l, "status");
        ndone += st && !strcmp(st, "done");
        failed |= st && !strcmp(st, "failed");
        cancelled |= st && !strcmp(st, "cancelled");
        waiting |= st && !strcmp(st, "waiting");
        if (st && !strcmp(st, "running") && life_live(k, l)) r->live = true;
        int att = (int)json_integer_value(json_object_get(l, "attempts"));
        if (att > r->attempts) r->attempts = att;
        if (L.updated[i] > r->updated) r->updated = L.updated[i];
        if (!error && jstr(l, "error")) error = jstr(l, "error");
        if (json_object_get(l, "nresults")) {
            nres = (int)json_integer_value(json_object_get(l, "nresults"));
            tuple = json_is_true(json_object_get(l, "tuple"));
        }
        json_object_update(res, json_object_get(l, "results"));
    }
    const char *status = json_is_true(json_object_get(j, "cancelled")) || cancelled ? "cancelled"
                         : failed                                                   ? "failed"
                         : waiting                                                  ? "waiting"
                         : r->nlifelines > 0 && ndone == r->nlifelines              ? "done"
                                                                                    : "running";
    r->status = dupz(status);
    r->error = dupz(error);
    ZsTask *t = NULL;
    int nt = 0;
    if (zk_tasks(k, r->id ? r->id : "", false, &t, &nt, err) < 0) {
        json_decref(res);
        lives_free(&L);
        zs_run_free(r);
        return -1;
    }
    r->pending = nt;
    for (int i = 0; i < nt; i++) zs_task_free(&t[i]);
    free(t);
    if (!strcmp(status, "done") && nres >= 0) {
        /* the result, composed from the lifelines' components */
        bool complete = true;
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        if (f && nres == 0) fputs("null", f);
        if (f && tuple) fputc('[', f);
        for (int i = 0; f && i < nres; i++) {
            char idx[16];
            snprintf(idx, sizeof idx, "%d", i);
            const char *v = jstr(res, idx);
            if (!v) complete = false;
            fprintf(f, "%s%s", i ? ", " : "", v ? v : "null");
        }
        if (f && tuple) fputc(']', f);
        if (f) fclose(f);
        if (complete && text)
            r->result = text;
        else
            free(text);
    }
    json_decref(res);
    lives_free(&L);
    return 0;
}

int zk_run(ZkStore *k, const char *id, ZsRun *out, char *err)
{
    memset(out, 0, sizeof *out);
    char key[256];
    snprintf(key, sizeof key, "%s.run", id);
    json_t *j = NULL;
    double created = 0;
    int got = get_json(k, key, &j, NULL, &created, err);
    if (got <= 0) return got;
    int rc = fill_run(k, j, created, out, err);
    json_decref(j);
    return rc < 0 ? -1 : 1;
}

int zk_runs(ZkStore *k, ZsRun **out, int *n, char *err)
{
    *out = NULL;
    *n = 0;
    char **names = NULL;
    int nk = 0;
    if (keys(k, "*.run", &names, &nk, err) < 0) return -1;
    ZsRun *runs = calloc((size_t)nk + 1, sizeof *runs);
    int rc = runs ? 0 : -1;
    if (rc) snprintf(err, ZS_ERRLEN, "out of memory");
    int m = 0;
    for (int i = 0; i < nk && rc == 0; i++) {
        char id[256];
        snprintf(id, sizeof id, "%.*s", (int)(strlen(names[i]) - 4), names[i]);
        int got = zk_run(k, id, &runs[m], err);
        if (got < 0) rc = -1;
        if (got > 0) m++;
    }
    free_keys(names, nk);
    if (rc < 0) {
        for (int i = 0; i < m; i++) zs_run_free(&runs[i]);
        free(runs);
        return -1;
    }
    *out = runs;
    *n = m;
    return 0;
}

int zk_run_names(ZkStore *k, const char *id, char ***out, int *n, char *err)
{
    *out = NULL;
    *n = 0;
    char key[256];
    snprintf(key, sizeof key, "%s.run", id);
    json_t *j = NULL;
    int got = get_json(k, key, &j, NULL, NULL, err);
    if (got <= 0) return got;
    json_t *a = json_object_get(j, "lifelines");
    size_t m = json_is_array(a) ? json_array_size(a) : 0;
    char **v = calloc(m + 1, sizeof *v);
    if (!v) {
        json_decref(j);
        snprintf(err, ZS_ERRLEN, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < m; i++) {
        const char *name = json_string_value(json_array_get(a, i));
        if (!name || !(v[i] = strdup(name))) {
            if (name)
                snprintf(err, ZS_ERRLEN, "out of memory");
            else
                snprintf(err, ZS_ERRLEN,
                         "the %s is damaged: run %.100s names a lifeline "
                         "that is no string",
                         k->where, id);
            for (size_t x = 0; x < i; x++) free(v[x]);
            free(v);
            json_decref(j);
            return -1;
        }
    }
    json_decref(j);
    *out = v;
    *n = (int)m;
    return 0;
}

int zk_lifelines(ZkStore *k, const ZsRun *r, ZsLife **out, int *n, char *err)
{
    *out = NULL;
    *n = 0;
    lives L;
    if (read_lives(k, r->id, &L, err) < 0) return -1;
    ZsLife *v = calloc((size_t)L.n + 1, sizeof *v);
    if (!v) {
        lives_free(&L);
        snprintf(err, ZS_ERRLEN, "out of memory");
        return -1;
    }
    for (int i = 0; i < L.n; i++) {
        json_t *l = L.rec[i];
        v[i].lifeline = i;
        v[i].name = dupz(jstr(l, "name"));
        v[i].executable = dupz(jstr(l, "executable"));
        v[i].options = dupz(jstr(l, "options"));
        v[i].status = dupz(jstr(l, "status"));
        v[i].state = dupz(jstr(l, "state"));
        v[i].recent = dupz(jstr(l, "recent"));
        v[i].error = dupz(jstr(l, "error"));
        v[i].attempt = (int)json_integer_value(json_object_get(l, "attempts"));
        v[i].events = (long long)json_integer_value(json_object_get(l, "events"));
        v[i].live = v[i].status && !strcmp(v[i].status, "running") && life_live(k, l);
        if (!v[i].live && v[i].status && !strcmp(v[i].status, "running") && r->status &&
            !strcmp(r->status, "cancelled")) {
            /* its process stopped on the cancellation before writing it */
            free(v[i].status);
            v[i].status = dupz("cancelled");
        }
        v[i].pid = v[i].live ? (long long)json_integer_value(json_object_get(l, "pid")) : 0;
    }
    *out = v;
    *n = L.n;
    lives_free(&L);
    return 0;
}

static int numeric_suffix(const char *key, long long *n)
{
    const char *dot = strrchr(key, '.');
    char *end = NULL;
    if (!dot || !dot[1]) return 0;
    *n = strtoll(dot + 1, &end, 10);
    return !*end;
}

/* Task record j (key RUN.T.<N>) as a ZsTask. */
static void fill_task(json_t *j, const char *run, long long num, ZsTask *t)
{
    memset(t, 0, sizeof *t);
    t->task = num;
    t->run = dupz(run);
    t->lifeline = dupz(jstr(j, "lifeline"));
    t->action = dupz(jstr(j, "action"));
    t->kind = dupz(jstr(j, "kind"));
    t->prompt = dupz(jstr(j, "prompt"));
    t->type = dupz(jstr(j, "type"));
    t->members = dupz(jstr(j, "members"));
    t->current = dupz(jstr(j, "current"));
    t->status = dupz(jstr(j, "status") ? jstr(j, "status") : "?");
    t->answer = dupz(jstr(j, "answer"));
    t->created = json_number_value(json_object_get(j, "created"));
    t->answered = json_number_value(json_object_get(j, "answered"));
}

int zk_tasks(ZkStore *k, const char *id, bool all, ZsTask **out, int *n, char *err)
{
    *out = NULL;
    *n = 0;
    char pattern[256], **names = NULL;
    int nk = 0;
    snprintf(pattern, sizeof pattern, "%s.T.*", id ? id : "*");
    if (keys(k, pattern, &names, &nk, err) < 0) return -1;
    ZsTask *v = calloc((size_t)nk + 1, sizeof *v);
    int rc = v ? 0 : -1, m = 0;
    if (rc) snprintf(err, ZS_ERRLEN, "out of memory");
    for (int i = 0; i < nk && rc == 0; i++) {
        long long num = 0;
        if (!numeric_suffix(names[i], &num)) continue;
        json_t *j = NULL;
        int got = get_json(k, names[i], &j, NULL, NULL, err);
        if (got < 0) rc = -1;
        if (got > 0 && (all || (jstr(j, "status") && !strcmp(jstr(j, "status"), "pending")))) {
            char run[256];
            snprintf(run, sizeof run, "%.*s", (int)(strstr(names[i], ".T.") - names[i]), names[i]);
            fill_task(j, run, num, &v[m++]);
        }
        json_decref(j);
    }
    free_keys(names, nk);
    if (rc < 0) {
        for (int i = 0; i < m; i++) zs_task_free(&v[i]);
        free(v);
        return -1;
    }
    /* by run, then number (the keys came sorted as text) */
    for (int i = 1; i < m; i++)
        for (int j = i; j > 0; j--) {
            int c = strcmp(v[j - 1].run, v[j].run);
            if (c < 0 || (c == 0 && v[j - 1].task <= v[j].task)) break;
            ZsTask t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    *out = v;
    *n = m;
    return 0;
}

/* Sets task `task` of run id from pending to status (with answer): 1, 0
 * with a message (not pending, none), -1. */
/* Writes j (taken) at key if the key is still at revision rev: 1 written,
 * 0 written meanwhile by another process (read again), -1 error in err. */
static int put_json(ZkStore *k, const char *key, json_t *j, uint64_t rev, char *err)
{
    char *text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    if (!text) {
        snprintf(err, ZS_ERRLEN, "out of memory");
        return -1;
    }
    natsStatus s = kvStore_Update(NULL, k->kv, key, text, (int)strlen(text), rev);
    free(text);
    if (s == NATS_OK) return 1;
    const char *txt = nats_GetLastError(NULL);
    if (txt && strstr(txt, "wrong last sequence")) return 0;
    char what[1200];
    snprintf(what, sizeof what, "writing %s in the %s", key, k->where);
    nats_error(err, what, s);
    return -1;
}

static int close_task(ZkStore *k, const char *id, long long task, const char *status,
                      const char *answer, char *err)
{
    char key[256];
    snprintf(key, sizeof key, "%s.T.%lld", id, task);
    for (int tries = 0; tries < 10; tries++) {
        json_t *j = NULL;
        uint64_t rev = 0;
        int got = get_json(k, key, &j, &rev, NULL, err);
        if (got < 0) return -1;
        if (got == 0) {
            snprintf(err, ZS_ERRLEN, "run %s has no task %lld", id, task);
            return 0;
        }
        const char *st = jstr(j, "status");
        if (!st || strcmp(st, "pending") != 0) {
            snprintf(err, ZS_ERRLEN, "task %lld of run %s is %s, not pending", task, id,
                     st ? st : "?");
            json_decref(j);
            return 0;
        }
        json_object_set_new(j, "status", json_string(status));
        if (answer) json_object_set_new(j, "answer", json_string(answer));
        json_object_set_new(j, "answered", json_real((double)time(NULL)));
        int put = put_json(k, key, j, rev, err);
        if (put != 0) return put;
    }
    snprintf(err, ZS_ERRLEN, "task %lld of run %s keeps changing; try again", task, id);
    return -1;
}

int zk_answer(ZkStore *k, const char *id, long long task, const char *answer, char *err)
{
    return close_task(k, id, task, "answered", answer, err);
}

int zk_cancel(ZkStore *k, const char *id, char *err)
{
    char key[256];
    snprintf(key, sizeof key, "%s.run", id);
    for (int tries = 0; tries < 10; tries++) {
        json_t *j = NULL;
        uint64_t rev = 0;
        double created = 0;
        int got = get_json(k, key, &j, &rev, &created, err);
        if (got < 0) return -1;
        if (got == 0) {
            snprintf(err, ZS_ERRLEN, "no run %s in the %s", id, k->where);
            return 0;
        }
        ZsRun r;
        if (fill_run(k, j, 0, &r, err) < 0) {
            json_decref(j);
            return -1;
        }
        bool ended = !strcmp(r.status, "done") || !strcmp(r.status, "failed") ||
                     !strcmp(r.status, "cancelled");
        if (ended) snprintf(err, ZS_ERRLEN, "run %s has ended (%s)", id, r.status);
        zs_run_free(&r);
        if (ended) {
            json_decref(j);
            return 0;
        }
        json_object_set_new(j, "cancelled", json_true());
        if (!json_object_get(j, "created")) json_object_set_new(j, "created", json_real(created));
        int put = put_json(k, key, j, rev, err);
        if (put < 0) return -1;
        if (put > 0) {
            /* and its pending tasks */
            ZsTask *t = NULL;
            int nt = 0, rc = 1;
            if (zk_tasks(k, id, false, &t, &nt, err) < 0) rc = -1;
            for (int i = 0; i < nt && rc > 0; i++)
                if (close_task(k, id, t[i].task, "cancelled", NULL, err) < 0) rc = -1;
            for (int i = 0; i < nt; i++) zs_task_free(&t[i]);
            free(t);
            return rc;
        }
        /* written meanwhile: read again */
    }
    snprintf(err, ZS_ERRLEN, "the record of run %s in the %s keeps changing; try again", id,
             k->where);
    return -1;
}

/* The key-value buckets of run id's stores (zgs-RUN-S, runtime/store:
 * streams KV_zgs-RUN-S), when there are any. */
static void gc_store_buckets(ZkStore *k, const char *id)
{
    jsStreamNamesList *names = NULL;
    jsErrCode jerr = 0;
    natsStatus s = js_StreamNames(&names, k->js, NULL, &jerr);
    if (s == NATS_NOT_FOUND) return; /* no stream at all */
    if (s != NATS_OK) {
        fprintf(stderr, "zgc: warning: the stores of run %s stay: listing the streams: %s\n", id,
                natsStatus_GetText(s));
        return;
    }
    char prefix[200];
    int pn = snprintf(prefix, sizeof prefix, "KV_zgs-%s-", id);
    for (int i = 0; i < names->Count; i++) {
        const char *nm = names->List[i];
        if (pn <= 0 || (size_t)pn >= sizeof prefix || strncmp(nm, prefix, (size_t)pn)) continue;
        jerr = 0;
        s = js_DeleteStream(k->js, nm, NULL, &jerr);
        if (s != NATS_OK && s != NATS_NOT_FOUND && jerr != JSStreamNotFoundErr)
            fprintf(stderr, "zgc: warning: the store bucket %s of run %s stays: %s\n", nm + 3, id,
                    natsStatus_GetText(s));
    }
    jsStreamNamesList_Destroy(names);
}

int zk_gc(ZkStore *k, bool failed, int *removed, char *err)
{
    *removed = 0;
    ZsRun *runs = NULL;
    int n = 0;
    if (zk_runs(k, &runs, &n, err) < 0) return -1;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        ZsRun *r = &runs[i];
        bool ended = !strcmp(r->status, "done") || !strcmp(r->status, "cancelled") ||
                     (failed && !strcmp(r->status, "failed"));
        if (!ended || r->live) continue;
        /* the run's keys, history and all (no delete markers left) */
        char subject[512];
        snprintf(subject, sizeof subject, "$KV.%s.%s.>", k->bucket, r->id);
        char stream[160];
        snprintf(stream, sizeof stream, "KV_%s", k->bucket);
        jsOptions jo;
        jsOptions_Init(&jo);
        jo.Stream.Purge.Subject = subject;
        jsErrCode jerr = 0;
        natsStatus s = js_PurgeStream(k->js, stream, &jo, &jerr);
        if (s != NATS_OK) {
            char what[1200];
            snprintf(what, sizeof what, "removing run %s from the %s", r->id, k->where);
            nats_error(err, what, s);
            rc = -1;
            break;
        }
        /* its messages (a durable run's stream), when still there */
        snprintf(stream, sizeof stream, "ZG_%s", r->id);
        jerr = 0;
        s = js_DeleteStream(k->js, stream, NULL, &jerr);
        if (s != NATS_OK && s != NATS_NOT_FOUND && jerr != JSStreamNotFoundErr)
            fprintf(stderr, "zgc: warning: the stream %s of run %s stays: %s\n", stream, r->id,
                    natsStatus_GetText(s));
        gc_store_buckets(k, r->id);
        (*removed)++;
    }
    for (int i = 0; i < n; i++) zs_run_free(&runs[i]);
    free(runs);
    return rc;
}
