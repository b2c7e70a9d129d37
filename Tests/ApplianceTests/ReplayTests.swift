import Testing
import Glibc
import InferenceCore
import JSONFormat
import PoseEstimation

/// Runs the built `posewatch` binary (it sits beside the test bundle) and captures its output.
enum PosewatchProcess {
    static var binary: String {
        var path = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &path, path.count - 1)
        let executable = String(decoding: path[0..<max(0, count)].map(UInt8.init(bitPattern:)), as: UTF8.self)
        // …/debug/posewatchPackageTests.xctest → …/debug/posewatch
        let directory = executable.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        return directory + "/posewatch"
    }

    static func run(_ arguments: [String], environment: [String] = []) -> (status: Int32, output: String, error: String) {
        let errorPath = "/tmp/posewatch-test-stderr-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { unlink(errorPath) }
        let quoted = ([binary] + arguments).map { "'" + $0.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'" }
        let prefix = environment.isEmpty ? "" : "env " + environment.map { "'\($0)'" }.joined(separator: " ") + " "
        guard let pipe = popen(prefix + quoted.joined(separator: " ") + " 2>" + errorPath, "r") else { return (-1, "", "popen failed") }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = fread(&buffer, 1, buffer.count, pipe)
            if count == 0 { break }
            output += buffer[0..<count]
        }
        let status = pclose(pipe)
        var error: [UInt8] = []
        if let file = fopen(errorPath, "r") {
            while true {
                let count = fread(&buffer, 1, buffer.count, file)
                if count == 0 { break }
                error += buffer[0..<count]
            }
            fclose(file)
        }
        return ((status >> 8) & 0xFF, String(decoding: output, as: UTF8.self), String(decoding: error, as: UTF8.self))
    }
}

/// A standing person doing squats (hips and knees move), as COCO-17 keypoints in pixels.
func squattingPose(depth: Float) -> [Float] {
    let height: Float = 300, originX: Float = 320, floor: Float = 420
    let hipY = floor - 0.52 * height + 0.22 * height * depth
    let shoulderY = hipY - 0.30 * height
    let kneeY = floor - 0.27 * height + 0.05 * height * depth
    let hipX = originX - 0.12 * height * depth
    let points: [(Float, Float)] = [
        (originX, shoulderY - 0.12 * height), (originX - 5, shoulderY - 0.14 * height), (originX + 5, shoulderY - 0.14 * height),
        (originX - 12, shoulderY - 0.12 * height), (originX + 12, shoulderY - 0.12 * height),
        (originX - 27, shoulderY), (originX + 27, shoulderY),
        (originX - 30, shoulderY + 45 - 30 * depth), (originX + 30, shoulderY + 45 - 30 * depth),
        (originX - 30 + 60 * depth, shoulderY + 90 - 70 * depth), (originX + 30 + 60 * depth, shoulderY + 90 - 70 * depth),
        (hipX - 18, hipY), (hipX + 18, hipY),
        (originX - 18 + 30 * depth, kneeY), (originX + 18 + 30 * depth, kneeY),
        (originX - 18, floor), (originX + 18, floor),
    ]
    return points.flatMap { [$0.0, $0.1, 0.9] }
}

/// Writes `float32[T,17,3]` keypoints: `standing` seconds still, then `repetitions` squats at 0.5 Hz.
func writeSquatKeypoints(path: String, standing: Double = 2, repetitions: Int = 10, fps: Double = 15) throws {
    var values: [Float] = []
    let frames = Int((standing + Double(repetitions) * 2 + 2) * fps)
    for frame in 0..<frames {
        let t = Double(frame) / fps - standing
        let inReps = t >= 0 && t < Double(repetitions) * 2
        let depth = inReps ? Float((1 - cos(2 * Double.pi * t / 2)) / 2) : 0
        values += squattingPose(depth: depth)
    }
    let bytes = values.withUnsafeBytes { Array($0) }
    try NumPyArray(elementType: .float32, shape: [frames, 17, 3], bytes: bytes).write(to: path)
}

@Suite(.serialized) struct ReplayTests {
    let scratch = ScratchDirectory("posewatch-replay-test")
    var directory: String { scratch.path }

    func lines(_ output: String) throws -> [JSONValue] {
        try output.split(separator: "\n").map { try JSONValue.parse(String($0)) }
    }

