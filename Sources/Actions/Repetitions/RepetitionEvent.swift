/// One counted repetition: what the LEDs flash for and the journal logs.
///
/// A plain value (no references, no strings built per event), so emitting one costs nothing.
public struct RepetitionEvent: Equatable, Sendable {
    /// The action whose repetition this is (always a countable one).
    public var label: ActionLabel
    /// The cumulative count of `label` in this session, this repetition included.
    public var count: Int
    /// The cumulative count over all actions in this session, this repetition included.
    public var sessionCount: Int
    /// The timestamp (seconds) of the frame on which the repetition was counted.
    public var timestamp: Double
    /// How many repetitions this event adds: 1, or more when repetitions done during the counter's
    /// warm-up are credited together as it ends (`count` already includes them all).
    public var repetitions: Int

    public init(label: ActionLabel, count: Int, sessionCount: Int, timestamp: Double, repetitions: Int = 1) {
        self.label = label
        self.count = count
        self.sessionCount = sessionCount
        self.timestamp = timestamp
        self.repetitions = repetitions
    }
}
