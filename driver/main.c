/* main.c — the zgc driver: the command line.
 *
 * Every subcommand compiles through the one pipeline (compiler/pipeline.c:
 * parse, resolve, select the workflow, check, project, enumerate guards),
 * stopped after the pass whose output it prints; `build`, `run` and
 * `emit-llvm` go on with the backend (codegen, emit, link: backend/),
 * `run` then starts the executables (launch.c), `trace check` hands over to
 * the oracle, `anomalies` to the anomaly detectors, `view` and `trace
 * show` to the viewer, `fmt` to the formatter and `lsp` to the language
 * server.
 *
 * Errors: every failure ends in a non-zero exit status with its cause on
 * stderr.  Exit 2: bad usage ("zgc: MESSAGE" and the command's usage).
 * Exit 1: errors in the input (the compiler's diagnostics, FILE:LINE:COL)
 * or in the run (the runtime's message), an unreadable file, a failed
 * link.  Out of memory: zu_oom ("zgc: error: out of memory", exit 1).
 * A bug in zgc: ZU_ICE (abort). */
#define _GNU_SOURCE
#include "zgc.h"

#include <stdlib.h>
#include <string.h>

#include <errno.h>
#include <ftw.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "anomalies.h"
#include "backend.h"
#include "fmt.h"
#include "lsp.h"
#include "zgc_build_id.h"
#include "grammar.h"
#include "oracle.h"
#include "outdir.h"
#include "paths.h"
#include "suggest.h"
#include "usage.h"
#include "viewer.h"
#include "racetable.h"
#include "runsmod.h"

#define ZGC_VERSION "0.1.0"

typedef struct Options {
    const char *file;
    /* zgc check: every file given (file is the first); NULL elsewhere */
    const char **files;
    int nfiles;
    const char *workflow;
    const char *lifeline;
    bool tokens, ast;
    bool global, written; /* zgc project --global [--unexpanded] */
    bool strict;          /* zgc check --strict */
} Options;

/* ---- usage texts -------------------------------------------------------- */

static const char usage_main[] =
    "usage: zgc <command> [options] FILE.zg\n"
    "\n"
    "Compiles ZipperGen workflows (.zg): global multi-agent workflows projected\n"
    "to one local program per lifeline.\n"
    "\n"
    "commands:\n"
    "  check      report diagnostics; exit 0 when the file is clean\n"
    "  project    print the projected local program of every lifeline\n"
    "  guards     print the CPL guard tables: sub(Φ), Vars(Φ), per-lifeline monitors;\n"
    "             with --plan, the monitor plan the executables run\n"
    "  build      compile to native executables (all lifelines, and one per lifeline)\n"
    "  run        build and run a workflow (in one process, or one per lifeline)\n"
    "  emit-llvm  print the LLVM IR of the all-in-one executable\n"
    "  parse      print the tokens (--tokens) or the syntax tree (--ast)\n"
    "  anomalies  detect shared-state anomalies in operation histories\n"
    "  trace      check run traces against the workflow (trace check FILE.zg TRACE),\n"
    "             or list a trace as a table (trace show TRACE)\n"
    "  view       draw a run's trace or a workflow as a message sequence chart (HTML)\n"
    "  fmt        format .zg sources in the canonical layout (or --check them)\n"
    "  lsp        the language server for editors (LSP over stdin and stdout)\n"
    "  runs       durable runs: list, show, cancel, gc, resume\n"
    "  tasks      the pending human tasks of durable runs\n"
    "  answer     answer a human task of a durable run (answer RUN TASK VALUE)\n"
    "  cache      the cache of builds of zgc run: cache dir, cache clean\n"
    "  help CMD   show the help of a command\n"
    "\n"
    "options:\n"
    "  -I DIR         look for imported files in DIR too (every command that reads\n"
    "                 a .zg file; after the importing file's directory, before stdlib/)\n"
    "  -Wno-NAME, -WNAME, -Werror\n"
    "                 turn a warning off or on, or make warnings errors (every\n"
    "                 command that compiles; zgc help warnings lists them)\n"
    "  -h, --help     show this help (or a command's, after the command)\n"
    "  --version      print the version\n"
    "\n"
    "exit status: 0 success, 1 errors in the input, 2 bad usage.\n"
    "See docs/zgc.md for the full manual.\n";

static const char usage_check[] =
    "usage: zgc check [--workflow NAME] [--strict] [-W…] FILE.zg...\n"
    "\n"
    "Parses, resolves and type-checks each FILE.zg (each a program of its\n"
    "own) and reports every error as FILE:LINE:COL: error: MESSAGE, with the\n"
    "source line and notes, then the warnings (zgc help warnings).\n"
    "Without --workflow every workflow in the file is checked.\n"
    "\n"
    "  --workflow NAME   check only the declarations and this workflow\n"
    "  --strict          a store declared below the consistency level its racing\n"
    "                    operations need is an error (a warning otherwise)\n"
    "  -h, --help        show this help\n"
    "\n"
    "exit status: 0 no errors (warnings allowed, unless -Werror), 1 errors,\n"
    "2 bad usage.\n";

static const char usage_project[] =
    "usage: zgc project [--workflow NAME] [--lifeline L | --global [--unexpanded]] FILE.zg\n"
    "\n"
    "Checks FILE.zg and prints the local program of each lifeline (language\n"
    "reference §7): sends, receives, actions, control broadcasts (send-ctl /\n"
    "recv-ctl with construct tags such as if#3), recv-any for coregions and\n"
    "parallel branches with their channel namespaces.\n"
    "\n"
    "  --workflow NAME   the workflow to project (default: the only or the last one)\n"
    "  --lifeline L      print only lifeline L\n"
    "  --global          print the global workflow instead, its fragment uses\n"
    "                    expanded (language reference §3.3), after the variables\n"
    "                    the expansions made\n"
    "  --unexpanded      with --global: the workflow as written\n"
    "  -h, --help        show this help\n"
    "\n"
    "exit status: 0 success, 1 errors in the input, 2 bad usage.\n";

