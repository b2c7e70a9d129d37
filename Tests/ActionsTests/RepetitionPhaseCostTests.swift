import Foundation
import PoseEstimation
import Testing
@testable import Actions

/// The phase net path's cost per frame: features, net and counter together, on the parity
/// fixture's poses (a person moving, leaving, coming back).
@Suite struct RepetitionPhaseCostTests {
    @Test func perFramePhaseNetCostIsReported() throws {
        let fixture = try RepetitionPhaseFixture.load()
        let poses = fixture.poses.map(RepetitionPhaseParityTests.framePose)
        var features = RepetitionPhaseFeatures()
        var net = try RepetitionPhaseParityTests.embeddedNet()
        var counter = RepetitionPhaseCounter()
        var events = 0
        let clock = ContinuousClock()
        var featureTime = Duration.zero, netTime = Duration.zero, counterTime = Duration.zero
        for _ in 0..<3 {
            for index in poses.indices {
                let start = clock.now
                let row = features.update(with: poses[index])
                let featured = clock.now
                let output = try net.process(row)
                let netted = clock.now
                events += counter.process(output).count
                counterTime += clock.now - netted
                netTime += netted - featured
                featureTime += featured - start
            }
        }
        func microseconds(_ duration: Duration) -> Double {
            (Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12) / Double(3 * poses.count)
        }
        print(String(format: "RepetitionPhase per frame over %d frames: features %.2f µs, net %.2f µs, counter %.2f µs (%d events)",
                     3 * poses.count, microseconds(featureTime), microseconds(netTime), microseconds(counterTime), events))
        #expect(events > 0)
        // A report, not a timed assertion (a debug build or an emulated arm64 run is many times slower).
    }

    @Test(.enabled(if: AllocationCounter.isAvailable, "needs the malloc counter: run Tests/Support/run-allocation-tests.sh"))
    func phaseNetFramesAllocateNothing() throws {
        let fixture = try RepetitionPhaseFixture.load()
        let poses = fixture.poses.map(RepetitionPhaseParityTests.framePose)
        var features = RepetitionPhaseFeatures()
        var net = try RepetitionPhaseParityTests.embeddedNet()
        var counter = RepetitionPhaseCounter()
        var events = 0, credited = 0
        // Warm up on the first frames with the same loop (lazy statics, and the runtime's generic
        // metadata for the event buffer's iterator is made on its first use), then measure every
        // other frame of the fixture: usable and unusable frames, the person-left gap, counting.
        // p(repeating) is gated as in the parity test's gated outputs, so the counter restarts and
        // replays its credit frames many times whatever the net.
        var before: UInt64 = 0
        for index in 0..<poses.count {
            if index == 45 { before = AllocationCounter.function!() }
            var output = try net.process(features.update(with: poses[index]))
            if RepetitionPhaseFixture.gatedOff(index) { output.repeating = 0 }
            for event in counter.process(output) {
                events += 1
                if event.frame < event.creditedFrame { credited += 1 }
            }
        }
        let allocations = AllocationCounter.function!() - before
        print("RepetitionPhase features + net + counter: \(allocations) allocations over \(poses.count - 45) frames (\(events) events, \(credited) credited late)")
        #expect(allocations == 0)
        #expect(events > 0 && credited > 0)
    }
}
