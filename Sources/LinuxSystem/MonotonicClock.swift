#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A point on `CLOCK_MONOTONIC`, the clock V4L2 timestamps frames with, in nanoseconds.
///
/// Time arithmetic goes through `MonotonicDuration` (as swift-nio's `NIODeadline` pairs with
/// `TimeAmount`): `instant + .milliseconds(250)`, `later - earlier`. Both are one `Int64`, so the
/// arithmetic is plain integer arithmetic, traps on overflow and never allocates.
public struct MonotonicInstant: Comparable, Hashable, Sendable {
    /// Nanoseconds since an unspecified start (boot, for CLOCK_MONOTONIC).
    public var nanoseconds: Int64

    /// Wraps a nanosecond count.
    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    /// The clock's start, earlier than any reading: the "not yet" value of a deadline.
    public static let zero = MonotonicInstant(nanoseconds: 0)

    /// `clock_gettime(CLOCK_MONOTONIC)`.
    public static func now() -> MonotonicInstant {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return MonotonicInstant(nanoseconds: Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec))
    }

    /// Seconds as a Double, for reports.
    public var seconds: Double { Double(nanoseconds) / 1e9 }

    public static func < (lhs: MonotonicInstant, rhs: MonotonicInstant) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }

    /// The instant `duration` after `instant`.
    @inlinable
    public static func + (instant: MonotonicInstant, duration: MonotonicDuration) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: instant.nanoseconds + duration.nanoseconds)
    }

    /// The instant `duration` before `instant`.
    @inlinable
    public static func - (instant: MonotonicInstant, duration: MonotonicDuration) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: instant.nanoseconds - duration.nanoseconds)
    }

    /// The time from `earlier` to `later` (negative when `later` is the earlier one).
    @inlinable
    public static func - (later: MonotonicInstant, earlier: MonotonicInstant) -> MonotonicDuration {
        MonotonicDuration(nanoseconds: later.nanoseconds - earlier.nanoseconds)
    }

    /// Moves `instant` on by `duration`.
    @inlinable
    public static func += (instant: inout MonotonicInstant, duration: MonotonicDuration) {
        instant = instant + duration
    }
}

/// A signed span of monotonic time in nanoseconds: the difference of two `MonotonicInstant`s,
/// or an amount to add to one (swift-nio's `TimeAmount`).
///
/// Not Swift's `Duration`: that one counts attoseconds in 128 bits, and reports derived from it
/// (`seconds`, `milliseconds`) would round differently from the nanosecond sums they replace.
public struct MonotonicDuration: Comparable, Hashable, Sendable {
    /// The span in nanoseconds.
    public var nanoseconds: Int64

    /// Wraps a nanosecond count.
    @inlinable
    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    /// No time at all.
    public static let zero = MonotonicDuration(nanoseconds: 0)

    /// `count` nanoseconds.
    @inlinable
    public static func nanoseconds(_ count: Int64) -> MonotonicDuration { MonotonicDuration(nanoseconds: count) }

    /// `count` milliseconds.
    @inlinable
    public static func milliseconds(_ count: Int64) -> MonotonicDuration { MonotonicDuration(nanoseconds: count * 1_000_000) }

    /// `count` whole seconds.
    @inlinable
    public static func seconds(_ count: Int64) -> MonotonicDuration { MonotonicDuration(nanoseconds: count * 1_000_000_000) }

    /// `seconds` (a checked, finite value: configuration and command-line ranges), rounded toward
    /// zero to whole nanoseconds.
    @inlinable
    public init(seconds: Double) { self.init(nanoseconds: Int64(seconds * 1e9)) }

    /// Seconds as a Double, for reports and rates.
    @inlinable
    public var seconds: Double { Double(nanoseconds) / 1e9 }

    /// Milliseconds as a Double, for reports.
    @inlinable
    public var milliseconds: Double { Double(nanoseconds) / 1e6 }

    /// Whole milliseconds, rounded toward zero: a span that has passed, reported or compared.
    @inlinable
    public var wholeMilliseconds: Int64 { nanoseconds / 1_000_000 }

    /// Whole milliseconds, a positive span's part rounded up: a wait that must not end before
    /// its deadline (poll and sleep take milliseconds).
    @inlinable
    public var wholeMillisecondsRoundedUp: Int64 { (nanoseconds + 999_999) / 1_000_000 }

    /// The span as a `timespec` for nanosleep; the span must not be negative.
    @inlinable
    public var timeSpecification: timespec {
        timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
    }

    public static func < (lhs: MonotonicDuration, rhs: MonotonicDuration) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }

    /// The sum of two spans.
    @inlinable
    public static func + (lhs: MonotonicDuration, rhs: MonotonicDuration) -> MonotonicDuration {
        MonotonicDuration(nanoseconds: lhs.nanoseconds + rhs.nanoseconds)
    }

    /// The difference of two spans.
    @inlinable
    public static func - (lhs: MonotonicDuration, rhs: MonotonicDuration) -> MonotonicDuration {
        MonotonicDuration(nanoseconds: lhs.nanoseconds - rhs.nanoseconds)
    }

    /// Adds `rhs` to `lhs`.
    @inlinable
    public static func += (lhs: inout MonotonicDuration, rhs: MonotonicDuration) { lhs = lhs + rhs }
}
