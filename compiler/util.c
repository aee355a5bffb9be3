/* util.c — arena, vectors, integer maps, string buffers, interning. */
#include "zgc.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena -------------------------------------------------------------- */

typedef struct ZChunk {
    struct ZChunk *next;
    size_t used, size;
    _Alignas(16) unsigned char data[];
} ZChunk;

#define INTERN_INIT 1024

typedef struct ZInternEntry {
    const char *s;
    size_t n;
    uint64_t h;
} ZInternEntry;

struct ZArena {
    ZChunk *chunks;
    ZInternEntry *itab; /* open addressing, malloc-backed */
    size_t icap, icount;
};

/* ---- heap scratch space ---------------------------------------------------- */

void zu_oom(void)
{
    fputs("zgc: error: out of memory\n", stderr);
    exit(1);
}

void *zu_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) zu_oom();
    return p;
}

void *zu_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) zu_oom();
    return p;
}

void *zu_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) zu_oom();
    return q;
}

ZArena *zu_arena_new(void)
{
    ZArena *a = zu_xmalloc(sizeof *a);
    memset(a, 0, sizeof *a);
    return a;
}

void zu_arena_free(ZArena *a)
{
    if (!a) return;
    for (ZChunk *c = a->chunks, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    free(a->itab);
    free(a);
}

void *zu_alloc(ZArena *a, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    ZChunk *c = a->chunks;
    if (!c || c->size - c->used < size) {
        size_t want = size > 60000 ? size : 60000;
        c = zu_xmalloc(sizeof *c + want);
        c->size = want;
        c->used = 0;
        c->next = a->chunks;
        a->chunks = c;
    }
    void *p = c->data + c->used;
    c->used += size;
    memset(p, 0, size);
    return p;
}

char *zu_strndup(ZArena *a, const char *s, size_t n)
{
    char *p = zu_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *zu_strdup(ZArena *a, const char *s) { return zu_strndup(a, s, strlen(s)); }

char *zu_fmt(ZArena *a, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = zu_alloc(a, (size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
}

static void intern_grow(ZArena *a)
{
    size_t ncap = a->icap ? a->icap * 2 : INTERN_INIT;
    ZInternEntry *nt = zu_xmalloc(ncap * sizeof *nt);
    memset(nt, 0, ncap * sizeof *nt);
    for (size_t i = 0; i < a->icap; i++) {
        ZInternEntry e = a->itab[i];
        if (!e.s) continue;
        size_t j = e.h & (ncap - 1);
        while (nt[j].s) j = (j + 1) & (ncap - 1);
        nt[j] = e;
    }
    free(a->itab);
    a->itab = nt;
    a->icap = ncap;
}

const char *zu_intern(ZArena *a, const char *s, size_t n)
{
    if ((a->icount + 1) * 2 > a->icap) intern_grow(a);
    uint64_t h = zu_hash(s, n);
    size_t j = h & (a->icap - 1);
    while (a->itab[j].s) {
        ZInternEntry *e = &a->itab[j];
        if (e->h == h && e->n == n && memcmp(e->s, s, n) == 0) return e->s;
        j = (j + 1) & (a->icap - 1);
    }
    char *copy = zu_strndup(a, s, n);
    a->itab[j] = (ZInternEntry){copy, n, h};
    a->icount++;
    return copy;
}

void zu_ice(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "zgc: internal compiler error at %s:%d: ", file, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

/* ---- vectors ------------------------------------------------------------ */

void zu_vec_push(ZArena *a, ZVec *v, void *item)
{
    if (v->len == v->cap) {
        int ncap = v->cap ? v->cap * 2 : 4;
        void **n = zu_alloc(a, (size_t)ncap * sizeof *n);
        if (v->len) memcpy(n, v->items, (size_t)v->len * sizeof *n);
        v->items = n;
        v->cap = ncap;
    }
    v->items[v->len++] = item;
}

/* ---- integer maps ---------------------------------------------------------- */

/* splitmix64's finaliser: keys are small consecutive integers (bit numbers,
 * declaration indices), which a linear probe needs spread out. */
static size_t imap_hash(uint64_t k)
{
    k ^= k >> 30;
    k *= 0xbf58476d1ce4e5b9ull;
    k ^= k >> 27;
    k *= 0x94d049bb133111ebull;
    k ^= k >> 31;
    return (size_t)k;
}

static void imap_grow(ZIMap *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 16;
    uint64_t *nk = zu_xcalloc(ncap, sizeof *nk);
    uintptr_t *nv = zu_xcalloc(ncap, sizeof *nv);
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i]) continue;
        size_t j = imap_hash(m->keys[i]) & (ncap - 1);
        while (nk[j]) j = (j + 1) & (ncap - 1);
        nk[j] = m->keys[i];
        nv[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = nk;
    m->vals = nv;
    m->cap = ncap;
}

uintptr_t *zu_imap_get(const ZIMap *m, uint64_t key)
{
    if (!m->cap) return NULL;
    uint64_t k = key + 1;
    for (size_t j = imap_hash(k) & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1))
        if (m->keys[j] == k) return &m->vals[j];
    return NULL;
}

uintptr_t *zu_imap_put(ZIMap *m, uint64_t key, bool *added)
{
    if ((m->len + 1) * 2 > m->cap) imap_grow(m);
    uint64_t k = key + 1;
    size_t j = imap_hash(k) & (m->cap - 1);
    for (; m->keys[j]; j = (j + 1) & (m->cap - 1))
        if (m->keys[j] == k) {
            if (added) *added = false;
            return &m->vals[j];
        }
    m->keys[j] = k;
    m->vals[j] = 0;
    m->len++;
    if (added) *added = true;
    return &m->vals[j];
}

void zu_imap_free(ZIMap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* ---- string buffers ------------------------------------------------------ */

static void buf_reserve(ZBuf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap) return;
    size_t ncap = b->cap ? b->cap : 64;
    while (ncap < b->len + extra + 1) ncap *= 2;
    b->data = zu_xrealloc(b->data, ncap);
    b->cap = ncap;
}

void zu_buf_putc(ZBuf *b, char c)
{
    buf_reserve(b, 1);
    b->data[b->len++] = c;
    b->data[b->len] = 0;
}

void zu_buf_puts(ZBuf *b, const char *s)
{
    size_t n = strlen(s);
    buf_reserve(b, n);
    memcpy(b->data + b->len, s, n + 1);
    b->len += n;
}

void zu_buf_printf(ZBuf *b, const char *fmt, ...)
{
    /* one pass when the text fits in the free space, two otherwise */
    buf_reserve(b, 64);
    va_list ap;
    va_start(ap, fmt);
    size_t room = b->cap - b->len;
    int n = vsnprintf(b->data + b->len, room, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= room) {
        buf_reserve(b, (size_t)n);
        va_start(ap, fmt);
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    b->len += (size_t)n;
}

void zu_buf_free(ZBuf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* ---- files ----------------------------------------------------------------- */

char *zu_read_file(const char *path, size_t *len, const char **err)
{
    /* only regular files: a FIFO would block, a device (/dev/zero) never
     * ends; O_NONBLOCK keeps open() itself from waiting for a FIFO's
     * writer */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        *err = strerror(errno);
        return NULL;
    }
    struct stat st;
    *err = fstat(fd, &st) != 0    ? strerror(errno)
           : S_ISDIR(st.st_mode)  ? strerror(EISDIR)
           : !S_ISREG(st.st_mode) ? "not a regular file"
                                  : NULL;
    if (*err) {
        close(fd);
        return NULL;
    }
    size_t cap = (size_t)st.st_size + 4096, n = 0;
    char *data = zu_xmalloc(cap);
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap *= 2;
            data = zu_xrealloc(data, cap);
        }
        ssize_t r = read(fd, data + n, cap - n - 1);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            *err = strerror(errno);
            free(data);
            close(fd);
            return NULL;
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    close(fd);
    data[n] = 0;
    *len = n;
    return data;
}
