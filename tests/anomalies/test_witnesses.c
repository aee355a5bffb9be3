/* The paper's witness histories (the TLC counter-examples of §3 and the
 * snapshot-insufficiency witness of §4.5), clean histories, and the
 * published-detector variants. */
#include "helpers.h"

static const zgan_options paper = {.a3 = ZGAN_A3_AUTO};

/* §3.1, five-state TLC counter-example at |A| = 2, |Cells| = 1: a2 reads
 * c1 = NULL at time 0; a1 writes c1 = v1 at time 1; a2 commits at time 2.
 * "The predicate fires with i = 2, j = 1". */
static const char a1_witness[] =
    "{\"agent\":\"a1\",\"read_set\":[],\"read_values\":{},\"read_time\":0,"
    "\"read_registry\":[\"t1\",\"t2\"],\"planned_tool\":\"t1\","
    "\"write_set\":[\"c1\"],\"write_values\":{\"c1\":\"v1\"},"
    "\"write_registry\":[\"t1\",\"t2\"],\"write_time\":1}\n"
    "{\"agent\":\"a2\",\"read_set\":[\"c1\"],\"read_values\":{\"c1\":\"NULL\"},\"read_time\":0,"
    "\"read_registry\":[\"t1\",\"t2\"],\"planned_tool\":\"t1\","
    "\"write_set\":[],\"write_values\":{},\"write_registry\":[\"t1\",\"t2\"],\"write_time\":2}\n";

Test(paper_witness, a1_stale_generation)
{
    zgan_history *h = t_load(a1_witness);
    zgan_report r;
    t_detect(h, &paper, &r);
    cr_assert_eq(r.n[ZGAN_A1], 1);
    const zgan_witness *w = &r.w[ZGAN_A1][0];
    cr_assert_eq(w->record + 1, 2, "i = 2");
    cr_assert_eq(w->other + 1, 1, "j = 1");
    cr_assert_eq(w->cell, t_id(h, "c1"));
    cr_assert_eq(w->value, ZGAN_NULL);
    cr_assert_eq(w->value2, t_id(h, "v1"));
    cr_assert_eq(r.n[ZGAN_A2] + r.n[ZGAN_A3] + r.n[ZGAN_A6], 0);
    cr_assert_eq(r.level, 0);
    zgan_report_free(&r);
    zgan_history_free(h);
}

/* §3.2, four-state counter-example: a1 reads the registry {t1, t2} and
 * plans t1; RemoveTool(t1) fires; a1 commits with write_registry {t2}. */
Test(paper_witness, a2_phantom_tool)
{
    static const char *const forms[] = {
        "{\"agent\":\"a1\",\"read_registry\":[\"t1\",\"t2\"],\"planned_tool\":\"t1\","
        "\"read_time\":0,\"write_registry\":[\"t2\"],\"write_time\":2}\n",
        /* the published detector's field names */
        "{\"agent\":\"a1\",\"tools_visible_at_read\":[\"t1\",\"t2\"],\"planned_tool\":\"t1\","
        "\"read_time\":0,\"tools_used\":[\"t2\"],\"write_time\":2}\n"};
    for (int f = 0; f < 2; f++) {
        zgan_history *h = t_load(forms[f]);
        zgan_report r;
        t_detect(h, &paper, &r);
        cr_assert_eq(r.n[ZGAN_A2], 1, "form %d", f);
        cr_assert_eq(r.w[ZGAN_A2][0].record, 0);
        cr_assert_eq(r.w[ZGAN_A2][0].value, t_id(h, "t1"));
        cr_assert_eq(r.n[ZGAN_A1] + r.n[ZGAN_A3] + r.n[ZGAN_A6], 0);
        cr_assert_eq(r.level, 3, "A2 alone: L3 but not L4");
        zgan_report_free(&r);
        zgan_history_free(h);
    }
}

/* §3.3, the minimal two-operation witness of Definition 3: p commits
 * c1 = v1 and is aborted; j reads c1 = v1 with p in preds and survives. */
