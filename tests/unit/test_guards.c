/* Unit tests for CPL guard enumeration (guards.c, language reference §6). */
#include <criterion/criterion.h>

#include "helpers.h"

static TComp *compile_ok(const char *text)
{
    TComp *c = t_compile(text, T_GUARDS);
    cr_assert(c->ok, "compilation failed:\n%s", c->diag_text ? c->diag_text : "");
    cr_assert_not_null(c->comp.guards);
    return c;
}

static const ZGuardInfo *guard_at(const TComp *c, int i)
{
    cr_assert(i < c->comp.guards->guards.len, "only %d guards", c->comp.guards->guards.len);
    return ZU_VEC_AT(c->comp.guards->guards, i);
}

static char *formula_text(const TComp *c, const ZFormula *f)
{
    ZBuf b = {0};
    zg_print_formula(&b, c->comp.guards, f);
    zu_buf_putc(&b, '\0');
    return b.data;
}

static const ZLifelineMonitor *monitor(const TComp *c, int life)
{
    cr_assert(life < c->comp.guards->monitors.len);
    return ZU_VEC_AT(c->comp.guards->monitors, life);
}

/* Lifelines A, B, C in a ring (A -> B -> C -> A), one guard owned by A. */
#define RING_DECLS        \
    "lifeline A, B, C;\n" \
    "var x: int = 0;\n"   \
    "var y: int = 0;\n"   \
    "var ok: bool = false;\n"

#define RING_MSGS       \
    "  A(x) -> B(x);\n" \
    "  B(x) -> C(x);\n" \
    "  C(ok) -> A(ok);\n"

static char *unfold_one(const char *guard_decls, const char *guard)
{
    ZBuf src = {0};
    zu_buf_printf(&src,
                  RING_DECLS "%s\nworkflow w() {\n" RING_MSGS "  if %s @ A { A: x = 1; }\n}\n",
                  guard_decls, guard);
    TComp *c = compile_ok(src.data);
    const ZGuardInfo *g = guard_at(c, 0);
    cr_assert(g->cpl, "guard %s is not CPL", guard);
    cr_assert_not_null(g->root);
    char *text = formula_text(c, g->root);
    t_free(c);
    zu_buf_free(&src);
    return text;
}

static void expect_unfold(const char *decls, const char *guard, const char *want)
{
    char *got = unfold_one(decls, guard);
    cr_expect_str_eq(got, want, "unfolding %s: got %s, want %s", guard, got, want);
    free(got);
}

/* ---- unfolding --------------------------------------------------------- */

Test(guards, unfold_derived_forms)
{
    expect_unfold("", "once ok", "true since ok");
    expect_unfold("", "historically ok", "!(true since !ok)");
    expect_unfold("", "past x == 2",
                  "@A(true since x == 2) || @B(true since x == 2) || @C(true since x == 2)");
    expect_unfold("", "seen B", "@B(true)");
    expect_unfold("", "prev ok", "prev ok");
    expect_unfold("", "prev (x > 1)", "prev (x > 1)");
    expect_unfold("", "!ok since x > 1", "!ok since x > 1");
    expect_unfold("", "@B(once ok) || !(prev ok)", "@B(true since ok) || !(prev ok)");
}

/* Atoms are predicates (CPL paper, Definition 2): `!`, `&&`, `||`, `==`/`!=`
 * between bools and `?:` with a bool result are connectives everywhere,
 * with or without a temporal operator inside. */
Test(guards, atoms_are_predicates)
{
    expect_unfold("", "x > 1 && y < 2 && once ok", "x > 1 && y < 2 && true since ok");
    TComp *c = compile_ok(RING_DECLS "workflow w() {\n" RING_MSGS
                                     "  if @B.x == x && y < 2 && once ok @ A { A: x = 1; }\n}\n");
    const ZGuardInfo *g = guard_at(c, 0);
    /* ((@B.x == x && y < 2) && once ok): the left conjunction is a
     * conjunction of two atoms, not one atom */
    cr_assert_eq(g->root->kind, F_AND);
    cr_assert_eq(g->root->a->kind, F_AND);
    cr_expect_eq(g->root->b->kind, F_SINCE);
    cr_assert_eq(g->root->a->a->kind, F_ATOM);
    cr_assert_eq(g->root->a->b->kind, F_ATOM);
    char *t = formula_text(c, g->root->a->a);
    cr_expect_str_eq(t, "@B.x == x");
    free(t);
    t = formula_text(c, g->root->a->b);
    cr_expect_str_eq(t, "y < 2");
    free(t);
    t_free(c);
}

/* The guard of tests/cpl/atoms.zg: `@B.x == 0 || y == 1` is a disjunction of two atoms,
 * and adding `once` to the second disjunct shares the first atom. */
