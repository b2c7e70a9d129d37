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
        var window = PoseWindow(length: classifier.metadata.windowLength, rate: classifier.metadata.frameRate)
        for frame in 0..<classifier.metadata.windowLength {
            let sway = Float(frame % 10)
            window.add(Pose(keypoints: (0..<17).map { Keypoint(x: 300 + Float($0 % 3) * 20 + sway, y: 100 + Float($0) * 20, score: 0.9) }),
                       at: Double(frame) / classifier.metadata.framesPerSecond)
        }
        let probabilities = Array(try classifier.classify(window))
        #expect(probabilities.count == classifier.metadata.labels.count)
        #expect(abs(probabilities.reduce(0, +) - 1) < 0.05)
        #expect(probabilities.allSatisfy { $0 >= 0 && $0 <= 1 })
    }
}

@Suite struct ClassifierHistoryTests {
    static func pose(_ frame: Int) -> Pose {
        Pose(keypoints: (0..<17).map { Keypoint(x: 300 + Float($0 % 3) * 20 + Float(frame % 10), y: 100 + Float($0) * 20, score: 0.9) })
    }

    /// The pipeline's rule for a history model (training/README.md, "The history rule"): classified windows add
    /// their entries, and a decision that is not a classified window (here: no person) empties the
    /// history, so the next person starts without the last one's decisions.
    @Test func thePipelineClearsTheHistoryWhenAWindowIsNotClassified() throws {
        var pipeline = ActionPipeline(classifier: try ActionClassifier.embedded())
        let fps = pipeline.framesPerSecond
        guard let shape = pipeline.classifier.metadata.history else {
            #expect(pipeline.classifier.historyRows.isEmpty)
            return
        }
        func flags() -> Int {
            let rows = pipeline.classifier.historyRows
            return (0..<shape.length).filter { rows[$0 * shape.features + shape.features - 1] != 0 }.count
        }
        var frame = 0, classified = 0
        for _ in 0..<(4 * Int(fps)) {
            if let decision = pipeline.process(Self.pose(frame), at: Double(frame) / fps).decision, decision != .startingUp { classified += 1 }
            frame += 1
        }
        #expect(classified >= 2)
        #expect(flags() == min(classified, shape.length))
        var sawNoPerson = false
        for _ in 0..<(3 * Int(fps)) {
            if pipeline.process(nil, at: Double(frame) / fps).decision == .noPerson { sawNoPerson = true }
            frame += 1
        }
        #expect(sawNoPerson)
        #expect(pipeline.classifier.historyRows.allSatisfy { $0 == 0 })
    }

    /// Classifying (with a history model: handing over the ring, shifting it, appending the entry)
    /// and clearing the history allocate nothing beyond the normalisation. The normalisation is
    /// measured separately because a debug build's allocates (780 per window when measured, the same
    /// with the window-only r26 model); that is the pose normalisation's own matter, not the ring's.
    @Test(.enabled(if: AllocationCounter.isAvailable, "needs the malloc counter: run Tests/Support/run-allocation-tests.sh"))
    func classifyingAndClearingTheHistoryAllocatesNothingBeyondTheNormalisation() throws {
        let classifier = try ActionClassifier.embedded()
        var windows: [PoseWindow] = []
        for start in stride(from: 0, to: 50, by: 5) {
            var window = PoseWindow(length: classifier.metadata.windowLength, rate: classifier.metadata.frameRate)
            for frame in 0..<classifier.metadata.windowLength {
                window.add(Self.pose(start + frame), at: Double(frame) / classifier.metadata.framesPerSecond)
            }
            windows.append(window)
        }
        var scratch = [Float](repeating: 0, count: classifier.metadata.windowLength * classifier.metadata.normalization.featuresPerSlot)
        _ = try classifier.classify(windows[0])
        var sum: Float = 0
        let start = AllocationCounter.function!()
        for round in 0..<3 {
            for index in 0..<windows.count {
                sum += try classifier.classify(windows[index])[0]
            }
            if round == 1 { classifier.clearHistory() }
        }
        let classifying = AllocationCounter.function!() - start
        let normalisationStart = AllocationCounter.function!()
        scratch.withUnsafeMutableBufferPointer { buffer in
            for _ in 0..<3 {
                for index in 0..<windows.count { classifier.metadata.normalization.normalize(windows[index], into: buffer) }
            }
        }
        let normalising = AllocationCounter.function!() - normalisationStart
        print("ActionClassifier: \(classifying) allocations over \(3 * windows.count) windows and a clear; the normalisation alone \(normalising)")
        #expect(sum.isFinite)
        #expect(classifying == normalising)
    }
}

