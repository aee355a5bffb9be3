/* Unit tests for the projection (project.c, language reference §7). */
#include <criterion/criterion.h>
#include <time.h>

#include "helpers.h"

/* Declarations shared by most tests: every variable has a default, so
 * definedness never gets in the way. */
#define DECLS                            \
    "var x: int = 0;\n"                  \
    "var y: int = 0;\n"                  \
    "var z: int = 0;\n"                  \
    "var s: str = \"\";\n"               \
    "var ok: bool = false;\n"            \
    "pure inc(t: int) -> int = t + 1;\n" \
    "extern pure pair(t: int) -> (int, int);\n"

static TComp *compile_ok(const char *text)
{
    TComp *c = t_compile(text, T_PROJECT);
    cr_assert(c->ok, "compilation failed:\n%s", c->diag_text ? c->diag_text : "");
    cr_assert_not_null(c->comp.locals);
    return c;
}

static int life_index(const TComp *c, const char *name)
{
    for (int i = 0; i < c->comp.prog->lifelines.len; i++) {
        const ZDecl *d = ZU_VEC_AT(c->comp.prog->lifelines, i);
        if (strcmp(d->name, name) == 0) return i;
    }
    cr_assert_fail("no lifeline %s", name);
    return -1;
}

/* The printed projection of one lifeline (or all with name == NULL). */
static char *projection(const char *text, const char *name)
{
    TComp *c = compile_ok(text);
    int L = name ? life_index(c, name) : -1;
    T_CAPTURE(got, zj_print(out, c->comp.locals, L));
    t_free(c);
    return got;
}

static void expect(const char *text, const char *name, const char *want)
{
    char *got = projection(text, name);
    cr_expect_str_eq(got, want, "projection of %s:\n--- got ---\n%s--- want ---\n%s",
                     name ? name : "*", got, want);
    free(got);
}

/* ---- atomic statements ---------------------------------------------- */

static const char *MSG_SRC = "lifeline A, B, C;\n" DECLS "workflow w() {\n"
                             "  A(x, 3) -> B(y, 3);\n"
                             "}\n";

Test(project, message_sender_receiver_bystander)
{
    expect(MSG_SRC, "A", "lifeline A {\n  send B (x, 3);\n}\n");
    expect(MSG_SRC, "B", "lifeline B {\n  recv A (y, 3);\n}\n");
    expect(MSG_SRC, "C", "lifeline C {\n}\n");
}

Test(project, all_lifelines_separated_by_blank_line)
{
    expect(MSG_SRC, NULL,
           "lifeline A {\n  send B (x, 3);\n}\n"
           "\n"
           "lifeline B {\n  recv A (y, 3);\n}\n"
           "\n"
           "lifeline C {\n}\n");
}

Test(project, self_message_is_local_assignment)
{
    const char *src2 = "lifeline A, B;\n" DECLS "var s2: int = 0;\n"
                       "workflow w() {\n"
                       "  A(x) -> A(y);\n"
                       "  A(x, y) -> A(z, s2);\n"
                       "}\n";
    expect(src2, "A", "lifeline A {\n  y = x;\n  (z, s2) = (x, y);\n}\n");
    expect(src2, "B", "lifeline B {\n}\n");
}

Test(project, actions_expressions_blocks)
{
    const char *src = "lifeline A, B;\n" DECLS "workflow w() {\n"
                      "  A: x = inc(y);\n"
                      "  A: (y, z) = pair(x);\n"
                      "  B: z = y + 1;\n"
                      "  B { x = 2; y = x * 3; }\n"
                      "}\n";
    expect(src, "A", "lifeline A {\n  x = inc(y);\n  (y, z) = pair(x);\n}\n");
    expect(src, "B", "lifeline B {\n  z = y + 1;\n  x = 2;\n  y = x * 3;\n}\n");
}

