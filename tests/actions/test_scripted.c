/* The scripted model, retries and fallbacks. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fixture.h"

TestSuite(scripted, .init = fx_setup, .fini = fx_teardown, .timeout = 30);
TestSuite(fallback, .init = fx_setup, .fini = fx_teardown, .timeout = 30);

/* Runs write on lifeline; returns the draft or "error: …". */
static const char *write_on(int lifeline, int *attempts)
{
    static char buf[1024];
    zgrt_value arg = fx_str("topic"), out;
    char err[768];
    int dummy;
    if (!attempts) attempts = &dummy;
    if (fx_run(A_WRITE, lifeline, 0, &arg, &out, attempts, err, sizeof err) != 0) {
        snprintf(buf, sizeof buf, "error: %s", err);
        return buf;
    }
    snprintf(buf, sizeof buf, "%s", fx_text(&out));
    return buf;
}

Test(scripted, list_consumed_in_order_then_past_the_end)
{
    fx_opts.llm = fx_scripted("{\"Editor.write\": [{\"draft\": \"one\"}, {\"draft\": \"two\"}]}");
    cr_assert_str_eq(write_on(EDITOR, NULL), "one");
    cr_assert_str_eq(write_on(EDITOR, NULL), "two");
    int attempts;
    cr_assert_str_eq(write_on(EDITOR, &attempts),
                     "error: scripted model: no answer left for Editor.write (2 given)");
    cr_assert_eq(attempts, 1, "running out is not retried");
}

Test(scripted, single_object_is_reused)
{
    fx_opts.llm = fx_scripted("{\"write\": {\"draft\": \"always\"}}");
    for (int i = 0; i < 5; i++) cr_assert_str_eq(write_on(i % 2, NULL), "always");
}

Test(scripted, specific_key_wins)
{
    fx_opts.llm = fx_scripted("{\"write\": [{\"draft\": \"g1\"}, {\"draft\": \"g2\"}],"
                              " \"Editor.write\": [{\"draft\": \"e1\"}]}");
    cr_assert_str_eq(write_on(WRITER, NULL), "g1");
    cr_assert_str_eq(write_on(EDITOR, NULL), "e1");
    cr_assert_str_eq(write_on(WRITER, NULL), "g2");
    /* Editor does not fall back to the generic key once its own list ends */
    cr_assert_str_eq(write_on(EDITOR, NULL),
                     "error: scripted model: no answer left for Editor.write (1 given)");
    cr_assert_str_eq(write_on(WRITER, NULL),
                     "error: scripted model: no answer left for write (2 given)");
}

Test(scripted, every_output_type)
{
    fx_opts.llm = fx_scripted(
        "{\"assess\": [{\"ok\": true, \"count\": -4, \"score\": 2, \"data\": {\"a\": [1, null]},"
        " \"verdict\": \"failed\", \"note\": \"caf\\u00e9\"},"
        " {\"ok\": false, \"count\": 9007199254740993, \"score\": 0.25, \"data\": null,"
        " \"verdict\": \"pending\", \"note\": \"\"}]}");
    zgrt_value args[6] = {fx_int(1),   fx_enum(0), fx_json("1"),
                          fx_float(1), fx_bool(0), fx_str("s")};
    zgrt_value out[6];
    char err[512];
    int attempts;
    cr_assert_eq(fx_run(A_ASSESS, EDITOR, 0, args, out, &attempts, err, sizeof err), 0, "%s", err);
    cr_assert_eq(out[0].tag, ZGRT_BOOL);
    cr_assert_eq(out[0].u.i, 1);
    cr_assert_eq(out[1].tag, ZGRT_INT);
    cr_assert_eq(out[1].u.i, -4);
    cr_assert_eq(out[2].tag, ZGRT_FLOAT);
    cr_assert_float_eq(out[2].u.f, 2.0, 1e-12);
    cr_assert_eq(out[3].tag, ZGRT_JSON);
    json_t *want = json_loads("{\"a\": [1, null]}", 0, NULL);
    cr_assert(json_equal(want, (json_t *)out[3].u.j));
    json_decref(want);
    cr_assert_eq(out[4].tag, ZGRT_ENUM);
    cr_assert_eq(out[4].u.i, 2);
    cr_assert_str_eq(fx_text(&out[5]), "caf\xc3\xa9");
    cr_assert_eq(fx_run(A_ASSESS, EDITOR, 1, args, out, &attempts, err, sizeof err), 0, "%s", err);
    cr_assert_eq(out[0].u.i, 0);
    cr_assert_eq(out[1].u.i, INT64_C(9007199254740993));
    cr_assert_float_eq(out[2].u.f, 0.25, 1e-12);
    cr_assert(json_is_null((json_t *)out[3].u.j));
    cr_assert_eq(out[4].u.i, 0);
    cr_assert_str_eq(fx_text(&out[5]), "");
}

