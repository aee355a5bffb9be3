/* test_core.c — running hand-written programs through zgrt_main: results,
 * modes of communication (messages, control messages, parallel regions,
 * coregions), inputs, run-time errors, cancellation, timeouts. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "programs.h"

#define RUN(prog, ...) run_prog(&(prog), (const char *const[]){__VA_ARGS__, NULL})

Test(core, hello, .timeout = 20)
{
    run_out r = RUN(prog_hello, "--arg", "topic=hi");
    cr_expect_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect_str_eq(r.out, "\"[hi]\"\n");
    cr_expect_str_eq(r.err, "");
    run_out_free(&r);
}

Test(core, option_equals_form, .timeout = 20)
{
    run_out r = RUN(prog_hello, "--arg=topic=a=b");
    cr_expect_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect_str_eq(r.out, "\"[a=b]\"\n");
    run_out_free(&r);
}

Test(core, pingpong_control_messages, .timeout = 20)
{
    run_out r = RUN(prog_pingpong, "--arg", "limit=50");
    cr_expect_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect_str_eq(r.out, "50\n");
    run_out_free(&r);
}

Test(core, pingpong_zero_iterations, .timeout = 20)
{
    run_out r = RUN(prog_pingpong, "--arg", "limit=0");
    cr_expect_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect_str_eq(r.out, "0\n");
    run_out_free(&r);
}

Test(core, parallel_regions, .timeout = 20)
{
    run_out r = RUN(prog_par, "--seed", "1");
    cr_expect_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect_str_eq(r.out, "50\n");
    run_out_free(&r);
}

Test(core, parallel_stress, .timeout = 60)
{
    for (int i = 0; i < 3; i++) {
        run_out r = RUN(prog_par_stress, "--seed", "0");
        cr_expect_eq(r.status, 0, "stderr: %s", r.err);
        cr_expect_str_eq(r.out, "1600\n");
        run_out_free(&r);
    }
}

Test(core, coregion_arrival_order, .timeout = 20)
{
    for (int i = 0; i < 20; i++) {
        run_out r = RUN(prog_coregion, "--seed", "0");
        cr_expect_eq(r.status, 0, "stderr: %s", r.err);
        cr_expect_str_eq(r.out, "[12, 3]\n");
        run_out_free(&r);
    }
}

Test(core, enums_print_by_name, .timeout = 20)
{
    run_out r = RUN(prog_enums, "--seed", "0");
    cr_expect_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect_str_eq(r.out, "[\"failed\", true]\n");
    run_out_free(&r);
}

Test(core, no_result_prints_null, .timeout = 20)
{
    run_out r = RUN(prog_noresult, "--seed", "0");
    cr_expect_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect_str_eq(r.out, "null\n");
    run_out_free(&r);
}

Test(core, result_file, .timeout = 20)
{
    char *path = temp_path("result");
    run_out r = RUN(prog_hello, "--arg", "topic=x", "--result-file", path);
    cr_expect_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect_str_eq(r.out, "");
    char *text = read_file(path);
    cr_assert_not_null(text);
    cr_expect_str_eq(text, "\"[x]\"\n");
    free(text);
    unlink(path);
    free(path);
    run_out_free(&r);
}

Test(core, actions_extern_and_mock_llm, .timeout = 20)
{
    run_out r = RUN(prog_actions, "--seed", "0");
    cr_expect_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect_str_eq(r.out, "[42, \"[write:draft]\"]\n");
    run_out_free(&r);
}

Test(core, failing_action, .timeout = 20)
{
    run_out r = RUN(prog_action_fails, "--seed", "0");
    cr_expect_eq(r.status, 1);
    cr_expect_str_eq(r.out, "");
    cr_expect(strstr(r.err, "prog: error: lifeline A: act.zg:9:13: action boom: ") == r.err, "%s",
              r.err);
    cr_expect(strstr(r.err, "the widget exploded"), "%s", r.err);
    run_out_free(&r);
}

/* ---- inputs ---------------------------------------------------------------- */

