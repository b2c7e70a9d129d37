/// A frame rate posewatch works at: a finite number of frames per second in `FrameRate.supported`.
///
/// Rates come from outside (the command line, a classifier's metadata, a config file) and are
/// turned into integer intervals, slot numbers and nanoseconds; a NaN, infinite, negative or
/// absurd rate made those conversions trap. Holding a `FrameRate` means the value was checked.
public struct FrameRate: Sendable, Hashable, CustomStringConvertible {
    /// The rates posewatch accepts, in frames per second. 1: below that, a pose window of a few
    /// seconds holds only a couple of poses and no exercise can be recognised. 240: the fastest
    /// camera modes sold (UVC high-speed modes); the classifier resamples by timestamp, so a
    /// faster stream would only be thinned out again.
    public static let supported: ClosedRange<Double> = 1...240

    /// "1 to 240", for messages.
    public static let supportedDescription = "\(rounded(supported.lowerBound)) to \(rounded(supported.upperBound))"

    /// Frames per second, within `supported`.
    public let framesPerSecond: Double

    /// The rate, or nil when `framesPerSecond` is NaN, infinite or outside `supported`.
    public init?(framesPerSecond: Double) {
        guard Self.supported.contains(framesPerSecond) else { return nil }
        self.framesPerSecond = framesPerSecond
    }

    /// The nearest supported rate: values outside `supported` are moved to its nearer end, NaN to
    /// the lowest. For code paths that must not fail on a value their caller should have checked.
    public init(clamping framesPerSecond: Double) {
        if framesPerSecond.isNaN {
            self.framesPerSecond = Self.supported.lowerBound
        } else {
            self.framesPerSecond = Swift.min(Swift.max(framesPerSecond, Self.supported.lowerBound), Self.supported.upperBound)
        }
    }

    /// The time between two frames, in nanoseconds (at most 1 s, so it always fits).
    public var intervalNanoseconds: Int64 { Int64((1e9 / framesPerSecond).rounded()) }

    /// "15" or "29.97".
    public var description: String { Self.rounded(framesPerSecond) }

    static func rounded(_ framesPerSecond: Double) -> String { FrameInterval.rounded(framesPerSecond) }
}

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
