import LinuxSystem

/// Keys and values from a config file, made safe to repeat in the one-line messages posewatch prints
/// on stderr and logs to the journal: `MessageExcerpt` (LinuxSystem) escapes and cuts them; this adds
/// the config file's own values, shown as the owner wrote them.
extension MessageExcerpt {
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

    /// A value as the owner wrote it, for "got …", cut to `maximumLength`.
    static func show(_ value: TOMLValue) -> String {
        var excerpt = MessageExcerpt()
        excerpt.append(value)
        return excerpt.result
    }
}
