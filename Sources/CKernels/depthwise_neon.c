// DEPTHWISE_CONV_2D for NEON (Cortex-A72/A53) and NEON with SDOT (A76): the generic loop for any
// shape, and for 3x3 (MoveNet's every depthwise layer) its packing and its kernel. The plan and the
// row loop: depthwise.c, depthwise_plan.h.
#include "depthwise_plan.h"
#include <stdlib.h>

#if defined(__aarch64__)
enum { NEON3X3_WEIGHT_BYTES = 9 * 16, NEON3X3_TAIL8_BYTES = 9 * 8 + 3 * 32 };

/// Packs the blocks of depthwise_row_neon3x3 when the plan fits it: 3x3, dilation 1, at least 16
/// channels, and quantization parameters under which the kernel's shortcuts are exact: the input
/// zero point (−input_offset) an int8 (it fills the padding row), the output offset and the
/// activation bounds int8 with act_min ≤ act_max (the requantized value is narrowed to int16, the
/// offset added with saturation, narrowed to int8, then clamped: any value the int16 saturation
/// changes is beyond ±32639 after the offset and ends at the same bound). A plan that does not fit
/// keeps neon_blocks NULL and runs the generic loop. Returns 0 only when an allocation fails.
int pw_depthwise_pack_neon3x3(pw_depthwise_plan *p, const int8_t *filter) {
    const pw_conv_geometry *g = &p->g;
    const int C = p->channels;
    if (g->filter_height != 3 || g->filter_width != 3 || g->dilation_height != 1 || g->dilation_width != 1 ||
        C < 16 || g->input_offset < -127 || g->input_offset > 128 || g->output_offset < -128 ||
        g->output_offset > 127 || g->act_min < -128 || g->act_max > 127 || g->act_min > g->act_max)
        return 1;
    for (int c = 0; c < C; c++)
        if (p->multiplier[c] < 0) return 1;  // (the reference's multipliers are ≥ 0; the fixup needs it)
    int left = 0, paired = 1;
    for (int c = 0; c < C; c++) {
        if (p->left[c]) left = 1;
        // Taps 2i and 2i + 1 are summed in int16: |w · x| ≤ 127 · 128 = 16256 unless w = x = −128
        // (16384), so a pair can exceed 32767 only when both of its weights are −128.
        for (int t = 0; t < 8; t += 2)
            if (filter[(size_t)t * C + c] == -128 && filter[(size_t)(t + 1) * C + c] == -128) paired = 0;
    }
    const int blocks = (C + 15) / 16;
    const int bytes = NEON3X3_WEIGHT_BYTES + 64 * (left ? 4 : 3);
    const int tail8 = C % 16 >= 1 && C % 16 <= 8;
    p->neon_blocks = malloc((size_t)blocks * bytes + (tail8 ? NEON3X3_TAIL8_BYTES : 0));
    p->zero_point_row = malloc((size_t)C);
    if (!p->neon_blocks || !p->zero_point_row) return 0;
    memset(p->zero_point_row, -g->input_offset, (size_t)C);
    for (int b = 0; b < blocks; b++) {
        const int c0 = 16 * b < C - 16 ? 16 * b : C - 16;
        int8_t *weights = p->neon_blocks + (size_t)b * bytes;
        int32_t fields[4][16];
        for (int j = 0; j < 16; j++) {
            const int c = c0 + j;
            uint32_t sum = 0;
            for (int t = 0; t < 9; t++) {
                weights[t * 16 + j] = filter[(size_t)t * C + c];
                sum += (uint32_t)(int32_t)filter[(size_t)t * C + c];
            }
            fields[0][j] = (int32_t)((uint32_t)p->bias[c] + (uint32_t)g->input_offset * sum);
            fields[1][j] = p->multiplier[c];
            fields[2][j] = -p->right[c];
            fields[3][j] = p->left[c];
        }
        memcpy(weights + NEON3X3_WEIGHT_BYTES, fields, (size_t)64 * (left ? 4 : 3));
    }
    if (tail8) {
        int8_t *weights = p->neon_blocks + (size_t)blocks * bytes;
        int32_t *fields = (int32_t *)(void *)(weights + 9 * 8);
        for (int j = 0; j < 8; j++) {
            const int c = C - 8 + j;
            for (int t = 0; t < 9; t++) weights[t * 8 + j] = filter[(size_t)t * C + c];
        }
        // (copied from the 16-channel block that ends at C − 1: the same channels' fields)
        const int32_t *last = (const int32_t *)(const void *)(p->neon_blocks + (size_t)(blocks - 1) * bytes +
                                                              NEON3X3_WEIGHT_BYTES);
        for (int f = 0; f < 3; f++) memcpy(fields + 8 * f, last + 16 * f + 8, 32);
    }
    p->neon_block_bytes = bytes;
    p->neon_paired = paired;
    p->neon_left = left;
    p->neon_tail8 = tail8;
    p->neon_sdot = p->isa == PW_ISA_NEONDOT && paired && !left;
    if (p->neon_sdot) {
        // Taps 4g … 4g + 3 of channels 4j … 4j + 3: vector 4g + j, byte 4i + tt = tap 4g + tt of
        // channel 4j + i (what zip1/zip2 of the four tap rows give, so one sdot per vector).
        for (int b = 0; b < blocks; b++) {
            int8_t *weights = p->neon_blocks + (size_t)b * bytes, tap_major[128];
            memcpy(tap_major, weights, 128);
            for (int g4 = 0; g4 < 2; g4++)
                for (int j = 0; j < 4; j++)
                    for (int i = 0; i < 4; i++)
                        for (int tt = 0; tt < 4; tt++)
                            weights[(4 * g4 + j) * 16 + 4 * i + tt] = tap_major[(4 * g4 + tt) * 16 + 4 * j + i];
        }
    }
    return 1;
}

