// RSA-2048 private operations eight 1024-bit exponentiations at a time: one per 64-bit lane of an AVX-512 register,
// multiplied with IFMA (52-bit multiply-add), the two primes of up to four signatures side by side. OpenSSL's own IFMA
// code works on one signature at a time with 256-bit registers (its two primes in the halves); on a processor that
// issues 512-bit IFMA as fast as 256-bit (measured on an AMD EPYC of family 26: 7.4 G instructions/s either way), the
// same multiplications take a third of the time (bench/README.md, "Eight exponentiations at once").
//
// Constant time with respect to the private exponents: a fixed window of 5 bits, every window reads all 32 entries of
// the table and keeps one with a mask, no branch and no address depends on a secret. The message is blinded with
// libcrypto's blinding of the key before, and every signature is checked with the public key after (token_signing.c).
#include "rsa_lanes.h"

#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>

enum { LIMBS = 20, LANES = 8, WINDOW = 5, TABLE = 1 << WINDOW };
#define MASK52 ((1ULL << 52) - 1)
#define IFMA __attribute__((target("avx512f,avx512ifma")))

/// A number of each lane: limb j of lane l is lane l of v[j], 52 bits a limb, 1040 bits in all.
typedef struct {
    __m512i v[LIMBS];
} lanes;

typedef struct {
    lanes modulus;  // p, q, p, q, ...: the lanes of signature i are 2i (p) and 2i + 1 (q)
    lanes rr;       // 2^2080 mod each lane's prime: into the Montgomery domain
    __m512i k0;     // -prime^-1 mod 2^52
    uint64_t exponent[LANES][17];  // dp, dq, dp, ...: little-endian words, the last one zero
} b2c_ifma_key;

// One multiply-add of a limb of memory into an accumulator. Written as assembly with a memory operand so that the
// compiler keeps the 21 accumulators in registers and reads the operands from the cache: clang otherwise hoisted the
// operands into registers it did not have and spilled the accumulators to the stack (a third of the speed).
#define MADD_LO(acc, mem, x) __asm__("vpmadd52luq %2, %1, %0" : "+v"(acc) : "v"(x), "m"(mem))
#define MADD_HI(acc, mem, x) __asm__("vpmadd52huq %2, %1, %0" : "+v"(acc) : "v"(x), "m"(mem))

// Adds one limb of b times a, and the multiple of the modulus that clears the lowest accumulator, to the accumulators
// a0 ... a20 (the running sum from its lowest limb); carries a0's excess into a1. The next step starts at a1.
#define MUL_LIMB(i, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20) \
    do {                                                                                                            \
        __m512i bi = b->v[i];                                                                                        \
        MADD_LO(a0, a->v[0], bi);                                                                                    \
        __m512i m = _mm512_madd52lo_epu64(zero, a0, n->k0);                                                          \
        MADD_HI(a1, a->v[0], bi);                                                                                    \
        ROW(a->v, bi, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, 1); \
        ROW(n->modulus.v, m, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, 0); \
        a1 = _mm512_add_epi64(a1, _mm512_srli_epi64(a0, 52));                                                        \
    } while (0)

// x times the limbs of `row` into the accumulators, low halves at each limb's place and high halves one above; from
// limb `from` (1 when limb 0 was done first).
#define ROW(row, x, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, from) \
    do {                                                                                                                   \
        if (from == 0) { MADD_LO(a0, row[0], x); MADD_HI(a1, row[0], x); }                                                 \
        MADD_LO(a1, row[1], x); MADD_HI(a2, row[1], x); MADD_LO(a2, row[2], x); MADD_HI(a3, row[2], x);                     \
        MADD_LO(a3, row[3], x); MADD_HI(a4, row[3], x); MADD_LO(a4, row[4], x); MADD_HI(a5, row[4], x);                     \
        MADD_LO(a5, row[5], x); MADD_HI(a6, row[5], x); MADD_LO(a6, row[6], x); MADD_HI(a7, row[6], x);                     \
        MADD_LO(a7, row[7], x); MADD_HI(a8, row[7], x); MADD_LO(a8, row[8], x); MADD_HI(a9, row[8], x);                     \
        MADD_LO(a9, row[9], x); MADD_HI(a10, row[9], x); MADD_LO(a10, row[10], x); MADD_HI(a11, row[10], x);                \
        MADD_LO(a11, row[11], x); MADD_HI(a12, row[11], x); MADD_LO(a12, row[12], x); MADD_HI(a13, row[12], x);             \
        MADD_LO(a13, row[13], x); MADD_HI(a14, row[13], x); MADD_LO(a14, row[14], x); MADD_HI(a15, row[14], x);             \
        MADD_LO(a15, row[15], x); MADD_HI(a16, row[15], x); MADD_LO(a16, row[16], x); MADD_HI(a17, row[16], x);             \
        MADD_LO(a17, row[17], x); MADD_HI(a18, row[17], x); MADD_LO(a18, row[18], x); MADD_HI(a19, row[18], x);             \
        MADD_LO(a19, row[19], x); MADD_HI(a20, row[19], x);                                                                \
    } while (0)

