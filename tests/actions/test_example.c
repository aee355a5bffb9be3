/* The C actions of examples/extern run through zri_run_action. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "zgrt.h"

int zg_readability(zgrt_call *call);
int zg_publish(zgrt_call *call);

TestSuite(example, .init = fx_setup, .fini = fx_teardown, .timeout = 30);

static const char *const p_text[] = {"text"};
static const zgrt_type t_str[] = {{ZGRT_STR, -1}};
static const zgrt_type t_float[] = {{ZGRT_FLOAT, -1}};
static const char *const p_pub[] = {"text", "score"};
static const zgrt_type t_pub[] = {{ZGRT_STR, -1}, {ZGRT_FLOAT, -1}};

static void declare(void)
{
    fx_actions[A_SCORE] = (zgrt_action){.name = "readability",
                                        .kind = ZGRT_ACT_EXTERN_PURE,
                                        .nparams = 1,
                                        .param_names = p_text,
                                        .param_types = t_str,
                                        .nresults = 1,
                                        .result_types = t_float,
                                        .fn = zg_readability};
    fx_actions[A_SEND] = (zgrt_action){.name = "publish",
                                       .kind = ZGRT_ACT_EFFECT,
                                       .nparams = 2,
                                       .param_names = p_pub,
                                       .param_types = t_pub,
                                       .nresults = 1,
                                       .result_types = t_str,
                                       .fn = zg_publish};
}

static double readability(const char *text, char *err, size_t errlen, int *rc)
{
    zgrt_value arg = fx_str(text), out;
    int attempts;
    *rc = fx_run(A_SCORE, 1, 0, &arg, &out, &attempts, err, errlen);
    return out.u.f;
}

Test(example, readability_and_publish)
{
    declare();
    char err[512];
    int rc;
    const char *easy = "Short words help. Long ones do not.";
    double s = readability(easy, err, sizeof err, &rc);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_float_eq(s, 1.0, 1e-12);
    s = readability("Incomprehensibilities notwithstanding, institutionalisation perseveres.", err,
                    sizeof err, &rc);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_lt(s, 0.5);
    readability(" ... ", err, sizeof err, &rc);
    cr_assert_eq(rc, -1);
    cr_assert_str_eq(err, "nothing to score: the text has no words");

    int fd = open("/dev/null", O_WRONLY);
    dup2(fd, STDERR_FILENO);
    close(fd);
    zgrt_value args[2] = {fx_str(easy), fx_float(1.0)}, out;
    int attempts;
    cr_assert_eq(fx_run(A_SEND, 2, 0, args, &out, &attempts, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(fx_text(&out), "published 35 bytes (score 1.00)");
}
