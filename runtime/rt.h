/* rt.h — the runtime's internal table of contents.  Prefix zri_ for
 * internal symbols (hidden from users); zgrt_ for the public interface
 * (zgrt.h) and the generated-code interface (zgrt_abi.h).
 *
 *   core.c     zri_  run setup, lifeline threads, channels, events, vector
 *                    clocks and the CPL monitor (Algorithm 1), cancellation,
 *                    results, zgrt_main
 *   values.c   zri_  value heap, strings, json, comparison, builtins,
 *                    value <-> JSON text (trace, results, --arg parsing)
 *   trace.c    zri_  the JSON Lines trace writer
 *   options.c  zri_  run options (--arg, --llm, --llm-for, --seed, --trace,
 *                    --timeout, --answers, --listen, --peer, --result-file)
 *   actions.c  zri_  llm (model routing, prompts, parsing), human, extern
 *   models.c   zri_  model backends: mock, scripted, openai, ollama (request,
 *                    answer parsing)
 *   http.c     zri_  HTTP POST over libcurl (loaded at run time), cancellable
 *   frame.c    zri_  message frames: length-prefixed, validated codec
 *   net.c      zri_  Unix-domain and TCP transport between processes
 */
#ifndef ZGRT_RT_H
#define ZGRT_RT_H

#include <stddef.h>
#include <stdint.h>

#include "zgrt_abi.h"

#if defined(__GNUC__)
#define ZRI_HIDDEN __attribute__((visibility("hidden")))
#define ZRI_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define ZRI_HIDDEN
#define ZRI_PRINTF(f, a)
#endif

/* ===================================================================== */
/* values.c                                                               */
/* ===================================================================== */

/* A heap of values that live until the end of the run (strings, json).
 * One per lifeline; thread-safe (internally locked, for the branches of
 * parallel regions); values may be read from any thread. */
typedef struct zri_heap zri_heap;
ZRI_HIDDEN zri_heap *zri_heap_new(void);
ZRI_HIDDEN void zri_heap_free(zri_heap *h);
ZRI_HIDDEN const zgrt_str *zri_str(zri_heap *h, const char *s, size_t n);
/* Takes a reference on the json_t (jansson) and keeps it until the end:
 * json_incref, so the caller still owns (and must release) its own
 * reference.  Returns json. */
ZRI_HIDDEN void *zri_json_keep(zri_heap *h, void *json);
/* A deep copy of v whose memory belongs to h (for values crossing heaps). */
ZRI_HIDDEN zgrt_value zri_value_copy(zri_heap *h, const zgrt_value *v);
ZRI_HIDDEN int zri_value_eq(const zgrt_value *a, const zgrt_value *b);
/* JSON text of a value (enum members by name); malloc'd. */
ZRI_HIDDEN char *zri_value_to_json(const zgrt_program *p, const zgrt_value *v, zgrt_type t);
/* jansson json_t * of a value (new reference). */
ZRI_HIDDEN void *zri_value_to_jansson(const zgrt_program *p, const zgrt_value *v, zgrt_type t);
/* Parses a value of type t from a jansson value (enum members by name,
 * floats accept integers).  Returns 0, or -1 with a message in err. */
ZRI_HIDDEN int zri_value_from_jansson(const zgrt_program *p, zri_heap *h, void *json, zgrt_type t,
                                      zgrt_value *out, char *err, size_t errlen);
/* Parses `--arg name=value` text for type t (str: taken literally; json:
 * JSON text; others: their literal syntax). */
ZRI_HIDDEN int zri_value_from_text(const zgrt_program *p, zri_heap *h, const char *text, zgrt_type t,
                                   zgrt_value *out, char *err, size_t errlen);
/* 1 when v is a well-formed value of type t (tag, enum index and member). */
ZRI_HIDDEN int zri_value_check(const zgrt_program *p, const zgrt_value *v, zgrt_type t);
/* "int", "str", …, or the enum's name. */
ZRI_HIDDEN const char *zri_type_name(const zgrt_program *p, zgrt_type t);
ZRI_HIDDEN int zri_utf8_valid(const char *s, size_t n);
/* Whole-string number syntax (no spaces): 0, -1 (syntax) or -2 (range). */
ZRI_HIDDEN int zri_parse_int(const char *s, size_t n, int64_t *out);
ZRI_HIDDEN int zri_parse_float(const char *s, size_t n, double *out);
/* Shortest of %.15g/%.16g/%.17g that reads back to d, with ".0" added to
 * integral values ("1.0", "0.1", "1e+300"). */
ZRI_HIDDEN void zri_format_float(double d, char out[32]);
/* Prints "zgc: error: out of memory" on stderr and exits with status 1. */
ZRI_HIDDEN void zri_oom(void)
#if defined(__GNUC__)
    __attribute__((noreturn))
