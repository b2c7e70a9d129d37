import Foundation
import PoseEstimation
@testable import Actions
import TestSupport

/// A stick figure in frame pixels whose pose follows an exercise's phase, for counter tests.
///
/// `depth` 0 is the rest pose (standing, arms down, feet together), 1 the far pose of the exercise.
enum SyntheticBody {
    enum Move { case squat, jumpingJack, pushUp }

    /// The pose at `depth` (0...1) of `move`, placed at `origin` with body height `height` pixels.
    static func pose(_ move: Move, depth: Double, originX: Float = 320, originY: Float = 400,
                     height: Float = 300, score: Float = 0.9) -> Pose {
        let d = Float(depth)
        let h = height
        var points = [(Float, Float)](repeating: (0, 0), count: Joint.count)
        switch move {
        case .squat:
            // Hips drop and go back, knees forward; the torso leans.
            let ankleY: Float = 0
            let kneeY = -0.27 * h + 0.06 * h * d
            let hipY = -0.52 * h + 0.22 * h * d
            let shoulderY = hipY - 0.30 * h + 0.04 * h * d
            let hipX = -0.12 * h * d
            let kneeX = 0.10 * h * d
            let shoulderX = hipX + 0.10 * h * d
            points[Joint.nose.rawValue] = (shoulderX + 0.02 * h, shoulderY - 0.12 * h)
            for (left, right, x, y, spread) in [
                (Joint.leftShoulder, Joint.rightShoulder, shoulderX, shoulderY, Float(0.09)),
                (Joint.leftElbow, Joint.rightElbow, shoulderX + 0.12 * h * d, shoulderY + 0.15 * h - 0.08 * h * d, Float(0.10)),
                (Joint.leftWrist, Joint.rightWrist, shoulderX + 0.25 * h * d, shoulderY + 0.30 * h - 0.22 * h * d, Float(0.10)),
                (Joint.leftHip, Joint.rightHip, hipX, hipY, Float(0.06)),
                (Joint.leftKnee, Joint.rightKnee, kneeX, kneeY, Float(0.06)),
                (Joint.leftAnkle, Joint.rightAnkle, Float(0), ankleY, Float(0.06)),
            ] {
                points[left.rawValue] = (x + spread * h, y)
                points[right.rawValue] = (x - spread * h, y)
            }
        case .jumpingJack:
            // Arms swing from the sides to above the head, feet spread.
            let angle = Float.pi * 0.9 * d  // arm angle from hanging down
            let shoulderY = -0.82 * h
            let hipY = -0.52 * h
            points[Joint.nose.rawValue] = (0, shoulderY - 0.12 * h)
            let arm = 0.15 * h
            for (sign, shoulder, elbow, wrist, hip, knee, ankle) in [
                (Float(1), Joint.leftShoulder, Joint.leftElbow, Joint.leftWrist, Joint.leftHip, Joint.leftKnee, Joint.leftAnkle),
                (Float(-1), Joint.rightShoulder, Joint.rightElbow, Joint.rightWrist, Joint.rightHip, Joint.rightKnee, Joint.rightAnkle),
            ] {
                let sx = sign * 0.09 * h
                points[shoulder.rawValue] = (sx, shoulderY)
                points[elbow.rawValue] = (sx + sign * arm * sin(angle), shoulderY + arm * cos(angle))
                points[wrist.rawValue] = (sx + sign * 2 * arm * sin(angle), shoulderY + 2 * arm * cos(angle))
                points[hip.rawValue] = (sign * 0.06 * h, hipY)
                points[knee.rawValue] = (sign * (0.06 * h + 0.08 * h * d), hipY + 0.25 * h)
                points[ankle.rawValue] = (sign * (0.06 * h + 0.16 * h * d), 0)
            }
        case .pushUp:
            // Side view: the body is a plank pivoting at the feet; the elbows bend.
            let length = 0.8 * h
            let lift = 0.35 * h * (1 - 0.7 * d)  // shoulder height above the floor
            let angle = asin(lift / length)
            func along(_ t: Float) -> (Float, Float) { (-t * length * cos(angle), -t * lift) }
            points[Joint.leftAnkle.rawValue] = along(0)
            points[Joint.rightAnkle.rawValue] = along(0)
            points[Joint.leftKnee.rawValue] = along(0.3)
            points[Joint.rightKnee.rawValue] = along(0.3)
            points[Joint.leftHip.rawValue] = along(0.55)
            points[Joint.rightHip.rawValue] = along(0.55)
            let shoulder = along(1)
            points[Joint.leftShoulder.rawValue] = shoulder
            points[Joint.rightShoulder.rawValue] = shoulder
            points[Joint.nose.rawValue] = (shoulder.0 - 0.1 * h, shoulder.1 - 0.03 * h)
            points[Joint.leftWrist.rawValue] = (shoulder.0, 0)
            points[Joint.rightWrist.rawValue] = (shoulder.0, 0)
            let elbow = (shoulder.0 + 0.12 * h * d, shoulder.1 / 2)
            points[Joint.leftElbow.rawValue] = elbow
            points[Joint.rightElbow.rawValue] = elbow
        }
        // Eyes and ears beside the nose (the counter ignores them).
        let nose = points[Joint.nose.rawValue]
        for (joint, dx) in [(Joint.leftEye, Float(0.01)), (.rightEye, -0.01), (.leftEar, 0.03), (.rightEar, -0.03)] {
            points[joint.rawValue] = (nose.0 + dx * h, nose.1 - 0.01 * h)
        }
        return Pose(keypoints: points.map { Keypoint(x: originX + $0.0, y: originY + $0.1, score: score) })
    }
}


