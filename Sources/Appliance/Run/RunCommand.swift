#if canImport(Glibc)
import Glibc
#endif
import Actions
import ArgumentParser
import Capture
import LinuxSystem
import Outputs
import PoseEstimation

/// `posewatch run` (also plain `posewatch`): the appliance.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Watch the camera, recognise exercises, count repetitions, light the LEDs and log to the journal.",
        discussion: """
            Exit status: 0 stopped by SIGTERM/SIGINT or end of --input, 1 run-time failure, \
            78 configuration error (bad config file, missing model, no such GPIO line): systemd does not restart on 78.
            """)

    @Option(help: "Config file (default: \(ApplianceConfiguration.defaultPath) if present).")
    var config: String?

    @Option(help: "LED backend, overriding the config: gpio or console.")
    var leds: String?

    @Option(help: "Camera device or stable name, overriding the config.")
    var device: String?

    @Option(help: "Play a Y4M or MJPEG file in real time instead of a camera (demos, soak tests).")
    var input: String?

    @Option(parsing: .unconditional, help: "Frame rate of an MJPEG --input (\(CommandLineLimits.framesPerSecond.rangeText) fps).")
    var fps: CommandLineNumber<Double>?

    func validate() throws {
        _ = try CommandLineLimits.framesPerSecond.check(fps)
        if let leds, LEDBackend(rawValue: leds) == nil { throw ValidationError("--leds must be 'gpio' or 'console', not '\(MessageExcerpt.plain(leds))'") }
        if device != nil && input != nil { throw ValidationError("give --device or --input, not both") }
    }

    func run() throws {
        var configuration: ApplianceConfiguration
        do { configuration = try ApplianceConfiguration.load(path: config) } catch {
            printError("posewatch: \(error)")
            throw ExitCode(ExitStatus.configuration)
        }
        if let leds, let backend = LEDBackend(rawValue: leds) { configuration.ledBackend = backend }
        if let device { configuration.cameraDevice = device }
        let logger = Logger.standard(level: configuration.logLevel)

        // Models: a missing or bad model is an installation/configuration problem (exit 78).
        var estimator = try Self.loadPoseEstimator(configuration, logger: logger)
        estimator.smartCropping = configuration.smartCropping
        estimator.orientation = configuration.frameOrientation
        let classifier = try Self.loadClassifier(configuration, logger: logger)
        let counter = try Self.loadRepetitionCounter(logger: logger)
        let pipeline = ActionPipeline(classifier: classifier, counter: counter, settings: configuration.pipelineSettings)

        let layout: LEDLayout
        do { layout = try LEDLayout(actions: configuration.actionLEDLines, statusLine: configuration.statusLEDLine) } catch {
            // The config reader already refuses this; a layout is checked wherever it is built.
            logger.critical("\(error)", LogFields(event: .config))
            throw ExitCode(ExitStatus.configuration)
        }
        let status: Int32
        switch configuration.ledBackend {
        case .console:
            status = try start(lines: ConsoleLEDLines(leds: layout.leds), estimator: estimator, pipeline: pipeline,
                                  layout: layout, logger: logger, configuration: configuration)
        case .gpio:
            let lines: GPIOLEDLines
            do { lines = try GPIOLEDLines(leds: layout.leds) } catch {
                // A missing, duplicated or busy line is fixed in the config or on the board, not by
                // restarting: exit 78 so systemd does not loop. `--leds console` runs without GPIO.
                logger.critical("\(error)", LogFields(event: .config))
                throw ExitCode(ExitStatus.configuration)
            }
            status = try start(lines: lines, estimator: estimator, pipeline: pipeline,
                                  layout: layout, logger: logger, configuration: configuration)
        }
        if status != 0 { throw ExitCode(status) }
    }

    private static func loadPoseEstimator(_ configuration: ApplianceConfiguration, logger: Logger) throws -> MoveNetEstimator {
        do { return try ModelLoading.poseEstimator(path: nil, configuration: configuration, commandHasOption: false) } catch {
            logger.critical("\(error)", LogFields(event: .config))
            throw ExitCode(ExitStatus.configuration)
        }
    }

    private static func loadClassifier(_ configuration: ApplianceConfiguration, logger: Logger) throws -> ActionClassifier {
        do { return try ModelLoading.classifier(path: nil, configuration: configuration) } catch {
            logger.critical("\(error)", LogFields(event: .config))
            throw ExitCode(ExitStatus.configuration)
        }
    }

    private static func loadRepetitionCounter(logger: Logger) throws -> RepetitionCounter {
        do { return try ModelLoading.repetitionCounter() } catch {
            logger.critical("\(error)", LogFields(event: .config))
            throw ExitCode(ExitStatus.configuration)
        }
    }

    /// Picks the frame source and runs the loop with the chosen LED lines.
    private func start<Lines: LEDLines & ~Copyable>(
        lines: consuming Lines, estimator: consuming MoveNetEstimator, pipeline: consuming ActionPipeline,
        layout: LEDLayout, logger: Logger, configuration: ApplianceConfiguration
    ) throws -> Int32 {
        let notifier = ServiceNotifier.fromEnvironment()
        if let input {
            let kind: FrameInput
            let framesPerSecond = try CommandLineLimits.framesPerSecond.check(fps)
            do { kind = try FrameInput.file(input, framesPerSecond: framesPerSecond) } catch {
                logger.critical("\(error)", LogFields(event: .config))
                throw ExitCode(ExitStatus.usage)
            }
            switch kind {
            case .y4m(let path):
                let source: Y4MFileSource
                do { source = try Y4MFileSource(path: path, pacing: .realTime) } catch {
                    logger.critical("\(error)", LogFields(event: .config)); throw ExitCode(ExitStatus.usage)
                }
                return try loop(source: source, lines: lines, estimator: estimator, pipeline: pipeline, layout: layout,
                                logger: logger, notifier: notifier, configuration: configuration)
            case .mjpeg(let path, let rate):
                let source: MJPEGFileSource
                do { source = try MJPEGFileSource(path: path, framesPerSecond: rate, pacing: .realTime) } catch {
                    logger.critical("\(error)", LogFields(event: .config)); throw ExitCode(ExitStatus.usage)
                }
                return try loop(source: source, lines: lines, estimator: estimator, pipeline: pipeline, layout: layout,
                                logger: logger, notifier: notifier, configuration: configuration)
            case .camera:
                preconditionFailure("a file input is never a camera")
            }
        }
        // The configured camera, else /dev/posewatch-camera, else the first usable camera. None at
        // all is not fatal: the loop reports the camera lost and keeps looking for it.
        let device = CameraSelection.resolveOnThisMachine(configured: configuration.cameraDevice)
            ?? configuration.cameraDevice ?? "/dev/posewatch-camera"
        var request = CaptureRequest(framesPerSecond: pipeline.framesPerSecond)
        if let size = configuration.cameraSize { request.width = size.width; request.height = size.height }
        var cameraConfiguration = CameraConfiguration(device: device, request: request)
        cameraConfiguration.bufferCount = configuration.cameraBufferCount
        cameraConfiguration.autoControls = configuration.cameraAutoControls
        let source = CameraSource(configuration: cameraConfiguration, calls: LibV4L2SystemCalls())
        logger.info("camera \(MessageExcerpt.path(device)), \(pipeline.framesPerSecond) fps", LogFields(event: .camera))
        // What opening set (only posewatch's words and numbers; nothing the driver names).
        if let controls = source.controls { logger.info("camera controls: \(controls)", LogFields(event: .camera)) }
        return try loop(source: source, lines: lines, estimator: estimator, pipeline: pipeline, layout: layout,
                        logger: logger, notifier: notifier, configuration: configuration)
    }

    private func loop<Source: LoopFrameSource & ~Copyable, Lines: LEDLines & ~Copyable>(
        source: consuming Source, lines: consuming Lines, estimator: consuming MoveNetEstimator,
        pipeline: consuming ActionPipeline, layout: LEDLayout, logger: Logger, notifier: ServiceNotifier,
        configuration: ApplianceConfiguration
    ) throws -> Int32 {
        let signals = try Self.makeSignals(logger: logger)
        let timer = try Self.makeTimer(logger: logger)
        var frameLoop = FrameLoop(source: source, estimator: estimator, pipeline: pipeline, lines: lines, layout: layout,
                                  logger: logger, notifier: notifier, configuration: configuration, configurationPath: config,
                                  signals: signals, timer: timer)
        frameLoop.inputPath = input
        return frameLoop.run()
    }

    /// SIGTERM, SIGINT and SIGHUP as events for the loop's poll().
    private static func makeSignals(logger: Logger) throws -> SignalDescriptor {
        do { return try SignalDescriptor(signals: [SIGTERM, SIGINT, SIGHUP]) } catch {
            logger.critical("cannot set up the loop: \(error)", LogFields(event: .error))
            throw ExitCode(ExitStatus.failure)
        }
    }

    /// The loop's one timer (LED blinking, watchdog, summaries).
    private static func makeTimer(logger: Logger) throws -> TimerDescriptor {
        do { return try TimerDescriptor() } catch {
            logger.critical("cannot set up the loop: \(error)", LogFields(event: .error))
            throw ExitCode(ExitStatus.failure)
        }
    }
}
