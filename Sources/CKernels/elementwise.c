// Element-wise int8 ADD/SUB and MUL on same-shaped inputs, and RESIZE_BILINEAR int8, with the
// reference's exact integer math written as straight loops that clang vectorises for each ISA
// (the loop body is compiled once per target attribute). Split over the pool in chunks.
#include "internal.h"

PW_INLINE int8_t add_one(const pw_add_params *p, int8_t a, int8_t b) {
    int32_t shifted1 = (int32_t)((uint32_t)(p->input1_offset + a) << p->left_shift);
    int32_t shifted2 = (int32_t)((uint32_t)(p->input2_offset + b) << p->left_shift);
    int32_t scaled1 = pw_rounding_divide(pw_srdhm(shifted1, p->input1_multiplier), -p->input1_shift);
    int32_t scaled2 = pw_rounding_divide(pw_srdhm(shifted2, p->input2_multiplier), -p->input2_shift);
    int32_t raw = p->is_subtraction ? scaled1 - scaled2 : scaled1 + scaled2;
    int32_t result = pw_rounding_divide(pw_srdhm(raw, p->output_multiplier), -p->output_shift) + p->output_offset;
    return (int8_t)pw_clamp(result, p->act_min, p->act_max);
}

PW_INLINE int8_t mul_one(const pw_mul_params *p, int8_t a, int8_t b) {
    int32_t product = (p->input1_offset + a) * (p->input2_offset + b);
    int32_t left = p->output_shift > 0 ? p->output_shift : 0, right = p->output_shift > 0 ? 0 : -p->output_shift;
    int32_t x = (int32_t)((uint32_t)product << left);
    int32_t result = pw_rounding_divide(pw_srdhm(x, p->output_multiplier), right) + p->output_offset;
    return (int8_t)pw_clamp(result, p->act_min, p->act_max);
}

typedef struct {
    const void *params;
    const int8_t *a, *b;
    int8_t *out;
    int64_t count, chunk;
} binary_job;

#define BINARY_TASK(name, attribute, TYPE, ONE)                                        \
    attribute static void name(void *context, int task, int thread) {                 \
        (void)thread;                                                                  \
        const binary_job *job = context;                                               \
        const TYPE *p = job->params;                                                   \
        int64_t start = task * job->chunk, end = start + job->chunk;                  \
        if (end > job->count) end = job->count;                                        \
        const int8_t *a = job->a, *b = job->b;                                         \
        int8_t *out = job->out;                                                        \
        for (int64_t i = start; i < end; i++) out[i] = ONE(p, a[i], b[i]);            \
    }

BINARY_TASK(add_task_scalar, , pw_add_params, add_one)
BINARY_TASK(mul_task_scalar, , pw_mul_params, mul_one)
#if defined(__x86_64__)
BINARY_TASK(add_task_avx2, PW_TARGET_AVX2, pw_add_params, add_one)
BINARY_TASK(mul_task_avx2, PW_TARGET_AVX2, pw_mul_params, mul_one)
BINARY_TASK(add_task_avx512, PW_TARGET_AVX512VNNI, pw_add_params, add_one)
BINARY_TASK(mul_task_avx512, PW_TARGET_AVX512VNNI, pw_mul_params, mul_one)
#endif

static void run_binary(pw_pool *pool, pw_task_fn fn, const void *params, const int8_t *a, const int8_t *b,
                       int8_t *out, int64_t count) {
    binary_job job = {params, a, b, out, count, 0};
    int threads = pw_pool_threads(pool);
    int64_t chunk = count < 4096 || threads == 1 ? count : (count + threads * 2 - 1) / (threads * 2);
    chunk = (chunk + 63) / 64 * 64;
    if (chunk < 1) chunk = 1;
    job.chunk = chunk;
    pw_pool_run(pool, (int)((count + chunk - 1) / chunk), fn, &job);
}

void pw_add_int8(const pw_add_params *p, int isa, pw_pool *pool, const int8_t *a, const int8_t *b, int8_t *out,
                 int64_t count) {
    pw_task_fn fn = add_task_scalar;
#if defined(__x86_64__)
    if (isa == PW_ISA_AVX2) fn = add_task_avx2;
    if (isa == PW_ISA_AVX512VNNI) fn = add_task_avx512;
#endif
    (void)isa;
    run_binary(pool, fn, p, a, b, out, count);
}

