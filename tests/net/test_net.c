/* Unit tests for the transport (runtime/net/socket.c): delivery in order over
 * Unix-domain and TCP loopback sockets, the handshake and its mismatches,
 * peers that die, garbage from a raw socket, addresses, shutdown. */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "net_test.h"

TestSuite(net, .timeout = 60);

/* ---- raw sockets ---------------------------------------------------------------- */

static struct sockaddr_un unix_sa(const char *path)
{
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    return sa;
}

static int raw_listen(const char *path)
{
    struct sockaddr_un sa = unix_sa(path);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    cr_assert_geq(fd, 0);
    cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0, "bind %s: %s", path,
                 strerror(errno));
    cr_assert_eq(listen(fd, 8), 0);
    return fd;
}

static int raw_accept(int lfd, double timeout)
{
    struct pollfd pf = {lfd, POLLIN, 0};
    cr_assert_eq(poll(&pf, 1, (int)(timeout * 1000)), 1, "nobody connected");
    int fd = accept(lfd, NULL, NULL);
    cr_assert_geq(fd, 0);
    return fd;
}

static int raw_connect(const char *path, double timeout)
{
    struct sockaddr_un sa = unix_sa(path);
    double end = t_now() + timeout;
    for (;;) {
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        cr_assert_geq(fd, 0);
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) return fd;
        close(fd);
        cr_assert_lt(t_now(), end, "cannot connect to %s", path);
        usleep(5000);
    }
}

static void raw_write(int fd, const void *d, size_t n)
{
    const uint8_t *b = d;
    while (n) {
        ssize_t k = send(fd, b, n, MSG_NOSIGNAL);
        cr_assert_gt(k, 0, "send: %s", strerror(errno));
        b += k;
        n -= (size_t)k;
    }
}

/* Writes what the other side still accepts (it may have hung up). */
static void raw_write_maybe(int fd, const void *d, size_t n)
{
    if (send(fd, d, n, MSG_NOSIGNAL) < 0) return;
}

static void raw_read(int fd, void *d, size_t n)
{
    uint8_t *b = d;
    while (n) {
        struct pollfd pf = {fd, POLLIN, 0};
        cr_assert_eq(poll(&pf, 1, 5000), 1, "nothing to read");
        ssize_t k = recv(fd, b, n, 0);
        cr_assert_gt(k, 0, "recv: %s", k ? strerror(errno) : "end of stream");
        b += k;
        n -= (size_t)k;
    }
}

/* Reads one whole frame (length included) into out; returns its size. */
static size_t raw_read_frame(int fd, uint8_t *out, size_t cap)
{
    raw_read(fd, out, 4);
    size_t len = (size_t)out[0] << 24 | (size_t)out[1] << 16 | (size_t)out[2] << 8 | out[3];
    cr_assert_leq(len + 4, cap);
    raw_read(fd, out + 4, len);
    return len + 4;
}

/* Sends a payload with its length. */
static void raw_frame(int fd, const tbytes *b)
{
    uint8_t hdr[4] = {(uint8_t)(b->n >> 24), (uint8_t)(b->n >> 16), (uint8_t)(b->n >> 8),
                      (uint8_t)b->n};
    raw_write(fd, hdr, 4);
    raw_write(fd, b->d, b->n);
}

/* ---- endpoints -------------------------------------------------------------------- */

typedef struct addrs {
    char *dir;
    char a[4][256];
    const char *v[4];
} addrs;

static void unix_addrs(addrs *x, int n)
{
    x->dir = t_tmpdir();
    static const char *names[] = {"a", "b", "c", "d"};
    for (int i = 0; i < n; i++) {
        snprintf(x->a[i], sizeof x->a[i], "unix:%s/%s", x->dir, names[i]);
        x->v[i] = x->a[i];
    }
}

static void tcp_addrs(addrs *x, int n)
{
    x->dir = NULL;
    for (int i = 0; i < n; i++) {
        snprintf(x->a[i], sizeof x->a[i], "tcp:127.0.0.1:%d", t_free_port());
        x->v[i] = x->a[i];
    }
}

static void addrs_free(addrs *x)
{
    if (x->dir) t_rmdir(x->dir);
}

static const char *path_of(const addrs *x, int i) { return x->a[i] + 5; /* after "unix:" */ }

/* Opens every lifeline of p in its own thread; all must succeed. */
static void open_all(opener *o, const zgrt_program *p, const addrs *x)
{
    for (int l = 0; l < p->nlifelines; l++) opener_init(&o[l], p, l, x->v, 10);
    for (int l = 0; l < p->nlifelines; l++) opener_start(&o[l]);
    for (int l = 0; l < p->nlifelines; l++) {
        opener_join(&o[l]);
        cr_assert_not_null(o[l].net, "%s: %s", p->lifelines[l], o[l].err);
    }
}

static zri_msg *make_msg(zri_heap *h, int from, int to, int64_t seq, int big)
{
    zri_msg *m = zri_msg_new(&t_prog3, 3, from, to, ZRI_META_NONE);
    m->kind = ZRI_MSG_USER;
    m->from = from;
    m->to = to;
    m->chan = (int32_t)(seq % 2);
    m->seq = seq;
    char text[64];
    snprintf(text, sizeof text, "message %lld", (long long)seq);
    m->vals[0] = tv_int(seq);
    if (big) {
        size_t n = 200000 + (size_t)seq;
        char *s = malloc(n + 1);
        memset(s, 'a' + (int)(seq % 26), n);
        s[n] = 0;
        m->vals[1] = tv_str(h, s);
        free(s);
    } else {
        m->vals[1] = tv_str(h, text);
    }
    m->vals[2] = tv_json(h, "{\"list\": [1, 2, 3], \"ok\": true}");
    return m;
}

