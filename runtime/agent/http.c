/* http.c — HTTP POST of a JSON body over libcurl (see http.h).
 *
 * libcurl is found at run time: in the executable when it is linked in,
 * else by loading libcurl.so.4 on the first request.  Executables built
 * by zgc therefore need libcurl only when a network model is used, and
 * their link line does not change.
 *
 * Each call uses its own easy handle driven by a multi handle, so that the
 * wait for the server can be polled every 100 ms for a cancellation of
 * the run.  Settings: no signals (lifelines are threads), verbose output
 * off (it would print the Authorization header), http and https only, no
 * redirects, a limit on the reply size, the proxy variables of the
 * environment honoured as libcurl does by default.  The bearer token is
 * only ever written into the header list, which is wiped before it is
 * freed; libcurl's error texts do not include request headers.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_DEFAULT */
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "agent.h"

#define REPLY_MAX (32u << 20) /* largest accepted reply body */

/* Per-process state: libcurl belongs to the process, not to a run.  It is
 * found or loaded (dlopen) on the first request and stays for the
 * process: the function table, the loader's outcome and its message are
 * set once under global_mu.  curl_global_init, which must not run
 * concurrently with any other libcurl call, runs under global_mu before
 * the first request of a run; zri_http_shutdown undoes it at the end of
 * the run (global_state). */

/* The libcurl functions used here. */
static struct {
    CURLcode (*global_init)(long);
    void (*global_cleanup)(void);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    void (*easy_cleanup)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_add_handle)(CURLM *, CURL *);
    CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
    CURLMcode (*multi_perform)(CURLM *, int *);
    CURLMcode (*multi_poll)(CURLM *, struct curl_waitfd[], unsigned int, int, int *);
    CURLMsg *(*multi_info_read)(CURLM *, int *);
    CURLMcode (*multi_cleanup)(CURLM *);
    const char *(*multi_strerror)(CURLMcode);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
} lc;

static pthread_mutex_t global_mu = PTHREAD_MUTEX_INITIALIZER;
static int loaded;       /* 1: lc is filled, -1: libcurl could not be found */
static int global_state; /* 0: curl_global_init not called, 1: done, -1: failed */
static char load_error[256];

/* Stores the address of symbol name in *fn (a function pointer). */
static int find(void *lib, const char *name, void *fn)
{
    void *f = dlsym(lib, name);
    if (!f) {
        snprintf(load_error, sizeof load_error, "libcurl lacks %s (too old?)", name);
        return -1;
    }
    memcpy(fn, &f, sizeof f);
    return 0;
}

/* Fills lc.  Called with global_mu held. */
static int load(void)
{
    if (loaded) return loaded > 0 ? 0 : -1;
    void *lib = RTLD_DEFAULT;
    if (!dlsym(RTLD_DEFAULT, "curl_easy_init")) {
        static const char *const names[] = {"libcurl.so.4", "libcurl.so", "libcurl-gnutls.so.4"};
        lib = NULL;
        for (size_t i = 0; i < sizeof names / sizeof names[0] && !lib; i++)
            lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char *why = dlerror();
            snprintf(load_error, sizeof load_error, "libcurl is not installed (libcurl.so.4: %s)",
                     why ? why : "not found");
            loaded = -1;
            return -1;
        }
    }
    int bad = find(lib, "curl_global_init", &lc.global_init) ||
              find(lib, "curl_global_cleanup", &lc.global_cleanup) ||
              find(lib, "curl_easy_init", &lc.easy_init) ||
              find(lib, "curl_easy_setopt", &lc.easy_setopt) ||
              find(lib, "curl_easy_getinfo", &lc.easy_getinfo) ||
              find(lib, "curl_easy_cleanup", &lc.easy_cleanup) ||
              find(lib, "curl_easy_strerror", &lc.easy_strerror) ||
              find(lib, "curl_multi_init", &lc.multi_init) ||
              find(lib, "curl_multi_add_handle", &lc.multi_add_handle) ||
              find(lib, "curl_multi_remove_handle", &lc.multi_remove_handle) ||
              find(lib, "curl_multi_perform", &lc.multi_perform) ||
              find(lib, "curl_multi_poll", &lc.multi_poll) ||
              find(lib, "curl_multi_info_read", &lc.multi_info_read) ||
              find(lib, "curl_multi_cleanup", &lc.multi_cleanup) ||
              find(lib, "curl_multi_strerror", &lc.multi_strerror) ||
              find(lib, "curl_slist_append", &lc.slist_append) ||
              find(lib, "curl_slist_free_all", &lc.slist_free_all);
    /* the library stays loaded until the process ends */
    loaded = bad ? -1 : 1;
    return bad ? -1 : 0;
}

