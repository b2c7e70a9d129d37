import InferenceCore
import LinuxSystem
import PoseEstimation

/// A keypoint recording: NumPy `float[T, 17, 3]` = COCO-17 (x, y, score) in frame pixels, one row
/// per frame at a known rate. An all-zero row is a frame where nobody was seen.
struct KeypointFile {
    var poses: [Pose?]

    /// Reads and checks a `.npy` keypoint file (float32 or float64).
    init(path: String) throws(InputError) {
        let array: NumPyArray
        // NumPyArray.read's messages already start with the path.
        do { array = try NumPyArray.read(contentsOf: path) } catch { throw InputError(error.description) }
        try self.init(array: array, name: MessageExcerpt.path(path))
    }

    /// Checks a parsed array (`name` starts the messages). Separate from the file so the fuzz
    /// target (Tests/Fuzz/KeypointFuzz.swift) can drive it with any bytes the parser accepts.
    init(array: NumPyArray, name: String) throws(InputError) {
        guard array.shape.count == 3, array.shape[1] == Joint.count, array.shape[2] == 3 else {
            throw InputError("\(name): keypoints must be float[T,17,3] (COCO-17 x, y, score), not \(array.elementType)\(array.shape)")
        }
        let values: [Float]
        switch array.elementType {
        case .float32:
            values = array.bytes.withUnsafeBytes { raw in (0..<array.elementCount).map { raw.loadUnaligned(fromByteOffset: $0 * 4, as: Float.self) } }
        case .float64:
            values = array.bytes.withUnsafeBytes { raw in (0..<array.elementCount).map { Float(raw.loadUnaligned(fromByteOffset: $0 * 8, as: Double.self)) } }
        default:
            throw InputError("\(name): keypoints must be float32 or float64, not \(array.elementType)")
        }
        // Float(Double) turns values beyond Float's range into infinities: refused here too.
        guard values.allSatisfy({ $0.isFinite }) else { throw InputError("\(name): keypoints contain NaN or infinity") }
        poses = (0..<array.shape[0]).map { frame in
            let row = values[(frame * 51)..<(frame * 51 + 51)]
            guard row.contains(where: { $0 != 0 }) else { return nil }
            return Pose(keypoints: (0..<Joint.count).map { joint in
                Keypoint(x: row[row.startIndex + joint * 3], y: row[row.startIndex + joint * 3 + 1], score: row[row.startIndex + joint * 3 + 2])
            })
        }
    }
}
