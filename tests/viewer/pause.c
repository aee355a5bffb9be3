/* pause.c — the C action of slow.zg: returns its argument after sleeping
 * $ZG_PAUSE_MS milliseconds (default 60), so a run lasts long enough to
 * be watched. */
#include <stdlib.h>
#include <time.h>

#include "zgrt.h"

int zg_pause(zgrt_call *call)
{
    const char *env = getenv("ZG_PAUSE_MS");
    long ms = env ? atol(env) : 60;
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {}
    zgrt_ret_int(call, 0, zgrt_arg_int(call, 0));
    return 0;
}
