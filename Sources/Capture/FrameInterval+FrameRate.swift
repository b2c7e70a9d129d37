import LinuxSystem

extension FrameInterval {
    /// The interval for a frame rate, as a small fraction (`30` → 1/30, `29.97` → 1000/29970).
    public init(_ rate: FrameRate) {
        let framesPerSecond = rate.framesPerSecond
        // Within FrameRate.supported both denominators are at most 240 000: no conversion traps.
        if framesPerSecond == framesPerSecond.rounded() {
            self.init(numerator: 1, denominator: UInt32(framesPerSecond))
        } else {
            self.init(numerator: 1000, denominator: UInt32((framesPerSecond * 1000).rounded()))
        }
    }

    /// The interval for a frame rate that the caller has not checked: clamped into
    /// `FrameRate.supported` (see `FrameRate(clamping:)`), so no value traps. Check rates from
    /// outside with `FrameRate(framesPerSecond:)` and refuse bad ones before they get here.
    public init(framesPerSecond: Double) {
        self.init(FrameRate(clamping: framesPerSecond))
    }
}
