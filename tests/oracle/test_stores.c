/* The trace checker on store operations: two lifelines work on one
 * store, the second's first attempt is refused (an abort) and its second
 * reads what the first committed.  The trace as the runtime writes it
 * passes; each rule of docs/oracle.md ("Stores") broken by one edit fails
 * with its message. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "trace_edit.h"

static const char workflow[] = "lifeline A, B;\n"
                               "effect publish(text: str);\n"
                               "var p: str = \"\";\n"
                               "var q: str = \"\";\n"
                               "var n: int = 0;\n"
                               "store Board {\n"
                               "    cell plan: str = \"\";\n"
                               "    cell votes: int = 7;\n"
                               "    tools publish;\n"
                               "    consistency L1;\n"
                               "}\n"
                               "workflow w() -> int {\n"
                               "    A: atomic Board {\n"
                               "        p = read plan;\n"
                               "        n = read votes;\n"
                               "        n = n + 1;\n"
                               "        write plan = p + \"a\";\n"
                               "        write votes = n;\n"
                               "    }\n"
                               "    B: atomic Board {\n"
                               "        q = read plan;\n"
                               "        publish(q);\n"
                               "        write plan = q + \"b\";\n"
                               "        write tools = ();\n"
                               "    }\n"
                               "    return n @ A;\n"
                               "}\n";

#define START                                                                             \
    "{\"kind\":\"start\",\"lifeline\":\"A\",\"store\":{\"p\":\"\",\"q\":\"\",\"n\":0}}\n" \
    "{\"kind\":\"start\",\"lifeline\":\"B\",\"store\":{\"p\":\"\",\"q\":\"\",\"n\":0}}\n"

/* B's first attempt reads plan before A commits, and is refused. */
static const char good[] = START
    "{\"lifeline\":\"A\",\"index\":1,\"kind\":\"read\",\"store\":\"Board\",\"cell\":\"plan\","
    "\"value\":\"\",\"version\":0,\"attempt\":1,\"writes\":{\"p\":\"\"},\"vc\":{\"A\":1,\"B\":0}}\n"
    "{\"lifeline\":\"A\",\"index\":2,\"kind\":\"read\",\"store\":\"Board\",\"cell\":\"votes\","
    "\"value\":7,\"version\":0,\"attempt\":1,\"writes\":{\"n\":7},\"vc\":{\"A\":2,\"B\":0}}\n"
    "{\"lifeline\":\"B\",\"index\":1,\"kind\":\"read\",\"store\":\"Board\",\"cell\":\"plan\","
    "\"value\":\"\",\"version\":0,\"attempt\":1,\"writes\":{\"q\":\"\"},\"vc\":{\"A\":0,\"B\":1}}\n"
    "{\"lifeline\":\"A\",\"index\":3,\"kind\":\"act\",\"action\":null,\"attempts\":1,"
    "\"writes\":{\"n\":8},\"vc\":{\"A\":3,\"B\":0}}\n"
    "{\"lifeline\":\"B\",\"index\":2,\"kind\":\"act\",\"action\":\"publish\",\"attempts\":1,"
    "\"store\":\"Board\",\"writes\":{},\"vc\":{\"A\":0,\"B\":2}}\n"
    "{\"lifeline\":\"A\",\"index\":4,\"kind\":\"commit\",\"store\":\"Board\",\"txn\":1,"
    "\"attempt\":1,\"cells\":{\"plan\":\"a\",\"votes\":8},\"writes\":{},\"vc\":{\"A\":4,\"B\":0}}\n"
    "{\"lifeline\":\"B\",\"index\":3,\"kind\":\"abort\",\"store\":\"Board\",\"txn\":2,"
    "\"attempt\":1,\"reason\":\"plan was written\",\"writes\":{},\"vc\":{\"A\":0,\"B\":3}}\n"
    "{\"lifeline\":\"B\",\"index\":4,\"kind\":\"read\",\"store\":\"Board\",\"cell\":\"plan\","
    "\"value\":\"a\",\"version\":1,\"attempt\":2,\"writes\":{\"q\":\"a\"},\"vc\":{\"A\":0,\"B\":4}}"
    "\n"
    "{\"lifeline\":\"B\",\"index\":5,\"kind\":\"act\",\"action\":\"publish\",\"attempts\":1,"
    "\"store\":\"Board\",\"writes\":{},\"vc\":{\"A\":0,\"B\":5}}\n"
    "{\"lifeline\":\"B\",\"index\":6,\"kind\":\"commit\",\"store\":\"Board\",\"txn\":3,"
    "\"attempt\":2,\"cells\":{\"plan\":\"ab\"},\"registry\":[],\"writes\":{},"
    "\"vc\":{\"A\":0,\"B\":6}}\n"
    "{\"kind\":\"end\",\"result\":8}\n";

