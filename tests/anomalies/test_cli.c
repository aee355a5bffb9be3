/* `zgc anomalies` as a command: exit statuses, text and JSON reports,
 * directories. */
#include "helpers.h"

#include <jansson.h>
#include <sys/stat.h>

#define RUN(...) t_run((const char *const[]){__VA_ARGS__, NULL})

static const char stale[] =
    "{\"agent\":\"a1\",\"read_time\":0,\"write_set\":[\"c1\"],\"write_values\":{\"c1\":\"v1\"},"
    "\"write_time\":1}\n"
    "{\"agent\":\"a2\",\"read_set\":[\"c1\"],\"read_values\":{\"c1\":\"NULL\"},\"read_time\":0,"
    "\"write_time\":2}\n";

static const char reordered[] =
    "{\"txn\":\"t9\",\"io\":[[\"c1\",\"v1\"],[\"c2\",\"v1\"]],\"co\":[[\"c2\",\"v1\"],[\"c1\","
    "\"v1\"]],"
    "\"planned_tool\":\"t1\",\"read_registry\":[\"t1\"],\"write_registry\":[]}\n";

static const char clean[] = "{\"agent\":\"a\",\"read_time\":0,\"write_time\":1}\n";

Test(cli, help_and_usage)
{
    t_run_result r = RUN("--help");
    cr_assert_eq(r.status, 0);
    cr_assert(strstr(r.out, "usage: zgc anomalies") == r.out);
    cr_assert(strstr(r.out, "--a1-same-agent") && strstr(r.out, "--a6-any-diff"));
    cr_assert_eq(r.err_len, 0);
    t_run_free(&r);

    const char *const bad[][3] = {{"--frobnicate", "x.jsonl", NULL},
                                  {"--a3=maybe", "x.jsonl", NULL},
                                  {"--a3", NULL, NULL},
                                  {"--json", NULL, NULL}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = t_run(bad[i]);
        cr_assert_eq(r.status, 2, "case %zu", i);
        cr_assert(strstr(r.err, "zgc anomalies: error: ") == r.err, "%s", r.err);
        cr_assert_eq(r.out_len, 0);
        t_run_free(&r);
    }
}

Test(cli, input_errors_exit_1)
{
    char *dir = t_tmpdir();
    char *bad = t_write(dir, "bad.jsonl", "{\"agent\":\"a\"}\n\n{\"read_time\":\"soon\"}\n");
    t_run_result r = RUN(bad);
    cr_assert_eq(r.status, 1);
    char *want;
    cr_assert(asprintf(&want, "%s:3: error: read_time must be an integer\n", bad) > 0);
    cr_assert_str_eq(r.err, want);
    free(want);
    t_run_free(&r);

    r = RUN("--json", "/nonexistent/h.jsonl");
    cr_assert_eq(r.status, 1);
    cr_assert(strstr(r.err, "/nonexistent/h.jsonl: error: cannot open") == r.err, "%s", r.err);
    cr_assert_eq(r.out_len, 0, "no partial JSON on error");
    t_run_free(&r);
    free(bad);
    t_rmtree(dir);
    free(dir);
}

Test(cli, text_report)
{
    char *dir = t_tmpdir();
    char *p = t_write(dir, "stale.jsonl", stale);
    t_run_result r = RUN(p);
    cr_assert_eq(r.status, 0, "anomalies found is still success");
    cr_assert(strstr(r.out, "stale.jsonl: 2 records, level L0\n"), "%s", r.out);
    cr_assert(strstr(r.out, "A1 1, A2 0, A3 0 (residue), A6 0\n"), "%s", r.out);
    cr_assert(strstr(r.out, "A1 record 2 read \"c1\" = null at 0; record 1 of agent \"a1\" wrote "
                            "\"v1\" at 1; the reader (agent \"a2\") committed at 2\n"),
              "%s", r.out);
    cr_assert_null(strstr(r.out, "histories"), "no summary for one file");
    t_run_free(&r);
    free(p);
    p = t_write(dir, "reordered.jsonl", reordered);
    r = RUN(p);
    cr_assert(strstr(r.out, "level L2\n"), "%s", r.out);
    cr_assert(strstr(r.out, "A6 record 1 (txn \"t9\") issued io[0] = [\"c1\", \"v1\"] but "
                            "committed co[0] = [\"c2\", \"v1\"]\n"),
              "%s", r.out);
    cr_assert(strstr(r.out, "A2 record 1 (txn \"t9\") planned tool \"t1\""), "%s", r.out);
    t_run_free(&r);
    free(p);
    t_rmtree(dir);
    free(dir);
}