Test(guards, disjunction_of_comparisons)
{
    TComp *c = compile_ok(RING_DECLS "workflow w() {\n" RING_MSGS
                                     "  if @B.x == 0 || y == 1 @ A { A: x = 1; }\n"
                                     "  if @B.x == 0 || once (y == 1) @ A { A: x = 2; }\n}\n");
    const ZGuardInfo *g1 = guard_at(c, 0), *g2 = guard_at(c, 1);
    cr_assert_eq(g1->root->kind, F_OR);
    cr_assert_eq(g1->root->a->kind, F_ATOM);
    cr_assert_eq(g1->root->b->kind, F_ATOM);
    char *t = formula_text(c, g1->root->a);
    cr_expect_str_eq(t, "@B.x == 0");
    free(t);
    t = formula_text(c, g1->root->b);
    cr_expect_str_eq(t, "y == 1");
    free(t);
    /* @B.x == 0, y == 1, or, true, since, or */
    cr_expect_eq(c->comp.guards->subs.len, 6);
    cr_assert_eq(g2->root->kind, F_OR);
    cr_expect_eq(g2->root->a, g1->root->a);
    cr_assert_eq(g2->root->b->kind, F_SINCE);
    cr_expect_eq(g2->root->b->b, g1->root->b);
    t_free(c);
}

Test(guards, negation_of_an_atom)
{
    TComp *c = compile_ok(RING_DECLS "workflow w() {\n" RING_MSGS
                                     "  if !(@B.x == 0) @ A { A: x = 1; }\n}\n");
    const ZGuardInfo *g = guard_at(c, 0);
    cr_assert_eq(g->root->kind, F_NOT);
    cr_assert_eq(g->root->a->kind, F_ATOM);
    cr_expect_eq(g->root->a->atom->kind, E_BINARY);
    cr_expect_eq(g->root->a->atom->op, OP_EQ);
    cr_expect_eq(c->comp.guards->subs.len, 2);
    char *t = formula_text(c, g->root);
    cr_expect_str_eq(t, "!(@B.x == 0)");
    free(t);
    t_free(c);
    expect_unfold("", "y == 1 && !(@B.x > 3)", "y == 1 && !(@B.x > 3)");
    expect_unfold("", "@B.x != 0", "@B.x != 0");
}

Test(guards, bool_connectives_over_atoms)
{
    /* c ? a : b over bool: (c && a) || (!c && b) */
    expect_unfold("", "ok ? @B.x > 0 : y == 1", "ok && @B.x > 0 || !ok && y == 1");
    expect_unfold("", "(@B.x == 0) ? false : true", "@B.x == 0 && !true || !(@B.x == 0) && true");
    /* == and != between bools: (a && b) || (!a && !b), (a && !b) || (!a && b) */
    expect_unfold("", "(@B.x > 0) == ok", "@B.x > 0 && ok || !(@B.x > 0) && !ok");
    expect_unfold("", "(@B.x > 0) != ok", "@B.x > 0 && !ok || !(@B.x > 0) && ok");
    /* between other values they are comparisons: one atom each */
    expect_unfold("", "@B.x == y", "@B.x == y");
    expect_unfold("", "(ok ? x : y) == @B.x", "(ok ? x : y) == @B.x");
    TComp *c = compile_ok(RING_DECLS "workflow w() {\n" RING_MSGS
                                     "  if ok ? @B.x > 0 : y == 1 @ A { A: x = 1; }\n"
                                     "  if (ok ? x : y) == @B.x @ A { A: x = 2; }\n}\n");
    /* ok, @B.x > 0, and, !ok, y == 1, and, or; then the comparison */
    cr_expect_eq(c->comp.guards->subs.len, 8);
    cr_expect_eq(guard_at(c, 1)->root->kind, F_ATOM);
    t_free(c);
}

Test(guards, false_is_not_true)
{
    TComp *c =
        compile_ok(RING_DECLS "workflow w() {\n" RING_MSGS "  if false || @B.ok @ A { A: x = 1; }\n"
                              "  if !true || @B.ok @ A { A: x = 2; }\n}\n");
    const ZGuardInfo *g1 = guard_at(c, 0), *g2 = guard_at(c, 1);
    cr_expect_eq(g1->root, g2->root, "`false` and `!true` are one subformula");
    cr_assert_eq(g1->root->kind, F_OR);
    cr_assert_eq(g1->root->a->kind, F_NOT);
    cr_expect_eq(g1->root->a->a->kind, F_TRUE);
    /* true, !true, @B.ok, or */
    cr_expect_eq(c->comp.guards->subs.len, 4);
    t_free(c);
}

Test(guards, builtin_call_is_an_atom)
{
    TComp *c = compile_ok(RING_DECLS "var s: str = \"\";\n"
                                     "workflow w() {\n" RING_MSGS
                                     "  if contains(@B.s, \"a\") || !ok @ A { A: x = 1; }\n}\n");
    const ZGuardInfo *g = guard_at(c, 0);
    cr_assert_eq(g->root->kind, F_OR);
    cr_assert_eq(g->root->a->kind, F_ATOM);
    cr_expect_eq(g->root->a->atom->kind, E_CALL);
    cr_expect_eq(g->root->a->atom->builtin, BI_CONTAINS);
    cr_assert_eq(g->root->b->kind, F_NOT);
    cr_expect_eq(g->root->b->a->kind, F_ATOM);
    char *t = formula_text(c, g->root);
    cr_expect_str_eq(t, "contains(@B.s, \"a\") || !ok");
    free(t);
    const ZVec *vars = &c->comp.guards->vars;
    cr_assert_eq(vars->len, 1);
    cr_expect_str_eq(ZU_VEC_AT(*vars, 0), "s");
    t_free(c);
}