Test(project, local_structure)
{
    TComp *c = compile_ok("lifeline A, B;\n" DECLS "workflow w() {\n"
                          "  A(x) -> A(y);\n"
                          "  A(x) -> B(y);\n"
                          "  B { x = 2; y = 3; }\n"
                          "}\n");
    const ZLocalProgram *a = ZU_VEC_AT(c->comp.locals->programs, 0);
    const ZLocalProgram *b = ZU_VEC_AT(c->comp.locals->programs, 1);
    cr_assert_eq(c->comp.locals->programs.len, 2);
    cr_assert_eq(a->lifeline, 0);
    cr_assert_str_eq(a->name, "A");
    cr_assert_eq(a->body.len, 2);
    const ZLocal *self = ZU_VEC_AT(a->body, 0);
    cr_expect_eq(self->kind, L_ASSIGN);
    cr_expect_eq(self->vals.len, 1);
    cr_expect_eq(self->src->kind, S_MSG);
    const ZLocal *send = ZU_VEC_AT(a->body, 1);
    cr_expect_eq(send->kind, L_SEND);
    cr_expect_eq(send->peer, 1);
    cr_expect_eq(send->chan, 0);
    cr_expect_eq(b->body.len, 3);
    const ZLocal *recv = ZU_VEC_AT(b->body, 0);
    cr_expect_eq(recv->kind, L_RECV);
    cr_expect_eq(recv->peer, 0);
    const ZLocal *as = ZU_VEC_AT(b->body, 2);
    cr_expect_eq(as->kind, L_ASSIGN);
    cr_expect_eq(as->src->kind, S_ASSIGN);
    cr_expect_eq(c->comp.locals->namespaces.len, 1);
    cr_expect_str_eq(ZU_VEC_AT(c->comp.locals->namespaces, 0), "main");
    t_free(c);
}

/* ---- if ---------------------------------------------------------------- */

static const char *IF_SRC = "lifeline D, C, Owner, B, Idle;\n" DECLS "workflow w() {\n"
                            "  if x > 0 @ Owner {\n"
                            "    Owner(x) -> B(x);\n"
                            "    Owner(x) -> D(x);\n"
                            "  } else {\n"
                            "    C: y = 1;\n"
                            "  }\n"
                            "}\n";

Test(project, if_owner_broadcasts_in_declaration_order)
{
    expect(IF_SRC, "Owner",
           "lifeline Owner {\n"
           "  if x > 0 {\n"
           "    send-ctl D (true, if#1);\n"
           "    send-ctl C (true, if#1);\n"
           "    send-ctl B (true, if#1);\n"
           "    send B (x);\n"
           "    send D (x);\n"
           "  } else {\n"
           "    send-ctl D (false, if#1);\n"
           "    send-ctl C (false, if#1);\n"
           "    send-ctl B (false, if#1);\n"
           "  }\n"
           "}\n");
}

Test(project, if_recipients_and_bystander)
{
    expect(IF_SRC, "B",
           "lifeline B {\n"
           "  if recv-ctl Owner if#1 {\n"
           "    recv Owner (x);\n"
           "  }\n"
           "}\n");
    expect(IF_SRC, "C",
           "lifeline C {\n"
           "  if recv-ctl Owner if#1 {\n"
           "  } else {\n"
           "    y = 1;\n"
           "  }\n"
           "}\n");
    expect(IF_SRC, "Idle", "lifeline Idle {\n}\n");
}

Test(project, if_without_recipients_has_no_else)
{
    const char *src = "lifeline A, B;\n" DECLS "workflow w() {\n"
                      "  if x > 0 @ A { A: x = 1; }\n"
                      "  if x > 1 @ A { A: x = 2; } else { A: x = 3; }\n"
                      "}\n";
    expect(src, "A",
           "lifeline A {\n"
           "  if x > 0 {\n"
           "    x = 1;\n"
           "  }\n"
           "  if x > 1 {\n"
           "    x = 2;\n"
           "  } else {\n"
           "    x = 3;\n"
           "  }\n"
           "}\n");
    expect(src, "B", "lifeline B {\n}\n");
}

Test(project, if_without_source_else_still_broadcasts_false)
{
    const char *src = "lifeline A, B;\n" DECLS "workflow w() {\n"
                      "  if ok @ A { A(x) -> B(x); }\n"
                      "}\n";
    expect(src, "A",
           "lifeline A {\n"
           "  if ok {\n"
           "    send-ctl B (true, if#1);\n"
           "    send B (x);\n"
           "  } else {\n"
           "    send-ctl B (false, if#1);\n"
           "  }\n"
           "}\n");
    TComp *c = compile_ok(src);
    const ZLocalProgram *a = ZU_VEC_AT(c->comp.locals->programs, 0);
    const ZLocal *l = ZU_VEC_AT(a->body, 0);
    cr_expect_eq(l->kind, L_IF);
    cr_expect(l->has_else);
    cr_expect_str_eq(l->tag, "if#1");
    cr_expect_not_null(l->guard);
    const ZLocal *ctl = ZU_VEC_AT(l->els, 0);
    cr_expect_eq(ctl->kind, L_SEND_CTL);
    cr_expect_eq(ctl->peer, 1);
    cr_expect(!ctl->ctl_value);
    const ZLocalProgram *b = ZU_VEC_AT(c->comp.locals->programs, 1);
    const ZLocal *r = ZU_VEC_AT(b->body, 0);
    cr_expect_eq(r->kind, L_IF_RECV);
    cr_expect_eq(r->peer, 0);
    cr_expect(!r->has_else);
    t_free(c);
}

