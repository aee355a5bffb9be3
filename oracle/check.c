/* check.c — one check of a trace: the sections of zt.h in order, each
 * reporting the first disagreement it finds, then the last check, the
 * results on the end lines against the workflow's result types and the
 * returned variables' values. */
#include "zt.h"

#include <pthread.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===================================================================== */
/* The result                                                             */
/* ===================================================================== */

/* The final value of return item k: the returned variable on its
 * lifeline after that lifeline's last event; a disagreement when it has
 * no value (the checker makes every returned variable defined on every
 * path, §3.2). */
static json_t *returned(Check *c, int k, int line)
{
    const ZtModel *m = c->m;
    const ZReturnItem *it = ZU_VEC_AT(m->wf->ret->items, k);
    int l = it->at.index;
    if (l < 0 || l >= m->nl || !it->value->decl) ZU_ICE("return item %d unresolved", k);
    json_t *v = zt_store_at(c, l, c->nbyl[l], it->value->decl->index);
    if (!v)
        zt_fail(c, line,
                "the workflow returns %s @ %s, which has no value on %s at the end of the run",
                it->value->decl->name, m->lnames[l], m->lnames[l]);
    return v;
}

/* Component k of the result (got) has the result type and the returned
 * variable's value. */
static void check_component(Check *c, int k, json_t *got, int line, const char *what)
{
    const ZtModel *m = c->m;
    const ZParam *r = ZU_VEC_AT(m->wf->results, k);
    zt_want_type(c, line, got, r->type, "%s", what);
    json_t *v = returned(c, k, line);
    if (!json_equal(v, got)) {
        const ZReturnItem *it = ZU_VEC_AT(m->wf->ret->items, k);
        zt_fail(c, line, "%s is %s, but the returned variable %s holds %s on %s", what,
                zt_jtext(c, got), it->value->decl->name, zt_jtext(c, v), m->lnames[it->at.index]);
    }
}

/* The end lines' results (docs/runtime.md): one process prints null for
 * no result, the value for one, an array for a tuple; a per-lifeline
 * process prints the object {"<k>": value} of the components k returned
 * at its lifeline, every one of them.  An end line with an error has no
 * result to check (the run stopped). */
static void check_result(Check *c)
{
    const ZtModel *m = c->m;
    const ZStmt *ret = m->wf->ret;
    int n = ret ? ret->items.len : 0;
    if (n != m->wf->results.len) ZU_ICE("the return statement has %d items", n);
    for (int k = 0; k < c->nends; k++) {
        json_t *got = c->end_results[k];
        int line = c->end_lines[k], life = c->end_life[k];
        if (!got) continue;
        if (life < 0) {
            if (n == 0) {
                if (!json_is_null(got))
                    zt_fail(c, line, "the result is %s, but the workflow returns nothing (null)",
                            zt_jtext(c, got));
            } else if (!ret->tuple_ret && n == 1) {
                check_component(c, 0, got, line, "the result");
            } else {
                if (!json_is_array(got) || (int)json_array_size(got) != n)
                    zt_fail(c, line, "the result is %s, but the workflow returns an array of %d",
                            zt_jtext(c, got), n);
                for (int i = 0; i < n; i++)
                    check_component(c, i, json_array_get(got, (size_t)i), line,
                                    zu_fmt(c->a, "result component %d", i));
            }
            continue;
        }
        /* a per-lifeline trace: its components, all of them */
        if (!json_is_object(got))
            zt_fail(c, line,
                    "lifeline %s: a per-lifeline end line must hold an object of result "
                    "components, not %s",
                    m->lnames[life], zt_jtext(c, got));
        const char *key;
        json_t *val;
        json_object_foreach(got, key, val)
        {
            char *endp;
            long comp = strtol(key, &endp, 10);
            char canon[32];
            snprintf(canon, sizeof canon, "%ld", comp);
            if (*endp || comp < 0 || comp >= n || strcmp(canon, key))
                zt_fail(c, line, "lifeline %s: unknown result component \"%s\"", m->lnames[life],
                        key);
            const ZReturnItem *it = ZU_VEC_AT(ret->items, (int)comp);
            if (it->at.index != life)
                zt_fail(c, line, "lifeline %s: result component %ld is returned at %s, not at %s",
                        m->lnames[life], comp, m->lnames[it->at.index], m->lnames[life]);
            check_component(
                c, (int)comp, val, line,
                zu_fmt(c->a, "lifeline %s: result component %ld", m->lnames[life], comp));
        }
        for (int i = 0; i < n; i++) {
            const ZReturnItem *it = ZU_VEC_AT(ret->items, i);
            char num[16];
            snprintf(num, sizeof num, "%d", i);
            if (it->at.index == life && !json_object_get(got, num))
                zt_fail(c, line, "lifeline %s: the end line lacks result component %d (%s @ %s)",
                        m->lnames[life], i, it->value->decl->name, m->lnames[life]);
        }
    }
}

