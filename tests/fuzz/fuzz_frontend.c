/* libFuzzer target: the whole front and middle end on arbitrary bytes.
 * Parse (with imports), expand fragments, resolve, check, project and
 * enumerate guards; diagnostics go to /dev/null.  Any crash, sanitizer
 * report or hang is a bug.
 *
 * Imports never reach the file system: the compilation's loader serves a
 * few fixed files by exact name (a fragment library, a file importing it,
 * one importing itself, one with a syntax error) and reports every other
 * name missing, so that a fuzzed `import "/dev/zero";` reads nothing while
 * the import logic (search order, files read once, cycles, duplicates
 * across files, diagnostics in other files) is exercised. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "grammar.h"
#include "zgc.h"

static FILE *devnull;

static const struct {
    const char *name, *text;
} files[] = {
    {"lib.zg", "enum Mood { calm, angry }\n"
               "pure id(s: str) -> str = s;\n"
               "fragment tell(X: lifeline, Y: lifeline, m: str, const k: int) {\n"
               "    var n: str;\n"
               "    X { n = id(m); }\n"
               "    X(n, k) -> Y(m, k);\n"
               "}\n"},
    {"uses.zg", "import \"lib.zg\";\n"
                "fragment twice(X: lifeline, Y: lifeline, m: str) {\n"
                "    tell(X, Y, m, 1);\n"
                "    if m == \"\" @ Y { tell(Y, X, m, 2); }\n"
                "}\n"},
    {"self.zg", "import \"self.zg\";\nlifeline S;\n"},
    {"broken.zg", "fragment ( {\n"},
};

static char *load(void *user, const char *path, size_t *len, char **key, const char **err,
                  bool *missing)
{
    (void)user;
    (void)err;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        if (!strcmp(path, files[i].name)) {
            *len = strlen(files[i].text);
            *key = strdup(path);
            char *t = strdup(files[i].text);
            if (!*key || !t) abort();
            return t;
        }
    *missing = true;
    return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!devnull) devnull = fopen("/dev/null", "w");
    ZCompilation c;
    zc_init(&c, zp_parse, "fuzz.zg", (const char *)data, size, devnull);
    c.load = load;
    c.all_workflows = true; /* every workflow is checked, the last projected */
    c.warnings = true;      /* and the warnings looked for */
    if (zc_run(&c, ZC_GUARDS)) {
        zj_print(devnull, c.locals, -1);
        zg_print(devnull, c.guards);
    }
    zc_free(&c);
    return 0;
}
