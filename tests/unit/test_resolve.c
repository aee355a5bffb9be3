/* Unit tests for name resolution (resolve.c, language reference §3, §4
 * rule 5). */
#include <criterion/criterion.h>

#include "expect.h"

static TComp *resolve_ok(const char *text)
{
    TComp *c = t_compile(text, T_RESOLVE);
    cr_assert(c->ok, "resolution failed:\n%s", c->diag_text ? c->diag_text : "");
    return c;
}

static void expect_errors(const char *text, int errors, const char *want, const char *note)
{
    t_expect_errors(text, T_RESOLVE, errors, want, note);
}

static ZDecl *decl(TComp *c, const char *name)
{
    ZDecl *d = zr_lookup(c->comp.prog, name);
    cr_assert_not_null(d, "no declaration `%s`", name);
    return d;
}

static ZStmt *stmt_at(const ZVec *body, int i)
{
    cr_assert(i < body->len, "no statement %d", i);
    return ZU_VEC_AT(*body, i);
}

/* ---- symbol tables ----------------------------------------------------- */

Test(resolve, lifelines_and_vars_are_numbered)
{
    TComp *c = resolve_ok("lifeline A, B;\n"
                          "var x: int = 0;\n"
                          "lifeline C;\n"
                          "var y: str;\n"
                          "workflow w() {}\n");
    cr_expect_eq(c->comp.prog->lifelines.len, 3);
    cr_expect_eq(c->comp.prog->vars.len, 2);
    cr_expect_eq(decl(c, "A")->index, 0);
    cr_expect_eq(decl(c, "B")->index, 1);
    cr_expect_eq(decl(c, "C")->index, 2);
    cr_expect_eq(decl(c, "x")->index, 0);
    cr_expect_eq(decl(c, "y")->index, 1);
    cr_expect_eq(zr_lifeline(c->comp.prog, "C"), decl(c, "C"));
    cr_expect_null(zr_lifeline(c->comp.prog, "x"));
    cr_expect_null(zr_lookup(c->comp.prog, "nothing"));
    cr_expect_eq(c->comp.prog->workflows.len, 1);
    t_free(c);
}

Test(resolve, lookup_accepts_names_that_are_not_interned)
{
    TComp *c = resolve_ok("lifeline Alpha;\nvar count: int = 0;\nworkflow w() {}\n");
    char name[] = "count";
    cr_expect_eq(zr_lookup(c->comp.prog, name), decl(c, "count"));
    char life[] = "Alpha";
    cr_expect_not_null(zr_lifeline(c->comp.prog, life));
    t_free(c);
}

Test(resolve, enum_types_resolve)
{
    TComp *c = resolve_ok("lifeline A;\n"
                          "enum Status { pending, passed }\n"
                          "var s: Status = passed;\n"
                          "effect report(s: Status) -> (Status, int);\n"
                          "workflow w() {}\n");
    ZDecl *en = decl(c, "Status");
    ZDecl *v = decl(c, "s");
    cr_expect_eq(v->type->kind, TY_ENUM);
    cr_expect_eq(v->type->enum_decl, en);
    cr_expect_eq(en->type->kind, TY_ENUM);
    cr_expect_eq(en->type->enum_decl, en);
    cr_expect_eq(v->expr->name_kind, NAME_MEMBER);
    cr_expect_eq(v->expr->decl, en);
    cr_expect_eq(v->expr->member, 1);
    ZDecl *act = decl(c, "report");
    ZParam *p = ZU_VEC_AT(act->params, 0);
    cr_expect_eq(p->type->enum_decl, en);
    ZParam *r = ZU_VEC_AT(act->results, 0);
    cr_expect_eq(r->type->kind, TY_ENUM);
    t_free(c);
}

