/* trace.c — reading a run's trace: JSON Lines (docs/runtime.md, "Trace
 * format"), parsed with jansson, one object a line, each of one of the
 * kinds runtime/trace.c writes — start, the events (send, recv, act,
 * choice, and a store operation's read, commit and abort), retry, end —
 * with exactly the keys of its kind, each of the JSON type it has there.
 * Events name known lifelines and variables and are numbered 1, 2, … per
 * lifeline.  Where the lines stand:
 *
 *   - one process (one end line): the start lines first, one per
 *     lifeline in declaration order, then events and retry lines, then
 *     the end line, last;
 *   - per-lifeline traces put together (one end line per lifeline): one
 *     segment per lifeline, its start line, its own events and retry
 *     lines, its end line.
 *
 * A durable run's trace may hold several attempts: a "resume" line begins
 * the next one (its events carry "run_attempt"), an end line right before
 * it (of an attempt that failed) no longer ends the run, and the events of
 * all the attempts make one chart.
 *
 * The order of the lines of different lifelines is not checked: the
 * runtime writes them in the order the events happen, and `zgc run
 * --processes` merges the per-lifeline traces lifeline after lifeline;
 * the chart comes from the indexes and message ids alone.  The limits of
 * zt.h bound what a hostile trace can make the checker allocate.
 *
 * A disagreement is reported once, as "TRACE:LINE: …", by zt_fail, which
 * leaves the check: the functions here name what disagrees. */
#define _GNU_SOURCE
#include "zt.h"

#include <stdarg.h>
#include <stdlib.h>
#include <inttypes.h>
#include <string.h>

#define ZT_KIND_NAME(id, name) name,
#define ZT_STORE_NAME(id, name) [K_ST_##id] = name,
const char *const zt_kind_names[K__ALL] = {ZV_EVENT_KINDS(ZT_KIND_NAME)
                                               ZV_STORE_EVENT_KINDS(ZT_STORE_NAME)};
#undef ZT_KIND_NAME
#undef ZT_STORE_NAME

/* The K_ of an event line's kind; -1 for a line that is not an event.
 * The store events first: they are the oracle's own reading. */
static int event_kind(const char *kind)
{
    for (int k = K__COUNT; k < K__ALL; k++)
        if (!strcmp(kind, zt_kind_names[k])) return k;
    for (int k = 0; k < K__COUNT; k++)
        if (zt_kind_names[k] && !strcmp(kind, zt_kind_names[k])) return k;
    return -1;
}

void zt_fail(Check *c, int line, const char *fmt, ...)
{
    c->fail_line = line;
    if (line > 0)
        zu_buf_printf(&c->msg, "%s:%d: ", c->name, line);
    else
        zu_buf_printf(&c->msg, "%s: ", c->name);
    char tmp[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    zu_buf_puts(&c->msg, tmp);
    longjmp(c->fail_jb, 1);
}

void *zt_grow(void *p, int *cap, int need, size_t elem)
{
    if (need <= *cap) return p;
    int n = *cap ? *cap : 8;
    while (n < need) n *= 2;
    void *q = zu_xrealloc(p, (size_t)n * elem);
    *cap = n;
    return q;
}

const char *zt_jtext(Check *c, const json_t *j)
{
    if (!j) return "(undefined)";
    char *s = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!s) return "?";
    size_t n = strlen(s);
    const char *r;
    if (n > 200)
        r = zu_fmt(c->a, "%.197s...", s);
    else
        r = zu_strdup(c->a, s);
    free(s);
    return r;
}

const char *zt_ev_where(Check *c, const Ev *e)
{
    return zu_fmt(c->a, "lifeline %s event %d", c->m->lnames[e->life], e->index);
}

/* A line's keys are want[0..n), every one present, and perhaps some of
 * opt[0..nopt), no other; `kind` names the line in messages: a "KIND"
 * line. */
