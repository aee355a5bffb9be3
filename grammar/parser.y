/* parser.y — the grammar of .zg workflows (language reference §2–§6).
 *
 * The grammar builds the AST and nothing else: no name lookups, no types.
 * Errors: `error` productions at declaration and statement level let one
 * run report several syntax errors; resolution does not start after any. */
%define api.pure full
%define api.prefix {zpy}
%define api.location.type {ZSpan}
%define parse.error custom
%locations
%expect 0
%param {void *scanner}
%parse-param {ZParser *ps}

%code requires {
#include "zp.h"
typedef struct ZTokVal {
    const char *text;  /* source text; identifiers interned; strings decoded */
    size_t n;          /* decoded string length */
    int64_t i;
    double f;
} ZTokVal;
}

%union {
    ZTokVal tok;
    ZExpr *expr;
    ZStmt *stmt;
    ZDecl *decl;
    ZType *type;
    ZParam *param;
    ZProp *prop;
    ZBranch *branch;
    ZReturnItem *ret;
    ZVec vec;
}

%code {
#include <string.h>

#include "suggest.h"

/* Every span names its file (ZSpan.file): bison's default copies only the
 * line and column fields. */
#define YYLLOC_DEFAULT(Cur, Rhs, N)                                    \
    do {                                                               \
        if (N) {                                                       \
            (Cur) = YYRHSLOC(Rhs, 1);                                  \
            (Cur).last_line = YYRHSLOC(Rhs, N).last_line;              \
            (Cur).last_column = YYRHSLOC(Rhs, N).last_column;          \
        } else {                                                       \
            (Cur) = YYRHSLOC(Rhs, 0);                                  \
            (Cur).first_line = (Cur).last_line;                        \
            (Cur).first_column = (Cur).last_column;                    \
        }                                                              \
        (Cur).file = ps->file;                                         \
        (Cur).exp = 0;                                                 \
    } while (0)
#define YYSTYPE ZPYSTYPE
#define YYLTYPE ZPYLTYPE
#include "lexer.h"

static void zpyerror(ZSpan *loc, void *scanner, ZParser *ps, const char *msg);
#define A (ps->arena)

static ZExpr *mk(ZParser *ps, ZExprKind k, ZSpan at) { return za_expr(ps->arena, k, at); }

static int depth_of(const ZExpr *e) { return e ? e->depth : 0; }

/* Sets the depth of a freshly built node and enforces the limit. */
static ZExpr *deep(ZParser *ps, ZExpr *e)
{
    int d = depth_of(e->a);
    if (depth_of(e->b) > d) d = depth_of(e->b);
    if (depth_of(e->c) > d) d = depth_of(e->c);
    for (int i = 0; i < e->args.len; i++)
        if (depth_of(e->args.items[i]) > d) d = depth_of(e->args.items[i]);
    e->depth = d + 1;
    if (e->depth > ZP_MAX_EXPR_DEPTH && !ps->too_deep) {
        zd_error(ps->diag, e->span, "expression nested too deeply (the limit is %d levels)",
                 ZP_MAX_EXPR_DEPTH);
        ps->too_deep = true; /* the lexer ends the input: the parse is abandoned */
    }
    return e;
}

static ZExpr *unary(ZParser *ps, ZSpan at, ZOp op, ZExpr *a)
{
    ZExpr *e = mk(ps, E_UNARY, at);
    e->op = op;
    e->a = a;
    return deep(ps, e);
}

static ZExpr *binary(ZParser *ps, ZSpan at, ZOp op, ZExpr *a, ZExpr *b)
{
    ZExpr *e = mk(ps, E_BINARY, at);
    e->op = op;
    e->a = a;
    e->b = b;
    return deep(ps, e);
}

static ZExpr *prefix(ZParser *ps, ZSpan at, ZExprKind k, ZExpr *a)
{
    ZExpr *e = mk(ps, k, at);
    e->a = a;
    return deep(ps, e);
}

static ZExpr *name_expr(ZParser *ps, ZSpan at, const char *name)
{
    ZExpr *e = mk(ps, E_NAME, at);
    e->name = name;
    e->name_span = at;
    e->depth = 1;
    return e;
}

static ZExpr *call(ZParser *ps, ZSpan at, const char *name, ZSpan name_at, ZVec args)
{
    ZExpr *e = mk(ps, E_CALL, at);
    e->name = name;
    e->name_span = name_at;
    e->args = args;
    return deep(ps, e);
}

static ZLifeRef life(const char *name, ZSpan at) { return (ZLifeRef){name, at, -1}; }

static ZParam *param(ZParser *ps, const char *name, ZSpan at, ZType *t)
{
    ZParam *p = zu_alloc(A, sizeof *p);
    p->name = name;
    p->span = at;
    p->type = t;
    p->owner_index = -1;
    return p;
}

static ZTarget *target(ZParser *ps, const char *name, ZSpan at)
{
    ZTarget *t = zu_alloc(A, sizeof *t);
    t->name = name;
    t->span = at;
    return t;
}

static ZVec vec1(ZParser *ps, void *x)
{
    ZVec v = {0};
    zu_vec_push(A, &v, x);
    return v;
}

static ZVec push(ZParser *ps, ZVec v, void *x)
{
    zu_vec_push(A, &v, x);
    return v;
}

static ZDecl *action(ZParser *ps, ZSpan at, ZActionKind k, ZTokVal name, ZSpan name_at,
                     ZVec params, ZDecl *res)
{
    ZDecl *d = za_decl(A, D_ACTION, at);
    d->action = k;
    d->name = name.text;
    d->name_span = name_at;
    d->params = params;
    d->results = res->results;
    d->named_results = res->named_results;
    return d;
}

/* `A: targets = rhs` and block items share this. */
static ZStmt *assign(ZParser *ps, ZSpan at, ZVec targets, bool tuple, ZExpr *rhs)
{
    ZStmt *s = za_stmt(A, S_ASSIGN, at);
    s->targets = targets;
    s->tuple_lhs = tuple;
    s->expr = rhs;
    return s;
}

static ZTokVal type_kw_name(ZParser *ps, const char *kw)
{
    ZTokVal t = {0};
    t.text = zu_intern(A, kw, strlen(kw));
    return t;
}
}

