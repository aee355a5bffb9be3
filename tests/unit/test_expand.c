/* Unit tests for imports (compiler/pipeline.c) and fragments
 * (compiler/expand.c, language reference §3.3, §3.4).  Imported files come
 * from a table in memory (the compilation's loader), never from disk. */
#include <criterion/criterion.h>

#include "expect.h"

typedef struct VFile {
    const char *name, *text;
} VFile;

static const VFile *vfs;
static int vfs_reads; /* files the loader handed out */

static char *vload(void *user, const char *path, size_t *len, char **key, const char **err,
                   bool *missing)
{
    (void)user;
    (void)err;
    for (const VFile *f = vfs; f && f->name; f++)
        if (!strcmp(f->name, path)) {
            *len = strlen(f->text);
            *key = strdup(path);
            vfs_reads++;
            return strdup(f->text);
        }
    *missing = true;
    return NULL;
}

static TComp *compile_with(const VFile *files, const char *text, TStage stage)
{
    vfs = files;
    vfs_reads = 0;
    TComp *c = calloc(1, sizeof *c);
    c->diag_file = open_memstream(&c->diag_text, &c->diag_len);
    zc_init(&c->comp, zp_parse, "main.zg", text, strlen(text), c->diag_file);
    c->comp.load = vload;
    c->ok = zc_run(&c->comp, (ZStage)stage);
    fflush(c->diag_file);
    return c;
}

static TComp *ok_with(const VFile *files, const char *text, TStage stage)
{
    TComp *c = compile_with(files, text, stage);
    cr_assert(c->ok, "failed:\n%s", c->diag_text ? c->diag_text : "");
    return c;
}

static int count_decls(const ZProgram *p, ZDeclKind k, const char *name)
{
    int n = 0;
    for (int i = 0; i < p->decls.len; i++) {
        const ZDecl *d = p->decls.items[i];
        if (d->kind == k && d->name && !strcmp(d->name, name)) n++;
    }
    return n;
}

/* ---- imports ------------------------------------------------------------ */

Test(imports, each_file_is_read_and_parsed_once)
{
    static const VFile files[] = {
        {"a.zg", "import \"c.zg\";\npure fa(x: int) -> int = fc(x);\n"},
        {"b.zg", "import \"c.zg\";\nimport \"a.zg\";\npure fb(x: int) -> int = fc(x);\n"},
        {"c.zg", "pure fc(x: int) -> int = x + 1;\n"},
        {NULL, NULL}};
    TComp *c = ok_with(files,
                       "import \"a.zg\";\nimport \"b.zg\";\nlifeline A;\nvar n: int = 1;\n"
                       "workflow w() -> int { A: n = fb(fa(n)); return n @ A; }\n",
                       T_CHECK);
    cr_expect_eq(vfs_reads, 3);
    cr_expect_eq(c->comp.files.len, 4); /* main, a, c, b */
    cr_expect_eq(count_decls(c->comp.prog, D_ACTION, "fc"), 1);
    /* an imported file's declarations stand where its first import is:
     * c's before a's, both before b's */
    int ia = -1, ib = -1, ic = -1;
    for (int i = 0; i < c->comp.prog->decls.len; i++) {
        const ZDecl *d = c->comp.prog->decls.items[i];
        if (d->kind != D_ACTION) continue;
        if (!strcmp(d->name, "fa")) ia = i;
        if (!strcmp(d->name, "fb")) ib = i;
        if (!strcmp(d->name, "fc")) ic = i;
    }
    cr_expect(ic < ia && ia < ib, "order fc %d fa %d fb %d", ic, ia, ib);
    /* spans name their files */
    const ZDecl *fc = zr_lookup(c->comp.prog, "fc");
    const ZSource *src = zd_source(&c->comp.diag, fc->span);
    cr_expect_str_eq(src->path, "c.zg");
    t_free(c);
}

