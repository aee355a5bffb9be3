/* test_modes.c — per-lifeline executables: each lifeline of a program runs
 * in its own process (a forked child calling zgrt_main with only its body),
 * the processes talk through net/socket.c on Unix sockets, write their result
 * components with --result-file and their events to FILE.<Lifeline>; the
 * traces together must describe the same MSC as an in-process run. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "programs.h"

typedef struct proc_run {
    int status[8];
    char *result[8];
    json_t *trace; /* all lifelines' lines: starts, events, one end line */
    char *err[8];
} proc_run;

/* Runs every lifeline of p in its own process with extra run options. */
static proc_run run_processes(const zgrt_program *p, const char *const *opts)
{
    proc_run pr;
    memset(&pr, 0, sizeof pr);
    int n = p->nlifelines;
    char *socks[8], *results[8], *errs[8];
    char *trace = temp_path("ptrace");
    /* the run's secret, as zgc run --processes makes it */
    char *key = temp_path("key");
    FILE *kf = fopen(key, "w");
    cr_assert(kf && fwrite("0123456789abcdef0123456789abcdef", 1, 32, kf) == 32 && fclose(kf) == 0);
    cr_assert_eq(chmod(key, 0600), 0);
    pid_t pids[8];
    for (int l = 0; l < n; l++) {
        socks[l] = temp_path("sock");
        unlink(socks[l]); /* the name only: the lifeline listens there */
        results[l] = temp_path("res");
        errs[l] = temp_path("err");
    }
    for (int l = 0; l < n; l++) {
        pids[l] = fork();
        cr_assert_geq(pids[l], 0);
        if (pids[l] > 0) continue;
        /* the child: one lifeline */
        alarm(20);
        FILE *e = freopen(errs[l], "w", stderr);
        (void)e;
        zgrt_body_fn bodies[8] = {0};
        bodies[l] = p->bodies[l];
        zgrt_program q = *p;
        q.bodies = bodies;
        const char *argv[64];
        char addr[8][300];
        int k = 0;
        argv[k++] = "prog";
        for (int i = 0; opts && opts[i]; i++) argv[k++] = opts[i];
        snprintf(addr[l], sizeof addr[l], "unix:%s", socks[l]);
        argv[k++] = "--listen";
        argv[k++] = addr[l];
        for (int m = 0; m < n; m++) {
            if (m == l) continue;
            snprintf(addr[m], sizeof addr[m], "%s=unix:%s", p->lifelines[m], socks[m]);
            argv[k++] = "--peer";
            argv[k++] = addr[m];
        }
        argv[k++] = "--secret-file";
        argv[k++] = key;
        argv[k++] = "--result-file";
        argv[k++] = results[l];
        argv[k++] = "--trace";
        argv[k++] = trace;
        argv[k] = NULL;
        exit(zgrt_main(&q, k, (char **)argv));
    }
    for (int l = 0; l < n; l++) {
        int st;
        waitpid(pids[l], &st, 0);
        pr.status[l] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        pr.result[l] = read_file(results[l]);
        pr.err[l] = read_file(errs[l]);
    }
    /* the whole trace: every start line, then every lifeline's events */
    pr.trace = json_array();
    json_t *ends = json_array();
    for (int pass = 0; pass < 2; pass++)
        for (int l = 0; l < n; l++) {
            char path[512];
            snprintf(path, sizeof path, "%s.%s", trace, p->lifelines[l]);
            json_t *lines = read_jsonl(path);
            if (!lines) continue;
            size_t i;
            json_t *j;
            json_array_foreach(lines, i, j)
            {
                const char *kind = json_string_value(json_object_get(j, "kind"));
                int start = kind && !strcmp(kind, "start"), end = kind && !strcmp(kind, "end");
                if (end && pass == 0)
                    json_array_append(ends, j);
                else if (!end && start == (pass == 0))
                    json_array_append(pr.trace, j);
            }
            json_decref(lines);
            if (pass == 1) unlink(path);
        }
    if (json_array_size(ends)) json_array_append(pr.trace, json_array_get(ends, 0));
    json_decref(ends);
    for (int l = 0; l < n; l++) {
        unlink(socks[l]);
        unlink(results[l]);
        unlink(errs[l]);
        free(socks[l]);
        free(results[l]);
        free(errs[l]);
    }
    unlink(trace);
    free(trace);
    unlink(key);
    free(key);
    return pr;
}

static void proc_free(proc_run *pr)
{
    for (int l = 0; l < 8; l++) {
        free(pr->result[l]);
        free(pr->err[l]);
    }
    json_decref(pr->trace);
}

Test(modes, hello_as_processes, .timeout = 30)
{
    proc_run pr = run_processes(&prog_hello, (const char *const[]){"--arg", "topic=hi", NULL});
    cr_expect_eq(pr.status[0], 0, "User: %s", pr.err[0]);
    cr_expect_eq(pr.status[1], 0, "Writer: %s", pr.err[1]);
    cr_expect_str_eq(pr.result[0] ? pr.result[0] : "", "{\"0\": \"[hi]\"}\n");
    cr_expect_str_eq(pr.result[1] ? pr.result[1] : "", "{}\n");
    char why[512];
    cr_expect_eq(check_trace(pr.trace, why, sizeof why), 0, "%s", why);
    proc_free(&pr);
}

Test(modes, pingpong_as_processes, .timeout = 30)
{
    proc_run pr = run_processes(&prog_pingpong, (const char *const[]){"--arg", "limit=20", NULL});
    cr_expect_eq(pr.status[0], 0, "A: %s", pr.err[0]);
    cr_expect_eq(pr.status[1], 0, "B: %s", pr.err[1]);
    cr_expect_str_eq(pr.result[0] ? pr.result[0] : "", "{\"0\": 20}\n");
    char why[512];
    cr_expect_eq(check_trace(pr.trace, why, sizeof why), 0, "%s", why);
    proc_free(&pr);
}

Test(modes, parallel_as_processes, .timeout = 30)
{
    proc_run pr = run_processes(&prog_par, NULL);
    cr_expect_eq(pr.status[0], 0, "A: %s", pr.err[0]);
    cr_expect_eq(pr.status[1], 0, "B: %s", pr.err[1]);
    cr_expect_str_eq(pr.result[0] ? pr.result[0] : "", "{\"0\": 50}\n");
    char why[512];
    cr_expect_eq(check_trace(pr.trace, why, sizeof why), 0, "%s", why);
    proc_free(&pr);
}

Test(modes, error_in_one_process, .timeout = 30)
{
    proc_run pr = run_processes(&prog_mismatch, NULL);
    cr_expect_eq(pr.status[1], 1);
    cr_expect(
        strstr(pr.err[1],
               "prog: error: lifeline B: mm.zg:4:5: constant binding mismatch: expected 5, got 3"),
        "%s", pr.err[1]);
    proc_free(&pr);
}
