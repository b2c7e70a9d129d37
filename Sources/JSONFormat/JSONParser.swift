/// Why a JSON text was rejected, with the byte offset where parsing stopped.
public struct JSONParseError: Error, Sendable, CustomStringConvertible {
    public let offset: Int
    public let reason: String
    public var description: String { "invalid JSON at byte \(offset): \(reason)" }
}

extension JSONValue {
    /// Parses RFC 8259 JSON (one value, surrounded by optional white space). Nesting is limited to
    /// `maximumDepth` so hostile input (a model's metadata, a replay file) cannot exhaust the stack.
    public static func parse(_ text: String, maximumDepth: Int = 64) throws(JSONParseError) -> JSONValue {
        var parser = Parser(bytes: Array(text.utf8), maximumDepth: maximumDepth)
        return try parser.parseDocument()
    }

    /// Parses UTF-8 bytes (see `parse(_:)`).
    public static func parse(bytes: [UInt8], maximumDepth: Int = 64) throws(JSONParseError) -> JSONValue {
        var parser = Parser(bytes: bytes, maximumDepth: maximumDepth)
        return try parser.parseDocument()
    }

    /// The member named `key` of an object (nil for other values or a missing key).
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members.first { $0.0 == key }?.1 }
        return nil
    }

    /// The value as a string, if it is one.
    public var stringValue: String? { if case .string(let value) = self { return value }; return nil }
    /// The value as a number (integers included), if it is one.
    public var doubleValue: Double? {
        switch self {
        case .number(let value): return value
        case .integer(let value): return Double(value)
        default: return nil
        }
    }
    /// The value as an integer, if it is a number with no fractional part.
    public var intValue: Int? {
        switch self {
        case .integer(let value): return value
        case .number(let value) where value == value.rounded() && abs(value) < 9e15: return Int(value)
        default: return nil
        }
    }
    /// The elements, if the value is an array.
    public var arrayValue: [JSONValue]? { if case .array(let values) = self { return values }; return nil }
}

private struct Parser {
    let bytes: [UInt8]
    let maximumDepth: Int
    var offset = 0

    init(bytes: [UInt8], maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        let value = try parseValue(depth: 0)
        skipWhitespace()
        guard offset == bytes.count else { throw fail("unexpected text after the value") }
        return value
    }

    func fail(_ reason: String) -> JSONParseError { JSONParseError(offset: offset, reason: reason) }

    mutating func skipWhitespace() {
        while offset < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[offset]) { offset += 1 }
    }

    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= maximumDepth else { throw fail("nested deeper than \(maximumDepth)") }
        skipWhitespace()
        guard offset < bytes.count else { throw fail("unexpected end") }
        switch bytes[offset] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth)
        case UInt8(ascii: "["): return try parseArray(depth: depth)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expect("true"); return .bool(true)
        case UInt8(ascii: "f"): try expect("false"); return .bool(false)
        case UInt8(ascii: "n"): try expect("null"); return .null
        default: return try parseNumber()
        }
    }

    mutating func expect(_ word: String) throws(JSONParseError) {
        for byte in word.utf8 {
            guard offset < bytes.count, bytes[offset] == byte else { throw fail("expected '\(word)'") }
            offset += 1
        }
    }

    mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        offset += 1
        var members: [(String, JSONValue)] = []
        skipWhitespace()
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "}") { offset += 1; return .object(members) }
        while true {
            skipWhitespace()
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
            let key = try parseString()
            skipWhitespace()
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            offset += 1
            members.append((key, try parseValue(depth: depth + 1)))
            skipWhitespace()
            guard offset < bytes.count else { throw fail("unterminated object") }
            if bytes[offset] == UInt8(ascii: ",") { offset += 1; continue }
            if bytes[offset] == UInt8(ascii: "}") { offset += 1; return .object(members) }
            throw fail("expected ',' or '}'")
        }
    }

    mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        offset += 1
        var values: [JSONValue] = []
        skipWhitespace()
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "]") { offset += 1; return .array(values) }
        while true {
            values.append(try parseValue(depth: depth + 1))
            skipWhitespace()
            guard offset < bytes.count else { throw fail("unterminated array") }
            if bytes[offset] == UInt8(ascii: ",") { offset += 1; continue }
            if bytes[offset] == UInt8(ascii: "]") { offset += 1; return .array(values) }
            throw fail("expected ',' or ']'")
        }
    }

    mutating func parseString() throws(JSONParseError) -> String {
        offset += 1
        var scalars = String.UnicodeScalarView()
        var run: [UInt8] = []
        while true {
            guard offset < bytes.count else { throw fail("unterminated string") }
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") { offset += 1; break }
            if byte < 0x20 { throw fail("control character in a string") }
            if byte != UInt8(ascii: "\\") { run.append(byte); offset += 1; continue }
            scalars.append(contentsOf: String(decoding: run, as: UTF8.self).unicodeScalars)
            run.removeAll(keepingCapacity: true)
            offset += 1
            guard offset < bytes.count else { throw fail("unterminated escape") }
            let escape = bytes[offset]
            offset += 1
            switch escape {
            case UInt8(ascii: "\""): scalars.append("\"")
            case UInt8(ascii: "\\"): scalars.append("\\")
            case UInt8(ascii: "/"): scalars.append("/")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"):
                var code = try parseHex4()
                if (0xD800..<0xDC00).contains(code) {
                    // A high surrogate must be followed by an escaped low surrogate.
                    guard offset + 1 < bytes.count, bytes[offset] == UInt8(ascii: "\\"), bytes[offset + 1] == UInt8(ascii: "u") else {
                        throw fail("lone surrogate")
                    }
                    offset += 2
                    let low = try parseHex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw fail("invalid surrogate pair") }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let scalar = Unicode.Scalar(code) else { throw fail("invalid \\u escape") }
                scalars.append(scalar)
            default: throw fail("invalid escape")
            }
        }
        scalars.append(contentsOf: String(decoding: run, as: UTF8.self).unicodeScalars)
        return String(scalars)
    }

    mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        guard offset + 4 <= bytes.count else { throw fail("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[offset]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw fail("invalid hex digit")
            }
            value = value << 4 | digit
            offset += 1
        }
        return value
    }

    mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = offset
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "-") { offset += 1 }
        let digitsStart = offset
        while offset < bytes.count, bytes[offset] >= 0x30, bytes[offset] <= 0x39 { offset += 1 }
        guard offset > digitsStart else { throw fail("expected a value") }
        if bytes[digitsStart] == 0x30 && offset - digitsStart > 1 { throw fail("leading zero") }
        var isInteger = true
        if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
            isInteger = false
            offset += 1
            let fraction = offset
            while offset < bytes.count, bytes[offset] >= 0x30, bytes[offset] <= 0x39 { offset += 1 }
            guard offset > fraction else { throw fail("expected digits after '.'") }
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
            isInteger = false
            offset += 1
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") { offset += 1 }
            let exponent = offset
            while offset < bytes.count, bytes[offset] >= 0x30, bytes[offset] <= 0x39 { offset += 1 }
            guard offset > exponent else { throw fail("expected exponent digits") }
        }
        let text = String(decoding: bytes[start..<offset], as: UTF8.self)
        if isInteger, let value = Int(text) { return .integer(value) }
        guard let value = Double(text) else { throw fail("number out of range") }
        return .number(value)
    }
}