Test(guards, bool_variables_are_atoms)
{
    TComp *c = compile_ok(RING_DECLS "workflow w() {\n" RING_MSGS
                                     "  if @B.ok && !ok @ A { A: x = 1; }\n}\n");
    const ZGuardInfo *g = guard_at(c, 0);
    cr_assert_eq(g->root->kind, F_AND);
    cr_assert_eq(g->root->a->kind, F_ATOM);
    cr_expect_eq(g->root->a->atom->kind, E_AT_VAR);
    cr_assert_eq(g->root->b->kind, F_NOT);
    cr_assert_eq(g->root->b->a->kind, F_ATOM);
    cr_expect_eq(g->root->b->a->atom->kind, E_NAME);
    /* @B.ok, ok, !ok, and */
    cr_expect_eq(c->comp.guards->subs.len, 4);
    const ZVec *vars = &c->comp.guards->vars;
    cr_assert_eq(vars->len, 1);
    cr_expect_str_eq(ZU_VEC_AT(*vars, 0), "ok");
    /* A reads B's ok through a variable view */
    const ZLifelineMonitor *a = monitor(c, 0);
    cr_assert_eq(a->var_views.len, 1);
    cr_expect_eq(((const ZViewEntry *)ZU_VEC_AT(a->var_views, 0))->life, 1);
    t_free(c);
    expect_unfold("", "@B.ok == false", "@B.ok && !true || !@B.ok && !(!true)");
}

Test(guards, named_guards_are_inlined)
{
    expect_unfold("guard good = once x > 3;\n", "good && ok", "true since x > 3 && ok");
    expect_unfold("guard small = x < 3;\n", "small && once ok", "x < 3 && true since ok");
    expect_unfold("guard small = x < 3;\nguard both = small && seen C;\n", "@B(both)",
                  "@B(x < 3 && @C(true))");
    /* a plain named guard's connectives are connectives too */
    expect_unfold("guard calm = x < 3 && !ok;\n", "calm || @B.x > 0", "x < 3 && !ok || @B.x > 0");
    TComp *c = compile_ok(RING_DECLS "guard calm = x < 3 && !ok;\n"
                                     "workflow w() {\n" RING_MSGS
                                     "  if calm || @B.x > 0 @ A { A: x = 1; }\n"
                                     "  if str(calm) == \"true\" && @B.ok @ A { A: x = 2; }\n}\n");
    const ZGuardInfo *g1 = guard_at(c, 0), *g2 = guard_at(c, 1);
    cr_assert_eq(g1->root->kind, F_OR);
    cr_expect_eq(g1->root->a->kind, F_AND);
    /* inside a call the guard is a value: inlined into the atom */
    cr_assert_eq(g2->root->a->kind, F_ATOM);
    char *t = formula_text(c, g2->root->a);
    cr_expect_str_eq(t, "str(x < 3 && !ok) == \"true\"");
    free(t);
    t_free(c);
}

Test(guards, var_only_guard_is_one_atom)
{
    TComp *c =
        compile_ok(RING_DECLS "workflow w() {\n" RING_MSGS "  if @C.x > x @ A { A: x = 1; }\n}\n");
    const ZGuardInfo *g = guard_at(c, 0);
    cr_expect(g->cpl);
    cr_assert_not_null(g->root);
    cr_expect_eq(g->root->kind, F_ATOM);
    cr_expect_eq(c->comp.guards->subs.len, 1);
    const ZLifelineMonitor *a = monitor(c, 0);
    cr_expect(a->needs_monitor);
    cr_assert_eq(a->var_views.len, 1);
    const ZViewEntry *v = ZU_VEC_AT(a->var_views, 0);
    cr_expect_eq(v->life, 2);
    cr_expect_eq(v->sub, -1);
    cr_expect_str_eq(v->var, "x");
    t_free(c);
}

/* ---- sub(Φ) -------------------------------------------------------------- */

Test(guards, hash_consing_counts_duplicates_once)
{
    TComp *c = compile_ok(RING_DECLS "workflow w() {\n" RING_MSGS
                                     "  if once ok && once ok @ A { A: x = 1; }\n"
                                     "  if once ok || ok @ A { A: x = 2; }\n"
                                     "  if @B(once ok) && once ok @ A { A: x = 3; }\n"
                                     "}\n");
    /* true, ok, true S ok, (S && S), (S || ok), @B(S), (@B(S) && S) */
    cr_expect_eq(c->comp.guards->subs.len, 7);
    const ZGuardInfo *g1 = guard_at(c, 0), *g2 = guard_at(c, 1), *g3 = guard_at(c, 2);
    cr_expect_eq(g1->root->a, g1->root->b);
    cr_expect_eq(g2->root->a, g1->root->a);
    cr_expect_eq(g3->root->a->a, g1->root->a);
    cr_expect_eq(g2->root->b, g1->root->a->b); /* the atom `ok` */
    t_free(c);
}

