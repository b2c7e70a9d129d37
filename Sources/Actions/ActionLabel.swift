/// What the action stage says about the current window: one of the classifier's actions, or one of
/// the outcomes that are not an action (nobody there, an unsure model, a window not yet full).
///
/// Raw values are the snake_case names used in model metadata, replay's JSONL and the journal.
/// Written for the repetition counter first; the classifier can adopt it as its output type.
public enum ActionLabel: String, CaseIterable, Sendable {
    case jumpingJacks = "jumping_jacks"
    case lunges
    case burpees
    case squats
    case pushUps = "push_ups"
    /// Anything that is none of our actions (standing, walking, other exercises).
    case other
    /// Fewer than 60 % of the window's slots hold a real pose.
    case noPerson = "no_person"
    /// The classifier's best score is below its threshold.
    case lowConfidence = "low_confidence"
    /// The first window is not full yet.
    case startingUp = "starting_up"

    /// The actions whose repetitions are counted.
    public static let countable: [ActionLabel] = [.jumpingJacks, .lunges, .burpees, .squats, .pushUps]

    /// True for the five exercises; false for `other` and the non-action outcomes, which are never
    /// counted.
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
        case .other, .noPerson, .lowConfidence, .startingUp: return nil
        }
    }
}
