import CV4L2
import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// Finds and describes the V4L2 video nodes on this machine.
public enum CameraEnumeration {
    /// Every `/dev/video*` node, sorted by number (`video2` before `video10`).
    public static func videoNodePaths(directory: String = "/dev") -> [String] {
        directoryEntries(directory)
            .filter { $0.hasPrefix("video") && Int($0.dropFirst(5)) != nil }
            .sorted { Int($0.dropFirst(5))! < Int($1.dropFirst(5))! }
            .map { "\(directory)/\($0)" }
    }

    /// Stable names (symlinks in `/dev/v4l/by-id`, `/dev/v4l/by-path` and `/dev/posewatch-camera`)
    /// keyed by the node they resolve to.
    public static func stableNames() -> [String: [String]] {
        var names: [String: [String]] = [:]
        var links: [String] = ["/dev/posewatch-camera"]
        for directory in ["/dev/v4l/by-id", "/dev/v4l/by-path"] {
            links += directoryEntries(directory).sorted().map { "\(directory)/\($0)" }
        }
        for link in links {
            guard let target = resolvedPath(link) else { continue }
            names[target, default: []].append(link)
        }
        return names
    }

    /// Opens `path` through libv4l2 and describes it: capabilities, formats, sizes, intervals.
    /// Throws when the node cannot be opened or does not answer `VIDIOC_QUERYCAP`.
    public static func describe(path: String, stableNames: [String] = []) throws(SystemCallError) -> CameraDescription {
        let fd = pw_v4l2_open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw SystemCallError("open", path, .current) }
        defer { _ = pw_v4l2_close(fd) }

        var capability = v4l2_capability()
        guard ioctl(fd, PW_VIDIOC_QUERYCAP, &capability, calls: LibV4L2SystemCalls()) == 0 else {
            throw SystemCallError("VIDIOC_QUERYCAP", path, .current)
        }
        let allCapabilities = CameraCapabilities(rawValue: capability.capabilities)
        let capabilities = allCapabilities.contains(.deviceCapabilities)
            ? CameraCapabilities(rawValue: capability.device_caps) : allCapabilities

