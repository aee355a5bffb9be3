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
#include <sys/eventfd.h>
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
    zri_net *n1 = t_open(&t_prog2, 1, x->v[1], x->v, h, &cb, 10, err, sizeof err);
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

/* User (real) and Writer (played by the test, wire.c) of t_prog2,
 * connected both ways: in carries User -> Writer, out Writer -> User. */
typedef struct fake {
    addrs x;
    opener user; /* the real User endpoint */
    tw_self me;  /* the fake Writer */
    int lfd;     /* its listening socket */
    tw_conn in, out;
} fake;

/* Accepts User's connection on the fake's listening socket. */
static void fake_accept_user(fake *f)
{
    char why[200];
    int fd = raw_accept(f->lfd, 5);
    cr_assert_eq(tw_accept(&f->in, fd, &f->me, 5, why, sizeof why), 0, "%s", why);
}

static void fake_connect_user(fake *f)
{
    char why[300];
    int fd = raw_connect(path_of(&f->x, 0), 5);
    cr_assert_eq(tw_connect(&f->out, fd, &f->me, 0, 5, why, sizeof why), 0, "%s", why);
}

/* heartbeat: User's --heartbeat (the fake announces the same) */
static void fake_open_hb(fake *f, double heartbeat)
{
    memset(f, 0, sizeof *f);
    t_self(&f->me, &t_prog2, 1, &t_secret, (uint32_t)(heartbeat * 1000));
    unix_addrs(&f->x, 2);
    f->lfd = raw_listen(path_of(&f->x, 1));
    opener_init(&f->user, &t_prog2, 0, f->x.v, 10);
    f->user.heartbeat = heartbeat;
    opener_start(&f->user);
    fake_accept_user(f);
    fake_connect_user(f);
    opener_join(&f->user);
    cr_assert_not_null(f->user.net, "%s", f->user.err);
}

static void fake_open(fake *f) { fake_open_hb(f, 0); }

