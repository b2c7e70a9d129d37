import ArgumentParser
import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// posewatch's version, printed by `posewatch --version` and logged at start.
public enum PosewatchVersion {
    public static let current = "0.1.0"
}

/// Process exit statuses posewatch uses, documented in README.md.
public enum ExitStatus {
    /// Everything worked (or `doctor`: ready).
    public static let success: Int32 = 0
    /// A run-time failure, or `doctor`: at least one item failed.
    public static let failure: Int32 = 1
    /// Bad command line or bad input file (unreadable, wrong format). ArgumentParser's own
    /// refusals (64, `EX_USAGE`) are mapped to this by `PosewatchCommand.runAsMain()`.
    public static let usage: Int32 = 2
    /// Configuration error (`EX_CONFIG`): systemd is told not to restart on it.
    public static let configuration: Int32 = 78
}

/// The `posewatch` command and its subcommands.
public struct PosewatchCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "posewatch",
        abstract: "An exercise-watching appliance: camera → pose → action → repetitions → LEDs and journal.",
        version: PosewatchVersion.current,
        subcommands: [RunCommand.self, DoctorCommand.self, ModelCommand.self, BenchCommand.self, SnapshotCommand.self, ReplayCommand.self],
        defaultSubcommand: RunCommand.self)

    public init() {}
}

extension PosewatchCommand {
    /// The program's entry point: parses the command line and runs the chosen subcommand.
    ///
    /// Unlike `main()`, every command-line error (unknown option, missing or bad value, failed
    /// `validate()`) is one line on standard error and exit status 2 (`ExitStatus.usage`), as the
    /// README and every `--help` say, rather than ArgumentParser's 64 followed by the usage text.
    /// `--help` and `--version` still print to standard output and exit 0; a thrown `ExitCode`
    /// exits with its own status.
    public static func runAsMain(_ arguments: [String]? = nil) -> Never {
        ProcessSignals.ignoreBrokenPipes()
        ProcessSignals.holdLoopSignals()
        ProcessMemory.declineTransparentHugePages()
        let error: any Error
        do {
            let given = arguments ?? Array(CommandLine.arguments.dropFirst())
            if given.count > maximumArgumentCount {
                // ArgumentParser's time grows with the square of the arguments: 20,000 took 20 s.
                finish(withStatus: ExitStatus.usage,
                       message: "posewatch: \(given.count) command-line arguments are more than any command takes (at most \(maximumArgumentCount)); check the command line")
            }
            var command = try parseAsRoot(given)
            if !(command is RunCommand) { ProcessSignals.releaseLoopSignals() }
            try command.run()
            // Output that never arrived is a failure, not a success with nothing written.
            if let failure = StandardOutput.flush() { finish(withStatus: ExitStatus.failure, message: "posewatch: \(failure)") }
            Glibc.exit(ExitStatus.success)
        } catch let caught {
            error = caught
        }
        if error is OutputLost {
            finish(withStatus: ExitStatus.failure, message: "posewatch: \(StandardOutput.flush() ?? "cannot write to standard output")")
        }
        finish(withStatus: status(for: error), message: oneLineMessage(for: error), orFullMessageOf: error)
    }

    /// The most command-line arguments posewatch parses: the longest real command line (a
    /// `model run` with one `--input` per model input) is a few dozen.
    static let maximumArgumentCount = 1_000

    /// The exit status for an error that ended the command.
    static func status(for error: any Error) -> Int32 {
        if let exitCode = error as? ExitCode { return exitCode.rawValue }
        let code = exitCode(for: error)
        // ArgumentParser answers every parsing and validation error with EX_USAGE (64).
        return code == .validationFailure ? ExitStatus.usage : code.rawValue
    }

    /// ArgumentParser's message for a command-line error on one line, after "posewatch: "; nil for
    /// help and version requests (printed in full) and for a bare `ExitCode` (its command has
    /// already said what went wrong).
    static func oneLineMessage(for error: any Error) -> String? {
        if error is ExitCode || error is OutputLost || exitCode(for: error) == .success { return nil }
        let text = message(for: error)
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingSpaces() }.filter { !$0.isEmpty }
        guard !lines.isEmpty else { return nil }
        return "posewatch: " + lines.joined(separator: " ")
    }

    private static func finish(withStatus status: Int32, message: String) -> Never {
        printError(message)
        Glibc.exit(status)
    }

    private static func finish(withStatus status: Int32, message: String?, orFullMessageOf error: any Error) -> Never {
        if let message {
            printError(message)
        } else if status == ExitStatus.success {
            // --help, --version, `help run`: printed to standard output as ArgumentParser would,
            // and checked like any command's output.
            print(fullMessage(for: error))
            if let failure = StandardOutput.flush() { finish(withStatus: ExitStatus.failure, message: "posewatch: \(failure)") }
        }
        Glibc.exit(status)
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
