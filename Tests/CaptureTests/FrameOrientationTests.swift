import Testing
@testable import Capture
import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// The references the orientation is checked against, written the plain way: a picture turned a
/// quarter clockwise has the old left column as its top row (read bottom to top); a mirror reads
/// each row backwards. Every orientation is that turn repeated, then the mirror.
enum TurnReference {
    /// All eight orientations, in test-argument order.
    static let all = (0..<8).map { FrameOrientation(quarterTurns: $0 % 4, mirrored: $0 >= 4) }

    /// Packed pixels of `channels` bytes, `width` × `height`.
    struct Image: Equatable {
        var width: Int, height: Int, channels: Int
        var bytes: [UInt8]
        func at(_ x: Int, _ y: Int, _ channel: Int) -> UInt8 { bytes[(y * width + x) * channels + channel] }
    }

    static func turnedClockwise(_ image: Image) -> Image {
        var out = Image(width: image.height, height: image.width, channels: image.channels, bytes: image.bytes)
        for v in 0..<out.height {
            for u in 0..<out.width {
                for c in 0..<image.channels {
                    out.bytes[(v * out.width + u) * image.channels + c] = image.at(v, image.height - 1 - u, c)
                }
            }
        }
        return out
    }

    static func mirrored(_ image: Image) -> Image {
        var out = image
        for v in 0..<image.height {
            for u in 0..<image.width {
                for c in 0..<image.channels { out.bytes[(v * image.width + u) * image.channels + c] = image.at(image.width - 1 - u, v, c) }
            }
        }
        return out
    }

    static func oriented(_ image: Image, _ orientation: FrameOrientation) -> Image {
        var out = image
        for _ in 0..<orientation.quarterTurns { out = turnedClockwise(out) }
        return orientation.mirrored ? mirrored(out) : out
    }

    /// Where camera point (x, y) lands in the upright picture (continuous coordinates).
    static func uprightPoint(_ x: Double, _ y: Double, width: Int, height: Int, _ orientation: FrameOrientation) -> (Double, Double) {
        var (x, y, w, h) = (x, y, Double(width), Double(height))
        for _ in 0..<orientation.quarterTurns { (x, y, w, h) = (h - y, x, h, w) }
        return orientation.mirrored ? (w - x, y) : (x, y)
    }

    /// Random bytes from a fixed seed (xorshift), so a failure repeats.
    static func noise(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed | 1
        return (0..<count).map { _ in
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return UInt8(truncatingIfNeeded: state >> 24)
        }
    }
}