static void fake_close(fake *f)
{
    opener_finish(&f->user);
    close(f->in.fd);
    if (f->out.fd >= 0) close(f->out.fd);
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

static void fake_send(fake *f, const tbytes *b) { cr_assert_eq(tw_send(&f->out, b->d, b->n), 0); }

Test(net, garbage_bad_magic)
{
    fake f;
    fake_open(&f);
    cr_assert_eq(tw_send(&f.out, (const uint8_t *)"hello", 5), 0);
    expect_fail(&f, "malformed frame from Writer: bad magic byte 0x68 (not a zgc frame)");
    fake_close(&f);
}

Test(net, garbage_invalid_utf8_after_good_frame)
{
    fake f;
    fake_open(&f);
    tbytes b;
    writer_frame(&b, 1, 1, "\x04\x02ok", 4);
    fake_send(&f, &b);
    writer_frame(&b, 2, 2, "\x04\x02ok\x04\x02\xc3\x28", 8);
    fake_send(&f, &b);
    writer_frame(&b, 3, 1, "\x04\x02ok", 4); /* never read */
    uint8_t out[200];
    size_t k = tw_seal(&f.out, b.d, b.n, out);
    raw_write_maybe(f.out.fd, out, k);
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
    raw_write(f.out.fd, "\xff\xff\xff\xff", 4);
    expect_fail(&f, "malformed frame from Writer: frame length 4294967295 exceeds the limit of "
                    "67108880 bytes");
    fake_close(&f);
}

Test(net, garbage_zero_length)
{
    fake f;
    fake_open(&f);
    raw_write(f.out.fd, "\0\0\0\0", 4);
    expect_fail(&f, "malformed frame from Writer: frame length 0");
    fake_close(&f);
}

Test(net, frame_too_short_for_its_tag)
{
    fake f;
    fake_open(&f);
    raw_write(f.out.fd, "\0\0\0\5hello", 9);
    expect_fail(&f, "malformed frame from Writer: 5 bytes, too short");
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
    fake_send(&f, &b);
    expect_fail(&f, "unexpected frame from Writer: it claims to come from lifeline User");
    fake_close(&f);
}

Test(net, unexpected_second_hello)
{
    fake f;
    fake_open(&f);
    cr_assert_eq(tw_send(&f.out, f.out.hello, f.out.hello_len), 0);
    expect_fail(&f, "malformed frame from Writer: unexpected handshake frame (kind 3)");
    fake_close(&f);
}

Test(net, end_in_the_middle_of_a_frame)
{
    fake f;
    fake_open(&f);
    tbytes b;
    writer_frame(&b, 1, 1, "\x04\x02ok", 4);
    raw_write(f.out.fd, "\0\0\0\x20", 4);
    raw_write(f.out.fd, b.d, 5);
    shutdown(f.out.fd, SHUT_WR);
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
    uint8_t out[200];
    size_t k = tw_seal(&f.out, b.d, b.n, out);
    raw_write(f.out.fd, out, 1);
    usleep(20000);
    raw_write(f.out.fd, out + 1, 3);
    for (size_t i = 4; i < k; i++) {
        usleep(2000);
        raw_write(f.out.fd, out + i, 1);
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
    fake_send(&f, &b);
    uint8_t bye[16];
    cr_assert_eq(tw_send(&f.out, bye, tw_bye_payload(1, 0, bye)), 0);
    raw_write_maybe(f.out.fd, "after the end", 13); /* ignored */
    close(f.out.fd);
    f.out.fd = -1;
    zri_msg *m = sink_pop(&f.user.s, 5);
    cr_assert_not_null(m);
    free(m);
    usleep(200000);
    cr_assert_eq(sink_fail_count(&f.user.s), 0, "%s", f.user.s.fails[0]);
    cr_assert_eq(sink_ended(&f.user.s, 1), 1, "the run was not told that Writer ended");

    /* User's close says BYE to Writer, in a tagged frame */
    zri_net_close(f.user.net);
    f.user.net = NULL;
    uint8_t buf[64];
    size_t n;
    cr_assert_eq(tw_recv(&f.in, buf, sizeof buf, &n, 5), 0);
    cr_assert_eq(n, 5);
    cr_assert_eq(buf[2], ZRI_MSG_BYE);
    cr_assert_eq(recv(f.in.fd, buf, sizeof buf, 0), 0); /* then the end */
    fake_close(&f);
}

/* ---- integrity: every frame's tag ------------------------------------------------------ */

static void ok_frame(tbytes *b, int64_t seq) { writer_frame(b, seq, 1, "\x04\x02ok", 4); }

/* The runtime's frame tag (auth.c: HMAC-SHA256 from the key's two
 * precomputed pad states) is the bytes of libcrypto's one-shot HMAC (the
 * tests' wire.c), for payloads across SHA-256's block boundaries, frame
 * numbers of every byte length, and keys of every byte value. */
Test(net, frame_tags_are_hmac_sha256)
{
    uint8_t key[ZRI_HASH_BYTES], payload[300];
    srand(16);
    for (int k = 0; k < 8; k++) {
        for (size_t i = 0; i < sizeof key; i++) key[i] = (uint8_t)(k == 0 ? 0xff : rand());
        char err[200];
        zri_mac *m = zri_mac_new(key, err, sizeof err);
        cr_assert(m, "%s", err);
        for (size_t len = 0; len <= sizeof payload; len += 1 + (len > 130) * 7) {
            for (size_t i = 0; i < len; i++) payload[i] = (uint8_t)rand();
            uint64_t seq = len == 0 ? 0 : (uint64_t)rand() << (len % 40);
            uint8_t got[ZRI_TAG_BYTES], want[TW_TAG];
            zri_mac_tag(m, seq, payload, len, got);
            tw_tag(key, seq, payload, len, want);
            cr_assert(memcmp(got, want, TW_TAG) == 0, "key %d, seq %llu, %zu bytes: tags differ", k,
                      (unsigned long long)seq, len);
        }
        zri_mac_free(m);
    }
}

/* ---- batches: the frames written together, under one tag ------------------------ */

/* A batch of the given payloads (frames without their tags). */
static void batch_of(tbytes *b, const tbytes *items, int n)
{
    b->n = 0;
    tb_header(b, TW_BATCH, 0);
    for (int i = 0; i < n; i++) {
        uint8_t len[4] = {(uint8_t)(items[i].n >> 24), (uint8_t)(items[i].n >> 16),
                          (uint8_t)(items[i].n >> 8), (uint8_t)items[i].n};
        tb_raw(b, len, 4);
        tb_raw(b, items[i].d, items[i].n);
    }
}

/* User -> Writer on main, message seq */
static zri_msg *user_msg(fake *f, int64_t seq)
{
    zri_msg *m = zri_msg_new(&t_prog2, 1, 0, 1, ZRI_META_NONE);
    m->kind = ZRI_MSG_USER;
    m->chan = 0;
    m->seq = seq;
    m->vals[0] = tv_str(f->user.heap, "ok");
    return m;
}

/* The frames a lifeline sends a peer between two writes go out as one
 * batch under one tag; one frame alone goes as itself. */
Test(net, frames_written_together_are_one_batch)
{
    fake f;
    fake_open(&f);
    char err[300];
    for (int64_t seq = 1; seq <= 3; seq++) {
        zri_msg *m = user_msg(&f, seq);
        cr_assert_eq(zri_net_send(f.user.net, m, err, sizeof err), 0, "%s", err);
        free(m);
    }
    cr_assert_eq(zri_net_flush(f.user.net, err, sizeof err), 0, "%s", err);
    uint8_t buf[512];
    size_t n;
    cr_assert_eq(tw_recv(&f.in, buf, sizeof buf, &n, 5), 0); /* its tag checks */
    cr_assert(n > 3 && buf[0] == ZRI_FRAME_MAGIC && buf[2] == TW_BATCH, "kind %u", buf[2]);
    size_t at = 3;
    int items = 0;
    while (at + 4 <= n) {
        size_t k = (size_t)buf[at] << 24 | (size_t)buf[at + 1] << 16 | (size_t)buf[at + 2] << 8 |
                   buf[at + 3];
        cr_assert(k >= 3 && k <= n - at - 4, "item %d: length %zu", items, k);
        cr_assert_eq(buf[at + 4 + 2], TW_USER);
        items++;
        at += 4 + k;
    }
    cr_assert_eq(at, n);
    cr_assert_eq(items, 3);
    zri_msg *m = user_msg(&f, 4);
    cr_assert_eq(zri_net_send(f.user.net, m, err, sizeof err), 0, "%s", err);
    free(m);
    cr_assert_eq(zri_net_flush(f.user.net, err, sizeof err), 0, "%s", err);
    cr_assert_eq(tw_recv(&f.in, buf, sizeof buf, &n, 5), 0);
    cr_assert_eq(buf[2], TW_USER, "a frame alone went as kind %u", buf[2]);
    fake_close(&f);
}

/* A batch's frames arrive in their order; a heartbeat may be one.  Each
 * message is decoded into a block asked of the callbacks (the run's
 * recycled blocks: zri_run_block), the heartbeat into none. */
Test(net, a_batch_delivers_its_frames_in_order)
{
    fake f;
    fake_open(&f);
    tbytes items[3], b;
    ok_frame(&items[0], 1);
    items[1].n = tw_beat_payload(items[1].d);
    ok_frame(&items[2], 2);
    batch_of(&b, items, 3);
    fake_send(&f, &b);
    ok_frame(&b, 3); /* and the frame after it, alone */
    fake_send(&f, &b);
    for (int64_t seq = 1; seq <= 3; seq++) {
        zri_msg *m = sink_pop(&f.user.s, 5);
        cr_assert_not_null(m, "message %lld missing", (long long)seq);
        cr_assert_eq(m->seq, seq);
        free(m);
    }
    cr_assert_eq(sink_fail_count(&f.user.s), 0, "%s", f.user.s.fails[0]);
    pthread_mutex_lock(&f.user.s.mu);
    int blocks = f.user.s.blocks, nvals = f.user.s.block_nvals, from = f.user.s.block_from;
    pthread_mutex_unlock(&f.user.s.mu);
    cr_assert_eq(blocks, 3, "%d blocks asked for 3 messages", blocks);
    cr_assert_eq(nvals, 1);
    cr_assert_eq(from, 1);
    fake_close(&f);
}

/* A batch that User must refuse with want, and deliver nothing of. */
static void batch_refused(const tbytes *b, const char *want)
{
    fake f;
    fake_open(&f);
    fake_send(&f, b);
    expect_fail(&f, want);
    zri_msg *m = sink_pop(&f.user.s, 0.1);
    cr_assert(!m || m->seq == 1, "message %lld delivered", m ? (long long)m->seq : 0LL);
    free(m);
    fake_close(&f);
}

/* A frame past the batch's end, one of length 0, a batch inside a batch:
 * clear errors (a frame before the bad one may have been delivered). */
Test(net, malformed_batches_are_refused)
{
    tbytes items[2], b;
    ok_frame(&items[0], 1);
    ok_frame(&items[1], 2);
    batch_of(&b, items, 2);
    b.d[3 + 4 + items[0].n + 3] += 1; /* the second frame's length, one too many */
    batch_refused(&b, "malformed frame from Writer: in a batch, the frame at byte 20 has a "
                      "length of 0 or one past the batch's end");
    items[1].n = 0;
    batch_of(&b, items, 2);
    batch_refused(&b, "malformed frame from Writer: in a batch, the frame at byte 20 has a "
                      "length of 0 or one past the batch's end");
    tbytes inner;
    batch_of(&inner, items, 1);
    batch_of(&b, &inner, 1);
    batch_refused(&b, "malformed frame from Writer: a batch inside a batch");
}

/* A fake's frame (seq) sent by a thread after delay seconds. */
typedef struct later {
    fake *f;
    int64_t seq;
    double delay;
} later;

static void *send_later(void *arg)
{
    later *x = arg;
    usleep((useconds_t)(x->delay * 1e6));
    tbytes b;
    ok_frame(&b, x->seq);
    tw_send(&x->f->out, b.d, b.n);
    return NULL;
}

/* The run's only fiber waiting (alone) on its one peer: its wait returns
 * within ZRI_ALONE_MS when nothing comes (the connection's recv waits at
 * most that long), delivers what comes meanwhile, a shorter timeout is
 * kept, and a wake that came before it ends it at once. */
Test(net, a_lone_wait_on_one_peer_is_bounded)
{
    fake f;
    fake_open(&f);
    zri_transport t = zri_net_transport(f.user.net);
    cr_assert_not_null(t.wait);
    /* should a wait not end by itself, this frame ends it, 3 s late */
    later late = {&f, 1, 3.0};
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, send_later, &late), 0);
    for (int i = 0; i < 5; i++) {
        double t0 = t_now();
        t.wait(t.impl, -1, -1, 1);
        double dt = t_now() - t0;
        cr_assert_lt(dt, 1.0, "a lone wait with nothing to read took %.3f s", dt);
        cr_assert_geq(dt, 0.9 * ZRI_ALONE_MS / 1000.0, "a lone wait returned after %.4f s", dt);
        cr_assert_null(sink_pop(&f.user.s, 0));
    }
    /* a timeout below ZRI_ALONE_MS is kept */
    double t0 = t_now();
    t.wait(t.impl, -1, 5, 1);
    cr_assert_lt(t_now() - t0, 0.9 * ZRI_ALONE_MS / 1000.0);
    /* a wake before the wait ends it at once (the transport's thread woke
     * the fiber while it was on its way to wait), once */
    cr_assert_not_null(t.wake);
    t.wake(t.impl);
    t0 = t_now();
    t.wait(t.impl, -1, -1, 1);
    cr_assert_lt(t_now() - t0, 0.5 * ZRI_ALONE_MS / 1000.0, "a woken wait still waited");
    t0 = t_now();
    t.wait(t.impl, -1, -1, 1);
    cr_assert_geq(t_now() - t0, 0.9 * ZRI_ALONE_MS / 1000.0, "a wake was seen twice");
    pthread_join(th, NULL);
    /* what comes during a wait is delivered by it: the frame sent 3 s in
     * is there once the waits have taken it */
    zri_msg *m = NULL;
    for (int i = 0; i < 100 && !m; i++) {
        t.wait(t.impl, -1, -1, 1);
        m = sink_pop(&f.user.s, 0);
    }
    cr_assert_not_null(m);
    cr_assert_eq(m->seq, 1);
    free(m);
    m = NULL;
    /* and one sent while it waits */
    late = (later){&f, 2, 0.01};
    cr_assert_eq(pthread_create(&th, NULL, send_later, &late), 0);
    for (int i = 0; i < 100 && !m; i++) {
        t.wait(t.impl, -1, -1, 1);
        m = sink_pop(&f.user.s, 0);
    }
    pthread_join(th, NULL);
    cr_assert_not_null(m);
    cr_assert_eq(m->seq, 2);
    free(m);
    /* the peer's end is heard by the wait */
    close(f.out.fd);
    f.out.fd = -1;
    for (int i = 0; i < 100 && !sink_fail_count(&f.user.s); i++) t.wait(t.impl, -1, -1, 1);
    cr_assert_eq(sink_fail_count(&f.user.s), 1);
    cr_assert(strstr(f.user.s.fails[0], "closed its connection without BYE"), "%s",
              f.user.s.fails[0]);
    fake_close(&f);
}

