import Actions
import JSONFormat

/// Writes replay's output: JSONL (one object per decision and per repetition, then a summary line;
/// schema in README.md) or a readable timeline with a summary table.
struct ReplayReport {
    enum Format: String { case jsonl, text }
    let format: Format
    private var lastTextLabel = ""

    init(format: Format) { self.format = format }

    mutating func decision(_ decision: ActionDecision, at seconds: Double, repetitions: [ActionLabel: Int]) {
        switch format {
        case .jsonl:
            let confidence: JSONValue = decision.confidence.map { .number(Self.rounded(Double($0), 4)) } ?? .null
            emit(.object([("t", .number(Self.rounded(seconds, 3))), ("label", .string(decision.name)),
                          ("confidence", confidence), ("reps", Self.counts(repetitions))]))
        case .text:
            // A timeline line only when the reported label changes, so the text stays readable.
            guard decision.name != lastTextLabel else { return }
            lastTextLabel = decision.name
            let confidence = decision.confidence.map { " (\(Int(($0 * 100).rounded())) %)" } ?? ""
            print("\(Self.clock(seconds))  \(decision.name)\(confidence)")
        }
    }

    /// The people in view changed in number, or the watch moved to another person: JSONL
    /// `{"t", "event": "people", "people", "watch"}` (`watch` changes when another person is
    /// watched), a line in the text timeline.
    func people(count: Int, watch: Int, moved: Bool, at seconds: Double) {
        switch format {
        case .jsonl:
            emit(.object([("t", .number(Self.rounded(seconds, 3))), ("event", .string("people")),
                          ("people", .integer(count)), ("watch", .integer(watch))]))
        case .text:
            let what = moved ? "now watching another person" : (count == 1 ? "1 person in view" : "\(count) people in view")
            print("\(Self.clock(seconds))    \(what)")
        }
    }

    /// A counted repetition: `t` is when it was counted, `at` when it happened (earlier when it was
    /// credited as the classifier named the exercise).
    func repetition(_ repetition: RepetitionEvent, at seconds: Double) {
        switch format {
        case .jsonl:
            emit(.object([("t", .number(Self.rounded(seconds, 3))), ("event", .string("rep")),
                          ("label", .string(repetition.label.rawValue)), ("count", .integer(repetition.count)),
                          ("at", .number(Self.rounded(repetition.time, 3)))]))
        case .text:
            let late = repetition.isCreditedLate ? " (done at \(Self.clock(repetition.time)))" : ""
            print("\(Self.clock(seconds))    rep \(repetition.count) of \(repetition.label.rawValue)\(late)")
        }
    }

    func summary(_ summary: ActionSummary, frames: Int, poses: Int) {
        let labels = ActionLabel.allCases.map(\.rawValue) + ["no_person", "low_confidence"]
        switch format {
        case .jsonl:
            emit(.object([("summary", .object([
                ("seconds", .object(labels.map { ($0, .number(Self.rounded(summary.seconds[$0] ?? 0, 3))) })),
                ("reps", Self.counts(summary.repetitions)),
                ("frames", .integer(frames)), ("poses", .integer(poses)), ("decisions", .integer(summary.decisions)),
            ]))]))
        case .text:
            print("")
            print("action           seconds   reps")
            for label in labels {
                let seconds = summary.seconds[label] ?? 0
                let reps = ActionLabel(rawValue: label).flatMap { summary.repetitions[$0] }
                guard seconds > 0 || (reps ?? 0) > 0 else { continue }
                let secondsText: String = String(format2: seconds)
                let padding: String = String(repeating: " ", count: max(0, 8 - secondsText.count))
                let repsText: String = reps.map { String($0) } ?? "-"
                print(label.padding(16) + " " + padding + secondsText + "   " + repsText)
            }
            print("\(frames) frames, \(poses) with a person, \(summary.decisions) decisions")
        }
    }

    private func emit(_ value: JSONValue) { print(value.serialized()) }

    static func counts(_ repetitions: [ActionLabel: Int]) -> JSONValue {
        .object(ActionLabel.allCases.filter(\.isCountable).map { ($0.rawValue, .integer(repetitions[$0] ?? 0)) })
    }

    static func rounded(_ value: Double, _ digits: Int) -> Double {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        return (value * scale).rounded() / scale
    }

    static func clock(_ seconds: Double) -> String {
        let tenths = Int((seconds * 10).rounded())
        let minutes = tenths / 600, rest = tenths % 600
        return "\(minutes):\(rest / 10 < 10 ? "0" : "")\(rest / 10).\(rest % 10)"
    }
}

extension String {
    func padding(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}
