/* trace.c — reading a run's trace: JSON Lines (docs/runtime.md, "Trace
 * format"), parsed with jansson, one object a line.  Events must name
 * known lifelines and variables, be numbered 1, 2, … per lifeline and
 * carry the fields of their kind; every lifeline has a start line and the
 * run an end line.  A durable run's trace may hold several attempts: a
 * "resume" line begins the next one, and an end line before it (of an
 * attempt that failed) no longer ends the run; the events of all the
 * attempts make one chart.  Lines of any other kind ("retry", "note", …)
 * are ignored.  The limits of zt.h bound what a hostile trace can make the
 * checker allocate.
 *
 * A disagreement is reported once, as "TRACE:LINE: …", by zt_fail, which
 * leaves the check: the functions here name what disagrees. */
#define _GNU_SOURCE
#include "zt.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define ZT_KIND_NAME(id, name) name,
const char *const zt_kind_names[] = {ZV_EVENT_KINDS(ZT_KIND_NAME)};
#undef ZT_KIND_NAME

/* The K_ of an event line's kind; -1 for a line that is not an event. */
static int event_kind(const char *kind)
{
    for (int k = 0; k < K__COUNT; k++)
        if (!strcmp(kind, zt_kind_names[k])) return k;
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

static void add_line(Check *c, json_t *j)
{
    c->lines = zt_grow(c->lines, &c->caplines, c->nlines + 1, sizeof *c->lines);
    c->lines[c->nlines++] = j;
}

static void read_event(Check *c, json_t *o, int k, int line)
{
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
    } else {
        e->construct = get_str(c, o, "construct", line, false);
        json_t *v = json_object_get(o, "value");
        if (!json_is_boolean(v)) zt_fail(c, line, "choice event lacks a boolean \"value\"");
        e->value = json_is_true(v);
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
        json_t *o = json_loadb(text + b, e - b, JSON_REJECT_DUPLICATES, &jerr);
        if (!o) zt_fail(c, line, "not JSON: %s", jerr.text);
        add_line(c, o);
        if (!json_is_object(o)) zt_fail(c, line, "not a JSON object");
        json_t *kind = json_object_get(o, "kind");
        if (!json_is_string(kind)) zt_fail(c, line, "line lacks a string \"kind\"");
        const char *k = json_string_value(kind);
        if (!strcmp(k, ZV_TRACE_START)) {
            int l = get_life(c, o, "lifeline", line);
            if (c->start[l])
                zt_fail(c, line, "a second start line for lifeline %s", c->m->lnames[l]);
            if (c->nbyl[l])
                zt_fail(c, line, "the start line of lifeline %s comes after its events",
                        c->m->lnames[l]);
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
        } else if (!strcmp(k, ZV_TRACE_END)) {
            int cap1 = c->capends, cap2 = c->capends;
            c->end_results = zt_grow(c->end_results, &cap1, c->nends + 1, sizeof(json_t *));
            c->end_lines = zt_grow(c->end_lines, &cap2, c->nends + 1, sizeof(int));
            c->capends = cap1;
            json_t *err = json_object_get(o, "error");
            json_t *res = json_object_get(o, "result");
            if (err)
                c->ended_error = true;
            else if (!res)
                zt_fail(c, line, "end line lacks \"result\" or \"error\"");
            c->end_results[c->nends] = err ? NULL : res;
            c->end_lines[c->nends] = line;
            c->nends++;
        } else if (!strcmp(k, ZV_TRACE_RESUME)) {
            /* the run goes on: an earlier attempt's end did not end it */
            c->nends = 0;
            c->ended_error = false;
        } else {
            int ek = event_kind(k);
            if (ek >= 0) read_event(c, o, ek, line);
            /* any other kind (retries, notes) is not an event */
        }
    }
    if (c->nends == 0) zt_fail(c, line + 1, "the trace has no end line (the run did not finish)");
    for (int l = 0; l < c->m->nl; l++)
        if (!c->start[l]) zt_fail(c, 0, "no start line for lifeline %s", c->m->lnames[l]);
}