/* At L0 nothing is refused: B commits what it generated from the
 * default, although A wrote plan in between (a stale read, allowed). */
static const char stale[] = START
    "{\"lifeline\":\"A\",\"index\":1,\"kind\":\"read\",\"store\":\"Board\",\"cell\":\"plan\","
    "\"value\":\"\",\"version\":0,\"attempt\":1,\"writes\":{\"p\":\"\"},\"vc\":{\"A\":1,\"B\":0}}\n"
    "{\"lifeline\":\"A\",\"index\":2,\"kind\":\"read\",\"store\":\"Board\",\"cell\":\"votes\","
    "\"value\":7,\"version\":0,\"attempt\":1,\"writes\":{\"n\":7},\"vc\":{\"A\":2,\"B\":0}}\n"
    "{\"lifeline\":\"B\",\"index\":1,\"kind\":\"read\",\"store\":\"Board\",\"cell\":\"plan\","
    "\"value\":\"\",\"version\":0,\"attempt\":1,\"writes\":{\"q\":\"\"},\"vc\":{\"A\":0,\"B\":1}}\n"
    "{\"lifeline\":\"A\",\"index\":3,\"kind\":\"act\",\"action\":null,\"attempts\":1,"
    "\"writes\":{\"n\":8},\"vc\":{\"A\":3,\"B\":0}}\n"
    "{\"lifeline\":\"B\",\"index\":2,\"kind\":\"act\",\"action\":\"publish\",\"attempts\":1,"
    "\"store\":\"Board\",\"writes\":{},\"vc\":{\"A\":0,\"B\":2}}\n"
    "{\"lifeline\":\"A\",\"index\":4,\"kind\":\"commit\",\"store\":\"Board\",\"txn\":1,"
    "\"attempt\":1,\"cells\":{\"plan\":\"a\",\"votes\":8},\"writes\":{},\"vc\":{\"A\":4,\"B\":0}}\n"
    "{\"lifeline\":\"B\",\"index\":3,\"kind\":\"commit\",\"store\":\"Board\",\"txn\":2,"
    "\"attempt\":1,\"cells\":{\"plan\":\"b\"},\"registry\":[],\"writes\":{},"
    "\"vc\":{\"A\":0,\"B\":3}}\n"
    "{\"kind\":\"end\",\"result\":8}\n";

static ZtModel *model_at(const char *level)
{
    char *text = subst(workflow, "consistency L1", level);
    FILE *diag = fopen("/dev/null", "w");
    ZtModel *m = zt_model_new("w.zg", text, strlen(text), NULL, diag);
    fclose(diag);
    free(text);
    cr_assert_not_null(m, "the workflow does not compile");
    return m;
}

static void expect_pass(const char *trace, const char *level)
{
    ZtModel *m = model_at(level);
    char *msg = NULL;
    ZtStats st;
    int rc = zt_check(m, "t.jsonl", trace, strlen(trace), &msg, &st);
    cr_assert_eq(rc, 0, "%s", msg ? msg : "");
    free(msg);
    zt_model_free(m);
}

/* trace with the first `from` replaced by `to` fails at the level with want. */
static void expect_fail_at(const char *trace, const char *level, const char *from, const char *to,
                           const char *want)
{
    char *text = from ? subst(trace, from, to) : strdup(trace);
    ZtModel *m = model_at(level);
    char *msg = NULL;
    int rc = zt_check(m, "t.jsonl", text, strlen(text), &msg, NULL);
    cr_assert_eq(rc, 1, "the trace with %s passed", to ? to : "no change");
    cr_assert_not_null(msg);
    cr_expect(strstr(msg, want), "message `%s` lacks `%s`", msg, want);
    free(msg);
    free(text);
    zt_model_free(m);
}

