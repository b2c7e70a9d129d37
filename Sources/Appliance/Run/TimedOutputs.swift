import InferenceCore
import LinuxSystem
import Outputs

/// The outputs that must keep time whatever the loop is doing: the LEDs' blink, heartbeat and
/// flash transitions, and systemd's watchdog ping.
///
/// The loop services them after every wake-up, and, through `InvokeServicePoint`, between the
/// pose model's operators while one inference runs. So a heartbeat stays a heartbeat and the
/// watchdog is fed on a machine where one frame takes longer than a pulse (a slow board, software
/// emulation), without a second thread (posewatch has one loop, the one place where time passes).
/// Servicing reads the clock at most every `operatorsPerClockRead` operators, allocates nothing,
/// and writes a GPIO line only when its level changes.
///
/// The watchdog stays honest: it is fed only while frames keep coming (`lastProgress` within
/// `maxStallNanoseconds`) or the camera is known lost, so an inference that never ends, or a loop
/// that stopped getting frames, still gets posewatch restarted.
struct TimedOutputs<Lines: LEDLines & ~Copyable>: ~Copyable {
    var driver: LEDDriver<Lines>
    var leds: LEDController
    let notifier: ServiceNotifier
    let watchdog: WatchdogSchedule?
    /// The longest time without progress for which the watchdog is still fed.
    var maxStallNanoseconds: Int64
    /// When the loop last made progress: a frame processed, or the camera declared lost (recovery
    /// is its own kind of progress).
    var lastProgress: MonotonicInstant
    /// Whether the camera is known lost (the loop is retrying it: progress of its own kind).
    var isCameraLost = false
    /// When `WATCHDOG=1` is next due.
    private(set) var nextWatchdogPing: MonotonicInstant
    /// Reads the time (CLOCK_MONOTONIC in posewatch; tests inject their own).
    let clock: () -> MonotonicInstant
    /// Operators between two clock reads during an inference.
    let operatorsPerClockRead: Int
    private var operatorsUntilClockRead: Int
    private var ledErrors = ErrorEpisode()
    private let logger: Logger
    private let allocations = AllocationProbe()
    /// Allocations made while servicing during inference (with the malloc-counting preload; the
    /// console LED backend formats text, GPIO writes allocate nothing). The loop keeps them out of
    /// its per-frame count, as it does with the LED writes between frames.
    private(set) var allocationsWhileServicing: UInt64 = 0

    /// Outputs over `lines` (action LEDs then the status LED) starting at `clock()`. MoveNet
    /// Lightning has 157 operators: reading the clock every 4th is ~40 reads per frame, and a
    /// transition is late by at most 4 operators (a few milliseconds on a Pi).
    init(lines: consuming Lines, layout: LEDLayout, notifier: ServiceNotifier, watchdog: WatchdogSchedule?,
         maxStallSeconds: Double, logger: Logger, operatorsPerClockRead: Int = 4,
         clock: @escaping () -> MonotonicInstant = MonotonicInstant.now) {
        let now = clock()
        driver = LEDDriver(lines: lines, actionCount: layout.actionCount)
        leds = LEDController(actionCount: layout.actionCount, now: now)
        self.notifier = notifier
        self.watchdog = watchdog
        maxStallNanoseconds = Int64(maxStallSeconds * 1e9)
        lastProgress = now
        nextWatchdogPing = now
        self.clock = clock
        self.operatorsPerClockRead = max(1, operatorsPerClockRead)
        operatorsUntilClockRead = max(1, operatorsPerClockRead)
        self.logger = logger
    }

    /// Everything due at `now`: the LED levels (only changed lines are written) and the watchdog ping.
    mutating func service(at now: MonotonicInstant) {
        applyLEDs(at: now)
        pingWatchdogIfDue(at: now)
    }

    /// Drives the LEDs to their levels at `now`.
    mutating func applyLEDs(at now: MonotonicInstant) {
        do {
            try driver.apply(leds.levels(at: now))
            logger.recovered(from: &ledErrors, at: now, "LEDs work again", LogFields(event: .error))
        } catch {
            logger.error(in: &ledErrors, at: now, "LEDs: \(error)", LogFields(event: .error))
        }
    }

    /// The camera is known lost: the loop retries it, which is progress of its own kind (the
    /// watchdog stays fed while it does).
    mutating func cameraLost(at now: MonotonicInstant) {
        isCameraLost = true
        lastProgress = now
    }

    /// The camera is back: the stall clock starts again from `now`, as at start-up, so the first
    /// frame after an unplug has the whole `maxStallNanoseconds` to arrive. (Counted from the loss
    /// instead, an unplug longer than the limit stopped the pings at once, and systemd restarted
    /// posewatch unless a frame was processed within WatchdogSec of the camera's return.)
    mutating func cameraBack(at now: MonotonicInstant) {
        isCameraLost = false
        lastProgress = now
    }

    /// Sends `WATCHDOG=1` when it is due, unless the loop has stalled.
    mutating func pingWatchdogIfDue(at now: MonotonicInstant) {
        guard let watchdog, now >= nextWatchdogPing else { return }
        // A loop that turns but gets no frames while the camera is not known lost is stuck in a
        // way the camera source did not notice: stop feeding the watchdog so systemd restarts us.
        let stalled = !isCameraLost && (now - lastProgress).nanoseconds > maxStallNanoseconds
        if !stalled { try? notifier.watchdog() }
        nextWatchdogPing = now + .nanoseconds(watchdog.pingIntervalNanoseconds)
    }

    /// The next instant something here is due (for the loop's timerfd), at or after `now`.
    func nextDeadline(after now: MonotonicInstant) -> MonotonicInstant? {
        var deadline = leds.nextChange(after: now)
        if watchdog != nil { deadline = min(deadline ?? nextWatchdogPing, nextWatchdogPing) }
        return deadline
    }
}

extension TimedOutputs: InvokeServicePoint where Lines: ~Copyable {
    /// Between two of the pose model's operators: every `operatorsPerClockRead` operators, read
    /// the clock and service what is due.
    mutating func operatorFinished(_ index: Int) {
        operatorsUntilClockRead -= 1
        guard operatorsUntilClockRead <= 0 else { return }
        operatorsUntilClockRead = operatorsPerClockRead
        let before = allocations.count
        service(at: clock())
        if let before, let after = allocations.count { allocationsWhileServicing += after - before }
    }
}
