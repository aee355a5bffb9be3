#include "fixture.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#define T(tag)  \
    {           \
        tag, -1 \
    }
#define T_VERDICT    \
    {                \
        ZGRT_ENUM, 0 \
    }

static const char *const lifelines[] = {"Editor", "Writer"};
static const char *const verdict_members[] = {"pending", "passed", "failed"};
static const zgrt_enum enums[] = {{"Verdict", 3, verdict_members}};

static const char *const p_topic[] = {"topic"};
static const zgrt_type t_str1[] = {T(ZGRT_STR)};
static const char *const r_draft[] = {"draft"};

static const char *const p_assess[] = {"n", "v", "j", "x", "b", "s"};
static const zgrt_type t_assess_p[] = {T(ZGRT_INT),   T_VERDICT,    T(ZGRT_JSON),
                                       T(ZGRT_FLOAT), T(ZGRT_BOOL), T(ZGRT_STR)};
static const char *const r_assess[] = {"ok", "count", "score", "data", "verdict", "note"};
static const zgrt_type t_assess_r[] = {T(ZGRT_BOOL), T(ZGRT_INT), T(ZGRT_FLOAT),
                                       T(ZGRT_JSON), T_VERDICT,   T(ZGRT_STR)};

static const char *const p_draft[] = {"draft"};
static const char *const r_approved[] = {"approved"};
static const zgrt_type t_bool1[] = {T(ZGRT_BOOL)};
static const zgrt_value fb_true[] = {{ZGRT_BOOL, {.i = 1}}};

static const char *const r_n[] = {"n"};
static const zgrt_type t_int1[] = {T(ZGRT_INT)};
static const zgrt_value fb_seven[] = {{ZGRT_INT, {.i = 7}}};

static const char *const p_q[] = {"q"};
static const zgrt_type t_verdict1[] = {T_VERDICT};
static const char *const p_revise[] = {"n", "draft"};
static const zgrt_type t_revise[] = {T(ZGRT_INT), T(ZGRT_STR)};

static const char *const p_score[] = {"text", "n", "x", "b", "v", "j"};
static const zgrt_type t_score[] = {T(ZGRT_STR),  T(ZGRT_INT), T(ZGRT_FLOAT),
                                    T(ZGRT_BOOL), T_VERDICT,   T(ZGRT_JSON)};
static const zgrt_type t_score_r[] = {T(ZGRT_FLOAT), T(ZGRT_INT), T(ZGRT_STR),
                                      T(ZGRT_BOOL),  T_VERDICT,   T(ZGRT_JSON)};
static const char *const p_to[] = {"to"};
static const char *const p_t[] = {"t"};

