/* server.c — the session: the lifecycle (initialize, shutdown, exit), the
 * open documents with their edits (incremental sync), diagnostics after
 * every change, and the requests.  One thread: a message is handled
 * whole before the next is read; a document is analysed again after each
 * change (a 10,000-statement workflow takes a few tens of milliseconds:
 * tests/lsp). */
#define _GNU_SOURCE
#include "zl.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "fmt.h"
#include "grammar.h"

/* JSON-RPC and LSP error codes */
enum {
    PARSE_ERROR = -32700,
    INVALID_REQUEST = -32600,
    METHOD_NOT_FOUND = -32601,
    INVALID_PARAMS = -32602,
    NOT_INITIALIZED = -32002,
    REQUEST_FAILED = -32803,
};

typedef struct Doc {
    char *uri;
    ZBuf text;
    ZlIndex *ix;
} Doc;

struct ZlServer {
    FILE *out;
    ZlFramer fr;
    bool initialized, shut_down, exited;
    Doc **docs;
    int ndocs;
};

ZlServer *zl_server_new(FILE *out)
{
    ZlServer *s = zu_xcalloc(1, sizeof *s);
    s->out = out;
    zl_framer_init(&s->fr);
    return s;
}

static void doc_free(Doc *d)
{
    zl_index_free(d->ix);
    zu_buf_free(&d->text);
    free(d->uri);
    free(d);
}

void zl_server_free(ZlServer *s)
{
    if (!s) return;
    for (int i = 0; i < s->ndocs; i++) doc_free(s->docs[i]);
    free(s->docs);
    zl_framer_free(&s->fr);
    free(s);
}

bool zl_server_done(const ZlServer *s, int *status)
{
    if (s->exited && status) *status = s->shut_down ? 0 : 1;
    return s->exited;
}

/* ---- replies ---------------------------------------------------------------------- */

static void reply(ZlServer *s, json_t *id, json_t *result)
{
    zl_send(s->out, json_pack("{s:O,s:o}", "id", id ? id : json_null(), "result",
                              result ? result : json_null()));
}

static void fail(ZlServer *s, json_t *id, int code, const char *msg)
{
    zl_send(s->out, json_pack("{s:O,s:{s:i,s:s}}", "id", id ? id : json_null(), "error", "code",
                              code, "message", msg));
}

static void notify(ZlServer *s, const char *method, json_t *params)
{
    zl_send(s->out, json_pack("{s:s,s:o}", "method", method, "params", params));
}

/* ---- documents -------------------------------------------------------------------- */

static Doc *find_doc(ZlServer *s, const char *uri)
{
    for (int i = 0; i < s->ndocs; i++)
        if (!strcmp(s->docs[i]->uri, uri)) return s->docs[i];
    return NULL;
}

static void analyse(ZlServer *s, Doc *d)
{
    zl_index_free(d->ix);
    /* named by its path: imports are looked for beside it */
    char *path = zl_path_of(d->uri);
    d->ix = zl_index_new(path, d->text.data ? d->text.data : "", d->text.len);
    free(path);
    notify(
        s, "textDocument/publishDiagnostics",
        json_pack("{s:s,s:o}", "uri", d->uri, "diagnostics", zl_index_diagnostics(d->ix, d->uri)));
}

static void set_text(Doc *d, const char *text, size_t n)
{
    d->text.len = 0;
    zu_buf_puts(&d->text, "");
    for (size_t i = 0; i < n; i++) zu_buf_putc(&d->text, text[i]);
}

/* The document a request's params name, or NULL (an error reply sent). */
static Doc *param_doc(ZlServer *s, json_t *id, json_t *params)
{
    const char *uri =
        json_string_value(json_object_get(json_object_get(params, "textDocument"), "uri"));
    if (!uri) {
        fail(s, id, INVALID_PARAMS, "params.textDocument.uri is missing");
        return NULL;
    }
    Doc *d = find_doc(s, uri);
    if (!d) fail(s, id, INVALID_PARAMS, "the document is not open");
    return d;
}

/* params.position as the compiler's line and column; false (an error
 * reply sent) when it is missing. */
static bool param_pos(ZlServer *s, json_t *id, json_t *params, Doc *d, int *line, int *col)
{
    json_t *p = json_object_get(params, "position");
    json_t *l = json_object_get(p, "line"), *c = json_object_get(p, "character");
    if (!json_is_integer(l) || !json_is_integer(c) || json_integer_value(l) < 0 ||
        json_integer_value(c) < 0 || json_integer_value(l) > 1 << 30 ||
        json_integer_value(c) > 1 << 30) {
        fail(s, id, INVALID_PARAMS, "params.position is not a position");
        return false;
    }
    zl_position(d->text.data, d->text.len, (int)json_integer_value(l), (int)json_integer_value(c),
                line, col);
    return true;
}

