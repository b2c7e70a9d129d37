/// The subset of TOML posewatch's config file uses, parsed without a package: `[table]` and
/// `[table.sub]` headers, `key = value` with bare or quoted (dotted) keys, basic and literal
/// strings, integers (decimal, `_` separators, `0x`/`0o`/`0b`), floats (incl. `inf`/`nan`),
/// booleans, arrays (over several lines, trailing comma allowed) and `#` comments.
///
/// Not supported, each with its own error: multi-line strings, inline tables, arrays of tables,
/// dates and times. The parser never traps on any input (fuzzed in the tests); every problem is a
/// `TOMLError` with the line it is on.
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
    public var key: String?
    public var message: String
}

/// The parser: a cursor over the file's bytes that tracks the line.
public struct TOMLParser {
    private let bytes: [UInt8]
    private var position = 0
    private var line = 1
    private var document = TOMLDocument()
    private var currentTable: [String] = []
    /// Every key defined so far (values and tables), to refuse redefinitions.
    private var definedValues: [String: Int] = [:]
    private var definedTables: [String: Int] = [:]

    /// Parses `text`.
    public static func parse(_ text: [UInt8]) -> Result<TOMLDocument, TOMLError> {
        var parser = TOMLParser(bytes: text)
        do {
            try parser.parseDocument()
            return .success(parser.document)
        } catch {
            return .failure(error)
        }
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

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
        let key = try parseKey()
        skipWhitespace()
        guard current == UInt8(ascii: "]") else { throw fail("expected ] to close the table header [\(key.joined(separator: "."))") }
        position += 1
        let dotted = key.joined(separator: ".")
        if let earlier = definedTables[dotted] { throw fail("table [\(dotted)] is defined twice (first on line \(earlier))", key: dotted) }
        if let earlier = definedValues[dotted] { throw fail("[\(dotted)] is already a value (line \(earlier))", key: dotted) }
        definedTables[dotted] = line
        document.tables.append((key, line))
        currentTable = key
    }

    private mutating func parseKeyValue() throws(TOMLError) {
        let relative = try parseKey()
        let key = currentTable + relative
        let dotted = key.joined(separator: ".")
        skipWhitespace()
        guard current == UInt8(ascii: "=") else { throw fail("expected = after the key \(dotted)", key: dotted) }
        position += 1
        skipWhitespace()
        let startLine = line
        let value = try parseValue(key: dotted)
        if let earlier = definedValues[dotted] { throw TOMLError(line: startLine, key: dotted, message: "defined twice (first on line \(earlier))") }
        if let earlier = definedTables[dotted] { throw TOMLError(line: startLine, key: dotted, message: "is already a table (line \(earlier))") }
        // A value under a key that is itself a value (`a = 1` then `a.b = 2`) is a redefinition too.
        for length in 1..<max(key.count, 1) {
            let prefix = key.prefix(length).joined(separator: ".")
            if let earlier = definedValues[prefix] { throw TOMLError(line: startLine, key: dotted, message: "\(prefix) is already a value (line \(earlier))") }
        }
        definedValues[dotted] = startLine
        document.entries.append(TOMLEntry(key: key, value: value, line: startLine))
    }

    /// A dotted key of bare (`A-Za-z0-9_-`) or quoted parts.
    private mutating func parseKey() throws(TOMLError) -> [String] {
        var parts: [String] = []
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

    private mutating func parseNumber(key: String) throws(TOMLError) -> TOMLValue {
        let start = position
        while let byte = current, Self.isBareKeyByte(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: ":") {
            position += 1
        }
        let token = String(decoding: bytes[start..<position], as: UTF8.self)
        guard !token.isEmpty else { throw fail("unexpected \(Self.describe(bytes[start])); strings need quotes", key: key) }
        if token.contains(":") || (token.count >= 10 && token.dropFirst(4).first == "-" && token.first?.isNumber == true) {
            throw fail("dates and times are not supported", key: key)
        }
        var body = Substring(token)
        var negative = false
        if let sign = body.first, sign == "+" || sign == "-" { negative = sign == "-"; body = body.dropFirst() }
        switch body {
        case "inf": return .float(negative ? -.infinity : .infinity)
        case "nan": return .float(.nan)
        default: break
        }
        // Underscores must sit between digits.
        if body.hasPrefix("_") || body.hasSuffix("_") || body.contains("__") || body.contains("_.") || body.contains("._") {
            throw fail("invalid number \(token)", key: key)
        }
        let digits = body.replacingUnderscores()
        for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] where digits.hasPrefix(prefix) {
            guard !negative, token.first != "+", let value = Int(digits.dropFirst(2), radix: radix), !digits.dropFirst(2).contains(where: { $0 == "+" || $0 == "-" }) else {
                throw fail("invalid number \(token)", key: key)
            }
            return .integer(value)
        }
        guard let first = digits.first, first.isASCII, first.isNumber else {
            throw fail("unexpected value \(token); strings need quotes", key: key)
        }
        if digits.allSatisfy({ $0.isASCII && $0.isNumber }) {
            if digits.count > 1 && digits.hasPrefix("0") { throw fail("leading zeros are not allowed in \(token)", key: key) }
            guard let value = Int((negative ? "-" : "") + digits) else { throw fail("integer \(token) is out of range", key: key) }
            return .integer(value)
        }
        // A float: digits, optional fraction, optional exponent, checked by shape before conversion.
        guard Self.isFloatShape(Array(digits.utf8)), let value = Double(digits) else {
            throw fail("invalid number \(token)", key: key)
        }
        return .float(negative ? -value : value)
    }

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

extension Substring {
    fileprivate func replacingUnderscores() -> String { String(filter { $0 != "_" }) }
}
