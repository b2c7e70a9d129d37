import Foundation
import Testing
@testable import InferenceCore
import PoseEstimation

/// MoveNet with one constant changed passes the file's structural checks; the estimator must refuse
/// it when it loads (it runs the model once on a test frame) instead of trapping on the first frame
/// (issue 27, class 1).
@Suite struct DamagedMoveNetTests {
    @Test("MoveNet whose FLOOR_DIV divisor is 1 is refused by the estimator at load, with the file named",
          .enabled(if: FileManager.default.fileExists(atPath: TestPaths.moveNet.path), "needs ../shared/models/movenet_singlepose_lightning_int8_4.tflite"))
    func aMoveNetThatFailsOnItsTestFrameIsRefusedAtLoad() throws {
        let original = Array(try Data(contentsOf: TestPaths.moveNet))
        let model = try Model(bytes: original)
        let node = try #require(model.operators.first { $0.code == .floorDiv })
        let range = try #require(model.constantRanges[node.inputs[1]])
        var damaged = original
        for offset in stride(from: range.lowerBound, to: range.upperBound, by: 4) {
            damaged[offset] = 1; damaged[offset + 1] = 0; damaged[offset + 2] = 0; damaged[offset + 3] = 0
        }
        let interpreter = try Interpreter(model: Model(bytes: damaged))
        do {
            _ = try MoveNetEstimator(interpreter: interpreter, name: "pose model damaged.tflite")
            Issue.record("the damaged model was accepted")
        } catch {
            #expect(error.description.hasPrefix("pose model damaged.tflite: loads but fails on a test frame"), "\(error)")
        }
        // The intact file loads and runs as before.
        _ = try MoveNetEstimator(interpreter: Interpreter(model: Model(bytes: original)))
    }
}