static const char usage_guards[] =
    "usage: zgc guards [--workflow NAME] [--plan] FILE.zg\n"
    "\n"
    "Checks FILE.zg and prints, for every if/while guard, its owner and its\n"
    "unfolded primitive CPL form; the subformulas sub(Φ) in bottom-up order;\n"
    "Vars(Φ); per lifeline the subformulas it evaluates, the views it keeps\n"
    "and exports, and the bytes its monitor state takes at run time; and per\n"
    "pair of lifelines that exchange messages the metadata bytes each of\n"
    "those messages carries (with --trace: the full vector clock instead).\n"
    "With --plan it prints instead the monitor plan the built program runs:\n"
    "per lifeline its eval function and every clock entry, view and variable\n"
    "view it keeps, and per edge every entry a message carries, with the\n"
    "positions the sender takes it from and the receiver puts it in.\n"
    "\n"
    "  --workflow NAME   the workflow (default: the only or the last one)\n"
    "  --plan            print the monitor plan\n"
    "  -h, --help        show this help\n"
    "\n"
    "exit status: 0 success, 1 errors in the input, 2 bad usage.\n";

static const char usage_parse[] =
    "usage: zgc parse (--tokens | --ast) FILE.zg\n"
    "\n"
    "Prints an intermediate form of the front end:\n"
    "  --tokens   one token per line with its span (line:col-line:col)\n"
    "  --ast      the syntax tree, after name resolution when it succeeds\n"
    "  -h, --help show this help\n"
    "\n"
    "exit status: 0 success, 1 errors in the input, 2 bad usage.\n";

static const char usage_build[] =
    "usage: zgc build [--workflow NAME] [-o DIR] [-O|-O0|-O1|-O2|-O3] [-g] [-j N]\n"
    "                 [--keep-objects] [--allow-unlinked] [-v] FILE.zg [C files...]\n"
    "\n"
    "Compiles the workflow to native code through LLVM and links it with the\n"
    "runtime library:\n"
    "  DIR/<workflow>              every lifeline in one process\n"
    "  DIR/<workflow>.<Lifeline>   one lifeline, talking to its peers over sockets\n"
    "                              (--listen, --peer, --secret-file) or a NATS\n"
    "                              server (--nats, --run); a copy of DIR/<workflow>\n"
    "                              that runs only that lifeline, also when renamed\n"
    "C files define the `extern pure` and `effect` actions (zg_<name>, see\n"
    "runtime/zgrt.h). The executables take the run options of `zgc run`.\n"
    "\n"
    "  -o DIR            output directory (default: ./<workflow>); a file zgc build\n"
    "                    did not make is never overwritten\n"
    "  --workflow NAME   the workflow (default: the only or the last one)\n"
    "  -O0 .. -O3        optimisation level (default -O0: the fastest to build;\n"
    "                    -O is -O2)\n"
    "  -g                keep the runtime library's debugging information in the\n"
    "                    executables and compile the C files with -g (without it\n"
    "                    the link drops it: faster, half the size; symbols stay)\n"
    "  -j N              compile modules and link on N threads (default: the cores)\n"
    "  --keep-objects    keep the object files in DIR\n"
    "  --allow-unlinked  build even when an extern pure or effect action has no\n"
    "                    C function (it fails when it runs); refused otherwise\n"
    "  -v                print the commands run\n"
    "  -h, --help        show this help\n"
    "\n"
    "exit status: 0 success, 1 errors, 2 bad usage.\n";

static const char usage_run_head[] =
    "usage: zgc run [--workflow NAME] [--processes] [-O|-O0|-O1|-O2|-O3]\n"
    "               [--allow-unlinked] FILE.zg [C files...] [run options]\n"
    "\n"
    "Builds the workflow into the cache of builds ($ZGC_CACHE, else\n"
    "$XDG_CACHE_HOME/zgc or ~/.cache/zgc; see zgc cache) and runs it: a\n"
    "program run before, with the same C files, -O level, runtime and zgc,\n"
    "is not compiled again. Only what runs is linked. Prints the\n"
    "result as JSON on stdout (a tuple as an array). With --processes every\n"
    "lifeline runs in its own process, connected by Unix sockets and\n"
    "authenticated with a secret made for the run; a failed run prints the\n"
    "error that occurred first.\n"
    "A durable run (--durable) is journaled in a run store, so that it can be\n"
    "resumed after a crash (zgc runs resume RUN, or zgc run FILE.zg --resume\n"
    "RUN, which builds the program again if its cached build is gone).\n"
    "\n"
    "  --workflow NAME         the workflow (default: the only or the last one)\n"
    "  --processes             one process per lifeline\n"
    "  -O0 .. -O3              optimisation level (default -O0: the fastest to build;\n"
    "                          -O is -O2)\n"
    "  --allow-unlinked        run even when an extern pure or effect action has no C\n"
    "                          function (it fails when it runs); refused otherwise\n"
    "  -h, --help              show this help\n"
    "\n"
    "run options (also taken by the built executables):\n";
static const char usage_run_tail[] =
    "\n"
    "exit status: 0 success, 1 compile or run-time error, 2 bad usage; durable\n"
    "runs: 3 stopped to wait for human tasks (--exit-when-waiting), 4 the run\n"
    "store failed.\n";

/* The usage of `zgc run`: its run options come from vocab/vocab.h, as do
 * those the built executables print. */
static const char *usage_run(void)
{
    static char *text;
    if (!text) {
        size_t len;
        FILE *f = open_memstream(&text, &len);
        if (!f) zu_oom();
        fputs(usage_run_head, f);
        zv_print_options(f, ZV_RUN, 26);
        fputs(usage_run_tail, f);
        if (fclose(f) != 0) zu_oom();
    }
    return text;
}

static const char usage_emit_llvm[] =
    "usage: zgc emit-llvm [--workflow NAME] FILE.zg\n"
    "\n"
    "Prints the LLVM IR of the all-in-one executable: one function per\n"
    "lifeline, the monitor's evaluation functions, pure actions, the program\n"
    "descriptor and main.\n"
    "\n"
    "exit status: 0 success, 1 errors in the input, 2 bad usage.\n";

