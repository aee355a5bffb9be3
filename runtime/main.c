/* main.c — zgrt_main, the entry point of every built executable: the one
 * file that knows every part of the runtime and wires them together.
 *
 *   1. check the program descriptor and parse the run options;
 *   2. choose the mode: every lifeline in this process, or one lifeline
 *      with --listen and a --peer for every other one, or with --nats and
 *      --run (a NATS server between the lifelines);
 *   3. a durable run (--durable, --resume): open the run store (durable/);
 *      a resume takes the run's stored options and its directory;
 *   4. make the run (core.c) and store the defaults and the inputs; a
 *      durable run then begins its attempt and gives the run its journal
 *      and human tasks;
 *   5. --trace FILE (per-lifeline executables: FILE.<Lifeline>): open the
 *      trace (a resume continues it; a durable run's lines wait for the
 *      commits they depend on) and write its start lines; --view: open the
 *      live view (view/) and give it the same lines; whichever of them
 *      there is observes the run (watch_*: each event becomes a line of
 *      both);
 *   6. per-lifeline mode: put the journal's messages back (a resume), read
 *      the run's secret (--secret-file), open the socket transport (net/)
 *      or the NATS transport (nats/) and connect the run to it;
 *   7. give the run the agent side (agent/) as its action runner;
 *   8. run; report an error (on stderr, or --error-file) before the
 *      transport closes: once it is closed the peers fail too, and the
 *      first error, the one with the cause, must already be out; then
 *      close the transport (BYE after a normal end, an abort after an
 *      error, so that the peers stop too);
 *   9. a durable run commits and records its outcome;
 *  10. the trace's end line (and the view's, which then lets its browsers
 *      take what is left for up to VIEW_LINGER_S seconds), then the result
 *      on stdout (or --result-file).
 *
 * Exit status: 0 success, 1 run-time error, 2 bad usage (rt.h: errors);
 * durable runs also 3 (stopped to wait for human tasks,
 * --exit-when-waiting), 4 (the run store failed) and 5 (per-lifeline
 * mode: a peer process was lost and not restarted within --peer-wait;
 * the run can be resumed).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "durable/durable.h"
#include "store/zsr.h"
#include "nats/journal.h"
#include "nats/transport.h"
#include "net/net.h"
#include "rt.h"
#include "view/view.h"

#define NET_CONNECT_TIMEOUT_S 30.0
#define SECRET_HINT "head -c 32 /dev/urandom > run.key && chmod 600 run.key"
/* after the run, a browser still taking the event stream gets this long to
 * finish (over loopback it takes megabytes a second) */
#define VIEW_LINGER_S 2.0

/* The run's observers: the trace file and the live view, each optional. */
typedef struct watch {
    const zgrt_program *prog;
    zri_trace *trace;
    zrv_server *view;
} watch;

static void view_push(watch *w, zri_buf *b)
{
    zrv_push(w->view, b->data ? b->data : "", b->len);
    zri_buf_free(b);
}

static void watch_event(void *user, const zri_event *e)
{
    watch *w = user;
    if (w->trace) zri_trace_event(w->trace, e);
    if (w->view) {
        zri_buf b = {0};
        zri_trace_line_event(&b, w->prog, e);
        view_push(w, &b);
    }
}

/* what a lifeline waits for: the view's status, never in the trace file */
static void watch_wait(void *user, int32_t lifeline, const char *what)
{
    watch *w = user;
    zri_buf b = {0};
    zri_buf_puts(&b, "{\"lifeline\":");
    zri_buf_json_string(&b, w->prog->lifelines[lifeline], strlen(w->prog->lifelines[lifeline]));
    zri_buf_puts(&b, ",\"kind\":\"wait\",\"on\":");
    zri_buf_json_string(&b, what, strlen(what));
    zri_buf_puts(&b, "}");
    view_push(w, &b);
}

static void watch_retry(void *user, int32_t lifeline, const char *action, int attempt,
                        const char *error, double delay)
{
    watch *w = user;
    if (w->trace) zri_trace_retry(w->trace, lifeline, action, attempt, error, delay);
    if (w->view) {
        zri_buf b = {0};
        zri_trace_line_retry(&b, w->prog, lifeline, action, attempt, error, delay);
        view_push(w, &b);
    }
}

static const char *lname(const zgrt_program *p, int32_t l) { return p->lifelines[l]; }

/* A per-lifeline executable is a copy of the all-in-one one whose role
 * record names its lifeline (zgrt_abi.h, backend/link.c): its descriptor
 * is then the program's with the other lifelines' bodies and evaluations
 * left out (kept in statics: they live as long as the process).  Returns
 * prog itself when the role is every lifeline, NULL after reporting a
 * role that names no lifeline of the program. */
