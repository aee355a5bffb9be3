/* planner.c — zpl_act: a planner's call, from the model's answer to the
 * nested run of the workflow it wrote (planner.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>

#include "backend.h"
#include "grammar.h"
#include "planner.h"
#include "zgrt_nested.h"

/* The compiler and the code generator are not run by two planners at
 * once (their tables are per compilation, but LLVM's target set-up and
 * the compiler's search path are per process); the nested runs are. */
static pthread_mutex_t compile_mu = PTHREAD_MUTEX_INITIALIZER;

/* ---- the planner's declaration ---------------------------------------- */

static void names_of(ZArena *a, const ZDecl *d, ZPropKey k, ZVec *out)
{
    const ZProp *pr = za_prop(d, k);
    *out = (ZVec){0};
    if (!pr) return;
    if (pr->value->kind == E_NAME && pr->value->name) {
        zu_vec_push(a, out, (void *)pr->value->name);
        return;
    }
    for (int i = 0; pr->value->kind == E_TUPLE && i < pr->value->args.len; i++) {
        const ZExpr *e = pr->value->args.items[i];
        if (e->kind == E_NAME && e->name) zu_vec_push(a, out, (void *)e->name);
    }
}

static long int_prop(const ZDecl *d, ZPropKey k, long dflt)
{
    const ZProp *pr = za_prop(d, k);
    return pr && pr->value->kind == E_INT && pr->value->lit.i > 0 ? (long)pr->value->lit.i : dflt;
}

static const char *str_prop(const ZDecl *d, ZPropKey k)
{
    const ZProp *pr = za_prop(d, k);
    return pr && pr->value->kind == E_STR ? pr->value->lit.s : NULL;
}

static int read_spec(ZArena *a, const ZProgram *p, const char *name, const char *owner, ZplSpec *s)
{
    memset(s, 0, sizeof *s);
    for (int i = 0; i < p->decls.len && !s->decl; i++) {
        const ZDecl *d = p->decls.items[i];
        if (d->kind == D_ACTION && d->action == ACT_PLANNER && strcmp(d->name, name) == 0)
            s->decl = d;
    }
    if (!s->decl) return -1;
    s->owner = owner;
    names_of(a, s->decl, PROP_WORKERS, &s->workers);
    names_of(a, s->decl, PROP_ACTIONS, &s->actions);
    const ZProp *al = za_prop(s->decl, PROP_ALLOW);
    if (al) {
        ZVec items = {0};
        if (al->value->kind == E_TUPLE)
            items = al->value->args;
        else
            zu_vec_push(a, &items, al->value);
        for (int i = 0; i < items.len; i++) {
            const ZExpr *e = items.items[i];
            if (e->kind != E_STR) continue;
            s->allow_llm |= strcmp(e->lit.s, "llm") == 0;
            s->allow_pure |= strcmp(e->lit.s, "pure") == 0;
            s->allow_if |= strcmp(e->lit.s, "if") == 0;
            s->allow_while |= strcmp(e->lit.s, "while") == 0;
        }
    }
    s->max_statements = int_prop(s->decl, PROP_MAX_STATEMENTS, ZV_PLANNER_MAX_STATEMENTS);
    s->max_iterations = int_prop(s->decl, PROP_MAX_ITERATIONS, ZV_PLANNER_MAX_ITERATIONS);
    s->timeout = int_prop(s->decl, PROP_TIMEOUT, ZV_PLANNER_TIMEOUT);
    s->retries = 3;
    const ZProp *r = za_prop(s->decl, PROP_RETRIES);
    if (r && r->value->kind == E_INT) s->retries = (int)r->value->lit.i;
    if (r && r->value->kind == E_NAME && r->value->name &&
        strcmp(r->value->name, ZV_RETRIES_FOREVER) == 0)
        s->retries = -1;
    return 0;
}

/* ---- the prompt ------------------------------------------------------- */

/* An input value as `--arg` text: a str as is, an enum member by name,
 * others in their literal syntax. */
static char *arg_text(zgrt_call *call, int i, const ZParam *p, const ZProgram *prog)
{
    const zgrt_value *v = zgrt_arg(call, i);
    char *out = NULL;
    switch (v->tag) {
    case ZGRT_STR: return strdup(v->u.s->data);
    case ZGRT_INT:
        if (asprintf(&out, "%" PRId64, v->u.i) < 0) out = NULL;
        return out;
    case ZGRT_FLOAT:
        if (asprintf(&out, "%.17g", v->u.f) < 0) out = NULL;
        return out;
    case ZGRT_BOOL: return strdup(v->u.i ? "true" : "false");
    case ZGRT_JSON: return strdup(zgrt_arg_json(call, i));
    case ZGRT_ENUM: {
        int m = (int)(v->u.i & 0xffffffff);
        const ZDecl *e = p->type && p->type->name ? zr_lookup(prog, p->type->name) : NULL;
        if (e && e->kind == D_ENUM && m >= 0 && m < e->members.len) {
            const ZParam *mp = e->members.items[m];
            return strdup(mp->name);
        }
        return strdup("?");
    }
    default: return strdup("");
    }
}

