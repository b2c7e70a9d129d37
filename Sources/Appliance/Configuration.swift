/// Where the LEDs go: real GPIO lines through libgpiod, or lines printed to the console.
public enum LEDBackend: String, Sendable, Equatable, CaseIterable {
    case gpio
    case console
}

/// The appliance's settings. Every field has a default, so posewatch runs with no config file.
///
/// Defaults follow the wiring in README.md: one LED per action on the Raspberry Pi header and a
/// status LED, all addressed by line name so the same file works on a Pi 4 and a Pi 5.
public struct ApplianceConfiguration: Sendable, Equatable {
    /// The default config file path.
    public static let defaultPath = "/etc/posewatch/posewatch.toml"

    /// Camera device path or stable name; nil picks the first usable camera.
    public var cameraDevice: String? = nil
    /// MoveNet Lightning int8, installed by the package's post-install step.
    public var poseModelPath = "/var/lib/posewatch/movenet_singlepose_lightning_int8_4.tflite"
    /// posewatch's action classifier, shipped in the package.
    public var classifierModelPath = "/usr/share/posewatch/action_classifier.tflite"
    /// LED backend.
    public var ledBackend: LEDBackend = .gpio
    /// Action label → GPIO line name.
    public var actionLEDLines: [(action: String, line: String)] = [
        ("jumping_jacks", "GPIO17"), ("lunges", "GPIO27"), ("burpees", "GPIO22"),
        ("squats", "GPIO23"), ("push_ups", "GPIO24"),
    ]
    /// The status LED's line name.
    public var statusLEDLine = "GPIO25"

    public init() {}

    /// Every LED line name, actions first then status.
    public var allLEDLines: [String] { actionLEDLines.map(\.line) + [statusLEDLine] }

    public static func == (lhs: ApplianceConfiguration, rhs: ApplianceConfiguration) -> Bool {
        lhs.cameraDevice == rhs.cameraDevice && lhs.poseModelPath == rhs.poseModelPath
            && lhs.classifierModelPath == rhs.classifierModelPath && lhs.ledBackend == rhs.ledBackend
            && lhs.actionLEDLines.elementsEqual(rhs.actionLEDLines, by: { $0 == $1 })
            && lhs.statusLEDLine == rhs.statusLEDLine
    }
}

/// Published digests of model files posewatch knows, to tell an intact download from a bad one.
public enum KnownModels {
    /// MoveNet SinglePose Lightning int8 v4 (Apache-2.0), as published on TF Hub / Kaggle.
    public static let moveNetLightningInt8SHA256 = "cd7cc22fa946e5d146a7b98d496853e1923e22828d3972d579973f27f91bb105"
    /// The file name deploy installs MoveNet under.
    public static let moveNetFileName = "movenet_singlepose_lightning_int8_4.tflite"
}