Test(guards, subformulas_are_numbered_bottom_up)
{
    TComp *c =
        compile_ok(RING_DECLS "workflow w() {\n" RING_MSGS
                              "  if historically ok || past x == 2 @ A { A: x = 1; }\n"
                              "  while prev (y > 1) && @C(ok since x > 0) @ B { B: y = y + 1; }\n"
                              "}\n");
    const ZVec *subs = &c->comp.guards->subs;
    cr_assert(subs->len > 0);
    for (int i = 0; i < subs->len; i++) {
        const ZFormula *f = ZU_VEC_AT(*subs, i);
        cr_expect_eq(f->id, i);
        if (f->a) cr_expect_lt(f->a->id, f->id);
        if (f->b) cr_expect_lt(f->b->id, f->id);
        for (int j = 0; j < i; j++) {
            const ZFormula *g = ZU_VEC_AT(*subs, j);
            bool same = g->kind == f->kind && g->a == f->a && g->b == f->b && g->life == f->life &&
                        g->kind != F_ATOM;
            cr_expect(!same, "φ%d and φ%d are structurally equal", j, i);
        }
    }
    t_free(c);
}

Test(guards, vars_distinct_in_first_appearance_order)
{
    TComp *c = compile_ok(RING_DECLS
                          "workflow w() {\n" RING_MSGS
                          "  if @B.y > 0 && @C.x == x && @B.x > 1 && once ok @ A { A: x = 1; }\n"
                          "  if @A.y > y && seen A @ B { B: y = 1; }\n"
                          "}\n");
    const ZVec *vars = &c->comp.guards->vars;
    cr_assert_eq(vars->len, 2);
    cr_expect_str_eq(ZU_VEC_AT(*vars, 0), "y");
    cr_expect_str_eq(ZU_VEC_AT(*vars, 1), "x");
    t_free(c);
}

Test(guards, guards_in_construct_order)
{
    TComp *c = compile_ok(RING_DECLS "workflow w() {\n" RING_MSGS "  while x < 3 @ A {\n"
                                     "    if once ok @ A { A(x) -> B(x); }\n"
                                     "    A: x = x + 1;\n"
                                     "  }\n"
                                     "  if ok @ C { C: y = 1; }\n"
                                     "}\n");
    cr_assert_eq(c->comp.guards->guards.len, 3);
    const char *tags[] = {"while#1", "if#2", "if#3"};
    const int owners[] = {0, 0, 2};
    const bool cpl[] = {false, true, false};
    for (int i = 0; i < 3; i++) {
        const ZGuardInfo *g = guard_at(c, i);
        cr_expect_str_eq(g->tag, tags[i]);
        cr_expect_eq(g->owner, owners[i]);
        cr_expect_eq(g->cpl, cpl[i]);
        cr_expect_eq(g->root == NULL, !cpl[i]);
        cr_expect_not_null(g->source);
        cr_expect_not_null(g->construct);
    }
    t_free(c);
}

/* ---- per-lifeline tables ----------------------------------------------- */

static const char *MERGE_SRC =
    "lifeline Orchestrator, TestRunner, Security, Committer;\n"
    "enum Status { pending, passed, failed, cleared, critical }\n"
    "var patch: str = \"\";\n"
    "var candidate: str = \"\";\n"
    "var status: Status = pending;\n"
    "var merged: bool = false;\n"
    "extern pure run_tests(patch: str) -> Status;\n"
    "extern pure scan(patch: str) -> Status;\n"
    "effect do_merge(candidate: str) -> bool;\n"
    "workflow review(patch: str @ Orchestrator, candidate: str @ Orchestrator) {\n"
    "  Orchestrator(patch, candidate) -> TestRunner(patch, candidate);\n"
    "  Orchestrator(patch, candidate) -> Security(patch, candidate);\n"
    "  parallel {\n"
    "    branch { TestRunner: status = run_tests(patch); TestRunner(status) -> Committer(status); "
    "}\n"
    "    branch { Security: status = scan(patch); Security(candidate) -> Committer(candidate); }\n"
    "  }\n"
    "  Orchestrator(candidate) -> Committer(candidate);\n"
    "  if @TestRunner.candidate == candidate && @Security.candidate == candidate\n"
    "     && @TestRunner(status != failed since status == passed)\n"
    "     && @Security(status != critical since status == cleared) @ Committer {\n"
    "    Committer: merged = do_merge(candidate);\n"
    "  }\n"
    "}\n";

