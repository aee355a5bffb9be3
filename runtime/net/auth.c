/* auth.c — the cryptography of the transport, on OpenSSL's libcrypto: the
 * run's secret, random nonces, SHA-256, HMAC-SHA256 and the keyed tag of
 * every frame.  Nothing here is hand-written cryptography: every digest,
 * MAC, compression and random byte comes from libcrypto, and this file
 * only says which bytes go in (for a frame's tag, block by block and the
 * padded last block too: below).
 *
 * The secret.  Every lifeline of a run reads the same secret file
 * (--secret-file; `zgc run --processes` writes a fresh one per run).  It
 * must be a regular file of ZRI_SECRET_MIN to ZRI_SECRET_MAX bytes that
 * only its owner may read or write (no permission bits for group or
 * others): a secret others can read proves nothing.  Its bytes, as they
 * are, are the HMAC key of the handshake (hello.c).
 *
 * Frame tags.  After the handshake, every frame on a connection carries
 * the first ZRI_TAG_BYTES bytes of HMAC-SHA256(K, seq || len || payload):
 * K is the connection's key (hello.c derives it from the secret and both
 * nonces), seq the frame's number on the connection (u64 big-endian, from
 * 0), len the payload's length (u32 big-endian).  A frame that was
 * modified, dropped, duplicated, replayed from another connection or
 * reordered fails the check of the frame that follows it.  16 bytes of
 * tag: a forgery succeeds with probability 2^-128 per try, and the
 * receiver stops at the first failure.
 *
 * The frame tag is on every message's path, so it is computed from the
 * two SHA-256 states HMAC keeps (RFC 2104): the states after the key's
 * inner and outer pad blocks are made once per connection, and a tag
 * copies them (plain structures) and hashes seq || len || payload, then
 * the inner digest, with libcrypto's SHA-256.  The bytes are those of
 * libcrypto's HMAC (tests/net/test_net.c, frame_tags_are_hmac_sha256,
 * compares them); what it saves is the EVP layer's work per frame: an
 * EVP_MAC re-initialised per frame frees and allocates its digest
 * contexts and looks its parameters up by name (on the project machine,
 * OpenSSL 3.0, a 40-byte payload in a warm loop: 100 ns against 190 ns,
 * and several times that difference in a run, where each frame finds the
 * caches cold).  The inner and the outer hash then go block by block
 * into libcrypto's compression (SHA256_Transform), their last block
 * padded here as SHA-256 pads a message (FIPS 180-4, 5.1.1: 0x80, zeros,
 * the length in bits), without SHA256_Update's buffering and
 * SHA256_Final's clean-up: one block each for a frame of up to 43 bytes
 * of payload, most of them, the inner block written whole in place and
 * the outer block's padding a constant (bench/pingpong/tag_cost.c: 87–91
 * ns against 98–102 ns for a run of block-by-block copies, 107 ns with
 * SHA256_Update and SHA256_Final); the same test covers payloads across
 * the block boundaries.
 * The SHA256_* calls are marked deprecated in OpenSSL 3 in favour of EVP,
 * which has no way to copy a digest state without allocating; they are
 * part of OpenSSL 3's API, and OPENSSL_SUPPRESS_DEPRECATED below says so.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define OPENSSL_SUPPRESS_DEPRECATED /* SHA256_Init/Update/Final/Transform: see above */

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include "net.h"

/* The reason of libcrypto's latest error, for messages. */
static const char *ssl_reason(void)
{
    static __thread char buf[160];
    unsigned long e = ERR_get_error();
    if (!e) return "unknown libcrypto error";
    ERR_error_string_n(e, buf, sizeof buf);
    ERR_clear_error();
    return buf;
}

int zri_secret_load(const char *path, zri_secret *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    /* O_NONBLOCK: a FIFO given as the secret must not block the open */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        zri_err(err, errlen, "cannot read the secret file %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        zri_err(err, errlen, "cannot read the secret file %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        zri_err(err, errlen, "the secret file %s is not a regular file", path);
        close(fd);
        return -1;
    }
    if (st.st_mode & 077) {
        zri_err(err, errlen,
                "the secret file %s may be read or written by others (mode %04o): make it "
                "private to its owner (chmod 600 %s)",
                path, (unsigned)(st.st_mode & 07777), path);
        close(fd);
        return -1;
    }
    size_t n = 0;
    for (;;) {
        ssize_t k = read(fd, s->key + n, sizeof s->key - n);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            zri_err(err, errlen, "cannot read the secret file %s: %s", path, strerror(errno));
            close(fd);
            return -1;
        }
        if (k == 0) break;
        n += (size_t)k;
        if (n == sizeof s->key) {
            uint8_t more;
            ssize_t extra;
            do extra = read(fd, &more, 1);
            while (extra < 0 && errno == EINTR);
            if (extra != 0) {
                zri_err(err, errlen, "the secret file %s is longer than %d bytes", path,
                        ZRI_SECRET_MAX);
                close(fd);
                return -1;
            }
            break;
        }
    }
    close(fd);
    if (n < ZRI_SECRET_MIN) {
        zri_err(err, errlen,
                "the secret file %s holds %zu bytes, at least %d are needed (make one with: "
                "head -c 32 /dev/urandom > FILE && chmod 600 FILE)",
                path, n, ZRI_SECRET_MIN);
        return -1;
    }
    s->len = n;
    return 0;
}

