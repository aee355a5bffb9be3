/* rt.h — the runtime's table of contents.  Prefix zri_ for internal
 * symbols (hidden from users); zgrt_ for the public interface (zgrt.h)
 * and the generated-code interface (zgrt_abi.h).
 *
 * runtime/, lowest first; a file calls only files listed above it:
 *
 *   values.c    allocation that never fails, the value heap, values, text
 *               buffers, JSON text, comparison (zgrt_compare)
 *   options.c   the run options (their names and help: vocab/vocab.h)
 *   trace.c     the JSON Lines trace writer, an observer of the run
 *   monitor.c   the CPL monitor, Algorithm 1 alone: vector clocks, view
 *               and variable-view slots, merge on receive, update after an
 *               event; zgrt_vc, zgrt_view, zgrt_varview
 *   core.c      a run: lifeline threads, channels, events, parallel
 *               regions, cancellation, deadlock detection, results.  It
 *               calls values.c and monitor.c, and reaches the trace, the
 *               transport and the actions only through the interfaces
 *               below (zri_observer, zri_transport, zri_action_fn)
 *   builtins.c  zgrt_concat and zgrt_builtin (they need a context)
 *   net/        frames and the socket transport between per-lifeline
 *               processes (net/net.h): a zri_transport
 *   agent/      llm, human and extern actions, model backends, HTTP
 *               (agent/agent.h): the zri_action_fn
 *   main.c      zgrt_main: options, mode, trace, transport, actions, run,
 *               result — the one file that knows all the others
 *
 * Libraries (CMakeLists.txt): zgrt_core (values.c … builtins.c),
 * zgrt_net, zgrt_agent, and libzgrt.a, which bundles them with main.c:
 * the archive `zgc build` links.
 *
 * Errors, one convention for the whole runtime:
 *   - A function that can fail returns 0 (or a pointer) on success and -1
 *     (or NULL) on failure, with a one-line message in the caller's buffer
 *     (char *err, size_t errlen: no "zgc: error:" prefix, no newline); it
 *     prints nothing (the setup of a run, last point below, excepted).
 *     Two families return finer codes with the same kind
 *     of message: ZRI_MODEL_* and ZRI_HTTP_* (agent/agent.h).
 *   - Out of memory is not an error a caller handles: the runtime
 *     allocates with zri_xmalloc, zri_xcalloc, zri_xrealloc and
 *     zri_xstrndup, which never return NULL, and zri_oom prints "zgc:
 *     error: out of memory" and exits with status 1.  A library (jansson,
 *     libcurl) that fails, for lack of memory or otherwise, is reported
 *     like any failure of that library: a message in err.
 *   - During a run, an error of a lifeline (a malformed message, a failed
 *     action, a trap of generated code, a lost peer) is recorded on the
 *     run: the first one wins, the run is cancelled and every lifeline
 *     thread unwinds (core.c); zgrt_main prints that one message.  A
 *     broken descriptor or broken generated code gives "internal error:
 *     …" the same way.
 *   - Printing is for the edge of the process: zgrt_main and the setup it
 *     runs (zri_program_check, zri_options_parse, the mode,
 *     zri_run_setup) print "zgc: error: …" on stderr and return the exit
 *     status (0 success, 1 run-time error,
 *     2 bad usage); the core also prints progress notes of actions ("zgc:
 *     note: …") and, as a last resort, the error of a run whose threads
 *     do not come back after a cancellation (then it exits at once).
 *
 * Per-process state: a run's state belongs to the run zgrt_main creates,
 * so a process may call zgrt_main more than once (one run at a time).
 * Beyond it, each justified where it is declared: the terminal's lock
 * (agent/actions.c), the cache of answer scripts (agent/models.c, emptied
 * by zri_actions_shutdown at the end of every run) and libcurl, loaded
 * once per process (agent/http.c).
 */
#ifndef ZGRT_RT_H
#define ZGRT_RT_H

#include <stddef.h>
#include <stdint.h>

#include "zgrt_abi.h"