void pw_mul_int8(const pw_mul_params *p, int isa, pw_pool *pool, const int8_t *a, const int8_t *b, int8_t *out,
                 int64_t count) {
    pw_task_fn fn = mul_task_scalar;
#if defined(__x86_64__)
    if (isa == PW_ISA_AVX2) fn = mul_task_avx2;
    if (isa == PW_ISA_AVX512VNNI) fn = mul_task_avx512;
#endif
    (void)isa;
    run_binary(pool, fn, p, a, b, out, count);
}

// MARK: RESIZE_BILINEAR (ResizeBilinearInteger): 10-bit weights; every term is at most 128 · 2^20,
// so the sum of four fits int32 exactly (the reference uses int64).

PW_INLINE void interpolation(int32_t value, int32_t scale10, int half, int32_t size, int32_t *scaled,
                             int32_t *lower, int32_t *upper) {
    int32_t s = half ? value * scale10 + scale10 / 2 - (1 << 9) : value * scale10;
    int32_t lo = s / (1 << 10);
    int32_t hi = (s + (1 << 10) - 1) / (1 << 10);
    *scaled = s;
    *lower = lo < 0 ? 0 : lo;
    *upper = hi < size - 1 ? hi : size - 1;
}

typedef struct {
    const pw_resize_params *p;
    const int8_t *input;
    int8_t *output;
} resize_job;

#define RESIZE_TASK(name, attribute)                                                                            \
    attribute static void name(void *context, int task, int thread) {                                          \
        (void)thread;                                                                                           \
        const resize_job *job = context;                                                                        \
        const pw_resize_params *p = job->p;                                                                     \
        int batch = task / p->output_height, y = task % p->output_height;                                      \
        int32_t sy, y0, y1;                                                                                     \
        interpolation(y, p->height_scale10, p->half_pixel_centers, p->input_height, &sy, &y0, &y1);             \
        int32_t dy = sy - (1 << 10) * y0;                                                                       \
        const int D = p->depth;                                                                                 \
        const int8_t *row0 = job->input + ((size_t)batch * p->input_height + y0) * p->input_width * D;          \
        const int8_t *row1 = job->input + ((size_t)batch * p->input_height + y1) * p->input_width * D;          \
        int8_t *out = job->output + ((size_t)batch * p->output_height + y) * p->output_width * D;               \
        for (int x = 0; x < p->output_width; x++, out += D) {                                                   \
            int32_t sx, x0, x1;                                                                                 \
            interpolation(x, p->width_scale10, p->half_pixel_centers, p->input_width, &sx, &x0, &x1);           \
            int32_t dx = sx - (1 << 10) * x0;                                                                   \
            int32_t w00 = ((1 << 10) - dy) * ((1 << 10) - dx), w10 = dy * ((1 << 10) - dx);                     \
            int32_t w01 = ((1 << 10) - dy) * dx, w11 = dy * dx;                                                 \
            const int8_t *a = row0 + (size_t)x0 * D, *b = row1 + (size_t)x0 * D;                                \
            const int8_t *c = row0 + (size_t)x1 * D, *d = row1 + (size_t)x1 * D;                                \
            for (int j = 0; j < D; j++) {                                                                       \
                int32_t sum = a[j] * w00 + b[j] * w10 + c[j] * w01 + d[j] * w11;                                \
                int32_t round = sum > 0 ? (1 << 19) : -(1 << 19);                                               \
                out[j] = (int8_t)((sum + round) / (1 << 20));                                                   \
            }                                                                                                   \
        }                                                                                                       \
    }

RESIZE_TASK(resize_task_scalar, )
#if defined(__x86_64__)
RESIZE_TASK(resize_task_avx2, PW_TARGET_AVX2)
#endif

void pw_resize_bilinear_int8(const pw_resize_params *p, int isa, pw_pool *pool, const int8_t *input,
                             int8_t *output) {
    resize_job job = {p, input, output};
    pw_task_fn fn = resize_task_scalar;
#if defined(__x86_64__)
    if (isa == PW_ISA_AVX2 || isa == PW_ISA_AVX512VNNI) fn = resize_task_avx2;
#endif
    (void)isa;
    pw_pool_run(pool, p->batches * p->output_height, fn, &job);
}

