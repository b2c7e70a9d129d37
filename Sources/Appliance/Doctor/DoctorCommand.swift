import ArgumentParser
import Capture
import LinuxSystem

/// `posewatch doctor`: checks cameras, GPIO lines, the journal and model files.
struct DoctorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check cameras, GPIO LEDs, the journal and model files; exit 0 when posewatch can run.",
        discussion: "Exit status: 0 ready, 1 at least one item failed, 2 usage error.")

    @Flag(help: "Print the report as one JSON object.")
    var json = false

    @Option(help: "Config file to check and to check against (default: \(ApplianceConfiguration.defaultPath) if present).")
    var config: String?

    @Option(help: "Camera device or stable name to check (default: the first usable camera).")
    var camera: String?

    @Option(help: "Path of the pose model (MoveNet Lightning int8).")
    var poseModel: String?

    @Option(help: "Path of the action classifier model.")
    var classifierModel: String?

    @Option(help: "LED backend to check: gpio or console.")
    var leds: String?

    @Option(parsing: .unconditional, help: "The action model's frame rate the camera mode is negotiated for (default: the classifier's, 15; \(CommandLineLimits.framesPerSecond.rangeText) fps).")
    var fps: CommandLineNumber<Double>?

    func validate() throws {
        _ = try CommandLineLimits.framesPerSecond.check(fps)
        if let leds, LEDBackend(rawValue: leds) == nil {
            throw ValidationError("--leds must be 'gpio' or 'console', not '\(MessageExcerpt.plain(leds))'")
        }
    }

    func run() throws {
        // The checks use the settings `run` would use: the config file, then the overrides below.
        var configuration = ApplianceConfiguration()
        let configurationFile: ConfigurationFileState
        do {
            configuration = try ApplianceConfiguration.load(path: config)
            let path = config ?? ApplianceConfiguration.defaultPath
            configurationFile = config == nil && !ModelLoading.fileExists(path) ? .defaults(path: path) : .loaded(path: path)
        } catch {
            configurationFile = .rejected(error)
        }
        if let camera { configuration.cameraDevice = camera }
        if let poseModel { configuration.poseModelPath = poseModel }
        if let classifierModel { configuration.classifierModelPath = classifierModel }
        if let leds, let backend = LEDBackend(rawValue: leds) { configuration.ledBackend = backend }

        var observations = DoctorProbe.observe(configuration: configuration)
        observations.configurationFile = configurationFile
        var captureRequest = CaptureRequest()
        // The camera is asked for the classifier's frame rate (what `run` does).
        captureRequest.framesPerSecond = try CommandLineLimits.framesPerSecond.check(fps) ?? Self.classifierFramesPerSecond(configuration) ?? 15
        let report = Diagnosis.report(observations, configuration: configuration, captureRequest: captureRequest)
        if json {
            print(report.json(version: PosewatchVersion.current).serialized())
        } else {
            print("posewatch \(PosewatchVersion.current) doctor (\(observations.gpioBackend))")
            print(report.text())
        }
        if report.exitStatus != 0 { throw ExitCode(report.exitStatus) }
    }

    /// The frame rate of the classifier `run` would use (configured file or built in).
    static func classifierFramesPerSecond(_ configuration: ApplianceConfiguration) -> Double? {
        guard let classifier = try? ModelLoading.classifier(path: nil, configuration: configuration) else { return nil }
        return classifier.metadata.framesPerSecond
    }
}