#if defined(__GNUC__)
#define ZRI_HIDDEN __attribute__((visibility("hidden")))
#define ZRI_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define ZRI_NORETURN __attribute__((noreturn))
#else
#define ZRI_HIDDEN
#define ZRI_PRINTF(f, a)
#define ZRI_NORETURN
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
/* A writable string of n bytes (plus the NUL) in h, for its maker to fill. */
ZRI_HIDDEN zgrt_str *zri_str_new(zri_heap *h, size_t n);
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
ZRI_HIDDEN int zri_value_from_text(const zgrt_program *p, zri_heap *h, const char *text,
                                   zgrt_type t, zgrt_value *out, char *err, size_t errlen);
/* 1 when v is a well-formed value of type t (tag, enum index and member). */
ZRI_HIDDEN int zri_value_check(const zgrt_program *p, const zgrt_value *v, zgrt_type t);
/* The member name of an enum value's payload, or NULL when p has no such
 * member. */
ZRI_HIDDEN const char *zri_enum_member(const zgrt_program *p, int64_t payload);
/* "int", "str", …, or the enum's name. */
ZRI_HIDDEN const char *zri_type_name(const zgrt_program *p, zgrt_type t);
ZRI_HIDDEN int zri_utf8_valid(const char *s, size_t n);
/* Whole-string number syntax (no spaces): 0, -1 (syntax) or -2 (range). */
ZRI_HIDDEN int zri_parse_int(const char *s, size_t n, int64_t *out);
ZRI_HIDDEN int zri_parse_float(const char *s, size_t n, double *out);
/* A short rendering of bad input for messages: JSON text, cut at 60 bytes. */
ZRI_HIDDEN void zri_quote_short(char *out, size_t outlen, const char *s, size_t n);
/* Shortest of %.15g/%.16g/%.17g that reads back to d, with ".0" added to
 * integral values ("1.0", "0.1", "1e+300"). */
ZRI_HIDDEN void zri_format_float(double d, char out[32]);
/* Allocation that never fails: NULL never comes back (zri_oom instead);
 * a size of 0 is taken as 1.  zri_xstrndup copies n bytes and adds a NUL. */
ZRI_HIDDEN void *zri_xmalloc(size_t n);
ZRI_HIDDEN void *zri_xcalloc(size_t n, size_t size);
ZRI_HIDDEN void *zri_xrealloc(void *p, size_t n);
ZRI_HIDDEN char *zri_xstrndup(const char *s, size_t n);
/* Prints "zgc: error: out of memory" on stderr and exits with status 1. */
ZRI_HIDDEN void zri_oom(void) ZRI_NORETURN;
/* The message of a failure, in the caller's buffer (the convention above;
 * err may be NULL). */
ZRI_HIDDEN void zri_err(char *err, size_t errlen, const char *fmt, ...) ZRI_PRINTF(3, 4);

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
/* A jansson json_t as JSON text; spaced: ", " and ": " separators. */
ZRI_HIDDEN void zri_buf_jansson(zri_buf *b, const void *json, int spaced);
/* The same with ", " and ": " separators, as results are printed
 * (["failed", true]). */
ZRI_HIDDEN void zri_buf_json_result(zri_buf *b, const zgrt_program *p, const zgrt_value *v);

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
    const char *llm;                      /* --llm SPEC (default "mock") */
    int nroutes;
    zri_route *routes;    /* --llm-for L=SPEC / L.action=SPEC */
    uint64_t seed;        /* --seed N (default 0) */
    const char *trace;    /* --trace FILE */
    double timeout;       /* --timeout SECONDS (0: none) */
    const char *answers;  /* --answers FILE.json: scripted human answers */
    double llm_timeout;   /* --llm-timeout SECONDS per model call (0: default) */
    double backoff_scale; /* --backoff-scale X: multiplies retry delays (default 1) */
    uint64_t schedule;    /* --schedule SEED: perturb delivery and scheduling (0: off) */
    const char *listen;   /* --listen ADDR (per-lifeline executables) */
    int npeers;
    const char **peer_names, **peer_addrs; /* --peer Name=ADDR */
    const char *result_file;               /* --result-file FILE (used by zgc run --processes) */
} zri_options;

