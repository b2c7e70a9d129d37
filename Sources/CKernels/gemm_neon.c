// CONV_2D GEMM tile for NEON without a dot product (Cortex-A72, A53). The plan and its packing
// (pack_neon_params): gemm.c, gemm_plan.h.
#include "gemm_plan.h"

#if defined(__aarch64__)
// The neon tile (Cortex-A72/A53: no dot product) is one hand-allocated inline-asm loop, so that its
// cost does not depend on the compiler's register allocation (clang 17 kept the intrinsics tile's
// accumulators on the stack: ~0.8 instructions per multiply-add instead of ~0.2).
//
// Registers: v0-v7 the 8 accumulators of row 0, v8-v15 those of row 1 (accumulator 2i holds
// channels 4i and 4i+1 as two pair sums each, 2i+1 channels 4i+2 and 4i+3), v16-v19 weights (in
// PW_NEON_GROUP8 two pairs of k 0-3 / k 4-7 of 4 channels; in the single-group loop four k of the
// 16 channels), v24/v25 and v26/v27 rows 0 and 1's 8 bytes as two 4-byte broadcasts (ld2r),
// v28-v31 and v20-v23 products. Per 8 k and 2 rows: 8 weight loads, 2 input loads, 16 smull(2) +
// 16 smlal(2) (int16: with no weight at -128 two products are at most 2 · 127 · 128 = 32512 in
// magnitude), 16 sadalp and the weight pointer's step, 59 instructions for 256 multiply-adds, and
// one of loop overhead (the loop runs two groups of 8 k per iteration).
// Without that guarantee (a filter holding -128) every group takes the smull + sadalp step.
/// One quarter (4 channels) of a group of 8 k for both rows, in order: the narrow last blocks
/// (neon_2xq_tail) run it; the full blocks run the scheduled PW_NEON_GROUP8.
#define PW_NEON_PAIR(wa, wb, r0a, r0b, r1a, r1b)                                                               \
    "smull  v28.8h, v" #wa ".8b, v24.8b\n\t"                                                                  \
    "smull2 v29.8h, v" #wa ".16b, v24.16b\n\t"                                                                \
    "smull  v30.8h, v" #wa ".8b, v26.8b\n\t"                                                                  \
    "smull2 v31.8h, v" #wa ".16b, v26.16b\n\t"                                                                \
    "smlal  v28.8h, v" #wb ".8b, v25.8b\n\t"                                                                  \
    "smlal2 v29.8h, v" #wb ".16b, v25.16b\n\t"                                                                \
    "smlal  v30.8h, v" #wb ".8b, v27.8b\n\t"                                                                  \
    "smlal2 v31.8h, v" #wb ".16b, v27.16b\n\t"                                                                \
    "sadalp v" #r0a ".4s, v28.8h\n\t"                                                                         \
    "sadalp v" #r0b ".4s, v29.8h\n\t"                                                                         \
    "sadalp v" #r1a ".4s, v30.8h\n\t"                                                                         \
    "sadalp v" #r1b ".4s, v31.8h\n\t"

