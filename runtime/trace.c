/* trace.c — the run's trace (--trace FILE), JSON Lines.
 *
 * One JSON object per line, compact, keys in this order:
 *
 *   {"kind":"start","lifeline":"User","store":{"topic":"hi","n":0}}
 *       once per lifeline run by this process, before any event: the
 *       initial store (variables with a value: defaults and inputs);
 *   {"lifeline":"User","index":1,"kind":"send","to":"Writer","channel":"main",
 *    "values":["hi"],"control":null,"msg":"User>Writer@main#1",
 *    "writes":{},"vc":{"User":1,"Writer":0}}
 *       a send; a receive has "from" instead of "to".  "control" is the tag
 *       of a control message ("while#1") or null for a user message; the
 *       values of a control message are [decision] (one bool).  "msg" is
 *       "<from>><to>@<channel>#<n>", n counting the messages of that
 *       channel (sender, receiver, namespace) from 1, the same on both
 *       sides, so a receive names its send.  Optional: "coregion":true
 *       on a receive a coregion took in arrival order;
 *   {"lifeline":"Writer","index":2,"kind":"act","action":"write_reply",
 *    "attempts":1,"prompt":{"system":"…","user":"…"},"answer":"…",
 *    "writes":{"draft":"…"},"vc":{…}}
 *       an action or a local computation ("action": null, or the name of
 *       a pure action); "attempts" counts llm attempts (1 otherwise).
 *       Optional, when the action recorded them (zri_event): "prompt"
 *       (an llm action's filled prompts, each key only when the action
 *       has that prompt), "question" (a human action's filled prompt),
 *       "answer" (the raw answer: the model's last reply text, the
 *       scripted or --answers entry as JSON, the line typed), and for
 *       a planner "subrun": {"source": the program it ran, "trace":
 *       [the lines of its nested run, each an object as here]};
 *   {"lifeline":"User","index":3,"kind":"choice","construct":"if#1",
 *    "value":true,"writes":{},"vc":{…}}
 *       a decision of an if/while owner and the guard's value;
 *   {"lifeline":"Writer","index":3,"kind":"read","store":"Board","cell":"plan",
 *    "value":"…","version":4,"attempt":1,"op":"3","writes":{"p":"…"},"vc":{…}}
 *   {"lifeline":"Writer","index":5,"kind":"commit","store":"Board","txn":6,
 *    "attempt":1,"op":"3","cells":{"plan":"…"},"registry":["publish"],"writes":{},"vc":{…}}
 *   {"lifeline":"Writer","index":5,"kind":"abort","store":"Board","txn":6,
 *    "attempt":1,"op":"3","reason":"…","writes":{},"vc":{…}}
 *       a store operation's read (version: the transaction whose write was
 *       read, 0: the default), its commit (the cells written; "registry"
 *       only when it wrote the registry) or its refused commit, after
 *       which the block runs again as the next attempt; "op" after
 *       "attempt": the operation's position on the lifeline, the same for
 *       all its attempts; the act event of a tool call inside the block
 *       has "store" and "op" after "attempts";
 *   {"lifeline":"Writer","kind":"retry","action":"write_reply","attempt":1,
 *    "error":"HTTP 503: …","delay":2.0}
 *       a failed llm attempt that is retried after "delay" seconds; not
 *       an event (no "index", no "vc"), written before the action's act
 *       line;
 *   {"kind":"end","result":…} or {"kind":"end","error":"…"}
 *       last: the printed result (per-lifeline executables: the
 *       {"<index>": value} object), or the run-time error;
 *   {"kind":"resume","run":"ID","run_attempt":2}, with "lifeline":L
 *   first in a per-lifeline executable's trace
 *       a durable run's next attempt begins (an end line before it, of an
 *       attempt that failed, no longer ends the run).
 *
 * Durable runs (runtime/durable).  Every event line has "run_attempt":k
 * after its kind's fields, the attempt (1, 2, …) that made it.  Lines are
 * held in memory and written only once the journal's entries they depend
 * on are committed (zri_trace_mark, zri_trace_release): after a crash the
 * file holds only events a replay makes again, exactly as they were.  A
 * resumed attempt continues the same file (zri_trace_reopen): a last line
 * cut by the crash is removed, and the events the file has are not
 * written again when the replay makes them.
 *
 * "index" is the event's 1-based position on its lifeline (every event,
 * control messages included); "writes" maps each variable the event wrote
 * to its new value; "vc" is the vector clock after the event, naming
 * every lifeline.  Values are JSON, enum values as member names.  Lines
 * are written whole under one lock, in the order the events happen on
 * each lifeline, and a receive is always written after its send.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "rt.h"

static void put_name(zri_buf *b, const char *s) { zri_buf_json_string(b, s, strlen(s)); }

struct zri_trace {
    const zgrt_program *prog;
    FILE *f;
    char *path, *partial; /* FILE, and FILE.partial while it is written */
    pthread_mutex_t mu;
    int failed; /* a write failed */
    /* durable runs */
    int deferred;     /* lines wait in `held` for zri_trace_release */
    zri_buf held;     /* under mu */
    int attempt;      /* "run_attempt" of events, or 0 */
    int64_t *written; /* reopened: per lifeline, the events the file has */
    uint8_t *started; /* reopened: the lifelines whose start line it has */
};

