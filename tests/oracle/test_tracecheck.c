/* Unit tests for the trace checker (oracle/): a valid trace passes,
 * hand-corrupted ones fail with the expected message. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "trace_edit.h"

/* B decides with a CPL guard (prev) and, when it holds, sends back. */
static const char workflow[] = "lifeline A, B;\n"
                               "var x: int = 0;\n"
                               "var y: int = 0;\n"
                               "var ok: bool = false;\n"
                               "workflow w() -> int {\n"
                               "    A: x = x + 1;\n"
                               "    A(x) -> B(y);\n"
                               "    if prev y == 1 @ B {\n"
                               "        B: ok = true;\n"
                               "        B(y) -> A(x);\n"
                               "    }\n"
                               "    return x @ A;\n"
                               "}\n";

/* The trace the runtime writes for it. */
static const char good[] =
    "{\"kind\":\"start\",\"lifeline\":\"A\",\"store\":{\"x\":0,\"y\":0,\"ok\":false}}\n"
    "{\"kind\":\"start\",\"lifeline\":\"B\",\"store\":{\"x\":0,\"y\":0,\"ok\":false}}\n"
    "{\"lifeline\":\"A\",\"index\":1,\"kind\":\"act\",\"action\":null,\"attempts\":1,\"writes\":{"
    "\"x\":1},\"vc\":{\"A\":1,\"B\":0}}\n"
    "{\"lifeline\":\"A\",\"index\":2,\"kind\":\"send\",\"to\":\"B\",\"channel\":\"main\","
    "\"values\":[1],\"control\":null,\"msg\":\"A>B@main#1\",\"writes\":{},\"vc\":{\"A\":2,\"B\":0}}"
    "\n"
    "{\"lifeline\":\"B\",\"index\":1,\"kind\":\"recv\",\"from\":\"A\",\"channel\":\"main\","
    "\"values\":[1],\"control\":null,\"msg\":\"A>B@main#1\",\"writes\":{\"y\":1},\"vc\":{\"A\":2,"
    "\"B\":1}}\n"
    "{\"lifeline\":\"B\",\"index\":2,\"kind\":\"choice\",\"construct\":\"if#1\",\"value\":true,"
    "\"writes\":{},\"vc\":{\"A\":2,\"B\":2}}\n"
    "{\"lifeline\":\"B\",\"index\":3,\"kind\":\"send\",\"to\":\"A\",\"channel\":\"main\","
    "\"values\":[true],\"control\":\"if#1\",\"msg\":\"B>A@main#1\",\"writes\":{},\"vc\":{\"A\":2,"
    "\"B\":3}}\n"
    "{\"lifeline\":\"B\",\"index\":4,\"kind\":\"act\",\"action\":null,\"attempts\":1,\"writes\":{"
    "\"ok\":true},\"vc\":{\"A\":2,\"B\":4}}\n"
    "{\"lifeline\":\"B\",\"index\":5,\"kind\":\"send\",\"to\":\"A\",\"channel\":\"main\","
    "\"values\":[1],\"control\":null,\"msg\":\"B>A@main#2\",\"writes\":{},\"vc\":{\"A\":2,\"B\":5}}"
    "\n"
    "{\"lifeline\":\"A\",\"index\":3,\"kind\":\"recv\",\"from\":\"B\",\"channel\":\"main\","
    "\"values\":[true],\"control\":\"if#1\",\"msg\":\"B>A@main#1\",\"writes\":{},\"vc\":{\"A\":3,"
    "\"B\":3}}\n"
    "{\"lifeline\":\"A\",\"index\":4,\"kind\":\"recv\",\"from\":\"B\",\"channel\":\"main\","
    "\"values\":[1],\"control\":null,\"msg\":\"B>A@main#2\",\"writes\":{\"x\":1},\"vc\":{\"A\":4,"
    "\"B\":5}}\n"
    "{\"kind\":\"end\",\"result\":1}\n";

