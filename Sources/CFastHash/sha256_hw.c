#include "fast_hash.h"

// FIPS 180-4's round constants, for these rounds and for the portable Swift ones.
static const uint32_t K[64] __attribute__((aligned(16))) = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

const uint32_t *lct_sha256_round_constants(void) { return K; }

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>

int lct_sha256_hw_available(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    int ssse3 = (c >> 9) & 1, sse41 = (c >> 19) & 1;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    int sha = (b >> 29) & 1;
    return ssse3 && sse41 && sha;
}


// The SHA instructions keep the eight working words in two registers, (A, B, E, F) and
// (C, D, G, H), and take the message four words at a time (one "quad" = four rounds): quads
// 0–3 are the block itself, each later one comes from the four before it through msg1/msg2.
__attribute__((target("sha,sse4.1,ssse3")))
void lct_sha256_hw_blocks(uint32_t state[8], const uint8_t *data, size_t blocks) {
    const __m128i byteswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i abcd = _mm_loadu_si128((const __m128i *)&state[0]);
    __m128i efgh = _mm_loadu_si128((const __m128i *)&state[4]);
    // Lanes (low to high): abcd = A B C D, efgh = E F G H. The instructions want
    // abef = F E B A and cdgh = H G D C.
    __m128i badc = _mm_shuffle_epi32(abcd, 0xB1);                  // B A D C
    __m128i hgfe = _mm_shuffle_epi32(efgh, 0x1B);                  // H G F E
    __m128i abef = _mm_alignr_epi8(badc, hgfe, 8);                 // F E B A
    __m128i cdgh = _mm_blend_epi16(hgfe, badc, 0xF0);              // H G D C

    for (size_t n = 0; n < blocks; n++, data += 64) {
        const __m128i abef0 = abef, cdgh0 = cdgh;
        __m128i w[4];
        for (int q = 0; q < 4; q++) w[q] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 16 * q)), byteswap);
        for (int q = 0; q < 16; q++) {
            if (q >= 4) {
                // W[t] = σ1(W[t-2]) + W[t-7] + σ0(W[t-15]) + W[t-16], four at a time.
                __m128i x = _mm_sha256msg1_epu32(w[q & 3], w[(q - 3) & 3]);
                x = _mm_add_epi32(x, _mm_alignr_epi8(w[(q - 1) & 3], w[(q - 2) & 3], 4));
                w[q & 3] = _mm_sha256msg2_epu32(x, w[(q - 1) & 3]);
            }
            __m128i wk = _mm_add_epi32(w[q & 3], _mm_load_si128((const __m128i *)&K[4 * q]));
            cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);              // two rounds: cdgh holds the new abef
            abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(wk, 0x0E));  // two more
        }
        abef = _mm_add_epi32(abef, abef0);
        cdgh = _mm_add_epi32(cdgh, cdgh0);
    }

    __m128i feba = _mm_shuffle_epi32(abef, 0x1B);                  // A B E F
    __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);                  // G H C D
    abcd = _mm_blend_epi16(feba, dchg, 0xF0);                      // A B C D
    efgh = _mm_alignr_epi8(dchg, feba, 8);                         // E F G H
    _mm_storeu_si128((__m128i *)&state[0], abcd);
    _mm_storeu_si128((__m128i *)&state[4], efgh);
}

#else

int lct_sha256_hw_available(void) { return 0; }
void lct_sha256_hw_blocks(uint32_t state[8], const uint8_t *data, size_t blocks) { (void)state; (void)data; (void)blocks; }

#endif
