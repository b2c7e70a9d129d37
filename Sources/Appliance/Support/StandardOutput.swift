import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// Whether what a command printed reached its standard output.
///
/// `print` goes through C's buffered `stdout`, which keeps the first failed write in the stream's
/// error flag (a full disk, `>/dev/full`; a reader that went away, `| head -1`, once SIGPIPE is
/// ignored). A command that lost its output has failed, whatever else it did: exit status 1 and one
/// line on standard error, rather than 0 with nothing written.
enum StandardOutput {
    /// True once a write to standard output has failed.
    static var hasFailed: Bool { StandardOutputStream.hasFailed }

    /// Writes out what is buffered; the failure, as one line without the "posewatch: " prefix, when
    /// this or any earlier write failed.
    static func flush() -> String? {
        let failure = StandardOutputStream.flush()
        guard failure != nil || hasFailed else { return nil }
        return "cannot write to standard output: \(failure?.description ?? "a write failed")"
    }

    /// Throws `OutputLost` when a write to standard output has failed, so a long command (a replay
    /// of an hour-long clip) stops when its reader has gone instead of computing for nobody.
    static func check() throws(OutputLost) {
        if hasFailed { throw OutputLost() }
    }
}

/// Standard output is gone: `PosewatchCommand.runAsMain` says so and exits 1.
struct OutputLost: Error {}