%token <tok> IDENT "identifier" INT_LIT "integer literal" FLOAT_LIT "float literal"
%token <tok> STR_LIT "string literal"
%token <tok> KW_LIFELINE "'lifeline'" KW_CONST "'const'" KW_ENUM "'enum'" KW_VAR "'var'"
%token <tok> KW_GUARD "'guard'" KW_LLM "'llm'" KW_PURE "'pure'" KW_EXTERN "'extern'"
%token <tok> KW_EFFECT "'effect'" KW_HUMAN "'human'" KW_WORKFLOW "'workflow'"
%token <tok> KW_PLANNER "'planner'"
%token <tok> KW_IMPORT "'import'" KW_FRAGMENT "'fragment'"
%token <tok> KW_RETURN "'return'" KW_IF "'if'" KW_ELSE "'else'" KW_WHILE "'while'"
%token <tok> KW_SKIP "'skip'" KW_PARALLEL "'parallel'" KW_BRANCH "'branch'"
%token <tok> KW_COREGION "'coregion'" KW_PREV "'prev'" KW_SINCE "'since'" KW_ONCE "'once'"
%token <tok> KW_HISTORICALLY "'historically'" KW_PAST "'past'" KW_SEEN "'seen'"
%token <tok> KW_TRUE "'true'" KW_FALSE "'false'" KW_NULL "'null'"
%token <tok> KW_BOOL "'bool'" KW_INT "'int'" KW_FLOAT "'float'" KW_STR "'str'" KW_JSON "'json'"
%token <tok> KW_STORE "'store'" KW_CELL "'cell'" KW_TOOLS "'tools'" KW_ATOMIC "'atomic'"
%token <tok> KW_READ "'read'" KW_WRITE "'write'" KW_CONSISTENCY "'consistency'"
/* Comments, returned only to zp_tokenize_trivia (the formatter and the
 * language server): the grammar never sees one. */
%token <tok> COMMENT "comment"
%token <tok> ARROW "'->'" EQ "'=='" NE "'!='" LE "'<='" GE "'>='" AND "'&&'" OR "'||'"
%token <tok> '{' '}' '(' ')' ';' ',' ':' '=' '@' '.' '+' '-' '*' '/' '%' '<' '>' '!' '?'

%type <decl> decl action_decl results opt_results store_items
%type <vec> atomic_items tool_names
%type <stmt> atomic_item
%type <vec> fparams fparams1 flocals
%type <param> fparam
%type <decl> flocal
%type <vec> ident_list params params1 result_items inputs inputs1 props stmts branches
%type <vec> args args1 local_stmts targets ret_items type_list
%type <param> param result_item input ident_item
%type <type> type opt_result
%type <prop> prop
%type <expr> expr cond or_expr and_expr since_expr prefix_expr eq_expr rel_expr
%type <expr> add_expr mul_expr unary primary prop_value opt_default
%type <stmt> stmt if_stmt while_stmt assign_rhs local_stmt
%type <branch> branch
%type <ret> ret_item
%type <tok> type_kw


%%

/* program := decl* */
program
    : %empty
    | program decl      { if ($2) zu_vec_push(A, &ps->prog->decls, $2); }
    ;

