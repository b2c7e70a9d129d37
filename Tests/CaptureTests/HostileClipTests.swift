import Testing
import LinuxSystem
@testable import Capture
#if canImport(Glibc)
import Glibc
#endif

/// A JPEG with a header only as far as libjpeg reads for the size (SOI, DQT, SOF0 of one
/// component, SOS) and a little scan data: enough for `jpeg_read_header`, not a picture.
func headerOnlyJPEG(width: UInt16, height: UInt16) -> [UInt8] {
    var bytes: [UInt8] = [0xFF, 0xD8]
    bytes += [0xFF, 0xDB, 0x00, 0x43, 0x00] + [UInt8](repeating: 1, count: 64)
    bytes += [0xFF, 0xC0, 0x00, 0x0B, 0x08, UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8), UInt8(width & 0xFF),
              0x01, 0x01, 0x11, 0x00]
    bytes += [0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3F, 0x00]
    bytes += [UInt8](repeating: 0x55, count: 32)
    bytes += [0xFF, 0xD9]
    return bytes
}

/// Clips from outside: what a file source refuses, and what it never does (trap, hang, grow).
@Suite final class HostileClipTests {
    let directory = temporaryDirectory()

    deinit { removeDirectory(directory) }

    /// The reason a Y4M file starting with `header` is refused, or nil when it opens.
    func y4mRefusal(_ header: String, frames: Int = 0, frameBytes: Int = 0) -> String? {
        let path = directory + "/clip-\(UInt32.random(in: 0...UInt32.max)).y4m"
        var bytes = Array((header + "\n").utf8)
        for _ in 0..<frames { bytes += Array("FRAME\n".utf8) + [UInt8](repeating: 16, count: frameBytes) }
        writeFile(path, bytes)
        do {
            _ = try Y4MFileSource(path: path)
            return nil
        } catch {
            guard case .invalidFile(let reported, let reason) = error, reported == path else { return "\(error)" }
            return reason
        }
    }

    @Test("A Y4M header of W4000000000 H4000000000 is refused with one line naming the token, not trapped on")
    func anEnormousFrameSizeIsRefused() {
        #expect(y4mRefusal("YUV4MPEG2 W4000000000 H4000000000") == "Y4M header W4000000000: the frame width must be 1 to 8192 pixels")
        #expect(y4mRefusal("YUV4MPEG2 W640 H4000000000") == "Y4M header H4000000000: the frame height must be 1 to 8192 pixels")
        #expect(y4mRefusal("YUV4MPEG2 W8193 H480") == "Y4M header W8193: the frame width must be 1 to 8192 pixels")
        #expect(y4mRefusal("YUV4MPEG2 W0 H480") == "Y4M header W0: the frame width must be 1 to 8192 pixels")
        #expect(y4mRefusal("YUV4MPEG2 W-64 H480") == "Y4M header W-64: the frame width must be 1 to 8192 pixels")
        #expect(y4mRefusal("YUV4MPEG2 W99999999999999999999999 H480") == "Y4M header W99999999999999999999999: the frame width must be 1 to 8192 pixels")
        #expect(y4mRefusal("YUV4MPEG2 W8192 H8192 F25:1") == nil)
    }

    @Test("A 40-byte file declaring 8192x8192 frames opens with a buffer no larger than the file, and ends at once")
    func aTinyFileDeclaringHugeFramesCostsLittle() throws {
        let path = directory + "/tiny.y4m"
        let bytes = Array("YUV4MPEG2 W8192 H8192 F25:1\nFRAME\n0123".utf8)
        writeFile(path, bytes)
        var source = try Y4MFileSource(path: path)
        #expect(source.bufferedByteCount <= bytes.count)
        #expect(source.nextFrame(timeoutMilliseconds: 0, { _ in .used }) == .endOfStream)
        #expect(source.statistics.broken == 1)
    }

    @Test("Y4M frame rates of F1:4294967295, F0:1, F1:0 or not numbers are refused with one line naming the token")
    func aFrameRateOutOfRangeIsRefused() {
        let reason = ": the frame rate must be 1 to 240 frames per second, written F<rate>:<scale> (F30000:1001)"
        for token in ["F1:4294967295", "F0:1", "F1:0", "F241:1", "F30", "F30:1:1", "Fx:1", "F4294967296:1"] {
            #expect(y4mRefusal("YUV4MPEG2 W8 H4 \(token)") == "Y4M header \(token)\(reason)")
        }
        for token in ["F1:1", "F240:1", "F30000:1001", "F2400:10"] {
            #expect(y4mRefusal("YUV4MPEG2 W8 H4 \(token)") == nil, "\(token)")
        }
    }

