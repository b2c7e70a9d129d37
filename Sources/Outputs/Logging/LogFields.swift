/// How important a log entry is, in swift-log's levels; each maps onto a syslog/journald priority.
public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    case trace, debug, info, notice, warning, error, critical

    /// The journald `PRIORITY` (syslog severity 0–7) this level is written with.
    public var journalPriority: Int {
        switch self {
        case .trace, .debug: 7  // LOG_DEBUG: journald has nothing finer
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// The level's name as written in the config file (`info`, `warning`, …).
    public var name: String {
        switch self {
        case .trace: "trace"
        case .debug: "debug"
        case .info: "info"
        case .notice: "notice"
        case .warning: "warning"
        case .error: "error"
        case .critical: "critical"
        }
    }

    /// The level named `name` (as in `name`), or nil.
    public init?(name: String) {
        guard let level = LogLevel.allCases.first(where: { $0.name == name }) else { return nil }
        self = level
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// What kind of thing an entry reports, written as `POSEWATCH_EVENT=` so the owner can filter
/// (`journalctl -u posewatch POSEWATCH_EVENT=rep`).
public enum LogEvent: String, Sendable, CaseIterable {
    case start, action, rep, summary, camera, config, stop, error
}

/// A value of an extra structured field.
public enum LogValue: Sendable, Equatable {
    case string(String)
    case integer(Int)
    /// A number written with `fractionDigits` digits after the point.
    case decimal(Double, fractionDigits: Int)
}

/// An extra structured field beyond the ones `LogFields` names.
public struct LogField: Sendable, Equatable {
    /// A valid journald field name: `A–Z`, `0–9`, `_`, not starting with a digit or `_`, ≤ 64 bytes.
    public let name: String
    public let value: LogValue

    /// Makes a field; `name` is upper-cased and anything journald would refuse is replaced by `_`
    /// (a leading digit or underscore gets an `X` in front), so an entry is never dropped for its
    /// field names.
    public init(_ name: String, _ value: LogValue) {
        var bytes: [UInt8] = name.utf8.map { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - 32
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"): byte
            default: UInt8(ascii: "_")
            }
        }
        if bytes.isEmpty || bytes[0] == UInt8(ascii: "_") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[0]) {
            bytes.insert(UInt8(ascii: "X"), at: 0)
        }
        self.name = String(decoding: bytes.prefix(64), as: UTF8.self)
        self.value = value
    }
}

/// The structured fields of one entry. The ones the frame loop writes are stored properties so that
/// building them allocates nothing; anything else goes in `extra`.
public struct LogFields: Sendable, Equatable {
    /// `POSEWATCH_EVENT`.
    public var event: LogEvent?
    /// `ACTION`: an action label (`squats`) or `other`, `no_person`, `low_confidence`.
    public var action: String?
    /// `CONFIDENCE`: the classifier's confidence, 0–1, written with 3 decimals.
    public var confidence: Double?
    /// `REPS`: repetitions counted for `action` so far.
    public var reps: Int?
    /// `FPS`: frames processed per second, 1 decimal.
    public var fps: Double?
    /// `DROPPED_FRAMES`: frames dropped at the camera because the loop was busy.
    public var droppedFrames: Int?
    /// `INFERENCE_MS`: pose + classifier time for a frame (or its median in a summary), 2 decimals.
    public var inferenceMilliseconds: Double?
    /// `REP_REALTIME_USEC`: when a counted repetition happened, in microseconds since the epoch (the
    /// unit of the journal's own `__REALTIME_TIMESTAMP`, which is when it was counted).
    public var repetitionRealtimeMicroseconds: Int?
    /// `REP_LATE_MS`: how long after it happened a repetition was counted, when it was credited
    /// late (seen before the classifier named the exercise); absent when counted as it happened.
    public var repetitionLateMilliseconds: Int?
    /// `PERSONS`: people in view (on `camera` entries about people; in summaries the most on one frame).
    public var persons: Int?
    /// `BRIGHTNESS`: the picture's mean brightness, 0–255 (on `camera` entries about a too-dark picture).
    public var brightness: Int?
    /// `EPISODE_FAILURES`: failures in an error episode, on the entry that ends it.
    public var episodeFailures: Int?
    /// `EPISODE_SECONDS`: how long an error episode lasted, 1 decimal, on the entry that ends it.
    public var episodeSeconds: Double?
    /// Any other fields (summaries, configuration details).
    public var extra: [LogField]

    public init(
        event: LogEvent? = nil, action: String? = nil, confidence: Double? = nil, reps: Int? = nil,
        fps: Double? = nil, droppedFrames: Int? = nil, inferenceMilliseconds: Double? = nil,
        repetitionRealtimeMicroseconds: Int? = nil, repetitionLateMilliseconds: Int? = nil,
        persons: Int? = nil, brightness: Int? = nil, episodeFailures: Int? = nil, episodeSeconds: Double? = nil,
        extra: [LogField] = []
    ) {
        self.event = event
        self.action = action
        self.confidence = confidence
        self.reps = reps
        self.fps = fps
        self.droppedFrames = droppedFrames
        self.inferenceMilliseconds = inferenceMilliseconds
        self.repetitionRealtimeMicroseconds = repetitionRealtimeMicroseconds
        self.repetitionLateMilliseconds = repetitionLateMilliseconds
        self.persons = persons
        self.brightness = brightness
        self.episodeFailures = episodeFailures
        self.episodeSeconds = episodeSeconds
        self.extra = extra
    }

    /// Calls `body` with each present field's journald name and value, in a fixed order.
    @inline(__always)
    func forEach(_ body: (StaticString?, String?, LogValue) -> Void) {
        if let event { body("POSEWATCH_EVENT", nil, .string(event.rawValue)) }
        if let action { body("ACTION", nil, .string(action)) }
        if let confidence { body("CONFIDENCE", nil, .decimal(confidence, fractionDigits: 3)) }
        if let reps { body("REPS", nil, .integer(reps)) }
        if let fps { body("FPS", nil, .decimal(fps, fractionDigits: 1)) }
        if let droppedFrames { body("DROPPED_FRAMES", nil, .integer(droppedFrames)) }
        if let inferenceMilliseconds { body("INFERENCE_MS", nil, .decimal(inferenceMilliseconds, fractionDigits: 2)) }
        if let repetitionRealtimeMicroseconds { body("REP_REALTIME_USEC", nil, .integer(repetitionRealtimeMicroseconds)) }
        if let repetitionLateMilliseconds { body("REP_LATE_MS", nil, .integer(repetitionLateMilliseconds)) }
        if let persons { body("PERSONS", nil, .integer(persons)) }
        if let brightness { body("BRIGHTNESS", nil, .integer(brightness)) }
        if let episodeFailures { body("EPISODE_FAILURES", nil, .integer(episodeFailures)) }
        if let episodeSeconds { body("EPISODE_SECONDS", nil, .decimal(episodeSeconds, fractionDigits: 1)) }
        for field in extra { body(nil, field.name, field.value) }
    }
}
