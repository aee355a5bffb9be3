/* load.c — zb_load: the backend module, loaded only when code is generated.
 *
 * The zgc command does not link the backend: libLLVM costs every process
 * that maps it about 27 ms of relocations and 52 MiB (measured with
 * /usr/bin/time on `zgc check`), and only build, run and emit-llvm need
 * it.  Those load zgc-backend.so with dlopen (RTLD_NOW, so that a symbol
 * the module misses is an error here, not a crash later); the module's
 * references to the compiler resolve against the zgc executable, which
 * exports its symbols.  A module of another build is refused: the two
 * share the compiler's data structures, so their build ids must agree.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "backend.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zgc_build_id.h"

#define ZB_MODULE_FILE "zgc-backend.so"

static const ZbModule *loaded;

/* Opens the module at path; NULL with the reason in err. */
static const ZbModule *open_module(const char *path, char *err, size_t errlen)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        snprintf(err, errlen, "cannot load the backend module %s: %s", path, why ? why : "");
        return NULL;
    }
    const ZbModule *m = dlsym(h, "zb_module");
    if (!m) {
        snprintf(err, errlen, "%s is no zgc backend module (no zb_module)", path);
        dlclose(h);
        return NULL;
    }
    if (!m->build_id || strcmp(m->build_id, ZGC_BUILD_ID) != 0) {
        snprintf(err, errlen,
                 "the backend module %s belongs to another build of zgc (build %s, this zgc %s)",
                 path, m->build_id ? m->build_id : "?", ZGC_BUILD_ID);
        dlclose(h);
        return NULL;
    }
    return m; /* never closed: the process ends with it */
}

const ZbModule *zb_load(char *err, size_t errlen)
{
    if (loaded) return loaded;
    const char *env = getenv("ZGC_BACKEND");
    if (env && *env) return loaded = open_module(env, err, errlen);
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        snprintf(err, errlen, "cannot find the zgc executable (/proc/self/exe) to find %s",
                 ZB_MODULE_FILE);
        return NULL;
    }
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (slash) *slash = 0;
    char path[PATH_MAX + 64];
    /* the build tree: beside zgc (an installation's module is named by
       ZGC_BACKEND, which the driver sets: driver/paths.h) */
    snprintf(path, sizeof path, "%s/%s", self, ZB_MODULE_FILE);
    return loaded = open_module(path, err, errlen);
}
