// CONV_2D int8 as GEMM: output[m][n] = requantize(Σ_k W[n][k] · (A[m][k] + input_offset) + bias[n]).
// The input offset is folded into the bias at pack time (Σ_k W[n][k] · input_offset), so the
// inner loop is a plain int8 × int8 → int32 dot product. Weights are packed "c4": blocks of 16
// output channels, for each group of 4 k: 16 channels × 4 bytes (64 bytes), K padded with zeros.
//
// Tiles (rows × channels, ISA): 2x16c4 scalar/sse41, 2x16c4 avx2 (vpmovsxbw + vpmaddwd),
// 6x64c4 / 8x48c4 avx512vnni (vpdpbusd: weights + 128 unsigned, input signed and broadcast from
// memory, 128·Σx of each row subtracted at the start; 8 rows when the layer has at most 48
// channels), 2x16c4 neon
// (smull + smlal + sadalp, asm), 6x16c4 neondot (lane-indexed sdot, asm). Rows are pointers: a 1x1 convolution reads the input
// in place; any other convolution copies one tile of patches (MR × K bytes, per thread, packed
// at Prepare) and runs the same tile.
#include "requant.h"
#include <stddef.h>
#include <stdlib.h>

#define MR_MAX 8

struct pw_gemm_plan {
    pw_conv_geometry g;
    int isa, mr, direct;
    int memory_input;  // avx512vnni: weights + 128, input signed from memory (see VNNI_TILE)
    int no_minus_128;  // no weight is -128: two products fit one int16 lane (neon smlal tile)
    int right_shift_only;  // every shift < 0 and multiplier ≥ 0: the neondot tile's short requantisation
    int neon_flags;    // neon: bit 0 some channel shifts left, bit 1 some channel has no right shift,
                       // bit 2 the activation bounds are narrower than int8's
    int32_t n, k, kp, nblocks;
    int8_t *weights;
    int32_t *bias, *multiplier, *left, *right;
    int32_t *neon_params;  // neon: per block of 16 channels, what neon_2x16_blocks reads (pack_neon_params)
    int8_t *scratch;  // PW_MAX_THREADS × scratch_stride: MR_MAX patches of kp bytes, 64 spare
    size_t scratch_stride;
};

typedef void (*tile_fn)(const pw_gemm_plan *p, const int8_t *const *rows, int rows_valid, int8_t *out);

PW_INLINE pw_requant16 block_requant(const pw_gemm_plan *p, int nb) {
    pw_requant16 q = {p->bias + nb * 16, p->multiplier + nb * 16, p->left + nb * 16, p->right + nb * 16,
                      p->g.output_offset, p->g.act_min, p->g.act_max};
    return q;
}

PW_INLINE int block_width(const pw_gemm_plan *p, int nb) {
    int w = p->n - nb * 16;
    return w > 16 ? 16 : w;
}

// MARK: portable (scalar; sse41 is the same code compiled for SSE4.1)

#define PORTABLE_TILE(name, attribute)                                                                          \
    attribute static void name(const pw_gemm_plan *p, const int8_t *const *rows, int rows_valid, int8_t *out) { \
        for (int nb = 0; nb < p->nblocks; nb++) {                                                               \
            const int8_t *w = p->weights + (size_t)nb * p->kp * 16;                                             \
            int32_t acc[2][16] = {{0}};                                                                         \
            for (int k4 = 0; k4 < p->kp / 4; k4++) {                                                            \
                const int8_t *wk = w + k4 * 64;                                                                 \
                for (int r = 0; r < 2; r++) {                                                                   \
                    const int8_t *x = rows[r] + 4 * k4;                                                         \
                    for (int j = 0; j < 16; j++) {                                                              \
                        acc[r][j] += wk[4 * j] * x[0] + wk[4 * j + 1] * x[1] + wk[4 * j + 2] * x[2] +           \
                                     wk[4 * j + 3] * x[3];                                                      \
                    }                                                                                           \
                }                                                                                               \
            }                                                                                                   \
            pw_requant16 q = block_requant(p, nb);                                                              \
            for (int r = 0; r < rows_valid; r++) {                                                              \
                pw_requant16_scalar(acc[r], &q, out + (size_t)r * p->n + nb * 16, block_width(p, nb));          \
            }                                                                                                   \
        }                                                                                                       \
    }

PORTABLE_TILE(tile_2x16c4_scalar, )

#if defined(__x86_64__)
PORTABLE_TILE(tile_2x16c4_sse41, PW_TARGET_SSE41)

