/* libFuzzer target: the trace reader and checker of `zgc trace check`
 * (oracle/).  The input is the trace of a fixed workflow
 * with a coregion, a loop, a parallel region, a self message, a block and
 * CPL guards; whatever the bytes, the checker must answer (pass or a
 * message) without crashing, leaking or reading out of bounds.  Seeds:
 * tests/fuzz/corpus/trace (real traces, in-process and per-lifeline). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"

static const char workflow[] =
    "lifeline A, B, C;\n"
    "enum Mode { m0, m1 }\n"
    "var x: int = 0;\n"
    "var y: int = 1;\n"
    "var n: int = 0;\n"
    "var s: str = \"a\";\n"
    "var e: Mode = m0;\n"
    "var ok: bool = false;\n"
    "pure inc(t: int) -> int = t % 100 + 1;\n"
    "workflow w() -> int {\n"
    "    A: x = inc(x);\n"
    "    A(x, 2) -> B(y, 2);\n"
    "    coregion { A(x) -> C(x); B(y) -> C(y); }\n"
    "    while n < 2 && (prev (x >= 0) || seen C) @ A {\n"
    "        A: n = n + 1;\n"
    "        parallel {\n"
    "            branch { A(n) -> B(n); B: s = s + \"b\"; }\n"
    "            branch { C: e = y > 1 ? m1 : m0; C(e) -> C(e); }\n"
    "        }\n"
    "    }\n"
    "    if @B.y == 2 && past (s == \"ab\") || historically (x < 50) @ C {\n"
    "        C { ok = true; x = x + y; }\n"
    "        C(x) -> A(y);\n"
    "    } else {\n"
    "        skip B;\n"
    "    }\n"
    "    return x @ A;\n"
    "}\n";

static ZtModel *model;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!model) {
        model = zt_model_new("fuzz.zg", workflow, strlen(workflow), NULL, stderr);
        if (!model) {
            fprintf(stderr, "fuzz_trace: the fixed workflow does not compile\n");
            abort();
        }
    }
    char *msg = NULL;
    ZtStats st;
    int rc = zt_check(model, "fuzz.jsonl", (const char *)data, size, &msg, &st);
    if ((rc == 0) != (msg == NULL)) {
        fprintf(stderr, "fuzz_trace: zt_check returned %d with %s\n", rc,
                msg ? "a message" : "no message");
        abort();
    }
    free(msg);
    return 0;
}