static void check_msg(const zri_msg *m, int from, int to, int64_t seq)
{
    cr_assert_eq(m->kind, ZRI_MSG_USER);
    cr_assert_eq(m->from, from);
    cr_assert_eq(m->to, to);
    cr_assert_eq(m->seq, seq, "expected message %lld, got %lld", (long long)seq, (long long)m->seq);
    cr_assert_eq(m->nvals, 3);
    cr_assert_eq(m->vals[0].u.i, seq);
    cr_assert_eq(m->vals[1].tag, ZGRT_STR);
    cr_assert_eq(m->vals[2].tag, ZGRT_JSON);
    cr_assert(json_is_object((json_t *)m->vals[2].u.j));
}

typedef struct sender {
    opener *o;
    int to, count;
    pthread_t th;
} sender;

static void *sender_main(void *arg)
{
    sender *s = arg;
    zri_heap *h = zri_heap_new();
    for (int i = 1; i <= s->count; i++) {
        zri_msg *m = make_msg(h, s->o->self, s->to, i, i % 97 == 0);
        char err[512];
        int rc = zri_net_send(s->o->net, m, err, sizeof err);
        free(m);
        if (rc == 0 && i % 7 == 0) rc = zri_net_flush(s->o->net, err, sizeof err);
        if (rc < 0) {
            fprintf(stderr, "send failed: %s\n", err);
            abort();
        }
    }
    char err[512];
    if (zri_net_flush(s->o->net, err, sizeof err) < 0) {
        fprintf(stderr, "flush failed: %s\n", err);
        abort();
    }
    zri_heap_free(h);
    return NULL;
}

/* Both directions at once, many messages, some larger than the socket
 * buffers; then one side closes and the other sees no failure. */
static void exchange(const zgrt_program *p, addrs *x)
{
    opener o[3];
    open_all(o, p, x);
    int count = 600;
    sender s[3][3];
    for (int a = 0; a < p->nlifelines; a++)
        for (int b = 0; b < p->nlifelines; b++)
            if (a != b) {
                s[a][b] = (sender){&o[a], b, count, 0};
                pthread_create(&s[a][b].th, NULL, sender_main, &s[a][b]);
            }
    /* per sender, the messages arrive in order */
    for (int b = 0; b < p->nlifelines; b++) {
        int64_t next[3] = {1, 1, 1};
        for (int k = 0; k < count * (p->nlifelines - 1); k++) {
            zri_msg *m = sink_pop(&o[b].s, 20);
            cr_assert_not_null(m, "%s: message %d missing", p->lifelines[b], k);
            cr_assert_neq(m->from, b);
            check_msg(m, m->from, b, next[m->from]++);
            free(m);
        }
    }
    for (int a = 0; a < p->nlifelines; a++)
        for (int b = 0; b < p->nlifelines; b++)
            if (a != b) pthread_join(s[a][b].th, NULL);

    /* lifeline 0 ends first: the others must not see a failure */
    zri_net_close(o[0].net);
    o[0].net = NULL;
    usleep(200000);
    for (int l = 0; l < p->nlifelines; l++) {
        cr_assert_eq(sink_fail_count(&o[l].s), 0, "%s: %s", p->lifelines[l], o[l].s.fails[0]);
        cr_assert_null(sink_pop(&o[l].s, 0.01));
    }
    for (int l = 0; l < p->nlifelines; l++) opener_finish(&o[l]);
    if (x->dir) {
        struct stat st;
        for (int l = 0; l < p->nlifelines; l++)
            cr_assert_neq(stat(path_of(x, l), &st), 0, "%s left behind", path_of(x, l));
    }
}

Test(net, unix_two_lifelines)
{
    addrs x;
    unix_addrs(&x, 2);
    exchange(&t_prog2, &x);
    addrs_free(&x);
}

Test(net, tcp_two_lifelines)
{
    addrs x;
    tcp_addrs(&x, 2);
    exchange(&t_prog2, &x);
    addrs_free(&x);
}

Test(net, unix_three_lifelines)
{
    addrs x;
    unix_addrs(&x, 3);
    exchange(&t_prog3, &x);
    addrs_free(&x);
}

Test(net, tcp_three_lifelines)
{
    addrs x;
    tcp_addrs(&x, 3);
    exchange(&t_prog3, &x);
    addrs_free(&x);
}

