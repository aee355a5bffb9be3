/* cli.c — `zgc anomalies PATH... [options]`. */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char usage[] =
    "usage: zgc anomalies [options] PATH...\n"
    "\n"
    "Checks operation histories for the concurrency anomalies A1 (stale-generation),\n"
    "A2 (phantom-tool), A3 (causal-cascade) and A6 (tool-effect reordering) and\n"
    "reports the level L0..L4 of each history (L1 = no A1, L2 = also no A3,\n"
    "L3 = also no A6, L4 = also no A2).\n"
    "\n"
    "PATH is a JSON Lines history (one operation record per line) or a directory,\n"
    "searched recursively for *.jsonl files, each one history.  For a directory or\n"
    "several paths a summary table follows the per-history reports.\n"
    "\n"
    "options:\n"
    "  --json             print one JSON object instead of text\n"
    "  --a3=auto          A3 by the precise cascade predicate (Definition 3) when a\n"
    "                     record carries `preds`, else by the flat residue (default)\n"
    "  --a3=precise       always the precise predicate (needs preds/aborted)\n"
    "  --a3=residue       always the residue over-approximation\n"
    "  --a1-same-agent    A1 also counts writes by the reader's own agent, as the\n"
    "                     published Rust detect_a1 does\n"
    "  --a6-any-diff      A6 fires on any non-empty io with co != io, as the\n"
    "                     published Rust detect_a6 does\n"
    "  -h, --help         print this help\n"
    "\n"
    "exit status: 0 checked (anomalies or not), 1 unreadable or malformed input,\n"
    "2 bad usage.  See docs/anomalies.md.\n";

typedef struct {
    char **v;
    size_t n, cap;
} path_list;

static void add_path(path_list *l, const char *p)
{
    zgan_grow((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v);
    size_t n = strlen(p);
    l->v[l->n] = zgan_xmalloc(n + 1);
    memcpy(l->v[l->n++], p, n + 1);
}

static void free_paths(path_list *l)
{
    for (size_t i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_jsonl(const char *name)
{
    size_t n = strlen(name);
    return n > 6 && strcmp(name + n - 6, ".jsonl") == 0;
}

/* Adds the *.jsonl files under dir (sorted, recursively; symbolic links to
 * directories are not followed). */
static int walk(const char *dir, path_list *out, FILE *err)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(err, "%s: error: cannot open directory: %s\n", dir, strerror(errno));
        return -1;
    }
    path_list names = {0};
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) add_path(&names, e->d_name);
    closedir(d);
    if (names.n) qsort(names.v, names.n, sizeof *names.v, cmp_str);

    int rc = 0;
    for (size_t i = 0; i < names.n && rc == 0; i++) {
        size_t len = strlen(dir) + strlen(names.v[i]) + 2;
        char *p = zgan_xmalloc(len);
        bool slash = dir[0] && dir[strlen(dir) - 1] == '/';
        snprintf(p, len, "%s%s%s", dir, slash ? "" : "/", names.v[i]);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            rc = walk(p, out, err);
        else if (is_jsonl(names.v[i]) && stat(p, &st) == 0 && S_ISREG(st.st_mode))
            add_path(out, p);
        free(p);
    }
    free_paths(&names);
    return rc;
}

static int bad_usage(FILE *err, const char *fmt, const char *arg)
{
    fputs("zgc anomalies: error: ", err);
    fprintf(err, fmt, arg);
    fputs("\n(see zgc anomalies --help)\n", err);
    return 2;
}

static int parse_a3(const char *s, zgan_a3_mode *m)
{
    if (!strcmp(s, "auto"))
        *m = ZGAN_A3_AUTO;
    else if (!strcmp(s, "precise"))
        *m = ZGAN_A3_PRECISE;
    else if (!strcmp(s, "residue"))
        *m = ZGAN_A3_RESIDUE;
    else
        return -1;
    return 0;
}

/* Reads, checks and reports every history; returns the exit status.  With
 * --json the file objects are written into memory as they come, and the
 * document around them at the end (the summary comes first). */
