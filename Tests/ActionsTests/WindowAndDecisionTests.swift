import Testing
import PoseEstimation
@testable import Actions

private func pose(_ marker: Float) -> Pose {
    Pose(keypoints: (0..<17).map { _ in Keypoint(x: marker, y: marker, score: 0.9) })
}

@Suite struct PoseWindowTests {
    func markers(_ window: PoseWindow) -> [Float?] {
        var result: [Float?] = []
        window.forEachSlot { pose, present in result.append(present ? pose[0].x : nil) }
        return result
    }

    @Test func posesFillSlotsInTimeOrderAndTheWindowFillsUp() {
        var window = PoseWindow(length: 4, framesPerSecond: 10)!
        for frame in 0..<3 { window.add(pose(Float(frame)), at: Double(frame) / 10) }
        #expect(!window.isFull)
        window.add(pose(3), at: 0.3)
        #expect(window.isFull)
        #expect(markers(window) == [0, 1, 2, 3])
        window.add(pose(4), at: 0.4)
        #expect(markers(window) == [1, 2, 3, 4])
    }

    @Test func droppedFramesLeaveEmptySlotsAtTheirTimes() {
        var window = PoseWindow(length: 5, framesPerSecond: 10)!
        window.add(pose(0), at: 0)
        window.add(pose(1), at: 0.1)
        #expect(window.add(pose(4), at: 0.4) == 3)  // frames at 0.2 and 0.3 never came
        #expect(markers(window) == [0, 1, nil, nil, 4])
        #expect(window.presentCount == 3)
    }

    @Test func nobodyInAFrameIsAnEmptySlot() {
        var window = PoseWindow(length: 3, framesPerSecond: 10)!
        window.add(pose(0), at: 0)
        window.add(nil, at: 0.1)
        window.add(pose(2), at: 0.2)
        #expect(markers(window) == [0, nil, 2])
    }

    @Test func aFasterCameraKeepsTheNewestPoseOfEachSlot() {
        var window = PoseWindow(length: 3, framesPerSecond: 10)!
        window.add(pose(0), at: 0)
        #expect(window.add(pose(1), at: 0.04) == 0)  // rounds to slot 0 again
        window.add(pose(2), at: 0.1)
        #expect(markers(window).suffix(2) == [1, 2])
    }

    @Test func aLongGapEmptiesTheWholeWindowWithoutLooping() {
        var window = PoseWindow(length: 3, framesPerSecond: 10)!
        for frame in 0..<3 { window.add(pose(Float(frame)), at: Double(frame) / 10) }
        window.add(pose(9), at: 100)
        #expect(markers(window) == [nil, nil, 9])
    }

    @Test("A pose window cannot be built from a bad rate or an empty length",
          arguments: [Double.nan, .infinity, -.infinity, -1, 0, 1e-300, 0.5, 241, 1e300])
    func aBadRateBuildsNoWindow(_ framesPerSecond: Double) {
        #expect(PoseWindow(length: 10, framesPerSecond: framesPerSecond) == nil)
        #expect(PoseWindow(length: 0, framesPerSecond: 15) == nil)
    }

    @Test("Times that are not finite are dropped without disturbing the window")
    func nonFiniteTimesAreDropped() {
        var window = PoseWindow(length: 3, framesPerSecond: 10)!
        window.add(pose(0), at: 0)
        for time in [Double.nan, .infinity, -.infinity] { #expect(window.add(pose(5), at: time) == 0) }
        window.add(pose(1), at: 0.1)
        #expect(markers(window) == [nil, 0, 1])
    }

    @Test("A time too far ahead to number starts the window afresh; one too far back is ignored")
    func absurdTimesDoNotTrap() {
        // `replay --fps 1e-300` used to stamp frame n at n × 10³⁰⁰ s and trap here.
        var window = PoseWindow(length: 3, framesPerSecond: 15)!
        window.add(pose(0), at: 0)
        window.add(pose(1), at: 1e300)
        #expect(markers(window) == [nil, nil, 1])
        #expect(window.newestSlotNumber == 0)
        #expect(window.add(pose(2), at: -1.7e308) == 0)
        #expect(window.add(pose(3), at: 1e300 + 1e286) == 1)  // 10²⁸⁶ s later is still too far: afresh again
        #expect(markers(window) == [nil, nil, 3])
    }
}

@Suite struct DecisionPolicyTests {
    let labels: [ActionLabel] = [.jumpingJacks, .squats, .other]

    func decide(_ policy: inout DecisionPolicy, _ probabilities: [Float], full: Bool = true, present: Double = 1) -> ActionDecision {
        probabilities.withUnsafeBufferPointer { policy.decide(windowFull: full, presentShare: present, probabilities: $0, labels: labels) }
    }

    @Test func beforeTheFirstFullWindowItIsStartingUp() {
        var policy = DecisionPolicy(labelCount: 3)
        #expect(decide(&policy, [1, 0, 0], full: false) == .startingUp)
    }

    @Test func theFirstConfidentWindowIsReportedAtOnce() {
        var policy = DecisionPolicy(labelCount: 3)
        #expect(decide(&policy, [0.9, 0.05, 0.05]) == .action(.jumpingJacks, confidence: 0.9))
    }

