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

/* Generates every module of a build (one per lifeline, one descriptor per
 * executable), verifying each. */
static void gen_build_modules(TComp *c)
{
    LLVMContextRef lc = LLVMContextCreate();
    zb_install_diagnostics(lc);
    ZbGen *g = zb_gen_new(lc, &c->comp);
    int nl = c->comp.prog->lifelines.len;
    for (int L = 0; L < nl; L++) {
        LLVMModuleRef m = zb_gen_module(g, "life");
        cr_assert(zb_gen_lifeline(g, m, L), "lifeline %d: %s", L, c->diag_text ? c->diag_text : "");
        verify_module(m);
        LLVMDisposeModule(m);
    }
    for (int only = -1; only < nl; only++) {
        LLVMModuleRef m = zb_gen_module(g, "prog");
        zb_gen_descriptor(g, m, only);
        verify_module(m);
        cr_assert_not_null(LLVMGetNamedFunction(m, "main"));
        LLVMDisposeModule(m);
    }
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
    TComp *c = compile_ok(text, path);
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

Test(backend, examples_and_golden_programs_verify)
{
    const char *pats[] = {ZGC_SOURCE_DIR "/examples/*.zg", ZGC_SOURCE_DIR "/examples/*/*.zg",
                          ZGC_SOURCE_DIR "/tests/golden/*.zg", ZGC_SOURCE_DIR "/tests/run/*.zg"};
    int n = 0;
    for (size_t k = 0; k < sizeof pats / sizeof pats[0]; k++) {
        glob_t gl;
        if (glob(pats[k], 0, NULL, &gl) != 0) continue;
        for (size_t i = 0; i < gl.gl_pathc; i++, n++) check_file(gl.gl_pathv[i]);
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
    /* the choice returns the root subformula φ10 */
    cr_expect(strstr(ir, "call i32 @zgrt_choice_cpl(i8* %0, i32 0, i32 10,"));
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
    PF_NVIEWS = 27,
    PF_NVARVIEWS,
    PF_VIEWS,
    PF_VARVIEWS,
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

typedef struct Desc {
    int nlifelines, monitor, nsubs, nvars, nviews, nvarviews;
    Slot views[256], varviews[256];
    const char *var_names[256];
    bool has_eval[256]; /* evals[L] != NULL */
} Desc;

/* Reads the all-in-one descriptor of a compiled program. */
static void read_desc(TComp *c, Desc *d)
{
    memset(d, 0, sizeof *d);
    LLVMContextRef lc = LLVMContextCreate();
    ZbGen *g = zb_gen_new(lc, &c->comp);
    LLVMModuleRef m = zb_gen_module(g, "prog");
    zb_gen_descriptor(g, m, -1);
    LLVMValueRef init = LLVMGetInitializer(LLVMGetNamedGlobal(m, "zg.program"));
    cr_assert_not_null(init);
    cr_assert_eq(LLVMCountStructElementTypes(LLVMTypeOf(init)), (unsigned)PF__COUNT);
    d->nlifelines = (int)agg_int(init, PF_NLIFELINES);
    d->monitor = (int)agg_int(init, PF_MONITOR);
    d->nsubs = (int)agg_int(init, PF_NSUBS);
    d->nvars = (int)agg_int(init, PF_NVARS);
    d->nviews = (int)agg_int(init, PF_NVIEWS);
    d->nvarviews = (int)agg_int(init, PF_NVARVIEWS);
    cr_assert_leq(d->nviews, 256);
    cr_assert_leq(d->nvarviews, 256);
    cr_assert_leq(d->nvars, 256);
    cr_assert_leq(d->nlifelines, 256);
    LLVMValueRef t = pointee(agg_elem(init, PF_EVALS));
    for (int i = 0; i < d->nlifelines; i++) {
        LLVMValueRef e = agg_elem(t, i);
        d->has_eval[i] = e && !LLVMIsNull(e);
    }
    t = pointee(agg_elem(init, PF_VIEWS));
    cr_assert_eq(t != NULL, d->nviews > 0, "views: a table exactly when nviews > 0");
    for (int i = 0; i < d->nviews; i++)
        d->views[i] = (Slot){(int)agg_int(agg_elem(t, i), 0), (int)agg_int(agg_elem(t, i), 1)};
    t = pointee(agg_elem(init, PF_VARVIEWS));
    cr_assert_eq(t != NULL, d->nvarviews > 0, "varviews: a table exactly when nvarviews > 0");
    for (int i = 0; i < d->nvarviews; i++)
        d->varviews[i] = (Slot){(int)agg_int(agg_elem(t, i), 0), (int)agg_int(agg_elem(t, i), 1)};
    for (int i = 0; i < d->nvars; i++) {
        const ZDecl *v = ZU_VEC_AT(c->comp.prog->vars, i);
        d->var_names[i] = v->name;
    }
    LLVMDisposeModule(m);
    LLVMContextDispose(lc);
}

static int slot_cmp(const void *x, const void *y)
{
    const Slot *a = x, *b = y;
    return a->life != b->life ? (a->life > b->life) - (a->life < b->life)
                              : (a->index > b->index) - (a->index < b->index);
}

static int var_index(const TComp *c, const char *name)
{
    for (int i = 0; i < c->comp.prog->vars.len; i++)
        if (!strcmp(((const ZDecl *)ZU_VEC_AT(c->comp.prog->vars, i))->name, name)) return i;
    cr_assert_fail("no variable %s", name);
    return -1;
}

/* The descriptor's tables are the union of the guard table's bool views and
 * var views over all lifelines (what `zgc guards` prints), sorted by
 * (lifeline, index), without duplicates, every entry in range. */
static void check_slot_tables(TComp *c, const char *what)
{
    Desc d;
    read_desc(c, &d);
    Slot want_v[512], want_vv[512];
    int nv = 0, nvv = 0;
    for (int i = 0; c->comp.guards && i < c->comp.guards->monitors.len; i++) {
        const ZLifelineMonitor *m = ZU_VEC_AT(c->comp.guards->monitors, i);
        for (int k = 0; k < m->bool_views.len && nv < 512; k++) {
            const ZViewEntry *e = ZU_VEC_AT(m->bool_views, k);
            want_v[nv++] = (Slot){e->life, e->sub};
        }
        for (int k = 0; k < m->var_views.len && nvv < 512; k++) {
            const ZViewEntry *e = ZU_VEC_AT(m->var_views, k);
            want_vv[nvv++] = (Slot){e->life, var_index(c, e->var)};
        }
    }
    qsort(want_v, (size_t)nv, sizeof *want_v, slot_cmp);
    qsort(want_vv, (size_t)nvv, sizeof *want_vv, slot_cmp);
    int k = 0;
    for (int i = 0; i < nv; i++)
        if (i == 0 || slot_cmp(&want_v[i], &want_v[k - 1])) want_v[k++] = want_v[i];
    nv = k;
    k = 0;
    for (int i = 0; i < nvv; i++)
        if (i == 0 || slot_cmp(&want_vv[i], &want_vv[k - 1])) want_vv[k++] = want_vv[i];
    nvv = k;
    cr_assert_eq(d.nviews, nv, "%s: %d view slots, the guard tables have %d", what, d.nviews, nv);
    cr_assert_eq(d.nvarviews, nvv, "%s: %d variable-view slots, the guard tables have %d", what,
                 d.nvarviews, nvv);
    int nl = c->comp.prog->lifelines.len;
    for (int i = 0; i < nv; i++) {
        cr_expect(!slot_cmp(&d.views[i], &want_v[i]),
                  "%s: view slot %d is (%d, %d), expected (%d, %d)", what, i, d.views[i].life,
                  d.views[i].index, want_v[i].life, want_v[i].index);
        cr_expect(d.views[i].life >= 0 && d.views[i].life < nl && d.views[i].index >= 0 &&
                      d.views[i].index < d.nsubs,
                  "%s: view slot %d out of range", what, i);
        if (i)
            cr_expect_lt(slot_cmp(&d.views[i - 1], &d.views[i]), 0, "%s: views not sorted", what);
    }
    for (int i = 0; i < nvv; i++) {
        cr_expect(!slot_cmp(&d.varviews[i], &want_vv[i]),
                  "%s: variable-view slot %d is (%d, %d), expected (%d, %d)", what, i,
                  d.varviews[i].life, d.varviews[i].index, want_vv[i].life, want_vv[i].index);
        cr_expect(d.varviews[i].life >= 0 && d.varviews[i].life < nl && d.varviews[i].index >= 0 &&
                      d.varviews[i].index < d.nvars,
                  "%s: variable-view slot %d out of range", what, i);
        if (i)
            cr_expect_lt(slot_cmp(&d.varviews[i - 1], &d.varviews[i]), 0, "%s: varviews not sorted",
                         what);
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

Test(backend, merge_descriptor_has_the_slot_tables)
{
    char *text = slurp(ZGC_SOURCE_DIR "/examples/merge.zg");
    TComp *c = compile_ok(text, "merge.zg");
    /* zgc guards examples/merge.zg: bool views view(TestRunner, φ2)
     * view(Security, φ8), var views var(TestRunner, candidate)
     * var(Security, candidate), on every lifeline */
    Desc d;
    read_desc(c, &d);
    cr_assert_eq(d.nsubs, 11);
    cr_assert_eq(d.nviews, 2);
    cr_expect(d.views[0].life == 1 && d.views[0].index == 2, "(%d, %d)", d.views[0].life,
              d.views[0].index);
    cr_expect(d.views[1].life == 2 && d.views[1].index == 8, "(%d, %d)", d.views[1].life,
              d.views[1].index);
    cr_assert_eq(d.nvarviews, 2);
    for (int i = 0; i < 2; i++) {
        cr_expect_eq(d.varviews[i].life, i + 1);
        cr_expect_str_eq(d.var_names[d.varviews[i].index], "candidate");
    }
    check_slot_tables(c, "merge.zg");
    /* the Committer's eval function reads the slots, not φ / the variable */
    LLVMContextRef lc = LLVMContextCreate();
    ZbGen *g = zb_gen_new(lc, &c->comp);
    LLVMModuleRef m = zb_gen_module(g, "life");
    cr_assert(zb_gen_lifeline(g, m, 3));
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
    t_free(c);
    free(text);
}

/* Every program: the tables are the union of the guard tables, and every
 * zgrt_view / zgrt_varview call of every eval function names a slot of
 * its lifeline (a missing one is an internal compiler error). */
static void check_file_slots(const char *path)
{
    char *text = slurp(path);
    TComp *c = compile_ok(text, path);
    check_slot_tables(c, path);
    Desc d;
    read_desc(c, &d);
    LLVMContextRef lc = LLVMContextCreate();
    ZbGen *g = zb_gen_new(lc, &c->comp);
    for (int L = 0; L < c->comp.prog->lifelines.len; L++) {
        LLVMModuleRef m = zb_gen_module(g, "life");
        cr_assert(zb_gen_lifeline(g, m, L));
        char fname[300];
        snprintf(fname, sizeof fname, "zg.eval.%s",
                 ((const ZDecl *)ZU_VEC_AT(c->comp.prog->lifelines, L))->name);
        Slot calls[256];
        int n = rt_calls(m, fname, "zgrt_view", calls, 256);
        for (int i = 0; i < n; i++) {
            int s = calls[i].index;
            cr_expect(s >= 0 && s < d.nviews && d.views[s].life == calls[i].life &&
                          calls[i].life != L,
                      "%s: %s reads view slot %d of lifeline %d", path, fname, s, calls[i].life);
        }
        n = rt_calls(m, fname, "zgrt_varview", calls, 256);
        for (int i = 0; i < n; i++) {
            int s = calls[i].index;
            cr_expect(s >= 0 && s < d.nvarviews && d.varviews[s].life == calls[i].life &&
                          calls[i].life != L,
                      "%s: %s reads variable-view slot %d of lifeline %d", path, fname, s,
                      calls[i].life);
        }
        LLVMDisposeModule(m);
    }
    LLVMContextDispose(lc);
    t_free(c);
    free(text);
}

Test(backend, every_program_has_the_union_slot_tables)
{
    const char *pats[] = {ZGC_SOURCE_DIR "/examples/*.zg", ZGC_SOURCE_DIR "/examples/*/*.zg",
                          ZGC_SOURCE_DIR "/tests/golden/*.zg", ZGC_SOURCE_DIR "/tests/run/*.zg"};
    int n = 0;
    for (size_t k = 0; k < sizeof pats / sizeof pats[0]; k++) {
        glob_t gl;
        if (glob(pats[k], 0, NULL, &gl) != 0) continue;
        for (size_t i = 0; i < gl.gl_pathc; i++, n++) check_file_slots(gl.gl_pathv[i]);
        globfree(&gl);
    }
    cr_assert_geq(n, 13, "only %d programs found", n);
}

/* The descriptor is the monitor plan (compiler/plan.c), and `zgc guards
 * --plan` prints what the descriptor holds: the slot tables, each
 * lifeline's slots as the runtime finds them (runtime/core.c: the first
 * slot whose lifeline is not before B), its eval function, the state every
 * lifeline keeps and the metadata of a message. */
static void check_plan(TComp *c, const char *what)
{
    Desc d;
    read_desc(c, &d);
    const ZMonitorPlan *pl = c->comp.plan;
    int nl = d.nlifelines;
    cr_assert_eq(pl->nlifelines, nl, "%s: %d lifelines in the plan, %d in the descriptor", what,
                 pl->nlifelines, nl);
    cr_expect_eq(pl->monitor, d.monitor != 0, "%s: monitor", what);
    cr_expect_eq(pl->nsubs, d.nsubs, "%s: nsubs", what);
    cr_assert_eq(pl->nviews, d.nviews, "%s: %d view slots planned, %d emitted", what, pl->nviews,
                 d.nviews);
    cr_assert_eq(pl->nvarviews, d.nvarviews, "%s: %d variable-view slots planned, %d emitted", what,
                 pl->nvarviews, d.nvarviews);
    for (int i = 0; i < d.nviews; i++)
        cr_expect(pl->views[i].life == d.views[i].life && pl->views[i].index == d.views[i].index,
                  "%s: view slot %d", what, i);
    for (int i = 0; i < d.nvarviews; i++)
        cr_expect(pl->varviews[i].life == d.varviews[i].life &&
                      pl->varviews[i].index == d.varviews[i].index,
                  "%s: variable-view slot %d", what, i);
    size_t state = 8 * (size_t)nl;
    if (d.monitor) state += 2 * (size_t)d.nsubs + (size_t)d.nviews + 16 * (size_t)d.nvarviews;
    size_t message = 8 * (size_t)nl + (size_t)d.nviews + 16 * (size_t)d.nvarviews;
    cr_expect_eq(pl->message_bytes, message, "%s: message metadata %zu B, expected %zu B", what,
                 pl->message_bytes, message);
    for (int b = 0, s = 0, t = 0; b <= nl; b++) {
        while (s < d.nviews && d.views[s].life < b) s++;
        while (t < d.nvarviews && d.varviews[t].life < b) t++;
        if (b > 0) {
            cr_expect_eq(pl->lifelines[b - 1].views_end, s, "%s: end of the view slots of %d", what,
                         b - 1);
            cr_expect_eq(pl->lifelines[b - 1].varviews_end, t,
                         "%s: end of the variable-view slots of %d", what, b - 1);
        }
        if (b == nl) break;
        const ZPlanLifeline *pll = &pl->lifelines[b];
        cr_expect_eq(pll->views_first, s, "%s: first view slot of %d", what, b);
        cr_expect_eq(pll->varviews_first, t, "%s: first variable-view slot of %d", what, b);
        cr_expect_eq(zm_has_eval(pl, b), d.has_eval[b], "%s: eval function of %d", what, b);
        cr_expect_eq(pll->state_bytes, state, "%s: state of %d", what, b);
    }

    /* the printed plan */
    T_CAPTURE(text, zm_print(out, pl));
    char want[512];
    const ZProgram *p = c->comp.prog;
    snprintf(want, sizeof want, "\nview slots: %d\n", d.nviews);
    cr_expect(strstr(text, want), "%s: no `%s` in\n%s", what, want, text);
    for (int i = 0; i < d.nviews; i++) {
        const ZDecl *l = ZU_VEC_AT(p->lifelines, d.views[i].life);
        snprintf(want, sizeof want, "\n  %-3d view(%s, φ%d)  ", i, l->name, d.views[i].index);
        cr_expect(strstr(text, want), "%s: no `%s` in\n%s", what, want, text);
    }
    snprintf(want, sizeof want, "\nvariable-view slots: %d\n", d.nvarviews);
    cr_expect(strstr(text, want), "%s: no `%s` in\n%s", what, want, text);
    for (int i = 0; i < d.nvarviews; i++) {
        const ZDecl *l = ZU_VEC_AT(p->lifelines, d.varviews[i].life);
        snprintf(want, sizeof want, "\n  %-3d var(%s, %s)\n", i, l->name,
                 d.var_names[d.varviews[i].index]);
        cr_expect(strstr(text, want), "%s: no `%s` in\n%s", what, want, text);
    }
    for (int b = 0; b < nl; b++) {
        const ZDecl *l = ZU_VEC_AT(p->lifelines, b);
        snprintf(want, sizeof want, "\nlifeline %s\n  eval function: %s", l->name,
                 d.has_eval[b] ? "φ" : "none\n");
        const char *block = strstr(text, want);
        cr_expect(block, "%s: no `%s` in\n%s", what, want, text);
        if (!block) continue;
        snprintf(want, sizeof want, " = %zu B\n", state);
        const char *st = strstr(block, "\n  state: ");
        cr_expect(st && strstr(st, want) && strstr(st, want) < strstr(st + 1, "\n\n"),
                  "%s: lifeline %s: no state of %zu B in\n%s", what, l->name, state, text);
    }
    snprintf(want, sizeof want, "\nmessage metadata: vc %d × 8 B", nl);
    const char *msg = strstr(text, want);
    cr_expect(msg, "%s: no `%s` in\n%s", what, want, text);
    snprintf(want, sizeof want, " = %zu B, ", message);
    cr_expect(msg && strstr(msg, want), "%s: no message metadata of %zu B in\n%s", what, message,
              text);
    free(text);
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
            char *text = slurp(gl.gl_pathv[i]);
            TComp *c = compile_ok(text, gl.gl_pathv[i]);
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
    /* docs/runtime.md, "Monitor metadata": merge.zg's messages carry
     * 32 + 2 + 32 = 66 bytes; TestRunner and Security export one view and
     * one variable view each */
    char *text = slurp(ZGC_SOURCE_DIR "/examples/merge.zg");
    TComp *c = compile_ok(text, "merge.zg");
    const ZMonitorPlan *pl = c->comp.plan;
    cr_expect_eq(pl->message_bytes, 66u);
    cr_assert_eq(pl->nlifelines, 4);
    int first[4] = {0, 0, 1, 2}, end[4] = {0, 1, 2, 2};
    for (int b = 0; b < 4; b++) {
        cr_expect_eq(pl->lifelines[b].views_first, first[b], "lifeline %d", b);
        cr_expect_eq(pl->lifelines[b].views_end, end[b], "lifeline %d", b);
        cr_expect_eq(pl->lifelines[b].varviews_first, first[b], "lifeline %d", b);
        cr_expect_eq(pl->lifelines[b].varviews_end, end[b], "lifeline %d", b);
    }
    cr_expect_eq(zm_view_slot(pl, 2, 8), 1);
    cr_expect_eq(zm_view_slot(pl, 2, 2), -1);
    cr_expect_not(zm_has_eval(pl, 0), "the Orchestrator evaluates nothing");
    cr_expect(zm_has_eval(pl, 3));
    t_free(c);
    free(text);
}

/* @B(…) and @B.x where B never reaches the evaluating lifeline: constantly
 * false / undefined, no view, no slot. */
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
    Desc d;
    read_desc(c, &d);
    cr_expect_eq(d.nviews, 0);
    cr_expect_eq(d.nvarviews, 0);
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
    size_t offs[32];
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
     2,
     {OFF(zgrt_loc, line), OFF(zgrt_loc, col)}},
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
     20,
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
      OFF(zgrt_action, fn)}},
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
    {ZB_TY_PROGRAM,
     "zgrt_program",
     sizeof(zgrt_program),
     _Alignof(zgrt_program),
     31,
     {OFF(zgrt_program, abi_version), OFF(zgrt_program, nlifelines),
      OFF(zgrt_program, source),      OFF(zgrt_program, workflow),
      OFF(zgrt_program, lifelines),   OFF(zgrt_program, bodies),
      OFF(zgrt_program, evals),       OFF(zgrt_program, nvars),
      OFF(zgrt_program, nenums),      OFF(zgrt_program, vars),
      OFF(zgrt_program, enums),       OFF(zgrt_program, nchans),
      OFF(zgrt_program, ntags),       OFF(zgrt_program, chans),
      OFF(zgrt_program, tags),        OFF(zgrt_program, nlocs),
      OFF(zgrt_program, nactions),    OFF(zgrt_program, locs),
      OFF(zgrt_program, actions),     OFF(zgrt_program, ninputs),
      OFF(zgrt_program, nresults),    OFF(zgrt_program, inputs),
      OFF(zgrt_program, results),     OFF(zgrt_program, result_tuple),
      OFF(zgrt_program, monitor),     OFF(zgrt_program, nsubs),
      OFF(zgrt_program, pad),         OFF(zgrt_program, nviews),
      OFF(zgrt_program, nvarviews),   OFF(zgrt_program, views),
      OFF(zgrt_program, varviews)}},
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
    cr_assert(zb_gen_lifeline(g, m, 0));
    zb_verify(m);
    cr_assert_eq(zb_target_emit(t, m, path, &err), 0, "%s", err ? err : "");
    LLVMDisposeModule(m);
    FILE *fp = fopen(path, "rb");
    cr_assert_not_null(fp);
    unsigned char magic[4] = {0};
    cr_assert_eq(fread(magic, 1, 4, fp), 4u);
    fclose(fp);
    cr_expect(magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F');
    /* a bad path is an error, not a crash */
    m = zb_gen_module(g, "b");
    zb_gen_descriptor(g, m, -1);
    cr_expect_neq(zb_target_emit(t, m, "/nonexistent-dir/x.o", &err), 0);
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
    TComp *c = compile_ok(text, path);
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
    cr_expect_str_eq(r.out, "[-11, -199, 7.25, \"ab-7AB\", true, \"big\"]\n");
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
    check_trap("x % y", "-9223372036854775808", "-1", "test.zg:4:12: integer overflow in `%`");
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
}
#endif
