/* Unit tests for the type and definedness checker (check*.c, language
 * reference §3–§6). */
#include <criterion/criterion.h>
#include <sys/resource.h>

#include "expect.h"

static TComp *check_ok(const char *text)
{
    TComp *c = t_compile(text, T_CHECK);
    cr_assert(c->ok, "rejected:\n%s\n--- diagnostics ---\n%s", text,
              c->diag_text ? c->diag_text : "");
    return c;
}

static void accepts(const char *text) { t_free(check_ok(text)); }

static void rejects(const char *text, int errors, const char *want, const char *note)
{
    t_expect_errors(text, T_CHECK, errors, want, note);
}

/* A program with lifelines A, B, C and a few variables with defaults;
 * the statements of `w` follow.  Line 8 is the first statement. */
#define PRE                   \
    "lifeline A, B, C;\n"     \
    "var n: int = 0;\n"       \
    "var m: int = 0;\n"       \
    "var x: float = 0.0;\n"   \
    "var s: str = \"\";\n"    \
    "var ok: bool = false;\n" \
    "workflow w() {\n"
#define POST "}\n"

static ZDecl *decl(TComp *c, const char *name)
{
    ZDecl *d = zr_lookup(c->comp.prog, name);
    cr_assert_not_null(d, "no declaration `%s`", name);
    return d;
}

/* ---- constants and defaults --------------------------------------------- */

Test(check, constants_fold)
{
    TComp *c = check_ok("lifeline A;\n"
                        "const A1 = 7 / 2 + B1;\n"
                        "const B1 = -(2 * 3) % 4;\n"
                        "const F = 1.5 * 2.0;\n"
                        "const S = \"ab\" + \"cd\";\n"
                        "const T = A1 >= 1 && S == \"abcd\" ? !false : false;\n"
                        "enum E { p, q }\n"
                        "var e: E = 1 > 2 ? p : q;\n"
                        "var k: int = A1 * 2;\n"
                        "workflow w() {}\n");
    ZDecl *a1 = decl(c, "A1");
    cr_expect_eq(a1->type->kind, TY_INT);
    cr_assert_eq(a1->expr->kind, E_INT);
    cr_expect_eq(a1->expr->lit.i, 5);            /* 3 + 2 */
    cr_expect_eq(decl(c, "B1")->expr->lit.i, 2); /* -6 % 4: the sign of the divisor */
    cr_expect_float_eq(decl(c, "F")->expr->lit.f, 3.0, 1e-12);
    ZExpr *s = decl(c, "S")->expr;
    cr_assert_eq(s->kind, E_STR);
    cr_expect_eq(s->slen, 4);
    cr_expect_eq(memcmp(s->lit.s, "abcd", 4), 0);
    ZExpr *t = decl(c, "T")->expr;
    cr_assert_eq(t->kind, E_BOOL);
    cr_expect(t->lit.b);
    ZExpr *e = decl(c, "e")->expr;
    cr_assert_eq(e->kind, E_NAME);
    cr_expect_eq(e->name_kind, NAME_MEMBER);
    cr_expect_eq(e->member, 1);
    cr_expect_eq(e->type->kind, TY_ENUM);
    ZExpr *k = decl(c, "k")->expr;
    cr_assert_eq(k->kind, E_INT);
    cr_expect_eq(k->lit.i, 10);
    t_free(c);
}

Test(check, constant_errors)
{
    rejects("lifeline A;\nconst K = 1 / 0;\nworkflow w() {}\n", 1,
            "test.zg:2:11: error: division by zero in constant expression", NULL);
    rejects("lifeline A;\nconst K = 5 % (2 - 2);\nworkflow w() {}\n", 1,
            "test.zg:2:11: error: division by zero in constant expression", NULL);
    rejects("lifeline A;\nconst K = 9223372036854775807 * 2;\nworkflow w() {}\n", 1,
            "test.zg:2:11: error: integer overflow in constant expression", NULL);
    rejects(
        "lifeline A;\nconst K = -9223372036854775807 - 1;\nconst L = K / -1;\nworkflow w() {}\n", 1,
        "test.zg:3:11: error: integer overflow in constant expression", NULL);
    rejects("lifeline A;\nconst K = 1e308 * 10.0;\nworkflow w() {}\n", 1,
            "test.zg:2:11: error: float overflow in constant expression", NULL);
    rejects("lifeline A;\nconst K = L;\nconst L = K + 1;\nworkflow w() {}\n", 1,
            "test.zg:3:11: error: constant `K` is defined in terms of itself", NULL);
    rejects("lifeline A;\nvar v: int = 1;\nconst K = v;\nworkflow w() {}\n", 1,
            "test.zg:3:11: error: cannot read variable `v` in a constant expression", NULL);
    rejects("lifeline A;\nconst K = len(\"a\");\nworkflow w() {}\n", 1,
            "test.zg:2:11: error: cannot call `len` in a constant expression", NULL);
    rejects("lifeline A;\nenum E { a }\nconst K = a;\nworkflow w() {}\n", 1,
            "test.zg:3:11: error: constant `K` must be `int`, `float`, `bool` or `str`, not `E`",
            NULL);
    rejects("lifeline A;\nconst K = null;\nworkflow w() {}\n", 1,
            "test.zg:2:11: error: constant `K` must be `int`, `float`, `bool` or `str`, not `null`",
            NULL);
    rejects("lifeline A;\nconst K = prev true;\nworkflow w() {}\n", 1,
            "test.zg:2:11: error: temporal operator `prev` is only allowed in guards", NULL);
}

Test(check, defaults)
{
    accepts("lifeline A;\nconst N = 3;\nvar j: json = null;\nvar n: int = N + 1;\nvar f: float = "
            "-0.5;\n"
            "workflow w() {}\n");
    rejects("lifeline A;\nvar n: int = \"x\";\nworkflow w() {}\n", 1,
            "test.zg:2:14: error: cannot assign `str` to `n` of type `int`", NULL);
    rejects("lifeline A;\nvar f: float = 1;\nworkflow w() {}\n", 1,
            "test.zg:2:16: error: cannot assign `int` to `f` of type `float`", NULL);
    rejects("lifeline A;\nvar a: int = 0;\nvar b: int = a;\nworkflow w() {}\n", 1,
            "test.zg:3:14: error: cannot read variable `a` in a constant expression", NULL);
    rejects("lifeline A;\nvar s: str = null;\nworkflow w() {}\n", 1,
            "test.zg:2:14: error: cannot assign `null` to `s` of type `str`", NULL);
}

/* ---- expressions -------------------------------------------------------- */

Test(check, arithmetic)
{
    accepts(PRE "  A: n = n + m * 2 - n / 3 % 2;\n  A: x = x * 2.5 - -x;\n  A: s = s + \"!\";\n"
                "  A: x = float(n) + x;\n  A: n = int(x) + int(s);\n" POST);
    rejects(PRE "  A: x = x + n;\n" POST, 1,
            "test.zg:8:10: error: cannot mix `int` and `float` in `+`: use float(x) or int(x)",
            NULL);
    rejects(PRE "  A: n = s - 1;\n" POST, 1,
            "test.zg:8:10: error: operator `-` needs `int` or `float` operands, not `str`", NULL);
    rejects(PRE "  A: s = s + n;\n" POST, 1,
            "test.zg:8:10: error: operator `+` needs numbers or strings, not `str` and `int`",
            NULL);
    rejects(PRE "  A: n = -s;\n" POST, 1,
            "test.zg:8:11: error: operator `-` needs an `int` or `float` operand, not `str`", NULL);
    rejects(PRE "  A: ok = ok * ok;\n" POST, 1,
            "test.zg:8:11: error: operator `*` needs `int` or `float` operands, not `bool`", NULL);
}

