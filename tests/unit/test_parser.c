/* Parser: the AST of every declaration and statement form, precedence,
 * syntax errors (quoted tokens, locations) and recovery. */
#include <criterion/criterion.h>

#include "helpers.h"

static ZDecl *decl(TComp *c, int i) { return c->comp.prog->decls.items[i]; }

static ZExpr *guard_expr(const char *formula, TComp **out)
{
    char *src;
    if (asprintf(&src, "guard g = %s;", formula) < 0) abort();
    TComp *c = t_compile(src, T_PARSE);
    cr_assert(c->ok, "parse failed: %s", c->diag_text);
    *out = c;
    ZExpr *e = decl(c, 0)->expr;
    free(src); /* the compilation keeps its own copy */
    return e;
}

static char *show(const ZExpr *e)
{
    ZBuf b = {0};
    za_print_expr(&b, e);
    return b.data;
}

Test(parser, declarations)
{
    TComp *c = t_compile("lifeline A, B;\n"
                         "const MAX = 5;\n"
                         "enum Status { pending, passed, failed, }\n"
                         "var verdict: str;\n"
                         "var trials: int = 0;\n"
                         "guard ok = @B(x != 1 since x == 2);\n",
                         T_PARSE);
    cr_assert(c->ok, "%s", c->diag_text);
    cr_assert_eq(c->comp.prog->decls.len, 7);
    cr_expect_eq(decl(c, 0)->kind, D_LIFELINE);
    cr_expect_str_eq(decl(c, 1)->name, "B");
    cr_expect_eq(decl(c, 2)->kind, D_CONST);
    cr_expect_eq(decl(c, 3)->kind, D_ENUM);
    cr_expect_eq(decl(c, 3)->members.len, 3);
    cr_expect_eq(decl(c, 4)->kind, D_VAR);
    cr_expect_eq(decl(c, 4)->type->kind, TY_STR);
    cr_expect_null(decl(c, 4)->expr);
    cr_expect_eq(decl(c, 5)->expr->kind, E_INT);
    cr_expect_eq(decl(c, 6)->kind, D_GUARD);
    cr_expect_eq(decl(c, 6)->expr->kind, E_AT);
    /* spans: the var declaration covers `var verdict: str;` */
    cr_expect_eq(decl(c, 4)->span.first_line, 4);
    cr_expect_eq(decl(c, 4)->span.first_column, 1);
    cr_expect_eq(decl(c, 4)->span.last_column, 17);
    cr_expect_eq(decl(c, 4)->name_span.first_column, 5);
    t_free(c);
}

Test(parser, imports_fragments_and_uses)
{
    TComp *c = t_compile("import \"lib.zg\";\n"
                         "fragment f(W: lifeline, x: str, const n: int) {\n"
                         "    var y: Mode;\n"
                         "    W: y = g(x, n);\n"
                         "}\n"
                         "workflow w() { f(A, s, 3); A(s) -> B(s); }\n",
                         T_PARSE);
    /* lib.zg is not found: only that error */
    cr_expect(strstr(c->diag_text, "cannot find `lib.zg`") != NULL, "%s", c->diag_text);
    cr_expect_eq(c->comp.diag.errors, 1, "%s", c->diag_text);
    ZDecl *imp = decl(c, 0), *f = decl(c, 1), *w = decl(c, 2);
    cr_expect_eq(imp->kind, D_IMPORT);
    cr_expect_str_eq(imp->name, "lib.zg");
    cr_expect_eq(imp->name_span.first_column, 8);
    cr_expect_eq(f->kind, D_FRAGMENT);
    cr_assert_eq(f->params.len, 3);
    cr_expect_eq(((ZParam *)f->params.items[0])->fkind, FP_LIFELINE);
    cr_expect_null(((ZParam *)f->params.items[0])->type);
    cr_expect_eq(((ZParam *)f->params.items[1])->fkind, FP_VAR);
    cr_expect_eq(((ZParam *)f->params.items[1])->type->kind, TY_STR);
    cr_expect_eq(((ZParam *)f->params.items[2])->fkind, FP_CONST);
    cr_expect_str_eq(((ZParam *)f->params.items[2])->name, "n");
    cr_assert_eq(f->locals.len, 1);
    cr_expect_str_eq(((ZDecl *)f->locals.items[0])->name, "y");
    cr_expect_eq(((ZDecl *)f->locals.items[0])->type->kind, TY_NAMED);
    cr_expect_eq(f->body.len, 1);
    ZStmt *use = w->body.items[0];
    cr_expect_eq(use->kind, S_USE);
    cr_expect_str_eq(use->life.name, "f");
    cr_expect_eq(use->args.len, 3);
    cr_expect_eq(((ZStmt *)w->body.items[1])->kind, S_MSG);
    t_free(c);
}

