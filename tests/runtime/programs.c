/* programs.c — hand-written "generated code" for the runtime tests (see
 * programs.h).  Each body calls the runtime exactly as the backend's code
 * does: reads through zgrt_store, writes only through events. */
#include "programs.h"

#include <string.h>
#include <unistd.h>

static const char *const MAIN_CHAN[] = {"main"};
static const char *const TAGS[] = {"while#1", "if#2"};
/* locations: 0 -> 1:1, 1 -> 4:5, 2 -> 9:13, 3 -> 15:5 */
static const zgrt_loc LOCS[] = {{1, 1, NULL}, {4, 5, NULL}, {9, 13, NULL}, {15, 5, NULL}};

#define PROGRAM_CHANS(src, wf, ch, nch)                                                         \
    .abi_version = ZGRT_ABI_VERSION, .source = src, .workflow = wf, .chans = ch, .nchans = nch, \
    .tags = TAGS, .ntags = 2, .locs = LOCS, .nlocs = 4
#define PROGRAM_BASE(src, wf) PROGRAM_CHANS(src, wf, MAIN_CHAN, 1)

static int32_t one_var(int32_t x) { return x; }

/* ---- hello ------------------------------------------------------------ */

static const char *const HELLO_L[] = {"User", "Writer"};
static const zgrt_var HELLO_V[] = {{"topic", {ZGRT_STR, -1}, 0, {0}},
                                   {"draft", {ZGRT_STR, -1}, 0, {0}}};
static const zgrt_input HELLO_IN[] = {{0, 0}};
static const zgrt_result HELLO_RES[] = {{1, 0}};

static void hello_user(zgrt_ctx *ctx)
{
    zgrt_send(ctx, 1, 0, 1, &zgrt_store(ctx)[0], 1);
    int32_t b[] = {1};
    zgrt_recv(ctx, 1, 0, 1, b, NULL, 3);
}

static void hello_writer(zgrt_ctx *ctx)
{
    int32_t b[] = {0};
    zgrt_recv(ctx, 0, 0, 1, b, NULL, 1);
    zgrt_value l = v_str(ctx, "["), r = v_str(ctx, "]"), t, u;
    zgrt_concat(ctx, &l, &zgrt_store(ctx)[0], &t);
    zgrt_concat(ctx, &t, &r, &u);
    int32_t w[] = {1};
    zgrt_assign(ctx, NULL, 1, w, &u, 2);
    zgrt_send(ctx, 0, 0, 1, &zgrt_store(ctx)[1], 3);
}

static const zgrt_body_fn HELLO_B[] = {hello_user, hello_writer};

const zgrt_program prog_hello = {
    PROGRAM_BASE("hello.zg", "hello"),
    .nlifelines = 2,
    .lifelines = HELLO_L,
    .bodies = HELLO_B,
    .nvars = 2,
    .vars = HELLO_V,
    .ninputs = 1,
    .inputs = HELLO_IN,
    .nresults = 1,
    .results = HELLO_RES,
};

/* ---- ping-pong with control messages ------------------------------------ */

static const char *const AB[] = {"A", "B"};
static const char *const SOLO[] = {"A"};
static const zgrt_var PP_V[] = {{"limit", {ZGRT_INT, -1}, 0, {0}},
                                {"n", {ZGRT_INT, -1}, 1, {.tag = ZGRT_INT, .u.i = 0}},
                                {"k", {ZGRT_INT, -1}, 1, {.tag = ZGRT_INT, .u.i = 0}}};
static const zgrt_input PP_IN[] = {{0, 0}};
static const zgrt_result PP_RES[] = {{1, 0}};

static void pp_a(zgrt_ctx *ctx)
{
    for (;;) {
        const zgrt_value *s = zgrt_store(ctx);
        int go = s[1].u.i < s[0].u.i;
        zgrt_choice(ctx, 0, go, 1);
        zgrt_send_ctl(ctx, 1, 0, 0, go, 1);
        if (!go) break;
        zgrt_send(ctx, 1, 0, 1, &s[1], 2);
        int32_t b[] = {1};
        zgrt_recv(ctx, 1, 0, 1, b, NULL, 2);
    }
}

