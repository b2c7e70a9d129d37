import Foundation
import Testing
import InferenceCore

/// Decodes the MoveNet check frames exactly like Scripts/movenet_frames.py: each clip in name order
/// at 2 fps scaled to 192×192 RGB24 by ffmpeg, frames taken round-robin across clips.
enum MoveNetFrames {
    static let size = 192

    static var ffmpegPath: String? {
        ["/usr/bin/ffmpeg", "/usr/local/bin/ffmpeg"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static func decode(clip: String, frames: Int) throws -> [[UInt8]] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ffmpegPath ?? "ffmpeg")
        process.arguments = ["-v", "error", "-nostdin", "-i", clip, "-vf", "fps=2,scale=\(size):\(size)",
                             "-frames:v", "\(frames)", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let frameBytes = size * size * 3
        return (0..<(data.count / frameBytes)).map { Array(data[($0 * frameBytes)..<(($0 + 1) * frameBytes)]) }
    }

    static func collect(_ count: Int) throws -> [[UInt8]] {
        let clips = try FileManager.default.contentsOfDirectory(atPath: TestPaths.videos.path)
            .filter { $0.hasSuffix(".mp4") }.sorted()
        let rounds = (count + clips.count - 1) / clips.count
        let decoded = try clips.map { try decode(clip: TestPaths.videos.appendingPathComponent($0).path, frames: rounds) }
        var frames: [[UInt8]] = []
        var round = 0
        while frames.count < count && round < rounds {
            for clip in decoded where round < clip.count && frames.count < count { frames.append(clip[round]) }
            round += 1
        }
        return frames
    }

    /// FNV-1a 64-bit (the fingerprint the script wrote next to the goldens).
    static func fingerprint(_ bytes: [UInt8]) -> String {
        var value: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes { value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

@Suite struct MoveNetTests {
    static let sharedMessage = "needs ../shared/models and ../shared/data/videos (absent in a user's checkout) and ffmpeg"
    static var available: Bool {
        TestPaths.moveNetAvailable && FileManager.default.fileExists(atPath: TestPaths.videos.path)
            && MoveNetFrames.ffmpegPath != nil
    }

    @Test(.enabled(if: MoveNetTests.available, Comment(rawValue: MoveNetTests.sharedMessage)))
    func twentyRealFramesMatchLiteRTReferenceKernelsExactly() throws {
        let goldens = try NumPyArray.read(contentsOf: TestPaths.fixtures.appendingPathComponent("movenet_goldens.npy").path)
        let fingerprints = try String(contentsOf: TestPaths.fixtures.appendingPathComponent("movenet_frame_fingerprints.txt"),
                                      encoding: .utf8).split(separator: "\n").map(String.init)
        let count = goldens.shape[0]
        #expect(count >= 20)
        let frames = try MoveNetFrames.collect(count)
        try #require(frames.count == count, "ffmpeg decoded \(frames.count) frames, expected \(count)")
        let decodedFingerprints = frames.map(MoveNetFrames.fingerprint)
        try #require(decodedFingerprints == fingerprints,
                     "this ffmpeg decodes different frames than the one that made the goldens; rerun Scripts/movenet_frames.py")

        let model = try Model(contentsOf: TestPaths.moveNet.path)
        let interpreter = try Interpreter(model: model)
        #expect(interpreter.input(0).shape == [1, 192, 192, 3])
        #expect(interpreter.input(0).elementType == .uint8)
        let outputBytes = 17 * 3 * 4
        var worst: Float = 0
        for (index, frame) in frames.enumerated() {
            frame.withUnsafeBytes { interpreter.inputBytes(0).copyMemory(from: $0) }
            try interpreter.invoke()
            let actual = try #require(interpreter.outputFloats(0))
            goldens.bytes.withUnsafeBytes { raw in
                for k in 0..<51 {
                    let expected = raw.loadUnaligned(fromByteOffset: index * outputBytes + k * 4, as: Float.self)
                    worst = max(worst, abs(actual[k] - expected))
                }
            }
        }
        #expect(worst == 0, "max abs difference over \(count) frames: \(worst)")
    }

    @Test(.enabled(if: TestPaths.moveNetAvailable, "needs ../shared/models (absent in a user's checkout)"))
    func moveNetLoadsWithItsDocumentedInterface() throws {
        let model = try Model(contentsOf: TestPaths.moveNet.path)
        #expect(model.inputs.map(\.shape) == [[1, 192, 192, 3]])
        #expect(model.outputs.map(\.shape) == [[1, 1, 17, 3]])
        #expect(model.outputs[0].elementType == .float32)
        #expect(model.operatorCount > 150)
        #expect(model.metadataNames.contains("min_runtime_version"))
        // The converter writes a NUL-padded version string such as "1.14.0".
        let version = try #require(model.metadata(named: "min_runtime_version"))
        #expect(version.count == 16)
        #expect(version.prefix { $0 != 0 }.allSatisfy { $0 == UInt8(ascii: ".") || (48...57).contains($0) })
        let interpreter = try Interpreter(model: model)
        #expect(interpreter.arenaByteCount > 0 && interpreter.arenaByteCount < 4 << 20)
    }
}
