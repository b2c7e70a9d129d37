import LinuxSystem
import PoseEstimation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One repetition the phase counter counted.
public struct RepetitionPhaseEvent: Equatable, Sendable {
    /// The frame (0 for the first frame given to the counter) on which the phase passed its mark.
    public var frame: Int
    /// The frame on which it was counted: `frame`, or later for a repetition credited when
    /// p(repeating) turned on (at most `creditSeconds` later).
    public var creditedFrame: Int

    public init(frame: Int, creditedFrame: Int) {
        self.frame = frame
        self.creditedFrame = creditedFrame
    }
}

/// Counts repetitions in the phase net's output stream, causally, frame by frame. The Python
/// reference is `PhaseCounter` in training/counter/learned/count.py; RepetitionPhaseParityTests
/// hold this type to its events.
///
/// - p(repeating) switches the counter on above `repeatingOn` and off below `repeatingOff`
///   (hysteresis: the net's p flickers around one threshold).
/// - While on, on each frame whose phase vector is at least `minimumMagnitude` long (a shorter one
///   means the net does not know where in the cycle the person is), the phase is unwrapped and
///   accumulated; each time it passes the next mark (`atPhase` of a cycle, then every full cycle)
///   one repetition is counted on that frame.
/// - The first mark is the next `atPhase` crossing after the phase where counting starts, so a set
///   started mid-cycle is not counted a repetition early.
/// - When p turns on after more than `gapSeconds` off (or for the first time), the phase starts
///   again and the `creditSeconds` of frames before are accumulated first: those frames made the
///   net decide, so a set's first repetition is counted at most that late instead of lost. The
///   counter keeps the outputs of those frames in a ring for this.
///
/// Arithmetic follows the reference's precision: numpy keeps the phase in float32 and the marks in
/// float64 (Python floats), comparing them in float32; so does this type. The angle itself comes
/// from the C library's `atan2f`, which differs from numpy's float32 `arctan2` by one ulp on about
/// half of the fixture's frames (and aarch64's glibc from x86-64's on about 0.1 % of inputs): a
/// crossing decided by one ulp would move one event by one frame. None does on the fixture or
/// through replay (events equal on every sequence compared).
/// Every buffer is allocated in `init`; `process` does not allocate. Not thread-safe.
public struct RepetitionPhaseCounter: ~Copyable {
    /// The counter's parameters; the defaults are count.py's, with the repetition counted at three
    /// quarters of the cycle (`at_phase=0.75`, on the way back from the far pose).
    public struct Parameters: Equatable, Sendable {
        /// p(repeating) above this turns counting on.
        public var repeatingOn: Float = 0.6
        /// p(repeating) below this turns counting off.
        public var repeatingOff: Float = 0.4
        /// Frames whose (cos, sin) is shorter than this are skipped (the phase is unknown there).
        public var minimumMagnitude: Float = 0.3
        /// How far back counting reaches when p turns on (seconds). Half a second: with a whole
        /// second, a repetition that had ended more than a second before was sometimes counted
        /// (issue 23 wants every event within 1 s); half keeps the generated sessions' counts
        /// (`docs/history.md`, counter round 16).
        public var creditSeconds: Double = 0.5
        /// Off for longer than this (seconds) forgets the phase.
        public var gapSeconds: Double = 1
        /// Where in the cycle a repetition is counted: 0.5 at the far pose, 1 back at rest.
        public var atPhase: Double = 0.75

        public init() {}
    }

    /// The parameters it was made with.
    public let parameters: Parameters
    /// The rate the outputs come at.
    public let frameRate: FrameRate
    /// `creditSeconds` and `gapSeconds` in frames (rounded half to even, as Python's `round`).
    public let creditFrames: Int
    public let gapFrames: Int