static char *partial_path(const char *path)
{
    size_t n = strlen(path);
    char *s = zri_xmalloc(n + sizeof ZV_TRACE_PARTIAL);
    memcpy(s, path, n);
    memcpy(s + n, ZV_TRACE_PARTIAL, sizeof ZV_TRACE_PARTIAL);
    return s;
}

static zri_trace *trace_new(const zgrt_program *p, const char *path, FILE *f, char *partial)
{
    zri_trace *t = zri_xcalloc(1, sizeof *t);
    t->prog = p;
    t->f = f;
    t->partial = partial;
    t->path = zri_xstrndup(path, strlen(path));
    pthread_mutex_init(&t->mu, NULL);
    return t;
}

zri_trace *zri_trace_open(const zgrt_program *p, const char *path, char *err, size_t errlen)
{
    char *partial = partial_path(path);
    FILE *f = fopen(partial, "w");
    if (!f) {
        snprintf(err, errlen, "cannot create the trace file %s: %s", partial, strerror(errno));
        free(partial);
        return NULL;
    }
    return trace_new(p, path, f, partial);
}

/* One line of an existing trace: what it says of starts and events. */
static void reopen_line(zri_trace *t, const char *s, size_t n)
{
    json_error_t je;
    json_t *o = json_loadb(s, n, 0, &je);
    if (!o) return;
    const char *kind = json_string_value(json_object_get(o, "kind"));
    const char *name = json_string_value(json_object_get(o, "lifeline"));
    int32_t l = -1;
    for (int32_t k = 0; name && k < t->prog->nlifelines; k++)
        if (strcmp(t->prog->lifelines[k], name) == 0) l = k;
    if (kind && l >= 0) {
        json_t *ix = json_object_get(o, "index");
        if (strcmp(kind, ZV_TRACE_START) == 0)
            t->started[l] = 1;
        else if (json_is_integer(ix) && json_integer_value(ix) > t->written[l])
            t->written[l] = json_integer_value(ix);
    }
    json_decref(o);
}

