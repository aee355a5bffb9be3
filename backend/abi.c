/* abi.c — the runtime functions generated code may call.
 *
 * One table, ZGRT_ABI in runtime/zgrt_abi.h, lists every runtime function
 * with a signature code (return type, then parameter types: v void,
 * p pointer, i int32_t, l int64_t, d double); the LLVM declarations are
 * built from it, and tests/backend checks them against the table and
 * tests/runtime the table against the C prototypes.
 */
#include <string.h>

#include "gen.h"

#define ZB_ABI_ENTRY(name, sig, ret, params) {#name, sig},
static const struct {
    const char *name, *sig;
} abi_table[] = {ZGRT_ABI(ZB_ABI_ENTRY)};
#undef ZB_ABI_ENTRY

int zb_abi_count(void) { return ZB_RT__COUNT; }
const char *zb_abi_name(int i) { return i >= 0 && i < ZB_RT__COUNT ? abi_table[i].name : NULL; }
const char *zb_abi_signature(int i) { return i >= 0 && i < ZB_RT__COUNT ? abi_table[i].sig : NULL; }

static LLVMTypeRef abi_letter(LLVMContextRef lc, char c)
{
    switch (c) {
    case 'v': return LLVMVoidTypeInContext(lc);
    case 'p': return LLVMPointerType(LLVMInt8TypeInContext(lc), 0);
    case 'i': return LLVMInt32TypeInContext(lc);
    case 'l': return LLVMInt64TypeInContext(lc);
    case 'd': return LLVMDoubleTypeInContext(lc);
    default: return NULL;
    }
}

LLVMTypeRef zb_abi_fn_type(LLVMContextRef lc, const char *sig)
{
    if (!sig || !sig[0]) return NULL;
    LLVMTypeRef ret = abi_letter(lc, sig[0]);
    LLVMTypeRef params[16];
    unsigned n = 0;
    if (!ret) return NULL;
    for (const char *s = sig + 1; *s; s++) {
        if (*s == 'v' || n >= 16) return NULL;
        params[n] = abi_letter(lc, *s);
        if (!params[n]) return NULL;
        n++;
    }
    return LLVMFunctionType(ret, params, n, 0);
}

LLVMValueRef zb_abi_declare(LLVMModuleRef m, const char *name)
{
    for (int i = 0; i < ZB_RT__COUNT; i++) {
        if (strcmp(abi_table[i].name, name) != 0) continue;
        LLVMValueRef f = LLVMGetNamedFunction(m, name);
        if (f) return f;
        LLVMTypeRef ty = zb_abi_fn_type(LLVMGetModuleContext(m), abi_table[i].sig);
        if (!ty) ZU_ICE("malformed ABI signature `%s` for %s", abi_table[i].sig, name);
        return LLVMAddFunction(m, name, ty);
    }
    return NULL;
}