/* Declarations (§3) */
decl
    : KW_LIFELINE ident_list ';' {
          for (int i = 0; i < $2.len; i++) {
              ZParam *n = $2.items[i];
              ZDecl *d = za_decl(A, D_LIFELINE, n->span);
              d->name = n->name;
              d->name_span = n->span;
              zu_vec_push(A, &ps->prog->decls, d);
          }
          $$ = NULL;
      }
    | KW_CONST IDENT '=' expr ';' {
          $$ = za_decl(A, D_CONST, @$);
          $$->name = $2.text; $$->name_span = @2; $$->expr = $4;
      }
    | KW_ENUM IDENT '{' ident_list opt_comma '}' {
          $$ = za_decl(A, D_ENUM, @$);
          $$->name = $2.text; $$->name_span = @2; $$->members = $4;
      }
    | KW_VAR IDENT ':' type opt_default ';' {
          $$ = za_decl(A, D_VAR, @$);
          $$->name = $2.text; $$->name_span = @2; $$->type = $4; $$->expr = $5;
      }
    | KW_GUARD IDENT '=' expr ';' {
          $$ = za_decl(A, D_GUARD, @$);
          $$->name = $2.text; $$->name_span = @2; $$->expr = $4;
      }
    | action_decl
    | KW_WORKFLOW IDENT '(' inputs ')' opt_result '{' stmts '}' {
          $$ = za_decl(A, D_WORKFLOW, @$);
          $$->name = $2.text; $$->name_span = @2; $$->params = $4;
          if ($6) {
              if ($6->kind == TY_TUPLE)
                  for (int i = 0; i < $6->elems.len; i++)
                      zu_vec_push(A, &$$->results, param(ps, NULL, ((ZType *)$6->elems.items[i])->span, $6->elems.items[i]));
              else
                  zu_vec_push(A, &$$->results, param(ps, NULL, $6->span, $6));
          }
          $$->body = $8;
          for (int i = 0; i < $8.len; i++)
              if (((ZStmt *)$8.items[i])->kind == S_RETURN) $$->ret = $8.items[i];
      }
    /* import "file.zg"; (§3.4) */
    | KW_IMPORT STR_LIT ';' {
          $$ = za_decl(A, D_IMPORT, @$);
          $$->name = $2.text; $$->name_span = @2;
      }
    /* fragment f(W: lifeline, x: T, const n: T) { var y: T; stmts } (§3.3) */
    | KW_FRAGMENT IDENT '(' fparams ')' '{' flocals stmts '}' {
          $$ = za_decl(A, D_FRAGMENT, @$);
          $$->name = $2.text; $$->name_span = @2; $$->params = $4;
          $$->locals = $7; $$->body = $8;
      }
    /* store S { cell c: T = e; tools t, u; consistency L2; } (§11) */
    | KW_STORE IDENT '{' store_items '}' {
          $$ = $4; $$->span = @$;
          $$->name = $2.text; $$->name_span = @2;
      }
    | error ';' { $$ = NULL; }
    | error '}' { $$ = NULL; }
    ;

opt_comma: %empty | ',' ;

ident_list
    : ident_item                { $$ = vec1(ps, $1); }
    | ident_list ',' ident_item { $$ = push(ps, $1, $3); }
    ;

ident_item: IDENT { $$ = param(ps, $1.text, @1, NULL); } ;

opt_default
    : %empty    { $$ = NULL; }
    | '=' expr  { $$ = $2; }
    ;

/* Fragment parameters and local variables. */
fparams
    : %empty    { $$ = (ZVec){0}; }
    | fparams1
    ;
fparams1
    : fparam               { $$ = vec1(ps, $1); }
    | fparams1 ',' fparam  { $$ = push(ps, $1, $3); }
    ;
fparam
    : IDENT ':' KW_LIFELINE  { $$ = param(ps, $1.text, @1, NULL); $$->fkind = FP_LIFELINE; }
    | IDENT ':' type         { $$ = param(ps, $1.text, @1, $3); $$->fkind = FP_VAR; }
    | KW_CONST IDENT ':' type { $$ = param(ps, $2.text, @2, $4); $$->fkind = FP_CONST; }
    ;
flocals
    : %empty           { $$ = (ZVec){0}; }
    | flocals flocal   { $$ = push(ps, $1, $2); }
    ;
flocal
    : KW_VAR IDENT ':' type ';' {
          $$ = za_decl(A, D_VAR, @$);
          $$->name = $2.text; $$->name_span = @2; $$->type = $4;
      }
    ;

/* The items of a store (§11): cells, tools, its consistency level. */
store_items
    : %empty { $$ = za_decl(A, D_STORE, @$); $$->level = -1; }
    | store_items KW_CELL IDENT ':' type opt_default ';' {
          $$ = $1;
          ZDecl *c = za_decl(A, D_CELL, zd_join(@2, @7));
          c->name = $3.text; c->name_span = @3; c->type = $5; c->expr = $6;
          zu_vec_push(A, &$$->cells, c);
      }
    | store_items KW_TOOLS ident_list ';' {
          $$ = $1;
          for (int i = 0; i < $3.len; i++) zu_vec_push(A, &$$->tools, $3.items[i]);
      }
    | store_items KW_CONSISTENCY IDENT ';' {
          $$ = $1;
          if ($$->level_name) { $$->level_twice = true; $$->level_again = @3; }
          else { $$->level_name = $3.text; $$->level_span = @3; }
      }
    | store_items error ';' { $$ = $1; }
    ;

/* Types: bool int float str json or an enum name. */
type
    : KW_BOOL   { $$ = za_type(A, TY_BOOL, @1); }
    | KW_INT    { $$ = za_type(A, TY_INT, @1); }
    | KW_FLOAT  { $$ = za_type(A, TY_FLOAT, @1); }
    | KW_STR    { $$ = za_type(A, TY_STR, @1); }
    | KW_JSON   { $$ = za_type(A, TY_JSON, @1); }
    | IDENT     { $$ = za_type(A, TY_NAMED, @1); $$->name = $1.text; }
    ;

