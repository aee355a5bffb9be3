/* run.c — a durable run as zgrt_main sees it: open (a new run, or the
 * checks of a resume), start (the run's row, the journal, replay), human
 * tasks, finish.
 *
 * A run is one row of `runs` and one row per lifeline; one process runs
 * every lifeline (mode "single"), or each lifeline runs in a process of
 * its own (mode "processes": the processes of one run share its id, the
 * first to start makes the row).  A resume needs only the run's id: the
 * run options are stored with it (zri_options.stored: inputs, models,
 * answers file, trace, timeouts; never a secret, which only ever comes
 * from the environment), and the resumed process works in the directory
 * the run started in, so relative paths mean what they meant.
 *
 * What a resume refuses: an unknown run, a cancelled one, one that a live
 * process still runs (its pid and start time, from /proc), one of another
 * mode, and one of another program (the descriptor's fingerprint, naming
 * the parts that changed).  A resume of a run that is done prints its
 * result again.
 *
 * Human tasks (zrd_task): a question nothing else can answer becomes a
 * pending task; the lifeline polls the store every TASK_POLL_MS until
 * `zgc answer` answers it, the run is cancelled, or the run stops waiting
 * (--exit-when-waiting; the core decides when).  A task is found again by
 * its call's idempotency key, so a resumed run waits for the same task,
 * or takes its answer if it came meanwhile.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "durable.h"
#include "procid.h"

#define TASK_POLL_MS 200

struct zrd_run {
    const zgrt_program *p;
    int32_t self;
    zrd_store *st;
    zrd_runrow row; /* a resume: the run as stored; a new run: filled by zrd_start */
    int resume;
    char **stored;
    int nstored;
    char id[72];
    zrd_journal *J;
    zri_run *R;
    int attempt;
};

static int err_exit(int status, const char *fmt, ...) ZRI_PRINTF(2, 3);
static int err_exit(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    zri_say_prefix("error");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return status;
}

/* ---- processes ------------------------------------------------------------ */

static int proc_alive(int64_t pid, int64_t start)
{
    if (pid <= 0 || pid == getpid()) return 0;
    return zv_proc_start(pid) == start;
}

/* ---- fingerprints ------------------------------------------------------------ */

/* The part NAME of a parts text ("NAME HEX" lines), as a malloc'd HEX, or
 * NULL. */
static char *part_hash(const char *parts, const char *name, size_t n)
{
    for (const char *l = parts; l && *l;) {
        const char *nl = strchr(l, '\n');
        size_t len = nl ? (size_t)(nl - l) : strlen(l);
        const char *sp = memrchr(l, ' ', len);
        if (sp && (size_t)(sp - l) == n && memcmp(l, name, n) == 0)
            return zri_xstrndup(sp + 1, len - (size_t)(sp - l) - 1);
        l = nl ? nl + 1 : l + len;
    }
    return NULL;
}

/* Appends the names of a's parts that b lacks (or has another hash for,
 * with changed) to out, after head. */
static void parts_diff(zri_buf *out, const char *a, const char *b, int changed, const char *head)
{
    int first = 1;
    for (const char *l = a; l && *l;) {
        const char *nl = strchr(l, '\n');
        size_t len = nl ? (size_t)(nl - l) : strlen(l);
        const char *sp = memrchr(l, ' ', len);
        if (sp) {
            char *h = part_hash(b, l, (size_t)(sp - l));
            int differs = h && strncmp(h, sp + 1, len - (size_t)(sp - l) - 1) != 0;
            if ((changed && differs) || (!changed && !h)) {
                zri_buf_printf(out, "%s%.*s", first ? head : ", ", (int)(sp - l), l);
                first = 0;
            }
            free(h);
        }
        l = nl ? nl + 1 : l + len;
    }
}

