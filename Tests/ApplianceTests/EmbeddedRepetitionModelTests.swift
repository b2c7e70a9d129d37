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
}
