import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// Spaces frames by their timestamps for `.realTime` pacing: frame time t is due at the
/// wall-clock start + t. Sleeps at most the caller's timeout.
struct Pacer {
    let pacing: Pacing
    var start: MonotonicInstant?

    init(_ pacing: Pacing) { self.pacing = pacing }

    /// Whether the frame at `presentation` (ns from the stream's start) may be delivered now,
    /// after waiting up to `timeoutMilliseconds`.
    mutating func waitUntilDue(_ presentation: Int64, timeoutMilliseconds: Int32) -> Bool {
        guard pacing == .realTime else { return true }
        let now = MonotonicInstant.now()
        guard let start else {
            self.start = now - .nanoseconds(presentation)
            return true
        }
        let wait = (start + .nanoseconds(presentation)) - now
        if wait <= .zero { return true }
        let limit = MonotonicDuration.milliseconds(Int64(Swift.max(timeoutMilliseconds, 0)))
        var request = Swift.min(wait, limit).timeSpecification
        var remaining = timespec()
        while nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
        return wait <= limit
    }

    /// Real-time pacing only: whether the frame after this one is already due, so this one is
    /// late and is dropped like a camera's stale buffer (the loop never works through a backlog).
    func isSuperseded(byFrameAt nextPresentation: Int64) -> Bool {
        guard pacing == .realTime, let start else { return false }
        return MonotonicInstant.now() >= start + .nanoseconds(nextPresentation)
    }
}

/// A Y4M file (`ffmpeg -f yuv4mpegpipe`, `.y4m`), delivered frame by frame.
///
/// Reads 4:2:0 (`C420jpeg`, `C420mpeg2`, `C420paldv`, `C420`; the chroma siting is ignored,
/// chroma is taken from each pixel's own site), 4:2:2 (`C422`) and `Cmono`, in the range
/// `XCOLORRANGE` says (limited when absent). Timestamps come from the header's frame rate
/// (`F30000:1001`): frame n is stamped n × interval. The header's numbers are checked before
/// anything is sized from them: width and height 1…8192, a frame rate of 1…240 per second.
///
/// Frames are read with `pread` into one buffer of one frame's size, allocated when the source
/// is opened (see `FileWindow`): memory does not grow with the clip, and delivering a frame
/// allocates nothing. Owns the file and the buffer.
public struct Y4MFileSource: ~Copyable, FrameSource {
    var window: FileWindow
    public let path: String
    let frameLayout: FrameLayout
    /// The frame interval from the header.
    public let frameInterval: FrameInterval
    let frameByteCount: Int
    /// Frames past this many cannot be stamped in 64-bit nanoseconds (85 hours at 30000:1001):
    /// the stream ends there.
    let presentableFrames: UInt64
    var position: Int
    var index: UInt64 = 0
    var pacer: Pacer
    public private(set) var statistics = CaptureStatistics()

    public var layout: FrameLayout? { frameLayout }

    /// The longest stream header read: ffmpeg writes about 60 bytes; the rest allows comments.
    static let headerLimit = 64 * 1024
    /// The longest `FRAME` line (its optional parameters included).
    static let frameLineLimit = 1024
    /// The frame rates a header may give, in frames per second.
    public static let framesPerSecondRange: ClosedRange<UInt64> = 1...240

