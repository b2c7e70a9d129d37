// The CONV_2D GEMM's plan as its tiles read it (not exported to Swift): gemm.c packs it and runs
// it; the ISA tiles live in gemm_x86.c (sse41, avx2, avx512vnni), gemm_neon.c (Cortex-A72/A53) and
// gemm_neondot.c (SDOT). Weights are packed "c4": blocks of 16 output channels, for each group of
// 4 k: 16 channels × 4 bytes (64 bytes), K padded with zeros.
#ifndef POSEWATCH_CKERNELS_GEMM_PLAN_H
#define POSEWATCH_CKERNELS_GEMM_PLAN_H
#include "requant.h"
#include <stddef.h>

#define MR_MAX 8

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
    attribute void name(const pw_gemm_plan *p, const int8_t *const *rows, int rows_valid, int8_t *out) { \
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

#if defined(__x86_64__)
/// 2 rows × 16 channels, the portable tile compiled for SSE4.1.
void pw_gemm_tile_sse41(const pw_gemm_plan *p, const int8_t *const *rows, int rows_valid, int8_t *out);
/// 2 rows × 16 channels: vpmovsxbw + vpmaddwd.
void pw_gemm_tile_avx2(const pw_gemm_plan *p, const int8_t *const *rows, int rows_valid, int8_t *out);
/// 6 rows × 64 channels (8 rows × all channels of a layer with at most 48): vpdpbusd.
void pw_gemm_tile_avx512vnni(const pw_gemm_plan *p, const int8_t *const *rows, int rows_valid, int8_t *out);
/// Copies a patch of at most 64 bytes whose filter rows are each one contiguous run of `run` bytes.
void pw_gemm_patch_avx512(const int8_t *first, size_t row_stride, int rows, int run, int8_t *patch);
#endif
#if defined(__aarch64__)
/// 2 rows × 16 channels, smull + smlal + sadalp (asm).
void pw_gemm_tile_neon(const pw_gemm_plan *p, const int8_t *const *rows, int rows_valid, int8_t *out);
/// A 1x1 convolution's rows [0, m) read in place, two at a time, by the neon tile's loop.
void pw_gemm_neon_direct_rows(const pw_gemm_plan *p, const int8_t *input, int m, int8_t *output);
/// 6 rows × 16 channels per block, lane-indexed SDOT (asm for whole tiles).
void pw_gemm_tile_neondot(const pw_gemm_plan *p, const int8_t *const *rows, int rows_valid, int8_t *out);
#endif

#endif
