import LinuxSystem

/// One source of repeated failures (the camera, the GPIO lines) seen as episodes: the first failure
/// starts an episode and is logged; later failures are only counted; the first success ends it and
/// is logged once with the count. This keeps a camera that fails 30 times a second from flooding the
/// journal, the way ustreamer logs a failing device once per episode.
public struct ErrorEpisode: Sendable, Equatable {
    /// How an episode ended.
    public struct End: Sendable, Equatable {
        /// Failures seen during the episode, the first included.
        public var failures: Int
        /// From the first failure to the success that ended it.
        public var seconds: Double
    }

    /// Failures in the current episode (0 when none is running).
    public private(set) var failures = 0
    /// When the current episode started.
    public private(set) var startedAt: MonotonicInstant?

    public init() {}

    /// Whether an episode is running.
    public var isActive: Bool { startedAt != nil }

    /// Counts a failure; true when it starts an episode (log it), false when one is already running.
    public mutating func recordFailure(at now: MonotonicInstant) -> Bool {
        failures += 1
        guard startedAt == nil else { return false }
        startedAt = now
        return true
    }

    /// Records a success; when it ends an episode, returns what the episode was (log it once).
    public mutating func recordSuccess(at now: MonotonicInstant) -> End? {
        guard let startedAt else { return nil }
        let end = End(failures: failures, seconds: (now - startedAt).seconds)
        self = ErrorEpisode()
        return end
    }
}
