/* zgc.h — the compiler's table of contents.
 *
 * compiler/ holds the passes and their data structures.  It includes
 * nothing from grammar/, backend/, driver/ or oracle/; those build on it.
 * One compilation (pipeline.c) is a straight list of passes, each
 * stoppable:
 *
 *   source --parse, imports--> AST --zx_expand--> AST without fragment uses
 *   --zr_resolve--> resolved AST --zk_check--> typed AST --zj_project-->
 *   local programs --zg_enumerate--> guard tables --zm_plan--> monitor plan
 *
 * (parse is the grammar's zp_parse, handed in by the caller; the pipeline
 * calls it once per file.)  Every
 * intermediate form has a printer (za_print_program, zj_print, zg_print,
 * and zm_print for the monitor plan the backend emits).
 * Modules and their prefixes:
 *
 *   util.c      zu_   arena, vectors, integer maps, string buffers,
 *                     interning, heap scratch space, internal errors
 *   diag.c      zd_   diagnostics with source excerpts
 *   ast.c       za_   AST constructors, kind names, printer
 *   expand.c    zx_   fragments: checked where declared, expanded at uses
 *   resolve.c   zr_   name resolution and declaration checks
 *   eval.c      ze_   values of expressions: the one evaluator (constant
 *                     folding), the arithmetic rules written down
 *   check.c     zk_   types, definedness, coregion/parallel rules
 *                     (check_*.c, split by concern; check.h internal)
 *   project.c   zj_   projection to local programs (language spec §7)
 *   guards.c    zg_   CPL guard unfolding, sub(Φ), Vars(Φ), monitor tables
 *   races.c     zq_   races of store operations: the pairs some execution
 *                     runs unordered, their anomaly classes, the lowest
 *                     safe consistency level of each store
 *   plan.c      zm_   the monitor plan the runtime executes: what each
 *                     lifeline keeps, what each edge carries, eval
 *                     functions, state and message sizes
 *   pipeline.c  zc_   one compilation: source to monitor plan, pass by pass;
 *                     imports (the search path, files read once, cycles)
 *
 * Memory: everything a compilation produces (AST, types, local programs,
 * guard tables, interned names) lives in one ZArena and is freed by
 * zu_arena_free; nothing frees individual nodes.  A pass may use heap
 * scratch space (zu_xmalloc, zu_xcalloc, zu_xrealloc, ZBuf) that it frees
 * before it returns.
 *
 * Errors: a user's mistake is a diagnostic (ZDiag, file:line:col) and the
 * pass goes on to find more; a pass reports whether it saw errors and
 * later passes do not run.  A bug in zgc is ZU_ICE (aborts with the
 * location).  Out of memory is zu_oom: "zgc: error: out of memory", exit 1.
 */
#ifndef ZGC_H
#define ZGC_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "vocab.h"

#if defined(__GNUC__)
#define ZG_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define ZG_NORETURN __attribute__((noreturn))
#else
#define ZG_PRINTF(f, a)
#define ZG_NORETURN
#endif

/* ===================================================================== */
/* util.c                                                                 */
/* ===================================================================== */

typedef struct ZArena ZArena;

ZArena *zu_arena_new(void);
void zu_arena_free(ZArena *a);
void *zu_alloc(ZArena *a, size_t size); /* zeroed, 16-aligned */
char *zu_strndup(ZArena *a, const char *s, size_t n);
char *zu_strdup(ZArena *a, const char *s);
char *zu_fmt(ZArena *a, const char *fmt, ...) ZG_PRINTF(2, 3);
/* Interned identifiers: equal strings give the same pointer. */
const char *zu_intern(ZArena *a, const char *s, size_t n);
/* FNV-1a, the hash of the intern table and of the resolver's symbol
 * tables: of n bytes, or of a NUL-terminated string (inline: both are on
 * the front end's hot path). */
#define ZU_FNV_BASIS 1469598103934665603ull
#define ZU_FNV_PRIME 1099511628211ull
static inline uint64_t zu_hash(const char *s, size_t n)
{
    uint64_t h = ZU_FNV_BASIS;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * ZU_FNV_PRIME;
    return h;
}
static inline uint64_t zu_hash_str(const char *s)
{
    uint64_t h = ZU_FNV_BASIS;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * ZU_FNV_PRIME;
    return h;
}

/* Heap scratch space for a pass; out of memory exits through zu_oom. */
ZG_NORETURN void zu_oom(void);
void *zu_xmalloc(size_t n);
void *zu_xcalloc(size_t n, size_t size);
void *zu_xrealloc(void *p, size_t n);

/* Internal compiler error: a bug in zgc, never a user error. */
ZG_NORETURN void zu_ice(const char *file, int line, const char *fmt, ...) ZG_PRINTF(3, 4);
#define ZU_ICE(...) zu_ice(__FILE__, __LINE__, __VA_ARGS__)
#define ZU_UNREACHABLE() zu_ice(__FILE__, __LINE__, "unreachable")

/* Growable arrays of pointers, arena-backed.  Used for every list in the
 * AST and the local programs. */
typedef struct ZVec {
    void **items;
    int len, cap;
} ZVec;
void zu_vec_push(ZArena *a, ZVec *v, void *item);
#define ZU_VEC_AT(v, i) ((v).items[(i)])

/* Hash map from integer keys (below 2^64 - 1) to pointer-sized values,
 * heap scratch space (free with zu_imap_free; a zeroed ZIMap is empty).
 * Where a dense table over (lifeline, variable) pairs or over the
 * subformulas would cost more than the program itself.  Iterate with
 * ZU_IMAP_EACH (the order is the table's, not the insertion order). */
typedef struct ZIMap {
    uint64_t *keys; /* key + 1; 0 marks a free slot */
    uintptr_t *vals;
    size_t cap, len;
} ZIMap;
/* The value of key, or NULL when absent. */
uintptr_t *zu_imap_get(const ZIMap *m, uint64_t key);
/* The value of key, added as 0 when absent (*added says which; added may
 * be NULL).  The pointer is valid until the next put. */
uintptr_t *zu_imap_put(ZIMap *m, uint64_t key, bool *added);
void zu_imap_free(ZIMap *m);
#define ZU_IMAP_EACH(m, i)                \
    for (size_t i = 0; i < (m)->cap; i++) \
        if ((m)->keys[i])
#define ZU_IMAP_KEY(m, i) ((m)->keys[i] - 1)

/* Heap string buffer (malloc-backed; free with zu_buf_free). */
typedef struct ZBuf {
    char *data;
    size_t len, cap;
} ZBuf;
void zu_buf_putc(ZBuf *b, char c);
void zu_buf_puts(ZBuf *b, const char *s);
void zu_buf_printf(ZBuf *b, const char *fmt, ...) ZG_PRINTF(2, 3);
void zu_buf_free(ZBuf *b);

/* Reads a whole regular file (a FIFO, a device or a directory is refused:
 * "not a regular file"); returns NULL and sets *err (static text) on
 * failure. */