Test(imports, missing_file_lists_where_it_looked)
{
    static const VFile files[] = {{NULL, NULL}};
    TComp *c = compile_with(files, "import \"gone.zg\";\nlifeline A;\nworkflow w() {}\n", T_PARSE);
    cr_expect(!c->ok);
    cr_expect(strstr(c->diag_text, "main.zg:1:8: error: cannot find `gone.zg`") != NULL, "%s",
              c->diag_text);
    cr_expect(strstr(c->diag_text, "note: looked for gone.zg, ") != NULL, "%s", c->diag_text);
    t_free(c);
}

Test(imports, cycle_names_every_file)
{
    static const VFile files[] = {
        {"x.zg", "import \"y.zg\";\n"}, {"y.zg", "lifeline B;\nimport \"x.zg\";\n"}, {NULL, NULL}};
    TComp *c = compile_with(files, "import \"x.zg\";\nlifeline A;\nworkflow w() {}\n", T_PARSE);
    cr_expect(!c->ok);
    cr_expect(strstr(c->diag_text, "y.zg:2:8: error: import cycle: x.zg -> y.zg -> x.zg") != NULL,
              "%s", c->diag_text);
    /* where y.zg came from */
    cr_expect(strstr(c->diag_text, "x.zg:1:8: note: `y.zg` is imported here") != NULL, "%s",
              c->diag_text);
    cr_expect(strstr(c->diag_text, "main.zg:1:8: note: `x.zg` is imported here") != NULL, "%s",
              c->diag_text);
    t_free(c);
}

Test(imports, syntax_error_in_an_imported_file_shows_its_line)
{
    static const VFile files[] = {{"bad.zg", "\n\nenum E { a b }\n"}, {NULL, NULL}};
    TComp *c = compile_with(files, "import \"bad.zg\";\nlifeline A;\nworkflow w() {}\n", T_PARSE);
    cr_expect(!c->ok);
    cr_expect(strstr(c->diag_text, "bad.zg:3:12: error: unexpected identifier `b`") != NULL, "%s",
              c->diag_text);
    cr_expect(strstr(c->diag_text, "    3 | enum E { a b }") != NULL, "%s", c->diag_text);
    cr_expect(strstr(c->diag_text, "main.zg:1:8: note: `bad.zg` is imported here") != NULL, "%s",
              c->diag_text);
    t_free(c);
}

/* ---- fragments ------------------------------------------------------------ */

static const char tell[] = "lifeline A, B;\n"
                           "var count: int = 7;\n"
                           "var n: int = 0;\n"
                           "fragment add(X: lifeline, Y: lifeline, count: int, const k: int) {\n"
                           "    var t: int;\n"
                           "    X: t = count + k;\n"
                           "    X(t) -> Y(count);\n"
                           "}\n";

Test(fragments, uses_expand_with_fresh_variables)
{
    char *text = NULL;
    cr_assert(asprintf(&text,
                       "%sworkflow w() -> int { add(A, B, n, 1); add(B, A, n, 2); "
                       "return n @ A; }\n",
                       tell) > 0);
    TComp *c = ok_with(NULL, text, T_CHECK);
    ZDecl *wf = c->comp.wf;
    cr_assert_eq(wf->written.len, 3); /* two uses and the return */
    cr_assert_eq(wf->body.len, 5);
    const ZStmt *s0 = wf->body.items[0], *s1 = wf->body.items[1], *s2 = wf->body.items[2];
    /* X: t = count + k  →  A: add#1.t = n + 1 */
    cr_expect_str_eq(s0->life.name, "A");
    cr_expect_str_eq(((ZTarget *)s0->targets.items[0])->name, "add#1.t");
    ZBuf b = {0};
    za_print_expr(&b, s0->expr);
    cr_expect_str_eq(b.data, "n + 1"); /* the parameter hides the program's `count` */
    zu_buf_free(&b);
    /* X(t) -> Y(count)  →  A(add#1.t) -> B(n) */
    cr_expect_str_eq(s1->life.name, "A");
    cr_expect_str_eq(s1->to.name, "B");
    cr_expect_str_eq(((ZExpr *)s1->params.items[0])->name, "n");
    /* the second use has its own variable and lifelines swapped */
    cr_expect_str_eq(s2->life.name, "B");
    cr_expect_str_eq(((ZTarget *)s2->targets.items[0])->name, "add#2.t");
    cr_expect_eq(count_decls(c->comp.prog, D_VAR, "add#1.t"), 1);
    cr_expect_eq(count_decls(c->comp.prog, D_VAR, "add#2.t"), 1);
    /* copies point into the fragment, marked with their expansion */
    cr_expect_eq(s0->span.first_line, 6);
    cr_expect_eq(s0->span.exp, 1);
    cr_expect_eq(s2->span.exp, 2);
    cr_assert_eq(c->comp.expansions.len, 2);
    const ZExpansion *x2 = c->comp.expansions.items[1];
    cr_expect_str_eq(x2->fragment, "add");
    cr_expect_eq(x2->at.first_line, 9);
    cr_expect_eq(x2->at.first_column, 40);
    t_free(c);
    free(text);
}

