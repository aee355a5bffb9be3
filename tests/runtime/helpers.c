/* helpers.c — running programs with captured output, and the trace
 * checker of the runtime tests (see helpers.h). */
#include "helpers.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

zgrt_value v_str(zgrt_ctx *ctx, const char *s)
{
    zgrt_value v = {.tag = ZGRT_STR};
    v.u.s = zri_str(zri_ctx_heap(ctx), s, strlen(s));
    return v;
}

char *temp_path(const char *stem)
{
    char *p = malloc(256);
    snprintf(p, 256, "/tmp/zgrt-test-%s-XXXXXX", stem);
    int fd = mkstemp(p);
    if (fd >= 0) close(fd);
    return p;
}

char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, len = 0;
    char *s = malloc(cap);
    size_t n;
    while ((n = fread(s + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len < 2) s = realloc(s, cap *= 2);
    }
    s[len] = '\0';
    fclose(f);
    return s;
}

run_out run_prog(const zgrt_program *p, const char *const *args)
{
    run_out r = {0};
    char *po = temp_path("out"), *pe = temp_path("err");
    const char *argv[64];
    int argc = 0;
    argv[argc++] = "out/prog";
    for (int i = 0; args && args[i] && argc < 63; i++) argv[argc++] = args[i];
    argv[argc] = NULL;
    fflush(stdout);
    fflush(stderr);
    int so = dup(1), se = dup(2);
    int fo = open(po, O_WRONLY | O_TRUNC), fe = open(pe, O_WRONLY | O_TRUNC);
    dup2(fo, 1);
    dup2(fe, 2);
    close(fo);
    close(fe);
    r.status = zgrt_main(p, argc, (char **)argv);
    fflush(stdout);
    fflush(stderr);
    dup2(so, 1);
    dup2(se, 2);
    close(so);
    close(se);
    r.out = read_file(po);
    r.err = read_file(pe);
    unlink(po);
    unlink(pe);
    free(po);
    free(pe);
    if (!r.out) r.out = strdup("");
    if (!r.err) r.err = strdup("");
    return r;
}

void run_out_free(run_out *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

json_t *read_jsonl(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    json_t *arr = json_array();
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        json_error_t e;
        json_t *j = json_loads(line, 0, &e);
        if (!j) {
            json_decref(arr);
            arr = NULL;
            break;
        }
        json_array_append_new(arr, j);
    }
    free(line);
    fclose(f);
    return arr;
}

/* ---- the trace checker ------------------------------------------------ */

typedef struct tev {
    json_t *j;
    int life; /* index in names */
    int index;
    char kind; /* s r a c */
    const char *msg;
    int prev;  /* previous event on the lifeline, or -1 */
    int match; /* send <-> receive */
} tev;

static int bad(char *why, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
    return -1;
}

