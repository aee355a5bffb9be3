/* libFuzzer target: the frame decoders (runtime/net/frame.c: messages,
 * the counts frames ACK and SYNC, and batches of frames) on arbitrary payloads, for a fixed small program with a monitor.  Any crash,
 * sanitizer report or hang is a bug, and so is a broken round trip: a
 * payload that decodes must encode again, the encoding must decode, and
 * without json values (whose text jansson may respell) the encoding must
 * be the input itself (the format is canonical).  So is a disagreement
 * between the short path for the common frames and the general code:
 * zri_frame_decode and zri_frame_decode_long must accept the same
 * payloads, to the same message, and refuse the others with the same
 * words; encoding into a room (the short path's) must give the general
 * writer's bytes.
 *
 * Sources: this file, runtime/net/frame.c and runtime/values.c (the value
 * heap and the allocation the codec uses), not the whole of libzgrt.
 *
 * Built with -DFUZZ_FRAME_WRITE_SEEDS instead (no libFuzzer), it is a
 * program that writes valid payloads into the directory given as its
 * argument: the seed corpus tests/fuzz/corpus/frame/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "net/net.h"

/* ---- the program ------------------------------------------------------------ */

static const char *const lifelines[] = {"User", "Writer", "Mailbox"};
static const char *const color[] = {"red", "green", "blue"};
static const char *const mood[] = {"happy", "sad"};
static const zgrt_enum enums[] = {{"Color", 3, color}, {"Mood", 2, mood}};
static const zgrt_var vars[] = {
    {"count", {ZGRT_INT, -1}, 0, {0, {0}}},   {"draft", {ZGRT_STR, -1}, 0, {0, {0}}},
    {"data", {ZGRT_JSON, -1}, 0, {0, {0}}},   {"color", {ZGRT_ENUM, 0}, 0, {0, {0}}},
    {"score", {ZGRT_FLOAT, -1}, 0, {0, {0}}}, {"ok", {ZGRT_BOOL, -1}, 0, {0, {0}}},
};
static const char *const chans[] = {"main", "main/par1.1"};
static const char *const tags[] = {"while#1", "if#2", "if#3"};
/* the monitor plan (zgrt_abi.h: zgrt_keep, zgrt_edge), as in tests/net:
 * Writer -> User carries the clock entries of Writer and Mailbox, 4 views
 * and the variable views Writer.draft, Writer.color, Mailbox.count,
 * Mailbox.data, Mailbox.ok; Mailbox -> Writer and -> User carry Mailbox's;
 * User -> Writer Mailbox's; the others nothing */
static const int32_t ev_user[] = {0, 3}, ev_writer[] = {1, 4}, ev_mailbox[] = {2, 4};
static const int32_t vc_user[] = {0, 1, 2}, vc_writer[] = {1, 2}, vc_mailbox[] = {2};
static const zgrt_slot views_user[] = {{1, 1}, {1, 4}, {2, 2}, {2, 4}};
static const zgrt_slot varviews_user[] = {{1, 1}, {1, 3}, {2, 0}, {2, 2}, {2, 5}};
static const zgrt_slot views_writer[] = {{2, 2}, {2, 4}};
static const zgrt_slot varviews_writer[] = {{2, 0}, {2, 2}, {2, 5}};
static const zgrt_keep keeps[] = {
    {2, 3, 4, 5, ev_user, vc_user, views_user, varviews_user},
    {2, 2, 2, 3, ev_writer, vc_writer, views_writer, varviews_writer},
    {2, 1, 0, 0, ev_mailbox, vc_mailbox, NULL, NULL},
};
static const zgrt_group g01[] = {{2, 2, 1, 2, 3}};
static const zgrt_pair v01[] = {{2, 0}, {3, 1}}, vv01[] = {{2, 0}, {3, 1}, {4, 2}};
static const zgrt_group g10[] = {{1, 0, 1, 2, 2}, {2, 1, 2, 4, 5}};
static const zgrt_pair v10[] = {{0, 0}, {1, 1}, {0, 2}, {1, 3}};
static const zgrt_pair vv10[] = {{1, 0}, {3, 1}, {0, 2}, {1, 3}, {2, 4}};
static const zgrt_group g20[] = {{2, 0, 2, 2, 3}}, g21[] = {{2, 0, 1, 2, 3}};
static const zgrt_pair v20[] = {{0, 2}, {1, 3}}, v21[] = {{0, 0}, {1, 1}};
static const zgrt_pair vv20[] = {{0, 2}, {2, 3}, {5, 4}}, vv21[] = {{0, 0}, {2, 1}, {5, 2}};
static const zgrt_edge edges[] = {
    {0, 1, 1, 2, 3, 0, g01, v01, vv01}, {0, 2, 0, 0, 0, 0, NULL, NULL, NULL},
    {1, 0, 2, 4, 5, 0, g10, v10, vv10}, {1, 2, 0, 0, 0, 0, NULL, NULL, NULL},
    {2, 0, 1, 2, 3, 0, g20, v20, vv20}, {2, 1, 1, 2, 3, 0, g21, v21, vv21},
};
static const zgrt_program prog = {
    .abi_version = ZGRT_ABI_VERSION,
    .nlifelines = 3,
    .source = "fuzz.zg",
    .workflow = "fuzz",
    .lifelines = lifelines,
    .nvars = 6,
    .nenums = 2,
    .vars = vars,
    .enums = enums,
    .nchans = 2,
    .ntags = 3,
    .chans = chans,
    .tags = tags,
    .monitor = 1,
    .nsubs = 5,
    .nedges = 6,
    .keeps = keeps,
    .edges = edges,
};

