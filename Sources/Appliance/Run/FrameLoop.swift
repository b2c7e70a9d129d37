import Actions
import Capture
import LinuxSystem
import Outputs
import PoseEstimation
#if canImport(Glibc)
import Glibc
#endif

/// The appliance's one loop, the one place where time passes: camera frames, signals (signalfd),
/// and every timer (LED blinking, the watchdog ping, the periodic summary) wake the same `poll()`.
/// Each frame goes camera → pose model → action pipeline → LEDs and journal; nothing else runs
/// concurrently (inference may use the core's worker pool inside one invoke).
///
/// Time-keeping outputs (LED patterns, the watchdog ping) are serviced after every wake-up and,
/// while the pose model runs, between its operators (`TimedOutputs`), so they do not depend on how
/// long one inference takes.
///
/// Generic over the frame source and the LED backend, so every per-frame call is direct; after
/// start-up a frame allocates nothing (the summary reports the measured count when posewatch runs
/// with the malloc-counting preload).
struct FrameLoop<Source: LoopFrameSource & ~Copyable, Lines: LEDLines & ~Copyable>: ~Copyable {
    var source: Source
    var estimator: MoveNetEstimator
    var pipeline: ActionPipeline
    /// The LEDs and the watchdog ping: also serviced during inference.
    var outputs: TimedOutputs<Lines>
    let layout: LEDLayout
    let logger: Logger
    let notifier: ServiceNotifier
    var summary: RunSummary
    var configuration: ApplianceConfiguration
    let configurationPath: String?
    /// The clip given with --input (nil for a camera), for messages about it.
    var inputPath: String?

    private let signals: SignalDescriptor
    private let timer: TimerDescriptor
    private let pollSet: PollSet
    private var cameraErrors = ErrorEpisode()
    /// Frames the pose model failed on, and decisions the classifier failed on, in a row.
    private var poseModelErrors = ErrorEpisode()
    private var classifierErrors = ErrorEpisode()
    private var isReady = false
    private var stopReason: String?
    private var exitStatus = ExitStatus.success
    private var lastDropped = 0
    private var nextSummary = MonotonicInstant.zero
    private var nextStatus = MonotonicInstant.zero
    private var firstFrameTime: MonotonicInstant?
    /// The capture time of the newest frame processed (cameras only: file timestamps are stream time).
    private var newestFrameTime: MonotonicInstant?
    /// A second person in view, the watch moving, a picture too dark: said once per episode.
    private var sceneNotes = SceneNotes()
    private let allocations = AllocationProbe()
    /// Allocations made while handling frames (capture, models, pipeline, event logging) in the
    /// current summary interval. LED writes are measured apart (GPIO writes are allocation-free in
    /// OutputsTests; the console backend formats text), timer work (summaries, STATUS) is not a frame.
    private var frameAllocations: UInt64 = 0
    private var framesAtSummaryStart = 0

    private static var signalSlot: Int { 0 }
    private static var timerSlot: Int { 1 }
    private static var cameraSlot: Int { 2 }

    /// `signals` must watch SIGTERM, SIGINT and SIGHUP. The descriptors are made by the caller so
    /// this initializer cannot fail (Swift 6.0.3's SIL verifier crashes on a throwing initializer
    /// that consumes generic noncopyable parameters).
    init(source: consuming Source, estimator: consuming MoveNetEstimator, pipeline: consuming ActionPipeline,
         lines: consuming Lines, layout: LEDLayout, logger: Logger, notifier: ServiceNotifier,
         configuration: ApplianceConfiguration, configurationPath: String?,
         signals: consuming SignalDescriptor, timer: consuming TimerDescriptor) {
        let now = MonotonicInstant.now()
        self.source = source
        self.estimator = estimator
        self.pipeline = pipeline
        self.outputs = TimedOutputs(lines: lines, layout: layout, notifier: notifier,
                                    watchdog: configuration.watchdogEnabled ? WatchdogSchedule.fromEnvironment() : nil,
                                    maxStallSeconds: configuration.watchdogMaxStallSeconds, logger: logger)
        self.layout = layout
        self.logger = logger
        self.notifier = notifier
        self.summary = RunSummary(actionLabels: layout.actionLabels, now: now)
        self.configuration = configuration
        self.configurationPath = configurationPath
        self.signals = signals
        self.timer = timer
        pollSet = PollSet(count: 3)
        pollSet.watch(self.signals.rawValue, in: Self.signalSlot)
        pollSet.watch(self.timer.rawValue, in: Self.timerSlot)
        pollSet.watch(-1, in: Self.cameraSlot)
    }

