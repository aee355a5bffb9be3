/* The forged traces of the trace checker's findings, each a regression
 * test: values of the wrong type (start store, write, result), start
 * stores that differ from the declared initial values, the increment
 * trace whose loop never runs and whose `-> int` workflow returns "abc",
 * wrong attempts and retry lines, run-time errors the run would have
 * stopped at, and lines out of their places.  The base traces are what
 * the runtime writes (zgc run --trace). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "trace_edit.h"

/* examples/increment.zg */
static const char increment[] = "lifeline A, B;\n"
                                "const ROUNDS = 3;\n"
                                "var n: int = 0;\n"
                                "pure inc(t: int) -> int = t + 1;\n"
                                "workflow increment() -> int {\n"
                                "    while n < ROUNDS @ A {\n"
                                "        A(n) -> B(n);\n"
                                "        B: n = inc(n);\n"
                                "        B(n) -> A(n);\n"
                                "    }\n"
                                "    return n @ A;\n"
                                "}\n";

/* zgc run examples/increment.zg --trace t.jsonl */
static const char increment_trace[] =
    "{\"kind\":\"start\",\"lifeline\":\"A\",\"store\":{\"n\":0}}\n"
    "{\"kind\":\"start\",\"lifeline\":\"B\",\"store\":{\"n\":0}}\n"
    "{\"lifeline\":\"A\",\"index\":1,\"kind\":\"choice\",\"construct\":\"while#1\",\"value\":true,"
    "\"writes\":{},\"vc\":{\"A\":1,\"B\":0}}\n"
    "{\"lifeline\":\"A\",\"index\":2,\"kind\":\"send\",\"to\":\"B\",\"channel\":\"main\","
    "\"values\":[true],\"control\":\"while#1\",\"msg\":\"A>B@main#1\",\"writes\":{},\"vc\":{\"A\":"
    "2,\"B\":0}}\n"
    "{\"lifeline\":\"A\",\"index\":3,\"kind\":\"send\",\"to\":\"B\",\"channel\":\"main\","
    "\"values\":[0],\"control\":null,\"msg\":\"A>B@main#2\",\"writes\":{},\"vc\":{\"A\":3,\"B\":0}}"
    "\n"
    "{\"lifeline\":\"B\",\"index\":1,\"kind\":\"recv\",\"from\":\"A\",\"channel\":\"main\","
    "\"values\":[true],\"control\":\"while#1\",\"msg\":\"A>B@main#1\",\"writes\":{},\"vc\":{\"A\":"
    "2,\"B\":1}}\n"
    "{\"lifeline\":\"B\",\"index\":2,\"kind\":\"recv\",\"from\":\"A\",\"channel\":\"main\","
    "\"values\":[0],\"control\":null,\"msg\":\"A>B@main#2\",\"writes\":{\"n\":0},\"vc\":{\"A\":3,"
    "\"B\":2}}\n"
    "{\"lifeline\":\"B\",\"index\":3,\"kind\":\"act\",\"action\":\"inc\",\"attempts\":1,\"writes\":"
    "{\"n\":1},\"vc\":{\"A\":3,\"B\":3}}\n"
    "{\"lifeline\":\"B\",\"index\":4,\"kind\":\"send\",\"to\":\"A\",\"channel\":\"main\","
    "\"values\":[1],\"control\":null,\"msg\":\"B>A@main#1\",\"writes\":{},\"vc\":{\"A\":3,\"B\":4}}"
    "\n"
    "{\"lifeline\":\"A\",\"index\":4,\"kind\":\"recv\",\"from\":\"B\",\"channel\":\"main\","
    "\"values\":[1],\"control\":null,\"msg\":\"B>A@main#1\",\"writes\":{\"n\":1},\"vc\":{\"A\":4,"
    "\"B\":4}}\n"
    "{\"lifeline\":\"A\",\"index\":5,\"kind\":\"choice\",\"construct\":\"while#1\",\"value\":true,"
    "\"writes\":{},\"vc\":{\"A\":5,\"B\":4}}\n"
    "{\"lifeline\":\"A\",\"index\":6,\"kind\":\"send\",\"to\":\"B\",\"channel\":\"main\","
    "\"values\":[true],\"control\":\"while#1\",\"msg\":\"A>B@main#3\",\"writes\":{},\"vc\":{\"A\":"
    "6,\"B\":4}}\n"
    "{\"lifeline\":\"A\",\"index\":7,\"kind\":\"send\",\"to\":\"B\",\"channel\":\"main\","
    "\"values\":[1],\"control\":null,\"msg\":\"A>B@main#4\",\"writes\":{},\"vc\":{\"A\":7,\"B\":4}}"
    "\n"
    "{\"lifeline\":\"B\",\"index\":5,\"kind\":\"recv\",\"from\":\"A\",\"channel\":\"main\","
    "\"values\":[true],\"control\":\"while#1\",\"msg\":\"A>B@main#3\",\"writes\":{},\"vc\":{\"A\":"
    "6,\"B\":5}}\n"
    "{\"lifeline\":\"B\",\"index\":6,\"kind\":\"recv\",\"from\":\"A\",\"channel\":\"main\","
    "\"values\":[1],\"control\":null,\"msg\":\"A>B@main#4\",\"writes\":{\"n\":1},\"vc\":{\"A\":7,"
    "\"B\":6}}\n"
    "{\"lifeline\":\"B\",\"index\":7,\"kind\":\"act\",\"action\":\"inc\",\"attempts\":1,\"writes\":"
    "{\"n\":2},\"vc\":{\"A\":7,\"B\":7}}\n"
    "{\"lifeline\":\"B\",\"index\":8,\"kind\":\"send\",\"to\":\"A\",\"channel\":\"main\","
    "\"values\":[2],\"control\":null,\"msg\":\"B>A@main#2\",\"writes\":{},\"vc\":{\"A\":7,\"B\":8}}"
    "\n"
    "{\"lifeline\":\"A\",\"index\":8,\"kind\":\"recv\",\"from\":\"B\",\"channel\":\"main\","
    "\"values\":[2],\"control\":null,\"msg\":\"B>A@main#2\",\"writes\":{\"n\":2},\"vc\":{\"A\":8,"
    "\"B\":8}}\n"
    "{\"lifeline\":\"A\",\"index\":9,\"kind\":\"choice\",\"construct\":\"while#1\",\"value\":true,"
    "\"writes\":{},\"vc\":{\"A\":9,\"B\":8}}\n"
    "{\"lifeline\":\"A\",\"index\":10,\"kind\":\"send\",\"to\":\"B\",\"channel\":\"main\","
    "\"values\":[true],\"control\":\"while#1\",\"msg\":\"A>B@main#5\",\"writes\":{},\"vc\":{\"A\":"
    "10,\"B\":8}}\n"
    "{\"lifeline\":\"A\",\"index\":11,\"kind\":\"send\",\"to\":\"B\",\"channel\":\"main\","
    "\"values\":[2],\"control\":null,\"msg\":\"A>B@main#6\",\"writes\":{},\"vc\":{\"A\":11,\"B\":8}"
    "}\n"
    "{\"lifeline\":\"B\",\"index\":9,\"kind\":\"recv\",\"from\":\"A\",\"channel\":\"main\","
    "\"values\":[true],\"control\":\"while#1\",\"msg\":\"A>B@main#5\",\"writes\":{},\"vc\":{\"A\":"
    "10,\"B\":9}}\n"
    "{\"lifeline\":\"B\",\"index\":10,\"kind\":\"recv\",\"from\":\"A\",\"channel\":\"main\","
    "\"values\":[2],\"control\":null,\"msg\":\"A>B@main#6\",\"writes\":{\"n\":2},\"vc\":{\"A\":11,"
    "\"B\":10}}\n"
    "{\"lifeline\":\"B\",\"index\":11,\"kind\":\"act\",\"action\":\"inc\",\"attempts\":1,"
    "\"writes\":{\"n\":3},\"vc\":{\"A\":11,\"B\":11}}\n"
    "{\"lifeline\":\"B\",\"index\":12,\"kind\":\"send\",\"to\":\"A\",\"channel\":\"main\","
    "\"values\":[3],\"control\":null,\"msg\":\"B>A@main#3\",\"writes\":{},\"vc\":{\"A\":11,\"B\":"
    "12}}\n"
    "{\"lifeline\":\"A\",\"index\":12,\"kind\":\"recv\",\"from\":\"B\",\"channel\":\"main\","
    "\"values\":[3],\"control\":null,\"msg\":\"B>A@main#3\",\"writes\":{\"n\":3},\"vc\":{\"A\":12,"
    "\"B\":12}}\n"
    "{\"lifeline\":\"A\",\"index\":13,\"kind\":\"choice\",\"construct\":\"while#1\",\"value\":"
    "false,\"writes\":{},\"vc\":{\"A\":13,\"B\":12}}\n"
    "{\"lifeline\":\"A\",\"index\":14,\"kind\":\"send\",\"to\":\"B\",\"channel\":\"main\","
    "\"values\":[false],\"control\":\"while#1\",\"msg\":\"A>B@main#7\",\"writes\":{},\"vc\":{\"A\":"
    "14,\"B\":12}}\n"
    "{\"lifeline\":\"B\",\"index\":13,\"kind\":\"recv\",\"from\":\"A\",\"channel\":\"main\","
    "\"values\":[false],\"control\":\"while#1\",\"msg\":\"A>B@main#7\",\"writes\":{},\"vc\":{\"A\":"
    "14,\"B\":13}}\n"
    "{\"kind\":\"end\",\"result\":3}\n";

