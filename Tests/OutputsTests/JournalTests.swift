import Foundation
import LinuxSystem
import Testing
@testable import Outputs

@Suite(.serialized) struct JournalTests {
    // The reason journald cannot run is printed by JournaldInstance.unavailableReason's probe; the
    // comment here must stay a literal (Swift 6.0's @Test macro crashes on an interpolated one).
    @Test(.enabled(if: JournaldInstance.isAvailable, "needs a private systemd-journald (apt-get install systemd)"))
    func aRealJournaldStoresEveryStandardAndPosewatchField() throws {
        let journald = try JournaldInstance()
        defer { journald.stop() }
        let identifier = "posewatch-test-\(getpid())"
        let logger = Logger(identifier: identifier, level: .info, destination: .journal(try JournalSocket(path: journald.socketPath, sendBufferSize: 64 * 1024)))

        let line = #line + 1
        logger.notice("squats: rep 12", LogFields(
            event: .rep, action: "squats", confidence: 0.87654, reps: 12, fps: 14.96, droppedFrames: 3,
            inferenceMilliseconds: 41.237, extra: [LogField("seconds_squats", .decimal(73.25, fractionDigits: 1))]))
        logger.error("camera lost\n<2>forged\u{1b}[2J\u{07}", LogFields(event: .camera))
        let big = String(repeating: "x", count: 300_000)
        logger.info(big, LogFields(event: .summary))
        logger.debug("not written: below the level")

        guard case .journal(let socket) = logger.destination else { return }
        #expect(socket.entriesSentByDescriptor == 1, "the 300 kB entry should go through a memfd")
        #expect(logger.entriesWrittenToStandardError == 0)

        let entries = try journald.waitForEntries(matching: "SYSLOG_IDENTIFIER=\(identifier)", count: 3)
        try #require(entries.count == 3, "journald stored \(entries.count) entries")
        let rep = entries[0]
        // The stored entry as journalctl -o json shows it (without the cursor and timestamps), for the record.
        let shown = rep.filter { !$0.key.hasPrefix("__") && !["_BOOT_ID", "_MACHINE_ID", "_HOSTNAME", "_CAP_EFFECTIVE", "_RUNTIME_SCOPE"].contains($0.key) }
        if let json = try? JSONSerialization.data(withJSONObject: shown, options: [.sortedKeys]) {
            print("journalctl -o json: \(String(decoding: json, as: UTF8.self))")
        }
        #expect(rep["MESSAGE"] as? String == "squats: rep 12")
        #expect(rep["PRIORITY"] as? String == "5")
        #expect(rep["SYSLOG_IDENTIFIER"] as? String == identifier)
        #expect(rep["CODE_FILE"] as? String == "OutputsTests/JournalTests.swift")
        #expect(rep["CODE_LINE"] as? String == String(line))
        #expect(rep["CODE_FUNC"] as? String == "aRealJournaldStoresEveryStandardAndPosewatchField()")
        #expect(rep["POSEWATCH_EVENT"] as? String == "rep")
        #expect(rep["ACTION"] as? String == "squats")
        #expect(rep["CONFIDENCE"] as? String == "0.877")
        #expect(rep["REPS"] as? String == "12")
        #expect(rep["FPS"] as? String == "15.0")
        #expect(rep["DROPPED_FRAMES"] as? String == "3")
        #expect(rep["INFERENCE_MS"] as? String == "41.24")
        #expect(rep["SECONDS_SQUATS"] as? String == "73.3")
        #expect(rep["_TRANSPORT"] as? String == "journal")
        #expect(rep["_PID"] as? String == String(getpid()))

        let camera = entries[1]
        #expect(camera["MESSAGE"] as? String == #"camera lost\n<2>forged\u{1b}[2J\u{7}"#)
        #expect(camera["PRIORITY"] as? String == "3")
        #expect(camera["POSEWATCH_EVENT"] as? String == "camera")

        let summary = entries[2]
        #expect((summary["MESSAGE"] as? String)?.utf8.count == 300_000)
        #expect(summary["POSEWATCH_EVENT"] as? String == "summary")
    }