static int check_all(const path_list *files, const zgan_options *opt, bool json, bool summary,
                     FILE *out, FILE *err)
{
    zgan_summary sum = {0};
    char *jbuf = NULL;
    size_t jlen = 0;
    FILE *jf = NULL;
    if (json && !(jf = open_memstream(&jbuf, &jlen))) {
        fprintf(err, "zgc anomalies: error: %s\n", strerror(errno));
        return 1;
    }
    char msg[1024];
    int status = 0;
    for (size_t i = 0; i < files->n && status == 0; i++) {
        zgan_history *h;
        if (zgan_read_file(files->v[i], &h, msg, sizeof msg) < 0) {
            fprintf(err, "%s\n", msg);
            status = 1;
            break;
        }
        zgan_report r;
        zgan_detect(h, opt, &r);
        zgan_summary_add(&sum, &r);
        if (json) {
            fputs(i ? ",\n    " : "\n    ", jf);
            zgan_write_file_json(jf, h, &r, 2);
        } else {
            zgan_print_text(out, h, &r);
        }
        zgan_report_free(&r);
        zgan_history_free(h);
    }
    if (json) {
        if (fclose(jf) != 0 && status == 0) {
            fprintf(err, "zgc anomalies: error: %s\n", strerror(errno));
            status = 1;
        }
        if (status == 0) {
            zgan_write_summary_json(out, &sum, jbuf, files->n, jlen);
            fputc('\n', out);
        }
        free(jbuf);
    } else if (status == 0 && summary) {
        zgan_print_summary(out, &sum);
    }
    return status;
}

int zgan_run(int argc, char **argv, FILE *out, FILE *err)
{
    zgan_options opt = {.a3 = ZGAN_A3_AUTO};
    bool json = false, only_paths = false;
    path_list args = {0};
    int status = 0;
    for (int i = 1; i < argc && status == 0; i++) {
        const char *a = argv[i];
        if (only_paths || a[0] != '-' || !strcmp(a, "-")) {
            add_path(&args, a);
        } else if (!strcmp(a, "--")) {
            only_paths = true;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, out);
            free_paths(&args);
            return 0;
        } else if (!strcmp(a, "--json")) {
            json = true;
        } else if (!strcmp(a, "--a1-same-agent")) {
            opt.a1_same_agent = true;
        } else if (!strcmp(a, "--a6-any-diff")) {
            opt.a6_any_diff = true;
        } else if (!strncmp(a, "--a3=", 5)) {
            if (parse_a3(a + 5, &opt.a3) < 0)
                status = bad_usage(err, "--a3 takes auto, precise or residue, not '%s'", a + 5);
        } else if (!strcmp(a, "--a3")) {
            if (i + 1 >= argc || parse_a3(argv[i + 1], &opt.a3) < 0)
                status = bad_usage(err, "%s takes auto, precise or residue", a);
            i++;
        } else {
            status = bad_usage(err, "unknown option '%s'", a);
        }
    }
    if (status == 0 && args.n == 0) status = bad_usage(err, "%s", "no PATH given");
    if (status) {
        free_paths(&args);
        return status;
    }

    path_list files = {0};
    bool summary = args.n > 1;
    for (size_t i = 0; i < args.n && status == 0; i++) {
        struct stat st;
        if (stat(args.v[i], &st) != 0) {
            fprintf(err, "%s: error: cannot open: %s\n", args.v[i], strerror(errno));
            status = 1;
        } else if (S_ISDIR(st.st_mode)) {
            summary = true;
            size_t before = files.n;
            if (walk(args.v[i], &files, err) < 0)
                status = 1;
            else if (files.n == before)
                fprintf(err, "%s: warning: no *.jsonl files in this directory\n", args.v[i]);
        } else {
            add_path(&files, args.v[i]);
        }
    }
    if (status == 0) status = check_all(&files, &opt, json, summary, out, err);
    free_paths(&files);
    free_paths(&args);
    return status;
}

int zgan_main(int argc, char **argv)
{
    int status = zgan_run(argc, argv, stdout, stderr);
    if (fflush(stdout) != 0 && status == 0) status = 1;
    return status;
}
