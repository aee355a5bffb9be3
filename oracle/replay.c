/* replay.c — erasure equivalence: each lifeline's events are exactly
 * those the *global* workflow (not its projection) produces for the
 * owners' recorded decisions, parallel branches in any interleaving and
 * coregion receives in any order, the control messages being where
 * projection puts them; along the way every sent value, received
 * binding, self message, local computation and pure action result is
 * recomputed (eval.c) on the stores before the event.
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
 * A store operation (an atomic block) is one expectation that stays at
 * the head of its cursor until its commit: its attempt's reads and acts
 * in the items' order, then a commit or an abort, after which the next
 * attempt begins; each read is chained to the attempt's read before it
 * and its end to the last one (Ev.op_prev), for stores.c.  When the
 * operations of several branches of a lifeline interleave, an event's
 * "op" (the operation's position, the same for all its attempts) says
 * which one it belongs to: the first event that names an operation binds
 * it, and it then takes only events with that name.  The name only
 * chooses among the interleavings; every check still applies to the one
 * chosen, so a wrong name can only make a trace fail.  Without "op"
 * (it is optional) an attempt's end goes to the operation it fits. */
#include "zt.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <ctype.h>
#include <inttypes.h>
#include <string.h>

enum { X_SEND, X_RECV, X_ACT, X_CHOICE, X_NODECISION, X_OP };

typedef struct Exp {
    int kind;
    int peer;
    const char *ns;
    const ZStmt *stmt; /* message, assignment, if/while */
    int msg_index;     /* coregion: which message */
    int ctl;           /* control message: the decision (0/1); -1 user */
    int group;         /* coregion receives: matched in any order */
    /* X_OP, a store operation (stmt: its S_ATOMIC), which stays at the
     * head of its queue until its commit: the attempt under way, the
     * position of its next item, the event id of the attempt's last read
     * (-1: none yet), and its "op" once an event named it */
    int attempt, pos, last_read;
    const char *op_id;
    const ZStmt *op; /* X_ACT: the atomic block the act is an item of */
    bool used;
} Exp;

typedef struct Frame {
    const ZVec *list;
    int pos;
    const ZStmt *loop; /* a while's head: its choice (owner) or decision (recipient) */
    bool owner;
} Frame;

typedef struct Cur {
    const char *ns;
    Frame *fr;
    int nfr, capfr;
    Exp *q;
    int qlen, qcap, qhead;
    int parent;   /* index of the parent cursor, -1 for the root */
    int children; /* children still running */
    int last;     /* the index of the last event matched on it (after a
                     region: the last of its branches'; a branch starts at
                     its parent's) */
    bool done;
} Cur;

typedef struct Replay {
    Check *c;
    int life;
    Cur *cur;
    int ncur, capcur;
    int *inst; /* per construct: instances met by this lifeline (recipient side) */
    int group;
    const char **ops; /* the operations' "op" names met so far */
    int nops, capops;
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
    case S_ATOMIC:
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
    k->q = zt_grow(k->q, &k->qcap, k->qlen + 1, sizeof *k->q);
    k->q[k->qlen++] = x;
}

static void fr_push(Cur *k, Frame f)
{
    k->fr = zt_grow(k->fr, &k->capfr, k->nfr + 1, sizeof *k->fr);
    k->fr[k->nfr++] = f;
}

