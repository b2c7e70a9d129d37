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

/// SAME padding as TFLite computes it: output = ⌈input / stride⌉, the padding split with the odd
/// pixel after.
static void same_padding(pw_conv_geometry *g) {
    g->output_height = (g->input_height + g->stride_height - 1) / g->stride_height;
    g->output_width = (g->input_width + g->stride_width - 1) / g->stride_width;
    int total_h = (g->output_height - 1) * g->stride_height + g->filter_height - g->input_height;
    int total_w = (g->output_width - 1) * g->stride_width + g->filter_width - g->input_width;
    g->pad_height = total_h > 0 ? total_h / 2 : 0;
    g->pad_width = total_w > 0 ? total_w / 2 : 0;
}

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

/// CONV_2D shapes like MoveNet's (1×1 with K = 16…96 and 1, 17, 34 channels, the 3×3 s2 RGB stem
/// through the patch path) with odd sizes around them (rows not a multiple of any tile's rows,
/// K not a multiple of 16 or 8, widths of every remainder mod 16), extreme data (inputs −128/127,
/// weights ±127 or −128, biases near ±2^24, multipliers up to 2^31 − 1) and both requantisation
/// forms of the neondot tile: every shift right (−1 and −2 make rounding ties common) and mixed
/// shifts (left, none, right). Every variant against the scalar one.
static int check_gemm_shapes(pw_pool *pool, const int *variants, int count, int *cases) {
    static const int shapes[][6] = {
        // h, w, input depth, output depth, filter size, stride
        {13, 11, 16, 96, 1, 1}, {9, 7, 24, 144, 1, 1}, {7, 5, 96, 24, 1, 1}, {5, 7, 96, 1, 1, 1},
        {6, 5, 96, 17, 1, 1},   {5, 5, 96, 34, 1, 1},  {4, 3, 144, 24, 1, 1}, {3, 3, 1280, 64, 1, 1},
        {5, 3, 20, 33, 1, 1},   {7, 3, 28, 31, 1, 1},  {3, 4, 12, 7, 1, 1},   {2, 3, 4, 45, 1, 1},
        {3, 7, 40, 50, 1, 1},   {1, 1, 36, 19, 1, 1},  {19, 17, 3, 32, 3, 2}, {11, 9, 3, 29, 3, 2},
        {8, 8, 5, 18, 3, 1},    {6, 9, 7, 3, 2, 1},
    };
    int failures = 0;
    const int nshapes = (int)(sizeof shapes / sizeof shapes[0]);
    for (int trial = 0; trial < 6 * nshapes; trial++) {
        const int *s = shapes[trial % nshapes];
        const int data = trial / nshapes;  // 0, 1: random; 2: extreme ±127; 3: −128 weights; 4, 5: random, large biases
        const int all_right = trial % 2 == 0;
        pw_conv_geometry g = {0};
        g.batches = 1;
        g.input_height = s[0];
        g.input_width = s[1];
        g.input_depth = s[2];
        g.output_depth = s[3];
        g.filter_height = g.filter_width = s[4];
        g.stride_height = g.stride_width = s[5];
        g.dilation_height = g.dilation_width = 1;
        same_padding(&g);
        g.input_offset = data == 2 ? 128 : -range(-128, 127);
        g.output_offset = data == 3 ? 127 : range(-128, 127);
        g.act_min = trial % 3 == 0 ? -128 : -128 + range(0, 120);
        g.act_max = trial % 3 == 0 ? 127 : 127 - range(0, 120);
        if (g.act_min > g.act_max) g.act_min = g.act_max;
        size_t in_count = (size_t)g.input_height * g.input_width * g.input_depth;
        size_t k = (size_t)s[4] * s[4] * g.input_depth;
        size_t filter_count = (size_t)g.output_depth * k;
        size_t out_count = (size_t)g.output_height * g.output_width * g.output_depth;
        int8_t *input = malloc(in_count), *filter = malloc(filter_count);
        int8_t *expected = malloc(out_count), *actual = malloc(out_count);
        int32_t *bias = malloc(4 * (size_t)g.output_depth), *mult = malloc(4 * (size_t)g.output_depth);
        int32_t *shift = malloc(4 * (size_t)g.output_depth);
        for (size_t i = 0; i < in_count; i++) input[i] = data == 2 || data == 3 ? ((next() & 3) ? -128 : 127) : (int8_t)next();
        for (size_t i = 0; i < filter_count; i++) {
            if (data == 2) filter[i] = (next() & 1) ? 127 : -127;
            else if (data == 3) filter[i] = (next() & 3) ? -128 : 127;
            else filter[i] = (int8_t)next();
        }
        for (int c = 0; c < g.output_depth; c++) {
            bias[c] = data >= 4 ? (int32_t)(next() % (1u << 25)) - (1 << 24) : (int32_t)(next() % 200001) - 100000;
            uint32_t r = (uint32_t)next();
            mult[c] = r % 13 == 0 ? 0x7FFFFFFF : r % 17 == 0 ? 0 : (int32_t)((1u << 30) + (r % (1u << 30)));
            shift[c] = all_right ? (c % 3 ? -range(1, 2) : -range(3, 20)) : range(-20, 3);
        }
        pw_gemm_plan *reference = pw_gemm_pack(&g, filter, bias, mult, shift, PW_ISA_SCALAR);
        pw_conv_run(reference, NULL, input, expected);
        for (int v = 0; v < count; v++) {
            memset(actual, 0x55, out_count);
            pw_gemm_plan *plan = pw_gemm_pack(&g, filter, bias, mult, shift, variants[v]);
            pw_conv_run(plan, pool, input, actual);
            pw_gemm_destroy(plan);
            (*cases)++;
            if (memcmp(expected, actual, out_count) != 0) {
                failures++;
                printf("MISMATCH %s gemm shape %d (%dx%dx%d → %d, %dx%d s%d) data %d shifts %s\n", pw_isa_name(variants[v]),
                       trial % nshapes, s[0], s[1], s[2], s[3], s[4], s[4], s[5], data, all_right ? "right" : "mixed");
            }
        }
        pw_gemm_destroy(reference);
        free(input); free(filter); free(expected); free(actual); free(bias); free(mult); free(shift);
    }
    return failures;
}

