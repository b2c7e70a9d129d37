#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// TFLite's integer arithmetic (gemmlowp fixed point, double-rounding build), written from its
// documented semantics. A real multiplier M in (0, 1) (or any positive M) is stored as a Q0.31
// `multiplier` in [2^30, 2^31) and a power-of-two `shift`: M = multiplier × 2^(shift − 31).

/// `(a × b × 2) >> 32` rounded to nearest (ties away from zero), saturating the single overflow
/// case a = b = Int32.min. gemmlowp's SaturatingRoundingDoublingHighMul.
@inline(__always)
func saturatingRoundingDoublingHighMul(_ a: Int32, _ b: Int32) -> Int32 {
    if a == b && a == Int32.min { return Int32.max }
    let product = Int64(a) * Int64(b)
    let nudge: Int64 = product >= 0 ? (1 << 30) : (1 - (1 << 30))
    // C++ division truncates toward zero; so does Swift's.
    return Int32(truncatingIfNeeded: (product + nudge) / (1 << 31))
}

/// `x / 2^exponent` rounded to nearest, ties away from zero. gemmlowp's RoundingDivideByPOT.
@inline(__always)
func roundingDivideByPOT(_ x: Int32, _ exponent: Int) -> Int32 {
    let mask = Int32(truncatingIfNeeded: (Int64(1) << exponent) - 1)
    let remainder = x & mask
    let threshold = (mask >> 1) + (x < 0 ? 1 : 0)
    return (x >> Int32(exponent)) &+ (remainder > threshold ? 1 : 0)
}

/// `x × multiplier × 2^(shift − 31)`, rounded: TFLite's MultiplyByQuantizedMultiplier (double rounding).
@inline(__always)
func multiplyByQuantizedMultiplier(_ x: Int32, _ multiplier: Int32, _ shift: Int) -> Int32 {
    let leftShift = shift > 0 ? shift : 0
    let rightShift = shift > 0 ? 0 : -shift
    return roundingDivideByPOT(saturatingRoundingDoublingHighMul(x &* (1 << Int32(leftShift)), multiplier),
                               rightShift)
}

/// `x × multiplier × 2^(shift − 31)` with a single rounding (half up), in 64 bits: the requantization
/// of LiteRT's reference FULLY_CONNECTED (unlike CONV_2D and the elementwise kernels, which round twice).
/// Measured: on every output of the action classifier's dense layers (23,310 values over 121 windows,
/// two models) LiteRT's BUILTIN_REF equals this, and the double rounding differs on 15 of them.
@inline(__always)
func multiplyByQuantizedMultiplierSingleRounding(_ x: Int32, _ multiplier: Int32, _ shift: Int) -> Int32 {
    let totalShift = Int64(31 - shift)
    let product = Int64(x) * Int64(multiplier) + (Int64(1) << (totalShift - 1))
    return Int32(clamping: product >> totalShift)
}

/// A real multiplier as TFLite stores it.
struct QuantizedMultiplier: Sendable, Equatable {
    var multiplier: Int32
    var shift: Int

    /// TFLite's QuantizeMultiplier: frexp, round the mantissa to Q0.31, renormalise 2^31, flush
    /// tiny values to zero. `real` must be finite and non-negative (Prepare checks).
    init(_ real: Double) {
        if real == 0 || !real.isFinite {
            self.multiplier = 0
            self.shift = 0
            return
        }
        var exponent: Int32 = 0
        let fraction = frexp(real, &exponent)
        var fixed = Int64((fraction * Double(Int64(1) << 31)).rounded(.toNearestOrAwayFromZero))
        var shift = Int(exponent)
        if fixed == (Int64(1) << 31) {
            fixed /= 2
            shift += 1
        }
        if shift < -31 {
            shift = 0
            fixed = 0
        }
        self.multiplier = Int32(truncatingIfNeeded: fixed)
        self.shift = shift
    }

    @inline(__always)
    func apply(_ x: Int32) -> Int32 { multiplyByQuantizedMultiplier(x, multiplier, shift) }
}

