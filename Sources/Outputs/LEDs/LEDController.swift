import LinuxSystem

/// What the action LEDs should say, from the classifier's latest decision.
public enum ActionIndication: Sendable, Equatable {
    /// Before the first prediction: all action LEDs off.
    case startingUp
    /// Nobody in the window: all action LEDs off.
    case noPerson
    /// A person doing something that is none of the actions: all action LEDs off.
    case other
    /// The classifier is unsure: the best guess's LED blinks (or, without a guess, the LED of the
    /// last action shown; nothing when there was none).
    case lowConfidence(bestGuess: Int?)
    /// A confident action: its LED (index into the configured action LEDs) is on.
    case action(Int)
}

/// What the status LED should say.
public enum StatusIndication: Sendable, Equatable {
    /// Frames flow: a slow heartbeat.
    case healthy
    /// The camera is gone and being re-opened: a fast blink.
    case cameraLost
    /// posewatch is stopping or stopped: everything off.
    case stopped
}

/// Line levels for every LED at one instant: a bit per action LED plus the status LED.
public struct LEDLevels: Sendable, Equatable {
    /// Bit `i` is action LED `i`.
    public var actions: UInt64
    /// The status LED.
    public var status: Bool

    public init(actions: UInt64 = 0, status: Bool = false) {
        self.actions = actions
        self.status = status
    }

    /// Everything off.
    public static let off = LEDLevels()

    /// Whether action LED `index` is on.
    public func isOn(action index: Int) -> Bool { actions & (1 << UInt64(index)) != 0 }

    /// The level of line `index`, counting the action LEDs first and the status LED last.
    public func isOn(line index: Int, actionCount: Int) -> Bool {
        index == actionCount ? status : isOn(action: index)
    }
}

/// Blink timings. The defaults are visible across a room and distinct from one another.
public struct LEDTiming: Sendable, Equatable {
    /// Low-confidence blink: on and off for this long each (2 Hz).
    public var lowConfidenceHalfPeriodNanoseconds: Int64 = 250_000_000
    /// A counted repetition inverts its LED for this long (a wink): a lit LED winks off, a dark one
    /// flashes on.
    public var repetitionFlashNanoseconds: Int64 = 150_000_000
    /// Between two winks of one burst (repetitions credited together, or counted faster than a
    /// wink and its gap): long enough that each wink can be counted by eye.
    public var repetitionGapNanoseconds: Int64 = 200_000_000
    /// Camera lost: on and off for this long each (5 Hz).
    public var cameraLostHalfPeriodNanoseconds: Int64 = 100_000_000
    /// Heartbeat: a double pulse (on, off, on, then a long off) in this period.
    public var heartbeatPeriodNanoseconds: Int64 = 1_500_000_000
    /// Length of each heartbeat pulse and of the gap between the two.
    public var heartbeatPulseNanoseconds: Int64 = 100_000_000

    public init() {}
}

/// The LEDs as a pure state machine: feed it decisions, repetitions and health with the time they
/// happened; ask it for the line levels at an instant and for the next instant they change (to arm
/// a timerfd). It does no I/O and reads no clock, so tests drive it with made-up instants.
public struct LEDController: Sendable {
    /// The most action LEDs one controller drives: `LEDLevels.actions` has one bit per LED. The
    /// config reader and `LEDLayout` refuse more, so a config file can never reach the trap below.
    public static let maximumActionCount = UInt64.bitWidth

    /// How many action LEDs there are (the status LED comes on top).
    public let actionCount: Int
    public let timing: LEDTiming
    public private(set) var indication: ActionIndication = .startingUp
    private var indicationSince: MonotonicInstant
    /// The last confidently shown action, which a low-confidence blink falls back to.
    public private(set) var lastAction: Int?
    public private(set) var status: StatusIndication = .healthy
    private var statusSince: MonotonicInstant
    /// Per action LED: its burst of winks, one per counted repetition.
    private var bursts: [WinkBurst]

    /// A controller for `actionCount` action LEDs (at most `maximumActionCount`), starting up,
    /// status healthy, at `now`. More is a programming error: a layout built from a config file is
    /// checked against the maximum before it gets here.
    public init(actionCount: Int, timing: LEDTiming = LEDTiming(), now: MonotonicInstant) {
        precondition((0...Self.maximumActionCount).contains(actionCount), "at most \(Self.maximumActionCount) action LEDs")
        self.actionCount = actionCount
        self.timing = timing
        indicationSince = now
        statusSince = now
        bursts = Array(repeating: WinkBurst(start: now, winks: 0), count: actionCount)
    }

    /// Shows the classifier's latest decision. Repeating the current decision keeps its blink phase.
    public mutating func show(_ newIndication: ActionIndication, at now: MonotonicInstant) {
        if case .action(let index) = newIndication {
            precondition((0..<actionCount).contains(index), "action LED \(index) out of range")
            lastAction = index
        }
        guard newIndication != indication else { return }
        indication = newIndication
        indicationSince = now
    }

    /// A repetition of action `index` was counted: its LED winks once, starting `now`, or after the
    /// winks still to come (several repetitions credited at once wink one after another, each
    /// visible: a burst).
    public mutating func repetitionCounted(action index: Int, at now: MonotonicInstant) {
        precondition((0..<actionCount).contains(index), "action LED \(index) out of range")
        if now >= burstEnd(index) {
            // Not in the same instant as a change of what the LEDs show (the exercise named as its
            // first repetitions are credited): the new level is seen first, then the winks.
            let start = max(now, indicationSince + .nanoseconds(timing.repetitionGapNanoseconds))
            bursts[index] = WinkBurst(start: start, winks: 1)
        } else {
            bursts[index].winks += 1
        }
    }