Test(net, control_and_metadata)
{
    addrs x;
    unix_addrs(&x, 2);
    opener o[2];
    open_all(o, &t_prog2, &x);
    zri_msg *m = zri_msg_new(&t_prog2, 0, 1, 0, ZRI_META_EDGE);
    m->kind = ZRI_MSG_CTL;
    m->chan = 1, m->seq = 5, m->tag = 2, m->value = 1;
    m->vc[0] = 8;                  /* vc[Writer], the edge's one clock entry */
    m->views[E10_NVIEWS2 - 1] = 1; /* (Writer, 4) */
    m->varviews[VV_WRITER_DRAFT] = tv_str(o[1].heap, "seen");
    char err[256];
    cr_assert_eq(zri_net_send(o[1].net, m, err, sizeof err), 0, "%s", err);
    cr_assert_eq(zri_net_flush(o[1].net, err, sizeof err), 0, "%s", err);
    free(m);
    zri_msg *r = sink_pop(&o[0].s, 5);
    cr_assert_not_null(r);
    cr_assert_eq(r->kind, ZRI_MSG_CTL);
    cr_assert_eq(r->tag, 2);
    cr_assert_eq(r->value, 1);
    cr_assert_eq(r->has_meta, ZRI_META_EDGE);
    cr_assert_eq(r->nvc, 1);
    cr_assert_eq(r->vc[0], 8);
    cr_assert_eq(r->views[E10_NVIEWS2 - 1], 1);
    cr_assert_eq(r->views[E10_NVIEWS2 - 2], 0);
    cr_assert_str_eq(r->varviews[VV_WRITER_DRAFT].u.s->data, "seen");
    cr_assert_eq(r->varviews[VV_WRITER_COLOR].tag, ZGRT_UNDEF);
    free(r);
    opener_finish(&o[1]);
    opener_finish(&o[0]);
    addrs_free(&x);
}

/* Sends are buffered until a flush; closing writes what is left before
 * BYE, so the peer gets every message and sees a normal end. */
Test(net, close_writes_buffered_frames)
{
    addrs x;
    unix_addrs(&x, 2);
    opener o[2];
    open_all(o, &t_prog2, &x);
    char err[512];
    for (int i = 1; i <= 3; i++) {
        zri_msg *m = make_msg(o[1].heap, 1, 0, i, 0);
        cr_assert_eq(zri_net_send(o[1].net, m, err, sizeof err), 0, "%s", err);
        free(m);
    }
    /* nothing was written yet */
    cr_assert_null(sink_pop(&o[0].s, 0.2));
    zri_net_close(o[1].net);
    o[1].net = NULL;
    for (int i = 1; i <= 3; i++) {
        zri_msg *m = sink_pop(&o[0].s, 5);
        cr_assert_not_null(m, "message %d missing", i);
        check_msg(m, 1, 0, i);
        free(m);
    }
    cr_assert_eq(sink_wait_fail(&o[0].s, 0.3), 0, "%s", o[0].s.fails[0]);
    opener_finish(&o[1]);
    opener_finish(&o[0]);
    addrs_free(&x);
}

Test(net, send_refuses_bad_messages)
{
    addrs x;
    unix_addrs(&x, 2);
    opener o[2];
    open_all(o, &t_prog2, &x);
    zri_msg *m = zri_msg_new(&t_prog2, 1, 0, 1, ZRI_META_NONE);
    m->kind = ZRI_MSG_USER;
    m->from = 0, m->to = 1, m->seq = 1;
    m->vals[0] = tv_float(NAN);
    char err[512];
    cr_assert_eq(zri_net_send(o[0].net, m, err, sizeof err), -1);
    cr_assert(strstr(err, "cannot send a message to lifeline Writer"), "%s", err);
    m->to = 0;
    cr_assert_eq(zri_net_send(o[0].net, m, err, sizeof err), -1);
    cr_assert_str_eq(err, "cannot send to lifeline index 0");
    free(m);
    opener_finish(&o[0]);
    opener_finish(&o[1]);
    addrs_free(&x);
}

/* ---- peers that die ----------------------------------------------------------------------- */

/* Lifeline Writer in a child process: opens, sends n messages to User,
 * then ends without BYE (_exit) or waits to be killed. */
static pid_t writer_child(const addrs *x, int n, int wait_for_kill)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid) return pid;
    zri_heap *h = zri_heap_new();
    sink s;
    sink_init(&s);
    zri_net_callbacks cb = sink_callbacks(&s);
    char err[512];
    zri_net *n1 = zri_net_open(&t_prog2, 1, x->v[1], x->v, h, &cb, 10, err, sizeof err);
    if (!n1) {
        fprintf(stderr, "child: %s\n", err);
        _exit(3);
    }
    for (int i = 1; i <= n; i++) {
        zri_msg *m = make_msg(h, 1, 0, i, 0);
        if (zri_net_send(n1, m, err, sizeof err) < 0) _exit(4);
        free(m);
    }
    if (zri_net_flush(n1, err, sizeof err) < 0) _exit(4);
    if (wait_for_kill)
        for (;;) pause();
    _exit(0);
}