char *zu_read_file(const char *path, size_t *len, const char **err);

/* ===================================================================== */
/* diag.c                                                                 */
/* ===================================================================== */

/* A source span.  Lines and columns are 1-based; columns count Unicode code
 * points (a tab is one column).  last_* is inclusive.  The field names are
 * the ones bison's default location code uses.  `file` numbers the source
 * file (0: the file compiled, then imported files in the order they were
 * read; ZDiag.files); `exp` is 0, or 1 + the index in ZDiag.expansions of
 * the fragment expansion the node was copied by. */
typedef struct ZSpan {
    int first_line, first_column;
    int last_line, last_column;
    int file, exp;
} ZSpan;

typedef struct ZSource {
    const char *path;
    const char *text; /* NUL-terminated copy */
    size_t len;
    int index;         /* its ZSpan.file */
    ZSpan imported_at; /* the `import` that read it (file 0: none) */
} ZSource;

/* One use of a fragment, expanded: what diagnostics inside the copy point
 * back to ("expanded from here"). */
typedef struct ZExpansion {
    const char *fragment;
    ZSpan at; /* the use statement (itself possibly inside an expansion) */
} ZExpansion;

typedef enum { ZD_ERROR, ZD_WARNING, ZD_NOTE } ZDiagLevel;

/* The warnings (warn.c): each has a name for -W<name> / -Wno-<name> and
 * is on unless turned off. */
#define ZD_WARNINGS(X)                                                                     \
    X(ZW_UNUSED_VARIABLE, "unused-variable", "a variable no statement reads or writes")    \
    X(ZW_UNUSED_CONST, "unused-const", "a constant nothing uses")                          \
    X(ZW_UNUSED_ACTION, "unused-action", "an action no statement calls")                   \
    X(ZW_UNUSED_LIFELINE, "unused-lifeline",                                               \
      "a lifeline that takes part in nothing in a "                                        \
      "workflow")                                                                          \
    X(ZW_ENDLESS_LOOP, "endless-loop", "a while loop that, once entered, can never end")   \
    X(ZW_CONSTANT_GUARD, "constant-guard",                                                 \
      "an if or while condition that is always true or "                                   \
      "always false")                                                                      \
    X(ZW_UNSEEN_LIFELINE, "unseen-lifeline",                                               \
      "a CPL guard that reads a lifeline no message ever leads from to the guard's owner") \
    X(ZW_STORE_LEVEL, "store-level",                                                       \
      "a store declared at a consistency level below what its racing operations need")
#define ZD_W_ENUM(k, name, help) k,
typedef enum { ZD_WARNINGS(ZD_W_ENUM) ZW__COUNT } ZWarning;
#undef ZD_W_ENUM
/* The warning named name ("unused-variable"), or -1. */
int zd_warning_lookup(const char *name);
const char *zd_warning_name(ZWarning w);
const char *zd_warning_help(ZWarning w);
/* A receiver of diagnostics as data (the language server): the message
 * without its location or excerpt. */
typedef void ZDiagSink(void *ctx, ZDiagLevel lvl, ZSpan at, const char *msg);

typedef struct ZDiag {
    const ZSource *src; /* file 0 */
    /* the other files and the expansions (NULL: file 0 only, none) */
    const ZVec *files;      /* ZSource*, indexed by ZSpan.file */
    const ZVec *expansions; /* ZExpansion*, indexed by ZSpan.exp - 1 */
    FILE *out;              /* where diagnostics go (stderr by default) */
    int errors;             /* errors reported so far */
    int warnings;           /* warnings reported so far (zd_warn) */
    unsigned warn_off;      /* 1 << ZWarning: the warnings turned off */
    bool werror;            /* -Werror: warnings are errors */
    bool muted;             /* the last warning was off: drop its notes */
    int max_errors;         /* stop reporting after this many (0 = 100) */
    bool color;
    ZDiagSink *sink; /* when set, diagnostics go there instead of to out */
    void *sink_ctx;
} ZDiag;

void zd_init(ZDiag *d, const ZSource *src, FILE *out);
/* The source file a span is in (file 0 for an unknown number). */
const ZSource *zd_source(const ZDiag *d, ZSpan at);
void zd_error(ZDiag *d, ZSpan at, const char *fmt, ...) ZG_PRINTF(3, 4);
void zd_warning(ZDiag *d, ZSpan at, const char *fmt, ...) ZG_PRINTF(3, 4);
/* Warning w, unless it is off: "warning: MESSAGE [-Wname]", or with
 * d->werror an error "MESSAGE [-Werror,-Wname]".  Notes after a warning
 * that is off are dropped too. */
void zd_warn(ZDiag *d, ZWarning w, ZSpan at, const char *fmt, ...) ZG_PRINTF(4, 5);
/* A note attached to the previous error ("`x` is defined on A here").
 * Every error and warning in an imported file is followed by a note at
 * the import line, and every one inside a fragment expansion by an
 * "expanded from here" note at the use (outermost last). */
void zd_note(ZDiag *d, ZSpan at, const char *fmt, ...) ZG_PRINTF(3, 4);
void zd_vreport(ZDiag *d, ZDiagLevel lvl, ZSpan at, const char *fmt, va_list ap);
ZSpan zd_join(ZSpan a, ZSpan b); /* from a's start to b's end */

/* ===================================================================== */
/* ast.c — the global workflow                                            */
/* ===================================================================== */

/* Types.  Named types are resolved to enums by the resolver. */
typedef enum {
    TY_ERROR, /* after an error: silences follow-on errors */
    TY_BOOL,
    TY_INT,
    TY_FLOAT,
    TY_STR,
    TY_JSON,
    TY_ENUM,
    TY_NAMED, /* unresolved name (parser output) */
    TY_TUPLE, /* action results only */
    TY_VOID,  /* workflow without result */
    TY_NULL,  /* the type of the literal null (assignable to json) */
} ZTypeKind;

typedef struct ZDecl ZDecl;
typedef struct ZType ZType;
struct ZType {
    ZTypeKind kind;
    ZSpan span;
    const char *name; /* TY_NAMED/TY_ENUM: the enum's name */
    ZDecl *enum_decl; /* TY_ENUM */
    ZVec elems;       /* TY_TUPLE: ZType* */
};

/* Expressions.  One tree serves plain expressions and CPL formulas. */
#define ZA_EXPR_KINDS(X)                                                   \
    X(E_INT, "int")                                                        \
    X(E_FLOAT, "float")                                                    \
    X(E_STR, "str")                                                        \
    X(E_BOOL, "bool")                                                      \
    X(E_NULL, "null")                                                      \
    X(E_NAME, "name")     /* variable, const, enum member, guard, param */ \
    X(E_AT_VAR, "at-var") /* @B.x */                                       \
    X(E_UNARY, "unary")                                                    \
    X(E_BINARY, "binary")                                                  \
    X(E_COND, "cond")   /* c ? a : b */                                    \
    X(E_CALL, "call")   /* builtin or action */                            \
    X(E_TUPLE, "tuple") /* (a, b): fallback values only */                 \
    X(E_AT, "at")       /* @B(φ) */                                       \
    X(E_PREV, "prev")                                                      \
    X(E_SINCE, "since")                                                    \
    X(E_ONCE, "once")                                                      \
    X(E_HIST, "historically")                                              \
    X(E_PAST, "past")                                                      \
    X(E_SEEN, "seen")