static void prompt_system(ZBuf *b, const ZplSpec *s, const char *decls, ZArena *a)
{
    const ZDecl *d = s->decl;
    zu_buf_printf(b, "You write workflows in the .zg language, for the planner `%s`.\n\n", d->name);
    zu_buf_printf(b, "Task: %s\n\n",
                  str_prop(d, PROP_DESCRIPTION) ? str_prop(d, PROP_DESCRIPTION) : "");
    zu_buf_printf(b,
                  "Lifelines (already declared, declare none): %s, the owner, who has the "
                  "inputs and must get the result; and the workers",
                  s->owner);
    for (int i = 0; i < s->workers.len; i++)
        zu_buf_printf(b, "%s %s", i ? "," : "", (const char *)s->workers.items[i]);
    zu_buf_puts(b, ". Use as many workers as is reasonable.\n\n");
    zu_buf_puts(b, "Write exactly one workflow, `workflow plan(");
    for (int i = 0; i < d->params.len; i++) {
        const ZParam *p = d->params.items[i];
        zu_buf_printf(b, "%s%s: %s @ %s", i ? ", " : "", p->name, za_type_name(a, p->type),
                      s->owner);
    }
    zu_buf_puts(b, ") -> ");
    if (d->results.len > 1) zu_buf_puts(b, "(");
    for (int i = 0; i < d->results.len; i++) {
        const ZParam *p = d->results.items[i];
        zu_buf_printf(b, "%s%s", i ? ", " : "", za_type_name(a, p->type));
    }
    if (d->results.len > 1) zu_buf_puts(b, ")");
    zu_buf_printf(b,
                  " { … }`, with a `var NAME: TYPE;` declaration for every other variable. "
                  "It must end with a worker sending the result to %s, then `return` of it "
                  "at %s, as in:\n    W(r) -> %s(r);\n    return r @ %s;\n\n",
                  s->owner, s->owner, s->owner, s->owner);
    zu_buf_puts(b, "Actions you may call (already declared, do not declare them again):\n");
    zu_buf_puts(b, s->actions.len ? decls : "(none)\n");
    zu_buf_printf(b,
                  "\nYou may%s define llm actions, may%s define pure actions, may%s use `if`, "
                  "may%s use `while`; `parallel`, fragments, imports and other action kinds "
                  "are not allowed. At most %ld statements.\n",
                  s->allow_llm ? "" : " not", s->allow_pure ? "" : " not",
                  s->allow_if ? "" : " not", s->allow_while ? "" : " not", s->max_statements);
    const char *ins = str_prop(d, PROP_INSTRUCTIONS);
    if (ins) zu_buf_printf(b, "\nInstructions: %s\n", ins);
    zu_buf_puts(b, "\nAnswer with the .zg text only. The grammar of the language (bison rules, "
                   "keywords in quotes):\n");
    zu_buf_puts(b, zpl_grammar);
}

/* The answer without a Markdown fence around it. */
static char *unfence(const char *ans)
{
    const char *s = strstr(ans, "```");
    if (!s) return strdup(ans);
    s = strchr(s, '\n');
    if (!s) return strdup(ans);
    s++;
    const char *e = strstr(s, "```");
    return strndup(s, e ? (size_t)(e - s) : strlen(s));
}

