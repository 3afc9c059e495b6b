#define OPENSSL_SUPPRESS_DEPRECATED
#include "token_signing.h"
#include "rsa_lanes.h"

#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/rsa.h>
#include <openssl/sha.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// The tenant's signatures are libcrypto's RSA_sign (the low-level interface: measured beside EVP_DigestSign, it is as
// fast and does not look the algorithm up in the providers at every signature), except where waiting signatures of an
// RSA-2048 key share one pass of an engine's lanes: up to four with AVX-512 IFMA (rsa_ifma.c), two with AVX2
// (rsa_avx2.c), where a pass pays (RS256Signer measures it at load). This file
// does the rest of RSA_sign's work around them with libcrypto's big-number calls: padding, blinding, reduction by each
// prime, Garner's recombination, unblinding, and the public check, with RSA_sign as the second try of a signature that
// does not check. The blinding there is ours (b2c_blinding): libcrypto's scheme, which BN_BLINDING kept at a greater cost
// (bench/README.md, "Issue 43 on an AMD EPYC of family 25").
//
// RSA_sign signs with one RSA object per thread: two threads signing with one object sign about a tenth slower than two
// with an object each (2,368 against 2,612 and 2,504 against 2,777 sign/s on 2 cores, bench/README.md), as the object's
// blinding and cache lines are shared. So a key holds copies, one per slot, and a thread signs with the copy of its own
// slot; more threads than slots share copies, which is as safe as sharing the key (libcrypto locks what it shares). The
// batches' blindings are per slot as well.
enum { B2C_RSA_SLOTS = 16 };

/// The uses of one random blinding factor before a new one is drawn (libcrypto's BN_BLINDING_COUNTER).
enum { B2C_BLINDING_USES = 32 };

/// A blinding pair of the key's modulus n: A = r^e and Ai = r^-1 mod n for a random r, both in Montgomery form. A
/// message is multiplied by A before its exponentiation and the signature by Ai after, so the secret exponents never
/// meet a number an attacker chose. Each use squares both first (no two signatures share a pair), and every 32nd draws a
/// new r. Its lock is taken only by the threads of one slot.
typedef struct {
    pthread_mutex_t lock;
    BIGNUM *a, *ai;
    unsigned uses;
} b2c_blinding;

struct b2c_rsa_key {
    RSA *rsa;
    _Atomic(RSA *) copies[B2C_RSA_SLOTS];
    // Batches (b2c_rsa_key_enable_lanes): the primes in an engine's lanes, the Montgomery constants of n (the blinding,
    // the check) and of p and q (the timing of libcrypto's exponentiations), and a blinding per slot, made on the slot's
    // first batch. NULL until enabled.
    const b2c_lanes_engine *engine;
    void *lanes;
    BN_MONT_CTX *modulus, *mont_p, *mont_q;
    _Atomic(b2c_blinding *) blindings[B2C_RSA_SLOTS];
    atomic_ulong fallbacks;  // batch signatures that did not check and were made again by RSA_sign
    // While `timing` (b2c_rsa_key_time_passes, before any other thread signs): the least thread CPU time of a pass of the
    // lanes, and of libcrypto's pair of exponentiations for one signature timed right after each pass, in nanoseconds.
    int timing;
    uint64_t least_pass, least_pair;
};

static atomic_uint b2c_next_thread;
static _Thread_local unsigned b2c_thread_slot;
static _Thread_local int b2c_thread_has_slot;

b2c_rsa_key *b2c_rsa_key_from_der(const unsigned char *der, size_t length) {
    const unsigned char *cursor = der;
    EVP_PKEY *pkey = d2i_AutoPrivateKey(NULL, &cursor, (long)length);
    if (pkey == NULL) return NULL;
    RSA *rsa = cursor == der + length ? EVP_PKEY_get1_RSA(pkey) : NULL;
    EVP_PKEY_free(pkey);
    if (rsa == NULL) return NULL;
    b2c_rsa_key *key = calloc(1, sizeof *key);
    if (key == NULL) {
        RSA_free(rsa);
        return NULL;
    }
    key->rsa = rsa;
    for (int i = 0; i < B2C_RSA_SLOTS; i++) {
        atomic_init(&key->copies[i], NULL);
        atomic_init(&key->blindings[i], NULL);
    }
    atomic_init(&key->fallbacks, 0);
    return key;
}

