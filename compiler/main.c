/* main.c — the zgc driver.
 *
 * The pipeline is the list of passes in compile(): parse, resolve, select
 * the workflow, check, project, enumerate guards.  Each subcommand stops it
 * after the pass whose output it prints. */
#include "zgc.h"

#include <stdlib.h>
#include <string.h>

#include "anomalies.h"

#define ZGC_VERSION "0.1.0"

typedef enum { UPTO_TOKENS, UPTO_AST, UPTO_CHECK, UPTO_PROJECT, UPTO_GUARDS } Upto;

typedef struct Options {
    const char *file;
    const char *workflow;
    const char *lifeline;
    bool tokens, ast;
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
    "  guards     print the CPL guard tables: sub(Φ), Vars(Φ), per-lifeline monitors\n"
    "  parse      print the tokens (--tokens) or the syntax tree (--ast)\n"
    "  anomalies  detect shared-state anomalies in operation histories\n"
    "  help CMD   show the help of a command\n"
    "\n"
    "options:\n"
    "  -h, --help     show this help (or a command's, after the command)\n"
    "  --version      print the version\n"
    "\n"
    "exit status: 0 success, 1 errors in the input, 2 bad usage.\n"
    "See docs/zgc.md for the full manual.\n";

static const char usage_check[] =
    "usage: zgc check [--workflow NAME] FILE.zg\n"
    "\n"
    "Parses, resolves and type-checks FILE.zg and reports every error as\n"
    "FILE:LINE:COL: error: MESSAGE, with the source line and notes.\n"
    "Without --workflow every workflow in the file is checked.\n"
    "\n"
    "  --workflow NAME   check only the declarations and this workflow\n"
    "  -h, --help        show this help\n"
    "\n"
    "exit status: 0 clean, 1 errors, 2 bad usage.\n";

static const char usage_project[] =
    "usage: zgc project [--workflow NAME] [--lifeline L] FILE.zg\n"
    "\n"
    "Checks FILE.zg and prints the local program of each lifeline (language\n"
    "reference §7): sends, receives, actions, control broadcasts (send-ctl /\n"
    "recv-ctl with construct tags such as if#3), recv-any for coregions and\n"
    "parallel branches with their channel namespaces.\n"
    "\n"
    "  --workflow NAME   the workflow to project (default: the only or the last one)\n"
    "  --lifeline L      print only lifeline L\n"
    "  -h, --help        show this help\n"
    "\n"
    "exit status: 0 success, 1 errors in the input, 2 bad usage.\n";

static const char usage_guards[] =
    "usage: zgc guards [--workflow NAME] FILE.zg\n"
    "\n"
    "Checks FILE.zg and prints, for every if/while guard, its owner and its\n"
    "unfolded primitive CPL form; the subformulas sub(Φ) in bottom-up order;\n"
    "Vars(Φ); and per lifeline the subformulas it evaluates, the views it\n"
    "keeps and exports, and the size of its monitor state.\n"
    "\n"
    "  --workflow NAME   the workflow (default: the only or the last one)\n"
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

static int usage_error(const char *usage, const char *fmt, const char *arg)
{
    fputs("zgc: ", stderr);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    fputs(usage, stderr);
    return 2;
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
        } else if (!strcmp(a, "--tokens") && allow_parse) {
            o->tokens = true;
        } else if (!strcmp(a, "--ast") && allow_parse) {
            o->ast = true;
        } else if (a[0] == '-' && a[1]) {
            return usage_error(usage, "unknown option `%s`", a);
        } else if (o->file) {
            return usage_error(usage, "more than one input file (`%s`)", a);
        } else {
            o->file = a;
        }
    }
    if (!o->file) return usage_error(usage, "%s", "no input file");
    if (allow_parse && o->tokens == o->ast)
        return usage_error(usage, "%s", "give exactly one of --tokens and --ast");
    return -1;
}

/* ---- the pipeline --------------------------------------------------------- */

typedef struct Compilation {
    ZArena *arena;
    ZSource src;
    ZDiag diag;
    char *text;
    ZProgram *prog;
    ZDecl *wf;
    ZLocalSet *locals;
    ZGuardTable *guards;
} Compilation;