#define ZA_ENUM(k, s) k,
typedef enum { ZA_EXPR_KINDS(ZA_ENUM) E__COUNT } ZExprKind;

typedef enum {
    OP_NEG,
    OP_NOT, /* unary */
    OP_ADD,
    OP_SUB,
    OP_MUL,
    OP_DIV,
    OP_MOD, /* arithmetic */
    OP_EQ,
    OP_NE,
    OP_LT,
    OP_LE,
    OP_GT,
    OP_GE,
    OP_AND,
    OP_OR,
} ZOp;

/* What a name refers to after resolution. */
typedef enum {
    NAME_UNRESOLVED,
    NAME_VAR, /* a workflow variable (per lifeline) */
    NAME_CONST,
    NAME_MEMBER, /* enum member */
    NAME_GUARD,  /* named guard formula */
    NAME_PARAM,  /* parameter of a pure action body */
} ZNameKind;

/* Builtin functions of the expression language (§5). */
#define ZA_BUILTINS(X)                  \
    X(BI_LEN, "len", 1)                 \
    X(BI_LOWER, "lower", 1)             \
    X(BI_UPPER, "upper", 1)             \
    X(BI_TRIM, "trim", 1)               \
    X(BI_CONTAINS, "contains", 2)       \
    X(BI_STARTS_WITH, "starts_with", 2) \
    X(BI_ENDS_WITH, "ends_with", 2)     \
    X(BI_STR, "str", 1)                 \
    X(BI_INT, "int", 1)                 \
    X(BI_FLOAT, "float", 1)             \
    X(BI_JSON_GET, "json_get", 2)       \
    X(BI_JSON_STR, "json_str", 1)
#define ZA_BI_ENUM(k, s, n) k,
typedef enum { BI_NONE = 0, ZA_BUILTINS(ZA_BI_ENUM) BI__COUNT } ZBuiltin;

typedef struct ZExpr ZExpr;
struct ZExpr {
    ZExprKind kind;
    ZSpan span;
    int depth;   /* nesting depth of the tree (the parser bounds it) */
    ZType *type; /* set by the checker */
    union {
        int64_t i;     /* E_INT */
        double f;      /* E_FLOAT */
        bool b;        /* E_BOOL */
        const char *s; /* E_STR: decoded UTF-8 (may contain NUL? no: rejected) */
    } lit;
    size_t slen; /* E_STR: byte length */
    ZOp op;      /* E_UNARY, E_BINARY */
    /* E_NAME: name; E_AT_VAR: lifeline + name; E_AT/E_SEEN: lifeline;
     * E_CALL: callee name */
    const char *name;
    ZSpan name_span;
    const char *lifeline;
    ZSpan lifeline_span;
    int life; /* resolved lifeline index, -1 if none */
    ZNameKind name_kind;
    ZDecl *decl;      /* resolved declaration (var, const, enum, guard, action) */
    int member;       /* NAME_MEMBER: member index; NAME_PARAM: param index */
    ZBuiltin builtin; /* E_CALL of a builtin */
    ZExpr *a, *b, *c; /* operands: unary a; binary/since a,b; cond c?a:b */
    ZVec args;        /* E_CALL, E_TUPLE: ZExpr* */
};

/* A lifeline reference in a statement. */
typedef struct ZLifeRef {
    const char *name;
    ZSpan span;
    int index; /* declaration order, -1 until resolved */
} ZLifeRef;

/* A variable being written (assignment target, receive binding). */
typedef struct ZTarget {
    const char *name;
    ZSpan span;
    ZDecl *var; /* resolved D_VAR */
} ZTarget;

#define ZA_STMT_KINDS(X)                                                   \
    X(S_MSG, "message")   /* A(e..) -> B(p..); self when A == B */         \
    X(S_ASSIGN, "assign") /* A: (y..) = expr;  (action or local) */        \
    X(S_BLOCK, "block")   /* A { assignments } */                          \
    X(S_IF, "if")                                                          \
    X(S_WHILE, "while")                                                    \
    X(S_SKIP, "skip")                                                      \
    X(S_PAR, "parallel")                                                   \
    X(S_COREGION, "coregion")                                              \
    X(S_RETURN, "return")                                                  \
    X(S_USE, "use")       /* f(args); a fragment use, until expanded */    \
    X(S_ATOMIC, "atomic") /* A: atomic S { items }: one store operation */ \
    X(S_READ, "read")     /* atomic item: y = read cell; */                \
    X(S_WRITE, "write")   /* atomic item: write cell = e; write tools = (..); */
typedef enum { ZA_STMT_KINDS(ZA_ENUM) S__COUNT } ZStmtKind;

typedef struct ZStmt ZStmt;
typedef struct ZBranch {
    ZVec body; /* ZStmt* */
    ZSpan span;
} ZBranch;

typedef struct ZReturnItem {
    ZExpr *value; /* E_NAME */
    ZLifeRef at;
} ZReturnItem;

struct ZStmt {
    ZStmtKind kind;
    ZSpan span;
    ZLifeRef life;  /* S_MSG sender, S_ASSIGN/S_BLOCK/S_SKIP lifeline,
                        S_IF/S_WHILE owner */
    ZLifeRef to;    /* S_MSG receiver */
    ZVec args;      /* S_MSG: sender values (ZExpr*, E_NAME or literal) */
    ZVec params;    /* S_MSG: receiver bindings (ZExpr*, E_NAME var or constant) */
    ZVec targets;   /* S_ASSIGN: ZTarget* (0..n) */
    ZExpr *expr;    /* S_ASSIGN: right-hand side; S_IF/S_WHILE: guard */
    bool is_action; /* S_ASSIGN: the rhs is a call of a declared action, pure
                        ones included (set by the resolver) */
    bool tuple_lhs; /* S_ASSIGN: written as (y1, ...) = */
    ZVec body;      /* S_BLOCK, S_IF then, S_WHILE body, S_COREGION messages */
    ZVec els;       /* S_IF/S_WHILE else */
    bool has_else;
    ZSpan else_span;
    ZVec branches;  /* S_PAR: ZBranch* */
    ZVec items;     /* S_RETURN: ZReturnItem* */
    bool tuple_ret; /* S_RETURN: return (a @ A, b @ B) */
    int construct;  /* S_IF/S_WHILE: pre-order control index (1-based),
                        S_PAR: pre-order parallel index (1-based);
                        set by zr_resolve */
    /* S_ATOMIC: the store (body: its items); S_READ/S_WRITE: the cell
     * (S_READ: targets[0] is the variable; S_WRITE: expr the value) */
    const char *store_name;
    ZSpan store_span;
    ZDecl *store; /* resolved D_STORE (S_ATOMIC, and its items) */
    const char *cell;
    ZSpan cell_span;
    ZDecl *cell_decl; /* resolved D_CELL */
    bool registry;    /* S_WRITE: `write tools = (t, ...);` */
    ZVec tools;       /* S_WRITE registry: ZParam* (name, span, ref) */
};

