/* Tests of the native backend (backend/): every example and golden program
 * generates modules that verify, every construct compiles, the descriptor
 * types have the C layout of runtime/zgrt_abi.h, runtime declarations match
 * the ZGRT_ABI table, the descriptor's monitor tables are the monitor plan
 * that `zgc guards --plan` prints (compiler/plan.c), build errors are
 * clear, and (when libzgrt is built) the executables of the examples run. */
#include <criterion/criterion.h>
#include <errno.h>
#include <glob.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "gen.h"
#include "zgrt_abi.h"

#ifndef ZGC_SOURCE_DIR
#define ZGC_SOURCE_DIR "."
#endif
#ifndef ZGC_RUNTIME_LIB
#define ZGC_RUNTIME_LIB "libzgrt.a"
#endif

/* ------------------------------------------------------------------ */
/* helpers                                                             */
/* ------------------------------------------------------------------ */

static char *slurp(const char *path)
{
    size_t len;
    const char *err;
    char *text = zu_read_file(path, &len, &err);
    cr_assert_not_null(text, "cannot read %s: %s", path, err);
    return text;
}

static TComp *compile_at(const char *text, const char *path)
{
    TComp *c = t_compile_at(path, text, T_PLAN);
    cr_assert(c->ok, "%s does not compile:\n%s", path, c->diag_text ? c->diag_text : "");
    cr_assert_not_null(c->comp.plan);
    return c;
}

static TComp *compile_ok(const char *text, const char *what)
{
    TComp *c = t_compile(text, T_PLAN);
    cr_assert(c->ok, "%s does not compile:\n%s", what, c->diag_text ? c->diag_text : "");
    cr_assert_not_null(c->comp.plan);
    return c;
}

/* Every zgrt_ function declared in m has the type of its ZGRT_ABI entry. */
static void check_runtime_decls(LLVMModuleRef m)
{
    LLVMContextRef lc = LLVMGetModuleContext(m);
    for (LLVMValueRef fn = LLVMGetFirstFunction(m); fn; fn = LLVMGetNextFunction(fn)) {
        size_t n;
        const char *name = LLVMGetValueName2(fn, &n);
        if (strncmp(name, "zgrt_", 5) != 0) continue;
        cr_assert(LLVMIsDeclaration(fn), "runtime function %s is defined in generated code", name);
        int k = -1;
        for (int i = 0; i < zb_abi_count(); i++)
            if (strcmp(zb_abi_name(i), name) == 0) k = i;
        cr_assert(k >= 0, "%s is not in the ZGRT_ABI table", name);
        cr_assert_eq(LLVMGlobalGetValueType(fn), zb_abi_fn_type(lc, zb_abi_signature(k)),
                     "%s is declared with another type than its signature `%s`", name,
                     zb_abi_signature(k));
    }
}

static void verify_module(LLVMModuleRef m)
{
    zb_verify(m); /* aborts on failure */
    check_runtime_decls(m);
}

/* Generates every module of a build (one per lifeline, and the
 * descriptor), verifying each. */
static void gen_build_modules(TComp *c)
{
    LLVMContextRef lc = LLVMContextCreate();
    zb_install_diagnostics(lc);
    ZbGen *g = zb_gen_new(lc, &c->comp);
    int nl = c->comp.prog->lifelines.len;
    for (int L = 0; L < nl; L++) {
        LLVMModuleRef m = zb_gen_module(g, "life");
        cr_assert(zb_gen_lifeline(g, m, m, L), "lifeline %d: %s", L,
                  c->diag_text ? c->diag_text : "");
        verify_module(m);
        LLVMDisposeModule(m);
    }
    LLVMModuleRef m = zb_gen_module(g, "prog");
    zb_gen_descriptor(g, m);
    verify_module(m);
    cr_assert_not_null(LLVMGetNamedFunction(m, "main"));
    LLVMDisposeModule(m);
    LLVMContextDispose(lc);
}

/* The all-in-one IR (zb_emit_llvm). */
static char *emit_ir(TComp *c)
{
    char *ir = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&ir, &len);
    int rc = zb_emit_llvm(out, &c->comp);
    fclose(out);
    fflush(c->diag_file);
    cr_assert_eq(rc, 0, "emit-llvm failed:\n%s", c->diag_text ? c->diag_text : "");
    return ir;
}

static void check_file(const char *path)
{
    char *text = slurp(path);
    TComp *c = compile_at(text, path);
    gen_build_modules(c);
    char *ir = emit_ir(c);
    for (int L = 0; L < c->comp.prog->lifelines.len; L++) {
        const ZDecl *d = ZU_VEC_AT(c->comp.prog->lifelines, L);
        char want[256];
        snprintf(want, sizeof want, "define void @zg.body.%s(", d->name);
        cr_expect(strstr(ir, want), "%s: no %s", path, want);
    }
    cr_expect(strstr(ir, "@zg.program = internal constant %zgrt_program"), "%s: no descriptor",
              path);
    free(ir);
    t_free(c);
    free(text);
}

/* ------------------------------------------------------------------ */
/* every example, golden and run-test program                          */
/* ------------------------------------------------------------------ */

/* examples/topologies: their store operations are checked but have no
 * code yet (build and run refuse them); tests/stores checks them. */
static bool no_code_yet(const char *path) { return strstr(path, "/examples/topologies/") != NULL; }

Test(backend, examples_and_golden_programs_verify)
{
    const char *pats[] = {ZGC_SOURCE_DIR "/examples/*.zg", ZGC_SOURCE_DIR "/examples/*/*.zg",
                          ZGC_SOURCE_DIR "/tests/golden/*.zg", ZGC_SOURCE_DIR "/tests/run/*.zg"};
    int n = 0;
    for (size_t k = 0; k < sizeof pats / sizeof pats[0]; k++) {
        glob_t gl;
        if (glob(pats[k], 0, NULL, &gl) != 0) continue;
        for (size_t i = 0; i < gl.gl_pathc; i++, n++)
            if (!no_code_yet(gl.gl_pathv[i])) check_file(gl.gl_pathv[i]);
        globfree(&gl);
    }
    cr_assert_geq(n, 13, "only %d programs found", n);
}

/* ------------------------------------------------------------------ */
/* every construct                                                     */
/* ------------------------------------------------------------------ */

static const char all_constructs[] =
    "lifeline A, B, C, D;\n"
    "const K = 7;\n"
    "const NAME = \"zg\";\n"
    "const HALF = 0.5;\n"
    "enum Color { red, green, blue }\n"
    "var i: int = 1;\n"
    "var j: int = 2;\n"
    "var f: float = 1.5;\n"
    "var g: float = 0.0;\n"
    "var s: str = \"hi\";\n"
    "var t: str = \"\";\n"
    "var b: bool = true;\n"
    "var c: Color = red;\n"
    "var js: json = null;\n"
    "var k: int = 0;\n"
    "var u: str;\n"
    "var n: int = 0;\n"
    "llm ask(q: str, m: int) -> (answer: str, score: int) {\n"
    "    system = \"Answer {q}.\";\n"
    "    user = \"Question: {q} ({m})\";\n"
    "    parse = json;\n"
    "    model = \"mini\";\n"
    "    temperature = 0.3;\n"
    "    retries = forever;\n"
    "    fallback = (\"none\", 0);\n"
    "}\n"
    "llm pick(q: str) -> (color: Color) { user = \"{q}\"; parse = enum; }\n"
    "human confirm_it(q: str) -> bool { kind = confirm; prompt = \"Ok? {q}\"; }\n"
    "extern pure score(x: str) -> float;\n"
    "effect notify(x: str) -> str;\n"
    "pure twice(x: int) -> (int, int) = (x * 2, x + x);\n"
    "pure mix(x: int, y: float, z: str) -> str = z + str(x) + str(y) + (x > 2 ? \"big\" : "
    "\"small\");\n"
    "pure nested(x: int) -> int = -x % 3 + x / 2 - 1;\n"
    "guard ready = b && i > 0;\n"
    "guard hist = historically i >= 0;\n"
    "workflow all(u: str @ A) -> (int, str) {\n"
    "    A { i = i + j * K - i / 2 % 3; f = f * 2.0 / HALF - f % 2.0; s = s + NAME + u; }\n"
    "    A { b = !b || i != 3 && f >= 1.0 || s < \"x\"; c = blue; b = c == green; }\n"
    "    A { k = len(s) + int(f) + int(\"3\"); g = float(k) + float(\"1.5\"); t = "
    "upper(trim(lower(s))); }\n"
    "    A { b = contains(s, \"h\") && starts_with(s, \"h\") && !ends_with(s, \"z\"); js = "
    "json_get(js, \"k\"); t = json_str(js); }\n"
    "    A { (i, j) = twice(i); t = mix(i, f, s); i = nested(-i); g = -f; b = js == null; }\n"
    "    A(i, s, K, red) -> B(i, s, 7, c);\n"
    "    B(s) -> B(t);\n"
    "    B: (t, i) = ask(s, i);\n"
    "    B: c = pick(t);\n"
    "    B: b = confirm_it(t);\n"
    "    B: g = score(t);\n"
    "    B: t = notify(t);\n"
    "    B: notify(t);\n"
    "    B: twice(i);\n"
    "    if ready @ A {\n"
    "        A(i) -> C(i);\n"
    "    } else {\n"
    "        A(j) -> D(j);\n"
    "        skip C;\n"
    "    }\n"
    "    while n < 3 && ready @ C {\n"
    "        C: n = n + 1;\n"
    "        C(n) -> D(n);\n"
    "    } else {\n"
    "        C(n) -> A(n);\n"
    "    }\n"
    "    parallel {\n"
    "        branch { A(s) -> B(s); B: i = 2; }\n"
    "        branch {\n"
    "            A(s) -> C(s);\n"
    "            parallel {\n"
    "                branch { C(s) -> D(s); }\n"
    "                branch { C: t = s; }\n"
    "            }\n"
    "        }\n"
    "    }\n"
    "    coregion {\n"
    "        B(i) -> D(i);\n"
    "        C(n) -> D(k);\n"
    "    }\n"
    "    if hist && prev b && @B(i > 0 since b) && @B.i == i && seen C && past (n > 1) @ D {\n"
    "        D: s = \"cpl\";\n"
    "    }\n"
    "    D(k) -> A(k);\n"
    "    return (k @ A, s @ A);\n"
    "}\n";

