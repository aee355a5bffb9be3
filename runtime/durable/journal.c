/* journal.c — the journal of a durable run: the zri_journal the core
 * records into and replays from (rt.h).
 *
 * Recording.  Entries are encoded (codec.c) into a buffer per lifeline
 * under one mutex; nothing touches the store then.  A commit takes every
 * buffer at once and writes each as one row of `journal` (a chunk), with
 * the lifelines' summaries, in one transaction: what is committed is
 * always a prefix of what was recorded, for every lifeline and thread.
 *
 * Group commit.  A thread of its own commits ZRD_COMMIT_INTERVAL_MS after
 * the last commit (its own or an output commit), or sooner when
 * ZRD_COMMIT_BYTES wait: a loop of
 * steps that nothing outside the run sees pays no fsync per step, and a
 * crash loses at most that much work, which the resumed run makes again
 * (nothing of it was seen outside).
 *
 * Output commit.  Before anything leaves the run (a frame to another
 * process, a model call, an effect, a question to a human, the printed
 * result) the core calls commit, which returns once every entry recorded
 * before it that anything may depend on is committed (decisions are
 * recorded only to be compared on replay, so they never make a commit
 * wait).  Each recorded dependency gets a number (det_seq); a commit
 * publishes the number it covers (committed_seq), so an output commit
 * with nothing new costs one atomic load.  Trace lines are released by
 * the commit that covers their events (zrd_output: the mark is taken
 * before the buffers are, so a released line never runs ahead of its
 * entries).
 *
 * Replay.  Each lifeline's chunks are loaded whole and indexed once, in
 * one pass: per thread path the offsets of its entries (a cursor), the
 * turns of parallel regions by event index, the messages taken from other
 * processes.  Entries are decoded when the thread reaches them: replay is
 * linear in the journal's length.
 *
 * Failures.  A failed commit (a locked, damaged or full store) is sticky:
 * it fails the run (zri_run_fail) with the store's message, and every
 * later commit reports it; zgrt_main exits with ZRD_EXIT_STORE.  A commit
 * that finds the run cancelled (`zgc runs cancel`) fails the run the same
 * way.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "durable.h"

#define RECENT 5 /* acts per lifeline in `zgc runs show` */

/* One thread's entries (replay). */
typedef struct cursor {
    char *path;
    int32_t l;
    size_t *offs;
    int64_t n, cap, next;
    zgrt_value *vals; /* decoded results, reused */
    int32_t capvals;
    struct cursor *hnext;
} cursor;

typedef struct turn {
    int64_t index;
    const char *path;
} turn;

typedef struct lj {
    int32_t l;
    /* replay */
    zri_buf data;
    cursor **buckets;
    size_t nbuckets, ncursors;
    turn *turns;
    int64_t nturns, capturns, turnpos;
    size_t *msgs;
    int64_t nmsgs, capmsgs;
    /* recording (pend, acts, nacts under the journal's mu) */
    zri_buf pend, spare;
    size_t acts[RECENT];
    int nacts, actpos;
    zrd_taken *taken; /* MSG entries in pend: the last of each channel */
    int ntaken, captaken;
    int64_t chunk;       /* the next chunk's number */
    int64_t events_seen; /* the events the store has */
    char *recent[RECENT];
    int nrecent;
} lj;

struct zrd_journal {
    zrd_store *st;
    const zgrt_program *p;
    int64_t rid;
    char *run_id;
    int n;
    lj *ljs;
    lj **by_life; /* nlifelines: its lj or NULL */
    zrd_output out;
    zri_run *R;
    pthread_mutex_t mu;        /* recording */
    pthread_cond_t cv;         /* the commit thread's wake-ups (with mu) */
    pthread_mutex_t commit_mu; /* one commit at a time */
    uint64_t det_seq;          /* entries something may depend on (under mu) */
    uint64_t committed_seq;    /* atomic: det_seq that the last commit covered */
    size_t pend_bytes;         /* under mu */
    pthread_t th;
    int th_started, stop; /* stop under mu */
    int64_t *sent_taken;  /* per-lifeline mode, a resume: [to * nchans + chan], what
                             the receivers' journals hold of this lifeline's messages */
    int failed;           /* atomic */
    char err[600];        /* the failure, under commit_mu */
    double last_status;   /* the last look at the run's status */
    int64_t last_commit;  /* atomic: when the last commit took the buffers (CLOCK_MONOTONIC ns) */
};

