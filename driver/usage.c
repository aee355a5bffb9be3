/* usage.c — errors of a bad command line: see usage.h. */
#include "usage.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suggest.h"

/* The command a usage text is for: "usage: zgc run …" gives "run"; the
 * main usage ("usage: zgc <command> …") gives "". */
static void command_of(const char *usage, char *out, size_t n)
{
    out[0] = 0;
    const char *p = strstr(usage, "usage: zgc ");
    if (!p) return;
    p += strlen("usage: zgc ");
    size_t k = 0;
    while (p[k] && (isalnum((unsigned char)p[k]) || p[k] == '-') && k + 1 < n) k++;
    memcpy(out, p, k);
    out[k] = 0;
}

/* Offers the k bytes at w to s.  A word of the usage text is copied to
 * try it, and the best one kept in a buffer of its own, so that the
 * suggestion outlives the loops below. */
static void offer(ZvSuggest *s, const char *w, size_t k)
{
    static char best[64];
    char word[64];
    if (k == 0 || k >= sizeof word) return;
    memcpy(word, w, k);
    word[k] = 0;
    const char *before = s->best;
    zv_suggest_try(s, word);
    if (s->best != before) {
        memcpy(best, word, k + 1);
        s->best = best;
    }
}

/* The option words of a usage text ("--workflow", "-O2", "-o"), offered
 * to s one by one. */
static void try_options(ZvSuggest *s, const char *usage)
{
    for (const char *p = usage; *p; p++) {
        if (*p != '-' || (p > usage && !isspace((unsigned char)p[-1]) && p[-1] != '[' &&
                          p[-1] != '(' && p[-1] != '|' && p[-1] != ','))
            continue;
        size_t k = 1;
        while (p[k] && (isalnum((unsigned char)p[k]) || p[k] == '-')) k++;
        if (k < 2 || !isalnum((unsigned char)p[k - 1])) continue;
        offer(s, p, k);
        p += k - 1;
    }
}

/* The command names of the main usage text: the first word of each line
 * of its "commands:" section. */
static void try_commands(ZvSuggest *s, const char *usage)
{
    const char *p = strstr(usage, "commands:\n");
    if (!p) return;
    p += strlen("commands:\n");
    while (*p == ' ') {
        const char *line_end = strchr(p, '\n');
        if (!line_end) break;
        const char *w = p;
        while (*w == ' ') w++;
        size_t k = 0;
        while (w[k] && (isalnum((unsigned char)w[k]) || w[k] == '-')) k++;
        if (w - p <= 4) offer(s, w, k); /* a command, not a continued description */
        p = line_end + 1;
    }
}

/* The subcommands of a command's usage text: the word after each
 * "zgc COMMAND " and its alternatives ("zgc runs list", "zgc cache dir |
 * clean"). */
static void try_subcommands(ZvSuggest *s, const char *usage, const char *cmd)
{
    char head[80];
    snprintf(head, sizeof head, "zgc %s ", cmd);
    for (const char *p = strstr(usage, head); p; p = strstr(p + 1, head)) {
        const char *w = p + strlen(head);
        for (;;) {
            size_t k = 0;
            while (w[k] && (isalnum((unsigned char)w[k]) || w[k] == '-') && k < 63) k++;
            if (k == 0 || w[0] == '-') break;
            offer(s, w, k);
            w += k;
            while (*w == ' ') w++;
            if (*w != '|') break;
            w++;
            while (*w == ' ') w++;
        }
    }
}

int zus_error(const char *usage, const char *fmt, const char *arg)
{
    fputs("zgc: error: ", stderr);
    fprintf(stderr, fmt, arg);
    char cmd[64];
    command_of(usage, cmd, sizeof cmd);
    ZvSuggest s;
    zv_suggest_init(&s, arg ? arg : "");
    if (arg && !strncmp(fmt, "unknown option", 14)) {
        zv_suggest_init_until(&s, arg, "="); /* --opt=value: the option's name */
        try_options(&s, usage);
    } else if (arg && !strncmp(fmt, "unknown command", 15)) {
        try_commands(&s, usage);
    } else if (arg && !strncmp(fmt, "unknown ", 8) && strstr(fmt, " command")) {
        try_subcommands(&s, usage, cmd);
    }
    if (s.best) fprintf(stderr, "; did you mean `%s`?", s.best);
    fputc('\n', stderr);
    if (cmd[0])
        fprintf(stderr, "(see `zgc %s --help` for its options)\n", cmd);
    else
        fputs("(see `zgc --help` for the commands)\n", stderr);
    return 2;
}
