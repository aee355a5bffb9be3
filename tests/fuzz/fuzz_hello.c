/* libFuzzer target: the authenticated handshake (runtime/net/hello.c) on
 * arbitrary frames, from both sides, for a fixed program and secret.  The
 * first input byte chooses the side and what the harness does for the
 * fuzzer; the rest are the frames the other side would send, each a u16
 * big-endian length and its bytes:
 *
 *   bit 0   0: the accepting side, fed a HELLO, then a PROOF
 *           1: the connecting side, fed an ANSWER, then an ACCEPT
 *   bit 1   the harness replaces the MAC at the end of the fed ANSWER
 *           with the right one (a fuzzer never finds an HMAC), or feeds
 *           the right PROOF or ACCEPT instead of the second frame, so the
 *           checks behind the MACs are reached too
 *
 * A crash, a sanitizer report or a hang is a bug, and so is any of these:
 *   - a message in err or why missing where the function failed;
 *   - a frame that gets past a MAC check the harness did not make right
 *     (an answer, proof or accept accepted without the secret);
 *   - a PROOF the harness computed right that the accepting side drops
 *     after it answered, or an ACCEPT computed right that the connecting
 *     side refuses after it sent its proof;
 *   - an answer or accept frame whose length field is not its size.
 * Every input also replays one honest handshake first: both sides must
 * agree on the key.
 *
 * The MACs the harness computes come from OpenSSL's HMAC() here, not from
 * the runtime's auth.c, so a mistake there shows as a disagreement.
 *
 * Sources: this file, runtime/net/hello.c, runtime/net/auth.c and
 * runtime/values.c (buffers, allocation, messages), not the whole of
 * libzgrt.
 *
 * Built with -DFUZZ_HELLO_WRITE_SEEDS instead (no libFuzzer), it is a
 * program that writes seed inputs into the directory given as its
 * argument: the corpus tests/fuzz/corpus/hello/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "net/net.h"

/* ---- the program and the secret ----------------------------------------------- */

static const char *const lifelines[] = {"User", "Writer", "Mailbox"};
static const char *const chans[] = {"main"};
static const zgrt_program prog = {
    .abi_version = ZGRT_ABI_VERSION,
    .nlifelines = 3,
    .source = "fuzz.zg",
    .workflow = "fuzz",
    .lifelines = lifelines,
    .nchans = 1,
    .chans = chans,
    .fingerprint = "7777",
};
static const zri_secret secret = {"fuzzing secret, thirty-two bytes", 32};

/* HMAC(secret, label NUL || L(a) || L(b) || L(c)) with OpenSSL directly. */
static void mac(const char *label, const uint8_t *a, size_t an, const uint8_t *b, size_t bn,
                const uint8_t *c, size_t cn, uint8_t out[32])
{
    size_t cap = strlen(label) + 1 + 12 + an + bn + cn, k = 0;
    uint8_t *m = malloc(cap);
    if (!m) abort();
    memcpy(m, label, strlen(label) + 1);
    k = strlen(label) + 1;
    const uint8_t *ps[3] = {a, b, c};
    size_t ns[3] = {an, bn, cn};
    for (int i = 0; i < 3; i++) {
        if (!ps[i]) continue;
        m[k++] = (uint8_t)(ns[i] >> 24), m[k++] = (uint8_t)(ns[i] >> 16);
        m[k++] = (uint8_t)(ns[i] >> 8), m[k++] = (uint8_t)ns[i];
        memcpy(m + k, ps[i], ns[i]);
        k += ns[i];
    }
    unsigned int len = 0;
    HMAC(EVP_sha256(), secret.key, (int)secret.len, m, k, out, &len);
    free(m);
}

static size_t frame_len(const uint8_t *f)
{
    return (size_t)f[0] << 24 | (size_t)f[1] << 16 | (size_t)f[2] << 8 | f[3];
}

/* ---- the target --------------------------------------------------------------- */

#ifndef FUZZ_HELLO_WRITE_SEEDS

static uint8_t id[ZRI_HASH_BYTES];

