/* The oracle's evaluator on the rules of the language reference §5 that
 * the design reference leaves open: floor division and the divisor's sign
 * for %, float %, str() of floats, upper()/lower()/trim() beyond ASCII,
 * int() of padded text.  A trace with the values these rules give passes,
 * with every value recomputed (none unverified); the same trace with the
 * values of the rules zgc had before (C's truncation, fmod, %.15g-style
 * text, ASCII-only case mapping) fails at that value. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "trace_edit.h"

static const char workflow[] =
    "lifeline A;\n"
    "var n: int = -7;\n"
    "var q: int = 0;\n"
    "var r: int = 0;\n"
    "var f: float = -7.5;\n"
    "var m: float = 0.0;\n"
    "var t: str = \"\";\n"
    "var u: str = \"stra\xc3\x9f"
    "e \xce\x9f\xce\x94\xce\x9f\xce\xa3\";\n" /* straße ΟΔΟΣ */
    "var k: int = 0;\n"
    "workflow w() -> int {\n"
    "    A: q = n / 2;\n"
    "    A: r = n % 2;\n"
    "    A: m = f % 2.0;\n"
    "    A: t = str(0.1 + 0.2) + \" \" + str(1e15) + \" \" + str(2e16 * m);\n"
    "    A: u = upper(u) + \"|\" + lower(u) + \"|\" + trim(\"\\u{a0}x\\u{3000}\");\n"
    "    A: k = int(\" 42\\n\");\n"
    "    return k @ A;\n"
    "}\n";

/* What the runtime writes for it. */
static const char good[] =
    "{\"kind\":\"start\",\"lifeline\":\"A\",\"store\":{\"n\":-7,\"q\":0,\"r\":0,\"f\":-7.5,"
    "\"m\":0.0,\"t\":\"\",\"u\":\"stra\xc3\x9f"
    "e \xce\x9f\xce\x94\xce\x9f\xce\xa3\",\"k\":0}}\n"
    "{\"lifeline\":\"A\",\"index\":1,\"kind\":\"act\",\"action\":null,\"attempts\":1,"
    "\"writes\":{\"q\":-4},\"vc\":{\"A\":1}}\n"
    "{\"lifeline\":\"A\",\"index\":2,\"kind\":\"act\",\"action\":null,\"attempts\":1,"
    "\"writes\":{\"r\":1},\"vc\":{\"A\":2}}\n"
    "{\"lifeline\":\"A\",\"index\":3,\"kind\":\"act\",\"action\":null,\"attempts\":1,"
    "\"writes\":{\"m\":0.5},\"vc\":{\"A\":3}}\n"
    "{\"lifeline\":\"A\",\"index\":4,\"kind\":\"act\",\"action\":null,\"attempts\":1,"
    "\"writes\":{\"t\":\"0.30000000000000004 1000000000000000.0 1e+16\"},\"vc\":{\"A\":4}}\n"
    "{\"lifeline\":\"A\",\"index\":5,\"kind\":\"act\",\"action\":null,\"attempts\":1,"
    "\"writes\":{\"u\":\"STRASSE \xce\x9f\xce\x94\xce\x9f\xce\xa3|stra\xc3\x9f"
    "e "
    "\xce\xbf\xce\xb4\xce\xbf\xcf\x82|x\"},\"vc\":{\"A\":5}}\n"
    "{\"lifeline\":\"A\",\"index\":6,\"kind\":\"act\",\"action\":null,\"attempts\":1,"
    "\"writes\":{\"k\":42},\"vc\":{\"A\":6}}\n"
    "{\"kind\":\"end\",\"result\":42}\n";

static ZtModel *model(void)
{
    FILE *diag = fopen("/dev/null", "w");
    ZtModel *m = zt_model_new("w.zg", workflow, strlen(workflow), NULL, diag);
    fclose(diag);
    cr_assert_not_null(m, "the workflow does not compile");
    return m;
}

/* good with the first `from` replaced by `to` must fail with want. */
static void expect_fail(const char *from, const char *to, const char *want)
{
    char *text = subst(good, from, to);
    ZtModel *m = model();
    char *msg = NULL;
    int rc = zt_check(m, "t.jsonl", text, strlen(text), &msg, NULL);
    cr_assert_eq(rc, 1, "the trace with %s passed", to);
    cr_assert_not_null(msg);
    cr_expect(strstr(msg, want), "message `%s` lacks `%s`", msg, want);
    free(msg);
    free(text);
    zt_model_free(m);
}

Test(rules, values_of_the_rules_pass_all_recomputed)
{
    ZtModel *m = model();
    char *msg = NULL;
    ZtStats st;
    int rc = zt_check(m, "t.jsonl", good, strlen(good), &msg, &st);
    cr_assert_eq(rc, 0, "%s", msg ? msg : "");
    cr_expect_eq(st.values, 6);
    cr_expect_eq(st.unverified, 0);
    zt_model_free(m);
}

Test(rules, truncated_division_fails)
{
    expect_fail("{\"q\":-4}", "{\"q\":-3}",
                "t.jsonl:2: lifeline A event 1: the new value of q is -3, expected -4");
}

Test(rules, remainder_with_the_dividends_sign_fails)
{
    expect_fail("{\"r\":1}", "{\"r\":-1}", "the new value of r is -1, expected 1");
}

Test(rules, float_fmod_fails)
{
    expect_fail("{\"m\":0.5}", "{\"m\":-1.5}", "the new value of m is -1.5, expected 0.5");
}

Test(rules, float_text_not_shortest_or_not_repr_fails)
{
    expect_fail("1000000000000000.0 1e+16", "1e+15 1e+16",
                "expected \"0.30000000000000004 1000000000000000.0 1e+16\"");
    expect_fail("0.30000000000000004 ", "0.3000000000000000444 ",
                "expected \"0.30000000000000004 1000000000000000.0 1e+16\"");
}

Test(rules, ascii_only_case_mapping_fails)
{
    /* upper("straße") kept ß, lower("ΟΔΟΣ") ended in σ */
    expect_fail("STRASSE",
                "STRA\xc3\x9f"
                "E",
                "expected \"STRASSE");
    expect_fail("\xce\xbf\xce\xb4\xce\xbf\xcf\x82|", "\xce\xbf\xce\xb4\xce\xbf\xcf\x83|",
                "the new value of u");
}

Test(rules, ascii_only_trim_fails)
{
    expect_fail("|x\"", "|\xc2\xa0x\xe3\x80\x80\"", "the new value of u");
}

Test(rules, int_of_padded_text_is_recomputed)
{
    expect_fail("{\"k\":42}", "{\"k\":43}", "the new value of k is 43, expected 42");
}
