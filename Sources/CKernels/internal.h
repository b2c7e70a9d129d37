// Shared helpers for the CKernels variants (not exported to Swift).
#ifndef POSEWATCH_CKERNELS_INTERNAL_H
#define POSEWATCH_CKERNELS_INTERNAL_H
#include "include/ckernels.h"
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#define PW_TARGET_SSE41 __attribute__((target("sse4.1")))
#define PW_TARGET_AVX2 __attribute__((target("avx2")))
#define PW_TARGET_AVX512VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
#elif defined(__aarch64__)
#include <arm_neon.h>
#define PW_TARGET_DOTPROD __attribute__((target("dotprod")))
#endif

#define PW_INLINE static inline __attribute__((always_inline))

/// TFLite's MultiplyByQuantizedMultiplier (double rounding), the reference's exact integer math:
/// SaturatingRoundingDoublingHighMul(x << left, m) is floor((x·m + 2^30) / 2^31) for m ≥ 0 (the
/// two nudge cases of gemmlowp coincide after truncation toward zero), then RoundingDivideByPOT.
PW_INLINE int32_t pw_requantize(int32_t acc, int32_t multiplier, int32_t left, int32_t right) {
    int32_t x = (int32_t)((uint32_t)acc << left);
    int64_t product = (int64_t)x * (int64_t)multiplier + ((int64_t)1 << 30);
    int32_t high = (int32_t)(uint32_t)((uint64_t)product >> 31);
    int32_t mask = (int32_t)(((uint32_t)1 << right) - 1u);
    int32_t remainder = high & mask;
    int32_t threshold = (mask >> 1) + (high < 0 ? 1 : 0);
    return (high >> right) + (remainder > threshold ? 1 : 0);
}

/// The same for a general (possibly negative) multiplier as the element-wise ops use it:
/// gemmlowp's SaturatingRoundingDoublingHighMul with both nudges and its one saturating case.
PW_INLINE int32_t pw_srdhm(int32_t a, int32_t b) {
    if (a == b && a == INT32_MIN) return INT32_MAX;
    int64_t product = (int64_t)a * (int64_t)b;
    int64_t nudge = product >= 0 ? ((int64_t)1 << 30) : (1 - ((int64_t)1 << 30));
    return (int32_t)((product + nudge) / ((int64_t)1 << 31));
}

PW_INLINE int32_t pw_rounding_divide(int32_t x, int32_t exponent) {
    int32_t mask = (int32_t)(((uint32_t)1 << exponent) - 1u);
    int32_t remainder = x & mask;
    int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

PW_INLINE int32_t pw_clamp(int32_t x, int32_t lo, int32_t hi) { return x < lo ? lo : (x > hi ? hi : x); }

/// Requantization parameters for 16 consecutive output channels.
typedef struct {
    const int32_t *bias, *multiplier, *left, *right;
    int32_t output_offset, act_min, act_max;
} pw_requant16;

/// Whether this CPU has AVX512_VBMI (vpermi2b: 128-byte table lookups) besides the VNNI level.
int pw_has_avx512vbmi(void);
#if defined(__x86_64__)
#define PW_TARGET_AVX512VBMI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi")))
#endif

/// Splits `count` items into tasks of about `count / (threads × 4)` items, multiples of `granule`.
int pw_task_size(int count, int threads, int granule);

#endif
