#if canImport(Glibc)
import Glibc
#endif
import Actions
import InferenceCore
import LinuxSystem
import PoseEstimation

/// Loads the models the configuration names, with one-line errors.
enum ModelLoading {
    /// Where the action classifier comes from: a file, or the model built into this binary.
    enum ClassifierSource: Equatable {
        case file(String)
        case builtIn
    }

    /// The one rule for choosing the classifier (`run`, `replay` and `doctor` all use it): a
    /// command-line path, else the configured file; the built-in model only stands in when the
    /// *default* path holds nothing (a package without a classifier file). A path the owner
    /// configured and that is missing stays an error rather than being silently replaced.
    static func classifierSource(path: String?, configuration: ApplianceConfiguration) -> ClassifierSource {
        if let path { return .file(path) }
        let configured = configuration.classifierModelPath
        if !fileExists(configured) && configured == ApplianceConfiguration().classifierModelPath { return .builtIn }
        return .file(configured)
    }

    /// The classifier `classifierSource` picks, loaded and checked against its metadata.
    static func classifier(path: String?, configuration: ApplianceConfiguration) throws(ModelLoadingError) -> ActionClassifier {
        do {
            switch classifierSource(path: path, configuration: configuration) {
            case .file(let file): return try ActionClassifier(modelPath: file)
            case .builtIn: return try ActionClassifier.embedded()
            }
        } catch {
            throw ModelLoadingError(error.description, fromCommandLine: path != nil)
        }
    }

    /// MoveNet from `path` (given with the command's `--pose-model`) or the configured path.
    /// `commandHasOption`: whether the command offers `--pose-model`, so the message only
    /// suggests what the user can actually do.
    static func poseEstimator(path: String?, configuration: ApplianceConfiguration,
                              commandHasOption: Bool) throws(ModelLoadingError) -> MoveNetEstimator {
        let modelPath = path ?? configuration.poseModelPath
        guard fileExists(modelPath) else {
            if path != nil { throw ModelLoadingError("pose model \(MessageExcerpt.path(modelPath)) (--pose-model) does not exist", fromCommandLine: true) }
            let remedies = ["set models.pose in the config file to the MoveNet .tflite",
                            "install the posewatch package (it downloads MoveNet and checks its sha256)"]
                + (commandHasOption ? ["pass --pose-model"] : [])
            throw ModelLoadingError("pose model \(MessageExcerpt.path(modelPath)) is missing: \(remedies.dropLast().joined(separator: ", ")) or \(remedies.last!)",
                                    fromCommandLine: false)
        }
        let registry = KernelRegistry(threadCount: configuration.inferenceThreads ?? BoardDefaults.current.inferenceThreads)
        do { return try MoveNetEstimator(modelPath: modelPath, registry: registry) } catch {
            throw ModelLoadingError(error.description, fromCommandLine: path != nil)
        }
    }

    /// The repetition counter `run` and `replay` use: the phase net built into this binary counts
    /// its labels (squats, jumping jacks, burpees, push-ups), the rule the others (lunges). A net that
    /// does not load is an installation problem, as the built-in classifier's would be (exit 78).
    /// `motionRuleOnly` (`replay --motion-rule`) leaves the net out: the rule counts every label.
    static func repetitionCounter(motionRuleOnly: Bool = false) throws(ModelLoadingError) -> RepetitionCounter {
        if motionRuleOnly { return RepetitionCounter() }
        do {
            return RepetitionCounter(phaseNet: try RepetitionPhaseNet.embedded())
        } catch {
            throw ModelLoadingError(error.description, fromCommandLine: false)
        }
    }

    static func fileExists(_ path: String) -> Bool { access(path, F_OK) == 0 }
}

/// A model that loaded and ran on its test input but failed on the data a command gave it (only a
/// damaged file does that): one line for the user, exit status 1 (`ExitStatus.failure`), no trap.
struct ModelRunFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Why a model could not be loaded, and whose mistake it is: a path given on the command line is
/// a bad argument (exit 2); the configured path (or the package's default) is a configuration
/// problem (exit 78: systemd does not restart, and `replay` answers as `run` does).
struct ModelLoadingError: Error, CustomStringConvertible {
    let description: String
    let fromCommandLine: Bool

    init(_ description: String, fromCommandLine: Bool) {
        self.description = description
        self.fromCommandLine = fromCommandLine
    }

    /// `ExitStatus.usage` or `ExitStatus.configuration`.
    var exitStatus: Int32 { fromCommandLine ? ExitStatus.usage : ExitStatus.configuration }
}