Test(resolve, names_in_expressions)
{
    TComp *c = resolve_ok("lifeline A, B;\n"
                          "const K = 2;\n"
                          "enum E { one, two }\n"
                          "var x: int = K;\n"
                          "var e: E = two;\n"
                          "guard g = x > K;\n"
                          "guard h = g && @B.x > 0 && @B(e == one) && seen A;\n"
                          "pure f(p: int, q: int) -> int = q + K;\n"
                          "workflow w() {\n"
                          "  A: x = f(x, len(\"ab\"));\n"
                          "  if h @ A { skip B; }\n"
                          "}\n");
    ZDecl *f = decl(c, "f");
    ZExpr *body = f->expr;
    cr_expect_eq(body->a->name_kind, NAME_PARAM);
    cr_expect_eq(body->a->decl, f);
    cr_expect_eq(body->a->member, 1);
    cr_expect_eq(body->b->name_kind, NAME_CONST);
    cr_expect_eq(body->b->decl, decl(c, "K"));

    ZExpr *h = decl(c, "h")->expr; /* ((g && @B.x > 0) && @B(..)) && seen A */
    cr_expect_eq(h->b->kind, E_SEEN);
    cr_expect_eq(h->b->life, 0);
    ZExpr *at = h->a->b;
    cr_expect_eq(at->kind, E_AT);
    cr_expect_eq(at->life, 1);
    ZExpr *atvar = h->a->a->b->a;
    cr_expect_eq(atvar->kind, E_AT_VAR);
    cr_expect_eq(atvar->life, 1);
    cr_expect_eq(atvar->decl, decl(c, "x"));
    ZExpr *g = h->a->a->a;
    cr_expect_eq(g->name_kind, NAME_GUARD);
    cr_expect_eq(g->decl, decl(c, "g"));

    ZStmt *s = stmt_at(&c->comp.wf->body, 0);
    cr_expect_eq(s->life.index, 0);
    ZTarget *t = ZU_VEC_AT(s->targets, 0);
    cr_expect_eq(t->var, decl(c, "x"));
    cr_expect_eq(s->expr->decl, f);
    cr_expect_eq(s->expr->builtin, BI_NONE);
    ZExpr *arg0 = ZU_VEC_AT(s->expr->args, 0), *arg1 = ZU_VEC_AT(s->expr->args, 1);
    cr_expect_eq(arg0->name_kind, NAME_VAR);
    cr_expect_eq(arg1->builtin, BI_LEN);
    cr_expect_null(arg1->decl);
    t_free(c);
}

Test(resolve, message_and_return_references)
{
    TComp *c = resolve_ok("lifeline A, B;\n"
                          "const K = 1;\n"
                          "var x: int = 0;\n"
                          "var y: int;\n"
                          "workflow w() -> int {\n"
                          "  A(x, 3) -> B(y, K);\n"
                          "  B { y = y + 1; x = y; }\n"
                          "  return y @ B;\n"
                          "}\n");
    ZStmt *m = stmt_at(&c->comp.wf->body, 0);
    cr_expect_eq(m->life.index, 0);
    cr_expect_eq(m->to.index, 1);
    ZExpr *p0 = ZU_VEC_AT(m->params, 0), *p1 = ZU_VEC_AT(m->params, 1);
    cr_expect_eq(p0->decl, decl(c, "y"));
    cr_expect_eq(p1->name_kind, NAME_CONST);
    ZStmt *blk = stmt_at(&c->comp.wf->body, 1);
    cr_expect_eq(blk->life.index, 1);
    for (int i = 0; i < blk->body.len; i++) {
        ZStmt *in = ZU_VEC_AT(blk->body, i);
        cr_expect_eq(in->life.index, 1);
        cr_expect_not(in->is_action);
    }
    ZStmt *ret = stmt_at(&c->comp.wf->body, 2);
    cr_expect_eq(c->comp.wf->ret, ret);
    ZReturnItem *it = ZU_VEC_AT(ret->items, 0);
    cr_expect_eq(it->at.index, 1);
    cr_expect_eq(it->value->decl, decl(c, "y"));
    t_free(c);
}

