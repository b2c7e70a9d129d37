import Foundation
import Testing
@testable import Actions

/// The counter on real keypoint sequences: prints the figures issue 9 asks for and guards them.
///
/// Skipped with a message where `../shared/data` is absent (a user's checkout). Set
/// `POSEWATCH_COUNTS_DIR=/some/dir` to also write per-sequence counts (`countix.tsv`, `penn.tsv`)
/// for `training/counter/evaluate.py --swift-counts`.
@Suite struct RepetitionCounterEvaluationTests {
    private func write(_ lines: [String], to name: String) {
        guard let directory = ProcessInfo.processInfo.environment["POSEWATCH_COUNTS_DIR"] else { return }
        let path = directory + "/" + name
        let text = (["dataset\tname\tlabel\tcount\tpredicted"] + lines).joined(separator: "\n") + "\n"
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
    }

    @Test(.enabled(if: KeypointDatasets.countixIsPresent, "../shared/data/keypoints/countix_fitness is absent: skipped"))
    func countixFitnessCountsAreWithinThePublishedAnchors() throws {
        let sequences = try KeypointDatasets.countixSequences()
        var pairs: [(predicted: Int, truth: Int)] = []
        var ours: [(predicted: Int, truth: Int)] = []
        var lines: [String] = []
        for sequence in sequences {
            let predicted = try KeypointDatasets.count(sequence)
            let truth = sequence.count!
            pairs.append((predicted, truth))
            if ["squat", "lunge", "push_up"].contains(sequence.datasetLabel) { ours.append((predicted, truth)) }
            lines.append("countix\t\(sequence.name)\t\(sequence.datasetLabel)\t\(truth)\t\(predicted)")
        }
        write(lines, to: "countix.tsv")
        let all = KeypointDatasets.maeAndOBO(pairs)
        let subset = KeypointDatasets.maeAndOBO(ours)
        print(String(format: "countix_fitness (Swift counter): %d sequences MAE %.3f OBO %.3f; squat/lunge/push_up %d MAE %.3f OBO %.3f",
                     pairs.count, all.mae, all.obo, ours.count, subset.mae, subset.obo))
        // Measured 0.236 / 0.689 since the lunges' motion axis is vertical (docs/history.md, counter
        // round 19; 0.239 before, with push-ups by the phase net since round 17). The MAE guard is
        // issue 23's bound (Countix with the label fixed: not worse than 0.240); issue 9's target is
        // MAE ≤ 0.20, OBO ≥ 0.65; PoseRAC's published 0.236 / 0.560 is the anchor.
        #expect(pairs.count == 148)
        #expect(all.mae <= 0.240)
        #expect(all.obo > 0.65)
    }

    @Test(.enabled(if: KeypointDatasets.pennIsPresent, "../shared/data/keypoints/penn_action_coco17 is absent: skipped"))
    func pennActionClipsGiveSmallCounts() throws {
        let sequences = try KeypointDatasets.pennSequences()
        var lines: [String] = []
        var byClass: [String: [Int]] = [:]
        for sequence in sequences {
            let predicted = try KeypointDatasets.count(sequence)
            byClass[sequence.datasetLabel, default: []].append(predicted)
            lines.append("penn\t\(sequence.name)\t\(sequence.datasetLabel)\t\t\(predicted)")
        }
        write(lines, to: "penn.tsv")
        for (label, counts) in byClass.sorted(by: { $0.key < $1.key }) {
            let mean = Double(counts.reduce(0, +)) / Double(counts.count)
            print(String(format: "penn %@: %d clips, mean count %.2f, max %d", label, counts.count, mean, counts.max() ?? 0))
        }
        #expect(sequences.count == 581)
    }
}