    /// Runs until SIGTERM/SIGINT (or the end of a file input); returns the exit status.
    mutating func run() -> Int32 {
        var now = MonotonicInstant.now()
        nextSummary = now + .seconds(Int64(configuration.summaryIntervalSeconds))
        nextStatus = now
        logger.notice("posewatch \(PosewatchVersion.current) started: \(pipeline.classifier.metadata.labels.count) actions at \(pipeline.framesPerSecond) fps, LEDs \(configuration.ledBackend.rawValue)",
                      LogFields(event: .start, fps: pipeline.framesPerSecond))
        outputs.leds.setStatus(.healthy, at: now)
        outputs.leds.show(.startingUp, at: now)
        outputs.applyLEDs(at: now)

        while stopReason == nil {
            now = MonotonicInstant.now()
            let deadline = nextDeadline(after: now)
            timer.arm(at: deadline)
            let cameraDescriptor = source.pollDescriptor
            pollSet.watch(cameraDescriptor ?? -1, in: Self.cameraSlot)
            // Files pace themselves inside nextFrame; a lost camera is retried by nextFrame too.
            let waitsInSource = !Source.isCamera
            let timeout: Int32 = waitsInSource ? 0 : (cameraDescriptor == nil ? 250 : -1)
            do {
                _ = try pollSet.wait(timeoutMilliseconds: timeout)
            } catch {
                logger.critical("poll failed: \(error)", LogFields(event: .error))
                stopReason = "poll failed"
                exitStatus = ExitStatus.failure
                break
            }
            if pollSet.isReadable(Self.signalSlot) { handleSignals() }
            if pollSet.isReadable(Self.timerSlot) { timer.acknowledge() }
            if stopReason != nil { break }

            let allocationsBeforeFrame = allocations.count
            let servicingBeforeFrame = outputs.allocationsWhileServicing
            if waitsInSource {
                let untilDeadline = max(0, (deadline - MonotonicInstant.now()).wholeMilliseconds)
                processFrame(timeoutMilliseconds: Int32(min(untilDeadline, 100)))
            } else if cameraDescriptor == nil || pollSet.isReadable(Self.cameraSlot) || pollSet.hasFailed(Self.cameraSlot)
                        || pollSet.returnedEvents(Self.cameraSlot) & Int16(POLLPRI) != 0 {
                processFrame(timeoutMilliseconds: 0)
            }
            if let before = allocationsBeforeFrame, let after = allocations.count {
                frameAllocations += after - before - (outputs.allocationsWhileServicing - servicingBeforeFrame)
            }
            now = MonotonicInstant.now()
            outputs.service(at: now)
            runTimers(at: now)
            if let lost = logger.lostOutput ?? outputs.driver.lines.lostOutput { stopForLostOutput(lost) }
        }
        stop(at: MonotonicInstant.now())
        return exitStatus
    }

    /// Tells systemd READY the first time the loop is doing its job (frames flow, or it knows the
    /// camera is lost and keeps looking); true that first time only.
    @discardableResult
    private mutating func becomeReady() -> Bool {
        guard !isReady else { return false }
        isReady = true
        try? notifier.ready()
        return true
    }

    // MARK: frames

