import LinuxSystem
import Testing
@testable import Outputs
#if canImport(Glibc)
import Glibc
#endif

/// The process's allocation counter, when a malloc-counting library is loaded
/// (`Tests/Support/run-allocation-tests.sh`).
enum AllocationCounter {
    typealias Count = @convention(c) () -> UInt64
    /// The calling thread's allocations when the preload library provides them (the test runner
    /// allocates on other threads meanwhile), else the process-wide count.
    static let function: Count? = {
        guard let handle = dlopen(nil, RTLD_NOW) else { return nil }
        guard let symbol = dlsym(handle, "pw_thread_allocation_count") ?? dlsym(handle, "pw_allocation_count") else { return nil }
        return unsafeBitCast(symbol, to: Count.self)
    }()
    static var isAvailable: Bool { function != nil }
    static func allocations(in body: () throws -> Void) rethrows -> UInt64 {
        let before = function!()
        try body()
        return function!() - before
    }
}

@Suite(.serialized, .enabled(if: AllocationCounter.isAvailable, "needs the malloc counter: run Tests/Support/run-allocation-tests.sh"))
struct AllocationTests {
    @Test func theCounterSeesAnAllocation() {
        var kept: [Int] = []
        let count = AllocationCounter.allocations { kept = Array(repeating: 7, count: 1000) }
        #expect(count >= 1)
        #expect(kept.count == 1000)
    }

    @Test func loggingAFrameLoopEntryToTheJournalAllocatesNothing() throws {
        // A socket nobody listens on would fall back to stderr; a bound receiver makes sends succeed.
        let listener = try NotifyListener(path: "/tmp/posewatch-allocation-journal-\(getpid()).sock")
        let logger = Logger(destination: .journal(try JournalSocket(path: listener.path)))
        let action = "squats"  // labels come from the classifier's metadata, allocated once at start
        func logFrame(_ frame: Int) {
            logger.info("rep counted", LogFields(event: .rep, action: action, confidence: 0.91, reps: frame, fps: 15, droppedFrames: 2, inferenceMilliseconds: 40.5))
            listener.discard()
            // A message with text the log's guard must escape (a control character, non-ASCII):
            // escaping writes into the reused buffer too.
            logger.info("camera \u{1b}[2J×\nlost", LogFields(event: .camera))
            listener.discard()
        }
        logFrame(0)  // warm-up: lazy metadata, buffer growth
        let count = AllocationCounter.allocations { for frame in 1...1000 { logFrame(frame) } }
        print("allocations for 1000 journal entries: \(count)")
        #expect(count == 0)
    }

    @Test func drivingTheLEDsPingingTheWatchdogAndUpdatingStatusAllocatesNothing() throws {
        let listener = try NotifyListener(path: "/tmp/posewatch-allocation-notify-\(getpid()).sock")
        let notifier = try ServiceNotifier(socketPath: listener.path)
        var leds = LEDController(actionCount: 5, now: MonotonicInstant(nanoseconds: 0))
        var driver = LEDDriver(lines: CountingLEDLines(count: 6), actionCount: 5)
        var summary = RunSummary(actionLabels: ["a", "b", "c", "d", "e"], now: MonotonicInstant(nanoseconds: 0))
        var status = ByteBuffer(capacity: 256)
        func frame(_ index: Int) throws {
            let now = MonotonicInstant(nanoseconds: Int64(index) * 66_000_000)
            leds.show(index % 40 < 20 ? .action(index % 5) : .lowConfidence(bestGuess: 2), at: now)
            if index % 7 == 0 { leds.repetitionCounted(action: index % 5, at: now) }
            try driver.apply(leds.levels(at: now))
            _ = leds.nextChange(after: now)
            try notifier.watchdog()
            listener.discard()
            summary.recordFrame(inferenceNanoseconds: 40_000_000)
            if index % 15 == 0 {
                // The once-a-second STATUS= line, composed in a reused buffer.
                status.removeAll()
                status.append("STATUS=squats, ")
                status.append(decimal: summary.framesPerSecond(at: now), fractionDigits: 1)
                status.append(" fps")
                try notifier.send(status)
                listener.discard()
            }
        }
        try frame(0)
        var count: UInt64 = 0
        try { count = try AllocationCounter.allocations { for index in 1...1000 { try frame(index) } } }()
        print("allocations for 1000 frames of LEDs, watchdog pings, summary and STATUS updates: \(count)")
        #expect(count == 0)
        #expect(driver.lines.writes > 100)
    }
}

struct CountingLEDLines: LEDLines {
    let count: Int
    var writes = 0
    init(count: Int) { self.count = count }
    mutating func setLine(_ index: Int, on: Bool) throws(LEDError) { writes += 1 }
}
