#if canImport(Glibc)
import Glibc
#endif
import CLinuxSystem

/// A one-shot timer on `CLOCK_MONOTONIC` that becomes readable when it expires (`timerfd(2)`), so
/// LED blinking, the watchdog and periodic summaries wake the same `poll()` as the camera.
public struct TimerDescriptor: ~Copyable {
    private let descriptor: OwnedFileDescriptor

    /// The descriptor to poll for `POLLIN`.
    public var rawValue: Int32 { descriptor.rawValue }

    /// `timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC)`, initially disarmed.
    public init() throws(SystemCallError) {
        let fd = timerfd_create(CLOCK_MONOTONIC, PW_TFD_NONBLOCK | PW_TFD_CLOEXEC)
        guard fd >= 0 else { throw SystemCallError("timerfd_create", "CLOCK_MONOTONIC", .current) }
        descriptor = OwnedFileDescriptor(adopting: fd)
    }

    /// Arms the timer to expire once at `deadline` (immediately if it has passed).
    public func arm(at deadline: MonotonicInstant) {
        // An all-zero it_value would disarm; a deadline at or before "now" must still fire.
        let nanoseconds = max(deadline.nanoseconds, 1)
        var specification = itimerspec()
        specification.it_value.tv_sec = Int(nanoseconds / 1_000_000_000)
        specification.it_value.tv_nsec = Int(nanoseconds % 1_000_000_000)
        // Only EINVAL (a programmer error with these arguments) can fail here.
        let result = timerfd_settime(descriptor.rawValue, PW_TFD_TIMER_ABSTIME, &specification, nil)
        precondition(result == 0, "timerfd_settime failed: \(Errno.current)")
    }

    /// Disarms the timer.
    public func disarm() {
        var specification = itimerspec()
        _ = timerfd_settime(descriptor.rawValue, 0, &specification, nil)
    }

    /// Consumes the expiration, returning how many expirations were pending (0 when none).
    @discardableResult
    public func acknowledge() -> UInt64 {
        var expirations: UInt64 = 0
        let count = try? retryingInterruptsUnlessWouldBlock { read(descriptor.rawValue, &expirations, 8) }
        return count == 8 ? expirations : 0
    }
}
