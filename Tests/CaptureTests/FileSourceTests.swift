import Testing
import LinuxSystem
@testable import Capture
#if canImport(Glibc)
import Glibc
#endif

/// The package root, found from this file's path (Tests/CaptureTests/FileSourceTests.swift).
let packageRoot: String = {
    var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(3)
    return parts.joined(separator: "/")
}()

/// `../shared/data/videos` next to the package, where the team's real clips live.
let sharedVideos = packageRoot + "/../shared/data/videos"
let haveSharedVideos = access(sharedVideos, R_OK) == 0
let haveFFmpeg = system("command -v ffmpeg >/dev/null 2>&1") == 0

/// A fresh temporary directory, removed by the caller with `removeDirectory`.
func temporaryDirectory() -> String {
    var template = Array("/tmp/posewatch-capture-XXXXXX".utf8CString)
    // The name is read while the buffer is still borrowed (String(cString:) of an array is deprecated).
    let created = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!).map { String(cString: $0) } }
    guard let created else { preconditionFailure("mkdtemp /tmp/posewatch-capture-XXXXXX failed") }
    return created
}

func removeDirectory(_ path: String) { _ = system("rm -rf '\(path)'") }

func writeFile(_ path: String, _ bytes: [UInt8]) {
    let file = fopen(path, "wb")!
    _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
    fclose(file)
}

/// Runs a shell command quietly; true when it exits 0.
@discardableResult
func run(_ command: String) -> Bool { system(command + " >/dev/null 2>&1") == 0 }

extension FrameSource where Self: ~Copyable {
    /// Converts every frame into a fresh tensor, up to `limit`; returns tensors and timestamps.
    mutating func convertAll(limit: Int = .max, tensorSize: Int = 192) -> (tensors: [[UInt8]], timestamps: [Int64], outcomes: [FrameOutcome]) {
        var converter = FrameConverter(tensorWidth: tensorSize, tensorHeight: tensorSize)
        var tensors: [[UInt8]] = [], timestamps: [Int64] = [], outcomes: [FrameOutcome] = []
        var tensor = [UInt8](repeating: 0, count: tensorSize * tensorSize * 3)
        while tensors.count < limit {
            let outcome = tensor.withUnsafeMutableBufferPointer { output in
                nextFrame(timeoutMilliseconds: 0) { frame in
                    timestamps.append(frame.timestamp.nanoseconds)
                    return converter.convert(frame, region: .letterbox, into: output.baseAddress!) == nil ? .broken : .used
                }
            }
            outcomes.append(outcome)
            if outcome == .endOfStream { break }
            if outcome == .frame { tensors.append(tensor) }
        }
        return (tensors, timestamps, outcomes)
    }
}

@Suite struct SyntheticSourceTests {
    @Test func thePatternIsDeterministicMovesAndIsStampedAtItsRate() {
        var first = SyntheticSource(format: .yuyv, width: 320, height: 240, framesPerSecond: 25, frameCount: 6)
        var second = SyntheticSource(format: .yuyv, width: 320, height: 240, framesPerSecond: 25, frameCount: 6)
        let a = first.convertAll(), b = second.convertAll()
        #expect(a.tensors.count == 6)
        #expect(a.tensors == b.tensors)
        #expect(a.tensors[0] != a.tensors[5])
        #expect(a.timestamps == (0..<6).map { Int64($0) * 40_000_000 })
        #expect(a.outcomes.last == .endOfStream)
        let statistics = first.statistics
        #expect(statistics.delivered == 6)
    }

    @Test(arguments: [PixelFormat.yuyv, .uyvy, .nv12, .yuv420, .rgb24, .grey])
    func everySyntheticFormatConverts(_ format: PixelFormat) {
        var source = SyntheticSource(format: format, width: 64, height: 48, frameCount: 2)
        let result = source.convertAll()
        #expect(result.tensors.count == 2)
    }

    @Test func realTimePacingWaitsForTheNextFrame() {
        var source = SyntheticSource(format: .grey, width: 16, height: 16, framesPerSecond: 50, frameCount: 3, pacing: .realTime)
        let start = MonotonicInstant.now()
        let result = source.convertAll()
        let elapsed = MonotonicInstant.now().nanoseconds - start.nanoseconds
        #expect(result.tensors.count == 3)
        #expect(elapsed >= 35_000_000)   // frames at 0, 20, 40 ms
    }
}

@Suite struct Y4MFileSourceTests {
    static func y4m(header: String, frames: [[UInt8]], frameHeader: String = "FRAME") -> [UInt8] {
        var bytes = Array((header + "\n").utf8)
        for frame in frames { bytes += Array((frameHeader + "\n").utf8) + frame }
        return bytes
    }

