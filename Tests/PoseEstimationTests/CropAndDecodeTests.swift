import Testing
@testable import PoseEstimation

@Suite struct CropPolicyTests {
    let policy = CropPolicy()

    @Test func withoutAPoseTheWholeFrameIsLetterboxed() {
        #expect(policy.nextRegion(after: nil, frameWidth: 640, frameHeight: 480) == CropRegion(minX: 0, minY: -80, side: 640))
        #expect(CropRegion.wholeFrame(width: 360, height: 640) == CropRegion(minX: -140, minY: 0, side: 640))
    }

    @Test func aVisibleTorsoCentresTheSquareOnTheHips() {
        let region = policy.nextRegion(after: standingPose(), frameWidth: 640, frameHeight: 480)
        #expect(abs(region.minX + region.side / 2 - 320) < 0.01)
        #expect(abs(region.minY + region.side / 2 - 260) < 0.01)
        // Body reaches 178 px above the hips: ×1.2 = 213.6 half side; torso 120 × 1.9 = 228 wins.
        #expect(abs(region.side - 456) < 0.01)
    }

    @Test func everyConfidentKeypointWidensTheBodyRangeNotJustTheLastTorsoJoint() {
        var pose = standingPose()
        pose[.leftWrist] = Keypoint(x: 320 - 220, y: 260, score: 0.9)  // an arm stretched far out
        let region = policy.nextRegion(after: pose, frameWidth: 640, frameHeight: 480)
        #expect(abs(region.side - 2 * 220 * 1.2) < 0.01)
    }

    @Test func unsureKeypointsDoNotWidenTheSquare() {
        var pose = standingPose()
        pose[.leftWrist] = Keypoint(x: 320 - 220, y: 260, score: 0.1)
        #expect(abs(policy.nextRegion(after: pose, frameWidth: 640, frameHeight: 480).side - 456) < 0.01)
    }

    @Test func aHiddenTorsoFallsBackToTheWholeFrame() {
        var pose = standingPose()
        pose[.leftHip].score = 0.1
        pose[.rightHip].score = 0.1
        #expect(policy.nextRegion(after: pose, frameWidth: 640, frameHeight: 480) == CropRegion.wholeFrame(width: 640, height: 480))
    }

    @Test func aHugeBodyIsClampedToTheFarthestFrameEdge() {
        let huge = standingPose(scale: 3)
        // Half side clamps to the hips' distance from the farthest edge (320 px), still centred on the hips.
        #expect(policy.nextRegion(after: huge, frameWidth: 640, frameHeight: 480) == CropRegion(minX: 0, minY: -60, side: 640))
    }

    @Test func aSquareLargerThanTheFrameFallsBackToTheWholeFrame() {
        let offFrame = standingPose(centerX: -30, centerY: 260, scale: 3)
        #expect(policy.nextRegion(after: offFrame, frameWidth: 640, frameHeight: 480) == CropRegion.wholeFrame(width: 640, height: 480))
    }
}

@Suite struct MoveNetOutputTests {
    @Test func decodingMapsNormalisedYXScoreIntoFramePixelsThroughTheRegion() {
        var output = [Float](repeating: 0, count: 51)
        output[0] = 0.25; output[1] = 0.5; output[2] = 0.8  // nose: y, x, score
        let region = CropRegion(minX: 0, minY: -80, side: 640)
        let pose = output.withUnsafeBufferPointer { MoveNetOutput.decode($0, region: region) }
        #expect(pose[.nose] == Keypoint(x: 320, y: 80, score: 0.8))
    }

    @Test func aConfidentBodyIsAPersonAndLowScoresAreNobody() {
        let rule = PersonPresenceRule()
        #expect(rule.isPerson(standingPose()))
        #expect(!rule.isPerson(standingPose(score: 0.15)))
    }

    @Test func aFaceWithoutShouldersAndHipsIsNotAPerson() {
        var pose = standingPose(score: 0.1)
        for joint in [Joint.nose, .leftEye, .rightEye, .leftEar, .rightEar, .leftWrist, .rightWrist] { pose[joint].score = 0.9 }
        #expect(!PersonPresenceRule().isPerson(pose))
    }
}
