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
/// restart on. The line is one line whatever the file holds: the key is escaped and cut short in
/// `description`, and every value `problem` repeats already is (`MessageExcerpt`).
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file.
    public var path: String
    /// 1-based line, or nil for problems with the file as a whole (unreadable).
    public var line: Int?
    /// The dotted key (`camera.width`) when the problem is about one, as written in the file.
    public var key: String?
    /// What is wrong and what to do; keys and values in it are escaped and cut short.
    public var problem: String

    public var description: String {
        var text = MessageExcerpt.escapedWhole(path)
        if let line { text += ":\(line)" }
        text += ": "
        if let key { text += "\(MessageExcerpt.plain(key)): " }
        return text + problem
    }
}

extension ApplianceConfiguration {
    /// The largest config file posewatch reads: 64 KiB. The shipped example with every setting
    /// commented is about 3 KB, and a file with all 64 action LEDs under 2 KB, so a real config
    /// never comes near; a bigger file is the wrong path or a hostile one. The slowest allowed file
    /// found parses in about half a millisecond (release build, x86), a hundredth of a frame, so a
    /// SIGHUP reload, which runs between two frames, cannot stall the loop.
    public static let maximumFileBytes = 64 * 1024

    /// Loads the config file at `path`, or at `defaultPath` when `path` is nil. A missing default
    /// file means "all defaults"; a missing file that was asked for by name is an error.
    public static func load(path: String? = nil) throws(ConfigurationError) -> ApplianceConfiguration {
        let file = path ?? defaultPath
        guard let text = try readFile(file, missingMeansDefaults: path == nil) else { return ApplianceConfiguration() }
        return try parse(text, path: file)
    }

    /// Parses a config file's bytes; `path` is only used in messages. More than `maximumFileBytes`
    /// is refused before parsing starts.
    public static func parse(_ text: [UInt8], path: String) throws(ConfigurationError) -> ApplianceConfiguration {
        guard text.count <= maximumFileBytes else { throw tooLarge(path) }
        let document: TOMLDocument
        switch TOMLParser.parse(text) {
        case .success(let parsed): document = parsed
        case .failure(let error): throw ConfigurationError(path: path, line: error.line, key: error.key, problem: error.message)
        }
        var reader = ConfigurationReader(path: path)
        return try reader.read(document)
    }

    private static func tooLarge(_ path: String) -> ConfigurationError {
        ConfigurationError(path: path, line: nil, key: nil,
                           problem: "the file is larger than \(maximumFileBytes) bytes, the most a config file may be (a full one is about 3 KB): check that this is the config file")
    }

    /// The bytes of the config file at `path`, or nil when it does not exist and
    /// `missingMeansDefaults`. Reads at most `maximumFileBytes` + 1 bytes (enough to know it is too
    /// large), and only from a regular file or /dev/null (`--config /dev/null`: all defaults, as
    /// the tests and evaluation scripts use it; `OwnedFileDescriptor.openRegularFile`): a FIFO, a
    /// terminal or another device put at the config's path could block the reading loop (on
    /// SIGHUP, the frame loop).
    static func readFile(_ path: String, missingMeansDefaults: Bool = false) throws(ConfigurationError) -> [UInt8]? {
        let contents: Result<[UInt8], ConfigurationError>
        do throws(SystemCallError) {
            let descriptor = try OwnedFileDescriptor.openRegularFile(path)
            contents = readLimited(descriptor, path: path)
        } catch {
            if missingMeansDefaults && error.errno == .noSuchFileOrDirectory { return nil }
            throw ConfigurationError(path: path, line: nil, key: nil, problem: "cannot read: \(error.reason)")
        }
        return try contents.get()
    }

    /// Up to `maximumFileBytes` bytes from `descriptor`; a longer file is an error.
    private static func readLimited(_ descriptor: borrowing OwnedFileDescriptor, path: String) -> Result<[UInt8], ConfigurationError> {
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while result.count <= maximumFileBytes {
            let count: Int
            do {
                count = try retryingInterrupts { read(descriptor.rawValue, &chunk, chunk.count) }
            } catch {
                return .failure(ConfigurationError(path: path, line: nil, key: nil, problem: "cannot read: \(error)"))
            }
            if count == 0 { return .success(result) }
            result.append(contentsOf: chunk[0..<count])
        }
        return .failure(tooLarge(path))
    }
}

/// Maps a TOML document onto `ApplianceConfiguration`, key by key, with one error for the first
/// unknown key or bad value.
struct ConfigurationReader {
    let path: String

