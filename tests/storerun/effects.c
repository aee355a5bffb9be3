/* effects.c — the C effect functions of the store-operation tests
 * (run.sh): each appends "NAME ARG" to the file $ZG_EFFECT_LOG (when
 * set) when it takes place, so that the test can compare the order the
 * effects really took place in with the OpRecords' co; `slow` takes
 * 150 ms first, the others none; tally and ping log their int argument. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "zgrt.h"

static int took_place_arg(zgrt_call *c, const char *name, long ms, const char *arg);
static int took_place(zgrt_call *c, const char *name, long ms)
{
    return took_place_arg(c, name, ms, zgrt_argc(c) > 0 ? zgrt_arg_str(c, 0) : "");
}

static int took_place_arg(zgrt_call *c, const char *name, long ms, const char *arg)
{
    if (ms > 0) {
        struct timespec t = {0, ms * 1000000L};
        nanosleep(&t, NULL);
    }
    const char *log = getenv("ZG_EFFECT_LOG");
    if (!log || !*log) return 0;
    char line[512];
    int n = snprintf(line, sizeof line, "%s %s\n", name, arg);
    if (n < 0 || (size_t)n >= sizeof line) n = (int)strlen(line);
    int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0 || write(fd, line, (size_t)n) != n) {
        if (fd >= 0) close(fd);
        return zgrt_fail(c, "cannot write the effect log %s", log);
    }
    close(fd);
    return 0;
}

int zg_slow(zgrt_call *c) { return took_place(c, "slow", 150); }
int zg_fast(zgrt_call *c) { return took_place(c, "fast", 0); }
int zg_notify(zgrt_call *c) { return took_place(c, "notify", 0); }
int zg_archive(zgrt_call *c) { return took_place(c, "archive", 0); }
int zg_run_tool(zgrt_call *c) { return took_place(c, "run_tool", 0); }

/* tally(k: int), ping(k: int): the tools of random workflows with stores
 * (tests/gen/zggen.c --stores). */
static int took_place_int(zgrt_call *c, const char *name)
{
    char arg[32];
    snprintf(arg, sizeof arg, "%lld", (long long)zgrt_arg_int(c, 0));
    return took_place_arg(c, name, 0, arg);
}
int zg_tally(zgrt_call *c) { return took_place_int(c, "tally"); }
int zg_ping(zgrt_call *c) { return took_place_int(c, "ping"); }
