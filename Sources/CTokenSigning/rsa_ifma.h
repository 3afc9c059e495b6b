// Eight 1024-bit exponentiations at once with AVX-512 IFMA (rsa_ifma.c): the private half of up to four RSA-2048
// signatures of one key. Internal to CTokenSigning; token_signing.c pads, blinds, recombines and checks.
#ifndef B2C_RSA_IFMA_H
#define B2C_RSA_IFMA_H

#include <stddef.h>
#include <stdint.h>

/// The signatures one call makes at most: two lanes (p and q) each.
enum { B2C_IFMA_SIGNATURES = 4 };

/// A key's primes, CRT exponents and Montgomery constants, laid out in the lanes.
typedef struct b2c_ifma_key b2c_ifma_key;

/// Whether the processor (and the system, for the 512-bit registers' state) has AVX-512 F and IFMA.
int b2c_ifma_available(void);

/// From the two 1024-bit primes p and q, the exponents d mod (p-1) and d mod (q-1), and 2^2080 mod each prime, each 128
/// bytes big-endian. NULL without IFMA or memory. Its private numbers are cleared when it is freed.
b2c_ifma_key *b2c_ifma_key_new(const unsigned char primes[2][128], const unsigned char exponents[2][128],
                               const unsigned char rr[2][128]);

/// results[i][0] = bases[i][0]^dp mod p and results[i][1] = bases[i][1]^dq mod q for i < count (1...4); each base below
/// its prime, 128 bytes big-endian. Returns 1, or 0 for a count out of range.
int b2c_ifma_exponentiate(const b2c_ifma_key *key, size_t count, const unsigned char (*const bases)[2][128],
                          unsigned char (*const results)[2][128]);

void b2c_ifma_key_free(b2c_ifma_key *key);

#endif
