import Foundation
import Testing
import CActionModel
@testable import Appliance

/// The classifier assembled into the binary (`.incbin`, which the build system cannot track) is
/// the model file in Sources/CActionModel, as fingerprinted by the recipe.
@Suite struct EmbeddedClassifierTests {
    @Test func theEmbeddedBytesAreTheCommittedModel() throws {
        let embedded = UnsafeRawBufferPointer(start: pw_embedded_classifier_bytes(), count: pw_embedded_classifier_size())
        let fingerprint = String(cString: pw_embedded_classifier_expected_sha256())
        #expect(SHA256.hexDigest(of: embedded) == fingerprint,
                "the binary embeds a stale classifier: classifier_fingerprint.h changed but caction_model.c was not re-assembled")
        let root = String(#filePath).split(separator: "/", omittingEmptySubsequences: false).dropLast(3).joined(separator: "/")
        let file = try Data(contentsOf: URL(fileURLWithPath: root + "/Sources/CActionModel/action_classifier.tflite"))
        let onDisk = file.withUnsafeBytes { SHA256.hexDigest(of: $0) }
        #expect(onDisk == fingerprint,
                "Sources/CActionModel/action_classifier.tflite does not match classifier_fingerprint.h: run training/train.py (it writes both) or update the fingerprint")
    }
}
