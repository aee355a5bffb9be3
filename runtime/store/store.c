/* store.c — stores, operations and their OpRecords under the disciplines
 * L0..L4 (zst.h; docs/runtime.md, "Stores").
 *
 * State in the backend (internal.h):
 *   meta/state  {"clock": C, "txn": N, "level": L}: the store-wide logical
 *               clock (one tick per commit) and the last transaction id
 *   meta/live   {TXN: 1, ...}: committed operations that are not final
 *   reg/tools   {TOOL: VERSION, ...}
 *   cell/NAME   {"t": TYPE, "v": VALUE, "ver": N, "by": TXN (0: default)}
 *   key/KEY     {"txn": TXN, "ok": true | false, "why": "..."}: the outcome
 *               of the commit of idempotency key KEY (zst_op_key)
 *   op/TXN      {"status": "committed" | "pending" | "final" | "aborted",
 *                "preds": [TXN, ...], and until final "w": {CELL: {"v":
 *                previous value, "by": previous writer}}, "rec": record}
 *
 * An operation's record is appended to the record file once it is final:
 * when its attempt fails or it is retracted (aborted: true), or when it
 * ends after a commit (from L2 up: once every predecessor is final too, so
 * that a retraction can still cascade to it).  The append happens inside
 * the backend's section that makes it final, so each record is written
 * exactly once and a failed append rolls the section back. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zst_internal.h"

struct zst_store {
    zst_backend *b;
    int level;
    int rec_fd; /* -1: no records */
    char rec_path[512];
    zst_effect_fn on_effect;
    void *effect_user;
    pthread_mutex_t mu;
    json_t *types; /* declared cells: name -> type */
};

enum { OP_ACTIVE, OP_COMMITTED, OP_DONE };

struct zst_op {
    zst_store *s;
    char *agent;
    int state;
    int64_t txn, read_time, write_time;
    json_t *reads, *versions, *bys, *writes, *preds, *reg, *owned;
    json_t *reg_write; /* zst_write_tools: {TOOL: true}, or NULL */
    char *planned;
    char *key;          /* zst_op_key, or NULL */
    bool again;         /* the commit found its key: the outcome was recorded before */
    pthread_mutex_t mu; /* effects */
    json_t *io, *co, *argtags;
    bool *done;
    size_t ndone, next_ext;
};

/* ---- helpers ------------------------------------------------------------ */

static void txn_key(char *buf, size_t n, int64_t txn) { snprintf(buf, n, "%" PRId64, txn); }

static int64_t jint(json_t *o, const char *k) { return json_integer_value(json_object_get(o, k)); }

static int get_required(zst_store *s, const char *kind, const char *key, json_t **out)
{
    int rc = s->b->get(s->b, kind, key, out);
    if (rc == 1) return zst_fail(ZST_ECORRUPT, "the store has no %s document '%s'", kind, key);
    return rc;
}

static int type_of(zst_store *s, const char *cell, int *tag)
{
    pthread_mutex_lock(&s->mu);
    json_t *t = json_object_get(s->types, cell);
    *tag = t ? (int)json_integer_value(t) : 0;
    pthread_mutex_unlock(&s->mu);
    if (!t) return zst_fail(ZST_EUNKNOWN, "unknown cell '%s' (not declared with zst_cell)", cell);
    return ZST_OK;
}

/* "tool@version" entries of a registry document, sorted by name */
static json_t *registry_list(json_t *reg)
{
    json_t *a = json_array();
    const char *k;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(reg, tmp, k, v)
    {
        char buf[512];
        snprintf(buf, sizeof buf, "%s@%" PRId64, k, (int64_t)json_integer_value(v));
        json_array_append_new(a, json_string(buf));
    }
    return a;
}

static int append_record(zst_store *s, json_t *rec)
{
    if (s->rec_fd < 0) return ZST_OK;
    char *line = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
    if (!line) return zst_fail(ZST_ENOMEM, "out of memory");
    size_t n = strlen(line);
    line[n] = '\n'; /* replaces the NUL: written as one line with one write */
    size_t off = 0;
    while (off < n + 1) {
        ssize_t w = write(s->rec_fd, line + off, n + 1 - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            int e = errno;
            free(line);
            return zst_fail(ZST_EIO, "writing an OpRecord to %s: %s", s->rec_path,
                            w < 0 ? strerror(e) : "nothing written");
        }
        off += (size_t)w;
    }
    free(line);
    return ZST_OK;
}

/* The record of the operation; commit fields only when committed. */
static json_t *build_record(zst_op *op, bool committed, json_t *write_reg)
{
    json_t *r = json_object();
    json_object_set_new(r, "agent", json_string(op->agent));
    json_object_set_new(r, "txn", json_integer(op->txn));
    json_t *rs = json_array();
    const char *k;
    json_t *v;
    json_object_foreach(op->reads, k, v) json_array_append_new(rs, json_string(k));
    json_object_set_new(r, "read_set", rs);
    json_object_set(r, "read_values", op->reads);
    json_object_set_new(r, "read_time", json_integer(op->read_time));
    json_t *ws = json_array();
    json_object_foreach(op->writes, k, v) json_array_append_new(ws, json_string(k));
    json_object_set_new(r, "write_set", ws);
    json_object_set(r, "write_values", op->writes);
    if (op->planned) json_object_set_new(r, "planned_tool", json_string(op->planned));
    json_object_set_new(r, "read_registry", registry_list(op->reg));
    pthread_mutex_lock(&op->mu);
    json_object_set_new(r, "io", json_deep_copy(op->io));
    json_object_set_new(r, "co", json_deep_copy(op->co));
    pthread_mutex_unlock(&op->mu);
    json_t *p = json_array();
    json_object_foreach(op->preds, k, v)
        json_array_append_new(p, json_integer(strtoll(k, NULL, 10)));
    json_object_set_new(r, "preds", p);
    if (committed) {
        json_object_set_new(r, "write_time", json_integer(op->write_time));
        json_object_set_new(r, "write_registry", registry_list(write_reg));
    }
    json_object_set_new(r, "aborted", json_false());
    return r;
}