static void pp_b(zgrt_ctx *ctx)
{
    while (zgrt_recv_ctl(ctx, 0, 0, 0, 1)) {
        int32_t b[] = {2};
        zgrt_recv(ctx, 0, 0, 1, b, NULL, 2);
        zgrt_value v = v_int(zgrt_store(ctx)[2].u.i + 1);
        int32_t w = one_var(2);
        zgrt_assign(ctx, "inc", 1, &w, &v, 2);
        zgrt_send(ctx, 0, 0, 1, &zgrt_store(ctx)[2], 3);
    }
}

static const zgrt_body_fn PP_B[] = {pp_a, pp_b};

const zgrt_program prog_pingpong = {
    PROGRAM_BASE("pp.zg", "pingpong"),
    .nlifelines = 2,
    .lifelines = AB,
    .bodies = PP_B,
    .nvars = 3,
    .vars = PP_V,
    .ninputs = 1,
    .inputs = PP_IN,
    .nresults = 1,
    .results = PP_RES,
};

/* ---- parallel regions ------------------------------------------------- */

static const char *const PAR_CHANS[] = {"main", "main/par1.1", "main/par1.2"};
static const zgrt_var PAR_V[] = {{"x", {ZGRT_INT, -1}, 1, {.tag = ZGRT_INT, .u.i = 10}},
                                 {"y1", {ZGRT_INT, -1}, 0, {0}},
                                 {"y2", {ZGRT_INT, -1}, 0, {0}},
                                 {"z", {ZGRT_INT, -1}, 0, {0}}};
static const zgrt_result PAR_RES[] = {{3, 0}};

static void par_a1(zgrt_ctx *ctx)
{
    zgrt_send(ctx, 1, 1, 1, &zgrt_store(ctx)[0], 1);
    int32_t b[] = {1};
    zgrt_recv(ctx, 1, 1, 1, b, NULL, 1);
}

static void par_a2(zgrt_ctx *ctx)
{
    zgrt_send(ctx, 1, 2, 1, &zgrt_store(ctx)[0], 1);
    int32_t b[] = {2};
    zgrt_recv(ctx, 1, 2, 1, b, NULL, 1);
}

static const zgrt_body_fn PAR_A_BR[] = {par_a1, par_a2};

static void par_a(zgrt_ctx *ctx)
{
    zgrt_par(ctx, 2, PAR_A_BR, 1);
    const zgrt_value *s = zgrt_store(ctx);
    zgrt_value z = v_int(s[1].u.i + s[2].u.i);
    int32_t w[] = {3};
    zgrt_assign(ctx, NULL, 1, w, &z, 2);
}

static void par_b_branch(zgrt_ctx *ctx, int32_t chan, int32_t var, int64_t factor)
{
    int32_t b[] = {var};
    zgrt_recv(ctx, 0, chan, 1, b, NULL, 1);
    zgrt_value v = v_int(zgrt_store(ctx)[var].u.i * factor);
    zgrt_assign(ctx, NULL, 1, b, &v, 2);
    zgrt_send(ctx, 0, chan, 1, &zgrt_store(ctx)[var], 3);
}

static void par_b1(zgrt_ctx *ctx) { par_b_branch(ctx, 1, 1, 2); }
static void par_b2(zgrt_ctx *ctx) { par_b_branch(ctx, 2, 2, 3); }
static const zgrt_body_fn PAR_B_BR[] = {par_b1, par_b2};
static void par_b(zgrt_ctx *ctx) { zgrt_par(ctx, 2, PAR_B_BR, 1); }
static const zgrt_body_fn PAR_B[] = {par_a, par_b};

const zgrt_program prog_par = {
    PROGRAM_CHANS("par.zg", "par", PAR_CHANS, 3),
    .nlifelines = 2,
    .lifelines = AB,
    .bodies = PAR_B,
    .nvars = 4,
    .vars = PAR_V,
    .nresults = 1,
    .results = PAR_RES,
};

/* ---- parallel stress: 8 branches × 200 round trips ---------------------- */

#define NSTRESS 8
#define ROUNDS 200
static const char *const STRESS_CHANS[NSTRESS + 1] = {"main",        "main/par1.1", "main/par1.2",
                                                      "main/par1.3", "main/par1.4", "main/par1.5",
                                                      "main/par1.6", "main/par1.7", "main/par1.8"};
