/// A rectangle in frame pixel coordinates (x right, y down; pixel k covers [k, k+1)). May reach
/// outside the frame: that part of the tensor is black.
public struct FrameRectangle: Sendable, Equatable {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }
}

/// Which part of a frame goes into the model's input.
public enum SourceRegion: Sendable, Equatable {
    /// The whole frame, scaled to fit with its aspect ratio kept and black bars on the short
    /// side (what `tf.image.resize_with_pad` does for MoveNet).
    case letterbox
    /// A region the pose stage chose (MoveNet's crop around the previous pose), stretched to the
    /// tensor; parts outside the frame are black.
    case crop(FrameRectangle)
}

/// How model-input coordinates map back to frame pixels: `frame = region.origin + normalized ×
/// region.size`, where normalized coordinates run 0…1 across the tensor (MoveNet's keypoint
/// output) and the region is in frame pixels.
public struct TensorMapping: Sendable, Equatable {
    /// The frame rectangle the tensor shows (for a letterbox, larger than the frame).
    public var region: FrameRectangle
    public var tensorWidth: Int
    public var tensorHeight: Int

    public init(region: FrameRectangle, tensorWidth: Int, tensorHeight: Int) {
        self.region = region
        self.tensorWidth = tensorWidth
        self.tensorHeight = tensorHeight
    }

    /// Where tensor pixel (0, 0)'s corner lies in the frame: `frame = offset + tensor × scale`.
    public var offsetX: Double { region.x }
    public var offsetY: Double { region.y }

    /// Frame pixels per tensor pixel, horizontally and vertically.
    public var scaleX: Double { region.width / Double(tensorWidth) }
    public var scaleY: Double { region.height / Double(tensorHeight) }

    /// A point in normalized tensor coordinates (0…1), in frame pixels.
    public func framePoint(normalizedX: Double, normalizedY: Double) -> (x: Double, y: Double) {
        (region.x + normalizedX * region.width, region.y + normalizedY * region.height)
    }

    /// A point in tensor pixels (0…tensorWidth), in frame pixels.
    public func framePoint(tensorX: Double, tensorY: Double) -> (x: Double, y: Double) {
        (offsetX + tensorX * scaleX, offsetY + tensorY * scaleY)
    }

    /// A point in frame pixels, in normalized tensor coordinates.
    public func normalizedPoint(frameX: Double, frameY: Double) -> (x: Double, y: Double) {
        ((frameX - region.x) / region.width, (frameY - region.y) / region.height)
    }

    /// The region a letterbox shows: the frame centred in a rectangle of the tensor's aspect ratio.
    public static func letterboxRegion(frameWidth: Int, frameHeight: Int, tensorWidth: Int, tensorHeight: Int) -> FrameRectangle {
        let scale = Swift.min(Double(tensorWidth) / Double(frameWidth), Double(tensorHeight) / Double(frameHeight))
        let width = Double(tensorWidth) / scale, height = Double(tensorHeight) / scale
        return FrameRectangle(x: (Double(frameWidth) - width) / 2, y: (Double(frameHeight) - height) / 2, width: width, height: height)
    }
}

/// Converts frames into the pose model's input tensor: packed uint8 RGB, `tensorHeight` rows of
/// `tensorWidth` pixels (NHWC with N = 1), in one pass from the frame's own format.
///
/// Sampling is **bilinear** with half-pixel centres (the convention of TensorFlow's
/// `resize_with_pad`, which MoveNet's published preprocessing uses), 8-bit fixed-point weights.
/// For Y'CbCr formats luma and chroma are interpolated separately, each chroma sample taken from
/// the luma pixel's own chroma site (nearest, no chroma filtering), then converted with the BT.601
/// matrix in the frame's range. Reference: decode to full-size RGB that way, then resize; the
/// tests hold this one-pass version to within ±2 of it.
///
/// MJPEG frames are decoded by libjpeg at the smallest 1/1, 1/2, 1/4 or 1/8 scale that still has
/// at least the tensor's resolution over the region (the only intermediate, into a buffer this
/// converter owns), then sampled the same way.
///
/// Owns its sampling tables, the JPEG decompressor and the JPEG buffer; allocates only in `init`
/// and when a JPEG frame is larger than any before. `convert` writes every tensor byte.
public struct FrameConverter: ~Copyable {
    public let tensorWidth: Int
    public let tensorHeight: Int
    /// Per tensor column: first source column (-1 outside the frame), second column, weight of
    /// the second (0…256).
    let columns: UnsafeMutablePointer<Int32>
    /// The same per tensor row.
    let rows: UnsafeMutablePointer<Int32>
    let jpeg: JPEGDecoder
    var jpegBuffer: UnsafeMutableRawBufferPointer