static void peer_dies(addrs *x, int kill_it)
{
    pid_t pid = writer_child(x, 5, kill_it);
    opener o;
    opener_init(&o, &t_prog2, 0, x->v, 10);
    opener_start(&o);
    opener_join(&o);
    cr_assert_not_null(o.net, "%s", o.err);
    for (int i = 1; i <= 5; i++) {
        zri_msg *m = sink_pop(&o.s, 10);
        cr_assert_not_null(m, "message %d missing", i);
        check_msg(m, 1, 0, i);
        free(m);
    }
    if (kill_it) kill(pid, SIGKILL);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    if (!kill_it) cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);

    cr_assert_eq(sink_wait_fail(&o.s, 10), 1);
    char want[600];
    snprintf(want, sizeof want,
             "lifeline Writer (%s) closed its connection without BYE: its process ended "
             "abnormally or was killed",
             x->v[1]);
    if (strcmp(o.s.fails[0], want)) /* TCP may see a reset instead of the end */
        cr_assert(!strncmp(o.s.fails[0], "lost the connection from lifeline Writer", 40), "%s",
                  o.s.fails[0]);

    /* sending to the dead peer fails (at the latest on the second try) */
    zri_msg *m = make_msg(o.heap, 0, 1, 1, 0);
    char err[512];
    int rc = zri_net_send(o.net, m, err, sizeof err);
    if (rc == 0) rc = zri_net_flush(o.net, err, sizeof err);
    if (rc == 0) {
        usleep(100000);
        rc = zri_net_send(o.net, m, err, sizeof err);
        if (rc == 0) rc = zri_net_flush(o.net, err, sizeof err);
    }
    free(m);
    cr_assert_eq(rc, -1);
    char prefix[300];
    snprintf(prefix, sizeof prefix, "lost the connection to lifeline Writer (%s): ", x->v[1]);
    cr_assert(!strncmp(err, prefix, strlen(prefix)), "%s", err);

    double t0 = t_now();
    opener_finish(&o);
    cr_assert_lt(t_now() - t0, 2.0, "close took too long");
}

Test(net, unix_peer_exits_without_bye)
{
    addrs x;
    unix_addrs(&x, 2);
    peer_dies(&x, 0);
    addrs_free(&x);
}

Test(net, unix_peer_killed)
{
    addrs x;
    unix_addrs(&x, 2);
    peer_dies(&x, 1);
    addrs_free(&x);
}

Test(net, tcp_peer_killed)
{
    addrs x;
    tcp_addrs(&x, 2);
    peer_dies(&x, 1);
    addrs_free(&x);
}

/* ---- a hand-driven peer ---------------------------------------------------------------- */

/* The hello lifeline self of p sends to lifeline to, captured from a real
 * endpoint.  An accepting endpoint answers with the same bytes. */
static size_t capture_hello(const zgrt_program *p, int self, int to, uint8_t *out, size_t cap)
{
    char *dir = t_tmpdir();
    char peer[256], me[256];
    snprintf(peer, sizeof peer, "%s/peer", dir);
    snprintf(me, sizeof me, "unix:%s/me", dir);
    const char *v[4] = {0};
    v[self] = me;
    char peer_addr[300];
    snprintf(peer_addr, sizeof peer_addr, "unix:%s", peer);
    v[to] = peer_addr;
    int lfd = raw_listen(peer);
    opener o;
    opener_init(&o, p, self, v, 5);
    opener_start(&o);
    int fd = raw_accept(lfd, 5);
    size_t n = raw_read_frame(fd, out, cap);
    close(fd); /* the endpoint gives up: the handshake was cut */
    opener_join(&o);
    cr_assert_null(o.net);
    opener_finish(&o);
    close(lfd);
    t_rmdir(dir);
    return n;
}

typedef struct fake {
    addrs x;
    opener user; /* the real User endpoint */
    int lfd;     /* the fake Writer's listening socket */
    int in;      /* User -> fake Writer */
    int out;     /* fake Writer -> User */
    uint8_t hello[4200];
    size_t hello_len;
} fake;

/* User (real) and Writer (played by the test) of t_prog2, connected. */
static void fake_open(fake *f)
{
    memset(f, 0, sizeof *f);
    f->hello_len = capture_hello(&t_prog2, 1, 0, f->hello, sizeof f->hello);
    unix_addrs(&f->x, 2);
    f->lfd = raw_listen(path_of(&f->x, 1));
    opener_init(&f->user, &t_prog2, 0, f->x.v, 10);
    opener_start(&f->user);
    uint8_t buf[4200];
    f->in = raw_accept(f->lfd, 5);
    raw_read_frame(f->in, buf, sizeof buf); /* User's hello */
    raw_write(f->in, f->hello, f->hello_len);
    f->out = raw_connect(path_of(&f->x, 0), 5);
    raw_write(f->out, f->hello, f->hello_len);
    raw_read_frame(f->out, buf, sizeof buf); /* User's answer */
    opener_join(&f->user);
    cr_assert_not_null(f->user.net, "%s", f->user.err);
}

static void fake_close(fake *f)
{
    opener_finish(&f->user);
    close(f->in);
    close(f->out);
    close(f->lfd);
    addrs_free(&f->x);
}

static void expect_fail(fake *f, const char *msg)
{
    cr_assert_eq(sink_wait_fail(&f->user.s, 5), 1);
    usleep(50000);
    cr_assert_eq(sink_fail_count(&f->user.s), 1);
    cr_assert_str_eq(f->user.s.fails[0], msg);
}

/* A user frame Writer -> User on main with the given values (raw bytes). */
static void writer_frame(tbytes *b, int64_t seq, unsigned nvals, const void *vals, size_t n)
{
    b->n = 0;
    tb_header(b, 0, 0);
    tb_varint(b, 1);
    tb_varint(b, 0);
    tb_varint(b, 0);
    tb_varint(b, (uint64_t)seq);
    tb_varint(b, nvals);
    tb_raw(b, vals, n);
}

Test(net, garbage_bad_magic)
{
    fake f;
    fake_open(&f);
    raw_write(f.out, "\0\0\0\5hello", 9);
    expect_fail(&f, "malformed frame from Writer: bad magic byte 0x68 (not a zgc frame)");
    fake_close(&f);
}