Test(check, comparisons_and_logic)
{
    accepts(PRE "  A: ok = n < m && x >= 1.0 || s <= \"a\";\n  A: ok = !(s == \"\") != ok;\n" POST);
    rejects(PRE "  A: ok = n < x;\n" POST, 1,
            "test.zg:8:11: error: cannot mix `int` and `float` in `<`: use float(x) or int(x)",
            NULL);
    rejects(PRE "  A: ok = ok > ok;\n" POST, 1,
            "test.zg:8:11: error: operator `>` needs `int`, `float` or `str` operands, not `bool`",
            NULL);
    rejects(PRE "  A: ok = s == n;\n" POST, 1,
            "test.zg:8:11: error: cannot compare `str` with `int`", NULL);
    rejects(PRE "  A: ok = s < n;\n" POST, 1,
            "test.zg:8:11: error: cannot compare `str` with `int`", NULL);
    rejects(PRE "  A: ok = ok && n;\n" POST, 1,
            "test.zg:8:17: error: operator `&&` needs `bool` operands, not `int`", NULL);
    rejects(PRE "  A: ok = !s;\n" POST, 1,
            "test.zg:8:12: error: operator `!` needs a `bool` operand, not `str`", NULL);
}

Test(check, enums)
{
    const char *decls = "lifeline A;\n"
                        "enum Status { open, closed }\n"
                        "enum Color { red, green }\n"
                        "var st: Status = open;\n"
                        "var c: Color = red;\n"
                        "var ok: bool = false;\n"
                        "workflow w() {\n";
    char buf[1024];
    snprintf(buf, sizeof buf, "%s  A: ok = st == closed && c != green;\n  A: st = closed;\n}\n",
             decls);
    TComp *t = check_ok(buf);
    ZStmt *s = ZU_VEC_AT(t->comp.wf->body, 0);
    cr_expect_eq(s->expr->type->kind, TY_BOOL);
    cr_expect_eq(s->expr->a->b->type->kind, TY_ENUM);
    cr_expect_eq(s->expr->a->b->type->enum_decl, decl(t, "Status"));
    t_free(t);
    snprintf(buf, sizeof buf, "%s  A: ok = st == red;\n}\n", decls);
    rejects(buf, 1, "test.zg:8:11: error: cannot compare `Status` with `Color`", NULL);
    snprintf(buf, sizeof buf, "%s  A: ok = st < closed;\n}\n", decls);
    rejects(
        buf, 1,
        "test.zg:8:11: error: operator `<` needs `int`, `float` or `str` operands, not `Status`",
        NULL);
    snprintf(buf, sizeof buf, "%s  A: st = red;\n}\n", decls);
    rejects(buf, 1, "test.zg:8:11: error: cannot assign `Color` to `st` of type `Status`", NULL);
}

Test(check, conditional)
{
    accepts(PRE "  A: n = ok ? n : 1;\n" POST);
    rejects(PRE "  A: n = n ? 1 : 2;\n" POST, 1,
            "test.zg:8:10: error: condition of `?:` must be `bool`, not `int`", NULL);
    rejects(PRE "  A: n = ok ? 1 : \"a\";\n" POST, 1,
            "test.zg:8:10: error: the branches of `?:` have different types `int` and `str`", NULL);
}

Test(check, builtins)
{
    accepts("lifeline A;\nvar j: json = null;\nvar s: str = \"\";\nvar n: int = 0;\nvar ok: bool = "
            "false;\n"
            "workflow w() {\n"
            "  A: n = len(s) + int(2.5) + int(\"3\") + int(n);\n"
            "  A: s = lower(upper(trim(s))) + str(n) + str(j) + str(ok) + json_str(j);\n"
            "  A: ok = contains(s, \"a\") && starts_with(s, \"b\") && ends_with(s, s);\n"
            "  A: j = json_get(j, \"key\");\n"
            "  A: n = int(float(n) * float(\"2\") + float(1.0));\n"
            "}\n");
    rejects(PRE "  A: n = len(n);\n" POST, 1,
            "test.zg:8:14: error: argument of `len` must be `str`, not `int`", NULL);
    rejects(PRE "  A: n = len(s, s);\n" POST, 1,
            "test.zg:8:10: error: `len` takes 1 argument but 2 were given", NULL);
    rejects(PRE "  A: ok = contains(s, 1);\n" POST, 1,
            "test.zg:8:23: error: argument 2 of `contains` must be `str`, not `int`", NULL);
    rejects(PRE "  A: n = int(ok);\n" POST, 1,
            "test.zg:8:14: error: argument of `int` must be `int`, `float` or `str`, not `bool`",
            NULL);
    rejects(PRE "  A: s = json_str(s);\n" POST, 1,
            "test.zg:8:19: error: argument of `json_str` must be `json`, not `str`", NULL);
}

Test(check, null_is_a_json_value)
{
    accepts("lifeline A, B;\nvar j: json = null;\nvar k: json;\nvar ok: bool = false;\n"
            "workflow w() {\n  A: j = null;\n  A: ok = j == null || null != j;\n  A(j) -> B(k);\n  "
            "A(null) -> B(k);\n}\n");
    rejects(PRE "  A: n = null;\n" POST, 1,
            "test.zg:8:10: error: cannot assign `null` to `n` of type `int`", NULL);
    rejects(PRE "  A: ok = s == null;\n" POST, 1,
            "test.zg:8:11: error: cannot compare `str` with `null`", NULL);
}

Test(check, tuples_only_where_allowed)
{
    rejects(PRE "  A: n = (1, 2);\n" POST, 1,
            "test.zg:8:10: error: a tuple is only allowed as a `fallback` value or as the body of "
            "a pure action",
            NULL);
}

Test(check, every_expression_is_typed)
{
    TComp *c = check_ok(PRE "  A: n = len(s) + (ok ? n : -m);\n" POST);
    ZStmt *s = ZU_VEC_AT(c->comp.wf->body, 0);
    ZExpr *e = s->expr;
    cr_expect_eq(e->type->kind, TY_INT);
    cr_expect_eq(e->a->type->kind, TY_INT);
    cr_expect_eq(((ZExpr *)ZU_VEC_AT(e->a->args, 0))->type->kind, TY_STR);
    cr_expect_eq(e->b->type->kind, TY_INT);
    cr_expect_eq(e->b->c->type->kind, TY_BOOL);
    cr_expect_eq(e->b->b->a->type->kind, TY_INT);
    t_free(c);
}

/* ---- messages ----------------------------------------------------------- */

