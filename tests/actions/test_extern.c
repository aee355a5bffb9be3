/* extern pure and effect actions through the zgrt.h interface. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include <jansson.h>

#include "fixture.h"
#include "zgrt.h"

TestSuite(extern_call, .init = fx_setup, .fini = fx_teardown, .timeout = 30);

static zgrt_value score_args[6];

static void make_args(void)
{
    score_args[0] = fx_str("some text");
    score_args[1] = fx_int(-42);
    score_args[2] = fx_float(0.5);
    score_args[3] = fx_bool(1);
    score_args[4] = fx_enum(2);
    score_args[5] = fx_json("{\"a\": [1, 2]}");
}

static int run_score(zgrt_action_fn fn, zgrt_value *out, char *err, size_t errlen)
{
    make_args();
    fx_actions[A_SCORE].fn = fn;
    int attempts = -1;
    int rc = fx_run(A_SCORE, WRITER, 0, score_args, out, &attempts, err, errlen);
    cr_assert_eq(attempts, 1);
    return rc;
}

static char seen[1024];

static int zg_score_all(zgrt_call *call)
{
    snprintf(seen, sizeof seen,
             "%s@%s argc=%d resc=%d str=%s int=%lld float=%g bool=%d enum=%d json=%s tag=%d",
             zgrt_call_action(call), zgrt_call_lifeline(call), zgrt_argc(call), zgrt_resc(call),
             zgrt_arg_str(call, 0), (long long)zgrt_arg_int(call, 1), zgrt_arg_float(call, 2),
             (int)zgrt_arg_bool(call, 3), zgrt_arg_enum(call, 4), zgrt_arg_json(call, 5),
             (int)zgrt_arg(call, 1)->tag);
    zgrt_ret_float(call, 0, 1.25);
    zgrt_ret_int(call, 1, INT64_MIN);
    zgrt_ret_str(call, 2, "r\xc3\xa9sultat");
    zgrt_ret_bool(call, 3, true);
    zgrt_ret_enum(call, 4, 1);
    if (zgrt_ret_json(call, 5, "[1, {\"b\": null}]") != 0) return 1;
    return 0;
}

Test(extern_call, arguments_and_results)
{
    zgrt_value out[6];
    char err[512];
    cr_assert_eq(run_score(zg_score_all, out, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(seen, "score@Writer argc=6 resc=6 str=some text int=-42 float=0.5 bool=1 "
                           "enum=2 json={\"a\":[1,2]} tag=2");
    cr_assert_eq(out[0].tag, ZGRT_FLOAT);
    cr_assert_float_eq(out[0].u.f, 1.25, 1e-12);
    cr_assert_eq(out[1].tag, ZGRT_INT);
    cr_assert_eq(out[1].u.i, INT64_MIN);
    cr_assert_str_eq(fx_text(&out[2]), "r\xc3\xa9sultat");
    cr_assert_eq(out[3].tag, ZGRT_BOOL);
    cr_assert_eq(out[3].u.i, 1);
    cr_assert_eq(out[4].tag, ZGRT_ENUM);
    cr_assert_eq(out[4].u.i, 1);
    cr_assert_eq(out[5].tag, ZGRT_JSON);
    json_t *want = json_loads("[1, {\"b\": null}]", 0, NULL);
    cr_assert(json_equal(want, (json_t *)out[5].u.j));
    json_decref(want);
}

static int zg_score_fail(zgrt_call *call)
{
    return zgrt_fail(call, "cannot score %s (%d)", zgrt_arg_str(call, 0), 42);
}

Test(extern_call, zgrt_fail_message)
{
    zgrt_value out[6];
    char err[512];
    cr_assert_eq(run_score(zg_score_fail, out, err, sizeof err), -1);
    cr_assert_str_eq(err, "cannot score some text (42)");
}

static int zg_score_mismatch(zgrt_call *call)
{
    int64_t n = zgrt_arg_int(call, 0);     /* a str */
    const char *s = zgrt_arg_str(call, 1); /* an int */
    zgrt_ret_float(call, 0, (double)n + (double)strlen(s));
    return 0;
}

Test(extern_call, argument_type_mismatch_fails_the_call)
{
    zgrt_value out[6];
    char err[512];
    cr_assert_eq(run_score(zg_score_mismatch, out, err, sizeof err), -1);
    cr_assert_str_eq(err, "zgrt_arg_int(call, 0): argument 0 (`text`) of `score` is a str");
}

static int zg_score_bad_ret(zgrt_call *call)
{
    zgrt_ret_int(call, 0, 1); /* result 0 is a float */
    return 0;
}

Test(extern_call, result_type_mismatch_fails_the_call)
{
    zgrt_value out[6];
    char err[512];
    cr_assert_eq(run_score(zg_score_bad_ret, out, err, sizeof err), -1);
    cr_assert_str_eq(err, "zgrt_ret_int(call, 0): result 0 of `score` is a float");
}

static int zg_score_range(zgrt_call *call)
{
    (void)zgrt_arg_bool(call, 6);
    return 0;
}