#define NEON_DECLARE                                                                          \
    int32x4_t acc0 = vdupq_n_s32(0), acc1 = acc0, acc2 = acc0, acc3 = acc0;                   \
    const int16x8_t offset16 = vdupq_n_s16(offset)
#define NEON_TAP                                                                               \
    do {                                                                                       \
        int8x16_t xv = vld1q_s8(x);                                                            \
        int16x8_t lo = vaddq_s16(vmovl_s8(vget_low_s8(xv)), offset16);                         \
        int16x8_t hi = vaddq_s16(vmovl_s8(vget_high_s8(xv)), offset16);                       \
        int16x8_t w0 = vld1q_s16(w), w1 = vld1q_s16(w + 8);                                    \
        acc0 = vmlal_s16(acc0, vget_low_s16(lo), vget_low_s16(w0));                            \
        acc1 = vmlal_s16(acc1, vget_high_s16(lo), vget_high_s16(w0));                          \
        acc2 = vmlal_s16(acc2, vget_low_s16(hi), vget_low_s16(w1));                            \
        acc3 = vmlal_s16(acc3, vget_high_s16(hi), vget_high_s16(w1));                          \
    } while (0)
DEPTHWISE_ROW(depthwise_row_neon, , 16, (void)0, NEON_DECLARE, NEON_TAP, pw_requant16_neon(acc0, acc1, acc2, acc3, &q, out + c0, 16), \
              NEON_DECLARE, NEON_TAP, pw_requant16_neon(acc0, acc1, acc2, acc3, &q, out + c0, 16))

/// neon/neondot 3x3, depth multiplier 1 (XNNPACK's scheme): one output pixel at a time, blocks of
/// 16 channels, each tap read from a pointer of its own (the image, or the zero-point row where the
/// tap falls outside), so there is no bounds check and the input offset lives in the packed bias.
/// Taps are paired: smull + smlal (smull2 + smlal2) of int8 into int16 (exact, see
/// depthwise_pack_neon3x3), then saddw/saddw2 into the four int32 accumulators, which start from
/// the bias. Requantization: sqrdmulh, the rounding fixup below and srshl compute
/// RoundingDivideByPOT exactly; then sqxtn to int16, + output offset (sqadd), sqxtn to int8, clamp.
/// This intrinsics form serves the rare plans the assembly below does not take (a pair of −128
/// weights, or a channel that shifts left).
/// One block of 16 channels starting at channel c; `k` points at the block's packed data.
PW_INLINE void neon3x3_block(const int8_t *k, const int8_t *t0, const int8_t *t1, const int8_t *t2,
                             const int8_t *t3, const int8_t *t4, const int8_t *t5, const int8_t *t6,
                             const int8_t *t7, const int8_t *t8, int8_t *out, const int paired, const int left,
                             int16x8_t out_offset, int8x16_t act_min, int8x16_t act_max) {
    const int8x16x4_t wa = vld1q_s8_x4(k);
    const int8x16x4_t wb = vld1q_s8_x4(k + 64);
    const int8x16_t w8 = vld1q_s8(k + 128);
    const int32x4x4_t bias = vld1q_s32_x4((const int32_t *)(k + NEON3X3_WEIGHT_BYTES));
    int32x4_t a0 = bias.val[0], a1 = bias.val[1], a2 = bias.val[2], a3 = bias.val[3];
#define NEON3X3_ADD(lo, hi)                        \
    do {                                           \
        a0 = vaddw_s16(a0, vget_low_s16(lo));      \
        a1 = vaddw_high_s16(a1, lo);               \
        a2 = vaddw_s16(a2, vget_low_s16(hi));      \
        a3 = vaddw_high_s16(a3, hi);               \
    } while (0)
#define NEON3X3_PAIR(xa, wa_, xb, wb_)                                             \
    do {                                                                        \
        const int8x16_t va = vld1q_s8(xa), vb = vld1q_s8(xb);                   \
        int16x8_t lo = vmull_s8(vget_low_s8(va), vget_low_s8(wa_));             \
        int16x8_t hi = vmull_high_s8(va, wa_);                                  \
        if (paired) {                                                           \
            lo = vmlal_s8(lo, vget_low_s8(vb), vget_low_s8(wb_));               \
            hi = vmlal_high_s8(hi, vb, wb_);                                    \
        } else {                                                                \
            const int16x8_t lo_b = vmull_s8(vget_low_s8(vb), vget_low_s8(wb_)); \
            const int16x8_t hi_b = vmull_high_s8(vb, wb_);                      \
            NEON3X3_ADD(lo_b, hi_b);                                            \
        }                                                                       \
        NEON3X3_ADD(lo, hi);                                                    \
    } while (0)
    NEON3X3_PAIR(t0, wa.val[0], t1, wa.val[1]);
    NEON3X3_PAIR(t2, wa.val[2], t3, wa.val[3]);
    NEON3X3_PAIR(t4, wb.val[0], t5, wb.val[1]);
    NEON3X3_PAIR(t6, wb.val[2], t7, wb.val[3]);
    {
        const int8x16_t v8 = vld1q_s8(t8);
        const int16x8_t lo = vmull_s8(vget_low_s8(v8), vget_low_s8(w8));
        const int16x8_t hi = vmull_high_s8(v8, w8);
        NEON3X3_ADD(lo, hi);
    }
#undef NEON3X3_PAIR
#undef NEON3X3_ADD
    const int32x4x4_t m = vld1q_s32_x4((const int32_t *)(k + NEON3X3_WEIGHT_BYTES + 64));
    const int32x4x4_t r = vld1q_s32_x4((const int32_t *)(k + NEON3X3_WEIGHT_BYTES + 128));
    if (left) {
        const int32x4x4_t l = vld1q_s32_x4((const int32_t *)(k + NEON3X3_WEIGHT_BYTES + 192));
        a0 = vshlq_s32(a0, l.val[0]);
        a1 = vshlq_s32(a1, l.val[1]);
        a2 = vshlq_s32(a2, l.val[2]);
        a3 = vshlq_s32(a3, l.val[3]);
    }
    a0 = vqrdmulhq_s32(a0, m.val[0]);
    a1 = vqrdmulhq_s32(a1, m.val[1]);
    a2 = vqrdmulhq_s32(a2, m.val[2]);
    a3 = vqrdmulhq_s32(a3, m.val[3]);
    // RoundingDivideByPOT(a, right) = srshl(a − 1, −right) for negative a and right > 0 (ties away
    // from zero), else srshl(a, −right). r = −right has its sign bit set exactly when right > 0, so
    // ssra adds (a & r) >> 31 = −1 in that case. a − 1 cannot wrap: with 0 ≤ m < 2^31, sqrdmulh
    // returns at least −2^31 + 1.
    a0 = vrshlq_s32(vsraq_n_s32(a0, vandq_s32(a0, r.val[0]), 31), r.val[0]);
    a1 = vrshlq_s32(vsraq_n_s32(a1, vandq_s32(a1, r.val[1]), 31), r.val[1]);
    a2 = vrshlq_s32(vsraq_n_s32(a2, vandq_s32(a2, r.val[2]), 31), r.val[2]);
    a3 = vrshlq_s32(vsraq_n_s32(a3, vandq_s32(a3, r.val[3]), 31), r.val[3]);
    const int16x8_t s0 = vqaddq_s16(vqmovn_high_s32(vqmovn_s32(a0), a1), out_offset);
    const int16x8_t s1 = vqaddq_s16(vqmovn_high_s32(vqmovn_s32(a2), a3), out_offset);
    vst1q_s8(out, vminq_s8(vmaxq_s8(vqmovn_high_s16(vqmovn_s16(s0), s1), act_min), act_max));
}