int check_trace(json_t *lines, char *why, size_t whylen)
{
    size_t nlines = json_array_size(lines);
    const char *names[64];
    int nnames = 0, rc = 0;
    tev *ev = calloc(nlines + 1, sizeof *ev);
    int nev = 0;
    int last[64];
    int *vcs = NULL;
    char *seen = NULL;
    int *stack = NULL;
    for (int i = 0; i < 64; i++) last[i] = -1;
    if (nlines < 2) {
        rc = bad(why, whylen, "trace too short");
        goto out;
    }
    /* start lines first */
    size_t i = 0;
    for (; i < nlines; i++) {
        json_t *j = json_array_get(lines, i);
        const char *k = json_string_value(json_object_get(j, "kind"));
        if (!k || strcmp(k, "start")) break;
        const char *l = json_string_value(json_object_get(j, "lifeline"));
        if (!l || !json_is_object(json_object_get(j, "store")) || nnames == 64) {
            rc = bad(why, whylen, "line %zu: bad start line", i + 1);
            goto out;
        }
        names[nnames++] = l;
    }
    if (!nnames) {
        rc = bad(why, whylen, "no start lines");
        goto out;
    }
    for (; i < nlines; i++) {
        json_t *j = json_array_get(lines, i);
        const char *k = json_string_value(json_object_get(j, "kind"));
        if (!k) {
            rc = bad(why, whylen, "line %zu: no kind", i + 1);
            goto out;
        }
        if (!strcmp(k, "end")) {
            if (i != nlines - 1) {
                rc = bad(why, whylen, "line %zu: end line is not last", i + 1);
                goto out;
            }
            if (!json_object_get(j, "result") && !json_object_get(j, "error")) {
                rc = bad(why, whylen, "end line without result or error");
                goto out;
            }
            break;
        }
        tev *e = &ev[nev];
        e->j = j;
        const char *l = json_string_value(json_object_get(j, "lifeline"));
        e->life = -1;
        for (int n = 0; l && n < nnames; n++)
            if (!strcmp(names[n], l)) e->life = n;
        if (e->life < 0) {
            rc = bad(why, whylen, "line %zu: unknown lifeline", i + 1);
            goto out;
        }
        if (!strcmp(k, "send"))
            e->kind = 's';
        else if (!strcmp(k, "recv"))
            e->kind = 'r';
        else if (!strcmp(k, "act"))
            e->kind = 'a';
        else if (!strcmp(k, "choice"))
            e->kind = 'c';
        else {
            rc = bad(why, whylen, "line %zu: unknown kind %s", i + 1, k);
            goto out;
        }
        e->index = (int)json_integer_value(json_object_get(j, "index"));
        int expect = last[e->life] < 0 ? 1 : ev[last[e->life]].index + 1;
        if (e->index != expect) {
            rc = bad(why, whylen, "line %zu: %s index %d, expected %d", i + 1, l, e->index, expect);
            goto out;
        }
        e->prev = last[e->life];
        last[e->life] = nev;
        e->match = -1;
        if (!json_is_object(json_object_get(j, "writes")) ||
            !json_is_object(json_object_get(j, "vc"))) {
            rc = bad(why, whylen, "line %zu: writes/vc missing", i + 1);
            goto out;
        }
        if (e->kind == 's' || e->kind == 'r') {
            e->msg = json_string_value(json_object_get(j, "msg"));
            if (!e->msg || !json_is_array(json_object_get(j, "values")) ||
                !json_object_get(j, "control") || !json_is_string(json_object_get(j, "channel")) ||
                !json_is_string(json_object_get(j, e->kind == 's' ? "to" : "from"))) {
                rc = bad(why, whylen, "line %zu: incomplete message event", i + 1);
                goto out;
            }
        }
        if (e->kind == 'a' &&
            (!json_object_get(j, "action") || !json_is_integer(json_object_get(j, "attempts")))) {
            rc = bad(why, whylen, "line %zu: incomplete act event", i + 1);
            goto out;
        }
        if (e->kind == 'c' && (!json_is_string(json_object_get(j, "construct")) ||
                               !json_is_boolean(json_object_get(j, "value")))) {
            rc = bad(why, whylen, "line %zu: incomplete choice event", i + 1);
            goto out;
        }
        nev++;
    }
    if (i == nlines) {
        rc = bad(why, whylen, "no end line");
        goto out;
    }
    /* receives match sends */
    for (int r = 0; r < nev; r++) {
        if (ev[r].kind != 'r') continue;
        int s = -1;
        for (int k = 0; k < nev; k++)
            if (ev[k].kind == 's' && !strcmp(ev[k].msg, ev[r].msg)) {
                if (s >= 0) {
                    rc = bad(why, whylen, "message %s sent twice", ev[r].msg);
                    goto out;
                }
                s = k;
            }
        if (s < 0 || ev[s].match >= 0) {
            rc = bad(why, whylen, "receive of %s without its own send", ev[r].msg);
            goto out;
        }
        json_t *sj = ev[s].j, *rj = ev[r].j;
        if (strcmp(json_string_value(json_object_get(sj, "to")), names[ev[r].life]) ||
            strcmp(json_string_value(json_object_get(rj, "from")), names[ev[s].life]) ||
            !json_equal(json_object_get(sj, "channel"), json_object_get(rj, "channel")) ||
            !json_equal(json_object_get(sj, "values"), json_object_get(rj, "values")) ||
            !json_equal(json_object_get(sj, "control"), json_object_get(rj, "control"))) {
            rc = bad(why, whylen, "message %s: send and receive disagree", ev[r].msg);
            goto out;
        }
        /* the id is <from>><to>@<channel>#<n> */
        char id[512];
        snprintf(id, sizeof id, "%s>%s@%s#", names[ev[s].life], names[ev[r].life],
                 json_string_value(json_object_get(sj, "channel")));
        if (strncmp(ev[r].msg, id, strlen(id))) {
            rc = bad(why, whylen, "message id %s is not %s<n>", ev[r].msg, id);
            goto out;
        }
        ev[s].match = r;
        ev[r].match = s;
    }
    /* FIFO numbering per channel: the k-th send on a channel is #k, and its
     * receive comes after the receive of #k-1 */
    for (int s = 0; s < nev; s++) {
        if (ev[s].kind != 's') continue;
        const char *hash = strrchr(ev[s].msg, '#');
        size_t plen = (size_t)(hash - ev[s].msg) + 1;
        int before = 0, prev_send = -1;
        for (int p = ev[s].prev; p >= 0; p = ev[p].prev)
            if (ev[p].kind == 's' && !strncmp(ev[p].msg, ev[s].msg, plen) &&
                strchr(ev[p].msg + plen, '#') == NULL) {
                if (prev_send < 0) prev_send = p;
                before++;
            }
        if (atoi(hash + 1) != before + 1) {
            rc = bad(why, whylen, "message %s is not numbered in send order", ev[s].msg);
            goto out;
        }
        if (ev[s].match >= 0 && prev_send >= 0 &&
            (ev[prev_send].match < 0 || ev[ev[prev_send].match].index >= ev[ev[s].match].index)) {
            rc = bad(why, whylen, "message %s overtook an earlier one", ev[s].msg);
            goto out;
        }
    }
    /* vector clocks: the causal past of every event by backward search */
    vcs = calloc((size_t)nnames, sizeof *vcs);
    seen = calloc((size_t)nev + 1, 1);
    stack = calloc((size_t)nev + 1, sizeof *stack);
    for (int e = 0; e < nev; e++) {
        memset(seen, 0, (size_t)nev);
        memset(vcs, 0, (size_t)nnames * sizeof *vcs);
        int sp = 0;
        stack[sp++] = e;
        seen[e] = 1;
        while (sp) {
            int u = stack[--sp];
            vcs[ev[u].life]++;
            int preds[2] = {ev[u].prev, ev[u].kind == 'r' ? ev[u].match : -1};
            for (int k = 0; k < 2; k++)
                if (preds[k] >= 0 && !seen[preds[k]]) {
                    seen[preds[k]] = 1;
                    stack[sp++] = preds[k];
                }
        }
        json_t *vc = json_object_get(ev[e].j, "vc");
        if ((int)json_object_size(vc) != nnames) {
            rc = bad(why, whylen, "%s event %d: vc does not name every lifeline", names[ev[e].life],
                     ev[e].index);
            goto out;
        }
        for (int b = 0; b < nnames; b++) {
            json_t *g = json_object_get(vc, names[b]);
            if (!json_is_integer(g) || json_integer_value(g) != vcs[b]) {
                rc = bad(why, whylen, "%s event %d: vc[%s] = %lld, causal past has %d",
                         names[ev[e].life], ev[e].index, names[b],
                         g ? (long long)json_integer_value(g) : -1LL, vcs[b]);
                goto out;
            }
        }
    }
out:
    free(vcs);
    free(seen);
    free(stack);
    free(ev);
    return rc;
}
