import Foundation
import Testing
import Capture
import PoseEstimation
@testable import Appliance

@Suite struct TurnedCameraDoctorTests {
    @Test("The doctor says how the picture is turned and where to check it")
    func theDoctorNamesTheOrientation() throws {
        var observations = DiagnosisTests.healthy()
        observations.cameraNodes = [.init(path: "/dev/video0", description: .success(DiagnosisTests.webcam))]
        var configuration = ApplianceConfiguration()
        let plain = try #require(Diagnosis.report(observations, configuration: configuration).items.last { $0.area == .camera })
        #expect(plain.details.last?.contains("camera.rotation = 0") == true)
        #expect(plain.details.last?.contains("posewatch snapshot") == true)
        configuration.cameraRotation = 90
        configuration.cameraFlip = true
        let turned = try #require(Diagnosis.report(observations, configuration: configuration).items.last { $0.area == .camera })
        #expect(turned.details.last == "the picture is turned 90° clockwise, then mirrored left to right before the pose model (camera.rotation, camera.flip); 'posewatch snapshot' shows it as the model sees it")
        #expect(turned.verdict == .ok)
    }
}

@Suite struct UprightHintTests {
    static func tally(_ directions: [BodyDirection]) -> BodyDirectionTally {
        var tally = BodyDirectionTally()
        for direction in directions {
            // A pose whose torso points `direction`: hips at the centre, shoulders one step that way.
            var pose = Pose()
            let (dx, dy): (Float, Float) = [(0, -1), (1, 0), (0, 1), (-1, 0)][direction.rawValue]
            pose[.leftHip] = Keypoint(x: 300, y: 300, score: 0.9)
            pose[.leftShoulder] = Keypoint(x: 300 + 100 * dx, y: 300 + 100 * dy, score: 0.9)
            tally.add(pose)
        }
        return tally
    }

    @Test("Most people lying head right: turn the picture 270°; behind a mirror the other way")
    func theHintNamesTheRotationThatStandsPeopleUp() throws {
        let lying = Self.tally(Array(repeating: .right, count: 9) + [.up])
        let message = try #require(UprightHint.message(lying, orientation: .upright))
        #expect(message.hasPrefix("hint: people appear on their side in 9 of 10 frames: if the camera is mounted sideways, set camera.rotation = 270 in posewatch.toml"))
        #expect(!message.contains("\n"))
        // Already turned 90: the turns add up.
        #expect(UprightHint.message(lying, orientation: FrameOrientation(degrees: 90)!)?.contains("camera.rotation = 0 ") == true)
        // With the mirror on, a further clockwise turn of the picture is a counter-clockwise one of the camera's.
        #expect(UprightHint.message(lying, orientation: FrameOrientation(degrees: 0, mirrored: true)!)?.contains("camera.rotation = 90 ") == true)
        let upsideDown = try #require(UprightHint.message(Self.tally([.down, .down, .down]), orientation: .upright))
        #expect(upsideDown.hasPrefix("hint: people appear upside down in 3 of 3 frames: if the camera is mounted upside down, set camera.rotation = 180"))
    }

    @Test("Upright people, mixed directions or nobody: no hint")
    func noHintWithoutAMajority() {
        #expect(UprightHint.message(Self.tally([.up, .up, .right]), orientation: .upright) == nil)
        #expect(UprightHint.message(Self.tally([.right, .left, .up, .down]), orientation: .upright) == nil)
        #expect(UprightHint.message(BodyDirectionTally(), orientation: .upright) == nil)
    }
}

