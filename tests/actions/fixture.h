/* fixture.h — a hand-built program descriptor and helpers for the tests
 * of actions.c and models.c. */
#ifndef ZGC_TEST_ACTIONS_FIXTURE_H
#define ZGC_TEST_ACTIONS_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "agent/agent.h"

/* lifelines */
enum { EDITOR = 0, WRITER = 1 };

/* actions of the fixture program, by index */
enum {
    A_WRITE,   /* llm write(topic: str) -> (draft: str) */
    A_ASSESS,  /* llm assess(n: int, v: Verdict, j: json, x: float, b: bool, s: str)
                   -> (ok: bool, count: int, score: float, data: json, verdict: Verdict, note: str) */
    A_JUDGE,   /* llm judge(draft: str) -> (approved: bool), retries 2, fallback true */
    A_FOREVER, /* llm forever() -> (n: int), retries forever, fallback 7 */
    A_APPROVE, /* human confirm approve(draft: str) -> bool */
    A_ASK,     /* human input ask(q: str) -> str */
    A_PICK,    /* human select pick(draft: str) -> Verdict */
    A_REVISE,  /* human edit revise(n: int, draft: str) -> str */
    A_NOTICE,  /* human ack notice(draft: str) */
    A_NOTICE2, /* human ack notice2() -> bool */
    A_SCORE,   /* extern pure score(text: str, n: int, x: float, b: bool, v: Verdict, j: json)
                   -> (float, int, str, bool, Verdict, json) */
    A_SEND,    /* effect send(to: str) */
    A_INC,     /* pure inc(t: int) -> int */
    A_UNNAMED, /* llm with an unnamed str output (mock naming) */
    N_ACTIONS
};

extern zgrt_action fx_actions[N_ACTIONS];
extern zgrt_program fx_prog;
extern zri_options fx_opts;

/* Resets the program, options and heap (Criterion .init). */
void fx_setup(void);
/* Frees the heap, action caches and temporary files (Criterion .fini). */
void fx_teardown(void);

/* Runs action `action` on `lifeline` as its call number `call`. */
int fx_run(int action, int lifeline, uint64_t call, const zgrt_value *args, zgrt_value *outs,
           int *attempts, char *err, size_t errlen);
/* Same with an explicit heap and cancel flag (threads). */
int fx_run_in(zri_heap *h, volatile int *cancel, int action, int lifeline, uint64_t call,
              const zgrt_value *args, zgrt_value *outs, int *attempts, char *err, size_t errlen);

/* A temporary file holding text; removed by fx_teardown. */
const char *fx_file(const char *text);
/* "scripted:" + a temporary file holding text (static storage per call). */
const char *fx_scripted(const char *text);
/* Adds a --llm-for route (lifeline or action may be NULL). */
void fx_route(const char *lifeline, const char *action, const char *spec);

/* Values */
zgrt_value fx_str(const char *s);
zgrt_value fx_int(int64_t i);
zgrt_value fx_float(double f);
zgrt_value fx_bool(int b);
zgrt_value fx_enum(int member); /* of Verdict */
zgrt_value fx_json(const char *text);
const char *fx_text(const zgrt_value *v); /* a str value's text */

/* notes received through env->note */
extern int fx_notes;

#endif