type_list
    : type                { $$ = vec1(ps, $1); }
    | type_list ',' type  { $$ = push(ps, $1, $3); }
    ;

/* Actions (§3.1) */
action_decl
    : KW_LLM IDENT '(' params ')' opt_results '{' props '}' {
          $$ = action(ps, @$, ACT_LLM, $2, @2, $4, $6);
          $$->has_body = true; $$->props = $8;
      }
    | KW_LLM IDENT '(' params ')' opt_results ';' {
          $$ = action(ps, @$, ACT_LLM, $2, @2, $4, $6);
      }
    | KW_HUMAN IDENT '(' params ')' opt_results '{' props '}' {
          $$ = action(ps, @$, ACT_HUMAN, $2, @2, $4, $6);
          $$->has_body = true; $$->props = $8;
      }
    | KW_HUMAN IDENT '(' params ')' opt_results ';' {
          $$ = action(ps, @$, ACT_HUMAN, $2, @2, $4, $6);
      }
    | KW_PLANNER IDENT '(' params ')' opt_results '{' props '}' {
          $$ = action(ps, @$, ACT_PLANNER, $2, @2, $4, $6);
          $$->has_body = true; $$->props = $8;
      }
    | KW_PURE IDENT '(' params ')' opt_results '=' expr ';' {
          $$ = action(ps, @$, ACT_PURE, $2, @2, $4, $6);
          $$->expr = $8;
      }
    | KW_EXTERN KW_PURE IDENT '(' params ')' opt_results ';' {
          $$ = action(ps, @$, ACT_EXTERN_PURE, $3, @3, $5, $7);
      }
    | KW_EFFECT IDENT '(' params ')' opt_results ';' {
          $$ = action(ps, @$, ACT_EFFECT, $2, @2, $4, $6);
      }
    ;

params
    : %empty    { $$ = (ZVec){0}; }
    | params1
    ;
params1
    : param              { $$ = vec1(ps, $1); }
    | params1 ',' param  { $$ = push(ps, $1, $3); }
    ;
param: IDENT ':' type { $$ = param(ps, $1.text, @1, $3); } ;

opt_results
    : %empty        { $$ = za_decl(A, D_ACTION, @$); }
    | ARROW results { $$ = $2; }
    ;

/* -> T | -> (T, U) | -> (x: T, y: U) */
results
    : type {
          $$ = za_decl(A, D_ACTION, @$);
          zu_vec_push(A, &$$->results, param(ps, NULL, @1, $1));
      }
    | '(' result_items ')' {
          $$ = za_decl(A, D_ACTION, @$);
          $$->results = $2;
          $$->named_results = ((ZParam *)$2.items[0])->name != NULL;
          for (int i = 1; i < $2.len; i++)
              if ((((ZParam *)$2.items[i])->name != NULL) != $$->named_results) {
                  zd_error(ps->diag, ((ZParam *)$2.items[i])->span,
                           "results must be all named or all unnamed");
                  break;
              }
      }
    ;
result_items
    : result_item                   { $$ = vec1(ps, $1); }
    | result_items ',' result_item  { $$ = push(ps, $1, $3); }
    ;
result_item
    : IDENT ':' type  { $$ = param(ps, $1.text, @1, $3); }
    | type            { $$ = param(ps, NULL, @1, $1); }
    ;

props
    : %empty      { $$ = (ZVec){0}; }
    | props prop  { $$ = push(ps, $1, $2); }
    ;
prop
    : IDENT '=' prop_value ';' {
          $$ = zu_alloc(A, sizeof *$$);
          $$->key = $1.text; $$->span = @1; $$->value = $3;
      }
    ;
/* A property value is an expression, or a type keyword (`parse = json`,
 * `parse = enum`). */
prop_value
    : expr
    | type_kw { $$ = name_expr(ps, @1, $1.text); }
    ;
type_kw
    : KW_BOOL   { $$ = type_kw_name(ps, "bool"); }
    | KW_INT    { $$ = type_kw_name(ps, "int"); }
    | KW_FLOAT  { $$ = type_kw_name(ps, "float"); }
    | KW_STR    { $$ = type_kw_name(ps, "str"); }
    | KW_JSON   { $$ = type_kw_name(ps, "json"); }
    | KW_ENUM   { $$ = type_kw_name(ps, "enum"); }
    ;

/* Workflows (§3.2) */
inputs
    : %empty    { $$ = (ZVec){0}; }
    | inputs1
    ;
inputs1
    : input              { $$ = vec1(ps, $1); }
    | inputs1 ',' input  { $$ = push(ps, $1, $3); }
    ;
input
    : IDENT ':' type '@' IDENT {
          $$ = param(ps, $1.text, @1, $3);
          $$->owner = $5.text; $$->owner_span = @5;
      }
    ;
opt_result
    : %empty                  { $$ = NULL; }
    | ARROW type              { $$ = $2; }
    | ARROW '(' type_list ')' {
          if ($3.len == 1) $$ = $3.items[0];
          else { $$ = za_type(A, TY_TUPLE, @$); $$->elems = $3; }
      }
    ;