    @Test func fewerThanSixtyPercentRealPosesIsNoPersonImmediately() {
        var policy = DecisionPolicy(labelCount: 3)
        _ = decide(&policy, [0.9, 0.05, 0.05])
        #expect(decide(&policy, [0.9, 0.05, 0.05], present: 0.59) == .noPerson)
        #expect(decide(&policy, [0.9, 0.05, 0.05], present: 0.6).name == "no_person")  // needs confirmation back
        #expect(decide(&policy, [0.9, 0.05, 0.05], present: 0.6).name == "jumping_jacks")
    }

    @Test func aSingleDissentingWindowDoesNotFlipTheLabel() {
        var policy = DecisionPolicy(labelCount: 3)
        policy.smoothing = 0
        _ = decide(&policy, [0.9, 0.05, 0.05])
        #expect(decide(&policy, [0.05, 0.9, 0.05]).name == "jumping_jacks")
        #expect(decide(&policy, [0.9, 0.05, 0.05]).name == "jumping_jacks")
        #expect(decide(&policy, [0.05, 0.9, 0.05]).name == "jumping_jacks")
        #expect(decide(&policy, [0.05, 0.9, 0.05]).name == "squats")
    }

    @Test func belowTheThresholdIsLowConfidenceWithTheBestGuess() {
        var policy = DecisionPolicy(labelCount: 3)
        #expect(decide(&policy, [0.5, 0.3, 0.2]) == .lowConfidence(best: .jumpingJacks, confidence: 0.5))
    }

    @Test func aLowConfidenceGuessThatBecomesConfidentIsReportedAtOnce() {
        var policy = DecisionPolicy(labelCount: 3)
        policy.smoothing = 0
        policy.confirmations = 3
        #expect(decide(&policy, [0.5, 0.3, 0.2]) == .lowConfidence(best: .jumpingJacks, confidence: 0.5))
        #expect(decide(&policy, [0.8, 0.1, 0.1]) == .action(.jumpingJacks, confidence: 0.8))
    }

    @Test func aConfidentLabelOtherThanTheLowConfidenceGuessStillNeedsItsConfirmations() {
        var policy = DecisionPolicy(labelCount: 3)
        policy.smoothing = 0
        policy.confirmations = 3
        _ = decide(&policy, [0.5, 0.3, 0.2])
        #expect(decide(&policy, [0.1, 0.8, 0.1]).name == "low_confidence")
        #expect(decide(&policy, [0.1, 0.8, 0.1]).name == "low_confidence")
        #expect(decide(&policy, [0.1, 0.8, 0.1]) == .action(.squats, confidence: 0.8))
    }

    @Test func promotionsCanBeSetBackToTheFullConfirmations() {
        var policy = DecisionPolicy(labelCount: 3)
        policy.smoothing = 0
        policy.promotions = 2
        _ = decide(&policy, [0.5, 0.3, 0.2])
        #expect(decide(&policy, [0.8, 0.1, 0.1]).name == "low_confidence")
        #expect(decide(&policy, [0.8, 0.1, 0.1]).name == "jumping_jacks")
    }

    @Test func smoothingAveragesWithThePreviousWindow() {
        var policy = DecisionPolicy(labelCount: 3)
        _ = decide(&policy, [0.9, 0.1, 0])
        #expect(decide(&policy, [0.5, 0.5, 0]) == .action(.jumpingJacks, confidence: 0.7))
    }
}

@Suite struct ActionSummaryTests {
    @Test func secondsAccumulatePerDecisionAndStartingUpIsNotCounted() {
        var summary = ActionSummary()
        summary.record(.startingUp, duration: 1)
        summary.record(.action(.squats, confidence: 0.9), duration: 0.5)
        summary.record(.action(.squats, confidence: 0.8), duration: 0.5)
        summary.record(.noPerson, duration: 0.5)
        #expect(summary.seconds["squats"] == 1.0)
        #expect(summary.seconds["no_person"] == 0.5)
        #expect(summary.seconds["starting_up"] == nil)
        #expect(summary.decisions == 4)
    }

    /// The pipeline records every decision and repetition on the frame it happens: an action's
    /// first repetition, maybe an hour after start-up, must not make the summary's tables allocate.
    @Test(.enabled(if: AllocationCounter.isAvailable, "needs the malloc counter: run Tests/Support/run-allocation-tests.sh"))
    func recordingEveryKindOfDecisionAndEachActionsFirstRepetitionAllocatesNothing() {
        var summary = ActionSummary()
        let decisions: [ActionDecision] = [.startingUp, .noPerson, .lowConfidence(best: .squats, confidence: 0.4)]
            + ActionLabel.allCases.map { .action($0, confidence: 0.9) }
        let labels = ActionLabel.countable
        // Warm-up on another summary: the runtime's type metadata is made on first use.
        var warmUp = ActionSummary()
        warmUp.record(.noPerson, duration: 1)
        warmUp.recordRepetition(.squats, count: 1)
        let before = AllocationCounter.function!()
        // Index loops: a debug build's unspecialised array iterator allocates.
        for index in 0..<decisions.count { summary.record(decisions[index], duration: 0.5) }
        for index in 0..<labels.count { summary.recordRepetition(labels[index], count: index + 1) }
        let allocations = AllocationCounter.function!() - before
        #expect(allocations == 0)
        #expect(summary.repetitions == [.jumpingJacks: 1, .lunges: 2, .burpees: 3, .squats: 4, .pushUps: 5])
        #expect(summary.seconds == ["jumping_jacks": 0.5, "lunges": 0.5, "burpees": 0.5, "squats": 0.5, "push_ups": 0.5,
                                    "other": 0.5, "no_person": 0.5, "low_confidence": 0.5])
        #expect(summary.decisions == decisions.count)
    }
}