static const char usage_view[] =
    "usage: zgc view [-o PAGE.html] [--source FILE.zg [--workflow NAME]] TRACE.jsonl\n"
    "       zgc view [-o PAGE.html] [--workflow NAME] [--lifeline L] FILE.zg\n"
    "\n"
    "Draws a message sequence chart as one self-contained HTML page (inline SVG,\n"
    "style and script; it loads nothing from the network).\n"
    "\n"
    "A run's trace (written with --trace): one column per lifeline, each event\n"
    "on a row below the events it causally depends on (a receive is never above\n"
    "its send); messages as labelled arrows (click for the whole values), control\n"
    "messages dashed (they can be hidden), actions as boxes (click for their\n"
    "outputs, and for llm and human actions the prompt, the raw answer or the\n"
    "question and answer when the trace has them, and failed attempts),\n"
    "decisions, parallel branches and coregions shaded, the run's error marked.\n"
    "Zoom (Ctrl+wheel, + and -), pan (drag), search (Enter: next match) and a\n"
    "lifeline filter.  Only the rows in view are drawn, so traces of 100,000\n"
    "events open at once; the page is about as large as the trace.\n"
    "\n"
    "With --source FILE.zg (the run's workflow), a decision also shows its\n"
    "owner, its guard as written and, for a CPL guard, its unfolded form.\n"
    "\n"
    "A workflow (FILE.zg): its messages, actions, if/while frames with their\n"
    "owners and guards, parallel and coregion frames; with --lifeline L the\n"
    "projected local program of L.\n"
    "\n"
    "  -o PAGE.html      where to write the page (default: the input's name with\n"
    "                    .html instead of its extension; - for stdout)\n"
    "  --workflow NAME   the workflow (default: the only or the last one)\n"
    "  --lifeline L      draw the local program of lifeline L\n"
    "  --source FILE.zg  the workflow of the trace, for its decisions' guards\n"
    "  -h, --help        show this help\n"
    "\n"
    "A malformed trace is an error naming its file and line.  Live runs:\n"
    "`zgc run --view` and built executables' --view serve the same page.\n"
    "\n"
    "exit status: 0 success, 1 errors in the input, 2 bad usage.\n";

static const char usage_trace_show[] =
    "usage: zgc trace show [--by-lifeline] [--lifeline L] [--width N] [--no-color]\n"
    "                      TRACE.jsonl\n"
    "\n"
    "Lists a run's trace as a table: one line per event (row, lifeline, index,\n"
    "what happened, the variables it wrote), interleaved in an order consistent\n"
    "with causality (a receive after its send), failed model attempts before\n"
    "their action, the start and end lines.  Colour only when stdout is a\n"
    "terminal.\n"
    "\n"
    "  --by-lifeline     each lifeline's events in turn\n"
    "  --lifeline L      only lifeline L's events\n"
    "  --width N         cut values longer than N bytes (default 80; 0: whole)\n"
    "  --no-color        no colour, even on a terminal\n"
    "  -h, --help        show this help\n"
    "\n"
    "exit status: 0 success, 1 a malformed trace (FILE:LINE: …), 2 bad usage.\n";

static int usage_error(const char *usage, const char *fmt, const char *arg)
{
    return zus_error(usage, fmt, arg);
}

/* Parses the options shared by the compiler subcommands.  Returns -1 to go
 * on, else the exit status. */
static int parse_options(int argc, char **argv, const char *usage, Options *o, bool allow_lifeline,
                         bool allow_parse)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return 0;
        } else if (!strcmp(a, "--workflow") && !allow_parse) {
            if (++i >= argc) return usage_error(usage, "%s needs a workflow name", a);
            o->workflow = argv[i];
        } else if (!strncmp(a, "--workflow=", 11) && !allow_parse) {
            o->workflow = a + 11;
        } else if (!strcmp(a, "--lifeline") && allow_lifeline) {
            if (++i >= argc) return usage_error(usage, "%s needs a lifeline name", a);
            o->lifeline = argv[i];
        } else if (!strncmp(a, "--lifeline=", 11) && allow_lifeline) {
            o->lifeline = a + 11;
        } else if (!strcmp(a, "--global") && usage == usage_project) {
            o->global = true;
        } else if (!strcmp(a, "--strict") && usage == usage_check) {
            o->strict = true;
        } else if (!strcmp(a, "--unexpanded") && usage == usage_project) {
            o->written = true;
        } else if (!strcmp(a, "--tokens") && allow_parse) {
            o->tokens = true;
        } else if (!strcmp(a, "--ast") && allow_parse) {
            o->ast = true;
        } else if (a[0] == '-' && a[1]) {
            return usage_error(usage, "unknown option `%s`", a);
        } else if (o->file && o->files) {
            o->files[o->nfiles++] = a;
        } else if (o->file) {
            return usage_error(usage, "more than one input file (`%s`)", a);
        } else {
            o->file = a;
            if (o->files) o->files[o->nfiles++] = a;
        }
    }
    if (!o->file) return usage_error(usage, "%s", "no input file");
    if (o->written && !o->global)
        return usage_error(usage, "%s", "--unexpanded goes with --global");
    if (o->global && o->lifeline)
        return usage_error(usage, "%s", "--global prints the whole workflow: no --lifeline");
    if (allow_parse && o->tokens == o->ast)
        return usage_error(usage, "%s", "give exactly one of --tokens and --ast");
    return -1;
}

/* ---- the pipeline --------------------------------------------------------- */

/* Compiles o->file up to `upto` (compiler/pipeline.c).  Returns the exit
 * status (0 or 1); c is initialised either way and freed by zc_free. */
/* The warnings of this command (-W options, taken with -I before the
 * command runs: take_compiler_options). */
static struct {
    bool on; /* the command reports warnings */
    unsigned off;
    bool werror;
} warn;

static int compile(ZCompilation *c, const Options *o, ZStage upto, bool all_workflows)
{
    if (!zc_init_file(c, zp_parse, o->file, stderr)) return 1;
    c->workflow = o->workflow;
    c->all_workflows = all_workflows;
    c->strict = o->strict;
    c->warnings = warn.on;
    c->diag.warn_off = warn.off;
    c->diag.werror = warn.werror;
    return zc_run(c, upto) ? 0 : 1;
}

/* ---- subcommands ----------------------------------------------------------- */

static int cmd_check(int argc, char **argv)
{
    Options o = {0};
    o.files = zu_xcalloc((size_t)argc + 1, sizeof *o.files);
    int rc = parse_options(argc, argv, usage_check, &o, false, false);
    if (rc >= 0) {
        free(o.files);
        return rc;
    }
    /* every file, each a program of its own; 1 when any has errors */
    rc = 0;
    for (int i = 0; i < o.nfiles; i++) {
        ZCompilation c;
        o.file = o.files[i];
        if (compile(&c, &o, ZC_CHECK, true) != 0) rc = 1;
        zc_free(&c);
    }
    free(o.files);
    return rc;
}

/* --lifeline L names no lifeline of the program: the error, with the
 * closest lifeline's name when one is close. */