static bool did_open(ZlServer *s, json_t *params)
{
    json_t *td = json_object_get(params, "textDocument");
    const char *uri = json_string_value(json_object_get(td, "uri"));
    json_t *text = json_object_get(td, "text");
    if (!uri || !json_is_string(text)) return false;
    Doc *d = find_doc(s, uri);
    if (!d) {
        d = zu_xcalloc(1, sizeof *d);
        d->uri = strdup(uri);
        if (!d->uri) zu_oom();
        s->docs = zu_xrealloc(s->docs, sizeof *s->docs * (size_t)(s->ndocs + 1));
        s->docs[s->ndocs++] = d;
    }
    set_text(d, json_string_value(text), json_string_length(text));
    analyse(s, d);
    return true;
}

/* One content change: a range and its new text, or the whole text. */
static bool apply_change(Doc *d, json_t *ch)
{
    json_t *text = json_object_get(ch, "text");
    if (!json_is_string(text)) return false;
    const char *t = json_string_value(text);
    size_t tn = json_string_length(text);
    json_t *range = json_object_get(ch, "range");
    if (!range) {
        set_text(d, t, tn);
        return true;
    }
    json_t *st = json_object_get(range, "start"), *en = json_object_get(range, "end");
    json_t *pos[4] = {json_object_get(st, "line"), json_object_get(st, "character"),
                      json_object_get(en, "line"), json_object_get(en, "character")};
    int v[4];
    for (int i = 0; i < 4; i++) {
        if (!json_is_integer(pos[i]) || json_integer_value(pos[i]) < 0 ||
            json_integer_value(pos[i]) > 1 << 30)
            return false;
        v[i] = (int)json_integer_value(pos[i]);
    }
    size_t a = zl_offset(d->text.data, d->text.len, v[0], v[1]);
    size_t b = zl_offset(d->text.data, d->text.len, v[2], v[3]);
    if (b < a) return false;
    ZBuf nb = {0};
    zu_buf_puts(&nb, "");
    for (size_t i = 0; i < a; i++) zu_buf_putc(&nb, d->text.data[i]);
    for (size_t i = 0; i < tn; i++) zu_buf_putc(&nb, t[i]);
    for (size_t i = b; i < d->text.len; i++) zu_buf_putc(&nb, d->text.data[i]);
    zu_buf_free(&d->text);
    d->text = nb;
    return true;
}

static bool did_change(ZlServer *s, json_t *params)
{
    const char *uri =
        json_string_value(json_object_get(json_object_get(params, "textDocument"), "uri"));
    json_t *changes = json_object_get(params, "contentChanges");
    Doc *d = uri ? find_doc(s, uri) : NULL;
    if (!d || !json_is_array(changes)) return false;
    size_t i;
    json_t *ch;
    bool ok = true;
    json_array_foreach(changes, i, ch) ok = apply_change(d, ch) && ok;
    analyse(s, d);
    return ok;
}

static bool did_close(ZlServer *s, json_t *params)
{
    const char *uri =
        json_string_value(json_object_get(json_object_get(params, "textDocument"), "uri"));
    if (!uri) return false;
    for (int i = 0; i < s->ndocs; i++) {
        if (strcmp(s->docs[i]->uri, uri)) continue;
        notify(s, "textDocument/publishDiagnostics",
               json_pack("{s:s,s:[]}", "uri", uri, "diagnostics"));
        doc_free(s->docs[i]);
        s->docs[i] = s->docs[--s->ndocs];
        return true;
    }
    return false;
}

/* ---- requests ------------------------------------------------------------------------ */

static json_t *capabilities(void)
{
    return json_pack("{s:{s:b,s:i},s:b,s:b,s:b,s:b,s:b,s:{}}", "textDocumentSync", "openClose", 1,
                     "change", 2, "definitionProvider", 1, "referencesProvider", 1, "hoverProvider",
                     1, "documentSymbolProvider", 1, "documentFormattingProvider", 1,
                     "completionProvider");
}

static void formatting(ZlServer *s, json_t *id, Doc *d)
{
    ZBuf out = {0};
    zu_buf_puts(&out, "");
    char *diag = NULL;
    size_t dn = 0;
    FILE *mem = open_memstream(&diag, &dn);
    if (!mem) zu_oom();
    bool ok = zf_format(d->uri, d->text.data, d->text.len, mem, &out);
    fclose(mem);
    if (!ok) {
        fail(s, id, REQUEST_FAILED, "the document does not parse: fix its syntax errors first");
    } else if (out.len == d->text.len && !memcmp(out.data, d->text.data, out.len)) {
        reply(s, id, json_array());
    } else {
        /* one edit: the whole document (its end is past the last line) */
        int lines = 0;
        for (size_t i = 0; i < d->text.len; i++) lines += d->text.data[i] == '\n';
        reply(s, id,
              json_pack("[{s:{s:{s:i,s:i},s:{s:i,s:i}},s:s%}]", "range", "start", "line", 0,
                        "character", 0, "end", "line", lines + 1, "character", 0, "newText",
                        out.data, out.len));
    }
    free(diag);
    zu_buf_free(&out);
}