#define ZA_DECL_KINDS(X)      \
    X(D_LIFELINE, "lifeline") \
    X(D_CONST, "const")       \
    X(D_ENUM, "enum")         \
    X(D_VAR, "var")           \
    X(D_GUARD, "guard")       \
    X(D_ACTION, "action")     \
    X(D_WORKFLOW, "workflow") \
    X(D_IMPORT, "import")     \
    X(D_FRAGMENT, "fragment") \
    X(D_STORE, "store")       \
    X(D_CELL, "cell")
typedef enum { ZA_DECL_KINDS(ZA_ENUM) D__COUNT } ZDeclKind;

/* llm, pure, extern pure, effect, human (vocab/vocab.h) */
#define ZA_ACT_ENUM(k, s) ACT_##k,
typedef enum { ZV_ACTION_KINDS(ZA_ACT_ENUM) ACT__COUNT } ZActionKind;
#undef ZA_ACT_ENUM

/* What a fragment parameter stands for (language reference §3.3). */
typedef enum {
    FP_NONE,     /* not a fragment parameter */
    FP_LIFELINE, /* W: lifeline */
    FP_VAR,      /* x: T, a variable of the user's */
    FP_CONST,    /* const n: T, a literal or a constant */
} ZFragParamKind;

typedef struct ZParam {
    const char *name; /* NULL for unnamed results */
    ZSpan span;
    ZType *type;          /* NULL for a lifeline parameter */
    ZFragParamKind fkind; /* fragment parameters */
    const char *owner;    /* workflow inputs: x: T @ owner */
    ZSpan owner_span;
    int owner_index;
    ZDecl *var; /* workflow inputs: the variable it initialises */
    ZDecl *ref; /* a store's tools: the effect action (resolved) */
} ZParam;

/* `key = value;` inside an llm/human body. */
typedef struct ZProp {
    const char *key;
    ZSpan span;
    ZExpr *value; /* literal, name, or tuple */
} ZProp;

/* The properties of llm, human and planner action bodies (vocab/vocab.h):
 * the llm ones first (PROP__NLLM of them), then the human ones (up to
 * PROP__NHUMAN), then the planner's own (a planner also takes the llm
 * ones of ZV_PLANNER_SHARED). */
#define ZA_PROP_ENUM(k, s) PROP_##k,
#define ZA_PROP_ONE(k, s) +1
typedef enum {
    ZV_LLM_PROPS(ZA_PROP_ENUM) ZV_HUMAN_PROPS(ZA_PROP_ENUM) ZV_PLANNER_PROPS(ZA_PROP_ENUM)
        PROP__COUNT
} ZPropKey;
enum { PROP__NLLM = 0 ZV_LLM_PROPS(ZA_PROP_ONE) };
enum { PROP__NHUMAN = PROP__NLLM ZV_HUMAN_PROPS(ZA_PROP_ONE) };
#undef ZA_PROP_ENUM
#undef ZA_PROP_ONE

struct ZDecl {
    ZDeclKind kind;
    ZSpan span; /* the whole declaration */
    const char *name;
    ZSpan name_span;
    int index; /* D_LIFELINE: declaration order; D_VAR: var number */
    /* D_CONST, D_VAR (default), D_GUARD (formula), pure action body */
    ZExpr *expr;
    ZType *type;  /* D_VAR, D_CONST (after checking) */
    ZVec members; /* D_ENUM: ZParam* (name + span) */
    /* D_ACTION */
    ZActionKind action;
    ZVec params;  /* ZParam* (actions and workflow inputs) */
    ZVec results; /* ZParam* (name NULL when unnamed) */
    bool named_results;
    bool has_body; /* llm/human { props } */
    ZVec props;    /* ZProp* */
    /* D_WORKFLOW, D_FRAGMENT */
    ZVec body;    /* ZStmt* (the last may be S_RETURN); fragment uses expanded */
    ZStmt *ret;   /* the return statement, or NULL */
    ZVec written; /* D_WORKFLOW: the body as written, with its fragment uses
                     (set by zx_expand when it has any) */
    ZVec locals;  /* D_FRAGMENT: its own `var` declarations (ZDecl* D_VAR) */
    /* D_IMPORT: the path as written (name); the file it read */
    int import_file;
    /* D_GUARD: zk_is_cpl of its formula, found once (check_types.c):
     * 0 not yet known, 1 plain, 2 CPL, 3 being found */
    unsigned char cpl;
    /* references to it anywhere in the program (warn.c: zw_count_uses,
     * after resolution); 0 for an unused declaration */
    int uses;
    /* D_GUARD: the last walk of warn.c that looked into it (a named guard
     * shared by many others is looked into once per condition) */
    unsigned walk;
    /* D_STORE: its cells (ZDecl* D_CELL: name, type, expr the default),
     * its tools (ZParam*: name; ref the action after resolution) and its
     * declared consistency level (level -1 until checked; level_name NULL
     * when none is declared, level_again the span of a second one) */
    ZVec cells;
    ZVec tools;
    const char *level_name;
    ZSpan level_span;
    ZSpan level_again;
    bool level_twice;
    int level;
};

typedef struct ZProgram {
    const ZSource *src;
    ZVec decls; /* ZDecl*, in source order */
    /* filled by zr_resolve */
    ZVec lifelines; /* ZDecl* D_LIFELINE in declaration order */
    ZVec vars;      /* ZDecl* D_VAR (including implicit input vars) */
    ZVec workflows; /* ZDecl* D_WORKFLOW */
    ZVec fragments; /* ZDecl* D_FRAGMENT (zx_expand) */
    ZVec stores;    /* ZDecl* D_STORE */
    int n_controls; /* number of if/while constructs in the selected workflow */
    int n_pars;     /* number of parallel regions */
} ZProgram;

ZExpr *za_expr(ZArena *a, ZExprKind k, ZSpan span);
ZStmt *za_stmt(ZArena *a, ZStmtKind k, ZSpan span);
ZDecl *za_decl(ZArena *a, ZDeclKind k, ZSpan span);
ZType *za_type(ZArena *a, ZTypeKind k, ZSpan span);
const char *za_expr_kind_name(ZExprKind k);
const char *za_stmt_kind_name(ZStmtKind k);
const char *za_decl_kind_name(ZDeclKind k);
const char *za_op_text(ZOp op);
const char *za_builtin_name(ZBuiltin b);
int za_builtin_arity(ZBuiltin b);
ZBuiltin za_builtin_lookup(const char *name);
const char *za_action_kind_name(ZActionKind k);
/* The key of property k ("system", …); the property k of an action's
 * body (the first, with a value), or NULL. */