    @Test func withoutAJournalEntriesBecomeStandardErrorLinesWithPriorityPrefixes() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let logger = Logger(destination: .journal(try JournalSocket(path: "/nonexistent/journal/socket")))
        logger.fallbackFileDescriptor = ends[1]
        logger.warning("camera slow", LogFields(event: .camera, action: "no_person", fps: 7.25))
        logger.error("two\n<2>forged \u{1b}]0;title\u{07}", LogFields(extra: [LogField("detail", .string("a b\n<2>x\u{1b}"))]))
        close(ends[1])
        #expect(logger.entriesWrittenToStandardError == 2)
        #expect(readAll(ends[0]) == #"""
            <4>camera slow POSEWATCH_EVENT=camera ACTION=no_person FPS=7.3
            <3>two\n<2>forged \u{1b}]0;title\u{7} DETAIL="a b\n<2>x\u{1b}"

            """#)
    }

    @Test func theJournalEncodingEscapesControlCharactersSoAMessageIsOneLine() {
        var buffer = ByteBuffer(capacity: 8)  // tiny on purpose: the encoder must grow it
        buffer.encodeJournalEntry(
            level: .info, message: "a\n<2>b\u{1b}[31m\u{07}\u{85}\u{2028}\u{202e}é ×", fields: LogFields(event: .start, action: "x\ny", reps: -4),
            identifier: "posewatch", location: SourceLocation(file: "F.swift", function: "f()", line: 7))
        let expected = #"MESSAGE=a\n<2>b\u{1b}[31m\u{7}\u{85}\u{2028}\u{202e}é ×"# + "\n"
            + "PRIORITY=6\nSYSLOG_IDENTIFIER=posewatch\nCODE_FILE=F.swift\nCODE_LINE=7\nCODE_FUNC=f()\nPOSEWATCH_EVENT=start\n"
            + #"ACTION=x\ny"# + "\nREPS=-4\n"
        #expect(String(decoding: buffer.bytes, as: UTF8.self) == expected)
    }

    @Test func theStandardErrorFormIsOneLineWhateverTheMessageHolds() {
        var buffer = ByteBuffer(capacity: 8)
        buffer.encodeStandardErrorLine(level: .error, message: "bad \u{1b}[2J\r\n<2>forged\u{9b}", fields: LogFields(event: .camera))
        let line = String(decoding: buffer.bytes, as: UTF8.self)
        #expect(line == #"<3>bad \u{1b}[2J\r\n<2>forged\u{9b} POSEWATCH_EVENT=camera"# + "\n")
        #expect(line.utf8.filter { $0 < 0x20 } == [UInt8(ascii: "\n")])
    }

    @Test func disabledLevelsNeverEvaluateTheirMessageOrFields() {
        let recorder = LogRecorder()
        let logger = Logger(level: .warning, destination: .memory(recorder))
        var evaluated = 0
        func expensive() -> String { evaluated += 1; return "expensive" }
        func fields() -> LogFields { evaluated += 1; return LogFields(event: .action) }
        logger.debug(expensive(), fields())
        logger.info(expensive(), fields())
        #expect(evaluated == 0)
        logger.warning(expensive(), fields())
        #expect(evaluated == 2)
        #expect(recorder.entries.map(\.message) == ["expensive"])
    }

    @Test func anErrorEpisodeIsLoggedOnceWhenItStartsAndOnceWhenItEndsWithTheCount() {
        let recorder = LogRecorder()
        let logger = Logger(destination: .memory(recorder))
        var episode = ErrorEpisode()
        for step in 0..<50 {
            logger.error(in: &episode, at: MonotonicInstant(nanoseconds: Int64(step) * 100_000_000), "camera read failed", LogFields(event: .camera))
        }
        logger.recovered(from: &episode, at: MonotonicInstant(nanoseconds: 6_000_000_000), "camera back", LogFields(event: .camera))
        logger.recovered(from: &episode, at: MonotonicInstant(nanoseconds: 7_000_000_000), "camera back", LogFields(event: .camera))
        #expect(recorder.entries.count == 2)
        #expect(recorder.entries[0].level == .error)
        #expect(recorder.entries[1].level == .notice)
        #expect(recorder.entries[1].fields.episodeFailures == 50)
        #expect(recorder.entries[1].fields.episodeSeconds == 6.0)
        #expect(recorder.entries[1].fields.extra.isEmpty)
        #expect(!episode.isActive)
    }

    @Test func extraFieldNamesAreMadeValidForJournald() {
        #expect(LogField("seconds per action", .integer(1)).name == "SECONDS_PER_ACTION")
        #expect(LogField("_PID", .integer(1)).name == "X_PID")
        #expect(LogField("9lives", .integer(1)).name == "X9LIVES")
        #expect(LogField("", .integer(1)).name == "X")
    }

    @Test func numbersAreFormattedWithoutFoundation() {
        func text(_ body: (inout ByteBuffer) -> Void) -> String {
            var buffer = ByteBuffer(capacity: 4)
            body(&buffer)
            return String(decoding: buffer.bytes, as: UTF8.self)
        }
        #expect(text { $0.append(integer: 0) } == "0")
        #expect(text { $0.append(integer: Int.min) } == "-9223372036854775808")
        #expect(text { $0.append(integer: Int.max) } == "9223372036854775807")
        #expect(text { $0.append(decimal: 0.0005, fractionDigits: 3) } == "0.001")
        #expect(text { $0.append(decimal: -1.25, fractionDigits: 1) } == "-1.3")
        #expect(text { $0.append(decimal: -0.0001, fractionDigits: 2) } == "0.00")
        #expect(text { $0.append(decimal: 12.0, fractionDigits: 0) } == "12")
        #expect(text { $0.append(decimal: .nan, fractionDigits: 2) } == "nan")
        #expect(text { $0.append(decimal: -.infinity, fractionDigits: 2) } == "-inf")
    }
}

func readAll(_ fd: Int32) -> String {
    var result: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = read(fd, &chunk, chunk.count)
        if count <= 0 { break }
        result += chunk.prefix(count)
    }
    return String(decoding: result, as: UTF8.self)
}