    /// Opens `path` (a regular file; see `OwnedFileDescriptor.openRegularFile`) and parses its
    /// stream header; a header number out of range is refused with a reason naming its token.
    public init(path: String, pacing: Pacing = .asFastAsPossible) throws(CaptureError) {
        var window: FileWindow
        do throws(SystemCallError) {
            window = try FileWindow(path: path, capacity: Self.headerLimit, maximumCapacity: .max)
        } catch {
            throw CaptureError(opening: error)
        }
        let bytes = window.bytes(at: 0, atLeast: Self.headerLimit)
        guard let headerEnd = bytes.firstIndex(of: UInt8(ascii: "\n")) else {
            throw CaptureError.invalidFile(path: path, reason: bytes.starts(with: "YUV4MPEG2 ".utf8) && bytes.count >= Self.headerLimit
                                           ? "the Y4M stream header runs past 64 KiB" : "no Y4M stream header")
        }
        let header = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<headerEnd]), as: UTF8.self)
        let tokens = header.split(separator: " ")
        guard tokens.first == "YUV4MPEG2" else {
            throw CaptureError.invalidFile(path: path, reason: "not a Y4M file (no YUV4MPEG2 signature)")
        }
        var width: Int?, height: Int?
        var interval = FrameInterval(numerator: 1, denominator: 30)
        var colorspace = "420jpeg"
        var range = ColorRange.limited
        for token in tokens.dropFirst() {
            let value = token.dropFirst()
            switch token.first {
            case "W", "H":
                guard let number = Int(value), FrameLayout.dimensionRange.contains(number) else {
                    let what = token.first == "W" ? "width" : "height"
                    throw CaptureError.invalidFile(
                        path: path, reason: "Y4M header \(MessageExcerpt.plain(String(token))): the frame \(what) must be 1 to \(FrameLayout.maximumDimension) pixels")
                }
                if token.first == "W" { width = number } else { height = number }
            case "F":
                guard let parsed = Self.frameInterval(value) else {
                    throw CaptureError.invalidFile(
                        path: path, reason: "Y4M header \(MessageExcerpt.plain(String(token))): the frame rate must be 1 to 240 frames per second, written F<rate>:<scale> (F30000:1001)")
                }
                interval = parsed
            case "C": colorspace = String(value)
            case "X" where value == "COLORRANGE=FULL": range = .full
            default: break
            }
        }
        guard let width, let height else {
            throw CaptureError.invalidFile(path: path, reason: "Y4M header lacks a frame size")
        }
        let format: PixelFormat
        switch colorspace {
        case "420jpeg", "420mpeg2", "420paldv", "420": format = .yuv420
        case "422": format = .yuv422Planar
        case "mono": format = .grey
        default: throw CaptureError.invalidFile(path: path, reason: "Y4M colour space C\(MessageExcerpt.plain(colorspace)) is not supported (4:2:0, 4:2:2 and mono are)")
        }
        // At most 8192 × 8192 × 2 bytes: the sizes are checked above, so this cannot overflow.
        let layout = FrameLayout(pixelFormat: format, width: width, height: height, bytesPerLine: width, colorRange: range)
        self.frameByteCount = layout.minimumByteCount
        // One frame with its FRAME line: the only buffer the source reads through, sized now.
        // Never more than the file: a 60-byte file declaring 8192x8192 frames gets no 100 MB.
        window.maximumCapacity = Swift.min(Self.frameLineLimit + frameByteCount, window.maximumCapacity)
        window.reserve(window.maximumCapacity)
        self.window = window
        self.path = path
        self.frameLayout = layout
        self.frameInterval = interval
        self.presentableFrames = interval.presentableFrameCount
        self.position = headerEnd + 1
        self.pacer = Pacer(pacing)
    }

    /// The interval from an `F<rate>:<scale>` value, reduced; nil unless both are 32-bit numbers
    /// and the rate is within `framesPerSecondRange` (F0:1, F1:0 and F1:4294967295 are not).
    static func frameInterval(_ value: Substring) -> FrameInterval? {
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let rate = UInt32(parts[0]), let scale = UInt32(parts[1]), scale > 0 else { return nil }
        // rate / scale within the range, compared in 64 bits: 240 × UInt32.max fits.
        guard UInt64(rate) >= framesPerSecondRange.lowerBound * UInt64(scale),
              UInt64(rate) <= framesPerSecondRange.upperBound * UInt64(scale) else { return nil }
        var (a, b) = (rate, scale)
        while b != 0 { (a, b) = (b, a % b) }
        return FrameInterval(numerator: scale / a, denominator: rate / a)
    }


    /// What is at a `FRAME` line.
    enum FrameLocation {
        /// A whole frame whose data starts at this file offset.
        case complete(dataStart: Int)
        /// A FRAME line whose data (or the line's end) runs past the end of the file.
        case truncated
        /// No FRAME line: the end of the stream.
        case none
    }

    /// Reads the `FRAME` line at `position` and, with it, the frame's data into the window.
    mutating func locateFrame(at position: Int) -> FrameLocation {
        let bytes = window.bytes(at: position, atLeast: Self.frameLineLimit + frameByteCount)
        // Byte by byte: generic collection calls (starts(with:), prefix) allocate in debug builds,
        // and the per-frame path is held to zero allocations.
        guard bytes.count >= 6, bytes[0] == UInt8(ascii: "F"), bytes[1] == UInt8(ascii: "R"), bytes[2] == UInt8(ascii: "A"),
              bytes[3] == UInt8(ascii: "M"), bytes[4] == UInt8(ascii: "E") else { return .none }
        var lineEnd = 5
        let lineLimit = Swift.min(bytes.count, Self.frameLineLimit)
        while lineEnd < lineLimit && bytes[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
        guard lineEnd < lineLimit else { return .truncated }
        let dataStart = lineEnd + 1
        return dataStart + frameByteCount <= bytes.count ? .complete(dataStart: position + dataStart) : .truncated
    }

    public mutating func nextFrame(timeoutMilliseconds: Int32, _ body: (borrowing Frame) -> FrameUse) -> FrameOutcome {
        guard index < presentableFrames else { return .endOfStream }
        var dataStart: Int
        switch locateFrame(at: position) {
        case .none:
            return .endOfStream
        case .truncated:
            // A truncated last frame: broken, and the end.
            statistics.broken += 1
            position = window.fileSize
            return .endOfStream
        case .complete(let start):
            dataStart = start
        }
        // Real time and late: skip to the newest due frame, counting the skipped ones as dropped.
        while index + 1 < presentableFrames,
              pacer.isSuperseded(byFrameAt: frameInterval.presentationTime(ofFrame: index + 1)),
              case .complete(let next) = locateFrame(at: dataStart + frameByteCount) {
            statistics.droppedLate += 1
            index += 1
            dataStart = next
        }
        let presentation = frameInterval.presentationTime(ofFrame: index)
        guard pacer.waitUntilDue(presentation, timeoutMilliseconds: timeoutMilliseconds) else { return .timedOut }
        // The chosen frame is still in the window unless a look at the next one replaced it.
        let bytes = window.bytes(at: dataStart, atLeast: frameByteCount)
        guard bytes.count >= frameByteCount else {
            // The file shrank under us: the end.
            statistics.broken += 1
            position = window.fileSize
            return .endOfStream
        }
        let frame = Frame(bytes: UnsafeRawBufferPointer(start: bytes.baseAddress, count: frameByteCount),
                          layout: frameLayout, timestamp: MonotonicInstant(nanoseconds: presentation), sequence: index)
        position = dataStart + frameByteCount
        index += 1
        if body(frame) == .broken {
            statistics.broken += 1
            return .brokenFrame
        }
        statistics.delivered += 1
        return .frame
    }

    /// Bytes of file data the source holds in memory: one frame and its FRAME line, whatever
    /// the clip's length.
    public var bufferedByteCount: Int { window.capacity }
}