/// One output pixel: blocks of 16 channels, the last one ending at channel C − 1 (it overlaps the
/// one before when C % 16 ≠ 0 and writes the same values there). Tap t reads taps[t] + offset.
PW_INLINE void neon3x3_pixel(const pw_depthwise_plan *p, const int8_t *const taps[9], size_t offset, int8_t *out,
                             const int paired, const int left, int16x8_t out_offset, int8x16_t act_min,
                             int8x16_t act_max) {
    const size_t C = (size_t)p->channels, bytes = (size_t)p->neon_block_bytes;
    const int8_t *k = p->neon_blocks;
    const int8_t *t0 = taps[0] + offset, *t1 = taps[1] + offset, *t2 = taps[2] + offset;
    const int8_t *t3 = taps[3] + offset, *t4 = taps[4] + offset, *t5 = taps[5] + offset;
    const int8_t *t6 = taps[6] + offset, *t7 = taps[7] + offset, *t8 = taps[8] + offset;
    size_t c = 0;
    for (; c + 16 < C; c += 16, k += bytes)
        neon3x3_block(k, t0 + c, t1 + c, t2 + c, t3 + c, t4 + c, t5 + c, t6 + c, t7 + c, t8 + c, out + c, paired,
                      left, out_offset, act_min, act_max);
    c = C - 16;
    neon3x3_block(k, t0 + c, t1 + c, t2 + c, t3 + c, t4 + c, t5 + c, t6 + c, t7 + c, t8 + c, out + c, paired, left,
                  out_offset, act_min, act_max);
}

/// The end of every 16-channel block: the int16 values in v17 (channels 0-7) and v19 (8-15) + the
/// output offset (saturating), narrowed to int8, clamped, stored.
#define NEON3X3_NARROW_STORE_ASM \
    "sqadd v17.8h, v17.8h, %[out_offset].8h\n" \
    "sqadd v19.8h, v19.8h, %[out_offset].8h\n" \
    "sqxtn v17.8b, v17.8h\n" \
    "sqxtn2 v17.16b, v19.8h\n" \
    "smax v17.16b, v17.16b, %[act_min].16b\n" \
    "smin v17.16b, v17.16b, %[act_max].16b\n" \
    "st1 {v17.16b}, [%[out]], #16\n"

