import LinuxSystem
import Outputs
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A config file posewatch refuses, as the one line it prints and logs:
/// `/etc/posewatch/posewatch.toml:7: camera.width: expected an integer from 16 to 8192, got "640"`.
/// posewatch exits with `ExitStatus.configuration` (78) on it, which the unit tells systemd not to
/// restart on.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file.
    public var path: String
    /// 1-based line, or nil for problems with the file as a whole (unreadable).
    public var line: Int?
    /// The dotted key (`camera.width`) when the problem is about one.
    public var key: String?
    public var problem: String

    public var description: String {
        var text = path
        if let line { text += ":\(line)" }
        text += ": "
        if let key { text += "\(key): " }
        return text + problem
    }
}

extension ApplianceConfiguration {
    /// Loads the config file at `path`, or at `defaultPath` when `path` is nil. A missing default
    /// file means "all defaults"; a missing file that was asked for by name is an error.
    public static func load(path: String? = nil) throws(ConfigurationError) -> ApplianceConfiguration {
        let file = path ?? defaultPath
        let text: [UInt8]
        do {
            text = try readWholeFile(file)
        } catch {
            if path == nil && error.errno == .noSuchFileOrDirectory { return ApplianceConfiguration() }
            throw ConfigurationError(path: file, line: nil, key: nil, problem: "cannot read: \(error.errno)")
        }
        return try parse(text, path: file)
    }

    /// Parses a config file's bytes; `path` is only used in messages.
    public static func parse(_ text: [UInt8], path: String) throws(ConfigurationError) -> ApplianceConfiguration {
        let document: TOMLDocument
        switch TOMLParser.parse(text) {
        case .success(let parsed): document = parsed
        case .failure(let error): throw ConfigurationError(path: path, line: error.line, key: error.key, problem: error.message)
        }
        var reader = ConfigurationReader(path: path)
        return try reader.read(document)
    }

    static func readWholeFile(_ path: String) throws(SystemCallError) -> [UInt8] {
        let descriptor = try OwnedFileDescriptor.open(path, flags: O_RDONLY)
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count: Int
            do {
                count = try retryingInterrupts { read(descriptor.rawValue, &chunk, chunk.count) }
            } catch {
                throw SystemCallError("read", path, error)
            }
            if count == 0 { return result }
            result += chunk.prefix(count)
            // A config file is a few hundred bytes; refuse to slurp a wrong path's gigabytes.
            if result.count > 1 << 20 { throw SystemCallError("read", path, Errno(rawValue: EFBIG)) }
        }
    }
}

/// Maps a TOML document onto `ApplianceConfiguration`, key by key, with one error for the first
/// unknown key or bad value.
struct ConfigurationReader {
    let path: String

    /// The keys of each table, for "unknown key" messages that list what is allowed.
    static let knownKeys: [(table: String, keys: [String])] = [
        ("camera", ["device", "width", "height", "buffers"]),
        ("models", ["pose", "classifier"]),
        ("classifier", ["confidence_threshold", "smoothing"]),
        ("pose", ["smart_cropping", "smoothing", "smoothing_min_cutoff", "smoothing_beta", "threads"]),
        ("leds", ["backend", "status", "actions"]),
        ("journal", ["summary_interval", "level"]),
        ("watchdog", ["enabled", "max_stall"]),
    ]

    private func error(_ line: Int, _ key: String?, _ problem: String) -> ConfigurationError {
        ConfigurationError(path: path, line: line, key: key, problem: problem)
    }

