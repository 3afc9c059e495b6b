#define OPENSSL_SUPPRESS_DEPRECATED
#include "token_signing.h"
#include "rsa_ifma.h"

#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/rsa.h>
#include <openssl/sha.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

// The low-level RSA interface: measured here beside EVP_DigestSign, it is as fast and does not go through a provider
// lookup per signature (bench/README.md).
//
// One RSA object per signing thread: two threads signing with one RSA object sign about a tenth slower than two with
// an object each (2,368 against 2,612 and 2,504 against 2,777 sign/s on 2 cores, bench/README.md): a thread that did
// not make the object's blinding shares a second one under the object's lock, and the object's cache lines move between
// the cores. So a key holds copies, one per slot, and a thread signs with the copy of its own slot; more threads than
// slots share copies, which is as safe as sharing the key (libcrypto locks what it shares).
enum { B2C_RSA_SLOTS = 16 };

struct b2c_rsa_key {
    RSA *rsa;
    _Atomic(RSA *) copies[B2C_RSA_SLOTS];
    // Batches (b2c_rsa_sign_sha256_batch): the primes in IFMA's lanes, the modulus's Montgomery constants for the check
    // of each signature, and a blinding per slot, made from the slot's copy on its first batch. NULL until enabled.
    b2c_ifma_key *ifma;
    BN_MONT_CTX *modulus;
    atomic_ulong fallbacks;  // batch signatures that did not check and were made again by libcrypto alone
    _Atomic(BN_BLINDING *) blindings[B2C_RSA_SLOTS];
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

size_t b2c_rsa_sign_sha256(b2c_rsa_key *key, const unsigned char *data, size_t length, unsigned char *signature) {
    // SHA-256 through its low-level calls: the one-shot SHA256() of OpenSSL 3 looks the digest up in the providers at
    // every call (EVP_MD_fetch), which was 0.3-0.5 % of the tenant's time under load.
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256_CTX context;
    SHA256_Init(&context);
    SHA256_Update(&context, data, length);
    SHA256_Final(digest, &context);
    unsigned int written = 0;
    int ok = RSA_sign(NID_sha256, digest, sizeof digest, signature, &written, b2c_thread_copy(key));
    OPENSSL_cleanse(digest, sizeof digest);
    return ok == 1 ? (size_t)written : 0;
}

int b2c_rsa_key_enable_ifma(b2c_rsa_key *key) {
    if (key->ifma != NULL) return 1;
    const BIGNUM *n = NULL, *e = NULL, *p = NULL, *q = NULL, *dp = NULL, *dq = NULL, *qinv = NULL;
    RSA_get0_key(key->rsa, &n, &e, NULL);
    RSA_get0_factors(key->rsa, &p, &q);
    RSA_get0_crt_params(key->rsa, &dp, &dq, &qinv);
    // Two primes of 1024 bits each: the lanes' size. Other keys sign one at a time.
    if (!b2c_ifma_available() || n == NULL || e == NULL || p == NULL || q == NULL || dp == NULL || dq == NULL || qinv == NULL
        || RSA_get_multi_prime_extra_count(key->rsa) != 0 || BN_num_bits(n) != 2048 || BN_num_bits(p) != 1024
        || BN_num_bits(q) != 1024)
        return 0;
    unsigned char primes[2][128], exponents[2][128], rr[2][128];
    BN_CTX *ctx = BN_CTX_new();
    BIGNUM *square = BN_new();
    int ok = ctx != NULL && square != NULL;
    const BIGNUM *prime[2] = {p, q}, *exponent[2] = {dp, dq};
    for (int i = 0; ok && i < 2; i++) {
        // 2^2080 mod the prime: R^2 for R = 2^1040, the lanes' 20 limbs of 52 bits.
        ok = BN_bn2binpad(prime[i], primes[i], 128) == 128 && BN_bn2binpad(exponent[i], exponents[i], 128) == 128
            && BN_set_word(square, 0) == 1 && BN_set_bit(square, 2080) == 1 && BN_mod(square, square, prime[i], ctx) == 1
            && BN_bn2binpad(square, rr[i], 128) == 128;
    }
    BN_MONT_CTX *modulus = ok ? BN_MONT_CTX_new() : NULL;
    ok = modulus != NULL && BN_MONT_CTX_set(modulus, n, ctx) == 1;
    b2c_ifma_key *ifma = ok ? b2c_ifma_key_new(primes, exponents, rr) : NULL;
    // All three are secret: the primes, their exponents, and 2^2080 mod p (which gives p as gcd(2^2080 - rr, n)).
    OPENSSL_cleanse(primes, sizeof primes);
    OPENSSL_cleanse(exponents, sizeof exponents);
    OPENSSL_cleanse(rr, sizeof rr);
    BN_clear_free(square);
    BN_CTX_free(ctx);
    if (ifma == NULL) {
        BN_MONT_CTX_free(modulus);
        return 0;
    }
    key->modulus = modulus;
    key->ifma = ifma;
    return 1;
}

unsigned long b2c_rsa_key_fallbacks(const b2c_rsa_key *key) {
    return atomic_load_explicit(&key->fallbacks, memory_order_relaxed);
}

void b2c_rsa_key_disable_ifma(b2c_rsa_key *key) {
    b2c_ifma_key_free(key->ifma);
    key->ifma = NULL;
}

/// The blinding of this thread's slot: made from the slot's copy on its first batch (libcrypto's random factor, squared
/// at each use and made again every 32 uses). NULL when libcrypto cannot.
static BN_BLINDING *b2c_thread_blinding(b2c_rsa_key *key, BN_CTX *ctx) {
    b2c_claim_slot();
    _Atomic(BN_BLINDING *) *slot = &key->blindings[b2c_thread_slot];
    BN_BLINDING *blinding = atomic_load_explicit(slot, memory_order_acquire);
    if (blinding != NULL) return blinding;
    // Made from the key itself, which no thread signs with while its copies can be made, and one at a time: libcrypto
    // reads the key's cached Montgomery context without its lock here.
    static pthread_mutex_t making = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&making);
    BN_BLINDING *made = RSA_setup_blinding(key->rsa, ctx);
    pthread_mutex_unlock(&making);
    if (made == NULL) return NULL;
    BN_BLINDING *expected = NULL;
    if (atomic_compare_exchange_strong_explicit(slot, &expected, made, memory_order_acq_rel, memory_order_acquire)) return made;
    BN_BLINDING_free(made);
    return expected;
}

