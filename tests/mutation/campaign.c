/* campaign.c — the mutation campaign of `zgc trace check` (oracle/):
 * the cases, their runs, the oracle's answers and main; the mutations are
 * in mutate.c, the arguments in proofs.c (campaign.h lists them).
 *
 * Real traces are recorded at test time: every case of cases.txt is built
 * with `zgc build` and run (in one process, as per-lifeline processes
 * whose traces are put together, or with `zgc run --processes`, which
 * merges them), its trace written by the runtime.  Each trace must pass
 * the oracle.  Then it is mutated, one change at a time, and every
 * mutant is checked in this process (zt_check, oracle.h):
 *
 *   field mutations, at every value of every line (recursively: stores,
 *   writes, values, vector clocks, results): another JSON type, another
 *   value (off by one, zero, negated, another name of the same kind:
 *   lifeline, variable, action, channel, construct tag, enum member,
 *   message id), the field deleted, a key renamed, added or duplicated,
 *   two fields swapped;
 *
 *   structural mutations: a line dropped, duplicated, swapped with the
 *   next one or moved; a message (send and receive) dropped, duplicated,
 *   or its values swapped with another message's; an event dropped or
 *   two consecutive events of a lifeline swapped with the indexes
 *   renumbered; a decision flipped with its control messages; the run
 *   stopped (the end line an error, or the trace cut after a line).
 *
 * A mutation that gives the original trace again (a value replaced by an
 * equal one, two equal fields swapped) or a trace already checked is not
 * counted.  A mutant the oracle rejects is what a checker must do.  A
 * mutant it accepts must be shown to describe a run that can really
 * happen, by one of these mechanically checked arguments, else the
 * campaign fails:
 *
 *   reordered    the same run: per lifeline the same start, events and
 *                retry lines in the same order, the same end lines; only
 *                lines of different lifelines are in another order, which
 *                the trace format leaves free (docs/runtime.md);
 *   stopped      the original run stopped at a consistent cut: the same
 *                starts, each lifeline's lines a prefix of the original's,
 *                every receive's send kept, and an error end wherever
 *                lines were cut (a --timeout or a failure elsewhere can
 *                stop a run at any consistent cut);
 *   diagnostics  the same run, only an "error" text (retry or end line) or
 *                a retry's "delay" differs: messages and waits that come
 *                from the model server, the options or the error, not from
 *                the workflow, and that oracle.h lists as unchecked (the
 *                runtime's own message templates would not write every
 *                such text: this class is the oracle's documented limit,
 *                reported apart);
 *   recorded     the same run, only an event's optional recorded texts
 *                differ: its raw "answer" (the model's reply text, the
 *                person's line or the scripted entry, which the oracle does
 *                not read back) changed or removed, or its "prompt",
 *                "question" or "coregion" removed (the trace format makes
 *                them optional; when present the oracle checks them); like
 *                diagnostics, the oracle's documented limit, reported apart;
 *   replayed     the values the oracle cannot recompute were changed: the
 *                workflow is run again with the inputs (--arg), the model's
 *                answers (a scripted model, failed attempts included), the
 *                human answers (--answers) and the C actions' results
 *                (extern_scripted.c) taken from the mutant, and the run's
 *                trace is the mutant's, as in "reordered" (a workflow with
 *                parallel regions is run with up to 40 --schedule seeds).
 *
 * Usage: campaign --zgc ZGC --root SRCDIR [--cases FILE] [--min N]
 *                 [--sample P] [--rounds R] [--seed S] [--keep] [-v]
 * --sample P checks each mutation with probability P (1.0: all);
 * --rounds R records every case R times, round r > 0 with --schedule r
 * (other interleavings, other traces); --seed S varies the moved lines
 * and the sample; --min N fails the campaign with fewer than N distinct
 * mutations checked; --keep keeps the work directory.
 * Exit status 0 when every accepted mutant is proven, 1 otherwise. */
#include "campaign.h"

/* ===================================================================== */
/* Small helpers                                                          */
/* ===================================================================== */