static int new_cursor(Replay *r, const char *ns, int parent)
{
    int last = parent >= 0 ? r->cur[parent].last : 0;
    r->cur = zt_grow(r->cur, &r->capcur, r->ncur + 1, sizeof *r->cur);
    Cur *k = &r->cur[r->ncur];
    memset(k, 0, sizeof *k);
    k->ns = ns;
    k->parent = parent;
    k->last = last;
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
            if (set[b])
                q_push(k, (Exp){.kind = X_SEND, .peer = b, .ns = k->ns, .stmt = s, .ctl = v});
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
    if (d < 0)
        q_push(k, (Exp){.kind = X_NODECISION, .stmt = s, .ctl = -1});
    else
        decide(r, ki, s, d, false);
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
    case S_ATOMIC:
        if (s->life.index == L)
            q_push(k, (Exp){.kind = X_OP, .stmt = s, .ctl = -1, .attempt = 1, .last_read = -1});
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
            const char *ns = zu_fmt(r->c->a, ZV_BRANCH_FMT, r->cur[ki].ns, s->construct, b + 1);
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
                q_push(&r->cur[ki], (Exp){.kind = X_RECV,
                                          .peer = msg->life.index,
                                          .ns = r->cur[ki].ns,
                                          .stmt = msg,
                                          .ctl = -1,
                                          .group = g});
            else if (msg->life.index == L)
                q_push(&r->cur[ki], (Exp){.kind = X_SEND,
                                          .peer = msg->to.index,
                                          .ns = r->cur[ki].ns,
                                          .stmt = msg,
                                          .ctl = -1});
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
            if (k->parent >= 0) {
                Cur *p = &r->cur[k->parent];
                if (k->last > p->last) p->last = k->last; /* the join */
                if (--p->children == 0) fill(r, k->parent);
            }
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
    if (s->kind == S_ASSIGN && s->is_action && s->expr && s->expr->kind == E_CALL &&
        s->expr->decl && s->expr->decl->kind == D_ACTION)
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

/* The position of the next item of atomic block s at or after pos that
 * has an event of its own (a read: a read event; a local statement: an
 * act), or the number of its items (the attempt's commit or abort is
 * next).  Writes have none: they are the commit's. */
static int op_next(const ZStmt *s, int pos)
{
    while (pos < s->body.len) {
        const ZStmt *it = ZU_VEC_AT(s->body, pos);
        if (it->kind == S_READ || it->kind == S_ASSIGN) break;
        pos++;
    }
    return pos;
}

static bool matches(Check *c, const Exp *x, const Ev *e);

/* An event of an operation's attempt: its next read, act, or its end. */
static bool op_matches(Check *c, const Exp *x, const Ev *e)
{
    const ZStmt *s = x->stmt;
    /* an operation named by its events takes only events that name it */
    if (x->op_id && e->op_id && strcmp(x->op_id, e->op_id)) return false;
    int p = op_next(s, x->pos);
    if (p == s->body.len)
        return (e->kind == K_ST_COMMIT || e->kind == K_ST_ABORT) &&
               !strcmp(e->store, s->store_name);
    const ZStmt *it = ZU_VEC_AT(s->body, p);
    if (it->kind == S_READ) {
        /* the variable bound tells apart the operations of parallel
         * branches that read one cell */
        const ZTarget *t = ZU_VEC_AT(it->targets, 0);
        return e->kind == K_ST_READ && !strcmp(e->store, s->store_name) &&
               !strcmp(e->cell, it->cell) && t->var && json_object_get(e->writes, t->var->name);
    }
    Exp a = {.kind = X_ACT, .stmt = it, .ctl = -1};
    return matches(c, &a, e);
}

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
        if ((want == NULL) != (e->action == NULL) || (want && strcmp(want, e->action)))
            return false;
        const char *names[64];
        int n = act_targets(x->stmt, names, 64);
        return writes_exactly(e, names, n);
    }
    case X_CHOICE: return e->kind == K_CHOICE && !strcmp(e->construct, ctl_tag(c, x->stmt));
    case X_OP: return op_matches(c, x, e);
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
            return zu_fmt(c->a, "%s %s %s on %s (control %s, decision %s)",
                          zt_kind_names[x->kind == X_SEND ? K_SEND : K_RECV],
                          x->kind == X_SEND ? "to" : "from", m->lnames[x->peer], x->ns,
                          ctl_tag(c, x->stmt), x->ctl ? "true" : "false");
        return zu_fmt(
            c->a, "%s %s %s on %s (line %d)", zt_kind_names[x->kind == X_SEND ? K_SEND : K_RECV],
            x->kind == X_SEND ? "to" : "from", m->lnames[x->peer], x->ns, x->stmt->span.first_line);
    case X_ACT: {
        const char *names[64];
        int n = act_targets(x->stmt, names, 64);
        ZBuf b = {0};
        for (int i = 0; i < n; i++) zu_buf_printf(&b, "%s%s", i ? ", " : "", names[i]);
        const char *an = act_name(x->stmt);
        const char *r = zu_fmt(c->a, "act %s writing {%s} (line %d)", an ? an : "null",
                               b.data ? b.data : "", x->stmt->span.first_line);
        zu_buf_free(&b);
        return r;
    }
    case X_CHOICE:
        return zu_fmt(c->a, "choice %s (line %d)", ctl_tag(c, x->stmt), x->stmt->span.first_line);
    case X_OP: {
        const ZStmt *s = x->stmt;
        int p = op_next(s, x->pos);
        if (p == s->body.len)
            return zu_fmt(c->a,
                          "the commit or abort of attempt %d of the operation on store %s "
                          "(line %d)",
                          x->attempt, s->store_name, s->span.first_line);
        const ZStmt *it = ZU_VEC_AT(s->body, p);
        if (it->kind == S_READ)
            return zu_fmt(c->a, "read of %s.%s (attempt %d, line %d)", s->store_name, it->cell,
                          x->attempt, it->span.first_line);
        Exp a = {.kind = X_ACT, .stmt = it, .ctl = -1};
        return zu_fmt(c->a, "%s in attempt %d of the operation on store %s", exp_text(c, &a),
                      x->attempt, s->store_name);
    }
    default:
        return zu_fmt(c->a, "the decision of %s for %s, which its owner never recorded",
                      m->lnames[x->stmt->life.index], ctl_tag(c, x->stmt));
    }
}

static const char *ev_text(Check *c, const Ev *e)
{
    const ZtModel *m = c->m;
    switch (e->kind) {
    case K_SEND:
    case K_RECV:
        return zu_fmt(
            c->a, "%s %s %s on %s%s%s%s", zt_kind_names[e->kind], e->kind == K_SEND ? "to" : "from",
            m->lnames[e->peer], e->chan, e->ctl ? " (control " : "", e->ctl ? e->ctl : "",
            e->ctl ? zu_fmt(c->a, ", decision %s)", zt_jtext(c, json_array_get(e->values, 0)))
                   : "");
    case K_ACT: {
        ZBuf b = {0};
        const char *key;
        json_t *val;
        int i = 0;
        json_object_foreach(e->writes, key, val) zu_buf_printf(&b, "%s%s", i++ ? ", " : "", key);
        const char *r = zu_fmt(c->a, "act %s writing {%s}", e->action ? e->action : "null",
                               b.data ? b.data : "");
        zu_buf_free(&b);
        return r;
    }
    case K_ST_READ:
        return zu_fmt(c->a, "read of %s.%s (attempt %" PRId64 ")", e->store, e->cell,
                      e->op_attempt);
    case K_ST_COMMIT:
    case K_ST_ABORT:
        return zu_fmt(c->a, "%s of store %s (attempt %" PRId64 ")", zt_kind_names[e->kind],
                      e->store, e->op_attempt);
    default: return zu_fmt(c->a, "choice %s = %s", e->construct, e->value ? "true" : "false");
    }
}

