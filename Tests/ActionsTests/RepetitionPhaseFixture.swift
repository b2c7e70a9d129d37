import Foundation
import InferenceCore
import JSONFormat
import PoseEstimation
@testable import Actions

/// The parity fixture (Fixtures/repetition_phase, written by
/// training/counter/learned/make_swift_fixture.py): four seeded sequences with the Python
/// reference's features, the int8 net's outputs (LiteRT reference kernels) phase_net.py's outputs (the
/// installed models averaged, LiteRT reference kernels), count.py's events, and counter.py's events
/// for some runs of the whole counter (`counterRuns`).
struct RepetitionPhaseFixture {
    struct Sequence {
        var name: String
        /// Frames `range` of the concatenated arrays.
        var range: Range<Int>
        /// count.count(outputs, fps=15, at_phase=0.75, rel_start=True): frame indices.
        var events: [Int]
        /// The same on the outputs with p(repeating) set to 0 where `gatedOff` says.
        var gatedEvents: [Int]
    }

    /// A run of the whole reference counter (counter.count_sequence, default Config) on one sequence.
    struct CounterRun {
        var sequence: String
        /// The label on each of the sequence's frames (nil: no exercise named).
        var labels: [ActionLabel?]
        var describedLabel: String
        /// counter.py's events: when each repetition happened, when it was counted, label, count.
        var events: [(time: Double, creditedAt: Double, label: ActionLabel, count: Int)]
    }

    /// make_swift_fixture.py's `gated_off`: frames (of a sequence) on which its `gated` variant
    /// sets p(repeating) to 0: 40-frame gaps (longer than the counter's 15-frame gap: a restart
    /// and a credit replay), 8-frame ones (shorter: counting resumes without a restart) and
    /// 15- and 16-frame ones (exactly the gap: no restart; one more: a restart).
    static func gatedOff(_ frame: Int) -> Bool { frame % 97 < 40 || frame % 53 < 8 || frame % 71 < 15 || frame % 89 < 16 }

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/repetition_phase")

    /// The sha256 of each model the outputs are the average of, in order.
    var modelSHA256s: [String]
    var framesPerSecond: Double
    var atPhase: Double
    var sequences: [Sequence]
    /// counter.py's Config().phase_labels when the fixture was made.
    var phaseLabels: [ActionLabel]
    var counterRuns: [CounterRun]
    /// Per frame: the pose (from float16), the features row (27), the net's output.
    var poses: [Pose]
    var features: [Float]
    var outputs: [RepetitionPhaseOutput]

    struct LoadError: Error, CustomStringConvertible { var description: String }

