import Capture
import InferenceCore
import LinuxSystem
import PoseEstimation

/// A keypoint recording: NumPy `float[T, 17, 3]` = COCO-17 (x, y, score) in frame pixels, one row
/// per frame at a known rate. An all-zero row is a frame where nobody was seen.
///
/// Read through a window of `windowByteCount` bytes (`FileWindow`, as the clip sources read
/// clips), never copied whole: what a file costs in memory is the window, whatever its frame
/// count. (Copying it once made a sparse file of 3,000,000 frames, 4 KiB on disk, take 1.22 GB
/// and abort under a 1 GB address-space limit.) The header is checked against the file's size
/// before any data is read, and every value is checked once (`init`) before the first pose is
/// handed out, so a bad value refuses the file before any output. Owns the file and the window.
struct KeypointFile: ~Copyable {
    /// The most frames a keypoint file may have: two hours at 30 fps (the longest keypoint set in
    /// ../shared/data has 4,385). Checked from the header, before anything is read: replaying
    /// costs about 60 µs a frame even when nobody is in it (release build), so a 4 KiB sparse
    /// file declaring millions of frames would otherwise cost minutes.
    static let maximumFrameCount = 216_000
    /// The window's size: 64 KiB, 321 float32 rows or 160 float64 ones.
    static let windowByteCount = 64 << 10

    /// The file's path, escaped for messages (`MessageExcerpt.path`).
    let path: String
    let format: RowFormat
    let frameCount: Int
    private var window: FileWindow
    private var nextFrame: Int

    /// How the rows are stored: element type and where they start.
    struct RowFormat {
        var elementByteCount: Int
        var dataOffset: Int
        /// Bytes per row: 17 joints × (x, y, score).
        var rowByteCount: Int { Joint.count * 3 * elementByteCount }
    }

    /// Opens and checks a `.npy` keypoint file (float32 or float64): header, size, every value.
    init(path: String) throws(InputError) {
        let name = MessageExcerpt.path(path)
        var window: FileWindow
        do throws(SystemCallError) {
            window = try FileWindow(path: path, capacity: Self.windowByteCount, maximumCapacity: NumPyHeader.maximumHeaderLength + 12)
        } catch {
            throw InputError("\(name): cannot read: \(error.reason)")
        }
        let header = try Self.readHeader(&window, path: name)
        let format = try Self.check(header, name: name)
        // Every value checked before the caller sees the first pose (and prints anything),
        // a window at a time.
        let rowsPerWindow = Self.windowByteCount / format.rowByteCount
        var frame = 0
        while frame < header.shape[0] {
            let rows = Swift.min(rowsPerWindow, header.shape[0] - frame)
            let bytes = try Self.readRows(frame, count: rows, from: &window, format: format, path: name)
            if let bad = Self.firstNonFiniteRow(bytes, format: format) {
                throw InputError("\(name): keypoints contain NaN or infinity (frame \(frame + bad))")
            }
            frame += rows
        }
        self.path = name
        self.format = format
        self.frameCount = header.shape[0]
        self.window = window
        self.nextFrame = 0
    }

    /// The header from the window's first bytes, checked against the file's size.
    private static func readHeader(_ window: inout FileWindow, path: String) throws(InputError) -> NumPyHeader {
        do throws(NumPyArray.FormatError) {
            let prefixLength = try NumPyHeader.prefixLength(window.bytes(at: 0, atLeast: 12))
            let header = try NumPyHeader(parsing: Array(window.bytes(at: 0, atLeast: prefixLength)))
            try header.checkDataLength(fileSize: window.fileSize)
            return header
        } catch {
            throw InputError("\(path): \(error.message)")
        }
    }

    /// Checks what the header declares (`name` starts the messages): `float[T, 17, 3]`, float32
    /// or float64, T at most `maximumFrameCount`. Separate from the file so the fuzz target
    /// (Tests/Fuzz/KeypointFuzz.swift) can drive it with any header the parser accepts.
    static func check(_ header: NumPyHeader, name: String) throws(InputError) -> RowFormat {
        guard header.shape.count == 3, header.shape[1] == Joint.count, header.shape[2] == 3 else {
            throw InputError("\(name): keypoints must be float[T,17,3] (COCO-17 x, y, score), not \(header.elementType)\(header.shape)")
        }
        let elementByteCount: Int
        switch header.elementType {
        case .float32: elementByteCount = 4
        case .float64: elementByteCount = 8
        default: throw InputError("\(name): keypoints must be float32 or float64, not \(header.elementType)")
        }
        guard header.shape[0] <= maximumFrameCount else {
            throw InputError("\(name): \(header.shape[0]) frames of keypoints, more than the \(maximumFrameCount) posewatch replays; split the file")
        }
        return RowFormat(elementByteCount: elementByteCount, dataOffset: header.dataOffset)
    }

