// What the two lane engines (rsa_ifma.c, rsa_avx2.c) share: each raises the two halves of up to a few RSA-2048
// signatures to their CRT exponents side by side, one 1024-bit exponentiation per 64-bit lane, and reads and writes its
// numbers in the same way. Internal to CTokenSigning; token_signing.c pads, blinds, recombines and checks.
#ifndef B2C_RSA_LANES_H
#define B2C_RSA_LANES_H

#include <openssl/crypto.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/// The most signatures a pass of any engine makes (IFMA's four), so that callers can size their arrays once.
enum { B2C_LANES_MOST_SIGNATURES = 4, B2C_LANES_WINDOW = 5 };

/// One engine: its signatures a pass (two lanes, p and q, each), R^2's power of two (R = 2^(bits of its limbs)), and
/// its calls. `make` takes the primes p and q, the exponents d mod (p-1) and d mod (q-1), and 2^rr_bits mod each prime,
/// each 128 bytes big-endian, and returns NULL without the processor's instructions or memory; `exponentiate` sets
/// results[i][0] = bases[i][0]^dp mod p and results[i][1] = bases[i][1]^dq mod q for i < count, each base below its prime.
typedef struct {
    const char *name;
    int signatures, rr_bits;
    int (*available)(void);
    void *(*make)(const unsigned char primes[2][128], const unsigned char exponents[2][128], const unsigned char rr[2][128]);
    int (*exponentiate)(const void *key, size_t count, const unsigned char (*const bases)[2][128],
                        unsigned char (*const results)[2][128]);
    void (*release)(void *key);
} b2c_lanes_engine;

extern const b2c_lanes_engine b2c_lanes_ifma, b2c_lanes_avx2;

/// A loop the compiler unrolls in full (clang, which the package manager compiles C with), so that the indexes of the
/// engines' registers and limbs are constants.
#if defined(__clang__)
#define B2C_UNROLL _Pragma("clang loop unroll(full)")
#else
#define B2C_UNROLL
#endif

/// 1024 bits, big-endian (128 bytes), to little-endian words (16, and a 17th zero), and back.
static inline void b2c_lanes_words_of(uint64_t words[17], const unsigned char bytes[128]) {
    for (int i = 0; i < 16; i++) {
        uint64_t v = 0;
        for (int k = 0; k < 8; k++) v |= (uint64_t)bytes[127 - 8 * i - k] << (8 * k);
        words[i] = v;
    }
    words[16] = 0;
}

static inline void b2c_lanes_bytes_of(unsigned char bytes[128], const uint64_t words[17]) {
    for (int i = 0; i < 16; i++)
        for (int k = 0; k < 8; k++) bytes[127 - 8 * i - k] = (unsigned char)(words[i] >> (8 * k));
}

/// Words to `count` limbs of `radix` bits (count * radix at most 1088), and back; numbers below 2^1024.
static inline void b2c_lanes_to_limbs(uint64_t *limbs, int count, int radix, const uint64_t words[17]) {
    for (int j = 0; j < count; j++) {
        int bit = radix * j, word = bit / 64, shift = bit % 64;
        uint64_t v = word < 17 ? words[word] >> shift : 0;
        if (shift > 64 - radix && word + 1 < 17) v |= words[word + 1] << (64 - shift);
        limbs[j] = v & ((1ULL << radix) - 1);
    }
}

static inline void b2c_lanes_from_limbs(uint64_t words[17], const uint64_t *limbs, int count, int radix) {
    memset(words, 0, 17 * sizeof words[0]);
    for (int j = 0; j < count; j++) {
        int bit = radix * j, word = bit / 64, shift = bit % 64;
        if (word < 17) words[word] |= limbs[j] << shift;
        if (shift > 64 - radix && word + 1 < 17) words[word + 1] |= limbs[j] >> (64 - shift);
    }
}

/// The window of each of `lanes` exponents at `bit` (bits bit ... bit + 4). The position is public; the digits are not.
static inline void b2c_lanes_window(uint64_t *digits, int lanes, const uint64_t (*exponent)[17], int bit) {
    int word = bit / 64, shift = bit % 64;
    for (int l = 0; l < lanes; l++) {
        uint64_t v = exponent[l][word] >> shift;
        if (shift > 64 - B2C_LANES_WINDOW) v |= exponent[l][word + 1] << (64 - shift);
        digits[l] = v & ((1u << B2C_LANES_WINDOW) - 1);
    }
}

/// -m^-1 mod 2^64 for an odd m, by Newton's iteration (each step doubles the correct low bits).
static inline uint64_t b2c_lanes_negative_inverse(uint64_t m) {
    uint64_t inverse = m;
    for (int i = 0; i < 6; i++) inverse *= 2 - m * inverse;
    return 0 - inverse;
}

/// For an engine the compiler cannot build here (not x86-64): its `available` answers 0, so nothing else is called.
static inline int b2c_lanes_unavailable(void) { return 0; }

/// A key's numbers, lane by lane (lane l is `count` limbs from l * count; lanes alternate p and q): each prime, R^2 mod
/// it, -prime^-1 mod 2^radix, and the prime's exponent as words. The engine packs them into its registers.
static inline void b2c_lanes_key_limbs(uint64_t *modulus, uint64_t *squares, uint64_t *k0, uint64_t (*exponent)[17], int lanes,
                                       int count, int radix, const unsigned char primes[2][128],
                                       const unsigned char exponents[2][128], const unsigned char rr[2][128]) {
    uint64_t words[17];
    for (int l = 0; l < lanes; l++) {
        int which = l % 2;
        b2c_lanes_words_of(words, primes[which]);
        b2c_lanes_to_limbs(modulus + l * count, count, radix, words);
        k0[l] = b2c_lanes_negative_inverse(words[0]) & ((1ULL << radix) - 1);
        b2c_lanes_words_of(words, rr[which]);
        b2c_lanes_to_limbs(squares + l * count, count, radix, words);
        b2c_lanes_words_of(exponent[l], exponents[which]);
    }
    OPENSSL_cleanse(words, sizeof words);
}

/// The bases of `signatures` signatures, lane by lane as b2c_lanes_key_limbs lays them out. Lanes of signatures not
/// asked for repeat the first one's, so that every lane holds a number below its prime.
static inline void b2c_lanes_base_limbs(uint64_t *limbs, int lanes, int count, int radix, size_t signatures,
                                        const unsigned char (*const bases)[2][128]) {
    uint64_t words[17];
    for (int l = 0; l < lanes; l++) {
        size_t i = (size_t)l / 2 < signatures ? (size_t)l / 2 : 0;
        b2c_lanes_words_of(words, bases[i][l % 2]);
        b2c_lanes_to_limbs(limbs + l * count, count, radix, words);
    }
    OPENSSL_cleanse(words, sizeof words);
}

/// The results of `signatures` signatures from their lanes' limbs, 128 bytes big-endian each.
static inline void b2c_lanes_result_bytes(unsigned char (*const results)[2][128], size_t signatures, const uint64_t *limbs,
                                          int count, int radix) {
    uint64_t words[17];
    for (int l = 0; l < 2 * (int)signatures; l++) {
        b2c_lanes_from_limbs(words, limbs + l * count, count, radix);
        b2c_lanes_bytes_of(results[l / 2][l % 2], words);
    }
    OPENSSL_cleanse(words, sizeof words);
}

#endif