Test(parser, actions)
{
    TComp *c = t_compile(
        "llm assess(notes: str, diag: str) -> (verdict: str, reason: str) {\n"
        "    system = \"\"\"You are an expert.\n"
        "                Be brief.\"\"\";\n"
        "    user = \"Notes: {notes}\";\n"
        "    parse = json; temperature = 0; retries = forever;\n"
        "    fallback = (\"unknown\", \"no answer\");\n"
        "}\n"
        "pure inc(t: int) -> int = t + 1;\n"
        "extern pure score(text: str) -> float;\n"
        "effect send_reply(to: str, body: str) -> str;\n"
        "human approve(draft: str) -> bool { kind = confirm; prompt = \"Send?\\n{draft}\"; }\n"
        "pure pair(a: int) -> (int, str) = (a, \"x\");\n",
        T_PARSE);
    cr_assert(c->ok, "%s", c->diag_text);
    ZDecl *llm = decl(c, 0);
    cr_expect_eq(llm->action, ACT_LLM);
    cr_expect(llm->named_results);
    cr_expect_eq(llm->params.len, 2);
    cr_expect_eq(llm->results.len, 2);
    cr_assert_eq(llm->props.len, 6);
    ZProp *sys = llm->props.items[0];
    cr_expect_str_eq(sys->value->lit.s, "You are an expert.\nBe brief.");
    ZProp *parse = llm->props.items[2];
    cr_expect_eq(parse->value->kind, E_NAME);
    cr_expect_str_eq(parse->value->name, "json");
    ZProp *retries = llm->props.items[4];
    cr_expect_str_eq(retries->value->name, "forever");
    cr_expect_eq(((ZProp *)llm->props.items[5])->value->kind, E_TUPLE);
    cr_expect_eq(decl(c, 1)->action, ACT_PURE);
    cr_expect_eq(decl(c, 1)->expr->kind, E_BINARY);
    cr_expect_not(decl(c, 1)->named_results);
    cr_expect_eq(decl(c, 2)->action, ACT_EXTERN_PURE);
    cr_expect_eq(decl(c, 3)->action, ACT_EFFECT);
    cr_expect_eq(decl(c, 4)->action, ACT_HUMAN);
    cr_expect_eq(decl(c, 5)->results.len, 2);
    t_free(c);
}

Test(parser, statements)
{
    TComp *c =
        t_compile("workflow w(topic: str @ User, n: int @ Writer) -> (str, int) {\n"
                  "    User(topic, 3) -> Writer(topic, 3);\n"
                  "    User(topic) -> User(copy);\n"
                  "    Writer: draft = compose(topic);\n"
                  "    Writer: (a, b) = split(draft);\n"
                  "    Writer: log(draft);\n"
                  "    Writer { y = f(x); z = y + 1; }\n"
                  "    if ok @ A { skip B; } else if other @ A { skip C; } else { skip D; }\n"
                  "    while n < 3 @ Writer { Writer: n = n + 1; } else { skip User; }\n"
                  "    parallel { branch { A(x) -> B(x); } branch { C(y) -> D(y); } }\n"
                  "    coregion { A(x) -> C(a); B(y) -> C(b); }\n"
                  "    return (draft @ Writer, n @ Writer);\n"
                  "}\n",
                  T_PARSE);
    cr_assert(c->ok, "%s", c->diag_text);
    ZDecl *w = decl(c, 0);
    cr_expect_eq(w->kind, D_WORKFLOW);
    cr_expect_eq(w->params.len, 2);
    cr_expect_str_eq(((ZParam *)w->params.items[1])->owner, "Writer");
    cr_expect_eq(w->results.len, 2);
    cr_assert_eq(w->body.len, 11);
    ZStmt **s = (ZStmt **)w->body.items;
    cr_expect_eq(s[0]->kind, S_MSG);
    cr_expect_eq(s[0]->args.len, 2);
    cr_expect_eq(s[0]->params.len, 2);
    cr_expect_eq(((ZExpr *)s[0]->params.items[1])->kind, E_INT);
    cr_expect_eq(s[1]->kind, S_MSG);
    cr_expect_str_eq(s[1]->to.name, "User");
    cr_expect_eq(s[2]->kind, S_ASSIGN);
    cr_expect_eq(s[2]->targets.len, 1);
    cr_expect_eq(s[3]->targets.len, 2);
    cr_expect(s[3]->tuple_lhs);
    cr_expect_eq(s[4]->targets.len, 0);
    cr_expect_eq(s[4]->expr->kind, E_CALL);
    cr_expect_eq(s[5]->kind, S_BLOCK);
    cr_expect_eq(s[5]->body.len, 2);
    cr_expect_str_eq(((ZStmt *)s[5]->body.items[1])->life.name, "Writer");
    cr_expect_eq(s[6]->kind, S_IF);
    cr_expect(s[6]->has_else);
    cr_assert_eq(s[6]->els.len, 1);
    cr_expect_eq(((ZStmt *)s[6]->els.items[0])->kind, S_IF); /* else if */
    cr_expect_eq(s[7]->kind, S_WHILE);
    cr_expect(s[7]->has_else);
    cr_expect_eq(s[8]->kind, S_PAR);
    cr_expect_eq(s[8]->branches.len, 2);
    cr_expect_eq(s[9]->kind, S_COREGION);
    cr_expect_eq(s[9]->body.len, 2);
    cr_expect_eq(s[10]->kind, S_RETURN);
    cr_expect(s[10]->tuple_ret);
    cr_expect_eq(w->ret, s[10]);
    t_free(c);
}