#endif
    ;

/* A growable NUL-terminated text buffer; zero-initialise, free with
 * zri_buf_free or take the text with zri_buf_take (malloc'd). */
typedef struct zri_buf {
    char *data;
    size_t len, cap;
} zri_buf;
ZRI_HIDDEN void zri_buf_add(zri_buf *b, const char *s, size_t n);
ZRI_HIDDEN void zri_buf_puts(zri_buf *b, const char *s);
ZRI_HIDDEN void zri_buf_printf(zri_buf *b, const char *fmt, ...) ZRI_PRINTF(2, 3);
ZRI_HIDDEN void zri_buf_free(zri_buf *b);
ZRI_HIDDEN char *zri_buf_take(zri_buf *b);
/* Appends s as a JSON string (escaped; bytes that are not UTF-8 become
 * U+FFFD) / a value as compact JSON text (enum members by name, UNDEF as
 * null). */
ZRI_HIDDEN void zri_buf_json_string(zri_buf *b, const char *s, size_t n);
ZRI_HIDDEN void zri_buf_json_value(zri_buf *b, const zgrt_program *p, const zgrt_value *v);
/* The same with ", " and ": " separators, as results are printed
 * (["failed", true]). */
ZRI_HIDDEN void zri_buf_json_result(zri_buf *b, const zgrt_program *p, const zgrt_value *v);

/* ===================================================================== */
/* core.c — what other runtime files may ask of a running context         */
/* ===================================================================== */

/* The heap values made on this context's lifeline go to (thread-safe). */
ZRI_HIDDEN zri_heap *zri_ctx_heap(zgrt_ctx *ctx);
ZRI_HIDDEN const zgrt_program *zri_ctx_program(zgrt_ctx *ctx);
/* Bytes of the core's block for a message with room for cap values; with
 * meta, it carries the vector clock and (programs with a monitor) the
 * view slots: 8 * nlifelines + nviews + 16 * nvarviews bytes more. */
ZRI_HIDDEN size_t zri_msg_block_size(const zgrt_program *p, int32_t cap, int meta);

/* ===================================================================== */
/* trace.c                                                                */
/* ===================================================================== */

/* The JSON Lines trace (--trace FILE); see trace.c for the format.  Every
 * call writes whole lines under the trace's lock. */
typedef struct zri_trace zri_trace;

enum { ZRI_EV_SEND = 0, ZRI_EV_RECV = 1, ZRI_EV_ACT = 2, ZRI_EV_CHOICE = 3 };

typedef struct zri_event {
    int32_t lifeline;
    int64_t index;             /* 1-based position on the lifeline */
    int32_t kind;              /* ZRI_EV_* */
    /* send / recv */
    int32_t peer, chan;        /* receiver of a send, sender of a receive */
    int32_t ctl_tag;           /* control message: its tag; user message: -1 */
    int64_t seq;               /* the message's number on its channel */
    int32_t nvals;
    const zgrt_value *vals;    /* user values, or the decision of a control message */
    /* act */
    const char *action;        /* or NULL for a local computation */
    int32_t attempts;
    /* choice */
    int32_t construct;         /* tag index */
    int32_t value;
    /* the variables written: vars[k] < 0 entries are skipped */
    int32_t nwrites;
    const int32_t *write_vars;
    const zgrt_value *write_vals;
    const int64_t *vc;         /* after the event, nlifelines entries */
} zri_event;

/* NULL with a message in err when the file cannot be created. */
ZRI_HIDDEN zri_trace *zri_trace_open(const zgrt_program *p, const char *path, char *err,
                                     size_t errlen);
/* {"kind":"start","lifeline":L,"store":{defined variables}} */
ZRI_HIDDEN void zri_trace_start(zri_trace *t, int32_t lifeline, const zgrt_value *store);
ZRI_HIDDEN void zri_trace_event(zri_trace *t, const zri_event *e);
/* {"kind":"end","result":JSON} or {"kind":"end","error":"…"}: exactly one of
 * result_json (JSON text) and error is non-NULL. */
ZRI_HIDDEN void zri_trace_end(zri_trace *t, const char *result_json, const char *error);
/* {"lifeline":L,"kind":"retry","action":A,"attempt":k,"error":"…","delay":s}:
 * attempt k of llm action A failed and is retried after s seconds.  Not
 * an event: no index, no vc. */
ZRI_HIDDEN void zri_trace_retry(zri_trace *t, int32_t lifeline, const char *action, int attempt,
                                const char *error, double delay);
/* Closes the file; returns 0, or -1 when writing failed. */
ZRI_HIDDEN int zri_trace_close(zri_trace *t);

/* ===================================================================== */
/* options.c                                                              */
/* ===================================================================== */