int zri_random(uint8_t *out, size_t n, char *err, size_t errlen)
{
    if (n > (size_t)INT32_MAX || RAND_bytes(out, (int)n) != 1) {
        zri_err(err, errlen, "no random bytes: %s", ssl_reason());
        return -1;
    }
    return 0;
}

int zri_sha256(const zri_bytes *parts, int nparts, uint8_t out[ZRI_HASH_BYTES])
{
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    int ok = c && EVP_DigestInit_ex(c, EVP_sha256(), NULL) == 1;
    for (int i = 0; ok && i < nparts; i++) ok = EVP_DigestUpdate(c, parts[i].d, parts[i].n) == 1;
    unsigned int len = 0;
    ok = ok && EVP_DigestFinal_ex(c, out, &len) == 1 && len == ZRI_HASH_BYTES;
    EVP_MD_CTX_free(c);
    return ok ? 0 : -1;
}

/* A keyed HMAC-SHA256 context, or NULL. */
static EVP_MAC_CTX *hmac_new(const uint8_t *key, size_t klen)
{
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    if (!mac) return NULL;
    EVP_MAC_CTX *c = EVP_MAC_CTX_new(mac);
    EVP_MAC_free(mac); /* the context keeps its own reference */
    if (!c) return NULL;
    char digest[] = "SHA256";
    OSSL_PARAM ps[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                       OSSL_PARAM_construct_end()};
    if (EVP_MAC_init(c, key, klen, ps) != 1) {
        EVP_MAC_CTX_free(c);
        return NULL;
    }
    return c;
}

int zri_hmac(const uint8_t *key, size_t klen, const zri_bytes *parts, int nparts,
             uint8_t out[ZRI_HASH_BYTES])
{
    EVP_MAC_CTX *c = hmac_new(key, klen);
    int ok = c != NULL;
    for (int i = 0; ok && i < nparts; i++) ok = EVP_MAC_update(c, parts[i].d, parts[i].n) == 1;
    size_t len = 0;
    ok = ok && EVP_MAC_final(c, out, &len, ZRI_HASH_BYTES) == 1 && len == ZRI_HASH_BYTES;
    EVP_MAC_CTX_free(c);
    return ok ? 0 : -1;
}

int zri_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
    /* in constant time: how much of a forged tag matched must not show */
    return CRYPTO_memcmp(a, b, n) == 0;
}

/* HMAC-SHA256 with its key's two pad blocks already hashed. */
struct zri_mac {
    SHA256_CTX inner, outer;
};

zri_mac *zri_mac_new(const uint8_t key[ZRI_HASH_BYTES], char *err, size_t errlen)
{
    zri_mac *m = zri_xmalloc(sizeof *m);
    uint8_t ipad[SHA256_CBLOCK], opad[SHA256_CBLOCK];
    /* the key is shorter than a block: zero-padded, then xored */
    memset(ipad, 0x36, sizeof ipad);
    memset(opad, 0x5c, sizeof opad);
    for (int i = 0; i < ZRI_HASH_BYTES; i++) {
        ipad[i] ^= key[i];
        opad[i] ^= key[i];
    }
    int ok = SHA256_Init(&m->inner) == 1 && SHA256_Update(&m->inner, ipad, sizeof ipad) == 1 &&
             SHA256_Init(&m->outer) == 1 && SHA256_Update(&m->outer, opad, sizeof opad) == 1;
    OPENSSL_cleanse(ipad, sizeof ipad);
    OPENSSL_cleanse(opad, sizeof opad);
    if (!ok) {
        zri_err(err, errlen, "cannot set up HMAC-SHA256: %s", ssl_reason());
        zri_mac_free(m);
        return NULL;
    }
    return m;
}

/* A SHA-256 hash in progress: its state, the bytes of its last block so
 * far, and how many bytes it has hashed (a pad block's 64 included). */
typedef struct sha_run {
    SHA256_CTX c;
    uint8_t block[SHA256_CBLOCK];
    size_t at;
    uint64_t total;
} sha_run;

