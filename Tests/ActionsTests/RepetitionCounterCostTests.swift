import Foundation
import PoseEstimation
import Testing
@testable import Actions
#if canImport(Glibc)
import Glibc
import TestSupport
#endif

/// The process's allocation counter, when a malloc-counting library is preloaded
/// (`Tests/Support/run-allocation-tests.sh`); the same lookup as the other modules' allocation tests.
enum AllocationCounter {
    typealias Count = @convention(c) () -> UInt64
    /// The calling thread's allocations when the library provides them (the test runner allocates on
    /// other threads meanwhile), else the process-wide count.
    static let function: Count? = {
        guard let handle = dlopen(nil, RTLD_NOW) else { return nil }
        guard let symbol = dlsym(handle, "pw_thread_allocation_count") ?? dlsym(handle, "pw_allocation_count") else { return nil }
        return unsafeBitCast(symbol, to: Count.self)
    }()
    static var isAvailable: Bool { function != nil }
}

/// A minute of synthetic squats at 15 fps with a few missing frames, built before any measurement.
private func frames() -> [(Double, Pose?)] {
    var generator = SplitMix64(seed: 3)
    return (0..<900).map { index in
        let time = Double(index) / 15
        if index % 97 == 50 { return (time, nil) }
        let depth = (1 - cos(2 * Double.pi * 0.7 * time)) / 2
        return (time, SyntheticBody.pose(.squat, depth: depth).jittered(by: 1.5, using: &generator))
    }
}

/// The rules-only counter, or the one posewatch runs: with the embedded phase net.
private func makeCounter(withNet: Bool) throws -> RepetitionCounter {
    guard withNet else { return RepetitionCounter() }
    do throws(RepetitionPhaseModelError) {
        return RepetitionCounter(phaseNet: try .embedded())
    } catch {
        Issue.record("\(error)")
        throw error
    }
}

@Suite struct RepetitionCounterCostTests {
    @Test(arguments: [false, true])
    func perFrameCostIsReported(withNet: Bool) throws {
        let input = frames()
        let counter = try makeCounter(withNet: withNet)
        var events = 0
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            for round in 0..<5 {
                for (time, pose) in input {
                    events += counter.process(timestamp: Double(round) * 60 + time, pose: pose, action: .squats).count
                }
            }
        }
        let perFrame = Double(elapsed.components.attoseconds) / 1e12 / Double(5 * input.count)
            + Double(elapsed.components.seconds) * 1e6 / Double(5 * input.count)
        print(String(format: "RepetitionCounter%@: %.1f µs per frame over %d frames (%d events)",
                     withNet ? " with the phase net" : "", perFrame, 5 * input.count, events))
        #expect(events > 0)
        // A report, not a timed assertion: a debug build under emulation (the arm64 check) takes
        // over 1 ms per frame. The budget (200 µs per frame in a release build; the issue's 50 µs
        // for the counter) is checked against the release figure in docs/performance.md
        // and the README's performance table.
    }

    @Test(.enabled(if: AllocationCounter.isAvailable, "needs the malloc counter: run Tests/Support/run-allocation-tests.sh"),
          arguments: [false, true])
    func processingFramesAllocatesNothingAfterStartUp(withNet: Bool) throws {
        let input = frames()
        // A camera cut to a 3× close-up (the zoom check resets the motion) whose ankles are only
        // found on its fourth frame (a joint first seen during the warm-up restarts it).
        let closeUp: [Pose?] = (240..<330).map { index in
            guard var pose = input[index].1 else { return nil }
            for joint in 0..<Joint.count {
                var point = pose[joint]
                point.x = 320 + 3 * (point.x - 320)
                point.y = 300 + 3 * (point.y - 300)
                if index < 243, joint == Joint.leftAnkle.rawValue || joint == Joint.rightAnkle.rawValue { point.score = 0.05 }
                pose[joint] = point
            }
            return pose
        }
        let counter = try makeCounter(withNet: withNet)
        // Warm up once (lazy statics, first axis), then count over a full minute of frames.
        for (time, pose) in input.prefix(60) { _ = counter.process(timestamp: time, pose: pose, action: .squats) }
        var events = 0
        // Indexed loops: a debug build's generic iterator over (Double, Pose?) elements allocates
        // a temporary per element, which would be counted against the counter.
        let before = AllocationCounter.function!()
        for index in 60..<input.count {
            // 3.3 s without anybody (frames 400..<450) resets the motion, so the re-start and the
            // warm-up credit are measured too.
            let pose = (400..<450).contains(index) ? nil : input[index].1
            events += counter.process(timestamp: input[index].0, pose: pose, action: .squats).count
        }
        let label = events > 0 ? ActionLabel.lunges : .squats  // label changes take the same path
        for index in 0..<120 { _ = counter.process(timestamp: 60 + input[index].0, pose: input[index].1, action: label) }
        // No action decided for a while (repetitions are held), then the action again (credited).
        for index in 120..<240 {
            _ = counter.process(timestamp: 60 + input[index].0, pose: input[index].1, action: index < 200 ? nil : label)
        }
        for index in 0..<closeUp.count {
            _ = counter.process(timestamp: 60 + input[240 + index].0, pose: closeUp[index], action: label)
        }
        // Frames skipped in time (the net is fed frames without a pose for them), then squats
        // counted by the net again.
        for step in 0..<90 {
            let index = 330 + 3 * step  // not stride(): its first use in a debug build allocates type metadata
            events += counter.process(timestamp: 60 + input[index].0, pose: input[index].1, action: .squats).count
        }
        let allocations = AllocationCounter.function!() - before
        print("RepetitionCounter\(withNet ? " with the phase net" : ""): \(allocations) allocations over \(input.count + 180 + closeUp.count + 90) frames (\(events) events)")
        #expect(allocations == 0)
        #expect(events > 0)
    }
}
