import LinuxSystem
import PoseEstimation

/// Counts repetitions of the current action in a stream of poses, online, and keeps cumulative counts
/// per action and per session.
///
/// The method (measured against the alternatives in `training/counter/`, whose Python reference
/// `counter.py` mirrors this type step for step):
/// 1. Each usable pose becomes 26 numbers that do not depend on where the person stands, how large
///    they appear, or which side the detector calls left: the body joints centred on their box and
///    scaled by its larger side, then the nose, the midpoint of each left/right pair and the absolute
///    left/right difference of each pair. Mirror-invariance matters: detectors swap sides, and an
///    alternating lunge is one repetition per leg, not one per pair of legs.
/// 2. Over a sliding window (5 s), the direction the body moves most along (the first principal
///    axis, followed by two power iterations per frame) turns each pose into one number. No per-action
///    joint: the same code counts squats, jumping jacks or a press, and follows the person turning.
///    Under the labels in `verticalLabels` (lunges) only the vertical features make the axis: the
///    box swings sideways with the leading leg, once per pair of alternating lunges.
/// 3. That signal, lightly smoothed, is compared with thresholds placed inside its range over the
///    window (hysteresis): it is on the "far" side above `maximum − h·range`, on the "near" side below
///    `minimum + h·range`, and keeps its side in between. The side it first settles on is the rest
///    pose; each move from the rest side to the other side and back is one repetition, counted when
///    it is back (`countsAtReturn`: its event comes at its end, not half a repetition early), or
///    when the signal has kept still on the far side for a second (a set that ends there). One that
///    ends while no exercise is named is kept for the set, as below.
///
/// 4. The first decision after a person appears also runs step 3 over the frames of the warm-up
///    second, so a repetition begun before the counter could decide is credited then (≤ 1 s late).
/// 5. Squats and lunges must also fold the legs: the hip's height above the ankles in shin lengths
///    has to change (`legCueShinLengths`) from its rest value between leaving the rest side and reaching the far side.
///    Walking, talking or setting up move the motion signal as much as a repetition does, but the
///    hips stay at the same height over the feet. Both are done standing up, so a squat or lunge
///    also needs the shoulders above the hips (on at least one side) on the frame it counts
///    (`requiresUprightTorso`): bending over or lying down folds the legs too. Other actions have
///    no cue (the generic path).
/// 6. A camera zoom or cut (the body's bones `zoomFactor` times larger or smaller from one pose to
///    the next, confirmed by the pose after) restarts the motion state as a person re-entering does:
///    the held joints and the window's range belong to the old image. A joint seen for the first
///    time during the warm-up restarts the warm-up (until then it sat at the box centre).
///
/// With a phase net (`init(configuration:phaseNet:)`, as posewatch runs), the labels in
/// `phaseLabels` (squats, jumping jacks, burpees and push-ups) are counted by the learned net instead of the rule
/// above. A small network (`RepetitionPhaseNet`, two models averaged) reads the last 3 s of poses
/// on every frame, person or not, and says where in a repetition the person is (an angle going
/// round once per repetition) and how likely they are repeating at all; `RepetitionPhaseCounter`
/// counts one repetition each time that angle comes round to three quarters of a cycle while the
/// net says they are repeating, and credits up to half a second back when it has just decided they are.
/// Such a repetition is handled like the rule's: counted at once under one of those labels, kept
/// for the set while no exercise is named, ignored under another exercise's label (the rule
/// counts those). The rule's own repetitions of the net's labels are never counted then. The
/// rule's motion state still runs for every label. Without a net (`init(configuration:)`) the rule
/// counts every label.
///
/// Motion is tracked whatever the label is, so a classifier flickering to `low_confidence` or
/// `other` does not lose the phase, and a change of label does not re-learn it. A repetition
/// seen under an exercise's label counts at once. One seen while no exercise is named (the label
/// comes about a window after the movement starts, so a set's first repetitions always do) is kept
/// for the current set and credited, each with its own time, when an exercise is named: back to
/// where the set began. The set ends, and what it kept is dropped, after `setPauseSeconds` without
/// a repetition, when the person leaves (no usable pose for `gapResetSeconds`, which also empties
/// the window), or once `other` has held longer than `labelLagSeconds` (older repetitions were
/// other movement). So nothing is ever counted for `other`, `no_person`, or movement the
/// classifier never names as an exercise.
///
/// Per frame this reads the window four times (26 × 90 multiply-adds each) and allocates nothing:
/// every buffer is allocated once in `init` (5–46 µs per frame in a release build on the shared
/// 2-core development machine, depending on its load; the leg cue adds a pass over at most one
/// window at a candidate repetition; the phase net adds its models' inference, see
/// RepetitionCounterCostTests). Not thread-safe: one frame loop owns it.
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

    /// Numbers per pose: nose (2) + six pair midpoints (12) + six pair differences (12).
    public static let featureCount = 26

    /// The six left/right pairs after the nose: shoulders, elbows, wrists, hips, knees, ankles. In
    /// COCO order each pair is adjacent, left first, starting at the left shoulder.
    private static let pairCount = 6
    @inline(__always)
    private static func leftJoint(_ pair: Int) -> Int { Joint.leftShoulder.rawValue + 2 * pair }
    /// Bit mask of the 13 body joints (all but eyes and ears, which move with the head and which
    /// annotated sets such as Penn Action do not have).
    private static let bodyMask: UInt32 = {
        var mask: UInt32 = 1 << UInt32(Joint.nose.rawValue)
        for joint in Joint.leftShoulder.rawValue...Joint.rightAnkle.rawValue { mask |= 1 << UInt32(joint) }
        return mask
    }()

    /// Bit mask of both hips, knees and ankles (the leg cue's joints).
    private static let legMask: UInt32 = {
        var mask: UInt32 = 0
        for joint in Joint.leftHip.rawValue...Joint.rightAnkle.rawValue { mask |= 1 << UInt32(joint) }
        return mask
    }()

    // MARK: counts

    private let perAction: UnsafeMutablePointer<Int>
    /// Repetitions counted over all actions since the session began.
    public private(set) var sessionCount = 0

    // MARK: motion signal state (all buffers allocated once)

    private let capacity: Int
    /// Ring of the last `capacity` feature vectors, row-major, `featureCount` floats per row.
    private let window: UnsafeMutablePointer<Float>
    private var nextRow = 0
    private var rows = 0
    /// The window's mean (per feature), the principal axis and a scratch vector.
    private let mean: UnsafeMutablePointer<Double>
    private let axis: UnsafeMutablePointer<Double>
    private let scratch: UnsafeMutablePointer<Double>
    /// The window projected on the axis, oldest first.
    private let projection: UnsafeMutablePointer<Double>
    /// Each ring row's timestamp (same slots as `window`).
    private let times: UnsafeMutablePointer<Double>
    /// Each ring row's hip height above the ankles in shin lengths (same slots), for the leg cue.
    private let legHeights: UnsafeMutablePointer<Double>
    /// Each ring row's torso height: the larger over both sides (each whose shoulder and hip have
    /// been seen) of the hip's depth below the shoulder, in box sizes (NaN: no side seen yet).
    private let torsoHeights: UnsafeMutablePointer<Double>
    /// The last time the signal was on the rest side (where a repetition's excursion starts).
    private var lastRestTime = -Double.infinity
    /// The leg cue's rest value is the median over this many frames before the last rest frame (and
    /// it): 0.5 s, so one noisy frame does not decide. Scratch space for that median.
    private let legRestFrames: Int
    private let legRestScratch: UnsafeMutablePointer<Double>
    /// A squat or lunge reached the far side before its legs had folded enough (at `legPendingTime`):
    /// it still counts on the frame they do, within `legCueDeferSeconds` and before the signal is
    /// back on the rest side.
    private var legPending = false
    private var legPendingTime = 0.0
    /// -1: the waiting repetition is of the current (labelled) exercise; otherwise its index among
    /// the pending repetitions.
    private var legPendingSlot = -1
    /// The raw positions of the last two usable poses (oldest first) and whose joints were confident,
    /// for the zoom check; `scaleHistoryCount` of them are valid.
    private var scaleHistory = (Pose(), Pose())
    private var scaleHistoryMasks: (UInt32, UInt32) = (0, 0)
    private var scaleHistoryCount = 0
    /// Scratch for the median of the bone length ratios (at most 12).
    private let boneRatios: UnsafeMutablePointer<Double>
    /// Whether the warm-up frames have been run through the side logic since the last reset.
    private var creditedWarmUp = false
    /// The next first decision replays the whole window, not only the warm-up (`startNewSet`).
    private var replaysWholeWindow = false
    /// Per `ActionLabel.countableIndex`: the last frame's timestamp on which it was the label.
    private let lastNamed: UnsafeMutablePointer<Double>
    private var hasAxis = false

    /// Every joint's last confident position, and which joints have one since the last reset.
    private var heldPose = Pose()
    private var seenJoints: UInt32 = 0
    private var lastPoseTime = -Double.infinity

    /// -1 near side, +1 far side, 0 not settled yet.
    private var side: Int8 = 0
    private var restSide: Int8 = 0
    private var lastSideChange = -Double.infinity
    /// A repetition that reached the far side and passed its checks under `awaitingAction`, counted
    /// when the signal is back on the rest side (`countsAtReturn`).
    private var awaitingReturn = false
    private var awaitingAction: ActionLabel = .squats
    /// Repetitions of the current set seen while no exercise was named (the classifier's label lags
    /// the movement by about its window): their times, oldest first, and whether each passed the
    /// squat/lunge cues (legs folded, torso upright), which decide once the exercise is known.
    private let pendingTimes: UnsafeMutablePointer<Double>
    private let pendingPassesLegCues: UnsafeMutablePointer<Bool>
    private var pendingCount = 0
    /// With `countsAtReturn`: the index of the pending repetition that reached the far side and
    /// has not ended yet (-1: none). Its time becomes its end when it returns, as a counted
    /// repetition's does; if its exercise is named first, it counts at its end like one.
    private var pendingAwaitingReturn = -1
    /// When the last repetition was seen (counted or pending): a pause longer than
    /// `setPauseSeconds` after it ends the set.
    private var lastRepetitionTime = -Double.infinity
    /// Since when the label has been `other` without an exercise named since (nil: it is not).
    private var otherSince: Double?
    /// The last `eventLogCapacity` events, by session number (`sessionCount` at the event, modulo).
    private let eventLog: UnsafeMutablePointer<RepetitionEvent>
    /// The timestamp of the frame being processed (events credited on it carry it).
    private var frameTime = 0.0
    /// The previous call's timestamp (nil before the first): frames skipped in time are fed to the
    /// phase net as frames without a pose.
    private var previousTimestamp: Double?

    // MARK: the phase net (nil: rules only)

    /// The net, its features and its counter, with the net's repetitions kept for the set.
    private let phase: PhaseNetPath?
    /// Bit per `ActionLabel.countableIndex` of `configuration.phaseLabels`; 0 without a net.
    private let phaseLabelMask: UInt32
    /// Bit per `ActionLabel.countableIndex` of `configuration.verticalLabels`.
    private let verticalLabelMask: UInt32
    /// When the net last saw a repetition (counted or kept): a pause longer than
    /// `setPauseSeconds` after it ends the set for its kept repetitions.
    private var lastPhaseRepetitionTime = -Double.infinity

    // MARK: diagnostics (cheap copies of the last frame's state, for tests and tracing)

    /// The smoothed motion signal on the last frame that had a decision, and the two thresholds.
    public private(set) var lastSignal: Double = 0
    public private(set) var lastNearThreshold: Double = 0
    public private(set) var lastFarThreshold: Double = 0

    /// The most repetitions waiting for a label at once; older ones are dropped first. A set of 64
    /// repetitions done without the classifier ever naming it is not credited whole.
    public static let maximumPendingRepetitions = 64
    /// How many of the last events `event(number:)` keeps: more than one frame can credit.
    public static let eventLogCapacity = 2 * maximumPendingRepetitions

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
        self.init(configuration: configuration, phase: PhaseNetPath(net: phaseNet, frameRate: frameRate))
    }

    private init(configuration: RepetitionCounterConfiguration, phase: PhaseNetPath?) {
        precondition(configuration.framesPerSecond > 0, "frame rate must be positive")
        precondition(configuration.smoothingFrames >= 1, "smoothing needs at least one frame")
        self.configuration = configuration
        self.phase = phase
        phaseLabelMask = phase != nil ? Self.labelMask(configuration.phaseLabels) : 0
        verticalLabelMask = Self.labelMask(configuration.verticalLabels)
        capacity = configuration.windowFrames
        let features = Self.featureCount
        perAction = .allocate(capacity: ActionLabel.countable.count)
        perAction.initialize(repeating: 0, count: ActionLabel.countable.count)
        lastNamed = .allocate(capacity: ActionLabel.countable.count)
        lastNamed.initialize(repeating: -Double.infinity, count: ActionLabel.countable.count)
        window = .allocate(capacity: capacity * features)
        window.initialize(repeating: 0, count: capacity * features)
        mean = .allocate(capacity: features)
        mean.initialize(repeating: 0, count: features)
        axis = .allocate(capacity: features)
        axis.initialize(repeating: 0, count: features)
        scratch = .allocate(capacity: features)
        scratch.initialize(repeating: 0, count: features)
        projection = .allocate(capacity: capacity)
        projection.initialize(repeating: 0, count: capacity)
        times = .allocate(capacity: capacity)
        times.initialize(repeating: 0, count: capacity)
        legHeights = .allocate(capacity: capacity)
        legHeights.initialize(repeating: 0, count: capacity)
        torsoHeights = .allocate(capacity: capacity)
        torsoHeights.initialize(repeating: 0, count: capacity)
        legRestFrames = Int((0.5 * configuration.framesPerSecond).rounded())
        legRestScratch = .allocate(capacity: legRestFrames + 1)
        legRestScratch.initialize(repeating: 0, count: legRestFrames + 1)
        boneRatios = .allocate(capacity: Self.bones.count)
        boneRatios.initialize(repeating: 0, count: Self.bones.count)
        pendingTimes = .allocate(capacity: Self.maximumPendingRepetitions)
        pendingTimes.initialize(repeating: 0, count: Self.maximumPendingRepetitions)
        pendingPassesLegCues = .allocate(capacity: Self.maximumPendingRepetitions)
        pendingPassesLegCues.initialize(repeating: false, count: Self.maximumPendingRepetitions)
        eventLog = .allocate(capacity: Self.eventLogCapacity)
        eventLog.initialize(repeating: RepetitionEvent(label: .squats, count: 0, sessionCount: 0, time: 0, creditedAt: 0),
                            count: Self.eventLogCapacity)
    }

    deinit {
        perAction.deallocate()
        lastNamed.deallocate()
        window.deallocate()
        mean.deallocate()
        axis.deallocate()
        scratch.deallocate()
        projection.deallocate()
        times.deallocate()
        legHeights.deallocate()
        torsoHeights.deallocate()
        legRestScratch.deallocate()
        boneRatios.deallocate()
        pendingTimes.deallocate()
        pendingPassesLegCues.deallocate()
        eventLog.deallocate()
    }

    // MARK: public API

    /// The cumulative count of `label` this session (0 for labels that are never counted).
    public func count(of label: ActionLabel) -> Int {
        guard let index = label.countableIndex else { return 0 }
        return perAction[index]
    }

    /// Starts a new session: counts to zero and the motion state forgotten. The phase net starts
    /// afresh too (empty window, features and counter as at the start of a stream): its window is
    /// motion state like the rule's, and a counter reset this way then counts a stream exactly as
    /// a new counter would (the Python reference starts each sequence with a new counter).
    public func resetSession() {
        perAction.update(repeating: 0, count: ActionLabel.countable.count)
        lastNamed.update(repeating: -Double.infinity, count: ActionLabel.countable.count)
        sessionCount = 0
        resetMotion()
        phase?.reset()
        lastPhaseRepetitionTime = -Double.infinity
        previousTimestamp = nil
    }

    /// One bit per `ActionLabel.countableIndex` of `labels`.
    private static func labelMask(_ labels: [ActionLabel]) -> UInt32 {
        labels.reduce(0) { mask, label in label.countableIndex.map { mask | 1 << UInt32($0) } ?? mask }
    }

    /// Whether `mask` (a `labelMask`) holds `action`.
    @inline(__always)
    private static func labelMask(_ mask: UInt32, holds action: ActionLabel?) -> Bool {
        guard let index = action?.countableIndex else { return false }
        return mask & (1 << UInt32(index)) != 0
    }

    /// Whether `action`'s motion axis uses the vertical features only.
    @inline(__always)
    private func usesVerticalFeatures(_ action: ActionLabel?) -> Bool { Self.labelMask(verticalLabelMask, holds: action) }

    /// Whether this counter counts `action` with the phase net.
    @inline(__always)
    private func countsWithNet(_ action: ActionLabel?) -> Bool { Self.labelMask(phaseLabelMask, holds: action) }

    /// How many windows the phase net failed on (the counter went on as if p(repeating) were 0
    /// there): 0 unless a model is damaged in a way its test run at load did not show.
    public var phaseNetFailures: Int { phase?.failures ?? 0 }

    /// How many frames the phase net has read since the start (or `resetSession`): one per
    /// `process` call plus the frames skipped in time (0 without a net).
    public var phaseNetFrames: Int { (phase?.frame ?? -1) + 1 }

    /// The event that brought the session count to `number` (1 = the session's first repetition),
    /// for the numbers `process` returned: the log keeps the last `eventLogCapacity` of them.
    public func event(number: Int) -> RepetitionEvent {
        precondition(number >= 1 && number <= sessionCount && sessionCount - number < Self.eventLogCapacity,
                     "repetition \(number) is not in the event log")
        return eventLog[number % Self.eventLogCapacity]
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
        let firstNumber = sessionCount + 1
        frameTime = timestamp
        if timestamp - lastPoseTime > configuration.gapResetSeconds {
            // Nobody for a while: whoever comes next starts from scratch.
            resetMotion()
        }
        if pendingCount > 0, timestamp - lastRepetitionTime > configuration.setPauseSeconds {
            pendingCount = 0  // the set ended before anyone named it
            pendingAwaitingReturn = -1
        }
        if let phase, phase.pendingCount > 0, timestamp - lastPhaseRepetitionTime > configuration.setPauseSeconds {
            phase.pendingCount = 0
        }
        if let action, let index = action.countableIndex {
            let namedBefore = lastNamed[index]
            lastNamed[index] = timestamp
            let start = timestamp - configuration.newSetWindowSeconds
            if configuration.newSetWindowSeconds > 0, !countsWithNet(action),
               timestamp - namedBefore > configuration.labelLagSeconds, lastCountedTime < start,
               rows > 0, times[oldestRow] < start {
                startNewSet(from: start)
            }
            otherSince = nil
            creditPending(to: action)
        } else if action == .other {
            let since = otherSince ?? timestamp
            otherSince = since
            if timestamp - since > configuration.labelLagSeconds {
                // `other` for longer than the label can lag: what it saw before was other movement.
                dropPending(before: timestamp - configuration.labelLagSeconds)
                phase?.dropPending(before: timestamp - configuration.labelLagSeconds)
            }
        }
        if let phase {
            // Every frame, with or without a pose: the net reads a fixed-rate stream. Frames the
            // capture skipped (late ones are dropped live; replay never skips) go in as frames
            // without a pose, so the net's window stays its 3 s; at most a window of them.
            if let previousTimestamp {
                let periods = Int(((timestamp - previousTimestamp) * configuration.framesPerSecond).rounded())
                if periods > 1 {
                    for _ in 0..<min(periods - 1, RepetitionPhaseNet.window) {
                        stepPhaseNet(phase, pose: nil, timestamp: timestamp, action: action)
                    }
                }
            }
            stepPhaseNet(phase, pose: pose, timestamp: timestamp, action: action)
        }
        previousTimestamp = timestamp
        if let pose, appendFeatures(of: pose, timestamp: timestamp) {
            lastPoseTime = timestamp
            // A warm-up longer than the window would never end: the full window is enough.
            if rows >= min(configuration.warmUpFrames, capacity) {
                updateAxisAndProjection(verticalOnly: usesVerticalFeatures(action))
                decide(timestamp: timestamp, action: action)
            }
        }
        return firstNumber..<(sessionCount + 1)
    }

    // MARK: steps

    /// One frame through the phase net and its counter. Each repetition it sees (at the frame its
    /// phase passed the mark, `timestamp` minus its age in net frames) counts now if the label is one
    /// of the net's, is kept for the set while no exercise is named, and is ignored under another
    /// exercise's label (the rule counts that one). Python: `_process`'s `self.phase` block.
    private func stepPhaseNet(_ phase: PhaseNetPath, pose: Pose?, timestamp: Double, action: ActionLabel?) {
        let output = phase.process(pose)
        let events = phase.counter.process(output)
        for event in events {
            let time = timestamp - Double(phase.frame - event.frame) / configuration.framesPerSecond
            lastPhaseRepetitionTime = timestamp
            if let action, countsWithNet(action) {
                count(action, at: time, byNet: true)
            } else if action?.isCountable != true {
                phase.addPending(at: time)
            }
        }
    }

    /// The window and the sides start afresh; the held joints, held repetitions and counts stay.
    private func restartWindow() {
        rows = 0
        nextRow = 0
        hasAxis = false
        creditedWarmUp = false
        replaysWholeWindow = false
        side = 0
        restSide = 0
        lastSideChange = -Double.infinity
        lastRestTime = -Double.infinity
        legPending = false
        awaitingReturn = false
        pendingAwaitingReturn = -1  // its end will not be seen in the old frame: it keeps its far-side time
    }

    /// When the last repetition counted this session happened (-∞ before the first).
    private var lastCountedTime: Double { sessionCount > 0 ? eventLog[sessionCount % Self.eventLogCapacity].time : -.infinity }

    /// A new set of a rule-counted exercise is named (`newSetWindowSeconds`): the window keeps its
    /// frames from `start` on, the sides and the axis start afresh, and the next decision replays
    /// every kept frame. Repetitions kept for the set from those frames go (the replay sees them
    /// again); older ones stay.
    private func startNewSet(from start: Double) {
        var dropped = 0
        while dropped < rows, times[ringRow(ofStep: dropped)] < start { dropped += 1 }
        let kept = rows - dropped
        let next = nextRow
        restartWindow()
        rows = kept
        nextRow = next  // the kept frames stay where they are in the ring: `oldestRow` finds them
        replaysWholeWindow = true
        while pendingCount > 0, pendingTimes[pendingCount - 1] >= start { pendingCount -= 1 }  // oldest first
    }

    /// The person left (or the image changed): the window, the held joints and held repetitions go.
    private func resetMotion() {
        restartWindow()
        scaleHistoryCount = 0
        seenJoints = 0
        pendingCount = 0  // whoever did them has left
        phase?.pendingCount = 0  // the net's too (its window and counter go on: they read every frame)
        pendingAwaitingReturn = -1
        otherSince = nil
        lastRepetitionTime = -Double.infinity
    }

    /// A held joint relative to the box, in box sizes. A joint never seen since the reset sits at the
    /// box centre: constant, so it adds no variance and cannot steer the axis.
    @inline(__always)
    private func normalised(_ joint: Int, centreX: Float, centreY: Float, scale: Float) -> (x: Float, y: Float) {
        guard seenJoints & (1 << UInt32(joint)) != 0 else { return (0, 0) }
        let point = heldPose[joint]
        return ((point.x - centreX) * scale, (point.y - centreY) * scale)
    }

    /// One leg's hip height above its ankle in shin lengths (COCO: the knee and ankle follow the hip
    /// two and four places on).
    @inline(__always)
    private func hipHeight(hip: Int, centreX: Float, centreY: Float, scale: Float) -> Double {
        let hipY = normalised(hip, centreX: centreX, centreY: centreY, scale: scale).y
        let kneeY = normalised(hip + 2, centreX: centreX, centreY: centreY, scale: scale).y
        let ankleY = normalised(hip + 4, centreX: centreX, centreY: centreY, scale: scale).y
        let shin = max(Double(ankleY - kneeY), 0.02)
        return min(max(Double(ankleY - hipY) / shin, 0), 5)
    }

    /// Holds confident joints, checks the pose is usable, and writes its features into the ring.
    private func appendFeatures(of pose: Pose, timestamp: Double) -> Bool {
        let minimumScore = configuration.minimumKeypointScore
        var visible = 0
        for joint in 0..<Joint.count where Self.bodyMask & (1 << UInt32(joint)) != 0 {
            if pose[joint].score >= minimumScore { visible += 1 }
        }
        // A frame with only a few confident joints is a person half out of frame or a false
        // detection; it tells nothing about the motion, so it is treated as no pose.
        guard visible >= configuration.minimumVisibleJoints else { return false }
        var confident: UInt32 = 0
        for joint in 0..<Joint.count where pose[joint].score >= minimumScore { confident |= 1 << UInt32(joint) }
        if configuration.zoomFactor > 0, scaleChanged(pose, confident: confident) {
            // The camera zoomed or cut: what is held, and the window's range, are in the old frame.
            resetMotion()
            scaleHistory.1 = pose
            scaleHistoryMasks.1 = confident
            scaleHistoryCount = 1
        }
        let newJoints = confident & Self.bodyMask & ~seenJoints
        if configuration.restartsWarmUpOnNewJoint, seenJoints != 0, newJoints != 0, !creditedWarmUp {
            restartWindow()
        }
        for joint in 0..<Joint.count where Self.bodyMask & (1 << UInt32(joint)) != 0 {
            let point = pose[joint]
            if point.score >= minimumScore {
                heldPose[joint] = point
                seenJoints |= 1 << UInt32(joint)
            }
        }
        // The box of every joint with a known position (confident now or held from before).
        var minX = Float.infinity, minY = Float.infinity, maxX = -Float.infinity, maxY = -Float.infinity
        for joint in 0..<Joint.count where seenJoints & (1 << UInt32(joint)) != 0 {
            let point = heldPose[joint]
            minX = min(minX, point.x); maxX = max(maxX, point.x)
            minY = min(minY, point.y); maxY = max(maxY, point.y)
        }
        let centreX = (minX + maxX) / 2, centreY = (minY + maxY) / 2
        let scale = 1 / max(max(maxX - minX, maxY - minY), 1e-6)  // two-argument max: the variadic one allocates
        let row = window + nextRow * Self.featureCount
        let nose = normalised(Joint.nose.rawValue, centreX: centreX, centreY: centreY, scale: scale)
        row[0] = nose.x
        row[1] = nose.y
        for index in 0..<Self.pairCount {
            let left = normalised(Self.leftJoint(index), centreX: centreX, centreY: centreY, scale: scale)
            let right = normalised(Self.leftJoint(index) + 1, centreX: centreX, centreY: centreY, scale: scale)
            row[2 + 2 * index] = (left.x + right.x) / 2
            row[3 + 2 * index] = (left.y + right.y) / 2
            row[14 + 2 * index] = abs(left.x - right.x)
            row[15 + 2 * index] = abs(left.y - right.y)
        }
        // The leg cue: hip height above the ankles in shin lengths, per leg (a shin foreshortened
        // below 0.02 box sizes counts as 0.02; the ratio is capped at 5 against such near-zero shins).
        let left = hipHeight(hip: Joint.leftHip.rawValue, centreX: centreX, centreY: centreY, scale: scale)
        let right = hipHeight(hip: Joint.rightHip.rawValue, centreX: centreX, centreY: centreY, scale: scale)
        // Unknown (NaN) until hips, knees and ankles have all been seen since the reset: a camera
        // that cuts the feet off gives no cue, and then the gate does not apply.
        legHeights[nextRow] = seenJoints & Self.legMask == Self.legMask ? (left + right) / 2 : .nan
        // The upright-torso cue: how far the hips are below the shoulders, on the more upright side
        // (one side's hip lost or mislocated does not hide an upright torso).
        var torso = Double.nan
        for sideIndex in 0..<2 {  // a range, not an array literal: nothing is allocated
            let shoulder = Joint.leftShoulder.rawValue + sideIndex
            let hip = Joint.leftHip.rawValue + sideIndex
            let bits: UInt32 = (1 << UInt32(shoulder)) | (1 << UInt32(hip))
            guard seenJoints & bits == bits else { continue }
            let depth = Double(normalised(hip, centreX: centreX, centreY: centreY, scale: scale).y
                - normalised(shoulder, centreX: centreX, centreY: centreY, scale: scale).y)
            torso = torso.isNaN ? depth : max(torso, depth)
        }
        torsoHeights[nextRow] = torso
        times[nextRow] = timestamp
        nextRow = (nextRow + 1) % capacity
        rows = min(rows + 1, capacity)
        return true
    }

    /// Shoulders, hips, both sides of the torso, upper arms, forearms, thighs, shins.
    private static let bones: [(Int, Int)] = [(5, 6), (11, 12), (5, 11), (6, 12), (5, 7), (7, 9), (6, 8), (8, 10),
                                              (11, 13), (13, 15), (12, 14), (14, 16)]

    /// Pushes this usable pose into the zoom history and says whether the two newest poses are both
    /// more than `zoomFactor` larger (or smaller) than the oldest: a one-frame detection glitch
    /// is not confirmed by the next pose, a zoom is.
    private func scaleChanged(_ pose: Pose, confident: UInt32) -> Bool {
        if scaleHistoryCount < 2 {
            if scaleHistoryCount == 0 {
                scaleHistory.0 = pose
                scaleHistoryMasks.0 = confident
            } else {
                scaleHistory.1 = pose
                scaleHistoryMasks.1 = confident
            }
            scaleHistoryCount += 1
            return false
        }
        let factor = configuration.zoomFactor
        let newest = boneRatio(pose, confident, scaleHistory.0, scaleHistoryMasks.0)
        let middle = boneRatio(scaleHistory.1, scaleHistoryMasks.1, scaleHistory.0, scaleHistoryMasks.0)
        scaleHistory.0 = scaleHistory.1
        scaleHistoryMasks.0 = scaleHistoryMasks.1
        scaleHistory.1 = pose
        scaleHistoryMasks.1 = confident
        return (middle > factor && newest > factor) || (middle < 1 / factor && newest < 1 / factor)
    }

    /// The median of the bones' length ratios (now / before) over the bones confident in both
    /// poses; 1 with fewer than 3 such bones.
    private func boneRatio(_ now: Pose, _ nowMask: UInt32, _ before: Pose, _ beforeMask: UInt32) -> Double {
        var count = 0
        // Indexed: a debug build's iterator over tuple elements allocates.
        for bone in 0..<Self.bones.count {
            let (a, b) = Self.bones[bone]
            let bits: UInt32 = (1 << UInt32(a)) | (1 << UInt32(b))
            guard nowMask & bits == bits, beforeMask & bits == bits else { continue }
            let lengthNow = Self.distance(now[a], now[b])
            let lengthBefore = Self.distance(before[a], before[b])
            guard lengthNow > 0, lengthBefore > 0 else { continue }
            Self.insertSorted(lengthNow / lengthBefore, into: boneRatios, count: count)
            count += 1
        }
        guard count >= 3 else { return 1 }
        return Self.median(ofSorted: boneRatios, count: count)
    }

    /// Inserts `value` into the ascending `count` values at `buffer` (which has room for one more).
    /// Insertion sort: the medians here are over at most 12 values, and nothing is allocated.
    @inline(__always)
    private static func insertSorted(_ value: Double, into buffer: UnsafeMutablePointer<Double>, count: Int) {
        var position = count
        while position > 0, buffer[position - 1] > value {
            buffer[position] = buffer[position - 1]
            position -= 1
        }
        buffer[position] = value
    }

    @inline(__always)
    private static func median(ofSorted buffer: UnsafeMutablePointer<Double>, count: Int) -> Double {
        count % 2 == 1 ? buffer[count / 2] : (buffer[count / 2 - 1] + buffer[count / 2]) / 2
    }

    @inline(__always)
    private static func distance(_ a: Keypoint, _ b: Keypoint) -> Double {
        let dx = Double(a.x) - Double(b.x), dy = Double(a.y) - Double(b.y)
        return (dx * dx + dy * dy).squareRoot()
    }

    /// The window's principal axis by power iteration on its covariance (as Dᵀ(D·v), which never
    /// forms the 26 × 26 matrix), warm-started from the last frame's axis, then the window's
    /// projection on it. `verticalOnly` leaves the horizontal features (the even ones) out: they
    /// neither steer the axis nor add to the projection, and the axis has no part along them.
    private func updateAxisAndProjection(verticalOnly: Bool) {
        let features = Self.featureCount
        let used = stride(from: verticalOnly ? 1 : 0, to: features, by: verticalOnly ? 2 : 1)
        let count = rows
        let oldest = oldestRow
        // Mean per feature.
        for feature in 0..<features { mean[feature] = 0 }
        for step in 0..<count {
            let row = window + ((oldest + step) % capacity) * features
            for feature in 0..<features { mean[feature] += Double(row[feature]) }
        }
        let inverseCount = 1 / Double(count)
        for feature in 0..<features { mean[feature] *= inverseCount }

        var iterations = 2
        if !hasAxis {
            // Start from the feature in use that varies most (an axis along a left-out one would
            // never move); a few more iterations lock on, and the next frames keep refining (two
            // per frame), so no frame pays for a full eigen-solve.
            var best = 0
            var bestVariance = -1.0
            for feature in used {
                var variance = 0.0
                for step in 0..<count {
                    let value = Double(window[((oldest + step) % capacity) * features + feature]) - mean[feature]
                    variance += value * value
                }
                if variance > bestVariance { bestVariance = variance; best = feature }
            }
            for feature in 0..<features { axis[feature] = feature == best ? 1 : 0 }
            iterations = 8
            hasAxis = true
        }
        for _ in 0..<iterations {
            projectWindow(count: count, oldest: oldest, used: used)
            for feature in 0..<features { scratch[feature] = 0 }
            for step in 0..<count {
                let row = window + ((oldest + step) % capacity) * features
                let weight = projection[step]
                for feature in used { scratch[feature] += (Double(row[feature]) - mean[feature]) * weight }
            }
            var norm = 0.0
            for feature in 0..<features { norm += scratch[feature] * scratch[feature] }
            // A window without any motion has no axis: keep the last one.
            guard norm > 1e-18 else { break }
            let inverseNorm = 1 / norm.squareRoot()
            for feature in 0..<features { axis[feature] = scratch[feature] * inverseNorm }
        }
        projectWindow(count: count, oldest: oldest, used: used)
    }

    private func projectWindow(count: Int, oldest: Int, used: StrideTo<Int>) {
        let features = Self.featureCount
        for step in 0..<count {
            let row = window + ((oldest + step) % capacity) * features
            var dot = 0.0
            for feature in used { dot += (Double(row[feature]) - mean[feature]) * axis[feature] }
            projection[step] = dot
        }
    }

    /// Counts one repetition of `action` that happened at `time`, credited on the current frame.
    /// The rule's repetitions (`byNet` false) of the labels the phase net counts are not counted:
    /// every path of the rule (at its end, after the leg cue, credited, replayed after the
    /// warm-up) counts through here. Python: `count(…, phase=…)`.
    private func count(_ action: ActionLabel, at time: Double, byNet: Bool = false) {
        if !byNet, countsWithNet(action) { return }
        guard let index = action.countableIndex else { return }
        perAction[index] += 1
        sessionCount += 1
        eventLog[sessionCount % Self.eventLogCapacity] = RepetitionEvent(
            label: action, count: perAction[index], sessionCount: sessionCount, time: time, creditedAt: frameTime)
    }

    /// An exercise is named: the repetitions of the current set seen before it was (that pass its
    /// cues) count now, each with its own time.
    private func creditPending(to action: ActionLabel) {
        if let phase {
            if countsWithNet(action) {
                // The net's label: the net's kept repetitions count, the rule's go (with their
                // leg-cue wait).
                for index in 0..<phase.pendingCount { count(action, at: phase.pendingTimes[index], byNet: true) }
                phase.pendingCount = 0
                pendingCount = 0
                pendingAwaitingReturn = -1
                if legPending, legPendingSlot >= 0 { legPending = false }
                return
            }
            phase.pendingCount = 0  // another exercise: the rule's kept repetitions are its
        }
        guard pendingCount > 0 else { return }
        let gated = Self.isStandingLegExercise(action)
        let waiting = legPending && legPendingSlot >= 0 ? legPendingSlot : -1
        let inProgress = pendingAwaitingReturn
        pendingAwaitingReturn = -1
        for index in 0..<pendingCount where !gated || (pendingPassesLegCues[index] && index != waiting) {
            if index == inProgress, index != waiting {
                // Not ended yet: it counts at its end, as one seen under the label would.
                awaitingReturn = true
                awaitingAction = action
            } else {
                count(action, at: pendingTimes[index])
            }
        }
        if waiting >= 0 {
            // Still folding its legs: a squat or lunge now, counted when they have (or dropped).
            if gated { legPendingSlot = -1 } else { legPending = false }
        }
        pendingCount = 0
    }

    /// Forgets the pending repetitions seen before `time`.
    private func dropPending(before time: Double) {
        var dropped = 0
        while dropped < pendingCount, pendingTimes[dropped] < time { dropped += 1 }
        removeOldestPending(dropped)
    }

    private func removeOldestPending(_ dropped: Int) {
        guard dropped > 0 else { return }
        for index in dropped..<max(dropped, pendingCount) {
            pendingTimes[index - dropped] = pendingTimes[index]
            pendingPassesLegCues[index - dropped] = pendingPassesLegCues[index]
        }
        pendingCount -= dropped
        if pendingAwaitingReturn >= 0 { pendingAwaitingReturn = max(-1, pendingAwaitingReturn - dropped) }
        if legPending, legPendingSlot >= 0 {
            legPendingSlot -= dropped
            if legPendingSlot < 0 { legPending = false }
        }
    }

    /// Keeps a repetition seen while no exercise is named, with whether it already passed the
    /// squat/lunge cues (if its legs fold a little later, `checkPendingLegs` marks it then).
    /// `passedCues`: already judged (a repetition kept at its end, `follow`).
    private func addPending(at time: Double, passedCues: Bool = false) {
        if pendingCount == Self.maximumPendingRepetitions { removeOldestPending(1) }
        if passedCues { lastRepetitionTime = time }
        let upright = passedCues || !configuration.requiresUprightTorso || torsoUpright(at: time)
        let folded = passedCues || configuration.legCueShinLengths <= 0 || legsFolded(until: time)
        pendingTimes[pendingCount] = time
        pendingPassesLegCues[pendingCount] = upright && folded
        if upright, !folded {
            legPending = true
            legPendingTime = time
            legPendingSlot = pendingCount
        }
        pendingCount += 1
    }

    /// Smooths the projection, places the thresholds in its range and moves between the sides.
    private func decide(timestamp: Double, action: ActionLabel?) {
        let count = rows
        let span = configuration.smoothingFrames
        let stillFrames = configuration.stillFrames
        var running = 0.0
        var low = Double.infinity, high = -Double.infinity, current = 0.0
        var recentLow = Double.infinity, recentHigh = -Double.infinity  // over the last stillFrames
        for step in 0..<count {
            running += projection[step]
            if step >= span { running -= projection[step - span] }
            current = running / Double(min(step + 1, span))
            low = min(low, current)
            high = max(high, current)
            if step >= count - stillFrames {
                recentLow = min(recentLow, current)
                recentHigh = max(recentHigh, current)
            }
        }
        let range = high - low
        let margin = Double(configuration.hysteresis) * range
        lastSignal = current
        lastNearThreshold = low + margin
        lastFarThreshold = high - margin
        // Too little motion to be a repetition: the sides stay as they are.
        guard range >= Double(configuration.minimumRange) else { return }
        if !creditedWarmUp {
            creditedWarmUp = true
            if configuration.creditsWarmUp {
                // The frames before this one that are at most a warm-up old go through the same
                // logic (with this window's thresholds), so a repetition done while the counter was
                // warming up is not lost; it is counted now, with its own time.
                let oldest = oldestRow
                for step in 0..<(count - 1) {
                    let time = times[(oldest + step) % capacity]
                    guard replaysWholeWindow || timestamp - time <= configuration.warmUpSeconds else { continue }
                    var smoothed = 0.0
                    let first = max(0, step - span + 1)
                    for index in first...step { smoothed += projection[index] }
                    smoothed /= Double(step - first + 1)
                    follow(value: smoothed, time: time, low: low, high: high, margin: margin, still: false, action: action)
                }
            }
        }
        let still = configuration.stillSeconds > 0 && count >= stillFrames
            && recentHigh - recentLow < configuration.stillShare * range
        follow(value: current, time: timestamp, low: low, high: high, margin: margin, still: still, action: action)
    }

    /// One smoothed value through the sides and the checks: a repetition that reaches the far side
    /// (and passes the checks in `tally`, or its legs fold later, `checkPendingLegs`) counts there,
    /// or with `countsAtReturn` when the signal is back on the rest side under the same label, or
    /// has kept `still` on the far side (kept for the set when no exercise is named then).
    @inline(__always)
    private func follow(value: Double, time: Double, low: Double, high: Double, margin: Double, still: Bool,
                        action: ActionLabel?) {
        let move = advance(value: value, time: time, low: low, high: high, margin: margin)
        if move == .toFar {
            tally(action: action, time: time)
        } else {
            checkPendingLegs(action: action, time: time)
        }
        let ended = move == .toRest || (side != 0 && side != restSide && still)
        if ended, pendingAwaitingReturn >= 0 {
            pendingTimes[pendingAwaitingReturn] = time  // a repetition's time is its end
            lastRepetitionTime = time
            pendingAwaitingReturn = -1
        }
        guard awaitingReturn, ended else { return }
        awaitingReturn = false
        if action == awaitingAction {
            count(awaitingAction, at: time)
        } else if action?.isCountable != true {
            // No exercise named at its end (a `low_confidence` flicker, the label lagging): kept for
            // the set like a repetition seen then, its cues already passed.
            addPending(at: time, passedCues: true)
        }
    }

    /// Counts a repetition that passed its checks: now, or with `countsAtReturn` at its end (see
    /// `follow`).
    @inline(__always)
    private func countOrAwait(_ action: ActionLabel, at time: Double) {
        if configuration.countsAtReturn {
            awaitingReturn = true
            awaitingAction = action
        } else {
            count(action, at: time)
        }
    }

    /// One repetition seen (its crossing at `time`): counted under an exercise's label, kept for
    /// the set's label while none is named (`other` included: the label lags the movement; see
    /// `process`). A squat or lunge whose legs did not fold, or done bent over, is not counted.
    @inline(__always)
    private func tally(action: ActionLabel?, time: Double) {
        lastRepetitionTime = time
        guard let action, action.isCountable else {
            addPending(at: time)
            if configuration.countsAtReturn { pendingAwaitingReturn = pendingCount - 1 }
            return
        }
        if Self.isStandingLegExercise(action), configuration.requiresUprightTorso, !torsoUpright(at: time) {
            return  // bent over or lying down: not a squat or lunge
        } else if Self.isStandingLegExercise(action), configuration.legCueShinLengths > 0, !legsFolded(until: time) {
            legPending = true
            legPendingTime = time
            legPendingSlot = -1
        } else {
            countOrAwait(action, at: time)
        }
    }

    /// A repetition waiting for its legs to fold (see `legPending`: a squat or lunge, or a pending
    /// repetition whose exercise is not named yet) passes on this frame if they have; the wait ends
    /// once the label is no longer that kind of exercise, after `legCueDeferSeconds`, or back on
    /// the rest side.
    @inline(__always)
    private func checkPendingLegs(action: ActionLabel?, time: Double) {
        guard legPending, side != 0, side != restSide else { return }
        let waitingForLabel = legPendingSlot >= 0
        if (!waitingForLabel && !Self.isStandingLegExercise(action))
            || (configuration.legCueDeferSeconds > 0 && time - legPendingTime > configuration.legCueDeferSeconds) {
            legPending = false
        } else if legsFolded(until: time) {
            legPending = false
            if waitingForLabel {
                pendingPassesLegCues[legPendingSlot] = true
            } else if let action, !configuration.requiresUprightTorso || torsoUpright(at: time) {
                countOrAwait(action, at: legPendingTime)
            }
        }
    }

    /// Squats and lunges: the labels with the leg and upright-torso cues.
    @inline(__always)
    private static func isStandingLegExercise(_ action: ActionLabel?) -> Bool { action == .squats || action == .lunges }

    /// Whether the shoulders are above the hips (on at least one side) on the frame at `time`; true
    /// while no side's shoulder and hip have been seen (no cue, as for the leg cue).
    private func torsoUpright(at time: Double) -> Bool {
        let torso = torsoHeights[ringRow(ofStep: lastStep(atOrBefore: time))]
        return torso.isNaN || torso >= 0
    }

    /// The ring row of the window's `step`-th frame, oldest first.
    private func ringRow(ofStep step: Int) -> Int { (oldestRow + step) % capacity }

    /// The ring row of the window's oldest frame (`startNewSet` leaves a window that does not begin
    /// at row 0).
    private var oldestRow: Int { (nextRow - rows + capacity) % capacity }

    /// The window's last frame (as a step, oldest first) at or before `time`; 0 if none is.
    private func lastStep(atOrBefore time: Double) -> Int {
        var last = 0
        for step in 0..<rows where times[ringRow(ofStep: step)] <= time + 1e-9 { last = step }
        return last
    }

    /// Whether the leg cue moved by `legCueShinLengths` away from its rest value (the median of the
    /// half second up to the last frame on the rest side, or the oldest in the window) between that
    /// frame and the frame at `time`.
    private func legsFolded(until time: Double) -> Bool {
        let restStep = lastStep(atOrBefore: lastRestTime)
        let endStep = lastStep(atOrBefore: time)
        let first = max(0, restStep - legRestFrames)
        for step in first...max(first, endStep) where legHeights[ringRow(ofStep: step)].isNaN {
            return true  // the legs were not all seen yet: no cue, the generic path counts
        }
        // The median of at most legRestFrames + 1 values.
        let count = restStep - first + 1
        for index in 0..<count {
            Self.insertSorted(legHeights[ringRow(ofStep: first + index)], into: legRestScratch, count: index)
        }
        let rest = Self.median(ofSorted: legRestScratch, count: count)
        var moved = 0.0
        if restStep <= endStep {
            for step in restStep...endStep { moved = max(moved, abs(legHeights[ringRow(ofStep: step)] - rest)) }
        }
        return moved >= configuration.legCueShinLengths
    }

    /// A change of side made by one smoothed value.
    private enum SideMove { case none, toFar, toRest }

    /// Moves between the sides for one smoothed value; `.toFar` is a move from the rest side to the
    /// far side (one repetition reaching its turning point), `.toRest` the move back (its end).
    private func advance(value: Double, time: Double, low: Double, high: Double, margin: Double) -> SideMove {
        var newSide = side
        if value >= high - margin {
            newSide = 1
        } else if value <= low + margin {
            newSide = -1
        }
        if (restSide == 1 && value >= high - margin) || (restSide == -1 && value <= low + margin) {
            lastRestTime = time
        }
        if side == 0 {
            if newSide != 0 {
                lastRestTime = time
                side = newSide
                if restSide == 0 { restSide = newSide }
            }
            return .none
        }
        guard newSide != side, time - lastSideChange >= configuration.minimumHalfSeconds else { return .none }
        side = newSide
        lastSideChange = time
        if newSide == restSide {
            lastRestTime = time
            legPending = false
        }
        return newSide != restSide ? .toFar : .toRest
    }
}

