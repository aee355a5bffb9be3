/* The recorded live sessions of the paper's §5.11 (read-only data outside
 * the repository, located through ZGAN_L2LIVE_DIR).
 *
 * What the paper reports: 200 sessions per model; supervisor retraction in
 * 0 % (claude-haiku-4-5), 15.5 % (gpt-4o-mini) and 44.5 % (Llama-3.2) of
 * them, 120 retracted sessions in all; the unguarded baseline left an A3
 * witness in every retracted session, the L2 runtime in none (0 / 120);
 * executor liveness under L2 84.5 %, 100 % and 55.5 %.  The tool must
 * reproduce these counts from the traces. */
#include "helpers.h"

#include <jansson.h>
#include <sys/stat.h>

#ifndef ZGAN_L2LIVE_DIR
#error "ZGAN_L2LIVE_DIR must be defined by the build"
#endif

typedef struct {
    const char *model;
    int retracted;      /* 200 × the paper's retraction rate */
    int live_executors; /* 200 × the paper's executor liveness under L2 */
} model_row;

static const model_row models[] = {
    {"claude-haiku-4-5", 0, 200},
    {"gpt-4o-mini", 31, 169},
    {"llama3.2:latest", 89, 111},
};

static char *dir_of(const char *discipline, const char *model)
{
    char *p;
    cr_assert(asprintf(&p, "%s/%s/%s", ZGAN_L2LIVE_DIR, discipline, model) > 0);
    return p;
}

static void need_data(void)
{
    struct stat st;
    if (stat(ZGAN_L2LIVE_DIR, &st) != 0 || !S_ISDIR(st.st_mode))
        cr_skip_test("live data not found at %s; skipping", ZGAN_L2LIVE_DIR);
}

/* `zgc anomalies --json DIR [extra]`, parsed. */
static json_t *run_json(const char *dir, const char *extra)
{
    const char *args[] = {"--json", dir, extra, NULL};
    t_run_result r = t_run(args);
    cr_assert_eq(r.status, 0, "zgc anomalies failed on %s: %s", dir, r.err);
    json_error_t je;
    json_t *j = json_loadb(r.out, r.out_len, 0, &je);
    cr_assert_not_null(j, "output is not JSON: %s", je.text);
    t_run_free(&r);
    return j;
}

static json_int_t geti(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(o, a);
    if (b) v = json_object_get(v, b);
    cr_assert(json_is_integer(v), "missing %s.%s", a, b ? b : "");
    return json_integer_value(v);
}

/* Per model and discipline: exactly the paper's numbers. */
Test(live, counts_per_directory_match_the_paper)
{
    need_data();
    int pooled_retracted = 0, pooled_baseline_a3 = 0, pooled_l2_a3 = 0;
    for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
        for (int cascade = 0; cascade < 2; cascade++) {
            char *dir = dir_of(cascade ? "cascade" : "nocascade", models[m].model);
            json_t *j = run_json(dir, NULL);
            int a3 = cascade ? 0 : models[m].retracted;
            cr_assert_eq(geti(j, "histories", NULL), 200, "%s", dir);
            cr_assert_eq(geti(j, "with", "A1"), 0, "%s", dir);
            cr_assert_eq(geti(j, "with", "A2"), 0, "%s", dir);
            cr_assert_eq(geti(j, "with", "A3"), a3, "%s", dir);
            cr_assert_eq(geti(j, "with", "A6"), 0, "%s", dir);
            cr_assert_eq(geti(j, "levels", "L1"), a3, "%s", dir);
            cr_assert_eq(geti(j, "levels", "L4"), 200 - a3, "%s", dir);
            if (cascade)
                pooled_l2_a3 += (int)geti(j, "with", "A3");
            else
                pooled_baseline_a3 += (int)geti(j, "with", "A3");
            json_t *files = json_object_get(j, "files"), *f;
            size_t i;
            json_array_foreach(files, i, f)
            {
                cr_assert_str_eq(json_string_value(json_object_get(f, "a3_predicate")), "precise");
                cr_assert_eq(json_integer_value(json_object_get(f, "records")), 2);
            }
            json_decref(j);
            free(dir);
        }
        pooled_retracted += models[m].retracted;
    }
    cr_assert_eq(pooled_retracted, 120);
    cr_assert_eq(pooled_baseline_a3, 120, "baseline: an A3 witness in every retracted session");
    cr_assert_eq(pooled_l2_a3, 0, "L2: 0 / 120");
}

/* Session by session: the baseline has an A3 witness exactly when the
 * session was retracted (some record aborted), the L2 discipline never;
 * and under L2 the surviving executors give the paper's liveness. */
Test(live, a3_exactly_in_retracted_baseline_sessions)
{
    need_data();
    zgan_options opt = {.a3 = ZGAN_A3_AUTO};
    for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
        int retracted = 0, live = 0;
        for (int n = 0; n < 200; n++) {
            for (int cascade = 0; cascade < 2; cascade++) {
                char *dir = dir_of(cascade ? "cascade" : "nocascade", models[m].model), *path,
                     err[512];
                cr_assert(asprintf(&path, "%s/sess-%04d.jsonl", dir, n) > 0);
                zgan_history *h = NULL;
                cr_assert_eq(zgan_read_file(path, &h, err, sizeof err), 0, "%s", err);
                bool aborted = false;
                for (size_t i = 0; i < h->nrec; i++) {
                    aborted |= (h->rec[i].flags & ZGAN_ABORTED) != 0;
                    if (cascade && !(h->rec[i].flags & ZGAN_ABORTED) &&
                        h->rec[i].agent == zgan_history_lookup(h, "executor"))
                        live++;
                }
                zgan_report r;
                t_detect(h, &opt, &r);
                if (cascade) {
                    cr_assert_eq(r.n[ZGAN_A3], 0, "%s", path);
                } else {
                    retracted += aborted;
                    cr_assert_eq(r.n[ZGAN_A3] > 0, aborted, "%s", path);
                    if (aborted) { /* the executor keeps the retracted planner */
                        cr_assert_eq(r.n[ZGAN_A3], 1);
                        cr_assert_eq(h->rec[r.w[ZGAN_A3][0].record].agent, t_id(h, "executor"));
                        cr_assert_eq(h->rec[r.w[ZGAN_A3][0].other].agent, t_id(h, "planner"));
                    }
                }
                zgan_report_free(&r);
                zgan_history_free(h);
                free(path);
                free(dir);
            }
        }
        cr_assert_eq(retracted, models[m].retracted, "%s", models[m].model);
        cr_assert_eq(live, models[m].live_executors, "%s", models[m].model);
    }
}

/* The residue over-approximation on the same traces: sound (every precise
 * witness session also has a residue witness), and here exact, since every
 * value read was written by a logged operation. */
Test(live, residue_agrees_on_logged_values)
{
    need_data();
    for (int cascade = 0; cascade < 2; cascade++) {
        char *dir;
        cr_assert(asprintf(&dir, "%s/%s", ZGAN_L2LIVE_DIR, cascade ? "cascade" : "nocascade") > 0);
        json_t *precise = run_json(dir, NULL), *residue = run_json(dir, "--a3=residue");
        cr_assert_eq(geti(precise, "histories", NULL), 600);
        cr_assert_eq(geti(residue, "with", "A3"), geti(precise, "with", "A3"));
        cr_assert_eq(geti(residue, "with", "A3"), cascade ? 0 : 120);
        json_decref(precise);
        json_decref(residue);
        free(dir);
    }
}