static void no_lifeline(const ZCompilation *c, const Options *o)
{
    ZvSuggest sg;
    zv_suggest_init(&sg, o->lifeline);
    for (int i = 0; i < c->prog->lifelines.len; i++) {
        const ZDecl *l = ZU_VEC_AT(c->prog->lifelines, i);
        zv_suggest_try(&sg, l->name);
    }
    fprintf(stderr, "zgc: error: no lifeline `%s` in %s", o->lifeline, o->file);
    if (sg.best) fprintf(stderr, "; did you mean `%s`?", sg.best);
    fputc('\n', stderr);
}

static int cmd_project(int argc, char **argv)
{
    Options o = {0};
    int rc = parse_options(argc, argv, usage_project, &o, true, false);
    if (rc >= 0) return rc;
    ZCompilation c;
    rc = compile(&c, &o, ZC_PROJECT, false);
    if (rc == 0) {
        int only = -1;
        if (o.lifeline) {
            ZDecl *l = zr_lifeline(c.prog, o.lifeline);
            if (!l) {
                no_lifeline(&c, &o);
                zc_free(&c);
                return 1;
            }
            only = l->index;
        }
        if (o.global)
            za_print_workflow(stdout, c.prog, c.wf, o.written);
        else
            zj_print(stdout, c.locals, only);
    }
    zc_free(&c);
    return rc;
}

static int cmd_guards(int argc, char **argv)
{
    /* --plan is this command's own option; the rest are the common ones */
    bool plan = false;
    char **args = zu_xcalloc((size_t)argc + 1, sizeof *args);
    int n = 0;
    for (int i = 0; i < argc; i++) {
        if (i > 0 && !strcmp(argv[i], "--plan")) {
            plan = true;
            continue;
        }
        args[n++] = argv[i];
        if (!strcmp(argv[i], "--workflow") && i + 1 < argc) args[n++] = argv[++i];
    }
    Options o = {0};
    int rc = parse_options(n, args, usage_guards, &o, false, false);
    free(args);
    if (rc >= 0) return rc;
    ZCompilation c;
    rc = compile(&c, &o, ZC_PLAN, false);
    if (rc == 0 && plan)
        zm_print(stdout, c.plan);
    else if (rc == 0)
        zm_print_guards(stdout, c.plan);
    zc_free(&c);
    return rc;
}

static int cmd_parse(int argc, char **argv)
{
    Options o = {0};
    int rc = parse_options(argc, argv, usage_parse, &o, false, true);
    if (rc >= 0) return rc;
    ZCompilation c;
    if (!zc_init_file(&c, zp_parse, o.file, stderr)) return 1;
    c.all_workflows = true;
    if (o.tokens) {
        zp_dump_tokens(stdout, c.arena, &c.src, &c.diag);
        rc = c.diag.errors ? 1 : 0;
    } else {
        /* the tree after name resolution, or as parsed when resolution fails */
        rc = zc_run(&c, ZC_RESOLVE) ? 0 : 1;
        if (c.done > ZC_PARSE) za_print_program(stdout, c.prog);
    }
    zc_free(&c);
    return rc;
}

/* ---- native code ------------------------------------------------------------ */

/* The backend module (backend/load.c), loaded by the commands that make
 * code and by no other; NULL after saying why. */
static const ZbModule *backend(void)
{
    char err[1024];
    const ZbModule *m = zb_load(err, sizeof err);
    if (!m) fprintf(stderr, "zgc: error: %s\n", err);
    return m;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

static int cmd_emit_llvm(int argc, char **argv)
{
    Options o = {0};
    int rc = parse_options(argc, argv, usage_emit_llvm, &o, false, false);
    if (rc >= 0) return rc;
    ZCompilation c;
    rc = compile(&c, &o, ZC_PLAN, false);
    const ZbModule *be = rc == 0 ? backend() : NULL;
    if (rc == 0) rc = be ? be->emit_llvm(stdout, &c) : 1;
    zc_free(&c);
    return rc;
}

/* The optimisation level of -O0 .. -O3, or -O (-O2); -1 for another word. */
static int opt_flag(const char *a)
{
    if (a[0] != '-' || a[1] != 'O') return -1;
    if (!a[2]) return 2;
    return a[2] >= '0' && a[2] <= '3' && !a[3] ? a[2] - '0' : -1;
}

static int cmd_build(int argc, char **argv)
{
    Options o = {0};
    ZBuildOptions b = {.opt_level = 0}; /* bench/README.md, "Compiler": why -O0 */
    const char **cfiles = zu_xcalloc((size_t)argc + 1, sizeof *cfiles);
    int ncfiles = 0;
    int rc = -1, opt;
    for (int i = 1; i < argc && rc < 0; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage_build, stdout);
            rc = 0;
        } else if (!strcmp(a, "-o")) {
            if (++i >= argc)
                rc = usage_error(usage_build, "%s needs a directory", a);
            else
                b.out_dir = argv[i];
        } else if (!strcmp(a, "--workflow")) {
            if (++i >= argc)
                rc = usage_error(usage_build, "%s needs a workflow name", a);
            else
                o.workflow = argv[i];
        } else if (!strncmp(a, "--workflow=", 11)) {
            o.workflow = a + 11;
        } else if ((opt = opt_flag(a)) >= 0) {
            b.opt_level = opt;
        } else if (!strcmp(a, "-j") || (!strncmp(a, "-j", 2) && a[2])) {
            const char *v = a[2] ? a + 2 : i + 1 < argc ? argv[++i] : "";
            char *end;
            long j = strtol(v, &end, 10);
            if (!*v || *end || j < 1 || j > 256)
                rc = usage_error(usage_build, "-j expects a number of threads (1..256), got `%s`",
                                 v);
            else
                b.jobs = (int)j;
        } else if (!strcmp(a, "-g")) {
            b.debug_info = true;
        } else if (!strcmp(a, "--keep-objects")) {
            b.keep_objects = true;
        } else if (!strcmp(a, "--allow-unlinked")) {
            b.allow_unlinked = true;
        } else if (!strcmp(a, "-v")) {
            b.verbose = true;
        } else if (a[0] == '-' && a[1]) {
            rc = usage_error(usage_build, "unknown option `%s`", a);
        } else if (ends_with(a, ".c")) {
            cfiles[ncfiles++] = a;
        } else if (o.file) {
            rc = usage_error(usage_build, "more than one workflow file (`%s`)", a);
        } else {
            o.file = a;
        }
    }
    if (rc < 0 && !o.file) rc = usage_error(usage_build, "%s", "no input file");
    if (rc >= 0) {
        free(cfiles);
        return rc;
    }
    b.c_files = cfiles;
    b.n_c_files = ncfiles;
    ZCompilation c;
    rc = compile(&c, &o, ZC_PLAN, false);
    /* without -o: a directory named after the workflow (outdir.h) */
    bool given = b.out_dir != NULL;
    if (rc == 0 && !given) b.out_dir = c.wf->name;
    if (rc == 0 && zod_check(b.out_dir, given, c.wf->name) != 0) rc = 1;
    const ZbModule *be = rc == 0 ? backend() : NULL;
    if (rc == 0) rc = be ? be->build(&c, &b) : 1;
    if (rc == 0 && zod_record(b.out_dir, c.wf->name) != 0) rc = 1;
    zc_free(&c);
    free(cfiles);
    return rc;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    if (remove(path) != 0 && errno != ENOENT)
        fprintf(stderr, "zgc: warning: cannot remove %s: %s\n", path, strerror(errno));
    return 0;
}