/* An llm action whose first answer does not type-check and is retried. */
static const char ask[] = "lifeline User, Bot;\n"
                          "var q: str;\n"
                          "var a: str;\n"
                          "llm answer(q: str) -> (a: str) {\n"
                          "    user = \"{q}\";\n"
                          "    parse = text;\n"
                          "    retries = 2;\n"
                          "}\n"
                          "workflow ask(q: str @ User) -> str {\n"
                          "    User(q) -> Bot(q);\n"
                          "    Bot: a = answer(q);\n"
                          "    Bot(a) -> User(a);\n"
                          "    return a @ User;\n"
                          "}\n";

/* zgc run ask.zg --arg q=hi --llm scripted:F --trace t.jsonl, F being
 * {"Bot.answer": [{"a": 5}, {"a": "fine"}]} */
static const char ask_trace[] =
    "{\"kind\":\"start\",\"lifeline\":\"User\",\"store\":{\"q\":\"hi\"}}\n"
    "{\"kind\":\"start\",\"lifeline\":\"Bot\",\"store\":{}}\n"
    "{\"lifeline\":\"User\",\"index\":1,\"kind\":\"send\",\"to\":\"Bot\",\"channel\":\"main\","
    "\"values\":[\"hi\"],\"control\":null,\"msg\":\"User>Bot@main#1\",\"writes\":{},\"vc\":{"
    "\"User\":1,\"Bot\":0}}\n"
    "{\"lifeline\":\"Bot\",\"index\":1,\"kind\":\"recv\",\"from\":\"User\",\"channel\":\"main\","
    "\"values\":[\"hi\"],\"control\":null,\"msg\":\"User>Bot@main#1\",\"writes\":{\"q\":\"hi\"},"
    "\"vc\":{\"User\":1,\"Bot\":1}}\n"
    "{\"lifeline\":\"Bot\",\"kind\":\"retry\",\"action\":\"answer\",\"attempt\":1,\"error\":"
    "\"scripted model: answer 1 for Bot.answer: `a`: expected str, got 5\",\"delay\":0.0}\n"
    "{\"lifeline\":\"Bot\",\"index\":2,\"kind\":\"act\",\"action\":\"answer\",\"attempts\":2,"
    "\"writes\":{\"a\":\"fine\"},\"vc\":{\"User\":1,\"Bot\":2}}\n"
    "{\"lifeline\":\"Bot\",\"index\":3,\"kind\":\"send\",\"to\":\"User\",\"channel\":\"main\","
    "\"values\":[\"fine\"],\"control\":null,\"msg\":\"Bot>User@main#1\",\"writes\":{},\"vc\":{"
    "\"User\":1,\"Bot\":3}}\n"
    "{\"lifeline\":\"User\",\"index\":2,\"kind\":\"recv\",\"from\":\"Bot\",\"channel\":\"main\","
    "\"values\":[\"fine\"],\"control\":null,\"msg\":\"Bot>User@main#1\",\"writes\":{\"a\":\"fine\"}"
    ",\"vc\":{\"User\":2,\"Bot\":3}}\n"
    "{\"kind\":\"end\",\"result\":\"fine\"}\n";