extension FrameInterval {
    /// How many frames can be stamped before `presentationTime(ofFrame:)` would pass Int64's
    /// nanoseconds (9.2 million at 30000:1001); file sources end their stream there.
    var presentableFrameCount: UInt64 {
        numerator == 0 ? .max : UInt64(Int64.max / (Int64(numerator) * 1_000_000_000))
    }
}

extension CaptureError {
    /// The error for a file source's path that could not be opened: a refused non-regular file
    /// is an invalid file (`/tmp/x: is a FIFO, not a regular file; …`), anything else the call's.
    init(opening error: SystemCallError) {
        if let explanation = error.explanation {
            self = .invalidFile(path: error.subject, reason: explanation)
        } else {
            self = .systemCall(call: error.call, subject: error.subject, errno: error.errno)
        }
    }
}

/// A Motion-JPEG file: JPEG images back to back (`ffmpeg -f mjpeg`, `.mjpeg`).
///
/// Image boundaries are found by walking JPEG marker segments (not by searching for FF D9, which
/// can appear inside an embedded thumbnail). The file carries no timing, so frames are stamped
/// at `framesPerSecond`. Images are read with `pread` into one buffer (see `FileWindow`) that
/// grows only for an image larger than any before, up to `maximumImageByteCount`; decoding
/// happens in `FrameConverter`. A damaged or oversized image is skipped and counted; the stream
/// continues at the next start-of-image marker. Owns the file and the buffer.
public struct MJPEGFileSource: ~Copyable, FrameSource {
    var window: FileWindow
    public let path: String
    let frameLayout: FrameLayout
    public let frameInterval: FrameInterval
    let presentableFrames: UInt64
    var position = 0
    var index: UInt64 = 0
    var pacer: Pacer
    public private(set) var statistics = CaptureStatistics()

