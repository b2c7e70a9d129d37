import Testing
@testable import Capture
#if canImport(Glibc)
import Glibc
#endif

/// The straightforward reference: expand the frame to full-resolution planes (chroma repeated
/// from its site), resize each plane bilinearly in floating point with half-pixel centres, then
/// apply the BT.601 matrix in floating point. No fixed point, no one-pass tricks.
enum ReferenceConversion {
    struct Planes {
        var width: Int, height: Int
        var channels: [[Double]]   // Y, Cb, Cr or R, G, B
        var isYCbCr: Bool
    }

    static func planes(_ bytes: [UInt8], _ layout: FrameLayout) -> Planes {
        let width = layout.width, height = layout.height, stride = layout.bytesPerLine
        var c0 = [Double](repeating: 0, count: width * height), c1 = c0, c2 = c0
        let chromaStride = (stride + 1) / 2
        for y in 0..<height {
            for x in 0..<width {
                let i = y * width + x
                switch layout.pixelFormat {
                case .yuyv, .uyvy, .yvyu:
                    let (l, b, r) = layout.pixelFormat == .yuyv ? (0, 1, 3) : layout.pixelFormat == .uyvy ? (1, 0, 2) : (0, 3, 1)
                    let pair = y * stride + (x / 2) * 4
                    c0[i] = Double(bytes[y * stride + x * 2 + l]); c1[i] = Double(bytes[pair + b]); c2[i] = Double(bytes[pair + r])
                case .nv12, .nv21:
                    let chroma = stride * height + (y / 2) * stride + (x / 2) * 2
                    let (b, r) = layout.pixelFormat == .nv12 ? (0, 1) : (1, 0)
                    c0[i] = Double(bytes[y * stride + x]); c1[i] = Double(bytes[chroma + b]); c2[i] = Double(bytes[chroma + r])
                case .yuv420, .yvu420, .yuv422Planar:
                    let rows = layout.pixelFormat == .yuv422Planar ? height : (height + 1) / 2
                    let cy = layout.pixelFormat == .yuv422Planar ? y : y / 2
                    let first = stride * height, second = first + chromaStride * rows
                    let (b, r) = layout.pixelFormat == .yvu420 ? (second, first) : (first, second)
                    c0[i] = Double(bytes[y * stride + x]); c1[i] = Double(bytes[b + cy * chromaStride + x / 2]); c2[i] = Double(bytes[r + cy * chromaStride + x / 2])
                case .rgb24, .bgr24:
                    let p = y * stride + x * 3
                    let (r, b) = layout.pixelFormat == .rgb24 ? (0, 2) : (2, 0)
                    c0[i] = Double(bytes[p + r]); c1[i] = Double(bytes[p + 1]); c2[i] = Double(bytes[p + b])
                case .grey:
                    c0[i] = Double(bytes[y * stride + x]); c1[i] = c0[i]; c2[i] = c0[i]
                case .mjpeg:
                    fatalError()
                }
            }
        }
        let isYCbCr = ![.rgb24, .bgr24, .grey].contains(layout.pixelFormat)
        return Planes(width: width, height: height, channels: [c0, c1, c2], isYCbCr: isYCbCr)
    }

    static func taps(_ count: Int, origin: Double, extent: Double, size: Int) -> [(Int, Int, Double)?] {
        (0..<count).map { index in
            let centre = origin + (Double(index) + 0.5) * extent / Double(count)
            if centre < 0 || centre >= Double(size) { return nil }
            let position = min(max(centre - 0.5, 0), Double(size - 1))
            let first = Int(position.rounded(.down))
            return (first, min(first + 1, size - 1), position - Double(first))
        }
    }

    static func convert(_ bytes: [UInt8], _ layout: FrameLayout, region: FrameRectangle, tensorWidth: Int, tensorHeight: Int) -> [UInt8] {
        let planes = planes(bytes, layout)
        let columns = taps(tensorWidth, origin: region.x, extent: region.width, size: planes.width)
        let rows = taps(tensorHeight, origin: region.y, extent: region.height, size: planes.height)
        var output = [UInt8](repeating: 0, count: tensorWidth * tensorHeight * 3)
        for (oy, row) in rows.enumerated() {
            for (ox, column) in columns.enumerated() {
                guard let row, let column else { continue }
                var v = [0.0, 0.0, 0.0]
                for c in 0..<3 {
                    let plane = planes.channels[c]
                    let top = plane[row.0 * planes.width + column.0] * (1 - column.2) + plane[row.0 * planes.width + column.1] * column.2
                    let bottom = plane[row.1 * planes.width + column.0] * (1 - column.2) + plane[row.1 * planes.width + column.1] * column.2
                    v[c] = top * (1 - row.2) + bottom * row.2
                }
                var rgb = v
                if planes.isYCbCr {
                    let cb = v[1] - 128, cr = v[2] - 128
                    if layout.colorRange == .limited {
                        let y = 1.164 * (v[0] - 16)
                        rgb = [y + 1.596 * cr, y - 0.392 * cb - 0.813 * cr, y + 2.017 * cb]
                    } else {
                        rgb = [v[0] + 1.402 * cr, v[0] - 0.344136 * cb - 0.714136 * cr, v[0] + 1.772 * cb]
                    }
                }
                for c in 0..<3 { output[(oy * tensorWidth + ox) * 3 + c] = UInt8(min(max(rgb[c].rounded(), 0), 255)) }
            }
        }
        return output
    }
}

