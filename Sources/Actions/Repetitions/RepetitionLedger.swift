/// The set bookkeeping that both counting paths feed: the cumulative counts (per action and for the
/// session) with their event log, and the repetitions seen while no exercise is named, kept for the
/// current set and credited when one is.
///
/// Takes: each repetition the motion rule (`RepetitionMotionRule`) or the phase net
/// (`RepetitionPhaseNetPath`) sees, with the time it happened, and the label of each frame. Gives:
/// `count(of:)`, `sessionCount` and `event(number:)`.
///
/// The classifier names a set about its window after the movement starts, so a set's first
/// repetitions are always seen unnamed. They are kept (each with its time) and counted when an
/// exercise is named. The set ends, and what it kept is dropped, after `setPauseSeconds` without a
/// repetition, when the person leaves (`personLeft`), or once `other` has held longer than
/// `labelLagSeconds`. The rule's kept repetitions carry whether they passed the squat/lunge cues
/// and which one is still under way or still folding its legs (the rule decides those;
/// `credit(to:)` hands them back to it). The net's repetitions of its labels and the rule's of
/// the others are counted; the rule's of the net's labels are not.
/// Every buffer is allocated in `init`; nothing after. Not thread-safe: one frame loop owns it.
final class RepetitionLedger {
    let configuration: RepetitionCounterConfiguration
    /// Bit per `ActionLabel.countableIndex` of the labels the phase net counts (0: no net).
    private let netLabelMask: UInt32

    // MARK: counts

    private let perAction: UnsafeMutablePointer<Int>
    private(set) var sessionCount = 0
    /// The last `eventLogCapacity` events, by session number (`sessionCount` at the event, modulo).
    private let eventLog: UnsafeMutablePointer<RepetitionEvent>
    /// The timestamp of the frame being processed (events credited on it carry it).
    private var frameTime = 0.0
    /// Per `ActionLabel.countableIndex`: the last frame's timestamp on which it was the label.
    private let lastNamed: UnsafeMutablePointer<Double>

    // MARK: the rule's repetitions kept for the set

    /// Their times, oldest first, and whether each passed the squat/lunge cues (legs folded, torso
    /// upright), which decide once the exercise is known.
    private let pendingTimes: UnsafeMutablePointer<Double>
    private let pendingPassesLegCues: UnsafeMutablePointer<Bool>
    private(set) var pendingCount = 0
    /// With `countsAtReturn`: the kept repetition that reached the far side and has not ended yet
    /// (-1: none). Its time becomes its end when it returns; if its exercise is named first, the
    /// rule counts it at its end (`Handover.awaitsReturn`).
    private var pendingUnderWay = -1
    /// The kept repetition whose legs have not folded yet (-1: none); the rule marks it when they
    /// do (`legsFolded()`).
    private(set) var legWaitingSlot = -1
    /// When the rule last saw a repetition (counted or kept): a pause longer than
    /// `setPauseSeconds` after it ends the set.
    private var lastRepetitionTime = -Double.infinity

    // MARK: the net's repetitions kept for the set

    private let netPendingTimes: UnsafeMutablePointer<Double>
    private var netPendingCount = 0
    /// When the net last saw a repetition (counted or kept), for its set's pause.
    private var lastNetRepetitionTime = -Double.infinity

    /// Since when the label has been `other` without an exercise named since (nil: it is not).
    private var otherSince: Double?

    init(configuration: RepetitionCounterConfiguration, netLabels: [ActionLabel]) {
        self.configuration = configuration
        netLabelMask = Self.labelMask(netLabels)
        let labels = ActionLabel.countable.count, pending = RepetitionCounter.maximumPendingRepetitions
        perAction = .allocate(capacity: labels)
        perAction.initialize(repeating: 0, count: labels)
        lastNamed = .allocate(capacity: labels)
        lastNamed.initialize(repeating: -Double.infinity, count: labels)
        pendingTimes = .allocate(capacity: pending)
        pendingTimes.initialize(repeating: 0, count: pending)
        pendingPassesLegCues = .allocate(capacity: pending)
        pendingPassesLegCues.initialize(repeating: false, count: pending)
        netPendingTimes = .allocate(capacity: pending)
        netPendingTimes.initialize(repeating: 0, count: pending)
        eventLog = .allocate(capacity: RepetitionCounter.eventLogCapacity)
        eventLog.initialize(repeating: RepetitionEvent(label: .squats, count: 0, sessionCount: 0, time: 0, creditedAt: 0),
                            count: RepetitionCounter.eventLogCapacity)
    }

    deinit {
        perAction.deallocate()
        lastNamed.deallocate()
        pendingTimes.deallocate()
        pendingPassesLegCues.deallocate()
        netPendingTimes.deallocate()
        eventLog.deallocate()
    }

    /// One bit per `ActionLabel.countableIndex` of `labels`.
    static func labelMask(_ labels: [ActionLabel]) -> UInt32 {
        labels.reduce(0) { mask, label in label.countableIndex.map { mask | 1 << UInt32($0) } ?? mask }
    }