/* ---- replay index -------------------------------------------------------- */

static uint64_t hash_path(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
    return h;
}

static cursor *find_cursor(lj *x, const char *path, size_t n, int make)
{
    if (x->nbuckets) {
        for (cursor *c = x->buckets[hash_path(path, n) & (x->nbuckets - 1)]; c; c = c->hnext)
            if (strlen(c->path) == n && memcmp(c->path, path, n) == 0) return c;
    }
    if (!make) return NULL;
    if (x->ncursors + 1 > x->nbuckets) {
        size_t nb = x->nbuckets ? x->nbuckets * 2 : 16;
        cursor **b = zri_xcalloc(nb, sizeof *b);
        for (size_t i = 0; i < x->nbuckets; i++)
            for (cursor *c = x->buckets[i], *nx; c; c = nx) {
                nx = c->hnext;
                size_t k = hash_path(c->path, strlen(c->path)) & (nb - 1);
                c->hnext = b[k];
                b[k] = c;
            }
        free(x->buckets);
        x->buckets = b;
        x->nbuckets = nb;
    }
    cursor *c = zri_xcalloc(1, sizeof *c);
    c->path = zri_xstrndup(path, n);
    c->l = x->l;
    size_t k = hash_path(path, n) & (x->nbuckets - 1);
    c->hnext = x->buckets[k];
    x->buckets[k] = c;
    x->ncursors++;
    return c;
}

static void push_off(size_t **a, int64_t *n, int64_t *cap, size_t off)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        *a = zri_xrealloc(*a, (size_t)*cap * sizeof **a);
    }
    (*a)[(*n)++] = off;
}

static int damaged(zrd_journal *J, const lj *x, size_t off, char *err, size_t errlen)
{
    zri_err(err, errlen,
            "run store %s is damaged: the journal of run %s, lifeline %s, is unreadable at byte "
            "%zu",
            zrd_store_file(J->st), J->run_id, J->p->lifelines[x->l], off);
    return -1;
}

/* Indexes the loaded journal of x (one pass, nothing decoded but keys). */
static int index_journal(zrd_journal *J, lj *x, char *err, size_t errlen)
{
    const uint8_t *d = (const uint8_t *)x->data.data;
    size_t len = x->data.len, pos = 0;
    int64_t last_turn = 0;
    while (pos < len) {
        size_t at = pos, pn;
        zri_jentry e;
        if (zrd_decode(d, len, &pos, J->p, NULL, &e, &pn, NULL, NULL) < 0)
            return damaged(J, x, at, err, errlen);
        if (e.kind == ZRI_J_TURN) {
            if (e.pos <= last_turn) return damaged(J, x, at, err, errlen);
            last_turn = e.pos;
            cursor *c = find_cursor(x, e.path, pn, 1);
            if (x->nturns == x->capturns) {
                x->capturns = x->capturns ? x->capturns * 2 : 16;
                x->turns = zri_xrealloc(x->turns, (size_t)x->capturns * sizeof *x->turns);
            }
            x->turns[x->nturns++] = (turn){e.pos, c->path};
        } else if (e.kind == ZRI_J_MSG) {
            push_off(&x->msgs, &x->nmsgs, &x->capmsgs, at);
        } else {
            cursor *c = find_cursor(x, e.path, pn, 1);
            push_off(&c->offs, &c->n, &c->cap, at);
        }
    }
    return 0;
}

/* ---- the zri_journal ------------------------------------------------------ */

static void *j_cursor(void *impl, int32_t l, const char *path)
{
    zrd_journal *J = impl;
    lj *x = l >= 0 && l < J->p->nlifelines ? J->by_life[l] : NULL;
    if (!x) return NULL;
    cursor *c = find_cursor(x, path, strlen(path), 0);
    return c && c->n > c->next ? c : NULL;
}

