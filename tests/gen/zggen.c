/* zggen.c — random well-typed, terminating .zg workflows.
 *
 * Every variable is an int with a default, so definedness holds on every
 * path.  Loops run at most three times: each while has a counter, reset
 * before the loop and incremented by the owner in the body; loops share a
 * counter only when they are neither nested in each other nor in concurrent
 * parallel branches (the counter is chosen by nesting depth and branch).  Parallel
 * branches use disjoint variables, so no branch writes what another reads.
 * Coregions have one receiver, distinct senders and distinct bound
 * variables.
 *
 * With `rich`: a str, an enum and a bool variable (written only outside
 * parallel regions, so no branch writes what another reads), constant
 * bindings (the sender sends the same constant, so they always match),
 * blocks, two named guards, and CPL guards nesting every operator.  Guards
 * never divide and never overflow, so runs do not fail.
 *
 * With `cpl_full` (and rich): variables without a default, u0 and u1
 * (int) and f0 (bool), written by local assignments and receive bindings
 * outside parallel regions only (often inside an if, so on some paths),
 * and never read but by CPL guards, where a term without a value makes
 * its atom false; a pure bool action `both`, two more named guards, and
 * guards from full_guard: every CPL operator nested, atoms over maybe
 * undefined terms (@B.u0, u1, @B.f0, …), connectives inside atoms (the
 * body of `both`, str() of a disjunction, ?: inside a comparison) and
 * between formulas.  A guard that reads u0, u1 or f0 unqualified but has
 * no CPL operator is made CPL by `seen OWNER && (…)` (seen of the owner
 * itself is true): plain guards must read defined variables. */
#include "zggen.h"

#include <string.h>

typedef struct Gen {
    ZBuf *out;
    const ZGenOptions *o;
    uint64_t rng;
    int budget;    /* statements left */
    int nvars;     /* data variables v0..v{nvars-1} */
    int ncounters; /* loop counters c0.. */
    int indent;
    int in_par; /* inside a parallel region */
    /* cpl_full: the guard being drawn */
    int owner;        /* its owner */
    int cpl_ops;      /* CPL operators and @B.x terms in it */
    bool reads_undef; /* it reads u0, u1 or f0 unqualified */
} Gen;