/* Removes the temporary build directory and everything in it. */
static void remove_tree(const char *dir) { nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

/* A fresh run id for the processes of a durable run (the runtime makes
 * the same kind for one process: runtime/durable/run.c). */
static char *new_run_id(void)
{
    unsigned rnd = 0;
    FILE *f = fopen("/dev/urandom", "r");
    if (!f || fread(&rnd, sizeof rnd, 1, f) != 1) rnd = (unsigned)getpid() * 2654435761u;
    if (f) fclose(f);
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    char day[32], *id;
    strftime(day, sizeof day, "%Y%m%d-%H%M%S", &tm);
    if (asprintf(&id, "%s-%06x", day, rnd & 0xffffff) < 0) zu_oom();
    return id;
}

static int cmd_run(int argc, char **argv)
{
    Options o = {0};
    bool processes = false, durable = false, exit_when_waiting = false, allow_unlinked = false;
    bool journal_nats = false; /* --journal nats[:BUCKET] */
    const char *trace = NULL, *view = NULL, *store = NULL, *run_id = NULL, *resume = NULL;
    const char **cfiles = zu_xcalloc((size_t)argc + 1, sizeof *cfiles);
    char **pass = zu_xcalloc((size_t)argc + 8, sizeof *pass);
    int ncfiles = 0, npass = 0, rc = -1, opt, opt_level = 0;
    for (int i = 1; i < argc && rc < 0; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage_run(), stdout);
            rc = 0;
        } else if (!strcmp(a, "--workflow")) {
            if (++i >= argc)
                rc = usage_error(usage_run(), "%s needs a workflow name", a);
            else
                o.workflow = argv[i];
        } else if (!strncmp(a, "--workflow=", 11)) {
            o.workflow = a + 11;
        } else if (!strcmp(a, "--processes")) {
            processes = true;
        } else if (!strcmp(a, "--allow-unlinked")) {
            allow_unlinked = true;
        } else if (opt_flag(a) >= 0) {
            opt_level = opt_flag(a);
        } else if ((opt = zv_option_lookup(a, ZV_RUN)) >= 0) {
            /* --opt VALUE or --opt=VALUE, but for the flags and optional
             * values (vocab.h: zv_option_value) */
            int how = zv_option_value(&zv_option_table()[opt]);
            const char *value = strchr(a, '=');
            if (opt == ZV_OPT_VIEW) {
                /* given to the run below: to the lifelines' launcher of
                 * --processes, which serves their merged view */
                view = value ? value + 1 : "";
                continue;
            }
            if (how == ZV_VALUE_REQUIRED && !value && i + 1 >= argc) {
                rc = usage_error(usage_run(), "%s needs a value", a);
                break;
            }
            if (opt == ZV_OPT_DURABLE) {
                durable = true;
                store = value ? value + 1 : NULL;
                continue;
            }
            if (opt == ZV_OPT_EXIT_WHEN_WAITING) {
                exit_when_waiting = true;
                continue;
            }
            if (opt == ZV_OPT_RUN_ID || opt == ZV_OPT_RESUME) {
                const char *v = value ? value + 1 : argv[++i];
                if (opt == ZV_OPT_RUN_ID)
                    run_id = v;
                else
                    resume = v, durable = true;
                continue;
            }
            if (opt == ZV_OPT_JOURNAL) {
                /* passed on; a bucket's journals have no run store */
                const char *v = value ? value + 1 : i + 1 < argc ? argv[i + 1] : "";
                journal_nats = !strncmp(v, "nats", 4);
            }
            if (opt == ZV_OPT_TRACE) {
                trace = value ? value + 1 : argv[++i];
                if (!processes) {
                    pass[npass++] = "--trace";
                    pass[npass++] = (char *)trace;
                }
                continue;
            }
            pass[npass++] = argv[i];
            if (!value && how == ZV_VALUE_REQUIRED) pass[npass++] = argv[++i];
        } else if (a[0] == '-' && a[1]) {
            rc = usage_error(usage_run(), "unknown option `%s`", a);
        } else if (ends_with(a, ".c")) {
            cfiles[ncfiles++] = a;
        } else if (o.file) {
            rc = usage_error(usage_run(), "more than one workflow file (`%s`)", a);
        } else {
            o.file = a;
        }
    }
    if (rc < 0 && !o.file) rc = usage_error(usage_run(), "%s", "no input file");
    if (rc < 0 && resume && (npass || trace || run_id))
        rc =
            usage_error(usage_run(),
                        "--resume %s takes the run's stored inputs and options; give none", resume);
    if (rc < 0 && !durable && (run_id || exit_when_waiting))
        rc = usage_error(usage_run(), "%s applies to durable runs only (--durable)",
                         run_id ? "--run-id" : "--exit-when-waiting");
    if (rc >= 0) {
        free(cfiles);
        free(pass);
        return rc;
    }
    /* --processes may come after --trace or --view: drop a pass-through
     * --trace and --view then (the launcher gives each lifeline its trace
     * and serves the view itself) */
    if (processes && (trace || view)) {
        int k = 0;
        for (int i = 0; i < npass; i++) {
            if (!strcmp(pass[i], "--trace") && i + 1 < npass && pass[i + 1] == trace) {
                i++;
                continue;
            }
            if (zv_option_lookup(pass[i], ZV_RUN) == ZV_OPT_VIEW) continue;
            pass[k++] = pass[i];
        }
        npass = k;
    }
    /* from here on, SIGINT, SIGTERM and SIGHUP stop the run, which is then
     * cleaned up (launch.h) */
    const ZoModule *M = zo_module();
    M->signals_catch();
    const char *tmpdir = getenv("TMPDIR");
    char *dir;
    if (asprintf(&dir, "%s/zgc-run-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp") < 0) zu_oom();
    if (!mkdtemp(dir)) {
        fprintf(stderr, "zgc: cannot create a temporary directory: %s\n", strerror(errno));
        free(dir);
        free(cfiles);
        free(pass);
        return 1;
    }
    ZCompilation c;
    char *store_path = durable ? M->store_path(store) : NULL, *exe_dir = NULL, *fresh_id = NULL;
    char *store_opt = NULL, *view_opt = NULL;
    rc = compile(&c, &o, ZC_PLAN, false);
    if (rc == 0) {
        /* link what runs: the all-in-one executable, or with --processes
         * (and a lifeline or more) the per-lifeline ones; a durable run
         * may be resumed in the other mode, so it has both */
        bool per_life = processes && c.prog->lifelines.len > 1;
        ZcaRequest req = {.source = o.file,
                          .c_files = cfiles,
                          .n_c_files = ncfiles,
                          .opt_level = opt_level,
                          .allow_unlinked = allow_unlinked,
                          .link = durable    ? ZB_LINK_WHOLE | ZB_LINK_LIFELINES
                                  : per_life ? ZB_LINK_LIFELINES
                                             : ZB_LINK_WHOLE};
        rc = M->cache_get(&c, &req, &exe_dir);
    }
    if (rc == 0 && M->signal_received()) rc = 1; /* stopped while compiling */
    if (rc == 0 && resume) {
        rc = M->resume(store_path, resume, exe_dir, exit_when_waiting);
        goto finish;
    }
    if (rc == 0 && durable) {
        /* the executables get the store as an absolute path, and the
         * processes of one run one id */
        if (asprintf(&store_opt, "--durable=%s", store_path) < 0) zu_oom();
        pass[npass++] = store_opt;
        if (!run_id && processes && c.prog->lifelines.len > 1) {
            run_id = fresh_id = new_run_id();
            if (journal_nats)
                fprintf(stderr,
                        "zgc: note: durable run %s (journals in a key-value bucket of the NATS "
                        "server)\n",
                        run_id);
            else
                fprintf(stderr, "zgc: note: durable run %s (store %s)\n", run_id, store_path);
        }
        if (run_id) {
            pass[npass++] = "--run-id";
            pass[npass++] = (char *)run_id;
        }
        if (exit_when_waiting) pass[npass++] = "--exit-when-waiting";
    }
    /* one lifeline: its own executable is the whole workflow */
    if (rc == 0 && processes && c.prog->lifelines.len == 1 && trace) {
        pass[npass++] = "--trace";
        pass[npass++] = (char *)trace;
    }
    if (rc == 0 && view && (!processes || c.prog->lifelines.len == 1)) {
        if (asprintf(&view_opt, "--view%s%s", *view ? "=" : "", view) < 0) zu_oom();
        pass[npass++] = view_opt;
    }
    if (rc == 0 && (!processes || c.prog->lifelines.len == 1)) {
        char *exe;
        if (asprintf(&exe, "%s/%s", exe_dir ? exe_dir : dir, c.wf->name) < 0) zu_oom();
        rc = M->run_single(exe, npass, pass);
        free(exe);
    } else if (rc == 0) {
        int nl = c.prog->lifelines.len;
        const char **names = zu_xcalloc((size_t)nl, sizeof *names);
        char **exes = zu_xcalloc((size_t)nl + 1, sizeof *exes);
        for (int i = 0; i < nl; i++) {
            names[i] = ((ZDecl *)c.prog->lifelines.items[i])->name;
            if (exe_dir && asprintf(&exes[i], "%s/%s.%s", exe_dir, c.wf->name, names[i]) < 0)
                zu_oom();
        }
        ZxProcessRun r = {.dir = dir,
                          .workflow = c.wf->name,
                          .nlifelines = nl,
                          .lifelines = names,
                          .nresults = c.wf->results.len,
                          .result_tuple = c.wf->results.len > 1,
                          .trace = trace,
                          .view = view,
                          .exes = exe_dir ? (const char *const *)exes : NULL};
        rc = M->run_processes(&r, npass, pass);
        for (int i = 0; i < nl; i++) free(exes[i]);
        free(exes);
        free(names);
    }