Test(fragments, nested_uses_chain_their_expansions)
{
    TComp *c = ok_with(NULL,
                       "lifeline A, B;\nvar n: int = 0;\n"
                       "fragment ping(X: lifeline, Y: lifeline, v: int) { X(v) -> Y(v); }\n"
                       "fragment pp(X: lifeline, Y: lifeline, v: int) {\n"
                       "    ping(X, Y, v);\n    ping(Y, X, v);\n}\n"
                       "workflow w() { if n == 0 @ A { pp(A, B, n); } }\n",
                       T_CHECK);
    const ZStmt *iff = c->comp.wf->body.items[0];
    cr_assert_eq(iff->body.len, 2);
    const ZStmt *m = iff->body.items[1];
    cr_expect_str_eq(m->life.name, "B");
    cr_expect_eq(m->span.first_line, 3); /* ping's message */
    const ZExpansion *inner = c->comp.expansions.items[m->span.exp - 1];
    cr_expect_str_eq(inner->fragment, "ping");
    cr_expect_eq(inner->at.first_line, 6); /* the use in pp */
    cr_assert_gt(inner->at.exp, 0);
    const ZExpansion *outer = c->comp.expansions.items[inner->at.exp - 1];
    cr_expect_str_eq(outer->fragment, "pp");
    cr_expect_eq(outer->at.first_line, 8);
    cr_expect_eq(outer->at.exp, 0);
    /* the written form keeps the use; the projection sees the messages */
    const ZStmt *wif = c->comp.wf->written.items[0];
    cr_expect_eq(((ZStmt *)wif->body.items[0])->kind, S_USE);
    t_free(c);
}

Test(fragments, errors_in_expansions_note_every_use)
{
    TComp *c = compile_with(NULL,
                            "lifeline A;\nvar n: int = 0;\n"
                            "fragment set(X: lifeline, v: int) { X: v = \"s\"; }\n"
                            "fragment twice(X: lifeline, v: int) { set(X, v); }\n"
                            "workflow w() { twice(A, n); }\n",
                            T_CHECK);
    cr_expect(!c->ok);
    const char *want = "main.zg:3:44: error: cannot assign `str` to `n` of type `int`\n";
    const char *at = strstr(c->diag_text, want);
    cr_assert(at, "%s", c->diag_text);
    const char *n1 = strstr(at, "main.zg:4:39: note: in fragment `set`, expanded from here");
    const char *n2 = strstr(at, "main.zg:5:16: note: in fragment `twice`, expanded from here");
    cr_expect(n1 && n2 && n1 < n2, "%s", c->diag_text);
    t_free(c);
}

Test(fragments, checked_where_declared_even_unused)
{
    t_expect_errors("lifeline A;\n"
                    "fragment f(X: lifeline) { X: y = nothing; }\n"
                    "workflow w() {}\n",
                    T_RESOLVE, 2, "test.zg:2:30: error: unknown variable `y`",
                    "test.zg:2:34: error: unknown name `nothing`");
}