static ZtModel *model_of(const char *src)
{
    FILE *diag = fopen("/dev/null", "w");
    ZtModel *m = zt_model_new("w.zg", src, strlen(src), NULL, diag);
    fclose(diag);
    cr_assert_not_null(m, "the workflow does not compile");
    return m;
}

static int check(const char *src, const char *trace, char **msg, ZtStats *st)
{
    ZtModel *m = model_of(src);
    int rc = zt_check(m, "t.jsonl", trace, strlen(trace), msg, st);
    zt_model_free(m);
    return rc;
}

static void expect_fail(const char *src, const char *trace, const char *want)
{
    char *msg = NULL;
    int rc = check(src, trace, &msg, NULL);
    cr_assert_eq(rc, 1, "the forged trace passed:\n%s", trace);
    cr_assert(strstr(msg, want), "message `%s` lacks `%s`", msg, want);
    free(msg);
}

static void expect_pass(const char *src, const char *trace, ZtStats *st)
{
    char *msg = NULL;
    int rc = check(src, trace, &msg, st);
    cr_assert_eq(rc, 0, "%s", msg ? msg : "");
}

Test(forged, the_real_traces_pass)
{
    ZtStats st;
    expect_pass(increment, increment_trace, &st);
    cr_expect_eq(st.unverified, 0);
    expect_pass(ask, ask_trace, &st);
    cr_expect_eq(st.unverified, 1, "the llm's answer is the one unverified value");
}