finish:
    free(store_path);
    free(exe_dir);
    free(fresh_id);
    free(store_opt);
    zc_free(&c);
    remove_tree(dir);
    free(dir);
    free(cfiles);
    free(pass);
    free(view_opt);
    M->signal_exit(); /* stopped by a signal: die of it, now that all is clean */
    return rc;
}

/* ---- seeing runs: zgc view, zgc trace show ------------------------------------ */

/* The default page of an input: its name with .html instead of its
 * extension (after the last '/'), or with .html appended. */
static char *page_path(const char *input)
{
    const char *slash = strrchr(input, '/');
    const char *dot = strrchr(slash ? slash + 1 : input, '.');
    size_t n = dot && dot != (slash ? slash + 1 : input) ? (size_t)(dot - input) : strlen(input);
    char *p;
    if (asprintf(&p, "%.*s.html", (int)n, input) < 0) zu_oom();
    return p;
}

typedef struct ViewJob {
    const ZvwTrace *trace;
    const char *title;
    const ZCompilation *c; /* the workflow drawn */
    char *guards;          /* a trace's workflow's guards (zvw_guards_json), or NULL */
    int lifeline;
} ViewJob;

static int write_view(FILE *out, void *user)
{
    const ViewJob *j = user;
    if (j->trace) return zvw_trace_page(out, j->trace, j->title, j->guards);
    return zvw_workflow_page(out, j->c, j->lifeline);
}

