import LinuxSystem
import PoseEstimation
import Testing
@testable import Actions

/// The phase net's path alone (the embedded nets on the parity fixture's generated sequence),
/// feeding a ledger: where its repetitions go under each kind of label, and its frame clock.
@Suite struct RepetitionPhaseNetPathTests {
    private static func path() throws -> RepetitionPhaseNetPath {
        let frameRate = try #require(FrameRate(framesPerSecond: 15))
        do throws(RepetitionPhaseModelError) {
            return RepetitionPhaseNetPath(net: try .embedded(), frameRate: frameRate)
        } catch {
            Issue.record("\(error)")
            throw error
        }
    }

    /// The generated sequence through a new path under one label; the ledger it fed.
    private static func run(label: ActionLabel?) throws -> RepetitionLedger {
        let fixture = try RepetitionPhaseFixture.load()
        let sequence = try #require(fixture.sequences.first { $0.name == "generated_movenet" })
        let path = try Self.path()
        let ledger = RepetitionLedger(configuration: RepetitionCounterConfiguration(), netLabels: [.squats, .jumpingJacks])
        for (offset, frame) in sequence.range.enumerated() {
            let time = Double(offset) / fixture.framesPerSecond
            ledger.beginFrame(at: time)
            path.process(timestamp: time, pose: RepetitionPhaseParityTests.framePose(fixture.poses[frame]), action: label, ledger: ledger)
        }
        #expect(path.frame == sequence.range.count - 1 && path.failures == 0)
        return ledger
    }

    @Test func itsRepetitionsCountUnderItsLabelsAreKeptUnnamedAndLeftToTheRuleOtherwise() throws {
        let counted = try Self.run(label: .squats)
        #expect(counted.sessionCount > 5)
        let times = (1...counted.sessionCount).map { counted.event(number: $0).time }

        let kept = try Self.run(label: nil)
        #expect(kept.sessionCount == 0)
        kept.beginFrame(at: 1000)
        _ = kept.credit(to: .jumpingJacks)
        let keptTimes = (1...max(1, kept.sessionCount)).map { kept.event(number: $0).time }
        #expect(kept.sessionCount == min(counted.sessionCount, RepetitionCounter.maximumPendingRepetitions))
        #expect(keptTimes == Array(times.suffix(keptTimes.count)), "each with the time its phase passed the mark")

        let ruled = try Self.run(label: .lunges)
        ruled.beginFrame(at: 1000)
        _ = ruled.credit(to: .squats)
        #expect(ruled.sessionCount == 0, "another exercise's label: neither counted nor kept")
    }

    @Test func framesSkippedInTimeAdvanceItsClockAtMostAWindow() throws {
        let path = try Self.path()
        let ledger = RepetitionLedger(configuration: RepetitionCounterConfiguration(), netLabels: [.squats])
        path.process(timestamp: 0, pose: nil, action: nil, ledger: ledger)
        #expect(path.frame == 0)
        path.process(timestamp: 4 / 15.0, pose: nil, action: nil, ledger: ledger)
        #expect(path.frame == 4, "three skipped frames and this one")
        path.process(timestamp: 100, pose: nil, action: nil, ledger: ledger)
        #expect(path.frame == 5 + RepetitionPhaseNet.window)
        path.reset()
        path.process(timestamp: 200, pose: nil, action: nil, ledger: ledger)
        #expect(path.frame == 0, "after a reset there is no previous frame to fill from")
    }
}
