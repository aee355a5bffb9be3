/* Human actions: --answers files and the terminal (a pseudo-terminal). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <pthread.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

TestSuite(human, .init = fx_setup, .fini = fx_teardown, .timeout = 30);
TestSuite(terminal, .init = fx_setup, .fini = fx_teardown, .timeout = 30);

static void no_terminal(void)
{
    int fd = open("/dev/null", O_RDONLY);
    cr_assert_geq(fd, 0);
    dup2(fd, STDIN_FILENO);
    close(fd);
}

static int human(int action, int lifeline, zgrt_value *out, char *err, size_t errlen)
{
    zgrt_value args[2] = {fx_str("my draft"), fx_str("unused")};
    if (action == A_REVISE) {
        args[0] = fx_int(2);
        args[1] = fx_str("old text");
    }
    int attempts = -1;
    int rc = fx_run(action, lifeline, 0, args, out, &attempts, err, errlen);
    cr_assert_eq(attempts, 1);
    return rc;
}

Test(human, confirm_from_answers)
{
    no_terminal();
    fx_opts.answers = fx_file("{\"Editor.approve\": [{\"value\": true}, {\"value\": false}]}");
    zgrt_value out;
    char err[512];
    cr_assert_eq(human(A_APPROVE, EDITOR, &out, err, sizeof err), 0, "%s", err);
    cr_assert_eq(out.tag, ZGRT_BOOL);
    cr_assert_eq(out.u.i, 1);
    cr_assert_eq(human(A_APPROVE, EDITOR, &out, err, sizeof err), 0, "%s", err);
    cr_assert_eq(out.u.i, 0);
    cr_assert_eq(human(A_APPROVE, EDITOR, &out, err, sizeof err), -1);
    cr_assert_str_eq(err, "human answers: no answer left for Editor.approve (2 given)");
}

Test(human, input_from_answers)
{
    no_terminal();
    fx_opts.answers = fx_file("{\"ask\": {\"value\": \"hello there\"}}");
    zgrt_value out;
    char err[512];
    cr_assert_eq(human(A_ASK, WRITER, &out, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(fx_text(&out), "hello there");
}

Test(human, select_by_name_or_number)
{
    no_terminal();
    fx_opts.answers = fx_file("{\"pick\": [{\"value\": \"failed\"}, {\"value\": 2}, {\"value\": 4},"
                              " {\"value\": \"maybe\"}]}");
    zgrt_value out;
    char err[512];
    cr_assert_eq(human(A_PICK, EDITOR, &out, err, sizeof err), 0, "%s", err);
    cr_assert_eq(out.tag, ZGRT_ENUM);
    cr_assert_eq(out.u.i, 2);
    cr_assert_eq(human(A_PICK, EDITOR, &out, err, sizeof err), 0, "%s", err);
    cr_assert_eq(out.u.i, 1);
    cr_assert_eq(human(A_PICK, EDITOR, &out, err, sizeof err), -1);
    cr_assert(
        strstr(err,
               "answer 3 for Editor.pick: `value`: 4 is not a member number of Verdict (1..3)"),
        "%s", err);
    cr_assert_eq(human(A_PICK, EDITOR, &out, err, sizeof err), -1);
    cr_assert(strstr(err, "answer 4 for Editor.pick: `value`: expected a member of Verdict"), "%s",
              err);
}

Test(human, edit_from_answers)
{
    no_terminal();
    fx_opts.answers = fx_file("{\"revise\": [{\"value\": \"new text\"}]}");
    zgrt_value out;
    char err[512];
    cr_assert_eq(human(A_REVISE, EDITOR, &out, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(fx_text(&out), "new text");
}

Test(human, ack_from_answers)
{
    no_terminal();
    fx_opts.answers = fx_file("{\"notice\": {}, \"notice2\": [{}, {\"value\": true},"
                              " {\"value\": false}], \"Writer.notice\": {\"value\": true}}");
    zgrt_value out;
    char err[512];
    cr_assert_eq(human(A_NOTICE, EDITOR, NULL, err, sizeof err), 0, "%s", err);
    cr_assert_eq(human(A_NOTICE, WRITER, NULL, err, sizeof err), -1);
    cr_assert(strstr(err, "unexpected key `value`"), "%s", err);
    cr_assert_eq(human(A_NOTICE2, EDITOR, &out, err, sizeof err), 0, "%s", err);
    cr_assert_eq(out.tag, ZGRT_BOOL);
    cr_assert_eq(out.u.i, 1);
    cr_assert_eq(human(A_NOTICE2, EDITOR, &out, err, sizeof err), 0, "%s", err);
    cr_assert_eq(out.u.i, 1);
    cr_assert_eq(human(A_NOTICE2, EDITOR, &out, err, sizeof err), -1);
    cr_assert(strstr(err, "an ack answer is true"), "%s", err);
}

Test(human, wrong_answer_type)
{
    no_terminal();
    fx_opts.answers =
        fx_file("{\"approve\": [{\"value\": \"yes\"}], \"ask\": {\"answer\": \"x\"}}");
    zgrt_value out;
    char err[512];
    cr_assert_eq(human(A_APPROVE, EDITOR, &out, err, sizeof err), -1);
    cr_assert(strstr(err, "human answers: answer 1 for Editor.approve: `value`: expected bool"),
              "%s", err);
    cr_assert_eq(human(A_ASK, EDITOR, &out, err, sizeof err), -1);
    cr_assert(strstr(err, "human answers: the answer for Editor.ask: missing key `value`"), "%s",
              err);
}

Test(human, no_terminal_no_answer)
{
    no_terminal();
    zgrt_value out;
    char err[512];
    cr_assert_eq(human(A_APPROVE, EDITOR, &out, err, sizeof err), -1);
    cr_assert_str_eq(
        err, "human action `approve` on Editor needs a terminal or an answer in --answers FILE");
    /* an answers file without a key for the action */
    fx_opts.answers = fx_file("{\"Writer.approve\": {\"value\": true}}");
    cr_assert_eq(human(A_APPROVE, EDITOR, &out, err, sizeof err), -1);
    cr_assert_str_eq(
        err, "human action `approve` on Editor needs a terminal or an answer in --answers FILE");
    cr_assert_eq(human(A_APPROVE, WRITER, &out, err, sizeof err), 0, "%s", err);
}

