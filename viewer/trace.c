/* trace.c — reading a trace for the viewer (viewer.h): every line checked,
 * then every event given a row consistent with causality.
 *
 * The checks are those the pictures need, with the line that breaks them:
 * a line that is not a JSON object, an unknown "kind", a field of the
 * wrong type, a lifeline whose events are not numbered 1, 2, … in the
 * file, a message sent twice, a causal cycle; a store operation's events
 * (read, commit, abort) with their store, attempt, cell and version, or
 * transaction id.  Whether the run is one the
 * workflow allows is `zgc trace check`'s business (oracle/), not this
 * file's.  Fields the format marks optional, and fields it does not know,
 * are passed to the page as they are.
 */
#define _GNU_SOURCE
#include "viewer.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *err, size_t errlen, const char *fmt, ...) ZG_PRINTF(3, 4);
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static int lifeline_of(ZvwTrace *t, const char *name)
{
    for (int i = 0; i < t->nlifelines; i++)
        if (!strcmp(t->lifelines[i], name)) return i;
    t->lifelines = zu_xrealloc(t->lifelines, (size_t)(t->nlifelines + 1) * sizeof *t->lifelines);
    t->lifelines[t->nlifelines] = name; /* points into a line's JSON, which lives as long */
    return t->nlifelines++;
}

/* The event kinds: the runtime's, and a store operation's (an attempt's
 * reads, then its commit or abort: docs/oracle.md, "Stores"). */
#define KIND(id, name) name,
static const char *const event_kinds[] = {ZV_EVENT_KINDS(KIND) ZV_STORE_EVENT_KINDS(KIND)};
#undef KIND