static const char a3_witness[] =
    "{\"txn\":\"p\",\"agent\":\"a1\",\"read_time\":0,\"write_set\":[\"c1\"],"
    "\"write_values\":{\"c1\":\"v1\"},\"write_time\":1,\"preds\":[],\"aborted\":true}\n"
    "{\"txn\":\"j\",\"agent\":\"a2\",\"read_set\":[\"c1\"],\"read_values\":{\"c1\":\"v1\"},"
    "\"read_time\":1,\"write_time\":2,\"preds\":[\"p\"],\"aborted\":false}\n";

Test(paper_witness, a3_causal_cascade_precise)
{
    zgan_history *h = t_load(a3_witness);
    cr_assert(zgan_history_has_provenance(h));
    zgan_report r;
    t_detect(h, &paper, &r);
    cr_assert_eq(r.a3_used, ZGAN_A3_PRECISE);
    cr_assert_eq(r.n[ZGAN_A3], 1);
    cr_assert_eq(r.w[ZGAN_A3][0].record, 1);
    cr_assert_eq(r.w[ZGAN_A3][0].other, 0);
    cr_assert_eq(r.level, 1);
    zgan_report_free(&r);

    /* A3 => Residue on the projected flat history (§3.3). */
    zgan_options residue = {.a3 = ZGAN_A3_RESIDUE};
    t_detect(h, &residue, &r);
    cr_assert_eq(r.a3_used, ZGAN_A3_RESIDUE);
    cr_assert_eq(r.n[ZGAN_A3], 1);
    cr_assert_eq(r.w[ZGAN_A3][0].record, 1);
    cr_assert_eq(r.w[ZGAN_A3][0].cell, t_id(h, "c1"));
    cr_assert_eq(r.w[ZGAN_A3][0].value, t_id(h, "v1"));
    zgan_report_free(&r);
    zgan_history_free(h);
}

/* §3.3, the flat-trace witness: a committed read of c1 = v1 with no
 * committed write of v1 to c1 at or before the read.  Without provenance
 * the residue is used automatically. */
Test(paper_witness, a3_residue_flat_trace)
{
    zgan_history *h = t_load("{\"agent\":\"a2\",\"read_set\":[\"c1\"],\"read_values\":"
                             "{\"c1\":\"v1\"},\"read_time\":1,\"write_time\":2}\n");
    zgan_report r;
    t_detect(h, &paper, &r);
    cr_assert_eq(r.a3_used, ZGAN_A3_RESIDUE);
    cr_assert_eq(r.n[ZGAN_A3], 1);
    cr_assert_eq(r.level, 1);
    zgan_report_free(&r);
    zgan_history_free(h);
}

/* The TLC discrimination check behind the redefinition of A3: the precise
 * predicate is silent on a benign serial history reading an un-logged
 * value, on which the residue still fires. */
Test(paper_witness, a3_precise_discriminates_benign_serial)
{
    zgan_history *h = t_load(
        "{\"txn\":1,\"agent\":\"a1\",\"read_set\":[\"c1\"],\"read_values\":{\"c1\":\"seed\"},"
        "\"read_time\":0,\"write_set\":[\"c2\"],\"write_values\":{\"c2\":\"v\"},"
        "\"write_time\":1,\"preds\":[],\"aborted\":false}\n");
    zgan_report r;
    t_detect(h, &paper, &r);
    cr_assert_eq(r.a3_used, ZGAN_A3_PRECISE);
    cr_assert_eq(r.n[ZGAN_A3], 0);
    cr_assert_eq(r.level, 4);
    zgan_report_free(&r);
    zgan_options residue = {.a3 = ZGAN_A3_RESIDUE};
    t_detect(h, &residue, &r);
    cr_assert_eq(r.n[ZGAN_A3], 1);
    cr_assert_eq(r.level, 1);
    zgan_report_free(&r);
    zgan_history_free(h);
}

/* Under the L2 discipline the dependent is cascade-aborted with its
 * predecessor: neither predicate fires. */