    /// A wink and the gap after it.
    private var winkPeriod: MonotonicDuration {
        .nanoseconds(timing.repetitionFlashNanoseconds + timing.repetitionGapNanoseconds)
    }

    /// When LED `index`'s burst ends (its last wink's gap included).
    @inline(__always)
    private func burstEnd(_ index: Int) -> MonotonicInstant {
        bursts[index].start + .nanoseconds(Int64(bursts[index].winks) * winkPeriod.nanoseconds)
    }

    /// Whether LED `index` is inverted by a wink at `now`, and for how long that stays so (nil: no
    /// burst is running).
    @inline(__always)
    private func winkPhase(_ index: Int, at now: MonotonicInstant) -> (inverted: Bool, remaining: Int64)? {
        let elapsed = (now - bursts[index].start).nanoseconds
        guard bursts[index].winks > 0, now < burstEnd(index) else { return nil }
        if elapsed < 0 { return (false, -elapsed) }  // counted for a later instant: not begun yet
        let period = winkPeriod.nanoseconds
        let phase = elapsed % period
        let flash = timing.repetitionFlashNanoseconds
        if phase < flash { return (true, flash - phase) }
        // In the gap: the next wink, or the burst's end (nothing changes after the last gap).
        return (false, period - phase)
    }

    /// Sets the status LED's meaning. `.stopped` also turns every action LED off for good.
    public mutating func setStatus(_ newStatus: StatusIndication, at now: MonotonicInstant) {
        guard newStatus != status else { return }
        status = newStatus
        statusSince = now
    }

    /// The LED whose blink shows low confidence, if any.
    private var blinkingAction: Int? {
        guard case .lowConfidence(let guess) = indication else { return nil }
        if let guess, (0..<actionCount).contains(guess) { return guess }
        return lastAction
    }

    /// The level of every line at `now`.
    public func levels(at now: MonotonicInstant) -> LEDLevels {
        guard status != .stopped else { return .off }
        var actions: UInt64 = 0
        switch indication {
        case .action(let index):
            actions = 1 << UInt64(index)
        case .lowConfidence:
            if let index = blinkingAction,
               Self.blink(elapsed: (now - indicationSince).nanoseconds, half: timing.lowConfidenceHalfPeriodNanoseconds).on {
                actions = 1 << UInt64(index)
            }
        case .startingUp, .noPerson, .other:
            break
        }
        for index in 0..<actionCount where winkPhase(index, at: now)?.inverted == true {
            actions ^= 1 << UInt64(index)
        }
        return LEDLevels(actions: actions, status: statusPhase(at: now).on)
    }

    /// The first instant after `now` at which `levels(at:)` changes, or nil when nothing will change
    /// until the next decision (steady LEDs need no timer).
    public func nextChange(after now: MonotonicInstant) -> MonotonicInstant? {
        guard status != .stopped else { return nil }
        var earliest: Int64 = .max
        if blinkingAction != nil {
            let phase = Self.blink(elapsed: (now - indicationSince).nanoseconds, half: timing.lowConfidenceHalfPeriodNanoseconds)
            earliest = min(earliest, phase.remaining)
        }
        // Indexed rather than `for … in`: the unoptimised iterator allocates, and debug builds run tests.
        for index in 0..<actionCount {
            guard let phase = winkPhase(index, at: now) else { continue }
            // The end of the last gap changes nothing; any other boundary does.
            let isLastGap = !phase.inverted && now + .nanoseconds(phase.remaining) >= burstEnd(index)
            if !isLastGap { earliest = min(earliest, phase.remaining) }
        }
        earliest = min(earliest, statusPhase(at: now).remaining)
        return earliest == .max ? nil : now + .nanoseconds(earliest)
    }

    /// The status LED's level and how long it keeps it.
    private func statusPhase(at now: MonotonicInstant) -> (on: Bool, remaining: Int64) {
        let elapsed = (now - statusSince).nanoseconds
        switch status {
        case .stopped:
            return (false, .max)
        case .cameraLost:
            return Self.blink(elapsed: elapsed, half: timing.cameraLostHalfPeriodNanoseconds)
        case .healthy:
            // on (pulse), off (pulse), on (pulse), off (the rest of the period).
            let pulse = timing.heartbeatPulseNanoseconds
            let phase = Self.positiveRemainder(elapsed, timing.heartbeatPeriodNanoseconds)
            if phase < pulse { return (true, pulse - phase) }
            if phase < 2 * pulse { return (false, 2 * pulse - phase) }
            if phase < 3 * pulse { return (true, 3 * pulse - phase) }
            return (false, timing.heartbeatPeriodNanoseconds - phase)
        }
    }

    /// A square wave starting "on": the level `elapsed` after its start and how long it stays.
    private static func blink(elapsed: Int64, half: Int64) -> (on: Bool, remaining: Int64) {
        let phase = positiveRemainder(elapsed, 2 * half)
        return phase < half ? (true, half - phase) : (false, 2 * half - phase)
    }

    private static func positiveRemainder(_ value: Int64, _ modulus: Int64) -> Int64 {
        let remainder = value % modulus
        return remainder < 0 ? remainder + modulus : remainder
    }
}

/// Winks of one action LED: the first starts at `start`, each takes a wink and a gap, `winks` of
/// them (0: none).
private struct WinkBurst: Sendable {
    var start: MonotonicInstant
    var winks: Int
}