Test(guards, merge_example_text)
{
    TComp *c = compile_ok(MERGE_SRC);
    T_CAPTURE(got, zg_print(out, c->comp.guards));
    const char *want =
        "guard if#1 @ Committer: @TestRunner.candidate == candidate && @Security.candidate == "
        "candidate"
        " && @TestRunner(status != failed since status == passed)"
        " && @Security(status != critical since status == cleared)\n"
        "  unfolded: @TestRunner.candidate == candidate && @Security.candidate == candidate"
        " && @TestRunner(status != failed since status == passed)"
        " && @Security(status != critical since status == cleared)  [φ12]\n"
        "  kind: cpl\n"
        "\n"
        "sub(Φ): 13\n"
        "  φ0    atom   @TestRunner.candidate == candidate\n"
        "  φ1    atom   @Security.candidate == candidate\n"
        "  φ2    and    φ0 && φ1\n"
        "  φ3    atom   status != failed\n"
        "  φ4    atom   status == passed\n"
        "  φ5    since  φ3 since φ4\n"
        "  φ6    at     @TestRunner(φ5)\n"
        "  φ7    and    φ2 && φ6\n"
        "  φ8    atom   status != critical\n"
        "  φ9    atom   status == cleared\n"
        "  φ10   since  φ8 since φ9\n"
        "  φ11   at     @Security(φ10)\n"
        "  φ12   and    φ7 && φ11\n"
        "\n"
        "Vars(Φ): candidate\n"
        "  terms: @TestRunner.candidate @Security.candidate\n"
        "\n"
        "lifeline Orchestrator: no monitor (state 0 B; traced: vc 4 × 8 B = 32 B)\n"
        "\n"
        "lifeline TestRunner: monitor\n"
        "  evaluates: φ3 φ4 φ5\n"
        "  bool views: view(TestRunner, φ5)\n"
        "  var views: var(TestRunner, candidate)\n"
        "  state: vc 1 × 8 B + values 3 B + old 3 B + views 0 B + vars 0 × 16 B = 14 B; traced: "
        "vc 4 × 8 B, 38 B\n"
        "\n"
        "lifeline Security: monitor\n"
        "  evaluates: φ8 φ9 φ10\n"
        "  bool views: view(Security, φ10)\n"
        "  var views: var(Security, candidate)\n"
        "  state: vc 1 × 8 B + values 3 B + old 3 B + views 0 B + vars 0 × 16 B = 14 B; traced: "
        "vc 4 × 8 B, 38 B\n"
        "\n"
        "lifeline Committer: monitor\n"
        "  evaluates: φ0 φ1 φ2 φ6 φ7 φ11 φ12\n"
        "  bool views: view(TestRunner, φ5) view(Security, φ10)\n"
        "  var views: var(TestRunner, candidate) var(Security, candidate)\n"
        "  state: vc 3 × 8 B + values 7 B + old 7 B + views 2 B + vars 2 × 16 B = 72 B; traced: "
        "vc 4 × 8 B, 80 B\n";
    cr_expect_str_eq(got, want, "--- got ---\n%s--- want ---\n%s", got, want);
    free(got);
    t_free(c);
}

Test(guards, merge_example_tables)
{
    TComp *c = compile_ok(MERGE_SRC);
    enum { ORCH, TEST, SEC, COMMIT };
    cr_expect(!monitor(c, ORCH)->needs_monitor);
    cr_expect_eq(monitor(c, ORCH)->state_bytes, 0);
    cr_expect_eq(monitor(c, ORCH)->bool_views.len, 0);
    const ZLifelineMonitor *cm = monitor(c, COMMIT);
    cr_expect(cm->needs_monitor);
    cr_assert_eq(cm->bool_views.len, 2);
    const ZViewEntry *v0 = ZU_VEC_AT(cm->bool_views, 0), *v1 = ZU_VEC_AT(cm->bool_views, 1);
    cr_expect_eq(v0->life, TEST);
    cr_expect_eq(v1->life, SEC);
    const ZFormula *s0 = ZU_VEC_AT(c->comp.guards->subs, v0->sub);
    cr_expect_eq(s0->kind, F_SINCE);
    cr_expect_eq(cm->var_views.len, 2);
    /* what the runtime allocates: the clock entries of TestRunner, Security
     * and itself, a byte per evaluated subformula twice, the two remote
     * views and variable views */
    cr_expect_eq(cm->state_bytes, 3 * 8 + 7 + 7 + 2 + 2 * 16);
    cr_expect_eq(cm->traced_state_bytes, 4 * 8 + 7 + 7 + 2 + 2 * 16);
    /* the reviewers evaluate their own since formulas and nothing else */
    const ZLifelineMonitor *tm = monitor(c, TEST);
    cr_assert_eq(tm->evaluates.len, 3);
    const ZFormula *top = ZU_VEC_AT(tm->evaluates, 2);
    cr_expect_eq(top, s0);
    t_free(c);
}

