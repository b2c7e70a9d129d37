import ArgumentParser
import Capture
import LinuxSystem

/// `--rotation` and `--flip`/`--no-flip` for `replay` and `snapshot`: try an orientation on a clip
/// or the camera before writing it into the config (`camera.rotation`, `camera.flip`), which
/// these commands otherwise take from `--config`.
struct OrientationOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: "Turn every frame this many degrees clockwise before the pose model: 0, 90, 180 or 270 (default: camera.rotation from the config).")
    var rotation: CommandLineNumber<Int>?

    @Flag(inversion: .prefixedNo, help: "Mirror every frame left to right after turning it (default: camera.flip from the config).")
    var flip: Bool?

    func validate() throws {
        _ = try checkedRotation()
    }

    /// The rotation given, checked; nil when the option is absent.
    func checkedRotation() throws(ValidationError) -> Int? {
        guard let rotation else { return nil }
        guard let degrees = rotation.value, FrameOrientation.degreeChoices.contains(degrees) else {
            throw ValidationError("--rotation must be 0, 90, 180 or 270 (degrees clockwise), not \(MessageExcerpt.plain(rotation.text))")
        }
        return degrees
    }

    /// The configured orientation with the options given here in place of its parts.
    func orientation(over configuration: ApplianceConfiguration) throws(ValidationError) -> FrameOrientation {
        let degrees = try checkedRotation() ?? configuration.cameraRotation
        return FrameOrientation(degrees: degrees, mirrored: flip ?? configuration.cameraFlip) ?? .upright
    }
}
