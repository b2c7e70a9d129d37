import Foundation
import Testing
import LinuxSystem
import Outputs
@testable import Appliance

/// A model file that is empty, text, or damaged is never "ok" in the doctor, and a model that
/// fails while running stops the loop only when it fails on everything (issue 27, class 1).
@Suite struct DamagedModelDiagnosisTests {
    let scratch = ScratchDirectory("posewatch-damaged-model")

    func write(_ name: String, _ bytes: [UInt8]) -> String {
        let path = "\(scratch.path)/\(name)"
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }

    @Test("an empty or text file as the pose model or classifier fails the doctor's model check")
    func emptyAndTextModelFilesAreNotOk() {
        for (name, bytes) in [("empty.tflite", [UInt8]()), ("notes.tflite", Array("not a model\n".utf8))] {
            let path = write(name, bytes)
            var observations = DiagnosisTests.healthy()
            observations.models = [
                DoctorProbe.modelFile(role: "pose model", path: path, expected: nil, loadError: DoctorProbe.poseModelLoadError(path)),
                DoctorProbe.modelFile(role: "action classifier", path: path, expected: nil, loadError: DoctorProbe.classifierLoadError(path)),
            ]
            let report = Diagnosis.report(observations, configuration: ApplianceConfiguration())
            let items = report.items.filter { $0.area == .model }
            #expect(items.count == 2)
            for item in items {
                #expect(item.verdict == .fail, "\(item.summary)")
                #expect(item.summary.contains(path), "\(item.summary)")
            }
            #expect(report.exitStatus == 1)
        }
    }

    @Test("a model that loads but fails to run is a failed check with the reason")
    func aModelThatFailsToRunIsAFailedCheck() {
        var observations = DiagnosisTests.healthy()
        observations.models = [.init(role: "pose model", path: "/m.tflite", contents: .success((10, "ab")), expectedSHA256: nil,
                                     loadError: "pose model /m.tflite: loads but fails on a test frame (GATHER_ND)")]
        let item = Diagnosis.report(observations, configuration: ApplianceConfiguration()).items.first { $0.area == .model }
        #expect(item?.verdict == .fail)
        #expect(item?.summary.contains("fails on a test frame") == true)
    }

    @Test("a model failing on frames stops the loop only after it has failed on everything for two seconds")
    func theLoopStopsOnlyWhenTheModelFailsOnEverything() {
        var episode = ErrorEpisode()
        let start = MonotonicInstant(nanoseconds: 1_000_000_000)
        #expect(!ModelFailurePolicy.mustStop(episode, at: start))
        _ = episode.recordFailure(at: start)
        #expect(!ModelFailurePolicy.mustStop(episode, at: start))
        #expect(!ModelFailurePolicy.mustStop(episode, at: MonotonicInstant(nanoseconds: start.nanoseconds + 1_900_000_000)))
        #expect(ModelFailurePolicy.mustStop(episode, at: MonotonicInstant(nanoseconds: start.nanoseconds + 2_000_000_000)))
        // One frame that works ends the episode: the count starts again.
        _ = episode.recordSuccess(at: MonotonicInstant(nanoseconds: start.nanoseconds + 2_100_000_000))
        #expect(!ModelFailurePolicy.mustStop(episode, at: MonotonicInstant(nanoseconds: start.nanoseconds + 5_000_000_000)))
    }
}