Test(guards, plain_guards_need_no_monitor)
{
    TComp *c = compile_ok(RING_DECLS "workflow w() {\n" RING_MSGS
                                     "  while x < 3 && !ok @ A { A: x = x + 1; }\n"
                                     "  if y == 0 @ B { B(y) -> C(y); }\n"
                                     "}\n");
    cr_expect_eq(c->comp.guards->guards.len, 2);
    for (int i = 0; i < 2; i++) {
        cr_expect(!guard_at(c, i)->cpl);
        cr_expect_null(guard_at(c, i)->root);
    }
    cr_expect_eq(c->comp.guards->subs.len, 0);
    cr_expect_eq(c->comp.guards->vars.len, 0);
    for (int L = 0; L < 3; L++) {
        cr_expect(!monitor(c, L)->needs_monitor);
        cr_expect_eq(monitor(c, L)->state_bytes, 0);
    }
    T_CAPTURE(got, zg_print(out, c->comp.guards));
    cr_expect_str_eq(got, "guard while#1 @ A: x < 3 && !ok\n"
                          "  kind: plain (no monitor)\n"
                          "guard if#2 @ B: y == 0\n"
                          "  kind: plain (no monitor)\n"
                          "\n"
                          "sub(Φ): 0\n"
                          "\n"
                          "Vars(Φ): none\n"
                          "\n"
                          "lifeline A: no monitor (state 0 B; traced: vc 3 × 8 B = 24 B)\n"
                          "\n"
                          "lifeline B: no monitor (state 0 B; traced: vc 3 × 8 B = 24 B)\n"
                          "\n"
                          "lifeline C: no monitor (state 0 B; traced: vc 3 × 8 B = 24 B)\n");
    free(got);
    t_free(c);
}

/* Plain guards are not unfolded, whatever connectives they use. */
Test(guards, plain_guards_are_not_unfolded)
{
    TComp *c = compile_ok(RING_DECLS "workflow w() {\n" RING_MSGS
                                     "  if (ok ? x > 1 : y < 2) == !ok @ A { A: x = 1; }\n"
                                     "  if false || x != y @ B { B: y = 1; }\n"
                                     "}\n");
    for (int i = 0; i < 2; i++) {
        cr_expect(!guard_at(c, i)->cpl);
        cr_expect_null(guard_at(c, i)->root);
    }
    cr_expect_eq(c->comp.guards->subs.len, 0);
    t_free(c);
}

/* Src -> Mid -> Owner; Owner -> Far; Far never reaches Owner. */
static const char *FORWARD_SRC =
    "lifeline Owner, Mid, Src, Far, Idle;\n"
    "var x: int = 0;\n"
    "var ok: bool = false;\n"
    "workflow w() {\n"
    "  Src(x) -> Mid(x);\n"
    "  Mid(x) -> Owner(x);\n"
    "  Owner(x) -> Far(x);\n"
    "  if @Src(once ok) && @Far(once ok) && @Src.x > 0 && @Far.x > 0 @ Owner { Owner: x = 1; }\n"
    "}\n";

Test(guards, unreachable_lifeline_exports_nothing)
{
    TComp *c = compile_ok(FORWARD_SRC);
    enum { OWNER, MID, SRC, FAR, IDLE };
    const ZLifelineMonitor *far = monitor(c, FAR);
    cr_expect(!far->needs_monitor);
    cr_expect_eq(far->evaluates.len, 0);
    cr_expect_eq(far->bool_views.len, 0);
    cr_expect_eq(far->var_views.len, 0);
    cr_expect(!monitor(c, IDLE)->needs_monitor);
    /* the owner keeps no entry about Far */
    const ZLifelineMonitor *own = monitor(c, OWNER);
    for (int i = 0; i < own->bool_views.len; i++)
        cr_expect_neq(((const ZViewEntry *)ZU_VEC_AT(own->bool_views, i))->life, FAR);
    for (int i = 0; i < own->var_views.len; i++)
        cr_expect_neq(((const ZViewEntry *)ZU_VEC_AT(own->var_views, i))->life, FAR);
    t_free(c);
}

Test(guards, forwarders_carry_views)
{
    TComp *c = compile_ok(FORWARD_SRC);
    T_CAPTURE(got, zg_print(out, c->comp.guards));
    const char *tail = strstr(got, "\nlifeline Owner:");
    cr_assert_not_null(tail, "%s", got);
    cr_expect_str_eq(
        tail,
        "\nlifeline Owner: monitor\n"
        "  evaluates: φ3 φ4 φ5 φ6 φ7 φ8 φ9\n"
        "  bool views: view(Src, φ2)\n"
        "  var views: var(Src, x)\n"
        "  state: vc 2 × 8 B + values 7 B + old 7 B + views 1 B + vars 1 × 16 B = 47 B; traced: "
        "vc 5 × 8 B, 71 B\n"
        "\n"
        "lifeline Mid: monitor\n"
        "  evaluates: none\n"
        "  bool views: view(Src, φ2)\n"
        "  var views: var(Src, x)\n"
        "  state: vc 2 × 8 B + values 0 B + old 0 B + views 1 B + vars 1 × 16 B = 33 B; traced: "
        "vc 5 × 8 B, 57 B\n"
        "\n"
        "lifeline Src: monitor\n"
        "  evaluates: φ0 φ1 φ2\n"
        "  bool views: view(Src, φ2)\n"
        "  var views: var(Src, x)\n"
        "  state: vc 1 × 8 B + values 3 B + old 3 B + views 0 B + vars 0 × 16 B = 14 B; traced: "
        "vc 5 × 8 B, 46 B\n"
        "\n"
        "lifeline Far: no monitor (state 0 B; traced: vc 5 × 8 B = 40 B)\n"
        "\n"
        "lifeline Idle: no monitor (state 0 B; traced: vc 5 × 8 B = 40 B)\n",
        "%s", got);
    free(got);
    t_free(c);
}

