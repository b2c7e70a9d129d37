// CONV_2D GEMM tile for NEON with SDOT (Cortex-A76 and later). The plan and its packing: gemm.c,
// gemm_plan.h.
#include "gemm_plan.h"

#if defined(__aarch64__)
// MARK: neondot (Cortex-A76 and later: SDOT)

/// The first `count` (1…16) bytes of a requantised row block, stored 16 or 8/4/2/1 at a time.
PW_INLINE void dot_store(int8_t *out, int8x16_t bytes, int count) {
    if (count == 16) {
        vst1q_s8(out, bytes);
        return;
    }
    if (count & 8) {
        vst1_s8(out, vget_low_s8(bytes));
        out += 8;
        bytes = vextq_s8(bytes, bytes, 8);
    }
    if (count & 4) {
        vst1q_lane_s32((int32_t *)(void *)out, vreinterpretq_s32_s8(bytes), 0);
        out += 4;
        bytes = vextq_s8(bytes, bytes, 4);
    }
    if (count & 2) {
        vst1q_lane_s16((int16_t *)(void *)out, vreinterpretq_s16_s8(bytes), 0);
        out += 2;
        bytes = vextq_s8(bytes, bytes, 2);
    }
    if (count & 1) vst1q_lane_s8(out, bytes, 0);
}

/// A block's requantisation constants, loaded once for all rows of the tile.
typedef struct {
    int32x4_t m[4], left[4], right[4];  // right: −right shift (srshl by a negative count shifts right)
    int32x4_t offset32;
    int16x8_t offset16;
    int8x16_t lo, hi;
} dot_requant;

/// Requantises the G × 4 accumulators of one row and stores `count` bytes. SHORT (every shift
/// right, every multiplier ≥ 0): sqrdmulh, then RoundingDivideByPOT as `ssra #31` (−1 on negative
/// values, so that `srshl`'s ties-up rounding rounds ties away from zero), exact because sqrdmulh
/// never returns INT32_MIN with a multiplier ≥ 0; the result is at most 2^30 in magnitude, so
/// the offset is added saturating on int16 with the same result as the reference's int32 add.
/// Otherwise the general sequence: left shift, fix-up only in lanes that shift right, the
/// offset added on int32 (wrapping, like the reference).
PW_INLINE void dot_requant_row(int32x4_t a0, int32x4_t a1, int32x4_t a2, int32x4_t a3, const dot_requant *q,
                               int G, int SHORT, int8_t *out, int count) {
    int32x4_t v[4] = {a0, a1, a2, a3};
    for (int i = 0; i < 4; i++) {
        if (i >= G) {
            v[i] = vdupq_n_s32(0);
        } else if (SHORT) {
            v[i] = vqrdmulhq_s32(v[i], q->m[i]);
            v[i] = vrshlq_s32(vsraq_n_s32(v[i], v[i], 31), q->right[i]);
        } else {
            v[i] = vqrdmulhq_s32(vshlq_s32(v[i], q->left[i]), q->m[i]);
            v[i] = vqaddq_s32(v[i], vshrq_n_s32(vandq_s32(v[i], q->right[i]), 31));
            v[i] = vaddq_s32(vrshlq_s32(v[i], q->right[i]), q->offset32);
        }
    }
    int16x8_t h0 = vqmovn_high_s32(vqmovn_s32(v[0]), v[1]);
    if (SHORT) h0 = vqaddq_s16(h0, q->offset16);
    int8x16_t bytes;
    if (G > 2) {
        int16x8_t h1 = vqmovn_high_s32(vqmovn_s32(v[2]), v[3]);
        if (SHORT) h1 = vqaddq_s16(h1, q->offset16);
        bytes = vqmovn_high_s16(vqmovn_s16(h0), h1);
    } else {
        bytes = vcombine_s8(vqmovn_s16(h0), vdup_n_s8(0));
    }
    dot_store(out, vminq_s8(vmaxq_s8(bytes, q->lo), q->hi), count);
}

/// acc[r][i] += W[i] · (lane J of row r): one SDOT per 4 channels × 4 k.
#define DOT_LANEQ(i, J)                                                                           \
    if (G > i)                                                                                    \
        for (int r = 0; r < DOT_MR; r++) acc[r][i] = vdotq_laneq_s32(acc[r][i], wv[i], x[r], J);