static const zgrt_var STRESS_V[NSTRESS + 1] = {
    {"c1", {ZGRT_INT, -1}, 1, {.tag = ZGRT_INT}}, {"c2", {ZGRT_INT, -1}, 1, {.tag = ZGRT_INT}},
    {"c3", {ZGRT_INT, -1}, 1, {.tag = ZGRT_INT}}, {"c4", {ZGRT_INT, -1}, 1, {.tag = ZGRT_INT}},
    {"c5", {ZGRT_INT, -1}, 1, {.tag = ZGRT_INT}}, {"c6", {ZGRT_INT, -1}, 1, {.tag = ZGRT_INT}},
    {"c7", {ZGRT_INT, -1}, 1, {.tag = ZGRT_INT}}, {"c8", {ZGRT_INT, -1}, 1, {.tag = ZGRT_INT}},
    {"sum", {ZGRT_INT, -1}, 1, {.tag = ZGRT_INT}}};
static const zgrt_result STRESS_RES[] = {{NSTRESS, 0}};

static void stress_a_branch(zgrt_ctx *ctx, int32_t k)
{
    for (int r = 0; r < ROUNDS; r++) {
        int go = zgrt_store(ctx)[k].u.i < ROUNDS;
        zgrt_choice(ctx, 0, go, 1);
        zgrt_send_ctl(ctx, 1, k + 1, 0, go, 1);
        zgrt_send(ctx, 1, k + 1, 1, &zgrt_store(ctx)[k], 1);
        int32_t b[] = {k};
        zgrt_recv(ctx, 1, k + 1, 1, b, NULL, 1);
    }
    zgrt_choice(ctx, 0, 0, 1);
    zgrt_send_ctl(ctx, 1, k + 1, 0, 0, 1);
}

static void stress_b_branch(zgrt_ctx *ctx, int32_t k)
{
    while (zgrt_recv_ctl(ctx, 0, k + 1, 0, 1)) {
        int32_t b[] = {k};
        zgrt_recv(ctx, 0, k + 1, 1, b, NULL, 1);
        zgrt_value v = v_int(zgrt_store(ctx)[k].u.i + 1);
        zgrt_assign(ctx, NULL, 1, b, &v, 1);
        zgrt_send(ctx, 0, k + 1, 1, &zgrt_store(ctx)[k], 1);
    }
}

#define STRESS_BR(k)                                                    \
    static void stress_a##k(zgrt_ctx *ctx) { stress_a_branch(ctx, k); } \
    static void stress_b##k(zgrt_ctx *ctx) { stress_b_branch(ctx, k); }
STRESS_BR(0)
STRESS_BR(1)
STRESS_BR(2)
STRESS_BR(3)
STRESS_BR(4)
STRESS_BR(5)
STRESS_BR(6)
STRESS_BR(7)
static const zgrt_body_fn STRESS_A_BR[] = {stress_a0, stress_a1, stress_a2, stress_a3,
                                           stress_a4, stress_a5, stress_a6, stress_a7};
static const zgrt_body_fn STRESS_B_BR[] = {stress_b0, stress_b1, stress_b2, stress_b3,
                                           stress_b4, stress_b5, stress_b6, stress_b7};

static void stress_a(zgrt_ctx *ctx)
{
    zgrt_par(ctx, NSTRESS, STRESS_A_BR, 1);
    int64_t sum = 0;
    for (int k = 0; k < NSTRESS; k++) sum += zgrt_store(ctx)[k].u.i;
    zgrt_value v = v_int(sum);
    int32_t w[] = {NSTRESS};
    zgrt_assign(ctx, NULL, 1, w, &v, 1);
}

static void stress_b(zgrt_ctx *ctx) { zgrt_par(ctx, NSTRESS, STRESS_B_BR, 1); }
static const zgrt_body_fn STRESS_B[] = {stress_a, stress_b};

const zgrt_program prog_par_stress = {
    PROGRAM_CHANS("stress.zg", "stress", STRESS_CHANS, NSTRESS + 1),
    .nlifelines = 2,
    .lifelines = AB,
    .bodies = STRESS_B,
    .nvars = NSTRESS + 1,
    .vars = STRESS_V,
    .nresults = 1,
    .results = STRESS_RES,
};

/* ---- coregion ------------------------------------------------------------ */

static const char *const ABC[] = {"A", "B", "C"};
static const zgrt_var CO_V[] = {{"a", {ZGRT_INT, -1}, 1, {.tag = ZGRT_INT, .u.i = 1}},
                                {"b", {ZGRT_INT, -1}, 1, {.tag = ZGRT_INT, .u.i = 2}},
                                {"ra", {ZGRT_INT, -1}, 0, {0}},
                                {"rb", {ZGRT_INT, -1}, 0, {0}},
                                {"order", {ZGRT_INT, -1}, 1, {.tag = ZGRT_INT, .u.i = 0}},
                                {"sum", {ZGRT_INT, -1}, 0, {0}},
                                {"go", {ZGRT_BOOL, -1}, 1, {.tag = ZGRT_BOOL, .u.i = 1}}};
