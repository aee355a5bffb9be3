/* show.c — `zgc trace show`: a trace as a table for terminals (viewer.h).
 *
 * Interleaved (the default), events are listed by row (trace.c: a receive
 * always after its send, each lifeline in its own order) and, within a row,
 * by lifeline; --by-lifeline lists each lifeline's events in turn.  A
 * retried model attempt is listed just before the action it belongs to.
 * Names and values are printed with control characters replaced (values as
 * JSON text, where they are escapes), so a trace cannot drive the terminal.
 *
 * A durable run's trace gets a column with each event's attempt
 * ("run_attempt"), and each resume line is listed just before the first
 * event of the attempt it begins on the lifelines it concerns (all, or the
 * one it names), or at the end when that attempt made no event there; the
 * end line of an attempt that stopped (right before a resume line) is
 * shown with that resume line.
 */
#define _GNU_SOURCE
#include "viewer.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define RESET "\033[0m"
#define DIM "\033[2m"
#define BOLD "\033[1m"
#define RED "\033[31m"

/* per lifeline, cycling */
static const char *const life_colors[] = {"\033[1;34m", "\033[1;32m", "\033[1;35m",
                                          "\033[1;36m", "\033[1;33m", "\033[1;31m"};

typedef struct show {
    FILE *out;
    const ZvwTrace *t;
    const ZvwShowOptions *o;
    int namew; /* the widest lifeline name */
} show;

static void color(show *s, const char *c)
{
    if (s->o->color) fputs(c, s->out);
}

/* text with control characters (and DEL) shown as '?' */
static void put_text(show *s, const char *t)
{
    for (; t && *t; t++) fputc((unsigned char)*t < 0x20 || *t == 0x7f ? '?' : *t, s->out);
}

/* a value as JSON text, cut after o->width bytes (at a character) */
static void put_value(show *s, json_t *v)
{
    if (!v) {
        fputs("-", s->out); /* a field the line lacks */
        return;
    }
    char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!text) zu_oom();
    size_t n = strlen(text);
    int w = s->o->width;
    if (w > 0 && n > (size_t)w) {
        size_t cut = (size_t)w;
        while (cut > 0 && ((unsigned char)text[cut] & 0xC0) == 0x80) cut--;
        fwrite(text, 1, cut, s->out);
        fputs("…", s->out);
    } else {
        fputs(text, s->out);
    }
    free(text);
}