// MARK: broadcast binary operators through a 64 KiB table

#if defined(__x86_64__)
/// 64 lookups in a 256-byte table held in four registers: vpermi2b on the low 7 bits in each half,
/// bit 7 picks the half.
PW_TARGET_AVX512VBMI PW_INLINE __m512i lookup64_vbmi(const __m512i t[4], __m512i index) {
    __m512i low = _mm512_permutex2var_epi8(t[0], index, t[1]);
    __m512i high = _mm512_permutex2var_epi8(t[2], index, t[3]);
    return _mm512_mask_blend_epi8(_mm512_movepi8_mask(index), low, high);
}

/// out[i] = tables[i % period][x[i]] for `period` ≤ 4 tables of 256 bytes.
PW_TARGET_AVX512VBMI static void lookup_periodic_vbmi(const uint8_t *tables, int period, const uint8_t *x, int64_t count,
                                                      int8_t *out) {
    __m512i t[4][4];
    for (int j = 0; j < period; j++)
        for (int q = 0; q < 4; q++) t[j][q] = _mm512_loadu_si512(tables + j * 256 + q * 64);
    // Lanes of table j in a block that starts at phase p (the block's first element is p mod period).
    __mmask64 lanes[4][4];
    for (int p = 0; p < period; p++)
        for (int j = 0; j < period; j++) {
            uint64_t m = 0;
            for (int lane = 0; lane < 64; lane++)
                if ((p + lane) % period == j) m |= (uint64_t)1 << lane;
            lanes[p][j] = m;
        }
    int phase = 0;
    for (int64_t i = 0; i < count; i += 64) {
        __mmask64 valid = count - i >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << (count - i)) - 1);
        __m512i index = _mm512_maskz_loadu_epi8(valid, x + i);
        __m512i result = lookup64_vbmi(t[0], index);
        for (int j = 1; j < period; j++) result = _mm512_mask_mov_epi8(result, lanes[phase][j], lookup64_vbmi(t[j], index));
        _mm512_mask_storeu_epi8(out + i, valid, result);
        phase = (phase + 64) % period;
    }
}
#endif

/// out[i] = table[a[i] << 8 | b[i % period]] (or with a and b swapped) over `count` elements: a
/// contiguous tensor against a short one repeated (a per-channel constant: MoveNet's input
/// normalisation subtracts one value per RGB channel), without re-deriving addresses per period.
static void table_periodic(int isa, const uint8_t *table, const uint8_t *x, const uint8_t *y, int64_t count,
                           int64_t period, int y_is_first, int8_t *out) {
    const uint8_t *rows[16];
    int64_t shift_y = y_is_first ? 8 : 0, shift_x = y_is_first ? 0 : 8;
    for (int64_t j = 0; j < period; j++) rows[j] = table + ((size_t)y[j] << shift_y);
#if defined(__x86_64__)
    if (isa == PW_ISA_AVX512VNNI && period <= 4 && count >= 1024 && pw_has_avx512vbmi()) {
        // One 256-byte table per phase (a strided copy when x is the high byte of the index).
        uint8_t tables[4 * 256];
        for (int64_t j = 0; j < period; j++)
            for (int v = 0; v < 256; v++) tables[j * 256 + v] = rows[j][(size_t)v << shift_x];
        lookup_periodic_vbmi(tables, (int)period, x, count, out);
        return;
    }
#endif
    (void)isa;
    int64_t i = 0;
    if (period == 3) {
        for (; i + 3 <= count; i += 3) {
            out[i] = (int8_t)rows[0][(size_t)x[i] << shift_x];
            out[i + 1] = (int8_t)rows[1][(size_t)x[i + 1] << shift_x];
            out[i + 2] = (int8_t)rows[2][(size_t)x[i + 2] << shift_x];
        }
    }
    for (int64_t j = 0; i < count; i++) {
        out[i] = (int8_t)rows[j][(size_t)x[i] << shift_x];
        if (++j == period) j = 0;
    }
}