Test(human, answers_file_errors)
{
    no_terminal();
    fx_opts.answers = "/nonexistent/answers.json";
    zgrt_value out;
    char err[512];
    cr_assert_eq(human(A_APPROVE, EDITOR, &out, err, sizeof err), -1);
    cr_assert(strstr(err, "human answers: cannot read `/nonexistent/answers.json`"), "%s", err);
    fx_opts.answers = fx_file("{");
    cr_assert_eq(human(A_APPROVE, EDITOR, &out, err, sizeof err), -1);
    cr_assert(strstr(err, "human answers: `"), "%s", err);
    cr_assert(strstr(err, "is not valid JSON"), "%s", err);
}

Test(human, kind_must_fit_outputs)
{
    no_terminal();
    fx_actions[A_APPROVE].human_kind = ZGRT_HUMAN_INPUT;
    zgrt_value out;
    char err[512];
    cr_assert_eq(human(A_APPROVE, EDITOR, &out, err, sizeof err), -1);
    cr_assert(strstr(err, "kind `input` does not fit its outputs"), "%s", err);
}

/* ---- terminal ---------------------------------------------------------- */

static int master_fd = -1;
static char stderr_path[] = "/tmp/zgc-actions-stderr-XXXXXX";

/* stdin becomes a pseudo-terminal fed with `input`; stderr goes to a file */
static void terminal(const char *input)
{
    int slave;
    cr_assert_eq(openpty(&master_fd, &slave, NULL, NULL, NULL), 0);
    dup2(slave, STDIN_FILENO);
    close(slave);
    size_t n = strlen(input);
    cr_assert_eq(write(master_fd, input, n), (ssize_t)n);
    int fd = mkstemp(stderr_path);
    cr_assert_geq(fd, 0);
    unlink(stderr_path); /* read back through the descriptor: nothing left behind */
    fflush(stderr);
    dup2(fd, STDERR_FILENO);
    close(fd);
}

static char *stderr_text(void)
{
    fflush(stderr);
    static char buf[8192];
    ssize_t n = pread(STDERR_FILENO, buf, sizeof buf - 1, 0);
    cr_assert_geq(n, 0);
    buf[n] = 0;
    return buf;
}

Test(terminal, confirm_reasks_until_y_or_n)
{
    terminal("maybe\n  Yes \n");
    zgrt_value out;
    char err[512];
    cr_assert_eq(human(A_APPROVE, EDITOR, &out, err, sizeof err), 0, "%s", err);
    cr_assert_eq(out.u.i, 1);
    char *text = stderr_text();
    cr_assert(strstr(text, "[Editor] approve\nSend this reply?\nmy draft\n(y/n) > "), "%s", text);
    cr_assert(strstr(text, "please answer y or n"), "%s", text);
}

