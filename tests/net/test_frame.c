/* Unit tests for the frame codec (runtime/net/frame.c): round trips of every
 * value type with and without monitor metadata (what the plan's edge
 * carries: its clock entries, views and variable views, or a full clock),
 * the size of the metadata, and the rejection of every class of malformed
 * payload with its message. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "net_test.h"

static zri_heap *heap;

static void setup(void) { heap = zri_heap_new(); }

static void teardown(void) { zri_heap_free(heap); }

TestSuite(frame, .init = setup, .fini = teardown);

/* Encodes m, checks the length prefix, decodes it back. */
static zri_msg *round_trip(const zgrt_program *p, const zri_msg *m)
{
    uint8_t *buf;
    size_t len;
    cr_assert_eq(zri_frame_encode(p, m, &buf, &len), 0, "encode failed");
    cr_assert_geq(len, 5);
    uint32_t plen =
        (uint32_t)buf[0] << 24 | (uint32_t)buf[1] << 16 | (uint32_t)buf[2] << 8 | buf[3];
    cr_assert_eq(plen, len - 4);
    zri_msg *out = NULL;
    char err[512];
    int rc = zri_frame_decode(p, heap, buf + 4, len - 4, &out, err, sizeof err);
    cr_assert_eq(rc, 0, "decode failed: %s", err);
    cr_assert_not_null(out);
    free(buf);
    return out;
}

static void assert_same(const zgrt_program *p, const zri_msg *a, const zri_msg *b)
{
    cr_assert_eq(a->kind, b->kind);
    cr_assert_eq(a->from, b->from);
    cr_assert_eq(a->to, b->to);
    if (a->kind == ZRI_MSG_BYE) return;
    cr_assert_eq(a->chan, b->chan);
    cr_assert_eq(a->seq, b->seq);
    cr_assert_eq(a->nvals, b->nvals);
    for (int i = 0; i < a->nvals; i++) cr_assert(tv_eq(&a->vals[i], &b->vals[i]), "value %d", i);
    if (a->kind == ZRI_MSG_CTL) {
        cr_assert_eq(a->tag, b->tag);
        cr_assert_eq(a->value, b->value);
    }
    (void)p;
    cr_assert_eq(a->has_meta, b->has_meta);
    if (!a->has_meta) {
        cr_assert_null(b->vc);
        return;
    }
    cr_assert_eq(a->nvc, b->nvc);
    cr_assert_eq(a->nviews, b->nviews);
    cr_assert_eq(a->nvarviews, b->nvarviews);
    for (int l = 0; l < a->nvc; l++) cr_assert_eq(a->vc[l], b->vc[l]);
    for (int k = 0; k < a->nviews; k++) cr_assert_eq(a->views[k], b->views[k]);
    for (int k = 0; k < a->nvarviews; k++)
        cr_assert(tv_eq(&a->varviews[k], &b->varviews[k]), "varview %d", k);
}

/* A user message Writer → User; meta: the edge's metadata (ZRI_META_*). */
static zri_msg *user_msg(const zgrt_program *p, int nvals, int meta)
{
    zri_msg *m = zri_msg_new(p, nvals, 1, 0, meta);
    cr_assert_not_null(m);
    m->kind = ZRI_MSG_USER;
    m->chan = 1;
    m->seq = 42;
    return m;
}

static void check_one(zgrt_value v)
{
    zri_msg *m = user_msg(&t_prog3, 1, ZRI_META_NONE);
    m->vals[0] = v;
    zri_msg *d = round_trip(&t_prog3, m);
    assert_same(&t_prog3, m, d);
    free(m);
    free(d);
}

/* ---- zri_msg_new ------------------------------------------------------------------ */

Test(frame, msg_new_layout)
{
    zri_msg *m = zri_msg_new(&t_prog3, 3, 1, 0, ZRI_META_EDGE);
    cr_assert_not_null(m);
    cr_assert_eq(m->nvals, 3);
    cr_assert_eq(m->from, 1);
    cr_assert_eq(m->to, 0);
    cr_assert_eq(m->has_meta, ZRI_META_EDGE);
    cr_assert_eq(m->nvc, E10_NVC);
    cr_assert_eq(m->nviews, E10_NVIEWS);
    cr_assert_eq(m->nvarviews, E10_NVARVIEWS);
    cr_assert_not_null(m->vals);
    cr_assert_not_null(m->vc);
    cr_assert_not_null(m->views);
    cr_assert_not_null(m->varviews);
    /* every array writable over its whole size, zeroed */
    for (int i = 0; i < 3; i++) cr_assert_eq(m->vals[i].tag, ZGRT_UNDEF);
    for (int l = 0; l < E10_NVC; l++) m->vc[l] = l;
    memset(m->views, 1, E10_NVIEWS);
    for (int k = 0; k < E10_NVARVIEWS; k++) m->varviews[k] = tv_int(k);
    /* room for exactly the edge's entries */
    cr_assert_eq((uint8_t *)m->vc - (uint8_t *)m->varviews, E10_NVARVIEWS * sizeof(zgrt_value));
    cr_assert_eq((uintptr_t)m->vals % 8, 0);
    cr_assert_eq((uintptr_t)m->vc % 8, 0);
    free(m);

    /* a full clock: every lifeline's entry, then the edge's entries */
    m = zri_msg_new(&t_prog3, 0, 1, 0, ZRI_META_FULL);
    cr_assert_eq(m->has_meta, ZRI_META_FULL);
    cr_assert_eq(m->nvc, 3);
    cr_assert_eq(m->nviews, E10_NVIEWS);
    free(m);
    m = zri_msg_new(&t_prog3_nomon, 0, 1, 0, ZRI_META_FULL);
    cr_assert_not_null(m->vc);
    cr_assert_eq(m->nvc, 3);
    cr_assert_eq(m->nviews, 0);
    cr_assert_eq(m->nvarviews, 0);
    free(m);

    /* an edge that carries nothing, or no metadata asked for: none */
    m = zri_msg_new(&t_prog3, 2, 1, 2, ZRI_META_EDGE);
    cr_assert_eq(m->has_meta, ZRI_META_NONE);
    cr_assert_null(m->vc);
    free(m);
    m = zri_msg_new(&t_prog3, 2, 1, 0, ZRI_META_NONE);
    cr_assert_eq(m->has_meta, 0);
    cr_assert_null(m->vc);
    cr_assert_null(m->views);
    free(m);

    cr_assert_null(zri_msg_new(&t_prog3, -1, 1, 0, ZRI_META_NONE));
}
/* ---- round trips --------------------------------------------------------------------- */

Test(frame, round_trip_int)
{
    check_one(tv_int(0));
    check_one(tv_int(1));
    check_one(tv_int(-1));
    check_one(tv_int(INT64_MAX));
    check_one(tv_int(INT64_MIN));
}

Test(frame, round_trip_float)
{
    check_one(tv_float(0.0));
    check_one(tv_float(-0.0));
    check_one(tv_float(3.141592653589793));
    check_one(tv_float(-1e308));
    check_one(tv_float(5e-324));
}

Test(frame, round_trip_bool)
{
    check_one(tv_bool(0));
    check_one(tv_bool(1));
}

Test(frame, round_trip_enum)
{
    check_one(tv_enum(E_COLOR, 0));
    check_one(tv_enum(E_COLOR, 2));
    check_one(tv_enum(E_MOOD, 1));
}

Test(frame, round_trip_str)
{
    check_one(tv_str(heap, ""));
    check_one(tv_str(heap, "hello"));
    check_one(tv_str(heap, "h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80"));
    char *big = malloc(300001);
    memset(big, 'x', 300000);
    big[300000] = 0;
    check_one(tv_str(heap, big));
    free(big);
}

