/// Turns classifier outputs into decisions the user sees, and keeps them from flickering.
///
/// Rules, in order, each time a window is classified:
/// 1. Before the first full window: `startingUp`.
/// 2. Fewer than `minimumPresentShare` (60 %) of the window's slots hold a real pose: `noPerson`,
///    reported at once (the LEDs go off promptly when someone leaves), and the smoothing restarts.
/// 3. Otherwise the class probabilities are averaged with the previous decision's
///    (exponential smoothing, weight `smoothing` on the past); the best class below
///    `confidenceThreshold` (0.6) is `lowConfidence`, else `action(label)`.
/// 4. Hysteresis: a decision different from the one reported is only reported after it has come
///    out `confirmations` (2) times in a row; until then the previous report stands. Leaving
///    `startingUp` and entering `noPerson` need no confirmation. An action that was the best guess
///    of the reported `lowConfidence` needs only `promotions` (1): its label did not change, only
///    its confidence rose past the threshold, and the hysteresis is there against label flicker
///    (docs/history.md, r34: the time to the first label).
public struct DecisionPolicy: Sendable {
    public var confidenceThreshold: Float = 0.6
    public var minimumPresentShare: Double = 0.6
    /// Weight of the previous smoothed probabilities (0 = no smoothing).
    public var smoothing: Float = 0.5
    /// How many consecutive windows a new decision needs before it is reported.
    public var confirmations = 2
    /// How many consecutive windows an action needs after a reported `lowConfidence` whose best
    /// guess was that same label (at most `confirmations` are ever needed).
    public var promotions = 1

    private var smoothed: [Float]
    private var hasHistory = false
    private var candidate: ActionDecision?
    private var candidateRuns = 0
    /// The decision currently reported.
    public private(set) var reported: ActionDecision = .startingUp

    /// A policy for a model with `labels` outputs.
    public init(labelCount: Int) {
        smoothed = [Float](repeating: 0, count: labelCount)
    }

    /// The decision after a window with `presentShare` of its slots holding poses; `probabilities`
    /// are the classifier's outputs in `labels` order (ignored for `noPerson`).
    public mutating func decide(windowFull: Bool, presentShare: Double, probabilities: UnsafeBufferPointer<Float>,
                                labels: [ActionLabel]) -> ActionDecision {
        guard windowFull else { return report(.startingUp, immediately: true) }
        guard presentShare >= minimumPresentShare else {
            hasHistory = false
            return report(.noPerson, immediately: true)
        }
        precondition(probabilities.count == smoothed.count && labels.count == smoothed.count)
        var best = 0
        for index in 0..<smoothed.count {
            smoothed[index] = hasHistory ? smoothing * smoothed[index] + (1 - smoothing) * probabilities[index] : probabilities[index]
            if smoothed[index] > smoothed[best] { best = index }
        }
        hasHistory = true
        let confidence = smoothed[best]
        let decision: ActionDecision = confidence < confidenceThreshold
            ? .lowConfidence(best: labels[best], confidence: confidence) : .action(labels[best], confidence: confidence)
        return report(decision, immediately: false)
    }

    /// Forgets history (a new session).
    public mutating func reset() {
        hasHistory = false
        candidate = nil
        candidateRuns = 0
        reported = .startingUp
    }

    private mutating func report(_ decision: ActionDecision, immediately: Bool) -> ActionDecision {
        if Self.sameKind(decision, reported) {
            reported = decision  // same label: refresh the confidence
            candidate = nil
            candidateRuns = 0
            return reported
        }
        if immediately || reported == .startingUp {
            reported = decision
            candidate = nil
            candidateRuns = 0
            return reported
        }
        if let current = candidate, Self.sameKind(current, decision) {
            candidateRuns += 1
        } else {
            candidate = decision
            candidateRuns = 1
        }
        if candidateRuns >= requiredRuns(from: reported, to: decision) {
            reported = decision
            candidate = nil
            candidateRuns = 0
        }
        return reported
    }

    /// Windows in a row `decision` needs to replace `reported`: fewer when a low-confidence guess
    /// becomes confident with the same label.
    func requiredRuns(from reported: ActionDecision, to decision: ActionDecision) -> Int {
        if case .lowConfidence(let guess, _) = reported, case .action(let label, _) = decision, guess == label {
            return max(1, min(promotions, confirmations))
        }
        return confirmations
    }

    /// Same outcome and, for actions, the same label (confidence may differ).
    static func sameKind(_ a: ActionDecision, _ b: ActionDecision) -> Bool {
        switch (a, b) {
        case (.startingUp, .startingUp), (.noPerson, .noPerson), (.lowConfidence, .lowConfidence): return true
        case (.action(let x, _), .action(let y, _)): return x == y
        default: return false
        }
    }
}

/// Seconds spent in each decision, like Apple's `actionFrameCounts` but in seconds: each decision
/// accounts for the time since the previous one.
///
/// The pipeline records into it on the frame a decision or a repetition happens, so it keeps fixed
/// tables filled at init (a dictionary's first insert of an action, or a debug build's dictionary
/// update, allocates); the dictionaries below are built when read, by replay's report.
public struct ActionSummary: Sendable {
    /// Seconds per kind of decision (`kind(of:)`).
    private var secondsPerKind: [Double]
    /// The cumulative count per countable action (`ActionLabel.countableIndex`), nil before its first.
    private var repetitionsPerAction: [Int?]
    public private(set) var decisions = 0

    // Kinds: the countable actions by `countableIndex`, then `other`, `no_person`, `low_confidence`.
    private static let otherKind = ActionLabel.countable.count
    private static let noPersonKind = otherKind + 1
    private static let lowConfidenceKind = otherKind + 2

    /// Where an action's seconds are kept.
    private static func kind(of label: ActionLabel) -> Int { label.countableIndex ?? otherKind }

    public init() {
        secondsPerKind = Array(repeating: 0, count: Self.lowConfidenceKind + 1)
        repetitionsPerAction = Array(repeating: nil, count: ActionLabel.countable.count)
    }

    /// Seconds per decision name (`jumping_jacks`, `no_person`, …), `starting_up` excluded.
    public var seconds: [String: Double] {
        var seconds: [String: Double] = ["no_person": secondsPerKind[Self.noPersonKind],
                                         "low_confidence": secondsPerKind[Self.lowConfidenceKind]]
        for label in ActionLabel.allCases { seconds[label.rawValue] = secondsPerKind[Self.kind(of: label)] }
        return seconds
    }

    /// Repetitions per action label, for the labels counted at least once.
    public var repetitions: [ActionLabel: Int] {
        var repetitions: [ActionLabel: Int] = [:]
        for label in ActionLabel.countable {
            if let index = label.countableIndex, let count = repetitionsPerAction[index] { repetitions[label] = count }
        }
        return repetitions
    }

    /// Records a decision covering `duration` seconds.
    public mutating func record(_ decision: ActionDecision, duration: Double) {
        decisions += 1
        let kind: Int
        switch decision {
        case .startingUp: return
        case .noPerson: kind = Self.noPersonKind
        case .lowConfidence: kind = Self.lowConfidenceKind
        case .action(let label, _): kind = Self.kind(of: label)
        }
        secondsPerKind[kind] += duration
    }

    /// Records a repetition's new cumulative count for `label`.
    public mutating func recordRepetition(_ label: ActionLabel, count: Int) {
        guard let index = label.countableIndex else { return }
        repetitionsPerAction[index] = count
    }
}