/// One group of 8 k for both rows and all 16 channels: each row's 8 bytes as two broadcasts, the 128
/// weight bytes (two c4 groups: k 0-3 of the 16 channels at w, k 4-7 at w + 64) as eight single
/// loads, and per quarter of 4 channels smull(2) + smlal(2) + sadalp as in PW_NEON_PAIR. The
/// quarters alternate between two weight pairs (v16/v17, v18/v19) and two sets of products
/// (v28-v31, v20-v23), so a quarter's products are made while the one before is still being
/// accumulated. The order is a schedule for the in-order Cortex-A53 (llvm-mca's model of it: 131
/// cycles per two groups instead of 179 for the quarters one after another after two 4-register
/// loads; the A72's (A57 model) 64 unchanged): every instruction waits as little as possible for
/// the one whose result it needs, and the single 16-byte loads pair with arithmetic where a
/// 64-byte load stalled the pipe. The sums are the same: each accumulator gets the same products.
/// The order came from Tests/Benchmarks/arm64/schedule_asm.py (rerun it after changing the block).
/// The loop below runs it twice per iteration.
#define PW_NEON_GROUP8 \
    "ld2r { v24.4s, v25.4s }, [%[x0]], #8\n\t" \
    "ldr q16, [%[w], #0]\n\t"                  \
    "ld2r { v26.4s, v27.4s }, [%[x1]], #8\n\t" \
    "ldr q17, [%[w], #64]\n\t"                 \
    "ldr q18, [%[w], #16]\n\t"                 \
    "smull v28.8h, v16.8b, v24.8b\n\t"         \
    "smull2 v29.8h, v16.16b, v24.16b\n\t"      \
    "smull v30.8h, v16.8b, v26.8b\n\t"         \
    "smull2 v31.8h, v16.16b, v26.16b\n\t"      \
    "ldr q19, [%[w], #80]\n\t"                 \
    "smull v22.8h, v18.8b, v26.8b\n\t"         \
    "smlal v28.8h, v17.8b, v25.8b\n\t"         \
    "smlal2 v29.8h, v17.16b, v25.16b\n\t"      \
    "ldr q16, [%[w], #32]\n\t"                 \
    "smlal2 v31.8h, v17.16b, v27.16b\n\t"      \
    "smull2 v21.8h, v18.16b, v24.16b\n\t"      \
    "smlal v30.8h, v17.8b, v27.8b\n\t"         \
    "smull2 v23.8h, v18.16b, v26.16b\n\t"      \
    "sadalp v0.4s, v28.8h\n\t"                 \
    "ldr q17, [%[w], #96]\n\t"                 \
    "sadalp v9.4s, v31.8h\n\t"                 \
    "smull v20.8h, v18.8b, v24.8b\n\t"         \
    "sadalp v1.4s, v29.8h\n\t"                 \
    "smull2 v29.8h, v16.16b, v24.16b\n\t"      \
    "sadalp v8.4s, v30.8h\n\t"                 \
    "smlal v22.8h, v19.8b, v27.8b\n\t"         \
    "smlal2 v23.8h, v19.16b, v27.16b\n\t"      \
    "smull v28.8h, v16.8b, v24.8b\n\t"         \
    "smull2 v31.8h, v16.16b, v26.16b\n\t"      \
    "smlal2 v21.8h, v19.16b, v25.16b\n\t"      \
    "ldr q18, [%[w], #48]\n\t"                 \
    "smull v30.8h, v16.8b, v26.8b\n\t"         \
    "smlal v20.8h, v19.8b, v25.8b\n\t"         \
    "sadalp v10.4s, v22.8h\n\t"                \
    "smlal2 v31.8h, v17.16b, v27.16b\n\t"      \
    "smlal v28.8h, v17.8b, v25.8b\n\t"         \
    "smlal2 v29.8h, v17.16b, v25.16b\n\t"      \
    "ldr q19, [%[w], #112]\n\t"                \
    "sadalp v2.4s, v20.8h\n\t"                 \
    "smull v20.8h, v18.8b, v24.8b\n\t"         \
    "sadalp v3.4s, v21.8h\n\t"                 \
    "smull2 v21.8h, v18.16b, v24.16b\n\t"      \
    "sadalp v11.4s, v23.8h\n\t"                \
    "smull2 v23.8h, v18.16b, v26.16b\n\t"      \
    "smull v22.8h, v18.8b, v26.8b\n\t"         \
    "smlal v30.8h, v17.8b, v27.8b\n\t"         \
    "smlal v20.8h, v19.8b, v25.8b\n\t"         \
    "smlal2 v21.8h, v19.16b, v25.16b\n\t"      \
    "sadalp v13.4s, v31.8h\n\t"                \
    "sadalp v5.4s, v29.8h\n\t"                 \
    "smlal v22.8h, v19.8b, v27.8b\n\t"         \
    "smlal2 v23.8h, v19.16b, v27.16b\n\t"      \
    "sadalp v12.4s, v30.8h\n\t"                \
    "sadalp v7.4s, v21.8h\n\t"                 \
    "sadalp v4.4s, v28.8h\n\t"                 \
    "sadalp v6.4s, v20.8h\n\t"                 \
    "sadalp v14.4s, v22.8h\n\t"                \
    "sadalp v15.4s, v23.8h\n\t"                \
    "add %[w], %[w], #128\n\t"

#define PW_NEON_SINGLE(wa, r0a, r0b, r1a, r1b)                                                                 \
    "smull  v28.8h, v" #wa ".8b, v24.8b\n\t"                                                                  \
    "smull2 v29.8h, v" #wa ".16b, v24.16b\n\t"                                                                \
    "smull  v30.8h, v" #wa ".8b, v26.8b\n\t"                                                                  \
    "smull2 v31.8h, v" #wa ".16b, v26.16b\n\t"                                                                \
    "sadalp v" #r0a ".4s, v28.8h\n\t"                                                                         \
    "sadalp v" #r0b ".4s, v29.8h\n\t"                                                                         \
    "sadalp v" #r1a ".4s, v30.8h\n\t"                                                                         \
    "sadalp v" #r1b ".4s, v31.8h\n\t"

/// What the neon tile reads besides weights and rows: the output zero point (int16) and the
/// activation bounds (int8), each loaded replicated into a vector once per block.
typedef struct {
    int16_t output_offset;
    int8_t bounds[2];  // act_min, act_max
} pw_neon_output;

