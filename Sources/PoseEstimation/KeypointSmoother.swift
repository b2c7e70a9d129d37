/// One Euro filter over every keypoint coordinate (Casiez, Roussel & Vogel, CHI 2012): smooths
/// jitter when a joint is still and follows quickly when it moves, by raising the low-pass cutoff
/// with the joint's speed.
///
/// Speed is measured in body lengths per second (the longer side of the pose's box), not pixels:
/// with a pixel `beta` one setting lagged 33–40 ms behind a person with a 53–64 px torso on the
/// 320×240 clips and 17–23 ms behind a 265–296 px torso on 1080p (Scripts/jitter.py --per-clip),
/// and a Pi camera's resolution and the distance to the person vary.
///
/// Defaults (0.5 Hz, beta 8) come from Tests/PoseEstimationTests/Scripts/jitter.py on the dev clips
/// at 15 fps: on still spans they cut frame-to-frame acceleration from 0.068 to 0.013 torso lengths
/// (the former pixel-speed defaults 1.5 Hz, 0.01/px: 0.022) with 24 ms mean lag during exercise
/// (former: 27 ms); see README "Accuracy".
///
/// State is 17 × 2 filters kept in fixed storage; a joint's filter restarts when its score drops
/// below `minimumScore` or the tracked person changes, so a lost joint is not dragged back.
public struct KeypointSmoother: Sendable {
    /// Cutoff frequency at rest, Hz. Lower = smoother.
    public var minimumCutoff: Float
    /// How fast the cutoff rises with speed, Hz per (body length per second). Higher = less lag.
    public var beta: Float
    /// Cutoff for the speed estimate, Hz.
    public var derivativeCutoff: Float = 1.0
    /// Joints below this score are passed through and their filter restarts.
    public var minimumScore: Float = 0.2

    private var values: [Float]       // filtered x, y per joint, pixels
    private var derivatives: [Float]  // filtered dx/dt, dy/dt per joint, body lengths per second
    private var primed: [Bool]
    private var lastTime: Double = -.infinity
    private var lastTrack = -1

    /// A smoother with the given rest cutoff (Hz) and speed coefficient.
    public init(minimumCutoff: Float = 0.5, beta: Float = 8) {
        self.minimumCutoff = minimumCutoff
        self.beta = beta
        values = [Float](repeating: 0, count: Joint.count * 2)
        derivatives = [Float](repeating: 0, count: Joint.count * 2)
        primed = [Bool](repeating: false, count: Joint.count)
    }

    /// Smooths `pose` observed at `time` seconds for person `track` (from `PersonTracker`).
    public mutating func smooth(_ pose: Pose, at time: Double, track: Int) -> Pose {
        let interval = Float(time - lastTime)
        if track != lastTrack || !(interval > 0) || interval > 1 {
            for index in 0..<Joint.count { primed[index] = false }
        }
        lastTrack = track
        lastTime = time
        // The person's size, so speeds are in body lengths per second (at least 1 px).
        let box = pose.boundingBox(minimumScore: minimumScore)
        let size = max(box.map { max($0.width, $0.height) } ?? 1, 1)
        var smoothed = pose
        for index in 0..<Joint.count {
            let point = pose[index]
            guard point.score >= minimumScore else {
                primed[index] = false
                continue
            }
            guard primed[index] else {
                values[index * 2] = point.x
                values[index * 2 + 1] = point.y
                derivatives[index * 2] = 0
                derivatives[index * 2 + 1] = 0
                primed[index] = true
                continue
            }
            smoothed[index].x = filter(point.x, slot: index * 2, interval: interval, size: size)
            smoothed[index].y = filter(point.y, slot: index * 2 + 1, interval: interval, size: size)
        }
        return smoothed
    }

    private mutating func filter(_ value: Float, slot: Int, interval: Float, size: Float) -> Float {
        let speed = (value - values[slot]) / interval / size
        let derivative = Self.lowPass(speed, previous: derivatives[slot], alpha: Self.alpha(cutoff: derivativeCutoff, interval: interval))
        derivatives[slot] = derivative
        let cutoff = minimumCutoff + beta * abs(derivative)
        let filtered = Self.lowPass(value, previous: values[slot], alpha: Self.alpha(cutoff: cutoff, interval: interval))
        values[slot] = filtered
        return filtered
    }

    private static func alpha(cutoff: Float, interval: Float) -> Float {
        let tau = 1 / (2 * Float.pi * cutoff)
        return 1 / (1 + tau / interval)
    }

    private static func lowPass(_ value: Float, previous: Float, alpha: Float) -> Float {
        alpha * value + (1 - alpha) * previous
    }
}
