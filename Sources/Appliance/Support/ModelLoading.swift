#if canImport(Glibc)
import Glibc
#endif
import Actions
import PoseEstimation

/// Loads the models the configuration names, with one-line errors.
enum ModelLoading {
    /// The classifier at `path` (a command-line override), else the configured file when it exists,
    /// else the classifier built into this binary.
    static func classifier(path: String?, configuration: ApplianceConfiguration) throws(InputError) -> ActionClassifier {
        do {
            if let path { return try ActionClassifier(modelPath: path) }
            if fileExists(configuration.classifierModelPath) {
                return try ActionClassifier(modelPath: configuration.classifierModelPath)
            }
            return try ActionClassifier.embedded()
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
        do { return try MoveNetEstimator(modelPath: modelPath) } catch { throw InputError(error.description) }
    }

    static func fileExists(_ path: String) -> Bool { access(path, F_OK) == 0 }
}