    /// Whether `mask` (a `labelMask`) holds `action`.
    @inline(__always)
    static func labelMask(_ mask: UInt32, holds action: ActionLabel?) -> Bool {
        guard let index = action?.countableIndex else { return false }
        return mask & (1 << UInt32(index)) != 0
    }

    /// Whether the phase net counts `action`.
    @inline(__always)
    func countsWithNet(_ action: ActionLabel?) -> Bool { Self.labelMask(netLabelMask, holds: action) }

    // MARK: counts

    func count(of label: ActionLabel) -> Int {
        guard let index = label.countableIndex else { return 0 }
        return perAction[index]
    }

    func event(number: Int) -> RepetitionEvent {
        precondition(number >= 1 && number <= sessionCount && sessionCount - number < RepetitionCounter.eventLogCapacity,
                     "repetition \(number) is not in the event log")
        return eventLog[number % RepetitionCounter.eventLogCapacity]
    }

    /// When the last repetition counted this session happened (-∞ before the first).
    var lastCountedTime: Double {
        sessionCount > 0 ? eventLog[sessionCount % RepetitionCounter.eventLogCapacity].time : -.infinity
    }

    /// Counts one repetition of `action` that happened at `time`, credited on the current frame.
    /// The rule's repetitions (`byNet` false) of the labels the net counts are not counted: every
    /// path of the rule counts through here. Python: `Ledger.count(…, phase=…)` (counter_ledger.py).
    func count(_ action: ActionLabel, at time: Double, byNet: Bool = false) {
        if !byNet, countsWithNet(action) { return }
        guard let index = action.countableIndex else { return }
        perAction[index] += 1
        sessionCount += 1
        eventLog[sessionCount % RepetitionCounter.eventLogCapacity] = RepetitionEvent(
            label: action, count: perAction[index], sessionCount: sessionCount, time: time, creditedAt: frameTime)
    }

    /// Counts to zero and the labels' history forgotten (the kept repetitions go with `personLeft`).
    func resetSession() {
        perAction.update(repeating: 0, count: ActionLabel.countable.count)
        lastNamed.update(repeating: -Double.infinity, count: ActionLabel.countable.count)
        sessionCount = 0
        lastNetRepetitionTime = -Double.infinity
    }

    // MARK: the frame's label

    /// A new frame at `timestamp`: what is counted from now on is credited on it.
    func beginFrame(at timestamp: Double) {
        frameTime = timestamp
    }

    /// Sets without a repetition for `setPauseSeconds` end before anyone named them.
    func endPausedSets(at timestamp: Double) {
        if pendingCount > 0, timestamp - lastRepetitionTime > configuration.setPauseSeconds {
            pendingCount = 0
            pendingUnderWay = -1
        }
        if netPendingCount > 0, timestamp - lastNetRepetitionTime > configuration.setPauseSeconds {
            netPendingCount = 0
        }
    }

    /// `action` (an exercise) is the label at `timestamp`. True when it names a new set the rule
    /// counts (`newSetWindowSeconds`: not the label within `labelLagSeconds`, nothing counted in
    /// the window's last seconds); the caller then restarts the rule's window and `dropPending(from:)`.
    func namesNewSet(_ action: ActionLabel, at timestamp: Double) -> Bool {
        guard let index = action.countableIndex else { return false }
        let namedBefore = lastNamed[index]
        lastNamed[index] = timestamp
        let start = timestamp - configuration.newSetWindowSeconds
        return configuration.newSetWindowSeconds > 0 && !countsWithNet(action)
            && timestamp - namedBefore > configuration.labelLagSeconds && lastCountedTime < start
    }

    /// What `credit(to:)` hands back to the rule.
    struct Handover {
        /// The kept repetition under way is now `action`'s, counted at its end.
        var awaitsReturn = false
        /// The kept repetition still folding its legs is now a squat or lunge waiting to count.
        var legsStillFolding = false
    }

    /// An exercise is named: the set's repetitions seen before it was (that pass its cues) count now,
    /// each with its own time. Under the net's label the net's count and the rule's go; under
    /// another the rule's count and the net's go.
    func credit(to action: ActionLabel) -> Handover {
        otherSince = nil
        if countsWithNet(action) {
            for index in 0..<netPendingCount { count(action, at: netPendingTimes[index], byNet: true) }
            netPendingCount = 0
            pendingCount = 0
            pendingUnderWay = -1
            legWaitingSlot = -1
            return Handover()
        }
        netPendingCount = 0
        guard pendingCount > 0 else { return Handover() }
        var handover = Handover()
        let gated = RepetitionMotionRule.isStandingLegExercise(action)
        let waiting = legWaitingSlot
        let underWay = pendingUnderWay
        pendingUnderWay = -1
        for index in 0..<pendingCount where !gated || (pendingPassesLegCues[index] && index != waiting) {
            if index == underWay, index != waiting {
                handover.awaitsReturn = true  // not ended yet: it counts at its end, as under the label
            } else {
                count(action, at: pendingTimes[index])
            }
        }
        if waiting >= 0 {
            legWaitingSlot = -1
            handover.legsStillFolding = gated  // a squat or lunge now, counted when they have (or dropped)
        }
        pendingCount = 0
        return handover
    }

