/* descriptor.c — the program descriptor and `main` to LLVM IR.
 *
 * Descriptor.  The zgrt_program constant (zg.program) mirrors the C
 * structs of runtime/zgrt_abi.h field by field (types.c): lifelines,
 * bodies and eval functions, variables, enums, channels, construct tags,
 * source locations, actions, inputs and results, and the monitor's slot
 * tables as the monitor plan gives them (compiler/plan.c).  Action kinds,
 * parse modes and human kinds are coded from the vocabulary
 * (vocab/vocab.h) into the runtime's numbers (ZGRT_ACT_*, ZGRT_PARSE_*,
 * ZGRT_HUMAN_*).  The program's fingerprint (link.c) goes in too.
 * `main` calls zgrt_main with the descriptor.
 */
#include <string.h>

#include "gen.h"

/* ------------------------------------------------------------------ */
/* the vocabulary in the runtime's numbers                             */
/* ------------------------------------------------------------------ */

/* ZActionKind -> zgrt_action_kind (ZV_ACTION_KINDS). */
#define ACT_CODE(id, name) [ACT_##id] = ZGRT_ACT_##id,
static const int action_codes[ACT__COUNT] = {ZV_ACTION_KINDS(ACT_CODE)};
#undef ACT_CODE

/* `parse = …` and `kind = …` values -> zgrt_parse, zgrt_human_kind. */
typedef struct NameCode {
    const char *name;
    int code;
} NameCode;
#define PARSE_CODE(id, name, type) {name, ZGRT_PARSE_##id},
static const NameCode parse_codes[] = {ZV_PARSE_MODES(PARSE_CODE){NULL, 0}};
#undef PARSE_CODE
#define HUMAN_CODE(id, name) {name, ZGRT_HUMAN_##id},
static const NameCode human_codes[] = {ZV_HUMAN_KINDS(HUMAN_CODE){NULL, 0}};
#undef HUMAN_CODE

/* ------------------------------------------------------------------ */
/* the program descriptor                                              */
/* ------------------------------------------------------------------ */

static LLVMValueRef cstruct(ZbGen *g, ZbDescType k, LLVMValueRef *f, unsigned n)
{
    return LLVMConstNamedStruct(zb_desc_type(g->lc, k), f, n);
}

static LLVMValueRef type_desc(ZbGen *g, const ZType *t)
{
    LLVMValueRef f[2] = {
        ci32(g, zb_tag_of_type(t)),
        ci32(g, t && t->kind == TY_ENUM && t->enum_decl ? t->enum_decl->index : -1)};
    return cstruct(g, ZB_TY_TYPE, f, 2);
}

static LLVMValueRef value_desc(ZbMod *md, const ZExpr *e)
{
    ZbVal v;
    if (!e || !zb_lit_val(md, e, &v)) return zb_const_value(md, ZGRT_UNDEF, ci64(md->g, 0));
    LLVMValueRef f[2] = {v.tag, v.pay};
    return cstruct(md->g, ZB_TY_VALUE, f, 2);
}

static int name_code(const ZExpr *e, const NameCode *codes, int dflt)
{
    if (!e || e->kind != E_NAME || !e->name) return dflt;
    for (int i = 0; codes[i].name; i++)
        if (strcmp(e->name, codes[i].name) == 0) return codes[i].code;
    return dflt;
}

static LLVMValueRef prop_str(ZbMod *md, const ZDecl *act, ZPropKey key)
{
    const ZProp *pr = za_prop(act, key);
    if (!pr || pr->value->kind != E_STR) return cnull(md->g);
    return zb_cstr(md, pr->value->lit.s ? pr->value->lit.s : "");
}

static LLVMValueRef names_array(ZbMod *md, const ZVec *params, const char *prefix)
{
    int n = params->len;
    LLVMValueRef *vs = zu_alloc(md->g->a, sizeof *vs * (size_t)n);
    for (int i = 0; i < n; i++) {
        const ZParam *pp = ZU_VEC_AT(*params, i);
        vs[i] = zb_cstr(md, pp->name);
    }
    return zb_const_array(md, md->g->t_ptr, vs, n, prefix);
}