Test(net, garbage_invalid_utf8_after_good_frame)
{
    fake f;
    fake_open(&f);
    tbytes b;
    writer_frame(&b, 1, 1, "\x04\x02ok", 4);
    raw_frame(f.out, &b);
    writer_frame(&b, 2, 2, "\x04\x02ok\x04\x02\xc3\x28", 8);
    raw_frame(f.out, &b);
    writer_frame(&b, 3, 1, "\x04\x02ok", 4); /* never read */
    uint8_t hdr[4] = {0, 0, 0, (uint8_t)b.n};
    raw_write_maybe(f.out, hdr, 4);
    raw_write_maybe(f.out, b.d, b.n);
    zri_msg *m = sink_pop(&f.user.s, 5);
    cr_assert_not_null(m);
    cr_assert_eq(m->seq, 1);
    cr_assert_str_eq(m->vals[0].u.s->data, "ok");
    free(m);
    expect_fail(&f, "malformed frame from Writer: string value 2 is not valid UTF-8");
    cr_assert_null(sink_pop(&f.user.s, 0.1));
    fake_close(&f);
}

Test(net, garbage_oversized_length)
{
    fake f;
    fake_open(&f);
    raw_write(f.out, "\xff\xff\xff\xff", 4);
    expect_fail(&f, "malformed frame from Writer: frame length 4294967295 exceeds the limit of "
                    "67108864 bytes");
    fake_close(&f);
}

Test(net, garbage_zero_length)
{
    fake f;
    fake_open(&f);
    raw_write(f.out, "\0\0\0\0", 4);
    expect_fail(&f, "malformed frame from Writer: frame length 0");
    fake_close(&f);
}

Test(net, unexpected_sender)
{
    fake f;
    fake_open(&f);
    tbytes b = {.n = 0};
    tb_header(&b, 0, 0);
    tb_varint(&b, 0); /* claims to be User */
    tb_varint(&b, 1);
    tb_varint(&b, 0);
    tb_varint(&b, 1);
    tb_varint(&b, 0);
    raw_frame(f.out, &b);
    expect_fail(&f, "unexpected frame from Writer: it claims to come from lifeline User");
    fake_close(&f);
}

Test(net, unexpected_second_hello)
{
    fake f;
    fake_open(&f);
    raw_write(f.out, f.hello, f.hello_len);
    expect_fail(&f, "malformed frame from Writer: unexpected hello frame");
    fake_close(&f);
}

Test(net, end_in_the_middle_of_a_frame)
{
    fake f;
    fake_open(&f);
    tbytes b;
    writer_frame(&b, 1, 1, "\x04\x02ok", 4);
    raw_write(f.out, "\0\0\0\x20", 4);
    raw_write(f.out, b.d, 5);
    shutdown(f.out, SHUT_WR);
    char want[600];
    snprintf(want, sizeof want,
             "lifeline Writer (%s) closed its connection without BYE: its process ended "
             "abnormally or was killed",
             f.x.v[1]);
    expect_fail(&f, want);
    fake_close(&f);
}

Test(net, partial_writes_are_reassembled)
{
    fake f;
    fake_open(&f);
    tbytes b;
    writer_frame(&b, 7, 2, "\x04\x05hello\x02\0\0\0\0\0\0\0\x2a", 16);
    uint8_t hdr[4] = {0, 0, 0, (uint8_t)b.n};
    raw_write(f.out, hdr, 1);
    usleep(20000);
    raw_write(f.out, hdr + 1, 3);
    for (size_t i = 0; i < b.n; i++) {
        usleep(2000);
        raw_write(f.out, b.d + i, 1);
    }
    zri_msg *m = sink_pop(&f.user.s, 5);
    cr_assert_not_null(m);
    cr_assert_eq(m->seq, 7);
    cr_assert_str_eq(m->vals[0].u.s->data, "hello");
    cr_assert_eq(m->vals[1].u.i, 42);
    free(m);
    cr_assert_eq(sink_fail_count(&f.user.s), 0);
    fake_close(&f);
}

Test(net, bye_then_close_is_no_failure)
{
    fake f;
    fake_open(&f);
    tbytes b;
    writer_frame(&b, 1, 1, "\x04\x02ok", 4);
    raw_frame(f.out, &b);
    b.n = 0;
    tb_header(&b, 2, 0);
    tb_varint(&b, 1);
    tb_varint(&b, 0);
    raw_frame(f.out, &b);
    raw_write_maybe(f.out, "after the end", 13); /* ignored */
    close(f.out);
    f.out = -1;
    zri_msg *m = sink_pop(&f.user.s, 5);
    cr_assert_not_null(m);
    free(m);
    usleep(200000);
    cr_assert_eq(sink_fail_count(&f.user.s), 0, "%s", f.user.s.fails[0]);

    /* User's close says BYE to Writer */
    zri_net_close(f.user.net);
    f.user.net = NULL;
    uint8_t buf[64];
    size_t n = raw_read_frame(f.in, buf, sizeof buf);
    cr_assert_eq(n, 4 + 5);
    cr_assert_eq(buf[6], ZRI_MSG_BYE);
    cr_assert_eq(recv(f.in, buf, sizeof buf, 0), 0); /* then the end */
    fake_close(&f);
}

/* ---- handshake mismatches ------------------------------------------------------------ */

static void expect_one_of(const opener *o, const char *a, const char *b)
{
    cr_assert_null(o->net);
    cr_assert(!strcmp(o->err, a) || !strcmp(o->err, b), "got: %s\nexpected: %s\n      or: %s",
              o->err, a, b);
}

