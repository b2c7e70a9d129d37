// gemmlowp's fixed-point arithmetic (fixedpoint.h), beside FixedPoint.swift's TFLite helpers.

/// gemmlowp fixed-point helpers used by the reference SOFTMAX. A `FixedPoint<int32, I>` value has
/// I integer bits and 31 − I fractional bits; products of Q(a) and Q(b) are Q(a + b) through
/// SaturatingRoundingDoublingHighMul; + and − are plain (wrapping) integer operations.
enum GemmlowpFixedPoint {
    /// Multiplies by 2^exponent with rounding (exponent < 0) or saturation (exponent > 0).
    @inline(__always)
    static func saturatingRoundingMultiplyByPOT(_ x: Int32, _ exponent: Int) -> Int32 {
        if exponent == 0 { return x }
        if exponent < 0 { return roundingDivideByPOT(x, -exponent) }
        let threshold = Int32((Int64(1) << (31 - exponent)) - 1)
        if x > threshold { return Int32.max }
        if x < -threshold { return Int32.min }
        return x << Int32(exponent)
    }

    /// Rescale<dst> from `source` integer bits: multiply by 2^(source − destination).
    @inline(__always)
    static func rescale(_ x: Int32, from source: Int, to destination: Int) -> Int32 {
        saturatingRoundingMultiplyByPOT(x, source - destination)
    }

    @inline(__always)
    static func multiply(_ a: Int32, _ b: Int32) -> Int32 { saturatingRoundingDoublingHighMul(a, b) }

    /// exp(a) for a in [−1/4, 0), Q0.31 in and out: Taylor series around −1/8.
    static func expOnIntervalBetweenNegativeOneQuarterAnd0Exclusive(_ a: Int32) -> Int32 {
        let constantTerm: Int32 = 1895147668  // exp(−1/8) in Q0.31
        let oneThird: Int32 = 715827883  // 1/3 in Q0.31
        let x = a &+ (1 << 28)  // a + 1/8
        let x2 = multiply(x, x)
        let x3 = multiply(x2, x)
        let x4 = multiply(x2, x2)
        let x4Over4 = saturatingRoundingMultiplyByPOT(x4, -2)
        let polynomial = saturatingRoundingMultiplyByPOT(multiply(x4Over4 &+ x3, oneThird) &+ x2, -1)
        return constantTerm &+ multiply(constantTerm, x &+ polynomial)
    }

    /// exp(a) for a ≤ 0 given in Q5.26 (5 integer bits), result in Q0.31: exact reduction to
    /// [−1/4, 0) plus a barrel shifter of exp(−2^k) factors.
    static func expOnNegativeValues(_ a: Int32) -> Int32 {
        let integerBits = 5
        let fractionalBits = 31 - integerBits
        let oneQuarter: Int32 = 1 << (fractionalBits - 2)
        let mask = oneQuarter - 1
        let aModQuarterMinusOneQuarter = (a & mask) &- oneQuarter
        var result = expOnIntervalBetweenNegativeOneQuarterAnd0Exclusive(
            rescale(aModQuarterMinusOneQuarter, from: integerBits, to: 0))
        let remainder = aModQuarterMinusOneQuarter &- a
        // Barrel shifter: for each bit 2^k (k = −2 ... 4) of the remainder, multiply by exp(−2^k) in Q0.31.
        barrelShift(&result, remainder, fractionalBits + -2, 1672461947)
        barrelShift(&result, remainder, fractionalBits + -1, 1302514674)
        barrelShift(&result, remainder, fractionalBits + 0, 790015084)
        barrelShift(&result, remainder, fractionalBits + 1, 290630308)
        barrelShift(&result, remainder, fractionalBits + 2, 39332535)
        barrelShift(&result, remainder, fractionalBits + 3, 720401)
        barrelShift(&result, remainder, fractionalBits + 4, 242)  // all exponents < 5 integer bits
        if a == 0 { result = Int32.max }  // One() in Q0.31
        return result
    }

    @inline(__always)
    static func barrelShift(_ result: inout Int32, _ remainder: Int32, _ bit: Int, _ multiplier: Int32) {
        if remainder & (Int32(1) << Int32(bit)) != 0 { result = multiply(result, multiplier) }
    }

    /// 1 / (1 + a) for a in [0, 1), Q0.31 in and out: Newton–Raphson on half the denominator.
    static func oneOverOnePlusXForXIn01(_ a: Int32) -> Int32 {
        // RoundingHalfSum(a, One()).
        let sum = Int64(a) + Int64(Int32.max)
        let halfDenominator = Int32(truncatingIfNeeded: (sum + (sum >= 0 ? 1 : -1)) / 2)
        let constant48Over17: Int32 = 1515870810  // Q2.29
        let constantNeg32Over17: Int32 = -1010580540  // Q2.29
        var x = constant48Over17 &+ multiply(halfDenominator, constantNeg32Over17)
        let oneQ2: Int32 = 1 << 29
        for _ in 0..<3 {
            let halfDenominatorTimesX = multiply(halfDenominator, x)
            let oneMinus = oneQ2 &- halfDenominatorTimesX
            x = x &+ rescale(multiply(x, oneMinus), from: 4, to: 2)
        }
        return rescale(x >> 1, from: 2, to: 0)
    }

    /// TFLite's GetReciprocal: 1/x for x in Q(integerDigits), as a Q0.31 scale and a shift.
    static func reciprocal(_ x: Int32, integerDigits: Int) -> (scale: Int32, bitsOverUnit: Int) {
        let headroomPlusOne = UInt32(bitPattern: x).leadingZeroBitCount
        let bitsOverUnit = integerDigits - headroomPlusOne
        let shiftedSumMinusOne = Int32(bitPattern: (UInt32(bitPattern: x) << UInt32(headroomPlusOne)) &- (UInt32(1) << 31))
        return (oneOverOnePlusXForXIn01(shiftedSumMinusOne), bitsOverUnit)
    }
}
