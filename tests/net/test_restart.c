/* Unit tests for keep mode (runtime/net/socket.c "Lost peers", durable
 * runs): a lifeline whose peer process dies waits for its new process,
 * keeps what it sends meanwhile, and after the reconnection the SYNC
 * exchange gives the new process exactly what it lacks — in order,
 * nothing twice — while copies a restarted sender sends again are
 * dropped and a gap fails the run.  Real Unix sockets, real threads; a
 * "killed" process is a transport closed without BYE (zri_net_abort). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net_test.h"

TestSuite(restart, .timeout = 60);

enum { USER = 0, WRITER = 1 };

typedef struct pair {
    char *dir;
    char a[2][256];
    const char *v[2];
} pair;

static void pair_init(pair *x)
{
    x->dir = t_tmpdir();
    for (int i = 0; i < 2; i++) {
        snprintf(x->a[i], sizeof x->a[i], "unix:%s/%c", x->dir, "uw"[i]);
        x->v[i] = x->a[i];
    }
}

/* Opens lifeline self in keep mode (peer_wait s); got: what its "journal"
 * restored of the stream User/Writer -> self on channel 0. */
static void keep_open(opener *o, const pair *x, int self, double peer_wait, int64_t got)
{
    opener_init(o, &t_prog2, self, x->v, 10);
    o->peer_wait = peer_wait;
    o->s.got[1 - self][0] = got;
    opener_start(o);
}

static void keep_join(opener *o)
{
    opener_join(o);
    cr_assert_not_null(o->net, "%s", o->err);
}

static void send_seq(opener *o, int to, int64_t seq)
{
    zri_msg *m = zri_msg_new(&t_prog2, 1, o->self, to, ZRI_META_NONE);
    m->kind = ZRI_MSG_USER;
    m->chan = 0;
    m->seq = seq;
    m->vals[0] = tv_int(seq * 10);
    char err[512];
    cr_assert_eq(zri_net_send(o->net, m, err, sizeof err), 0, "%s", err);
    cr_assert_eq(zri_net_flush(o->net, err, sizeof err), 0, "%s", err);
    free(m);
}

static void expect_seq(opener *o, int from, int64_t seq)
{
    zri_msg *m = sink_pop(&o->s, 10);
    cr_assert_not_null(m, "message %lld did not come", (long long)seq);
    cr_assert_eq(m->from, from);
    cr_assert_eq(m->seq, seq, "expected message %lld, got %lld", (long long)seq, (long long)m->seq);
    cr_assert_eq(m->vals[0].u.i, seq * 10);
    free(m);
}

static void expect_none(opener *o)
{
    zri_msg *m = sink_pop(&o->s, 0.3);
    cr_assert_null(m, "unexpected message %lld", m ? (long long)m->seq : 0LL);
}

static void wait_note(opener *o, const char *text)
{
    for (double t0 = t_now(); !sink_has_note(&o->s, text); usleep(5000))
        cr_assert(t_now() - t0 < 10, "no note containing '%s'", text);
}

/* The dead process's transport: closed without BYE. */
static void kill_net(opener *o)
{
    zri_net_abort(o->net);
    o->net = NULL;
}

/* The receiver dies with 3 of 5 messages committed; its new process has
 * those 3 (its journal); the sender, which sent 2 more meanwhile, resends
 * 4 and 5 from before and 6, 7 kept while it was away: 4..7 in order,
 * once.  The ACK frees what it covers, so drain returns. */
Test(restart, receiver_restarted_gets_what_it_lacks)
{
    pair x;
    pair_init(&x);
    opener u, w, w2;
    keep_open(&u, &x, USER, 10, 0);
    keep_open(&w, &x, WRITER, 10, 0);
    keep_join(&u);
    keep_join(&w);
    for (int64_t s = 1; s <= 5; s++) send_seq(&u, WRITER, s);
    for (int64_t s = 1; s <= 5; s++) expect_seq(&w, USER, s);
    zri_net_ack(w.net, USER, 0, 3); /* its journal committed 3 of them */
    kill_net(&w);
    wait_note(&u, "waiting up to 10 s for lifeline Writer to come back");
    cr_assert_eq(sink_fail_count(&u.s), 0);
    send_seq(&u, WRITER, 6); /* kept: the peer is away */
    send_seq(&u, WRITER, 7);
    keep_open(&w2, &x, WRITER, 10, 3);
    keep_join(&w2);
    for (int64_t s = 4; s <= 7; s++) expect_seq(&w2, USER, s);
    expect_none(&w2);
    wait_note(&u, "lifeline Writer is back");
    /* not yet acknowledged: the sender keeps them */
    send_seq(&u, WRITER, 8);
    expect_seq(&w2, USER, 8);
    zri_net_ack(w2.net, USER, 0, 8);
    double t0 = t_now();
    cr_assert_eq(zri_net_drain(u.net), 0);
    cr_assert(t_now() - t0 < 5);
    cr_assert_eq(zri_net_drain(w2.net), 0);
    cr_assert_eq(sink_fail_count(&u.s), 0);
    cr_assert_eq(sink_fail_count(&w2.s), 0);
    opener_finish(&u);
    opener_finish(&w2);
    sink_destroy(&w.s);
    zri_heap_free(w.heap);
    t_rmdir(x.dir);
}

