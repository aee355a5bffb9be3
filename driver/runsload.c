/* runsload.c — zo_module: loads the runs module (runsmod.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "runsmod.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zgc_build_id.h"

#define ZO_MODULE_FILE "zgc-runs.so"

const ZoModule *zo_module(void)
{
    static const ZoModule *loaded;
    if (loaded) return loaded;
    char path[PATH_MAX + 64];
    const char *env = getenv("ZGC_RUNS_MODULE");
    if (env && *env) {
        snprintf(path, sizeof path, "%s", env);
    } else {
        /* the build tree: beside zgc */
        char self[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0) {
            fprintf(stderr,
                    "zgc: error: cannot find the zgc executable (/proc/self/exe) to find %s\n",
                    ZO_MODULE_FILE);
            exit(1);
        }
        self[n] = 0;
        char *slash = strrchr(self, '/');
        if (slash) *slash = 0;
        snprintf(path, sizeof path, "%s/%s", self, ZO_MODULE_FILE);
    }
    /* RTLD_NOW: a symbol the module misses is an error here, not a crash later */
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        fprintf(stderr, "zgc: error: cannot load the runs module %s: %s\n", path, why ? why : "");
        exit(1);
    }
    const ZoModule *m = dlsym(h, "zo_module_table");
    if (!m) {
        fprintf(stderr, "zgc: error: %s is no zgc runs module (no zo_module_table)\n", path);
        exit(1);
    }
    if (!m->build_id || strcmp(m->build_id, ZGC_BUILD_ID) != 0) {
        fprintf(stderr,
                "zgc: error: the runs module %s belongs to another build of zgc (build %s, this "
                "zgc %s)\n",
                path, m->build_id ? m->build_id : "?", ZGC_BUILD_ID);
        exit(1);
    }
    return loaded = m; /* never closed: the process ends with it */
}
