// CONV_2D GEMM tiles for x86-64: sse41 (the portable tile), avx2, avx512vnni; the patch copy of
// avx512vnni. The plan and its packing: gemm.c, gemm_plan.h.
#include "gemm_plan.h"

#if defined(__x86_64__)
PORTABLE_TILE(pw_gemm_tile_sse41, PW_TARGET_SSE41)

PW_TARGET_AVX2 void pw_gemm_tile_avx2(const pw_gemm_plan *p, const int8_t *const *rows, int rows_valid, int8_t *out) {
    const __m256i order = _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7);
    for (int nb = 0; nb < p->nblocks; nb++) {
        const int8_t *w = p->weights + (size_t)nb * p->kp * 16;
        __m256i acc[2][4];
        for (int r = 0; r < 2; r++)
            for (int i = 0; i < 4; i++) acc[r][i] = _mm256_setzero_si256();
        const int8_t *x0 = rows[0], *x1 = rows[1];
        for (int k4 = 0; k4 < p->kp / 4; k4++, w += 64) {
            __m256i w0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)w));
            __m256i w1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(w + 16)));
            __m256i w2 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(w + 32)));
            __m256i w3 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(w + 48)));
            int32_t v0, v1;
            memcpy(&v0, x0 + 4 * k4, 4);
            memcpy(&v1, x1 + 4 * k4, 4);
            __m256i a0 = _mm256_broadcastq_epi64(_mm_cvtepi8_epi16(_mm_cvtsi32_si128(v0)));
            __m256i a1 = _mm256_broadcastq_epi64(_mm_cvtepi8_epi16(_mm_cvtsi32_si128(v1)));
            acc[0][0] = _mm256_add_epi32(acc[0][0], _mm256_madd_epi16(w0, a0));
            acc[0][1] = _mm256_add_epi32(acc[0][1], _mm256_madd_epi16(w1, a0));
            acc[0][2] = _mm256_add_epi32(acc[0][2], _mm256_madd_epi16(w2, a0));
            acc[0][3] = _mm256_add_epi32(acc[0][3], _mm256_madd_epi16(w3, a0));
            acc[1][0] = _mm256_add_epi32(acc[1][0], _mm256_madd_epi16(w0, a1));
            acc[1][1] = _mm256_add_epi32(acc[1][1], _mm256_madd_epi16(w1, a1));
            acc[1][2] = _mm256_add_epi32(acc[1][2], _mm256_madd_epi16(w2, a1));
            acc[1][3] = _mm256_add_epi32(acc[1][3], _mm256_madd_epi16(w3, a1));
        }
        pw_requant16 q = block_requant(p, nb);
        for (int r = 0; r < rows_valid; r++) {
            // acc[r][i] holds channels 4i..4i+3 as pairs of partial sums.
            __m256i lo = _mm256_permutevar8x32_epi32(_mm256_hadd_epi32(acc[r][0], acc[r][1]), order);
            __m256i hi = _mm256_permutevar8x32_epi32(_mm256_hadd_epi32(acc[r][2], acc[r][3]), order);
            pw_requant16_avx2(lo, hi, &q, out + (size_t)r * p->n + nb * 16, block_width(p, nb));
        }
    }
}

/// Σ of the kp bytes of a row (signed): vpsadbw on x + 128 (XOR 0x80), 64 bytes at a time, masked
/// tail lanes read as 0 and so count 128 like every lane: Σ x = total − 128 × 64 × chunks.
PW_TARGET_AVX512VNNI PW_INLINE int32_t vnni_row_sum(const int8_t *row, int kp) {
    const __m512i flip = _mm512_set1_epi8((char)0x80), zero = _mm512_setzero_si512();
    __m512i total = zero;
    int chunks = 0;
    for (int k = 0; k < kp; k += 64, chunks++) {
        __mmask64 valid = kp - k >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << (kp - k)) - 1);
        __m512i x = _mm512_xor_si512(_mm512_maskz_loadu_epi8(valid, row + k), flip);
        total = _mm512_add_epi64(total, _mm512_sad_epu8(x, zero));
    }
    return (int32_t)(_mm512_reduce_add_epi64(total) - (int64_t)128 * 64 * chunks);
}