/// r = a * b / 2^1040 mod each lane's prime, almost: below twice the prime when a and b are (Montgomery's product, one
/// limb of b at a time). The accumulators are named, not an array, each step starting one name higher, so that no value
/// moves between registers.
IFMA static inline __attribute__((always_inline)) void multiply(lanes *r, const lanes *a, const lanes *b, const b2c_ifma_key *n) {
    const __m512i zero = _mm512_setzero_si512();
    __m512i x0 = zero, x1 = zero, x2 = zero, x3 = zero, x4 = zero, x5 = zero, x6 = zero, x7 = zero, x8 = zero, x9 = zero,
            x10 = zero, x11 = zero, x12 = zero, x13 = zero, x14 = zero, x15 = zero, x16 = zero, x17 = zero, x18 = zero,
            x19 = zero, x20 = zero, x21 = zero, x22 = zero, x23 = zero, x24 = zero, x25 = zero, x26 = zero, x27 = zero,
            x28 = zero, x29 = zero, x30 = zero, x31 = zero, x32 = zero, x33 = zero, x34 = zero, x35 = zero, x36 = zero,
            x37 = zero, x38 = zero, x39 = zero;
    MUL_LIMB(0, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15, x16, x17, x18, x19, x20);
    MUL_LIMB(1, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15, x16, x17, x18, x19, x20, x21);
    MUL_LIMB(2, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15, x16, x17, x18, x19, x20, x21, x22);
    MUL_LIMB(3, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15, x16, x17, x18, x19, x20, x21, x22, x23);
    MUL_LIMB(4, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15, x16, x17, x18, x19, x20, x21, x22, x23, x24);
    MUL_LIMB(5, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15, x16, x17, x18, x19, x20, x21, x22, x23, x24, x25);
    MUL_LIMB(6, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15, x16, x17, x18, x19, x20, x21, x22, x23, x24, x25, x26);
    MUL_LIMB(7, x7, x8, x9, x10, x11, x12, x13, x14, x15, x16, x17, x18, x19, x20, x21, x22, x23, x24, x25, x26, x27);
    MUL_LIMB(8, x8, x9, x10, x11, x12, x13, x14, x15, x16, x17, x18, x19, x20, x21, x22, x23, x24, x25, x26, x27, x28);
    MUL_LIMB(9, x9, x10, x11, x12, x13, x14, x15, x16, x17, x18, x19, x20, x21, x22, x23, x24, x25, x26, x27, x28, x29);
    MUL_LIMB(10, x10, x11, x12, x13, x14, x15, x16, x17, x18, x19, x20, x21, x22, x23, x24, x25, x26, x27, x28, x29, x30);
    MUL_LIMB(11, x11, x12, x13, x14, x15, x16, x17, x18, x19, x20, x21, x22, x23, x24, x25, x26, x27, x28, x29, x30, x31);
    MUL_LIMB(12, x12, x13, x14, x15, x16, x17, x18, x19, x20, x21, x22, x23, x24, x25, x26, x27, x28, x29, x30, x31, x32);
    MUL_LIMB(13, x13, x14, x15, x16, x17, x18, x19, x20, x21, x22, x23, x24, x25, x26, x27, x28, x29, x30, x31, x32, x33);
    MUL_LIMB(14, x14, x15, x16, x17, x18, x19, x20, x21, x22, x23, x24, x25, x26, x27, x28, x29, x30, x31, x32, x33, x34);
    MUL_LIMB(15, x15, x16, x17, x18, x19, x20, x21, x22, x23, x24, x25, x26, x27, x28, x29, x30, x31, x32, x33, x34, x35);
    MUL_LIMB(16, x16, x17, x18, x19, x20, x21, x22, x23, x24, x25, x26, x27, x28, x29, x30, x31, x32, x33, x34, x35, x36);
    MUL_LIMB(17, x17, x18, x19, x20, x21, x22, x23, x24, x25, x26, x27, x28, x29, x30, x31, x32, x33, x34, x35, x36, x37);
    MUL_LIMB(18, x18, x19, x20, x21, x22, x23, x24, x25, x26, x27, x28, x29, x30, x31, x32, x33, x34, x35, x36, x37, x38);
    MUL_LIMB(19, x19, x20, x21, x22, x23, x24, x25, x26, x27, x28, x29, x30, x31, x32, x33, x34, x35, x36, x37, x38, x39);
    // The sum is x20 ... x39, each limb up to 59 bits: carried into 52-bit limbs. It is below twice the prime, so the
    // top limb takes the last carry without overflowing.
    const __m512i mask = _mm512_set1_epi64((long long)MASK52);
#define CARRY(j, low, high) (high = _mm512_add_epi64(high, _mm512_srli_epi64(low, 52)), r->v[j] = _mm512_and_si512(low, mask))
    CARRY(0, x20, x21), CARRY(1, x21, x22), CARRY(2, x22, x23), CARRY(3, x23, x24), CARRY(4, x24, x25);
    CARRY(5, x25, x26), CARRY(6, x26, x27), CARRY(7, x27, x28), CARRY(8, x28, x29), CARRY(9, x29, x30);
    CARRY(10, x30, x31), CARRY(11, x31, x32), CARRY(12, x32, x33), CARRY(13, x33, x34), CARRY(14, x34, x35);
    CARRY(15, x35, x36), CARRY(16, x36, x37), CARRY(17, x37, x38), CARRY(18, x38, x39);
#undef CARRY
    r->v[LIMBS - 1] = x39;
}

