import Foundation
import PoseEstimation
import Testing
import TestSupport
@testable import Actions

/// The motion rule alone, feeding a ledger: its features, its sides on a synthetic movement, and
/// what it gives the set bookkeeping.
@Suite struct RepetitionMotionRuleTests {
    private let configuration = RepetitionCounterConfiguration()
    private let fps = 15.0

    /// `repetitions` sine squats at `rate` per second between 2 s and 3 s of standing, every frame
    /// labelled `label`; returns the ledger and the time each repetition ended.
    private func run(repetitions: Int, rate: Double = 0.5, amplitude: Double = 1,
                     label: ActionLabel?) -> (ledger: RepetitionLedger, rule: RepetitionMotionRule, ends: [Double]) {
        let ledger = RepetitionLedger(configuration: configuration, netLabels: [])
        let rule = RepetitionMotionRule(configuration: configuration, ledger: ledger)
        let duration = Double(repetitions) / rate
        var near = Double.infinity, far = -Double.infinity
        for index in 0..<Int((2 + duration + 3) * fps) {
            let time = Double(index) / fps
            let phase = max(0, time - 2) * rate
            let depth = phase >= Double(repetitions) ? 0 : amplitude * (1 - cos(2 * Double.pi * phase)) / 2
            ledger.beginFrame(at: time)
            rule.process(timestamp: time, pose: SyntheticBody.pose(.squat, depth: depth), action: label)
            near = min(near, rule.lastSignal)
            far = max(far, rule.lastSignal)
        }
        if amplitude >= 0.5 {
            // The signal crossed both thresholds: below the near one, above the far one.
            #expect(near < rule.lastNearThreshold && far > rule.lastFarThreshold && rule.lastNearThreshold < rule.lastFarThreshold)
        }
        return (ledger, rule, (1...repetitions).map { 2 + Double($0) / rate })
    }

    @Test func eachMoveToTheFarSideAndBackIsOneRepetitionCountedAtItsEnd() {
        let (ledger, _, ends) = run(repetitions: 6, label: .squats)
        #expect(ledger.count(of: .squats) == 6)
        for (number, end) in zip(1..., ends) where number <= ledger.sessionCount {
            let time = ledger.event(number: number).time
            #expect(time > end - 1 && time <= end + 1, "repetition \(number) at \(time), ended at \(end)")
        }
    }

    @Test func aMovementSmallerThanTheMinimumRangeCountsNothing() {
        let (ledger, _, _) = run(repetitions: 6, amplitude: 0.01, label: .squats)
        #expect(ledger.sessionCount == 0 && ledger.pendingCount == 0)
    }

    @Test func withNoExerciseNamedItsRepetitionsAreKeptForTheSet() {
        let (ledger, rule, _) = run(repetitions: 4, label: nil)
        #expect(ledger.sessionCount == 0 && ledger.pendingCount == 4)
        ledger.beginFrame(at: 100)
        rule.adopt(ledger.credit(to: .squats), of: .squats)
        #expect(ledger.count(of: .squats) == 4, "they passed the squat cues: legs folded, torso upright")
    }

    @Test func thePersonLeavingDropsWhatWasKept() {
        let (ledger, rule, _) = run(repetitions: 3, label: nil)
        #expect(ledger.pendingCount == 3)
        rule.resetMotion()
        #expect(ledger.pendingCount == 0)
    }

    @Test func aSquatWhoseLegsDoNotFoldIsNotCounted() {
        // Jumping jacks move the arms and spread the legs without lowering the hips over the feet.
        // Jittered as a detector's keypoints are: a perfectly still, perfectly symmetric warm-up
        // gives the first axis a feature that never varies, and power iteration cannot leave it.
        var generator = SplitMix64(seed: 1)
        let ledger = RepetitionLedger(configuration: configuration, netLabels: [])
        let rule = RepetitionMotionRule(configuration: configuration, ledger: ledger)
        let jacks = RepetitionLedger(configuration: configuration, netLabels: [])
        let jackRule = RepetitionMotionRule(configuration: configuration, ledger: jacks)
        for index in 0..<Int(13 * fps) {
            let time = Double(index) / fps
            let phase = max(0, time - 2) * 0.5
            let depth = phase >= 4 ? 0 : (1 - cos(2 * Double.pi * phase)) / 2
            let pose = SyntheticBody.pose(.jumpingJack, depth: depth).jittered(by: 1.5, using: &generator)
            rule.process(timestamp: time, pose: pose, action: .squats)
            jackRule.process(timestamp: time, pose: pose, action: .jumpingJacks)
        }
        #expect(jacks.count(of: .jumpingJacks) == 4)
        #expect(ledger.count(of: .squats) == 0)
    }

    // MARK: the features

    private func features(of pose: Pose) -> [Float] {
        let features = RepetitionMotionFeatures(configuration: configuration)
        let row = UnsafeMutablePointer<Float>.allocate(capacity: RepetitionMotionFeatures.count)
        defer { row.deallocate() }
        _ = features.hold(pose, writingInto: row)
        return Array(UnsafeBufferPointer(start: row, count: RepetitionMotionFeatures.count))
    }

    @Test func theFeaturesDoNotDependOnPositionSizeOrWhichSideIsLeft() {
        let pose = SyntheticBody.pose(.jumpingJack, depth: 0.6)
        let moved = SyntheticBody.pose(.jumpingJack, depth: 0.6, originX: 100, originY: 300, height: 150)
        var mirrored = Pose()
        for joint in 0..<Joint.count {
            // COCO: each left joint after the nose is followed by its right one.
            let other = joint == 0 ? 0 : (joint % 2 == 1 ? joint + 1 : joint - 1)
            let point = pose[other]
            mirrored[joint] = Keypoint(x: 640 - point.x, y: point.y, score: point.score)
        }
        let reference = features(of: pose)
        #expect(reference.contains { abs($0) > 0.05 }, "the pose gives features")
        for (name, other) in [("moved and smaller", features(of: moved)), ("mirrored", features(of: mirrored))] {
            for (index, (a, b)) in zip(reference, other).enumerated() where index % 2 == 1 || name != "mirrored" {
                #expect(abs(a - b) < 1e-4, "\(name): feature \(index) \(a) vs \(b)")
            }
        }
        // Mirrored, the x features change sign (the box is flipped) but keep their size.
        for (a, b) in zip(reference, features(of: mirrored)) { #expect(abs(abs(a) - abs(b)) < 1e-4) }
    }

    @Test func aZoomConfirmedByTheNextPoseIsACutAndAOneFrameGlitchIsNot() {
        let near = SyntheticBody.pose(.squat, depth: 0)
        let close = SyntheticBody.pose(.squat, depth: 0, height: 900)
        func changes(_ poses: [Pose]) -> [Bool] {
            let features = RepetitionMotionFeatures(configuration: configuration)
            return poses.map { features.scaleChanged($0, confident: features.confidentJoints(of: $0) ?? 0) }
        }
        #expect(changes([near, near, close, near]) == [false, false, false, false])
        #expect(changes([near, near, close, close]) == [false, false, false, true])
    }

    @Test func aPoseWithFewConfidentJointsIsNotUsable() {
        let features = RepetitionMotionFeatures(configuration: configuration)
        var pose = SyntheticBody.pose(.squat, depth: 0)
        #expect(features.confidentJoints(of: pose) != nil)
        for joint in 0..<(Joint.count - configuration.minimumVisibleJoints + 1) {
            pose[joint] = Keypoint(x: pose[joint].x, y: pose[joint].y, score: 0.1)
        }
        #expect(features.confidentJoints(of: pose) == nil)
    }
}