Test(inputs, every_type, .timeout = 20)
{
    run_out r = RUN(prog_inputs, "--arg", "i=-5", "--arg", "f=2.5", "--arg", "b=true", "--arg",
                    "s=h\"i\n", "--arg", "j={\"a\":[1,2.0,null]}", "--arg", "e=green");
    cr_expect_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect_str_eq(r.out, "[-5, 2.5, true, \"h\\\"i\\n\", {\"a\": [1, 2.0, null]}, \"green\"]\n");
    run_out_free(&r);
}

Test(inputs, extreme_values, .timeout = 20)
{
    run_out r = RUN(prog_inputs, "--arg", "i=-9223372036854775808", "--arg", "f=0.1", "--arg",
                    "b=false", "--arg", "s=", "--arg", "j=\"x\"", "--arg", "e=Color.red");
    cr_expect_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect_str_eq(r.out, "[-9223372036854775808, 0.1, false, \"\", \"x\", \"red\"]\n");
    run_out_free(&r);
}

Test(inputs, missing, .timeout = 20)
{
    run_out r = RUN(prog_inputs, "--arg", "i=1", "--arg", "f=1", "--arg", "b=true", "--arg",
                    "s=", "--arg", "j=1");
    cr_expect_eq(r.status, 2);
    cr_expect_str_eq(r.out, "");
    cr_expect(
        strstr(r.err,
               "prog: error: missing input e (Color, owned by Main): give it with --arg e=VALUE"),
        "%s", r.err);
    run_out_free(&r);
}

Test(inputs, unknown_and_duplicate, .timeout = 20)
{
    run_out r = RUN(prog_hello, "--arg", "topic=a", "--arg", "topic=b", "--arg", "zz=1");
    cr_expect_eq(r.status, 2);
    cr_expect(
        strstr(r.err, "prog: error: input topic (str, owned by User) is given more than once"),
        "%s", r.err);
    cr_expect(strstr(r.err, "prog: error: unknown input 'zz' in --arg; the inputs of hello are: "
                            "topic (str, owned by User)"),
              "%s", r.err);
    run_out_free(&r);
}

Test(inputs, bad_values, .timeout = 20)
{
    run_out r = RUN(prog_inputs, "--arg", "i=12x", "--arg", "f=1e999", "--arg", "b=yes", "--arg",
                    "s=ok", "--arg", "j={", "--arg", "e=blue");
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "--arg i (int, owned by Main): expected int, got \"12x\""), "%s",
              r.err);
    cr_expect(strstr(r.err, "--arg f (float, owned by Main): float out of range: \"1e999\""), "%s",
              r.err);
    cr_expect(
        strstr(r.err, "--arg b (bool, owned by Main): expected bool (true or false), got \"yes\""),
        "%s", r.err);
    cr_expect(strstr(r.err, "--arg j (json, owned by Main): expected json, got invalid JSON"), "%s",
              r.err);
    cr_expect(strstr(r.err, "--arg e (Color, owned by Main): expected a member of Color (red, "
                            "green), got \"blue\""),
              "%s", r.err);
    run_out_free(&r);
}

Test(inputs, int_out_of_range, .timeout = 20)
{
    run_out r = RUN(prog_pingpong, "--arg", "limit=9223372036854775808");
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "int out of range"), "%s", r.err);
    run_out_free(&r);
}

Test(inputs, help_lists_inputs, .timeout = 20)
{
    run_out r = RUN(prog_hello, "--help");
    cr_expect_eq(r.status, 0);
    cr_expect(strstr(r.out, "usage: hello [options]"), "%s", r.out);
    cr_expect(strstr(r.out, "topic"), "%s", r.out);
    cr_expect(strstr(r.out, "str, owned by User"), "%s", r.out);
    for (const char *o =
             "--arg\0--llm\0--llm-for\0--seed\0--trace\0--timeout\0--answers\0--listen\0"
             "--peer\0--secret-file\0--heartbeat\0--result-file\0--error-file\0--help\0";
         *o; o += strlen(o) + 1)
        cr_expect(strstr(r.out, o), "help lacks %s", o);
    cr_expect_str_eq(r.err, "");
    run_out_free(&r);
}

Test(inputs, usage_errors_exit_2, .timeout = 20)
{
    run_out r = RUN(prog_hello, "--arg", "topic=x", "--bogus");
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "unknown option '--bogus'"), "%s", r.err);
    run_out_free(&r);
    r = RUN(prog_hello, "--arg", "topic=x", "--listen", "unix:/tmp/x");
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "per-lifeline executables only"), "%s", r.err);
    run_out_free(&r);
}

