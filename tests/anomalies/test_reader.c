/* The history reader: accepted shapes, and an error naming file and line
 * for everything else. */
#include "helpers.h"

#include <sys/stat.h>
#include <unistd.h>

static void expect_error(const char *text, size_t len, const char *want)
{
    char *err = t_load_error(text, len);
    cr_assert(strstr(err, want) != NULL, "error '%s' lacks '%s'", err, want);
}

#define EXPECT_ERROR(lit, want) expect_error(lit, sizeof(lit) - 1, want)

Test(reader, blank_lines_are_skipped_and_lines_counted)
{
    zgan_history *h = t_load("\n   \n{\"agent\":\"a\"}\r\n\t\n{\"agent\":\"b\"}\n\n");
    cr_assert_eq(zgan_history_records(h), 2);
    cr_assert_eq(h->rec[0].line, 3);
    cr_assert_eq(h->rec[1].line, 5);
    zgan_history_free(h);
    EXPECT_ERROR("\n\n{\"agent\":\"a\"}\n\n[1,2]\n",
                 "bad.jsonl:5: error: a record must be a JSON object");
}

Test(reader, empty_input_is_an_empty_history)
{
    zgan_history *h = t_load("");
    cr_assert_eq(zgan_history_records(h), 0);
    zgan_history_free(h);
}

Test(reader, malformed_lines)
{
    EXPECT_ERROR("{\"agent\":\"a\"\n", "bad.jsonl:1: error: invalid JSON");
    EXPECT_ERROR("{} {}\n", "bad.jsonl:1: error: invalid JSON");
    EXPECT_ERROR("\"just a string\"\n", "a record must be a JSON object");
    EXPECT_ERROR("null\n", "a record must be a JSON object");
    EXPECT_ERROR("{\"read_time\":1,\"read_time\":2}\n", "invalid JSON");
    EXPECT_ERROR("{\"a\":\"\xff\xfe\"}\n", "invalid JSON");
    EXPECT_ERROR("{\"a\":\"x\0y\"}\n", "invalid JSON");
    EXPECT_ERROR("{\"a\":\"\\u0000\"}\n", "invalid JSON");
    EXPECT_ERROR("{\"read_time\":123456789012345678901234567890}\n", "invalid JSON");
    /* what the fast parser refuses, jansson words as before */
    EXPECT_ERROR("{\"a\":\"\\ud800\"}\n", "bad.jsonl:1: error: invalid JSON: ");
    EXPECT_ERROR("{\"a\":\"\xc0\xaf\"}\n", "invalid JSON: ");
    EXPECT_ERROR("{\"a\":1,\"\\u0061\":2}\n", "invalid JSON: ");
    EXPECT_ERROR("{\"a\":[1,]}\n", "invalid JSON: ");
    EXPECT_ERROR("{\"a\":01}\n", "invalid JSON: ");
    EXPECT_ERROR("{\"a\":\"x\"} trailing\n", "invalid JSON: ");
    EXPECT_ERROR("\f{}\n", "invalid JSON: ");
    EXPECT_ERROR("{\"a\":\"\\q\"}\n", "invalid JSON: ");
}

