/* cli.c — `zgc fmt`: formats files, or standard input, or checks that they
 * are formatted.
 *
 * Errors: a file that cannot be read or does not parse is reported (the
 * parser's diagnostics) and the others are still done; exit 1 then.  A
 * rewritten file is written to a temporary file beside it and renamed
 * over it, so that a failed write never leaves half a file. */
#define _GNU_SOURCE
#include "fmt.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

const char zf_usage[] =
    "usage: zgc fmt [--check | --write] [FILE.zg...]\n"
    "\n"
    "Formats .zg sources in the one canonical layout: indentation, spacing,\n"
    "lines broken at 100 columns, comments kept where they are.  The result\n"
    "always parses to the same syntax tree.  Without a file, formats standard\n"
    "input to standard output.\n"
    "\n"
    "options:\n"
    "  --check    print the files that are not formatted (\"<stdin>\" for\n"
    "             standard input), change nothing; exit 1 if there is one\n"
    "  --write    rewrite the files that are not formatted, in place\n"
    "  (neither)  print the formatted files to standard output\n"
    "\n"
    "exit status: 0 success (and with --check: everything formatted), 1 a file\n"
    "that cannot be read, does not parse or (--check) is not formatted,\n"
    "2 bad usage.\n";

static char *read_stdin(size_t *len)
{
    ZBuf b = {0};
    zu_buf_puts(&b, "");
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, stdin)) > 0)
        for (size_t i = 0; i < n; i++) zu_buf_putc(&b, chunk[i]);
    if (ferror(stdin)) {
        fprintf(stderr, "zgc: fmt: cannot read standard input: %s\n", strerror(errno));
        zu_buf_free(&b);
        return NULL;
    }
    *len = b.len;
    return b.data;
}

/* Replaces path's contents with n bytes of s, keeping its permissions. */
static bool write_file(const char *path, const char *s, size_t n)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "zgc: fmt: %s: %s\n", path, strerror(errno));
        return false;
    }
    size_t plen = strlen(path);
    char *tmp = zu_xmalloc(plen + 16);
    snprintf(tmp, plen + 16, "%s.fmt-XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        fprintf(stderr, "zgc: fmt: cannot create a file beside %s: %s\n", path, strerror(errno));
        free(tmp);
        return false;
    }
    bool ok = true;
    for (size_t off = 0; ok && off < n;) {
        ssize_t w = write(fd, s + off, n - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0)
            ok = false;
        else
            off += (size_t)w;
    }
    if (ok && fchmod(fd, st.st_mode & 07777) != 0) ok = false;
    if (ok && fsync(fd) != 0) ok = false;
    if (close(fd) != 0) ok = false;
    if (ok && rename(tmp, path) != 0) ok = false;
    if (!ok) {
        fprintf(stderr, "zgc: fmt: cannot write %s: %s\n", path, strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    return ok;
}

typedef enum { PRINT, CHECK, WRITE } Mode;

/* Formats one source; returns 0, or 1 when it is not formatted (--check)
 * or fails. */
static int one(const char *path, const char *text, size_t len, Mode mode, bool is_stdin)
{
    ZBuf out = {0};
    zu_buf_puts(&out, "");
    if (!zf_format(path, text, len, stderr, &out)) {
        zu_buf_free(&out);
        return 1;
    }
    bool same = out.len == len && !memcmp(out.data, text, len);
    int rc = 0;
    switch (mode) {
    case PRINT:
        if (fwrite(out.data, 1, out.len, stdout) != out.len) {
            fprintf(stderr, "zgc: fmt: cannot write to standard output: %s\n", strerror(errno));
            rc = 1;
        }
        break;
    case CHECK:
        if (!same) {
            printf("%s\n", is_stdin ? "<stdin>" : path);
            rc = 1;
        }
        break;
    case WRITE:
        if (!same && !write_file(path, out.data, out.len)) rc = 1;
        break;
    }
    zu_buf_free(&out);
    return rc;
}

int zf_main(int argc, char **argv)
{
    Mode mode = PRINT;
    int nfiles = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(zf_usage, stdout);
            return 0;
        }
        if (!strcmp(a, "--check") || !strcmp(a, "--write")) {
            Mode m = a[2] == 'c' ? CHECK : WRITE;
            if (mode != PRINT && mode != m) {
                fprintf(stderr, "zgc: --check and --write exclude each other\n%s", zf_usage);
                return 2;
            }
            mode = m;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "zgc: unknown option `%s`\n%s", a, zf_usage);
            return 2;
        } else {
            nfiles++;
        }
    }
    if (nfiles == 0) {
        if (mode == WRITE) {
            fprintf(stderr, "zgc: --write needs files\n%s", zf_usage);
            return 2;
        }
        size_t len = 0;
        char *text = read_stdin(&len);
        if (!text) return 1;
        int rc = one("<stdin>", text, len, mode, true);
        free(text);
        if (fflush(stdout) != 0) rc = 1;
        return rc;
    }
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] == '-' && a[1]) continue;
        size_t len = 0;
        const char *err = NULL;
        char *text = zu_read_file(a, &len, &err);
        if (!text) {
            fprintf(stderr, "zgc: fmt: cannot read %s: %s\n", a, err);
            rc = 1;
            continue;
        }
        if (one(a, text, len, mode, false)) rc = 1;
        free(text);
    }
    if (fflush(stdout) != 0) {
        fprintf(stderr, "zgc: fmt: cannot write to standard output: %s\n", strerror(errno));
        rc = 1;
    }
    return rc;
}