Test(paper_witness, a3_cascaded_abort_is_clean)
{
    zgan_history *h =
        t_load("{\"txn\":0,\"agent\":\"planner\",\"write_set\":[\"plan\"],\"write_values\":"
               "{\"plan\":\"p\"},\"read_time\":0,\"write_time\":1,\"preds\":[],\"aborted\":true}\n"
               "{\"txn\":1,\"agent\":\"executor\",\"read_set\":[\"plan\"],\"read_values\":"
               "{\"plan\":\"p\"},\"read_time\":1,\"write_set\":[\"result\"],\"write_values\":"
               "{\"result\":\"r\"},\"write_time\":2,\"preds\":[0],\"aborted\":true}\n");
    zgan_options residue = {.a3 = ZGAN_A3_RESIDUE};
    const zgan_options *opts[] = {&paper, &residue};
    for (int i = 0; i < 2; i++) {
        zgan_report r;
        t_detect(h, opts[i], &r);
        cr_assert_eq(r.n[ZGAN_A3], 0);
        cr_assert_eq(r.level, 4);
        zgan_report_free(&r);
    }
    zgan_history_free(h);
}

/* §3.5, three-state counter-example at |A| = 1, |Cells| = 2: io = <(c1,v1),
 * (c2,v1)> committed as co = <(c2,v1), (c1,v1)>. */
Test(paper_witness, a6_tool_effect_reordering)
{
    zgan_history *h = t_load("{\"agent\":\"a1\",\"read_time\":0,\"write_time\":1,"
                             "\"io\":[[\"c1\",\"v1\"],[\"c2\",\"v1\"]],"
                             "\"co\":[[\"c2\",\"v1\"],[\"c1\",\"v1\"]]}\n");
    zgan_report r;
    t_detect(h, &paper, &r);
    cr_assert_eq(r.n[ZGAN_A6], 1);
    const zgan_witness *w = &r.w[ZGAN_A6][0];
    cr_assert_eq(w->record, 0);
    cr_assert_eq(w->pos, 0);
    cr_assert_eq(w->cell, t_id(h, "c1"));
    cr_assert_eq(w->cell2, t_id(h, "c2"));
    cr_assert_eq(w->value, t_id(h, "v1"));
    cr_assert_eq(r.n[ZGAN_A1] + r.n[ZGAN_A2] + r.n[ZGAN_A3], 0);
    cr_assert_eq(r.level, 2);
    /* write_set and write_values derive from co (§3.5) */
    cr_assert_eq(h->rec[0].writes.len, 2);
    cr_assert_eq(zgan_pairs(h, h->rec[0].writes)[0].cell, t_id(h, "c2"));
    zgan_report_free(&r);
    zgan_history_free(h);
}

/* §4.5: LatestWriteBefore(h, c, tau) — the value of the latest write of c
 * strictly before tau, NULL if none. */
static uint32_t latest_write_before(const zgan_history *h, uint32_t c, int64_t tau)
{
    uint32_t value = ZGAN_NULL;
    size_t best = SIZE_MAX;
    for (size_t k = 0; k < h->nrec; k++) {
        const zgan_record *x = &h->rec[k];
        if (!(x->flags & ZGAN_HAS_WRITE_TIME) || x->write_time >= tau) continue;
        for (uint32_t i = 0; i < x->writes.len; i++)
            if (zgan_pairs(h, x->writes)[i].cell == c && (best == SIZE_MAX || k > best)) {
                best = k;
                value = zgan_pairs(h, x->writes)[i].value;
            }
    }
    return value;
}

static bool l1_struct(const zgan_history *h)
{
    for (size_t i = 0; i < h->nrec; i++) {
        const zgan_record *x = &h->rec[i];
        for (uint32_t k = 0; k < x->reads.len; k++) {
            zgan_pair p = zgan_pairs(h, x->reads)[k];
            if (p.value != latest_write_before(h, p.cell, x->read_time)) return false;
        }
    }
    return true;
}

/* §4.5 snapshot insufficiency (MC_A1_struct_witness): every read is
 * snapshot-consistent, L1struct holds, yet Definition 1 fires. */
