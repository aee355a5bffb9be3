/* cache.c — the cache of builds (cache.h).
 *
 * A lookup costs a SHA-256 of the source and C files (the runtime
 * library's is remembered with its identity: runtime_id) and one of each
 * executable it returns;
 * a miss on the source key loads the backend, generates the IR and looks
 * the fingerprint up before any object is emitted (ZBuildOptions.have),
 * so a program that differs only in its formatting or comments still hits.
 */
#define _GNU_SOURCE
#include "cache.h"
#include "usage.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "runs.h"
#include "zgc_build_id.h"

#ifndef ZGC_RUNTIME_LIB
#define ZGC_RUNTIME_LIB "libzgrt.a"
#endif
#ifndef ZGC_PLANNER_LIB
#define ZGC_PLANNER_LIB "libzgplanner.so"
#endif

static bool notes(void)
{
    const char *v = getenv("ZGC_CACHE_NOTES");
    return v && *v && strcmp(v, "0");
}

char *zca_dir(void)
{
    char *d;
    const char *v = getenv("ZGC_CACHE");
    if (v && *v) {
        d = strdup(v);
    } else if ((v = getenv("XDG_CACHE_HOME")) && *v == '/') {
        if (asprintf(&d, "%s/zgc", v) < 0) d = NULL;
    } else {
        const char *home = getenv("HOME");
        if (asprintf(&d, "%s/.cache/zgc", home && *home ? home : "/tmp") < 0) d = NULL;
    }
    if (!d) zu_oom();
    return d;
}

/* mkdir -p */
static int make_dirs(const char *path)
{
    char *p = strdup(path);
    if (!p) zu_oom();
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s) continue;
        char c = *s;
        *s = 0;
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            free(p);
            return -1;
        }
        *s = c;
        if (!c) break;
    }
    free(p);
    return 0;
}

/* ---- hashes ------------------------------------------------------------------ */

static void hex(const unsigned char *md, unsigned n, char *out)
{
    for (unsigned i = 0; i < n; i++) snprintf(out + 2 * i, 3, "%02x", md[i]);
}

/* A new SHA-256 context.  OpenSSL is told not to read its configuration
 * file (openssl.cnf: providers, engines), which a lookup does not need
 * and which took about a quarter of a cached `zgc run`. */
static EVP_MD_CTX *sha256_new(void)
{
    static bool inited;
    if (!inited) {
        inited = true;
        OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, NULL);
    }
    EVP_MD_CTX *x = EVP_MD_CTX_new();
    if (!x || !EVP_DigestInit_ex(x, EVP_sha256(), NULL)) zu_oom();
    return x;
}

/* SHA-256 of a file as 64 hex digits; -1 when it cannot be read. */
static int hash_file(const char *path, char out[65])
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    EVP_MD_CTX *x = sha256_new();
    static char buf[1 << 16];
    int rc = 0;
    for (;;) {
        ssize_t k = read(fd, buf, sizeof buf);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) rc = -1;
        if (k <= 0) break;
        EVP_DigestUpdate(x, buf, (size_t)k);
    }
    close(fd);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    EVP_DigestFinal_ex(x, md, &n);
    EVP_MD_CTX_free(x);
    if (rc == 0) hex(md, n, out);
    return rc;
}