Test(project, skip_makes_a_recipient)
{
    const char *src = "lifeline A, B, C;\n" DECLS "workflow w() {\n"
                      "  if ok @ A { skip B; } else { A: x = 1; }\n"
                      "}\n";
    expect(src, NULL,
           "lifeline A {\n"
           "  if ok {\n"
           "    send-ctl B (true, if#1);\n"
           "  } else {\n"
           "    send-ctl B (false, if#1);\n"
           "    x = 1;\n"
           "  }\n"
           "}\n"
           "\n"
           "lifeline B {\n"
           "  if recv-ctl A if#1 {\n"
           "  }\n"
           "}\n"
           "\n"
           "lifeline C {\n"
           "}\n");
}

Test(project, else_if_chain)
{
    const char *src = "lifeline A, B;\n" DECLS "workflow w() {\n"
                      "  if x > 0 @ A { A(x) -> B(x); } else if x < 0 @ A { A(y) -> B(y); }\n"
                      "}\n";
    expect(src, "B",
           "lifeline B {\n"
           "  if recv-ctl A if#1 {\n"
           "    recv A (x);\n"
           "  } else {\n"
           "    if recv-ctl A if#2 {\n"
           "      recv A (y);\n"
           "    }\n"
           "  }\n"
           "}\n");
}

/* ---- while ------------------------------------------------------------- */

static const char *MAILBOX_SRC =
    "lifeline Mailbox, Writer;\n"
    "var pending: int = 0;\n"
    "var message: str = \"\";\n"
    "var draft: str = \"\";\n"
    "llm draft_reply(message: str) -> (draft: str) {\n"
    "  system = \"Reply.\";\n"
    "  user = \"{message}\";\n"
    "  parse = text;\n"
    "}\n"
    "workflow mailbox(pending: int @ Mailbox, message: str @ Mailbox) {\n"
    "  while pending > 0 @ Mailbox {\n"
    "    Mailbox(message) -> Writer(message);\n"
    "    Writer: draft = draft_reply(message);\n"
    "    Writer(draft) -> Mailbox(draft);\n"
    "    Mailbox: pending = pending - 1;\n"
    "  }\n"
    "}\n";

Test(project, mailbox_loop)
{
    expect(MAILBOX_SRC, NULL,
           "lifeline Mailbox {\n"
           "  while pending > 0 {\n"
           "    send-ctl Writer (true, while#1);\n"
           "    send Writer (message);\n"
           "    recv Writer (draft);\n"
           "    pending = pending - 1;\n"
           "  } else {\n"
           "    send-ctl Writer (false, while#1);\n"
           "  }\n"
           "}\n"
           "\n"
           "lifeline Writer {\n"
           "  while recv-ctl Mailbox while#1 {\n"
           "    recv Mailbox (message);\n"
           "    draft = draft_reply(message);\n"
           "    send Mailbox (draft);\n"
           "  }\n"
           "}\n");
}

Test(project, while_exit_protocol)
{
    const char *src = "lifeline A, B, C;\n" DECLS "workflow w() {\n"
                      "  while x < 3 @ A {\n"
                      "    A: x = inc(x);\n"
                      "  } else {\n"
                      "    A(x) -> C(x);\n"
                      "  }\n"
                      "}\n";
    expect(src, NULL,
           "lifeline A {\n"
           "  while x < 3 {\n"
           "    send-ctl C (true, while#1);\n"
           "    x = inc(x);\n"
           "  } else {\n"
           "    send-ctl C (false, while#1);\n"
           "    send C (x);\n"
           "  }\n"
           "}\n"
           "\n"
           "lifeline B {\n"
           "}\n"
           "\n"
           "lifeline C {\n"
           "  while recv-ctl A while#1 {\n"
           "  } else {\n"
           "    recv A (x);\n"
           "  }\n"
           "}\n");
}

