/// The 17 COCO body joints MoveNet reports, in MoveNet's output order.
/// Left and right are the person's own, not the viewer's.
public enum Joint: Int, CaseIterable, Sendable {
    case nose, leftEye, rightEye, leftEar, rightEar
    case leftShoulder, rightShoulder, leftElbow, rightElbow, leftWrist, rightWrist
    case leftHip, rightHip, leftKnee, rightKnee, leftAnkle, rightAnkle

    /// snake_case name as used in model metadata and reports (`left_shoulder`).
    public var name: String { Self.names[rawValue] }

    private static let names = [
        "nose", "left_eye", "right_eye", "left_ear", "right_ear", "left_shoulder", "right_shoulder",
        "left_elbow", "right_elbow", "left_wrist", "right_wrist", "left_hip", "right_hip",
        "left_knee", "right_knee", "left_ankle", "right_ankle",
    ]

    /// The joint on the other side of the body (nose maps to itself); used to mirror poses.
    public var mirrored: Joint {
        switch self {
        case .nose: return .nose
        default:
            // Left/right pairs are adjacent, left first (odd raw values are left).
            return Joint(rawValue: rawValue % 2 == 1 ? rawValue + 1 : rawValue - 1)!
        }
    }

    /// The number of joints (17).
    public static let count = 17
}

/// One joint's position in frame pixel coordinates (x right, y down) and MoveNet's confidence.
public struct Keypoint: Equatable, Sendable {
    public var x: Float
    public var y: Float
    /// MoveNet's score in 0...1.
    public var score: Float

    public init(x: Float, y: Float, score: Float) {
        self.x = x
        self.y = y
        self.score = score
    }

    public static let zero = Keypoint(x: 0, y: 0, score: 0)
}

/// One person's 17 keypoints in frame coordinates.
///
/// Stored inline (no heap allocation), so poses can flow through the frame loop and sit in
/// fixed-size windows without allocating.
public struct Pose: Equatable, Sendable {
    private var storage: (Keypoint, Keypoint, Keypoint, Keypoint, Keypoint, Keypoint, Keypoint, Keypoint,
                          Keypoint, Keypoint, Keypoint, Keypoint, Keypoint, Keypoint, Keypoint, Keypoint, Keypoint)

    /// A pose with every keypoint at the origin with score 0 (an "empty pose").
    public init() {
        storage = (.zero, .zero, .zero, .zero, .zero, .zero, .zero, .zero, .zero,
                   .zero, .zero, .zero, .zero, .zero, .zero, .zero, .zero)
    }

    /// A pose from 17 keypoints in joint order.
    public init<Points: Sequence>(keypoints: Points) where Points.Element == Keypoint {
        self.init()
        var index = 0
        for point in keypoints {
            precondition(index < Joint.count, "a pose has 17 keypoints")
            self[index] = point
            index += 1
        }
        precondition(index == Joint.count, "a pose has 17 keypoints")
    }