/* ===================================================================== */
/* The check                                                              */
/* ===================================================================== */

static int check_here(const ZtModel *m, const char *trace_name, const char *text, size_t len,
                      char **msg, ZtStats *st)
{
    Check *c = zu_xcalloc(1, sizeof *c);
    c->m = m;
    c->a = zu_arena_new();
    c->name = trace_name;
    c->nested = zt_check; /* replay.c: a planner's nested run */
    int nl = m->nl;
    c->byl = zu_xcalloc((size_t)nl, sizeof *c->byl);
    c->nbyl = zu_xcalloc((size_t)nl, sizeof(int));
    c->capbyl = zu_xcalloc((size_t)nl, sizeof(int));
    c->start = zu_xcalloc((size_t)nl, sizeof *c->start);
    c->start_line = zu_xcalloc((size_t)nl, sizeof(int));
    c->attempt = zu_alloc(c->a, sizeof(int64_t) * (size_t)(nl + 1));
    c->attempt_seen = zu_alloc(c->a, sizeof(int64_t) * (size_t)(nl + 1));
    int rc = 0;
    if (setjmp(c->fail_jb) == 0) {
        zt_read_trace(c, text, len);
        c->st.events = c->nev;
        zt_check_types(c);
        zt_check_starts(c);
        zt_check_messages(c);
        zt_check_causal(c);
        zt_build_stores(c);
        zt_collect_decisions(c);
        zt_check_store_reads(c);
        zt_replay_all(c);
        zt_check_attempts(c);
        zt_check_stores(c);
        zt_check_guards(c);
        check_result(c);
    } else {
        rc = 1;
    }
    if (msg) {
        *msg = NULL;
        if (rc) {
            /* the message's buffer (heap) goes to the caller */
            if (!c->msg.data) zu_buf_puts(&c->msg, "failed");
            *msg = c->msg.data;
            c->msg = (ZBuf){0};
        }
    }
    if (st) *st = c->st;
    /* cleanup */
    zu_buf_free(&c->msg);
    for (int i = 0; i < c->nlines; i++) json_decref(c->lines[i]);
    zt_guard_memo_free(&c->guards);
    free(c->lines);
    free(c->vcs);
    free(c->ev);
    for (int l = 0; l < nl; l++) free(c->byl[l]);
    free(c->byl);
    free(c->nbyl);
    free(c->capbyl);
    free(c->start);
    free(c->start_line);
    free(c->li);
    free(c->retries);
    free(c->end_results);
    free(c->end_lines);
    free(c->end_life);
    for (int k = 0; k < c->nchans; k++) free(c->chans[k].sends);
    free(c->chans);
    free(c->htab);
    if (c->stores)
        for (int l = 0; l < nl; l++) free(c->stores[l]);
    free(c->stores);
    if (c->dec)
        for (int k = 0; k < m->nconstructs + 2; k++) free(c->dec[k]);
    free(c->dec);
    free(c->ndec);
    free(c->capdec);
    zu_arena_free(c->a);
    free(c);
    return rc;
}

typedef struct Job {
    const ZtModel *m;
    const char *trace_name, *text;
    size_t len;
    char **msg;
    ZtStats *st;
    int rc;
} Job;

static void *check_job(void *p)
{
    Job *j = p;
    j->rc = check_here(j->m, j->trace_name, j->text, j->len, j->msg, j->st);
    return NULL;
}

/* The check runs on a thread with the compiler's stack (ZC_STACK_BYTES,
 * zgc.h): guards and pure actions nest as deep as the checker lets them
 * (100,000 levels), and the formulas and values are evaluated by
 * recursion over them.  Where no such thread can be made it runs here. */
int zt_check(const ZtModel *m, const char *trace_name, const char *text, size_t len, char **msg,
             ZtStats *st)
{
    Job job = {m, trace_name, text, len, msg, st, 1};
    pthread_attr_t attr;
    pthread_t t;
    bool threaded = false;
    if (pthread_attr_init(&attr) == 0) {
        threaded = pthread_attr_setstacksize(&attr, ZC_STACK_BYTES) == 0 &&
                   pthread_create(&t, &attr, check_job, &job) == 0;
        pthread_attr_destroy(&attr);
    }
    if (!threaded) return check_here(m, trace_name, text, len, msg, st);
    if (pthread_join(t, NULL) != 0) ZU_ICE("cannot join the trace checker's thread");
    return job.rc;
}