Test(project, tags_in_preorder)
{
    const char *src = "lifeline A, B;\n" DECLS "workflow w() {\n"
                      "  while x < 3 @ A {\n"
                      "    if ok @ A { A(x) -> B(x); }\n"
                      "    A: x = inc(x);\n"
                      "  }\n"
                      "  if x > 5 @ B { B: y = 1; } else { B(y) -> A(y); }\n"
                      "}\n";
    expect(src, "B",
           "lifeline B {\n"
           "  while recv-ctl A while#1 {\n"
           "    if recv-ctl A if#2 {\n"
           "      recv A (x);\n"
           "    }\n"
           "  }\n"
           "  if x > 5 {\n"
           "    send-ctl A (true, if#3);\n"
           "    y = 1;\n"
           "  } else {\n"
           "    send-ctl A (false, if#3);\n"
           "    send A (y);\n"
           "  }\n"
           "}\n");
}

/* ---- parallel ---------------------------------------------------------- */

static const char *PAR_SRC = "lifeline A, B, C, D;\n" DECLS "workflow w() {\n"
                             "  parallel {\n"
                             "    branch {\n"
                             "      A(x) -> B(x);\n"
                             "      parallel {\n"
                             "        branch { B(x) -> C(x); }\n"
                             "        branch { C: y = 1; }\n"
                             "      }\n"
                             "    }\n"
                             "    branch { C { z = 2; s = \"a\"; } }\n"
                             "    branch { D: x = 3; }\n"
                             "  }\n"
                             "  parallel {\n"
                             "    branch { A(y) -> D(y); }\n"
                             "  }\n"
                             "}\n";

Test(project, nested_parallel_namespaces)
{
    expect(PAR_SRC, "C",
           "lifeline C {\n"
           "  parallel {\n"
           "    branch main/par1.1 {\n"
           "      parallel {\n"
           "        branch main/par1.1/par2.1 {\n"
           "          recv B (x);\n"
           "        }\n"
           "        branch main/par1.1/par2.2 {\n"
           "          y = 1;\n"
           "        }\n"
           "      }\n"
           "    }\n"
           "    branch main/par1.2 {\n"
           "      z = 2;\n"
           "      s = \"a\";\n"
           "    }\n"
           "  }\n"
           "}\n");
    expect(PAR_SRC, "D",
           "lifeline D {\n"
           "  parallel {\n"
           "    branch main/par1.3 {\n"
           "      x = 3;\n"
           "    }\n"
           "  }\n"
           "  parallel {\n"
           "    branch main/par3.1 {\n"
           "      recv A (y);\n"
           "    }\n"
           "  }\n"
           "}\n");
    expect(PAR_SRC, "A",
           "lifeline A {\n"
           "  parallel {\n"
           "    branch main/par1.1 {\n"
           "      send B (x);\n"
           "    }\n"
           "  }\n"
           "  parallel {\n"
           "    branch main/par3.1 {\n"
           "      send D (y);\n"
           "    }\n"
           "  }\n"
           "}\n");
}

static const char *ns(const TComp *c, int id)
{
    cr_assert(id >= 0 && id < c->comp.locals->namespaces.len, "bad namespace id %d", id);
    return ZU_VEC_AT(c->comp.locals->namespaces, id);
}