    /// A converter for a `tensorWidth`×`tensorHeight` RGB tensor. `expectedJPEGSize` reserves the
    /// JPEG buffer up front (a camera's negotiated size), so the first frame does not allocate.
    public init(tensorWidth: Int = 192, tensorHeight: Int = 192, expectedJPEGSize: (width: Int, height: Int)? = nil) {
        precondition(tensorWidth > 0 && tensorHeight > 0)
        self.tensorWidth = tensorWidth
        self.tensorHeight = tensorHeight
        columns = .allocate(capacity: tensorWidth * 3)
        rows = .allocate(capacity: tensorHeight * 3)
        jpeg = JPEGDecoder()
        let reserve = expectedJPEGSize.map { $0.width * $0.height * 3 } ?? 0
        jpegBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Swift.max(reserve, 1), alignment: 16)
    }

    deinit {
        columns.deallocate()
        rows.deallocate()
        jpegBuffer.deallocate()
    }

    /// Converts `frame`'s `region` into `tensor` (which must hold `tensorWidth × tensorHeight × 3`
    /// bytes). Returns how tensor coordinates map back to the frame, or nil when the frame is
    /// broken (too short, undecodable JPEG); the tensor is then unspecified.
    public mutating func convert(_ frame: borrowing Frame, region: SourceRegion, into tensor: UnsafeMutablePointer<UInt8>) -> TensorMapping? {
        convert(bytes: frame.bytes, layout: frame.layout, region: region, into: tensor)
    }

    /// `convert(_:region:into:)` for bytes and a layout given separately.
    public mutating func convert(bytes: UnsafeRawBufferPointer, layout: FrameLayout, region: SourceRegion,
                                 into tensor: UnsafeMutablePointer<UInt8>) -> TensorMapping? {
        let rectangle: FrameRectangle
        switch region {
        case .letterbox:
            rectangle = TensorMapping.letterboxRegion(frameWidth: layout.width, frameHeight: layout.height,
                                                      tensorWidth: tensorWidth, tensorHeight: tensorHeight)
        case .crop(let crop):
            rectangle = crop
        }
        guard rectangle.width > 0, rectangle.height > 0, layout.width > 0, layout.height > 0 else { return nil }
        let mapping = TensorMapping(region: rectangle, tensorWidth: tensorWidth, tensorHeight: tensorHeight)
        if layout.pixelFormat == .mjpeg {
            return convertJPEG(bytes: bytes, layout: layout, rectangle: rectangle, into: tensor) ? mapping : nil
        }
        guard bytes.count >= layout.minimumByteCount, let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        fillTables(rectangle: rectangle, width: layout.width, height: layout.height)
        let stride = layout.bytesPerLine
        let matrix = YCbCrMatrix(layout.colorRange)
        switch layout.pixelFormat {
        case .yuyv:
            resample(Packed422Reader(base: base, stride: stride, lumaOffset: 0, blueOffset: 1, redOffset: 3), YCbCrToRGB(matrix: matrix), into: tensor)
        case .uyvy:
            resample(Packed422Reader(base: base, stride: stride, lumaOffset: 1, blueOffset: 0, redOffset: 2), YCbCrToRGB(matrix: matrix), into: tensor)
        case .yvyu:
            resample(Packed422Reader(base: base, stride: stride, lumaOffset: 0, blueOffset: 3, redOffset: 1), YCbCrToRGB(matrix: matrix), into: tensor)
        case .nv12, .nv21:
            let chroma = base + stride * layout.height
            let blue = layout.pixelFormat == .nv12 ? 0 : 1
            resample(SemiPlanar420Reader(luma: base, chroma: chroma, stride: stride, blueOffset: blue, redOffset: 1 - blue),
                     YCbCrToRGB(matrix: matrix), into: tensor)
        case .yuv420, .yvu420, .yuv422Planar:
            let chromaStride = layout.chromaBytesPerLine
            let chromaRows = layout.pixelFormat == .yuv422Planar ? layout.height : layout.chromaHeight420
            let first = base + stride * layout.height
            let second = first + chromaStride * chromaRows
            let (blue, red) = layout.pixelFormat == .yvu420 ? (second, first) : (first, second)
            resample(PlanarReader(luma: base, blue: blue, red: red, lumaStride: stride, chromaStride: chromaStride,
                                  verticalShift: layout.pixelFormat == .yuv422Planar ? 0 : 1),
                     YCbCrToRGB(matrix: matrix), into: tensor)
        case .rgb24:
            resample(PackedRGBReader(base: base, stride: stride, first: 0, third: 2), PassThrough(), into: tensor)
        case .bgr24:
            resample(PackedRGBReader(base: base, stride: stride, first: 2, third: 0), PassThrough(), into: tensor)
        case .grey:
            resample(GreyReader(base: base, stride: stride), PassThrough(), into: tensor)
        case .mjpeg:
            return nil
        }
        return mapping
    }

    /// Decodes a JPEG at the cheapest sufficient scale into `jpegBuffer`, then resamples that.
    /// The header is checked before anything is decoded: a frame whose size is not the layout's
    /// (the camera's negotiated size, a clip's first frame) is broken, so what a frame can cost
    /// is set by the size the source agreed to, not by what one frame declares (up to
    /// 65535x65535), and the region, given in the layout's pixels, maps onto the picture.
    mutating func convertJPEG(bytes: UnsafeRawBufferPointer, layout: FrameLayout, rectangle: FrameRectangle,
                              into tensor: UnsafeMutablePointer<UInt8>) -> Bool {
        guard JPEGMarkers.looksComplete(bytes), let header = jpeg.header(of: bytes),
              header.width == layout.width, header.height == layout.height, header.colorSpace.isDecodable else { return false }
        let size = (width: header.width, height: header.height)
        // A layout is within 8192x8192; checked again here because the buffer is sized from it.
        guard FrameLayout.dimensionRange.contains(size.width), FrameLayout.dimensionRange.contains(size.height) else { return false }
        var denominator = 8
        while denominator > 1 && (rectangle.width / Double(denominator) < Double(tensorWidth)
                                  || rectangle.height / Double(denominator) < Double(tensorHeight)) {
            denominator /= 2
        }
        let scaledWidth = (size.width + denominator - 1) / denominator
        let scaledHeight = (size.height + denominator - 1) / denominator
        let needed = scaledWidth * 3 * scaledHeight
        if jpegBuffer.count < needed {
            jpegBuffer.deallocate()
            jpegBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: needed, alignment: 16)
        }
        guard let decoded = jpeg.decodeRGB(bytes, scaleDenominator: denominator, into: jpegBuffer, stride: scaledWidth * 3) else {
            return false
        }
        // libjpeg rounds scaled sizes up; sample in scaled pixels, keep the mapping in frame pixels.
        let scaleX = Double(decoded.width) / Double(size.width), scaleY = Double(decoded.height) / Double(size.height)
        let scaled = FrameRectangle(x: rectangle.x * scaleX, y: rectangle.y * scaleY,
                                    width: rectangle.width * scaleX, height: rectangle.height * scaleY)
        fillTables(rectangle: scaled, width: decoded.width, height: decoded.height)
        let base = UnsafePointer(jpegBuffer.baseAddress!.assumingMemoryBound(to: UInt8.self))
        resample(PackedRGBReader(base: base, stride: scaledWidth * 3, first: 0, third: 2), PassThrough(), into: tensor)
        return true
    }

    /// Fills the column and row tables for `rectangle` over a `width`×`height` image.
    func fillTables(rectangle: FrameRectangle, width: Int, height: Int) {
        Self.fillTable(columns, count: tensorWidth, origin: rectangle.x, extent: rectangle.width, size: width)
        Self.fillTable(rows, count: tensorHeight, origin: rectangle.y, extent: rectangle.height, size: height)
    }

    /// Half-pixel centres: tensor pixel i covers [origin + i·step, origin + (i+1)·step) and is
    /// sampled at its centre, minus half a source pixel to index source pixel centres. Outside the
    /// image it is black; inside, positions are clamped to the outermost pixel centres.
    static func fillTable(_ table: UnsafeMutablePointer<Int32>, count: Int, origin: Double, extent: Double, size: Int) {
        let step = extent / Double(count)
        let last = Double(size - 1)
        for index in 0..<count {
            let centre = origin + (Double(index) + 0.5) * step
            if centre < 0 || centre >= Double(size) {
                table[3 * index] = -1
                table[3 * index + 1] = -1
                table[3 * index + 2] = 0
                continue
            }
            let position = Swift.min(Swift.max(centre - 0.5, 0), last)
            var first = Int(position)
            var weight = Int32(((position - Double(first)) * 256).rounded())
            if weight == 256 { first += 1; weight = 0 }
            table[3 * index] = Int32(first)
            table[3 * index + 1] = Int32(Swift.min(first + 1, size - 1))
            table[3 * index + 2] = weight
        }
    }

    /// The one-pass bilinear loop, specialised per reader and output transform.
    @inline(__always)
    func resample<Reader: ChannelReader, Output: PixelTransform>(_ reader: Reader, _ output: Output, into tensor: UnsafeMutablePointer<UInt8>) {
        let width = tensorWidth
        for row in 0..<tensorHeight {
            var out = tensor + row * width * 3
            let top = rows[3 * row]
            if top < 0 {
                out.update(repeating: 0, count: width * 3)
                continue
            }
            let rowA = reader.row(Int(top)), rowB = reader.row(Int(rows[3 * row + 1]))
            let weightB = rows[3 * row + 2], weightA = 256 - weightB
            for column in 0..<width {
                let left = columns[3 * column]
                if left < 0 {
                    out[0] = 0; out[1] = 0; out[2] = 0
                    out += 3
                    continue
                }
                let x0 = Int(left), x1 = Int(columns[3 * column + 1])
                let weightRight = columns[3 * column + 2], weightLeft = 256 - weightRight
                let a = reader.channels(rowA, x0), b = reader.channels(rowA, x1)
                let c = reader.channels(rowB, x0), d = reader.channels(rowB, x1)
                // Values ×65536 after both passes, kept ×256 (8 fractional bits) for the matrix.
                let v0 = ((a.0 &* weightLeft &+ b.0 &* weightRight) &* weightA &+ (c.0 &* weightLeft &+ d.0 &* weightRight) &* weightB &+ 128) &>> 8
                let v1 = ((a.1 &* weightLeft &+ b.1 &* weightRight) &* weightA &+ (c.1 &* weightLeft &+ d.1 &* weightRight) &* weightB &+ 128) &>> 8
                let v2 = ((a.2 &* weightLeft &+ b.2 &* weightRight) &* weightA &+ (c.2 &* weightLeft &+ d.2 &* weightRight) &* weightB &+ 128) &>> 8
                output.store(v0, v1, v2, to: out)
                out += 3
            }
        }
    }
}

