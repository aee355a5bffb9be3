/* gate.c — the effect of the NATS fault tests (tests/nats/run.sh, wait.zg):
 * gate(topic) waits until the file $ZGC_TEST_GATE holds a whole first
 * line, polling every 20 ms, and returns topic + "/" + that line, so that the test
 * decides when a lifeline goes on (and can kill a process or the server
 * while it waits).  Without $ZGC_TEST_GATE it returns at once. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "zgrt.h"

int zg_gate(zgrt_call *call)
{
    const char *topic = zgrt_arg_str(call, 0);
    const char *path = getenv("ZGC_TEST_GATE");
    char line[256] = "open";
    if (path && *path) {
        /* a whole first line: the file appears (`echo open > FILE`)
         * before its text is in it */
        for (;;) {
            FILE *f = fopen(path, "r");
            bool whole = f && fgets(line, sizeof line, f) && strchr(line, '\n');
            if (f) fclose(f);
            if (whole) break;
            struct timespec ts = {0, 20 * 1000000L};
            nanosleep(&ts, NULL);
        }
        line[strcspn(line, "\n")] = '\0';
    }
    char out[600];
    snprintf(out, sizeof out, "%s/%s", topic, line);
    zgrt_ret_str(call, 0, out);
    return 0;
}