static int cmd_view(int argc, char **argv)
{
    Options o = {0};
    const char *out = NULL, *source = NULL;
    char **args = zu_xcalloc((size_t)argc + 1, sizeof *args);
    int n = 0;
    for (int i = 0; i < argc; i++) {
        if (i > 0 && (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--source"))) {
            if (i + 1 >= argc) {
                free(args);
                return usage_error(usage_view, "%s needs a file name", argv[i]);
            }
            if (argv[i][1] == 'o')
                out = argv[++i];
            else
                source = argv[++i];
            continue;
        }
        args[n++] = argv[i];
        if ((!strcmp(argv[i], "--workflow") || !strcmp(argv[i], "--lifeline")) && i + 1 < argc)
            args[n++] = argv[++i];
    }
    int rc = parse_options(n, args, usage_view, &o, true, false);
    free(args);
    if (rc >= 0) return rc;
    rc = 0;
    bool workflow = ends_with(o.file, ".zg");
    if (!workflow && o.lifeline)
        return usage_error(usage_view, "%s applies to workflows (FILE.zg) only", "--lifeline");
    if (workflow && source) return usage_error(usage_view, "%s applies to traces only", "--source");
    if (!workflow && o.workflow && !source)
        return usage_error(usage_view, "%s needs a workflow: FILE.zg or --source FILE.zg",
                           "--workflow");
    char *path = out ? NULL : page_path(o.file);
    const char *dest = out ? out : path;
    char err[1024];
    ViewJob job = {.lifeline = -1};
    ZvwTrace t;
    ZCompilation c;
    if (workflow) {
        rc = compile(&c, &o, ZC_PROJECT, false);
        if (rc == 0 && o.lifeline) {
            ZDecl *l = zr_lifeline(c.prog, o.lifeline);
            if (!l) {
                no_lifeline(&c, &o);
                rc = 1;
            } else {
                job.lifeline = l->index;
            }
        }
        job.c = &c;
    } else if (zvw_trace_read(&t, o.file, err, sizeof err) != 0) {
        fprintf(stderr, "zgc: error: %s\n", err);
        rc = 1;
    } else {
        const char *slash = strrchr(o.file, '/');
        job.trace = &t;
        job.title = slash ? slash + 1 : o.file;
        if (source) {
            /* the workflow of the run, for its guards (diagnostics printed) */
            Options so = {.file = source, .workflow = o.workflow};
            rc = compile(&c, &so, ZC_GUARDS, false);
            if (rc == 0) job.guards = zvw_guards_json(&c);
            zc_free(&c);
        }
    }
    if (rc == 0 && zvw_write_file(dest, write_view, &job, err, sizeof err) != 0) {
        fprintf(stderr, "zgc: error: %s\n", err);
        rc = 1;
    }
    if (rc == 0 && strcmp(dest, "-")) fprintf(stderr, "zgc: wrote %s\n", dest);
    if (job.c) zc_free(&c);
    if (job.trace) zvw_trace_free(&t);
    free(job.guards);
    free(path);
    return rc;
}

static int cmd_trace_show(int argc, char **argv)
{
    ZvwShowOptions so = {.color = isatty(STDOUT_FILENO), .width = 80};
    const char *file = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage_trace_show, stdout);
            return 0;
        } else if (!strcmp(a, "--by-lifeline")) {
            so.by_lifeline = true;
        } else if (!strcmp(a, "--no-color")) {
            so.color = false;
        } else if (!strcmp(a, "--lifeline") || !strncmp(a, "--lifeline=", 11)) {
            if (!a[10] && ++i >= argc)
                return usage_error(usage_trace_show, "%s needs a lifeline name", a);
            so.lifeline = a[10] ? a + 11 : argv[i];
        } else if (!strcmp(a, "--width") || !strncmp(a, "--width=", 8)) {
            if (!a[7] && ++i >= argc) return usage_error(usage_trace_show, "%s needs a number", a);
            const char *v = a[7] ? a + 8 : argv[i];
            char *end;
            errno = 0;
            long w = strtol(v, &end, 10);
            if (!*v || *end || errno || w < 0 || w > 1000000)
                return usage_error(usage_trace_show, "--width expects a number of bytes, got `%s`",
                                   v);
            so.width = (int)w;
        } else if (a[0] == '-' && a[1]) {
            return usage_error(usage_trace_show, "unknown option `%s`", a);
        } else if (file) {
            return usage_error(usage_trace_show, "more than one trace (`%s`)", a);
        } else {
            file = a;
        }
    }
    if (!file) return usage_error(usage_trace_show, "%s", "no trace file");
    ZvwTrace t;
    char err[1024];
    int rc = 0;
    if (zvw_trace_read(&t, file, err, sizeof err) != 0 ||
        zvw_show(stdout, &t, &so, err, sizeof err) != 0) {
        fprintf(stderr, "zgc: error: %s\n", err);
        rc = 1;
    }
    zvw_trace_free(&t);
    return rc;
}

/* `zgc anomalies`: with --static the race analysis of a workflow
 * (racetable.c), else the detectors of recorded histories (anomalies/).  The
 * help of `zgc anomalies` is the detectors' with the usage of --static
 * after it. */
static int cmd_anomalies(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--")) break;
        if (!strcmp(argv[i], "--static")) return zrc_main(argc, argv);
    }
    bool help = argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help");
    int rc = zgan_main(argc, argv);
    if (help) {
        FILE *f = argc < 2 ? stderr : stdout;
        fputc('\n', f);
        fputs(zrc_usage, f);
    }
    return rc;
}

/* `zgc trace`: `show` is the viewer's, the rest the oracle's (check).  The
 * help of `zgc trace` is the oracle's with the usage of `show` after it. */
static int cmd_trace(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "show")) return cmd_trace_show(argc - 1, argv + 1);
    if (argc >= 2 && argv[1][0] != '-' && strcmp(argv[1], "check"))
        return usage_error("usage: zgc trace check …\n       zgc trace show …\n",
                           "unknown trace command `%s`", argv[1]);
    bool help = argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help");
    int rc = zt_main(argc, argv);
    if (help) {
        FILE *f = argc < 2 ? stderr : stdout;
        fputc('\n', f);
        fputs(usage_trace_show, f);
    }
    return rc;
}

/* the commands of the runs module (runsmod.h), loaded when one of them runs */
static int cmd_runs(int argc, char **argv) { return zo_module()->runs_main(argc, argv); }
static int cmd_tasks(int argc, char **argv) { return zo_module()->tasks_main(argc, argv); }
static int cmd_answer(int argc, char **argv) { return zo_module()->answer_main(argc, argv); }
static int cmd_cache(int argc, char **argv) { return zo_module()->cache_main(argc, argv); }

