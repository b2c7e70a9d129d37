import LinuxSystem

/// The pixel layouts posewatch converts into the pose model's input itself.
public enum PixelFormat: Sendable, Hashable, CustomStringConvertible {
    /// Packed 4:2:2, `Y0 U Y1 V` (what most UVC webcams send uncompressed).
    case yuyv
    /// Packed 4:2:2, `U Y0 V Y1`.
    case uyvy
    /// Packed 4:2:2, `Y0 V Y1 U`.
    case yvyu
    /// 4:2:0, a luma plane then one interleaved `U V` plane.
    case nv12
    /// 4:2:0, a luma plane then one interleaved `V U` plane.
    case nv21
    /// 4:2:0 planar (I420): luma, then U, then V, chroma at half width and height.
    case yuv420
    /// 4:2:0 planar with V before U (YV12).
    case yvu420
    /// 4:2:2 planar: luma, then U and V at half width and full height (Y4M `C422`).
    case yuv422Planar
    /// Packed 8-bit R G B.
    case rgb24
    /// Packed 8-bit B G R.
    case bgr24
    /// 8-bit luminance only.
    case grey
    /// One JPEG image per frame (Motion-JPEG).
    case mjpeg

    /// The V4L2 pixel format for a code; nil for formats posewatch cannot convert.
    public init?(fourCC: FourCC) {
        switch fourCC {
        case .yuyv: self = .yuyv
        case .uyvy: self = .uyvy
        case .yvyu: self = .yvyu
        case .nv12: self = .nv12
        case .nv21: self = .nv21
        case .yuv420: self = .yuv420
        case .yvu420: self = .yvu420
        case .yuv422Planar: self = .yuv422Planar
        case .rgb24: self = .rgb24
        case .bgr24: self = .bgr24
        case .grey: self = .grey
        case .mjpeg, .jpeg: self = .mjpeg
        default: return nil
        }
    }

    /// The V4L2 code of this layout.
    public var fourCC: FourCC {
        switch self {
        case .yuyv: .yuyv
        case .uyvy: .uyvy
        case .yvyu: .yvyu
        case .nv12: .nv12
        case .nv21: .nv21
        case .yuv420: .yuv420
        case .yvu420: .yvu420
        case .yuv422Planar: .yuv422Planar
        case .rgb24: .rgb24
        case .bgr24: .bgr24
        case .grey: .grey
        case .mjpeg: .mjpeg
        }
    }

    public var description: String { fourCC.description }

    /// The quantisation range of Y'CbCr samples in this layout unless a source says otherwise:
    /// JPEG is full range (0…255), camera and video Y'CbCr is limited range (16…235/240).
    public var defaultColorRange: ColorRange { self == .mjpeg ? .full : .limited }
}

/// How Y'CbCr samples are quantised (BT.601 matrix either way).
public enum ColorRange: Sendable, Hashable {
    /// Y' 16…235, Cb/Cr 16…240 ("TV range"): cameras' raw YUV, most video.
    case limited
    /// 0…255 for all three ("PC range"): JPEG/JFIF, ffmpeg's `yuvj*` formats.
    case full
}

/// Where the pixels of one frame are, as the driver or file describes them.
public struct FrameLayout: Sendable, Hashable, CustomStringConvertible {
    public var pixelFormat: PixelFormat
    public var width: Int
    public var height: Int
    /// Bytes from one row to the next in the first plane (V4L2's `bytesperline`; for planar
    /// formats chroma rows are half of it, as V4L2 defines).
    public var bytesPerLine: Int
    public var colorRange: ColorRange

    /// A layout; `bytesPerLine` defaults to the tightly packed row.
    public init(pixelFormat: PixelFormat, width: Int, height: Int, bytesPerLine: Int? = nil, colorRange: ColorRange? = nil) {
        self.pixelFormat = pixelFormat
        self.width = width
        self.height = height
        self.bytesPerLine = bytesPerLine ?? Self.packedBytesPerLine(pixelFormat, width: width)
        self.colorRange = colorRange ?? pixelFormat.defaultColorRange
    }