static void line_keys(Check *c, json_t *o, int line, const char *kind, const char *const *want,
                      int n, const char *const *opt, int nopt)
{
    for (int i = 0; i < n; i++)
        if (!json_object_get(o, want[i]))
            zt_fail(c, line, "a \"%s\" line lacks \"%s\"", kind, want[i]);
    if ((int)json_object_size(o) == n) return;
    const char *key;
    json_t *val;
    json_object_foreach(o, key, val)
    {
        bool known = false;
        for (int i = 0; i < n && !known; i++) known = !strcmp(key, want[i]);
        for (int i = 0; i < nopt && !known; i++) known = !strcmp(key, opt[i]);
        if (!known) zt_fail(c, line, "a \"%s\" line has an unknown field \"%s\"", kind, key);
    }
}

static void exact_keys(Check *c, json_t *o, int line, const char *kind, const char *const *want,
                       int n)
{
    line_keys(c, o, line, kind, want, n, NULL, 0);
}

static const char *get_str(Check *c, json_t *o, const char *key, int line, bool nullable)
{
    json_t *v = json_object_get(o, key);
    if (!v) zt_fail(c, line, "event lacks \"%s\"", key);
    if (nullable && json_is_null(v)) return NULL;
    if (!json_is_string(v))
        zt_fail(c, line, "\"%s\" must be a string%s", key, nullable ? " or null" : "");
    return json_string_value(v);
}

static int get_life(Check *c, json_t *o, const char *key, int line)
{
    const char *s = get_str(c, o, key, line, false);
    int l = zt_life_index(c->m, s);
    if (l < 0) zt_fail(c, line, "unknown lifeline \"%s\" in \"%s\"", s, key);
    return l;
}

/* A positive integer field. */
static int64_t get_count(Check *c, json_t *o, const char *key, int line)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < 1)
        zt_fail(c, line, "\"%s\" must be a positive integer, not %s", key, zt_jtext(c, v));
    return json_integer_value(v);
}

static void add_line(Check *c, json_t *j)
{
    c->lines = zt_grow(c->lines, &c->caplines, c->nlines + 1, sizeof *c->lines);
    c->lines[c->nlines++] = j;
}

/* The keys of each event kind (K_ order), after the common ones. */
static const char *const event_keys[K__ALL][5] = {
    [K_SEND] = {"to", "channel", "values", "control", "msg"},
    [K_RECV] = {"from", "channel", "values", "control", "msg"},
    [K_ACT] = {"action", "attempts"},
    [K_CHOICE] = {"construct", "value"},
    [K_ST_READ] = {"store", "cell", "value", "version", "attempt"},
    [K_ST_COMMIT] = {"store", "txn", "attempt", "cells"},
    [K_ST_ABORT] = {"store", "txn", "attempt", "reason"},
};
static const int event_nkeys[K__ALL] = {
    [K_SEND] = 5,    [K_RECV] = 5,      [K_ACT] = 2,      [K_CHOICE] = 2,
    [K_ST_READ] = 5, [K_ST_COMMIT] = 4, [K_ST_ABORT] = 4,
};
/* The optional keys of each event kind: a durable run's attempt, and what
 * a coregion's receive and an llm or human action record
 * (runtime/trace.c); replay.c checks where the latter stand and what they
 * say. */
static const char *const event_opt_keys[K__ALL][7] = {
    [K_SEND] = {"run_attempt"},
    [K_RECV] = {"run_attempt", "coregion"},
    [K_ACT] = {"run_attempt", "prompt", "question", "answer", "subrun", "store", "op"},
    [K_CHOICE] = {"run_attempt"},
    [K_ST_READ] = {"run_attempt", "op"},
    [K_ST_COMMIT] = {"run_attempt", "registry", "op"},
    [K_ST_ABORT] = {"run_attempt", "op"},
};
static const int event_nopt_keys[K__ALL] = {
    [K_SEND] = 1,    [K_RECV] = 2,      [K_ACT] = 7,      [K_CHOICE] = 1,
    [K_ST_READ] = 2, [K_ST_COMMIT] = 3, [K_ST_ABORT] = 2,
};

/* A non-negative integer field. */
static int64_t get_natural(Check *c, json_t *o, const char *key, int line)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        zt_fail(c, line, "\"%s\" must be a non-negative integer, not %s", key, zt_jtext(c, v));
    return json_integer_value(v);
}