static const zgrt_result CO_RES[] = {{4, 2}, {5, 2}};

static void co_a(zgrt_ctx *ctx)
{
    zgrt_send(ctx, 2, 0, 1, &zgrt_store(ctx)[0], 1);
    zgrt_send(ctx, 1, 0, 1, &zgrt_store(ctx)[6], 1); /* now B may send */
}

static void co_b(zgrt_ctx *ctx)
{
    int32_t b[] = {6};
    zgrt_recv(ctx, 0, 0, 1, b, NULL, 1);
    zgrt_send(ctx, 2, 0, 1, &zgrt_store(ctx)[1], 1);
}

static void co_c(zgrt_ctx *ctx)
{
    static const int32_t peers[] = {0, 1};
    int32_t binds[] = {2, 3};
    int64_t done = 0;
    for (int i = 0; i < 2; i++) {
        int32_t k = zgrt_wait_any(ctx, 0, 2, peers, done, 1);
        zgrt_recv(ctx, peers[k], 0, 1, &binds[k], NULL, 1);
        done |= (int64_t)1 << k;
        zgrt_value o = v_int(zgrt_store(ctx)[4].u.i * 10 + k + 1);
        int32_t w[] = {4};
        zgrt_assign(ctx, NULL, 1, w, &o, 1);
    }
    const zgrt_value *s = zgrt_store(ctx);
    zgrt_value sum = v_int(s[2].u.i + s[3].u.i);
    int32_t w[] = {5};
    zgrt_assign(ctx, NULL, 1, w, &sum, 2);
}

static const zgrt_body_fn CO_B[] = {co_a, co_b, co_c};

const zgrt_program prog_coregion = {
    PROGRAM_BASE("co.zg", "coregion"),
    .nlifelines = 3,
    .lifelines = ABC,
    .bodies = CO_B,
    .nvars = 7,
    .vars = CO_V,
    .nresults = 2,
    .results = CO_RES,
    .result_tuple = 1,
};

/* ---- errors ---------------------------------------------------------------- */

static const zgrt_var ERR_V[] = {{"x", {ZGRT_INT, -1}, 1, {.tag = ZGRT_INT, .u.i = 3}},
                                 {"y", {ZGRT_INT, -1}, 0, {0}},
                                 {"n", {ZGRT_INT, -1}, 1, {.tag = ZGRT_INT, .u.i = 0}}};

static void mm_a(zgrt_ctx *ctx) { zgrt_send(ctx, 1, 0, 1, &zgrt_store(ctx)[0], 0); }

static void mm_b(zgrt_ctx *ctx)
{
    int32_t b[] = {-1};
    zgrt_value c[] = {v_int(5)};
    zgrt_recv(ctx, 0, 0, 1, b, c, 1);
}

static const zgrt_body_fn MM_B[] = {mm_a, mm_b};

const zgrt_program prog_mismatch = {
    PROGRAM_BASE("mm.zg", "mismatch"),
    .nlifelines = 2,
    .lifelines = AB,
    .bodies = MM_B,
    .nvars = 3,
    .vars = ERR_V,
};

static void trap_a(zgrt_ctx *ctx)
{
    int32_t b[] = {1};
    zgrt_recv(ctx, 1, 0, 1, b, NULL, 1);
}

static void trap_b(zgrt_ctx *ctx)
{
    zgrt_value v = v_int(1);
    int32_t w[] = {2};
    zgrt_assign(ctx, NULL, 1, w, &v, 1);
    zgrt_trap(ctx, 2, "integer overflow");
    /* never reached */
    zgrt_send(ctx, 0, 0, 1, &zgrt_store(ctx)[0], 3);
}

static const zgrt_body_fn TRAP_B[] = {trap_a, trap_b};

const zgrt_program prog_trap = {
    PROGRAM_BASE("t.zg", "trap"),
    .nlifelines = 2,
    .lifelines = AB,
    .bodies = TRAP_B,
    .nvars = 3,
    .vars = ERR_V,
};