const char *za_prop_name(ZPropKey k);
const ZProp *za_prop(const ZDecl *act, ZPropKey k);
/* The source text a span covers (files: ZSource* by ZSpan.file), or NULL
 * when the span is not in them. */
const char *za_span_text(ZArena *a, const ZVec *files, ZSpan s);
/* A planner's context, the source text a generated workflow is compiled
 * with (docs/runtime.md, "Planners"): the program's enums, constants and
 * pure actions, the actions of the planner's `actions` (and, for a
 * planner among them, its own, recursively), then ZA_PLANNER_MARK and the
 * planner itself. */
#define ZA_PLANNER_MARK "// planner\n"
const char *za_planner_context(ZArena *a, const ZProgram *p, const ZVec *files,
                               const ZDecl *planner);
/* "variable", "constant", "enum member", "guard", "parameter". */
const char *za_name_kind_name(ZNameKind k);
/* The name of lifeline i (declaration order), "?" when out of range. */
const char *za_lifeline_name(const ZProgram *p, int i);
/* The tag of an if/while construct: "if#3" (ZV_TAG_FMT), in a. */
const char *za_construct_tag(ZArena *a, const ZStmt *s);
/* "int", "str", "Status", "(int, str)" — arena string. */
const char *za_type_str(ZArena *a, const ZType *t);
/* The same as diagnostics name types: "nothing" for no value, "?" when
 * unknown. */
const char *za_type_name(ZArena *a, const ZType *t);
/* Structural equality (inline: the checker compares types at every
 * assignment and message). */
static inline bool za_type_eq(const ZType *x, const ZType *y)
{
    if (!x || !y) return x == y;
    if (x->kind != y->kind) return false;
    switch (x->kind) {
    case TY_ENUM: return x->enum_decl == y->enum_decl;
    case TY_NAMED: return x->name == y->name || (x->name && y->name && !strcmp(x->name, y->name));
    case TY_TUPLE:
        if (x->elems.len != y->elems.len) return false;
        for (int i = 0; i < x->elems.len; i++)
            if (!za_type_eq(x->elems.items[i], y->elems.items[i])) return false;
        return true;
    default: return true;
    }
}
/* Source-like rendering of an expression/formula (for tables and messages). */
void za_print_expr(ZBuf *b, const ZExpr *e);
/* One item of an atomic block in source syntax ("d = read plan;",
 * "write plan = d;", "publish(d);"). */
void za_print_atomic_item(ZBuf *b, const ZStmt *s);
/* The AST as an indented tree (`zgc parse --ast`). */
void za_print_program(FILE *out, const ZProgram *p);
/* A workflow in .zg syntax (`zgc project --global`): after expansion,
 * preceded by the variables expansions made, or (written) as written, with
 * its fragment uses. */
void za_print_workflow(FILE *out, const ZProgram *p, const ZDecl *wf, bool written);

/* ===================================================================== */
/* resolve.c — names                                                      */
/* ===================================================================== */

/* Builds the program's symbol tables, resolves every name (lifelines,
 * variables, constants, enum members, guards, actions), checks uniqueness
 * per namespace and the absence of recursion among pure actions, numbers
 * control constructs and parallel regions in pre-order, and marks action
 * statements.  Returns false if any error was reported. */
bool zr_resolve(ZArena *a, ZProgram *p, ZDiag *d);
/* How deep named guards may nest: a guard's formula with every guard it
 * uses written out (its expanded depth), and a chain of guards and pure
 * actions each using the next, are at most this deep.  The passes look
 * through guards recursively; pipeline.c gives them the stack for it. */
#define ZR_MAX_GUARD_DEPTH 100000
/* Lookups valid after zr_resolve. */
ZDecl *zr_lookup(const ZProgram *p, const char *name); /* any global decl */
ZDecl *zr_lifeline(const ZProgram *p, const char *name);
/* The workflow to compile: by name, or the only/last one.  NULL + error if
 * none or unknown. */
ZDecl *zr_select_workflow(ZProgram *p, const char *name, ZDiag *d);

/* ===================================================================== */
/* eval.c — values of expressions                                         */
/* ===================================================================== */

/* A value of a constant expression. */
typedef struct ZValue {
    ZTypeKind k; /* TY_INT, TY_FLOAT, TY_BOOL, TY_STR, TY_ENUM, TY_NULL */
    int64_t i;
    double f;
    bool b;
    const char *s; /* TY_STR: n bytes */
    size_t n;
    ZDecl *en; /* TY_ENUM: the enum and its member */
    int member;
} ZValue;

/* What an evaluation can fail with.  ZE_NO_VALUE: an operation the rules
 * do not define (an ill-typed operand, already reported): no message. */
#define ZE_ERRORS(X)                       \
    X(ZE_OK, "")                           \
    X(ZE_NO_VALUE, "no value")             \
    X(ZE_DIV_ZERO, "division by zero")     \
    X(ZE_INT_OVERFLOW, "integer overflow") \
    X(ZE_FLOAT_OVERFLOW, "float overflow")
typedef enum { ZE_ERRORS(ZA_ENUM) ZE__COUNT } ZEvalError;
const char *ze_error_text(ZEvalError err);

/* One operator on values (the rules are in eval.c).  ze_binary allocates
 * a concatenation in a. */
ZEvalError ze_unary(ZOp op, const ZValue *v, ZValue *out);
ZEvalError ze_binary(ZArena *a, ZOp op, const ZValue *l, const ZValue *r, ZValue *out);

/* How to evaluate a typed expression: the value of a constant (false when
 * it has none), and where errors go (each failing operator once). */
typedef struct ZEval {
    ZArena *arena;
    bool (*constant)(void *user, const ZDecl *d, ZValue *v);
    void (*error)(void *user, const ZExpr *at, ZEvalError err);
    void *user;
} ZEval;
/* The value of a type-checked expression of literals, constants, enum
 * members, operators and `?:`; false when it has none (a variable, a call,
 * a type error, or an evaluation error, reported through ev->error). */
bool ze_eval(const ZEval *ev, const ZExpr *e, ZValue *v);
/* A literal expression (an E_NAME for an enum member) of type t for v;
 * NULL for a kind that has none. */
ZExpr *ze_literal(ZArena *a, const ZValue *v, ZSpan at, ZType *t);

/* ===================================================================== */
/* warn.c — warnings                                                      */
/* ===================================================================== */

/* Counts the references to every declaration (ZDecl.uses); run after
 * zr_resolve, before the checks fold constants. */
void zw_count_uses(ZProgram *p);
/* Reports the warnings (ZD_WARNINGS) of the checked program: the unused
 * declarations of the compiled file, and for wf (every workflow when
 * NULL) its lifelines that take part in nothing and its conditions. */
void zw_warn(ZArena *a, const ZProgram *p, const ZDecl *wf, ZDiag *d);

/* ===================================================================== */
/* races.c — races of store operations and the level each store needs    */
/* ===================================================================== */

/* The anomaly classes a racing pair makes possible (§11.3); A3 needs a
 * retracted operation, which a workflow never has. */
