/* racetable.c — `zgc anomalies --static FILE.zg`: the race analysis of a
 * workflow's store operations (compiler/stores.c) as a table or as JSON.
 * The detectors of recorded histories (`zgc anomalies PATH…`) are the
 * anomalies library's; main.c sends a command line with --static here. */
#include "zgc.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "grammar.h"
#include "racetable.h"
#include "usage.h"

const char zrc_usage[] =
    "usage: zgc anomalies --static [--json] [--workflow NAME] [--strict] FILE.zg\n"
    "\n"
    "Checks FILE.zg and prints, for each store, its operations (atomic\n"
    "blocks), the pairs of operations some execution runs unordered with the\n"
    "anomalies each pair makes possible (A1 stale generation, A6 tool-effect\n"
    "reordering, A2 phantom tool; never A3, which needs a retracted\n"
    "operation), and the lowest consistency level that is safe\n"
    "(docs/language.md §11).\n"
    "\n"
    "  --json            one JSON object instead of the table\n"
    "  --workflow NAME   the workflow (default: the only or the last one)\n"
    "  --strict          exit 1 when a store is declared below its safe level\n"
    "  -h, --help        show this help\n"
    "\n"
    "exit status: 0 analysed, 1 errors in the input (or --strict and a store\n"
    "declared too low), 2 bad usage.\n";

static const char *level(int l)
{
    return l == 0 ? "L0" : l == 1 ? "L1" : l == 2 ? "L2" : l == 3 ? "L3" : l == 4 ? "L4" : "?";
}

/* The cells an operation reads or writes, the tools it calls, in
 * source order, without repeats. */
static void items(const ZStmt *op, ZStmtKind kind, ZVec *out, ZArena *a)
{
    for (int i = 0; i < op->body.len; i++) {
        const ZStmt *it = op->body.items[i];
        const char *name = NULL;
        if (kind == S_ASSIGN && it->kind == S_ASSIGN && it->is_action && it->expr->decl &&
            it->expr->decl->action == ACT_EFFECT)
            name = it->expr->decl->name;
        else if (kind == S_WRITE && it->kind == S_WRITE && it->registry)
            name = "tools";
        else if (it->kind == kind && kind != S_ASSIGN && it->cell)
            name = it->cell;
        if (!name) continue;
        bool seen = false;
        for (int k = 0; k < out->len && !seen; k++) seen = !strcmp(out->items[k], name);
        if (!seen) zu_vec_push(a, out, (void *)name);
    }
}

static void put_list(FILE *f, const ZVec *v)
{
    if (!v->len) fputs("-", f);
    for (int i = 0; i < v->len; i++) fprintf(f, "%s%s", i ? "," : "", (const char *)v->items[i]);
}

static void print_table(FILE *f, const ZqReport *r, ZArena *a)
{
    fprintf(f, "workflow %s\n", r->wf->name);
    if (!r->nstores) fputs("no store\n", f);
    for (int i = 0; i < r->nstores; i++) {
        const ZqStore *st = &r->stores[i];
        ZBuf cls = {0};
        zq_classes_text(&cls, st->classes);
        fprintf(f, "\nstore %s: declared %s, lowest safe %s; anomalies possible: %s\n",
                st->store->name, level(st->declared), level(st->needed), cls.data);
        zu_buf_free(&cls);
        fprintf(f, "  %-10s %-16s %-20s %-20s %s\n", "operation", "lifeline", "reads", "writes",
                "tools");
        for (int k = 0; k < st->ops.len; k++) {
            const ZqOp *op = st->ops.items[k];
            ZVec rd = {0}, wr = {0}, tl = {0};
            items(op->s, S_READ, &rd, a);
            items(op->s, S_WRITE, &wr, a);
            items(op->s, S_ASSIGN, &tl, a);
            char at[32];
            snprintf(at, sizeof at, "%d:%d", op->s->span.first_line, op->s->span.first_column);
            fprintf(f, "  %-10s %-16s ", at, op->s->life.name);
            ZBuf b = {0};
            for (int j = 0; j < rd.len; j++)
                zu_buf_printf(&b, "%s%s", j ? "," : "", (char *)rd.items[j]);
            fprintf(f, "%-20s ", rd.len ? b.data : "-");
            zu_buf_free(&b);
            for (int j = 0; j < wr.len; j++)
                zu_buf_printf(&b, "%s%s", j ? "," : "", (char *)wr.items[j]);
            fprintf(f, "%-20s ", wr.len ? b.data : "-");
            zu_buf_free(&b);
            put_list(f, &tl);
            fputc('\n', f);
        }
        if (!st->pairs.len) {
            fputs("  no racing pair\n", f);
            continue;
        }
        fputs("  racing pairs:\n", f);
        for (int k = 0; k < st->pairs.len; k++) {
            const ZqPair *p = st->pairs.items[k];
            ZBuf b = {0};
            zq_classes_text(&b, p->classes);
            char x[32], y[32];
            snprintf(x, sizeof x, "%d:%d", p->a->span.first_line, p->a->span.first_column);
            snprintf(y, sizeof y, "%d:%d", p->b->span.first_line, p->b->span.first_column);
            fprintf(f, "    %s %s  ~  %s %s  %s", x, p->a->life.name, y, p->b->life.name, b.data);
            if (p->cell) fprintf(f, "  cell %s", p->cell);
            if (p->tool) fprintf(f, "  tool %s", p->tool);
            fputc('\n', f);
            zu_buf_free(&b);
        }
    }
}

