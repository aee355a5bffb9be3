/* chart.c — the message sequence chart, rebuilt from the trace alone:
 * every receive matched with its send by message id (FIFO per sender,
 * receiver and channel), the causal order (local successors and
 * messages) checked acyclic by a topological walk that also computes
 * every event's vector clock, compared with the recorded one; then the
 * store of every lifeline after each of its events, from its start line
 * and the events' writes. */
#include "zt.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ===================================================================== */
/* Messages: matching, FIFO                                               */
/* ===================================================================== */

static unsigned long hash_str(const char *s)
{
    unsigned long h = 1469598103934665603ul;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ul;
    return h;
}

static Chan *chan_get(Check *c, const char *key, bool create)
{
    if (c->hcap == 0) {
        c->hcap = 64;
        c->htab = zu_xmalloc(sizeof(int) * (size_t)c->hcap);
        for (int i = 0; i < c->hcap; i++) c->htab[i] = -1;
    }
    unsigned long h = hash_str(key);
    for (int i = (int)(h % (unsigned long)c->hcap);; i = (i + 1) % c->hcap) {
        int k = c->htab[i];
        if (k < 0) break;
        if (!strcmp(c->chans[k].key, key)) return &c->chans[k];
    }
    if (!create) return NULL;
    if ((c->nchans + 1) * 2 > c->hcap) {
        int ncap = c->hcap * 2;
        int *nt = zu_xmalloc(sizeof(int) * (size_t)ncap);
        for (int i = 0; i < ncap; i++) nt[i] = -1;
        for (int k = 0; k < c->nchans; k++) {
            int i = (int)(hash_str(c->chans[k].key) % (unsigned long)ncap);
            while (nt[i] >= 0) i = (i + 1) % ncap;
            nt[i] = k;
        }
        free(c->htab);
        c->htab = nt;
        c->hcap = ncap;
    }
    c->chans = zt_grow(c->chans, &c->capchans, c->nchans + 1, sizeof *c->chans);
    Chan *ch = &c->chans[c->nchans];
    memset(ch, 0, sizeof *ch);
    ch->key = zu_strdup(c->a, key);
    int i = (int)(hash_str(key) % (unsigned long)c->hcap);
    while (c->htab[i] >= 0) i = (i + 1) % c->hcap;
    c->htab[i] = c->nchans++;
    return ch;
}

void zt_check_messages(Check *c)
{
    const ZtModel *m = c->m;
    /* sends first, in each lifeline's order */
    for (int l = 0; l < m->nl; l++)
        for (int i = 0; i < c->nbyl[l]; i++) {
            Ev *e = &c->ev[c->byl[l][i]];
            if (e->kind != K_SEND) continue;
            const char *key = zu_fmt(c->a, "%s>%s@%s", m->lnames[l], m->lnames[e->peer], e->chan);
            Chan *ch = chan_get(c, key, true);
            ch->sends = zt_grow(ch->sends, &ch->capsends, ch->nsends + 1, sizeof(int));
            ch->sends[ch->nsends++] = c->byl[l][i];
            const char *want = zu_fmt(c->a, "%s#%d", key, ch->nsends);
            if (strcmp(e->msg, want))
                zt_fail(
                    c, e->line,
                    "%s: send has message id \"%s\", expected \"%s\" (the channel's message %d)",
                    zt_ev_where(c, e), e->msg, want, ch->nsends);
        }
    for (int l = 0; l < m->nl; l++)
        for (int i = 0; i < c->nbyl[l]; i++) {
            Ev *e = &c->ev[c->byl[l][i]];
            if (e->kind != K_RECV) continue;
            const char *key = zu_fmt(c->a, "%s>%s@%s", m->lnames[e->peer], m->lnames[l], e->chan);
            Chan *ch = chan_get(c, key, false);
            int n = ch ? ++ch->nrecvs : 1;
            const char *want = zu_fmt(c->a, "%s#%d", key, n);
            if (!ch || n > ch->nsends)
                zt_fail(c, e->line,
                        "%s: receives \"%s\", but %s sent only %d message%s to %s on %s",
                        zt_ev_where(c, e), e->msg, m->lnames[e->peer], ch ? ch->nsends : 0,
                        ch && ch->nsends == 1 ? "" : "s", m->lnames[l], e->chan);
            if (strcmp(e->msg, want))
                zt_fail(c, e->line,
                        "%s: FIFO: receives \"%s\", expected the channel's next message \"%s\"",
                        zt_ev_where(c, e), e->msg, want);
            Ev *s = &c->ev[ch->sends[n - 1]];
            e->match = ch->sends[n - 1];
            s->match = c->byl[l][i];
            bool sc = s->ctl != NULL, rc = e->ctl != NULL;
            if (sc != rc || (sc && strcmp(s->ctl, e->ctl)))
                zt_fail(
                    c, e->line, "%s: receive of \"%s\" has control %s, the send (line %d) has %s",
                    zt_ev_where(c, e), e->msg, rc ? e->ctl : "null", s->line, sc ? s->ctl : "null");
            if (!json_equal(s->values, e->values))
                zt_fail(c, e->line,
                        "%s: receive of \"%s\" has values %s, the send (line %d) has %s",
                        zt_ev_where(c, e), e->msg, zt_jtext(c, e->values), s->line,
                        zt_jtext(c, s->values));
            c->st.messages++;
        }
    /* a receiver whose run ended normally took every message sent to it */
    for (int k = 0; k < c->nchans; k++) {
        Chan *ch = &c->chans[k];
        if (ch->nrecvs < ch->nsends) {
            Ev *s = &c->ev[ch->sends[ch->nrecvs]];
            if (!c->life_error[s->peer])
                zt_fail(c, s->line,
                        "%s: message \"%s\" is never received, but %s's run ended normally",
                        zt_ev_where(c, s), s->msg, m->lnames[s->peer]);
        }
    }
}

