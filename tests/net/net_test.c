/* Shared helpers for the frame codec and transport tests. */
#include "net_test.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

/* ---- program descriptors ------------------------------------------------------- */

static const char *const lifelines3[] = {"User", "Writer", "Mailbox"};
static const char *const lifelines2[] = {"User", "Writer"};
static const char *const color_members[] = {"red", "green", "blue"};
static const char *const mood_members[] = {"happy", "sad"};
static const zgrt_enum enums[] = {{"Color", 3, color_members}, {"Mood", 2, mood_members}};
static const zgrt_var vars[] = {
    {"count", {ZGRT_INT, -1}, 0, {0, {0}}},   {"draft", {ZGRT_STR, -1}, 0, {0, {0}}},
    {"data", {ZGRT_JSON, -1}, 0, {0, {0}}},   {"color", {ZGRT_ENUM, E_COLOR}, 0, {0, {0}}},
    {"score", {ZGRT_FLOAT, -1}, 0, {0, {0}}}, {"ok", {ZGRT_BOOL, -1}, 0, {0, {0}}},
};
static const char *const chans[] = {"main", "main/par1.1"};
static const char *const tags[] = {"while#1", "if#2", "if#3"};

/* the monitor plans (zgrt_abi.h: zgrt_keep, zgrt_edge), as compiler/plan.c
 * makes them for the messages of every lifeline to every other: Mailbox's
 * entries reach Writer and User, Writer's reach User */
static const int32_t ev_user[] = {0, 3}, ev_writer[] = {1, 4}, ev_mailbox[] = {2, 4};
static const int32_t vc_user3[] = {0, 1, 2}, vc_writer3[] = {1, 2}, vc_mailbox3[] = {2};
static const zgrt_slot views_user3[] = {{1, 1}, {1, 4}, {2, 2}, {2, 4}};
static const zgrt_slot varviews_user3[] = {
    {1, V_DRAFT}, {1, V_COLOR}, {2, V_COUNT}, {2, V_DATA}, {2, V_OK}};
static const zgrt_slot views_writer3[] = {{2, 2}, {2, 4}};
static const zgrt_slot varviews_writer3[] = {{2, V_COUNT}, {2, V_DATA}, {2, V_OK}};
static const zgrt_keep keeps3[] = {
    {2, 3, 4, 5, ev_user, vc_user3, views_user3, varviews_user3},
    {2, 2, 2, 3, ev_writer, vc_writer3, views_writer3, varviews_writer3},
    {2, 1, 0, 0, ev_mailbox, vc_mailbox3, NULL, NULL},
};
/* 0 → 1: Mailbox's entries, forwarded by User */
static const zgrt_group g01[] = {{2, 2, 1, 2, 3}};
static const zgrt_pair v01[] = {{2, 0}, {3, 1}}, vv01[] = {{2, 0}, {3, 1}, {4, 2}};
/* 1 → 0: Writer's own (its values and store), then Mailbox's */
static const zgrt_group g10[] = {{1, 0, 1, 2, 2}, {2, 1, 2, 4, 5}};
static const zgrt_pair v10[] = {{0, 0}, {1, 1}, {0, 2}, {1, 3}};
static const zgrt_pair vv10[] = {{V_DRAFT, 0}, {V_COLOR, 1}, {0, 2}, {1, 3}, {2, 4}};
/* 2 → 0 and 2 → 1: Mailbox's own */
static const zgrt_group g20[] = {{2, 0, 2, 2, 3}}, g21[] = {{2, 0, 1, 2, 3}};
static const zgrt_pair v20[] = {{0, 2}, {1, 3}}, v21[] = {{0, 0}, {1, 1}};
static const zgrt_pair vv20[] = {{V_COUNT, 2}, {V_DATA, 3}, {V_OK, 4}};
static const zgrt_pair vv21[] = {{V_COUNT, 0}, {V_DATA, 1}, {V_OK, 2}};
static const zgrt_edge edges3[] = {
    {0, 1, 1, 2, 3, 0, g01, v01, vv01}, {0, 2, 0, 0, 0, 0, NULL, NULL, NULL},
    {1, 0, 2, 4, 5, 0, g10, v10, vv10}, {1, 2, 0, 0, 0, 0, NULL, NULL, NULL},
    {2, 0, 1, 2, 3, 0, g20, v20, vv20}, {2, 1, 1, 2, 3, 0, g21, v21, vv21},
};
static const int32_t vc_user2[] = {0, 1}, vc_writer2[] = {1};
static const zgrt_slot views_user2[] = {{1, 1}, {1, 4}};
static const zgrt_slot varviews_user2[] = {{1, V_DRAFT}, {1, V_COLOR}};
static const zgrt_keep keeps2[] = {
    {2, 2, 2, 2, ev_user, vc_user2, views_user2, varviews_user2},
    {2, 1, 0, 0, ev_writer, vc_writer2, NULL, NULL},
};
static const zgrt_group g10_2[] = {{1, 0, 1, 2, 2}};
static const zgrt_pair v10_2[] = {{0, 0}, {1, 1}}, vv10_2[] = {{V_DRAFT, 0}, {V_COLOR, 1}};
static const zgrt_edge edges2[] = {
    {0, 1, 0, 0, 0, 0, NULL, NULL, NULL},
    {1, 0, 1, 2, 2, 0, g10_2, v10_2, vv10_2},
};

