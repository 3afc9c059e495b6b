// The tenant's one hot signature, RS256, through the system's libcrypto: OpenSSL's RSA signs as fast as swift-crypto's
// BoringSSL on the x86-64 machines measured and, where the processor has AVX-512 IFMA, more than twice as fast
// (bench/README.md, "Signing at the machine's limit"). Everything else the tenant signs stays with swift-crypto.
#ifndef B2C_TOKEN_SIGNING_H
#define B2C_TOKEN_SIGNING_H

#include <stddef.h>

/// An RSA private key held by libcrypto.
typedef struct b2c_rsa_key b2c_rsa_key;

/// Reads an RSA private key from its DER form (PKCS#1 or PKCS#8). Returns NULL when the bytes are not one.
b2c_rsa_key *b2c_rsa_key_from_der(const unsigned char *der, size_t length);

/// The key's signature length in bytes (its modulus's size).
size_t b2c_rsa_key_size(const b2c_rsa_key *key);

/// RSASSA-PKCS1-v1_5 with SHA-256 (JWS's RS256) of `length` bytes at `data`, into `signature` (at least
/// `b2c_rsa_key_size` bytes). Returns the signature's length, or 0 when libcrypto refuses. Blinded, as OpenSSL's RSA
/// keys are by default. Safe to call from several threads with the same key: a thread signs with the copy of its slot
/// (16 slots, given out in the order threads first sign; a copy is made on its slot's first signature and freed with the
/// key), so up to 16 threads each have one of their own and more share.
size_t b2c_rsa_sign_sha256(b2c_rsa_key *key, const unsigned char *data, size_t length, unsigned char *signature);

/// Frees the key and its copies (libcrypto clears their private numbers). No thread may be signing with it.
void b2c_rsa_key_free(b2c_rsa_key *key);

#endif
