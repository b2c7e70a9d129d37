import Glibc
import Testing

/// What posewatch writes can fail (a full disk, a reader that quit) and what it writes to can be
/// what it reads: issue 43's second probe found exit status 0 with nothing written, `run` killed
/// by SIGPIPE with its LEDs left on and no final summary, and `snapshot --output` overwriting its
/// own input. Each command here runs as an owner's shell would start it (default signal
/// dispositions: the test runner's own ignored SIGPIPE would hide the old death).
@Suite struct OutputFailureTests {
    let scratch = ScratchDirectory("posewatch-output-test")
    var directory: String { scratch.path }

    static var packageRoot: String {
        String(#filePath).split(separator: "/", omittingEmptySubsequences: false).dropLast(3).joined(separator: "/")
    }
    static var classifier: String { packageRoot + "/Sources/CActionModel/action_classifier.tflite" }

    /// Runs `script` in bash with `$POSEWATCH` naming the binary; stdout and stderr each to a file.
    func shell(_ script: String) throws -> (status: Int32, output: String, error: String) {
        let output = directory + "/stdout", error = directory + "/stderr"
        let pid = try launchWithDefaultSignals(["/bin/bash", "-c", script],
                                               environment: ["POSEWATCH=\(PosewatchProcess.binary)", "PATH=/usr/bin:/bin", "LC_ALL=C"],
                                               standardOutput: output, standardError: error)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // bash reports a child killed by signal N as 128 + N.
        return ((status >> 8) & 0xFF, Self.contents(of: output), Self.contents(of: error))
    }

    static func contents(of path: String) -> String { String(decoding: bytes(of: path), as: UTF8.self) }

    static func bytes(of path: String) -> [UInt8] {
        guard let file = fopen(path, "r") else { return [] }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count == 0 { break }
            bytes += buffer[0..<count]
        }
        return bytes
    }

