/* proofs.c — the arguments that a mutant the oracle accepts is a run that
 * can happen (campaign.c lists them): the same run in another line order,
 * the run stopped at a consistent cut, other diagnostics, or a replay of
 * the workflow with the mutant's inputs, answers and C results. */
#include "campaign.h"

/* ===================================================================== */
/* Normal forms and the arguments                                         */
/* ===================================================================== */

const char *str_of(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

bool is_kind(const json_t *o, const char *k)
{
    const char *s = str_of(o, "kind");
    return s && !strcmp(s, k);
}

/* The run a trace describes, whatever the order of the lines of
 * different lifelines: {"starts": {L: line}, "lines": {L: [lines]},
 * "ends": {"*" or L: line}, "other": [lines]} (one end line: "*"; per-
 * lifeline traces: each end line under the lifeline of its segment). */
static json_t *normal_form(const json_t *lines)
{
    json_t *starts = json_object(), *per = json_object(), *ends = json_object(),
           *other = json_array();
    size_t n = json_array_size(lines), nends = 0;
    for (size_t i = 0; i < n; i++)
        if (is_kind(json_array_get(lines, i), "end")) nends++;
    const char *seg = NULL;
    for (size_t i = 0; i < n; i++) {
        json_t *l = json_array_get(lines, i);
        const char *life = str_of(l, "lifeline");
        if (is_kind(l, "start") && life && !json_object_get(starts, life)) {
            json_object_set(starts, life, l);
            seg = life;
        } else if (is_kind(l, "end")) {
            const char *key = nends == 1 ? "*" : seg ? seg : "?";
            if (json_object_get(ends, key))
                json_array_append(other, l);
            else
                json_object_set(ends, key, l);
        } else if (life && !is_kind(l, "start")) {
            json_t *arr = json_object_get(per, life);
            if (!arr) {
                arr = json_array();
                json_object_set_new(per, life, arr);
            }
            json_array_append(arr, l);
        } else {
            json_array_append(other, l);
        }
    }
    json_t *nf = json_object();
    json_object_set_new(nf, "starts", starts);
    json_object_set_new(nf, "lines", per);
    json_object_set_new(nf, "ends", ends);
    json_object_set_new(nf, "other", other);
    return nf;
}

bool same_lines(const json_t *a, const json_t *b)
{
    if (json_array_size(a) != json_array_size(b)) return false;
    for (size_t i = 0; i < json_array_size(a); i++)
        if (!json_equal(json_array_get(a, i), json_array_get(b, i))) return false;
    return true;
}

bool same_run(const json_t *a, const json_t *b)
{
    json_t *na = normal_form(a), *nb = normal_form(b);
    bool eq = json_equal(na, nb);
    json_decref(na);
    json_decref(nb);
    return eq;
}

/* Only an "error" text (retry or end line) or a retry's "delay" differs. */
bool only_diagnostics(const json_t *orig, const json_t *mut)
{
    if (json_array_size(orig) != json_array_size(mut)) return false;
    int diffs = 0;
    for (size_t i = 0; i < json_array_size(orig); i++) {
        json_t *o = json_array_get(orig, i), *m = json_array_get(mut, i);
        if (json_equal(o, m)) continue;
        if (++diffs > 1) return false;
        bool retry = is_kind(o, "retry") && is_kind(m, "retry");
        bool end = is_kind(o, "end") && is_kind(m, "end") && json_object_get(o, "error");
        if (!retry && !end) return false;
        json_t *e = json_object_get(m, "error"), *d = json_object_get(m, "delay");
        if (!json_is_string(e)) return false;
        if (retry && !(json_is_real(d) && json_real_value(d) >= 0)) return false;
        json_t *oc = json_deep_copy(o), *mc = json_deep_copy(m);
        json_object_del(oc, "error");
        json_object_del(mc, "error");
        json_object_del(oc, "delay");
        json_object_del(mc, "delay");
        bool eq = json_equal(oc, mc);
        json_decref(oc);
        json_decref(mc);
        if (!eq) return false;
    }
    return diffs == 1;
}

/* The optional fields an event may record (docs/runtime.md): what they
 * say beyond the run's events is the model's or the person's raw text. */
static const char *const recorded_keys[] = {"answer", "prompt", "question", "coregion"};

/* Only recorded texts differ, on one event: its raw "answer" changed or
 * removed, or its "prompt", "question" or "coregion" removed. */
bool only_recorded(const json_t *orig, const json_t *mut)
{
    if (json_array_size(orig) != json_array_size(mut)) return false;
    int diffs = 0;
    for (size_t i = 0; i < json_array_size(orig); i++) {
        json_t *o = json_array_get(orig, i), *m = json_array_get(mut, i);
        if (json_equal(o, m)) continue;
        if (++diffs > 1) return false;
        if (!json_object_get(o, "index") || !json_object_get(m, "index")) return false;
        for (int k = 1; k < 4; k++) { /* present: unchanged */
            json_t *mv = json_object_get(m, recorded_keys[k]);
            if (mv && !json_equal(mv, json_object_get(o, recorded_keys[k]))) return false;
        }
        json_t *a = json_object_get(m, "answer");
        if (a && !json_is_string(a)) return false;
        json_t *oc = json_deep_copy(o), *mc = json_deep_copy(m);
        for (int k = 0; k < 4; k++) {
            json_object_del(oc, recorded_keys[k]);
            json_object_del(mc, recorded_keys[k]);
        }
        bool eq = json_equal(oc, mc);
        json_decref(oc);
        json_decref(mc);
        if (!eq) return false;
    }
    return diffs == 1;
}

/* The same run, but for the raw "answer" texts of the events: a replay's
 * scripted answers are made from the mutant's parsed values (its writes),
 * so its raw answers are those entries, not the mutant's recorded text,
 * which only the recorded class covers. */
static json_t *without_answers(const json_t *lines)
{
    json_t *r = json_deep_copy(lines);
    for (size_t i = 0; i < json_array_size(r); i++) json_object_del(json_array_get(r, i), "answer");
    return r;
}

bool same_run_but_answers(const json_t *a, const json_t *b)
{
    json_t *wa = without_answers(a), *wb = without_answers(b);
    bool eq = same_run(wa, wb);
    json_decref(wa);
    json_decref(wb);
    return eq;
}

/* The original run stopped at a cut: the same starts, per lifeline a
 * prefix of the original's lines, and an error end wherever lines were
 * cut (or the end line changed). */
bool is_stopped(const json_t *orig, const json_t *mut)
{
    json_t *no = normal_form(orig), *nm = normal_form(mut);
    bool ok = json_equal(json_object_get(no, "starts"), json_object_get(nm, "starts")) &&
              json_array_size(json_object_get(nm, "other")) == 0 &&
              json_array_size(json_object_get(no, "other")) == 0 &&
              json_object_size(json_object_get(no, "ends")) ==
                  json_object_size(json_object_get(nm, "ends"));
    json_t *lo = json_object_get(no, "lines"), *lm = json_object_get(nm, "lines");
    json_t *eo = json_object_get(no, "ends"), *em = json_object_get(nm, "ends");
    bool single = json_object_get(em, "*") != NULL;
    const char *key;
    json_t *seq;
    json_object_foreach(lm, key, seq)
    {
        if (!ok) break;
        json_t *oseq = json_object_get(lo, key);
        if (!oseq || json_array_size(seq) > json_array_size(oseq)) ok = false;
        for (size_t i = 0; ok && i < json_array_size(seq); i++)
            if (!json_equal(json_array_get(seq, i), json_array_get(oseq, i))) ok = false;
    }
    /* the ends: an error wherever the lines of its lifeline(s) were cut */
    json_object_foreach(eo, key, seq)
    {
        if (!ok) break;
        json_t *m = json_object_get(em, key);
        if (!m) {
            ok = false;
            break;
        }
        bool cut = false;
        const char *lk;
        json_t *oseq;
        json_object_foreach(lo, lk, oseq)
        {
            if (!single && strcmp(lk, key)) continue;
            json_t *mseq = json_object_get(lm, lk);
            if (json_array_size(mseq) != json_array_size(oseq)) cut = true;
        }
        if (json_equal(m, seq) && !cut) continue;
        if (!json_is_string(json_object_get(m, "error"))) ok = false;
    }
    /* a consistent cut: every receive's send is in it */
    size_t i;
    json_t *l;
    json_array_foreach(mut, i, l)
    {
        if (!ok) break;
        if (!is_kind(l, "recv")) continue;
        bool sent = false;
        size_t k;
        json_t *x;
        for (k = 0; k < json_array_size(mut) && !sent; k++) {
            x = json_array_get(mut, k);
            sent = is_kind(x, "send") && str_of(x, "msg") && str_of(l, "msg") &&
                   !strcmp(str_of(x, "msg"), str_of(l, "msg"));
        }
        if (!sent) ok = false;
    }
    json_decref(no);
    json_decref(nm);
    return ok;
}

/* ---- replays ------------------------------------------------------------- */

/* The S_ASSIGN of lifeline l calling action act whose targets are the
 * written variables `writes`, or NULL. */
static const ZStmt *find_assign(const ZVec *body, const ZDecl *act, int l, const json_t *writes)
{
    for (int i = 0; i < body->len; i++) {
        const ZStmt *s = ZU_VEC_AT(*body, i);
        if (s->kind == S_ASSIGN && s->is_action && s->expr && s->expr->decl == act &&
            s->life.index == l) {
            int n = 0;
            bool all = true;
            for (int k = 0; k < s->targets.len; k++) {
                const ZTarget *t = ZU_VEC_AT(s->targets, k);
                if (!t->var) continue;
                n++;
                if (!json_object_get(writes, t->var->name)) all = false;
            }
            if (all && n == (int)json_object_size(writes)) return s;
        }
        const ZStmt *r = find_assign(&s->body, act, l, writes);
        if (!r) r = find_assign(&s->els, act, l, writes);
        for (int b = 0; !r && b < s->branches.len; b++)
            r = find_assign(&((ZBranch *)ZU_VEC_AT(s->branches, b))->body, act, l, writes);
        if (r) return r;
    }
    return NULL;
}

/* A value of type t for an output nobody reads. */
static json_t *typed_default(const ZType *t)
{
    switch (t ? t->kind : TY_JSON) {
    case TY_INT: return json_integer(0);
    case TY_FLOAT: return json_real(0.0);
    case TY_BOOL: return json_false();
    case TY_STR: return json_string("");
    case TY_ENUM: {
        const ZParam *p = ZU_VEC_AT(t->enum_decl->members, 0);
        return json_string(p->name);
    }
    default: return json_null();
    }
}

/* The values of act's outputs in an act event's writes, in output order
 * (a new array); NULL when the statement is not found. */
static json_t *outputs(const Case *c, const ZDecl *act, int l, const json_t *writes)
{
    const ZStmt *s = find_assign(&c->comp.wf->body, act, l, writes);
    if (!s) return NULL;
    json_t *out = json_array();
    for (int k = 0; k < act->results.len; k++) {
        const ZParam *r = ZU_VEC_AT(act->results, k);
        const ZTarget *t = k < s->targets.len ? ZU_VEC_AT(s->targets, k) : NULL;
        json_t *v = t && t->var ? json_object_get(writes, t->var->name) : NULL;
        json_array_append_new(out, v ? json_incref(v) : typed_default(r->type));
    }
    return out;
}

static void hex(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) fprintf(f, "%02x", (unsigned char)s[i]);
}