/// r = a * a / 2^1040 mod each lane's prime, almost (as `multiply`), a column of the product at a time: each product
/// of two different limbs is made once and doubled, which leaves 1,240 multiply-adds of `multiply`'s 1,620, and the
/// multiple of the prime that clears a column is added as the column is summed (Montgomery's reduction, interleaved).
/// A column's terms go to four sums in turn, so that no sum waits on the one before. A column holds at most 38 halves of
/// doubled products (19 products), one half of a square and 39 of the reduction's, each below 2^52, and a carry below
/// 2^8: below 2^59.
IFMA static inline __attribute__((always_inline)) void square(lanes *r, const lanes *a, const b2c_ifma_key *n) {
    const __m512i zero = _mm512_setzero_si512(), mask = _mm512_set1_epi64((long long)MASK52);
    __m512i m[LIMBS], out[LIMBS], carry = zero;  // out, not r: r is a, whose limbs later columns read
    B2C_UNROLL for (int k = 0; k < 2 * LIMBS; k++) {
        // Twice the products a_i a_j with i < j: low halves of those with i + j = k, high halves of those with i + j = k - 1.
        __m512i cross[4] = {zero, zero, zero, zero}, sum[4] = {zero, zero, zero, zero};
        int t = 0, u = 0;
        B2C_UNROLL for (int i = k > LIMBS - 1 ? k - (LIMBS - 1) : 0; 2 * i < k; i++) {
            __m512i ai = a->v[i];
            MADD_LO(cross[t & 3], a->v[k - i], ai);
            t++;
        }
        B2C_UNROLL for (int i = k - 1 > LIMBS - 1 ? k - 1 - (LIMBS - 1) : 0; 2 * i < k - 1; i++) {
            __m512i ai = a->v[i];
            MADD_HI(cross[t & 3], a->v[k - 1 - i], ai);
            t++;
        }
        // The squares of single limbs, and the multiples of the prime of the columns before.
        if (k % 2 == 0 && k / 2 < LIMBS) {
            __m512i ai = a->v[k / 2];
            MADD_LO(sum[1], a->v[k / 2], ai);
        }
        if (k % 2 == 1 && (k - 1) / 2 < LIMBS) {
            __m512i ai = a->v[(k - 1) / 2];
            MADD_HI(sum[2], a->v[(k - 1) / 2], ai);
        }
        B2C_UNROLL for (int i = k > LIMBS - 1 ? k - (LIMBS - 1) : 0; i < k && i < LIMBS; i++) {
            MADD_LO(sum[u & 3], n->modulus.v[k - i], m[i]);
            u++;
        }
        B2C_UNROLL for (int i = k - 1 > LIMBS - 1 ? k - 1 - (LIMBS - 1) : 0; i < k && i < LIMBS; i++) {
            MADD_HI(sum[u & 3], n->modulus.v[k - 1 - i], m[i]);
            u++;
        }
        __m512i doubled = _mm512_add_epi64(_mm512_add_epi64(cross[0], cross[1]), _mm512_add_epi64(cross[2], cross[3]));
        __m512i column = _mm512_add_epi64(_mm512_add_epi64(sum[0], sum[1]), _mm512_add_epi64(sum[2], sum[3]));
        column = _mm512_add_epi64(_mm512_add_epi64(column, carry), _mm512_add_epi64(doubled, doubled));
        if (k < LIMBS) {
            // The multiple of the prime that clears this column's low 52 bits; its high half joins the next column.
            m[k] = _mm512_madd52lo_epu64(zero, column, n->k0);
            MADD_LO(column, n->modulus.v[0], m[k]);
        } else if (k < 2 * LIMBS - 1) {
            out[k - LIMBS] = _mm512_and_si512(column, mask);
        } else {
            out[LIMBS - 1] = column;  // below twice the prime: the top limb takes the last carry
        }
        carry = _mm512_srli_epi64(column, 52);
    }
    for (int j = 0; j < LIMBS; j++) r->v[j] = out[j];
}