/* ---- run-time errors -------------------------------------------------------- */

Test(errors, constant_binding_mismatch, .timeout = 20)
{
    run_out r = RUN(prog_mismatch, "--seed", "0");
    cr_expect_eq(r.status, 1);
    cr_expect_str_eq(r.out, "");
    cr_expect_str_eq(
        r.err,
        "prog: error: lifeline B: mm.zg:4:5: constant binding mismatch: expected 5, got 3\n");
    run_out_free(&r);
}

Test(errors, trap_cancels_blocked_receive, .timeout = 20)
{
    run_out r = RUN(prog_trap, "--seed", "0");
    cr_expect_eq(r.status, 1);
    cr_expect_str_eq(r.out, "");
    cr_expect_str_eq(r.err, "prog: error: lifeline B: t.zg:9:13: integer overflow\n");
    run_out_free(&r);
}

Test(errors, trap_in_parallel_branch, .timeout = 20)
{
    for (int i = 0; i < 10; i++) {
        run_out r = RUN(prog_trap_par, "--seed", "0");
        cr_expect_eq(r.status, 1);
        cr_expect_str_eq(r.err, "prog: error: lifeline B: t.zg:9:13: integer overflow\n");
        run_out_free(&r);
    }
}

Test(errors, timeout, .timeout = 20)
{
    run_out r = RUN(prog_forever, "--timeout", "0.3");
    cr_expect_eq(r.status, 1);
    cr_expect_str_eq(r.out, "");
    cr_expect_str_eq(r.err, "prog: error: timeout after 0.3 s\n");
    run_out_free(&r);
}

Test(errors, timeout_with_trace, .timeout = 20)
{
    char *path = temp_path("trace");
    run_out r = RUN(prog_forever_slow, "--timeout=0.2", "--trace", path);
    cr_expect_eq(r.status, 1);
    cr_expect_str_eq(r.err, "prog: error: timeout after 0.2 s\n");
    json_t *lines = read_jsonl(path);
    cr_assert_not_null(lines);
    json_t *end = json_array_get(lines, json_array_size(lines) - 1);
    cr_expect_str_eq(json_string_value(json_object_get(end, "error")), "timeout after 0.2 s");
    char why[512];
    cr_expect_eq(check_trace(lines, why, sizeof why), 0, "%s", why);
    json_decref(lines);
    unlink(path);
    free(path);
    run_out_free(&r);
}

Test(errors, deadlock_is_reported, .timeout = 20)
{
    run_out r = RUN(prog_deadlock, "--seed", "0");
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.err, "prog: error: deadlock: no lifeline can go on ("), "%s", r.err);
    cr_expect(strstr(r.err, "A waits for a message from B on main"), "%s", r.err);
    cr_expect(strstr(r.err, "B waits for a message from A on main"), "%s", r.err);
    run_out_free(&r);
}

Test(errors, deadlock_in_parallel_region, .timeout = 20)
{
    run_out r = RUN(prog_deadlock_par, "--seed", "0");
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.err, "prog: error: deadlock: no lifeline can go on ("), "%s", r.err);
    cr_expect(strstr(r.err, "B waits for a message from A on main/par1.1"), "%s", r.err);
    run_out_free(&r);
}

Test(errors, malformed_messages, .timeout = 20)
{
    static const char *const want[] = {
        "prog: error: lifeline B: mf.zg:9:13: malformed message from A to B on main: B expects a "
        "message of 1 value, got control message while#1\n",
        "prog: error: lifeline B: mf.zg:9:13: malformed message from A to B on main: B expects "
        "control message while#1, got a message of 1 value\n",
        "prog: error: lifeline B: mf.zg:9:13: malformed message from A to B on main: B expects "
        "control message while#1, got control message if#2\n",
        "prog: error: lifeline B: mf.zg:9:13: malformed message from A to B on main: B expects a "
        "message of 1 value, got a message of 2 values\n"};
    for (malformed_case = 0; malformed_case < 4; malformed_case++) {
        run_out r = RUN(prog_malformed, "--seed", "0");
        cr_expect_eq(r.status, 1);
        cr_expect_str_eq(r.err, want[malformed_case]);
        run_out_free(&r);
    }
}

