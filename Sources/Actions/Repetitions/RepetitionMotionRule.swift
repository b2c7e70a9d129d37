import PoseEstimation

/// The motion rule: poses become one motion signal, the signal moves between two sides, and each
/// move from the rest side to the far side and back is one repetition. No per-action joint: the
/// same code counts squats, jumping jacks or a press, and follows the person turning.
///
/// Takes: each frame's timestamp, usable pose and label. Gives: its repetitions to the set
/// bookkeeping (`RepetitionLedger`): counted under an exercise's label, kept while none is named.
/// 1. Features (`RepetitionMotionFeatures`) over a sliding window (`windowSeconds`); the window's
///    first principal axis (`RepetitionMotionAxis`; the vertical features only under
///    `verticalLabels`) turns each into one number.
/// 2. That signal, smoothed, is "far" above `maximum − h·range` of the window and "near" below
///    `minimum + h·range` (hysteresis); the side it first settles on is the rest pose. A
///    repetition counts when the signal is back (`countsAtReturn`) or has kept still on the far
///    side for `stillSeconds`. The first decision after a (re)start also replays the warm-up's
///    frames (the whole window after `startNewSet`), so those repetitions count late, not never.
/// 3. Squats and lunges must fold the legs (`legCueShinLengths`, the hips' height above the
///    ankles) between the rest side and the far side, with the torso upright.
/// 4. A camera zoom or cut, or the person leaving, restarts everything (`resetMotion`); a joint
///    first seen during the warm-up restarts the window.
/// Per frame it reads the window four times (26 × 90 multiply-adds each); every buffer is
/// allocated in `init`. Not thread-safe. Python: `MotionRule` (training/counter/counter_rule.py).
final class RepetitionMotionRule {
    let configuration: RepetitionCounterConfiguration
    private let ledger: RepetitionLedger
    private let features: RepetitionMotionFeatures
    /// Bit per `ActionLabel.countableIndex` of `configuration.verticalLabels`.
    private let verticalLabelMask: UInt32

    private let capacity: Int
    /// Ring of the last `capacity` feature vectors, row-major, `RepetitionMotionFeatures.count` per row.
    private let window: UnsafeMutablePointer<Float>
    private var nextRow = 0
    private var rows = 0
    /// The window's principal axis and its projection on it (the one signal).
    private let signal: RepetitionMotionAxis
    /// Each ring row's timestamp, leg height and torso height (`RepetitionMotionFeatures.hold`).
    private let times: UnsafeMutablePointer<Double>
    private let legHeights: UnsafeMutablePointer<Double>
    private let torsoHeights: UnsafeMutablePointer<Double>
    /// The leg cue's rest value is the median over this many frames before the last rest frame (and
    /// it): 0.5 s, so one noisy frame does not decide. Scratch space for that median.
    private let legRestFrames: Int
    private let legRestScratch: UnsafeMutablePointer<Double>
    private(set) var lastPoseTime = -Double.infinity

    /// Whether the warm-up frames have been run through the side logic since the last restart.
    private var creditedWarmUp = false
    /// The next first decision replays the whole window, not only the warm-up (`startNewSet`).
    private var replaysWholeWindow = false
    /// -1 near side, +1 far side, 0 not settled yet.
    private var side: Int8 = 0
    private var restSide: Int8 = 0
    private var lastSideChange = -Double.infinity
    /// The last time the signal was on the rest side (where a repetition's excursion starts).
    private var lastRestTime = -Double.infinity
    /// A squat or lunge of the current label reached the far side before its legs had folded
    /// enough (at `legPendingTime`): it still counts on the frame they do, within
    /// `legCueDeferSeconds` and before the signal is back on the rest side. A kept repetition can
    /// wait the same way (`RepetitionLedger.legWaitingSlot`); `legPendingTime` is then its time.
    private var legPendingForLabel = false
    private var legPendingTime = 0.0
    /// A repetition that reached the far side and passed its checks under `awaitingAction`, counted
    /// when the signal is back on the rest side (`countsAtReturn`).
    private var awaitingReturn = false
    private var awaitingAction: ActionLabel = .squats

    /// The smoothed motion signal on the last frame that had a decision, and the two thresholds.
    private(set) var lastSignal: Double = 0
    private(set) var lastNearThreshold: Double = 0
    private(set) var lastFarThreshold: Double = 0

