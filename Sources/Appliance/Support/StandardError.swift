import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
import LinuxSystem

/// Prints one line to standard error and exits with status 2 (bad input). Control characters left
/// in `message` are escaped, so it stays one line (see `printError`).
func failWithBadInput(_ message: String) -> ExitCode {
    var standardError = StandardError()
    print("posewatch: \(MessageExcerpt.oneLine(message))", to: &standardError)
    return ExitCode(ExitStatus.usage)
}

/// Standard error as a `TextOutputStream` (write(2) on fd 2: no shared `FILE *`, so it is safe
/// under Swift 6's strict concurrency).
struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        var bytes = Array(string.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress! + offset, $0.count - offset) }
            if written <= 0 { return }
            offset += written
        }
        bytes.removeAll()
    }
}

/// Prints one line to standard error. Whatever control characters `line` still holds (a newline,
/// ESC, BEL from a path or name a message builder forgot to escape) are escaped here, the last line
/// of defence: one message can never become two lines or drive the terminal.
func printError(_ line: String) {
    var standardError = StandardError()
    print(MessageExcerpt.oneLine(line), to: &standardError)
}