static int j_next(void *impl, void *cur, zri_heap *h, zri_jentry *e, char *err, size_t errlen)
{
    zrd_journal *J = impl;
    cursor *c = cur;
    if (c->next >= c->n) return 0;
    lj *x = J->by_life[c->l];
    size_t pos = c->offs[c->next];
    if (zrd_decode((const uint8_t *)x->data.data, x->data.len, &pos, J->p, h, e, NULL, &c->vals,
                   &c->capvals) < 0)
        return damaged(J, x, c->offs[c->next], err, errlen);
    e->path = c->path;
    c->next++;
    return 1;
}

static int j_turn(void *impl, int32_t l, int64_t index, const char **path)
{
    zrd_journal *J = impl;
    lj *x = J->by_life[l];
    if (!x) return 0;
    while (x->turnpos < x->nturns && x->turns[x->turnpos].index < index) x->turnpos++;
    if (x->turnpos >= x->nturns) return 0;
    if (x->turns[x->turnpos].index != index) return -1;
    *path = x->turns[x->turnpos].path;
    return 1;
}

static int j_messages(void *impl, int32_t l, zri_heap *h, void (*take)(void *u, zri_msg *m),
                      void *u, char *err, size_t errlen)
{
    zrd_journal *J = impl;
    lj *x = J->by_life[l];
    if (!x) return 0;
    for (int64_t i = 0; i < x->nmsgs; i++) {
        size_t pos = x->msgs[i];
        zri_jentry e;
        if (zrd_decode((const uint8_t *)x->data.data, x->data.len, &pos, J->p, h, &e, NULL, NULL,
                       NULL) < 0 ||
            !e.msg)
            return damaged(J, x, x->msgs[i], err, errlen);
        zri_msg *m = (zri_msg *)e.msg;
        m->to = l;
        take(u, m);
    }
    return 0;
}

static void j_record(void *impl, int32_t l, const char *path, const zri_jentry *e)
{
    zrd_journal *J = impl;
    lj *x = J->by_life[l];
    if (!x) return;
    pthread_mutex_lock(&J->mu);
    size_t before = x->pend.len;
    if (e->kind == ZRI_J_ACT) {
        x->acts[x->actpos] = before;
        x->actpos = (x->actpos + 1) % RECENT;
        if (x->nacts < RECENT) x->nacts++;
    }
    zrd_encode(&x->pend, path, e);
    J->pend_bytes += x->pend.len - before;
    if (e->kind == ZRI_J_MSG) {
        int k = 0;
        while (k < x->ntaken &&
               (x->taken[k].sender != e->msg->from || x->taken[k].chan != e->msg->chan))
            k++;
        if (k == x->ntaken) {
            if (x->ntaken == x->captaken) {
                x->captaken = x->captaken ? x->captaken * 2 : 8;
                x->taken = zri_xrealloc(x->taken, (size_t)x->captaken * sizeof *x->taken);
            }
            x->taken[x->ntaken++] = (zrd_taken){e->msg->from, e->msg->chan, 0};
        }
        if (e->msg->seq > x->taken[k].seq) x->taken[k].seq = e->msg->seq;
    }
    if (!e->again) J->det_seq++;
    if (J->pend_bytes >= ZRD_COMMIT_BYTES) pthread_cond_signal(&J->cv);
    pthread_mutex_unlock(&J->mu);
}

static int64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void free_chunks(zrd_journal *J, zrd_chunk *chunks)
{
    for (int i = 0; i < J->n; i++) free((void *)chunks[i].taken);
    free(chunks);
}

