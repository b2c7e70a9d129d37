// DEPTHWISE_CONV_2D rows for x86-64: sse41 (the portable loop), avx2, avx512vnni (taps in pairs
// through vpdpwssd). The plan, its packing and the row loop they share: depthwise.c, depthwise_plan.h.
#include "depthwise_plan.h"

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

pw_task_fn pw_depthwise_x86_row_for(const pw_depthwise_plan *p) {
    switch (p->isa) {
    case PW_ISA_SSE41: return depthwise_row_sse41;
    case PW_ISA_AVX2: return depthwise_row_avx2;
    default: return depthwise_row_avx512;
    }
}
#endif