static int check_fingerprint(zrd_run *D)
{
    const zgrt_program *p = D->p;
    const char *now = p->fingerprint ? p->fingerprint : "";
    if (strcmp(D->row.fingerprint, now) == 0) return 0;
    const char *was_parts = D->row.fingerprint_parts,
               *now_parts = p->fingerprint_parts ? p->fingerprint_parts : "";
    zri_buf why = {0};
    parts_diff(&why, now_parts, was_parts, 1, "changed: ");
    if (why.len) zri_buf_puts(&why, "; ");
    size_t at = why.len;
    parts_diff(&why, now_parts, was_parts, 0, "new: ");
    if (why.len > at) zri_buf_puts(&why, "; ");
    at = why.len;
    parts_diff(&why, was_parts, now_parts, 0, "gone: ");
    if (why.len == at && why.len >= 2) why.len -= 2, why.data[why.len] = 0;
    zri_say("error",
            "run %s was started by another version of workflow %s (fingerprint "
            "%.12s…, this program's %.12s…)%s%s\n",
            D->row.id, D->row.workflow, D->row.fingerprint, now, why.len ? ": " : "",
            why.len ? why.data : "");
    zri_buf_free(&why);
    return 1;
}

/* ---- open ------------------------------------------------------------------- */

static int parse_stored(zrd_run *D, const char *json)
{
    json_error_t je;
    json_t *a = json ? json_loads(json, 0, &je) : NULL;
    if (!json_is_array(a)) {
        json_decref(a);
        return -1;
    }
    D->nstored = (int)json_array_size(a);
    D->stored = zri_xcalloc((size_t)D->nstored + 1, sizeof *D->stored);
    for (int i = 0; i < D->nstored; i++) {
        const char *s = json_string_value(json_array_get(a, (size_t)i));
        if (!s || strncmp(s, "--", 2) != 0) {
            json_decref(a);
            return -1;
        }
        D->stored[i] = zri_xstrndup(s, strlen(s));
    }
    json_decref(a);
    return 0;
}

int zrd_store_has(const zri_options *o, const char *id, char **file, char *err, size_t errlen)
{
    *file = zrd_store_path(o->store);
    if (access(*file, F_OK) != 0) return 0;
    zrd_store *st = zrd_store_open(*file, err, errlen);
    if (!st) return -1;
    zrd_runrow row;
    int found = zrd_store_find(st, id, &row, err, errlen);
    if (found > 0) zrd_runrow_free(&row);
    zrd_store_close(st);
    return found;
}

int zrd_open(const zgrt_program *p, const zri_options *o, int32_t self, const zrd_backend *be,
             zrd_run **out)
{
    *out = NULL;
    /* a file size limit (ulimit -f) makes writes fail, as a full disk
     * does, instead of killing the process with SIGXFSZ */
    signal(SIGXFSZ, SIG_IGN);
    char err[1024] = "";
    zrd_store *st;
    if (be) {
        st = zrd_store_backend(be);
    } else {
        char *path = zrd_store_path(o->store);
        st = zrd_store_open(path, err, sizeof err);
        free(path);
    }
    if (!st) return err_exit(ZRD_EXIT_STORE, "%s", err);
    zrd_run *D = zri_xcalloc(1, sizeof *D);
    D->p = p;
    D->self = self;
    D->st = st;
    if (!o->resume) {
        *out = D;
        return 0;
    }
    if (o->run_id) {
        zrd_close(D);
        return err_exit(2, "--run-id names a new run; --resume %s resumes an existing one",
                        o->resume);
    }
    D->resume = 1;
    snprintf(D->id, sizeof D->id, "%s", o->resume);
    int found = zrd_store_find(st, o->resume, &D->row, err, sizeof err);
    int status = 0;
    if (found < 0) {
        status = err_exit(ZRD_EXIT_STORE, "%s", err);
    } else if (!found) {
        status = err_exit(1, "no run %s in the run store %s", o->resume, zrd_store_file(st));
    } else if (strcmp(D->row.status, "cancelled") == 0) {
        status = err_exit(1, "run %s was cancelled; it cannot be resumed", o->resume);
    } else if (strcmp(D->row.workflow, p->workflow ? p->workflow : "") != 0) {
        status = err_exit(1, "run %s is a run of workflow %s, not of %s", o->resume,
                          D->row.workflow, p->workflow ? p->workflow : "?");
    } else if (strcmp(D->row.mode, self >= 0 ? "processes" : "single") != 0) {
        status = err_exit(1,
                          self >= 0 ? "run %s runs every lifeline in one process: resume it with "
                                      "the workflow's executable or zgc runs resume %s"
                                    : "run %s runs one process per lifeline: resume it with the "
                                      "lifelines' executables or zgc runs resume %s",
                          o->resume, o->resume);
    } else if (check_fingerprint(D)) {
        status = 1;
    }
    if (status) {
        zrd_close(D);
        return status;
    }
    /* no live process may run it still */
    const char *options = D->row.options;
    char *life_options = NULL;
    for (int32_t l = 0; l < p->nlifelines; l++) {
        if (self >= 0 && l != self) continue;
        int64_t pid = 0, start = 0;
        char *st_status = NULL, *opts = NULL;
        int r =
            zrd_store_lifeline(st, D->row.rid, l, &st_status, &pid, &start, &opts, err, sizeof err);
        if (r < 0) status = err_exit(ZRD_EXIT_STORE, "%s", err);
        if (r > 0 && st_status && strcmp(st_status, "running") == 0 && proc_alive(pid, start))
            status = err_exit(1, "run %s is running (lifeline %s in process %" PRId64 ")",
                              o->resume, p->lifelines[l], pid);
        if (r > 0 && self >= 0 && opts) life_options = opts, opts = NULL;
        free(st_status);
        free(opts);
        if (status) break;
    }
    if (!status && parse_stored(D, life_options ? life_options : options) < 0)
        status = err_exit(ZRD_EXIT_STORE, "run store %s is damaged: the options of run %s",
                          zrd_store_file(st), o->resume);
    free(life_options);
    if (status) {
        zrd_close(D);
        return status;
    }
    *out = D;
    return 0;
}

