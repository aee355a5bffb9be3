/* vocab.h — the words the compiler, the backend and the runtime share
 * (prefix ZV_).  Each list is an X-macro written once here; every enum,
 * name table and usage text that spells one of these words is generated
 * from it.  Header only; depends on nothing but stdio, so that the
 * compiler, the backend and the runtime can all include it without
 * depending on one another.
 *
 *   ZV_ACTION_KINDS   llm, pure, extern pure, effect, human, planner
 *   ZV_LLM_PROPS      the properties of an llm action's body
 *   ZV_HUMAN_PROPS    the properties of a human action's body
 *   ZV_PLANNER_PROPS  the properties of a planner action's body (besides
 *                     the llm ones it shares: model, retries, fallback)
 *   ZV_PLANNER_ALLOW  what `allow = …` of a planner may name
 *   ZV_PARSE_MODES    `parse = …` of llm actions, with the output type each
 *                     needs
 *   ZV_HUMAN_KINDS    `kind = …` of human actions
 *   ZV_CONSTRUCTS     the control constructs whose decisions are broadcast,
 *                     and their tags ("if#3": ZV_TAG_FMT)
 *   ZV_CHANNEL_MAIN   the names of channels (message namespaces): "main",
 *                     and "main/par1.2" for parallel branches (ZV_BRANCH_FMT)
 *   ZV_EVENT_KINDS    the kinds of the events of a run's trace, and of its
 *                     other lines (ZV_TRACE_START, _END, _RETRY)
 *   ZV_RUN_OPTIONS    the options of a run (`zgc run` and built
 *                     executables), with their usage text: zv_print_options
 *
 * The order of ZV_ACTION_KINDS, ZV_PARSE_MODES and ZV_HUMAN_KINDS is part
 * of the runtime ABI (runtime/zgrt_abi.h numbers them in this order):
 * append, never reorder.
 */
#ifndef ZGC_VOCAB_H
#define ZGC_VOCAB_H

#include <stdio.h>
#include <string.h>

/* X(ID, "source spelling") */
#define ZV_ACTION_KINDS(X)        \
    X(LLM, "llm")                 \
    X(PURE, "pure")               \
    X(EXTERN_PURE, "extern pure") \
    X(EFFECT, "effect")           \
    X(HUMAN, "human")             \
    X(PLANNER, "planner")

/* X(ID, "key"), in the order messages list them */
#define ZV_LLM_PROPS(X)           \
    X(SYSTEM, "system")           \
    X(USER, "user")               \
    X(PARSE, "parse")             \
    X(MODEL, "model")             \
    X(TEMPERATURE, "temperature") \
    X(RETRIES, "retries")         \
    X(FALLBACK, "fallback")
#define ZV_HUMAN_PROPS(X) \
    X(KIND, "kind")       \
    X(PROMPT, "prompt")
#define ZV_PLANNER_PROPS(X)             \
    X(DESCRIPTION, "description")       \
    X(WORKERS, "workers")               \
    X(ACTIONS, "actions")               \
    X(ALLOW, "allow")                   \
    X(INSTRUCTIONS, "instructions")     \
    X(MAX_STATEMENTS, "max_statements") \
    X(MAX_ITERATIONS, "max_iterations") \
    X(TIMEOUT, "timeout")
/* the llm properties a planner also takes */
#define ZV_PLANNER_SHARED(X) \
    X(MODEL)                 \
    X(RETRIES)               \
    X(FALLBACK)
/* X(ID, "word"): what a generated sub-workflow may use besides the
 * planner's vocabulary (default: nothing but a straight-line workflow) */
#define ZV_PLANNER_ALLOW(X) \
    X(LLM, "llm")           \
    X(PURE, "pure")         \
    X(IF, "if")             \
    X(WHILE, "while")
/* The limits of a planner when it gives none: statements of the
 * generated workflow, iterations of all its loops, seconds of its run. */
#define ZV_PLANNER_MAX_STATEMENTS 200
#define ZV_PLANNER_MAX_ITERATIONS 10000
#define ZV_PLANNER_TIMEOUT 60
/* `retries = forever`: retry an llm action without a limit */
#define ZV_RETRIES_FOREVER "forever"

/* X(ID, "name", TYPE): the one output a mode needs is of type TYPE (STR,
 * JSON, BOOL, INT, FLOAT or ENUM: any enum); JSON takes any outputs. */
#define ZV_PARSE_MODES(X)    \
    X(TEXT, "text", STR)     \
    X(JSON, "json", JSON)    \
    X(BOOL, "bool", BOOL)    \
    X(INT, "int", INT)       \
    X(FLOAT, "float", FLOAT) \
    X(ENUM, "enum", ENUM)