/* A forged trace: the loop never runs and the `-> int` workflow
 * returns "abc", the start stores holding n = "abc". */
Test(forged, increment_loop_skipped_returns_abc)
{
    static const char forged[] =
        "{\"kind\":\"start\",\"lifeline\":\"A\",\"store\":{\"n\":\"abc\"}}\n"
        "{\"kind\":\"start\",\"lifeline\":\"B\",\"store\":{\"n\":\"abc\"}}\n"
        "{\"lifeline\":\"A\",\"index\":1,\"kind\":\"choice\",\"construct\":\"while#1\","
        "\"value\":false,\"writes\":{},\"vc\":{\"A\":1,\"B\":0}}\n"
        "{\"lifeline\":\"A\",\"index\":2,\"kind\":\"send\",\"to\":\"B\",\"channel\":\"main\","
        "\"values\":[false],\"control\":\"while#1\",\"msg\":\"A>B@main#1\",\"writes\":{},"
        "\"vc\":{\"A\":2,\"B\":0}}\n"
        "{\"lifeline\":\"B\",\"index\":1,\"kind\":\"recv\",\"from\":\"A\",\"channel\":\"main\","
        "\"values\":[false],\"control\":\"while#1\",\"msg\":\"A>B@main#1\",\"writes\":{},"
        "\"vc\":{\"A\":2,\"B\":1}}\n"
        "{\"kind\":\"end\",\"result\":\"abc\"}\n";
    expect_fail(increment, forged,
                "t.jsonl:1: start store of lifeline A: n is \"abc\", not a value of type int");
    /* with the declared start stores, the skipped loop contradicts its guard */
    char *a = subst_all(forged, "{\"n\":\"abc\"}", "{\"n\":0}");
    expect_fail(increment, a,
                "t.jsonl:3: lifeline A event 1: guard of while#1 `n < ROUNDS` is true on the "
                "store, but the recorded decision is false");
    /* with start stores that make the guard false, the stores themselves fail */
    char *b = subst_all(forged, "{\"n\":\"abc\"}", "{\"n\":3}");
    expect_fail(increment, b,
                "t.jsonl:1: start store of lifeline A: n is 3, but its declared "
                "default is 0");
    free(a);
    free(b);
}

Test(forged, result_of_the_wrong_type)
{
    char *a = subst(increment_trace, "{\"kind\":\"end\",\"result\":3}",
                    "{\"kind\":\"end\",\"result\":\"3\"}");
    expect_fail(increment, a, "t.jsonl:30: the result is \"3\", not a value of type int");
    free(a);
    char *b = subst(increment_trace, "{\"kind\":\"end\",\"result\":3}",
                    "{\"kind\":\"end\",\"result\":3.0}");
    expect_fail(increment, b, "t.jsonl:30: the result is 3.0, not a value of type int");
    free(b);
}