@Suite struct ClassifierMetadataTests {
    static let valid = #"{"schema_version": 1, "labels": ["jumping_jacks", "other"], "frame_rate": 15, "window_length": 30, "stride": 5, "normalization": {"id": "pw-norm-v1", "score_min": 0.25, "clip": 4, "min_scale": 1, "fallback_div": 3, "coco17_indices": [0, 5, 6, 11, 12]}}"#

    @Test func validMetadataReadsBack() throws {
        let metadata = try ClassifierMetadata(json: Self.valid)
        #expect(metadata.labels == [.jumpingJacks, .other])
        #expect(metadata.normalization.featuresPerSlot == 15)
        #expect(metadata.lowConfidenceThreshold == 0.6)
        #expect(metadata.history == nil)
    }

    @Test func historyMetadataReadsBack() throws {
        let text = Self.valid.replacingOccurrences("\"schema_version\": 1", with: "\"schema_version\": 2, \"history\": {\"length\": 6, \"features\": 135}")
        let metadata = try ClassifierMetadata(json: text)
        #expect(metadata.history == ClassifierMetadata.HistoryShape(length: 6, features: 135))
    }

    @Test(arguments: [
        ("\"labels\": [\"jumping_jacks\", \"other\"]", "\"labels\": [\"cartwheels\"]", "unknown label 'cartwheels'"),
        ("\"schema_version\": 1", "\"schema_version\": 3", "schema_version 3"),
        // a history model (schema 2) must say how long its history is
        ("\"schema_version\": 1", "\"schema_version\": 2", "'history'"),
        ("\"schema_version\": 1", "\"schema_version\": 2, \"history\": {\"length\": 6}", "'history.features'"),
        ("\"schema_version\": 1", "\"schema_version\": 2, \"history\": {\"length\": 0, \"features\": 135}", "out of range"),
        ("\"pw-norm-v1\"", "\"pw-norm-v9\"", "normalisation 'pw-norm-v9'"),
        ("\"stride\": 5", "\"stride\": 50", "out of range"),
        ("[0, 5, 6, 11, 12]", "[0, 5, 6]", "shoulders and hips"),
        ("\"frame_rate\": 15, ", "", "'frame_rate'"),
        ("\"frame_rate\": 15", "\"frame_rate\": 1e-300", "frame_rate must be from 1 to 240 frames per second"),
        ("\"frame_rate\": 15", "\"frame_rate\": 1e300", "frame_rate must be from 1 to 240 frames per second"),
        ("\"frame_rate\": 15", "\"frame_rate\": -15", "frame_rate must be from 1 to 240 frames per second"),
        // each normalisation number its own message, not the joints' one
        ("\"clip\": 4", "\"clip\": 0", "normalization.clip must be a finite number above 0, not 0.0"),
        ("\"clip\": 4", "\"clip\": -4", "normalization.clip must be a finite number above 0, not -4.0"),
        ("\"fallback_div\": 3", "\"fallback_div\": 0", "normalization.fallback_div must be a finite number above 0, not 0.0"),
        ("\"fallback_div\": 3", "\"fallback_div\": 1e300", "normalization.fallback_div must be a finite number above 0, not 1e+300"),
        ("\"score_min\": 0.25", "\"score_min\": -1e300", "normalization.score_min must be a finite number, not -1e+300"),
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
