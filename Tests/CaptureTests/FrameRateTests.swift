import Testing
@testable import Capture
import LinuxSystem

/// Issue 27: rates from files and the command line made `FrameInterval(framesPerSecond:)`,
/// `presentationTime(ofFrame:)` and the decimator trap (NaN, infinities, 1e300, 1e-300, negatives,
/// Y4M `F1:4294967295`).
@Suite struct FrameRateTests {
    @Test("A frame rate is refused when it is NaN, infinite, negative, zero, below 1 or above 240 fps",
          arguments: [Double.nan, .infinity, -.infinity, -1, 0, 1e-300, 0.999, 240.001, 1e300, .greatestFiniteMagnitude])
    func badRatesAreRefused(_ framesPerSecond: Double) {
        #expect(FrameRate(framesPerSecond: framesPerSecond) == nil)
    }

    @Test("Rates from 1 to 240 fps are accepted and give the interval they name")
    func goodRatesGiveTheirInterval() throws {
        let expected: [(Double, UInt32, UInt32)] = [(1, 1, 1), (15, 1, 15), (29.97, 1000, 29970), (240, 1, 240)]
        for (framesPerSecond, numerator, denominator) in expected {
            let rate = try #require(FrameRate(framesPerSecond: framesPerSecond))
            #expect(FrameInterval(rate) == FrameInterval(numerator: numerator, denominator: denominator))
        }
    }

    @Test("An unchecked rate gives an interval inside the supported range instead of trapping",
          arguments: [Double.nan, .infinity, -.infinity, -1, 0, 1e-300, 1e300])
    func uncheckedRatesAreClamped(_ framesPerSecond: Double) {
        let interval = FrameInterval(framesPerSecond: framesPerSecond)
        #expect(FrameRate.supported.contains(interval.framesPerSecond))
    }

    @Test("Presentation times of a Y4M F1:4294967295 stream saturate instead of overflowing")
    func presentationTimesSaturate() {
        let slowest = FrameInterval(numerator: UInt32.max, denominator: 1)
        #expect(slowest.presentationTime(ofFrame: 1) == Int64(UInt32.max) * 1_000_000_000)
        #expect(slowest.presentationTime(ofFrame: 3) == .max)
        #expect(FrameInterval(numerator: 1, denominator: 30).presentationTime(ofFrame: .max) == .max)
        #expect(FrameInterval(numerator: 1, denominator: 0).presentationTime(ofFrame: 5) == 0)
    }

    @Test("Presentation times stay exact where they fit")
    func presentationTimesAreExact() {
        let ntsc = FrameInterval(numerator: 1001, denominator: 30000)
        #expect(ntsc.presentationTime(ofFrame: 1_000_000) == 1_000_000 * 1001 * 1_000_000_000 / 30000)
        #expect(FrameInterval(numerator: 1, denominator: 15).presentationTime(ofFrame: 15) == 1_000_000_000)
    }

    @Test("A decimator for an unchecked tiny target rate keeps one frame a second instead of trapping")
    func decimatorClampsItsTarget() {
        #expect(FrameDecimator(cameraFramesPerSecond: 30, targetFramesPerSecond: 1e-300).intervalNanoseconds == 1_000_000_000)
        #expect(FrameDecimator(cameraFramesPerSecond: 30, targetFramesPerSecond: .nan).intervalNanoseconds == 0)
    }

    @Test("A capture mode with an unusable target rate still describes itself")
    func descriptionsOfBadRatesDoNotTrap() {
        for target in [Double.nan, .infinity, 1e300] {
            let mode = CaptureMode(fourCC: .yuyv, width: 640, height: 480, cameraInterval: nil, targetFramesPerSecond: target)
            #expect(mode.description.contains("YUYV 640x480"))
        }
    }
}