void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("campaign: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

char *xstrdup(const char *s)
{
    char *r = strdup(s);
    if (!r) die("out of memory");
    return r;
}

char *fmt(const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    char *r;
    if (vasprintf(&r, f, ap) < 0) die("out of memory");
    va_end(ap);
    return r;
}

char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 8192;
            buf = realloc(buf, cap);
            if (!buf) die("out of memory");
        }
        size_t k = fread(buf + n, 1, 4096, f);
        n += k;
        if (k < 4096) break;
    }
    fclose(f);
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}

/* A deterministic generator (splitmix64). */
static uint64_t rng_state;
uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* ===================================================================== */
/* Processes                                                              */
/* ===================================================================== */

void av_add(Argv *a, const char *s)
{
    if (a->n + 2 > a->cap) {
        a->cap = a->cap ? a->cap * 2 : 16;
        a->v = realloc(a->v, sizeof *a->v * (size_t)a->cap);
        if (!a->v) die("out of memory");
    }
    a->v[a->n++] = xstrdup(s);
    a->v[a->n] = NULL;
}

void av_free(Argv *a)
{
    for (int i = 0; i < a->n; i++) free(a->v[i]);
    free(a->v);
    *a = (Argv){0};
}

void run_options(const Argv *base, int schedule, Argv *out)
{
    for (int i = 0; i < base->n; i++) av_add(out, base->v[i]);
    av_add(out, "--timeout");
    av_add(out, "30");
    if (schedule > 0) {
        char *s = fmt("%d", schedule);
        av_add(out, "--schedule");
        av_add(out, s);
        free(s);
    }
}

/* Starts argv with stdout and stderr to files and env (NAME=VALUE or
 * NULL) set; returns the pid. */
static pid_t start(const Argv *a, const char *out, const char *err, const char *env)
{
    pid_t pid = fork();
    if (pid < 0) die("fork: %s", strerror(errno));
    if (pid == 0) {
        int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fi = open("/dev/null", O_RDONLY);
        if (fo < 0 || fe < 0 || fi < 0) _exit(126);
        dup2(fi, 0);
        dup2(fo, 1);
        dup2(fe, 2);
        if (env) putenv((char *)env);
        execv(a->v[0], a->v);
        _exit(127);
    }
    return pid;
}

/* Waits for pid at most until deadline (a CLOCK_MONOTONIC second);
 * kills it then.  Returns its exit status, or -1 (killed, a signal). */
static int wait_until(pid_t pid, double deadline)
{
    for (;;) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        if (r < 0 && errno != EINTR) return -1;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec + now.tv_nsec / 1e9 > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return -1;
        }
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

static double deadline_in(double s)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec + now.tv_nsec / 1e9 + s;
}

static int run(const Argv *a, const char *out, const char *err, const char *env)
{
    return wait_until(start(a, out, err, env), deadline_in(RUN_TIMEOUT_S));
}

/* ===================================================================== */
/* Cases                                                                  */
/* ===================================================================== */

Campaign K;

static void split_words(const char *s, Argv *out)
{
    char *copy = xstrdup(s), *save = NULL;
    for (char *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
        av_add(out, w);
    free(copy);
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r')) e--;
    *e = 0;
    return s;
}

/* "mode | workflow [C files] | run options" */
static void read_cases(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) die("cannot read %s: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        char *l = trim(line);
        if (!*l || *l == '#') continue;
        char *b1 = strchr(l, '|'), *b2 = b1 ? strchr(b1 + 1, '|') : NULL;
        if (!b2) die("%s: a case is `mode | workflow [C files] | run options`: %s", path, l);
        *b1 = *b2 = 0;
        K.cases = realloc(K.cases, sizeof *K.cases * (size_t)(K.ncases + 1));
        if (!K.cases) die("out of memory");
        Case *c = &K.cases[K.ncases];
        memset(c, 0, sizeof *c);
        c->no = ++K.ncases;
        c->mode = xstrdup(trim(l));
        Argv files = {0};
        split_words(trim(b1 + 1), &files);
        if (!files.n) die("%s: a case without a workflow", path);
        c->src = xstrdup(files.v[0]);
        for (int i = 1; i < files.n; i++) av_add(&c->cfiles, files.v[i]);
        av_free(&files);
        split_words(trim(b2 + 1), &c->args);
        c->text = fmt("%s | %s | %s", c->mode, c->src, trim(b2 + 1));
        if (strcmp(c->mode, "single") && strcmp(c->mode, "segments") && strcmp(c->mode, "merged"))
            die("%s: unknown mode `%s`", path, c->mode);
    }
    free(line);
    fclose(f);
}