Test(resolve, action_statements_are_marked)
{
    TComp *c = resolve_ok("lifeline A;\n"
                          "var x: int = 0;\n"
                          "var s: str = \"\";\n"
                          "pure inc(t: int) -> int = t + 1;\n"
                          "effect log(m: str);\n"
                          "llm ask(q: str) -> (a: str) { user = \"{q}\"; parse = text; }\n"
                          "workflow w() {\n"
                          "  A: x = inc(x);\n"
                          "  A: log(s);\n"
                          "  A: s = ask(s);\n"
                          "  A: x = inc(x) + 1;\n"
                          "  A: x = len(s);\n"
                          "  A { x = inc(x); }\n"
                          "}\n");
    const ZVec *b = &c->comp.wf->body;
    cr_expect(stmt_at(b, 0)->is_action);
    cr_expect(stmt_at(b, 1)->is_action);
    cr_expect(stmt_at(b, 2)->is_action);
    cr_expect_not(stmt_at(b, 3)->is_action);
    cr_expect_not(stmt_at(b, 4)->is_action);
    cr_expect(((ZStmt *)ZU_VEC_AT(stmt_at(b, 5)->body, 0))->is_action);
    t_free(c);
}

/* ---- workflow inputs ---------------------------------------------------- */

Test(resolve, inputs_declare_missing_variables)
{
    TComp *c = resolve_ok("lifeline User, Writer;\n"
                          "var draft: str;\n"
                          "workflow one(topic: str @ Writer, draft: str @ User) {}\n"
                          "workflow two(topic: str @ User) {}\n");
    cr_expect_eq(c->comp.prog->vars.len, 2, "one implicit variable, shared");
    ZDecl *one = ZU_VEC_AT(c->comp.prog->workflows, 0),
          *two = ZU_VEC_AT(c->comp.prog->workflows, 1);
    ZParam *topic = ZU_VEC_AT(one->params, 0), *draft = ZU_VEC_AT(one->params, 1);
    ZParam *topic2 = ZU_VEC_AT(two->params, 0);
    cr_expect_not_null(topic->var);
    cr_expect_eq(topic->var->kind, D_VAR);
    cr_expect_eq(topic->var->index, 1);
    cr_expect_eq(topic->var->type, topic->type);
    cr_expect_eq(topic->owner_index, 1);
    cr_expect_eq(draft->var, decl(c, "draft"));
    cr_expect_eq(draft->owner_index, 0);
    cr_expect_eq(topic2->var, topic->var);
    cr_expect_eq(zr_lookup(c->comp.prog, "topic"), topic->var);
    t_free(c);
}

Test(resolve, input_clashes)
{
    expect_errors("lifeline A;\nconst n = 1;\nworkflow w(n: int @ A) {}\n", 1,
                  "test.zg:3:12: error: input `n` clashes with constant `n`",
                  "test.zg:2:7: note: previous declaration of `n` here");
    expect_errors("lifeline A;\nworkflow w(n: int @ A, n: int @ A) {}\n", 1,
                  "test.zg:2:24: error: duplicate input `n`", NULL);
    expect_errors("lifeline A;\nworkflow w(n: int @ B) {}\n", 1,
                  "test.zg:2:21: error: unknown lifeline `B`", NULL);
}

/* ---- numbering --------------------------------------------------------- */

