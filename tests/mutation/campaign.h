/* campaign.h — the mutation campaign's table of contents (campaign.c has
 * the overview): the cases and their runs (campaign.c), the arguments
 * that an accepted mutant is a run that can happen (proofs.c), the
 * mutations (mutate.c). */
#ifndef ZGC_MUTATION_CAMPAIGN_H
#define ZGC_MUTATION_CAMPAIGN_H

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "grammar.h"
#include "oracle.h"
#include "zgc.h"

#define RUN_TIMEOUT_S 60
#define REPLAY_SCHEDULES 40
#define MAX_REPLAY_ATTEMPTS 1000 /* failed attempts a replay's scripted model gives */

/* ---- campaign.c: helpers, processes, cases, runs, the oracle ----------- */

typedef struct Argv {
    char **v;
    int n, cap;
} Argv;

typedef struct Case {
    int no;
    char *text;  /* the case's line */
    char *mode;  /* single, segments, merged */
    char *src;   /* the workflow, relative to the root */
    Argv cfiles; /* C files of extern and effect actions */
    Argv args;   /* run options */
    char *dir;   /* its work directory */
    ZtModel *model;
    ZCompilation comp; /* the workflow's declarations, for replays */
    const char *wf;    /* the workflow's name */
    int nl;
    const char **lnames;
    bool has_llm, has_human, has_extern;
    char *exe;        /* the build's directory */
    char *replay_exe; /* a build with extern_scripted.c, when it has C actions */
    json_t *orig;     /* the recorded trace: an array of line objects */
    /* per class */
    long checked, rejected, reordered, stopped, diagnostics, recorded, replayed, unproven;
} Case;

typedef struct Campaign {
    const char *zgc, *root, *work;
    double sample;
    bool verbose;
    Case *cases;
    int ncases;
    long unproven_shown;
} Campaign;

extern Campaign K;

void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
char *xstrdup(const char *s);
char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
char *slurp(const char *path, size_t *len);
/* The campaign's deterministic generator (splitmix64, seeded per case). */
uint64_t rnd(void);
void av_add(Argv *a, const char *s);
void av_free(Argv *a);
/* The run options of a recording: base, then --timeout 30 (a hung run is
 * an error, not a hung test) and, for schedule > 0, --schedule. */
void run_options(const Argv *base, int schedule, Argv *out);
const ZDecl *find_action(const Case *c, const char *name);
/* zgc build SRC CFILES -o DIR (shared by the cases of one workflow); the
 * directory. */
char *build(Case *c, const char *name, const Argv *cfiles);
/* Runs the case in its mode (exe_dir: the build; cfiles: for `zgc run
 * --processes`) with options args and env (NAME=VALUE or NULL); the
 * trace's lines, or NULL with the reason in *why. */
json_t *record(Case *c, const char *exe_dir, const Argv *cfiles, const Argv *args, const char *env,
               const char *tag, char **why);
/* The trace as JSON Lines text (malloc'd). */
char *trace_text(const json_t *lines);
/* Checks mutant `mut` (consumed) of case c, described by `what`: the
 * oracle's answer, then the proof of an accepted one. */
void try_mutant(Case *c, json_t *mut, const char *what);

/* ---- proofs.c: the arguments ------------------------------------------- */

const char *str_of(const json_t *o, const char *key);
bool is_kind(const json_t *o, const char *k);
/* The same lines, as JSON values. */
bool same_lines(const json_t *a, const json_t *b);
/* reordered: the same run, lines of different lifelines in another order. */
bool same_run(const json_t *a, const json_t *b);
/* diagnostics: only an "error" text or a retry's "delay" differs. */
bool only_diagnostics(const json_t *orig, const json_t *mut);
/* recorded: only an event's optional recorded texts differ (its raw
 * "answer" changed or removed; its "prompt", "question" or "coregion"
 * removed). */
bool only_recorded(const json_t *orig, const json_t *mut);
/* The same run but for the events' raw "answer" texts (replays). */
bool same_run_but_answers(const json_t *a, const json_t *b);
/* stopped: the original run stopped at a consistent cut. */
bool is_stopped(const json_t *orig, const json_t *mut);
/* replayed: a run with the mutant's free values writes the mutant's run;
 * false with the reason in *why (malloc'd). */
bool replays(Case *c, const json_t *mut, char **why);

/* ---- mutate.c: the mutations ------------------------------------------- */

/* Every mutation of c->orig, each handed to try_mutant. */
void mutate_case(Case *c);

#endif