    private mutating func processFrame(timeoutMilliseconds: Int32) {
        var loaded = false
        let outcome = source.nextFrame(timeoutMilliseconds: timeoutMilliseconds) { frame in
            loaded = estimator.loadInput(from: frame)
            return loaded ? .used : .broken
        }
        let now = MonotonicInstant.now()
        switch outcome {
        case .frame where loaded:
            // The LEDs and the watchdog are serviced between the model's operators meanwhile.
            let estimate: PoseEstimate
            do {
                estimate = try estimator.estimate(servicing: &outputs)
            } catch {
                if Self.modelFailed(&poseModelErrors, error.description, at: now, logger: logger) { stopForFailingModel() }
                break
            }
            logger.recovered(from: &poseModelErrors, at: now, "the pose model runs again", LogFields(event: .error))
            let finished = MonotonicInstant.now()
            let start = firstFrameTime ?? estimate.timestamp
            firstFrameTime = start
            if Source.isCamera { newestFrameTime = estimate.timestamp }
            let seconds = (estimate.timestamp - start).seconds
            let step = pipeline.process(estimate.pose, at: seconds)
            estimator.watchedPersonExercises(pipeline.currentDecision.action?.isCountable ?? false, at: estimate.timestamp)
            summary.recordFrame(inferenceNanoseconds: estimate.inferenceNanoseconds)
            summary.recordPeopleInView(estimate.peopleInView)
            sceneNotes.note(peopleInView: estimate.peopleInView, watchMoved: estimate.watchMoved, brightness: estimate.brightness,
                            personFound: estimate.pose != nil, at: estimate.timestamp, logger: logger)
            // What the LEDs show starts now, after the frame's inference: from `now` (read before
            // it) a 150 ms wink could be over before the LEDs are next written on a slow board.
            let shown = MonotonicInstant.now()
            if let failure = step.classifierFailure {
                if Self.modelFailed(&classifierErrors, failure.description, at: now, logger: logger) { stopForFailingModel() }
            } else if let decision = step.decision {
                logger.recovered(from: &classifierErrors, at: now, "the classifier runs again", LogFields(event: .error))
                show(decision, at: shown)
            }
            for number in step.repetitions { counted(pipeline.counter.event(number: number), at: shown) }
            outputs.lastProgress = finished
            if becomeReady() { logger.notice("frames are flowing", LogFields(event: .camera)) }
        case .cameraLost(let error):
            outputs.cameraLost(at: now)
            outputs.leds.setStatus(.cameraLost, at: now)
            outputs.leds.show(.noPerson, at: now)
            logger.error(in: &cameraErrors, at: now, "camera lost: \(error); retrying", LogFields(event: .camera))
            // No camera at start (a board booted without one) is the appliance doing its job: it
            // blinks fast and keeps looking. Waiting for frames to say READY would leave systemd
            // "activating" until its start timeout killed posewatch and restarted it, over and over.
            becomeReady()
        case .cameraBack:
            outputs.cameraBack(at: now)
            outputs.leds.setStatus(.healthy, at: now)
            logger.recovered(from: &cameraErrors, at: now, "camera is back", LogFields(event: .camera))
        case .endOfStream:
            stopReason = "end of input"
            // A clip none of whose frames could be used is bad input, not a quiet run of 0 frames.
            if !Source.isCamera, let refusal = InputError.noUsableFrame(in: inputPath ?? "the input", statistics: source.statistics) {
                logger.critical("\(refusal)", LogFields(event: .config))
                exitStatus = ExitStatus.usage
            }
        case .frame, .brokenFrame, .nothingNew, .timedOut:
            break
        }
        let dropped = source.statistics.dropped
        if dropped != lastDropped {
            summary.recordDroppedFrames(dropped - lastDropped)
            lastDropped = dropped
        }
    }

    /// Logs a model failure (the first of an episode) and returns whether the loop must stop
    /// (`ModelFailurePolicy`).
    private static func modelFailed(_ episode: inout ErrorEpisode, _ message: String, at now: MonotonicInstant,
                                    logger: Logger) -> Bool {
        logger.error(in: &episode, at: now, "\(message); skipping the frame", LogFields(event: .error))
        guard ModelFailurePolicy.mustStop(episode, at: now) else { return false }
        logger.critical("\(message): failed on every frame for \(Int(ModelFailurePolicy.limitSeconds)) s (\(episode.failures) times); stopping, check the model with 'posewatch doctor'",
                        LogFields(event: .error))
        return true
    }