    @Test func aHandWrittenY4MIsParsedAndLentFrameByFrame() throws {
        let directory = temporaryDirectory()
        defer { removeDirectory(directory) }
        let path = directory + "/small.y4m"
        let frame420 = [UInt8](repeating: 100, count: 8 * 4 + 2 * 4 * 2)
        writeFile(path, Self.y4m(header: "YUV4MPEG2 W8 H4 F30000:1001 Ip A1:1 C420mpeg2 XYSCSS=420MPEG2",
                                 frames: [frame420, frame420, frame420], frameHeader: "FRAME Ixyz"))
        var source = try Y4MFileSource(path: path)
        #expect(source.layout == FrameLayout(pixelFormat: .yuv420, width: 8, height: 4))
        #expect(source.frameInterval == FrameInterval(numerator: 1001, denominator: 30000))
        let result = source.convertAll(tensorSize: 8)
        #expect(result.tensors.count == 3)
        #expect(result.timestamps == [0, 33_366_666, 66_733_333])
    }

    @Test func y4mHeadersSelect422MonoAndFullRange() throws {
        let directory = temporaryDirectory()
        defer { removeDirectory(directory) }
        let cases: [(String, FrameLayout)] = [
            ("C422 XCOLORRANGE=FULL", FrameLayout(pixelFormat: .yuv422Planar, width: 8, height: 4, colorRange: .full)),
            ("Cmono", FrameLayout(pixelFormat: .grey, width: 8, height: 4)),
            ("", FrameLayout(pixelFormat: .yuv420, width: 8, height: 4)),
        ]
        for (index, (tags, layout)) in cases.enumerated() {
            let path = directory + "/\(index).y4m"
            writeFile(path, Self.y4m(header: "YUV4MPEG2 W8 H4 F25:1 \(tags)", frames: [[UInt8](repeating: 0, count: layout.minimumByteCount)]))
            let source = try Y4MFileSource(path: path)
            #expect(source.layout == layout, "\(tags)")
        }
    }

    @Test func aTruncatedLastFrameIsCountedAsBrokenAndEndsTheStream() throws {
        let directory = temporaryDirectory()
        defer { removeDirectory(directory) }
        let path = directory + "/cut.y4m"
        var bytes = Self.y4m(header: "YUV4MPEG2 W8 H4 F25:1 C420jpeg", frames: [[UInt8](repeating: 16, count: 48), [UInt8](repeating: 16, count: 48)])
        bytes.removeLast(10)
        writeFile(path, bytes)
        var source = try Y4MFileSource(path: path)
        let result = source.convertAll(tensorSize: 8)
        #expect(result.tensors.count == 1)
        let statistics = source.statistics
        #expect(statistics.broken == 1)
    }

    @Test func notAY4MFileIsAClearError() {
        let directory = temporaryDirectory()
        defer { removeDirectory(directory) }
        writeFile(directory + "/bad.y4m", Array("RIFF nonsense\n".utf8))
        #expect(throws: CaptureError.invalidFile(path: directory + "/bad.y4m", reason: "not a Y4M file (no YUV4MPEG2 signature)")) {
            _ = try Y4MFileSource(path: directory + "/bad.y4m")
        }
        #expect(throws: CaptureError.systemCall(call: "open", subject: directory + "/missing.y4m", errno: .noSuchFileOrDirectory)) {
            _ = try Y4MFileSource(path: directory + "/missing.y4m")
        }
    }
}

