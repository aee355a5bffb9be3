/* run.c — the stores of a run (zsr.h): the core's zri_stores over the
 * store library.  A lifeline's operation is a zst_op whose agent is the
 * lifeline's name; a tool is named by its action, and a tool call's
 * argument is its one parameter's value (none: null; several: a JSON
 * array of them). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "zsr.h"
#include "zst.h"

struct zsr_stores {
    const zgrt_program *prog;
    int32_t n;
    zst_store **st;
};

typedef struct op {
    zsr_stores *S;
    int32_t store;
    zst_op *z;
    int planned;
} op;

static void path_of(const zgrt_program *p, const char *base, int32_t i, const char *ext, char *out,
                    size_t n)
{
    if (p->nstores == 1 && !ext)
        snprintf(out, n, "%s", base);
    else if (ext)
        snprintf(out, n, "%s/%s%s", base, p->stores[i].name, ext);
    else
        snprintf(out, n, "%s.%s", base, p->stores[i].name);
}

zsr_stores *zsr_open(const zgrt_program *p, const zri_options *o, int32_t self, void *nats,
                     char *err, size_t errlen)
{
    if (errlen) err[0] = '\0';
    if (p->nstores <= 0) return NULL;
    if (o->store_file && o->store_dir) {
        zri_err(err, errlen, "--store-file and --store-dir exclude each other");
        return NULL;
    }
    if (self >= 0 && !o->store_file && !o->store_dir && !nats) {
        zri_err(err, errlen,
                "a per-lifeline executable of a workflow with stores needs --store-file or "
                "--store-dir (the lifelines' processes share the stores in SQLite), or --nats "
                "(in key-value buckets)");
        return NULL;
    }
    bool in_nats = nats && !o->store_file && !o->store_dir;
    zsr_stores *S = zri_xcalloc(1, sizeof *S);
    S->prog = p;
    S->n = p->nstores;
    S->st = zri_xcalloc((size_t)S->n, sizeof *S->st);
    for (int32_t i = 0; i < S->n; i++) {
        const zgrt_store_decl *d = &p->stores[i];
        char db[4096], rec[4096], why[1024], bucket[256];
        snprintf(bucket, sizeof bucket, "zgs-%s-%s", o->nats_run ? o->nats_run : "", d->name);
        if (o->store_file) path_of(p, o->store_file, i, NULL, db, sizeof db);
        if (o->store_dir) path_of(p, o->store_dir, i, ".db", db, sizeof db);
        if (o->oprecords) path_of(p, o->oprecords, i, NULL, rec, sizeof rec);
        const char **tools = zri_xcalloc((size_t)d->ntools + 1, sizeof *tools);
        for (int32_t k = 0; k < d->ntools; k++) tools[k] = p->actions[d->tools[k]].name;
        zst_config cfg = {.level = d->level,
                          .sqlite = o->store_file || o->store_dir ? db : NULL,
                          .nats = in_nats ? nats : NULL,
                          .nats_bucket = in_nats ? bucket : NULL,
                          .oprecords = o->oprecords ? rec : NULL,
                          .ntools = d->ntools,
                          .tools = tools};
        S->st[i] = zst_open(&cfg, why, sizeof why);
        free(tools);
        if (!S->st[i]) {
            zri_err(err, errlen, "store %s: %s", d->name, why);
            zsr_close(S);
            return NULL;
        }
        for (int32_t k = 0; k < d->ncells; k++) {
            const zgrt_cell *c = &d->cells[k];
            if (zst_cell(S->st[i], c->name, (zgrt_tag)c->type.tag, c->def) != ZST_OK) {
                zri_err(err, errlen, "store %s: %s", d->name, zst_error());
                zsr_close(S);
                return NULL;
            }
        }
    }
    return S;
}

void zsr_close(zsr_stores *S)
{
    if (!S) return;
    for (int32_t i = 0; i < S->n; i++) zst_close(S->st[i]);
    free(S->st);
    free(S);
}

static void *s_begin(void *impl, int32_t store, int32_t l, char *err, size_t errlen)
{
    zsr_stores *S = impl;
    zst_op *z = zst_begin(S->st[store], S->prog->lifelines[l]);
    if (!z) {
        zri_err(err, errlen, "%s", zst_error());
        return NULL;
    }
    op *o = zri_xcalloc(1, sizeof *o);
    o->S = S;
    o->store = store;
    o->z = z;
    return o;
}

static const char *cell_name(op *o, int32_t cell)
{
    return o->S->prog->stores[o->store].cells[cell].name;
}

static int s_read(void *impl, void *opv, int32_t cell, zri_heap *h, zgrt_value *out, int64_t *by,
                  int64_t *ver, char *err, size_t errlen)
{
    (void)impl;
    op *o = opv;
    zgrt_value v;
    if (zst_read_version(o->z, cell_name(o, cell), &v, by, ver) != ZST_OK) {
        zri_err(err, errlen, "%s", zst_error());
        return -1;
    }
    *out = zri_value_copy(h, &v);
    return 0;
}

static int s_replay_read(void *impl, void *opv, int32_t cell, const zgrt_value *v, int64_t by,
                         int64_t ver, char *err, size_t errlen)
{
    (void)impl;
    op *o = opv;
    if (zst_read_replay(o->z, cell_name(o, cell), *v, by, ver) != ZST_OK) {
        zri_err(err, errlen, "%s", zst_error());
        return -1;
    }
    return 0;
}

static int s_write(void *impl, void *opv, int32_t cell, const zgrt_value *v, char *err,
                   size_t errlen)
{
    (void)impl;
    op *o = opv;
    if (zst_write(o->z, cell_name(o, cell), *v) != ZST_OK) {
        zri_err(err, errlen, "%s", zst_error());
        return -1;
    }
    return 0;
}

static int s_tools(void *impl, void *opv, int32_t n, const int32_t *tools, char *err, size_t errlen)
{
    (void)impl;
    op *o = opv;
    const char **names = zri_xcalloc((size_t)n + 1, sizeof *names);
    for (int32_t k = 0; k < n; k++) names[k] = o->S->prog->actions[tools[k]].name;
    int rc = zst_write_tools(o->z, names, n);
    free(names);
    if (rc != ZST_OK) {
        zri_err(err, errlen, "%s", zst_error());
        return -1;
    }
    return 0;
}

static int s_issue(void *impl, void *opv, int32_t action, const zgrt_value *args, int *ticket,
                   char *err, size_t errlen)
{
    (void)impl;
    op *o = opv;
    const zgrt_program *p = o->S->prog;
    const zgrt_action *A = &p->actions[action];
    if (!o->planned) {
        /* the first tool called is the one the generation chose; one
         * that is not in the registry is called all the same (what the
         * level allows: an A2 below L4; L4 refuses it at the issue) */
        int rc = zst_plan(o->z, A->name);
        if (rc != ZST_OK && rc != ZST_EUNKNOWN) {
            zri_err(err, errlen, "%s", zst_error());
            return -1;
        }
        o->planned = 1;
    }
    zgrt_value arg;
    json_t *tmp = NULL;
    if (A->nparams == 1) {
        arg = args[0];
    } else {
        tmp = A->nparams == 0 ? json_null() : json_array();
        for (int32_t k = 0; k < A->nparams; k++)
            json_array_append_new(tmp, zri_value_to_jansson(p, &args[k], A->param_types[k]));
        arg.tag = ZGRT_JSON;
        arg.u.j = tmp;
    }
    int rc = zst_issue(o->z, A->name, arg, ticket);
    json_decref(tmp);
    if (rc == ZST_EUNKNOWN) {
        zri_err(err, errlen,
                "the tool is not in the registry this operation began with (an operation "
                "removed it): at L4 a tool call is dispatched against that registry only");
        return -1;
    }
    if (rc != ZST_OK) {
        zri_err(err, errlen, "%s", zst_error());
        return -1;
    }
    return 0;
}

