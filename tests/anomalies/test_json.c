/* The reader's JSON parser (anomalies/json.c) against jansson, the
 * reference: whatever it accepts, jansson accepts with the same values
 * (kinds, integers, string bytes, members in order), on hand-written
 * corner cases and on random byte mutations of real records; and lines
 * it refuses that jansson takes (long integers) still read. */
#include "helpers.h"

/* Token t of d equals jansson's v; returns the index after t. */
static uint32_t same(const zgan_jdoc *d, uint32_t t, json_t *v, const char *line)
{
    const zgan_jtok *k = &d->t[t];
    switch (json_typeof(v)) {
    case JSON_NULL: cr_assert_eq(k->kind, ZGAN_J_NULL, "%s", line); break;
    case JSON_TRUE: cr_assert_eq(k->kind, ZGAN_J_TRUE, "%s", line); break;
    case JSON_FALSE: cr_assert_eq(k->kind, ZGAN_J_FALSE, "%s", line); break;
    case JSON_INTEGER:
        cr_assert_eq(k->kind, ZGAN_J_INT, "%s", line);
        cr_assert_eq(k->i, json_integer_value(v), "%s", line);
        break;
    case JSON_REAL: cr_assert_eq(k->kind, ZGAN_J_REAL, "%s", line); break;
    case JSON_STRING:
        cr_assert_eq(k->kind, ZGAN_J_STRING, "%s", line);
        cr_assert_eq(k->n, json_string_length(v), "%s", line);
        cr_assert(!memcmp(k->s, json_string_value(v), k->n), "%s", line);
        break;
    case JSON_ARRAY: {
        cr_assert_eq(k->kind, ZGAN_J_ARRAY, "%s", line);
        cr_assert_eq(k->n, json_array_size(v), "%s", line);
        uint32_t i = t + 1;
        for (size_t m = 0; m < json_array_size(v); m++) i = same(d, i, json_array_get(v, m), line);
        cr_assert_eq(i, k->next, "%s", line);
        break;
    }
    case JSON_OBJECT: {
        cr_assert_eq(k->kind, ZGAN_J_OBJECT, "%s", line);
        cr_assert_eq(k->n, json_object_size(v), "%s", line);
        uint32_t i = t + 1;
        const char *key;
        size_t klen;
        json_t *e;
        json_object_keylen_foreach(v, key, klen, e)
        {
            cr_assert_eq(d->t[i].n, klen, "%s", line);
            cr_assert(!memcmp(d->t[i].s, key, klen), "%s", line);
            i = same(d, i + 1, e, line);
        }
        cr_assert_eq(i, k->next, "%s", line);
        break;
    }
    }
    return k->next;
}