/* Checks one line's fields.  Returns NULL, or what is wrong. */
static const char *check_fields(ZvwTrace *t, ZvwLine *ln, json_t *o, char *why, size_t n)
{
    json_t *k = json_object_get(o, "kind");
    if (!json_is_string(k)) return "no \"kind\" string";
    ln->kind = json_string_value(k);
    ln->lifeline = -1;
    ln->row = -1;
    json_t *life = json_object_get(o, "lifeline");
    if (!strcmp(ln->kind, ZV_TRACE_RESUME)) {
        /* a durable run's next attempt: of every lifeline, or of the one
         * it names (a per-lifeline executable's file) */
        if (!json_is_string(json_object_get(o, "run"))) return "no \"run\" string";
        json_t *a = json_object_get(o, "run_attempt");
        if (!json_is_integer(a) || json_integer_value(a) < 1)
            return "no \"run_attempt\" (an integer from 1)";
        if (life && !json_is_string(life)) return "\"lifeline\" is not a string";
        if (life) ln->lifeline = lifeline_of(t, json_string_value(life));
        t->nresumes++;
        return NULL;
    }
    if (!strcmp(ln->kind, ZV_TRACE_END)) {
        if (!json_object_get(o, "result") && !json_is_string(json_object_get(o, "error")))
            return "an end line without \"result\" or \"error\"";
        return NULL;
    }
    if (!json_is_string(life)) return "no \"lifeline\" string";
    /* the clock names every lifeline, in declaration order: before the
     * event's own (a trace without start lines keeps that order too) */
    json_t *vc = json_object_get(o, "vc");
    if (vc && !json_is_object(vc)) return "\"vc\" is not an object";
    const char *key;
    json_t *val;
    json_object_foreach(vc, key, val)
    {
        if (!json_is_integer(val)) return "a \"vc\" entry that is not an integer";
        lifeline_of(t, key);
    }
    ln->lifeline = lifeline_of(t, json_string_value(life));
    if (!strcmp(ln->kind, ZV_TRACE_START)) {
        json_t *st = json_object_get(o, "store");
        if (st && !json_is_object(st)) return "\"store\" is not an object";
        return NULL;
    }
    if (!strcmp(ln->kind, ZV_TRACE_RETRY)) {
        if (!json_is_string(json_object_get(o, "action"))) return "no \"action\" string";
        if (!json_is_integer(json_object_get(o, "attempt"))) return "no \"attempt\" integer";
        return NULL;
    }
    bool known = false;
    for (size_t i = 0; i < sizeof event_kinds / sizeof event_kinds[0]; i++)
        if (!strcmp(ln->kind, event_kinds[i])) known = true;
    if (!known) {
        snprintf(why, n, "unknown kind \"%.40s\"", ln->kind);
        return why;
    }
    ln->event = true;
    json_t *idx = json_object_get(o, "index");
    if (!json_is_integer(idx) || json_integer_value(idx) < 1)
        return "no \"index\" (an integer from 1)";
    ln->index = json_integer_value(idx);
    json_t *ra = json_object_get(o, "run_attempt");
    if (ra && (!json_is_integer(ra) || json_integer_value(ra) < 1))
        return "\"run_attempt\" is not an integer from 1";
    ln->attempt = ra ? json_integer_value(ra) : 0;
    if (ra) t->durable = true;
    json_t *w = json_object_get(o, "writes");
    if (w && !json_is_object(w)) return "\"writes\" is not an object";
    bool send = !strcmp(ln->kind, "send"), recv = !strcmp(ln->kind, "recv");
    if (send || recv) {
        json_t *peer = json_object_get(o, send ? "to" : "from");
        if (!json_is_string(peer)) return send ? "no \"to\" string" : "no \"from\" string";
        lifeline_of(t, json_string_value(peer));
        if (!json_is_string(json_object_get(o, "msg"))) return "no \"msg\" string";
        if (!json_is_string(json_object_get(o, "channel"))) return "no \"channel\" string";
        json_t *v = json_object_get(o, "values");
        if (v && !json_is_array(v)) return "\"values\" is not an array";
        json_t *c = json_object_get(o, "control");
        if (c && !json_is_null(c) && !json_is_string(c))
            return "\"control\" is neither null nor a string";
    } else if (!strcmp(ln->kind, "act")) {
        json_t *a = json_object_get(o, "action");
        if (a && !json_is_null(a) && !json_is_string(a))
            return "\"action\" is neither null nor a string";
        json_t *st = json_object_get(o, "store");
        if (st && !json_is_string(st)) return "\"store\" is not a string";
    } else if (!strcmp(ln->kind, "read") || !strcmp(ln->kind, "commit") ||
               !strcmp(ln->kind, "abort")) {
        if (!json_is_string(json_object_get(o, "store"))) return "no \"store\" string";
        json_t *a = json_object_get(o, "attempt");
        if (!json_is_integer(a) || json_integer_value(a) < 1)
            return "no \"attempt\" (an integer from 1)";
        if (ln->kind[0] == 'r') {
            if (!json_is_string(json_object_get(o, "cell"))) return "no \"cell\" string";
            if (!json_is_integer(json_object_get(o, "version"))) return "no \"version\" integer";
        } else {
            if (!json_is_integer(json_object_get(o, "txn"))) return "no \"txn\" integer";
            json_t *cells = json_object_get(o, "cells");
            if (cells && !json_is_object(cells)) return "\"cells\" is not an object";
            json_t *reg = json_object_get(o, "registry");
            if (reg && !json_is_array(reg)) return "\"registry\" is not an array";
        }
    } else {
        if (!json_is_string(json_object_get(o, "construct"))) return "no \"construct\" string";
    }
    return NULL;
}

static int by_lifeline_index(const void *a, const void *b, void *lines)
{
    const ZvwLine *L = lines;
    const ZvwLine *x = &L[*(const int *)a], *y = &L[*(const int *)b];
    if (x->index != y->index) return x->index < y->index ? -1 : 1;
    return x->lineno - y->lineno;
}

/* The rows (viewer.h).  Each lifeline's events in index order; a worklist
 * of lifelines; a receive whose send has no row yet waits on it. */