typedef struct zri_route {
    const char *lifeline; /* NULL: any */
    const char *action;   /* NULL: any */
    const char *spec;     /* "mock", "scripted:FILE.json", … */
} zri_route;

typedef struct zri_options {
    int nargs;
    const char **arg_names, **arg_values; /* --arg name=value */
    const char *llm;                       /* --llm SPEC (default "mock") */
    int nroutes;
    zri_route *routes;                     /* --llm-for L=SPEC / L.action=SPEC */
    uint64_t seed;                         /* --seed N (default 0) */
    const char *trace;                     /* --trace FILE */
    double timeout;                        /* --timeout SECONDS (0: none) */
    const char *answers;                   /* --answers FILE.json: scripted human answers */
    double llm_timeout;                    /* --llm-timeout SECONDS per model call (0: default) */
    double backoff_scale;                  /* --backoff-scale X: multiplies retry delays (default 1) */
    uint64_t schedule;                     /* --schedule SEED: perturb delivery and scheduling (0: off) */
    const char *listen;                    /* --listen ADDR (per-lifeline executables) */
    int npeers;
    const char **peer_names, **peer_addrs; /* --peer Name=ADDR */
    const char *result_file;               /* --result-file FILE (used by zgc run --processes) */
} zri_options;

/* Parses argv (after the program name).  Returns 0, 1 after printing the
 * help (--help: exit 0), or -1 after printing a usage error (exit 2). */
ZRI_HIDDEN int zri_options_parse(const zgrt_program *p, int argc, char **argv, zri_options *o);
ZRI_HIDDEN void zri_options_free(zri_options *o);

/* ===================================================================== */
/* actions.c, models.c                                                    */
/* ===================================================================== */

/* What an action needs to know about where it runs. */
typedef struct zri_action_env {
    const zgrt_program *prog;
    const zri_options *opts;
    int lifeline;
    zri_heap *heap;         /* results are allocated here */
    uint64_t call_index;    /* position of this call among the lifeline's action calls */
    volatile int *cancel;   /* non-zero: the run is being cancelled; stop waiting */
    /* progress notes and retries for the trace: the core passes a callback */
    void (*note)(void *user, const char *fmt, ...) ZRI_PRINTF(2, 3);
    void *note_user;
    /* a failed llm attempt about to be retried (for the trace): its number,
     * its error and the delay before the next attempt in seconds; called
     * with note_user; may be NULL */
    void (*retry)(void *user, int attempt, const char *error, double delay);
} zri_action_env;

/* Runs action a (llm, human, extern pure or effect) with args; writes its
 * nresults results to outs.  Returns 0, or -1 with a message in err (the
 * core adds the lifeline, action and location).  *attempts is set to the
 * number of attempts made (1 for non-llm actions). */
ZRI_HIDDEN int zri_run_action(zri_action_env *env, int32_t action, const zgrt_value *args,
                              zgrt_value *outs, int *attempts, char *err, size_t errlen);
/* Releases what actions cached for the run (scripted answers, …). */
ZRI_HIDDEN void zri_actions_shutdown(void);

/* models.c, used by actions.c.  Outcome of one model call: */
enum {
    ZRI_MODEL_OK = 0,
    ZRI_MODEL_INVALID = 1, /* an invalid answer: retried, then the fallback */
    ZRI_MODEL_FAILED = 2,  /* not retried; the fallback when declared */
    ZRI_MODEL_CONFIG = 3,  /* a bad spec or file: an error, no fallback */
    ZRI_MODEL_RETRY = 4,   /* a transient failure (transport, timeout, HTTP
                              408/409/425/429/500/502/503/504): retried,
                              then the fallback */
};
/* How to wait before retrying a model call. */
typedef struct zri_model_wait {
    int backoff;        /* 1: a network backend, retries back off; 0: at once */
    double retry_after; /* the server's Retry-After in seconds, or -1 */
} zri_model_wait;
/* One call of the model named by spec ("mock", "scripted:FILE",
 * "openai:MODEL", …) with the filled prompts; writes a->nresults results
 * to outs and fills *wait (never NULL). */
ZRI_HIDDEN int zri_model_call(zri_action_env *env, const zgrt_action *a, const char *spec,
                              const char *system, const char *user, zgrt_value *outs,
                              zri_model_wait *wait, char *err, size_t errlen);
/* Answer scripts (scripted models, --answers files): takes the next answer
 * object (a borrowed json_t *, valid until zri_actions_shutdown) for
 * `Lifeline.action`, else `action`.  what names the file's role in
 * messages.  Returns one of ZRI_MODEL_*, or -1 when the file has no key
 * for the action (*answer NULL, no message). */