zri_trace *zri_trace_reopen(const zgrt_program *p, const char *path, char *err, size_t errlen)
{
    /* the attempt before left FILE.partial (it stopped early) or FILE (it
     * ended, and another lifeline's process did not): continue either */
    char *partial = partial_path(path);
    if (access(partial, F_OK) != 0 && errno == ENOENT && rename(path, partial) != 0 &&
        errno != ENOENT) {
        snprintf(err, errlen, "cannot continue the trace file %s: %s", path, strerror(errno));
        free(partial);
        return NULL;
    }
    FILE *f = fopen(partial, "r+");
    if (!f && errno == ENOENT) {
        free(partial);
        return zri_trace_open(p, path, err, errlen);
    }
    if (!f) {
        snprintf(err, errlen, "cannot open the trace file %s: %s", partial, strerror(errno));
        free(partial);
        return NULL;
    }
    zri_trace *t = trace_new(p, path, f, partial);
    t->written = zri_xcalloc((size_t)p->nlifelines, sizeof *t->written);
    t->started = zri_xcalloc((size_t)p->nlifelines, 1);
    /* read it whole; keep it up to its last complete line */
    zri_buf all = {0};
    char chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) zri_buf_add(&all, chunk, got);
    int rerr = ferror(f);
    size_t keep = 0;
    for (size_t i = 0, b = 0; i < all.len; i++)
        if (all.data[i] == '\n') {
            reopen_line(t, all.data + b, i - b);
            b = i + 1;
            keep = i + 1;
        }
    zri_buf_free(&all);
    if (rerr || fflush(f) != 0 || ftruncate(fileno(f), (off_t)keep) != 0 ||
        fseeko(f, (off_t)keep, SEEK_SET) != 0) {
        snprintf(err, errlen, "cannot continue the trace file %s: %s", path, strerror(errno));
        zri_trace_close(t);
        return NULL;
    }
    return t;
}

int zri_trace_has_start(const zri_trace *t, int32_t lifeline)
{
    return t->started && t->started[lifeline];
}

void zri_trace_defer(zri_trace *t, int attempt)
{
    t->deferred = 1;
    t->attempt = attempt;
}

size_t zri_trace_mark(zri_trace *t)
{
    pthread_mutex_lock(&t->mu);
    size_t n = t->held.len;
    pthread_mutex_unlock(&t->mu);
    return n;
}

/* Writes the held lines up to mark (under mu). */
static void write_held(zri_trace *t, size_t mark)
{
    if (mark > t->held.len) mark = t->held.len;
    if (!mark) return;
    if (fwrite(t->held.data, 1, mark, t->f) != mark || fflush(t->f) != 0) t->failed = 1;
    memmove(t->held.data, t->held.data + mark, t->held.len - mark);
    t->held.len -= mark;
    t->held.data[t->held.len] = 0;
}

int zri_trace_release(zri_trace *t, size_t mark)
{
    pthread_mutex_lock(&t->mu);
    write_held(t, mark);
    int failed = t->failed;
    pthread_mutex_unlock(&t->mu);
    return failed ? -1 : 0;
}

static void write_line(zri_trace *t, zri_buf *b)
{
    zri_buf_add(b, "\n", 1);
    pthread_mutex_lock(&t->mu);
    if (t->deferred)
        zri_buf_add(&t->held, b->data, b->len);
    else if (fwrite(b->data, 1, b->len, t->f) != b->len)
        t->failed = 1;
    pthread_mutex_unlock(&t->mu);
    zri_buf_free(b);
}

void zri_trace_resume(zri_trace *t, int32_t lifeline, const char *run_id, int attempt)
{
    zri_buf b = {0};
    zri_buf_puts(&b, "{\"kind\":\"" ZV_TRACE_RESUME "\",");
    if (lifeline >= 0) {
        zri_buf_puts(&b, "\"lifeline\":");
        put_name(&b, t->prog->lifelines[lifeline]);
        zri_buf_add(&b, ",", 1);
    }
    zri_buf_puts(&b, "\"run\":");
    put_name(&b, run_id);
    zri_buf_printf(&b, ",\"run_attempt\":%d}", attempt);
    write_line(t, &b);
}

