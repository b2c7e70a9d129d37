import Foundation
import PoseEstimation
import Testing
@testable import Actions

/// The whole counter with the phase net (`RepetitionCounter(configuration:phaseNet:)`, the
/// embedded ensemble) against counter.py with its default Config on the fixture's counter runs
/// (make_swift_fixture.py): fixed labels as `replay --action`, for a net label, another and a rule
/// label, and label timelines with unnamed stretches (null, `other`, a low_confidence flicker), so
/// the net's repetitions kept for the set and credited when an exercise is named are compared.
@Suite struct RepetitionCounterPhaseParityTests {
    typealias Event = (time: Double, creditedAt: Double, label: ActionLabel, count: Int)

    static func counterWithNet() throws -> RepetitionCounter {
        do throws(RepetitionPhaseModelError) {
            return RepetitionCounter(phaseNet: try .embedded())
        } catch {
            Issue.record("\(error)")
            throw error
        }
    }

    /// Every event of one run, each frame at `index / fps` as count_sequence feeds it.
    static func run(_ counter: RepetitionCounter, fixture: RepetitionPhaseFixture, sequence: RepetitionPhaseFixture.Sequence,
                    labels: [ActionLabel?], skipping skipped: Set<Int> = []) -> [Event] {
        var events: [Event] = []
        for (offset, frame) in sequence.range.enumerated() where !skipped.contains(offset) {
            let pose = RepetitionPhaseParityTests.framePose(fixture.poses[frame])
            for number in counter.process(timestamp: Double(offset) / fixture.framesPerSecond, pose: pose, action: labels[offset]) {
                let event = counter.event(number: number)
                events.append((event.time, event.creditedAt, event.label, event.count))
            }
        }
        return events
    }

    @Test func theCounterWithTheNetGivesCounterPyEvents() throws {
        let fixture = try RepetitionPhaseFixture.load()
        try RepetitionPhaseParityTests.requireFixtureOfTheEmbeddedModel(fixture)
        #expect(RepetitionCounterConfiguration().phaseLabels == fixture.phaseLabels)
        var total = 0, late = 0, labels = Set<ActionLabel>()
        for run in fixture.counterRuns {
            let sequence = try #require(fixture.sequences.first { $0.name == run.sequence })
            let events = Self.run(try Self.counterWithNet(), fixture: fixture, sequence: sequence, labels: run.labels)
            let describe = { (events: [Event]) in events.map { "\($0.label.rawValue) \($0.count) at \($0.time) counted \($0.creditedAt)" } }
            #expect(events.count == run.events.count, "\(run.sequence) with \(run.describedLabel): \(describe(events)) vs \(describe(run.events))")
            for (swift, python) in zip(events, run.events) {
                #expect(swift.label == python.label && swift.count == python.count
                        && abs(swift.time - python.time) <= 1e-6 && abs(swift.creditedAt - python.creditedAt) <= 1e-6,
                        "\(run.sequence) with \(run.describedLabel): \(describe([swift])) vs \(describe([python]))")
            }
            total += events.count
            late += events.filter { $0.creditedAt - $0.time > 0.5 }.count
            labels.formUnion(events.map(\.label))
        }
        print("RepetitionCounter with the phase net: \(total) events in \(fixture.counterRuns.count) runs as counter.py's (\(late) credited over 0.5 s late), labels \(labels.map(\.rawValue).sorted())")
        #expect(total > 30 && late > 0, "the runs count, and credit kept repetitions")
        #expect(labels.isSuperset(of: [.squats, .jumpingJacks, .lunges]), "net labels and a rule label are compared")
    }

    /// Frames the capture skipped (live capture drops late frames) reach the net as frames without
    /// a pose, so its window keeps its length: skipping frames gives the net's events of a run
    /// where those frames came without a pose (credited on the next frame that came, instead).
    @Test func framesSkippedInTimeReachTheNetAsFramesWithoutAPose() throws {
        let fixture = try RepetitionPhaseFixture.load()
        let sequence = try #require(fixture.sequences.first { $0.name == "generated_movenet" })
        let labels = [ActionLabel?](repeating: .squats, count: sequence.range.count)  // every event the net's
        let skipped = Set(Array(100..<106) + Array(300..<330))
        let skipping = try Self.counterWithNet()
        let skippedEvents = Self.run(skipping, fixture: fixture, sequence: sequence, labels: labels, skipping: skipped)
        #expect(skipping.phaseNetFrames == sequence.range.count, "every frame in time reached the net")
        var blanked = fixture
        for offset in skipped { blanked.poses[sequence.range.lowerBound + offset] = Pose() }
        let blanks = try Self.counterWithNet()
        let blankEvents = Self.run(blanks, fixture: blanked, sequence: sequence, labels: labels)
        #expect(skippedEvents.count == blankEvents.count && skippedEvents.count > 5)
        for (skippedEvent, blankEvent) in zip(skippedEvents, blankEvents) {
            #expect(abs(skippedEvent.time - blankEvent.time) <= 1e-9 && skippedEvent.count == blankEvent.count)
        }
        let regular = try Self.counterWithNet()
        _ = Self.run(regular, fixture: fixture, sequence: sequence, labels: labels)
        #expect(regular.phaseNetFrames == sequence.range.count, "a regular rate feeds one net frame per call")
        // A gap longer than the net's window: the window is refilled once, not frame by frame.
        let gap = try Self.counterWithNet()
        _ = gap.process(timestamp: 0, pose: nil, action: nil)
        _ = gap.process(timestamp: 10, pose: nil, action: nil)
        #expect(gap.phaseNetFrames == 2 + RepetitionPhaseNet.window)
        print("skipped frames: \(skipped.count) skipped, \(skippedEvents.count) net events as with those frames blank")
    }

    /// Without a net the counter is the rules-only one: the net's labels are counted by the rule.
    @Test func withoutANetTheRuleCountsTheNetsLabels() throws {
        let fixture = try RepetitionPhaseFixture.load()
        let sequence = try #require(fixture.sequences.first { $0.name == "generated_movenet" })
        let labels = [ActionLabel?](repeating: .squats, count: sequence.range.count)
        let rules = RepetitionCounter()
        let events = Self.run(rules, fixture: fixture, sequence: sequence, labels: labels)
        #expect(!events.isEmpty && rules.phaseNetFrames == 0)
    }

    /// A new session starts the net afresh: the same stream then counts as with a new counter.
    @Test func aNewSessionCountsAsANewCounter() throws {
        let fixture = try RepetitionPhaseFixture.load()
        let sequence = try #require(fixture.sequences.first { $0.name == "generated_movenet" })
        let labels = [ActionLabel?](repeating: .squats, count: sequence.range.count)
        let counter = try Self.counterWithNet()
        let first = Self.run(counter, fixture: fixture, sequence: sequence, labels: labels)
        counter.resetSession()
        let second = Self.run(counter, fixture: fixture, sequence: sequence, labels: labels)
        #expect(first.count == second.count && !first.isEmpty)
        for (a, b) in zip(first, second) { #expect(a.time == b.time && a.creditedAt == b.creditedAt && a.count == b.count) }
    }
}
