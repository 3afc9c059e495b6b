// RSA-2048 private operations four 1024-bit exponentiations at a time with AVX2: one per 64-bit lane of a 256-bit
// register, the two primes of up to two signatures side by side. For processors without AVX-512 IFMA (rsa_ifma.c),
// where OpenSSL signs one signature at a time with 64-bit MULX: AVX2's 32-bit multiplications (VPMULUDQ) do four
// products an instruction, so limbs of 28 bits, twice as many products as MULX's 64-bit limbs would need, still leave
// a pass cheaper than its signatures made alone on the processors measured (bench/README.md, "AVX2 lanes"). Whether it
// is on this processor is measured at load (token_signing.c, RS256Signer).
//
// Constant time with respect to the private exponents, as rsa_ifma.c: a fixed window of 5 bits, every window reads all
// 32 entries of the table and keeps one with a mask, no branch and no address depends on a secret. The message is
// blinded before and every signature checked with the public key after (token_signing.c).
#include "rsa_lanes.h"

#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>

// 37 limbs of 28 bits: 1036 bits, so R = 2^1036 > 4p and Montgomery's product of two numbers below 2p stays below 2p
// without a final subtraction. A limb's product has 56 bits, and a place of the accumulator takes at most 74 of them
// (a limb of a times b's, and of the prime times the reduction's), below 2^63: no carry is needed until the end.
enum { RADIX = 28, LIMBS = 37, LANES = 4, TABLE = 1 << B2C_LANES_WINDOW };
#define MASK28 ((1ULL << RADIX) - 1)
#define AVX2 __attribute__((target("avx2")))

/// A number of each lane: limb j of lane l is lane l of v[j].
typedef struct {
    __m256i v[LIMBS];
} lanes;

typedef struct {
    lanes modulus;  // p, q, p, q: the lanes of signature i are 2i (p) and 2i + 1 (q)
    lanes rr;       // 2^2072 mod each lane's prime: into the Montgomery domain
    __m256i k0;     // -prime^-1 mod 2^28
    uint64_t exponent[LANES][17];  // dp, dq, dp, dq: little-endian words, the last one zero
} b2c_avx2_key;

#define MUL(x, y) _mm256_mul_epu32(x, y)
#define ADD(x, y) _mm256_add_epi64(x, y)

/// r = a * b / 2^1036 mod each lane's prime, almost: below twice the prime when a and b are. Montgomery's product two
/// limbs of b at a time: the reductions of both limbs are found first (the second needs the first's carry), then one
/// sweep adds both limbs' products and reductions to the accumulator and moves it down two places, so the accumulator
/// is read and written once for every two limbs (a sweep for each limb was a third slower).
AVX2 static void multiply(lanes *r, const lanes *a, const lanes *b, const b2c_avx2_key *key) {
    const __m256i mask = _mm256_set1_epi64x((long long)MASK28), zero = _mm256_setzero_si256(), k0 = key->k0;
    const __m256i *A = a->v, *N = key->modulus.v;
    __m256i acc[LIMBS + 1];
    for (int j = 0; j <= LIMBS; j++) acc[j] = zero;
    for (int i = 0; i + 1 < LIMBS; i += 2) {
        __m256i b0 = b->v[i], b1 = b->v[i + 1];
        __m256i t = ADD(acc[0], MUL(A[0], b0));
        __m256i m0 = _mm256_and_si256(MUL(t, k0), mask);
        t = ADD(t, MUL(N[0], m0));
        t = ADD(ADD(acc[1], _mm256_srli_epi64(t, RADIX)), ADD(MUL(A[1], b0), MUL(N[1], m0)));
        t = ADD(t, MUL(A[0], b1));
        __m256i m1 = _mm256_and_si256(MUL(t, k0), mask);
        t = ADD(t, MUL(N[0], m1));
        __m256i carry = _mm256_srli_epi64(t, RADIX);
        B2C_UNROLL for (int j = 2; j < LIMBS; j++) {
            __m256i sum = ADD(ADD(MUL(A[j], b0), MUL(N[j], m0)), ADD(MUL(A[j - 1], b1), MUL(N[j - 1], m1)));
            acc[j - 2] = ADD(acc[j], j == 2 ? ADD(sum, carry) : sum);
        }
        acc[LIMBS - 2] = ADD(MUL(A[LIMBS - 1], b1), MUL(N[LIMBS - 1], m1));
        acc[LIMBS - 1] = zero;
    }
    // The last limb (37 is odd) alone.
    __m256i bl = b->v[LIMBS - 1];
    __m256i t = ADD(acc[0], MUL(A[0], bl));
    __m256i m = _mm256_and_si256(MUL(t, k0), mask);
    t = ADD(t, MUL(N[0], m));
    __m256i carry = _mm256_srli_epi64(t, RADIX);
    B2C_UNROLL for (int j = 1; j < LIMBS; j++) {
        acc[j - 1] = ADD(acc[j], ADD(ADD(MUL(A[j], bl), MUL(N[j], m)), carry));
        carry = zero;
    }
    acc[LIMBS - 1] = zero;
    // The sum, each place up to 63 bits, carried into 28-bit limbs. It is below twice the prime: the top limb takes the
    // last carry.
    carry = zero;
    B2C_UNROLL for (int j = 0; j < LIMBS; j++) {
        __m256i v = ADD(acc[j], carry);
        carry = _mm256_srli_epi64(v, RADIX);
        r->v[j] = j == LIMBS - 1 ? v : _mm256_and_si256(v, mask);
    }
}

