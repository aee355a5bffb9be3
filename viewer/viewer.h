/* viewer.h — seeing runs and workflows (prefix zvw_): `zgc view` and `zgc
 * trace show`.  A tool on top of the compiler's pipeline, like the oracle:
 * it reads traces as the documented format (docs/runtime.md, "Trace
 * format"; JSON through jansson), never through the runtime's code, and
 * workflows through the compiler's AST and local programs.
 *
 *   trace.c     reading a trace: every line checked (FILE:LINE errors),
 *               events ordered consistently with causality (rows)
 *   page.c      the page: viewer/page/index.html with viewer.css, viewer.js
 *               and the data inlined (the files are embedded at build time:
 *               cmake/EmbedPage.cmake); trace pages
 *   workflow.c  workflow pages: the global workflow's statements, or one
 *               lifeline's projected local program
 *   show.c      `zgc trace show`: the trace as a table for terminals
 *
 * The page is self-contained (inline CSS and script, no network access) and
 * its data is JSON inside <script type="application/json">, with every `<`,
 * `>` and `&` written as a \u escape, so no value can end the element or
 * open markup (zvw_put_json).
 *
 * Errors: a function that can fail returns 0 on success and -1 on failure
 * with a one-line message in the caller's buffer (err, errlen; no "zgc:
 * error:" prefix); it prints nothing.  The caller (driver/main.c) prints
 * "zgc: error: MESSAGE" and exits 1.  Out of memory: zu_oom.
 */
#ifndef ZGC_VIEWER_H
#define ZGC_VIEWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "zgc.h"

/* ---- trace.c ------------------------------------------------------------ */

/* One line of a trace, checked: its JSON (a jansson json_t *, owned) and
 * where it is. */
typedef struct ZvwLine {
    void *json;
    int lineno;      /* 1-based line in the file */
    size_t off, len; /* its text in ZvwTrace.text, without the line break */
    const char *kind;
    int lifeline;      /* index in ZvwTrace.lifelines, or -1 (end lines, and
                        resume lines of every lifeline) */
    long long index;   /* events: the event's index on its lifeline; else 0 */
    bool event;        /* send, recv, act or choice */
    long row;          /* events: its row (below); else -1 */
    long long attempt; /* events of a durable run: "run_attempt"; else 0 */
} ZvwLine;

typedef struct ZvwTrace {
    const char *path;
    char *text; /* the file (malloc'd) */
    size_t len;
    int nlines;
    ZvwLine *lines; /* the non-blank lines, in file order */
    int nlifelines;
    const char **lifelines; /* in the order of the start lines, then of the
                               clocks (declaration order) */
    long nrows;             /* rows used by the events */
    int nevents, nmessages;
    int nresumes; /* resume lines: a durable run resumed */
    bool durable; /* some event has "run_attempt" */
} ZvwTrace;

/* Reads and checks a trace: every non-blank line a JSON object with a
 * known "kind" and the fields of its kind; each lifeline's events numbered
 * 1, 2, … without a gap or a repeat; no message id sent twice; a durable
 * run's resume lines and "run_attempt" fields well formed.  Then gives
 * every event a row: one below its lifeline's previous event and, for a
 * receive, one below its send (the longest causal path to it), so a
 * receive is never above its send; a receive whose send is not in the
 * trace (a per-lifeline trace) follows its lifeline only.  -1 with
 * "PATH:LINE: what is wrong" in err (a causal cycle names a line on it);
 * t is then empty (zvw_trace_free may still be called). */
int zvw_trace_read(ZvwTrace *t, const char *path, char *err, size_t errlen);
void zvw_trace_free(ZvwTrace *t);

/* ---- page.c -------------------------------------------------------------- */

/* Writes JSON text to out with `<`, `>` and `&` as \u003c, \u003e, \u0026:
 * safe inside a <script> element (they occur in JSON text only inside
 * strings, where the escapes mean the same).  Returns 0, or -1 when the
 * write fails. */
int zvw_put_json(FILE *out, const char *json, size_t len);

/* Writes the page; `data` writes the JSON of the data element (with
 * zvw_put_json) and returns 0 or -1.  Returns 0, or -1 when a write
 * failed. */
int zvw_page_write(FILE *out, int (*data)(FILE *out, void *user), void *user);

/* The page of a trace: {"mode":"trace","title":T,"lines":[…]}, with
 * "guards" when guards (JSON text: zvw_guards_json) is not NULL. */
int zvw_trace_page(FILE *out, const ZvwTrace *t, const char *title, const char *guards);

/* Writes the page through a temporary file renamed into place (`-` is
 * stdout), so that `path` is whole or absent.  write_page returns 0 or -1. */
int zvw_write_file(const char *path, int (*write_page)(FILE *out, void *user), void *user,
                   char *err, size_t errlen);

/* ---- workflow.c ------------------------------------------------------------ */

/* The page of a compiled workflow (after ZC_PROJECT): its statements, or
 * with lifeline >= 0 that lifeline's local program. */
int zvw_workflow_page(FILE *out, const ZCompilation *c, int lifeline);

/* The guards of a compiled workflow (after ZC_GUARDS) as JSON text
 * (malloc'd): {"if#1":{"owner":"A","guard":"n < 3","cpl":"…"|null,
 * "line":9}, …}, for a trace page's decisions. */
char *zvw_guards_json(const ZCompilation *c);

/* ---- show.c ------------------------------------------------------------------ */

typedef struct ZvwShowOptions {
    bool color;           /* ANSI colours */
    bool by_lifeline;     /* one section per lifeline instead of interleaved */
    const char *lifeline; /* only this lifeline, or NULL */
    int width;            /* the longest value text before it is cut; 0: whole */
} ZvwShowOptions;

/* Prints the trace as a table.  Returns 0, or -1 with a message in err
 * (an unknown lifeline, a failed write). */
int zvw_show(FILE *out, const ZvwTrace *t, const ZvwShowOptions *o, char *err, size_t errlen);

#endif