void zri_trace_line_start(zri_buf *bp, const zgrt_program *p, int32_t lifeline,
                          const zgrt_value *store)
{
    zri_buf b = *bp;
    zri_buf_puts(&b, "{\"kind\":\"" ZV_TRACE_START "\",\"lifeline\":");
    put_name(&b, p->lifelines[lifeline]);
    zri_buf_puts(&b, ",\"store\":{");
    int first = 1;
    for (int32_t x = 0; x < p->nvars; x++) {
        if (store[x].tag == ZGRT_UNDEF) continue;
        if (!first) zri_buf_add(&b, ",", 1);
        first = 0;
        put_name(&b, p->vars[x].name);
        zri_buf_add(&b, ":", 1);
        zri_buf_json_value(&b, p, &store[x]);
    }
    zri_buf_puts(&b, "}}");
    *bp = b;
}

void zri_trace_start(zri_trace *t, int32_t lifeline, const zgrt_value *store)
{
    zri_buf b = {0};
    zri_trace_line_start(&b, t->prog, lifeline, store);
    write_line(t, &b);
}

void zri_trace_line_event(zri_buf *bp, const zgrt_program *p, const zri_event *e)
{
    zri_trace_line_event_attempt(bp, p, e, 0);
}

void zri_trace_line_event_attempt(zri_buf *bp, const zgrt_program *p, const zri_event *e,
                                  int attempt)
{
#define KIND(id, name) name,
    static const char *const kinds[] = {ZV_EVENT_KINDS(KIND) ZV_STORE_EVENT_KINDS(KIND)};
#undef KIND
    zri_buf b = *bp;
    zri_buf_puts(&b, "{\"lifeline\":");
    put_name(&b, p->lifelines[e->lifeline]);
    zri_buf_printf(&b, ",\"index\":%" PRId64 ",\"kind\":\"%s\"", e->index, kinds[e->kind]);
    switch (e->kind) {
    case ZRI_EV_SEND:
    case ZRI_EV_RECV: {
        int send = e->kind == ZRI_EV_SEND;
        zri_buf_puts(&b, send ? ",\"to\":" : ",\"from\":");
        put_name(&b, p->lifelines[e->peer]);
        zri_buf_puts(&b, ",\"channel\":");
        put_name(&b, p->chans[e->chan]);
        zri_buf_puts(&b, ",\"values\":[");
        for (int32_t k = 0; k < e->nvals; k++) {
            if (k) zri_buf_add(&b, ",", 1);
            zri_buf_json_value(&b, p, &e->vals[k]);
        }
        zri_buf_puts(&b, "],\"control\":");
        if (e->ctl_tag >= 0)
            put_name(&b, p->tags[e->ctl_tag]);
        else
            zri_buf_puts(&b, "null");
        /* the message id: <from>><to>@<channel>#<n> */
        zri_buf id = {0};
        zri_buf_puts(&id, p->lifelines[send ? e->lifeline : e->peer]);
        zri_buf_add(&id, ">", 1);
        zri_buf_puts(&id, p->lifelines[send ? e->peer : e->lifeline]);
        zri_buf_add(&id, "@", 1);
        zri_buf_puts(&id, p->chans[e->chan]);
        zri_buf_printf(&id, "#%" PRId64, e->seq);
        zri_buf_puts(&b, ",\"msg\":");
        zri_buf_json_string(&b, id.data, id.len);
        zri_buf_free(&id);
        if (e->coregion) zri_buf_puts(&b, ",\"coregion\":true"); /* optional */
        break;
    }
    case ZRI_EV_ACT:
        zri_buf_puts(&b, ",\"action\":");
        if (e->action)
            put_name(&b, e->action);
        else
            zri_buf_puts(&b, "null");
        zri_buf_printf(&b, ",\"attempts\":%d", (int)e->attempts);
        /* optional: what an llm or human action recorded */
        if (e->system || e->user) {
            zri_buf_puts(&b, ",\"prompt\":{");
            if (e->system) zri_buf_puts(&b, "\"system\":"), put_name(&b, e->system);
            if (e->system && e->user) zri_buf_add(&b, ",", 1);
            if (e->user) zri_buf_puts(&b, "\"user\":"), put_name(&b, e->user);
            zri_buf_add(&b, "}", 1);
        }
        if (e->question) zri_buf_puts(&b, ",\"question\":"), put_name(&b, e->question);
        if (e->answer) zri_buf_puts(&b, ",\"answer\":"), put_name(&b, e->answer);
        /* a JSON object made by agent/nested.c */
        if (e->subrun) zri_buf_puts(&b, ",\"subrun\":"), zri_buf_puts(&b, e->subrun);
        /* a tool call of a store operation */
        if (e->op_store > 0) {
            zri_buf_puts(&b, ",\"store\":"), put_name(&b, p->stores[e->op_store - 1].name);
            zri_buf_puts(&b, ",\"op\":"), put_name(&b, e->op_id ? e->op_id : "");
        }
        break;
    case ZRI_EV_READ: {
        const zgrt_store_decl *st = &p->stores[e->op_store - 1];
        zri_buf_puts(&b, ",\"store\":");
        put_name(&b, st->name);
        zri_buf_puts(&b, ",\"cell\":");
        put_name(&b, st->cells[e->op_cell].name);
        zri_buf_puts(&b, ",\"value\":");
        zri_buf_json_value(&b, p, e->op_value);
        zri_buf_printf(&b, ",\"version\":%" PRId64 ",\"attempt\":%d", e->op_txn,
                       (int)e->op_attempt);
        zri_buf_puts(&b, ",\"op\":"), put_name(&b, e->op_id ? e->op_id : "");
        break;
    }
    case ZRI_EV_COMMIT:
    case ZRI_EV_ABORT: {
        const zgrt_store_decl *st = &p->stores[e->op_store - 1];
        zri_buf_puts(&b, ",\"store\":");
        put_name(&b, st->name);
        zri_buf_printf(&b, ",\"txn\":%" PRId64 ",\"attempt\":%d", e->op_txn, (int)e->op_attempt);
        zri_buf_puts(&b, ",\"op\":"), put_name(&b, e->op_id ? e->op_id : "");
        if (e->kind == ZRI_EV_ABORT) {
            zri_buf_puts(&b, ",\"reason\":");
            put_name(&b, e->op_reason ? e->op_reason : "");
            break;
        }
        zri_buf_puts(&b, ",\"cells\":{");
        int any = 0;
        for (int32_t k = 0; k < st->ncells; k++) {
            if (e->op_cells[k].tag == ZGRT_UNDEF) continue;
            if (any++) zri_buf_add(&b, ",", 1);
            put_name(&b, st->cells[k].name);
            zri_buf_add(&b, ":", 1);
            zri_buf_json_value(&b, p, &e->op_cells[k]);
        }
        zri_buf_add(&b, "}", 1);
        if (e->op_ntools >= 0) {
            zri_buf_puts(&b, ",\"registry\":[");
            for (int32_t k = 0; k < e->op_ntools; k++) {
                if (k) zri_buf_add(&b, ",", 1);
                put_name(&b, p->actions[e->op_tools[k]].name);
            }
            zri_buf_add(&b, "]", 1);
        }
        break;
    }
    case ZRI_EV_CHOICE:
        zri_buf_puts(&b, ",\"construct\":");
        put_name(&b, p->tags[e->construct]);
        zri_buf_puts(&b, e->value ? ",\"value\":true" : ",\"value\":false");
        break;
    default: break;
    }
    if (attempt) zri_buf_printf(&b, ",\"run_attempt\":%d", attempt);
    zri_buf_puts(&b, ",\"writes\":{");
    int first = 1;
    for (int32_t k = 0; k < e->nwrites; k++) {
        int32_t x = e->write_vars[k];
        if (x < 0) continue;
        if (!first) zri_buf_add(&b, ",", 1);
        first = 0;
        put_name(&b, p->vars[x].name);
        zri_buf_add(&b, ":", 1);
        zri_buf_json_value(&b, p, &e->write_vals[k]);
    }
    zri_buf_puts(&b, "},\"vc\":{");
    for (int32_t l = 0; l < p->nlifelines; l++) {
        if (l) zri_buf_add(&b, ",", 1);
        put_name(&b, p->lifelines[l]);
        zri_buf_printf(&b, ":%" PRId64, e->vc[l]);
    }
    zri_buf_puts(&b, "}}");
    *bp = b;
}

