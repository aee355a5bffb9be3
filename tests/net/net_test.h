/* Shared helpers for the frame codec and transport tests: hand-built
 * program descriptors, a byte builder, and a callback sink. */
#ifndef ZGC_NET_TEST_H
#define ZGC_NET_TEST_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "net/net.h"
#include "wire.h"

/* Workflow "hello": lifelines User, Writer, Mailbox; variables count:int,
 * draft:str, data:json, color:Color, score:float, ok:bool; enums
 * Color{red,green,blue}, Mood{happy,sad}; channels main, main/par1.1;
 * tags while#1, if#2, if#3; monitor with 5 subformulas, evaluated by User
 * (0, 3), Writer (1, 4) and Mailbox (2, 4); User keeps the views (Writer,
 * 1) (Writer, 4) (Mailbox, 2) (Mailbox, 4) and the variable views
 * Writer.draft, Writer.color, Mailbox.count, Mailbox.data, Mailbox.ok;
 * Writer keeps Mailbox's.  The edge Writer → User carries the clock
 * entries of Writer and Mailbox, 4 views and those 5 variable views (in
 * that order, E10_*); Mailbox → Writer and → User carry Mailbox's, User →
 * Writer Mailbox's, the rest nothing.  t_prog2 has User and Writer only:
 * Writer → User carries Writer's clock entry, 2 views and Writer.draft,
 * Writer.color. */
extern const zgrt_program t_prog3;
/* The same without the monitor (no keep tables, no edges). */
extern const zgrt_program t_prog3_nomon;
/* Workflow "hello" with lifelines User, Writer (same variables etc.). */
extern const zgrt_program t_prog2;
/* Workflow "other" with lifelines User, Writer. */
extern const zgrt_program t_prog2_other;
/* Workflow "hello", lifelines User, Writer, one variable fewer. */
extern const zgrt_program t_prog2_build;
/* t_prog2 with another fingerprint: the same declarations, other code. */
extern const zgrt_program t_prog2_code;

/* The run's secret of the tests, and another one. */
extern const zri_secret t_secret, t_other_secret;
/* A fake lifeline `index` of p for wire.c, holding secret s. */
void t_self(tw_self *me, const zgrt_program *p, int index, const zri_secret *s,
            uint32_t heartbeat_ms);
/* zri_net_open with t_secret, without heartbeats. */
zri_net *t_open(const zgrt_program *p, int self, const char *listen, const char *const *peers,
                zri_heap *h, const zri_net_callbacks *cb, double timeout, char *err, size_t errlen);

enum { V_COUNT, V_DRAFT, V_DATA, V_COLOR, V_SCORE, V_OK, NVARS };
/* the metadata of Writer → User in t_prog3 and t_prog2 */
enum { E10_NVC = 2, E10_NVIEWS = 4, E10_NVARVIEWS = 5, E10_NVIEWS2 = 2, E10_NVARVIEWS2 = 2 };
/* its variable views */
enum {
    VV_WRITER_DRAFT = 0,
    VV_WRITER_COLOR = 1,
    VV_MAILBOX_COUNT = 2,
    VV_MAILBOX_DATA = 3,
    VV_MAILBOX_OK = 4
};
enum { E_COLOR, E_MOOD };

/* ---- bytes ---------------------------------------------------------------- */

typedef struct tbytes {
    uint8_t d[4096];
    size_t n;
} tbytes;

void tb_u8(tbytes *b, unsigned v);
void tb_varint(tbytes *b, uint64_t v);
void tb_raw(tbytes *b, const void *s, size_t n);
void tb_u64be(tbytes *b, uint64_t v);
/* magic, version, kind (and flags for user/control kinds < 2) */
void tb_header(tbytes *b, unsigned kind, unsigned flags);

/* ---- values ---------------------------------------------------------------- */

zgrt_value tv_int(int64_t i);
zgrt_value tv_float(double f);
zgrt_value tv_bool(int b);
zgrt_value tv_enum(int e, int member);
zgrt_value tv_str(zri_heap *h, const char *s);
zgrt_value tv_json(zri_heap *h, const char *text);
/* 1 when equal (strings bytewise, json by json_equal) */
int tv_eq(const zgrt_value *a, const zgrt_value *b);

/* ---- callback sink ----------------------------------------------------------- */

typedef struct sink {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    zri_msg *head, *tail;
    int nmsgs;
    int nfails;
    char fails[8][700];
    pthread_t fail_thread; /* the thread that reported the first failure */
    /* cb->block calls (it gives no block: the decoder's own is used) and
     * the last one's message size and sender */
    int blocks, block_nvals, block_from;
    int ended[4]; /* cb->ended calls per lifeline */
    int nnotes;
    char notes[32][1000];
    int64_t got[4][8]; /* messages delivered per (sender, channel) (atomic) */
} sink;

void sink_init(sink *s);
void sink_destroy(sink *s); /* frees undelivered messages */
zri_net_callbacks sink_callbacks(sink *s);
/* With the received callback (got): the transport checks the streams. */
zri_net_callbacks sink_stream_callbacks(sink *s);
/* The next delivered message, or NULL after timeout seconds. */
zri_msg *sink_pop(sink *s, double timeout);
/* Waits until at least one failure was reported; returns the count. */
int sink_wait_fail(sink *s, double timeout);
int sink_fail_count(sink *s);
int sink_note_count(sink *s);
/* 1 when some note contains text */
int sink_has_note(sink *s, const char *text);
int sink_ended(sink *s, int l);

/* ---- opening in a thread ------------------------------------------------------ */

typedef struct opener {
    const zgrt_program *p;
    int self;
    char listen[256];
    char peerbuf[4][256];
    const char *peers[4];
    double timeout;
    const zri_secret *secret; /* t_secret unless changed before opener_start */
    double heartbeat;         /* 0 unless changed before opener_start */
    double peer_wait;         /* 0 unless changed: > 0 keep mode, with stream checks */
    zri_heap *heap;
    sink s;
    zri_net *net;
    char err[1024];
    pthread_t th;
} opener;

/* Prepares an endpoint: addrs[l] is lifeline l's address. */
void opener_init(opener *o, const zgrt_program *p, int self, const char *const *addrs,
                 double timeout);
void opener_start(opener *o);
void opener_join(opener *o);
/* Closes the net (if open), frees the heap and the sink. */
void opener_finish(opener *o);

/* A fresh private directory under /tmp (for unix socket paths). */
char *t_tmpdir(void);
void t_rmdir(char *dir);
/* A TCP port on 127.0.0.1 that was free a moment ago. */
int t_free_port(void);

double t_now(void);

#endif