/* Compares a computed value with the recorded one.  A run-time error or
 * an undefined variable where the run went on is a disagreement (the run
 * would have stopped there; the checker's definedness rule, §4.3, lets
 * no statement read an undefined variable); what eval.c cannot compute
 * is left unverified, its type having been checked. */
static void check_value(Check *c, const Ev *e, const Val *v, json_t *got, const char *fmt, ...)
    ZG_PRINTF(5, 6);
static void check_value(Check *c, const Ev *e, const Val *v, json_t *got, const char *fmt, ...)
{
    json_t *want = v->k == V_UNKNOWN || v->k == V_UNDEF || v->k == V_ERROR ? NULL : zt_to_json(v);
    if (want && got && json_equal(want, got)) {
        json_decref(want);
        c->st.values++;
        return;
    }
    if (v->k == V_UNKNOWN) {
        c->st.unverified++;
        return;
    }
    /* a disagreement: only now the words */
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (v->k == V_ERROR)
        zt_fail(c, e->line,
                "%s: computing %s fails (%s): the run would have stopped with this error before "
                "the event",
                zt_ev_where(c, e), what, v->s ? v->s : "a run-time error");
    if (v->k == V_UNDEF)
        zt_fail(c, e->line,
                "%s: %s reads a variable that has no value here, which no run does (every "
                "variable a statement reads is defined on every path)",
                zt_ev_where(c, e), what);
    if (!want) ZU_ICE("a computed value without JSON");
    const char *wt = zt_jtext(c, want);
    json_decref(want);
    zt_fail(c, e->line, "%s: %s is %s, expected %s", zt_ev_where(c, e), what, zt_jtext(c, got), wt);
}

/* The human kinds' names (vocab/vocab.h), by HK_. */
#define HK_ENUM(id, name) HK_##id,
enum { ZV_HUMAN_KINDS(HK_ENUM) HK__COUNT };
#undef HK_ENUM
#define HK_NAME(id, name) name,
static const char *const human_kinds[] = {ZV_HUMAN_KINDS(HK_NAME)};
#undef HK_NAME

/* A human action of kind `ack`. */
static bool is_ack(const ZDecl *act)
{
    if (act->action != ACT_HUMAN) return false;
    const ZProp *k = za_prop(act, PROP_KIND);
    return k && k->value && k->value->kind == E_NAME && k->value->name &&
           !strcmp(k->value->name, human_kinds[HK_ACK]);
}

static void check_no_writes(Check *c, const Ev *e)
{
    if (json_object_size(e->writes))
        zt_fail(c, e->line, "%s: a %s event writes %s, expected no writes", zt_ev_where(c, e),
                zt_kind_names[e->kind], zt_jtext(c, e->writes));
}

static void buf_add(ZBuf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) zu_buf_putc(b, s[i]);
}

/* A prompt template filled as the runtime fills it (docs/language.md,
 * placeholders): `{name}` naming an input of the action becomes the
 * argument's text (str() of it; nothing for an undefined one), every
 * other brace is literal.  NULL when an argument cannot be computed. */
static const char *fill_template(Env *env, const ZDecl *act, const ZExpr *call, const char *t,
                                 size_t n)
{
    Check *c = env->c;
    ZBuf b = {0};
    zu_buf_putc(&b, 0);
    b.len = 0;
    size_t i = 0;
    while (i < n) {
        if (t[i] != '{') {
            size_t j = i;
            while (j < n && t[j] != '{') j++;
            buf_add(&b, t + i, j - i);
            i = j;
            continue;
        }
        size_t j = i + 1;
        int param = -1;
        if (j < n && (isalpha((unsigned char)t[j]) || t[j] == '_')) {
            while (j < n && (isalnum((unsigned char)t[j]) || t[j] == '_')) j++;
            if (j < n && t[j] == '}')
                for (int k = 0; k < act->params.len && param < 0; k++) {
                    const ZParam *p = ZU_VEC_AT(act->params, k);
                    if (strlen(p->name) == j - i - 1 && !memcmp(p->name, t + i + 1, j - i - 1))
                        param = k;
                }
        }
        if (param < 0) {
            buf_add(&b, "{", 1);
            i++;
            continue;
        }
        env->undef = false;
        Val v = param < call->args.len ? zt_eval(env, ZU_VEC_AT(call->args, param)) : vmk(V_UNDEF);
        if (v.k != V_UNDEF) {
            Val sv = zt_str(c->a, &v);
            if (sv.k != V_STR) {
                zu_buf_free(&b);
                return NULL;
            }
            buf_add(&b, sv.s, sv.n);
        }
        i = j + 1;
    }
    const char *r = zu_strndup(c->a, b.data, b.len);
    zu_buf_free(&b);
    return r;
}

/* One recorded text of an action: absent when want is NULL (the action
 * has no such template), else equal to it. */