void zri_trace_event(zri_trace *t, const zri_event *e)
{
    /* a resumed attempt replays events the file has */
    if (t->written && e->index <= t->written[e->lifeline]) return;
    zri_buf b = {0};
    zri_trace_line_event_attempt(&b, t->prog, e, t->attempt);
    write_line(t, &b);
}

void zri_trace_line_retry(zri_buf *bp, const zgrt_program *p, int32_t lifeline, const char *action,
                          int attempt, const char *error, double delay)
{
    zri_buf b = *bp;
    zri_buf_puts(&b, "{\"lifeline\":");
    put_name(&b, p->lifelines[lifeline]);
    zri_buf_puts(&b, ",\"kind\":\"" ZV_TRACE_RETRY "\",\"action\":");
    put_name(&b, action ? action : "");
    zri_buf_printf(&b, ",\"attempt\":%d,\"error\":", attempt);
    put_name(&b, error ? error : "");
    char num[32];
    zri_format_float(delay >= 0 ? delay : 0.0, num);
    zri_buf_printf(&b, ",\"delay\":%s}", num);
    *bp = b;
}

void zri_trace_retry(zri_trace *t, int32_t lifeline, const char *action, int attempt,
                     const char *error, double delay)
{
    zri_buf b = {0};
    zri_trace_line_retry(&b, t->prog, lifeline, action, attempt, error, delay);
    write_line(t, &b);
}