/// A deterministic camera-like picture: smooth ramps and shapes plus pixel noise.
func testPicture(_ layout: FrameLayout, seed: UInt64 = 1) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: max(layout.minimumByteCount, 1))
    var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
    for index in bytes.indices {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        let noise = Int(state % 41) - 20
        let ramp = (index * 7 / 5) % 256
        bytes[index] = UInt8(clamping: ramp / 2 + 64 + noise)
    }
    return bytes
}

func convertWithConverter(_ bytes: [UInt8], _ layout: FrameLayout, region: SourceRegion, tensorWidth: Int = 192, tensorHeight: Int = 192)
    -> (output: [UInt8], mapping: TensorMapping?) {
    var converter = FrameConverter(tensorWidth: tensorWidth, tensorHeight: tensorHeight)
    var output = [UInt8](repeating: 0xAA, count: tensorWidth * tensorHeight * 3)
    let mapping = bytes.withUnsafeBytes { raw in
        output.withUnsafeMutableBufferPointer { converter.convert(bytes: raw, layout: layout, region: region, into: $0.baseAddress!) }
    }
    return (output, mapping)
}

func differences(_ a: [UInt8], _ b: [UInt8]) -> (maximum: Int, mean: Double) {
    var maximum = 0, total = 0
    for (x, y) in zip(a, b) {
        let difference = abs(Int(x) - Int(y))
        maximum = max(maximum, difference)
        total += difference
    }
    return (maximum, Double(total) / Double(max(a.count, 1)))
}

@Suite struct ConversionTests {
    static let formats: [(PixelFormat, Int?)] = [
        (.yuyv, nil), (.yuyv, 1344), (.uyvy, nil), (.yvyu, nil), (.nv12, nil), (.nv21, nil),
        (.yuv420, nil), (.yvu420, nil), (.yuv422Planar, nil), (.rgb24, nil), (.bgr24, nil), (.grey, nil),
    ]

    @Test(arguments: 0..<formats.count)
    func everyFormatMatchesTheFloatingPointReferenceForALetterbox(_ index: Int) {
        let (format, stride) = Self.formats[index]
        let layout = FrameLayout(pixelFormat: format, width: 640, height: 480, bytesPerLine: stride)
        let bytes = testPicture(layout, seed: UInt64(index + 1))
        let region = TensorMapping.letterboxRegion(frameWidth: 640, frameHeight: 480, tensorWidth: 192, tensorHeight: 192)
        let expected = ReferenceConversion.convert(bytes, layout, region: region, tensorWidth: 192, tensorHeight: 192)
        let (actual, mapping) = convertWithConverter(bytes, layout, region: .letterbox)
        #expect(mapping != nil)
        let difference = differences(actual, expected)
        // 8-bit fixed-point weights and matrix against doubles: at most 2 apart, almost always equal.
        #expect(difference.maximum <= 2, "\(format) stride \(stride ?? 0): max \(difference.maximum)")
        #expect(difference.mean < 0.3, "\(format): mean \(difference.mean)")
    }

    @Test func fullRangeYCbCrUsesTheJFIFMatrix() {
        let layout = FrameLayout(pixelFormat: .yuv420, width: 320, height: 240, colorRange: .full)
        let bytes = testPicture(layout, seed: 9)
        let region = FrameRectangle(x: 0, y: 0, width: 320, height: 240)
        let expected = ReferenceConversion.convert(bytes, layout, region: region, tensorWidth: 192, tensorHeight: 192)
        let (actual, _) = convertWithConverter(bytes, layout, region: .crop(region))
        #expect(differences(actual, expected).maximum <= 2)
    }

