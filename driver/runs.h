/* runs.h — the commands of durable runs (runs.c), prefix zo_. */
#ifndef ZGC_RUNS_H
#define ZGC_RUNS_H
#include <stdbool.h>

/* `zgc runs …`, `zgc tasks …`, `zgc answer …`: argv[0] is the command's
 * name; each returns the exit status. */
int zo_runs_main(int argc, char **argv);
int zo_tasks_main(int argc, char **argv);
int zo_answer_main(int argc, char **argv);

/* Resumes run `id` of the store at path with its executables (those the
 * run recorded, or exe_dir's: DIR/<workflow>[.<Lifeline>]); prints its
 * result; returns the exit status. */
int zo_resume(const char *path, const char *id, const char *exe_dir, bool exit_when_waiting);

/* The cache of builds beside a run store (`zgc run --durable`):
 * DIR/cache, where DIR holds the store (malloc'd). */
char *zo_cache_dir(const char *store);
/* Removes a directory and everything in it (warnings for what cannot be
 * removed). */
void zo_remove_tree(const char *dir);
#endif
