// CKernels: posewatch's optimised int8 kernels (SIMD intrinsics) and the worker pool that splits
// one operator over threads. InferenceCore's reference kernels are the oracle: every variant here
// is tested bit-exact against them (Tests/InferenceCoreTests/OptimizedKernelTests.swift).
//
// Variants are named by tile and ISA, XNNPACK-style (e.g. gemm 4x64c4 avx512vnni). Weights are
// packed once at Prepare (pw_gemm_pack); run functions allocate nothing.
#ifndef POSEWATCH_CKERNELS_H
#define POSEWATCH_CKERNELS_H
#include <stdint.h>
#include <stddef.h>

// MARK: CPU features (cpuid / getauxval(AT_HWCAP)), read once.

enum {
    PW_ISA_SCALAR = 0,      // portable C (the compiler's baseline vectorisation)
    PW_ISA_SSE41 = 1,       // x86-64 SSE4.1 (portable C compiled for it)
    PW_ISA_AVX2 = 2,        // x86-64 AVX2: vpmaddwd on sign-extended int16
    PW_ISA_AVX512VNNI = 3,  // x86-64 AVX-512 VNNI: vpdpbusd
    PW_ISA_NEON = 4,        // aarch64 NEON: smull + sadalp (Cortex-A72, Pi 4)
    PW_ISA_NEONDOT = 5,     // aarch64 NEON SDOT (Cortex-A76, Pi 5)
    PW_ISA_COUNT = 6
};

/// The best ISA this CPU and OS support (cpuid + xgetbv on x86-64, AT_HWCAP on aarch64).
int pw_best_isa(void);
/// Whether `isa` can run here.
int pw_isa_supported(int isa);
/// Variant name, e.g. "avx2".
const char *pw_isa_name(int isa);
/// Online CPUs (sysconf), at least 1.
int pw_cpu_count(void);

// MARK: worker pool (pthreads, created once; no allocation per run)

typedef struct pw_pool pw_pool;
typedef void (*pw_task_fn)(void *context, int task, int thread);
/// A pool of `threads` − 1 workers plus the calling thread. Returns NULL on failure.
pw_pool *pw_pool_create(int threads);
void pw_pool_destroy(pw_pool *pool);
int pw_pool_threads(const pw_pool *pool);
/// Runs fn(context, task, thread) for task in 0..<tasks over the pool; returns when all are done.
/// `pool` may be NULL (runs inline). Not reentrant.
void pw_pool_run(pw_pool *pool, int tasks, pw_task_fn fn, void *context);

// MARK: convolution as int8 GEMM (1x1 directly; general KxK through per-tile patches)

#define PW_GEMM_NR 16
#define PW_MAX_THREADS 64

typedef struct {
    // geometry (NHWC, one batch at a time)
    int32_t batches, input_height, input_width, input_depth;
    int32_t output_height, output_width, output_depth;
    int32_t filter_height, filter_width, stride_height, stride_width;
    int32_t dilation_height, dilation_width, pad_height, pad_width;
    int32_t input_offset, output_offset, act_min, act_max;
} pw_conv_geometry;

typedef struct pw_gemm_plan pw_gemm_plan;

/// Packs a CONV_2D int8 filter [N][KH][KW][C] (or a 1x1 one) for `isa`: blocks of 16 output
/// channels, K padded to a multiple of 4, bias with the input offset folded in, per-channel
/// multiplier and left/right shifts. `bias` may be NULL. Returns NULL on allocation failure.
pw_gemm_plan *pw_gemm_pack(const pw_conv_geometry *geometry, const int8_t *filter, const int32_t *bias,
                           const int32_t *multipliers, const int32_t *shifts, int isa);
void pw_gemm_destroy(pw_gemm_plan *plan);
int pw_gemm_isa(const pw_gemm_plan *plan);
/// Whether the plan reads input rows in place (1x1, stride 1, no padding, depth % 4 == 0).
int pw_gemm_is_direct(const pw_gemm_plan *plan);
/// The register tile the plan runs: rows (pixels) × output channels per step.
void pw_gemm_tile(const pw_gemm_plan *plan, int *rows, int *channels);
/// Runs the convolution. Allocation-free.
void pw_conv_run(const pw_gemm_plan *plan, pw_pool *pool, const int8_t *input, int8_t *output);

