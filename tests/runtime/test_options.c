/* test_options.c — options.c: every run option, both spellings, and the
 * usage errors. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <string.h>

#include "programs.h"

static const char *const LL[] = {"Editor", "Writer"};
static const char *const MAIN_CHAN[] = {"main"};
static const zgrt_action ACTS[] = {{.name = "draft", .kind = ZGRT_ACT_LLM},
                                   {.name = "send", .kind = ZGRT_ACT_EFFECT}};
static const zgrt_program P = {.abi_version = ZGRT_ABI_VERSION,
                               .workflow = "wf",
                               .nlifelines = 2,
                               .lifelines = LL,
                               .nchans = 1,
                               .chans = MAIN_CHAN,
                               .nactions = 2,
                               .actions = ACTS};

static int parse(zri_options *o, const char *const *args)
{
    int n = 0;
    while (args[n]) n++;
    return zri_options_parse(&P, n, (char **)args, o);
}

#define PARSE(o, ...) parse(o, (const char *const[]){__VA_ARGS__, NULL})

Test(options, defaults)
{
    zri_options o;
    cr_assert_eq(parse(&o, (const char *const[]){NULL}), 0);
    cr_expect_str_eq(o.llm, "mock");
    cr_expect_eq(o.nargs, 0);
    cr_expect_eq(o.seed, 0);
    cr_expect_null(o.trace);
    cr_expect_eq(o.timeout, 0);
    zri_options_free(&o);
}

Test(options, every_option_both_spellings)
{
    zri_options o;
    int rc = PARSE(
        &o, "--arg", "a=1", "--arg=b=x=y", "--llm", "scripted:s.json", "--llm-for", "Editor=mock",
        "--llm-for=Writer.draft=openai:gpt", "--seed=18446744073709551615", "--trace", "t.jsonl",
        "--timeout=2.5", "--answers", "ans.json", "--listen=unix:/tmp/s", "--peer",
        "Writer=tcp:localhost:9000", "--peer=Editor=unix:/tmp/e", "--result-file", "r.json");
    cr_assert_eq(rc, 0);
    cr_expect_eq(o.nargs, 2);
    cr_expect_str_eq(o.arg_names[0], "a");
    cr_expect_str_eq(o.arg_values[0], "1");
    cr_expect_str_eq(o.arg_names[1], "b");
    cr_expect_str_eq(o.arg_values[1], "x=y");
    cr_expect_str_eq(o.llm, "scripted:s.json");
    cr_assert_eq(o.nroutes, 2);
    cr_expect_str_eq(o.routes[0].lifeline, "Editor");
    cr_expect_null(o.routes[0].action);
    cr_expect_str_eq(o.routes[0].spec, "mock");
    cr_expect_str_eq(o.routes[1].lifeline, "Writer");
    cr_expect_str_eq(o.routes[1].action, "draft");
    cr_expect_str_eq(o.routes[1].spec, "openai:gpt");
    cr_expect_eq(o.seed, UINT64_MAX);
    cr_expect_str_eq(o.trace, "t.jsonl");
    cr_expect_eq(o.timeout, 2.5);
    cr_expect_str_eq(o.answers, "ans.json");
    cr_expect_str_eq(o.listen, "unix:/tmp/s");
    cr_assert_eq(o.npeers, 2);
    cr_expect_str_eq(o.peer_names[0], "Writer");
    cr_expect_str_eq(o.peer_addrs[0], "tcp:localhost:9000");
    cr_expect_str_eq(o.peer_names[1], "Editor");
    cr_expect_str_eq(o.result_file, "r.json");
    zri_options_free(&o);
}

static void redirect_all(void)
{
    cr_redirect_stderr();
    cr_redirect_stdout();
}

/* each: the arguments and a piece of the message */
typedef struct bad_case {
    const char *args[4];
    const char *msg;
} bad_case;

static const bad_case BAD[] = {
    {{"--arg", "novalue"}, "--arg expects NAME=VALUE, got 'novalue'"},
    {{"--arg", "=v"}, "--arg expects NAME=VALUE"},
    {{"--arg"}, "--arg expects a value"},
    {{"--llm-for", "Nobody=mock"}, "--llm-for: unknown lifeline 'Nobody'"},
    {{"--llm-for", "Editor.nothing=mock"}, "'nothing' is not an llm action"},
    {{"--llm-for", "Editor.send=mock"}, "'send' is not an llm action"},
    {{"--llm-for", "Editor"}, "--llm-for expects LIFELINE=SPEC"},
    {{"--llm-for", "Editor="}, "--llm-for expects LIFELINE=SPEC"},
    {{"--seed", "-1"}, "--seed expects a non-negative integer"},
    {{"--seed", "12a"}, "--seed expects a non-negative integer"},
    {{"--seed", "99999999999999999999999"}, "--seed expects a non-negative integer"},
    {{"--timeout", "0"}, "--timeout expects a positive number of seconds, got '0'"},
    {{"--timeout", "-3"}, "--timeout expects a positive number"},
    {{"--timeout", "soon"}, "--timeout expects a positive number"},
    {{"--peer", "Nobody=unix:/x"}, "--peer: unknown lifeline 'Nobody'"},
    {{"--peer", "Writer="}, "--peer expects NAME=ADDR"},
    {{"--peer", "Writer=a", "--peer", "Writer=b"}, "--peer: lifeline 'Writer' given twice"},
    {{"--trace", ""}, "--trace expects a file name"},
    {{"--frobnicate"}, "unknown option '--frobnicate'"},
    {{"--seedling", "3"}, "unknown option '--seedling'"},
    {{"stray"}, "unexpected argument 'stray'"},
};

Test(options, usage_errors, .init = redirect_all)
{
    for (size_t i = 0; i < sizeof BAD / sizeof *BAD; i++) {
        zri_options o;
        cr_expect_eq(parse(&o, BAD[i].args), -1, "case %zu", i);
    }
    fflush(stderr);
    /* every message, in order, each followed by the --help hint */
    FILE *f = cr_get_redirected_stderr();
    char line[512];
    size_t k = 0;
    while (fgets(line, sizeof line, f) && k < sizeof BAD / sizeof *BAD) {
        if (strncmp(line, "zgc: error: ", 12) != 0) continue;
        cr_expect(strstr(line, BAD[k].msg), "case %zu: %s", k, line);
        k++;
    }
    cr_expect_eq(k, sizeof BAD / sizeof *BAD);
}

Test(options, help, .init = redirect_all)
{
    zri_options o;
    cr_expect_eq(PARSE(&o, "--seed", "1", "-h"), 1);
    fflush(stdout);
    cr_assert_stdout_neq_str("");
}
