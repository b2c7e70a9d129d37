// ARG_MAX over 8-bit data (Operators/ArgMax.swift).
#include "internal.h"

/// Blocks of up to 64 neighbouring inner positions walk the axis together: one pass over rows of
/// contiguous bytes with branch-free updates (vectorised by the compiler) instead of a strided
/// walk per position. Strictly greater replaces, so ties keep the first index, as the reference.
#define ARGMAX_BODY(T)                                                                              \
    for (int64_t o = 0; o < outer; o++) {                                                           \
        for (int64_t j0 = 0; j0 < inner; j0 += 64) {                                                \
            int n = inner - j0 < 64 ? (int)(inner - j0) : 64;                                       \
            const T *base = (const T *)input + o * axis * inner + j0;                               \
            T best[64];                                                                             \
            int32_t index[64];                                                                      \
            for (int j = 0; j < n; j++) {                                                           \
                best[j] = base[j];                                                                  \
                index[j] = 0;                                                                       \
            }                                                                                       \
            for (int64_t i = 1; i < axis; i++) {                                                    \
                const T *row = base + i * inner;                                                    \
                for (int j = 0; j < n; j++) {                                                       \
                    int greater = row[j] > best[j];                                                 \
                    best[j] = greater ? row[j] : best[j];                                           \
                    index[j] = greater ? (int32_t)i : index[j];                                     \
                }                                                                                   \
            }                                                                                       \
            for (int j = 0; j < n; j++) {                                                           \
                if (output_int64) ((int64_t *)output)[o * inner + j0 + j] = index[j];               \
                else ((int32_t *)output)[o * inner + j0 + j] = index[j];                            \
            }                                                                                       \
        }                                                                                           \
    }

void pw_argmax_8bit(int is_signed, int64_t outer, int64_t axis, int64_t inner, const void *input, void *output,
                    int output_int64) {
    if (is_signed) {
        ARGMAX_BODY(int8_t)
    } else {
        ARGMAX_BODY(uint8_t)
    }
}
