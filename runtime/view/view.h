/* view.h — the live view of a run (prefix zrv_): a tiny HTTP server on the
 * loopback address that serves the viewer page (viewer/page/, embedded at
 * build time: cmake/EmbedPage.cmake) and streams the run's trace lines to
 * it as Server-Sent Events.
 *
 * It knows nothing of runs: it is given lines (the trace's JSON Lines,
 * formatted by whoever observes the run: runtime/main.c for a built
 * executable, driver/launch.c for `zgc run --processes`) and never looks
 * into them.  It depends on libc and pthreads only, so both can link it.
 *
 *   GET /TOKEN/         the page, with {"mode":"live","title":…,"lifelines":[…]}
 *   GET /TOKEN/events   text/event-stream: every line pushed so far, then each
 *                       new one, as `id: N` / `data: LINE`; a reconnecting
 *                       browser's Last-Event-ID resumes after line N
 *   anything else       404 (a wrong token too)
 *
 * TOKEN is 128 random bits (getrandom), so only who reads the printed URL
 * can look.  One thread of its own serves every connection with
 * non-blocking sockets; a push only appends the line to the history under
 * a mutex (held for a memcpy) and wakes that thread, so a lifeline never
 * waits for a browser.  A client that accepts no bytes for
 * ZRV_STALL_S seconds, or goes away, is dropped; the history is kept in
 * memory up to ZRV_HISTORY_MAX bytes, after which lines are dropped and
 * the page says so (the run goes on, and its trace file has everything).
 *
 * Errors: zrv_open returns NULL with a one-line message in err (rt.h's
 * convention); nothing else fails: a client's failure only drops it.
 */
#ifndef ZGRT_VIEW_H
#define ZGRT_VIEW_H

#include <stddef.h>

typedef struct zrv_server zrv_server;

/* Listens on addr: NULL or "" for 127.0.0.1 on a random port, or
 * "PORT", "HOST:PORT" with HOST 127.0.0.1 (any of 127/8), localhost or
 * [::1] (the view serves the loopback address only: prompts and answers
 * are in it).  title and the lifelines' names go into the page.  The URL
 * (http://HOST:PORT/TOKEN/) is written to url.  NULL with a message in
 * err when the address is not a loopback one or cannot be listened on. */
zrv_server *zrv_open(const char *addr, const char *title, int nlifelines,
                     const char *const *lifelines, char *url, size_t urllen, char *err,
                     size_t errlen);

/* Appends one line (JSON text without a line break) for every client,
 * present and future.  Thread-safe; never blocks on a client. */
void zrv_push(zrv_server *s, const char *line, size_t len);

/* No more lines: clients that are still receiving get up to `linger`
 * seconds to take what was pushed, then every connection is closed and
 * the server is freed.  NULL is ignored. */
void zrv_close(zrv_server *s, double linger);

#endif