static void load_case(Case *c)
{
    FILE *diag = stderr;
    c->model = zt_model_load(c->src, NULL, diag);
    if (!c->model) die("%s does not compile", c->src);
    if (!zc_init_file(&c->comp, zp_parse, c->src, diag) || !zc_run(&c->comp, ZC_CHECK))
        die("%s does not compile", c->src);
    const ZProgram *p = c->comp.prog;
    c->wf = c->comp.wf->name;
    c->nl = p->lifelines.len;
    c->lnames = calloc((size_t)c->nl, sizeof *c->lnames);
    for (int i = 0; i < c->nl; i++) c->lnames[i] = ((ZDecl *)ZU_VEC_AT(p->lifelines, i))->name;
    for (int i = 0; i < p->decls.len; i++) {
        const ZDecl *d = ZU_VEC_AT(p->decls, i);
        if (d->kind != D_ACTION) continue;
        if (d->action == ACT_LLM) c->has_llm = true;
        if (d->action == ACT_HUMAN) c->has_human = true;
        if (d->action == ACT_EXTERN_PURE || d->action == ACT_EFFECT) c->has_extern = true;
    }
}

const ZDecl *find_action(const Case *c, const char *name)
{
    const ZProgram *p = c->comp.prog;
    for (int i = 0; i < p->decls.len; i++) {
        const ZDecl *d = ZU_VEC_AT(p->decls, i);
        if (d->kind == D_ACTION && !strcmp(d->name, name)) return d;
    }
    return NULL;
}

/* ===================================================================== */
/* Building and running                                                   */
/* ===================================================================== */

/* The builds made so far, by workflow and C files: cases of one workflow
 * in several modes share theirs. */
static struct Built {
    char *key, *dir;
} * builds;
static int nbuilds;

/* zgc build SRC CFILES -o DIR; the directory. */
char *build(Case *c, const char *name, const Argv *cfiles)
{
    char *key = xstrdup(c->src);
    for (int i = 0; i < cfiles->n; i++) {
        char *k = fmt("%s %s", key, cfiles->v[i]);
        free(key);
        key = k;
    }
    for (int i = 0; i < nbuilds; i++)
        if (!strcmp(builds[i].key, key)) {
            free(key);
            return xstrdup(builds[i].dir);
        }
    char *dir = fmt("%s/%s", c->dir, name);
    builds = realloc(builds, sizeof *builds * (size_t)(nbuilds + 1));
    if (!builds) die("out of memory");
    builds[nbuilds++] = (struct Built){key, xstrdup(dir)};
    Argv a = {0};
    av_add(&a, K.zgc);
    av_add(&a, "build");
    av_add(&a, c->src);
    for (int i = 0; i < cfiles->n; i++) av_add(&a, cfiles->v[i]);
    av_add(&a, "-o");
    av_add(&a, dir);
    char *out = fmt("%s/build.out", c->dir), *err = fmt("%s/build.err", c->dir);
    int st = run(&a, out, err, NULL);
    if (st != 0) die("case %d: zgc build %s failed:\n%s", c->no, c->src, slurp(err, NULL));
    av_free(&a);
    free(out);
    free(err);
    return dir;
}

/* The trace file's lines (blank ones dropped) as an array of JSON values;
 * NULL when a line is not JSON. */
