import Foundation
import InferenceCore

/// Paths the tests read: fixtures next to this file, shared data at `../shared` from the package root.
enum TestPaths {
    static let testsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    static let fixtures = testsDirectory.appendingPathComponent("Fixtures")
    static let operatorFixtures = fixtures.appendingPathComponent("ops")
    static let packageRoot = testsDirectory.deletingLastPathComponent().deletingLastPathComponent()
    static let shared = packageRoot.deletingLastPathComponent().appendingPathComponent("shared")
    static let moveNet = shared.appendingPathComponent("models/movenet_singlepose_lightning_int8_4.tflite")
    static let videos = shared.appendingPathComponent("data/videos")

    /// Names of the operator fixtures (`NAME.tflite` in Fixtures/ops), sorted.
    static var operatorFixtureNames: [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: operatorFixtures.path)) ?? []
        return files.filter { $0.hasSuffix(".tflite") }.map { String($0.dropLast(7)) }.sorted()
    }

    static var moveNetAvailable: Bool { FileManager.default.fileExists(atPath: moveNet.path) }
}

extension Interpreter {
    /// Copies an array into input `index` after checking dtype and shape.
    func setInput(_ index: Int, _ array: NumPyArray) throws {
        let info = input(index)
        guard info.elementType == array.elementType, info.shape == array.shape else {
            throw ModelError(.invalidModel, "input \(index): \(array.elementType)\(array.shape) vs \(info.elementType)\(info.shape)")
        }
        array.bytes.withUnsafeBytes { inputBytes(index).copyMemory(from: $0) }
    }

    /// Output `index` as a NumPy array.
    func outputArray(_ index: Int) -> NumPyArray {
        let info = output(index)
        return NumPyArray(elementType: info.elementType, shape: info.shape, bytes: Array(outputBytes(index)))
    }
}

/// The largest absolute difference between two arrays of the same dtype and shape, as Double.
func maximumAbsoluteDifference(_ a: NumPyArray, _ b: NumPyArray) -> Double {
    precondition(a.elementType == b.elementType && a.shape == b.shape)
    func values(_ array: NumPyArray) -> [Double] {
        array.bytes.withUnsafeBytes { raw in
            (0..<array.elementCount).map { i -> Double in
                switch array.elementType {
                case .float32: Double(raw.loadUnaligned(fromByteOffset: i * 4, as: Float.self))
                case .int32: Double(raw.loadUnaligned(fromByteOffset: i * 4, as: Int32.self))
                case .int64: Double(raw.loadUnaligned(fromByteOffset: i * 8, as: Int64.self))
                case .int8: Double(raw.loadUnaligned(fromByteOffset: i, as: Int8.self))
                case .uint8: Double(raw.loadUnaligned(fromByteOffset: i, as: UInt8.self))
                default: Double(raw[i])
                }
            }
        }
    }
    return zip(values(a), values(b)).map { abs($0 - $1) }.max() ?? 0
}