Test(extern_call, index_out_of_range)
{
    zgrt_value out[6];
    char err[512];
    cr_assert_eq(run_score(zg_score_range, out, err, sizeof err), -1);
    cr_assert_str_eq(err, "zgrt_arg_bool(call, 6): `score` has 6 arguments");
}

static int zg_score_partial(zgrt_call *call)
{
    zgrt_ret_float(call, 0, 1.0);
    return 0;
}

Test(extern_call, unset_result)
{
    zgrt_value out[6];
    char err[512];
    cr_assert_eq(run_score(zg_score_partial, out, err, sizeof err), -1);
    cr_assert_str_eq(err, "zg_score did not set result 1 (a int)");
}

static int zg_score_nonzero(zgrt_call *call)
{
    (void)call;
    return 3;
}

Test(extern_call, nonzero_return_without_message)
{
    zgrt_value out[6];
    char err[512];
    cr_assert_eq(run_score(zg_score_nonzero, out, err, sizeof err), -1);
    cr_assert_str_eq(err, "zg_score returned 3 without calling zgrt_fail");
}

static int zg_score_bad_values(zgrt_call *call)
{
    zgrt_ret_float(call, 0, NAN);
    return 0;
}

static int zg_score_bad_utf8(zgrt_call *call)
{
    zgrt_ret_str(call, 2, "\xff\xfe");
    return 0;
}

static int zg_score_bad_enum(zgrt_call *call)
{
    zgrt_ret_enum(call, 4, 3);
    return 0;
}

static int ret_json_rc;

static int zg_score_bad_json(zgrt_call *call)
{
    ret_json_rc = zgrt_ret_json(call, 5, "{not json");
    return 0;
}

Test(extern_call, invalid_result_values)
{
    zgrt_value out[6];
    char err[512];
    cr_assert_eq(run_score(zg_score_bad_values, out, err, sizeof err), -1);
    cr_assert_str_eq(err, "zgrt_ret_float(call, 0): nan is not a finite float");
    cr_assert_eq(run_score(zg_score_bad_utf8, out, err, sizeof err), -1);
    cr_assert_str_eq(err, "zgrt_ret_str(call, 2): the string is not valid UTF-8");
    cr_assert_eq(run_score(zg_score_bad_enum, out, err, sizeof err), -1);
    cr_assert_str_eq(err, "zgrt_ret_enum(call, 4): 3 is not a member of Verdict (0..2)");
    cr_assert_eq(run_score(zg_score_bad_json, out, err, sizeof err), -1);
    cr_assert_eq(ret_json_rc, -1);
    cr_assert(strstr(err, "zgrt_ret_json(call, 5): not JSON"), "%s", err);
}

static int zg_score_first_failure(zgrt_call *call)
{
    (void)zgrt_arg_float(call, 0);
    return zgrt_fail(call, "later");
}

Test(extern_call, first_failure_is_reported)
{
    zgrt_value out[6];
    char err[512];
    cr_assert_eq(run_score(zg_score_first_failure, out, err, sizeof err), -1);
    cr_assert_str_eq(err, "zgrt_arg_float(call, 0): argument 0 (`text`) of `score` is a str");
}

Test(extern_call, not_linked)
{
    zgrt_value out[6];
    char err[512];
    cr_assert_eq(run_score(NULL, out, err, sizeof err), -1);
    cr_assert_str_eq(
        err, "extern action `score` is not linked: give zgc build a C file that defines zg_score");
    zgrt_value to = fx_str("x");
    int attempts;
    cr_assert_eq(fx_run(A_SEND, EDITOR, 0, &to, NULL, &attempts, err, sizeof err), -1);
    cr_assert_str_eq(err,
                     "effect `send` is not linked: give zgc build a C file that defines zg_send");
}

static int sent;

static int zg_send(zgrt_call *call)
{
    if (strcmp(zgrt_arg_str(call, 0), "bob") != 0) return zgrt_fail(call, "unexpected recipient");
    if (zgrt_resc(call) != 0 || zgrt_arg(call, 1) != NULL || zgrt_arg(call, -1) != NULL)
        return zgrt_fail(call, "bad shape");
    sent++;
    return 0;
}

Test(extern_call, effect_without_results)
{
    fx_actions[A_SEND].fn = zg_send;
    zgrt_value to = fx_str("bob");
    char err[512];
    int attempts;
    cr_assert_eq(fx_run(A_SEND, EDITOR, 0, &to, NULL, &attempts, err, sizeof err), 0, "%s", err);
    cr_assert_eq(sent, 1);
    cr_assert_eq(attempts, 1);
}

static int zg_score_json_twice(zgrt_call *call)
{
    const char *a = zgrt_arg_json(call, 5);
    const char *b = zgrt_arg_json(call, 5);
    if (strcmp(a, b) != 0) return zgrt_fail(call, "json texts differ");
    return zg_score_all(call);
}

Test(extern_call, json_texts_live_during_the_call)
{
    zgrt_value out[6];
    char err[512];
    cr_assert_eq(run_score(zg_score_json_twice, out, err, sizeof err), 0, "%s", err);
}