/* The next fed frame: u16 length and bytes (what is left when short). */
static const uint8_t *next(const uint8_t **d, size_t *n, size_t *len)
{
    if (*n < 2) {
        *len = 0;
        return *d;
    }
    size_t k = (size_t)(*d)[0] << 8 | (*d)[1];
    *d += 2, *n -= 2;
    if (k > *n) k = *n;
    const uint8_t *f = *d;
    *d += k, *n -= k;
    *len = k;
    return f;
}

static void honest(void)
{
    zri_hs c, s;
    char err[2000];
    uint8_t f1[ZRI_HELLO_MAX + 4], f2[ZRI_HELLO_MAX + 4], f3[100], f4[100];
    size_t n2, n3, n4;
    if (zri_hs_init(&c, &prog, 0, &secret, 5000, id, err, sizeof err) ||
        zri_hs_init(&s, &prog, 1, &secret, 0, id, err, sizeof err))
        abort();
    size_t n1 = zri_hs_hello(&c, 1, f1);
    if (frame_len(f1) != n1 - 4) abort();
    if (zri_hs_on_hello(&s, f1 + 4, n1 - 4, f2, &n2, err, sizeof err) != ZRI_HS_ANSWER) abort();
    if (zri_hs_answer(&c, f2 + 4, n2 - 4, "x", f3, &n3, err, sizeof err) != 0) abort();
    if (zri_hs_on_proof(&s, f3 + 4, n3 - 4, f4, &n4, err, sizeof err) != 0) abort();
    if (zri_hs_accepted(&c, f4 + 4, n4 - 4, "x", err, sizeof err) != 0) abort();
    if (memcmp(c.key, s.key, sizeof c.key) || s.peer != 0 || c.peer_heartbeat_ms != 0 ||
        s.peer_heartbeat_ms != 5000)
        abort();
}

static void accepting(const uint8_t *d, size_t n, int help)
{
    zri_hs s;
    char why[2000];
    uint8_t out[ZRI_HELLO_MAX + 4];
    size_t on = 0, hl, pl;
    if (zri_hs_init(&s, &prog, 1, &secret, 1000, id, why, sizeof why)) abort();
    const uint8_t *hello = next(&d, &n, &hl);
    why[0] = 0;
    int rc = zri_hs_on_hello(&s, hello, hl, out, &on, why, sizeof why);
    if (!why[0] && rc != ZRI_HS_ANSWER) abort();
    if (rc == ZRI_HS_DROP) return;
    if (on < 4 || frame_len(out) != on - 4) abort();
    /* the proof: fed, or the right one */
    uint8_t proof[3 + 32];
    const uint8_t *p = next(&d, &n, &pl);
    if (help) {
        proof[0] = 0x5A, proof[1] = 2, proof[2] = ZRI_KIND_PROOF;
        mac("zgc proof", hello, hl, out + 4, on - 4, NULL, 0, proof + 3);
        p = proof, pl = sizeof proof;
    }
    uint8_t acc[100];
    size_t an = 0;
    why[0] = 0;
    int pr = zri_hs_on_proof(&s, p, pl, acc, &an, why, sizeof why);
    if (pr != 0 && !why[0]) abort();
    if (help && pr != (rc == ZRI_HS_ANSWER ? 0 : ZRI_HS_REFUSE)) abort(); /* a right proof */
    if (!help && pr != ZRI_HS_DROP) abort(); /* a proof without the secret */
    if (pr == 0) {
        if (an != 4 + 35 || frame_len(acc) != 35) abort();
        uint8_t key[32];
        mac("zgc frames", hello, hl, out + 4, on - 4, NULL, 0, key);
        if (memcmp(key, s.key, 32)) abort();
    }
}

