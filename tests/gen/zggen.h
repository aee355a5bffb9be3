/* zggen.h — random well-typed, terminating .zg workflows, for property
 * tests, fuzz seeds and benchmarks. */
#ifndef ZGGEN_H
#define ZGGEN_H
#include <stdbool.h>
#include <stdint.h>
#include "zgc.h"

typedef struct ZGenOptions {
    uint64_t seed;
    int lifelines;  /* 2..64 */
    int statements; /* approximate number of statements to generate */
    int max_depth;  /* nesting of if/while/parallel */
    bool cpl;       /* draw guards from the CPL operator set */
    bool parallel;  /* parallel regions and coregions */
    /* Off by default (existing seeds give the same programs).  On: also
     * str/enum/bool variables and computations, constant bindings on
     * receivers, blocks, named guards, and guards from the whole CPL
     * operator set (nested prev/since/once/historically/past/seen, @B(φ),
     * @B.x terms, ==/!=/?: between formulas). */
    bool rich;
    /* Off by default.  On (implies rich and cpl): guards for the
     * differential CPL test (tests/cpl): variables without a default
     * (u0, u1: int; f0: bool) that lifelines write or receive only on some
     * paths and that guards read through @B.x and unqualified, so terms
     * are sometimes undefined; atoms with connectives inside them (a pure
     * bool action, str() of a disjunction, ?: inside a comparison) next to
     * connectives between formulas; every CPL operator nested. */
    bool cpl_full;
    /* Off by default.  On: actions that are not pure, as the crash tests
     * of durable runs need them: an llm action guess(k: int) -> int, an
     * effect note(k: int) -> int (zg_note, tests/durable/effect.c) and a
     * human action ask(k: int) -> str (kind input), whose answer a
     * lifeline reads with int() (outside parallel regions only, into h0). */
    bool actions;
    /* Off by default.  On: a store S (int cells x0, x1; tools tally and
     * ping, effects of tests/storerun/effects.c) declared at level
     * store_level (0..4), and atomic blocks on random lifelines: reads of
     * one or both cells into the branch's own variables, tool calls, and
     * writes computed from what was read (tests/storerun/random.sh). */
    bool stores;
    int store_level;
} ZGenOptions;

/* Appends a whole .zg program (one workflow named `gen`) to out. */
void zggen_program(ZBuf *out, const ZGenOptions *o);
#endif