Test(guards, control_messages_are_forwarding_edges)
{
    /* B reaches A only through the control broadcast of C's if */
    TComp *c = compile_ok("lifeline A, B, C;\n"
                          "var x: int = 0;\n"
                          "var ok: bool = false;\n"
                          "workflow w() {\n"
                          "  B(x) -> C(x);\n"
                          "  if x > 0 @ C { A: x = 1; }\n"
                          "  if @B(once ok) @ A { A: x = 2; }\n"
                          "}\n");
    const ZLifelineMonitor *a = monitor(c, 0), *b = monitor(c, 1), *cc = monitor(c, 2);
    cr_expect_eq(a->bool_views.len, 1);
    cr_expect_eq(b->bool_views.len, 1);
    cr_expect_eq(cc->bool_views.len, 1);
    cr_expect(cc->needs_monitor);
    t_free(c);
}

Test(guards, nested_at_switches_evaluation_lifeline)
{
    /* A needs view(B, @C(ok)); B needs view(C, ok); C evaluates ok */
    TComp *c = compile_ok("lifeline A, B, C;\n"
                          "var x: int = 0;\n"
                          "var ok: bool = false;\n"
                          "workflow w() {\n"
                          "  C(ok) -> B(ok);\n"
                          "  B(ok) -> A(ok);\n"
                          "  if @B(@C(ok)) @ A { A: x = 1; }\n"
                          "}\n");
    /* subs: ok, @C(ok), @B(@C(ok)) */
    cr_assert_eq(c->comp.guards->subs.len, 3);
    const ZLifelineMonitor *a = monitor(c, 0), *b = monitor(c, 1), *cc = monitor(c, 2);
    cr_assert_eq(a->evaluates.len, 1);
    cr_expect_eq(((const ZFormula *)ZU_VEC_AT(a->evaluates, 0))->id, 2);
    cr_assert_eq(b->evaluates.len, 1);
    cr_expect_eq(((const ZFormula *)ZU_VEC_AT(b->evaluates, 0))->id, 1);
    cr_assert_eq(cc->evaluates.len, 1);
    cr_expect_eq(((const ZFormula *)ZU_VEC_AT(cc->evaluates, 0))->id, 0);
    /* A keeps view(B, φ1); B exports view(B, φ1) and keeps view(C, φ0);
     * C exports view(C, φ0) only: it is not downstream of B. */
    cr_assert_eq(a->bool_views.len, 1);
    cr_assert_eq(b->bool_views.len, 2);
    cr_assert_eq(cc->bool_views.len, 1);
    const ZViewEntry *cv = ZU_VEC_AT(cc->bool_views, 0);
    cr_expect_eq(cv->life, 2);
    cr_expect_eq(cv->sub, 0);
    t_free(c);
}

/* ---- sharing ------------------------------------------------------------ */

/* A program text built in a ZBuf (freed by the caller). */
static char *src_printf(const char *fmt, ...) ZG_PRINTF(1, 2);
static char *src_printf(const char *fmt, ...)
{
    char *s = NULL;
    va_list ap;
    va_start(ap, fmt);
    cr_assert(vasprintf(&s, fmt, ap) >= 0);
    va_end(ap);
    return s;
}

/* guards t0 = base, tK = tK-1 && tK-1 for K = 1..levels */
static void tower_decls(ZBuf *b, const char *name, const char *base, int levels)
{
    zu_buf_printf(b, "guard %s0 = %s;\n", name, base);
    for (int k = 1; k <= levels; k++)
        zu_buf_printf(b, "guard %s%d = %s%d && %s%d;\n", name, k, name, k - 1, name, k - 1);
}

/* A named guard used twice is one subformula, not two copies: a tower of
 * 30 levels, each guard using the previous one twice, is 2^30 atoms
 * written out but 33 subformulas, unfolded once each (the test times out
 * if the unfolding or the printing follows the uses). */
Test(guards, a_guard_used_twice_is_one_subformula, .timeout = 20)
{
    ZBuf b = {0};
    zu_buf_puts(&b, RING_DECLS);
    tower_decls(&b, "t", "once ok", 30);
    zu_buf_puts(&b, "workflow w() {\n" RING_MSGS "  if t30 @ A { A: x = 1; }\n}\n");
    TComp *c = compile_ok(b.data);
    const ZGuardInfo *g = guard_at(c, 0);
    cr_assert(g->cpl);
    /* true, ok, true since ok, and 30 conjunctions */
    cr_expect_eq(c->comp.guards->subs.len, 33);
    const ZFormula *f = g->root;
    for (int k = 30; k > 0; k--) {
        cr_assert_eq(f->kind, F_AND, "level %d", k);
        cr_assert_eq(f->a, f->b, "level %d: the two uses are two subformulas", k);
        f = f->a;
    }
    cr_expect_eq(f->kind, F_SINCE);
    /* the printed tables stay small: the unfolded guard refers to the
     * subformulas it printed before */
    T_CAPTURE(got, zg_print(out, c->comp.guards));
    cr_expect_lt(strlen(got), 8000, "zgc guards printed %zu bytes", strlen(got));
    cr_expect(strstr(got, "  unfolded: true since ok && φ2 && φ3 && φ4"), "%.300s", got);
    free(got);
    t_free(c);
    zu_buf_free(&b);
}