static const char *const TP_CHANS[] = {"main", "main/par1.1", "main/par1.2"};

static void tp_b1(zgrt_ctx *ctx)
{
    int32_t b[] = {1};
    zgrt_recv(ctx, 0, 1, 1, b, NULL, 1); /* A never sends */
}

static void tp_b2(zgrt_ctx *ctx) { zgrt_trap(ctx, 2, "integer overflow"); }
static const zgrt_body_fn TP_BR[] = {tp_b1, tp_b2};
static void tp_b(zgrt_ctx *ctx) { zgrt_par(ctx, 2, TP_BR, 1); }
static const zgrt_body_fn TP_B[] = {trap_a, tp_b};

const zgrt_program prog_trap_par = {
    PROGRAM_CHANS("t.zg", "trap_par", TP_CHANS, 3),
    .nlifelines = 2,
    .lifelines = AB,
    .bodies = TP_B,
    .nvars = 3,
    .vars = ERR_V,
};

static void forever_a(zgrt_ctx *ctx)
{
    for (;;) {
        zgrt_choice(ctx, 0, 1, 1);
        zgrt_value v = v_int(zgrt_store(ctx)[2].u.i % 1000 + 1);
        int32_t w[] = {2};
        zgrt_assign(ctx, NULL, 1, w, &v, 2);
    }
}

static const zgrt_body_fn FOREVER_B[] = {forever_a, trap_a};

const zgrt_program prog_forever = {
    PROGRAM_BASE("f.zg", "forever"),
    .nlifelines = 2,
    .lifelines = AB,
    .bodies = FOREVER_B,
    .nvars = 3,
    .vars = ERR_V,
};

static void slow_a(zgrt_ctx *ctx)
{
    for (;;) {
        zgrt_choice(ctx, 0, 1, 1);
        usleep(2000); /* a slow computation, out of the runtime's sight */
    }
}

static const zgrt_body_fn SLOW_B[] = {slow_a, trap_a};

const zgrt_program prog_forever_slow = {
    PROGRAM_BASE("f.zg", "forever_slow"),
    .nlifelines = 2,
    .lifelines = AB,
    .bodies = SLOW_B,
    .nvars = 3,
    .vars = ERR_V,
};

static void dl_b(zgrt_ctx *ctx)
{
    int32_t b[] = {1};
    zgrt_recv(ctx, 0, 0, 1, b, NULL, 1);
}

static const zgrt_body_fn DL_B[] = {trap_a, dl_b};

const zgrt_program prog_deadlock = {
    PROGRAM_BASE("d.zg", "deadlock"),
    .nlifelines = 2,
    .lifelines = AB,
    .bodies = DL_B,
    .nvars = 3,
    .vars = ERR_V,
};

static void dlp_b1(zgrt_ctx *ctx)
{
    int32_t b[] = {1};
    zgrt_recv(ctx, 0, 1, 1, b, NULL, 1); /* A never sends */
}

static void dlp_b2(zgrt_ctx *ctx) { (void)ctx; }
static const zgrt_body_fn DLP_BR[] = {dlp_b1, dlp_b2};
static void dlp_b(zgrt_ctx *ctx) { zgrt_par(ctx, 2, DLP_BR, 1); }
static const zgrt_body_fn DLP_B[] = {trap_a, dlp_b};

const zgrt_program prog_deadlock_par = {
    PROGRAM_CHANS("d.zg", "deadlock_par", TP_CHANS, 3),
    .nlifelines = 2,
    .lifelines = AB,
    .bodies = DLP_B,
    .nvars = 3,
    .vars = ERR_V,
};

/* ---- messages that do not fit the receive ------------------------------------ */

int malformed_case;

static void mf_a(zgrt_ctx *ctx)
{
    const zgrt_value *s = zgrt_store(ctx);
    switch (malformed_case) {
    case 0: zgrt_send_ctl(ctx, 1, 0, 0, 1, 1); break; /* B expects a user message */
    case 1: zgrt_send(ctx, 1, 0, 1, &s[0], 1); break; /* B expects a control message */
    case 2: zgrt_send_ctl(ctx, 1, 0, 1, 1, 1); break; /* another tag */
    default: zgrt_send(ctx, 1, 0, 2, s, 1); break;    /* two values for one */
    }
}