Test(paper_witness, snapshot_insufficiency)
{
    static const char text[] =
        "{\"agent\":\"a1\",\"read_set\":[],\"read_time\":0,\"write_set\":[\"c1\"],"
        "\"write_values\":{\"c1\":\"v1\"},\"write_time\":1}\n"
        "{\"agent\":\"a2\",\"read_set\":[\"c1\"],\"read_values\":{\"c1\":\"NULL\"},"
        "\"read_time\":0,\"write_set\":[],\"write_time\":2}\n";
    zgan_history *h = t_load(text);
    cr_assert(l1_struct(h), "the snapshot condition holds at a2's read time");
    zgan_report r;
    t_detect(h, &paper, &r);
    cr_assert_eq(r.n[ZGAN_A1], 1, "yet stale-generation fires");
    cr_assert_eq(r.level, 0);
    zgan_report_free(&r);
    zgan_history_free(h);

    /* the same shape read one step later is both snapshot-consistent and
   * free of A1: L1struct is not what separates them */
    h = t_load("{\"agent\":\"a1\",\"read_time\":0,\"write_set\":[\"c1\"],"
               "\"write_values\":{\"c1\":\"v1\"},\"write_time\":1}\n"
               "{\"agent\":\"a2\",\"read_set\":[\"c1\"],\"read_values\":{\"c1\":\"v1\"},"
               "\"read_time\":2,\"write_set\":[],\"write_time\":3}\n");
    cr_assert(l1_struct(h));
    t_detect(h, &paper, &r);
    cr_assert_eq(r.n[ZGAN_A1], 0);
    zgan_report_free(&r);
    zgan_history_free(h);
}

/* ------------------------------------------------------------------ */
/* clean histories are L4 under every A3 predicate                      */

static void expect_clean(const char *text)
{
    zgan_history *h = t_load(text);
    const zgan_a3_mode modes[] = {ZGAN_A3_AUTO, ZGAN_A3_PRECISE, ZGAN_A3_RESIDUE};
    for (int m = 0; m < 3; m++) {
        zgan_options opt = {.a3 = modes[m]};
        zgan_report r;
        t_detect(h, &opt, &r);
        for (int k = 0; k < ZGAN_NKINDS; k++)
            cr_assert_eq(r.n[k], 0, "%s fired on a clean history (a3 mode %d)", t_kind(k), m);
        cr_assert_eq(r.level, 4);
        zgan_report_free(&r);
    }
    zgan_history_free(h);
}

Test(clean, linear_pipeline)
{
    expect_clean(
        "{\"txn\":1,\"agent\":\"fetch\",\"read_set\":[],\"read_time\":0,\"write_set\":[\"doc\"],"
        "\"write_values\":{\"doc\":\"d1\"},\"write_time\":1,\"preds\":[],\"aborted\":false,"
        "\"read_registry\":[\"http\"],\"planned_tool\":\"http\",\"write_registry\":[\"http\"],"
        "\"io\":[[\"doc\",\"d1\"]],\"co\":[[\"doc\",\"d1\"]]}\n"
        "{\"txn\":2,\"agent\":\"summarize\",\"read_set\":[\"doc\"],\"read_values\":{\"doc\":\"d1\"}"
        ","
        "\"read_time\":1,\"write_set\":[\"sum\"],\"write_values\":{\"sum\":\"s1\"},"
        "\"write_time\":2,\"preds\":[1],\"aborted\":false}\n"
        "{\"txn\":3,\"agent\":\"publish\",\"read_set\":[\"sum\"],\"read_values\":{\"sum\":\"s1\"},"
        "\"read_time\":2,\"write_set\":[\"out\",\"log\"],\"write_values\":{\"out\":\"o1\","
        "\"log\":\"done\"},\"write_time\":3,\"preds\":[2],\"aborted\":false,"
        "\"io\":[[\"out\",\"o1\"],[\"log\",\"done\"]],\"co\":[[\"out\",\"o1\"],[\"log\",\"done\"]]}"
        "\n");
}

