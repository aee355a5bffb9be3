/* test_trace.c — the JSON Lines trace: exact lines for a small run, and for
 * larger runs (loops with control messages, parallel regions, coregions,
 * actions, the CPL monitor, errors) a check of the MSC the trace describes:
 * matching sends and receives, FIFO channels, indices, and vector clocks
 * equal to the causal past computed by graph reachability. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "programs.h"

/* Runs p with --trace and returns the trace's lines (checked). */
static json_t *traced(const zgrt_program *p, const char *const *args, int want_status)
{
    char *path = temp_path("trace");
    const char *argv[32];
    int n = 0;
    for (; args && args[n]; n++) argv[n] = args[n];
    argv[n++] = "--trace";
    argv[n++] = path;
    argv[n] = NULL;
    run_out r = run_prog(p, argv);
    cr_expect_eq(r.status, want_status, "%s", r.err);
    json_t *lines = read_jsonl(path);
    cr_assert_not_null(lines, "trace not readable");
    char why[512];
    cr_expect_eq(check_trace(lines, why, sizeof why), 0, "%s", why);
    unlink(path);
    free(path);
    run_out_free(&r);
    return lines;
}

/* The events of one lifeline, as compact JSON text, in order. */
static char **events_of(json_t *lines, const char *life, int *n)
{
    char **out = calloc(json_array_size(lines) + 1, sizeof *out);
    *n = 0;
    size_t i;
    json_t *j;
    json_array_foreach(lines, i, j)
    {
        const char *l = json_string_value(json_object_get(j, "lifeline"));
        const char *k = json_string_value(json_object_get(j, "kind"));
        if (l && !strcmp(l, life) && strcmp(k, "start"))
            out[(*n)++] = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    }
    return out;
}

static void free_events(char **ev, int n)
{
    for (int i = 0; i < n; i++) free(ev[i]);
    free(ev);
}

Test(trace, hello_exact_lines, .timeout = 20)
{
    json_t *lines = traced(&prog_hello, (const char *const[]){"--arg", "topic=hi", NULL}, 0);
    cr_assert_eq(json_array_size(lines), 8);
    char *s0 = json_dumps(json_array_get(lines, 0), JSON_COMPACT | JSON_PRESERVE_ORDER);
    char *s1 = json_dumps(json_array_get(lines, 1), JSON_COMPACT | JSON_PRESERVE_ORDER);
    char *s7 = json_dumps(json_array_get(lines, 7), JSON_COMPACT | JSON_PRESERVE_ORDER);
    cr_expect_str_eq(s0, "{\"kind\":\"start\",\"lifeline\":\"User\",\"store\":{\"topic\":\"hi\"}}");
    cr_expect_str_eq(s1, "{\"kind\":\"start\",\"lifeline\":\"Writer\",\"store\":{}}");
    cr_expect_str_eq(s7, "{\"kind\":\"end\",\"result\":\"[hi]\"}");
    free(s0);
    free(s1);
    free(s7);
    int nu, nw;
    char **u = events_of(lines, "User", &nu), **w = events_of(lines, "Writer", &nw);
    cr_assert_eq(nu, 2);
    cr_assert_eq(nw, 3);
    cr_expect_str_eq(
        u[0], "{\"lifeline\":\"User\",\"index\":1,\"kind\":\"send\",\"to\":\"Writer\","
              "\"channel\":\"main\",\"values\":[\"hi\"],\"control\":null,"
              "\"msg\":\"User>Writer@main#1\",\"writes\":{},\"vc\":{\"User\":1,\"Writer\":0}}");
    cr_expect_str_eq(u[1],
                     "{\"lifeline\":\"User\",\"index\":2,\"kind\":\"recv\",\"from\":\"Writer\","
                     "\"channel\":\"main\",\"values\":[\"[hi]\"],\"control\":null,"
                     "\"msg\":\"Writer>User@main#1\",\"writes\":{\"draft\":\"[hi]\"},"
                     "\"vc\":{\"User\":2,\"Writer\":3}}");
    cr_expect_str_eq(w[0],
                     "{\"lifeline\":\"Writer\",\"index\":1,\"kind\":\"recv\",\"from\":\"User\","
                     "\"channel\":\"main\",\"values\":[\"hi\"],\"control\":null,"
                     "\"msg\":\"User>Writer@main#1\",\"writes\":{\"topic\":\"hi\"},"
                     "\"vc\":{\"User\":1,\"Writer\":1}}");
    cr_expect_str_eq(
        w[1], "{\"lifeline\":\"Writer\",\"index\":2,\"kind\":\"act\",\"action\":null,"
              "\"attempts\":1,\"writes\":{\"draft\":\"[hi]\"},\"vc\":{\"User\":1,\"Writer\":2}}");
    free_events(u, nu);
    free_events(w, nw);
    json_decref(lines);
}