#define PROG(wf, nl, names, nv, mon, k, e, ne)                                                   \
    {                                                                                            \
        .abi_version = ZGRT_ABI_VERSION, .nlifelines = (nl), .source = "test.zg",                \
        .workflow = (wf), .lifelines = (names), .nvars = (nv), .nenums = 2, .vars = vars,        \
        .enums = enums, .nchans = 2, .ntags = 3, .chans = chans, .tags = tags, .monitor = (mon), \
        .nsubs = 5, .keeps = (k), .nedges = (ne), .edges = (ne) ? (e) : NULL,                    \
    }

#define NE(e) (int32_t)(sizeof e / sizeof e[0])
const zgrt_program t_prog3 = PROG("hello", 3, lifelines3, NVARS, 1, keeps3, edges3, NE(edges3));
const zgrt_program t_prog3_nomon = PROG("hello", 3, lifelines3, NVARS, 0, NULL, NULL, 0);
const zgrt_program t_prog2 = PROG("hello", 2, lifelines2, NVARS, 1, keeps2, edges2, NE(edges2));
const zgrt_program t_prog2_other =
    PROG("other", 2, lifelines2, NVARS, 1, keeps2, edges2, NE(edges2));
const zgrt_program t_prog2_build =
    PROG("hello", 2, lifelines2, NVARS - 1, 1, keeps2, edges2, NE(edges2));
const zgrt_program t_prog2_code = {.abi_version = ZGRT_ABI_VERSION,
                                   .nlifelines = 2,
                                   .source = "test.zg",
                                   .workflow = "hello",
                                   .lifelines = lifelines2,
                                   .nvars = NVARS,
                                   .nenums = 2,
                                   .vars = vars,
                                   .enums = enums,
                                   .nchans = 2,
                                   .ntags = 3,
                                   .chans = chans,
                                   .tags = tags,
                                   .monitor = 1,
                                   .nsubs = 5,
                                   .keeps = keeps2,
                                   .nedges = NE(edges2),
                                   .edges = edges2,
                                   .fingerprint = "0123abcd"};

const zri_secret t_secret = {"the tests' secret, 32 bytes long", 32};
const zri_secret t_other_secret = {"another secret, also 32 bytes...", 32};

void t_self(tw_self *me, const zgrt_program *p, int index, const zri_secret *s,
            uint32_t heartbeat_ms)
{
    memset(me, 0, sizeof *me);
    zri_program_id(p, me->id);
    snprintf(me->workflow, sizeof me->workflow, "%s", p->workflow);
    me->nlifelines = (uint64_t)p->nlifelines;
    me->index = (uint64_t)index;
    snprintf(me->name, sizeof me->name, "%s", p->lifelines[index]);
    memcpy(me->secret, s->key, s->len);
    me->secret_len = s->len;
    me->heartbeat_ms = heartbeat_ms;
}

zri_net *t_open(const zgrt_program *p, int self, const char *listen, const char *const *peers,
                zri_heap *h, const zri_net_callbacks *cb, double timeout, char *err, size_t errlen)
{
    zri_net_config c = {listen, peers, &t_secret, timeout, 0, 0, NULL, NULL, NULL};
    return zri_net_open(p, self, &c, h, cb, err, errlen);
}

/* ---- bytes ------------------------------------------------------------------------ */

void tb_u8(tbytes *b, unsigned v)
{
    if (b->n < sizeof b->d) b->d[b->n++] = (uint8_t)v;
}

void tb_varint(tbytes *b, uint64_t v)
{
    do {
        uint8_t x = v & 0x7F;
        v >>= 7;
        tb_u8(b, x | (v ? 0x80 : 0));
    } while (v);
}

void tb_raw(tbytes *b, const void *s, size_t n)
{
    for (size_t i = 0; i < n; i++) tb_u8(b, ((const uint8_t *)s)[i]);
}

void tb_u64be(tbytes *b, uint64_t v)
{
    for (int i = 0; i < 8; i++) tb_u8(b, (unsigned)(v >> (56 - 8 * i)) & 0xFF);
}

void tb_header(tbytes *b, unsigned kind, unsigned flags)
{
    tb_u8(b, 0x5A);
    tb_u8(b, 4); /* frame version */
    tb_u8(b, kind);
    if (kind < 2) tb_u8(b, flags);
}

