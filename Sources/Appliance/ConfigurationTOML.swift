import LinuxSystem

/// The subset of TOML posewatch's config file uses, parsed without a package: `[table]` and
/// `[table.sub]` headers, `key = value` with bare or quoted (dotted) keys, basic and literal
/// strings, integers (decimal, `_` separators, `0x`/`0o`/`0b`), floats (incl. `inf`/`nan`),
/// booleans, arrays (over several lines, trailing comma allowed) and `#` comments.
///
/// Not supported, each with its own error: multi-line strings, inline tables, arrays of tables,
/// dates and times. The parser never traps on any input (fuzzed in the tests and by
/// Tests/Fuzz/ConfigFuzz.swift); every problem is a `TOMLError` with the line it is on.
///
/// Parsing takes time linear in the input: each byte is read once, and the check that a key is not
/// defined twice walks a tree of the keys seen so far, one step per part, instead of joining every
/// prefix of the key. `TOMLLimits` bounds what one document may hold on top of that.
public enum TOMLValue: Sendable, Equatable {
    case string(String)
    case integer(Int)
    case float(Double)
    case boolean(Bool)
    case array([TOMLValue])

    /// The TOML type name, for "expected …, got …" messages.
    public var typeName: String {
        switch self {
        case .string: "a string"
        case .integer: "an integer"
        case .float: "a float"
        case .boolean: "a boolean"
        case .array: "an array"
        }
    }
}

/// One `key = value` with its full dotted key (`camera.width`) and line.
public struct TOMLEntry: Sendable, Equatable {
    public var key: [String]
    public var value: TOMLValue
    public var line: Int
    /// The dotted form, `leds.actions.squats`.
    public var dottedKey: String { key.joined(separator: ".") }
}

/// A parsed document: entries and table headers in file order.
public struct TOMLDocument: Sendable, Equatable {
    public var entries: [TOMLEntry] = []
    /// Every `[header]` with its line.
    public var tables: [(key: [String], line: Int)] = []

    public static func == (lhs: TOMLDocument, rhs: TOMLDocument) -> Bool {
        lhs.entries == rhs.entries && lhs.tables.elementsEqual(rhs.tables, by: { $0.key == $1.key && $0.line == $1.line })
    }
}

/// A syntax error on a line (1-based), with the key it concerns when known.
public struct TOMLError: Error, Sendable, Equatable {
    public var line: Int
    /// The dotted key as written in the file, unescaped: escape it before printing it
    /// (`ConfigurationError.description` does).
    public var key: String?
    /// What is wrong. Any key, token or table name it repeats is already escaped and cut short.
    public var message: String
}

/// What one document may hold, checked while it is parsed: a hostile file is refused at the first
/// part, byte or line over a limit, before any work grows with it. The defaults fit posewatch's
/// config many times over (its deepest key, `leds.actions.squats`, has 3 parts; its longest,
/// `classifier.confidence_threshold`, 31 bytes; a full file has about 20 settings and at most
/// `LEDController.maximumActionCount` (64) action LEDs).
public struct TOMLLimits: Sendable, Equatable {
    /// Parts in one dotted key, the enclosing `[table]`'s included.
    public var maximumKeyParts = 8
    /// Bytes in one dotted key, the enclosing `[table]`'s parts and the dots included.
    public var maximumKeyBytes = 64
    /// `key = value` lines and `[table]` headers in the document.
    public var maximumDefinitions = 256
    /// Elements of all arrays in the document together (a nested array is one element of its
    /// parent). posewatch's settings hold no arrays; the subset reads them so a TOML file is TOML,
    /// and without this bound 64 KiB of `[[…]]` would be tens of thousands of arrays to allocate.
    public var maximumArrayElements = 256

    /// posewatch's limits.
    public init() {}
}

/// The parser: a cursor over the file's bytes that tracks the line.
public struct TOMLParser {
    private let bytes: [UInt8]
    private var position = 0
    private var line = 1
    private var document = TOMLDocument()
    private let limits: TOMLLimits
    private var currentTable: [String] = []
    /// `currentTable`'s bytes with the dots between its parts, for the key length limit.
    private var currentTableBytes = 0
    private var definitions = 0
    private var arrayElements = 0

    /// One part of a key seen so far: what it is (a value, a table, or only a prefix of others) and
    /// where it was first defined, to refuse redefinitions. Index 0 is the document's root.
    private struct KeyNode {
        var children: [String: Int] = [:]
        var valueLine: Int?
        var tableLine: Int?
        /// The line of the first key that went through this node.
        var firstLine: Int
    }
    private var keyTree = [KeyNode(firstLine: 0)]

