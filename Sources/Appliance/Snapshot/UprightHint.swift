import Capture
import PoseEstimation

/// The line `snapshot` prints when most people it saw lie with their head to one side (or down):
/// the camera is probably mounted sideways (or upside down), and `camera.rotation` can turn the
/// picture. Only a hint, never applied by itself: someone doing push-ups lies flat too.
enum UprightHint {
    /// The hint for `tally` when the pictures were turned by `orientation`, or nil when most people
    /// stood upright (or nobody was seen).
    static func message(_ tally: BodyDirectionTally, orientation: FrameOrientation) -> String? {
        guard let (direction, frames) = tally.mostlyNotUpright else { return nil }
        let fixed = orientation.turned(by: direction.quarterTurnsToUpright)
        let how = direction == .down ? ("upside down", "upside down") : ("on their side", "sideways")
        let setting = "camera.rotation = \(fixed.degrees)"
        return "hint: people appear \(how.0) in \(frames) of \(tally.frames) frames: "
            + "if the camera is mounted \(how.1), set \(setting) in posewatch.toml "
            + "(try it here first with --rotation \(fixed.degrees); exercises done lying down, such as push-ups, look like this too)"
    }
}