/* foreign code that never returns: after the timeout and a grace period the
 * process reports the error and exits */
Test(errors, stuck_foreign_code_exits, .timeout = 30)
{
    char *errp = temp_path("stuck");
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        FILE *e = freopen(errp, "w", stderr);
        (void)e;
        char *argv[] = {"prog", "--timeout", "0.2", NULL};
        exit(zgrt_main(&prog_stuck, 3, argv) + 100); /* not reached */
    }
    int st;
    waitpid(pid, &st, 0);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %d", st);
    char *err = read_file(errp);
    cr_expect_str_eq(err ? err : "", "prog: error: timeout after 0.2 s\n");
    free(err);
    unlink(errp);
    free(errp);
}

Test(errors, bad_abi_version, .timeout = 20)
{
    zgrt_program p = prog_hello;
    p.abi_version = 999;
    run_out r = run_prog(&p, (const char *const[]){"--arg", "topic=x", NULL});
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.err, "ABI"), "%s", r.err);
    run_out_free(&r);
}

Test(errors, trace_file_not_writable, .timeout = 20)
{
    run_out r = RUN(prog_hello, "--arg", "topic=x", "--trace", "/nonexistent/dir/t.jsonl");
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.err, "cannot create the trace file /nonexistent/dir/t.jsonl"), "%s", r.err);
    run_out_free(&r);
}

/* per-lifeline executables: usage checked before any connection */
Test(modes, per_lifeline_needs_listen_and_peers, .timeout = 20)
{
    zgrt_program p = prog_hello;
    zgrt_body_fn bodies[2] = {prog_hello.bodies[0], NULL};
    p.bodies = bodies;
    run_out r = run_prog(&p, (const char *const[]){"--arg", "topic=x", NULL});
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "runs lifeline User only and needs --listen ADDR"), "%s", r.err);
    cr_expect(strstr(r.err, "missing --peer Writer=ADDR"), "%s", r.err);
    cr_expect(strstr(r.err, "runs lifeline User only and needs --secret-file FILE"), "%s", r.err);
    run_out_free(&r);
    r = run_prog(&p,
                 (const char *const[]){"--listen", "unix:/tmp/a", "--peer", "Writer=unix:/tmp/b",
                                       "--peer", "User=unix:/tmp/c", NULL});
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "--peer User: this executable runs lifeline User itself"), "%s", r.err);
    run_out_free(&r);
}

/* A message from another process is decoded into a block the run gives
 * (zri_run_block): one of its channel's recycled blocks, laid out for the
 * plan's edge; none for anything not addressed to the run's lifeline or
 * of another metadata form (the decoder then allocates its own, and the
 * delivery reports the wrong form). */
Test(core, a_remote_message_takes_a_block_of_its_channel, .timeout = 20)
{
    zri_options o;
    memset(&o, 0, sizeof o);
    const zgrt_program *p = &prog_pingpong;
    zri_run *R = zri_run_new(p, &o, 0); /* lifeline A's process */
    int32_t form, nvc, nv, nvv;
    zri_msg_meta(p, 1, 0, 0, &form, &nvc, &nv, &nvv);
    zri_msg *m = zri_run_block(R, 1, 1, 0, 0, form);
    cr_assert_not_null(m);
    cr_assert(m->reusable, "not one of the run's blocks");
    cr_assert_geq(m->cap, 1);
    cr_assert_eq(m->nvals, 1);
    cr_assert_not_null(m->vals);
    cr_assert_eq(m->from, 1);
    cr_assert_eq(m->to, 0);
    cr_assert_eq(m->chan, 0);
    cr_assert_eq(m->has_meta, form);
    if (form) cr_assert_eq(m->nvc, nvc);
    /* it is delivered like any message (the run frees what it holds) */
    m->kind = ZRI_MSG_USER;
    m->seq = 1;
    m->vals[0] = v_int(7);
    zri_run_deliver(R, m);
    cr_assert_eq(zri_run_received(R, 1, 0), 1);
    cr_assert_null(zri_run_error(R), "%s", zri_run_error(R));
    /* none for anything else */
    int other = form == ZRI_META_NONE ? ZRI_META_EDGE : ZRI_META_NONE;
    cr_assert_null(zri_run_block(R, 1, 1, 0, 0, other), "another metadata form");
    cr_assert_null(zri_run_block(R, 1, 0, 1, 0, form), "addressed to another lifeline");
    cr_assert_null(zri_run_block(R, 1, 0, 0, 0, form), "from itself");
    cr_assert_null(zri_run_block(R, 1, 2, 0, 0, form), "from no lifeline");
    cr_assert_null(zri_run_block(R, 1, 1, 0, 1, form), "on no channel");
    cr_assert_null(zri_run_block(R, -1, 1, 0, 0, form), "a negative count");
    zri_run_free(R);
}