    /// One row's pose: nil when the row is all zero (nobody seen). Throws on NaN or infinity
    /// (a float64 beyond Float's range becomes infinity and is refused too).
    static func pose(fromRow row: UnsafeRawBufferPointer, format: RowFormat, frame: Int, name: String) throws(InputError) -> Pose? {
        var keypoints: [Keypoint] = []
        keypoints.reserveCapacity(Joint.count)
        var anyNonZero = false
        for joint in 0..<Joint.count {
            var values: (Float, Float, Float) = (0, 0, 0)
            for component in 0..<3 {
                let offset = (joint * 3 + component) * format.elementByteCount
                let value = format.elementByteCount == 4
                    ? row.loadUnaligned(fromByteOffset: offset, as: Float.self)
                    : Float(row.loadUnaligned(fromByteOffset: offset, as: Double.self))
                guard value.isFinite else { throw InputError("\(name): keypoints contain NaN or infinity (frame \(frame))") }
                if value != 0 { anyNonZero = true }
                switch component {
                case 0: values.0 = value
                case 1: values.1 = value
                default: values.2 = value
                }
            }
            keypoints.append(Keypoint(x: values.0, y: values.1, score: values.2))
        }
        return anyNonZero ? Pose(keypoints: keypoints) : nil
    }

    /// Bytes of the file held in memory: the window, whatever the frame count.
    var bufferedByteCount: Int { window.capacity }

    /// The next frame's number and pose, read through the window; nil after the last frame.
    mutating func nextPose() throws(InputError) -> (frame: Int, pose: Pose?)? {
        guard nextFrame < frameCount else { return nil }
        let frame = nextFrame
        let pose = try Self.readPose(frame, from: &window, format: format, path: path)
        nextFrame += 1
        return (frame, pose)
    }

    /// Frame `frame`'s pose. Served from the window while it holds the row; otherwise one
    /// refill of the whole window from there.
    private static func readPose(_ frame: Int, from window: inout FileWindow, format: RowFormat, path: String) throws(InputError) -> Pose? {
        let bytes = try readRows(frame, count: 1, from: &window, format: format, path: path)
        return try pose(fromRow: bytes, format: format, frame: frame, name: path)
    }

    /// Rows `frame..<frame + count` (at most a window's worth), valid until the next read.
    private static func readRows(_ frame: Int, count: Int, from window: inout FileWindow, format: RowFormat,
                                 path: String) throws(InputError) -> UnsafeRawBufferPointer {
        let byteCount = count * format.rowByteCount
        let bytes = window.bytes(at: format.dataOffset + frame * format.rowByteCount, atLeast: byteCount)
        guard bytes.count >= byteCount else {
            // Checked against the header at open: the file shrank since, or the disk failed.
            let why = window.readError.map { "\($0)" } ?? "the file is shorter than when it was opened"
            throw InputError("\(path): cannot read frame \(frame): \(why)")
        }
        return UnsafeRawBufferPointer(rebasing: bytes[0..<byteCount])
    }

    /// The index of the first row in `rows` with a NaN or infinite value (a float64 beyond
    /// Float's range counts as infinite, as `pose(fromRow:)` would make it), or nil.
    static func firstNonFiniteRow(_ rows: UnsafeRawBufferPointer, format: RowFormat) -> Int? {
        let valueCount = rows.count / format.elementByteCount
        for index in 0..<valueCount {
            let offset = index * format.elementByteCount
            let value = format.elementByteCount == 4
                ? rows.loadUnaligned(fromByteOffset: offset, as: Float.self)
                : Float(rows.loadUnaligned(fromByteOffset: offset, as: Double.self))
            if !value.isFinite { return index / (Joint.count * 3) }
        }
        return nil
    }
}