static ZtModel *model(void)
{
    FILE *diag = fopen("/dev/null", "w");
    ZtModel *m = zt_model_new("w.zg", workflow, strlen(workflow), NULL, diag);
    fclose(diag);
    cr_assert_not_null(m, "the workflow does not compile");
    return m;
}

static void expect_fail(const char *trace, const char *want1, const char *want2)
{
    ZtModel *m = model();
    char *msg = NULL;
    int rc = zt_check(m, "t.jsonl", trace, strlen(trace), &msg, NULL);
    cr_assert_eq(rc, 1, "the corrupted trace passed");
    cr_assert_not_null(msg);
    cr_assert(strstr(msg, want1), "message `%s` lacks `%s`", msg, want1);
    if (want2) cr_assert(strstr(msg, want2), "message `%s` lacks `%s`", msg, want2);
    free(msg);
    zt_model_free(m);
}

Test(tracecheck, valid_trace_passes)
{
    ZtModel *m = model();
    char *msg = NULL;
    ZtStats st;
    int rc = zt_check(m, "t.jsonl", good, strlen(good), &msg, &st);
    cr_assert_eq(rc, 0, "%s", msg ? msg : "");
    cr_assert_null(msg);
    cr_assert_eq(st.events, 9);
    cr_assert_eq(st.messages, 3);
    cr_assert_eq(st.cpl_checked, 1);
    cr_assert_eq(st.unverified, 0);
    zt_model_free(m);
}

Test(tracecheck, changed_value)
{
    /* B sends 2 where its y is 1 (both sides agree, so only the store can tell) */
    char *a = subst(good, "\"values\":[1],\"control\":null,\"msg\":\"B>A@main#2\"",
                    "\"values\":[2],\"control\":null,\"msg\":\"B>A@main#2\"");
    char *b =
        subst(a, "\"values\":[1],\"control\":null,\"msg\":\"B>A@main#2\",\"writes\":{\"x\":1}",
              "\"values\":[2],\"control\":null,\"msg\":\"B>A@main#2\",\"writes\":{\"x\":2}");
    expect_fail(b, "t.jsonl:9: lifeline B event 5: sent value 1 is 2, expected 1", NULL);
    free(a);
    free(b);
}

Test(tracecheck, receive_differs_from_send)
{
    char *a =
        subst(good, "\"values\":[1],\"control\":null,\"msg\":\"A>B@main#1\",\"writes\":{\"y\":1}",
              "\"values\":[7],\"control\":null,\"msg\":\"A>B@main#1\",\"writes\":{\"y\":7}");
    expect_fail(a, "t.jsonl:5: lifeline B event 1: receive of \"A>B@main#1\" has values [7]",
                "has [1]");
    free(a);
}

Test(tracecheck, vc_off_by_one)
{
    char *a = subst(good, "\"writes\":{\"ok\":true},\"vc\":{\"A\":2,\"B\":4}",
                    "\"writes\":{\"ok\":true},\"vc\":{\"A\":1,\"B\":4}");
    expect_fail(a,
                "t.jsonl:8: lifeline B event 4: vc[A] is 1, but 2 events of A causally precede it",
                NULL);
    free(a);
}