/* ---- the target --------------------------------------------------------------- */

#ifndef FUZZ_FRAME_WRITE_SEEDS

static int has_json(const zri_msg *m)
{
    for (int i = 0; i < m->nvals; i++)
        if (m->vals[i].tag == ZGRT_JSON) return 1;
    if (m->has_meta && m->varviews)
        for (int k = 0; k < m->nvarviews; k++)
            if (m->varviews[k].tag == ZGRT_JSON) return 1;
    return 0;
}

/* The same message (values compared bit for bit but for json's text). */
static int same_msg(const zri_msg *a, const zri_msg *b)
{
    if (a->kind != b->kind || a->from != b->from || a->to != b->to) return 0;
    if (a->kind == ZRI_MSG_BYE) return 1;
    if (a->chan != b->chan || a->seq != b->seq || a->tag != b->tag || a->value != b->value ||
        a->nvals != b->nvals || a->has_meta != b->has_meta)
        return 0;
    for (int i = 0; i < a->nvals; i++)
        if (a->vals[i].tag != b->vals[i].tag ||
            (a->vals[i].tag != ZGRT_JSON && a->vals[i].tag != ZGRT_STR &&
             a->vals[i].u.i != b->vals[i].u.i))
            return 0;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    zri_heap *h = zri_heap_new();
    zri_msg *m, *g;
    char err[512], gerr[512];
    int rc = zri_frame_decode(&prog, h, data, size, &m, err, sizeof err);
    int grc = zri_frame_decode_long(&prog, h, NULL, NULL, data, size, &g, gerr, sizeof gerr);
    if (rc != grc) abort(); /* the short path and the general code disagree */
    if (rc != 0 && strcmp(err, gerr) != 0) abort();
    if (rc == 0) {
        if (!same_msg(m, g)) abort();
        free(g);
    }
    if (rc == 0) {
        uint8_t *buf;
        size_t len;
        if (zri_frame_encode(&prog, m, &buf, &len) != 0) abort(); /* decoded, not encodable */
        if (!has_json(m) && (len - 4 != size || memcmp(buf + 4, data, size) != 0))
            abort(); /* not canonical */
        uint8_t room[512], *rbuf;
        size_t rlen;
        if (zri_frame_encode_in(&prog, m, room, sizeof room, &rbuf, &rlen) != 0) abort();
        if (rlen != len || (!has_json(m) && memcmp(rbuf, buf, len) != 0)) abort();
        if (rbuf != room) free(rbuf);
        zri_msg *again;
        if (zri_frame_decode(&prog, h, buf + 4, len - 4, &again, err, sizeof err) != 0) abort();
        free(again);
        free(buf);
        free(m);
    } else if (!err[0]) {
        abort(); /* a rejection without a message */
    }
    /* a batch (ZRI_KIND_BATCH): its frames lie inside it one after the
     * other, each decoded as a frame; a failure leaves the position */
    if (zri_is_batch(data, size)) {
        size_t at = ZRI_BATCH_HEAD, prev = at, k;
        const uint8_t *item;
        int more;
        while ((more = zri_batch_next(data, size, &at, &item, &k)) > 0) {
            if (item != data + prev + 4 || k == 0 || k > size - (prev + 4) || at != prev + 4 + k)
                abort();
            if (zri_frame_decode(&prog, h, item, k, &m, err, sizeof err) == 0) free(m);
            prev = at;
        }
        if (at != prev) abort();
    }
    /* the counts frames (ACK, SYNC): canonical too */
    int kind;
    int32_t from, to, n;
    zri_count *c;
    if (zri_counts_decode(&prog, data, size, &kind, &from, &to, &c, &n, err, sizeof err) == 0) {
        uint8_t *buf;
        size_t len;
        if (zri_counts_encode(&prog, kind, from, to, c, n, &buf, &len) != 0) abort();
        if (len - 4 != size || memcmp(buf + 4, data, size) != 0) abort();
        free(buf);
        free(c);
    } else if (!err[0]) {
        abort();
    }
    zri_heap_free(h);
    return 0;
}