static void check_text(Check *c, const Ev *e, const char *what, json_t *got, const char *want)
{
    if (!want) {
        if (got)
            zt_fail(c, e->line, "%s: the act records %s, but its action has none",
                    zt_ev_where(c, e), what);
        return;
    }
    if (!got)
        zt_fail(c, e->line, "%s: the act lacks %s (the runtime records it)", zt_ev_where(c, e),
                what);
    if (strcmp(json_string_value(got), want) != 0) {
        json_t *w = json_string(want);
        const char *wt = zt_jtext(c, w); /* copied into the check's arena */
        json_decref(w);
        zt_fail(c, e->line, "%s: %s is %s, expected %s", zt_ev_where(c, e), what, zt_jtext(c, got),
                wt);
    }
    c->st.values++;
}

/* The template of a property of an action (a string literal or a
 * constant), or NULL when the action has none. */
static const char *prop_text(Env *env, const ZDecl *act, ZPropKey k, size_t *n)
{
    const ZProp *p = za_prop(act, k);
    if (!p || !p->value) return NULL;
    Val v = zt_eval(env, p->value);
    if (v.k != V_STR) return NULL;
    *n = v.n;
    return v.s;
}

/* A planner's nested run: its trace checked, by this checker, against
 * the program it recorded (the program the planner compiled), and its
 * result equal to what the act wrote (one result; several are not
 * compared, and counted unverified). */
static void check_subrun(Check *c, const Ev *e, const ZDecl *act)
{
    const char *src = json_string_value(json_object_get(e->subrun, "source"));
    json_t *lines = json_object_get(e->subrun, "trace");
    char *dtext = NULL;
    size_t dlen = 0;
    FILE *diag = open_memstream(&dtext, &dlen);
    if (!diag) zt_fail(c, e->line, "out of memory");
    ZtModel *m = zt_model_new("plan.zg", src, strlen(src), NULL, diag);
    fclose(diag);
    if (!m) {
        const char *why = zu_fmt(c->a, "%s", dtext ? dtext : "");
        free(dtext);
        zt_fail(c, e->line, "%s: the program of planner `%s`'s nested run does not compile: %s",
                zt_ev_where(c, e), act->name, why);
    }
    free(dtext);
    ZBuf t = {0};
    json_t *end = NULL;
    for (size_t i = 0; i < json_array_size(lines); i++) {
        json_t *l = json_array_get(lines, i);
        char *s = json_dumps(l, JSON_COMPACT);
        if (!s) continue;
        zu_buf_puts(&t, s);
        zu_buf_putc(&t, '\n');
        free(s);
        if (json_is_object(l) && json_is_string(json_object_get(l, "kind")) &&
            !strcmp(json_string_value(json_object_get(l, "kind")), "end"))
            end = l;
    }
    char *msg = NULL;
    ZtStats st = {0};
    int bad = c->nested(m, "subrun", t.data ? t.data : "", t.len, &msg, &st);
    zu_buf_free(&t);
    zt_model_free(m);
    if (bad) {
        const char *why = zu_fmt(c->a, "%s", msg ? msg : "");
        free(msg);
        zt_fail(c, e->line, "%s: the nested run of planner `%s`: %s", zt_ev_where(c, e), act->name,
                why);
    }
    free(msg);
    c->st.events += st.events;
    c->st.messages += st.messages;
    c->st.values += st.values;
    c->st.unverified += st.unverified;
    json_t *res = end ? json_object_get(end, "result") : NULL;
    if (act->results.len == 1 && res && json_object_size(e->writes) == 1) {
        const char *k;
        json_t *v;
        json_object_foreach(e->writes, k, v)
        {
            if (!json_equal(v, res))
                zt_fail(c, e->line, "%s: planner `%s` wrote %s, but its nested run returned %s",
                        zt_ev_where(c, e), act->name, zt_jtext(c, v), zt_jtext(c, res));
        }
    } else if (res) {
        c->st.unverified++;
    }
}

/* What an act records beside its writes (trace.c, the optional fields):
 * an llm action its filled prompts, a human action its filled question,
 * each equal to the template filled with the call's arguments when it is
 * there (a trace without them, such as one written by hand, is read as
 * one that leaves them out); the answer of either (the model's text, the
 * person's line or the scripted entry) is theirs and not recomputed.
 * Nothing else records any of them. */
static void check_recorded(Check *c, Env *env, const Ev *e, const ZDecl *act, const ZExpr *call)
{
    bool llm = act && act->kind == D_ACTION && act->action == ACT_LLM;
    bool human = act && act->kind == D_ACTION && act->action == ACT_HUMAN;
    /* a planner records its last request and answer (the workflow it
     * ran), made from the program's text at run time: not recomputed */
    bool planner = act && act->kind == D_ACTION && act->action == ACT_PLANNER;
    if (e->has_answer && !llm && !human && !planner)
        zt_fail(c, e->line,
                "%s: an answer recorded on an act that is not an llm, human or planner action",
                zt_ev_where(c, e));
    if (planner && e->prompt) c->st.unverified++;
    if (e->subrun && !planner)
        zt_fail(c, e->line, "%s: a nested run recorded on an act that is not a planner",
                zt_ev_where(c, e));
    if (e->subrun) check_subrun(c, e, act);
    if (!llm && !planner && e->prompt)
        zt_fail(c, e->line, "%s: a prompt recorded on an act that is not an llm action",
                zt_ev_where(c, e));
    if (!human && e->question)
        zt_fail(c, e->line, "%s: a question recorded on an act that is not a human action",
                zt_ev_where(c, e));
    if (llm && e->prompt) {
        static const ZPropKey keys[] = {PROP_SYSTEM, PROP_USER};
        static const char *const names[] = {"system", "user"};
        for (int i = 0; i < 2; i++) {
            size_t n = 0;
            const char *t = prop_text(env, act, keys[i], &n);
            const char *want = t ? fill_template(env, act, call, t, n) : NULL;
            if (t && !want) {
                c->st.unverified++;
                continue;
            }
            check_text(c, e, zu_fmt(c->a, "the %s prompt", names[i]),
                       json_object_get(e->prompt, names[i]), want);
        }
    }
    if (human && e->question) {
        size_t n = 0;
        const char *t = prop_text(env, act, PROP_PROMPT, &n);
        const char *want = fill_template(env, act, call, t ? t : "", t ? n : 0);
        if (!want) {
            c->st.unverified++;
            return;
        }
        check_text(c, e, "the question", e->question, want);
    }
}