#define DOT_LANE(i, J)                                                                            \
    if (G > i)                                                                                    \
        for (int r = 0; r < DOT_MR; r++) acc[r][i] = vdotq_lane_s32(acc[r][i], wv[i], x8[r], J);
/// One group of 4 k (64 weight bytes, of which the G × 16 used) against lane J of every row:
/// each 16-byte weight vector serves all DOT_MR rows.
#define DOT_K4(LANE, J)                                                                           \
    do {                                                                                          \
        int8x16_t wv[4];                                                                          \
        for (int i = 0; i < G; i++) wv[i] = vld1q_s8(w + 16 * i);                                 \
        LANE(0, J) LANE(1, J) LANE(2, J) LANE(3, J)                                               \
        w += 64;                                                                                  \
    } while (0)
#define DOT_STORE_ROW(r)                                                                          \
    if (r < rows_valid) dot_requant_row(acc[r][0], acc[r][1], acc[r][2], acc[r][3], q, G, SHORT, out + (size_t)(r) * p->n, count);

#define DOT_MR 6
#define DOT_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
/// One block of 16 channels (G groups of 4 used: the last block of a layer whose width is not a
/// multiple of 16 skips the empty groups) for DOT_MR rows: XNNPACK's "c4 neondot" scheme, each
/// row's 16 bytes loaded once per 16 k and used lane by lane (vdotq_laneq), each weight vector
/// serving all rows. Accumulators start from the folded bias.
PW_TARGET_DOTPROD PW_INLINE void dot_block(const pw_gemm_plan *p, const int8_t *const *rows, int rows_valid,
                                           const int8_t *w, int c, int G, int SHORT, int8_t *out, int count) {
    const int kp = p->kp;
    int32x4_t acc[DOT_MR][4];
    for (int i = 0; i < 4; i++) acc[0][i] = i < G ? vld1q_s32(p->bias + c + 4 * i) : vdupq_n_s32(0);
    for (int r = 1; r < DOT_MR; r++)
        for (int i = 0; i < 4; i++) acc[r][i] = acc[0][i];
    int k = 0;
    for (; k + 16 <= kp; k += 16) {
        int8x16_t x[DOT_MR];
        for (int r = 0; r < DOT_MR; r++) x[r] = vld1q_s8(rows[r] + k);
        DOT_K4(DOT_LANEQ, 0);
        DOT_K4(DOT_LANEQ, 1);
        DOT_K4(DOT_LANEQ, 2);
        DOT_K4(DOT_LANEQ, 3);
    }
    if (k + 8 <= kp) {
        int8x8_t x8[DOT_MR];
        for (int r = 0; r < DOT_MR; r++) x8[r] = vld1_s8(rows[r] + k);
        DOT_K4(DOT_LANE, 0);
        DOT_K4(DOT_LANE, 1);
        k += 8;
    }
    if (k < kp) {
        int8x8_t x8[DOT_MR];
        for (int r = 0; r < DOT_MR; r++) {
            int32_t v;
            memcpy(&v, rows[r] + k, 4);
            x8[r] = vreinterpret_s8_s32(vdup_n_s32(v));
        }
        DOT_K4(DOT_LANE, 0);
    }
    // The constants are loaded here, not before the loop that needs every register.
    dot_requant constants, *q = &constants;
    for (int i = 0; i < G; i++) {
        constants.m[i] = vld1q_s32(p->multiplier + c + 4 * i);
        constants.right[i] = vnegq_s32(vld1q_s32(p->right + c + 4 * i));
        if (!SHORT) constants.left[i] = vld1q_s32(p->left + c + 4 * i);
    }
    constants.offset32 = vdupq_n_s32(p->g.output_offset);
    constants.offset16 = vdupq_n_s16((int16_t)p->g.output_offset);
    constants.lo = vdupq_n_s8((int8_t)p->g.act_min);
    constants.hi = vdupq_n_s8((int8_t)p->g.act_max);
    DOT_ROWS(DOT_STORE_ROW)
}

