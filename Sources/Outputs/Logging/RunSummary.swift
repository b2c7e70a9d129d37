import LinuxSystem

/// What the periodic summary entry reports, accumulated by the frame loop without allocating:
/// frames, dropped frames and inference times per interval (reset by `startInterval`), and seconds
/// and repetitions per action for the whole run.
///
/// Inference percentiles come from a fixed histogram (0.25 ms buckets up to 1 s, then one overflow
/// bucket), so p50/p99 are exact to a quarter millisecond and recording a frame is one increment.
public struct RunSummary: Sendable {
    /// Action labels, in LED/classifier order.
    public let actionLabels: [String]
    private var intervalStart: MonotonicInstant
    /// Frames processed in this interval.
    public private(set) var frames = 0
    /// Frames dropped at the camera in this interval.
    public private(set) var droppedFrames = 0
    /// Frames dropped since the run started.
    public private(set) var totalDroppedFrames = 0
    private var histogram: [UInt32]
    private static let bucketNanoseconds: Int64 = 250_000
    private static let bucketCount = 4000  // 1 s of 0.25 ms buckets; one more for anything slower
    /// Seconds spent confidently in each action since the start.
    public private(set) var secondsPerAction: [Double]
    /// Repetitions counted per action since the start.
    public private(set) var repetitionsPerAction: [Int]
    private var currentAction: Int?
    private var currentActionSince: MonotonicInstant
    /// The most people in view on any frame of this interval (the watched person and the others
    /// the pose stage found).
    public private(set) var mostPeopleInView = 0

    /// A summary for `actionLabels` starting at `now`.
    public init(actionLabels: [String], now: MonotonicInstant) {
        self.actionLabels = actionLabels
        intervalStart = now
        currentActionSince = now
        histogram = Array(repeating: 0, count: Self.bucketCount + 1)
        secondsPerAction = Array(repeating: 0, count: actionLabels.count)
        repetitionsPerAction = Array(repeating: 0, count: actionLabels.count)
    }

    /// Records one processed frame and how long its inference took.
    public mutating func recordFrame(inferenceNanoseconds: Int64) {
        frames += 1
        let bucket = min(max(Int(inferenceNanoseconds / Self.bucketNanoseconds), 0), Self.bucketCount)
        histogram[bucket] &+= 1
    }

    /// Records how many people were in view on a frame.
    public mutating func recordPeopleInView(_ count: Int) {
        mostPeopleInView = max(mostPeopleInView, count)
    }

    /// Records frames the camera dropped because the loop was busy.
    public mutating func recordDroppedFrames(_ count: Int) {
        droppedFrames += count
        totalDroppedFrames += count
    }

    /// The action being shown changed to `action` (an index into `actionLabels`, or nil for
    /// anything that is not a confident action) at `now`.
    public mutating func actionChanged(to action: Int?, at now: MonotonicInstant) {
        closeCurrentAction(at: now)
        currentAction = action
    }

    /// One repetition of `action` was counted.
    public mutating func repetitionCounted(action: Int) {
        repetitionsPerAction[action] += 1
    }

    private mutating func closeCurrentAction(at now: MonotonicInstant) {
        if let currentAction {
            secondsPerAction[currentAction] += (now - currentActionSince).seconds
        }
        currentActionSince = now
    }

    /// Frames per second over the interval so far.
    public func framesPerSecond(at now: MonotonicInstant) -> Double {
        let seconds = (now - intervalStart).seconds
        return seconds > 0 ? Double(frames) / seconds : 0
    }

    /// The inference time (ms) below which `fraction` (0–1) of this interval's frames fall, taken
    /// as the upper edge of its histogram bucket; nil without frames.
    public func inferenceMilliseconds(percentile fraction: Double) -> Double? {
        guard frames > 0 else { return nil }
        let rank = max(1, Int((fraction * Double(frames)).rounded(.up)))
        var seen = 0
        for (bucket, count) in histogram.enumerated() {
            seen += Int(count)
            if seen >= rank { return Double(Int64(bucket + 1) * Self.bucketNanoseconds) / 1e6 }
        }
        return nil
    }

    /// The summary entry's fields at `now` (this allocates the extra fields: once per interval).
    /// `FPS`, `DROPPED_FRAMES`, `INFERENCE_MS` (p50), `FRAMES` and `INFERENCE_P99_MS` cover the
    /// interval (the loop calls `startInterval` after logging them); `DROPPED_FRAMES_TOTAL`,
    /// `SECONDS_<ACTION>` and `REPS_<ACTION>` cover the whole run; `PERSONS`, the most people in
    /// view on one frame, covers the interval.
    public mutating func fields(at now: MonotonicInstant) -> LogFields {
        closeCurrentAction(at: now)
        var extra: [LogField] = [
            LogField("FRAMES", .integer(frames)),
            LogField("DROPPED_FRAMES_TOTAL", .integer(totalDroppedFrames)),
        ]
        if let p99 = inferenceMilliseconds(percentile: 0.99) {
            extra.append(LogField("INFERENCE_P99_MS", .decimal(p99, fractionDigits: 2)))
        }
        for (index, label) in actionLabels.enumerated() {
            extra.append(LogField("SECONDS_\(label)", .decimal(secondsPerAction[index], fractionDigits: 1)))
            extra.append(LogField("REPS_\(label)", .integer(repetitionsPerAction[index])))
        }
        return LogFields(
            event: .summary, fps: framesPerSecond(at: now), droppedFrames: droppedFrames,
            inferenceMilliseconds: inferenceMilliseconds(percentile: 0.5), persons: mostPeopleInView, extra: extra)
    }

    /// Starts a new interval at `now` (after logging a summary): frames, drops and the histogram
    /// restart; per-action totals carry on.
    public mutating func startInterval(at now: MonotonicInstant) {
        intervalStart = now
        frames = 0
        droppedFrames = 0
        mostPeopleInView = 0
        for index in histogram.indices { histogram[index] = 0 }
    }
}
