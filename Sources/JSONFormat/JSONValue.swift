/// A JSON value for reports (`doctor --json`, replay's JSONL). Written by hand so output is
/// deterministic (keys in insertion order) and needs no Foundation.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case integer(Int)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool { lhs.serialized() == rhs.serialized() }

    /// Compact JSON text.
    public func serialized() -> String {
        var text = ""
        write(to: &text)
        return text
    }

    /// Appends compact JSON text to `text`.
    public func write(to text: inout String) {
        switch self {
        case .null: text += "null"
        case .bool(let value): text += value ? "true" : "false"
        case .integer(let value): text += String(value)
        case .number(let value):
            if value.isFinite { text += value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : "\(value)" } else { text += "null" }
        case .string(let value): JSONValue.writeString(value, to: &text)
        case .array(let values):
            text += "["
            for (index, value) in values.enumerated() {
                if index > 0 { text += "," }
                value.write(to: &text)
            }
            text += "]"
        case .object(let members):
            text += "{"
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { text += "," }
                JSONValue.writeString(key, to: &text)
                text += ":"
                value.write(to: &text)
            }
            text += "}"
        }
    }

    /// Writes a JSON string literal with the escapes RFC 8259 requires.
    public static func writeString(_ value: String, to text: inout String) {
        text += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case let control where control.value < 0x20:
                let hex = String(control.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}
