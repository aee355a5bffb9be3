/* nested.c — what the planner library asks of a run (zgrt_nested.h).
 *
 * A generated program runs as a run of its own (core.c: zri_run_new …
 * zri_run_exec) inside the planner's call: its lifelines are fibers of a
 * scheduler of its own, its channels and stores its own, so nothing of it
 * reaches the calling run but the results.  It takes the calling run's
 * options but for what belongs to the calling process alone (its inputs,
 * trace, live view, durable store, transport, result and error files).
 * The iteration limit counts the choice events of `while` constructs
 * whose decision is to go on, through an observer; the wall-time limit
 * is the nested run's --timeout.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "zgrt_nested.h"

#if defined(__GNUC__)
#define ZRI_PUBLIC __attribute__((visibility("default")))
#else
#define ZRI_PUBLIC
#endif

/* zgrt_main, the last of the table, is no function of a run: generated
 * code run by a JIT has no `main` (backend: zb_gen_whole) */
static int no_main(const zgrt_program *p, int argc, char **argv)
{
    (void)p, (void)argc, (void)argv;
    return 2;
}
#define zgrt_main no_main
#define ZRI_SYM(name, sig, ret, params) {#name, (void *)(uintptr_t)&name},
static const zgrt_symbol abi_symbols[] = {ZGRT_ABI(ZRI_SYM)};
#undef ZRI_SYM
#undef zgrt_main

ZRI_PUBLIC const zgrt_symbol *zgrt_abi_symbols(int *n)
{
    *n = (int)(sizeof abi_symbols / sizeof abi_symbols[0]) - 1;
    return abi_symbols;
}

ZRI_PUBLIC const char *zgrt_call_plan(const zgrt_call *call)
{
    const zgrt_action *a = call ? zri_call_desc(call) : NULL;
    return a && a->kind == ZGRT_ACT_PLANNER ? a->plan : NULL;
}

ZRI_PUBLIC int zgrt_call_model(zgrt_call *call, const char *system, const char *user, char **answer,
                               char *err, size_t errlen)
{
    *answer = NULL;
    if (!call) {
        snprintf(err, errlen, "no call");
        return -1;
    }
    return zri_call_text(call, system, user, answer, err, errlen);
}

typedef struct limits {
    zri_run *R;
    const zgrt_program *p;
    int64_t max;
    int64_t count;
    pthread_mutex_t mu;
    zri_buf *lines; /* the nested trace ("," between lines), or NULL */
} limits;

static void add_line(limits *l, zri_buf *line)
{
    /* one object per line: without its newline */
    while (line->len > 0 && line->data[line->len - 1] == '\n') line->len--;
    pthread_mutex_lock(&l->mu);
    if (l->lines->len > 1) zri_buf_add(l->lines, ",", 1);
    zri_buf_add(l->lines, line->data, line->len);
    pthread_mutex_unlock(&l->mu);
}

static void observe_event(void *user, const zri_event *e)
{
    limits *l = user;
    if (l->lines) {
        zri_buf b = {0};
        zri_trace_line_event(&b, l->p, e);
        add_line(l, &b);
        zri_buf_free(&b);
    }
    if (l->max <= 0) return;
    if (e->kind != ZRI_EV_CHOICE || !e->value || e->construct < 0 || e->construct >= l->p->ntags ||
        strncmp(l->p->tags[e->construct], "while", 5) != 0)
        return;
    pthread_mutex_lock(&l->mu);
    int64_t n = ++l->count;
    pthread_mutex_unlock(&l->mu);
    if (n == l->max + 1)
        zri_run_fail(l->R, e->lifeline,
                     "the generated workflow ran more than %lld loop iterations (the planner's "
                     "max_iterations)",
                     (long long)l->max);
}

/* The value v of the sub-program as the call's result i. */
static int set_result(zgrt_call *call, int i, const zgrt_program *sub, const zgrt_value *v,
                      char *err, size_t errlen)
{
    const zgrt_action *a = zri_call_desc(call);
    zgrt_type t = a->result_types[i];
    if (v->tag != t.tag) {
        snprintf(err, errlen, "the generated workflow's result %d is not of the planner's type",
                 i + 1);
        return -1;
    }
    switch (v->tag) {
    case ZGRT_BOOL: zgrt_ret_bool(call, i, v->u.i != 0); break;
    case ZGRT_INT: zgrt_ret_int(call, i, v->u.i); break;
    case ZGRT_FLOAT: zgrt_ret_float(call, i, v->u.f); break;
    case ZGRT_STR: zgrt_ret_str(call, i, v->u.s->data); break;
    case ZGRT_ENUM: zgrt_ret_enum(call, i, (int)(v->u.i & 0xffffffff)); break;
    case ZGRT_JSON: {
        char *text = zri_value_to_json(sub, v, (zgrt_type){ZGRT_JSON, -1});
        zgrt_ret_json(call, i, text);
        free(text);
        break;
    }
    default:
        snprintf(err, errlen, "the generated workflow's result %d has no value", i + 1);
        return -1;
    }
    return 0;
}

