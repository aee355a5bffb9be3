/* types.c — the descriptor's C structs as LLVM struct types.
 *
 * Each type mirrors one struct of runtime/zgrt_abi.h field by field;
 * LLVM's non-packed structs use the same alignment rules as the C ABI
 * (checked by tests/backend against offsetof and sizeof).  Types are named
 * and created once per context.
 */
#include "gen.h"

static LLVMTypeRef named_struct(LLVMContextRef lc, const char *name, LLVMTypeRef *fields,
                                unsigned n)
{
    LLVMTypeRef t = LLVMGetTypeByName2(lc, name);
    if (t) return t;
    t = LLVMStructCreateNamed(lc, name);
    LLVMStructSetBody(t, fields, n, 0);
    return t;
}

LLVMTypeRef zb_desc_type(LLVMContextRef lc, ZbDescType k)
{
    LLVMTypeRef i32 = LLVMInt32TypeInContext(lc), i64 = LLVMInt64TypeInContext(lc);
    LLVMTypeRef dbl = LLVMDoubleTypeInContext(lc);
    LLVMTypeRef p = LLVMPointerType(LLVMInt8TypeInContext(lc), 0);
    switch (k) {
    case ZB_TY_VALUE: {
        LLVMTypeRef f[] = {i64, i64};
        return named_struct(lc, "zgrt_value", f, 2);
    }
    case ZB_TY_TYPE: {
        LLVMTypeRef f[] = {i32, i32};
        return named_struct(lc, "zgrt_type", f, 2);
    }
    case ZB_TY_LOC: {
        LLVMTypeRef f[] = {i32, i32, p};
        return named_struct(lc, "zgrt_loc", f, 3);
    }
    case ZB_TY_ENUM: {
        LLVMTypeRef f[] = {p, i32, p};
        return named_struct(lc, "zgrt_enum", f, 3);
    }
    case ZB_TY_VAR: {
        LLVMTypeRef f[] = {p, zb_desc_type(lc, ZB_TY_TYPE), i32, zb_desc_type(lc, ZB_TY_VALUE)};
        return named_struct(lc, "zgrt_var", f, 4);
    }
    case ZB_TY_ACTION: {
        LLVMTypeRef f[] = {
            p,   /* name */
            i32, /* kind */
            i32, /* nparams */
            p,   /* param_names */
            p,   /* param_types */
            i32, /* nresults */
            p,   /* result_names */
            p,   /* result_types */
            p,   /* system */
            p,   /* user */
            i32, /* parse */
            i32, /* retries */
            p,   /* model */
            dbl, /* temperature */
            i32, /* has_temperature */
            i32, /* has_fallback */
            p,   /* fallback */
            i32, /* human_kind */
            p,   /* prompt */
            p,   /* fn */
            p,   /* plan */
        };
        return named_struct(lc, "zgrt_action", f, sizeof f / sizeof f[0]);
    }
    case ZB_TY_INPUT: {
        LLVMTypeRef f[] = {i32, i32};
        return named_struct(lc, "zgrt_input", f, 2);
    }
    case ZB_TY_RESULT: {
        LLVMTypeRef f[] = {i32, i32};
        return named_struct(lc, "zgrt_result", f, 2);
    }
    case ZB_TY_SLOT: {
        LLVMTypeRef f[] = {i32, i32};
        return named_struct(lc, "zgrt_slot", f, 2);
    }
    case ZB_TY_KEEP: {
        LLVMTypeRef f[] = {i32, i32, i32, i32, p, p, p, p};
        return named_struct(lc, "zgrt_keep", f, sizeof f / sizeof f[0]);
    }
    case ZB_TY_GROUP: {
        LLVMTypeRef f[] = {i32, i32, i32, i32, i32};
        return named_struct(lc, "zgrt_group", f, sizeof f / sizeof f[0]);
    }
    case ZB_TY_PAIR: {
        LLVMTypeRef f[] = {i32, i32};
        return named_struct(lc, "zgrt_pair", f, 2);
    }
    case ZB_TY_EDGE: {
        LLVMTypeRef f[] = {i32, i32, i32, i32, i32, i32, p, p, p};
        return named_struct(lc, "zgrt_edge", f, sizeof f / sizeof f[0]);
    }
    case ZB_TY_CELL: {
        LLVMTypeRef f[] = {p, zb_desc_type(lc, ZB_TY_TYPE), zb_desc_type(lc, ZB_TY_VALUE)};
        return named_struct(lc, "zgrt_cell", f, 3);
    }
    case ZB_TY_STORE: {
        LLVMTypeRef f[] = {p, i32, i32, p, i32, i32, p};
        return named_struct(lc, "zgrt_store_decl", f, sizeof f / sizeof f[0]);
    }
    case ZB_TY_PROGRAM: {
        LLVMTypeRef f[] = {
            i32, /* abi_version */
            i32, /* nlifelines */
            p,   /* source */
            p,   /* workflow */
            p,   /* lifelines */
            p,   /* bodies */
            p,   /* evals */
            i32, /* nvars */
            i32, /* nenums */
            p,   /* vars */
            p,   /* enums */
            i32, /* nchans */
            i32, /* ntags */
            p,   /* chans */
            p,   /* tags */
            i32, /* nlocs */
            i32, /* nactions */
            p,   /* locs */
            p,   /* actions */
            i32, /* ninputs */
            i32, /* nresults */
            p,   /* inputs */
            p,   /* results */
            i32, /* result_tuple */
            i32, /* monitor */
            i32, /* nsubs */
            i32, /* nedges */
            p,   /* keeps */
            p,   /* edges */
            p,   /* fingerprint */
            p,   /* fingerprint_parts */
            i32, /* nstores */
            p,   /* stores */
            p,   /* role */
        };
        return named_struct(lc, "zgrt_program", f, sizeof f / sizeof f[0]);
    }
    case ZB_TY__COUNT: break;
    }
    ZU_UNREACHABLE();
}