Test(scripted, type_error_in_a_reused_answer_is_not_retried)
{
    fx_opts.llm = fx_scripted("{\"write\": {\"draft\": 5}}");
    int attempts;
    const char *r = write_on(EDITOR, &attempts);
    cr_assert(
        strstr(r, "error: scripted model: the answer for Editor.write: `draft`: expected str"),
        "%s", r);
    cr_assert_eq(attempts, 1);
}

Test(scripted, invalid_answers_are_retried)
{
    fx_opts.llm =
        fx_scripted("{\"write\": [{\"draft\": 5}, {\"drafts\": \"x\"}, {\"draft\": \"ok\"}]}");
    int attempts;
    cr_assert_str_eq(write_on(EDITOR, &attempts), "ok");
    cr_assert_eq(attempts, 3);
    cr_assert_eq(fx_notes, 2, "one note per failed attempt");
}

Test(scripted, too_many_invalid_answers)
{
    /* write: retries 3, so 4 attempts */
    fx_opts.llm = fx_scripted("{\"write\": [{\"draft\": 1}, {\"draft\": 2}, {\"draft\": 3},"
                              " {\"draft\": 4}, {\"draft\": \"late\"}]}");
    int attempts;
    const char *r = write_on(EDITOR, &attempts);
    cr_assert(strstr(r, "error: no valid answer after 4 attempts: scripted model: answer 4 for "
                        "Editor.write: `draft`: expected str"),
              "%s", r);
    cr_assert_eq(attempts, 4);
}

Test(scripted, missing_and_extra_keys)
{
    fx_actions[A_WRITE].retries = 0;
    fx_opts.llm = fx_scripted("{\"write\": [{}, {\"draft\": \"x\", \"extra\": 1, \"more\": 2}]}");
    const char *r = write_on(EDITOR, NULL);
    cr_assert(strstr(r, "answer 1 for Editor.write: missing key `draft`"), "%s", r);
    r = write_on(EDITOR, NULL);
    cr_assert(strstr(r, "answer 2 for Editor.write: unexpected keys `extra`, `more`"), "%s", r);

    fx_opts.llm = fx_scripted("{\"assess\": {\"ok\": true}}");
    zgrt_value args[6] = {fx_int(1),   fx_enum(0), fx_json("1"),
                          fx_float(1), fx_bool(0), fx_str("s")};
    zgrt_value out[6];
    char err[512];
    int attempts;
    cr_assert_eq(fx_run(A_ASSESS, EDITOR, 0, args, out, &attempts, err, sizeof err), -1);
    cr_assert(strstr(err, "missing keys `count`, `score`, `data`, `verdict`, `note`"), "%s", err);
}

Test(scripted, bad_values)
{
    fx_actions[A_ASSESS].retries = 5;
    fx_opts.llm = fx_scripted(
        "{\"assess\": [{\"ok\": 1, \"count\": 1, \"score\": 1, \"data\": 1, \"verdict\": "
        "\"passed\", \"note\": \"\"},"
        " {\"ok\": true, \"count\": 1.5, \"score\": 1, \"data\": 1, \"verdict\": \"passed\", "
        "\"note\": \"\"},"
        " {\"ok\": true, \"count\": 1, \"score\": \"1\", \"data\": 1, \"verdict\": \"passed\", "
        "\"note\": \"\"},"
        " {\"ok\": true, \"count\": 1, \"score\": 1, \"data\": 1, \"verdict\": \"maybe\", "
        "\"note\": \"\"},"
        " {\"ok\": true, \"count\": 1, \"score\": 1, \"data\": 1, \"verdict\": 1, \"note\": \"\"},"
        " {\"ok\": true, \"count\": 1, \"score\": 1, \"data\": 1, \"verdict\": \"passed\", "
        "\"note\": null}]}");
    zgrt_value args[6] = {fx_int(1),   fx_enum(0), fx_json("1"),
                          fx_float(1), fx_bool(0), fx_str("s")};
    zgrt_value out[6];
    char err[512];
    int attempts;
    cr_assert_eq(fx_run(A_ASSESS, EDITOR, 0, args, out, &attempts, err, sizeof err), -1);
    cr_assert_eq(attempts, 6);
    cr_assert(strstr(err, "answer 6 for Editor.assess: `note`: expected str"), "%s", err);
    cr_assert_eq(fx_notes, 5);
}

