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
/// `b2c_rsa_key_size` bytes): libcrypto's RSA_sign. Returns the signature's length, or 0 when libcrypto refuses. Blinded,
/// as OpenSSL's RSA keys are by default. Safe to call from several threads with the same key: a thread signs with the copy
/// of its slot (16 slots, given out in the order threads first sign; a copy is made on its slot's first signature and
/// freed with the key), so up to 16 threads each have one of their own and more share.
size_t b2c_rsa_sign_sha256(b2c_rsa_key *key, const unsigned char *data, size_t length, unsigned char *signature);

/// Which lanes `b2c_rsa_key_enable_lanes` may use: the fastest the processor has (AVX-512 IFMA, else AVX2), or one.
enum { B2C_LANES_BEST = 0, B2C_LANES_AVX2 = 1, B2C_LANES_IFMA = 2 };

/// Lets the key sign batches in lanes (b2c_rsa_sign_sha256_batch): returns the signatures one pass makes (4 with
/// AVX-512 IFMA, 2 with AVX2), or 0 when the processor has neither lanes chosen or the key is not RSA-2048 with two primes
/// of 1024 bits (it then signs one at a time). Call it before any thread signs with the key.
int b2c_rsa_key_enable_lanes(b2c_rsa_key *key, int choice);

/// The lanes the key signs batches in ("avx512ifma" or "avx2"), or NULL for none.
const char *b2c_rsa_key_lanes(const b2c_rsa_key *key);

/// Times the passes of the lanes made while `on` (thread CPU time, two clock readings a pass), and after each pass one of
/// libcrypto's pairs of exponentiations for one signature, so that both see the same load of the machine's other threads.
/// Turning it on forgets what was timed before. Call it before any other thread signs with the key, and turn it off
/// before they do.
void b2c_rsa_key_time_passes(b2c_rsa_key *key, int on);

/// What the least pass timed cost in the exponentiations of one signature made alone (the least of libcrypto's pairs
/// timed after the passes): a pass costs about as much whatever it holds, so a batch of `count` pays where `count` is above
/// this. 0 when the key has no lanes, no pass was timed, or libcrypto failed.
double b2c_rsa_key_pass_cost(const b2c_rsa_key *key);

/// `count` RS256 signatures, as `b2c_rsa_sign_sha256` makes them (the same bytes: PKCS#1 v1.5 is deterministic), of
/// `data[i]` (`lengths[i]` bytes) into `signatures[i]`. With lanes enabled, each group of two up to a pass's signatures
/// shares one pass of the lanes, blinded (a blinding per slot, as libcrypto's scheme) and checked with the public key
/// before it is given out; a single one, and any without lanes, is RSA_sign's. Returns the signatures' length, or 0 when
/// libcrypto refused (the signatures of the group that failed, and of those after it, are then not valid). Safe from
/// several threads with the same key, as b2c_rsa_sign_sha256.
size_t b2c_rsa_sign_sha256_batch(b2c_rsa_key *key, size_t count, const unsigned char *const data[], const size_t lengths[],
                                 unsigned char *const signatures[]);

/// How many signatures of batches did not check with the public key and were made again by RSA_sign: 0 unless the lanes
/// went wrong on this processor.
unsigned long b2c_rsa_key_fallbacks(const b2c_rsa_key *key);

/// Signs one at a time again (after a probe found the lanes wrong, or a pass does not pay). Call it before any thread
/// signs with the key.
void b2c_rsa_key_disable_lanes(b2c_rsa_key *key);

/// Frees the key, its copies and blindings (libcrypto clears their private numbers). No thread may be signing with it.
void b2c_rsa_key_free(b2c_rsa_key *key);

/// An AES-256-GCM key for the tenant's refresh tokens, used through libcrypto's EVP interface: AES-NI and carry-less
/// multiplication where the processor has them (the low-level `AES_encrypt` the client's store uses has no AES-NI path,
/// and a refresh grant opened and sealed a token with it in 112,000 instructions: bench/README.md). The key's schedule is
/// made once: a context holds it, and an operation only sets its nonce. Safe to use from several threads at once: each
/// operation takes a context of its own from the key's pool (or makes one), and gives it back.
typedef struct b2c_gcm_key b2c_gcm_key;

/// A key of 32 bytes; NULL when libcrypto has no AES-256-GCM.
b2c_gcm_key *b2c_gcm_key_new(const unsigned char key[32]);

/// Seals `length` bytes of `plaintext` into `ciphertext` (as long) and the 16-byte `tag`, with a 12-byte nonce and `aad`
/// authenticated. Returns 1, or 0 when libcrypto could not (the outputs are then not valid).
int b2c_gcm_seal(b2c_gcm_key *key, const unsigned char nonce[12], const unsigned char *aad, size_t aad_length,
                 const unsigned char *plaintext, size_t length, unsigned char *ciphertext, unsigned char tag[16]);

/// Opens `length` bytes of `ciphertext` into `plaintext`. Returns 1 when the tag matches (the plaintext is then valid),
/// 0 otherwise.
int b2c_gcm_open(b2c_gcm_key *key, const unsigned char nonce[12], const unsigned char *aad, size_t aad_length,
                 const unsigned char *ciphertext, size_t length, const unsigned char tag[16], unsigned char *plaintext);

/// Frees the key and its contexts (libcrypto clears them). No thread may be using it.
void b2c_gcm_key_free(b2c_gcm_key *key);

#endif
