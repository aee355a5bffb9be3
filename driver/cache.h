/* cache.h — the cache of builds (prefix zca_): `zgc run` and durable runs
 * build a program once and run its executables from the cache after.
 *
 * Where: $ZGC_CACHE, else $XDG_CACHE_HOME/zgc, else ~/.cache/zgc.  An
 * entry is a directory named FINGERPRINT-LOCATIONS-O<level>-RUNTIME-BUILD:
 * the program's fingerprint (backend/link.c: its lifelines' IR, its
 * declarations, its C files), its source path and location table (which
 * the fingerprint leaves out, but run-time errors print), the
 * optimisation level, the runtime library's identity and the compiler's
 * build id (generated/zgc_build_id.h) — so a changed program, a statement
 * on another line, a C file, -O level, runtime or compiler misses.
 * It holds the executables linked so far, each with its SHA-256 beside it
 * (EXE.sha256), checked before every use: a damaged executable is removed
 * and built again.  src/KEY maps a hash of the source text, its imports, the C files
 * and the same identities to the entry, so that an unchanged program is
 * found without generating any code (without loading the backend).
 *
 * The cache keeps the 64 entries used last ($ZGC_CACHE_ENTRIES); `zgc
 * cache clean` removes them all.
 *
 * Builds are made in a temporary directory of the cache and renamed into
 * their entry file by file, so two zgc commands building the same program
 * at once both succeed and no reader ever sees half a file.
 *
 * Errors: a message on stderr and exit status 1.
 */
#ifndef ZGC_DRIVER_CACHE_H
#define ZGC_DRIVER_CACHE_H

#include "backend.h"
#include "zgc.h"

/* The cache directory (malloc'd). */
char *zca_dir(void);

typedef struct ZcaRequest {
    const char *source;         /* the workflow file */
    const char *const *c_files; /* the user's C files */
    int n_c_files;
    int opt_level;       /* 0..3 */
    int link;            /* ZB_LINK_* bits: the executables needed */
    int jobs;            /* ZBuildOptions.jobs */
    bool allow_unlinked; /* ZBuildOptions.allow_unlinked */
} ZcaRequest;

/* The entry holding the executables r needs for compilation c (run up to
 * ZC_PLAN), built when missing; *dir gets its path (malloc'd).  Returns
 * the exit status (0, or 1 after a message or the diagnostics). */
int zca_get(ZCompilation *c, const ZcaRequest *r, char **dir);

/* `zgc cache`: dir, clean. */
int zca_main(int argc, char **argv);

#endif