/* Parses argv (after the program name).  Returns 0, 1 after printing the
 * help (--help: exit 0), or -1 after printing a usage error (exit 2). */
ZRI_HIDDEN int zri_options_parse(const zgrt_program *p, int argc, char **argv, zri_options *o);
ZRI_HIDDEN void zri_options_free(zri_options *o);

/* ===================================================================== */
/* core.c — messages, events and the interfaces of a run                  */
/* ===================================================================== */

/* ---- messages between lifelines ---- */

/* ZRI_MSG_BYE: a lifeline's last frame to a peer (net/socket.c), never
 * delivered. */
enum { ZRI_MSG_USER = 0, ZRI_MSG_CTL = 1, ZRI_MSG_BYE = 2 };

typedef struct zri_msg {
    int32_t from, to, chan;
    int32_t kind;       /* ZRI_MSG_USER or ZRI_MSG_CTL */
    int32_t tag, value; /* control messages */
    int32_t nvals;
    int64_t seq;      /* position on its channel, from 1 (trace message ids) */
    zgrt_value *vals; /* nvals values */
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

/* Bytes of the core's block for a message with room for cap values; with
 * meta, it carries the vector clock and (programs with a monitor) the
 * view slots: 8 * nlifelines + nviews + 16 * nvarviews bytes more. */
ZRI_HIDDEN size_t zri_msg_block_size(const zgrt_program *p, int32_t cap, int meta);

/* ---- events ---- */

/* One event of a lifeline, as observers see it (the trace). */
/* ZRI_EV_SEND, ZRI_EV_RECV, ZRI_EV_ACT, ZRI_EV_CHOICE (vocab/vocab.h) */
#define ZRI_EV_ENUM(id, name) ZRI_EV_##id,
enum { ZV_EVENT_KINDS(ZRI_EV_ENUM) ZRI_EV__COUNT };
#undef ZRI_EV_ENUM

typedef struct zri_event {
    int32_t lifeline;
    int64_t index; /* 1-based position on the lifeline */
    int32_t kind;  /* ZRI_EV_* */
    /* send / recv */
    int32_t peer, chan; /* receiver of a send, sender of a receive */
    int32_t ctl_tag;    /* control message: its tag; user message: -1 */
    int64_t seq;        /* the message's number on its channel */
    int32_t nvals;
    const zgrt_value *vals; /* user values, or the decision of a control message */
    /* act */
    const char *action; /* or NULL for a local computation */
    int32_t attempts;
    /* choice */
    int32_t construct; /* tag index */
    int32_t value;
    /* the variables written: vars[k] < 0 entries are skipped */
    int32_t nwrites;
    const int32_t *write_vars;
    const zgrt_value *write_vals;
    const int64_t *vc; /* after the event, nlifelines entries */
} zri_event;

/* ---- the interfaces the core calls through ---- */

/* An observer of the run (the trace): called on the lifeline's thread,
 * under the lifeline's lock while a parallel region runs; in one process a
 * send's event is observed before its receiver can take the message.
 * Either function may be NULL. */
typedef struct zri_observer {
    /* after each event (e->vc: the clock after it) */
    void (*event)(void *user, const zri_event *e);
    /* attempt `attempt` of llm action `action` failed and is retried
     * after `delay` seconds (not an event) */
    void (*retry)(void *user, int32_t lifeline, const char *action, int attempt, const char *error,
                  double delay);
    void *user;
} zri_observer;

/* The transport to the lifelines of other processes (per-lifeline mode;
 * net/ implements it).  send buffers a message for another process (the
 * core keeps m); flush writes what is buffered, and the core calls it
 * before a lifeline thread may wait (a receive that finds nothing, an
 * action, a parallel region) and when it ends.  Both return 0, or -1 with
 * a message in err when a connection is broken.  The transport hands the
 * messages it receives to zri_run_deliver and its failures to
 * zri_run_lost. */
typedef struct zri_transport {
    int (*send)(void *impl, const zri_msg *m, char *err, size_t errlen);
    int (*flush)(void *impl, char *err, size_t errlen);
    void *impl;
} zri_transport;

/* What an action needs to know about where it runs. */
typedef struct zri_action_env {
    const zgrt_program *prog;
    const zri_options *opts;
    int lifeline;
    zri_heap *heap;       /* results are allocated here */
    uint64_t call_index;  /* position of this call among the lifeline's action calls */
    volatile int *cancel; /* non-zero: the run is being cancelled; stop waiting */
    /* progress notes and retries for the trace: the core passes a callback */
    void (*note)(void *user, const char *fmt, ...) ZRI_PRINTF(2, 3);
    void *note_user;
    /* a failed llm attempt about to be retried (for the trace): its number,
     * its error and the delay before the next attempt in seconds; called
     * with note_user; may be NULL */
    void (*retry)(void *user, int attempt, const char *error, double delay);
} zri_action_env;

/* Runs action `action` (llm, human, extern pure or effect; agent/
 * implements it) with args; writes its nresults results to outs.  Returns
 * 0, or -1 with a message in err (the core adds the lifeline, action and
 * location).  *attempts is set to the number of attempts made (1 for
 * non-llm actions). */
typedef int (*zri_action_fn)(zri_action_env *env, int32_t action, const zgrt_value *args,
                             zgrt_value *outs, int *attempts, char *err, size_t errlen);

/* ===================================================================== */
/* monitor.c — the CPL monitor (Algorithm 1)                              */
/* ===================================================================== */

/* The program's slot ranges, one per run: lifeline B's view slots are
 * [vstart[B], vstart[B + 1]), its variable-view slots [vvstart[B],
 * vvstart[B + 1]).  Read-only once made. */
typedef struct zri_plan {
    const zgrt_program *prog;
    int32_t nl;
    int on;                    /* prog->monitor: there are views */
    int32_t *vstart, *vvstart; /* nl + 1 */
} zri_plan;

/* One lifeline's monitor.  Used by the lifeline's threads only, one at a
 * time (the core serialises its events). */
typedef struct zri_monitor {
    const zri_plan *plan;
    int32_t self;
    const zgrt_value *store; /* the lifeline's store (the core writes it) */
    int64_t *vc;             /* nlifelines */
    uint8_t *views;          /* nviews view slots (with a monitor only) */
    zgrt_value *varviews;    /* nvarviews variable-view slots (idem) */
    uint8_t *old, *val;      /* nsubs (idem): the previous and the current
                                event's values of the subformulas */
    /* what every event reads, copied from the plan and the program at
     * init (one load each instead of a chain of them on the hot path) */
    zgrt_eval_fn eval; /* evals[self], or NULL */
    size_t nsubs;
    int32_t v0, v1, vv0, vv1; /* self's view and variable-view slot ranges */
} zri_monitor;

ZRI_HIDDEN void zri_plan_init(zri_plan *pl, const zgrt_program *p);
ZRI_HIDDEN void zri_plan_free(zri_plan *pl);
ZRI_HIDDEN void zri_monitor_init(zri_monitor *M, const zri_plan *pl, int32_t self,
                                 const zgrt_value *store);
ZRI_HIDDEN void zri_monitor_free(zri_monitor *M);
/* On a receive: takes the message's clock and the slots of every lifeline
 * the message has seen more of (m->views / m->varviews may be NULL: the
 * clock only). */
ZRI_HIDDEN void zri_monitor_merge(zri_monitor *M, const zri_msg *m);
/* After an event (its vc[self] step and store writes done), with a
 * monitor: evaluates the lifeline's subformulas (evals[self], which gets
 * ctx) and sets its own slots.  Returns val[root] (root >= 0), else 0.
 * The eval function may trap: the caller prepares ctx for unwinding. */
ZRI_HIDDEN int zri_monitor_update(zri_monitor *M, zgrt_ctx *ctx, int32_t root);
/* On a send: the clock and (with a monitor) the slots into m's metadata. */
ZRI_HIDDEN void zri_monitor_stamp(const zri_monitor *M, zri_msg *m);

/* A context begins with its lifeline's monitor (struct zgrt_ctx in core.c
 * checks it), so the accessors zgrt_vc, zgrt_view and zgrt_varview reach
 * the monitor without calling back into the core. */
static inline zri_monitor *zri_ctx_monitor(zgrt_ctx *ctx) { return *(zri_monitor **)(void *)ctx; }

/* ===================================================================== */
/* core.c — a run                                                         */
/* ===================================================================== */

typedef struct zri_run zri_run;

/* Checks the descriptor (ABI version, counts, slot tables); returns 0, or
 * -1 after printing what is wrong. */
ZRI_HIDDEN int zri_program_check(const zgrt_program *p);
/* A run of p with options o (kept, not copied: o outlives the run).
 * self: the one lifeline this process runs (per-lifeline mode), or -1 for
 * every lifeline in this process. */
ZRI_HIDDEN zri_run *zri_run_new(const zgrt_program *p, const zri_options *o, int32_t self);
/* Stores the variables' defaults and the --arg inputs.  Returns 0, or the
 * exit status (1, 2) after printing the errors. */
ZRI_HIDDEN int zri_run_setup(zri_run *R);
/* Lifeline l's store (for the trace's start lines). */
ZRI_HIDDEN const zgrt_value *zri_run_store(zri_run *R, int32_t l);
/* Wiring, before zri_run_exec: the observer (messages then carry the
 * vector clock), the transport (per-lifeline mode) and the actions. */
ZRI_HIDDEN void zri_run_observe(zri_run *R, const zri_observer *obs);
ZRI_HIDDEN void zri_run_connect(zri_run *R, const zri_transport *t);
ZRI_HIDDEN void zri_run_set_actions(zri_run *R, zri_action_fn run_action);
/* The transport's callbacks (user: the zri_run).  deliver: a message from
 * another process addressed to this lifeline (ownership passes); lost: a
 * peer failed (a malformed or unexpected frame, a lost connection). */
ZRI_HIDDEN void zri_run_deliver(void *run, zri_msg *m);
ZRI_HIDDEN void zri_run_lost(void *run, const char *msg);
/* Records an error on the run (the first one wins) and cancels it;
 * lifeline < 0: none named. */
ZRI_HIDDEN void zri_run_fail(zri_run *R, int32_t lifeline, const char *fmt, ...) ZRI_PRINTF(3, 4);
/* Runs the lifeline threads (unless the run already failed) and waits for
 * them, firing --timeout.  If a thread does not come back within a grace
 * period after a cancellation, prints the error and exits the process. */
ZRI_HIDDEN void zri_run_exec(zri_run *R);
/* After zri_run_exec: the run's error ("lifeline L: file:l:c: cause"), or
 * NULL; the result as JSON text (malloc'd): the value, an array for a
 * tuple, null without results; per-lifeline mode: {"<index>": value} of
 * this lifeline's results. */
ZRI_HIDDEN const char *zri_run_error(zri_run *R);
ZRI_HIDDEN char *zri_run_result_json(zri_run *R);
ZRI_HIDDEN void zri_run_free(zri_run *R);

/* What builtins.c asks of a context: the heap values made on its lifeline
 * go to (thread-safe), and the program. */
ZRI_HIDDEN zri_heap *zri_ctx_heap(zgrt_ctx *ctx);
ZRI_HIDDEN const zgrt_program *zri_ctx_program(zgrt_ctx *ctx);

/* ===================================================================== */
/* trace.c                                                                */
/* ===================================================================== */

/* The JSON Lines trace (--trace FILE); see trace.c for the format.  Every
 * call writes whole lines under the trace's lock. */
typedef struct zri_trace zri_trace;

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
/* The trace as an observer of the run (zri_run_observe): events and
 * retries become lines. */
ZRI_HIDDEN zri_observer zri_trace_observer(zri_trace *t);
/* Closes the file; returns 0, or -1 when writing failed. */
ZRI_HIDDEN int zri_trace_close(zri_trace *t);

#endif
