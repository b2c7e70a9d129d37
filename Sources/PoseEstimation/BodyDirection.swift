/// Which way a person's head points in the picture, from the body's long axis: a camera mounted
/// on its side (or upside down) shows standing people lying, their head to one side.
public enum BodyDirection: Int, CaseIterable, Sendable {
    /// Head up: the picture is upright for this person.
    case up
    /// Head to the right of the picture.
    case right
    /// Head down.
    case down
    /// Head to the left.
    case left

    /// Keypoints below this score do not count toward the axis.
    public static let minimumScore: Float = 0.2

    /// The direction of `pose`'s head, or nil when its torso is not seen (a shoulder and a hip).
    ///
    /// The axis runs from the hips to the shoulders, plus from the ankles to the hips when both
    /// are seen, so a short torso seen at an angle is helped by the legs. Whichever of its
    /// horizontal and vertical parts is longer decides; a tie counts as upright.
    public init?(of pose: Pose) {
        guard let shoulders = Self.midpoint(pose[.leftShoulder], pose[.rightShoulder]),
              let hips = Self.midpoint(pose[.leftHip], pose[.rightHip]) else { return nil }
        var dx = shoulders.x - hips.x, dy = shoulders.y - hips.y
        if let ankles = Self.midpoint(pose[.leftAnkle], pose[.rightAnkle]) {
            dx += hips.x - ankles.x
            dy += hips.y - ankles.y
        }
        guard dx.isFinite, dy.isFinite, dx != 0 || dy != 0 else { return nil }
        if abs(dx) > abs(dy) {
            self = dx > 0 ? .right : .left
        } else {
            self = dy > 0 ? .down : .up  // y grows downwards
        }
    }

    /// Clockwise quarter turns of the picture that bring this direction up (right: 3, i.e. 270°).
    public var quarterTurnsToUpright: Int { (4 - rawValue) % 4 }

    /// The middle of the two keypoints that are seen (one alone is its own middle).
    private static func midpoint(_ a: Keypoint, _ b: Keypoint) -> (x: Float, y: Float)? {
        switch (a.score >= minimumScore, b.score >= minimumScore) {
        case (true, true): return ((a.x + b.x) / 2, (a.y + b.y) / 2)
        case (true, false): return (a.x, a.y)
        case (false, true): return (b.x, b.y)
        case (false, false): return nil
        }
    }
}

/// Counts the head directions of the people in a run of frames, to tell an owner when the camera
/// looks mounted sideways. Only a hint: a set of push-ups or a plank lies flat too, so posewatch
/// never turns the picture by itself. Used by `snapshot`, not in the frame loop.
public struct BodyDirectionTally: Sendable, Equatable {
    /// A direction must hold in at least this many frames: a title card or a poster that passes
    /// the presence rule for a frame or two says nothing about the camera.
    public static let minimumFrames = 3

    /// Frames looked at, with or without a person.
    public private(set) var frames = 0
    /// Frames whose pose had a torso to measure.
    public private(set) var framesWithBody = 0
    /// Frames per direction, indexed by `BodyDirection.rawValue`.
    public private(set) var counts = [0, 0, 0, 0]

    public init() {}

    /// Counts one frame and its person (nil: nobody; a person whose torso is unseen counts as nobody).
    public mutating func add(_ pose: Pose?) {
        frames += 1
        guard let pose, let direction = BodyDirection(of: pose) else { return }
        framesWithBody += 1
        counts[direction.rawValue] += 1
    }

    /// Frames whose person's head pointed `direction`.
    public func frames(_ direction: BodyDirection) -> Int { counts[direction.rawValue] }

    /// The direction other than up that more than half of all frames looked at share (and at
    /// least `minimumFrames`): the picture then needs turning by `direction.quarterTurnsToUpright`.
    public var mostlyNotUpright: (direction: BodyDirection, frames: Int)? {
        let candidates = [BodyDirection.right, .down, .left].map { ($0, frames($0)) }
        guard let best = candidates.max(by: { $0.1 < $1.1 }), best.1 >= Self.minimumFrames, best.1 * 2 > frames else { return nil }
        return best
    }
}