static int s_complete(void *impl, void *opv, int ticket, char *err, size_t errlen)
{
    (void)impl;
    op *o = opv;
    if (zst_complete(o->z, ticket) != ZST_OK) {
        zri_err(err, errlen, "%s", zst_error());
        return -1;
    }
    return 0;
}

static int s_commit(void *impl, void *opv, const char *key, int64_t *txn, char *err, size_t errlen)
{
    (void)impl;
    op *o = opv;
    int rc = key ? zst_op_key(o->z, key) : ZST_OK;
    if (rc == ZST_OK) rc = zst_commit(o->z);
    *txn = zst_txn(o->z);
    if (rc == ZST_OK || rc == ZST_RETRY) {
        char why[1024];
        snprintf(why, sizeof why, "%s", rc == ZST_RETRY ? zst_error() : "");
        int end = zst_end(o->z);
        free(o);
        if (rc == ZST_RETRY) {
            zri_err(err, errlen, "%s", why);
            return 1;
        }
        if (end < 0) {
            zri_err(err, errlen, "%s", zst_error());
            return -1;
        }
        return 0; /* committed (ZST_RETRACTED cannot come: nothing retracts) */
    }
    zri_err(err, errlen, "%s", zst_error());
    zst_end(o->z);
    free(o);
    return -1;
}

static void s_abandon(void *impl, void *opv)
{
    (void)impl;
    op *o = opv;
    zst_end(o->z);
    free(o);
}

static void s_drop(void *impl, void *opv)
{
    (void)impl;
    op *o = opv;
    zst_drop(o->z);
    free(o);
}

zri_stores zsr_interface(zsr_stores *S)
{
    zri_stores s = {.begin = s_begin,
                    .read = s_read,
                    .replay_read = s_replay_read,
                    .write = s_write,
                    .tools = s_tools,
                    .issue = s_issue,
                    .complete = s_complete,
                    .commit = s_commit,
                    .abandon = s_abandon,
                    .drop = s_drop,
                    .impl = S};
    return s;
}
