import Testing
import Glibc

/// Every file posewatch reads from outside (clips, models, keypoint and config files) must be a
/// regular file: a FIFO once made `open` wait forever for a writer, and /dev/zero was reported as
/// "Is a directory". Each command refuses them at once with one line naming what the path is.
@Suite final class NonRegularInputTests {
    let scratch = ScratchDirectory("posewatch-nonregular-test")
    var directory: String { scratch.path }

    /// A FIFO nobody writes to: a plain `open(O_RDONLY)` of it never returns.
    func fifo(_ name: String) -> String {
        let path = directory + "/" + name
        precondition(mkfifo(path, 0o600) == 0, "mkfifo \(path)")
        return path
    }

    static let advice = ", not a regular file; give the path of a regular file"

    /// stderr without the journal's field lines, for "one line" checks.
    static func messageLines(_ error: String) -> [Substring] {
        error.split(separator: "\n").filter { !$0.hasPrefix("POSEWATCH_") && !$0.hasPrefix("PRIORITY=") && !$0.hasPrefix("CODE_") }
    }

    @Test("replay of a FIFO clip, a FIFO keypoint file, /dev/zero or a directory exits 2 with what the path is")
    func replayRefusesNonRegularInputs() {
        let clip = fifo("clip.y4m")
        let result = PosewatchProcess.run(["replay", clip, "--config", "/dev/null"])
        #expect(result.status == 2)
        #expect(result.error == "posewatch replay: open \(clip): is a FIFO\(Self.advice)\n")
        let keypoints = fifo("poses.npy")
        let npy = PosewatchProcess.run(["replay", keypoints, "--fps", "15", "--config", "/dev/null"])
        #expect(npy.status == 2)
        #expect(npy.error.contains("\(keypoints): cannot read: is a FIFO\(Self.advice)"), "\(npy.error)")
        let zero = PosewatchProcess.run(["replay", "/dev/zero", "--config", "/dev/null"])
        #expect(zero.status == 2)
        #expect(zero.error == "posewatch replay: open /dev/zero: is a character device\(Self.advice)\n")
        let folder = PosewatchProcess.run(["replay", directory, "--config", "/dev/null"])
        #expect(folder.status == 2)
        #expect(folder.error == "posewatch replay: open \(directory): is a directory\(Self.advice)\n")
    }

    @Test("snapshot --input of a FIFO exits 2 with one line")
    func snapshotRefusesAFIFO() {
        let clip = fifo("clip.mjpeg")
        let result = PosewatchProcess.run(["snapshot", "--input", clip, "--output", directory + "/out.png"])
        #expect(result.status == 2)
        #expect(result.error == "posewatch snapshot: open \(clip): is a FIFO\(Self.advice)\n")
    }

    @Test("A FIFO or /dev/zero as the config file is a configuration error (78) naming it; /dev/null is an empty config")
    func aNonRegularConfigIsRefused() {
        let config = fifo("posewatch.toml")
        let result = PosewatchProcess.run(["replay", "--demo", "--config", config])
        #expect(result.status == 78)
        #expect(result.error == "posewatch replay: \(config): cannot read: is a FIFO\(Self.advice)\n")
        let zero = PosewatchProcess.run(["replay", "--demo", "--config", "/dev/zero"])
        #expect(zero.status == 78)
        #expect(zero.error.contains("/dev/zero: cannot read: is a character device\(Self.advice)"), "\(zero.error)")
        let empty = PosewatchProcess.run(["replay", "--demo", "--config", "/dev/null"])
        #expect(empty.status == 0, "\(empty.error)")
    }

    @Test("A FIFO as the pose model is refused with one line, for model inspect and for run (exit 78)")
    func aFIFOModelIsRefused() {
        let model = fifo("movenet.tflite")
        let inspect = PosewatchProcess.run(["model", "inspect", model])
        #expect(inspect.status != 0)
        #expect(inspect.error.contains("open \(model): is a FIFO\(Self.advice)"), "\(inspect.error)")
        #expect(Self.messageLines(inspect.error).count == 1, "\(inspect.error)")

        let config = directory + "/posewatch.toml"
        let file = fopen(config, "w")!
        fputs("[models]\npose = \"\(model)\"\n", file)
        fclose(file)
        let clip = directory + "/clip.y4m"
        let clipFile = fopen(clip, "w")!
        fputs("YUV4MPEG2 W8 H8 F15:1\n", clipFile)
        fclose(clipFile)
        let run = PosewatchProcess.run(["run", "--input", clip, "--leds", "console", "--config", config])
        #expect(run.status == 78)
        #expect(run.error.contains("open \(model): is a FIFO\(Self.advice)"), "\(run.error)")
    }

    @Test("run --input of a FIFO exits 2 with one line instead of waiting for a writer",
          .enabled(if: RunLoopTests.moveNet != nil, RunLoopTests.noMoveNet))
    func runRefusesAFIFOInput() throws {
        let moveNet = try #require(RunLoopTests.moveNet)
        let config = directory + "/posewatch.toml"
        let file = fopen(config, "w")!
        fputs("[models]\npose = \"\(moveNet)\"\n", file)
        fclose(file)
        let clip = fifo("clip.y4m")
        let result = PosewatchProcess.run(["run", "--input", clip, "--leds", "console", "--config", config])
        #expect(result.status == 2)
        #expect(result.error.contains("open \(clip): is a FIFO\(Self.advice)"), "\(result.error)")
    }
}
