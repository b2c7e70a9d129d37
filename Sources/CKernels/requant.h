// Requantization of 16 int32 accumulators (one block of output channels) to int8, per ISA.
// Every variant computes pw_requantize exactly (see internal.h).
#ifndef POSEWATCH_CKERNELS_REQUANT_H
#define POSEWATCH_CKERNELS_REQUANT_H
#include "internal.h"

/// Portable: `count` ≤ 16 lanes.
PW_INLINE void pw_requant16_scalar(const int32_t *acc, const pw_requant16 *q, int8_t *out, int count) {
    for (int j = 0; j < count; j++) {
        int32_t v = pw_requantize(acc[j] + q->bias[j], q->multiplier[j], q->left[j], q->right[j]) + q->output_offset;
        out[j] = (int8_t)pw_clamp(v, q->act_min, q->act_max);
    }
}

#if defined(__x86_64__)
/// 8 lanes of pw_requantize: vpmuldq on even and odd lanes, per-lane shifts with vpsllvd/vpsravd.
PW_TARGET_AVX2 PW_INLINE __m256i pw_requant8_avx2(__m256i acc, __m256i m, __m256i left, __m256i right) {
    const __m256i nudge = _mm256_set1_epi64x((int64_t)1 << 30);
    const __m256i one = _mm256_set1_epi32(1);
    __m256i x = _mm256_sllv_epi32(acc, left);
    __m256i even = _mm256_add_epi64(_mm256_mul_epi32(x, m), nudge);
    __m256i odd = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(x, 32), _mm256_srli_epi64(m, 32)), nudge);
    __m256i high = _mm256_blend_epi32(_mm256_srli_epi64(even, 31), _mm256_slli_epi64(odd, 1), 0xAA);
    __m256i mask = _mm256_sub_epi32(_mm256_sllv_epi32(one, right), one);
    __m256i remainder = _mm256_and_si256(high, mask);
    __m256i threshold = _mm256_add_epi32(_mm256_srai_epi32(mask, 1), _mm256_srli_epi32(high, 31));
    return _mm256_sub_epi32(_mm256_srav_epi32(high, right), _mm256_cmpgt_epi32(remainder, threshold));
}

/// 16 lanes (two vectors of 8) → 16 int8, clamped; stores `count` bytes.
PW_TARGET_AVX2 PW_INLINE void pw_requant16_avx2(__m256i a0, __m256i a1, const pw_requant16 *q, int8_t *out,
                                                 int count) {
    const __m256i offset = _mm256_set1_epi32(q->output_offset);
    const __m256i lo = _mm256_set1_epi32(q->act_min), hi = _mm256_set1_epi32(q->act_max);
    a0 = _mm256_add_epi32(a0, _mm256_loadu_si256((const __m256i *)q->bias));
    a1 = _mm256_add_epi32(a1, _mm256_loadu_si256((const __m256i *)(q->bias + 8)));
    __m256i r0 = pw_requant8_avx2(a0, _mm256_loadu_si256((const __m256i *)q->multiplier),
                                  _mm256_loadu_si256((const __m256i *)q->left),
                                  _mm256_loadu_si256((const __m256i *)q->right));
    __m256i r1 = pw_requant8_avx2(a1, _mm256_loadu_si256((const __m256i *)(q->multiplier + 8)),
                                  _mm256_loadu_si256((const __m256i *)(q->left + 8)),
                                  _mm256_loadu_si256((const __m256i *)(q->right + 8)));
    r0 = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(r0, offset), lo), hi);
    r1 = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(r1, offset), lo), hi);
    __m256i words = _mm256_permute4x64_epi64(_mm256_packs_epi32(r0, r1), 0xD8);
    __m256i bytes = _mm256_permute4x64_epi64(_mm256_packs_epi16(words, words), 0x08);
    __m128i result = _mm256_castsi256_si128(bytes);
    if (count == 16) {
        _mm_storeu_si128((__m128i *)out, result);
    } else {
        int8_t buffer[16];
        _mm_storeu_si128((__m128i *)buffer, result);
        memcpy(out, buffer, (size_t)count);
    }
}

PW_TARGET_AVX512VNNI PW_INLINE void pw_requant16_avx512(__m512i acc, const pw_requant16 *q, int8_t *out, int count) {
    const __m512i nudge = _mm512_set1_epi64((int64_t)1 << 30);
    const __m512i one = _mm512_set1_epi32(1);
    __m512i m = _mm512_loadu_si512(q->multiplier), left = _mm512_loadu_si512(q->left);
    __m512i right = _mm512_loadu_si512(q->right);
    acc = _mm512_add_epi32(acc, _mm512_loadu_si512(q->bias));
    __m512i x = _mm512_sllv_epi32(acc, left);
    __m512i even = _mm512_add_epi64(_mm512_mul_epi32(x, m), nudge);
    __m512i odd = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(x, 32), _mm512_srli_epi64(m, 32)), nudge);
    __m512i high = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 31), _mm512_slli_epi64(odd, 1));
    __m512i mask = _mm512_sub_epi32(_mm512_sllv_epi32(one, right), one);
    __m512i remainder = _mm512_and_si512(high, mask);
    __m512i threshold = _mm512_add_epi32(_mm512_srai_epi32(mask, 1), _mm512_srli_epi32(high, 31));
    __mmask16 up = _mm512_cmpgt_epi32_mask(remainder, threshold);
    __m512i r = _mm512_mask_add_epi32(_mm512_srav_epi32(high, right), up, _mm512_srav_epi32(high, right), one);
    r = _mm512_add_epi32(r, _mm512_set1_epi32(q->output_offset));
    r = _mm512_min_epi32(_mm512_max_epi32(r, _mm512_set1_epi32(q->act_min)), _mm512_set1_epi32(q->act_max));
    _mm_mask_storeu_epi8(out, (__mmask16)((count >= 16) ? 0xFFFF : ((1u << count) - 1u)), _mm512_cvtepi32_epi8(r));
}