/* One commit of everything recorded (commit_mu held). */
static int commit_now(zrd_journal *J, char *err, size_t errlen)
{
    if (__atomic_load_n(&J->failed, __ATOMIC_ACQUIRE)) {
        zri_err(err, errlen, "%s", J->err);
        return -1;
    }
    /* the trace's mark first: a line held before it belongs to entries
     * recorded before the buffers are taken */
    size_t mark = J->out.mark ? J->out.mark(J->out.u) : 0;
    __atomic_store_n(&J->last_commit, mono_ns(), __ATOMIC_RELEASE);
    zrd_chunk *chunks = zri_xcalloc((size_t)J->n, sizeof *chunks);
    int *nacts = zri_xcalloc((size_t)J->n, sizeof *nacts);
    size_t *actoffs = zri_xcalloc((size_t)J->n * RECENT, sizeof *actoffs);
    pthread_mutex_lock(&J->mu);
    uint64_t seq = J->det_seq;
    int any = 0;
    for (int i = 0; i < J->n; i++) {
        lj *x = &J->ljs[i];
        zri_buf t = x->pend;
        x->pend = x->spare;
        x->spare = t;
        int k = 0;
        for (int a = 0; a < x->nacts; a++)
            actoffs[(size_t)i * RECENT + (size_t)k++] =
                x->acts[(x->actpos - x->nacts + a + RECENT) % RECENT];
        nacts[i] = k;
        x->nacts = x->actpos = 0;
        int64_t ev = J->R ? zri_run_events(J->R, x->l) : 0;
        chunks[i].lifeline = x->l;
        if (x->ntaken) {
            zrd_taken *tk = zri_xmalloc((size_t)x->ntaken * sizeof *tk);
            memcpy(tk, x->taken, (size_t)x->ntaken * sizeof *tk);
            chunks[i].taken = tk;
            chunks[i].ntaken = x->ntaken;
            x->ntaken = 0;
        }
        chunks[i].events = ev;
        if (x->spare.len || ev != x->events_seen) any = 1;
    }
    J->pend_bytes = 0;
    pthread_mutex_unlock(&J->mu);

    int rc = 0;
    char *status = NULL;
    if (any) {
        zri_buf *recent = zri_xcalloc((size_t)J->n, sizeof *recent);
        for (int i = 0; i < J->n; i++) {
            lj *x = &J->ljs[i];
            chunks[i].data = x->spare.data;
            chunks[i].len = x->spare.len;
            chunks[i].chunk = x->chunk;
            int k = nacts[i];
            if (!k) continue;
            for (int a = 0; a < k; a++) {
                zri_buf one = {0};
                zrd_act_text(&one, J->p, (const uint8_t *)x->spare.data, x->spare.len,
                             actoffs[(size_t)i * RECENT + (size_t)a]);
                if (!one.data) continue;
                if (x->nrecent == RECENT) {
                    free(x->recent[0]);
                    memmove(x->recent, x->recent + 1, (RECENT - 1) * sizeof *x->recent);
                    x->nrecent--;
                }
                x->recent[x->nrecent++] = zri_buf_take(&one);
            }
            zri_buf_puts(&recent[i], "[");
            for (int a = 0; a < x->nrecent; a++) {
                if (a) zri_buf_puts(&recent[i], ",");
                zri_buf_puts(&recent[i], x->recent[a]);
            }
            zri_buf_puts(&recent[i], "]");
            chunks[i].recent = recent[i].data;
        }
        rc = zrd_store_commit(J->st, J->rid, J->n, chunks, &status, err, errlen);
        for (int i = 0; i < J->n; i++) zri_buf_free(&recent[i]);
        free(recent);
        if (rc == 0)
            for (int i = 0; i < J->n; i++) {
                lj *x = &J->ljs[i];
                if (x->spare.len) x->chunk++;
                x->events_seen = chunks[i].events;
            }
    }
    for (int i = 0; i < J->n; i++) J->ljs[i].spare.len = 0;
    free(nacts);
    free(actoffs);
    if (rc != 0) {
        snprintf(J->err, sizeof J->err, "%s", err);
        __atomic_store_n(&J->failed, 1, __ATOMIC_RELEASE);
        if (J->R) zri_run_fail(J->R, -1, "%s", J->err);
        free_chunks(J, chunks);
        return -1;
    }
    __atomic_store_n(&J->committed_seq, seq, __ATOMIC_RELEASE);
    if (J->out.acked)
        for (int i = 0; i < J->n; i++)
            for (int k = 0; k < chunks[i].ntaken; k++)
                J->out.acked(J->out.acked_u, chunks[i].taken[k].sender, chunks[i].taken[k].chan,
                             chunks[i].taken[k].seq);
    if (status && strcmp(status, "cancelled") == 0 && J->R)
        zri_run_fail(J->R, -1, "run %s was cancelled (zgc runs cancel)", J->run_id);
    free(status);
    if (J->out.release && J->out.release(J->out.u, mark) != 0 && J->R)
        zri_run_fail(J->R, -1, "writing the trace failed: %s", strerror(errno));
    free_chunks(J, chunks);
    return 0;
}

