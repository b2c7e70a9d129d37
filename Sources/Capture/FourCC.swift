import CV4L2

/// A V4L2 pixel format code (`V4L2_PIX_FMT_*`): four ASCII characters packed little-endian.
public struct FourCC: Hashable, Sendable, CustomStringConvertible {
    /// The packed code as the kernel uses it.
    public let rawValue: UInt32

    /// Wraps a packed code.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Packs four characters, as `v4l2_fourcc(a, b, c, d)` does. Returns nil unless exactly four
    /// ASCII characters are given.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 4, bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
        rawValue = UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24
    }

    /// The four characters, with unprintable bytes shown as `?` and trailing spaces kept
    /// (`"YUYV"`, `"MJPG"`, `"pRAA"`). Bit 31 marks big-endian variants; it is shown as `-BE`.
    public var description: String {
        var text = ""
        for shift in stride(from: 0, to: 32, by: 8) {
            var byte = UInt8(truncatingIfNeeded: rawValue >> UInt32(shift))
            if shift == 24 { byte &= 0x7F }
            text.append(byte >= 0x20 && byte < 0x7F ? Character(UnicodeScalar(byte)) : "?")
        }
        return rawValue & (1 << 31) != 0 ? text + "-BE" : text
    }

    public static let yuyv = FourCC(rawValue: PW_PIX_FMT_YUYV)
    public static let uyvy = FourCC(rawValue: PW_PIX_FMT_UYVY)
    public static let yvyu = FourCC(rawValue: PW_PIX_FMT_YVYU)
    public static let nv12 = FourCC(rawValue: PW_PIX_FMT_NV12)
    public static let nv21 = FourCC(rawValue: PW_PIX_FMT_NV21)
    public static let yuv420 = FourCC(rawValue: PW_PIX_FMT_YUV420)
    public static let yvu420 = FourCC(rawValue: PW_PIX_FMT_YVU420)
    /// `V4L2_PIX_FMT_YUV422P`: planar 4:2:2, what a Y4M `C422` file holds.
    public static let yuv422Planar = FourCC(rawValue: PW_PIX_FMT_YUV422P)
    public static let rgb24 = FourCC(rawValue: PW_PIX_FMT_RGB24)
    public static let bgr24 = FourCC(rawValue: PW_PIX_FMT_BGR24)
    public static let grey = FourCC(rawValue: PW_PIX_FMT_GREY)
    public static let mjpeg = FourCC(rawValue: PW_PIX_FMT_MJPEG)
    public static let jpeg = FourCC(rawValue: PW_PIX_FMT_JPEG)
    public static let h264 = FourCC(rawValue: PW_PIX_FMT_H264)

    /// Raw Bayer sensor formats (8/10/12-bit, unpacked and MIPI-packed). A camera that offers only
    /// these is a bare CSI sensor that needs an ISP (libcamera) before its frames are pictures.
    public static let bayerFormats: Set<FourCC> = Set([
        PW_PIX_FMT_SBGGR8, PW_PIX_FMT_SGBRG8, PW_PIX_FMT_SGRBG8, PW_PIX_FMT_SRGGB8,
        PW_PIX_FMT_SBGGR10, PW_PIX_FMT_SGBRG10, PW_PIX_FMT_SGRBG10, PW_PIX_FMT_SRGGB10,
        PW_PIX_FMT_SBGGR10P, PW_PIX_FMT_SGBRG10P, PW_PIX_FMT_SGRBG10P, PW_PIX_FMT_SRGGB10P,
        PW_PIX_FMT_SBGGR12, PW_PIX_FMT_SGBRG12, PW_PIX_FMT_SGRBG12, PW_PIX_FMT_SRGGB12,
        PW_PIX_FMT_SBGGR12P, PW_PIX_FMT_SGBRG12P, PW_PIX_FMT_SGRBG12P, PW_PIX_FMT_SRGGB12P,
    ].map(FourCC.init(rawValue:)))

    /// Whether this is a raw Bayer format (see `bayerFormats`).
    public var isBayer: Bool { Self.bayerFormats.contains(self) }

    /// The formats posewatch converts into the pose model's RGB input itself or through
    /// libv4lconvert, in order of preference (cheapest conversion first).
    public static let preferredCaptureFormats: [FourCC] = [.yuyv, .uyvy, .yvyu, .nv12, .nv21, .yuv420, .yvu420, .rgb24, .bgr24, .mjpeg, .jpeg, .grey]
}