    @Test func aCropRegionReachingOutsideTheFrameIsBlackThere() {
        let layout = FrameLayout(pixelFormat: .nv12, width: 640, height: 480)
        let bytes = testPicture(layout, seed: 3)
        let region = FrameRectangle(x: 500, y: -100, width: 256, height: 256)
        let expected = ReferenceConversion.convert(bytes, layout, region: region, tensorWidth: 192, tensorHeight: 192)
        let (actual, mapping) = convertWithConverter(bytes, layout, region: .crop(region))
        #expect(differences(actual, expected).maximum <= 2)
        // Top-right corner: outside the frame.
        #expect(actual[(0 * 192 + 191) * 3] == 0 && actual[(0 * 192 + 191) * 3 + 1] == 0)
        let centre = mapping!.framePoint(normalizedX: 0.5, normalizedY: 0.5)
        #expect(centre.x == 628 && centre.y == 28)
    }

    @Test func aLetterboxOfA4To3FrameHasBlackBarsAboveAndBelowAndMapsBack() {
        let layout = FrameLayout(pixelFormat: .yuyv, width: 640, height: 480)
        var bytes = [UInt8](repeating: 0, count: layout.minimumByteCount)
        for index in stride(from: 0, to: bytes.count, by: 2) { bytes[index] = 235; bytes[index + 1] = 128 }  // white
        let (actual, mapping) = convertWithConverter(bytes, layout, region: .letterbox)
        // 640×480 scaled by 0.3 is 192×144: 24 black rows on each side.
        for row in [0, 23, 168, 191] { #expect(actual[(row * 192 + 96) * 3] == 0, "row \(row)") }
        for row in [24, 96, 167] { #expect(actual[(row * 192 + 96) * 3] == 255, "row \(row)") }
        let mappingRegion = mapping?.region
        #expect(mappingRegion == FrameRectangle(x: 0, y: -80, width: 640, height: 640))
        let centre = mapping!.framePoint(normalizedX: 0.5, normalizedY: 0.5)
        #expect(centre.x == 320 && centre.y == 240)
        let corner = mapping!.framePoint(normalizedX: 0, normalizedY: 0.125)
        #expect(corner.x == 0 && corner.y == 0)
        #expect(mapping?.scaleX == 640.0 / 192.0)
        let back = mapping?.normalizedPoint(frameX: 640, frameY: 480)
        #expect(back?.x == 1 && back?.y == 0.875)
    }

    @Test func aFrameShorterThanItsLayoutIsBroken() {
        let layout = FrameLayout(pixelFormat: .yuyv, width: 640, height: 480)
        let (_, mapping) = convertWithConverter([UInt8](repeating: 0, count: 1000), layout, region: .letterbox)
        #expect(mapping == nil)
    }

    @Test func aCorruptJPEGIsBrokenNotACrash() {
        let layout = FrameLayout(pixelFormat: .mjpeg, width: 640, height: 480)
        var bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + [UInt8](repeating: 0x42, count: 500) + [0xFF, 0xD9]
        #expect(convertWithConverter(bytes, layout, region: .letterbox).mapping == nil)
        bytes = [1, 2, 3]
        #expect(convertWithConverter(bytes, layout, region: .letterbox).mapping == nil)
    }

    @Test func jpegImageBoundariesAreFoundByWalkingSegments() {
        // SOI, APP1 segment whose payload contains FF D9 (a thumbnail's EOI), SOS with stuffed and
        // restart bytes, EOI.
        let image: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE1, 0x00, 0x06, 0xFF, 0xD9, 0x00, 0x00,
                              0xFF, 0xDA, 0x00, 0x04, 0x01, 0x02, 0x12, 0xFF, 0x00, 0x34, 0xFF, 0xD0, 0x56, 0xFF, 0xD9]
        let stream = image + [0x00, 0x00] + image
        stream.withUnsafeBytes { raw in
            #expect(JPEGMarkers.imageEnd(in: raw, from: 0) == image.count)
            #expect(JPEGMarkers.imageEnd(in: raw, from: image.count + 2) == stream.count)
            #expect(JPEGMarkers.imageEnd(in: UnsafeRawBufferPointer(rebasing: raw[0..<(image.count - 1)]), from: 0) == nil)
            #expect(JPEGMarkers.looksComplete(UnsafeRawBufferPointer(rebasing: raw[0..<image.count])))
        }
        let padded = image + [0, 0, 0, 0]
        padded.withUnsafeBytes { #expect(JPEGMarkers.looksComplete($0)) }
        let truncated = Array(image.dropLast(3))
        truncated.withUnsafeBytes { #expect(!JPEGMarkers.looksComplete($0)) }
    }
}
