/* attempts.c — the act events' "attempts" and the retry lines
 * (docs/runtime.md, "Failures, retries, fallback").  A call of an llm
 * action makes attempts 1, 2, …, n; each failed attempt k that is retried
 * writes a retry line {"attempt": k} before the next attempt, and the act
 * event, after the last attempt, has "attempts": n.  So the calls of one
 * action on one lifeline, read in the lifeline's line order, are:
 *
 *   retry 1, retry 2, …, retry n-1, act with attempts n
 *
 * interleaved with each other when parallel branches of the lifeline call
 * the same action at once, and all after the event before the act on its
 * thread (the call begins there; replay.c gives Ev.pred).  The retry
 * lines of concurrent calls are told apart only by their numbers: a retry
 * line k opens a call (k = 1) or moves a call at k-1 to k; an act event
 * with n attempts closes a call at n-1 (none for n = 1) that began after
 * its thread's previous event, of several the one that began first.  A lifeline whose run
 * ended normally leaves no call open; after an error a call may stay open
 * (it failed, or the run was cancelled during it).  An action declares
 * `retries = R` (default 3), at most R + 1 attempts, or `forever`.  Any
 * other act event (pure, extern pure, effect, human, a local computation
 * or a self message) has attempts 1 and no retry line.
 *
 * The retry lines' "error" (the failed attempt's message) and "delay" (the
 * wait in seconds: the backoff or the server's Retry-After, times
 * --backoff-scale) are checked for their types only (trace.c): their
 * values depend on the model server and the options, not on the workflow. */
#include "zt.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The most attempts a call of act may make: retries + 1, or INT32_MAX
 * for `forever` (the runtime stops counting there). */
static int64_t max_attempts(Check *c, const ZDecl *act)
{
    const ZProp *pr = za_prop(act, PROP_RETRIES);
    if (!pr) return 4; /* retries = 3 */
    if (pr->value->kind == E_NAME && pr->value->name &&
        !strcmp(pr->value->name, ZV_RETRIES_FOREVER))
        return INT32_MAX;
    Env env = {.c = c, .life = 0, .index = 0};
    Val v = zt_eval(&env, pr->value);
    if (v.k != V_INT || v.i < 0) ZU_ICE("retries of %s is not a count", act->name);
    return v.i >= INT32_MAX - 1 ? INT32_MAX : v.i + 1;
}

/* A call in progress: its action and the number of its last failed attempt. */
typedef struct Open {
    const char *action;
    int64_t at;
    int line;        /* its last retry line */
    int first_line;  /* its first retry line */
    int first_after; /* the lifeline's events before its first retry line */
} Open;

/* The calls in progress on one lifeline. */
typedef struct Opens {
    Open *o;
    int n, cap;
} Opens;

/* An open call of action at attempt `at` whose first retry line comes
 * after `after` events of the lifeline: of several, the one that began
 * the earliest (the others stay for calls that begin later); -1 when none. */
static int find_open(const Open *o, int n, const char *action, int64_t at, int after)
{
    int best = -1;
    for (int i = 0; i < n; i++)
        if (o[i].at == at && !strcmp(o[i].action, action) && o[i].first_after >= after &&
            (best < 0 || o[i].first_after < o[best].first_after))
            best = i;
    return best;
}