Test(project, parallel_channel_ids)
{
    TComp *c = compile_ok(PAR_SRC);
    const ZVec *n = &c->comp.locals->namespaces;
    cr_assert_eq(n->len, 7);
    const char *want[] = {"main",        "main/par1.1", "main/par1.1/par2.1", "main/par1.1/par2.2",
                          "main/par1.2", "main/par1.3", "main/par3.1"};
    for (int i = 0; i < 7; i++) cr_expect_str_eq(ZU_VEC_AT(*n, i), want[i]);

    /* B: par1 { branch 1.1 { recv A; par2 { branch 2.1 { send C } } } } */
    const ZLocalProgram *b = ZU_VEC_AT(c->comp.locals->programs, 1);
    cr_assert_eq(b->body.len, 1);
    const ZLocal *par = ZU_VEC_AT(b->body, 0);
    cr_expect_eq(par->kind, L_PAR);
    cr_expect_str_eq(ns(c, par->chan), "main");
    cr_assert_eq(par->body.len, 1);
    const ZLocal *br = ZU_VEC_AT(par->body, 0);
    cr_expect_eq(br->kind, L_PAR);
    cr_expect_str_eq(ns(c, br->chan), "main/par1.1");
    const ZLocal *recv = ZU_VEC_AT(br->body, 0);
    cr_expect_eq(recv->kind, L_RECV);
    cr_expect_str_eq(ns(c, recv->chan), "main/par1.1");
    const ZLocal *inner = ZU_VEC_AT(br->body, 1);
    cr_expect_eq(inner->kind, L_PAR);
    cr_expect_str_eq(ns(c, inner->chan), "main/par1.1");
    const ZLocal *ib = ZU_VEC_AT(inner->body, 0);
    cr_expect_str_eq(ns(c, ib->chan), "main/par1.1/par2.1");
    const ZLocal *send = ZU_VEC_AT(ib->body, 0);
    cr_expect_eq(send->kind, L_SEND);
    cr_expect_eq(send->peer, 2);
    cr_expect_str_eq(ns(c, send->chan), "main/par1.1/par2.1");

    /* the matching receive on C uses the same namespace */
    const ZLocalProgram *cc = ZU_VEC_AT(c->comp.locals->programs, 2);
    const ZLocal *cpar = ZU_VEC_AT(cc->body, 0);
    const ZLocal *cb1 = ZU_VEC_AT(cpar->body, 0);
    const ZLocal *cinner = ZU_VEC_AT(cb1->body, 0);
    const ZLocal *cib = ZU_VEC_AT(cinner->body, 0);
    const ZLocal *crecv = ZU_VEC_AT(cib->body, 0);
    cr_expect_eq(crecv->kind, L_RECV);
    cr_expect_eq(crecv->chan, send->chan);
    t_free(c);
}

Test(project, control_inside_parallel_uses_branch_namespace)
{
    const char *src = "lifeline A, B;\n" DECLS "workflow w() {\n"
                      "  parallel {\n"
                      "    branch { if ok @ A { A(x) -> B(x); } }\n"
                      "    branch { B: y = 1; }\n"
                      "  }\n"
                      "}\n";
    TComp *c = compile_ok(src);
    const ZLocalProgram *a = ZU_VEC_AT(c->comp.locals->programs, 0);
    const ZLocal *par = ZU_VEC_AT(a->body, 0);
    const ZLocal *br = ZU_VEC_AT(par->body, 0);
    const ZLocal *iff = ZU_VEC_AT(br->body, 0);
    cr_expect_eq(iff->kind, L_IF);
    const ZLocal *ctl = ZU_VEC_AT(iff->body, 0);
    cr_expect_eq(ctl->kind, L_SEND_CTL);
    cr_expect_str_eq(ns(c, ctl->chan), "main/par1.1");
    const ZLocalProgram *b = ZU_VEC_AT(c->comp.locals->programs, 1);
    const ZLocal *bpar = ZU_VEC_AT(b->body, 0);
    cr_assert_eq(bpar->body.len, 2);
    const ZLocal *bb = ZU_VEC_AT(bpar->body, 0);
    const ZLocal *rif = ZU_VEC_AT(bb->body, 0);
    cr_expect_eq(rif->kind, L_IF_RECV);
    cr_expect_str_eq(ns(c, rif->chan), "main/par1.1");
    t_free(c);
}

/* ---- coregion and return ---------------------------------------------- */

Test(project, coregion_recv_any)
{
    const char *src = "lifeline A, B, C, D;\n" DECLS "workflow w() {\n"
                      "  coregion { B(x) -> C(x); A(y, s) -> C(y, s); }\n"
                      "}\n";
    expect(src, NULL,
           "lifeline A {\n"
           "  send C (y, s);\n"
           "}\n"
           "\n"
           "lifeline B {\n"
           "  send C (x);\n"
           "}\n"
           "\n"
           "lifeline C {\n"
           "  recv-any {\n"
           "    B (x);\n"
           "    A (y, s);\n"
           "  }\n"
           "}\n"
           "\n"
           "lifeline D {\n"
           "}\n");
    TComp *c = compile_ok(src);
    const ZLocalProgram *cp = ZU_VEC_AT(c->comp.locals->programs, 2);
    const ZLocal *ra = ZU_VEC_AT(cp->body, 0);
    cr_expect_eq(ra->kind, L_RECV_ANY);
    cr_assert_eq(ra->body.len, 2);
    const ZLocal *arm = ZU_VEC_AT(ra->body, 1);
    cr_expect_eq(arm->kind, L_RECV);
    cr_expect_eq(arm->peer, 0);
    cr_expect_eq(arm->vals.len, 2);
    t_free(c);
}