/// `blocks` blocks of 16 channels for rows a0 and a1 (which may be the same row), stored to c0
/// and c1 (16 bytes per block each). `params` walks the plan's neon_params (pack_neon_params):
/// per block, the bias laid out as the accumulators are (twice: one copy per row), the
/// multipliers, the right shifts negated, then the left shifts if the plan has any (flags bit 0).
/// Requantization: sqrdmulh is SaturatingRoundingDoublingHighMul exactly (multipliers are
/// non-negative, so the high half is never INT32_MIN); RoundingDivideByPOT rounds halves away from
/// zero and srshl rounds them up, so negative values with a right shift get −1 first (ssra of the
/// sign, which cannot wrap). When some channel has no right shift (flags bit 1) the −1 is masked
/// with the negated shift (0 there). The zero point is added with int16 saturation and the clamp
/// is done on the int8-saturated value (only when the bounds are narrower than int8's, flags bit
/// 2): both give the reference's clamp(v + zero point) because the bounds and the zero point are
/// int8 values.
PW_INLINE void neon_2x16_blocks(const int8_t *a0, const int8_t *a1, const int8_t **weights, const int32_t **params,
                                int8_t *c0, int8_t *c1, int blocks, int pairs, int singles, int flags,
                                const pw_neon_output *output) {
    const int8_t *w = *weights;
    const int32_t *prm = *params;
    const int8_t *x0, *x1;
    int count;
    __asm__ volatile(
        "1:\n\t"
        "ld1 {v0.4s, v1.4s, v2.4s, v3.4s}, [%[prm]], #64\n\t"
        "ld1 {v4.4s, v5.4s, v6.4s, v7.4s}, [%[prm]], #64\n\t"
        "ld1 {v8.4s, v9.4s, v10.4s, v11.4s}, [%[prm]], #64\n\t"
        "ld1 {v12.4s, v13.4s, v14.4s, v15.4s}, [%[prm]], #64\n\t"
        "mov %[x0], %[a0]\n\t"
        "mov %[x1], %[a1]\n\t"
        // Two groups of 8 k per iteration (halves = ⌈pairs / 2⌉); an odd count starts in the second.
        "cbz %w[halves], 3f\n\t"
        "mov %w[count], %w[halves]\n\t"
        "tbnz %w[pairs], #0, 21f\n\t"
        "2:\n\t"
        PW_NEON_GROUP8
        "21:\n\t"
        PW_NEON_GROUP8
        "subs %w[count], %w[count], #1\n\t"
        "b.ne 2b\n\t"
        "3:\n\t"
        "cbz %w[singles], 5f\n\t"
        "mov %w[count], %w[singles]\n\t"
        "4:\n\t"
        "ld1 {v16.16b, v17.16b, v18.16b, v19.16b}, [%[w]], #64\n\t"
        "ld1r {v24.4s}, [%[x0]], #4\n\t"
        "ld1r {v26.4s}, [%[x1]], #4\n\t"
        PW_NEON_SINGLE(16, 0, 1, 8, 9)
        PW_NEON_SINGLE(17, 2, 3, 10, 11)
        PW_NEON_SINGLE(18, 4, 5, 12, 13)
        PW_NEON_SINGLE(19, 6, 7, 14, 15)
        "subs %w[count], %w[count], #1\n\t"
        "b.ne 4b\n\t"
        "5:\n\t"
        // MoveNet's every layer (and TFLite's usual int8 convolution): no channel shifts left and
        // every channel shifts right (flags bits 0 and 1 clear). Then the steps below run as one
        // straight sequence, scheduled for the A53 and A72 (llvm-mca: 92 and 39 cycles per block
        // instead of 111 and 60 through the branches): the same instructions and results, the
        // clamp always done (with int8's own bounds it changes nothing).
        "tst %w[flags], #3\n\t"
        "b.ne 50f\n\t"
        "ld1 {v16.4s, v17.4s, v18.4s, v19.4s}, [%[prm]], #64\n\t"
        "addp v0.4s, v0.4s, v1.4s\n\t"
        "addp v1.4s, v2.4s, v3.4s\n\t"
        "addp v3.4s, v6.4s, v7.4s\n\t"
        "addp v7.4s, v14.4s, v15.4s\n\t"
        "addp v2.4s, v4.4s, v5.4s\n\t"
        "addp v4.4s, v8.4s, v9.4s\n\t"
        "sqrdmulh v0.4s, v0.4s, v16.4s\n\t"
        "addp v6.4s, v12.4s, v13.4s\n\t"
        "sqrdmulh v3.4s, v3.4s, v19.4s\n\t"
        "sqrdmulh v7.4s, v7.4s, v19.4s\n\t"
        "sqrdmulh v2.4s, v2.4s, v18.4s\n\t"
        "addp v5.4s, v10.4s, v11.4s\n\t"
        "sqrdmulh v4.4s, v4.4s, v16.4s\n\t"
        "ld1 {v20.4s, v21.4s, v22.4s, v23.4s}, [%[prm]], #64\n\t"
        "ssra v7.4s, v7.4s, #31\n\t"
        "sqrdmulh v5.4s, v5.4s, v17.4s\n\t"
        "ssra v0.4s, v0.4s, #31\n\t"
        "sqrdmulh v1.4s, v1.4s, v17.4s\n\t"
        "ssra v4.4s, v4.4s, #31\n\t"
        "ssra v2.4s, v2.4s, #31\n\t"
        "sqrdmulh v6.4s, v6.4s, v18.4s\n\t"
        "ssra v3.4s, v3.4s, #31\n\t"
        "ssra v5.4s, v5.4s, #31\n\t"
        "srshl v7.4s, v7.4s, v23.4s\n\t"
        "ssra v1.4s, v1.4s, #31\n\t"
        "srshl v2.4s, v2.4s, v22.4s\n\t"
        "srshl v0.4s, v0.4s, v20.4s\n\t"
        "ssra v6.4s, v6.4s, #31\n\t"
        "srshl v4.4s, v4.4s, v20.4s\n\t"
        "srshl v5.4s, v5.4s, v21.4s\n\t"
        "srshl v3.4s, v3.4s, v23.4s\n\t"
        "srshl v1.4s, v1.4s, v21.4s\n\t"
        "sqxtn v8.4h, v0.4s\n\t"
        "ld2r {v29.16b, v30.16b}, [%[bounds]]\n\t"
        "ld1r {v28.8h}, [%[offset]]\n\t"
        "sqxtn v9.4h, v2.4s\n\t"
        "srshl v6.4s, v6.4s, v22.4s\n\t"
        "sqxtn2 v8.8h, v1.4s\n\t"
        "sqxtn v10.4h, v4.4s\n\t"
        "sqxtn v11.4h, v6.4s\n\t"
        "sqxtn2 v9.8h, v3.4s\n\t"
        "sqadd v8.8h, v8.8h, v28.8h\n\t"
        "sqxtn2 v10.8h, v5.4s\n\t"
        "sqxtn2 v11.8h, v7.4s\n\t"
        "sqadd v9.8h, v9.8h, v28.8h\n\t"
        "sqxtn v12.8b, v8.8h\n\t"
        "sqadd v10.8h, v10.8h, v28.8h\n\t"
        "sqadd v11.8h, v11.8h, v28.8h\n\t"
        "sqxtn2 v12.16b, v9.8h\n\t"
        "sqxtn v13.8b, v10.8h\n\t"
        "smax v12.16b, v12.16b, v29.16b\n\t"
        "sqxtn2 v13.16b, v11.8h\n\t"
        "smin v12.16b, v12.16b, v30.16b\n\t"
        "smax v13.16b, v13.16b, v29.16b\n\t"
        "str q12, [%[c0]], #16\n\t"
        "smin v13.16b, v13.16b, v30.16b\n\t"
        "str q13, [%[c1]], #16\n\t"
        "subs %w[blocks], %w[blocks], #1\n\t"
        "b.ne 1b\n\t"
        "b 99f\n\t"
        "50:\n\t"
        // Pair sums → one int32 per channel: v0-v3 row 0 (channels 0-3, ..., 12-15), v4-v7 row 1.
        "addp v0.4s, v0.4s, v1.4s\n\t"
        "addp v1.4s, v2.4s, v3.4s\n\t"
        "addp v2.4s, v4.4s, v5.4s\n\t"
        "addp v3.4s, v6.4s, v7.4s\n\t"
        "addp v4.4s, v8.4s, v9.4s\n\t"
        "addp v5.4s, v10.4s, v11.4s\n\t"
        "addp v6.4s, v12.4s, v13.4s\n\t"
        "addp v7.4s, v14.4s, v15.4s\n\t"
        "ld1 {v16.4s, v17.4s, v18.4s, v19.4s}, [%[prm]], #64\n\t"  // multipliers
        "ld1 {v20.4s, v21.4s, v22.4s, v23.4s}, [%[prm]], #64\n\t"  // -right
        "tbz %w[flags], #0, 6f\n\t"
        "ld1 {v24.4s, v25.4s, v26.4s, v27.4s}, [%[prm]], #64\n\t"  // left
        "sshl v0.4s, v0.4s, v24.4s\n\t"
        "sshl v1.4s, v1.4s, v25.4s\n\t"
        "sshl v2.4s, v2.4s, v26.4s\n\t"
        "sshl v3.4s, v3.4s, v27.4s\n\t"
        "sshl v4.4s, v4.4s, v24.4s\n\t"
        "sshl v5.4s, v5.4s, v25.4s\n\t"
        "sshl v6.4s, v6.4s, v26.4s\n\t"
        "sshl v7.4s, v7.4s, v27.4s\n\t"
        "6:\n\t"
        "sqrdmulh v0.4s, v0.4s, v16.4s\n\t"
        "sqrdmulh v1.4s, v1.4s, v17.4s\n\t"
        "sqrdmulh v2.4s, v2.4s, v18.4s\n\t"
        "sqrdmulh v3.4s, v3.4s, v19.4s\n\t"
        "sqrdmulh v4.4s, v4.4s, v16.4s\n\t"
        "sqrdmulh v5.4s, v5.4s, v17.4s\n\t"
        "sqrdmulh v6.4s, v6.4s, v18.4s\n\t"
        "sqrdmulh v7.4s, v7.4s, v19.4s\n\t"
        "tbz %w[flags], #1, 7f\n\t"
        "and v8.16b, v0.16b, v20.16b\n\t"
        "and v9.16b, v1.16b, v21.16b\n\t"
        "and v10.16b, v2.16b, v22.16b\n\t"
        "and v11.16b, v3.16b, v23.16b\n\t"
        "and v12.16b, v4.16b, v20.16b\n\t"
        "and v13.16b, v5.16b, v21.16b\n\t"
        "and v14.16b, v6.16b, v22.16b\n\t"
        "and v15.16b, v7.16b, v23.16b\n\t"
        "ssra v0.4s, v8.4s, #31\n\t"
        "ssra v1.4s, v9.4s, #31\n\t"
        "ssra v2.4s, v10.4s, #31\n\t"
        "ssra v3.4s, v11.4s, #31\n\t"
        "ssra v4.4s, v12.4s, #31\n\t"
        "ssra v5.4s, v13.4s, #31\n\t"
        "ssra v6.4s, v14.4s, #31\n\t"
        "ssra v7.4s, v15.4s, #31\n\t"
        "b 8f\n\t"
        "7:\n\t"
        "ssra v0.4s, v0.4s, #31\n\t"
        "ssra v1.4s, v1.4s, #31\n\t"
        "ssra v2.4s, v2.4s, #31\n\t"
        "ssra v3.4s, v3.4s, #31\n\t"
        "ssra v4.4s, v4.4s, #31\n\t"
        "ssra v5.4s, v5.4s, #31\n\t"
        "ssra v6.4s, v6.4s, #31\n\t"
        "ssra v7.4s, v7.4s, #31\n\t"
        "8:\n\t"
        "srshl v0.4s, v0.4s, v20.4s\n\t"
        "srshl v1.4s, v1.4s, v21.4s\n\t"
        "srshl v2.4s, v2.4s, v22.4s\n\t"
        "srshl v3.4s, v3.4s, v23.4s\n\t"
        "srshl v4.4s, v4.4s, v20.4s\n\t"
        "srshl v5.4s, v5.4s, v21.4s\n\t"
        "srshl v6.4s, v6.4s, v22.4s\n\t"
        "srshl v7.4s, v7.4s, v23.4s\n\t"
        "sqxtn  v8.4h, v0.4s\n\t"
        "sqxtn2 v8.8h, v1.4s\n\t"
        "sqxtn  v9.4h, v2.4s\n\t"
        "sqxtn2 v9.8h, v3.4s\n\t"
        "sqxtn  v10.4h, v4.4s\n\t"
        "sqxtn2 v10.8h, v5.4s\n\t"
        "sqxtn  v11.4h, v6.4s\n\t"
        "sqxtn2 v11.8h, v7.4s\n\t"
        "ld1r {v28.8h}, [%[offset]]\n\t"
        "sqadd v8.8h, v8.8h, v28.8h\n\t"
        "sqadd v9.8h, v9.8h, v28.8h\n\t"
        "sqadd v10.8h, v10.8h, v28.8h\n\t"
        "sqadd v11.8h, v11.8h, v28.8h\n\t"
        "sqxtn  v12.8b, v8.8h\n\t"
        "sqxtn2 v12.16b, v9.8h\n\t"
        "sqxtn  v13.8b, v10.8h\n\t"
        "sqxtn2 v13.16b, v11.8h\n\t"
        "tbz %w[flags], #2, 9f\n\t"  // bounds narrower than int8's (the saturation clamps to int8)
        "ld2r {v29.16b, v30.16b}, [%[bounds]]\n\t"
        "smax v12.16b, v12.16b, v29.16b\n\t"
        "smax v13.16b, v13.16b, v29.16b\n\t"
        "smin v12.16b, v12.16b, v30.16b\n\t"
        "smin v13.16b, v13.16b, v30.16b\n\t"
        "9:\n\t"
        "str q12, [%[c0]], #16\n\t"
        "str q13, [%[c1]], #16\n\t"
        "subs %w[blocks], %w[blocks], #1\n\t"
        "b.ne 1b\n\t"
        "99:\n\t"
        : [w] "+r"(w), [prm] "+r"(prm), [c0] "+r"(c0), [c1] "+r"(c1), [blocks] "+r"(blocks), [x0] "=&r"(x0),
          [x1] "=&r"(x1), [count] "=&r"(count)
        : [a0] "r"(a0), [a1] "r"(a1), [pairs] "r"(pairs), [halves] "r"((pairs + 1) / 2), [singles] "r"(singles),
          [flags] "r"(flags), [offset] "r"(&output->output_offset), [bounds] "r"(output->bounds)
        : "cc", "memory", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13",
          "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28",
          "v29", "v30", "v31");
    *weights = w;
    *params = prm;
}