static const zgrt_program *apply_role(const zgrt_program *prog)
{
    static zgrt_program one;
    static zgrt_body_fn *bodies;
    static zgrt_eval_fn *evals;
    if (!prog->role || prog->role->lifeline == -1) return prog;
    int32_t l = prog->role->lifeline, nl = prog->nlifelines;
    if (l < 0 || l >= nl || !prog->bodies[l]) {
        zri_say("error",
                "this executable is damaged: its role names lifeline %" PRId32
                ", and the program has %" PRId32 " (rebuild it with zgc build)\n",
                l, nl);
        return NULL;
    }
    bodies = zri_xcalloc((size_t)nl, sizeof *bodies);
    evals = zri_xcalloc((size_t)nl, sizeof *evals);
    bodies[l] = prog->bodies[l];
    if (prog->evals) evals[l] = prog->evals[l];
    one = *prog;
    one.bodies = bodies;
    one.evals = evals;
    one.role = NULL;
    return &one;
}

/* The lifeline this executable runs alone (per-lifeline mode), or -1 when
 * it runs every lifeline; peer_addrs[l] (nlifelines entries, per-lifeline
 * mode) the address of lifeline l.  Returns 0, or the exit status after
 * printing the usage errors. */
static int choose_mode(const zgrt_program *prog, const zri_options *o, int32_t *self,
                       const char **peer_addrs)
{
    int32_t nl = prog->nlifelines, nbodies = 0, body = -1;
    *self = -1;
    for (int32_t l = 0; l < nl; l++)
        if (prog->bodies[l]) nbodies++, body = l;
    if (nbodies == 0) {
        zri_say("error", "internal error: this executable runs no lifeline\n");
        return 1;
    }
    if (nbodies != nl && nbodies != 1) {
        zri_say("error", "internal error: this executable runs %d of %d lifelines\n", (int)nbodies,
                (int)nl);
        return 1;
    }
    if (nbodies == 1 && nl > 1) {
        *self = body;
        for (int i = 0; i < o->npeers; i++)
            for (int32_t l = 0; l < nl; l++)
                if (strcmp(o->peer_names[i], lname(prog, l)) == 0) peer_addrs[l] = o->peer_addrs[i];
        int bad = 0;
        if (o->nats) {
            /* lifelines find one another through the server's subjects */
            if (o->listen || o->npeers) {
                zri_say("error", "--nats replaces --listen and --peer: give either\n");
                bad = 1;
            }
            if (!o->nats_run) {
                zri_say("error",
                        "this executable runs lifeline %s only and needs --run RUN "
                        "with --nats, the run's id, the same for every lifeline\n",
                        lname(prog, body));
                bad = 1;
            } else if (!zri_nats_run_ok(o->nats_run)) {
                zri_say("error",
                        "--run expects a run id (1 to %d letters, digits, '_' or "
                        "'-'), got '%s'\n",
                        ZRI_NATS_RUN_MAX, o->nats_run);
                bad = 1;
            }
        } else if (!o->listen) {
            zri_say("error", "this executable runs lifeline %s only and needs --listen ADDR\n",
                    lname(prog, body));
            bad = 1;
        }
        if (!o->secret_file) {
            zri_say("error",
                    "this executable runs lifeline %s only and needs --secret-file "
                    "FILE, the run's secret, the same file for every lifeline (make one with: "
                    "%s)\n",
                    lname(prog, body), SECRET_HINT);
            bad = 1;
        }
        for (int32_t l = 0; l < nl && !o->nats; l++)
            if (l != body && !peer_addrs[l]) {
                zri_say("error", "missing --peer %s=ADDR (the address of lifeline %s)\n",
                        lname(prog, l), lname(prog, l));
                bad = 1;
            }
        if (peer_addrs[body]) {
            zri_say("error", "--peer %s: this executable runs lifeline %s itself\n",
                    lname(prog, body), lname(prog, body));
            bad = 1;
        }
        if (bad) return 2;
    } else if (o->listen || o->npeers || o->secret_file) {
        zri_say("error", "--listen, --peer and --secret-file apply to per-lifeline "
                         "executables only\n");
        return 2;
    } else if ((o->nats || o->nats_run) && nl > 1) {
        /* (a workflow of one lifeline has no peer to reach over NATS) */
        zri_say("error", "--nats and --run apply to per-lifeline executables only (zgc "
                         "run --processes)\n");
        return 2;
    }
    return 0;
}