Test(parser, cpl_precedence)
{
    TComp *c;
    /* prev binds looser than == but tighter than && (language reference §6) */
    ZExpr *e = guard_expr("prev status == passed && ok", &c);
    cr_assert_eq(e->kind, E_BINARY);
    cr_expect_eq(e->op, OP_AND);
    cr_assert_eq(e->a->kind, E_PREV);
    cr_expect_eq(e->a->a->kind, E_BINARY);
    cr_expect_eq(e->a->a->op, OP_EQ);
    t_free(c);

    e = guard_expr("a != 1 since b == 2 && c || d", &c);
    cr_assert_eq(e->op, OP_OR);
    cr_assert_eq(e->a->op, OP_AND);
    cr_expect_eq(e->a->a->kind, E_SINCE);
    t_free(c);

    e = guard_expr("@T.candidate == candidate && seen S && past once historically x", &c);
    cr_assert_eq(e->op, OP_AND);
    cr_expect_eq(e->a->a->a->kind, E_AT_VAR);
    cr_expect_eq(e->a->b->kind, E_SEEN);
    cr_expect_eq(e->b->kind, E_PAST);
    cr_expect_eq(e->b->a->kind, E_ONCE);
    cr_expect_eq(e->b->a->a->kind, E_HIST);
    t_free(c);

    e = guard_expr("1 + 2 * 3 < 4 - -5 ? x : y", &c);
    char *s = show(e);
    cr_expect_str_eq(s, "1 + 2 * 3 < 4 - -5 ? x : y");
    cr_expect_eq(e->kind, E_COND);
    cr_expect_eq(e->c->op, OP_LT);
    free(s);
    t_free(c);

    e = guard_expr("(a || b) && !(c == d)", &c);
    s = show(e);
    cr_expect_str_eq(s, "(a || b) && !(c == d)");
    free(s);
    t_free(c);
}

Test(parser, strings)
{
    TComp *c = t_compile("const a = \"tab\\tq\\\"\\\\ \\u{1F600}\";\n"
                         "const b = \"\"\"\n    first\n      second\n    \"\"\";\n",
                         T_PARSE);
    cr_assert(c->ok, "%s", c->diag_text);
    cr_expect_str_eq(decl(c, 0)->expr->lit.s, "tab\tq\"\\ \xF0\x9F\x98\x80");
    cr_expect_str_eq(decl(c, 1)->expr->lit.s, "first\n  second");
    t_free(c);
}

Test(parser, syntax_error_quotes_tokens)
{
    TComp *c =
        t_compile("lifeline A, B;\nworkflow w() {\n    A(x) -> B(x)\n    skip A;\n}\n", T_PARSE);
    cr_expect_not(c->ok);
    /* a `;` missing at the end of a line: reported after the line's last
       token, where it belongs */
    cr_expect(strstr(c->diag_text, "test.zg:3:17: error: expected `;` after `)`\n"
                                   "    3 |     A(x) -> B(x)\n"
                                   "      |                 ^\n"),
              "got: %s", c->diag_text);
    t_free(c);
}

Test(parser, syntax_error_identifier_text)
{
    TComp *c = t_compile("lifeline A B;", T_PARSE);
    cr_expect(
        strstr(c->diag_text, "test.zg:1:12: error: unexpected identifier `B`, expected `;` or `,`"),
        "got: %s", c->diag_text);
    t_free(c);
}