Test(forged, start_store_of_the_wrong_type)
{
    char *a = subst(increment_trace, "\"lifeline\":\"B\",\"store\":{\"n\":0}",
                    "\"lifeline\":\"B\",\"store\":{\"n\":false}");
    expect_fail(increment, a,
                "t.jsonl:2: start store of lifeline B: n is false, not a value of type int");
    free(a);
}

Test(forged, write_of_the_wrong_type)
{
    /* B's first increment writes "1": everything after it agrees */
    char *a = subst(increment_trace, "\"writes\":{\"n\":1},\"vc\":{\"A\":3,\"B\":3}",
                    "\"writes\":{\"n\":\"1\"},\"vc\":{\"A\":3,\"B\":3}");
    expect_fail(increment, a,
                "t.jsonl:8: lifeline B event 3: the written value of n is \"1\", not a value of "
                "type int");
    free(a);
    /* an llm's answer is not recomputed, but its type is checked: 5 for a
     * str output, consistent everywhere after */
    char *b = subst_all(ask_trace, "\"fine\"", "5");
    expect_fail(ask, b,
                "t.jsonl:6: lifeline Bot event 2: the written value of a is 5, not a value of "
                "type str");
    free(b);
    /* a float written as an integer */
    char *c = subst(increment_trace, "\"writes\":{\"n\":1},\"vc\":{\"A\":3,\"B\":3}",
                    "\"writes\":{\"n\":1.0},\"vc\":{\"A\":3,\"B\":3}");
    expect_fail(increment, c, "the written value of n is 1.0, not a value of type int");
    free(c);
}

Test(forged, start_store_differs_from_the_declared_default)
{
    char *a = subst(increment_trace, "\"lifeline\":\"A\",\"store\":{\"n\":0}",
                    "\"lifeline\":\"A\",\"store\":{\"n\":1}");
    expect_fail(increment, a,
                "t.jsonl:1: start store of lifeline A: n is 1, but its declared default is 0");
    free(a);
    char *b = subst(increment_trace, "\"lifeline\":\"B\",\"store\":{\"n\":0}",
                    "\"lifeline\":\"B\",\"store\":{}");
    expect_fail(increment, b, "t.jsonl:2: start store of lifeline B lacks n, whose default is 0");
    free(b);
    /* a variable without a default has no value at the start */
    char *c = subst(ask_trace, "\"lifeline\":\"Bot\",\"store\":{}",
                    "\"lifeline\":\"Bot\",\"store\":{\"a\":\"x\"}");
    expect_fail(ask, c,
                "t.jsonl:2: start store of lifeline Bot has a = \"x\", but a has no "
                "default and is not an input of Bot");
    free(c);
    /* an input is on its owner, with any value of its type */
    char *d = subst_all(ask_trace, "\"hi\"", "\"ho\"");
    expect_pass(ask, d, NULL);
    free(d);
    char *e = subst_all(ask_trace, "\"hi\"", "7");
    expect_fail(ask, e, "t.jsonl:1: start store of lifeline User: q is 7, not a value of type str");
    free(e);
    char *f = subst(ask_trace, "\"lifeline\":\"User\",\"store\":{\"q\":\"hi\"}",
                    "\"lifeline\":\"User\",\"store\":{}");
    expect_fail(ask, f, "t.jsonl:1: start store of lifeline User lacks q, an input of User");
    free(f);
}