Test(check, messages)
{
    accepts("lifeline A, B;\nconst K = 3;\nenum E { e1, e2 }\nvar n: int = 0;\nvar m: int;\nvar v: "
            "E = e1;\n"
            "workflow w() {\n  A(n, 3, K, e2) -> B(m, K, 3, v);\n  A(n) -> A(m);\n  A(n, m) -> "
            "A(m, n);\n  A() -> B();\n}\n");
    rejects(PRE "  A(n, m) -> B(n, m, s);\n" POST, 1,
            "test.zg:8:14: error: message sends 2 values but B binds 3", NULL);
    rejects(PRE "  A(n) -> B();\n" POST, 1,
            "test.zg:8:11: error: message sends 1 value but B binds 0", NULL);
    rejects(PRE "  A(n, s) -> B(s, n);\n" POST, 2,
            "test.zg:8:16: error: message sends `int` but `s` is `str`", NULL);
    rejects(PRE "  A(s) -> B(3);\n" POST, 1,
            "test.zg:8:13: error: message sends `str` but `3` is `int`", NULL);
    rejects(PRE "  A(n + 1) -> B(n);\n" POST, 1,
            "test.zg:8:5: error: message values must be variables or constants", NULL);
    rejects(PRE "  A(n) -> B(len(s));\n" POST, 1,
            "test.zg:8:13: error: message bindings must be variables, literals or constants", NULL);
    rejects(PRE "  A(n, m) -> B(n, n);\n" POST, 1,
            "test.zg:8:19: error: `n` is bound twice in this message", NULL);
}

Test(check, messages_with_guard_names)
{
    rejects(
        "lifeline A, B;\nvar ok: bool = false;\nguard g = ok;\nworkflow w() { A(g) -> B(ok); }\n",
        1, "test.zg:4:18: error: guard `g` can only be used in a guard formula", NULL);
}

/* ---- actions ------------------------------------------------------------ */

#define ACTS                                                                          \
    "lifeline A, B;\n"                                                                \
    "enum V { yes, no }\n"                                                            \
    "var n: int = 0;\n"                                                               \
    "var s: str = \"\";\n"                                                            \
    "var v: V = yes;\n"                                                               \
    "var ok: bool = false;\n"                                                         \
    "llm ask(q: str, k: int) -> (a: str, b: int) { user = \"{q}\"; parse = json; }\n" \
    "pure inc(t: int) -> int = t + 1;\n"                                              \
    "pure two(t: int) -> (int, str) = (t, str(t));\n"                                 \
    "effect log(m: str);\n"                                                           \
    "human yn(q: str) -> bool { kind = confirm; prompt = \"{q}\"; }\n"                \
    "workflow w() {\n"

Test(check, action_statements)
{
    TComp *c = check_ok(
        ACTS "  A: (s, n) = ask(s, n);\n  A: n = inc(inc(n) * 2);\n  A: (n, s) = two(n + 1);\n"
             "  A: log(s);\n  A: ok = yn(s);\n  A: log(\"done\");\n  A: ask(s, 1);\n}\n");
    ZStmt *st = ZU_VEC_AT(c->comp.wf->body, 0);
    cr_expect_eq(st->expr->type->kind, TY_TUPLE);
    ZStmt *lg = ZU_VEC_AT(c->comp.wf->body, 3);
    cr_expect_eq(lg->expr->type->kind, TY_VOID);
    t_free(c);
    rejects(ACTS "  A: (s, n) = ask(s);\n}\n", 1,
            "test.zg:13:15: error: `ask` takes 2 arguments but 1 was given", NULL);
    rejects(ACTS "  A: (s, n) = ask(n, s);\n}\n", 2,
            "test.zg:13:19: error: argument `q` of `ask` must be `str`, not `int`", NULL);
    rejects(ACTS "  A: s = ask(s, n);\n}\n", 1,
            "test.zg:13:6: error: `ask` returns 2 values but 1 is assigned", NULL);
    rejects(ACTS "  A: (n, s) = ask(s, n);\n}\n", 2,
            "test.zg:13:7: error: cannot assign `str` to `n` of type `int`", NULL);
    rejects(ACTS "  A: s = log(s);\n}\n", 1,
            "test.zg:13:6: error: `log` returns nothing but 1 is assigned", NULL);
    rejects(ACTS "  A: (s, s) = ask(s, n);\n}\n", 2,
            "test.zg:13:10: error: `s` is assigned twice in this statement", NULL);
    rejects(ACTS "  A: (s, n) = ask(s + \"?\", n);\n}\n", 1,
            "test.zg:13:19: error: arguments of llm action `ask` must be variables or constants",
            NULL);
    rejects(ACTS "  A: log(upper(s));\n}\n", 1,
            "test.zg:13:10: error: arguments of effect action `log` must be variables or constants",
            NULL);
}

Test(check, non_pure_actions_only_as_statements)
{
    rejects(ACTS "  A: ok = !yn(s);\n}\n", 1,
            "test.zg:13:12: error: human action `yn` can only be called as the whole right-hand "
            "side of an assignment",
            NULL);
    rejects(ACTS "  if yn(s) @ A { skip B; }\n}\n", 1,
            "test.zg:13:6: error: human action `yn` can only be called as the whole right-hand "
            "side of an assignment",
            NULL);
    rejects(ACTS "  A: n = inc(n) + two(n);\n}\n", 1,
            "test.zg:13:19: error: `two` returns 2 values: call it as the whole right-hand side of "
            "an assignment",
            NULL);
    rejects("lifeline A;\neffect e() -> int;\npure p(x: int) -> int = e() + x;\nworkflow w() {}\n",
            1,
            "test.zg:3:25: error: effect action `e` can only be called as the whole right-hand "
            "side of an assignment",
            NULL);
}

Test(check, expression_statements)
{
    rejects(PRE "  A: len(s);\n" POST, 1,
            "test.zg:8:6: error: the value of this expression is not used", NULL);
    rejects(PRE "  A: (n, m) = n;\n" POST, 1,
            "test.zg:8:7: error: an expression gives one value but 2 are assigned", NULL);
    rejects(PRE "  A: n = s;\n" POST, 1,
            "test.zg:8:10: error: cannot assign `str` to `n` of type `int`", NULL);
}

Test(check, pure_actions)
{
    accepts("lifeline A;\nconst K = 2;\nenum E { a, b }\n"
            "pure f(x: int, e: E) -> bool = x * K > 0 && e == b;\n"
            "pure g(s: str) -> (str, int) = (s, len(s));\n"
            "extern pure h(s: str) -> (float, str);\n"
            "workflow w() {}\n");
    rejects("lifeline A;\npure f(x: int) -> str = x;\nworkflow w() {}\n", 1,
            "test.zg:2:25: error: the body of `f` is `int` but `f` returns `str`", NULL);
    rejects("lifeline A;\nvar v: int = 0;\npure f(x: int) -> int = x + v;\nworkflow w() {}\n", 1,
            "test.zg:3:29: error: pure action `f` cannot read variable `v`: pass it as a parameter",
            NULL);
    rejects("lifeline A;\npure f(x: int) -> int = prev x;\nworkflow w() {}\n", 1,
            "test.zg:2:25: error: temporal operator `prev` is only allowed in guards", NULL);
    rejects("lifeline A;\npure f(x: int) -> (int, int) = (x, x, x);\nworkflow w() {}\n", 1,
            "test.zg:2:32: error: the body of `f` gives 3 values but `f` returns 2", NULL);
    rejects("lifeline A;\npure f(x: int) -> (int, int) = x;\nworkflow w() {}\n", 1,
            "test.zg:2:32: error: the body of `f` gives 1 value but `f` returns 2", NULL);
    rejects("lifeline A;\npure f(x: int) = x;\nworkflow w() {}\n", 1,
            "test.zg:2:6: error: pure action `f` must return a value", NULL);
    rejects("lifeline A;\nextern pure f(x: int);\nworkflow w() {}\n", 1,
            "test.zg:2:13: error: pure action `f` must return a value", NULL);
}