/* Loads and initialises libcurl once; 0, or -1 with a message in err. */
static int global_init(char *err, size_t errlen)
{
    pthread_mutex_lock(&global_mu);
    int ok = load() == 0;
    if (!ok) {
        snprintf(err, errlen, "%s", load_error);
    } else {
        if (global_state == 0)
            global_state = lc.global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 1 : -1;
        ok = global_state == 1;
        if (!ok) snprintf(err, errlen, "libcurl could not be initialised");
    }
    pthread_mutex_unlock(&global_mu);
    return ok ? 0 : -1;
}

void zri_http_shutdown(void)
{
    pthread_mutex_lock(&global_mu);
    if (global_state == 1) lc.global_cleanup();
    global_state = 0;
    pthread_mutex_unlock(&global_mu);
}

void zri_http_reply_free(zri_http_reply *r)
{
    if (!r) return;
    free(r->body);
    r->body = NULL;
    r->len = 0;
}

typedef struct sink {
    char *d;
    size_t n, cap;
    int too_big;
} sink;

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *user)
{
    sink *s = user;
    size_t n = size * nmemb;
    if (s->n + n > REPLY_MAX) {
        s->too_big = 1;
        return 0; /* aborts the transfer */
    }
    if (s->n + n + 1 > s->cap) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap < s->n + n + 1) cap *= 2;
        s->d = zri_xrealloc(s->d, cap);
        s->cap = cap;
    }
    memcpy(s->d + s->n, ptr, n);
    s->n += n;
    s->d[s->n] = 0;
    return n;
}

static int is_cancelled(volatile int *cancel)
{
    return cancel && __atomic_load_n(cancel, __ATOMIC_ACQUIRE);
}

/* Frees a header list after overwriting its strings (the token). */
static void wipe_headers(struct curl_slist *h)
{
    for (struct curl_slist *p = h; p; p = p->next)
        if (p->data) memset(p->data, 0, strlen(p->data));
    lc.slist_free_all(h);
}

/* Adds one header; returns the list, or NULL (the old list freed) when out
 * of memory. */
static struct curl_slist *add_header(struct curl_slist *h, const char *line)
{
    struct curl_slist *n = lc.slist_append(h, line);
    if (!n) wipe_headers(h);
    return n;
}

