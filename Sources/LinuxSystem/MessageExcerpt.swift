/// Text from outside posewatch, made safe to repeat in the one-line messages it prints on stderr
/// and logs to the journal: the one escaping rule every module that builds messages uses.
///
/// A path on the command line, a value in the config file, a tensor name in a model, a camera's
/// product name from its USB descriptor may hold anything: a newline would start a line that looks
/// like one of posewatch's own (`verdict: ready (exit 0)`, a journal `<2>` line), an ESC or BEL
/// sequence would reach the terminal, and one value can be as long as its file. So every such text a
/// message repeats goes through here: quotes, backslashes and control characters (C0, DEL, C1, the
/// Unicode line and paragraph separators and the bidirectional overrides that reorder a line on
/// screen) are escaped, and the text stops after a limit with "…". The work done is bounded by the
/// limit too, whatever the input's size.
public struct MessageExcerpt {
    /// Characters of escaped text a message repeats from one key, value or name: a real key or value
    /// fits (the longest keys are about 30 characters, line names under 32), and the whole message
    /// stays one readable journal line.
    public static let maximumLength = 64

    /// Characters of escaped text a message repeats from a path: real paths fit whole (they rarely
    /// pass 100 characters), while a hostile one of 100 KB (the kernel allows such an argument)
    /// still leaves one line a terminal can show.
    public static let maximumPathLength = 256

    private var text = ""
    private var length = 0
    /// Whether something was left out (the excerpt then ends with "…").
    public private(set) var isFull = false
    private let limit: Int

    /// An empty excerpt that holds up to `limit` characters (then "…").
    public init(limit: Int = MessageExcerpt.maximumLength) { self.limit = limit }

    /// The excerpt, ending with "…" when something was left out.
    public var result: String { isFull ? text + "…" : text }

    /// Appends posewatch's own text (brackets, separators, a number's digits) as it is.
    public mutating func appendLiteral(_ literal: String) {
        for scalar in literal.unicodeScalars { guard append(scalar) else { return } }
    }

    /// Appends text from outside, escaped.
    public mutating func appendEscaping(_ untrusted: String) {
        for scalar in untrusted.unicodeScalars {
            let fits: Bool
            switch scalar {
            case "\"": fits = append("\\", "\"")
            case "\\": fits = append("\\", "\\")
            case "\n": fits = append("\\", "n")
            case "\r": fits = append("\\", "r")
            case "\t": fits = append("\\", "t")
            case _ where Self.mustBeEscaped(scalar):
                fits = appendWhole("\\u{" + String(scalar.value, radix: 16) + "}")
            default: fits = append(scalar)
            }
            guard fits else { return }
        }
    }

    /// `untrusted` escaped and cut to `limit` (a key, a name, a token, an option's value).
    public static func plain(_ untrusted: String, limit: Int = maximumLength) -> String {
        var excerpt = MessageExcerpt(limit: limit)
        excerpt.appendEscaping(untrusted)
        return excerpt.result
    }

    /// `untrusted` in double quotes, escaped and cut to `maximumLength`: `"640"`.
    public static func quoted(_ untrusted: String) -> String {
        var excerpt = MessageExcerpt()
        excerpt.appendLiteral("\"")
        excerpt.appendEscaping(untrusted)
        excerpt.appendLiteral("\"")
        return excerpt.result
    }

    /// A path the user gave or the system named, escaped and cut to `maximumPathLength`.
    public static func path(_ untrusted: String) -> String {
        var excerpt = MessageExcerpt(limit: maximumPathLength)
        excerpt.appendEscaping(untrusted)
        return excerpt.result
    }

    /// `untrusted` escaped but whole: for the config file's own path, which names the file.
    public static func escapedWhole(_ untrusted: String) -> String {
        var excerpt = MessageExcerpt(limit: .max)
        excerpt.appendEscaping(untrusted)
        return excerpt.result
    }

    /// `message` with every control character escaped (`\n`, `\u{1b}`) and nothing else changed:
    /// the last line of defence of the places that write one message as one line (stderr's
    /// one-line errors, the log), so that text a builder forgot to escape can never start a line
    /// of its own or drive the terminal. Quotes and backslashes are left as they are, since the
    /// fields inside `message` were escaped already. Returns `message` itself when nothing needs
    /// escaping, which is the usual case.
    public static func oneLine(_ message: String) -> String {
        guard message.unicodeScalars.contains(where: { mustBeEscaped($0) }) else { return message }
        var escaped = ""
        escaped.reserveCapacity(message.utf8.count + 16)
        for scalar in message.unicodeScalars {
            switch scalar {
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case _ where mustBeEscaped(scalar): escaped += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// Whether `scalar` is shown as an escape rather than itself: C0 controls (line feed, ESC, BEL
    /// included), DEL, C1 controls (U+0085 is a line break too), the line and paragraph separators,
    /// and the bidirectional marks and overrides.
    @inlinable
    public static func mustBeEscaped(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F: true
        case 0x2028, 0x2029: true
        case 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// Appends scalars while the excerpt has room; false once it is full.
    private mutating func append(_ scalars: Unicode.Scalar...) -> Bool {
        guard length < limit else { isFull = true; return false }
        text.unicodeScalars.append(contentsOf: scalars)
        length += scalars.count
        return true
    }

    /// Appends an escape sequence whole (never cut in the middle); false once the excerpt is full.
    private mutating func appendWhole(_ escape: String) -> Bool {
        guard length < limit else { isFull = true; return false }
        text += escape
        length += escape.unicodeScalars.count
        return true
    }
}