Test(parser, unclosed_brace_points_at_opener)
{
    TComp *c = t_compile("lifeline A;\nworkflow w() {\n    skip A;\n", T_PARSE);
    cr_expect(strstr(c->diag_text, "test.zg:4:1: error: unexpected end of file"), "got: %s",
              c->diag_text);
    cr_expect(strstr(c->diag_text, "test.zg:2:14: note: to close the `{` opened here"), "got: %s",
              c->diag_text);
    t_free(c);
}

Test(parser, recovers_and_reports_every_error)
{
    TComp *c = t_compile("lifeline A, B;\n"
                         "var x: int = ;\n" /* error 1 */
                         "var y: int = 2;\n"
                         "workflow w() {\n"
                         "    A(x) -> B(x);\n"
                         "    A: x = 1 +;\n" /* error 2 */
                         "    skip B;\n"
                         "    A(x) => B(x);\n" /* error 3 */
                         "}\n",
                         T_PARSE);
    cr_expect_eq(c->comp.diag.errors, 3, "got: %s", c->diag_text);
    cr_expect(strstr(c->diag_text, "test.zg:2:14: error: unexpected `;`"));
    cr_expect(strstr(c->diag_text, "test.zg:6:15: error: unexpected `;`"));
    cr_expect(strstr(c->diag_text, "test.zg:8:10: error: unexpected `=`"));
    t_free(c);
}

Test(parser, store_and_atomic_block)
{
    TComp *c = t_compile("store S { cell c: int = 1; tools t, u; consistency L2; }\n"
                         "workflow w() { A: atomic S { x = read c; f(x); write c = x + 1;\n"
                         "  write tools = (t); } }",
                         T_PARSE);
    cr_assert_eq(c->comp.diag.errors, 0, "got: %s", c->diag_text);
    ZDecl *st = decl(c, 0);
    cr_assert_eq(st->kind, D_STORE);
    cr_expect_str_eq(st->name, "S");
    cr_assert_eq(st->cells.len, 1);
    cr_expect_str_eq(((ZDecl *)st->cells.items[0])->name, "c");
    cr_assert_eq(st->tools.len, 2);
    cr_expect_str_eq(st->level_name, "L2");
    ZStmt *op = decl(c, 1)->body.items[0];
    cr_assert_eq(op->kind, S_ATOMIC);
    cr_expect_str_eq(op->store_name, "S");
    cr_assert_eq(op->body.len, 4);
    ZStmt *rd = op->body.items[0], *call = op->body.items[1], *wr = op->body.items[2],
          *reg = op->body.items[3];
    cr_expect_eq(rd->kind, S_READ);
    cr_expect_str_eq(rd->cell, "c");
    cr_expect_eq(call->kind, S_ASSIGN);
    cr_expect_eq(wr->kind, S_WRITE);
    cr_expect(!wr->registry);
    cr_expect_eq(reg->kind, S_WRITE);
    cr_expect(reg->registry);
    cr_expect_eq(reg->tools.len, 1);
    t_free(c);
}

Test(parser, mixed_named_results)
{
    TComp *c = t_compile("llm f(x: str) -> (a: str, int);", T_PARSE);
    cr_expect(strstr(c->diag_text, "test.zg:1:27: error: results must be all named or all unnamed"),
              "got: %s", c->diag_text);
    t_free(c);
}

Test(parser, nesting_limits)
{
    size_t n = 5000;
    char *src = malloc(n + 32);
    strcpy(src, "const c = ");
    memset(src + 10, '(', n);
    strcpy(src + 10 + n, "1;");
    TComp *c = t_compile(src, T_PARSE);
    cr_expect(strstr(c->diag_text, "brackets nested too deeply (the limit is 256)"), "got: %.300s",
              c->diag_text);
    cr_expect_eq(c->comp.diag.errors, 1);
    t_free(c);
    free(src);
}

Test(parser, ast_printer)
{
    TComp *c =
        t_compile("lifeline A, B;\nvar x: int = 1;\nworkflow w() { A(x) -> B(x); }\n", T_PARSE);
    cr_assert(c->ok);
    T_CAPTURE(text, za_print_program(out, c->comp.prog));
    cr_expect_str_eq(text, "lifeline A <1:10-1:10>\n"
                           "lifeline B <1:13-1:13>\n"
                           "var x: int = 1 <2:1-2:15>\n"
                           "workflow w() -> () <3:1-3:30>\n"
                           "  message A(x) -> B(x) <3:16-3:28>\n");
    free(text);
    t_free(c);
}
