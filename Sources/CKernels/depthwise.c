// DEPTHWISE_CONV_2D int8, depth multiplier 1, any filter size and stride (MoveNet: 3x3, stride 1
// and 2). Per output pixel the valid tap window is computed once (padding is handled there, not
// in the inner loop); the inner loop runs over 16 channels with int16 products that are exact
// (|w| ≤ 128, |x + input_offset| ≤ 255: |product| ≤ 32640), then requantizes with the ISA's
// 16-lane requantization. Weights are packed at Prepare as int16 [taps][channels padded to 32].
// Variants: 16c scalar/sse41 (portable loop, compiler-vectorised), 16c avx2 and 32c avx512vnni
// (vpmovsxbw + vpmullw + widening adds, vector requantization), 16c neon (vmovl + vmlal).
#include "requant.h"
#include <stdlib.h>

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
};

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
    free(p);
}

int pw_depthwise_isa(const pw_depthwise_plan *p) { return p->isa; }

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
DEPTHWISE_ROW(depthwise_row_scalar, , 16, (void)0, PORTABLE_DECLARE, PORTABLE_TAP, pw_requant16_scalar(acc, &q, out + c0, 16), \
              PORTABLE_DECLARE, PORTABLE_TAP, pw_requant16_scalar(acc, &q, out + c0, 16))
#if defined(__x86_64__)
DEPTHWISE_ROW(depthwise_row_sse41, PW_TARGET_SSE41, 16, (void)0, PORTABLE_DECLARE, PORTABLE_TAP,
              pw_requant16_scalar(acc, &q, out + c0, 16), PORTABLE_DECLARE, PORTABLE_TAP,
              pw_requant16_scalar(acc, &q, out + c0, 16))
#define AVX2_DECLARE                                  \
    __m256i acc0 = _mm256_setzero_si256();            \
    __m256i acc1 = _mm256_setzero_si256();            \
    const __m256i offset16 = _mm256_set1_epi16(offset)
#define AVX2_TAP                                                                                                \
    do {                                                                                                        \
        __m256i xv = _mm256_add_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)x)), offset16);    \
        __m256i product = _mm256_mullo_epi16(xv, _mm256_loadu_si256((const __m256i *)w));                      \
        acc0 = _mm256_add_epi32(acc0, _mm256_cvtepi16_epi32(_mm256_castsi256_si128(product)));                \
        acc1 = _mm256_add_epi32(acc1, _mm256_cvtepi16_epi32(_mm256_extracti128_si256(product, 1)));           \
    } while (0)
DEPTHWISE_ROW(depthwise_row_avx2, PW_TARGET_AVX2, 16, (void)0, AVX2_DECLARE, AVX2_TAP, pw_requant16_avx2(acc0, acc1, &q, out + c0, 16), \
              AVX2_DECLARE, AVX2_TAP, pw_requant16_avx2(acc0, acc1, &q, out + c0, 16))
