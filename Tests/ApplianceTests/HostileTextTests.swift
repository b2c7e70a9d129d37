import Testing
import Glibc
import CActionModel

/// Issue 43: a path, an option's value or a config value with a newline and escape codes was
/// echoed as it was: messages became several lines, ESC and BEL reached the terminal, `run` logged
/// a forged `<2>` line and `doctor` printed a second, forged `verdict: ready (exit 0)`. Every entry
/// point now repeats such text escaped, on the one line its message has.
@Suite final class HostileTextTests {
    let scratch = ScratchDirectory("posewatch-hostile-text-test")
    var directory: String { scratch.path }

    /// A newline, then what looks like doctor's verdict and a journal priority line, with an ESC
    /// sequence (clear the screen) and a BEL.
    static let hostile = "x\nverdict: ready (exit 0)\n<2>forged\u{1b}[2J\u{07}"
    /// How `hostile` reads once escaped.
    static let escaped = #"x\nverdict: ready (exit 0)\n<2>forged\u{1b}[2J\u{7}"#

    /// A file named with `hostile` (the kernel allows every byte but '/' and NUL in a name).
    func hostilePath(contents: String? = nil) -> String {
        let path = directory + "/" + Self.hostile
        if let contents {
            let file = fopen(path, "w")!
            fputs(contents, file)
            fclose(file)
        }
        return path
    }

    func writeText(_ name: String, _ text: String) -> String {
        let path = directory + "/" + name
        let file = fopen(path, "w")!
        fputs(text, file)
        fclose(file)
        return path
    }

    /// A config whose `key` in [models] holds `hostile` (written with TOML escapes, as an owner would).
    func config(models key: String) -> String {
        writeText("posewatch-\(key).toml", "[models]\n\(key) = \"/tmp/x\\nverdict: ready (exit 0)\\n<2>forged\\u001b[2J\\u0007\"\n")
    }

