/* bench_stores — operation throughput and latency of a store at one level.
 *
 *   bench_stores --level L [--sqlite FILE] --lifelines N --cells C
 *                [--seconds S] [--gen-us G] [--records FILE]
 *
 * N lifelines (threads on one in-memory store, or processes on one SQLite
 * file, each with its own handle) run operations for S seconds: read one
 * of C int cells chosen at random, plan tool "t", issue one effect and
 * complete it, write the cell + 1, commit and end (zst_commit_end); on
 * ZST_RETRY the operation is run again.  Prints one JSON object: committed operations per second,
 * attempts per committed operation, and the latency of a committed
 * operation (first begin to its end, retries included) at p50 and p99, in
 * microseconds.  Between the read and the write the lifeline sleeps G µs
 * (default 0), the generation: with G = 0 the numbers are the store's own
 * cost; with G > 0 operations overlap, and at L1 and up conflicting ones
 * are re-run. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "zst.h"

#define MAX_LAT 200000

typedef struct {
    atomic_long ops, attempts, nlat;
    double lat[MAX_LAT]; /* µs, shared by every lifeline */
} shared_t;

static int level, lifelines = 1, cells = 1;
static double seconds = 1.0;
static int gen_us;
static const char *sqlite_path, *records;
static shared_t *sh;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_stores: %s: %s\n", what, zst_error());
    exit(1);
}

static void declare(zst_store *s)
{
    for (int c = 0; c < cells; c++) {
        char name[32];
        snprintf(name, sizeof name, "c%d", c);
        if (zst_cell(s, name, ZGRT_INT, (zgrt_value){.tag = ZGRT_INT}) != ZST_OK) die("zst_cell");
    }
}

static void run_lifeline(zst_store *s, int id, double end)
{
    unsigned seed = (unsigned)id * 7919u + 1;
    char agent[32];
    snprintf(agent, sizeof agent, "l%d", id);
    while (now() < end) {
        char name[32];
        snprintf(name, sizeof name, "c%d", rand_r(&seed) % cells);
        double t0 = now();
        for (;;) {
            atomic_fetch_add(&sh->attempts, 1);
            zst_op *op = zst_begin(s, agent);
            if (!op) die("zst_begin");
            zgrt_value v;
            int k;
            if (zst_read(op, name, &v) != ZST_OK) die("zst_read");
            if (zst_plan(op, "t") != ZST_OK) die("zst_plan");
            if (gen_us > 0) usleep((useconds_t)gen_us);
            if (zst_issue(op, "t", v, &k) != ZST_OK || zst_complete(op, k) != ZST_OK) die("effect");
            if (zst_write(op, name, (zgrt_value){.tag = ZGRT_INT, .u.i = v.u.i + 1}) != ZST_OK)
                die("zst_write");
            int rc = zst_commit_end(op);
            if (rc < 0) die("zst_commit_end");
            if (rc == ZST_OK) break;
        }
        long i = atomic_fetch_add(&sh->ops, 1);
        if (i < MAX_LAT) sh->lat[i] = (now() - t0) * 1e6;
    }
}

static zst_store *open_store(void)
{
    char err[512];
    zst_config c = {.level = level, .sqlite = sqlite_path, .oprecords = records, .busy_ms = 60000};
    zst_store *s = zst_open(&c, err, sizeof err);
    if (!s) {
        fprintf(stderr, "bench_stores: %s\n", err);
        exit(1);
    }
    declare(s);
    return s;
}

typedef struct {
    zst_store *s;
    int id;
    double end;
} arg_t;

static void *thread_main(void *p)
{
    arg_t *a = p;
    run_lifeline(a->s, a->id, a->end);
    return NULL;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "bench_stores: %s needs a value\n", a);
            return 2;
        }
        if (!strcmp(a, "--level"))
            level = atoi(v);
        else if (!strcmp(a, "--sqlite"))
            sqlite_path = v;
        else if (!strcmp(a, "--lifelines"))
            lifelines = atoi(v);
        else if (!strcmp(a, "--cells"))
            cells = atoi(v);
        else if (!strcmp(a, "--seconds"))
            seconds = atof(v);
        else if (!strcmp(a, "--records"))
            records = v;
        else if (!strcmp(a, "--gen-us"))
            gen_us = atoi(v);
        else {
            fprintf(stderr, "bench_stores: unknown option %s\n", a);
            return 2;
        }
        i++;
    }
    if (level < 0 || level > 4 || lifelines < 1 || lifelines > 64 || cells < 1 || seconds <= 0 ||
        gen_us < 0) {
        fprintf(stderr, "bench_stores: bad arguments\n");
        return 2;
    }
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) return 1;
    zst_store *s = open_store();
    if (zst_tool_put(s, "t", NULL) != ZST_OK) die("zst_tool_put");
    double t0 = now(), end = t0 + seconds;
    if (!sqlite_path) {
        pthread_t th[64];
        arg_t args[64];
        for (int i = 0; i < lifelines; i++) {
            args[i] = (arg_t){s, i, end};
            if (pthread_create(&th[i], NULL, thread_main, &args[i]) != 0) return 1;
        }
        for (int i = 0; i < lifelines; i++) pthread_join(th[i], NULL);
    } else {
        zst_close(s);
        s = NULL;
        pid_t pid[64];
        for (int i = 0; i < lifelines; i++) {
            if ((pid[i] = fork()) < 0) return 1;
            if (pid[i] == 0) {
                zst_store *mine = open_store();
                run_lifeline(mine, i, end);
                zst_close(mine);
                _exit(0);
            }
        }
        for (int i = 0; i < lifelines; i++) {
            int st;
            if (waitpid(pid[i], &st, 0) != pid[i] || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                fprintf(stderr, "bench_stores: a lifeline process failed\n");
                return 1;
            }
        }
    }
    double elapsed = now() - t0;
    long ops = atomic_load(&sh->ops), n = ops < MAX_LAT ? ops : MAX_LAT;
    qsort(sh->lat, (size_t)n, sizeof *sh->lat, cmp);
    printf("{\"backend\":\"%s\",\"level\":%d,\"lifelines\":%d,\"cells\":%d,\"gen_us\":%d,"
           "\"seconds\":%.3f,"
           "\"ops\":%ld,\"ops_per_s\":%.0f,\"attempts_per_op\":%.3f,\"p50_us\":%.1f,\"p99_us\":%."
           "1f}\n",
           sqlite_path ? "sqlite" : "memory", level, lifelines, cells, gen_us, elapsed, ops,
           ops / elapsed, ops ? (double)atomic_load(&sh->attempts) / (double)ops : 0.0,
           n ? sh->lat[n / 2] : 0.0, n ? sh->lat[(size_t)((double)n * 0.99)] : 0.0);
    if (s) zst_close(s);
    return ops > 0 ? 0 : 1;
}