/* Statements (§4) */
stmts
    : %empty      { $$ = (ZVec){0}; }
    | stmts stmt  { $$ = $1; if ($2) zu_vec_push(A, &$$, $2); }
    ;

stmt
    /* A(e1, …) -> B(p1, …); */
    : IDENT '(' args ')' ARROW IDENT '(' args ')' ';' {
          $$ = za_stmt(A, S_MSG, @$);
          $$->life = life($1.text, @1); $$->to = life($6.text, @6);
          $$->args = $3; $$->params = $8;
      }
    /* A: y = e;  A: (y, z) = f(x);  A: f(x); */
    | IDENT ':' assign_rhs ';' {
          $$ = $3; $$->span = @$; $$->life = life($1.text, @1);
      }
    /* A { y = f(x); z = y + 1; } */
    | IDENT '{' local_stmts '}' {
          $$ = za_stmt(A, S_BLOCK, @$);
          $$->life = life($1.text, @1);
          $$->body = $3;
          for (int i = 0; i < $3.len; i++) ((ZStmt *)$3.items[i])->life = $$->life;
      }
    /* A: atomic S { y = read c; … write c = e; } (§11) */
    | IDENT ':' KW_ATOMIC IDENT '{' atomic_items '}' {
          $$ = za_stmt(A, S_ATOMIC, @$);
          $$->life = life($1.text, @1);
          $$->store_name = $4.text; $$->store_span = @4;
          $$->body = $6;
          for (int i = 0; i < $6.len; i++) ((ZStmt *)$6.items[i])->life = $$->life;
      }
    /* f(a, …); a fragment use (§4) */
    | IDENT '(' args ')' ';' {
          $$ = za_stmt(A, S_USE, @$);
          $$->life = life($1.text, @1);
          $$->args = $3;
      }
    | if_stmt
    | while_stmt
    | KW_SKIP IDENT ';' {
          $$ = za_stmt(A, S_SKIP, @$);
          $$->life = life($2.text, @2);
      }
    | KW_PARALLEL '{' branches '}' {
          $$ = za_stmt(A, S_PAR, @$);
          $$->branches = $3;
      }
    | KW_COREGION '{' stmts '}' {
          $$ = za_stmt(A, S_COREGION, @$);
          $$->body = $3;
      }
    | KW_RETURN ret_item ';' {
          $$ = za_stmt(A, S_RETURN, @$);
          $$->items = vec1(ps, $2);
      }
    | KW_RETURN '(' ret_items ')' ';' {
          $$ = za_stmt(A, S_RETURN, @$);
          $$->items = $3;
          $$->tuple_ret = $3.len > 1; /* `return (v @ A);` is a single result */
      }
    | error ';' { $$ = NULL; }
    ;

if_stmt
    : KW_IF expr '@' IDENT '{' stmts '}' {
          $$ = za_stmt(A, S_IF, @$);
          $$->expr = $2; $$->life = life($4.text, @4); $$->body = $6;
      }
    | KW_IF expr '@' IDENT '{' stmts '}' KW_ELSE '{' stmts '}' {
          $$ = za_stmt(A, S_IF, @$);
          $$->expr = $2; $$->life = life($4.text, @4); $$->body = $6;
          $$->has_else = true; $$->els = $10; $$->else_span = @8;
      }
    | KW_IF expr '@' IDENT '{' stmts '}' KW_ELSE if_stmt {
          $$ = za_stmt(A, S_IF, @$);
          $$->expr = $2; $$->life = life($4.text, @4); $$->body = $6;
          $$->has_else = true; $$->els = vec1(ps, $9); $$->else_span = @8;
      }
    ;

while_stmt
    : KW_WHILE expr '@' IDENT '{' stmts '}' {
          $$ = za_stmt(A, S_WHILE, @$);
          $$->expr = $2; $$->life = life($4.text, @4); $$->body = $6;
      }
    | KW_WHILE expr '@' IDENT '{' stmts '}' KW_ELSE '{' stmts '}' {
          $$ = za_stmt(A, S_WHILE, @$);
          $$->expr = $2; $$->life = life($4.text, @4); $$->body = $6;
          $$->has_else = true; $$->els = $10; $$->else_span = @8;
      }
    ;

assign_rhs
    : IDENT '=' expr              { $$ = assign(ps, @$, vec1(ps, target(ps, $1.text, @1)), false, $3); }
    | '(' targets ')' '=' expr    { $$ = assign(ps, @$, $2, true, $5); }
    | IDENT '(' args ')'          { $$ = assign(ps, @$, (ZVec){0}, false, call(ps, @$, $1.text, @1, $3)); }
    ;

targets
    : IDENT              { $$ = vec1(ps, target(ps, $1.text, @1)); }
    | targets ',' IDENT  { $$ = push(ps, $1, target(ps, $3.text, @3)); }
    ;

local_stmts
    : %empty                   { $$ = (ZVec){0}; }
    | local_stmts local_stmt   { $$ = $1; if ($2) zu_vec_push(A, &$$, $2); }
    ;