/* zgc/projection and zgc/monitorPlan: a compilation of their own (the
 * workflow named, or the only or last one), printed as `zgc project` and
 * `zgc guards` print it. */
static void printed(ZlServer *s, json_t *id, Doc *d, json_t *params, bool plan)
{
    const char *workflow = json_string_value(json_object_get(params, "workflow"));
    const char *life = json_string_value(json_object_get(params, "lifeline"));
    char *diag = NULL, *text = NULL, *guards = NULL;
    size_t dn = 0, tn = 0, gn = 0;
    FILE *dm = open_memstream(&diag, &dn);
    if (!dm) zu_oom();
    ZCompilation c;
    char *path = zl_path_of(d->uri); /* imports are looked for beside it */
    zc_init(&c, zp_parse, path, d->text.data, d->text.len, dm);
    c.workflow = workflow;
    bool ok = zc_run(&c, plan ? ZC_PLAN : ZC_PROJECT);
    fclose(dm);
    if (!ok) {
        /* the first line of the diagnostics: "uri:line:col: error: …" */
        char *nl = diag ? strchr(diag, '\n') : NULL;
        if (nl) *nl = 0;
        fail(s, id, REQUEST_FAILED, diag && *diag ? diag : "the document does not compile");
    } else if (plan) {
        FILE *tm = open_memstream(&text, &tn), *gm = open_memstream(&guards, &gn);
        if (!tm || !gm) zu_oom();
        zm_print(tm, c.plan);
        zm_print_guards(gm, c.plan);
        fclose(tm);
        fclose(gm);
        reply(s, id,
              json_pack("{s:s,s:s,s:s}", "workflow", c.wf->name, "plan", text, "guards", guards));
    } else {
        int only = -1;
        if (life) {
            ZDecl *l = zr_lifeline(c.prog, life);
            if (!l) {
                char *msg = zu_fmt(c.arena, "no lifeline `%s`", life);
                fail(s, id, INVALID_PARAMS, msg);
                zc_free(&c);
                free(path);
                free(diag);
                return;
            }
            only = l->index;
        }
        FILE *tm = open_memstream(&text, &tn);
        if (!tm) zu_oom();
        zj_print(tm, c.locals, only);
        fclose(tm);
        reply(s, id, json_pack("{s:s,s:s}", "workflow", c.wf->name, "text", text));
    }
    zc_free(&c);
    free(path);
    free(diag);
    free(text);
    free(guards);
}

static void request(ZlServer *s, const char *method, json_t *id, json_t *params)
{
    if (!strcmp(method, "initialize")) {
        if (s->initialized) {
            fail(s, id, INVALID_REQUEST, "initialize was already called");
            return;
        }
        s->initialized = true;
        reply(s, id,
              json_pack("{s:o,s:{s:s,s:s}}", "capabilities", capabilities(), "serverInfo", "name",
                        "zgc", "version", ZL_VERSION));
        return;
    }
    if (!s->initialized) {
        fail(s, id, NOT_INITIALIZED, "the server is not initialized");
        return;
    }
    if (s->shut_down) {
        fail(s, id, INVALID_REQUEST, "the server is shut down");
        return;
    }
    if (!strcmp(method, "shutdown")) {
        s->shut_down = true;
        reply(s, id, NULL);
        return;
    }
    bool def = !strcmp(method, "textDocument/definition");
    bool refs = !strcmp(method, "textDocument/references");
    bool hover = !strcmp(method, "textDocument/hover");
    bool syms = !strcmp(method, "textDocument/documentSymbol");
    bool fmt = !strcmp(method, "textDocument/formatting");
    bool comp = !strcmp(method, "textDocument/completion");
    bool proj = !strcmp(method, "zgc/projection");
    bool plan = !strcmp(method, "zgc/monitorPlan");
    if (!(def || refs || hover || syms || fmt || comp || proj || plan)) {
        char msg[256];
        snprintf(msg, sizeof msg, "unknown method `%.200s`", method);
        fail(s, id, METHOD_NOT_FOUND, msg);
        return;
    }
    Doc *d = param_doc(s, id, params);
    if (!d) return;
    int line = 0, col = 0;
    if ((def || refs || hover) && !param_pos(s, id, params, d, &line, &col)) return;
    if (def)
        reply(s, id, zl_index_definition(d->ix, d->uri, line, col));
    else if (refs) {
        json_t *inc = json_object_get(json_object_get(params, "context"), "includeDeclaration");
        reply(s, id, zl_index_references(d->ix, d->uri, line, col, json_is_true(inc)));
    } else if (hover)
        reply(s, id, zl_index_hover(d->ix, line, col));
    else if (syms)
        reply(s, id, zl_index_symbols(d->ix));
    else if (comp)
        reply(s, id, zl_index_completion(d->ix));
    else if (fmt)
        formatting(s, id, d);
    else
        printed(s, id, d, params, plan);
}

