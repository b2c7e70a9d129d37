import LinuxSystem
import PoseEstimation

/// Counts repetitions of the current action in a stream of poses, online, and keeps cumulative counts
/// per action and per session. The frame loop and replay call this type; it runs three parts, each
/// in its own file (the Python reference mirrors them: `training/counter/counter.py`,
/// `counter_rule.py`, `counter_ledger.py` and `learned/count.py`'s `PhaseNetPath`):
/// - `RepetitionMotionRule`: poses → one motion signal → sides → repetitions, for every label;
/// - `RepetitionPhaseNetPath` (with a phase net): a learned net's phase → repetitions, for
///   `configuration.phaseLabels` (the rule's repetitions of those labels are then not counted);
/// - `RepetitionLedger`: the set bookkeeping both feed (repetitions counted under an exercise's
///   label, kept while none is named and credited when one is, the set's end, the counts).
///
/// Motion is tracked whatever the label is, so a classifier flickering to `low_confidence` or
/// `other` does not lose the phase. Nothing is ever counted for `other`, `no_person`, or movement
/// the classifier never names as an exercise.
///
/// Takes: per frame, its timestamp, the selected person's pose (or nil) and the current label.
/// Gives: the session numbers counted on that frame, each read with `event(number:)`; `count(of:)`
/// and `sessionCount`. Every buffer is allocated in `init`: `process` allocates nothing (5–46 µs
/// per frame in a release build on the shared 2-core development machine, plus the phase net's
/// inference: RepetitionCounterCostTests). Not thread-safe: one frame loop owns it.
///
/// In the frame loop (every frame at the model rate, the latest classifier decision as the label):
/// ```swift
/// let counter = RepetitionCounter(phaseNet: try RepetitionPhaseNet.embedded())  // once, at start-up
/// // per frame:
/// for number in counter.process(timestamp: frame.seconds, pose: selectedPose, action: currentLabel) {
///     let event = counter.event(number: number)      // label, counts, when it happened and was counted
///     leds.wink(for: event.label)                    // one wink per repetition
///     journal.log(repetition: event)
/// }
/// ```
/// In replay with `--action LABEL`, pass that label on every frame instead of the classifier's;
/// `count(of:)` and `sessionCount` give the summary's `reps`.
public final class RepetitionCounter {
    /// The parameters it was made with.
    public let configuration: RepetitionCounterConfiguration

    /// Numbers per pose in the motion rule: nose (2) + six pair midpoints (12) + six pair differences (12).
    public static let featureCount = RepetitionMotionFeatures.count

    /// The most repetitions waiting for a label at once; older ones are dropped first. A set of 64
    /// repetitions done without the classifier ever naming it is not credited whole.
    public static let maximumPendingRepetitions = 64
    /// How many of the last events `event(number:)` keeps: more than one frame can credit.
    public static let eventLogCapacity = 2 * maximumPendingRepetitions

    private let ledger: RepetitionLedger
    private let rule: RepetitionMotionRule
    /// nil: the rule counts every label.
    private let phase: RepetitionPhaseNetPath?

    /// Makes a counter with all its buffers that counts every label with the motion-axis rule (no
    /// phase net: `configuration.phaseLabels` is not used); nothing is allocated after this.
    public convenience init(configuration: RepetitionCounterConfiguration = RepetitionCounterConfiguration()) {
        self.init(configuration: configuration, phase: nil)
    }

    /// Makes a counter that counts `configuration.phaseLabels` with the phase net `phaseNet` (one
    /// frame of it per `process` call) and the other labels with the rule; nothing is allocated
    /// after this. The frame rate must be one posewatch accepts (`FrameRate.supported`).
    public convenience init(configuration: RepetitionCounterConfiguration = RepetitionCounterConfiguration(),
                            phaseNet: consuming RepetitionPhaseNet) {
        guard let frameRate = FrameRate(framesPerSecond: configuration.framesPerSecond) else {
            preconditionFailure("the phase net needs a frame rate of \(FrameRate.supportedDescription) per second")
        }
        self.init(configuration: configuration, phase: RepetitionPhaseNetPath(net: phaseNet, frameRate: frameRate))
    }