size_t b2c_rsa_key_size(const b2c_rsa_key *key) { return (size_t)RSA_size(key->rsa); }

/// Gives the thread its slot on its first signature with any key.
static void b2c_claim_slot(void) {
    if (!b2c_thread_has_slot) {
        b2c_thread_slot = atomic_fetch_add_explicit(&b2c_next_thread, 1, memory_order_relaxed) % B2C_RSA_SLOTS;
        b2c_thread_has_slot = 1;
    }
}

/// The copy this thread signs with: made on the thread's first signature with the key; the key itself if libcrypto
/// cannot copy it.
static RSA *b2c_thread_copy(b2c_rsa_key *key) {
    b2c_claim_slot();
    _Atomic(RSA *) *slot = &key->copies[b2c_thread_slot];
    RSA *copy = atomic_load_explicit(slot, memory_order_acquire);
    if (copy != NULL) return copy;
    RSA *made = RSAPrivateKey_dup(key->rsa);
    if (made == NULL) return key->rsa;
    RSA *expected = NULL;
    if (atomic_compare_exchange_strong_explicit(slot, &expected, made, memory_order_acq_rel, memory_order_acquire)) return made;
    RSA_free(made);  // another thread of this slot made it first
    return expected;
}

/// SHA-256 through its low-level calls: the one-shot SHA256() of OpenSSL 3 looks the digest up in the providers at every
/// call (EVP_MD_fetch), which was 0.3-0.5 % of the tenant's time under load.
static void b2c_sha256(const unsigned char *data, size_t length, unsigned char digest[SHA256_DIGEST_LENGTH]) {
    SHA256_CTX context;
    SHA256_Init(&context);
    SHA256_Update(&context, data, length);
    SHA256_Final(digest, &context);
}

size_t b2c_rsa_sign_sha256(b2c_rsa_key *key, const unsigned char *data, size_t length, unsigned char *signature) {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    b2c_sha256(data, length, digest);
    unsigned int written = 0;
    int ok = RSA_sign(NID_sha256, digest, sizeof digest, signature, &written, b2c_thread_copy(key));
    OPENSSL_cleanse(digest, sizeof digest);
    return ok == 1 ? (size_t)written : 0;
}

int b2c_rsa_key_enable_lanes(b2c_rsa_key *key, int choice) {
    if (key->lanes != NULL) return key->engine->signatures;
    const b2c_lanes_engine *engine = NULL;
    if ((choice == B2C_LANES_BEST || choice == B2C_LANES_IFMA) && b2c_lanes_ifma.available()) engine = &b2c_lanes_ifma;
    else if ((choice == B2C_LANES_BEST || choice == B2C_LANES_AVX2) && b2c_lanes_avx2.available()) engine = &b2c_lanes_avx2;
    const BIGNUM *n = NULL, *e = NULL, *p = NULL, *q = NULL, *dp = NULL, *dq = NULL, *qinv = NULL;
    RSA_get0_key(key->rsa, &n, &e, NULL);
    RSA_get0_factors(key->rsa, &p, &q);
    RSA_get0_crt_params(key->rsa, &dp, &dq, &qinv);
    // Two primes of 1024 bits each: the lanes' size. Other keys sign one at a time.
    if (engine == NULL || n == NULL || e == NULL || p == NULL || q == NULL || dp == NULL || dq == NULL || qinv == NULL
        || RSA_get_multi_prime_extra_count(key->rsa) != 0 || BN_num_bits(n) != 2048 || BN_num_bits(p) != 1024
        || BN_num_bits(q) != 1024)
        return 0;
    unsigned char primes[2][128], exponents[2][128], rr[2][128];
    BN_CTX *ctx = BN_CTX_new();
    BIGNUM *square = BN_new();
    int ok = ctx != NULL && square != NULL;
    const BIGNUM *prime[2] = {p, q}, *exponent[2] = {dp, dq};
    for (int i = 0; ok && i < 2; i++) {
        // R^2 mod the prime, for the engine's R (2^1040 for IFMA's 20 limbs of 52 bits, 2^1036 for AVX2's 37 of 28).
        ok = BN_bn2binpad(prime[i], primes[i], 128) == 128 && BN_bn2binpad(exponent[i], exponents[i], 128) == 128
            && BN_set_word(square, 0) == 1 && BN_set_bit(square, engine->rr_bits) == 1 && BN_mod(square, square, prime[i], ctx) == 1
            && BN_bn2binpad(square, rr[i], 128) == 128;
    }
    BN_MONT_CTX *made[3] = {NULL, NULL, NULL};
    const BIGNUM *moduli[3] = {n, p, q};
    for (int i = 0; ok && i < 3; i++) ok = (made[i] = BN_MONT_CTX_new()) != NULL && BN_MONT_CTX_set(made[i], moduli[i], ctx) == 1;
    void *lanes = ok ? engine->make(primes, exponents, rr) : NULL;
    // All three are secret: the primes, their exponents, and R^2 mod p (which gives p as gcd(R^2 - rr, n)).
    OPENSSL_cleanse(primes, sizeof primes);
    OPENSSL_cleanse(exponents, sizeof exponents);
    OPENSSL_cleanse(rr, sizeof rr);
    BN_clear_free(square);
    BN_CTX_free(ctx);
    if (lanes == NULL) {
        for (int i = 0; i < 3; i++) BN_MONT_CTX_free(made[i]);
        return 0;
    }
    key->modulus = made[0], key->mont_p = made[1], key->mont_q = made[2];
    key->engine = engine, key->lanes = lanes;
    return engine->signatures;
}