// MARK: depthwise convolution, depth multiplier 1, any KxK (3x3 in MoveNet), stride 1 or 2

typedef struct pw_depthwise_plan pw_depthwise_plan;
pw_depthwise_plan *pw_depthwise_pack(const pw_conv_geometry *geometry, const int8_t *filter, const int32_t *bias,
                                     const int32_t *multipliers, const int32_t *shifts, int isa);
void pw_depthwise_destroy(pw_depthwise_plan *plan);
int pw_depthwise_isa(const pw_depthwise_plan *plan);
void pw_depthwise_run(const pw_depthwise_plan *plan, pw_pool *pool, const int8_t *input, int8_t *output);

// MARK: element-wise int8 ADD/SUB and MUL (same shapes), RESIZE_BILINEAR int8

typedef struct {
    int32_t input1_offset, input2_offset, output_offset, left_shift;
    int32_t input1_multiplier, input1_shift, input2_multiplier, input2_shift;
    int32_t output_multiplier, output_shift, act_min, act_max, is_subtraction;
} pw_add_params;
void pw_add_int8(const pw_add_params *p, int isa, pw_pool *pool, const int8_t *a, const int8_t *b, int8_t *out,
                 int64_t count);

typedef struct {
    int32_t input1_offset, input2_offset, output_offset, output_multiplier, output_shift, act_min, act_max;
} pw_mul_params;
void pw_mul_int8(const pw_mul_params *p, int isa, pw_pool *pool, const int8_t *a, const int8_t *b, int8_t *out,
                 int64_t count);

/// Any int8 × int8 → int8 binary operator as a 256×256 table (built at Prepare by running the
/// reference kernel on all 65536 pairs, so exact by construction), over numpy broadcasting:
/// `dimensions`, `strides1`, `strides2` are the 6-D plan of the reference (0 = broadcast). With
/// `isa` avx512vnni on a CPU with AVX512_VBMI, long runs against a value or a short repeated
/// operand look up 64 bytes at a time (vpermi2b).
void pw_binary_table_int8(int isa, const uint8_t *table, const int64_t *dimensions, const int64_t *strides1,
                          const int64_t *strides2, const int8_t *a, const int8_t *b, int8_t *out);

/// out[i] = table[in[i]] for a 1-byte input, entries of `entry_bytes` (1, 2 or 4) bytes: any unary
/// operator on int8/uint8 (QUANTIZE int→int, CAST, DEQUANTIZE), the table built by the reference
/// (1-byte entries: vpermi2b with `isa` avx512vnni where the CPU has AVX512_VBMI).
void pw_lookup_u8(int isa, const void *table, int entry_bytes, int64_t count, const uint8_t *input, void *output);

/// QUANTIZE float32 → int8 (AffineQuantize): clamp(saturate(round_half_away(x / scale)) + zero_point).
void pw_quantize_float_int8(float scale, int32_t zero_point, int64_t count, const float *input, int8_t *output);

/// SQRT float32: IEEE square root (correctly rounded at every width, as the reference's).
void pw_sqrt_float(int isa, int64_t count, const float *input, float *output);

/// ARG_MAX over 8-bit data ([outer][axis][inner], signed or not): the first index of the largest
/// value along the axis, as int32 or int64.
void pw_argmax_8bit(int is_signed, int64_t outer, int64_t axis, int64_t inner, const void *input, void *output,
                    int output_int64);

typedef struct {
    int32_t batches, input_height, input_width, depth, output_height, output_width;
    int32_t height_scale10, width_scale10, half_pixel_centers;
} pw_resize_params;
void pw_resize_bilinear_int8(const pw_resize_params *p, int isa, pw_pool *pool, const int8_t *input,
                             int8_t *output);

#endif