/// MR rows × NB blocks of 16 channels, in one of two operand orders chosen at pack time:
///  - memory_input (K ≥ 64 and at least 64 channels): the packed weights are the unsigned operand of vpdpbusd (stored as
///    w + 128, i.e. XOR 0x80) and each input dword the signed one, broadcast straight from memory
///    into the instruction ({1to16}), no register or XOR per broadcast. Each accumulator then holds
///    Σ w·x + 128·Σ x, so it starts from bias − 128·Σ x of its row (vnni_row_sum).
///  - otherwise, XNNPACK's order: weights signed, each input dword XORed with 0x80808080 (x + 128)
///    and broadcast from a register; the pack folded −128·Σ w into the bias. For short rows this
///    is cheaper than the row sums.
/// The block's requantization constants are loaded once for all MR rows.
#define VNNI_TILE(MR, NB, MEMORY)                                                                                \
    PW_TARGET_AVX512VNNI static void vnni_##MR##x##NB##_##MEMORY(const pw_gemm_plan *p, int nb,                \
                                                                 const int8_t *const *rows, int rows_valid,     \
                                                                 int8_t *out) {                                  \
        const int8_t *w = p->weights + (size_t)nb * p->kp * 16;                                                 \
        const size_t block = (size_t)p->kp * 16;                                                                 \
        const int kp = p->kp;                                                                                    \
        const int8_t *x[MR];                                                                                     \
        __m512i correction[MR];                                                                                  \
        for (int r = 0; r < MR; r++) {                                                                           \
            x[r] = rows[r];                                                                                      \
            correction[r] = MEMORY ? _mm512_set1_epi32((int32_t)(0u - 128u * (uint32_t)vnni_row_sum(rows[r], kp))) \
                                   : _mm512_setzero_si512();                                                     \
        }                                                                                                        \
        __m512i acc[MR][NB];                                                                                     \
        for (int b = 0; b < NB; b++) {                                                                           \
            __m512i bias = _mm512_loadu_si512(p->bias + (nb + b) * 16);                                          \
            for (int r = 0; r < MR; r++) acc[r][b] = MEMORY ? _mm512_add_epi32(bias, correction[r]) : bias;      \
        }                                                                                                        \
        for (int k = 0; k < kp; k += 4, w += 64) {                                                               \
            __m512i wv[NB];                                                                                      \
            for (int b = 0; b < NB; b++) wv[b] = _mm512_loadu_si512(w + b * block);                              \
            for (int r = 0; r < MR; r++) {                                                                       \
                uint32_t v;                                                                                      \
                memcpy(&v, x[r] + k, 4);                                                                         \
                if (MEMORY) {                                                                                    \
                    __m512i xv = _mm512_set1_epi32((int32_t)v);                                                  \
                    for (int b = 0; b < NB; b++) acc[r][b] = _mm512_dpbusd_epi32(acc[r][b], wv[b], xv);          \
                } else {                                                                                         \
                    __m512i xv = _mm512_set1_epi32((int32_t)(v ^ 0x80808080u));                                  \
                    for (int b = 0; b < NB; b++) acc[r][b] = _mm512_dpbusd_epi32(acc[r][b], xv, wv[b]);          \
                }                                                                                                \
            }                                                                                                    \
        }                                                                                                        \
        const __m512i offset = _mm512_set1_epi32(p->g.output_offset);                                            \
        const __m512i lo = _mm512_set1_epi32(p->g.act_min), hi = _mm512_set1_epi32(p->g.act_max);                \
        for (int b = 0; b < NB; b++) {                                                                           \
            const int c = (nb + b) * 16;                                                                         \
            const pw_rq16_avx512 q = pw_rq16_load_avx512(p->multiplier + c, p->left + c, p->right + c);          \
            const int width = block_width(p, nb + b);                                                            \
            const __mmask16 store = width >= 16 ? 0xFFFF : (__mmask16)((1u << width) - 1u);                      \
            for (int r = 0; r < MR; r++) {                                                                       \
                if (r < rows_valid) {                                                                            \
                    __m512i result = pw_rq16_apply_avx512(acc[r][b], &q, offset, lo, hi);                        \
                    _mm_mask_storeu_epi8(out + (size_t)r * p->n + c, store, _mm512_cvtepi32_epi8(result));        \
                }                                                                                                \
            }                                                                                                    \
        }                                                                                                        \
    }