    static func packedBytesPerLine(_ format: PixelFormat, width: Int) -> Int {
        switch format {
        case .yuyv, .uyvy, .yvyu: width * 2
        case .rgb24, .bgr24: width * 3
        case .nv12, .nv21, .yuv420, .yvu420, .yuv422Planar, .grey: width
        case .mjpeg: 0
        }
    }

    /// Bytes between chroma rows of planar formats.
    var chromaBytesPerLine: Int { bytesPerLine / 2 + bytesPerLine % 2 }
    var chromaHeight420: Int { height / 2 + height % 2 }

    /// The largest width or height posewatch takes from a file or a JPEG header: 8192 (a 67-
    /// megapixel frame is plenty; the config's camera size and CV4L2's PW_JPEG_MAXIMUM_DIMENSION
    /// stop at the same number). Checked before a layout is built from outside numbers, so
    /// buffer sizes stay far from overflow.
    public static let maximumDimension = 8192

    /// The frame sizes file sources accept, for each of width and height.
    public static let dimensionRange = 1...maximumDimension

    /// The fewest bytes a complete uncompressed frame occupies; shorter frames are broken.
    /// 0 for MJPEG, whose frames are checked by their markers instead.
    ///
    /// Saturates at `Int.max` instead of trapping when a driver's `bytesperline` and height
    /// multiply past it: no real buffer is that large, so such a frame is simply broken.
    public var minimumByteCount: Int {
        let luma = Self.saturating(bytesPerLine, height)
        switch pixelFormat {
        case .yuyv, .uyvy, .yvyu, .rgb24, .bgr24, .grey: return luma
        case .nv12, .nv21: return Self.saturating(luma, plus: Self.saturating(bytesPerLine, chromaHeight420))
        case .yuv420, .yvu420: return Self.saturating(luma, plus: Self.saturating(2, Self.saturating(chromaBytesPerLine, chromaHeight420)))
        case .yuv422Planar: return Self.saturating(luma, plus: Self.saturating(2, Self.saturating(chromaBytesPerLine, height)))
        case .mjpeg: return 0
        }
    }

    /// `a × b` for sizes (never negative in a valid layout; a negative factor counts as 0).
    static func saturating(_ a: Int, _ b: Int) -> Int {
        let (product, overflow) = Swift.max(a, 0).multipliedReportingOverflow(by: Swift.max(b, 0))
        return overflow ? .max : product
    }

    static func saturating(_ a: Int, plus b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }

    public var description: String { "\(pixelFormat) \(width)x\(height)" }
}

/// One captured frame, lent to the frame loop for the duration of a call.
///
/// Noncopyable and only ever passed `borrowing`, so its bytes (a driver buffer or a file mapping)
/// cannot outlive the call that lent them: the buffer goes back to the driver right after.
public struct Frame: ~Copyable {
    /// The frame's bytes (`bytesused` of the driver buffer).
    public let bytes: UnsafeRawBufferPointer
    public let layout: FrameLayout
    /// When the frame was captured: the driver's CLOCK_MONOTONIC stamp, or the file's timeline.
    public let timestamp: MonotonicInstant
    /// The driver's frame counter (gaps mean frames the driver dropped), or the file's frame index.
    public let sequence: UInt64

    public init(bytes: UnsafeRawBufferPointer, layout: FrameLayout, timestamp: MonotonicInstant, sequence: UInt64) {
        self.bytes = bytes
        self.layout = layout
        self.timestamp = timestamp
        self.sequence = sequence
    }
}

/// What the frame loop's closure says about a frame it was lent.
public enum FrameUse: Sendable, Equatable {
    /// Converted (or otherwise consumed).
    case used
    /// Turned out broken (a JPEG that does not decode): the source counts it as broken.
    case broken
}

/// What one `nextFrame` call did. Copyable and allocation-free in the common cases, so the loop
/// can switch over it every frame.
public enum FrameOutcome: Sendable, Equatable {
    /// A frame was lent to the closure and used.
    case frame
    /// A frame was lent to the closure and it reported it broken.
    case brokenFrame
    /// The source woke up but had nothing to deliver: every ready frame was late, broken, or
    /// decimated away to keep the model's frame rate.
    case nothingNew
    /// Nothing arrived within the timeout (or the camera is gone and not back yet).
    case timedOut
    /// The camera went away (unplugged, I/O errors, stalled) or could not be opened: reported once
    /// per episode; the source keeps retrying with back-off.
    case cameraLost(CaptureError)
    /// The camera is streaming again after `cameraLost`.
    case cameraBack
    /// A file or finite synthetic source has no more frames.
    case endOfStream
}

