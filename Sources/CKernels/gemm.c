// CONV_2D int8 as GEMM: output[m][n] = requantize(Σ_k W[n][k] · (A[m][k] + input_offset) + bias[n]).
// The input offset is folded into the bias at pack time (Σ_k W[n][k] · input_offset), so the
// inner loop is a plain int8 × int8 → int32 dot product. This file packs the plan (gemm_plan.h),
// picks the tile and runs it over the output rows; the tiles of each ISA have a file of their own.
//
// Tiles (rows × channels, ISA): 2x16c4 scalar here; in gemm_x86.c 2x16c4 sse41 (the same code),
// 2x16c4 avx2 (vpmovsxbw + vpmaddwd), 6x64c4 / 8x48c4 avx512vnni (vpdpbusd: weights + 128
// unsigned, input signed and broadcast from memory, 128·Σx of each row subtracted at the start;
// 8 rows when the layer has at most 48 channels); 2x16c4 neon in gemm_neon.c (smull + smlal +
// sadalp, asm); 6x16c4 neondot in gemm_neondot.c (lane-indexed sdot, asm). Rows are pointers: a
// 1x1 convolution reads the input in place; any other convolution copies one tile of patches
// (MR × K bytes, per thread, packed at Prepare) and runs the same tile.
#include "gemm_plan.h"
#include <stdlib.h>

// MARK: portable (scalar; gemm_x86.c compiles the same code for SSE4.1)

PORTABLE_TILE(tile_2x16c4_scalar, static)

static int tile_rows(int isa, int nblocks) {
    switch (isa) {
    case PW_ISA_AVX512VNNI: return nblocks >= 4 ? 6 : 8;
    case PW_ISA_NEONDOT: return 6;
    default: return 2;
    }
}

static tile_fn tile_for(int isa) {
    switch (isa) {
#if defined(__x86_64__)
    case PW_ISA_SSE41: return pw_gemm_tile_sse41;
    case PW_ISA_AVX2: return pw_gemm_tile_avx2;
    case PW_ISA_AVX512VNNI: return pw_gemm_tile_avx512vnni;
#endif
#if defined(__aarch64__)
    case PW_ISA_NEON: return pw_gemm_tile_neon;
    case PW_ISA_NEONDOT: return pw_gemm_tile_neondot;
#endif
    default: return tile_2x16c4_scalar;
    }
}

/// The neon tile's per-block constants, in the order it reads them (see neon_2x16_blocks): the
/// folded bias as the accumulators hold their channels ([b0, 0, b1, 0], [b2, 0, b3, 0], ...: the
/// pair sums of accumulator 2i are channels 4i, 4i+1), once per row of the tile; the multipliers;
/// the right shifts negated (srshl shifts right by a negative amount); the left shifts when some
/// channel has one. Padding channels are all zeros (their outputs are never stored).
static int pack_neon_params(pw_gemm_plan *p) {
    int any_left = 0, any_unshifted = 0;
    for (int n = 0; n < p->n; n++) {
        any_left |= p->left[n] != 0;
        any_unshifted |= p->right[n] == 0;
    }
    p->neon_flags = any_left | any_unshifted << 1 | (p->g.act_min > -128 || p->g.act_max < 127) << 2;
    const size_t words = any_left ? 112 : 96;
    p->neon_params = calloc((size_t)p->nblocks * words, 4);
    if (!p->neon_params) return 0;
    for (int nb = 0; nb < p->nblocks; nb++) {
        int32_t *block = p->neon_params + (size_t)nb * words;
        for (int j = 0; j < 16 && nb * 16 + j < p->n; j++) {
            const int n = nb * 16 + j;
            block[2 * j] = block[32 + 2 * j] = p->bias[n];
            block[64 + j] = p->multiplier[n];
            block[80 + j] = -p->right[n];
            if (any_left) block[96 + j] = p->left[n];
        }
    }
    return 1;
}

