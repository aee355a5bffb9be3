/* tracecheck.c — `zgc trace check`: rebuilds a run's message sequence chart
 * from its trace and checks it against the global workflow (see
 * tracecheck.h for the list of checks).
 *
 * Nothing here comes from the runtime: the trace is read with jansson, the
 * chart is rebuilt from message ids, the causal order and vector clocks are
 * computed by a topological walk of the event graph, expressions and CPL
 * formulas are evaluated by this file's own evaluator over stores rebuilt
 * from the trace's start lines and writes, and the expected events come
 * from an interpreter of the *global* workflow (not the projection),
 * driven by the owners' recorded decisions.
 *
 * Expected events.  For each lifeline L a set of cursors walks the global
 * statement lists: a cursor holds a stack of frames (statement lists, and
 * loop heads of `while`s L takes part in) and a queue of expected events.
 * A parallel region in which L takes part in several branches gives one
 * child cursor per branch (the parent waits for them); a trace event is
 * matched against the head of every runnable cursor's queue — channels
 * (namespaces), control tags and written variables tell the branches
 * apart — and a coregion's receives form one group matched in any order.
 * An owner's `if`/`while` expects its choice event; the recorded decision
 * then selects the branch and adds the control sends to every other
 * participant, in declaration order.  A participant that is not the owner
 * takes the owner's k-th decision of that construct for its own k-th
 * instance, and expects the control receive carrying it.  Deleting the
 * control events from both sides is erasure equivalence; keeping them
 * also checks where projection places the broadcasts.
 *
 * CPL (Definition 3).  For every subformula ψ of sub(Φ) (bottom-up) and
 * every event e of every lifeline A, val(ψ, e) ∈ {false, true, unknown}:
 * atoms read A's store after e and @B.x from the store after last_B(e),
 * the vc(e)[B]-th event of B (computed here, by reachability); an atom
 * with an undefined term is false; prev and since move along A's line;
 * @B(θ) is θ at e when B = A, else θ at last_B(e) or false.  "unknown"
 * (a value this evaluator cannot compute) propagates and leaves the guard
 * unverified instead of failing. */
#define _GNU_SOURCE
#include "oracle.h"
#include "grammar.h"

#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Limits that keep a hostile trace from exhausting memory. */
#define ZT_MAX_EVENTS 4000000L
#define ZT_MAX_CELLS 60000000L /* events × variables, events × lifelines */
#define ZT_MAX_DEPTH 200       /* expression evaluation depth */

/* ===================================================================== */
/* The model                                                              */
/* ===================================================================== */

struct ZtModel {
    ZCompilation comp; /* the program, compiled by the compiler's pipeline */
    ZArena *arena;     /* comp.arena */
    ZProgram *prog;
    ZDecl *wf;
    ZGuardTable *guards;
    int nl, nvars;
    const char **lnames; /* lifeline names by index */
    ZDecl **vars;        /* by var index */
    int nconstructs;
    const ZStmt **constructs;  /* by construct number (1-based) */
    const char **tags;         /* "if#3" by construct number */
    const ZGuardInfo **ginfo;  /* by construct number */
};

static const char *stmt_tag(ZArena *a, const ZStmt *s)
{
    return zu_fmt(a, "%s#%d", s->kind == S_IF ? "if" : "while", s->construct);
}

static void collect_constructs(ZtModel *m, const ZVec *body)
{
    for (int i = 0; i < body->len; i++) {
        const ZStmt *s = ZU_VEC_AT(*body, i);
        if (s->kind == S_IF || s->kind == S_WHILE) {
            if (s->construct > 0 && s->construct <= m->nconstructs) {
                m->constructs[s->construct] = s;
                m->tags[s->construct] = stmt_tag(m->arena, s);
            }
            collect_constructs(m, &s->body);
            collect_constructs(m, &s->els);
        } else if (s->kind == S_PAR) {
            for (int k = 0; k < s->branches.len; k++) {
                const ZBranch *b = ZU_VEC_AT(s->branches, k);
                collect_constructs(m, &b->body);
            }
        }
    }
}

/* Compiles m->comp and indexes the program; frees m on failure. */
static ZtModel *finish_model(ZtModel *m)
{
    if (!zc_run(&m->comp, ZC_GUARDS)) goto bad;
    m->arena = m->comp.arena;
    m->prog = m->comp.prog;
    m->wf = m->comp.wf;
    m->guards = m->comp.guards;
    m->nl = m->prog->lifelines.len;
    m->nvars = m->prog->vars.len;
    m->lnames = zu_alloc(m->arena, sizeof(char *) * (size_t)(m->nl + 1));
    for (int i = 0; i < m->nl; i++) m->lnames[i] = ((ZDecl *)ZU_VEC_AT(m->prog->lifelines, i))->name;
    m->vars = zu_alloc(m->arena, sizeof(ZDecl *) * (size_t)(m->nvars + 1));
    for (int i = 0; i < m->nvars; i++) {
        ZDecl *v = ZU_VEC_AT(m->prog->vars, i);
        if (v->index >= 0 && v->index < m->nvars) m->vars[v->index] = v;
    }
    for (int i = 0; i < m->nvars; i++)
        if (!m->vars[i]) m->vars[i] = ZU_VEC_AT(m->prog->vars, i);
    m->nconstructs = m->prog->n_controls;
    m->constructs = zu_alloc(m->arena, sizeof(ZStmt *) * (size_t)(m->nconstructs + 2));
    m->tags = zu_alloc(m->arena, sizeof(char *) * (size_t)(m->nconstructs + 2));
    m->ginfo = zu_alloc(m->arena, sizeof(ZGuardInfo *) * (size_t)(m->nconstructs + 2));
    collect_constructs(m, &m->wf->body);
    for (int i = 0; i < m->guards->guards.len; i++) {
        const ZGuardInfo *g = ZU_VEC_AT(m->guards->guards, i);
        if (g->construct && g->construct->construct > 0 && g->construct->construct <= m->nconstructs)
            m->ginfo[g->construct->construct] = g;
    }
    return m;
bad:
    zt_model_free(m);
    return NULL;
}

ZtModel *zt_model_new(const char *path, const char *text, size_t len, const char *workflow,
                      FILE *diag)
{
    ZtModel *m = zu_xcalloc(1, sizeof *m);
    zc_init(&m->comp, zp_parse, path, text, len, diag ? diag : stderr);
    m->comp.workflow = workflow;
    return finish_model(m);
}

ZtModel *zt_model_load(const char *path, const char *workflow, FILE *diag)
{
    ZtModel *m = zu_xcalloc(1, sizeof *m);
    if (!zc_init_file(&m->comp, zp_parse, path, diag ? diag : stderr)) {
        free(m);
        return NULL;
    }
    m->comp.workflow = workflow;
    return finish_model(m);
}

void zt_model_free(ZtModel *m)
{
    if (!m) return;
    zc_free(&m->comp);
    free(m);
}

/* ===================================================================== */
/* The trace                                                              */
/* ===================================================================== */

enum { K_SEND, K_RECV, K_ACT, K_CHOICE };
static const char *const kind_names[] = {"send", "recv", "act", "choice"};

typedef struct Ev {
    int life, index, kind, line;
    int peer;               /* send: to; recv: from */
    const char *chan;       /* namespace */
    const char *ctl;        /* control tag, or NULL */
    json_t *values;         /* array */
    const char *msg;        /* message id */
    const char *action;     /* act: name or NULL */
    const char *construct;  /* choice */
    int value;              /* choice */
    json_t *writes;         /* object */
    json_t *vc;             /* object */
    int match;              /* the matched event (send <-> recv), or -1 */
    int64_t *cvc;           /* computed vector clock */
} Ev;

typedef struct Chan {
    char *key;   /* "A>B@ns" */
    int *sends;  /* event ids in order */
    int nsends, capsends, nrecvs;
} Chan;

typedef struct Check {
    const ZtModel *m;
    ZArena *a;
    const char *name;
    jmp_buf fail_jb;
    ZBuf msg;
    int fail_line;
    ZtStats st;
    /* lines */
    json_t **lines;
    int nlines, caplines;
    /* events */
    Ev *ev;
    long nev, capev;
    int **byl;   /* per lifeline: event ids by index-1 */
    int *nbyl, *capbyl;
    json_t **start;  /* per lifeline: start store object (or NULL) */
    int *start_line;
    int nends, capends;
    bool ended_error; /* some end line reports an error */
    json_t **end_results;
    int *end_lines;
    int64_t *vcs;    /* computed vector clocks, nev × nl */
    /* channels */
    Chan *chans;
    int nchans, capchans;
    int *htab;
    int hcap;
    /* stores: per lifeline, (n+1) × nvars values after each event */
    json_t ***stores;
    /* decisions per construct: the owner's recorded values in order */
    int **dec;
    int *ndec, *capdec;
    /* CPL values: per sub id, per event id; 0 false, 1 true, 2 unknown */
    uint8_t **fval;
} Check;

static void failf(Check *c, int line, const char *fmt, ...) ZG_PRINTF(3, 4);
static void failf(Check *c, int line, const char *fmt, ...)
{
    c->fail_line = line;
    if (line > 0) zu_buf_printf(&c->msg, "%s:%d: ", c->name, line);
    else zu_buf_printf(&c->msg, "%s: ", c->name);
    char tmp[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    zu_buf_puts(&c->msg, tmp);
    longjmp(c->fail_jb, 1);
}

static void *grow(void *p, int *cap, int need, size_t elem)
{
    if (need <= *cap) return p;
    int n = *cap ? *cap : 8;
    while (n < need) n *= 2;
    void *q = realloc(p, (size_t)n * elem);
    if (!q) {
        fprintf(stderr, "zgc: out of memory\n");
        exit(1);
    }
    *cap = n;
    return q;
}

/* JSON text of a value, cut to a readable length (arena string). */
static const char *jtext(Check *c, const json_t *j)
{
    if (!j) return "(undefined)";
    char *s = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!s) return "?";
    size_t n = strlen(s);
    const char *r;
    if (n > 200) r = zu_fmt(c->a, "%.197s...", s);
    else r = zu_strdup(c->a, s);
    free(s);
    return r;
}