Test(scripted, file_errors)
{
    fx_opts.llm = "scripted:/nonexistent/answers.json";
    const char *r = write_on(EDITOR, NULL);
    cr_assert(strstr(r, "error: scripted model: cannot read `/nonexistent/answers.json`"), "%s", r);

    const char *f = fx_file("{\"write\": [");
    char spec[600];
    snprintf(spec, sizeof spec, "scripted:%s", f);
    fx_opts.llm = spec;
    r = write_on(EDITOR, NULL);
    cr_assert(strstr(r, "is not valid JSON (line 1"), "%s", r);

    fx_opts.llm = fx_scripted("[{\"draft\": \"x\"}]");
    cr_assert(strstr(write_on(EDITOR, NULL), "must hold a JSON object"));

    fx_opts.llm = fx_scripted("{\"write\": [\"x\"]}");
    r = write_on(EDITOR, NULL);
    cr_assert(strstr(r, "answer 1 for write is not a JSON object"), "%s", r);

    fx_opts.llm = fx_scripted("{\"write\": 3}");
    r = write_on(EDITOR, NULL);
    cr_assert(strstr(r, "the value of write must be an answer object or a list of them"), "%s", r);

    fx_opts.llm = fx_scripted("{\"write\": {}, \"write\": {}}");
    r = write_on(EDITOR, NULL);
    cr_assert(strstr(r, "is not valid JSON"), "duplicate keys: %s", r);
}

Test(scripted, no_key_for_the_action)
{
    const char *spec = fx_scripted("{\"Writer.write\": {\"draft\": \"w\"}}");
    fx_opts.llm = spec;
    const char *r = write_on(EDITOR, NULL);
    char want[800];
    snprintf(want, sizeof want,
             "error: scripted model: `%s` has no answer for Editor.write (no key `Editor.write` "
             "or `write`)",
             spec + 9);
    cr_assert_str_eq(r, want);
    /* the fallback does not hide a missing key */
    zgrt_value arg = fx_str("d"), out;
    char err[512];
    int attempts;
    cr_assert_eq(fx_run(A_JUDGE, EDITOR, 0, &arg, &out, &attempts, err, sizeof err), -1);
}

Test(scripted, cache_is_per_run)
{
    const char *spec = fx_scripted("{\"write\": [{\"draft\": \"a\"}]}");
    fx_opts.llm = spec;
    cr_assert_str_eq(write_on(EDITOR, NULL), "a");
    cr_assert(strstr(write_on(EDITOR, NULL), "no answer left"));
    zri_actions_shutdown();
    cr_assert_str_eq(write_on(EDITOR, NULL), "a", "a new run starts the lists again");
}

typedef struct {
    int lifeline;
    int got[100];
    int n;
} shared_job;

static void *shared_thread(void *arg)
{
    shared_job *j = arg;
    zri_heap *h = zri_heap_new();
    for (int i = 0; i < 50; i++) {
        zgrt_value in, out;
        in.tag = ZGRT_STR;
        in.u.s = zri_str(h, "t", 1);
        char err[512];
        int attempts;
        if (fx_run_in(h, NULL, A_WRITE, j->lifeline, (uint64_t)i, &in, &out, &attempts, err,
                      sizeof err) == 0)
            j->got[j->n++] = atoi(out.u.s->data);
    }
    zri_heap_free(h);
    return NULL;
}