@Suite(.enabled(if: haveFFmpeg, "ffmpeg is not installed: the MJPEG tests encode their JPEGs with it"))
struct MJPEGConversionTests {
    @Test func mjpegDecodedAtReducedScaleMatchesTheReferenceOfTheOriginalPicture() throws {
        let directory = temporaryDirectory()
        defer { removeDirectory(directory) }
        let layout = FrameLayout(pixelFormat: .rgb24, width: 640, height: 480)
        var source = SyntheticSource(format: .rgb24, width: 640, height: 480, frameCount: 3)
        var raw: [UInt8] = []
        for _ in 0..<3 { _ = source.nextFrame(timeoutMilliseconds: 0) { frame in raw += Array(frame.bytes); return .used } }
        writeFile(directory + "/frames.rgb", raw)
        #expect(run("ffmpeg -v error -f rawvideo -pix_fmt rgb24 -s 640x480 -i \(directory)/frames.rgb -c:v mjpeg -q:v 2 -pix_fmt yuvj444p -f mjpeg \(directory)/frames.mjpeg"))

        var mjpeg = try MJPEGFileSource(path: directory + "/frames.mjpeg", framesPerSecond: 30)
        #expect(mjpeg.layout == FrameLayout(pixelFormat: .mjpeg, width: 640, height: 480))
        let decoded = mjpeg.convertAll()
        #expect(decoded.tensors.count == 3)
        #expect(decoded.timestamps == [0, 33_333_333, 66_666_666])
        let frameBytes = layout.minimumByteCount
        for index in 0..<3 {
            let original = Array(raw[(index * frameBytes)..<((index + 1) * frameBytes)])
            let region = TensorMapping.letterboxRegion(frameWidth: 640, frameHeight: 480, tensorWidth: 192, tensorHeight: 192)
            let expected = ReferenceConversion.convert(original, layout, region: region, tensorWidth: 192, tensorHeight: 192)
            let difference = differences(decoded.tensors[index], expected)
            // JPEG loss plus libjpeg's 1/2-scale IDCT (an area average) against bilinear sampling.
            #expect(difference.mean < 3, "frame \(index): mean \(difference.mean)")
            #expect(difference.maximum < 64, "frame \(index): max \(difference.maximum)")
        }
    }

    @Test func anMJPEGFrameWithoutHuffmanTablesDecodesLikeOneWithThem() throws {
        // UVC cameras leave out the (standard) Huffman tables to save bandwidth.
        let directory = temporaryDirectory()
        defer { removeDirectory(directory) }
        #expect(run("ffmpeg -v error -f lavfi -i testsrc=size=320x240:rate=10 -frames:v 1 -c:v mjpeg -huffman default -f mjpeg \(directory)/full.jpg"))
        let file = fopen(directory + "/full.jpg", "rb")!
        var bytes = [UInt8](repeating: 0, count: 1 << 20)
        let count = bytes.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
        fclose(file)
        bytes.removeLast(bytes.count - count)
        // Drop every DHT (FF C4) segment before the scan.
        var stripped: [UInt8] = [0xFF, 0xD8]
        var position = 2
        while position + 4 <= bytes.count {
            let marker = bytes[position + 1]
            let length = Int(bytes[position + 2]) << 8 | Int(bytes[position + 3])
            if marker == 0xDA { stripped += bytes[position...]; break }
            if marker != 0xC4 { stripped += bytes[position..<(position + 2 + length)] }
            position += 2 + length
        }
        #expect(stripped.count < bytes.count - 100)
        let layout = FrameLayout(pixelFormat: .mjpeg, width: 320, height: 240)
        let withTables = convertWithConverter(bytes, layout, region: .letterbox)
        let withoutTables = convertWithConverter(stripped, layout, region: .letterbox)
        #expect(withTables.mapping != nil)
        #expect(withoutTables.mapping != nil)
        #expect(withTables.output == withoutTables.output)
    }

    @Test func aDamagedImageInAnMJPEGStreamIsSkippedAndTheStreamGoesOn() throws {
        let directory = temporaryDirectory()
        defer { removeDirectory(directory) }
        #expect(run("ffmpeg -v error -f lavfi -i testsrc=size=320x240:rate=10 -frames:v 3 -c:v mjpeg -f mjpeg \(directory)/good.mjpeg"))
        let file = fopen(directory + "/good.mjpeg", "rb")!
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            if count == 0 { break }
            bytes += chunk[0..<count]
        }
        fclose(file)
        // Overwrite entropy-coded data in the middle of the second image.
        var starts: [Int] = []
        for index in 0..<(bytes.count - 1) where bytes[index] == 0xFF && bytes[index + 1] == 0xD8 { starts.append(index) }
        #expect(starts.count == 3)
        for index in (starts[1] + 700)..<(starts[1] + 1400) { bytes[index] = 0xFF }
        writeFile(directory + "/damaged.mjpeg", bytes)
        var source = try MJPEGFileSource(path: directory + "/damaged.mjpeg")
        let result = source.convertAll()
        #expect(result.tensors.count >= 2)
        let statistics = source.statistics
        #expect(statistics.broken >= 1)
        #expect(result.outcomes.last == .endOfStream)
    }
}

@Suite(.enabled(if: haveSharedVideos && haveFFmpeg,
                "../shared/data/videos (or ffmpeg) is absent: skipping real-video decoding through Y4M and MJPEG"))
