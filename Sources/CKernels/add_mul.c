// ADD/SUB and MUL int8 on same-shaped inputs (Operators/ElementwiseBinary.swift's SIMD path), with
// the reference's exact integer math written as straight loops that clang vectorises for each ISA
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