    /// Standard error (the log without a journal) or standard output (the console LEDs) can no
    /// longer be written: a reader that quit (`| head`), a full disk. Going on would watch for
    /// nobody, so the loop stops with exit status 1; the LEDs still go off and the final summary
    /// is still written wherever it can go (the journal, the stream that still works).
    private mutating func stopForLostOutput(_ reason: Errno) {
        stopReason = "its output is gone: \(reason)"
        exitStatus = ExitStatus.failure
    }

    private mutating func stopForFailingModel() {
        stopReason = "a model fails on every frame"
        exitStatus = ExitStatus.configuration
    }

    /// Shows a decision on the LEDs; a change is logged and told to systemd at once.
    private mutating func show(_ decision: ActionDecision, at now: MonotonicInstant) {
        let reps = decision.action.map { pipeline.counter.count(of: $0) }
        if LoopEvents.show(decision, reps: reps, leds: &outputs.leds, summary: &summary, layout: layout, logger: logger, at: now) {
            nextStatus = now
        }
    }

    private mutating func counted(_ repetition: RepetitionEvent, at now: MonotonicInstant) {
        LoopEvents.counted(repetition, leds: &outputs.leds, summary: &summary, layout: layout, logger: logger, at: now)
    }

    // MARK: LEDs, timers, signals

    private func nextDeadline(after now: MonotonicInstant) -> MonotonicInstant {
        let deadline = min(nextSummary, nextStatus)
        return outputs.nextDeadline(after: now).map { min($0, deadline) } ?? deadline
    }

    /// Timer work that is not time-critical and may allocate (the summary, STATUS=): between frames only.
    private mutating func runTimers(at now: MonotonicInstant) {
        if now >= nextStatus {
            sendStatus(at: now)
            nextStatus = now + .seconds(5)
        }
        if now >= nextSummary {
            logSummary(at: now, final: false)
            nextSummary = now + .seconds(Int64(configuration.summaryIntervalSeconds))
        }
    }

    private func sendStatus(at now: MonotonicInstant) {
        guard notifier.isEnabled else { return }
        let current = pipeline.currentDecision
        let reps = current.action.map { ", \(pipeline.counter.count(of: $0)) reps" } ?? ""
        let camera = outputs.isCameraLost ? "camera lost" : "\(String(format2: summary.framesPerSecond(at: now))) fps"
        try? notifier.status("\(current.name)\(reps), \(camera)")
    }

    private mutating func logSummary(at now: MonotonicInstant, final: Bool) {
        var fields = summary.fields(at: now)
        fields.event = .summary
        if let newestFrameTime {
            // How old the newest processed frame is: how far the loop lags behind the camera. The
            // interval's counts are exact up to that frame (drops are known from the driver's
            // sequence numbers only once a later frame is dequeued), so camera rate =
            // (FRAMES + DROPPED_FRAMES) / the time between two summaries' newest frames.
            let age = (now - newestFrameTime).milliseconds
            fields.extra.append(LogField("FRAME_AGE_MS", .decimal(age, fractionDigits: 1)))
        }
        if allocations.count != nil {
            // Measured with the malloc-counting preload: allocations on the frame path per frame.
            let frames = pipeline.frames - framesAtSummaryStart
            if frames > 0 {
                fields.extra.append(LogField("ALLOCATIONS_PER_FRAME", .decimal(Double(frameAllocations) / Double(frames), fractionDigits: 3)))
            }
            frameAllocations = 0
            framesAtSummaryStart = pipeline.frames
        }
        logger.notice(final ? "final summary" : "summary", fields)
        // FPS, FRAMES, DROPPED_FRAMES and the inference percentiles cover one interval each.
        summary.startInterval(at: now)
    }

