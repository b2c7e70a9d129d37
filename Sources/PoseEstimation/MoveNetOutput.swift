/// Decodes MoveNet SinglePose's output and decides whether anybody is there.
///
/// The model's output is `float32[1, 1, 17, 3]`: per joint (y, x, score), y and x normalised to
/// the model's square input. The crop region that produced the input maps them back to frame pixels.
public enum MoveNetOutput {
    /// The pose in frame pixels from the raw output (51 floats in (y, x, score) order per joint).
    ///
    /// A damaged model can put anything in its output, so every value is made safe for what follows
    /// (drawing, cropping and the classifier convert coordinates to integers): coordinates are kept
    /// within [-1, 2] of the input (MoveNet's own stay near [0, 1]), scores within [0, 1], and a
    /// value that is not a number becomes 0 (a joint not seen).
    public static func decode(_ output: UnsafeBufferPointer<Float>, region: CropRegion) -> Pose {
        precondition(output.count >= Joint.count * 3, "MoveNet output has 51 values")
        @inline(__always) func bounded(_ value: Float, _ range: ClosedRange<Float>) -> Float {
            value.isNaN ? 0 : min(max(value, range.lowerBound), range.upperBound)
        }
        var pose = Pose()
        for index in 0..<Joint.count {
            let point = region.framePoint(normalizedX: bounded(output[index * 3 + 1], -1...2),
                                          normalizedY: bounded(output[index * 3], -1...2))
            pose[index] = Keypoint(x: point.x, y: point.y, score: bounded(output[index * 3 + 2], 0...1))
        }
        return pose
    }
}

/// The rule that turns MoveNet's always-present 17 keypoints into "a person" or "nobody".
///
/// MoveNet SinglePose has no person score, and on an empty room or a title card it still places
/// 17 points, with low scores. A person is present when at least `minimumConfidentKeypoints`
/// keypoints score at least `keypointScore`, and those include a shoulder and a hip (a body, not a
/// face-like blob or a poster's corner).
///
/// Defaults were chosen on 262 real frames (2 fps) from six dev clips, 199 with a person, 63 title
/// and end cards: keypoint score 0.24 and 6 keypoints give precision 0.984 and recall 0.915; the
/// three false positives are fade frames at the start of end cards, the misses mostly close-ups with
/// the hips out of frame. MoveNet int8's scores come in steps (… 0.197, 0.246, 0.299 …), so 0.24
/// means "the 0.246 step or above".
public struct PersonPresenceRule: Sendable, Equatable {
    /// The score at which a keypoint counts as seen.
    public var keypointScore: Float = 0.24
    /// How many keypoints must be seen.
    public var minimumConfidentKeypoints = 6

    public init() {}

    /// Whether `pose` shows a person.
    public func isPerson(_ pose: Pose) -> Bool {
        var confident = 0
        for index in 0..<Joint.count where pose[index].score >= keypointScore { confident += 1 }
        let shoulder = max(pose[.leftShoulder].score, pose[.rightShoulder].score) >= keypointScore
        let hip = max(pose[.leftHip].score, pose[.rightHip].score) >= keypointScore
        return confident >= minimumConfidentKeypoints && shoulder && hip
    }
}
