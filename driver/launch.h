/* launch.h — starting built workflows (`zgc run`), prefix zx_. */
#ifndef ZGC_LAUNCH_H
#define ZGC_LAUNCH_H
#include <stdbool.h>

/* Runs one executable with the given run options; returns its exit status. */
int zx_run_single(const char *exe, int argc, char **argv);

typedef struct ZxProcessRun {
    const char *dir; /* where DIR/<workflow>.<Lifeline> are */
    const char *workflow;
    int nlifelines;
    const char *const *lifelines;
    int nresults; /* result components */
    bool result_tuple;
    const char *trace; /* --trace FILE, or NULL */
} ZxProcessRun;

/* Runs one process per lifeline on Unix sockets in r->dir; prints the
 * assembled result; returns 0, 1 (a lifeline failed) or 2 (bad usage). */
int zx_run_processes(const ZxProcessRun *r, int argc, char **argv);
#endif
