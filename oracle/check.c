/* check.c — one check of a trace: the sections of zt.h in order, each
 * reporting the first disagreement it finds, then the last check, the
 * result on the end line against the returned variables' values. */
#include "zt.h"

#include <stdlib.h>
#include <string.h>

/* ===================================================================== */
/* The result                                                             */
/* ===================================================================== */

static void check_result(Check *c)
{
    const ZtModel *m = c->m;
    if (c->ended_error) return;
    const ZStmt *ret = m->wf->ret;
    int n = ret ? ret->items.len : 0;
    json_t *want = NULL;
    if (c->nends == 1) {
        if (n == 0) {
            want = json_null();
        } else if (!ret->tuple_ret && n == 1) {
            const ZReturnItem *it = ZU_VEC_AT(ret->items, 0);
            int l = it->at.index;
            json_t *v = l >= 0 && l < m->nl && it->value->decl
                            ? zt_store_at(c, l, c->nbyl[l], it->value->decl->index)
                            : NULL;
            want = v ? json_incref(v) : json_null();
        } else {
            want = json_array();
            for (int k = 0; k < n; k++) {
                const ZReturnItem *it = ZU_VEC_AT(ret->items, k);
                int l = it->at.index;
                json_t *v = l >= 0 && l < m->nl && it->value->decl
                                ? zt_store_at(c, l, c->nbyl[l], it->value->decl->index)
                                : NULL;
                json_array_append_new(want, v ? json_incref(v) : json_null());
            }
        }
        json_t *got = c->end_results[0];
        bool eq = json_equal(want, got);
        /* floats print as 1.0; an integral float may read back as an integer */
        const char *wt = zt_jtext(c, want);
        json_decref(want);
        if (!eq)
            zt_fail(c, c->end_lines[0], "the result is %s, but the returned variables hold %s",
                    zt_jtext(c, got), wt);
        return;
    }
    /* per-lifeline traces put together: {"<component>": value} each */
    for (int k = 0; k < c->nends; k++) {
        json_t *o = c->end_results[k];
        if (!json_is_object(o))
            zt_fail(c, c->end_lines[k],
                    "a per-lifeline end line must hold an object of result components");
        const char *key;
        json_t *val;
        json_object_foreach(o, key, val)
        {
            char *endp;
            long comp = strtol(key, &endp, 10);
            if (*endp || comp < 0 || comp >= (n ? n : 1))
                zt_fail(c, c->end_lines[k], "unknown result component \"%s\"", key);
            if (!n) continue;
            const ZReturnItem *it = ZU_VEC_AT(ret->items, (int)comp);
            int l = it->at.index;
            json_t *v = l >= 0 && l < m->nl && it->value->decl
                            ? zt_store_at(c, l, c->nbyl[l], it->value->decl->index)
                            : NULL;
            if (!v || !json_equal(v, val))
                zt_fail(c, c->end_lines[k], "result component %ld is %s, but %s holds %s", comp,
                        zt_jtext(c, val), l >= 0 && l < m->nl ? m->lnames[l] : "?", zt_jtext(c, v));
        }
    }
}

/* ===================================================================== */
/* The check                                                              */
/* ===================================================================== */

int zt_check(const ZtModel *m, const char *trace_name, const char *text, size_t len, char **msg,
             ZtStats *st)
{
    Check *c = zu_xcalloc(1, sizeof *c);
    c->m = m;
    c->a = zu_arena_new();
    c->name = trace_name;
    int nl = m->nl;
    c->byl = zu_xcalloc((size_t)nl, sizeof *c->byl);
    c->nbyl = zu_xcalloc((size_t)nl, sizeof(int));
    c->capbyl = zu_xcalloc((size_t)nl, sizeof(int));
    c->start = zu_xcalloc((size_t)nl, sizeof *c->start);
    c->start_line = zu_xcalloc((size_t)nl, sizeof(int));
    int rc = 0;
    if (setjmp(c->fail_jb) == 0) {
        zt_read_trace(c, text, len);
        c->st.events = c->nev;
        zt_check_messages(c);
        zt_check_causal(c);
        zt_build_stores(c);
        zt_collect_decisions(c);
        zt_replay_all(c);
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
    free(c->lines);
    free(c->vcs);
    free(c->ev);
    for (int l = 0; l < nl; l++) free(c->byl[l]);
    free(c->byl);
    free(c->nbyl);
    free(c->capbyl);
    free(c->start);
    free(c->start_line);
    free(c->end_results);
    free(c->end_lines);
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