void zri_trace_line_end(zri_buf *bp, const char *result_json, const char *error)
{
    zri_buf b = *bp;
    if (error) {
        zri_buf_puts(&b, "{\"kind\":\"" ZV_TRACE_END "\",\"error\":");
        zri_buf_json_string(&b, error, strlen(error));
    } else {
        zri_buf_puts(&b, "{\"kind\":\"" ZV_TRACE_END "\",\"result\":");
        zri_buf_puts(&b, result_json ? result_json : "null");
    }
    zri_buf_puts(&b, "}");
    *bp = b;
}

void zri_trace_end(zri_trace *t, const char *result_json, const char *error)
{
    zri_buf b = {0};
    zri_trace_line_end(&b, result_json, error);
    write_line(t, &b);
}

static void observe_event(void *user, const zri_event *e) { zri_trace_event(user, e); }

static void observe_retry(void *user, int32_t lifeline, const char *action, int attempt,
                          const char *error, double delay)
{
    zri_trace_retry(user, lifeline, action, attempt, error, delay);
}

zri_observer zri_trace_observer(zri_trace *t)
{
    zri_observer o = {observe_event, observe_retry, t, NULL};
    return o;
}

int zri_trace_close(zri_trace *t)
{
    if (!t) return 0;
    write_held(t, t->held.len);
    zri_buf_free(&t->held);
    free(t->written);
    free(t->started);
    int failed = t->failed;
    /* whole on disk before it takes its name: a reader of FILE never sees
     * a trace still being written */
    if (fflush(t->f) != 0 || fsync(fileno(t->f)) != 0) failed = 1;
    if (fclose(t->f) != 0) failed = 1;
    if (!failed && rename(t->partial, t->path) != 0) failed = 1;
    pthread_mutex_destroy(&t->mu);
    free(t->partial);
    free(t->path);
    free(t);
    return failed ? -1 : 0;
}
