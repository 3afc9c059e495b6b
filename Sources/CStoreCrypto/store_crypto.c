#define OPENSSL_SUPPRESS_DEPRECATED
#include "store_crypto.h"

#include <openssl/aes.h>
#include <openssl/crypto.h>
#include <openssl/modes.h>
#include <openssl/sha.h>

void b2c_sha256(const void *data, size_t length, unsigned char digest[32]) {
    SHA256_CTX context;
    SHA256_Init(&context);
    SHA256_Update(&context, data, length);
    SHA256_Final(digest, &context);
    OPENSSL_cleanse(&context, sizeof context);
}

/// A GCM context for `key` with `nonce` set and `aad` taken, its AES schedule in `schedule`; NULL when libcrypto cannot. The
/// caller releases the context and cleanses the schedule.
static GCM128_CONTEXT *b2c_gcm_start(const unsigned char key[32], const unsigned char nonce[12], const unsigned char *aad,
                                     size_t aad_length, AES_KEY *schedule) {
    if (AES_set_encrypt_key(key, 256, schedule) != 0) return NULL;
    GCM128_CONTEXT *gcm = CRYPTO_gcm128_new(schedule, (block128_f)AES_encrypt);
    if (gcm == NULL) return NULL;
    CRYPTO_gcm128_setiv(gcm, nonce, 12);
    if (CRYPTO_gcm128_aad(gcm, aad, aad_length) != 0) {
        CRYPTO_gcm128_release(gcm);
        return NULL;
    }
    return gcm;
}

int b2c_aes256gcm_open(const unsigned char key[32], const unsigned char nonce[12], const unsigned char *aad, size_t aad_length,
                       const unsigned char *ciphertext, size_t length, const unsigned char tag[16], unsigned char *plaintext) {
    AES_KEY schedule;
    GCM128_CONTEXT *gcm = b2c_gcm_start(key, nonce, aad, aad_length, &schedule);
    int ok = gcm != NULL && CRYPTO_gcm128_decrypt(gcm, ciphertext, plaintext, length) == 0 && CRYPTO_gcm128_finish(gcm, tag, 16) == 0;
    if (gcm != NULL) CRYPTO_gcm128_release(gcm);
    OPENSSL_cleanse(&schedule, sizeof schedule);
    return ok;
}

int b2c_aes256gcm_seal(const unsigned char key[32], const unsigned char nonce[12], const unsigned char *aad, size_t aad_length,
                       const unsigned char *plaintext, size_t length, unsigned char *ciphertext, unsigned char tag[16]) {
    AES_KEY schedule;
    GCM128_CONTEXT *gcm = b2c_gcm_start(key, nonce, aad, aad_length, &schedule);
    int ok = gcm != NULL && CRYPTO_gcm128_encrypt(gcm, plaintext, ciphertext, length) == 0;
    if (ok) CRYPTO_gcm128_tag(gcm, tag, 16);
    if (gcm != NULL) CRYPTO_gcm128_release(gcm);
    OPENSSL_cleanse(&schedule, sizeof schedule);
    return ok;
}
