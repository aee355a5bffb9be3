/* zgtrace-check — checks that a run's trace (--trace FILE, JSON Lines) is a
 * well-formed message sequence chart, with its own code (it shares nothing
 * with the runtime):
 *   - every lifeline's events have indices 1, 2, … in file order;
 *   - every receive matches exactly one send with the same message id, the
 *     same channel, the right endpoints, equal values and equal control tags;
 *     message ids count 1, 2, … per channel in send order and receives
 *     happen in that order (FIFO per channel);
 *   - the causal order (local order + send → receive) is acyclic;
 *   - each event's "vc" equals, for every lifeline, the number of its events
 *     that causally precede or are the event, computed by graph
 *     reachability over the rebuilt MSC.
 * usage: zgtrace-check TRACE.jsonl   (exit 0: well-formed; 1: the first
 * problem is printed; 2: usage) */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Ev {
    int life, index;
    char kind;              /* s r a c */
    const char *msg;        /* message id or NULL */
    json_t *values, *control, *channel;
    const char *peer;
    json_t *vc;
    int match;              /* the matching event (send <-> recv), -1 */
    int prev;               /* previous event on the lifeline, -1 */
} Ev;

static int nlife;
static const char *names[256];

static int life_index(const char *name)
{
    for (int i = 0; i < nlife; i++)
        if (!strcmp(names[i], name)) return i;
    if (nlife == 256) return -1;
    names[nlife] = name;
    return nlife++;
}

