/* cli.c — `zgc trace …`: the command line of the trace checker.  Errors
 * follow oracle.h: bad usage exits 2 with the usage; an unreadable file,
 * errors in the workflow or a trace that disagrees exit 1 with the cause
 * on stderr. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "suggest.h"

static const char usage_trace[] =
    "usage: zgc trace check [--workflow NAME] [-q] FILE.zg TRACE.jsonl...\n"
    "\n"
    "Checks run traces (written with --trace) against the workflow, with code\n"
    "of its own that shares nothing with the runtime. It rebuilds the message\n"
    "sequence chart from each trace and checks: the form and place of every\n"
    "line; every value's declared type; the start stores against the declared\n"
    "defaults and inputs; every receive matches a send with equal values, FIFO\n"
    "per channel, an acyclic causal order, every vector clock against\n"
    "causal-order counts computed by reachability; erasure equivalence (each\n"
    "lifeline's events, control messages deleted, are the global workflow's\n"
    "for the recorded decisions; the control messages are where projection\n"
    "puts them); the values sent, received and computed; the attempts against\n"
    "the retry lines and the actions' retries; every guard at its choice event\n"
    "(CPL guards by Definition 3 on the chart) against the recorded decision;\n"
    "and the result. Values no checker can recompute (llm, human, extern pure\n"
    "and effect results) are type-checked and counted as unverified.\n"
    "Per-lifeline traces (FILE.<Lifeline>) may be given concatenated into one\n"
    "file.\n"
    "\n"
    "  --workflow NAME   the workflow (default: the only or the last one)\n"
    "  -q, --quiet       print nothing for traces that pass\n"
    "  -h, --help        show this help\n"
    "\n"
    "The first disagreement is reported as TRACE:LINE: lifeline L event i: ...\n"
    "with both values.\n"
    "\n"
    "exit status: 0 every trace passes, 1 a disagreement (or errors in FILE.zg),\n"
    "2 bad usage.\n";

int zt_main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fputs(usage_trace, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "check")) {
        fprintf(stderr, "zgc: unknown trace command `%s`\n%s", argv[1], usage_trace);
        return 2;
    }
    const char *workflow = NULL, *file = NULL;
    bool quiet = false;
    const char **traces = zu_xcalloc((size_t)argc + 1, sizeof *traces);
    int ntraces = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage_trace, stdout);
            free(traces);
            return 0;
        } else if (!strcmp(a, "--workflow")) {
            if (++i >= argc) {
                fputs("zgc: error: --workflow needs a workflow name\n(see `zgc trace --help`)\n",
                      stderr);
                free(traces);
                return 2;
            }
            workflow = argv[i];
        } else if (!strncmp(a, "--workflow=", 11)) {
            workflow = a + 11;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = true;
        } else if (a[0] == '-' && a[1]) {
            ZvSuggest sg;
            zv_suggest_init_until(&sg, a, "=");
            zv_suggest_try(&sg, "--workflow");
            zv_suggest_try(&sg, "--quiet");
            fprintf(stderr, "zgc: error: unknown option `%s`", a);
            if (sg.best) fprintf(stderr, "; did you mean `%s`?", sg.best);
            fputs("\n(see `zgc trace --help`)\n", stderr);
            free(traces);
            return 2;
        } else if (!file) {
            file = a;
        } else {
            traces[ntraces++] = a;
        }
    }
    if (!file || !ntraces) {
        fprintf(stderr, "zgc: error: %s\n(see `zgc trace --help`)\n",
                !file ? "no workflow file" : "no trace file");
        free(traces);
        return 2;
    }
    /* jansson's allocations too end in zu_oom when memory runs out */
    json_set_alloc_funcs(zu_xmalloc, free);
    ZtModel *m = zt_model_load(file, workflow, stderr);
    if (!m) {
        free(traces);
        return 1;
    }
    int status = 0;
    for (int t = 0; t < ntraces; t++) {
        const char *err;
        size_t len;
        char *text = zu_read_file(traces[t], &len, &err);
        if (!text) {
            fprintf(stderr, "zgc: error: cannot read %s: %s\n", traces[t], err);
            status = 1;
            continue;
        }
        char *msg = NULL;
        ZtStats st;
        if (zt_check(m, traces[t], text, len, &msg, &st) != 0) {
            fprintf(stderr, "zgc: trace check failed: %s\n", msg);
            status = 1;
        } else if (!quiet) {
            printf("%s: ok: %ld events, %ld messages, %ld choices, %ld CPL and %ld plain guards "
                   "checked, "
                   "%ld values recomputed, %ld unverified\n",
                   traces[t], st.events, st.messages, st.choices, st.cpl_checked, st.plain_checked,
                   st.values, st.unverified);
        }
        free(msg);
        free(text);
    }
    zt_model_free(m);
    free(traces);
    return status;
}