Test(resolve, constructs_in_preorder)
{
    TComp *c = resolve_ok("lifeline A, B;\n"
                          "var ok: bool = true;\n"
                          "workflow first() {\n"
                          "  if ok @ A { skip B; }\n"
                          "}\n"
                          "workflow w() {\n"
                          "  if ok @ A {\n"                /* if#1 */
                          "    while ok @ B { skip A; }\n" /* while#2 */
                          "  } else {\n"
                          "    parallel {\n"                                   /* par 1 */
                          "      branch { if ok @ A { skip B; } }\n"           /* if#3 */
                          "      branch { parallel { branch { skip A; } } }\n" /* par 2 */
                          "    }\n"
                          "  }\n"
                          "  while ok @ A { skip B; }\n"        /* while#4 */
                          "  parallel { branch { skip B; } }\n" /* par 3 */
                          "}\n");
    ZDecl *first = ZU_VEC_AT(c->comp.prog->workflows, 0);
    cr_expect_eq(stmt_at(&first->body, 0)->construct, 1);
    const ZVec *b = &c->comp.wf->body;
    ZStmt *if1 = stmt_at(b, 0);
    cr_expect_eq(if1->construct, 1);
    cr_expect_eq(stmt_at(&if1->body, 0)->construct, 2);
    ZStmt *par1 = stmt_at(&if1->els, 0);
    cr_expect_eq(par1->construct, 1);
    ZBranch *br0 = ZU_VEC_AT(par1->branches, 0), *br1 = ZU_VEC_AT(par1->branches, 1);
    cr_expect_eq(stmt_at(&br0->body, 0)->construct, 3);
    cr_expect_eq(stmt_at(&br1->body, 0)->construct, 2);
    cr_expect_eq(stmt_at(b, 1)->construct, 4);
    cr_expect_eq(stmt_at(b, 2)->construct, 3);
    cr_expect_eq(c->comp.prog->n_controls, 4);
    cr_expect_eq(c->comp.prog->n_pars, 3);
    t_free(c);
}

/* ---- workflow selection ------------------------------------------------- */

static const char *TWO_WF = "lifeline A;\n"
                            "var ok: bool = true;\n"
                            "workflow a() { if ok @ A { skip A; } }\n"
                            "workflow b() {}\n";

Test(resolve, select_by_name)
{
    TComp *c = resolve_ok(TWO_WF);
    cr_expect_str_eq(c->comp.wf->name, "b", "the last one by default");
    cr_expect_eq(c->comp.prog->n_controls, 0);
    ZDecl *a = zr_select_workflow(c->comp.prog, "a", &c->comp.diag);
    cr_assert_not_null(a);
    cr_expect_str_eq(a->name, "a");
    cr_expect_eq(c->comp.prog->n_controls, 1);
    t_free(c);
}

Test(resolve, select_unknown_or_none)
{
    TComp *c = resolve_ok(TWO_WF);
    cr_expect_null(zr_select_workflow(c->comp.prog, "zz", &c->comp.diag));
    fflush(c->diag_file);
    cr_expect(strstr(c->diag_text, "test.zg:1:1: error: unknown workflow `zz`") != NULL, "%s",
              c->diag_text);
    cr_expect(strstr(c->diag_text, "the workflows in this file are `a`, `b`") != NULL, "%s",
              c->diag_text);
    t_free(c);

    TComp *d = t_compile("lifeline A;\n", T_RESOLVE);
    cr_expect_not(d->ok);
    cr_expect_null(d->comp.wf);
    cr_expect(strstr(d->diag_text, "test.zg:1:1: error: no workflow in this file") != NULL, "%s",
              d->diag_text);
    t_free(d);
}

/* ---- duplicates ------------------------------------------------------- */