/* The source line of location loc with a caret under its column, as the
 * compiler shows them ("   7 |     A: a = a / b;" and "     |            ^"),
 * malloc'd; NULL when the source file cannot be read here (an executable
 * run away from its sources) or has no such line. */
static char *excerpt(const zgrt_program *p, int32_t loc)
{
    if (loc < 0 || loc >= p->nlocs || !p->locs) return NULL;
    const zgrt_loc *l = &p->locs[loc];
    const char *path = l->file ? l->file : p->source;
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f) return NULL;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = -1;
    for (int32_t k = 0; k < l->line && (n = getline(&line, &cap, f)) >= 0; k++) {}
    fclose(f);
    if (n < 0) {
        free(line);
        return NULL;
    }
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
    zri_buf b = {0};
    char num[16];
    int w = snprintf(num, sizeof num, "%5d ", (int)l->line);
    zri_buf_printf(&b, "%s| ", num);
    for (ssize_t i = 0; i < n; i++) zri_buf_add(&b, line[i] == '\t' ? " " : &line[i], 1);
    zri_buf_printf(&b, "\n%*s| ", w, "");
    /* the column counts characters (code points), a tab as one: one
       space for each before it */
    for (int32_t k = 1; k < l->col && k <= n; k++) zri_buf_puts(&b, " ");
    zri_buf_puts(&b, "^");
    free(line);
    return zri_buf_take(&b);
}

/* The run's error: on stderr with the source excerpt, or with
 * --error-file as one JSON line {"time_ns": T, "error": "…", "excerpt":
 * "…"} (T: when it occurred, zri_run_error_time; the excerpt when there
 * is one), from which `zgc run --processes` prints the first error of the
 * run. */
static void report_error(const zgrt_program *p, const zri_options *o, const char *error,
                         int64_t time_ns, int32_t loc)
{
    char *ex = excerpt(p, loc);
    if (o->error_file) {
        zri_buf b = {0};
        zri_buf_printf(&b, "{\"time_ns\": %" PRId64 ", \"error\": ", time_ns);
        zri_buf_json_string(&b, error, strlen(error));
        if (ex) {
            zri_buf_puts(&b, ", \"excerpt\": ");
            zri_buf_json_string(&b, ex, strlen(ex));
        }
        zri_buf_puts(&b, "}\n");
        FILE *f = fopen(o->error_file, "w");
        int ok = f && fwrite(b.data, 1, b.len, f) == b.len;
        if (f && fclose(f) != 0) ok = 0;
        zri_buf_free(&b);
        if (ok) {
            free(ex);
            return;
        }
        zri_say("error", "cannot write the error to %s: %s\n", o->error_file, strerror(errno));
    }
    zri_say("error", "%s\n", error);
    if (ex) fprintf(stderr, "%s\n", ex);
    fflush(stderr);
    free(ex);
}

/* A connection to this lifeline that was not one of its peers. */
static void net_note(void *user, const char *msg)
{
    (void)user;
    zri_say("note", "%s\n", msg);
}

/* A resume: lifeline l has ended in the store (net.h: peer_ended). */
static int peer_ended(void *D, int32_t l) { return zrd_ended(D, l); }

/* The journal committed messages from another lifeline: its ACK (over
 * NATS: the stream's messages are acknowledged). */
static void net_acked(void *net, int32_t from, int32_t chan, int64_t committed)
{
    zri_net_ack(net, from, chan, committed);
}

static void nats_acked(void *nats, int32_t from, int32_t chan, int64_t committed)
{
    zri_nats_ack(nats, from, chan, committed);
}

static int write_result(const zri_options *o, const char *json)
{
    if (!o->result_file) {
        /* a result that cannot be written is lost: that is a failure */
        if (printf("%s\n", json) < 0 || fflush(stdout) != 0 || ferror(stdout)) {
            zri_say("error", "cannot write the result to standard output: %s\n", strerror(errno));
            return 1;
        }
        return 0;
    }
    FILE *f = fopen(o->result_file, "w");
    if (!f || fprintf(f, "%s\n", json) < 0 || fclose(f) != 0) {
        zri_say("error", "cannot write the result to %s: %s\n", o->result_file, strerror(errno));
        return 1;
    }
    return 0;
}

/* The NATS configuration of the options (runtime/nats): the password and
 * the token from the environment (never on the command line, where `ps`
 * shows them), an NKey's public key from its seed (in pub).  0, or -1
 * with a message; *token (malloc'd, or NULL) is the caller's to wipe. */