local_stmt
    : assign_rhs ';'  { $$ = $1; $$->span = @$; }
    | error ';'       { $$ = NULL; }
    ;

/* The items of an atomic block: reads, local statements and tool calls,
 * writes.  Messages and control statements are parsed so that the checker
 * can say why they are not allowed there. */
atomic_items
    : %empty                     { $$ = (ZVec){0}; }
    | atomic_items atomic_item   { $$ = $1; if ($2) zu_vec_push(A, &$$, $2); }
    ;
atomic_item
    : assign_rhs ';'  { $$ = $1; $$->span = @$; }
    | IDENT '=' KW_READ IDENT ';' {
          $$ = za_stmt(A, S_READ, @$);
          $$->targets = vec1(ps, target(ps, $1.text, @1));
          $$->cell = $4.text; $$->cell_span = @4;
      }
    | KW_WRITE IDENT '=' expr ';' {
          $$ = za_stmt(A, S_WRITE, @$);
          $$->cell = $2.text; $$->cell_span = @2; $$->expr = $4;
      }
    | KW_WRITE KW_TOOLS '=' '(' tool_names ')' ';' {
          $$ = za_stmt(A, S_WRITE, @$);
          $$->registry = true; $$->cell_span = @2; $$->tools = $5;
      }
    | IDENT '(' args ')' ARROW IDENT '(' args ')' ';' {
          $$ = za_stmt(A, S_MSG, @$);
          $$->life = life($1.text, @1); $$->to = life($6.text, @6);
          $$->args = $3; $$->params = $8;
      }
    | if_stmt
    | while_stmt
    | KW_SKIP IDENT ';' {
          $$ = za_stmt(A, S_SKIP, @$);
          $$->life = life($2.text, @2);
      }
    | KW_PARALLEL '{' branches '}' {
          $$ = za_stmt(A, S_PAR, @$);
          $$->branches = $3;
      }
    | error ';'       { $$ = NULL; }
    ;
tool_names
    : %empty      { $$ = (ZVec){0}; }
    | ident_list
    ;

branches
    : %empty            { $$ = (ZVec){0}; }
    | branches branch   { $$ = push(ps, $1, $2); }
    ;
branch
    : KW_BRANCH '{' stmts '}' {
          $$ = zu_alloc(A, sizeof *$$);
          $$->body = $3; $$->span = @$;
      }
    ;

ret_items
    : ret_item                { $$ = vec1(ps, $1); }
    | ret_items ',' ret_item  { $$ = push(ps, $1, $3); }
    ;
ret_item
    : IDENT '@' IDENT {
          $$ = zu_alloc(A, sizeof *$$);
          $$->value = name_expr(ps, @1, $1.text);
          $$->at = life($3.text, @3);
      }
    ;

/* Expressions and CPL formulas (§5, §6), loosest first:
 *   ?:   ||   &&   since   prev/once/historically/past   == !=
 *   < <= > >=   + -   * / %   unary ! -   primary */
expr: cond ;

cond
    : or_expr
    | or_expr '?' expr ':' cond {
          $$ = mk(ps, E_COND, @$); $$->c = $1; $$->a = $3; $$->b = $5; $$ = deep(ps, $$);
      }
    ;
or_expr
    : and_expr
    | or_expr OR and_expr     { $$ = binary(ps, @$, OP_OR, $1, $3); }
    ;
and_expr
    : since_expr
    | and_expr AND since_expr { $$ = binary(ps, @$, OP_AND, $1, $3); }
    ;
since_expr
    : prefix_expr
    | since_expr KW_SINCE prefix_expr {
          $$ = mk(ps, E_SINCE, @$); $$->a = $1; $$->b = $3; $$ = deep(ps, $$);
      }
    ;
prefix_expr
    : eq_expr
    | KW_PREV prefix_expr         { $$ = prefix(ps, @$, E_PREV, $2); }
    | KW_ONCE prefix_expr         { $$ = prefix(ps, @$, E_ONCE, $2); }
    | KW_HISTORICALLY prefix_expr { $$ = prefix(ps, @$, E_HIST, $2); }
    | KW_PAST prefix_expr         { $$ = prefix(ps, @$, E_PAST, $2); }
    ;
eq_expr
    : rel_expr
    | eq_expr EQ rel_expr  { $$ = binary(ps, @$, OP_EQ, $1, $3); }
    | eq_expr NE rel_expr  { $$ = binary(ps, @$, OP_NE, $1, $3); }
    ;
rel_expr
    : add_expr
    | rel_expr '<' add_expr  { $$ = binary(ps, @$, OP_LT, $1, $3); }
    | rel_expr LE add_expr   { $$ = binary(ps, @$, OP_LE, $1, $3); }
    | rel_expr '>' add_expr  { $$ = binary(ps, @$, OP_GT, $1, $3); }
    | rel_expr GE add_expr   { $$ = binary(ps, @$, OP_GE, $1, $3); }
    ;