static int life_index(const ZtModel *m, const char *name)
{
    for (int i = 0; i < m->nl; i++)
        if (!strcmp(m->lnames[i], name)) return i;
    return -1;
}

static int var_index(const ZtModel *m, const char *name)
{
    for (int i = 0; i < m->nvars; i++)
        if (!strcmp(m->vars[i]->name, name)) return i;
    return -1;
}

static const char *get_str(Check *c, json_t *o, const char *key, int line, bool nullable)
{
    json_t *v = json_object_get(o, key);
    if (!v) failf(c, line, "event lacks \"%s\"", key);
    if (nullable && json_is_null(v)) return NULL;
    if (!json_is_string(v)) failf(c, line, "\"%s\" must be a string%s", key, nullable ? " or null" : "");
    return json_string_value(v);
}

static int get_life(Check *c, json_t *o, const char *key, int line)
{
    const char *s = get_str(c, o, key, line, false);
    int l = life_index(c->m, s);
    if (l < 0) failf(c, line, "unknown lifeline \"%s\" in \"%s\"", s, key);
    return l;
}

static void add_line(Check *c, json_t *j)
{
    c->lines = grow(c->lines, &c->caplines, c->nlines + 1, sizeof *c->lines);
    c->lines[c->nlines++] = j;
}

static void read_event(Check *c, json_t *o, const char *kind, int line)
{
    int k;
    for (k = 0; k < 4; k++)
        if (!strcmp(kind, kind_names[k])) break;
    if (c->nev >= ZT_MAX_EVENTS) failf(c, line, "too many events (more than %ld)", ZT_MAX_EVENTS);
    if (c->nev >= c->capev) {
        long n = c->capev ? c->capev * 2 : 256;
        Ev *e = realloc(c->ev, (size_t)n * sizeof *e);
        if (!e) {
            fprintf(stderr, "zgc: out of memory\n");
            exit(1);
        }
        c->ev = e;
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
    if (!json_is_integer(ix)) failf(c, line, "event lacks an integer \"index\"");
    int l = e->life;
    json_int_t want = c->nbyl[l] + 1;
    if (json_integer_value(ix) != want)
        failf(c, line, "lifeline %s: event index %" JSON_INTEGER_FORMAT ", expected %" JSON_INTEGER_FORMAT
              " (events must be numbered 1, 2, ... per lifeline)",
              c->m->lnames[l], json_integer_value(ix), want);
    e->index = (int)want;
    if (k == K_SEND || k == K_RECV) {
        e->peer = get_life(c, o, k == K_SEND ? "to" : "from", line);
        if (e->peer == l) failf(c, line, "lifeline %s event %d: a message to itself", c->m->lnames[l], e->index);
        e->chan = get_str(c, o, "channel", line, false);
        e->ctl = get_str(c, o, "control", line, true);
        e->msg = get_str(c, o, "msg", line, false);
        e->values = json_object_get(o, "values");
        if (!json_is_array(e->values)) failf(c, line, "\"values\" must be an array");
    } else if (k == K_ACT) {
        e->action = get_str(c, o, "action", line, true);
    } else {
        e->construct = get_str(c, o, "construct", line, false);
        json_t *v = json_object_get(o, "value");
        if (!json_is_boolean(v)) failf(c, line, "choice event lacks a boolean \"value\"");
        e->value = json_is_true(v);
    }
    e->writes = json_object_get(o, "writes");
    if (!json_is_object(e->writes)) failf(c, line, "event lacks a \"writes\" object");
    const char *key;
    json_t *val;
    json_object_foreach(e->writes, key, val) {
        if (var_index(c->m, key) < 0) failf(c, line, "\"writes\" names an unknown variable \"%s\"", key);
    }
    e->vc = json_object_get(o, "vc");
    if (!json_is_object(e->vc)) failf(c, line, "event lacks a \"vc\" object");
    c->byl[l] = grow(c->byl[l], &c->capbyl[l], c->nbyl[l] + 1, sizeof(int));
    c->byl[l][c->nbyl[l]++] = (int)c->nev;
    c->nev++;
}

static void read_trace(Check *c, const char *text, size_t len)
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
        if (!o) failf(c, line, "not JSON: %s", jerr.text);
        add_line(c, o);
        if (!json_is_object(o)) failf(c, line, "not a JSON object");
        json_t *kind = json_object_get(o, "kind");
        if (!json_is_string(kind)) failf(c, line, "line lacks a string \"kind\"");
        const char *k = json_string_value(kind);
        if (!strcmp(k, "start")) {
            int l = get_life(c, o, "lifeline", line);
            if (c->start[l]) failf(c, line, "a second start line for lifeline %s", c->m->lnames[l]);
            if (c->nbyl[l]) failf(c, line, "the start line of lifeline %s comes after its events", c->m->lnames[l]);
            json_t *st = json_object_get(o, "store");
            if (!json_is_object(st)) failf(c, line, "start line lacks a \"store\" object");
            const char *key;
            json_t *val;
            json_object_foreach(st, key, val) {
                if (var_index(c->m, key) < 0) failf(c, line, "start store names an unknown variable \"%s\"", key);
            }
            c->start[l] = st;
            c->start_line[l] = line;
        } else if (!strcmp(k, "end")) {
            int cap1 = c->capends, cap2 = c->capends;
            c->end_results = grow(c->end_results, &cap1, c->nends + 1, sizeof(json_t *));
            c->end_lines = grow(c->end_lines, &cap2, c->nends + 1, sizeof(int));
            c->capends = cap1;
            json_t *err = json_object_get(o, "error");
            json_t *res = json_object_get(o, "result");
            if (err) c->ended_error = true;
            else if (!res) failf(c, line, "end line lacks \"result\" or \"error\"");
            c->end_results[c->nends] = err ? NULL : res;
            c->end_lines[c->nends] = line;
            c->nends++;
        } else if (!strcmp(k, "send") || !strcmp(k, "recv") || !strcmp(k, "act") || !strcmp(k, "choice")) {
            read_event(c, o, k, line);
        }
        /* any other kind (retries, notes) is not an event */
    }
    if (c->nends == 0) failf(c, line + 1, "the trace has no end line (the run did not finish)");
    for (int l = 0; l < c->m->nl; l++)
        if (!c->start[l]) failf(c, 0, "no start line for lifeline %s", c->m->lnames[l]);
}

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
        c->htab = malloc(sizeof(int) * (size_t)c->hcap);
        if (!c->htab) exit(1);
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
        int *nt = malloc(sizeof(int) * (size_t)ncap);
        if (!nt) exit(1);
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
    c->chans = grow(c->chans, &c->capchans, c->nchans + 1, sizeof *c->chans);
    Chan *ch = &c->chans[c->nchans];
    memset(ch, 0, sizeof *ch);
    ch->key = strdup(key);
    if (!ch->key) exit(1);
    int i = (int)(hash_str(key) % (unsigned long)c->hcap);
    while (c->htab[i] >= 0) i = (i + 1) % c->hcap;
    c->htab[i] = c->nchans++;
    return ch;
}

static const char *ev_where(Check *c, const Ev *e)
{
    return zu_fmt(c->a, "lifeline %s event %d", c->m->lnames[e->life], e->index);
}

static void check_messages(Check *c)
{
    const ZtModel *m = c->m;
    /* sends first, in each lifeline's order */
    for (int l = 0; l < m->nl; l++)
        for (int i = 0; i < c->nbyl[l]; i++) {
            Ev *e = &c->ev[c->byl[l][i]];
            if (e->kind != K_SEND) continue;
            const char *key = zu_fmt(c->a, "%s>%s@%s", m->lnames[l], m->lnames[e->peer], e->chan);
            Chan *ch = chan_get(c, key, true);
            ch->sends = grow(ch->sends, &ch->capsends, ch->nsends + 1, sizeof(int));
            ch->sends[ch->nsends++] = c->byl[l][i];
            const char *want = zu_fmt(c->a, "%s#%d", key, ch->nsends);
            if (strcmp(e->msg, want))
                failf(c, e->line, "%s: send has message id \"%s\", expected \"%s\" (the channel's message %d)",
                      ev_where(c, e), e->msg, want, ch->nsends);
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
                failf(c, e->line, "%s: receives \"%s\", but %s sent only %d message%s to %s on %s",
                      ev_where(c, e), e->msg, m->lnames[e->peer], ch ? ch->nsends : 0,
                      ch && ch->nsends == 1 ? "" : "s", m->lnames[l], e->chan);
            if (strcmp(e->msg, want))
                failf(c, e->line, "%s: FIFO: receives \"%s\", expected the channel's next message \"%s\"",
                      ev_where(c, e), e->msg, want);
            Ev *s = &c->ev[ch->sends[n - 1]];
            e->match = ch->sends[n - 1];
            s->match = c->byl[l][i];
            bool sc = s->ctl != NULL, rc = e->ctl != NULL;
            if (sc != rc || (sc && strcmp(s->ctl, e->ctl)))
                failf(c, e->line, "%s: receive of \"%s\" has control %s, the send (line %d) has %s", ev_where(c, e),
                      e->msg, rc ? e->ctl : "null", s->line, sc ? s->ctl : "null");
            if (!json_equal(s->values, e->values))
                failf(c, e->line, "%s: receive of \"%s\" has values %s, the send (line %d) has %s", ev_where(c, e),
                      e->msg, jtext(c, e->values), s->line, jtext(c, s->values));
            c->st.messages++;
        }
    if (!c->ended_error)
        for (int k = 0; k < c->nchans; k++) {
            Chan *ch = &c->chans[k];
            if (ch->nrecvs < ch->nsends) {
                Ev *s = &c->ev[ch->sends[ch->nrecvs]];
                failf(c, s->line, "%s: message \"%s\" is never received in a run that ended normally",
                      ev_where(c, s), s->msg);
            }
        }
}

/* ===================================================================== */
/* Causal order: acyclicity and vector clocks                             */
/* ===================================================================== */