/* X(ID, "name") */
#define ZV_HUMAN_KINDS(X) \
    X(CONFIRM, "confirm") \
    X(INPUT, "input")     \
    X(SELECT, "select")   \
    X(EDIT, "edit")       \
    X(ACK, "ack")

/* X(ID, "keyword"): a construct's tag is its keyword and its number in
 * pre-order over the workflow's constructs, from 1. */
#define ZV_CONSTRUCTS(X) \
    X(IF, "if")          \
    X(WHILE, "while")
#define ZV_TAG_FMT "%s#%d"

/* The longest names of lifelines and workflows, in bytes.  They name
 * files and addresses in every deployment: executables
 * `<workflow>.<Lifeline>` (255 bytes in a file name), Unix sockets
 * `DIR/<Lifeline>.sock` (107 bytes in a socket path), message subjects.
 * `zgc check` refuses longer ones, so no deployment fails late. */
#define ZV_LIFELINE_NAME_MAX 64
#define ZV_WORKFLOW_NAME_MAX 128

/* Channels: the workflow's top level is ZV_CHANNEL_MAIN; branch K (from
 * 1) of the parallel region numbered N, opened on channel C, is
 * ZV_BRANCH_FMT with C, N, K. */
#define ZV_CHANNEL_MAIN "main"
#define ZV_BRANCH_FMT "%s/par%d.%d"

/* X(ID, "kind"): the events of a run's trace (--trace, JSON Lines), in
 * the order of the runtime's event numbers.  The trace's other lines
 * ("start", "end", "retry") are not events. */
#define ZV_EVENT_KINDS(X) \
    X(SEND, "send")       \
    X(RECV, "recv")       \
    X(ACT, "act")         \
    X(CHOICE, "choice")
/* The events of store operations (docs/runtime.md, "Stores"): a read of a
 * cell, the commit of an operation, and an attempt the store's discipline
 * refused (the block runs again from its reads).  A list of their own, so
 * that a reader of traces takes them in when it is ready to. */
#define ZV_STORE_EVENT_KINDS(X) \
    X(READ, "read")             \
    X(COMMIT, "commit")         \
    X(ABORT, "abort")
/* The kinds of the trace's other lines: a lifeline's initial store, the
 * run's result or error, a failed model call about to be retried, and in
 * a durable run the start of a resumed attempt (an earlier attempt's end
 * line no longer ends the run). */
#define ZV_TRACE_START "start"
#define ZV_TRACE_END "end"
#define ZV_TRACE_RETRY "retry"
#define ZV_TRACE_RESUME "resume"
/* A trace file FILE is written as FILE.partial and takes its name when it
 * is whole (the run's process closes it), so that a reader of FILE never
 * sees a trace still being written; a process killed mid-run leaves
 * FILE.partial, which a resumed durable run continues. */
#define ZV_TRACE_PARTIAL ".partial"

/* Run options: X(ID, "--name", "METAVAR", SCOPE, "help").  A run option
 * takes a value, given as `--name VALUE` or `--name=VALUE`, unless its
 * METAVAR says otherwise (zv_option_value): "" for a flag without a
 * value, "[=META]" for a value that is optional and then given only as
 * `--name=VALUE`.
 * SCOPE: ZV_RUN for `zgc run` and every built executable, ZV_EXE for the
 * per-lifeline executables only (`zgc run --processes` sets them).  Help
 * texts may span lines ("\n"); the printer indents them. */