static void check_op_event(Replay *r, const Exp *x, const Ev *e);

/* Values of a matched event against the rebuilt store before it. */
static void check_event_values(Replay *r, const Exp *x, const Ev *e)
{
    Check *c = r->c;
    Env env = {.c = c, .life = r->life, .index = e->index - 1};
    const ZStmt *s = x->stmt;
    if (x->kind == X_OP) {
        check_op_event(r, x, e);
        return;
    }
    if (e->store && !x->op)
        zt_fail(c, e->line,
                "%s: an act names store %s, but it is not an item of an atomic block on it",
                zt_ev_where(c, e), e->store);
    /* "coregion" (optional, like the act's recorded texts): only a
     * coregion's receive carries it */
    if (x->kind == X_RECV && e->coregion && x->group == 0)
        zt_fail(c, e->line, "%s: \"coregion\" on a receive that is not one of a coregion",
                zt_ev_where(c, e));
    if (x->kind == X_SEND || x->kind == X_RECV) {
        if (x->ctl >= 0) {
            check_no_writes(c, e);
            Val d = vbool(x->ctl);
            if (json_array_size(e->values) != 1)
                zt_fail(c, e->line, "%s: control message with %d values, expected one",
                        zt_ev_where(c, e), (int)json_array_size(e->values));
            check_value(c, e, &d, json_array_get(e->values, 0),
                        "the decision carried by control %s", e->ctl);
            return;
        }
        int n = x->kind == X_SEND ? s->args.len : s->params.len;
        if ((int)json_array_size(e->values) != n)
            zt_fail(c, e->line, "%s: message of %d values, expected %d", zt_ev_where(c, e),
                    (int)json_array_size(e->values), n);
        if (x->kind == X_SEND) {
            check_no_writes(c, e);
            for (int i = 0; i < n; i++) {
                const ZExpr *arg = ZU_VEC_AT(s->args, i);
                json_t *got = json_array_get(e->values, (size_t)i);
                zt_want_type(c, e->line, got, arg->type, "lifeline %s event %d: sent value %d",
                             c->m->lnames[e->life], e->index, i + 1);
                env.undef = false;
                Val v = zt_eval(&env, arg);
                check_value(c, e, &v, got, "sent value %d", i + 1);
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
                        zt_fail(c, e->line, "%s: writes %s = %s, but received %s",
                                zt_ev_where(c, e), p->name, zt_jtext(c, w), zt_jtext(c, got));
                    c->st.values++;
                } else {
                    zt_want_type(c, e->line, got, p->type,
                                 "lifeline %s event %d: received value %d (a constant binding)",
                                 c->m->lnames[e->life], e->index, i + 1);
                    Val v = zt_eval(&env, p);
                    check_value(c, e, &v, got, "received value %d (a constant binding)", i + 1);
                }
            }
            if (!writes_exactly(e, names, nn))
                zt_fail(c, e->line, "%s: writes %s, expected the bound variables only",
                        zt_ev_where(c, e), zt_jtext(c, e->writes));
        }
        return;
    }
    if (x->kind == X_CHOICE) {
        check_no_writes(c, e);
        return; /* guard values: check_guards */
    }
    /* act */
    {
        const ZExpr *call =
            s->kind == S_ASSIGN && s->expr && s->is_action && s->expr->kind == E_CALL ? s->expr
                                                                                      : NULL;
        check_recorded(c, &env, e, call ? call->decl : NULL, call);
    }
    if (s->kind == S_MSG) {
        for (int i = 0; i < s->args.len && i < s->params.len; i++) {
            const ZExpr *p = ZU_VEC_AT(s->params, i);
            if (p->kind != E_NAME) continue;
            Val v = zt_eval(&env, ZU_VEC_AT(s->args, i));
            check_value(c, e, &v, json_object_get(e->writes, p->name),
                        "self message: the new value of %s", p->name);
        }
        return;
    }
    if (s->kind != S_ASSIGN || !s->expr || s->targets.len == 0) return;
    const ZExpr *rhs = s->expr;
    const ZDecl *act = s->is_action && rhs->kind == E_CALL ? rhs->decl : NULL;
    if (act && act->kind == D_ACTION && act->action != ACT_PURE) {
        if (is_ack(act) && act->results.len == 1) {
            /* an acknowledgement with a bool output is always true */
            const ZTarget *t = ZU_VEC_AT(s->targets, 0);
            Val yes = vbool(true);
            if (t->var)
                check_value(c, e, &yes, json_object_get(e->writes, t->var->name),
                            "the acknowledgement %s", t->var->name);
            return;
        }
        /* llm, human, extern pure, effect: their results are the model's,
         * the person's or C code's; their types were checked (types.c) */
        c->st.unverified += (long)json_object_size(e->writes);
        return;
    }
    int n = act && act->kind == D_ACTION ? act->results.len : 1;
    Val *vals = zu_alloc(c->a, sizeof *vals * (size_t)(n ? n : 1));
    if (act && act->kind == D_ACTION) {
        if (!zt_eval_results(&env, rhs, vals, n))
            ZU_ICE("pure action %s is not one the oracle evaluates", act->name);
    } else {
        vals[0] = zt_eval(&env, rhs);
    }
    for (int i = 0; i < s->targets.len && i < n; i++) {
        const ZTarget *t = ZU_VEC_AT(s->targets, i);
        if (!t->var) continue;
        check_value(c, e, &vals[i], json_object_get(e->writes, t->var->name), "the new value of %s",
                    t->var->name);
    }
}

