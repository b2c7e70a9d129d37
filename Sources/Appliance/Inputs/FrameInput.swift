#if canImport(Glibc)
import Glibc
#endif
import Capture
import LinuxSystem

/// Something that reads frames from whichever source the user named. Generic over the source so
/// the per-frame calls are direct (no existential), whether a file or a camera.
protocol FrameConsumer: ~Copyable {
    associatedtype Result
    mutating func consume<Source: FrameSource & ~Copyable>(_ source: inout Source) throws -> Result
}

/// Where frames come from: a recorded clip or a camera.
enum FrameInput: Equatable {
    /// A YUV4MPEG2 file (`ffmpeg -i clip.mp4 -pix_fmt yuv420p -f yuv4mpegpipe clip.y4m`).
    case y4m(path: String)
    /// Concatenated JPEGs (`ffmpeg -i clip.mp4 -c:v mjpeg -f mjpeg clip.mjpeg`), at a given rate.
    case mjpeg(path: String, framesPerSecond: Double)
    /// A V4L2 camera by path or stable name.
    case camera(device: String)

    /// The file kind from its first bytes (not its name): Y4M files start with "YUV4MPEG2 ",
    /// JPEG streams with FF D8.
    static func file(_ path: String, framesPerSecond: Double?) throws(InputError) -> FrameInput {
        let head = try InputFile.prefix(of: path, count: 10)
        if head.starts(with: Array("YUV4MPEG2 ".utf8)) { return .y4m(path: path) }
        if head.starts(with: [0xFF, 0xD8]) {
            guard let framesPerSecond else {
                throw InputError("\(MessageExcerpt.path(path)): an MJPEG stream carries no frame rate; give it with --fps")
            }
            return .mjpeg(path: path, framesPerSecond: framesPerSecond)
        }
        throw InputError("\(MessageExcerpt.path(path)): not a Y4M or MJPEG file; convert it with 'ffmpeg -i \(MessageExcerpt.path(path)) -pix_fmt yuv420p -f yuv4mpegpipe clip.y4m'")
    }

    /// Opens the source and hands it to `consumer`.
    func read<Consumer: FrameConsumer & ~Copyable>(with consumer: inout Consumer, cameraFramesPerSecond: Double = 15) throws -> Consumer.Result {
        switch self {
        case .y4m(let path):
            var source: Y4MFileSource
            do { source = try Y4MFileSource(path: path, pacing: .asFastAsPossible) } catch { throw InputError(error.description) }
            return try consumer.consume(&source)
        case .mjpeg(let path, let framesPerSecond):
            var source: MJPEGFileSource
            do { source = try MJPEGFileSource(path: path, framesPerSecond: framesPerSecond, pacing: .asFastAsPossible) } catch { throw InputError(error.description) }
            return try consumer.consume(&source)
        case .camera(let device):
            var source = CameraSource(
                configuration: CameraConfiguration(device: device, request: CaptureRequest(framesPerSecond: cameraFramesPerSecond)),
                calls: LibV4L2SystemCalls())
            return try consumer.consume(&source)
        }
    }
}

/// A bad input file or argument: one line for the user, exit status 2.
struct InputError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }

    /// A clip that opened but of whose frames none could be used: otherwise a clip of CMYK or
    /// over-scanned JPEGs ended with "0 frames" and exit 0, as if it were merely empty. nil when
    /// some frame was used or none was refused.
    static func noUsableFrame(in path: String, statistics: CaptureStatistics) -> InputError? {
        guard statistics.delivered == 0, statistics.broken > 0 else { return nil }
        return InputError("\(path): none of its \(statistics.broken) frames could be decoded (damaged, not the size of the first, "
            + "or a JPEG of more than \(JPEGDecoder.maximumScanCount) scans); re-encode it with "
            + "'ffmpeg -i CLIP -pix_fmt yuv420p -f yuv4mpegpipe clip.y4m'")
    }
}

enum InputFile {
    /// The first `count` bytes of a file (fewer if it is shorter).
    static func prefix(of path: String, count: Int) throws(InputError) -> [UInt8] {
        do throws(SystemCallError) {
            // A FIFO, a device or a directory is refused here, before anything waits on it.
            let descriptor = try OwnedFileDescriptor.openRegularFile(path)
            var bytes = [UInt8](repeating: 0, count: count)
            let read = bytes.withUnsafeMutableBytes { Glibc.read(descriptor.rawValue, $0.baseAddress, count) }
            guard read >= 0 else { throw SystemCallError("read", path, .current) }
            return Array(bytes.prefix(read))
        } catch {
            throw InputError(error.description)
        }
    }
}