/// r = a * a / 2^1036 mod each lane's prime, almost (as `multiply`, two rows a sweep): each product of two different
/// limbs is made once, by the lower limb's row, with the other limb doubled (29 bits, within VPMULUDQ's 32), so a
/// square makes 703 products of limbs where `multiply` makes 1,369. Rows i and i + 1 add to place j of their sweep (in
/// row i's frame) a_i^2 at i, a_i 2a_j above it, a_(i+1)^2 at i + 2 and a_(i+1) 2a_(j-1) above that, and nothing below:
/// the sweep runs in those stretches. A place takes at most 19 products of its rows (18 doubled, of 57 bits) and
/// 37 of the reduction's (56 bits): below 2^63.
AVX2 static void square(lanes *r, const lanes *a, const b2c_avx2_key *key) {
    const __m256i mask = _mm256_set1_epi64x((long long)MASK28), zero = _mm256_setzero_si256(), k0 = key->k0;
    const __m256i *A = a->v, *N = key->modulus.v;
    __m256i D[LIMBS], acc[LIMBS + 1];
    B2C_UNROLL for (int j = 0; j < LIMBS; j++) D[j] = ADD(A[j], A[j]), acc[j] = zero;
    acc[LIMBS] = zero;
    for (int i = 0; i + 1 < LIMBS; i += 2) {
        __m256i b0 = A[i], b1 = A[i + 1];
        // Places 0 and 1 hold row products only in the first sweep (a_0^2 and a_0 2a_1).
        __m256i t = i == 0 ? ADD(acc[0], MUL(A[0], b0)) : acc[0];
        __m256i m0 = _mm256_and_si256(MUL(t, k0), mask);
        t = ADD(t, MUL(N[0], m0));
        t = ADD(ADD(acc[1], _mm256_srli_epi64(t, RADIX)), i == 0 ? ADD(MUL(D[1], b0), MUL(N[1], m0)) : MUL(N[1], m0));
        __m256i m1 = _mm256_and_si256(MUL(t, k0), mask);
        t = ADD(t, MUL(N[0], m1));
        acc[2] = ADD(acc[2], _mm256_srli_epi64(t, RADIX));
        int j = 2;
        for (; j < i; j++) acc[j - 2] = ADD(acc[j], ADD(MUL(N[j], m0), MUL(N[j - 1], m1)));
        if (i >= 2) {
            acc[i - 2] = ADD(acc[i], ADD(ADD(MUL(A[i], b0), MUL(N[i], m0)), MUL(N[i - 1], m1)));
            acc[i - 1] = ADD(acc[i + 1], ADD(ADD(MUL(D[i + 1], b0), MUL(N[i + 1], m0)), MUL(N[i], m1)));
            j = i + 2;
        }
        // Place i + 2 (row i + 1's square), then both rows' doubled products.
        if (j == i + 2 && j < LIMBS) {
            acc[j - 2] = ADD(acc[j], ADD(ADD(MUL(D[j], b0), MUL(N[j], m0)), ADD(MUL(A[i + 1], b1), MUL(N[j - 1], m1))));
            j++;
        }
        for (; j < LIMBS; j++)
            acc[j - 2] = ADD(acc[j], ADD(ADD(MUL(D[j], b0), MUL(N[j], m0)), ADD(MUL(D[j - 1], b1), MUL(N[j - 1], m1))));
        acc[LIMBS - 2] = ADD(MUL(D[LIMBS - 1], b1), MUL(N[LIMBS - 1], m1));
        acc[LIMBS - 1] = zero;
    }
    // The last row (37 is odd) alone: its only product is a_36^2.
    __m256i bl = A[LIMBS - 1];
    __m256i m = _mm256_and_si256(MUL(acc[0], k0), mask);
    __m256i carry = _mm256_srli_epi64(ADD(acc[0], MUL(N[0], m)), RADIX);
    B2C_UNROLL for (int j = 1; j < LIMBS; j++) {
        __m256i row = j == LIMBS - 1 ? MUL(A[LIMBS - 1], bl) : zero;
        acc[j - 1] = ADD(acc[j], ADD(ADD(row, MUL(N[j], m)), carry));
        carry = zero;
    }
    acc[LIMBS - 1] = zero;
    carry = zero;
    B2C_UNROLL for (int j = 0; j < LIMBS; j++) {
        __m256i v = ADD(acc[j], carry);
        carry = _mm256_srli_epi64(v, RADIX);
        r->v[j] = j == LIMBS - 1 ? v : _mm256_and_si256(v, mask);
    }
}