static void retry_line(Check *c, const Retry *r, Opens *os)
{
    const ZtModel *m = c->m;
    const ZDecl *act = zt_action(m, r->action);
    if (!act || act->action != ACT_LLM)
        zt_fail(c, r->line,
                "a retry line of `%s`, which is %s: only the attempts of llm actions are retried",
                r->action,
                act ? zu_fmt(c->a, "a %s action", za_action_kind_name(act->action))
                    : "no action of the workflow");
    int64_t most = max_attempts(c, act);
    if (r->attempt >= most)
        zt_fail(c, r->line,
                "attempt %" PRId64 " of `%s` failed and is retried, but `%s` makes at most %" PRId64
                " attempts (its retries)",
                r->attempt, r->action, r->action, most);
    if (r->attempt == 1) {
        os->o = zt_grow(os->o, &os->cap, os->n + 1, sizeof *os->o);
        os->o[os->n++] = (Open){act->name, 1, r->line, r->line, r->after};
        return;
    }
    int k = find_open(os->o, os->n, r->action, r->attempt - 1, 0);
    if (k < 0)
        zt_fail(c, r->line,
                "lifeline %s: a retry line of attempt %" PRId64 " of `%s`, but no call of `%s` is "
                "at attempt %" PRId64 " (the retry lines of a call number its failed attempts 1, "
                "2, ...)",
                m->lnames[r->life], r->attempt, r->action, r->action, r->attempt - 1);
    os->o[k].at = r->attempt;
    os->o[k].line = r->line;
}

static void act_event(Check *c, const Ev *e, Opens *os)
{
    const ZDecl *act = e->action ? zt_action(c->m, e->action) : NULL;
    if (!act || act->action != ACT_LLM) {
        if (e->attempts != 1)
            zt_fail(c, e->line,
                    "%s: \"attempts\" is %" PRId64 ", but only llm actions make several attempts "
                    "(every other act event has 1)",
                    zt_ev_where(c, e), e->attempts);
        return;
    }
    int64_t most = max_attempts(c, act);
    if (e->attempts > most)
        zt_fail(c, e->line,
                "%s: \"attempts\" is %" PRId64 ", but `%s` makes at most %" PRId64
                " attempts (its retries)",
                zt_ev_where(c, e), e->attempts, act->name, most);
    if (e->attempts == 1) return;
    int k = find_open(os->o, os->n, act->name, e->attempts - 1, e->pred);
    if (k < 0) {
        int early = find_open(os->o, os->n, act->name, e->attempts - 1, 0);
        if (early >= 0)
            zt_fail(c, os->o[early].first_line,
                    "lifeline %s: a retry line of `%s` before event %d, but the call it belongs "
                    "to (event %d) begins after event %d of its thread",
                    c->m->lnames[e->life], act->name, os->o[early].first_after + 1, e->index,
                    e->pred);
        zt_fail(c, e->line,
                "%s: \"attempts\" is %" PRId64 ", but no call of `%s` has the retry lines of "
                "attempts 1 to %" PRId64 " before it (each failed attempt that is retried has one)",
                zt_ev_where(c, e), e->attempts, act->name, e->attempts - 1);
    }
    os->o[k] = os->o[--os->n];
}

void zt_check_attempts(Check *c)
{
    const ZtModel *m = c->m;
    Opens *os = zu_xcalloc(1, sizeof *os); /* the one pointer kept across setjmp */
    jmp_buf saved;
    memcpy(saved, c->fail_jb, sizeof saved);
    bool failed = false;
    if (setjmp(c->fail_jb) == 0) {
        for (int l = 0; l < m->nl; l++) {
            os->n = 0;
            int r = 0;
            for (int i = 0; i <= c->nbyl[l]; i++) {
                for (; r < c->nretries; r++) {
                    const Retry *rl = &c->retries[r];
                    if (rl->life != l) continue;
                    if (rl->after > i) break;
                    if (rl->after == i) retry_line(c, rl, os);
                }
                /* the retry lines of l are in line order, so after > i stops the scan */
                if (i < c->nbyl[l]) {
                    const Ev *e = &c->ev[c->byl[l][i]];
                    if (e->kind == K_ACT) act_event(c, e, os);
                }
            }
            if (os->n && !c->life_error[l])
                zt_fail(c, os->o[0].line,
                        "lifeline %s: a call of `%s` failed at attempt %" PRId64
                        " and is retried, but no act event of it follows, and the run of %s "
                        "ended normally",
                        m->lnames[l], os->o[0].action, os->o[0].at, m->lnames[l]);
        }
    } else {
        failed = true;
    }
    memcpy(c->fail_jb, saved, sizeof saved);
    free(os->o);
    free(os);
    if (failed) longjmp(c->fail_jb, 1);
}