static const zgrt_action actions_init[N_ACTIONS] = {
    [A_WRITE] = {.name = "write",
                 .kind = ZGRT_ACT_LLM,
                 .nparams = 1,
                 .param_names = p_topic,
                 .param_types = t_str1,
                 .nresults = 1,
                 .result_names = r_draft,
                 .result_types = t_str1,
                 .system = "Write a reply.",
                 .user = "{topic}",
                 .parse = ZGRT_PARSE_TEXT,
                 .retries = 3},
    [A_ASSESS] = {.name = "assess",
                  .kind = ZGRT_ACT_LLM,
                  .nparams = 6,
                  .param_names = p_assess,
                  .param_types = t_assess_p,
                  .nresults = 6,
                  .result_names = r_assess,
                  .result_types = t_assess_r,
                  .user = "{n} {v} {j} {x} {b} {s}",
                  .parse = ZGRT_PARSE_JSON,
                  .retries = 0},
    [A_JUDGE] = {.name = "judge",
                 .kind = ZGRT_ACT_LLM,
                 .nparams = 1,
                 .param_names = p_draft,
                 .param_types = t_str1,
                 .nresults = 1,
                 .result_names = r_approved,
                 .result_types = t_bool1,
                 .user = "Approve? {draft}",
                 .parse = ZGRT_PARSE_BOOL,
                 .retries = 2,
                 .has_fallback = 1,
                 .fallback = fb_true},
    [A_FOREVER] = {.name = "forever",
                   .kind = ZGRT_ACT_LLM,
                   .nresults = 1,
                   .result_names = r_n,
                   .result_types = t_int1,
                   .user = "a number",
                   .parse = ZGRT_PARSE_INT,
                   .retries = -1,
                   .has_fallback = 1,
                   .fallback = fb_seven},
    [A_APPROVE] = {.name = "approve",
                   .kind = ZGRT_ACT_HUMAN,
                   .nparams = 1,
                   .param_names = p_draft,
                   .param_types = t_str1,
                   .nresults = 1,
                   .result_types = t_bool1,
                   .human_kind = ZGRT_HUMAN_CONFIRM,
                   .prompt = "Send this reply?\n{draft}"},
    [A_ASK] = {.name = "ask",
               .kind = ZGRT_ACT_HUMAN,
               .nparams = 1,
               .param_names = p_q,
               .param_types = t_str1,
               .nresults = 1,
               .result_types = t_str1,
               .human_kind = ZGRT_HUMAN_INPUT,
               .prompt = "{q}"},
    [A_PICK] = {.name = "pick",
                .kind = ZGRT_ACT_HUMAN,
                .nparams = 1,
                .param_names = p_draft,
                .param_types = t_str1,
                .nresults = 1,
                .result_types = t_verdict1,
                .human_kind = ZGRT_HUMAN_SELECT,
                .prompt = "Verdict on {draft}?"},
    [A_REVISE] = {.name = "revise",
                  .kind = ZGRT_ACT_HUMAN,
                  .nparams = 2,
                  .param_names = p_revise,
                  .param_types = t_revise,
                  .nresults = 1,
                  .result_types = t_str1,
                  .human_kind = ZGRT_HUMAN_EDIT,
                  .prompt = "Round {n}: fix it"},
    [A_NOTICE] = {.name = "notice",
                  .kind = ZGRT_ACT_HUMAN,
                  .nparams = 1,
                  .param_names = p_draft,
                  .param_types = t_str1,
                  .human_kind = ZGRT_HUMAN_ACK,
                  .prompt = "Sent: {draft}"},
    [A_NOTICE2] = {.name = "notice2",
                   .kind = ZGRT_ACT_HUMAN,
                   .nresults = 1,
                   .result_types = t_bool1,
                   .human_kind = ZGRT_HUMAN_ACK,
                   .prompt = "Done."},
    [A_SCORE] = {.name = "score",
                 .kind = ZGRT_ACT_EXTERN_PURE,
                 .nparams = 6,
                 .param_names = p_score,
                 .param_types = t_score,
                 .nresults = 6,
                 .result_types = t_score_r},
    [A_SEND] = {.name = "send",
                .kind = ZGRT_ACT_EFFECT,
                .nparams = 1,
                .param_names = p_to,
                .param_types = t_str1},
    [A_INC] = {.name = "inc",
               .kind = ZGRT_ACT_PURE,
               .nparams = 1,
               .param_names = p_t,
               .param_types = t_int1,
               .nresults = 1,
               .result_types = t_int1},
    [A_UNNAMED] = {.name = "unnamed",
                   .kind = ZGRT_ACT_LLM,
                   .nresults = 1,
                   .result_types = t_str1,
                   .user = "x",
                   .parse = ZGRT_PARSE_TEXT,
                   .retries = 3},
};

zgrt_action fx_actions[N_ACTIONS];
zgrt_program fx_prog;
zri_options fx_opts;
int fx_notes;

static zri_heap *heap;
static zri_route routes[16];
static char *files[32];
static int nfiles;
static char spec_buf[8][600];
static int nspec;