static LLVMValueRef types_array(ZbMod *md, const ZVec *params)
{
    int n = params->len;
    LLVMValueRef *vs = zu_alloc(md->g->a, sizeof *vs * (size_t)n);
    for (int i = 0; i < n; i++) {
        const ZParam *pp = ZU_VEC_AT(*params, i);
        vs[i] = type_desc(md->g, pp->type);
    }
    return zb_const_array(md, zb_desc_type(md->g->lc, ZB_TY_TYPE), vs, n, "types");
}

static LLVMValueRef action_desc(ZbMod *md, const ZDecl *act)
{
    ZbGen *g = md->g;
    if ((unsigned)act->action >= ACT__COUNT) ZU_UNREACHABLE();
    int kind = action_codes[act->action];
    int nres = act->results.len;
    /* retries: forever = -1, default 3 */
    int retries = 3;
    const ZProp *pr = za_prop(act, PROP_RETRIES);
    if (pr && pr->value->kind == E_NAME && pr->value->name &&
        !strcmp(pr->value->name, ZV_RETRIES_FOREVER))
        retries = -1;
    else if (pr && pr->value->kind == E_INT)
        retries = pr->value->lit.i > INT32_MAX ? INT32_MAX : (int)pr->value->lit.i;
    double temp = 0;
    int has_temp = 0;
    pr = za_prop(act, PROP_TEMPERATURE);
    if (pr && pr->value->kind == E_INT)
        temp = (double)pr->value->lit.i, has_temp = 1;
    else if (pr && pr->value->kind == E_FLOAT)
        temp = pr->value->lit.f, has_temp = 1;
    LLVMValueRef fallback = cnull(g);
    pr = za_prop(act, PROP_FALLBACK);
    if (pr && nres > 0) {
        LLVMValueRef *vs = zu_alloc(g->a, sizeof *vs * (size_t)nres);
        for (int i = 0; i < nres; i++) {
            const ZExpr *x = pr->value->kind == E_TUPLE
                                 ? (i < pr->value->args.len ? ZU_VEC_AT(pr->value->args, i) : NULL)
                                 : (i == 0 ? pr->value : NULL);
            vs[i] = value_desc(md, x);
        }
        fallback = zb_const_array(md, zb_desc_type(g->lc, ZB_TY_VALUE), vs, nres, "fallback");
    }
    LLVMValueRef fnp = cnull(g);
    if (act->action == ACT_EXTERN_PURE || act->action == ACT_EFFECT) {
        /* a weak reference: NULL when the user linked no zg_<name>, which
         * the runtime reports when the action runs */
        const char *sym = zu_fmt(g->a, "zg_%s", act->name);
        LLVMValueRef ext = LLVMGetNamedFunction(md->m, sym);
        if (!ext) {
            LLVMTypeRef pt = g->t_ptr;
            ext = LLVMAddFunction(md->m, sym, LLVMFunctionType(g->t_i32, &pt, 1, 0));
            LLVMSetLinkage(ext, LLVMExternalWeakLinkage);
        }
        fnp = as_ptr(md, ext);
    }
    LLVMValueRef plan = cnull(g);
    if (act->action == ACT_PLANNER) {
        /* the planner library's entry (planner/planner.h), linked into
         * the executables of programs that declare a planner */
        LLVMValueRef ext = LLVMGetNamedFunction(md->m, ZB_PLANNER_ENTRY);
        if (!ext) {
            LLVMTypeRef pt = g->t_ptr;
            ext = LLVMAddFunction(md->m, ZB_PLANNER_ENTRY, LLVMFunctionType(g->t_i32, &pt, 1, 0));
        }
        fnp = as_ptr(md, ext);
        const char *ctx = za_planner_context(g->a, g->p, g->d->files, act);
        plan = zb_cstr(md, ctx ? ctx : "");
    }
    const ZProp *parse = za_prop(act, PROP_PARSE);
    const ZProp *hk = za_prop(act, PROP_KIND);
    LLVMValueRef f[] = {
        zb_cstr(md, act->name),
        ci32(g, kind),
        ci32(g, act->params.len),
        names_array(md, &act->params, "pnames"),
        types_array(md, &act->params),
        ci32(g, nres),
        names_array(md, &act->results, "rnames"),
        types_array(md, &act->results),
        prop_str(md, act, PROP_SYSTEM),
        prop_str(md, act, PROP_USER),
        ci32(g, name_code(parse ? parse->value : NULL, parse_codes, ZGRT_PARSE_TEXT)),
        ci32(g, retries),
        prop_str(md, act, PROP_MODEL),
        LLVMConstReal(g->t_dbl, temp),
        ci32(g, has_temp),
        ci32(g, za_prop(act, PROP_FALLBACK) && nres > 0 ? 1 : 0),
        fallback,
        ci32(g, name_code(hk ? hk->value : NULL, human_codes, ZGRT_HUMAN_CONFIRM)),
        prop_str(md, act, PROP_PROMPT),
        fnp,
        plan,
    };
    return cstruct(g, ZB_TY_ACTION, f, sizeof f / sizeof f[0]);
}