/* Hashes n more bytes, a block at a time. */
static void run_bytes(sha_run *r, const uint8_t *p, size_t n)
{
    r->total += n;
    if (r->at + n < SHA256_CBLOCK) { /* most frames: within the block */
        memcpy(r->block + r->at, p, n);
        r->at += n;
        return;
    }
    while (n) {
        size_t k = SHA256_CBLOCK - r->at < n ? SHA256_CBLOCK - r->at : n;
        memcpy(r->block + r->at, p, k);
        r->at += k, p += k, n -= k;
        if (r->at == SHA256_CBLOCK) {
            SHA256_Transform(&r->c, r->block);
            r->at = 0;
        }
    }
}

/* Ends the hash as SHA-256 pads a message (FIPS 180-4, 5.1.1: 0x80,
 * zeros, the length in bits; two blocks when the length does not fit
 * after the last bytes) and writes the first `words` words of the
 * digest, big-endian. */
static void run_end(sha_run *r, uint8_t *out, int words)
{
    r->block[r->at++] = 0x80;
    if (r->at > SHA256_CBLOCK - 8) {
        memset(r->block + r->at, 0, SHA256_CBLOCK - r->at);
        SHA256_Transform(&r->c, r->block);
        r->at = 0;
    }
    memset(r->block + r->at, 0, SHA256_CBLOCK - 8 - r->at);
    uint64_t bits = htobe64(r->total * 8);
    memcpy(r->block + SHA256_CBLOCK - 8, &bits, 8);
    SHA256_Transform(&r->c, r->block);
    for (int i = 0; i < words; i++) {
        uint32_t w = htobe32(r->c.h[i]);
        memcpy(out + 4 * i, &w, 4);
    }
}

/* The outer hash's block after the 32-byte inner digest: 0x80, zeros,
 * and the bits hashed (the pad block and the digest: 96 bytes). */
static const uint8_t outer_tail[SHA256_CBLOCK - SHA256_DIGEST_LENGTH] = {
    [0] = 0x80, [SHA256_CBLOCK - SHA256_DIGEST_LENGTH - 2] = 0x03};

/* Payloads up to this long fit one block with the tag's 12-byte head,
 * SHA-256's 0x80 and its 8-byte length (most frames). */
#define ONE_BLOCK (SHA256_CBLOCK - 12 - 1 - 8)

void zri_mac_tag(zri_mac *m, uint64_t seq, const uint8_t *payload, size_t len,
                 uint8_t tag[ZRI_TAG_BYTES])
{
    uint8_t block[SHA256_CBLOCK]; /* seq and len, big-endian, then the payload */
    uint64_t s = htobe64(seq);
    uint32_t l = htobe32((uint32_t)len);
    /* SHA256_Transform reads and writes the context's state words (h)
     * alone: only those are copied in */
    SHA256_CTX c;
    if (len <= ONE_BLOCK) {
        /* the inner hash in one compression, its block padded here */
        memcpy(block, &s, 8);
        memcpy(block + 8, &l, 4);
        memcpy(block + 12, payload, len);
        block[12 + len] = 0x80;
        memset(block + 13 + len, 0, SHA256_CBLOCK - 8 - 13 - len);
        uint64_t bits = htobe64((uint64_t)(SHA256_CBLOCK + 12 + len) * 8);
        memcpy(block + SHA256_CBLOCK - 8, &bits, 8);
        memcpy(c.h, m->inner.h, sizeof c.h);
        SHA256_Transform(&c, block);
    } else {
        sha_run r = {.c = m->inner, .total = SHA256_CBLOCK};
        memcpy(block, &s, 8);
        memcpy(block + 8, &l, 4);
        run_bytes(&r, block, 12);
        run_bytes(&r, payload, len);
        run_end(&r, NULL, 0);
        c = r.c;
    }
    /* the outer hash: the inner digest and its padding, one block (the
     * key's pad block before it is in m->outer) */
    for (int i = 0; i < SHA256_DIGEST_LENGTH / 4; i++) {
        uint32_t w = htobe32(c.h[i]);
        memcpy(block + 4 * i, &w, 4);
    }
    memcpy(block + SHA256_DIGEST_LENGTH, outer_tail, sizeof outer_tail);
    memcpy(c.h, m->outer.h, sizeof c.h);
    SHA256_Transform(&c, block);
    for (int i = 0; i < ZRI_TAG_BYTES / 4; i++) {
        uint32_t w = htobe32(c.h[i]);
        memcpy(tag + 4 * i, &w, 4);
    }
}

void zri_mac_free(zri_mac *m)
{
    if (!m) return;
    OPENSSL_cleanse(m, sizeof *m);
    free(m);
}
