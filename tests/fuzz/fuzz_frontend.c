/* libFuzzer target: the whole front and middle end on arbitrary bytes.
 * Parse, resolve, check, project and enumerate guards; diagnostics go to
 * /dev/null.  Any crash, sanitizer report or hang is a bug. */
#include <stdint.h>
#include "grammar.h"
#include "zgc.h"

static FILE *devnull;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!devnull) devnull = fopen("/dev/null", "w");
    ZCompilation c;
    zc_init(&c, zp_parse, "fuzz.zg", (const char *)data, size, devnull);
    c.all_workflows = true; /* every workflow is checked, the last projected */
    if (zc_run(&c, ZC_GUARDS)) {
        zj_print(devnull, c.locals, -1);
        zg_print(devnull, c.guards);
    }
    zc_free(&c);
    return 0;
}
