/// Which LED shows what: the action LEDs in order, then the status LED. Built once from the
/// configuration; the loop uses it to turn a classifier label into an `ActionIndication`.
public struct LEDLayout: Sendable, Equatable {
    /// Action labels, in LED order (index = LED index in `ActionIndication.action`).
    public let actionLabels: [String]
    /// Every LED as (line name, role): the action LEDs, then the status LED with role `status`.
    public let leds: [LEDLine]

    /// A layout from the configured `(action label, line name)` pairs and the status LED's line.
    /// More actions than `LEDController.maximumActionCount` is an error rather than a trap later in
    /// `LEDController`: the pairs come from a config file, which may hold anything.
    public init(actions: [(action: String, line: String)], statusLine: String) throws(LEDError) {
        guard actions.count <= LEDController.maximumActionCount else {
            throw LEDError("\(actions.count) action LEDs configured; posewatch drives at most \(LEDController.maximumActionCount)")
        }
        actionLabels = actions.map(\.action)
        leds = actions.map { LEDLine(lineName: $0.line, role: $0.action) } + [LEDLine(lineName: statusLine, role: "status")]
    }

    /// Number of action LEDs.
    public var actionCount: Int { actionLabels.count }

    /// The LED index of an action label, or nil when that action has no LED (it then shows like
    /// `other`). A linear scan over a handful of labels: no hashing, no allocation (written out
    /// because a debug build's unspecialised `firstIndex(of:)` allocates on every call).
    public func index(ofAction label: String) -> Int? {
        for index in actionLabels.indices where actionLabels[index] == label { return index }
        return nil
    }

    /// The indication for a confident prediction of `label`.
    public func indication(forAction label: String) -> ActionIndication {
        index(ofAction: label).map(ActionIndication.action) ?? .other
    }
}
