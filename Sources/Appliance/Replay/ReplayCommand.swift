import Actions
import ArgumentParser
import Capture
import LinuxSystem
import PoseEstimation

/// `posewatch replay`: the live pipeline from the pose stage on, over a recorded clip or keypoint
/// file, driven by the input's timestamps, deterministic and as fast as the machine allows.
struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Run the pipeline over a recorded clip (Y4M, MJPEG) or keypoint file (.npy) and report decisions, repetitions and a summary.",
        discussion: """
            Keypoint files are NumPy float[T,17,3]: COCO-17 (x, y, score) in pixels, one row per frame at --fps.
            Make a clip from any video: ffmpeg -i clip.mp4 -r 15 -pix_fmt yuv420p -f yuv4mpegpipe clip.y4m
            Exit status: 0 done, 2 bad arguments or input, 78 bad config file.
            """)

    @Argument(help: "A .y4m or MJPEG clip, or a .npy keypoint file.")
    var input: String?

    @Flag(help: "Replay a built-in made-up session (squats, then jumping jacks) through the built-in classifier: no camera or model needed.")
    var demo = false

    @Option(parsing: .unconditional, help: "Frame rate of a keypoint file or MJPEG clip (Y4M files carry their own; \(CommandLineLimits.framesPerSecond.rangeText) fps).")
    var fps: CommandLineNumber<Double>?

    @Option(parsing: .unconditional, help: "Frame size WxH of a keypoint file (informational; coordinates are pixels; each side \(CommandLineLimits.frameSide.rangeText) pixels).")
    var frameSize: String?

    @Option(help: "Config file (default: \(ApplianceConfiguration.defaultPath) if present).")
    var config: String?

    @Option(help: "Output format: jsonl or text.")
    var format: String = "jsonl"

    @Option(help: "Fix the current action to LABEL and bypass the classifier (count one chosen exercise).")
    var action: String?

    @Flag(help: "Count every exercise with the motion rule, without the learned phase net (to measure the rule on exercises posewatch does not name).")
    var motionRule = false

    @Option(help: "Pose model path (default: from the config).")
    var poseModel: String?

    @Option(help: "Classifier model path (default: from the config, else the built-in model).")
    var classifierModel: String?

    @Flag(help: "Always look at the whole frame (no crop from the previous pose).")
    var noSmartCropping = false

    @Flag(help: "Let MoveNet alone decide whom it sees: no search for other people and nobody blacked out (to measure what telling people apart does).")
    var noPeopleSearch = false

    @Flag(help: "Never smooth a picture's noisy colour before MoveNet (to measure what the smoothing does in a dim room).")
    var noDenoise = false

    @OptionGroup var orientationOptions: OrientationOptions

    func validate() throws {
        guard (input == nil) == demo else { throw ValidationError("give an input file, or --demo") }
        guard ReplayReport.Format(rawValue: format) != nil else { throw ValidationError("--format must be 'jsonl' or 'text', not '\(MessageExcerpt.plain(format))'") }
        _ = try CommandLineLimits.framesPerSecond.check(fps)
        if let action, ActionLabel(rawValue: action) == nil {
            throw ValidationError("--action must be one of \(ActionLabel.allCases.map(\.rawValue).joined(separator: ", ")), not '\(MessageExcerpt.plain(action))'")
        }
        if let frameSize, FrameSize(frameSize) == nil {
            throw ValidationError("--frame-size must look like 640x480, each side from \(CommandLineLimits.frameSide.rangeText) pixels, not '\(MessageExcerpt.plain(frameSize))'")
        }
    }

    func run() throws {
        let fps = try CommandLineLimits.framesPerSecond.check(self.fps)
        let configuration: ApplianceConfiguration
        do { configuration = try ApplianceConfiguration.load(path: config) } catch {
            printError("posewatch replay: \(error)")
            throw ExitCode(ExitStatus.configuration)
        }
        do {
            var settings = configuration.pipelineSettings
            settings.fixedAction = action.flatMap(ActionLabel.init(rawValue:))
            let classifier = try ModelLoading.classifier(path: classifierModel, configuration: configuration)
            var pipeline = ActionPipeline(classifier: classifier, counter: try ModelLoading.repetitionCounter(motionRuleOnly: motionRule), settings: settings)
            var report = ReplayReport(format: ReplayReport.Format(rawValue: format)!)
            if demo {
                for (frame, pose) in DemoSession.poses().enumerated() {
                    let seconds = Double(frame) / DemoSession.framesPerSecond
                    try Self.report(pipeline.process(pose, at: seconds), pipeline: pipeline, seconds: seconds, into: &report)
                }
                report.summary(pipeline.summary, frames: pipeline.frames, poses: pipeline.framesWithPerson)
            } else if let input, input.hasSuffix(".npy") {
                guard let fps else { throw InputError("\(MessageExcerpt.path(input)): a keypoint file needs --fps (its frame rate)") }
                var file = try KeypointFile(path: input)
                while let (frame, pose) = try file.nextPose() {
                    let seconds = Double(frame) / fps
                    try Self.report(pipeline.process(pose, at: seconds), pipeline: pipeline, seconds: seconds, into: &report)
                }
                report.summary(pipeline.summary, frames: pipeline.frames, poses: pipeline.framesWithPerson)
            } else if let input {
                let source = try FrameInput.file(input, framesPerSecond: fps)
                var estimator = try ModelLoading.poseEstimator(path: poseModel, configuration: configuration, commandHasOption: true)
                estimator.smartCropping = configuration.smartCropping && !noSmartCropping
                estimator.searchesForPeople = !noPeopleSearch
                estimator.smoothsNoisyColour = !noDenoise
                estimator.orientation = try orientationOptions.orientation(over: configuration)
                var replayer = ClipReplayer(estimator: estimator, pipeline: pipeline, report: report, inputPath: input)
                try source.read(with: &replayer)
            }
        } catch let error as InputError {
            printError("posewatch replay: \(error)")
            throw ExitCode(ExitStatus.usage)
        } catch let error as ModelRunFailure {
            printError("posewatch replay: \(error)")
            throw ExitCode(ExitStatus.failure)
        } catch let error as ModelLoadingError {
            // A model named in the config (or the package's default) is a configuration error,
            // 78 as in `run`; one given with --pose-model/--classifier-model is a bad argument.
            printError("posewatch replay: \(error)")
            throw ExitCode(error.exitStatus)
        }
    }

    /// Writes what happened on one frame; a classifier that failed on its window ends the replay
    /// (a replay's figures would silently miss decisions otherwise), and so does standard output
    /// gone (`OutputLost`: nobody reads the rest).
    static func report(_ step: ActionPipelineStep, pipeline: borrowing ActionPipeline, seconds: Double,
                       into report: inout ReplayReport) throws {
        if let failure = step.classifierFailure { throw ModelRunFailure("at \(seconds) s: \(failure)") }
        for number in step.repetitions { report.repetition(pipeline.counter.event(number: number), at: seconds) }
        if let decision = step.decision { report.decision(decision, at: seconds, repetitions: pipeline.summary.repetitions) }
        try StandardOutput.check()
    }
}