add_expr
    : mul_expr
    | add_expr '+' mul_expr  { $$ = binary(ps, @$, OP_ADD, $1, $3); }
    | add_expr '-' mul_expr  { $$ = binary(ps, @$, OP_SUB, $1, $3); }
    ;
mul_expr
    : unary
    | mul_expr '*' unary  { $$ = binary(ps, @$, OP_MUL, $1, $3); }
    | mul_expr '/' unary  { $$ = binary(ps, @$, OP_DIV, $1, $3); }
    | mul_expr '%' unary  { $$ = binary(ps, @$, OP_MOD, $1, $3); }
    ;
unary
    : primary
    | '!' unary  { $$ = unary(ps, @$, OP_NOT, $2); }
    | '-' unary {
          /* fold a negated literal so that `-7` is a constant
             (literals are at most INT64_MAX: negation cannot overflow) */
          if ($2->kind == E_INT) {
              $$ = $2; $$->lit.i = -$$->lit.i; $$->span = @$;
          } else if ($2->kind == E_FLOAT) {
              $$ = $2; $$->lit.f = -$$->lit.f; $$->span = @$;
          } else
              $$ = unary(ps, @$, OP_NEG, $2);
      }
    ;
primary
    : INT_LIT    { $$ = mk(ps, E_INT, @1); $$->lit.i = $1.i; $$->depth = 1; }
    | FLOAT_LIT  { $$ = mk(ps, E_FLOAT, @1); $$->lit.f = $1.f; $$->depth = 1; }
    | STR_LIT    { $$ = mk(ps, E_STR, @1); $$->lit.s = $1.text; $$->slen = $1.n; $$->depth = 1; }
    | KW_TRUE    { $$ = mk(ps, E_BOOL, @1); $$->lit.b = true; $$->depth = 1; }
    | KW_FALSE   { $$ = mk(ps, E_BOOL, @1); $$->lit.b = false; $$->depth = 1; }
    | KW_NULL    { $$ = mk(ps, E_NULL, @1); $$->depth = 1; }
    | IDENT      { $$ = name_expr(ps, @1, $1.text); }
    | IDENT '(' args ')'     { $$ = call(ps, @$, $1.text, @1, $3); }
    | KW_INT '(' args ')'    { $$ = call(ps, @$, zu_intern(A, "int", 3), @1, $3); }
    | KW_FLOAT '(' args ')'  { $$ = call(ps, @$, zu_intern(A, "float", 5), @1, $3); }
    | KW_STR '(' args ')'    { $$ = call(ps, @$, zu_intern(A, "str", 3), @1, $3); }
    | '@' IDENT '.' IDENT {
          $$ = mk(ps, E_AT_VAR, @$);
          $$->lifeline = $2.text; $$->lifeline_span = @2;
          $$->name = $4.text; $$->name_span = @4; $$->depth = 1;
      }
    | '@' IDENT '(' expr ')' {
          $$ = mk(ps, E_AT, @$);
          $$->lifeline = $2.text; $$->lifeline_span = @2; $$->a = $4;
          $$ = deep(ps, $$);
      }
    | KW_SEEN IDENT {
          $$ = mk(ps, E_SEEN, @$);
          $$->lifeline = $2.text; $$->lifeline_span = @2; $$->depth = 1;
      }
    | '(' expr ')'  { $$ = $2; }
    | '(' expr ',' args1 ')' {
          $$ = mk(ps, E_TUPLE, @$);
          zu_vec_push(A, &$$->args, $2);
          for (int i = 0; i < $4.len; i++) zu_vec_push(A, &$$->args, $4.items[i]);
          $$ = deep(ps, $$);
      }
    ;

args
    : %empty  { $$ = (ZVec){0}; }
    | args1
    ;
args1
    : expr            { $$ = vec1(ps, $1); }
    | args1 ',' expr  { $$ = push(ps, $1, $3); }
    ;

%%

/* Renders a token for a message: `foo` for the actual token, 'x' names
 * for expected ones. */
static const char *shown(ZParser *ps, yysymbol_kind_t k)
{
    if (k == YYSYMBOL_YYEOF) return "end of file";
    const char *n = yysymbol_name(k);
    if (n[0] == '"') n++; /* bison quotes aliases: "'while'" */
    size_t len = strlen(n);
    if (len && n[len - 1] == '"') len--;
    char *copy = zu_strndup(ps->arena, n, len);
    if (copy[0] == '\'' && len >= 2 && copy[len - 1] == '\'') {
        copy[0] = '`';
        copy[len - 1] = '`';
    }
    return copy;
}

/* Whether symbol k is a keyword of the language ('lifeline', 'var', …):
 * its name in the grammar is a quoted word. */
static bool is_keyword(yysymbol_kind_t k)
{
    const char *n = yysymbol_name(k);
    if (n && n[0] == '"') n++; /* "'lifeline'" or 'lifeline' */
    if (!n || n[0] != '\'') return false;
    const char *c = n + 1;
    for (; *c && *c != '\''; c++)
        if (!(*c >= 'a' && *c <= 'z')) return false;
    return c - n > 2; /* a word, not a character token such as '{' */
}

