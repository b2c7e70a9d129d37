import Foundation
import Testing
import Capture
import InferenceCore
import LinuxSystem
@testable import PoseEstimation

/// `pose` turned a quarter clockwise `times` times inside a `width` × `height` picture (what a
/// camera mounted on its side shows of it), with the picture's new size.
func turnedPose(_ pose: Pose, times: Int, width: Float = 640, height: Float = 480) -> Pose {
    var pose = pose, w = width, h = height
    for _ in 0..<times {
        for index in 0..<Joint.count {
            let point = pose[index]
            pose[index] = Keypoint(x: h - point.y, y: point.x, score: point.score)
        }
        (w, h) = (h, w)
    }
    return pose
}

@Suite struct BodyDirectionTests {
    @Test("A standing person's head is up; turned a quarter clockwise it points right, and so on")
    func headDirectionFollowsTheTurns() {
        let standing = standingPose()
        #expect(BodyDirection(of: standing) == .up)
        #expect(BodyDirection(of: turnedPose(standing, times: 1)) == .right)
        #expect(BodyDirection(of: turnedPose(standing, times: 2)) == .down)
        #expect(BodyDirection(of: turnedPose(standing, times: 3)) == .left)
        // The turn that stands each one up again.
        #expect([BodyDirection.up, .right, .down, .left].map(\.quarterTurnsToUpright) == [0, 3, 2, 1])
    }

    @Test("Without a shoulder and a hip there is no direction; the legs count when the ankles are seen")
    func theTorsoIsNeeded() {
        var pose = standingPose()
        pose[.leftShoulder].score = 0.1
        pose[.rightShoulder].score = 0.1
        #expect(BodyDirection(of: pose) == nil)
        // A torso seen from above while bending is short; the legs decide.
        var bending = standingPose()
        for joint in [Joint.leftShoulder, .rightShoulder] { bending[joint].y = bending[.leftHip].y - 5; bending[joint].x += 30 }
        #expect(BodyDirection(of: bending) == .up)
    }

    @Test("The tally names a direction only when more than half the frames looked at share it, and at least three")
    func mostFramesMustAgree() {
        var tally = BodyDirectionTally()
        #expect(tally.mostlyNotUpright == nil)
        for _ in 0..<9 { tally.add(turnedPose(standingPose(), times: 1)) }
        tally.add(standingPose())
        tally.add(nil)
        #expect(tally.frames == 11 && tally.framesWithBody == 10 && tally.frames(.right) == 9)
        #expect(tally.mostlyNotUpright?.direction == .right && tally.mostlyNotUpright?.frames == 9)

        // A title card taken for a lying person in two frames of an empty second says nothing.
        var fleeting = BodyDirectionTally()
        for _ in 0..<2 { fleeting.add(turnedPose(standingPose(), times: 1)) }
        #expect(fleeting.mostlyNotUpright == nil)
        for _ in 0..<3 { fleeting.add(turnedPose(standingPose(), times: 1)) }
        for _ in 0..<6 { fleeting.add(nil) }
        #expect(fleeting.mostlyNotUpright == nil, "5 of 11 frames")

        var mixed = BodyDirectionTally()
        for _ in 0..<5 { mixed.add(standingPose()) }
        for _ in 0..<3 { mixed.add(turnedPose(standingPose(), times: 1)) }
        for _ in 0..<2 { mixed.add(turnedPose(standingPose(), times: 3)) }
        #expect(mixed.mostlyNotUpright == nil, "5 upright of 10: not most frames lying one way")
    }
}

/// Paths and tools the real-model tests need.
private enum OrientationTestInputs {
    static var moveNetAvailable: Bool { FileManager.default.fileExists(atPath: TestPaths.moveNet.path) }
    static var clipsAvailable: Bool {
        moveNetAvailable && TestPaths.ffmpeg != nil
            && FileManager.default.fileExists(atPath: TestPaths.videos.appendingPathComponent("wahoo_squats.mp4").path)
    }