static int nats_config(const zri_options *o, const zri_secret *secret, const uint8_t *ended,
                       zri_nats_config *c, char **token, char pub[57], char *err, size_t errlen)
{
    *c = (zri_nats_config){.servers = o->nats,
                           .run = o->nats_run,
                           .secret = secret,
                           .timeout_s = o->timeout > 0 ? o->timeout : NET_CONNECT_TIMEOUT_S,
                           .heartbeat_s = o->heartbeat,
                           .durable = o->durable,
                           .peer_wait_s = o->peer_wait,
                           .replicas = o->nats_replicas,
                           .ended = ended,
                           .creds = o->nats_creds,
                           .user = o->nats_user,
                           .ca = o->nats_ca,
                           .cert = o->nats_cert,
                           .key = o->nats_key};
    *token = NULL;
    if (o->nats_user) {
        c->password = getenv("ZGC_NATS_PASSWORD");
        if (!c->password) {
            zri_err(err, errlen, "--nats-user %s needs its password in $ZGC_NATS_PASSWORD",
                    o->nats_user);
            return -1;
        }
    }
    if ((o->nats_cert != NULL) != (o->nats_key != NULL)) {
        zri_err(err, errlen,
                "--nats-cert and --nats-key go together (a client certificate "
                "and its key)");
        return -1;
    }
    if (o->nats_token_file) {
        if (!(*token = zri_nats_read_token(o->nats_token_file, err, errlen))) return -1;
    } else if (getenv("ZGC_NATS_TOKEN") && *getenv("ZGC_NATS_TOKEN")) {
        *token = zri_xstrndup(getenv("ZGC_NATS_TOKEN"), strlen(getenv("ZGC_NATS_TOKEN")));
    }
    c->token = *token;
    if (o->nats_nkey) {
        if (zri_nats_nkey_public(o->nats_nkey, pub, err, errlen) < 0) return -1;
        c->nkey_seed = o->nats_nkey;
        c->nkey_pub = pub;
    }
    return 0;
}

static void wipe(char *token)
{
    if (!token) return;
    explicit_bzero(token, strlen(token));
    free(token);
}

/* The NATS transport (runtime/nats).  NULL with a message. */
static zri_nats *open_nats(const zgrt_program *prog, const zri_options *o, int32_t self,
                           const zri_secret *secret, const uint8_t *ended, zri_heap *h,
                           const zri_net_callbacks *cb, char *err, size_t errlen)
{
    zri_nats_config c;
    char *token, pub[57];
    zri_nats *n = NULL;
    if (nats_config(o, secret, ended, &c, &token, pub, err, errlen) == 0)
        n = zri_nats_open(prog, self, &c, h, cb, err, errlen);
    wipe(token);
    return n;
}

/* --journal nats[:BUCKET]: the journals in a JetStream key-value bucket
 * (nats/journal.h) instead of the SQLite run store.  Returns 0 with *be,
 * or the exit status after printing why. */
static int open_kv_journal(const zgrt_program *prog, const zri_options *o, int32_t self,
                           zrd_backend *be)
{
    if (self < 0 || !o->nats) {
        zri_say("error",
                "--journal %s applies to per-lifeline executables with "
                "--nats (zgc run --processes --nats URL)\n",
                o->journal);
        return 2;
    }
    /* the bucket's keys, the run's messages and its stores are all under
     * the NATS run: the run's id is that one */
    if (o->run_id && o->nats_run && strcmp(o->run_id, o->nats_run) != 0) {
        zri_say("error",
                "--journal %s: the run's id is its NATS run (--run %s): leave --run-id out or "
                "give the same id\n",
                o->journal, o->nats_run);
        return 2;
    }
    const char *bucket = o->journal[4] == ':' ? o->journal + 5 : ZRI_NATS_KV_BUCKET;
    char err[1024] = "";
    zri_nats_config c;
    char *token, pub[57];
    int rc = nats_config(o, NULL, NULL, &c, &token, pub, err, sizeof err);
    if (rc == 0) rc = zri_nats_kv_open(prog, self, &c, bucket, !o->resume, be, err, sizeof err);
    wipe(token);
    if (rc < 0) {
        zri_say("error", "lifeline %s: %s\n", lname(prog, self), err);
        return ZRD_EXIT_STORE;
    }
    return 0;
}

/* The key-value bucket that holds run o->resume, among those the NATS
 * server lets this user see (zri_nats_kv_find_run): 1 with its name, 0,
 * or -1 after printing why. */
static int kv_find_run(const zgrt_program *prog, const zri_options *o, int32_t self, char *bucket,
                       size_t len)
{
    char err[1024] = "";
    zri_nats_config c;
    char *token, pub[57];
    int rc = nats_config(o, NULL, NULL, &c, &token, pub, err, sizeof err);
    if (rc == 0) rc = zri_nats_kv_find_run(prog, self, &c, bucket, len, err, sizeof err);
    wipe(token);
    if (rc < 0) zri_say("error", "lifeline %s: %s\n", lname(prog, self), err);
    return rc;
}