static void mf_b(zgrt_ctx *ctx)
{
    int32_t b[] = {1};
    if (malformed_case == 1 || malformed_case == 2)
        zgrt_recv_ctl(ctx, 0, 0, 0, 2);
    else
        zgrt_recv(ctx, 0, 0, 1, b, NULL, 2);
}

static const zgrt_body_fn MF_B[] = {mf_a, mf_b};

const zgrt_program prog_malformed = {
    PROGRAM_BASE("mf.zg", "malformed"),
    .nlifelines = 2,
    .lifelines = AB,
    .bodies = MF_B,
    .nvars = 3,
    .vars = ERR_V,
};

/* A lifeline stuck in foreign code that never returns to the runtime. */
static void stuck_a(zgrt_ctx *ctx)
{
    (void)ctx;
    for (;;) usleep(100000);
}
static const zgrt_body_fn STUCK_B[] = {stuck_a};

const zgrt_program prog_stuck = {
    PROGRAM_BASE("s.zg", "stuck"),
    .nlifelines = 1,
    .lifelines = SOLO,
    .bodies = STUCK_B,
    .nvars = 3,
    .vars = ERR_V,
};

/* ---- enums ------------------------------------------------------------ */

static const char *const STATUS_M[] = {"pending", "passed", "failed"};
static const zgrt_enum ENUMS[] = {{"Status", 3, STATUS_M}};
static const char *const RB[] = {"Runner", "Boss"};
static const zgrt_var EN_V[] = {{"status", {ZGRT_ENUM, 0}, 1, {.tag = ZGRT_ENUM, .u.i = 0}},
                                {"bad", {ZGRT_BOOL, -1}, 1, {.tag = ZGRT_BOOL, .u.i = 0}}};
static const zgrt_result EN_RES[] = {{0, 1}, {1, 1}};

static void en_runner(zgrt_ctx *ctx)
{
    zgrt_value f = v_enum(0, 2);
    int32_t w[] = {0};
    zgrt_assign(ctx, NULL, 1, w, &f, 1);
    zgrt_send(ctx, 1, 0, 1, &zgrt_store(ctx)[0], 1);
}

static void en_boss(zgrt_ctx *ctx)
{
    int32_t b[] = {0};
    zgrt_recv(ctx, 0, 0, 1, b, NULL, 1);
    zgrt_value f = v_enum(0, 2);
    zgrt_value bad = v_bool(zgrt_compare(&zgrt_store(ctx)[0], &f) == 0);
    int32_t w[] = {1};
    zgrt_assign(ctx, NULL, 1, w, &bad, 2);
}

static const zgrt_body_fn EN_B[] = {en_runner, en_boss};

const zgrt_program prog_enums = {
    PROGRAM_BASE("enums.zg", "enums"),
    .nlifelines = 2,
    .lifelines = RB,
    .bodies = EN_B,
    .nenums = 1,
    .enums = ENUMS,
    .nvars = 2,
    .vars = EN_V,
    .nresults = 2,
    .results = EN_RES,
    .result_tuple = 1,
};

/* ---- actions ---------------------------------------------------------------- */

static int zg_double(zgrt_call *call)
{
    zgrt_ret_int(call, 0, 2 * zgrt_arg_int(call, 0));
    return 0;
}

static int zg_boom(zgrt_call *call) { return zgrt_fail(call, "the %s exploded", "widget"); }

static const char *const P_N[] = {"n"};
static const zgrt_type P_INT[] = {{ZGRT_INT, -1}};
static const char *const P_TOPIC[] = {"topic"};
static const zgrt_type P_STR[] = {{ZGRT_STR, -1}};
static const char *const R_NONE[] = {NULL};
static const char *const R_DRAFT[] = {"draft"};

static const zgrt_action ACTIONS[] = {
    {.name = "double",
     .kind = ZGRT_ACT_EXTERN_PURE,
     .nparams = 1,
     .param_names = P_N,
     .param_types = P_INT,
     .nresults = 1,
     .result_names = R_NONE,
     .result_types = P_INT,
     .retries = 3,
     .fn = zg_double},
    {.name = "write",
     .kind = ZGRT_ACT_LLM,
     .nparams = 1,
     .param_names = P_TOPIC,
     .param_types = P_STR,
     .nresults = 1,
     .result_names = R_DRAFT,
     .result_types = P_STR,
     .system = "Write.",
     .user = "{topic}",
     .parse = ZGRT_PARSE_TEXT,
     .retries = 3},
    {.name = "boom",
     .kind = ZGRT_ACT_EFFECT,
     .nparams = 1,
     .param_names = P_N,
     .param_types = P_INT,
     .nresults = 1,
     .result_names = R_NONE,
     .result_types = P_INT,
     .retries = 3,
     .fn = zg_boom},
};