    /// The keys of each table, for "unknown key" messages that list what is allowed.
    static let knownKeys: [(table: String, keys: [String])] = [
        ("camera", ["device", "width", "height", "buffers", "rotation", "flip", "auto_controls"]),
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
                throw error(table.line, nil, "unknown table [\(MessageExcerpt.plain(dotted))] (known tables: \(known), leds.actions)")
            }
        }
        var width: (value: Int, line: Int)?, height: (value: Int, line: Int)?
        // `[leds.actions]` replaces the default LEDs as a whole, so whether it appeared matters.
        var actions: [(action: String, line: String, fileLine: Int)] = []
        var actionsConfigured = false
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
            case "camera.rotation": configuration.cameraRotation = try quarterTurn(entry)
            case "camera.flip": configuration.cameraFlip = try boolean(entry)
            case "camera.auto_controls": configuration.cameraAutoControls = try boolean(entry)
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
                    throw error(line, key, "expected \"gpio\" or \"console\", got \(MessageExcerpt.quoted(name))")
                }
                configuration.ledBackend = backend
            case "leds.status": statusLine = (try lineName(entry), line)
            case "journal.summary_interval":
                configuration.summaryIntervalSeconds = try integer(entry, in: 1...86_400, unit: " seconds")
            case "journal.level":
                let name = try string(entry)
                guard let level = LogLevel(name: name) else {
                    let names = LogLevel.allCases.map(\.name).joined(separator: ", ")
                    throw error(line, key, "expected one of \(names), got \(MessageExcerpt.quoted(name))")
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
                    // LEDController drives at most this many; refuse here with the line rather than trap later.
                    guard actions.count < LEDController.maximumActionCount else {
                        throw error(line, key, "more than \(LEDController.maximumActionCount) action LEDs, the most posewatch can drive; remove some from [leds.actions]")
                    }
                    actions.append((action, try lineName(entry), line))
                    actionsConfigured = true
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
        if actionsConfigured {
            configuration.actionLEDLines = actions.map { ($0.action, $0.line) }
        }
        configuration.statusLEDLine = statusLine.0
        // One line can light one LED: a duplicate would make two LEDs fight over it.
        var seen: [String: String] = [:]
        seen[statusLine.0] = "leds.status"
        for action in actions {
            let role = "leds.actions.\(action.action)"
            if let other = seen[action.line] {
                throw error(action.fileLine, role, "line \(action.line) is already used by \(other)")
            }
            seen[action.line] = role
        }
        if !actionsConfigured, let clash = configuration.actionLEDLines.first(where: { $0.line == statusLine.0 }) {
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
        error(entry.line, entry.dottedKey, "expected \(expected), got \(MessageExcerpt.show(entry.value))")
    }

    private func string(_ entry: TOMLEntry) throws(ConfigurationError) -> String {
        guard case .string(let text) = entry.value else { throw mismatch(entry, expected: "a string") }
        // A path or name with a NUL (`\u0000`) would be cut there when handed to the C library.
        guard !text.utf8.contains(0) else {
            throw error(entry.line, entry.dottedKey, "expected a string without NUL characters, got \(MessageExcerpt.quoted(text))")
        }
        return text
    }

    private func path(_ entry: TOMLEntry) throws(ConfigurationError) -> String {
        let text = try string(entry)
        guard text.hasPrefix("/") else { throw error(entry.line, entry.dottedKey, "expected an absolute path, got \(MessageExcerpt.quoted(text))") }
        return text
    }

    private func lineName(_ entry: TOMLEntry) throws(ConfigurationError) -> String {
        let text = try string(entry)
        guard !text.isEmpty, text.utf8.count < 32, !text.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F }) else {
            throw error(entry.line, entry.dottedKey, "expected a GPIO line name such as \"GPIO17\", got \(MessageExcerpt.show(entry.value))")
        }
        return text
    }

    private func integer(_ entry: TOMLEntry, in range: ClosedRange<Int>, unit: String = "") throws(ConfigurationError) -> Int {
        let expected = "an integer from \(range.lowerBound) to \(range.upperBound)\(unit)"
        guard case .integer(let number) = entry.value else { throw mismatch(entry, expected: expected) }
        guard range.contains(number) else { throw mismatch(entry, expected: expected) }
        return number
    }

    /// A rotation in degrees clockwise: 0, 90, 180 or 270 (`FrameOrientation.degreeChoices`; this
    /// file does not import Capture, so the fuzz target builds without it).
    private func quarterTurn(_ entry: TOMLEntry) throws(ConfigurationError) -> Int {
        guard case .integer(let degrees) = entry.value, [0, 90, 180, 270].contains(degrees) else {
            throw mismatch(entry, expected: "0, 90, 180 or 270 (degrees clockwise)")
        }
        return degrees
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
