import Testing
import LinuxSystem
@testable import Capture
#if canImport(Glibc)
import Glibc
#endif

/// A fixture from Tests/CaptureTests/Fixtures (written by make_jpeg_fixtures.c there).
func jpegFixture(_ name: String) -> [UInt8] {
    let directory = String(#filePath[..<#filePath.lastIndex(of: "/")!])
    let path = directory + "/Fixtures/" + name
    guard let file = fopen(path, "rb") else { fatalError("missing fixture \(path)") }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, 65536, file) }
        if count == 0 { break }
        bytes += chunk[0..<count]
    }
    return bytes
}

/// `jpeg` with its last scan that refines AC coefficients 1–63 (and the Huffman table segment
/// before it) repeated `times` more times before EOI: the progressive-JPEG "scan bomb". Each
/// copy is tens of bytes, and libjpeg makes each a pass over every block of the image, warning
/// ("inconsistent progression sequence") but carrying on.
func repeatingLastRefinementScan(of jpeg: [UInt8], times: Int) -> [UInt8] {
    var segments: [(start: Int, end: Int, marker: UInt8)] = []
    var position = 2
    while position + 4 <= jpeg.count {
        let marker = jpeg[position + 1]
        if marker == 0xD9 { segments.append((position, position + 2, marker)); break }
        var end = position + 2 + (Int(jpeg[position + 2]) << 8 | Int(jpeg[position + 3]))
        if marker == 0xDA {
            while !(jpeg[end] == 0xFF && jpeg[end + 1] != 0 && !(0xD0...0xD7).contains(jpeg[end + 1])) { end += 1 }
        }
        segments.append((position, end, marker))
        position = end
    }
    var repeated: ArraySlice<UInt8> = []
    for (index, segment) in segments.enumerated() where segment.marker == 0xDA {
        let componentCount = Int(jpeg[segment.start + 4])
        let parameters = segment.start + 5 + 2 * componentCount
        let (first, last, approximationHigh) = (jpeg[parameters], jpeg[parameters + 1], jpeg[parameters + 2] >> 4)
        guard first == 1, last == 63, approximationHigh > 0 else { continue }
        let tableFirst = index > 0 && segments[index - 1].marker == 0xC4 ? segments[index - 1].start : segment.start
        repeated = jpeg[tableFirst..<segment.end]
    }
    precondition(!repeated.isEmpty, "no AC refinement scan in the fixture")
    let endOfImage = segments.last!.start
    var result = Array(jpeg[..<endOfImage])
    for _ in 0..<times { result += repeated }
    return result + jpeg[endOfImage...]
}

/// CPU time this thread has used, in seconds (not wall time: the machine is shared).
func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// JPEG frames built to cost CPU or to be undecodable: refused from the header or within a bounded
/// number of scans, never decoded at length.
@Suite final class HostileJPEGTests {
    let directory = temporaryDirectory()

    deinit { removeDirectory(directory) }

    /// Converts `jpeg` as a frame of `layout` into a 192x192 tensor: whether it was accepted, and
    /// the thread CPU seconds it took.
    func convert(_ jpeg: [UInt8], as layout: FrameLayout) -> (accepted: Bool, seconds: Double) {
        var converter = FrameConverter(tensorWidth: 192, tensorHeight: 192, expectedJPEGSize: (layout.width, layout.height))
        let tensor = UnsafeMutablePointer<UInt8>.allocate(capacity: 192 * 192 * 3)
        defer { tensor.deallocate() }
        let start = threadCPUSeconds()
        let accepted = jpeg.withUnsafeBytes { converter.convert(bytes: $0, layout: layout, region: .letterbox, into: tensor) != nil }
        return (accepted, threadCPUSeconds() - start)
    }

    static let vga = FrameLayout(pixelFormat: .mjpeg, width: 640, height: 480)

    @Test("libjpeg's own progressive 640x480 JPEG still decodes: progressive frames are not refused as such")
    func anOrdinaryProgressiveFrameDecodes() {
        #expect(convert(jpegFixture("progressive-640x480.jpg"), as: Self.vga).accepted)
    }

    @Test("A 640x480 frame with 20,000 repeated refinement scans (700 KB) is refused within 0.2 s of CPU, not decoded for seconds")
    func aScanBombIsRefusedQuickly() {
        let bomb = repeatingLastRefinementScan(of: jpegFixture("progressive-640x480.jpg"), times: 20_000)
        let result = convert(bomb, as: Self.vga)
        #expect(!result.accepted)
        // Before the warning ended the decode at once, this took about 3 s (libjpeg-turbo 2.1.5, x86-64).
        #expect(result.seconds < 0.2, "\(result.seconds) s")
    }

    @Test("A valid progressive JPEG of 704 scans is refused for its scan count, before its 33rd scan")
    func tooManyScansAreRefused() {
        let decoder = JPEGDecoder()
        let jpeg = jpegFixture("704-scans-64x48.jpg")
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 48 * 3, alignment: 16)
        defer { output.deallocate() }
        let decoded = jpeg.withUnsafeBytes { decoder.decodeRGB($0, scaleDenominator: 1, into: output, stride: 64 * 3) }
        #expect(decoded == nil)
        #expect(decoder.lastMessage == "the JPEG has more than \(JPEGDecoder.maximumScanCount) scans")
        #expect(jpeg.withUnsafeBytes { decoder.header(of: $0)?.isProgressive } == true)
    }

    @Test("A frame whose header declares another size than the source's layout is broken, decided from the header")
    func aFrameOfAnotherSizeIsBroken() {
        let jpeg = jpegFixture("progressive-640x480.jpg")
        #expect(!convert(jpeg, as: FrameLayout(pixelFormat: .mjpeg, width: 320, height: 240)).accepted)
        #expect(!convert(jpeg, as: FrameLayout(pixelFormat: .mjpeg, width: 640, height: 481)).accepted)
        #expect(convert(jpeg, as: Self.vga).accepted)
    }

    @Test("An MJPEG clip of CMYK frames is refused at open with one line naming CMYK and what to do")
    func aCMYKClipIsRefused() {
        let cmyk = jpegFixture("cmyk-64x48.jpg")
        #expect(cmyk.withUnsafeBytes { JPEGDecoder().header(of: $0)?.colorSpace } == .cmyk)
        let path = directory + "/cmyk.mjpeg"
        writeFile(path, cmyk + cmyk + cmyk)
        do {
            _ = try MJPEGFileSource(path: path)
            Issue.record("a CMYK clip opened")
        } catch {
            guard case .invalidFile(let reported, let reason) = error else { Issue.record("\(error)"); return }
            #expect(reported == path)
            #expect(reason.hasPrefix("the first JPEG image is CMYK, which posewatch cannot decode; convert the clip"), "\(reason)")
            #expect(!reason.contains("\n"))
        }
    }
}