/// avx512vnni: one output row, blocks of 32 channels outermost (the last one masked, so 24 or 40
/// channels need no scalar tail), pixels inside: the block's weights and requantization constants
/// stay in registers across the row. Pixels whose window is inside the image take taps in pairs
/// through vpdpwssd (int16 pairs → int32, input offset folded into interior_bias); the others add
/// their valid taps one by one.
PW_TARGET_AVX512VNNI PW_INLINE void depthwise_block_avx512(const pw_depthwise_plan *p, const int8_t *image,
                                                           int8_t *row_out, int iy0, int fy0, int fy1, int c0,
                                                           const int pairs_fixed) {
    const pw_conv_geometry *g = &p->g;
    const int C = p->channels, W = g->input_width, OW = g->output_width;
    const int width = C - c0 < 32 ? C - c0 : 32;
    const __mmask32 load_mask = width == 32 ? 0xFFFFFFFFu : (1u << width) - 1u;
    const __mmask16 store0 = width >= 16 ? 0xFFFF : (__mmask16)((1u << width) - 1u);
    const __mmask16 store1 = width >= 32 ? 0xFFFF : (width > 16 ? (__mmask16)((1u << (width - 16)) - 1u) : 0);
    const __m512i offset16 = _mm512_set1_epi16((int16_t)g->input_offset);
    const __m512i out_offset = _mm512_set1_epi32(g->output_offset);
    const __m512i lo = _mm512_set1_epi32(g->act_min), hi = _mm512_set1_epi32(g->act_max);
    const pw_rq16_avx512 q0 = pw_rq16_load_avx512(p->multiplier + c0, p->left + c0, p->right + c0);
    const pw_rq16_avx512 q1 = pw_rq16_load_avx512(p->multiplier + c0 + 16, p->left + c0 + 16, p->right + c0 + 16);
    const __m512i bias0 = _mm512_loadu_si512(p->bias + c0), bias1 = _mm512_loadu_si512(p->bias + c0 + 16);
    const __m512i ibias0 = _mm512_loadu_si512(p->interior_bias + c0);
    const __m512i ibias1 = _mm512_loadu_si512(p->interior_bias + c0 + 16);
    const __m512i first = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
    const __m512i second = _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
    const int pair_count = pairs_fixed ? pairs_fixed : p->pair_count;
    const size_t pair_stride = (size_t)(p->padded / 32) * 64;
    // 3x3 (5 pairs): the weights live in registers for the whole row.
    __m512i wlo[5], whi[5];
    int64_t taps[10];
    if (pairs_fixed) {
        for (int pp = 0; pp < pairs_fixed; pp++) {
            const int16_t *wp = p->pairs + (size_t)(c0 / 32) * 64 + pp * pair_stride;
            wlo[pp] = _mm512_loadu_si512(wp);
            whi[pp] = _mm512_loadu_si512(wp + 32);
            taps[2 * pp] = p->tap_offsets[2 * pp];
            taps[2 * pp + 1] = p->tap_offsets[2 * pp + 1];
        }
    }
    // The interior bias in the lane order the pair sums come in (the inverse of first/second),
    // so the sums start from it.
    const __m512i ibias_lo = _mm512_permutex2var_epi32(
        ibias0, _mm512_setr_epi32(0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27), ibias1);
    const __m512i ibias_hi = _mm512_permutex2var_epi32(
        ibias0, _mm512_setr_epi32(4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31), ibias1);
    // Output columns whose taps are all inside the image horizontally.
    const int span = (g->filter_width - 1) * g->dilation_width;
    int ox_lo = (g->pad_width + g->stride_width - 1) / g->stride_width;
    int ox_hi = W - 1 - span + g->pad_width < 0 ? 0 : (W - 1 - span + g->pad_width) / g->stride_width + 1;
    if (ox_hi > OW) ox_hi = OW;
    if (ox_lo > ox_hi) ox_lo = ox_hi;
    const int full_rows = fy0 == 0 && fy1 == g->filter_height;
    if (!full_rows) ox_lo = ox_hi = OW;
    for (int ox = 0; ox < OW; ox++) {
        const int ix0 = ox * g->stride_width - g->pad_width;
        int8_t *out = row_out + (size_t)ox * C + c0;
        __m512i acc0, acc1;
        if (ox >= ox_lo && ox < ox_hi) {
            const int8_t *base = image + ((size_t)iy0 * W + ix0) * C + c0;
            __m512i plo = ibias_lo, phi = ibias_hi;
            for (int pp = 0; pp < pair_count; pp++) {
                const int64_t ta = pairs_fixed ? taps[2 * pp] : p->tap_offsets[2 * pp];
                const int64_t tb = pairs_fixed ? taps[2 * pp + 1] : p->tap_offsets[2 * pp + 1];
                __m512i a = _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(load_mask, base + ta));
                __m512i b = _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(load_mask, base + tb));
                __m512i w0, w1;
                if (pairs_fixed) {
                    w0 = wlo[pp];
                    w1 = whi[pp];
                } else {
                    const int16_t *wp = p->pairs + (size_t)(c0 / 32) * 64 + pp * pair_stride;
                    w0 = _mm512_loadu_si512(wp);
                    w1 = _mm512_loadu_si512(wp + 32);
                }
                plo = _mm512_dpwssd_epi32(plo, _mm512_unpacklo_epi16(a, b), w0);
                phi = _mm512_dpwssd_epi32(phi, _mm512_unpackhi_epi16(a, b), w1);
            }
            acc0 = _mm512_permutex2var_epi32(plo, first, phi);
            acc1 = _mm512_permutex2var_epi32(plo, second, phi);
        } else {
            int fx0 = 0, fx1 = g->filter_width;
            while (fx0 < fx1 && ix0 + fx0 * g->dilation_width < 0) fx0++;
            while (fx1 > fx0 && ix0 + (fx1 - 1) * g->dilation_width >= W) fx1--;
            acc0 = bias0;
            acc1 = bias1;
            for (int fy = fy0; fy < fy1; fy++) {
                const int8_t *row = image + (size_t)(iy0 + fy * g->dilation_height) * W * C;
                for (int fx = fx0; fx < fx1; fx++) {
                    const int8_t *x = row + (size_t)(ix0 + fx * g->dilation_width) * C + c0;
                    const int16_t *w = p->weights + (size_t)(fy * g->filter_width + fx) * p->padded + c0;
                    __m512i xv = _mm512_add_epi16(_mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(load_mask, x)), offset16);
                    __m512i product = _mm512_mullo_epi16(xv, _mm512_loadu_si512(w));
                    acc0 = _mm512_add_epi32(acc0, _mm512_cvtepi16_epi32(_mm512_castsi512_si256(product)));
                    acc1 = _mm512_add_epi32(acc1, _mm512_cvtepi16_epi32(_mm512_extracti64x4_epi64(product, 1)));
                }
            }
        }
        _mm_mask_storeu_epi8(out, store0, _mm512_cvtepi32_epi8(pw_rq16_apply_avx512(acc0, &q0, out_offset, lo, hi)));
        if (store1) {
            _mm_mask_storeu_epi8(out + 16, store1,
                                 _mm512_cvtepi32_epi8(pw_rq16_apply_avx512(acc1, &q1, out_offset, lo, hi)));
        }
    }
}