/* The fields of a store event and an act's "store": a known store, a
 * cell of it, a version of at least 0, a transaction id and an attempt
 * of at least 1, a commit's cells (an object of the store's cells) and
 * registry (an array of distinct tool names of the store), an abort's
 * reason (a string). */
static void read_store_fields(Check *c, json_t *o, Ev *e, int line);

/* The optional fields' form: "coregion" is true; "prompt" an object of
 * the strings "system" and "user", one of them at least; "question" and
 * "answer" strings. */
static void read_optional(Check *c, json_t *o, Ev *e, int line)
{
    json_t *v = json_object_get(o, "coregion");
    if (v && !json_is_true(v))
        zt_fail(c, line, "\"coregion\" must be true, not %s", zt_jtext(c, v));
    e->coregion = v != NULL;
    e->prompt = json_object_get(o, "prompt");
    if (e->prompt) {
        static const char *const pk[] = {"system", "user"};
        if (!json_is_object(e->prompt) || json_object_size(e->prompt) == 0)
            zt_fail(c, line, "\"prompt\" must be an object with \"system\" or \"user\", not %s",
                    zt_jtext(c, e->prompt));
        line_keys(c, e->prompt, line, "prompt", NULL, 0, pk, 2);
        for (int i = 0; i < 2; i++) {
            json_t *t = json_object_get(e->prompt, pk[i]);
            if (t && !json_is_string(t))
                zt_fail(c, line, "\"prompt\": \"%s\" must be a string, not %s", pk[i],
                        zt_jtext(c, t));
        }
    }
    v = json_object_get(o, "question");
    if (v && !json_is_string(v)) zt_fail(c, line, "\"question\" must be a string");
    e->question = v;
    v = json_object_get(o, "answer");
    if (v && !json_is_string(v)) zt_fail(c, line, "\"answer\" must be a string");
    e->has_answer = v != NULL;
    /* a planner's nested run: {"source": "…", "trace": [objects]} */
    v = json_object_get(o, "subrun");
    if (v && (!json_is_object(v) || json_object_size(v) != 2 ||
              !json_is_string(json_object_get(v, "source")) ||
              !json_is_array(json_object_get(v, "trace"))))
        zt_fail(c, line,
                "\"subrun\" must be an object of \"source\" (a string) and \"trace\" "
                "(an array)");
    e->subrun = v;
}