/* An event of a store operation (x: its state before the event): the
 * attempt's number; a read's value (of the cell's type) and the variable
 * it binds; an item's act as elsewhere, "store" naming the block's store
 * on a tool call only; a commit's cells exactly the block's writes, each
 * the value of its expression on the store before the commit, and its
 * registry exactly the tools of a `write tools`, there only then. */
static void check_op_event(Replay *r, const Exp *x, const Ev *e)
{
    Check *c = r->c;
    const ZStmt *s = x->stmt;
    const char *st = s->store_name;
    if (e->kind != K_ACT && e->op_attempt != x->attempt)
        zt_fail(c, e->line,
                "%s: %s, expected attempt %d of the operation on store %s (line %d): an "
                "operation's attempts are numbered 1, 2, ..., the next beginning after an abort",
                zt_ev_where(c, e), ev_text(c, e), x->attempt, st, s->span.first_line);
    int p = op_next(s, x->pos);
    const ZStmt *it = p < s->body.len ? ZU_VEC_AT(s->body, p) : NULL;
    if (e->kind == K_ST_READ) {
        const ZTarget *t = ZU_VEC_AT(it->targets, 0);
        zt_want_type(c, e->line, e->rvalue, it->cell_decl->type,
                     "lifeline %s event %d: the value read from %s.%s", c->m->lnames[e->life],
                     e->index, st, it->cell);
        json_t *w = t->var ? json_object_get(e->writes, t->var->name) : NULL;
        if (!w || !json_equal(w, e->rvalue) || json_object_size(e->writes) != 1)
            zt_fail(c, e->line, "%s: writes %s, but reads %s.%s = %s into %s", zt_ev_where(c, e),
                    zt_jtext(c, e->writes), st, it->cell, zt_jtext(c, e->rvalue),
                    t->var ? t->var->name : "(none)");
        c->st.values++;
        return;
    }
    if (e->kind == K_ACT) {
        const char *an = act_name(it);
        const ZDecl *act = an ? it->expr->decl : NULL;
        if (e->store && strcmp(e->store, st))
            zt_fail(c, e->line,
                    "%s: the act names store %s, but it is an item of an atomic "
                    "block on store %s (line %d)",
                    zt_ev_where(c, e), e->store, st, s->span.first_line);
        if (e->store && (!act || act->action != ACT_EFFECT))
            zt_fail(c, e->line,
                    "%s: the act names store %s, but it is not a tool call (the call "
                    "of an effect action)",
                    zt_ev_where(c, e), e->store);
        Exp a = {.kind = X_ACT, .stmt = it, .ctl = -1, .op = s};
        check_event_values(r, &a, e);
        return;
    }
    check_no_writes(c, e);
    if (e->kind == K_ST_ABORT) return;
    Env env = {.c = c, .life = r->life, .index = e->index - 1};
    const ZStmt *reg = NULL;
    int nw = 0;
    for (int i = 0; i < s->body.len; i++) {
        const ZStmt *w = ZU_VEC_AT(s->body, i);
        if (w->kind != S_WRITE) continue;
        if (w->registry) {
            reg = w;
            continue;
        }
        nw++;
        json_t *got = json_object_get(e->cells, w->cell);
        if (!got)
            zt_fail(c, e->line,
                    "%s: the commit's cells %s lack %s, which the block writes (line %d)",
                    zt_ev_where(c, e), zt_jtext(c, e->cells), w->cell, w->span.first_line);
        zt_want_type(c, e->line, got, w->cell_decl->type,
                     "lifeline %s event %d: the value committed to %s.%s", c->m->lnames[e->life],
                     e->index, st, w->cell);
        env.undef = false;
        Val v = zt_eval(&env, w->expr);
        check_value(c, e, &v, got, "the value committed to %s.%s", st, w->cell);
    }
    if ((int)json_object_size(e->cells) != nw) {
        const char *key;
        json_t *val;
        json_object_foreach(e->cells, key, val)
        {
            bool written = false;
            for (int i = 0; i < s->body.len && !written; i++) {
                const ZStmt *w = ZU_VEC_AT(s->body, i);
                written = w->kind == S_WRITE && !w->registry && !strcmp(w->cell, key);
            }
            if (!written)
                zt_fail(c, e->line,
                        "%s: the commit writes cell %s.%s, which the block (line %d) does not "
                        "write",
                        zt_ev_where(c, e), st, key, s->span.first_line);
        }
    }
    if (!reg && e->registry)
        zt_fail(c, e->line,
                "%s: the commit writes the registry %s, but the block (line %d) has no `write "
                "tools`",
                zt_ev_where(c, e), zt_jtext(c, e->registry), s->span.first_line);
    if (!reg) return;
    if (!e->registry)
        zt_fail(c, e->line, "%s: the commit lacks \"registry\", which the block writes (line %d)",
                zt_ev_where(c, e), reg->span.first_line);
    bool same = (int)json_array_size(e->registry) == reg->tools.len;
    ZBuf b = {0};
    for (int i = 0; i < reg->tools.len; i++) {
        const ZParam *t = ZU_VEC_AT(reg->tools, i);
        zu_buf_printf(&b, "%s%s", i ? ", " : "", t->name);
        bool in = false;
        for (size_t j = 0; j < json_array_size(e->registry) && !in; j++)
            in = !strcmp(json_string_value(json_array_get(e->registry, j)), t->name);
        same = same && in;
    }
    const char *want = zu_fmt(c->a, "%s", b.data ? b.data : "");
    zu_buf_free(&b);
    if (!same)
        zt_fail(c, e->line,
                "%s: the commit's registry is %s, expected the tools (%s) of the "
                "block's `write tools` (line %d)",
                zt_ev_where(c, e), zt_jtext(c, e->registry), want, reg->span.first_line);
    c->st.values++;
}

