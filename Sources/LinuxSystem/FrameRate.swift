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

    /// "15", "29.97"; a value no rate can have is printed as it is.
    public static func rounded(_ framesPerSecond: Double) -> String {
        guard framesPerSecond.isFinite, abs(framesPerSecond) < 1e15 else { return "\(framesPerSecond)" }
        return framesPerSecond == framesPerSecond.rounded() ? "\(Int(framesPerSecond))" : "\((framesPerSecond * 100).rounded() / 100)"
    }
}
