/* The mock model, routing and the llm action path. */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

#include <jansson.h>

#include "fixture.h"

TestSuite(mock, .init = fx_setup, .fini = fx_teardown, .timeout = 30);
TestSuite(routing, .init = fx_setup, .fini = fx_teardown, .timeout = 30);

static zgrt_value assess_args[6];

static void make_assess_args(void)
{
    assess_args[0] = fx_int(3);
    assess_args[1] = fx_enum(1);
    assess_args[2] = fx_json("{\"k\":[1,2]}");
    assess_args[3] = fx_float(2.5);
    assess_args[4] = fx_bool(1);
    assess_args[5] = fx_str("text");
}

Test(mock, str_output_names_action_and_output)
{
    zgrt_value arg = fx_str("Say hello"), out;
    char err[512];
    int attempts = -1;
    cr_assert_eq(fx_run(A_WRITE, WRITER, 0, &arg, &out, &attempts, err, sizeof err), 0, "%s", err);
    cr_assert_eq(out.tag, ZGRT_STR);
    cr_assert_str_eq(fx_text(&out), "[write:draft]");
    cr_assert_eq(out.u.s->len, 13);
    cr_assert_eq(attempts, 1);
}

Test(mock, unnamed_str_output)
{
    zgrt_value out;
    char err[512];
    int attempts;
    cr_assert_eq(fx_run(A_UNNAMED, EDITOR, 0, NULL, &out, &attempts, err, sizeof err), 0, "%s",
                 err);
    cr_assert_str_eq(fx_text(&out), "[unnamed]");
}

Test(mock, every_output_type)
{
    make_assess_args();
    for (uint64_t call = 0; call < 200; call++) {
        zgrt_value out[6];
        char err[512];
        int attempts;
        cr_assert_eq(fx_run(A_ASSESS, call % 2, call, assess_args, out, &attempts, err, sizeof err),
                     0, "%s", err);
        cr_assert_eq(out[0].tag, ZGRT_BOOL);
        cr_assert(out[0].u.i == 0 || out[0].u.i == 1);
        cr_assert_eq(out[1].tag, ZGRT_INT);
        cr_assert(out[1].u.i >= 0 && out[1].u.i <= 10);
        cr_assert_eq(out[2].tag, ZGRT_FLOAT);
        cr_assert(out[2].u.f >= 0.0 && out[2].u.f <= 10.0);
        double tenths = out[2].u.f * 10.0;
        cr_assert(fabs(tenths - round(tenths)) < 1e-9, "one decimal: %g", out[2].u.f);
        cr_assert_eq(out[3].tag, ZGRT_JSON);
        cr_assert(json_is_object((json_t *)out[3].u.j));
        cr_assert_eq(json_object_size((json_t *)out[3].u.j), 0);
        cr_assert_eq(out[4].tag, ZGRT_ENUM);
        cr_assert_eq(out[4].u.i, 0, "enum 0, first member");
        cr_assert_str_eq(fx_text(&out[5]), "[assess:note]");
    }
}

Test(mock, enum_payload_names_its_enum)
{
    /* a second enum so the enum index is not 0 */
    static const char *const m[] = {"x", "y"};
    static const char *const v[] = {"pending", "passed", "failed"};
    static const zgrt_enum two[] = {{"Verdict", 3, v}, {"Other", 2, m}};
    static const zgrt_type t[] = {{ZGRT_ENUM, 1}};
    static const char *const names[] = {"o"};
    fx_prog.enums = two;
    fx_prog.nenums = 2;
    fx_actions[A_UNNAMED].result_types = t;
    fx_actions[A_UNNAMED].result_names = names;
    zgrt_value out;
    char err[512];
    int attempts;
    cr_assert_eq(fx_run(A_UNNAMED, EDITOR, 0, NULL, &out, &attempts, err, sizeof err), 0, "%s",
                 err);
    cr_assert_eq(out.tag, ZGRT_ENUM);
    cr_assert_eq(out.u.i, (int64_t)1 << 32);
}