unsigned long b2c_rsa_key_fallbacks(const b2c_rsa_key *key) {
    return atomic_load_explicit(&key->fallbacks, memory_order_relaxed);
}

const char *b2c_rsa_key_lanes(const b2c_rsa_key *key) { return key->lanes != NULL ? key->engine->name : NULL; }

void b2c_rsa_key_disable_lanes(b2c_rsa_key *key) {
    if (key->lanes != NULL) key->engine->release(key->lanes);
    key->lanes = NULL;
}

/// The blinding of this thread's slot, made on the slot's first batch; NULL without memory.
static b2c_blinding *b2c_thread_blinding(b2c_rsa_key *key) {
    b2c_claim_slot();
    _Atomic(b2c_blinding *) *slot = &key->blindings[b2c_thread_slot];
    b2c_blinding *blinding = atomic_load_explicit(slot, memory_order_acquire);
    if (blinding != NULL) return blinding;
    b2c_blinding *made = calloc(1, sizeof *made);
    if (made == NULL) return NULL;
    made->a = BN_new(), made->ai = BN_new();
    if (made->a == NULL || made->ai == NULL || pthread_mutex_init(&made->lock, NULL) != 0) {
        BN_free(made->a), BN_free(made->ai), free(made);
        return NULL;
    }
    b2c_blinding *expected = NULL;
    if (atomic_compare_exchange_strong_explicit(slot, &expected, made, memory_order_acq_rel, memory_order_acquire)) return made;
    pthread_mutex_destroy(&made->lock), BN_free(made->a), BN_free(made->ai), free(made);
    return expected;
}

static void b2c_blinding_free(b2c_blinding *blinding) {
    if (blinding == NULL) return;
    pthread_mutex_destroy(&blinding->lock);
    BN_clear_free(blinding->a);
    BN_clear_free(blinding->ai);
    free(blinding);
}

/// A new random factor: r in [1, n) from libcrypto's private generator, its inverse (an r with a factor in common with
/// n, which has no inverse, is drawn again) and r^e, both through libcrypto's constant-time paths, as RSA_setup_blinding
/// takes them.
static int b2c_blinding_draw(const b2c_rsa_key *key, b2c_blinding *blinding, BN_CTX *ctx) {
    const BIGNUM *n = NULL, *e = NULL;
    RSA_get0_key(key->rsa, &n, &e, NULL);
    BN_CTX_start(ctx);
    BIGNUM *r = BN_CTX_get(ctx), *secret = BN_new();
    int ok = r != NULL && secret != NULL, inverted = 0;
    for (int tries = 0; ok && !inverted && tries < 8; tries++) {
        ok = BN_priv_rand_range(r, n) == 1;
        if (!ok || BN_is_zero(r)) continue;
        BN_with_flags(secret, r, BN_FLG_CONSTTIME);
        ERR_set_mark();
        inverted = BN_mod_inverse(blinding->ai, secret, n, ctx) != NULL;
        ERR_pop_to_mark();  // a draw without an inverse is not an error: the next one is taken
    }
    ok = ok && inverted && BN_mod_exp_mont(blinding->a, secret, e, n, ctx, key->modulus) == 1
        && BN_to_montgomery(blinding->a, blinding->a, key->modulus, ctx) == 1
        && BN_to_montgomery(blinding->ai, blinding->ai, key->modulus, ctx) == 1;
    if (r != NULL) BN_clear(r);
    BN_free(secret);  // a shallow copy: r's digits stay r's
    BN_CTX_end(ctx);
    return ok;
}

