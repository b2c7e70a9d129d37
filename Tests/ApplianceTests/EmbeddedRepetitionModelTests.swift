import Foundation
import Testing
import CRepetitionModel
@testable import Appliance

/// The phase net assembled into the binary (`.incbin`, which the build system cannot track) is the
/// model file in Sources/CRepetitionModel, as fingerprinted by install_model.py.
@Suite struct EmbeddedRepetitionModelTests {
    @Test func theEmbeddedBytesAreTheCommittedModel() throws {
        let embedded = UnsafeRawBufferPointer(start: pw_embedded_repetition_phase_bytes(), count: pw_embedded_repetition_phase_size())
        let fingerprint = String(cString: pw_embedded_repetition_phase_expected_sha256())
        #expect(embedded.count > 0)
        #expect(SHA256.hexDigest(of: embedded) == fingerprint,
                "the binary embeds a stale phase net: repetition_phase_fingerprint.h changed but crepetition_model.c was not re-assembled")
        let root = String(#filePath).split(separator: "/", omittingEmptySubsequences: false).dropLast(3).joined(separator: "/")
        let file = try Data(contentsOf: URL(fileURLWithPath: root + "/Sources/CRepetitionModel/repetition_phase.tflite"))
        let onDisk = file.withUnsafeBytes { SHA256.hexDigest(of: $0) }
        #expect(onDisk == fingerprint,
                "Sources/CRepetitionModel/repetition_phase.tflite does not match repetition_phase_fingerprint.h: install models with training/counter/learned/install_model.py (it writes both)")
    }
}
