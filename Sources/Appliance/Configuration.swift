// Only Outputs: the config reader and its fuzz target (Tests/Fuzz/build.sh) compile without the
// model and camera modules. What maps settings onto those lives in ConfigurationPipelineSettings.swift.
import Outputs

/// Where the LEDs go: real GPIO lines through libgpiod, or lines printed to the console.
public enum LEDBackend: String, Sendable, Equatable, CaseIterable {
    case gpio
    case console
}

/// The appliance's settings. Every field has a default, so posewatch runs with no config file; the
/// file's keys (documented in `deploy/posewatch.toml`) map one to one onto these fields.
///
/// Defaults follow the wiring in README.md: one LED per action on the Raspberry Pi header and a
/// status LED, all addressed by line name so the same file works on a Pi 4 and a Pi 5.
public struct ApplianceConfiguration: Sendable, Equatable {
    /// The default config file path.
    public static let defaultPath = "/etc/posewatch/posewatch.toml"

    /// `camera.device`: camera device path or stable name; nil picks the first usable camera.
    public var cameraDevice: String? = nil
    /// `camera.width` and `camera.height`: capture size override; nil lets capture choose the
    /// size nearest the pose model's input.
    public var cameraSize: (width: Int, height: Int)? = nil
    /// `camera.buffers`: V4L2 mmap buffers in the ring.
    public var cameraBufferCount = 4
    /// `camera.rotation`: degrees clockwise (0, 90, 180 or 270) to turn the camera's picture so
    /// that people stand upright in it; every input (camera and files) is turned before the pose
    /// model, and poses are in the turned picture's pixels.
    public var cameraRotation = 0
    /// `camera.flip`: mirror the picture left to right, after `cameraRotation`.
    public var cameraFlip = false
    /// `camera.auto_controls`: set auto exposure (keeping the frame rate), backlight compensation and
    /// autogain at open where the camera offers them; false keeps the camera's own settings.
    public var cameraAutoControls = true
    /// `models.pose`: MoveNet Lightning int8, installed by the package's post-install step.
    public var poseModelPath = "/var/lib/posewatch/movenet_singlepose_lightning_int8_4.tflite"
    /// `models.classifier`: posewatch's action classifier, shipped in the package.
    public var classifierModelPath = "/usr/share/posewatch/action_classifier.tflite"
    /// `classifier.confidence_threshold`: below this a prediction is `low_confidence`.
    public var confidenceThreshold = 0.6
    /// `classifier.smoothing`: predictions in a row that must agree before the shown action changes.
    public var smoothing = 3
    /// `pose.smart_cropping`: crop each frame around the person found in the previous one (MoveNet's
    /// own cropping algorithm) instead of letterboxing the whole frame; a person across the room
    /// keeps enough pixels (README: Pose stage).
    public var smartCropping = true
    /// `pose.smoothing`: One Euro smoothing of keypoints before the classifier and the counter. Off
    /// by default: the classifier and counter figures in the README are measured without it.
    public var keypointSmoothing = false
    /// `pose.smoothing_min_cutoff`: the One Euro filter's cutoff at rest, in Hz.
    public var smoothingMinimumCutoff = 0.5
    /// `pose.smoothing_beta`: how fast the cutoff rises with speed, per body length per second.
    public var smoothingBeta = 8.0
    /// `pose.threads`: threads one MoveNet invoke may use (1–8); nil (the key left out) takes the
    /// board's default, `BoardDefaults.inferenceThreads` (docs/performance-arm64.md).
    public var inferenceThreads: Int? = nil
    /// `leds.backend`: LED backend.
    public var ledBackend: LEDBackend = .gpio
    /// `[leds.actions]`: action label → GPIO line name, in LED order.
    public var actionLEDLines: [(action: String, line: String)] = [
        ("jumping_jacks", "GPIO17"), ("lunges", "GPIO27"), ("burpees", "GPIO22"),
        ("squats", "GPIO23"), ("push_ups", "GPIO24"),
    ]
    /// `leds.status`: the status LED's line name.
    public var statusLEDLine = "GPIO25"
    /// `journal.summary_interval`: seconds between summary entries (a summary is also logged at stop).
    public var summaryIntervalSeconds = 60
    /// `journal.level`: the lowest level written (`debug` … `critical`).
    public var logLevel: LogLevel = .info
    /// `watchdog.enabled`: ping systemd's watchdog when `WatchdogSec=` asks for it.
    public var watchdogEnabled = true
    /// `watchdog.max_stall`: seconds without a processed frame (outside camera recovery) after
    /// which the loop stops pinging, so systemd restarts a wedged process.
    public var watchdogMaxStallSeconds = 10.0

    public init() {}

    /// Every LED line name, actions first then status.
    public var allLEDLines: [String] { actionLEDLines.map(\.line) + [statusLEDLine] }

    public static func == (lhs: ApplianceConfiguration, rhs: ApplianceConfiguration) -> Bool {
        lhs.cameraDevice == rhs.cameraDevice && lhs.cameraSize?.width == rhs.cameraSize?.width
            && lhs.cameraSize?.height == rhs.cameraSize?.height && lhs.cameraBufferCount == rhs.cameraBufferCount
            && lhs.cameraRotation == rhs.cameraRotation && lhs.cameraFlip == rhs.cameraFlip
            && lhs.cameraAutoControls == rhs.cameraAutoControls
            && lhs.poseModelPath == rhs.poseModelPath && lhs.classifierModelPath == rhs.classifierModelPath
            && lhs.confidenceThreshold == rhs.confidenceThreshold && lhs.smoothing == rhs.smoothing
            && lhs.smartCropping == rhs.smartCropping && lhs.keypointSmoothing == rhs.keypointSmoothing
            && lhs.smoothingMinimumCutoff == rhs.smoothingMinimumCutoff && lhs.smoothingBeta == rhs.smoothingBeta
            && lhs.ledBackend == rhs.ledBackend
            && lhs.actionLEDLines.elementsEqual(rhs.actionLEDLines, by: { $0 == $1 })
            && lhs.statusLEDLine == rhs.statusLEDLine && lhs.summaryIntervalSeconds == rhs.summaryIntervalSeconds
            && lhs.logLevel == rhs.logLevel && lhs.watchdogEnabled == rhs.watchdogEnabled
            && lhs.watchdogMaxStallSeconds == rhs.watchdogMaxStallSeconds
            && lhs.inferenceThreads == rhs.inferenceThreads
    }
}

/// Published digests of model files posewatch knows, to tell an intact download from a bad one.
public enum KnownModels {
    /// MoveNet SinglePose Lightning int8 v4 (Apache-2.0), as published on TF Hub / Kaggle.
    public static let moveNetLightningInt8SHA256 = "cd7cc22fa946e5d146a7b98d496853e1923e22828d3972d579973f27f91bb105"
    /// The file name deploy installs MoveNet under.
    public static let moveNetFileName = "movenet_singlepose_lightning_int8_4.tflite"
}