static void check_causal(Check *c)
{
    const ZtModel *m = c->m;
    long n = c->nev;
    int nl = m->nl;
    if (n * (long)nl > ZT_MAX_CELLS) failf(c, 0, "trace too large to check (%ld events)", n);
    int *indeg = calloc((size_t)(n ? n : 1), sizeof(int));
    int *queue = malloc(sizeof(int) * (size_t)(n ? n : 1));
    int64_t *vcs = calloc((size_t)(n ? n : 1) * (size_t)nl, sizeof(int64_t));
    if (!indeg || !queue || !vcs) exit(1);
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
        failf(c, e->line, "%s: the causal order has a cycle through this event (%s %s): a receive "
              "happens before its send", ev_where(c, e), kind_names[e->kind], e->msg ? e->msg : "");
    }
    /* compare with the recorded clocks */
    for (long i = 0; i < n; i++) {
        Ev *e = &c->ev[i];
        if ((int)json_object_size(e->vc) != nl) {
            const char *key;
            json_t *val;
            json_object_foreach(e->vc, key, val) {
                if (life_index(m, key) < 0) failf(c, e->line, "%s: vc names an unknown lifeline \"%s\"", ev_where(c, e), key);
            }
            failf(c, e->line, "%s: vc names %d lifelines, expected all %d", ev_where(c, e),
                  (int)json_object_size(e->vc), nl);
        }
        for (int b = 0; b < nl; b++) {
            json_t *v = json_object_get(e->vc, m->lnames[b]);
            if (!json_is_integer(v))
                failf(c, e->line, "%s: vc lacks an integer entry for %s", ev_where(c, e), m->lnames[b]);
            if (json_integer_value(v) != e->cvc[b])
                failf(c, e->line, "%s: vc[%s] is %" JSON_INTEGER_FORMAT ", but %" PRId64
                      " events of %s causally precede it (by reachability)",
                      ev_where(c, e), m->lnames[b], json_integer_value(v), e->cvc[b], m->lnames[b]);
        }
    }
}

/* ===================================================================== */
/* Stores                                                                 */
/* ===================================================================== */

static void build_stores(Check *c)
{
    const ZtModel *m = c->m;
    int nv = m->nvars;
    c->stores = calloc((size_t)m->nl, sizeof *c->stores);
    if (!c->stores) exit(1);
    if (c->nev * (long)(nv ? nv : 1) > ZT_MAX_CELLS) failf(c, 0, "trace too large to check (%ld events)", c->nev);
    for (int l = 0; l < m->nl; l++) {
        int n = c->nbyl[l];
        json_t **s = calloc((size_t)(n + 1) * (size_t)(nv ? nv : 1), sizeof(json_t *));
        if (!s) exit(1);
        c->stores[l] = s;
        const char *key;
        json_t *val;
        json_object_foreach(c->start[l], key, val) {
            s[var_index(m, key)] = val;
        }
        for (int i = 1; i <= n; i++) {
            memcpy(s + (size_t)i * nv, s + (size_t)(i - 1) * nv, sizeof(json_t *) * (size_t)nv);
            Ev *e = &c->ev[c->byl[l][i - 1]];
            json_object_foreach(e->writes, key, val) {
                s[(size_t)i * nv + var_index(m, key)] = val;
            }
        }
    }
}

/* The value of variable x on lifeline l after its i-th event (0: start). */
static json_t *store_at(Check *c, int l, int i, int x)
{
    return c->stores[l][(size_t)i * (size_t)c->m->nvars + (size_t)x];
}

/* ===================================================================== */
/* Expressions                                                            */
/* ===================================================================== */

typedef enum { V_UNKNOWN, V_UNDEF, V_ERROR, V_INT, V_FLOAT, V_BOOL, V_STR, V_ENUM, V_JSON } VKind;

typedef struct Val {
    VKind k;
    int64_t i;          /* int, bool, enum member */
    double f;
    const char *s;      /* str */
    size_t n;
    const ZDecl *en;    /* enum */
    json_t *j;          /* json (borrowed or owned by the check's pool) */
} Val;

typedef struct Env {
    Check *c;
    int life, index;    /* valuation: the store of life after its index-th event */
    const Val *params;  /* pure action body */
    int depth;
    bool undef;         /* a term was undefined */
} Env;

static Val vmk(VKind k) { return (Val){.k = k}; }

static Val from_json(Check *c, json_t *j, const ZType *t)
{
    if (!j) return vmk(V_UNDEF);
    if (!t) return vmk(V_UNKNOWN);
    Val v = {0};
    switch (t->kind) {
    case TY_INT:
        if (!json_is_integer(j)) return vmk(V_UNKNOWN);
        v.k = V_INT, v.i = json_integer_value(j);
        return v;
    case TY_FLOAT:
        if (!json_is_number(j)) return vmk(V_UNKNOWN);
        v.k = V_FLOAT, v.f = json_number_value(j);
        return v;
    case TY_BOOL:
        if (!json_is_boolean(j)) return vmk(V_UNKNOWN);
        v.k = V_BOOL, v.i = json_is_true(j);
        return v;
    case TY_STR:
        if (!json_is_string(j)) return vmk(V_UNKNOWN);
        v.k = V_STR, v.s = json_string_value(j), v.n = json_string_length(j);
        return v;
    case TY_ENUM: {
        if (!json_is_string(j) || !t->enum_decl) return vmk(V_UNKNOWN);
        const ZDecl *en = t->enum_decl;
        for (int k = 0; k < en->members.len; k++) {
            const ZParam *p = ZU_VEC_AT(en->members, k);
            if (!strcmp(p->name, json_string_value(j))) {
                v.k = V_ENUM, v.i = k, v.en = en;
                return v;
            }
        }
        return vmk(V_UNKNOWN);
    }
    case TY_JSON:
        v.k = V_JSON, v.j = j;
        return v;
    default: return vmk(V_UNKNOWN);
    }
    (void)c;
}

/* A new JSON value for v (a new reference), or NULL when unknown. */
static json_t *to_json(const Val *v)
{
    switch (v->k) {
    case V_INT: return json_integer(v->i);
    case V_FLOAT: return json_real(v->f);
    case V_BOOL: return json_boolean(v->i);
    case V_STR: return json_stringn_nocheck(v->s, v->n);
    case V_ENUM: {
        if (!v->en || v->i < 0 || v->i >= v->en->members.len) return NULL;
        const ZParam *p = ZU_VEC_AT(v->en->members, (int)v->i);
        return json_string(p->name);
    }
    case V_JSON: return v->j ? json_incref(v->j) : json_null();
    default: return NULL;
    }
}

static Val eval(Env *env, const ZExpr *e);

static bool is_bad(const Val *v) { return v->k == V_UNKNOWN || v->k == V_UNDEF || v->k == V_ERROR; }

static Val vint(int64_t i) { return (Val){.k = V_INT, .i = i}; }
static Val vbool(bool b) { return (Val){.k = V_BOOL, .i = b}; }
static Val vfloat(double f)
{
    if (!isfinite(f)) return vmk(V_ERROR);
    return (Val){.k = V_FLOAT, .f = f};
}

static int cmp_vals(const Val *a, const Val *b, bool *ok)
{
    *ok = true;
    if (a->k == V_INT && b->k == V_INT) return a->i < b->i ? -1 : a->i > b->i;
    if (a->k == V_FLOAT && b->k == V_FLOAT) {
        if (a->f != a->f || b->f != b->f) { *ok = false; return 0; }
        return a->f < b->f ? -1 : a->f > b->f;
    }
    if (a->k == V_STR && b->k == V_STR) {
        size_t n = a->n < b->n ? a->n : b->n;
        int r = memcmp(a->s, b->s, n);
        if (r) return r < 0 ? -1 : 1;
        return a->n < b->n ? -1 : a->n > b->n;
    }
    if ((a->k == V_BOOL && b->k == V_BOOL) || (a->k == V_ENUM && b->k == V_ENUM))
        return a->i < b->i ? -1 : a->i > b->i;
    if (a->k == V_JSON && b->k == V_JSON) {
        bool eq = (a->j == NULL && b->j == NULL) ||
                  (a->j && b->j && json_equal(a->j, b->j)) ||
                  (!a->j && b->j && json_is_null(b->j)) || (!b->j && a->j && json_is_null(a->j));
        return eq ? 0 : 2; /* only == and != are meaningful */
    }
    *ok = false;
    return 0;
}

static Val binary(Env *env, const ZExpr *e)
{
    if (e->op == OP_AND || e->op == OP_OR) {
        Val a = eval(env, e->a);
        if (is_bad(&a)) return a;
        if (a.k != V_BOOL) return vmk(V_UNKNOWN);
        if (e->op == OP_AND && !a.i) return vbool(false);
        if (e->op == OP_OR && a.i) return vbool(true);
        Val b = eval(env, e->b);
        if (is_bad(&b)) return b;
        if (b.k != V_BOOL) return vmk(V_UNKNOWN);
        return vbool(b.i != 0);
    }
    Val a = eval(env, e->a);
    if (is_bad(&a)) return a;
    Val b = eval(env, e->b);
    if (is_bad(&b)) return b;
    int64_t r;
    switch (e->op) {
    case OP_ADD:
    case OP_SUB:
    case OP_MUL:
    case OP_DIV:
    case OP_MOD:
        if (a.k == V_INT && b.k == V_INT) {
            switch (e->op) {
            case OP_ADD: return __builtin_add_overflow(a.i, b.i, &r) ? vmk(V_ERROR) : vint(r);
            case OP_SUB: return __builtin_sub_overflow(a.i, b.i, &r) ? vmk(V_ERROR) : vint(r);
            case OP_MUL: return __builtin_mul_overflow(a.i, b.i, &r) ? vmk(V_ERROR) : vint(r);
            default:
                if (b.i == 0 || (a.i == INT64_MIN && b.i == -1)) return vmk(V_ERROR);
                return vint(e->op == OP_DIV ? a.i / b.i : a.i % b.i);
            }
        }
        if (a.k == V_FLOAT && b.k == V_FLOAT) {
            switch (e->op) {
            case OP_ADD: return vfloat(a.f + b.f);
            case OP_SUB: return vfloat(a.f - b.f);
            case OP_MUL: return vfloat(a.f * b.f);
            default:
                if (b.f == 0.0) return vmk(V_ERROR);
                return vfloat(e->op == OP_DIV ? a.f / b.f : fmod(a.f, b.f));
            }
        }
        if (e->op == OP_ADD && a.k == V_STR && b.k == V_STR) {
            char *s = zu_alloc(env->c->a, a.n + b.n + 1);
            memcpy(s, a.s, a.n);
            memcpy(s + a.n, b.s, b.n);
            Val v = {.k = V_STR, .s = s, .n = a.n + b.n};
            return v;
        }
        return vmk(V_UNKNOWN);
    case OP_EQ:
    case OP_NE:
    case OP_LT:
    case OP_LE:
    case OP_GT:
    case OP_GE: {
        bool ok;
        int k = cmp_vals(&a, &b, &ok);
        if (!ok) {
            /* a NaN compares unequal to everything */
            if ((a.k == V_FLOAT || b.k == V_FLOAT) && a.k == b.k)
                return vbool(e->op == OP_NE);
            return vmk(V_UNKNOWN);
        }
        if (k == 2) {
            if (e->op == OP_EQ) return vbool(false);
            if (e->op == OP_NE) return vbool(true);
            return vmk(V_UNKNOWN);
        }
        switch (e->op) {
        case OP_EQ: return vbool(k == 0);
        case OP_NE: return vbool(k != 0);
        case OP_LT: return vbool(k < 0);
        case OP_LE: return vbool(k <= 0);
        case OP_GT: return vbool(k > 0);
        default: return vbool(k >= 0);
        }
    }
    default: return vmk(V_UNKNOWN);
    }
}

