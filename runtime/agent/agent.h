/* agent.h — the agent side of the runtime (runtime/agent/): what runs the
 * actions of a workflow.  Prefix zri_, hidden; builds on the runtime's
 * core header (rt.h: values, options, the action interface) and nothing
 * else of it.  zgrt_main (main.c) hands zri_run_action to the run as its
 * zri_action_fn.
 *
 *   actions.c  llm (model routing, prompts, retries, fallbacks), human
 *              (answer files, the terminal), extern pure and effect (the
 *              zgrt.h interface of user C functions)
 *   models.c   model backends: mock, scripted, openai, ollama (request,
 *              answer parsing); answer scripts
 *   http.c     HTTP POST of a JSON body over libcurl (loaded at run time),
 *              cancellable
 *   nested.c   what the planner library asks of a run (zgrt_nested.h): a
 *              planner's model request and its generated workflow's run
 *
 * Errors follow rt.h: 0 or -1 with a message in err, and the finer codes
 * ZRI_MODEL_* (a model call) and ZRI_HTTP_* (an HTTP request) below.
 */
#ifndef ZGRT_AGENT_H
#define ZGRT_AGENT_H

#include <stddef.h>

#include "rt.h"

/* ===================================================================== */
/* actions.c                                                              */
/* ===================================================================== */

/* The run's zri_action_fn (rt.h): runs action `action` (llm, human,
 * extern pure or effect) with args and writes its results to outs. */
ZRI_HIDDEN int zri_run_action(zri_action_env *env, int32_t action, const zgrt_value *args,
                              zgrt_value *outs, int *attempts, char *err, size_t errlen);
/* Releases what actions cached for the run (scripted answers, …). */
ZRI_HIDDEN void zri_actions_shutdown(void);
/* Checks the run's configuration of actions before anything runs, whether
 * or not the workflow calls a model or a human: the model specs of --llm
 * and --llm-for (models.c: zri_model_check) and the --answers file.  0,
 * or -1 with the reason in err (a usage error: exit status 2). */
ZRI_HIDDEN int zri_actions_check(const zri_options *o, char *err, size_t errlen);

/* For nested.c: the environment and descriptor of a call of a user C
 * function or planner, and one text request to the call's model (the
 * action's routing, retries and progress notes; the prompts as given,
 * without placeholders): 0 with the answer (malloc'd), or -1 with err. */
ZRI_HIDDEN zri_action_env *zri_call_env(zgrt_call *call);
ZRI_HIDDEN const zgrt_action *zri_call_desc(const zgrt_call *call);
ZRI_HIDDEN int zri_call_text(zgrt_call *call, const char *system, const char *user, char **answer,
                             char *err, size_t errlen);

/* ===================================================================== */
/* models.c, used by actions.c                                            */
/* ===================================================================== */

/* Outcome of one model call: */
enum {
    ZRI_MODEL_OK = 0,
    ZRI_MODEL_INVALID = 1, /* an invalid answer: retried, then the fallback */
    ZRI_MODEL_FAILED = 2,  /* not retried; the fallback when declared */
    ZRI_MODEL_CONFIG = 3,  /* a bad spec or file: an error, no fallback */
    ZRI_MODEL_RETRY = 4,   /* a transient failure (transport, timeout, HTTP
                              408/409/425/429/500/502/503/504): retried,
                              then the fallback */
};
/* How to wait before retrying a model call. */
typedef struct zri_model_wait {
    int backoff;        /* 1: a network backend, retries back off; 0: at once */
    double retry_after; /* the server's Retry-After in seconds, or -1 */
} zri_model_wait;
/* One call of the model named by spec ("mock", "scripted:FILE",
 * "openai:MODEL", …) with the filled prompts; writes a->nresults results
 * to outs and fills *wait (never NULL). */
ZRI_HIDDEN int zri_model_call(zri_action_env *env, const zgrt_action *a, const char *spec,
                              const char *system, const char *user, zgrt_value *outs,
                              zri_model_wait *wait, char *err, size_t errlen);
/* Answer scripts (scripted models, --answers files): takes the next answer
 * object (a borrowed json_t *, valid until zri_actions_shutdown) for
 * `Lifeline.action`, else `action`.  what names the file's role in
 * messages.  Returns one of ZRI_MODEL_*, or -1 when the file has no key
 * for the action (*answer NULL, no message). */
ZRI_HIDDEN int zri_script_next(const char *path, const char *what, const char *lifeline,
                               const char *action, void **answer, int *index, char *err,
                               size_t errlen);
/* Types an answer object (output names, "value" for unnamed outputs) as
 * a's results; enum_numbers: an enum output also accepts a 1-based
 * member number. */
ZRI_HIDDEN int zri_answer_values(zri_action_env *env, const zgrt_action *a, void *answer,
                                 int enum_numbers, zgrt_value *outs, char *err, size_t errlen);
ZRI_HIDDEN void zri_models_shutdown(void);
/* Checks a model spec without calling the model: its form (mock,
 * scripted:FILE, openai[:MODEL], ollama[:MODEL]; a near miss gets a
 * suggestion), a scripted file's contents, and for the remote backends
 * the endpoint's URL scheme and the key's characters.  No network: a
 * server that cannot be reached is found at the first call.  0, or -1
 * with the reason in err. */
ZRI_HIDDEN int zri_model_check(const char *spec, char *err, size_t errlen);
/* Reads and checks an answer script (scripted models, --answers) as its
 * first use would; what names its role in messages.  0 or -1. */
ZRI_HIDDEN int zri_script_check(const char *path, const char *what, char *err, size_t errlen);

/* ===================================================================== */
/* http.c, used by models.c: one HTTP POST of a JSON body over libcurl     */
/* ===================================================================== */

typedef struct zri_http_reply {
    long status; /* the HTTP status code */
    char *body;  /* malloc'd, NUL-terminated (len bytes before the NUL) */
    size_t len;
    double retry_after; /* the Retry-After header in seconds, or -1 */
} zri_http_reply;

enum {
    ZRI_HTTP_OK = 0,         /* a reply arrived (any status) */
    ZRI_HTTP_TRANSPORT = -1, /* no reply: connection, TLS, protocol error */
    ZRI_HTTP_TIMEOUT = -2,   /* no complete reply within the time limit */
    ZRI_HTTP_CANCELLED = -3, /* *cancel became non-zero */
    ZRI_HTTP_SETUP = -4,     /* libcurl could not be set up (or out of memory) */
    ZRI_HTTP_CONFIG = -5,    /* no reply, and none will come: a malformed URL, an
                                unsupported scheme, a host name that does not resolve */
};

/* POSTs body (JSON) to url with `Authorization: Bearer <bearer>` when
 * bearer is non-NULL and non-empty.  Gives up after timeout_s seconds and
 * within about 0.1 s of *cancel becoming non-zero.  Returns ZRI_HTTP_OK
 * with the reply in *out (release with zri_http_reply_free), or a negative
 * ZRI_HTTP_* code with a message in err; the message never contains the
 * bearer token. */
ZRI_HIDDEN int zri_http_post(const char *url, const char *bearer, const char *body,
                             double timeout_s, volatile int *cancel, zri_http_reply *out, char *err,
                             size_t errlen);
ZRI_HIDDEN void zri_http_reply_free(zri_http_reply *r);
/* Releases libcurl's global state; no call may be running. */
ZRI_HIDDEN void zri_http_shutdown(void);

#endif