struct RealVideoDecodingTests {
    static let clips: [String] = {
        guard let directory = opendir(sharedVideos) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasSuffix(".mp4") { names.append(name) }
        }
        // Two clips keep the suite quick; the choice is stable.
        return Array(names.sorted().prefix(2))
    }()

    @Test(arguments: clips)
    func aRealClipDecodesThroughY4M420Y4M422AndMJPEGToTheSamePictures(_ clip: String) throws {
        let directory = temporaryDirectory()
        defer { removeDirectory(directory) }
        let input = "\(sharedVideos)/\(clip)"
        let common = "ffmpeg -v error -t 1.5 -i '\(input)' -an -vf scale=320:240,fps=15"
        #expect(run("\(common) -pix_fmt yuv420p -f yuv4mpegpipe \(directory)/clip420.y4m"))
        #expect(run("\(common) -pix_fmt yuv422p -f yuv4mpegpipe \(directory)/clip422.y4m"))
        #expect(run("\(common) -c:v mjpeg -q:v 2 -pix_fmt yuvj420p -f mjpeg \(directory)/clip.mjpeg"))

        var y420 = try Y4MFileSource(path: "\(directory)/clip420.y4m")
        var y422 = try Y4MFileSource(path: "\(directory)/clip422.y4m")
        var mjpeg = try MJPEGFileSource(path: "\(directory)/clip.mjpeg", framesPerSecond: 15)
        #expect(y420.layout == FrameLayout(pixelFormat: .yuv420, width: 320, height: 240))
        #expect(y422.layout?.pixelFormat == .yuv422Planar)
        #expect(y420.frameInterval == FrameInterval(numerator: 1, denominator: 15))
        let a = y420.convertAll(), b = y422.convertAll(), c = mjpeg.convertAll()
        #expect(a.tensors.count >= 20 && a.tensors.count <= 23, "\(a.tensors.count) frames")
        #expect(b.tensors.count == a.tensors.count)
        #expect(c.tensors.count == a.tensors.count)
        #expect(a.timestamps == b.timestamps)
        for index in 0..<min(a.tensors.count, b.tensors.count, c.tensors.count) {
            let chroma = differences(a.tensors[index], b.tensors[index])
            let codec = differences(a.tensors[index], c.tensors[index])
            #expect(chroma.mean < 3, "\(clip) frame \(index): 4:2:0 vs 4:2:2 mean \(chroma.mean)")
            #expect(codec.mean < 6, "\(clip) frame \(index): Y4M vs MJPEG mean \(codec.mean)")
        }
        // Letterbox of 4:3 into a square: the bars are black in every frame.
        #expect(a.tensors.allSatisfy { $0[0] == 0 && $0[(191 * 192 + 191) * 3] == 0 })
    }
}

@Suite(.serialized) struct RealTimePacingTests {
    /// A Y4M file of `count` tiny grey frames at 100 fps.
    static func writeClip(count: Int, name: String) -> String {
        let path = "/tmp/posewatch-pacing-\(getpid())-\(name).y4m"
        var bytes = Array("YUV4MPEG2 W4 H4 F100:1 Ip A1:1 C420jpeg\n".utf8)
        for frame in 0..<count { bytes += Array("FRAME\n".utf8) + [UInt8](repeating: UInt8(frame), count: 24) }
        let file = fopen(path, "wb")!
        _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, bytes.count, file) }
        fclose(file)
        return path
    }

    @Test func aLateLoopGetsTheNewestDueFrameAndTheSkippedOnesCountAsDropped() throws {
        let path = Self.writeClip(count: 50, name: "late")
        defer { unlink(path) }
        var source = try Y4MFileSource(path: path, pacing: .realTime)
        var sequences: [UInt64] = []
        _ = source.nextFrame(timeoutMilliseconds: 100) { sequences.append($0.sequence); return .used }
        usleep(95_000)  // the loop was busy for ~9.5 frame intervals
        _ = source.nextFrame(timeoutMilliseconds: 100) { sequences.append($0.sequence); return .used }
        #expect(sequences[0] == 0)
        #expect(sequences[1] >= 8, "got frame \(sequences[1])")  // later under load, never earlier
        #expect(source.statistics.droppedLate == Int(sequences[1]) - 1)
    }

    @Test func asFastAsPossibleNeverDrops() throws {
        let path = Self.writeClip(count: 10, name: "fast")
        defer { unlink(path) }
        var source = try Y4MFileSource(path: path, pacing: .asFastAsPossible)
        var delivered = 0
        while source.nextFrame(timeoutMilliseconds: 0, { _ in .used }) == .frame { delivered += 1 }
        #expect(delivered == 10 && source.statistics.droppedLate == 0)
    }
}