/* ---- llm and human actions ---------------------------------------------- */

Test(check, llm_properties)
{
    accepts("lifeline A;\nconst M = \"gpt\";\nenum V { yes, no }\n"
            "llm a(q: str) -> (v: V, why: str) {\n"
            "  system = \"\"\"Decide.\n     {q}\"\"\";\n  user = \"{q} {{ {not a} {1} }\";\n  "
            "parse = json;\n"
            "  model = M;\n  temperature = 0.7;\n  retries = forever;\n  fallback = (no, "
            "\"none\");\n}\n"
            "llm b(q: str) -> (ok: bool) { user = \"{q}\"; parse = bool; temperature = 1; retries "
            "= 0; }\n"
            "llm c(q: str) -> (v: V) { system = \"s\"; parse = enum; fallback = yes; }\n"
            "llm d(q: str) -> (n: float) { user = \"\"; parse = float; }\n"
            "llm e(q: str) -> (t: str) { user = \"\"; parse = text; }\n"
            "workflow w() {}\n");
    rejects("lifeline A;\nllm a(q: str) -> (x: str) { user = \"{q}\"; parse = text; tone = 1; "
            "}\nworkflow w() {}\n",
            1, "test.zg:2:57: error: unknown property `tone` in llm action `a`",
            "note: the properties of llm actions are system, user, parse, model, temperature, "
            "retries and fallback");
    rejects("lifeline A;\nllm a(q: str) -> (x: str) { user = \"{q}\"; parse = text; user = \"\"; "
            "}\nworkflow w() {}\n",
            1, "test.zg:2:57: error: duplicate property `user`",
            "test.zg:2:29: note: previous `user` here");
    rejects("lifeline A;\nllm a(q: str) -> (x: str) { user = q; parse = text; }\nworkflow w() {}\n",
            1, "test.zg:2:36: error: `user` must be a string literal", NULL);
    rejects("lifeline A;\nllm a(q: str) -> (x: str) { user = \"\"; parse = text; model = 1; "
            "}\nworkflow w() {}\n",
            1, "test.zg:2:62: error: `model` must be a string, not `int`", NULL);
    rejects("lifeline A;\nllm a(q: str) -> (x: str) { user = \"\"; parse = text; temperature = "
            "-0.1; }\n"
            "workflow w() {}\n",
            1, "test.zg:2:68: error: `temperature` must be a number between 0 and 1", NULL);
    rejects("lifeline A;\nllm a(q: str) -> (x: str) { user = \"\"; parse = text; temperature = "
            "\"hot\"; }\n"
            "workflow w() {}\n",
            1, "test.zg:2:68: error: `temperature` must be a number between 0 and 1", NULL);
    rejects("lifeline A;\nllm a(q: str) -> (x: str) { user = \"\"; parse = text; retries = 1.5; "
            "}\nworkflow w() {}\n",
            1, "test.zg:2:64: error: `retries` must be a non-negative integer or `forever`", NULL);
    rejects(
        "lifeline A;\nllm a(q: str) -> (x: str) { user = \"\"; parse = text; retries = always; }\n"
        "workflow w() {}\n",
        1, "unknown variable `always`", NULL);
}

Test(check, llm_parse_modes)
{
    rejects(
        "lifeline A;\nllm a(q: str) -> (x: int) { user = \"\"; parse = text; }\nworkflow w() {}\n",
        1, "test.zg:2:48: error: `parse = text` needs exactly one `str` output", NULL);
    rejects("lifeline A;\nllm a(q: str) -> (x: int, y: int) { user = \"\"; parse = int; "
            "}\nworkflow w() {}\n",
            1, "test.zg:2:56: error: `parse = int` needs exactly one `int` output", NULL);
    rejects(
        "lifeline A;\nllm a(q: str) -> (x: str) { user = \"\"; parse = enum; }\nworkflow w() {}\n",
        1, "test.zg:2:48: error: `parse = enum` needs exactly one output of an enum type", NULL);
    rejects(
        "lifeline A;\nllm a(q: str) -> (x: str) { user = \"\"; parse = xml; }\nworkflow w() {}\n",
        1, "test.zg:2:48: error: `parse` must be one of text, json, bool, int, float or enum",
        NULL);
}

Test(check, llm_declarations)
{
    rejects(
        "lifeline A;\nllm a(q: str) -> int { user = \"\"; parse = int; }\nworkflow w() {}\n", 1,
        "test.zg:2:18: error: outputs of llm action `a` must be named, as in `-> (answer: int)`",
        NULL);
    rejects("lifeline A;\nllm a(q: str) { user = \"\"; parse = json; }\nworkflow w() {}\n", 1,
            "test.zg:2:5: error: llm action `a` must declare its outputs", NULL);
    rejects("lifeline A;\nllm a(q: str) -> (x: str);\nworkflow w() {}\n", 1,
            "test.zg:2:5: error: llm action `a` needs a body with its prompts", NULL);
    rejects("lifeline A;\nllm a(q: str) -> (x: str) { user = \"\"; }\nworkflow w() {}\n", 1,
            "test.zg:2:5: error: llm action `a` needs `parse = ...`", NULL);
    rejects("lifeline A;\nllm a(q: str) -> (x: str) { parse = text; }\nworkflow w() {}\n", 1,
            "test.zg:2:5: error: llm action `a` needs a prompt: `system` or `user`", NULL);
}

Test(check, llm_fallback)
{
    rejects("lifeline A;\nllm a(q: str) -> (x: str, n: int) { user = \"\"; parse = json; fallback "
            "= \"x\"; }\n"
            "workflow w() {}\n",
            1, "test.zg:2:73: error: `fallback` has 1 value but `a` has 2 outputs", NULL);
    rejects("lifeline A;\nllm a(q: str) -> (x: str, n: int) { user = \"\"; parse = json; fallback "
            "= (\"x\", \"y\"); }\n"
            "workflow w() {}\n",
            1, "test.zg:2:79: error: fallback value for `n` must be `int`, not `str`", NULL);
    rejects("lifeline A;\nvar v: str = \"\";\nllm a(q: str) -> (x: str) { user = \"\"; parse = "
            "text; fallback = v; }\n"
            "workflow w() {}\n",
            1, "test.zg:3:65: error: cannot read variable `v` in a constant expression", NULL);
    TComp *c = check_ok(
        "lifeline A;\nconst D = \"d\" + \"!\";\n"
        "llm a(q: str) -> (x: str, n: int) { user = \"\"; parse = json; fallback = (D, 2 * 3); }\n"
        "workflow w() {}\n");
    ZDecl *a = decl(c, "a");
    ZProp *fb = ZU_VEC_AT(a->props, 2);
    ZExpr *v0 = ZU_VEC_AT(fb->value->args, 0), *v1 = ZU_VEC_AT(fb->value->args, 1);
    cr_assert_eq(v0->kind, E_STR, "fallback values are folded");
    cr_expect_eq(v0->slen, 2);
    cr_assert_eq(v1->kind, E_INT);
    cr_expect_eq(v1->lit.i, 6);
    t_free(c);
}