/// TfLiteRound: round half away from zero.
@inline(__always)
func tfliteRound(_ x: Float) -> Float { x.rounded(.toNearestOrAwayFromZero) }

/// C's float → int32 conversion, made total: NaN gives 0, out-of-range values saturate.
/// (C++ leaves those cases undefined; real inputs never reach them.)
@inline(__always)
func saturatingInt32(_ x: Float) -> Int32 {
    if x.isNaN { return 0 }
    if x >= 2147483647.0 { return Int32.max }
    if x <= -2147483648.0 { return Int32.min }
    return Int32(x)
}

@inline(__always)
func saturatingInt32(_ x: Double) -> Int32 {
    if x.isNaN { return 0 }
    if x >= 2147483647.0 { return Int32.max }
    if x <= -2147483648.0 { return Int32.min }
    return Int32(x)
}

/// The integer range of a quantized type.
struct QuantizedRange: Sendable, Equatable {
    var minimum: Int32
    var maximum: Int32

    static func of(_ type: TensorElementType) -> QuantizedRange {
        switch type {
        case .int8: QuantizedRange(minimum: -128, maximum: 127)
        case .uint8: QuantizedRange(minimum: 0, maximum: 255)
        case .int16: QuantizedRange(minimum: -32768, maximum: 32767)
        default: QuantizedRange(minimum: Int32.min, maximum: Int32.max)
        }
    }

    /// TFLite's CalculateActivationRangeQuantized: the fused activation's bounds quantized with the
    /// output's scale and zero point (`zp + round(f / scale)`, float arithmetic), intersected with
    /// the type's range.
    static func activation(_ activation: FusedActivation, type: TensorElementType, scale: Float, zeroPoint: Int32)
        -> QuantizedRange
    {
        let range = of(type)
        func quantize(_ value: Float) -> Int32 { zeroPoint &+ saturatingInt32(tfliteRound(value / scale)) }
        switch activation {
        case .relu:
            return QuantizedRange(minimum: max(range.minimum, quantize(0)), maximum: range.maximum)
        case .relu6:
            return QuantizedRange(minimum: max(range.minimum, quantize(0)), maximum: min(range.maximum, quantize(6)))
        case .reluN1To1:
            return QuantizedRange(minimum: max(range.minimum, quantize(-1)), maximum: min(range.maximum, quantize(1)))
        default:
            return range
        }
    }

    /// CalculateActivationRange for int32 outputs: the activation's real bounds as integers.
    static func int32Activation(_ activation: FusedActivation) -> QuantizedRange {
        switch activation {
        case .relu: QuantizedRange(minimum: 0, maximum: Int32.max)
        case .relu6: QuantizedRange(minimum: 0, maximum: 6)
        case .reluN1To1: QuantizedRange(minimum: -1, maximum: 1)
        default: QuantizedRange(minimum: Int32.min, maximum: Int32.max)
        }
    }

    @inline(__always)
    func clamp(_ x: Int32) -> Int32 { Swift.min(Swift.max(x, minimum), maximum) }
}

/// The float bounds of a fused activation (GetActivationMinMax).
struct FloatRange: Sendable {
    var minimum: Float
    var maximum: Float

    static func activation(_ activation: FusedActivation) -> FloatRange {
        switch activation {
        case .relu: FloatRange(minimum: 0, maximum: .greatestFiniteMagnitude)
        case .relu6: FloatRange(minimum: 0, maximum: 6)
        case .reluN1To1: FloatRange(minimum: -1, maximum: 1)
        default: FloatRange(minimum: -.greatestFiniteMagnitude, maximum: .greatestFiniteMagnitude)
        }
    }

    /// std::min(std::max(x, lo), hi): NaN compares false and passes through max(x, lo) as x... 
    /// C++ std::max(a, b) returns a when !(a < b); with x = NaN that is x, then min returns x.
    @inline(__always)
    func clamp(_ x: Float) -> Float {
        let low = (x < minimum) ? minimum : x
        return (maximum < low) ? maximum : low
    }
}