/// Runs a clip through the pose estimator and the action pipeline.
struct ClipReplayer: FrameConsumer, ~Copyable {
    var estimator: MoveNetEstimator
    var pipeline: ActionPipeline
    var report: ReplayReport
    /// The clip, for the message when none of its frames could be used.
    let inputPath: String

    mutating func consume<Source: FrameSource & ~Copyable>(_ source: inout Source) throws {
        var first: MonotonicInstant?
        var lastPeople = 1
        while true {
            var loaded = false
            let outcome = source.nextFrame(timeoutMilliseconds: 0) { frame in
                if first == nil { first = frame.timestamp }
                loaded = estimator.loadInput(from: frame)
                return loaded ? .used : .broken
            }
            if outcome == .endOfStream { break }
            guard outcome == .frame, loaded else { continue }
            let estimate: PoseEstimate
            do { estimate = try estimator.estimate() } catch { throw ModelRunFailure(error.description) }
            let seconds = (estimate.timestamp - first!).seconds
            // A second person coming or going, or the watch moving, is reported; one person
            // arriving alone is not (every clip would start with the line).
            let people = max(estimate.peopleInView, 1)
            if people != lastPeople || estimate.watchMoved {
                if people > 1 || lastPeople > 1 || estimate.watchMoved {
                    report.people(count: people, watch: estimate.watchIdentifier, moved: estimate.watchMoved, at: seconds)
                }
                lastPeople = people
            }
            try ReplayCommand.report(pipeline.process(estimate.pose, at: seconds), pipeline: pipeline, seconds: seconds, into: &report)
            estimator.watchedPersonExercises(pipeline.currentDecision.action?.isCountable ?? false, at: estimate.timestamp)
        }
        if let refusal = InputError.noUsableFrame(in: inputPath, statistics: source.statistics) { throw refusal }
        report.summary(pipeline.summary, frames: pipeline.frames, poses: pipeline.framesWithPerson)
    }
}

/// `640x480`.
struct FrameSize {
    var width: Int
    var height: Int
    init?(_ text: String) {
        let parts = text.split(separator: "x")
        let sides = CommandLineLimits.frameSide.range
        guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]),
              sides.contains(width), sides.contains(height) else { return nil }
        self.width = width
        self.height = height
    }
}