/* v is a value of type t as the runtime writes it (a replay can give
 * nothing else: a mutant with another is not replayed). */
static bool typed(const json_t *v, const ZType *t)
{
    switch (t->kind) {
    case TY_INT: return json_is_integer(v);
    case TY_FLOAT: return json_is_real(v);
    case TY_BOOL: return json_is_boolean(v);
    case TY_STR: return json_is_string(v);
    case TY_ENUM:
        for (int i = 0; json_is_string(v) && i < t->enum_decl->members.len; i++)
            if (!strcmp(((ZParam *)ZU_VEC_AT(t->enum_decl->members, i))->name,
                        json_string_value(v)))
                return true;
        return false;
    default: return v != NULL;
    }
}

/* The --arg text of an input value. */
static char *arg_text(const json_t *v, const ZType *t)
{
    if (t->kind == TY_STR || t->kind == TY_ENUM) return xstrdup(json_string_value(v));
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!s) die("cannot print a value");
    return s;
}

/* Builds the replay's options and files from the mutant: inputs, the
 * scripted model's answers, the human answers, the C actions' results.
 * False when the mutant lacks what a replay needs. */
static bool replay_setup(Case *c, const json_t *mut, Argv *args, char **env)
{
    const ZDecl *wf = c->comp.wf;
    /* the case's options but for inputs, model and answers */
    for (int i = 0; i < c->args.n; i++) {
        const char *a = c->args.v[i];
        if (!strcmp(a, "--arg") || !strcmp(a, "--llm") || !strcmp(a, "--answers")) {
            i++;
            continue;
        }
        av_add(args, a);
    }
    /* per lifeline, its start store and lines */
    json_t *nf = normal_form(mut);
    json_t *starts = json_object_get(nf, "starts"), *per = json_object_get(nf, "lines");
    bool ok = true;
    for (int i = 0; i < wf->params.len && ok; i++) {
        const ZParam *in = ZU_VEC_AT(wf->params, i);
        json_t *st = json_object_get(json_object_get(starts, c->lnames[in->owner_index]), "store");
        json_t *v = json_object_get(st, in->var->name);
        if (!v || !typed(v, in->var->type)) {
            ok = false;
            break;
        }
        char *text = arg_text(v, in->var->type);
        char *a = fmt("%s=%s", in->var->name, text);
        av_add(args, "--arg");
        av_add(args, a);
        free(a);
        free(text);
    }
    char *scripted = fmt("%s/replay.scripted.json", c->dir);
    char *answers = fmt("%s/replay.answers.json", c->dir);
    char *ext = fmt("%s/replay.extern", c->dir);
    json_t *model = json_object(), *human = json_object();
    FILE *xf = fopen(ext, "w");
    if (!xf) die("cannot write %s", ext);
    for (int l = 0; l < c->nl && ok; l++) {
        json_t *seq = json_object_get(per, c->lnames[l]);
        /* open llm calls: retry lines not yet followed by their act */
        json_t *pending = json_object();
        for (size_t i = 0; i < json_array_size(seq) && ok; i++) {
            json_t *e = json_array_get(seq, i);
            const char *an = str_of(e, "action");
            const ZDecl *act = an ? find_action(c, an) : NULL;
            if (!act) continue;
            char *key = fmt("%s.%s", c->lnames[l], act->name);
            if (is_kind(e, "retry")) {
                json_object_set_new(
                    pending, key,
                    json_integer(json_integer_value(json_object_get(pending, key)) + 1));
                free(key);
                continue;
            }
            if (!is_kind(e, "act")) {
                free(key);
                continue;
            }
            json_t *outs = outputs(c, act, l, json_object_get(e, "writes"));
            for (int k = 0; outs && k < act->results.len; k++)
                if (!typed(json_array_get(outs, (size_t)k),
                           ((ZParam *)ZU_VEC_AT(act->results, k))->type)) {
                    json_decref(outs);
                    outs = NULL;
                }
            if (!outs) {
                ok = false;
                free(key);
                break;
            }
            if (act->action == ACT_LLM) {
                json_t *list = json_object_get(model, key);
                if (!list) {
                    list = json_array();
                    json_object_set_new(model, key, list);
                }
                /* each failed attempt: an answer without the outputs */
                json_int_t fails = json_integer_value(json_object_get(e, "attempts")) - 1;
                if (fails < 0 || fails > MAX_REPLAY_ATTEMPTS) {
                    /* more failed attempts than a replay makes */
                    json_decref(outs);
                    free(key);
                    ok = false;
                    break;
                }
                for (json_int_t k = 0; k < fails; k++) json_array_append_new(list, json_object());
                json_object_del(pending, key);
                json_t *ans = json_object();
                for (int k = 0; k < act->results.len; k++) {
                    const ZParam *r = ZU_VEC_AT(act->results, k);
                    json_object_set(ans, r->name, json_array_get(outs, (size_t)k));
                }
                json_array_append_new(list, ans);
            } else if (act->action == ACT_HUMAN) {
                json_t *list = json_object_get(human, key);
                if (!list) {
                    list = json_array();
                    json_object_set_new(human, key, list);
                }
                json_t *ans = json_object();
                if (act->results.len) json_object_set(ans, "value", json_array_get(outs, 0));
                json_array_append_new(list, ans);
            } else if (act->action == ACT_EXTERN_PURE || act->action == ACT_EFFECT) {
                fprintf(xf, "%s", key);
                for (int k = 0; k < act->results.len; k++) {
                    const ZParam *r = ZU_VEC_AT(act->results, k);
                    json_t *v = json_array_get(outs, (size_t)k);
                    switch (r->type->kind) {
                    case TY_STR:
                        fputs("\ts:", xf);
                        hex(xf, json_string_value(v), json_string_length(v));
                        break;
                    case TY_INT:
                        fprintf(xf, "\ti:%" JSON_INTEGER_FORMAT, json_integer_value(v));
                        break;
                    case TY_FLOAT: fprintf(xf, "\tf:%a", json_real_value(v)); break;
                    case TY_BOOL: fprintf(xf, "\tb:%d", json_is_true(v)); break;
                    case TY_ENUM: {
                        int m = 0;
                        for (int q = 0; q < r->type->enum_decl->members.len; q++) {
                            const ZParam *p = ZU_VEC_AT(r->type->enum_decl->members, q);
                            if (!strcmp(p->name, json_string_value(v))) m = q;
                        }
                        fprintf(xf, "\te:%d", m);
                        break;
                    }
                    default: {
                        char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
                        fputs("\tj:", xf);
                        hex(xf, s, strlen(s));
                        free(s);
                    }
                    }
                }
                fputc('\n', xf);
            }
            json_decref(outs);
            free(key);
        }
        /* a call that failed for good: its retried attempts and the last */
        const char *key;
        json_t *cnt;
        json_object_foreach(pending, key, cnt)
        {
            json_t *list = json_object_get(model, key);
            if (!list) {
                list = json_array();
                json_object_set_new(model, key, list);
            }
            for (json_int_t k = 0; k <= json_integer_value(cnt) && k <= MAX_REPLAY_ATTEMPTS; k++)
                json_array_append_new(list, json_object());
        }
        json_decref(pending);
    }
    fclose(xf);
    if (ok && c->has_llm) {
        if (json_dump_file(model, scripted, JSON_COMPACT) != 0) die("cannot write %s", scripted);
        char *spec = fmt("scripted:%s", scripted);
        av_add(args, "--llm");
        av_add(args, spec);
        free(spec);
    }
    if (ok && c->has_human) {
        if (json_dump_file(human, answers, JSON_COMPACT) != 0) die("cannot write %s", answers);
        av_add(args, "--answers");
        av_add(args, answers);
    }
    *env = c->has_extern ? fmt("ZGC_EXTERN_SCRIPT=%s", ext) : NULL;
    json_decref(model);
    json_decref(human);
    json_decref(nf);
    free(scripted);
    free(answers);
    free(ext);
    return ok;
}

