/* launch.h — starting built workflows (`zgc run`), prefix zx_. */
#ifndef ZGC_LAUNCH_H
#define ZGC_LAUNCH_H
#include <stdbool.h>

/* Signals.  While zgc runs a workflow, SIGINT, SIGTERM and SIGHUP are
 * forwarded to the processes it started (each also dies with zgc:
 * PR_SET_PDEATHSIG); zgc waits for them, cleans up, and then dies of the
 * same signal (zx_signal_exit), so its caller sees the conventional
 * status.  zx_signals_catch installs the handlers; zx_signal_received
 * tells whether one came (0 or the signal number). */
void zx_signals_catch(void);
int zx_signal_received(void);
/* Re-raises the signal received, if any, with its default action; returns
 * when none came. */
void zx_signal_exit(void);

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
    const char *view;  /* --view[=ADDR]: "" or ADDR; NULL: no live view */
    /* A resumed durable run (zgc runs resume): each lifeline's executable
     * (NULL: DIR/<workflow>.<Lifeline>); the lifelines know their trace
     * from their stored options (it is only merged here); the result is
     * the one the lifelines composed in the run store. */
    const char *const *exes;
    bool trace_stored;
    /* its stored --peer-wait (NULL: none was given; argv's wins) */
    const char *peer_wait;
    char *(*stored_result)(void *u); /* malloc'd, or NULL after saying why */
    void *u;
} ZxProcessRun;

/* Runs one process per lifeline on Unix sockets in r->dir; prints the
 * assembled result; returns 0, 1 (a lifeline failed) or 2 (bad usage),
 * and for durable runs 3 (a lifeline stopped to wait for human tasks; the
 * others are stopped) or 4 (the run store failed).  A lifeline that exits
 * 5 (it lost a peer, durable runs) only follows another's failure.
 * With r->view, serves the live view of all lifelines (runtime/view): the
 * lifelines write their traces (to r->dir when no trace was asked for),
 * and the launcher follows them as they grow. */
int zx_run_processes(const ZxProcessRun *r, int argc, char **argv);
#endif