enum { ZQ_A1 = 1, ZQ_A6 = 2, ZQ_A2 = 4 };

/* One operation: an atomic block of the workflow. */
typedef struct ZqOp {
    const ZStmt *s; /* the S_ATOMIC */
    int life;
    int store;             /* index in prog->stores */
    int index;             /* in source order over the workflow */
    ZVec tools;            /* ZDecl*: the tools it calls */
    const ZStmt *registry; /* its `write tools = (…)`, or NULL */
} ZqOp;

/* Two operations of one store that some execution runs unordered, and
 * what that makes possible. */
typedef struct ZqPair {
    const ZStmt *a, *b; /* a before b in source order */
    unsigned classes;   /* ZS_A* */
    const char *cell;   /* a cell one reads and the other writes, or NULL */
    const char *tool;   /* A2: the tool one calls and the other removes */
} ZqPair;

typedef struct ZqStore {
    const ZDecl *store;
    ZVec ops;         /* ZqOp*: its operations, source order */
    ZVec pairs;       /* ZqPair*: the racing pairs with some class */
    unsigned classes; /* union over the pairs */
    int needed;       /* the lowest safe level, 0..4 */
    int declared;     /* the declared level, -1 when invalid */
} ZqStore;

typedef struct ZqReport {
    const ZProgram *prog;
    const ZDecl *wf;
    int nstores;
    ZqStore *stores; /* one per prog->stores */
} ZqReport;

/* The race analysis of one checked workflow, in a. */
ZqReport *zq_analyze(ZArena *a, const ZProgram *p, const ZDecl *wf);
/* The level the classes need: L4 for A2, L3 for A6, L1 for A1, else
 * L0. */
int zq_level_needed(unsigned classes);
/* "A1 A6" (or "-" for none). */
void zq_classes_text(ZBuf *b, unsigned classes);
/* A store declared below what it needs: warning store-level (an error
 * when strict) with a note per racing pair that needs more; above it: a
 * note. */
void zq_diagnose(ZArena *a, const ZqReport *r, ZDiag *d, bool strict);

/* ===================================================================== */
/* check.c — types and definedness                                        */
/* ===================================================================== */

/* Type-checks declarations and the given workflow (or every workflow when
 * wf is NULL), checks definedness per lifeline on every path, guard
 * ownership, coregion and parallel rules.  Keeps going after errors.
 * Returns false if any error was reported. */
bool zk_check(ZArena *a, ZProgram *p, ZDecl *wf, ZDiag *d);
/* The consistency level "L0".."L4" as 0..4, or -1 (check_stores.c). */
int zk_level(const char *name);
/* True if the formula uses a temporal or causal operator or an @B.x term
 * (named guards are looked through).  In check_types.c. */
bool zk_is_cpl(const ZExpr *e);

/* ===================================================================== */
/* project.c — local programs (§7)                                        */
/* ===================================================================== */

#define ZJ_LOCAL_KINDS(X)                                              \
    X(L_SEND, "send")                                                  \
    X(L_RECV, "recv")                                                  \
    X(L_ASSIGN, "assign") /* action, local expression, self message */ \
    X(L_SEND_CTL, "send-ctl")                                          \
    X(L_IF, "if") /* owner side: evaluates the guard */                \
    X(L_WHILE, "while")                                                \
    X(L_IF_RECV, "if-recv-ctl") /* recipient side */                   \
    X(L_WHILE_RECV, "while-recv-ctl")                                  \
    X(L_RECV_ANY, "recv-any")                                          \
    X(L_PAR, "parallel")                                               \
    X(L_ATOMIC, "atomic") /* a store operation (src: the S_ATOMIC) */  \
    X(L_RETURN, "return")
typedef enum { ZJ_LOCAL_KINDS(ZA_ENUM) L__COUNT } ZLocalKind;

typedef struct ZLocal ZLocal;
struct ZLocal {
    ZLocalKind kind;
    const ZStmt *src;   /* the global statement it comes from */
    int peer;           /* send/recv/send-ctl: the other lifeline;
                           if-recv/while-recv: the owner */
    int chan;           /* channel namespace id (index into ZLocalSet.namespaces) */
    ZVec vals;          /* L_SEND: ZExpr*; L_RECV: bindings ZExpr*;
                           L_ASSIGN self message: the source ZExpr* (targets are
                           src->params); L_RETURN: the returned E_NAME */
    bool ctl_value;     /* L_SEND_CTL: true/false */
    const char *tag;    /* L_SEND_CTL, L_IF.., L_WHILE..: "if#3" */
    ZVec body;          /* then / loop body / L_RECV_ANY arms (ZLocal* L_RECV)
                           / L_PAR branches (ZLocal* with kind L_PAR, one per branch
                           L participates in; a branch's chan is its namespace, the
                           region's chan the enclosing one) */
    ZVec els;           /* else / exit protocol */
    bool has_else;      /* owner-side else present (always true for owner ifs/whiles
                           that broadcast) */
    const ZExpr *guard; /* L_IF, L_WHILE */
    int ret_index;      /* L_RETURN: component index (-1 for a single result) */
};

typedef struct ZLocalProgram {
    int lifeline;
    const char *name;
    ZVec body; /* ZLocal* */
} ZLocalProgram;

typedef struct ZLocalSet {
    const ZProgram *prog;
    const ZDecl *wf;
    ZVec programs;   /* ZLocalProgram*, one per lifeline in declaration order */
    ZVec namespaces; /* const char*: "main", "main/par1.2", ... (id = index) */
} ZLocalSet;

/* Projects a checked workflow.  Total: never fails on checked input. */
ZLocalSet *zj_project(ZArena *a, const ZProgram *p, const ZDecl *wf);
/* §7 text form.  lifeline < 0 prints every lifeline. */
void zj_print(FILE *out, const ZLocalSet *ls, int lifeline);
/* The participation set of a statement list as a bitmask over lifeline
 * indices (lifelines are limited to ZJ_MAX_LIFELINES). */
#define ZJ_MAX_LIFELINES 256
typedef struct ZLifeSet {
    uint64_t w[ZJ_MAX_LIFELINES / 64];
} ZLifeSet;
ZLifeSet zj_part_stmt(const ZStmt *s);
ZLifeSet zj_part_list(const ZVec *stmts);
static inline bool zj_set_has(const ZLifeSet *s, int i) { return (s->w[i >> 6] >> (i & 63)) & 1u; }
static inline void zj_set_add(ZLifeSet *s, int i) { s->w[i >> 6] |= (uint64_t)1 << (i & 63); }

/* ===================================================================== */
/* guards.c — CPL guard enumeration                                       */
/* ===================================================================== */

/* Primitive CPL after unfolding derived forms (once, historically, past,
 * seen) and named guards.  Formulas are hash-consed: structurally equal
 * subformulas are the same node and have the same id. */