Test(net, modified_frame_is_refused)
{
    fake f;
    fake_open(&f);
    tbytes b;
    ok_frame(&b, 1);
    fake_send(&f, &b);
    uint8_t out[200];
    ok_frame(&b, 2);
    size_t k = tw_seal(&f.out, b.d, b.n, out);
    out[4 + 4] ^= 0x01; /* one bit of the sender's index */
    raw_write(f.out.fd, out, k);
    zri_msg *m = sink_pop(&f.user.s, 5);
    cr_assert_not_null(m);
    cr_assert_eq(m->seq, 1);
    free(m);
    char want[600];
    snprintf(want, sizeof want,
             "frame 1 from lifeline Writer (%s) failed its integrity check: it was modified, or "
             "frames were dropped, duplicated or reordered on the way",
             f.x.v[1]);
    expect_fail(&f, want);
    cr_assert_null(sink_pop(&f.user.s, 0.1), "the modified frame was delivered");
    fake_close(&f);
}

Test(net, dropped_frame_is_detected)
{
    fake f;
    fake_open(&f);
    tbytes b;
    uint8_t f1[200], f2[200];
    ok_frame(&b, 1);
    tw_seal(&f.out, b.d, b.n, f1); /* frame 0: never sent */
    ok_frame(&b, 2);
    size_t k2 = tw_seal(&f.out, b.d, b.n, f2);
    raw_write(f.out.fd, f2, k2);
    char want[600];
    snprintf(want, sizeof want,
             "frame 0 from lifeline Writer (%s) failed its integrity check: it was modified, or "
             "frames were dropped, duplicated or reordered on the way",
             f.x.v[1]);
    expect_fail(&f, want);
    cr_assert_null(sink_pop(&f.user.s, 0.1));
    fake_close(&f);
}