Test(reader, wrong_types)
{
    EXPECT_ERROR("{\"read_time\":\"3\"}\n", "read_time must be an integer");
    EXPECT_ERROR("{\"write_time\":1.5}\n", "write_time must be an integer");
    EXPECT_ERROR("{\"write_time\":1e400}\n", "invalid JSON");
    EXPECT_ERROR("{\"agent\":{}}\n", "agent must be a string or an integer");
    EXPECT_ERROR("{\"agent\":true}\n", "agent must be a string or an integer");
    EXPECT_ERROR("{\"read_set\":\"c\"}\n", "read_set must be an array");
    EXPECT_ERROR("{\"read_set\":[null]}\n", "a cell must not be null");
    EXPECT_ERROR("{\"read_set\":[\"NULL\"]}\n", "a cell must not be null");
    EXPECT_ERROR("{\"read_set\":[[1]]}\n", "a cell must be a string or an integer");
    EXPECT_ERROR("{\"read_values\":3}\n", "read_values must be an object or an array");
    EXPECT_ERROR("{\"write_values\":[[\"c\"]]}\n",
                 "write_values must be an array of [cell, value] pairs");
    EXPECT_ERROR("{\"io\":[[\"c\",1,2]]}\n", "io must be an array of [cell, value] pairs");
    EXPECT_ERROR("{\"co\":{\"c\":1}}\n", "co must be an array of [cell, value] pairs");
    EXPECT_ERROR("{\"preds\":[0.5]}\n", "must be a string or an integer");
    EXPECT_ERROR("{\"preds\":[null]}\n", "must not be null");
    EXPECT_ERROR("{\"aborted\":1}\n", "aborted must be a boolean");
    EXPECT_ERROR("{\"txn\":null}\n{\"txn\":[]}\n",
                 "bad.jsonl:2: error: txn must be a string or an integer");
    EXPECT_ERROR("{\"read_registry\":{}}\n", "read_registry must be an array");
    EXPECT_ERROR("{\"tools_used\":[{}]}\n", "must be a string or an integer");
}

Test(reader, duplicate_txn)
{
    EXPECT_ERROR("{\"txn\":7}\n\n{\"txn\":\"7\"}\n",
                 "bad.jsonl:3: error: duplicate txn 7 (also on line 1)");
}

Test(reader, null_and_numbers)
{
    /* null and "NULL" are the null value; 1 and "1" are the same value */
    zgan_history *h =
        t_load("{\"read_set\":[\"a\",\"b\",1],\"read_values\":"
               "{\"a\":null,\"b\":\"NULL\",\"1\":1},\"write_values\":[[\"a\",\"1\"]]}\n");
    const zgan_record *r = &h->rec[0];
    cr_assert_eq(r->reads.len, 3);
    cr_assert_eq(zgan_pairs(h, r->reads)[0].value, ZGAN_NULL);
    cr_assert_eq(zgan_pairs(h, r->reads)[1].value, ZGAN_NULL);
    cr_assert_eq(zgan_pairs(h, r->reads)[2].value, zgan_pairs(h, r->writes)[0].value);
    cr_assert_eq(zgan_pairs(h, r->reads)[2].cell, t_id(h, "1"));
    cr_assert_eq(r->agent, ZGAN_NULL);
    cr_assert_eq(r->planned_tool, ZGAN_NULL);
    zgan_history_free(h);
}

Test(reader, sets_maps_and_derivations)
{
    zgan_history *h = t_load(
        /* repeated set elements are one; pair arrays: first match wins; a
       * cell missing from the value map reads NULL */
        "{\"read_set\":[\"x\",\"y\",\"x\"],\"read_values\":[[\"x\",\"1\"],[\"x\",\"2\"]],"
        "\"preds\":[3,3,4]}\n"
        /* no read_set: the cells of read_values; no write_set: of write_values */
        "{\"read_values\":{\"p\":\"1\",\"q\":[1,{\"b\":2,\"a\":1}]},\"write_values\":{\"w\":true}}"
        "\n");
    const zgan_record *a = &h->rec[0], *b = &h->rec[1];
    cr_assert_eq(a->reads.len, 2);
    cr_assert_eq(zgan_pairs(h, a->reads)[0].value, t_id(h, "1"));
    cr_assert_eq(zgan_pairs(h, a->reads)[1].value, ZGAN_NULL);
    cr_assert_eq(a->preds.len, 2);
    cr_assert_eq(b->reads.len, 2);
    cr_assert_eq(zgan_pairs(h, b->reads)[0].cell, t_id(h, "p"));
    /* non-string values stand for their compact JSON, keys sorted */
    cr_assert_eq(zgan_pairs(h, b->reads)[1].value, t_id(h, "[1,{\"a\":1,\"b\":2}]"));
    cr_assert_eq(b->writes.len, 1);
    cr_assert_eq(zgan_pairs(h, b->writes)[0].value, t_id(h, "true"));
    zgan_history_free(h);
}