static int fail(const char *fmt, const char *a, int line)
{
    fprintf(stderr, "trace: ");
    fprintf(stderr, fmt, a, line);
    fputc('\n', stderr);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: zgtrace-check TRACE.jsonl\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    Ev *ev = NULL;
    int n = 0, cap = 0, line = 0;
    json_t *all = json_array();
    int last_index[256] = {0};
    int last_event[256];
    for (int i = 0; i < 256; i++) last_event[i] = -1;
    char *buf = NULL;
    size_t bcap = 0;
    bool ended = false;
    while (getline(&buf, &bcap, f) > 0) {
        line++;
        json_error_t err;
        json_t *j = json_loads(buf, 0, &err);
        if (!j || !json_is_object(j)) return fail("line %2$d: not a JSON object%1$s", "", line);
        json_array_append_new(all, j);
        const char *kind = json_string_value(json_object_get(j, "kind"));
        if (!kind) return fail("line %2$d: no kind%1$s", "", line);
        if (!strcmp(kind, "start")) {
            const char *l = json_string_value(json_object_get(j, "lifeline"));
            if (!l || life_index(l) < 0) return fail("line %2$d: bad start line%1$s", "", line);
            continue;
        }
        if (!strcmp(kind, "end")) {
            ended = true;
            continue;
        }
        if (ended) return fail("line %2$d: event after the end line%1$s", "", line);
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            ev = realloc(ev, (size_t)cap * sizeof *ev);
        }
        Ev *e = &ev[n];
        memset(e, 0, sizeof *e);
        const char *l = json_string_value(json_object_get(j, "lifeline"));
        if (!l) return fail("line %2$d: event without lifeline%1$s", "", line);
        e->life = life_index(l);
        e->index = (int)json_integer_value(json_object_get(j, "index"));
        e->kind = kind[0];
        if (strcmp(kind, "send") && strcmp(kind, "recv") && strcmp(kind, "act") && strcmp(kind, "choice"))
            return fail("unknown kind `%s` (line %d)", kind, line);
        if (e->index != last_index[e->life] + 1)
            return fail("lifeline %s: index out of sequence (line %d)", l, line);
        last_index[e->life] = e->index;
        e->prev = last_event[e->life];
        last_event[e->life] = n;
        e->match = -1;
        e->vc = json_object_get(j, "vc");
        if (!json_is_object(e->vc)) return fail("lifeline %s: event without vc (line %d)", l, line);
        if (e->kind == 's' || e->kind == 'r') {
            e->msg = json_string_value(json_object_get(j, "msg"));
            e->values = json_object_get(j, "values");
            e->control = json_object_get(j, "control");
            e->channel = json_object_get(j, "channel");
            e->peer = json_string_value(json_object_get(j, e->kind == 's' ? "to" : "from"));
            if (!e->msg || !e->peer || !e->channel)
                return fail("lifeline %s: message event without msg/peer/channel (line %d)", l, line);
        }
        n++;
    }
    free(buf);
    fclose(f);
    /* match receives to sends by message id */
    for (int i = 0; i < n; i++) {
        if (ev[i].kind != 'r') continue;
        int found = -1;
        for (int k = 0; k < n; k++)
            if (ev[k].kind == 's' && !strcmp(ev[k].msg, ev[i].msg)) {
                if (found >= 0) return fail("message %s sent twice%.0d", ev[i].msg, 0);
                found = k;
            }
        if (found < 0) return fail("receive of %s without a send%.0d", ev[i].msg, 0);
        if (ev[found].match >= 0) return fail("message %s received twice%.0d", ev[i].msg, 0);
        Ev *s = &ev[found], *r = &ev[i];
        if (strcmp(names[s->life], r->peer) || strcmp(names[r->life], s->peer))
            return fail("message %s: endpoints disagree%.0d", r->msg, 0);
        if (!json_equal(s->values, r->values)) return fail("message %s: values differ%.0d", r->msg, 0);
        if (!json_equal(s->control, r->control)) return fail("message %s: control tags differ%.0d", r->msg, 0);
        if (!json_equal(s->channel, r->channel)) return fail("message %s: channels differ%.0d", r->msg, 0);
        s->match = i;
        r->match = found;
    }
    /* FIFO: on each channel, the k-th send has id #k and receives happen in send order */
    for (int i = 0; i < n; i++) {
        if (ev[i].kind != 's') continue;
        const char *hash = strrchr(ev[i].msg, '#');
        if (!hash) return fail("message id %s has no #n%.0d", ev[i].msg, 0);
        int k = atoi(hash + 1), earlier = 0;
        for (int p = ev[i].prev; p >= 0; p = ev[p].prev)
            if (ev[p].kind == 's' && !strncmp(ev[p].msg, ev[i].msg, (size_t)(hash - ev[i].msg + 1)) &&
                strlen(ev[p].msg) > (size_t)(hash - ev[i].msg))
                earlier++;
        if (k != earlier + 1) return fail("message %s is not numbered in send order%.0d", ev[i].msg, 0);
        /* its receive comes after the receive of the previous message on the channel */
        if (ev[i].match < 0) continue;
        for (int p = ev[i].prev; p >= 0; p = ev[p].prev) {
            if (ev[p].kind != 's' || strncmp(ev[p].msg, ev[i].msg, (size_t)(hash - ev[i].msg + 1))) continue;
            if (ev[p].match < 0) return fail("message %s received before an earlier one on its channel%.0d", ev[i].msg, 0);
            if (ev[ev[p].match].index >= ev[ev[i].match].index)
                return fail("message %s overtook an earlier one on its channel%.0d", ev[i].msg, 0);
            break;
        }
    }
    /* causal past by reachability: topological order (Kahn), detects cycles */
    int *indeg = calloc((size_t)n, sizeof *indeg), *order = malloc((size_t)n * sizeof *order);
    int *next_local = malloc((size_t)n * sizeof *next_local);
    for (int i = 0; i < n; i++) next_local[i] = -1;
    for (int i = 0; i < n; i++) {
        if (ev[i].prev >= 0) {
            indeg[i]++;
            next_local[ev[i].prev] = i;
        }
        if (ev[i].kind == 'r') indeg[i]++;
    }
    int head = 0, tail = 0;
    for (int i = 0; i < n; i++)
        if (!indeg[i]) order[tail++] = i;
    while (head < tail) {
        int u = order[head++];
        int succ[2] = {next_local[u], ev[u].kind == 's' ? ev[u].match : -1};
        for (int k = 0; k < 2; k++)
            if (succ[k] >= 0 && --indeg[succ[k]] == 0) order[tail++] = succ[k];
    }
    if (tail != n) return fail("the causal order has a cycle%s%.0d", "", 0);
    /* vc[e][B] = max over predecessors, +1 on e's own lifeline */
    int *vc = calloc((size_t)n * (size_t)nlife, sizeof *vc);
    for (int t = 0; t < n; t++) {
        int u = order[t];
        int *mine = vc + (size_t)u * (size_t)nlife;
        int preds[2] = {ev[u].prev, ev[u].kind == 'r' ? ev[u].match : -1};
        for (int k = 0; k < 2; k++)
            if (preds[k] >= 0)
                for (int b = 0; b < nlife; b++) {
                    int v = vc[(size_t)preds[k] * (size_t)nlife + (size_t)b];
                    if (v > mine[b]) mine[b] = v;
                }
        mine[ev[u].life] = ev[u].index;
        for (int b = 0; b < nlife; b++) {
            json_t *got = json_object_get(ev[u].vc, names[b]);
            long long g = got ? json_integer_value(got) : 0;
            if (g != mine[b]) {
                fprintf(stderr, "trace: lifeline %s event %d: vc[%s] = %lld, the MSC says %d\n",
                        names[ev[u].life], ev[u].index, names[b], g, mine[b]);
                return 1;
            }
        }
    }
    printf("trace: %d events on %d lifelines: well-formed\n", n, nlife);
    free(vc);
    free(indeg);
    free(order);
    free(next_local);
    free(ev);
    json_decref(all);
    return 0;
}