#else

static const char *dir;
static int nseeds;

static void seed(const zri_msg *m, const char *name)
{
    uint8_t *buf;
    size_t len;
    if (zri_frame_encode(&prog, m, &buf, &len) != 0) {
        fprintf(stderr, "seed %s does not encode\n", name);
        exit(1);
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(buf + 4, 1, len - 4, f) != len - 4 || fclose(f)) {
        perror(path);
        exit(1);
    }
    free(buf);
    nseeds++;
}

static zgrt_value v_int(int64_t i) { return (zgrt_value){ZGRT_INT, {.i = i}}; }
static zgrt_value v_float(double f) { return (zgrt_value){ZGRT_FLOAT, {.f = f}}; }
static zgrt_value v_bool(int b) { return (zgrt_value){ZGRT_BOOL, {.i = b}}; }
static zgrt_value v_enum(int e, int k)
{
    return (zgrt_value){ZGRT_ENUM, {.i = ((int64_t)e << 32) | k}};
}

static zgrt_value v_str(zri_heap *h, const char *s)
{
    return (zgrt_value){ZGRT_STR, {.s = zri_str(h, s, strlen(s))}};
}

static zgrt_value v_json(zri_heap *h, const char *text)
{
    json_t *j = json_loads(text, JSON_DECODE_ANY, NULL);
    if (!j) abort();
    zgrt_value v = {ZGRT_JSON, {.j = zri_json_keep(h, j)}};
    json_decref(j);
    return v;
}

/* A user message Writer -> User with the metadata of form (ZRI_META_*). */
static zri_msg *user(int nvals, int form)
{
    zri_msg *m = zri_msg_new(&prog, nvals, 1, 0, form);
    m->kind = ZRI_MSG_USER;
    m->chan = 0;
    m->seq = 1;
    return m;
}

