/* procid.h — which process a pid names (prefix zv_).  Header only and
 * self-contained, like suggest.h, so that the driver (`zgc runs`) and the
 * runtime's durable runs tell a live lifeline process from a reused pid
 * alike without depending on one another.
 *
 *   long long start = zv_proc_start(pid);   // -1: no such live process
 *   ... later: zv_proc_start(pid) == start  // still the same process
 */
#ifndef ZGC_VOCAB_PROCID_H
#define ZGC_VOCAB_PROCID_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The start time of process pid (field 22 of /proc/PID/stat, in clock
 * ticks since boot), or -1 when there is no such process or it has ended
 * (a zombie or a dead process runs no more).  With the pid, it names a
 * process even when pids are reused. */
static inline long long zv_proc_start(long long pid)
{
    char path[64], buf[1024];
    if (pid <= 0) return -1;
    snprintf(path, sizeof path, "/proc/%lld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    /* the command name (field 2) is in parentheses and may hold spaces */
    char *p = strrchr(buf, ')');
    if (!p) return -1;
    p++;
    if (p[0] == ' ' && (p[1] == 'Z' || p[1] == 'X')) return -1;
    for (int field = 3; field < 22; field++) {
        p = strchr(p + 1, ' ');
        if (!p) return -1;
    }
    return strtoll(p + 1, NULL, 10);
}

#endif
