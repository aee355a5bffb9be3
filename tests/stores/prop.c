/* prop.c — the race analysis against real runs: what it calls ordered is
 * ordered in every explored schedule.
 *
 * For each case: a random workflow (tests/gen/zggen.c, with parallel
 * regions, ifs and loops), into which K markers are put at random places,
 * each on a random lifeline.  Two programs are printed from it:
 *
 *   store form  every marker is `L: atomic S { svI = read c; write c = svI; }`
 *               on one store S: every two markers touch c, so the analysis
 *               (compiler/races.c) reports every pair it cannot order;
 *   run form    every marker is `L: mkI = mkI + 1;`, a local computation
 *               with the same place and lifeline (the same participation,
 *               so the same messages and decisions), whose events the
 *               trace records with their vector clocks.
 *
 * The run form runs with `zgc run --schedule SEED --trace` for several
 * seeds (random delays of scheduling and delivery); for every pair the
 * analysis reports as ordered, every instance of one marker must be
 * causally before or after every instance of the other (their vector
 * clocks comparable).  A pair it reports as racing is counted when a run
 * shows it concurrent (how precise it is; not a failure).
 *
 *   store_prop --zgc ZGC [--cases N] [--seeds M] [--seed S] [--markers K]
 *
 * Exit 0 when every ordered pair held; 1 with the program, the seed and the
 * pair otherwise, or when a program fails to check or to run. */
#define _GNU_SOURCE
#include "zgc.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "grammar.h"
#include "zggen.h"

#define MAXK 8

typedef struct Marker {
    ZStmt *s; /* the inserted statement, switched between the two forms */
    int life;
} Marker;

static uint64_t rng;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void lists(ZVec *body, ZVec *out, ZArena *a)
{
    zu_vec_push(a, out, body);
    for (int i = 0; i < body->len; i++) {
        ZStmt *s = body->items[i];
        if (s->kind == S_IF || s->kind == S_WHILE) {
            lists(&s->body, out, a);
            lists(&s->els, out, a);
            if (s->kind == S_IF) s->has_else = true;
        }
        for (int k = 0; k < s->branches.len; k++)
            lists(&((ZBranch *)s->branches.items[k])->body, out, a);
    }
}

static void insert(ZArena *a, ZVec *v, int at, ZStmt *s)
{
    zu_vec_push(a, v, s);
    for (int i = v->len - 1; i > at; i--) v->items[i] = v->items[i - 1];
    v->items[at] = s;
}

static ZExpr *name(ZArena *a, const char *n)
{
    ZExpr *e = za_expr(a, E_NAME, (ZSpan){0});
    e->name = zu_strdup(a, n);
    return e;
}

static ZTarget *target(ZArena *a, const char *n)
{
    ZTarget *t = zu_alloc(a, sizeof *t);
    t->name = zu_strdup(a, n);
    return t;
}

/* The store form of marker i on lifeline `life`. */
static void as_atomic(ZArena *a, ZStmt *s, int i, const char *life)
{
    memset(s, 0, sizeof *s);
    s->kind = S_ATOMIC;
    s->life.name = life;
    s->store_name = "S";
    ZStmt *rd = za_stmt(a, S_READ, (ZSpan){0});
    zu_vec_push(a, &rd->targets, target(a, zu_fmt(a, "sv%d", i)));
    rd->cell = "c";
    ZStmt *wr = za_stmt(a, S_WRITE, (ZSpan){0});
    wr->cell = "c";
    wr->expr = name(a, zu_fmt(a, "sv%d", i));
    zu_vec_push(a, &s->body, rd);
    zu_vec_push(a, &s->body, wr);
}

/* The run form: mkI = mkI + 1. */
static void as_marker(ZArena *a, ZStmt *s, int i, const char *life)
{
    memset(s, 0, sizeof *s);
    s->kind = S_ASSIGN;
    s->life.name = life;
    const char *n = zu_fmt(a, "mk%d", i);
    zu_vec_push(a, &s->targets, target(a, n));
    ZExpr *one = za_expr(a, E_INT, (ZSpan){0});
    one->lit.i = 1;
    ZExpr *e = za_expr(a, E_BINARY, (ZSpan){0});
    e->op = OP_ADD;
    e->a = name(a, n);
    e->b = one;
    s->expr = e;
}

static char *print_wf(const ZProgram *p, const ZDecl *wf)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f) zu_oom();
    za_print_workflow(f, p, wf, false);
    fclose(f);
    return buf;
}

static bool write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return false;
    bool ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

