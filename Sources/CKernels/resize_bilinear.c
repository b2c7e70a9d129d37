// RESIZE_BILINEAR int8 (Operators/ResizeBilinear.swift): ResizeBilinearInteger's 10-bit weights,
// every term at most 128 · 2^20, so the sum of four fits int32 exactly (the reference uses
// int64). Vectorised per ISA as add_mul.c is; split over the pool by output rows.
#include "internal.h"

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
