// The DEPTHWISE_CONV_2D plan as its rows read it (not exported to Swift): depthwise.c packs it and
// runs it; the rows of each ISA live in depthwise_x86.c (sse41, avx2, avx512vnni) and
// depthwise_neon.c (neon and neondot, with the 3x3 packing they read).
#ifndef POSEWATCH_CKERNELS_DEPTHWISE_PLAN_H
#define POSEWATCH_CKERNELS_DEPTHWISE_PLAN_H
#include "requant.h"

struct pw_depthwise_plan {
    pw_conv_geometry g;
    int isa;
    int32_t channels, padded;
    int16_t *weights;
    int32_t *bias, *multiplier, *left, *right;
    // avx512vnni, pixels whose whole window is inside the image: taps in pairs for vpdpwssd
    // (per pair and 32-channel block: 32 int16 for the unpacklo half, 32 for the unpackhi half),
    // the input offset folded into the bias (Σ w · offset), and each tap's byte offset.
    int16_t *pairs;
    int32_t *interior_bias;
    int64_t *tap_offsets;
    int pair_count;
    // neon/neondot 3x3 (see depthwise_row_neon3x3): per block of 16 channels (the last block ends
    // at the last channel, overlapping its predecessor when C % 16 ≠ 0), 9 taps × 16 int8 weights,
    // then int32 × 16 each: the interior bias (bias + input_offset · Σ w), the multiplier, the
    // negated right shift and (only when some channel shifts left) the left shift. `zero_point_row`
    // is C bytes of the input zero point, the taps' source outside the image (it adds w · zp +
    // input_offset · w = 0, as the reference's skipped tap).
    // When 1 ≤ C % 16 ≤ 8, an 8-channel block for channels C − 8 … C − 1 follows (9 × 8 weights,
    // then 8 × int32 bias, multiplier, −right: NEON3X3_TAIL8_BYTES) for the assembly path, which
    // then runs C / 16 blocks of 16 and this one instead of a second, overlapping block of 16.
    int8_t *neon_blocks, *zero_point_row;
    // neondot (with pairs and no left shift): the first 128 weight bytes of each block of 16 are
    // in SDOT order instead (NEON3X3_BLOCK_SDOT_ASM).
    int neon_block_bytes, neon_paired, neon_left, neon_tail8, neon_sdot;
};

typedef struct {
    const pw_depthwise_plan *plan;
    const int8_t *input;
    int8_t *output;
} depthwise_job;