// MARK: readers: three channels of one pixel, per format

protocol ChannelReader {
    associatedtype Row
    func row(_ y: Int) -> Row
    func channels(_ row: Row, _ x: Int) -> (Int32, Int32, Int32)
}

/// YUYV / UYVY / YVYU: two pixels per four bytes sharing one Cb and one Cr.
struct Packed422Reader: ChannelReader {
    let base: UnsafePointer<UInt8>
    let stride: Int
    let lumaOffset: Int
    let blueOffset: Int
    let redOffset: Int
    @inline(__always) func row(_ y: Int) -> UnsafePointer<UInt8> { base + y * stride }
    @inline(__always) func channels(_ row: UnsafePointer<UInt8>, _ x: Int) -> (Int32, Int32, Int32) {
        let pair = row + (x &>> 1) &* 4
        return (Int32(row[x &* 2 &+ lumaOffset]), Int32(pair[blueOffset]), Int32(pair[redOffset]))
    }
}

/// NV12 / NV21: luma plane, then interleaved chroma at half width and height.
struct SemiPlanar420Reader: ChannelReader {
    let luma: UnsafePointer<UInt8>
    let chroma: UnsafePointer<UInt8>
    let stride: Int
    let blueOffset: Int
    let redOffset: Int
    @inline(__always) func row(_ y: Int) -> (UnsafePointer<UInt8>, UnsafePointer<UInt8>) {
        (luma + y * stride, chroma + (y >> 1) * stride)
    }
    @inline(__always) func channels(_ row: (UnsafePointer<UInt8>, UnsafePointer<UInt8>), _ x: Int) -> (Int32, Int32, Int32) {
        let pair = row.1 + (x &>> 1) &* 2
        return (Int32(row.0[x]), Int32(pair[blueOffset]), Int32(pair[redOffset]))
    }
}