/// The entry of each lane's digit, reading every entry (the digits are secret).
AVX2 static void select_entry(lanes *out, const lanes *table, __m256i digits) {
    for (int j = 0; j < LIMBS; j++) out->v[j] = _mm256_setzero_si256();
    for (int k = 0; k < TABLE; k++) {
        __m256i hit = _mm256_cmpeq_epi64(digits, _mm256_set1_epi64x(k));
        for (int j = 0; j < LIMBS; j++) out->v[j] = _mm256_or_si256(out->v[j], _mm256_and_si256(hit, table[k].v[j]));
    }
}

AVX2 static void pack(lanes *x, const uint64_t limbs[LANES][LIMBS]) {
    for (int j = 0; j < LIMBS; j++)
        x->v[j] = _mm256_setr_epi64x((long long)limbs[0][j], (long long)limbs[1][j], (long long)limbs[2][j], (long long)limbs[3][j]);
}

AVX2 static void unpack(uint64_t limbs[LANES][LIMBS], const lanes *x) {
    for (int j = 0; j < LIMBS; j++) {
        uint64_t column[LANES];
        _mm256_storeu_si256((__m256i *)column, x->v[j]);
        for (int l = 0; l < LANES; l++) limbs[l][j] = column[l];
    }
}

static int available(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
}

AVX2 static void lay_out(b2c_avx2_key *key, const unsigned char primes[2][128], const unsigned char exponents[2][128],
                         const unsigned char rr[2][128]) {
    uint64_t modulus[LANES][LIMBS], squares[LANES][LIMBS], k0[LANES];
    b2c_lanes_key_limbs(&modulus[0][0], &squares[0][0], k0, key->exponent, LANES, LIMBS, RADIX, primes, exponents, rr);
    pack(&key->modulus, modulus);
    pack(&key->rr, squares);
    key->k0 = _mm256_loadu_si256((const __m256i *)k0);
    OPENSSL_cleanse(modulus, sizeof modulus);
    OPENSSL_cleanse(squares, sizeof squares);
    OPENSSL_cleanse(k0, sizeof k0);
}

static void *make(const unsigned char primes[2][128], const unsigned char exponents[2][128], const unsigned char rr[2][128]) {
    if (!available()) return NULL;  // before any instruction of AVX2 runs
    b2c_avx2_key *key = aligned_alloc(32, sizeof *key);
    if (key == NULL) return NULL;
    lay_out(key, primes, exponents, rr);
    return key;
}