static void expect_fail(const char *from, const char *to, const char *want)
{
    expect_fail_at(good, "consistency L1", from, to, want);
}

Test(stores, valid_traces_pass)
{
    ZtModel *m = model_at("consistency L1");
    char *msg = NULL;
    ZtStats st;
    int rc = zt_check(m, "t.jsonl", good, strlen(good), &msg, &st);
    cr_assert_eq(rc, 0, "%s", msg ? msg : "");
    /* 4 reads bound, 4 reads against their versions, n + 1, 3 cells
     * committed, 1 registry */
    cr_expect_eq(st.values, 13, "values %ld", st.values);
    zt_model_free(m);
    expect_pass(good, "consistency L4");
    expect_pass(stale, "consistency L0");
}

Test(stores, wrong_value_read_fails)
{
    /* B's second attempt reads plan at version 1, which A wrote as "a" */
    expect_fail("\"value\":\"a\",\"version\":1,\"attempt\":2,\"writes\":{\"q\":\"a\"}",
                "\"value\":\"x\",\"version\":1,\"attempt\":2,\"writes\":{\"q\":\"x\"}",
                "t.jsonl:10: lifeline B event 4: reads Board.plan = \"x\" at version 1, but "
                "commit #1 (lifeline A event 4) wrote \"a\"");
    /* and the default at version 0 */
    expect_fail("\"value\":7,\"version\":0,\"attempt\":1,\"writes\":{\"n\":7}",
                "\"value\":6,\"version\":0,\"attempt\":1,\"writes\":{\"n\":6}",
                "lifeline A event 2: reads Board.votes = 6 at version 0 (the default), but the "
                "cell's default is 7");
    /* a read that binds another value than it read */
    expect_fail("\"version\":1,\"attempt\":2,\"writes\":{\"q\":\"a\"}",
                "\"version\":1,\"attempt\":2,\"writes\":{\"q\":\"b\"}",
                "lifeline B event 4: writes {\"q\":\"b\"}, but reads Board.plan = \"a\" into q");
}

Test(stores, unknown_version_fails)
{
    expect_fail("\"version\":1,\"attempt\":2", "\"version\":5,\"attempt\":2",
                "lifeline B event 4: reads Board.plan at version 5, which names no commit of "
                "store Board");
    expect_fail("\"version\":1,\"attempt\":2", "\"version\":2,\"attempt\":2",
                "which names no commit of store Board (an abort has that transaction id)");
}

Test(stores, version_of_a_commit_that_did_not_write_the_cell_fails)
{
    /* B's commit #3 wrote plan only */
    char *t = subst(good, "\"cell\":\"votes\",\"value\":7,\"version\":0",
                    "\"cell\":\"votes\",\"value\":7,\"version\":3");
    expect_fail_at(t, "consistency L1", NULL, NULL,
                   "lifeline A event 2: reads Board.votes at version 3, but commit #3 (lifeline B "
                   "event 6) did not write votes");
    free(t);
}

Test(stores, stale_read_at_L1_fails_and_passes_at_L0)
{
    expect_fail_at(stale, "consistency L1", NULL, NULL,
                   "t.jsonl:5: lifeline B event 1: a stale read: reads Board.plan at version 0, "
                   "but commit #1 (lifeline A event 4) wrote plan before its attempt's commit #2 "
                   "(lifeline B event 3), which store Board (L1) must have refused");
    expect_fail_at(stale, "consistency L3", NULL, NULL, "a stale read");
}

Test(stores, read_not_older_than_its_commit_fails)
{
    /* A commits as transaction 4, after B's commit 3 that read it */
    char *t = subst(good, "\"version\":1,", "\"version\":4,");
    char *u = subst(t, "\"txn\":1,", "\"txn\":4,");
    expect_fail_at(u, "consistency L1", NULL, NULL,
                   "lifeline B event 4: reads Board.plan at version 4, not older than its own "
                   "attempt's commit #3 (lifeline B event 6)");
    free(t);
    free(u);
}

Test(stores, abort_at_L0_fails)
{
    expect_fail_at(good, "consistency L0", NULL, NULL,
                   "t.jsonl:9: lifeline B event 3: an abort of attempt 1 on store Board, which is "
                   "L0: L0 never refuses a commit");
}