    public var layout: FrameLayout? { frameLayout }

    /// The largest JPEG image read (a 4K camera's MJPEG frame is 1–2 MB); larger ones are broken.
    public static let maximumImageByteCount = 32 << 20

    /// Opens `path` (a regular file only); the frame size is read from the first image's header
    /// and must be within 8192×8192, and its colour space one libjpeg decodes to RGB (not CMYK
    /// or YCCK). Later images of another size are broken frames (`FrameConverter`).
    public init(path: String, framesPerSecond: Double = 30, pacing: Pacing = .asFastAsPossible) throws(CaptureError) {
        var window: FileWindow
        do throws(SystemCallError) {
            window = try FileWindow(path: path, capacity: 1 << 20, maximumCapacity: Self.maximumImageByteCount)
        } catch {
            throw CaptureError(opening: error)
        }
        guard case .image(let first, let end) = Self.locateImage(in: &window, from: 0) else {
            throw CaptureError.invalidFile(path: path, reason: "no readable JPEG image")
        }
        let image = window.bytes(at: first, atLeast: end - first)
        guard image.count >= end - first,
              let header = JPEGDecoder().header(of: UnsafeRawBufferPointer(rebasing: image[0..<(end - first)])) else {
            throw CaptureError.invalidFile(path: path, reason: "no readable JPEG image")
        }
        let size = (width: header.width, height: header.height)
        guard FrameLayout.dimensionRange.contains(size.width), FrameLayout.dimensionRange.contains(size.height) else {
            throw CaptureError.invalidFile(
                path: path, reason: "the first JPEG image is \(size.width)x\(size.height); posewatch reads up to \(FrameLayout.maximumDimension)x\(FrameLayout.maximumDimension)")
        }
        // libjpeg converts no CMYK or YCCK (Adobe) JPEG to RGB: every frame would be refused.
        guard header.colorSpace.isDecodable else {
            throw CaptureError.invalidFile(
                path: path, reason: "the first JPEG image is \(header.colorSpace.rawValue), which posewatch cannot decode; convert the clip to YCbCr with 'ffmpeg -i CLIP -pix_fmt yuvj420p -f mjpeg clip.mjpeg'")
        }
        self.window = window
        self.path = path
        self.frameLayout = FrameLayout(pixelFormat: .mjpeg, width: size.width, height: size.height)
        self.frameInterval = FrameInterval(framesPerSecond: framesPerSecond)
        self.presentableFrames = frameInterval.presentableFrameCount
        self.position = first
        self.pacer = Pacer(pacing)
    }

    /// Where the next image from `position` is.
    enum ImageLocation: Equatable {
        /// A whole image: file offsets of its SOI and one past its EOI.
        case image(start: Int, end: Int)
        /// An image starting here whose segments run off the end of the file (or past
        /// `maximumImageByteCount`).
        case damaged(start: Int)
        /// No start-of-image marker before the end of the file.
        case none
    }