    @Test("A hostile header token is shown escaped and short in the message")
    func aHostileTokenIsShownSafely() throws {
        let reason = try #require(y4mRefusal("YUV4MPEG2 W8\u{1B}[2J H4"))
        #expect(reason == #"Y4M header W8\u{1b}[2J: the frame width must be 1 to 8192 pixels"#)
        let long = try #require(y4mRefusal("YUV4MPEG2 W8 H4 C" + String(repeating: "x", count: 500)))
        // The token is cut after MessageExcerpt.maximumLength (64) characters with "…".
        #expect(long == "Y4M colour space C" + String(repeating: "x", count: 64) + "… is not supported (4:2:0, 4:2:2 and mono are)")
    }

    @Test("A frame rate whose timestamps would pass 64-bit nanoseconds ends the stream instead of trapping")
    func timestampsThatWouldOverflowEndTheStream() throws {
        // F4294967295:4294967294 is just over 1 fps, but frame 3's time overflows Int64 nanoseconds.
        let path = directory + "/slow.y4m"
        var bytes = Array("YUV4MPEG2 W2 H2 F4294967295:4294967294 Cmono\n".utf8)
        for _ in 0..<4 { bytes += Array("FRAME\n".utf8) + [16, 16, 16, 16] }
        writeFile(path, bytes)
        var source = try Y4MFileSource(path: path)
        var delivered = 0
        while source.nextFrame(timeoutMilliseconds: 0, { _ in .used }) == .frame { delivered += 1 }
        #expect(delivered == 2)
    }