static int j_commit(void *impl, char *err, size_t errlen)
{
    zrd_journal *J = impl;
    pthread_mutex_lock(&J->mu);
    uint64_t need = J->det_seq;
    pthread_mutex_unlock(&J->mu);
    if (__atomic_load_n(&J->committed_seq, __ATOMIC_ACQUIRE) >= need &&
        !__atomic_load_n(&J->failed, __ATOMIC_ACQUIRE))
        return 0;
    pthread_mutex_lock(&J->commit_mu);
    int rc = 0;
    if (__atomic_load_n(&J->committed_seq, __ATOMIC_ACQUIRE) < need ||
        __atomic_load_n(&J->failed, __ATOMIC_ACQUIRE))
        rc = commit_now(J, err, errlen);
    pthread_mutex_unlock(&J->commit_mu);
    return rc;
}

static int64_t j_taken(void *impl, int32_t from, int32_t to, int32_t chan)
{
    zrd_journal *J = impl;
    if (!J->sent_taken || J->n != 1 || from != J->ljs[0].l || to < 0 || to >= J->p->nlifelines ||
        chan < 0 || chan >= J->p->nchans)
        return 0;
    return J->sent_taken[(size_t)to * (size_t)J->p->nchans + (size_t)chan];
}

zri_journal zrd_journal_iface(zrd_journal *J)
{
    zri_journal j = {j_cursor, j_next, j_turn, j_messages, j_record, j_commit, j_taken, J};
    return j;
}

/* ---- the commit thread ----------------------------------------------------- */

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *commit_thread(void *arg)
{
    zrd_journal *J = arg;
    pthread_mutex_lock(&J->mu);
    while (!J->stop) {
        /* the interval counts from the last commit, whoever made it: a
         * lifeline whose outputs commit often (a coordinator taking
         * replies every few milliseconds) makes no group commit between
         * them to compete with them for the store */
        int64_t due = __atomic_load_n(&J->last_commit, __ATOMIC_ACQUIRE) +
                      (int64_t)ZRD_COMMIT_INTERVAL_MS * 1000000;
        struct timespec t = {(time_t)(due / 1000000000), (long)(due % 1000000000)};
        if (J->pend_bytes < ZRD_COMMIT_BYTES) pthread_cond_timedwait(&J->cv, &J->mu, &t);
        if (J->stop) break;
        if (J->pend_bytes < ZRD_COMMIT_BYTES &&
            mono_ns() < __atomic_load_n(&J->last_commit, __ATOMIC_ACQUIRE) +
                            (int64_t)ZRD_COMMIT_INTERVAL_MS * 1000000)
            continue; /* a commit came meanwhile */
        pthread_mutex_unlock(&J->mu);
        char err[600];
        pthread_mutex_lock(&J->commit_mu);
        if (!__atomic_load_n(&J->failed, __ATOMIC_ACQUIRE)) {
            commit_now(J, err, sizeof err);
            /* an idle run still notices a cancellation, once a second */
            double now = mono_s();
            if (now - J->last_status >= 1.0) {
                J->last_status = now;
                char *status = NULL;
                if (zrd_store_status(J->st, J->rid, &status, err, sizeof err) == 0 && status &&
                    strcmp(status, "cancelled") == 0)
                    zri_run_fail(J->R, -1, "run %s was cancelled (zgc runs cancel)", J->run_id);
                free(status);
            }
        }
        pthread_mutex_unlock(&J->commit_mu);
        pthread_mutex_lock(&J->mu);
    }
    pthread_mutex_unlock(&J->mu);
    return NULL;
}

/* ---- life cycle ---------------------------------------------------------- */