Test(tracecheck, receive_before_send)
{
    /* A's receive of B's control message is moved to A's first event,
     * before A's send to B: the send that caused B's choice now follows
     * the receive of the choice's broadcast */
    const char *trace =
        "{\"kind\":\"start\",\"lifeline\":\"A\",\"store\":{\"x\":0,\"y\":0,\"ok\":false}}\n"
        "{\"kind\":\"start\",\"lifeline\":\"B\",\"store\":{\"x\":0,\"y\":0,\"ok\":false}}\n"
        "{\"lifeline\":\"A\",\"index\":1,\"kind\":\"recv\",\"from\":\"B\",\"channel\":\"main\","
        "\"values\":[true],\"control\":\"if#1\",\"msg\":\"B>A@main#1\",\"writes\":{},\"vc\":{\"A\":"
        "1,\"B\":3}}\n"
        "{\"lifeline\":\"A\",\"index\":2,\"kind\":\"act\",\"action\":null,\"attempts\":1,"
        "\"writes\":{\"x\":1},\"vc\":{\"A\":2,\"B\":3}}\n"
        "{\"lifeline\":\"A\",\"index\":3,\"kind\":\"send\",\"to\":\"B\",\"channel\":\"main\","
        "\"values\":[1],\"control\":null,\"msg\":\"A>B@main#1\",\"writes\":{},\"vc\":{\"A\":3,"
        "\"B\":3}}\n"
        "{\"lifeline\":\"B\",\"index\":1,\"kind\":\"recv\",\"from\":\"A\",\"channel\":\"main\","
        "\"values\":[1],\"control\":null,\"msg\":\"A>B@main#1\",\"writes\":{\"y\":1},\"vc\":{\"A\":"
        "3,\"B\":1}}\n"
        "{\"lifeline\":\"B\",\"index\":2,\"kind\":\"choice\",\"construct\":\"if#1\",\"value\":true,"
        "\"writes\":{},\"vc\":{\"A\":3,\"B\":2}}\n"
        "{\"lifeline\":\"B\",\"index\":3,\"kind\":\"send\",\"to\":\"A\",\"channel\":\"main\","
        "\"values\":[true],\"control\":\"if#1\",\"msg\":\"B>A@main#1\",\"writes\":{},\"vc\":{\"A\":"
        "3,\"B\":3}}\n"
        "{\"lifeline\":\"B\",\"index\":4,\"kind\":\"act\",\"action\":null,\"attempts\":1,"
        "\"writes\":{\"ok\":true},\"vc\":{\"A\":3,\"B\":4}}\n"
        "{\"lifeline\":\"B\",\"index\":5,\"kind\":\"send\",\"to\":\"A\",\"channel\":\"main\","
        "\"values\":[1],\"control\":null,\"msg\":\"B>A@main#2\",\"writes\":{},\"vc\":{\"A\":3,"
        "\"B\":5}}\n"
        "{\"lifeline\":\"A\",\"index\":4,\"kind\":\"recv\",\"from\":\"B\",\"channel\":\"main\","
        "\"values\":[1],\"control\":null,\"msg\":\"B>A@main#2\",\"writes\":{\"x\":1},\"vc\":{\"A\":"
        "4,\"B\":5}}\n"
        "{\"kind\":\"end\",\"result\":1}\n";
    expect_fail(trace, "t.jsonl:3: lifeline A event 1: the causal order has a cycle",
                "a receive happens before its send");
}

Test(tracecheck, reordered_channel)
{
    /* A takes B's second message before the first */
    char *a = subst(good, "\"msg\":\"B>A@main#1\",\"writes\":{},\"vc\":{\"A\":3",
                    "\"msg\":\"B>A@main#@\",\"writes\":{},\"vc\":{\"A\":3");
    char *b = subst(a, "\"msg\":\"B>A@main#2\",\"writes\":{\"x\":1}",
                    "\"msg\":\"B>A@main#1\",\"writes\":{\"x\":1}");
    char *c = subst(b, "\"msg\":\"B>A@main#@\"", "\"msg\":\"B>A@main#2\"");
    expect_fail(c,
                "t.jsonl:10: lifeline A event 3: FIFO: receives \"B>A@main#2\", expected the "
                "channel's next message \"B>A@main#1\"",
                NULL);
    free(a);
    free(b);
    free(c);
}