extension Pose {
    /// The pose with every coordinate moved by uniform noise of ±`pixels`.
    func jittered(by pixels: Float, using generator: inout SplitMix64) -> Pose {
        var copy = self
        for index in 0..<Joint.count {
            var point = copy[index]
            point.x += Float.random(in: -pixels...pixels, using: &generator)
            point.y += Float.random(in: -pixels...pixels, using: &generator)
            copy[index] = point
        }
        return copy
    }
}

/// One segment of a synthetic session.
struct Segment {
    enum Content {
        /// `repetitions` cycles of `move` at `rate` repetitions per second; `shape` maps the cycle
        /// phase 0..<1 to depth; `amplitude` scales the depth.
        case reps(SyntheticBody.Move, repetitions: Int, rate: Double, shape: Shape, amplitude: Double)
        /// Standing still at rest for `seconds`.
        case rest(seconds: Double)
        /// Nobody in the frame for `seconds`.
        case absent(seconds: Double)
    }
    enum Shape { case sine, triangle }
    var content: Content
    /// The action reported while this segment plays; nil: no action (no_person, low_confidence, starting_up).
    var label: ActionLabel?
}

/// A synthetic session fed through a counter at a frame rate; records events and repetition ends.
struct SyntheticSession {
    var fps: Double = 15
    var jitterPixels: Float = 1.5
    var seed: UInt64 = 1
    var originX: Float = 320
    /// The first frame's timestamp (to continue an earlier session on the same counter).
    var startTime = 0.0

    struct Result {
        var events: [RepetitionEvent] = []
        /// The time each generated repetition ended (returned to rest), in order.
        var repetitionEnds: [Double] = []
        var counter: RepetitionCounter
        /// The timestamp after the last frame.
        var endTime = 0.0
    }

    func run(_ segments: [Segment], counter: RepetitionCounter = RepetitionCounter()) -> Result {
        var result = Result(counter: counter)
        var generator = SplitMix64(seed: seed)
        var time = startTime
        let step = 1 / fps
        var lastMove = SyntheticBody.Move.squat
        for (index, segment) in segments.enumerated() {
            // Standing before a set is the rest pose of the set that follows (a person gets into
            // position first); after a set, it is that set's rest pose.
            if case .rest = segment.content, index + 1 < segments.count,
               case let .reps(next, _, _, _, _) = segments[index + 1].content {
                lastMove = next
            }
            switch segment.content {
            case let .reps(move, repetitions, rate, shape, amplitude):
                lastMove = move
                let duration = Double(repetitions) / rate
                let start = time
                var local = 0.0
                while local < duration - 1e-9 {
                    let phase = (local * rate).truncatingRemainder(dividingBy: 1)
                    let depth: Double
                    switch shape {
                    case .sine: depth = (1 - cos(2 * Double.pi * phase)) / 2
                    case .triangle: depth = phase < 0.5 ? 2 * phase : 2 - 2 * phase
                    }
                    let pose = SyntheticBody.pose(move, depth: amplitude * depth, originX: originX)
                        .jittered(by: jitterPixels, using: &generator)
                    for number in counter.process(timestamp: time, pose: pose, action: segment.label) {
                        result.events.append(counter.event(number: number))
                    }
                    time += step
                    local += step
                }
                for index in 1...repetitions { result.repetitionEnds.append(start + Double(index) / rate) }
            case let .rest(seconds):
                let end = time + seconds
                while time < end - 1e-9 {
                    let pose = SyntheticBody.pose(lastMove, depth: 0, originX: originX).jittered(by: jitterPixels, using: &generator)
                    for number in counter.process(timestamp: time, pose: pose, action: segment.label) {
                        result.events.append(counter.event(number: number))
                    }
                    time += step
                }
            case let .absent(seconds):
                let end = time + seconds
                while time < end - 1e-9 {
                    for number in counter.process(timestamp: time, pose: nil, action: segment.label) {
                        result.events.append(counter.event(number: number))
                    }
                    time += step
                }
            }
        }
        result.endTime = time
        return result
    }
}
