#define OPENSSL_SUPPRESS_DEPRECATED
#include "token_signing.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/rsa.h>
#include <openssl/sha.h>

// The low-level RSA interface: measured here beside EVP_DigestSign, it is as fast and does not go through a provider
// lookup per signature (bench/README.md).

b2c_rsa_key *b2c_rsa_key_from_der(const unsigned char *der, size_t length) {
    const unsigned char *cursor = der;
    EVP_PKEY *pkey = d2i_AutoPrivateKey(NULL, &cursor, (long)length);
    if (pkey == NULL) return NULL;
    RSA *rsa = cursor == der + length ? EVP_PKEY_get1_RSA(pkey) : NULL;
    EVP_PKEY_free(pkey);
    return (b2c_rsa_key *)rsa;
}

size_t b2c_rsa_key_size(const b2c_rsa_key *key) { return (size_t)RSA_size((const RSA *)key); }

size_t b2c_rsa_sign_sha256(const b2c_rsa_key *key, const unsigned char *data, size_t length, unsigned char *signature) {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(data, length, digest);
    unsigned int written = 0;
    // RSA_sign takes a non-const key: blinding state is kept in it (under its own lock).
    int ok = RSA_sign(NID_sha256, digest, sizeof digest, signature, &written, (RSA *)key);
    OPENSSL_cleanse(digest, sizeof digest);
    return ok == 1 ? (size_t)written : 0;
}

void b2c_rsa_key_free(b2c_rsa_key *key) { RSA_free((RSA *)key); }