/// `snapshot` and `replay` on a clip ffmpeg turned a quarter clockwise, as a camera mounted on its
/// side shows it. Needs MoveNet and a dev clip from ../shared, and ffmpeg.
@Suite(.serialized) struct TurnedCameraCommandTests {
    let scratch = ScratchDirectory("posewatch-rotation-test")
    static let shared = URL(fileURLWithPath: "\(#filePath)").deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared")
    static let moveNet = shared.appendingPathComponent("models/movenet_singlepose_lightning_int8_4.tflite").path
    static let video = shared.appendingPathComponent("data/videos/wahoo_squats.mp4").path
    static let ffmpeg = ["/usr/bin/ffmpeg", "/usr/local/bin/ffmpeg"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static var available: Bool {
        ffmpeg != nil && FileManager.default.fileExists(atPath: moveNet) && FileManager.default.fileExists(atPath: video)
    }

    /// 2 s of the squat clip (from 11 s: squatting) at 15 fps, 320x180, turned 90° clockwise: 180 wide, 320 high.
    func turnedClip() throws -> String {
        let path = scratch.path + "/turned.y4m"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.ffmpeg!)
        process.arguments = ["-v", "error", "-y", "-ss", "11", "-t", "2", "-i", Self.video, "-r", "15",
                             "-vf", "scale=320:-2,transpose=1", "-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe", path]
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
        return path
    }

    /// A config file naming MoveNet, plus `text`; each call writes a file of its own.
    func config(_ text: String) -> String {
        let path = scratch.path + "/posewatch-\(UInt32.random(in: 0...UInt32.max)).toml"
        _ = FileManager.default.createFile(atPath: path, contents: Data("[models]\npose = \"\(Self.moveNet)\"\n\(text)".utf8))
        return path
    }

    @Test(.enabled(if: TurnedCameraCommandTests.available, "needs ../shared (MoveNet, the dev clips) and ffmpeg"))
    func snapshotOfASidewaysCameraHintsAtTheRotationAndDrawsTheTurnedPicture() throws {
        let clip = try turnedClip()
        let output = scratch.path + "/aim.png"
        let sideways = PosewatchProcess.run(["snapshot", "--input", clip, "--output", output, "--config", config("")])
        #expect(sideways.status == 0, "\(sideways.error)")
        #expect(sideways.output.hasPrefix("wrote \(output): 180x320 at 1.00 s"), "\(sideways.output)")
        #expect(sideways.output.contains("\nhint: people appear on their side in ") && sideways.output.contains("set camera.rotation = 270 in posewatch.toml"),
                "\(sideways.output)")

        // Told the rotation, in the config or on the command line: the upright picture, no hint.
        for arguments in [["--config", config("[camera]\nrotation = 270\n")], ["--config", config(""), "--rotation", "270"]] {
            let upright = PosewatchProcess.run(["snapshot", "--input", clip, "--output", output] + arguments)
            #expect(upright.status == 0, "\(upright.error)")
            #expect(upright.output.hasPrefix("wrote \(output): 320x180 at 1.00 s, person found\n"), "\(arguments): \(upright.output)")
            #expect(!upright.output.contains("hint"), "\(upright.output)")
        }
    }

    @Test("A rotation that is not a quarter turn is refused on the command line in one line")
    func aBadRotationOptionIsRefused() {
        for arguments in [["replay", "kp.npy", "--rotation", "45"], ["snapshot", "--input", "c.y4m", "--output", "o.png", "--rotation", "ninety"]] {
            let result = PosewatchProcess.run(arguments)
            #expect(result.status == 2)
            #expect(result.error == "posewatch: --rotation must be 0, 90, 180 or 270 (degrees clockwise), not \(arguments[arguments.count - 1])\n", "\(arguments)")
        }
    }

    @Test func aBadRotationInTheConfigStopsSnapshotWithTheConfigurationStatus() throws {
        let result = PosewatchProcess.run(["snapshot", "--input", scratch.path + "/clip.y4m", "--output", scratch.path + "/x.png",
                                           "--config", config("[camera]\nrotation = 45\n")])
        #expect(result.status == 78)
        #expect(result.error.hasSuffix(": camera.rotation: expected 0, 90, 180 or 270 (degrees clockwise), got 45\n"), "\(result.error)")
    }
}