Test(net, hello_other_workflow)
{
    addrs x;
    unix_addrs(&x, 2);
    opener u, w;
    opener_init(&u, &t_prog2, 0, x.v, 3);
    opener_init(&w, &t_prog2_other, 1, x.v, 3);
    opener_start(&u);
    opener_start(&w);
    opener_join(&u);
    opener_join(&w);
    char a[600], b[600];
    snprintf(a, sizeof a,
             "peer at %s is lifeline Writer of workflow other, expected lifeline Writer of "
             "workflow hello",
             x.v[1]);
    snprintf(b, sizeof b,
             "lifeline Writer of workflow other connected to %s, which is lifeline User of "
             "workflow hello",
             x.v[0]);
    expect_one_of(&u, a, b);
    snprintf(a, sizeof a,
             "peer at %s is lifeline User of workflow hello, expected lifeline User of "
             "workflow other",
             x.v[0]);
    snprintf(b, sizeof b,
             "lifeline User of workflow hello connected to %s, which is lifeline Writer of "
             "workflow other",
             x.v[1]);
    expect_one_of(&w, a, b);
    opener_finish(&u);
    opener_finish(&w);
    addrs_free(&x);
}

Test(net, hello_other_build)
{
    addrs x;
    unix_addrs(&x, 2);
    opener u, w;
    opener_init(&u, &t_prog2, 0, x.v, 3);
    opener_init(&w, &t_prog2_build, 1, x.v, 3);
    opener_start(&u);
    opener_start(&w);
    opener_join(&u);
    opener_join(&w);
    char a[600], b[600];
    snprintf(a, sizeof a,
             "peer at %s runs a different build of workflow hello (program identity mismatch)",
             x.v[1]);
    snprintf(b, sizeof b,
             "lifeline Writer connected to %s with a different build of workflow hello (program "
             "identity mismatch)",
             x.v[0]);
    expect_one_of(&u, a, b);
    cr_assert_null(w.net);
    opener_finish(&u);
    opener_finish(&w);
    addrs_free(&x);
}

Test(net, hello_wrong_lifeline_at_address)
{
    addrs x;
    unix_addrs(&x, 3);
    const char *swapped[3] = {x.v[0], x.v[2], x.v[1]};
    opener o[3];
    opener_init(&o[0], &t_prog3, 0, swapped, 2);
    opener_init(&o[1], &t_prog3, 1, x.v, 2);
    opener_init(&o[2], &t_prog3, 2, x.v, 2);
    for (int l = 0; l < 3; l++) opener_start(&o[l]);
    for (int l = 0; l < 3; l++) opener_join(&o[l]);
    char want[600];
    snprintf(want, sizeof want,
             "peer at %s is lifeline Mailbox of workflow hello, expected lifeline Writer of "
             "workflow hello",
             x.v[2]);
    cr_assert_null(o[0].net);
    cr_assert_str_eq(o[0].err, want);
    snprintf(want, sizeof want,
             "lifeline User connected to %s expecting lifeline Writer, but this is lifeline "
             "Mailbox",
             x.v[2]);
    cr_assert_null(o[2].net);
    cr_assert_str_eq(o[2].err, want);
    cr_assert_null(o[1].net);
    for (int l = 0; l < 3; l++) opener_finish(&o[l]);
    addrs_free(&x);
}

Test(net, hello_duplicate_lifeline)
{
    uint8_t hello[4200], buf[4200];
    size_t hn = capture_hello(&t_prog2, 1, 0, hello, sizeof hello);
    addrs x;
    unix_addrs(&x, 2);
    int lfd = raw_listen(path_of(&x, 1));
    opener u;
    opener_init(&u, &t_prog2, 0, x.v, 5);
    opener_start(&u);
    int in = raw_accept(lfd, 5);
    raw_read_frame(in, buf, sizeof buf);
    /* two connections claim to be Writer before User gets its answer */
    int c1 = raw_connect(path_of(&x, 0), 5), c2 = raw_connect(path_of(&x, 0), 5);
    raw_write(c1, hello, hn);
    raw_read_frame(c1, buf, sizeof buf);
    raw_write(c2, hello, hn);
    raw_read_frame(c2, buf, sizeof buf); /* refused */
    opener_join(&u);
    char want[600];
    snprintf(want, sizeof want, "two connections to %s claim to be lifeline Writer", x.v[0]);
    cr_assert_null(u.net);
    cr_assert_str_eq(u.err, want);
    opener_finish(&u);
    close(c1);
    close(c2);
    close(in);
    close(lfd);
    addrs_free(&x);
}

Test(net, peer_is_not_zgc)
{
    addrs x;
    unix_addrs(&x, 2);
    int lfd = raw_listen(path_of(&x, 1));
    opener u;
    opener_init(&u, &t_prog2, 0, x.v, 5);
    opener_start(&u);
    int in = raw_accept(lfd, 5);
    uint8_t buf[4200];
    raw_read_frame(in, buf, sizeof buf);
    raw_write(in, "\0\0\0\4HTTP", 8);
    opener_join(&u);
    char want[600];
    snprintf(want, sizeof want, "the peer at %s is not a zgc lifeline (bad magic)", x.v[1]);
    cr_assert_null(u.net);
    cr_assert_str_eq(u.err, want);
    opener_finish(&u);
    close(in);
    close(lfd);
    addrs_free(&x);
}