/// Both 16-channel blocks end alike: tap 8 alone (`smull` into int16, `saddw` into the int32
/// accumulators v17–v20), then the requantisation of v17–v20 (TFLite's exact form: `sqrdmulh`,
/// the `and` + `ssra` tie fix, `srshl` by −right) with v0–v7 reloaded from `k` as the multiplier
/// and −right, `sqxtn`, + output offset saturating, `sqxtn`, clamp, and the 16 bytes stored.
#define NEON3X3_TAP8_REQUANT_ASM \
    "ld1 {v21.16b}, [%[t8]], #16\n" \
    "smull v23.8h, v21.8b, v16.8b\n" \
    "smull2 v24.8h, v21.16b, v16.16b\n" \
    "saddw v17.4s, v17.4s, v23.4h\n" \
    "saddw2 v18.4s, v18.4s, v23.8h\n" \
    "saddw v19.4s, v19.4s, v24.4h\n" \
    "saddw2 v20.4s, v20.4s, v24.8h\n" \
    "ld1 {v0.4s, v1.4s, v2.4s, v3.4s}, [%[k]], #64\n" \
    "ld1 {v4.4s, v5.4s, v6.4s, v7.4s}, [%[k]], #64\n" \
    "sqrdmulh v17.4s, v17.4s, v0.4s\n" \
    "sqrdmulh v18.4s, v18.4s, v1.4s\n" \
    "sqrdmulh v19.4s, v19.4s, v2.4s\n" \
    "sqrdmulh v20.4s, v20.4s, v3.4s\n" \
    "and v21.16b, v17.16b, v4.16b\n" \
    "and v22.16b, v18.16b, v5.16b\n" \
    "and v23.16b, v19.16b, v6.16b\n" \
    "and v24.16b, v20.16b, v7.16b\n" \
    "ssra v17.4s, v21.4s, #31\n" \
    "ssra v18.4s, v22.4s, #31\n" \
    "ssra v19.4s, v23.4s, #31\n" \
    "ssra v20.4s, v24.4s, #31\n" \
    "srshl v17.4s, v17.4s, v4.4s\n" \
    "srshl v18.4s, v18.4s, v5.4s\n" \
    "srshl v19.4s, v19.4s, v6.4s\n" \
    "srshl v20.4s, v20.4s, v7.4s\n" \
    "sqxtn v17.4h, v17.4s\n" \
    "sqxtn2 v17.8h, v18.4s\n" \
    "sqxtn v19.4h, v19.4s\n" \
    "sqxtn2 v19.8h, v20.4s\n" \
    NEON3X3_NARROW_STORE_ASM