/// Arguments of dot_6x16_short (offsets fixed: the assembly reads them by offset).
typedef struct {
    const int8_t *rows[6];                // 0: advanced through K and rewound per block
    const int8_t *weights;                // 48: the first full block's packed weights
    const int32_t *bias, *multiplier, *right;  // 56, 64, 72: the first block's constants (right ≥ 1)
    int8_t *out;                          // 80: row 0's first output byte
    int64_t kp, stride, blocks;           // 88, 96, 104: K padded, output row stride, full blocks (≥ 1)
    int64_t reserved[2];                  // 112: keeps the vectors at 128
    int16_t offset[8];                    // 128: output offset, 8 lanes
    int8_t lo[16], hi[16];                // 144, 160: the activation range
} dot_asm_args;
_Static_assert(offsetof(dot_asm_args, weights) == 48 && offsetof(dot_asm_args, kp) == 88 &&
                   offsetof(dot_asm_args, offset) == 128 && offsetof(dot_asm_args, hi) == 160,
               "dot_6x16_short reads its arguments by offset");

/// The 6×16 tile over `blocks` full blocks of 16 channels, 6 valid rows, the short requantisation
/// (see dot_requant_row): the same arithmetic as dot_block, with hand-allocated registers so
/// that no compiler spills or re-derives anything. v0–v23 accumulate (row r, channels 4i…4i+3 in
/// v(4r+i)), v24–v29 hold 16 bytes of each row, v30/v31 two weight vectors (ldp); after the loop
/// v24–v31 hold the block's multipliers and −right shifts, and once row 0 is requantised v1–v3
/// the offset and the clamp. Rows are read with post-increment and rewound by kp per block.
__attribute__((noinline)) PW_TARGET_DOTPROD static void dot_6x16_short(const dot_asm_args *args) {
    __asm__ volatile(
        ".arch_extension dotprod\n"
        ".macro PW_DOT2 a0, a1, x, lane\n"
        "  sdot v\\a0\\().4s, v30.16b, v\\x\\().4b[\\lane]\n"
        "  sdot v\\a1\\().4s, v31.16b, v\\x\\().4b[\\lane]\n"
        ".endm\n"
        ".macro PW_K4 lane\n"
        "  ldp q30, q31, [x15], #32\n"
        "  PW_DOT2 0, 1, 24, \\lane\n  PW_DOT2 4, 5, 25, \\lane\n  PW_DOT2 8, 9, 26, \\lane\n"
        "  PW_DOT2 12, 13, 27, \\lane\n  PW_DOT2 16, 17, 28, \\lane\n  PW_DOT2 20, 21, 29, \\lane\n"
        "  ldp q30, q31, [x15], #32\n"
        "  PW_DOT2 2, 3, 24, \\lane\n  PW_DOT2 6, 7, 25, \\lane\n  PW_DOT2 10, 11, 26, \\lane\n"
        "  PW_DOT2 14, 15, 27, \\lane\n  PW_DOT2 18, 19, 28, \\lane\n  PW_DOT2 22, 23, 29, \\lane\n"
        ".endm\n"
        ".macro PW_SCALE a0, a1, a2, a3\n"
        "  sqrdmulh v\\a0\\().4s, v\\a0\\().4s, v24.4s\n  sqrdmulh v\\a1\\().4s, v\\a1\\().4s, v25.4s\n"
        "  sqrdmulh v\\a2\\().4s, v\\a2\\().4s, v26.4s\n  sqrdmulh v\\a3\\().4s, v\\a3\\().4s, v27.4s\n"
        "  ssra v\\a0\\().4s, v\\a0\\().4s, #31\n  ssra v\\a1\\().4s, v\\a1\\().4s, #31\n"
        "  ssra v\\a2\\().4s, v\\a2\\().4s, #31\n  ssra v\\a3\\().4s, v\\a3\\().4s, #31\n"
        "  srshl v\\a0\\().4s, v\\a0\\().4s, v28.4s\n  srshl v\\a1\\().4s, v\\a1\\().4s, v29.4s\n"
        "  srshl v\\a2\\().4s, v\\a2\\().4s, v30.4s\n  srshl v\\a3\\().4s, v\\a3\\().4s, v31.4s\n"
        "  sqxtn v\\a0\\().4h, v\\a0\\().4s\n  sqxtn2 v\\a0\\().8h, v\\a1\\().4s\n"
        "  sqxtn v\\a2\\().4h, v\\a2\\().4s\n  sqxtn2 v\\a2\\().8h, v\\a3\\().4s\n"
        ".endm\n"
        ".macro PW_FINISH a0, a2\n"
        "  sqadd v\\a0\\().8h, v\\a0\\().8h, v1.8h\n  sqadd v\\a2\\().8h, v\\a2\\().8h, v1.8h\n"
        "  sqxtn v\\a0\\().8b, v\\a0\\().8h\n  sqxtn2 v\\a0\\().16b, v\\a2\\().8h\n"
        "  smax v\\a0\\().16b, v\\a0\\().16b, v2.16b\n  smin v\\a0\\().16b, v\\a0\\().16b, v3.16b\n"
        "  str q\\a0, [x7]\n"
        ".endm\n"
        ".macro PW_ROW a0, a1, a2, a3\n"
        "  add x7, x7, x4\n"
        "  PW_SCALE \\a0, \\a1, \\a2, \\a3\n"
        "  PW_FINISH \\a0, \\a2\n"
        ".endm\n"
        "  ldp x9, x10, [%[a]]\n"
        "  ldp x11, x12, [%[a], #16]\n"
        "  ldp x13, x14, [%[a], #32]\n"
        "  ldp x15, x0, [%[a], #48]\n"
        "  ldp x1, x2, [%[a], #64]\n"
        "  ldp x3, x5, [%[a], #80]\n"
        "  ldp x4, x6, [%[a], #96]\n"
        "0:\n"
        // Every row's accumulators start from the block's bias: one 64-byte load each.
        "  ld1 {v0.4s, v1.4s, v2.4s, v3.4s}, [x0]\n"
        "  ld1 {v4.4s, v5.4s, v6.4s, v7.4s}, [x0]\n"
        "  ld1 {v8.4s, v9.4s, v10.4s, v11.4s}, [x0]\n"
        "  ld1 {v12.4s, v13.4s, v14.4s, v15.4s}, [x0]\n"
        "  ld1 {v16.4s, v17.4s, v18.4s, v19.4s}, [x0]\n"
        "  ld1 {v20.4s, v21.4s, v22.4s, v23.4s}, [x0], #64\n"
        "  subs x16, x5, #16\n"
        "  b.lo 2f\n"
        "1:\n"
        "  ldr q24, [x9], #16\n  ldr q25, [x10], #16\n  ldr q26, [x11], #16\n"
        "  ldr q27, [x12], #16\n  ldr q28, [x13], #16\n  ldr q29, [x14], #16\n"
        "  PW_K4 0\n  PW_K4 1\n  PW_K4 2\n  PW_K4 3\n"
        "  subs x16, x16, #16\n"
        "  b.hs 1b\n"
        "2:\n"  // x16 = remaining − 16: its bits 3 and 2 are those of the remaining 0, 4, 8 or 12
        "  tbz x16, #3, 3f\n"
        "  ldr d24, [x9], #8\n  ldr d25, [x10], #8\n  ldr d26, [x11], #8\n"
        "  ldr d27, [x12], #8\n  ldr d28, [x13], #8\n  ldr d29, [x14], #8\n"
        "  PW_K4 0\n  PW_K4 1\n"
        "3:\n"
        "  tbz x16, #2, 4f\n"
        "  ldr s24, [x9], #4\n  ldr s25, [x10], #4\n  ldr s26, [x11], #4\n"
        "  ldr s27, [x12], #4\n  ldr s28, [x13], #4\n  ldr s29, [x14], #4\n"
        "  PW_K4 0\n"
        "4:\n"
        "  sub x9, x9, x5\n  sub x10, x10, x5\n  sub x11, x11, x5\n"
        "  sub x12, x12, x5\n  sub x13, x13, x5\n  sub x14, x14, x5\n"
        "  ld1 {v24.4s, v25.4s, v26.4s, v27.4s}, [x1], #64\n"
        "  ld1 {v28.4s, v29.4s, v30.4s, v31.4s}, [x2], #64\n"
        "  neg v28.4s, v28.4s\n  neg v29.4s, v29.4s\n  neg v30.4s, v30.4s\n  neg v31.4s, v31.4s\n"
        "  PW_SCALE 0, 1, 2, 3\n"  // row 0 frees v1, then v2 and v3, for the offset and the clamp
        "  ldr q1, [%[a], #128]\n"
        "  sqadd v0.8h, v0.8h, v1.8h\n  sqadd v2.8h, v2.8h, v1.8h\n"
        "  sqxtn v0.8b, v0.8h\n  sqxtn2 v0.16b, v2.8h\n"
        "  ldr q2, [%[a], #144]\n  ldr q3, [%[a], #160]\n"
        "  smax v0.16b, v0.16b, v2.16b\n  smin v0.16b, v0.16b, v3.16b\n"
        "  str q0, [x3]\n"
        "  mov x7, x3\n"
        "  PW_ROW 4, 5, 6, 7\n  PW_ROW 8, 9, 10, 11\n  PW_ROW 12, 13, 14, 15\n"
        "  PW_ROW 16, 17, 18, 19\n  PW_ROW 20, 21, 22, 23\n"
        "  add x3, x3, #16\n"
        "  subs x6, x6, #1\n"
        "  b.ne 0b\n"
        ".purgem PW_DOT2\n.purgem PW_K4\n.purgem PW_SCALE\n.purgem PW_FINISH\n.purgem PW_ROW\n"
        :
        : [a] "r"(args)
        : "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x9", "x10", "x11", "x12", "x13", "x14", "x15", "x16",
          "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15",
          "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30",
          "v31", "cc", "memory");
}