/* Per-lifeline mode: the process's only fiber waits for a remote message
 * without registering (wait_heads' lone wait), in the transport's wait; a
 * message that another thread delivers meanwhile — here, a thread
 * started by the first wait, as the transport's own thread would — ends
 * that wait through the transport's wake at once, not at the wait's own
 * bound (5 s here, 50 ms in the socket transport). */
typedef struct lone_fake {
    zri_run *R;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int woken, waits, alone_waits, timed_out, started;
    pthread_t th;
} lone_fake;

static void *lone_deliver(void *arg)
{
    lone_fake *f = arg;
    usleep(20000); /* the fiber is in its wait by now */
    int32_t form, nvc, nv, nvv;
    zri_msg_meta(&prog_pingpong, 0, 1, 0, &form, &nvc, &nv, &nvv);
    zri_msg *m = zri_run_block(f->R, 0, 0, 1, 0, form);
    cr_assert_not_null(m);
    m->kind = ZRI_MSG_CTL; /* A's loop decision: stop */
    m->seq = 1;
    m->tag = 0;
    m->value = 0;
    zri_run_deliver(f->R, m);
    return NULL;
}

static int lone_send(void *impl, const zri_msg *m, char *err, size_t errlen)
{
    (void)impl, (void)m, (void)err, (void)errlen;
    return 0;
}

static int lone_flush(void *impl, char *err, size_t errlen)
{
    (void)impl, (void)err, (void)errlen;
    return 0;
}

static void lone_wait(void *impl, int wake_fd, int timeout_ms, int alone)
{
    (void)wake_fd, (void)timeout_ms;
    lone_fake *f = impl;
    pthread_mutex_lock(&f->mu);
    f->waits++;
    f->alone_waits += alone;
    if (!f->started) {
        f->started = 1;
        cr_assert_eq(pthread_create(&f->th, NULL, lone_deliver, f), 0);
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 5;
    while (!f->woken)
        if (pthread_cond_timedwait(&f->cv, &f->mu, &until) != 0) {
            f->timed_out++;
            break;
        }
    f->woken = 0;
    pthread_mutex_unlock(&f->mu);
}

static void lone_wake(void *impl)
{
    lone_fake *f = impl;
    pthread_mutex_lock(&f->mu);
    f->woken = 1;
    pthread_cond_signal(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

Test(core, a_lone_wait_ends_when_another_thread_delivers, .timeout = 30)
{
    zri_options o;
    memset(&o, 0, sizeof o);
    o.workers = 1;                                   /* (no idle worker polls beside the fiber) */
    zri_run *R = zri_run_new(&prog_pingpong, &o, 1); /* lifeline B's process */
    cr_assert_eq(zri_run_setup(R), 0);
    lone_fake f = {.R = R};
    pthread_mutex_init(&f.mu, NULL);
    pthread_cond_init(&f.cv, NULL);
    zri_transport t = {lone_send, lone_flush, lone_wait, lone_wake, &f};
    zri_run_connect(R, &t);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    zri_run_exec(R);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (f.started) pthread_join(f.th, NULL);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    cr_assert_null(zri_run_error(R), "%s", zri_run_error(R));
    cr_assert_geq(f.alone_waits, 1, "the fiber never waited alone (%d waits)", f.waits);
    cr_assert_eq(f.timed_out, 0, "the wait ended at its bound, not at the delivery");
    cr_assert_lt(s, 4.0, "the run took %.2f s", s);
    zri_run_free(R);
    pthread_mutex_destroy(&f.mu);
    pthread_cond_destroy(&f.cv);
}
