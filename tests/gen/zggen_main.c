/* zggen — prints a random well-typed workflow.
 * usage: zggen [--seed N] [--lifelines N] [--statements N] [--depth N] [--plain] [--no-parallel]
 *              [--rich] [--cpl-full] [--actions] [--stores LEVEL] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "zggen.h"

int main(int argc, char **argv)
{
    ZGenOptions o = {
        .seed = 1, .lifelines = 4, .statements = 50, .max_depth = 3, .cpl = true, .parallel = true};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--seed") && v)
            o.seed = strtoull(v, NULL, 10), i++;
        else if (!strcmp(a, "--lifelines") && v)
            o.lifelines = atoi(v), i++;
        else if (!strcmp(a, "--statements") && v)
            o.statements = atoi(v), i++;
        else if (!strcmp(a, "--depth") && v)
            o.max_depth = atoi(v), i++;
        else if (!strcmp(a, "--plain"))
            o.cpl = false;
        else if (!strcmp(a, "--no-parallel"))
            o.parallel = false;
        else if (!strcmp(a, "--rich"))
            o.rich = true;
        else if (!strcmp(a, "--cpl-full"))
            o.cpl_full = true;
        else if (!strcmp(a, "--actions"))
            o.actions = true;
        else if (!strcmp(a, "--stores") && v && v[0] >= '0' && v[0] <= '4' && !v[1])
            o.stores = true, o.store_level = v[0] - '0', i++;
        else {
            fprintf(
                stderr,
                "usage: zggen [--seed N] [--lifelines N] [--statements N] [--depth N] "
                "[--plain] [--no-parallel] [--rich] [--cpl-full] [--actions] [--stores LEVEL]\n");
            return 2;
        }
    }
    if (o.lifelines < 2 || o.lifelines > 64 || o.statements < 1) {
        fprintf(stderr, "zggen: need 2..64 lifelines and at least one statement\n");
        return 2;
    }
    ZBuf b = {0};
    zggen_program(&b, &o);
    fputs(b.data, stdout);
    zu_buf_free(&b);
    return 0;
}