static void read_event(Check *c, json_t *o, int k, int line)
{
    const char *keys[12] = {"lifeline", "index", "kind", "writes", "vc"};
    int nk = 5;
    for (int i = 0; i < event_nkeys[k]; i++) keys[nk++] = event_keys[k][i];
    line_keys(c, o, line, zt_kind_names[k], keys, nk, event_opt_keys[k], event_nopt_keys[k]);
    if (c->nev >= ZT_MAX_EVENTS) zt_fail(c, line, "too many events (more than %ld)", ZT_MAX_EVENTS);
    if (c->nev >= c->capev) {
        long n = c->capev ? c->capev * 2 : 256;
        c->ev = zu_xrealloc(c->ev, (size_t)n * sizeof *c->ev);
        c->capev = n;
    }
    Ev *e = &c->ev[c->nev];
    memset(e, 0, sizeof *e);
    e->kind = k;
    e->line = line;
    e->match = -1;
    e->peer = -1;
    e->life = get_life(c, o, "lifeline", line);
    json_t *ix = json_object_get(o, "index");
    if (!json_is_integer(ix)) zt_fail(c, line, "event lacks an integer \"index\"");
    int l = e->life;
    json_int_t want = c->nbyl[l] + 1;
    if (json_integer_value(ix) != want)
        zt_fail(c, line,
                "lifeline %s: event index %" JSON_INTEGER_FORMAT ", expected %" JSON_INTEGER_FORMAT
                " (events must be numbered 1, 2, ... per lifeline)",
                c->m->lnames[l], json_integer_value(ix), want);
    e->index = (int)want;
    if (k == K_SEND || k == K_RECV) {
        e->peer = get_life(c, o, k == K_SEND ? "to" : "from", line);
        if (e->peer == l)
            zt_fail(c, line, "lifeline %s event %d: a message to itself", c->m->lnames[l],
                    e->index);
        e->chan = get_str(c, o, "channel", line, false);
        e->ctl = get_str(c, o, "control", line, true);
        e->msg = get_str(c, o, "msg", line, false);
        e->values = json_object_get(o, "values");
        if (!json_is_array(e->values)) zt_fail(c, line, "\"values\" must be an array");
    } else if (k == K_ACT) {
        e->action = get_str(c, o, "action", line, true);
        e->attempts = get_count(c, o, "attempts", line);
    } else if (k == K_CHOICE) {
        e->construct = get_str(c, o, "construct", line, false);
        json_t *v = json_object_get(o, "value");
        if (!json_is_boolean(v)) zt_fail(c, line, "choice event lacks a boolean \"value\"");
        e->value = json_is_true(v);
    }
    read_optional(c, o, e, line);
    e->op_prev = -1;
    if (k >= K__COUNT || json_object_get(o, "store"))
        read_store_fields(c, o, e, line);
    else if (json_object_get(o, "op"))
        zt_fail(c, line, "\"op\" on an act event without \"store\"");
    /* a durable run's attempt: after a resume line, the attempt it begins */
    json_t *ra = json_object_get(o, "run_attempt");
    if (ra) {
        int64_t a = get_count(c, o, "run_attempt", line);
        if (c->attempt[l] && a != c->attempt[l])
            zt_fail(c, line,
                    "lifeline %s event %d: \"run_attempt\" %" PRId64
                    ", but the resume line before it began attempt %" PRId64,
                    c->m->lnames[l], e->index, a, c->attempt[l]);
        if (a > c->attempt_seen[l]) c->attempt_seen[l] = a;
    } else if (c->attempt[l]) {
        zt_fail(c, line,
                "lifeline %s event %d: an event of resumed attempt %" PRId64
                " lacks \"run_attempt\"",
                c->m->lnames[l], e->index, c->attempt[l]);
    }
    e->writes = json_object_get(o, "writes");
    if (!json_is_object(e->writes)) zt_fail(c, line, "event lacks a \"writes\" object");
    const char *key;
    json_t *val;
    json_object_foreach(e->writes, key, val)
    {
        if (zt_var_index(c->m, key) < 0)
            zt_fail(c, line, "\"writes\" names an unknown variable \"%s\"", key);
    }
    e->vc = json_object_get(o, "vc");
    if (!json_is_object(e->vc)) zt_fail(c, line, "event lacks a \"vc\" object");
    c->byl[l] = zt_grow(c->byl[l], &c->capbyl[l], c->nbyl[l] + 1, sizeof(int));
    c->byl[l][c->nbyl[l]++] = (int)c->nev;
    c->nev++;
}

static void read_store_fields(Check *c, json_t *o, Ev *e, int line)
{
    e->store = get_str(c, o, "store", line, false);
    const ZDecl *st = zt_store(c->m, e->store);
    if (!st) zt_fail(c, line, "unknown store \"%s\" in \"store\"", e->store);
    /* optional: which operation of the lifeline the event is part of */
    json_t *op = json_object_get(o, "op");
    if (op && (!json_is_string(op) || !*json_string_value(op)))
        zt_fail(c, line, "\"op\" must be a non-empty string, not %s", zt_jtext(c, op));
    e->op_id = op ? json_string_value(op) : NULL;
    if (e->kind == K_ACT) return;
    e->op_attempt = get_count(c, o, "attempt", line);
    if (e->kind == K_ST_READ) {
        e->cell = get_str(c, o, "cell", line, false);
        if (!zt_cell(st, e->cell))
            zt_fail(c, line, "store %s has no cell \"%s\"", st->name, e->cell);
        e->rvalue = json_object_get(o, "value");
        e->version = get_natural(c, o, "version", line);
        return;
    }
    e->txn = get_count(c, o, "txn", line);
    if (e->kind == K_ST_ABORT) {
        if (!json_is_string(json_object_get(o, "reason")))
            zt_fail(c, line, "\"reason\" must be a string");
        return;
    }
    e->cells = json_object_get(o, "cells");
    if (!json_is_object(e->cells)) zt_fail(c, line, "\"cells\" must be an object");
    const char *key;
    json_t *val;
    json_object_foreach(e->cells, key, val)
    {
        if (!zt_cell(st, key))
            zt_fail(c, line, "\"cells\" names \"%s\", which is not a cell of store %s", key,
                    st->name);
    }
    e->registry = json_object_get(o, "registry");
    if (!e->registry) return;
    if (!json_is_array(e->registry))
        zt_fail(c, line, "\"registry\" must be an array of tool names");
    for (size_t i = 0; i < json_array_size(e->registry); i++) {
        json_t *t = json_array_get(e->registry, i);
        if (!json_is_string(t))
            zt_fail(c, line, "\"registry\" must be an array of tool names, not %s",
                    zt_jtext(c, e->registry));
        for (size_t j = 0; j < i; j++)
            if (json_equal(t, json_array_get(e->registry, j)))
                zt_fail(c, line, "\"registry\" names tool %s twice", zt_jtext(c, t));
    }
}

