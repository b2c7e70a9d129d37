// QUANTIZE float32 → int8 (Operators/Quantize.swift).
#include "internal.h"

/// roundf (half away from zero) without the libm call: t = trunc(v) and v − t are exact in float.
#define QUANTIZE_BODY                                                                                  \
    for (int64_t i = 0; i < count; i++) {                                                              \
        float v = input[i] / scale;                                                                    \
        float t = __builtin_truncf(v);                                                                 \
        float d = v - t;                                                                               \
        t = d >= 0.5f ? t + 1.0f : (d <= -0.5f ? t - 1.0f : t);                                        \
        int32_t s = v != v ? 0 : (t >= 2147483647.0f ? INT32_MAX : (t <= -2147483648.0f ? INT32_MIN : (int32_t)t)); \
        int32_t q = (int32_t)((uint32_t)s + (uint32_t)zero_point);                                     \
        output[i] = (int8_t)(q < -128 ? -128 : (q > 127 ? 127 : q));                                   \
    }

static void quantize_scalar(float scale, int32_t zero_point, int64_t count, const float *input, int8_t *output) {
    QUANTIZE_BODY
}
#if defined(__x86_64__)
PW_TARGET_AVX2 static void quantize_avx2(float scale, int32_t zero_point, int64_t count, const float *input,
                                         int8_t *output) {
    QUANTIZE_BODY
}
#endif

void pw_quantize_float_int8(float scale, int32_t zero_point, int64_t count, const float *input, int8_t *output) {
#if defined(__x86_64__)
    if (pw_best_isa() >= PW_ISA_AVX2) {
        quantize_avx2(scale, zero_point, count, input, output);
        return;
    }
#endif
    quantize_scalar(scale, zero_point, count, input, output);
}