/* zri_frame_encode_in: a frame that fits is written into the caller's
 * room, one that does not (a room too small from the start, or outgrown
 * by a long string) into a buffer of its own; the bytes are those of
 * zri_frame_encode in every case, and a frame that cannot be encoded
 * leaves nothing allocated (ASan) and the room untouched as a result. */
Test(frame, encode_into_a_room)
{
    char *big = malloc(2001);
    memset(big, 'y', 2000);
    big[2000] = 0;
    const zgrt_value vs[] = {tv_int(7), tv_str(heap, "short"), tv_str(heap, big)};
    const size_t rooms[] = {0, 3, 16, 64, 512, 4096};
    for (size_t v = 0; v < sizeof vs / sizeof vs[0]; v++) {
        zri_msg *m = user_msg(&t_prog3, 1, ZRI_META_NONE);
        m->vals[0] = vs[v];
        uint8_t *want;
        size_t wlen;
        cr_assert_eq(zri_frame_encode(&t_prog3, m, &want, &wlen), 0);
        for (size_t r = 0; r < sizeof rooms / sizeof rooms[0]; r++) {
            uint8_t room[4096], *buf;
            size_t len;
            cr_assert_eq(
                zri_frame_encode_in(&t_prog3, m, rooms[r] ? room : NULL, rooms[r], &buf, &len), 0);
            cr_assert_eq(len, wlen);
            cr_assert(memcmp(buf, want, len) == 0, "value %zu, room %zu: other bytes", v, rooms[r]);
            if (rooms[r] >= len)
                cr_assert(buf == room, "value %zu, room %zu: not in the room", v, rooms[r]);
            else
                cr_assert(buf != room, "value %zu, room %zu: past the room", v, rooms[r]);
            if (buf != room) free(buf);
        }
        free(want);
        free(m);
    }
    /* cannot be encoded: a string with a NUL */
    zri_msg *m = user_msg(&t_prog3, 1, ZRI_META_NONE);
    m->vals[0] = (zgrt_value){ZGRT_STR, {.s = zri_str(heap, "a\0b", 3)}};
    uint8_t room[64], *buf = room;
    size_t len = 1;
    cr_assert_eq(zri_frame_encode_in(&t_prog3, m, room, sizeof room, &buf, &len), -1);
    cr_assert_null(buf);
    cr_assert_eq(len, 0);
    free(m);
    free(big);
}

Test(frame, round_trip_json)
{
    check_one(tv_json(heap, "null"));
    check_one(tv_json(heap, "42"));
    check_one(tv_json(heap, "\"text\""));
    check_one(tv_json(heap, "[1, 2.5, true, null, \"\\u00e9\"]"));
    check_one(tv_json(heap, "{\"a\": {\"b\": [1, {\"c\": -3}]}, \"d\": \"\\u0000x\"}"));
    /* nesting up to the limit */
    char deep[2 * 512 + 1];
    memset(deep, '[', 512);
    memset(deep + 512, ']', 512);
    deep[1024] = 0;
    check_one(tv_json(heap, deep));
}

Test(frame, round_trip_many_values)
{
    zri_msg *m = user_msg(&t_prog3, 6, 0);
    m->vals[0] = tv_int(7);
    m->vals[1] = tv_str(heap, "draft");
    m->vals[2] = tv_json(heap, "{\"k\": [1, 2]}");
    m->vals[3] = tv_enum(E_COLOR, 1);
    m->vals[4] = tv_float(2.5);
    m->vals[5] = tv_bool(1);
    zri_msg *d = round_trip(&t_prog3, m);
    assert_same(&t_prog3, m, d);
    cr_assert_eq(d->tag, 0);
    cr_assert_eq(d->value, 0);
    free(m);
    free(d);
}

Test(frame, round_trip_no_values)
{
    zri_msg *m = user_msg(&t_prog3, 0, 0);
    m->seq = 1;
    zri_msg *d = round_trip(&t_prog3, m);
    assert_same(&t_prog3, m, d);
    free(m);
    free(d);
}

/* A value of variable x's type, varied by k. */
static zgrt_value value_for(int x, int k)
{
    switch (x) {
    case V_COUNT: return tv_int(-5 - k);
    case V_DRAFT: return tv_str(heap, k % 2 ? "mailbox" : "user");
    case V_DATA: return tv_json(heap, "[\"x\"]");
    case V_COLOR: return tv_enum(E_COLOR, k % 3);
    case V_SCORE: return tv_float(0.25 * k);
    default: return tv_bool(k % 2);
    }
}

/* The variable of carried variable view k of m's edge. */
static int32_t edge_var(const zgrt_program *p, const zri_msg *m, int k)
{
    const zgrt_edge *e = zri_program_edge(p, m->from, m->to);
    cr_assert_not_null(e);
    return p->keeps[m->to].varviews[e->varviews[k].to].index;
}

static void fill_meta(const zgrt_program *p, zri_msg *m)
{
    for (int l = 0; l < m->nvc; l++) m->vc[l] = l == 1 ? INT64_MAX : 3 * l + 1;
    for (int k = 0; k < m->nviews; k++) m->views[k] = (k * 7) % 3 == 0;
    for (int k = 0; k < m->nvarviews; k++) {
        /* the first and the last left undefined */
        if (k == 0 || k == m->nvarviews - 1) continue;
        m->varviews[k] = value_for(edge_var(p, m, k), k);
    }
}
Test(frame, round_trip_meta)
{
    for (int form = ZRI_META_EDGE; form <= ZRI_META_FULL; form++) {
        zri_msg *m = user_msg(&t_prog3, 2, form);
        m->vals[0] = tv_str(heap, "a");
        m->vals[1] = tv_int(2);
        fill_meta(&t_prog3, m);
        zri_msg *d = round_trip(&t_prog3, m);
        assert_same(&t_prog3, m, d);
        free(m);
        free(d);
    }
}

Test(frame, round_trip_meta_without_monitor)
{
    zri_msg *m = user_msg(&t_prog3_nomon, 1, ZRI_META_FULL);
    m->vals[0] = tv_bool(0);
    fill_meta(&t_prog3_nomon, m);
    zri_msg *d = round_trip(&t_prog3_nomon, m);
    assert_same(&t_prog3_nomon, m, d);
    free(m);
    free(d);
}

Test(frame, round_trip_control)
{
    for (int meta = 0; meta < 2; meta++) {
        for (int value = 0; value < 2; value++) {
            zri_msg *m = zri_msg_new(&t_prog3, 0, 2, 1, meta ? ZRI_META_EDGE : ZRI_META_NONE);
            m->kind = ZRI_MSG_CTL;
            m->chan = 0;
            m->seq = 9;
            m->tag = 2;
            m->value = value;
            if (meta) fill_meta(&t_prog3, m);
            zri_msg *d = round_trip(&t_prog3, m);
            assert_same(&t_prog3, m, d);
            free(m);
            free(d);
        }
    }
}

/* Sequence numbers at each varint length's ends: one byte, two (written
 * and read on the short path), three and more. */
Test(frame, varints_of_every_length_round_trip)
{
    const int64_t seqs[] = {1,     127,           128,     255,           16383,
                            16384, (1 << 21) - 1, 1 << 21, INT64_MAX - 1, INT64_MAX};
    for (size_t i = 0; i < sizeof seqs / sizeof seqs[0]; i++) {
        zri_msg *m = zri_msg_new(&t_prog3, 0, 2, 1, ZRI_META_NONE);
        m->kind = ZRI_MSG_CTL;
        m->chan = 0;
        m->seq = seqs[i];
        m->tag = 1;
        zri_msg *d = round_trip(&t_prog3, m);
        cr_assert_eq(d->seq, seqs[i], "seq %lld came back as %lld", (long long)seqs[i],
                     (long long)d->seq);
        free(m);
        free(d);
    }
}

