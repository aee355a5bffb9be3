/* outdir.c — where `zgc build` writes: see outdir.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "outdir.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zgc.h"

#define LIST ".zgc-build"

/* The list of dir: a malloc'd text of names, one per line ("" when none). */
static char *read_list(const char *dir)
{
    char *path;
    if (asprintf(&path, "%s/%s", dir, LIST) < 0) zu_oom();
    size_t len;
    const char *why;
    char *text = zu_read_file(path, &len, &why);
    free(path);
    return text ? text : zu_xcalloc(1, 1);
}

static bool listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, '\n');
        size_t k = e ? (size_t)(e - p) : strlen(p);
        if (k == n && !memcmp(p, name, n)) return true;
        if (!e) break;
        p = e + 1;
    }
    return false;
}

/* Whether a build of workflow writes a file of this name. */
static bool builds_name(const char *name, const char *workflow)
{
    size_t n = strlen(workflow);
    return !strncmp(name, workflow, n) && (name[n] == 0 || name[n] == '.');
}

/* A build's temporary file (backend/link.c: .<name>.zgc-<pid>). */
static bool temporary(const char *name) { return name[0] == '.' && strstr(name, ".zgc-"); }

int zod_check(const char *dir, bool given, const char *workflow)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        if (errno == ENOENT) return 0; /* made by the build: all of it is ours */
        fprintf(stderr, "zgc: error: cannot use the output directory %s: %s\n", dir,
                strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        fprintf(stderr, "zgc: error: %s exists and is not a directory%s\n", dir,
                given ? "" : " (choose the output directory with -o DIR)");
        return -1;
    }
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "zgc: error: cannot read the output directory %s: %s\n", dir,
                strerror(errno));
        return -1;
    }
    char *list = read_list(dir);
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        const char *name = e->d_name;
        if (!strcmp(name, ".") || !strcmp(name, "..") || !strcmp(name, LIST) || temporary(name) ||
            listed(list, name))
            continue;
        if (builds_name(name, workflow)) {
            fprintf(stderr,
                    "zgc: error: %s/%s exists and was not made by zgc build: it is not "
                    "overwritten (remove it, or choose another directory with -o DIR)\n",
                    dir, name);
            rc = -1;
        } else if (!given) {
            fprintf(stderr,
                    "zgc: error: the output directory %s holds files zgc build did not make "
                    "(%s): choose a directory with -o DIR\n",
                    dir, name);
            rc = -1;
        }
    }
    closedir(d);
    free(list);
    return rc;
}

int zod_record(const char *dir, const char *workflow)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "zgc: error: cannot read the output directory %s: %s\n", dir,
                strerror(errno));
        return -1;
    }
    char *list = read_list(dir);
    size_t len = strlen(list);
    char *out = NULL;
    size_t outlen = 0;
    FILE *f = open_memstream(&out, &outlen);
    if (!f) zu_oom();
    fputs(list, f);
    if (len && list[len - 1] != '\n') fputc('\n', f);
    struct dirent *e;
    while ((e = readdir(d)))
        if (builds_name(e->d_name, workflow) && !temporary(e->d_name) && !listed(list, e->d_name))
            fprintf(f, "%s\n", e->d_name);
    closedir(d);
    free(list);
    if (fclose(f) != 0) zu_oom();
    char *path, *tmp;
    if (asprintf(&path, "%s/%s", dir, LIST) < 0 ||
        asprintf(&tmp, "%s.tmp-%ld", path, (long)getpid()) < 0)
        zu_oom();
    FILE *w = fopen(tmp, "w");
    int ok = w && fwrite(out, 1, outlen, w) == outlen;
    if (w && fclose(w) != 0) ok = 0;
    if (ok && rename(tmp, path) != 0) ok = 0;
    if (!ok) {
        fprintf(stderr, "zgc: error: cannot write %s: %s\n", path, strerror(errno));
        unlink(tmp);
    }
    free(out);
    free(path);
    free(tmp);
    return ok ? 0 : -1;
}
