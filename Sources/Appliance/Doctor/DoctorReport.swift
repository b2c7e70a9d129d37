import JSONFormat
import Capture
import Outputs
import LinuxSystem

/// How one checked item stands.
public enum DoctorVerdict: String, Sendable, Comparable {
    /// Works.
    case ok
    /// Works, or is not needed, but deserves attention.
    case note
    /// Stops the appliance from running as configured.
    case fail

    private var rank: Int { self == .ok ? 0 : self == .note ? 1 : 2 }
    public static func < (lhs: DoctorVerdict, rhs: DoctorVerdict) -> Bool { lhs.rank < rhs.rank }
}

/// One line of the doctor's report: an area, a subject, a verdict and what to do about it.
public struct DoctorItem: Sendable, Equatable {
    public enum Area: String, Sendable { case config, camera, gpio, journal, model }
    public var area: Area
    /// What was checked (`/dev/video0`, `GPIO17`, `pose model`).
    public var subject: String
    public var verdict: DoctorVerdict
    /// One line: what was found and, when it is not OK, what to do.
    public var summary: String
    /// Further facts, one per line (formats, sizes, digests).
    public var details: [String]
    /// The same facts for `--json`.
    public var facts: [(String, JSONValue)]

    public init(area: Area, subject: String, verdict: DoctorVerdict, summary: String,
                details: [String] = [], facts: [(String, JSONValue)] = []) {
        self.area = area
        self.subject = subject
        self.verdict = verdict
        self.summary = summary
        self.details = details
        self.facts = facts
    }

    public static func == (lhs: DoctorItem, rhs: DoctorItem) -> Bool {
        lhs.area == rhs.area && lhs.subject == rhs.subject && lhs.verdict == rhs.verdict
            && lhs.summary == rhs.summary && lhs.details == rhs.details
    }
}

/// The whole report and the exit status it implies.
public struct DoctorReport: Sendable {
    public var items: [DoctorItem]

    /// `doctor`'s exit status: 0 when nothing fails (the appliance can run as configured),
    /// 1 when at least one item fails.
    public var exitStatus: Int32 { items.contains { $0.verdict == .fail } ? 1 : 0 }

    /// The plain-text report: one verdict line per item with indented details, then the overall verdict.
    /// Each field is kept to its own line: the subject (a path, a line name from outside) is escaped,
    /// and whatever control characters a summary or detail still holds are escaped too, so no
    /// camera name or path can add a line (a forged `verdict: ready`).
    public func text() -> String {
        var lines: [String] = []
        var lastArea: DoctorItem.Area?
        for item in items {
            if item.area != lastArea {
                lines.append(item.area.rawValue.uppercased())
                lastArea = item.area
            }
            let mark = item.verdict == .ok ? "ok  " : item.verdict == .note ? "note" : "FAIL"
            lines.append("  [\(mark)] \(MessageExcerpt.path(item.subject)): \(MessageExcerpt.oneLine(item.summary))")
            lines += item.details.map { "         \(MessageExcerpt.oneLine($0))" }
        }
        let failures = items.filter { $0.verdict == .fail }.count
        lines.append(failures == 0
            ? "verdict: ready (exit 0)"
            : "verdict: not ready, \(failures) item\(failures == 1 ? "" : "s") failed (exit 1)")
        return lines.joined(separator: "\n")
    }

    /// The report as one JSON object.
    public func json(version: String) -> JSONValue {
        .object([
            ("version", .string(version)),
            ("ready", .bool(exitStatus == 0)),
            ("items", .array(items.map { item in
                .object([
                    ("area", .string(item.area.rawValue)), ("subject", .string(item.subject)),
                    ("verdict", .string(item.verdict.rawValue)), ("summary", .string(item.summary)),
                ] + item.facts)
            })),
        ])
    }
}
