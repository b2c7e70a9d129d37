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
            self.start = MonotonicInstant(nanoseconds: now.nanoseconds - presentation)
            return true
        }
        let due = start.nanoseconds + presentation
        let wait = due - now.nanoseconds
        if wait <= 0 { return true }
        let limit = Int64(Swift.max(timeoutMilliseconds, 0)) * 1_000_000
        var request = timespec(tv_sec: Int(Swift.min(wait, limit) / 1_000_000_000), tv_nsec: Int(Swift.min(wait, limit) % 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
        return wait <= limit
    }

    /// Real-time pacing only: whether the frame after this one is already due, so this one is
    /// late and is dropped like a camera's stale buffer (the loop never works through a backlog).
    func isSuperseded(byFrameAt nextPresentation: Int64) -> Bool {
        guard pacing == .realTime, let start else { return false }
        return MonotonicInstant.now().nanoseconds >= start.nanoseconds + nextPresentation
    }
}

/// A Y4M file (`ffmpeg -f yuv4mpegpipe`, `.y4m`), memory-mapped, delivered frame by frame.
///
/// Reads 4:2:0 (`C420jpeg`, `C420mpeg2`, `C420paldv`, `C420`; the chroma siting is ignored,
/// chroma is taken from each pixel's own site), 4:2:2 (`C422`) and `Cmono`, in the range
/// `XCOLORRANGE` says (limited when absent). Timestamps come from the header's frame rate
/// (`F30000:1001`): frame n is stamped n × interval. Frames are lent straight out of the mapping,
/// so delivering one allocates nothing. Owns the mapping.
public struct Y4MFileSource: ~Copyable, FrameSource {
    let file: MemoryMappedFile
    public let path: String
    let frameLayout: FrameLayout
    /// The frame interval from the header.
    public let frameInterval: FrameInterval
    let frameByteCount: Int
    var position: Int
    var index: UInt64 = 0
    var pacer: Pacer
    public private(set) var statistics = CaptureStatistics()

    public var layout: FrameLayout? { frameLayout }

