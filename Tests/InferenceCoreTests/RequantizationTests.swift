import Testing
@testable import InferenceCore

/// The two requantization roundings TFLite uses. LiteRT's reference FULLY_CONNECTED rounds once; its
/// CONV_2D (and posewatch's, bit-exact on MoveNet) rounds twice. The case is a real one: the action
/// classifier's first dense layer, output channel 30, on an empty window, where LiteRT's BUILTIN_REF
/// writes 1 (before the zero point) and the double rounding would write 2.
@Suite struct RequantizationTests {
    @Test func fullyConnectedRoundsOnceWhereTheDoubleRoundingGoesUp() {
        // 1029 × 1601750647 × 2^(-9-31) = 1.49905…: one rounding gives 1.
        #expect(multiplyByQuantizedMultiplierSingleRounding(1029, 1_601_750_647, -9) == 1)
        // twice: 1029 × 1601750647 / 2^31 = 767.52 → 768, then 768 / 2^9 = 1.5 → 2.
        #expect(multiplyByQuantizedMultiplier(1029, 1_601_750_647, -9) == 2)
    }

    @Test func bothRoundingsAgreeAwayFromTiesAndOnNegativeValues() {
        for x: Int32 in [-100_000, -1029, -1, 0, 1, 1000, 77_777] {
            let exact = Double(x) * 1_601_750_647 / Double(1 << 40)
            let single = multiplyByQuantizedMultiplierSingleRounding(x, 1_601_750_647, -9)
            #expect(abs(Double(single) - exact) <= 0.5, "\(x): \(single) vs \(exact)")
        }
        // a left shift (shift > 0) keeps the product exact in 64 bits
        #expect(multiplyByQuantizedMultiplierSingleRounding(3, 1 << 30, 2) == 6)
    }
}
