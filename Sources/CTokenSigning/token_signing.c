#define OPENSSL_SUPPRESS_DEPRECATED
#include "token_signing.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/rsa.h>
#include <openssl/sha.h>
#include <limits.h>
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
    for (int i = 0; i < B2C_RSA_SLOTS; i++) atomic_init(&key->copies[i], NULL);
    return key;
}

size_t b2c_rsa_key_size(const b2c_rsa_key *key) { return (size_t)RSA_size(key->rsa); }

/// The copy this thread signs with: made on the thread's first signature with the key; the key itself if libcrypto
/// cannot copy it.
static RSA *b2c_thread_copy(b2c_rsa_key *key) {
    if (!b2c_thread_has_slot) {
        b2c_thread_slot = atomic_fetch_add_explicit(&b2c_next_thread, 1, memory_order_relaxed) % B2C_RSA_SLOTS;
        b2c_thread_has_slot = 1;
    }
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

void b2c_rsa_key_free(b2c_rsa_key *key) {
    if (key == NULL) return;
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