static bool parse_int_text(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
    if (i == n) return false;
    uint64_t v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        if (v > (UINT64_MAX - 9) / 10) return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX) return false;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

static bool is_space_ch(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r'; }

static Val call(Env *env, const ZExpr *e)
{
    int n = e->args.len;
    Val args[8];
    if (n > 8) return vmk(V_UNKNOWN);
    for (int i = 0; i < n; i++) {
        args[i] = eval(env, ZU_VEC_AT(e->args, i));
        if (is_bad(&args[i])) return args[i];
    }
    ZArena *ar = env->c->a;
    if (e->builtin != BI_NONE) {
        const Val *a = &args[0];
        switch (e->builtin) {
        case BI_LEN: {
            if (a->k != V_STR) return vmk(V_UNKNOWN);
            int64_t cnt = 0;
            for (size_t i = 0; i < a->n; i++)
                if (((unsigned char)a->s[i] & 0xC0) != 0x80) cnt++;
            return vint(cnt);
        }
        case BI_LOWER:
        case BI_UPPER: {
            if (a->k != V_STR) return vmk(V_UNKNOWN);
            char *s = zu_alloc(ar, a->n + 1);
            for (size_t i = 0; i < a->n; i++) {
                char ch = a->s[i];
                if (e->builtin == BI_LOWER && ch >= 'A' && ch <= 'Z') ch = (char)(ch - 'A' + 'a');
                if (e->builtin == BI_UPPER && ch >= 'a' && ch <= 'z') ch = (char)(ch - 'a' + 'A');
                s[i] = ch;
            }
            return (Val){.k = V_STR, .s = s, .n = a->n};
        }
        case BI_TRIM: {
            if (a->k != V_STR) return vmk(V_UNKNOWN);
            size_t b = 0, en = a->n;
            while (b < en && is_space_ch(a->s[b])) b++;
            while (en > b && is_space_ch(a->s[en - 1])) en--;
            /* other white space (\v, \f) is left to the runtime: unknown */
            if ((b < en && (a->s[b] == '\v' || a->s[b] == '\f')) ||
                (en > b && (a->s[en - 1] == '\v' || a->s[en - 1] == '\f')))
                return vmk(V_UNKNOWN);
            return (Val){.k = V_STR, .s = a->s + b, .n = en - b};
        }
        case BI_CONTAINS:
        case BI_STARTS_WITH:
        case BI_ENDS_WITH: {
            if (a->k != V_STR || args[1].k != V_STR) return vmk(V_UNKNOWN);
            const Val *p = &args[1];
            if (p->n > a->n) return vbool(false);
            if (e->builtin == BI_STARTS_WITH) return vbool(memcmp(a->s, p->s, p->n) == 0);
            if (e->builtin == BI_ENDS_WITH) return vbool(memcmp(a->s + a->n - p->n, p->s, p->n) == 0);
            for (size_t i = 0; i + p->n <= a->n; i++)
                if (memcmp(a->s + i, p->s, p->n) == 0) return vbool(true);
            return vbool(false);
        }
        case BI_STR:
            if (a->k == V_STR) return *a;
            if (a->k == V_INT) {
                const char *s = zu_fmt(ar, "%" PRId64, a->i);
                return (Val){.k = V_STR, .s = s, .n = strlen(s)};
            }
            if (a->k == V_BOOL) return (Val){.k = V_STR, .s = a->i ? "true" : "false", .n = a->i ? 4 : 5};
            if (a->k == V_ENUM && a->en && a->i >= 0 && a->i < a->en->members.len) {
                const ZParam *p = ZU_VEC_AT(a->en->members, (int)a->i);
                return (Val){.k = V_STR, .s = p->name, .n = strlen(p->name)};
            }
            return vmk(V_UNKNOWN);
        case BI_INT:
            if (a->k == V_INT) return *a;
            if (a->k == V_FLOAT) {
                if (!(a->f >= -9223372036854775808.0 && a->f < 9223372036854775808.0)) return vmk(V_ERROR);
                return vint((int64_t)a->f);
            }
            if (a->k == V_STR) {
                int64_t v;
                if (!parse_int_text(a->s, a->n, &v)) return vmk(V_UNKNOWN);
                return vint(v);
            }
            return vmk(V_UNKNOWN);
        case BI_FLOAT:
            if (a->k == V_FLOAT) return *a;
            if (a->k == V_INT) return vfloat((double)a->i);
            return vmk(V_UNKNOWN);
        default: return vmk(V_UNKNOWN); /* json_get, json_str */
        }
    }
    const ZDecl *d = e->decl;
    if (d && d->kind == D_ACTION && d->action == ACT_PURE && d->expr && d->results.len == 1) {
        if (env->depth > ZT_MAX_DEPTH) return vmk(V_UNKNOWN);
        Env sub = *env;
        sub.params = args;
        sub.depth = env->depth + 1;
        Val v = eval(&sub, d->expr);
        env->undef |= sub.undef;
        return v;
    }
    return vmk(V_UNKNOWN);
}

static Val term(Env *env, int life, const ZDecl *var)
{
    Check *c = env->c;
    if (!var || var->kind != D_VAR || var->index < 0 || var->index >= c->m->nvars) return vmk(V_UNKNOWN);
    int l = env->life, i = env->index;
    if (life >= 0 && life != env->life) {
        if (life >= c->m->nl || i <= 0) {
            env->undef = true;
            return vmk(V_UNDEF);
        }
        const Ev *e = &c->ev[c->byl[env->life][i - 1]];
        int64_t k = e->cvc[life];
        if (k <= 0) {
            env->undef = true;
            return vmk(V_UNDEF);
        }
        l = life;
        i = (int)k;
    }
    Val v = from_json(c, store_at(c, l, i, var->index), var->type);
    if (v.k == V_UNDEF) env->undef = true;
    return v;
}

static Val eval(Env *env, const ZExpr *e)
{
    if (!e) return vmk(V_UNKNOWN);
    if (env->depth > ZT_MAX_DEPTH) return vmk(V_UNKNOWN);
    env->depth++;
    Val r;
    switch (e->kind) {
    case E_INT: r = vint(e->lit.i); break;
    case E_FLOAT: r = vfloat(e->lit.f); break;
    case E_BOOL: r = vbool(e->lit.b); break;
    case E_STR: r = (Val){.k = V_STR, .s = e->lit.s, .n = e->slen}; break;
    case E_NULL: r = (Val){.k = V_JSON, .j = NULL}; break;
    case E_NAME:
        switch (e->name_kind) {
        case NAME_VAR: r = term(env, -1, e->decl); break;
        case NAME_CONST: r = e->decl ? eval(env, e->decl->expr) : vmk(V_UNKNOWN); break;
        case NAME_GUARD: r = e->decl ? eval(env, e->decl->expr) : vmk(V_UNKNOWN); break;
        case NAME_MEMBER:
            r = (Val){.k = V_ENUM, .i = e->member, .en = e->decl && e->decl->kind == D_ENUM ? e->decl
                                                         : e->type ? e->type->enum_decl : NULL};
            break;
        case NAME_PARAM:
            r = env->params && e->member >= 0 && e->member < 8 ? env->params[e->member] : vmk(V_UNKNOWN);
            break;
        default: r = vmk(V_UNKNOWN); break;
        }
        break;
    case E_AT_VAR: r = term(env, e->life, e->decl); break;
    case E_UNARY: {
        Val a = eval(env, e->a);
        if (is_bad(&a)) r = a;
        else if (e->op == OP_NOT && a.k == V_BOOL) r = vbool(!a.i);
        else if (e->op == OP_NEG && a.k == V_INT) r = a.i == INT64_MIN ? vmk(V_ERROR) : vint(-a.i);
        else if (e->op == OP_NEG && a.k == V_FLOAT) r = vfloat(-a.f);
        else r = vmk(V_UNKNOWN);
        break;
    }
    case E_BINARY: r = binary(env, e); break;
    case E_COND: {
        Val cnd = eval(env, e->c);
        if (is_bad(&cnd)) r = cnd;
        else if (cnd.k != V_BOOL) r = vmk(V_UNKNOWN);
        else r = eval(env, cnd.i ? e->a : e->b);
        break;
    }
    case E_CALL: r = call(env, e); break;
    default: r = vmk(V_UNKNOWN); break; /* tuples, CPL operators */
    }
    env->depth--;
    return r;
}

/* True when every term of the atom (variables, @B.x, looking through
 * named guards and constants) is defined in env. */
static bool terms_defined(Env *env, const ZExpr *e, int depth)
{
    if (!e || depth > ZT_MAX_DEPTH) return true;
    if (e->kind == E_NAME && e->name_kind == NAME_VAR) {
        Val v = term(env, -1, e->decl);
        return v.k != V_UNDEF;
    }
    if (e->kind == E_AT_VAR) {
        Val v = term(env, e->life, e->decl);
        return v.k != V_UNDEF;
    }
    if (e->kind == E_NAME && e->name_kind == NAME_GUARD && e->decl)
        return terms_defined(env, e->decl->expr, depth + 1);
    if (!terms_defined(env, e->a, depth + 1) || !terms_defined(env, e->b, depth + 1) ||
        !terms_defined(env, e->c, depth + 1))
        return false;
    for (int i = 0; i < e->args.len; i++)
        if (!terms_defined(env, ZU_VEC_AT(e->args, i), depth + 1)) return false;
    return true;
}

/* ===================================================================== */
/* Erasure: the global workflow, replayed per lifeline                    */
/* ===================================================================== */

enum { X_SEND, X_RECV, X_ACT, X_CHOICE, X_NODECISION };

typedef struct Exp {
    int kind;
    int peer;
    const char *ns;
    const ZStmt *stmt;   /* message, assignment, if/while */
    int msg_index;       /* coregion: which message */
    int ctl;             /* control message: the decision (0/1); -1 user */
    int group;           /* coregion receives: matched in any order */
    bool used;
} Exp;

typedef struct Frame {
    const ZVec *list;
    int pos;
    const ZStmt *loop;  /* a while's head: its choice (owner) or decision (recipient) */
    bool owner;
} Frame;

typedef struct Cur {
    const char *ns;
    Frame *fr;
    int nfr, capfr;
    Exp *q;
    int qlen, qcap, qhead;
    int parent;          /* index of the parent cursor, -1 for the root */
    int children;        /* children still running */
    bool done;
} Cur;

typedef struct Replay {
    Check *c;
    int life;
    Cur *cur;
    int ncur, capcur;
    int *inst;   /* per construct: instances met by this lifeline (recipient side) */
    int group;
} Replay;

static void part_list(const ZVec *list, bool *set, int nl);

static void part_stmt(const ZStmt *s, bool *set, int nl)
{
    int k;
    switch (s->kind) {
    case S_MSG:
        if (s->life.index >= 0 && s->life.index < nl) set[s->life.index] = true;
        if (s->to.index >= 0 && s->to.index < nl) set[s->to.index] = true;
        break;
    case S_ASSIGN:
    case S_BLOCK:
    case S_SKIP:
        if (s->life.index >= 0 && s->life.index < nl) set[s->life.index] = true;
        break;
    case S_IF:
    case S_WHILE:
        if (s->life.index >= 0 && s->life.index < nl) set[s->life.index] = true;
        part_list(&s->body, set, nl);
        part_list(&s->els, set, nl);
        break;
    case S_PAR:
        for (k = 0; k < s->branches.len; k++) {
            const ZBranch *b = ZU_VEC_AT(s->branches, k);
            part_list(&b->body, set, nl);
        }
        break;
    case S_COREGION: part_list(&s->body, set, nl); break;
    default: break;
    }
}

static void part_list(const ZVec *list, bool *set, int nl)
{
    for (int i = 0; i < list->len; i++) part_stmt(ZU_VEC_AT(*list, i), set, nl);
}

static bool takes_part(const ZStmt *s, int l, int nl)
{
    bool set[ZJ_MAX_LIFELINES] = {0};
    part_stmt(s, set, nl);
    return set[l];
}

static bool list_takes_part(const ZVec *v, int l, int nl)
{
    bool set[ZJ_MAX_LIFELINES] = {0};
    part_list(v, set, nl);
    return set[l];
}

static void q_push(Cur *k, Exp x)
{
    if (k->qhead > 0 && k->qhead == k->qlen) k->qhead = k->qlen = 0;
    k->q = grow(k->q, &k->qcap, k->qlen + 1, sizeof *k->q);
    k->q[k->qlen++] = x;
}

static void fr_push(Cur *k, Frame f)
{
    k->fr = grow(k->fr, &k->capfr, k->nfr + 1, sizeof *k->fr);
    k->fr[k->nfr++] = f;
}

static int new_cursor(Replay *r, const char *ns, int parent)
{
    r->cur = grow(r->cur, &r->capcur, r->ncur + 1, sizeof *r->cur);
    Cur *k = &r->cur[r->ncur];
    memset(k, 0, sizeof *k);
    k->ns = ns;
    k->parent = parent;
    return r->ncur++;
}

/* The participants told of a construct's decision: part \ {owner}, in
 * declaration order. */
static void recipients(const ZtModel *m, const ZStmt *s, bool *set)
{
    memset(set, 0, sizeof(bool) * ZJ_MAX_LIFELINES);
    part_list(&s->body, set, m->nl);
    part_list(&s->els, set, m->nl);
    if (s->life.index >= 0 && s->life.index < m->nl) set[s->life.index] = false;
}

/* Applies a decision of construct s on cursor k. */
static void decide(Replay *r, int ki, const ZStmt *s, bool v, bool owner)
{
    const ZtModel *m = r->c->m;
    Cur *k = &r->cur[ki];
    bool set[ZJ_MAX_LIFELINES];
    recipients(m, s, set);
    if (owner) {
        for (int b = 0; b < m->nl; b++)
            if (set[b]) q_push(k, (Exp){.kind = X_SEND, .peer = b, .ns = k->ns, .stmt = s, .ctl = v});
    } else {
        q_push(k, (Exp){.kind = X_RECV, .peer = s->life.index, .ns = k->ns, .stmt = s, .ctl = v});
    }
    if (s->kind == S_IF) {
        const ZVec *br = v ? &s->body : &s->els;
        if (br->len) fr_push(k, (Frame){.list = br});
    } else {
        /* the loop head is the top frame */
        if (v) {
            if (s->body.len) fr_push(k, (Frame){.list = &s->body});
        } else {
            k->nfr--;
            if (s->els.len) fr_push(k, (Frame){.list = &s->els});
        }
    }
}

/* A recipient's decision for its next instance of construct s. */
static int recipient_decision(Replay *r, const ZStmt *s)
{
    Check *c = r->c;
    int cn = s->construct;
    int k = r->inst[cn]++;
    if (k < c->ndec[cn]) return c->dec[cn][k];
    return -1;
}

/* The next decision of construct s on this lifeline: the owner's own choice
 * event is expected next; a recipient follows the owner's recorded decision
 * (or waits for it when the owner has not decided yet). */
static void next_decision(Replay *r, Cur *k, int ki, const ZStmt *s, bool owner)
{
    if (owner) {
        q_push(k, (Exp){.kind = X_CHOICE, .stmt = s, .ctl = -1});
        return;
    }
    int d = recipient_decision(r, s);
    if (d < 0) q_push(k, (Exp){.kind = X_NODECISION, .stmt = s, .ctl = -1});
    else decide(r, ki, s, d, false);
}

static void fill(Replay *r, int ki);

static void enter_stmt(Replay *r, int ki, const ZStmt *s)
{
    const ZtModel *m = r->c->m;
    int L = r->life, nl = m->nl;
    Cur *k = &r->cur[ki];
    switch (s->kind) {
    case S_MSG: {
        int a = s->life.index, b = s->to.index;
        if (a == b) {
            if (L == a) q_push(k, (Exp){.kind = X_ACT, .stmt = s, .ctl = -1});
        } else if (L == a) {
            q_push(k, (Exp){.kind = X_SEND, .peer = b, .ns = k->ns, .stmt = s, .ctl = -1});
        } else if (L == b) {
            q_push(k, (Exp){.kind = X_RECV, .peer = a, .ns = k->ns, .stmt = s, .ctl = -1});
        }
        break;
    }
    case S_ASSIGN:
        if (s->life.index == L) q_push(k, (Exp){.kind = X_ACT, .stmt = s, .ctl = -1});
        break;
    case S_BLOCK:
        if (s->life.index == L)
            for (int i = 0; i < s->body.len; i++)
                q_push(k, (Exp){.kind = X_ACT, .stmt = ZU_VEC_AT(s->body, i), .ctl = -1});
        break;
    case S_IF:
    case S_WHILE: {
        if (!takes_part(s, L, nl)) break;
        bool owner = s->life.index == L;
        if (s->kind == S_WHILE) {
            fr_push(k, (Frame){.loop = s, .owner = owner});
        } else {
            next_decision(r, k, ki, s, owner);
        }
        break;
    }
    case S_PAR: {
        int nb = 0;
        for (int b = 0; b < s->branches.len; b++) {
            const ZBranch *br = ZU_VEC_AT(s->branches, b);
            if (list_takes_part(&br->body, L, nl)) nb++;
        }
        if (!nb) break;
        k->children = nb;
        for (int b = 0; b < s->branches.len; b++) {
            const ZBranch *br = ZU_VEC_AT(s->branches, b);
            if (!list_takes_part(&br->body, L, nl)) continue;
            const char *ns = zu_fmt(r->c->a, "%s/par%d.%d", r->cur[ki].ns, s->construct, b + 1);
            int ci = new_cursor(r, ns, ki);
            fr_push(&r->cur[ci], (Frame){.list = &br->body});
        }
        break;
    }
    case S_COREGION: {
        int g = ++r->group;
        for (int i = 0; i < s->body.len; i++) {
            const ZStmt *msg = ZU_VEC_AT(s->body, i);
            if (msg->kind != S_MSG) continue;
            if (msg->to.index == L)
                q_push(&r->cur[ki], (Exp){.kind = X_RECV, .peer = msg->life.index, .ns = r->cur[ki].ns,
                                          .stmt = msg, .ctl = -1, .group = g});
            else if (msg->life.index == L)
                q_push(&r->cur[ki], (Exp){.kind = X_SEND, .peer = msg->to.index, .ns = r->cur[ki].ns,
                                          .stmt = msg, .ctl = -1});
        }
        break;
    }
    default: break; /* skip, return */
    }
}

/* Advances cursor ki until it expects an event, waits for children, or ends. */
static void fill(Replay *r, int ki)
{
    for (;;) {
        Cur *k = &r->cur[ki];
        if (k->done || k->children > 0 || k->qhead < k->qlen) return;
        if (k->nfr == 0) {
            k->done = true;
            if (k->parent >= 0 && --r->cur[k->parent].children == 0) fill(r, k->parent);
            return;
        }
        Frame *f = &k->fr[k->nfr - 1];
        if (f->loop) {
            next_decision(r, k, ki, f->loop, f->owner);
            continue;
        }
        if (f->pos >= f->list->len) {
            k->nfr--;
            continue;
        }
        const ZStmt *s = ZU_VEC_AT(*f->list, f->pos);
        f->pos++;
        enter_stmt(r, ki, s);
    }
}

static const char *act_name(const ZStmt *s)
{
    if (s->kind == S_ASSIGN && s->is_action && s->expr && s->expr->kind == E_CALL && s->expr->decl &&
        s->expr->decl->kind == D_ACTION)
        return s->expr->decl->name;
    return NULL;
}

/* The variables an act writes, as names (arena vector). */
static int act_targets(const ZStmt *s, const char **names, int cap)
{
    int n = 0;
    if (s->kind == S_MSG) {
        for (int i = 0; i < s->params.len && n < cap; i++) {
            const ZExpr *p = ZU_VEC_AT(s->params, i);
            if (p->kind == E_NAME && p->name_kind == NAME_VAR) names[n++] = p->name;
        }
        return n;
    }
    int nt = s->targets.len;
    const ZDecl *act = s->is_action && s->expr && s->expr->kind == E_CALL ? s->expr->decl : NULL;
    if (act && act->kind == D_ACTION && nt > act->results.len) nt = act->results.len;
    if (!act && nt > 1) nt = 1;
    for (int i = 0; i < nt && n < cap; i++) {
        const ZTarget *t = ZU_VEC_AT(s->targets, i);
        if (t->var) names[n++] = t->var->name;
    }
    return n;
}

static bool writes_exactly(const Ev *e, const char **names, int n)
{
    int distinct = 0;
    for (int i = 0; i < n; i++) {
        bool dup = false;
        for (int j = 0; j < i; j++)
            if (!strcmp(names[i], names[j])) dup = true;
        if (dup) continue;
        distinct++;
        if (!json_object_get(e->writes, names[i])) return false;
    }
    return (int)json_object_size(e->writes) == distinct;
}

static const char *ctl_tag(Check *c, const ZStmt *s) { return c->m->tags[s->construct]; }

static bool matches(Check *c, const Exp *x, const Ev *e)
{
    switch (x->kind) {
    case X_SEND:
    case X_RECV: {
        if (e->kind != (x->kind == X_SEND ? K_SEND : K_RECV)) return false;
        if (e->peer != x->peer || strcmp(e->chan, x->ns)) return false;
        if (x->ctl < 0) return e->ctl == NULL;
        return e->ctl && !strcmp(e->ctl, ctl_tag(c, x->stmt));
    }
    case X_ACT: {
        if (e->kind != K_ACT) return false;
        const char *want = act_name(x->stmt);
        if ((want == NULL) != (e->action == NULL) || (want && strcmp(want, e->action))) return false;
        const char *names[64];
        int n = act_targets(x->stmt, names, 64);
        return writes_exactly(e, names, n);
    }
    case X_CHOICE: return e->kind == K_CHOICE && !strcmp(e->construct, ctl_tag(c, x->stmt));
    default: return false;
    }
}

static const char *exp_text(Check *c, const Exp *x)
{
    const ZtModel *m = c->m;
    switch (x->kind) {
    case X_SEND:
    case X_RECV:
        if (x->ctl >= 0)
            return zu_fmt(c->a, "%s %s %s on %s (control %s, decision %s)", x->kind == X_SEND ? "send" : "recv",
                          x->kind == X_SEND ? "to" : "from", m->lnames[x->peer], x->ns, ctl_tag(c, x->stmt),
                          x->ctl ? "true" : "false");
        return zu_fmt(c->a, "%s %s %s on %s (line %d)", x->kind == X_SEND ? "send" : "recv",
                      x->kind == X_SEND ? "to" : "from", m->lnames[x->peer], x->ns, x->stmt->span.first_line);
    case X_ACT: {
        const char *names[64];
        int n = act_targets(x->stmt, names, 64);
        ZBuf b = {0};
        for (int i = 0; i < n; i++) zu_buf_printf(&b, "%s%s", i ? ", " : "", names[i]);
        const char *an = act_name(x->stmt);
        const char *r = zu_fmt(c->a, "act %s writing {%s} (line %d)", an ? an : "null", b.data ? b.data : "",
                               x->stmt->span.first_line);
        zu_buf_free(&b);
        return r;
    }
    case X_CHOICE: return zu_fmt(c->a, "choice %s (line %d)", ctl_tag(c, x->stmt), x->stmt->span.first_line);
    default:
        return zu_fmt(c->a, "the decision of %s for %s, which its owner never recorded", m->lnames[x->stmt->life.index],
                      ctl_tag(c, x->stmt));
    }
}

static const char *ev_text(Check *c, const Ev *e)
{
    const ZtModel *m = c->m;
    switch (e->kind) {
    case K_SEND:
    case K_RECV:
        return zu_fmt(c->a, "%s %s %s on %s%s%s%s", kind_names[e->kind], e->kind == K_SEND ? "to" : "from",
                      m->lnames[e->peer], e->chan, e->ctl ? " (control " : "", e->ctl ? e->ctl : "",
                      e->ctl ? zu_fmt(c->a, ", decision %s)", jtext(c, json_array_get(e->values, 0))) : "");
    case K_ACT: {
        ZBuf b = {0};
        const char *key;
        json_t *val;
        int i = 0;
        json_object_foreach(e->writes, key, val) zu_buf_printf(&b, "%s%s", i++ ? ", " : "", key);
        const char *r = zu_fmt(c->a, "act %s writing {%s}", e->action ? e->action : "null", b.data ? b.data : "");
        zu_buf_free(&b);
        return r;
    }
    default: return zu_fmt(c->a, "choice %s = %s", e->construct, e->value ? "true" : "false");
    }
}

/* Compares a computed value with the recorded one. */
static void check_value(Check *c, const Ev *e, const Val *v, json_t *got, const char *what)
{
    if (v->k == V_UNKNOWN || v->k == V_UNDEF || v->k == V_ERROR) {
        c->st.unverified++;
        return;
    }
    json_t *want = to_json(v);
    if (!want) {
        c->st.unverified++;
        return;
    }
    bool eq = got && json_equal(want, got);
    const char *wt = jtext(c, want);
    json_decref(want);
    if (!eq) failf(c, e->line, "%s: %s is %s, expected %s", ev_where(c, e), what, jtext(c, got), wt);
    c->st.values++;
}

static void check_no_writes(Check *c, const Ev *e)
{
    if (json_object_size(e->writes))
        failf(c, e->line, "%s: a %s event writes %s, expected no writes", ev_where(c, e), kind_names[e->kind],
              jtext(c, e->writes));
}

/* Values of a matched event against the rebuilt store before it. */
static void check_event_values(Replay *r, const Exp *x, const Ev *e)
{
    Check *c = r->c;
    Env env = {.c = c, .life = r->life, .index = e->index - 1};
    const ZStmt *s = x->stmt;
    if (x->kind == X_SEND || x->kind == X_RECV) {
        if (x->ctl >= 0) {
            check_no_writes(c, e);
            Val d = vbool(x->ctl);
            if (json_array_size(e->values) != 1)
                failf(c, e->line, "%s: control message with %d values, expected one", ev_where(c, e),
                      (int)json_array_size(e->values));
            check_value(c, e, &d, json_array_get(e->values, 0),
                        zu_fmt(c->a, "the decision carried by control %s", e->ctl));
            return;
        }
        int n = x->kind == X_SEND ? s->args.len : s->params.len;
        if ((int)json_array_size(e->values) != n)
            failf(c, e->line, "%s: message of %d values, expected %d", ev_where(c, e), (int)json_array_size(e->values), n);
        if (x->kind == X_SEND) {
            check_no_writes(c, e);
            for (int i = 0; i < n; i++) {
                env.undef = false;
                Val v = eval(&env, ZU_VEC_AT(s->args, i));
                check_value(c, e, &v, json_array_get(e->values, (size_t)i), zu_fmt(c->a, "sent value %d", i + 1));
            }
        } else {
            const char *names[64];
            int nn = 0;
            for (int i = 0; i < n; i++) {
                const ZExpr *p = ZU_VEC_AT(s->params, i);
                json_t *got = json_array_get(e->values, (size_t)i);
                if (p->kind == E_NAME && p->name_kind == NAME_VAR) {
                    if (nn < 64) names[nn++] = p->name;
                    json_t *w = json_object_get(e->writes, p->name);
                    if (!w || !json_equal(w, got))
                        failf(c, e->line, "%s: writes %s = %s, but received %s", ev_where(c, e), p->name, jtext(c, w),
                              jtext(c, got));
                    c->st.values++;
                } else {
                    Val v = eval(&env, p);
                    check_value(c, e, &v, got, zu_fmt(c->a, "received value %d (a constant binding)", i + 1));
                }
            }
            if (!writes_exactly(e, names, nn))
                failf(c, e->line, "%s: writes %s, expected the bound variables only", ev_where(c, e), jtext(c, e->writes));
        }
        return;
    }
    if (x->kind == X_CHOICE) {
        check_no_writes(c, e);
        return; /* guard values: check_guards */
    }
    /* act */
    if (s->kind == S_MSG) {
        for (int i = 0; i < s->args.len && i < s->params.len; i++) {
            const ZExpr *p = ZU_VEC_AT(s->params, i);
            if (p->kind != E_NAME) continue;
            Val v = eval(&env, ZU_VEC_AT(s->args, i));
            check_value(c, e, &v, json_object_get(e->writes, p->name),
                        zu_fmt(c->a, "self message: the new value of %s", p->name));
        }
        return;
    }
    if (s->kind != S_ASSIGN || !s->expr || s->targets.len == 0) return;
    const ZExpr *rhs = s->expr;
    const ZDecl *act = s->is_action && rhs->kind == E_CALL ? rhs->decl : NULL;
    if (act && act->kind == D_ACTION && act->action != ACT_PURE) return; /* llm, human, extern: not recomputable */
    if (act && act->kind == D_ACTION && act->results.len != 1) {
        c->st.unverified++;
        return;
    }
    const ZTarget *t = ZU_VEC_AT(s->targets, 0);
    if (!t->var) return;
    Val v = eval(&env, rhs);
    if (v.k == V_INT && t->var->type && t->var->type->kind == TY_FLOAT) v = vfloat((double)v.i);
    check_value(c, e, &v, json_object_get(e->writes, t->var->name),
                zu_fmt(c->a, "the new value of %s", t->var->name));
}

static void replay_lifeline(Check *c, int L)
{
    Replay r = {.c = c, .life = L};
    r.inst = calloc((size_t)c->m->nconstructs + 2, sizeof(int));
    if (!r.inst) exit(1);
    int root = new_cursor(&r, "main", -1);
    fr_push(&r.cur[root], (Frame){.list = &c->m->wf->body});
    jmp_buf saved;
    memcpy(saved, c->fail_jb, sizeof saved);
    bool failed = false;
    if (setjmp(c->fail_jb) == 0) {
        fill(&r, root);
        for (int i = 0; i < c->nbyl[L]; i++) {
            Ev *e = &c->ev[c->byl[L][i]];
            int hit = -1, hq = -1;
            /* advance every cursor first: a branch without events ends at
             * once and may let its parent go on */
            for (int k = 0; k < r.ncur; k++) fill(&r, k);
            for (int k = 0; k < r.ncur && hit < 0; k++) {
                Cur *cu = &r.cur[k];
                if (cu->done || cu->children > 0 || cu->qhead >= cu->qlen) continue;
                int g = cu->q[cu->qhead].group;
                for (int j = cu->qhead; j < cu->qlen; j++) {
                    Exp *x = &cu->q[j];
                    if (j > cu->qhead && (!g || x->group != g)) break;
                    if (x->used) continue;
                    if (matches(c, x, e)) {
                        hit = k;
                        hq = j;
                        break;
                    }
                }
            }
            if (hit < 0) {
                ZBuf b = {0};
                int shown = 0;
                bool ctl_involved = e->ctl != NULL;
                for (int k = 0; k < r.ncur; k++) {
                    Cur *cu = &r.cur[k];
                    if (cu->done || cu->children > 0 || cu->qhead >= cu->qlen) continue;
                    int g = cu->q[cu->qhead].group;
                    for (int j = cu->qhead; j < cu->qlen; j++) {
                        Exp *x = &cu->q[j];
                        if (j > cu->qhead && (!g || x->group != g)) break;
                        if (x->used) continue;
                        if (x->ctl >= 0) ctl_involved = true;
                        zu_buf_printf(&b, "%s%s", shown++ ? " or " : "", exp_text(c, x));
                    }
                }
                const char *want = shown ? zu_fmt(c->a, "%s", b.data) : "no more events";
                zu_buf_free(&b);
                failf(c, e->line, "%s: %s: got %s, expected %s", ev_where(c, e),
                      ctl_involved ? "control messages differ from the projection of the global workflow"
                                   : "erasure: the events differ from the global workflow's",
                      ev_text(c, e), want);
            }
            Cur *cu = &r.cur[hit];
            Exp x = cu->q[hq];
            cu->q[hq].used = true;
            while (cu->qhead < cu->qlen && cu->q[cu->qhead].used) cu->qhead++;
            check_event_values(&r, &x, e);
            if (x.kind == X_CHOICE) {
                c->st.choices++;
                decide(&r, hit, x.stmt, e->value, true);
            }
            fill(&r, hit);
        }
        /* a finished run: every cursor is done */
        if (!c->ended_error) {
            for (int k = 0; k < r.ncur; k++) fill(&r, k);
            for (int k = 0; k < r.ncur; k++) {
                Cur *cu = &r.cur[k];
                if (cu->done || cu->children > 0) continue;
                if (cu->qhead < cu->qlen) {
                    int line = c->nbyl[L] ? c->ev[c->byl[L][c->nbyl[L] - 1]].line : c->start_line[L];
                    failf(c, line, "lifeline %s: %s: the trace ends after event %d, but the global workflow "
                          "expects %s next", c->m->lnames[L],
                          cu->q[cu->qhead].ctl >= 0 ? "control messages differ from the projection"
                                                    : "erasure: missing event",
                          c->nbyl[L], exp_text(c, &cu->q[cu->qhead]));
                }
            }
        }
    } else {
        failed = true;
    }
    memcpy(c->fail_jb, saved, sizeof saved);
    for (int k = 0; k < r.ncur; k++) {
        free(r.cur[k].fr);
        free(r.cur[k].q);
    }
    free(r.cur);
    free(r.inst);
    if (failed) longjmp(c->fail_jb, 1);
}

/* Replays every lifeline; of their disagreements, reports the one on the
 * earliest trace line. */
static bool replay_fails(Check *c, int l)
{
    jmp_buf saved;
    bool failed = false;
    memcpy(saved, c->fail_jb, sizeof saved);
    if (setjmp(c->fail_jb) == 0) replay_lifeline(c, l);
    else failed = true;
    memcpy(c->fail_jb, saved, sizeof saved);
    return failed;
}

static void replay_all(Check *c)
{
    char *best = NULL;
    int best_line = 0;
    for (int l = 0; l < c->m->nl; l++) {
        if (replay_fails(c, l) && (!best || c->fail_line < best_line)) {
            free(best);
            best = strdup(c->msg.data ? c->msg.data : "");
            best_line = c->fail_line;
        }
        c->msg.len = 0;
        if (c->msg.data) c->msg.data[0] = 0;
    }
    if (best) {
        zu_buf_puts(&c->msg, best);
        free(best);
        longjmp(c->fail_jb, 1);
    }
}

static void collect_decisions(Check *c)
{
    const ZtModel *m = c->m;
    int n = m->nconstructs + 2;
    c->dec = calloc((size_t)n, sizeof *c->dec);
    c->ndec = calloc((size_t)n, sizeof(int));
    c->capdec = calloc((size_t)n, sizeof(int));
    if (!c->dec || !c->ndec || !c->capdec) exit(1);
    for (long i = 0; i < c->nev; i++) {
        Ev *e = &c->ev[i];
        if (e->kind != K_CHOICE) continue;
        int cn = -1;
        for (int k = 1; k <= m->nconstructs; k++)
            if (m->tags[k] && !strcmp(m->tags[k], e->construct)) cn = k;
        if (cn < 0) failf(c, e->line, "%s: choice of an unknown construct \"%s\"", ev_where(c, e), e->construct);
        if (m->constructs[cn]->life.index != e->life)
            failf(c, e->line, "%s: choice of %s, which %s owns", ev_where(c, e), e->construct,
                  m->lnames[m->constructs[cn]->life.index]);
    }
    /* in each owner's order */
    for (int l = 0; l < m->nl; l++)
        for (int i = 0; i < c->nbyl[l]; i++) {
            Ev *e = &c->ev[c->byl[l][i]];
            if (e->kind != K_CHOICE) continue;
            for (int k = 1; k <= m->nconstructs; k++)
                if (m->tags[k] && !strcmp(m->tags[k], e->construct)) {
                    c->dec[k] = grow(c->dec[k], &c->capdec[k], c->ndec[k] + 1, sizeof(int));
                    c->dec[k][c->ndec[k]++] = e->value;
                }
        }
}

/* ===================================================================== */
/* Guards: Definition 3 on the rebuilt chart                              */
/* ===================================================================== */

static uint8_t and3(uint8_t a, uint8_t b) { return (a == 0 || b == 0) ? 0 : (a == 2 || b == 2) ? 2 : 1; }
static uint8_t or3(uint8_t a, uint8_t b) { return (a == 1 || b == 1) ? 1 : (a == 2 || b == 2) ? 2 : 0; }
static uint8_t not3(uint8_t a) { return a == 2 ? 2 : (uint8_t)!a; }

static uint8_t atom_at(Check *c, const ZExpr *atom, int l, int i)
{
    Env env = {.c = c, .life = l, .index = i};
    if (!terms_defined(&env, atom, 0)) return 0;
    env.undef = false;
    Val v = eval(&env, atom);
    if (env.undef) return 0;
    if (v.k != V_BOOL) return 2;
    return v.i ? 1 : 0;
}

static void eval_subs(Check *c)
{
    const ZGuardTable *t = c->m->guards;
    int ns = t->subs.len;
    if (!ns) return;
    if ((long)ns * c->nev > ZT_MAX_CELLS * 4L) failf(c, 0, "trace too large to check guards (%ld events)", c->nev);
    c->fval = calloc((size_t)ns, sizeof *c->fval);
    if (!c->fval) exit(1);
    for (int s = 0; s < ns; s++) {
        const ZFormula *f = ZU_VEC_AT(t->subs, s);
        uint8_t *v = calloc((size_t)(c->nev ? c->nev : 1), 1);
        if (!v) exit(1);
        c->fval[s] = v;
        for (int l = 0; l < c->m->nl; l++)
            for (int i = 1; i <= c->nbyl[l]; i++) {
                int id = c->byl[l][i - 1];
                int prev = i > 1 ? c->byl[l][i - 2] : -1;
                uint8_t r = 2;
                switch (f->kind) {
                case F_TRUE: r = 1; break;
                case F_ATOM: r = atom_at(c, f->atom, l, i); break;
                case F_NOT: r = not3(c->fval[f->a->id][id]); break;
                case F_AND: r = and3(c->fval[f->a->id][id], c->fval[f->b->id][id]); break;
                case F_OR: r = or3(c->fval[f->a->id][id], c->fval[f->b->id][id]); break;
                case F_PREV: r = prev < 0 ? 0 : c->fval[f->a->id][prev]; break;
                case F_SINCE: {
                    /* ψ now, or φ now and (φ since ψ) at the previous event */
                    uint8_t keep = prev < 0 ? 0 : and3(c->fval[f->a->id][id], v[prev]);
                    r = or3(c->fval[f->b->id][id], keep);
                    break;
                }
                case F_AT:
                    if (f->life == l) {
                        r = c->fval[f->a->id][id];
                    } else if (f->life < 0 || f->life >= c->m->nl) {
                        r = 2;
                    } else {
                        int64_t k = c->ev[id].cvc[f->life];
                        r = k <= 0 ? 0 : c->fval[f->a->id][c->byl[f->life][k - 1]];
                    }
                    break;
                }
                v[id] = r;
            }
    }
}

static void check_guards(Check *c)
{
    const ZtModel *m = c->m;
    bool any_cpl = false;
    for (int k = 1; k <= m->nconstructs; k++)
        if (m->ginfo[k] && m->ginfo[k]->cpl && m->ginfo[k]->root) any_cpl = true;
    if (any_cpl) eval_subs(c);
    for (int l = 0; l < m->nl; l++)
        for (int i = 1; i <= c->nbyl[l]; i++) {
            Ev *e = &c->ev[c->byl[l][i - 1]];
            if (e->kind != K_CHOICE) continue;
            int cn = -1;
            for (int k = 1; k <= m->nconstructs; k++)
                if (m->tags[k] && !strcmp(m->tags[k], e->construct)) cn = k;
            if (cn < 0) continue;
            const ZGuardInfo *g = m->ginfo[cn];
            const ZExpr *src = g ? g->source : m->constructs[cn]->expr;
            ZBuf gb = {0};
            za_print_expr(&gb, src);
            const char *gtext = zu_fmt(c->a, "%s", gb.data ? gb.data : "?");
            zu_buf_free(&gb);
            if (g && g->cpl && g->root && c->fval) {
                uint8_t v = c->fval[g->root->id][c->byl[l][i - 1]];
                if (v == 2) {
                    c->st.unverified++;
                    continue;
                }
                if (v != e->value)
                    failf(c, e->line, "%s: CPL guard of %s `%s` is %s by Definition 3 on the rebuilt chart, "
                          "but the recorded decision is %s", ev_where(c, e), e->construct, gtext,
                          v ? "true" : "false", e->value ? "true" : "false");
                c->st.cpl_checked++;
            } else {
                /* plain: the store before the choice */
                Env env = {.c = c, .life = l, .index = i - 1};
                Val v = eval(&env, src);
                if (v.k != V_BOOL) {
                    c->st.unverified++;
                    continue;
                }
                if ((v.i != 0) != (e->value != 0))
                    failf(c, e->line, "%s: guard of %s `%s` is %s on the store, but the recorded decision is %s",
                          ev_where(c, e), e->construct, gtext, v.i ? "true" : "false", e->value ? "true" : "false");
                c->st.plain_checked++;
            }
        }
}

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
            json_t *v = l >= 0 && l < m->nl && it->value->decl ? store_at(c, l, c->nbyl[l], it->value->decl->index) : NULL;
            want = v ? json_incref(v) : json_null();
        } else {
            want = json_array();
            for (int k = 0; k < n; k++) {
                const ZReturnItem *it = ZU_VEC_AT(ret->items, k);
                int l = it->at.index;
                json_t *v = l >= 0 && l < m->nl && it->value->decl ? store_at(c, l, c->nbyl[l], it->value->decl->index) : NULL;
                json_array_append_new(want, v ? json_incref(v) : json_null());
            }
        }
        json_t *got = c->end_results[0];
        bool eq = json_equal(want, got);
        /* floats print as 1.0; an integral float may read back as an integer */
        const char *wt = jtext(c, want);
        json_decref(want);
        if (!eq) failf(c, c->end_lines[0], "the result is %s, but the returned variables hold %s", jtext(c, got), wt);
        return;
    }
    /* per-lifeline traces put together: {"<component>": value} each */
    for (int k = 0; k < c->nends; k++) {
        json_t *o = c->end_results[k];
        if (!json_is_object(o)) failf(c, c->end_lines[k], "a per-lifeline end line must hold an object of result components");
        const char *key;
        json_t *val;
        json_object_foreach(o, key, val) {
            char *endp;
            long comp = strtol(key, &endp, 10);
            if (*endp || comp < 0 || comp >= (n ? n : 1))
                failf(c, c->end_lines[k], "unknown result component \"%s\"", key);
            if (!n) continue;
            const ZReturnItem *it = ZU_VEC_AT(ret->items, (int)comp);
            int l = it->at.index;
            json_t *v = l >= 0 && l < m->nl && it->value->decl ? store_at(c, l, c->nbyl[l], it->value->decl->index) : NULL;
            if (!v || !json_equal(v, val))
                failf(c, c->end_lines[k], "result component %ld is %s, but %s holds %s", comp, jtext(c, val),
                      l >= 0 && l < m->nl ? m->lnames[l] : "?", jtext(c, v));
        }
    }
}

