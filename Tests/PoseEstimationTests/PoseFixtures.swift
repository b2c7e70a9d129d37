@testable import PoseEstimation

/// A standing person, 100 px wide and ~300 px tall, centred at (cx, cy) (hips), all joints confident.
func standingPose(centerX: Float = 320, centerY: Float = 260, scale: Float = 1, score: Float = 0.9) -> Pose {
    let offsets: [(Float, Float)] = [
        (0, -170), (-8, -178), (8, -178), (-16, -172), (16, -172),   // face
        (-40, -120), (40, -120), (-50, -60), (50, -60), (-55, 0), (55, 0),  // shoulders, elbows, wrists
        (-25, 0), (25, 0), (-25, 70), (25, 70), (-25, 140), (25, 140),  // hips, knees, ankles
    ]
    return Pose(keypoints: offsets.map { Keypoint(x: centerX + $0.0 * scale, y: centerY + $0.1 * scale, score: score) })
}