static void notification(ZlServer *s, const char *method, json_t *params)
{
    if (!strcmp(method, "exit")) {
        s->exited = true;
        return;
    }
    if (!s->initialized || s->shut_down) return;
    bool ok = true;
    if (!strcmp(method, "textDocument/didOpen"))
        ok = did_open(s, params);
    else if (!strcmp(method, "textDocument/didChange"))
        ok = did_change(s, params);
    else if (!strcmp(method, "textDocument/didClose"))
        ok = did_close(s, params);
    /* initialized, didSave, $/cancelRequest, $/setTrace and the rest:
     * nothing to do */
    if (!ok) {
        /* a notification has no reply: tell the client's log */
        char msg[300];
        snprintf(msg, sizeof msg, "zgc: malformed %.200s notification", method);
        notify(s, "window/logMessage", json_pack("{s:i,s:s}", "type", 1, "message", msg));
    }
}

static void on_message(void *ctx, const char *body, size_t len, const char *err)
{
    ZlServer *s = ctx;
    if (s->exited) return;
    if (err) {
        fail(s, NULL, PARSE_ERROR, err);
        return;
    }
    json_error_t je;
    json_t *msg = json_loadb(body, len, 0, &je);
    if (!msg) {
        char m[300];
        snprintf(m, sizeof m, "invalid JSON: %s", je.text);
        fail(s, NULL, PARSE_ERROR, m);
        return;
    }
    json_t *id = json_object_get(msg, "id");
    if (id && !json_is_string(id) && !json_is_integer(id)) id = NULL;
    const char *method = json_string_value(json_object_get(msg, "method"));
    json_t *params = json_object_get(msg, "params");
    const char *version = json_string_value(json_object_get(msg, "jsonrpc"));
    if (!json_is_object(msg) || !version || strcmp(version, "2.0")) {
        fail(s, id, INVALID_REQUEST, "not a JSON-RPC 2.0 message");
    } else if (!method) {
        /* a response to a request of ours (we send none) or garbage */
        if (!json_object_get(msg, "result") && !json_object_get(msg, "error"))
            fail(s, id, INVALID_REQUEST, "a message without a method");
    } else if (params && !json_is_null(params) && !json_is_object(params) &&
               !json_is_array(params)) {
        if (id) fail(s, id, INVALID_PARAMS, "params must be an object or an array");
    } else if (json_object_get(msg, "id")) {
        if (!id)
            fail(s, NULL, INVALID_REQUEST, "an id must be a number or a string");
        else
            request(s, method, id, params);
    } else {
        notification(s, method, params);
    }
    json_decref(msg);
}

void zl_server_feed(ZlServer *s, const char *data, size_t n)
{
    zl_framer_push(&s->fr, data, n, on_message, s);
}

/* ---- zgc lsp -------------------------------------------------------------------------- */

const char zl_usage[] =
    "usage: zgc lsp\n"
    "\n"
    "A Language Server Protocol server for .zg workflows over standard input and\n"
    "output, for editors: diagnostics as you type, go to definition, references,\n"
    "hover, document symbols, completion, formatting (zgc fmt), and the requests\n"
    "zgc/projection (a lifeline's local program, as zgc project prints it) and\n"
    "zgc/monitorPlan (as zgc guards --plan prints it).  See docs/editors.md.\n"
    "\n"
    "exit status: 0 after shutdown and exit, 1 when the input ends first or the\n"
    "client sends exit without shutdown, 2 bad usage.\n";

int zl_main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(zl_usage, stdout);
            return 0;
        }
        /* editors pass --stdio; it is the only transport */
        if (strcmp(argv[i], "--stdio")) {
            fprintf(stderr, "zgc: unknown option `%s`\n%s", argv[i], zl_usage);
            return 2;
        }
    }
    ZlServer *s = zl_server_new(stdout);
    char buf[65536];
    int status = 1;
    for (;;) {
        ssize_t n = read(0, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            fprintf(stderr, "zgc: lsp: cannot read standard input: %s\n", strerror(errno));
            break;
        }
        if (n == 0) break;
        zl_server_feed(s, buf, (size_t)n);
        if (zl_server_done(s, &status)) break;
    }
    zl_server_free(s);
    return status;
}