    init(configuration: RepetitionCounterConfiguration, ledger: RepetitionLedger) {
        self.configuration = configuration
        self.ledger = ledger
        features = RepetitionMotionFeatures(configuration: configuration)
        verticalLabelMask = RepetitionLedger.labelMask(configuration.verticalLabels)
        capacity = configuration.windowFrames
        let width = RepetitionMotionFeatures.count
        window = .allocate(capacity: capacity * width)
        window.initialize(repeating: 0, count: capacity * width)
        signal = RepetitionMotionAxis(capacity: capacity)
        times = .allocate(capacity: capacity)
        times.initialize(repeating: 0, count: capacity)
        legHeights = .allocate(capacity: capacity)
        legHeights.initialize(repeating: 0, count: capacity)
        torsoHeights = .allocate(capacity: capacity)
        torsoHeights.initialize(repeating: 0, count: capacity)
        legRestFrames = Int((0.5 * configuration.framesPerSecond).rounded())
        legRestScratch = .allocate(capacity: legRestFrames + 1)
        legRestScratch.initialize(repeating: 0, count: legRestFrames + 1)
    }

    deinit {
        window.deallocate()
        times.deallocate()
        legHeights.deallocate()
        torsoHeights.deallocate()
        legRestScratch.deallocate()
    }

    /// One frame's pose (nil: none) under `action`; its repetitions go to the ledger.
    func process(timestamp: Double, pose: Pose?, action: ActionLabel?) {
        guard let pose, appendFeatures(of: pose, timestamp: timestamp) else { return }
        lastPoseTime = timestamp
        // A warm-up longer than the window would never end: the full window is enough.
        if rows >= min(configuration.warmUpFrames, capacity) {
            signal.update(window: window, rows: rows, oldest: oldestRow,
                          verticalOnly: RepetitionLedger.labelMask(verticalLabelMask, holds: action))
            decide(timestamp: timestamp, action: action)
        }
    }

    /// What `RepetitionLedger.credit(to:)` handed back as `action` was named.
    func adopt(_ handover: RepetitionLedger.Handover, of action: ActionLabel) {
        if handover.awaitsReturn {
            awaitingReturn = true
            awaitingAction = action
        }
        if handover.legsStillFolding { legPendingForLabel = true }
    }

    /// Whether the window holds a frame older than `start` (a new set would drop it).
    func holdsFrames(before start: Double) -> Bool { rows > 0 && times[oldestRow] < start }

    /// The window and the sides start afresh; the held joints, kept repetitions and counts stay.
    private func restartWindow() {
        rows = 0
        nextRow = 0
        signal.restart()
        creditedWarmUp = false
        replaysWholeWindow = false
        side = 0
        restSide = 0
        lastSideChange = -Double.infinity
        lastRestTime = -Double.infinity
        legPendingForLabel = false
        awaitingReturn = false
        ledger.windowRestarted()
    }

    /// A new set of a rule-counted exercise is named (`newSetWindowSeconds`): the window keeps its
    /// frames from `start` on, the sides and the axis start afresh, and the next decision replays
    /// every kept frame (the caller drops the kept repetitions from `start` on).
    func startNewSet(from start: Double) {
        var dropped = 0
        while dropped < rows, times[ringRow(ofStep: dropped)] < start { dropped += 1 }
        let kept = rows - dropped
        let next = nextRow
        restartWindow()
        rows = kept
        nextRow = next  // the kept frames stay where they are in the ring: `oldestRow` finds them
        replaysWholeWindow = true
    }

    /// The person left (or the image changed): the window, the held joints and kept repetitions go.
    func resetMotion() {
        restartWindow()
        features.forget()
        ledger.personLeft()
    }

    /// Checks the pose is usable, holds its confident joints and writes its features into the ring.
    private func appendFeatures(of pose: Pose, timestamp: Double) -> Bool {
        guard let confident = features.confidentJoints(of: pose) else { return false }
        if configuration.zoomFactor > 0, features.scaleChanged(pose, confident: confident) {
            // The camera zoomed or cut: what is held, and the window's range, are in the old frame.
            resetMotion()
            features.restartScaleHistory(with: pose, confident: confident)
        }
        if configuration.restartsWarmUpOnNewJoint, features.seesNewJoint(confident), !creditedWarmUp {
            restartWindow()
        }
        let cues = features.hold(pose, writingInto: window + nextRow * RepetitionMotionFeatures.count)
        legHeights[nextRow] = cues.legHeight
        torsoHeights[nextRow] = cues.torsoHeight
        times[nextRow] = timestamp
        nextRow = (nextRow + 1) % capacity
        rows = min(rows + 1, capacity)
        return true
    }