@Suite struct FrameOrientationTests {
    @Test("Only the four quarter turns are orientations, and turning further adds up", arguments: [0, 90, 180, 270])
    func quarterTurnsAreTheOnlyAngles(_ degrees: Int) throws {
        let orientation = try #require(FrameOrientation(degrees: degrees))
        #expect(orientation.degrees == degrees && !orientation.mirrored)
        #expect(orientation.turned(by: 1).degrees == (degrees + 90) % 360)
        // Behind a mirror a further clockwise turn of the upright picture is a counter-clockwise one of the camera's.
        #expect(try #require(FrameOrientation(degrees: degrees, mirrored: true)).turned(by: 1).degrees == (degrees + 270) % 360)
        for bad in [-90, 45, 360, 1] { #expect(FrameOrientation(degrees: bad) == nil) }
        #expect(FrameOrientation.upright.isIdentity && !FrameOrientation(degrees: 90)!.isIdentity && !FrameOrientation(degrees: 0, mirrored: true)!.isIdentity)
    }

    @Test("Turning pixels equals repeated clockwise quarter turns, then a mirror", arguments: TurnReference.all)
    func pixelsTurnAsTheReferenceTurnsThem(_ orientation: FrameOrientation) {
        let image = TurnReference.Image(width: 7, height: 4, channels: 3, bytes: TurnReference.noise(7 * 4 * 3, seed: 11))
        let expected = TurnReference.oriented(image, orientation)
        var turned = [UInt8](repeating: 0, count: image.bytes.count)
        image.bytes.withUnsafeBufferPointer { source in
            turned.withUnsafeMutableBufferPointer { orientation.reorient(rgb: source.baseAddress!, width: 7, height: 4, into: $0.baseAddress!) }
        }
        let size = orientation.uprightSize(width: 7, height: 4)
        #expect(size.width == expected.width && size.height == expected.height)
        #expect(turned == expected.bytes, "\(orientation)")
    }

    @Test("An upright rectangle maps onto the camera rectangle under it, and a square stays a square", arguments: TurnReference.all)
    func rectanglesMapBackToTheCamera(_ orientation: FrameOrientation) {
        let width = 640, height = 480
        for rectangle in [FrameRectangle(x: 10, y: 20, width: 100, height: 60), FrameRectangle(x: -80, y: 0, width: 640, height: 640),
                          FrameRectangle(x: 300.5, y: -12.25, width: 50, height: 50)] {
            let source = orientation.sourceRectangle(of: rectangle, frameWidth: width, frameHeight: height)
            // The camera rectangle's corners land on the upright rectangle's corners.
            let corners = [(source.x, source.y), (source.x + source.width, source.y),
                           (source.x, source.y + source.height), (source.x + source.width, source.y + source.height)]
                .map { TurnReference.uprightPoint($0.0, $0.1, width: width, height: height, orientation) }
            let minX = corners.map(\.0).min()!, maxX = corners.map(\.0).max()!
            let minY = corners.map(\.1).min()!, maxY = corners.map(\.1).max()!
            #expect(abs(minX - rectangle.x) < 1e-9 && abs(maxX - rectangle.x - rectangle.width) < 1e-9, "\(orientation) \(rectangle)")
            #expect(abs(minY - rectangle.y) < 1e-9 && abs(maxY - rectangle.y - rectangle.height) < 1e-9, "\(orientation) \(rectangle)")
            if rectangle.width == rectangle.height { #expect(source.width == source.height && source.width == rectangle.width) }
            let point = orientation.sourcePoint(x: rectangle.x, y: rectangle.y, frameWidth: width, frameHeight: height)
            let back = TurnReference.uprightPoint(point.x, point.y, width: width, height: height, orientation)
            #expect(abs(back.0 - rectangle.x) < 1e-9 && abs(back.1 - rectangle.y) < 1e-9)
        }
    }

    /// A frame of `layout` holding `bytes`, lent to `body`.
    static func withFrame<Result>(_ bytes: [UInt8], _ layout: FrameLayout, _ body: (borrowing Frame) -> Result) -> Result {
        bytes.withUnsafeBytes { body(Frame(bytes: $0, layout: layout, timestamp: .zero, sequence: 0)) }
    }

    /// An I420 frame whose chroma is one value per 2×2 block, so the turned frame is exactly the
    /// same picture (chroma sites turn with it); returned with its planes as images for turning.
    static func i420(width: Int, height: Int, seed: UInt64) -> (luma: TurnReference.Image, blue: TurnReference.Image, red: TurnReference.Image) {
        let luma = TurnReference.Image(width: width, height: height, channels: 1, bytes: TurnReference.noise(width * height, seed: seed))
        let chroma = width / 2 * height / 2
        let blue = TurnReference.Image(width: width / 2, height: height / 2, channels: 1, bytes: TurnReference.noise(chroma, seed: seed + 1).map { 64 + $0 / 2 })
        let red = TurnReference.Image(width: width / 2, height: height / 2, channels: 1, bytes: TurnReference.noise(chroma, seed: seed + 2).map { 64 + $0 / 2 })
        return (luma, blue, red)
    }

    @Test("Converting a frame turned by the converter equals converting the frame turned beforehand, black bars included",
          arguments: TurnReference.all)
    func convertingTurnsTheSamePixels(_ orientation: FrameOrientation) {
        let width = 96, height = 64, side = 48
        let upright = orientation.uprightSize(width: width, height: height)
        // The letterbox of the whole upright picture (bars on its short side), a crop partly outside
        // it, and a crop inside it at a scale that makes every sample a blend of four pixels.
        let letterbox = FrameRectangle(x: Double(upright.width - max(width, height)) / 2, y: Double(upright.height - max(width, height)) / 2,
                                       width: Double(max(width, height)), height: Double(max(width, height)))
        let regions = [letterbox, FrameRectangle(x: -10, y: 20, width: 50, height: 50), FrameRectangle(x: 7.3, y: 3.1, width: 37, height: 37)]

        var converter = OrientedFrameConverter(side: side)
        converter.orientation = orientation
        var plain = FrameConverter(tensorWidth: side, tensorHeight: side)
        var turnedTensor = [UInt8](repeating: 1, count: side * side * 3)
        var expectedTensor = [UInt8](repeating: 2, count: side * side * 3)

        // RGB24, and I420 whose chroma turns exactly.
        let rgb = TurnReference.Image(width: width, height: height, channels: 3, bytes: TurnReference.noise(width * height * 3, seed: 5))
        let turnedRGB = TurnReference.oriented(rgb, orientation)
        let planes = Self.i420(width: width, height: height, seed: 9)
        let turnedPlanes = (TurnReference.oriented(planes.luma, orientation), TurnReference.oriented(planes.blue, orientation),
                            TurnReference.oriented(planes.red, orientation))
        let cases: [(camera: [UInt8], cameraLayout: FrameLayout, turned: [UInt8], turnedLayout: FrameLayout)] = [
            (rgb.bytes, FrameLayout(pixelFormat: .rgb24, width: width, height: height),
             turnedRGB.bytes, FrameLayout(pixelFormat: .rgb24, width: upright.width, height: upright.height)),
            (planes.luma.bytes + planes.blue.bytes + planes.red.bytes, FrameLayout(pixelFormat: .yuv420, width: width, height: height),
             turnedPlanes.0.bytes + turnedPlanes.1.bytes + turnedPlanes.2.bytes,
             FrameLayout(pixelFormat: .yuv420, width: upright.width, height: upright.height)),
        ]
        for (camera, cameraLayout, turned, turnedLayout) in cases {
            for region in regions {
                let converted = turnedTensor.withUnsafeMutableBufferPointer { tensor in
                    Self.withFrame(camera, cameraLayout) { converter.convert($0, uprightRegion: region, into: tensor.baseAddress!) }
                }
                let reference = expectedTensor.withUnsafeMutableBufferPointer { tensor in
                    Self.withFrame(turned, turnedLayout) { plain.convert($0, region: .crop(region), into: tensor.baseAddress!) != nil }
                }
                #expect(converted && reference)
                // Equal sample positions; only a bilinear weight that falls exactly between two
                // 1/256 steps may round the other way in the mirrored direction: ±1.
                let differences = zip(turnedTensor, expectedTensor).map { abs(Int($0) - Int($1)) }
                #expect(differences.max()! <= 1, "\(orientation) \(cameraLayout.pixelFormat) \(region): max difference \(differences.max()!)")
                // Outside the picture both are black, and in the same places.
                let black = { (tensor: [UInt8]) in (0..<side * side).filter { tensor[3 * $0] == 0 && tensor[3 * $0 + 1] == 0 && tensor[3 * $0 + 2] == 0 } }
                if region == letterbox { #expect(black(turnedTensor) == black(expectedTensor) && black(turnedTensor).count >= side * side / 4) }
            }
        }
    }
}

/// The malloc-counting preload library's count (Tests/Support/run-allocation-tests.sh), when loaded.
private enum OrientationAllocationCounter {
    typealias Count = @convention(c) () -> UInt64
    static let function: Count? = {
        guard let handle = dlopen(nil, RTLD_NOW) else { return nil }
        guard let symbol = dlsym(handle, "pw_thread_allocation_count") ?? dlsym(handle, "pw_allocation_count") else { return nil }
        return unsafeBitCast(symbol, to: Count.self)
    }()
}

@Suite struct FrameOrientationAllocationTests {
    @Test("Turning each frame into the model input allocates nothing after the first frame, in every orientation",
          .enabled(if: OrientationAllocationCounter.function != nil, "needs the malloc counter: run Tests/Support/run-allocation-tests.sh"))
    func turningFramesAllocatesNothing() throws {
        let width = 160, height = 120, side = 64
        let bytes = TurnReference.noise(width * height * 3 / 2, seed: 3)
        let layout = FrameLayout(pixelFormat: .yuv420, width: width, height: height)
        var converter = OrientedFrameConverter(side: side)
        let tensor = UnsafeMutablePointer<UInt8>.allocate(capacity: side * side * 3)
        defer { tensor.deallocate() }
        let count = OrientationAllocationCounter.function!
        let orientations = TurnReference.all
        var converted = 0
        var allocations: [UInt64] = []
        allocations.reserveCapacity(2)
        bytes.withUnsafeBytes { raw in
            // The first pass makes what a process makes once (type metadata of a debug build's
            // generic sampling loop: 6 allocations measured, with or without a turn); the second
            // counts. Indexed, not `for … in`: a debug build's array iterator allocates by itself.
            for _ in 0..<2 {
                let before = count()
                for index in 0..<orientations.count {
                    let orientation = orientations[index]
                    converter.orientation = orientation
                    let frame = Frame(bytes: raw, layout: layout, timestamp: .zero, sequence: 0)
                    let upright = orientation.uprightSize(width: width, height: height)
                    let region = FrameRectangle(x: 0, y: Double(upright.height - upright.width) / 2, width: Double(upright.width), height: Double(upright.width))
                    if converter.convert(frame, uprightRegion: region, into: tensor) { converted += 1 }
                }
                allocations.append(count() - before)
            }
        }
        #expect(converted == 16)
        #expect(allocations[1] == 0, "\(allocations[1]) allocations turning 8 frames")
    }
}