/* Adds "NAME LEN\n" and the bytes of a file to x; -1 if unreadable. */
static int hash_part(EVP_MD_CTX *x, const char *name, const char *path)
{
    size_t len;
    const char *why;
    char *data = zu_read_file(path, &len, &why);
    if (!data) return -1;
    char head[256];
    int n = snprintf(head, sizeof head, "%s %zu\n", name, len);
    EVP_DigestUpdate(x, head, (size_t)n);
    EVP_DigestUpdate(x, data, len);
    free(data);
    return 0;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* ---- entries ------------------------------------------------------------------- */

typedef struct Lookup {
    ZCompilation *c;
    const ZcaRequest *r;
    const char *cache;
    const char *id; /* -O<level>-RUNTIME-PLANNER-BUILD */
    char *entry;    /* the entry's path, once known */
} Lookup;

/* Whether entry/exe is there and whole: 1 yes, 0 missing; a damaged one
 * (its hash differs from the one recorded) is removed and counts as
 * missing. */
static int has_exe(const char *entry, const char *exe)
{
    char *path, *sum;
    if (asprintf(&path, "%s/%s", entry, exe) < 0 || asprintf(&sum, "%s.sha256", path) < 0) zu_oom();
    int ok = 0;
    char want[80] = "", got[65];
    FILE *f = fopen(sum, "r");
    if (f) {
        if (!fgets(want, sizeof want, f)) want[0] = 0;
        fclose(f);
        want[strcspn(want, "\n")] = 0;
        if (hash_file(path, got) == 0 && strlen(want) == 64 && !strcmp(want, got)) {
            ok = 1;
        } else if (access(path, F_OK) == 0) {
            fprintf(stderr, "zgc: note: the cached build %s is damaged; building it again\n", path);
            unlink(path);
            unlink(sum);
        }
    }
    free(path);
    free(sum);
    return ok;
}

#define UNLINKED_MARK "unlinked"

/* Whether the entry holds every executable r needs (an entry linked
 * without some actions' C functions only for a request that allows it). */
static bool entry_ready(const char *entry, ZCompilation *c, const ZcaRequest *r)
{
    const char *wf = c->wf->name;
    bool ok = true;
    if (!r->allow_unlinked) {
        char *mark;
        if (asprintf(&mark, "%s/%s", entry, UNLINKED_MARK) < 0) zu_oom();
        ok = access(mark, F_OK) != 0;
        free(mark);
        if (!ok) return false;
    }
    if (r->link & ZB_LINK_WHOLE) ok = has_exe(entry, wf) && ok;
    if (r->link & ZB_LINK_LIFELINES)
        for (int i = 0; i < c->prog->lifelines.len; i++) {
            char *exe;
            const ZDecl *l = c->prog->lifelines.items[i];
            if (asprintf(&exe, "%s.%s", wf, l->name) < 0) zu_oom();
            ok = has_exe(entry, exe) && ok;
            free(exe);
        }
    return ok;
}

/* ZBuildOptions.have: the fingerprint and the locations name the entry. */
static bool have(void *user, const char *fingerprint, const char *locations)
{
    Lookup *k = user;
    if (asprintf(&k->entry, "%s/%s-%s%s", k->cache, fingerprint, locations, k->id) < 0) zu_oom();
    bool ok = entry_ready(k->entry, k->c, k->r);
    if (notes())
        fprintf(stderr, "zgc: note: cache: %s by fingerprint\n", ok ? "found" : "not found");
    return ok;
}

/* Writes text to path through a temporary file and a rename. */
static int write_atomic(const char *path, const char *text)
{
    char *tmp;
    if (asprintf(&tmp, "%s.tmp-%ld", path, (long)getpid()) < 0) zu_oom();
    FILE *f = fopen(tmp, "w");
    int ok = f && fputs(text, f) >= 0;
    if (f && fclose(f) != 0) ok = 0;
    if (ok && rename(tmp, path) != 0) ok = 0;
    if (!ok) unlink(tmp);
    free(tmp);
    return ok ? 0 : -1;
}

/* The runtime library's SHA-256 (the cache's identity of the runtime),
 * remembered in CACHE/runtime.id beside the library's path and identity
 * (device, inode, size, modification and change times): hashing its 3 MB
 * on every lookup was about a third of the CPU of a cached `zgc run`.  A
 * library that is rewritten changes its change time, so the hash is made
 * again.  The memo is only a shortcut: when it cannot be written, the
 * next lookup hashes again.  -1 when the library cannot be read. */
static int runtime_id(const char *cache, const char *lib, char out[65])
{
    struct stat st;
    if (stat(lib, &st) != 0) return -1;
    char *key, *memo;
    if (asprintf(&key, "zgc runtime id 1\n%s\n%ju %ju %jd %lld.%09ld %lld.%09ld\n", lib,
                 (uintmax_t)st.st_dev, (uintmax_t)st.st_ino, (intmax_t)st.st_size,
                 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, (long long)st.st_ctim.tv_sec,
                 st.st_ctim.tv_nsec) < 0 ||
        asprintf(&memo, "%s/runtime.id", cache) < 0)
        zu_oom();
    size_t len = 0, klen = strlen(key);
    const char *why = NULL;
    char *text = zu_read_file(memo, &len, &why);
    int rc = 1; /* 1: not remembered */
    if (text && len == klen + 65 && !memcmp(text, key, klen) && text[len - 1] == '\n') {
        memcpy(out, text + klen, 64);
        out[64] = 0;
        rc = strspn(out, "0123456789abcdef") == 64 ? 0 : 1;
    }
    free(text);
    if (rc == 1) {
        rc = hash_file(lib, out);
        char *line;
        if (rc == 0) {
            if (asprintf(&line, "%s%s\n", key, out) < 0) zu_oom();
            (void)write_atomic(memo, line); /* a shortcut only (above) */
            free(line);
        }
    }
    free(key);
    free(memo);
    return rc;
}

/* Moves the executables of a fresh build (in tmp) into the entry, each
 * after its hash. */
static int move_in(const char *tmp, const char *entry)
{
    if (mkdir(entry, 0777) != 0 && errno != EEXIST) return -1;
    DIR *d = opendir(tmp);
    if (!d) return -1;
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char *from, *to, *sum, h[65];
        if (asprintf(&from, "%s/%s", tmp, e->d_name) < 0 ||
            asprintf(&to, "%s/%s", entry, e->d_name) < 0 || asprintf(&sum, "%s.sha256", to) < 0)
            zu_oom();
        char *line = NULL;
        if (hash_file(from, h) != 0 || asprintf(&line, "%s\n", h) < 0) rc = -1;
        /* the file first, its hash after: a reader sees either no hash
         * (not there yet) or the hash of a whole file */
        if (rc == 0 && rename(from, to) != 0) rc = -1;
        if (rc == 0 && write_atomic(sum, line) != 0) rc = -1;
        free(line);
        free(from);
        free(to);
        free(sum);
    }
    closedir(d);
    return rc;
}