ZRI_PUBLIC int zgrt_call_subrun(zgrt_call *call, const zgrt_program *sub, const zgrt_subrun *o,
                                char *err, size_t errlen)
{
    zri_action_env *env = zri_call_env(call);
    const zgrt_action *a = zri_call_desc(call);
    if (zri_program_check(sub) < 0) {
        snprintf(err, errlen, "internal error: the generated program's descriptor is malformed");
        return -1;
    }
    if (sub->nresults != a->nresults) {
        snprintf(err, errlen, "the generated workflow returns %d value%s, the planner %d",
                 (int)sub->nresults, sub->nresults == 1 ? "" : "s", (int)a->nresults);
        return -1;
    }
    zri_options opts = *env->opts;
    opts.nargs = o->nargs;
    opts.arg_names = (const char **)o->arg_names;
    opts.arg_values = (const char **)o->arg_values;
    opts.trace = NULL;
    opts.view = NULL;
    opts.durable = 0;
    opts.store = opts.resume = opts.run_id = NULL;
    opts.exit_when_waiting = 0;
    opts.journal = NULL;
    opts.listen = NULL;
    opts.npeers = 0;
    opts.nats = NULL;
    opts.result_file = opts.error_file = NULL;
    opts.timeout = o->timeout;
    opts.nstored = 0;
    opts.stored = NULL;

    zri_run *R = zri_run_new(sub, &opts, -1);
    zri_buf lines = {0};
    limits lim = {R, sub, o->max_iterations, 0, PTHREAD_MUTEX_INITIALIZER, NULL};
    int rc = 0;
    if (zri_run_setup(R) != 0) {
        snprintf(err, errlen, "the generated workflow's inputs were refused (see above)");
        rc = -1;
        goto out;
    }
    if (env->detail) {
        /* the calling run is observed: its trace gets the nested one */
        lim.lines = &lines;
        zri_buf_puts(&lines, "[");
        for (int32_t l = 0; l < sub->nlifelines; l++) {
            zri_buf b = {0};
            zri_trace_line_start(&b, sub, l, zri_run_store(R, l));
            add_line(&lim, &b);
            zri_buf_free(&b);
        }
    }
    if (o->max_iterations > 0 || lim.lines) {
        zri_observer obs = {observe_event, NULL, &lim, NULL};
        zri_run_observe(R, &obs);
    }
    zri_run_set_actions(R, zri_run_action);
    zri_run_exec(R);
    const char *error = zri_run_error(R);
    if (lim.lines) {
        char *json = error ? NULL : zri_run_result_json(R);
        zri_buf b = {0};
        zri_trace_line_end(&b, json, error);
        add_line(&lim, &b);
        zri_buf_free(&b);
        free(json);
        zri_buf_puts(&lines, "]");
        zri_buf rec = {0};
        zri_buf_puts(&rec, "{\"source\":");
        const char *src = o->source ? o->source : "";
        zri_buf_json_string(&rec, src, strlen(src));
        zri_buf_puts(&rec, ",\"trace\":");
        zri_buf_add(&rec, lines.data, lines.len);
        zri_buf_puts(&rec, "}");
        env->detail(env->note_user, "subrun", rec.data);
        zri_buf_free(&rec);
    }
    if (error) {
        snprintf(err, errlen, "the generated workflow failed: %s", error);
        rc = -1;
        goto out;
    }
    for (int32_t k = 0; k < sub->nresults && rc == 0; k++) {
        const zgrt_value *store = zri_run_store(R, sub->results[k].lifeline);
        rc = set_result(call, k, sub, &store[sub->results[k].var], err, errlen);
    }
out:
    zri_buf_free(&lines);
    zri_run_free(R);
    pthread_mutex_destroy(&lim.mu);
    return rc;
}
