/* paths.c — where zgc's parts are: see paths.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "paths.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zgc.h"

/* the installation's directories, relative to its prefix (GNUInstallDirs) */
#ifndef ZGC_INSTALL_LIBDIR
#define ZGC_INSTALL_LIBDIR "lib"
#endif
#ifndef ZGC_INSTALL_INCLUDEDIR
#define ZGC_INSTALL_INCLUDEDIR "include"
#endif
#ifndef ZGC_INSTALL_DATADIR
#define ZGC_INSTALL_DATADIR "share"
#endif

static char where[PATH_MAX + 32] = "build tree";

static int exists(const char *path) { return access(path, F_OK) == 0; }

/* Sets name to value unless the user set it. */
static void set_default(const char *name, const char *value)
{
    const char *v = getenv(name);
    if (!v || !*v) setenv(name, value, 1);
}

void zpa_init(void)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return; /* the compiled-in paths; the backend says what it misses */
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (!slash) return;
    *slash = 0; /* self: the directory of zgc */
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/zgc-backend.so", self);
    if (exists(path)) return; /* a build tree */
    /* PREFIX/bin/zgc: PREFIX is the directory above */
    char prefix[PATH_MAX];
    snprintf(path, sizeof path, "%s/..", self);
    if (!realpath(path, prefix)) return;
    char module[PATH_MAX + 64];
    snprintf(module, sizeof module, "%s/%s/zgc/zgc-backend.so", prefix, ZGC_INSTALL_LIBDIR);
    if (!exists(module)) return;
    snprintf(where, sizeof where, "installation in %s", prefix);
    set_default("ZGC_BACKEND", module);
    snprintf(path, sizeof path, "%s/%s/zgc/zgc-runs.so", prefix, ZGC_INSTALL_LIBDIR);
    set_default("ZGC_RUNS_MODULE", path);
    snprintf(path, sizeof path, "%s/%s/libzgrt.a", prefix, ZGC_INSTALL_LIBDIR);
    set_default("ZGC_RUNTIME_LIB", path);
    snprintf(path, sizeof path, "%s/%s/zgc/libzgplanner.so", prefix, ZGC_INSTALL_LIBDIR);
    set_default("ZGC_PLANNER_LIB", path);
    snprintf(path, sizeof path, "%s/%s/zgrt", prefix, ZGC_INSTALL_INCLUDEDIR);
    set_default("ZGC_RUNTIME_INCLUDE", path);
    const char *std = getenv("ZGC_STDLIB");
    if (std && *std) return; /* zc_stdlib_dir reads it */
    static char stdlib_dir[PATH_MAX + 64];
    snprintf(stdlib_dir, sizeof stdlib_dir, "%s/%s/zgc/stdlib", prefix, ZGC_INSTALL_DATADIR);
    zc_set_stdlib_dir(stdlib_dir);
}

const char *zpa_where(void) { return where; }