    static func locateImage(in window: inout FileWindow, from position: Int) -> ImageLocation {
        var scan = position
        var start: Int?
        while start == nil {
            let bytes = window.bytes(at: scan, atLeast: 2)
            guard bytes.count >= 2 else { return .none }
            var offset = 0
            while offset + 1 < bytes.count && !(bytes[offset] == 0xFF && bytes[offset + 1] == 0xD8) { offset += 1 }
            if offset + 1 < bytes.count { start = scan + offset; break }
            if window.reachesEnd { return .none }
            scan += offset  // the last byte may be the FF of a marker split across reads
        }
        var wanted = 4
        while true {
            let bytes = window.bytes(at: start!, atLeast: wanted)
            if let end = JPEGMarkers.imageEnd(in: bytes, from: 0) { return .image(start: start!, end: start! + end) }
            if window.reachesEnd || bytes.count >= window.maximumCapacity { return .damaged(start: start!) }
            wanted = bytes.count + 1
        }
    }

    public mutating func nextFrame(timeoutMilliseconds: Int32, _ body: (borrowing Frame) -> FrameUse) -> FrameOutcome {
        guard index < presentableFrames else { return .endOfStream }
        var start: Int, end: Int
        switch Self.locateImage(in: &window, from: position) {
        case .none:
            return .endOfStream
        case .damaged(let damaged):
            // Damaged or truncated: its segments run off the end of the file. Skip it and look for
            // the next start-of-image after its own.
            statistics.broken += 1
            position = damaged + 2
            return .nothingNew
        case .image(let first, let last):
            (start, end) = (first, last)
        }
        // Real time and late: skip to the newest due image, counting the skipped ones as dropped.
        while index + 1 < presentableFrames,
              pacer.isSuperseded(byFrameAt: frameInterval.presentationTime(ofFrame: index + 1)),
              case .image(let nextStart, let nextEnd) = Self.locateImage(in: &window, from: end) {
            statistics.droppedLate += 1
            index += 1
            (start, end) = (nextStart, nextEnd)
        }
        let presentation = frameInterval.presentationTime(ofFrame: index)
        guard pacer.waitUntilDue(presentation, timeoutMilliseconds: timeoutMilliseconds) else { return .timedOut }
        position = end
        // The chosen image is still in the window unless a look at the next one replaced it.
        let bytes = window.bytes(at: start, atLeast: end - start)
        guard bytes.count >= end - start else {
            statistics.broken += 1
            return .endOfStream  // the file shrank under us
        }
        let frame = Frame(bytes: UnsafeRawBufferPointer(rebasing: bytes[0..<(end - start)]), layout: frameLayout,
                          timestamp: MonotonicInstant(nanoseconds: presentation), sequence: index)
        index += 1
        if body(frame) == .broken {
            // Damaged data can make the segment walk overshoot into the next image: resynchronise
            // at the next start-of-image after this one's.
            statistics.broken += 1
            position = start + 2
            return .brokenFrame
        }
        statistics.delivered += 1
        return .frame
    }

    /// Bytes of file data the source holds in memory: its buffer, sized by the largest image so
    /// far, whatever the clip's length.
    public var bufferedByteCount: Int { window.capacity }
}

/// A deterministic moving test pattern, for tests and benchmarks: a horizontal luma ramp, chroma
/// ramps down the frame, and a bright square that moves `speed` pixels per frame. Frame n is
/// always the same picture, stamped n × interval. Owns its frame buffer; generating a frame
/// allocates nothing.
public struct SyntheticSource: ~Copyable, FrameSource {
    let frameLayout: FrameLayout
    public let frameInterval: FrameInterval
    /// Frames to deliver before `.endOfStream`; nil for endless.
    public let frameCount: Int?
    let buffer: UnsafeMutableRawBufferPointer
    var index: UInt64 = 0
    var pacer: Pacer
    public private(set) var statistics = CaptureStatistics()

    public var layout: FrameLayout? { frameLayout }

    /// Supported formats: YUYV, UYVY, NV12, YUV420 (I420), RGB24, GREY.
    public init(format: PixelFormat = .yuyv, width: Int = 640, height: Int = 480, framesPerSecond: Double = 30,
                frameCount: Int? = nil, pacing: Pacing = .asFastAsPossible) {
        precondition([.yuyv, .uyvy, .nv12, .yuv420, .rgb24, .grey].contains(format), "synthetic \(format) is not supported")
        precondition(width > 1 && height > 1 && width % 2 == 0 && height % 2 == 0)
        frameLayout = FrameLayout(pixelFormat: format, width: width, height: height)
        frameInterval = FrameInterval(framesPerSecond: framesPerSecond)
        self.frameCount = frameCount
        buffer = .allocate(byteCount: frameLayout.minimumByteCount, alignment: 16)
        pacer = Pacer(pacing)
    }

