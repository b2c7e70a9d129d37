import Testing
@testable import LinuxSystem

/// `MonotonicInstant` and `MonotonicDuration` replace hand-written nanosecond sums, so each
/// operation must give exactly what the sum it replaced gave.
struct MonotonicTimeTests {
    @Test func anInstantPlusADurationMinusTheSameInstantIsThatDuration() {
        let start = MonotonicInstant(nanoseconds: 5_000_000_123)
        let later = start + .milliseconds(250)
        #expect(later.nanoseconds == 5_250_000_123)
        #expect(later - start == .nanoseconds(250_000_000))
        #expect(start - later == .nanoseconds(-250_000_000))
        #expect(later - .milliseconds(250) == start)
        var moved = start
        moved += .seconds(2)
        #expect(moved.nanoseconds == 7_000_000_123)
    }

    @Test func durationsAddSubtractAndCompareByNanoseconds() {
        #expect(MonotonicDuration.seconds(1) + .milliseconds(5) == .nanoseconds(1_005_000_000))
        #expect(MonotonicDuration.seconds(1) - .milliseconds(5) == .nanoseconds(995_000_000))
        #expect(MonotonicDuration.milliseconds(1) > .nanoseconds(999_999))
        #expect(MonotonicDuration.nanoseconds(-1) < .zero)
        #expect(min(MonotonicDuration.seconds(3), .milliseconds(2_999)) == .milliseconds(2_999))
    }

    @Test func fractionalSecondsRoundTowardZeroAsTheSumsDid() {
        #expect(MonotonicDuration(seconds: 10.0) == .seconds(10))
        #expect(MonotonicDuration(seconds: 0.000_000_001_9).nanoseconds == 1)
        #expect(MonotonicDuration(seconds: -0.000_000_001_9).nanoseconds == -1)
        #expect(MonotonicDuration(seconds: 2.5).nanoseconds == 2_500_000_000)
    }

    @Test func reportsInSecondsAndMillisecondsDivideTheNanosecondCount() {
        let span = MonotonicDuration.nanoseconds(1_234_567_891)
        #expect(span.seconds == Double(1_234_567_891) / 1e9)
        #expect(span.milliseconds == Double(1_234_567_891) / 1e6)
    }

    @Test func wholeMillisecondsTruncateAndWaitsRoundUp() {
        #expect(MonotonicDuration.nanoseconds(1_999_999).wholeMilliseconds == 1)
        #expect(MonotonicDuration.nanoseconds(-1_999_999).wholeMilliseconds == -1)
        #expect(MonotonicDuration.nanoseconds(1).wholeMillisecondsRoundedUp == 1)
        #expect(MonotonicDuration.nanoseconds(1_000_000).wholeMillisecondsRoundedUp == 1)
        #expect(MonotonicDuration.nanoseconds(1_000_001).wholeMillisecondsRoundedUp == 2)
        #expect(MonotonicDuration.zero.wholeMillisecondsRoundedUp == 0)
    }

    @Test func aTimeSpecificationSplitsSecondsAndNanoseconds() {
        let specification = MonotonicDuration.nanoseconds(3_000_000_007).timeSpecification
        #expect(specification.tv_sec == 3 && specification.tv_nsec == 7)
    }

    @Test func theZeroInstantIsBeforeEveryReading() {
        #expect(MonotonicInstant.zero < MonotonicInstant.now())
    }
}
