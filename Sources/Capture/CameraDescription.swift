import CV4L2

/// The V4L2 capability bits posewatch looks at (`V4L2_CAP_*` in `struct v4l2_capability`).
public struct CameraCapabilities: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `V4L2_CAP_VIDEO_CAPTURE`: single-planar capture, what UVC webcams offer.
    public static let videoCapture = CameraCapabilities(rawValue: UInt32(V4L2_CAP_VIDEO_CAPTURE))
    /// `V4L2_CAP_VIDEO_CAPTURE_MPLANE`: multi-planar capture.
    public static let videoCaptureMultiplanar = CameraCapabilities(rawValue: UInt32(V4L2_CAP_VIDEO_CAPTURE_MPLANE))
    /// `V4L2_CAP_VIDEO_M2M` / `_M2M_MPLANE`: a memory-to-memory device (codec, ISP), not a camera.
    public static let memoryToMemory = CameraCapabilities(rawValue: UInt32(V4L2_CAP_VIDEO_M2M) | UInt32(V4L2_CAP_VIDEO_M2M_MPLANE))
    /// `V4L2_CAP_META_CAPTURE`: metadata node (UVC exposes one per camera), not pictures.
    public static let metadataCapture = CameraCapabilities(rawValue: UInt32(V4L2_CAP_META_CAPTURE))
    /// `V4L2_CAP_STREAMING`: mmap/userptr streaming I/O, which posewatch needs.
    public static let streaming = CameraCapabilities(rawValue: UInt32(V4L2_CAP_STREAMING))
    /// `V4L2_CAP_READWRITE`: read(2) I/O.
    public static let readWrite = CameraCapabilities(rawValue: UInt32(V4L2_CAP_READWRITE))
    /// `V4L2_CAP_DEVICE_CAPS`: `device_caps` is valid and describes this node.
    public static let deviceCapabilities = CameraCapabilities(rawValue: UInt32(V4L2_CAP_DEVICE_CAPS))

    /// Readable names of the bits set, for reports.
    public var names: [String] {
        var names: [String] = []
        if contains(.videoCapture) { names.append("video-capture") }
        if contains(.videoCaptureMultiplanar) { names.append("video-capture-mplane") }
        if !intersection(.memoryToMemory).isEmpty { names.append("m2m") }
        if contains(.metadataCapture) { names.append("meta-capture") }
        if contains(.streaming) { names.append("streaming") }
        if contains(.readWrite) { names.append("read-write") }
        return names
    }
}

/// One frame interval a camera offers for a format and size, as a fraction of seconds.
public struct FrameInterval: Hashable, Sendable, CustomStringConvertible {
    public var numerator: UInt32
    public var denominator: UInt32
    public init(numerator: UInt32, denominator: UInt32) {
        self.numerator = numerator
        self.denominator = denominator
    }
    /// Frames per second (`denominator / numerator`).
    public var framesPerSecond: Double { numerator == 0 ? 0 : Double(denominator) / Double(numerator) }
    public var description: String {
        let fps = framesPerSecond
        return fps == fps.rounded() ? "\(Int(fps))" : String(Int(fps * 100)) .inserting(".", fromEnd: 2)
    }
}

extension String {
    fileprivate func inserting(_ separator: Character, fromEnd count: Int) -> String {
        var characters = Array(self)
        while characters.count <= count { characters.insert("0", at: 0) }
        characters.insert(separator, at: characters.count - count)
        return String(characters)
    }
}

/// A frame size and the frame intervals the camera offers at that size.
public struct FrameSizeDescription: Hashable, Sendable {
    public var width: Int
    public var height: Int
    /// Discrete intervals, or a stepwise range flattened to its ends (minimum and maximum).
    public var intervals: [FrameInterval]
    public init(width: Int, height: Int, intervals: [FrameInterval]) {
        self.width = width
        self.height = height
        self.intervals = intervals
    }
}