/// The slot's next pair into `a` and `ai`. Returns 1, or 0 when libcrypto could not (the next use then draws anew).
static int b2c_blinding_next(const b2c_rsa_key *key, b2c_blinding *blinding, BIGNUM *a, BIGNUM *ai, BN_CTX *ctx) {
    pthread_mutex_lock(&blinding->lock);
    int ok = blinding->uses % B2C_BLINDING_USES == 0
        ? b2c_blinding_draw(key, blinding, ctx)
        : BN_mod_mul_montgomery(blinding->a, blinding->a, blinding->a, key->modulus, ctx) == 1
            && BN_mod_mul_montgomery(blinding->ai, blinding->ai, blinding->ai, key->modulus, ctx) == 1;
    ok = ok && BN_copy(a, blinding->a) != NULL && BN_copy(ai, blinding->ai) != NULL;
    blinding->uses = ok ? blinding->uses + 1 : 0;
    pthread_mutex_unlock(&blinding->lock);
    return ok;
}

/// Thread CPU time in nanoseconds.
static uint64_t b2c_thread_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

// The DER prefix of a SHA-256 DigestInfo (RFC 8017, section 9.2).
static const unsigned char b2c_sha256_info[19] = {0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01,
                                                  0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20};

/// The thread CPU time of libcrypto's pair of exponentiations for one signature, as RSA_sign calls it for a key of two
/// primes of one size; UINT64_MAX where libcrypto failed. Its time does not depend on the bases (it is constant-time),
/// so p - 3 and q - 5 serve: bases as long as the primes, as its IFMA code asks.
static uint64_t b2c_time_pair(const b2c_rsa_key *key) {
    const BIGNUM *p = NULL, *q = NULL, *dp = NULL, *dq = NULL;
    RSA_get0_factors(key->rsa, &p, &q);
    RSA_get0_crt_params(key->rsa, &dp, &dq, NULL);
    BN_CTX *ctx = BN_CTX_new();
    BIGNUM *bp = BN_new(), *bq = BN_new(), *rp = BN_new(), *rq = BN_new();
    int ok = ctx != NULL && bp != NULL && bq != NULL && rp != NULL && rq != NULL && BN_copy(bp, p) != NULL
        && BN_sub_word(bp, 3) == 1 && BN_copy(bq, q) != NULL && BN_sub_word(bq, 5) == 1;
    uint64_t start = b2c_thread_ns();
    ok = ok && BN_mod_exp_mont_consttime_x2(rp, bp, dp, p, key->mont_p, rq, bq, dq, q, key->mont_q, ctx) == 1;
    uint64_t took = b2c_thread_ns() - start;
    // p - 3 and q - 5 give the primes away, and so do the results.
    BN_clear_free(bp), BN_clear_free(bq), BN_clear_free(rp), BN_clear_free(rq), BN_CTX_free(ctx);
    return ok && took > 0 ? took : UINT64_MAX;
}

