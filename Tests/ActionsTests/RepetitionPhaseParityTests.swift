import Foundation
import InferenceCore
import PoseEstimation
import Testing
@testable import Actions

/// The Swift phase net path against its Python reference on the fixture's four sequences
/// (RepetitionPhaseFixture): features, the net's outputs, the counter's events.
@Suite struct RepetitionPhaseParityTests {
    /// A frame the fixture has no person on (every score 0) goes in as "no pose", as the frame loop
    /// hands it over; the reference reads the same frame as one without a usable pose.
    static func framePose(_ pose: Pose) -> Pose? {
        (0..<Joint.count).allSatisfy { pose[$0].score == 0 } ? nil : pose
    }

    static func embeddedNet() throws -> RepetitionPhaseNet {
        do throws(RepetitionPhaseModelError) {
            let net = try RepetitionPhaseNet.embedded()
            return net
        } catch {
            Issue.record("\(error)")
            throw error
        }
    }

    /// Outputs of the embedded models only mean something against a fixture made with them.
    static func requireFixtureOfTheEmbeddedModel(_ fixture: RepetitionPhaseFixture) throws {
        let embedded = (0..<RepetitionPhaseNet.embeddedModelCount).map { RepetitionPhaseNet.embeddedModelExpectedSHA256($0) }
        try #require(fixture.modelSHA256s == embedded,
                     "the fixture was made with other models than the embedded ones: run training/counter/learned/make_swift_fixture.py (install_model.py runs it)")
    }

    @Test func featuresEqualTheReference() throws {
        let fixture = try RepetitionPhaseFixture.load()
        var worst: Float = 0, flags = 0, unusable = 0, noPose = 0
        for sequence in fixture.sequences {
            var features = RepetitionPhaseFeatures()
            for frame in sequence.range {
                let pose = Self.framePose(fixture.poses[frame])
                if pose == nil { noPose += 1 }
                let row = features.update(with: pose)
                let expected = fixture.row(frame)
                for (index, value) in expected.enumerated() { worst = max(worst, abs(row[index] - value)) }
                if row[RepetitionPhaseFeatures.featureCount] != expected.last! { flags += 1 }
                if expected.last! == 0 { unusable += 1 }
            }
        }
        print("RepetitionPhaseFeatures: \(fixture.poses.count) frames (\(unusable) unusable, \(noPose) without a pose), largest difference \(worst), \(flags) flags differ")
        #expect(worst <= 1e-5)
        #expect(flags == 0)
        #expect(unusable > 100 && noPose > 30, "the fixture exercises unusable frames and the person-left gap")
    }

    @Test func theNetOnTheReferenceFeaturesGivesTheReferenceOutputsExactly() throws {
        let fixture = try RepetitionPhaseFixture.load()
        try Self.requireFixtureOfTheEmbeddedModel(fixture)
        var differing = 0
        for sequence in fixture.sequences {
            var net = try Self.embeddedNet()
            for frame in sequence.range {
                let output = try fixture.row(frame).withUnsafeBufferPointer { try net.process($0) }
                if output != fixture.outputs[frame] { differing += 1 }
            }
        }
        print("RepetitionPhaseNet on the reference features: \(differing) of \(fixture.outputs.count) outputs differ from LiteRT's reference kernels")
        #expect(differing == 0)
    }

    @Test func posesToEventsEndToEndGivesTheReferenceEvents() throws {
        let fixture = try RepetitionPhaseFixture.load()
        try Self.requireFixtureOfTheEmbeddedModel(fixture)
        var differing = 0, worst: Float = 0, eventsDiffer = 0
        for sequence in fixture.sequences {
            var features = RepetitionPhaseFeatures()
            var net = try Self.embeddedNet()
            var counter = RepetitionPhaseCounter(frameRate: .init(framesPerSecond: fixture.framesPerSecond)!)
            var events: [Int] = []
            for frame in sequence.range {
                let output = try net.process(features.update(with: Self.framePose(fixture.poses[frame])))
                let expected = fixture.outputs[frame]
                if output != expected {
                    differing += 1
                    worst = max(worst, abs(output.cos - expected.cos), abs(output.sin - expected.sin), abs(output.repeating - expected.repeating))
                }
                events += counter.process(output).map(\.frame)
            }
            #expect(events == sequence.events, "\(sequence.name)")
            if events != sequence.events { eventsDiffer += 1 }
        }
        print("poses → events: \(differing) of \(fixture.outputs.count) net outputs differ from the reference's (largest difference \(worst)); events differ in \(eventsDiffer) of \(fixture.sequences.count) sequences")
    }

    @Test func theCounterOnTheReferenceOutputsGivesTheReferenceEvents() throws {
        let fixture = try RepetitionPhaseFixture.load()
        #expect(fixture.atPhase == RepetitionPhaseCounter.Parameters().atPhase)
        var total = 0, credited = 0
        for sequence in fixture.sequences {
            var counter = RepetitionPhaseCounter(frameRate: .init(framesPerSecond: fixture.framesPerSecond)!)
            var events: [RepetitionPhaseEvent] = []
            for frame in sequence.range {
                let counted = counter.process(fixture.outputs[frame])
                for event in counted {
                    #expect(event.creditedFrame == frame - sequence.range.lowerBound)
                    #expect(event.frame <= event.creditedFrame && event.creditedFrame - event.frame <= counter.creditFrames)
                }
                events += counted
            }
            #expect(events.map(\.frame) == sequence.events, "\(sequence.name)")
            total += events.count
            credited += events.filter { $0.frame < $0.creditedFrame }.count
        }
        print("RepetitionPhaseCounter: \(total) events as count.py's, \(credited) of them credited late")
        // (credit replays are rare on these outputs with some nets: the gated test below makes many)
        #expect(total > 20, "the fixture exercises counting")
    }

    /// The same outputs with p(repeating) forced to 0 on a fixed schedule (make_swift_fixture.py's
    /// `gated`): many more turn-ons, after gaps longer and shorter than `gapFrames`, so the
    /// hysteresis, the restart and the credit replay are compared with count.py many times.
    @Test func theCounterOnGatedReferenceOutputsGivesTheReferenceEvents() throws {
        let fixture = try RepetitionPhaseFixture.load()
        var total = 0, credited = 0
        for sequence in fixture.sequences {
            var counter = RepetitionPhaseCounter(frameRate: .init(framesPerSecond: fixture.framesPerSecond)!)
            var events: [RepetitionPhaseEvent] = []
            for frame in sequence.range {
                var output = fixture.outputs[frame]
                if RepetitionPhaseFixture.gatedOff(frame - sequence.range.lowerBound) { output.repeating = 0 }
                events += counter.process(output)
            }
            #expect(events.map(\.frame) == sequence.gatedEvents, "\(sequence.name)")
            total += events.count
            credited += events.filter { $0.frame < $0.creditedFrame }.count
        }
        print("RepetitionPhaseCounter on gated outputs: \(total) events as count.py's, \(credited) of them credited late")
        #expect(credited >= 5, "the gated outputs exercise the credit replay")
    }
}