    private init(configuration: RepetitionCounterConfiguration, phase: RepetitionPhaseNetPath?) {
        precondition(configuration.framesPerSecond > 0, "frame rate must be positive")
        precondition(configuration.smoothingFrames >= 1, "smoothing needs at least one frame")
        self.configuration = configuration
        self.phase = phase
        ledger = RepetitionLedger(configuration: configuration, netLabels: phase != nil ? configuration.phaseLabels : [])
        rule = RepetitionMotionRule(configuration: configuration, ledger: ledger)
    }

    /// Repetitions counted over all actions since the session began.
    public var sessionCount: Int { ledger.sessionCount }

    /// The cumulative count of `label` this session (0 for labels that are never counted).
    public func count(of label: ActionLabel) -> Int { ledger.count(of: label) }

    /// The event that brought the session count to `number` (1 = the session's first repetition),
    /// for the numbers `process` returned: the log keeps the last `eventLogCapacity` of them.
    public func event(number: Int) -> RepetitionEvent { ledger.event(number: number) }

    /// The smoothed motion signal on the last frame that had a decision, and the two thresholds.
    public var lastSignal: Double { rule.lastSignal }
    public var lastNearThreshold: Double { rule.lastNearThreshold }
    public var lastFarThreshold: Double { rule.lastFarThreshold }

    /// How many windows the phase net failed on (the counter went on as if p(repeating) were 0
    /// there): 0 unless a model is damaged in a way its test run at load did not show.
    public var phaseNetFailures: Int { phase?.failures ?? 0 }

    /// How many frames the phase net has read since the start (or `resetSession`): one per
    /// `process` call plus the frames skipped in time (0 without a net).
    public var phaseNetFrames: Int { (phase?.frame ?? -1) + 1 }

    /// Starts a new session: counts to zero and the motion state forgotten. The phase net starts
    /// afresh too (empty window, features and counter as at the start of a stream): its window is
    /// motion state like the rule's, and a counter reset this way then counts a stream exactly as
    /// a new counter would (the Python reference starts each sequence with a new counter).
    public func resetSession() {
        ledger.resetSession()
        rule.resetMotion()
        phase?.reset()
    }

    /// Feeds one frame: its timestamp (seconds, increasing), the selected person's pose or nil, and
    /// the current action (nil while the reported decision is not an action: `no_person`,
    /// `low_confidence`, `starting_up`). Returns the session numbers of the repetitions counted on
    /// this frame (usually empty, one on the frame a repetition is seen under an exercise's label,
    /// several when a set's first repetitions are credited as the label arrives); read each with
    /// `event(number:)` before the next call.
    ///
    /// Call once per frame at the model frame rate, with nil for frames without a person, so the
    /// window stays aligned to time. With a phase net, a timestamp more than one frame period after
    /// the previous one (frames dropped by a late live loop) first gives the net the missing frames
    /// as frames without a pose (at most its 3 s window of them), so its window stays 3 s long.
    /// Allocation-free.
    public func process(timestamp: Double, pose: Pose?, action: ActionLabel?) -> Range<Int> {
        let firstNumber = ledger.sessionCount + 1
        ledger.beginFrame(at: timestamp)
        if timestamp - rule.lastPoseTime > configuration.gapResetSeconds {
            rule.resetMotion()  // nobody for a while: whoever comes next starts from scratch
        }
        ledger.endPausedSets(at: timestamp)
        if let action, action.isCountable {
            let start = timestamp - configuration.newSetWindowSeconds
            if ledger.namesNewSet(action, at: timestamp), rule.holdsFrames(before: start) {
                rule.startNewSet(from: start)
                ledger.dropPending(from: start)
            }
            rule.adopt(ledger.credit(to: action), of: action)
        } else if action == .other {
            ledger.labelIsOther(at: timestamp)
        }
        // Every frame, with or without a pose: the net reads a fixed-rate stream.
        phase?.process(timestamp: timestamp, pose: pose, action: action, ledger: ledger)
        rule.process(timestamp: timestamp, pose: pose, action: action)
        return firstNumber..<(ledger.sessionCount + 1)
    }
}