    private mutating func handleSignals() {
        while let signal = signals.nextSignal() {
            switch signal {
            case SIGTERM, SIGINT:
                stopReason = signal == SIGTERM ? "SIGTERM" : "SIGINT"
            case SIGHUP:
                reloadConfiguration()
            default:
                break
            }
        }
    }

    /// SIGHUP: read the config again. A bad file keeps the running settings and says why. Settings
    /// the loop can change in place apply at once; camera, model and LED wiring need a restart.
    /// It runs between two frames, which it cannot stall: only a regular file is read, at most
    /// `ApplianceConfiguration.maximumFileBytes`, and parsed in linear time (the largest allowed
    /// file in about half a millisecond in a release build on x86).
    private mutating func reloadConfiguration() {
        try? notifier.reloading()
        defer { try? notifier.ready() }
        let fresh: ApplianceConfiguration
        do {
            fresh = try ApplianceConfiguration.load(path: configurationPath)
        } catch {
            logger.error("config reload failed, keeping the running settings: \(error)", LogFields(event: .config))
            return
        }
        var needsRestart: [String] = []
        if fresh.cameraDevice != configuration.cameraDevice { needsRestart.append("camera.device") }
        if fresh.cameraAutoControls != configuration.cameraAutoControls { needsRestart.append("camera.auto_controls") }
        if fresh.poseModelPath != configuration.poseModelPath { needsRestart.append("models.pose") }
        if fresh.classifierModelPath != configuration.classifierModelPath { needsRestart.append("models.classifier") }
        if fresh.ledBackend != configuration.ledBackend || fresh.allLEDLines != configuration.allLEDLines
            || fresh.statusLEDLine != configuration.statusLEDLine { needsRestart.append("leds") }
        // Decision rules, keypoint smoothing, cropping and the picture's orientation change in
        // place, from the next frame on.
        pipeline.update(fresh.pipelineSettings)
        estimator.smartCropping = fresh.smartCropping
        estimator.orientation = fresh.frameOrientation
        logger.level = fresh.logLevel
        outputs.maxStallNanoseconds = Int64(fresh.watchdogMaxStallSeconds * 1e9)
        // A shorter summary interval applies from the reload: the next summary is due at most one
        // new interval away, not after what is left of the old one (up to an hour).
        if fresh.summaryIntervalSeconds < configuration.summaryIntervalSeconds {
            nextSummary = min(nextSummary, MonotonicInstant.now() + .seconds(Int64(fresh.summaryIntervalSeconds)))
        }
        configuration = fresh
        let note = needsRestart.isEmpty ? "" : "; restart posewatch to apply \(needsRestart.joined(separator: ", "))"
        logger.notice("config reloaded\(note)", LogFields(event: .config))
    }

    private mutating func stop(at now: MonotonicInstant) {
        try? notifier.stopping()
        outputs.leds.setStatus(.stopped, at: now)
        do { try outputs.driver.turnOff() } catch { logger.error("LEDs: \(error)", LogFields(event: .error)) }
        logSummary(at: now, final: true)
        logger.notice("posewatch stopped (\(stopReason ?? "unknown"))", LogFields(event: .stop))
    }
}

/// What the loop does when a model that loaded, and ran on its test input at start-up, fails on a
/// frame's data (only a damaged model file does that). The frame, or the decision, is skipped and
/// the first failure of an episode is logged: one bad frame should not stop the appliance. When
/// the model has failed on everything for `limitSeconds`, posewatch stops with exit status 78:
/// restarting would load the same file and fail the same way (the unit does not restart on 78),
/// the LEDs go off, and the journal and `posewatch doctor` name the file.
enum ModelFailurePolicy {
    /// How long a model may fail on every frame (or every decision) before posewatch stops.
    static let limitSeconds = 2.0

    /// Whether the failures of `episode`, the newest at `now`, stop the loop.
    static func mustStop(_ episode: ErrorEpisode, at now: MonotonicInstant) -> Bool {
        guard let start = episode.startedAt else { return false }
        return (now - start).seconds >= limitSeconds
    }
}
