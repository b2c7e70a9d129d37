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
    /// (https://systemd.io/JOURNAL_NATIVE_PROTOCOL/): `KEY=value\n` per field, or for a value
    /// containing a newline the binary-safe `KEY\n<little-endian 64-bit length><bytes>\n`.
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

    /// Appends `=value\n`, or the binary-safe form when the value holds a newline (the name has
    /// already been written).
    mutating func appendJournalValue(_ value: String) {
        var value = value
        value.withUTF8 { appendJournalValue(UnsafeRawBufferPointer($0)) }
    }

    /// `appendJournalValue` for a value given as its UTF-8 bytes.
    mutating func appendJournalValue(_ value: UnsafeRawBufferPointer) {
        if value.contains(UInt8(ascii: "\n")) {
            append(UInt8(ascii: "\n"))
            append(littleEndian64: UInt64(value.count))
            append(value)
        } else {
            append(UInt8(ascii: "="))
            append(value)
        }
        append(UInt8(ascii: "\n"))
    }

    /// Encodes one entry as a stderr line for when there is no journal: the sd-daemon `<N>` priority
    /// prefix (journald's stream transport and `systemd-cat` understand it), the message, then the
    /// fields as `KEY=value`. Each line of a multi-line message gets the prefix.
    public mutating func encodeStandardErrorLine(level: LogLevel, message: String, fields: LogFields) {
        var message = message
        message.withUTF8 { encodeStandardErrorLine(level: level, message: UnsafeRawBufferPointer($0), fields: fields) }
    }

    /// `encodeStandardErrorLine` for a message given as its UTF-8 bytes.
    public mutating func encodeStandardErrorLine(level: LogLevel, message: UnsafeRawBufferPointer, fields: LogFields) {
        removeAll()
        appendPriorityPrefix(level)
        for byte in message {
            append(byte)
            if byte == UInt8(ascii: "\n") { appendPriorityPrefix(level) }
        }
        fields.forEach { staticName, name, value in
            append(UInt8(ascii: " "))
            if let staticName { append(staticName) } else if let name { append(name) }
            append(UInt8(ascii: "="))
            switch value {
            case .string(let text):
                // Quoted only when needed so the common case stays greppable.
                if text.utf8.contains(where: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\"") }) {
                    append(UInt8(ascii: "\""))
                    for byte in text.utf8 {
                        switch byte {
                        case UInt8(ascii: "\""): append("\\\"")
                        case UInt8(ascii: "\\"): append("\\\\")
                        case UInt8(ascii: "\n"): append("\\n")
                        default: append(byte)
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

    private mutating func appendPriorityPrefix(_ level: LogLevel) {
        append(UInt8(ascii: "<"))
        append(integer: level.journalPriority)
        append(UInt8(ascii: ">"))
    }
}