char **zrd_stored(zrd_run *D, int *n)
{
    *n = D->nstored;
    return D->stored;
}

const char *zrd_cwd(zrd_run *D) { return D->resume ? D->row.cwd : NULL; }

const char *zrd_done_result(zrd_run *D)
{
    return D->resume && strcmp(D->row.status, "done") == 0 && D->row.result ? D->row.result : NULL;
}

const char *zrd_id(zrd_run *D) { return D->id; }

static int make_dir(const char *d)
{
    if (mkdir(d, 0777) == 0 || errno == EEXIST) return 0;
    return err_exit(1, "cannot make the stores' directory %s: %s", d, strerror(errno));
}

int zrd_store_dir(zrd_run *D, char *out, size_t n)
{
    if (!zrd_store_is_file(D->st))
        return err_exit(2, "the stores of a durable run whose journal is not in a SQLite run "
                           "store need --store-file or --store-dir (or --nats per lifeline)");
    char *full = realpath(zrd_store_file(D->st), NULL);
    if (!full) return err_exit(1, "run store %s: %s", zrd_store_file(D->st), strerror(errno));
    char *slash = strrchr(full, '/');
    if (slash) *slash = '\0';
    int w = snprintf(out, n, "%s/stores", full);
    int rc = w > 0 && (size_t)w < n ? make_dir(out) : err_exit(1, "the stores' path is too long");
    if (rc == 0) {
        w = snprintf(out, n, "%s/stores/%s", full, D->id);
        rc = w > 0 && (size_t)w < n ? make_dir(out) : err_exit(1, "the stores' path is too long");
    }
    free(full);
    return rc;
}

/* ---- start ------------------------------------------------------------------- */

static char *self_exe(void)
{
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return NULL;
    return zri_xstrndup(buf, (size_t)n);
}

static char *options_json(const zri_options *o)
{
    json_t *a = json_array();
    if (!a) zri_oom();
    for (int i = 0; i < o->nstored; i++)
        if (json_array_append_new(a, json_string(o->stored[i])) != 0) zri_oom();
    char *s = json_dumps(a, JSON_COMPACT);
    json_decref(a);
    if (!s) zri_oom();
    return s;
}

