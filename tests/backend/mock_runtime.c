/* mock_runtime.c — a small stand-in for libzgrt that lets the backend tests
 * run generated code on its own: every ZGRT_ABI function, lifelines as
 * threads, FIFO channels per (sender, receiver, namespace), the mock llm
 * model for str/int/bool/enum outputs, traps as "file:line:col: msg" and
 * exit status 1, results printed as JSON.  No CPL monitor (zgrt_choice_cpl
 * answers false), no extern functions, no trace; builtins without json.
 */
#include <ctype.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zgrt_abi.h"

struct zgrt_ctx {
    int life;
    zgrt_value *store;
};

typedef struct Msg {
    struct Msg *next;
    int ctl, tag, value, n;
    zgrt_value vals[];
} Msg;

typedef struct Queue {
    Msg *head, *tail;
} Queue;

static const zgrt_program *P;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static Queue *queues;
static zgrt_value **stores;

/* every string the mock makes, kept reachable until exit */
typedef struct Keep {
    struct Keep *next;
    zgrt_str s;
} Keep;
static Keep *kept;

static const zgrt_str *new_str(const char *s, size_t n)
{
    Keep *k = malloc(sizeof *k + n + 1);
    if (!k) abort();
    k->s.len = (int64_t)n;
    memcpy(k->s.data, s, n);
    k->s.data[n] = 0;
    pthread_mutex_lock(&mu);
    k->next = kept;
    kept = k;
    pthread_mutex_unlock(&mu);
    return &k->s;
}

static zgrt_value str_val(const char *s, size_t n)
{
    zgrt_value v = {ZGRT_STR, {.s = new_str(s, n)}};
    return v;
}

static void fail(int loc, const char *fmt, const char *arg)
{
    const zgrt_loc *l = loc >= 0 && loc < P->nlocs ? &P->locs[loc] : NULL;
    fprintf(stderr, "%s:%d:%d: ", P->source, l ? l->line : 0, l ? l->col : 0);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    fflush(NULL);
    exit(1);
}

static Queue *queue(int from, int to, int chan)
{
    return &queues[((size_t)from * (size_t)P->nlifelines + (size_t)to) * (size_t)P->nchans +
                   (size_t)chan];
}