/// The phase net's per-frame path inside a `RepetitionCounter`: the features, the net (one or
/// more models) and its counter (all `~Copyable`, so they live in this class, made once), the
/// net's frame number and its repetitions kept while no exercise is named. Allocation-free after
/// `init`.
private final class PhaseNetPath {
    var features = RepetitionPhaseFeatures()
    var net: RepetitionPhaseNet
    var counter: RepetitionPhaseCounter
    /// The net frame being processed (-1 before the first): the phase counter numbers frames the
    /// same way, so an event's age is `frame - event.frame`.
    private(set) var frame = -1
    /// The net's repetitions seen while no exercise was named, oldest first (Python `phase_unnamed`).
    let pendingTimes: UnsafeMutablePointer<Double>
    var pendingCount = 0
    private(set) var failures = 0

    init(net: consuming RepetitionPhaseNet, frameRate: FrameRate) {
        self.net = net
        counter = RepetitionPhaseCounter(frameRate: frameRate)
        pendingTimes = .allocate(capacity: RepetitionCounter.maximumPendingRepetitions)
        pendingTimes.initialize(repeating: 0, count: RepetitionCounter.maximumPendingRepetitions)
    }

    deinit {
        pendingTimes.deallocate()
    }

    /// This frame's output (`frame` advanced). A window the net fails on (only a model damaged in a
    /// way its test run at load did not show) reads as "not repeating".
    func process(_ pose: Pose?) -> RepetitionPhaseOutput {
        frame += 1
        let row = features.update(with: pose)
        do {
            return try net.process(row)
        } catch {
            failures += 1
            return RepetitionPhaseOutput(cos: 0, sin: 0, repeating: 0)
        }
    }

    /// Keeps a repetition for the set; the oldest goes when `maximumPendingRepetitions` are kept.
    func addPending(at time: Double) {
        if pendingCount == RepetitionCounter.maximumPendingRepetitions {
            for index in 1..<pendingCount { pendingTimes[index - 1] = pendingTimes[index] }
            pendingCount -= 1
        }
        pendingTimes[pendingCount] = time
        pendingCount += 1
    }

    /// Forgets the kept repetitions before `time` (Python keeps those at or after it).
    func dropPending(before time: Double) {
        var kept = 0
        for index in 0..<pendingCount where pendingTimes[index] >= time {
            pendingTimes[kept] = pendingTimes[index]
            kept += 1
        }
        pendingCount = kept
    }

    /// As at the start of a stream.
    func reset() {
        features.reset()
        net.reset()
        counter.reset()
        frame = -1
        pendingCount = 0
    }
}
