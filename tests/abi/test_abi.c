/* The runtime's function table (ZGRT_ABI in runtime/zgrt_abi.h), from which
 * the backend declares the functions generated code calls, must agree with
 * the runtime's C prototypes; and the builtin numbering of the runtime must
 * be the compiler's. */
#include <criterion/criterion.h>
#include <string.h>

#include "zgc.h"
#include "zgrt_abi.h"

/* every entry: the C prototype is exactly the table's C type */
#define CHECK_PROTO(name, code, ret, params)                                       \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&name), ret(*) params), \
                   #name ": prototype differs from ZGRT_ABI");
ZGRT_ABI(CHECK_PROTO)

#define NARGS_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, n, ...) n
#define NARGS(...) NARGS_(__VA_ARGS__, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)

typedef struct Entry {
    const char *name, *code;
    int nparams;
} Entry;

#define ENTRY(name, code, ret, params) {#name, code, NARGS params},
static const Entry entries[] = {ZGRT_ABI(ENTRY)};

Test(abi, signature_codes_match_parameter_counts)
{
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        const Entry *e = &entries[i];
        cr_expect_eq((int)strlen(e->code), e->nparams + 1, "%s: code `%s` for %d parameters",
                     e->name, e->code, e->nparams);
        for (const char *c = e->code; *c; c++)
            cr_expect(strchr("vpild", *c), "%s: unknown type letter `%c`", e->name, *c);
        cr_expect_neq(e->code[1], 'v', "%s: void parameter", e->name);
    }
}

Test(abi, builtin_numbering)
{
    cr_expect_eq(BI_LEN, ZGRT_BI_LEN);
    cr_expect_eq(BI_LOWER, ZGRT_BI_LOWER);
    cr_expect_eq(BI_UPPER, ZGRT_BI_UPPER);
    cr_expect_eq(BI_TRIM, ZGRT_BI_TRIM);
    cr_expect_eq(BI_CONTAINS, ZGRT_BI_CONTAINS);
    cr_expect_eq(BI_STARTS_WITH, ZGRT_BI_STARTS_WITH);
    cr_expect_eq(BI_ENDS_WITH, ZGRT_BI_ENDS_WITH);
    cr_expect_eq(BI_STR, ZGRT_BI_STR);
    cr_expect_eq(BI_INT, ZGRT_BI_INT);
    cr_expect_eq(BI_FLOAT, ZGRT_BI_FLOAT);
    cr_expect_eq(BI_JSON_GET, ZGRT_BI_JSON_GET);
    cr_expect_eq(BI_JSON_STR, ZGRT_BI_JSON_STR);
    cr_expect_eq(BI__COUNT, ZGRT_BI_JSON_STR + 1);
}

Test(abi, value_layout)
{
    cr_expect_eq(sizeof(zgrt_value), 16);
    cr_expect_eq(offsetof(zgrt_value, u), 8);
    cr_expect_eq(offsetof(zgrt_str, data), 8);
}

/* The monitor plan (since ABI 3; ABI 4 adds the fingerprint, ABI 5 the
 * file of a location): per lifeline a zgrt_keep (four int32 counts,
 * then four pointers), per edge a zgrt_edge (six int32, then three
 * pointers) with its zgrt_group (five int32) and zgrt_pair (two int32)
 * tables; the descriptor has nedges after nsubs, then the keep and
 * edge pointers, then the fingerprint's two strings, the stores and (ABI
 * 8) the role record: 16 bytes of magic, then the lifeline (backend/types.c
 * mirrors the fields; tests/backend checks the LLVM layout against these
 * offsets). */