    /// Frames 11…12.2 s of the squat clip (squatting) at 5 fps, 320 pixels wide, through ffmpeg's
    /// `filter` (`null` for none), as Y4M.
    static func clip(filter: String, into path: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestPaths.ffmpeg!)
        process.arguments = ["-v", "error", "-y", "-ss", "11", "-t", "1.2", "-i", TestPaths.videos.appendingPathComponent("wahoo_squats.mp4").path,
                             "-r", "5", "-vf", "scale=320:-2,\(filter)", "-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe", path]
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "ffmpeg \(process.arguments!.joined(separator: " ")) failed")
    }

    /// Every frame's model input and estimate, through `estimator` (smart cropping on).
    static func poses(_ path: String, _ estimator: inout MoveNetEstimator) throws -> [(input: [UInt8], estimate: PoseEstimate)] {
        var source = try Y4MFileSource(path: path)
        var results: [(input: [UInt8], estimate: PoseEstimate)] = []
        while true {
            var loaded = false
            let outcome = source.nextFrame(timeoutMilliseconds: 0) { frame in
                loaded = estimator.loadInput(from: frame)
                return .used
            }
            if outcome == .endOfStream { break }
            try #require(outcome == .frame && loaded)
            let input = Array(estimator.interpreter.inputBytes(0))
            results.append((input, try estimator.estimate()))
        }
        return results
    }
}

@Suite struct TurnedClipTests {
    /// ffmpeg turns a real clip the way a camera on its side (or upside down, or seen in a
    /// mirror) would show it; the estimator told the matching orientation sees what it sees in the
    /// upright clip: model inputs within ±1, the same presence, keypoints within a pixel or two.
    @Test("A turned clip with the matching orientation gives the upright clip's poses",
          .enabled(if: OrientationTestInputs.clipsAvailable, "needs ../shared (MoveNet, the dev clips) and ffmpeg"), arguments: [
        ("transpose=1", FrameOrientation(degrees: 270)!),                     // turned 90° clockwise
        ("transpose=2", FrameOrientation(degrees: 90)!),                      // turned 90° counter-clockwise
        ("hflip,vflip", FrameOrientation(degrees: 180)!),                     // upside down
        ("hflip", FrameOrientation(degrees: 0, mirrored: true)!),             // mirrored
        ("transpose=0", FrameOrientation(degrees: 90, mirrored: true)!),      // turned counter-clockwise and mirrored
    ])
    func turnedClipsGiveTheUprightPoses(_ filter: String, _ orientation: FrameOrientation) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("posewatch-turned-\(getpid())-\(filter)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let uprightPath = directory.appendingPathComponent("upright.y4m").path
        let turnedPath = directory.appendingPathComponent("turned.y4m").path
        try OrientationTestInputs.clip(filter: "null", into: uprightPath)
        try OrientationTestInputs.clip(filter: filter, into: turnedPath)

        var estimator = try MoveNetEstimator(modelPath: TestPaths.moveNet.path)
        let upright = try OrientationTestInputs.poses(uprightPath, &estimator)
        estimator.orientation = orientation
        let turned = try OrientationTestInputs.poses(turnedPath, &estimator)
        try #require(upright.count == turned.count && upright.count >= 5)
        #expect(upright.filter { $0.estimate.pose != nil }.count >= upright.count - 1, "the clip shows a person")
        var worstInput = 0, worstPixel: Float = 0
        for (a, b) in zip(upright, turned) {
            worstInput = max(worstInput, zip(a.input, b.input).map { abs(Int($0) - Int($1)) }.max()!)
            #expect((a.estimate.pose != nil) == (b.estimate.pose != nil))
            #expect(a.estimate.region == b.estimate.region)
            for index in 0..<Joint.count where a.estimate.keypoints[index].score >= 0.3 {
                let p = a.estimate.keypoints[index], q = b.estimate.keypoints[index]
                worstPixel = max(worstPixel, abs(p.x - q.x), abs(p.y - q.y))
            }
        }
        #expect(worstInput <= 1, "\(filter): model inputs differ by up to \(worstInput)")
        #expect(worstPixel <= 3, "\(filter): confident keypoints differ by up to \(worstPixel) px in a 320-pixel picture")
    }

