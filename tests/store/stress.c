/* store_stress — threads on one in-memory store at every level: reads,
 * writes, effects completed by other threads, retractions (cascading
 * from L2 up) and registry changes, for the thread sanitizer (Criterion
 * cannot start under it).  Exits 0 when every call returned what the
 * protocol allows, 1 with a message otherwise.
 *
 *   store_stress [OPS_PER_THREAD]   (default 300) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "zst.h"

static int ops_per_thread = 300;

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "store_stress: %s: %s\n", what, zst_error());
        exit(1);
    }
}

typedef struct {
    zst_op *op;
    int ticket;
} completion;

static void *complete(void *p)
{
    completion *c = p;
    usleep((useconds_t)(rand() % 50));
    check(zst_complete(c->op, c->ticket) == ZST_OK, "zst_complete");
    return NULL;
}

typedef struct {
    zst_store *s;
    unsigned seed;
} arg_t;

static void *work(void *p)
{
    arg_t *a = p;
    for (int i = 0; i < ops_per_thread; i++) {
        zst_op *op = zst_begin(a->s, "w");
        check(op != NULL, "zst_begin");
        zgrt_value v;
        const char *cell = rand_r(&a->seed) % 2 ? "x" : "y";
        check(zst_read(op, cell, &v) == ZST_OK, "zst_read");
        check(zst_plan(op, "t") == ZST_OK, "zst_plan");
        completion c[2];
        pthread_t th[2];
        for (int k = 0; k < 2; k++) {
            c[k].op = op;
            check(zst_issue(op, "t", v, &c[k].ticket) == ZST_OK, "zst_issue");
            check(pthread_create(&th[k], NULL, complete, &c[k]) == 0, "pthread_create");
        }
        for (int k = 0; k < 2; k++) pthread_join(th[k], NULL);
        check(zst_write(op, cell, (zgrt_value){.tag = ZGRT_INT, .u.i = v.u.i + 1}) == ZST_OK,
              "zst_write");
        if (rand_r(&a->seed) % 8 == 0)
            check(zst_tool_put(a->s, "t", NULL) == ZST_OK, "zst_tool_put");
        int rc = zst_commit(op);
        check(rc == ZST_OK || rc == ZST_RETRY, "zst_commit");
        if (rc == ZST_OK && rand_r(&a->seed) % 4 == 0)
            check(zst_retract(op) == ZST_OK, "zst_retract");
        rc = zst_end(op);
        check(rc == ZST_OK || rc == ZST_RETRACTED, "zst_end");
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1) ops_per_thread = atoi(argv[1]);
    for (int level = 0; level <= 4; level++) {
        char err[512];
        zst_config cfg = {.level = level, .oprecords = "/dev/null"};
        zst_store *s = zst_open(&cfg, err, sizeof err);
        if (!s) {
            fprintf(stderr, "store_stress: %s\n", err);
            return 1;
        }
        check(zst_cell(s, "x", ZGRT_INT, (zgrt_value){.tag = ZGRT_INT}) == ZST_OK, "zst_cell");
        check(zst_cell(s, "y", ZGRT_INT, (zgrt_value){.tag = ZGRT_INT}) == ZST_OK, "zst_cell");
        check(zst_tool_put(s, "t", NULL) == ZST_OK, "zst_tool_put");
        pthread_t th[4];
        arg_t a[4];
        for (int i = 0; i < 4; i++) {
            a[i] = (arg_t){s, (unsigned)(level * 10 + i)};
            check(pthread_create(&th[i], NULL, work, &a[i]) == 0, "pthread_create");
        }
        for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
        zst_close(s);
    }
    printf("store_stress: 5 levels, 4 threads, %d operations each: ok\n", ops_per_thread);
    return 0;
}