typedef enum {
    F_TRUE,
    F_ATOM, /* a predicate over terms: a comparison, a call, a bool variable (§6.1) */
    F_NOT,
    F_AND,
    F_OR,
    F_PREV,  /* Y φ */
    F_SINCE, /* φ S ψ */
    F_AT,    /* @B(φ) */
} ZFormulaKind;

typedef struct ZFormula ZFormula;
struct ZFormula {
    ZFormulaKind kind;
    int id;            /* index in ZGuardTable.subs (bottom-up order) */
    const ZExpr *atom; /* F_ATOM */
    int life;          /* F_AT: lifeline B */
    ZFormula *a, *b;   /* operands */
};

typedef struct ZGuardInfo {
    const ZStmt *construct; /* the if/while */
    const char *tag;        /* "if#3" */
    int owner;
    const ZExpr *source; /* the guard as written */
    ZFormula *root;      /* unfolded; NULL for a plain guard */
    bool cpl;            /* needs the monitor */
} ZGuardInfo;

/* A (lifeline, subformula) or (lifeline, variable) view entry. */
typedef struct ZViewEntry {
    int life;
    int sub;         /* formula id, or -1 for a variable view */
    const char *var; /* variable view: the variable */
    int var_decl;    /* variable view: its index in prog->vars */
} ZViewEntry;

typedef struct ZLifelineMonitor {
    int life;
    ZVec evaluates;  /* ZFormula*: subformulas evaluated at every event here */
    ZVec bool_views; /* ZViewEntry*: view(B, ψ) entries kept and exported,
                         sorted by (B, ψ); B == life: L's own entry */
    ZVec var_views;  /* ZViewEntry*: var(B, x) entries kept and exported,
                         sorted by (B, Vars(Φ) order) */
    bool needs_monitor;
    ZLifeSet clock; /* the vector-clock entries it keeps: itself and every B
                       of its entries (with a monitor; none otherwise) */
    int nclock;
    int remote_views, remote_vars; /* entries about other lifelines */
    size_t state_bytes;            /* what the runtime allocates for its monitor
                                  (guards.c, 4.); 0 without one */
    size_t traced_state_bytes;     /* the same in a traced run (full clock) */
} ZLifelineMonitor;

typedef struct ZGuardTable {
    const ZProgram *prog;
    ZVec guards;     /* ZGuardInfo*, one per if/while, in construct order */
    ZVec subs;       /* ZFormula*: sub(Φ) over all CPL guards, bottom-up */
    ZVec vars;       /* const char*: Vars(Φ) (variables of @B.x terms) */
    ZVec monitors;   /* ZLifelineMonitor*, one per lifeline */
    ZLifeSet *adj;   /* adj[Y]: lifelines Y sends to (send, send-ctl) */
    ZLifeSet *reach; /* reach[Y]: lifelines reachable from Y in the message
                         graph (reflexive), one per lifeline; see zg_reaches */
} ZGuardTable;

/* An atom whose terms use named guards is kept with the guards written
 * out when that makes at most this many expression nodes, and with their
 * names otherwise (guards.c, 1.). */
#define ZG_ATOM_INLINE_MAX 1000
/* zg_print prints an unfolded guard in full up to this many characters,
 * and longer ones with references φk to subformulas printed before. */
#define ZG_PRINT_INLINE_MAX 4000

ZGuardTable *zg_enumerate(ZArena *a, const ZProgram *p, const ZDecl *wf, const ZLocalSet *ls);
/* B ⇝ E in the message graph (reflexive): some B-event can be in E's causal
 * past.  When it is false, @B(θ) is constantly false and @B.x constantly
 * undefined on E, and E keeps no view of B. */
bool zg_reaches(const ZGuardTable *t, int from, int to);
void zg_print(FILE *out, const ZGuardTable *t);
/* Renders a primitive formula in source-like syntax. */
void zg_print_formula(ZBuf *b, const ZGuardTable *t, const ZFormula *f);

/* ===================================================================== */
/* plan.c — the monitor plan                                              */
/* ===================================================================== */

/* A kept entry of a lifeline's monitor: view (B, ψ) or variable view
 * (B, x). */
typedef struct ZPlanSlot {
    int life;  /* B */
    int index; /* subformula id ψ (views) or variable index x (variable views) */
} ZPlanSlot;

/* What lifeline L's monitor keeps (all sorted ascending, no duplicates).
 * Positions in these tables are what generated code and the runtime use:
 * val/old[k] is the value of evals[k], a view slot k is views[k]. */
typedef struct ZPlanLifeline {
    bool monitor;          /* it keeps anything at all */
    const ZVec *evaluates; /* ZFormula*: what its eval function computes, bottom-up;
                              NULL: it has none */
    int nevals;
    int *evals; /* subformula ids of evaluates */
    int nvc;
    int *vc; /* lifelines whose clock entries it keeps: itself and every B
                it keeps an entry about */
    int nviews;
    ZPlanSlot *views; /* (B, ψ), B ≠ L (its own values are val) */
    int nvarviews;
    ZPlanSlot *varviews;       /* (B, x), B ≠ L (its own are the store) */
    size_t state_bytes;        /* 8 nvc + 2 nevals + nviews + 16 nvarviews */
    size_t traced_state_bytes; /* the same with a full clock: 8 nlifelines + … */
} ZPlanLifeline;

/* One lifeline B's part of an edge's metadata: the clock entry vc[B] and
 * B's entries, [previous group's end, views_end) of the edge's views
 * (and varviews). */
typedef struct ZPlanGroup {
    int life;           /* B, never the receiver */
    int from_vc, to_vc; /* B's position in the sender's / receiver's vc */
    int views_end, varviews_end;
} ZPlanGroup;

/* One carried entry: where the sender takes it and where the receiver
 * puts it.  from: a position in the sender's views (varviews), or, in the
 * group of the sender itself, in its evals (views) or a variable index
 * (varviews, the store); to: a position in the receiver's views
 * (varviews). */
typedef struct ZPlanPair {
    int from, to;
} ZPlanPair;

/* The metadata of every message from `from` to `to` (an edge of the
 * message graph), in the order it travels. */
typedef struct ZPlanEdge {
    int from, to;
    int ngroups, nviews, nvarviews;
    ZPlanGroup *groups;
    ZPlanPair *views, *varviews;
    size_t meta_bytes;        /* 8 ngroups + nviews + 16 nvarviews */
    size_t traced_meta_bytes; /* 8 nlifelines + nviews + 16 nvarviews */
} ZPlanEdge;

/* The plan the runtime executes (the descriptor's keep and edge tables
 * and eval functions, runtime/zgrt_abi.h), derived from the guard tables. */
typedef struct ZMonitorPlan {
    const ZGuardTable *guards;
    bool monitor; /* some guard needs the CPL monitor */
    int nsubs;    /* |sub(Φ)| */
    int nlifelines;
    ZPlanLifeline *lifelines; /* nlifelines */
    int nedges;
    ZPlanEdge *edges; /* sorted by (from, to) */
} ZMonitorPlan;

/* The plan of a guard table (an empty plan for NULL), in a.  Checks the
 * forwarding rule's claim on every edge (an internal error otherwise). */