Test(backend, every_construct_verifies)
{
    TComp *c = compile_ok(all_constructs, "all constructs");
    gen_build_modules(c);
    char *ir = emit_ir(c);
    static const char *const want[] = {
        "call void @zgrt_send(",
        "call void @zgrt_recv(",
        "call void @zgrt_assign(",
        "call void @zgrt_act(",
        "call void @zgrt_send_ctl(",
        "call i32 @zgrt_recv_ctl(",
        "call void @zgrt_choice(",
        "call i32 @zgrt_choice_cpl(",
        "call i32 @zgrt_wait_any(",
        "call void @zgrt_par(",
        "call void @zgrt_trap(",
        "call void @zgrt_concat(",
        "call i32 @zgrt_compare(",
        "call void @zgrt_builtin(",
        "call i64 @zgrt_vc(",
        "call i32 @zgrt_view(",
        "call i8* @zgrt_varview(",
        "@llvm.sadd.with.overflow.i64",
        "@llvm.ssub.with.overflow.i64",
        "@llvm.smul.with.overflow.i64",
        "sdiv i64",
        "srem i64",
        "fdiv double",
        "frem double",
        "define void @zg.eval.D(",
        "define void @zg.eval.B(",
        "define internal void @zg.par.C.2.2(",
        "define internal void @zg.pure.twice(",
        "define internal void @zg.pure.mix(",
        "declare extern_weak i32 @zg_score(i8*)",
        "declare extern_weak i32 @zg_notify(i8*)",
        "c\"integer overflow in `+`\\00\"",
        "c\"division by zero\\00\"",
        "c\"float result is not finite\\00\"",
        "define i32 @main(",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        cr_expect(strstr(ir, want[i]), "the IR has no `%s`", want[i]);
    /* A evaluates nothing it does not need: no eval function for A's
     * lifeline when its monitor is empty */
    free(ir);
    t_free(c);
}

Test(backend, monitor_functions_follow_the_guard_tables)
{
    char *text = slurp(ZGC_SOURCE_DIR "/examples/merge.zg");
    TComp *c = compile_ok(text, "merge.zg");
    char *ir = emit_ir(c);
    cr_expect(strstr(ir, "define void @zg.eval.Committer("));
    cr_expect(strstr(ir, "define void @zg.eval.TestRunner("));
    cr_expect(strstr(ir, "define void @zg.eval.Security("));
    cr_expect_null(strstr(ir, "@zg.eval.Orchestrator"), "Orchestrator evaluates nothing");
    /* the choice returns the root subformula φ12 */
    cr_expect(strstr(ir, "call i32 @zgrt_choice_cpl(i8* %0, i32 0, i32 12,"));
    free(ir);
    t_free(c);
    free(text);
}

/* ------------------------------------------------------------------ */
/* the monitor's slot tables                                           */
/* ------------------------------------------------------------------ */

/* Field positions in the zgrt_program constant. */
enum {
    PF_NLIFELINES = 1,
    PF_EVALS = 6,
    PF_NVARS = 7,
    PF_VARS = 9,
    PF_MONITOR = 24,
    PF_NSUBS = 25,
    PF_NEDGES,
    PF_KEEPS,
    PF_EDGES,
    PF_FINGERPRINT,
    PF_FINGERPRINT_PARTS,
    PF_NSTORES,
    PF_STORES,
    PF_ROLE,
    PF__COUNT
};

typedef struct Slot {
    int life, index;
} Slot;

/* Element k of a constant aggregate (NULL for zeroinitializer). */
static LLVMValueRef agg_elem(LLVMValueRef agg, unsigned k)
{
    if (!agg || LLVMIsAConstantAggregateZero(agg)) return NULL;
    return LLVMGetOperand(agg, k);
}

static int64_t agg_int(LLVMValueRef agg, unsigned k)
{
    LLVMValueRef v = agg_elem(agg, k);
    return v ? LLVMConstIntGetSExtValue(v) : 0;
}

/* The initializer of the global a descriptor pointer points to, or NULL
 * for a null pointer. */
static LLVMValueRef pointee(LLVMValueRef v)
{
    while (v && !LLVMIsAGlobalVariable(v)) {
        if (LLVMIsNull(v) || !LLVMIsAConstantExpr(v)) return NULL;
        v = LLVMGetOperand(v, 0);
    }
    return v ? LLVMGetInitializer(v) : NULL;
}

enum { DMAX = 256 };

/* A zgrt_keep read back. */
typedef struct DKeep {
    int nevals, nvc, nviews, nvarviews;
    int evals[DMAX], vc[DMAX];
    Slot views[DMAX], varviews[DMAX];
} DKeep;

/* A zgrt_edge read back (groups: lifeline, from_vc, to_vc, views_end,
 * varviews_end; pairs: from, to). */
typedef struct DEdge {
    int from, to, ngroups, nviews, nvarviews;
    int groups[DMAX][5];
    Slot views[DMAX], varviews[DMAX]; /* (from, to) */
} DEdge;

typedef struct Desc {
    int nlifelines, monitor, nsubs, nvars, nedges;
    const char *var_names[DMAX];
    bool has_eval[DMAX]; /* evals[L] != NULL */
    DKeep keeps[64];
    DEdge edges[128];
} Desc;

/* n int32 / (int32, int32) elements of a constant table, which exists
 * exactly when n > 0. */
/* n words of the i32 array t (the tables of int32 structs are written as
 * flat i32 arrays: zgrt_slot, zgrt_pair and zgrt_group as 2, 2 and 5
 * words). */
static void read_words(LLVMValueRef t, int n, int *out)
{
    cr_assert(!t || LLVMGetTypeKind(LLVMTypeOf(t)) == LLVMArrayTypeKind);
    cr_assert(!t || LLVMGetArrayLength(LLVMTypeOf(t)) == (unsigned)n, "a table of %d words", n);
    for (int i = 0; i < n; i++) {
        /* an i32 array is constant data, not an aggregate of operands */
        LLVMValueRef e = LLVMIsAConstantDataSequential(t) ? LLVMGetElementAsConstant(t, (unsigned)i)
                                                          : agg_elem(t, (unsigned)i);
        out[i] = e ? (int)LLVMConstIntGetSExtValue(e) : 0; /* NULL: zeroinitializer */
    }
}

static void read_ints(LLVMValueRef ptr, int n, int *out, const char *what)
{
    LLVMValueRef t = pointee(ptr);
    cr_assert_eq(t != NULL, n > 0, "%s: a table exactly when it has entries", what);
    cr_assert_leq(n, DMAX);
    read_words(t, n, out);
}

static void read_pairs(LLVMValueRef ptr, int n, Slot *out, const char *what)
{
    LLVMValueRef t = pointee(ptr);
    cr_assert_eq(t != NULL, n > 0, "%s: a table exactly when it has entries", what);
    cr_assert_leq(n, DMAX);
    int w[2 * DMAX];
    read_words(t, 2 * n, w);
    for (int i = 0; i < n; i++) out[i] = (Slot){w[2 * i], w[2 * i + 1]};
}

/* Reads the all-in-one descriptor of a compiled program (d is large: the
 * caller allocates it). */
static void read_desc(TComp *c, Desc *d)
{
    memset(d, 0, sizeof *d);
    LLVMContextRef lc = LLVMContextCreate();
    ZbGen *g = zb_gen_new(lc, &c->comp);
    LLVMModuleRef m = zb_gen_module(g, "prog");
    zb_gen_descriptor(g, m);
    LLVMValueRef init = LLVMGetInitializer(LLVMGetNamedGlobal(m, "zg.program"));
    cr_assert_not_null(init);
    cr_assert_eq(LLVMCountStructElementTypes(LLVMTypeOf(init)), (unsigned)PF__COUNT);
    d->nlifelines = (int)agg_int(init, PF_NLIFELINES);
    d->monitor = (int)agg_int(init, PF_MONITOR);
    d->nsubs = (int)agg_int(init, PF_NSUBS);
    d->nvars = (int)agg_int(init, PF_NVARS);
    d->nedges = (int)agg_int(init, PF_NEDGES);
    cr_assert_leq(d->nvars, DMAX);
    cr_assert_leq(d->nlifelines, 64);
    cr_assert_leq(d->nedges, 128);
    LLVMValueRef t = pointee(agg_elem(init, PF_EVALS));
    for (int i = 0; i < d->nlifelines; i++) {
        LLVMValueRef e = agg_elem(t, (unsigned)i);
        d->has_eval[i] = e && !LLVMIsNull(e);
    }
    t = pointee(agg_elem(init, PF_KEEPS));
    cr_assert_not_null(t, "no keep tables");
    for (int i = 0; i < d->nlifelines; i++) {
        LLVMValueRef k = agg_elem(t, (unsigned)i);
        DKeep *dk = &d->keeps[i];
        dk->nevals = (int)agg_int(k, 0);
        dk->nvc = (int)agg_int(k, 1);
        dk->nviews = (int)agg_int(k, 2);
        dk->nvarviews = (int)agg_int(k, 3);
        read_ints(agg_elem(k, 4), dk->nevals, dk->evals, "keep.evals");
        read_ints(agg_elem(k, 5), dk->nvc, dk->vc, "keep.vc");
        read_pairs(agg_elem(k, 6), dk->nviews, dk->views, "keep.views");
        read_pairs(agg_elem(k, 7), dk->nvarviews, dk->varviews, "keep.varviews");
    }
    t = pointee(agg_elem(init, PF_EDGES));
    cr_assert_eq(t != NULL, d->nedges > 0);
    for (int i = 0; i < d->nedges; i++) {
        LLVMValueRef e = agg_elem(t, (unsigned)i);
        DEdge *de = &d->edges[i];
        de->from = (int)agg_int(e, 0);
        de->to = (int)agg_int(e, 1);
        de->ngroups = (int)agg_int(e, 2);
        de->nviews = (int)agg_int(e, 3);
        de->nvarviews = (int)agg_int(e, 4);
        LLVMValueRef gs = pointee(agg_elem(e, 6));
        cr_assert_eq(gs != NULL, de->ngroups > 0);
        cr_assert_leq(de->ngroups, DMAX);
        int w[5 * DMAX];
        read_words(gs, 5 * de->ngroups, w);
        for (int k = 0; k < de->ngroups; k++)
            for (int f = 0; f < 5; f++) de->groups[k][f] = w[5 * k + f];
        read_pairs(agg_elem(e, 7), de->nviews, de->views, "edge.views");
        read_pairs(agg_elem(e, 8), de->nvarviews, de->varviews, "edge.varviews");
    }
    for (int i = 0; i < d->nvars; i++) {
        const ZDecl *v = ZU_VEC_AT(c->comp.prog->vars, i);
        d->var_names[i] = v->name;
    }
    LLVMDisposeModule(m);
    LLVMContextDispose(lc);
}

static int var_index(const TComp *c, const char *name)
{
    for (int i = 0; i < c->comp.prog->vars.len; i++)
        if (!strcmp(((const ZDecl *)ZU_VEC_AT(c->comp.prog->vars, i))->name, name)) return i;
    cr_assert_fail("no variable %s", name);
    return -1;
}

static bool has_slot(const Slot *t, int n, int life, int index)
{
    for (int i = 0; i < n; i++)
        if (t[i].life == life && t[i].index == index) return true;
    return false;
}

/* What each lifeline keeps is its guard table's entries about other
 * lifelines (what `zgc guards` prints), sorted, with the clock entries of
 * itself and of every lifeline of its entries; and every edge carries, for
 * each lifeline B ≠ receiver that both keep clock entries about, exactly
 * the receiver's entries about B, each taken from the place the sender
 * holds it (its val for its own views, its store for its own variables). */
static void check_keeps_and_edges(TComp *c, const Desc *d, const char *what)
{
    const ZGuardTable *gt = c->comp.guards;
    int nl = d->nlifelines;
    for (int L = 0; L < nl; L++) {
        const ZLifelineMonitor *m = ZU_VEC_AT(gt->monitors, L);
        const DKeep *k = &d->keeps[L];
        int nv = 0, nvv = 0;
        bool clock[DMAX] = {false};
        clock[L] = m->needs_monitor;
        for (int i = 0; i < m->bool_views.len; i++) {
            const ZViewEntry *e = ZU_VEC_AT(m->bool_views, i);
            clock[e->life] = true;
            if (e->life == L) continue;
            nv++;
            cr_expect(has_slot(k->views, k->nviews, e->life, e->sub),
                      "%s: lifeline %d does not keep view (%d, φ%d)", what, L, e->life, e->sub);
        }
        for (int i = 0; i < m->var_views.len; i++) {
            const ZViewEntry *e = ZU_VEC_AT(m->var_views, i);
            clock[e->life] = true;
            if (e->life == L) continue;
            nvv++;
            cr_expect(has_slot(k->varviews, k->nvarviews, e->life, var_index(c, e->var)),
                      "%s: lifeline %d does not keep var(%d, %s)", what, L, e->life, e->var);
        }
        cr_expect_eq(k->nviews, nv, "%s: lifeline %d keeps %d views, expected %d", what, L,
                     k->nviews, nv);
        cr_expect_eq(k->nvarviews, nvv, "%s: lifeline %d keeps %d variable views", what, L,
                     k->nvarviews);
        cr_expect_eq(k->nevals, m->evaluates.len, "%s: lifeline %d evaluates", what, L);
        for (int i = 0; i < k->nevals && i < m->evaluates.len; i++)
            cr_expect_eq(k->evals[i], ((const ZFormula *)ZU_VEC_AT(m->evaluates, i))->id);
        int nc = 0;
        for (int b = 0; b < nl; b++)
            if (clock[b]) {
                cr_expect(nc < k->nvc && k->vc[nc] == b, "%s: lifeline %d: clock entry %d", what, L,
                          b);
                nc++;
            }
        cr_expect_eq(k->nvc, nc, "%s: lifeline %d keeps %d clock entries", what, L, k->nvc);
        for (int i = 1; i < k->nviews; i++)
            cr_expect(k->views[i - 1].life < k->views[i].life ||
                          (k->views[i - 1].life == k->views[i].life &&
                           k->views[i - 1].index < k->views[i].index),
                      "%s: views of %d not sorted", what, L);
    }
    /* one edge per pair of lifelines that exchange messages */
    int ne = 0;
    for (int y = 0; y < nl; y++)
        for (int x = 0; x < nl; x++) ne += x != y && zj_set_has(&gt->adj[y], x);
    cr_expect_eq(d->nedges, ne, "%s: %d edges, the message graph has %d", what, d->nedges, ne);
    for (int i = 0; i < d->nedges; i++) {
        const DEdge *e = &d->edges[i];
        const DKeep *Y = &d->keeps[e->from], *X = &d->keeps[e->to];
        cr_expect(zj_set_has(&gt->adj[e->from], e->to), "%s: edge %d -> %d", what, e->from, e->to);
        int g = 0, v = 0, vv = 0;
        for (int xi = 0; xi < X->nvc; xi++) {
            int b = X->vc[xi];
            bool sender_keeps = false;
            for (int yi = 0; yi < Y->nvc; yi++) sender_keeps |= Y->vc[yi] == b;
            if (b == e->to || !sender_keeps) continue;
            cr_assert_lt(g, e->ngroups, "%s: edge %d -> %d lacks lifeline %d", what, e->from, e->to,
                         b);
            cr_expect_eq(e->groups[g][0], b, "%s: edge %d -> %d group %d", what, e->from, e->to, g);
            cr_expect_eq(Y->vc[e->groups[g][1]], b);
            cr_expect_eq(X->vc[e->groups[g][2]], b);
            for (int j = 0; j < X->nviews; j++) {
                if (X->views[j].life != b) continue;
                cr_assert_lt(v, e->nviews);
                cr_expect_eq(e->views[v].index, j, "%s: edge %d -> %d view %d", what, e->from,
                             e->to, v);
                int src = e->views[v].life;
                if (b == e->from)
                    cr_expect_eq(Y->evals[src], X->views[j].index);
                else
                    cr_expect(Y->views[src].life == b && Y->views[src].index == X->views[j].index);
                v++;
            }
            for (int j = 0; j < X->nvarviews; j++) {
                if (X->varviews[j].life != b) continue;
                cr_assert_lt(vv, e->nvarviews);
                cr_expect_eq(e->varviews[vv].index, j);
                int src = e->varviews[vv].life;
                if (b == e->from)
                    cr_expect_eq(src, X->varviews[j].index);
                else
                    cr_expect(Y->varviews[src].life == b &&
                              Y->varviews[src].index == X->varviews[j].index);
                vv++;
            }
            cr_expect_eq(e->groups[g][3], v);
            cr_expect_eq(e->groups[g][4], vv);
            g++;
        }
        cr_expect_eq(e->ngroups, g, "%s: edge %d -> %d has %d groups, expected %d", what, e->from,
                     e->to, e->ngroups, g);
        cr_expect_eq(e->nviews, v);
        cr_expect_eq(e->nvarviews, vv);
    }
}

/* (lifeline, slot) of every call of fn in the module's functions named
 * `in`, in order. */
static int rt_calls(LLVMModuleRef m, const char *in, const char *fn, Slot *out, int cap)
{
    int n = 0;
    LLVMValueRef f = LLVMGetNamedFunction(m, in);
    if (!f) return 0;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
        for (LLVMValueRef ins = LLVMGetFirstInstruction(bb); ins;
             ins = LLVMGetNextInstruction(ins)) {
            if (LLVMGetInstructionOpcode(ins) != LLVMCall) continue;
            LLVMValueRef callee = LLVMGetCalledValue(ins);
            size_t len;
            const char *name = LLVMGetValueName2(callee, &len);
            if (strcmp(name, fn) != 0 || n >= cap) continue;
            out[n++] = (Slot){(int)LLVMConstIntGetSExtValue(LLVMGetOperand(ins, 1)),
                              (int)LLVMConstIntGetSExtValue(LLVMGetOperand(ins, 2))};
        }
    return n;
}

Test(backend, merge_descriptor_has_the_plan)
{
    char *text = slurp(ZGC_SOURCE_DIR "/examples/merge.zg");
    TComp *c = compile_ok(text, "merge.zg");
    /* zgc guards --plan examples/merge.zg: the Committer keeps the views
     * (TestRunner, φ5) (Security, φ10) and both candidates, with the clock
     * entries of TestRunner, Security and itself; TestRunner keeps
     * Security's (forwarded to the Committer) and sends its own from its
     * values and its store */
    Desc *d = calloc(1, sizeof *d);
    read_desc(c, d);
    cr_assert_eq(d->nsubs, 13);
    const DKeep *cm = &d->keeps[3];
    cr_assert_eq(cm->nviews, 2);
    cr_expect(cm->views[0].life == 1 && cm->views[0].index == 5, "(%d, %d)", cm->views[0].life,
              cm->views[0].index);
    cr_expect(cm->views[1].life == 2 && cm->views[1].index == 10);
    cr_assert_eq(cm->nvarviews, 2);
    for (int i = 0; i < 2; i++) {
        cr_expect_eq(cm->varviews[i].life, i + 1);
        cr_expect_str_eq(d->var_names[cm->varviews[i].index], "candidate");
    }
    cr_assert_eq(cm->nvc, 3);
    cr_expect(cm->vc[0] == 1 && cm->vc[1] == 2 && cm->vc[2] == 3);
    const DKeep *tr = &d->keeps[1];
    cr_expect(tr->nvc == 2 && tr->vc[0] == 1 && tr->vc[1] == 2);
    cr_expect(tr->nviews == 1 && tr->views[0].life == 2 && tr->views[0].index == 10);
    /* TestRunner → Committer: its own group, then Security's */
    const DEdge *e = NULL;
    for (int i = 0; i < d->nedges; i++)
        if (d->edges[i].from == 1 && d->edges[i].to == 3) e = &d->edges[i];
    cr_assert_not_null(e);
    cr_assert_eq(e->ngroups, 2);
    cr_expect_eq(e->groups[0][0], 1);
    cr_expect(e->views[0].life == 2 && e->views[0].index == 0, "val[2] -> view 0");
    cr_expect(e->varviews[0].life == var_index(c, "candidate"), "the store's candidate");
    cr_expect_eq(e->groups[1][0], 2);
    cr_expect(e->views[1].life == 0 && e->views[1].index == 1, "view 0 -> view 1");
    check_keeps_and_edges(c, d, "merge.zg");
    /* the Committer's eval function reads its positions, not φ / the variable */
    LLVMContextRef lc = LLVMContextCreate();
    ZbGen *g = zb_gen_new(lc, &c->comp);
    LLVMModuleRef m = zb_gen_module(g, "life");
    cr_assert(zb_gen_lifeline(g, m, m, 3));
    Slot calls[8];
    int n = rt_calls(m, "zg.eval.Committer", "zgrt_view", calls, 8);
    cr_assert_eq(n, 2);
    cr_expect(calls[0].life == 1 && calls[0].index == 0, "view (%d, %d)", calls[0].life,
              calls[0].index);
    cr_expect(calls[1].life == 2 && calls[1].index == 1, "view (%d, %d)", calls[1].life,
              calls[1].index);
    n = rt_calls(m, "zg.eval.Committer", "zgrt_varview", calls, 8);
    cr_assert_eq(n, 2);
    cr_expect(calls[0].life == 1 && calls[0].index == 0, "varview (%d, %d)", calls[0].life,
              calls[0].index);
    cr_expect(calls[1].life == 2 && calls[1].index == 1, "varview (%d, %d)", calls[1].life,
              calls[1].index);
    LLVMDisposeModule(m);
    LLVMContextDispose(lc);
    free(d);
    t_free(c);
    free(text);
}

/* Every program: the keep and edge tables follow the guard tables, and
 * every zgrt_view / zgrt_varview call of every eval function names a slot
 * its lifeline keeps about that lifeline (a missing one is an internal
 * compiler error). */
static void check_file_slots(const char *path)
{
    char *text = slurp(path);
    TComp *c = compile_at(text, path);
    Desc *d = calloc(1, sizeof *d);
    read_desc(c, d);
    check_keeps_and_edges(c, d, path);
    LLVMContextRef lc = LLVMContextCreate();
    ZbGen *g = zb_gen_new(lc, &c->comp);
    for (int L = 0; L < c->comp.prog->lifelines.len; L++) {
        LLVMModuleRef m = zb_gen_module(g, "life");
        cr_assert(zb_gen_lifeline(g, m, m, L));
        char fname[300];
        snprintf(fname, sizeof fname, "zg.eval.%s",
                 ((const ZDecl *)ZU_VEC_AT(c->comp.prog->lifelines, L))->name);
        const DKeep *k = &d->keeps[L];
        Slot calls[256];
        int n = rt_calls(m, fname, "zgrt_view", calls, 256);
        for (int i = 0; i < n; i++) {
            int s = calls[i].index;
            cr_expect(s >= 0 && s < k->nviews && k->views[s].life == calls[i].life &&
                          calls[i].life != L,
                      "%s: %s reads view slot %d of lifeline %d", path, fname, s, calls[i].life);
        }
        n = rt_calls(m, fname, "zgrt_varview", calls, 256);
        for (int i = 0; i < n; i++) {
            int s = calls[i].index;
            cr_expect(s >= 0 && s < k->nvarviews && k->varviews[s].life == calls[i].life &&
                          calls[i].life != L,
                      "%s: %s reads variable-view slot %d of lifeline %d", path, fname, s,
                      calls[i].life);
        }
        LLVMDisposeModule(m);
    }
    LLVMContextDispose(lc);
    free(d);
    t_free(c);
    free(text);
}

Test(backend, every_program_keeps_what_its_plan_gives)
{
    const char *pats[] = {ZGC_SOURCE_DIR "/examples/*.zg", ZGC_SOURCE_DIR "/examples/*/*.zg",
                          ZGC_SOURCE_DIR "/tests/golden/*.zg", ZGC_SOURCE_DIR "/tests/run/*.zg"};
    int n = 0;
    for (size_t k = 0; k < sizeof pats / sizeof pats[0]; k++) {
        glob_t gl;
        if (glob(pats[k], 0, NULL, &gl) != 0) continue;
        for (size_t i = 0; i < gl.gl_pathc; i++, n++)
            if (!no_code_yet(gl.gl_pathv[i])) check_file_slots(gl.gl_pathv[i]);
        globfree(&gl);
    }
    cr_assert_geq(n, 13, "only %d programs found", n);
}

/* The descriptor is the monitor plan (compiler/plan.c), and `zgc guards`
 * and `zgc guards --plan` print what the descriptor holds: every kept
 * table, every edge, the state each lifeline keeps (8 per clock entry, 2
 * per evaluated subformula, 1 per view, 16 per variable view) and the
 * metadata bytes of each edge's messages (8 per group, 1 per view, 16 per
 * variable view; traced: 8 per lifeline instead of 8 per group). */
static void check_plan(TComp *c, const char *what)
{
    Desc *d = calloc(1, sizeof *d);
    read_desc(c, d);
    const ZMonitorPlan *pl = c->comp.plan;
    const ZProgram *p = c->comp.prog;
    int nl = d->nlifelines;
    cr_assert_eq(pl->nlifelines, nl, "%s: %d lifelines in the plan, %d in the descriptor", what,
                 pl->nlifelines, nl);
    cr_expect_eq(pl->monitor, d->monitor != 0, "%s: monitor", what);
    cr_expect_eq(pl->nsubs, d->nsubs, "%s: nsubs", what);
    cr_assert_eq(pl->nedges, d->nedges, "%s: edges", what);
    T_CAPTURE(guards, zm_print_guards(out, pl));
    T_CAPTURE(text, zm_print(out, pl));
    char want[512];
    for (int b = 0; b < nl; b++) {
        const ZPlanLifeline *pll = &pl->lifelines[b];
        const DKeep *k = &d->keeps[b];
        cr_expect_eq(zm_has_eval(pl, b), d->has_eval[b], "%s: eval function of %d", what, b);
        cr_assert(pll->nevals == k->nevals && pll->nvc == k->nvc && pll->nviews == k->nviews &&
                      pll->nvarviews == k->nvarviews,
                  "%s: lifeline %d: counts", what, b);
        for (int i = 0; i < k->nevals; i++) cr_expect_eq(pll->evals[i], k->evals[i]);
        for (int i = 0; i < k->nvc; i++) cr_expect_eq(pll->vc[i], k->vc[i]);
        for (int i = 0; i < k->nviews; i++)
            cr_expect(pll->views[i].life == k->views[i].life &&
                      pll->views[i].index == k->views[i].index);
        for (int i = 0; i < k->nvarviews; i++)
            cr_expect(pll->varviews[i].life == k->varviews[i].life &&
                      pll->varviews[i].index == k->varviews[i].index);
        size_t rest = 2 * (size_t)k->nevals + (size_t)k->nviews + 16 * (size_t)k->nvarviews;
        bool mon = k->nvc > 0;
        size_t state = mon ? 8 * (size_t)k->nvc + rest : 0;
        size_t traced = 8 * (size_t)nl + (mon ? rest : 0);
        cr_expect_eq(pll->state_bytes, state, "%s: state of %d", what, b);
        cr_expect_eq(pll->traced_state_bytes, traced, "%s: traced state of %d", what, b);
        const ZDecl *l = ZU_VEC_AT(p->lifelines, b);
        if (mon)
            snprintf(want, sizeof want, "\nlifeline %s: monitor\n  evaluates:", l->name);
        else
            snprintf(want, sizeof want,
                     "\nlifeline %s: no monitor (state 0 B; traced: vc %d × 8 B = %zu B)\n",
                     l->name, nl, traced);
        const char *block = strstr(guards, want);
        cr_expect(block, "%s: no `%s` in\n%s", what, want, guards);
        if (block && mon) {
            snprintf(want, sizeof want,
                     "  state: vc %d × 8 B + values %d B + old %d B + views %d B + vars %d × 16 B "
                     "= %zu B; traced: vc %d × 8 B, %zu B\n",
                     k->nvc, k->nevals, k->nevals, k->nviews, k->nvarviews, state, nl, traced);
            const char *st = strstr(block, "\n  state: ");
            cr_expect(st && !strncmp(st + 1, want, strlen(want)), "%s: no `%s` in\n%s", what, want,
                      block);
            cr_expect(strstr(text, want), "%s: --plan has no `%s`", what, want);
        }
    }
    for (int i = 0; i < d->nedges; i++) {
        const ZPlanEdge *pe = &pl->edges[i];
        const DEdge *e = &d->edges[i];
        cr_assert(pe->from == e->from && pe->to == e->to && pe->ngroups == e->ngroups &&
                      pe->nviews == e->nviews && pe->nvarviews == e->nvarviews,
                  "%s: edge %d", what, i);
        for (int g = 0; g < e->ngroups; g++)
            cr_expect(pe->groups[g].life == e->groups[g][0] &&
                      pe->groups[g].from_vc == e->groups[g][1] &&
                      pe->groups[g].to_vc == e->groups[g][2] &&
                      pe->groups[g].views_end == e->groups[g][3] &&
                      pe->groups[g].varviews_end == e->groups[g][4]);
        for (int v = 0; v < e->nviews; v++)
            cr_expect(pe->views[v].from == e->views[v].life &&
                      pe->views[v].to == e->views[v].index);
        for (int v = 0; v < e->nvarviews; v++)
            cr_expect(pe->varviews[v].from == e->varviews[v].life &&
                      pe->varviews[v].to == e->varviews[v].index);
        size_t slots = (size_t)e->nviews + 16 * (size_t)e->nvarviews;
        size_t meta = 8 * (size_t)e->ngroups + slots, traced = 8 * (size_t)nl + slots;
        cr_expect_eq(pe->meta_bytes, meta);
        cr_expect_eq(pe->traced_meta_bytes, traced);
        const ZDecl *f = ZU_VEC_AT(p->lifelines, e->from), *t = ZU_VEC_AT(p->lifelines, e->to);
        if (meta)
            snprintf(want, sizeof want,
                     "\n  %s -> %s: vc %d × 8 B + views %d B + vars %d × 16 B = %zu B; traced: vc "
                     "%d × 8 B, %zu B\n",
                     f->name, t->name, e->ngroups, e->nviews, e->nvarviews, meta, nl, traced);
        else
            snprintf(want, sizeof want, "\n  %s -> %s: none; traced: vc %d × 8 B, %zu B\n", f->name,
                     t->name, nl, traced);
        cr_expect(strstr(guards, want), "%s: no `%s` in\n%s", what, want, guards);
        snprintf(want, sizeof want, "\nedge %s -> %s\n", f->name, t->name);
        cr_expect(strstr(text, want), "%s: --plan has no `%s`", what, want);
    }
    free(guards);
    free(text);
    free(d);
}

Test(backend, the_descriptor_is_the_printed_monitor_plan)
{
    const char *pats[] = {ZGC_SOURCE_DIR "/examples/*.zg", ZGC_SOURCE_DIR "/examples/*/*.zg",
                          ZGC_SOURCE_DIR "/tests/golden/*.zg", ZGC_SOURCE_DIR "/tests/run/*.zg"};
    int n = 0;
    for (size_t k = 0; k < sizeof pats / sizeof pats[0]; k++) {
        glob_t gl;
        if (glob(pats[k], 0, NULL, &gl) != 0) continue;
        for (size_t i = 0; i < gl.gl_pathc; i++, n++) {
            if (no_code_yet(gl.gl_pathv[i])) continue;
            char *text = slurp(gl.gl_pathv[i]);
            TComp *c = compile_at(text, gl.gl_pathv[i]);
            check_plan(c, gl.gl_pathv[i]);
            t_free(c);
            free(text);
        }
        globfree(&gl);
    }
    cr_assert_geq(n, 13, "only %d programs found", n);
    TComp *c = compile_ok(all_constructs, "all constructs");
    check_plan(c, "all constructs");
    t_free(c);
}

Test(backend, merge_plan_is_what_the_runtime_documents)
{
    /* docs/runtime.md, "Monitor metadata": merge.zg's messages carried 66
     * bytes each with the union of every lifeline's slots; with the
     * per-lifeline plan 25 to 50 bytes, and the lifelines keep 39 to 72
     * bytes instead of 88 each */
    char *text = slurp(ZGC_SOURCE_DIR "/examples/merge.zg");
    TComp *c = compile_ok(text, "merge.zg");
    const ZMonitorPlan *pl = c->comp.plan;
    cr_assert_eq(pl->nlifelines, 4);
    size_t state[4] = {58, 39, 39, 72};
    for (int b = 0; b < 4; b++)
        cr_expect_eq(pl->lifelines[b].state_bytes, state[b], "lifeline %d: %zu B", b,
                     pl->lifelines[b].state_bytes);
    struct {
        int from, to;
        size_t bytes, traced;
    } e[] = {{0, 1, 25, 49}, {0, 2, 25, 49}, {0, 3, 50, 66},
             {1, 3, 50, 66}, {2, 3, 50, 66}, {3, 0, 50, 66}};
    cr_assert_eq(pl->nedges, 6);
    for (int i = 0; i < 6; i++) {
        const ZPlanEdge *pe = zm_edge(pl, e[i].from, e[i].to);
        cr_assert_not_null(pe, "edge %d -> %d", e[i].from, e[i].to);
        cr_expect_eq(pe->meta_bytes, e[i].bytes, "edge %d -> %d", e[i].from, e[i].to);
        cr_expect_eq(pe->traced_meta_bytes, e[i].traced, "edge %d -> %d", e[i].from, e[i].to);
    }
    cr_expect_null(zm_edge(pl, 1, 2), "TestRunner never sends to Security");
    cr_expect_eq(zm_view_slot(pl, 3, 2, 10), 1);
    cr_expect_eq(zm_view_slot(pl, 3, 2, 5), -1);
    cr_expect_eq(zm_view_slot(pl, 2, 2, 10), -1, "Security's own view is its value");
    cr_expect_eq(zm_eval_pos(pl, 2, 10), 2);
    cr_expect_not(zm_has_eval(pl, 0), "the Orchestrator evaluates nothing");
    cr_expect(zm_has_eval(pl, 3));
    t_free(c);
    free(text);
}

/* @B(…) and @B.x where B never reaches the evaluating lifeline: constantly
 * false / undefined, no view, no slot; and nothing is sent to A. */
Test(backend, unreachable_views_need_no_slot)
{
    static const char src[] = "lifeline A, B;\n"
                              "var x: int = 0;\n"
                              "workflow w() -> int {\n"
                              "    A: x = 1;\n"
                              "    A(x) -> B(x);\n"
                              "    B: x = 5;\n"
                              "    if @B(x > 0) || @B.x == 5 @ A { A: x = 2; } else { A: x = 3; }\n"
                              "    return x @ A;\n"
                              "}\n";
    TComp *c = compile_ok(src, "unreachable");
    cr_assert(!zg_reaches(c->comp.guards, 1, 0));
    cr_assert(zg_reaches(c->comp.guards, 0, 1));
    cr_assert(zg_reaches(c->comp.guards, 1, 1));
    Desc *d = calloc(1, sizeof *d);
    read_desc(c, d);
    cr_expect_eq(d->keeps[0].nviews, 0);
    cr_expect_eq(d->keeps[0].nvarviews, 0);
    cr_expect_eq(d->keeps[1].nvc, 0, "B keeps nothing");
    cr_expect_eq(d->nedges, 1);
    cr_expect_eq(d->edges[0].ngroups, 0, "A -> B carries nothing");
    free(d);
    char *ir = emit_ir(c);
    cr_expect(strstr(ir, "define void @zg.eval.A("));
    cr_expect_null(strstr(ir, "call i32 @zgrt_view("), "no view read");
    cr_expect_null(strstr(ir, "call i8* @zgrt_varview("), "no variable view read");
    free(ir);
    t_free(c);
}

Test(backend, extern_pure_inside_an_expression_never_reaches_the_backend)
{
    /* the checker rejects it: an extern pure action is a statement of its own */
    static const char src[] = "lifeline A;\n"
                              "var s: str = \"x\";\n"
                              "var g: float = 0.0;\n"
                              "extern pure score(x: str) -> float;\n"
                              "workflow w() { A: g = score(s) + 1.0; }\n";
    TComp *c = t_compile(src, T_GUARDS);
    cr_expect_not(c->ok);
    cr_expect(strstr(c->diag_text,
                     "test.zg:5:23: error: extern pure action `score` can only be called as "
                     "the whole right-hand side of an assignment"),
              "got:\n%s", c->diag_text);
    t_free(c);
}

/* ------------------------------------------------------------------ */
/* the descriptor layout and the ABI table                             */
/* ------------------------------------------------------------------ */

typedef struct Layout {
    ZbDescType k;
    const char *name;
    size_t size, align;
    int n;
    size_t offs[40];
} Layout;

#define OFF(T, f) offsetof(T, f)

static const Layout layouts[] = {
    {ZB_TY_VALUE,
     "zgrt_value",
     sizeof(zgrt_value),
     _Alignof(zgrt_value),
     2,
     {OFF(zgrt_value, tag), OFF(zgrt_value, u)}},
    {ZB_TY_TYPE,
     "zgrt_type",
     sizeof(zgrt_type),
     _Alignof(zgrt_type),
     2,
     {OFF(zgrt_type, tag), OFF(zgrt_type, enum_id)}},
    {ZB_TY_LOC,
     "zgrt_loc",
     sizeof(zgrt_loc),
     _Alignof(zgrt_loc),
     3,
     {OFF(zgrt_loc, line), OFF(zgrt_loc, col), OFF(zgrt_loc, file)}},
    {ZB_TY_ENUM,
     "zgrt_enum",
     sizeof(zgrt_enum),
     _Alignof(zgrt_enum),
     3,
     {OFF(zgrt_enum, name), OFF(zgrt_enum, nmembers), OFF(zgrt_enum, members)}},
    {ZB_TY_VAR,
     "zgrt_var",
     sizeof(zgrt_var),
     _Alignof(zgrt_var),
     4,
     {OFF(zgrt_var, name), OFF(zgrt_var, type), OFF(zgrt_var, has_default), OFF(zgrt_var, def)}},
    {ZB_TY_ACTION,
     "zgrt_action",
     sizeof(zgrt_action),
     _Alignof(zgrt_action),
     21,
     {OFF(zgrt_action, name),
      OFF(zgrt_action, kind),
      OFF(zgrt_action, nparams),
      OFF(zgrt_action, param_names),
      OFF(zgrt_action, param_types),
      OFF(zgrt_action, nresults),
      OFF(zgrt_action, result_names),
      OFF(zgrt_action, result_types),
      OFF(zgrt_action, system),
      OFF(zgrt_action, user),
      OFF(zgrt_action, parse),
      OFF(zgrt_action, retries),
      OFF(zgrt_action, model),
      OFF(zgrt_action, temperature),
      OFF(zgrt_action, has_temperature),
      OFF(zgrt_action, has_fallback),
      OFF(zgrt_action, fallback),
      OFF(zgrt_action, human_kind),
      OFF(zgrt_action, prompt),
      OFF(zgrt_action, fn),
      OFF(zgrt_action, plan)}},
    {ZB_TY_INPUT,
     "zgrt_input",
     sizeof(zgrt_input),
     _Alignof(zgrt_input),
     2,
     {OFF(zgrt_input, var), OFF(zgrt_input, owner)}},
    {ZB_TY_RESULT,
     "zgrt_result",
     sizeof(zgrt_result),
     _Alignof(zgrt_result),
     2,
     {OFF(zgrt_result, var), OFF(zgrt_result, lifeline)}},
    {ZB_TY_SLOT,
     "zgrt_slot",
     sizeof(zgrt_slot),
     _Alignof(zgrt_slot),
     2,
     {OFF(zgrt_slot, lifeline), OFF(zgrt_slot, index)}},
    {ZB_TY_KEEP,
     "zgrt_keep",
     sizeof(zgrt_keep),
     _Alignof(zgrt_keep),
     8,
     {OFF(zgrt_keep, nevals), OFF(zgrt_keep, nvc), OFF(zgrt_keep, nviews),
      OFF(zgrt_keep, nvarviews), OFF(zgrt_keep, evals), OFF(zgrt_keep, vc), OFF(zgrt_keep, views),
      OFF(zgrt_keep, varviews)}},
    {ZB_TY_GROUP,
     "zgrt_group",
     sizeof(zgrt_group),
     _Alignof(zgrt_group),
     5,
     {OFF(zgrt_group, lifeline), OFF(zgrt_group, from_vc), OFF(zgrt_group, to_vc),
      OFF(zgrt_group, views_end), OFF(zgrt_group, varviews_end)}},
    {ZB_TY_PAIR,
     "zgrt_pair",
     sizeof(zgrt_pair),
     _Alignof(zgrt_pair),
     2,
     {OFF(zgrt_pair, from), OFF(zgrt_pair, to)}},
    {ZB_TY_EDGE,
     "zgrt_edge",
     sizeof(zgrt_edge),
     _Alignof(zgrt_edge),
     9,
     {OFF(zgrt_edge, from), OFF(zgrt_edge, to), OFF(zgrt_edge, ngroups), OFF(zgrt_edge, nviews),
      OFF(zgrt_edge, nvarviews), OFF(zgrt_edge, pad), OFF(zgrt_edge, groups), OFF(zgrt_edge, views),
      OFF(zgrt_edge, varviews)}},
    {ZB_TY_CELL,
     "zgrt_cell",
     sizeof(zgrt_cell),
     _Alignof(zgrt_cell),
     3,
     {OFF(zgrt_cell, name), OFF(zgrt_cell, type), OFF(zgrt_cell, def)}},
    {ZB_TY_STORE,
     "zgrt_store_decl",
     sizeof(zgrt_store_decl),
     _Alignof(zgrt_store_decl),
     7,
     {OFF(zgrt_store_decl, name), OFF(zgrt_store_decl, level), OFF(zgrt_store_decl, ncells),
      OFF(zgrt_store_decl, cells), OFF(zgrt_store_decl, ntools), OFF(zgrt_store_decl, pad),
      OFF(zgrt_store_decl, tools)}},
    {ZB_TY_PROGRAM,
     "zgrt_program",
     sizeof(zgrt_program),
     _Alignof(zgrt_program),
     34,
     {OFF(zgrt_program, abi_version),
      OFF(zgrt_program, nlifelines),
      OFF(zgrt_program, source),
      OFF(zgrt_program, workflow),
      OFF(zgrt_program, lifelines),
      OFF(zgrt_program, bodies),
      OFF(zgrt_program, evals),
      OFF(zgrt_program, nvars),
      OFF(zgrt_program, nenums),
      OFF(zgrt_program, vars),
      OFF(zgrt_program, enums),
      OFF(zgrt_program, nchans),
      OFF(zgrt_program, ntags),
      OFF(zgrt_program, chans),
      OFF(zgrt_program, tags),
      OFF(zgrt_program, nlocs),
      OFF(zgrt_program, nactions),
      OFF(zgrt_program, locs),
      OFF(zgrt_program, actions),
      OFF(zgrt_program, ninputs),
      OFF(zgrt_program, nresults),
      OFF(zgrt_program, inputs),
      OFF(zgrt_program, results),
      OFF(zgrt_program, result_tuple),
      OFF(zgrt_program, monitor),
      OFF(zgrt_program, nsubs),
      OFF(zgrt_program, nedges),
      OFF(zgrt_program, keeps),
      OFF(zgrt_program, edges),
      OFF(zgrt_program, fingerprint),
      OFF(zgrt_program, fingerprint_parts),
      OFF(zgrt_program, nstores),
      OFF(zgrt_program, stores),
      OFF(zgrt_program, role)}},
};

Test(backend, descriptor_types_have_the_c_layout)
{
    ZArena *a = zu_arena_new();
    const char *err = NULL;
    ZbTarget *t = zb_target_new(a, 0, &err);
    cr_assert_not_null(t, "no native target: %s", err ? err : "");
    LLVMTargetDataRef td = zb_target_layout(t);
    LLVMContextRef lc = LLVMContextCreate();
    cr_assert_eq(sizeof layouts / sizeof layouts[0], ZB_TY__COUNT);
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
        const Layout *l = &layouts[i];
        LLVMTypeRef ty = zb_desc_type(lc, l->k);
        cr_assert_eq(zb_desc_type(lc, l->k), ty, "%s is created twice", l->name);
        cr_expect_eq(LLVMCountStructElementTypes(ty), (unsigned)l->n, "%s: %u fields, C has %d",
                     l->name, LLVMCountStructElementTypes(ty), l->n);
        cr_expect_eq(LLVMABISizeOfType(td, ty), l->size, "%s: LLVM size %llu, C size %zu", l->name,
                     LLVMABISizeOfType(td, ty), l->size);
        cr_expect_eq(LLVMABIAlignmentOfType(td, ty), l->align, "%s alignment", l->name);
        for (int k = 0; k < l->n && k < (int)LLVMCountStructElementTypes(ty); k++)
            cr_expect_eq(LLVMOffsetOfElement(td, ty, (unsigned)k), l->offs[k],
                         "%s field %d: LLVM offset %llu, C offset %zu", l->name, k,
                         LLVMOffsetOfElement(td, ty, (unsigned)k), l->offs[k]);
    }
    LLVMContextDispose(lc);
    zb_target_free(t);
    zu_arena_free(a);
}

