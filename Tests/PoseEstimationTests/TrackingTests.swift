import Foundation
import Testing
import InferenceCore
@testable import PoseEstimation

@Suite struct PersonTrackerTests {
    @Test func theLargestPersonIsChosenFirst() {
        var tracker = PersonTracker()
        let near = standingPose(centerX: 400, scale: 1.2), far = standingPose(centerX: 150, scale: 0.5)
        #expect(tracker.select(from: [far, near], at: 0) == near)
        #expect(tracker.trackIdentifier == 1)
    }

    @Test func theSamePersonIsKeptWhenSomeoneLargerWalksIn() {
        var tracker = PersonTracker()
        let exerciser = standingPose(centerX: 200, scale: 0.8)
        _ = tracker.select(exerciser, at: 0)
        let visitor = standingPose(centerX: 500, scale: 1.3)
        #expect(tracker.select(from: [visitor, exerciser], at: 0.1) == exerciser)
        #expect(tracker.trackIdentifier == 1)
    }

    @Test func twoPeopleCrossingDoNotSwapIdentities() {
        var tracker = PersonTracker()
        // A walks left to right, B right to left, 15 fps; the tracker follows A throughout.
        var time = 0.0
        for step in 0...30 {
            let a = standingPose(centerX: 100 + Float(step) * 14, scale: 0.9)
            let b = standingPose(centerX: 520 - Float(step) * 14, scale: 0.85)
            let selected = tracker.select(from: step % 2 == 0 ? [a, b] : [b, a], at: time)
            if step < 12 || step > 18 {  // while they overlap heavily either answer is defensible
                #expect(selected == a, "step \(step)")
            }
            time += 1.0 / 15
        }
    }

    @Test func aFrameWithOneConfidentKeypointDoesNotCaptureTheTrack() {
        // A blurred frame where only the nose scores: its box has no size, and tracking it would
        // drop the person (no later box is within reach of a point) for the whole patience.
        var tracker = PersonTracker()
        let person = standingPose(centerX: 300)
        #expect(tracker.select(person, at: 0) == person)
        var blurred = person
        for index in 1..<Joint.count { blurred[index].score = 0.05 }
        #expect(tracker.select(blurred, at: 1.0 / 15) == nil)
        #expect(tracker.select(person, at: 2.0 / 15) == person)
        // Nor does one start a track.
        var fresh = PersonTracker()
        #expect(fresh.select(blurred, at: 0) == nil)
        #expect(fresh.select(person, at: 1.0 / 15) == person)
        #expect(fresh.trackIdentifier == 1)
    }

    @Test func aBlurredFrameWithOnlyTheFaceDoesNotLoseThePerson() {
        // Only the five face joints score: their box is a small cluster near the tracked box, so it
        // is the same person, and the next full frame must be too (its centre is far from the
        // cluster's in units of the cluster's own size, near in units of the person's).
        var tracker = PersonTracker()
        let person = standingPose(centerX: 300)
        _ = tracker.select(person, at: 0)
        var blurred = person
        for index in 5..<Joint.count { blurred[index].score = 0.05 }
        _ = tracker.select(blurred, at: 1.0 / 15)
        #expect(tracker.select(person, at: 2.0 / 15) == person)
        #expect(tracker.trackIdentifier == 1)
    }

    @Test func aShortAbsenceKeepsTheTrackAndALongOneLetsSomeoneElseIn() {
        var tracker = PersonTracker()
        _ = tracker.select(standingPose(centerX: 200), at: 0)
        let other = standingPose(centerX: 520)
        #expect(tracker.select(other, at: 0.5) == nil)  // the tracked person stepped out briefly
        #expect(tracker.select(other, at: 1.6) == other)  // gone too long: the new person is followed
        #expect(tracker.trackIdentifier == 2)
    }

    @Test func droppingToAPlankKeepsTheSamePerson() {
        var tracker = PersonTracker()
        let standing = standingPose(centerX: 320, centerY: 260)
        _ = tracker.select(standing, at: 0)
        // A plank: same place, box wide and flat.
        var plank = Pose()
        for index in 0..<Joint.count { plank[index] = Keypoint(x: 220 + Float(index) * 12, y: 380 + Float(index % 3) * 8, score: 0.8) }
        #expect(tracker.select(plank, at: 0.07) == plank)
        #expect(tracker.trackIdentifier == 1)
    }

