import Actions
import Capture
import InferenceCore
import Outputs
import PoseEstimation
import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// Gathers the doctor's observations from the real machine: V4L2 nodes, GPIO chips and lines,
/// the journald socket, model files.
public enum DoctorProbe {
    public static func observe(configuration: ApplianceConfiguration, devDirectory: String = "/dev") -> DoctorObservations {
        var observations = DoctorObservations()
        let stableNames = CameraEnumeration.stableNames()
        observations.cameraNodes = CameraEnumeration.videoNodePaths(directory: devDirectory).map { path in
            let result: Result<CameraDescription, SystemCallError>
            do throws(SystemCallError) {
                result = .success(try CameraEnumeration.describe(path: path, stableNames: stableNames[path] ?? []))
            } catch {
                result = .failure(error)
            }
            // What opening a usable camera would set, queried without writing (run sets them).
            var controls: CameraControlReport?
            if case .success(let camera) = result, camera.isUsableCamera {
                controls = configuration.cameraAutoControls ? try? CameraControls.plan(path: path) : .keptCameraSettings
            }
            return .init(path: path, description: result, controls: controls)
        }
        if let preload = getenv("LD_PRELOAD") {
            observations.underLibcamerify = String(cString: preload).contains("v4l2-compat")
        }
        observations.gpioBackend = GPIOEnumeration.backend
        observations.gpioChips = GPIOEnumeration.chips(directory: devDirectory)
        observations.ledLines = GPIOEnumeration.locate(lines: configuration.allLEDLines, directory: devDirectory)
        observations.journalError = journalReachability(observations.journalSocketPath)
        observations.models = [
            modelFile(role: "pose model", path: configuration.poseModelPath,
                      expected: configuration.poseModelPath.hasSuffix(KnownModels.moveNetFileName) ? KnownModels.moveNetLightningInt8SHA256 : nil,
                      loadError: poseModelLoadError(configuration.poseModelPath)),
            classifierFile(configuration),
        ] + phaseNetFiles()
        return observations
    }

    /// Connects a datagram socket to journald's native socket: nil when it accepts, else the errno.
    static func journalReachability(_ path: String) -> Errno? {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .current }
        let owner = OwnedFileDescriptor(adopting: fd)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return Errno(rawValue: ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(owner.rawValue, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        return result == 0 ? nil : .current
    }

    /// Why MoveNet at `path` cannot be used (its loading runs it once on a test frame), or nil.
    static func poseModelLoadError(_ path: String) -> String? {
        do { _ = try MoveNetEstimator(modelPath: path) } catch { return error.description }
        return nil
    }

    /// Why the classifier at `path` cannot be used (its loading runs it once on an empty window), or nil.
    static func classifierLoadError(_ path: String) -> String? {
        do { _ = try ActionClassifier(modelPath: path) } catch { return error.description }
        return nil
    }

    /// The configured classifier file; where the default path holds none, the classifier built into
    /// this binary is what `run` uses, so that is what is checked (it must load and carry metadata).
    static func classifierFile(_ configuration: ApplianceConfiguration) -> DoctorObservations.ModelFile {
        guard ModelLoading.classifierSource(path: nil, configuration: configuration) == .builtIn else {
            let path = configuration.classifierModelPath
            return modelFile(role: "action classifier", path: path, expected: nil, loadError: classifierLoadError(path))
        }
        let bytes = ActionClassifier.embeddedModelBytes
        do {
            _ = try ActionClassifier.embedded()
            // The recipe's fingerprint of the model it wrote: differs only in a stale developer build.
            return .init(role: "action classifier", path: "built in", contents: .success((bytes.count, SHA256.hexDigest(of: bytes))),
                         expectedSHA256: ActionClassifier.embeddedModelExpectedSHA256)
        } catch {
            return .init(role: "action classifier", path: "built in",
                         contents: .failure(SystemCallError("load", "built-in classifier: \(error.description)", .invalidArgument)), expectedSHA256: nil)
        }
    }

    /// The repetition phase net built into this binary, one entry per model of the ensemble: each
    /// must load and run once on an empty window, and carry the fingerprint install_model.py wrote.
    static func phaseNetFiles() -> [DoctorObservations.ModelFile] {
        let count = RepetitionPhaseNet.embeddedModelCount
        return (0..<count).map { index in
            let role = count == 1 ? "repetition phase net" : "repetition phase net (model \(index + 1) of \(count))"
            let bytes = RepetitionPhaseNet.embeddedModelBytes(index)
            do {
                _ = try RepetitionPhaseNet(model: try Model(bytes: bytes), name: "built-in \(role)")
                // The installer's fingerprint of the model it wrote: differs only in a stale developer build.
                return .init(role: role, path: "built in", contents: .success((bytes.count, SHA256.hexDigest(of: bytes))),
                             expectedSHA256: RepetitionPhaseNet.embeddedModelExpectedSHA256(index))
            } catch {
                return .init(role: role, path: "built in",
                             contents: .failure(SystemCallError("load", "built-in \(role): \(error)", .invalidArgument)), expectedSHA256: nil)
            }
        }
    }

    /// The file's size and digest; `loadError` (evaluated only when the file reads) says whether
    /// it loads and runs once on a test input, as `run` loads it.
    static func modelFile(role: String, path: String, expected: String?,
                          loadError: @autoclosure () -> String?) -> DoctorObservations.ModelFile {
        do throws(SystemCallError) {
            let mapping = try MemoryMappedFile(path: path)
            return .init(role: role, path: path,
                         contents: .success((mapping.bytes.count, SHA256.hexDigest(of: mapping.bytes))), expectedSHA256: expected,
                         loadError: loadError())
        } catch {
            return .init(role: role, path: path, contents: .failure(error), expectedSHA256: expected)
        }
    }
}
