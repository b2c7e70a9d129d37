#if canImport(Glibc)
import Glibc
#endif
import Actions
import InferenceCore
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
    static func classifier(path: String?, configuration: ApplianceConfiguration) throws(InputError) -> ActionClassifier {
        do {
            switch classifierSource(path: path, configuration: configuration) {
            case .file(let file): return try ActionClassifier(modelPath: file)
            case .builtIn: return try ActionClassifier.embedded()
            }
        } catch {
            throw InputError(error.description)
        }
    }

    /// MoveNet from `path` (a command-line override) or the configured path.
    static func poseEstimator(path: String?, configuration: ApplianceConfiguration) throws(InputError) -> MoveNetEstimator {
        let modelPath = path ?? configuration.poseModelPath
        guard fileExists(modelPath) else {
            throw InputError("pose model \(modelPath) is missing: install the posewatch package (it downloads MoveNet and checks its sha256) or pass --pose-model")
        }
        let registry = KernelRegistry(threadCount: configuration.inferenceThreads ?? BoardDefaults.current.inferenceThreads)
        do { return try MoveNetEstimator(modelPath: modelPath, registry: registry) } catch { throw InputError(error.description) }
    }

    static func fileExists(_ path: String) -> Bool { access(path, F_OK) == 0 }
}

/// A model that loaded and ran on its test input but failed on the data a command gave it (only a
/// damaged file does that): one line for the user, exit status 1 (`ExitStatus.failure`), no trap.
struct ModelRunFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