enum { ZV_RUN = 1, ZV_EXE = 2 };
#define ZV_RUN_OPTIONS(X)                                                                         \
    X(ARG, "--arg", "NAME=VALUE", ZV_RUN,                                                         \
      "a workflow input (str: literally, json: JSON text,\n"                                      \
      "enum: a member name, others: their literal syntax)")                                       \
    X(LLM, "--llm", "SPEC", ZV_RUN,                                                               \
      "model for every llm action: mock (default),\n"                                             \
      "scripted:FILE.json, openai[:MODEL], ollama[:MODEL]")                                       \
    X(LLM_FOR, "--llm-for", "L=SPEC", ZV_RUN,                                                     \
      "model for the llm actions of lifeline L;\n"                                                \
      "L.ACTION=SPEC for one llm action of lifeline L")                                           \
    X(SEED, "--seed", "N", ZV_RUN, "seed of the mock model (default 0)")                          \
    X(ANSWERS, "--answers", "FILE.json", ZV_RUN,                                                  \
      "answers for human actions (instead of the terminal)")                                      \
    X(TRACE, "--trace", "FILE", ZV_RUN, "write the run's events to FILE (JSON Lines)")            \
    X(OPRECORDS, "--oprecords", "FILE", ZV_RUN,                                                   \
      "append every store operation's OpRecord to FILE\n"                                         \
      "(JSON Lines; several stores: FILE.STORE each)")                                            \
    X(STORE_FILE, "--store-file", "FILE", ZV_RUN,                                                 \
      "keep the workflow's store in the SQLite file FILE\n"                                       \
      "(several stores: FILE.STORE each; default: in memory)")                                    \
    X(STORE_DIR, "--store-dir", "DIR", ZV_RUN,                                                    \
      "keep each store S of the workflow in the SQLite\n"                                         \
      "file DIR/S.db")                                                                            \
    X(TIMEOUT, "--timeout", "SECONDS", ZV_RUN, "stop the run with an error after SECONDS")        \
    X(LLM_TIMEOUT, "--llm-timeout", "SECONDS", ZV_RUN,                                            \
      "time limit of one model call (default 120)")                                               \
    X(BACKOFF_SCALE, "--backoff-scale", "X", ZV_RUN,                                              \
      "multiply the delays between model retries by X")                                           \
    X(SCHEDULE, "--schedule", "SEED", ZV_RUN,                                                     \
      "perturb delivery and scheduling with seeded random\n"                                      \
      "delays, so that other interleavings occur (testing)")                                      \
    X(SCHEDULER, "--scheduler", "fibers|threads", ZV_RUN,                                         \
      "run lifelines and parallel branches as fibers on a\n"                                      \
      "pool of workers (default), or as threads")                                                 \
    X(WORKERS, "--workers", "N", ZV_RUN, "fibers: N worker threads (default: one per processor)") \
    X(VIEW, "--view", "[=ADDR]", ZV_RUN,                                                          \
      "serve a live picture of the run on 127.0.0.1 (a random\n"                                  \
      "port, or ADDR: [HOST:]PORT); the URL is printed on stderr")                                \
    X(HEARTBEAT, "--heartbeat", "SECONDS", ZV_RUN,                                                \
      "per-lifeline processes: a peer that sends nothing\n"                                       \
      "for SECONDS is lost (default 5; 0: never)")                                                \
    X(PEER_WAIT, "--peer-wait", "SECONDS", ZV_RUN,                                                \
      "durable per-lifeline runs: wait up to SECONDS for a\n"                                     \
      "lost peer to be restarted with --resume (default 300;\n"                                   \
      "0: stop at once)")                                                                         \
    X(DURABLE, "--durable", "[=STORE]", ZV_RUN,                                                   \
      "a durable run, journaled in the run store STORE\n"                                         \
      "(default: $ZGC_STORE, else .zgc/runs.db)")                                                 \
    X(RESUME, "--resume", "RUN", ZV_RUN,                                                          \
      "resume durable run RUN with its stored inputs and\n"                                       \
      "options (implies --durable)")                                                              \
    X(RUN_ID, "--run-id", "ID", ZV_RUN, "a new durable run's id (default: generated)")            \
    X(EXIT_WHEN_WAITING, "--exit-when-waiting", "", ZV_RUN,                                       \
      "durable runs: stop with exit status 3 when nothing\n"                                      \
      "but human tasks can make progress")                                                        \
    X(NATS, "--nats", "URL[,URL...]", ZV_RUN,                                                     \
      "per-lifeline processes: talk through the NATS server at\n"                                 \
      "URL (nats://HOST:PORT, tls://HOST:PORT; several for a\n"                                   \
      "cluster) instead of sockets")                                                              \
    X(NATS_CREDS, "--nats-creds", "FILE", ZV_RUN, "NATS: user credentials (JWT and NKey seed)")   \
    X(NATS_USER, "--nats-user", "USER", ZV_RUN,                                                   \
      "NATS: user name; the password is read from\n"                                              \
      "$ZGC_NATS_PASSWORD")                                                                       \
    X(NATS_TOKEN_FILE, "--nats-token-file", "FILE", ZV_RUN,                                       \
      "NATS: the token in FILE (else $ZGC_NATS_TOKEN, if set)")                                   \
    X(NATS_NKEY, "--nats-nkey", "FILE", ZV_RUN, "NATS: the NKey user seed in FILE (SU...)")       \
    X(NATS_CA, "--nats-ca", "FILE", ZV_RUN,                                                       \
      "NATS: TLS, the server's certificate must be signed by\n"                                   \
      "one in FILE (PEM)")                                                                        \
    X(NATS_REPLICAS, "--nats-replicas", "N", ZV_RUN,                                              \
      "NATS, durable runs: the run's stream is kept on N\n"                                       \
      "servers of a JetStream cluster (1 to 5, default 1)")                                       \
    X(JOURNAL, "--journal", "KIND", ZV_RUN,                                                       \
      "durable runs: where the journals live: sqlite (the\n"                                      \
      "run store, default) or nats[:BUCKET] (per-lifeline runs\n"                                 \
      "over --nats: a JetStream key-value bucket, default\n"                                      \
      "ZGC_JOURNAL)")                                                                             \
    X(NATS_CERT, "--nats-cert", "FILE", ZV_RUN, "NATS: TLS client certificate (PEM)")             \
    X(NATS_KEY, "--nats-key", "FILE", ZV_RUN, "NATS: the client certificate's key (PEM)")         \
    X(RUN, "--run", "RUN", ZV_EXE,                                                                \
      "per-lifeline executables with --nats: the run's id,\n"                                     \
      "the same for every lifeline (letters, digits, _ and -)")                                   \
    X(LISTEN, "--listen", "ADDR", ZV_EXE,                                                         \
      "per-lifeline executables: listen on ADDR (unix:PATH,\n"                                    \
      "tcp:HOST:PORT; tcp:PORT is 127.0.0.1:PORT,\n"                                              \
      "tcp:*:PORT every interface)")                                                              \
    X(PEER, "--peer", "NAME=ADDR", ZV_EXE,                                                        \
      "per-lifeline executables: address of lifeline NAME,\n"                                     \
      "once for every other lifeline")                                                            \
    X(SECRET_FILE, "--secret-file", "FILE", ZV_EXE,                                               \
      "per-lifeline executables: the run's secret, the same\n"                                    \
      "file for every lifeline (16 to 4096 bytes, mode 600)")                                     \
    X(RESULT_FILE, "--result-file", "FILE", ZV_EXE, "write the result to FILE instead of stdout") \
    X(ERROR_FILE, "--error-file", "FILE", ZV_EXE,                                                 \
      "write the run's error and when it occurred to FILE\n"                                      \
      "instead of stderr (JSON)")