Test(trace, control_messages_and_choices, .timeout = 30)
{
    json_t *lines = traced(&prog_pingpong, (const char *const[]){"--arg", "limit=3", NULL}, 0);
    int na, nb;
    char **a = events_of(lines, "A", &na), **b = events_of(lines, "B", &nb);
    /* A: (choice, send-ctl, send, recv) × 3, then choice, send-ctl */
    cr_assert_eq(na, 14);
    cr_assert_eq(nb, 4 * 3 + 1);
    cr_expect_str_eq(
        a[0], "{\"lifeline\":\"A\",\"index\":1,\"kind\":\"choice\",\"construct\":\"while#1\","
              "\"value\":true,\"writes\":{},\"vc\":{\"A\":1,\"B\":0}}");
    cr_expect_str_eq(
        a[1], "{\"lifeline\":\"A\",\"index\":2,\"kind\":\"send\",\"to\":\"B\",\"channel\":\"main\","
              "\"values\":[true],\"control\":\"while#1\",\"msg\":\"A>B@main#1\","
              "\"writes\":{},\"vc\":{\"A\":2,\"B\":0}}");
    cr_expect_str_eq(
        a[13],
        "{\"lifeline\":\"A\",\"index\":14,\"kind\":\"send\",\"to\":\"B\",\"channel\":\"main\","
        "\"values\":[false],\"control\":\"while#1\",\"msg\":\"A>B@main#7\","
        "\"writes\":{},\"vc\":{\"A\":14,\"B\":12}}");
    cr_expect_str_eq(b[2], "{\"lifeline\":\"B\",\"index\":3,\"kind\":\"act\",\"action\":\"inc\","
                           "\"attempts\":1,\"writes\":{\"k\":1},\"vc\":{\"A\":3,\"B\":3}}");
    free_events(a, na);
    free_events(b, nb);
    json_decref(lines);
}

Test(trace, parallel_regions, .timeout = 30)
{
    for (int i = 0; i < 5; i++) json_decref(traced(&prog_par, NULL, 0));
}

Test(trace, coregion, .timeout = 30)
{
    for (int i = 0; i < 5; i++) json_decref(traced(&prog_coregion, NULL, 0));
}

Test(trace, actions_and_enums, .timeout = 30)
{
    json_t *lines = traced(&prog_actions, NULL, 0);
    int n;
    char **a = events_of(lines, "A", &n);
    cr_assert_eq(n, 2);
    cr_expect_str_eq(a[0], "{\"lifeline\":\"A\",\"index\":1,\"kind\":\"act\",\"action\":\"double\","
                           "\"attempts\":1,\"writes\":{\"m\":42},\"vc\":{\"A\":1}}");
    cr_expect_str_eq(a[1], "{\"lifeline\":\"A\",\"index\":2,\"kind\":\"act\",\"action\":\"write\","
                           "\"attempts\":1,\"prompt\":{\"system\":\"Write.\",\"user\":\"hi\"},"
                           "\"writes\":{\"draft\":\"[write:draft]\"},\"vc\":{\"A\":2}}");
    free_events(a, n);
    json_t *end = json_array_get(lines, json_array_size(lines) - 1);
    char *e = json_dumps(end, JSON_COMPACT | JSON_PRESERVE_ORDER);
    cr_expect_str_eq(e, "{\"kind\":\"end\",\"result\":[42,\"[write:draft]\"]}");
    free(e);
    json_decref(lines);
    lines = traced(&prog_enums, NULL, 0);
    char **r = events_of(lines, "Runner", &n);
    cr_assert_eq(n, 2);
    cr_expect(strstr(r[1], "\"values\":[\"failed\"]"), "%s", r[1]);
    free_events(r, n);
    json_decref(lines);
}

Test(trace, errors_end_the_trace, .timeout = 30)
{
    json_t *lines = traced(&prog_mismatch, NULL, 1);
    json_t *end = json_array_get(lines, json_array_size(lines) - 1);
    cr_expect_str_eq(json_string_value(json_object_get(end, "error")),
                     "lifeline B: mm.zg:4:5: constant binding mismatch: expected 5, got 3");
    json_decref(lines);
    lines = traced(&prog_trap_par, NULL, 1);
    json_decref(lines);
}