/// The narrow tails' last step, both rows: + the output zero point (int16, saturating), narrowed to
/// int8 in v12 (row 0) and v13 (row 1), clamped to the activation bounds; the caller stores 4 or 8
/// bytes of each.
#define PW_NEON_TAIL_NARROW                                                                                    \
    "ld1r {v28.8h}, [%[offset]]\n\t"                                                                        \
    "ld2r {v29.16b, v30.16b}, [%[bounds]]\n\t"                                                              \
    "sqadd v8.8h, v8.8h, v28.8h\n\t"                                                                        \
    "sqadd v10.8h, v10.8h, v28.8h\n\t"                                                                      \
    "sqxtn v12.8b, v8.8h\n\t"                                                                               \
    "sqxtn v13.8b, v10.8h\n\t"                                                                              \
    "smax v12.8b, v12.8b, v29.8b\n\t"                                                                       \
    "smax v13.8b, v13.8b, v29.8b\n\t"                                                                       \
    "smin v12.8b, v12.8b, v30.8b\n\t"                                                                       \
    "smin v13.8b, v13.8b, v30.8b\n\t"

/// The last block when it has at most 8 channels (MoveNet: 24 = 16 + 8, 17, 34, 1): the same
/// loop and requantization as neon_2x16_blocks on 1 or 2 groups of 4 channels (`quads`) instead
/// of 4, reading the block's first 16 or 32 weight bytes of every 64 and the first constants of
/// its neon_params; the 4 or 8 results of each row go to c0 and c1.
PW_INLINE void neon_2xq_tail(const int8_t *a0, const int8_t *a1, const int8_t *w, const int32_t *prm, int quads,
                             int pairs, int singles, int flags, const pw_neon_output *output, int8_t *c0,
                             int8_t *c1) {
    const int8_t *x0 = a0, *x1 = a1;
    int count;
#define PW_NEON_TAIL_OPERANDS                                                                                  \
    : [w] "+r"(w), [x0] "+r"(x0), [x1] "+r"(x1), [count] "=&r"(count)                                      \
    : [prm] "r"(prm), [c0] "r"(c0), [c1] "r"(c1), [pairs] "r"(pairs), [singles] "r"(singles),              \
      [flags] "r"(flags), [offset] "r"(&output->output_offset), [bounds] "r"(output->bounds)               \
    : "cc", "memory", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13", \
      "v14", "v15", "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28", \
      "v29", "v30", "v31"
    if (quads == 1) {
        __asm__ volatile(
        "ldp q0, q1, [%[prm]]\n\t"
        "ldp q8, q9, [%[prm], #128]\n\t"
        "mov %w[count], %w[pairs]\n\t"
        "cbz %w[count], 3f\n\t"
        "2:\n\t"
        "ldr q16, [%[w]], #64\n\t"
        "ldr q20, [%[w]], #64\n\t"
        "ld2r {v24.4s, v25.4s}, [%[x0]], #8\n\t"
        "ld2r {v26.4s, v27.4s}, [%[x1]], #8\n\t"
        PW_NEON_PAIR(16, 20, 0, 1, 8, 9)
        "subs %w[count], %w[count], #1\n\t"
        "b.ne 2b\n\t"
        "3:\n\t"
        "mov %w[count], %w[singles]\n\t"
        "cbz %w[count], 5f\n\t"
        "4:\n\t"
        "ldr q16, [%[w]], #64\n\t"
        "ld1r {v24.4s}, [%[x0]], #4\n\t"
        "ld1r {v26.4s}, [%[x1]], #4\n\t"
        PW_NEON_SINGLE(16, 0, 1, 8, 9)
        "subs %w[count], %w[count], #1\n\t"
        "b.ne 4b\n\t"
        "5:\n\t"
        "addp v0.4s, v0.4s, v1.4s\n\t"
        "addp v4.4s, v8.4s, v9.4s\n\t"
        "ldr q16, [%[prm], #256]\n\t"
        "ldr q20, [%[prm], #320]\n\t"
        "tbz %w[flags], #0, 6f\n\t"
        "ldr q24, [%[prm], #384]\n\t"
        "sshl v0.4s, v0.4s, v24.4s\n\t"
        "sshl v4.4s, v4.4s, v24.4s\n\t"
        "6:\n\t"
        "sqrdmulh v0.4s, v0.4s, v16.4s\n\t"
        "sqrdmulh v4.4s, v4.4s, v16.4s\n\t"
        "tbz %w[flags], #1, 7f\n\t"
        "and v8.16b, v0.16b, v20.16b\n\t"
        "and v12.16b, v4.16b, v20.16b\n\t"
        "ssra v0.4s, v8.4s, #31\n\t"
        "ssra v4.4s, v12.4s, #31\n\t"
        "b 8f\n\t"
        "7:\n\t"
        "ssra v0.4s, v0.4s, #31\n\t"
        "ssra v4.4s, v4.4s, #31\n\t"
        "8:\n\t"
        "srshl v0.4s, v0.4s, v20.4s\n\t"
        "srshl v4.4s, v4.4s, v20.4s\n\t"
        "sqxtn v8.4h, v0.4s\n\t"
        "sqxtn v10.4h, v4.4s\n\t"
        PW_NEON_TAIL_NARROW
        "str s12, [%[c0]]\n\t"
        "str s13, [%[c1]]\n\t"
        PW_NEON_TAIL_OPERANDS);
    } else {
        __asm__ volatile(
        "ldp q0, q1, [%[prm]]\n\t"
        "ldp q2, q3, [%[prm], #32]\n\t"
        "ldp q8, q9, [%[prm], #128]\n\t"
        "ldp q10, q11, [%[prm], #160]\n\t"
        "mov %w[count], %w[pairs]\n\t"
        "cbz %w[count], 3f\n\t"
        "2:\n\t"
        "ldp q16, q17, [%[w]], #64\n\t"
        "ldp q20, q21, [%[w]], #64\n\t"
        "ld2r {v24.4s, v25.4s}, [%[x0]], #8\n\t"
        "ld2r {v26.4s, v27.4s}, [%[x1]], #8\n\t"
        PW_NEON_PAIR(16, 20, 0, 1, 8, 9) PW_NEON_PAIR(17, 21, 2, 3, 10, 11)
        "subs %w[count], %w[count], #1\n\t"
        "b.ne 2b\n\t"
        "3:\n\t"
        "mov %w[count], %w[singles]\n\t"
        "cbz %w[count], 5f\n\t"
        "4:\n\t"
        "ldp q16, q17, [%[w]], #64\n\t"
        "ld1r {v24.4s}, [%[x0]], #4\n\t"
        "ld1r {v26.4s}, [%[x1]], #4\n\t"
        PW_NEON_SINGLE(16, 0, 1, 8, 9) PW_NEON_SINGLE(17, 2, 3, 10, 11)
        "subs %w[count], %w[count], #1\n\t"
        "b.ne 4b\n\t"
        "5:\n\t"
        "addp v0.4s, v0.4s, v1.4s\n\t"
        "addp v1.4s, v2.4s, v3.4s\n\t"
        "addp v4.4s, v8.4s, v9.4s\n\t"
        "addp v5.4s, v10.4s, v11.4s\n\t"
        "ldp q16, q17, [%[prm], #256]\n\t"
        "ldp q20, q21, [%[prm], #320]\n\t"
        "tbz %w[flags], #0, 6f\n\t"
        "ldp q24, q25, [%[prm], #384]\n\t"
        "sshl v0.4s, v0.4s, v24.4s\n\t"
        "sshl v1.4s, v1.4s, v25.4s\n\t"
        "sshl v4.4s, v4.4s, v24.4s\n\t"
        "sshl v5.4s, v5.4s, v25.4s\n\t"
        "6:\n\t"
        "sqrdmulh v0.4s, v0.4s, v16.4s\n\t"
        "sqrdmulh v1.4s, v1.4s, v17.4s\n\t"
        "sqrdmulh v4.4s, v4.4s, v16.4s\n\t"
        "sqrdmulh v5.4s, v5.4s, v17.4s\n\t"
        "tbz %w[flags], #1, 7f\n\t"
        "and v8.16b, v0.16b, v20.16b\n\t"
        "and v9.16b, v1.16b, v21.16b\n\t"
        "and v12.16b, v4.16b, v20.16b\n\t"
        "and v13.16b, v5.16b, v21.16b\n\t"
        "ssra v0.4s, v8.4s, #31\n\t"
        "ssra v1.4s, v9.4s, #31\n\t"
        "ssra v4.4s, v12.4s, #31\n\t"
        "ssra v5.4s, v13.4s, #31\n\t"
        "b 8f\n\t"
        "7:\n\t"
        "ssra v0.4s, v0.4s, #31\n\t"
        "ssra v1.4s, v1.4s, #31\n\t"
        "ssra v4.4s, v4.4s, #31\n\t"
        "ssra v5.4s, v5.4s, #31\n\t"
        "8:\n\t"
        "srshl v0.4s, v0.4s, v20.4s\n\t"
        "srshl v1.4s, v1.4s, v21.4s\n\t"
        "srshl v4.4s, v4.4s, v20.4s\n\t"
        "srshl v5.4s, v5.4s, v21.4s\n\t"
        "sqxtn v8.4h, v0.4s\n\t"
        "sqxtn2 v8.8h, v1.4s\n\t"
        "sqxtn v10.4h, v4.4s\n\t"
        "sqxtn2 v10.8h, v5.4s\n\t"
        PW_NEON_TAIL_NARROW
        "str d12, [%[c0]]\n\t"
        "str d13, [%[c1]]\n\t"
        PW_NEON_TAIL_OPERANDS);
    }
#undef PW_NEON_TAIL_OPERANDS
}

