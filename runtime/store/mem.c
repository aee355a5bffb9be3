/* mem.c — the in-memory backend: the documents in one JSON object per
 * kind, one mutex for the sections, and an undo list per section (the
 * previous document of every key put) for rollback. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "zst_internal.h"

typedef struct {
    zst_backend b;
    pthread_mutex_t mu;
    json_t *root; /* kind -> {key -> doc} */
    json_t *undo; /* [[kind, key, previous doc or null], ...] */
} zst_mem;

static int mem_lock(zst_backend *b, bool write)
{
    (void)write;
    zst_mem *m = (zst_mem *)b;
    pthread_mutex_lock(&m->mu);
    return ZST_OK;
}

static int mem_unlock(zst_backend *b, bool commit)
{
    zst_mem *m = (zst_mem *)b;
    if (!commit) {
        for (size_t i = json_array_size(m->undo); i-- > 0;) {
            json_t *u = json_array_get(m->undo, i);
            json_t *kind = json_object_get(m->root, json_string_value(json_array_get(u, 0)));
            const char *key = json_string_value(json_array_get(u, 1));
            json_t *prev = json_array_get(u, 2);
            if (json_is_null(prev))
                json_object_del(kind, key);
            else
                json_object_set(kind, key, prev);
        }
    }
    json_array_clear(m->undo);
    pthread_mutex_unlock(&m->mu);
    return ZST_OK;
}

static int mem_get(zst_backend *b, const char *kind, const char *key, json_t **out)
{
    zst_mem *m = (zst_mem *)b;
    json_t *doc = json_object_get(json_object_get(m->root, kind), key);
    *out = NULL;
    if (!doc) return 1;
    if (!(*out = json_deep_copy(doc))) return zst_fail(ZST_ENOMEM, "out of memory");
    return ZST_OK;
}

static int mem_put(zst_backend *b, const char *kind, const char *key, json_t *doc)
{
    zst_mem *m = (zst_mem *)b;
    json_t *k = json_object_get(m->root, kind);
    if (!k) {
        k = json_object();
        if (!k || json_object_set_new(m->root, kind, k) != 0)
            return zst_fail(ZST_ENOMEM, "out of memory");
    }
    json_t *prev = json_object_get(k, key);
    if (json_array_append_new(m->undo,
                              json_pack("[s,s,O]", kind, key, prev ? prev : json_null())) != 0)
        return zst_fail(ZST_ENOMEM, "out of memory");
    if (!doc) {
        json_object_del(k, key);
        return ZST_OK;
    }
    json_t *copy = json_deep_copy(doc);
    if (!copy || json_object_set_new(k, key, copy) != 0)
        return zst_fail(ZST_ENOMEM, "out of memory");
    return ZST_OK;
}

static void mem_close(zst_backend *b)
{
    zst_mem *m = (zst_mem *)b;
    pthread_mutex_destroy(&m->mu);
    json_decref(m->root);
    json_decref(m->undo);
    free(m);
}

zst_backend *zst_mem_open(void)
{
    zst_mem *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->root = json_object();
    m->undo = json_array();
    if (!m->root || !m->undo || pthread_mutex_init(&m->mu, NULL) != 0) {
        json_decref(m->root);
        json_decref(m->undo);
        free(m);
        return NULL;
    }
    m->b = (zst_backend){mem_lock, mem_unlock, mem_get, mem_put, mem_close};
    return &m->b;
}