static void push(Queue *q, Msg *m)
{
    pthread_mutex_lock(&mu);
    if (q->tail)
        q->tail->next = m;
    else
        q->head = m;
    q->tail = m;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static Msg *pop(Queue *q)
{
    pthread_mutex_lock(&mu);
    while (!q->head) pthread_cond_wait(&cv, &mu);
    Msg *m = q->head;
    q->head = m->next;
    if (!q->head) q->tail = NULL;
    pthread_mutex_unlock(&mu);
    return m;
}

const zgrt_value *zgrt_store(zgrt_ctx *ctx) { return ctx->store; }

void zgrt_send(zgrt_ctx *ctx, int32_t peer, int32_t chan, int32_t n, const zgrt_value *vals,
               int32_t loc)
{
    (void)loc;
    Msg *m = calloc(1, sizeof *m + sizeof(zgrt_value) * (size_t)n);
    if (!m) abort();
    m->n = n;
    memcpy(m->vals, vals, sizeof(zgrt_value) * (size_t)n);
    push(queue(ctx->life, peer, chan), m);
}

void zgrt_recv(zgrt_ctx *ctx, int32_t peer, int32_t chan, int32_t n, const int32_t *binds,
               const zgrt_value *consts, int32_t loc)
{
    Msg *m = pop(queue(peer, ctx->life, chan));
    if (m->ctl || m->n != n) fail(loc, "%s", "mock: unexpected message");
    for (int i = 0; i < n; i++) {
        if (binds[i] >= 0)
            ctx->store[binds[i]] = m->vals[i];
        else if (zgrt_compare(&m->vals[i], &consts[i]) != 0)
            fail(loc, "%s", "constant binding mismatch");
    }
    free(m);
}

int32_t zgrt_wait_any(zgrt_ctx *ctx, int32_t chan, int32_t n, const int32_t *peers,
                      int64_t done_mask, int32_t loc)
{
    (void)loc;
    pthread_mutex_lock(&mu);
    for (;;) {
        for (int k = 0; k < n; k++) {
            if (done_mask >> k & 1) continue;
            if (queue(peers[k], ctx->life, chan)->head) {
                pthread_mutex_unlock(&mu);
                return k;
            }
        }
        pthread_cond_wait(&cv, &mu);
    }
}

void zgrt_send_ctl(zgrt_ctx *ctx, int32_t peer, int32_t chan, int32_t tag, int32_t value,
                   int32_t loc)
{
    (void)loc;
    Msg *m = calloc(1, sizeof *m);
    if (!m) abort();
    m->ctl = 1;
    m->tag = tag;
    m->value = value;
    push(queue(ctx->life, peer, chan), m);
}

int32_t zgrt_recv_ctl(zgrt_ctx *ctx, int32_t owner, int32_t chan, int32_t tag, int32_t loc)
{
    Msg *m = pop(queue(owner, ctx->life, chan));
    if (!m->ctl || m->tag != tag) fail(loc, "%s", "mock: unexpected control message");
    int v = m->value;
    free(m);
    return v;
}

void zgrt_choice(zgrt_ctx *ctx, int32_t tag, int32_t value, int32_t loc)
{
    (void)ctx, (void)tag, (void)value, (void)loc;
}

int32_t zgrt_choice_cpl(zgrt_ctx *ctx, int32_t tag, int32_t root, int32_t loc)
{
    (void)ctx, (void)tag, (void)root, (void)loc;
    return 0;
}

void zgrt_assign(zgrt_ctx *ctx, const char *action, int32_t n, const int32_t *vars,
                 const zgrt_value *vals, int32_t loc)
{
    (void)action, (void)loc;
    for (int i = 0; i < n; i++)
        if (vars[i] >= 0) ctx->store[vars[i]] = vals[i];
}

void zgrt_act(zgrt_ctx *ctx, int32_t action, const zgrt_value *args, int32_t nouts,
              const int32_t *outs, int32_t loc)
{
    (void)args;
    const zgrt_action *a = &P->actions[action];
    if (a->kind != ZGRT_ACT_LLM) fail(loc, "mock: cannot run `%s`", a->name);
    for (int i = 0; i < nouts && i < a->nresults; i++) {
        zgrt_value v = {a->result_types[i].tag, {.i = 0}};
        if (v.tag == ZGRT_STR) {
            char buf[256];
            snprintf(buf, sizeof buf, "[%s:%s]", a->name,
                     a->result_names[i] ? a->result_names[i] : "");
            v = str_val(buf, strlen(buf));
        } else if (v.tag == ZGRT_ENUM) {
            v.u.i = (int64_t)a->result_types[i].enum_id << 32;
        }
        if (outs[i] >= 0) ctx->store[outs[i]] = v;
    }
}

typedef struct Branch {
    zgrt_ctx ctx;
    zgrt_body_fn fn;
} Branch;

static void *branch_main(void *p)
{
    Branch *b = p;
    b->fn(&b->ctx);
    return NULL;
}

void zgrt_par(zgrt_ctx *ctx, int32_t n, const zgrt_body_fn *branches, int32_t loc)
{
    (void)loc;
    Branch *bs = calloc((size_t)n, sizeof *bs);
    pthread_t *ts = calloc((size_t)n, sizeof *ts);
    if (!bs || !ts) abort();
    for (int i = 0; i < n; i++) {
        bs[i].ctx = *ctx;
        bs[i].fn = branches[i];
        pthread_create(&ts[i], NULL, branch_main, &bs[i]);
    }
    for (int i = 0; i < n; i++) pthread_join(ts[i], NULL);
    free(bs);
    free(ts);
}

void zgrt_trap(zgrt_ctx *ctx, int32_t loc, const char *msg)
{
    (void)ctx;
    fail(loc, "%s", msg);
}

void zgrt_concat(zgrt_ctx *ctx, const zgrt_value *a, const zgrt_value *b, zgrt_value *out)
{
    (void)ctx;
    size_t n = (size_t)a->u.s->len + (size_t)b->u.s->len;
    char *buf = malloc(n + 1);
    if (!buf) abort();
    memcpy(buf, a->u.s->data, (size_t)a->u.s->len);
    memcpy(buf + a->u.s->len, b->u.s->data, (size_t)b->u.s->len);
    *out = str_val(buf, n);
    free(buf);
}

int32_t zgrt_compare(const zgrt_value *a, const zgrt_value *b)
{
    if (a->tag != b->tag) return a->tag < b->tag ? -1 : 1;
    switch (a->tag) {
    case ZGRT_FLOAT: return a->u.f < b->u.f ? -1 : a->u.f > b->u.f;
    case ZGRT_STR: {
        int64_t n = a->u.s->len < b->u.s->len ? a->u.s->len : b->u.s->len;
        int c = memcmp(a->u.s->data, b->u.s->data, (size_t)n);
        if (c) return c < 0 ? -1 : 1;
        return a->u.s->len < b->u.s->len ? -1 : a->u.s->len > b->u.s->len;
    }
    case ZGRT_JSON: return a->u.j != b->u.j;
    default: return a->u.i < b->u.i ? -1 : a->u.i > b->u.i;
    }
}

static zgrt_value map_str(const zgrt_value *a, int (*fn)(int))
{
    size_t n = (size_t)a->u.s->len;
    char *buf = malloc(n + 1);
    if (!buf) abort();
    for (size_t i = 0; i < n; i++) buf[i] = (char)fn((unsigned char)a->u.s->data[i]);
    zgrt_value v = str_val(buf, n);
    free(buf);
    return v;
}

static int affix(const zgrt_str *s, const zgrt_str *x, int at_end)
{
    if (x->len > s->len) return 0;
    return memcmp(s->data + (at_end ? s->len - x->len : 0), x->data, (size_t)x->len) == 0;
}

void zgrt_builtin(zgrt_ctx *ctx, int32_t builtin, int32_t n, const zgrt_value *args,
                  zgrt_value *out, int32_t loc)
{
    (void)ctx, (void)n;
    const zgrt_value *a = &args[0], *b = &args[1];
    char buf[64];
    switch (builtin) {
    case ZGRT_BI_LEN: *out = (zgrt_value){ZGRT_INT, {.i = a->u.s->len}}; return;
    case ZGRT_BI_LOWER: *out = map_str(a, tolower); return;
    case ZGRT_BI_UPPER: *out = map_str(a, toupper); return;
    case ZGRT_BI_TRIM: {
        const char *s = a->u.s->data;
        size_t i = 0, j = (size_t)a->u.s->len;
        while (i < j && isspace((unsigned char)s[i])) i++;
        while (j > i && isspace((unsigned char)s[j - 1])) j--;
        *out = str_val(s + i, j - i);
        return;
    }
    case ZGRT_BI_CONTAINS:
        *out = (zgrt_value){ZGRT_BOOL,
                            {.i = memmem(a->u.s->data, (size_t)a->u.s->len, b->u.s->data,
                                         (size_t)b->u.s->len) != NULL}};
        return;
    case ZGRT_BI_STARTS_WITH:
        *out = (zgrt_value){ZGRT_BOOL, {.i = affix(a->u.s, b->u.s, 0)}};
        return;
    case ZGRT_BI_ENDS_WITH: *out = (zgrt_value){ZGRT_BOOL, {.i = affix(a->u.s, b->u.s, 1)}}; return;
    case ZGRT_BI_STR:
        switch (a->tag) {
        case ZGRT_STR: *out = *a; return;
        case ZGRT_INT: snprintf(buf, sizeof buf, "%" PRId64, a->u.i); break;
        case ZGRT_FLOAT: snprintf(buf, sizeof buf, "%g", a->u.f); break;
        case ZGRT_BOOL: snprintf(buf, sizeof buf, "%s", a->u.i ? "true" : "false"); break;
        default: fail(loc, "%s", "mock: str() of this value");
        }
        *out = str_val(buf, strlen(buf));
        return;
    case ZGRT_BI_INT:
        if (a->tag == ZGRT_INT)
            *out = *a;
        else if (a->tag == ZGRT_FLOAT)
            *out = (zgrt_value){ZGRT_INT, {.i = (int64_t)a->u.f}};
        else
            *out = (zgrt_value){ZGRT_INT, {.i = strtoll(a->u.s->data, NULL, 10)}};
        return;
    case ZGRT_BI_FLOAT:
        if (a->tag == ZGRT_FLOAT)
            *out = *a;
        else if (a->tag == ZGRT_INT)
            *out = (zgrt_value){ZGRT_FLOAT, {.f = (double)a->u.i}};
        else
            *out = (zgrt_value){ZGRT_FLOAT, {.f = strtod(a->u.s->data, NULL)}};
        return;
    default: fail(loc, "%s", "mock: unsupported builtin");
    }
}

int64_t zgrt_vc(zgrt_ctx *ctx, int32_t lifeline)
{
    (void)ctx, (void)lifeline;
    return 1;
}

int32_t zgrt_view(zgrt_ctx *ctx, int32_t lifeline, int32_t slot)
{
    (void)ctx, (void)lifeline, (void)slot;
    return 0;
}

const zgrt_value *zgrt_varview(zgrt_ctx *ctx, int32_t lifeline, int32_t slot)
{
    (void)ctx, (void)lifeline, (void)slot;
    return NULL;
}

static void print_value(const zgrt_value *v, zgrt_type t)
{
    switch (t.tag) {
    case ZGRT_BOOL: printf("%s", v->u.i ? "true" : "false"); break;
    case ZGRT_INT: printf("%" PRId64, v->u.i); break;
    case ZGRT_FLOAT: printf("%.17g", v->u.f); break;
    case ZGRT_STR:
        putchar('"');
        for (int64_t i = 0; i < v->u.s->len; i++) {
            unsigned char c = (unsigned char)v->u.s->data[i];
            if (c == '"' || c == '\\')
                printf("\\%c", c);
            else if (c == '\n')
                printf("\\n");
            else
                putchar(c);
        }
        putchar('"');
        break;
    case ZGRT_ENUM: {
        const zgrt_enum *e = &P->enums[t.enum_id];
        printf("\"%s\"", e->members[v->u.i & 0xffffffff]);
        break;
    }
    default: printf("null"); break;
    }
}

static void *life_main(void *p)
{
    zgrt_ctx *ctx = p;
    P->bodies[ctx->life](ctx);
    return NULL;
}

int zgrt_main(const zgrt_program *prog, int argc, char **argv)
{
    P = prog;
    int nl = prog->nlifelines;
    queues =
        calloc((size_t)nl * (size_t)nl * (size_t)(prog->nchans ? prog->nchans : 1), sizeof *queues);
    stores = calloc((size_t)nl, sizeof *stores);
    zgrt_ctx *ctxs = calloc((size_t)nl, sizeof *ctxs);
    pthread_t *ts = calloc((size_t)nl, sizeof *ts);
    if (!queues || !stores || !ctxs || !ts) abort();
    for (int l = 0; l < nl; l++) {
        stores[l] = calloc((size_t)(prog->nvars ? prog->nvars : 1), sizeof(zgrt_value));
        if (!stores[l]) abort();
        for (int x = 0; x < prog->nvars; x++)
            if (prog->vars[x].has_default) stores[l][x] = prog->vars[x].def;
    }
    for (int i = 0; i < prog->ninputs; i++) {
        const zgrt_var *v = &prog->vars[prog->inputs[i].var];
        const char *text = NULL;
        for (int k = 1; k + 1 < argc; k++)
            if (!strcmp(argv[k], "--arg") && !strncmp(argv[k + 1], v->name, strlen(v->name)) &&
                argv[k + 1][strlen(v->name)] == '=')
                text = argv[k + 1] + strlen(v->name) + 1;
        if (!text) {
            fprintf(stderr, "mock: missing --arg %s=...\n", v->name);
            exit(2);
        }
        zgrt_value val = {v->type.tag, {.i = 0}};
        switch (v->type.tag) {
        case ZGRT_STR: val = str_val(text, strlen(text)); break;
        case ZGRT_INT: val.u.i = strtoll(text, NULL, 10); break;
        case ZGRT_FLOAT: val.u.f = strtod(text, NULL); break;
        case ZGRT_BOOL: val.u.i = !strcmp(text, "true"); break;
        default: fprintf(stderr, "mock: unsupported input type\n"); exit(2);
        }
        stores[prog->inputs[i].owner][prog->inputs[i].var] = val;
    }
    for (int l = 0; l < nl; l++) {
        ctxs[l].life = l;
        ctxs[l].store = stores[l];
        if (prog->bodies[l]) pthread_create(&ts[l], NULL, life_main, &ctxs[l]);
    }
    for (int l = 0; l < nl; l++)
        if (prog->bodies[l]) pthread_join(ts[l], NULL);
    free(ctxs);
    free(ts);
    if (prog->nresults > 0) {
        if (prog->result_tuple) putchar('[');
        for (int i = 0; i < prog->nresults; i++) {
            const zgrt_result *r = &prog->results[i];
            if (i) printf(", ");
            print_value(&stores[r->lifeline][r->var], prog->vars[r->var].type);
        }
        if (prog->result_tuple) putchar(']');
        putchar('\n');
    }
    return 0;
}
