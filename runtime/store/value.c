/* value.c — cell values as JSON: bool, int, float (finite), str, json and
 * enum (its 64-bit payload, see zgrt.h) map to the JSON of the same kind.
 * The JSON is what OpRecords and the SQLite backend hold. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "zst_internal.h"

const char *zst_type_name(int tag)
{
    switch (tag) {
    case ZGRT_BOOL: return "bool";
    case ZGRT_INT: return "int";
    case ZGRT_FLOAT: return "float";
    case ZGRT_STR: return "str";
    case ZGRT_JSON: return "json";
    case ZGRT_ENUM: return "enum";
    default: return "undefined";
    }
}

json_t *zst_value_to_json(const zgrt_value *v, int tag)
{
    if (v->tag != tag) {
        zst_fail(ZST_ETYPE, "a %s value where a %s is expected", zst_type_name((int)v->tag),
                 zst_type_name(tag));
        return NULL;
    }
    json_t *j = NULL;
    switch (tag) {
    case ZGRT_BOOL: j = json_boolean(v->u.i != 0); break;
    case ZGRT_INT:
    case ZGRT_ENUM: j = json_integer(v->u.i); break;
    case ZGRT_FLOAT:
        if (!isfinite(v->u.f)) {
            zst_fail(ZST_ETYPE, "a float value must be finite");
            return NULL;
        }
        j = json_real(v->u.f);
        break;
    case ZGRT_STR:
        if (!v->u.s) {
            zst_fail(ZST_ETYPE, "a str value without a string");
            return NULL;
        }
        j = json_stringn(v->u.s->data, (size_t)v->u.s->len);
        if (!j) {
            zst_fail(ZST_ETYPE, "a str value that is not UTF-8");
            return NULL;
        }
        break;
    case ZGRT_JSON:
        if (!v->u.j) {
            zst_fail(ZST_ETYPE, "a json value without JSON");
            return NULL;
        }
        j = json_deep_copy((json_t *)v->u.j);
        break;
    default: zst_fail(ZST_ETYPE, "cells cannot hold %s values", zst_type_name(tag)); return NULL;
    }
    if (!j) zst_fail(ZST_ENOMEM, "out of memory");
    return j;
}

int zst_value_from_json(json_t *j, int tag, zgrt_value *out, json_t *owned)
{
    memset(out, 0, sizeof *out);
    out->tag = tag;
    switch (tag) {
    case ZGRT_BOOL:
        if (!json_is_boolean(j)) break;
        out->u.i = json_is_true(j);
        return ZST_OK;
    case ZGRT_INT:
    case ZGRT_ENUM:
        if (!json_is_integer(j)) break;
        out->u.i = json_integer_value(j);
        return ZST_OK;
    case ZGRT_FLOAT:
        if (!json_is_number(j)) break;
        out->u.f = json_number_value(j);
        return ZST_OK;
    case ZGRT_STR: {
        if (!json_is_string(j)) break;
        size_t n = json_string_length(j);
        zgrt_str *s = malloc(sizeof *s + n + 1);
        /* the string lives as long as `owned`: an integer holding its address */
        json_t *holder = s ? json_integer((json_int_t)(intptr_t)s) : NULL;
        if (!holder || json_array_append_new(owned, holder) != 0) {
            free(s);
            return zst_fail(ZST_ENOMEM, "out of memory");
        }
        s->len = (int64_t)n;
        memcpy(s->data, json_string_value(j), n + 1);
        out->u.s = s;
        return ZST_OK;
    }
    case ZGRT_JSON: {
        json_t *c = json_deep_copy(j);
        if (!c || json_array_append_new(owned, json_pack("[o]", c)) != 0)
            return zst_fail(ZST_ENOMEM, "out of memory");
        out->u.j = c;
        return ZST_OK;
    }
    default: break;
    }
    return zst_fail(ZST_ECORRUPT, "the store holds %s where a %s value is expected",
                    json_is_null(j) ? "null" : "another kind of JSON", zst_type_name(tag));
}
