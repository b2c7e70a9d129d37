import Foundation
import Testing
import CRepetitionModel
@testable import Appliance

/// The phase net's models assembled into the binary (`.incbin`, which the build system cannot
/// track) are the model files in Sources/CRepetitionModel, as fingerprinted by install_model.py.
@Suite struct EmbeddedRepetitionModelTests {
    @Test func theEmbeddedBytesAreTheCommittedModels() throws {
        let count = Int(pw_embedded_repetition_phase_count())
        #expect(count == 2, "posewatch ships an ensemble of two phase models")
        let root = String(#filePath).split(separator: "/", omittingEmptySubsequences: false).dropLast(3).joined(separator: "/")
        for index in 0..<count {
            let embedded = UnsafeRawBufferPointer(start: pw_embedded_repetition_phase_bytes(Int32(index)),
                                                  count: pw_embedded_repetition_phase_size(Int32(index)))
            let fingerprint = String(cString: pw_embedded_repetition_phase_expected_sha256(Int32(index)))
            let name = "repetition_phase_\(index + 1).tflite"
            #expect(embedded.count > 0)
            #expect(SHA256.hexDigest(of: embedded) == fingerprint,
                    "the binary embeds a stale \(name): repetition_phase_fingerprint.h changed but crepetition_model.c was not re-assembled")
            let file = try Data(contentsOf: URL(fileURLWithPath: root + "/Sources/CRepetitionModel/" + name))
            let onDisk = file.withUnsafeBytes { SHA256.hexDigest(of: $0) }
            #expect(onDisk == fingerprint,
                    "Sources/CRepetitionModel/\(name) does not match repetition_phase_fingerprint.h: install models with training/counter/learned/install_model.py (it writes both)")
        }
        #expect(pw_embedded_repetition_phase_size(Int32(count)) == 0 && pw_embedded_repetition_phase_bytes(Int32(count)) == nil)
        let fingerprints = Set((0..<count).map { String(cString: pw_embedded_repetition_phase_expected_sha256(Int32($0))) })
        #expect(fingerprints.count == count, "the ensemble's models are different models")
    }

    /// `posewatch doctor` checks the built-in phase net as it checks the built-in classifier: each
    /// model loads and runs, and a stale build (bytes other than the fingerprint) fails.
    @Test func theDoctorChecksEachModelOfTheBuiltInPhaseNet() {
        let files = DoctorProbe.phaseNetFiles()
        #expect(files.map(\.role) == ["repetition phase net (model 1 of 2)", "repetition phase net (model 2 of 2)"])
        var observations = DiagnosisTests.healthy()
        observations.models = files
        let items = Diagnosis.report(observations, configuration: ApplianceConfiguration()).items.filter { $0.area == .model }
        #expect(items.count == 2 && items.allSatisfy { $0.verdict == .ok }, "\(items.map(\.summary))")
        #expect(items.first?.summary == "built in, \(pw_embedded_repetition_phase_size(0)) bytes, loads and runs")
        var stale = files
        stale[1].expectedSHA256 = String(repeating: "0", count: 64)
        observations.models = stale
        let staleItems = Diagnosis.report(observations, configuration: ApplianceConfiguration()).items.filter { $0.area == .model }
        #expect(staleItems.map(\.verdict) == [.ok, .fail])
        #expect(staleItems.last?.summary == "this binary embeds another repetition phase net (model 2 of 2) than the one its source fingerprints (a stale build): rebuild posewatch")
    }
}