/* The tables of the monitor plan hold only int32 fields (zgrt_slot,
 * zgrt_pair, zgrt_group): each is written as one flat i32 array (constant
 * data), the same bytes as the array of structs.  LLVM writes constant
 * data in one piece, where an array of structs is written field by field
 * and every all-zero element starts a fragment of its own: the plan of a
 * large program has tens of thousands of entries in every descriptor. */
static LLVMValueRef words_table(ZbMod *md, const int32_t *w, int n, const char *prefix)
{
    ZbGen *g = md->g;
    LLVMValueRef *vals = zu_alloc(g->a, sizeof *vals * ((size_t)n + 1));
    for (int i = 0; i < n; i++) vals[i] = ci32(g, w[i]);
    return zb_const_array(md, g->t_i32, vals, n, prefix);
}

/* A slot table of the monitor plan (zgrt_slot, as words). */
static LLVMValueRef slot_table(ZbMod *md, const ZPlanSlot *t, int n, const char *prefix)
{
    ZbGen *g = md->g;
    int32_t *w = zu_alloc(g->a, sizeof *w * (2 * (size_t)n + 1));
    for (int i = 0; i < n; i++) {
        w[2 * i] = t[i].life;
        w[2 * i + 1] = t[i].index;
    }
    return words_table(md, w, 2 * n, prefix);
}

static LLVMValueRef int_table(ZbMod *md, const int *t, int n, const char *prefix)
{
    ZbGen *g = md->g;
    LLVMValueRef *vals = zu_alloc(g->a, sizeof *vals * ((size_t)n + 1));
    for (int i = 0; i < n; i++) vals[i] = ci32(g, t[i]);
    return zb_const_array(md, g->t_i32, vals, n, prefix);
}

/* A pair table (zgrt_pair, as words). */
static LLVMValueRef pair_table(ZbMod *md, const ZPlanPair *t, int n, const char *prefix)
{
    ZbGen *g = md->g;
    int32_t *w = zu_alloc(g->a, sizeof *w * (2 * (size_t)n + 1));
    for (int i = 0; i < n; i++) {
        w[2 * i] = t[i].from;
        w[2 * i + 1] = t[i].to;
    }
    return words_table(md, w, 2 * n, prefix);
}