Test(stores, duplicate_txn_fails)
{
    expect_fail("\"txn\":3,", "\"txn\":1,",
                "lifeline B event 6: commit of store Board with transaction id 1, which the "
                "commit of lifeline A event 4 has already");
}

Test(stores, commit_cells_differ_from_the_writes_fails)
{
    expect_fail("\"cells\":{\"plan\":\"a\",\"votes\":8}", "\"cells\":{\"plan\":\"a\",\"votes\":9}",
                "lifeline A event 4: the value committed to Board.votes is 9, expected 8");
    expect_fail("\"cells\":{\"plan\":\"a\",\"votes\":8}", "\"cells\":{\"plan\":\"a\"}",
                "lifeline A event 4: the commit's cells {\"plan\":\"a\"} lack votes, which the "
                "block writes (line 18)");
    expect_fail("\"cells\":{\"plan\":\"ab\"}", "\"cells\":{\"plan\":\"ab\",\"votes\":8}",
                "lifeline B event 6: the commit writes cell Board.votes, which the block (line "
                "20) does not write");
    expect_fail("\"cells\":{\"plan\":\"a\",\"votes\":8}",
                "\"cells\":{\"plan\":\"a\",\"votes\":\"8\"}",
                "the value committed to Board.votes is \"8\", not a value of type int");
}

Test(stores, commit_registry_differs_from_the_writes_fails)
{
    expect_fail("\"registry\":[],", "", "lifeline B event 6: the commit lacks \"registry\"");
    expect_fail("\"registry\":[],", "\"registry\":[\"publish\"],",
                "lifeline B event 6: the commit's registry is [\"publish\"], expected the tools () "
                "of the block's `write tools`");
    expect_fail("\"cells\":{\"plan\":\"a\",\"votes\":8},",
                "\"cells\":{\"plan\":\"a\",\"votes\":8},\"registry\":[],",
                "lifeline A event 4: the commit writes the registry [], but the block (line 13) "
                "has no `write tools`");
}

Test(stores, missing_commit_fails)
{
    char *t = drop_line(good, "\"txn\":3");
    expect_fail_at(t, "consistency L1", NULL, NULL,
                   "lifeline B: erasure: missing event: the trace ends after event 5, but the "
                   "global workflow expects the commit or abort of attempt 2 of the operation on "
                   "store Board (line 20) next");
    free(t);
    /* a run that stopped with an error may end inside an attempt */
    char *u = drop_line(good, "\"txn\":3");
    char *v =
        subst(u, "{\"kind\":\"end\",\"result\":8}", "{\"kind\":\"end\",\"error\":\"timeout\"}");
    expect_pass(v, "consistency L1");
    free(u);
    free(v);
}

Test(stores, wrong_attempt_numbering_fails)
{
    /* the second attempt numbered 1 again */
    expect_fail("\"version\":1,\"attempt\":2,", "\"version\":1,\"attempt\":1,",
                "lifeline B event 4: read of Board.plan (attempt 1), expected attempt 2 of the "
                "operation on store Board (line 20)");
    /* an abort followed by something else than the next attempt's read */
    char *t = subst(good,
                    "\"kind\":\"read\",\"store\":\"Board\",\"cell\":\"plan\",\"value\":\"a\","
                    "\"version\":1,\"attempt\":2,\"writes\":{\"q\":\"a\"}",
                    "\"kind\":\"act\",\"action\":\"publish\",\"attempts\":1,\"store\":\"Board\","
                    "\"writes\":{}");
    expect_fail_at(t, "consistency L1", NULL, NULL,
                   "lifeline B event 4: erasure: the events differ from the global workflow's: "
                   "got act publish writing {}, expected read of Board.plan (attempt 2, line 21)");
    free(t);
}

Test(stores, read_of_a_wrong_typed_value_fails)
{
    expect_fail("\"value\":7,\"version\":0,\"attempt\":1,\"writes\":{\"n\":7}",
                "\"value\":\"7\",\"version\":0,\"attempt\":1,\"writes\":{\"n\":7}",
                "the value read from Board.votes is \"7\", not a value of type int");
}

