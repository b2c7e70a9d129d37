import LinuxSystem
import Testing
@testable import Outputs

private func seconds(_ value: Double) -> MonotonicInstant { MonotonicInstant(nanoseconds: Int64(value * 1e9)) }

@Suite struct RunSummaryTests {
    @Test func aSummaryReportsFpsDropsPercentilesAndTimeAndRepsPerAction() {
        var summary = RunSummary(actionLabels: ["squats", "lunges"], now: seconds(0))
        // 60 s at 15 fps: 882 frames at 40 ms, 18 slow ones (2 %) at 120 ms → p50 40, p99 120.
        for frame in 0..<900 { summary.recordFrame(inferenceNanoseconds: frame % 100 < 98 ? 40_000_000 : 120_000_000) }
        summary.recordDroppedFrames(7)
        summary.actionChanged(to: 0, at: seconds(5))
        for _ in 0..<12 { summary.repetitionCounted(action: 0) }
        summary.actionChanged(to: nil, at: seconds(35))      // low confidence: not counted as squats
        summary.actionChanged(to: 1, at: seconds(40))
        summary.repetitionCounted(action: 1)
        let fields = summary.fields(at: seconds(60))
        #expect(fields.event == .summary)
        #expect(fields.fps == 15)
        #expect(fields.droppedFrames == 7)
        #expect(fields.inferenceMilliseconds == 40.25)
        let extra = Dictionary(uniqueKeysWithValues: fields.extra.map { ($0.name, $0.value) })
        #expect(extra["INFERENCE_P99_MS"] == .decimal(120.25, fractionDigits: 2))
        #expect(extra["FRAMES"] == .integer(900))
        #expect(extra["SECONDS_SQUATS"] == .decimal(30, fractionDigits: 1))
        #expect(extra["SECONDS_LUNGES"] == .decimal(20, fractionDigits: 1))
        #expect(extra["REPS_SQUATS"] == .integer(12))
        #expect(extra["REPS_LUNGES"] == .integer(1))
    }

    @Test func aNewIntervalRestartsRatesButKeepsRunTotals() {
        var summary = RunSummary(actionLabels: ["squats"], now: seconds(0))
        summary.actionChanged(to: 0, at: seconds(0))
        summary.recordFrame(inferenceNanoseconds: 10_000_000)
        summary.recordDroppedFrames(3)
        summary.repetitionCounted(action: 0)
        _ = summary.fields(at: seconds(60))
        summary.startInterval(at: seconds(60))
        #expect(summary.inferenceMilliseconds(percentile: 0.5) == nil)
        let fields = summary.fields(at: seconds(120))
        #expect(fields.fps == 0)
        #expect(fields.droppedFrames == 0)
        let extra = Dictionary(uniqueKeysWithValues: fields.extra.map { ($0.name, $0.value) })
        #expect(extra["DROPPED_FRAMES_TOTAL"] == .integer(3))
        #expect(extra["SECONDS_SQUATS"] == .decimal(120, fractionDigits: 1))
        #expect(extra["REPS_SQUATS"] == .integer(1))
    }

    @Test func inferenceSlowerThanASecondLandsInTheOverflowBucket() {
        var summary = RunSummary(actionLabels: [], now: seconds(0))
        summary.recordFrame(inferenceNanoseconds: 5_000_000_000)
        summary.recordFrame(inferenceNanoseconds: -1)
        #expect(summary.inferenceMilliseconds(percentile: 1.0) == 1000.25)
        #expect(summary.inferenceMilliseconds(percentile: 0.5) == 0.25)
    }
}