    /// The same clip without the orientation: people lie on their side, and the tally says which
    /// rotation stands them up again.
    @Test("People in a clip turned a quarter clockwise lie with their head to the right",
          .enabled(if: OrientationTestInputs.clipsAvailable, "needs ../shared (MoveNet, the dev clips) and ffmpeg"))
    func aTurnedClipIsSeenLying() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("posewatch-lying-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("turned.y4m").path
        try OrientationTestInputs.clip(filter: "transpose=1", into: path)
        var estimator = try MoveNetEstimator(modelPath: TestPaths.moveNet.path)
        var tally = BodyDirectionTally()
        for (_, estimate) in try OrientationTestInputs.poses(path, &estimator) { tally.add(estimate.pose) }
        let verdict = try #require(tally.mostlyNotUpright, "\(tally)")
        #expect(verdict.direction == .right)
        #expect(FrameOrientation.upright.turned(by: verdict.direction.quarterTurnsToUpright).degrees == 270)
    }
}

/// The malloc-counting preload library's count (Tests/Support/run-allocation-tests.sh), when loaded.
private enum EstimatorAllocationCounter {
    typealias Count = @convention(c) () -> UInt64
    static let function: Count? = {
        guard let handle = dlopen(nil, RTLD_NOW) else { return nil }
        guard let symbol = dlsym(handle, "pw_thread_allocation_count") else { return nil }
        return unsafeBitCast(symbol, to: Count.self)
    }()
}

@Suite struct TurnedFrameAllocationTests {
    /// `loadInput` is what the orientation changes: the conversion, the turn through the scratch
    /// tensor, the upright region. (`estimate()` is the same with or without a turn; a debug build
    /// allocates in it, the release frame loop does not: `ALLOCATIONS_PER_FRAME` in docs/performance.md.)
    @Test("Loading a turned frame into MoveNet's input allocates nothing after the first frame",
          .enabled(if: EstimatorAllocationCounter.function != nil && FileManager.default.fileExists(atPath: TestPaths.moveNet.path),
                   "needs the malloc counter (Tests/Support/run-allocation-tests.sh) and ../shared/models"))
    func turnedFramesAllocateNothing() throws {
        let width = 320, height = 240
        var state: UInt32 = 7
        let bytes = (0..<(width * height * 3 / 2)).map { _ in state = state &* 1_664_525 &+ 1_013_904_223; return UInt8(truncatingIfNeeded: state >> 24) }
        let layout = FrameLayout(pixelFormat: .yuv420, width: width, height: height)
        var estimator = try MoveNetEstimator(modelPath: TestPaths.moveNet.path)
        let count = EstimatorAllocationCounter.function!
        var allocations: [UInt64] = []
        allocations.reserveCapacity(8)
        for pass in 0..<4 {
            let orientation = pass % 2 == 0 ? FrameOrientation(degrees: 90, mirrored: true)! : FrameOrientation(degrees: 180)!
            estimator.orientation = orientation
            let before = count()
            let loaded = bytes.withUnsafeBytes { estimator.loadInput(from: Frame(bytes: $0, layout: layout, timestamp: .zero, sequence: UInt64(pass))) }
            allocations.append(count() - before)
            try #require(loaded)
            let estimate = try estimator.estimate()
            let upright = orientation.uprightSize(width: width, height: height)
            #expect(estimate.region == CropRegion.wholeFrame(width: upright.width, height: upright.height) || estimate.pose != nil,
                    "the region is in the upright picture")
        }
        #expect(allocations.dropFirst().allSatisfy { $0 == 0 }, "allocations per turned frame: \(allocations)")
    }
}
