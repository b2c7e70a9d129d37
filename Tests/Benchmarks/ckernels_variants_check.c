// Cross-ISA check of CKernels without Swift: every variant this CPU runs against the portable
// "scalar" variant (which OptimizedKernelTests proves bit-exact to the Swift reference kernels), on
// random convolution and depthwise shapes. Built for aarch64 and run under qemu-user by
// Tests/Benchmarks/check_ckernels_arm64.sh (-cpu cortex-a72: NEON; -cpu max: NEON + SDOT).
#include "ckernels.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

static uint64_t state = 1;
static uint64_t next(void) {
    state += 0x9E3779B97F4A7C15ull;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static int range(int lo, int hi) { return lo + (int)(next() % (uint64_t)(hi - lo + 1)); }

/// The pool runs every task of every run exactly once, and returns only when all are done.
typedef struct { int *counts; int tasks; } pool_job;
static void count_task(void *context, int task, int thread) {
    pool_job *job = context;
    (void)thread;
    __atomic_fetch_add(&job->counts[task], 1, __ATOMIC_RELAXED);
}

static int check_pool(void) {
    int failures = 0;
    for (int threads = 2; threads <= 3; threads++) {
        pw_pool *pool = pw_pool_create(threads);
        int counts[300];
        for (int run = 0; run < 20000; run++) {
            pool_job job = {counts, range(1, 300)};
            memset(counts, 0, sizeof(counts));
            pw_pool_run(pool, job.tasks, count_task, &job);
            for (int t = 0; t < job.tasks; t++) {
                if (__atomic_load_n(&counts[t], __ATOMIC_RELAXED) != 1) {
                    if (failures++ < 5) printf("POOL MISMATCH threads %d run %d task %d ran %d times\n", threads, run, t, counts[t]);
                }
            }
        }
        pw_pool_destroy(pool);
    }
    printf("pool: 40000 runs, %d mismatches\n", failures);
    return failures;
}

/// One convolution through every variant against the scalar one; returns the mismatching variants.
static int compare_conv(const pw_conv_geometry *g, const int8_t *input, const int8_t *filter, const int32_t *bias,
                        const int32_t *mult, const int32_t *shift, const int *variants, int count, pw_pool *pool,
                        const char *label) {
    size_t out_count = (size_t)g->batches * g->output_height * g->output_width * g->output_depth;
    int8_t *expected = malloc(out_count), *actual = malloc(out_count);
    pw_gemm_plan *reference = pw_gemm_pack(g, filter, bias, mult, shift, PW_ISA_SCALAR);
    pw_conv_run(reference, NULL, input, expected);
    pw_gemm_destroy(reference);
    int failures = 0;
    for (int v = 0; v < count; v++) {
        memset(actual, 0x55, out_count);
        pw_gemm_plan *plan = pw_gemm_pack(g, filter, bias, mult, shift, variants[v]);
        pw_conv_run(plan, pool, input, actual);
        pw_gemm_destroy(plan);
        if (memcmp(expected, actual, out_count) != 0) {
            failures++;
            printf("MISMATCH %s %s (K %d, N %d)\n", pw_isa_name(variants[v]), label,
                   g->filter_height * g->filter_width * g->input_depth, g->output_depth);
        }
    }
    free(expected);
    free(actual);
    return failures;
}

/// GEMM cases shaped like MoveNet's 1x1 convolutions (K 16…1280, N 1…1280) and its 3x3 s2 RGB
/// stem (a patch GEMM, K = 27), plus K and N that are not multiples of 4, 8 or 16 (every K and N
/// tail of the tiles), rows that do not fill the last tile, and data that stresses the neon tile:
/// symmetric weights (its smlal path), only ±127 weights with -128/127 inputs (the largest int16
/// pair sums, the largest accumulators), -128 weights (its smull-only fallback), requantization
/// with only right shifts (its unmasked rounding fix-up), with some channels unshifted or shifted
/// left, multipliers near 2^31 or 0, and output zero points and bounds at the int8 limits.
static int check_gemm_shapes(const int *variants, int count, pw_pool *pool, int *cases) {
    static const int movenet[][2] = {{32, 16}, {16, 96}, {96, 24}, {24, 144}, {144, 24}, {24, 24}, {144, 32},
                                     {32, 192}, {192, 32}, {32, 32}, {192, 64}, {64, 384}, {384, 64}, {64, 64},
                                     {384, 96}, {96, 576}, {576, 96}, {576, 160}, {160, 960}, {960, 160},
                                     {960, 320}, {320, 1280}, {1280, 64}, {64, 32}, {32, 24}, {24, 96}, {96, 1},
                                     {96, 17}, {96, 34}};
    const int shapes = (int)(sizeof(movenet) / sizeof(movenet[0]));
    int failures = 0;
    for (int trial = 0; trial < 240; trial++) {
        pw_conv_geometry g = {0};
        const int stem = trial % 8 == 7;
        // 0, 1: random symmetric weights; 2: ±127 weights, -128/127 inputs; 3: -128/127 weights and
        // inputs; 4: random weights including -128.
        const int data = trial % 5;
        g.batches = 1;
        g.dilation_height = g.dilation_width = 1;
        if (stem) {
            g.input_height = range(3, 13);
            g.input_width = range(3, 13);
            g.input_depth = 3;
            g.output_depth = 32;
            g.filter_height = g.filter_width = 3;
            g.stride_height = g.stride_width = 2;
        } else {
            const int *shape = movenet[trial % shapes];
            int k = shape[0], n = shape[1];
            if (trial % 3 == 1) k += range(-3, 3);   // K tails: 4-byte groups, single groups, non-direct rows
            if (trial % 4 == 2) n += range(-15, 15);  // N tails of every width
            g.input_height = range(1, 5);
            g.input_width = range(1, 7);  // odd pixel counts leave the last tile half full
            g.input_depth = k < 1 ? 1 : k;
            g.output_depth = n < 1 ? 1 : n;
            g.filter_height = g.filter_width = 1;
            g.stride_height = g.stride_width = 1;
        }
        g.output_height = (g.input_height + g.stride_height - 1) / g.stride_height;
        g.output_width = (g.input_width + g.stride_width - 1) / g.stride_width;
        int total_h = (g.output_height - 1) * g.stride_height + g.filter_height - g.input_height;
        int total_w = (g.output_width - 1) * g.stride_width + g.filter_width - g.input_width;
        g.pad_height = total_h > 0 ? total_h / 2 : 0;
        g.pad_width = total_w > 0 ? total_w / 2 : 0;
        g.input_offset = trial % 6 == 0 ? 128 : -range(-128, 127);
        g.output_offset = trial % 7 == 0 ? -128 : (trial % 7 == 1 ? 127 : range(-128, 127));
        g.act_min = trial % 3 == 0 ? -128 : range(-128, 0);
        g.act_max = trial % 3 == 0 ? 127 : range(g.act_min, 127);
        const int k = g.filter_height * g.filter_width * g.input_depth, n = g.output_depth;
        size_t in_count = (size_t)g.input_height * g.input_width * g.input_depth;
        int8_t *input = malloc(in_count), *filter = malloc((size_t)n * k);
        int32_t *bias = malloc(4 * (size_t)n), *mult = malloc(4 * (size_t)n), *shift = malloc(4 * (size_t)n);
        for (size_t i = 0; i < in_count; i++)
            input[i] = data == 2 || data == 3 ? ((next() & 3) ? -128 : 127) : (int8_t)next();
        for (size_t i = 0; i < (size_t)n * k; i++) {
            int8_t w = (int8_t)next();
            if (data == 2) w = (next() & 1) ? 127 : -127;
            else if (data == 3) w = (next() & 3) ? -128 : 127;  // -128 · -128 twice overflows int16
            else if (data != 4 && w == -128) w = -127;
            filter[i] = w;
        }
        // Shift modes: only right shifts (the usual TFLite case), right shifts with some channels
        // unshifted, and left shifts too.
        const int mode = trial % 3;
        for (int c = 0; c < n; c++) {
            bias[c] = data == 2 ? (int32_t)(next() % 2000001) - 1000000 : (int32_t)(next() % 200001) - 100000;
            uint32_t m = (1u << 30) + (uint32_t)(next() % (1u << 30));
            if (next() % 16 == 0) m = (next() & 1) ? 0x7FFFFFFFu : 0;
            mult[c] = (int32_t)m;
            shift[c] = mode == 0 ? -range(1, 14) : (mode == 1 ? -range(0, 14) : range(-14, 3));
            if (data == 2 && mode == 0) shift[c] = -range(4, 20);  // large accumulators down to int8
        }
        char label[64];
        snprintf(label, sizeof(label), "MoveNet-like trial %d", trial);
        failures += compare_conv(&g, input, filter, bias, mult, shift, variants, count, pool, label);
        *cases += count;
        free(input); free(filter); free(bias); free(mult); free(shift);
    }
    return failures;
}

int main(void) {
    int variants[PW_ISA_COUNT], count = 0;
    for (int isa = 1; isa < PW_ISA_COUNT; isa++)
        if (pw_isa_supported(isa)) variants[count++] = isa;
    printf("best ISA: %s; checking:", pw_isa_name(pw_best_isa()));
    for (int i = 0; i < count; i++) printf(" %s", pw_isa_name(variants[i]));
    printf("\n");
    pw_pool *pool = pw_pool_create(2);
    int failures = 0, cases = 0;
    for (int trial = 0; trial < 400; trial++) {
        int depthwise = trial % 2;
        pw_conv_geometry g = {0};
        g.batches = range(1, 2);
        g.input_height = range(1, 12);
        g.input_width = range(1, 12);
        g.input_depth = trial % 4 == 0 ? 4 * range(1, 16) : range(1, 48);
        g.output_depth = depthwise ? g.input_depth : range(1, 130);
        int pointwise = trial % 4 == 0;
        g.filter_height = pointwise ? 1 : range(1, 3);
        g.filter_width = pointwise ? 1 : range(1, 3);
        g.stride_height = pointwise ? 1 : range(1, 2);
        g.stride_width = pointwise ? 1 : range(1, 2);
        g.dilation_height = g.dilation_width = 1;
        g.output_height = (g.input_height + g.stride_height - 1) / g.stride_height;
        g.output_width = (g.input_width + g.stride_width - 1) / g.stride_width;
        int total_h = (g.output_height - 1) * g.stride_height + g.filter_height - g.input_height;
        int total_w = (g.output_width - 1) * g.stride_width + g.filter_width - g.input_width;
        g.pad_height = total_h > 0 ? total_h / 2 : 0;
        g.pad_width = total_w > 0 ? total_w / 2 : 0;
        g.input_offset = trial % 5 == 0 ? 128 : -range(-128, 127);
        g.output_offset = trial % 7 == 0 ? -128 : range(-128, 127);
        g.act_min = -128 + range(0, 20);
        g.act_max = 127 - range(0, 20);
        size_t in_count = (size_t)g.batches * g.input_height * g.input_width * g.input_depth;
        size_t taps = (size_t)g.filter_height * g.filter_width;
        size_t filter_count = depthwise ? taps * g.output_depth : (size_t)g.output_depth * taps * g.input_depth;
        size_t out_count = (size_t)g.batches * g.output_height * g.output_width * g.output_depth;
        int8_t *input = malloc(in_count), *filter = malloc(filter_count);
        int8_t *expected = malloc(out_count), *actual = malloc(out_count);
        int32_t *bias = malloc(4 * (size_t)g.output_depth), *mult = malloc(4 * (size_t)g.output_depth);
        int32_t *shift = malloc(4 * (size_t)g.output_depth);
        for (size_t i = 0; i < in_count; i++) input[i] = (int8_t)next();
        for (size_t i = 0; i < filter_count; i++) filter[i] = (int8_t)next();
        // TFLite's int8 weights are symmetric (-127…127): some kernels (neon's smlal tile) use
        // that when no weight is -128. Every third trial has such weights. Two in eighteen have
        // only extreme weights (±127) and inputs (-128, 127), the largest int16 pair sums; two
        // more have weights -128 and 127, where a pair of -128 · -128 would overflow int16, so
        // the kernels must notice the -128 and take their other path.
        if (trial % 3 == 1) {
            int extreme = trial % 18 == 4 || trial % 18 == 7;     // a conv trial and a depthwise one
            int minus128 = trial % 18 == 10 || trial % 18 == 13;  // the same, with -128 weights
            for (size_t i = 0; i < filter_count; i++) {
                if (extreme) filter[i] = (next() & 1) ? 127 : -127;
                else if (minus128) filter[i] = (next() & 3) ? -128 : 127;
                else if (filter[i] == -128) filter[i] = -127;
            }
            if (extreme || minus128)
                for (size_t i = 0; i < in_count; i++) input[i] = (next() & 3) ? -128 : 127;
        }
        for (int c = 0; c < g.output_depth; c++) {
            bias[c] = (int32_t)(next() % 200001) - 100000;
            mult[c] = (int32_t)((1u << 30) + (uint32_t)(next() % (1u << 30)));
            shift[c] = range(-14, 2);
        }
        void *reference = depthwise ? (void *)pw_depthwise_pack(&g, filter, bias, mult, shift, PW_ISA_SCALAR)
                                    : (void *)pw_gemm_pack(&g, filter, bias, mult, shift, PW_ISA_SCALAR);
        if (depthwise) pw_depthwise_run(reference, NULL, input, expected);
        else pw_conv_run(reference, NULL, input, expected);
        for (int v = 0; v < count; v++) {
            memset(actual, 0x55, out_count);
            if (depthwise) {
                pw_depthwise_plan *plan = pw_depthwise_pack(&g, filter, bias, mult, shift, variants[v]);
                pw_depthwise_run(plan, pool, input, actual);
                pw_depthwise_destroy(plan);
            } else {
                pw_gemm_plan *plan = pw_gemm_pack(&g, filter, bias, mult, shift, variants[v]);
                pw_conv_run(plan, pool, input, actual);
                pw_gemm_destroy(plan);
            }
            cases++;
            if (memcmp(expected, actual, out_count) != 0) {
                failures++;
                printf("MISMATCH %s %s trial %d\n", pw_isa_name(variants[v]), depthwise ? "depthwise" : "conv", trial);
            }
        }
        if (depthwise) pw_depthwise_destroy(reference);
        else pw_gemm_destroy(reference);
        free(input); free(filter); free(expected); free(actual); free(bias); free(mult); free(shift);
    }
    printf("%d cases, %d mismatches\n", cases, failures);
    int gemm_cases = 0, gemm_failures = check_gemm_shapes(variants, count, pool, &gemm_cases);
    printf("MoveNet-like GEMM: %d cases, %d mismatches\n", gemm_cases, gemm_failures);
    failures += gemm_failures;
    pw_pool_destroy(pool);
    // SQRT float32: every variant against libm's sqrtf, bit for bit (IEEE square root).
    int sqrt_failures = 0;
    enum { FLOATS = 4099 };
    static float values[FLOATS], roots[FLOATS];
    for (int i = 0; i < FLOATS; i++) {
        uint32_t bits = (uint32_t)next();
        if (i % 3 == 0) bits &= 0x7FFFFFFFu;  // mostly non-negative, some negative (NaN)
        memcpy(&values[i], &bits, 4);
    }
    for (int v = 0; v < count; v++) {
        pw_sqrt_float(variants[v], FLOATS, values, roots);
        for (int i = 0; i < FLOATS; i++) {
            float expected = sqrtf(values[i]);
            if (memcmp(&expected, &roots[i], 4) != 0 && !(isnan(expected) && isnan(roots[i]))) {
                if (sqrt_failures++ < 5) printf("SQRT MISMATCH %s element %d\n", pw_isa_name(variants[v]), i);
            }
        }
    }
    printf("sqrt: %d variants × %d values, %d mismatches\n", count, FLOATS, sqrt_failures);
    failures += sqrt_failures;
    failures += check_pool();
    return failures != 0;
}