static json_t *names(const ZVec *v)
{
    json_t *j = json_array();
    for (int i = 0; i < v->len; i++) json_array_append_new(j, json_string(v->items[i]));
    return j;
}

static json_t *where(const ZStmt *s)
{
    return json_pack("{s:s, s:i, s:i}", "lifeline", s->life.name, "line", s->span.first_line,
                     "column", s->span.first_column);
}

static json_t *classes(unsigned c)
{
    json_t *j = json_array();
    if (c & ZQ_A1) json_array_append_new(j, json_string("A1"));
    if (c & ZQ_A6) json_array_append_new(j, json_string("A6"));
    if (c & ZQ_A2) json_array_append_new(j, json_string("A2"));
    return j;
}

static json_t *report_json(const char *file, const ZqReport *r, ZArena *a)
{
    json_t *stores = json_array();
    for (int i = 0; i < r->nstores; i++) {
        const ZqStore *st = &r->stores[i];
        json_t *ops = json_array(), *pairs = json_array();
        for (int k = 0; k < st->ops.len; k++) {
            const ZqOp *op = st->ops.items[k];
            ZVec rd = {0}, wr = {0}, tl = {0};
            items(op->s, S_READ, &rd, a);
            items(op->s, S_WRITE, &wr, a);
            items(op->s, S_ASSIGN, &tl, a);
            json_t *o = where(op->s);
            json_object_set_new(o, "reads", names(&rd));
            json_object_set_new(o, "writes", names(&wr));
            json_object_set_new(o, "tools", names(&tl));
            json_array_append_new(ops, o);
        }
        for (int k = 0; k < st->pairs.len; k++) {
            const ZqPair *p = st->pairs.items[k];
            json_t *o = json_pack("{s:o, s:o, s:o}", "a", where(p->a), "b", where(p->b), "classes",
                                  classes(p->classes));
            json_object_set_new(o, "cell", p->cell ? json_string(p->cell) : json_null());
            json_object_set_new(o, "tool", p->tool ? json_string(p->tool) : json_null());
            json_array_append_new(pairs, o);
        }
        json_t *s = json_pack("{s:s, s:s, s:s, s:o, s:o, s:o}", "name", st->store->name, "declared",
                              level(st->declared), "needed", level(st->needed), "anomalies",
                              classes(st->classes), "operations", ops, "races", pairs);
        json_array_append_new(stores, s);
    }
    return json_pack("{s:s, s:s, s:o}", "file", file, "workflow", r->wf->name, "stores", stores);
}

int zrc_main(int argc, char **argv)
{
    const char *file = NULL, *workflow = NULL;
    bool json = false, strict = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(zrc_usage, stdout);
            return 0;
        } else if (!strcmp(a, "--static")) {
            continue;
        } else if (!strcmp(a, "--json")) {
            json = true;
        } else if (!strcmp(a, "--strict")) {
            strict = true;
        } else if (!strcmp(a, "--workflow")) {
            if (++i >= argc) return zus_error(zrc_usage, "%s needs a workflow name", a);
            workflow = argv[i];
        } else if (!strncmp(a, "--workflow=", 11)) {
            workflow = a + 11;
        } else if (a[0] == '-' && a[1]) {
            return zus_error(zrc_usage, "unknown option `%s`", a);
        } else if (file) {
            return zus_error(zrc_usage, "more than one input file (`%s`)", a);
        } else {
            file = a;
        }
    }
    if (!file) return zus_error(zrc_usage, "%s", "no input file");
    ZCompilation c;
    if (!zc_init_file(&c, zp_parse, file, stderr)) return 1;
    c.workflow = workflow;
    int rc = zc_run(&c, ZC_CHECK) ? 0 : 1;
    if (rc == 0) {
        ZqReport *r = zq_analyze(c.arena, c.prog, c.wf);
        if (json) {
            json_t *j = report_json(file, r, c.arena);
            if (json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0) rc = 1;
            fputc('\n', stdout);
            json_decref(j);
        } else {
            print_table(stdout, r, c.arena);
        }
        if (strict)
            for (int i = 0; i < r->nstores; i++) {
                const ZqStore *st = &r->stores[i];
                if (st->declared >= 0 && st->declared < st->needed) {
                    fprintf(stderr,
                            "zgc: error: store `%s` is declared %s but its lowest safe level "
                            "is %s\n",
                            st->store->name, level(st->declared), level(st->needed));
                    rc = 1;
                }
            }
    }
    zc_free(&c);
    return rc;
}