/* zri_frame_decode_in: a block function's block, or zri_msg_new's when it
 * gives none. */
typedef struct blocks {
    zri_msg *give;
    int asked, nvals, from, to, chan, form;
} blocks;

static zri_msg *give_block(void *user, int32_t nvals, int32_t from, int32_t to, int32_t chan,
                           int form)
{
    blocks *b = user;
    b->asked++;
    b->nvals = nvals, b->from = from, b->to = to, b->chan = chan, b->form = form;
    zri_msg *m = b->give;
    b->give = NULL;
    return m;
}

Test(frame, decode_takes_the_block_given)
{
    zri_msg *m = user_msg(&t_prog3, 2, ZRI_META_EDGE);
    m->vals[0] = tv_str(heap, "a");
    m->vals[1] = tv_int(2);
    fill_meta(&t_prog3, m);
    uint8_t *buf;
    size_t len;
    char err[512];
    cr_assert_eq(zri_frame_encode(&t_prog3, m, &buf, &len), 0);
    for (int given = 0; given < 2; given++) {
        zri_msg *block = zri_msg_new(&t_prog3, 2, m->from, m->to, ZRI_META_EDGE);
        blocks b = {.give = given ? block : NULL};
        zri_msg *d = NULL;
        cr_assert_eq(zri_frame_decode_in(&t_prog3, heap, give_block, &b, buf + 4, len - 4, &d, err,
                                         sizeof err),
                     0, "%s", err);
        cr_assert_eq(b.asked, 1);
        cr_assert_eq(b.nvals, 2);
        cr_assert_eq(b.from, m->from);
        cr_assert_eq(b.to, m->to);
        cr_assert_eq(b.chan, m->chan);
        cr_assert_eq(b.form, ZRI_META_EDGE);
        if (given)
            cr_assert_eq(d, block, "the message is not in the block given");
        else
            cr_assert_neq(d, block);
        assert_same(&t_prog3, m, d);
        free(d);
        if (!given) free(block);
    }
    /* a BYE takes no block */
    zri_msg bye = {.kind = ZRI_MSG_BYE, .from = 0, .to = 2};
    free(buf);
    cr_assert_eq(zri_frame_encode(&t_prog3, &bye, &buf, &len), 0);
    blocks b = {0};
    zri_msg *d = NULL;
    cr_assert_eq(
        zri_frame_decode_in(&t_prog3, heap, give_block, &b, buf + 4, len - 4, &d, err, sizeof err),
        0, "%s", err);
    cr_assert_eq(b.asked, 0);
    cr_assert_eq(d->kind, ZRI_MSG_BYE);
    free(d);
    free(buf);
    free(m);
}

Test(frame, round_trip_bye)
{
    zri_msg m;
    memset(&m, 0, sizeof m);
    m.kind = ZRI_MSG_BYE;
    m.from = 0;
    m.to = 2;
    zri_msg *d = round_trip(&t_prog3, &m);
    assert_same(&t_prog3, &m, d);
    cr_assert_eq(d->nvals, 0);
    free(d);
}

/* ---- the size of the metadata ----------------------------------------------------------------- */

/* The metadata is what the edge carries: its clock entries, one bit per
 * view and one value per variable view; a traced run's full clock instead
 * of the entries. */
Test(frame, metadata_size_follows_the_edge)
{
    uint8_t *buf;
    size_t len;
    /* header 4 (with flags) + from, to, chan, seq, nvals 5 */
    for (int form = ZRI_META_NONE; form <= ZRI_META_FULL; form++) {
        zri_msg *m = user_msg(&t_prog3, 0, form);
        m->chan = 0, m->seq = 1;
        cr_assert_eq(zri_frame_encode(&t_prog3, m, &buf, &len), 0);
        /* vc 2 (the edge's) or 3 (full) × 1; views 1; varviews 5 × 1 (undef) */
        size_t want = form == ZRI_META_NONE   ? 9
                      : form == ZRI_META_EDGE ? 9 + 2 + 1 + 5
                                              : 9 + 3 + 1 + 5;
        cr_expect_eq(len - 4, want, "form %d: payload of %zu bytes", form, len - 4);
        free(buf);
        if (form == ZRI_META_EDGE) {
            for (int k = 0; k < E10_NVIEWS; k++) m->views[k] = 1;
            m->varviews[VV_MAILBOX_COUNT] = tv_int(7); /* 1 + 8 bytes */
            m->varviews[VV_MAILBOX_OK] = tv_bool(1);   /* 1 + 1 bytes */
            m->vc[1] = 200;                            /* a two-byte varint */
            cr_assert_eq(zri_frame_encode(&t_prog3, m, &buf, &len), 0);
            cr_expect_eq(len - 4, 9 + 3 + 1 + 9 + 2 + 3, "payload of %zu bytes", len - 4);
            free(buf);
            zri_msg *d = round_trip(&t_prog3, m);
            assert_same(&t_prog3, m, d);
            free(d);
        }
        free(m);
    }
    /* an edge that carries nothing: no metadata unless the clock is full */
    zri_msg *m = zri_msg_new(&t_prog3, 0, 0, 2, ZRI_META_FULL);
    m->kind = ZRI_MSG_USER, m->chan = 0, m->seq = 1;
    cr_assert_eq(zri_frame_encode(&t_prog3, m, &buf, &len), 0);
    cr_expect_eq(len - 4, 9 + 3);
    free(buf);
    m->has_meta = ZRI_META_EDGE; /* the edge carries no groups */
    cr_assert_neq(zri_frame_encode(&t_prog3, m, &buf, &len), 0);
    free(m);
}
/* ---- the encoder refuses what the decoder would reject --------------------------------------- */

static int encodes(const zgrt_program *p, const zri_msg *m)
{
    uint8_t *buf;
    size_t len;
    int rc = zri_frame_encode(p, m, &buf, &len);
    if (rc == 0)
        free(buf);
    else
        cr_assert_null(buf);
    return rc == 0;
}