static void new_id(char *out, size_t n)
{
    uint32_t rnd = 0;
    if (getrandom(&rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
        rnd = (uint32_t)getpid() * 2654435761u ^ (uint32_t)time(NULL);
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    char day[32];
    strftime(day, sizeof day, "%Y%m%d-%H%M%S", &tm);
    snprintf(out, n, "%s-%06x", day, (unsigned)(rnd & 0xffffff));
}

int zrd_start(zrd_run *D, zri_run *R, const zri_options *o, int *attempt)
{
    const zgrt_program *p = D->p;
    char err[1024] = "";
    int nl = D->self >= 0 ? 1 : p->nlifelines;
    int32_t *lives = zri_xcalloc((size_t)nl, sizeof *lives);
    zrd_liferow *rows = zri_xcalloc((size_t)nl, sizeof *rows);
    char *exe = self_exe();
    char *opts = options_json(o);
    int64_t pid = getpid(), start = zv_proc_start(getpid());
    for (int i = 0; i < nl; i++) {
        lives[i] = D->self >= 0 ? D->self : i;
        rows[i] = (zrd_liferow){.lifeline = lives[i],
                                .name = p->lifelines[lives[i]],
                                .executable = D->self >= 0 ? exe : NULL,
                                .options = D->self >= 0 ? opts : NULL,
                                .pid = pid,
                                .pid_start = start};
    }
    /* per-lifeline mode: the other lifelines' rows, their executables
     * beside this one (DIR/<workflow>.<Lifeline>) */
    int nothers = 0;
    zrd_liferow *others = NULL;
    char **other_exes = NULL;
    if (D->self >= 0 && !D->resume) {
        others = zri_xcalloc((size_t)p->nlifelines, sizeof *others);
        other_exes = zri_xcalloc((size_t)p->nlifelines, sizeof *other_exes);
        const char *slash = exe ? strrchr(exe, '/') : NULL;
        for (int32_t l = 0; l < p->nlifelines; l++) {
            if (l == D->self) continue;
            if (slash) {
                zri_buf b = {0};
                zri_buf_printf(&b, "%.*s/%s.%s", (int)(slash - exe), exe, p->workflow,
                               p->lifelines[l]);
                other_exes[nothers] = zri_buf_take(&b);
            }
            others[nothers] = (zrd_liferow){.lifeline = l,
                                            .name = p->lifelines[l],
                                            .executable = other_exes[nothers],
                                            .options = opts};
            nothers++;
        }
    }
    int status = 0;
    if (!D->resume) {
        if (o->run_id)
            snprintf(D->id, sizeof D->id, "%s", o->run_id);
        else if (!zrd_store_is_file(D->st) && o->nats_run)
            /* journals in a bucket: every lifeline's process names the
             * run alike, by its NATS run */
            snprintf(D->id, sizeof D->id, "%s", o->nats_run);
        else
            new_id(D->id, sizeof D->id);
        char *cwd = getcwd(NULL, 0);
        D->row.id = zri_xstrndup(D->id, strlen(D->id));
        D->row.workflow =
            zri_xstrndup(p->workflow ? p->workflow : "?", strlen(p->workflow ? p->workflow : "?"));
        D->row.source =
            zri_xstrndup(p->source ? p->source : "", strlen(p->source ? p->source : ""));
        const char *fp = p->fingerprint ? p->fingerprint : "";
        const char *fpp = p->fingerprint_parts ? p->fingerprint_parts : "";
        D->row.fingerprint = zri_xstrndup(fp, strlen(fp));
        D->row.fingerprint_parts = zri_xstrndup(fpp, strlen(fpp));
        D->row.mode = zri_xstrndup(D->self >= 0 ? "processes" : "single", D->self >= 0 ? 9 : 6);
        D->row.nlifelines = p->nlifelines;
        D->row.cwd = cwd ? cwd : zri_xstrndup(".", 1);
        D->row.executable = D->self >= 0 ? NULL : exe ? zri_xstrndup(exe, strlen(exe)) : NULL;
        D->row.options = zri_xstrndup(opts, strlen(opts));
    }
    if (zrd_store_begin(D->st, &D->row, nl, rows, nothers, others, &D->attempt, err, sizeof err) <
        0)
        status = err_exit(ZRD_EXIT_STORE, "%s", err);
    for (int i = 0; i < nothers; i++) free(other_exes[i]);
    free(other_exes);
    free(others);
    if (!status) {
        D->J = zrd_journal_new(D->st, p, D->row.rid, D->id, nl, lives, D->resume, err, sizeof err);
        if (!D->J) status = err_exit(ZRD_EXIT_STORE, "%s", err);
    }
    free(lives);
    free(rows);
    free(exe);
    free(opts);
    if (status) return status;
    D->R = R;
    zri_run_set_id(R, D->id);
    zri_journal j = zrd_journal_iface(D->J);
    zri_run_set_journal(R, &j);
    zri_run_set_tasks(R, zrd_task, D);
    *attempt = D->attempt;
    if (D->resume)
        zri_say("note", "resuming durable run %s (attempt %d)\n", D->id, D->attempt);
    else if (!o->run_id)
        zri_say("note", "durable run %s (store %s)\n", D->id, zrd_store_file(D->st));
    return 0;
}

int zrd_ended(zrd_run *D, int32_t l)
{
    if (!D || !D->resume || l < 0 || l >= D->p->nlifelines) return 0;
    char *status = NULL, *opts = NULL, err[300];
    int64_t pid = 0, start = 0;
    int r = zrd_store_lifeline(D->st, D->row.rid, l, &status, &pid, &start, &opts, err, sizeof err);
    int ended = r > 0 && status && strcmp(status, "done") == 0;
    free(status);
    free(opts);
    return ended;
}

void zrd_no_acks(zrd_run *D)
{
    if (D && D->J) zrd_journal_no_acks(D->J);
}

int zrd_go(zrd_run *D, const zrd_output *out)
{
    char err[512] = "";
    if (out) zrd_journal_output(D->J, out);
    if (zrd_journal_start(D->J, D->R, err, sizeof err) < 0) return err_exit(1, "%s", err);
    return 0;
}

/* ---- human tasks --------------------------------------------------------------- */

static int answer_json(const char *text, void **answer, char *err, size_t errlen)
{
    json_error_t je;
    json_t *a = json_loads(text, 0, &je);
    if (!json_is_object(a)) {
        json_decref(a);
        zri_err(err, errlen, "the answer in the run store is not a JSON object: %s", text);
        return -1;
    }
    *answer = a;
    return 0;
}

int zrd_task(void *user, const zri_task *t, volatile int *cancel, zri_waits_fn waits, void *waits_u,
             void **answer, char *err, size_t errlen)
{
    zrd_run *D = user;
    int64_t task = 0;
    char *text = NULL;
    int created = 0;
    if (zrd_store_task(D->st, D->row.rid, t, &task, &text, &created, err, errlen) < 0) return -1;
    if (text) {
        int rc = answer_json(text, answer, err, errlen);
        free(text);
        return rc;
    }
    int32_t l = -1;
    for (int32_t k = 0; k < D->p->nlifelines; k++)
        if (strcmp(D->p->lifelines[k], t->lifeline) == 0) l = k;
    char state[256];
    snprintf(state, sizeof state, "waits for human task %" PRId64 " (%s)", task, t->action);
    if (l >= 0 && zrd_store_state(D->st, D->row.rid, l, state, err, errlen) < 0) return -1;
    int file = zrd_store_is_file(D->st);
    zri_say("note",
            "run %s: lifeline %s waits for human task %" PRId64
            " (%s); answer with: zgc answer %s %" PRId64 " VALUE%s%s%s\n",
            D->id, t->lifeline, task, t->action, D->id, task,
            file ? "" : " --nats URL --journal nats:BUCKET (the run is in the ",
            file ? "" : zrd_store_file(D->st), file ? "" : ")");
    waits(waits_u, 1);
    int rc;
    for (;;) {
        int stop = 0;
        for (int i = 0; i < TASK_POLL_MS / 50 && !stop; i++) {
            if (cancel && *cancel) stop = 1;
            struct timespec ts = {0, 50000000L};
            if (!stop) nanosleep(&ts, NULL);
        }
        if (stop) {
            rc = 1;
            break;
        }
        char *run_status = NULL;
        if (zrd_store_task_poll(D->st, D->row.rid, task, &text, &run_status, err, errlen) < 0) {
            rc = -1;
            break;
        }
        int cancelled = run_status && strcmp(run_status, "cancelled") == 0;
        free(run_status);
        if (text) {
            rc = answer_json(text, answer, err, errlen);
            free(text);
            if (rc == 0 && l >= 0) zrd_store_state(D->st, D->row.rid, l, "running", err, errlen);
            break;
        }
        if (cancelled) {
            zri_err(err, errlen, "run %s was cancelled (zgc runs cancel)", D->id);
            rc = -1;
            break;
        }
    }
    waits(waits_u, 0);
    return rc;
}

/* ---- finish ------------------------------------------------------------------- */

int zrd_flush(zrd_run *D, const char *error)
{
    char err[1024] = "";
    int rc = zrd_journal_flush(D->J, err, sizeof err);
    /* nothing commits behind the caller's back any more: the trace may
     * close */
    zrd_journal_stop(D->J);
    if (rc < 0 || zrd_journal_failed(D->J)) {
        if (!err[0]) snprintf(err, sizeof err, "the run store failed");
        /* the run's own error says it already, unless it ended first */
        if (!error || !strstr(error, "run store")) zri_say("error", "%s\n", err);
        return ZRD_EXIT_STORE;
    }
    return 0;
}

int zrd_finish(zrd_run *D, zri_run *R, const char *result_json, const char *error, int status)
{
    const zgrt_program *p = D->p;
    char err[1024] = "";
    int flushed = zrd_flush(D, error);
    if (flushed) return flushed;
    char *cur = NULL;
    int cancelled = zrd_store_status(D->st, D->row.rid, &cur, err, sizeof err) == 0 && cur &&
                    strcmp(cur, "cancelled") == 0;
    free(cur);
    int nl = D->self >= 0 ? 1 : p->nlifelines;
    int32_t *lives = zri_xcalloc((size_t)nl, sizeof *lives);
    for (int i = 0; i < nl; i++) lives[i] = D->self >= 0 ? D->self : i;
    zrd_finish_info fi = {
        .nlifelines_all = p->nlifelines, .nresults = p->nresults, .result_tuple = p->result_tuple};
    int32_t *idx = NULL;
    char **texts = NULL;
    if (zri_run_waiting(R)) {
        fi.status = "waiting";
        fi.run_status = "waiting";
    } else if (error && cancelled) {
        fi.status = "cancelled";
        fi.state = "cancelled";
    } else if (error && zri_run_lost_peer(R)) {
        fi.status = "interrupted";
        fi.state = "interrupted: a peer process was lost";
        fi.error = error;
    } else if (error) {
        fi.status = "failed";
        fi.state = "failed";
        fi.error = error;
        fi.run_status = "failed";
    } else {
        fi.status = "done";
        fi.state = "ended";
        fi.run_status = "done";
        fi.result = result_json;
        if (D->self >= 0) {
            idx = zri_xcalloc((size_t)p->nresults + 1, sizeof *idx);
            texts = zri_xcalloc((size_t)p->nresults + 1, sizeof *texts);
            const zgrt_value *store = zri_run_store(R, D->self);
            for (int32_t k = 0; k < p->nresults; k++) {
                if (p->results[k].lifeline != D->self) continue;
                zri_buf b = {0};
                zri_buf_json_result(&b, p, &store[p->results[k].var]);
                idx[fi.nres] = k;
                texts[fi.nres++] = zri_buf_take(&b);
            }
            fi.res_index = idx;
            fi.res_text = texts;
        }
    }
    int rc = zrd_store_finish(D->st, D->row.rid, nl, lives, D->self >= 0, &fi, err, sizeof err);
    for (int i = 0; i < fi.nres; i++) free(texts[i]);
    free(texts);
    free(idx);
    free(lives);
    if (rc < 0) {
        zri_say("error", "%s\n", err);
        return ZRD_EXIT_STORE;
    }
    if (zri_run_waiting(R)) {
        zri_say("note",
                "run %s waits for human tasks (zgc tasks %s); resume it with zgc runs "
                "resume %s\n",
                D->id, D->id, D->id);
        return ZRD_EXIT_WAITING;
    }
    return status;
}

void zrd_close(zrd_run *D)
{
    if (!D) return;
    zrd_journal_free(D->J);
    zrd_store_close(D->st);
    zrd_runrow_free(&D->row);
    for (int i = 0; i < D->nstored; i++) free(D->stored[i]);
    free(D->stored);
    free(D);
}
