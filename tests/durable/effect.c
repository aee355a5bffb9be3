/* effect.c — the effect of the crash tests (tests/durable): note(k) logs
 * its call, one line "KEY" with the call's idempotency key
 * (zgrt_call_key), to $ZGC_TEST_EFFECT_LOG (one write with O_APPEND, so
 * a line is whole even when the process is killed), then returns
 * (7k + 3) mod 11. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zgrt.h"

int zg_note(zgrt_call *call)
{
    int64_t k = zgrt_arg_int(call, 0);
    const char *log = getenv("ZGC_TEST_EFFECT_LOG");
    if (log && *log) {
        char line[512];
        int n = snprintf(line, sizeof line, "%s\n", zgrt_call_key(call));
        int fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0 || n <= 0 || (size_t)n >= sizeof line || write(fd, line, (size_t)n) != n) {
            if (fd >= 0) close(fd);
            return zgrt_fail(call, "cannot log the call to %s", log);
        }
        close(fd);
    }
    int64_t r = (k % 11) * 7 + 3;
    zgrt_ret_int(call, 0, ((r % 11) + 11) % 11);
    return 0;
}