    /// The label is `other` at `timestamp`: once it has held longer than the label can lag, what
    /// was kept before was other movement.
    func labelIsOther(at timestamp: Double) {
        let since = otherSince ?? timestamp
        otherSince = since
        guard timestamp - since > configuration.labelLagSeconds else { return }
        let start = timestamp - configuration.labelLagSeconds
        var dropped = 0
        while dropped < pendingCount, pendingTimes[dropped] < start { dropped += 1 }
        removeOldestPending(dropped)
        var kept = 0  // the net's: Python keeps those at or after `start`
        for index in 0..<netPendingCount where netPendingTimes[index] >= start {
            netPendingTimes[kept] = netPendingTimes[index]
            kept += 1
        }
        netPendingCount = kept
    }

    /// The person left (or the image changed): whoever did the kept repetitions is gone.
    func personLeft() {
        pendingCount = 0
        netPendingCount = 0
        pendingUnderWay = -1
        otherSince = nil
        lastRepetitionTime = -Double.infinity
    }

    /// A new set restarts the rule's window at `start`: the rule's kept repetitions from then on go
    /// (its replay sees them again); older ones stay.
    func dropPending(from start: Double) {
        while pendingCount > 0, pendingTimes[pendingCount - 1] >= start { pendingCount -= 1 }  // oldest first
    }

    // MARK: fed by the phase net

    /// The net saw a repetition at `time` on the frame at `timestamp`: counted under one of its
    /// labels, kept while no exercise is named, ignored under another exercise (the rule counts it).
    func netRepetition(at time: Double, seenAt timestamp: Double, action: ActionLabel?) {
        lastNetRepetitionTime = timestamp
        if let action, countsWithNet(action) {
            count(action, at: time, byNet: true)
        } else if action?.isCountable != true {
            if netPendingCount == RepetitionCounter.maximumPendingRepetitions {
                for index in 1..<netPendingCount { netPendingTimes[index - 1] = netPendingTimes[index] }
                netPendingCount -= 1
            }
            netPendingTimes[netPendingCount] = time
            netPendingCount += 1
        }
    }

    // MARK: fed by the motion rule

    /// The rule saw a repetition (counted or kept) at `time`.
    func ruleRepetitionSeen(at time: Double) {
        lastRepetitionTime = time
    }

    /// Keeps a rule repetition seen while no exercise is named, the oldest going when
    /// `maximumPendingRepetitions` are kept. `passesLegCues`: its squat/lunge cues passed;
    /// `waitsForLegs`: upright, legs not folded yet (it becomes `legWaitingSlot`); `ended`: kept at
    /// its end, its cues already judged.
    func keep(at time: Double, passesLegCues: Bool, waitsForLegs: Bool, ended: Bool) {
        if pendingCount == RepetitionCounter.maximumPendingRepetitions { removeOldestPending(1) }
        if ended { lastRepetitionTime = time }
        pendingTimes[pendingCount] = time
        pendingPassesLegCues[pendingCount] = passesLegCues
        if waitsForLegs { legWaitingSlot = pendingCount }
        pendingCount += 1
    }

    /// The newest kept repetition is under way (`countsAtReturn`): its end gives its time.
    func newestIsUnderWay() {
        pendingUnderWay = pendingCount - 1
    }

    /// The rule's signal came back (or kept still on the far side) at `time`: a kept repetition
    /// under way ends there.
    func repetitionEnded(at time: Double) {
        guard pendingUnderWay >= 0 else { return }
        pendingTimes[pendingUnderWay] = time  // a repetition's time is its end
        lastRepetitionTime = time
        pendingUnderWay = -1
    }

    /// The kept repetition waiting for its legs folded them: it passes the cues once named.
    func legsFolded() {
        pendingPassesLegCues[legWaitingSlot] = true
        legWaitingSlot = -1
    }

    /// No kept repetition waits for its legs any more.
    func stopWaitingForLegs() {
        legWaitingSlot = -1
    }

    /// The rule's window restarted: the end of a kept repetition under way will not be seen in the
    /// old frame (it keeps its far-side time), and none waits for its legs.
    func windowRestarted() {
        pendingUnderWay = -1
        legWaitingSlot = -1
    }

    private func removeOldestPending(_ dropped: Int) {
        guard dropped > 0 else { return }
        for index in dropped..<max(dropped, pendingCount) {
            pendingTimes[index - dropped] = pendingTimes[index]
            pendingPassesLegCues[index - dropped] = pendingPassesLegCues[index]
        }
        pendingCount -= dropped
        if pendingUnderWay >= 0 { pendingUnderWay = max(-1, pendingUnderWay - dropped) }
        if legWaitingSlot >= 0 { legWaitingSlot = max(-1, legWaitingSlot - dropped) }
    }
}
