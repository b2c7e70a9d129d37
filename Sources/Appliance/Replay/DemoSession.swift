#if canImport(Glibc)
import Glibc
#endif
import PoseEstimation

/// A made-up exercise session for `posewatch replay --demo`: a stick figure stands, does squats,
/// stands, does jumping jacks, and walks off. It lets anyone see the pipeline work with no camera
/// and no downloaded model (the classifier is built in; the pose model is not needed for keypoints).
enum DemoSession {
    /// Frame rate of the generated keypoints.
    static let framesPerSecond = 15.0

    /// (what, seconds, repetitions); repetitions 0 = holding still.
    static let script: [(move: Move, seconds: Double, repetitions: Int)] = [
        (.stand, 3, 0), (.squat, 16, 8), (.stand, 4, 0), (.jumpingJack, 12, 12), (.stand, 3, 0), (.away, 3, 0),
    ]

    enum Move { case stand, squat, jumpingJack, away }

    /// Every frame's pose (nil when nobody is in view).
    static func poses() -> [Pose?] {
        var poses: [Pose?] = []
        var generator = Jitter(state: 0x9E37_79B9_7F4A_7C15)
        for step in script {
            let frames = Int(step.seconds * framesPerSecond)
            for frame in 0..<frames {
                let t = Double(frame) / framesPerSecond
                let phase = step.repetitions == 0 ? 0 : Float((1 - cos(2 * Double.pi * t * Double(step.repetitions) / step.seconds)) / 2)
                switch step.move {
                case .away: poses.append(nil)
                case .stand: poses.append(pose(squat: 0, jack: 0, sway: Float(sin(t * 1.3)) * 3, jitter: &generator))
                case .squat: poses.append(pose(squat: phase, jack: 0, sway: 0, jitter: &generator))
                case .jumpingJack: poses.append(pose(squat: 0, jack: phase, sway: 0, jitter: &generator))
                }
            }
        }
        return poses
    }

    /// A 300-pixel figure in a 640×480 frame: `squat` lowers the hips and bends the knees,
    /// `jack` raises the arms overhead and spreads the feet (0 = standing, 1 = the far pose).
    static func pose(squat: Float, jack: Float, sway: Float, jitter: inout Jitter) -> Pose {
        let height: Float = 300, centre: Float = 320 + sway, floor: Float = 440
        let hipY = floor - 0.52 * height + 0.22 * height * squat
        let shoulderY = hipY - 0.30 * height
        let kneeY = floor - 0.27 * height + 0.05 * height * squat
        let hipX = centre - 0.12 * height * squat
        let armAngle = Float.pi * 0.9 * jack, arm = 0.15 * height
        var points: [(Float, Float)] = [
            (centre, shoulderY - 0.12 * height), (centre - 5, shoulderY - 0.14 * height), (centre + 5, shoulderY - 0.14 * height),
            (centre - 12, shoulderY - 0.12 * height), (centre + 12, shoulderY - 0.12 * height),
        ]
        for side: Float in [1, -1] {
            points.append((centre + side * 27, shoulderY))
        }
        for (index, side) in [Float(1), -1].enumerated() {
            let forward = 60 * squat
            let elbow = (centre + side * 27 + side * arm * sin(armAngle) + forward * 0.5, shoulderY + arm * cos(armAngle) - 20 * squat)
            points.insert(elbow, at: 7 + index)
        }
        for side: Float in [1, -1] {
            let forward = 60 * squat
            points.append((centre + side * 27 + side * 2 * arm * sin(armAngle) + forward, shoulderY + 2 * arm * cos(armAngle) - 60 * squat))
        }
        for side: Float in [1, -1] { points.append((hipX + side * 18, hipY)) }
        for side: Float in [1, -1] { points.append((centre + side * (18 + 24 * jack) + 30 * squat, kneeY)) }
        for side: Float in [1, -1] { points.append((centre + side * (18 + 48 * jack), floor)) }
        return Pose(keypoints: points.map { Keypoint(x: $0.0 + jitter.next(), y: $0.1 + jitter.next(), score: 0.85) })
    }

    /// Deterministic ±1.5-pixel noise, like a pose model's keypoint jitter.
    struct Jitter {
        var state: UInt64
        mutating func next() -> Float {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Float(state >> 40) / Float(1 << 24) * 3 - 1.5
        }
    }
}