/* vc a ≤ vc b */
static bool le(json_t *a, json_t *b)
{
    const char *k;
    json_t *v;
    json_object_foreach(a, k, v)
    {
        json_t *w = json_object_get(b, k);
        if (!w || json_integer_value(v) > json_integer_value(w)) return false;
    }
    return true;
}

int main(int argc, char **argv)
{
    const char *zgc = NULL;
    int cases = 10, seeds = 4, markers = 4;
    uint64_t seed = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--zgc") && i + 1 < argc)
            zgc = argv[++i];
        else if (!strcmp(argv[i], "--cases") && i + 1 < argc)
            cases = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seeds") && i + 1 < argc)
            seeds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--markers") && i + 1 < argc)
            markers = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: store_prop --zgc ZGC [--cases N] [--seeds M] [--seed S] "
                            "[--markers K]\n");
            return 2;
        }
    }
    if (!zgc || markers < 2 || markers > MAXK || cases < 1 || seeds < 1) {
        fprintf(stderr, "store_prop: --zgc is required; 2 <= --markers <= %d\n", MAXK);
        return 2;
    }
    char dir[] = "/tmp/zgc-store-prop.XXXXXX";
    if (!mkdtemp(dir)) {
        perror("store_prop: mkdtemp");
        return 1;
    }
    char src[256], trace[256], cmd[1024];
    snprintf(src, sizeof src, "%s/case.zg", dir);
    snprintf(trace, sizeof trace, "%s/trace.jsonl", dir);
    long ordered_pairs = 0, racing_pairs = 0, witnessed = 0, checked = 0;
    int failures = 0;
    for (int cs = 0; cs < cases && !failures; cs++) {
        ZGenOptions go = {0};
        go.seed = seed * 1000003 + (uint64_t)cs;
        go.lifelines = 3 + cs % 3;
        go.statements = 14 + cs % 10;
        go.max_depth = 3;
        go.parallel = true;
        ZBuf gen = {0};
        zggen_program(&gen, &go);
        rng = go.seed * 2654435761u + 1;
        /* parse, insert the markers */
        ZCompilation c;
        zc_init(&c, zp_parse, "case.zg", gen.data, gen.len, stderr);
        if (!zc_run(&c, ZC_PARSE)) {
            fprintf(stderr, "store_prop: a generated program does not parse:\n%s", gen.data);
            return 1;
        }
        ZDecl *wf = NULL;
        ZVec lifes = {0};
        for (int i = 0; i < c.prog->decls.len; i++) {
            ZDecl *d = c.prog->decls.items[i];
            if (d->kind == D_WORKFLOW) wf = d;
            if (d->kind == D_LIFELINE) zu_vec_push(c.arena, &lifes, (void *)d->name);
        }
        ZVec ls = {0};
        lists(&wf->body, &ls, c.arena);
        Marker mk[MAXK];
        for (int i = 0; i < markers; i++) {
            ZVec *v = ls.items[next() % (uint64_t)ls.len];
            int max = v->len;
            if (v == &wf->body && max && ((ZStmt *)v->items[max - 1])->kind == S_RETURN) max--;
            int at = (int)(next() % (uint64_t)(max + 1));
            mk[i].life = (int)(next() % (uint64_t)lifes.len);
            mk[i].s = za_stmt(c.arena, S_ASSIGN, (ZSpan){0});
            insert(c.arena, v, at, mk[i].s);
        }
        const char *decls_end = strstr(gen.data, "workflow gen(");
        ZBuf head = {0};
        zu_buf_printf(&head, "%.*s", (int)(decls_end - gen.data), gen.data);
        /* the store form, analysed */
        for (int i = 0; i < markers; i++) as_atomic(c.arena, mk[i].s, i, lifes.items[mk[i].life]);
        char *wtext = print_wf(c.prog, wf);
        ZBuf store = {0};
        zu_buf_puts(&store, head.data);
        for (int i = 0; i < markers; i++) zu_buf_printf(&store, "var sv%d: int = 0;\n", i);
        zu_buf_puts(&store, "store S {\n    cell c: int = 0;\n    consistency L4;\n}\n");
        zu_buf_puts(&store, wtext);
        free(wtext);
        ZCompilation sc;
        zc_init(&sc, zp_parse, "store.zg", store.data, store.len, stderr);
        if (!zc_run(&sc, ZC_CHECK)) {
            fprintf(stderr, "store_prop: case %d: the store form does not check:\n%s", cs,
                    store.data);
            return 1;
        }
        bool ordered[MAXK][MAXK];
        for (int i = 0; i < markers; i++)
            for (int j = 0; j < markers; j++) ordered[i][j] = i != j;
        ZqReport *r = zq_analyze(sc.arena, sc.prog, sc.wf);
        for (int k = 0; k < r->stores[0].pairs.len; k++) {
            const ZqPair *p = r->stores[0].pairs.items[k];
            int i = atoi(((ZTarget *)((ZStmt *)p->a->body.items[0])->targets.items[0])->name + 2);
            int j = atoi(((ZTarget *)((ZStmt *)p->b->body.items[0])->targets.items[0])->name + 2);
            ordered[i][j] = ordered[j][i] = false;
        }
        /* the run form, run */
        for (int i = 0; i < markers; i++) as_marker(c.arena, mk[i].s, i, lifes.items[mk[i].life]);
        wtext = print_wf(c.prog, wf);
        ZBuf run = {0};
        zu_buf_puts(&run, head.data);
        for (int i = 0; i < markers; i++) zu_buf_printf(&run, "var mk%d: int = 0;\n", i);
        zu_buf_puts(&run, wtext);
        free(wtext);
        if (!write_file(src, run.data)) {
            perror("store_prop: writing the program");
            return 1;
        }
        bool seen_conc[MAXK][MAXK] = {{false}};
        for (int sd = 1; sd <= seeds && !failures; sd++) {
            snprintf(cmd, sizeof cmd,
                     "'%s' run -Wno-all --schedule %d --trace '%s' '%s' > /dev/null", zgc, sd,
                     trace, src);
            if (system(cmd) != 0) {
                fprintf(stderr, "store_prop: case %d seed %d: `%s` failed; the program:\n%s", cs,
                        sd, cmd, run.data);
                return 1;
            }
            FILE *t = fopen(trace, "r");
            if (!t) {
                perror("store_prop: the trace");
                return 1;
            }
            json_t *inst[MAXK][256];
            int ninst[MAXK] = {0};
            char *line = NULL;
            size_t cap = 0;
            while (getline(&line, &cap, t) > 0) {
                json_t *ev = json_loads(line, 0, NULL);
                json_t *w = ev ? json_object_get(ev, "writes") : NULL;
                for (int i = 0; w && i < markers; i++) {
                    char key[16];
                    snprintf(key, sizeof key, "mk%d", i);
                    if (json_object_get(w, key) && ninst[i] < 256)
                        inst[i][ninst[i]++] = json_incref(json_object_get(ev, "vc"));
                }
                json_decref(ev);
            }
            free(line);
            fclose(t);
            for (int i = 0; i < markers; i++)
                for (int j = i + 1; j < markers; j++)
                    for (int x = 0; x < ninst[i]; x++)
                        for (int y = 0; y < ninst[j]; y++) {
                            bool comparable =
                                le(inst[i][x], inst[j][y]) || le(inst[j][y], inst[i][x]);
                            checked++;
                            if (!comparable) seen_conc[i][j] = true;
                            if (!comparable && ordered[i][j] && !failures) {
                                fprintf(stderr,
                                        "store_prop: case %d seed %d: markers mk%d and mk%d are "
                                        "reported ordered but ran concurrently (instances %d, %d)"
                                        "; the program:\n%s\nits store form:\n%s",
                                        cs, sd, i, j, x + 1, y + 1, run.data, store.data);
                                failures++;
                            }
                        }
            for (int i = 0; i < markers; i++)
                for (int k = 0; k < ninst[i]; k++) json_decref(inst[i][k]);
        }
        for (int i = 0; i < markers; i++)
            for (int j = i + 1; j < markers; j++) {
                if (ordered[i][j])
                    ordered_pairs++;
                else
                    racing_pairs++;
                if (!ordered[i][j] && seen_conc[i][j]) witnessed++;
            }
        zu_buf_free(&gen);
        zu_buf_free(&head);
        zu_buf_free(&store);
        zu_buf_free(&run);
        zc_free(&sc);
        zc_free(&c);
    }
    unlink(src);
    unlink(trace);
    rmdir(dir);
    if (failures) {
        fprintf(stderr, "store_prop: FAILED: a pair reported ordered ran concurrently\n");
        return 1;
    }
    printf("store_prop: %d cases x %d schedules: %ld pairs reported ordered (held in every "
           "run), %ld reported racing (%ld of them seen concurrent in a run); %ld instance pairs "
           "compared\n",
           cases, seeds, ordered_pairs, racing_pairs, witnessed, checked);
    return failures ? 1 : 0;
}
