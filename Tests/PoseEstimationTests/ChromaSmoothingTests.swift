import Testing
@testable import PoseEstimation

/// A 32×32 RGB picture: a grey background, a darker "person" in the middle, a black bar on the
/// left, and colour noise of ± `noise` (a fixed pseudo-random pattern) on everything but the bar.
private func picture(noise: Int) -> [UInt8] {
    var pixels = [UInt8](repeating: 0, count: 32 * 32 * 3)
    var state: UInt32 = 12345
    for y in 0..<32 {
        for x in 4..<32 {
            let base = (12...20).contains(x) && (6...26).contains(y) ? 60 : 120
            for channel in 0..<3 {
                state = state &* 1_103_515_245 &+ 12345
                let jitter = noise == 0 ? 0 : Int(state >> 16) % (2 * noise + 1) - noise
                pixels[(y * 32 + x) * 3 + channel] = UInt8(max(1, min(255, base + (channel == 1 ? 0 : jitter))))
            }
        }
    }
    return pixels
}

@Suite struct ChromaSmoothingTests {
    @Test func aCleanPictureIsLeftExactlyAsItIs() {
        var smoothing = ChromaSmoothing(side: 32)
        var pixels = picture(noise: 1)
        let before = pixels
        let applied = pixels.withUnsafeMutableBufferPointer { smoothing.apply(to: $0.baseAddress!) }
        #expect(!applied)
        #expect(pixels == before)
    }

    @Test func noisyColourIsSmoothedAndTheBarStaysBlack() {
        var smoothing = ChromaSmoothing(side: 32)
        var pixels = picture(noise: 30)
        let noiseBefore = pixels.withUnsafeBufferPointer { smoothing.colourNoise($0.baseAddress!) }
        #expect(noiseBefore > smoothing.noisyAbove)
        let applied = pixels.withUnsafeMutableBufferPointer { smoothing.apply(to: $0.baseAddress!) }
        #expect(applied)
        let noiseAfter = pixels.withUnsafeBufferPointer { smoothing.colourNoise($0.baseAddress!) }
        #expect(noiseAfter < noiseBefore / 3, "colour noise \(noiseBefore) → \(noiseAfter)")
        for y in 0..<32 { for x in 0..<4 { #expect(pixels[(y * 32 + x) * 3] == 0 && pixels[(y * 32 + x) * 3 + 1] == 0) } }
        // The person stays darker than the background: the brightness's edges survive.
        let person = Int(pixels[(16 * 32 + 16) * 3 + 1]), background = Int(pixels[(16 * 32 + 28) * 3 + 1])
        #expect(background - person > 40)
    }
}