/// The same block (paired taps, no left shift: TFLite's symmetric weights and multipliers below 1,
/// so MoveNet's every layer) with hand-allocated registers, so the count does not depend on the
/// compiler's allocation: v0–v7 and v16 hold the 9 taps' weights, v17–v20 the accumulators (loaded
/// as the bias), v21–v28 inputs and int16 pair sums; then v0–v7 the multiplier and −right. `k`
/// walks the packed blocks in order (weights, bias, multiplier, −right: 336 bytes). The taps, tap 8
/// and the requantisation (NEON3X3_TAP8_REQUANT_ASM's steps) run as one sequence scheduled for the
/// in-order A53 (llvm-mca's model: 180 cycles per block instead of 228 in the order above, the
/// A72's 45 instead of 49.5): every register dependency of that order kept, so the same sums
/// (Tests/Benchmarks/arm64/schedule_asm.py made the order; rerun it after changing the block).
#define NEON3X3_BLOCK_ASM \
    "ld1 {v0.16b, v1.16b, v2.16b, v3.16b}, [%[k]], #64\n" \
    "ld1 {v21.16b}, [%[t0]], #16\n"                       \
    "ld1 {v22.16b}, [%[t1]], #16\n"                       \
    "ld1 {v4.16b, v5.16b, v6.16b, v7.16b}, [%[k]], #64\n" \
    "smull2 v24.8h, v21.16b, v0.16b\n"                    \
    "smull v23.8h, v21.8b, v0.8b\n"                       \
    "ld1 {v25.16b}, [%[t2]], #16\n"                       \
    "ld1 {v26.16b}, [%[t3]], #16\n"                       \
    "ld1 {v21.16b}, [%[t4]], #16\n"                       \
    "ld1 {v16.16b}, [%[k]], #16\n"                        \
    "ld1 {v17.4s, v18.4s, v19.4s, v20.4s}, [%[k]], #64\n" \
    "smull v27.8h, v25.8b, v2.8b\n"                       \
    "smull2 v28.8h, v25.16b, v2.16b\n"                    \
    "smlal v23.8h, v22.8b, v1.8b\n"                       \
    "smlal2 v24.8h, v22.16b, v1.16b\n"                    \
    "ld1 {v22.16b}, [%[t5]], #16\n"                       \
    "saddw v17.4s, v17.4s, v23.4h\n"                      \
    "saddw v19.4s, v19.4s, v24.4h\n"                      \
    "smlal2 v28.8h, v26.16b, v3.16b\n"                    \
    "saddw2 v20.4s, v20.4s, v24.8h\n"                     \
    "saddw2 v18.4s, v18.4s, v23.8h\n"                     \
    "smull v23.8h, v21.8b, v4.8b\n"                       \
    "smull2 v24.8h, v21.16b, v4.16b\n"                    \
    "smlal v27.8h, v26.8b, v3.8b\n"                       \
    "ld1 {v26.16b}, [%[t7]], #16\n"                       \
    "ld1 {v25.16b}, [%[t6]], #16\n"                       \
    "saddw v17.4s, v17.4s, v27.4h\n"                      \
    "saddw2 v18.4s, v18.4s, v27.8h\n"                     \
    "smlal v23.8h, v22.8b, v5.8b\n"                       \
    "smlal2 v24.8h, v22.16b, v5.16b\n"                    \
    "saddw2 v20.4s, v20.4s, v28.8h\n"                     \
    "saddw v19.4s, v19.4s, v28.4h\n"                      \
    "smull2 v28.8h, v25.16b, v6.16b\n"                    \
    "smull v27.8h, v25.8b, v6.8b\n"                       \
    "ld1 {v21.16b}, [%[t8]], #16\n"                       \
    "smlal v27.8h, v26.8b, v7.8b\n"                       \
    "saddw v17.4s, v17.4s, v23.4h\n"                      \
    "smlal2 v28.8h, v26.16b, v7.16b\n"                    \
    "saddw v19.4s, v19.4s, v24.4h\n"                      \
    "saddw2 v20.4s, v20.4s, v24.8h\n"                     \
    "saddw2 v18.4s, v18.4s, v23.8h\n"                     \
    "smull v23.8h, v21.8b, v16.8b\n"                      \
    "smull2 v24.8h, v21.16b, v16.16b\n"                   \
    "saddw v17.4s, v17.4s, v27.4h\n"                      \
    "saddw v19.4s, v19.4s, v28.4h\n"                      \
    "saddw2 v20.4s, v20.4s, v28.8h\n"                     \
    "saddw2 v18.4s, v18.4s, v27.8h\n"                     \
    "ld1 {v0.4s, v1.4s, v2.4s, v3.4s}, [%[k]], #64\n"     \
    "saddw v17.4s, v17.4s, v23.4h\n"                      \
    "saddw v19.4s, v19.4s, v24.4h\n"                      \
    "saddw2 v20.4s, v20.4s, v24.8h\n"                     \
    "saddw2 v18.4s, v18.4s, v23.8h\n"                     \
    "ld1 {v4.4s, v5.4s, v6.4s, v7.4s}, [%[k]], #64\n"     \
    "sqrdmulh v17.4s, v17.4s, v0.4s\n"                    \
    "sqrdmulh v19.4s, v19.4s, v2.4s\n"                    \
    "sqrdmulh v20.4s, v20.4s, v3.4s\n"                    \
    "sqrdmulh v18.4s, v18.4s, v1.4s\n"                    \
    "and v21.16b, v17.16b, v4.16b\n"                      \
    "and v23.16b, v19.16b, v6.16b\n"                      \
    "and v22.16b, v18.16b, v5.16b\n"                      \
    "and v24.16b, v20.16b, v7.16b\n"                      \
    "ssra v17.4s, v21.4s, #31\n"                          \
    "ssra v19.4s, v23.4s, #31\n"                          \
    "ssra v20.4s, v24.4s, #31\n"                          \
    "ssra v18.4s, v22.4s, #31\n"                          \
    "srshl v17.4s, v17.4s, v4.4s\n"                       \
    "srshl v19.4s, v19.4s, v6.4s\n"                       \
    "srshl v18.4s, v18.4s, v5.4s\n"                       \
    "sqxtn v17.4h, v17.4s\n"                              \
    "sqxtn v19.4h, v19.4s\n"                              \
    "srshl v20.4s, v20.4s, v7.4s\n"                       \
    "sqxtn2 v17.8h, v18.4s\n"                             \
    "sqxtn2 v19.8h, v20.4s\n"                             \
    NEON3X3_NARROW_STORE_ASM


/// neondot: the same block with taps 0–3 and 4–7 through SDOT: zip1/zip2 of the four tap rows
/// (bytes, then halfwords) put each channel's 4 taps side by side, the weights are packed so,
/// and one sdot per 4 channels adds the 4 products (exact in int32, no pair bound needed);
/// tap 8 as above.
#define NEON3X3_BLOCK_SDOT_ASM \
    ".arch_extension dotprod\n" \
    "ld1 {v0.16b, v1.16b, v2.16b, v3.16b}, [%[k]], #64\n" \
    "ld1 {v4.16b, v5.16b, v6.16b, v7.16b}, [%[k]], #64\n" \
    "ld1 {v16.16b}, [%[k]], #16\n" \
    "ld1 {v17.4s, v18.4s, v19.4s, v20.4s}, [%[k]], #64\n" \
    "ld1 {v21.16b}, [%[t0]], #16\n" \
    "ld1 {v22.16b}, [%[t1]], #16\n" \
    "ld1 {v23.16b}, [%[t2]], #16\n" \
    "ld1 {v24.16b}, [%[t3]], #16\n" \
    "zip1 v25.16b, v21.16b, v22.16b\n" \
    "zip2 v26.16b, v21.16b, v22.16b\n" \
    "zip1 v27.16b, v23.16b, v24.16b\n" \
    "zip2 v28.16b, v23.16b, v24.16b\n" \
    "zip1 v21.8h, v25.8h, v27.8h\n" \
    "zip2 v22.8h, v25.8h, v27.8h\n" \
    "zip1 v23.8h, v26.8h, v28.8h\n" \
    "zip2 v24.8h, v26.8h, v28.8h\n" \
    "sdot v17.4s, v21.16b, v0.16b\n" \
    "sdot v18.4s, v22.16b, v1.16b\n" \
    "sdot v19.4s, v23.16b, v2.16b\n" \
    "sdot v20.4s, v24.16b, v3.16b\n" \
    "ld1 {v21.16b}, [%[t4]], #16\n" \
    "ld1 {v22.16b}, [%[t5]], #16\n" \
    "ld1 {v23.16b}, [%[t6]], #16\n" \
    "ld1 {v24.16b}, [%[t7]], #16\n" \
    "zip1 v25.16b, v21.16b, v22.16b\n" \
    "zip2 v26.16b, v21.16b, v22.16b\n" \
    "zip1 v27.16b, v23.16b, v24.16b\n" \
    "zip2 v28.16b, v23.16b, v24.16b\n" \
    "zip1 v21.8h, v25.8h, v27.8h\n" \
    "zip2 v22.8h, v25.8h, v27.8h\n" \
    "zip1 v23.8h, v26.8h, v28.8h\n" \
    "zip2 v24.8h, v26.8h, v28.8h\n" \
    "sdot v17.4s, v21.16b, v4.16b\n" \
    "sdot v18.4s, v22.16b, v5.16b\n" \
    "sdot v19.4s, v23.16b, v6.16b\n" \
    "sdot v20.4s, v24.16b, v7.16b\n" \
    NEON3X3_TAP8_REQUANT_ASM