static int count_lines(const char *s)
{
    int n = 1;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* ---- the JIT ---------------------------------------------------------- */

static pthread_once_t native_once = PTHREAD_ONCE_INIT;
static void native_init(void)
{
    LLVMInitializeNativeTarget();
    LLVMInitializeNativeAsmPrinter();
}

typedef struct Jit {
    LLVMOrcLLJITRef jit;
    const zgrt_program *prog;
} Jit;

static void jit_error(LLVMErrorRef e, char *err, size_t errlen, const char *what)
{
    char *m = LLVMGetErrorMessage(e);
    snprintf(err, errlen, "%s: %s", what, m);
    LLVMDisposeErrorMessage(m);
}

static int jit_load(Jit *j, LLVMOrcThreadSafeContextRef tsc, LLVMModuleRef m, char *err,
                    size_t errlen)
{
    LLVMErrorRef e = LLVMOrcCreateLLJIT(&j->jit, NULL);
    if (e) {
        LLVMDisposeModule(m);
        jit_error(e, err, errlen, "cannot start the JIT");
        return -1;
    }
    LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(j->jit);
    /* the runtime's functions (not exported by the executable) and this
     * library's entry, for the planners of the generated program */
    int n = 0;
    const zgrt_symbol *rt = zgrt_abi_symbols(&n);
    LLVMJITCSymbolMapPair *syms = calloc((size_t)n + 1, sizeof *syms);
    if (!syms) {
        LLVMDisposeModule(m);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i <= n; i++) {
        const char *nm = i < n ? rt[i].name : ZB_PLANNER_ENTRY;
        void *addr = i < n ? rt[i].addr : (void *)(uintptr_t)&zpl_act;
        syms[i].Name = LLVMOrcLLJITMangleAndIntern(j->jit, nm);
        syms[i].Sym.Address = (LLVMOrcExecutorAddress)(uintptr_t)addr;
        syms[i].Sym.Flags.GenericFlags =
            LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable;
        syms[i].Sym.Flags.TargetFlags = 0;
    }
    e = LLVMOrcJITDylibDefine(jd, LLVMOrcAbsoluteSymbols(syms, (size_t)n + 1));
    free(syms);
    LLVMOrcDefinitionGeneratorRef gen = NULL;
    if (!e)
        e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
            &gen, LLVMOrcLLJITGetGlobalPrefix(j->jit), NULL, NULL);
    if (e) {
        LLVMDisposeModule(m);
        jit_error(e, err, errlen, "cannot set up the JIT");
        return -1;
    }
    LLVMOrcJITDylibAddGenerator(jd, gen);
    LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(m, tsc);
    e = LLVMOrcLLJITAddLLVMIRModule(j->jit, jd, tsm);
    if (e) {
        LLVMOrcDisposeThreadSafeModule(tsm);
        jit_error(e, err, errlen, "cannot add the generated module");
        return -1;
    }
    LLVMOrcExecutorAddress addr = 0;
    e = LLVMOrcLLJITLookup(j->jit, &addr, "zg.program");
    if (e) {
        jit_error(e, err, errlen, "cannot compile the generated program");
        return -1;
    }
    j->prog = (const zgrt_program *)(uintptr_t)addr;
    return 0;
}

/* ---- one attempt ------------------------------------------------------ */

/* A generated workflow reads no file: its imports are refused before
 * anything is read (validate.c says why in its own words too). */
static char *no_import(void *user, const char *path, size_t *len, char **key, const char **err,
                       bool *missing)
{
    (void)user, (void)path, (void)len, (void)key;
    *missing = false;
    *err = "a planner's workflow may not import files";
    return NULL;
}

/* Compiles the answer; 0 with the program loaded into j, 1 with the
 * diagnostics for the model in *diags (malloc'd), -1 with err. */