ZRI_HIDDEN int zri_script_next(const char *path, const char *what, const char *lifeline,
                               const char *action, void **answer, int *index,
                               char *err, size_t errlen);
/* Types an answer object (output names, "value" for unnamed outputs) as
 * a's results; enum_numbers: an enum output also accepts a 1-based
 * member number. */
ZRI_HIDDEN int zri_answer_values(zri_action_env *env, const zgrt_action *a, void *answer,
                                 int enum_numbers, zgrt_value *outs, char *err, size_t errlen);
ZRI_HIDDEN void zri_models_shutdown(void);

/* ===================================================================== */
/* frame.c — messages between lifelines                                   */
/* ===================================================================== */

/* ZRI_MSG_BYE: a lifeline's last frame to a peer (net.c), never delivered. */
enum { ZRI_MSG_USER = 0, ZRI_MSG_CTL = 1, ZRI_MSG_BYE = 2 };

typedef struct zri_msg {
    int32_t from, to, chan;
    int32_t kind;          /* ZRI_MSG_USER or ZRI_MSG_CTL */
    int32_t tag, value;    /* control messages */
    int32_t nvals;
    int64_t seq;           /* position on its channel, from 1 (trace message ids) */
    zgrt_value *vals;      /* nvals values */
    /* monitor metadata: present when has_meta */
    int32_t has_meta;
    int64_t *vc;           /* nlifelines */
    uint8_t *views;        /* prog->nviews view slots (zgrt_slot), 0/1 */
    zgrt_value *varviews;  /* prog->nvarviews variable-view slots; ZGRT_UNDEF
                              where undefined */
    uint64_t arrival;      /* arrival order at the receiver (core) */
    struct zri_msg *next;  /* queue link (core) */
    int32_t reusable, cap; /* reusable: a block of the core with room for cap
                              values and the run's metadata; else free() it */
} zri_msg;

/* A message and its arrays in one malloc block; free with free(). */
ZRI_HIDDEN zri_msg *zri_msg_new(const zgrt_program *p, int32_t nvals, int with_meta);

/* Frame: u32 big-endian payload length, then the payload (see frame.c).
 * encode: a malloc'd buffer holding the whole frame (length included);
 * -1 when m breaks a rule decode checks (nothing is allocated).
 * decode: the payload only (without the 4 length bytes); every field is
 * validated against the program (lifeline, channel, tag and value
 * ranges, value types, lengths, UTF-8); strings and json are allocated in
 * h.  Returns 0, or -1 with a message in err. */
ZRI_HIDDEN int zri_frame_encode(const zgrt_program *p, const zri_msg *m, uint8_t **buf, size_t *len);
ZRI_HIDDEN int zri_frame_decode(const zgrt_program *p, zri_heap *h, const uint8_t *payload,
                                size_t len, zri_msg **out, char *err, size_t errlen);
#define ZRI_FRAME_MAX (64u << 20) /* largest accepted payload */

/* ===================================================================== */
/* net.c — transport between per-lifeline processes                       */
/* ===================================================================== */

typedef struct zri_net zri_net;
typedef struct zri_net_callbacks {
    /* a decoded message addressed to this lifeline (ownership passes) */
    void (*deliver)(void *user, zri_msg *m);
    /* a peer failed: malformed or unexpected frame, lost connection */
    void (*fail)(void *user, const char *msg);
    void *user;
} zri_net_callbacks;

/* ADDR: unix:PATH or tcp:HOST:PORT.  Listens on listen_addr and connects
 * to peer_addrs[l] for every other lifeline l (retrying until it answers
 * or timeout_s passes; <= 0: 60 s).  Returns NULL with a message in err.
 * The callbacks run on the transport's own thread (the only one that
 * allocates in h), never before zri_net_open returns nor once
 * zri_net_close has begun.  zri_net_close says BYE to every peer: call it
 * only when the lifeline ended normally (a process that just exits
 * makes its peers report the lost connection). */
ZRI_HIDDEN zri_net *zri_net_open(const zgrt_program *p, int self, const char *listen_addr,
                                 const char *const *peer_addrs, zri_heap *h,
                                 const zri_net_callbacks *cb, double timeout_s, char *err,
                                 size_t errlen);
/* zri_net_send buffers the frame; zri_net_flush writes every buffered
 * frame (call it before the lifeline may wait).  Both return 0, or -1
 * with a message in err when a connection is broken. */
ZRI_HIDDEN int zri_net_send(zri_net *n, const zri_msg *m, char *err, size_t errlen);
ZRI_HIDDEN int zri_net_flush(zri_net *n, char *err, size_t errlen);
ZRI_HIDDEN void zri_net_close(zri_net *n);
/* Closes without BYE (after a failed run): the peers report the failure. */
ZRI_HIDDEN void zri_net_abort(zri_net *n);

#endif
