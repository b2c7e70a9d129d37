import Testing
import PoseEstimation
@testable import Actions

@Suite struct EmbeddedClassifierTests {
    @Test func theBuiltInClassifierLoadsWithItsMetadata() throws {
        let classifier = try ActionClassifier.embedded()
        let metadata = classifier.metadata
        #expect(Set(metadata.labels) == Set(ActionLabel.allCases))
        #expect(metadata.framesPerSecond == 15)
        #expect(metadata.windowLength > 0 && metadata.stride > 0 && metadata.stride <= metadata.windowLength)
        #expect(metadata.normalization.jointIndices.contains(Joint.leftHip.rawValue))
    }

    @Test func classifyingAWindowGivesAProbabilityPerLabel() throws {
        let classifier = try ActionClassifier.embedded()
        var window = PoseWindow(length: classifier.metadata.windowLength, framesPerSecond: classifier.metadata.framesPerSecond)
        for frame in 0..<classifier.metadata.windowLength {
            let sway = Float(frame % 10)
            window.add(Pose(keypoints: (0..<17).map { Keypoint(x: 300 + Float($0 % 3) * 20 + sway, y: 100 + Float($0) * 20, score: 0.9) }),
                       at: Double(frame) / classifier.metadata.framesPerSecond)
        }
        let probabilities = Array(classifier.classify(window))
        #expect(probabilities.count == classifier.metadata.labels.count)
        #expect(abs(probabilities.reduce(0, +) - 1) < 0.05)
        #expect(probabilities.allSatisfy { $0 >= 0 && $0 <= 1 })
    }
}

@Suite struct ClassifierMetadataTests {
    static let valid = #"{"schema_version": 1, "labels": ["jumping_jacks", "other"], "frame_rate": 15, "window_length": 30, "stride": 5, "normalization": {"id": "pw-norm-v1", "score_min": 0.25, "clip": 4, "min_scale": 1, "fallback_div": 3, "coco17_indices": [0, 5, 6, 11, 12]}}"#

    @Test func validMetadataReadsBack() throws {
        let metadata = try ClassifierMetadata(json: Self.valid)
        #expect(metadata.labels == [.jumpingJacks, .other])
        #expect(metadata.normalization.featuresPerSlot == 15)
        #expect(metadata.lowConfidenceThreshold == 0.6)
    }

    @Test(arguments: [
        ("\"labels\": [\"jumping_jacks\", \"other\"]", "\"labels\": [\"cartwheels\"]", "unknown label 'cartwheels'"),
        ("\"schema_version\": 1", "\"schema_version\": 2", "schema_version 2"),
        ("\"pw-norm-v1\"", "\"pw-norm-v9\"", "normalisation 'pw-norm-v9'"),
        ("\"stride\": 5", "\"stride\": 50", "out of range"),
        ("[0, 5, 6, 11, 12]", "[0, 5, 6]", "shoulders and hips"),
        ("\"frame_rate\": 15, ", "", "'frame_rate'"),
    ])
    func badMetadataIsRejectedNamingTheProblem(original: String, replacement: String, expected: String) {
        let text = Self.valid.replacingOccurrences(original, with: replacement)
        do {
            _ = try ClassifierMetadata(json: text)
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.description.contains(expected), "\(error.description)")
        }
    }
}

extension String {
    func replacingOccurrences(_ target: String, with replacement: String) -> String {
        let parts = split(separator: target, omittingEmptySubsequences: false)
        return parts.map(String.init).joined(separator: replacement)
    }
}