static void read_start(Check *c, json_t *o, int line)
{
    static const char *const keys[] = {"kind", "lifeline", "store"};
    exact_keys(c, o, line, ZV_TRACE_START, keys, 3);
    int l = get_life(c, o, "lifeline", line);
    if (c->start[l]) zt_fail(c, line, "a second start line for lifeline %s", c->m->lnames[l]);
    json_t *st = json_object_get(o, "store");
    if (!json_is_object(st)) zt_fail(c, line, "start line lacks a \"store\" object");
    const char *key;
    json_t *val;
    json_object_foreach(st, key, val)
    {
        if (zt_var_index(c->m, key) < 0)
            zt_fail(c, line, "start store names an unknown variable \"%s\"", key);
    }
    c->start[l] = st;
    c->start_line[l] = line;
    c->attempt[l] = c->attempt_seen[l] = 0; /* its segment begins */
}

/* A resume line: a durable run's next attempt begins, of one lifeline
 * (a per-lifeline executable's trace names it) or of all.  An end line
 * right before it (of an attempt that stopped with an error) no longer
 * ends the run or the lifeline's segment; the events of all attempts make
 * one chart. */
static void read_resume(Check *c, json_t *o, int line)
{
    static const char *const keys[] = {"kind", "run", "run_attempt"}, *const opt[] = {"lifeline"};
    line_keys(c, o, line, ZV_TRACE_RESUME, keys, 3, opt, 1);
    int only = json_object_get(o, "lifeline") ? get_life(c, o, "lifeline", line) : -1;
    json_t *run = json_object_get(o, "run");
    if (!json_is_string(run) || !json_string_length(run))
        zt_fail(c, line, "\"run\" must be a run id (a non-empty string), not %s", zt_jtext(c, run));
    if (c->run_id && strcmp(c->run_id, json_string_value(run)))
        zt_fail(c, line, "a resume line of run \"%s\" in a trace of run \"%s\"",
                json_string_value(run), c->run_id);
    c->run_id = json_string_value(run);
    int64_t a = get_count(c, o, "run_attempt", line);
    for (int l = 0; l < c->m->nl; l++) {
        if (only >= 0 && l != only) continue;
        if (!c->start[l])
            zt_fail(c, line, "a resume line before the start line of lifeline %s", c->m->lnames[l]);
        int64_t before = c->attempt[l] > c->attempt_seen[l] ? c->attempt[l] : c->attempt_seen[l];
        if (a <= before)
            zt_fail(c, line,
                    "lifeline %s: resume line of attempt %" PRId64 " after attempt %" PRId64
                    " (attempts are numbered upwards)",
                    c->m->lnames[l], a, before);
        c->attempt[l] = a;
    }
    if (c->nli > 0 && c->li[c->nli - 1].what == L_END) {
        c->nli--;
        c->nends--;
    }
}