Test(clean, fan_out_merge)
{
    expect_clean(
        "{\"txn\":\"src\",\"agent\":\"lead\",\"read_time\":0,\"write_set\":[\"task\"],"
        "\"write_values\":{\"task\":\"t\"},\"write_time\":1,\"preds\":[]}\n"
        "{\"txn\":\"w1\",\"agent\":\"w1\",\"read_set\":[\"task\"],\"read_values\":{\"task\":\"t\"},"
        "\"read_time\":1,\"write_set\":[\"r1\"],\"write_values\":{\"r1\":\"x\"},\"write_time\":2,"
        "\"preds\":[\"src\"]}\n"
        "{\"txn\":\"w2\",\"agent\":\"w2\",\"read_set\":[\"task\"],\"read_values\":{\"task\":\"t\"},"
        "\"read_time\":1,\"write_set\":[\"r2\"],\"write_values\":{\"r2\":\"y\"},\"write_time\":3,"
        "\"preds\":[\"src\"]}\n"
        "{\"txn\":\"w3\",\"agent\":\"w3\",\"read_set\":[\"task\"],\"read_values\":{\"task\":\"t\"},"
        "\"read_time\":1,\"write_set\":[\"r3\"],\"write_values\":{\"r3\":\"z\"},\"write_time\":4,"
        "\"preds\":[\"src\"]}\n"
        "{\"txn\":\"merge\",\"agent\":\"lead\",\"read_set\":[\"r1\",\"r2\",\"r3\"],"
        "\"read_values\":{\"r1\":\"x\",\"r2\":\"y\",\"r3\":\"z\"},\"read_time\":4,"
        "\"write_set\":[\"task\"],\"write_values\":{\"task\":\"xyz\"},\"write_time\":5,"
        "\"preds\":[\"w1\",\"w2\",\"w3\"]}\n");
}

/* One agent whose operations overlap: Definition 1 needs two agents. */
static const char single_agent[] =
    "{\"agent\":\"solo\",\"read_set\":[\"x\"],\"read_values\":{\"x\":\"NULL\"},\"read_time\":0,"
    "\"write_set\":[\"y\"],\"write_values\":{\"y\":\"1\"},\"write_time\":3}\n"
    "{\"agent\":\"solo\",\"read_set\":[],\"read_time\":1,\"write_set\":[\"x\"],"
    "\"write_values\":{\"x\":\"2\"},\"write_time\":2}\n"
    "{\"agent\":\"solo\",\"read_set\":[\"x\",\"y\"],\"read_values\":{\"x\":\"2\",\"y\":\"1\"},"
    "\"read_time\":3,\"write_set\":[\"x\"],\"write_values\":{\"x\":\"3\"},\"write_time\":4}\n";

Test(clean, single_agent) { expect_clean(single_agent); }

Test(clean, empty_history) { expect_clean(""); }

/* ------------------------------------------------------------------ */
/* the published Rust detectors' variants                               */

Test(variants, a1_same_agent_counts_own_writes)
{
    zgan_history *h = t_load(single_agent);
    zgan_options rust = {.a3 = ZGAN_A3_AUTO, .a1_same_agent = true};
    zgan_report r;
    t_detect(h, &rust, &r);
    cr_assert_eq(r.n[ZGAN_A1], 1);
    cr_assert_eq(r.w[ZGAN_A1][0].record, 0);
    cr_assert_eq(r.w[ZGAN_A1][0].other, 1);
    cr_assert_eq(r.level, 0);
    zgan_report_free(&r);
    zgan_history_free(h);
}

