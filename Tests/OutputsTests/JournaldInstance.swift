import Foundation
import Testing
@testable import Outputs

/// A private systemd-journald for one test: a namespace instance (`systemd-journald <namespace>`)
/// whose sockets and journal files go to a temporary directory through `RUNTIME_DIRECTORY` and
/// `LOGS_DIRECTORY`, the variables systemd would set for `systemd-journald@.service`. This works
/// without systemd as PID 1 and without touching the machine's own journal.
final class JournaldInstance {
    static let executable = ["/lib/systemd/systemd-journald", "/usr/lib/systemd/systemd-journald"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Why journald cannot run here, or nil when a probe instance started and stopped cleanly.
    static let unavailableReason: String? = {
        guard executable != nil else { return "systemd-journald is not installed (apt-get install systemd)" }
        do {
            let probe = try JournaldInstance()
            probe.stop()
            return nil
        } catch {
            return "systemd-journald could not start here: \(error)"
        }
    }()

    /// Whether a private journald can run here; prints why not when it cannot, so a skipped test
    /// says more than its trait's fixed comment.
    static var isAvailable: Bool {
        guard let reason = unavailableReason else { return true }
        print("skipping journald round trip: \(reason)")
        return false
    }

    let directory: URL
    let process = Process()
    var socketPath: String { directory.appendingPathComponent("run/socket").path }
    var logsPath: String { directory.appendingPathComponent("logs").path }

    struct StartFailure: Error, CustomStringConvertible { var description: String }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("posewatch-journald-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("run"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("logs"), withIntermediateDirectories: true)
        guard let executable = Self.executable else { throw StartFailure(description: "no systemd-journald") }
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["posewatchtest\(UInt16.random(in: 0...UInt16.max))"]
        var environment = ProcessInfo.processInfo.environment
        environment["RUNTIME_DIRECTORY"] = directory.appendingPathComponent("run").path
        environment["LOGS_DIRECTORY"] = logsPath
        environment["SYSTEMD_LOG_LEVEL"] = "warning"
        environment.removeValue(forKey: "NOTIFY_SOCKET")
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        for _ in 0..<100 where !JournalSocket.isReachable(path: socketPath) && process.isRunning {
            usleep(50_000)
        }
        guard JournalSocket.isReachable(path: socketPath) else {
            stop()
            throw StartFailure(description: "no socket at \(socketPath) after 5 s (exit status \(process.isRunning ? "running" : String(process.terminationStatus)))")
        }
    }

    /// Every entry in the instance's journal as `journalctl -o json --all` prints it.
    func entries(matching match: String) throws -> [[String: Any]] {
        let journalctl = Process()
        journalctl.executableURL = URL(fileURLWithPath: "/usr/bin/journalctl")
        journalctl.arguments = ["--directory=\(logsPath)", "-o", "json", "--all", "--no-pager", match]
        let output = Pipe()
        journalctl.standardOutput = output
        journalctl.standardError = FileHandle.nullDevice
        try journalctl.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        journalctl.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// Polls until `count` entries match (journald writes asynchronously), for at most 5 s.
    func waitForEntries(matching match: String, count: Int) throws -> [[String: Any]] {
        var found: [[String: Any]] = []
        for _ in 0..<100 {
            found = try entries(matching: match)
            if found.count >= count { break }
            usleep(50_000)
        }
        return found
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }
}