pw_gemm_plan *pw_gemm_pack(const pw_conv_geometry *g, const int8_t *filter, const int32_t *bias,
                           const int32_t *multipliers, const int32_t *shifts, int isa) {
    if (!pw_isa_supported(isa)) return NULL;
    pw_gemm_plan *p = calloc(1, sizeof(pw_gemm_plan));
    if (!p) return NULL;
    p->g = *g;
    p->isa = isa;
    p->n = g->output_depth;
    p->k = g->filter_height * g->filter_width * g->input_depth;
    p->kp = (p->k + 3) / 4 * 4;
    p->nblocks = (p->n + 15) / 16;
    p->mr = tile_rows(isa, p->nblocks);
    // Measured on MoveNet's shapes (Zen 5): the row sums pay off in the 6x64 tile from K = 64 on
    // (up to 20 % faster at K ≥ 320); the 8-row tiles of narrow layers are faster without.
    p->memory_input = isa == PW_ISA_AVX512VNNI && p->nblocks >= 4 && p->kp >= 64;
    p->direct = g->filter_height == 1 && g->filter_width == 1 && g->stride_height == 1 && g->stride_width == 1 &&
                g->pad_height == 0 && g->pad_width == 0 && g->input_depth % 4 == 0;
    size_t channels = (size_t)p->nblocks * 16;
    p->weights = calloc(channels * (size_t)p->kp, 1);
    p->bias = calloc(channels, 4);
    p->multiplier = calloc(channels, 4);
    p->left = calloc(channels, 4);
    p->right = calloc(channels, 4);
    // Patch convolutions only: each thread's patches, plus the 64 bytes a whole-patch store may
    // write past the last one, rounded to cache lines so that threads never write the same line.
    // Every byte a tile reads is written first (no initialisation; untouched pages cost no memory).
    p->scratch_stride = ((size_t)MR_MAX * p->kp + 64 + 63) / 64 * 64;
    p->scratch = p->direct ? NULL : aligned_alloc(64, (size_t)PW_MAX_THREADS * p->scratch_stride);
    if (!p->weights || !p->bias || !p->multiplier || !p->left || !p->right || (!p->direct && !p->scratch)) {
        pw_gemm_destroy(p);
        return NULL;
    }
    p->no_minus_128 = 1;
    p->right_shift_only = 1;
    for (int n = 0; n < p->n; n++) p->right_shift_only &= shifts[n] < 0 && multipliers[n] >= 0;
    for (size_t i = 0; i < (size_t)p->n * p->k; i++) p->no_minus_128 &= filter[i] != -128;
    for (int n = 0; n < p->n; n++) {
        int32_t sum = 0;
        int8_t *block = p->weights + (size_t)(n / 16) * p->kp * 16;
        for (int k = 0; k < p->k; k++) {
            int8_t w = filter[(size_t)n * p->k + k];
            sum += w;
            // vpdpbusd multiplies unsigned by signed bytes: with memory_input the VNNI tile reads
            // weights as w + 128, otherwise the input as x + 128.
            block[(k / 4) * 64 + (n % 16) * 4 + k % 4] = p->memory_input ? (int8_t)(w ^ 0x80) : w;
        }
        // Wrapping int32 arithmetic, like the reference's accumulator; 128·Σ w comes off when the
        // tile reads the input as x + 128.
        uint32_t folded = (uint32_t)(bias ? bias[n] : 0) + (uint32_t)g->input_offset * (uint32_t)sum;
        if (isa == PW_ISA_AVX512VNNI && !p->memory_input) folded -= 128u * (uint32_t)sum;
        p->bias[n] = (int32_t)folded;
        p->multiplier[n] = multipliers[n];
        p->left[n] = shifts[n] > 0 ? shifts[n] : 0;
        p->right[n] = shifts[n] > 0 ? 0 : -shifts[n];
    }
    if (isa == PW_ISA_NEON && !pack_neon_params(p)) {
        pw_gemm_destroy(p);
        return NULL;
    }
    return p;
}

void pw_gemm_destroy(pw_gemm_plan *p) {
    if (!p) return;
    free(p->weights);
    free(p->bias);
    free(p->multiplier);
    free(p->left);
    free(p->right);
    free(p->scratch);
    free(p->neon_params);
    free(p);
}

int pw_gemm_isa(const pw_gemm_plan *p) { return p->isa; }
int pw_gemm_is_direct(const pw_gemm_plan *p) { return p->direct; }

void pw_gemm_tile(const pw_gemm_plan *p, int *rows, int *channels) {
    *rows = p->mr;
    if (p->isa == PW_ISA_AVX512VNNI) *channels = p->mr == 8 ? 16 * p->nblocks : 64;
    else *channels = 16;
}

typedef struct {
    const pw_gemm_plan *plan;
    const int8_t *input;
    int8_t *output;
    int m, rows_per_task;
    tile_fn tile;
} conv_job;


