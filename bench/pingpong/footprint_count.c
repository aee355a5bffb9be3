/* footprint_count.c — the cache lines one iteration of a ping-pong process
 * touches, from two traces of valgrind's lackey (--trace-mem=yes) of the
 * same process: one of N iterations and one of 2N.
 *
 * An iteration's accesses are (accesses of the 2N run - those of the N
 * run) / N; the 2N run's accesses after the first T_N (its second half,
 * the last tenth left out: the run's end) are cut into windows of one
 * iteration's accesses each, and in each window the distinct 64-byte
 * lines of code (instruction fetches) and of data (loads, stores,
 * modifies) are counted.  Prints the medians over the windows:
 *
 *   accesses ACCESSES code_lines CODE data_lines DATA
 *
 * usage: footprint_count TRACE_N TRACE_2N N */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SET_BITS 16 /* open addressing, far more slots than a window's lines */
#define SET_SIZE (1u << SET_BITS)
#define WINDOWS_MAX 400

typedef struct set {
    uint64_t key[SET_SIZE];
    uint32_t stamp[SET_SIZE]; /* a slot is used when its stamp is the window's */
    uint32_t now;
    unsigned n;
} set;

static void set_clear(set *s)
{
    s->now++;
    s->n = 0;
}

static void set_add(set *s, uint64_t line)
{
    if (s->n >= SET_SIZE / 2) {
        fprintf(stderr, "footprint_count: more than %u lines in one iteration\n", SET_SIZE / 2);
        exit(1);
    }
    uint64_t h = line * 0x9E3779B97F4A7C15ull;
    for (uint32_t i = (uint32_t)(h >> (64 - SET_BITS));; i = (i + 1) & (SET_SIZE - 1)) {
        if (s->stamp[i] != s->now) {
            s->stamp[i] = s->now;
            s->key[i] = line;
            s->n++;
            return;
        }
        if (s->key[i] == line) return;
    }
}

static void die(const char *what, const char *path)
{
    fprintf(stderr, "footprint_count: %s: %s\n", path, what);
    exit(1);
}

/* One access of a lackey line: 1 code, 2 data, 0 not an access. */
static int parse(const char *ln, uint64_t *addr, uint64_t *size)
{
    int kind;
    if (ln[0] == 'I' && ln[1] == ' ')
        kind = 1;
    else if (ln[0] == ' ' && (ln[1] == 'L' || ln[1] == 'S' || ln[1] == 'M') && ln[2] == ' ')
        kind = 2;
    else
        return 0;
    char *end;
    errno = 0;
    *addr = strtoull(ln + 3, &end, 16);
    if (errno || *end != ',') return 0;
    *size = strtoull(end + 1, NULL, 10);
    if (*size == 0) *size = 1;
    return kind;
}

static FILE *open_trace(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) die(strerror(errno), path);
    return f;
}

static uint64_t count_accesses(const char *path)
{
    FILE *f = open_trace(path);
    char ln[256];
    uint64_t n = 0, a, sz;
    while (fgets(ln, sizeof ln, f))
        if (parse(ln, &a, &sz)) n++;
    if (ferror(f)) die("cannot read", path);
    fclose(f);
    return n;
}

static int cmp_u(const void *x, const void *y)
{
    unsigned a = *(const unsigned *)x, b = *(const unsigned *)y;
    return (a > b) - (a < b);
}

static unsigned median(unsigned *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_u);
    return v[(n - 1) / 2];
}

int main(int argc, char **argv)
{
    if (argc != 4 || atol(argv[3]) < 1) {
        fprintf(stderr, "usage: footprint_count TRACE_N TRACE_2N N\n");
        return 2;
    }
    long n = atol(argv[3]);
    uint64_t t1 = count_accesses(argv[1]), t2 = count_accesses(argv[2]);
    if (t2 <= t1) die("the 2N run made no more accesses than the N run", argv[2]);
    uint64_t per = (t2 - t1) / (uint64_t)n;
    if (per == 0) die("no accesses per iteration", argv[2]);
    /* windows spread evenly over [t1, t1 + 0.9 (t2 - t1)) */
    uint64_t span = (t2 - t1) / 10 * 9;
    uint64_t nwin = span / per;
    uint64_t step = nwin > WINDOWS_MAX ? nwin / WINDOWS_MAX : 1;
    static set code, data;
    static unsigned cw[WINDOWS_MAX + 1], dw[WINDOWS_MAX + 1];
    int nw = 0;
    FILE *f = open_trace(argv[2]);
    char ln[256];
    uint64_t i = 0, a, sz;
    while (fgets(ln, sizeof ln, f) && nw <= WINDOWS_MAX) {
        int kind = parse(ln, &a, &sz);
        if (!kind) continue;
        uint64_t at = i++;
        if (at < t1) continue;
        uint64_t w = (at - t1) / per, off = (at - t1) % per;
        if (w >= nwin) break;
        if (w % step) continue;
        if (off == 0) {
            set_clear(&code);
            set_clear(&data);
        }
        set *s = kind == 1 ? &code : &data;
        for (uint64_t l = a >> 6; l <= (a + sz - 1) >> 6; l++) set_add(s, l);
        if (off == per - 1) {
            cw[nw] = code.n;
            dw[nw] = data.n;
            nw++;
        }
    }
    if (ferror(f)) die("cannot read", argv[2]);
    fclose(f);
    if (nw == 0) die("no whole window", argv[2]);
    printf("accesses %llu code_lines %u data_lines %u\n", (unsigned long long)per, median(cw, nw),
           median(dw, nw));
    return 0;
}