    @Test func nobodyGivesNil() {
        var tracker = PersonTracker()
        #expect(tracker.select(nil, at: 0) == nil)
        #expect(tracker.select(standingPose(score: 0.05), at: 0.1) == nil)
    }
}

@Suite struct JointSelectionTests {
    @Test func leavingOutTheFaceZeroesTheFiveFaceJointsOnly() {
        let selected = JointSelection([.arms, .torso, .legs]).apply(to: standingPose())
        #expect(selected[.nose] == .zero && selected[.rightEar] == .zero)
        #expect(selected[.leftShoulder] == standingPose()[.leftShoulder])
        #expect(JointSelection.all.apply(to: standingPose()) == standingPose())
    }
}

@Suite struct KeypointSmootherTests {
    @Test func jitterOnAStillJointShrinks() {
        var smoother = KeypointSmoother()
        var rawSpread: Float = 0, smoothedSpread: Float = 0
        for frame in 0..<150 {
            var pose = standingPose()
            let jitter: Float = frame % 2 == 0 ? 3 : -3
            pose[.leftWrist].x += jitter
            let smoothed = smoother.smooth(pose, at: Double(frame) / 15, track: 1)
            if frame > 30 {
                rawSpread = max(rawSpread, abs(pose[.leftWrist].x - standingPose()[.leftWrist].x))
                smoothedSpread = max(smoothedSpread, abs(smoothed[.leftWrist].x - standingPose()[.leftWrist].x))
            }
        }
        #expect(smoothedSpread < rawSpread * 0.5)
    }

    @Test func aFastMoveIsFollowedWithinAFewFrames() {
        var smoother = KeypointSmoother()
        for frame in 0..<10 { _ = smoother.smooth(standingPose(), at: Double(frame) / 15, track: 1) }
        var last = standingPose()
        for frame in 10..<16 { last = smoother.smooth(standingPose(centerX: 420), at: Double(frame) / 15, track: 1) }
        #expect(abs(last[.leftHip].x - standingPose(centerX: 420)[.leftHip].x) < 10)
    }

    /// Scripts/jitter.py measures the filter through a Python port; this holds the Swift filter to
    /// the port's output on Scripts/smoother_fixture.py's track (noise, a swinging wrist, a knee
    /// lost for four frames, a 1.5 s gap), so the measured figures describe this filter.
    @Test func theFilterMatchesThePortTheJitterFiguresWereMeasuredWith() throws {
        let fixture = try NumPyArray.read(contentsOf: TestPaths.fixtures.appendingPathComponent("smoother_fixture.npy").path)
        try #require(fixture.elementType == .float32 && fixture.shape.count == 4 && fixture.shape.suffix(3) == [2, 17, 3])
        let values: [Float] = fixture.bytes.withUnsafeBytes { raw in
            (0..<fixture.elementCount).map { raw.loadUnaligned(fromByteOffset: $0 * 4, as: Float.self) }
        }
        func pose(_ frame: Int, _ which: Int) -> Pose {
            let base = (frame * 2 + which) * 51
            return Pose(keypoints: (0..<Joint.count).map { Keypoint(x: values[base + $0 * 3], y: values[base + $0 * 3 + 1], score: values[base + $0 * 3 + 2]) })
        }
        var smoother = KeypointSmoother()
        var worst: Float = 0, moved: Float = 0
        for frame in 0..<fixture.shape[0] {
            let time = Double(frame) / 15 + (frame >= 60 ? 1.5 : 0)
            let input = pose(frame, 0), expected = pose(frame, 1)
            let smoothed = smoother.smooth(input, at: time, track: 1)
            for joint in 0..<Joint.count {
                worst = max(worst, abs(smoothed[joint].x - expected[joint].x), abs(smoothed[joint].y - expected[joint].y))
                moved = max(moved, abs(smoothed[joint].x - input[joint].x))
            }
        }
        #expect(moved > 10, "the fixture exercises the filter")
        #expect(worst < 0.01, "Swift (Float) and the Python port (Double) differ by up to \(worst) px")
    }

    @Test func aNewPersonRestartsTheFilters() {
        var smoother = KeypointSmoother()
        _ = smoother.smooth(standingPose(), at: 0, track: 1)
        let other = standingPose(centerX: 100)
        #expect(smoother.smooth(other, at: 1.0 / 15, track: 2) == other)
    }
}
