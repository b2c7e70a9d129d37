import Testing
import Glibc
import Actions
import LinuxSystem
import Outputs
import PoseEstimation
@testable import Appliance

/// The frame loop's event path (`LoopEvents`: a new action shown, a repetition counted, each
/// driving the LEDs, the run summary and a journal entry) fed by the action pipeline on the demo
/// session's squats and jumping jacks. A 900 s soak (issue 43) found every summary interval with an
/// event allocating, about once per event; quiet intervals allocated nothing.
@Suite(.serialized) struct LoopEventAllocationTests {
    static let layout = try! LEDLayout(actions: [("jumping_jacks", "GPIO17"), ("lunges", "GPIO27"), ("burpees", "GPIO22"),
                                                 ("squats", "GPIO23"), ("push_ups", "GPIO24")], statusLine: "GPIO25")

    struct Events {
        var actionChanges = 0
        var repetitions = 0
        var repetitionsCreditedLate = 0
    }

    /// The loop's work for one frame after the pose model: the pipeline, then its events, counting
    /// the allocations of the events' part (a debug build's pipeline allocates; a release build's
    /// does not, which `posewatch run` measures as `ALLOCATIONS_PER_FRAME`).
    struct Player: ~Copyable {
        var pipeline: ActionPipeline
        var leds: LEDController
        var driver: LEDDriver<CountingLEDLines>
        var summary: RunSummary
        var events = Events()
        /// Allocations on this thread while handling events and driving the LEDs.
        var eventAllocations: UInt64 = 0
        let logger: Logger
        let count: @convention(c) () -> UInt64

        init(logger: Logger, count: @escaping @convention(c) () -> UInt64) throws {
            let classifier = try ActionClassifier.embedded()
            let phaseNet = try RepetitionPhaseNet.embedded()
            // Every member is set after the throwing calls: Swift 6.0.3's compiler crashes (SIL
            // memory lifetime) on a noncopyable type whose throwing init can throw with some of
            // its members set, or with a noncopyable member's default value.
            self.count = count
            self.logger = logger
            pipeline = ActionPipeline(classifier: classifier, counter: RepetitionCounter(phaseNet: phaseNet),
                                      settings: ApplianceConfiguration().pipelineSettings)
            driver = LEDDriver(lines: CountingLEDLines(), actionCount: LoopEventAllocationTests.layout.actionCount)
            leds = LEDController(actionCount: LoopEventAllocationTests.layout.actionCount, now: MonotonicInstant(nanoseconds: 0))
            summary = RunSummary(actionLabels: LoopEventAllocationTests.layout.actionLabels, now: MonotonicInstant(nanoseconds: 0))
        }

        mutating func play(_ pose: Pose?, frame: Int) throws {
            let seconds = Double(frame) / DemoSession.framesPerSecond
            let now = MonotonicInstant(nanoseconds: Int64(seconds * 1e9))
            let step = pipeline.process(pose, at: seconds)
            let before = count()
            summary.recordFrame(inferenceNanoseconds: 40_000_000)
            if let decision = step.decision {
                let reps = decision.action.map { pipeline.counter.count(of: $0) }
                if LoopEvents.show(decision, reps: reps, leds: &leds, summary: &summary, layout: LoopEventAllocationTests.layout,
                                   logger: logger, at: now) {
                    events.actionChanges += 1
                }
            }
            for number in step.repetitions {
                let repetition = pipeline.counter.event(number: number)
                LoopEvents.counted(repetition, leds: &leds, summary: &summary, layout: LoopEventAllocationTests.layout,
                                   logger: logger, at: now)
                events.repetitions += 1
                if repetition.isCreditedLate { events.repetitionsCreditedLate += 1 }
            }
            try driver.apply(leds.levels(at: now))
            eventAllocations += count() - before
        }
    }

    /// A bound, non-blocking datagram socket standing in for journald's, and a drain for it (a
    /// full queue would make sends fail, and every thrown error allocates under swift-testing).
    final class JournalListener {
        let fd: Int32
        let path: String
        private let scratch = UnsafeMutableRawPointer.allocate(byteCount: 65_536, alignment: 16)
        private(set) var entries = 0

        init(path: String) {
            self.path = path
            fd = boundDatagramSocket(at: path)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        deinit {
            close(fd)
            unlink(path)
            scratch.deallocate()
        }
        func drain() {
            while recv(fd, scratch, 65_536, 0) > 0 { entries += 1 }
        }
    }

    /// Plays the demo session through a fresh pipeline and the event path, once to warm up (lazy
    /// metadata, buffer growth), then again through another fresh pipeline, counting the event
    /// path's allocations.
    func allocationsPlayingTheDemo(to logger: Logger, drain: () -> Void) throws -> (allocations: UInt64, events: Events) {
        let count = try #require(LoopTimingTests.allocationCounter)
        let poses = DemoSession.poses()
        var warmUp = try Player(logger: logger, count: count)
        for (frame, pose) in poses.enumerated() { try warmUp.play(pose, frame: frame); drain() }
        // A fresh pipeline and summary: an action's first repetition or first decision allocating
        // once (a table filled on first use) would happen in the field long after start-up.
        var player = try Player(logger: logger, count: count)
        for (frame, pose) in poses.enumerated() { try player.play(pose, frame: frame); drain() }
        return (player.eventAllocations, player.events)
    }