/* ===================================================================== */
/* Driver                                                                 */
/* ===================================================================== */

int zt_check(const ZtModel *m, const char *trace_name, const char *text, size_t len, char **msg,
             ZtStats *st)
{
    Check *c = calloc(1, sizeof *c);
    if (!c) exit(1);
    c->m = m;
    c->a = zu_arena_new();
    c->name = trace_name;
    int nl = m->nl;
    c->byl = calloc((size_t)nl, sizeof *c->byl);
    c->nbyl = calloc((size_t)nl, sizeof(int));
    c->capbyl = calloc((size_t)nl, sizeof(int));
    c->start = calloc((size_t)nl, sizeof *c->start);
    c->start_line = calloc((size_t)nl, sizeof(int));
    if (!c->byl || !c->nbyl || !c->capbyl || !c->start || !c->start_line) exit(1);
    int rc = 0;
    if (setjmp(c->fail_jb) == 0) {
        read_trace(c, text, len);
        c->st.events = c->nev;
        check_messages(c);
        check_causal(c);
        build_stores(c);
        collect_decisions(c);
        replay_all(c);
        check_guards(c);
        check_result(c);
    } else {
        rc = 1;
    }
    if (msg) *msg = rc ? strdup(c->msg.data ? c->msg.data : "failed") : NULL;
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
    for (int k = 0; k < c->nchans; k++) {
        free(c->chans[k].key);
        free(c->chans[k].sends);
    }
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
    if (c->fval)
        for (int s = 0; s < m->guards->subs.len; s++) free(c->fval[s]);
    free(c->fval);
    zu_arena_free(c->a);
    free(c);
    return rc;
}

