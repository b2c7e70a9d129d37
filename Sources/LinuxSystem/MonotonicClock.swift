#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A point on `CLOCK_MONOTONIC`, the clock V4L2 timestamps frames with, in nanoseconds.
public struct MonotonicInstant: Comparable, Hashable, Sendable {
    /// Nanoseconds since an unspecified start (boot, for CLOCK_MONOTONIC).
    public var nanoseconds: Int64

    /// Wraps a nanosecond count.
    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

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
}
