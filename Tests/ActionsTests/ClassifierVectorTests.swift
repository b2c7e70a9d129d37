import Testing
import Glibc
import JSONFormat
import PoseEstimation
@testable import Actions

/// The Swift side against the training recipe's own vectors (training/testdata/classifier_vectors.json,
/// made by training/make_test_vectors.py from generated windows): the normalisation must match
/// `pw-norm-v1` bit for bit, and the built-in classifier on posewatch's core must give LiteRT's
/// probabilities.
@Suite struct ClassifierVectorTests {
    struct Case {
        var name: String
        var raw: [Float]
        var normalized: [Float]
        var probabilities: [Float]
        var referenceProbabilities: [Float]
        /// History models: LiteRT's reference entry (the `state` output) with an empty history.
        var referenceEntry: [Float]
    }

    /// History models (r30): one generated clip's consecutive windows, each with LiteRT's reference
    /// probabilities and entry when the history is the previous windows' entries.
    struct Link {
        var raw: [Float]
        var referenceProbabilities: [Float]
        var referenceEntry: [Float]
    }

    static func document() throws -> JSONValue {
        let root = String(#filePath).split(separator: "/", omittingEmptySubsequences: false).dropLast(3).joined(separator: "/")
        let path = root + "/training/testdata/classifier_vectors.json"
        guard let file = fopen(path, "rb") else { throw VectorError(description: "cannot open \(path)") }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count == 0 { break }
            bytes += buffer[0..<count]
        }
        return try JSONValue.parse(bytes: bytes)
    }

    static func floats(_ value: JSONValue?) -> [Float] { value?.arrayValue?.compactMap { $0.doubleValue.map(Float.init) } ?? [] }

    static func cases() throws -> [Case] {
        (try document()["cases"]?.arrayValue ?? []).map { entry in
            Case(name: entry["name"]?.stringValue ?? "?", raw: floats(entry["raw_T17x3"]),
                 normalized: floats(entry["normalized"]), probabilities: floats(entry["litert_probs"]),
                 referenceProbabilities: floats(entry["litert_reference_probs"]),
                 referenceEntry: floats(entry["litert_reference_entry"]))
        }
    }

    static func chain() throws -> [Link] {
        (try document()["history"]?["chain"]?.arrayValue ?? []).map { entry in
            Link(raw: floats(entry["raw_T17x3"]), referenceProbabilities: floats(entry["litert_reference_probs"]),
                 referenceEntry: floats(entry["litert_reference_entry"]))
        }
    }

    struct VectorError: Error, CustomStringConvertible { var description: String }

    static func window(_ raw: [Float], length: Int) -> PoseWindow {
        var window = PoseWindow(length: length, framesPerSecond: 15)!
        for slot in 0..<length {
            let values = raw[(slot * 51)..<(slot * 51 + 51)]
            let pose = values.allSatisfy { $0 == 0 } ? nil : Pose(keypoints: (0..<17).map {
                Keypoint(x: values[values.startIndex + $0 * 3], y: values[values.startIndex + $0 * 3 + 1], score: values[values.startIndex + $0 * 3 + 2])
            })
            window.add(pose, at: Double(slot) / 15)
        }
        return window
    }

    @Test func theSwiftNormalisationMatchesTheRecipeBitForBit() throws {
        let classifier = try ActionClassifier.embedded()
        let cases = try Self.cases()
        #expect(cases.count >= 8)
        for vector in cases {
            let window = Self.window(vector.raw, length: classifier.metadata.windowLength)
            var output = [Float](repeating: .nan, count: vector.normalized.count)
            output.withUnsafeMutableBufferPointer { classifier.metadata.normalization.normalize(window, into: $0) }
            let mismatches = zip(output, vector.normalized).filter { $0.bitPattern != $1.bitPattern }.count
            #expect(mismatches == 0, "\(vector.name): \(mismatches) of \(output.count) values differ")
        }
    }

    @Test func theBuiltInClassifierOnOurCoreGivesLiteRTsReferenceProbabilitiesExactly() throws {
        let classifier = try ActionClassifier.embedded()
        var sameAsOptimised = 0, total = 0
        for vector in try Self.cases() {
            let window = Self.window(vector.raw, length: classifier.metadata.windowLength)
            classifier.clearHistory()  // the vectors' history is empty
            let probabilities = Array(try classifier.classify(window))
            #expect(probabilities == vector.referenceProbabilities, "\(vector.name): \(probabilities) vs \(vector.referenceProbabilities)")
            let entry = Array(classifier.lastEntry)
            #expect(entry == vector.referenceEntry, "\(vector.name): the history entry differs from LiteRT's")
            sameAsOptimised += zip(probabilities, vector.probabilities).filter { $0 == $1 }.count
            total += probabilities.count
        }
        // LiteRT's optimised kernels are not the oracle: they round some int8 steps differently.
        print("classifier outputs equal to LiteRT's optimised kernels too: \(sameAsOptimised) of \(total)")
    }

