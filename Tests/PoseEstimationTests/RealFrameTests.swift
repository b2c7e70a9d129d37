import Foundation
import Testing
import Capture
import InferenceCore
@testable import PoseEstimation

/// Paths the tests read: fixtures next to this file, shared data at `../shared` from the package root.
enum TestPaths {
    static let testsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    static let fixtures = testsDirectory.appendingPathComponent("Fixtures")
    static let packageRoot = testsDirectory.deletingLastPathComponent().deletingLastPathComponent()
    static let shared = packageRoot.deletingLastPathComponent().appendingPathComponent("shared")
    static let moveNet = shared.appendingPathComponent("models/movenet_singlepose_lightning_int8_4.tflite")
    static let videos = shared.appendingPathComponent("data/videos")
    static var ffmpeg: String? {
        ["/usr/bin/ffmpeg", "/usr/local/bin/ffmpeg"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}

/// `Fixtures/pose_goldens.json`, written by `Scripts/pose_goldens.py` (snake_case keys).
struct PoseGoldens: Decodable {
    struct Run: Decodable {
        var clip: String
        var start: String
        var fps: Int
        var width: Int
        var height: Int
        var frames: [Frame]
    }
    struct Frame: Decodable {
        var frameFingerprint: String
        var inputFingerprint: String
        var region: [Float]
        var cropped: Bool
        var person: Bool
    }
    var model: String
    var ffmpeg: [String]
    var runs: [Run]
}

/// The fingerprints `Scripts/posewatch_pose.py` writes.
enum Fingerprint {
    /// FNV-1a 64-bit (the input tensors).
    static func fnv1a(_ bytes: UnsafeRawBufferPointer) -> String {
        var value: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes { value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return hex(value)
    }

    /// Whole frames: sum of little-endian 8-byte words (zero-padded) × (2i + 1) mod 2⁶⁴, xor byte count.
    static func frame(_ bytes: UnsafeRawBufferPointer) -> String {
        var sum: UInt64 = 0
        var index = 0, word: UInt64 = 0
        for (offset, byte) in bytes.enumerated() {
            word |= UInt64(byte) << (8 * UInt64(offset & 7))
            if offset & 7 == 7 {
                sum = sum &+ word &* (2 &* UInt64(index) &+ 1)
                index += 1
                word = 0
            }
        }
        if bytes.count & 7 != 0 { sum = sum &+ word &* (2 &* UInt64(index) &+ 1) }
        return hex(sum ^ UInt64(bytes.count))
    }

    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

@Suite struct RealFrameTests {
    static let sharedMessage = "needs ../shared/models, ../shared/data/videos (absent in a user's checkout) and ffmpeg"
    static var available: Bool {
        FileManager.default.fileExists(atPath: TestPaths.moveNet.path)
            && FileManager.default.fileExists(atPath: TestPaths.videos.path) && TestPaths.ffmpeg != nil
    }

    /// Runs the goldens' ffmpeg command for one run into `output` (a Y4M file).
    static func decode(_ run: PoseGoldens.Run, command: [String], into output: String) throws {
        let arguments = command.dropFirst().map { argument in
            argument.replacingOccurrences(of: "{start}", with: run.start)
                .replacingOccurrences(of: "{clip}", with: TestPaths.videos.appendingPathComponent(run.clip).path)
                .replacingOccurrences(of: "{fps}", with: String(run.fps))
                .replacingOccurrences(of: "{frames}", with: String(run.frames.count))
                .replacingOccurrences(of: "{output}", with: output)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestPaths.ffmpeg!)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "ffmpeg \(arguments.joined(separator: " ")) failed")
    }

    /// Our estimator (frame conversion, letterbox or smart crop, model, decoding, presence) on
    /// full-resolution frames equals LiteRT's reference kernels fed by the numpy reimplementation
    /// of the same preprocessing: same input bytes, same raw output bits, same crop regions, and
    /// keypoints in frame pixels within float rounding.
    @Test(.enabled(if: RealFrameTests.available, Comment(rawValue: RealFrameTests.sharedMessage)))
    func estimatorMatchesLiteRTWithOurPreprocessingOnRealFrames() throws {
        let data = try Data(contentsOf: TestPaths.fixtures.appendingPathComponent("pose_goldens.json"))
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let goldens = try decoder.decode(PoseGoldens.self, from: data)
        let values = try NumPyArray.read(contentsOf: TestPaths.fixtures.appendingPathComponent("pose_goldens.npy").path)
        let frameCount = goldens.runs.reduce(0) { $0 + $1.frames.count }
        try #require(values.elementType == .float32 && values.shape == [frameCount, 2, 17, 3])
        #expect(frameCount >= 30)
        #expect(goldens.runs.flatMap(\.frames).filter(\.cropped).count >= 20, "the crop path must be covered")
        let golden: [Float] = values.bytes.withUnsafeBytes { raw in
            (0..<values.elementCount).map { raw.loadUnaligned(fromByteOffset: $0 * 4, as: Float.self) }
        }

        var estimator = try MoveNetEstimator(modelPath: TestPaths.shared.appendingPathComponent("models/\(goldens.model)").path)
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("posewatch-pose-goldens-\(getpid())")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }

        var index = 0
        var worstOutput: Float = 0, worstPixel: Float = 0
        var mismatches: [String] = []
        for (runNumber, run) in goldens.runs.enumerated() {
            let path = scratch.appendingPathComponent("run\(runNumber).y4m").path
            try Self.decode(run, command: goldens.ffmpeg, into: path)
            var source = try Y4MFileSource(path: path)
            estimator.resetCropping()
            for (frameNumber, expected) in run.frames.enumerated() {
                let name = "\(run.clip)@\(run.start)s frame \(frameNumber)"
                var frameFingerprint = "", inputFingerprint = "", loaded = false
                let outcome = source.nextFrame(timeoutMilliseconds: 0) { frame in
                    frameFingerprint = Fingerprint.frame(frame.bytes)
                    loaded = estimator.loadInput(from: frame)
                    inputFingerprint = Fingerprint.fnv1a(UnsafeRawBufferPointer(estimator.interpreter.inputBytes(0)))
                    return .used
                }
                try #require(outcome == .frame && loaded, "\(name): no frame")
                try #require(frameFingerprint == expected.frameFingerprint,
                             "\(name): this ffmpeg decodes different frames than the one that made the goldens; rerun Scripts/pose_goldens.py")
                if inputFingerprint != expected.inputFingerprint { mismatches.append("\(name): input tensor differs") }

                let estimate = try estimator.estimate()
                let region = [estimate.region.minX, estimate.region.minY, estimate.region.side]
                if region != expected.region { mismatches.append("\(name): region \(region) vs \(expected.region)") }
                if (estimate.pose != nil) != expected.person { mismatches.append("\(name): person \(estimate.pose != nil) vs \(expected.person)") }
                let output = try #require(estimator.interpreter.outputFloats(0))
                for k in 0..<51 {
                    worstOutput = max(worstOutput, abs(output[k] - golden[index * 102 + k]))
                    let joint = k / 3, axis = k % 3
                    let point = estimate.keypoints[joint]
                    let mine = axis == 0 ? point.x : axis == 1 ? point.y : point.score
                    worstPixel = max(worstPixel, abs(mine - golden[index * 102 + 51 + k]))
                }
                index += 1
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) mismatches: \(mismatches.prefix(5))")
        #expect(worstOutput == 0, "raw model output differs by up to \(worstOutput) over \(frameCount) frames")
        // Frame pixels are min + normalised × side in Float; allow a few ulps of a 2000-pixel value.
        #expect(worstPixel <= 1e-3, "keypoints differ by up to \(worstPixel) px over \(frameCount) frames")
    }
}