/// The same for 8 channels (the plan's tail block): v17–v18 accumulate.
#define NEON3X3_BLOCK8_ASM \
    "ld1 {v0.8b, v1.8b, v2.8b, v3.8b}, [%[k]], #32\n" \
    "ld1 {v4.8b, v5.8b, v6.8b, v7.8b}, [%[k]], #32\n" \
    "ld1 {v16.8b}, [%[k]], #8\n" \
    "ld1 {v17.4s, v18.4s}, [%[k]], #32\n" \
    "ld1 {v21.8b}, [%[t0]], #8\n" \
    "ld1 {v22.8b}, [%[t1]], #8\n" \
    "smull v23.8h, v21.8b, v0.8b\n" \
    "smlal v23.8h, v22.8b, v1.8b\n" \
    "saddw v17.4s, v17.4s, v23.4h\n" \
    "saddw2 v18.4s, v18.4s, v23.8h\n" \
    "ld1 {v25.8b}, [%[t2]], #8\n" \
    "ld1 {v26.8b}, [%[t3]], #8\n" \
    "smull v27.8h, v25.8b, v2.8b\n" \
    "smlal v27.8h, v26.8b, v3.8b\n" \
    "saddw v17.4s, v17.4s, v27.4h\n" \
    "saddw2 v18.4s, v18.4s, v27.8h\n" \
    "ld1 {v21.8b}, [%[t4]], #8\n" \
    "ld1 {v22.8b}, [%[t5]], #8\n" \
    "smull v23.8h, v21.8b, v4.8b\n" \
    "smlal v23.8h, v22.8b, v5.8b\n" \
    "saddw v17.4s, v17.4s, v23.4h\n" \
    "saddw2 v18.4s, v18.4s, v23.8h\n" \
    "ld1 {v25.8b}, [%[t6]], #8\n" \
    "ld1 {v26.8b}, [%[t7]], #8\n" \
    "smull v27.8h, v25.8b, v6.8b\n" \
    "smlal v27.8h, v26.8b, v7.8b\n" \
    "saddw v17.4s, v17.4s, v27.4h\n" \
    "saddw2 v18.4s, v18.4s, v27.8h\n" \
    "ld1 {v21.8b}, [%[t8]], #8\n" \
    "smull v23.8h, v21.8b, v16.8b\n" \
    "saddw v17.4s, v17.4s, v23.4h\n" \
    "saddw2 v18.4s, v18.4s, v23.8h\n" \
    "ld1 {v0.4s, v1.4s}, [%[k]], #32\n" \
    "ld1 {v4.4s, v5.4s}, [%[k]], #32\n" \
    "sqrdmulh v17.4s, v17.4s, v0.4s\n" \
    "sqrdmulh v18.4s, v18.4s, v1.4s\n" \
    "and v21.16b, v17.16b, v4.16b\n" \
    "and v22.16b, v18.16b, v5.16b\n" \
    "ssra v17.4s, v21.4s, #31\n" \
    "ssra v18.4s, v22.4s, #31\n" \
    "srshl v17.4s, v17.4s, v4.4s\n" \
    "srshl v18.4s, v18.4s, v5.4s\n" \
    "sqxtn v17.4h, v17.4s\n" \
    "sqxtn2 v17.8h, v18.4s\n" \
    "sqadd v17.8h, v17.8h, %[out_offset].8h\n" \
    "sqxtn v17.8b, v17.8h\n" \
    "smax v17.8b, v17.8b, %[act_min].8b\n" \
    "smin v17.8b, v17.8b, %[act_max].8b\n" \
    "st1 {v17.8b}, [%[out]], #8\n" \