Test(stores, store_fields_are_checked)
{
    expect_fail("\"store\":\"Board\",\"cell\":\"votes\"", "\"store\":\"Bored\",\"cell\":\"votes\"",
                "t.jsonl:4: unknown store \"Bored\" in \"store\"");
    expect_fail("\"cell\":\"votes\"", "\"cell\":\"vetoes\"",
                "t.jsonl:4: store Board has no cell \"vetoes\"");
    /* "store" on an act that is not a tool call, or outside a block */
    expect_fail("\"action\":null,\"attempts\":1,",
                "\"action\":null,\"attempts\":1,\"store\":\"Board\",",
                "lifeline A event 3: the act names store Board, but it is not a tool call");
    expect_fail("\"reason\":\"plan was written\"", "\"reason\":3", "\"reason\" must be a string");
}

/* A workflow of lifeline A with the variables VARS, store S (one int cell
 * c, L1) and two parallel branches, each one atomic block on S. */
#define TWO_BRANCHES(vars, first, second, result)                                       \
    "lifeline A;\n" vars "store S {\n    cell c: int = 0;\n    consistency L1;\n}\n"    \
    "workflow w() -> int {\n    parallel {\n"                                           \
    "        branch {\n            A: atomic S {\n" first "            }\n        }\n"  \
    "        branch {\n            A: atomic S {\n" second "            }\n        }\n" \
    "    }\n    return " result " @ A;\n}\n"

/* Two operations of one lifeline in parallel branches: either may end
 * first, each attempt's end is matched to the operation it fits. */
static const char par_workflow[] =
    TWO_BRANCHES("var x: int = 0;\nvar y: int = 0;\n", "x = read c;\nwrite c = x + 1;\n",
                 "y = read c;\nwrite c = y + 2;\n", "x");