Test(check, placeholders)
{
    rejects("lifeline A;\nllm a(topic: str) -> (x: str) {\n  user = \"About {topic}: {tpic}\";\n  "
            "parse = text;\n}\n"
            "workflow w() {}\n",
            1, "test.zg:3:26: error: placeholder `{tpic}` does not name an input of `a`", NULL);
    /* exact columns after escapes, multi-byte characters and across lines */
    rejects("lifeline A;\nllm a(q: str) -> (x: str) {\n  system = \"\"\"first {q}\n    "
            "é\\t{bad}\"\"\";\n"
            "  user = \"\\u{41}\\\"{zz}\";\n  parse = text;\n}\nworkflow w() {}\n",
            2, "test.zg:4:8: error: placeholder `{bad}` does not name an input of `a`", NULL);
    rejects("lifeline A;\nllm a(q: str) -> (x: str) {\n  system = \"\"\"first {q}\n    "
            "é\\t{bad}\"\"\";\n"
            "  user = \"\\u{41}\\\"{zz}\";\n  parse = text;\n}\nworkflow w() {}\n",
            2, "test.zg:5:19: error: placeholder `{zz}` does not name an input of `a`", NULL);
    rejects("lifeline A;\nhuman h(draft: str) -> bool { kind = confirm; prompt = "
            "\"Send?\\n{drat}\"; }\n"
            "workflow w() {}\n",
            1, "test.zg:2:64: error: placeholder `{drat}` does not name an input of `h`", NULL);
}

Test(check, human_kinds)
{
    accepts("lifeline A;\nenum C { l, r }\n"
            "human a(q: str) -> bool { kind = confirm; prompt = \"{q}\"; }\n"
            "human b(q: str) -> str { kind = input; prompt = \"{q}\"; }\n"
            "human c(q: str) -> str { kind = edit; prompt = \"{q}\"; }\n"
            "human d(q: str) -> C { kind = select; prompt = \"{q}\"; }\n"
            "human e(q: str) { kind = ack; prompt = \"{q}\"; }\n"
            "human f(q: str) -> bool { kind = ack; prompt = \"{q}\"; }\n"
            "workflow w() {}\n");
    rejects(
        "lifeline A;\nhuman a(q: str) -> str { kind = confirm; prompt = \"\"; }\nworkflow w() {}\n",
        1, "test.zg:2:33: error: `kind = confirm` needs exactly one `bool` output", NULL);
    rejects(
        "lifeline A;\nhuman a(q: str) -> int { kind = edit; prompt = \"\"; }\nworkflow w() {}\n", 1,
        "test.zg:2:33: error: `kind = edit` needs exactly one `str` output", NULL);
    rejects(
        "lifeline A;\nhuman a(q: str) -> str { kind = select; prompt = \"\"; }\nworkflow w() {}\n",
        1, "test.zg:2:33: error: `kind = select` needs exactly one output of an enum type", NULL);
    rejects("lifeline A;\nhuman a(q: str) -> (bool, bool) { kind = ack; prompt = \"\"; }\nworkflow "
            "w() {}\n",
            1, "test.zg:2:42: error: `kind = ack` needs no output or one `bool` output", NULL);
    rejects(
        "lifeline A;\nhuman a(q: str) -> bool { kind = maybe; prompt = \"\"; }\nworkflow w() {}\n",
        1, "test.zg:2:34: error: `kind` must be one of confirm, input, select, edit or ack", NULL);
    rejects("lifeline A;\nhuman a(q: str) -> bool { prompt = \"\"; }\nworkflow w() {}\n", 1,
            "test.zg:2:7: error: human action `a` needs `kind = ...`", NULL);
    rejects("lifeline A;\nhuman a(q: str) -> bool { kind = confirm; }\nworkflow w() {}\n", 1,
            "test.zg:2:7: error: human action `a` needs `prompt = ...`", NULL);
    rejects("lifeline A;\nhuman a(q: str) -> bool;\nworkflow w() {}\n", 1,
            "test.zg:2:7: error: human action `a` needs a body with `kind` and `prompt`", NULL);
    rejects("lifeline A;\nhuman a(q: str) -> bool { kind = confirm; prompt = \"\"; parse = text; "
            "}\nworkflow w() {}\n",
            1, "test.zg:2:56: error: unknown property `parse` in human action `a`", NULL);
}

/* ---- guards ------------------------------------------------------------- */

Test(check, guards)
{
    TComp *c = check_ok(
        "lifeline A, B;\nenum S { p, f }\nvar st: S = p;\nvar n: int = 0;\nvar ok: bool = false;\n"
        "guard plain = n > 0 && ok;\n"
        "guard cpl = @B(st != f since st == p) && @B.n > n;\n"
        "guard via = plain || cpl;\n"
        "workflow w() {\n"
        "  if plain @ A { skip B; }\n"
        "  while via && seen B @ A { skip B; }\n"
        "  if prev ok || once ok || historically ok || past (n > 1) @ B { skip A; }\n"
        "}\n");
    ZStmt *s0 = ZU_VEC_AT(c->comp.wf->body, 0), *s1 = ZU_VEC_AT(c->comp.wf->body, 1),
          *s2 = ZU_VEC_AT(c->comp.wf->body, 2);
    cr_expect_not(zk_is_cpl(s0->expr));
    cr_expect(zk_is_cpl(s1->expr));
    cr_expect(zk_is_cpl(s2->expr));
    cr_expect(zk_is_cpl(decl(c, "via")->expr), "through a named guard");
    cr_expect_not(zk_is_cpl(decl(c, "plain")->expr));
    cr_expect_eq(s0->expr->type->kind, TY_BOOL);
    cr_expect_eq(decl(c, "cpl")->expr->b->a->type->kind, TY_INT);
    t_free(c);

    rejects(PRE "  if n @ A { skip B; }\n" POST, 1,
            "test.zg:8:6: error: condition must be `bool`, not `int`", NULL);
    rejects("lifeline A;\nvar n: int = 0;\nguard g = n + 1;\nworkflow w() {}\n", 1,
            "test.zg:3:11: error: guard `g` must be a `bool` formula, not `int`", NULL);
    rejects(PRE "  while prev n @ A { skip B; }\n" POST, 1,
            "test.zg:8:14: error: operand of `prev` must be `bool`, not `int`", NULL);
    rejects(PRE "  if @B(s) @ A { skip B; }\n" POST, 1,
            "test.zg:8:9: error: operand of `@B(...)` must be `bool`, not `str`", NULL);
    rejects(PRE "  if ok since n @ A { skip B; }\n" POST, 1,
            "test.zg:8:15: error: operand of `since` must be `bool`, not `int`", NULL);
    rejects(PRE "  if @B.s > 1 @ A { skip B; }\n" POST, 1,
            "test.zg:8:6: error: cannot compare `str` with `int`", NULL);
}