#define COUNT_ABI(name, sig, ret, params) +1
static const int abi_entries = 0 ZGRT_ABI(COUNT_ABI);

Test(backend, runtime_declarations_match_the_abi_table)
{
    cr_assert_eq(zb_abi_count(), abi_entries);
    LLVMContextRef lc = LLVMContextCreate();
    LLVMModuleRef m = LLVMModuleCreateWithNameInContext("abi", lc);
    for (int i = 0; i < zb_abi_count(); i++) {
        const char *name = zb_abi_name(i), *sig = zb_abi_signature(i);
        LLVMValueRef fn = zb_abi_declare(m, name);
        cr_assert_not_null(fn, "%s", name);
        cr_assert_eq(zb_abi_declare(m, name), fn, "%s declared twice", name);
        LLVMTypeRef ft = LLVMGlobalGetValueType(fn);
        cr_assert_eq(LLVMGetTypeKind(ft), LLVMFunctionTypeKind);
        unsigned np = LLVMCountParamTypes(ft);
        cr_assert_eq(np, strlen(sig) - 1, "%s: %u parameters for `%s`", name, np, sig);
        LLVMTypeRef ps[16];
        cr_assert_leq(np, 16u);
        LLVMGetParamTypes(ft, ps);
        for (unsigned k = 0; k <= np; k++) {
            LLVMTypeRef t = k == 0 ? LLVMGetReturnType(ft) : ps[k - 1];
            char c = sig[k];
            LLVMTypeKind tk = LLVMGetTypeKind(t);
            switch (c) {
            case 'v': cr_expect_eq(tk, LLVMVoidTypeKind, "%s[%u]", name, k); break;
            case 'p': cr_expect_eq(tk, LLVMPointerTypeKind, "%s[%u]", name, k); break;
            case 'd': cr_expect_eq(tk, LLVMDoubleTypeKind, "%s[%u]", name, k); break;
            case 'i':
            case 'l':
                cr_expect_eq(tk, LLVMIntegerTypeKind, "%s[%u]", name, k);
                cr_expect_eq(LLVMGetIntTypeWidth(t), c == 'i' ? 32u : 64u, "%s[%u] width", name, k);
                break;
            default: cr_expect_fail("%s: bad signature letter `%c`", name, c);
            }
        }
    }
    cr_expect_null(zb_abi_declare(m, "zgrt_no_such_function"));
    cr_expect_null(zb_abi_fn_type(lc, "vx"));
    cr_expect_null(zb_abi_fn_type(lc, ""));
    LLVMDisposeModule(m);
    LLVMContextDispose(lc);
}