/// Depthwise 3x3 (depth multiplier 1) as MoveNet runs it, against the scalar variant: SAME (and
/// VALID) padding at stride 1 and 2, images from 1×1 up to 26×26 (borders, tiny widths, interior
/// runs), channel counts around and beyond 16 (MoveNet's 24 … 960 and ones not a multiple of 16 or
/// 8), input offsets as MoveNet's (−zero point) and the extremes 128 and −127, weights −127…127,
/// ±127 only, and with −128 (pairs of −128 take the unpaired path), inputs −128/127 only, biases
/// that saturate the int16 narrowing, shifts that shift left, act ranges narrower than int8.
/// (Prepare rejects zero points outside int8, so the input offset is always in −127…128.)
static int check_depthwise_3x3(const int *variants, int count, pw_pool *pool) {
    static const int channel_choices[] = {16, 24, 32, 17, 31, 33, 40, 47, 64, 96, 144, 15, 8, 1, 192, 20};
    int failures = 0, cases = 0;
    for (int trial = 0; trial < 600; trial++) {
        pw_conv_geometry g = {0};
        const int stride = 1 + trial % 2, valid = trial % 11 == 5;
        g.batches = trial % 13 == 0 ? 2 : 1;
        g.input_height = trial % 5 == 0 ? range(1, 4) : range(1, 26);
        g.input_width = trial % 7 == 0 ? range(1, 4) : range(1, 26);
        g.input_depth = g.output_depth = channel_choices[trial % 16];
        g.filter_height = g.filter_width = 3;
        g.stride_height = g.stride_width = stride;
        g.dilation_height = g.dilation_width = 1;
        if (valid) {
            if (g.input_height < 3 || g.input_width < 3) g.input_height = g.input_width = 3 + range(0, 8);
            g.output_height = (g.input_height - 3) / stride + 1;
            g.output_width = (g.input_width - 3) / stride + 1;
        } else {
            same_padding(&g);
        }
        const int kind = trial % 9;  // 0 symmetric, 1 ±127 + extreme inputs, 2 −128 weights + extreme inputs
        g.input_offset = trial % 17 == 3 ? 128 : trial % 17 == 4 ? -127 : -range(-128, 127);
        g.output_offset = trial % 19 == 2 ? -128 : trial % 19 == 3 ? 127 : range(-128, 127);
        g.act_min = trial % 3 ? -128 : -128 + range(0, 40);
        g.act_max = trial % 3 ? 127 : 127 - range(0, 40);
        const int C = g.output_depth;
        size_t in_count = (size_t)g.batches * g.input_height * g.input_width * C;
        size_t out_count = (size_t)g.batches * g.output_height * g.output_width * C;
        int8_t *input = malloc(in_count), *filter = malloc(9 * (size_t)C);
        int8_t *expected = malloc(out_count), *actual = malloc(out_count);
        int32_t *bias = malloc(4 * (size_t)C), *mult = malloc(4 * (size_t)C), *shift = malloc(4 * (size_t)C);
        for (size_t i = 0; i < in_count; i++)
            input[i] = kind == 1 || kind == 2 ? ((next() & 3) ? -128 : 127) : (int8_t)next();
        for (int i = 0; i < 9 * C; i++) {
            if (kind == 1) filter[i] = (next() & 1) ? 127 : -127;
            else if (kind == 2) filter[i] = (next() & 3) ? -128 : 127;
            else if (kind == 3) filter[i] = (int8_t)next();  // any int8, −128 now and then
            else filter[i] = (int8_t)(range(-127, 127));
        }
        for (int c = 0; c < C; c++) {
            bias[c] = trial % 10 == 7 ? (int32_t)(next() % 2000000001u) - 1000000000 : (int32_t)(next() % 200001) - 100000;
            mult[c] = c % 7 == 3 ? 0x7FFFFFFF : (int32_t)((1u << 30) + (uint32_t)(next() % (1u << 30)));
            shift[c] = trial % 8 == 6 ? range(-3, 3) : range(-20, 0);
        }
        pw_depthwise_plan *reference = pw_depthwise_pack(&g, filter, bias, mult, shift, PW_ISA_SCALAR);
        pw_depthwise_run(reference, NULL, input, expected);
        for (int v = 0; v < count; v++) {
            memset(actual, 0x55, out_count);
            pw_depthwise_plan *plan = pw_depthwise_pack(&g, filter, bias, mult, shift, variants[v]);
            pw_depthwise_run(plan, trial % 2 ? pool : NULL, input, actual);
            pw_depthwise_destroy(plan);
            cases++;
            if (memcmp(expected, actual, out_count) != 0) {
                if (failures++ < 10)
                    printf("DEPTHWISE 3x3 MISMATCH %s trial %d: %dx%dx%d stride %d%s offset %d\n", pw_isa_name(variants[v]),
                           trial, g.input_height, g.input_width, C, stride, valid ? " VALID" : "", g.input_offset);
            }
        }
        pw_depthwise_destroy(reference);
        free(input); free(filter); free(expected); free(actual); free(bias); free(mult); free(shift);
    }
    printf("depthwise 3x3: %d cases, %d mismatches\n", cases, failures);
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
static int check_movenet_gemm(const int *variants, int count, pw_pool *pool, int *cases) {
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
        same_padding(&g);
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
        same_padding(&g);
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
    int gemm_cases = 0, gemm_failures = check_gemm_shapes(pool, variants, count, &gemm_cases);
    printf("gemm shapes: %d cases, %d mismatches\n", gemm_cases, gemm_failures);
    failures += gemm_failures;
    int movenet_cases = 0, movenet_failures = check_movenet_gemm(variants, count, pool, &movenet_cases);
    printf("MoveNet-like GEMM: %d cases, %d mismatches\n", movenet_cases, movenet_failures);
    failures += movenet_failures;
    printf("%d cases, %d mismatches\n", cases, failures);
    failures += check_depthwise_3x3(variants, count, pool);
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