/* Whether the end of an attempt fits operation x, when operations of
 * parallel branches of one lifeline could both end here: a commit whose
 * cells are x's writes with their values (those it can compute), an
 * abort followed by a read of x's next attempt (its first read item's
 * cell into its variable).  Event i of the lifeline is e. */
static bool op_fits(Replay *r, const Exp *x, const Ev *e, int i)
{
    Check *c = r->c;
    const ZStmt *s = x->stmt;
    if (e->kind == K_ST_COMMIT) {
        Env env = {.c = c, .life = r->life, .index = e->index - 1};
        int nw = 0;
        for (int k = 0; k < s->body.len; k++) {
            const ZStmt *w = ZU_VEC_AT(s->body, k);
            if (w->kind != S_WRITE || w->registry) continue;
            nw++;
            json_t *got = json_object_get(e->cells, w->cell);
            if (!got) return false;
            env.undef = false;
            Val v = zt_eval(&env, w->expr);
            json_t *want = zt_to_json(&v);
            bool differ = want && !json_equal(want, got);
            json_decref(want);
            if (differ) return false;
        }
        return (int)json_object_size(e->cells) == nw;
    }
    const ZStmt *rd = s->body.len ? ZU_VEC_AT(s->body, 0) : NULL;
    if (!rd || rd->kind != S_READ) return true;
    const ZTarget *t = ZU_VEC_AT(rd->targets, 0);
    for (int j = i + 1; j < c->nbyl[r->life]; j++) {
        const Ev *n = &c->ev[c->byl[r->life][j]];
        if (n->kind == K_ST_READ && !strcmp(n->store, s->store_name) &&
            n->op_attempt == x->attempt + 1 && !strcmp(n->cell, rd->cell) && t->var &&
            json_object_get(n->writes, t->var->name))
            return true;
    }
    return false;
}

