/// One counted repetition: what the LEDs wink for and the journal logs.
///
/// A plain value (no references, no strings built per event), so emitting one costs nothing.
public struct RepetitionEvent: Equatable, Sendable {
    /// The action whose repetition this is (always a countable one).
    public var label: ActionLabel
    /// The cumulative count of `label` in this session, this repetition included.
    public var count: Int
    /// The cumulative count over all actions in this session, this repetition included.
    public var sessionCount: Int
    /// When the repetition happened (seconds on the counter's clock): the frame on which the
    /// motion crossed into its far half.
    public var time: Double
    /// When it was counted: the same frame, or later when the repetition was seen before the
    /// classifier named the exercise and is credited as it does.
    public var creditedAt: Double

    public init(label: ActionLabel, count: Int, sessionCount: Int, time: Double, creditedAt: Double) {
        self.label = label
        self.count = count
        self.sessionCount = sessionCount
        self.time = time
        self.creditedAt = creditedAt
    }

    /// Seconds between the repetition and its count (0 when counted as it happened).
    public var lateness: Double { creditedAt - time }
    /// Whether it was counted on a later frame than the one it happened on.
    public var isCreditedLate: Bool { lateness > 1e-6 }
}