static const zgrt_str HI = {2, "hi"}; /* the flexible array initialiser is a GNU extension */
static const zgrt_var ACT_V[] = {{"n", {ZGRT_INT, -1}, 1, {.tag = ZGRT_INT, .u.i = 21}},
                                 {"m", {ZGRT_INT, -1}, 0, {0}},
                                 {"topic", {ZGRT_STR, -1}, 1, {.tag = ZGRT_STR, .u.s = &HI}},
                                 {"draft", {ZGRT_STR, -1}, 0, {0}}};
static const zgrt_result ACT_RES[] = {{1, 0}, {3, 0}};

static void act_a(zgrt_ctx *ctx)
{
    int32_t o1[] = {1}, o2[] = {3};
    zgrt_act(ctx, 0, &zgrt_store(ctx)[0], 1, o1, 1);
    zgrt_act(ctx, 1, &zgrt_store(ctx)[2], 1, o2, 2);
}

static const zgrt_body_fn ACT_B[] = {act_a};

const zgrt_program prog_actions = {
    PROGRAM_BASE("act.zg", "actions"),
    .nlifelines = 1,
    .lifelines = SOLO,
    .bodies = ACT_B,
    .nvars = 4,
    .vars = ACT_V,
    .nactions = 3,
    .actions = ACTIONS,
    .nresults = 2,
    .results = ACT_RES,
    .result_tuple = 1,
};

static void boom_a(zgrt_ctx *ctx)
{
    int32_t o[] = {1};
    zgrt_act(ctx, 2, &zgrt_store(ctx)[0], 1, o, 2);
}

static const zgrt_body_fn BOOM_B[] = {boom_a};

const zgrt_program prog_action_fails = {
    PROGRAM_BASE("act.zg", "boom"),
    .nlifelines = 1,
    .lifelines = SOLO,
    .bodies = BOOM_B,
    .nvars = 4,
    .vars = ACT_V,
    .nactions = 3,
    .actions = ACTIONS,
    .nresults = 1,
    .results = ACT_RES,
};

/* ---- inputs of every type ------------------------------------------------------ */

static const char *const COLOR_M[] = {"red", "green"};
static const zgrt_enum COLOR[] = {{"Color", 2, COLOR_M}};
static const char *const MAIN_L[] = {"Main"};
static const zgrt_var IN_V[] = {{"i", {ZGRT_INT, -1}, 0, {0}},  {"f", {ZGRT_FLOAT, -1}, 0, {0}},
                                {"b", {ZGRT_BOOL, -1}, 0, {0}}, {"s", {ZGRT_STR, -1}, 0, {0}},
                                {"j", {ZGRT_JSON, -1}, 0, {0}}, {"e", {ZGRT_ENUM, 0}, 0, {0}}};
static const zgrt_input IN_IN[] = {{0, 0}, {1, 0}, {2, 0}, {3, 0}, {4, 0}, {5, 0}};
static const zgrt_result IN_RES[] = {{0, 0}, {1, 0}, {2, 0}, {3, 0}, {4, 0}, {5, 0}};

static void in_main(zgrt_ctx *ctx) { (void)ctx; }
static const zgrt_body_fn IN_B[] = {in_main};

const zgrt_program prog_inputs = {
    PROGRAM_BASE("in.zg", "inputs"),
    .nlifelines = 1,
    .lifelines = MAIN_L,
    .bodies = IN_B,
    .nenums = 1,
    .enums = COLOR,
    .nvars = 6,
    .vars = IN_V,
    .ninputs = 6,
    .inputs = IN_IN,
    .nresults = 6,
    .results = IN_RES,
    .result_tuple = 1,
};

static void nr_main(zgrt_ctx *ctx)
{
    zgrt_value v = v_int(7);
    int32_t w[] = {0};
    zgrt_assign(ctx, NULL, 1, w, &v, 1);
}
static const zgrt_body_fn NR_B[] = {nr_main};

const zgrt_program prog_noresult = {
    PROGRAM_BASE("nr.zg", "noresult"),
    .nlifelines = 1,
    .lifelines = MAIN_L,
    .bodies = NR_B,
    .nvars = 1,
    .vars = IN_V,
};