Test(frame, encoder_refuses_invalid)
{
    zri_msg *m = user_msg(&t_prog3, 1, ZRI_META_EDGE);
    fill_meta(&t_prog3, m);
    m->vals[0] = tv_int(1);
    cr_assert(encodes(&t_prog3, m));

    m->vals[0] = tv_float(NAN);
    cr_assert_not(encodes(&t_prog3, m));
    m->vals[0] = tv_float(INFINITY);
    cr_assert_not(encodes(&t_prog3, m));
    m->vals[0] = tv_bool(2);
    cr_assert_not(encodes(&t_prog3, m));
    m->vals[0] = tv_enum(E_COLOR, 3);
    cr_assert_not(encodes(&t_prog3, m));
    m->vals[0] = tv_enum(2, 0);
    cr_assert_not(encodes(&t_prog3, m));
    m->vals[0] = tv_str(heap, "bad \xff");
    cr_assert_not(encodes(&t_prog3, m));
    m->vals[0] = (zgrt_value){ZGRT_STR, {.s = zri_str(heap, "a\0b", 3)}};
    cr_assert_not(encodes(&t_prog3, m));
    m->vals[0] = (zgrt_value){ZGRT_UNDEF, {0}};
    cr_assert_not(encodes(&t_prog3, m));
    m->vals[0] = (zgrt_value){9, {0}};
    cr_assert_not(encodes(&t_prog3, m));
    m->vals[0] = tv_int(1);

    /* carried variable views are typed by their variable */
    m->varviews[VV_MAILBOX_COUNT] = tv_str(heap, "not an int");
    cr_assert_not(encodes(&t_prog3, m));
    m->varviews[VV_MAILBOX_COUNT] = tv_int(1);
    m->varviews[VV_WRITER_COLOR] = tv_enum(E_MOOD, 0);
    cr_assert_not(encodes(&t_prog3, m));
    m->varviews[VV_WRITER_COLOR] = tv_enum(E_COLOR, 0);
    m->varviews[VV_MAILBOX_DATA] = tv_int(3);
    cr_assert_not(encodes(&t_prog3, m));
    m->varviews[VV_MAILBOX_DATA] = tv_json(heap, "3");
    cr_assert(encodes(&t_prog3, m));
    m->views[3] = 2;
    cr_assert_not(encodes(&t_prog3, m));
    m->views[3] = 1;
    m->vc[1] = -1;
    cr_assert_not(encodes(&t_prog3, m));
    m->vc[1] = 1;
    cr_assert(encodes(&t_prog3, m));
    /* counts that are not the edge's */
    m->nviews = 3;
    cr_assert_not(encodes(&t_prog3, m));
    m->nviews = E10_NVIEWS;
    m->nvc = 3;
    cr_assert_not(encodes(&t_prog3, m));
    m->nvc = E10_NVC;
    m->has_meta = 3;
    cr_assert_not(encodes(&t_prog3, m));
    m->has_meta = ZRI_META_EDGE;
    cr_assert(encodes(&t_prog3, m));

    m->from = 3;
    cr_assert_not(encodes(&t_prog3, m));
    m->from = 0;
    cr_assert_not(encodes(&t_prog3, m)); /* to itself */
    m->from = 1;
    m->chan = 2;
    cr_assert_not(encodes(&t_prog3, m));
    m->chan = 0;
    m->seq = -1;
    cr_assert_not(encodes(&t_prog3, m));
    m->seq = 0; /* a stream's messages count from 1 */
    cr_assert_not(encodes(&t_prog3, m));
    m->seq = 1;
    m->kind = 5;
    cr_assert_not(encodes(&t_prog3, m));
    m->kind = ZRI_MSG_CTL; /* a control message carries no values */
    cr_assert_not(encodes(&t_prog3, m));
    free(m);

    m = zri_msg_new(&t_prog3, 0, 0, 1, ZRI_META_NONE);
    m->kind = ZRI_MSG_CTL;
    m->tag = 3;
    cr_assert_not(encodes(&t_prog3, m));
    m->tag = 2, m->value = 2;
    cr_assert_not(encodes(&t_prog3, m));
    m->value = 1;
    cr_assert_not(encodes(&t_prog3, m)); /* sequence number 0 */
    m->seq = 1;
    cr_assert(encodes(&t_prog3, m));
    free(m);
}

/* ---- rejection ------------------------------------------------------------------------------- */

/* Decodes b and expects the exact message. */
static void rejects(const zgrt_program *p, const tbytes *b, const char *msg)
{
    zri_msg *out = (zri_msg *)1;
    char err[512];
    int rc = zri_frame_decode(p, heap, b->d, b->n, &out, err, sizeof err);
    cr_assert_eq(rc, -1, "accepted, expected: %s", msg);
    cr_assert_null(out);
    cr_assert_str_eq(err, msg);
}

/* A user message header User(0) -> Writer(1) on main, seq 1. */
static void user_head(tbytes *b, unsigned flags, unsigned nvals)
{
    tb_header(b, 0, flags);
    tb_varint(b, 0);
    tb_varint(b, 1);
    tb_varint(b, 0);
    tb_varint(b, 1);
    tb_varint(b, nvals);
}