Test(abi, monitor_plan_layout)
{
    cr_expect_eq(ZGRT_ABI_VERSION, 8);
    cr_expect_eq(sizeof(zgrt_slot), 8);
    cr_expect_eq(offsetof(zgrt_slot, lifeline), 0);
    cr_expect_eq(offsetof(zgrt_slot, index), 4);
    cr_expect_eq(offsetof(zgrt_keep, nevals), 0);
    cr_expect_eq(offsetof(zgrt_keep, nvarviews), 12);
    cr_expect_eq(offsetof(zgrt_keep, evals), 16);
    cr_expect_eq(offsetof(zgrt_keep, varviews), 16 + 3 * sizeof(void *));
    cr_expect_eq(sizeof(zgrt_keep), 16 + 4 * sizeof(void *));
    cr_expect_eq(sizeof(zgrt_group), 20);
    cr_expect_eq(offsetof(zgrt_group, varviews_end), 16);
    cr_expect_eq(sizeof(zgrt_pair), 8);
    cr_expect_eq(offsetof(zgrt_edge, pad), 20);
    cr_expect_eq(offsetof(zgrt_edge, groups), 24);
    cr_expect_eq(sizeof(zgrt_edge), 24 + 3 * sizeof(void *));
    cr_expect_eq(offsetof(zgrt_program, nedges), offsetof(zgrt_program, nsubs) + 4);
    cr_expect_eq(offsetof(zgrt_program, keeps) % _Alignof(void *), 0);
    cr_expect_eq(offsetof(zgrt_program, keeps), offsetof(zgrt_program, nedges) + 4);
    cr_expect_eq(offsetof(zgrt_program, edges), offsetof(zgrt_program, keeps) + sizeof(void *));
    cr_expect_eq(offsetof(zgrt_program, fingerprint),
                 offsetof(zgrt_program, edges) + sizeof(void *));
    cr_expect_eq(offsetof(zgrt_program, fingerprint_parts),
                 offsetof(zgrt_program, fingerprint) + sizeof(void *));
    cr_expect_eq(offsetof(zgrt_program, nstores),
                 offsetof(zgrt_program, fingerprint_parts) + sizeof(void *));
    cr_expect_eq(offsetof(zgrt_program, stores), offsetof(zgrt_program, nstores) + sizeof(void *));
    cr_expect_eq(offsetof(zgrt_program, role), offsetof(zgrt_program, stores) + sizeof(void *));
    cr_expect_eq(sizeof(zgrt_program), offsetof(zgrt_program, role) + sizeof(void *));
    cr_expect_eq(sizeof ZGRT_ROLE_MAGIC, 16);
    cr_expect_eq(offsetof(zgrt_role, lifeline), 16);
    cr_expect_eq(sizeof(zgrt_role), 20);
}

/* The stores (ABI 7): a zgrt_cell (name, type, default) and a
 * zgrt_store_decl (name, level, ncells, cells, ntools, pad, tools). */
Test(abi, store_layout)
{
    cr_expect_eq(offsetof(zgrt_cell, type), sizeof(void *));
    cr_expect_eq(offsetof(zgrt_cell, def), sizeof(void *) + 8);
    cr_expect_eq(sizeof(zgrt_cell), sizeof(void *) + 24);
    cr_expect_eq(offsetof(zgrt_store_decl, level), sizeof(void *));
    cr_expect_eq(offsetof(zgrt_store_decl, ncells), sizeof(void *) + 4);
    cr_expect_eq(offsetof(zgrt_store_decl, cells), sizeof(void *) + 8);
    cr_expect_eq(offsetof(zgrt_store_decl, ntools), 2 * sizeof(void *) + 8);
    cr_expect_eq(offsetof(zgrt_store_decl, tools), 2 * sizeof(void *) + 16);
    cr_expect_eq(sizeof(zgrt_store_decl), 3 * sizeof(void *) + 16);
}

/* The kinds, parse modes and human kinds come from vocab/vocab.h; their
 * numbers are part of the ABI, as generated code of that ABI stores them in
 * its descriptors: a reordered vocabulary must fail here. */
Test(abi, vocabulary_numbering)
{
    cr_expect_eq(ZGRT_ACT_LLM, 0);
    cr_expect_eq(ZGRT_ACT_PURE, 1);
    cr_expect_eq(ZGRT_ACT_EXTERN_PURE, 2);
    cr_expect_eq(ZGRT_ACT_EFFECT, 3);
    cr_expect_eq(ZGRT_ACT_HUMAN, 4);
    cr_expect_eq(ZGRT_PARSE_TEXT, 0);
    cr_expect_eq(ZGRT_PARSE_JSON, 1);
    cr_expect_eq(ZGRT_PARSE_BOOL, 2);
    cr_expect_eq(ZGRT_PARSE_INT, 3);
    cr_expect_eq(ZGRT_PARSE_FLOAT, 4);
    cr_expect_eq(ZGRT_PARSE_ENUM, 5);
    cr_expect_eq(ZGRT_HUMAN_CONFIRM, 0);
    cr_expect_eq(ZGRT_HUMAN_INPUT, 1);
    cr_expect_eq(ZGRT_HUMAN_SELECT, 2);
    cr_expect_eq(ZGRT_HUMAN_EDIT, 3);
    cr_expect_eq(ZGRT_HUMAN_ACK, 4);
}
