import ArgumentParser

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
    /// Bad command line or bad input file (unreadable, wrong format).
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