Test(tracecheck, cpl_choice_flipped)
{
    /* B records false although prev (y == 1) holds; the rest of the run is
     * consistent with false, so only the guard check can tell */
    const char *trace =
        "{\"kind\":\"start\",\"lifeline\":\"A\",\"store\":{\"x\":0,\"y\":0,\"ok\":false}}\n"
        "{\"kind\":\"start\",\"lifeline\":\"B\",\"store\":{\"x\":0,\"y\":0,\"ok\":false}}\n"
        "{\"lifeline\":\"A\",\"index\":1,\"kind\":\"act\",\"action\":null,\"attempts\":1,"
        "\"writes\":{\"x\":1},\"vc\":{\"A\":1,\"B\":0}}\n"
        "{\"lifeline\":\"A\",\"index\":2,\"kind\":\"send\",\"to\":\"B\",\"channel\":\"main\","
        "\"values\":[1],\"control\":null,\"msg\":\"A>B@main#1\",\"writes\":{},\"vc\":{\"A\":2,"
        "\"B\":0}}\n"
        "{\"lifeline\":\"B\",\"index\":1,\"kind\":\"recv\",\"from\":\"A\",\"channel\":\"main\","
        "\"values\":[1],\"control\":null,\"msg\":\"A>B@main#1\",\"writes\":{\"y\":1},\"vc\":{\"A\":"
        "2,\"B\":1}}\n"
        "{\"lifeline\":\"B\",\"index\":2,\"kind\":\"choice\",\"construct\":\"if#1\",\"value\":"
        "false,\"writes\":{},\"vc\":{\"A\":2,\"B\":2}}\n"
        "{\"lifeline\":\"B\",\"index\":3,\"kind\":\"send\",\"to\":\"A\",\"channel\":\"main\","
        "\"values\":[false],\"control\":\"if#1\",\"msg\":\"B>A@main#1\",\"writes\":{},\"vc\":{"
        "\"A\":2,\"B\":3}}\n"
        "{\"lifeline\":\"A\",\"index\":3,\"kind\":\"recv\",\"from\":\"B\",\"channel\":\"main\","
        "\"values\":[false],\"control\":\"if#1\",\"msg\":\"B>A@main#1\",\"writes\":{},\"vc\":{"
        "\"A\":3,\"B\":3}}\n"
        "{\"kind\":\"end\",\"result\":1}\n";
    expect_fail(
        trace,
        "t.jsonl:6: lifeline B event 2: CPL guard of if#1 `prev y == 1` is true by Definition 3",
        "the recorded decision is false");
}

Test(tracecheck, missing_event)
{
    /* the last message is lost on both sides */
    char *a = drop_line(good, "\"msg\":\"B>A@main#2\",\"writes\":{},");
    char *b = drop_line(a, "\"msg\":\"B>A@main#2\",\"writes\":{\"x\":1}");
    expect_fail(b, "t.jsonl:8: lifeline B: erasure: missing event: the trace ends after event 4",
                "expects send to A on main (line 10) next");
    free(a);
    free(b);
}

Test(tracecheck, control_message_of_the_wrong_tag)
{
    char *a = subst(good, "\"control\":\"if#1\",\"msg\":\"B>A@main#1\"",
                    "\"control\":\"while#7\",\"msg\":\"B>A@main#1\"");
    char *b = subst(a, "\"control\":\"if#1\",\"msg\":\"B>A@main#1\"",
                    "\"control\":\"while#7\",\"msg\":\"B>A@main#1\"");
    expect_fail(b, "t.jsonl:7: lifeline B event 3: control messages differ from the projection",
                "got send to A on main (control while#7, decision true), expected send to A on "
                "main (control if#1");
    free(a);
    free(b);
}

Test(tracecheck, wrong_result)
{
    char *a = subst(good, "{\"kind\":\"end\",\"result\":1}", "{\"kind\":\"end\",\"result\":2}");
    expect_fail(a, "t.jsonl:12: the result is 2, but the returned variable x holds 1 on A", NULL);
    free(a);
}