static void compilation_free(Compilation *c)
{
    zu_arena_free(c->arena);
    free(c->text);
}

/* Runs the passes up to `upto`.  Returns the exit status (0 or 1). */
static int compile(Compilation *c, const Options *o, Upto upto)
{
    const char *err;
    c->arena = zu_arena_new();
    c->text = zu_read_file(o->file, &c->src.len, &err);
    if (!c->text) {
        fprintf(stderr, "zgc: cannot read %s: %s\n", o->file, err);
        return 1;
    }
    c->src.path = o->file;
    c->src.text = c->text;
    zd_init(&c->diag, &c->src, stderr);

    if (upto == UPTO_TOKENS) {
        zp_dump_tokens(stdout, c->arena, &c->src, &c->diag);
        return c->diag.errors ? 1 : 0;
    }
    c->prog = zp_parse(c->arena, &c->src, &c->diag);
    if (c->diag.errors) return 1;
    bool resolved = zr_resolve(c->arena, c->prog, &c->diag);
    if (upto == UPTO_AST) {
        za_print_program(stdout, c->prog);
        return resolved ? 0 : 1;
    }
    if (!resolved) return 1;
    if (o->workflow || upto > UPTO_CHECK) {
        c->wf = zr_select_workflow(c->prog, o->workflow, &c->diag);
        if (!c->wf) return 1;
    }
    if (!zk_check(c->arena, c->prog, c->wf, &c->diag)) return 1;
    if (upto == UPTO_CHECK) return 0;
    c->locals = zj_project(c->arena, c->prog, c->wf);
    if (upto == UPTO_PROJECT) return 0;
    c->guards = zg_enumerate(c->arena, c->prog, c->wf, c->locals);
    return 0;
}

/* ---- subcommands ----------------------------------------------------------- */

static int cmd_check(int argc, char **argv)
{
    Options o = {0};
    int rc = parse_options(argc, argv, usage_check, &o, false, false);
    if (rc >= 0) return rc;
    Compilation c = {0};
    rc = compile(&c, &o, UPTO_CHECK);
    compilation_free(&c);
    return rc;
}

static int cmd_project(int argc, char **argv)
{
    Options o = {0};
    int rc = parse_options(argc, argv, usage_project, &o, true, false);
    if (rc >= 0) return rc;
    Compilation c = {0};
    rc = compile(&c, &o, UPTO_PROJECT);
    if (rc == 0) {
        int only = -1;
        if (o.lifeline) {
            ZDecl *l = zr_lifeline(c.prog, o.lifeline);
            if (!l) {
                fprintf(stderr, "zgc: no lifeline `%s` in %s\n", o.lifeline, o.file);
                compilation_free(&c);
                return 1;
            }
            only = l->index;
        }
        zj_print(stdout, c.locals, only);
    }
    compilation_free(&c);
    return rc;
}

static int cmd_guards(int argc, char **argv)
{
    Options o = {0};
    int rc = parse_options(argc, argv, usage_guards, &o, false, false);
    if (rc >= 0) return rc;
    Compilation c = {0};
    rc = compile(&c, &o, UPTO_GUARDS);
    if (rc == 0) zg_print(stdout, c.guards);
    compilation_free(&c);
    return rc;
}

static int cmd_parse(int argc, char **argv)
{
    Options o = {0};
    int rc = parse_options(argc, argv, usage_parse, &o, false, true);
    if (rc >= 0) return rc;
    Compilation c = {0};
    rc = compile(&c, &o, o.tokens ? UPTO_TOKENS : UPTO_AST);
    compilation_free(&c);
    return rc;
}

typedef struct Command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *usage;
} Command;

static const Command commands[] = {
    {"check", cmd_check, usage_check},
    {"project", cmd_project, usage_project},
    {"guards", cmd_guards, usage_guards},
    {"parse", cmd_parse, usage_parse},
    {"anomalies", zgan_main, NULL},
};

static const Command *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(commands[i].name, name)) return &commands[i];
    return NULL;
}

int main(int argc, char **argv)
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
        printf("zgc %s\n", ZGC_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "help")) {
        if (argc < 3) {
            fputs(usage_main, stdout);
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
    return c->run(argc - 1, argv + 1);
}