    /// The keypoint at joint index 0..<17.
    public subscript(index: Int) -> Keypoint {
        get {
            precondition(index >= 0 && index < Joint.count)
            return withUnsafeBytes(of: storage) { $0.load(fromByteOffset: index * MemoryLayout<Keypoint>.stride, as: Keypoint.self) }
        }
        set {
            precondition(index >= 0 && index < Joint.count)
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: newValue, toByteOffset: index * MemoryLayout<Keypoint>.stride, as: Keypoint.self) }
        }
    }

    /// The keypoint of `joint`.
    public subscript(joint: Joint) -> Keypoint {
        get { self[joint.rawValue] }
        set { self[joint.rawValue] = newValue }
    }

    /// All 17 keypoints in joint order (allocates; for tests and reports, not the frame loop).
    public var keypoints: [Keypoint] { (0..<Joint.count).map { self[$0] } }

    public static func == (lhs: Pose, rhs: Pose) -> Bool {
        (0..<Joint.count).allSatisfy { lhs[$0] == rhs[$0] }
    }

    /// The smallest axis-aligned box around the keypoints scoring at least `minimumScore`,
    /// or nil when none does.
    public func boundingBox(minimumScore: Float = 0.2) -> BoundingBox? {
        var box: BoundingBox?
        for index in 0..<Joint.count {
            let point = self[index]
            guard point.score >= minimumScore else { continue }
            if var current = box {
                current.minX = min(current.minX, point.x)
                current.minY = min(current.minY, point.y)
                current.maxX = max(current.maxX, point.x)
                current.maxY = max(current.maxY, point.y)
                box = current
            } else {
                box = BoundingBox(minX: point.x, minY: point.y, maxX: point.x, maxY: point.y)
            }
        }
        return box
    }

    /// The mean keypoint score.
    public var meanScore: Float {
        var sum: Float = 0
        for index in 0..<Joint.count { sum += self[index].score }
        return sum / Float(Joint.count)
    }

    /// The skeleton's bones, for drawing and for features: pairs of joints MoveNet's authors draw.
    public static let skeletonEdges: [(Joint, Joint)] = [
        (.nose, .leftEye), (.nose, .rightEye), (.leftEye, .leftEar), (.rightEye, .rightEar),
        (.nose, .leftShoulder), (.nose, .rightShoulder),
        (.leftShoulder, .leftElbow), (.leftElbow, .leftWrist),
        (.rightShoulder, .rightElbow), (.rightElbow, .rightWrist),
        (.leftShoulder, .rightShoulder), (.leftShoulder, .leftHip), (.rightShoulder, .rightHip),
        (.leftHip, .rightHip), (.leftHip, .leftKnee), (.leftKnee, .leftAnkle),
        (.rightHip, .rightKnee), (.rightKnee, .rightAnkle),
    ]
}

/// An axis-aligned box in frame pixel coordinates.
public struct BoundingBox: Equatable, Sendable {
    public var minX: Float
    public var minY: Float
    public var maxX: Float
    public var maxY: Float

    public init(minX: Float, minY: Float, maxX: Float, maxY: Float) {
        self.minX = minX
        self.minY = minY
        self.maxX = maxX
        self.maxY = maxY
    }

    public var width: Float { maxX - minX }
    public var height: Float { maxY - minY }
    public var area: Float { max(0, width) * max(0, height) }

    /// 0 when this box is not the person of `reference`; otherwise higher is more alike: box
    /// overlap plus closeness of centres. The same person overlaps by at least `minimumOverlap`
    /// or has a centre within `reachFraction` of the longer side of either box (boxes change
    /// shape fast when someone drops to a plank).
    public func samePersonSimilarity(to reference: BoundingBox, minimumOverlap: Float = 0.2, reachFraction: Float = 0.6) -> Float {
        let overlap = intersectionOverUnion(reference)
        let dx = (minX + maxX - reference.minX - reference.maxX) / 2
        let dy = (minY + maxY - reference.minY - reference.maxY) / 2
        // Reach from the larger of the two boxes: after a blurred frame in which only a few joints
        // scored (the face, say), the reference is that small cluster, and a reach from it alone
        // would reject the whole person.
        let reach = max(reference.width, reference.height, width, height, 1) * reachFraction
        let closeness = max(0, 1 - (dx * dx + dy * dy).squareRoot() / reach)
        guard overlap >= minimumOverlap || closeness > 0 else { return 0 }
        return overlap + closeness
    }

    /// Intersection over union with another box (0 when they do not overlap).
    public func intersectionOverUnion(_ other: BoundingBox) -> Float {
        let width = min(maxX, other.maxX) - max(minX, other.minX)
        let height = min(maxY, other.maxY) - max(minY, other.minY)
        guard width > 0, height > 0 else { return 0 }
        let intersection = width * height
        let union = area + other.area - intersection
        return union > 0 ? intersection / union : 0
    }
}