/// The requantization constants of 16 channels, loaded once per block of channels and kept in
/// registers while a kernel runs over many pixels (pw_requant16_avx512 reloads them per call).
typedef struct {
    __m512i m, m_odd, left, right, mask, threshold;
} pw_rq16_avx512;

PW_TARGET_AVX512VNNI PW_INLINE pw_rq16_avx512 pw_rq16_load_avx512(const int32_t *multiplier, const int32_t *left,
                                                                  const int32_t *right) {
    pw_rq16_avx512 c;
    c.m = _mm512_loadu_si512(multiplier);
    c.m_odd = _mm512_srli_epi64(c.m, 32);
    c.left = _mm512_loadu_si512(left);
    c.right = _mm512_loadu_si512(right);
    const __m512i one = _mm512_set1_epi32(1);
    c.mask = _mm512_sub_epi32(_mm512_sllv_epi32(one, c.right), one);
    c.threshold = _mm512_srai_epi32(c.mask, 1);
    return c;
}

/// pw_requantize on 16 lanes (bias already in `acc`), then + offset and the activation clamp:
/// the same steps as pw_requant16_avx512 with the per-channel constants hoisted.
PW_TARGET_AVX512VNNI PW_INLINE __m512i pw_rq16_apply_avx512(__m512i acc, const pw_rq16_avx512 *c, __m512i offset,
                                                            __m512i lo, __m512i hi) {
    const __m512i nudge = _mm512_set1_epi64((int64_t)1 << 30);
    __m512i x = _mm512_sllv_epi32(acc, c->left);
    __m512i even = _mm512_add_epi64(_mm512_mul_epi32(x, c->m), nudge);
    __m512i odd = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(x, 32), c->m_odd), nudge);
    __m512i high = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 31), _mm512_slli_epi64(odd, 1));
    __m512i remainder = _mm512_and_si512(high, c->mask);
    __m512i threshold = _mm512_add_epi32(c->threshold, _mm512_srli_epi32(high, 31));
    __mmask16 up = _mm512_cmpgt_epi32_mask(remainder, threshold);
    __m512i shifted = _mm512_srav_epi32(high, c->right);
    __m512i r = _mm512_mask_add_epi32(shifted, up, shifted, _mm512_set1_epi32(1));
    return _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(r, offset), lo), hi);
}
#endif

#if defined(__aarch64__)
/// 4 lanes: vqrdmulh is exactly SaturatingRoundingDoublingHighMul; then RoundingDivideByPOT.
PW_INLINE int32x4_t pw_requant4_neon(int32x4_t acc, int32x4_t m, int32x4_t left, int32x4_t right) {
    const int32x4_t one = vdupq_n_s32(1);
    int32x4_t high = vqrdmulhq_s32(vshlq_s32(acc, left), m);
    int32x4_t mask = vsubq_s32(vshlq_s32(one, right), one);
    int32x4_t remainder = vandq_s32(high, mask);
    int32x4_t threshold = vaddq_s32(vshrq_n_s32(mask, 1), vreinterpretq_s32_u32(vshrq_n_u32(vreinterpretq_u32_s32(high), 31)));
    int32x4_t shifted = vshlq_s32(high, vnegq_s32(right));
    return vsubq_s32(shifted, vreinterpretq_s32_u32(vcgtq_s32(remainder, threshold)));
}

PW_INLINE void pw_requant16_neon(int32x4_t a0, int32x4_t a1, int32x4_t a2, int32x4_t a3, const pw_requant16 *q,
                                 int8_t *out, int count) {
    int32x4_t in[4] = {a0, a1, a2, a3};
    int16x8_t words[2];
    const int32x4_t offset = vdupq_n_s32(q->output_offset);
    const int32x4_t lo = vdupq_n_s32(q->act_min), hi = vdupq_n_s32(q->act_max);
    int32x4_t r[4];
    for (int i = 0; i < 4; i++) {
        int32x4_t v = vaddq_s32(in[i], vld1q_s32(q->bias + 4 * i));
        v = pw_requant4_neon(v, vld1q_s32(q->multiplier + 4 * i), vld1q_s32(q->left + 4 * i), vld1q_s32(q->right + 4 * i));
        r[i] = vminq_s32(vmaxq_s32(vaddq_s32(v, offset), lo), hi);
    }
    words[0] = vcombine_s16(vqmovn_s32(r[0]), vqmovn_s32(r[1]));
    words[1] = vcombine_s16(vqmovn_s32(r[2]), vqmovn_s32(r[3]));
    int8x16_t bytes = vcombine_s8(vqmovn_s16(words[0]), vqmovn_s16(words[1]));
    if (count == 16) {
        vst1q_s8(out, bytes);
    } else {
        int8_t buffer[16];
        vst1q_s8(buffer, bytes);
        memcpy(out, buffer, (size_t)count);
    }
}
#endif
#endif