static void meta(zri_heap *h, zri_msg *m)
{
    for (int l = 0; l < m->nvc; l++) m->vc[l] = 1 + 130 * l;
    for (int k = 0; k < m->nviews; k++) m->views[k] = k % 3 == 0;
    zgrt_value *vv = m->varviews;
    if (m->from == 1 && m->to == 0) {
        vv[0] = v_str(h, "seen"); /* Writer.draft */
        vv[1] = v_enum(0, 2);     /* Writer.color */
        vv[2] = v_int(-3);        /* Mailbox.count */
        vv[3] = v_json(h, "{\"a\":[1,2]}");
        vv[4] = v_bool(1);
    } else if (m->nvarviews == 3) {
        vv[0] = v_int(9); /* Mailbox: count only */
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    dir = argv[1];
    zri_heap *h = zri_heap_new();
    zri_msg *m;

    struct {
        const char *name;
        zgrt_value v;
    } one[] = {
        {"int", v_int(-1234567890123)},
        {"float", v_float(-2.75)},
        {"bool", v_bool(1)},
        {"enum", v_enum(1, 1)},
        {"str", v_str(h, "h\xc3\xa9llo \xe2\x82\xac")},
        {"json_object", v_json(h, "{\"k\":[1,2.5,true,null,\"x\"]}")},
        {"json_scalar", v_json(h, "\"text\"")},
    };
    for (size_t i = 0; i < sizeof one / sizeof one[0]; i++) {
        char name[64];
        m = user(1, ZRI_META_NONE);
        m->vals[0] = one[i].v;
        snprintf(name, sizeof name, "user_%s", one[i].name);
        seed(m, name);
        free(m);
    }

    m = user(0, ZRI_META_NONE);
    seed(m, "user_empty");
    free(m);

    m = user(6, ZRI_META_NONE);
    m->chan = 1;
    m->seq = 300;
    for (int i = 0; i < 6; i++) m->vals[i] = one[i].v;
    seed(m, "user_all_types");
    free(m);

    m = user(2, ZRI_META_EDGE);
    m->vals[0] = v_str(h, "draft");
    m->vals[1] = v_int(2);
    meta(h, m);
    seed(m, "user_meta");
    free(m);

    m = user(2, ZRI_META_FULL);
    m->vals[0] = v_str(h, "draft");
    m->vals[1] = v_int(2);
    meta(h, m);
    seed(m, "user_meta_full_clock");
    free(m);

    m = user(1, ZRI_META_EDGE);
    m->vals[0] = v_bool(0);
    for (int l = 0; l < m->nvc; l++) m->vc[l] = l;
    seed(m, "user_meta_undefined");
    free(m);

    m = zri_msg_new(&prog, 0, 0, 2, ZRI_META_NONE);
    m->kind = ZRI_MSG_CTL;
    m->chan = 1, m->seq = 7, m->tag = 2, m->value = 1;
    seed(m, "control");
    free(m);

    m = zri_msg_new(&prog, 0, 0, 2, ZRI_META_FULL);
    m->kind = ZRI_MSG_CTL;
    m->chan = 1, m->seq = 8, m->tag = 2, m->value = 0;
    meta(h, m);
    seed(m, "control_full_clock_only");
    free(m);

    m = zri_msg_new(&prog, 0, 2, 1, ZRI_META_EDGE);
    m->kind = ZRI_MSG_CTL;
    m->chan = 0, m->seq = 2, m->tag = 0, m->value = 0;
    meta(h, m);
    seed(m, "control_meta");
    free(m);

    m = zri_msg_new(&prog, 1, 0, 1, ZRI_META_EDGE);
    m->kind = ZRI_MSG_USER;
    m->chan = 0, m->seq = 3;
    m->vals[0] = v_int(4);
    meta(h, m);
    seed(m, "user_meta_forwarded");
    free(m);

    /* a batch: a control decision and a message, as written together */
    {
        uint8_t b[512] = {ZRI_FRAME_MAGIC, ZRI_FRAME_VERSION, ZRI_KIND_BATCH};
        size_t n = ZRI_BATCH_HEAD;
        zri_msg *parts[2] = {zri_msg_new(&prog, 0, 0, 1, ZRI_META_NONE), user(1, ZRI_META_NONE)};
        parts[0]->kind = ZRI_MSG_CTL;
        parts[0]->to = 1, parts[0]->seq = 4, parts[0]->tag = 1, parts[0]->value = 1;
        parts[1]->from = 0, parts[1]->to = 1, parts[1]->seq = 5;
        parts[1]->vals[0] = v_int(41);
        for (int i = 0; i < 2; i++) {
            uint8_t *buf;
            size_t len;
            if (zri_frame_encode(&prog, parts[i], &buf, &len) != 0 || n + len > sizeof b) abort();
            memcpy(b + n, buf, len); /* its length, then the payload */
            n += len;
            free(buf);
            free(parts[i]);
        }
        char path[1024];
        snprintf(path, sizeof path, "%s/batch", dir);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(b, 1, n, f) != n || fclose(f)) {
            perror(path);
            exit(1);
        }
        nseeds++;
    }

    zri_msg bye;
    memset(&bye, 0, sizeof bye);
    bye.kind = ZRI_MSG_BYE;
    bye.from = 2, bye.to = 0;
    seed(&bye, "bye");

    zri_heap_free(h);
    printf("%d seeds in %s\n", nseeds, dir);
    return 0;
}

#endif
