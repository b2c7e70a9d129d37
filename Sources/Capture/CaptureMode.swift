import LinuxSystem

/// What the pipeline needs from a camera: at least the model's input size, at the action model's
/// frame rate, with optional overrides from the config file.
public struct CaptureRequest: Sendable, Equatable {
    /// The pose model's input width and height (MoveNet Lightning: 192×192). The smallest frame
    /// at least this big is chosen: larger frames only cost conversion time.
    public var minimumWidth: Int
    public var minimumHeight: Int
    /// The action classifier's frame rate: the rate poses must be sampled at.
    public var framesPerSecond: Double
    /// Config overrides (`camera.format`, `camera.width`, `camera.height`); nil means choose.
    public var format: FourCC?
    public var width: Int?
    public var height: Int?

    public init(minimumWidth: Int = 192, minimumHeight: Int = 192, framesPerSecond: Double = 30,
                format: FourCC? = nil, width: Int? = nil, height: Int? = nil) {
        self.minimumWidth = minimumWidth
        self.minimumHeight = minimumHeight
        self.framesPerSecond = framesPerSecond
        self.format = format
        self.width = width
        self.height = height
    }
}

/// The mode chosen for a camera: format, size, the camera's frame interval, and how many camera
/// frames are kept to reach the model's rate.
public struct CaptureMode: Sendable, Equatable, CustomStringConvertible {
    public var fourCC: FourCC
    public var width: Int
    public var height: Int
    /// The interval asked of the camera with `VIDIOC_S_PARM`; nil when the camera lists none
    /// (its default rate is used, and decimation by timestamp still applies).
    public var cameraInterval: FrameInterval?
    /// The action model's rate, which decimation brings the camera's rate down to.
    public var targetFramesPerSecond: Double
    /// Whether the format is emulated by libv4lconvert (costs a full-frame conversion in libv4l2).
    public var isEmulated: Bool

    public init(fourCC: FourCC, width: Int, height: Int, cameraInterval: FrameInterval?,
                targetFramesPerSecond: Double, isEmulated: Bool = false) {
        self.fourCC = fourCC
        self.width = width
        self.height = height
        self.cameraInterval = cameraInterval
        self.targetFramesPerSecond = targetFramesPerSecond
        self.isEmulated = isEmulated
    }

    /// The camera's rate (0 when unknown).
    public var cameraFramesPerSecond: Double { cameraInterval?.framesPerSecond ?? 0 }

    /// Camera frames per kept frame (1 when the camera runs at the model's rate or slower).
    public var decimation: Double {
        let camera = cameraFramesPerSecond
        guard camera > 0, targetFramesPerSecond > 0 else { return 1 }
        return Swift.max(1, camera / targetFramesPerSecond)
    }

    /// Whether the camera can deliver the model's rate (within 1 %).
    public var meetsTargetRate: Bool { cameraInterval == nil || cameraFramesPerSecond >= targetFramesPerSecond * 0.99 }

    /// "YUYV 320x240, camera 30 fps → model 15 fps (keeps 1 in 2.0 by timestamp)".
    public var description: String {
        let camera = cameraInterval.map { "camera \($0) fps" } ?? "camera rate unknown"
        let target = FrameInterval.rounded(targetFramesPerSecond)
        let keep: String
        if !meetsTargetRate {
            keep = "slower than the model's \(target) fps: poses are sampled at the camera's rate"
        } else if decimation < 1.01 {
            keep = "model \(target) fps, keeps every frame"
        } else {
            let ratio = (decimation * 10).rounded() / 10
            keep = "model \(target) fps, keeps 1 in \(ratio) by timestamp"
        }
        return "\(fourCC) \(width)x\(height)\(isEmulated ? " (emulated)" : ""), \(camera), \(keep)"
    }
}

extension FrameInterval {
    /// "30" or "29.97" (any Double: NaN, infinities and huge values are printed as they are).
    static func rounded(_ framesPerSecond: Double) -> String { FrameRate.rounded(framesPerSecond) }

    /// When frame `index` of a stream at this interval is due, in nanoseconds from its start
    /// (exact: no accumulated rounding). A file's interval can be anything up to 2³²−1 s per
    /// frame (Y4M `F1:4294967295`), so the product is formed in 128 bits and saturates at
    /// `Int64.max` (about 292 years) instead of overflowing.
    public func presentationTime(ofFrame index: UInt64) -> Int64 {
        guard denominator != 0 else { return 0 }
        // numerator × 10⁹ < 2³² × 2³⁰ fits in 64 bits; index × that needs up to 128.
        let product = index.multipliedFullWidth(by: UInt64(numerator) * 1_000_000_000)
        let divisor = UInt64(denominator)
        guard product.high < divisor else { return .max }  // the quotient would not fit in 64 bits
        let quotient = divisor.dividingFullWidth(product).quotient
        return quotient > UInt64(Int64.max) ? .max : Int64(quotient)
    }

    /// The interval in nanoseconds (0 when unknown); at most (2³²−1) × 10⁹, which fits.
    public var nanoseconds: Int64 {
        denominator == 0 ? 0 : Int64(numerator) * 1_000_000_000 / Int64(denominator)
    }
}

