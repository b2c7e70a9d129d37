#if canImport(Glibc)
import Glibc
#endif
import CLinuxSystem

/// Signals delivered as readable events on a file descriptor (`signalfd(2)`), so SIGTERM, SIGINT
/// and SIGHUP join the frame loop's one `poll()` instead of interrupting it asynchronously.
///
/// Creating one blocks the signals for the calling thread (`pthread_sigmask`); worker threads
/// started afterwards inherit the mask, so no other thread receives them either.
public struct SignalDescriptor: ~Copyable {
    private let descriptor: OwnedFileDescriptor

    /// The descriptor to poll for `POLLIN`.
    public var rawValue: Int32 { descriptor.rawValue }

    /// Blocks `signals` and opens a non-blocking signalfd for them.
    public init(signals: [Int32]) throws(SystemCallError) {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        let masked = pthread_sigmask(SIG_BLOCK, &set, nil)
        guard masked == 0 else { throw SystemCallError("pthread_sigmask", "signals", Errno(rawValue: masked)) }
        let fd = signalfd(-1, &set, PW_SFD_NONBLOCK | PW_SFD_CLOEXEC)
        guard fd >= 0 else { throw SystemCallError("signalfd", "signals", .current) }
        descriptor = OwnedFileDescriptor(adopting: fd)
    }

    /// The next pending signal's number, or nil when none is pending.
    public func nextSignal() -> Int32? {
        var info = signalfd_siginfo()
        let size = MemoryLayout<signalfd_siginfo>.size
        let count = try? retryingInterruptsUnlessWouldBlock { read(descriptor.rawValue, &info, size) }
        guard let count, count == size else { return nil }
        return Int32(bitPattern: info.ssi_signo)
    }
}