Test(forged, wrong_attempts)
{
    /* a pure action makes one attempt */
    char *a = subst(increment_trace, "\"action\":\"inc\",\"attempts\":1",
                    "\"action\":\"inc\",\"attempts\":2");
    expect_fail(increment, a,
                "t.jsonl:8: lifeline B event 3: \"attempts\" is 2, but only llm actions make "
                "several attempts");
    free(a);
    char *b = subst(increment_trace, "\"action\":\"inc\",\"attempts\":1",
                    "\"action\":\"inc\",\"attempts\":0");
    expect_fail(increment, b, "t.jsonl:8: \"attempts\" must be a positive integer, not 0");
    free(b);
    /* the llm call: attempts against its retry lines and its retries (2) */
    char *c = subst(ask_trace, "\"attempts\":2", "\"attempts\":3");
    expect_fail(ask, c,
                "t.jsonl:6: lifeline Bot event 2: \"attempts\" is 3, but no call of `answer` has "
                "the retry lines of attempts 1 to 2 before it");
    free(c);
    char *d = subst(ask_trace, "\"attempts\":2", "\"attempts\":1");
    expect_fail(ask, d,
                "t.jsonl:5: lifeline Bot: a call of `answer` failed at attempt 1 and is retried, "
                "but no act event of it follows");
    free(d);
    char *e = subst(ask_trace, "\"attempts\":2", "\"attempts\":4");
    expect_fail(ask, e, "\"attempts\" is 4, but `answer` makes at most 3 attempts");
    free(e);
    char *f = subst(ask_trace, "\"attempt\":1,", "\"attempt\":2,");
    expect_fail(ask, f,
                "t.jsonl:5: lifeline Bot: a retry line of attempt 2 of `answer`, but no call of "
                "`answer` is at attempt 1");
    free(f);
    char *g = subst(ask_trace, "\"delay\":0.0", "\"delay\":-1.0");
    expect_fail(ask, g, "t.jsonl:5: \"delay\" must be a float of at least 0.0, not -1.0");
    free(g);
    char *h =
        subst(ask_trace, "\"action\":\"answer\",\"attempt\"", "\"action\":\"inc\",\"attempt\"");
    expect_fail(ask, h, "t.jsonl:5: a retry line of `inc`, which is no action of the workflow");
    free(h);
}

/* Computations the run would have stopped at: a trace that goes on is forged. */
Test(forged, run_time_errors)
{
    static const char src[] = "lifeline A;\n"
                              "var x: int = 4611686018427387904;\n"
                              "var d: bool = false;\n"
                              "workflow w() -> int {\n"
                              "    A: x = x + x;\n"
                              "    return x @ A;\n"
                              "}\n";
    static const char trace[] =
        "{\"kind\":\"start\",\"lifeline\":\"A\",\"store\":{\"x\":4611686018427387904,\"d\":false}}"
        "\n"
        "{\"lifeline\":\"A\",\"index\":1,\"kind\":\"act\",\"action\":null,\"attempts\":1,"
        "\"writes\":{\"x\":0},\"vc\":{\"A\":1}}\n"
        "{\"kind\":\"end\",\"result\":0}\n";
    expect_fail(src, trace,
                "t.jsonl:2: lifeline A event 1: computing the new value of x fails (integer "
                "overflow)");
    /* a plain guard that divides by zero */
    static const char src2[] = "lifeline A;\n"
                               "var x: int = 0;\n"
                               "var d: bool = false;\n"
                               "workflow w() -> bool {\n"
                               "    if 10 / x > 1 @ A { A: d = true; }\n"
                               "    return d @ A;\n"
                               "}\n";
    static const char trace2[] =
        "{\"kind\":\"start\",\"lifeline\":\"A\",\"store\":{\"x\":0,\"d\":false}}\n"
        "{\"lifeline\":\"A\",\"index\":1,\"kind\":\"choice\",\"construct\":\"if#1\",\"value\":"
        "false,\"writes\":{},\"vc\":{\"A\":1}}\n"
        "{\"kind\":\"end\",\"result\":false}\n";
    expect_fail(src2, trace2,
                "t.jsonl:2: lifeline A event 1: the guard of if#1 `10 / x > 1` fails "
                "on the store (division by zero)");
    /* a CPL atom: the monitor evaluates it at every event of its owner, so
     * the run stops at the first event where x is 0, before the choice */
    static const char src3[] = "lifeline A, B;\n"
                               "var x: int = 1;\n"
                               "var d: bool = false;\n"
                               "workflow w() -> bool {\n"
                               "    A: x = 0;\n"
                               "    A: x = 5;\n"
                               "    if once (10 / x > 1) @ A { A: d = true; }\n"
                               "    return d @ A;\n"
                               "}\n";
    static const char trace3[] =
        "{\"kind\":\"start\",\"lifeline\":\"A\",\"store\":{\"x\":1,\"d\":false}}\n"
        "{\"kind\":\"start\",\"lifeline\":\"B\",\"store\":{\"x\":1,\"d\":false}}\n"
        "{\"lifeline\":\"A\",\"index\":1,\"kind\":\"act\",\"action\":null,\"attempts\":1,"
        "\"writes\":{\"x\":0},\"vc\":{\"A\":1,\"B\":0}}\n"
        "{\"lifeline\":\"A\",\"index\":2,\"kind\":\"act\",\"action\":null,\"attempts\":1,"
        "\"writes\":{\"x\":5},\"vc\":{\"A\":2,\"B\":0}}\n"
        "{\"lifeline\":\"A\",\"index\":3,\"kind\":\"choice\",\"construct\":\"if#1\",\"value\":"
        "true,\"writes\":{},\"vc\":{\"A\":3,\"B\":0}}\n"
        "{\"lifeline\":\"A\",\"index\":4,\"kind\":\"act\",\"action\":null,\"attempts\":1,"
        "\"writes\":{\"d\":true},\"vc\":{\"A\":4,\"B\":0}}\n"
        "{\"kind\":\"end\",\"result\":true}\n";
    expect_fail(src3, trace3,
                "t.jsonl:3: lifeline A event 1: the guard atom `10 / x > 1` fails here (division "
                "by zero)");
}

