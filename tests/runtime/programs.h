/* programs.h — hand-written "generated code" for the runtime tests: program
 * descriptors and lifeline bodies calling the ABI of zgrt_abi.h the way the
 * backend does. */
#ifndef ZGRT_TEST_PROGRAMS_H
#define ZGRT_TEST_PROGRAMS_H

#include "helpers.h"

/* User sends topic to Writer, which answers "[" + topic + "]".
 * Input topic: str @ User; result draft @ User. */
extern const zgrt_program prog_hello;
/* A loop owned by A with control messages to B: B increments the counter
 * A sends until it reaches the input limit.  Result n @ A (= limit). */
extern const zgrt_program prog_pingpong;
/* Parallel regions on both lifelines, each branch on its own channel:
 * A sends x = 10 to B twice; B doubles / triples; result y1 + y2 = 50. */
extern const zgrt_program prog_par;
/* Eight parallel branches of 200 round trips each (a stress test);
 * result: the sum of the last counters, 8 * 200. */
extern const zgrt_program prog_par_stress;
/* A coregion on C: A sends first (and then tells B to send): C records
 * the arrival order (12) and the sum (3); result [order, sum]. */
extern const zgrt_program prog_coregion;
/* B binds the constant 5 where A sends 3: error at mm.zg:4:5. */
extern const zgrt_program prog_mismatch;
/* A waits for B, which traps ("integer overflow" at t.zg:9:13). */
extern const zgrt_program prog_trap;
/* Like prog_trap, but the trap happens in one branch of a parallel region
 * while the other branch is blocked in a receive. */
extern const zgrt_program prog_trap_par;
/* A loops forever (choice events); B waits for A: needs --timeout. */
extern const zgrt_program prog_forever;
/* The same with a 2 ms pause (outside the runtime) per iteration. */
extern const zgrt_program prog_forever_slow;
/* A and B both wait for each other. */
extern const zgrt_program prog_deadlock;
/* B's parallel region: one branch waits for A forever, A waits for B. */
extern const zgrt_program prog_deadlock_par;
/* A sends what B does not expect, by malformed_case: 0 a control message
 * for a user message, 1 the reverse, 2 another control tag, 3 two values
 * for one. */
extern const zgrt_program prog_malformed;
extern int malformed_case;
/* One lifeline that never comes back from foreign code. */
extern const zgrt_program prog_stuck;
/* An enum sent between lifelines; result (status @ Boss, bad @ Boss). */
extern const zgrt_program prog_enums;
/* Actions: extern pure double(21) and the mock llm write(topic);
 * result [42, "[write:draft]"]. */
extern const zgrt_program prog_actions;
/* An extern action that fails with zgrt_fail. */
extern const zgrt_program prog_action_fails;
/* One lifeline, inputs of every type, result the tuple of all of them. */
extern const zgrt_program prog_inputs;
/* One lifeline, no inputs, no result. */
extern const zgrt_program prog_noresult;

#endif