/* A resume of a per-lifeline run over NATS: its journals are where the run
 * started them, in the SQLite run store or in a key-value bucket (whose
 * run record names it: RUN.run).  Without --journal the resume looks in
 * the run store, then in the server's buckets; a --journal naming another
 * place than the run's is an error.  Sets *journal (NULL: the run store);
 * 0, or the exit status after printing why. */
static int resume_journal(const zgrt_program *prog, const zri_options *o, int32_t self,
                          const char **journal)
{
    static char found[160];
    const char *given = o->journal;
    int in_kv = given && strncmp(given, "nats", 4) == 0;
    const char *bucket = in_kv && given[4] == ':' ? given + 5 : ZRI_NATS_KV_BUCKET;
    *journal = in_kv ? given : NULL;
    if (self < 0 || !o->nats || !o->resume) return 0;
    char err[1024] = "", *file = NULL, where[128] = "";
    int has = zrd_store_has(o, o->resume, &file, err, sizeof err);
    if (has < 0 && in_kv) has = 0; /* (a store that cannot be read is not the run's) */
    if (has < 0) {
        zri_say("error", "%s\n", err);
        free(file);
        return ZRD_EXIT_STORE;
    }
    if (has > 0 && in_kv)
        zri_say("error",
                "run %s keeps its journals in the run store %s (--journal sqlite), not in the "
                "key-value bucket %s: resume it without --journal\n",
                o->resume, file, bucket);
    free(file);
    if (has > 0) return in_kv ? 1 : 0;
    if ((has = kv_find_run(prog, o, self, where, sizeof where)) < 0) return ZRD_EXIT_STORE;
    if (has == 0) return 0; /* opening the run store or bucket says what is missing */
    if (given && (!in_kv || strcmp(where, bucket) != 0)) {
        zri_say("error",
                "run %s keeps its journals in the key-value bucket %s (--journal nats:%s), not "
                "in %s%s: resume it without --journal\n",
                o->resume, where, where, in_kv ? "the key-value bucket " : "the run store",
                in_kv ? bucket : "");
        return 1;
    }
    snprintf(found, sizeof found, "nats:%s", where);
    *journal = found;
    return 0;
}

static size_t trace_mark(void *u) { return zri_trace_mark(u); }
static int trace_release(void *u, size_t mark) { return zri_trace_release(u, mark); }

/* A durable run keeps where its stores live with its options, so that a
 * resume finds the same stores and records (its paths are taken from
 * the run's directory, like the others). */
static void keep_store_options(zri_options *o)
{
    const char *names[] = {"--oprecords", "--store-file", "--store-dir"};
    const char *vals[] = {o->oprecords, o->store_file, o->store_dir};
    for (int k = 0; k < 3; k++)
        if (vals[k]) zri_options_keep(o, names[k], vals[k]);
}

/* A resume: the run's stored options, then those of the command line (the
 * store, --exit-when-waiting, and what a launcher gives per process),
 * parsed again into o; and the run's directory.  0, or the exit status. */
static int resume_options(const zgrt_program *prog, zrd_run *D, int argc, char **argv,
                          const char *journal, zri_options *o, char ***merged)
{
    if (o->nstored) {
        zri_say("error",
                "--resume takes the inputs and options stored with the run; give "
                "none of them (here: %s)\n",
                o->stored[0]);
        return 2;
    }
    int n;
    char **stored = zrd_stored(D, &n);
    char **v = zri_xcalloc((size_t)(n + argc + 1), sizeof *v);
    int k = 0;
    for (int i = 0; i < n; i++) v[k++] = stored[i];
    for (int i = 1; i < argc; i++) v[k++] = argv[i];
    *merged = v;
    zri_options_free(o);
    int rc = zri_options_parse(prog, k, v, o);
    if (rc != 0) {
        zri_say("error", "the stored options of run %s are not this program's\n", zrd_id(D));
        return 1;
    }
    o->journal = journal; /* where the resume found the run's journals */
    const char *cwd = zrd_cwd(D);
    if (cwd && chdir(cwd) != 0 && journal) {
        /* a journal in a bucket: the run may go on on another host */
        zri_say("note",
                "the directory %s of run %s is not here; relative paths of its "
                "options are taken in this directory\n",
                cwd, zrd_id(D));
    } else if (cwd && chdir(cwd) != 0) {
        zri_say("error", "cannot work in the directory %s of run %s: %s\n", cwd, zrd_id(D),
                strerror(errno));
        return 1;
    }
    return 0;
}

