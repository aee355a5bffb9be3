/* runsmod.h — the runs module (zgc-runs.so), prefix zo_module: what zgc
 * does with built workflows and their records, loaded only by the
 * commands that need it.
 *
 * It holds the cache of builds (cache.c), the launcher of runs
 * (launch.c), the run stores of durable runs (store.c: SQLite; kvstore.c:
 * a JetStream bucket) and the commands over them (runs.c).  Those link
 * SQLite, libnats (and through it libssl and protobuf-c) and libcrypto,
 * whose relocations cost every process that maps them several
 * milliseconds: `zgc check`, `parse`, `project`, `guards`, `fmt`,
 * `view`, `lsp`, `trace`, `anomalies` never load them.  `zgc run`,
 * `runs`, `tasks`, `answer` and `cache` load the module (runsload.c) on
 * first use, as build, run and emit-llvm load the backend module; its
 * references to the rest of zgc resolve against the zgc executable, and
 * a module of another build is refused.
 */
#ifndef ZGC_DRIVER_RUNSMOD_H
#define ZGC_DRIVER_RUNSMOD_H
#include <stdbool.h>

#include "cache.h"
#include "launch.h"

typedef struct ZoModule {
    const char *build_id; /* ZGC_BUILD_ID of the zgc it belongs to */
    /* cache.h */
    int (*cache_get)(ZCompilation *c, const ZcaRequest *r, char **dir);
    int (*cache_main)(int argc, char **argv);
    /* runs.h */
    int (*runs_main)(int argc, char **argv);
    int (*tasks_main)(int argc, char **argv);
    int (*answer_main)(int argc, char **argv);
    int (*resume)(const char *path, const char *id, const char *exe_dir, bool exit_when_waiting);
    /* store.h */
    char *(*store_path)(const char *given);
    /* launch.h */
    void (*signals_catch)(void);
    int (*signal_received)(void);
    void (*signal_exit)(void);
    int (*run_single)(const char *exe, int argc, char **argv);
    int (*run_processes)(const ZxProcessRun *r, int argc, char **argv);
} ZoModule;

/* The module's table (runsmod.c, in the module only). */
extern const ZoModule zo_module_table;

/* The module, loaded on first use: from $ZGC_RUNS_MODULE (which an
 * installed zgc sets: paths.c), else beside the zgc executable.  When it
 * cannot be loaded, says why on stderr and exits with status 1. */
const ZoModule *zo_module(void);
#endif