Test(tracecheck, malformed_lines)
{
    expect_fail("{\"kind\":\"start\"", "t.jsonl:1: not JSON", NULL);
    expect_fail("[1,2]\n", "t.jsonl:1: not a JSON object", NULL);
    char *a = subst(good, "{\"lifeline\":\"B\",\"index\":4,", "{\"lifeline\":\"B\",\"index\":5,");
    expect_fail(a, "t.jsonl:8: lifeline B: event index 5, expected 4", NULL);
    free(a);
    char *b = drop_line(good, "{\"kind\":\"end\"");
    expect_fail(b, "the trace has no end line", NULL);
    free(b);
    char *c = subst(good, "\"writes\":{\"ok\":true}", "\"writes\":{\"nope\":true}");
    expect_fail(c, "t.jsonl:8: \"writes\" names an unknown variable \"nope\"", NULL);
    free(c);
}

Test(tracecheck, per_lifeline_traces_concatenated)
{
    /* what one process per lifeline writes: each file has its start, its
     * events and an end line with its result components */
    const char *trace =
        "{\"kind\":\"start\",\"lifeline\":\"A\",\"store\":{\"x\":0,\"y\":0,\"ok\":false}}\n"
        "{\"lifeline\":\"A\",\"index\":1,\"kind\":\"act\",\"action\":null,\"attempts\":1,"
        "\"writes\":{\"x\":1},\"vc\":{\"A\":1,\"B\":0}}\n"
        "{\"lifeline\":\"A\",\"index\":2,\"kind\":\"send\",\"to\":\"B\",\"channel\":\"main\","
        "\"values\":[1],\"control\":null,\"msg\":\"A>B@main#1\",\"writes\":{},\"vc\":{\"A\":2,"
        "\"B\":0}}\n"
        "{\"lifeline\":\"A\",\"index\":3,\"kind\":\"recv\",\"from\":\"B\",\"channel\":\"main\","
        "\"values\":[true],\"control\":\"if#1\",\"msg\":\"B>A@main#1\",\"writes\":{},\"vc\":{\"A\":"
        "3,\"B\":3}}\n"
        "{\"lifeline\":\"A\",\"index\":4,\"kind\":\"recv\",\"from\":\"B\",\"channel\":\"main\","
        "\"values\":[1],\"control\":null,\"msg\":\"B>A@main#2\",\"writes\":{\"x\":1},\"vc\":{\"A\":"
        "4,\"B\":5}}\n"
        "{\"kind\":\"end\",\"result\":{\"0\": 1}}\n"
        "{\"kind\":\"start\",\"lifeline\":\"B\",\"store\":{\"x\":0,\"y\":0,\"ok\":false}}\n"
        "{\"lifeline\":\"B\",\"index\":1,\"kind\":\"recv\",\"from\":\"A\",\"channel\":\"main\","
        "\"values\":[1],\"control\":null,\"msg\":\"A>B@main#1\",\"writes\":{\"y\":1},\"vc\":{\"A\":"
        "2,\"B\":1}}\n"
        "{\"lifeline\":\"B\",\"index\":2,\"kind\":\"choice\",\"construct\":\"if#1\",\"value\":true,"
        "\"writes\":{},\"vc\":{\"A\":2,\"B\":2}}\n"
        "{\"lifeline\":\"B\",\"index\":3,\"kind\":\"send\",\"to\":\"A\",\"channel\":\"main\","
        "\"values\":[true],\"control\":\"if#1\",\"msg\":\"B>A@main#1\",\"writes\":{},\"vc\":{\"A\":"
        "2,\"B\":3}}\n"
        "{\"lifeline\":\"B\",\"index\":4,\"kind\":\"act\",\"action\":null,\"attempts\":1,"
        "\"writes\":{\"ok\":true},\"vc\":{\"A\":2,\"B\":4}}\n"
        "{\"lifeline\":\"B\",\"index\":5,\"kind\":\"send\",\"to\":\"A\",\"channel\":\"main\","
        "\"values\":[1],\"control\":null,\"msg\":\"B>A@main#2\",\"writes\":{},\"vc\":{\"A\":2,"
        "\"B\":5}}\n"
        "{\"kind\":\"end\",\"result\":{}}\n";
    ZtModel *m = model();
    char *msg = NULL;
    int rc = zt_check(m, "t.jsonl", trace, strlen(trace), &msg, NULL);
    cr_assert_eq(rc, 0, "%s", msg ? msg : "");
    free(msg);
    zt_model_free(m);
}