    static func load() throws -> RepetitionPhaseFixture {
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        let json = try JSONValue.parse(String(decoding: try Data(contentsOf: URL(fileURLWithPath: path("fixture.json"))), as: UTF8.self))
        guard let shas = json["model_sha256s"]?.arrayValue?.compactMap(\.stringValue), let fps = json["fps"]?.doubleValue,
              let atPhase = json["at_phase"]?.doubleValue, let entries = json["sequences"]?.arrayValue else {
            throw LoadError(description: "fixture.json: missing model_sha256s, fps, at_phase or sequences")
        }
        var sequences: [Sequence] = [], start = 0
        for entry in entries {
            guard let name = entry["name"]?.stringValue, let frames = entry["frames"]?.intValue,
                  let events = entry["events"]?.arrayValue?.compactMap(\.intValue),
                  let gatedEvents = entry["gated_events"]?.arrayValue?.compactMap(\.intValue) else {
                throw LoadError(description: "fixture.json: a sequence without name, frames, events or gated_events")
            }
            sequences.append(Sequence(name: name, range: start..<start + frames, events: events, gatedEvents: gatedEvents))
            start += frames
        }
        func item(_ array: JSONValue, _ index: Int) -> JSONValue? {
            guard let values = array.arrayValue, index < values.count else { return nil }
            return values[index]
        }
        func label(_ value: JSONValue?) throws -> ActionLabel? {
            guard let value, case .string(let name) = value else { return nil }
            guard let label = ActionLabel(rawValue: name) else { throw LoadError(description: "fixture.json: unknown label \(name)") }
            return label
        }
        guard let phaseLabels = try json["phase_labels"]?.arrayValue?.map({ try label($0) }),
              let runEntries = json["counter_runs"]?.arrayValue else {
            throw LoadError(description: "fixture.json: missing phase_labels or counter_runs")
        }
        var counterRuns: [CounterRun] = []
        for entry in runEntries {
            guard let name = entry["sequence"]?.stringValue, let sequence = sequences.first(where: { $0.name == name }),
                  let labelValue = entry["label"], let eventEntries = entry["events"]?.arrayValue else {
                throw LoadError(description: "fixture.json: a counter run without a known sequence, label or events")
            }
            let frames = sequence.range.count
            var labels: [ActionLabel?]
            var described = "a timeline"
            if case .string(let name) = labelValue {
                labels = Array(repeating: try label(labelValue), count: frames)
                described = name
            } else {
                labels = Array(repeating: nil, count: frames)
                let segments = labelValue.arrayValue ?? []
                for (index, segment) in segments.enumerated() {
                    guard let start = item(segment, 0)?.intValue else { throw LoadError(description: "fixture.json: a bad timeline segment") }
                    let end = index + 1 < segments.count ? (item(segments[index + 1], 0)?.intValue ?? frames) : frames
                    let segmentLabel = try label(item(segment, 1))
                    for frame in start..<min(end, frames) { labels[frame] = segmentLabel }
                }
            }
            var events: [(time: Double, creditedAt: Double, label: ActionLabel, count: Int)] = []
            for event in eventEntries {
                guard let time = item(event, 0)?.doubleValue, let creditedAt = item(event, 1)?.doubleValue,
                      let eventLabel = try label(item(event, 2)), let count = item(event, 3)?.intValue else {
                    throw LoadError(description: "fixture.json: a counter event that is not [at, now, label, count]")
                }
                events.append((time, creditedAt, eventLabel, count))
            }
            counterRuns.append(CounterRun(sequence: name, labels: labels, describedLabel: described, events: events))
        }
        let poseArray = try NumPyArray.read(contentsOf: path("poses.npy"))
        let featureArray = try NumPyArray.read(contentsOf: path("features.npy"))
        let outputArray = try NumPyArray.read(contentsOf: path("outputs.npy"))
        guard poseArray.elementType == .float16, poseArray.shape == [start, Joint.count, 3],
              featureArray.elementType == .float32, featureArray.shape == [start, RepetitionPhaseFeatures.rowLength],
              outputArray.elementType == .float32, outputArray.shape == [start, 3] else {
            throw LoadError(description: "fixture arrays: poses \(poseArray.elementType)\(poseArray.shape), features \(featureArray.elementType)\(featureArray.shape), outputs \(outputArray.elementType)\(outputArray.shape) for \(start) frames")
        }
        let halves: [UInt16] = poseArray.bytes.withUnsafeBytes { raw in
            (0..<poseArray.elementCount).map { raw.loadUnaligned(fromByteOffset: $0 * 2, as: UInt16.self) }
        }
        func floats(_ array: NumPyArray) -> [Float] {
            array.bytes.withUnsafeBytes { raw in (0..<array.elementCount).map { raw.loadUnaligned(fromByteOffset: $0 * 4, as: Float.self) } }
        }
        let poses = (0..<start).map { frame in
            Pose(keypoints: (0..<Joint.count).map { joint in
                let base = (frame * Joint.count + joint) * 3
                return Keypoint(x: Float(Float16(bitPattern: halves[base])), y: Float(Float16(bitPattern: halves[base + 1])),
                                score: Float(Float16(bitPattern: halves[base + 2])))
            })
        }
        let values = floats(outputArray)
        let outputs = (0..<start).map { RepetitionPhaseOutput(cos: values[3 * $0], sin: values[3 * $0 + 1], repeating: values[3 * $0 + 2]) }
        return RepetitionPhaseFixture(modelSHA256s: shas, framesPerSecond: fps, atPhase: atPhase, sequences: sequences,
                                      phaseLabels: phaseLabels.compactMap { $0 }, counterRuns: counterRuns,
                                      poses: poses, features: floats(featureArray), outputs: outputs)
    }

    /// Frame `frame`'s reference features row.
    func row(_ frame: Int) -> ArraySlice<Float> {
        features[frame * RepetitionPhaseFeatures.rowLength..<(frame + 1) * RepetitionPhaseFeatures.rowLength]
    }
}