    /// The last `creditFrames` outputs (frame u at u % creditFrames), for the credit replay.
    private let history: UnsafeMutableBufferPointer<RepetitionPhaseOutput>
    /// The events of the current frame; at most one per stepped frame (the phase moves less than
    /// half a cycle per step and the mark moves a full cycle per event).
    private let events: UnsafeMutableBufferPointer<RepetitionPhaseEvent>
    private var eventCount = 0
    /// The index of the next frame.
    private var frame = 0
    private var active = false
    /// The frame p last turned off on; nil before the first time on.
    private var offSince: Int?
    /// The accumulated phase (float32, as the reference's), the next mark (float64) and the phase
    /// of the last frame used; nil before the first usable frame since the last restart.
    private var accumulated: Float = 0
    private var mark: Double = 0
    private var previous: Float?

    /// A counter for outputs arriving at `frameRate` (already range-checked: 1–240 fps).
    public init(frameRate: FrameRate = FrameRate(framesPerSecond: 15)!, parameters: Parameters = Parameters()) {
        precondition(parameters.creditSeconds >= 0 && parameters.creditSeconds <= 10
                     && parameters.gapSeconds >= 0 && parameters.gapSeconds <= 3600,
                     "creditSeconds must be 0–10 and gapSeconds 0–3600")
        self.parameters = parameters
        self.frameRate = frameRate
        creditFrames = Int((parameters.creditSeconds * frameRate.framesPerSecond).rounded(.toNearestOrEven))
        gapFrames = Int((parameters.gapSeconds * frameRate.framesPerSecond).rounded(.toNearestOrEven))
        history = .allocate(capacity: creditFrames)
        history.initialize(repeating: RepetitionPhaseOutput(cos: 0, sin: 0, repeating: 0))
        events = .allocate(capacity: creditFrames + 1)
        events.initialize(repeating: RepetitionPhaseEvent(frame: 0, creditedFrame: 0))
    }

    deinit {
        history.deallocate()
        events.deallocate()
    }

    /// Back to the state `init` left it in (as at the start of a stream), keeping its buffers: a
    /// new counter would allocate them again.
    public mutating func reset() {
        history.update(repeating: RepetitionPhaseOutput(cos: 0, sin: 0, repeating: 0))
        eventCount = 0
        frame = 0
        active = false
        offSince = nil
        accumulated = 0
        mark = 0
        previous = nil
    }

    /// Takes the net's output for the next frame and returns the repetitions counted on it (valid
    /// until the next call; usually none, one at a time, a few when p turns on and the frames
    /// before are credited).
    public mutating func process(_ output: RepetitionPhaseOutput) -> UnsafeBufferPointer<RepetitionPhaseEvent> {
        let now = frame
        eventCount = 0
        if active {
            if output.repeating < parameters.repeatingOff {
                active = false
                offSince = now
            }
        } else if output.repeating > parameters.repeatingOn {
            active = true
            if offSince.map({ now - $0 > gapFrames }) ?? true {
                previous = nil
                for earlier in Swift.max(0, now - creditFrames)..<now {
                    step(history[earlier % creditFrames], frame: earlier, creditedFrame: now)
                }
            }
            offSince = nil
        }
        if active { step(output, frame: now, creditedFrame: now) }
        if creditFrames > 0 { history[now % creditFrames] = output }
        frame += 1
        return UnsafeBufferPointer(start: events.baseAddress, count: eventCount)
    }

    /// count.py's `step`: accumulates one frame's phase and counts the marks it passes.
    private mutating func step(_ output: RepetitionPhaseOutput, frame: Int, creditedFrame: Int) {
        let magnitude = hypotf(output.cos, output.sin)
        guard magnitude >= parameters.minimumMagnitude else { return }
        let phase = atan2f(output.sin, output.cos)
        let cycle = 2 * Double.pi
        guard let previous else {
            // The first mark is the next `atPhase` crossing after the starting phase,
            // taken in [0, 2π). The reference compares its float64 marks with the float32 phase
            // in float32 (numpy 2's scalar promotion): `Float(...)` below does the same.
            accumulated = Self.pythonRemainder(phase, Float(cycle))
            mark = cycle * parameters.atPhase
            while Float(mark - cycle) > accumulated { mark -= cycle }
            while Float(mark) - accumulated <= 0 { mark += cycle }
            self.previous = phase
            return
        }
        // the step to this frame's phase, wrapped into [−π, π)
        let delta = Self.pythonRemainder(phase - previous + Float(Double.pi), Float(cycle)) - Float(Double.pi)
        accumulated += delta
        self.previous = phase
        while accumulated >= Float(mark) {
            events[eventCount] = RepetitionPhaseEvent(frame: frame, creditedFrame: creditedFrame)
            eventCount += 1
            mark += cycle
        }
    }