Test(net, garbage_instead_of_hello)
{
    addrs x;
    unix_addrs(&x, 2);
    int lfd = raw_listen(path_of(&x, 1));
    opener u;
    opener_init(&u, &t_prog2, 0, x.v, 5);
    opener_start(&u);
    int in = raw_accept(lfd, 5); /* User waits for our answer... */
    int c = raw_connect(path_of(&x, 0), 5);
    raw_write(c, "GET / HTTP/1.0\r\n\r\n", 18); /* ...and gets this instead */
    opener_join(&u);
    char want[600];
    snprintf(want, sizeof want,
             "an incoming connection on %s is not from a zgc lifeline (bad hello)", x.v[0]);
    cr_assert_null(u.net);
    cr_assert_str_eq(u.err, want);
    opener_finish(&u);
    close(c);
    close(in);
    close(lfd);
    addrs_free(&x);
}

/* ---- timeouts ------------------------------------------------------------------------------ */

Test(net, peer_never_starts)
{
    addrs x;
    unix_addrs(&x, 2);
    opener u;
    opener_init(&u, &t_prog2, 0, x.v, 0.3);
    double t0 = t_now();
    opener_start(&u);
    opener_join(&u);
    cr_assert_lt(t_now() - t0, 1.5);
    char want[600];
    snprintf(want, sizeof want,
             "could not connect to lifeline Writer at %s within 0.3 s: No such file or directory",
             x.v[1]);
    cr_assert_null(u.net);
    cr_assert_str_eq(u.err, want);
    opener_finish(&u);
    struct stat st;
    cr_assert_neq(stat(path_of(&x, 0), &st), 0, "socket file left behind");
    addrs_free(&x);
}

Test(net, tcp_peer_never_starts)
{
    addrs x;
    tcp_addrs(&x, 2);
    opener u;
    opener_init(&u, &t_prog2, 0, x.v, 0.3);
    opener_start(&u);
    opener_join(&u);
    char want[600];
    snprintf(want, sizeof want,
             "could not connect to lifeline Writer at %s within 0.3 s: Connection refused", x.v[1]);
    cr_assert_null(u.net);
    cr_assert_str_eq(u.err, want);
    opener_finish(&u);
    addrs_free(&x);
}

Test(net, peer_never_connects_back)
{
    uint8_t hello[4200], buf[4200];
    size_t hn = capture_hello(&t_prog2, 1, 0, hello, sizeof hello);
    addrs x;
    unix_addrs(&x, 2);
    int lfd = raw_listen(path_of(&x, 1));
    opener u;
    opener_init(&u, &t_prog2, 0, x.v, 0.5);
    opener_start(&u);
    int in = raw_accept(lfd, 5);
    raw_read_frame(in, buf, sizeof buf);
    raw_write(in, hello, hn);
    opener_join(&u);
    char want[600];
    snprintf(want, sizeof want,
             "timed out after 0.5 s waiting for lifeline Writer to connect to %s", x.v[0]);
    cr_assert_null(u.net);
    cr_assert_str_eq(u.err, want);
    opener_finish(&u);
    close(in);
    close(lfd);
    addrs_free(&x);
}

/* ---- addresses --------------------------------------------------------------------------- */

static void bad_listen(const char *addr, const char *peer, const char *msg)
{
    zri_heap *h = zri_heap_new();
    const char *v[2] = {addr, peer};
    char err[512];
    zri_net *n = zri_net_open(&t_prog2, 0, addr, v, h, NULL, 1, err, sizeof err);
    cr_assert_null(n, "%s accepted", addr);
    cr_assert_str_eq(err, msg);
    zri_heap_free(h);
}

Test(net, address_syntax)
{
    const char *ok = "unix:/tmp/zgc-net-unused";
    bad_listen("foo", ok, "bad address 'foo': expected unix:PATH or tcp:HOST:PORT");
    bad_listen("unix:", ok, "bad address 'unix:': empty socket path");
    bad_listen("tcp:127.0.0.1", ok, "bad address 'tcp:127.0.0.1': expected tcp:HOST:PORT");
    bad_listen("tcp::80", ok, "bad address 'tcp::80': empty host");
    bad_listen("tcp:127.0.0.1:0", ok,
               "bad address 'tcp:127.0.0.1:0': the port must be a number from 1 to 65535");
    bad_listen("tcp:127.0.0.1:65536", ok,
               "bad address 'tcp:127.0.0.1:65536': the port must be a number from 1 to 65535");
    bad_listen("tcp:127.0.0.1:8x", ok,
               "bad address 'tcp:127.0.0.1:8x': the port must be a number from 1 to 65535");
    bad_listen("tcp:127.0.0.1:", ok,
               "bad address 'tcp:127.0.0.1:': the port must be a number from 1 to 65535");
    bad_listen("tcp:::1:80", ok,
               "bad address 'tcp:::1:80': write an IPv6 host in brackets, tcp:[::1]:PORT");
    char longpath[300] = "unix:/tmp/";
    memset(longpath + 10, 'x', 200);
    longpath[210] = 0;
    char msg[600];
    snprintf(msg, sizeof msg, "bad address '%s': socket path longer than 107 bytes", longpath);
    bad_listen(longpath, ok, msg);
    bad_listen(ok, NULL, "no address for lifeline Writer");
    bad_listen(ok, "tcp:x", "bad address 'tcp:x': expected tcp:HOST:PORT");

    /* the resolver's own words vary */
    zri_heap *h = zri_heap_new();
    const char *v[2] = {"tcp:no-such-host.invalid:80", ok};
    char err[512];
    cr_assert_null(zri_net_open(&t_prog2, 0, v[0], v, h, NULL, 1, err, sizeof err));
    cr_assert(!strncmp(err, "cannot resolve the host of tcp:no-such-host.invalid:80: ", 56), "%s",
              err);
    zri_heap_free(h);
}

