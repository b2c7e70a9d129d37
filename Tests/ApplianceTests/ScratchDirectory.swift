import Foundation
import Glibc

/// A fresh directory under /tmp for one test, removed with everything in it when the test's suite
/// instance goes away. Swift Testing makes a suite instance per test, so each test gets its own
/// (the fixed `/tmp/…-<pid>` paths these suites used before were shared and never removed: a
/// developer's /tmp collected one directory per `swift test` run).
final class ScratchDirectory {
    let path: String

    init(_ prefix: String) {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        // The name is read while the buffer is still borrowed: String(cString:) of the array
        // itself is deprecated from Swift 6.2.
        let created = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!).map { String(cString: $0) } }
        guard let created else { preconditionFailure("mkdtemp /tmp/\(prefix)-XXXXXX: \(String(cString: strerror(errno)))") }
        path = created
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