Test(check, cpl_only_in_guards)
{
    rejects(PRE "  A: ok = prev ok;\n" POST, 1,
            "test.zg:8:11: error: temporal operator `prev` is only allowed in guards", NULL);
    rejects(PRE "  A: ok = once prev ok;\n" POST, 1,
            "test.zg:8:11: error: temporal operator `once` is only allowed in guards", NULL);
    rejects(PRE "  A: n = @B.n;\n" POST, 1,
            "test.zg:8:10: error: causal term `@B.n` is only allowed in guards", NULL);
    rejects(PRE "  A: ok = @B(ok);\n" POST, 1,
            "test.zg:8:11: error: causal operator `@B(...)` is only allowed in guards", NULL);
    rejects(PRE "  A: ok = seen B;\n" POST, 1,
            "test.zg:8:11: error: causal operator `seen` is only allowed in guards", NULL);
    rejects(PRE "  A: ok = ok since ok;\n" POST, 1,
            "test.zg:8:11: error: temporal operator `since` is only allowed in guards", NULL);
    rejects("lifeline A;\nvar ok: bool = false;\nguard g = ok;\nworkflow w() { A: ok = g; }\n", 1,
            "test.zg:4:24: error: guard `g` can only be used in a guard formula", NULL);
}

/* ---- definedness -------------------------------------------------------- */

#define UNDEF                \
    "lifeline A, B, C;\n"    \
    "var x: int;\n"          \
    "var y: int;\n"          \
    "var n: int = 0;\n"      \
    "var ok: bool = true;\n" \
    "workflow w() {\n"

Test(check, definedness_sources)
{
    accepts("lifeline A, B;\nvar x: int;\nvar y: int;\nvar z: int;\nvar d: int = 1;\n"
            "pure two(t: int) -> (int, int) = (t, t);\n"
            "workflow w(x: int @ A) {\n"
            "  A(x) -> B(y);\n"       /* input on A, receive on B */
            "  B: (z, x) = two(y);\n" /* action outputs */
            "  B(z) -> B(y);\n"       /* self message */
            "  A: y = d + x;\n"       /* default, assignment */
            "  A(y) -> B(x);\n"
            "}\n");
    rejects(UNDEF "  A(x) -> B(y);\n}\n", 1, "test.zg:7:5: error: `x` is not defined on A here",
            NULL);
    rejects(UNDEF "  A: x = x + 1;\n}\n", 1, "test.zg:7:10: error: `x` is not defined on A here",
            NULL);
    rejects(UNDEF "  A: x = 1;\n  A(x) -> B(y);\n  B: x = y + x;\n}\n", 1,
            "test.zg:9:14: error: `x` is not defined on B here",
            "test.zg:7:6: note: `x` is defined on A here");
}

Test(check, definedness_each_variable_reported_once)
{
    rejects(UNDEF "  A(x) -> B(y);\n  A: y = x;\n  A(x) -> C(y);\n}\n", 1,
            "test.zg:7:5: error: `x` is not defined on A here", NULL);
}

Test(check, definedness_if_joins_by_intersection)
{
    accepts(UNDEF "  if ok @ A { A: x = 1; } else { A: x = 2; }\n  A(x) -> B(x);\n}\n");
    rejects(UNDEF "  if ok @ A { A: x = 1; }\n  A(x) -> B(x);\n}\n", 1,
            "test.zg:8:5: error: `x` is not defined on A here",
            "test.zg:7:3: note: `x` is defined on A on only some paths through this `if`");
    rejects(UNDEF "  if ok @ A { A: x = 1; } else { A: y = 1; }\n  A(y) -> B(y);\n}\n", 1,
            "test.zg:8:5: error: `y` is not defined on A here", NULL);
    /* inside the branch it is defined */
    accepts(UNDEF "  if ok @ A { A: x = 1; A(x) -> B(x); }\n}\n");
}

Test(check, definedness_while_body_may_not_run)
{
    rejects(UNDEF "  while ok @ A { A: x = 1; }\n  A(x) -> B(y);\n}\n", 1,
            "test.zg:8:5: error: `x` is not defined on A here",
            "test.zg:7:3: note: `x` is defined on A inside this `while`, whose body may not run");
    /* the exit protocol runs once: what it defines is defined after */
    accepts(UNDEF "  while ok @ A { A: x = 1; } else { A: x = 2; }\n  A(x) -> B(y);\n}\n");
    /* the first iteration only sees what was defined before the loop */
    rejects(UNDEF "  while ok @ A { A(x) -> B(y); A: x = 1; }\n}\n", 1,
            "test.zg:7:20: error: `x` is not defined on A here", NULL);
    rejects(UNDEF "  while ok @ A { A: x = 1; } else { A(x) -> B(y); }\n}\n", 1,
            "test.zg:7:39: error: `x` is not defined on A here", NULL);
}

Test(check, definedness_of_guards)
{
    rejects(UNDEF "  if x > 0 @ A { skip B; }\n}\n", 1,
            "test.zg:7:6: error: `x` is not defined on A here", NULL);
    rejects(
        "lifeline A, B;\nvar x: int;\nguard g = x > 0;\nworkflow w() { if g @ A { skip B; } }\n", 1,
        "test.zg:4:19: error: `x` is not defined on A here",
        "test.zg:3:11: note: `x` is read by guard `g` here");
    /* terms of a CPL guard may be undefined: the atom is false */
    accepts(UNDEF "  if prev (x > 0) @ A { skip B; }\n  if @B.x > 0 @ A { skip B; }\n  if once (x "
                  "> 0) && ok @ A { skip B; }\n}\n");
}

Test(check, definedness_parallel_and_coregion)
{
    accepts(UNDEF "  parallel { branch { A: x = 1; } branch { B: y = 2; } }\n  A(x) -> C(x);\n  "
                  "B(y) -> C(y);\n}\n");
    rejects(UNDEF "  parallel { branch { A: x = 1; } branch { B: y = 2; B(x) -> C(x); } }\n}\n", 1,
            "test.zg:7:56: error: `x` is not defined on B here", NULL);
    accepts(UNDEF "  A: x = 1;\n  B: y = 1;\n  coregion { A(x) -> C(x); B(y) -> C(y); }\n  C: n = "
                  "x + y;\n}\n");
    /* a coregion's receives happen after all its sends are read */
    rejects(UNDEF "  A: x = 1;\n  coregion { A(x) -> C(y); B(y) -> C(x); }\n}\n", 1,
            "test.zg:8:30: error: `y` is not defined on B here", NULL);
}