/// One output row: for each pixel, the tap window, then blocks of 16 channels. DECLARE sets up
/// the 16 accumulators, TAP adds one tap for 16 channels (x, w), FINISH requantizes and stores.
/// A last block of fewer than 16 channels runs the portable loop.
#define DEPTHWISE_ROW(name, attribute, BLOCK, INTERIOR, DECLARE, TAP, FINISH, DECLARE16, TAP16, FINISH16)                                                    \
    attribute static void name(void *context, int task, int thread) {                                           \
        (void)thread;                                                                                            \
        const depthwise_job *job = context;                                                                      \
        const pw_depthwise_plan *p = job->plan;                                                                  \
        const pw_conv_geometry *g = &p->g;                                                                       \
        int batch = task / g->output_height, oy = task % g->output_height;                                      \
        int C = p->channels;                                                                                     \
        int16_t offset = (int16_t)g->input_offset;                                                              \
        int iy0 = oy * g->stride_height - g->pad_height;                                                        \
        int fy0 = 0, fy1 = g->filter_height;                                                                     \
        while (fy0 < fy1 && iy0 + fy0 * g->dilation_height < 0) fy0++;                                         \
        while (fy1 > fy0 && iy0 + (fy1 - 1) * g->dilation_height >= g->input_height) fy1--;                    \
        const int8_t *image = job->input + (size_t)batch * g->input_height * g->input_width * C;               \
        int8_t *out = job->output + (((size_t)batch * g->output_height + oy) * g->output_width) * C;           \
        for (int ox = 0; ox < g->output_width; ox++, out += C) {                                                 \
            int ix0 = ox * g->stride_width - g->pad_width;                                                       \
            int fx0 = 0, fx1 = g->filter_width;                                                                  \
            while (fx0 < fx1 && ix0 + fx0 * g->dilation_width < 0) fx0++;                                       \
            while (fx1 > fx0 && ix0 + (fx1 - 1) * g->dilation_width >= g->input_width) fx1--;                  \
            int c0 = 0;                                                                                          \
            int interior = fy0 == 0 && fy1 == g->filter_height && fx0 == 0 && fx1 == g->filter_width;          \
            for (; c0 + BLOCK <= C; c0 += BLOCK) {                                                               \
                if (interior) { INTERIOR; }                                                                      \
                DECLARE;                                                                                         \
                for (int fy = fy0; fy < fy1; fy++) {                                                             \
                    const int8_t *row = image + (size_t)(iy0 + fy * g->dilation_height) * g->input_width * C;   \
                    for (int fx = fx0; fx < fx1; fx++) {                                                         \
                        const int8_t *x = row + (size_t)(ix0 + fx * g->dilation_width) * C + c0;                \
                        const int16_t *w = p->weights + (size_t)(fy * g->filter_width + fx) * p->padded + c0;    \
                        TAP;                                                                                     \
                    }                                                                                            \
                }                                                                                                \
                pw_requant16 q = {p->bias + c0, p->multiplier + c0, p->left + c0, p->right + c0,                 \
                                  g->output_offset, g->act_min, g->act_max};                                     \
                FINISH;                                                                                          \
            }                                                                                                    \
            for (; c0 + 16 <= C; c0 += 16) {                                                                     \
                DECLARE16;                                                                                       \
                for (int fy = fy0; fy < fy1; fy++) {                                                             \
                    const int8_t *row = image + (size_t)(iy0 + fy * g->dilation_height) * g->input_width * C;   \
                    for (int fx = fx0; fx < fx1; fx++) {                                                         \
                        const int8_t *x = row + (size_t)(ix0 + fx * g->dilation_width) * C + c0;                \
                        const int16_t *w = p->weights + (size_t)(fy * g->filter_width + fx) * p->padded + c0;    \
                        TAP16;                                                                                   \
                    }                                                                                            \
                }                                                                                                \
                pw_requant16 q = {p->bias + c0, p->multiplier + c0, p->left + c0, p->right + c0,                 \
                                  g->output_offset, g->act_min, g->act_max};                                     \
                FINISH16;                                                                                        \
            }                                                                                                    \
            for (; c0 < C; c0 += 16) {                                                                           \
                int width = C - c0 < 16 ? C - c0 : 16;                                                           \
                int32_t acc[16] = {0};                                                                           \
                for (int fy = fy0; fy < fy1; fy++) {                                                             \
                    const int8_t *row = image + (size_t)(iy0 + fy * g->dilation_height) * g->input_width * C;   \
                    for (int fx = fx0; fx < fx1; fx++) {                                                         \
                        const int8_t *x = row + (size_t)(ix0 + fx * g->dilation_width) * C + c0;                \
                        const int16_t *w = p->weights + (size_t)(fy * g->filter_width + fx) * p->padded + c0;    \
                        for (int j = 0; j < width; j++) acc[j] += w[j] * (x[j] + offset);                        \
                    }                                                                                            \
                }                                                                                                \
                pw_requant16 q = {p->bias + c0, p->multiplier + c0, p->left + c0, p->right + c0,                 \
                                  g->output_offset, g->act_min, g->act_max};                                     \
                pw_requant16_scalar(acc, &q, out + c0, width);                                                  \
            }                                                                                                    \
        }                                                                                                        \
    }

#define PORTABLE_DECLARE int32_t acc[16] = {0}
#define PORTABLE_TAP for (int j = 0; j < 16; j++) acc[j] += (int16_t)(w[j] * (int16_t)(x[j] + offset))

#if defined(__x86_64__)
/// The row function of an x86 plan's ISA (sse41, avx2, avx512vnni).
pw_task_fn pw_depthwise_x86_row_for(const pw_depthwise_plan *p);
#endif
#if defined(__aarch64__)
/// Packs the 3x3 blocks when the plan fits them (see depthwise_neon.c); 0 only when an allocation fails.
int pw_depthwise_pack_neon3x3(pw_depthwise_plan *p, const int8_t *filter);
/// The row function of a neon or neondot plan: the 3x3 kernel's variant, or the generic loop.
pw_task_fn pw_depthwise_neon_row_for(const pw_depthwise_plan *p);
#endif

#endif