Test(scripted, shared_key_consumed_once_each_across_threads)
{
    char text[4096] = "{\"write\": [";
    for (int i = 0; i < 100; i++) {
        char item[32];
        snprintf(item, sizeof item, "%s{\"draft\": \"%d\"}", i ? ", " : "", i);
        strcat(text, item);
    }
    strcat(text, "]}");
    fx_opts.llm = fx_scripted(text);
    shared_job jobs[2] = {{.lifeline = EDITOR}, {.lifeline = WRITER}};
    pthread_t t[2];
    for (int k = 0; k < 2; k++)
        cr_assert_eq(pthread_create(&t[k], NULL, shared_thread, &jobs[k]), 0);
    for (int k = 0; k < 2; k++) pthread_join(t[k], NULL);
    int seen[100] = {0};
    cr_assert_eq(jobs[0].n + jobs[1].n, 100);
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < jobs[k].n; i++) {
            cr_assert(jobs[k].got[i] >= 0 && jobs[k].got[i] < 100);
            seen[jobs[k].got[i]]++;
            if (i > 0) cr_assert_gt(jobs[k].got[i], jobs[k].got[i - 1], "call order per lifeline");
        }
    }
    for (int i = 0; i < 100; i++) cr_assert_eq(seen[i], 1, "answer %d taken %d times", i, seen[i]);
}

/* ---- fallback ---------------------------------------------------------- */

static int judge(int *attempts, char *err, size_t errlen, zgrt_value *out)
{
    zgrt_value arg = fx_str("draft");
    return fx_run(A_JUDGE, EDITOR, 0, &arg, out, attempts, err, errlen);
}

Test(fallback, used_after_the_retries)
{
    /* judge: retries 2 (3 attempts), fallback true */
    fx_opts.llm = fx_scripted("{\"judge\": [{\"approved\": \"x\"}, {\"approved\": 1},"
                              " {\"approved\": null}, {\"approved\": false}]}");
    zgrt_value out;
    char err[512];
    int attempts;
    cr_assert_eq(judge(&attempts, err, sizeof err, &out), 0, "%s", err);
    cr_assert_eq(attempts, 3);
    cr_assert_eq(out.tag, ZGRT_BOOL);
    cr_assert_eq(out.u.i, 1);
    cr_assert_eq(fx_notes, 3, "2 retries and the fallback");
    /* the next call takes the 4th answer */
    cr_assert_eq(judge(&attempts, err, sizeof err, &out), 0, "%s", err);
    cr_assert_eq(attempts, 1);
    cr_assert_eq(out.u.i, 0);
}

Test(fallback, used_when_the_list_runs_out)
{
    fx_opts.llm = fx_scripted("{\"Editor.judge\": []}");
    zgrt_value out;
    char err[512];
    int attempts;
    cr_assert_eq(judge(&attempts, err, sizeof err, &out), 0, "%s", err);
    cr_assert_eq(attempts, 1);
    cr_assert_eq(out.u.i, 1);
}

Test(fallback, retries_forever_stop_at_the_end_of_the_list)
{
    fx_opts.llm = fx_scripted("{\"forever\": [{\"n\": \"a\"}, {\"n\": \"b\"}, {\"n\": 1.5},"
                              " {\"n\": true}, {\"n\": null}]}");
    zgrt_value out;
    char err[512];
    int attempts;
    cr_assert_eq(fx_run(A_FOREVER, WRITER, 0, NULL, &out, &attempts, err, sizeof err), 0, "%s",
                 err);
    cr_assert_eq(attempts, 6);
    cr_assert_eq(out.tag, ZGRT_INT);
    cr_assert_eq(out.u.i, 7);
}

Test(fallback, cancellation_stops_retries)
{
    fx_opts.llm = fx_scripted("{\"forever\": {\"n\": \"never valid\"}}");
    volatile int cancel = 1;
    zgrt_value out;
    char err[512];
    int attempts;
    zri_heap *h = zri_heap_new();
    int rc = fx_run_in(h, &cancel, A_FOREVER, WRITER, 0, NULL, &out, &attempts, err, sizeof err);
    zri_heap_free(h);
    cr_assert_eq(rc, -1);
    cr_assert_str_eq(err, "cancelled");
}

Test(fallback, json_null_fallback)
{
    static const zgrt_type t_json[] = {{ZGRT_JSON, -1}};
    static const zgrt_value fb_null[] = {{ZGRT_JSON, {.j = NULL}}};
    fx_actions[A_FOREVER].result_types = t_json;
    fx_actions[A_FOREVER].fallback = fb_null;
    fx_opts.llm = fx_scripted("{\"forever\": []}");
    zgrt_value out;
    char err[512];
    int attempts;
    cr_assert_eq(fx_run(A_FOREVER, WRITER, 0, NULL, &out, &attempts, err, sizeof err), 0, "%s",
                 err);
    cr_assert_eq(out.tag, ZGRT_JSON);
    cr_assert(json_is_null((json_t *)out.u.j));
}