Test(resolve, duplicates_per_namespace)
{
    expect_errors("lifeline A, B, A;\nworkflow w() {}\n", 1,
                  "test.zg:1:16: error: duplicate lifeline `A`",
                  "test.zg:1:10: note: previous declaration of `A` here");
    expect_errors("lifeline A;\nvar x: int;\nvar x: str;\nworkflow w() {}\n", 1,
                  "test.zg:3:5: error: duplicate variable `x`",
                  "test.zg:2:5: note: previous declaration of `x` here");
    expect_errors("lifeline A;\nconst x = 1;\nvar x: int;\nworkflow w() {}\n", 1,
                  "test.zg:3:5: error: variable `x` clashes with constant `x`", NULL);
    expect_errors("lifeline A;\nvar red: int;\nenum C { red }\nworkflow w() {}\n", 1,
                  "test.zg:3:10: error: enum member `red` clashes with variable `red`", NULL);
    expect_errors("lifeline A;\nenum C { red }\nenum D { red }\nworkflow w() {}\n", 1,
                  "test.zg:3:10: error: duplicate enum member `red`", NULL);
    expect_errors("lifeline A;\nguard g = true;\nconst g = 1;\nworkflow w() {}\n", 1,
                  "test.zg:3:7: error: constant `g` clashes with guard `g`", NULL);
    expect_errors("lifeline A;\nenum C { a }\nenum C { b }\nworkflow w() {}\n", 1,
                  "test.zg:3:6: error: duplicate enum `C`", NULL);
    expect_errors("lifeline A;\neffect f();\npure f() -> int = 1;\nworkflow w() {}\n", 1,
                  "test.zg:3:6: error: duplicate action `f`", NULL);
    expect_errors("lifeline A;\nworkflow w() {}\nworkflow w() {}\n", 1,
                  "test.zg:3:10: error: duplicate workflow `w`", NULL);
    expect_errors("lifeline A;\npure f(x: int, x: int) -> int = x;\nworkflow w() {}\n", 1,
                  "test.zg:2:16: error: duplicate parameter `x`", NULL);
    expect_errors(
        "lifeline A;\nllm f(x: str) -> (a: str, a: str) { user = \"{x}\"; parse = json; }\n"
        "workflow w() {}\n",
        1, "test.zg:2:27: error: duplicate output `a`", NULL);
}

Test(resolve, separate_namespaces_do_not_clash)
{
    TComp *c = resolve_ok("lifeline A, x;\n"
                          "var x: int = 0;\n"
                          "enum A2 { A }\n"
                          "pure x2(x: int) -> int = x;\n"
                          "effect w(A: int);\n"
                          "workflow w() { x: x = x2(x); }\n");
    t_free(c);
}

Test(resolve, builtin_names_are_reserved_for_builtins)
{
    expect_errors("lifeline A;\npure len(s: str) -> int = 0;\nworkflow w() {}\n", 1,
                  "test.zg:2:6: error: action `len` has the name of a builtin function", NULL);
}

/* ---- unknown names ------------------------------------------------------ */

Test(resolve, unknown_names_with_suggestions)
{
    expect_errors(
        "lifeline User, Writer;\nvar x: int = 0;\nworkflow w() { User(x) -> Writr(x); }\n", 1,
        "test.zg:3:27: error: unknown lifeline `Writr`",
        "test.zg:1:16: note: did you mean `Writer`?");
    expect_errors("lifeline A;\nvar draft: str = \"\";\nworkflow w() { A: draft = darft; }\n", 1,
                  "test.zg:3:27: error: unknown variable `darft`",
                  "test.zg:2:5: note: did you mean `draft`?");
    expect_errors("lifeline A;\nvar d: str = \"\";\nworkflow w() { A: summary = d; }\n", 1,
                  "test.zg:3:19: error: unknown variable `summary`", NULL);
    expect_errors("lifeline A;\nenum Status { a }\nvar s: Stats;\nworkflow w() {}\n", 1,
                  "test.zg:3:8: error: unknown type `Stats`", "note: did you mean `Status`?");
    expect_errors("lifeline A;\nvar s: str = \"\";\npure shout(t: str) -> str = t;\n"
                  "workflow w() { A: s = shuot(s); }\n",
                  1, "test.zg:4:23: error: unknown action `shuot`", "note: did you mean `shout`?");
    expect_errors("lifeline A;\nvar s: str = \"\";\nworkflow w() { A: s = zz; }\n", 1,
                  "test.zg:3:23: error: unknown variable `zz`", NULL);
}

