/* libFuzzer target: the whole front and middle end on arbitrary bytes.
 * Parse, resolve, check, project and enumerate guards; diagnostics go to
 * /dev/null.  Any crash, sanitizer report or hang is a bug. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "zgc.h"

static FILE *devnull;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!devnull) devnull = fopen("/dev/null", "w");
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    ZSource src = {"fuzz.zg", text, size};
    ZArena *a = zu_arena_new();
    ZDiag d;
    zd_init(&d, &src, devnull);
    ZProgram *p = zp_parse(a, &src, &d);
    if (d.errors == 0 && zr_resolve(a, p, &d)) {
        ZDecl *wf = p->workflows.len ? zr_select_workflow(p, NULL, &d) : NULL;
        if (zk_check(a, p, wf, &d) && wf) {
            ZLocalSet *ls = zj_project(a, p, wf);
            ZGuardTable *gt = zg_enumerate(a, p, wf, ls);
            zj_print(devnull, ls, -1);
            zg_print(devnull, gt);
        }
    }
    zu_arena_free(a);
    free(text);
    return 0;
}