/* 1 when the fast parser took the line, 0 when it left it to jansson. */
static int check(zgan_jdoc *d, const char *s, size_t n)
{
    json_error_t je;
    json_t *v = json_loadb(s, n, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
    int fast = zgan_json_parse(d, s, n) == 0;
    if (fast) {
        cr_assert(v != NULL, "accepted what jansson refuses (%s): %.*s", je.text, (int)n, s);
        same(d, 0, v, s);
    }
    json_decref(v);
    return fast;
}

Test(json, corner_cases)
{
    static const char *take[] = {"{}",
                                 "[]",
                                 " {\"a\" : [ 1 , -2 , 0 , -0 ] }\r\n",
                                 "\"\\u00e9\\ud83d\\ude00\\n\\/\"",
                                 "\"caf\xc3\xa9 \xf0\x9f\x98\x80\"",
                                 "123456789012345678",
                                 "-123456789012345678",
                                 "{\"a\":1.5,\"b\":-2e-3,\"c\":1E+2}",
                                 "[true,false,null]",
                                 "{\"a\":{\"a\":{\"a\":[]}}}",
                                 "{\"a\":1,\"\\u0062\":2}"};
    static const char *refuse[] = {"",
                                   "{",
                                   "}",
                                   "[1,]",
                                   "{\"a\":1,}",
                                   "{\"a\" 1}",
                                   "01",
                                   "1.",
                                   ".5",
                                   "1e",
                                   "-",
                                   "+1",
                                   "tru",
                                   "nul",
                                   "[1 2]",
                                   "{} {}",
                                   "\"\\x\"",
                                   "\"\\u12\"",
                                   "\"\\ud800\"",
                                   "\"\\udc00\"",
                                   "\"\\ud800\\u0041\"",
                                   "\"\\u0000\"",
                                   "\"a\x01\"",
                                   "\"\xc0\xaf\"",
                                   "\"\xed\xa0\x80\"",
                                   "\"\xf4\x90\x80\x80\"",
                                   "\"\xff\"",
                                   "\"\xe2\x82\"",
                                   "\"abc",
                                   "{\"a\":1,\"a\":2}",
                                   "{\"a\":1,\"\\u0061\":2}",
                                   "1e400",
                                   "\f{}",
                                   "{}\v",
                                   "[1]x",
                                   "1234567890123456789012"};
    zgan_jdoc d = {0};
    for (size_t i = 0; i < sizeof take / sizeof *take; i++)
        cr_assert(check(&d, take[i], strlen(take[i])), "refused: %s", take[i]);
    for (size_t i = 0; i < sizeof refuse / sizeof *refuse; i++)
        cr_assert(!check(&d, refuse[i], strlen(refuse[i])), "took: %s", refuse[i]);
    /* 17 members: the sorted duplicate check */
    char big[512] = "{";
    for (int i = 0; i < 17; i++)
        snprintf(big + strlen(big), sizeof big - strlen(big), "%s\"k%d\":%d", i ? "," : "", i % 16,
                 i);
    strcat(big, "}");
    cr_assert(!check(&d, big, strlen(big)));
    /* nesting: jansson's limit is 2048 */
    static char deep[5000];
    memset(deep, '[', 2100);
    memset(deep + 2100, ']', 2100);
    cr_assert(!check(&d, deep, 4200));
    zgan_json_free(&d);
}

Test(json, mutations_of_records)
{
    const char *rec =
        "{\"txn\":12,\"agent\":\"agent1\",\"read_set\":[\"cell185\",7],\"read_values\":"
        "{\"cell185\":\"NULL\",\"7\":{\"x\":[1,2.5,null]}},\"read_time\":0,\"write_set\":[],"
        "\"write_values\":{\"c\\u00e9\":\"v\\n5\"},\"write_time\":40,\"planned_tool\":null,"
        "\"preds\":[],\"aborted\":false}";
    size_t n = strlen(rec);
    char *buf = malloc(n + 1);
    zgan_jdoc d = {0};
    unsigned seed = 12345, taken = 0;
    static const char bytes[] = "{}[]\",:\\u0123456789eE+-.tfn \x01\xc3\xa9\xff";
    for (int round = 0; round < 20000; round++) {
        memcpy(buf, rec, n + 1);
        int edits = 1 + round % 3;
        for (int e = 0; e < edits; e++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % n;
            seed = seed * 1103515245u + 12345u;
            buf[at] = bytes[(seed >> 8) % (sizeof bytes - 1)];
        }
        taken += (unsigned)check(&d, buf, n);
    }
    cr_assert(taken > 1000, "only %u mutations were JSON the parser took", taken);
    zgan_json_free(&d);
    free(buf);
}

Test(json, jansson_decides_what_the_parser_leaves)
{
    /* a 19-digit integer: the parser leaves it to jansson, which reads it */
    zgan_history *h = t_load("{\"txn\":1234567890123456789,\"read_values\":{\"a\":1e5}}\n");
    cr_assert_eq(h->rec[0].id, t_id(h, "1234567890123456789"));
    cr_assert_eq(zgan_pairs(h, h->rec[0].reads)[0].value, t_id(h, "100000.0"));
    zgan_history_free(h);
    /* the same real through the parser: the same text */
    h = t_load("{\"read_values\":{\"a\":1e5,\"b\":[1e5,{\"y\":1,\"x\":2}]}}\n");
    cr_assert_eq(zgan_pairs(h, h->rec[0].reads)[0].value, t_id(h, "100000.0"));
    cr_assert_eq(zgan_pairs(h, h->rec[0].reads)[1].value, t_id(h, "[100000.0,{\"x\":2,\"y\":1}]"));
    zgan_history_free(h);
}