Test(net, duplicated_frame_is_detected)
{
    fake f;
    fake_open(&f);
    tbytes b;
    uint8_t out[200];
    ok_frame(&b, 1);
    size_t k = tw_seal(&f.out, b.d, b.n, out);
    raw_write(f.out.fd, out, k);
    raw_write(f.out.fd, out, k);
    zri_msg *m = sink_pop(&f.user.s, 5);
    cr_assert_not_null(m);
    free(m);
    char want[600];
    snprintf(want, sizeof want,
             "frame 1 from lifeline Writer (%s) failed its integrity check: it was modified, or "
             "frames were dropped, duplicated or reordered on the way",
             f.x.v[1]);
    expect_fail(&f, want);
    cr_assert_null(sink_pop(&f.user.s, 0.1));
    fake_close(&f);
}

/* A frame sealed for another connection (another key) fails, even as
 * the first one. */
Test(net, frame_of_another_connection_is_refused)
{
    fake f;
    fake_open(&f);
    tw_conn other = f.out;
    other.key[0] ^= 1;
    tbytes b;
    uint8_t out[200];
    ok_frame(&b, 1);
    size_t k = tw_seal(&other, b.d, b.n, out);
    raw_write(f.out.fd, out, k);
    cr_assert_eq(sink_wait_fail(&f.user.s, 5), 1);
    cr_assert(strstr(f.user.s.fails[0], "frame 0 from lifeline Writer"), "%s", f.user.s.fails[0]);
    cr_assert_null(sink_pop(&f.user.s, 0.1));
    fake_close(&f);
}

/* ---- liveness: heartbeats ------------------------------------------------------------- */

Test(net, silent_peer_is_lost)
{
    fake f;
    fake_open_hb(&f, 0.5);
    double t0 = t_now();
    cr_assert_eq(sink_wait_fail(&f.user.s, 5), 1, "a silent Writer was not noticed");
    double took = t_now() - t0;
    cr_assert(took >= 0.4 && took < 2.0, "noticed after %.2f s (limit 0.5 s)", took);
    char want[600];
    snprintf(want, sizeof want,
             "lifeline Writer (%s) has sent nothing for 0.5 s: its process is stopped, hung or "
             "cut off",
             f.x.v[1]);
    cr_assert_str_eq(f.user.s.fails[0], want);
    fake_close(&f);
}

Test(net, length_prefix_then_silence_is_lost)
{
    fake f;
    fake_open_hb(&f, 0.5);
    raw_write(f.out.fd, "\x04\0\0\0", 4); /* 64 MB announced, none sent */
    cr_assert_eq(sink_wait_fail(&f.user.s, 5), 1);
    char want[600];
    snprintf(want, sizeof want,
             "lifeline Writer (%s) has sent nothing for 0.5 s, in the middle of a frame (0 of "
             "67108864 bytes received): its process is stopped, hung or cut off",
             f.x.v[1]);
    cr_assert_str_eq(f.user.s.fails[0], want);
    fake_close(&f);
}

/* A peer that sends nothing but heartbeats is alive; and the real side
 * sends its own, tagged, about five per limit. */
Test(net, heartbeats_keep_a_quiet_peer)
{
    fake f;
    fake_open_hb(&f, 0.5);
    uint8_t beat[8];
    size_t bn = tw_beat_payload(beat);
    double t0 = t_now();
    int got = 0;
    while (t_now() - t0 < 2.0) {
        cr_assert_eq(tw_send(&f.out, beat, bn), 0);
        uint8_t buf[64];
        size_t n;
        while (tw_recv(&f.in, buf, sizeof buf, &n, 0.05) == 0) {
            cr_assert_eq(n, 3);
            cr_assert_eq(buf[2], ZRI_KIND_BEAT);
            got++;
        }
    }
    cr_assert_eq(sink_fail_count(&f.user.s), 0, "%s", f.user.s.fails[0]);
    cr_assert(got >= 12 && got <= 25, "%d heartbeats in 2 s at a limit of 0.5 s", got);
    fake_close(&f);
}

/* A silent peer is found by a worker that waits on the connections too
 * (transport_wait, on the coarse clock; the transport's thread leaves
 * the peers to it): in a poll with wake_fd, and alone (the recv that
 * waits, then a poll for the last 50 ms), on the waiting thread, within
 * the limit and a lone wait's 50 ms and the coarse clock's tick. */