Test(check, definedness_of_inputs_and_return)
{
    accepts("lifeline A, B;\nvar r: str;\nworkflow w(t: str @ A) -> str {\n  A(t) -> B(r);\n  "
            "return r @ B;\n}\n");
    rejects("lifeline A, B;\nvar r: str;\nworkflow w(t: str @ A) -> str {\n  B(t) -> A(r);\n  "
            "return r @ A;\n}\n",
            1, "test.zg:4:5: error: `t` is not defined on B here",
            "test.zg:3:12: note: `t` is defined on A here");
    rejects("lifeline A, B;\nvar r: str;\nworkflow w(r: str @ A) -> str {\n  return r @ B;\n}\n", 1,
            "test.zg:4:10: error: `r` is not defined on B here", NULL);
}

/* ---- parallel and coregion rules ---------------------------------------- */

Test(check, parallel_rules)
{
    accepts(UNDEF "  parallel { branch { A(n) -> B(x); } branch { A(n) -> C(x); } branch { B: n = "
                  "1; } }\n}\n");
    rejects(UNDEF "  parallel { }\n}\n", 1,
            "test.zg:7:3: error: `parallel` needs at least one branch", NULL);
    rejects(UNDEF "  parallel { branch { A: n = 1; } branch { A: n = 2; } }\n}\n", 1,
            "test.zg:7:47: error: `n` on A is written by two branches of this `parallel`",
            "test.zg:7:26: note: the other write is here");
    rejects(UNDEF "  parallel { branch { A(n) -> B(y); } branch { A: n = 2; } }\n}\n", 1,
            "test.zg:7:51: error: `n` on A is written here but read by another branch of this "
            "`parallel`",
            "test.zg:7:25: note: read here");
    rejects(UNDEF "  parallel { branch { A: n = 2; } branch { if n > 0 @ A { skip B; } } }\n}\n", 1,
            "test.zg:7:26: error: `n` on A is written here but read by another branch of this "
            "`parallel`",
            "test.zg:7:47: note: read here");
    /* nested regions count for the enclosing one */
    rejects(UNDEF "  parallel {\n    branch { parallel { branch { B: n = 1; } } }\n    branch { "
                  "B(n) -> C(x); }\n  }\n}\n",
            1,
            "test.zg:8:37: error: `n` on B is written here but read by another branch of this "
            "`parallel`",
            NULL);
    /* reading what a sibling writes is one error, not also "undefined" */
    rejects(UNDEF "  parallel { branch { A: x = 1; } branch { A(x) -> B(y); } }\n}\n", 1,
            "test.zg:7:26: error: `x` on A is written here but read by another branch of this "
            "`parallel`",
            NULL);
}

Test(check, coregion_rules)
{
    rejects(UNDEF "  coregion { }\n}\n", 1,
            "test.zg:7:3: error: `coregion` needs at least one message", NULL);
    rejects(UNDEF "  coregion { A(n) -> C(x); B(n) -> A(y); }\n}\n", 1,
            "test.zg:7:36: error: all messages of a `coregion` must have the same receiver",
            "test.zg:7:22: note: the first message goes to C here");
    rejects(UNDEF "  coregion { A(n) -> C(x); A(n) -> C(y); }\n}\n", 1,
            "test.zg:7:28: error: two messages of this `coregion` come from A", NULL);
    rejects(UNDEF "  coregion { A(n) -> C(x); C(n) -> C(y); }\n}\n", 1,
            "test.zg:7:28: error: self message in a `coregion`", NULL);
    rejects(UNDEF "  coregion { A(n) -> C(x); B(n) -> C(x); }\n}\n", 1,
            "test.zg:7:38: error: `x` is bound by two messages of this `coregion`",
            "test.zg:7:24: note: also bound here");
    rejects(UNDEF "  coregion { skip A; }\n}\n", 1,
            "test.zg:7:14: error: only messages are allowed in a `coregion`", NULL);
}

/* ---- workflows ---------------------------------------------------------- */

Test(check, workflow_results)
{
    accepts("lifeline A, B;\nvar n: int = 0;\nvar s: str = \"\";\n"
            "workflow w() -> (int, str) {\n  return (n @ A, s @ B);\n}\n");
    rejects("lifeline A;\nvar n: int = 0;\nworkflow w() -> (int, int) {\n  return n @ A;\n}\n", 1,
            "test.zg:4:3: error: workflow `w` returns 1 value but declares 2", NULL);
    rejects("lifeline A;\nvar n: int = 0;\nworkflow w() -> str {\n  return n @ A;\n}\n", 1,
            "test.zg:4:10: error: workflow `w` returns `str` but `n` is `int`", NULL);
    rejects("lifeline A;\nvar n: int = 0;\nworkflow w() {\n  return n @ A;\n}\n", 1,
            "test.zg:4:3: error: workflow `w` declares no result but returns one", NULL);
    rejects("lifeline A;\nvar n: int = 0;\nworkflow w() -> int {\n  A: n = 1;\n}\n", 1,
            "test.zg:3:10: error: workflow `w` declares a result but does not end with `return`",
            NULL);
    rejects("lifeline A;\nconst K = 1;\nworkflow w() -> int {\n  return K @ A;\n}\n", 1,
            "test.zg:4:10: error: `return` needs a variable, not the constant `K`", NULL);
}

Test(check, input_types_agree_with_variables)
{
    rejects("lifeline A;\nvar t: str;\nworkflow w(t: int @ A) {}\n", 1,
            "test.zg:3:15: error: input `t` is `int` but variable `t` is `str`",
            "test.zg:2:5: note: `t` is declared here");
    rejects("lifeline A;\nworkflow v(t: str @ A) {}\nworkflow w(t: int @ A) {}\n", 1,
            "test.zg:3:15: error: input `t` is `int` but variable `t` is `str`", NULL);
}

Test(check, only_the_selected_workflow)
{
    const char *src = "lifeline A;\nvar n: int = 0;\nworkflow bad() { A: n = \"x\"; }\nworkflow "
                      "good() { A: n = 1; }\n";
    TComp *c = t_compile(src, T_RESOLVE);
    cr_assert(c->ok);
    cr_expect(zk_check(c->comp.arena, c->comp.prog, c->comp.wf, &c->comp.diag),
              "only `good` is checked");
    cr_expect_not(zk_check(c->comp.arena, c->comp.prog, NULL, &c->comp.diag),
                  "all workflows are checked");
    t_free(c);
}

/* ---- robustness --------------------------------------------------------- */

Test(check, independent_errors_are_all_reported)
{
    TComp *c = t_compile(
        "lifeline User, Writer;\n"
        "var topic: str;\n"
        "var draft: str;\n"
        "var count: int = 0;\n"
        "llm reply(topic: str) -> (draft: str) { user = \"{topic} {tone}\"; parse = text; }\n"
        "workflow hello(topic: str @ User) -> str {\n"
        "  User(topic, count) -> Writer(topic);\n"
        "  Writer: draft = reply(count);\n"
        "  Writer: count = count + 1.5;\n"
        "  User(draft) -> Writer(draft);\n"
        "  User(draft) -> Writer(topic);\n"
        "  return count @ User;\n"
        "}\n",
        T_CHECK);
    cr_expect_not(c->ok);
    const char *want[] = {
        "test.zg:5:57: error: placeholder `{tone}` does not name an input of `reply`",
        "test.zg:7:25: error: message sends 2 values but Writer binds 1",
        "test.zg:8:25: error: argument `topic` of `reply` must be `str`, not `int`",
        "test.zg:9:19: error: cannot mix `int` and `float` in `+`: use float(x) or int(x)",
        "test.zg:10:8: error: `draft` is not defined on User here",
        "test.zg:12:10: error: workflow `hello` returns `str` but `count` is `int`",
    };
    const char *at = c->diag_text;
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        const char *hit = strstr(at, want[i]);
        cr_expect(hit != NULL, "missing (in order) `%s` in:\n%s", want[i], c->diag_text);
        if (hit) at = hit;
    }
    cr_expect_eq(t_count(c->diag_text, ": error: "), 6, "%s", c->diag_text);
    t_free(c);
}

