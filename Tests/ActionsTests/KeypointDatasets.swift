import Foundation
import PoseEstimation
@testable import Actions

/// A minimal reader for little-endian float32/float64 C-order `.npy` files (NumPy format 1.0–3.0).
///
/// Test-side only and deliberately small: the project's `NumPyArray` (inference core) can replace it.
struct TestNumPyArray {
    var shape: [Int]
    var values: [Float]

    enum ReadError: Error { case notNumPy(String), unsupported(String) }

    init(contentsOf path: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let bytes = [UInt8](data)
        guard bytes.count >= 10, bytes[0] == 0x93, Array(bytes[1...5]) == Array("NUMPY".utf8) else {
            throw ReadError.notNumPy(path)
        }
        let major = bytes[6]
        let headerLength: Int
        let headerStart: Int
        if major == 1 {
            headerLength = Int(bytes[8]) | Int(bytes[9]) << 8
            headerStart = 10
        } else {
            headerLength = Int(bytes[8]) | Int(bytes[9]) << 8 | Int(bytes[10]) << 16 | Int(bytes[11]) << 24
            headerStart = 12
        }
        let header = String(decoding: bytes[headerStart..<(headerStart + headerLength)], as: UTF8.self)
        guard !header.contains("'fortran_order': True") else { throw ReadError.unsupported("Fortran order in \(path)") }
        let isDouble: Bool
        if header.contains("'<f4'") { isDouble = false } else if header.contains("'<f8'") { isDouble = true } else {
            throw ReadError.unsupported("dtype in \(path): \(header)")
        }
        guard let open = header.firstIndex(of: "("), let close = header.firstIndex(of: ")") else {
            throw ReadError.notNumPy(path)
        }
        shape = header[header.index(after: open)..<close].split(separator: ",")
            .compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        let count = shape.reduce(1, *)
        let start = headerStart + headerLength
        let width = isDouble ? 8 : 4
        guard bytes.count >= start + count * width else { throw ReadError.notNumPy("truncated \(path)") }
        values = [Float](repeating: 0, count: count)
        bytes.withUnsafeBytes { raw in
            for index in 0..<count {
                let offset = start + index * width
                values[index] = isDouble
                    ? Float(Double(bitPattern: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian))
                    : Float(bitPattern: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian)
            }
        }
    }
}

/// The real keypoint sets in `../shared/data/keypoints` (absent in a user's checkout).
enum KeypointDatasets {
    /// `../shared/data` relative to the package root (this file is Tests/ActionsTests/…).
    static let sharedData: String = {
        let here = URL(fileURLWithPath: #filePath)
        return here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("shared/data").path
    }()
    static let countix = sharedData + "/keypoints/countix_fitness"
    static let penn = sharedData + "/keypoints/penn_action_coco17"

    static var countixIsPresent: Bool { FileManager.default.fileExists(atPath: countix + "/index.csv") }
    static var pennIsPresent: Bool { FileManager.default.fileExists(atPath: penn + "/index.csv") }

    /// MediaPipe BlazePose-33 landmark for each COCO-17 joint (data README).
    static let mediaPipeForCOCO = [0, 2, 5, 7, 8, 11, 12, 13, 14, 15, 16, 23, 24, 25, 26, 27, 28]

    struct Sequence {
        var name: String
        var datasetLabel: String
        var count: Int?
        /// One entry per frame at 15 fps; nil = no detection.
        var poses: [Pose?]
    }

    /// Rows of a simple CSV with a header (no quoted commas in these files).
    static func csvRows(_ path: String) throws -> [[String: String]] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var lines = text.split(whereSeparator: \.isNewline).map(String.init)
        let header = lines.removeFirst().split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        return lines.map { line in
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            var row: [String: String] = [:]
            for (index, key) in header.enumerated() where index < fields.count { row[key] = fields[index] }
            return row
        }
    }

