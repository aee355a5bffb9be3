/* Unit tests of the NATS transport's own parsing (runtime/nats/nats.c):
 * run ids (they become subject tokens and a stream name), NKey user seeds
 * and the public key derived from one, token files.  The transport itself
 * is tested against real servers by run.sh. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nats/transport.h"

/* A seed and its public key made by natsraw.py nkey (Ed25519 through
 * openssl, NKey encoding in Python), and accepted by nats-server 2.9. */
#define SEED "SUAIIEBHUSR5ANN22D3ROAIJQCDSKF57W2VOH4V6CNMUKAFS2PCNQHCXAQ"
#define PUB "UB3M7OPWVHX2EX6GMMO3ZDLQCHOLYYRFVPW7FLMQP7OWYMMV6ICUEGAK"

static char *file_with(const char *text)
{
    char *path = strdup("/tmp/zgc-nats-test-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

Test(nats, run_ids)
{
    cr_assert(zri_nats_run_ok("r1"));
    cr_assert(zri_nats_run_ok("0123456789abcdef0123456789abcdef"));
    cr_assert(zri_nats_run_ok("a_b-C"));
    char longest[ZRI_NATS_RUN_MAX + 2];
    memset(longest, 'x', sizeof longest);
    longest[ZRI_NATS_RUN_MAX] = '\0';
    cr_assert(zri_nats_run_ok(longest));
    longest[ZRI_NATS_RUN_MAX] = 'x';
    longest[ZRI_NATS_RUN_MAX + 1] = '\0';
    cr_assert_not(zri_nats_run_ok(longest));
    /* what would split or widen a subject */
    const char *bad[] = {"", "a.b", "a*", ">", "a b", "a\tb", "é", "a/b"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_not(zri_nats_run_ok(bad[i]), "%s accepted", bad[i]);
}

Test(nats, nkey_public_from_seed)
{
    char *path = file_with(SEED "\n");
    char pub[57], err[256] = "";
    cr_assert_eq(zri_nats_nkey_public(path, pub, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(pub, PUB);
    unlink(path);
    free(path);
}

Test(nats, nkey_bad_seeds)
{
    const char *bad[] = {
        "",                                                             /* empty */
        "SUAIIEBHUSR5ANN22D3ROAIJQCDSKF57W2VOH4V6CNMUKAFS2PCNQHCXAA\n", /* checksum */
        PUB "\n",                                                       /* a public key */
        "SUAIIEBHUSR5ANN22D3ROAIJQCDSKF57W2VOH4V6CNMUKAFS2PCNQHC\n",    /* short */
        "not base32 at all!\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *path = file_with(bad[i]);
        char pub[57], err[256] = "";
        cr_assert_eq(zri_nats_nkey_public(path, pub, err, sizeof err), -1, "seed %zu accepted", i);
        cr_assert(strstr(err, path) != NULL, "message without the file: %s", err);
        unlink(path);
        free(path);
    }
    char pub[57], err[256] = "";
    cr_assert_eq(zri_nats_nkey_public("/nonexistent/seed", pub, err, sizeof err), -1);
    cr_assert(strstr(err, "cannot read the NKey seed file /nonexistent/seed") != NULL, "%s", err);
}

Test(nats, token_file)
{
    char *path = file_with("tok-5511\nsecond line\n");
    char err[256] = "";
    char *t = zri_nats_read_token(path, err, sizeof err);
    cr_assert_not_null(t, "%s", err);
    cr_assert_str_eq(t, "tok-5511");
    free(t);
    unlink(path);
    free(path);
    path = file_with("\n");
    cr_assert_null(zri_nats_read_token(path, err, sizeof err));
    cr_assert(strstr(err, "is empty") != NULL, "%s", err);
    unlink(path);
    free(path);
}
