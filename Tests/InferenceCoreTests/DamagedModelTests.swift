import Foundation
import Testing
@testable import InferenceCore

/// Models whose structure is valid but whose data would make an operator fail: a changed constant
/// is refused at load, and a computed index out of range fails the invoke with an error; neither
/// traps (issue 27, class 1).
@Suite struct DamagedModelTests {
    /// `file` with the constant data of input `position` of the first `code` operator rewritten.
    static func changingConstant(of file: [UInt8], operator code: BuiltinOperator, input position: Int,
                                 _ change: (inout ArraySlice<UInt8>) -> Void) throws -> [UInt8] {
        let model = try Model(bytes: file)
        let node = try #require(model.operators.first { $0.code == code })
        let range = try #require(model.constantRanges[node.inputs[position]])
        var changed = file
        change(&changed[range])
        return changed
    }

    static func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: TestPaths.operatorFixtures.appendingPathComponent("\(name).tflite")))
    }

    @Test("a FLOOR_DIV whose constant divisor holds 0 is refused at load, naming the operator")
    func constantDivisorOfZeroIsRefusedAtLoad() throws {
        let damaged = try Self.changingConstant(of: Self.fixture("argmax_floordiv_pack"), operator: .floorDiv, input: 1) {
            for index in $0.indices { $0[index] = 0 }
        }
        let model = try Model(bytes: damaged)
        do {
            _ = try Interpreter(model: model, registry: .reference)
            Issue.record("a divisor of 0 was accepted")
        } catch {
            #expect(error.description.contains("FLOOR_DIV"), "\(error)")
            #expect(error.description.contains("divisor holds 0"), "\(error)")
        }
    }

    @Test("a GATHER_ND whose constant indices point outside params is refused at load")
    func constantGatherIndicesOutOfRangeAreRefusedAtLoad() throws {
        #expect(throws: Never.self) { _ = try Interpreter(model: Model(bytes: Self.gatherModel(indices: [2, 0])), registry: .reference) }
        for indices: [Int32] in [[3, 0], [-1, 0], [Int32.max, 0], [0, Int32.min]] {
            let model = try Model(bytes: Self.gatherModel(indices: indices))
            do {
                _ = try Interpreter(model: model, registry: .reference)
                Issue.record("indices \(indices) were accepted")
            } catch {
                #expect(error.description.contains("GATHER_ND"), "\(error)")
                #expect(error.description.contains("outside the params tensor"), "\(error)")
            }
        }
    }

    @Test("a GATHER_ND index computed out of range fails the invoke with an error, not a trap")
    func computedGatherIndexOutOfRangeFailsTheInvoke() throws {
        let interpreter = try Interpreter(model: Model(bytes: Self.fixture("gather_nd_unpack")), registry: .reference)
        let indices = interpreter.input(1)
        #expect(indices.elementType == .int32)
        for huge: Int32 in [Int32.max, Int32.min, -1] {
            interpreter.inputBytes(0).initializeMemory(as: UInt8.self, repeating: 0)
            let buffer = interpreter.inputBytes(1)
            for offset in stride(from: 0, to: buffer.count, by: 4) { buffer.storeBytes(of: huge, toByteOffset: offset, as: Int32.self) }
            #expect(throws: ModelError.self) { try interpreter.invoke() }
        }
    }

    @Test("MoveNet with its FLOOR_DIV divisor changed to 0 or 1 is refused when it loads, never trapping",
          .enabled(if: TestPaths.moveNetAvailable, "needs ../shared/models/movenet_singlepose_lightning_int8_4.tflite"))
    func moveNetWithAChangedDivisorIsRefusedAtLoad() throws {
        let original = Array(try Data(contentsOf: TestPaths.moveNet))
        for value: Int32 in [0, 1] {
            let damaged = try Self.changingConstant(of: original, operator: .floorDiv, input: 1) { bytes in
                for offset in stride(from: bytes.startIndex, to: bytes.endIndex, by: 4) {
                    withUnsafeBytes(of: value.littleEndian) { for k in 0..<4 { bytes[offset + k] = $0[k] } }
                }
            }
            let model = try Model(bytes: damaged)
            if value == 0 {
                #expect(throws: ModelError.self) { _ = try Interpreter(model: model) }
                continue
            }
            // Divisor 1: every constant is in range, so Prepare accepts it, but the decoded row
            // index leaves the heatmap: the invoke fails on (almost) any frame.
            let interpreter = try Interpreter(model: model)
            interpreter.inputBytes(0).initializeMemory(as: UInt8.self, repeating: 128)
            #expect(throws: ModelError.self) { try interpreter.invoke() }
        }
    }

    /// params float32[3, 4] (the model's input) → GATHER_ND with constant int32 indices [[a], [b]]
    /// → float32[2, 4].
    static func gatherModel(indices: [Int32]) -> [UInt8] {
        func tensor(_ name: String, buffer: UInt32, shape: [Int32], type: Int8) -> FlatNode {
            .table([.child(.int32s(shape)), .int8(type), .uint32(buffer), .child(.string(name))])
        }
        let indexBytes = indices.flatMap { withUnsafeBytes(of: $0.littleEndian, Array.init) }
        let buffers: [FlatNode] = [.table([]), .table([]), .table([.child(.bytes(indexBytes))]), .table([])]
        let operatorCode = FlatNode.table([.int8(107), .absent, .int32(1), .int32(107)])
        let operatorTable = FlatNode.table([.uint32(0), .child(.int32s([0, 1])), .child(.int32s([2]))])
        let subgraph = FlatNode.table([
            .child(.nodes([tensor("params", buffer: 1, shape: [3, 4], type: 0),
                           tensor("indices", buffer: 2, shape: [Int32(indices.count), 1], type: 2),
                           tensor("output", buffer: 3, shape: [Int32(indices.count), 4], type: 0)])),
            .child(.int32s([0])), .child(.int32s([2])), .child(.nodes([operatorTable])), .child(.string("main")),
        ])
        let model = FlatNode.table([
            .uint32(3), .child(.nodes([operatorCode])), .child(.nodes([subgraph])), .child(.string("gather")),
            .child(.nodes(buffers)),
        ])
        return FlatWriter.file(root: model)
    }
}
