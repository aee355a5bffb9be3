/* model.c — the workflow a trace is checked against: parsed, resolved
 * and checked by the compiler's pipeline (compiler/pipeline.c, up to
 * ZC_CHECK: projection and the guards pass are not run, the oracle needs
 * neither), then indexed for the checker: lifelines and variables by
 * index, each if/while by its construct number with its tag ("if#3",
 * za_construct_tag); its guard is the statement's source tree. */
#include "zt.h"
#include "grammar.h"

#include <stdlib.h>
#include <string.h>

static void collect_constructs(ZtModel *m, const ZVec *body)
{
    for (int i = 0; i < body->len; i++) {
        const ZStmt *s = ZU_VEC_AT(*body, i);
        if (s->kind == S_IF || s->kind == S_WHILE) {
            if (s->construct > 0 && s->construct <= m->nconstructs) {
                m->constructs[s->construct] = s;
                m->tags[s->construct] = za_construct_tag(m->arena, s);
            }
            collect_constructs(m, &s->body);
            collect_constructs(m, &s->els);
        } else if (s->kind == S_PAR) {
            for (int k = 0; k < s->branches.len; k++) {
                const ZBranch *b = ZU_VEC_AT(s->branches, k);
                collect_constructs(m, &b->body);
            }
        }
    }
}

/* Compiles m->comp and indexes the program; frees m on failure. */
static ZtModel *finish_model(ZtModel *m)
{
    if (!zc_run(&m->comp, ZC_CHECK)) goto bad;
    m->arena = m->comp.arena;
    m->prog = m->comp.prog;
    m->wf = m->comp.wf;
    m->nl = m->prog->lifelines.len;
    m->nvars = m->prog->vars.len;
    m->lnames = zu_alloc(m->arena, sizeof(char *) * (size_t)(m->nl + 1));
    for (int i = 0; i < m->nl; i++)
        m->lnames[i] = ((ZDecl *)ZU_VEC_AT(m->prog->lifelines, i))->name;
    m->vars = zu_alloc(m->arena, sizeof(ZDecl *) * (size_t)(m->nvars + 1));
    for (int i = 0; i < m->nvars; i++) {
        ZDecl *v = ZU_VEC_AT(m->prog->vars, i);
        if (v->index >= 0 && v->index < m->nvars) m->vars[v->index] = v;
    }
    for (int i = 0; i < m->nvars; i++)
        if (!m->vars[i]) m->vars[i] = ZU_VEC_AT(m->prog->vars, i);
    m->nconstructs = m->prog->n_controls;
    m->constructs = zu_alloc(m->arena, sizeof(ZStmt *) * (size_t)(m->nconstructs + 2));
    m->tags = zu_alloc(m->arena, sizeof(char *) * (size_t)(m->nconstructs + 2));
    collect_constructs(m, &m->wf->body);
    return m;
bad:
    zt_model_free(m);
    return NULL;
}

ZtModel *zt_model_new(const char *path, const char *text, size_t len, const char *workflow,
                      FILE *diag)
{
    ZtModel *m = zu_xcalloc(1, sizeof *m);
    zc_init(&m->comp, zp_parse, path, text, len, diag ? diag : stderr);
    m->comp.workflow = workflow;
    return finish_model(m);
}

ZtModel *zt_model_load(const char *path, const char *workflow, FILE *diag)
{
    ZtModel *m = zu_xcalloc(1, sizeof *m);
    if (!zc_init_file(&m->comp, zp_parse, path, diag ? diag : stderr)) {
        free(m);
        return NULL;
    }
    m->comp.workflow = workflow;
    return finish_model(m);
}

void zt_model_free(ZtModel *m)
{
    if (!m) return;
    zc_free(&m->comp);
    free(m);
}

int zt_life_index(const ZtModel *m, const char *name)
{
    for (int i = 0; i < m->nl; i++)
        if (!strcmp(m->lnames[i], name)) return i;
    return -1;
}

int zt_var_index(const ZtModel *m, const char *name)
{
    for (int i = 0; i < m->nvars; i++)
        if (!strcmp(m->vars[i]->name, name)) return i;
    return -1;
}

int zt_construct_index(const ZtModel *m, const char *tag)
{
    int cn = -1;
    for (int k = 1; k <= m->nconstructs; k++)
        if (m->tags[k] && !strcmp(m->tags[k], tag)) cn = k;
    return cn;
}

const ZDecl *zt_action(const ZtModel *m, const char *name)
{
    for (int i = 0; i < m->prog->decls.len; i++) {
        const ZDecl *d = ZU_VEC_AT(m->prog->decls, i);
        if (d->kind == D_ACTION && !strcmp(d->name, name)) return d;
    }
    return NULL;
}

const ZDecl *zt_store(const ZtModel *m, const char *name)
{
    for (int i = 0; i < m->prog->stores.len; i++) {
        const ZDecl *d = ZU_VEC_AT(m->prog->stores, i);
        if (!strcmp(d->name, name)) return d;
    }
    return NULL;
}

const ZDecl *zt_cell(const ZDecl *store, const char *name)
{
    for (int i = 0; i < store->cells.len; i++) {
        const ZDecl *d = ZU_VEC_AT(store->cells, i);
        if (!strcmp(d->name, name)) return d;
    }
    return NULL;
}