/* ---- values ------------------------------------------------------------------------- */

zgrt_value tv_int(int64_t i)
{
    zgrt_value v = {ZGRT_INT, {.i = i}};
    return v;
}

zgrt_value tv_float(double f)
{
    zgrt_value v = {ZGRT_FLOAT, {.f = f}};
    return v;
}

zgrt_value tv_bool(int b)
{
    zgrt_value v = {ZGRT_BOOL, {.i = b}};
    return v;
}

zgrt_value tv_enum(int e, int member)
{
    zgrt_value v = {ZGRT_ENUM, {.i = ((int64_t)e << 32) | member}};
    return v;
}

zgrt_value tv_str(zri_heap *h, const char *s)
{
    zgrt_value v = {ZGRT_STR, {.s = zri_str(h, s, strlen(s))}};
    return v;
}

zgrt_value tv_json(zri_heap *h, const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
    if (!j) {
        fprintf(stderr, "bad test json %s: %s\n", text, e.text);
        abort();
    }
    zgrt_value v = {ZGRT_JSON, {.j = zri_json_keep(h, j)}};
    json_decref(j);
    return v;
}

int tv_eq(const zgrt_value *a, const zgrt_value *b)
{
    if (a->tag != b->tag) return 0;
    switch (a->tag) {
    case ZGRT_UNDEF: return 1;
    case ZGRT_FLOAT: return memcmp(&a->u.f, &b->u.f, sizeof(double)) == 0;
    case ZGRT_STR:
        return a->u.s->len == b->u.s->len &&
               !memcmp(a->u.s->data, b->u.s->data, (size_t)a->u.s->len) &&
               a->u.s->data[a->u.s->len] == 0 && b->u.s->data[b->u.s->len] == 0;
    case ZGRT_JSON: return json_equal(a->u.j, b->u.j);
    default: return a->u.i == b->u.i;
    }
}

/* ---- sink ------------------------------------------------------------------------------ */