static const zgrt_program *solo(void)
{
    static zgrt_program p;
    p = t_prog2;
    p.nlifelines = 1;
    return &p;
}

Test(net, stale_socket_file_is_replaced)
{
    char *dir = t_tmpdir();
    char path[300], addr[310];
    snprintf(path, sizeof path, "%s/a", dir);
    snprintf(addr, sizeof addr, "unix:%s", path);
    close(raw_listen(path)); /* leaves the socket file behind */
    zri_heap *h = zri_heap_new();
    const char *v[1] = {addr};
    char err[512];
    zri_net *n = zri_net_open(solo(), 0, addr, v, h, NULL, 1, err, sizeof err);
    cr_assert_not_null(n, "%s", err);
    /* (the file goes as soon as every peer is connected: here at once) */
    struct stat st;
    zri_net_close(n);
    cr_assert_neq(stat(path, &st), 0, "socket file left behind");
    zri_heap_free(h);
    t_rmdir(dir);
}

Test(net, listen_refusals)
{
    char *dir = t_tmpdir();
    char path[300], addr[310], want[600];
    snprintf(path, sizeof path, "%s/a", dir);
    snprintf(addr, sizeof addr, "unix:%s", path);
    zri_heap *h = zri_heap_new();
    const char *v[1] = {addr};
    char err[512];

    FILE *f = fopen(path, "w");
    fclose(f);
    cr_assert_null(zri_net_open(solo(), 0, addr, v, h, NULL, 1, err, sizeof err));
    snprintf(want, sizeof want, "cannot listen on %s: the path exists and is not a socket", addr);
    cr_assert_str_eq(err, want);
    cr_assert_eq(access(path, F_OK), 0, "a regular file was removed");
    unlink(path);

    int lfd = raw_listen(path);
    cr_assert_null(zri_net_open(solo(), 0, addr, v, h, NULL, 1, err, sizeof err));
    snprintf(want, sizeof want, "cannot listen on %s: another process is listening there", addr);
    cr_assert_str_eq(err, want);
    close(lfd);

    char taddr[64];
    int port = t_free_port();
    snprintf(taddr, sizeof taddr, "tcp:127.0.0.1:%d", port);
    v[0] = taddr;
    zri_net *n1 = zri_net_open(solo(), 0, taddr, v, h, NULL, 1, err, sizeof err);
    cr_assert_not_null(n1, "%s", err);
    zri_net_close(n1);
    /* a port that another socket listens on: a raw one, because a
     * transport closes its own listening socket on its reader thread once
     * its connections are made (at once here), which made a second
     * zri_net_open on n1's port succeed when that thread ran first */
    int tfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons((uint16_t)port);
    cr_assert_geq(tfd, 0);
    cr_assert_eq(bind(tfd, (struct sockaddr *)&sa, sizeof sa), 0, "bind %s: %s", taddr,
                 strerror(errno));
    cr_assert_eq(listen(tfd, 8), 0);
    cr_assert_null(zri_net_open(solo(), 0, taddr, v, h, NULL, 1, err, sizeof err));
    snprintf(want, sizeof want, "cannot listen on %s: Address already in use", taddr);
    cr_assert_str_eq(err, want);
    close(tfd);

    zri_heap_free(h);
    t_rmdir(dir);
}

/* ---- random bytes after the handshake ------------------------------------------------------ */

/* Whatever a peer sends, the reader ends in a delivery or one failure,
 * never a crash or a hang. */
Test(net, random_garbage)
{
    unsigned seed = 12345;
    for (int round = 0; round < 12; round++) {
        fake f;
        fake_open(&f);
        uint8_t junk[3000];
        size_t n = 1 + (size_t)(rand_r(&seed) % sizeof junk);
        for (size_t i = 0; i < n; i++) junk[i] = (uint8_t)rand_r(&seed);
        if (round % 3 == 0) { /* a plausible length, then garbage */
            junk[0] = 0, junk[1] = 0, junk[2] = (uint8_t)(rand_r(&seed) % 4);
            if (n > 4) junk[4] = 0x5A;
            if (n > 5) junk[5] = 1;
            if (n > 6) junk[6] = (uint8_t)(rand_r(&seed) % 3);
        }
        for (size_t off = 0; off < n;) { /* in random pieces */
            size_t k = 1 + (size_t)(rand_r(&seed) % 700);
            if (k > n - off) k = n - off;
            /* the reader hangs up at the first bad frame */
            if (send(f.out, junk + off, k, MSG_NOSIGNAL) < 0) break;
            off += k;
        }
        close(f.out); /* no BYE: the end must be reported if nothing else was */
        f.out = -1;
        cr_assert_eq(sink_wait_fail(&f.user.s, 5), 1, "round %d: no failure reported", round);
        usleep(20000);
        cr_assert_eq(sink_fail_count(&f.user.s), 1, "round %d", round);
        fake_close(&f);
    }
}