    /// Smooths the projection, places the thresholds in its range and moves between the sides.
    private func decide(timestamp: Double, action: ActionLabel?) {
        let count = rows
        let projection = signal.projection
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
        if ended { ledger.repetitionEnded(at: time) }
        guard awaitingReturn, ended else { return }
        awaitingReturn = false
        if action == awaitingAction {
            ledger.count(awaitingAction, at: time)
        } else if action?.isCountable != true {
            // No exercise named at its end (a `low_confidence` flicker, the label lagging): kept for
            // the set like a repetition seen then, its cues already passed.
            ledger.keep(at: time, passesLegCues: true, waitsForLegs: false, ended: true)
        }
    }

    /// Counts a repetition that passed its checks: now, or with `countsAtReturn` at its end.
    @inline(__always)
    private func countOrAwait(_ action: ActionLabel, at time: Double) {
        if configuration.countsAtReturn {
            awaitingReturn = true
            awaitingAction = action
        } else {
            ledger.count(action, at: time)
        }
    }

    /// One repetition seen (its crossing at `time`): counted under an exercise's label, kept for
    /// the set while none is named (`other` included: the label lags the movement). A squat or
    /// lunge whose legs did not fold, or done bent over, is not counted.
    @inline(__always)
    private func tally(action: ActionLabel?, time: Double) {
        ledger.ruleRepetitionSeen(at: time)
        guard let action, action.isCountable else {
            let upright = !configuration.requiresUprightTorso || torsoUpright(at: time)
            let folded = configuration.legCueShinLengths <= 0 || legsFolded(until: time)
            ledger.keep(at: time, passesLegCues: upright && folded, waitsForLegs: upright && !folded, ended: false)
            if upright, !folded {  // its legs may fold a little later: `checkPendingLegs` marks it then
                legPendingForLabel = false
                legPendingTime = time
            }
            if configuration.countsAtReturn { ledger.newestIsUnderWay() }
            return
        }
        if Self.isStandingLegExercise(action), configuration.requiresUprightTorso, !torsoUpright(at: time) {
            return  // bent over or lying down: not a squat or lunge
        } else if Self.isStandingLegExercise(action), configuration.legCueShinLengths > 0, !legsFolded(until: time) {
            legPendingForLabel = true
            legPendingTime = time
            ledger.stopWaitingForLegs()
        } else {
            countOrAwait(action, at: time)
        }
    }

    /// A repetition waiting for its legs to fold (a squat or lunge, or a kept repetition whose
    /// exercise is not named yet) passes on this frame if they have; the wait ends once the label
    /// is no longer that kind of exercise, after `legCueDeferSeconds`, or back on the rest side.
    @inline(__always)
    private func checkPendingLegs(action: ActionLabel?, time: Double) {
        let waitingForLabel = ledger.legWaitingSlot >= 0
        guard legPendingForLabel || waitingForLabel, side != 0, side != restSide else { return }
        if (!waitingForLabel && !Self.isStandingLegExercise(action))
            || (configuration.legCueDeferSeconds > 0 && time - legPendingTime > configuration.legCueDeferSeconds) {
            stopWaitingForLegs()
        } else if legsFolded(until: time) {
            if waitingForLabel {
                ledger.legsFolded()
            } else if let action, !configuration.requiresUprightTorso || torsoUpright(at: time) {
                countOrAwait(action, at: legPendingTime)
            }
            stopWaitingForLegs()
        }
    }

    private func stopWaitingForLegs() {
        legPendingForLabel = false
        ledger.stopWaitingForLegs()
    }

    /// Squats and lunges: the labels with the leg and upright-torso cues.
    @inline(__always)
    static func isStandingLegExercise(_ action: ActionLabel?) -> Bool { action == .squats || action == .lunges }

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
        let count = restStep - first + 1  // the median of at most legRestFrames + 1 values
        for index in 0..<count {
            RepetitionMotionFeatures.insertSorted(legHeights[ringRow(ofStep: first + index)], into: legRestScratch, count: index)
        }
        let rest = RepetitionMotionFeatures.median(ofSorted: legRestScratch, count: count)
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
            stopWaitingForLegs()
        }
        return newSide != restSide ? .toFar : .toRest
    }
}
