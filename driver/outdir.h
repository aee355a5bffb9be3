/* outdir.h — where `zgc build` writes (prefix zod_).
 *
 * The output directory is -o DIR, else one named after the workflow
 * (./hello for workflow hello), never the CMake build directory or any
 * other directory of other programs' files.  zgc build never writes over
 * a file it did not make: DIR/.zgc-build lists the files builds made
 * there (the workflow's executables <workflow>, <workflow>.<Lifeline>,
 * and with --keep-objects its objects <workflow>.*.o).  Before a build,
 * a file of those names that exists and is not in the list is refused;
 * so is a default directory (no -o) that holds anything not in the list.
 * After a build, the files it made are added to the list.
 *
 * Errors: a message on stderr ("zgc: error: …") and -1. */
#ifndef ZGC_DRIVER_OUTDIR_H
#define ZGC_DRIVER_OUTDIR_H

#include <stdbool.h>

/* Checks that a build of workflow may write into dir (given: by -o). */
int zod_check(const char *dir, bool given, const char *workflow);
/* Adds the files of workflow now in dir to dir's list. */
int zod_record(const char *dir, const char *workflow);

#endif