/// I420 / YV12 / 4:2:2 planar: three planes, chroma at half width (and half height for 4:2:0).
struct PlanarReader: ChannelReader {
    let luma: UnsafePointer<UInt8>
    let blue: UnsafePointer<UInt8>
    let red: UnsafePointer<UInt8>
    let lumaStride: Int
    let chromaStride: Int
    let verticalShift: Int
    @inline(__always) func row(_ y: Int) -> (UnsafePointer<UInt8>, UnsafePointer<UInt8>, UnsafePointer<UInt8>) {
        let chromaRow = (y >> verticalShift) * chromaStride
        return (luma + y * lumaStride, blue + chromaRow, red + chromaRow)
    }
    @inline(__always) func channels(_ row: (UnsafePointer<UInt8>, UnsafePointer<UInt8>, UnsafePointer<UInt8>), _ x: Int) -> (Int32, Int32, Int32) {
        let half = x &>> 1
        return (Int32(row.0[x]), Int32(row.1[half]), Int32(row.2[half]))
    }
}

/// RGB24 / BGR24: `first` and `third` are the byte offsets of red and blue.
struct PackedRGBReader: ChannelReader {
    let base: UnsafePointer<UInt8>
    let stride: Int
    let first: Int
    let third: Int
    @inline(__always) func row(_ y: Int) -> UnsafePointer<UInt8> { base + y * stride }
    @inline(__always) func channels(_ row: UnsafePointer<UInt8>, _ x: Int) -> (Int32, Int32, Int32) {
        let pixel = row + x &* 3
        return (Int32(pixel[first]), Int32(pixel[1]), Int32(pixel[third]))
    }
}