static void connecting(const uint8_t *d, size_t n, int help)
{
    zri_hs c;
    char err[2000];
    uint8_t hello[ZRI_HELLO_MAX + 4], proof[100];
    size_t pn = 0, al, xl;
    if (zri_hs_init(&c, &prog, 0, &secret, 1000, id, err, sizeof err)) abort();
    size_t hn = zri_hs_hello(&c, 2, hello);
    const uint8_t *fed = next(&d, &n, &al);
    uint8_t answer[ZRI_HELLO_MAX];
    if (al > sizeof answer) al = sizeof answer;
    memcpy(answer, fed, al);
    if (help && al >= 32)
        mac("zgc answer", hello + 4, hn - 4, answer, al - 32, NULL, 0, answer + al - 32);
    err[0] = 0;
    int rc = zri_hs_answer(&c, answer, al, "x", proof, &pn, err, sizeof err);
    if (rc != 0 && !err[0]) abort();
    if (!help && rc != -1) abort(); /* an answer without the secret */
    if (rc == 1 && (pn != 4 + 35 || frame_len(proof) != 35)) abort();
    if (rc != 0) return;
    if (pn != 4 + 35 || frame_len(proof) != 35) abort();
    uint8_t acc[3 + 32];
    const uint8_t *a = next(&d, &n, &xl);
    if (help) {
        acc[0] = 0x5A, acc[1] = 2, acc[2] = ZRI_KIND_ACCEPT;
        mac("zgc accept", hello + 4, hn - 4, answer, al, proof + 4, pn - 4, acc + 3);
        a = acc, xl = sizeof acc;
    }
    err[0] = 0;
    int ar = zri_hs_accepted(&c, a, xl, "x", err, sizeof err);
    if (ar != 0 && !err[0]) abort();
    if (help && ar != 0) abort();
    if (!help && ar == 0) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        zri_program_id(&prog, id);
        ready = 1;
    }
    honest();
    if (size < 1) return 0;
    if (data[0] & 1)
        connecting(data + 1, size - 1, data[0] & 2);
    else
        accepting(data + 1, size - 1, data[0] & 2);
    return 0;
}

#else

/* Seeds: an honest HELLO for the accepting side and an honest ANSWER for
 * the connecting side, with and without help. */
static void put(const char *dir, const char *name, uint8_t mode, const uint8_t *f1, size_t n1,
                const uint8_t *f2, size_t n2)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    uint8_t h1[2] = {(uint8_t)(n1 >> 8), (uint8_t)n1}, h2[2] = {(uint8_t)(n2 >> 8), (uint8_t)n2};
    if (!f || fwrite(&mode, 1, 1, f) != 1 || fwrite(h1, 1, 2, f) != 2 ||
        fwrite(f1, 1, n1, f) != n1 || fwrite(h2, 1, 2, f) != 2 ||
        (n2 && fwrite(f2, 1, n2, f) != n2) || fclose(f)) {
        perror(path);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    uint8_t id[ZRI_HASH_BYTES];
    zri_program_id(&prog, id);
    zri_hs c, s, stranger;
    char err[2000];
    uint8_t f1[ZRI_HELLO_MAX + 4], f2[ZRI_HELLO_MAX + 4], f3[100];
    size_t n2, n3;
    zgrt_program other = prog;
    other.workflow = "other";
    uint8_t oid[ZRI_HASH_BYTES];
    zri_program_id(&other, oid);
    if (zri_hs_init(&c, &prog, 0, &secret, 5000, id, err, sizeof err) ||
        zri_hs_init(&s, &prog, 2, &secret, 0, id, err, sizeof err) ||
        zri_hs_init(&stranger, &other, 0, &secret, 0, oid, err, sizeof err))
        return 1;
    size_t n1 = zri_hs_hello(&c, 1, f1);
    for (int help = 0; help < 4; help += 2) {
        char name[64];
        snprintf(name, sizeof name, "hello-%d", help);
        put(argv[1], name, (uint8_t)help, f1 + 4, n1 - 4, (const uint8_t *)"", 0);
    }
    size_t sn = zri_hs_hello(&stranger, 1, f1);
    put(argv[1], "hello-other-workflow", 2, f1 + 4, sn - 4, (const uint8_t *)"", 0);
    /* an answer of lifeline Mailbox to User's hello (whose nonce differs in
     * the fuzzer: help repairs the mac) */
    n1 = zri_hs_hello(&c, 2, f1);
    if (zri_hs_on_hello(&s, f1 + 4, n1 - 4, f2, &n2, err, sizeof err) != ZRI_HS_ANSWER ||
        zri_hs_answer(&c, f2 + 4, n2 - 4, "x", f3, &n3, err, sizeof err) != 0)
        return 1;
    put(argv[1], "answer-3", 3, f2 + 4, n2 - 4, (const uint8_t *)"", 0);
    put(argv[1], "answer-1", 1, f2 + 4, n2 - 4, (const uint8_t *)"", 0);
    return 0;
}

#endif