static const char usage_trace[] =
    "usage: zgc trace check [--workflow NAME] [-q] FILE.zg TRACE.jsonl...\n"
    "\n"
    "Checks run traces (written with --trace) against the workflow, with code\n"
    "of its own that shares nothing with the runtime. It rebuilds the message\n"
    "sequence chart from each trace and checks: every receive matches a send\n"
    "with equal values, FIFO per channel, an acyclic causal order, every vector\n"
    "clock against causal-order counts computed by reachability; erasure\n"
    "equivalence (each lifeline's events, control messages deleted, are the\n"
    "global workflow's for the recorded decisions; the control messages are\n"
    "where projection puts them); the values sent, received and computed;\n"
    "every guard at its choice event (CPL guards by Definition 3 on the chart)\n"
    "against the recorded decision; and the result. Per-lifeline traces\n"
    "(FILE.<Lifeline>) may be given concatenated into one file.\n"
    "\n"
    "  --workflow NAME   the workflow (default: the only or the last one)\n"
    "  -q, --quiet       print nothing for traces that pass\n"
    "  -h, --help        show this help\n"
    "\n"
    "The first disagreement is reported as TRACE:LINE: lifeline L event i: ...\n"
    "with both values.\n"
    "\n"
    "exit status: 0 every trace passes, 1 a disagreement (or errors in FILE.zg),\n"
    "2 bad usage.\n";