static int place_rows(ZvwTrace *t, char *err, size_t errlen)
{
    int nl = t->nlifelines;
    int **ev = zu_xcalloc((size_t)nl + 1, sizeof *ev);
    int *nev = zu_xcalloc((size_t)nl + 1, sizeof *nev);
    for (int i = 0; i < t->nlines; i++)
        if (t->lines[i].event) nev[t->lines[i].lifeline]++;
    for (int l = 0; l < nl; l++) ev[l] = zu_xcalloc((size_t)nev[l] + 1, sizeof **ev), nev[l] = 0;
    for (int i = 0; i < t->nlines; i++)
        if (t->lines[i].event) ev[t->lines[i].lifeline][nev[t->lines[i].lifeline]++] = i;
    int rc = 0;
    json_t *sends = json_object(); /* msg id -> line of its send */
    /* "store#txn" -> line of that commit: a read of a version comes after
     * the commit that wrote it, as a receive after its send */
    json_t *commits = json_object();
    int *on_commit = zu_xcalloc((size_t)nl + 1, sizeof *on_commit); /* line + 1 waited for */
    int *waiter = zu_xcalloc((size_t)t->nlines + 1, sizeof *waiter);
    int *next = zu_xcalloc((size_t)nl + 1, sizeof *next);
    long *last = zu_xcalloc((size_t)nl + 1, sizeof *last);
    int *work = zu_xcalloc((size_t)nl + 1, sizeof *work);
    char *queued = zu_xcalloc((size_t)nl + 1, 1);
    if (!sends || !commits) zu_oom();
    for (int l = 0; l < nl && rc == 0; l++) {
        qsort_r(ev[l], (size_t)nev[l], sizeof **ev, by_lifeline_index, t->lines);
        for (int k = 0; k < nev[l]; k++) {
            ZvwLine *ln = &t->lines[ev[l][k]];
            if (ln->index != k + 1) {
                rc = fail(err, errlen, "%s:%d: lifeline %s: %s %d %s", t->path, ln->lineno,
                          t->lifelines[l], ln->index <= k ? "event" : "this is event",
                          ln->index <= k ? k : (int)ln->index,
                          ln->index <= k ? "appears twice" : "but an earlier one is missing");
                break;
            }
            if (!strcmp(ln->kind, "send")) {
                const char *id = json_string_value(json_object_get(ln->json, "msg"));
                if (json_object_get(sends, id)) {
                    rc = fail(err, errlen, "%s:%d: message %s is sent twice", t->path, ln->lineno,
                              id);
                    break;
                }
                if (json_object_set_new(sends, id, json_integer(ev[l][k])) != 0) zu_oom();
            }
            if (!strcmp(ln->kind, "commit")) {
                char key[256];
                snprintf(key, sizeof key, "%s#%lld",
                         json_string_value(json_object_get(ln->json, "store")),
                         (long long)json_integer_value(json_object_get(ln->json, "txn")));
                if (json_object_set_new(commits, key, json_integer(ev[l][k])) != 0) zu_oom();
            }
        }
        last[l] = -1;
    }
    /* a read drawn without its version's commit above it (see below) */
    char *loose = zu_xcalloc((size_t)t->nlines + 1, 1);
    int nwork = 0;
    for (int l = 0; l < nl; l++) work[nwork++] = l, queued[l] = 1;
again:
    while (rc == 0 && nwork > 0) {
        int l = work[--nwork];
        queued[l] = 0;
        while (next[l] < nev[l]) {
            int i = ev[l][next[l]];
            ZvwLine *ln = &t->lines[i];
            long row = last[l] + 1;
            bool send = !strcmp(ln->kind, "send");
            const char *id = json_string_value(json_object_get(ln->json, "msg"));
            if (!strcmp(ln->kind, "recv")) {
                json_t *s = json_object_get(sends, id);
                if (s) {
                    int si = (int)json_integer_value(s);
                    if (t->lines[si].row < 0) {
                        waiter[si] = l + 1;
                        break;
                    }
                    if (t->lines[si].row + 1 > row) row = t->lines[si].row + 1;
                }
            }
            json_t *ver = json_object_get(ln->json, "version");
            if (!strcmp(ln->kind, "read") && json_integer_value(ver) > 0 && !loose[i]) {
                char key[256];
                snprintf(key, sizeof key, "%s#%lld",
                         json_string_value(json_object_get(ln->json, "store")),
                         (long long)json_integer_value(ver));
                json_t *s = json_object_get(commits, key);
                if (s) {
                    int si = (int)json_integer_value(s);
                    if (t->lines[si].row < 0) {
                        on_commit[l] = si + 1;
                        break;
                    }
                    if (t->lines[si].row + 1 > row) row = t->lines[si].row + 1;
                }
            }
            ln->row = row;
            last[l] = row;
            next[l]++;
            if (row + 1 > t->nrows) t->nrows = row + 1;
            t->nevents++;
            if (send) {
                t->nmessages++;
                int w = waiter[i] - 1;
                if (w >= 0 && !queued[w]) work[nwork++] = w, queued[w] = 1;
            }
            if (!strcmp(ln->kind, "commit"))
                for (int w = 0; w < nl; w++)
                    if (on_commit[w] == i + 1) {
                        on_commit[w] = 0;
                        if (!queued[w]) work[nwork++] = w, queued[w] = 1;
                    }
        }
    }
    /* Reads waiting for commits that wait for them: events of concurrent
     * branches of one lifeline are numbered in the order they were
     * recorded, and a read may be numbered before the commit of another
     * branch whose value it read (docs/runtime.md, "Trace format").  Such
     * a read is drawn in its lifeline's order, without the commit above
     * it; a receive can never come before its send. */
    if (rc == 0) {
        for (int l = 0; l < nl && nwork == 0; l++) /* one at a time */
            if (next[l] < nev[l] && on_commit[l]) {
                loose[ev[l][next[l]]] = 1;
                on_commit[l] = 0;
                work[nwork++] = l, queued[l] = 1;
            }
        if (nwork > 0) goto again;
    }
    free(loose);
    for (int l = 0; l < nl && rc == 0; l++)
        if (next[l] < nev[l])
            rc = fail(err, errlen,
                      "%s:%d: the %s on lifeline %s comes causally before its own %s (a cycle)",
                      t->path, t->lines[ev[l][next[l]]].lineno,
                      strcmp(t->lines[ev[l][next[l]]].kind, "read") ? "receive" : "read",
                      t->lifelines[l],
                      strcmp(t->lines[ev[l][next[l]]].kind, "read") ? "send" : "version's commit");
    json_decref(sends);
    json_decref(commits);
    free(on_commit);
    for (int l = 0; l < nl; l++) free(ev[l]);
    free(ev), free(nev), free(waiter), free(next), free(last), free(work), free(queued);
    return rc;
}