Test(net, a_waiting_worker_finds_a_silent_peer)
{
    for (int alone = 0; alone < 2; alone++) {
        fake f;
        fake_open_hb(&f, 0.5);
        zri_transport t = zri_net_transport(f.user.net);
        int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        cr_assert_geq(efd, 0);
        double t0 = t_now();
        while (!sink_fail_count(&f.user.s) && t_now() - t0 < 5)
            t.wait(t.impl, alone ? -1 : efd, -1, alone);
        double took = t_now() - t0;
        cr_assert_eq(sink_fail_count(&f.user.s), 1, "a silent Writer was not noticed (alone %d)",
                     alone);
        cr_assert(pthread_equal(f.user.s.fail_thread, pthread_self()),
                  "the silence was found by another thread than the waiting one (alone %d)", alone);
        cr_assert(took >= 0.4 && took < 0.5 + 0.25, "noticed after %.3f s (limit 0.5 s, alone %d)",
                  took, alone);
        cr_assert(strstr(f.user.s.fails[0], "has sent nothing for 0.5 s"), "%s", f.user.s.fails[0]);
        close(efd);
        fake_close(&f);
    }
}

/* The larger limit of the two applies, and 0 on either side is none. */
Test(net, heartbeat_off_on_one_side)
{
    fake f;
    memset(&f, 0, sizeof f);
    t_self(&f.me, &t_prog2, 1, &t_secret, 0);
    unix_addrs(&f.x, 2);
    f.lfd = raw_listen(path_of(&f.x, 1));
    opener_init(&f.user, &t_prog2, 0, f.x.v, 10);
    f.user.heartbeat = 0.3;
    opener_start(&f.user);
    fake_accept_user(&f);
    fake_connect_user(&f);
    opener_join(&f.user);
    cr_assert_not_null(f.user.net, "%s", f.user.err);
    cr_assert_eq(sink_wait_fail(&f.user.s, 1.2), 0, "%s", f.user.s.fails[0]);
    fake_close(&f);
}

/* ---- handshake mismatches ------------------------------------------------------------ */

static void open_pair(opener *u, opener *w, const zgrt_program *pu, const zgrt_program *pw,
                      const addrs *x, double timeout)
{
    opener_init(u, pu, 0, x->v, timeout);
    opener_init(w, pw, 1, x->v, timeout);
    opener_start(u);
    opener_start(w);
    opener_join(u);
    opener_join(w);
}

/* Each side fails, with the error it found first: the other side's
 * refusal, or its own (the refused side proved it holds the secret, so
 * it is a lifeline of this run). */
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
    open_pair(&u, &w, &t_prog2, &t_prog2_other, &x, 3);
    const char *r1 = "lifeline User of workflow hello connected to lifeline Writer of workflow "
                     "other",
               *r2 = "lifeline Writer of workflow other connected to lifeline User of workflow "
                     "hello";
    char a[600], b[600];
    snprintf(a, sizeof a, "lifeline Writer at %s refused the connection: %s", x.v[1], r1);
    expect_one_of(&u, a, r2);
    snprintf(b, sizeof b, "lifeline User at %s refused the connection: %s", x.v[0], r2);
    expect_one_of(&w, b, r1);
    opener_finish(&u);
    opener_finish(&w);
    addrs_free(&x);
}

static void other_program(const zgrt_program *other)
{
    addrs x;
    unix_addrs(&x, 2);
    opener u, w;
    open_pair(&u, &w, &t_prog2, other, &x, 3);
    uint8_t ia[ZRI_HASH_BYTES], ib[ZRI_HASH_BYTES];
    char ta[ZRI_ID_TEXT], tb[ZRI_ID_TEXT], r1[400], r2[400], a[800];
    zri_program_id(&t_prog2, ia);
    zri_program_id(other, ib);
    zri_id_text(ia, ta);
    zri_id_text(ib, tb);
    cr_assert_str_neq(ta, tb);
    snprintf(r1, sizeof r1,
             "lifeline User (program %s) connected to lifeline Writer (program %s): they were "
             "built from different programs of workflow hello",
             ta, tb);
    snprintf(r2, sizeof r2,
             "lifeline Writer (program %s) connected to lifeline User (program %s): they were "
             "built from different programs of workflow hello",
             tb, ta);
    snprintf(a, sizeof a, "lifeline Writer at %s refused the connection: %s", x.v[1], r1);
    expect_one_of(&u, a, r2);
    snprintf(a, sizeof a, "lifeline User at %s refused the connection: %s", x.v[0], r2);
    expect_one_of(&w, a, r1);
    opener_finish(&u);
    opener_finish(&w);
    addrs_free(&x);
}

Test(net, hello_other_build) { other_program(&t_prog2_build); }

/* the same declarations, other code */
Test(net, hello_other_code) { other_program(&t_prog2_code); }

/* Another secret: the side that connects first finds the answer fails
 * authentication; the other may find its peer gone by then. */
Test(net, wrong_secret)
{
    addrs x;
    unix_addrs(&x, 2);
    opener u, w;
    opener_init(&u, &t_prog2, 0, x.v, 2);
    opener_init(&w, &t_prog2, 1, x.v, 2);
    w.secret = &t_other_secret;
    opener_start(&u);
    opener_start(&w);
    opener_join(&u);
    opener_join(&w);
    cr_assert_null(u.net);
    cr_assert_null(w.net);
    char a[600], b[600];
    int secret_errors = 0;
    for (int i = 0; i < 2; i++) {
        opener *o = i ? &w : &u;
        snprintf(a, sizeof a,
                 "the peer at %s does not hold this run's secret (its answer fails "
                 "authentication): every lifeline of a run needs the same --secret-file",
                 x.v[1 - i]);
        snprintf(b, sizeof b,
                 "could not connect to lifeline %s at %s within 2 s: ", t_prog2.lifelines[1 - i],
                 x.v[1 - i]);
        if (!strcmp(o->err, a))
            secret_errors++;
        else
            cr_assert(!strncmp(o->err, b, strlen(b)), "%s", o->err);
    }
    cr_assert_geq(secret_errors, 1);
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
    const char *why =
        "lifeline User expected lifeline Writer at this address, but this is lifeline Mailbox";
    char want[600];
    snprintf(want, sizeof want, "lifeline Writer at %s refused the connection: %s", x.v[2], why);
    cr_assert_null(o[0].net);
    cr_assert_str_eq(o[0].err, want);
    cr_assert_null(o[1].net);
    /* Mailbox refused a lifeline of its own run: its error too */
    cr_assert_null(o[2].net);
    cr_assert_str_eq(o[2].err, why);
    for (int l = 0; l < 3; l++) opener_finish(&o[l]);
    addrs_free(&x);
}