#define PAR_EV(i, rest) "{\"lifeline\":\"A\",\"index\":" #i "," rest ",\"vc\":{\"A\":" #i "}}\n"
#define PAR_READ(i, var, val, ver, att)                                          \
    PAR_EV(i, "\"kind\":\"read\",\"store\":\"S\",\"cell\":\"c\",\"value\":" #val \
              ",\"version\":" #ver ",\"attempt\":" #att ",\"writes\":{\"" var "\":" #val "}")
#define PAR_END(i, kind, txn, att, rest)                                                      \
    PAR_EV(i, "\"kind\":\"" kind "\",\"store\":\"S\",\"txn\":" #txn ",\"attempt\":" #att rest \
              ",\"writes\":{}")

static void expect_par_of(const char *workflow_text, const char *trace, const char *want)
{
    FILE *diag = fopen("/dev/null", "w");
    ZtModel *m = zt_model_new("p.zg", workflow_text, strlen(workflow_text), NULL, diag);
    fclose(diag);
    cr_assert_not_null(m, "the workflow does not compile");
    char *msg = NULL;
    int rc = zt_check(m, "p.jsonl", trace, strlen(trace), &msg, NULL);
    if (want) {
        cr_assert_eq(rc, 1, "the trace passed");
        cr_expect(strstr(msg, want), "message `%s` lacks `%s`", msg, want);
    } else {
        cr_assert_eq(rc, 0, "%s", msg ? msg : "");
    }
    free(msg);
    zt_model_free(m);
}

static void expect_par(const char *trace, const char *want)
{
    expect_par_of(par_workflow, trace, want);
}

Test(stores, operations_of_parallel_branches_on_one_lifeline)
{
    const char *start = "{\"kind\":\"start\",\"lifeline\":\"A\",\"store\":{\"x\":0,\"y\":0}}\n";
    /* the second branch commits first; the first is refused and runs again */
    char second_first[2048];
    snprintf(
        second_first, sizeof second_first, "%s%s%s%s%s%s%s%s", start, PAR_READ(1, "x", 0, 0, 1),
        PAR_READ(2, "y", 0, 0, 1), PAR_END(3, "commit", 1, 1, ",\"cells\":{\"c\":2}"),
        PAR_END(4, "abort", 2, 1, ",\"reason\":\"c was written\""), PAR_READ(5, "x", 2, 1, 2),
        PAR_END(6, "commit", 3, 2, ",\"cells\":{\"c\":3}"), "{\"kind\":\"end\",\"result\":2}\n");
    expect_par(second_first, NULL);
    /* the second branch is refused while the first is open: its next
     * attempt's read says whose abort it was */
    char abort_second[2048];
    snprintf(
        abort_second, sizeof abort_second, "%s%s%s%s%s%s%s%s", start, PAR_READ(1, "x", 0, 0, 1),
        PAR_READ(2, "y", 0, 0, 1), PAR_END(3, "abort", 1, 1, ",\"reason\":\"busy\""),
        PAR_END(4, "commit", 2, 1, ",\"cells\":{\"c\":1}"), PAR_READ(5, "y", 1, 2, 2),
        PAR_END(6, "commit", 3, 2, ",\"cells\":{\"c\":3}"), "{\"kind\":\"end\",\"result\":0}\n");
    expect_par(abort_second, NULL);
    /* a commit that fits neither operation */
    static const char *const edits[][2] = {{"\"cells\":{\"c\":2}", "\"cells\":{\"c\":5}"},
                                           {"\"value\":2", "\"value\":5"},
                                           {"{\"x\":2}", "{\"x\":5}"},
                                           {"{\"c\":3}", "{\"c\":6}"},
                                           {"\"result\":2", "\"result\":5"}};
    char *bad = strdup(second_first);
    for (size_t k = 0; k < sizeof edits / sizeof edits[0]; k++) {
        char *t = subst(bad, edits[k][0], edits[k][1]);
        free(bad);
        bad = t;
    }
    expect_par(bad, "p.jsonl:4: lifeline A event 3: the value committed to S.c is 5, expected 1");
    free(bad);
}

/* Two operations of one lifeline whose commits write the same value: only
 * the events' "op" tells which commit is whose. */
static const char same_workflow[] =
    TWO_BRANCHES("var y: int = 0;\n", "write c = 2;\n", "y = read c;\nwrite c = 2;\n", "y");

#define OP_READ(i, op)                                                        \
    PAR_EV(i, "\"kind\":\"read\",\"store\":\"S\",\"cell\":\"c\",\"value\":0," \
              "\"version\":0,\"attempt\":1,\"op\":\"" op "\",\"writes\":{\"y\":0}")
#define OP_COMMIT(i, txn, op)                                                                   \
    PAR_EV(i, "\"kind\":\"commit\",\"store\":\"S\",\"txn\":" #txn ",\"attempt\":1,\"op\":\"" op \
              "\",\"cells\":{\"c\":2},\"writes\":{}")

Test(stores, the_op_field_tells_interleaved_operations_apart)
{
    const char *start = "{\"kind\":\"start\",\"lifeline\":\"A\",\"store\":{\"y\":0}}\n";
    const char *end = "{\"kind\":\"end\",\"result\":0}\n";
    char t[2048];
    /* the reading operation commits right after its read, then the blind
     * write: valid at L1 */
    snprintf(t, sizeof t, "%s%s%s%s%s", start, OP_READ(1, "1.2/1"), OP_COMMIT(2, 1, "1.2/1"),
             OP_COMMIT(3, 2, "1.1/1"), end);
    expect_par_of(same_workflow, t, NULL);
    /* the blind write between the read and its commit: a stale read L1
     * must have refused */
    snprintf(t, sizeof t, "%s%s%s%s%s", start, OP_READ(1, "1.2/1"), OP_COMMIT(2, 1, "1.1/1"),
             OP_COMMIT(3, 2, "1.2/1"), end);
    expect_par_of(same_workflow, t, "a stale read");
    /* a commit naming an operation that has ended */
    snprintf(t, sizeof t, "%s%s%s%s%s", start, OP_READ(1, "1.2/1"), OP_COMMIT(2, 1, "1.2/1"),
             OP_COMMIT(3, 2, "1.2/1"), end);
    expect_par_of(same_workflow, t,
                  "lifeline A event 3: \"op\" 1.2/1 names an operation that has ended");
    /* "op" must be a non-empty string, and only on store events */
    snprintf(t, sizeof t, "%s%s%s%s%s", start, OP_READ(1, ""), OP_COMMIT(2, 1, "1.2/1"),
             OP_COMMIT(3, 2, "1.1/1"), end);
    expect_par_of(same_workflow, t, "\"op\" must be a non-empty string");
}