/// GREY: one luminance byte, shown as equal R, G and B.
struct GreyReader: ChannelReader {
    let base: UnsafePointer<UInt8>
    let stride: Int
    @inline(__always) func row(_ y: Int) -> UnsafePointer<UInt8> { base + y * stride }
    @inline(__always) func channels(_ row: UnsafePointer<UInt8>, _ x: Int) -> (Int32, Int32, Int32) {
        let value = Int32(row[x])
        return (value, value, value)
    }
}

// MARK: output transforms: three interpolated channels (×256) to one RGB pixel

protocol PixelTransform {
    func store(_ c0: Int32, _ c1: Int32, _ c2: Int32, to output: UnsafeMutablePointer<UInt8>)
}

@inline(__always) func clampToByte(_ value: Int32) -> UInt8 {
    UInt8(truncatingIfNeeded: value < 0 ? 0 : value > 255 ? 255 : value)
}

/// BT.601 Y'CbCr → R'G'B' coefficients ×256, for one quantisation range.
struct YCbCrMatrix {
    let lumaScale: Int32, lumaOffset: Int32
    let redFromCr: Int32, greenFromCb: Int32, greenFromCr: Int32, blueFromCb: Int32

    init(_ range: ColorRange) {
        switch range {
        case .limited:
            // 255/219 = 1.164, 1.596, 0.392, 0.813, 2.018 (×256), luma from 16.
            (lumaScale, lumaOffset, redFromCr, greenFromCb, greenFromCr, blueFromCb) = (298, 16 * 256, 409, 100, 208, 516)
        case .full:
            // JFIF: 1.402, 0.344136, 0.714136, 1.772 (×256).
            (lumaScale, lumaOffset, redFromCr, greenFromCb, greenFromCr, blueFromCb) = (256, 0, 359, 88, 183, 454)
        }
    }
}

struct YCbCrToRGB: PixelTransform {
    let matrix: YCbCrMatrix
    @inline(__always) func store(_ y: Int32, _ cb: Int32, _ cr: Int32, to output: UnsafeMutablePointer<UInt8>) {
        // Inputs ×256; products ×65536; +32768 rounds before the shift back to 8 bits.
        let luma = matrix.lumaScale &* (y &- matrix.lumaOffset) &+ 32768
        let blue = cb &- 32768, red = cr &- 32768
        output[0] = clampToByte((luma &+ matrix.redFromCr &* red) &>> 16)
        output[1] = clampToByte((luma &- matrix.greenFromCb &* blue &- matrix.greenFromCr &* red) &>> 16)
        output[2] = clampToByte((luma &+ matrix.blueFromCb &* blue) &>> 16)
    }
}

struct PassThrough: PixelTransform {
    @inline(__always) func store(_ r: Int32, _ g: Int32, _ b: Int32, to output: UnsafeMutablePointer<UInt8>) {
        output[0] = clampToByte((r &+ 128) &>> 8)
        output[1] = clampToByte((g &+ 128) &>> 8)
        output[2] = clampToByte((b &+ 128) &>> 8)
    }
}