static void read_retry(Check *c, json_t *o, int line)
{
    static const char *const keys[] = {"lifeline", "kind", "action", "attempt", "error", "delay"};
    exact_keys(c, o, line, ZV_TRACE_RETRY, keys, 6);
    c->retries = zt_grow(c->retries, &c->capretries, c->nretries + 1, sizeof *c->retries);
    Retry *r = &c->retries[c->nretries];
    r->line = line;
    r->life = get_life(c, o, "lifeline", line);
    r->action = get_str(c, o, "action", line, false);
    r->attempt = get_count(c, o, "attempt", line);
    if (!json_is_string(json_object_get(o, "error")))
        zt_fail(c, line, "\"error\" must be a string");
    /* the runtime writes the wait as a float: 0.0 for mock and scripted
     * models, else the backoff or Retry-After times --backoff-scale */
    json_t *d = json_object_get(o, "delay");
    if (!json_is_real(d) || !(json_real_value(d) >= 0))
        zt_fail(c, line, "\"delay\" must be a float of at least 0.0, not %s", zt_jtext(c, d));
    r->after = c->nbyl[r->life];
    c->nretries++;
}

static void read_end(Check *c, json_t *o, int line)
{
    json_t *err = json_object_get(o, "error");
    static const char *const kr[] = {"kind", "result"}, *const ke[] = {"kind", "error"};
    if (err && json_object_get(o, "result"))
        zt_fail(c, line, "an end line has a \"result\" or an \"error\", not both");
    if (!err && !json_object_get(o, "result"))
        zt_fail(c, line, "end line lacks \"result\" or \"error\"");
    exact_keys(c, o, line, ZV_TRACE_END, err ? ke : kr, 2);
    if (err && !json_is_string(err)) zt_fail(c, line, "\"error\" must be a string");
    int cap1 = c->capends, cap2 = c->capends, cap3 = c->capends;
    c->end_results = zt_grow(c->end_results, &cap1, c->nends + 1, sizeof(json_t *));
    c->end_lines = zt_grow(c->end_lines, &cap2, c->nends + 1, sizeof(int));
    c->end_life = zt_grow(c->end_life, &cap3, c->nends + 1, sizeof(int));
    c->capends = cap1;
    c->end_results[c->nends] = err ? NULL : json_object_get(o, "result");
    c->end_lines[c->nends] = line;
    c->end_life[c->nends] = -1;
    c->nends++;
}

/* Where the lines stand (the header's rules); fills the ends' lifelines
 * and life_end / life_error. */
static void check_places(Check *c, int nlines)
{
    const ZtModel *m = c->m;
    const LineInfo *li = c->li;
    int n = c->nli, nl = m->nl;
    if (c->nends == 0) zt_fail(c, nlines + 1, "the trace has no end line (the run did not finish)");
    if (li[n - 1].what != L_END)
        for (int i = n - 1; i >= 0; i--)
            if (li[i].what == L_END)
                zt_fail(c, li[i + 1].line,
                        "a line after the end line (the end line is the last of a trace)");
    if (c->nends == 1) {
        for (int l = 0; l < nl; l++)
            if (!c->start[l]) zt_fail(c, 0, "no start line for lifeline %s", m->lnames[l]);
        /* one process: the start lines first, in declaration order */
        int k = 0;
        for (int i = 0; i < n; i++) {
            if (li[i].what == L_START && (k >= nl || li[i].life != k))
                zt_fail(c, li[i].line,
                        "the start line of lifeline %s is not in its place: a trace begins with "
                        "one start line per lifeline, in declaration order",
                        m->lnames[li[i].life]);
            if (li[i].what != L_START && k < nl)
                zt_fail(c, li[i].line,
                        "no start line for lifeline %s before the events (a trace begins with "
                        "one start line per lifeline, in declaration order)",
                        m->lnames[k]);
            if (li[i].what == L_START) k++;
        }
        for (int l = 0; l < nl; l++) c->life_end[l] = 0;
        c->end_life[0] = -1;
    } else {
        /* per-lifeline traces put together: segments */
        const char *why = zu_fmt(c->a,
                                 "(a trace with %d end lines is per-lifeline traces put together: "
                                 "each its start line, its lifeline's lines, its end line)",
                                 c->nends);
        int seg = 0, life = -1;
        for (int i = 0; i < n; i++) {
            if (life < 0) {
                if (li[i].what != L_START)
                    zt_fail(c, li[i].line, "a per-lifeline trace must begin with its start line %s",
                            why);
                life = li[i].life;
                continue;
            }
            if (li[i].what == L_END) {
                c->end_life[seg] = life;
                c->life_end[life] = seg++;
                life = -1;
                continue;
            }
            if (li[i].what == L_START)
                zt_fail(c, li[i].line,
                        "a start line of lifeline %s inside the trace of lifeline %s %s",
                        m->lnames[li[i].life], m->lnames[life], why);
            if (li[i].life != life)
                zt_fail(c, li[i].line, "a line of lifeline %s inside the trace of lifeline %s %s",
                        m->lnames[li[i].life], m->lnames[life], why);
        }
    }
    for (int l = 0; l < nl; l++)
        if (!c->start[l]) zt_fail(c, 0, "no start line for lifeline %s", m->lnames[l]);
    for (int l = 0; l < nl; l++) c->life_error[l] = c->end_results[c->life_end[l]] == NULL;
}