/* The plan's keep tables (one zgrt_keep per lifeline). */
static LLVMValueRef keep_table(ZbMod *md)
{
    ZbGen *g = md->g;
    const ZMonitorPlan *pl = g->plan;
    int nl = g->nlife;
    LLVMValueRef *vals = zu_alloc(g->a, sizeof *vals * ((size_t)nl + 1));
    for (int i = 0; i < nl; i++) {
        const ZPlanLifeline *k = i < pl->nlifelines ? &pl->lifelines[i] : NULL;
        static const ZPlanLifeline none;
        if (!k) k = &none;
        LLVMValueRef f[] = {
            ci32(g, k->nevals),
            ci32(g, k->nvc),
            ci32(g, k->nviews),
            ci32(g, k->nvarviews),
            int_table(md, k->evals, k->nevals, "keep.evals"),
            int_table(md, k->vc, k->nvc, "keep.vc"),
            slot_table(md, k->views, k->nviews, "keep.views"),
            slot_table(md, k->varviews, k->nvarviews, "keep.varviews"),
        };
        vals[i] = cstruct(g, ZB_TY_KEEP, f, sizeof f / sizeof f[0]);
    }
    return zb_const_array(md, zb_desc_type(g->lc, ZB_TY_KEEP), vals, nl, "keeps");
}

/* The plan's edges (zgrt_edge, with their groups and carried entries). */
static LLVMValueRef edge_table(ZbMod *md)
{
    ZbGen *g = md->g;
    const ZMonitorPlan *pl = g->plan;
    LLVMValueRef *vals = zu_alloc(g->a, sizeof *vals * ((size_t)pl->nedges + 1));
    for (int i = 0; i < pl->nedges; i++) {
        const ZPlanEdge *e = &pl->edges[i];
        /* zgrt_group, as words */
        int32_t *gw = zu_alloc(g->a, sizeof *gw * (5 * (size_t)e->ngroups + 1));
        for (int k = 0; k < e->ngroups; k++) {
            const ZPlanGroup *gr = &e->groups[k];
            int32_t *w = gw + 5 * k;
            w[0] = gr->life, w[1] = gr->from_vc, w[2] = gr->to_vc;
            w[3] = gr->views_end, w[4] = gr->varviews_end;
        }
        LLVMValueRef f[] = {
            ci32(g, e->from),
            ci32(g, e->to),
            ci32(g, e->ngroups),
            ci32(g, e->nviews),
            ci32(g, e->nvarviews),
            ci32(g, 0),
            words_table(md, gw, 5 * e->ngroups, "edge.groups"),
            pair_table(md, e->views, e->nviews, "edge.views"),
            pair_table(md, e->varviews, e->nvarviews, "edge.varviews"),
        };
        vals[i] = cstruct(g, ZB_TY_EDGE, f, sizeof f / sizeof f[0]);
    }
    return zb_const_array(md, zb_desc_type(g->lc, ZB_TY_EDGE), vals, pl->nedges, "edges");
}

/* The stores: cells (name, type, default), the registry at the start
 * as action indices, the level. */
static LLVMValueRef store_table(ZbMod *md)
{
    ZbGen *g = md->g;
    const ZVec *stores = &g->p->stores;
    int n = stores->len;
    LLVMValueRef *vals = zu_alloc(g->a, sizeof *vals * ((size_t)n + 1));
    for (int i = 0; i < n; i++) {
        const ZDecl *st = ZU_VEC_AT(*stores, i);
        int nc = st->cells.len, nt = st->tools.len;
        LLVMValueRef *cells = zu_alloc(g->a, sizeof *cells * ((size_t)nc + 1));
        for (int k = 0; k < nc; k++) {
            const ZDecl *c = ZU_VEC_AT(st->cells, k);
            LLVMValueRef f[3] = {zb_cstr(md, c->name), type_desc(g, c->type),
                                 value_desc(md, c->expr)};
            cells[k] = cstruct(g, ZB_TY_CELL, f, 3);
        }
        int *tools = zu_alloc(g->a, sizeof *tools * ((size_t)nt + 1));
        for (int k = 0; k < nt; k++) {
            const ZParam *t = ZU_VEC_AT(st->tools, k);
            tools[k] = -1;
            for (int a = 0; a < g->nacts; a++)
                if (g->acts[a] == t->ref) tools[k] = a;
            if (tools[k] < 0) ZU_ICE("tool `%s` of store `%s` is not an action", t->name, st->name);
        }
        LLVMValueRef f[7] = {
            zb_cstr(md, st->name),
            ci32(g, st->level),
            ci32(g, nc),
            zb_const_array(md, zb_desc_type(g->lc, ZB_TY_CELL), cells, nc, "cells"),
            ci32(g, nt),
            ci32(g, 0),
            int_table(md, tools, nt, "tools"),
        };
        vals[i] = cstruct(g, ZB_TY_STORE, f, 7);
    }
    return zb_const_array(md, zb_desc_type(g->lc, ZB_TY_STORE), vals, n, "stores");
}

