import LinuxSystem

/// Where in the source an entry was logged (`CODE_FILE`, `CODE_LINE`, `CODE_FUNC`).
public struct SourceLocation: Sendable {
    public var file: StaticString
    public var function: StaticString
    public var line: UInt
    public init(file: StaticString, function: StaticString, line: UInt) {
        self.file = file
        self.function = function
        self.line = line
    }
}

extension ByteBuffer {
    /// Encodes one entry in journald's native protocol
    /// (https://systemd.io/JOURNAL_NATIVE_PROTOCOL/): `KEY=value\n` per field, every value with its
    /// control characters escaped, so the protocol's binary-safe form (for values with a newline)
    /// is never needed.
    public mutating func encodeJournalEntry(
        level: LogLevel, message: String, fields: LogFields, identifier: String, location: SourceLocation
    ) {
        var message = message
        message.withUTF8 {
            encodeJournalEntry(level: level, message: UnsafeRawBufferPointer($0), fields: fields, identifier: identifier, location: location)
        }
    }

    /// `encodeJournalEntry` for a message given as its UTF-8 bytes.
    public mutating func encodeJournalEntry(
        level: LogLevel, message: UnsafeRawBufferPointer, fields: LogFields, identifier: String, location: SourceLocation
    ) {
        removeAll()
        append("MESSAGE")
        appendJournalValue(message)
        append("PRIORITY=")
        append(integer: level.journalPriority)
        append(UInt8(ascii: "\n"))
        appendJournalField("SYSLOG_IDENTIFIER", identifier)
        append("CODE_FILE=")
        append(location.file)
        append("\nCODE_LINE=")
        append(integer: Int(location.line))
        append("\nCODE_FUNC=")
        append(location.function)
        append(UInt8(ascii: "\n"))
        fields.forEach { staticName, name, value in
            if let staticName { append(staticName) } else if let name { append(name) }
            switch value {
            case .string(let text): appendJournalValue(text)
            case .integer(let number):
                append(UInt8(ascii: "="))
                append(integer: number)
                append(UInt8(ascii: "\n"))
            case .decimal(let number, let digits):
                append(UInt8(ascii: "="))
                append(decimal: number, fractionDigits: digits)
                append(UInt8(ascii: "\n"))
            }
        }
    }

    mutating func appendJournalField(_ name: StaticString, _ value: String) {
        append(name)
        appendJournalValue(value)
    }

    /// Appends `=value\n` with the value's control characters escaped (`appendEscapingControls`):
    /// the protocol's binary-safe form would carry a newline, but a message that is one entry must
    /// also read as one line wherever the journal shows it (`journalctl`, a console).
    mutating func appendJournalValue(_ value: String) {
        var value = value
        value.withUTF8 { appendJournalValue(UnsafeRawBufferPointer($0)) }
    }

    /// `appendJournalValue` for a value given as its UTF-8 bytes.
    mutating func appendJournalValue(_ value: UnsafeRawBufferPointer) {
        append(UInt8(ascii: "="))
        appendEscapingControls(value)
        append(UInt8(ascii: "\n"))
    }

    /// Encodes one entry as a stderr line for when there is no journal: the sd-daemon `<N>` priority
    /// prefix (journald's stream transport and `systemd-cat` understand it), the message, then the
    /// fields as `KEY=value`. Always one line: control characters in the message and the fields are
    /// escaped, so no text can start a line of its own with a forged `<N>` prefix.
    public mutating func encodeStandardErrorLine(level: LogLevel, message: String, fields: LogFields) {
        var message = message
        message.withUTF8 { encodeStandardErrorLine(level: level, message: UnsafeRawBufferPointer($0), fields: fields) }
    }

    /// `encodeStandardErrorLine` for a message given as its UTF-8 bytes.
    public mutating func encodeStandardErrorLine(level: LogLevel, message: UnsafeRawBufferPointer, fields: LogFields) {
        removeAll()
        appendPriorityPrefix(level)
        appendEscapingControls(message)
        fields.forEach { staticName, name, value in
            append(UInt8(ascii: " "))
            if let staticName { append(staticName) } else if let name { append(name) }
            append(UInt8(ascii: "="))
            switch value {
            case .string(let text):
                // Quoted only when needed so the common case stays greppable.
                if text.utf8.contains(where: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\"") || $0 < 0x20 || $0 >= 0x7F }) {
                    append(UInt8(ascii: "\""))
                    for scalar in text.unicodeScalars {
                        switch scalar {
                        case "\"": append("\\\"")
                        case "\\": append("\\\\")
                        default: appendEscapingControls(scalar)
                        }
                    }
                    append(UInt8(ascii: "\""))
                } else {
                    append(text)
                }
            case .integer(let number): append(integer: number)
            case .decimal(let number, let digits): append(decimal: number, fractionDigits: digits)
            }
        }
        append(UInt8(ascii: "\n"))
    }

    /// Appends `text` with every control character `MessageExcerpt.mustBeEscaped` names written as
    /// an escape (`\n`, `\u{1b}`): the log's last line of defence, so a path or name a message
    /// builder forgot to escape can neither start a line nor drive a terminal. Allocates nothing
    /// (the frame loop logs through here); printable ASCII, the usual case, is copied whole.
    public mutating func appendEscapingControls(_ text: String) {
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
            append(text)
            return
        }
        for scalar in text.unicodeScalars { appendEscapingControls(scalar) }
    }

    /// `appendEscapingControls` for text given as its UTF-8 bytes, decoded without allocating (a
    /// byte sequence that is not UTF-8 becomes U+FFFD, as `String(decoding:)` would make it).
    public mutating func appendEscapingControls(_ bytes: UnsafeRawBufferPointer) {
        if bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
            append(bytes)
            return
        }
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): appendEscapingControls(scalar)
            case .error: appendEscapingControls(Unicode.Scalar(0xFFFD)!)
            case .emptyInput: return
            }
        }
    }

    private mutating func appendEscapingControls(_ scalar: Unicode.Scalar) {
        guard MessageExcerpt.mustBeEscaped(scalar) else {
            UTF8.encode(scalar, into: { append($0) })
            return
        }
        switch scalar {
        case "\n": append("\\n")
        case "\r": append("\\r")
        case "\t": append("\\t")
        default:
            append("\\u{")
            let value = scalar.value
            var shift = (32 - value.leadingZeroBitCount + 3) / 4 * 4
            if shift == 0 { shift = 4 }
            while shift > 0 {
                shift -= 4
                let digit = UInt8((value >> UInt32(shift)) & 0xF)
                append(digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10)
            }
            append(UInt8(ascii: "}"))
        }
    }

    private mutating func appendPriorityPrefix(_ level: LogLevel) {
        append(UInt8(ascii: "<"))
        append(integer: level.journalPriority)
        append(UInt8(ascii: ">"))
    }
}