static const char *str(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static void put_lifeline(show *s, int l)
{
    color(s, life_colors[l % 6]);
    const char *name = s->t->lifelines[l];
    put_text(s, name);
    color(s, RESET);
    int pad = s->namew - (int)strlen(name);
    fprintf(s->out, "%*s", pad > 0 ? pad : 0, "");
}

static void put_values(show *s, json_t *vals)
{
    size_t i;
    json_t *v;
    json_array_foreach(vals, i, v)
    {
        fputs(i ? ", " : "", s->out);
        put_value(s, v);
    }
}

static void put_writes(show *s, json_t *w)
{
    const char *k;
    json_t *v;
    int first = 1;
    json_object_foreach(w, k, v)
    {
        fputs(first ? "  " : ", ", s->out);
        first = 0;
        color(s, DIM);
        put_text(s, k);
        fputs(" =", s->out);
        color(s, RESET);
        fputc(' ', s->out);
        put_value(s, v);
    }
}

static void show_event(show *s, const ZvwLine *ln)
{
    json_t *o = ln->json;
    fprintf(s->out, "%6ld  ", ln->row);
    put_lifeline(s, ln->lifeline);
    fprintf(s->out, " %4lld  ", ln->index);
    if (s->t->durable || s->t->nresumes) {
        if (ln->attempt > 0)
            fprintf(s->out, "%3lld  ", ln->attempt);
        else
            fputs("  -  ", s->out);
    }
    const char *k = ln->kind;
    json_t *ctl = json_object_get(o, "control");
    bool control = json_is_string(ctl);
    if (!strcmp(k, "send") || !strcmp(k, "recv")) {
        bool send = k[0] == 's';
        color(s, control ? DIM : BOLD);
        fputs(send ? (control ? "send-ctl → " : "send → ") : (control ? "recv-ctl ← " : "recv ← "),
              s->out);
        put_text(s, str(o, send ? "to" : "from"));
        color(s, RESET);
        fputs("  ", s->out);
        put_text(s, str(o, "channel"));
        fputs("  ", s->out);
        if (control) {
            put_text(s, json_string_value(ctl));
            fputs(" = ", s->out);
        }
        put_values(s, json_object_get(o, "values"));
    } else if (!strcmp(k, "act")) {
        const char *a = str(o, "action");
        color(s, BOLD);
        fputs(a ? "act " : "local", s->out);
        put_text(s, a);
        color(s, RESET);
        json_t *n = json_object_get(o, "attempts");
        if (json_is_integer(n) && json_integer_value(n) > 1)
            fprintf(s->out, " (%lld attempts)", (long long)json_integer_value(n));
        if (json_is_string(json_object_get(o, "store"))) {
            fputs("  tool of ", s->out);
            put_text(s, str(o, "store"));
        }
    } else if (!strcmp(k, "read")) {
        color(s, BOLD);
        fputs("read ", s->out);
        put_text(s, str(o, "store"));
        fputc('.', s->out);
        put_text(s, str(o, "cell"));
        color(s, RESET);
        fputs(" = ", s->out);
        put_value(s, json_object_get(o, "value"));
        fprintf(s->out, "  (version %lld, attempt %lld)",
                (long long)json_integer_value(json_object_get(o, "version")),
                (long long)json_integer_value(json_object_get(o, "attempt")));
    } else if (!strcmp(k, "commit") || !strcmp(k, "abort")) {
        bool commit = k[0] == 'c';
        color(s, commit ? BOLD : RED);
        fprintf(s->out, "%s #%lld ", k, (long long)json_integer_value(json_object_get(o, "txn")));
        put_text(s, str(o, "store"));
        color(s, RESET);
        fprintf(s->out, "  (attempt %lld)",
                (long long)json_integer_value(json_object_get(o, "attempt")));
        if (commit) {
            fputs("  cells ", s->out);
            put_value(s, json_object_get(o, "cells"));
            json_t *reg = json_object_get(o, "registry");
            if (reg) {
                fputs("  tools ", s->out);
                put_value(s, reg);
            }
        } else {
            fputs("  ", s->out);
            put_text(s, str(o, "reason"));
        }
    } else {
        color(s, BOLD);
        fputs("choice ", s->out);
        put_text(s, str(o, "construct"));
        color(s, RESET);
        fputs(" = ", s->out);
        put_value(s, json_object_get(o, "value"));
    }
    if (!control) put_writes(s, json_object_get(o, "writes"));
    fputc('\n', s->out);
}

/* the columns row, lifeline and # (and the attempt's) of a line that is
 * not an event, for lifeline l (-1: every lifeline) */
static void other_prefix(show *s, int l)
{
    fputs("     -  ", s->out);
    if (l >= 0)
        put_lifeline(s, l);
    else
        fprintf(s->out, "%-*s", s->namew, "*");
    fputs("     -  ", s->out);
    if (s->t->durable || s->t->nresumes) fputs("  -  ", s->out);
}

static void show_end(show *s, json_t *o, const char *what)
{
    json_t *e = json_object_get(o, "error");
    if (e) {
        color(s, RED);
        fputs(what, s->out);
        fputs(": error: ", s->out);
        put_text(s, json_string_value(e));
        color(s, RESET);
    } else {
        color(s, BOLD);
        fputs(what, s->out);
        fputs(": result: ", s->out);
        color(s, RESET);
        put_value(s, json_object_get(o, "result"));
    }
}

static void show_other(show *s, const ZvwLine *ln)
{
    json_t *o = ln->json;
    if (!strcmp(ln->kind, ZV_TRACE_RESUME)) {
        other_prefix(s, ln->lifeline);
        long long k = json_integer_value(json_object_get(o, "run_attempt"));
        color(s, BOLD);
        fprintf(s->out, "resume: attempt %lld of run ", k);
        put_text(s, str(o, "run"));
        color(s, RESET);
        /* the end line of the attempt that stopped */
        if (ln > s->t->lines && !strcmp(ln[-1].kind, ZV_TRACE_END)) {
            fputs("  (", s->out);
            show_end(s, ln[-1].json, "the attempt before ended");
            fputs(")", s->out);
        }
    } else if (!strcmp(ln->kind, ZV_TRACE_START)) {
        other_prefix(s, ln->lifeline);
        fputs("start", s->out);
        put_writes(s, json_object_get(o, "store"));
    } else if (!strcmp(ln->kind, ZV_TRACE_RETRY)) {
        other_prefix(s, ln->lifeline);
        color(s, RED);
        fputs("retry ", s->out);
        put_text(s, str(o, "action"));
        color(s, RESET);
        fprintf(s->out, " attempt %lld failed: ",
                (long long)json_integer_value(json_object_get(o, "attempt")));
        put_value(s, json_object_get(o, "error"));
    } else { /* end */
        show_end(s, o, "end");
    }
    fputc('\n', s->out);
}

static int by_row(const void *a, const void *b, void *lines)
{
    const ZvwLine *L = lines;
    const ZvwLine *x = &L[*(const int *)a], *y = &L[*(const int *)b];
    if (x->row != y->row) return x->row < y->row ? -1 : 1;
    if (x->lifeline != y->lifeline) return x->lifeline - y->lifeline;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int by_life(const void *a, const void *b, void *lines)
{
    const ZvwLine *L = lines;
    const ZvwLine *x = &L[*(const int *)a], *y = &L[*(const int *)b];
    if (x->lifeline != y->lifeline) return x->lifeline - y->lifeline;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Where a resume line is listed: before (after == 0) or after the event at
 * position pos of the listing; pos == the number of events: at the end. */
typedef struct anchor {
    int pos, after, line;
} anchor;

static int by_anchor(const void *a, const void *b)
{
    const anchor *x = a, *y = b;
    if (x->pos != y->pos) return x->pos - y->pos;
    if (x->after != y->after) return x->after - y->after;
    return x->line - y->line;
}

/* The anchor of resume line r for the events of lifeline l (-1: every
 * lifeline) in the listing ev[0..nev): the first event of its attempt or a
 * later one, else just after the last event there, else the end. */
static anchor anchor_of(const ZvwTrace *t, const int *ev, int nev, int r, int l)
{
    long long k = json_integer_value(json_object_get(t->lines[r].json, "run_attempt"));
    int last = -1;
    for (int p = 0; p < nev; p++) {
        const ZvwLine *ln = &t->lines[ev[p]];
        if (l >= 0 && ln->lifeline != l) continue;
        if (ln->attempt >= k) return (anchor){p, 0, r};
        last = p;
    }
    return last >= 0 ? (anchor){last, 1, r} : (anchor){nev, 0, r};
}

int zvw_show(FILE *out, const ZvwTrace *t, const ZvwShowOptions *o, char *err, size_t errlen)
{
    show s = {out, t, o, 8};
    int only = -1;
    if (o->lifeline) {
        for (int l = 0; l < t->nlifelines; l++)
            if (!strcmp(t->lifelines[l], o->lifeline)) only = l;
        if (only < 0) {
            snprintf(err, errlen, "%s: no lifeline `%s` in the trace", t->path, o->lifeline);
            return -1;
        }
    }
    for (int l = 0; l < t->nlifelines; l++)
        if ((int)strlen(t->lifelines[l]) > s.namew) s.namew = (int)strlen(t->lifelines[l]);
    /* the events in order; each retry line goes before the next event of
     * its lifeline in the file (the act it belongs to) */
    int *ev = zu_xcalloc((size_t)t->nlines + 1, sizeof *ev), nev = 0;
    /* first[e]: the first retry line (+1) before event line e, link[r]: the
     * next one; retry_at[r]: its event line + 1, or 0 */
    int *first = zu_xcalloc((size_t)t->nlines + 1, sizeof *first);
    int *link = zu_xcalloc((size_t)t->nlines + 1, sizeof *link);
    int *retry_at = zu_xcalloc((size_t)t->nlines + 1, sizeof *retry_at);
    int *open = zu_xcalloc((size_t)t->nlifelines + 1, sizeof *open);
    for (int i = t->nlines - 1; i >= 0; i--) {
        const ZvwLine *ln = &t->lines[i];
        if (ln->event) open[ln->lifeline] = i + 1;
        if (!strcmp(ln->kind, ZV_TRACE_RETRY) && (retry_at[i] = open[ln->lifeline])) {
            link[i] = first[retry_at[i] - 1];
            first[retry_at[i] - 1] = i + 1;
        }
    }
    for (int i = 0; i < t->nlines; i++)
        if (t->lines[i].event && (only < 0 || t->lines[i].lifeline == only)) ev[nev++] = i;
    qsort_r(ev, (size_t)nev, sizeof *ev, o->by_lifeline ? by_life : by_row, t->lines);

    /* the resume lines: once each, or in --by-lifeline once per lifeline
     * they concern */
    anchor *an = NULL;
    int nan = 0, cap = 0;
    for (int i = 0; i < t->nlines; i++) {
        const ZvwLine *ln = &t->lines[i];
        if (strcmp(ln->kind, ZV_TRACE_RESUME) != 0) continue;
        if (only >= 0 && ln->lifeline >= 0 && ln->lifeline != only) continue;
        int from = ln->lifeline >= 0 ? ln->lifeline : only >= 0 ? only : o->by_lifeline ? 0 : -1;
        int to = ln->lifeline >= 0 || only >= 0 || !o->by_lifeline ? from : t->nlifelines - 1;
        for (int l = from; l <= to; l++) {
            if (nan == cap) an = zu_xrealloc(an, (size_t)(cap = cap ? 2 * cap : 8) * sizeof *an);
            an[nan++] = anchor_of(t, ev, nev, i, l);
        }
    }
    if (nan > 0) qsort(an, (size_t)nan, sizeof *an, by_anchor);
    int next_an = 0;

    if (t->durable || t->nresumes)
        fprintf(out, "%6s  %-*s %4s  %3s  %s\n", "row", s.namew, "lifeline", "#", "att", "event");
    else
        fprintf(out, "%6s  %-*s %4s  %s\n", "row", s.namew, "lifeline", "#", "event");
    for (int i = 0; i < t->nlines; i++)
        if (!strcmp(t->lines[i].kind, ZV_TRACE_START) && (only < 0 || t->lines[i].lifeline == only))
            show_other(&s, &t->lines[i]);
    int section = -1;
    for (int k = 0; k < nev; k++) {
        const ZvwLine *ln = &t->lines[ev[k]];
        if (o->by_lifeline && ln->lifeline != section) {
            section = ln->lifeline;
            fputs("\n== ", out);
            put_lifeline(&s, section);
            fputc('\n', out);
        }
        for (; next_an < nan && an[next_an].pos == k && !an[next_an].after; next_an++)
            show_other(&s, &t->lines[an[next_an].line]);
        for (int r = first[ev[k]]; r; r = link[r - 1]) show_other(&s, &t->lines[r - 1]);
        show_event(&s, ln);
        for (; next_an < nan && an[next_an].pos == k && an[next_an].after; next_an++)
            show_other(&s, &t->lines[an[next_an].line]);
    }
    for (; next_an < nan; next_an++) show_other(&s, &t->lines[an[next_an].line]);
    /* retries of an action that never ended, then the end line */
    for (int i = 0; i < t->nlines; i++)
        if (!strcmp(t->lines[i].kind, ZV_TRACE_RETRY) && !retry_at[i] &&
            (only < 0 || t->lines[i].lifeline == only))
            show_other(&s, &t->lines[i]);
    bool ended = false;
    for (int i = 0; i < t->nlines; i++)
        if (!strcmp(t->lines[i].kind, ZV_TRACE_END) &&
            !(i + 1 < t->nlines && !strcmp(t->lines[i + 1].kind, ZV_TRACE_RESUME)))
            show_other(&s, &t->lines[i]), ended = true;
    if (!ended) fputs("(no end line: the run did not finish)\n", out);
    free(ev), free(first), free(link), free(retry_at), free(open), free(an);
    if (fflush(out) != 0 || ferror(out)) {
        snprintf(err, errlen, "cannot write to standard output: %s", strerror(errno));
        return -1;
    }
    return 0;
}
