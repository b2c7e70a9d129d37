import LinuxSystem
import Testing

@Suite struct MessageExcerptTests {
    /// A hostile value: a newline, then what looks like the doctor's verdict and a journal priority
    /// line, with an ESC sequence (clear screen), a BEL and a C1 CSI.
    static let hostile = "x\nverdict: ready (exit 0)\r\n<2>forged\u{1b}[2J\u{07}\u{9b}"

    @Test func plainTextEscapesEveryControlCharacterQuoteAndBackslash() {
        #expect(MessageExcerpt.plain(Self.hostile) == #"x\nverdict: ready (exit 0)\r\n<2>forged\u{1b}[2J\u{7}\u{9b}"#)
        #expect(MessageExcerpt.plain("a\"b\\c\td") == #"a\"b\\c\td"#)
        #expect(MessageExcerpt.plain("\u{2028}\u{2029}\u{202e}\u{2066}\u{200f}\u{7f}\u{85}") == #"\u{2028}\u{2029}\u{202e}\u{2066}\u{200f}\u{7f}\u{85}"#)
        #expect(MessageExcerpt.plain("/dev/video0 é ×") == "/dev/video0 é ×")
    }

    @Test func quotedTextIsInDoubleQuotes() {
        #expect(MessageExcerpt.quoted("a\"\n") == #""a\"\n""#)
    }

    @Test func longTextIsCutWithAnEllipsisAndAnEscapeIsNeverCutInHalf() {
        let long = String(repeating: "a", count: 10_000)
        #expect(MessageExcerpt.plain(long) == String(repeating: "a", count: MessageExcerpt.maximumLength) + "…")
        #expect(MessageExcerpt.path(long) == String(repeating: "a", count: MessageExcerpt.maximumPathLength) + "…")
        #expect(MessageExcerpt.escapedWhole(long) == long)
        let escapeAtTheEnd = String(repeating: "a", count: MessageExcerpt.maximumLength - 1) + "\u{1b}b"
        #expect(MessageExcerpt.plain(escapeAtTheEnd) == String(repeating: "a", count: MessageExcerpt.maximumLength - 1) + #"\u{1b}…"#)
    }

    @Test func pathsKeepTheirWholeNameWhenItFits() {
        #expect(MessageExcerpt.path("/var/lib/posewatch/clip one.y4m") == "/var/lib/posewatch/clip one.y4m")
        #expect(MessageExcerpt.path("/tmp/a\n<2>b") == #"/tmp/a\n<2>b"#)
    }

    @Test func oneLineEscapesControlsOnlyAndLeavesCleanTextAlone() {
        let line = MessageExcerpt.oneLine("posewatch: \"" + Self.hostile + "\" \\ é")
        #expect(line == #"posewatch: "x\nverdict: ready (exit 0)\r\n<2>forged\u{1b}[2J\u{7}\u{9b}" \ é"#)
        #expect(!line.unicodeScalars.contains { MessageExcerpt.mustBeEscaped($0) })
        #expect(MessageExcerpt.oneLine("already \\u{1b} \"clean\"") == "already \\u{1b} \"clean\"")
    }
}