int zt_main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fputs(usage_trace, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "check")) {
        fprintf(stderr, "zgc: unknown trace command `%s`\n%s", argv[1], usage_trace);
        return 2;
    }
    const char *workflow = NULL, *file = NULL;
    bool quiet = false;
    const char **traces = calloc((size_t)argc + 1, sizeof *traces);
    if (!traces) return 1;
    int ntraces = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage_trace, stdout);
            free(traces);
            return 0;
        } else if (!strcmp(a, "--workflow")) {
            if (++i >= argc) {
                fprintf(stderr, "zgc: --workflow needs a workflow name\n%s", usage_trace);
                free(traces);
                return 2;
            }
            workflow = argv[i];
        } else if (!strncmp(a, "--workflow=", 11)) {
            workflow = a + 11;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = true;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "zgc: unknown option `%s`\n%s", a, usage_trace);
            free(traces);
            return 2;
        } else if (!file) {
            file = a;
        } else {
            traces[ntraces++] = a;
        }
    }
    if (!file || !ntraces) {
        fprintf(stderr, "zgc: %s\n%s", !file ? "no workflow file" : "no trace file", usage_trace);
        free(traces);
        return 2;
    }
    ZtModel *m = zt_model_load(file, workflow, stderr);
    if (!m) {
        free(traces);
        return 1;
    }
    int status = 0;
    for (int t = 0; t < ntraces; t++) {
        const char *err;
        size_t len;
        char *text = zu_read_file(traces[t], &len, &err);
        if (!text) {
            fprintf(stderr, "zgc: cannot read %s: %s\n", traces[t], err);
            status = 1;
            continue;
        }
        char *msg = NULL;
        ZtStats st;
        if (zt_check(m, traces[t], text, len, &msg, &st) != 0) {
            fprintf(stderr, "zgc: trace check failed: %s\n", msg);
            status = 1;
        } else if (!quiet) {
            printf("%s: ok: %ld events, %ld messages, %ld choices, %ld CPL and %ld plain guards checked, "
                   "%ld values recomputed, %ld unverified\n",
                   traces[t], st.events, st.messages, st.choices, st.cpl_checked, st.plain_checked, st.values,
                   st.unverified);
        }
        free(msg);
        free(text);
    }
    zt_model_free(m);
    free(traces);
    return status;
}