/// Up to a pass's signatures through the lanes: each message padded (EMSA-PKCS1-v1_5), blinded, split by the primes, raised in
/// the lanes, recombined (Garner), unblinded, and checked with the public exponent; a signature that does not check is
/// made again by RSA_sign. Returns 1, or 0 when libcrypto failed (the signatures are then not valid).
static int b2c_lanes_sign(b2c_rsa_key *key, size_t count, const unsigned char *const data[], const size_t lengths[],
                         unsigned char *const signatures[]) {
    const BIGNUM *n = NULL, *e = NULL, *p = NULL, *q = NULL, *qinv = NULL;
    RSA_get0_key(key->rsa, &n, &e, NULL);
    RSA_get0_factors(key->rsa, &p, &q);
    RSA_get0_crt_params(key->rsa, NULL, NULL, &qinv);
    unsigned char encoded[256], info[sizeof b2c_sha256_info + SHA256_DIGEST_LENGTH];
    unsigned char bases[B2C_LANES_MOST_SIGNATURES][2][128], results[B2C_LANES_MOST_SIGNATURES][2][128];
    BIGNUM *message[B2C_LANES_MOST_SIGNATURES], *value[B2C_LANES_MOST_SIGNATURES], *unblind[B2C_LANES_MOST_SIGNATURES];
    if (count == 0 || count > (size_t)key->engine->signatures || count > B2C_LANES_MOST_SIGNATURES) return 0;
    b2c_blinding *blinding = b2c_thread_blinding(key);
    BN_CTX *ctx = blinding != NULL ? BN_CTX_new() : NULL;
    if (ctx == NULL) return 0;
    BN_CTX_start(ctx);
    BIGNUM *sp = BN_CTX_get(ctx), *sq = BN_CTX_get(ctx), *h = BN_CTX_get(ctx), *check = BN_CTX_get(ctx);
    BIGNUM *a = BN_CTX_get(ctx), *secret = BN_new();
    int ok = a != NULL && secret != NULL;
    for (size_t i = 0; ok && i < count; i++) {
        message[i] = BN_CTX_get(ctx), value[i] = BN_CTX_get(ctx), unblind[i] = BN_CTX_get(ctx);
        ok = unblind[i] != NULL;
    }
    for (size_t i = 0; ok && i < count; i++) {
        memcpy(info, b2c_sha256_info, sizeof b2c_sha256_info);
        b2c_sha256(data[i], lengths[i], info + sizeof b2c_sha256_info);
        ok = RSA_padding_add_PKCS1_type_1(encoded, sizeof encoded, info, sizeof info) == 1
            && BN_bin2bn(encoded, sizeof encoded, message[i]) != NULL
            && b2c_blinding_next(key, blinding, a, unblind[i], ctx) == 1
            && BN_mod_mul_montgomery(value[i], message[i], a, key->modulus, ctx) == 1;
        // The blinded message reduced by each prime. OpenSSL 3.0 divides with bn_div_fixed_top whatever the flags; the
        // flag says constant time for a libcrypto that looks at it, and is on a shallow copy: on the value itself it
        // would also make the public check below a constant-time exponentiation, four times slower.
        BN_with_flags(secret, value[i], BN_FLG_CONSTTIME);
        ok = ok && BN_mod(sp, secret, p, ctx) == 1 && BN_bn2binpad(sp, bases[i][0], 128) == 128
            && BN_mod(sq, secret, q, ctx) == 1 && BN_bn2binpad(sq, bases[i][1], 128) == 128;
    }
    uint64_t start = key->timing ? b2c_thread_ns() : 0;
    ok = ok && key->engine->exponentiate(key->lanes, count, (const unsigned char(*)[2][128])bases, results) == 1;
    uint64_t took = key->timing ? b2c_thread_ns() - start : 0;
    if (ok && key->timing && took < key->least_pass) key->least_pass = took;
    if (ok && key->timing) {
        // Right after the pass, so that both see the same load of the machine's other threads.
        uint64_t pair = b2c_time_pair(key);
        if (pair < key->least_pair) key->least_pair = pair;
    }
    for (size_t i = 0; ok && i < count; i++) {
        // s = sq + q * ((sp - sq) * q^-1 mod p), with sp + 2p - sq for the difference: both primes have 1024 bits, so
        // q < 2p and the difference is positive without a test of its sign.
        ok = BN_bin2bn(results[i][0], 128, sp) != NULL && BN_bin2bn(results[i][1], 128, sq) != NULL
            && BN_lshift1(h, p) == 1 && BN_add(h, h, sp) == 1 && BN_sub(h, h, sq) == 1
            && BN_mod_mul(h, h, qinv, p, ctx) == 1 && BN_mul(h, h, q, ctx) == 1 && BN_add(value[i], h, sq) == 1
            && BN_mod_mul_montgomery(value[i], value[i], unblind[i], key->modulus, ctx) == 1;
    }
    for (size_t i = 0; ok && i < count; i++) {
        // A fault or a flaw in the lanes never leaves as a token: the signature must be below n and give the message back.
        if (BN_ucmp(value[i], n) < 0 && BN_mod_exp_mont(check, value[i], e, n, ctx, key->modulus) == 1
            && BN_cmp(check, message[i]) == 0)
            ok = BN_bn2binpad(value[i], signatures[i], 256) == 256;
        else {
            atomic_fetch_add_explicit(&key->fallbacks, 1, memory_order_relaxed);
            ok = b2c_rsa_sign_sha256(key, data[i], lengths[i], signatures[i]) == 256;
        }
    }
    BN_free(secret);
    OPENSSL_cleanse(bases, sizeof bases);
    OPENSSL_cleanse(results, sizeof results);
    OPENSSL_cleanse(info, sizeof info);
    OPENSSL_cleanse(encoded, sizeof encoded);
    BN_CTX_end(ctx);
    BN_CTX_free(ctx);
    return ok;
}

