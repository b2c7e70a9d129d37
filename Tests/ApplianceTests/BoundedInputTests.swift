import Testing
import Glibc
@testable import Appliance

/// A `.npy` keypoint file of `frames` frames whose data is a hole (`ftruncate`): megabytes long,
/// a few KiB on disk, all zero (nobody seen). `holding` cuts the data to that many bytes, so the
/// header claims more than the file holds.
func writeSparseKeypointFile(_ path: String, frames: Int, holding: Int? = nil) {
    var header = "{'descr': '<f4', 'fortran_order': False, 'shape': (\(frames), 17, 3), }"
    let total = 10 + header.utf8.count + 1
    header += String(repeating: " ", count: (64 - total % 64) % 64) + "\n"
    let length = header.utf8.count
    let prefix: [UInt8] = [0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59, 1, 0, UInt8(length & 0xFF), UInt8(length >> 8)] + Array(header.utf8)
    let file = fopen(path, "wb")!
    _ = prefix.withUnsafeBytes { fwrite($0.baseAddress, 1, prefix.count, file) }
    fflush(file)
    ftruncate(fileno(file), off_t(prefix.count + (holding ?? frames * 17 * 3 * 4)))
    fclose(file)
}

/// Inputs that cost a lot for their size: sparse keypoint files, clips none of whose frames decode.
@Suite final class BoundedInputTests {
    let scratch = ScratchDirectory("posewatch-bounded-input-test")
    var directory: String { scratch.path }

    /// stderr without the journal's field lines, for "one line" checks.
    static func messageLines(_ error: String) -> [Substring] {
        error.split(separator: "\n").filter { !$0.hasPrefix("POSEWATCH_") && !$0.hasPrefix("PRIORITY=") && !$0.hasPrefix("CODE_") }
    }

    @Test("A sparse keypoint file of 3,000,000 frames (4 KiB on disk) is refused from its header with one line, exit 2")
    func tooManyKeypointFramesAreRefused() {
        let path = directory + "/sparse.npy"
        writeSparseKeypointFile(path, frames: 3_000_000)
        let result = PosewatchProcess.run(["replay", path, "--fps", "30", "--config", "/dev/null"])
        #expect(result.status == 2)
        #expect(result.error == "posewatch replay: \(path): 3000000 frames of keypoints, more than the \(KeypointFile.maximumFrameCount) posewatch replays; split the file\n")
        #expect(result.output.isEmpty)
    }

    @Test("A keypoint file whose header claims more frames than the file holds is refused with one line, exit 2")
    func aKeypointFileShorterThanItsHeaderIsRefused() {
        let path = directory + "/short.npy"
        writeSparseKeypointFile(path, frames: 200_000, holding: 4096)
        let result = PosewatchProcess.run(["replay", path, "--fps", "30", "--config", "/dev/null"])
        #expect(result.status == 2)
        #expect(result.error == "posewatch replay: \(path): .npy data is 4096 bytes, shorter than the 40800000 that shape [200000, 17, 3] of float32 needs\n")
    }

    @Test("A keypoint file of the most frames allowed is read through a 64 KiB window, every frame once, nobody in any")
    func keypointsAreReadThroughAWindow() throws {
        let path = directory + "/longest.npy"
        writeSparseKeypointFile(path, frames: KeypointFile.maximumFrameCount)
        var file = try KeypointFile(path: path)
        var frames = 0, people = 0
        while let (frame, pose) = try file.nextPose() {
            #expect(frame == frames)
            frames += 1
            if pose != nil { people += 1 }
        }
        #expect(frames == KeypointFile.maximumFrameCount)
        #expect(people == 0)
        // The file's data is 44 MB: only the window is held.
        #expect(file.bufferedByteCount <= KeypointFile.windowByteCount)
    }