/* ---- the store -------------------------------------------------------------- */

zst_store *zst_open(const zst_config *cfg, char *err, size_t errlen)
{
    if (!cfg || cfg->level < 0 || cfg->level > 4) {
        snprintf(err, errlen, "the level must be 0..4");
        return NULL;
    }
    zst_store *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->level = cfg->level;
    s->rec_fd = -1;
    s->on_effect = cfg->on_effect;
    s->effect_user = cfg->effect_user;
    s->types = json_object();
    pthread_mutex_init(&s->mu, NULL);
    if (cfg->oprecords) {
        snprintf(s->rec_path, sizeof s->rec_path, "%s", cfg->oprecords);
        s->rec_fd = open(cfg->oprecords, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (s->rec_fd < 0) {
            snprintf(err, errlen, "cannot open the OpRecord file %s: %s", cfg->oprecords,
                     strerror(errno));
            zst_close(s);
            return NULL;
        }
    }
    if (cfg->sqlite && cfg->nats) {
        snprintf(err, errlen, "a store is in a SQLite file or in a NATS bucket, not both");
        zst_close(s);
        return NULL;
    }
    s->b = cfg->sqlite ? zst_sqlite_open(cfg->sqlite, cfg->busy_ms, err, errlen)
           : cfg->nats ? zst_nats_open(cfg->nats, cfg->nats_bucket, cfg->busy_ms, err, errlen)
                       : zst_mem_open();
    if (!s->b) {
        if (!cfg->sqlite && !cfg->nats) snprintf(err, errlen, "out of memory");
        zst_close(s);
        return NULL;
    }
    int rc = s->b->lock(s->b, true);
    if (rc != ZST_OK) {
        snprintf(err, errlen, "%s", zst_error());
        zst_close(s);
        return NULL;
    }
    json_t *st = NULL, *reg = NULL;
    rc = s->b->get(s->b, "meta", "state", &st);
    if (rc == 1) {
        st = json_pack("{s:I,s:I,s:i}", "clock", (json_int_t)0, "txn", (json_int_t)0, "level",
                       cfg->level);
        rc = s->b->put(s->b, "meta", "state", st);
        json_t *empty = json_object();
        if (rc == ZST_OK) rc = s->b->put(s->b, "meta", "live", empty);
        json_decref(empty);
    } else if (rc == ZST_OK && jint(st, "level") != cfg->level) {
        rc = zst_fail(ZST_EUSAGE, "the store %s has level L%" PRId64 ", not L%d", cfg->sqlite,
                      jint(st, "level"), cfg->level);
    }
    if (rc == ZST_OK) rc = s->b->get(s->b, "reg", "tools", &reg);
    if (rc == 1) {
        reg = json_object();
        for (int i = 0; i < cfg->ntools; i++)
            if (cfg->tools && cfg->tools[i] && *cfg->tools[i] && !strchr(cfg->tools[i], '@'))
                json_object_set_new(reg, cfg->tools[i], json_integer(1));
        rc = s->b->put(s->b, "reg", "tools", reg);
    }
    json_decref(st);
    json_decref(reg);
    if (rc == ZST_OK)
        rc = s->b->unlock(s->b, true);
    else
        s->b->unlock(s->b, false);
    if (rc != ZST_OK) {
        snprintf(err, errlen, "%s", zst_error());
        zst_close(s);
        return NULL;
    }
    return s;
}

void zst_close(zst_store *s)
{
    if (!s) return;
    if (s->b) s->b->close(s->b);
    if (s->rec_fd >= 0) close(s->rec_fd);
    json_decref(s->types);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

int zst_level(const zst_store *s) { return s->level; }

int zst_cell(zst_store *s, const char *name, zgrt_tag type, zgrt_value def)
{
    if (!s || !name || !*name) return zst_fail(ZST_EUSAGE, "a cell needs a name");
    json_t *v = zst_value_to_json(&def, type);
    if (!v) return zst_fail(ZST_ETYPE, "cell '%s': the default: %s", name, zst_error());
    int rc = s->b->lock(s->b, true);
    if (rc != ZST_OK) {
        json_decref(v);
        return rc;
    }
    json_t *doc = NULL;
    rc = s->b->get(s->b, "cell", name, &doc);
    if (rc == 1) {
        doc = json_pack("{s:i,s:O,s:I,s:I}", "t", (int)type, "v", v, "ver", (json_int_t)0, "by",
                        (json_int_t)0);
        rc = s->b->put(s->b, "cell", name, doc);
    } else if (rc == ZST_OK && jint(doc, "t") != type) {
        rc = zst_fail(ZST_ETYPE, "cell '%s' is a %s cell in the store, not %s", name,
                      zst_type_name((int)jint(doc, "t")), zst_type_name(type));
    }
    json_decref(doc);
    json_decref(v);
    if (rc == ZST_OK)
        rc = s->b->unlock(s->b, true);
    else
        s->b->unlock(s->b, false);
    if (rc == ZST_OK) {
        pthread_mutex_lock(&s->mu);
        json_object_set_new(s->types, name, json_integer(type));
        pthread_mutex_unlock(&s->mu);
    }
    return rc;
}

/* One writing section on the registry. */
static int tool_change(zst_store *s, const char *tool, bool remove, int64_t *version)
{
    if (!s || !tool || !*tool || strchr(tool, '@'))
        return zst_fail(ZST_EUSAGE, "a tool needs a name without '@'");
    int rc = s->b->lock(s->b, true);
    if (rc != ZST_OK) return rc;
    json_t *reg = NULL;
    rc = get_required(s, "reg", "tools", &reg);
    if (rc == ZST_OK) {
        json_t *cur = json_object_get(reg, tool);
        if (remove) {
            if (!cur)
                rc = zst_fail(ZST_EUNKNOWN, "unknown tool '%s'", tool);
            else
                json_object_del(reg, tool);
        } else {
            int64_t ver = cur ? json_integer_value(cur) + 1 : 1;
            json_object_set_new(reg, tool, json_integer(ver));
            if (version) *version = ver;
        }
        if (rc == ZST_OK) rc = s->b->put(s->b, "reg", "tools", reg);
    }
    json_decref(reg);
    if (rc == ZST_OK) return s->b->unlock(s->b, true);
    s->b->unlock(s->b, false);
    return rc;
}

int zst_tool_put(zst_store *s, const char *tool, int64_t *version)
{
    return tool_change(s, tool, false, version);
}

int zst_tool_remove(zst_store *s, const char *tool) { return tool_change(s, tool, true, NULL); }

/* ---- operations ---------------------------------------------------------- */

static void op_free(zst_op *op)
{
    for (size_t i = 0; i < json_array_size(op->owned); i++) {
        json_t *e = json_array_get(op->owned, i);
        if (json_is_integer(e)) free((void *)(intptr_t)json_integer_value(e));
    }
    json_decref(op->owned);
    json_decref(op->reads);
    json_decref(op->versions);
    json_decref(op->bys);
    json_decref(op->reg_write);
    json_decref(op->writes);
    json_decref(op->preds);
    json_decref(op->reg);
    json_decref(op->io);
    json_decref(op->co);
    json_decref(op->argtags);
    pthread_mutex_destroy(&op->mu);
    free(op->done);
    free(op->planned);
    free(op->key);
    free(op->agent);
    free(op);
}

void zst_drop(zst_op *op)
{
    if (op) op_free(op);
}

int zst_op_key(zst_op *op, const char *key)
{
    if (!op || !key || !*key)
        return zst_fail(ZST_EUSAGE, "zst_op_key needs an operation and a key");
    if (op->state != OP_ACTIVE) return zst_fail(ZST_EUSAGE, "a key after the commit");
    char *k = strdup(key);
    if (!k) return zst_fail(ZST_ENOMEM, "out of memory");
    free(op->key);
    op->key = k;
    return ZST_OK;
}

zst_op *zst_begin(zst_store *s, const char *agent)
{
    if (!s || !agent) {
        zst_fail(ZST_EUSAGE, "zst_begin needs a store and an agent");
        return NULL;
    }
    zst_op *op = calloc(1, sizeof *op);
    if (!op) {
        zst_fail(ZST_ENOMEM, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&op->mu, NULL);
    op->s = s;
    op->agent = strdup(agent);
    op->reads = json_object();
    op->versions = json_object();
    op->bys = json_object();
    op->writes = json_object();
    op->preds = json_object();
    op->owned = json_array();
    op->io = json_array();
    op->co = json_array();
    op->argtags = json_array();
    if (!op->agent || !op->reads || !op->versions || !op->bys || !op->writes || !op->preds ||
        !op->owned || !op->io || !op->co || !op->argtags) {
        op_free(op);
        zst_fail(ZST_ENOMEM, "out of memory");
        return NULL;
    }
    json_t *st = NULL;
    int rc = s->b->lock(s->b, false);
    if (rc != ZST_OK) {
        op_free(op);
        return NULL;
    }
    rc = get_required(s, "meta", "state", &st);
    if (rc == ZST_OK) rc = get_required(s, "reg", "tools", &op->reg);
    if (rc == ZST_OK) op->read_time = jint(st, "clock");
    json_decref(st);
    s->b->unlock(s->b, rc == ZST_OK);
    if (rc != ZST_OK) {
        op_free(op);
        return NULL;
    }
    return op;
}

/* Adds the writer `by` of a value read to the predecessors; from L2 up
 * also its predecessors that are not final yet (the causal closure, less
 * what can no longer be retracted). */
static int add_preds(zst_op *op, int64_t by)
{
    if (by == 0) return ZST_OK;
    char key[32];
    txn_key(key, sizeof key, by);
    json_object_set_new(op->preds, key, json_true());
    if (op->s->level < 2) return ZST_OK;
    json_t *od = NULL;
    int rc = get_required(op->s, "op", key, &od);
    if (rc != ZST_OK) return rc;
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(od, "preds"), i, p)
    {
        char pk[32];
        json_t *pd = NULL;
        txn_key(pk, sizeof pk, json_integer_value(p));
        if ((rc = get_required(op->s, "op", pk, &pd)) != ZST_OK) break;
        const char *status = json_string_value(json_object_get(pd, "status"));
        if (!status || strcmp(status, "final") != 0)
            json_object_set_new(op->preds, pk, json_true());
        json_decref(pd);
    }
    json_decref(od);
    return rc;
}

int zst_read(zst_op *op, const char *cell, zgrt_value *out)
{
    return zst_read_from(op, cell, out, NULL);
}

int zst_read_from(zst_op *op, const char *cell, zgrt_value *out, int64_t *by)
{
    return zst_read_version(op, cell, out, by, NULL);
}

int zst_read_replay(zst_op *op, const char *cell, zgrt_value v, int64_t by, int64_t ver)
{
    if (!op || !cell || by < 0 || ver < 0)
        return zst_fail(ZST_EUSAGE, "zst_read_replay needs an operation, a cell and a version");
    if (op->state != OP_ACTIVE) return zst_fail(ZST_EUSAGE, "read of '%s' after the commit", cell);
    int tag, rc;
    if ((rc = type_of(op->s, cell, &tag)) != ZST_OK) return rc;
    if (json_object_get(op->writes, cell) || json_object_get(op->reads, cell)) return ZST_OK;
    json_t *j = zst_value_to_json(&v, tag);
    if (!j) return ZST_ETYPE;
    zst_store *s = op->s;
    if (op->s->level >= 2) {
        /* the predecessors as they are now (those final since drop out) */
        if ((rc = s->b->lock(s->b, false)) != ZST_OK) {
            json_decref(j);
            return rc;
        }
        rc = add_preds(op, by);
        s->b->unlock(s->b, rc == ZST_OK);
    } else {
        rc = add_preds(op, by);
    }
    if (rc == ZST_OK) {
        json_object_set_new(op->reads, cell, j);
        json_object_set_new(op->versions, cell, json_integer(ver));
        json_object_set_new(op->bys, cell, json_integer(by));
    } else {
        json_decref(j);
    }
    return rc;
}

int zst_read_version(zst_op *op, const char *cell, zgrt_value *out, int64_t *by, int64_t *ver)
{
    if (!op || !cell || !out)
        return zst_fail(ZST_EUSAGE, "zst_read needs an operation, a cell and a place");
    if (op->state != OP_ACTIVE) return zst_fail(ZST_EUSAGE, "read of '%s' after the commit", cell);
    int tag, rc;
    if ((rc = type_of(op->s, cell, &tag)) != ZST_OK) return rc;
    json_t *known = json_object_get(op->writes, cell);
    if (!known) known = json_object_get(op->reads, cell);
    if (by) *by = json_integer_value(json_object_get(op->bys, cell));
    if (ver) *ver = json_integer_value(json_object_get(op->versions, cell));
    if (known) return zst_value_from_json(known, tag, out, op->owned);
    zst_store *s = op->s;
    json_t *doc = NULL, *st = NULL;
    if ((rc = s->b->lock(s->b, false)) != ZST_OK) return rc;
    rc = get_required(s, "cell", cell, &doc);
    if (rc == ZST_OK) rc = get_required(s, "meta", "state", &st);
    if (rc == ZST_OK && (jint(doc, "t") != tag || !json_object_get(doc, "v")))
        rc = zst_fail(ZST_ECORRUPT, "the store's cell '%s' is not the %s cell declared", cell,
                      zst_type_name(tag));
    if (rc == ZST_OK) rc = add_preds(op, jint(doc, "by"));
    if (rc == ZST_OK) rc = zst_value_from_json(json_object_get(doc, "v"), tag, out, op->owned);
    if (rc == ZST_OK) {
        json_object_set(op->reads, cell, json_object_get(doc, "v"));
        json_object_set_new(op->versions, cell, json_integer(jint(doc, "ver")));
        json_object_set_new(op->bys, cell, json_integer(jint(doc, "by")));
        if (by) *by = jint(doc, "by");
        if (ver) *ver = jint(doc, "ver");
        op->read_time = jint(st, "clock");
    }
    json_decref(doc);
    json_decref(st);
    s->b->unlock(s->b, rc == ZST_OK);
    return rc;
}

int zst_plan(zst_op *op, const char *tool)
{
    if (!op || !tool) return zst_fail(ZST_EUSAGE, "zst_plan needs an operation and a tool");
    if (op->state != OP_ACTIVE) return zst_fail(ZST_EUSAGE, "plan after the commit");
    json_t *v = json_object_get(op->reg, tool);
    if (!v) return zst_fail(ZST_EUNKNOWN, "unknown tool '%s' (not in the registry)", tool);
    char buf[512];
    snprintf(buf, sizeof buf, "%s@%" PRId64, tool, (int64_t)json_integer_value(v));
    free(op->planned);
    if (!(op->planned = strdup(buf))) return zst_fail(ZST_ENOMEM, "out of memory");
    return ZST_OK;
}

int zst_issue(zst_op *op, const char *tool, zgrt_value arg, int *ticket)
{
    if (!op || !tool || !ticket)
        return zst_fail(ZST_EUSAGE, "zst_issue needs an operation, a tool and a ticket");
    if (op->state != OP_ACTIVE)
        return zst_fail(ZST_EUSAGE, "effect of '%s' issued after the commit", tool);
    if (op->s->level >= 4 && !json_object_get(op->reg, tool))
        return zst_fail(ZST_EUNKNOWN, "tool '%s' is not in the registry pinned at begin", tool);
    json_t *a = zst_value_to_json(&arg, (int)arg.tag);
    if (!a) return ZST_ETYPE;
    pthread_mutex_lock(&op->mu);
    bool *d = realloc(op->done, (op->ndone + 1) * sizeof *d);
    if (!d) {
        pthread_mutex_unlock(&op->mu);
        json_decref(a);
        return zst_fail(ZST_ENOMEM, "out of memory");
    }
    op->done = d;
    d[op->ndone] = false;
    *ticket = (int)op->ndone++;
    json_array_append_new(op->io, json_pack("[s,o]", tool, a));
    json_array_append_new(op->argtags, json_integer(arg.tag));
    pthread_mutex_unlock(&op->mu);
    return ZST_OK;
}

/* Effect k becomes visible: appended to co, handed to the callback. */
static void externalise(zst_op *op, size_t k)
{
    json_t *e = json_array_get(op->io, k);
    json_array_append(op->co, e);
    if (op->s->on_effect) {
        zgrt_value v;
        json_t *owned = json_array();
        if (zst_value_from_json(json_array_get(e, 1),
                                (int)json_integer_value(json_array_get(op->argtags, k)), &v,
                                owned) == ZST_OK)
            op->s->on_effect(op->s->effect_user, op->txn, json_string_value(json_array_get(e, 0)),
                             &v);
        for (size_t i = 0; i < json_array_size(owned); i++) {
            json_t *o = json_array_get(owned, i);
            if (json_is_integer(o)) free((void *)(intptr_t)json_integer_value(o));
        }
        json_decref(owned);
    }
}

int zst_complete(zst_op *op, int ticket)
{
    if (!op) return zst_fail(ZST_EUSAGE, "zst_complete needs an operation");
    pthread_mutex_lock(&op->mu);
    if (ticket < 0 || (size_t)ticket >= op->ndone || op->done[ticket]) {
        pthread_mutex_unlock(&op->mu);
        return zst_fail(ZST_EUSAGE, "effect %d was not issued or has completed already", ticket);
    }
    op->done[ticket] = true;
    if (op->s->level >= 3) {
        /* the sequencer: the longest completed prefix goes out, in issue order */
        while (op->next_ext < op->ndone && op->done[op->next_ext]) externalise(op, op->next_ext++);
    } else {
        externalise(op, (size_t)ticket);
    }
    pthread_mutex_unlock(&op->mu);
    return ZST_OK;
}

int zst_write(zst_op *op, const char *cell, zgrt_value v)
{
    if (!op || !cell) return zst_fail(ZST_EUSAGE, "zst_write needs an operation and a cell");
    if (op->state != OP_ACTIVE) return zst_fail(ZST_EUSAGE, "write of '%s' after the commit", cell);
    int tag, rc;
    if ((rc = type_of(op->s, cell, &tag)) != ZST_OK) return rc;
    json_t *j = zst_value_to_json(&v, tag);
    if (!j) return zst_fail(ZST_ETYPE, "cell '%s': %s", cell, zst_error());
    json_object_set_new(op->writes, cell, j);
    return ZST_OK;
}

int zst_write_tools(zst_op *op, const char *const *tools, int n)
{
    if (!op || n < 0 || (n > 0 && !tools))
        return zst_fail(ZST_EUSAGE, "zst_write_tools needs an operation and its tools");
    if (op->state != OP_ACTIVE) return zst_fail(ZST_EUSAGE, "registry write after the commit");
    json_t *set = json_object();
    if (!set) return zst_fail(ZST_ENOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        if (!tools[i] || !*tools[i] || strchr(tools[i], '@')) {
            json_decref(set);
            return zst_fail(ZST_EUSAGE, "a tool needs a name without '@'");
        }
        json_object_set_new(set, tools[i], json_true());
    }
    json_decref(op->reg_write);
    op->reg_write = set;
    return ZST_OK;
}

/* The registry after the operation's write of it (inside the commit). */
static void apply_registry(zst_op *op, json_t *reg)
{
    const char *k;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(reg, tmp, k, v) if (!json_object_get(op->reg_write, k))
        json_object_del(reg, k);
    json_object_foreach(op->reg_write, k, v)
    {
        if (json_object_get(reg, k)) continue;
        json_t *seen = json_object_get(op->reg, k);
        json_object_set_new(reg, k, json_integer(seen ? json_integer_value(seen) + 1 : 1));
    }
}

int64_t zst_txn(const zst_op *op) { return op ? op->txn : 0; }

/* A new transaction id (inside a writing section). */
static int next_txn(zst_store *s, bool tick, int64_t *txn, int64_t *time)
{
    json_t *st = NULL;
    int rc = get_required(s, "meta", "state", &st);
    if (rc != ZST_OK) return rc;
    *txn = jint(st, "txn") + 1;
    json_object_set_new(st, "txn", json_integer(*txn));
    if (tick) {
        *time = jint(st, "clock") + 1;
        json_object_set_new(st, "clock", json_integer(*time));
    }
    rc = s->b->put(s->b, "meta", "state", st);
    json_decref(st);
    return rc;
}

/* The attempt failed: its aborted record (inside a writing section). */
static int record_attempt(zst_op *op)
{
    int rc = next_txn(op->s, false, &op->txn, NULL);
    if (rc != ZST_OK) return rc;
    json_t *rec = build_record(op, false, NULL);
    json_object_set_new(rec, "aborted", json_true());
    rc = append_record(op->s, rec);
    json_decref(rec);
    return rc;
}

static int live_set(zst_store *s, int64_t txn, bool in)
{
    json_t *live = NULL;
    int rc = get_required(s, "meta", "live", &live);
    if (rc != ZST_OK) return rc;
    char key[32];
    txn_key(key, sizeof key, txn);
    if (in)
        json_object_set_new(live, key, json_true());
    else
        json_object_del(live, key);
    rc = s->b->put(s->b, "meta", "live", live);
    json_decref(live);
    return rc;
}

/* Why the commit may not happen (a message in zst_error), or NULL. */
static int validate(zst_op *op, bool *ok)
{
    zst_store *s = op->s;
    const char *k;
    json_t *v;
    int rc = ZST_OK;
    *ok = true;
    if (s->level >= 1) {
        json_object_foreach(op->versions, k, v)
        {
            json_t *doc = NULL;
            if ((rc = get_required(s, "cell", k, &doc)) != ZST_OK) return rc;
            bool same = jint(doc, "ver") == json_integer_value(v);
            json_decref(doc);
            if (!same) {
                zst_fail(ZST_RETRY, "cell '%s' was written since it was read", k);
                *ok = false;
                return ZST_OK;
            }
        }
    }
    if (s->level >= 2) {
        json_object_foreach(op->preds, k, v)
        {
            json_t *od = NULL;
            if ((rc = get_required(s, "op", k, &od)) != ZST_OK) return rc;
            bool aborted =
                strcmp(json_string_value(json_object_get(od, "status")) ?: "", "aborted") == 0;
            json_decref(od);
            if (aborted) {
                zst_fail(ZST_RETRY, "operation %s, read from, was retracted", k);
                *ok = false;
                return ZST_OK;
            }
        }
    }
    if (s->level >= 4 && op->planned) {
        json_t *reg = NULL;
        if ((rc = get_required(s, "reg", "tools", &reg)) != ZST_OK) return rc;
        json_t *now = registry_list(reg);
        bool present = false;
        size_t i;
        json_array_foreach(now, i, v) if (strcmp(json_string_value(v), op->planned) == 0) present =
            true;
        json_decref(now);
        json_decref(reg);
        if (!present) {
            zst_fail(ZST_RETRY, "the planned tool %s was removed or replaced", op->planned);
            *ok = false;
        }
    }
    return ZST_OK;
}

static int finish_committed(zst_store *s, const char *key, json_t *od);

/* The outcome of a keyed commit (inside its writing section). */
static int put_key(zst_op *op, bool ok, const char *why)
{
    if (!op->key) return ZST_OK;
    json_t *kd = json_pack("{s:I,s:b}", "txn", (json_int_t)op->txn, "ok", ok);
    if (!kd) return zst_fail(ZST_ENOMEM, "out of memory");
    if (why) json_object_set_new(kd, "why", json_string(why));
    int rc = op->s->b->put(op->s->b, "key", op->key, kd);
    json_decref(kd);
    return rc;
}

/* The commit; with finish, the end too, in the same section. */
static int commit(zst_op *op, bool finish)
{
    if (!op) return zst_fail(ZST_EUSAGE, "zst_commit needs an operation");
    if (op->state != OP_ACTIVE)
        return zst_fail(ZST_EUSAGE, "the operation is not active (commit twice?)");
    pthread_mutex_lock(&op->mu);
    bool all = op->next_ext == op->ndone || op->s->level < 3;
    for (size_t i = 0; i < op->ndone; i++) all = all && op->done[i];
    pthread_mutex_unlock(&op->mu);
    if (!all) return zst_fail(ZST_EUSAGE, "commit before every issued effect completed");
    zst_store *s = op->s;
    int rc = s->b->lock(s->b, true);
    if (rc != ZST_OK) return rc;
    bool ok = false;
    if (op->key) {
        json_t *kd = NULL;
        rc = s->b->get(s->b, "key", op->key, &kd);
        if (rc == 1) {
            rc = ZST_OK;
        } else if (rc == ZST_OK) {
            /* committed (or refused) before: the recorded outcome */
            bool was = json_is_true(json_object_get(kd, "ok"));
            char why[512];
            snprintf(why, sizeof why, "%s", json_string_value(json_object_get(kd, "why")) ?: "");
            op->txn = jint(kd, "txn");
            json_decref(kd);
            if ((rc = s->b->unlock(s->b, true)) != ZST_OK) return rc;
            op->again = true;
            op->state = was ? OP_COMMITTED : OP_DONE;
            return was ? ZST_OK : zst_fail(ZST_RETRY, "%s", why);
        } else {
            s->b->unlock(s->b, false);
            return rc;
        }
    }
    json_t *undo = json_object(), *reg = NULL;
    rc = validate(op, &ok);
    if (rc == ZST_OK && !ok) {
        char why[512];
        snprintf(why, sizeof why, "%s", zst_error());
        rc = record_attempt(op);
        if (rc == ZST_OK) rc = put_key(op, false, why);
        if (rc == ZST_OK && (rc = s->b->unlock(s->b, true)) == ZST_OK) {
            op->state = OP_DONE;
            json_decref(undo);
            return zst_fail(ZST_RETRY, "%s", why);
        }
        json_decref(undo);
        if (rc != ZST_OK) s->b->unlock(s->b, false);
        return rc;
    }
    if (rc == ZST_OK) rc = next_txn(s, true, &op->txn, &op->write_time);
    const char *k;
    json_t *v;
    if (rc == ZST_OK) {
        json_object_foreach(op->writes, k, v)
        {
            json_t *doc = NULL;
            if ((rc = get_required(s, "cell", k, &doc)) != ZST_OK) break;
            json_object_set_new(undo, k,
                                json_pack("{s:O,s:O}", "v", json_object_get(doc, "v"), "by",
                                          json_object_get(doc, "by")));
            json_object_set(doc, "v", v);
            json_object_set_new(doc, "ver", json_integer(jint(doc, "ver") + 1));
            json_object_set_new(doc, "by", json_integer(op->txn));
            rc = s->b->put(s->b, "cell", k, doc);
            json_decref(doc);
            if (rc != ZST_OK) break;
        }
    }
    if (rc == ZST_OK) rc = get_required(s, "reg", "tools", &reg);
    if (rc == ZST_OK && op->reg_write) {
        apply_registry(op, reg);
        rc = s->b->put(s->b, "reg", "tools", reg);
    }
    if (rc == ZST_OK) {
        json_t *preds = json_array();
        json_object_foreach(op->preds, k, v)
            json_array_append_new(preds, json_integer(strtoll(k, NULL, 10)));
        json_t *od = json_pack("{s:s,s:o,s:O,s:o}", "status", "committed", "preds", preds, "w",
                               undo, "rec", build_record(op, true, reg));
        char key[32];
        txn_key(key, sizeof key, op->txn);
        rc = s->b->put(s->b, "op", key, od);
        if (rc == ZST_OK) rc = live_set(s, op->txn, true);
        if (rc == ZST_OK) rc = put_key(op, true, NULL);
        if (rc == ZST_OK && finish) rc = finish_committed(s, key, od);
        json_decref(od);
    }
    json_decref(reg);
    json_decref(undo);
    if (rc == ZST_OK)
        rc = s->b->unlock(s->b, true);
    else
        s->b->unlock(s->b, false);
    if (rc == ZST_OK)
        op->state = OP_COMMITTED;
    else
        op->txn = 0;
    return rc;
}

/* ---- finishing and retraction (inside a writing section) -------------------- */

/* Whether the record file has the committed record of txn: a process
 * killed after appending it, before its section committed, left it there
 * (the record is appended inside the section).  1, 0, or an error. */
static int record_present(zst_store *s, int64_t txn)
{
    if (s->rec_fd < 0) return 0;
    FILE *f = fopen(s->rec_path, "r");
    if (!f) return zst_fail(ZST_EIO, "reading the OpRecords %s: %s", s->rec_path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    int found = 0;
    while (!found && getline(&line, &cap, f) > 0) {
        json_t *r = json_loads(line, 0, NULL);
        found = r && jint(r, "txn") == txn && json_is_false(json_object_get(r, "aborted"));
        json_decref(r);
    }
    free(line);
    fclose(f);
    return found;
}

static int finalise(zst_store *s, const char *key, json_t *od, bool aborted)
{
    json_t *rec = json_object_get(od, "rec");
    if (!rec) return zst_fail(ZST_ECORRUPT, "operation %s has no record", key);
    json_object_set_new(rec, "aborted", json_boolean(aborted));
    int rc = ZST_OK;
    if (json_is_true(json_object_get(od, "again")) && !aborted) {
        /* a keyed commit finished after a crash: its record may be there */
        rc = record_present(s, strtoll(key, NULL, 10));
        if (rc < 0) return rc;
    }
    json_object_del(od, "again");
    rc = rc == 1 ? ZST_OK : append_record(s, rec);
    if (rc != ZST_OK) return rc;
    json_object_set_new(od, "status", json_string(aborted ? "aborted" : "final"));
    json_object_del(od, "rec");
    /* a retracted operation keeps what its writes replaced: undoing a
     * later write restores the value from before it */
    if (!aborted) json_object_del(od, "w");
    if ((rc = s->b->put(s->b, "op", key, od)) != ZST_OK) return rc;
    return live_set(s, strtoll(key, NULL, 10), false);
}

/* Whether every predecessor of od is final. */
static int preds_final(zst_store *s, json_t *od, bool *yes)
{
    size_t i;
    json_t *p;
    *yes = true;
    json_array_foreach(json_object_get(od, "preds"), i, p)
    {
        char pk[32];
        json_t *pd = NULL;
        txn_key(pk, sizeof pk, json_integer_value(p));
        int rc = get_required(s, "op", pk, &pd);
        if (rc != ZST_OK) return rc;
        if (strcmp(json_string_value(json_object_get(pd, "status")) ?: "", "final") != 0)
            *yes = false;
        json_decref(pd);
        if (!*yes) break;
    }
    return ZST_OK;
}

/* Finalises every pending operation whose predecessors are all final.
 * The live set iterates in commit order (jansson keeps the order of
 * insertion) and predecessors commit first, so one pass usually settles
 * a whole chain; passes repeat while one changes something. */
static int settle(zst_store *s)
{
    for (bool changed = true; changed;) {
        changed = false;
        json_t *live = NULL;
        int rc = get_required(s, "meta", "live", &live);
        if (rc != ZST_OK) return rc;
        const char *k;
        json_t *v;
        json_object_foreach(live, k, v)
        {
            json_t *od = NULL;
            bool ready = false;
            if ((rc = get_required(s, "op", k, &od)) == ZST_OK &&
                strcmp(json_string_value(json_object_get(od, "status")) ?: "", "pending") == 0 &&
                (rc = preds_final(s, od, &ready)) == ZST_OK && ready) {
                rc = finalise(s, k, od, false);
                changed = true;
            }
            json_decref(od);
            if (rc != ZST_OK) break;
        }
        json_decref(live);
        if (rc != ZST_OK) return rc;
    }
    return ZST_OK;
}

static int retract(zst_store *s, int64_t txn, bool user)
{
    char key[32];
    txn_key(key, sizeof key, txn);
    json_t *od = NULL;
    int rc = s->b->get(s->b, "op", key, &od);
    if (rc == 1) return zst_fail(ZST_EUNKNOWN, "no committed operation %s", key);
    if (rc != ZST_OK) return rc;
    const char *status = json_string_value(json_object_get(od, "status")) ?: "";
    if (strcmp(status, "committed") != 0 && strcmp(status, "pending") != 0) {
        if (user)
            rc = zst_fail(ZST_EUSAGE, "operation %s is %s and cannot be retracted", key, status);
        json_decref(od);
        return rc;
    }
    /* compensation: each write that still stands is undone */
    const char *k;
    json_t *w;
    json_object_foreach(json_object_get(od, "w"), k, w)
    {
        json_t *doc = NULL;
        if ((rc = get_required(s, "cell", k, &doc)) != ZST_OK) break;
        if (jint(doc, "by") == txn) {
            json_t *prev = json_incref(w);
            /* past the writes of operations retracted already */
            while (rc == ZST_OK && jint(prev, "by") != 0) {
                char pk[32];
                json_t *pd = NULL;
                txn_key(pk, sizeof pk, jint(prev, "by"));
                if ((rc = get_required(s, "op", pk, &pd)) != ZST_OK) break;
                json_t *older = json_object_get(json_object_get(pd, "w"), k);
                bool walk = strcmp(json_string_value(json_object_get(pd, "status")) ?: "",
                                   "aborted") == 0 &&
                            older;
                if (walk) {
                    json_decref(prev);
                    prev = json_incref(older);
                }
                json_decref(pd);
                if (!walk) break;
            }
            json_object_set(doc, "v", json_object_get(prev, "v"));
            json_object_set(doc, "by", json_object_get(prev, "by"));
            json_object_set_new(doc, "ver", json_integer(jint(doc, "ver") + 1));
            json_decref(prev);
            if (rc == ZST_OK) rc = s->b->put(s->b, "cell", k, doc);
        }
        json_decref(doc);
        if (rc != ZST_OK) break;
    }
    if (rc == ZST_OK) rc = finalise(s, key, od, true);
    json_decref(od);
    if (rc != ZST_OK || s->level < 2) return rc;
    /* the cascade: every unfinished operation that read from it (preds
     * hold the causal closure, so one level reaches every dependent) */
    json_t *live = NULL;
    if ((rc = get_required(s, "meta", "live", &live)) != ZST_OK) return rc;
    json_object_foreach(live, k, w)
    {
        json_t *dd = NULL;
        if ((rc = get_required(s, "op", k, &dd)) != ZST_OK) break;
        size_t i;
        json_t *p;
        bool dep = false;
        json_array_foreach(json_object_get(dd, "preds"), i, p) dep =
            dep || json_integer_value(p) == txn;
        json_decref(dd);
        if (dep && (rc = retract(s, strtoll(k, NULL, 10), false)) != ZST_OK) break;
    }
    json_decref(live);
    return rc;
}

int zst_retract_txn(zst_store *s, int64_t txn)
{
    if (!s || txn <= 0)
        return zst_fail(ZST_EUSAGE, "zst_retract_txn needs a store and a transaction");
    int rc = s->b->lock(s->b, true);
    if (rc != ZST_OK) return rc;
    rc = retract(s, txn, true);
    if (rc == ZST_OK) return s->b->unlock(s->b, true);
    s->b->unlock(s->b, false);
    return rc;
}

int zst_retract(zst_op *op)
{
    if (!op) return zst_fail(ZST_EUSAGE, "zst_retract needs an operation");
    if (op->state != OP_COMMITTED)
        return zst_fail(ZST_EUSAGE, "only a committed operation can be retracted");
    return zst_retract_txn(op->s, op->txn);
}

/* The end of a committed operation: final now, or (from L2 up) pending
 * until its predecessors are. */
static int finish_committed(zst_store *s, const char *key, json_t *od)
{
    bool ready = true;
    int rc = ZST_OK;
    if (s->level >= 2) rc = preds_final(s, od, &ready);
    if (rc == ZST_OK && ready) {
        rc = finalise(s, key, od, false);
    } else if (rc == ZST_OK) {
        json_object_set_new(od, "status", json_string("pending"));
        rc = s->b->put(s->b, "op", key, od);
    }
    if (rc == ZST_OK && s->level >= 2) rc = settle(s);
    return rc;
}

int zst_commit(zst_op *op) { return commit(op, false); }

int zst_commit_end(zst_op *op)
{
    if (!op) return zst_fail(ZST_EUSAGE, "zst_commit_end needs an operation");
    int rc = commit(op, true);
    if (rc == ZST_OK || rc == ZST_RETRY) {
        op_free(op);
        return rc;
    }
    char why[512];
    snprintf(why, sizeof why, "%s", zst_error());
    zst_end(op); /* not committed: its attempt is recorded aborted */
    return zst_fail(rc, "%s", why);
}

int zst_end(zst_op *op)
{
    if (!op) return ZST_OK;
    zst_store *s = op->s;
    int rc = ZST_OK;
    if (op->state == OP_ACTIVE) {
        /* abandoned before the commit: its attempt is recorded aborted */
        if ((rc = s->b->lock(s->b, true)) == ZST_OK) {
            rc = record_attempt(op);
            if (rc == ZST_OK)
                rc = s->b->unlock(s->b, true);
            else
                s->b->unlock(s->b, false);
        }
    } else if (op->state == OP_COMMITTED) {
        if ((rc = s->b->lock(s->b, true)) == ZST_OK) {
            char key[32];
            json_t *od = NULL;
            txn_key(key, sizeof key, op->txn);
            rc = get_required(s, "op", key, &od);
            const char *status =
                rc == ZST_OK ? json_string_value(json_object_get(od, "status")) ?: "" : "";
            if (rc == ZST_OK && strcmp(status, "aborted") == 0) {
                rc = ZST_RETRACTED;
            } else if (rc == ZST_OK && strcmp(status, "committed") == 0) {
                if (op->again) json_object_set_new(od, "again", json_true());
                rc = finish_committed(s, key, od);
            } else if (rc == ZST_OK && op->again &&
                       (strcmp(status, "final") == 0 || strcmp(status, "pending") == 0)) {
                rc = ZST_OK; /* its earlier execution ended it */
            } else if (rc == ZST_OK) {
                rc = zst_fail(ZST_ECORRUPT, "operation %s is %s at its end", key, status);
            }
            json_decref(od);
            if (rc >= ZST_OK) {
                int u = s->b->unlock(s->b, true);
                if (u != ZST_OK) rc = u;
            } else {
                s->b->unlock(s->b, false);
            }
        }
    }
    op_free(op);
    return rc;
}
