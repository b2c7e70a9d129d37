// SQRT float32 (Operators/Activations.swift): IEEE square root is correctly rounded, so every
// SIMD width gives the reference's bits.
#include "internal.h"

#if defined(__x86_64__)
PW_TARGET_AVX512VNNI static void sqrt_avx512(int64_t count, const float *input, float *output) {
    int64_t i = 0;
    for (; i + 16 <= count; i += 16) _mm512_storeu_ps(output + i, _mm512_sqrt_ps(_mm512_loadu_ps(input + i)));
    if (i < count) {
        __mmask16 m = (__mmask16)((1u << (count - i)) - 1u);
        _mm512_mask_storeu_ps(output + i, m, _mm512_sqrt_ps(_mm512_maskz_loadu_ps(m, input + i)));
    }
}
PW_TARGET_AVX2 static void sqrt_avx2(int64_t count, const float *input, float *output) {
    int64_t i = 0;
    for (; i + 8 <= count; i += 8) _mm256_storeu_ps(output + i, _mm256_sqrt_ps(_mm256_loadu_ps(input + i)));
    for (; i < count; i++) _mm_store_ss(output + i, _mm_sqrt_ss(_mm_load_ss(input + i)));
}
#endif

void pw_sqrt_float(int isa, int64_t count, const float *input, float *output) {
#if defined(__x86_64__)
    if (isa == PW_ISA_AVX512VNNI) {
        sqrt_avx512(count, input, output);
        return;
    }
    if (isa == PW_ISA_AVX2) {
        sqrt_avx2(count, input, output);
        return;
    }
#elif defined(__aarch64__)
    int64_t i = 0;
    for (; i + 4 <= count; i += 4) vst1q_f32(output + i, vsqrtq_f32(vld1q_f32(input + i)));
    for (; i < count; i++) output[i] = __builtin_sqrtf(input[i]);
    (void)isa;
    return;
#endif
    (void)isa;
    for (int64_t i = 0; i < count; i++) output[i] = __builtin_sqrtf(input[i]);
}