    /// Python's (numpy's) `a % b` in float32: the remainder with the sign of `b`.
    @inline(__always)
    static func pythonRemainder(_ a: Float, _ b: Float) -> Float {
        var remainder = fmodf(a, b)
        if remainder != 0 {
            if (b < 0) != (remainder < 0) { remainder += b }
        } else {
            remainder = b < 0 ? -0.0 : 0.0
        }
        return remainder
    }
}

/// The phase net's per-frame path inside a `RepetitionCounter`: poses → `RepetitionPhaseFeatures`
/// → `RepetitionPhaseNet` (two models averaged, the last 3 s of poses: where in a repetition the
/// person is and how likely they are repeating at all) → `RepetitionPhaseCounter` → repetitions.
///
/// Takes: every frame, person or not, with its timestamp and label. Gives: each repetition, with
/// the time its phase passed the mark, to the set bookkeeping (`RepetitionLedger`), which counts it
/// under the net's labels (`phaseLabels`), keeps it while no exercise is named and ignores it under
/// another exercise (the motion rule counts those). Frames skipped in time (a late live loop drops
/// them; replay never does) go in as frames without a pose, at most a window of them, so the net's
/// window stays 3 s long. The features, net and counter are `~Copyable`, so they live in this class,
/// made once; allocation-free after `init`. Not thread-safe.
final class RepetitionPhaseNetPath {
    private var features = RepetitionPhaseFeatures()
    private var net: RepetitionPhaseNet
    private var counter: RepetitionPhaseCounter
    private let framesPerSecond: Double
    /// The net frame being processed (-1 before the first): the phase counter numbers frames the
    /// same way, so an event's age is `frame - event.frame`.
    private(set) var frame = -1
    /// How many windows the net failed on (read as "not repeating").
    private(set) var failures = 0
    /// The previous call's timestamp (nil before the first).
    private var previousTimestamp: Double?

    init(net: consuming RepetitionPhaseNet, frameRate: FrameRate) {
        self.net = net
        counter = RepetitionPhaseCounter(frameRate: frameRate)
        framesPerSecond = frameRate.framesPerSecond
    }

    /// One frame (and first the frames skipped since the previous call, as frames without a pose);
    /// its repetitions go to `ledger`.
    func process(timestamp: Double, pose: Pose?, action: ActionLabel?, ledger: RepetitionLedger) {
        if let previousTimestamp {
            let periods = Int(((timestamp - previousTimestamp) * framesPerSecond).rounded())
            if periods > 1 {
                for _ in 0..<min(periods - 1, RepetitionPhaseNet.window) {
                    step(pose: nil, timestamp: timestamp, action: action, ledger: ledger)
                }
            }
        }
        step(pose: pose, timestamp: timestamp, action: action, ledger: ledger)
        previousTimestamp = timestamp
    }

    /// One net frame. A window the net fails on (only a model damaged in a way its test run at load
    /// did not show) reads as "not repeating". Each repetition happened `frame - event.frame` net
    /// frames before `timestamp`. Python: `PhaseNetPath.process` (learned/count.py).
    private func step(pose: Pose?, timestamp: Double, action: ActionLabel?, ledger: RepetitionLedger) {
        frame += 1
        let row = features.update(with: pose)
        let output: RepetitionPhaseOutput
        do {
            output = try net.process(row)
        } catch {
            failures += 1
            output = RepetitionPhaseOutput(cos: 0, sin: 0, repeating: 0)
        }
        for event in counter.process(output) {
            let time = timestamp - Double(frame - event.frame) / framesPerSecond
            ledger.netRepetition(at: time, seenAt: timestamp, action: action)
        }
    }

    /// As at the start of a stream.
    func reset() {
        features.reset()
        net.reset()
        counter.reset()
        frame = -1
        previousTimestamp = nil
    }
}