/* The number of entries the cache keeps: $ZGC_CACHE_ENTRIES, else 64
 * (an entry holds one program's executables: 1 to 45 MB here). */
static long max_entries(void)
{
    const char *v = getenv("ZGC_CACHE_ENTRIES");
    char *end;
    long n = v && *v ? strtol(v, &end, 10) : 64;
    return v && *v && (*end || n < 1) ? 64 : n;
}

static bool is_entry(const char *name)
{
    const char *hex = "0123456789abcdef";
    return strspn(name, hex) == 64 && name[64] == '-' && strspn(name + 65, hex) == 16 &&
           !strncmp(name + 81, "-O", 2);
}

typedef struct Aged {
    char *path;
    struct timespec used;
} Aged;

static int by_use(const void *x, const void *y)
{
    const Aged *a = x, *b = y;
    if (a->used.tv_sec != b->used.tv_sec) return a->used.tv_sec < b->used.tv_sec ? -1 : 1;
    return a->used.tv_nsec < b->used.tv_nsec ? -1 : a->used.tv_nsec > b->used.tv_nsec;
}

/* Removes the least recently used entries (an entry's modification time
 * is its last use) beyond max_entries(), never `keep`. */
static void bound(const char *cache, const char *keep)
{
    DIR *d = opendir(cache);
    if (!d) return;
    Aged *es = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!is_entry(e->d_name)) continue;
        char *p;
        struct stat st;
        if (asprintf(&p, "%s/%s", cache, e->d_name) < 0) zu_oom();
        if (stat(p, &st) != 0 || !strcmp(p, keep)) {
            free(p);
            continue;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            es = realloc(es, cap * sizeof *es);
            if (!es) zu_oom();
        }
        es[n++] = (Aged){p, st.st_mtim};
    }
    closedir(d);
    long max = max_entries() - 1; /* keep is one */
    if ((long)n > max) {
        qsort(es, n, sizeof *es, by_use);
        for (size_t i = 0; i < n - (size_t)max; i++) {
            if (notes()) fprintf(stderr, "zgc: note: cache: removed %s\n", es[i].path);
            zo_remove_tree(es[i].path);
        }
    }
    for (size_t i = 0; i < n; i++) free(es[i].path);
    free(es);
}