Test(reader, record_ids)
{
    /* without any txn, preds name 1-based record numbers */
    zgan_history *h = t_load("{\"aborted\":true}\n{\"preds\":[1]}\n");
    cr_assert_eq(h->rec[0].id, t_id(h, "1"));
    cr_assert_eq(h->rec[1].id, t_id(h, "2"));
    zgan_report r;
    zgan_options opt = {.a3 = ZGAN_A3_AUTO};
    t_detect(h, &opt, &r);
    cr_assert_eq(r.n[ZGAN_A3], 1);
    zgan_report_free(&r);
    zgan_history_free(h);
    /* with some txn, records without one cannot be named */
    h = t_load("{\"aborted\":true}\n{\"txn\":\"b\",\"preds\":[1]}\n");
    cr_assert_eq(h->rec[0].id, ZGAN_NONE);
    t_detect(h, &opt, &r);
    cr_assert_eq(r.n[ZGAN_A3], 0);
    zgan_report_free(&r);
    zgan_history_free(h);
}

Test(reader, unreadable_file)
{
    zgan_history *h = NULL;
    char err[256];
    cr_assert_eq(zgan_read_file("/nonexistent/x.jsonl", &h, err, sizeof err), -1);
    cr_assert(strstr(err, "/nonexistent/x.jsonl: error: cannot open") == err, "%s", err);
    cr_assert_eq(zgan_read_file("/tmp", &h, err, sizeof err), -1);
    cr_assert(strstr(err, "/tmp: error: cannot read: Is a directory") == err, "%s", err);
    /* a device never ends and a FIFO would block: both refused at once */
    cr_assert_eq(zgan_read_file("/dev/zero", &h, err, sizeof err), -1);
    cr_assert(strstr(err, "/dev/zero: error: cannot read: not a regular file") == err, "%s", err);
    char fifo[] = "/tmp/zgan-fifo-XXXXXX";
    cr_assert_not_null(mkdtemp(fifo));
    char path[64];
    snprintf(path, sizeof path, "%s/f", fifo);
    cr_assert_eq(mkfifo(path, 0600), 0);
    cr_assert_eq(zgan_read_file(path, &h, err, sizeof err), -1);
    cr_assert(strstr(err, "not a regular file"), "%s", err);
    unlink(path);
    rmdir(fifo);
    cr_assert_null(h);
}

Test(reader, file_and_buffer_agree)
{
    char *dir = t_tmpdir();
    static const char text[] = "{\"agent\":\"a\",\"read_set\":[\"c\"],\"read_time\":0,"
                               "\"write_time\":3}\n\n{\"agent\":\"b\",\"write_set\":[\"c\"],"
                               "\"write_values\":{\"c\":1},\"write_time\":2}";
    char *path = t_write(dir, "h.jsonl", text);
    zgan_history *a = NULL, *b = t_load(text);
    char err[256];
    cr_assert_eq(zgan_read_file(path, &a, err, sizeof err), 0, "%s", err);
    cr_assert_eq(zgan_history_records(a), 2);
    cr_assert_eq(a->rec[1].line, 3);
    zgan_report ra, rb;
    zgan_options opt = {.a3 = ZGAN_A3_AUTO};
    t_detect(a, &opt, &ra);
    t_detect(b, &opt, &rb);
    char why[512];
    cr_assert(t_same_report(&ra, &rb, why, sizeof why), "%s", why);
    cr_assert_eq(ra.n[ZGAN_A1], 1);
    zgan_report_free(&ra);
    zgan_report_free(&rb);
    zgan_history_free(a);
    zgan_history_free(b);
    free(path);
    t_rmtree(dir);
    free(dir);
}