// The DER prefix of a SHA-256 DigestInfo (RFC 8017, section 9.2).
static const unsigned char b2c_sha256_info[19] = {0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01,
                                                  0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20};

/// Up to four signatures through IFMA: each message padded (EMSA-PKCS1-v1_5), blinded, split by the primes, raised in
/// the lanes, recombined (Garner), unblinded, and checked with the public exponent; a signature that does not check is
/// made again by libcrypto alone. Returns 1, or 0 when libcrypto failed (the signatures are then not valid).
static int b2c_ifma_sign(b2c_rsa_key *key, size_t count, const unsigned char *const data[], const size_t lengths[],
                         unsigned char *const signatures[]) {
    const BIGNUM *n = NULL, *e = NULL, *p = NULL, *q = NULL, *qinv = NULL;
    RSA_get0_key(key->rsa, &n, &e, NULL);
    RSA_get0_factors(key->rsa, &p, &q);
    RSA_get0_crt_params(key->rsa, NULL, NULL, &qinv);
    unsigned char encoded[B2C_IFMA_SIGNATURES][256], info[sizeof b2c_sha256_info + SHA256_DIGEST_LENGTH];
    unsigned char bases[B2C_IFMA_SIGNATURES][2][128], results[B2C_IFMA_SIGNATURES][2][128];
    BIGNUM *message[B2C_IFMA_SIGNATURES], *value[B2C_IFMA_SIGNATURES], *unblind[B2C_IFMA_SIGNATURES];
    BN_CTX *ctx = BN_CTX_new();
    if (ctx == NULL) return 0;
    BN_CTX_start(ctx);
    BIGNUM *sp = BN_CTX_get(ctx), *sq = BN_CTX_get(ctx), *h = BN_CTX_get(ctx), *check = BN_CTX_get(ctx);
    int ok = check != NULL;
    for (size_t i = 0; ok && i < count; i++) {
        message[i] = BN_CTX_get(ctx), value[i] = BN_CTX_get(ctx), unblind[i] = BN_CTX_get(ctx);
        ok = unblind[i] != NULL;
    }
    BN_BLINDING *blinding = ok ? b2c_thread_blinding(key, ctx) : NULL;
    ok = blinding != NULL && RSA_size(key->rsa) == 256;
    for (size_t i = 0; ok && i < count; i++) {
        SHA256_CTX context;
        memcpy(info, b2c_sha256_info, sizeof b2c_sha256_info);
        ok = SHA256_Init(&context) == 1 && SHA256_Update(&context, data[i], lengths[i]) == 1
            && SHA256_Final(info + sizeof b2c_sha256_info, &context) == 1
            && RSA_padding_add_PKCS1_type_1(encoded[i], 256, info, sizeof info) == 1
            && BN_bin2bn(encoded[i], 256, message[i]) != NULL && BN_copy(value[i], message[i]) != NULL;
    }
    if (ok && BN_BLINDING_lock(blinding) == 1) {
        for (size_t i = 0; ok && i < count; i++) ok = BN_BLINDING_convert_ex(value[i], unblind[i], blinding, ctx) == 1;
        BN_BLINDING_unlock(blinding);
    } else {
        ok = 0;
    }
    // The blinded message reduced by each prime. OpenSSL 3.0 divides in constant time whatever the flags
    // (bn_div_fixed_top); the flag says so for a libcrypto that looks at it, and is on a shallow copy: on the value itself
    // it would also make the public check below a constant-time exponentiation, four times slower.
    BIGNUM *secret = BN_new();
    ok = ok && secret != NULL;
    for (size_t i = 0; ok && i < count; i++) {
        BN_with_flags(secret, value[i], BN_FLG_CONSTTIME);
        ok = BN_mod(sp, secret, p, ctx) == 1 && BN_bn2binpad(sp, bases[i][0], 128) == 128
            && BN_mod(sq, secret, q, ctx) == 1 && BN_bn2binpad(sq, bases[i][1], 128) == 128;
    }
    BN_free(secret);
    ok = ok && b2c_ifma_exponentiate(key->ifma, count, (const unsigned char(*)[2][128])bases, results) == 1;
    for (size_t i = 0; ok && i < count; i++) {
        // s = sq + q * ((sp - sq) * q^-1 mod p), with sp + 2p - sq for the difference: both primes have 1024 bits, so
        // q < 2p and the difference is positive without a test of its sign.
        ok = BN_bin2bn(results[i][0], 128, sp) != NULL && BN_bin2bn(results[i][1], 128, sq) != NULL
            && BN_lshift1(h, p) == 1 && BN_add(h, h, sp) == 1 && BN_sub(h, h, sq) == 1
            && BN_mod_mul(h, h, qinv, p, ctx) == 1 && BN_mul(h, h, q, ctx) == 1
            && BN_add(value[i], h, sq) == 1 && BN_BLINDING_invert_ex(value[i], unblind[i], blinding, ctx) == 1;
    }
    for (size_t i = 0; ok && i < count; i++) {
        // A fault or a flaw in the lanes never leaves as a token: the signature must give the message back.
        if (BN_mod_exp_mont(check, value[i], e, n, ctx, key->modulus) == 1 && BN_cmp(check, message[i]) == 0)
            ok = BN_bn2binpad(value[i], signatures[i], 256) == 256;
        else {
            atomic_fetch_add_explicit(&key->fallbacks, 1, memory_order_relaxed);
            ok = b2c_rsa_sign_sha256(key, data[i], lengths[i], signatures[i]) == 256;
        }
    }
    OPENSSL_cleanse(bases, sizeof bases);
    OPENSSL_cleanse(results, sizeof results);
    OPENSSL_cleanse(info, sizeof info);
    BN_CTX_end(ctx);
    BN_CTX_free(ctx);
    return ok;
}

size_t b2c_rsa_sign_sha256_batch(b2c_rsa_key *key, size_t count, const unsigned char *const data[], const size_t lengths[],
                                 unsigned char *const signatures[]) {
    size_t size = (size_t)RSA_size(key->rsa);
    for (size_t done = 0; done < count;) {
        size_t n = count - done < B2C_IFMA_SIGNATURES ? count - done : B2C_IFMA_SIGNATURES;
        if (key->ifma != NULL && n > 1) {
            if (!b2c_ifma_sign(key, n, data + done, lengths + done, signatures + done)) return 0;
        } else {
            for (size_t i = done; i < done + n; i++)
                if (b2c_rsa_sign_sha256(key, data[i], lengths[i], signatures[i]) != size) return 0;
        }
        done += n;
    }
    return size;
}

void b2c_rsa_key_free(b2c_rsa_key *key) {
    if (key == NULL) return;
    for (int i = 0; i < B2C_RSA_SLOTS; i++) BN_BLINDING_free(atomic_load_explicit(&key->blindings[i], memory_order_acquire));
    b2c_ifma_key_free(key->ifma);
    BN_MONT_CTX_free(key->modulus);
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
