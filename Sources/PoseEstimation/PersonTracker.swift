/// Keeps following the same person across frames.
///
/// Apple's sample takes the largest pose in each frame; with two people that flips between them.
/// posewatch follows one person: each frame, the candidate most like the tracked person (box
/// overlap, or a nearby centre for fast changes of shape such as a burpee's drop to the floor) is
/// the same person. When the tracked person is gone for longer than `patience`, the largest
/// candidate becomes the new tracked person. The API takes any number of candidates so a
/// multi-person model can plug in; MoveNet SinglePose gives at most one.
public struct PersonTracker: Sendable {
    /// How long the tracked person may be missing before someone else is taken, in seconds.
    public var patience: Double = 1.0
    /// Minimum box overlap (intersection over union) for "the same person".
    public var minimumOverlap: Float = 0.2
    /// A candidate whose box centre lies within this fraction of the longer side of the tracked box
    /// or of its own also counts as the same person (boxes change shape fast when someone drops to
    /// a plank).
    public var centreDistanceFraction: Float = 0.6
    /// Keypoints below this score do not count toward a pose's box.
    public var boxKeypointScore: Float = 0.2
    /// A candidate with fewer keypoints at `boxKeypointScore` has no box worth tracking: one or two
    /// points make a box of (nearly) zero size, which no later pose of the person would match, so
    /// tracking it would lose the person for the whole `patience`. Such a frame is skipped instead.
    public var minimumBoxKeypoints = 3

    private var trackedBox: BoundingBox?
    private var lastSeen: Double = -.infinity
    /// Increments each time a different person starts being tracked; 0 before anybody.
    public private(set) var trackIdentifier = 0

    public init() {}

    /// The tracked person's pose among `candidates` at `time` (seconds), or nil when the tracked
    /// person is not among them (or nobody is there).
    public mutating func select<Candidates: Collection>(from candidates: Candidates, at time: Double) -> Pose?
    where Candidates.Element == Pose {
        if let tracked = trackedBox, time - lastSeen <= patience {
            var best: (pose: Pose, box: BoundingBox, similarity: Float)?
            for candidate in candidates {
                guard let box = personBox(of: candidate) else { continue }
                let similarity = self.similarity(of: box, to: tracked)
                if similarity > 0, similarity > (best?.similarity ?? 0) { best = (candidate, box, similarity) }
            }
            if let best {
                trackedBox = best.box
                lastSeen = time
                return best.pose
            }
            return nil  // the tracked person is briefly out of sight: do not jump to someone else yet
        }
        var largest: (pose: Pose, box: BoundingBox)?
        for candidate in candidates {
            guard let box = personBox(of: candidate) else { continue }
            if box.area > (largest?.box.area ?? -1) { largest = (candidate, box) }
        }
        guard let largest else { return nil }
        trackedBox = largest.box
        lastSeen = time
        trackIdentifier += 1
        return largest.pose
    }

    /// The candidate's box when enough of its keypoints are confident to track it.
    private func personBox(of candidate: Pose) -> BoundingBox? {
        var confident = 0
        for index in 0..<Joint.count where candidate[index].score >= boxKeypointScore { confident += 1 }
        guard confident >= minimumBoxKeypoints else { return nil }
        return candidate.boundingBox(minimumScore: boxKeypointScore)
    }

    /// Convenience for single-person models.
    public mutating func select(_ candidate: Pose?, at time: Double) -> Pose? {
        if let candidate { return select(from: CollectionOfOne(candidate), at: time) }
        return select(from: EmptyCollection<Pose>(), at: time)
    }

    /// Forgets the tracked person.
    public mutating func reset() {
        trackedBox = nil
        lastSeen = -.infinity
    }

    /// 0 when not the same person; otherwise higher is more alike (`BoundingBox.samePersonSimilarity`).
    func similarity(of box: BoundingBox, to tracked: BoundingBox) -> Float {
        box.samePersonSimilarity(to: tracked, minimumOverlap: minimumOverlap, reachFraction: centreDistanceFraction)
    }
}

/// Which joints take part downstream (window, counter). Like Vision's joint groups: leaving out the
/// face keeps head turns and talking from moving the features.
public struct JointSelection: OptionSet, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let face = JointSelection(rawValue: 1 << 0)
    public static let arms = JointSelection(rawValue: 1 << 1)
    public static let torso = JointSelection(rawValue: 1 << 2)
    public static let legs = JointSelection(rawValue: 1 << 3)
    public static let all: JointSelection = [.face, .arms, .torso, .legs]

    /// The group a joint belongs to (shoulders and hips are torso).
    public static func group(of joint: Joint) -> JointSelection {
        switch joint {
        case .nose, .leftEye, .rightEye, .leftEar, .rightEar: return .face
        case .leftElbow, .rightElbow, .leftWrist, .rightWrist: return .arms
        case .leftShoulder, .rightShoulder, .leftHip, .rightHip: return .torso
        case .leftKnee, .rightKnee, .leftAnkle, .rightAnkle: return .legs
        }
    }

    /// The pose with unselected joints zeroed (position and score), as if never seen.
    public func apply(to pose: Pose) -> Pose {
        guard self != .all else { return pose }
        var selected = pose
        for joint in Joint.allCases where !contains(Self.group(of: joint)) { selected[joint] = .zero }
        return selected
    }
}