PW_TARGET_AVX2 static void tile_2x16c4_avx2(const pw_gemm_plan *p, const int8_t *const *rows, int rows_valid,
                                            int8_t *out) {
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
PW_TARGET_AVX512VNNI static void tile_avx512vnni(const pw_gemm_plan *p, const int8_t *const *rows, int rows_valid,
                                                 int8_t *out) {
    if (p->memory_input) VNNI_DISPATCH(1);
    else VNNI_DISPATCH(0);
}
#endif

#if defined(__aarch64__)
// The neon tile (Cortex-A72/A53: no dot product) is one hand-allocated inline-asm loop, so that its
// cost does not depend on the compiler's register allocation (clang 17 kept the intrinsics tile's
// accumulators on the stack: ~0.8 instructions per multiply-add instead of ~0.2).
//
// Registers: v0-v7 the 8 accumulators of row 0, v8-v15 those of row 1 (accumulator 2i holds
// channels 4i and 4i+1 as two pair sums each, 2i+1 channels 4i+2 and 4i+3), v16-v19 four k (one
// c4 group) of the 16 channels, v20-v23 the next four k, v24/v25 and v26/v27 rows 0 and 1's 8 bytes
// as two 4-byte broadcasts (ld2r), v28-v31 products. Per 8 k and 2 rows: 2 weight loads, 2 input
// loads, 16 smull(2) + 16 smlal(2) (int16: with no weight at -128 two products are at most
// 2 · 127 · 128 = 32512 in magnitude) and 16 sadalp, 52 instructions for 256 multiply-adds, and
// one of loop overhead (the loop runs two groups of 8 k per iteration).
// Without that guarantee (a filter holding -128) every group takes the smull + sadalp step.
#define PW_NEON_PAIR(wa, wb, r0a, r0b, r1a, r1b)                                                               \
    "smull  v28.8h, v" #wa ".8b, v24.8b\n\t"                                                                  \
    "smull2 v29.8h, v" #wa ".16b, v24.16b\n\t"                                                                \
    "smull  v30.8h, v" #wa ".8b, v26.8b\n\t"                                                                  \
    "smull2 v31.8h, v" #wa ".16b, v26.16b\n\t"                                                                \
    "smlal  v28.8h, v" #wb ".8b, v25.8b\n\t"                                                                  \
    "smlal2 v29.8h, v" #wb ".16b, v25.16b\n\t"                                                                \
    "smlal  v30.8h, v" #wb ".8b, v27.8b\n\t"                                                                  \
    "smlal2 v31.8h, v" #wb ".16b, v27.16b\n\t"                                                                \
    "sadalp v" #r0a ".4s, v28.8h\n\t"                                                                         \
    "sadalp v" #r0b ".4s, v29.8h\n\t"                                                                         \
    "sadalp v" #r1a ".4s, v30.8h\n\t"                                                                         \
    "sadalp v" #r1b ".4s, v31.8h\n\t"

/// One group of 8 k for both rows and all 16 channels: the 128 weight bytes (two c4 groups), each
/// row's 8 bytes as two broadcasts, and the four channel quarters through PW_NEON_PAIR. The loop
/// below runs it twice per iteration.
#define PW_NEON_GROUP8                                                                                         \
    "ld1 {v16.16b, v17.16b, v18.16b, v19.16b}, [%[w]], #64\n\t"                                              \
    "ld1 {v20.16b, v21.16b, v22.16b, v23.16b}, [%[w]], #64\n\t"                                              \
    "ld2r {v24.4s, v25.4s}, [%[x0]], #8\n\t"                                                                 \
    "ld2r {v26.4s, v27.4s}, [%[x1]], #8\n\t"                                                                 \
    PW_NEON_PAIR(16, 20, 0, 1, 8, 9)                                                                           \
    PW_NEON_PAIR(17, 21, 2, 3, 10, 11)                                                                         \
    PW_NEON_PAIR(18, 22, 4, 5, 12, 13)                                                                         \
    PW_NEON_PAIR(19, 23, 6, 7, 14, 15)

#define PW_NEON_SINGLE(wa, r0a, r0b, r1a, r1b)                                                                 \
    "smull  v28.8h, v" #wa ".8b, v24.8b\n\t"                                                                  \
    "smull2 v29.8h, v" #wa ".16b, v24.16b\n\t"                                                                \
    "smull  v30.8h, v" #wa ".8b, v26.8b\n\t"                                                                  \
    "smull2 v31.8h, v" #wa ".16b, v26.16b\n\t"                                                                \
    "sadalp v" #r0a ".4s, v28.8h\n\t"                                                                         \
    "sadalp v" #r0b ".4s, v29.8h\n\t"                                                                         \
    "sadalp v" #r1a ".4s, v30.8h\n\t"                                                                         \
    "sadalp v" #r1b ".4s, v31.8h\n\t"

/// What the neon tile reads besides weights and rows: the output zero point (int16) and the
/// activation bounds (int8), each loaded replicated into a vector once per block.
typedef struct {
    int16_t output_offset;
    int8_t bounds[2];  // act_min, act_max
} pw_neon_output;

/// `blocks` blocks of 16 channels for rows a0 and a1 (which may be the same row), stored to c0
/// and c1 (16 bytes per block each). `params` walks the plan's neon_params (pack_neon_params):
/// per block, the bias laid out as the accumulators are (twice: one copy per row), the
/// multipliers, the right shifts negated, then the left shifts if the plan has any (flags bit 0).
/// Requantization: sqrdmulh is SaturatingRoundingDoublingHighMul exactly (multipliers are
/// non-negative, so the high half is never INT32_MIN); RoundingDivideByPOT rounds halves away from
/// zero and srshl rounds them up, so negative values with a right shift get −1 first (ssra of the
/// sign, which cannot wrap). When some channel has no right shift (flags bit 1) the −1 is masked
/// with the negated shift (0 there). The zero point is added with int16 saturation and the clamp
/// is done on the int8-saturated value (only when the bounds are narrower than int8's, flags bit
/// 2): both give the reference's clamp(v + zero point) because the bounds and the zero point are
/// int8 values.
PW_INLINE void neon_2x16_blocks(const int8_t *a0, const int8_t *a1, const int8_t **weights, const int32_t **params,
                                int8_t *c0, int8_t *c1, int blocks, int pairs, int singles, int flags,
                                const pw_neon_output *output) {
    const int8_t *w = *weights;
    const int32_t *prm = *params;
    const int8_t *x0, *x1;
    int count;
    __asm__ volatile(
        "1:\n\t"
        "ld1 {v0.4s, v1.4s, v2.4s, v3.4s}, [%[prm]], #64\n\t"
        "ld1 {v4.4s, v5.4s, v6.4s, v7.4s}, [%[prm]], #64\n\t"
        "ld1 {v8.4s, v9.4s, v10.4s, v11.4s}, [%[prm]], #64\n\t"
        "ld1 {v12.4s, v13.4s, v14.4s, v15.4s}, [%[prm]], #64\n\t"
        "mov %[x0], %[a0]\n\t"
        "mov %[x1], %[a1]\n\t"
        // Two groups of 8 k per iteration (halves = ⌈pairs / 2⌉); an odd count starts in the second.
        "cbz %w[halves], 3f\n\t"
        "mov %w[count], %w[halves]\n\t"
        "tbnz %w[pairs], #0, 21f\n\t"
        "2:\n\t"
        PW_NEON_GROUP8
        "21:\n\t"
        PW_NEON_GROUP8
        "subs %w[count], %w[count], #1\n\t"
        "b.ne 2b\n\t"
        "3:\n\t"
        "cbz %w[singles], 5f\n\t"
        "mov %w[count], %w[singles]\n\t"
        "4:\n\t"
        "ld1 {v16.16b, v17.16b, v18.16b, v19.16b}, [%[w]], #64\n\t"
        "ld1r {v24.4s}, [%[x0]], #4\n\t"
        "ld1r {v26.4s}, [%[x1]], #4\n\t"
        PW_NEON_SINGLE(16, 0, 1, 8, 9)
        PW_NEON_SINGLE(17, 2, 3, 10, 11)
        PW_NEON_SINGLE(18, 4, 5, 12, 13)
        PW_NEON_SINGLE(19, 6, 7, 14, 15)
        "subs %w[count], %w[count], #1\n\t"
        "b.ne 4b\n\t"
        "5:\n\t"
        // Pair sums → one int32 per channel: v0-v3 row 0 (channels 0-3, ..., 12-15), v4-v7 row 1.
        "addp v0.4s, v0.4s, v1.4s\n\t"
        "addp v1.4s, v2.4s, v3.4s\n\t"
        "addp v2.4s, v4.4s, v5.4s\n\t"
        "addp v3.4s, v6.4s, v7.4s\n\t"
        "addp v4.4s, v8.4s, v9.4s\n\t"
        "addp v5.4s, v10.4s, v11.4s\n\t"
        "addp v6.4s, v12.4s, v13.4s\n\t"
        "addp v7.4s, v14.4s, v15.4s\n\t"
        "ld1 {v16.4s, v17.4s, v18.4s, v19.4s}, [%[prm]], #64\n\t"  // multipliers
        "ld1 {v20.4s, v21.4s, v22.4s, v23.4s}, [%[prm]], #64\n\t"  // -right
        "tbz %w[flags], #0, 6f\n\t"
        "ld1 {v24.4s, v25.4s, v26.4s, v27.4s}, [%[prm]], #64\n\t"  // left
        "sshl v0.4s, v0.4s, v24.4s\n\t"
        "sshl v1.4s, v1.4s, v25.4s\n\t"
        "sshl v2.4s, v2.4s, v26.4s\n\t"
        "sshl v3.4s, v3.4s, v27.4s\n\t"
        "sshl v4.4s, v4.4s, v24.4s\n\t"
        "sshl v5.4s, v5.4s, v25.4s\n\t"
        "sshl v6.4s, v6.4s, v26.4s\n\t"
        "sshl v7.4s, v7.4s, v27.4s\n\t"
        "6:\n\t"
        "sqrdmulh v0.4s, v0.4s, v16.4s\n\t"
        "sqrdmulh v1.4s, v1.4s, v17.4s\n\t"
        "sqrdmulh v2.4s, v2.4s, v18.4s\n\t"
        "sqrdmulh v3.4s, v3.4s, v19.4s\n\t"
        "sqrdmulh v4.4s, v4.4s, v16.4s\n\t"
        "sqrdmulh v5.4s, v5.4s, v17.4s\n\t"
        "sqrdmulh v6.4s, v6.4s, v18.4s\n\t"
        "sqrdmulh v7.4s, v7.4s, v19.4s\n\t"
        "tbz %w[flags], #1, 7f\n\t"
        "and v8.16b, v0.16b, v20.16b\n\t"
        "and v9.16b, v1.16b, v21.16b\n\t"
        "and v10.16b, v2.16b, v22.16b\n\t"
        "and v11.16b, v3.16b, v23.16b\n\t"
        "and v12.16b, v4.16b, v20.16b\n\t"
        "and v13.16b, v5.16b, v21.16b\n\t"
        "and v14.16b, v6.16b, v22.16b\n\t"
        "and v15.16b, v7.16b, v23.16b\n\t"
        "ssra v0.4s, v8.4s, #31\n\t"
        "ssra v1.4s, v9.4s, #31\n\t"
        "ssra v2.4s, v10.4s, #31\n\t"
        "ssra v3.4s, v11.4s, #31\n\t"
        "ssra v4.4s, v12.4s, #31\n\t"
        "ssra v5.4s, v13.4s, #31\n\t"
        "ssra v6.4s, v14.4s, #31\n\t"
        "ssra v7.4s, v15.4s, #31\n\t"
        "b 8f\n\t"
        "7:\n\t"
        "ssra v0.4s, v0.4s, #31\n\t"
        "ssra v1.4s, v1.4s, #31\n\t"
        "ssra v2.4s, v2.4s, #31\n\t"
        "ssra v3.4s, v3.4s, #31\n\t"
        "ssra v4.4s, v4.4s, #31\n\t"
        "ssra v5.4s, v5.4s, #31\n\t"
        "ssra v6.4s, v6.4s, #31\n\t"
        "ssra v7.4s, v7.4s, #31\n\t"
        "8:\n\t"
        "srshl v0.4s, v0.4s, v20.4s\n\t"
        "srshl v1.4s, v1.4s, v21.4s\n\t"
        "srshl v2.4s, v2.4s, v22.4s\n\t"
        "srshl v3.4s, v3.4s, v23.4s\n\t"
        "srshl v4.4s, v4.4s, v20.4s\n\t"
        "srshl v5.4s, v5.4s, v21.4s\n\t"
        "srshl v6.4s, v6.4s, v22.4s\n\t"
        "srshl v7.4s, v7.4s, v23.4s\n\t"
        "sqxtn  v8.4h, v0.4s\n\t"
        "sqxtn2 v8.8h, v1.4s\n\t"
        "sqxtn  v9.4h, v2.4s\n\t"
        "sqxtn2 v9.8h, v3.4s\n\t"
        "sqxtn  v10.4h, v4.4s\n\t"
        "sqxtn2 v10.8h, v5.4s\n\t"
        "sqxtn  v11.4h, v6.4s\n\t"
        "sqxtn2 v11.8h, v7.4s\n\t"
        "ld1r {v28.8h}, [%[offset]]\n\t"
        "sqadd v8.8h, v8.8h, v28.8h\n\t"
        "sqadd v9.8h, v9.8h, v28.8h\n\t"
        "sqadd v10.8h, v10.8h, v28.8h\n\t"
        "sqadd v11.8h, v11.8h, v28.8h\n\t"
        "sqxtn  v12.8b, v8.8h\n\t"
        "sqxtn2 v12.16b, v9.8h\n\t"
        "sqxtn  v13.8b, v10.8h\n\t"
        "sqxtn2 v13.16b, v11.8h\n\t"
        "tbz %w[flags], #2, 9f\n\t"  // bounds narrower than int8's (the saturation clamps to int8)
        "ld2r {v29.16b, v30.16b}, [%[bounds]]\n\t"
        "smax v12.16b, v12.16b, v29.16b\n\t"
        "smax v13.16b, v13.16b, v29.16b\n\t"
        "smin v12.16b, v12.16b, v30.16b\n\t"
        "smin v13.16b, v13.16b, v30.16b\n\t"
        "9:\n\t"
        "str q12, [%[c0]], #16\n\t"
        "str q13, [%[c1]], #16\n\t"
        "subs %w[blocks], %w[blocks], #1\n\t"
        "b.ne 1b\n\t"
        : [w] "+r"(w), [prm] "+r"(prm), [c0] "+r"(c0), [c1] "+r"(c1), [blocks] "+r"(blocks), [x0] "=&r"(x0),
          [x1] "=&r"(x1), [count] "=&r"(count)
        : [a0] "r"(a0), [a1] "r"(a1), [pairs] "r"(pairs), [halves] "r"((pairs + 1) / 2), [singles] "r"(singles),
          [flags] "r"(flags), [offset] "r"(&output->output_offset), [bounds] "r"(output->bounds)
        : "cc", "memory", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13",
          "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28",
          "v29", "v30", "v31");
    *weights = w;
    *params = prm;
}

/// The narrow tails' last step, both rows: + the output zero point (int16, saturating), narrowed to
/// int8 in v12 (row 0) and v13 (row 1), clamped to the activation bounds; the caller stores 4 or 8
/// bytes of each.
#define PW_NEON_TAIL_NARROW                                                                                    \
    "ld1r {v28.8h}, [%[offset]]\n\t"                                                                        \
    "ld2r {v29.16b, v30.16b}, [%[bounds]]\n\t"                                                              \
    "sqadd v8.8h, v8.8h, v28.8h\n\t"                                                                        \
    "sqadd v10.8h, v10.8h, v28.8h\n\t"                                                                      \
    "sqxtn v12.8b, v8.8h\n\t"                                                                               \
    "sqxtn v13.8b, v10.8h\n\t"                                                                              \
    "smax v12.8b, v12.8b, v29.8b\n\t"                                                                       \
    "smax v13.8b, v13.8b, v29.8b\n\t"                                                                       \
    "smin v12.8b, v12.8b, v30.8b\n\t"                                                                       \
    "smin v13.8b, v13.8b, v30.8b\n\t"

/// The last block when it has at most 8 channels (MoveNet: 24 = 16 + 8, 17, 34, 1): the same
/// loop and requantization as neon_2x16_blocks on 1 or 2 groups of 4 channels (`quads`) instead
/// of 4, reading the block's first 16 or 32 weight bytes of every 64 and the first constants of
/// its neon_params; the 4 or 8 results of each row go to c0 and c1.
PW_INLINE void neon_2xq_tail(const int8_t *a0, const int8_t *a1, const int8_t *w, const int32_t *prm, int quads,
                             int pairs, int singles, int flags, const pw_neon_output *output, int8_t *c0,
                             int8_t *c1) {
    const int8_t *x0 = a0, *x1 = a1;
    int count;
#define PW_NEON_TAIL_OPERANDS                                                                                  \
    : [w] "+r"(w), [x0] "+r"(x0), [x1] "+r"(x1), [count] "=&r"(count)                                      \
    : [prm] "r"(prm), [c0] "r"(c0), [c1] "r"(c1), [pairs] "r"(pairs), [singles] "r"(singles),              \
      [flags] "r"(flags), [offset] "r"(&output->output_offset), [bounds] "r"(output->bounds)               \
    : "cc", "memory", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13", \
      "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28", \
      "v29", "v30", "v31"
    if (quads == 1) {
        __asm__ volatile(
        "ldp q0, q1, [%[prm]]\n\t"
        "ldp q8, q9, [%[prm], #128]\n\t"
        "mov %w[count], %w[pairs]\n\t"
        "cbz %w[count], 3f\n\t"
        "2:\n\t"
        "ldr q16, [%[w]], #64\n\t"
        "ldr q20, [%[w]], #64\n\t"
        "ld2r {v24.4s, v25.4s}, [%[x0]], #8\n\t"
        "ld2r {v26.4s, v27.4s}, [%[x1]], #8\n\t"
        PW_NEON_PAIR(16, 20, 0, 1, 8, 9)
        "subs %w[count], %w[count], #1\n\t"
        "b.ne 2b\n\t"
        "3:\n\t"
        "mov %w[count], %w[singles]\n\t"
        "cbz %w[count], 5f\n\t"
        "4:\n\t"
        "ldr q16, [%[w]], #64\n\t"
        "ld1r {v24.4s}, [%[x0]], #4\n\t"
        "ld1r {v26.4s}, [%[x1]], #4\n\t"
        PW_NEON_SINGLE(16, 0, 1, 8, 9)
        "subs %w[count], %w[count], #1\n\t"
        "b.ne 4b\n\t"
        "5:\n\t"
        "addp v0.4s, v0.4s, v1.4s\n\t"
        "addp v4.4s, v8.4s, v9.4s\n\t"
        "ldr q16, [%[prm], #256]\n\t"
        "ldr q20, [%[prm], #320]\n\t"
        "tbz %w[flags], #0, 6f\n\t"
        "ldr q24, [%[prm], #384]\n\t"
        "sshl v0.4s, v0.4s, v24.4s\n\t"
        "sshl v4.4s, v4.4s, v24.4s\n\t"
        "6:\n\t"
        "sqrdmulh v0.4s, v0.4s, v16.4s\n\t"
        "sqrdmulh v4.4s, v4.4s, v16.4s\n\t"
        "tbz %w[flags], #1, 7f\n\t"
        "and v8.16b, v0.16b, v20.16b\n\t"
        "and v12.16b, v4.16b, v20.16b\n\t"
        "ssra v0.4s, v8.4s, #31\n\t"
        "ssra v4.4s, v12.4s, #31\n\t"
        "b 8f\n\t"
        "7:\n\t"
        "ssra v0.4s, v0.4s, #31\n\t"
        "ssra v4.4s, v4.4s, #31\n\t"
        "8:\n\t"
        "srshl v0.4s, v0.4s, v20.4s\n\t"
        "srshl v4.4s, v4.4s, v20.4s\n\t"
        "sqxtn v8.4h, v0.4s\n\t"
        "sqxtn v10.4h, v4.4s\n\t"
        PW_NEON_TAIL_NARROW
        "str s12, [%[c0]]\n\t"
        "str s13, [%[c1]]\n\t"
        PW_NEON_TAIL_OPERANDS);
    } else {
        __asm__ volatile(
        "ldp q0, q1, [%[prm]]\n\t"
        "ldp q2, q3, [%[prm], #32]\n\t"
        "ldp q8, q9, [%[prm], #128]\n\t"
        "ldp q10, q11, [%[prm], #160]\n\t"
        "mov %w[count], %w[pairs]\n\t"
        "cbz %w[count], 3f\n\t"
        "2:\n\t"
        "ldp q16, q17, [%[w]], #64\n\t"
        "ldp q20, q21, [%[w]], #64\n\t"
        "ld2r {v24.4s, v25.4s}, [%[x0]], #8\n\t"
        "ld2r {v26.4s, v27.4s}, [%[x1]], #8\n\t"
        PW_NEON_PAIR(16, 20, 0, 1, 8, 9) PW_NEON_PAIR(17, 21, 2, 3, 10, 11)
        "subs %w[count], %w[count], #1\n\t"
        "b.ne 2b\n\t"
        "3:\n\t"
        "mov %w[count], %w[singles]\n\t"
        "cbz %w[count], 5f\n\t"
        "4:\n\t"
        "ldp q16, q17, [%[w]], #64\n\t"
        "ld1r {v24.4s}, [%[x0]], #4\n\t"
        "ld1r {v26.4s}, [%[x1]], #4\n\t"
        PW_NEON_SINGLE(16, 0, 1, 8, 9) PW_NEON_SINGLE(17, 2, 3, 10, 11)
        "subs %w[count], %w[count], #1\n\t"
        "b.ne 4b\n\t"
        "5:\n\t"
        "addp v0.4s, v0.4s, v1.4s\n\t"
        "addp v1.4s, v2.4s, v3.4s\n\t"
        "addp v4.4s, v8.4s, v9.4s\n\t"
        "addp v5.4s, v10.4s, v11.4s\n\t"
        "ldp q16, q17, [%[prm], #256]\n\t"
        "ldp q20, q21, [%[prm], #320]\n\t"
        "tbz %w[flags], #0, 6f\n\t"
        "ldp q24, q25, [%[prm], #384]\n\t"
        "sshl v0.4s, v0.4s, v24.4s\n\t"
        "sshl v1.4s, v1.4s, v25.4s\n\t"
        "sshl v4.4s, v4.4s, v24.4s\n\t"
        "sshl v5.4s, v5.4s, v25.4s\n\t"
        "6:\n\t"
        "sqrdmulh v0.4s, v0.4s, v16.4s\n\t"
        "sqrdmulh v1.4s, v1.4s, v17.4s\n\t"
        "sqrdmulh v4.4s, v4.4s, v16.4s\n\t"
        "sqrdmulh v5.4s, v5.4s, v17.4s\n\t"
        "tbz %w[flags], #1, 7f\n\t"
        "and v8.16b, v0.16b, v20.16b\n\t"
        "and v9.16b, v1.16b, v21.16b\n\t"
        "and v12.16b, v4.16b, v20.16b\n\t"
        "and v13.16b, v5.16b, v21.16b\n\t"
        "ssra v0.4s, v8.4s, #31\n\t"
        "ssra v1.4s, v9.4s, #31\n\t"
        "ssra v4.4s, v12.4s, #31\n\t"
        "ssra v5.4s, v13.4s, #31\n\t"
        "b 8f\n\t"
        "7:\n\t"
        "ssra v0.4s, v0.4s, #31\n\t"
        "ssra v1.4s, v1.4s, #31\n\t"
        "ssra v4.4s, v4.4s, #31\n\t"
        "ssra v5.4s, v5.4s, #31\n\t"
        "8:\n\t"
        "srshl v0.4s, v0.4s, v20.4s\n\t"
        "srshl v1.4s, v1.4s, v21.4s\n\t"
        "srshl v4.4s, v4.4s, v20.4s\n\t"
        "srshl v5.4s, v5.4s, v21.4s\n\t"
        "sqxtn v8.4h, v0.4s\n\t"
        "sqxtn2 v8.8h, v1.4s\n\t"
        "sqxtn v10.4h, v4.4s\n\t"
        "sqxtn2 v10.8h, v5.4s\n\t"
        PW_NEON_TAIL_NARROW
        "str d12, [%[c0]]\n\t"
        "str d13, [%[c1]]\n\t"
        PW_NEON_TAIL_OPERANDS);
    }
#undef PW_NEON_TAIL_OPERANDS
}

/// What every pair of rows of a plan shares, computed once per call of the tile or per task.
typedef struct {
    const int8_t *weights;
    const int32_t *params;
    size_t n;
    int pairs, singles, flags, full, width;
    pw_neon_output output;
} neon_rows_job;

PW_INLINE neon_rows_job neon_rows_job_for(const pw_gemm_plan *p) {
    const int k4count = p->kp / 4;
    neon_rows_job job;
    job.weights = p->weights;
    job.params = p->neon_params;
    job.n = (size_t)p->n;
    job.pairs = p->no_minus_128 ? k4count / 2 : 0;
    job.singles = k4count - 2 * job.pairs;
    job.flags = p->neon_flags;
    job.full = p->n / 16;
    job.width = p->n % 16;
    job.output.output_offset = (int16_t)p->g.output_offset;
    job.output.bounds[0] = (int8_t)p->g.act_min;
    job.output.bounds[1] = (int8_t)p->g.act_max;
    return job;
}

/// Two rows (a1 may be a0 when only one is valid: then both stores write the same bytes) × all
/// channels of the plan.
PW_INLINE void neon_2_rows(const neon_rows_job *job, const int8_t *a0, const int8_t *a1, int rows_valid,
                           int8_t *out) {
    const int8_t *w = job->weights;
    const int32_t *params = job->params;
    const int pairs = job->pairs, singles = job->singles, flags = job->flags, full = job->full, width = job->width;
    int8_t *c1 = rows_valid > 1 ? out + job->n : out;
    if (full > 0) neon_2x16_blocks(a0, a1, &w, &params, out, c1, full, pairs, singles, flags, &job->output);
    if (width > 0) {
        int8_t last[2][16];
        if (width <= 8) {
            neon_2xq_tail(a0, a1, w, params, width <= 4 ? 1 : 2, pairs, singles, flags, &job->output, last[0],
                          last[1]);
        } else {
            neon_2x16_blocks(a0, a1, &w, &params, last[0], last[1], 1, pairs, singles, flags, &job->output);
        }
        for (int r = 0; r < rows_valid; r++) memcpy(out + r * job->n + (size_t)full * 16, last[r], (size_t)width);
    }
}

static void tile_2x16c4_neon(const pw_gemm_plan *p, const int8_t *const *rows, int rows_valid, int8_t *out) {
    const neon_rows_job job = neon_rows_job_for(p);
    neon_2_rows(&job, rows[0], rows_valid > 1 ? rows[1] : rows[0], rows_valid, out);
}

/// A 1x1 convolution's rows [0, m) read in place, two at a time: one call per task instead of one
/// tile call per two rows (the narrow layers of MoveNet have only 16 to 144 multiply-adds per
/// output, so the call's cost and the saving of d8-d15 per call were a tenth of the work).
static void neon_direct_rows(const pw_gemm_plan *p, const int8_t *input, int m, int8_t *output) {
    const size_t k = (size_t)p->k, n = (size_t)p->n;
    const neon_rows_job job = neon_rows_job_for(p);
    int row = 0;
    for (; row + 2 <= m; row += 2) neon_2_rows(&job, input + row * k, input + (row + 1) * k, 2, output + row * n);
    if (row < m) neon_2_rows(&job, input + row * k, input + row * k, 1, output + row * n);
}

// MARK: neondot (Cortex-A76 and later: SDOT)

/// The first `count` (1…16) bytes of a requantised row block, stored 16 or 8/4/2/1 at a time.
PW_INLINE void dot_store(int8_t *out, int8x16_t bytes, int count) {
    if (count == 16) {
        vst1q_s8(out, bytes);
        return;
    }
    if (count & 8) {
        vst1_s8(out, vget_low_s8(bytes));
        out += 8;
        bytes = vextq_s8(bytes, bytes, 8);
    }
    if (count & 4) {
        vst1q_lane_s32((int32_t *)(void *)out, vreinterpretq_s32_s8(bytes), 0);
        out += 4;
        bytes = vextq_s8(bytes, bytes, 4);
    }
    if (count & 2) {
        vst1q_lane_s16((int16_t *)(void *)out, vreinterpretq_s16_s8(bytes), 0);
        out += 2;
        bytes = vextq_s8(bytes, bytes, 2);
    }
    if (count & 1) vst1q_lane_s8(out, bytes, 0);
}

/// A block's requantisation constants, loaded once for all rows of the tile.
typedef struct {
    int32x4_t m[4], left[4], right[4];  // right: −right shift (srshl by a negative count shifts right)
    int32x4_t offset32;
    int16x8_t offset16;
    int8x16_t lo, hi;
} dot_requant;

/// Requantises the G × 4 accumulators of one row and stores `count` bytes. SHORT (every shift
/// right, every multiplier ≥ 0): sqrdmulh, then RoundingDivideByPOT as `ssra #31` (−1 on negative
/// values, so that `srshl`'s ties-up rounding rounds ties away from zero), exact because sqrdmulh
/// never returns INT32_MIN with a multiplier ≥ 0; the result is at most 2^30 in magnitude, so
/// the offset is added saturating on int16 with the same result as the reference's int32 add.
/// Otherwise the general sequence: left shift, fix-up only in lanes that shift right, the
/// offset added on int32 (wrapping, like the reference).
PW_INLINE void dot_requant_row(int32x4_t a0, int32x4_t a1, int32x4_t a2, int32x4_t a3, const dot_requant *q,
                               int G, int SHORT, int8_t *out, int count) {
    int32x4_t v[4] = {a0, a1, a2, a3};
    for (int i = 0; i < 4; i++) {
        if (i >= G) {
            v[i] = vdupq_n_s32(0);
        } else if (SHORT) {
            v[i] = vqrdmulhq_s32(v[i], q->m[i]);
            v[i] = vrshlq_s32(vsraq_n_s32(v[i], v[i], 31), q->right[i]);
        } else {
            v[i] = vqrdmulhq_s32(vshlq_s32(v[i], q->left[i]), q->m[i]);
            v[i] = vqaddq_s32(v[i], vshrq_n_s32(vandq_s32(v[i], q->right[i]), 31));
            v[i] = vaddq_s32(vrshlq_s32(v[i], q->right[i]), q->offset32);
        }
    }
    int16x8_t h0 = vqmovn_high_s32(vqmovn_s32(v[0]), v[1]);
    if (SHORT) h0 = vqaddq_s16(h0, q->offset16);
    int8x16_t bytes;
    if (G > 2) {
        int16x8_t h1 = vqmovn_high_s32(vqmovn_s32(v[2]), v[3]);
        if (SHORT) h1 = vqaddq_s16(h1, q->offset16);
        bytes = vqmovn_high_s16(vqmovn_s16(h0), h1);
    } else {
        bytes = vcombine_s8(vqmovn_s16(h0), vdup_n_s8(0));
    }
    dot_store(out, vminq_s8(vmaxq_s8(bytes, q->lo), q->hi), count);
}

/// acc[r][i] += W[i] · (lane J of row r): one SDOT per 4 channels × 4 k.
#define DOT_LANEQ(i, J)                                                                           \
    if (G > i)                                                                                    \
        for (int r = 0; r < DOT_MR; r++) acc[r][i] = vdotq_laneq_s32(acc[r][i], wv[i], x[r], J);
#define DOT_LANE(i, J)                                                                            \
    if (G > i)                                                                                    \
        for (int r = 0; r < DOT_MR; r++) acc[r][i] = vdotq_lane_s32(acc[r][i], wv[i], x8[r], J);
/// One group of 4 k (64 weight bytes, of which the G × 16 used) against lane J of every row:
/// each 16-byte weight vector serves all DOT_MR rows.
#define DOT_K4(LANE, J)                                                                           \
    do {                                                                                          \
        int8x16_t wv[4];                                                                          \
        for (int i = 0; i < G; i++) wv[i] = vld1q_s8(w + 16 * i);                                 \
        LANE(0, J) LANE(1, J) LANE(2, J) LANE(3, J)                                               \
        w += 64;                                                                                  \
    } while (0)
#define DOT_STORE_ROW(r)                                                                          \
    if (r < rows_valid) dot_requant_row(acc[r][0], acc[r][1], acc[r][2], acc[r][3], q, G, SHORT, out + (size_t)(r) * p->n, count);

#define DOT_MR 6
#define DOT_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
/// One block of 16 channels (G groups of 4 used: the last block of a layer whose width is not a
/// multiple of 16 skips the empty groups) for DOT_MR rows: XNNPACK's "c4 neondot" scheme, each
/// row's 16 bytes loaded once per 16 k and used lane by lane (vdotq_laneq), each weight vector
/// serving all rows. Accumulators start from the folded bias.
PW_TARGET_DOTPROD PW_INLINE void dot_block(const pw_gemm_plan *p, const int8_t *const *rows, int rows_valid,
                                           const int8_t *w, int c, int G, int SHORT, int8_t *out, int count) {
    const int kp = p->kp;
    int32x4_t acc[DOT_MR][4];
    for (int i = 0; i < 4; i++) acc[0][i] = i < G ? vld1q_s32(p->bias + c + 4 * i) : vdupq_n_s32(0);
    for (int r = 1; r < DOT_MR; r++)
        for (int i = 0; i < 4; i++) acc[r][i] = acc[0][i];
    int k = 0;
    for (; k + 16 <= kp; k += 16) {
        int8x16_t x[DOT_MR];
        for (int r = 0; r < DOT_MR; r++) x[r] = vld1q_s8(rows[r] + k);
        DOT_K4(DOT_LANEQ, 0);
        DOT_K4(DOT_LANEQ, 1);
        DOT_K4(DOT_LANEQ, 2);
        DOT_K4(DOT_LANEQ, 3);
    }
    if (k + 8 <= kp) {
        int8x8_t x8[DOT_MR];
        for (int r = 0; r < DOT_MR; r++) x8[r] = vld1_s8(rows[r] + k);
        DOT_K4(DOT_LANE, 0);
        DOT_K4(DOT_LANE, 1);
        k += 8;
    }
    if (k < kp) {
        int8x8_t x8[DOT_MR];
        for (int r = 0; r < DOT_MR; r++) {
            int32_t v;
            memcpy(&v, rows[r] + k, 4);
            x8[r] = vreinterpret_s8_s32(vdup_n_s32(v));
        }
        DOT_K4(DOT_LANE, 0);
    }
    // The constants are loaded here, not before the loop that needs every register.
    dot_requant constants, *q = &constants;
    for (int i = 0; i < G; i++) {
        constants.m[i] = vld1q_s32(p->multiplier + c + 4 * i);
        constants.right[i] = vnegq_s32(vld1q_s32(p->right + c + 4 * i));
        if (!SHORT) constants.left[i] = vld1q_s32(p->left + c + 4 * i);
    }
    constants.offset32 = vdupq_n_s32(p->g.output_offset);
    constants.offset16 = vdupq_n_s16((int16_t)p->g.output_offset);
    constants.lo = vdupq_n_s8((int8_t)p->g.act_min);
    constants.hi = vdupq_n_s8((int8_t)p->g.act_max);
    DOT_ROWS(DOT_STORE_ROW)
}

/// Arguments of dot_6x16_short (offsets fixed: the assembly reads them by offset).
typedef struct {
    const int8_t *rows[6];                // 0: advanced through K and rewound per block
    const int8_t *weights;                // 48: the first full block's packed weights
    const int32_t *bias, *multiplier, *right;  // 56, 64, 72: the first block's constants (right ≥ 1)
    int8_t *out;                          // 80: row 0's first output byte
    int64_t kp, stride, blocks;           // 88, 96, 104: K padded, output row stride, full blocks (≥ 1)
    int64_t reserved[2];                  // 112: keeps the vectors at 128
    int16_t offset[8];                    // 128: output offset, 8 lanes
    int8_t lo[16], hi[16];                // 144, 160: the activation range
} dot_asm_args;
_Static_assert(offsetof(dot_asm_args, weights) == 48 && offsetof(dot_asm_args, kp) == 88 &&
                   offsetof(dot_asm_args, offset) == 128 && offsetof(dot_asm_args, hi) == 160,
               "dot_6x16_short reads its arguments by offset");

/// The 6×16 tile over `blocks` full blocks of 16 channels, 6 valid rows, the short requantisation
/// (see dot_requant_row): the same arithmetic as dot_block, with hand-allocated registers so
/// that no compiler spills or re-derives anything. v0–v23 accumulate (row r, channels 4i…4i+3 in
/// v(4r+i)), v24–v29 hold 16 bytes of each row, v30/v31 two weight vectors (ldp); after the loop
/// v24–v31 hold the block's multipliers and −right shifts, and once row 0 is requantised v1–v3
/// the offset and the clamp. Rows are read with post-increment and rewound by kp per block.
__attribute__((noinline)) PW_TARGET_DOTPROD static void dot_6x16_short(const dot_asm_args *args) {
    __asm__ volatile(
        ".arch_extension dotprod\n"
        ".macro PW_DOT2 a0, a1, x, lane\n"
        "  sdot v\\a0\\().4s, v30.16b, v\\x\\().4b[\\lane]\n"
        "  sdot v\\a1\\().4s, v31.16b, v\\x\\().4b[\\lane]\n"
        ".endm\n"
        ".macro PW_K4 lane\n"
        "  ldp q30, q31, [x15], #32\n"
        "  PW_DOT2 0, 1, 24, \\lane\n  PW_DOT2 4, 5, 25, \\lane\n  PW_DOT2 8, 9, 26, \\lane\n"
        "  PW_DOT2 12, 13, 27, \\lane\n  PW_DOT2 16, 17, 28, \\lane\n  PW_DOT2 20, 21, 29, \\lane\n"
        "  ldp q30, q31, [x15], #32\n"
        "  PW_DOT2 2, 3, 24, \\lane\n  PW_DOT2 6, 7, 25, \\lane\n  PW_DOT2 10, 11, 26, \\lane\n"
        "  PW_DOT2 14, 15, 27, \\lane\n  PW_DOT2 18, 19, 28, \\lane\n  PW_DOT2 22, 23, 29, \\lane\n"
        ".endm\n"
        ".macro PW_SCALE a0, a1, a2, a3\n"
        "  sqrdmulh v\\a0\\().4s, v\\a0\\().4s, v24.4s\n  sqrdmulh v\\a1\\().4s, v\\a1\\().4s, v25.4s\n"
        "  sqrdmulh v\\a2\\().4s, v\\a2\\().4s, v26.4s\n  sqrdmulh v\\a3\\().4s, v\\a3\\().4s, v27.4s\n"
        "  ssra v\\a0\\().4s, v\\a0\\().4s, #31\n  ssra v\\a1\\().4s, v\\a1\\().4s, #31\n"
        "  ssra v\\a2\\().4s, v\\a2\\().4s, #31\n  ssra v\\a3\\().4s, v\\a3\\().4s, #31\n"
        "  srshl v\\a0\\().4s, v\\a0\\().4s, v28.4s\n  srshl v\\a1\\().4s, v\\a1\\().4s, v29.4s\n"
        "  srshl v\\a2\\().4s, v\\a2\\().4s, v30.4s\n  srshl v\\a3\\().4s, v\\a3\\().4s, v31.4s\n"
        "  sqxtn v\\a0\\().4h, v\\a0\\().4s\n  sqxtn2 v\\a0\\().8h, v\\a1\\().4s\n"
        "  sqxtn v\\a2\\().4h, v\\a2\\().4s\n  sqxtn2 v\\a2\\().8h, v\\a3\\().4s\n"
        ".endm\n"
        ".macro PW_FINISH a0, a2\n"
        "  sqadd v\\a0\\().8h, v\\a0\\().8h, v1.8h\n  sqadd v\\a2\\().8h, v\\a2\\().8h, v1.8h\n"
        "  sqxtn v\\a0\\().8b, v\\a0\\().8h\n  sqxtn2 v\\a0\\().16b, v\\a2\\().8h\n"
        "  smax v\\a0\\().16b, v\\a0\\().16b, v2.16b\n  smin v\\a0\\().16b, v\\a0\\().16b, v3.16b\n"
        "  str q\\a0, [x7]\n"
        ".endm\n"
        ".macro PW_ROW a0, a1, a2, a3\n"
        "  add x7, x7, x4\n"
        "  PW_SCALE \\a0, \\a1, \\a2, \\a3\n"
        "  PW_FINISH \\a0, \\a2\n"
        ".endm\n"
        "  ldp x9, x10, [%[a]]\n"
        "  ldp x11, x12, [%[a], #16]\n"
        "  ldp x13, x14, [%[a], #32]\n"
        "  ldp x15, x0, [%[a], #48]\n"
        "  ldp x1, x2, [%[a], #64]\n"
        "  ldp x3, x5, [%[a], #80]\n"
        "  ldp x4, x6, [%[a], #96]\n"
        "0:\n"
        // Every row's accumulators start from the block's bias: one 64-byte load each.
        "  ld1 {v0.4s, v1.4s, v2.4s, v3.4s}, [x0]\n"
        "  ld1 {v4.4s, v5.4s, v6.4s, v7.4s}, [x0]\n"
        "  ld1 {v8.4s, v9.4s, v10.4s, v11.4s}, [x0]\n"
        "  ld1 {v12.4s, v13.4s, v14.4s, v15.4s}, [x0]\n"
        "  ld1 {v16.4s, v17.4s, v18.4s, v19.4s}, [x0]\n"
        "  ld1 {v20.4s, v21.4s, v22.4s, v23.4s}, [x0], #64\n"
        "  subs x16, x5, #16\n"
        "  b.lo 2f\n"
        "1:\n"
        "  ldr q24, [x9], #16\n  ldr q25, [x10], #16\n  ldr q26, [x11], #16\n"
        "  ldr q27, [x12], #16\n  ldr q28, [x13], #16\n  ldr q29, [x14], #16\n"
        "  PW_K4 0\n  PW_K4 1\n  PW_K4 2\n  PW_K4 3\n"
        "  subs x16, x16, #16\n"
        "  b.hs 1b\n"
        "2:\n"  // x16 = remaining − 16: its bits 3 and 2 are those of the remaining 0, 4, 8 or 12
        "  tbz x16, #3, 3f\n"
        "  ldr d24, [x9], #8\n  ldr d25, [x10], #8\n  ldr d26, [x11], #8\n"
        "  ldr d27, [x12], #8\n  ldr d28, [x13], #8\n  ldr d29, [x14], #8\n"
        "  PW_K4 0\n  PW_K4 1\n"
        "3:\n"
        "  tbz x16, #2, 4f\n"
        "  ldr s24, [x9], #4\n  ldr s25, [x10], #4\n  ldr s26, [x11], #4\n"
        "  ldr s27, [x12], #4\n  ldr s28, [x13], #4\n  ldr s29, [x14], #4\n"
        "  PW_K4 0\n"
        "4:\n"
        "  sub x9, x9, x5\n  sub x10, x10, x5\n  sub x11, x11, x5\n"
        "  sub x12, x12, x5\n  sub x13, x13, x5\n  sub x14, x14, x5\n"
        "  ld1 {v24.4s, v25.4s, v26.4s, v27.4s}, [x1], #64\n"
        "  ld1 {v28.4s, v29.4s, v30.4s, v31.4s}, [x2], #64\n"
        "  neg v28.4s, v28.4s\n  neg v29.4s, v29.4s\n  neg v30.4s, v30.4s\n  neg v31.4s, v31.4s\n"
        "  PW_SCALE 0, 1, 2, 3\n"  // row 0 frees v1, then v2 and v3, for the offset and the clamp
        "  ldr q1, [%[a], #128]\n"
        "  sqadd v0.8h, v0.8h, v1.8h\n  sqadd v2.8h, v2.8h, v1.8h\n"
        "  sqxtn v0.8b, v0.8h\n  sqxtn2 v0.16b, v2.8h\n"
        "  ldr q2, [%[a], #144]\n  ldr q3, [%[a], #160]\n"
        "  smax v0.16b, v0.16b, v2.16b\n  smin v0.16b, v0.16b, v3.16b\n"
        "  str q0, [x3]\n"
        "  mov x7, x3\n"
        "  PW_ROW 4, 5, 6, 7\n  PW_ROW 8, 9, 10, 11\n  PW_ROW 12, 13, 14, 15\n"
        "  PW_ROW 16, 17, 18, 19\n  PW_ROW 20, 21, 22, 23\n"
        "  add x3, x3, #16\n"
        "  subs x6, x6, #1\n"
        "  b.ne 0b\n"
        ".purgem PW_DOT2\n.purgem PW_K4\n.purgem PW_SCALE\n.purgem PW_FINISH\n.purgem PW_ROW\n"
        :
        : [a] "r"(args)
        : "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x9", "x10", "x11", "x12", "x13", "x14", "x15", "x16",
          "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15",
          "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30",
          "v31", "cc", "memory");
}

/// 6 rows × 16 channels per block, SDOT (1.2 instructions per SDOT in the main loop, against
/// 1.6 for the former 4-row tile that broadcast 4 bytes of each row per 4 k and reloaded the
/// weights for every 4 rows). The block's requantisation constants are loaded once for 6 rows;
/// conv_task's patch scratch holds MR_MAX (8) ≥ 6 rows.
PW_TARGET_DOTPROD static void tile_6x16c4_neondot(const pw_gemm_plan *p, const int8_t *const *rows, int rows_valid,
                                                  int8_t *out) {
    const int short_requant = p->right_shift_only;
    int nb = 0;
    if (short_requant && rows_valid == 6 && p->n >= 16) {
        // Every full block of a whole tile in assembly; a partial last tile, the general
        // requantisation and a layer's last block narrower than 16 in C.
        dot_asm_args args;
        for (int r = 0; r < 6; r++) args.rows[r] = rows[r];
        args.weights = p->weights;
        args.bias = p->bias;
        args.multiplier = p->multiplier;
        args.right = p->right;
        args.out = out;
        args.kp = p->kp;
        args.stride = p->n;
        args.blocks = p->n / 16;
        args.reserved[0] = args.reserved[1] = 0;
        vst1q_s16(args.offset, vdupq_n_s16((int16_t)p->g.output_offset));
        vst1q_s8(args.lo, vdupq_n_s8((int8_t)p->g.act_min));
        vst1q_s8(args.hi, vdupq_n_s8((int8_t)p->g.act_max));
        dot_6x16_short(&args);
        nb = p->n / 16;
    }
    for (; nb < p->nblocks; nb++) {
        const int c = nb * 16, count = block_width(p, nb);
        const int8_t *w = p->weights + (size_t)nb * p->kp * 16;
        int8_t *o = out + c;
        if (count == 16) {
            if (short_requant) dot_block(p, rows, rows_valid, w, c, 4, 1, o, 16);
            else dot_block(p, rows, rows_valid, w, c, 4, 0, o, 16);
        } else {
            // The last block of a layer whose width is not a multiple of 16: only its groups of 4.
            switch ((count + 3) / 4) {
            case 1: dot_block(p, rows, rows_valid, w, c, 1, short_requant, o, count); break;
            case 2: dot_block(p, rows, rows_valid, w, c, 2, short_requant, o, count); break;
            case 3: dot_block(p, rows, rows_valid, w, c, 3, short_requant, o, count); break;
            default: dot_block(p, rows, rows_valid, w, c, 4, short_requant, o, count); break;
            }
        }
    }
}
#undef DOT_MR
#undef DOT_ROWS
#undef DOT_LANEQ
#undef DOT_LANE
#undef DOT_K4
#undef DOT_STORE_ROW
#endif

static int tile_rows(int isa, int nblocks) {
    switch (isa) {
    case PW_ISA_AVX512VNNI: return nblocks >= 4 ? 6 : 8;
    case PW_ISA_NEONDOT: return 6;
    default: return 2;
    }
}

static tile_fn tile_for(int isa) {
    switch (isa) {
#if defined(__x86_64__)
    case PW_ISA_SSE41: return tile_2x16c4_sse41;
    case PW_ISA_AVX2: return tile_2x16c4_avx2;
    case PW_ISA_AVX512VNNI: return tile_avx512vnni;
#endif
#if defined(__aarch64__)
    case PW_ISA_NEON: return tile_2x16c4_neon;
    case PW_ISA_NEONDOT: return tile_6x16c4_neondot;
#endif
    default: return tile_2x16c4_scalar;
    }
}

/// The neon tile's per-block constants, in the order it reads them (see neon_2x16_blocks): the
/// folded bias as the accumulators hold their channels ([b0, 0, b1, 0], [b2, 0, b3, 0], ...: the
/// pair sums of accumulator 2i are channels 4i, 4i+1), once per row of the tile; the multipliers;
/// the right shifts negated (srshl shifts right by a negative amount); the left shifts when some
/// channel has one. Padding channels are all zeros (their outputs are never stored).
static int pack_neon_params(pw_gemm_plan *p) {
    int any_left = 0, any_unshifted = 0;
    for (int n = 0; n < p->n; n++) {
        any_left |= p->left[n] != 0;
        any_unshifted |= p->right[n] == 0;
    }
    p->neon_flags = any_left | any_unshifted << 1 | (p->g.act_min > -128 || p->g.act_max < 127) << 2;
    const size_t words = any_left ? 112 : 96;
    p->neon_params = calloc((size_t)p->nblocks * words, 4);
    if (!p->neon_params) return 0;
    for (int nb = 0; nb < p->nblocks; nb++) {
        int32_t *block = p->neon_params + (size_t)nb * words;
        for (int j = 0; j < 16 && nb * 16 + j < p->n; j++) {
            const int n = nb * 16 + j;
            block[2 * j] = block[32 + 2 * j] = p->bias[n];
            block[64 + j] = p->multiplier[n];
            block[80 + j] = -p->right[n];
            if (any_left) block[96 + j] = p->left[n];
        }
    }
    return 1;
}

pw_gemm_plan *pw_gemm_pack(const pw_conv_geometry *g, const int8_t *filter, const int32_t *bias,
                           const int32_t *multipliers, const int32_t *shifts, int isa) {
    if (!pw_isa_supported(isa)) return NULL;
    pw_gemm_plan *p = calloc(1, sizeof(pw_gemm_plan));
    if (!p) return NULL;
    p->g = *g;
    p->isa = isa;
    p->n = g->output_depth;
    p->k = g->filter_height * g->filter_width * g->input_depth;
    p->kp = (p->k + 3) / 4 * 4;
    p->nblocks = (p->n + 15) / 16;
    p->mr = tile_rows(isa, p->nblocks);
    // Measured on MoveNet's shapes (Zen 5): the row sums pay off in the 6x64 tile from K = 64 on
    // (up to 20 % faster at K ≥ 320); the 8-row tiles of narrow layers are faster without.
    p->memory_input = isa == PW_ISA_AVX512VNNI && p->nblocks >= 4 && p->kp >= 64;
    p->direct = g->filter_height == 1 && g->filter_width == 1 && g->stride_height == 1 && g->stride_width == 1 &&
                g->pad_height == 0 && g->pad_width == 0 && g->input_depth % 4 == 0;
    size_t channels = (size_t)p->nblocks * 16;
    p->weights = calloc(channels * (size_t)p->kp, 1);
    p->bias = calloc(channels, 4);
    p->multiplier = calloc(channels, 4);
    p->left = calloc(channels, 4);
    p->right = calloc(channels, 4);
    // Patch convolutions only: each thread's patches, plus the 64 bytes a whole-patch store may
    // write past the last one, rounded to cache lines so that threads never write the same line.
    // Every byte a tile reads is written first (no initialisation; untouched pages cost no memory).
    p->scratch_stride = ((size_t)MR_MAX * p->kp + 64 + 63) / 64 * 64;
    p->scratch = p->direct ? NULL : aligned_alloc(64, (size_t)PW_MAX_THREADS * p->scratch_stride);
    if (!p->weights || !p->bias || !p->multiplier || !p->left || !p->right || (!p->direct && !p->scratch)) {
        pw_gemm_destroy(p);
        return NULL;
    }
    p->no_minus_128 = 1;
    p->right_shift_only = 1;
    for (int n = 0; n < p->n; n++) p->right_shift_only &= shifts[n] < 0 && multipliers[n] >= 0;
    for (size_t i = 0; i < (size_t)p->n * p->k; i++) p->no_minus_128 &= filter[i] != -128;
    for (int n = 0; n < p->n; n++) {
        int32_t sum = 0;
        int8_t *block = p->weights + (size_t)(n / 16) * p->kp * 16;
        for (int k = 0; k < p->k; k++) {
            int8_t w = filter[(size_t)n * p->k + k];
            sum += w;
            // vpdpbusd multiplies unsigned by signed bytes: with memory_input the VNNI tile reads
            // weights as w + 128, otherwise the input as x + 128.
            block[(k / 4) * 64 + (n % 16) * 4 + k % 4] = p->memory_input ? (int8_t)(w ^ 0x80) : w;
        }
        // Wrapping int32 arithmetic, like the reference's accumulator; 128·Σ w comes off when the
        // tile reads the input as x + 128.
        uint32_t folded = (uint32_t)(bias ? bias[n] : 0) + (uint32_t)g->input_offset * (uint32_t)sum;
        if (isa == PW_ISA_AVX512VNNI && !p->memory_input) folded -= 128u * (uint32_t)sum;
        p->bias[n] = (int32_t)folded;
        p->multiplier[n] = multipliers[n];
        p->left[n] = shifts[n] > 0 ? shifts[n] : 0;
        p->right[n] = shifts[n] > 0 ? 0 : -shifts[n];
    }
    if (isa == PW_ISA_NEON && !pack_neon_params(p)) {
        pw_gemm_destroy(p);
        return NULL;
    }
    return p;
}

void pw_gemm_destroy(pw_gemm_plan *p) {
    if (!p) return;
    free(p->weights);
    free(p->bias);
    free(p->multiplier);
    free(p->left);
    free(p->right);
    free(p->scratch);
    free(p->neon_params);
    free(p);
}

int pw_gemm_isa(const pw_gemm_plan *p) { return p->isa; }
int pw_gemm_is_direct(const pw_gemm_plan *p) { return p->direct; }

void pw_gemm_tile(const pw_gemm_plan *p, int *rows, int *channels) {
    *rows = p->mr;
    if (p->isa == PW_ISA_AVX512VNNI) *channels = p->mr == 8 ? 16 * p->nblocks : 64;
    else *channels = 16;
}

typedef struct {
    const pw_gemm_plan *plan;
    const int8_t *input;
    int8_t *output;
    int m, rows_per_task;
    tile_fn tile;
} conv_job;

#if defined(__x86_64__)
/// A patch of at most 64 bytes whose filter rows are each one contiguous run: every run lands in
/// place through a masked load and the patch is stored whole (64 bytes, into the scratch's spare
/// room), so the tile's 4-byte reads are forwarded from one store instead of straddling several
/// overlapping small ones (a store-forwarding stall each). Bytes past k are zero.
PW_TARGET_AVX512VNNI static void patch_avx512(const int8_t *first, size_t row_stride, int rows, int run,
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

/// Copies the receptive field of output pixel (batch, oy, ox) into `patch` (kp bytes); taps in the padding
/// get the input zero point, so they contribute W · (zp + input_offset) = 0, as the reference skips them.
static inline void gather_patch(const pw_gemm_plan *p, const int8_t *input, int batch, int oy, int ox,
                                int8_t *patch) {
    const pw_conv_geometry *g = &p->g;
    int8_t zero_point = (int8_t)(-g->input_offset);
    int c = g->input_depth;
    int8_t *dst = patch;
    int iy0 = oy * g->stride_height - g->pad_height, ix0 = ox * g->stride_width - g->pad_width;
    if (g->dilation_width == 1 && iy0 >= 0 && ix0 >= 0 && ix0 + g->filter_width <= g->input_width &&
        iy0 + (g->filter_height - 1) * g->dilation_height < g->input_height) {
        // The whole window is inside the image: one contiguous run of filter_width × c bytes per
        // filter row (9 bytes for MoveNet's 3x3 RGB stem), copied without per-tap checks.
        size_t run = (size_t)g->filter_width * c;
#if defined(__x86_64__)
        if (p->isa == PW_ISA_AVX512VNNI && p->kp <= 64) {
            const int8_t *first =
                input + (((size_t)batch * g->input_height + iy0) * g->input_width + ix0) * c;
            patch_avx512(first, (size_t)g->dilation_height * g->input_width * c, g->filter_height, (int)run, patch);
            return;
        }
#endif
        for (int fy = 0; fy < g->filter_height; fy++, dst += run) {
            const int8_t *src =
                input + (((size_t)batch * g->input_height + iy0 + fy * g->dilation_height) * g->input_width + ix0) * c;
            if (run >= 8 && run <= 16) {
                uint64_t head, tail;
                memcpy(&head, src, 8);
                memcpy(&tail, src + run - 8, 8);
                memcpy(dst, &head, 8);
                memcpy(dst + run - 8, &tail, 8);
            } else {
                memcpy(dst, src, run);
            }
        }
        if (p->kp > p->k) memset(patch + p->k, 0, (size_t)(p->kp - p->k));
        return;
    }
    for (int fy = 0; fy < g->filter_height; fy++) {
        int iy = oy * g->stride_height - g->pad_height + fy * g->dilation_height;
        for (int fx = 0; fx < g->filter_width; fx++, dst += c) {
            int ix = ox * g->stride_width - g->pad_width + fx * g->dilation_width;
            if (iy < 0 || iy >= g->input_height || ix < 0 || ix >= g->input_width) {
                for (int j = 0; j < c; j++) dst[j] = zero_point;
            } else {
                const int8_t *src = input + (((size_t)batch * g->input_height + iy) * g->input_width + ix) * c;
                if (c < 16) {
                    for (int j = 0; j < c; j++) dst[j] = src[j];  // an RGB pixel: no memcpy call
                } else {
                    memcpy(dst, src, (size_t)c);
                }
            }
        }
    }
    if (p->kp > p->k) memset(patch + p->k, 0, (size_t)(p->kp - p->k));
}

static void conv_task(void *context, int task, int thread) {
    const conv_job *job = context;
    const pw_gemm_plan *p = job->plan;
    int start = task * job->rows_per_task;
    int end = start + job->rows_per_task;
    if (end > job->m) end = job->m;
#if defined(__aarch64__)
    if (p->direct && p->isa == PW_ISA_NEON) {
        neon_direct_rows(p, job->input + (size_t)start * p->k, end - start, job->output + (size_t)start * p->n);
        return;
    }
#endif
    int8_t *scratch = p->scratch + (size_t)thread * p->scratch_stride;
    const int8_t *rows[MR_MAX];
    // The output pixel of row `start`, then stepped along (no divisions per patch).
    const int width = p->g.output_width, height = p->g.output_height;
    int batch = start / (width * height), oy = start % (width * height) / width, ox = start % width;
    for (int m = start; m < end; m += p->mr) {
        int valid = end - m < p->mr ? end - m : p->mr;
        for (int r = 0; r < p->mr; r++) {
            int row = m + (r < valid ? r : valid - 1);
            if (p->direct) {
                rows[r] = job->input + (size_t)row * p->k;
            } else if (r < valid) {
                gather_patch(p, job->input, batch, oy, ox, scratch + (size_t)r * p->kp);
                rows[r] = scratch + (size_t)r * p->kp;
                if (++ox == width) {
                    ox = 0;
                    if (++oy == height) {
                        oy = 0;
                        batch++;
                    }
                }
            } else {
                rows[r] = rows[valid - 1];
            }
        }
        job->tile(p, rows, valid, job->output + (size_t)m * p->n);
    }
}

void pw_conv_run(const pw_gemm_plan *p, pw_pool *pool, const int8_t *input, int8_t *output) {
    conv_job job;
    job.plan = p;
    job.input = input;
    job.output = output;
    job.m = p->g.batches * p->g.output_height * p->g.output_width;
    job.tile = tile_for(p->isa);
    // Below ~256K multiply-adds a wake-up of the other threads costs more than it saves.
    int64_t work = (int64_t)job.m * p->n * p->kp;
    job.rows_per_task = work < (1 << 18) ? job.m : pw_task_size(job.m, pw_pool_threads(pool), p->mr);
    int tasks = (job.m + job.rows_per_task - 1) / job.rows_per_task;
    pw_pool_run(pool, tasks, conv_task, &job);
}