/// What every pair of rows of a plan shares, computed once per call of the tile or per task.
typedef struct {
    const int8_t *weights;
    const int32_t *params;
    size_t n;
    int pairs, singles, flags, full, width;
    pw_neon_output output;
} neon_rows_job;

PW_INLINE neon_rows_job neon_rows_job_for(const pw_gemm_plan *p) {
    const int k4count = p->kp / 4;
    neon_rows_job job;
    job.weights = p->weights;
    job.params = p->neon_params;
    job.n = (size_t)p->n;
    job.pairs = p->no_minus_128 ? k4count / 2 : 0;
    job.singles = k4count - 2 * job.pairs;
    job.flags = p->neon_flags;
    job.full = p->n / 16;
    job.width = p->n % 16;
    job.output.output_offset = (int16_t)p->g.output_offset;
    job.output.bounds[0] = (int8_t)p->g.act_min;
    job.output.bounds[1] = (int8_t)p->g.act_max;
    return job;
}

/// Two rows (a1 may be a0 when only one is valid: then both stores write the same bytes) × all
/// channels of the plan.
PW_INLINE void neon_2_rows(const neon_rows_job *job, const int8_t *a0, const int8_t *a1, int rows_valid,
                           int8_t *out) {
    const int8_t *w = job->weights;
    const int32_t *params = job->params;
    const int pairs = job->pairs, singles = job->singles, flags = job->flags, full = job->full, width = job->width;
    int8_t *c1 = rows_valid > 1 ? out + job->n : out;
    if (full > 0) neon_2x16_blocks(a0, a1, &w, &params, out, c1, full, pairs, singles, flags, &job->output);
    if (width > 0) {
        int8_t last[2][16];
        if (width <= 8) {
            neon_2xq_tail(a0, a1, w, params, width <= 4 ? 1 : 2, pairs, singles, flags, &job->output, last[0],
                          last[1]);
        } else {
            neon_2x16_blocks(a0, a1, &w, &params, last[0], last[1], 1, pairs, singles, flags, &job->output);
        }
        for (int r = 0; r < rows_valid; r++) memcpy(out + r * job->n + (size_t)full * 16, last[r], (size_t)width);
    }
}

void pw_gemm_tile_neon(const pw_gemm_plan *p, const int8_t *const *rows, int rows_valid, int8_t *out) {
    const neon_rows_job job = neon_rows_job_for(p);
    neon_2_rows(&job, rows[0], rows_valid > 1 ? rows[1] : rows[0], rows_valid, out);
}

/// A 1x1 convolution's rows [0, m) read in place, two at a time: one call per task instead of one
/// tile call per two rows (the narrow layers of MoveNet have only 16 to 144 multiply-adds per
/// output, so the call's cost and the saving of d8-d15 per call were a tenth of the work).
void pw_gemm_neon_direct_rows(const pw_gemm_plan *p, const int8_t *input, int m, int8_t *output) {
    const size_t k = (size_t)p->k, n = (size_t)p->n;
    const neon_rows_job job = neon_rows_job_for(p);
    int row = 0;
    for (; row + 2 <= m; row += 2) neon_2_rows(&job, input + row * k, input + (row + 1) * k, 2, output + row * n);
    if (row < m) neon_2_rows(&job, input + row * k, input + row * k, 1, output + row * n);
}
#endif
