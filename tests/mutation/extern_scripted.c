/* extern_scripted.c — C actions for examples/extern/score.zg whose
 * results come from a file, the way a scripted model's answers do: the
 * mutation campaign (campaign.c) builds score.zg with these instead of
 * examples/extern/actions.c to replay a trace whose extern results it
 * changed.  Any C code may stand behind an `extern pure` or `effect`
 * action, so a run with these results is a run that can happen.
 *
 * The file (ZGC_EXTERN_SCRIPT) has one line per call, in each
 * lifeline's call order:
 *
 *   Lifeline.action<TAB>T:V<TAB>T:V…      one T:V per result
 *
 * T is s (V: the string's bytes in hex), i (decimal), f (a C float
 * literal, read with strtod), b (0 or 1), e (the member's index) or j
 * (the JSON text in hex).  The k-th call of action a on lifeline L takes
 * the k-th line of "L.a"; a missing line fails the call. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zgrt.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static char **lines;
static int nlines, loaded;
static char *used; /* per line: taken by a call */

static void load(void)
{
    loaded = 1;
    const char *path = getenv("ZGC_EXTERN_SCRIPT");
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f) return;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) > 0) {
        if (line[n - 1] == '\n') line[n - 1] = 0;
        char **nl = realloc(lines, sizeof *lines * (size_t)(nlines + 1));
        if (!nl) break;
        lines = nl;
        lines[nlines++] = strdup(line);
    }
    free(line);
    fclose(f);
    used = calloc((size_t)(nlines ? nlines : 1), 1);
}

/* The bytes of hex text h (NUL-terminated copy); NULL when malformed. */
static char *unhex(const char *h, size_t n)
{
    if (n % 2) return NULL;
    char *s = malloc(n / 2 + 1);
    if (!s) return NULL;
    for (size_t i = 0; i < n; i += 2) {
        unsigned v;
        if (sscanf(h + i, "%2x", &v) != 1) {
            free(s);
            return NULL;
        }
        s[i / 2] = (char)v;
    }
    s[n / 2] = 0;
    return s;
}

static int scripted(zgrt_call *call)
{
    char key[256];
    snprintf(key, sizeof key, "%s.%s\t", zgrt_call_lifeline(call), zgrt_call_action(call));
    char *line = NULL;
    pthread_mutex_lock(&mu);
    if (!loaded) load();
    for (int i = 0; i < nlines && !line; i++)
        if (!used[i] && !strncmp(lines[i], key, strlen(key))) {
            used[i] = 1;
            line = lines[i];
        }
    pthread_mutex_unlock(&mu);
    if (!line) return zgrt_fail(call, "no scripted result left for %s", key);
    const char *p = line + strlen(key);
    for (int k = 0; k < zgrt_resc(call); k++) {
        const char *end = strchr(p, '\t');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n < 2 || p[1] != ':') return zgrt_fail(call, "bad scripted result %d", k + 1);
        char *v = strndup(p + 2, n - 2);
        if (!v) return zgrt_fail(call, "out of memory");
        char *s;
        switch (p[0]) {
        case 's':
        case 'j':
            s = unhex(v, n - 2);
            if (!s) {
                free(v);
                return zgrt_fail(call, "bad scripted result %d", k + 1);
            }
            if (p[0] == 's')
                zgrt_ret_str(call, k, s);
            else if (zgrt_ret_json(call, k, s) < 0) {
                free(s);
                free(v);
                return -1;
            }
            free(s);
            break;
        case 'i': zgrt_ret_int(call, k, strtoll(v, NULL, 10)); break;
        case 'f': zgrt_ret_float(call, k, strtod(v, NULL)); break;
        case 'b': zgrt_ret_bool(call, k, v[0] == '1'); break;
        case 'e': zgrt_ret_enum(call, k, atoi(v)); break;
        default: free(v); return zgrt_fail(call, "bad scripted result %d", k + 1);
        }
        free(v);
        p = end ? end + 1 : p + n;
    }
    return 0;
}

int zg_readability(zgrt_call *call);
int zg_readability(zgrt_call *call) { return scripted(call); }
int zg_publish(zgrt_call *call);
int zg_publish(zgrt_call *call) { return scripted(call); }