    @Test func squatsWithAFixedActionAreCountedAndReportedInTheDocumentedSchema() throws {
        let path = directory + "/squats.npy"
        try writeSquatKeypoints(path: path)
        let result = PosewatchProcess.run(["replay", path, "--fps", "15", "--action", "squats", "--config", "/dev/null"])
        #expect(result.status == 0, "\(result.error)")
        let records = try lines(result.output)
        let summary = try #require(records.last?["summary"])
        let reps = try #require(summary["reps"]?["squats"]?.intValue)
        #expect((9...11).contains(reps), "counted \(reps) of 10 squats")
        let frames: Int = (2 + 10 * 2 + 2) * 15
        let framesReported: Int? = summary["frames"]?.intValue
        let posesReported: Int? = summary["poses"]?.intValue
        #expect(framesReported == frames)
        #expect(posesReported == frames)
        let decisions = records.filter { $0["label"] != nil && $0["event"] == nil }
        #expect(summary["decisions"]?.intValue == decisions.count)
        for decision in decisions {
            #expect(decision["t"]?.doubleValue != nil)
            #expect(["squats", "starting_up"].contains(decision["label"]?.stringValue ?? ""))
            #expect(decision["confidence"] != nil && decision["reps"]?["squats"] != nil)
        }
        let events = records.filter { $0["event"]?.stringValue == "rep" }
        #expect(events.count == reps)
        let counts: [Int] = events.map { $0["count"]?.intValue ?? 0 }
        let expectedCounts: [Int] = Array(Array(1...max(1, reps)).prefix(events.count))
        #expect(counts == expectedCounts)
        #expect(events.allSatisfy { $0["label"]?.stringValue == "squats" })
    }

    @Test func theMotionRuleFlagCountsWithoutThePhaseNet() throws {
        // Ten squats counted by the phase net (as posewatch counts squats) and, with `--motion-rule`
        // (measuring the rule on datasets), by the rule: both count them, but the rule counts a
        // squat when the body is back up and the net three quarters of the way round its phase, so
        // the events' times tell which counter ran.
        let path = directory + "/squats-rule.npy"
        try writeSquatKeypoints(path: path)
        let arguments = ["replay", path, "--fps", "15", "--action", "squats", "--config", "/dev/null"]
        var timelines: [[Double]] = []
        for extra in [["--motion-rule"], []] {
            let result = PosewatchProcess.run(arguments + extra)
            #expect(result.status == 0, "\(result.error)")
            let events = try lines(result.output).filter { $0["event"]?.stringValue == "rep" }
            timelines.append(events.compactMap { $0["at"]?.doubleValue ?? $0["t"]?.doubleValue })
        }
        #expect(timelines.allSatisfy { (9...11).contains($0.count) }, "\(timelines)")
        #expect(timelines[0] != timelines[1], "the same events with and without --motion-rule: \(timelines[0])")
    }

    @Test func theDemoCountsEveryScriptedRepetitionWithTheClassifiersLabels() throws {
        // The README's first command: 8 squats and 12 jumping jacks, named by the built-in
        // classifier (no --action), so the first repetitions of each set happen before their label.
        let result = PosewatchProcess.run(["replay", "--demo", "--format", "jsonl", "--config", "/dev/null"])
        #expect(result.status == 0, "\(result.error)")
        let records = try lines(result.output)
        let reps = try #require(records.last?["summary"]?["reps"])
        #expect(reps["squats"]?.intValue == 8)
        #expect(reps["jumping_jacks"]?.intValue == 12)
        let events = records.filter { $0["event"]?.stringValue == "rep" }
        #expect(events.count == 20)
        for event in events {
            // Each event says when the repetition happened (`at`) and when it was counted (`t`).
            let at = try #require(event["at"]?.doubleValue), t = try #require(event["t"]?.doubleValue)
            #expect(at <= t)
        }
        // The first squat ended before the classifier named the set and was credited as it did.
        let first = try #require(events.first)
        let named = try #require(records.first { $0["event"] == nil && $0["label"]?.stringValue == "squats" })
        #expect(first["t"]?.doubleValue == named["t"]?.doubleValue)
        #expect((first["at"]?.doubleValue ?? .infinity) < (first["t"]?.doubleValue ?? 0))
    }

    @Test func theClassifierPathGivesOnlyKnownLabelsAndASummaryThatAddsUp() throws {
        let path = directory + "/squats-classified.npy"
        try writeSquatKeypoints(path: path)
        let result = PosewatchProcess.run(["replay", path, "--fps", "15", "--config", "/dev/null"])
        #expect(result.status == 0, "\(result.error)")
        let records = try lines(result.output)
        let known = ["jumping_jacks", "lunges", "burpees", "squats", "push_ups", "other", "no_person", "low_confidence", "starting_up"]
        for record in records.dropLast() where record["event"] == nil {
            #expect(known.contains(record["label"]?.stringValue ?? "?"))
        }
        let seconds = records.last?["summary"]?["seconds"]
        let total = known.compactMap { seconds?[$0]?.doubleValue }.reduce(0, +)
        let decisions = Double(records.last?["summary"]?["decisions"]?.intValue ?? 0)
        #expect(total <= decisions / 3 + 0.01)  // each decision covers stride / fps = 1/3 s; starting_up is not counted
    }