/// 6 rows × 16 channels per block, SDOT (1.2 instructions per SDOT in the main loop, against
/// 1.6 for the former 4-row tile that broadcast 4 bytes of each row per 4 k and reloaded the
/// weights for every 4 rows). The block's requantisation constants are loaded once for 6 rows;
/// conv_task's patch scratch holds MR_MAX (8) ≥ 6 rows.
PW_TARGET_DOTPROD void pw_gemm_tile_neondot(const pw_gemm_plan *p, const int8_t *const *rows, int rows_valid,
                                           int8_t *out) {
    const int short_requant = p->right_shift_only;
    int nb = 0;
    if (short_requant && rows_valid == 6 && p->n >= 16) {
        // Every full block of a whole tile in assembly; a partial last tile, the general
        // requantisation and a layer's last block narrower than 16 in C.
        dot_asm_args args;
        for (int r = 0; r < 6; r++) args.rows[r] = rows[r];
        args.weights = p->weights;
        args.bias = p->bias;
        args.multiplier = p->multiplier;
        args.right = p->right;
        args.out = out;
        args.kp = p->kp;
        args.stride = p->n;
        args.blocks = p->n / 16;
        args.reserved[0] = args.reserved[1] = 0;
        vst1q_s16(args.offset, vdupq_n_s16((int16_t)p->g.output_offset));
        vst1q_s8(args.lo, vdupq_n_s8((int8_t)p->g.act_min));
        vst1q_s8(args.hi, vdupq_n_s8((int8_t)p->g.act_max));
        dot_6x16_short(&args);
        nb = p->n / 16;
    }
    for (; nb < p->nblocks; nb++) {
        const int c = nb * 16, count = block_width(p, nb);
        const int8_t *w = p->weights + (size_t)nb * p->kp * 16;
        int8_t *o = out + c;
        if (count == 16) {
            if (short_requant) dot_block(p, rows, rows_valid, w, c, 4, 1, o, 16);
            else dot_block(p, rows, rows_valid, w, c, 4, 0, o, 16);
        } else {
            // The last block of a layer whose width is not a multiple of 16: only its groups of 4.
            switch ((count + 3) / 4) {
            case 1: dot_block(p, rows, rows_valid, w, c, 1, short_requant, o, count); break;
            case 2: dot_block(p, rows, rows_valid, w, c, 2, short_requant, o, count); break;
            case 3: dot_block(p, rows, rows_valid, w, c, 3, short_requant, o, count); break;
            default: dot_block(p, rows, rows_valid, w, c, 4, short_requant, o, count); break;
            }
        }
    }
}
#undef DOT_MR
#undef DOT_ROWS
#undef DOT_LANEQ
#undef DOT_LANE
#undef DOT_K4
#undef DOT_STORE_ROW
#endif