Test(resolve, unknown_names_everywhere)
{
    /* one error per unknown name, wherever it is */
    expect_errors("lifeline A;\n"
                  "const K = nope1;\n"
                  "var v: int = nope2;\n"
                  "guard g = @Nope(true) && @A.nope3 && seen Nope2;\n"
                  "pure f(p: int) -> int = nope4 + p;\n"
                  "llm l(q: str) -> (a: str) { user = \"x\"; parse = text; fallback = nope5; }\n"
                  "workflow w() {\n"
                  "  A(nope6) -> Nope3(nope7);\n"
                  "  if nope8 @ Nope4 { skip Nope5; }\n"
                  "  return nope9 @ Nope6;\n"
                  "}\n",
                  15, "test.zg:10:10: error: unknown variable `nope9`", NULL);
}

Test(resolve, pure_parameters_are_local)
{
    expect_errors(
        "lifeline A;\npure f(p: int) -> int = p;\npure g(q: int) -> int = p;\nworkflow w() {}\n", 1,
        "test.zg:3:25: error: unknown variable `p`", NULL);
}

Test(resolve, assignments_need_variables)
{
    expect_errors("lifeline A;\nconst K = 1;\nworkflow w() { A: K = 2; }\n", 1,
                  "test.zg:3:19: error: cannot assign to constant `K`",
                  "test.zg:2:7: note: `K` is declared here");
    expect_errors("lifeline A;\nenum E { a, b }\nworkflow w() { A: (a) = 1; }\n", 1,
                  "test.zg:3:20: error: cannot assign to enum member `a`", NULL);
    expect_errors("lifeline A;\nguard g = true;\nworkflow w() { A { g = false; } }\n", 1,
                  "test.zg:3:20: error: cannot assign to guard `g`", NULL);
}

Test(resolve, causal_term_needs_a_variable)
{
    expect_errors("lifeline A, B;\nconst K = 1;\nworkflow w() { if @B.K > 0 @ A { skip B; } }\n", 1,
                  "test.zg:3:22: error: `@B.K` needs a variable, but `K` is a constant", NULL);
}

/* ---- structure ---------------------------------------------------------- */

Test(resolve, return_must_be_last)
{
    expect_errors("lifeline A;\nvar x: int = 0;\nvar ok: bool = true;\n"
                  "workflow w() -> int {\n"
                  "  return x @ A;\n"
                  "  if ok @ A { return x @ A; }\n"
                  "  parallel { branch { return x @ A; } }\n"
                  "  return x @ A;\n"
                  "}\n",
                  3, "test.zg:5:3: error: `return` must be the last statement of the workflow",
                  NULL);
    TComp *c = t_compile(
        "lifeline A;\nvar x: int = 0;\nworkflow w() -> int {\n  return x @ A;\n  A: x = 1;\n}\n",
        T_RESOLVE);
    cr_expect_not(c->ok);
    cr_expect(strstr(c->diag_text, "test.zg:4:3: error: `return` must be the last statement") !=
              NULL);
    t_free(c);
}

Test(resolve, recursion_among_pure_actions)
{
    expect_errors("lifeline A;\npure f(n: int) -> int = f(n);\nworkflow w() {}\n", 1,
                  "test.zg:2:25: error: recursion among pure actions: `f` -> `f`", NULL);
    expect_errors("lifeline A;\n"
                  "pure f(n: int) -> int = g(n) + 1;\n"
                  "pure g(n: int) -> int = h(n);\n"
                  "pure h(n: int) -> int = n > 0 ? f(n - 1) : 0;\n"
                  "workflow w() {}\n",
                  1, "test.zg:4:33: error: recursion among pure actions: `f` -> `g` -> `h` -> `f`",
                  NULL);
    /* a diamond is not a cycle; extern pure actions have no body */
    TComp *c = resolve_ok("lifeline A;\n"
                          "extern pure e(n: int) -> int;\n"
                          "pure a(n: int) -> int = b(n) + c(n);\n"
                          "pure b(n: int) -> int = c(n) * e(n);\n"
                          "pure c(n: int) -> int = e(n);\n"
                          "workflow w() {}\n");
    t_free(c);
}