static uint64_t next(Gen *g)
{
    /* splitmix64 */
    uint64_t z = (g->rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int pick(Gen *g, int n) { return n <= 1 ? 0 : (int)(next(g) % (uint64_t)n); }

static void line(Gen *g, const char *fmt, ...) ZG_PRINTF(2, 3);
static void line(Gen *g, const char *fmt, ...)
{
    for (int i = 0; i < g->indent; i++) zu_buf_puts(g->out, "    ");
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    zu_buf_puts(g->out, tmp);
    zu_buf_putc(g->out, '\n');
}

/* A variable from the allowed set [lo, lo + span) of data variables. */
typedef struct VarSet {
    int lo, span;
} VarSet;

static int var(Gen *g, VarSet vs) { return vs.lo + pick(g, vs.span); }

static int other(Gen *g, int not )
{
    int n = g->o->lifelines;
    int k = pick(g, n - 1);
    return k >= not ? k + 1 : k;
}

static void atom(Gen *g, ZBuf *b, VarSet vs)
{
    static const char *const ops[] = {"<", "<=", ">", ">=", "==", "!="};
    if (g->o->rich) {
        switch (pick(g, 10)) {
        case 0: zu_buf_printf(b, "len(s0) %s %d", ops[pick(g, 6)], 1 + pick(g, 4)); return;
        case 1: zu_buf_printf(b, "e0 %s m%d", pick(g, 2) ? "==" : "!=", pick(g, 3)); return;
        case 2: zu_buf_puts(b, pick(g, 2) ? "b0" : "!b0"); return;
        case 3:
            zu_buf_printf(b, "v%d %% 5 + v%d %s %d", var(g, vs), var(g, vs), ops[pick(g, 6)],
                          pick(g, 6));
            return;
        case 4: zu_buf_printf(b, "contains(s0, \"%s\")", pick(g, 2) ? "x" : "ay"); return;
        default: break;
        }
    }
    zu_buf_printf(b, "v%d %s %d", var(g, vs), ops[pick(g, 6)], pick(g, 4));
}

/* The whole CPL operator set, every operand parenthesised. */
static void rich_formula(Gen *g, ZBuf *b, VarSet vs, int depth)
{
    static const char *const ops[] = {"<", "<=", ">", ">=", "==", "!="};
    int n = g->o->lifelines;
    int choice = depth > 0 ? pick(g, 17) : pick(g, 4);
    switch (choice) {
    case 0: atom(g, b, vs); break;
    case 1: zu_buf_printf(b, "seen L%d", pick(g, n)); break;
    case 2:
        zu_buf_printf(b, "@L%d.v%d %s %d", pick(g, n), var(g, vs), ops[pick(g, 6)], pick(g, 4));
        break;
    case 3: zu_buf_printf(b, "@L%d.v%d == v%d", pick(g, n), var(g, vs), var(g, vs)); break;
    case 4:
        zu_buf_puts(b, "prev (");
        rich_formula(g, b, vs, depth - 1);
        zu_buf_puts(b, ")");
        break;
    case 5:
        zu_buf_puts(b, "(");
        rich_formula(g, b, vs, depth - 1);
        zu_buf_puts(b, ") since (");
        rich_formula(g, b, vs, depth - 1);
        zu_buf_puts(b, ")");
        break;
    case 6:
        zu_buf_puts(b, "once (");
        rich_formula(g, b, vs, depth - 1);
        zu_buf_puts(b, ")");
        break;
    case 7:
        zu_buf_puts(b, "historically (");
        rich_formula(g, b, vs, depth - 1);
        zu_buf_puts(b, ")");
        break;
    case 8:
        zu_buf_puts(b, "past (");
        rich_formula(g, b, vs, depth - 1);
        zu_buf_puts(b, ")");
        break;
    case 9:
        zu_buf_printf(b, "@L%d(", pick(g, n));
        rich_formula(g, b, vs, depth - 1);
        zu_buf_puts(b, ")");
        break;
    case 10:
    case 11:
        zu_buf_puts(b, "(");
        rich_formula(g, b, vs, depth - 1);
        zu_buf_puts(b, choice == 10 ? ") && (" : ") || (");
        rich_formula(g, b, vs, depth - 1);
        zu_buf_puts(b, ")");
        break;
    case 12:
        zu_buf_puts(b, "!(");
        rich_formula(g, b, vs, depth - 1);
        zu_buf_puts(b, ")");
        break;
    case 13:
        zu_buf_puts(b, "(");
        rich_formula(g, b, vs, depth - 1);
        zu_buf_puts(b, pick(g, 2) ? ") == (" : ") != (");
        rich_formula(g, b, vs, depth - 1);
        zu_buf_puts(b, ")");
        break;
    case 14:
        zu_buf_puts(b, "(");
        atom(g, b, vs);
        zu_buf_puts(b, ") ? (");
        rich_formula(g, b, vs, depth - 1);
        zu_buf_puts(b, ") : (");
        rich_formula(g, b, vs, depth - 1);
        zu_buf_puts(b, ")");
        break;
    default: zu_buf_puts(b, pick(g, 2) ? "g0" : "g1"); break;
    }
}

/* cpl_full: an atom whose terms may be undefined, or a CPL leaf. */
static void full_leaf(Gen *g, ZBuf *b, VarSet vs)
{
    static const char *const ops[] = {"<", "<=", ">", ">=", "==", "!="};
    int n = g->o->lifelines;
    switch (pick(g, 14)) {
    case 0: atom(g, b, vs); break;
    case 1:
        zu_buf_printf(b, "@L%d.u%d %s %d", pick(g, n), pick(g, 2), ops[pick(g, 6)], pick(g, 5));
        g->cpl_ops++;
        break;
    case 2:
        zu_buf_printf(b, "@L%d.f0", pick(g, n));
        g->cpl_ops++;
        break;
    case 3:
        zu_buf_printf(b, "u%d %s %d", pick(g, 2), ops[pick(g, 6)], pick(g, 5));
        g->reads_undef = true;
        break;
    case 4:
        zu_buf_puts(b, "f0");
        g->reads_undef = true;
        break;
    case 5:
        zu_buf_printf(b, "seen L%d", pick(g, n));
        g->cpl_ops++;
        break;
    case 6:
        zu_buf_printf(b, "@L%d.v%d %s v%d", pick(g, n), var(g, vs), ops[pick(g, 6)], var(g, vs));
        g->cpl_ops++;
        break;
    case 7: /* connectives inside an atom: the body of both */
        zu_buf_printf(b, "both(@L%d.f0, u%d > %d)", pick(g, n), pick(g, 2), pick(g, 4));
        g->cpl_ops++;
        g->reads_undef = true;
        break;
    case 8: /* a disjunction inside a call inside a comparison */
        zu_buf_printf(b, "str(@L%d.f0 || v%d > %d) == \"%s\"", pick(g, n), var(g, vs), pick(g, 4),
                      pick(g, 2) ? "true" : "false");
        g->cpl_ops++;
        break;
    case 9: /* ?: over values inside a comparison */
        zu_buf_printf(b, "(@L%d.u%d > %d ? v%d : %d) == v%d", pick(g, n), pick(g, 2), pick(g, 4),
                      var(g, vs), pick(g, 3), var(g, vs));
        g->cpl_ops++;
        break;
    case 10:
        zu_buf_printf(b, "contains(s0 + str(@L%d.u%d), \"%d\")", pick(g, n), pick(g, 2),
                      pick(g, 5));
        g->cpl_ops++;
        break;
    case 11: zu_buf_puts(b, pick(g, 3) ? (pick(g, 2) ? "true" : "false") : "K0 > 3"); break;
    case 12:
        zu_buf_puts(b, pick(g, 2) ? "h0" : "h1");
        g->cpl_ops++;
        break;
    default:
        zu_buf_puts(b, pick(g, 2) ? "g0" : "g1");
        g->cpl_ops++;
        break;
    }
}

/* cpl_full: a formula nesting every operator.  Temporal operators often
 * sit under @B(…) and prev, where they are evaluated at events other than
 * the choice (at a choice the store and the visible events are those of
 * the event before it). */
static void full_formula(Gen *g, ZBuf *b, VarSet vs, int depth)
{
    static const char *const bin[] = {") && (", ") || (", ") == (", ") != ("};
    int n = g->o->lifelines;
    int choice = depth > 0 ? pick(g, 20) : 0;
    if (choice >= 3 && choice <= 12) g->cpl_ops++;
    switch (choice) {
    case 0:
    case 1:
    case 2: full_leaf(g, b, vs); break;
    case 3:
    case 4:
        zu_buf_printf(b, "@L%d(", pick(g, n));
        full_formula(g, b, vs, depth - 1);
        zu_buf_puts(b, ")");
        break;
    case 5:
    case 6: /* a temporal operator at B's latest visible event */
        zu_buf_printf(b, "@L%d(", pick(g, n));
        if (choice == 5) {
            zu_buf_puts(b, "(");
            full_formula(g, b, vs, depth - 1);
            zu_buf_puts(b, ") since (");
            full_formula(g, b, vs, depth - 1);
            zu_buf_puts(b, ")");
        } else {
            zu_buf_puts(b, pick(g, 3) ? "prev (" : pick(g, 2) ? "once (" : "historically (");
            full_formula(g, b, vs, depth - 1);
            zu_buf_puts(b, ")");
        }
        zu_buf_puts(b, ")");
        break;
    case 7:
        zu_buf_puts(b, "prev (");
        full_formula(g, b, vs, depth - 1);
        zu_buf_puts(b, ")");
        break;
    case 8:
        zu_buf_puts(b, "(");
        full_formula(g, b, vs, depth - 1);
        zu_buf_puts(b, ") since (");
        full_formula(g, b, vs, depth - 1);
        zu_buf_puts(b, ")");
        break;
    case 9:
    case 10:
    case 11:
        zu_buf_puts(b, choice == 9 ? "once (" : choice == 10 ? "historically (" : "past (");
        full_formula(g, b, vs, depth - 1);
        zu_buf_puts(b, ")");
        break;
    case 12:
        /* the shape of the atoms that used to swallow the connective */
        zu_buf_printf(b, "@L%d.u%d == %d || ", pick(g, n), pick(g, 2), pick(g, 3));
        full_formula(g, b, vs, depth - 1);
        break;
    case 13:
        zu_buf_puts(b, "!(");
        full_formula(g, b, vs, depth - 1);
        zu_buf_puts(b, ")");
        break;
    case 14:
    case 15:
    case 16:
        zu_buf_puts(b, "(");
        full_formula(g, b, vs, depth - 1);
        zu_buf_puts(b, bin[pick(g, 4)]);
        full_formula(g, b, vs, depth - 1);
        zu_buf_puts(b, ")");
        break;
    case 17:
        zu_buf_puts(b, "(");
        full_formula(g, b, vs, depth - 1);
        zu_buf_puts(b, ") ? (");
        full_formula(g, b, vs, depth - 1);
        zu_buf_puts(b, ") : (");
        full_formula(g, b, vs, depth - 1);
        zu_buf_puts(b, ")");
        break;
    default:
        zu_buf_puts(b, "!(");
        full_leaf(g, b, vs);
        zu_buf_puts(b, ")");
        break;
    }
}

/* cpl_full: a guard for g->owner. */
static void full_guard(Gen *g, ZBuf *b, VarSet vs, int depth)
{
    ZBuf f = {0};
    g->cpl_ops = 0;
    g->reads_undef = false;
    full_formula(g, &f, vs, depth);
    if (g->reads_undef && !g->cpl_ops)
        zu_buf_printf(b, "seen L%d && (%s)", g->owner, f.data);
    else
        zu_buf_puts(b, f.data);
    zu_buf_free(&f);
}

/* A random guard formula over the owner's variables. */
static void formula(Gen *g, ZBuf *b, VarSet vs, int depth)
{
    if (g->o->cpl_full) {
        full_guard(g, b, vs, depth + 1);
        return;
    }
    if (g->o->rich && g->o->cpl) {
        rich_formula(g, b, vs, depth + 1);
        return;
    }
    int choice = g->o->cpl ? pick(g, depth > 0 ? 12 : 9) : pick(g, depth > 0 ? 4 : 1);
    if (!g->o->cpl && choice >= 1) choice = 9 + (choice - 1); /* only && || ! */
    switch (choice) {
    case 0: atom(g, b, vs); break;
    case 1:
        zu_buf_puts(b, "prev ");
        atom(g, b, vs);
        break;
    case 2:
        zu_buf_puts(b, "(");
        atom(g, b, vs);
        zu_buf_puts(b, ") since (");
        atom(g, b, vs);
        zu_buf_puts(b, ")");
        break;
    case 3:
        zu_buf_puts(b, "once ");
        atom(g, b, vs);
        break;
    case 4:
        zu_buf_puts(b, "historically ");
        atom(g, b, vs);
        break;
    case 5:
        zu_buf_puts(b, "past ");
        atom(g, b, vs);
        break;
    case 6: zu_buf_printf(b, "seen L%d", pick(g, g->o->lifelines)); break;
    case 7:
        zu_buf_printf(b, "@L%d(", pick(g, g->o->lifelines));
        if (depth > 0)
            formula(g, b, vs, depth - 1);
        else
            atom(g, b, vs);
        zu_buf_puts(b, ")");
        break;
    case 8:
        zu_buf_printf(b, "@L%d.v%d == v%d", pick(g, g->o->lifelines), var(g, vs), var(g, vs));
        break;
    case 9:
        zu_buf_puts(b, "(");
        formula(g, b, vs, depth - 1);
        zu_buf_puts(b, ") && (");
        formula(g, b, vs, depth - 1);
        zu_buf_puts(b, ")");
        break;
    case 10:
        zu_buf_puts(b, "(");
        formula(g, b, vs, depth - 1);
        zu_buf_puts(b, ") || (");
        formula(g, b, vs, depth - 1);
        zu_buf_puts(b, ")");
        break;
    default:
        zu_buf_puts(b, "!(");
        formula(g, b, vs, depth - 1);
        zu_buf_puts(b, ")");
        break;
    }
}

static void stmts(Gen *g, VarSet vs, int depth, int count);

static void rich_simple(Gen *g, VarSet vs, int a)
{
    int n = g->o->lifelines;
    int b = other(g, a);
    int typed = !g->in_par; /* str/enum/bool variables: outside parallel regions only */
    switch (pick(g, typed ? 10 : 4)) {
    case 0: {
        int k = pick(g, 5), x = var(g, vs), y = var(g, vs);
        line(g, "L%d(v%d, %d) -> L%d(v%d, %d);", a, x, k, b, y, k);
        break;
    }
    case 1: line(g, "L%d(K%d) -> L%d(K%d);", a, 0, b, 0); break;
    case 2: {
        int x = var(g, vs), y = var(g, vs);
        line(g, "L%d { v%d = inc(v%d); v%d = v%d %% 13 + %d; }", a, x, var(g, vs), y, x,
             pick(g, 3));
        break;
    }
    case 3: line(g, "L%d(\"k\", v%d) -> L%d(\"k\", v%d);", a, var(g, vs), b, var(g, vs)); break;
    case 4:
        line(g, "L%d: s0 = %s;", a, pick(g, 2) ? "s0 + \"x\"" : "lower(trim(s0)) + str(v1)");
        break;
    case 5:
        line(g, "L%d: e0 = v%d > %d ? m%d : m%d;", a, pick(g, 8), pick(g, 3), pick(g, 3),
             pick(g, 3));
        break;
    case 6: line(g, "L%d: b0 = v%d < %d || !b0;", a, pick(g, 8), pick(g, 4)); break;
    case 7: line(g, "L%d(s0, e0) -> L%d(s0, e0);", a, b); break;
    case 8: line(g, "L%d(b0) -> L%d(b0);", a, b); break;
    default: line(g, "L%d(s0) -> L%d(s0);", a, a); break;
    }
    (void)n;
}

/* cpl_full: writes of u0, u1, f0 (outside parallel regions). */
static void full_simple(Gen *g, VarSet vs, int a)
{
    int b = other(g, a);
    switch (pick(g, 5)) {
    case 0: line(g, "L%d: u%d = v%d %% 5;", a, pick(g, 2), var(g, vs)); break;
    case 1: line(g, "L%d: f0 = v%d > %d;", a, var(g, vs), pick(g, 3)); break;
    case 2: line(g, "L%d(v%d) -> L%d(u%d);", a, var(g, vs), b, pick(g, 2)); break;
    case 3: line(g, "L%d(b0) -> L%d(f0);", a, b); break;
    default: line(g, "L%d(v%d, b0) -> L%d(u%d, f0);", a, var(g, vs), b, pick(g, 2)); break;
    }
}

/* actions: a call of guess, note or ask (ask outside parallel regions:
 * h0 is shared). */
static void action_call(Gen *g, VarSet vs, int a)
{
    switch (pick(g, g->in_par ? 2 : 3)) {
    case 0: line(g, "L%d: v%d = guess(v%d);", a, var(g, vs), var(g, vs)); break;
    case 1: line(g, "L%d: v%d = note(v%d);", a, var(g, vs), var(g, vs)); break;
    default:
        line(g, "L%d: h0 = ask(v%d);", a, var(g, vs));
        line(g, "L%d: v%d = int(h0) %% 9;", a, var(g, vs));
        break;
    }
}

/* stores: one atomic block on S, on lifeline a, reading into the
 * branch's own variables. */
static void atomic_block(Gen *g, VarSet vs, int a)
{
    int x = pick(g, 2), y = var(g, vs), z = var(g, vs);
    line(g, "L%d: atomic S {", a);
    g->indent++;
    int shape = pick(g, 5);
    if (shape != 4) line(g, "v%d = read x%d;", y, x);
    if (shape == 1 || shape == 3) line(g, "v%d = read x%d;", z, 1 - x);
    if (shape >= 2) line(g, "%s(v%d);", pick(g, 2) ? "tally" : "ping", y);
    if (shape == 3) line(g, "ping(%d);", a);
    switch (shape) {
    case 0: line(g, "write x%d = inc(v%d);", x, y); break;
    case 1: line(g, "write x%d = v%d %% 97 + v%d %% 89;", 1 - x, y, z); break;
    case 2: break; /* a read and a tool call: no write */
    case 3:
        line(g, "write x%d = inc(v%d);", x, z);
        line(g, "write x%d = inc(v%d);", 1 - x, y);
        break;
    default: line(g, "write x%d = %d;", x, pick(g, 9)); break; /* a blind write */
    }
    g->indent--;
    line(g, "}");
}

static void simple(Gen *g, VarSet vs)
{
    int n = g->o->lifelines;
    int a = pick(g, n);
    if (g->o->stores && pick(g, 3) == 0) {
        atomic_block(g, vs, a);
        g->budget--;
        return;
    }
    if (g->o->actions && pick(g, 4) == 0) {
        action_call(g, vs, a);
        g->budget--;
        return;
    }
    if (g->o->cpl_full && !g->in_par && pick(g, 4) == 0) {
        full_simple(g, vs, a);
        g->budget--;
        return;
    }
    if (g->o->rich && pick(g, 3) == 0) {
        rich_simple(g, vs, a);
        g->budget--;
        return;
    }
    switch (pick(g, 6)) {
    case 0:
    case 1: {
        int b = other(g, a);
        if (vs.span >= 2 && pick(g, 3) == 0)
            line(g, "L%d(v%d, v%d) -> L%d(v%d, v%d);", a, var(g, vs), var(g, vs), b, vs.lo,
                 vs.lo + 1);
        else
            line(g, "L%d(v%d) -> L%d(v%d);", a, var(g, vs), b, var(g, vs));
        break;
    }
    case 2: line(g, "L%d(v%d) -> L%d(v%d);", a, var(g, vs), a, var(g, vs)); break;
    case 3: line(g, "L%d: v%d = inc(v%d);", a, var(g, vs), var(g, vs)); break;
    case 4: line(g, "L%d: v%d = v%d %% 7 + %d;", a, var(g, vs), var(g, vs), pick(g, 3)); break;
    default: line(g, "skip L%d;", a); break;
    }
    g->budget--;
}

static void compound(Gen *g, VarSet vs, int depth)
{
    int n = g->o->lifelines;
    int kind = pick(g, g->o->parallel ? 4 : 2);
    int owner = pick(g, n);
    ZBuf f = {0};
    g->owner = owner;
    int body = 1 + pick(g, 4);
    switch (kind) {
    case 0: /* if */
        formula(g, &f, vs, 2);
        line(g, "if %s @ L%d {", f.data, owner);
        g->indent++;
        stmts(g, vs, depth + 1, body);
        g->indent--;
        if (pick(g, 2)) {
            line(g, "} else {");
            g->indent++;
            stmts(g, vs, depth + 1, 1 + pick(g, 3));
            g->indent--;
        }
        line(g, "}");
        g->budget--;
        break;
    case 1: {                      /* while with a counter of its own nesting level and branch */
        int c = depth * 8 + vs.lo; /* distinct for nested loops and concurrent branches */
        if (c >= g->ncounters) g->ncounters = c + 1;
        formula(g, &f, vs, 1);
        line(g, "L%d: c%d = 0;", owner, c);
        line(g, "while c%d < %d && (%s) @ L%d {", c, 1 + pick(g, 3), f.data, owner);
        g->indent++;
        line(g, "L%d: c%d = c%d + 1;", owner, c, c);
        stmts(g, vs, depth + 1, body);
        g->indent--;
        if (pick(g, 3) == 0) {
            line(g, "} else {");
            g->indent++;
            stmts(g, vs, depth + 1, 1);
            g->indent--;
        }
        line(g, "}");
        g->budget -= 3;
        break;
    }
    case 2: { /* parallel: branches on disjoint variable sets */
        int nb = vs.span >= 2 ? 2 + pick(g, vs.span >= 3 ? 2 : 1) : 1;
        int per = vs.span / nb;
        line(g, "parallel {");
        g->indent++;
        g->in_par++;
        for (int k = 0; k < nb; k++) {
            line(g, "branch {");
            g->indent++;
            VarSet sub = {vs.lo + k * per, per};
            stmts(g, sub, depth + 1, 1 + pick(g, 3));
            g->indent--;
            line(g, "}");
        }
        g->in_par--;
        g->indent--;
        line(g, "}");
        g->budget--;
        break;
    }
    default: { /* coregion: distinct senders, one receiver, distinct variables */
        if (n < 3 || vs.span < 2) {
            simple(g, vs);
            break;
        }
        int recv = pick(g, n);
        int s1 = other(g, recv), s2 = (s1 + 1) % n;
        if (s2 == recv) s2 = (s2 + 1) % n; /* n >= 3: s2 differs from s1 and recv */
        line(g, "coregion { L%d(v%d) -> L%d(v%d); L%d(v%d) -> L%d(v%d); }", s1, var(g, vs), recv,
             vs.lo, s2, var(g, vs), recv, vs.lo + 1);
        g->budget--;
        break;
    }
    }
    zu_buf_free(&f);
}

static void stmts(Gen *g, VarSet vs, int depth, int count)
{
    for (int i = 0; i < count && g->budget > 0; i++) {
        if (depth < g->o->max_depth && pick(g, g->o->cpl_full ? 2 : 4) == 0)
            compound(g, vs, depth);
        else
            simple(g, vs);
    }
}

void zggen_program(ZBuf *out, const ZGenOptions *opts)
{
    ZGenOptions eff = *opts;
    if (eff.cpl_full) eff.rich = eff.cpl = true;
    const ZGenOptions *o = &eff;
    Gen g = {
        .out = out, .o = o, .rng = o->seed * 0x2545F4914F6CDD1Dull + 1, .budget = o->statements};
    g.nvars = 8;
    zu_buf_puts(out, "// generated by zggen\n");
    zu_buf_puts(out, "lifeline ");
    for (int i = 0; i < o->lifelines; i++) zu_buf_printf(out, "%sL%d", i ? ", " : "", i);
    zu_buf_puts(out, ";\n");
    for (int i = 0; i < g.nvars; i++) zu_buf_printf(out, "var v%d: int = %d;\n", i, i % 3);
    zu_buf_puts(out, "pure inc(t: int) -> int = t % 1000 + 1;\n");
    if (o->rich) {
        zu_buf_puts(out, "enum Mode { m0, m1, m2 }\n");
        zu_buf_puts(out, "const K0 = 4;\n");
        zu_buf_puts(out, "var s0: str = \"a\";\n");
        zu_buf_puts(out, "var e0: Mode = m0;\n");
        zu_buf_puts(out, "var b0: bool = false;\n");
        zu_buf_puts(out, "guard g0 = e0 != m1 since len(s0) > 1;\n");
        zu_buf_printf(out, "guard g1 = @L%d(prev b0) || seen L%d;\n", o->lifelines - 1,
                      o->lifelines > 2 ? 2 : 1);
    }
    if (o->actions) {
        zu_buf_puts(out, "var h0: str = \"0\";\n");
        zu_buf_puts(out,
                    "llm guess(k: int) -> (g: int) {\n    user = \"{k}\";\n    parse = int;\n}\n");
        zu_buf_puts(out, "effect note(k: int) -> int;\n");
        zu_buf_puts(out, "human ask(k: int) -> (n: str) {\n    kind = input;\n"
                         "    prompt = \"a number for {k}\";\n}\n");
    }
    if (o->stores) {
        zu_buf_puts(out, "effect tally(k: int);\neffect ping(k: int);\n");
        zu_buf_printf(out,
                      "store S {\n    cell x0: int = 0;\n    cell x1: int = 1;\n"
                      "    tools tally, ping;\n    consistency L%d;\n}\n",
                      o->store_level);
    }
    if (o->cpl_full) {
        zu_buf_puts(out, "var u0: int;\n");
        zu_buf_puts(out, "var u1: int;\n");
        zu_buf_puts(out, "var f0: bool;\n");
        zu_buf_puts(out, "pure both(p: bool, q: bool) -> bool = p && !q || !p && q;\n");
        zu_buf_printf(out, "guard h0 = @L%d.u0 > 1 || !@L%d.f0;\n", o->lifelines - 1,
                      o->lifelines > 2 ? 2 : 1);
        zu_buf_printf(out, "guard h1 = (f0 == (prev (u1 == 2))) != (once (@L%d.u1 != 0));\n",
                      o->lifelines > 3 ? 3 : 1);
    }
    ZBuf body = {0};
    g.out = &body;
    g.indent = 1;
    VarSet all = {0, g.nvars};
    while (g.budget > 0) stmts(&g, all, 0, g.budget);
    line(&g, "return v0 @ L0;");
    g.out = out;
    for (int i = 0; i < g.ncounters; i++) zu_buf_printf(out, "var c%d: int = 0;\n", i);
    zu_buf_puts(out, "workflow gen() -> int {\n");
    zu_buf_puts(out, body.data ? body.data : "");
    zu_buf_puts(out, "}\n");
    zu_buf_free(&body);
}