/// Chooses the capture mode from what a camera offers. Pure, so the rules are unit-tested and
/// `posewatch doctor` shows exactly what `CameraDevice` would ask for.
public enum CaptureModeSelection {
    /// The rules, in order:
    /// 1. only formats posewatch converts (`PixelFormat`), and the config's format if set;
    /// 2. sizes at least the model's input (or exactly the config's size if set); when none is
    ///    big enough, the largest there is;
    /// 3. a rate that meets the model's: its exact rate if offered, else the nearest faster one
    ///    (decimation by timestamp makes up the rest); when none does, the fastest;
    /// 4. cheaper conversion first: native before libv4lconvert-emulated, then the order of
    ///    `FourCC.preferredCaptureFormats` (packed YUV, planar YUV, RGB, MJPEG, grey);
    /// 5. then the smallest size.
    public static func select(from formats: [PixelFormatDescription], request: CaptureRequest) -> CaptureMode? {
        struct Candidate {
            var mode: CaptureMode
            var key: (Int, Int, Int, Int, Int, Double)
        }
        var best: Candidate?
        for format in formats {
            guard PixelFormat(fourCC: format.fourCC) != nil else { continue }
            if let wanted = request.format, wanted != format.fourCC { continue }
            let preference = FourCC.preferredCaptureFormats.firstIndex(of: format.fourCC) ?? FourCC.preferredCaptureFormats.count
            for size in format.frameSizes {
                if let width = request.width, width != size.width { continue }
                if let height = request.height, height != size.height { continue }
                let bigEnough = size.width >= request.minimumWidth && size.height >= request.minimumHeight
                let interval = chooseInterval(size.intervals, framesPerSecond: request.framesPerSecond)
                let mode = CaptureMode(fourCC: format.fourCC, width: size.width, height: size.height,
                                       cameraInterval: interval, targetFramesPerSecond: request.framesPerSecond,
                                       isEmulated: format.isEmulated)
                let area = size.width * size.height
                // Lexicographic: big enough, meets the rate, native, cheap format, small (or, when
                // nothing is big enough, large) size, then fewer wasted frames.
                let key = (bigEnough ? 0 : 1, mode.meetsTargetRate ? 0 : 1, format.isEmulated ? 1 : 0,
                           preference, bigEnough ? area : -area,
                           mode.meetsTargetRate ? mode.decimation : -mode.cameraFramesPerSecond)
                if let current = best, !(key < current.key) { continue }
                best = Candidate(mode: mode, key: key)
            }
        }
        return best?.mode
    }

    /// The interval to ask for: the model's exact rate when listed, else the slowest of the faster
    /// ones, else the fastest there is; nil when the camera lists no intervals.
    public static func chooseInterval(_ intervals: [FrameInterval], framesPerSecond: Double) -> FrameInterval? {
        let valid = intervals.filter { $0.numerator > 0 && $0.denominator > 0 }
        guard !valid.isEmpty else { return nil }
        if let exact = valid.first(where: { abs($0.framesPerSecond - framesPerSecond) <= framesPerSecond * 0.01 }) {
            return exact
        }
        let faster = valid.filter { $0.framesPerSecond > framesPerSecond }
        if let nearestFaster = faster.min(by: { $0.framesPerSecond < $1.framesPerSecond }) { return nearestFaster }
        return valid.max { $0.framesPerSecond < $1.framesPerSecond }
    }
}

/// Keeps frames at a target rate out of a faster stream, by timestamp (not by counting, so
/// dropped and late frames do not shift the rhythm).
///
/// Phase-locked: the next frame is due one target interval after the previous due time; a frame
/// up to a quarter interval early is accepted (jitter), and after a gap the rhythm restarts.
public struct FrameDecimator: Sendable, Equatable {
    /// The target interval in nanoseconds; 0 keeps every frame.
    public let intervalNanoseconds: Int64
    private var nextDue: MonotonicInstant?

    public init(intervalNanoseconds: Int64) {
        self.intervalNanoseconds = intervalNanoseconds
    }

    /// A decimator for a camera running at `cameraFramesPerSecond` feeding a model at
    /// `targetFramesPerSecond`; keeps everything unless the camera is faster.
    public init(cameraFramesPerSecond: Double, targetFramesPerSecond: Double) {
        if cameraFramesPerSecond > targetFramesPerSecond * 1.01, targetFramesPerSecond > 0 {
            // Clamped so an unchecked rate cannot overflow the nanosecond interval.
            self.init(intervalNanoseconds: FrameRate(clamping: targetFramesPerSecond).intervalNanoseconds)
        } else {
            self.init(intervalNanoseconds: 0)
        }
    }

    /// Whether the frame stamped `timestamp` is kept.
    public mutating func accept(_ timestamp: MonotonicInstant) -> Bool {
        guard intervalNanoseconds > 0 else { return true }
        let interval = MonotonicDuration.nanoseconds(intervalNanoseconds)
        guard let due = nextDue else {
            nextDue = timestamp + interval
            return true
        }
        if timestamp < due - .nanoseconds(intervalNanoseconds / 4) { return false }
        nextDue = timestamp >= due + interval ? timestamp + interval : due + interval
        return true
    }

    /// Forgets the rhythm (after the camera was re-opened).
    public mutating func reset() { nextDue = nil }
}