void pw_binary_table_int8(int isa, const uint8_t *table, const int64_t *d, const int64_t *s, const int64_t *t,
                          const int8_t *a, const int8_t *b, int8_t *out) {
    // [.., n, p] with one side contiguous and the other repeating its p ≤ 16 elements over n.
    // One side contiguous, the other one value (an image times a scalar).
    if (d[0] == 1 && d[1] == 1 && d[2] == 1 && d[3] == 1 && d[4] == 1) {
        if (s[5] == 1 && t[5] == 0) {
            table_periodic(isa, table, (const uint8_t *)a, (const uint8_t *)b, d[5], 1, 0, out);
            return;
        }
        if (s[5] == 0 && t[5] == 1) {
            table_periodic(isa, table, (const uint8_t *)b, (const uint8_t *)a, d[5], 1, 1, out);
            return;
        }
    }
    if (d[0] == 1 && d[1] == 1 && d[2] == 1 && d[3] == 1 && d[5] <= 16 && s[5] == 1 && t[5] == 1) {
        if (s[4] == d[5] && t[4] == 0) {
            table_periodic(isa, table, (const uint8_t *)a, (const uint8_t *)b, d[4] * d[5], d[5], 0, out);
            return;
        }
        if (t[4] == d[5] && s[4] == 0) {
            table_periodic(isa, table, (const uint8_t *)b, (const uint8_t *)a, d[4] * d[5], d[5], 1, out);
            return;
        }
    }
    int64_t o = 0;
    for (int64_t i0 = 0; i0 < d[0]; i0++)
        for (int64_t i1 = 0; i1 < d[1]; i1++)
            for (int64_t i2 = 0; i2 < d[2]; i2++)
                for (int64_t i3 = 0; i3 < d[3]; i3++)
                    for (int64_t i4 = 0; i4 < d[4]; i4++) {
                        const uint8_t *x = (const uint8_t *)a + i0 * s[0] + i1 * s[1] + i2 * s[2] + i3 * s[3] + i4 * s[4];
                        const uint8_t *y = (const uint8_t *)b + i0 * t[0] + i1 * t[1] + i2 * t[2] + i3 * t[3] + i4 * t[4];
                        const int64_t n = d[5], sx = s[5], sy = t[5];
                        if (sx == 1 && sy == 0) {
                            const uint8_t *row = table + ((size_t)y[0]);
                            for (int64_t i = 0; i < n; i++) out[o + i] = (int8_t)row[(size_t)x[i] << 8];
                        } else if (sx == 0 && sy == 1) {
                            const uint8_t *row = table + ((size_t)x[0] << 8);
                            for (int64_t i = 0; i < n; i++) out[o + i] = (int8_t)row[y[i]];
                        } else if (sx == 1 && sy == 1) {
                            for (int64_t i = 0; i < n; i++) out[o + i] = (int8_t)table[((size_t)x[i] << 8) | y[i]];
                        } else {
                            for (int64_t i = 0; i < n; i++) out[o + i] = (int8_t)table[((size_t)x[i * sx] << 8) | y[i * sy]];
                        }
                        o += n;
                    }
}

// MARK: unary operators on bytes (tables) and float → int8 QUANTIZE

void pw_lookup_u8(int isa, const void *table, int entry_bytes, int64_t count, const uint8_t *input, void *output) {
    (void)isa;
#if defined(__x86_64__)
    if (isa == PW_ISA_AVX512VNNI && entry_bytes == 1 && count >= 256 && pw_has_avx512vbmi()) {
        lookup_periodic_vbmi(table, 1, input, count, output);
        return;
    }
#endif
    if (entry_bytes == 1) {
        const uint8_t *t = table;
        uint8_t *o = output;
        for (int64_t i = 0; i < count; i++) o[i] = t[input[i]];
    } else if (entry_bytes == 2) {
        const uint16_t *t = table;
        uint16_t *o = output;
        for (int64_t i = 0; i < count; i++) o[i] = t[input[i]];
    } else {
        const uint32_t *t = table;
        uint32_t *o = output;
        for (int64_t i = 0; i < count; i++) o[i] = t[input[i]];
    }
}

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

// MARK: SQRT float32 (IEEE square root is correctly rounded, so every SIMD width gives the
// reference's bits) and ARG_MAX over 8-bit data

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