/* The configuration of actions, checked before the run starts: exit
 * status 2 with the reason (agent/agent.h: zri_actions_check). */
static int check_actions(const zgrt_program *prog, const zri_options *o)
{
    char err[1400];
    if (zri_actions_check(o, err, sizeof err) == 0) return 0;
    zri_say("error", "%s\n(run with --help for the options of %s)\n", err,
            prog->workflow ? prog->workflow : "the workflow");
    return 2;
}

int zgrt_main(const zgrt_program *prog, int argc, char **argv)
{
    zri_set_name(argc > 0 ? argv[0] : NULL);
    if (zri_program_check(prog) < 0) return 1;
    if (!(prog = apply_role(prog))) return 1;
    zri_options opts;
    int rc = zri_options_parse(prog, argc > 0 ? argc - 1 : 0, argc > 0 ? argv + 1 : argv, &opts);
    if (rc != 0) return rc > 0 ? 0 : 2;

    int32_t self;
    const char **peer_addrs = zri_xcalloc((size_t)prog->nlifelines, sizeof *peer_addrs);
    int status = choose_mode(prog, &opts, &self, peer_addrs);
    zri_run *R = NULL;
    zri_trace *trace = NULL;
    zrv_server *view = NULL;
    zri_heap *net_heap = NULL;
    zri_net *net = NULL;
    zri_nats *nats = NULL;
    zri_secret *secret = NULL;
    zrd_run *D = NULL;
    zsr_stores *stores = NULL;
    void *store_conn = NULL; /* the stores' NATS connection (--nats) */
    char defdir[4096];       /* a durable run's stores by default */
    uint8_t *ended = NULL;
    char **merged = NULL;
    int attempt = 0;
    if (status != 0) goto done;
    if ((status = check_actions(prog, &opts)) != 0) goto done;
    if (!opts.durable && (opts.run_id || opts.exit_when_waiting)) {
        zri_say("error", "%s applies to durable runs only (--durable)\n",
                opts.run_id ? "--run-id" : "--exit-when-waiting");
        status = 2;
        goto done;
    }

    if (prog->nstores == 0 && (opts.oprecords || opts.store_file)) {
        zri_say("error", "%s: workflow %s declares no store, so there is nothing to %s\n",
                opts.oprecords ? "--oprecords" : "--store-file", prog->workflow,
                opts.oprecords ? "record" : "keep");
        status = 2;
        goto done;
    }
    if (opts.journal && !opts.durable) {
        zri_say("error", "--journal applies to durable runs only (--durable)\n");
        status = 2;
        goto done;
    }
    if (opts.durable) {
        zrd_backend kv, *be = NULL;
        const char *journal = NULL;
        if ((status = resume_journal(prog, &opts, self, &journal)) != 0) goto done;
        opts.journal = journal;
        if (journal) {
            if ((status = open_kv_journal(prog, &opts, self, &kv)) != 0) goto done;
            be = &kv;
        }
        if (!opts.resume) keep_store_options(&opts);
        if ((status = zrd_open(prog, &opts, self, be, &D)) != 0) goto done;
        const char *done_result = zrd_done_result(D);
        if (done_result) {
            zri_say("note", "run %s has finished; its result:\n", zrd_id(D));
            status = write_result(&opts, done_result);
            goto done;
        }
        if (opts.resume &&
            (status = resume_options(prog, D, argc, argv, journal, &opts, &merged)) != 0)
            goto done;
        if (opts.resume && (status = check_actions(prog, &opts)) != 0) goto done;
    }

    /* a durable per-lifeline run that waits for lost peers: a lifeline that
     * ended had every message it sent acknowledged (net.h: zri_net_drain)
     * and took all it needed; resuming it has nothing to do, and its peers
     * do not connect to it */
    if (D && opts.resume && self >= 0 && opts.peer_wait > 0 && zrd_ended(D, self)) {
        zri_say("note", "lifeline %s of run %s has ended; nothing to resume\n", lname(prog, self),
                zrd_id(D));
        goto done;
    }

    R = zri_run_new(prog, &opts, self);
    if ((status = zri_run_setup(R)) != 0) goto done;
    if (D && (status = zrd_start(D, R, &opts, &attempt)) != 0) goto done;
    /* a durable run keeps its stores in SQLite files beside the run store,
     * one directory per run (RUNSTORE-DIR/stores/RUN/S.db), unless
     * --store-file, --store-dir or (per-lifeline) --nats place them */
    if (D && prog->nstores > 0 && !opts.store_file && !opts.store_dir &&
        !(opts.nats && self >= 0)) {
        if ((status = zrd_store_dir(D, defdir, sizeof defdir)) != 0) goto done;
        opts.store_dir = defdir;
    }
    if (prog->nstores > 0) {
        char serr[1024];
        if (opts.nats && self >= 0 && !opts.store_file && !opts.store_dir) {
            /* the stores in key-value buckets of the run's NATS server */
            zri_nats_config c;
            char *token, pub[57];
            int crc = nats_config(&opts, NULL, NULL, &c, &token, pub, serr, sizeof serr);
            if (crc == 0 && !(store_conn = zri_nats_store_connect(&c, serr, sizeof serr))) crc = -1;
            wipe(token);
            if (crc < 0) {
                zri_say("error", "%s\n", serr);
                status = 1;
                goto done;
            }
        }
        if (!(stores = zsr_open(prog, &opts, self, store_conn, serr, sizeof serr))) {
            zri_say("error", "%s\n", serr);
            status = 1;
            goto done;
        }
        zri_stores si = zsr_interface(stores);
        zri_run_set_stores(R, &si);
    }

    char err[1024] = "";
    if (opts.trace) {
        zri_buf path = {0};
        zri_buf_puts(&path, opts.trace);
        if (self >= 0) zri_buf_printf(&path, ".%s", lname(prog, self));
        if (D && opts.resume)
            trace = zri_trace_reopen(prog, path.data, err, sizeof err);
        else
            trace = zri_trace_open(prog, path.data, err, sizeof err);
        zri_buf_free(&path);
        if (!trace) {
            zri_say("error", "%s\n", err);
            status = 1;
            goto done;
        }
        if (D) zri_trace_defer(trace, attempt);
        for (int32_t l = 0; l < prog->nlifelines; l++)
            if ((self < 0 || l == self) && !zri_trace_has_start(trace, l))
                zri_trace_start(trace, l, zri_run_store(R, l));
        if (D && opts.resume) zri_trace_resume(trace, self, zrd_id(D), attempt);
    }
    if (opts.view) {
        char url[256];
        zri_buf title = {0};
        zri_buf_puts(&title, prog->workflow ? prog->workflow : "workflow");
        if (self >= 0) zri_buf_printf(&title, " (lifeline %s)", lname(prog, self));
        view = zrv_open(opts.view, title.data, prog->nlifelines, prog->lifelines, url, sizeof url,
                        err, sizeof err);
        zri_buf_free(&title);
        if (!view) {
            zri_say("error", "%s\n", err);
            status = 2;
            goto done;
        }
        zri_say("view", "%s\n", url);
        fflush(stderr);
        for (int32_t l = 0; l < prog->nlifelines; l++)
            if (self < 0 || l == self) {
                zri_buf b = {0};
                zri_trace_line_start(&b, prog, l, zri_run_store(R, l));
                zrv_push(view, b.data, b.len);
                zri_buf_free(&b);
            }
    }
    watch w = {prog, trace, view};
    if (trace || view) {
        zri_observer obs = {watch_event, watch_retry, &w, view ? watch_wait : NULL};
        zri_run_observe(R, &obs);
    }

    if (D && self >= 0) zri_run_restore(R);
    if (self >= 0) {
        secret = zri_xmalloc(sizeof *secret);
        if (zri_secret_load(opts.secret_file, secret, err, sizeof err) < 0) {
            zri_say("error", "%s\n", err);
            status = 1;
            goto done;
        }
        /* the values of decoded messages live in their own heap until the
         * end, like those of the lifelines */
        net_heap = zri_heap_new();
        zri_net_callbacks cb = {zri_run_deliver, zri_run_lost,     zri_run_ended,
                                net_note,        zri_run_received, R,
                                zri_run_block};
        /* a durable run waits for a lost peer's new process (net.h: keep
         * mode); a resume does not connect to lifelines that have ended */
        ended = zri_xcalloc((size_t)prog->nlifelines, 1);
        for (int32_t l = 0; D && opts.resume && opts.peer_wait > 0 && l < prog->nlifelines; l++)
            ended[l] = l != self && zrd_ended(D, l);
        zri_net_config nc = {.listen = opts.listen,
                             .peer_addrs = peer_addrs,
                             .secret = secret,
                             .timeout_s = opts.timeout > 0 ? opts.timeout : NET_CONNECT_TIMEOUT_S,
                             .heartbeat_s = opts.heartbeat,
                             .peer_wait_s = D ? opts.peer_wait : 0,
                             .ended = ended};
        if (D && opts.resume && opts.peer_wait > 0) nc.peer_ended = peer_ended, nc.peer_ended_u = D;
        if (opts.nats) {
            if ((nats =
                     open_nats(prog, &opts, self, secret, ended, net_heap, &cb, err, sizeof err))) {
                zri_transport t = zri_nats_transport(nats);
                zri_run_connect(R, &t);
            } else {
                zri_run_fail(R, self, "cannot connect to the other lifelines: %s", err);
            }
        } else if ((net = zri_net_open(prog, self, &nc, net_heap, &cb, err, sizeof err))) {
            zri_transport t = zri_net_transport(net);
            zri_run_connect(R, &t);
        } else {
            zri_run_fail(R, self, "cannot connect to the other lifelines: %s", err);
        }
    }
    zri_run_set_actions(R, zri_run_action);
    if (D) {
        zrd_output out = {trace ? trace_mark : NULL, trace ? trace_release : NULL, trace,
                          net ? net_acked : NULL, net};
        if (nats) out.acked = nats_acked, out.acked_u = nats;
        if ((status = zrd_go(D, &out)) != 0) {
            zri_run_fail(R, -1, "the durable run could not start");
            status = 0;
        }
    }

    zri_run_exec(R);
    /* a durable run's lifeline ends once its peers' journals hold every
     * message it sent them (net.h: zri_net_drain; its own acknowledgements
     * go on meanwhile): else a peer lost for good could never get them
     * again from it, so it stops as after a lost peer, to be resumed */
    if (net && !zri_run_error(R) && !zri_run_waiting(R) && zri_net_drain(net) != 0)
        zri_run_lost(R, "a lost peer did not come back to acknowledge what this lifeline sent it "
                        "within --peer-wait");
    const char *error = zri_run_error(R);
    int waiting = zri_run_waiting(R);
    /* a durable run whose peer process was lost stops, to be resumed: a
     * note below, unless the store failed too */
    int lost = error && D && zri_run_lost_peer(R);
    if (error && !lost)
        report_error(prog, &opts, error, zri_run_error_time(R), zri_run_error_loc(R));
    if (nats) {
        zrd_no_acks(D); /* the acknowledgements stop with the transport */
        if (error || waiting)
            zri_nats_abort(nats); /* the peers must stop too */
        else
            zri_nats_close(nats);
    }
    if (net) {
        zrd_no_acks(D); /* the acknowledgements stop with the transport */
        if (error || waiting)
            zri_net_abort(net); /* the peers must stop too */
        else
            zri_net_close(net);
    }

    /* result or error */
    char *json = NULL;
    if (!error && !waiting) json = zri_run_result_json(R);
    /* a durable run: everything committed (and the trace's lines
     * released) before the trace ends; the run's outcome is recorded after
     * its trace is whole, and before anything is printed */
    int store_failed = D ? zrd_flush(D, error) : 0;
    if (trace && waiting) {
        if (zri_trace_close(trace) != 0) {
            zri_say("error", "writing the trace %s failed\n", opts.trace);
            status = 1;
        }
        trace = NULL;
    }
    if (trace) {
        zri_trace_end(trace, json, error);
        if (zri_trace_close(trace) != 0 && !error) {
            zri_say("error", "writing the trace %s failed\n", opts.trace);
            status = 1;
        }
        trace = NULL;
    }
    if (view) {
        zri_buf b = {0};
        zri_trace_line_end(&b, json, error);
        zrv_push(view, b.data, b.len);
        zri_buf_free(&b);
        zrv_close(view, VIEW_LINGER_S);
        view = NULL;
    }
    if (store_failed)
        status = store_failed;
    else if (D)
        status = zrd_finish(D, R, json, error, status);
    if (lost && status == 0) {
        zri_say("note", "stopped: %s (run %s can be resumed)\n", error, zrd_id(D));
        status = ZRD_EXIT_LOST;
    } else if (error) {
        if (lost) report_error(prog, &opts, error, zri_run_error_time(R), zri_run_error_loc(R));
        if (status == 0) status = 1;
    } else if (status == 0 && !waiting) {
        status = write_result(&opts, json);
    }
    free(json);
    zri_actions_shutdown();

done:
    if (secret) {
        explicit_bzero(secret, sizeof *secret);
        free(secret);
    }
    if (trace) zri_trace_close(trace); /* a failed setup: the file stays as it is */
    zrv_close(view, 0);
    zrd_close(D); /* its commit thread ends before the run is freed */
    zsr_close(stores);
    zri_nats_store_close(store_conn);
    if (R) zri_run_free(R);
    zri_heap_free(net_heap);
    free(peer_addrs);
    free(ended);
    zri_options_free(&opts);
    free(merged);
    return status;
}