    /// The checks every output with `hostile` in it must pass: `lines` lines (the last one ended),
    /// no control character but those line ends, no line that starts with a forged verdict or
    /// priority, and the hostile text shown escaped.
    static func expectSafe(_ text: String, lines: Int, _ what: String) {
        #expect(text.hasSuffix("\n"), "\(what): \(text)")
        #expect(text.split(separator: "\n", omittingEmptySubsequences: false).count - 1 == lines,
                "\(what): \(text)")
        let controls = text.unicodeScalars.filter { $0 != "\n" && ($0.value < 0x20 || (0x7F...0x9F).contains($0.value)) }
        #expect(controls.isEmpty, "\(what): raw control characters \(controls.map(\.value))")
        for line in text.split(separator: "\n") {
            #expect(!line.hasPrefix("verdict: ready") && !line.hasPrefix("<2>forged"), "\(what): forged line \(line)")
        }
        #expect(text.contains(#"\n<2>forged\u{1b}[2J\u{7}"#), "\(what): \(text)")
    }

    @Test("replay of a hostile path: one line on stderr, exit 2")
    func replayPath() {
        let result = PosewatchProcess.run(["replay", hostilePath(), "--config", "/dev/null"])
        #expect(result.status == 2)
        #expect(result.error == "posewatch replay: open \(directory)/\(Self.escaped): No such file or directory\n")
        Self.expectSafe(result.error, lines: 1, "replay")
    }

    @Test("model inspect of a damaged model with a hostile path: one line on stderr, exit 2")
    func modelInspectPath() {
        let result = PosewatchProcess.run(["model", "inspect", hostilePath(contents: "garbage")])
        #expect(result.status == 2)
        #expect(result.output.isEmpty)
        Self.expectSafe(result.error, lines: 1, "model inspect")
    }

    /// The built-in classifier with strings of the file replaced in place by hostile ones of the same
    /// length (so the flatbuffer stays valid): the description, a metadata name, a tensor name.
    func hostileClassifier() -> (plain: String, hostile: String) {
        let bytes = Array(UnsafeRawBufferPointer(start: pw_embedded_classifier_bytes(), count: pw_embedded_classifier_size()))
        var patched = bytes
        func replace(_ old: String, _ new: String) {
            let (old, new) = (Array(old.utf8), Array(new.utf8))
            precondition(old.count == new.count, "\(old.count) != \(new.count)")
            let start = (0...(patched.count - old.count)).first { patched[$0..<($0 + old.count)].elementsEqual(old) }!
            patched.replaceSubrange(start..<(start + old.count), with: new)
        }
        replace("MLIR Converted.", "\n<2>forged\u{1b}[2J\u{07}")
        replace("CONVERSION_METADATA", "\nverdict: ready\u{1b}\u{07}xx")
        replace("Identity_1", "\n<2>xx\u{1b}[2J")
        func write(_ name: String, _ bytes: [UInt8]) -> String {
            let path = directory + "/" + name
            let file = fopen(path, "wb")!
            _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
            fclose(file)
            return path
        }
        return (write("classifier.tflite", bytes), write("hostile.tflite", patched))
    }

    @Test("model inspect of a model whose description, metadata and tensor names are hostile: the same lines, escaped")
    func modelInspectNamesFromTheFile() {
        let models = hostileClassifier()
        let plain = PosewatchProcess.run(["model", "inspect", models.plain])
        let result = PosewatchProcess.run(["model", "inspect", models.hostile])
        #expect(plain.status == 0 && result.status == 0, "\(result.error)")
        let expectedLines = plain.output.split(separator: "\n", omittingEmptySubsequences: false).count - 1
        Self.expectSafe(result.output, lines: expectedLines, "model inspect")
        #expect(result.output.contains(#"description: \n<2>forged\u{1b}[2J\u{7}"#), "\(result.output)")
        #expect(result.output.contains(#"\nverdict: ready\u{1b}\u{7}xx"#), "\(result.output)")
        // The state output's line, its shape as the plain file gives it (the model's, not this test's).
        let stateLine = "  Identity_1  "
        let stateShape = plain.output.split(separator: "\n").first { $0.hasPrefix(stateLine) }?.dropFirst(stateLine.count)
        #expect(stateShape != nil, "\(plain.output)")
        #expect(result.output.contains(#"  \n<2>xx\u{1b}[2J  "# + (stateShape ?? "?")), "\(result.output)")
    }

    @Test("bench and snapshot --input with a hostile path: one line on stderr, exit 2")
    func benchAndSnapshotPaths() {
        let bench = PosewatchProcess.run(["bench", hostilePath(contents: "garbage"), "--iterations", "1"])
        #expect(bench.status == 2)
        Self.expectSafe(bench.error, lines: 1, "bench")
        let snapshot = PosewatchProcess.run(["snapshot", "--input", hostilePath(), "--output", directory + "/out.png"])
        #expect(snapshot.status == 2)
        Self.expectSafe(snapshot.error, lines: 1, "snapshot")
    }

    @Test("A hostile option value (--action, --format, --leds, --variant, --rotation, an unknown option): one line, exit 2",
          arguments: [
            ["replay", "--demo", "--action", HostileTextTests.hostile, "--config", "/dev/null"],
            ["replay", "kp.npy", "--format", HostileTextTests.hostile],
            ["run", "--leds", HostileTextTests.hostile],
            ["doctor", "--leds", HostileTextTests.hostile],
            ["bench", "m.tflite", "--variant", HostileTextTests.hostile],
            ["replay", "kp.npy", "--rotation", HostileTextTests.hostile],
            ["replay", "kp.npy", "--fps", HostileTextTests.hostile],
          ])
    func optionValues(_ arguments: [String]) {
        let result = PosewatchProcess.run(arguments)
        #expect(result.status == 2, "\(arguments): \(result.error)")
        Self.expectSafe(result.error, lines: 1, "\(arguments)")
    }

    @Test("An unknown option with a newline and ESC in its name is one line without the ESC, exit 2")
    func unknownOption() {
        let result = PosewatchProcess.run(["replay", "--demo", "--x" + Self.hostile])
        #expect(result.status == 2)
        let lines = result.error.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 2 && lines[1].isEmpty, "\(result.error)")
        #expect(!result.error.unicodeScalars.contains { $0 == "\u{1b}" || $0 == "\u{07}" }, "\(result.error)")
        #expect(!lines.contains { $0.hasPrefix("verdict:") || $0.hasPrefix("<2>") })
    }

    @Test("models.pose and models.classifier with a hostile path: one line naming it escaped, exit 78")
    func configuredModelPaths() {
        let clip = writeText("clip.y4m", "YUV4MPEG2 W8 H8 F15:1\n")
        let pose = PosewatchProcess.run(["replay", clip, "--config", config(models: "pose")])
        #expect(pose.status == 78, "\(pose.error)")
        Self.expectSafe(pose.error, lines: 1, "models.pose")
        #expect(pose.error.hasPrefix(#"posewatch replay: pose model /tmp/x\nverdict: ready (exit 0)\n<2>forged\u{1b}[2J\u{7} is missing"#))
        let classifier = PosewatchProcess.run(["replay", "--demo", "--config", config(models: "classifier")])
        #expect(classifier.status == 78, "\(classifier.error)")
        Self.expectSafe(classifier.error, lines: 1, "models.classifier")
    }

    /// Whether `run` logs to stderr here (`<N>` lines) rather than to a journal the test cannot read.
    static let logsToStandardError = access("/run/systemd/journal/socket", F_OK) != 0
    static let journalPresent: Comment = "run logs to the journal on this machine, not to stderr"

    @Test("run with a hostile models.pose logs one <2> line, no forged one, exit 78",
          .enabled(if: logsToStandardError, journalPresent))
    func runLogsAHostileModelPathOnOneLine() {
        let clip = writeText("clip.y4m", "YUV4MPEG2 W8 H8 F15:1\n")
        let result = PosewatchProcess.run(["run", "--input", clip, "--leds", "console", "--config", config(models: "pose")])
        #expect(result.status == 78, "\(result.error)")
        Self.expectSafe(result.error, lines: 1, "run models.pose")
        #expect(result.error.hasPrefix("<2>pose model /tmp/x"), "\(result.error)")
    }

    @Test("run --input of a hostile path logs one <2> line, no forged one, exit 2",
          .enabled(if: RunLoopTests.moveNet != nil && logsToStandardError, RunLoopTests.noMoveNet))
    func runLogsAHostileInputOnOneLine() throws {
        let moveNet = try #require(RunLoopTests.moveNet)
        let configuration = writeText("posewatch.toml", "[models]\npose = \"\(moveNet)\"\n")
        let result = PosewatchProcess.run(["run", "--input", hostilePath(), "--leds", "console", "--config", configuration])
        #expect(result.status == 2, "\(result.error)")
        Self.expectSafe(result.error, lines: 1, "run --input")
        #expect(result.error.hasPrefix("<2>open \(directory)/\(Self.escaped): No such file"), "\(result.error)")
    }

    @Test("doctor --camera with a hostile name: as many lines as with a plain name, one verdict line, exit 1")
    func doctorCamera() {
        let plain = PosewatchProcess.run(["doctor", "--camera", "/dev/no-such-camera", "--leds", "console", "--config", "/dev/null"])
        let result = PosewatchProcess.run(["doctor", "--camera", Self.hostile, "--leds", "console", "--config", "/dev/null"])
        #expect(result.status == 1)
        let expectedLines = plain.output.split(separator: "\n", omittingEmptySubsequences: false).count - 1
        Self.expectSafe(result.output, lines: expectedLines, "doctor")
        #expect(result.output.split(separator: "\n").filter { $0.hasPrefix("verdict:") }.count == 1)
        #expect(result.output.contains("  [FAIL] \(Self.escaped): the configured camera does not exist"), "\(result.output)")
        #expect(result.output.split(separator: "\n").last?.hasPrefix("verdict: not ready") == true)
    }
}
