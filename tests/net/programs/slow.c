/* slow.c — zg_nap, the action of slow.zg: sleeps NAP_SECONDS (default 3)
 * seconds, longer than the heartbeat limit of the test, then returns its
 * argument plus one. */
#include <stdlib.h>
#include <time.h>

#include "zgrt.h"

int zg_nap(zgrt_call *call);

int zg_nap(zgrt_call *call)
{
    const char *s = getenv("NAP_SECONDS");
    double secs = s ? atof(s) : 3.0;
    struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {}
    zgrt_ret_int(call, 0, zgrt_arg_int(call, 0) + 1);
    return 0;
}
