import Testing
import Glibc
import InferenceCore

/// Issue 27: every bad command line exits 2 (`ExitStatus.usage`, what the README and `--help`
/// say) with one line on standard error, however the mistake is made; numbers that used to trap
/// (nan, inf, 1e300, 1e-300, Int.max) are refused with the range that is allowed.
@Suite(.serialized) struct CommandLineTests {
    let scratch = ScratchDirectory("posewatch-command-line-test")

    /// Bad command lines for every subcommand. Paths need not exist: arguments are checked first.
    static let badCommandLines: [[String]] = [
        // run (also the default subcommand)
        ["run", "--bogus"], ["--bogus"], ["run", "--fps"], ["run", "--leds", "blue"],
        ["run", "--fps", "-1"], ["run", "--fps", "0"], ["run", "--fps", "nan"], ["run", "--fps", "inf"],
        ["run", "--fps", "1e300"], ["run", "--fps", "1e-300"], ["run", "--fps", "241"], ["run", "--fps", "fast"],
        ["run", "--device", "/dev/video0", "--input", "clip.y4m"], ["run", "extra"],
        // replay
        ["replay"], ["replay", "kp.npy", "--bogus"], ["replay", "kp.npy", "--fps", "-1"], ["replay", "kp.npy", "--fps", "nan"],
        ["replay", "kp.npy", "--fps", "1e-300"], ["replay", "kp.npy", "--fps", "-inf"], ["replay", "kp.npy", "--fps", "0"],
        ["replay", "kp.npy", "--format", "xml"], ["replay", "kp.npy", "--action", "cartwheels"],
        ["replay", "kp.npy", "--frame-size", "0x480"], ["replay", "kp.npy", "--frame-size", "99999999999999999999x2"],
        ["replay", "kp.npy", "--demo"],
        // snapshot
        ["snapshot", "--input", "clip.y4m"], ["snapshot", "--output", "o.png"],
        ["snapshot", "--input", "clip.y4m", "--output", "o.png", "--at", "-1"],
        ["snapshot", "--input", "clip.y4m", "--output", "o.png", "--at", "nan"],
        ["snapshot", "--input", "clip.y4m", "--output", "o.png", "--at", "1e300"],
        ["snapshot", "--input", "clip.y4m", "--output", "o.png", "--fps", "inf"],
        ["snapshot", "--input", "clip.y4m", "--output", "o.png", "--fps", "1e300"],
        // doctor
        ["doctor", "--fps", "-1"], ["doctor", "--fps", "nan"], ["doctor", "--fps", "0"], ["doctor", "--leds", "blue"], ["doctor", "--bogus"],
        // bench
        ["bench"], ["bench", "m.tflite", "--iterations", "9223372036854775807"], ["bench", "m.tflite", "--iterations", "0"],
        ["bench", "m.tflite", "--iterations", "-1"], ["bench", "m.tflite", "--iterations", "1e3"],
        ["bench", "m.tflite", "--iterations", "99999999999999999999"], ["bench", "m.tflite", "--warmup", "-1"],
        ["bench", "m.tflite", "--warmup", "9223372036854775807"], ["bench", "m.tflite", "--threads", "0"],
        ["bench", "m.tflite", "--threads", "65"], ["bench", "m.tflite", "--threads", "-4"],
        // model
        ["model", "inspect"], ["model", "frobnicate", "m.tflite"], ["model", "run", "m.tflite"],
        ["model", "run", "m.tflite", "--output", "o.npy", "--repeat", "0"],
        ["model", "run", "m.tflite", "--output", "o.npy", "--repeat", "-1"],
        ["model", "run", "m.tflite", "--output", "o.npy", "--repeat", "9223372036854775807"],
        // the top level
        ["frobnicate"],
    ]

