/// Keys and values from a config file, made safe to repeat in the one-line messages posewatch prints
/// on stderr and logs to the journal.
///
/// A config file may hold anything: a quoted key with a newline in it would start a line on stderr
/// that looks like one of posewatch's own, and one value can be as long as the file. So every key,
/// value, table name or token a message repeats goes through here: quotes, backslashes and control
/// characters (C0, DEL, C1, the Unicode line and paragraph separators and the bidirectional
/// overrides that reorder a line on screen) are escaped, and the text stops after `maximumLength`
/// characters with "…". The work done is bounded by `maximumLength` too, whatever the input's size.
struct MessageExcerpt {
    /// Characters of escaped text a message repeats from one key or value: a real key or value fits
    /// (the longest keys are about 30 characters, line names under 32, paths rarely longer), and the
    /// whole message stays one readable journal line.
    static let maximumLength = 64

    private var text = ""
    private var length = 0
    private var isFull = false
    private let limit: Int

    /// An empty excerpt that holds up to `limit` characters (then "…").
    init(limit: Int = MessageExcerpt.maximumLength) { self.limit = limit }

    /// The excerpt, ending with "…" when something was left out.
    var result: String { isFull ? text + "…" : text }

    /// Appends posewatch's own text (brackets, separators, a number's digits) as it is.
    mutating func appendLiteral(_ literal: String) {
        for scalar in literal.unicodeScalars { guard append(scalar) else { return } }
    }

    /// Appends text from the file, escaped.
    mutating func appendEscaping(_ untrusted: String) {
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

    /// Appends a value the way the owner would write it in the file: strings quoted, arrays in brackets.
    mutating func append(_ value: TOMLValue) {
        switch value {
        case .string(let string):
            appendLiteral("\"")
            appendEscaping(string)
            appendLiteral("\"")
        case .integer(let number): appendLiteral(String(number))
        case .float(let number): appendLiteral(String(number))
        case .boolean(let flag): appendLiteral(String(flag))
        case .array(let elements):
            appendLiteral("[")
            for (index, element) in elements.enumerated() {
                // Stops early: an array may have tens of thousands of elements.
                guard !isFull else { return }
                if index > 0 { appendLiteral(", ") }
                append(element)
            }
            appendLiteral("]")
        }
    }

    /// `untrusted` escaped and cut to `maximumLength` (a key, a table name, a token).
    static func plain(_ untrusted: String) -> String {
        var excerpt = MessageExcerpt()
        excerpt.appendEscaping(untrusted)
        return excerpt.result
    }

    /// `untrusted` in double quotes, escaped and cut to `maximumLength`: `"640"`.
    static func quoted(_ untrusted: String) -> String { show(.string(untrusted)) }

    /// A value as the owner wrote it, for "got …", cut to `maximumLength`.
    static func show(_ value: TOMLValue) -> String {
        var excerpt = MessageExcerpt()
        excerpt.append(value)
        return excerpt.result
    }

    /// `untrusted` escaped but whole: for the config file's own path, which names the file.
    static func escapedWhole(_ untrusted: String) -> String {
        var excerpt = MessageExcerpt(limit: .max)
        excerpt.appendEscaping(untrusted)
        return excerpt.result
    }

    private static func mustBeEscaped(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F: true  // C0 controls, DEL, C1 controls (0x85 is a line break too)
        case 0x2028, 0x2029: true  // line and paragraph separators
        case 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true  // bidirectional marks and overrides
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