static int read_trace(ZvwTrace *t, const char *path, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    t->path = path;
    const char *why;
    t->text = zu_read_file(path, &t->len, &why);
    if (!t->text) return fail(err, errlen, "cannot read %s: %s", path, why);
    size_t cap = 0;
    int lineno = 0;
    for (size_t p = 0; p < t->len;) {
        const char *s = t->text + p;
        const char *nl = memchr(s, '\n', t->len - p);
        size_t n = nl ? (size_t)(nl - s) : t->len - p;
        p += n + (nl ? 1 : 0);
        lineno++;
        size_t b = 0, e = n;
        while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r')) b++;
        while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) e--;
        if (b == e) continue; /* a blank line */
        json_error_t je;
        json_t *o = json_loadb(s + b, e - b, 0, &je);
        if (!o) return fail(err, errlen, "%s:%d: not JSON: %s", path, lineno, je.text);
        if ((size_t)t->nlines == cap) {
            cap = cap ? cap * 2 : 256;
            t->lines = zu_xrealloc(t->lines, cap * sizeof *t->lines);
        }
        ZvwLine *ln = &t->lines[t->nlines++];
        memset(ln, 0, sizeof *ln);
        ln->json = o;
        ln->lineno = lineno;
        ln->off = (size_t)(s + b - t->text);
        ln->len = e - b;
        if (!json_is_object(o)) return fail(err, errlen, "%s:%d: not a JSON object", path, lineno);
        char buf[96];
        const char *bad = check_fields(t, ln, o, buf, sizeof buf);
        if (bad) return fail(err, errlen, "%s:%d: %s", path, lineno, bad);
    }
    if (t->nlines == 0) return fail(err, errlen, "%s: the trace has no lines", path);
    return place_rows(t, err, errlen);
}

int zvw_trace_read(ZvwTrace *t, const char *path, char *err, size_t errlen)
{
    if (read_trace(t, path, err, errlen) == 0) return 0;
    zvw_trace_free(t);
    return -1;
}

void zvw_trace_free(ZvwTrace *t)
{
    for (int i = 0; i < t->nlines; i++) json_decref(t->lines[i].json);
    free(t->lines);
    free(t->lifelines);
    free(t->text);
    memset(t, 0, sizeof *t);
}
