// Table kernels: broadcast int8 ADD/SUB/MUL through a 64 KiB table of every (a, b) pair, and
// unary operators on bytes through a 256-entry table (CAST, DEQUANTIZE, requantizing QUANTIZE,
// LOGISTIC/TANH/LOG int8, and the chains ByteChainFusion folds into one table).
#include "internal.h"

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