    /// Maps `path` and parses its stream header.
    public init(path: String, pacing: Pacing = .asFastAsPossible) throws(CaptureError) {
        let file: MemoryMappedFile
        do throws(SystemCallError) {
            file = try MemoryMappedFile(path: path)
        } catch {
            throw CaptureError.systemCall(call: error.call, subject: path, errno: error.errno)
        }
        let bytes = file.bytes
        guard let headerEnd = bytes.firstIndex(of: UInt8(ascii: "\n")) else {
            throw CaptureError.invalidFile(path: path, reason: "no Y4M stream header")
        }
        let header = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<headerEnd]), as: UTF8.self)
        let tokens = header.split(separator: " ")
        guard tokens.first == "YUV4MPEG2" else {
            throw CaptureError.invalidFile(path: path, reason: "not a Y4M file (no YUV4MPEG2 signature)")
        }
        var width = 0, height = 0
        var interval = FrameInterval(numerator: 1, denominator: 30)
        var colorspace = "420jpeg"
        var range = ColorRange.limited
        for token in tokens.dropFirst() {
            let value = String(token.dropFirst())
            switch token.first {
            case "W": width = Int(value) ?? 0
            case "H": height = Int(value) ?? 0
            case "F":
                let parts = value.split(separator: ":")
                if parts.count == 2, let rate = UInt32(parts[0]), let scale = UInt32(parts[1]), rate > 0, scale > 0 {
                    interval = FrameInterval(numerator: scale, denominator: rate)
                }
            case "C": colorspace = value
            case "X" where value == "COLORRANGE=FULL": range = .full
            default: break
            }
        }
        guard width > 0, height > 0 else {
            throw CaptureError.invalidFile(path: path, reason: "Y4M header lacks a frame size")
        }
        let format: PixelFormat
        switch colorspace {
        case "420jpeg", "420mpeg2", "420paldv", "420": format = .yuv420
        case "422": format = .yuv422Planar
        case "mono": format = .grey
        default: throw CaptureError.invalidFile(path: path, reason: "Y4M colour space C\(colorspace) is not supported (4:2:0, 4:2:2 and mono are)")
        }
        let layout = FrameLayout(pixelFormat: format, width: width, height: height, bytesPerLine: width, colorRange: range)
        self.file = file
        self.path = path
        self.frameLayout = layout
        self.frameInterval = interval
        self.frameByteCount = layout.minimumByteCount
        self.position = headerEnd + 1
        self.pacer = Pacer(pacing)
    }

    public mutating func nextFrame(timeoutMilliseconds: Int32, _ body: (borrowing Frame) -> FrameUse) -> FrameOutcome {
        let bytes = file.bytes
        // "FRAME" [parameters] "\n" then the planes.
        guard position + 6 <= bytes.count, bytes[position] == UInt8(ascii: "F"), bytes[position + 4] == UInt8(ascii: "E") else {
            return .endOfStream
        }
        var dataStart = position + 5
        while dataStart < bytes.count && bytes[dataStart] != UInt8(ascii: "\n") { dataStart += 1 }
        dataStart += 1
        guard dataStart + frameByteCount <= bytes.count else {
            // A truncated last frame: broken, and the end.
            statistics.broken += 1
            position = bytes.count
            return .endOfStream
        }
        // Real time and late: skip to the newest due frame, counting the skipped ones as dropped.
        while pacer.isSuperseded(byFrameAt: frameInterval.presentationTime(ofFrame: index + 1)),
              let next = Self.frameData(in: bytes, at: dataStart + frameByteCount, size: frameByteCount) {
            statistics.droppedLate += 1
            index += 1
            dataStart = next
        }
        let presentation = frameInterval.presentationTime(ofFrame: index)
        guard pacer.waitUntilDue(presentation, timeoutMilliseconds: timeoutMilliseconds) else { return .timedOut }
        let frame = Frame(bytes: UnsafeRawBufferPointer(rebasing: bytes[dataStart..<(dataStart + frameByteCount)]),
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
}

extension Y4MFileSource {
    /// Where the data of the frame whose "FRAME" header starts at `position` begins, when the
    /// whole frame is in the file.
    static func frameData(in bytes: UnsafeRawBufferPointer, at position: Int, size: Int) -> Int? {
        guard position + 6 <= bytes.count, bytes[position] == UInt8(ascii: "F"), bytes[position + 4] == UInt8(ascii: "E") else {
            return nil
        }
        var dataStart = position + 5
        while dataStart < bytes.count && bytes[dataStart] != UInt8(ascii: "\n") { dataStart += 1 }
        dataStart += 1
        return dataStart + size <= bytes.count ? dataStart : nil
    }
}

/// A Motion-JPEG file: JPEG images back to back (`ffmpeg -f mjpeg`, `.mjpeg`), memory-mapped.
///
/// Image boundaries are found by walking JPEG marker segments (not by searching for FF D9, which
/// can appear inside an embedded thumbnail). The file carries no timing, so frames are stamped
/// at `framesPerSecond`. Frames are lent straight out of the mapping; decoding happens in
/// `FrameConverter`. A damaged image is skipped and counted; the stream continues at the next
/// start-of-image marker. Owns the mapping.
public struct MJPEGFileSource: ~Copyable, FrameSource {
    let file: MemoryMappedFile
    public let path: String
    let frameLayout: FrameLayout
    public let frameInterval: FrameInterval
    var position = 0
    var index: UInt64 = 0
    var pacer: Pacer
    public private(set) var statistics = CaptureStatistics()

    public var layout: FrameLayout? { frameLayout }

    /// Maps `path`; the frame size is read from the first image's header.
    public init(path: String, framesPerSecond: Double = 30, pacing: Pacing = .asFastAsPossible) throws(CaptureError) {
        let file: MemoryMappedFile
        do throws(SystemCallError) {
            file = try MemoryMappedFile(path: path)
        } catch {
            throw CaptureError.systemCall(call: error.call, subject: path, errno: error.errno)
        }
        guard let first = Self.nextStart(in: file.bytes, from: 0),
              let end = JPEGMarkers.imageEnd(in: file.bytes, from: first),
              let size = JPEGDecoder().size(of: UnsafeRawBufferPointer(rebasing: file.bytes[first..<end])) else {
            throw CaptureError.invalidFile(path: path, reason: "no readable JPEG image")
        }
        self.file = file
        self.path = path
        self.frameLayout = FrameLayout(pixelFormat: .mjpeg, width: size.width, height: size.height)
        self.frameInterval = FrameInterval(framesPerSecond: framesPerSecond)
        self.position = first
        self.pacer = Pacer(pacing)
    }

    static func nextStart(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        var position = start
        while position + 1 < bytes.count {
            if bytes[position] == 0xFF && bytes[position + 1] == 0xD8 { return position }
            position += 1
        }
        return nil
    }

    public mutating func nextFrame(timeoutMilliseconds: Int32, _ body: (borrowing Frame) -> FrameUse) -> FrameOutcome {
        let bytes = file.bytes
        guard var start = Self.nextStart(in: bytes, from: position) else { return .endOfStream }
        guard var end = JPEGMarkers.imageEnd(in: bytes, from: start) else {
            // Damaged or truncated: its segments run off the end of the file. Skip it and look for
            // the next start-of-image after its own.
            statistics.broken += 1
            position = start + 2
            return .nothingNew
        }
        // Real time and late: skip to the newest due image, counting the skipped ones as dropped.
        while pacer.isSuperseded(byFrameAt: frameInterval.presentationTime(ofFrame: index + 1)),
              let nextStart = Self.nextStart(in: bytes, from: end), let nextEnd = JPEGMarkers.imageEnd(in: bytes, from: nextStart) {
            statistics.droppedLate += 1
            index += 1
            (start, end) = (nextStart, nextEnd)
        }
        let presentation = frameInterval.presentationTime(ofFrame: index)
        guard pacer.waitUntilDue(presentation, timeoutMilliseconds: timeoutMilliseconds) else { return .timedOut }
        position = end
        let frame = Frame(bytes: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), layout: frameLayout,
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