int zri_http_post(const char *url, const char *bearer, const char *body, double timeout_s,
                  volatile int *cancel, zri_http_reply *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->retry_after = -1;
    if (global_init(err, errlen) < 0) return ZRI_HTTP_SETUP;
    CURL *h = lc.easy_init();
    CURLM *m = lc.multi_init();
    struct curl_slist *hdrs = NULL;
    hdrs = add_header(hdrs, "Content-Type: application/json");
    if (hdrs) hdrs = add_header(hdrs, "Accept: application/json");
    if (hdrs) hdrs = add_header(hdrs, "Expect:"); /* no 100-continue round trip */
    if (hdrs && bearer && *bearer) {
        static const char prefix[] = "Authorization: Bearer ";
        size_t n = sizeof prefix + strlen(bearer);
        char *line = zri_xmalloc(n);
        snprintf(line, n, "%s%s", prefix, bearer);
        hdrs = add_header(hdrs, line);
        memset(line, 0, n);
        free(line);
    }
    if (!h || !m || !hdrs) {
        if (hdrs) wipe_headers(hdrs);
        if (m) lc.multi_cleanup(m);
        if (h) lc.easy_cleanup(h);
        snprintf(err, errlen, "out of memory (libcurl)");
        return ZRI_HTTP_SETUP;
    }

    char ebuf[CURL_ERROR_SIZE];
    ebuf[0] = 0;
    sink s = {0};
    long timeout_ms = timeout_s > 0 ? (long)(timeout_s * 1000.0 + 0.5) : 0;
    if (timeout_s > 0 && timeout_ms < 1) timeout_ms = 1;
    lc.easy_setopt(h, CURLOPT_URL, url);
    lc.easy_setopt(h, CURLOPT_ERRORBUFFER, ebuf);
    lc.easy_setopt(h, CURLOPT_VERBOSE, 0L);
    lc.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    lc.easy_setopt(h, CURLOPT_NOPROGRESS, 1L);
#if LIBCURL_VERSION_NUM >= 0x075500
    lc.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    lc.easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    lc.easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    lc.easy_setopt(h, CURLOPT_POST, 1L);
    lc.easy_setopt(h, CURLOPT_POSTFIELDS, body);
    lc.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
    lc.easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    lc.easy_setopt(h, CURLOPT_USERAGENT, "zgc-runtime");
    lc.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    lc.easy_setopt(h, CURLOPT_WRITEDATA, &s);
    lc.easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    if (timeout_ms > 0) lc.easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);

    int rc = ZRI_HTTP_OK;
    CURLcode result = CURLE_OK;
    int done = 0;
    if (lc.multi_add_handle(m, h) != CURLM_OK) {
        snprintf(err, errlen, "libcurl could not start the request");
        rc = ZRI_HTTP_SETUP;
    }
    while (rc == ZRI_HTTP_OK && !done) {
        int running = 0;
        CURLMcode mc = lc.multi_perform(m, &running);
        if (mc != CURLM_OK) {
            snprintf(err, errlen, "%s", lc.multi_strerror(mc));
            rc = ZRI_HTTP_TRANSPORT;
            break;
        }
        int left;
        CURLMsg *msg;
        while ((msg = lc.multi_info_read(m, &left))) {
            if (msg->msg == CURLMSG_DONE && msg->easy_handle == h) {
                result = msg->data.result;
                done = 1;
            }
        }
        if (done) break;
        if (is_cancelled(cancel)) {
            snprintf(err, errlen, "cancelled");
            rc = ZRI_HTTP_CANCELLED;
            break;
        }
        mc = lc.multi_poll(m, NULL, 0, 100, NULL);
        if (mc != CURLM_OK) {
            snprintf(err, errlen, "%s", lc.multi_strerror(mc));
            rc = ZRI_HTTP_TRANSPORT;
        }
    }
    if (rc == ZRI_HTTP_OK) {
        if (result == CURLE_OK) {
            long status = 0;
            lc.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
            out->status = status;
#if LIBCURL_VERSION_NUM >= 0x074200
            curl_off_t ra = -1;
            if (lc.easy_getinfo(h, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK && ra > 0)
                out->retry_after = (double)ra;
#endif
            out->body = s.d ? s.d : zri_xcalloc(1, 1);
            out->len = s.n;
            s.d = NULL;
        } else if (result == CURLE_OPERATION_TIMEDOUT) {
            snprintf(err, errlen, "no complete answer within %g s", timeout_s);
            rc = ZRI_HTTP_TIMEOUT;
        } else if (result == CURLE_URL_MALFORMAT || result == CURLE_UNSUPPORTED_PROTOCOL ||
                   result == CURLE_COULDNT_RESOLVE_HOST || result == CURLE_COULDNT_RESOLVE_PROXY) {
            snprintf(err, errlen, "%s", ebuf[0] ? ebuf : lc.easy_strerror(result));
            rc = ZRI_HTTP_CONFIG;
        } else if (s.too_big) {
            snprintf(err, errlen, "the answer is larger than %u MiB", REPLY_MAX >> 20);
            rc = ZRI_HTTP_TRANSPORT;
        } else {
            snprintf(err, errlen, "%s", ebuf[0] ? ebuf : lc.easy_strerror(result));
            rc = ZRI_HTTP_TRANSPORT;
        }
    }
    lc.multi_remove_handle(m, h);
    lc.easy_cleanup(h);
    lc.multi_cleanup(m);
    wipe_headers(hdrs);
    free(s.d);
    return rc;
}