/// The entry of each lane's digit, reading every entry (the digits are secret).
IFMA static void select_entry(lanes *out, const lanes *table, __m512i digits) {
    for (int j = 0; j < LIMBS; j++) out->v[j] = _mm512_setzero_si512();
    for (int k = 0; k < TABLE; k++) {
        __mmask8 hit = _mm512_cmpeq_epi64_mask(digits, _mm512_set1_epi64(k));
        for (int j = 0; j < LIMBS; j++) out->v[j] = _mm512_mask_mov_epi64(out->v[j], hit, table[k].v[j]);
    }
}

IFMA static void pack(lanes *x, const uint64_t limbs[LANES][LIMBS]) {
    for (int j = 0; j < LIMBS; j++) {
        uint64_t column[LANES];
        for (int l = 0; l < LANES; l++) column[l] = limbs[l][j];
        x->v[j] = _mm512_loadu_si512(column);
    }
}

IFMA static void unpack(uint64_t limbs[LANES][LIMBS], const lanes *x) {
    for (int j = 0; j < LIMBS; j++) {
        uint64_t column[LANES];
        _mm512_storeu_si512(column, x->v[j]);
        for (int l = 0; l < LANES; l++) limbs[l][j] = column[l];
    }
}

static int available(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512ifma");
}

IFMA static void lay_out(b2c_ifma_key *key, const unsigned char primes[2][128], const unsigned char exponents[2][128],
                         const unsigned char rr[2][128]) {
    uint64_t modulus[LANES][LIMBS], squares[LANES][LIMBS], k0[LANES];
    b2c_lanes_key_limbs(&modulus[0][0], &squares[0][0], k0, key->exponent, LANES, LIMBS, 52, primes, exponents, rr);
    pack(&key->modulus, modulus);
    pack(&key->rr, squares);
    key->k0 = _mm512_loadu_si512(k0);
    OPENSSL_cleanse(modulus, sizeof modulus);
    OPENSSL_cleanse(squares, sizeof squares);
    OPENSSL_cleanse(k0, sizeof k0);
}