    func write(_ bytes: [UInt8], to path: String) {
        let file = fopen(path, "wb")!
        _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, bytes.count, file) }
        fclose(file)
    }

    // MARK: lost output

    @Test("Output to a full disk is exit 1 with one line, for replay, model inspect, --version and help")
    func aFullDiskIsAFailure() throws {
        let full = "cannot write to standard output: No space left on device"
        for script in ["\"$POSEWATCH\" replay --demo >/dev/full",
                       "\"$POSEWATCH\" model inspect '\(Self.classifier)' >/dev/full",
                       "\"$POSEWATCH\" --version >/dev/full",
                       "\"$POSEWATCH\" help run >/dev/full"] {
            let result = try shell(script)
            #expect(result.status == 1, "\(script): \(result.error)")
            #expect(result.error == "posewatch: \(full)\n", "\(script)")
        }
        // The same commands with somewhere to write still succeed.
        #expect(try shell("\"$POSEWATCH\" --version").status == 0)
    }

    @Test("A reader that quits ends replay with exit 1 and one line, not a SIGPIPE death (141)")
    func aReaderThatQuitsIsAFailureNotADeath() throws {
        // The reader closes the pipe at once (posewatch takes far longer to start than that), so
        // the first write fails whatever the size of the output.
        let result = try shell("\"$POSEWATCH\" replay --demo --format text | { exec <&-; sleep 1; }; exit ${PIPESTATUS[0]}")
        #expect(result.status == 1, "\(result.error)")
        #expect(result.error == "posewatch: cannot write to standard output: Broken pipe\n")
    }

    /// An empty room (mid-grey) for `run --input`.
    func emptyRoomClip(seconds: Int) -> String { makeEmptyRoomClip(seconds: seconds, at: directory + "/room.y4m") }

    func runConfig(_ moveNet: String) -> String {
        let path = directory + "/posewatch.toml"
        write(Array("[models]\npose = \"\(moveNet)\"\n[leds]\nbackend = \"console\"\n[journal]\nsummary_interval = 1\n".utf8), to: path)
        return path
    }

    @Test("run whose console LEDs' reader quits stops at once with exit 1, the final summary and the reason in its log",
          .enabled(if: RunLoopTests.moveNet != nil, RunLoopTests.noMoveNet))
    func runStopsWhenItsStandardOutputGoes() throws {
        let clip = emptyRoomClip(seconds: 30)
        let config = runConfig(try #require(RunLoopTests.moveNet))
        let log = directory + "/log"
        var started = timespec(), ended = timespec()
        clock_gettime(CLOCK_MONOTONIC, &started)
        let result = try shell("\"$POSEWATCH\" run --config '\(config)' --input '\(clip)' 2>'\(log)' | head -1 >/dev/null; exit ${PIPESTATUS[0]}")
        clock_gettime(CLOCK_MONOTONIC, &ended)
        #expect(result.status == 1)
        let text = Self.contents(of: log)
        #expect(text.contains("final summary POSEWATCH_EVENT=summary"), "\(text)")
        #expect(text.contains("posewatch stopped (its output is gone: Broken pipe)"), "\(text)")
        // It stopped when the reader went, not at the end of the 30 s clip.
        #expect(ended.tv_sec - started.tv_sec < 20)
    }

    @Test("run whose log reader quits stops with exit 1 and turns every LED off",
          .enabled(if: RunLoopTests.moveNet != nil, RunLoopTests.noMoveNet))
    func runStopsWhenItsLogGoesAndLeavesTheLEDsOff() throws {
        let clip = emptyRoomClip(seconds: 30)
        let config = runConfig(try #require(RunLoopTests.moveNet))
        let leds = directory + "/leds"
        let result = try shell("\"$POSEWATCH\" run --config '\(config)' --input '\(clip)' 2>&1 >'\(leds)' | head -1 >/dev/null; exit ${PIPESTATUS[0]}")
        #expect(result.status == 1)
        var last: [String: String] = [:]
        for line in Self.contents(of: leds).split(separator: "\n") where line.contains("] led ") {
            let words = line.split(separator: " ")
            last[String(words[2])] = String(words.last!)
        }
        #expect(last.count == 6 && last.values.allSatisfy { $0 == "off" }, "\(last)")
    }

    // MARK: outputs that are inputs

    @Test("snapshot refuses an output that is its input clip (by name, symbolic or hard link) or its model, before writing")
    func snapshotNeverOverwritesItsInputs() throws {
        let clip = emptyRoomClip(seconds: 1)
        let original = Self.contents(of: clip)
        let model = directory + "/pose.tflite"
        write(Array("not really a model".utf8), to: model)
        #expect(symlink(clip, directory + "/link.png") == 0)
        #expect(link(clip, directory + "/hard.png") == 0)
        for output in [clip, directory + "/./room.y4m", directory + "/link.png", directory + "/hard.png", model] {
            let result = try shell("\"$POSEWATCH\" snapshot --input '\(clip)' --pose-model '\(model)' --config /dev/null --output '\(output)'")
            #expect(result.status == 2, "\(output): \(result.error)")
            #expect(result.error == "posewatch snapshot: write \(output): is one of this command's inputs, which writing it would destroy; give another path for the output\n")
        }
        #expect(Self.contents(of: clip) == original)
        #expect(Self.contents(of: model) == "not really a model")
    }

    @Test("snapshot refuses a FIFO or a device as its output at once")
    func snapshotRefusesAnOutputThatIsNoFile() throws {
        let clip = emptyRoomClip(seconds: 1)
        let fifo = directory + "/out.png"
        #expect(mkfifo(fifo, 0o600) == 0)
        for (output, kind) in [(fifo, "a FIFO"), ("/dev/null", "a character device")] {
            let result = try shell("\"$POSEWATCH\" snapshot --input '\(clip)' --config /dev/null --output '\(output)'")
            #expect(result.status == 2)
            #expect(result.error == "posewatch snapshot: open \(output): is \(kind), not a regular file; give the path of a regular file\n")
        }
    }

    @Test("model run refuses an output that is its input or its model, and leaves both as they were")
    func modelRunNeverOverwritesItsInputs() throws {
        let input = directory + "/input.npy"
        write(Array("kept".utf8), to: input)
        // A copy of the classifier, so that a failing check could only ever overwrite the copy.
        let model = directory + "/classifier.tflite"
        let original = Self.bytes(of: Self.classifier)
        write(original, to: model)
        for output in [input, model, directory + "/../" + String(directory.split(separator: "/").last!) + "/input.npy"] {
            let result = try shell("\"$POSEWATCH\" model run '\(model)' --input '\(input)' --output '\(output)'")
            #expect(result.status == 2, "\(result.error)")
            #expect(result.error.hasSuffix("is one of this command's inputs, which writing it would destroy; give another path for the output\n"), "\(result.error)")
        }
        #expect(Self.bytes(of: model) == original)
        #expect(Self.contents(of: input) == "kept")
    }

    // MARK: files that are not files

    @Test("A /proc file as the config is refused at once (78), not read (/proc/kmsg blocked for good)")
    func aProcFileIsNotAConfig() throws {
        let result = try shell("\"$POSEWATCH\" replay --demo --config /proc/self/status")
        #expect(result.status == 78)
        #expect(result.error == "posewatch replay: /proc/self/status: cannot read: is a kernel interface (/proc, /sys), not a file on a disk; give the path of a regular file\n")
    }
}
