// The primitives b2c's fast path needs from libcrypto, through its low-level interfaces: these do not start
// OpenSSL 3's provider and configuration machinery, which alone costs a token cache hit more than its database lookup.
#ifndef B2C_STORE_CRYPTO_H
#define B2C_STORE_CRYPTO_H

#include <stddef.h>

/// SHA-256 of `length` bytes at `data` into `digest` (32 bytes).
void b2c_sha256(const void *data, size_t length, unsigned char digest[32]);

/// AES-256-GCM opening with a 12-byte nonce and a 16-byte tag: `length` bytes of `ciphertext` into `plaintext`, with
/// `aad` authenticated. Returns 1 when the tag matches (the plaintext is then valid), 0 otherwise.
int b2c_aes256gcm_open(const unsigned char key[32], const unsigned char nonce[12], const unsigned char *aad, size_t aad_length,
                       const unsigned char *ciphertext, size_t length, const unsigned char tag[16], unsigned char *plaintext);

/// AES-256-GCM sealing, the same form: `length` bytes of `plaintext` into `ciphertext` (as long), the tag into `tag`, with
/// `aad` authenticated. Returns 1, or 0 when libcrypto could not (the outputs are then not valid).
int b2c_aes256gcm_seal(const unsigned char key[32], const unsigned char nonce[12], const unsigned char *aad, size_t aad_length,
                       const unsigned char *plaintext, size_t length, unsigned char *ciphertext, unsigned char tag[16]);

#endif