Test(forged, lines_out_of_their_places)
{
    /* a line of a kind the runtime does not write, an unknown field, a
     * missing one */
    char *a = subst(increment_trace, "{\"kind\":\"end\"", "{\"kind\":\"note\"}\n{\"kind\":\"end\"");
    expect_fail(increment, a, "t.jsonl:30: unknown line kind \"note\"");
    free(a);
    char *b = subst(increment_trace, "\"attempts\":1,", "\"attempts\":1,\"extra\":0,");
    expect_fail(increment, b, "t.jsonl:8: a \"act\" line has an unknown field \"extra\"");
    free(b);
    char *c = subst(increment_trace, "\"control\":null,", "");
    expect_fail(increment, c, "t.jsonl:5: a \"send\" line lacks \"control\"");
    free(c);
    /* the end line is the last */
    char *d = subst(increment_trace, "{\"kind\":\"end\",\"result\":3}\n", "");
    size_t n = strlen(d);
    char *e = malloc(n + 64);
    strcpy(e, "{\"kind\":\"end\",\"result\":3}\n");
    strcat(e, d);
    expect_fail(increment, e, "t.jsonl:2: a line after the end line");
    free(d);
    free(e);
    /* the start lines come first, in declaration order */
    char *f = subst(increment_trace,
                    "{\"kind\":\"start\",\"lifeline\":\"A\",\"store\":{\"n\":0}}\n"
                    "{\"kind\":\"start\",\"lifeline\":\"B\",\"store\":{\"n\":0}}\n",
                    "{\"kind\":\"start\",\"lifeline\":\"B\",\"store\":{\"n\":0}}\n"
                    "{\"kind\":\"start\",\"lifeline\":\"A\",\"store\":{\"n\":0}}\n");
    expect_fail(increment, f, "t.jsonl:1: the start line of lifeline B is not in its place");
    free(f);
}

Test(forged, per_lifeline_results)
{
    /* per-lifeline traces put together: A's end line must hold component 0 */
    char *a = subst(ask_trace, "{\"kind\":\"start\",\"lifeline\":\"Bot\",\"store\":{}}\n", "");
    /* split into User's and Bot's traces */
    ZBuf u = {0}, bt = {0};
    for (const char *p = a; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = (size_t)(nl - p) + 1;
        if (strstr(p, "\"kind\":\"end\"") == p + 1) break;
        bool bot = strncmp(p, "{\"lifeline\":\"Bot\"", 17) == 0;
        zu_buf_printf(bot ? &bt : &u, "%.*s", (int)len, p);
        p = nl + 1;
    }
    ZBuf t = {0};
    zu_buf_puts(&t, u.data);
    zu_buf_puts(&t, "{\"kind\":\"end\",\"result\":{\"0\": \"fine\"}}\n");
    zu_buf_puts(&t, "{\"kind\":\"start\",\"lifeline\":\"Bot\",\"store\":{}}\n");
    zu_buf_puts(&t, bt.data);
    zu_buf_puts(&t, "{\"kind\":\"end\",\"result\":{}}\n");
    expect_pass(ask, t.data, NULL);
    char *b = subst(t.data, "{\"0\": \"fine\"}", "{}");
    expect_fail(ask, b, "lifeline User: the end line lacks result component 0 (a @ User)");
    char *c = subst(t.data, "\"result\":{}", "\"result\":{\"0\": \"fine\"}");
    expect_fail(ask, c, "lifeline Bot: result component 0 is returned at User, not at Bot");
    free(a);
    free(b);
    free(c);
    zu_buf_free(&u);
    zu_buf_free(&bt);
    zu_buf_free(&t);
}

