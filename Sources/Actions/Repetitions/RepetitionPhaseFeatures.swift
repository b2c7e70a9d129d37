import PoseEstimation

/// The phase net's per-frame input row: 26 numbers that do not depend on where the person stands,
/// how large they appear or which side the detector calls left, and a flag saying whether this
/// frame's pose was usable. The Python reference is `features` in training/counter/learned/gen.py,
/// which the net was trained on; this type reproduces it value for value (RepetitionPhaseParityTests).
///
/// - Joints scoring at least `minimumScore` are confident. A frame is usable when at least
///   `minimumVisibleBodyJoints` of the 13 body joints (all but eyes and ears) are.
/// - On a usable frame each confident body joint updates a held position and joins the "seen"
///   set, so a joint lost for a moment stays where it was last seen instead of jumping to 0.
/// - The seen held joints give a box; each joint becomes (held − box centre) / the box's larger
///   side (0 for joints never seen). The row is the nose (x, y), the midpoints of the six left/right
///   pairs (shoulders, elbows, wrists, hips, knees, ankles; x, y each), the absolute left − right
///   differences of the same pairs, then the flag 1.
/// - An unusable frame (or no pose) repeats the last 26 numbers with flag 0: the net sees the
///   person hold still rather than vanish. After `gapFrames` unusable frames in a row the person
///   has left: the seen set is forgotten and the repeated numbers become 0.
///
/// The arithmetic is in Double and the row is rounded to Float at the end, as numpy computes the
/// reference in float64 and casts to float32. Every buffer is allocated in `init`; `update` does not
/// allocate. Not thread-safe: one frame loop owns it.
public struct RepetitionPhaseFeatures: ~Copyable {
    /// Numbers per pose before the flag: nose (2) + six pair midpoints (12) + six differences (12).
    public static let featureCount = 26
    /// Numbers per row: the features and the usable flag.
    public static let rowLength = featureCount + 1
    /// Keypoints scoring below this are not confident (held at their last position).
    public static let minimumScore: Float = 0.3
    /// Confident body joints a frame needs to be usable.
    public static let minimumVisibleBodyJoints = 7
    /// Unusable frames in a row after which the person has left (2 s at 15 fps, as training).
    public static let gapFrames = 30

    /// The 13 body joints: every joint but the eyes and ears (COCO 1–4), which move with the head.
    private static let bodyMask: UInt32 = ((1 << Joint.count) - 1) & ~0b1_1110
    /// The six left/right pairs are adjacent in COCO order, left first, from the left shoulder.
    private static let pairCount = 6
    @inline(__always)
    private static func leftJoint(_ pair: Int) -> Int { Joint.leftShoulder.rawValue + 2 * pair }

    /// Held positions, x and y per joint (Double: the reference holds them in a float64 array).
    private let held: UnsafeMutableBufferPointer<Double>
    /// This frame's row, returned by `update`.
    private let row: UnsafeMutableBufferPointer<Float>
    /// Joints seen (bit per joint) since the start or the last gap.
    private var seen: UInt32 = 0
    /// Unusable frames in a row.
    private var missing = 0

    /// A fresh state: no joint seen, the last row all zero (as at the start of a stream).
    public init() {
        held = .allocate(capacity: 2 * Joint.count)
        held.initialize(repeating: 0)
        row = .allocate(capacity: Self.rowLength)
        row.initialize(repeating: 0)
    }

    deinit {
        held.deallocate()
        row.deallocate()
    }

    /// Forgets everything, as a new stream.
    public mutating func reset() {
        held.update(repeating: 0)
        row.update(repeating: 0)
        seen = 0
        missing = 0
    }

    /// Takes this frame's pose (nil when there is none) and returns its row of `rowLength` numbers,
    /// valid until the next call.
    public mutating func update(with pose: Pose?) -> UnsafeBufferPointer<Float> {
        var confident: UInt32 = 0
        if let pose {
            for joint in 0..<Joint.count where pose[joint].score >= Self.minimumScore { confident |= 1 << joint }
        }
        let body = confident & Self.bodyMask
        guard let pose, body.nonzeroBitCount >= Self.minimumVisibleBodyJoints else {
            missing += 1
            if missing >= Self.gapFrames {
                seen = 0
                row.update(repeating: 0)
            }
            row[Self.featureCount] = 0
            return UnsafeBufferPointer(row)
        }
        missing = 0
        for joint in 0..<Joint.count where body & (1 << joint) != 0 {
            held[2 * joint] = Double(pose[joint].x)
            held[2 * joint + 1] = Double(pose[joint].y)
        }
        seen |= body
        var low = (x: Double.infinity, y: Double.infinity), high = (x: -Double.infinity, y: -Double.infinity)
        for joint in 0..<Joint.count where seen & (1 << joint) != 0 {
            low = (Swift.min(low.x, held[2 * joint]), Swift.min(low.y, held[2 * joint + 1]))
            high = (Swift.max(high.x, held[2 * joint]), Swift.max(high.y, held[2 * joint + 1]))
        }
        let centre = (x: (low.x + high.x) / 2, y: (low.y + high.y) / 2)
        let scale = Swift.max(Swift.max(high.x - low.x, high.y - low.y), 1e-6)
        /// The joint box-centred and scaled; 0 for a joint never seen (the reference's `np.where`).
        func q(_ joint: Int) -> (x: Double, y: Double) {
            guard seen & (1 << joint) != 0 else { return (0, 0) }
            return ((held[2 * joint] - centre.x) / scale, (held[2 * joint + 1] - centre.y) / scale)
        }
        let nose = q(Joint.nose.rawValue)
        row[0] = Float(nose.x)
        row[1] = Float(nose.y)
        for pair in 0..<Self.pairCount {
            let left = q(Self.leftJoint(pair)), right = q(Self.leftJoint(pair) + 1)
            row[2 + 2 * pair] = Float((left.x + right.x) / 2)
            row[3 + 2 * pair] = Float((left.y + right.y) / 2)
            row[14 + 2 * pair] = Float(abs(left.x - right.x))
            row[15 + 2 * pair] = Float(abs(left.y - right.y))
        }
        row[Self.featureCount] = 1
        return UnsafeBufferPointer(row)
    }
}