/* Runs the workflow again with the mutant's free values; true when a run
 * writes the mutant's run (a workflow with parallel regions: with one of
 * REPLAY_SCHEDULES --schedule seeds too). */
bool replays(Case *c, const json_t *mut, char **why)
{
    Argv args = {0}, cfiles = {0};
    char *env = NULL;
    *why = NULL;
    if (!replay_setup(c, mut, &args, &env)) {
        *why = xstrdup("no replay: the mutant lacks an input or an act event's statement, or "
                       "one of them has a value of another type");
        av_free(&args);
        free(env);
        return false;
    }
    if (c->has_extern) {
        av_add(&cfiles, "tests/mutation/extern_scripted.c");
        if (!c->replay_exe) c->replay_exe = build(c, "replay-build", &cfiles);
    } else {
        for (int i = 0; i < c->cfiles.n; i++) av_add(&cfiles, c->cfiles.v[i]);
        c->replay_exe = c->exe;
    }
    bool ok = false;
    int tries = c->comp.prog->n_pars ? REPLAY_SCHEDULES : 0;
    for (int s = 0; s <= tries && !ok; s++) {
        Argv a = {0};
        run_options(&args, s, &a);
        char *w = NULL;
        json_t *t = record(c, c->replay_exe, &cfiles, &a, env, "replay", &w);
        av_free(&a);
        ok = t && same_run_but_answers(t, mut);
        if (!ok && s == tries) {
            char *txt = t ? trace_text(t) : NULL;
            *why = txt ? fmt("the replay writes another run:\n%s", txt)
                       : fmt("the replay wrote no trace: %s", w ? w : "");
            free(txt);
        }
        free(w);
        json_decref(t);
    }
    av_free(&args);
    av_free(&cfiles);
    free(env);
    return ok;
}