Test(forged, retry_line_before_the_call_began)
{
    /* the retry line of Bot's call moved before Bot's receive, which comes
     * before the call on its thread */
    const char *retry = strstr(ask_trace, "{\"lifeline\":\"Bot\",\"kind\":\"retry\"");
    const char *recv = strstr(ask_trace, "{\"lifeline\":\"Bot\",\"index\":1,");
    cr_assert(retry && recv && recv < retry);
    const char *retry_end = strchr(retry, '\n') + 1;
    ZBuf b = {0};
    zu_buf_printf(&b, "%.*s", (int)(recv - ask_trace), ask_trace);
    zu_buf_printf(&b, "%.*s", (int)(retry_end - retry), retry);
    zu_buf_printf(&b, "%.*s", (int)(retry - recv), recv);
    zu_buf_puts(&b, retry_end);
    expect_fail(ask, b.data,
                "t.jsonl:4: lifeline Bot: a retry line of `answer` before event 1, but the call "
                "it belongs to (event 2) begins after event 1 of its thread");
    zu_buf_free(&b);
}

Test(forged, acknowledgement_is_true)
{
    static const char src[] = "lifeline A;\n"
                              "var ok: bool = false;\n"
                              "human done() -> bool {\n"
                              "    kind = ack;\n"
                              "    prompt = \"Done?\";\n"
                              "}\n"
                              "workflow w() -> bool {\n"
                              "    A: ok = done();\n"
                              "    return ok @ A;\n"
                              "}\n";
    static const char trace[] =
        "{\"kind\":\"start\",\"lifeline\":\"A\",\"store\":{\"ok\":false}}\n"
        "{\"lifeline\":\"A\",\"index\":1,\"kind\":\"act\",\"action\":\"done\",\"attempts\":1,"
        "\"writes\":{\"ok\":true},\"vc\":{\"A\":1}}\n"
        "{\"kind\":\"end\",\"result\":true}\n";
    ZtStats st;
    expect_pass(src, trace, &st);
    cr_expect_eq(st.unverified, 0, "an acknowledgement is recomputed");
    char *a = subst_all(trace, "true", "false");
    expect_fail(src, a,
                "t.jsonl:2: lifeline A event 1: the acknowledgement ok is false, "
                "expected true");
    free(a);
}

/* An expression as deep as the parser allows is recomputed, not left
 * unverified. */
Test(forged, deep_expressions_are_recomputed)
{
    ZBuf src = {0};
    zu_buf_puts(&src, "lifeline A;\nvar x: int = 1;\nvar y: int = 0;\n"
                      "workflow w() -> int {\n    A: y = x");
    for (int i = 1; i < 990; i++) zu_buf_puts(&src, " + x");
    zu_buf_puts(&src, ";\n    return y @ A;\n}\n");
    static const char trace[] =
        "{\"kind\":\"start\",\"lifeline\":\"A\",\"store\":{\"x\":1,\"y\":0}}\n"
        "{\"lifeline\":\"A\",\"index\":1,\"kind\":\"act\",\"action\":null,\"attempts\":1,"
        "\"writes\":{\"y\":990},\"vc\":{\"A\":1}}\n"
        "{\"kind\":\"end\",\"result\":990}\n";
    ZtStats st;
    expect_pass(src.data, trace, &st);
    cr_expect_eq(st.values, 1);
    cr_expect_eq(st.unverified, 0);
    char *a = subst_all(trace, "990", "991");
    expect_fail(src.data, a,
                "t.jsonl:2: lifeline A event 1: the new value of y is 991, expected 990");
    free(a);
    zu_buf_free(&src);
}