/// A run of `pixels` output pixels through NEON3X3_BLOCK_ASM. Per pixel: `blocks` blocks of 16
/// channels, then the pointers step back by `overlap` and the last block ends at channel C − 1:
/// a block of 16 (`tail8` 0: blocks = (C − 1) / 16, overlap = 16 − C % 16 or 0) or the 8-channel
/// tail block (`tail8` 1: blocks = C / 16, overlap = 8 − C % 16). The tap pointers have then moved
/// by C bytes, so the next pixel (stride s) is `advance` = (s − 1) · C further on, and the output
/// is contiguous.
#define NEON3X3_RUN_ASM(BLOCK, LAST_BLOCK, TAIL_SETUP)                                                                   \
    __asm__ volatile("0:\n"                                                                                       \
                     "mov %[n], %[blocks]\n"                                                                      \
                     "mov %[k], %[packed]\n"                                                                      \
                     "cbz %[n], 2f\n"                                                                             \
                     "1:\n" BLOCK "subs %[n], %[n], #1\n"                                                         \
                     "b.ne 1b\n"                                                                                  \
                     "2:\n" TAIL_SETUP "cbz %[overlap], 3f\n"                                                     \
                     "sub %[t0], %[t0], %[overlap]\n"                                                             \
                     "sub %[t1], %[t1], %[overlap]\n"                                                             \
                     "sub %[t2], %[t2], %[overlap]\n"                                                             \
                     "sub %[t3], %[t3], %[overlap]\n"                                                             \
                     "sub %[t4], %[t4], %[overlap]\n"                                                             \
                     "sub %[t5], %[t5], %[overlap]\n"                                                             \
                     "sub %[t6], %[t6], %[overlap]\n"                                                             \
                     "sub %[t7], %[t7], %[overlap]\n"                                                             \
                     "sub %[t8], %[t8], %[overlap]\n"                                                             \
                     "sub %[out], %[out], %[overlap]\n"                                                           \
                     "3:\n" LAST_BLOCK "subs %[pixels], %[pixels], #1\n"                                          \
                     "b.eq 5f\n"                                                                                  \
                     "cbz %[advance], 0b\n"                                                                       \
                     "add %[t0], %[t0], %[advance]\n"                                                             \
                     "add %[t1], %[t1], %[advance]\n"                                                             \
                     "add %[t2], %[t2], %[advance]\n"                                                             \
                     "add %[t3], %[t3], %[advance]\n"                                                             \
                     "add %[t4], %[t4], %[advance]\n"                                                             \
                     "add %[t5], %[t5], %[advance]\n"                                                             \
                     "add %[t6], %[t6], %[advance]\n"                                                             \
                     "add %[t7], %[t7], %[advance]\n"                                                             \
                     "add %[t8], %[t8], %[advance]\n"                                                             \
                     "b 0b\n"                                                                                     \
                     "5:\n"                                                                                       \
                     : [t0] "+r"(t0), [t1] "+r"(t1), [t2] "+r"(t2), [t3] "+r"(t3), [t4] "+r"(t4), [t5] "+r"(t5), \
                       [t6] "+r"(t6), [t7] "+r"(t7), [t8] "+r"(t8), [out] "+r"(out), [k] "=&r"(k), [n] "=&r"(n),  \
                       [pixels] "+r"(pixels)                                                                      \
                     : [packed] "r"(p->neon_blocks), [tail] "r"(tail), [blocks] "r"(blocks),                      \
                       [overlap] "r"(overlap), [advance] "r"(advance), [out_offset] "w"(out_offset),              \
                       [act_min] "w"(act_min), [act_max] "w"(act_max)                                             \
                     : "memory", "cc", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v16", "v17", "v18", "v19", \
                       "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28")

/// One run function per 16-channel block (the 8-channel tail block is the same for both): the asm
/// must be fixed at compile time, so a macro writes the two functions rather than a flag choosing
/// at run time (which changed the compiled C around the asm, and so the counted figures).
#define NEON3X3_RUN_FUNCTION(NAME, BLOCK)                                                                             \
    PW_INLINE void NAME(const pw_depthwise_plan *p, const int8_t *const taps[9], size_t offset, int8_t *out,         \
                        size_t pixels, size_t advance, size_t blocks, size_t overlap, const int8_t *tail,            \
                        int16x8_t out_offset, int8x16_t act_min, int8x16_t act_max) {                                \
        const int8_t *t0 = taps[0] + offset, *t1 = taps[1] + offset, *t2 = taps[2] + offset;                       \
        const int8_t *t3 = taps[3] + offset, *t4 = taps[4] + offset, *t5 = taps[5] + offset;                       \
        const int8_t *t6 = taps[6] + offset, *t7 = taps[7] + offset, *t8 = taps[8] + offset;                       \
        const int8_t *k;                                                                                            \
        size_t n;                                                                                                   \
        if (tail) NEON3X3_RUN_ASM(BLOCK, NEON3X3_BLOCK8_ASM, "mov %[k], %[tail]\n");                                 \
        else NEON3X3_RUN_ASM(BLOCK, BLOCK, "");                                                                     \
    }
NEON3X3_RUN_FUNCTION(neon3x3_run_asm, NEON3X3_BLOCK_ASM)
/// neon3x3_run_asm with the SDOT block of 16.
/// (".arch_extension dotprod": the assembler accepts sdot here, while the C around it stays
/// compiled for baseline NEON; the row function runs it only on neondot plans.)
NEON3X3_RUN_FUNCTION(neon3x3_run_sdot, NEON3X3_BLOCK_SDOT_ASM)
#undef NEON3X3_RUN_FUNCTION
#undef NEON3X3_RUN_ASM

PW_INLINE void neon3x3_row(void *context, int task, const int paired, const int left, const int sdot) {
    const depthwise_job *job = context;
    const pw_depthwise_plan *p = job->plan;
    const pw_conv_geometry *g = &p->g;
    const int batch = task / g->output_height, oy = task % g->output_height;
    const int C = p->channels, W = g->input_width, OW = g->output_width;
    const int iy0 = oy * g->stride_height - g->pad_height;
    const int8_t *image = job->input + (size_t)batch * g->input_height * W * C;
    int8_t *out = job->output + (((size_t)batch * g->output_height + oy) * OW) * C;
    const int16x8_t out_offset = vdupq_n_s16((int16_t)g->output_offset);
    const int8x16_t act_min = vdupq_n_s8((int8_t)g->act_min), act_max = vdupq_n_s8((int8_t)g->act_max);
    // rows[ky]: the input row of tap row ky, NULL above or below the image; row_taps[t]: the
    // address of tap t for an output pixel whose window starts at column 0 (interior pixels add
    // their column offset).
    const int8_t *rows[3], *row_taps[9];
    int full_rows = 1;
    for (int ky = 0; ky < 3; ky++) {
        const int iy = iy0 + ky;
        rows[ky] = iy >= 0 && iy < g->input_height ? image + (size_t)iy * W * C : NULL;
        full_rows &= rows[ky] != NULL;
        for (int kx = 0; kx < 3; kx++) row_taps[ky * 3 + kx] = rows[ky] ? rows[ky] + (size_t)kx * C : NULL;
    }
    const int tail8 = p->neon_tail8;
    const size_t blocks = (size_t)(tail8 ? C / 16 : (C - 1) / 16);
    const size_t overlap = (size_t)(tail8 ? 8 - C % 16 : (16 - C % 16) % 16);
    const int8_t *tail = tail8 ? p->neon_blocks + (size_t)((C + 15) / 16) * p->neon_block_bytes : NULL;
    const size_t advance = (size_t)(g->stride_width - 1) * C;
    // Output columns whose window is inside the image horizontally: [ox_lo, ox_hi).
    int ox_lo = (g->pad_width + g->stride_width - 1) / g->stride_width;
    int ox_hi = W - 3 + g->pad_width < 0 ? 0 : (W - 3 + g->pad_width) / g->stride_width + 1;
    if (ox_hi > OW) ox_hi = OW;
    if (ox_lo >= ox_hi || !full_rows || !paired || left) ox_lo = ox_hi = OW;  // (no run of 0 pixels)
    for (int ox = 0; ox < OW; ox++, out += C) {
        const int ix0 = ox * g->stride_width - g->pad_width;
        if (ox == ox_lo) {
            if (sdot)
                neon3x3_run_sdot(p, row_taps, (size_t)ix0 * C, out, (size_t)(ox_hi - ox_lo), advance, blocks, overlap,
                                 tail, out_offset, act_min, act_max);
            else
                neon3x3_run_asm(p, row_taps, (size_t)ix0 * C, out, (size_t)(ox_hi - ox_lo), advance, blocks, overlap,
                                tail, out_offset, act_min, act_max);
            out += (size_t)(ox_hi - ox_lo - 1) * C;
            ox = ox_hi - 1;
            continue;
        }
        const int8_t *taps[9];
        for (int ky = 0; ky < 3; ky++)
            for (int kx = 0; kx < 3; kx++) {
                const int ix = ix0 + kx;
                taps[ky * 3 + kx] = rows[ky] && ix >= 0 && ix < W ? rows[ky] + (size_t)ix * C : p->zero_point_row;
            }
        if (sdot) neon3x3_run_sdot(p, taps, 0, out, 1, 0, blocks, overlap, tail, out_offset, act_min, act_max);
        else if (paired && !left)
            neon3x3_run_asm(p, taps, 0, out, 1, 0, blocks, overlap, tail, out_offset, act_min, act_max);
        else
            neon3x3_pixel(p, taps, 0, out, paired, left, out_offset, act_min, act_max);
    }
}

static void depthwise_row_neon3x3(void *context, int task, int thread) {
    (void)thread;
    neon3x3_row(context, task, 1, 0, 0);
}
static void depthwise_row_neon3x3_sdot(void *context, int task, int thread) {
    (void)thread;
    neon3x3_row(context, task, 1, 0, 1);
}
static void depthwise_row_neon3x3_left(void *context, int task, int thread) {
    (void)thread;
    neon3x3_row(context, task, 1, 1, 0);
}
static void depthwise_row_neon3x3_unpaired(void *context, int task, int thread) {
    (void)thread;
    const depthwise_job *job = context;
    neon3x3_row(context, task, 0, job->plan->neon_left, 0);
}

pw_task_fn pw_depthwise_neon_row_for(const pw_depthwise_plan *p) {
    if (!p->neon_blocks) return depthwise_row_neon;
    if (!p->neon_paired) return depthwise_row_neon3x3_unpaired;
    if (p->neon_left) return depthwise_row_neon3x3_left;
    return p->neon_sdot ? depthwise_row_neon3x3_sdot : depthwise_row_neon3x3;
}
#endif