static void replay_lifeline(Check *c, int L)
{
    Replay r = {.c = c, .life = L};
    r.inst = zu_xcalloc((size_t)c->m->nconstructs + 2, sizeof(int));
    int root = new_cursor(&r, ZV_CHANNEL_MAIN, -1);
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
            /* no cursor is added while they are searched; in locals,
             * r.cur and r.ncur stay in registers (r's address is taken:
             * reloaded each turn, they cost 1% more instructions on a
             * trace of 1,500 loop turns with a parallel region) */
            Cur *cur = r.cur;
            int ncur = r.ncur;
            /* an event of an operation under way ("op" names it: the
             * branches' operations interleave) goes to that operation */
            bool named = false;
            for (int k = 0; e->op_id && k < ncur && hit < 0; k++) {
                Cur *cu = &cur[k];
                if (cu->done || cu->children > 0 || cu->qhead >= cu->qlen) continue;
                Exp *x = &cu->q[cu->qhead];
                if (x->kind == X_OP && !x->used && x->op_id && !strcmp(x->op_id, e->op_id)) {
                    named = true;
                    if (matches(c, x, e)) hit = k, hq = cu->qhead;
                }
            }
            for (int k = 0; e->op_id && !named && k < r.nops; k++)
                if (!strcmp(r.ops[k], e->op_id))
                    zt_fail(c, e->line, "%s: \"op\" %s names an operation that has ended",
                            zt_ev_where(c, e), e->op_id);
            for (int k = 0; k < ncur && hit < 0 && !named; k++) {
                Cur *cu = &cur[k];
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
            /* the end of an attempt that the operations of several
             * branches could take: the one it fits (op_fits), else the
             * first, whose check says what differs */
            if (hit >= 0 && !named && (e->kind == K_ST_COMMIT || e->kind == K_ST_ABORT) &&
                !op_fits(&r, &cur[hit].q[hq], e, i))
                for (int k = hit + 1; k < ncur; k++) {
                    Cur *cu = &cur[k];
                    if (cu->done || cu->children > 0 || cu->qhead >= cu->qlen) continue;
                    Exp *x = &cu->q[cu->qhead];
                    if (!x->used && x->kind == X_OP && matches(c, x, e) && op_fits(&r, x, e, i)) {
                        hit = k;
                        hq = cu->qhead;
                        break;
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
                zt_fail(c, e->line, "%s: %s: got %s, expected %s", zt_ev_where(c, e),
                        ctl_involved
                            ? "control messages differ from the projection of the global workflow"
                            : "erasure: the events differ from the global workflow's",
                        ev_text(c, e), want);
            }
            Cur *cu = &r.cur[hit];
            e->pred = cu->last;
            cu->last = e->index;
            if (cu->q[hq].kind == X_OP && !cu->q[hq].op_id && e->op_id) {
                cu->q[hq].op_id = e->op_id;
                r.ops = zt_grow(r.ops, &r.capops, r.nops + 1, sizeof *r.ops);
                r.ops[r.nops++] = e->op_id;
            }
            Exp x = cu->q[hq];
            if (x.kind == X_OP && e->kind != K_ST_COMMIT) {
                /* an operation goes on: its next item, or after an abort
                 * its next attempt; its reads chained for stores.c */
                Exp *op = &cu->q[hq];
                if (e->kind == K_ST_ABORT) {
                    e->op_prev = op->last_read;
                    op->attempt++;
                    op->pos = 0;
                    op->last_read = -1;
                } else {
                    op->pos = op_next(op->stmt, op->pos) + 1;
                    if (e->kind == K_ST_READ) {
                        e->op_prev = op->last_read;
                        op->last_read = c->byl[L][i];
                    }
                }
            } else {
                if (x.kind == X_OP) e->op_prev = x.last_read;
                cu->q[hq].used = true;
                while (cu->qhead < cu->qlen && cu->q[cu->qhead].used) cu->qhead++;
            }
            check_event_values(&r, &x, e);
            if (x.kind == X_CHOICE) {
                c->st.choices++;
                decide(&r, hit, x.stmt, e->value, true);
            }
            fill(&r, hit);
        }
        /* a finished run: every cursor is done */
        if (!c->life_error[L]) {
            for (int k = 0; k < r.ncur; k++) fill(&r, k);
            for (int k = 0; k < r.ncur; k++) {
                Cur *cu = &r.cur[k];
                if (cu->done || cu->children > 0) continue;
                if (cu->qhead < cu->qlen) {
                    int line =
                        c->nbyl[L] ? c->ev[c->byl[L][c->nbyl[L] - 1]].line : c->start_line[L];
                    zt_fail(
                        c, line,
                        "lifeline %s: %s: the trace ends after event %d, but the global workflow "
                        "expects %s next",
                        c->m->lnames[L],
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
    free(r.ops);
    if (failed) longjmp(c->fail_jb, 1);
}

/* Replays lifeline l; true when it disagrees (the message in c->msg). */
static bool replay_fails(Check *c, int l)
{
    jmp_buf saved;
    bool failed = false;
    memcpy(saved, c->fail_jb, sizeof saved);
    if (setjmp(c->fail_jb) == 0)
        replay_lifeline(c, l);
    else
        failed = true;
    memcpy(c->fail_jb, saved, sizeof saved);
    return failed;
}

/* Replays every lifeline; of their disagreements, reports the one on the
 * earliest trace line. */
void zt_replay_all(Check *c)
{
    const char *best = NULL;
    int best_line = 0;
    for (int l = 0; l < c->m->nl; l++) {
        if (replay_fails(c, l) && (!best || c->fail_line < best_line)) {
            best = zu_strdup(c->a, c->msg.data ? c->msg.data : "");
            best_line = c->fail_line;
        }
        c->msg.len = 0;
        if (c->msg.data) c->msg.data[0] = 0;
    }
    if (best) {
        zu_buf_puts(&c->msg, best);
        longjmp(c->fail_jb, 1);
    }
}

void zt_collect_decisions(Check *c)
{
    const ZtModel *m = c->m;
    int n = m->nconstructs + 2;
    c->dec = zu_xcalloc((size_t)n, sizeof *c->dec);
    c->ndec = zu_xcalloc((size_t)n, sizeof(int));
    c->capdec = zu_xcalloc((size_t)n, sizeof(int));
    for (long i = 0; i < c->nev; i++) {
        Ev *e = &c->ev[i];
        if (e->kind != K_CHOICE) continue;
        int cn = zt_construct_index(m, e->construct);
        if (cn < 0)
            zt_fail(c, e->line, "%s: choice of an unknown construct \"%s\"", zt_ev_where(c, e),
                    e->construct);
        if (m->constructs[cn]->life.index != e->life)
            zt_fail(c, e->line, "%s: choice of %s, which %s owns", zt_ev_where(c, e), e->construct,
                    m->lnames[m->constructs[cn]->life.index]);
    }
    /* in each owner's order */
    for (int l = 0; l < m->nl; l++)
        for (int i = 0; i < c->nbyl[l]; i++) {
            Ev *e = &c->ev[c->byl[l][i]];
            if (e->kind != K_CHOICE) continue;
            int k = zt_construct_index(m, e->construct);
            c->dec[k] = zt_grow(c->dec[k], &c->capdec[k], c->ndec[k] + 1, sizeof(int));
            c->dec[k][c->ndec[k]++] = e->value;
        }
}