typedef struct Command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *usage;
} Command;

static const Command commands[] = {
    {"check", cmd_check, usage_check},
    {"project", cmd_project, usage_project},
    {"guards", cmd_guards, usage_guards},
    {"build", cmd_build, usage_build},
    {"run", cmd_run, NULL},
    {"emit-llvm", cmd_emit_llvm, usage_emit_llvm},
    {"parse", cmd_parse, usage_parse},
    {"anomalies", cmd_anomalies, NULL},
    {"trace", cmd_trace, NULL},
    {"view", cmd_view, usage_view},
    {"runs", cmd_runs, NULL},
    {"tasks", cmd_tasks, NULL},
    {"answer", cmd_answer, NULL},
    {"cache", cmd_cache, NULL},
    {"fmt", zf_main, zf_usage},
    {"lsp", zl_main, zl_usage},
};

static const Command *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(commands[i].name, name)) return &commands[i];
    return NULL;
}

/* What a command printed on stdout must have reached it: a result lost to
 * a full disk or a closed pipe is a failure, not a success. */
static int finish_output(int rc)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "zgc: error: cannot write to standard output: %s\n", strerror(errno));
        return rc ? rc : 1;
    }
    return rc;
}

/* `-I DIR` (or `-IDIR`), on every command that reads a .zg file: DIR is
 * searched for imported files (compiler/pipeline.c), in the order given.
 * Taken out of argv before the command parses its own options; -1 to go
 * on, else the exit status. */
static int take_compiler_options(const Command *c, int *argc, char **argv)
{
    static const char *const readers[] = {"check",     "project", "guards", "build", "run",
                                          "emit-llvm", "parse",   "trace",  "view"};
    /* the commands that compile a program of the user's report warnings */
    static const char *const warners[] = {"check", "project",   "guards",
                                          "build", "emit-llvm", "run"};
    bool reads = false;
    for (size_t i = 0; i < sizeof readers / sizeof readers[0]; i++)
        if (!strcmp(c->name, readers[i])) reads = true;
    for (size_t i = 0; i < sizeof warners / sizeof warners[0]; i++)
        if (!strcmp(c->name, warners[i])) warn.on = true;
    if (!reads) return -1;
    const char *usage = c->usage ? c->usage : usage_main;
    int n = 2;
    for (int i = 2; i < *argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) { /* the rest is not ours */
            while (i < *argc) argv[n++] = argv[i++];
            break;
        }
        if (warn.on && !strncmp(a, "-W", 2)) {
            /* -Werror, -Wno-error, -W<name>, -Wno-<name>, -Wall, -Wno-all */
            const char *w = a + 2;
            bool no = !strncmp(w, "no-", 3);
            if (no) w += 3;
            if (!strcmp(w, "error")) {
                warn.werror = !no;
            } else if (!strcmp(w, "all")) {
                warn.off = no ? ~0u : 0u;
            } else {
                int k = zd_warning_lookup(w);
                if (k < 0) {
                    ZvSuggest sg;
                    zv_suggest_init(&sg, w);
                    for (int j = 0; j < ZW__COUNT; j++) zv_suggest_try(&sg, zd_warning_name(j));
                    fprintf(stderr, "zgc: error: unknown warning `%s`", a);
                    if (sg.best)
                        fprintf(stderr, "; did you mean `-W%s%s`?", no ? "no-" : "", sg.best);
                    fputs("\n(see `zgc help warnings` for the warnings)\n", stderr);
                    return 2;
                }
                if (no)
                    warn.off |= 1u << k;
                else
                    warn.off &= ~(1u << k);
            }
            continue;
        }
        if (strncmp(a, "-I", 2) != 0) {
            argv[n++] = argv[i];
            continue;
        }
        const char *dir = a[2] ? a + 2 : i + 1 < *argc ? argv[++i] : NULL;
        if (!dir || !dir[0]) return usage_error(usage, "%s", "-I needs a directory");
        struct stat st;
        if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
            return usage_error(usage, "-I %s: not a directory", dir);
        zc_add_include_dir(dir);
    }
    argv[n] = NULL;
    *argc = n;
    return -1;
}

static int run_command(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage_main, stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
        fputs(usage_main, stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("zgc %s (build %s)\nfrom the %s\n", ZGC_VERSION, ZGC_BUILD_ID, zpa_where());
        return 0;
    }
    if (!strcmp(cmd, "help")) {
        if (argc < 3) {
            fputs(usage_main, stdout);
            return 0;
        }
        if (!strcmp(argv[2], "warnings")) {
            fputs("Warnings of check, project, guards, build, emit-llvm and run (all on;\n"
                  "-Wno-NAME turns one off, -WNAME on again, -Wno-all all, -Werror makes\n"
                  "them errors):\n",
                  stdout);
            for (int k = 0; k < ZW__COUNT; k++)
                printf("  -W%-18s %s\n", zd_warning_name(k), zd_warning_help(k));
            return 0;
        }
        const Command *c = find_command(argv[2]);
        if (!c) return usage_error(usage_main, "unknown command `%s`", argv[2]);
        if (c->usage) {
            fputs(c->usage, stdout);
            return 0;
        }
        char *help_argv[] = {argv[2], "--help", NULL};
        return c->run(2, help_argv);
    }
    const Command *c = find_command(cmd);
    if (!c) return usage_error(usage_main, "unknown command `%s`", cmd);
    int rc = take_compiler_options(c, &argc, argv);
    if (rc >= 0) return rc;
    return c->run(argc - 1, argv + 1);
}

#if defined(__SANITIZE_ADDRESS__)
/* AddressSanitizer builds only.  LeakSanitizer's exit-time check in GCC
 * 12's runtime sometimes crashes ("Tracer caught signal 11", then
 * "LeakSanitizer has encountered a fatal error") while it walks the
 * dynamic TLS of threads on glibc 2.34 and later — a known fault of that
 * runtime's DTLS tracking (google/sanitizers issues 1322, 1342); zgc
 * loads libLLVM with dlopen, whose thread_local data is such TLS.  Not
 * tracking dynamic TLS keeps the leak check: zgc keeps no heap pointer
 * only in thread-local storage. */
__attribute__((used, visibility("default"))) const char *__asan_default_options(void)
{
    return "intercept_tls_get_addr=0";
}
#endif

int main(int argc, char **argv)
{
    zpa_init();
    return finish_output(run_command(argc, argv));
}