PW_TARGET_AVX512VNNI static void depthwise_row_avx512(void *context, int task, int thread) {
    (void)thread;
    const depthwise_job *job = context;
    const pw_depthwise_plan *p = job->plan;
    const pw_conv_geometry *g = &p->g;
    int batch = task / g->output_height, oy = task % g->output_height;
    const int C = p->channels;
    int iy0 = oy * g->stride_height - g->pad_height;
    int fy0 = 0, fy1 = g->filter_height;
    while (fy0 < fy1 && iy0 + fy0 * g->dilation_height < 0) fy0++;
    while (fy1 > fy0 && iy0 + (fy1 - 1) * g->dilation_height >= g->input_height) fy1--;
    const int8_t *image = job->input + (size_t)batch * g->input_height * g->input_width * C;
    int8_t *row_out = job->output + (((size_t)batch * g->output_height + oy) * g->output_width) * C;
    for (int c0 = 0; c0 < C; c0 += 32) {
        if (p->pair_count == 5) depthwise_block_avx512(p, image, row_out, iy0, fy0, fy1, c0, 5);
        else depthwise_block_avx512(p, image, row_out, iy0, fy0, fy1, c0, 0);
    }
}
#endif
#if defined(__aarch64__)
#define NEON_DECLARE                                                                          \
    int32x4_t acc0 = vdupq_n_s32(0), acc1 = acc0, acc2 = acc0, acc3 = acc0;                   \
    const int16x8_t offset16 = vdupq_n_s16(offset)
#define NEON_TAP                                                                               \
    do {                                                                                       \
        int8x16_t xv = vld1q_s8(x);                                                            \
        int16x8_t lo = vaddq_s16(vmovl_s8(vget_low_s8(xv)), offset16);                         \
        int16x8_t hi = vaddq_s16(vmovl_s8(vget_high_s8(xv)), offset16);                       \
        int16x8_t w0 = vld1q_s16(w), w1 = vld1q_s16(w + 8);                                    \
        acc0 = vmlal_s16(acc0, vget_low_s16(lo), vget_low_s16(w0));                            \
        acc1 = vmlal_s16(acc1, vget_high_s16(lo), vget_high_s16(w0));                          \
        acc2 = vmlal_s16(acc2, vget_low_s16(hi), vget_low_s16(w1));                            \
        acc3 = vmlal_s16(acc3, vget_high_s16(hi), vget_high_s16(w1));                          \
    } while (0)
DEPTHWISE_ROW(depthwise_row_neon, , 16, (void)0, NEON_DECLARE, NEON_TAP, pw_requant16_neon(acc0, acc1, acc2, acc3, &q, out + c0, 16), \
              NEON_DECLARE, NEON_TAP, pw_requant16_neon(acc0, acc1, acc2, acc3, &q, out + c0, 16))
#endif

void pw_depthwise_run(const pw_depthwise_plan *p, pw_pool *pool, const int8_t *input, int8_t *output) {
    depthwise_job job = {p, input, output};
    pw_task_fn fn = depthwise_row_scalar;
    switch (p->isa) {
#if defined(__x86_64__)
    case PW_ISA_SSE41: fn = depthwise_row_sse41; break;
    case PW_ISA_AVX2: fn = depthwise_row_avx2; break;
    case PW_ISA_AVX512VNNI: fn = depthwise_row_avx512; break;
#endif
#if defined(__aarch64__)
    case PW_ISA_NEON:
    case PW_ISA_NEONDOT: fn = depthwise_row_neon; break;
#endif
    default: break;
    }
    int64_t work = (int64_t)p->g.batches * p->g.output_height * p->g.output_width * p->channels *
                   p->g.filter_height * p->g.filter_width;
    pw_pool_run(work < (1 << 16) ? NULL : pool, p->g.batches * p->g.output_height, fn, &job);
}