void zt_read_trace(Check *c, const char *text, size_t len)
{
    size_t pos = 0;
    int line = 0;
    while (pos < len) {
        size_t end = pos;
        while (end < len && text[end] != '\n') end++;
        line++;
        size_t b = pos, e = end;
        pos = end + 1;
        while (b < e && (text[b] == ' ' || text[b] == '\t' || text[b] == '\r')) b++;
        while (e > b && (text[e - 1] == ' ' || text[e - 1] == '\t' || text[e - 1] == '\r')) e--;
        if (b == e) continue;
        json_error_t jerr;
        /* strings may hold NUL: a json input's or a model's "\u0000" */
        json_t *o = json_loadb(text + b, e - b, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
        if (!o) zt_fail(c, line, "not JSON: %s", jerr.text);
        add_line(c, o);
        if (!json_is_object(o)) zt_fail(c, line, "not a JSON object");
        json_t *kind = json_object_get(o, "kind");
        if (!json_is_string(kind)) zt_fail(c, line, "line lacks a string \"kind\"");
        const char *k = json_string_value(kind);
        LineInfo info = {L_START, -1, line};
        if (!strcmp(k, ZV_TRACE_START)) {
            read_start(c, o, line);
            info.life = zt_life_index(c->m, json_string_value(json_object_get(o, "lifeline")));
        } else if (!strcmp(k, ZV_TRACE_END)) {
            read_end(c, o, line);
            info.what = L_END;
        } else if (!strcmp(k, ZV_TRACE_RETRY)) {
            read_retry(c, o, line);
            info.what = L_RETRY;
            info.life = c->retries[c->nretries - 1].life;
        } else if (!strcmp(k, ZV_TRACE_RESUME)) {
            read_resume(c, o, line);
            continue; /* not a line of its own place */
        } else {
            int ek = event_kind(k);
            if (ek < 0)
                zt_fail(c, line,
                        "unknown line kind \"%s\" (the runtime writes start, %s, %s, %s, %s, "
                        "%s, %s, %s, retry, resume and end lines)",
                        k, zt_kind_names[K_SEND], zt_kind_names[K_RECV], zt_kind_names[K_ACT],
                        zt_kind_names[K_CHOICE], zt_kind_names[K_ST_READ],
                        zt_kind_names[K_ST_COMMIT], zt_kind_names[K_ST_ABORT]);
            read_event(c, o, ek, line);
            info.what = L_EVENT;
            info.life = c->ev[c->nev - 1].life;
        }
        c->li = zt_grow(c->li, &c->capli, c->nli + 1, sizeof *c->li);
        c->li[c->nli++] = info;
    }
    c->life_end = zu_alloc(c->a, sizeof(int) * (size_t)(c->m->nl + 1));
    c->life_error = zu_alloc(c->a, sizeof(bool) * (size_t)(c->m->nl + 1));
    check_places(c, line);
}