/// Copies the receptive field of output pixel (batch, oy, ox) into `patch` (kp bytes); taps in the padding
/// get the input zero point, so they contribute W · (zp + input_offset) = 0, as the reference skips them.
static inline void gather_patch(const pw_gemm_plan *p, const int8_t *input, int batch, int oy, int ox,
                                int8_t *patch) {
    const pw_conv_geometry *g = &p->g;
    int8_t zero_point = (int8_t)(-g->input_offset);
    int c = g->input_depth;
    int8_t *dst = patch;
    int iy0 = oy * g->stride_height - g->pad_height, ix0 = ox * g->stride_width - g->pad_width;
    if (g->dilation_width == 1 && iy0 >= 0 && ix0 >= 0 && ix0 + g->filter_width <= g->input_width &&
        iy0 + (g->filter_height - 1) * g->dilation_height < g->input_height) {
        // The whole window is inside the image: one contiguous run of filter_width × c bytes per
        // filter row (9 bytes for MoveNet's 3x3 RGB stem), copied without per-tap checks.
        size_t run = (size_t)g->filter_width * c;
#if defined(__x86_64__)
        if (p->isa == PW_ISA_AVX512VNNI && p->kp <= 64) {
            const int8_t *first =
                input + (((size_t)batch * g->input_height + iy0) * g->input_width + ix0) * c;
            pw_gemm_patch_avx512(first, (size_t)g->dilation_height * g->input_width * c, g->filter_height, (int)run, patch);
            return;
        }
#endif
        for (int fy = 0; fy < g->filter_height; fy++, dst += run) {
            const int8_t *src =
                input + (((size_t)batch * g->input_height + iy0 + fy * g->dilation_height) * g->input_width + ix0) * c;
            if (run >= 8 && run <= 16) {
                uint64_t head, tail;
                memcpy(&head, src, 8);
                memcpy(&tail, src + run - 8, 8);
                memcpy(dst, &head, 8);
                memcpy(dst + run - 8, &tail, 8);
            } else {
                memcpy(dst, src, run);
            }
        }
        if (p->kp > p->k) memset(patch + p->k, 0, (size_t)(p->kp - p->k));
        return;
    }
    for (int fy = 0; fy < g->filter_height; fy++) {
        int iy = oy * g->stride_height - g->pad_height + fy * g->dilation_height;
        for (int fx = 0; fx < g->filter_width; fx++, dst += c) {
            int ix = ox * g->stride_width - g->pad_width + fx * g->dilation_width;
            if (iy < 0 || iy >= g->input_height || ix < 0 || ix >= g->input_width) {
                for (int j = 0; j < c; j++) dst[j] = zero_point;
            } else {
                const int8_t *src = input + (((size_t)batch * g->input_height + iy) * g->input_width + ix) * c;
                if (c < 16) {
                    for (int j = 0; j < c; j++) dst[j] = src[j];  // an RGB pixel: no memcpy call
                } else {
                    memcpy(dst, src, (size_t)c);
                }
            }
        }
    }
    if (p->kp > p->k) memset(patch + p->k, 0, (size_t)(p->kp - p->k));
}

static void conv_task(void *context, int task, int thread) {
    const conv_job *job = context;
    const pw_gemm_plan *p = job->plan;
    int start = task * job->rows_per_task;
    int end = start + job->rows_per_task;
    if (end > job->m) end = job->m;
#if defined(__aarch64__)
    if (p->direct && p->isa == PW_ISA_NEON) {
        pw_gemm_neon_direct_rows(p, job->input + (size_t)start * p->k, end - start, job->output + (size_t)start * p->n);
        return;
    }
#endif
    int8_t *scratch = p->scratch + (size_t)thread * p->scratch_stride;
    const int8_t *rows[MR_MAX];
    // The output pixel of row `start`, then stepped along (no divisions per patch).
    const int width = p->g.output_width, height = p->g.output_height;
    int batch = start / (width * height), oy = start % (width * height) / width, ox = start % width;
    for (int m = start; m < end; m += p->mr) {
        int valid = end - m < p->mr ? end - m : p->mr;
        for (int r = 0; r < p->mr; r++) {
            int row = m + (r < valid ? r : valid - 1);
            if (p->direct) {
                rows[r] = job->input + (size_t)row * p->k;
            } else if (r < valid) {
                gather_patch(p, job->input, batch, oy, ox, scratch + (size_t)r * p->kp);
                rows[r] = scratch + (size_t)r * p->kp;
                if (++ox == width) {
                    ox = 0;
                    if (++oy == height) {
                        oy = 0;
                        batch++;
                    }
                }
            } else {
                rows[r] = rows[valid - 1];
            }
        }
        job->tile(p, rows, valid, job->output + (size_t)m * p->n);
    }
}

void pw_conv_run(const pw_gemm_plan *p, pw_pool *pool, const int8_t *input, int8_t *output) {
    conv_job job;
    job.plan = p;
    job.input = input;
    job.output = output;
    job.m = p->g.batches * p->g.output_height * p->g.output_width;
    job.tile = tile_for(p->isa);
    // Below ~256K multiply-adds a wake-up of the other threads costs more than it saves.
    int64_t work = (int64_t)job.m * p->n * p->kp;
    job.rows_per_task = work < (1 << 18) ? job.m : pw_task_size(job.m, pw_pool_threads(pool), p->mr);
    int tasks = (job.m + job.rows_per_task - 1) / job.rows_per_task;
    pw_pool_run(pool, tasks, conv_task, &job);
}