zrd_journal *zrd_journal_new(zrd_store *st, const zgrt_program *p, int64_t rid, const char *run_id,
                             int nlives, const int32_t *lives, int replay, char *err, size_t errlen)
{
    zrd_journal *J = zri_xcalloc(1, sizeof *J);
    J->st = st;
    J->p = p;
    J->rid = rid;
    J->run_id = zri_xstrndup(run_id, strlen(run_id));
    J->n = nlives;
    J->ljs = zri_xcalloc((size_t)nlives, sizeof *J->ljs);
    J->by_life = zri_xcalloc((size_t)p->nlifelines, sizeof *J->by_life);
    pthread_mutex_init(&J->mu, NULL);
    pthread_mutex_init(&J->commit_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&J->cv, &ca);
    pthread_condattr_destroy(&ca);
    for (int i = 0; i < nlives; i++) {
        lj *x = &J->ljs[i];
        x->l = lives[i];
        J->by_life[lives[i]] = x;
        if (!replay) continue;
        if (zrd_store_load(st, rid, x->l, &x->data, &x->chunk, err, errlen) < 0 ||
            index_journal(J, x, err, errlen) < 0) {
            zrd_journal_free(J);
            return NULL;
        }
    }
    if (replay && nlives == 1 && p->nlifelines > 1) {
        zrd_taken *t = NULL;
        int nt = 0;
        if (zrd_store_taken(st, rid, lives[0], &t, &nt, err, errlen) < 0) {
            zrd_journal_free(J);
            return NULL;
        }
        J->sent_taken = zri_xcalloc((size_t)p->nlifelines * (size_t)(p->nchans > 0 ? p->nchans : 1),
                                    sizeof *J->sent_taken);
        for (int k = 0; k < nt; k++)
            if (t[k].sender >= 0 && t[k].sender < p->nlifelines && t[k].chan >= 0 &&
                t[k].chan < p->nchans)
                J->sent_taken[(size_t)t[k].sender * (size_t)p->nchans + (size_t)t[k].chan] =
                    t[k].seq;
        free(t);
    }
    return J;
}

void zrd_journal_output(zrd_journal *J, const zrd_output *out) { J->out = *out; }

void zrd_journal_no_acks(zrd_journal *J)
{
    pthread_mutex_lock(&J->commit_mu);
    J->out.acked = NULL;
    pthread_mutex_unlock(&J->commit_mu);
}

int zrd_journal_start(zrd_journal *J, zri_run *R, char *err, size_t errlen)
{
    J->R = R;
    J->last_status = mono_s();
    J->last_commit = mono_ns();
    if (pthread_create(&J->th, NULL, commit_thread, J) != 0) {
        zri_err(err, errlen, "cannot start the journal's commit thread");
        return -1;
    }
    J->th_started = 1;
    return 0;
}

int zrd_journal_flush(zrd_journal *J, char *err, size_t errlen)
{
    pthread_mutex_lock(&J->commit_mu);
    int rc = commit_now(J, err, errlen);
    pthread_mutex_unlock(&J->commit_mu);
    return rc;
}

void zrd_journal_stop(zrd_journal *J)
{
    if (J->th_started) {
        pthread_mutex_lock(&J->mu);
        J->stop = 1;
        pthread_cond_signal(&J->cv);
        pthread_mutex_unlock(&J->mu);
        pthread_join(J->th, NULL);
        J->th_started = 0;
    }
    pthread_mutex_lock(&J->commit_mu);
    memset(&J->out, 0, sizeof J->out);
    pthread_mutex_unlock(&J->commit_mu);
}

int zrd_journal_failed(const zrd_journal *J)
{
    return __atomic_load_n(&J->failed, __ATOMIC_ACQUIRE);
}

void zrd_journal_free(zrd_journal *J)
{
    if (!J) return;
    zrd_journal_stop(J);
    for (int i = 0; i < J->n; i++) {
        lj *x = &J->ljs[i];
        zri_buf_free(&x->data);
        zri_buf_free(&x->pend);
        zri_buf_free(&x->spare);
        for (size_t b = 0; b < x->nbuckets; b++)
            for (cursor *c = x->buckets[b], *nx; c; c = nx) {
                nx = c->hnext;
                free(c->path);
                free(c->offs);
                free(c->vals);
                free(c);
            }
        free(x->buckets);
        free(x->turns);
        free(x->msgs);
        for (int k = 0; k < x->nrecent; k++) free(x->recent[k]);
        free(x->taken);
    }
    free(J->sent_taken);
    free(J->ljs);
    free(J->by_life);
    free(J->run_id);
    pthread_cond_destroy(&J->cv);
    pthread_mutex_destroy(&J->commit_mu);
    pthread_mutex_destroy(&J->mu);
    free(J);
}