size_t b2c_rsa_sign_sha256_batch(b2c_rsa_key *key, size_t count, const unsigned char *const data[], const size_t lengths[],
                                 unsigned char *const signatures[]) {
    size_t size = (size_t)RSA_size(key->rsa);
    for (size_t done = 0; done < count;) {
        size_t most = key->lanes != NULL ? (size_t)key->engine->signatures : 1;
        size_t n = count - done < most ? count - done : most;
        if (n > 1) {
            if (!b2c_lanes_sign(key, n, data + done, lengths + done, signatures + done)) return 0;
        } else {
            for (size_t i = done; i < done + n; i++)
                if (b2c_rsa_sign_sha256(key, data[i], lengths[i], signatures[i]) != size) return 0;
        }
        done += n;
    }
    return size;
}

void b2c_rsa_key_time_passes(b2c_rsa_key *key, int on) {
    if (on) key->least_pass = UINT64_MAX, key->least_pair = UINT64_MAX;
    key->timing = on;
}

double b2c_rsa_key_pass_cost(const b2c_rsa_key *key) {
    if (key->lanes == NULL || key->least_pass == UINT64_MAX || key->least_pass == 0 || key->least_pair == UINT64_MAX) return 0;
    return (double)key->least_pass / (double)key->least_pair;
}

void b2c_rsa_key_free(b2c_rsa_key *key) {
    if (key == NULL) return;
    for (int i = 0; i < B2C_RSA_SLOTS; i++) b2c_blinding_free(atomic_load_explicit(&key->blindings[i], memory_order_acquire));
    b2c_rsa_key_disable_lanes(key);
    BN_MONT_CTX_free(key->modulus);
    BN_MONT_CTX_free(key->mont_p);
    BN_MONT_CTX_free(key->mont_q);
    for (int i = 0; i < B2C_RSA_SLOTS; i++) RSA_free(atomic_load_explicit(&key->copies[i], memory_order_acquire));
    RSA_free(key->rsa);
    free(key);
}

// AES-256-GCM. A context is made with the key (its AES schedule and GHASH table computed then) and kept in the key's
// pool of contexts, one pool for sealing and one for opening; an operation takes any context from the pool (an atomic
// exchange), sets the nonce, and puts the context back in the first empty place, or frees it when the pool is full.
// Two threads never hold one context, and a pool of 8 holds what the cooperative threads and event loops of a tenant use.
enum { B2C_GCM_POOL = 8 };

struct b2c_gcm_key {
    EVP_CIPHER *cipher;
    unsigned char key[32];
    _Atomic(EVP_CIPHER_CTX *) sealing[B2C_GCM_POOL];
    _Atomic(EVP_CIPHER_CTX *) opening[B2C_GCM_POOL];
};

b2c_gcm_key *b2c_gcm_key_new(const unsigned char key[32]) {
    EVP_CIPHER *cipher = EVP_CIPHER_fetch(NULL, "AES-256-GCM", NULL);
    if (cipher == NULL) return NULL;
    b2c_gcm_key *made = calloc(1, sizeof *made);
    if (made == NULL) {
        EVP_CIPHER_free(cipher);
        return NULL;
    }
    made->cipher = cipher;
    memcpy(made->key, key, sizeof made->key);
    for (int i = 0; i < B2C_GCM_POOL; i++) {
        atomic_init(&made->sealing[i], NULL);
        atomic_init(&made->opening[i], NULL);
    }
    return made;
}