/* Two processes that both hold the secret claim one lifeline: an error.
 * (Three lifelines, Mailbox never comes: User is still setting up.) */
Test(net, hello_duplicate_lifeline)
{
    addrs x;
    unix_addrs(&x, 3);
    tw_self me;
    t_self(&me, &t_prog3, 1, &t_secret, 0);
    int lfd = raw_listen(path_of(&x, 1));
    opener u;
    opener_init(&u, &t_prog3, 0, x.v, 5);
    opener_start(&u);
    char why[300];
    tw_conn in, c1, c2;
    int fd = raw_accept(lfd, 5);
    cr_assert_eq(tw_accept(&in, fd, &me, 5, why, sizeof why), 0, "%s", why);
    int fd1 = raw_connect(path_of(&x, 0), 5);
    cr_assert_eq(tw_connect(&c1, fd1, &me, 0, 5, why, sizeof why), 0, "%s", why);
    int fd2 = raw_connect(path_of(&x, 0), 5);
    cr_assert_eq(tw_connect(&c2, fd2, &me, 0, 5, why, sizeof why), -1);
    opener_join(&u);
    char want[600];
    snprintf(want, sizeof want,
             "two processes connected to %s as lifeline Writer, both with this run's secret",
             x.v[0]);
    cr_assert_null(u.net);
    cr_assert_str_eq(u.err, want);
    opener_finish(&u);
    close(fd);
    close(fd1);
    close(fd2);
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

/* ---- stray connections during setup -------------------------------------------------- */

/* The fake Writer's set-up, with strays let in on User's address before
 * the fake connects back (stray(fd of User's listening address)). */
static void with_strays(fake *f, void (*stray)(fake *f, void *arg), void *arg)
{
    memset(f, 0, sizeof *f);
    t_self(&f->me, &t_prog2, 1, &t_secret, 0);
    unix_addrs(&f->x, 2);
    f->lfd = raw_listen(path_of(&f->x, 1));
    opener_init(&f->user, &t_prog2, 0, f->x.v, 20);
    opener_start(&f->user);
    fake_accept_user(f);
    stray(f, arg);
    fake_connect_user(f);
    opener_join(&f->user);
    cr_assert_not_null(f->user.net, "%s", f->user.err);
    /* and the run works */
    tbytes b;
    ok_frame(&b, 1);
    fake_send(f, &b);
    zri_msg *m = sink_pop(&f->user.s, 5);
    cr_assert_not_null(m);
    free(m);
    cr_assert_eq(sink_fail_count(&f->user.s), 0, "%s", f->user.s.fails[0]);
}

static void stray_http(fake *f, void *arg)
{
    int *fd = arg;
    *fd = raw_connect(path_of(&f->x, 0), 5);
    raw_write(*fd, "GET / HTTP/1.0\r\n\r\n", 18);
    /* User hangs up on it */
    char c;
    struct pollfd pf = {*fd, POLLIN, 0};
    cr_assert_eq(poll(&pf, 1, 5000), 1);
    cr_assert_leq(recv(*fd, &c, 1, 0), 0, "User answered an HTTP request");
}

Test(net, http_request_during_setup)
{
    fake f;
    int fd;
    with_strays(&f, stray_http, &fd);
    char want[600];
    snprintf(want, sizeof want,
             "lifeline User: dropped a connection to %s: not a zgc lifeline (an HTTP request)",
             f.x.v[0]);
    cr_assert_eq(sink_note_count(&f.user.s), 1);
    cr_assert_str_eq(f.user.s.notes[0], want);
    close(fd);
    fake_close(&f);
}

static void stray_idle(fake *f, void *arg)
{
    int *fds = arg;
    for (int i = 0; i < 70; i++) fds[i] = raw_connect(path_of(&f->x, 0), 5);
    usleep(100000);
}

/* 70 idle connections, more than the 64 that may wait for a handshake:
 * the oldest make room, and the real peer gets in. */
Test(net, seventy_idle_connections)
{
    fake f;
    int fds[70];
    with_strays(&f, stray_idle, fds);
    cr_assert(sink_has_note(&f.user.s, "64 connections were waiting for their handshake; the "
                                       "oldest gave way to a new one"));
    for (int i = 0; i < 70; i++) close(fds[i]);
    fake_close(&f);
}

static void stray_expires(fake *f, void *arg)
{
    int *fd = arg;
    *fd = raw_connect(path_of(&f->x, 0), 5);
    double t0 = t_now();
    char c;
    struct pollfd pf = {*fd, POLLIN, 0};
    cr_assert_eq(poll(&pf, 1, 8000), 1, "an idle connection was kept beyond 8 s");
    cr_assert_leq(recv(*fd, &c, 1, 0), 0);
    double took = t_now() - t0;
    cr_assert(took > 4.5 && took < 7, "an idle connection was dropped after %.1f s", took);
}

Test(net, idle_connection_expires, .timeout = 60)
{
    fake f;
    int fd;
    with_strays(&f, stray_expires, &fd);
    cr_assert(sink_has_note(&f.user.s, "it did not complete the handshake within 5 s"));
    close(fd);
    fake_close(&f);
}

/* A stranger with the right program but another secret: its answer
 * does not check (it sends its proof anyway), and User drops it. */
static void stray_wrong_secret(fake *f, void *arg)
{
    int *fd = arg;
    tw_self bad = f->me;
    memcpy(bad.secret, t_other_secret.key, t_other_secret.len);
    *fd = raw_connect(path_of(&f->x, 0), 5);
    uint8_t hello[TW_HELLO_MAX], answer[TW_HELLO_MAX], nonce[TW_NONCE], mac[TW_MAC], proof[40];
    tw_random(nonce, sizeof nonce);
    size_t hn = tw_hello_payload(&bad, 0, nonce, hello), an;
    cr_assert_eq(tw_write_frame(*fd, hello, hn), 0);
    cr_assert_eq(tw_read_frame(*fd, answer, sizeof answer, &an, 5), 0);
    tw_mac(bad.secret, bad.secret_len, "zgc proof", hello, hn, answer, an, NULL, 0, mac);
    proof[0] = TW_MAGIC, proof[1] = TW_HS_VERSION, proof[2] = TW_PROOF;
    memcpy(proof + 3, mac, TW_MAC);
    cr_assert_eq(tw_write_frame(*fd, proof, 3 + TW_MAC), 0);
    uint8_t buf[64];
    size_t n;
    cr_assert_eq(tw_read_frame(*fd, buf, sizeof buf, &n, 5), -1, "a wrong proof was accepted");
}

Test(net, stranger_with_another_secret)
{
    fake f;
    int fd;
    with_strays(&f, stray_wrong_secret, &fd);
    cr_assert(sink_has_note(&f.user.s, "a connection claiming to be lifeline Writer failed "
                                       "authentication: it does not hold this run's secret, or "
                                       "replays an old handshake"));
    close(fd);
    fake_close(&f);
}

/* A recorded handshake played again: the HELLO and a PROOF that was
 * valid for an earlier connection.  The new ANSWER has a new nonce. */
static void stray_replay(fake *f, void *arg)
{
    int *fd = arg;
    uint8_t hello[TW_HELLO_MAX], answer[TW_HELLO_MAX], nonce[TW_NONCE], mac[TW_MAC], proof[40];
    tw_random(nonce, sizeof nonce);
    size_t hn = tw_hello_payload(&f->me, 0, nonce, hello), an;
    int first = raw_connect(path_of(&f->x, 0), 5);
    cr_assert_eq(tw_write_frame(first, hello, hn), 0);
    cr_assert_eq(tw_read_frame(first, answer, sizeof answer, &an, 5), 0);
    tw_mac(f->me.secret, f->me.secret_len, "zgc proof", hello, hn, answer, an, NULL, 0, mac);
    proof[0] = TW_MAGIC, proof[1] = TW_HS_VERSION, proof[2] = TW_PROOF;
    memcpy(proof + 3, mac, TW_MAC);
    close(first); /* the proof was recorded, never sent */
    *fd = raw_connect(path_of(&f->x, 0), 5);
    cr_assert_eq(tw_write_frame(*fd, hello, hn), 0);
    cr_assert_eq(tw_read_frame(*fd, answer, sizeof answer, &an, 5), 0);
    cr_assert_eq(tw_write_frame(*fd, proof, 3 + TW_MAC), 0);
    uint8_t buf[64];
    size_t n;
    cr_assert_eq(tw_read_frame(*fd, buf, sizeof buf, &n, 5), -1, "a replayed proof was accepted");
}

Test(net, replayed_handshake)
{
    fake f;
    int fd;
    with_strays(&f, stray_replay, &fd);
    cr_assert(sink_has_note(&f.user.s, "or replays an old handshake"));
    close(fd);
    fake_close(&f);
}

/* A HELLO with another program identity gets a refusal that says why,
 * and the run goes on. */
static void stray_forged_id(fake *f, void *arg)
{
    int *fd = arg;
    tw_self forged = f->me;
    forged.id[5] ^= 0x40;
    *fd = raw_connect(path_of(&f->x, 0), 5);
    tw_conn c;
    char why[400];
    cr_assert_eq(tw_connect(&c, *fd, &forged, 0, 5, why, sizeof why), -1);
    cr_assert(strstr(why, "refused: lifeline Writer (program "), "%s", why);
    cr_assert(strstr(why, "they were built from different programs of workflow hello"), "%s", why);
}

Test(net, forged_identity)
{
    fake f;
    int fd;
    with_strays(&f, stray_forged_id, &fd);
    cr_assert(sink_has_note(&f.user.s, "they were built from different programs"));
    close(fd);
    fake_close(&f);
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
    fake f;
    memset(&f, 0, sizeof f);
    t_self(&f.me, &t_prog2, 1, &t_secret, 0);
    unix_addrs(&f.x, 2);
    f.lfd = raw_listen(path_of(&f.x, 1));
    opener_init(&f.user, &t_prog2, 0, f.x.v, 0.5);
    opener_start(&f.user);
    fake_accept_user(&f);
    opener_join(&f.user);
    char want[600];
    snprintf(want, sizeof want,
             "timed out after 0.5 s waiting for lifeline Writer to connect to %s", f.x.v[0]);
    cr_assert_null(f.user.net);
    cr_assert_str_eq(f.user.err, want);
    f.out.fd = -1;
    fake_close(&f);
}

/* ---- addresses --------------------------------------------------------------------------- */

static void bad_listen(const char *addr, const char *peer, const char *msg)
{
    zri_heap *h = zri_heap_new();
    const char *v[2] = {addr, peer};
    char err[512];
    zri_net *n = t_open(&t_prog2, 0, addr, v, h, NULL, 1, err, sizeof err);
    cr_assert_null(n, "%s accepted", addr);
    cr_assert_str_eq(err, msg);
    zri_heap_free(h);
}

Test(net, address_syntax)
{
    const char *ok = "unix:/tmp/zgc-net-unused";
    bad_listen("foo", ok, "bad address 'foo': expected unix:PATH or tcp:HOST:PORT");
    bad_listen("unix:", ok, "bad address 'unix:': empty socket path");
    bad_listen("tcp:127.0.0.1", ok,
               "bad address 'tcp:127.0.0.1': the port must be a number from 1 to 65535");
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
    bad_listen("tcp:[]:80", ok, "bad address 'tcp:[]:80': empty host");
    char longpath[300] = "unix:/tmp/";
    memset(longpath + 10, 'x', 200);
    longpath[210] = 0;
    char msg[600];
    snprintf(msg, sizeof msg, "bad address '%s': socket path longer than 107 bytes", longpath);
    bad_listen(longpath, ok, msg);
    bad_listen(ok, NULL, "no address for lifeline Writer");
    bad_listen(ok, "tcp:x", "bad address 'tcp:x': the port must be a number from 1 to 65535");
    bad_listen(ok, "tcp:*:80",
               "bad address 'tcp:*:80': '*' (every interface) is for --listen; a peer's address "
               "names its host");

    /* the resolver's own words vary */
    zri_heap *h = zri_heap_new();
    const char *v[2] = {"tcp:no-such-host.invalid:80", ok};
    char err[512];
    cr_assert_null(t_open(&t_prog2, 0, v[0], v, h, NULL, 1, err, sizeof err));
    cr_assert(!strncmp(err, "cannot resolve the host of tcp:no-such-host.invalid:80: ", 56), "%s",
              err);
    /* no secret, no transport */
    zri_net_config c = {ok, v, NULL, 1, 0, 0, NULL, NULL, NULL};
    cr_assert_null(zri_net_open(&t_prog2, 0, &c, h, NULL, err, sizeof err));
    cr_assert_str_eq(err, "no secret for the connections between the lifelines");
    zri_heap_free(h);
}

/* The local address of the socket listening on port (from
 * /proc/net/tcp{,6}), as "127.0.0.1", "0.0.0.0", "::" or "?". */
static void listening_on(int port, char *out, size_t outlen)
{
    snprintf(out, outlen, "none");
    const char *files[2] = {"/proc/net/tcp", "/proc/net/tcp6"};
    for (int f = 0; f < 2; f++) {
        FILE *fp = fopen(files[f], "r");
        if (!fp) continue;
        char line[512], addr[64];
        unsigned p, st;
        while (fgets(line, sizeof line, fp)) {
            if (sscanf(line, " %*d: %63[0-9A-Fa-f]:%x %*s %x", addr, &p, &st) != 3) continue;
            if ((int)p != port || st != 0x0A /* LISTEN */) continue;
            if (!strcmp(addr, "0100007F"))
                snprintf(out, outlen, "127.0.0.1");
            else if (!strcmp(addr, "00000000"))
                snprintf(out, outlen, "0.0.0.0");
            else if (strspn(addr, "0") == strlen(addr))
                snprintf(out, outlen, "::");
            else
                snprintf(out, outlen, "%s", addr);
        }
        fclose(fp);
    }
}

static void listens_where(const char *form, const char *want)
{
    int port = t_free_port();
    char listen[64], peer[64], where[64];
    snprintf(listen, sizeof listen, form, port);
    snprintf(peer, sizeof peer, "tcp:127.0.0.1:%d", t_free_port());
    const char *v[2] = {listen, peer};
    opener u;
    opener_init(&u, &t_prog2, 0, v, 1); /* Writer never comes: 1 s to look */
    opener_start(&u);
    usleep(300000);
    listening_on(port, where, sizeof where);
    opener_join(&u);
    cr_assert_null(u.net);
    opener_finish(&u);
    cr_assert_str_eq(where, want, "%s listens on %s", listen, where);
}

/* TCP listens on the loopback interface unless told otherwise. */
Test(net, tcp_listens_on_loopback_by_default)
{
    listens_where("tcp:%d", "127.0.0.1");
    listens_where("tcp::%d", "127.0.0.1");
    listens_where("tcp:127.0.0.1:%d", "127.0.0.1");
    listens_where("tcp:0.0.0.0:%d", "0.0.0.0");
    char where[64];
    int port = t_free_port();
    char listen[64], peer[64];
    snprintf(listen, sizeof listen, "tcp:*:%d", port);
    snprintf(peer, sizeof peer, "tcp:127.0.0.1:%d", t_free_port());
    const char *v[2] = {listen, peer};
    opener u;
    opener_init(&u, &t_prog2, 0, v, 1);
    opener_start(&u);
    usleep(300000);
    listening_on(port, where, sizeof where);
    opener_join(&u);
    opener_finish(&u);
    cr_assert(!strcmp(where, "0.0.0.0") || !strcmp(where, "::"), "tcp:*: listens on %s", where);
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
    zri_net *n = t_open(solo(), 0, addr, v, h, NULL, 1, err, sizeof err);
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
    cr_assert_null(t_open(solo(), 0, addr, v, h, NULL, 1, err, sizeof err));
    snprintf(want, sizeof want, "cannot listen on %s: the path exists and is not a socket", addr);
    cr_assert_str_eq(err, want);
    cr_assert_eq(access(path, F_OK), 0, "a regular file was removed");
    unlink(path);

    int lfd = raw_listen(path);
    cr_assert_null(t_open(solo(), 0, addr, v, h, NULL, 1, err, sizeof err));
    snprintf(want, sizeof want, "cannot listen on %s: another process is listening there", addr);
    cr_assert_str_eq(err, want);
    close(lfd);

    char taddr[64];
    int port = t_free_port();
    snprintf(taddr, sizeof taddr, "tcp:127.0.0.1:%d", port);
    v[0] = taddr;
    zri_net *n1 = t_open(solo(), 0, taddr, v, h, NULL, 1, err, sizeof err);
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
    cr_assert_null(t_open(solo(), 0, taddr, v, h, NULL, 1, err, sizeof err));
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
            if (n > 5) junk[5] = 3;
            if (n > 6) junk[6] = (uint8_t)(rand_r(&seed) % 3);
        }
        for (size_t off = 0; off < n;) { /* in random pieces */
            size_t k = 1 + (size_t)(rand_r(&seed) % 700);
            if (k > n - off) k = n - off;
            /* the reader hangs up at the first bad frame */
            if (send(f.out.fd, junk + off, k, MSG_NOSIGNAL) < 0) break;
            off += k;
        }
        close(f.out.fd); /* no BYE: the end must be reported if nothing else was */
        f.out.fd = -1;
        cr_assert_eq(sink_wait_fail(&f.user.s, 5), 1, "round %d: no failure reported", round);
        usleep(20000);
        cr_assert_eq(sink_fail_count(&f.user.s), 1, "round %d", round);
        fake_close(&f);
    }
}
