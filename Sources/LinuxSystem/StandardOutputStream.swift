import CLinuxSystem

/// C's buffered standard output, which Swift's `print` writes through (Swift 6 may not name C's
/// `stdout` global itself: it is shared mutable state).
public enum StandardOutputStream {
    /// Writes out what is buffered: nil, or the error of the write that failed.
    public static func flush() -> Errno? {
        pw_standard_output_flush() == 0 ? nil : Errno.current
    }

    /// True once any write to standard output has failed (the stream's sticky error flag).
    public static var hasFailed: Bool { pw_standard_output_failed() != 0 }
}