    /// Every usable Countix-Fitness sequence as COCO-17 poses at 15 fps (every second ~30 fps frame,
    /// as `training/counter/data.py` does).
    static func countixSequences() throws -> [Sequence] {
        try csvRows(countix + "/index.csv").filter { $0["usable"] == "1" }.map { row in
            let array = try TestNumPyArray(contentsOf: countix + "/" + row["npy"]!)
            precondition(array.shape.count == 2 && array.shape[1] == 99)
            var poses: [Pose?] = []
            for frame in stride(from: 0, to: array.shape[0], by: 2) {
                let base = frame * 99
                var detected = false
                for index in 0..<99 where array.values[base + index] != 0 { detected = true; break }
                guard detected else { poses.append(nil); continue }
                var pose = Pose()
                for (joint, landmark) in mediaPipeForCOCO.enumerated() {
                    pose[joint] = Keypoint(x: array.values[base + landmark * 3], y: array.values[base + landmark * 3 + 1], score: 1)
                }
                poses.append(pose)
            }
            return Sequence(name: String(row["npy"]!.split(separator: "/").last!), datasetLabel: row["label"]!,
                            count: Int(row["count"]!), poses: poses)
        }
    }

    /// Every Penn Action clip as COCO-17 poses at 15 fps. Annotators placed occluded joints too, so
    /// a joint with coordinates is present (score 1); joints never annotated (eyes, ears) are missing.
    static func pennSequences() throws -> [Sequence] {
        try csvRows(penn + "/index.csv").map { row in
            let array = try TestNumPyArray(contentsOf: penn + "/" + row["action"]! + "/" + row["id"]! + ".npy")
            precondition(array.shape.count == 3 && array.shape[1] == 17 && array.shape[2] == 3)
            var poses: [Pose?] = []
            for frame in stride(from: 0, to: array.shape[0], by: 2) {
                var pose = Pose()
                var any = false
                for joint in 0..<17 {
                    let base = (frame * 17 + joint) * 3
                    let x = array.values[base], y = array.values[base + 1]
                    let present = x != 0 || y != 0
                    any = any || present
                    pose[joint] = Keypoint(x: x, y: y, score: present ? 1 : 0)
                }
                poses.append(any ? pose : nil)
            }
            return Sequence(name: row["id"]!, datasetLabel: row["action"]!, count: nil, poses: poses)
        }
    }

    /// The label `replay --action` gets for a dataset class (`training/counter/data.py`): Countix's
    /// and Penn's classes that are ours get their own label; the others (bench press, sit-ups...),
    /// which posewatch never names, measure the motion rule alone: `push_ups`, a label without a
    /// per-action cue, counted without the phase net (`replay --motion-rule`, `isCountedByRule`).
    static func label(for datasetLabel: String) -> ActionLabel {
        ourLabel(for: datasetLabel) ?? .pushUps
    }

    /// A dataset class posewatch does not name: counted by the rule alone (`label(for:)`).
    static func isCountedByRule(_ datasetLabel: String) -> Bool {
        ourLabel(for: datasetLabel) == nil
    }

    /// posewatch's label for a dataset class that is one of its exercises, else nil.
    private static func ourLabel(for datasetLabel: String) -> ActionLabel? {
        switch datasetLabel {
        case "squat": .squats
        case "lunge": .lunges
        case "push_up", "pushup": .pushUps
        case "jumping_jacks": .jumpingJacks
        default: nil
        }
    }

    /// Runs a sequence with the label fixed (as `replay --action`, with `--motion-rule` for a class
    /// that is not ours) and returns the count.
    static func count(_ sequence: Sequence) throws -> Int {
        try count(sequence, action: label(for: sequence.datasetLabel), byRule: isCountedByRule(sequence.datasetLabel))
    }

    /// Runs a sequence with `action` fixed and returns the count: the counter as posewatch runs it,
    /// with the built-in phase net for its labels (or, `byRule`, without it).
    static func count(_ sequence: Sequence, action: ActionLabel, byRule: Bool = false) throws -> Int {
        let counter = byRule ? RepetitionCounter() : RepetitionCounter(phaseNet: try RepetitionPhaseNet.embedded())
        for (index, pose) in sequence.poses.enumerated() {
            _ = counter.process(timestamp: Double(index) / 15, pose: pose, action: action)
        }
        return counter.count(of: action)
    }

    /// MAE (mean |pred − gt| / gt) and OBO (share with |pred − gt| ≤ 1).
    static func maeAndOBO(_ pairs: [(predicted: Int, truth: Int)]) -> (mae: Double, obo: Double) {
        guard !pairs.isEmpty else { return (0, 0) }
        let mae = pairs.map { Double(abs($0.predicted - $0.truth)) / Double($0.truth) }.reduce(0, +) / Double(pairs.count)
        let obo = Double(pairs.filter { abs($0.predicted - $0.truth) <= 1 }.count) / Double(pairs.count)
        return (mae, obo)
    }
}
