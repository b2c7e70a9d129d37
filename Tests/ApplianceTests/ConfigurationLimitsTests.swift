import Testing
import Glibc
import LinuxSystem
import Outputs
@testable import Appliance

/// Hostile config files (issue 27): each is refused with one short line, at the limit it breaks and
/// before any work that grows faster than the file. None of these tests times anything: where the
/// old parser was quadratic, they check *where* the new one stops (the part, line or byte the error
/// names), which shows the work done without a clock.
@Suite struct ConfigurationLimitsTests {
    let scratch = ScratchDirectory("posewatch-config-limits")

    private func failure(_ text: String) -> ConfigurationError? {
        failure(Array(text.utf8))
    }

    private func failure(_ bytes: [UInt8]) -> ConfigurationError? {
        do {
            _ = try ApplianceConfiguration.parse(bytes, path: "/etc/posewatch/posewatch.toml")
            return nil
        } catch {
            return error
        }
    }

    private func write(_ bytes: [UInt8], to name: String) -> String {
        let path = scratch.path + "/" + name
        let file = fopen(path, "wb")!
        _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, bytes.count, file) }
        fclose(file)
        return path
    }

    /// Was quadratic (every prefix joined): 15 s for this key. Now refused at its ninth part: the key
    /// in the error is the first nine parts, so the rest of the 20,000 was never looked at.
    @Test func aKeyOfTwentyThousandPartsIsRefusedAtItsNinthPart() throws {
        let key = Array(repeating: "a", count: 20_000).joined(separator: ".")
        let error = try #require(failure(key + " = 1\n"))
        #expect(error.key == Array(repeating: "a", count: 9).joined(separator: "."))
        #expect(error.description == "/etc/posewatch/posewatch.toml:1: a.a.a.a.a.a.a.a.a: a key has at most 8 parts, table included (posewatch's have at most 3, as in leds.actions.squats)")
    }

    @Test func theTablesPartsCountTowardsAKeysDepth() throws {
        #expect(try TOMLParser.parse(Array("[a.b.c.d]\ne.f.g.h = 1\n".utf8)).get().entries.first?.key.count == 8)
        let error = try #require(failure("[a.b.c.d]\ne.f.g.h.i = 1\n"))
        #expect(error.line == 2 && error.key == "a.b.c.d.e.f.g.h.i")
    }

    @Test func aKeyOfMoreThan64BytesIsRefusedAndShownCutShort() throws {
        let longest = String(repeating: "k", count: 64)
        #expect(try TOMLParser.parse(Array("\(longest) = 1\n".utf8)).get().entries.first?.dottedKey == longest)
        let error = try #require(failure("[\(String(repeating: "t", count: 40))]\n\(String(repeating: "k", count: 30)) = 1\n"))
        #expect(error.line == 2)
        #expect(error.description == "/etc/posewatch/posewatch.toml:2: \(String(repeating: "t", count: 40)).\(String(repeating: "k", count: 23))…: a key has at most 64 bytes, table included (posewatch's longest is classifier.confidence_threshold, 31)")
    }

    /// The 600 KB key and value from the issue never reach the parser: the size is checked first. The
    /// file starts with a syntax error, so any parsing at all would have reported that instead.
    @Test func aFileOverTheSizeLimitIsRefusedBeforeParsingWithOneShortLine() throws {
        let hostile = Array("x = \u{1}\n\"forged\nline\" = \"".utf8) + [UInt8](repeating: UInt8(ascii: "v"), count: 600_000) + Array("\"\n".utf8)
        let error = try #require(failure(hostile))
        #expect(error.line == nil)
        #expect(error.description == "/etc/posewatch/posewatch.toml: the file is larger than 65536 bytes, the most a config file may be (a full one is about 3 KB): check that this is the config file")
        // Read from disk: the same line, and reading stops just past the limit.
        let path = write(hostile, to: "huge.toml")
        #expect(throws: ConfigurationError(path: path, line: nil, key: nil, problem: error.problem)) {
            try ApplianceConfiguration.load(path: path)
        }
    }

    @Test func aFileOfExactlyTheSizeLimitIsParsed() throws {
        let comment = "# " + String(repeating: "-", count: ApplianceConfiguration.maximumFileBytes - "# \n[camera]\nbuffers = 6\n".utf8.count) + "\n"
        let text = Array((comment + "[camera]\nbuffers = 6\n").utf8)
        #expect(text.count == ApplianceConfiguration.maximumFileBytes)
        #expect(try ApplianceConfiguration.parse(text, path: "p").cameraBufferCount == 6)
        #expect(try ApplianceConfiguration.load(path: write(text, to: "largest.toml")).cameraBufferCount == 6)
    }

    /// Was 25 s for 50,000 entries (the actions array was copied per entry); the file limit would
    /// allow about 4,000 short lines, and the 257th is refused.
    @Test func moreThan256SettingsAndTablesAreRefusedAtTheFirstOneOver() throws {
        let lines = (0..<TOMLLimits().maximumDefinitions).map { "k\($0) = 1\n" }.joined()
        #expect(try TOMLParser.parse(Array(lines.utf8)).get().entries.count == 256)
        let error = try #require(failure(lines + "[camera]\n"))
        #expect(error.description == "/etc/posewatch/posewatch.toml:257: more than 256 settings and tables; a posewatch config has about 20 settings and one per action LED: is this the config file?")
    }

    /// Was 31 ms for one array of 8,000 floats (release build, x86), most of it comparing
    /// Characters; arrays of arrays allocate one array each. No setting is an array, so the whole
    /// file may hold 256 elements, and the 257th is refused where it stands.
    @Test func moreThan256ArrayElementsInAFileAreRefusedAtTheFirstOneOver() throws {
        let most = "a = [" + Array(repeating: "1.5", count: 200).joined(separator: ", ") + "]\nb = [[[" + Array(repeating: "2", count: 54).joined(separator: ",") + "]]]\n"
        #expect(try TOMLParser.parse(Array(most.utf8)).get().entries.count == 2)
        let error = try #require(failure(most + "c = [\n  3,\n  4]\n"))
        #expect(error.description == "/etc/posewatch/posewatch.toml:4: c: more than 256 array elements in the file; no posewatch setting is an array")
    }

    @Test func devNullIsAnEmptyConfigButAnyOtherDeviceOrAFIFOIsRefusedWithoutReadingOrWaiting() throws {
        #expect(try ApplianceConfiguration.load(path: "/dev/null") == ApplianceConfiguration())
        #expect(throws: ConfigurationError(path: "/dev/zero", line: nil, key: nil, problem: "cannot read: is a character device, not a regular file; give the path of a regular file")) {
            try ApplianceConfiguration.load(path: "/dev/zero")
        }
        // Opening a FIFO without a writer blocks in open(2) unless it is opened non-blocking.
        let fifo = scratch.path + "/fifo.toml"
        try #require(mkfifo(fifo, 0o600) == 0)
        #expect(throws: ConfigurationError(path: fifo, line: nil, key: nil, problem: "cannot read: is a FIFO, not a regular file; give the path of a regular file")) {
            try ApplianceConfiguration.load(path: fifo)
        }
    }

    /// A quoted key or table name may hold a newline (`\n` escape), which printed raw would start a
    /// second line on stderr that looks like posewatch's own; a value may be as long as the file.
    @Test func keysTableNamesAndValuesFromTheFileAreEscapedAndCutShortInOneLine() throws {
        let forgedLine = "\\n<3>posewatch[1]: camera is back"
        var messages: [String] = []
        messages.append(try #require(failure("[camera]\n\"x\(forgedLine)\" = 1\n")).description)
        messages.append(try #require(failure("[\"camera\(forgedLine)\"]\n")).description)
        messages.append(try #require(failure("\"k\(forgedLine)\" 5\n")).description)
        let longValue = "relative\\u2028\\u202e" + String(repeating: "v", count: 60_000)
        messages.append(try #require(failure("[models]\npose = \"\(longValue)\"\n")).description)
        #expect(messages == [
            "/etc/posewatch/posewatch.toml:2: camera.x\\n<3>posewatch[1]: camera is back: unknown key (known in [camera]: device, width, height, buffers, rotation, flip, auto_controls)",
            "/etc/posewatch/posewatch.toml:1: unknown table [camera\\n<3>posewatch[1]: camera is back] (known tables: camera, models, classifier, pose, leds, journal, watchdog, leds.actions)",
            "/etc/posewatch/posewatch.toml:1: k\\n<3>posewatch[1]: camera is back: expected = after the key k\\n<3>posewatch[1]: camera is back",
            "/etc/posewatch/posewatch.toml:2: models.pose: expected an absolute path, got \"relative\\u{2028}\\u{202e}" + String(repeating: "v", count: 39) + "…",
        ])
        for message in messages {
            #expect(!message.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0 == "\u{2028}" })
            #expect(message.count < 250)
        }
    }

    @Test func aNumberTokenAndAnArrayAreCutShortToo() throws {
        let digits = String(repeating: "9", count: 30_000)
        #expect(try #require(failure("x = \(digits)\n")).description == "/etc/posewatch/posewatch.toml:1: x: \(String(repeating: "9", count: 64))… is too long for a number (at most 64 characters); strings need quotes")
        #expect(try #require(failure("x = \(String(repeating: "9", count: 64))\n")).description == "/etc/posewatch/posewatch.toml:1: x: integer \(String(repeating: "9", count: 64)) is out of range")
        let array = "[" + Array(repeating: "\"ab\"", count: 250).joined(separator: ", ") + "]"
        #expect(try #require(failure("[models]\npose = \(array)\n")).description
            == "/etc/posewatch/posewatch.toml:2: models.pose: expected a string, got [" + Array(repeating: "\"ab\"", count: 10).joined(separator: ", ") + ", \"ab…")
    }

    @Test func anEscapeIsNeverCutInTheMiddleAndEveryLineBreakingCharacterIsEscaped() {
        #expect(MessageExcerpt.plain(String(repeating: "a", count: 63) + "\u{1b}[31m") == String(repeating: "a", count: 63) + "\\u{1b}…")
        #expect(MessageExcerpt.plain("a\u{85}b\u{2029}c\r\td\u{7f}\u{202e}\"\\") == "a\\u{85}b\\u{2029}c\\r\\td\\u{7f}\\u{202e}\\\"\\\\")
        #expect(MessageExcerpt.plain(String(repeating: "é", count: 64)) == String(repeating: "é", count: 64))
    }

    @Test func aStringWithANULIsRefusedBeforeItReachesTheCLibrary() {
        #expect(failure("[camera]\ndevice = \"/dev/video0\\u0000/etc/shadow\"\n")?.description
            == "/etc/posewatch/posewatch.toml:2: camera.device: expected a string without NUL characters, got \"/dev/video0\\u{0}/etc/shadow\"")
    }

    /// Was exit 132 (a trap in LEDController) after the config had passed validation.
    @Test func runExits78WithOneLineOnAConfigWith65ActionLEDs() throws {
        let entries = (0...LEDController.maximumActionCount).map { "action\($0) = \"GPIO\($0 + 100)\"\n" }.joined()
        let config = write(Array(("[leds.actions]\n" + entries).utf8), to: "65.toml")
        let result = PosewatchProcess.run(["run", "--config", config, "--leds", "console", "--input", "/nonexistent.y4m"])
        #expect(result.status == 78)
        #expect(result.error == "posewatch: \(config):66: leds.actions.action64: more than 64 action LEDs, the most posewatch can drive; remove some from [leds.actions]\n")
    }
}