static LLVMValueRef fn_ref(ZbMod *md, const char *name, LLVMTypeRef ty)
{
    LLVMValueRef fn = LLVMGetNamedFunction(md->m, name);
    if (!fn) fn = LLVMAddFunction(md->m, name, ty);
    return as_ptr(md, fn);
}

/* The role record (zgrt_abi.h): the magic and -1, every lifeline;
 * zb_build writes the per-lifeline executables as copies of the
 * all-in-one one with the lifeline patched in. */
static LLVMValueRef role_record(ZbMod *md)
{
    ZbGen *g = md->g;
    LLVMTypeRef i8 = LLVMInt8TypeInContext(g->lc);
    LLVMTypeRef ft[2] = {LLVMArrayType(i8, 16), LLVMInt32TypeInContext(g->lc)};
    LLVMTypeRef t = LLVMStructTypeInContext(g->lc, ft, 2, 0);
    LLVMValueRef f[2] = {
        LLVMConstStringInContext(g->lc, ZGRT_ROLE_MAGIC, sizeof ZGRT_ROLE_MAGIC - 1, 0),
        ci32(g, -1)};
    LLVMValueRef gv = LLVMAddGlobal(md->m, t, "zg.role");
    LLVMSetInitializer(gv, LLVMConstStructInContext(g->lc, f, 2, 0));
    LLVMSetGlobalConstant(gv, 1);
    LLVMSetLinkage(gv, LLVMPrivateLinkage);
    LLVMSetAlignment(gv, 8);
    return as_ptr(md, gv);
}