    deinit { buffer.deallocate() }

    /// The pattern's Y'CbCr at pixel (x, y) of frame n.
    public static func sample(x: Int, y: Int, frame: UInt64, width: Int, height: Int) -> (y: UInt8, cb: UInt8, cr: UInt8) {
        let side = Swift.max(height / 4, 2)
        let squareX = Int(frame &* 4 % UInt64(Swift.max(width - side, 1)))
        let squareY = height / 2 - side / 2
        if x >= squareX && x < squareX + side && y >= squareY && y < squareY + side { return (235, 90, 200) }
        let luma = 16 + (x * 219) / Swift.max(width - 1, 1)
        return (UInt8(luma), UInt8(64 + (y * 128) / height), UInt8(192 - (y * 128) / height))
    }

    /// Writes frame `n` into `buffer`.
    mutating func render(_ n: UInt64) {
        let width = frameLayout.width, height = frameLayout.height
        let bytes = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
        switch frameLayout.pixelFormat {
        case .yuyv, .uyvy:
            let (l, b, r) = frameLayout.pixelFormat == .yuyv ? (0, 1, 3) : (1, 0, 2)
            for y in 0..<height {
                let row = bytes + y * width * 2
                for x in stride(from: 0, to: width, by: 2) {
                    let first = Self.sample(x: x, y: y, frame: n, width: width, height: height)
                    let second = Self.sample(x: x + 1, y: y, frame: n, width: width, height: height)
                    let pair = row + x * 2
                    pair[l] = first.y; pair[l + 2] = second.y; pair[b] = first.cb; pair[r] = first.cr
                }
            }
        case .nv12, .yuv420:
            let chroma = bytes + width * height
            for y in 0..<height {
                for x in 0..<width {
                    let value = Self.sample(x: x, y: y, frame: n, width: width, height: height)
                    bytes[y * width + x] = value.y
                    if x % 2 == 0 && y % 2 == 0 {
                        if frameLayout.pixelFormat == .nv12 {
                            chroma[(y / 2) * width + x] = value.cb
                            chroma[(y / 2) * width + x + 1] = value.cr
                        } else {
                            let planeSize = (width / 2) * (height / 2)
                            chroma[(y / 2) * (width / 2) + x / 2] = value.cb
                            chroma[planeSize + (y / 2) * (width / 2) + x / 2] = value.cr
                        }
                    }
                }
            }
        case .rgb24:
            for y in 0..<height {
                for x in 0..<width {
                    let value = Self.sample(x: x, y: y, frame: n, width: width, height: height)
                    let pixel = bytes + (y * width + x) * 3
                    // Equal channels from luma plus a chroma tint: an RGB picture that still moves.
                    pixel[0] = value.cr; pixel[1] = value.y; pixel[2] = value.cb
                }
            }
        case .grey:
            for y in 0..<height {
                for x in 0..<width {
                    bytes[y * width + x] = Self.sample(x: x, y: y, frame: n, width: width, height: height).y
                }
            }
        default:
            break
        }
    }

    public mutating func nextFrame(timeoutMilliseconds: Int32, _ body: (borrowing Frame) -> FrameUse) -> FrameOutcome {
        if let frameCount, index >= UInt64(frameCount) { return .endOfStream }
        let presentation = frameInterval.presentationTime(ofFrame: index)
        guard pacer.waitUntilDue(presentation, timeoutMilliseconds: timeoutMilliseconds) else { return .timedOut }
        render(index)
        let frame = Frame(bytes: UnsafeRawBufferPointer(buffer), layout: frameLayout,
                          timestamp: MonotonicInstant(nanoseconds: presentation), sequence: index)
        index += 1
        if body(frame) == .broken {
            statistics.broken += 1
            return .brokenFrame
        }
        statistics.delivered += 1
        return .frame
    }
}