Test(frame, accepts_hand_built)
{
    tbytes b = {.n = 0};
    user_head(&b, 0, 2);
    tb_u8(&b, ZGRT_STR);
    tb_varint(&b, 2);
    tb_raw(&b, "hi", 2);
    tb_u8(&b, ZGRT_ENUM);
    tb_varint(&b, 1);
    tb_varint(&b, 1);
    zri_msg *m;
    char err[256];
    cr_assert_eq(zri_frame_decode(&t_prog3, heap, b.d, b.n, &m, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(m->vals[0].u.s->data, "hi");
    cr_assert_eq(m->vals[1].u.i, ((int64_t)1 << 32) | 1);
    free(m);
}

Test(frame, rejects_header)
{
    tbytes b = {.n = 0};
    rejects(&t_prog3, &b, "frame truncated in the header");
    tb_u8(&b, 0x00);
    rejects(&t_prog3, &b, "bad magic byte 0x00 (not a zgc frame)");
    b.n = 0;
    tb_u8(&b, 0x5A);
    tb_u8(&b, 1); /* the dense views of runtime ABI 1 */
    rejects(&t_prog3, &b, "frame truncated in the header");
    tb_u8(&b, 0);
    rejects(&t_prog3, &b, "unsupported frame version 1 (expected 4)");
    b.n = 0;
    tb_u8(&b, 0x5A);
    tb_u8(&b, 2); /* every slot of the program on every message: runtime ABI 2 */
    tb_u8(&b, 0);
    rejects(&t_prog3, &b, "unsupported frame version 2 (expected 4)");
    b.n = 0;
    tb_u8(&b, 0x5A);
    tb_u8(&b, 3); /* sequence numbers from 0, no counts frames */
    tb_u8(&b, 2);
    rejects(&t_prog3, &b, "unsupported frame version 3 (expected 4)");
    b.n = 0;
    tb_u8(&b, 0x5A);
    tb_u8(&b, 5);
    tb_u8(&b, 2);
    rejects(&t_prog3, &b, "unsupported frame version 5 (expected 4)");
    /* the handshake (hello.c, its own version) and heartbeats
     * (socket.c) are never messages */
    for (unsigned k = 3; k <= 6; k++) {
        b.n = 0;
        tb_u8(&b, 0x5A);
        tb_u8(&b, 2);
        tb_u8(&b, k);
        char want[64];
        snprintf(want, sizeof want, "unexpected handshake frame (kind %u)", k);
        rejects(&t_prog3, &b, want);
    }
    b.n = 0;
    tb_header(&b, 7, 0);
    rejects(&t_prog3, &b, "unexpected heartbeat");
    b.n = 0;
    tb_header(&b, 8, 0);
    rejects(&t_prog3, &b, "unexpected counts frame (kind 8)");
    b.n = 0;
    tb_header(&b, 9, 0);
    rejects(&t_prog3, &b, "unexpected counts frame (kind 9)");
    b.n = 0;
    tb_header(&b, 10, 0);
    rejects(&t_prog3, &b, "unknown frame kind 10");
    b.n = 0;
    tb_header(&b, 3, 0);
    rejects(&t_prog3, &b, "unexpected handshake frame (kind 3)");
    b.n = 0;
    tb_header(&b, 0, 0x04);
    rejects(&t_prog3, &b, "unknown flags 0x04");
}

Test(frame, rejects_indices)
{
    tbytes b = {.n = 0};
    tb_header(&b, 0, 0);
    tb_varint(&b, 3);
    rejects(&t_prog3, &b, "sender lifeline index 3 out of range (the program has 3 lifelines)");
    b.n = 0;
    tb_header(&b, 0, 0);
    tb_varint(&b, 0);
    tb_varint(&b, 1000);
    rejects(&t_prog3, &b,
            "receiver lifeline index 1000 out of range (the program has 3 lifelines)");
    b.n = 0;
    tb_header(&b, 0, 0);
    tb_varint(&b, 1);
    tb_varint(&b, 1);
    rejects(&t_prog3, &b, "message from lifeline Writer to itself");
    b.n = 0;
    tb_header(&b, 0, 0);
    tb_varint(&b, 0);
    tb_varint(&b, 1);
    tb_varint(&b, 2);
    rejects(&t_prog3, &b, "channel index 2 out of range (the program has 2 channels)");
    b.n = 0;
    tb_header(&b, 1, 0);
    tb_varint(&b, 0);
    tb_varint(&b, 1);
    tb_varint(&b, 0);
    tb_varint(&b, 1);
    tb_varint(&b, 3);
    rejects(&t_prog3, &b, "control tag index 3 out of range (the program has 3 tags)");
    b.n--;
    tb_varint(&b, 1);
    tb_u8(&b, 2);
    rejects(&t_prog3, &b, "control decision 2 is not 0 or 1");
    b.n = 0;
    tb_header(&b, 2, 0);
    tb_varint(&b, 2);
    tb_varint(&b, 2);
    rejects(&t_prog3, &b, "BYE from lifeline Mailbox to itself");
    b.n = 0;
    tb_header(&b, 2, 0);
    tb_varint(&b, 2);
    tb_varint(&b, 5);
    rejects(&t_prog3, &b, "receiver lifeline index 5 out of range (the program has 3 lifelines)");
}

Test(frame, rejects_varints)
{
    tbytes b = {.n = 0};
    tb_header(&b, 0, 0);
    tb_u8(&b, 0x80);
    tb_u8(&b, 0x00);
    rejects(&t_prog3, &b, "non-minimal varint in sender lifeline");
    b.n = 0;
    tb_header(&b, 0, 0);
    tb_varint(&b, 0);
    tb_varint(&b, 1);
    tb_varint(&b, 0);
    for (int i = 0; i < 9; i++) tb_u8(&b, 0xFF);
    tb_u8(&b, 0x02);
    rejects(&t_prog3, &b, "varint too large in the sequence number");
    b.n = 0;
    tb_header(&b, 0, 0);
    tb_varint(&b, 0);
    tb_varint(&b, 1);
    tb_varint(&b, 0);
    tb_varint(&b, (uint64_t)INT64_MAX + 1);
    rejects(&t_prog3, &b, "sequence number out of range");
    b.n = 0;
    tb_header(&b, 0, 0);
    tb_varint(&b, 0);
    tb_varint(&b, 1);
    tb_varint(&b, 0);
    tb_varint(&b, 0);
    rejects(&t_prog3, &b, "sequence number 0 (a stream's messages count from 1)");
}

/* ---- streams and counts frames ----------------------------------------------- */

Test(frame, seq_check)
{
    cr_assert_eq(zri_seq_check(0, 1), ZRI_SEQ_NEXT);
    cr_assert_eq(zri_seq_check(41, 42), ZRI_SEQ_NEXT);
    cr_assert_eq(zri_seq_check(42, 42), ZRI_SEQ_COPY);
    cr_assert_eq(zri_seq_check(42, 1), ZRI_SEQ_COPY);
    cr_assert_eq(zri_seq_check(42, 44), ZRI_SEQ_GAP);
    cr_assert_eq(zri_seq_check(0, 2), ZRI_SEQ_GAP);
    cr_assert_eq(zri_seq_check(INT64_MAX - 1, INT64_MAX), ZRI_SEQ_NEXT);
}

/* A stream of user messages 1..5 delivered with copies and a gap, as a
 * receiver after a reconnection sees them: copies dropped, gap refused. */
Test(frame, stream_copies_dropped_gap_refused)
{
    int64_t received = 0;
    const int64_t arrive[] = {1, 2, 3, 2, 3, 4, 1, 5, 7};
    const int want[] = {ZRI_SEQ_NEXT, ZRI_SEQ_NEXT, ZRI_SEQ_NEXT, ZRI_SEQ_COPY, ZRI_SEQ_COPY,
                        ZRI_SEQ_NEXT, ZRI_SEQ_COPY, ZRI_SEQ_NEXT, ZRI_SEQ_GAP};
    int taken = 0;
    for (size_t i = 0; i < sizeof arrive / sizeof *arrive; i++) {
        zri_msg *m = user_msg(&t_prog3, 0, 0);
        m->seq = arrive[i];
        zri_msg *d = round_trip(&t_prog3, m); /* the number survives the wire */
        cr_assert_eq(d->seq, arrive[i]);
        int k = zri_seq_check(received, d->seq);
        cr_assert_eq(k, want[i], "message %lld after %lld", (long long)d->seq, (long long)received);
        if (k == ZRI_SEQ_NEXT) received = d->seq, taken++;
        free(m);
        free(d);
    }
    cr_assert_eq(received, 5);
    cr_assert_eq(taken, 5);
}

static int counts_round_trip(int kind, const zri_count *c, int32_t n, zri_count **out,
                             int32_t *nout)
{
    uint8_t *buf;
    size_t len;
    if (zri_counts_encode(&t_prog3, kind, 1, 0, c, n, &buf, &len) < 0) return -1;
    cr_assert_eq(((size_t)buf[0] << 24 | (size_t)buf[1] << 16 | (size_t)buf[2] << 8 | buf[3]),
                 len - 4);
    int k;
    int32_t from, to;
    char err[256];
    int rc =
        zri_counts_decode(&t_prog3, buf + 4, len - 4, &k, &from, &to, out, nout, err, sizeof err);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_eq(k, kind);
    cr_assert_eq(from, 1);
    cr_assert_eq(to, 0);
    free(buf);
    return 0;
}

Test(frame, counts_round_trip)
{
    zri_count c[2] = {{0, 7, 5}, {1, (int64_t)1 << 40, 0}};
    zri_count *d;
    int32_t n;
    cr_assert_eq(counts_round_trip(ZRI_KIND_SYNC, c, 2, &d, &n), 0);
    cr_assert_eq(n, 2);
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(d[i].chan, c[i].chan);
        cr_assert_eq(d[i].received, c[i].received);
        cr_assert_eq(d[i].committed, c[i].committed);
    }
    free(d);
    zri_count a[1] = {{1, 9, 9}};
    cr_assert_eq(counts_round_trip(ZRI_KIND_ACK, a, 1, &d, &n), 0);
    cr_assert_eq(n, 1);
    cr_assert_eq(d[0].chan, 1);
    cr_assert_eq(d[0].received, 9);
    cr_assert_eq(d[0].committed, 9);
    free(d);
    cr_assert_eq(counts_round_trip(ZRI_KIND_SYNC, NULL, 0, &d, &n), 0);
    cr_assert_eq(n, 0);
    free(d);
}

Test(frame, counts_encode_refuses)
{
    uint8_t *buf;
    size_t len;
    zri_count dup[2] = {{1, 3, 3}, {1, 4, 4}}, over[1] = {{0, 3, 4}}, neg[1] = {{0, 3, -1}},
              chan[1] = {{2, 1, 1}}, ack[1] = {{0, 4, 3}}, ok[1] = {{0, 4, 3}};
    cr_assert_eq(zri_counts_encode(&t_prog3, ZRI_KIND_SYNC, 1, 0, dup, 2, &buf, &len), -1);
    cr_assert_eq(zri_counts_encode(&t_prog3, ZRI_KIND_SYNC, 1, 0, over, 1, &buf, &len), -1);
    cr_assert_eq(zri_counts_encode(&t_prog3, ZRI_KIND_SYNC, 1, 0, neg, 1, &buf, &len), -1);
    cr_assert_eq(zri_counts_encode(&t_prog3, ZRI_KIND_SYNC, 1, 0, chan, 1, &buf, &len), -1);
    cr_assert_eq(zri_counts_encode(&t_prog3, ZRI_KIND_ACK, 1, 0, ack, 1, &buf, &len), -1);
    cr_assert_eq(zri_counts_encode(&t_prog3, ZRI_KIND_SYNC, 1, 1, ok, 1, &buf, &len), -1);
    cr_assert_eq(zri_counts_encode(&t_prog3, ZRI_KIND_BEAT, 1, 0, ok, 1, &buf, &len), -1);
    cr_assert_null(buf);
    cr_assert_eq(zri_counts_encode(&t_prog3, ZRI_KIND_SYNC, 1, 0, ok, 1, &buf, &len), 0);
    free(buf);
}

static void counts_rejects(const tbytes *b, const char *msg)
{
    int k;
    int32_t from, to, n;
    zri_count *c = (zri_count *)1;
    char err[256];
    cr_assert_eq(zri_counts_decode(&t_prog3, b->d, b->n, &k, &from, &to, &c, &n, err, sizeof err),
                 -1, "accepted, expected: %s", msg);
    cr_assert_null(c);
    cr_assert_str_eq(err, msg);
}

Test(frame, counts_decode_rejects)
{
    tbytes b = {.n = 0};
    tb_header(&b, 9, 0);
    tb_varint(&b, 1);
    tb_varint(&b, 0);
    size_t head = b.n;
    tb_varint(&b, 4);
    counts_rejects(&b, "4 channel counts (the program has 2 channels)");
    b.n = head;
    tb_varint(&b, 2);
    tb_varint(&b, 1);
    tb_varint(&b, 3);
    tb_varint(&b, 3);
    tb_varint(&b, 0);
    counts_rejects(&b, "channel 0 after channel 1: counts must be in increasing channel order");
    b.n = head;
    tb_varint(&b, 1);
    tb_varint(&b, 0);
    tb_varint(&b, 2);
    tb_varint(&b, 3);
    counts_rejects(&b, "channel 0: 3 committed of 2 received");
    b.n = head;
    tb_varint(&b, 1);
    tb_varint(&b, 0);
    tb_varint(&b, (uint64_t)INT64_MAX + 1);
    counts_rejects(&b, "the received count out of range");
    b.n = head;
    tb_varint(&b, 1);
    tb_varint(&b, 0);
    tb_varint(&b, 2);
    counts_rejects(&b, "frame truncated in the committed count");
    b.n = head;
    tb_varint(&b, 0);
    tb_u8(&b, 0);
    counts_rejects(&b, "1 trailing byte after the frame");
    b.n = 0;
    tb_header(&b, 9, 0);
    tb_varint(&b, 1);
    tb_varint(&b, 1);
    counts_rejects(&b, "counts from lifeline Writer to itself");
    b.n = 0;
    tb_header(&b, 0, 0);
    counts_rejects(&b, "not a counts frame (kind 0)");
}

Test(frame, rejects_value_counts)
{
    tbytes b = {.n = 0};
    user_head(&b, 0, 65537);
    rejects(&t_prog3, &b, "too many values (65537, at most 65536)");
    b.n = 0;
    user_head(&b, 0, 3);
    tb_u8(&b, ZGRT_BOOL);
    tb_u8(&b, 1);
    tb_u8(&b, ZGRT_BOOL);
    rejects(&t_prog3, &b, "value count 3 exceeds the frame (3 bytes left)");
}

Test(frame, rejects_values)
{
    struct {
        const char *bytes;
        size_t n;
        const char *msg;
    } cases[] = {
        {"\x09", 1, "value 2 has unknown type tag 9"},
        {"\x00", 1, "value 2 is undefined"},
        {"\x01\x02", 2, "bool value 2 is 2, not 0 or 1"},
        {"\x03\x7f\xf0\x00\x00\x00\x00\x00\x00", 9, "float value 2 is not finite"},
        {"\x03\xff\xf8\x00\x00\x00\x00\x00\x01", 9, "float value 2 is not finite"},
        {"\x06\x02\x00", 3, "enum value 2: enum index 2 out of range (the program has 2 enums)"},
        {"\x06\x00\x03", 3, "enum value 2: member 3 out of range for enum Color (3 members)"},
        {"\x06\x01\x02", 3, "enum value 2: member 2 out of range for enum Mood (2 members)"},
        {"\x04\x02\xc0\x80", 4, "string value 2 is not valid UTF-8"},     /* overlong */
        {"\x04\x03\xed\xa0\x80", 5, "string value 2 is not valid UTF-8"}, /* surrogate */
        {"\x04\x01\x80", 3, "string value 2 is not valid UTF-8"},         /* stray byte */
        {"\x04\x02\xc3", 3, "string value 2: length 2 exceeds the frame (1 bytes left)"},
        {"\x04\x04\xf4\x90\x80\x80", 6, "string value 2 is not valid UTF-8"}, /* > U+10FFFF */
        {"\x04\x01\xf5", 3, "string value 2 is not valid UTF-8"},
        {"\x04\x03"
         "a\0b",
         5, "string value 2 contains a NUL byte"},
        {"\x04\x80\x80\x80\x80\x01", 6,
         "string value 2: length 268435456 exceeds the frame (0 bytes left)"},
        {"\x05\x01{", 3,
         "json value 2 is not valid JSON: string or '}' expected near end of file at byte 1"},
        {"\x05\x03"
         "1 2",
         5, "json value 2 is not valid JSON: end of file expected near '2' at byte 3"},
        {"\x05\x02\"\xff", 4, "json value 2 is not valid UTF-8"},
        {"\x05\x03[\0]", 5, "json value 2 contains a NUL byte"},
        /* the names of what was cut short, formatted only for the message */
        {"", 0, "frame truncated in the type of value 2"},
        {"\x01", 1, "frame truncated in bool value 2"},
        {"\x02\x00\x00", 3, "frame truncated in int value 2"},
        {"\x03\x00", 2, "frame truncated in float value 2"},
        {"\x04", 1, "frame truncated in the length of string value 2"},
        {"\x05\x80", 2, "frame truncated in the length of json value 2"},
        {"\x04\x80\x00", 3, "non-minimal varint in the length of string value 2"},
        {"\x06", 1, "frame truncated in the enum index of value 2"},
        {"\x06\x00", 2, "frame truncated in the member of enum value 2"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tbytes b = {.n = 0};
        user_head(&b, 0, 2);
        tb_u8(&b, ZGRT_INT);
        tb_u64be(&b, 5);
        tb_raw(&b, cases[i].bytes, cases[i].n);
        rejects(&t_prog3, &b, cases[i].msg);
    }
}

Test(frame, rejects_deep_json)
{
    tbytes b = {.n = 0};
    user_head(&b, 0, 1);
    tb_u8(&b, ZGRT_JSON);
    tb_varint(&b, 2 * 513);
    for (int i = 0; i < 513; i++) tb_u8(&b, '[');
    for (int i = 0; i < 513; i++) tb_u8(&b, ']');
    rejects(&t_prog3, &b, "json value 1 nests deeper than 512 levels");
}

Test(frame, rejects_meta)
{
    /* User -> Writer carries Mailbox's: vc[Mailbox], 2 views, Mailbox.count,
     * Mailbox.data, Mailbox.ok */
    tbytes b = {.n = 0};
    user_head(&b, 1, 0);
    tb_varint(&b, (uint64_t)INT64_MAX + 1);
    rejects(&t_prog3, &b, "the vector clock entry of Mailbox is out of range");
    /* a full clock: every lifeline's entry */
    b.n = 0;
    user_head(&b, 3, 0);
    tb_varint(&b, 1);
    tb_varint(&b, (uint64_t)INT64_MAX + 1);
    rejects(&t_prog3, &b, "the vector clock entry of Writer is out of range");
    /* flags: a full clock needs metadata; unknown bits */
    b.n = 0;
    user_head(&b, 2, 0);
    rejects(&t_prog3, &b, "a full clock without metadata (flags 0x02)");
    b.n = 0;
    user_head(&b, 5, 0);
    rejects(&t_prog3, &b, "unknown flags 0x05");
    /* an edge that carries nothing: only a full clock */
    b.n = 0;
    tb_header(&b, 0, 1);
    tb_varint(&b, 1); /* Writer -> Mailbox */
    tb_varint(&b, 2);
    tb_varint(&b, 0);
    tb_varint(&b, 1);
    tb_varint(&b, 0);
    rejects(&t_prog3, &b, "metadata from Writer to Mailbox, which the monitor plan does not send");

    /* views: 2 in one byte, bits 2 to 7 must be zero */
    b.n = 0;
    user_head(&b, 1, 0);
    tb_varint(&b, 1);
    tb_u8(&b, 0x07);
    rejects(&t_prog3, &b, "unused bits of the monitor views are not zero");
    b.n--;
    tb_u8(&b, 0x81);
    rejects(&t_prog3, &b, "unused bits of the monitor views are not zero");
    b.n--;
    tb_u8(&b, 0x02);
    rejects(&t_prog3, &b, "frame truncated in the type of value of Mailbox.count");

    /* varviews: one value per carried entry, typed by its variable */
    tb_u8(&b, ZGRT_STR); /* Mailbox.count */
    rejects(&t_prog3, &b, "value of Mailbox.count is a string, but the variable is declared int");
    b.n -= 1;
    tb_u8(&b, ZGRT_INT); /* Mailbox.count */
    tb_u64be(&b, 5);
    tb_u8(&b, ZGRT_BOOL); /* Mailbox.data */
    tb_u8(&b, 1);
    rejects(&t_prog3, &b, "value of Mailbox.data is a bool, but the variable is declared json");
    b.n -= 2;
    tb_u8(&b, ZGRT_JSON);
    tb_varint(&b, 2);
    tb_raw(&b, "[]", 2);
    rejects(&t_prog3, &b, "frame truncated in the type of value of Mailbox.ok");
    /* the last entry: accepted */
    tb_u8(&b, ZGRT_BOOL); /* Mailbox.ok */
    tb_u8(&b, 1);
    zri_msg *m;
    char err[256];
    cr_assert_eq(zri_frame_decode(&t_prog3, heap, b.d, b.n, &m, err, sizeof err), 0, "%s", err);
    cr_assert_eq(m->has_meta, ZRI_META_EDGE);
    cr_assert_eq(m->nvc, 1);
    cr_assert_eq(m->vc[0], 1);
    cr_assert_eq(m->varviews[0].u.i, 5);
    cr_assert_eq(m->varviews[1].tag, ZGRT_JSON);
    cr_assert_eq(m->varviews[2].u.i, 1);
    cr_assert_eq(m->views[0], 0);
    cr_assert_eq(m->views[1], 1);
    free(m);
    tb_u8(&b, ZGRT_UNDEF);
    rejects(&t_prog3, &b, "1 trailing byte after the frame");
    tb_u8(&b, 0);
    rejects(&t_prog3, &b, "2 trailing bytes after the frame");
}
Test(frame, rejects_oversized_length)
{
    uint8_t one = 0x5A;
    zri_msg *m;
    char err[256];
    cr_assert_eq(
        zri_frame_decode(&t_prog3, heap, &one, (size_t)ZRI_FRAME_MAX + 1, &m, err, sizeof err), -1);
    cr_assert_str_eq(err, "frame of 67108865 bytes exceeds the limit of 67108864 bytes");
}

/* Every proper prefix of a valid frame is rejected, and so is the frame
 * with a byte appended. */
static void check_prefixes(const zgrt_program *p, const zri_msg *m)
{
    uint8_t *buf;
    size_t len;
    cr_assert_eq(zri_frame_encode(p, m, &buf, &len), 0);
    const uint8_t *pl = buf + 4;
    size_t plen = len - 4;
    for (size_t k = 0; k < plen; k++) {
        uint8_t *copy = malloc(k ? k : 1); /* exact size: ASan catches overreads */
        memcpy(copy, pl, k);
        zri_msg *out = (zri_msg *)1;
        char err[512] = "";
        int rc = zri_frame_decode(p, heap, copy, k, &out, err, sizeof err);
        cr_assert_eq(rc, -1, "prefix of %zu/%zu bytes accepted", k, plen);
        cr_assert_null(out);
        cr_assert(strstr(err, "truncated") || strstr(err, "exceeds the frame"), "prefix %zu: %s", k,
                  err);
        free(copy);
    }
    uint8_t *longer = malloc(plen + 1);
    memcpy(longer, pl, plen);
    longer[plen] = 0;
    zri_msg *out;
    char err[512];
    cr_assert_eq(zri_frame_decode(p, heap, longer, plen + 1, &out, err, sizeof err), -1);
    cr_assert_str_eq(err, "1 trailing byte after the frame");
    free(longer);
    free(buf);
}

Test(frame, rejects_every_truncation)
{
    zri_msg *m = user_msg(&t_prog3, 6, ZRI_META_EDGE);
    m->vals[0] = tv_int(-7);
    m->vals[1] = tv_str(heap, "dr\xc3\xa4"
                              "ft");
    m->vals[2] = tv_json(heap, "{\"k\": [1, 2, {\"x\": null}]}");
    m->vals[3] = tv_enum(E_MOOD, 1);
    m->vals[4] = tv_float(-2.5);
    m->vals[5] = tv_bool(1);
    fill_meta(&t_prog3, m);
    check_prefixes(&t_prog3, m);
    free(m);

    m = zri_msg_new(&t_prog3, 0, 0, 2, ZRI_META_FULL);
    m->kind = ZRI_MSG_CTL;
    m->chan = 1, m->seq = 300, m->tag = 1, m->value = 1;
    fill_meta(&t_prog3, m);
    check_prefixes(&t_prog3, m);
    free(m);

    zri_msg bye;
    memset(&bye, 0, sizeof bye);
    bye.kind = ZRI_MSG_BYE;
    bye.from = 2, bye.to = 0;
    check_prefixes(&t_prog3, &bye);
}

/* Every single-byte corruption of a valid frame is either rejected with a
 * message or decodes to a message that encodes again. */
Test(frame, survives_byte_flips)
{
    zri_msg *m = user_msg(&t_prog3, 4, ZRI_META_EDGE);
    m->vals[0] = tv_str(heap, "hello");
    m->vals[1] = tv_json(heap, "[1,{\"a\":2}]");
    m->vals[2] = tv_enum(E_COLOR, 1);
    m->vals[3] = tv_float(1.5);
    fill_meta(&t_prog3, m);
    uint8_t *buf;
    size_t len;
    cr_assert_eq(zri_frame_encode(&t_prog3, m, &buf, &len), 0);
    for (size_t i = 4; i < len; i++) {
        for (int bit = 0; bit < 8; bit++) {
            buf[i] ^= (uint8_t)(1 << bit);
            zri_msg *out;
            char err[512] = "";
            if (zri_frame_decode(&t_prog3, heap, buf + 4, len - 4, &out, err, sizeof err) == 0) {
                uint8_t *again;
                size_t alen;
                cr_assert_eq(zri_frame_encode(&t_prog3, out, &again, &alen), 0);
                free(again);
                free(out);
            } else {
                cr_assert_neq(err[0], 0);
            }
            buf[i] ^= (uint8_t)(1 << bit);
        }
    }
    free(buf);
    free(m);
}

/* A kept variable view naming a variable the program does not have: the
 * codec refuses instead of reading past the variables. */
Test(frame, malformed_slot_table_is_refused)
{
    static const zgrt_slot bad[] = {{1, V_DRAFT}, {1, NVARS}};
    zgrt_keep keeps[2];
    memcpy(keeps, t_prog2.keeps, sizeof keeps);
    keeps[0].varviews = bad;
    zgrt_program p = t_prog2;
    p.keeps = keeps;
    zri_msg *m = user_msg(&p, 0, ZRI_META_EDGE);
    cr_assert_not(encodes(&p, m));
    tbytes b = {.n = 0};
    tb_header(&b, 0, 1); /* Writer -> User on main, seq 1 */
    tb_varint(&b, 1);
    tb_varint(&b, 0);
    tb_varint(&b, 0);
    tb_varint(&b, 1);
    tb_varint(&b, 0);
    tb_varint(&b, 1);      /* vc[Writer] */
    tb_u8(&b, 0);          /* 2 views */
    tb_u8(&b, ZGRT_UNDEF); /* Writer.draft */
    tb_u8(&b, ZGRT_UNDEF);
    rejects(&p, &b, "variable view 1 of the plan's edge is malformed");
    free(m);
}
/* ---- the short path (frame.c: decode_short, encode_short) ----------------- */

/* A program with 200 lifelines, channels and tags: indexes past one
 * varint byte, which the short path leaves to the general code. */
static char wide_names[200][8];

static zgrt_program wide_program(const char **names)
{
    for (int i = 0; i < 200; i++) {
        snprintf(wide_names[i], sizeof wide_names[i], "L%d", i);
        names[i] = wide_names[i];
    }
    zgrt_program p = t_prog3_nomon;
    p.nlifelines = p.nchans = p.ntags = 200;
    p.lifelines = p.chans = p.tags = names;
    return p;
}

static uint64_t mix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A random message of p without metadata: mostly of the short path's
 * shape, sometimes past it (a large index, sequence number or value
 * count, a value of another type). */
static zri_msg *random_msg(const zgrt_program *p, uint64_t *s)
{
    int wide = mix64(s) % 4 == 0;
    int32_t nl = wide ? p->nlifelines : 3;
    int32_t from = (int32_t)(mix64(s) % (uint64_t)nl), to = (int32_t)(mix64(s) % (uint64_t)nl);
    if (to == from) to = (from + 1) % nl;
    int ctl = mix64(s) % 3 == 0;
    int32_t nvals = ctl ? 0 : (int32_t)(mix64(s) % (mix64(s) % 8 == 0 ? 150 : 5));
    zri_msg *m = zri_msg_new(p, nvals, from, to, ZRI_META_NONE);
    m->kind = ctl ? ZRI_MSG_CTL : ZRI_MSG_USER;
    m->chan = (int32_t)(mix64(s) % (uint64_t)(wide ? p->nchans : 2));
    static const int64_t seqs[] = {
        1, 2, 127, 128, 16383, 16384, 1 << 21, (int64_t)1 << 56, INT64_MAX - 1, INT64_MAX};
    m->seq = mix64(s) % 2 ? seqs[mix64(s) % 10] : 1 + (int64_t)(mix64(s) % 40000);
    if (ctl) {
        m->tag = (int32_t)(mix64(s) % (uint64_t)(wide ? p->ntags : 3));
        m->value = (int32_t)(mix64(s) % 2);
    }
    for (int32_t i = 0; i < nvals; i++) {
        uint64_t k = mix64(s) % 10;
        m->vals[i] = k < 6   ? tv_int((int64_t)mix64(s))
                     : k < 9 ? tv_bool((int)(mix64(s) % 2))
                             : tv_str(heap, "s");
    }
    return m;
}

/* Each decoder's answer for one payload: both accept it, to the same
 * message in a block of the same shape, or both refuse it, with the same
 * message. */
static void decode_both(const zgrt_program *p, const uint8_t *d, size_t n)
{
    zri_msg *a = NULL, *b = NULL;
    char ea[512] = "x", eb[512] = "y";
    blocks ba = {0}, bb = {0};
    int ra = zri_frame_decode_in(p, heap, give_block, &ba, d, n, &a, ea, sizeof ea);
    int rb = zri_frame_decode_long(p, heap, give_block, &bb, d, n, &b, eb, sizeof eb);
    cr_assert_eq(ra, rb, "short path %d, general %d (%s)", ra, rb, rb ? eb : ea);
    if (ra == 0) {
        assert_same(p, b, a);
        cr_assert_eq(ba.asked, bb.asked);
        cr_assert_eq(ba.nvals, bb.nvals);
        cr_assert_eq(ba.chan, bb.chan);
        cr_assert_eq(ba.form, bb.form);
    } else {
        cr_assert_str_eq(ea, eb);
    }
    free(a);
    free(b);
}

Test(frame, short_path_decodes_as_the_general_one)
{
    const char *names[200];
    zgrt_program wide = wide_program(names);
    uint64_t s = 16;
    int shorts = 0;
    for (int i = 0; i < 4000; i++) {
        const zgrt_program *p = i % 2 ? &wide : &t_prog3;
        zri_msg *m = random_msg(p, &s);
        uint8_t *buf;
        size_t len;
        if (zri_frame_encode(p, m, &buf, &len) != 0) {
            free(m);
            continue;
        }
        uint8_t *d = buf + 4;
        size_t n = len - 4;
        zri_msg *x = NULL;
        char err[512];
        cr_assert_eq(zri_frame_decode_in(p, heap, NULL, NULL, d, n, &x, err, sizeof err), 0, "%s",
                     err);
        assert_same(p, m, x);
        free(x);
        decode_both(p, d, n);
        /* the frame damaged: a byte changed, cut short, one byte more */
        uint8_t *bad = malloc(n + 1);
        for (int k = 0; k < 12; k++) {
            memcpy(bad, d, n);
            size_t at = mix64(&s) % n;
            bad[at] = k < 6 ? (uint8_t)mix64(&s) : (uint8_t)(bad[at] ^ (1u << (k % 8)));
            decode_both(p, bad, n);
        }
        decode_both(p, d, mix64(&s) % n);
        memcpy(bad, d, n);
        bad[n] = (uint8_t)mix64(&s);
        decode_both(p, bad, n + 1);
        free(bad);
        shorts += m->has_meta == ZRI_META_NONE && m->nvals < 128;
        free(buf);
        free(m);
    }
    cr_assert_gt(shorts, 1000, "too few frames of the short path's shape: %d", shorts);

    /* sequence numbers at the varint's ends: 2^63 - 1 in 9 bytes, 2^63
     * and a tenth byte, non-minimal forms, 0 */
    static const uint8_t seqs[][11] = {
        {9, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F},
        {10, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01},
        {10, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00},
        {2, 0x81, 0x00},
        {2, 0x80, 0x00},
        {1, 0x00},
        {9, 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01},
    };
    for (size_t i = 0; i < sizeof seqs / sizeof seqs[0]; i++) {
        uint8_t f[32] = {ZRI_FRAME_MAGIC, ZRI_FRAME_VERSION, ZRI_MSG_CTL, 0, 1, 0, 0};
        size_t n = 7;
        memcpy(f + n, seqs[i] + 1, seqs[i][0]);
        n += seqs[i][0];
        f[n++] = 2; /* tag */
        f[n++] = 1; /* decision */
        decode_both(&t_prog3, f, n);
    }
}

Test(frame, short_path_encodes_as_the_general_one)
{
    const char *names[200];
    zgrt_program wide = wide_program(names);
    uint64_t s = 61;
    for (int i = 0; i < 4000; i++) {
        const zgrt_program *p = i % 2 ? &wide : &t_prog3;
        zri_msg *m = random_msg(p, &s);
        if (mix64(&s) % 16 == 0) m->seq = 0; /* refused by both */
        if (mix64(&s) % 16 == 0 && m->nvals) m->vals[0].u.i = 7, m->vals[0].tag = ZGRT_BOOL;
        uint8_t room[512], *a = NULL, *b = NULL;
        size_t la = 0, lb = 0;
        int ra = zri_frame_encode_in(p, m, room, sizeof room, &a, &la);
        int rb = zri_frame_encode(p, m, &b, &lb);
        cr_assert_eq(ra, rb, "message %d: into a room %d, general %d", i, ra, rb);
        if (ra == 0) {
            cr_assert_eq(la, lb, "message %d: %zu bytes against %zu", i, la, lb);
            cr_assert_eq(memcmp(a, b, la), 0, "message %d: other bytes", i);
            if (a != room) free(a);
        }
        free(b);
        free(m);
    }
}
