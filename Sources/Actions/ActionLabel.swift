/// The exercises posewatch recognises, plus `other` for everything else a person does.
/// Raw values are the names used in model metadata, replay output, the journal and the config.
public enum ActionLabel: String, CaseIterable, Sendable, Hashable {
    case jumpingJacks = "jumping_jacks"
    case lunges
    case burpees
    case squats
    case pushUps = "push_ups"
    case other

    /// Whether repetitions of this label are counted (everything but `other`).
    public var isExercise: Bool { self != .other }
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