static void *make(const unsigned char primes[2][128], const unsigned char exponents[2][128], const unsigned char rr[2][128]) {
    if (!available()) return NULL;  // before any instruction of AVX-512 runs
    b2c_ifma_key *key = aligned_alloc(64, sizeof *key);
    if (key == NULL) return NULL;
    lay_out(key, primes, exponents, rr);
    return key;
}

IFMA static void exponentiate(lanes *r, const lanes *base, const b2c_ifma_key *key) {
    lanes table[TABLE] __attribute__((aligned(64))), accumulator, entry, one;
    uint64_t ones[LANES][LIMBS] = {{0}}, digits[LANES];
    for (int l = 0; l < LANES; l++) ones[l][0] = 1;
    pack(&one, ones);
    multiply(&table[0], &key->rr, &one, key);  // 1 in the Montgomery domain
    multiply(&table[1], base, &key->rr, key);
    for (int k = 2; k < TABLE; k++) multiply(&table[k], &table[k - 1], &table[1], key);
    // 1024 bits: the top window has 4 (bits 1020-1023), then 204 of 5.
    for (int l = 0; l < LANES; l++) digits[l] = key->exponent[l][15] >> 60;
    select_entry(&accumulator, table, _mm512_loadu_si512(digits));
    for (int bit = 1015; bit >= 0; bit -= WINDOW) {
        for (int s = 0; s < WINDOW; s++) square(&accumulator, &accumulator, key);
        b2c_lanes_window(digits, LANES, key->exponent, bit);
        select_entry(&entry, table, _mm512_loadu_si512(digits));
        multiply(&accumulator, &accumulator, &entry, key);
    }
    multiply(r, &accumulator, &one, key);  // out of the Montgomery domain: at most the prime
    // The prime itself (a base of 0) becomes 0: r - p where that borrows nothing, in the lanes and without a branch, so
    // that no copy of the primes is made outside the key.
    const __m512i mask = _mm512_set1_epi64((long long)MASK52);
    __m512i borrow = _mm512_setzero_si512();
    for (int j = 0; j < LIMBS; j++) {
        __m512i v = _mm512_sub_epi64(_mm512_sub_epi64(r->v[j], key->modulus.v[j]), borrow);
        borrow = _mm512_srli_epi64(v, 63);
        entry.v[j] = _mm512_and_si512(v, mask);
    }
    __mmask8 below = _mm512_test_epi64_mask(borrow, borrow);  // lanes whose result was below the prime keep it
    for (int j = 0; j < LIMBS; j++) r->v[j] = _mm512_mask_mov_epi64(entry.v[j], below, r->v[j]);
    OPENSSL_cleanse(table, sizeof table);
    OPENSSL_cleanse(digits, sizeof digits);
    OPENSSL_cleanse(&accumulator, sizeof accumulator);
    OPENSSL_cleanse(&entry, sizeof entry);
}

static int exponentiate_bytes(const void *opaque, size_t count, const unsigned char (*const bases)[2][128],
                              unsigned char (*const results)[2][128]) {
    const b2c_ifma_key *key = opaque;
    if (count == 0 || count > LANES / 2) return 0;
    uint64_t limbs[LANES][LIMBS], result[LANES][LIMBS];
    b2c_lanes_base_limbs(&limbs[0][0], LANES, LIMBS, 52, count, bases);
    lanes base, r;
    pack(&base, limbs);
    exponentiate(&r, &base, key);
    unpack(result, &r);
    b2c_lanes_result_bytes(results, count, &result[0][0], LIMBS, 52);
    OPENSSL_cleanse(limbs, sizeof limbs);
    OPENSSL_cleanse(result, sizeof result);
    OPENSSL_cleanse(&base, sizeof base);
    OPENSSL_cleanse(&r, sizeof r);
    return 1;
}

static void release(void *key) {
    if (key == NULL) return;
    OPENSSL_cleanse(key, sizeof(b2c_ifma_key));
    free(key);
}

const b2c_lanes_engine b2c_lanes_ifma = {"avx512ifma", LANES / 2, 2 * 52 * LIMBS, available, make, exponentiate_bytes, release};

#else

const b2c_lanes_engine b2c_lanes_ifma = {"avx512ifma", 4, 2080, b2c_lanes_unavailable, NULL, NULL, NULL};

#endif
