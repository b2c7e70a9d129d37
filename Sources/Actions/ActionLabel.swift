/// The exercises posewatch recognises, plus `other` for everything else a person does.
/// Raw values are the names used in model metadata, replay output, the journal and the config.
public enum ActionLabel: String, CaseIterable, Sendable, Hashable {
    case jumpingJacks = "jumping_jacks"
    case lunges
    case burpees
    case squats
    case pushUps = "push_ups"
    case other

    /// The actions whose repetitions are counted.
    public static let countable: [ActionLabel] = [.jumpingJacks, .lunges, .burpees, .squats, .pushUps]

    /// True for the five exercises; false for `other`, which is never counted.
    @inline(__always)
    public var isCountable: Bool { countableIndex != nil }

    /// A dense index 0..<5 over the countable actions (for fixed-size per-action tables), or nil.
    @inline(__always)
    public var countableIndex: Int? {
        switch self {
        case .jumpingJacks: return 0
        case .lunges: return 1
        case .burpees: return 2
        case .squats: return 3
        case .pushUps: return 4
        case .other: return nil
        }
    }
}

/// What the classifier stage says about the current window.
public enum ActionDecision: Equatable, Sendable {
    /// Not enough time has passed for a full window.
    case startingUp
    /// Fewer than the required share of the window's slots hold a pose.
    case noPerson
    /// The best label's confidence is below the threshold; the best guess is kept for reporting.
    case lowConfidence(best: ActionLabel, confidence: Float)
    /// A recognised action.
    case action(ActionLabel, confidence: Float)

    /// The name used in replay output and the journal (`jumping_jacks`, `no_person`, …).
    public var name: String {
        switch self {
        case .startingUp: return "starting_up"
        case .noPerson: return "no_person"
        case .lowConfidence: return "low_confidence"
        case .action(let label, _): return label.rawValue
        }
    }

    /// The confidence, when the classifier ran.
    public var confidence: Float? {
        switch self {
        case .startingUp, .noPerson: return nil
        case .lowConfidence(_, let confidence), .action(_, let confidence): return confidence
        }
    }

    /// The recognised action, if any (nil for outcomes).
    public var action: ActionLabel? {
        if case .action(let label, _) = self { return label }
        return nil
    }
}