/// A context of the pool, or a new one with the key set; NULL when libcrypto cannot make one.
static EVP_CIPHER_CTX *b2c_gcm_take(b2c_gcm_key *key, _Atomic(EVP_CIPHER_CTX *) *pool, int sealing) {
    for (int i = 0; i < B2C_GCM_POOL; i++) {
        EVP_CIPHER_CTX *context = atomic_exchange_explicit(&pool[i], NULL, memory_order_acquire);
        if (context != NULL) return context;
    }
    EVP_CIPHER_CTX *context = EVP_CIPHER_CTX_new();
    if (context == NULL) return NULL;
    if (EVP_CipherInit_ex2(context, key->cipher, key->key, NULL, sealing, NULL) != 1) {
        EVP_CIPHER_CTX_free(context);
        return NULL;
    }
    return context;
}

/// Gives a context back after a successful operation; one whose operation failed is freed instead (its state is then
/// libcrypto's to know), as is one the full pool has no place for.
static void b2c_gcm_give_back(_Atomic(EVP_CIPHER_CTX *) *pool, EVP_CIPHER_CTX *context, int ok) {
    if (ok) {
        for (int i = 0; i < B2C_GCM_POOL; i++) {
            EVP_CIPHER_CTX *expected = NULL;
            if (atomic_compare_exchange_strong_explicit(&pool[i], &expected, context, memory_order_release, memory_order_relaxed))
                return;
        }
    }
    EVP_CIPHER_CTX_free(context);
}

int b2c_gcm_seal(b2c_gcm_key *key, const unsigned char nonce[12], const unsigned char *aad, size_t aad_length,
                 const unsigned char *plaintext, size_t length, unsigned char *ciphertext, unsigned char tag[16]) {
    if (aad_length > INT_MAX || length > INT_MAX) return 0;
    EVP_CIPHER_CTX *context = b2c_gcm_take(key, key->sealing, 1);
    if (context == NULL) return 0;
    int written = 0, ok = EVP_CipherInit_ex2(context, NULL, NULL, nonce, 1, NULL) == 1
        && (aad_length == 0 || EVP_EncryptUpdate(context, NULL, &written, aad, (int)aad_length) == 1)
        && (length == 0 || EVP_EncryptUpdate(context, ciphertext, &written, plaintext, (int)length) == 1)
        && EVP_EncryptFinal_ex(context, ciphertext + length, &written) == 1
        && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, 16, tag) == 1;
    b2c_gcm_give_back(key->sealing, context, ok);
    return ok;
}

int b2c_gcm_open(b2c_gcm_key *key, const unsigned char nonce[12], const unsigned char *aad, size_t aad_length,
                 const unsigned char *ciphertext, size_t length, const unsigned char tag[16], unsigned char *plaintext) {
    if (aad_length > INT_MAX || length > INT_MAX) return 0;
    EVP_CIPHER_CTX *context = b2c_gcm_take(key, key->opening, 0);
    if (context == NULL) return 0;
    int written = 0, ok = EVP_CipherInit_ex2(context, NULL, NULL, nonce, 0, NULL) == 1
        && (aad_length == 0 || EVP_DecryptUpdate(context, NULL, &written, aad, (int)aad_length) == 1)
        && (length == 0 || EVP_DecryptUpdate(context, plaintext, &written, ciphertext, (int)length) == 1)
        && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, 16, (void *)tag) == 1
        && EVP_DecryptFinal_ex(context, plaintext + length, &written) == 1;
    b2c_gcm_give_back(key->opening, context, ok);
    return ok;
}

void b2c_gcm_key_free(b2c_gcm_key *key) {
    if (key == NULL) return;
    for (int i = 0; i < B2C_GCM_POOL; i++) {
        EVP_CIPHER_CTX_free(atomic_load_explicit(&key->sealing[i], memory_order_acquire));
        EVP_CIPHER_CTX_free(atomic_load_explicit(&key->opening[i], memory_order_acquire));
    }
    EVP_CIPHER_free(key->cipher);
    OPENSSL_cleanse(key->key, sizeof key->key);
    free(key);
}