/* bool, int and float outputs of assess for (seed, lifeline, call) */
static void sample(uint64_t seed, int lifeline, uint64_t call, int64_t out3[3])
{
    fx_opts.seed = seed;
    zgrt_value out[6];
    char err[512];
    int attempts;
    cr_assert_eq(fx_run(A_ASSESS, lifeline, call, assess_args, out, &attempts, err, sizeof err), 0,
                 "%s", err);
    out3[0] = out[0].u.i;
    out3[1] = out[1].u.i;
    out3[2] = (int64_t)llround(out[2].u.f * 10);
}

Test(mock, deterministic_and_order_independent)
{
    make_assess_args();
    enum { N = 32 };
    int64_t a[2][N][3], b[2][N][3], c[2][N][3];
    /* lifeline by lifeline */
    for (int l = 0; l < 2; l++)
        for (int i = 0; i < N; i++) sample(0, l, (uint64_t)i, a[l][i]);
    /* interleaved, calls in reverse order */
    for (int i = N - 1; i >= 0; i--)
        for (int l = 1; l >= 0; l--) sample(0, l, (uint64_t)i, b[l][i]);
    cr_assert(memcmp(a, b, sizeof a) == 0, "same seed, same values, whatever the order");
    /* another seed differs somewhere */
    for (int l = 0; l < 2; l++)
        for (int i = 0; i < N; i++) sample(1, l, (uint64_t)i, c[l][i]);
    cr_assert(memcmp(a, c, sizeof a) != 0, "seeds 0 and 1 give the same values");
    /* the lifelines get different sequences, and bools take both values */
    cr_assert(memcmp(a[0], a[1], sizeof a[0]) != 0);
    int trues = 0;
    for (int i = 0; i < N; i++) trues += (int)a[0][i][0];
    cr_assert(trues > 0 && trues < N, "bools: %d of %d true", trues, N);
}

typedef struct {
    int lifeline;
    int64_t vals[64][3];
} mock_job;

static void *mock_thread(void *arg)
{
    mock_job *j = arg;
    zri_heap *h = zri_heap_new();
    for (int i = 0; i < 64; i++) {
        zgrt_value out[6];
        char err[512];
        int attempts;
        if (fx_run_in(h, NULL, A_ASSESS, j->lifeline, (uint64_t)i, assess_args, out, &attempts, err,
                      sizeof err) != 0)
            j->vals[i][0] = -1;
        else {
            j->vals[i][0] = out[0].u.i;
            j->vals[i][1] = out[1].u.i;
            j->vals[i][2] = (int64_t)llround(out[2].u.f * 10);
        }
    }
    zri_heap_free(h);
    return NULL;
}

Test(mock, threads_give_the_sequential_values)
{
    make_assess_args();
    fx_opts.seed = 12345;
    mock_job jobs[2] = {{.lifeline = 0}, {.lifeline = 1}};
    pthread_t t[2];
    for (int k = 0; k < 2; k++) cr_assert_eq(pthread_create(&t[k], NULL, mock_thread, &jobs[k]), 0);
    for (int k = 0; k < 2; k++) pthread_join(t[k], NULL);
    for (int l = 0; l < 2; l++)
        for (int i = 0; i < 64; i++) {
            int64_t v[3];
            sample(12345, l, (uint64_t)i, v);
            cr_assert(memcmp(v, jobs[l].vals[i], sizeof v) == 0, "lifeline %d call %d", l, i);
        }
}

Test(mock, pure_actions_do_not_arrive_here)
{
    zgrt_value arg = fx_int(1), out;
    char err[512];
    int attempts;
    cr_assert_eq(fx_run(A_INC, EDITOR, 0, &arg, &out, &attempts, err, sizeof err), -1);
    cr_assert(strstr(err, "pure action `inc`"), "%s", err);
}

Test(mock, bad_action_index)
{
    char err[512];
    int attempts;
    cr_assert_eq(fx_run(N_ACTIONS, EDITOR, 0, NULL, NULL, &attempts, err, sizeof err), -1);
    cr_assert_eq(fx_run(-1, EDITOR, 0, NULL, NULL, &attempts, err, sizeof err), -1);
}

/* ---- routing ---------------------------------------------------------- */

static const char *write_on(int lifeline, const char *topic)
{
    static char buf[1024];
    zgrt_value arg = fx_str(topic), out;
    char err[512];
    int attempts;
    if (fx_run(A_WRITE, lifeline, 0, &arg, &out, &attempts, err, sizeof err) != 0) {
        snprintf(buf, sizeof buf, "error: %s", err);
        return buf;
    }
    snprintf(buf, sizeof buf, "%s", fx_text(&out));
    return buf;
}