int zca_get(ZCompilation *c, const ZcaRequest *r, char **dir)
{
    *dir = NULL;
    char *cache = zca_dir();
    char *src_dir;
    if (asprintf(&src_dir, "%s/src", cache) < 0) zu_oom();
    if (make_dirs(src_dir) != 0) {
        fprintf(stderr, "zgc: error: cannot create the build cache %s: %s\n", cache,
                strerror(errno));
        free(src_dir);
        free(cache);
        return 1;
    }
    /* the identities: runtime library and compiler */
    const char *lib = getenv("ZGC_RUNTIME_LIB");
    if (!lib || !*lib) lib = ZGC_RUNTIME_LIB;
    char rt[65];
    if (runtime_id(cache, lib, rt) != 0) {
        fprintf(stderr, "zgc: error: cannot read the runtime library %s: %s\n", lib,
                strerror(errno));
        free(src_dir);
        free(cache);
        return 1;
    }
    rt[16] = 0;
    /* where the planner library is: executables of programs with a planner
     * load it from there (their rpath), so a build made for another place
     * must not be reused */
    const char *pl = getenv("ZGC_PLANNER_LIB");
    if (!pl || !*pl) pl = ZGC_PLANNER_LIB;
    uint64_t plh = 1469598103934665603ull; /* FNV-1a */
    for (const char *q = pl; *q; q++) plh = (plh ^ (unsigned char)*q) * 1099511628211ull;
    char id[160];
    snprintf(id, sizeof id, "-O%d-%s-%08x-%s", r->opt_level, rt, (unsigned)(plh >> 32),
             ZGC_BUILD_ID);

    /* the source key: the text of the program, its imports and its C files */
    EVP_MD_CTX *x = sha256_new();
    char head[256];
    int hn = snprintf(head, sizeof head, "zgc cache 1\n%s\nworkflow %s\n", id, c->wf->name);
    EVP_DigestUpdate(x, head, (size_t)hn);
    /* the path as given: the executables' messages name it (and their
       source excerpts read it), so another path is another build */
    hn = snprintf(head, sizeof head, "path %zu\n", strlen(r->source));
    EVP_DigestUpdate(x, head, (size_t)hn);
    EVP_DigestUpdate(x, r->source, strlen(r->source));
    int bad = hash_part(x, "source", r->source);
    /* the imported files, as this compilation read them: a changed
       import must miss, though the importing file is the same */
    for (int i = 1; i < c->files.len; i++) {
        const ZSource *f = ZU_VEC_AT(c->files, i);
        int n = snprintf(head, sizeof head, "import %zu %zu\n", strlen(f->path), f->len);
        EVP_DigestUpdate(x, head, (size_t)n);
        EVP_DigestUpdate(x, f->path, strlen(f->path));
        EVP_DigestUpdate(x, f->text, f->len);
    }
    for (int i = 0; !bad && i < r->n_c_files; i++)
        bad = hash_part(x, base_name(r->c_files[i]), r->c_files[i]);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdn = 0;
    EVP_DigestFinal_ex(x, md, &mdn);
    EVP_MD_CTX_free(x);
    char key[65];
    hex(md, mdn, key);
    char *key_path = NULL;
    if (asprintf(&key_path, "%s/%s", src_dir, key) < 0) zu_oom();
    free(src_dir);

    Lookup k = {.c = c, .r = r, .cache = cache, .id = id};
    int rc = 0;
    if (!bad) {
        /* src/KEY: the entry's name */
        char name[160] = "";
        FILE *f = fopen(key_path, "r");
        if (f) {
            if (!fgets(name, sizeof name, f)) name[0] = 0;
            fclose(f);
            name[strcspn(name, "\n")] = 0;
        }
        if (strlen(name) == 64 + 17 + strlen(id) && !strchr(name, '/')) {
            if (asprintf(&k.entry, "%s/%s", cache, name) < 0) zu_oom();
            if (entry_ready(k.entry, c, r)) {
                if (notes()) fprintf(stderr, "zgc: note: cache: found by source\n");
                utimensat(AT_FDCWD, k.entry, NULL, 0); /* recently used */
                *dir = k.entry;
                free(key_path);
                free(cache);
                return 0;
            }
            free(k.entry);
            k.entry = NULL;
        }
    }
    char err[1024];
    const ZbModule *be = zb_load(err, sizeof err);
    if (!be) {
        fprintf(stderr, "zgc: error: %s\n", err);
        free(key_path);
        free(cache);
        return 1;
    }
    char *tmp;
    if (asprintf(&tmp, "%s/tmp-XXXXXX", cache) < 0) zu_oom();
    if (!mkdtemp(tmp)) {
        fprintf(stderr, "zgc: error: cannot create a directory in the build cache %s: %s\n", cache,
                strerror(errno));
        rc = 1;
    }
    bool cached = false;
    int unlinked = 0;
    ZBuildOptions b = {.out_dir = tmp,
                       .unlinked = &unlinked,
                       .c_files = r->c_files,
                       .n_c_files = r->n_c_files,
                       .opt_level = r->opt_level,
                       .link = r->link,
                       .jobs = r->jobs,
                       .allow_unlinked = r->allow_unlinked,
                       .have = have,
                       .user = &k,
                       .cached = &cached};
    if (rc == 0) rc = be->build(c, &b);
    if (rc == 0 && !cached) {
        if (notes()) fprintf(stderr, "zgc: note: cache: compiled\n");
        if (unlinked > 0) { /* found only by requests that allow it */
            char *mark;
            if (asprintf(&mark, "%s/%s", tmp, UNLINKED_MARK) < 0) zu_oom();
            FILE *f = fopen(mark, "w");
            if (!f || fclose(f) != 0) {
                fprintf(stderr, "zgc: error: cannot write %s: %s\n", mark, strerror(errno));
                rc = 1;
            }
            free(mark);
        }
        char *copy;
        if (asprintf(&copy, "%s/source.zg", tmp) < 0) zu_oom();
        size_t len;
        const char *why;
        char *text = zu_read_file(r->source, &len, &why);
        FILE *f = text ? fopen(copy, "w") : NULL;
        if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0)
            fprintf(stderr, "zgc: warning: cannot keep the source in the build cache\n");
        free(text);
        free(copy);
        if (rc == 0 && move_in(tmp, k.entry) != 0) {
            fprintf(stderr, "zgc: error: cannot keep the build in the cache %s: %s\n", k.entry,
                    strerror(errno));
            rc = 1;
        }
    }
    if (rc == 0 && !bad) write_atomic(key_path, base_name(k.entry)); /* best effort */
    if (rc == 0) utimensat(AT_FDCWD, k.entry, NULL, 0);
    if (rc == 0 && !cached) bound(cache, k.entry);
    zo_remove_tree(tmp);
    free(tmp);
    free(key_path);
    free(cache);
    if (rc == 0)
        *dir = k.entry;
    else
        free(k.entry);
    return rc;
}