static json_t *read_trace(const char *path)
{
    size_t len;
    char *text = slurp(path, &len);
    if (!text) return NULL;
    json_t *arr = json_array();
    char *save = NULL;
    for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        if (!*trim(l)) continue;
        json_t *j = json_loads(l, JSON_ALLOW_NUL, NULL);
        if (!j) {
            json_decref(arr);
            free(text);
            return NULL;
        }
        json_array_append_new(arr, j);
    }
    free(text);
    return arr;
}

/* Runs the case in its mode with options args (after the case's own,
 * replaced where the replay gives its own), writing the trace to T;
 * returns the trace, or NULL (with the reason in *why) when the run left
 * none. */
json_t *record(Case *c, const char *exe_dir, const Argv *cfiles, const Argv *args, const char *env,
               const char *tag, char **why)
{
    char *t = fmt("%s/%s.jsonl", c->dir, tag);
    char *out = fmt("%s/%s.out", c->dir, tag), *err = fmt("%s/%s.err", c->dir, tag);
    unlink(t);
    json_t *trace = NULL;
    *why = NULL;
    if (!strcmp(c->mode, "single") || !strcmp(c->mode, "merged")) {
        Argv a = {0};
        if (!strcmp(c->mode, "single")) {
            char *exe = fmt("%s/%s", exe_dir, c->wf);
            av_add(&a, exe);
            free(exe);
        } else {
            av_add(&a, K.zgc);
            av_add(&a, "run");
            av_add(&a, "--processes");
            av_add(&a, c->src);
            for (int i = 0; i < cfiles->n; i++) av_add(&a, cfiles->v[i]);
        }
        for (int i = 0; i < args->n; i++) av_add(&a, args->v[i]);
        av_add(&a, "--trace");
        av_add(&a, t);
        run(&a, out, err, env);
        av_free(&a);
        trace = read_trace(t);
    } else {
        /* one process per lifeline over Unix sockets; their traces put
         * together in declaration order */
        char *sock = fmt("%s/sock-%s", c->dir, tag);
        mkdir(sock, 0700);
        /* the run's secret, which every lifeline must hold (--secret-file) */
        char *key = fmt("%s/run.key", sock);
        int kfd = open(key, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (kfd < 0 || write(kfd, "campaign-secret-0123456789abcdef", 32) != 32 || close(kfd) != 0)
            die("cannot write the secret %s: %s", key, strerror(errno));
        pid_t *pids = calloc((size_t)c->nl, sizeof *pids);
        for (int l = 0; l < c->nl; l++) {
            Argv a = {0};
            char *exe = fmt("%s/%s.%s", exe_dir, c->wf, c->lnames[l]);
            char *listen = fmt("unix:%s/%s", sock, c->lnames[l]);
            av_add(&a, exe);
            av_add(&a, "--listen");
            av_add(&a, listen);
            for (int p = 0; p < c->nl; p++) {
                if (p == l) continue;
                char *peer = fmt("%s=unix:%s/%s", c->lnames[p], sock, c->lnames[p]);
                av_add(&a, "--peer");
                av_add(&a, peer);
                free(peer);
            }
            av_add(&a, "--secret-file");
            av_add(&a, key);
            for (int i = 0; i < args->n; i++) av_add(&a, args->v[i]);
            av_add(&a, "--trace");
            av_add(&a, t);
            char *o = fmt("%s.%s", out, c->lnames[l]), *e = fmt("%s.%s", err, c->lnames[l]);
            pids[l] = start(&a, o, e, env);
            free(o);
            free(e);
            free(exe);
            free(listen);
            av_free(&a);
        }
        double dl = deadline_in(RUN_TIMEOUT_S);
        for (int l = 0; l < c->nl; l++) wait_until(pids[l], dl);
        free(pids);
        free(key);
        trace = json_array();
        for (int l = 0; l < c->nl && trace; l++) {
            char *tl = fmt("%s.%s", t, c->lnames[l]);
            json_t *part = read_trace(tl);
            if (!part) {
                json_decref(trace);
                trace = NULL;
            } else {
                json_array_extend(trace, part);
                json_decref(part);
            }
            unlink(tl);
            free(tl);
        }
        rmdir(sock);
        free(sock);
    }
    if (!trace) {
        char *e = slurp(err, NULL);
        *why = fmt("no trace; stderr: %s", e ? e : "");
        free(e);
    }
    free(t);
    free(out);
    free(err);
    return trace;
}

/* ===================================================================== */
/* Traces as text, the oracle                                             */
/* ===================================================================== */

/* The texts of the original's lines, by the line's address (mutants
 * share the lines they do not change): an open-addressing table. */
static const json_t **text_key;
static char **text_val;
static size_t text_cap;

static void texts_reset(const json_t *orig)
{
    for (size_t i = 0; i < text_cap; i++) free(text_val[i]);
    free(text_key);
    free(text_val);
    text_key = NULL, text_val = NULL, text_cap = 0;
    if (!orig) return;
    text_cap = 4 * json_array_size(orig) + 16;
    text_key = calloc(text_cap, sizeof *text_key);
    text_val = calloc(text_cap, sizeof *text_val);
    if (!text_key || !text_val) die("out of memory");
    for (size_t i = 0; i < json_array_size(orig); i++) {
        const json_t *l = json_array_get(orig, i);
        size_t h = ((uintptr_t)l >> 4) % text_cap;
        while (text_key[h]) h = (h + 1) % text_cap;
        text_key[h] = l;
        text_val[h] = json_dumps(l, JSON_COMPACT | JSON_ENCODE_ANY);
    }
}

static const char *cached_text(const json_t *l)
{
    if (!text_cap) return NULL;
    for (size_t h = ((uintptr_t)l >> 4) % text_cap; text_key[h]; h = (h + 1) % text_cap)
        if (text_key[h] == l) return text_val[h];
    return NULL;
}

char *trace_text(const json_t *lines)
{
    size_t n = json_array_size(lines), len = 0, cap = 1024;
    char *buf = malloc(cap);
    if (!buf) die("out of memory");
    for (size_t i = 0; i < n; i++) {
        const json_t *l = json_array_get(lines, i);
        const char *cached = cached_text(l);
        char *s = cached ? (char *)cached : json_dumps(l, JSON_COMPACT | JSON_ENCODE_ANY);
        if (!s) die("cannot print a line");
        size_t k = strlen(s);
        while (len + k + 2 > cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            if (!buf) die("out of memory");
        }
        memcpy(buf + len, s, k);
        len += k;
        buf[len++] = '\n';
        if (!cached) free(s);
    }
    buf[len] = 0;
    return buf;
}

/* 0 when the oracle accepts the trace; else 1 and its message in *msg. */
static int oracle(const Case *c, const json_t *lines, char **msg)
{
    char *text = trace_text(lines);
    int rc = zt_check(c->model, "mutant", text, strlen(text), msg, NULL);
    free(text);
    return rc;
}

/* ===================================================================== */
/* Checking one mutant                                                    */
/* ===================================================================== */

static void show_unproven(Case *c, const char *what, const json_t *mut, const char *why)
{
    c->unproven++;
    if (K.unproven_shown++ >= 20) return;
    fprintf(stderr, "UNPROVEN case %d (%s): %s\n", c->no, c->text, what);
    size_t n = json_array_size(mut), no = json_array_size(c->orig);
    for (size_t i = 0; i < (n > no ? n : no); i++) {
        json_t *a = i < no ? json_array_get(c->orig, i) : NULL;
        json_t *b = i < n ? json_array_get(mut, i) : NULL;
        if (a && b && json_equal(a, b)) continue;
        char *sa = a ? json_dumps(a, JSON_COMPACT) : NULL,
             *sb = b ? json_dumps(b, JSON_COMPACT) : NULL;
        fprintf(stderr, "  line %zu: original %s\n           mutant   %s\n", i + 1, sa ? sa : "-",
                sb ? sb : "-");
        free(sa);
        free(sb);
    }
    if (why) fprintf(stderr, "  %s\n", why);
}

/* The mutants of a case already checked (their texts' hashes): two
 * mutations that give the same trace count once. */
static uint64_t *seen_tab;
static size_t seen_cap, seen_n;

static bool seen_before(const char *text)
{
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    if (!h) h = 1;
    if ((seen_n + 1) * 2 > seen_cap) {
        size_t ncap = seen_cap ? seen_cap * 2 : 4096;
        uint64_t *nt = calloc(ncap, sizeof *nt);
        if (!nt) die("out of memory");
        for (size_t i = 0; i < seen_cap; i++)
            if (seen_tab[i]) {
                size_t j = seen_tab[i] % ncap;
                while (nt[j]) j = (j + 1) % ncap;
                nt[j] = seen_tab[i];
            }
        free(seen_tab);
        seen_tab = nt;
        seen_cap = ncap;
    }
    size_t j = h % seen_cap;
    for (; seen_tab[j]; j = (j + 1) % seen_cap)
        if (seen_tab[j] == h) return true;
    seen_tab[j] = h;
    seen_n++;
    return false;
}

static void seen_reset(void)
{
    free(seen_tab);
    seen_tab = NULL;
    seen_cap = seen_n = 0;
}

/* Checks mutant `mut` (consumed) of case c, described by `what`. */
void try_mutant(Case *c, json_t *mut, const char *what)
{
    if (K.sample < 1.0 && (double)(rnd() >> 11) / (double)(1ull << 53) >= K.sample) {
        json_decref(mut);
        return;
    }
    char *text = trace_text(mut);
    bool dup = seen_before(text);
    if (dup || same_lines(c->orig, mut)) {
        /* the same trace as another mutant, or as the original: not a
         * mutation */
        free(text);
        json_decref(mut);
        return;
    }
    c->checked++;
    char *msg = NULL;
    int rc = zt_check(c->model, "mutant", text, strlen(text), &msg, NULL);
    free(text);
    if (K.verbose) fprintf(stderr, "case %d %s: %s\n", c->no, what, rc ? msg : "accepted");
    free(msg);
    if (rc) {
        c->rejected++;
    } else if (same_run(c->orig, mut)) {
        c->reordered++;
    } else if (only_diagnostics(c->orig, mut)) {
        c->diagnostics++;
    } else if (only_recorded(c->orig, mut)) {
        c->recorded++;
    } else if (is_stopped(c->orig, mut)) {
        c->stopped++;
    } else {
        char *why = NULL;
        if (replays(c, mut, &why))
            c->replayed++;
        else
            show_unproven(c, what, mut, why);
        free(why);
    }
    json_decref(mut);
}

/* ===================================================================== */
/* Main                                                                   */
/* ===================================================================== */

/* The work directory, removed at exit (also after die()) unless --keep. */
static char *work_dir;

static void remove_work(void)
{
    if (!work_dir) return;
    Argv a = {0};
    av_add(&a, "/bin/rm");
    av_add(&a, "-rf");
    av_add(&a, work_dir);
    if (run(&a, "/dev/null", "/dev/null", NULL) != 0)
        fprintf(stderr, "campaign: cannot remove %s\n", work_dir);
    av_free(&a);
}

static void usage(void)
{
    fputs("usage: campaign --zgc ZGC --root SRCDIR [--cases FILE] [--min N] [--sample P]\n"
          "                [--rounds R] [--seed S] [--keep] [-v]\n",
          stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    const char *cases = NULL;
    long min = 0;
    unsigned long seed = 1;
    bool keep = false;
    int rounds = 1;
    K.sample = 1.0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--zgc") && v)
            K.zgc = argv[++i];
        else if (!strcmp(a, "--root") && v)
            K.root = argv[++i];
        else if (!strcmp(a, "--cases") && v)
            cases = argv[++i];
        else if (!strcmp(a, "--min") && v)
            min = atol(argv[++i]);
        else if (!strcmp(a, "--sample") && v)
            K.sample = atof(argv[++i]);
        else if (!strcmp(a, "--seed") && v)
            seed = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(a, "--rounds") && v)
            rounds = atoi(argv[++i]);
        else if (!strcmp(a, "--keep"))
            keep = true;
        else if (!strcmp(a, "-v"))
            K.verbose = true;
        else
            usage();
    }
    if (!K.zgc || !K.root) usage();
    char *zgc_abs = realpath(K.zgc, NULL);
    if (!zgc_abs) die("%s: %s", K.zgc, strerror(errno));
    K.zgc = zgc_abs;
    if (chdir(K.root) != 0) die("cd %s: %s", K.root, strerror(errno));
    read_cases(cases ? cases : "tests/mutation/cases.txt");
    const char *tmp = getenv("TMPDIR");
    char *work = fmt("%s/zgc-mutation-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(work)) die("mkdtemp: %s", strerror(errno));
    if (!keep) {
        work_dir = work;
        atexit(remove_work);
    }
    K.work = work;
    json_set_alloc_funcs(zu_xmalloc, free);

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int status = 0;
    long total = 0, rejected = 0, reordered = 0, stopped = 0, diagnostics = 0, recorded = 0,
         replayed = 0, unproven = 0;
    int ntraces = 0;
    for (int round = 0; round < rounds; round++)
        for (int k = 0; k < K.ncases; k++) {
            Case *c = &K.cases[k];
            if (round == 0) {
                c->dir = fmt("%s/case%d", work, c->no);
                mkdir(c->dir, 0755);
                load_case(c);
                c->exe = build(c, "build", &c->cfiles);
            }
            /* round r > 0: another interleaving (--schedule r) */
            Argv args = {0};
            run_options(&c->args, round, &args);
            char *why = NULL;
            json_decref(c->orig);
            c->orig = record(c, c->exe, &c->cfiles, &args, NULL, "original", &why);
            av_free(&args);
            if (!c->orig) die("case %d (%s): %s", c->no, c->text, why);
            ntraces++;
            char *msg = NULL;
            if (oracle(c, c->orig, &msg) != 0) {
                fprintf(stderr, "FAIL case %d (%s): the oracle rejects the real trace: %s\n", c->no,
                        c->text, msg);
                status = 1;
                free(msg);
                continue;
            }
            long before[8] = {c->checked,     c->rejected, c->reordered, c->stopped,
                              c->diagnostics, c->recorded, c->replayed,  c->unproven};
            rng_state = seed * 1000003u + (uint64_t)c->no * 7919u + (uint64_t)round;
            seen_reset();
            texts_reset(c->orig);
            mutate_case(c);
            texts_reset(NULL);
            printf("case %2d %-58.58s %6ld mutations, %6ld rejected; accepted: %ld reordered, "
                   "%ld stopped, %ld diagnostics, %ld recorded, %ld replayed, %ld UNPROVEN\n",
                   c->no, c->text, c->checked - before[0], c->rejected - before[1],
                   c->reordered - before[2], c->stopped - before[3], c->diagnostics - before[4],
                   c->recorded - before[5], c->replayed - before[6], c->unproven - before[7]);
            fflush(stdout);
        }
    for (int k = 0; k < K.ncases; k++) {
        Case *c = &K.cases[k];
        total += c->checked;
        rejected += c->rejected;
        reordered += c->reordered;
        stopped += c->stopped;
        diagnostics += c->diagnostics;
        recorded += c->recorded;
        replayed += c->replayed;
        unproven += c->unproven;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("mutation campaign: %d traces, %ld distinct mutations in %.1f s: %ld rejected; "
           "accepted: %ld reordered, %ld stopped, %ld diagnostics, %ld recorded, %ld replayed, %ld "
           "unproven\n",
           ntraces, total, secs, rejected, reordered, stopped, diagnostics, recorded, replayed,
           unproven);
    if (unproven) {
        fprintf(stderr, "FAIL: %ld accepted mutations are not shown to be runs that can happen\n",
                unproven);
        status = 1;
    }
    if (total < min) {
        fprintf(stderr, "FAIL: %ld mutations checked, fewer than %ld\n", total, min);
        status = 1;
    }
    if (keep) printf("(files in %s)\n", work);
    return status;
}