Test(backend, builtin_numbers_match_the_runtime)
{
    cr_expect_eq((int)BI_LEN, ZGRT_BI_LEN);
    cr_expect_eq((int)BI_JSON_STR, ZGRT_BI_JSON_STR);
    cr_expect_eq((int)BI__COUNT - 1, ZGRT_BI_JSON_STR);
}

/* ------------------------------------------------------------------ */
/* objects and builds                                                  */
/* ------------------------------------------------------------------ */

static char *temp_dir(void)
{
    char *d = strdup("/tmp/zgc-test-backend-XXXXXX");
    cr_assert_not_null(mkdtemp(d));
    return d;
}

static void remove_dir(const char *dir)
{
    pid_t pid = fork();
    if (pid == 0) {
        execlp("rm", "rm", "-rf", dir, (char *)NULL);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
}

/* The size of file `path` in bytes (-1: none). */
static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* A lifeline's evaluation of guards goes into a module of its own, which
 * zb_target_emit optimises even at level 0 (`guards`): its object is much
 * smaller than the same module compiled without optimisation, the body's
 * module holds no evaluation, and the one module of zb_gen_whole keeps
 * both. */
Test(backend, guards_module_is_optimised_at_level_0)
{
    char text[8192];
    int k = snprintf(text, sizeof text,
                     "lifeline A, B;\nvar x: int = 0;\nvar i: int = 0;\n"
                     "workflow w() -> int {\n    B: x = 1;\n    B(x) -> A(x);\n"
                     "    while i < 3");
    for (int t = 0; t < 24; t++)
        k += snprintf(text + k, sizeof text - (size_t)k,
                      t % 3 == 0   ? " && @B(x >= %d since x != %d)"
                      : t % 3 == 1 ? " && (i >= %d since i != %d)"
                                   : " && @B.x >= %d && x > %d",
                      -t - 1, -t - 2);
    snprintf(text + k, sizeof text - (size_t)k,
             " @ A {\n        A: i = i + 1;\n    }\n    return i @ A;\n}\n");
    TComp *c = compile_ok(text, "guards.zg");
    const char *err = NULL;
    ZbTarget *t = zb_target_new(c->comp.arena, 0, &err);
    cr_assert_not_null(t, "%s", err ? err : "");
    char *dir = temp_dir();
    long size[2];
    for (int guards = 0; guards < 2; guards++) {
        LLVMContextRef lc = LLVMContextCreate();
        ZbGen *g = zb_gen_new(lc, &c->comp);
        cr_assert(zb_has_eval(g, 0), "lifeline A evaluates its guard");
        LLVMModuleRef m = zb_gen_module(g, "body"), em = zb_gen_module(g, "eval");
        cr_assert(zb_gen_lifeline(g, m, em, 0));
        LLVMValueRef in_body = LLVMGetNamedFunction(m, "zg.eval.A");
        cr_expect(in_body == NULL || LLVMIsDeclaration(in_body), "no evaluation in the body");
        LLVMValueRef ev = LLVMGetNamedFunction(em, "zg.eval.A");
        cr_assert(ev != NULL && !LLVMIsDeclaration(ev), "zg.eval.A in the guards' module");
        zb_verify(em);
        char path[512];
        snprintf(path, sizeof path, "%s/eval%d.o", dir, guards);
        cr_assert_eq(zb_target_emit(t, em, path, guards, &err), 0, "%s", err ? err : "");
        size[guards] = file_size(path);
        cr_assert_gt(size[guards], 0);
        LLVMDisposeModule(m);
        LLVMDisposeModule(em);
        LLVMContextDispose(lc);
    }
    cr_expect_lt(size[1] * 4, size[0] * 3, "optimised: %ld bytes, not: %ld", size[1], size[0]);
    remove_dir(dir);
    free(dir);
    zb_target_free(t);
    t_free(c);
}

Test(backend, object_files_are_written)
{
    char *text = slurp(ZGC_SOURCE_DIR "/examples/increment.zg");
    TComp *c = compile_ok(text, "increment.zg");
    const char *err = NULL;
    ZbTarget *t = zb_target_new(c->comp.arena, 2, &err);
    cr_assert_not_null(t, "%s", err ? err : "");
    LLVMContextRef lc = LLVMContextCreate();
    ZbGen *g = zb_gen_new(lc, &c->comp);
    char *dir = temp_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/a.o", dir);
    LLVMModuleRef m = zb_gen_module(g, "a");
    cr_assert(zb_gen_lifeline(g, m, m, 0));
    zb_verify(m);
    cr_assert_eq(zb_target_emit(t, m, path, false, &err), 0, "%s", err ? err : "");
    LLVMDisposeModule(m);
    FILE *fp = fopen(path, "rb");
    cr_assert_not_null(fp);
    unsigned char magic[4] = {0};
    cr_assert_eq(fread(magic, 1, 4, fp), 4u);
    fclose(fp);
    cr_expect(magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F');
    /* a bad path is an error, not a crash */
    m = zb_gen_module(g, "b");
    zb_gen_descriptor(g, m);
    cr_expect_neq(zb_target_emit(t, m, "/nonexistent-dir/x.o", false, &err), 0);
    cr_expect_not_null(err);
    LLVMDisposeModule(m);
    remove_dir(dir);
    free(dir);
    LLVMContextDispose(lc);
    zb_target_free(t);
    t_free(c);
    free(text);
}

Test(backend, unwritable_output_directory_is_an_error)
{
    char *text = slurp(ZGC_SOURCE_DIR "/examples/hello.zg");
    TComp *c = compile_ok(text, "hello.zg");
    ZBuildOptions o = {.out_dir = "/proc/zgc-no-such-dir/out", .opt_level = 0};
    cr_expect_eq(zb_build(&c->comp, &o), 1);
    fflush(c->diag_file);
    cr_expect(
        strstr(c->diag_text,
               "test.zg: error: cannot create the output directory `/proc/zgc-no-such-dir/out`"),
        "got:\n%s", c->diag_text);
    t_free(c);
    free(text);
}

static bool have_runtime(void) { return access(ZGC_RUNTIME_LIB, R_OK) == 0; }

/* Runs argv; returns the exit status and stdout (stderr goes to err_file
 * when given). */
static int run_capture(char *const argv[], char **out, const char *err_file)
{
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        if (err_file && !freopen(err_file, "w", stderr)) _exit(126);
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        execv(argv[0], argv);
        _exit(127);
    }
    close(fds[1]);
    ZBuf b = {0};
    char chunk[1024];
    ssize_t k;
    while ((k = read(fds[0], chunk, sizeof chunk)) > 0)
        for (ssize_t i = 0; i < k; i++) zu_buf_putc(&b, chunk[i]);
    close(fds[0]);
    zu_buf_putc(&b, 0);
    int st;
    waitpid(pid, &st, 0);
    *out = b.data;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void build_and_run(const char *example, char *const args[], int nargs, const char *want)
{
    if (!have_runtime()) cr_skip_test("the runtime library %s is not built", ZGC_RUNTIME_LIB);
    char path[512];
    snprintf(path, sizeof path, ZGC_SOURCE_DIR "/examples/%s.zg", example);
    char *text = slurp(path);
    TComp *c = compile_at(text, path);
    char *dir = temp_dir();
    ZBuildOptions o = {.out_dir = dir, .opt_level = 2};
    int rc = zb_build(&c->comp, &o);
    fflush(c->diag_file);
    cr_assert_eq(rc, 0, "build failed:\n%s", c->diag_text);
    for (int L = 0; L < c->comp.prog->lifelines.len; L++) {
        const ZDecl *d = ZU_VEC_AT(c->comp.prog->lifelines, L);
        snprintf(path, sizeof path, "%s/%s.%s", dir, c->comp.wf->name, d->name);
        cr_expect_eq(access(path, X_OK), 0, "no executable %s", path);
    }
    snprintf(path, sizeof path, "%s/%s", dir, c->comp.wf->name);
    char *argv[16] = {path};
    for (int i = 0; i < nargs && i < 14; i++) argv[i + 1] = args[i];
    char *out = NULL;
    int st = run_capture(argv, &out, NULL);
    cr_expect_eq(st, 0, "%s exited with %d", path, st);
    cr_expect_str_eq(out, want);
    free(out);
    remove_dir(dir);
    free(dir);
    t_free(c);
    free(text);
}

Test(backend, hello_runs, .timeout = 120)
{
    char *args[] = {"--arg", "topic=hi"};
    build_and_run("hello", args, 2, "\"[write_reply:draft]\"\n");
}

Test(backend, increment_runs, .timeout = 120) { build_and_run("increment", NULL, 0, "3\n"); }

Test(backend, failing_c_file_is_reported, .timeout = 120)
{
    if (!have_runtime()) cr_skip_test("the runtime library %s is not built", ZGC_RUNTIME_LIB);
    char *text = slurp(ZGC_SOURCE_DIR "/examples/hello.zg");
    TComp *c = compile_ok(text, "hello.zg");
    char *dir = temp_dir();
    char cfile[512];
    snprintf(cfile, sizeof cfile, "%s/broken.c", dir);
    FILE *fp = fopen(cfile, "w");
    cr_assert_not_null(fp);
    fputs("#include \"zgrt.h\"\nint zg_x(zgrt_call *call) { return nope; }\n", fp);
    fclose(fp);
    const char *files[] = {cfile};
    char out_dir[600];
    snprintf(out_dir, sizeof out_dir, "%s/out", dir);
    ZBuildOptions o = {.out_dir = out_dir, .opt_level = 0, .c_files = files, .n_c_files = 1};
    cr_expect_eq(zb_build(&c->comp, &o), 1);
    fflush(c->diag_file);
    cr_expect(strstr(c->diag_text, "error: the C compiler failed on"), "got:\n%s", c->diag_text);
    cr_expect(strstr(c->diag_text, "nope"), "the compiler output is shown:\n%s", c->diag_text);
    remove_dir(dir);
    free(dir);
    t_free(c);
    free(text);
}

/* The longest function in IR text, in lines, and how many functions are
 * defined with a name starting with `prefix`. */
static int longest_function(const char *ir)
{
    int longest = 0, n = 0;
    bool in = false;
    for (const char *p = ir; *p;) {
        const char *e = strchr(p, '\n');
        if (!e) e = p + strlen(p);
        if (!strncmp(p, "define ", 7)) in = true, n = 0;
        if (in) n++;
        if (in && *p == '}') {
            in = false;
            if (n > longest) longest = n;
        }
        p = *e ? e + 1 : e;
    }
    return longest;
}

static int count_defined(const char *ir, const char *prefix)
{
    char want[128];
    snprintf(want, sizeof want, "@%s", prefix);
    int n = 0;
    for (const char *p = ir; (p = strstr(p, "\ndefine ")); p++) {
        const char *at = strchr(p, '@');
        const char *nl = strchr(p + 1, '\n');
        if (at && (!nl || at < nl) && !strncmp(at, want, strlen(want))) n++;
    }
    return n;
}

/* Code is generated once per guard and in functions of bounded length:
 * a tower of 30 guards, each using the previous one twice, was 2^30
 * copies inline (the test times out); 1,200 subformulas on one lifeline
 * and 450 statements in one body were one function each, on which LLVM's
 * -O2 is superlinear. */
Test(backend, long_code_is_cut_into_functions, .timeout = 60)
{
    ZBuf b = {0};
    zu_buf_puts(&b, "lifeline A, B;\nvar x: int = 0;\nvar ok: bool = false;\n"
                    "guard p0 = x > 0;\n");
    for (int k = 1; k <= 30; k++) zu_buf_printf(&b, "guard p%d = p%d && p%d;\n", k, k - 1, k - 1);
    zu_buf_puts(&b, "guard g0 = once ok;\n");
    for (int k = 1; k <= 600; k++) zu_buf_printf(&b, "guard g%d = g%d || x == %d;\n", k, k - 1, k);
    zu_buf_puts(&b, "workflow w() {\n");
    for (int k = 0; k < 450; k++) zu_buf_puts(&b, "  A: x = x + 1;\n");
    zu_buf_puts(&b, "  if p30 @ A { A: ok = true; }\n  if g600 @ A { A: x = 0; }\n"
                    "  A(x) -> B(x);\n}\n");
    TComp *c = compile_ok(b.data, "long program");
    gen_build_modules(c);
    char *ir = emit_ir(c);
    cr_expect_lt(strlen(ir), (size_t)4 << 20, "%zu bytes of IR", strlen(ir));
    cr_expect_lt(longest_function(ir), 8000);
    /* 3 + 2 * 600 subformulas on A: 5 parts of ZB_EVAL_CHUNK (256) */
    cr_expect(strstr(ir, "define void @zg.eval.A("));
    cr_expect_eq(count_defined(ir, "zg.eval.A."), 5);
    /* 450 statements: 3 parts of ZB_BODY_PART (200) */
    cr_expect_eq(count_defined(ir, "zg.part.A."), 3);
    /* p30 is used once, inlined; p0 … p29 twice each: one function each */
    cr_expect_eq(count_defined(ir, "zg.guard.p"), 30);
    cr_expect_not(strstr(ir, "@zg.guard.p30("));
    free(ir);
    t_free(c);
    zu_buf_free(&b);
}

/* ------------------------------------------------------------------ */
/* generated code on a stand-in runtime (tests/backend/mock_runtime.c) */
/* ------------------------------------------------------------------ */

#ifdef ZGC_MOCK_RT
typedef struct Ran {
    int status;
    char *out, *err;
} Ran;

/* Builds `text` against the stand-in runtime and runs the all-in-one
 * executable with args. */
static Ran mock_run(const char *text, char *const args[], int nargs)
{
    setenv("ZGC_RUNTIME_LIB", ZGC_MOCK_RT, 1);
    TComp *c = compile_ok(text, "program");
    char *dir = temp_dir();
    ZBuildOptions o = {.out_dir = dir, .opt_level = 1};
    int rc = zb_build(&c->comp, &o);
    fflush(c->diag_file);
    cr_assert_eq(rc, 0, "build failed:\n%s", c->diag_text);
    char exe[512], errf[512];
    snprintf(exe, sizeof exe, "%s/%s", dir, c->comp.wf->name);
    snprintf(errf, sizeof errf, "%s/stderr.txt", dir);
    char *argv[16] = {exe};
    for (int i = 0; i < nargs && i < 14; i++) argv[i + 1] = args[i];
    Ran r = {0};
    r.status = run_capture(argv, &r.out, errf);
    size_t len;
    const char *e;
    r.err = zu_read_file(errf, &len, &e);
    if (!r.err) r.err = strdup("");
    remove_dir(dir);
    free(dir);
    t_free(c);
    return r;
}

static void ran_free(Ran *r)
{
    free(r->out);
    free(r->err);
}

Test(generated, expressions_compute_their_values, .timeout = 120)
{
    static const char src[] =
        "lifeline A, B;\n"
        "enum Color { red, green, blue }\n"
        "const K = 10;\n"
        "var i: int = 7;\n"
        "var j: int = -3;\n"
        "var f: float = 2.5;\n"
        "var s: str = \"ab\";\n"
        "var c: Color = green;\n"
        "var r1: int = 0;\n"
        "var r2: int = 0;\n"
        "var r3: float = 0.0;\n"
        "var r4: str = \"\";\n"
        "var r5: bool = false;\n"
        "var r6: str = \"\";\n"
        "pure poly(x: int, y: int) -> (int, int) = (x * y + K, x / y * 100 + x % y);\n"
        "workflow arith() -> (int, int, float, str, bool, str) {\n"
        "    A { (r1, r2) = poly(i, j); r3 = f * 4.0 - 1.0 / 4.0 + -f; r4 = s + \"-\" + str(i) + "
        "upper(s); }\n"
        "    A { r5 = (r1 > r2 || c == blue) && !(s >= \"b\") && c != red && f > 2.0; }\n"
        "    A { r6 = i > 5 ? \"big\" : \"small\"; }\n"
        "    A(r1, r2, r3, r4, r5, r6) -> B(r1, r2, r3, r4, r5, r6);\n"
        "    return (r1 @ B, r2 @ B, r3 @ B, r4 @ B, r5 @ B, r6 @ B);\n"
        "}\n";
    Ran r = mock_run(src, NULL, 0);
    cr_expect_eq(r.status, 0, "stderr:\n%s", r.err);
    /* 7 / -3 is -3 and 7 % -3 is -2: / rounds down, % has the divisor's sign */
    cr_expect_str_eq(r.out, "[-11, -302, 7.25, \"ab-7AB\", true, \"big\"]\n");
    ran_free(&r);
}

Test(generated, control_flow_parallel_and_coregion, .timeout = 120)
{
    static const char src[] =
        "lifeline A, B, C;\n"
        "var n: int = 0;\n"
        "var m: int = 0;\n"
        "var s: str = \"\";\n"
        "var t: str = \"\";\n"
        "pure inc(x: int) -> int = x + 1;\n"
        "workflow ctl() -> (int, int, str) {\n"
        "    while n < 5 @ A {\n"
        "        A: n = inc(n);\n"
        "        if n % 2 == 0 @ A { A(n) -> B(n); B: m = m + n; } else { skip B; }\n"
        "    } else {\n"
        "        A(n) -> C(n);\n"
        "    }\n"
        "    parallel {\n"
        "        branch { B(m) -> C(m); }\n"
        "        branch { A: s = \"x\"; A(s) -> C(s); }\n"
        "    }\n"
        "    coregion { A(n) -> C(n); B(m) -> C(m); }\n"
        "    C: t = str(n) + \":\" + str(m) + s;\n"
        "    C(t) -> A(t);\n"
        "    return (n @ C, m @ B, t @ A);\n"
        "}\n";
    Ran r = mock_run(src, NULL, 0);
    cr_expect_eq(r.status, 0, "stderr:\n%s", r.err);
    cr_expect_str_eq(r.out, "[5, 6, \"5:6x\"]\n");
    ran_free(&r);
}

Test(generated, examples_run, .timeout = 300)
{
    static const struct {
        const char *file;
        const char *args[4];
        const char *want;
    } cases[] = {
        {"hello", {"--arg", "topic=hi"}, "\"[write_reply:draft]\"\n"},
        {"increment", {NULL}, "3\n"},
        {"parallel",
         {"--arg", "draft=D"},
         "\"D\\n--\\nlegal: [check_legal:legal_notes]\\nstyle: [check_style:style_notes]\"\n"},
        {"coregion", {"--arg", "city=Paris"}, "\"[write_briefing:report]\"\n"},
        {"consensus", {"--arg", "notes=n", "--arg", "diag=d"}, "\"[assess:verdict]\"\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, ZGC_SOURCE_DIR "/examples/%s.zg", cases[i].file);
        char *text = slurp(path);
        int n = 0;
        while (n < 4 && cases[i].args[n]) n++;
        Ran r = mock_run(text, (char *const *)cases[i].args, n);
        cr_expect_eq(r.status, 0, "%s: stderr:\n%s", cases[i].file, r.err);
        cr_expect_str_eq(r.out, cases[i].want, "%s", cases[i].file);
        ran_free(&r);
        free(text);
    }
}

/* One run-time check: `expr` over inputs x and y (int) or f and g
 * (float) fails with `want` at the expression's location. */
static void check_trap(const char *expr, const char *x, const char *y, const char *want)
{
    char src[1024];
    bool flt = strchr(x, '.') != NULL;
    snprintf(src, sizeof src,
             "lifeline A;\n"
             "var r: %s = %s;\n"
             "workflow t(x: %s @ A, y: %s @ A) -> %s {\n"
             "    A: r = %s;\n"
             "    return r @ A;\n"
             "}\n",
             flt ? "float" : "int", flt ? "0.0" : "0", flt ? "float" : "int", flt ? "float" : "int",
             flt ? "float" : "int", expr);
    char ax[64], ay[64];
    snprintf(ax, sizeof ax, "x=%s", x);
    snprintf(ay, sizeof ay, "y=%s", y);
    char *args[] = {"--arg", ax, "--arg", ay};
    Ran r = mock_run(src, args, 4);
    cr_expect_eq(r.status, 1, "`%s` with x=%s y=%s: status %d, stdout %s", expr, x, y, r.status,
                 r.out);
    cr_expect(strstr(r.err, want), "`%s` with x=%s y=%s: expected `%s`, got:\n%s", expr, x, y, want,
              r.err);
    ran_free(&r);
}

Test(generated, run_time_checks_trap_with_a_location, .timeout = 300)
{
    check_trap("x + y", "9223372036854775807", "1", "test.zg:4:12: integer overflow in `+`");
    check_trap("x - y", "-9223372036854775807", "2", "test.zg:4:12: integer overflow in `-`");
    check_trap("x * y", "4611686018427387904", "2", "test.zg:4:12: integer overflow in `*`");
    check_trap("x / y", "1", "0", "test.zg:4:12: division by zero");
    check_trap("x % y", "1", "0", "test.zg:4:12: division by zero");
    check_trap("x / y", "-9223372036854775808", "-1", "test.zg:4:12: integer overflow in `/`");
    check_trap("-x + y", "-9223372036854775808", "0", "test.zg:4:12: integer overflow in `-`");
    check_trap("x * y", "1.0e300", "1.0e300", "test.zg:4:12: float result is not finite");
    check_trap("x / y", "1.0", "0.0", "test.zg:4:12: division by zero");
    check_trap("x % y", "1.0", "0.0", "test.zg:4:12: division by zero");
}

Test(generated, in_range_arithmetic_does_not_trap, .timeout = 120)
{
    static const char src[] = "lifeline A;\n"
                              "var r: int = 0;\n"
                              "workflow t(x: int @ A, y: int @ A) -> int {\n"
                              "    A: r = x * y + x / y - x % y;\n"
                              "    return r @ A;\n"
                              "}\n";
    char *args[] = {"--arg", "x=3037000499", "--arg", "y=3037000499"};
    Ran r = mock_run(src, args, 4);
    cr_expect_eq(r.status, 0, "stderr:\n%s", r.err);
    cr_expect_str_eq(r.out, "9223372030926249002\n");
    ran_free(&r);
    /* x % -1 is 0 for every x: INT64_MIN % -1 does not trap */
    static const char mod[] = "lifeline A;\n"
                              "var r: int = 1;\n"
                              "workflow t(x: int @ A, y: int @ A) -> int {\n"
                              "    A: r = x % y;\n"
                              "    return r @ A;\n"
                              "}\n";
    char *margs[] = {"--arg", "x=-9223372036854775808", "--arg", "y=-1"};
    r = mock_run(mod, margs, 4);
    cr_expect_eq(r.status, 0, "stderr:\n%s", r.err);
    cr_expect_str_eq(r.out, "0\n");
    ran_free(&r);
}

/* A plain guard is computed once per evaluation however often the guards
 * using it refer to it: 40 levels of guards each using the previous one
 * twice (pK), or the previous two both (aK, bK: each reads both, and each
 * is read by both above it), are 2^40 calls without it. */
Test(generated, guards_are_computed_once_per_evaluation, .timeout = 120)
{
    ZBuf b = {0};
    zu_buf_puts(&b, "lifeline A, B;\nvar x: int = 0;\nvar r: int = 0;\n"
                    "guard p0 = x > 0;\nguard a0 = x > 0;\nguard b0 = x < 0;\n");
    for (int k = 1; k <= 40; k++) {
        zu_buf_printf(&b, "guard p%d = p%d && p%d;\n", k, k - 1, k - 1);
        zu_buf_printf(&b, "guard a%d = a%d == b%d;\n", k, k - 1, k - 1);
        zu_buf_printf(&b, "guard b%d = a%d != b%d;\n", k, k - 1, k - 1);
    }
    /* x = 1: every pK holds, aK is false and bK true for K >= 1 */
    zu_buf_puts(&b, "workflow w() -> int {\n  A: x = 1;\n"
                    "  while r < 3 && p40 && b40 && !a40 @ A { A: r = r + 1; }\n"
                    "  return r @ A;\n}\n");
    Ran r = mock_run(b.data, NULL, 0);
    cr_expect_eq(r.status, 0, "stderr:\n%s", r.err);
    cr_expect_str_eq(r.out, "3\n");
    ran_free(&r);
    zu_buf_free(&b);
}
#endif

/* ------------------------------------------------------------------ */
/* the fingerprint                                                     */
/* ------------------------------------------------------------------ */

/* The descriptor's fingerprint: null until link.c has computed it, then
 * the same two strings in every descriptor of the build; the descriptor
 * the fingerprint covers (for_hash) has no source path. */
Test(backend, descriptor_carries_the_fingerprint)
{
    TComp *c = compile_ok("lifeline A, B;\nvar n: int = 0;\npure inc(t: int) -> int = t + 1;\n"
                          "workflow w() -> int {\n    A(n) -> B(n);\n    B: n = inc(n);\n"
                          "    return n @ B;\n}\n",
                          "hash.zg");
    LLVMContextRef lc = LLVMContextCreate();
    ZbGen *g = zb_gen_new(lc, &c->comp);
    for (int L = 0; L < 2; L++) {
        LLVMModuleRef m = zb_gen_module(g, "life");
        cr_assert(zb_gen_lifeline(g, m, m, L));
        LLVMDisposeModule(m);
    }
    enum { PF_SOURCE = 2 };
    LLVMModuleRef m = zb_gen_module(g, "prog");
    zb_gen_descriptor(g, m);
    LLVMValueRef init = LLVMGetInitializer(LLVMGetNamedGlobal(m, "zg.program"));
    cr_assert(LLVMIsNull(agg_elem(init, PF_FINGERPRINT)), "a fingerprint before there is one");
    cr_assert(LLVMIsNull(agg_elem(init, PF_FINGERPRINT_PARTS)));
    LLVMDisposeModule(m);

    g->fingerprint = "00ff";
    g->fingerprint_parts = "lifeline A 00\n";
    m = zb_gen_module(g, "prog");
    zb_gen_descriptor(g, m);
    verify_module(m);
    init = LLVMGetInitializer(LLVMGetNamedGlobal(m, "zg.program"));
    size_t n = 0;
    const char *fp = LLVMGetAsString(pointee(agg_elem(init, PF_FINGERPRINT)), &n);
    cr_assert_eq(n, 5, "fingerprint of %zu bytes", n);
    cr_assert_str_eq(fp, "00ff");
    const char *parts = LLVMGetAsString(pointee(agg_elem(init, PF_FINGERPRINT_PARTS)), &n);
    cr_assert_str_eq(parts, "lifeline A 00\n");
    LLVMDisposeModule(m);

    g->fingerprint = g->fingerprint_parts = NULL;
    g->for_hash = true;
    m = zb_gen_module(g, "prog");
    zb_gen_descriptor(g, m);
    verify_module(m);
    init = LLVMGetInitializer(LLVMGetNamedGlobal(m, "zg.program"));
    n = 0;
    LLVMGetAsString(pointee(agg_elem(init, PF_SOURCE)), &n);
    cr_assert_eq(n, 1, "the hashed descriptor names a source"); /* "" and its NUL */
    LLVMDisposeModule(m);
    LLVMContextDispose(lc);
    t_free(c);
}