Test(check, errors_do_not_cascade)
{
    /* an unknown operand type silences everything built on it */
    rejects(PRE "  A: n = (s - 1) * 2 + len(s - 1) + (s - 1 > 0 ? 1 : 2);\n" POST, 3,
            "test.zg:8:11: error: operator `-` needs `int` or `float` operands, not `str`", NULL);
    rejects("lifeline A;\nvar v: int = 0;\nconst K = v;\nconst L = K + 1;\nvar w: int = "
            "L;\nworkflow w() {}\n",
            1, "test.zg:3:11: error: cannot read variable `v` in a constant expression", NULL);
}

Test(check, big_programs_are_checked)
{
    ZBuf b = {0};
    zu_buf_puts(&b, "lifeline A, B;\n");
    for (int i = 0; i < 300; i++) zu_buf_printf(&b, "var v%d: int;\n", i);
    zu_buf_puts(&b, "workflow w() {\n  A: v0 = 1;\n");
    for (int i = 1; i < 300; i++)
        zu_buf_printf(&b, "  if v%d > 0 @ A { A: v%d = v%d + 1; } else { A: v%d = 2; }\n", i - 1, i,
                      i - 1, i);
    zu_buf_puts(&b, "  A(v299) -> B(v0);\n  B(v1) -> A(v2);\n}\n");
    TComp *c = t_compile(b.data, T_CHECK);
    cr_expect_not(c->ok);
    cr_expect(strstr(c->diag_text, ": error: `v1` is not defined on B here") != NULL, "%s",
              c->diag_text);
    cr_expect_eq(t_count(c->diag_text, ": error: "), 1, "%s", c->diag_text);
    t_free(c);
    zu_buf_free(&b);
}

Test(check, shared_guard_formulas_are_linear, .timeout = 10)
{
    /* 40 levels of guards each using the one below twice: 2^40 paths */
    ZBuf b = {0};
    zu_buf_puts(&b, "lifeline A, B;\nvar n: int = 0;\nguard g0 = n > 0;\n");
    for (int i = 1; i <= 40; i++) zu_buf_printf(&b, "guard g%d = g%d && !g%d;\n", i, i - 1, i - 1);
    zu_buf_puts(&b, "guard top = g40 || @B(g40);\nworkflow w() { if g40 @ A { skip B; } if top @ A "
                    "{ skip B; } }\n");
    TComp *c = t_compile(b.data, T_CHECK);
    cr_expect(c->ok, "%s", c->diag_text);
    ZStmt *s0 = ZU_VEC_AT(c->comp.wf->body, 0), *s1 = ZU_VEC_AT(c->comp.wf->body, 1);
    cr_expect_not(zk_is_cpl(s0->expr));
    cr_expect(zk_is_cpl(s1->expr));
    t_free(c);
    zu_buf_free(&b);
}

/* The check costs what the program says, not lifelines × variables per
 * construct: 20,000 parallel branches, each defining a variable of its
 * own, were quadratic (2 s for 4,000, minutes for 20,000); a conflict
 * between two of them is still found, and what the branches define is
 * defined after the region. */
Test(check, many_parallel_branches, .timeout = 30)
{
    int n = 20000;
    ZBuf b = {0};
    zu_buf_puts(&b, "lifeline A, B;\nvar x: int = 7;\nvar y: int;\n");
    for (int i = 0; i < n; i++) zu_buf_printf(&b, "var v%d: int;\n", i);
    zu_buf_puts(&b, "workflow w() -> int {\n  parallel {\n");
    for (int i = 0; i < n; i++) zu_buf_printf(&b, "    branch { A(x) -> B(v%d); }\n", i);
    zu_buf_printf(&b, "  }\n  B(v%d) -> A(y);\n  return y @ A;\n}\n", n - 1);
    TComp *c = t_compile(b.data, T_CHECK);
    cr_expect(c->ok, "%.2000s", c->diag_text);
    t_free(c);
    /* the last branch writes v0 too: one conflict, with the first branch */
    char *last = strstr(b.data, "B(v19999); }");
    cr_assert_not_null(last);
    memcpy(last, "B(v0);     }", 12);
    c = t_compile(b.data, T_CHECK);
    cr_expect_not(c->ok);
    cr_expect_eq(t_count(c->diag_text, ": error: "), 2, "%.2000s", c->diag_text);
    cr_expect(
        strstr(c->diag_text, "error: `v0` on B is written by two branches of this `parallel`"),
        "%.2000s", c->diag_text);
    /* v19999 is now written by no branch: reading it after the region */
    cr_expect(strstr(c->diag_text, "error: `v19999` is not defined on B here"), "%.2000s",
              c->diag_text);
    t_free(c);
    zu_buf_free(&b);
}

/* Joins after many constructs over many variables: each `if` used to copy
 * four bit sets of lifelines × variables, 512 MB for 4,000 ifs over
 * 4,000 variables and 64 lifelines; what the checker keeps now is what
 * the paths define. */
Test(check, many_ifs_over_many_variables, .timeout = 30)
{
    int n = 4000;
    ZBuf b = {0};
    zu_buf_puts(&b, "lifeline L0");
    for (int l = 1; l < 64; l++) zu_buf_printf(&b, ", L%d", l);
    zu_buf_puts(&b, ";\nvar x: int = 0;\n");
    for (int i = 0; i < n; i++) zu_buf_printf(&b, "var v%d: int;\n", i);
    zu_buf_puts(&b, "workflow w() {\n");
    for (int i = 0; i < n; i++)
        zu_buf_printf(&b, "  if x > %d @ L0 { L0: v%d = 1; } else { L0: x = x + 1; }\n", i, i);
    zu_buf_printf(&b, "  L0(v%d) -> L1(x);\n}\n", n / 2);
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    TComp *c = t_compile(b.data, T_CHECK);
    getrusage(RUSAGE_SELF, &after);
    cr_expect_lt(after.ru_maxrss - before.ru_maxrss, 100 * 1024, "the check took %ld kB more",
                 after.ru_maxrss - before.ru_maxrss);
    cr_expect_not(c->ok);
    cr_expect_eq(t_count(c->diag_text, ": error: "), 1, "%.2000s", c->diag_text);
    cr_expect(strstr(c->diag_text, "error: `v2000` is not defined on L0 here"), "%.2000s",
              c->diag_text);
    cr_expect(strstr(c->diag_text, "note: `v2000` is defined on L0 on only some paths through "
                                   "this `if`"),
              "%.2000s", c->diag_text);
    t_free(c);
    zu_buf_free(&b);
}