    @Test("Every bad command line exits 2 with one line on standard error and nothing on standard output",
          arguments: badCommandLines)
    func badCommandLinesExitTwoWithOneLine(_ arguments: [String]) {
        let result = PosewatchProcess.run(arguments)
        #expect(result.status == 2, "\(arguments) exited \(result.status): \(result.error)")
        let lines = result.error.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("posewatch: "), "\(arguments): \(result.error)")
        #expect(result.output.isEmpty, "\(arguments): \(result.output)")
    }

    @Test("A refused number names the option, the allowed range and what was given", arguments: [
        (["replay", "kp.npy", "--fps", "-1"], "posewatch: --fps must be a number from 1 to 240 (frames per second), not -1"),
        (["run", "--fps", "nan"], "posewatch: --fps must be a number from 1 to 240 (frames per second), not nan"),
        (["snapshot", "--input", "c.y4m", "--output", "o.png", "--at", "1e300"], "posewatch: --at must be a number from 0 to 86400 (seconds), not 1e300"),
        (["bench", "m.tflite", "--iterations", "9223372036854775807"],
         "posewatch: --iterations must be a whole number from 1 to 100000 (timed invokes), not 9223372036854775807"),
        (["bench", "m.tflite", "--threads", "65"], "posewatch: --threads must be a whole number from 1 to 64 (threads), not 65"),
        (["model", "run", "m.tflite", "--output", "o.npy", "--repeat", "0"],
         "posewatch: --repeat must be a whole number from 1 to 1000000 (runs), not 0"),
    ] as [([String], String)])
    func refusalsSayTheRange(_ arguments: [String], _ expected: String) {
        let result = PosewatchProcess.run(arguments)
        #expect(result.error == expected + "\n", "\(arguments)")
    }

    @Test("Help and version still print to standard output and exit 0", arguments: [
        ["--help"], ["--version"], ["help", "bench"], ["run", "--help"], ["replay", "--help"], ["model", "run", "--help"],
    ])
    func helpAndVersionExitZero(_ arguments: [String]) {
        let result = PosewatchProcess.run(arguments)
        #expect(result.status == 0, "\(arguments): \(result.error)")
        #expect(!result.output.isEmpty && result.error.isEmpty, "\(arguments)")
    }

    @Test("Help shows the allowed ranges")
    func helpShowsRanges() {
        #expect(PosewatchProcess.run(["replay", "--help"]).output.contains("1 to 240 fps"))
        #expect(PosewatchProcess.run(["bench", "--help"]).output.contains("1 to 100000"))
    }

    @Test("Replay exits 78 when the configured pose model is missing, and 2 when --pose-model is")
    func replayModelErrorsFollowWhereThePathCameFrom() throws {
        let clip = scratch.path + "/clip.y4m"
        let file = fopen(clip, "wb")!
        let frame = [UInt8](repeating: 128, count: 64 * 64 * 3 / 2)
        fputs("YUV4MPEG2 W64 H64 F15:1 C420jpeg\n", file)
        for _ in 0..<2 { fputs("FRAME\n", file); fwrite(frame, 1, frame.count, file) }
        fclose(file)
        let config = try writeText(scratch.path + "/missing-model.toml", "[models]\npose = \"\(scratch.path)/no-movenet.tflite\"\n")

        let configured = PosewatchProcess.run(["replay", clip, "--config", config])
        #expect(configured.status == 78, "\(configured.error)")
        #expect(configured.error.contains("set models.pose in the config file"))
        #expect(configured.error.split(separator: "\n").count == 1)

        let given = PosewatchProcess.run(["replay", clip, "--config", "/dev/null", "--pose-model", scratch.path + "/nothing.tflite"])
        #expect(given.status == 2, "\(given.error)")
        #expect(given.error.contains("(--pose-model) does not exist"))
    }

    @Test("Run's missing-model message suggests only what run can do")
    func runDoesNotSuggestAnOptionItLacks() throws {
        let config = try writeText(scratch.path + "/missing-model.toml", "[models]\npose = \"\(scratch.path)/no-movenet.tflite\"\n")
        let result = PosewatchProcess.run(["run", "--leds", "console", "--config", config])
        #expect(result.status == 78, "\(result.error)")
        #expect(result.error.contains("set models.pose in the config file"), "\(result.error)")
        #expect(!result.error.contains("--pose-model"), "\(result.error)")
    }

    @Test("10,000 repeated options are refused at once with one line (ArgumentParser took 20 s over 20,000)")
    func aFloodOfArgumentsIsRefusedBeforeParsing() {
        let flood = Array(repeating: ["--format", "text"], count: 5_000).flatMap { $0 }
        var started = timespec(), ended = timespec()
        clock_gettime(CLOCK_MONOTONIC, &started)
        let result = PosewatchProcess.run(["replay", "--demo"] + flood)
        clock_gettime(CLOCK_MONOTONIC, &ended)
        #expect(result.status == 2)
        #expect(result.error == "posewatch: 10002 command-line arguments are more than any command takes (at most 1000); check the command line\n")
        #expect(result.output.isEmpty)
        #expect(ended.tv_sec - started.tv_sec < 5)
    }

    func writeText(_ path: String, _ text: String) throws -> String {
        let file = try #require(fopen(path, "w"))
        fputs(text, file)
        fclose(file)
        return path
    }
}