/* `past` nested 10 deep over 10 lifelines: past φ is @L0(true since φ) ||
 * … || @L9(true since φ), φ used 10 times per level; sub(Φ) grows by 20
 * per level (the since, 10 @, 9 ||) and the printed tables by about 3.5 kB
 * (the 20 rows, and 10 more views on each of the 10 lifelines), where
 * they were 10 times longer per level (3 GB at 10 levels). */
Test(guards, nested_past_is_linear, .timeout = 20)
{
    for (int depth = 1; depth <= 10; depth++) {
        ZBuf f = {0};
        zu_buf_puts(&f, "x > 0");
        for (int k = 0; k < depth; k++) {
            char *inner = src_printf("past (%s)", f.data);
            zu_buf_free(&f);
            zu_buf_puts(&f, inner);
            free(inner);
        }
        ZBuf b = {0};
        zu_buf_puts(&b, "lifeline L0, L1, L2, L3, L4, L5, L6, L7, L8, L9;\nvar x: int = 0;\n"
                        "workflow w() {\n");
        for (int i = 0; i < 10; i++) zu_buf_printf(&b, "  L%d(x) -> L%d(x);\n", i, (i + 1) % 10);
        zu_buf_printf(&b, "  if %s @ L0 { L0: x = 1; }\n}\n", f.data);
        TComp *c = compile_ok(b.data);
        /* true, x > 0, then 20 per level */
        cr_expect_eq(c->comp.guards->subs.len, 2 + 20 * depth, "depth %d", depth);
        T_CAPTURE(got, zg_print(out, c->comp.guards));
        cr_expect_lt(strlen(got), (size_t)6000 * (size_t)depth + 4000, "depth %d printed %zu bytes",
                     depth, strlen(got));
        free(got);
        t_free(c);
        zu_buf_free(&b);
        zu_buf_free(&f);
    }
}

/* An atom whose terms use a plain guard is kept with the guard written out
 * while that is small, and with the guard's name beyond
 * ZG_ATOM_INLINE_MAX nodes (a tower of 30 levels written out is 2^31). */
Test(guards, large_guards_in_terms_keep_their_names, .timeout = 20)
{
    ZBuf b = {0};
    zu_buf_puts(&b, RING_DECLS);
    tower_decls(&b, "p", "x > 0", 30);
    zu_buf_puts(&b, "workflow w() {\n" RING_MSGS "  if (p2 ? 1 : 0) == @B.x @ A { A: x = 1; }\n"
                    "  if (p30 ? 1 : 0) == @B.x @ A { A: x = 2; }\n}\n");
    TComp *c = compile_ok(b.data);
    const ZGuardInfo *small = guard_at(c, 0), *big = guard_at(c, 1);
    cr_assert_eq(small->root->kind, F_ATOM);
    char *t = formula_text(c, small->root);
    cr_expect_str_eq(t, "(x > 0 && x > 0 && (x > 0 && x > 0) ? 1 : 0) == @B.x");
    free(t);
    cr_assert_eq(big->root->kind, F_ATOM);
    t = formula_text(c, big->root);
    cr_expect_str_eq(t, "(p30 ? 1 : 0) == @B.x");
    free(t);
    cr_expect_eq(c->comp.guards->subs.len, 2);
    t_free(c);
    zu_buf_free(&b);
}

/* A chain of 20,000 guards, each using the previous one, unfolds in time
 * linear in the chain (it was cubic: 4.5 s for 4,000). */
Test(guards, long_chain_of_guards, .timeout = 30)
{
    int n = 20000;
    ZBuf b = {0};
    zu_buf_puts(&b, RING_DECLS "guard g0 = once ok;\n");
    for (int k = 1; k <= n; k++) zu_buf_printf(&b, "guard g%d = g%d || x == %d;\n", k, k - 1, k);
    zu_buf_printf(&b, "workflow w() {\n" RING_MSGS "  if g%d @ A { A: x = 1; }\n}\n", n);
    TComp *c = compile_ok(b.data);
    /* true, ok, since, then an atom and a disjunction per guard */
    cr_expect_eq(c->comp.guards->subs.len, 3 + 2 * n);
    cr_expect_eq(monitor(c, 0)->evaluates.len, 3 + 2 * n);
    T_CAPTURE(got, zg_print(out, c->comp.guards));
    cr_expect_lt(strlen(got), (size_t)200 * n);
    free(got);
    t_free(c);
    zu_buf_free(&b);
}