Test(fragments, a_bad_use_inside_a_fragment_is_reported_once)
{
    t_expect_errors("lifeline A;\n"
                    "fragment g(X: lifeline) { skip X; }\n"
                    "fragment f(X: lifeline) { g(X, X); }\n"
                    "workflow w() { f(A); f(A); f(A); }\n",
                    T_RESOLVE, 1, "test.zg:3:27: error: fragment `g` takes 1 argument, not 2",
                    "test.zg:2:10: note: `g` is declared here");
}

Test(fragments, workflow_names_do_not_reach_into_fragments)
{
    /* the program's `t` and the fragment's `t` are different variables */
    TComp *c = ok_with(NULL,
                       "lifeline A;\nvar t: int = 5;\n"
                       "fragment f(X: lifeline, out: int) { var t: int; X: t = 1; X: out = t; }\n"
                       "workflow w() -> int { f(A, t); return t @ A; }\n",
                       T_CHECK);
    const ZStmt *s1 = c->comp.wf->body.items[1];
    cr_expect_str_eq(((ZTarget *)s1->targets.items[0])->name, "t");
    cr_expect_str_eq(s1->expr->name, "f#1.t");
    t_free(c);
}

Test(fragments, constant_arguments_are_copied_at_each_place)
{
    TComp *c = ok_with(NULL,
                       "lifeline A, B;\nenum Mode { fast, slow }\nvar m: Mode = slow;\n"
                       "fragment f(X: lifeline, Y: lifeline, const k: Mode, v: Mode) {\n"
                       "    X(k) -> Y(v);\n    if v == k @ Y { Y: v = k; }\n}\n"
                       "workflow w() { f(A, B, fast, m); }\n",
                       T_CHECK);
    const ZStmt *msg = c->comp.wf->body.items[0];
    const ZExpr *arg = msg->args.items[0];
    cr_expect_eq(arg->kind, E_NAME);
    cr_expect_str_eq(arg->name, "fast");
    cr_expect_eq(arg->name_kind, NAME_MEMBER);
    cr_expect_eq(arg->span.first_line, 8); /* the argument's own place */
    const ZStmt *iff = c->comp.wf->body.items[1];
    cr_expect_neq(iff->expr->b, arg); /* a copy per place: the checker types each */
    t_free(c);
}

/* ---- the standard library ------------------------------------------------- */

/* Every file of stdlib/ checks clean on its own, and a program that imports
 * all of them (by name, found through the search path) too. */
Test(stdlib, every_file_checks_clean)
{
    static const char *const names[] = {"review.zg", "consensus_loop.zg", "approval.zg", "llm.zg"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char *path = NULL;
        cr_assert(asprintf(&path, "%s/%s", zc_stdlib_dir(), names[i]) > 0);
        char *errs = NULL;
        size_t nerrs = 0;
        FILE *ef = open_memstream(&errs, &nerrs);
        ZCompilation c;
        cr_assert(zc_init_file(&c, zp_parse, path, ef), "cannot read %s", path);
        c.all_workflows = true;
        bool ok = zc_run(&c, ZC_CHECK);
        fflush(ef);
        cr_expect(ok, "%s:\n%s", path, errs);
        cr_expect(c.prog->fragments.len > 0, "%s has no fragment", path);
        zc_free(&c);
        fclose(ef);
        free(errs);
        free(path);
    }
    TComp *c = t_compile("import \"review.zg\";\nimport \"consensus_loop.zg\";\n"
                         "import \"approval.zg\";\nimport \"llm.zg\";\n"
                         "lifeline A;\nworkflow w() {}\n",
                         T_CHECK);
    cr_expect(c->ok, "%s", c->diag_text);
    cr_expect_eq(c->comp.files.len, 5);
    t_free(c);
}