/* The sender dies after the receiver got 1..4; its new process sends 3
 * and 4 again (its replay) and then 5: the copies are dropped. */
Test(restart, restarted_sender_copies_dropped)
{
    pair x;
    pair_init(&x);
    opener u, w, u2;
    keep_open(&u, &x, USER, 10, 0);
    keep_open(&w, &x, WRITER, 10, 0);
    keep_join(&u);
    keep_join(&w);
    for (int64_t s = 1; s <= 4; s++) send_seq(&u, WRITER, s);
    for (int64_t s = 1; s <= 4; s++) expect_seq(&w, USER, s);
    kill_net(&u);
    wait_note(&w, "waiting up to 10 s for lifeline User to come back");
    keep_open(&u2, &x, USER, 10, 0);
    keep_join(&u2);
    for (int64_t s = 3; s <= 5; s++) send_seq(&u2, WRITER, s);
    expect_seq(&w, USER, 5);
    expect_none(&w);
    cr_assert_eq(sink_fail_count(&w.s), 0);
    opener_finish(&u2);
    opener_finish(&w);
    sink_destroy(&u.s);
    zri_heap_free(u.heap);
    t_rmdir(x.dir);
}

/* A message missing from a stream fails the run, even in keep mode. */
Test(restart, gap_fails)
{
    pair x;
    pair_init(&x);
    opener u, w;
    keep_open(&u, &x, USER, 10, 0);
    keep_open(&w, &x, WRITER, 10, 0);
    keep_join(&u);
    keep_join(&w);
    send_seq(&u, WRITER, 1);
    expect_seq(&w, USER, 1);
    send_seq(&u, WRITER, 3);
    cr_assert_eq(sink_wait_fail(&w.s, 10), 1);
    cr_assert(strstr(w.s.fails[0], "lost a message from lifeline User on channel main: message 3 "
                                   "came after 1"),
              "%s", w.s.fails[0]);
    expect_none(&w);
    zri_net_abort(u.net);
    u.net = NULL;
    zri_net_abort(w.net);
    w.net = NULL;
    opener_finish(&u);
    opener_finish(&w);
    t_rmdir(x.dir);
}

/* A peer that does not come back within the limit fails the run. */
Test(restart, peer_wait_expires)
{
    pair x;
    pair_init(&x);
    opener u, w;
    keep_open(&u, &x, USER, 0.5, 0);
    keep_open(&w, &x, WRITER, 0.5, 0);
    keep_join(&u);
    keep_join(&w);
    send_seq(&u, WRITER, 1);
    expect_seq(&w, USER, 1);
    double t0 = t_now();
    kill_net(&w);
    cr_assert_eq(sink_wait_fail(&u.s, 10), 1);
    cr_assert(t_now() - t0 >= 0.45, "failed after %g s", t_now() - t0);
    usleep(200000); /* reported once, not again at every look of the reader thread */
    cr_assert_eq(sink_fail_count(&u.s), 1, "%d failures: %s / %s", sink_fail_count(&u.s),
                 u.s.fails[0], u.s.fails[1]);
    cr_assert(strstr(u.s.fails[0], "did not come back within 0.5 s (--peer-wait)"), "%s",
              u.s.fails[0]);
    zri_net_abort(u.net);
    u.net = NULL;
    opener_finish(&u);
    sink_destroy(&w.s);
    zri_heap_free(w.heap);
    t_rmdir(x.dir);
}

/* Without keep mode a lost peer fails at once, as always. */
Test(restart, not_durable_fails_at_once)
{
    pair x;
    pair_init(&x);
    opener u, w;
    opener_init(&u, &t_prog2, USER, x.v, 10);
    opener_init(&w, &t_prog2, WRITER, x.v, 10);
    opener_start(&u);
    opener_start(&w);
    keep_join(&u);
    keep_join(&w);
    double t0 = t_now();
    kill_net(&w);
    cr_assert_eq(sink_wait_fail(&u.s, 10), 1);
    cr_assert(t_now() - t0 < 2);
    cr_assert(strstr(u.s.fails[0], "closed its connection without BYE"), "%s", u.s.fails[0]);
    zri_net_abort(u.net);
    u.net = NULL;
    opener_finish(&u);
    sink_destroy(&w.s);
    zri_heap_free(w.heap);
    t_rmdir(x.dir);
}