    func checkEvents(_ events: Events) {
        // The demo: stand, 8 squats, stand, 12 jumping jacks, stand, walk off.
        #expect(events.repetitions >= 16, "the demo's squats and jumping jacks are counted")
        #expect(events.actionChanges >= 4, "starting up → squats → … → jumping jacks → no person")
    }

    @Test(.enabled(if: LoopTimingTests.allocationCounter != nil, "needs the malloc counter: run Tests/Support/run-allocation-tests.sh"))
    func actionChangesAndRepetitionsLoggedToTheJournalAllocateNothing() throws {
        let listener = JournalListener(path: "/tmp/posewatch-event-allocation-journal-\(getpid()).sock")
        let logger = Logger(destination: .journal(try JournalSocket(path: listener.path)))
        let (allocations, events) = try allocationsPlayingTheDemo(to: logger, drain: listener.drain)
        print("demo session through the event path to the journal: \(events.actionChanges) action changes, \(events.repetitions) repetitions (\(events.repetitionsCreditedLate) credited late), \(allocations) allocations")
        checkEvents(events)
        #expect(logger.entriesWrittenToStandardError == 0 && logger.droppedEntries == 0)
        #expect(listener.entries >= 2 * (events.actionChanges + events.repetitions), "every event reached the journal, in both passes")
        #expect(allocations == 0, "\(allocations) allocations for \(events.actionChanges + events.repetitions) events")
    }

    @Test(.enabled(if: LoopTimingTests.allocationCounter != nil, "needs the malloc counter: run Tests/Support/run-allocation-tests.sh"))
    func actionChangesAndRepetitionsWrittenAsStandardErrorLinesAllocateNothing() throws {
        // `run` without a journal (and `run --input` in a terminal) writes the same entries as lines.
        let devNull = open("/dev/null", O_WRONLY)
        defer { close(devNull) }
        let logger = Logger(destination: .standardError(fileDescriptor: devNull))
        let (allocations, events) = try allocationsPlayingTheDemo(to: logger, drain: {})
        checkEvents(events)
        #expect(allocations == 0, "\(allocations) allocations for \(events.actionChanges + events.repetitions) events")
    }

    /// One episode of each scene note, at 15 fps: the watch moves, a second person comes and goes
    /// (said after 10 s with one person), the picture goes dark for 6 s with nobody found, then
    /// light again. Five entries.
    func playSceneEpisodes(_ notes: inout SceneNotes, from start: inout Int64, logger: Logger, drain: () -> Void) {
        func frame(people: Int, moved: Bool = false, brightness: Float, person: Bool) {
            start += 66_666_667
            notes.note(peopleInView: people, watchMoved: moved, brightness: brightness, personFound: person,
                       at: MonotonicInstant(nanoseconds: start), logger: logger)
            drain()
        }
        for _ in 0..<30 { frame(people: 1, brightness: 120, person: true) }
        frame(people: 2, moved: true, brightness: 120, person: true)
        for _ in 0..<30 { frame(people: 2, brightness: 120, person: true) }
        for _ in 0..<165 { frame(people: 1, brightness: 120, person: true) }
        for _ in 0..<90 { frame(people: 0, brightness: 20, person: false) }
        for _ in 0..<5 { frame(people: 1, brightness: 120, person: true) }
    }

    @Test(.enabled(if: LoopTimingTests.allocationCounter != nil, "needs the malloc counter: run Tests/Support/run-allocation-tests.sh"))
    func peopleComingAndGoingAndATooDarkPictureAreNotedWithoutAllocating() throws {
        let count = try #require(LoopTimingTests.allocationCounter)
        let listener = JournalListener(path: "/tmp/posewatch-scene-allocation-journal-\(getpid()).sock")
        let logger = Logger(destination: .journal(try JournalSocket(path: listener.path)))
        var time: Int64 = 1_000_000_000
        var warmUp = SceneNotes()
        playSceneEpisodes(&warmUp, from: &time, logger: logger, drain: listener.drain)
        let entriesBefore = listener.entries
        var notes = SceneNotes()
        let before = count()
        for _ in 0..<3 { playSceneEpisodes(&notes, from: &time, logger: logger, drain: listener.drain) }
        let allocations = count() - before
        #expect(entriesBefore == 5, "watch moved, 2 people in view, only the watched person, too dark, bright again")
        #expect(listener.entries - entriesBefore == 15)
        #expect(allocations == 0, "\(allocations) allocations for \(listener.entries - entriesBefore) scene notes")
    }
}