Test(cli, json_report_for_a_directory)
{
    char *dir = t_tmpdir(), *sub;
    cr_assert(asprintf(&sub, "%s/sub", dir) > 0);
    cr_assert_eq(mkdir(sub, 0700), 0);
    free(t_write(dir, "a.jsonl", stale));
    free(t_write(sub, "b.jsonl", reordered));
    free(t_write(sub, "c.jsonl", clean));
    free(t_write(sub, "notes.txt", "not a history"));
    free(t_write(dir, "d.json", "not a history either"));

    t_run_result r = RUN("--json", dir);
    cr_assert_eq(r.status, 0, "%s", r.err);
    json_error_t je;
    json_t *j = json_loadb(r.out, r.out_len, 0, &je);
    cr_assert_not_null(j, "%s", je.text);
    cr_assert_eq(json_integer_value(json_object_get(j, "histories")), 3);
    json_t *with = json_object_get(j, "with"), *levels = json_object_get(j, "levels");
    cr_assert_eq(json_integer_value(json_object_get(with, "A1")), 1);
    cr_assert_eq(json_integer_value(json_object_get(with, "A2")), 1);
    cr_assert_eq(json_integer_value(json_object_get(with, "A3")), 0);
    cr_assert_eq(json_integer_value(json_object_get(with, "A6")), 1);
    static const int want_levels[5] = {1, 0, 1, 0, 1};
    for (int l = 0; l < 5; l++) {
        char key[3] = {'L', (char)('0' + l), 0};
        cr_assert_eq(json_integer_value(json_object_get(levels, key)), want_levels[l], "%s", key);
    }
    json_t *files = json_object_get(j, "files");
    cr_assert_eq(json_array_size(files), 3);
    /* sorted walk: a.jsonl, sub/b.jsonl, sub/c.jsonl */
    json_t *a = json_array_get(files, 0);
    cr_assert(strstr(json_string_value(json_object_get(a, "path")), "/a.jsonl"));
    cr_assert_str_eq(json_string_value(json_object_get(a, "level")), "L0");
    cr_assert_eq(json_integer_value(json_object_get(a, "records")), 2);
    json_t *w = json_array_get(json_object_get(json_object_get(a, "anomalies"), "A1"), 0);
    cr_assert_eq(json_integer_value(json_object_get(w, "reader")), 2);
    cr_assert_eq(json_integer_value(json_object_get(w, "writer")), 1);
    cr_assert_str_eq(json_string_value(json_object_get(w, "cell")), "c1");
    cr_assert(json_is_null(json_object_get(w, "read_value")));
    cr_assert_str_eq(json_string_value(json_object_get(w, "write_value")), "v1");
    json_t *b = json_array_get(files, 1);
    cr_assert(strstr(json_string_value(json_object_get(b, "path")), "/sub/b.jsonl"));
    json_t *w6 = json_array_get(json_object_get(json_object_get(b, "anomalies"), "A6"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(w6, "txn")), "t9");
    cr_assert_eq(json_integer_value(json_object_get(w6, "index")), 0);
    cr_assert_str_eq(json_string_value(json_array_get(json_object_get(w6, "committed"), 0)), "c2");
    json_decref(j);
    t_run_free(&r);

    /* text mode: a summary table after the per-history reports */
    r = RUN(dir);
    cr_assert_eq(r.status, 0);
    cr_assert(strstr(r.out, "\nhistories                                 3\n"), "%s", r.out);
    cr_assert(strstr(r.out, "with A6 (tool-effect reordering)          1\n"), "%s", r.out);
    cr_assert(strstr(r.out, "level L4                                  1\n"), "%s", r.out);
    t_run_free(&r);
    free(sub);
    t_rmtree(dir);
    free(dir);
}

Test(cli, directory_without_histories)
{
    char *dir = t_tmpdir(), *empty;
    cr_assert(asprintf(&empty, "%s/empty", dir) > 0);
    cr_assert_eq(mkdir(empty, 0700), 0);
    t_run_result r = RUN(empty);
    cr_assert_eq(r.status, 0);
    cr_assert(strstr(r.out, "histories                                 0\n"), "%s", r.out);
    t_run_free(&r);
    free(empty);

    free(t_write(dir, "readme.txt", "nothing here"));
    r = RUN("--json", dir);
    cr_assert_eq(r.status, 0);
    cr_assert(strstr(r.err, "warning: no *.jsonl files"), "%s", r.err);
    json_t *j = json_loadb(r.out, r.out_len, 0, NULL);
    cr_assert_not_null(j);
    cr_assert_eq(json_integer_value(json_object_get(j, "histories")), 0);
    cr_assert_eq(json_array_size(json_object_get(j, "files")), 0);
    json_decref(j);
    t_run_free(&r);
    t_rmtree(dir);
    free(dir);
}

Test(cli, options_change_the_report)
{
    char *dir = t_tmpdir();
    char *p =
        t_write(dir, "h.jsonl",
                "{\"txn\":1,\"agent\":\"a\",\"read_set\":[\"x\"],\"read_values\":{\"x\":\"seed\"},"
                "\"read_time\":0,\"write_time\":3,\"preds\":[]}\n"
                "{\"txn\":2,\"agent\":\"a\",\"write_set\":[\"x\"],\"write_values\":{\"x\":\"new\"},"
                "\"write_time\":2,\"io\":[[\"x\",\"new\"]],\"co\":[]}\n");
    t_run_result r = RUN(p);
    cr_assert(strstr(r.out, "level L4\n  A1 0, A2 0, A3 0 (precise), A6 0\n"), "%s", r.out);
    t_run_free(&r);
    r = RUN("--a1-same-agent", p);
    cr_assert(strstr(r.out, "level L0\n  A1 1,"), "%s", r.out);
    t_run_free(&r);
    r = RUN(p, "--a3", "residue");
    cr_assert(strstr(r.out, "level L1\n  A1 0, A2 0, A3 1 (residue), A6 0\n"), "%s", r.out);
    t_run_free(&r);
    r = RUN("--a6-any-diff", "--", p);
    cr_assert(strstr(r.out, "level L2\n  A1 0, A2 0, A3 0 (precise), A6 1\n"), "%s", r.out);
    cr_assert(strstr(r.out, "but committed co[0] = (end)"), "%s", r.out);
    t_run_free(&r);
    free(p);
    t_rmtree(dir);
    free(dir);
}