    @Test("A NaN in a keypoint file's last frame refuses the file before any pose is handed out")
    func aLateNaNRefusesTheWholeFile() throws {
        let path = directory + "/nan.npy"
        let frames = 1000
        writeSparseKeypointFile(path, frames: frames)
        let file = fopen(path, "r+b")!
        fseek(file, -4, SEEK_END)
        var nan = Float.nan
        fwrite(&nan, 4, 1, file)
        fclose(file)
        do {
            _ = try KeypointFile(path: path)
            Issue.record("a file with a NaN opened")
        } catch {
            #expect(error.description == "\(path): keypoints contain NaN or infinity (frame \(frames - 1))")
        }
    }

    /// `copies` copies of a fixture from Tests/CaptureTests/Fixtures back to back, as an MJPEG clip.
    func clip(of fixture: String, copies: Int) -> String {
        let root = String(#filePath).split(separator: "/", omittingEmptySubsequences: false).dropLast(2).joined(separator: "/")
        let source = fopen(root + "/CaptureTests/Fixtures/" + fixture, "rb")!
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = fread(&buffer, 1, buffer.count, source)
            if count == 0 { break }
            bytes += buffer[0..<count]
        }
        fclose(source)
        let path = directory + "/" + fixture + ".mjpeg"
        let file = fopen(path, "wb")!
        for _ in 0..<copies { _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, bytes.count, file) } }
        fclose(file)
        return path
    }

    func writeConfig(_ moveNet: String) -> String {
        let path = directory + "/posewatch.toml"
        let file = fopen(path, "w")!
        fputs("[models]\npose = \"\(moveNet)\"\n", file)
        fclose(file)
        return path
    }

    @Test("replay, snapshot and run --input of a clip none of whose frames decode exit 2 with one line, not 0 with 0 frames",
          .enabled(if: RunLoopTests.moveNet != nil, RunLoopTests.noMoveNet))
    func aClipOfOnlyRefusedFramesIsBadInput() throws {
        let config = writeConfig(try #require(RunLoopTests.moveNet))
        // Each frame a valid progressive JPEG of 704 scans: refused for its scan count.
        let path = clip(of: "704-scans-64x48.jpg", copies: 3)
        let expected = "\(path): none of its 3 frames could be decoded"
        let replay = PosewatchProcess.run(["replay", path, "--fps", "15", "--config", config])
        #expect(replay.status == 2)
        #expect(replay.error.hasPrefix("posewatch replay: \(expected)"), "\(replay.error)")
        #expect(Self.messageLines(replay.error).count == 1, "\(replay.error)")
        let snapshot = PosewatchProcess.run(["snapshot", "--input", path, "--fps", "15", "--output", directory + "/out.png", "--config", config])
        #expect(snapshot.status == 2)
        #expect(snapshot.error.hasPrefix("posewatch snapshot: \(expected)"), "\(snapshot.error)")
        #expect(Self.messageLines(snapshot.error).count == 1, "\(snapshot.error)")
        let run = PosewatchProcess.run(["run", "--input", path, "--fps", "15", "--leds", "console", "--config", config])
        #expect(run.status == 2)
        #expect(run.error.contains(expected), "\(run.error)")
    }

    @Test("replay of an MJPEG clip of CMYK frames exits 2 with one line naming CMYK",
          .enabled(if: RunLoopTests.moveNet != nil, RunLoopTests.noMoveNet))
    func aCMYKClipIsBadInput() throws {
        let config = writeConfig(try #require(RunLoopTests.moveNet))
        let path = clip(of: "cmyk-64x48.jpg", copies: 3)
        let replay = PosewatchProcess.run(["replay", path, "--fps", "15", "--config", config])
        #expect(replay.status == 2)
        #expect(replay.error.hasPrefix("posewatch replay: \(path): the first JPEG image is CMYK, which posewatch cannot decode"), "\(replay.error)")
        #expect(Self.messageLines(replay.error).count == 1, "\(replay.error)")
    }
}
