// DEPTHWISE_CONV_2D int8, depth multiplier 1, any filter size and stride (MoveNet: 3x3, stride 1
// and 2). Per output pixel the valid tap window is computed once (padding is handled there, not
// in the inner loop); the inner loop runs over 16 channels with int16 products that are exact
// (|w| ≤ 128, |x + input_offset| ≤ 255: |product| ≤ 32640), then requantizes with the ISA's
// 16-lane requantization. Weights are packed at Prepare as int16 [taps][channels padded to 32].
// Variants: 16c scalar here (the portable loop, compiler-vectorised); in depthwise_x86.c 16c sse41
// (the same loop), 16c avx2 and 32c avx512vnni (vpmovsxbw + vpmullw + widening adds, vector
// requantization); in depthwise_neon.c 16c neon (vmovl + vmlal) for shapes other than 3x3, and for
// 3x3 (MoveNet's every depthwise layer) the neon/neondot kernel of depthwise_row_neon3x3: int8
// weights, offset folded into the bias, zero-point row for padding.
#include "depthwise_plan.h"
#include <stdlib.h>

pw_depthwise_plan *pw_depthwise_pack(const pw_conv_geometry *g, const int8_t *filter, const int32_t *bias,
                                     const int32_t *multipliers, const int32_t *shifts, int isa) {
    if (!pw_isa_supported(isa) || g->input_depth != g->output_depth) return NULL;
    pw_depthwise_plan *p = calloc(1, sizeof(pw_depthwise_plan));
    if (!p) return NULL;
    p->g = *g;
    p->isa = isa;
    p->channels = g->output_depth;
    p->padded = (p->channels + 31) / 32 * 32;
    int taps = g->filter_height * g->filter_width;
    p->weights = calloc((size_t)taps * p->padded, 2);
    p->bias = calloc((size_t)p->padded, 4);
    p->multiplier = calloc((size_t)p->padded, 4);
    p->left = calloc((size_t)p->padded, 4);
    p->right = calloc((size_t)p->padded, 4);
    if (!p->weights || !p->bias || !p->multiplier || !p->left || !p->right) {
        pw_depthwise_destroy(p);
        return NULL;
    }
    for (int t = 0; t < taps; t++)
        for (int c = 0; c < p->channels; c++) p->weights[(size_t)t * p->padded + c] = filter[(size_t)t * p->channels + c];
    for (int c = 0; c < p->channels; c++) {
        p->bias[c] = bias ? bias[c] : 0;
        p->multiplier[c] = multipliers[c];
        p->left[c] = shifts[c] > 0 ? shifts[c] : 0;
        p->right[c] = shifts[c] > 0 ? 0 : -shifts[c];
    }
    if (isa == PW_ISA_AVX512VNNI) {
        int blocks = p->padded / 32;
        p->pair_count = (taps + 1) / 2;
        p->pairs = calloc((size_t)p->pair_count * blocks * 64, 2);
        p->interior_bias = calloc((size_t)p->padded, 4);
        p->tap_offsets = calloc((size_t)taps + 1, 8);
        if (!p->pairs || !p->interior_bias || !p->tap_offsets) {
            pw_depthwise_destroy(p);
            return NULL;
        }
        for (int t = 0; t < taps; t++) {
            int fy = t / g->filter_width, fx = t % g->filter_width;
            p->tap_offsets[t] = ((int64_t)fy * g->dilation_height * g->input_width + (int64_t)fx * g->dilation_width) *
                                p->channels;
        }
        p->tap_offsets[taps] = p->tap_offsets[taps - 1];  // odd count: a real address, weight 0
        for (int c = 0; c < p->channels; c++) {
            uint32_t sum = 0;
            for (int t = 0; t < taps; t++) sum += (uint32_t)(int32_t)filter[(size_t)t * p->channels + c];
            p->interior_bias[c] = (int32_t)((uint32_t)p->bias[c] + (uint32_t)g->input_offset * sum);
        }
        for (int pp = 0; pp < p->pair_count; pp++)
            for (int b = 0; b < blocks; b++) {
                int16_t *dst = p->pairs + ((size_t)pp * blocks + b) * 64;
                for (int half = 0; half < 2; half++)
                    for (int lane = 0; lane < 4; lane++)
                        for (int j = 0; j < 4; j++)
                            for (int k = 0; k < 2; k++) {
                                int t = 2 * pp + k, c = b * 32 + 8 * lane + 4 * half + j;
                                int16_t w = (t < taps && c < p->channels) ? filter[(size_t)t * p->channels + c] : 0;
                                dst[half * 32 + lane * 8 + 2 * j + k] = w;
                            }
            }
    }
#if defined(__aarch64__)
    if ((isa == PW_ISA_NEON || isa == PW_ISA_NEONDOT) && !pw_depthwise_pack_neon3x3(p, filter)) {
        pw_depthwise_destroy(p);
        return NULL;
    }
#endif
    return p;
}

void pw_depthwise_destroy(pw_depthwise_plan *p) {
    if (!p) return;
    free(p->weights);
    free(p->bias);
    free(p->multiplier);
    free(p->left);
    free(p->right);
    free(p->pairs);
    free(p->interior_bias);
    free(p->tap_offsets);
    free(p->neon_blocks);
    free(p->zero_point_row);
    free(p);
}

int pw_depthwise_isa(const pw_depthwise_plan *p) { return p->isa; }

DEPTHWISE_ROW(depthwise_row_scalar, , 16, (void)0, PORTABLE_DECLARE, PORTABLE_TAP, pw_requant16_scalar(acc, &q, out + c0, 16), \
              PORTABLE_DECLARE, PORTABLE_TAP, pw_requant16_scalar(acc, &q, out + c0, 16))

void pw_depthwise_run(const pw_depthwise_plan *p, pw_pool *pool, const int8_t *input, int8_t *output) {
    depthwise_job job = {p, input, output};
    pw_task_fn fn = depthwise_row_scalar;
    switch (p->isa) {
#if defined(__x86_64__)
    case PW_ISA_SSE41:
    case PW_ISA_AVX2:
    case PW_ISA_AVX512VNNI: fn = pw_depthwise_x86_row_for(p); break;
#endif
#if defined(__aarch64__)
    case PW_ISA_NEON:
    case PW_ISA_NEONDOT: fn = pw_depthwise_neon_row_for(p); break;
#endif
    default: break;
    }
    int64_t work = (int64_t)p->g.batches * p->g.output_height * p->g.output_width * p->channels *
                   p->g.filter_height * p->g.filter_width;
    pw_pool_run(work < (1 << 16) ? NULL : pool, p->g.batches * p->g.output_height, fn, &job);
}