static void sink_deliver(void *user, zri_msg *m)
{
    sink *s = user;
    pthread_mutex_lock(&s->mu);
    m->next = NULL;
    if (s->tail)
        s->tail->next = m;
    else
        s->head = m;
    s->tail = m;
    s->nmsgs++;
    if (m->from >= 0 && m->from < 4 && m->chan >= 0 && m->chan < 8)
        __atomic_store_n(&s->got[m->from][m->chan], m->seq, __ATOMIC_RELAXED);
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void sink_fail(void *user, const char *msg)
{
    sink *s = user;
    pthread_mutex_lock(&s->mu);
    if (s->nfails < 8) snprintf(s->fails[s->nfails], sizeof s->fails[0], "%s", msg);
    if (!s->nfails) s->fail_thread = pthread_self();
    s->nfails++;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static zri_msg *sink_block(void *user, int32_t nvals, int32_t from, int32_t to, int32_t chan,
                           int form)
{
    sink *s = user;
    (void)to, (void)chan, (void)form;
    pthread_mutex_lock(&s->mu);
    s->blocks++;
    s->block_nvals = nvals;
    s->block_from = from;
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

void sink_init(sink *s)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
}

void sink_destroy(sink *s)
{
    for (zri_msg *m = s->head, *n; m; m = n) {
        n = m->next;
        free(m);
    }
    s->head = s->tail = NULL;
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
}

static void sink_ended_cb(void *user, int l)
{
    sink *s = user;
    pthread_mutex_lock(&s->mu);
    if (l >= 0 && l < 4) s->ended[l]++;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void sink_note(void *user, const char *msg)
{
    sink *s = user;
    pthread_mutex_lock(&s->mu);
    if (s->nnotes < 32) snprintf(s->notes[s->nnotes], sizeof s->notes[0], "%s", msg);
    s->nnotes++;
    pthread_mutex_unlock(&s->mu);
}

static int64_t sink_received(void *user, int32_t from, int32_t chan)
{
    sink *s = user;
    if (from < 0 || from >= 4 || chan < 0 || chan >= 8) return 0;
    return __atomic_load_n(&s->got[from][chan], __ATOMIC_RELAXED);
}

zri_net_callbacks sink_stream_callbacks(sink *s)
{
    zri_net_callbacks cb = {sink_deliver,  sink_fail, sink_ended_cb, sink_note,
                            sink_received, s,         sink_block};
    return cb;
}

zri_net_callbacks sink_callbacks(sink *s)
{
    zri_net_callbacks cb = {sink_deliver, sink_fail, sink_ended_cb, sink_note, NULL, s, sink_block};
    return cb;
}

int sink_note_count(sink *s)
{
    pthread_mutex_lock(&s->mu);
    int n = s->nnotes;
    pthread_mutex_unlock(&s->mu);
    return n;
}

int sink_has_note(sink *s, const char *text)
{
    int found = 0;
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < s->nnotes && i < 32; i++)
        if (strstr(s->notes[i], text)) found = 1;
    pthread_mutex_unlock(&s->mu);
    return found;
}

int sink_ended(sink *s, int l)
{
    pthread_mutex_lock(&s->mu);
    int n = s->ended[l];
    pthread_mutex_unlock(&s->mu);
    return n;
}

static void abs_deadline(struct timespec *ts, double timeout)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += (time_t)timeout;
    ts->tv_nsec += (long)((timeout - (double)(time_t)timeout) * 1e9);
    if (ts->tv_nsec >= 1000000000L) ts->tv_sec++, ts->tv_nsec -= 1000000000L;
}

zri_msg *sink_pop(sink *s, double timeout)
{
    struct timespec ts;
    abs_deadline(&ts, timeout);
    pthread_mutex_lock(&s->mu);
    while (!s->head) {
        if (pthread_cond_timedwait(&s->cv, &s->mu, &ts) == ETIMEDOUT) break;
    }
    zri_msg *m = s->head;
    if (m) {
        s->head = m->next;
        if (!s->head) s->tail = NULL;
        m->next = NULL;
    }
    pthread_mutex_unlock(&s->mu);
    return m;
}

int sink_wait_fail(sink *s, double timeout)
{
    struct timespec ts;
    abs_deadline(&ts, timeout);
    pthread_mutex_lock(&s->mu);
    while (!s->nfails) {
        if (pthread_cond_timedwait(&s->cv, &s->mu, &ts) == ETIMEDOUT) break;
    }
    int n = s->nfails;
    pthread_mutex_unlock(&s->mu);
    return n;
}

int sink_fail_count(sink *s)
{
    pthread_mutex_lock(&s->mu);
    int n = s->nfails;
    pthread_mutex_unlock(&s->mu);
    return n;
}

/* ---- opener ------------------------------------------------------------------------------ */

void opener_init(opener *o, const zgrt_program *p, int self, const char *const *addrs,
                 double timeout)
{
    memset(o, 0, sizeof *o);
    o->p = p;
    o->self = self;
    o->timeout = timeout;
    o->secret = &t_secret;
    snprintf(o->listen, sizeof o->listen, "%s", addrs[self]);
    for (int l = 0; l < p->nlifelines && l < 4; l++) {
        if (l == self) continue;
        snprintf(o->peerbuf[l], sizeof o->peerbuf[l], "%s", addrs[l]);
        o->peers[l] = o->peerbuf[l];
    }
    o->heap = zri_heap_new();
    sink_init(&o->s);
}

static void *opener_main(void *arg)
{
    opener *o = arg;
    zri_net_callbacks cb = o->peer_wait > 0 ? sink_stream_callbacks(&o->s) : sink_callbacks(&o->s);
    zri_net_config c = {o->listen,    o->peers, o->secret, o->timeout, o->heartbeat,
                        o->peer_wait, NULL,     NULL,      NULL};
    o->net = zri_net_open(o->p, o->self, &c, o->heap, &cb, o->err, sizeof o->err);
    return NULL;
}

void opener_start(opener *o) { pthread_create(&o->th, NULL, opener_main, o); }

void opener_join(opener *o) { pthread_join(o->th, NULL); }

void opener_finish(opener *o)
{
    if (o->net) zri_net_close(o->net);
    o->net = NULL;
    sink_destroy(&o->s);
    zri_heap_free(o->heap);
    o->heap = NULL;
}

/* ---- misc ----------------------------------------------------------------------------------- */

char *t_tmpdir(void)
{
    char *d = strdup("/tmp/zgcnet-XXXXXX");
    if (!mkdtemp(d)) abort();
    return d;
}

void t_rmdir(char *dir)
{
    DIR *dd = opendir(dir);
    if (dd) {
        struct dirent *e;
        while ((e = readdir(dd))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char path[512];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(dd);
    }
    rmdir(dir);
    free(dir);
}

int t_free_port(void)
{
    /* the kernel may give the port it just gave again once it is closed:
     * never the same one twice in a process (two lifelines' addresses of
     * one test would be one, and a lifeline would dial itself) */
    static int given[256];
    static int ngiven;
    for (;;) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in sa;
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        sa.sin_port = 0;
        socklen_t len = sizeof sa;
        if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
            getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
            abort();
        close(fd);
        int port = ntohs(sa.sin_port), seen = 0;
        for (int i = 0; i < ngiven && !seen; i++) seen = given[i] == port;
        if (seen) continue;
        if (ngiven < (int)(sizeof given / sizeof given[0])) given[ngiven++] = port;
        return port;
    }
}

double t_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