/// Counters a source keeps, for the journal and the benchmark. Plain integers: no allocation.
public struct CaptureStatistics: Sendable, Equatable {
    /// Frames lent to the loop.
    public var delivered = 0
    /// Frames that were ready but older than a newer ready frame: re-queued unseen (drain-to-newest).
    public var droppedLate = 0
    /// Frames the driver skipped (gaps in its sequence numbers), usually because every buffer was busy.
    public var droppedByDriver = 0
    /// Frames skipped to bring the camera's rate down to the model's (decimation by timestamp).
    public var decimated = 0
    /// Frames skipped as broken: error flag, too short, truncated or undecodable JPEG.
    public var broken = 0
    /// Times the camera was lost (each loss episode once).
    public var lossEpisodes = 0
    /// Times the camera was opened again after a loss.
    public var recoveries = 0

    public init() {}

    /// All frames that were dropped before the loop saw them.
    public var dropped: Int { droppedLate + droppedByDriver }
}

/// Why a camera or file source cannot deliver frames.
public enum CaptureError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A system call or ioctl failed: `VIDIOC_DQBUF /dev/video0: No such device`.
    case systemCall(call: String, subject: String, errno: Errno)
    /// The node is not a streaming video-capture device.
    case notACamera(path: String, reason: String)
    /// No format/size the camera offers can be converted into the model's input.
    case noUsableMode(path: String)
    /// The camera stopped delivering frames for longer than the stall timeout.
    case stalled(path: String, milliseconds: Int)
    /// The driver reported a source change (new resolution, signal): the device is re-opened
    /// and the mode negotiated again.
    case sourceChanged(path: String)
    /// A file that is not what it claims to be (bad Y4M header, no JPEG in an MJPEG file).
    case invalidFile(path: String, reason: String)

    /// One line naming the device or file (escaped: the path is the user's) and what went wrong.
    /// `reason` is posewatch's own text, with whatever it repeats from the file already escaped.
    public var description: String {
        switch self {
        case .systemCall(let call, let subject, let errno): "\(call) \(MessageExcerpt.path(subject)): \(errno)"
        case .notACamera(let path, let reason): "\(MessageExcerpt.path(path)) is not a usable camera: \(reason)"
        case .noUsableMode(let path): "\(MessageExcerpt.path(path)) offers no format posewatch can convert"
        case .stalled(let path, let milliseconds): "\(MessageExcerpt.path(path)) delivered no frame for \(milliseconds) ms"
        case .sourceChanged(let path): "\(MessageExcerpt.path(path)) changed its source format; restarting capture"
        case .invalidFile(let path, let reason): "\(MessageExcerpt.path(path)): \(reason)"
        }
    }
}

/// A source of frames with the camera's interface: camera, Y4M file, MJPEG file, synthetic.
///
/// `nextFrame` waits up to `timeoutMilliseconds`, lends at most one frame to `body` (borrowed, so
/// the bytes cannot escape the call), takes it back, and says what happened.
public protocol FrameSource: ~Copyable {
    /// The format and size of the frames this source delivers (for a camera: the negotiated mode's).
    var layout: FrameLayout? { get }
    /// Counters since the source was created.
    var statistics: CaptureStatistics { get }
    /// Waits for the next frame and lends it to `body`. See `FrameOutcome`.
    mutating func nextFrame(timeoutMilliseconds: Int32, _ body: (borrowing Frame) -> FrameUse) -> FrameOutcome
}

/// How a file or synthetic source spaces its frames.
public enum Pacing: Sendable, Equatable {
    /// Each frame is delivered when its timestamp is due, as a camera would (demo, soak tests).
    case realTime
    /// Frames are delivered as fast as the loop takes them, still stamped with the file's
    /// timeline (replay and tests: results do not depend on the machine's speed).
    case asFastAsPossible
}