    @Test("A FIFO, /dev/zero and a directory given as a clip are refused at once with what they are")
    func nonRegularClipsAreRefused() throws {
        let fifo = directory + "/clip.y4m"
        #expect(mkfifo(fifo, 0o600) == 0)
        let advice = ", not a regular file; give the path of a regular file"
        // Without a writer, opening this FIFO the old way never returned.
        #expect(throws: CaptureError.invalidFile(path: fifo, reason: "is a FIFO" + advice)) { _ = try Y4MFileSource(path: fifo) }
        #expect(throws: CaptureError.invalidFile(path: fifo, reason: "is a FIFO" + advice)) { _ = try MJPEGFileSource(path: fifo) }
        #expect(throws: CaptureError.invalidFile(path: "/dev/zero", reason: "is a character device" + advice)) {
            _ = try Y4MFileSource(path: "/dev/zero")
        }
        #expect(throws: CaptureError.invalidFile(path: directory, reason: "is a directory" + advice)) {
            _ = try MJPEGFileSource(path: directory)
        }
    }

    @Test("An MJPEG file whose first image declares 65000x65000 (or 65535x65535) is refused before anything is sized from it")
    func anEnormousFirstJPEGIsRefused() {
        let path = directory + "/huge.mjpeg"
        // libjpeg-turbo reads sizes up to 65500 a side; 65535 it refuses itself.
        writeFile(path, headerOnlyJPEG(width: 65000, height: 65000))
        #expect(throws: CaptureError.invalidFile(path: path, reason: "the first JPEG image is 65000x65000; posewatch reads up to 8192x8192")) {
            _ = try MJPEGFileSource(path: path)
        }
        writeFile(path, headerOnlyJPEG(width: 65535, height: 65535))
        #expect(throws: CaptureError.invalidFile(path: path, reason: "no readable JPEG image")) { _ = try MJPEGFileSource(path: path) }
    }

    @Test("A JPEG frame declaring 65000x65000 is broken, and the converter's buffer is not grown for it")
    func anEnormousJPEGFrameIsBroken() {
        var converter = FrameConverter(tensorWidth: 8, tensorHeight: 8)
        let before = converter.jpegBuffer.count
        var tensor = [UInt8](repeating: 0, count: 8 * 8 * 3)
        // 65000 a side: within what libjpeg-turbo reads (65500), 12 GB as RGB.
        let jpeg = headerOnlyJPEG(width: 65000, height: 65000)
        let mapping = jpeg.withUnsafeBytes { bytes in
            converter.convert(bytes: bytes, layout: FrameLayout(pixelFormat: .mjpeg, width: 16, height: 16),
                              region: .letterbox, into: &tensor)
        }
        #expect(mapping == nil)
        #expect(converter.jpegBuffer.count == before)
        // And libjpeg's own entry point refuses it before jpeg_start_decompress.
        var output = [UInt8](repeating: 0, count: 64)
        let decoder = JPEGDecoder()
        let decoded = jpeg.withUnsafeBytes { bytes in
            output.withUnsafeMutableBytes { decoder.decodeRGB(bytes, scaleDenominator: 8, into: $0, stride: 24) }
        }
        #expect(decoded == nil)
        #expect(decoder.lastMessage == "the JPEG declares 65000x65000, larger than 8192x8192")
    }

    @Test("A Y4M clip is read through a buffer of one frame, the same for 3 frames as for 300")
    func y4mMemoryDoesNotGrowWithTheClip() throws {
        func bufferAfterPlaying(frames: Int) throws -> (buffered: Int, delivered: Int) {
            let path = directory + "/clip\(frames).y4m"
            var bytes = Array("YUV4MPEG2 W320 H240 F15:1 C420jpeg\n".utf8)
            let frame = [UInt8](repeating: 90, count: 320 * 240 * 3 / 2)
            for _ in 0..<frames { bytes += Array("FRAME\n".utf8) + frame }
            writeFile(path, bytes)
            var source = try Y4MFileSource(path: path)
            let atStart = source.bufferedByteCount
            var delivered = 0
            while source.nextFrame(timeoutMilliseconds: 0, { _ in .used }) == .frame { delivered += 1 }
            #expect(source.bufferedByteCount == atStart)
            return (source.bufferedByteCount, delivered)
        }
        let short = try bufferAfterPlaying(frames: 3), long = try bufferAfterPlaying(frames: 300)
        #expect(short.delivered == 3 && long.delivered == 300)
        #expect(long.buffered == short.buffered)
        // One frame plus its FRAME line allowance, not the 34 MB clip.
        #expect(long.buffered == 320 * 240 * 3 / 2 + Y4MFileSource.frameLineLimit)
    }

    @Test("An MJPEG clip is read through a buffer sized by its largest image, not its length")
    func mjpegMemoryDoesNotGrowWithTheClip() throws {
        let image = headerOnlyJPEG(width: 16, height: 16)
        let path = directory + "/many.mjpeg"
        writeFile(path, Array([[UInt8]](repeating: image, count: 20_000).joined()))  // 2.4 MB
        var source = try MJPEGFileSource(path: path)
        let atStart = source.bufferedByteCount
        var delivered = 0
        while source.nextFrame(timeoutMilliseconds: 0, { _ in .used }) == .frame { delivered += 1 }
        #expect(delivered == 20_000)
        #expect(source.bufferedByteCount == atStart)
        #expect(atStart == 1 << 20)
    }

    @Test("An MJPEG image larger than the buffer grows it once, and one past the cap is skipped as broken")
    func anOversizedMJPEGImageIsBroken() throws {
        // A COM segment of 65533 bytes repeated makes one valid-looking image of about 40 MB.
        var big: [UInt8] = [0xFF, 0xD8]
        let comment: [UInt8] = [0xFF, 0xFE, 0xFF, 0xFF] + [UInt8](repeating: 0x20, count: 65533)
        for _ in 0..<(MJPEGFileSource.maximumImageByteCount / comment.count + 8) { big += comment }
        big += [0xFF, 0xD9]
        var mid: [UInt8] = [0xFF, 0xD8]
        for _ in 0..<40 { mid += comment }  // 2.6 MB: more than the first 1 MiB buffer
        mid += [0xFF, 0xD9]
        let small = headerOnlyJPEG(width: 16, height: 16)
        let path = directory + "/big.mjpeg"
        writeFile(path, small + mid + big + small)
        var source = try MJPEGFileSource(path: path)
        var outcomes: [FrameOutcome] = []
        while outcomes.last != .endOfStream { outcomes.append(source.nextFrame(timeoutMilliseconds: 0) { _ in .used }) }
        #expect(outcomes.filter { $0 == .frame }.count >= 3)
        #expect(source.statistics.broken >= 1)
        #expect(source.bufferedByteCount <= MJPEGFileSource.maximumImageByteCount)
    }

    @Test("A clip truncated while it plays ends its stream instead of crashing")
    func aClipTruncatedWhilePlayingEnds() throws {
        let path = directory + "/shrinking.y4m"
        // Frames larger than the 64 KiB header read, so the buffer holds one frame at a time.
        var bytes = Array("YUV4MPEG2 W320 H240 F15:1 Cmono\n".utf8)
        for _ in 0..<20 { bytes += Array("FRAME\n".utf8) + [UInt8](repeating: 50, count: 320 * 240) }
        writeFile(path, bytes)
        var source = try Y4MFileSource(path: path)
        #expect(source.nextFrame(timeoutMilliseconds: 0, { _ in .used }) == .frame)
        // ffmpeg -y writing the same path truncates it; a mapping would now SIGBUS past the end.
        #expect(truncate(path, 2000) == 0)
        var outcomes: [FrameOutcome] = []
        while outcomes.count < 40 && outcomes.last != .endOfStream {
            outcomes.append(source.nextFrame(timeoutMilliseconds: 0) { _ in .used })
        }
        #expect(outcomes == [.endOfStream])
    }
}