void zb_gen_descriptor(ZbGen *g, LLVMModuleRef m)
{
    ZbMod md;
    zb_mod_init(&md, g, m);
    const ZProgram *p = g->p;
    int nl = g->nlife;
    LLVMTypeRef pt = g->t_ptr;
    LLVMValueRef *tmp;

    /* lifelines, bodies, evals */
    LLVMValueRef *names = zu_alloc(g->a, sizeof *names * ((size_t)nl + 1));
    LLVMValueRef *bodies = zu_alloc(g->a, sizeof *bodies * ((size_t)nl + 1));
    LLVMValueRef *evals = zu_alloc(g->a, sizeof *evals * ((size_t)nl + 1));
    LLVMTypeRef eps[3] = {pt, pt, pt};
    LLVMTypeRef eval_ty = LLVMFunctionType(g->t_void, eps, 3, 0);
    for (int i = 0; i < nl; i++) {
        const char *ln = life_decl(g, i)->name;
        names[i] = zb_cstr(&md, ln);
        bodies[i] = fn_ref(&md, zu_fmt(g->a, "zg.body.%s", ln), zb_body_type(g));
        evals[i] = zm_has_eval(g->plan, i) ? fn_ref(&md, zu_fmt(g->a, "zg.eval.%s", ln), eval_ty)
                                           : cnull(g);
    }
    LLVMValueRef lifelines_v = zb_const_array(&md, pt, names, nl, "lifelines");
    LLVMValueRef bodies_v = zb_const_array(&md, pt, bodies, nl, "bodies");
    LLVMValueRef evals_v = zb_const_array(&md, pt, evals, nl, "evals");

    /* variables */
    int nv = p->vars.len;
    tmp = zu_alloc(g->a, sizeof *tmp * ((size_t)nv + 1));
    for (int i = 0; i < nv; i++) {
        const ZDecl *v = ZU_VEC_AT(p->vars, i);
        ZbVal dv;
        bool has = v->expr && zb_lit_val(&md, v->expr, &dv);
        LLVMValueRef def = zb_const_value(&md, ZGRT_UNDEF, ci64(g, 0));
        if (has) {
            LLVMValueRef vf[2] = {dv.tag, dv.pay};
            def = cstruct(g, ZB_TY_VALUE, vf, 2);
        }
        LLVMValueRef f[4] = {zb_cstr(&md, v->name), type_desc(g, v->type), ci32(g, has ? 1 : 0),
                             def};
        tmp[i] = cstruct(g, ZB_TY_VAR, f, 4);
    }
    LLVMValueRef vars_v = zb_const_array(&md, zb_desc_type(g->lc, ZB_TY_VAR), tmp, nv, "vars");

    /* enums */
    tmp = zu_alloc(g->a, sizeof *tmp * ((size_t)g->nenums + 1));
    for (int i = 0; i < g->nenums; i++) {
        const ZDecl *en = g->enums[i];
        LLVMValueRef f[3] = {zb_cstr(&md, en->name), ci32(g, en->members.len),
                             names_array(&md, &en->members, "members")};
        tmp[i] = cstruct(g, ZB_TY_ENUM, f, 3);
    }
    LLVMValueRef enums_v =
        zb_const_array(&md, zb_desc_type(g->lc, ZB_TY_ENUM), tmp, g->nenums, "enums");

    /* channels and tags */
    int nc = g->ls->namespaces.len;
    tmp = zu_alloc(g->a, sizeof *tmp * ((size_t)nc + 1));
    for (int i = 0; i < nc; i++) tmp[i] = zb_cstr(&md, ZU_VEC_AT(g->ls->namespaces, i));
    LLVMValueRef chans_v = zb_const_array(&md, pt, tmp, nc, "chans");
    int nt = p->n_controls;
    if (g->gt)
        for (int i = 0; i < g->gt->guards.len; i++) {
            const ZGuardInfo *gi = ZU_VEC_AT(g->gt->guards, i);
            if (gi->construct && gi->construct->construct > nt) nt = gi->construct->construct;
        }
    tmp = zu_alloc(g->a, sizeof *tmp * ((size_t)nt + 1));
    for (int i = 0; i < nt; i++) tmp[i] = NULL;
    if (g->gt)
        for (int i = 0; i < g->gt->guards.len; i++) {
            const ZGuardInfo *gi = ZU_VEC_AT(g->gt->guards, i);
            int k = gi->construct ? gi->construct->construct - 1 : -1;
            if (k >= 0 && k < nt && gi->tag) tmp[k] = zb_cstr(&md, gi->tag);
        }
    for (int i = 0; i < nt; i++)
        if (!tmp[i]) tmp[i] = zb_cstr(&md, "?");
    LLVMValueRef tags_v = zb_const_array(&md, pt, tmp, nt, "tags");

    /* locations (none in the descriptor a fingerprint hashes: moving a
     * statement to another line does not change the program) */
    int nlocs = g->for_hash ? 0 : g->nlocs;
    tmp = zu_alloc(g->a, sizeof *tmp * ((size_t)nlocs + 1));
    for (int i = 0; i < nlocs; i++) {
        const ZbLoc *l = &g->locs[i];
        /* an imported file's path; the program's own file is .source */
        const ZSource *src = l->file ? zd_source(g->d, (ZSpan){.file = l->file}) : NULL;
        LLVMValueRef f[3] = {ci32(g, l->line), ci32(g, l->col),
                             zb_cstr(&md, src && src->path ? src->path : NULL)};
        tmp[i] = cstruct(g, ZB_TY_LOC, f, 3);
    }
    LLVMValueRef locs_v = zb_const_array(&md, zb_desc_type(g->lc, ZB_TY_LOC), tmp, nlocs, "locs");

    /* actions */
    tmp = zu_alloc(g->a, sizeof *tmp * ((size_t)g->nacts + 1));
    for (int i = 0; i < g->nacts; i++) tmp[i] = action_desc(&md, g->acts[i]);
    LLVMValueRef acts_v =
        zb_const_array(&md, zb_desc_type(g->lc, ZB_TY_ACTION), tmp, g->nacts, "actions");

    /* inputs and results */
    const ZDecl *wf = g->wf;
    int ni = wf->params.len;
    tmp = zu_alloc(g->a, sizeof *tmp * ((size_t)ni + 1));
    for (int i = 0; i < ni; i++) {
        const ZParam *pp = ZU_VEC_AT(wf->params, i);
        LLVMValueRef f[2] = {ci32(g, pp->var ? pp->var->index : -1), ci32(g, pp->owner_index)};
        tmp[i] = cstruct(g, ZB_TY_INPUT, f, 2);
    }
    LLVMValueRef inputs_v =
        zb_const_array(&md, zb_desc_type(g->lc, ZB_TY_INPUT), tmp, ni, "inputs");
    int nr = wf->ret ? wf->ret->items.len : 0;
    tmp = zu_alloc(g->a, sizeof *tmp * ((size_t)nr + 1));
    for (int i = 0; i < nr; i++) {
        const ZReturnItem *it = ZU_VEC_AT(wf->ret->items, i);
        LLVMValueRef f[2] = {ci32(g, zb_var_of(it->value)), ci32(g, it->at.index)};
        tmp[i] = cstruct(g, ZB_TY_RESULT, f, 2);
    }
    LLVMValueRef results_v =
        zb_const_array(&md, zb_desc_type(g->lc, ZB_TY_RESULT), tmp, nr, "results");

    const ZMonitorPlan *plan = g->plan;
    LLVMValueRef f[] = {
        ci32(g, ZGRT_ABI_VERSION),
        ci32(g, nl),
        zb_cstr(&md, g->for_hash              ? ""
                     : p->src && p->src->path ? p->src->path
                                              : "?"),
        zb_cstr(&md, wf->name),
        lifelines_v,
        bodies_v,
        evals_v,
        ci32(g, nv),
        ci32(g, g->nenums),
        vars_v,
        enums_v,
        ci32(g, nc),
        ci32(g, nt),
        chans_v,
        tags_v,
        ci32(g, nlocs),
        ci32(g, g->nacts),
        locs_v,
        acts_v,
        ci32(g, ni),
        ci32(g, nr),
        inputs_v,
        results_v,
        ci32(g, wf->ret && wf->ret->tuple_ret ? 1 : 0),
        ci32(g, plan->monitor ? 1 : 0),
        ci32(g, plan->nsubs),
        ci32(g, plan->nedges),
        keep_table(&md),
        edge_table(&md),
        g->fingerprint ? zb_cstr(&md, g->fingerprint) : cnull(g),
        g->fingerprint_parts ? zb_cstr(&md, g->fingerprint_parts) : cnull(g),
        ci32(g, p->stores.len),
        store_table(&md),
        role_record(&md),
    };
    LLVMValueRef init = cstruct(g, ZB_TY_PROGRAM, f, sizeof f / sizeof f[0]);
    LLVMValueRef prog = LLVMAddGlobal(m, zb_desc_type(g->lc, ZB_TY_PROGRAM), "zg.program");
    LLVMSetInitializer(prog, init);
    LLVMSetGlobalConstant(prog, 1);
    LLVMSetLinkage(prog, LLVMInternalLinkage);

    /* int main(int argc, char **argv) { return zgrt_main(&zg.program, argc, argv); } */
    LLVMTypeRef mps[2] = {g->t_i32, pt};
    LLVMValueRef mainf = LLVMAddFunction(m, "main", LLVMFunctionType(g->t_i32, mps, 2, 0));
    ZbFn mf;
    zb_fn_begin(&mf, &md, mainf, ZB_FN_BODY, -1);
    LLVMValueRef args[3] = {as_ptr(&md, prog), LLVMGetParam(mainf, 0), LLVMGetParam(mainf, 1)};
    LLVMValueRef rc = zb_call_rt(&mf, ZB_RT_zgrt_main, args, 3);
    LLVMBuildRet(mf.b, rc);
    zb_fn_end(&mf);
}