/* ---- zgc cache ----------------------------------------------------------------- */

static const char usage_cache[] =
    "usage: zgc cache dir | clean\n"
    "\n"
    "The cache of builds of `zgc run` (and durable runs): $ZGC_CACHE, else\n"
    "$XDG_CACHE_HOME/zgc, else ~/.cache/zgc. It keeps the 64 builds used last\n"
    "($ZGC_CACHE_ENTRIES).\n"
    "\n"
    "  dir     print the cache directory\n"
    "  clean   remove every cached build (a durable run whose build is gone\n"
    "          is resumed with `zgc run FILE.zg --resume RUN`, which builds again)\n"
    "  -h, --help  show this help\n"
    "\n"
    "exit status: 0 success, 1 the cache cannot be cleaned, 2 bad usage.\n";

int zca_main(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        fputs(usage_cache, stdout);
        return 0;
    }
    if (argc != 2 || (strcmp(argv[1], "dir") && strcmp(argv[1], "clean"))) {
        if (argc < 2) return zus_error(usage_cache, "%s", "cache needs dir or clean");
        if (argc > 2) return zus_error(usage_cache, "unexpected argument `%s`", argv[2]);
        return zus_error(usage_cache, "unknown cache command `%s`", argv[1]);
    }
    char *cache = zca_dir();
    if (!strcmp(argv[1], "dir")) {
        printf("%s\n", cache);
        free(cache);
        return 0;
    }
    int removed = 0, rc = 0;
    DIR *d = opendir(cache);
    if (!d && errno != ENOENT) {
        fprintf(stderr, "zgc: error: cannot read the build cache %s: %s\n", cache, strerror(errno));
        rc = 1;
    }
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char *p;
        if (asprintf(&p, "%s/%s", cache, e->d_name) < 0) zu_oom();
        bool entry = is_entry(e->d_name);
        zo_remove_tree(p);
        if (access(p, F_OK) == 0) rc = 1;
        removed += entry;
        free(p);
    }
    if (d) closedir(d);
    printf("removed %d cached build%s from %s\n", removed, removed == 1 ? "" : "s", cache);
    free(cache);
    return rc;
}