Test(resolve, guards_may_not_refer_to_themselves)
{
    expect_errors("lifeline A;\nvar ok: bool = true;\nguard g = ok && prev g;\nworkflow w() {}\n",
                  1, "test.zg:3:22: error: guard `g` refers to itself: `g` -> `g`", NULL);
    expect_errors("lifeline A;\nguard g = h;\nguard h = !g;\nworkflow w() {}\n", 1,
                  "test.zg:3:12: error: guard `g` refers to itself: `g` -> `h` -> `g`", NULL);
    TComp *c =
        resolve_ok("lifeline A;\nvar ok: bool = true;\nguard g = ok;\nguard h = g && prev g;\n"
                   "workflow w() { if h || g @ A { skip A; } }\n");
    t_free(c);
}

Test(resolve, errors_do_not_stop_resolution)
{
    TComp *c =
        t_compile("lifeline A, A;\nvar x: Nope;\nworkflow w() { B: y = zz(1); }\n", T_RESOLVE);
    cr_expect_not(c->ok);
    cr_expect_eq(t_count(c->diag_text, ": error: "), 5, "%s", c->diag_text);
    t_free(c);
}

/* Named guards nest at most ZR_MAX_GUARD_DEPTH deep: the passes look
 * through them recursively (a chain of 200,000 crashed the checker on its
 * stack).  A chain of guards each only naming the next one, and a guard
 * that is too deep written out, are errors; a chain at the limit is not. */
Test(resolve, guards_nest_within_a_limit, .timeout = 60)
{
    int n = ZR_MAX_GUARD_DEPTH;
    ZBuf b = {0};
    /* aliases: the expanded depth stays 2, the chain is n + 1 long */
    zu_buf_puts(&b, "lifeline A;\nvar x: int = 0;\n");
    for (int k = 0; k <= n; k++) zu_buf_printf(&b, "guard a%d = a%d;\n", k, k + 1);
    zu_buf_printf(&b, "guard a%d = x > 0;\nworkflow w() { if a0 @ A { skip A; } }\n", n + 1);
    expect_errors(b.data, 1,
                  "test.zg:100002:16: error: `a100000` starts a chain of more than 100000 guards "
                  "and pure actions, "
                  "each using the next (the limit is 100000)",
                  NULL);
    zu_buf_free(&b);
    /* deep written out: each guard adds one level */
    zu_buf_puts(&b, "lifeline A;\nvar x: int = 0;\nguard d0 = x > 0;\n");
    for (int k = 1; k <= n; k++) zu_buf_printf(&b, "guard d%d = !d%d;\n", k, k - 1);
    zu_buf_printf(&b, "workflow w() { if d%d @ A { skip A; } }\n", n);
    expect_errors(b.data, 1,
                  "error: guard `d99999` is nested too deeply: with the guards it uses written "
                  "out it is more than 100000 levels deep (the limit is 100000)",
                  NULL);
    zu_buf_free(&b);
    /* just within (once (x > 0) is 3 levels), each guard declared before
     * the one it uses, CPL: every pass looks through all of them */
    zu_buf_puts(&b, "lifeline A;\nvar x: int = 0;\n");
    for (int k = n - 3; k >= 1; k--) zu_buf_printf(&b, "guard d%d = !d%d;\n", k, k - 1);
    zu_buf_printf(&b, "guard d0 = once (x > 0);\nworkflow w() { if d%d @ A { skip A; } }\n", n - 3);
    TComp *c = t_compile(b.data, T_PLAN);
    cr_expect(c->ok, "%.2000s", c->diag_text);
    cr_expect_eq(c->comp.guards->subs.len, 3 + n - 3);
    t_free(c);
    zu_buf_free(&b);
}