/* ===================================================================== */
/* CPL guards by Definition 3 over the source tree                        */
/* ===================================================================== */

/* B never writes x or f; A sees B's y = 1.  Atoms are comparisons,
 * Boolean variables and literals: the connectives between them are
 * formulas, and only an atom with an undefined term is false. */
static const char atoms_workflow[] =
    "lifeline A, B;\n"
    "var x: int;\n"
    "var f: bool;\n"
    "var y: int = 0;\n"
    "var r: bool = false;\n"
    "guard either = @B.x == 0 || y == 1;\n"
    "workflow w() -> int {\n"
    "    B: y = 1;\n"
    "    B(y) -> A(y);\n"
    "    if @B.x == 0 || y == 1 @ A { A: r = true; }\n"                       /* if#1 */
    "    if !(@B.x == 0) @ A { A: r = true; }\n"                              /* if#2 */
    "    if y == 1 && !(@B.x > 3) @ A { A: r = true; }\n"                     /* if#3 */
    "    if (@B.x == 0 ? false : true) @ A { A: r = true; }\n"                /* if#4 */
    "    if @B.x != 0 @ A { A: r = true; }\n"                                 /* if#5 */
    "    if @B.f != true @ A { A: r = true; }\n"                              /* if#6 */
    "    if either && seen A && !(past (@B.x == 1)) @ A { A: r = true; }\n"   /* if#7 */
    "    if historically (@B.x == 0 || y == 1) @ A { A: r = true; }\n"        /* if#8 */
    "    if @B.x == 0 || once (y == 1) @ A { A: r = true; }\n"                /* if#9 */
    "    if (@B.f == (@B.x > 0)) && @B(prev (y == 1)) @ A { A: r = true; }\n" /* if#10 */
    "    return y @ A;\n"
    "}\n";

/* Definition 3 of each guard above at its choice event: `@B.x != 0` is a
 * comparison, an atom with an undefined term; `@B.f != true` is `!=`
 * between formulas, the atom @B.f being false. */
static const bool atoms_want[] = {true, true, true, true, false, true, true, true, true, true};
#define NATOMS ((int)(sizeof atoms_want / sizeof atoms_want[0]))

/* The run for decisions dec[]: B writes y and sends it; A receives it,
 * then decides each guard in turn, writing r after each true one. */
static char *atoms_trace(const bool *dec)
{
    ZBuf b = {0};
    const char *store = "{\"y\":0,\"r\":false}";
    zu_buf_printf(&b, "{\"kind\":\"start\",\"lifeline\":\"A\",\"store\":%s}\n", store);
    zu_buf_printf(&b, "{\"kind\":\"start\",\"lifeline\":\"B\",\"store\":%s}\n", store);
    zu_buf_puts(&b, "{\"lifeline\":\"B\",\"index\":1,\"kind\":\"act\",\"action\":null,"
                    "\"attempts\":1,\"writes\":{\"y\":1},\"vc\":{\"A\":0,\"B\":1}}\n");
    zu_buf_puts(&b, "{\"lifeline\":\"B\",\"index\":2,\"kind\":\"send\",\"to\":\"A\",\"channel\":"
                    "\"main\",\"values\":[1],\"control\":null,\"msg\":\"B>A@main#1\",\"writes\":{},"
                    "\"vc\":{\"A\":0,\"B\":2}}\n");
    zu_buf_puts(&b, "{\"lifeline\":\"A\",\"index\":1,\"kind\":\"recv\",\"from\":\"B\",\"channel\":"
                    "\"main\",\"values\":[1],\"control\":null,\"msg\":\"B>A@main#1\",\"writes\":{"
                    "\"y\":1},\"vc\":{\"A\":1,\"B\":2}}\n");
    int i = 1;
    for (int k = 0; k < NATOMS; k++) {
        i++;
        zu_buf_printf(
            &b,
            "{\"lifeline\":\"A\",\"index\":%d,\"kind\":\"choice\",\"construct\":\"if#%d\","
            "\"value\":%s,\"writes\":{},\"vc\":{\"A\":%d,\"B\":2}}\n",
            i, k + 1, dec[k] ? "true" : "false", i);
        if (dec[k]) {
            i++;
            zu_buf_printf(&b,
                          "{\"lifeline\":\"A\",\"index\":%d,\"kind\":\"act\",\"action\":null,"
                          "\"attempts\":1,\"writes\":{\"r\":true},\"vc\":{\"A\":%d,\"B\":2}}\n",
                          i, i);
        }
    }
    zu_buf_puts(&b, "{\"kind\":\"end\",\"result\":1}\n");
    return b.data;
}