#define ZV_OPT_ENUM(id, name, meta, scope, help) ZV_OPT_##id,
typedef enum { ZV_RUN_OPTIONS(ZV_OPT_ENUM) ZV_OPT__COUNT } zv_option;
#undef ZV_OPT_ENUM

typedef struct zv_option_info {
    const char *name, *meta;
    int scope;
    const char *help;
} zv_option_info;

static inline const zv_option_info *zv_option_table(void)
{
#define ZV_OPT_ROW(id, name, meta, scope, help) {name, meta, scope, help},
    static const zv_option_info table[] = {ZV_RUN_OPTIONS(ZV_OPT_ROW)};
#undef ZV_OPT_ROW
    return table;
}

/* How an option takes its value (its METAVAR says, above). */
enum { ZV_VALUE_REQUIRED = 0, ZV_VALUE_NONE = 1, ZV_VALUE_OPTIONAL = 2 };
static inline int zv_option_value(const zv_option_info *o)
{
    if (!o->meta[0]) return ZV_VALUE_NONE;
    return o->meta[0] == '[' ? ZV_VALUE_OPTIONAL : ZV_VALUE_REQUIRED;
}

/* The option that argument `arg` names, as `--name` or `--name=VALUE`,
 * among the options of `scopes` (ZV_RUN | ZV_EXE); -1 when none. */
static inline int zv_option_lookup(const char *arg, int scopes)
{
    const zv_option_info *t = zv_option_table();
    for (int i = 0; i < ZV_OPT__COUNT; i++) {
        size_t n = strlen(t[i].name);
        if ((t[i].scope & scopes) && strncmp(arg, t[i].name, n) == 0 &&
            (arg[n] == '\0' || arg[n] == '='))
            return i;
    }
    return -1;
}

/* Prints the options of `scopes` as usage lines: "  --name META   help",
 * the help in a column from `column`, continuation lines aligned. */
static inline void zv_print_options(FILE *out, int scopes, int column)
{
    const zv_option_info *t = zv_option_table();
    for (int i = 0; i < ZV_OPT__COUNT; i++) {
        if (!(t[i].scope & scopes)) continue;
        int v = zv_option_value(&t[i]);
        int n = fprintf(out, "  %s%s%s", t[i].name, v == ZV_VALUE_REQUIRED ? " " : "", t[i].meta);
        for (const char *h = t[i].help; *h;) {
            const char *nl = strchr(h, '\n');
            int len = nl ? (int)(nl - h) : (int)strlen(h);
            fprintf(out, "%*s%.*s\n", n < column ? column - n : 1, "", len, h);
            n = 0;
            h += len + (nl ? 1 : 0);
        }
    }
}

#endif