Test(project, coregion_senders_are_recipients)
{
    const char *src = "lifeline A, B, C, D;\n" DECLS "workflow w() {\n"
                      "  if ok @ D { coregion { A(x) -> C(x); B(y) -> C(y); } }\n"
                      "}\n";
    expect(src, "D",
           "lifeline D {\n"
           "  if ok {\n"
           "    send-ctl A (true, if#1);\n"
           "    send-ctl B (true, if#1);\n"
           "    send-ctl C (true, if#1);\n"
           "  } else {\n"
           "    send-ctl A (false, if#1);\n"
           "    send-ctl B (false, if#1);\n"
           "    send-ctl C (false, if#1);\n"
           "  }\n"
           "}\n");
}

Test(project, returns)
{
    const char *single = "lifeline A, B;\n" DECLS "workflow w() -> int {\n"
                         "  A(x) -> B(y);\n"
                         "  return y @ B;\n"
                         "}\n";
    expect(single, NULL,
           "lifeline A {\n"
           "  send B (x);\n"
           "}\n"
           "\n"
           "lifeline B {\n"
           "  recv A (y);\n"
           "  return y;\n"
           "}\n");
    const char *tuple = "lifeline A, B, C;\n" DECLS "workflow w() -> (int, str, int) {\n"
                        "  A(x) -> B(y);\n"
                        "  return (y @ B, s @ C, x @ B);\n"
                        "}\n";
    expect(tuple, NULL,
           "lifeline A {\n"
           "  send B (x);\n"
           "}\n"
           "\n"
           "lifeline B {\n"
           "  recv A (y);\n"
           "  return[0] y;\n"
           "  return[2] x;\n"
           "}\n"
           "\n"
           "lifeline C {\n"
           "  return[1] s;\n"
           "}\n");
    TComp *c = compile_ok(tuple);
    const ZLocalProgram *cp = ZU_VEC_AT(c->comp.locals->programs, 2);
    const ZLocal *r = ZU_VEC_AT(cp->body, 0);
    cr_expect_eq(r->kind, L_RETURN);
    cr_expect_eq(r->ret_index, 1);
    t_free(c);
    c = compile_ok(single);
    const ZLocalProgram *bp = ZU_VEC_AT(c->comp.locals->programs, 1);
    r = ZU_VEC_AT(bp->body, 1);
    cr_expect_eq(r->kind, L_RETURN);
    cr_expect_eq(r->ret_index, -1);
    t_free(c);
}

/* ---- participation sets ------------------------------------------------ */

Test(project, participation_sets)
{
    TComp *c = compile_ok(
        "lifeline A, B, C, D, E;\n" DECLS "workflow w() -> int {\n"
        "  A(x) -> B(x);\n"
        "  if ok @ C { skip D; } else { A(x) -> A(y); }\n"
        "  parallel { branch { B: x = 1; } branch { coregion { A(y) -> D(y); B(z) -> D(z); } } }\n"
        "  return x @ E;\n"
        "}\n");
    const ZVec *body = &c->comp.wf->body;
    ZLifeSet s0 = zj_part_stmt(ZU_VEC_AT(*body, 0));
    cr_expect(zj_set_has(&s0, 0) && zj_set_has(&s0, 1) && !zj_set_has(&s0, 2));
    ZLifeSet s1 = zj_part_stmt(ZU_VEC_AT(*body, 1));
    cr_expect(zj_set_has(&s1, 0) && !zj_set_has(&s1, 1) && zj_set_has(&s1, 2) &&
              zj_set_has(&s1, 3));
    ZLifeSet s2 = zj_part_stmt(ZU_VEC_AT(*body, 2));
    cr_expect(zj_set_has(&s2, 0) && zj_set_has(&s2, 1) && !zj_set_has(&s2, 2) &&
              zj_set_has(&s2, 3));
    ZLifeSet s3 = zj_part_stmt(ZU_VEC_AT(*body, 3));
    for (int i = 0; i < 5; i++) cr_expect(!zj_set_has(&s3, i), "return participates with %d", i);
    ZLifeSet all = zj_part_list(body);
    cr_expect(zj_set_has(&all, 3) && !zj_set_has(&all, 4));
    t_free(c);
}