    mutating func read(_ document: TOMLDocument) throws(ConfigurationError) -> ApplianceConfiguration {
        var configuration = ApplianceConfiguration()
        for table in document.tables {
            let dotted = table.key.joined(separator: ".")
            guard dotted == "leds.actions" || Self.knownKeys.contains(where: { $0.table == dotted }) else {
                let known = Self.knownKeys.map(\.table).joined(separator: ", ")
                throw error(table.line, nil, "unknown table [\(dotted)] (known tables: \(known), leds.actions)")
            }
        }
        var width: (value: Int, line: Int)?, height: (value: Int, line: Int)?
        var actions: [(action: String, line: String, fileLine: Int)]?
        var statusLine = (configuration.statusLEDLine, 0)
        for entry in document.entries {
            let key = entry.dottedKey, line = entry.line
            switch key {
            case "camera.device":
                let device = try string(entry)
                configuration.cameraDevice = device.isEmpty ? nil : device
            case "camera.width": width = (try integer(entry, in: 16...8192), line)
            case "camera.height": height = (try integer(entry, in: 16...8192), line)
            case "camera.buffers": configuration.cameraBufferCount = try integer(entry, in: 2...32)
            case "models.pose": configuration.poseModelPath = try path(entry)
            case "models.classifier": configuration.classifierModelPath = try path(entry)
            case "classifier.confidence_threshold":
                configuration.confidenceThreshold = try number(entry, in: 0...1, described: "a number from 0 to 1")
            case "classifier.smoothing": configuration.smoothing = try integer(entry, in: 1...30)
            case "pose.smart_cropping": configuration.smartCropping = try boolean(entry)
            case "pose.threads": configuration.inferenceThreads = try integer(entry, in: 1...8)
            case "pose.smoothing": configuration.keypointSmoothing = try boolean(entry)
            case "pose.smoothing_min_cutoff":
                configuration.smoothingMinimumCutoff = try number(entry, in: 0.01...30, described: "a number from 0.01 to 30 (Hz)")
            case "pose.smoothing_beta":
                configuration.smoothingBeta = try number(entry, in: 0...1000, described: "a number from 0 to 1000")
            case "leds.backend":
                let name = try string(entry)
                guard let backend = LEDBackend(rawValue: name) else {
                    throw error(line, key, "expected \"gpio\" or \"console\", got \"\(Self.escaped(name))\"")
                }
                configuration.ledBackend = backend
            case "leds.status": statusLine = (try lineName(entry), line)
            case "journal.summary_interval":
                configuration.summaryIntervalSeconds = try integer(entry, in: 1...86_400, unit: " seconds")
            case "journal.level":
                let name = try string(entry)
                guard let level = LogLevel(name: name) else {
                    let names = LogLevel.allCases.map(\.name).joined(separator: ", ")
                    throw error(line, key, "expected one of \(names), got \"\(Self.escaped(name))\"")
                }
                configuration.logLevel = level
            case "watchdog.enabled": configuration.watchdogEnabled = try boolean(entry)
            case "watchdog.max_stall":
                configuration.watchdogMaxStallSeconds = try number(entry, in: 1...3600, described: "a number of seconds from 1 to 3600")
            default:
                if entry.key.count == 3, entry.key[0] == "leds", entry.key[1] == "actions" {
                    let action = entry.key[2]
                    guard !action.isEmpty, action.utf8.allSatisfy({ (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "_") }) else {
                        throw error(line, key, "action labels are lower-case letters, digits and _ (as the classifier names them)")
                    }
                    actions = (actions ?? []) + [(action, try lineName(entry), line)]
                } else {
                    throw unknownKey(entry)
                }
            }
        }
        switch (width, height) {
        case (nil, nil): break
        case let (width?, height?): configuration.cameraSize = (width.value, height.value)
        case let (width?, nil): throw error(width.line, "camera.width", "camera.width needs camera.height too")
        case let (nil, height?): throw error(height.line, "camera.height", "camera.height needs camera.width too")
        }
        if let actions {
            configuration.actionLEDLines = actions.map { ($0.action, $0.line) }
        }
        configuration.statusLEDLine = statusLine.0
        // One line can light one LED: a duplicate would make two LEDs fight over it.
        var seen: [String: String] = [:]
        seen[statusLine.0] = "leds.status"
        for action in actions ?? [] {
            let role = "leds.actions.\(action.action)"
            if let other = seen[action.line] {
                throw error(action.fileLine, role, "line \(action.line) is already used by \(other)")
            }
            seen[action.line] = role
        }
        if actions == nil, let clash = configuration.actionLEDLines.first(where: { $0.line == statusLine.0 }) {
            throw error(max(statusLine.1, 1), "leds.status", "line \(statusLine.0) is already used by the default leds.actions.\(clash.action)")
        }
        return configuration
    }

    private func unknownKey(_ entry: TOMLEntry) -> ConfigurationError {
        let key = entry.dottedKey
        if let table = Self.knownKeys.first(where: { entry.key.count == 2 && $0.table == entry.key[0] }) {
            return error(entry.line, key, "unknown key (known in [\(table.table)]: \(table.keys.joined(separator: ", ")))")
        }
        let known = Self.knownKeys.map(\.table).joined(separator: ", ")
        return error(entry.line, key, "unknown key (settings go in the tables \(known))")
    }

    private func mismatch(_ entry: TOMLEntry, expected: String) -> ConfigurationError {
        error(entry.line, entry.dottedKey, "expected \(expected), got \(Self.show(entry.value))")
    }

    /// A value as the owner wrote it, for "got …".
    static func show(_ value: TOMLValue) -> String {
        switch value {
        case .string(let text): "\"" + escaped(text) + "\""
        case .integer(let number): String(number)
        case .float(let number): String(number)
        case .boolean(let flag): String(flag)
        case .array(let elements): "[" + elements.map(show).joined(separator: ", ") + "]"
        }
    }

    /// Escapes what would break the one-line message (quotes, backslashes, control characters).
    static func escaped(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: result += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private func string(_ entry: TOMLEntry) throws(ConfigurationError) -> String {
        guard case .string(let text) = entry.value else { throw mismatch(entry, expected: "a string") }
        return text
    }

    private func path(_ entry: TOMLEntry) throws(ConfigurationError) -> String {
        let text = try string(entry)
        guard text.hasPrefix("/") else { throw error(entry.line, entry.dottedKey, "expected an absolute path, got \"\(Self.escaped(text))\"") }
        return text
    }

    private func lineName(_ entry: TOMLEntry) throws(ConfigurationError) -> String {
        let text = try string(entry)
        guard !text.isEmpty, text.utf8.count < 32, !text.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F }) else {
            throw error(entry.line, entry.dottedKey, "expected a GPIO line name such as \"GPIO17\", got \(Self.show(entry.value))")
        }
        return text
    }

    private func integer(_ entry: TOMLEntry, in range: ClosedRange<Int>, unit: String = "") throws(ConfigurationError) -> Int {
        let expected = "an integer from \(range.lowerBound) to \(range.upperBound)\(unit)"
        guard case .integer(let number) = entry.value else { throw mismatch(entry, expected: expected) }
        guard range.contains(number) else { throw mismatch(entry, expected: expected) }
        return number
    }

    private func boolean(_ entry: TOMLEntry) throws(ConfigurationError) -> Bool {
        guard case .boolean(let value) = entry.value else { throw mismatch(entry, expected: "true or false") }
        return value
    }

    private func number(_ entry: TOMLEntry, in range: ClosedRange<Double>, described: String) throws(ConfigurationError) -> Double {
        let number: Double
        switch entry.value {
        case .integer(let value): number = Double(value)
        case .float(let value): number = value
        default: throw mismatch(entry, expected: described)
        }
        guard range.contains(number) else { throw mismatch(entry, expected: described) }
        return number
    }
}