/* The keyword closest to word among the expected tokens, or NULL. */
static const char *keyword_near(ZParser *ps, const char *word, const yysymbol_kind_t *exp, int n)
{
    ZvSuggest sg;
    zv_suggest_init(&sg, word);
    for (int i = 0; i < n; i++) {
        if (!is_keyword(exp[i])) continue;
        const char *k = shown(ps, exp[i]); /* `lifeline` */
        zv_suggest_try(&sg, zu_strndup(ps->arena, k + 1, strlen(k) - 2));
    }
    return sg.best;
}

/* The symbol of a character token such as ';' (bison numbers them in
 * its own order). */
static yysymbol_kind_t char_symbol(char c)
{
    char name[4] = {'\'', c, '\'', 0};
    for (int k = 0; k < YYNTOKENS; k++)
        if (!strcmp(yysymbol_name((yysymbol_kind_t)k), name)) return (yysymbol_kind_t)k;
    return YYSYMBOL_YYUNDEF;
}

static bool expects(const yysymbol_kind_t *exp, int n, yysymbol_kind_t k)
{
    for (int i = 0; i < n; i++)
        if (exp[i] == k) return true;
    return false;
}

static int yyreport_syntax_error(const yypcontext_t *ctx, void *scanner, ZParser *ps)
{
    (void)scanner;
    ps->in_error = true;
    if (ps->too_deep) return 0; /* already reported */
    yysymbol_kind_t got = yypcontext_token(ctx);
    const YYLTYPE *at = yypcontext_location(ctx);
    enum { MAX = 6, ALL = 128 };
    yysymbol_kind_t all[ALL];
    int nall = yypcontext_expected_tokens(ctx, all, ALL);
    if (nall < 0) nall = 0;
    int n = nall < MAX ? nall : 0; /* listed when there are few */
    ZSpan loc = *at;
    if (got == YYSYMBOL_YYEOF) {
        /* point just past the end rather than at a phantom token */
        loc.first_line = loc.last_line = ps->line;
        loc.first_column = loc.last_column = ps->col;
    }
    /* a `;` forgotten at the end of a line: said where it belongs, after
       the previous token, not at the start of the next line */
    if (got != char_symbol(';') && expects(all, nall, char_symbol(';')) && ps->prev_ptr &&
        ps->prev_end_line > 0 && at->first_line > ps->prev_end_line) {
        ZSpan after = *at;
        after.first_line = after.last_line = ps->prev_end_line;
        after.first_column = after.last_column = ps->prev_end_col;
        zd_error(ps->diag, after, "expected `;` after `%.*s`", (int)ps->prev_len, ps->prev_ptr);
        return 0;
    }
    ZBuf b = {0};
    const char *hint = NULL;
    char why[160];
    if (got == YYSYMBOL_YYEOF)
        zu_buf_puts(&b, "unexpected end of file");
    else if (got == YYSYMBOL_IDENT || got == YYSYMBOL_INT_LIT || got == YYSYMBOL_FLOAT_LIT)
        zu_buf_printf(&b, "unexpected %s `%s`", shown(ps, got), zp_last_text(ps));
    else if (got == YYSYMBOL_STR_LIT)
        zu_buf_puts(&b, "unexpected string literal");
    else
        zu_buf_printf(&b, "unexpected %s", shown(ps, got));
    if (n > 0) {
        zu_buf_puts(&b, ", expected ");
        for (int i = 0; i < n; i++) {
            if (i) zu_buf_puts(&b, i == n - 1 ? " or " : ", ");
            zu_buf_puts(&b, shown(ps, all[i]));
        }
    }
    const char *near = got == YYSYMBOL_IDENT ? keyword_near(ps, zp_last_text(ps), all, nall) : NULL;
    if (near)
        zu_buf_printf(&b, "; did you mean `%s`?", near);
    else if (is_keyword(got) && expects(all, nall, YYSYMBOL_IDENT)) {
        snprintf(why, sizeof why, "%s is a reserved word of the language: it cannot be a name",
                 shown(ps, got));
        hint = why;
    }
    else if (got == char_symbol('{') && expects(all, nall, char_symbol('@')))
        hint = "every `if` and `while` names the lifeline that decides: `if COND @ Lifeline { … }`";
    else if (got == char_symbol('=') && expects(all, nall, char_symbol(':')))
        hint = "a statement says which lifeline runs it: `Lifeline: x = …;`";
    zd_error(ps->diag, loc, "%s", b.data);
    zu_buf_free(&b);
    if (hint) zd_note(ps->diag, loc, "%s", hint);
    /* "to close `{` at line N" */
    if (got == YYSYMBOL_YYEOF && ps->depth > 0) {
        ZSpan o = ps->open_at[ps->depth - 1];
        zd_note(ps->diag, o, "to close the `%c` opened here", ps->open_kind[ps->depth - 1]);
    }
    return 0;
}

static void zpyerror(ZSpan *loc, void *scanner, ZParser *ps, const char *msg)
{
    (void)scanner;
    ps->in_error = true;
    if (strstr(msg, "exhausted"))
        zd_error(ps->diag, *loc, "program nested too deeply");
    else
        zd_error(ps->diag, *loc, "%s", msg);
}