    @Test func theTextFormatEndsWithASummaryTable() throws {
        let path = directory + "/squats-text.npy"
        try writeSquatKeypoints(path: path, repetitions: 3)
        let result = PosewatchProcess.run(["replay", path, "--fps", "15", "--action", "squats", "--format", "text", "--config", "/dev/null"])
        #expect(result.status == 0)
        #expect(result.output.contains("action           seconds   reps"))
        #expect(result.output.contains("frames, "))
    }

    @Test func aKeypointFileWithoutFPSIsABadInputWithOneLine() throws {
        let path = directory + "/nofps.npy"
        try writeSquatKeypoints(path: path, repetitions: 1)
        let result = PosewatchProcess.run(["replay", path, "--config", "/dev/null"])
        #expect(result.status == 2)
        #expect(result.error.contains("--fps"))
        #expect(result.error.split(separator: "\n").count == 1)
        #expect(result.output.isEmpty)
    }

    @Test func aKeypointFileOfTheWrongShapeIsRejected() throws {
        let path = directory + "/wrong.npy"
        try NumPyArray(elementType: .float32, shape: [4, 13, 3], bytes: [UInt8](repeating: 0, count: 4 * 13 * 3 * 4)).write(to: path)
        let result = PosewatchProcess.run(["replay", path, "--fps", "15", "--config", "/dev/null"])
        #expect(result.status == 2)
        #expect(result.error.contains("float[T,17,3]"))
    }

    @Test func aKeypointFileOfIntegersIsRejected() throws {
        let path = directory + "/ints.npy"
        try NumPyArray(elementType: .int32, shape: [2, 17, 3], bytes: [UInt8](repeating: 0, count: 2 * 51 * 4)).write(to: path)
        let result = PosewatchProcess.run(["replay", path, "--fps", "15", "--config", "/dev/null"])
        #expect(result.status == 2)
        #expect(result.error.contains("float32 or float64"))
    }

    @Test func anUnreadableOrForeignFileIsRejected() throws {
        let missing = PosewatchProcess.run(["replay", directory + "/missing.y4m", "--config", "/dev/null"])
        #expect(missing.status == 2 && missing.error.contains("No such file"))
        let text = directory + "/notes.y4m"
        let file = fopen(text, "w")!
        fputs("hello", file)
        fclose(file)
        let foreign = PosewatchProcess.run(["replay", text, "--config", "/dev/null"])
        #expect(foreign.status == 2 && foreign.error.contains("not a Y4M or MJPEG file"))
    }

    @Test func aBadConfigFileExitsWithTheConfigurationStatus() throws {
        let config = directory + "/bad.toml"
        let file = fopen(config, "w")!
        fputs("[classifier]\nconfidence_threshold = \"high\"\n", file)
        fclose(file)
        let path = directory + "/cfg.npy"
        try writeSquatKeypoints(path: path, repetitions: 1)
        let result = PosewatchProcess.run(["replay", path, "--fps", "15", "--config", config])
        #expect(result.status == 78)
        #expect(result.error.contains("confidence_threshold"))
    }

    @Test("A broken .npy keypoint file is refused in one line naming its path once", arguments: [
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 17, 3), ",
        "{'descr': '<f4', 'fortran_order': 'yes', 'shape': (1, 17, 3), }",
        "{'descr': '<f4', 'fortran_order': True, 'shape': (1, 17, 3), }",
    ])
    func brokenKeypointFilesNameThePathOnce(_ header: String) throws {
        let path = directory + "/broken.npy"
        let headerBytes = Array(header.utf8)
        let bytes = [0x93] + Array("NUMPY".utf8) + [1, 0, UInt8(headerBytes.count), 0] + headerBytes + [UInt8](repeating: 0, count: 51 * 4)
        let file = fopen(path, "wb")!
        fwrite(bytes, 1, bytes.count, file)
        fclose(file)
        let result = PosewatchProcess.run(["replay", path, "--fps", "15", "--config", "/dev/null"])
        #expect(result.status == 2)
        #expect(result.error.split(separator: "\n").count == 1, "\(result.error)")
        #expect(result.error.components(separatedBy: "broken.npy").count == 2, "\(result.error)")
    }
}