    /// Parses `text`. The caller bounds its size (`ApplianceConfiguration.maximumFileBytes`); the
    /// time taken is linear in it.
    public static func parse(_ text: [UInt8], limits: TOMLLimits = TOMLLimits()) -> Result<TOMLDocument, TOMLError> {
        var parser = TOMLParser(bytes: text, limits: limits)
        do {
            try parser.parseDocument()
            return .success(parser.document)
        } catch {
            return .failure(error)
        }
    }

    private init(bytes: [UInt8], limits: TOMLLimits) {
        self.bytes = bytes
        self.limits = limits
    }

    private var current: UInt8? { position < bytes.count ? bytes[position] : nil }
    private func peek(_ offset: Int) -> UInt8? { position + offset < bytes.count ? bytes[position + offset] : nil }

    private func fail(_ message: String, key: String? = nil) -> TOMLError {
        TOMLError(line: line, key: key, message: message)
    }

    private mutating func parseDocument() throws(TOMLError) {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }  // a UTF-8 byte-order mark
        if let offset = Self.firstInvalidUTF8Offset(bytes) {
            line = 1 + bytes.prefix(offset).filter { $0 == UInt8(ascii: "\n") }.count
            throw fail("the file is not valid UTF-8")
        }
        while true {
            skipWhitespaceCommentsAndNewlines()
            guard let byte = current else { return }
            definitions += 1
            guard definitions <= limits.maximumDefinitions else {
                throw fail("more than \(limits.maximumDefinitions) settings and tables; a posewatch config has about 20 settings and one per action LED: is this the config file?")
            }
            if byte == UInt8(ascii: "[") {
                try parseTableHeader()
            } else {
                try parseKeyValue()
            }
            try expectEndOfLine()
        }
    }

    /// Where the first byte that is not part of valid UTF-8 sits, or nil when all of it is valid.
    private static func firstInvalidUTF8Offset(_ bytes: [UInt8]) -> Int? {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let scalar): offset += scalar.count
            case .error: return offset
            case .emptyInput: return nil
            }
        }
    }

    private mutating func skipWhitespace() {
        while let byte = current, byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") { position += 1 }
    }

    private mutating func skipComment() {
        guard current == UInt8(ascii: "#") else { return }
        while let byte = current, byte != UInt8(ascii: "\n") { position += 1 }
    }

    private mutating func skipWhitespaceCommentsAndNewlines() {
        while true {
            skipWhitespace()
            skipComment()
            if current == UInt8(ascii: "\n") {
                position += 1
                line += 1
            } else if current == UInt8(ascii: "\r"), peek(1) == UInt8(ascii: "\n") {
                position += 2
                line += 1
            } else {
                return
            }
        }
    }

    private mutating func expectEndOfLine() throws(TOMLError) {
        skipWhitespace()
        skipComment()
        guard let byte = current else { return }
        if byte == UInt8(ascii: "\n") || (byte == UInt8(ascii: "\r") && peek(1) == UInt8(ascii: "\n")) { return }
        throw fail("unexpected \(Self.describe(byte)) after the value; one key = value per line")
    }

    private mutating func parseTableHeader() throws(TOMLError) {
        position += 1
        if current == UInt8(ascii: "[") { throw fail("arrays of tables ([[…]]) are not supported") }
        skipWhitespace()
        let key = try parseKey(under: [], bytes: 0)
        skipWhitespace()
        let dotted = key.joined(separator: ".")
        guard current == UInt8(ascii: "]") else { throw fail("expected ] to close the table header [\(MessageExcerpt.plain(dotted))") }
        position += 1
        let node = try keyNode(for: key, at: line, dotted: dotted)
        if let earlier = keyTree[node].tableLine { throw fail("table [\(MessageExcerpt.plain(dotted))] is defined twice (first on line \(earlier))", key: dotted) }
        if let earlier = keyTree[node].valueLine { throw fail("[\(MessageExcerpt.plain(dotted))] is already a value (line \(earlier))", key: dotted) }
        keyTree[node].tableLine = line
        document.tables.append((key, line))
        currentTable = key
        currentTableBytes = dotted.utf8.count
    }

    private mutating func parseKeyValue() throws(TOMLError) {
        let key = try parseKey(under: currentTable, bytes: currentTableBytes)
        let dotted = key.joined(separator: ".")
        skipWhitespace()
        guard current == UInt8(ascii: "=") else { throw fail("expected = after the key \(MessageExcerpt.plain(dotted))", key: dotted) }
        position += 1
        skipWhitespace()
        let startLine = line
        let value = try parseValue(key: dotted)
        let node = try keyNode(for: key, at: startLine, dotted: dotted)
        if let earlier = keyTree[node].valueLine { throw TOMLError(line: startLine, key: dotted, message: "defined twice (first on line \(earlier))") }
        // A table, whether from a header or from keys below it (`a.b = 1` then `a = 2`).
        if let earlier = keyTree[node].tableLine ?? (keyTree[node].children.isEmpty ? nil : keyTree[node].firstLine) {
            throw TOMLError(line: startLine, key: dotted, message: "is already a table (line \(earlier))")
        }
        keyTree[node].valueLine = startLine
        document.entries.append(TOMLEntry(key: key, value: value, line: startLine))
    }

    /// The tree node of `key`, made if new. A key under one that is a value (`a = 1` then
    /// `a.b = 2`, or `[a.b]`) is refused here. One dictionary step per part: linear in the key.
    private mutating func keyNode(for key: [String], at definitionLine: Int, dotted: String) throws(TOMLError) -> Int {
        var node = 0
        for (index, part) in key.enumerated() {
            if let earlier = keyTree[node].valueLine {
                let prefix = key.prefix(index).joined(separator: ".")
                throw TOMLError(line: definitionLine, key: dotted, message: "\(MessageExcerpt.plain(prefix)) is already a value (line \(earlier))")
            }
            if let child = keyTree[node].children[part] {
                node = child
            } else {
                keyTree.append(KeyNode(firstLine: definitionLine))
                keyTree[node].children[part] = keyTree.count - 1
                node = keyTree.count - 1
            }
        }
        return node
    }

    /// A dotted key of bare (`A-Za-z0-9_-`) or quoted parts, appended to `table` (whose parts and
    /// dots take `bytes`). Refused at the first part or byte over `limits`, so a key of 20,000
    /// parts costs no more than one of 9.
    private mutating func parseKey(under table: [String], bytes tableBytes: Int) throws(TOMLError) -> [String] {
        var parts = table
        var keyBytes = tableBytes
        while true {
            skipWhitespace()
            guard let byte = current else { throw fail("expected a key, found the end of the file") }
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                let part = try parseString(key: nil)
                parts.append(part)
            } else {
                let start = position
                while let byte = current, Self.isBareKeyByte(byte) { position += 1 }
                guard position > start else { throw fail("expected a key, found \(Self.describe(byte))") }
                parts.append(String(decoding: bytes[start..<position], as: UTF8.self))
            }
            keyBytes += (parts.count > 1 ? 1 : 0) + parts[parts.count - 1].utf8.count
            if parts.count > limits.maximumKeyParts {
                throw fail("a key has at most \(limits.maximumKeyParts) parts, table included (posewatch's have at most 3, as in leds.actions.squats)", key: parts.joined(separator: "."))
            }
            if keyBytes > limits.maximumKeyBytes {
                throw fail("a key has at most \(limits.maximumKeyBytes) bytes, table included (posewatch's longest is classifier.confidence_threshold, 31)", key: parts.joined(separator: "."))
            }
            skipWhitespace()
            guard current == UInt8(ascii: ".") else { return parts }
            position += 1
        }
    }

    private static func isBareKeyByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"): true
        default: false
        }
    }

    private mutating func parseValue(key: String, depth: Int = 0) throws(TOMLError) -> TOMLValue {
        guard let byte = current, byte != UInt8(ascii: "\n"), byte != UInt8(ascii: "#") else {
            throw fail("missing value", key: key)
        }
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
            return .string(try parseString(key: key))
        case UInt8(ascii: "["):
            return try parseArray(key: key, depth: depth)
        case UInt8(ascii: "{"):
            throw fail("inline tables ({…}) are not supported; use a [table]", key: key)
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            if matches("true") { position += 4; return .boolean(true) }
            if matches("false") { position += 5; return .boolean(false) }
            throw fail("unexpected value; strings need quotes", key: key)
        default:
            return try parseNumber(key: key)
        }
    }

    private func matches(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count else { return false }
        for index in 0..<count where bytes[position + index] != word.utf8Start[index] { return false }
        if let next = peek(count), Self.isBareKeyByte(next) { return false }
        return true
    }

    private mutating func parseArray(key: String, depth: Int) throws(TOMLError) -> TOMLValue {
        // Nesting is bounded so hostile input cannot exhaust the stack.
        guard depth < 32 else { throw fail("arrays nested too deeply", key: key) }
        position += 1
        var elements: [TOMLValue] = []
        while true {
            skipWhitespaceCommentsAndNewlines()
            guard let byte = current else { throw fail("unterminated array", key: key) }
            if byte == UInt8(ascii: "]") { position += 1; return .array(elements) }
            arrayElements += 1
            guard arrayElements <= limits.maximumArrayElements else {
                throw fail("more than \(limits.maximumArrayElements) array elements in the file; no posewatch setting is an array", key: key)
            }
            elements.append(try parseValue(key: key, depth: depth + 1))
            skipWhitespaceCommentsAndNewlines()
            if current == UInt8(ascii: ",") { position += 1; continue }
            if current == UInt8(ascii: "]") { position += 1; return .array(elements) }
            throw fail("expected , or ] in the array", key: key)
        }
    }

    private mutating func parseString(key: String?) throws(TOMLError) -> String {
        let quote = bytes[position]
        if peek(1) == quote, peek(2) == quote { throw fail("multi-line strings are not supported", key: key) }
        position += 1
        var result: [UInt8] = []
        while true {
            guard let byte = current, byte != UInt8(ascii: "\n") else { throw fail("unterminated string", key: key) }
            position += 1
            if byte == quote { return String(decoding: result, as: UTF8.self) }
            if byte < 0x20 && byte != UInt8(ascii: "\t") || byte == 0x7F {
                throw fail("control character \(Self.describe(byte)) in a string", key: key)
            }
            guard quote == UInt8(ascii: "\""), byte == UInt8(ascii: "\\") else { result.append(byte); continue }
            guard let escape = current else { throw fail("unterminated string", key: key) }
            position += 1
            switch escape {
            case UInt8(ascii: "\""): result.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): result.append(UInt8(ascii: "\\"))
            case UInt8(ascii: "n"): result.append(UInt8(ascii: "\n"))
            case UInt8(ascii: "t"): result.append(UInt8(ascii: "\t"))
            case UInt8(ascii: "r"): result.append(UInt8(ascii: "\r"))
            case UInt8(ascii: "b"): result.append(0x08)
            case UInt8(ascii: "f"): result.append(0x0C)
            case UInt8(ascii: "u"), UInt8(ascii: "U"):
                let digits = escape == UInt8(ascii: "u") ? 4 : 8
                guard position + digits <= bytes.count,
                      let scalarValue = UInt32(String(decoding: bytes[position..<(position + digits)], as: UTF8.self), radix: 16),
                      bytes[position..<(position + digits)].allSatisfy({ Self.isHexDigit($0) }),
                      let scalar = Unicode.Scalar(scalarValue)
                else { throw fail("invalid \\\(Character(Unicode.Scalar(escape))) escape", key: key) }
                position += digits
                result.append(contentsOf: String(Character(scalar)).utf8)
            default:
                throw fail("invalid escape \\\(Self.describe(escape))", key: key)
            }
        }
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"): true
        default: false
        }
    }

    /// The longest number token read: any real number fits (a Double needs at most 24 characters,
    /// underscores and an exponent included), and conversion stays cheap however long the line.
    static let maximumNumberLength = 64

    /// A number, read as bytes: the token is ASCII (bare-key bytes, `+`, `.`, `:`), and byte
    /// comparisons cost a fraction of Character ones (8,000 floats in a file must parse in far less
    /// than a frame).
    private mutating func parseNumber(key: String) throws(TOMLError) -> TOMLValue {
        let start = position
        while let byte = current, Self.isBareKeyByte(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: ":") {
            position += 1
        }
        let token = bytes[start..<position]
        // For messages only: escaped and cut short.
        func shown() -> String { MessageExcerpt.plain(String(decoding: token, as: UTF8.self)) }
        guard let first = token.first else { throw fail("unexpected \(Self.describe(bytes[start])); strings need quotes", key: key) }
        if token.contains(UInt8(ascii: ":")) || (token.count >= 10 && token[start + 4] == UInt8(ascii: "-") && Self.isDigit(first)) {
            throw fail("dates and times are not supported", key: key)
        }
        guard token.count <= Self.maximumNumberLength else {
            throw fail("\(shown()) is too long for a number (at most \(Self.maximumNumberLength) characters); strings need quotes", key: key)
        }
        var body = token[...]
        var negative = false
        if first == UInt8(ascii: "+") || first == UInt8(ascii: "-") { negative = first == UInt8(ascii: "-"); body = body.dropFirst() }
        if body.elementsEqual("inf".utf8) { return .float(negative ? -.infinity : .infinity) }
        if body.elementsEqual("nan".utf8) { return .float(.nan) }
        // Underscores must sit between digits.
        let underscore = UInt8(ascii: "_"), dot = UInt8(ascii: ".")
        if body.first == underscore || body.last == underscore
            || zip(body, body.dropFirst()).contains(where: { ($0 == underscore && ($1 == underscore || $1 == dot)) || ($0 == dot && $1 == underscore) }) {
            throw fail("invalid number \(shown())", key: key)
        }
        let digits = body.filter { $0 != underscore }
        if digits.count > 2, digits[0] == UInt8(ascii: "0") {
            let radix: Int? = switch digits[1] {
            case UInt8(ascii: "x"): 16
            case UInt8(ascii: "o"): 8
            case UInt8(ascii: "b"): 2
            default: nil
            }
            if let radix {
                guard first != UInt8(ascii: "+"), !negative, let value = Self.integer(digits.dropFirst(2), radix: radix) else {
                    throw fail("invalid number \(shown())", key: key)
                }
                return .integer(value)
            }
        } else if digits.count == 2, digits[0] == UInt8(ascii: "0"), [UInt8(ascii: "x"), UInt8(ascii: "o"), UInt8(ascii: "b")].contains(digits[1]) {
            throw fail("invalid number \(shown())", key: key)  // a prefix without digits
        }
        guard let firstDigit = digits.first, Self.isDigit(firstDigit) else {
            throw fail("unexpected value \(shown()); strings need quotes", key: key)
        }
        if digits.allSatisfy(Self.isDigit) {
            if digits.count > 1 && firstDigit == UInt8(ascii: "0") { throw fail("leading zeros are not allowed in \(shown())", key: key) }
            guard let value = Self.integer(digits[...], radix: 10, negative: negative) else { throw fail("integer \(shown()) is out of range", key: key) }
            return .integer(value)
        }
        // A float: digits, optional fraction, optional exponent, checked by shape before conversion.
        guard Self.isFloatShape(digits), let value = Double(String(decoding: digits, as: UTF8.self)) else {
            throw fail("invalid number \(shown())", key: key)
        }
        return .float(negative ? -value : value)
    }

    /// The integer `digits` (no sign, no prefix) spell in `radix`, or nil when a byte is not a digit
    /// of it, there are none, or the value does not fit in an Int.
    private static func integer(_ digits: ArraySlice<UInt8>, radix: Int, negative: Bool = false) -> Int? {
        guard !digits.isEmpty else { return nil }
        // Accumulated as a negative number, which reaches Int.min.
        var value = 0
        for byte in digits {
            let digit: Int
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = Int(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = Int(byte - UInt8(ascii: "a")) + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = Int(byte - UInt8(ascii: "A")) + 10
            default: return nil
            }
            guard digit < radix else { return nil }
            let (shifted, overflow) = value.multipliedReportingOverflow(by: radix)
            let (next, underflow) = shifted.subtractingReportingOverflow(digit)
            guard !overflow, !underflow else { return nil }
            value = next
        }
        if negative { return value }
        return value == .min ? nil : -value
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private static func isFloatShape(_ text: [UInt8]) -> Bool {
        var index = 0
        func digits() -> Int {
            let start = index
            while index < text.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(text[index]) { index += 1 }
            return index - start
        }
        guard digits() > 0 else { return false }
        var sawFractionOrExponent = false
        if index < text.count, text[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { return false }
            sawFractionOrExponent = true
        }
        if index < text.count, text[index] == UInt8(ascii: "e") || text[index] == UInt8(ascii: "E") {
            index += 1
            if index < text.count, text[index] == UInt8(ascii: "+") || text[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { return false }
            sawFractionOrExponent = true
        }
        return sawFractionOrExponent && index == text.count
    }

    private static func describe(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F { return "\"\(Character(Unicode.Scalar(byte)))\"" }
        return "byte 0x" + String(byte, radix: 16)
    }
}