Test(routing, default_is_mock) { cr_assert_str_eq(write_on(EDITOR, "t"), "[write:draft]"); }

Test(routing, precedence)
{
    const char *f_action = fx_scripted("{\"write\": {\"draft\": \"by Editor.write route\"}}");
    const char *f_lifeline = fx_scripted("{\"write\": {\"draft\": \"by Editor route\"}}");
    const char *f_all = fx_scripted("{\"write\": {\"draft\": \"by --llm\"}}");
    const char *f_writer_other = fx_scripted("{\"write\": {\"draft\": \"by Writer.other\"}}");
    /* the specific route first, so order does not decide */
    fx_route("Editor", "write", f_action);
    fx_route("Editor", NULL, f_lifeline);
    fx_route("Writer", "other", f_writer_other);
    cr_assert_str_eq(write_on(EDITOR, "t"), "by Editor.write route");
    /* Writer: only --llm or mock */
    cr_assert_str_eq(write_on(WRITER, "t"), "[write:draft]");
    fx_opts.llm = f_all;
    cr_assert_str_eq(write_on(WRITER, "t"), "by --llm");
    cr_assert_str_eq(write_on(EDITOR, "t"), "by Editor.write route");
    /* without the action route, the lifeline route */
    fx_opts.nroutes = 0;
    fx_route("Editor", NULL, f_lifeline);
    fx_route("Writer", "write", f_writer_other);
    cr_assert_str_eq(write_on(EDITOR, "t"), "by Editor route");
    cr_assert_str_eq(write_on(WRITER, "t"), "by Writer.other");
}

Test(routing, last_route_of_equal_rank_wins)
{
    fx_route("Editor", NULL, fx_scripted("{\"write\": {\"draft\": \"first\"}}"));
    fx_route("Editor", NULL, fx_scripted("{\"write\": {\"draft\": \"second\"}}"));
    cr_assert_str_eq(write_on(EDITOR, "t"), "second");
}

Test(routing, network_backends_unreachable)
{
    /* nothing listens on port 1: transport errors, retried at once (backoff scale 0) */
    setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1", 1);
    setenv("OLLAMA_HOST", "127.0.0.1:1", 1);
    static const char *const specs[] = {"openai", "openai:gpt-4o-mini", "ollama", "ollama:llama3"};
    for (int i = 0; i < 4; i++) {
        fx_opts.llm = specs[i];
        const char *r = write_on(EDITOR, "t");
        cr_assert(strstr(r, "error: no answer after 4 attempts: "), "%s", r);
        cr_assert(strstr(r, "cannot reach http://127.0.0.1:1/"), "%s", r);
    }
}

Test(routing, unknown_spec_and_fallback_is_not_used)
{
    fx_opts.llm = "gpt5";
    cr_assert_str_eq(
        write_on(EDITOR, "t"),
        "error: unknown model spec `gpt5` (available: mock, scripted:FILE, openai[:MODEL], "
        "ollama[:MODEL])");
    /* judge has a fallback, but a bad spec is not a failed call */
    zgrt_value arg = fx_str("d"), out;
    char err[512];
    int attempts;
    cr_assert_eq(fx_run(A_JUDGE, EDITOR, 0, &arg, &out, &attempts, err, sizeof err), -1);
    cr_assert(strstr(err, "unknown model spec `gpt5`"), "%s", err);
    cr_assert_eq(attempts, 1);
    fx_opts.llm = "scripted:";
    cr_assert(strstr(write_on(EDITOR, "t"), "needs a file: scripted:FILE.json"));
    fx_opts.llm = "mockery";
    cr_assert(strstr(write_on(EDITOR, "t"), "unknown model spec `mockery`"));
}

Test(routing, routes_for_one_lifeline_do_not_leak)
{
    setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1", 1);
    fx_route("Writer", NULL, "openai");
    cr_assert_str_eq(write_on(EDITOR, "t"), "[write:draft]");
    cr_assert(strstr(write_on(WRITER, "t"), "cannot reach http://127.0.0.1:1/"));
}