#define VNNI_TILES(MEMORY)  \
    VNNI_TILE(6, 4, MEMORY) \
    VNNI_TILE(6, 2, MEMORY) \
    VNNI_TILE(6, 1, MEMORY) \
    VNNI_TILE(8, 3, MEMORY) \
    VNNI_TILE(8, 2, MEMORY) \
    VNNI_TILE(8, 1, MEMORY)
VNNI_TILES(0)
VNNI_TILES(1)

#define VNNI_DISPATCH(MEMORY)                                                                                    \
    do {                                                                                                         \
        if (p->mr == 8) {                                                                                        \
            switch (p->nblocks) {                                                                                \
            case 3: vnni_8x3_##MEMORY(p, 0, rows, rows_valid, out); break;                                       \
            case 2: vnni_8x2_##MEMORY(p, 0, rows, rows_valid, out); break;                                       \
            default: vnni_8x1_##MEMORY(p, 0, rows, rows_valid, out); break;                                      \
            }                                                                                                    \
            return;                                                                                              \
        }                                                                                                        \
        int nb = 0;                                                                                              \
        for (; nb + 4 <= p->nblocks; nb += 4) vnni_6x4_##MEMORY(p, nb, rows, rows_valid, out);                   \
        for (; nb + 2 <= p->nblocks; nb += 2) vnni_6x2_##MEMORY(p, nb, rows, rows_valid, out);                   \
        for (; nb < p->nblocks; nb++) vnni_6x1_##MEMORY(p, nb, rows, rows_valid, out);                           \
    } while (0)

/// 6 rows × 64 channels where there are at least 4 blocks of 16, else 8 rows × all (≤ 3) blocks.
PW_TARGET_AVX512VNNI void pw_gemm_tile_avx512vnni(const pw_gemm_plan *p, const int8_t *const *rows, int rows_valid,
                                                  int8_t *out) {
    if (p->memory_input) VNNI_DISPATCH(1);
    else VNNI_DISPATCH(0);
}

/// A patch of at most 64 bytes whose filter rows are each one contiguous run: every run lands in
/// place through a masked load and the patch is stored whole (64 bytes, into the scratch's spare
/// room), so the tile's 4-byte reads are forwarded from one store instead of straddling several
/// overlapping small ones (a store-forwarding stall each). Bytes past k are zero.
PW_TARGET_AVX512VNNI void pw_gemm_patch_avx512(const int8_t *first, size_t row_stride, int rows, int run,
                                              int8_t *patch) {
    __m512i v = _mm512_setzero_si512();
    const uint64_t bits = run >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << run) - 1;  // rows × run ≤ 64
    for (int fy = 0; fy < rows; fy++) {
        // Element i of the load reads first + fy·row_stride + (i − fy·run): only the run's bytes.
        const int8_t *source = first + (ptrdiff_t)fy * (ptrdiff_t)row_stride - (ptrdiff_t)fy * run;
        v = _mm512_mask_loadu_epi8(v, (__mmask64)(bits << (fy * run)), source);
    }
    _mm512_storeu_si512(patch, v);
}
#endif