void fx_setup(void)
{
    memcpy(fx_actions, actions_init, sizeof fx_actions);
    memset(&fx_prog, 0, sizeof fx_prog);
    fx_prog.abi_version = ZGRT_ABI_VERSION;
    fx_prog.nlifelines = 2;
    fx_prog.source = "fixture.zg";
    fx_prog.workflow = "fixture";
    fx_prog.lifelines = lifelines;
    fx_prog.nenums = 1;
    fx_prog.enums = enums;
    fx_prog.nactions = N_ACTIONS;
    fx_prog.actions = fx_actions;
    memset(&fx_opts, 0, sizeof fx_opts);
    fx_opts.routes = routes;
    heap = zri_heap_new();
    fx_notes = 0;
}

void fx_teardown(void)
{
    zri_actions_shutdown();
    zri_heap_free(heap);
    heap = NULL;
    for (int i = 0; i < nfiles; i++) {
        unlink(files[i]);
        free(files[i]);
    }
    nfiles = 0;
}

static void note(void *user, const char *fmt, ...)
{
    (void)user;
    (void)fmt;
    fx_notes++;
}

int fx_run_in(zri_heap *h, volatile int *cancel, int action, int lifeline, uint64_t call,
              const zgrt_value *args, zgrt_value *outs, int *attempts, char *err, size_t errlen)
{
    zri_action_env env = {
        .prog = &fx_prog,
        .opts = &fx_opts,
        .lifeline = lifeline,
        .heap = h,
        .call_index = call,
        .cancel = cancel,
        .note = note,
    };
    return zri_run_action(&env, action, args, outs, attempts, err, errlen);
}

int fx_run(int action, int lifeline, uint64_t call, const zgrt_value *args, zgrt_value *outs,
           int *attempts, char *err, size_t errlen)
{
    return fx_run_in(heap, NULL, action, lifeline, call, args, outs, attempts, err, errlen);
}

const char *fx_file(const char *text)
{
    char tmpl[] = "/tmp/zgc-actions-XXXXXX.json";
    int fd = mkstemps(tmpl, 5);
    if (fd < 0) abort();
    size_t n = strlen(text);
    if (write(fd, text, n) != (ssize_t)n) abort();
    close(fd);
    char *path = strdup(tmpl);
    if (!path || nfiles == 32) abort();
    files[nfiles++] = path;
    return path;
}

const char *fx_scripted(const char *text)
{
    char *buf = spec_buf[nspec++ % 8];
    snprintf(buf, sizeof spec_buf[0], "scripted:%s", fx_file(text));
    return buf;
}

void fx_route(const char *lifeline, const char *action, const char *spec)
{
    if (fx_opts.nroutes == 16) abort();
    routes[fx_opts.nroutes++] = (zri_route){lifeline, action, spec};
}

zgrt_value fx_str(const char *s)
{
    zgrt_value v = {.tag = ZGRT_STR};
    v.u.s = zri_str(heap, s, strlen(s));
    return v;
}

zgrt_value fx_int(int64_t i)
{
    zgrt_value v = {.tag = ZGRT_INT};
    v.u.i = i;
    return v;
}

zgrt_value fx_float(double f)
{
    zgrt_value v = {.tag = ZGRT_FLOAT};
    v.u.f = f;
    return v;
}

zgrt_value fx_bool(int b)
{
    zgrt_value v = {.tag = ZGRT_BOOL};
    v.u.i = b ? 1 : 0;
    return v;
}

zgrt_value fx_enum(int member)
{
    zgrt_value v = {.tag = ZGRT_ENUM};
    v.u.i = member; /* enum 0 */
    return v;
}

zgrt_value fx_json(const char *text)
{
    json_t *j = json_loads(text, JSON_DECODE_ANY, NULL);
    if (!j) abort();
    zgrt_value v;
    char err[128];
    if (zri_value_from_jansson(&fx_prog, heap, j, (zgrt_type){ZGRT_JSON, -1}, &v, err, sizeof err) <
        0)
        abort();
    json_decref(j);
    return v;
}

const char *fx_text(const zgrt_value *v)
{
    return v->tag == ZGRT_STR && v->u.s ? v->u.s->data : "<not a str>";
}