        let bufferType: UInt32 = capabilities.contains(.videoCaptureMultiplanar) && !capabilities.contains(.videoCapture)
            ? V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE.rawValue : V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        let formats = capabilities.intersection([.videoCapture, .videoCaptureMultiplanar]).isEmpty
            ? [] : Self.formats(fd: fd, calls: LibV4L2SystemCalls(), bufferType: bufferType)
        return CameraDescription(
            path: path, stableNames: stableNames,
            driver: cString(capability.driver), card: cString(capability.card),
            busInfo: cString(capability.bus_info), capabilities: capabilities, formats: formats)
    }

    /// `VIDIOC_ENUM_FMT` for one buffer type, with each format's sizes and intervals.
    static func formats<Calls: V4L2SystemCalls>(fd: Int32, calls: Calls, bufferType: UInt32) -> [PixelFormatDescription] {
        var formats: [PixelFormatDescription] = []
        var index: UInt32 = 0
        while true {
            var format = v4l2_fmtdesc()
            format.index = index
            format.type = bufferType
            guard ioctl(fd, PW_VIDIOC_ENUM_FMT, &format, calls: calls) == 0 else { break }
            let fourCC = FourCC(rawValue: format.pixelformat)
            formats.append(PixelFormatDescription(
                fourCC: fourCC,
                name: cString(format.description),
                isCompressed: format.flags & UInt32(V4L2_FMT_FLAG_COMPRESSED) != 0,
                isEmulated: format.flags & UInt32(V4L2_FMT_FLAG_EMULATED) != 0,
                frameSizes: frameSizes(fd: fd, fourCC: fourCC, calls: calls)))
            index += 1
        }
        return formats
    }

    /// `VIDIOC_ENUM_FRAMESIZES` for one format; stepwise ranges give their smallest and largest size.
    static func frameSizes<Calls: V4L2SystemCalls>(fd: Int32, fourCC: FourCC, calls: Calls) -> [FrameSizeDescription] {
        var sizes: [FrameSizeDescription] = []
        var index: UInt32 = 0
        while true {
            var size = v4l2_frmsizeenum()
            size.index = index
            size.pixel_format = fourCC.rawValue
            guard ioctl(fd, PW_VIDIOC_ENUM_FRAMESIZES, &size, calls: calls) == 0 else { break }
            if size.type == V4L2_FRMSIZE_TYPE_DISCRETE.rawValue {
                let width = Int(size.discrete.width), height = Int(size.discrete.height)
                sizes.append(FrameSizeDescription(width: width, height: height,
                    intervals: frameIntervals(fd: fd, fourCC: fourCC, width: width, height: height, calls: calls)))
            } else {
                let stepwise = size.stepwise
                for (width, height) in [(stepwise.min_width, stepwise.min_height), (stepwise.max_width, stepwise.max_height)] {
                    sizes.append(FrameSizeDescription(width: Int(width), height: Int(height),
                        intervals: frameIntervals(fd: fd, fourCC: fourCC, width: Int(width), height: Int(height), calls: calls)))
                }
                break
            }
            index += 1
        }
        return sizes
    }

    /// `VIDIOC_ENUM_FRAMEINTERVALS` for one format and size; stepwise ranges give their ends.
    static func frameIntervals<Calls: V4L2SystemCalls>(fd: Int32, fourCC: FourCC, width: Int, height: Int, calls: Calls) -> [FrameInterval] {
        var intervals: [FrameInterval] = []
        var index: UInt32 = 0
        while true {
            var interval = v4l2_frmivalenum()
            interval.index = index
            interval.pixel_format = fourCC.rawValue
            interval.width = UInt32(width)
            interval.height = UInt32(height)
            guard ioctl(fd, PW_VIDIOC_ENUM_FRAMEINTERVALS, &interval, calls: calls) == 0 else { break }
            if interval.type == V4L2_FRMIVAL_TYPE_DISCRETE.rawValue {
                intervals.append(FrameInterval(numerator: interval.discrete.numerator, denominator: interval.discrete.denominator))
            } else {
                // Fastest first, like the discrete lists drivers usually give.
                intervals.append(FrameInterval(numerator: interval.stepwise.min.numerator, denominator: interval.stepwise.min.denominator))
                intervals.append(FrameInterval(numerator: interval.stepwise.max.numerator, denominator: interval.stepwise.max.denominator))
                break
            }
            index += 1
        }
        return intervals
    }

    /// One ioctl through the camera's system-call layer (EINTR retried there); 0 on success, -1 otherwise.
    static func ioctl<Argument, Calls: V4L2SystemCalls>(_ fd: Int32, _ request: UInt, _ argument: inout Argument, calls: Calls) -> Int32 {
        ((try? calls.control(fd, request, &argument)) ?? false) ? 0 : -1
    }

    static func directoryEntries(_ path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    static func resolvedPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

/// Reads a fixed-size C char array (imported as a tuple) up to its first NUL.
func cString<T>(_ tuple: T) -> String {
    withUnsafeBytes(of: tuple) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
}

/// Which device the camera source opens when the config names none.
public enum CameraSelection {
    /// The configured device if there is one; else, among usable cameras, the one the udev rule
    /// named `/dev/posewatch-camera`; else the first usable camera by its `/dev/v4l/by-id` name
    /// (stable across re-plugging, unlike `/dev/videoN`), or its node. nil when none is usable.
    public static func resolve(configured: String?, cameras: [CameraDescription]) -> String? {
        if let configured { return configured }
        let usable = cameras.filter(\.isUsableCamera)
        if usable.contains(where: { $0.stableNames.contains("/dev/posewatch-camera") }) { return "/dev/posewatch-camera" }
        guard let first = usable.first else { return nil }
        return first.stableNames.first { $0.hasPrefix("/dev/v4l/by-id/") } ?? first.path
    }

    /// `resolve` over the cameras on this machine (describes every `/dev/video*` node).
    public static func resolveOnThisMachine(configured: String?) -> String? {
        if let configured { return configured }
        let names = CameraEnumeration.stableNames()
        let cameras = CameraEnumeration.videoNodePaths().compactMap { path in
            try? CameraEnumeration.describe(path: path, stableNames: names[path] ?? [])
        }
        return resolve(configured: nil, cameras: cameras)
    }
}