AVX2 static void exponentiate(lanes *r, const lanes *base, const b2c_avx2_key *key) {
    lanes table[TABLE] __attribute__((aligned(32))), accumulator, entry, one;
    uint64_t ones[LANES][LIMBS] = {{0}}, digits[LANES];
    for (int l = 0; l < LANES; l++) ones[l][0] = 1;
    pack(&one, ones);
    multiply(&table[0], &key->rr, &one, key);  // 1 in the Montgomery domain
    multiply(&table[1], base, &key->rr, key);
    for (int k = 2; k < TABLE; k++) multiply(&table[k], &table[k - 1], &table[1], key);
    // 1024 bits: the top window has 4 (bits 1020-1023), then 204 of 5.
    for (int l = 0; l < LANES; l++) digits[l] = key->exponent[l][15] >> 60;
    select_entry(&accumulator, table, _mm256_loadu_si256((const __m256i *)digits));
    for (int bit = 1015; bit >= 0; bit -= B2C_LANES_WINDOW) {
        for (int s = 0; s < B2C_LANES_WINDOW; s++) square(&accumulator, &accumulator, key);
        b2c_lanes_window(digits, LANES, key->exponent, bit);
        select_entry(&entry, table, _mm256_loadu_si256((const __m256i *)digits));
        multiply(&accumulator, &accumulator, &entry, key);
    }
    multiply(r, &accumulator, &one, key);  // out of the Montgomery domain: at most the prime
    // The prime itself (a base of 0) becomes 0: r - p where that borrows nothing, without a branch.
    const __m256i mask = _mm256_set1_epi64x((long long)MASK28);
    __m256i borrow = _mm256_setzero_si256();
    for (int j = 0; j < LIMBS; j++) {
        __m256i v = _mm256_sub_epi64(_mm256_sub_epi64(r->v[j], key->modulus.v[j]), borrow);
        borrow = _mm256_srli_epi64(v, 63);
        entry.v[j] = _mm256_and_si256(v, mask);
    }
    // Lanes whose result was below the prime (a borrow out of the top) keep it.
    __m256i below = _mm256_cmpeq_epi64(borrow, _mm256_set1_epi64x(1));
    for (int j = 0; j < LIMBS; j++) r->v[j] = _mm256_blendv_epi8(entry.v[j], r->v[j], below);
    OPENSSL_cleanse(table, sizeof table);
    OPENSSL_cleanse(digits, sizeof digits);
    OPENSSL_cleanse(&accumulator, sizeof accumulator);
    OPENSSL_cleanse(&entry, sizeof entry);
}

static int exponentiate_bytes(const void *opaque, size_t count, const unsigned char (*const bases)[2][128],
                              unsigned char (*const results)[2][128]) {
    const b2c_avx2_key *key = opaque;
    if (count == 0 || count > LANES / 2) return 0;
    uint64_t limbs[LANES][LIMBS], result[LANES][LIMBS];
    b2c_lanes_base_limbs(&limbs[0][0], LANES, LIMBS, RADIX, count, bases);
    lanes base, r;
    pack(&base, limbs);
    exponentiate(&r, &base, key);
    unpack(result, &r);
    b2c_lanes_result_bytes(results, count, &result[0][0], LIMBS, RADIX);
    OPENSSL_cleanse(limbs, sizeof limbs);
    OPENSSL_cleanse(result, sizeof result);
    OPENSSL_cleanse(&base, sizeof base);
    OPENSSL_cleanse(&r, sizeof r);
    return 1;
}

static void release(void *key) {
    if (key == NULL) return;
    OPENSSL_cleanse(key, sizeof(b2c_avx2_key));
    free(key);
}

const b2c_lanes_engine b2c_lanes_avx2 = {"avx2", LANES / 2, 2 * RADIX * LIMBS, available, make, exponentiate_bytes, release};

#else

const b2c_lanes_engine b2c_lanes_avx2 = {"avx2", 2, 2072, b2c_lanes_unavailable, NULL, NULL, NULL};

#endif