static int compile(const ZplSpec *s, const char *answer, const char *prefix, Jit *j, char **diags,
                   char **source, char *err, size_t errlen)
{
    ZBuf src = {0};
    zu_buf_puts(&src, answer);
    zu_buf_puts(&src, "\n\n// given: the lifelines and the declarations of the planner\nlifeline ");
    zu_buf_puts(&src, s->owner);
    for (int i = 0; i < s->workers.len; i++)
        zu_buf_printf(&src, ", %s", (const char *)s->workers.items[i]);
    zu_buf_puts(&src, ";\n");
    zu_buf_puts(&src, prefix);
    char *dtext = NULL;
    size_t dlen = 0;
    FILE *dout = open_memstream(&dtext, &dlen);
    if (!dout) {
        zu_buf_free(&src);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    ZCompilation c;
    zc_init(&c, zp_parse, "plan.zg", src.data, src.len, dout);
    c.load = no_import;
    *source = src.data; /* the caller's */
    int rc = 0;
    if (!zc_run(&c, ZC_PLAN) || zpl_validate(&c, s, count_lines(answer)) > 0) {
        rc = 1;
    } else {
        pthread_once(&native_once, native_init);
        LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
        LLVMModuleRef m = zb_gen_whole(LLVMOrcThreadSafeContextGetContext(tsc), &c);
        if (!m) {
            rc = 1;
        } else if (jit_load(j, tsc, m, err, errlen) != 0) {
            rc = -1;
        }
        LLVMOrcDisposeThreadSafeContext(tsc);
    }
    zc_free(&c);
    fclose(dout);
    *diags = dtext;
    return rc;
}

int zpl_act(zgrt_call *call)
{
    const char *name = zgrt_call_action(call);
    const char *owner = zgrt_call_lifeline(call);
    const char *ctx = zgrt_call_plan(call);
    if (!ctx) return zgrt_fail(call, "planner `%s` has no context", name);
    const char *mark = strstr(ctx, ZA_PLANNER_MARK);
    if (!mark) return zgrt_fail(call, "planner `%s`: malformed context", name);
    char *prefix = strndup(ctx, (size_t)(mark - ctx));

    /* the declarations, parsed (the planner's properties and the
     * vocabulary's text) */
    FILE *null_out = fopen("/dev/null", "w");
    ZCompilation pc;
    zc_init(&pc, zp_parse, "planner", ctx, strlen(ctx), null_out ? null_out : stderr);
    zc_run(&pc, ZC_PARSE);
    ZplSpec s;
    int rc = -1;
    char err[1024] = "";
    ZBuf sys = {0}, user = {0}, vocab = {0};
    char **argv_names = NULL, **argv_values = NULL;
    int nargs = 0;
    if (!pc.prog || read_spec(pc.arena, pc.prog, name, owner, &s) != 0) {
        zgrt_fail(call, "planner `%s`: its declaration cannot be read", name);
        goto out;
    }
    for (int i = 0; i < s.actions.len; i++) {
        const ZDecl *d = zr_lookup(pc.prog, s.actions.items[i]);
        const char *t = d ? za_span_text(pc.arena, &pc.files, d->span) : NULL;
        if (t) zu_buf_printf(&vocab, "%s\n", t);
    }
    prompt_system(&sys, &s, vocab.data ? vocab.data : "", pc.arena);
    nargs = s.decl->params.len;
    argv_names = calloc((size_t)nargs + 1, sizeof *argv_names);
    argv_values = calloc((size_t)nargs + 1, sizeof *argv_values);
    zu_buf_puts(&user, "The inputs:\n");
    for (int i = 0; i < nargs; i++) {
        const ZParam *p = s.decl->params.items[i];
        argv_names[i] = strdup(p->name);
        argv_values[i] = arg_text(call, i, p, pc.prog);
        zu_buf_printf(&user, "  %s: %s = %s\n", p->name, za_type_name(pc.arena, p->type),
                      argv_values[i] ? argv_values[i] : "");
    }
    zu_buf_puts(&user, "\nWrite the workflow.");

    ZBuf ask = {0};
    zu_buf_puts(&ask, user.data);
    char *last = NULL;
    for (int attempt = 1;; attempt++) {
        char *raw = NULL;
        if (zgrt_call_model(call, sys.data, ask.data, &raw, err, sizeof err) != 0) {
            zgrt_fail(call, "planner `%s`: %s", name, err);
            break;
        }
        char *answer = unfence(raw);
        free(raw);
        Jit j = {0};
        char *diags = NULL, *source = NULL;
        pthread_mutex_lock(&compile_mu);
        int c = compile(&s, answer, prefix, &j, &diags, &source, err, sizeof err);
        pthread_mutex_unlock(&compile_mu);
        if (c < 0) {
            zgrt_fail(call, "planner `%s`: %s", name, err);
            free(answer);
            free(diags);
            free(source);
            if (j.jit) LLVMOrcDisposeLLJIT(j.jit);
            break;
        }
        if (c == 0) {
            zgrt_subrun o = {nargs,
                             (const char *const *)argv_names,
                             (const char *const *)argv_values,
                             source,
                             (double)s.timeout,
                             s.max_iterations};
            if (zgrt_call_subrun(call, j.prog, &o, err, sizeof err) == 0)
                rc = 0;
            else
                zgrt_fail(call, "planner `%s`: %s", name, err);
            LLVMOrcDisposeLLJIT(j.jit);
            free(answer);
            free(diags);
            free(source);
            break;
        }
        free(source);
        free(last);
        last = diags;
        if (s.retries >= 0 && attempt > s.retries) {
            zgrt_fail(call,
                      "planner `%s`: no valid workflow in %d attempt%s; the last one's "
                      "errors:\n%s",
                      name, attempt, attempt == 1 ? "" : "s", last ? last : "");
            free(answer);
            break;
        }
        zu_buf_free(&ask);
        ask = (ZBuf){0};
        zu_buf_printf(&ask,
                      "%s\n\nYour previous answer was:\n%s\n\nIt was rejected:\n%s\n"
                      "Write the corrected workflow.",
                      user.data, answer, last ? last : "");
        free(answer);
    }
    free(last);
    zu_buf_free(&ask);
out:
    for (int i = 0; i < nargs && argv_names; i++) {
        free(argv_names[i]);
        free(argv_values[i]);
    }
    free(argv_names);
    free(argv_values);
    zu_buf_free(&sys);
    zu_buf_free(&user);
    zu_buf_free(&vocab);
    zc_free(&pc);
    if (null_out) fclose(null_out);
    free(prefix);
    return rc;
}