static ZtModel *atoms_model(void)
{
    FILE *diag = fopen("/dev/null", "w");
    ZtModel *m = zt_model_new("atoms.zg", atoms_workflow, strlen(atoms_workflow), NULL, diag);
    fclose(diag);
    cr_assert_not_null(m, "the workflow does not compile");
    return m;
}

Test(tracecheck, cpl_atoms_by_definition_3)
{
    ZtModel *m = atoms_model();
    char *trace = atoms_trace(atoms_want);
    char *msg = NULL;
    ZtStats st;
    int rc = zt_check(m, "t.jsonl", trace, strlen(trace), &msg, &st);
    cr_assert_eq(rc, 0, "%s", msg ? msg : "");
    cr_assert_eq(st.cpl_checked, NATOMS);
    cr_assert_eq(st.unverified, 0);
    free(trace);
    zt_model_free(m);
}

Test(tracecheck, cpl_atoms_each_decision_flipped)
{
    /* the decision the old atom grouping gave (false for every guard with
     * a connective over an undefined atom), or any other flip, fails */
    ZtModel *m = atoms_model();
    for (int k = 0; k < NATOMS; k++) {
        bool dec[NATOMS];
        memcpy(dec, atoms_want, sizeof dec);
        dec[k] = !dec[k];
        char *trace = atoms_trace(dec);
        char *msg = NULL;
        int rc = zt_check(m, "t.jsonl", trace, strlen(trace), &msg, NULL);
        cr_assert_eq(rc, 1, "if#%d flipped passed", k + 1);
        char want[128];
        snprintf(want, sizeof want, "CPL guard of if#%d `", k + 1);
        cr_assert(strstr(msg, want), "message `%s` lacks `%s`", msg, want);
        snprintf(want, sizeof want,
                 "is %s by Definition 3 on the rebuilt chart, but the "
                 "recorded decision is %s",
                 atoms_want[k] ? "true" : "false", atoms_want[k] ? "false" : "true");
        cr_assert(strstr(msg, want), "message `%s` lacks `%s`", msg, want);
        free(msg);
        free(trace);
    }
    zt_model_free(m);
}

Test(tracecheck, cpl_atoms_example_message)
{
    bool dec[NATOMS];
    memcpy(dec, atoms_want, sizeof dec);
    dec[0] = false;
    char *trace = atoms_trace(dec);
    ZtModel *m = atoms_model();
    char *msg = NULL;
    cr_assert_eq(zt_check(m, "t.jsonl", trace, strlen(trace), &msg, NULL), 1);
    cr_assert_str_eq(msg, "t.jsonl:6: lifeline A event 2: CPL guard of if#1 `@B.x == 0 || y == 1` "
                          "is true by Definition 3 on the rebuilt chart, but the recorded decision "
                          "is false");
    free(msg);
    free(trace);
    zt_model_free(m);
}