/// One pixel format of a camera (`VIDIOC_ENUM_FMT`) with its sizes and rates.
public struct PixelFormatDescription: Hashable, Sendable {
    public var fourCC: FourCC
    /// The driver's description, e.g. "YUYV 4:2:2" or "10-bit Bayer RGRG/GBGB Packed".
    public var name: String
    /// `V4L2_FMT_FLAG_COMPRESSED`.
    public var isCompressed: Bool
    /// `V4L2_FMT_FLAG_EMULATED`: offered by libv4lconvert, not by the hardware.
    public var isEmulated: Bool
    public var frameSizes: [FrameSizeDescription]
    public init(fourCC: FourCC, name: String, isCompressed: Bool, isEmulated: Bool, frameSizes: [FrameSizeDescription]) {
        self.fourCC = fourCC
        self.name = name
        self.isCompressed = isCompressed
        self.isEmulated = isEmulated
        self.frameSizes = frameSizes
    }
}

/// What one `/dev/video*` node says about itself: `VIDIOC_QUERYCAP` plus its formats.
public struct CameraDescription: Hashable, Sendable {
    /// The device node (`/dev/video0`).
    public var path: String
    /// Stable names that link to this node (`/dev/v4l/by-id/usb-…`, `/dev/posewatch-camera`).
    public var stableNames: [String]
    /// `v4l2_capability.driver` (`uvcvideo`, `unicam`, `rp1-cfe`, `vivid`).
    public var driver: String
    /// `v4l2_capability.card`, the product name.
    public var card: String
    /// `v4l2_capability.bus_info` (`usb-0000:01:00.0-1.2`, `platform:vivid-000`).
    public var busInfo: String
    /// This node's capabilities (`device_caps` when present, else `capabilities`).
    public var capabilities: CameraCapabilities
    /// Capture formats with sizes and intervals; emulated ones are marked.
    public var formats: [PixelFormatDescription]

    public init(path: String, stableNames: [String], driver: String, card: String, busInfo: String,
                capabilities: CameraCapabilities, formats: [PixelFormatDescription]) {
        self.path = path
        self.stableNames = stableNames
        self.driver = driver
        self.card = card
        self.busInfo = busInfo
        self.capabilities = capabilities
        self.formats = formats
    }

    /// Drivers of the Raspberry Pi camera receivers: unicam (Pi 0–4) and rp1-cfe (Pi 5).
    public static let raspberryPiCSIDrivers: Set<String> = ["unicam", "bcm2835-unicam", "rp1-cfe"]

    /// Whether this node is a Raspberry Pi CSI camera exposed raw: the CSI receiver's driver, or
    /// nothing but Bayer formats among what the hardware offers. Such a node gives sensor data, not
    /// pictures; it needs libcamera's ISP, which `libcamerify` puts in front of V4L2 applications.
    public var isRawCSISensor: Bool {
        if Self.raspberryPiCSIDrivers.contains(driver) { return true }
        let native = formats.filter { !$0.isEmulated }
        return !native.isEmpty && native.allSatisfy { $0.fourCC.isBayer || $0.name.contains("Bayer") }
    }

    /// Whether the node can capture pictures at all (not a codec, ISP or metadata node).
    public var isVideoCaptureDevice: Bool {
        !capabilities.intersection([.videoCapture, .videoCaptureMultiplanar]).isEmpty
            && capabilities.intersection(.memoryToMemory).isEmpty
    }

    /// Whether posewatch can stream from it: single-planar capture with streaming I/O and at least
    /// one format it can convert (natively or through libv4lconvert) that is not raw Bayer.
    public var isUsableCamera: Bool {
        capabilities.contains(.videoCapture) && capabilities.contains(.streaming)
            && capabilities.intersection(.memoryToMemory).isEmpty
            && !isRawCSISensor
            && formats.contains { FourCC.preferredCaptureFormats.contains($0.fourCC) }
    }
}