ZMonitorPlan *zm_plan(ZArena *a, const ZGuardTable *gt);
/* Lifeline L's position of its view (B, ψ) / variable view (B, x) /
 * evaluated subformula ψ, or -1. */
int zm_view_slot(const ZMonitorPlan *pl, int life, int b, int sub);
int zm_varview_slot(const ZMonitorPlan *pl, int life, int b, int var);
int zm_eval_pos(const ZMonitorPlan *pl, int life, int sub);
/* Lifeline `life` has an eval function. */
bool zm_has_eval(const ZMonitorPlan *pl, int life);
/* The edge from → to, or NULL. */
const ZPlanEdge *zm_edge(const ZMonitorPlan *pl, int from, int to);
/* `zgc guards`: the guard tables (zg_print) and the metadata bytes per
 * message of every edge. */
void zm_print_guards(FILE *out, const ZMonitorPlan *pl);
/* `zgc guards --plan`: every kept entry and every carried one. */
void zm_print(FILE *out, const ZMonitorPlan *pl);

/* ===================================================================== */
/* expand.c — fragments                                                   */
/* ===================================================================== */

/* Checks every fragment where it is declared (its parameters, the names
 * its body uses, the fragments it uses, no recursion) and replaces every
 * fragment use in a workflow by a copy of the fragment's body: parameters
 * substituted, its own variables renamed to fresh variables
 * ("fragment#N.name", which no source can name), every span of the copy
 * marked with the expansion (xs, ZExpansion*), which diagnostics point
 * back through.  The workflow's body as written stays in `written`.
 * Returns false if any error was reported. */
bool zx_expand(ZArena *a, ZProgram *p, ZVec *xs, ZDiag *d);
/* Expansions make at most this many statements in one program: fragments
 * each using the previous one ten times, five deep, are 100,000 copies of
 * the innermost (about 40 MB of AST), far beyond any workflow written by
 * hand, and the limit keeps a hostile program from exhausting memory. */
#define ZX_MAX_STMTS 100000

/* ===================================================================== */
/* pipeline.c — one compilation, pass by pass                             */
/* ===================================================================== */

/* The passes in order; a compilation can stop after any of them. */
#define ZC_STAGES(X)                                                     \
    X(ZC_PARSE, "parse")     /* source -> AST, imports read (grammar) */ \
    X(ZC_EXPAND, "expand")   /* fragment uses expanded            */     \
    X(ZC_RESOLVE, "resolve") /* names; the workflow selected      */     \
    X(ZC_CHECK, "check")     /* types, definedness, rules         */     \
    X(ZC_PROJECT, "project") /* local programs                    */     \
    X(ZC_GUARDS, "guards")   /* guard tables                      */     \
    X(ZC_PLAN, "plan")       /* the monitor plan                  */
typedef enum { ZC_STAGES(ZA_ENUM) ZC__COUNT } ZStage;

/* The first pass, source text to AST: the grammar's zp_parse
 * (grammar/grammar.h).  The compiler does not depend on the grammar; its
 * caller hands the parser in.  It is called once per file: the file
 * compiled, then every file an `import` names. */
typedef ZProgram *ZParseFn(ZArena *a, const ZSource *src, ZDiag *d);

/* Reads a file an `import` names, at `path` (a directory of the search
 * path joined with the name).  Returns its text (malloc'd, *len bytes)
 * and *key, what identifies the file (malloc'd: two paths of one file give
 * one key), or NULL: *missing when there is no such file (the next
 * directory is tried), else *err says why it cannot be read. */
typedef char *ZLoadFn(void *user, const char *path, size_t *len, char **key, const char **err,
                      bool *missing);

/* Where imported files are looked for, after the importing file's own
 * directory: the -I directories in order, then the standard library.
 * The standard library is $ZGC_STDLIB when set, else the directory the
 * driver gave (an installation's), else the source tree's stdlib/ (set by
 * the build); the -I list is the process's, given once by the driver
 * before it compiles (every compilation of the process, the oracle's
 * included, uses it). */
void zc_add_include_dir(const char *dir);
void zc_set_stdlib_dir(const char *dir);
const char *zc_stdlib_dir(void);
/* At most this many files per compilation, imports included. */
#define ZC_MAX_FILES 4096

typedef struct ZCompilation {
    /* set by the caller before zc_run */
    const char *workflow; /* the workflow to compile; NULL: the only or last */
    bool all_workflows;   /* with no workflow named, check every workflow
                             (zgc check); projection still needs one */
    bool warnings;        /* report the warnings after the checks (zw_warn;
                             which ones: diag.warn_off, diag.werror) */
    bool strict;          /* a store declared below the level its races
                             need is an error, not a warning (zq_diagnose) */
    ZLoadFn *load;        /* reads imported files; NULL: the file system */
    void *load_user;
    /* owned by the compilation */
    ZParseFn *parse;
    ZArena *arena;
    char *text; /* the source, NUL-terminated (malloc'd copy) */
    ZSource src;
    ZVec files;      /* ZSource*: files[0] is &src, then the imported files */
    ZVec expansions; /* ZExpansion*: the fragment uses expanded */
    ZDiag diag;
    int done;            /* passes run so far (a ZStage + 1) */
    bool failed;         /* a pass reported errors; later passes do not run */
    ZProgram *prog;      /* after ZC_PARSE (partial after syntax errors): the
                            declarations of every file, an imported file's
                            where its first import stands */
    ZDecl *wf;           /* after ZC_RESOLVE; NULL when every workflow is checked */
    ZLocalSet *locals;   /* after ZC_PROJECT */
    ZGuardTable *guards; /* after ZC_GUARDS */
    ZMonitorPlan *plan;  /* after ZC_PLAN: what the backend emits */
} ZCompilation;

/* A compilation of `text` (len bytes, copied), named `path` in
 * diagnostics, which go to diag_out.  Out of memory is fatal (zu_oom). */
void zc_init(ZCompilation *c, ZParseFn *parse, const char *path, const char *text, size_t len,
             FILE *diag_out);
/* The same for a file; false with "cannot read PATH: REASON" written to
 * diag_out when it cannot be read. */
bool zc_init_file(ZCompilation *c, ZParseFn *parse, const char *path, FILE *diag_out);
/* Runs the passes after the last one done, up to and including `upto`,
 * stopping at the first pass that reports an error.  Returns true when
 * every pass up to `upto` succeeded.  The passes run on a thread of their
 * own, which the caller waits for, with a stack of ZC_STACK_BYTES: named
 * guards nested ZR_MAX_GUARD_DEPTH deep (a chain of 99,990 guards, each
 * using the next, declared before it) took between 24 and 32 MB of stack
 * in a release build and between 32 and 64 MB with AddressSanitizer.
 * Only the pages a program reaches are touched. */
#define ZC_STACK_BYTES ((size_t)256 << 20)
bool zc_run(ZCompilation *c, ZStage upto);
void zc_free(ZCompilation *c);
const char *zc_stage_name(ZStage s);

#endif