    /// A history model fed one clip's windows in order: the ring must hand the model exactly the
    /// previous entries (LiteRT's chain was built from its own entries), so probabilities and
    /// entries equal LiteRT's at every step, also after the ring is full and drops rows.
    @Test func aHistoryModelChainedOverAClipGivesLiteRTsReferenceOutputs() throws {
        let classifier = try ActionClassifier.embedded()
        let chain = try Self.chain()
        guard let shape = classifier.metadata.history else {
            #expect(chain.isEmpty, "the vectors have a history chain but the built-in model has no history input")
            return
        }
        #expect(chain.count > shape.length, "the chain must be longer than the history")
        classifier.clearHistory()
        #expect(classifier.historyRows.allSatisfy { $0 == 0 })
        for (step, link) in chain.enumerated() {
            let probabilities = Array(try classifier.classify(Self.window(link.raw, length: classifier.metadata.windowLength)))
            #expect(probabilities == link.referenceProbabilities, "step \(step): \(probabilities) vs \(link.referenceProbabilities)")
            #expect(Array(classifier.lastEntry) == link.referenceEntry, "step \(step): the entry differs from LiteRT's")
            // the entry is now the ring's last row; rows before the clip's first window stay empty
            let rows = classifier.historyRows
            #expect(Array(rows[(rows.count - shape.features)...]) == link.referenceEntry)
            let filled = (0..<shape.length).filter { rows[$0 * shape.features + shape.features - 1] != 0 }.count
            #expect(filled == min(step + 1, shape.length), "step \(step): \(filled) rows with a flag")
        }
        classifier.clearHistory()
        #expect(classifier.historyRows.allSatisfy { $0 == 0 })
    }

    /// The raw window as a horizontally flipped camera would see it: x → width − x, left ↔ right.
    static func mirrored(_ raw: [Float], width: Float) -> [Float] {
        var out = raw
        for slot in 0..<(raw.count / 51) {
            for joint in 0..<17 {
                let source = slot * 51 + Joint(rawValue: joint)!.mirrored.rawValue * 3
                let target = slot * 51 + joint * 3
                // joints without a score stay (0, 0, 0): an empty slot must stay an empty slot
                out[target] = raw[source + 2] > 0 ? width - raw[source] : raw[source]
                out[target + 1] = raw[source + 1]
                out[target + 2] = raw[source + 2]
            }
        }
        return out
    }

    /// The model averages each member with its mirror twin (training/README.md, "Mirror twins"), so a person
    /// filmed from the other side gets nearly the same probabilities; only int8 rounding differs
    /// (the input's zero point is not 0). Without the twins (r25) these windows differed by up to 0.42.
    /// With an empty history the r30 heads see the twins' averaged entry, which is mirror-symmetric
    /// in float; the int8 rounding differences pass through the heads too and grew (r26: at most
    /// 0.05; r30: 0.075 on the generated push-ups, 0 and 0.03 on the others), so the bound is 0.1
    /// and the best label must be the same.
    @Test func theBuiltInClassifierSeesAMirroredPersonAlike() throws {
        let classifier = try ActionClassifier.embedded()
        let generated = try Self.cases().filter { $0.name.hasPrefix("generated") }
        #expect(generated.count == 4)
        for vector in generated {
            let length = classifier.metadata.windowLength
            classifier.clearHistory()  // an empty history (r30): the heads then see only this window
            let direct = Array(try classifier.classify(Self.window(vector.raw, length: length)))
            classifier.clearHistory()
            let flipped = Array(try classifier.classify(Self.window(Self.mirrored(vector.raw, width: 640), length: length)))
            let difference = zip(direct, flipped).map { abs($0 - $1) }.max() ?? .infinity
            print("mirror: \(vector.name) max difference \(difference)")
            #expect(difference <= 0.1, "\(vector.name): \(direct) vs mirrored \(flipped)")
            #expect(direct.indices.max { direct[$0] < direct[$1] } == flipped.indices.max { flipped[$0] < flipped[$1] })
        }
    }
}