Test(project, return_only_lifeline)
{
    expect("lifeline A, B;\n" DECLS "workflow w() -> int {\n"
           "  A: x = 1;\n"
           "  return y @ B;\n"
           "}\n",
           "B", "lifeline B {\n  return y;\n}\n");
}

/* ---- size -------------------------------------------------------------- */

/* A generated workflow: n statements over k lifelines, with loops, ifs and
 * parallel regions sprinkled in. */
static char *generate(int n, int k)
{
    ZBuf b = {0};
    zu_buf_puts(&b, "lifeline ");
    for (int i = 0; i < k; i++) zu_buf_printf(&b, "%sL%d", i ? ", " : "", i);
    zu_buf_puts(&b, ";\nvar x: int = 0;\nvar y: int = 0;\nworkflow big() {\n");
    int stmts = 0;
    for (int i = 0; stmts < n; i++) {
        int a = i % k, c = (i * 7 + 1) % k;
        if (c == a) c = (a + 1) % k;
        switch (i % 5) {
        case 0:
            zu_buf_printf(&b, "  L%d(x) -> L%d(y);\n", a, c);
            stmts++;
            break;
        case 1:
            zu_buf_printf(&b, "  L%d: x = x + 1;\n", a);
            stmts++;
            break;
        case 2:
            zu_buf_printf(
                &b,
                "  if x > %d @ L%d { L%d(x) -> L%d(y); L%d: y = 1; } else { L%d(y) -> L%d(x); }\n",
                i, a, a, c, c, c, (c + 1) % k);
            stmts += 4;
            break;
        case 3:
            zu_buf_printf(&b, "  while y < %d @ L%d { L%d(y) -> L%d(x); L%d: y = y + 1; }\n", i, a,
                          a, c, a);
            stmts += 3;
            break;
        default:
            zu_buf_printf(&b,
                          "  parallel { branch { L%d(x) -> L%d(y); } branch { L%d: x = 2; } }\n", a,
                          c, (c + 1) % k == a ? (c + 2) % k : (c + 1) % k);
            stmts += 3;
            break;
        }
    }
    zu_buf_puts(&b, "}\n");
    return b.data;
}

Test(project, large_program_is_fast)
{
    char *text = generate(2000, 16);
    TComp *c = t_compile(text, T_CHECK);
    cr_assert(c->ok, "generated program rejected:\n%s", c->diag_text);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ZLocalSet *ls = zj_project(c->comp.arena, c->comp.prog, c->comp.wf);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    cr_expect_eq(ls->programs.len, 16);
    cr_expect(secs < 0.25, "projection took %.3f s", secs);
    T_CAPTURE(printed, zj_print(out, ls, -1));
    cr_expect(strlen(printed) > 1000);
    free(printed);
    t_free(c);
    free(text);
}

Test(project, more_than_64_lifelines)
{
    ZBuf src = {0};
    zu_buf_puts(&src, "lifeline ");
    for (int i = 0; i < 70; i++) zu_buf_printf(&src, "%sL%d", i ? ", " : "", i);
    zu_buf_puts(&src, ";\n" DECLS "workflow w() {\n"
                      "  if ok @ L65 { L65(x) -> L1(x); L66: y = 1; skip L69; }\n"
                      "}\n");
    expect(src.data, "L65",
           "lifeline L65 {\n"
           "  if ok {\n"
           "    send-ctl L1 (true, if#1);\n"
           "    send-ctl L66 (true, if#1);\n"
           "    send-ctl L69 (true, if#1);\n"
           "    send L1 (x);\n"
           "  } else {\n"
           "    send-ctl L1 (false, if#1);\n"
           "    send-ctl L66 (false, if#1);\n"
           "    send-ctl L69 (false, if#1);\n"
           "  }\n"
           "}\n");
    expect(src.data, "L66", "lifeline L66 {\n  if recv-ctl L65 if#1 {\n    y = 1;\n  }\n}\n");
    expect(src.data, "L64", "lifeline L64 {\n}\n");
    TComp *c = compile_ok(src.data);
    ZLifeSet s = zj_part_list(&c->comp.wf->body);
    for (int i = 0; i < 70; i++)
        cr_expect_eq(zj_set_has(&s, i), i == 1 || i == 65 || i == 66 || i == 69, "L%d", i);
    t_free(c);
    zu_buf_free(&src);
}