/* ===================================================================== */
/* Causal order: acyclicity and vector clocks                             */
/* ===================================================================== */

void zt_check_causal(Check *c)
{
    const ZtModel *m = c->m;
    long n = c->nev;
    int nl = m->nl;
    if (n * (long)nl > ZT_MAX_CELLS) zt_fail(c, 0, "trace too large to check (%ld events)", n);
    int *indeg = zu_xcalloc((size_t)(n ? n : 1), sizeof(int));
    int *queue = zu_xmalloc(sizeof(int) * (size_t)(n ? n : 1));
    int64_t *vcs = zu_xcalloc((size_t)(n ? n : 1) * (size_t)nl, sizeof(int64_t));
    c->vcs = vcs;
    for (long i = 0; i < n; i++) {
        c->ev[i].cvc = vcs + i * nl;
        if (c->ev[i].index > 1) indeg[i]++;
        if (c->ev[i].kind == K_RECV && c->ev[i].match >= 0) indeg[i]++;
    }
    long qh = 0, qt = 0;
    for (long i = 0; i < n; i++)
        if (!indeg[i]) queue[qt++] = (int)i;
    while (qh < qt) {
        int id = queue[qh++];
        Ev *e = &c->ev[id];
        /* vc(e) = max(vc(local predecessor), vc(matched send)), own count = index */
        if (e->index > 1) {
            Ev *p = &c->ev[c->byl[e->life][e->index - 2]];
            for (int b = 0; b < nl; b++) e->cvc[b] = p->cvc[b];
        }
        if (e->kind == K_RECV && e->match >= 0) {
            Ev *s = &c->ev[e->match];
            for (int b = 0; b < nl; b++)
                if (s->cvc[b] > e->cvc[b]) e->cvc[b] = s->cvc[b];
        }
        e->cvc[e->life] = e->index;
        if (e->index < c->nbyl[e->life]) {
            int nx = c->byl[e->life][e->index];
            if (--indeg[nx] == 0) queue[qt++] = nx;
        }
        if (e->kind == K_SEND && e->match >= 0)
            if (--indeg[e->match] == 0) queue[qt++] = e->match;
    }
    bool cyclic = qt < n;
    int first = -1;
    if (cyclic)
        for (long i = 0; i < n; i++)
            if (indeg[i] > 0 && (first < 0 || c->ev[i].line < c->ev[first].line)) first = (int)i;
    free(indeg);
    free(queue);
    if (cyclic) {
        Ev *e = &c->ev[first];
        zt_fail(c, e->line,
                "%s: the causal order has a cycle through this event (%s %s): a receive "
                "happens before its send",
                zt_ev_where(c, e), zt_kind_names[e->kind], e->msg ? e->msg : "");
    }
    /* compare with the recorded clocks */
    for (long i = 0; i < n; i++) {
        Ev *e = &c->ev[i];
        if ((int)json_object_size(e->vc) != nl) {
            const char *key;
            json_t *val;
            json_object_foreach(e->vc, key, val)
            {
                if (zt_life_index(m, key) < 0)
                    zt_fail(c, e->line, "%s: vc names an unknown lifeline \"%s\"",
                            zt_ev_where(c, e), key);
            }
            zt_fail(c, e->line, "%s: vc names %d lifelines, expected all %d", zt_ev_where(c, e),
                    (int)json_object_size(e->vc), nl);
        }
        for (int b = 0; b < nl; b++) {
            json_t *v = json_object_get(e->vc, m->lnames[b]);
            if (!json_is_integer(v))
                zt_fail(c, e->line, "%s: vc lacks an integer entry for %s", zt_ev_where(c, e),
                        m->lnames[b]);
            if (json_integer_value(v) != e->cvc[b])
                zt_fail(c, e->line,
                        "%s: vc[%s] is %" JSON_INTEGER_FORMAT ", but %" PRId64
                        " events of %s causally precede it (by reachability)",
                        zt_ev_where(c, e), m->lnames[b], json_integer_value(v), e->cvc[b],
                        m->lnames[b]);
        }
    }
}

/* ===================================================================== */
/* Stores                                                                 */
/* ===================================================================== */

void zt_build_stores(Check *c)
{
    const ZtModel *m = c->m;
    int nv = m->nvars;
    c->stores = zu_xcalloc((size_t)m->nl, sizeof *c->stores);
    if (c->nev * (long)(nv ? nv : 1) > ZT_MAX_CELLS)
        zt_fail(c, 0, "trace too large to check (%ld events)", c->nev);
    for (int l = 0; l < m->nl; l++) {
        int n = c->nbyl[l];
        json_t **s = zu_xcalloc((size_t)(n + 1) * (size_t)(nv ? nv : 1), sizeof(json_t *));
        c->stores[l] = s;
        const char *key;
        json_t *val;
        json_object_foreach(c->start[l], key, val) { s[zt_var_index(m, key)] = val; }
        for (int i = 1; i <= n; i++) {
            memcpy(s + (size_t)i * nv, s + (size_t)(i - 1) * nv, sizeof(json_t *) * (size_t)nv);
            Ev *e = &c->ev[c->byl[l][i - 1]];
            json_object_foreach(e->writes, key, val)
            {
                s[(size_t)i * nv + zt_var_index(m, key)] = val;
            }
        }
    }
}
