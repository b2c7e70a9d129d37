#if canImport(Glibc)
import Glibc
#endif

/// What posewatch does with signals from its first instruction on, before any command runs.
enum ProcessSignals {
    /// The signals `run` handles in its loop (`SignalDescriptor`): stop, stop, reload.
    static let loopSignals = [SIGTERM, SIGINT, SIGHUP]

    /// SIGPIPE ignored, so that a write to a pipe whose reader has gone fails with EPIPE instead of
    /// killing posewatch on the spot: `run` then still turns its LEDs off and writes its final
    /// summary, and every command exits 1 with a message (where standard error still works).
    static func ignoreBrokenPipes() { signal(SIGPIPE, SIG_IGN) }

    /// Blocks SIGTERM, SIGINT and SIGHUP until `run`'s loop reads them from its signalfd: one
    /// that arrives while the models load (the first ~50 ms, longer on a Pi) stays pending
    /// instead of killing the process by its default action, and threads started meanwhile (the
    /// inference core's workers) inherit the mask, so none of them can take the signal either.
    static func holdLoopSignals() { mask(SIG_BLOCK) }

    /// Lets the signals through again, for every command but `run`: Ctrl-C stops them as usual
    /// (one held meanwhile is delivered now).
    static func releaseLoopSignals() { mask(SIG_UNBLOCK) }

    private static func mask(_ how: Int32) {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in loopSignals { sigaddset(&set, signal) }
        pthread_sigmask(how, &set, nil)
    }
}
