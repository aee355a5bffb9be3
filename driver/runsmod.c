/* runsmod.c — the runs module's table (runsmod.h). */
#include "runsmod.h"

#include "runs.h"
#include "store.h"
#include "zgc_build_id.h"

__attribute__((visibility("default"))) const ZoModule zo_module_table = {
    .build_id = ZGC_BUILD_ID,
    .cache_get = zca_get,
    .cache_main = zca_main,
    .runs_main = zo_runs_main,
    .tasks_main = zo_tasks_main,
    .answer_main = zo_answer_main,
    .resume = zo_resume,
    .store_path = zs_path,
    .signals_catch = zx_signals_catch,
    .signal_received = zx_signal_received,
    .signal_exit = zx_signal_exit,
    .run_single = zx_run_single,
    .run_processes = zx_run_processes,
};
