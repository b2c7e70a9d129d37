import CV4L2

/// Cheap structural checks of JPEG data, done before decoding.
public enum JPEGMarkers {
    /// Whether `bytes` starts with SOI (`FF D8`) and ends with EOI (`FF D9`), ignoring the zero
    /// padding some UVC cameras append. A frame cut short in transfer has no EOI.
    public static func looksComplete(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return false }
        var end = bytes.count
        // Some cameras pad the buffer after EOI; look back a little, not through the whole frame.
        let limit = Swift.max(2, bytes.count - 64)
        while end > limit && bytes[end - 1] == 0 { end -= 1 }
        return end >= 4 && bytes[end - 2] == 0xFF && bytes[end - 1] == 0xD9
    }

    /// The end (one past EOI) of the JPEG image starting at `start`, walking marker segments so
    /// an EOI inside an embedded thumbnail or entropy-coded data is not mistaken for the end;
    /// nil when the data ends first.
    public static func imageEnd(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        var position = start
        guard position + 4 <= bytes.count, bytes[position] == 0xFF, bytes[position + 1] == 0xD8 else { return nil }
        position += 2
        while position + 2 <= bytes.count {
            guard bytes[position] == 0xFF else { position += 1; continue }  // tolerate junk between segments
            let marker = bytes[position + 1]
            if marker == 0xFF { position += 1; continue }  // fill byte
            if marker == 0xD9 { return position + 2 }
            if marker == 0x01 || (0xD0...0xD7).contains(marker) { position += 2; continue }
            guard position + 4 <= bytes.count else { return nil }
            let length = Int(bytes[position + 2]) << 8 | Int(bytes[position + 3])
            position += 2 + length
            if marker == 0xDA {
                // Entropy-coded data: ends at the first marker that is not stuffing (FF 00) or a restart.
                while position + 1 < bytes.count {
                    if bytes[position] == 0xFF {
                        let next = bytes[position + 1]
                        if next != 0 && !(0xD0...0xD7).contains(next) && next != 0xFF { break }
                    }
                    position += 1
                }
            }
        }
        return nil
    }
}

/// What a JPEG's header says about the image, read without decoding it.
public struct JPEGHeader: Equatable, Sendable {
    /// The colour space of the coded components, as libjpeg reads it from the header.
    public enum ColorSpace: String, Sendable {
        case grayscale, yCbCr = "YCbCr", rgb = "RGB", cmyk = "CMYK", ycck = "YCCK", other
        /// Whether posewatch can decode it to RGB: libjpeg converts no CMYK or YCCK to RGB.
        public var isDecodable: Bool { self == .grayscale || self == .yCbCr || self == .rgb }
    }

    public var width: Int
    public var height: Int
    public var componentCount: Int
    public var colorSpace: ColorSpace
    /// A progressive JPEG (SOF2): decoded in several scans, each a pass over the image.
    public var isProgressive: Bool
}

/// A libjpeg decompressor (through CV4L2's `pw_jpeg_*` wrapper), created once and reused; owns the
/// C object and destroys it (`jpeg_destroy_decompress`) when its owner ends.
///
/// libjpeg allocates its per-image working memory itself (its memory manager mallocs on each
/// `jpeg_start_decompress`), so MJPEG decoding is not allocation-free the way YUV conversion is.
public struct JPEGDecoder: ~Copyable {
    let decoder: OpaquePointer

    public init() {
        guard let decoder = pw_jpeg_decoder_create() else { fatalError("libjpeg: out of memory creating a decompressor") }
        self.decoder = decoder
    }

    deinit { pw_jpeg_decoder_destroy(decoder) }

    /// The most scans a JPEG may have (`PW_JPEG_MAXIMUM_SCANS`): each scan is a pass over the
    /// image, so this bounds what one small progressive frame can cost to decode.
    public static let maximumScanCount = Int(PW_JPEG_MAXIMUM_SCANS)

    /// What the JPEG header declares (`jpeg_read_header`: nothing is decoded); nil when it is not
    /// a readable JPEG.
    public func header(of bytes: UnsafeRawBufferPointer) -> JPEGHeader? {
        var header = pw_jpeg_header()
        guard let base = bytes.baseAddress,
              pw_jpeg_read_header(decoder, base.assumingMemoryBound(to: UInt8.self), bytes.count, &header) == 0 else { return nil }
        let colorSpace: JPEGHeader.ColorSpace
        switch header.color_space {
        case PW_JPEG_GRAYSCALE: colorSpace = .grayscale
        case PW_JPEG_YCBCR: colorSpace = .yCbCr
        case PW_JPEG_RGB: colorSpace = .rgb
        case PW_JPEG_CMYK: colorSpace = .cmyk
        case PW_JPEG_YCCK: colorSpace = .ycck
        default: colorSpace = .other
        }
        return JPEGHeader(width: Int(header.width), height: Int(header.height), componentCount: Int(header.components),
                          colorSpace: colorSpace, isProgressive: header.is_progressive != 0)
    }

    /// The image size from the JPEG header; nil when it is not a readable JPEG.
    public func size(of bytes: UnsafeRawBufferPointer) -> (width: Int, height: Int)? {
        header(of: bytes).map { ($0.width, $0.height) }
    }

    /// Decodes to RGB24 at 1/`scaleDenominator` size (1, 2, 4, 8) into `output` with rows
    /// `stride` bytes apart. nil when the data is corrupt or does not fit.
    public func decodeRGB(_ bytes: UnsafeRawBufferPointer, scaleDenominator: Int,
                          into output: UnsafeMutableRawBufferPointer, stride: Int) -> (width: Int, height: Int)? {
        var width: Int32 = 0, height: Int32 = 0
        guard let base = bytes.baseAddress, let target = output.baseAddress,
              pw_jpeg_decode_rgb(decoder, base.assumingMemoryBound(to: UInt8.self), bytes.count, UInt32(scaleDenominator),
                                 target.assumingMemoryBound(to: UInt8.self), output.count, stride, &width, &height) == 0
        else { return nil }
        return (Int(width), Int(height))
    }

    /// libjpeg's last error or warning text.
    public var lastMessage: String { String(cString: pw_jpeg_last_message(decoder)) }
}