Test(terminal, answers_file_first_then_terminal)
{
    terminal("n\n");
    fx_opts.answers = fx_file("{\"Writer.approve\": {\"value\": true}}");
    zgrt_value out;
    char err[512];
    cr_assert_eq(human(A_APPROVE, WRITER, &out, err, sizeof err), 0, "%s", err);
    cr_assert_eq(out.u.i, 1);
    cr_assert_eq(human(A_APPROVE, EDITOR, &out, err, sizeof err), 0, "%s", err);
    cr_assert_eq(out.u.i, 0);
}

Test(terminal, select_number_or_name)
{
    terminal("9\nfail\n3\npassed\n");
    zgrt_value out;
    char err[512];
    cr_assert_eq(human(A_PICK, EDITOR, &out, err, sizeof err), 0, "%s", err);
    cr_assert_eq(out.tag, ZGRT_ENUM);
    cr_assert_eq(out.u.i, 2);
    cr_assert_eq(human(A_PICK, EDITOR, &out, err, sizeof err), 0, "%s", err);
    cr_assert_eq(out.u.i, 1);
    char *text = stderr_text();
    cr_assert(strstr(text, "Verdict on my draft?\n  1) pending\n  2) passed\n  3) failed\n"), "%s",
              text);
    cr_assert(strstr(text, "please give a number from 1 to 3 or a member name"), "%s", text);
}

Test(terminal, edit_keeps_or_replaces)
{
    terminal("\nbetter text\n");
    zgrt_value out;
    char err[512];
    cr_assert_eq(human(A_REVISE, EDITOR, &out, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(fx_text(&out), "old text");
    cr_assert_eq(human(A_REVISE, EDITOR, &out, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(fx_text(&out), "better text");
    char *text = stderr_text();
    cr_assert(strstr(text, "Round 2: fix it\ncurrent text:\nold text\n"), "%s", text);
}

Test(terminal, input_and_ack)
{
    terminal("  spaces kept  \n\n");
    zgrt_value out;
    char err[512];
    cr_assert_eq(human(A_ASK, EDITOR, &out, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(fx_text(&out), "  spaces kept  ");
    cr_assert_eq(human(A_NOTICE2, EDITOR, &out, err, sizeof err), 0, "%s", err);
    cr_assert_eq(out.tag, ZGRT_BOOL);
    cr_assert_eq(out.u.i, 1);
}

Test(terminal, prompt_placeholders)
{
    /* ask with the parameters of assess: every type in a prompt */
    static const char *const names[] = {"n", "v", "j", "x", "b", "s"};
    static const zgrt_type types[] = {{ZGRT_INT, -1},   {ZGRT_ENUM, 0},  {ZGRT_JSON, -1},
                                      {ZGRT_FLOAT, -1}, {ZGRT_BOOL, -1}, {ZGRT_STR, -1}};
    fx_actions[A_ASK].nparams = 6;
    fx_actions[A_ASK].param_names = names;
    fx_actions[A_ASK].param_types = types;
    fx_actions[A_ASK].prompt = "n={n} v={v} j={j} x={x} b={b} s={s} {s {} {nope} {s}{s}";
    terminal("ok\n");
    zgrt_value args[6] = {fx_int(-3),    fx_enum(1), fx_json("{\"k\":[1,\"two\"]}"),
                          fx_float(2.5), fx_bool(1), fx_str("text")};
    zgrt_value out;
    char err[512];
    int attempts;
    cr_assert_eq(fx_run(A_ASK, WRITER, 0, args, &out, &attempts, err, sizeof err), 0, "%s", err);
    char *text = stderr_text();
    cr_assert(strstr(text, "[Writer] ask\nn=-3 v=passed j={\"k\":[1,\"two\"]} x=2.5 b=true s=text "
                           "{s {} {nope} texttext\n"),
              "%s", text);
}

Test(terminal, end_of_input)
{
    terminal("\x04");
    zgrt_value out;
    char err[512];
    cr_assert_eq(human(A_ASK, EDITOR, &out, err, sizeof err), -1);
    cr_assert_str_eq(err, "human action `ask` on Editor: end of input before an answer");
}

static volatile int cancel_flag;

static void *cancel_later(void *arg)
{
    (void)arg;
    usleep(200 * 1000);
    cancel_flag = 1;
    return NULL;
}

Test(terminal, cancellation_while_waiting)
{
    terminal("");
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, cancel_later, NULL), 0);
    zri_heap *h = zri_heap_new();
    zgrt_value arg;
    arg.tag = ZGRT_STR;
    arg.u.s = zri_str(h, "q", 1);
    zgrt_value out;
    char err[512];
    int attempts;
    int rc = fx_run_in(h, &cancel_flag, A_ASK, EDITOR, 0, &arg, &out, &attempts, err, sizeof err);
    pthread_join(t, NULL);
    zri_heap_free(h);
    cr_assert_eq(rc, -1);
    cr_assert_str_eq(err, "cancelled");
}
