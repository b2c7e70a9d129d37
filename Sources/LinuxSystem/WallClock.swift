#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The wall clock (`CLOCK_REALTIME`), for timestamps a person reads next to the journal's own: it
/// jumps when the time is set, so durations and deadlines use `MonotonicInstant` instead.
public enum WallClock {
    /// Microseconds since the Unix epoch, the unit of the journal's `__REALTIME_TIMESTAMP`.
    public static func microsecondsSinceEpoch() -> Int {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int(time.tv_sec) * 1_000_000 + Int(time.tv_nsec) / 1000
    }
}