Test(variants, a6_any_diff)
{
    static const struct {
        const char *text;
        size_t paper, any_diff;
    } cases[] = {
        /* not a permutation: Definition 4 silent, detect_a6 fires */
        {"{\"io\":[[\"a\",1],[\"b\",1]],\"co\":[[\"a\",1],[\"b\",2]]}\n", 0, 1},
        /* a single effect that was dropped */
        {"{\"io\":[[\"a\",1]],\"co\":[]}\n", 0, 1},
        /* |io| = 1 can never be reordered */
        {"{\"io\":[[\"a\",1]],\"co\":[[\"a\",1]]}\n", 0, 0},
        /* a true reordering: both fire */
        {"{\"io\":[[\"a\",1],[\"b\",1],[\"a\",1]],\"co\":[[\"a\",1],[\"a\",1],[\"b\",1]]}\n", 1, 1},
        /* a repeated effect committed once more: same set, other multiset */
        {"{\"io\":[[\"a\",1],[\"b\",1]],\"co\":[[\"b\",1],[\"a\",1],[\"a\",1]]}\n", 0, 1},
        /* no io at all */
        {"{\"co\":[[\"a\",1],[\"b\",1]]}\n", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        zgan_history *h = t_load(cases[i].text);
        zgan_options opt = {.a3 = ZGAN_A3_AUTO};
        zgan_report r;
        t_detect(h, &opt, &r);
        cr_assert_eq(r.n[ZGAN_A6], cases[i].paper, "case %zu (Definition 4)", i);
        zgan_report_free(&r);
        opt.a6_any_diff = true;
        t_detect(h, &opt, &r);
        cr_assert_eq(r.n[ZGAN_A6], cases[i].any_diff, "case %zu (--a6-any-diff)", i);
        zgan_report_free(&r);
        zgan_history_free(h);
    }
}

/* ------------------------------------------------------------------ */
/* details of Definition 1                                              */

Test(definition1, window_is_strict_and_values_must_differ)
{
    /* writes at exactly read_time or write_time of the reader do not count;
   * a write of the value the reader saw does not count */
    zgan_history *h = t_load(
        "{\"agent\":\"r\",\"read_set\":[\"c\"],\"read_values\":{\"c\":\"old\"},\"read_time\":2,"
        "\"write_time\":6}\n"
        "{\"agent\":\"w\",\"write_set\":[\"c\"],\"write_values\":{\"c\":\"x\"},\"write_time\":2}\n"
        "{\"agent\":\"w\",\"write_set\":[\"c\"],\"write_values\":{\"c\":\"y\"},\"write_time\":6}\n"
        "{\"agent\":\"w\",\"write_set\":[\"c\"],\"write_values\":{\"c\":\"old\"},\"write_time\":4}"
        "\n");
    zgan_report r;
    t_detect(h, &paper, &r);
    cr_assert_eq(r.n[ZGAN_A1], 0);
    zgan_report_free(&r);
    zgan_history_free(h);
}

Test(definition1, witness_is_earliest_qualifying_write)
{
    /* inside the window (1, 9): t=3 has the reader's agent, t=4 the value
   * read; records 4 and 5 (1-based) both qualify at t=5 and the lower
   * index wins; record 6 at t=7 qualifies too but is later */
    zgan_history *h = t_load(
        "{\"agent\":\"r\",\"read_set\":[\"c\",\"d\"],\"read_values\":{\"c\":\"v0\",\"d\":\"NULL\"},"
        "\"read_time\":1,\"write_time\":9}\n"
        "{\"agent\":\"r\",\"write_set\":[\"c\"],\"write_values\":{\"c\":\"v1\"},\"write_time\":3}\n"
        "{\"agent\":\"w\",\"write_set\":[\"c\"],\"write_values\":{\"c\":\"v0\"},\"write_time\":4}\n"
        "{\"agent\":\"w\",\"write_set\":[\"c\"],\"write_values\":{\"c\":\"v2\"},\"write_time\":5}\n"
        "{\"agent\":\"u\",\"write_set\":[\"c\",\"d\"],\"write_values\":{\"c\":\"v3\",\"d\":\"e\"},"
        "\"write_time\":5}\n"
        "{\"agent\":\"u\",\"write_set\":[\"c\"],\"write_values\":{\"c\":\"v4\"},\"write_time\":7}"
        "\n");
    zgan_report r;
    t_detect(h, &paper, &r);
    cr_assert_eq(r.n[ZGAN_A1], 2, "one witness per (reader, cell)");
    cr_assert_eq(r.w[ZGAN_A1][0].cell, t_id(h, "c"));
    cr_assert_eq(r.w[ZGAN_A1][0].other, 3);
    cr_assert_eq(r.w[ZGAN_A1][0].value2, t_id(h, "v2"));
    cr_assert_eq(r.w[ZGAN_A1][1].cell, t_id(h, "d"));
    cr_assert_eq(r.w[ZGAN_A1][1].other, 4);
    zgan_report_free(&r);
    zgan_history_free(h);
}
