import Testing
import InferenceCore

/// Every fixture in Fixtures/ops (made by Scripts/make_op_fixtures.py with LiteRT BUILTIN_REF as the
/// oracle) must reproduce LiteRT's outputs bit for bit.
@Suite struct OperatorFixtureTests {
    @Test(arguments: TestPaths.operatorFixtureNames)
    func fixtureOutputsMatchLiteRTReferenceKernelsExactly(_ name: String) throws {
        let base = TestPaths.operatorFixtures.appendingPathComponent(name).path
        let model = try Model(contentsOf: base + ".tflite")
        let interpreter = try Interpreter(model: model)
        for index in 0..<interpreter.inputCount {
            try interpreter.setInput(index, NumPyArray.read(contentsOf: "\(base).input_\(index).npy"))
        }
        try interpreter.invoke()
        for index in 0..<interpreter.outputCount {
            let expected = try NumPyArray.read(contentsOf: "\(base).output_\(index).npy")
            let actual = interpreter.outputArray(index)
            #expect(actual.shape == expected.shape)
            #expect(actual.elementType == expected.elementType)
            if actual.shape == expected.shape && actual.elementType == expected.elementType {
                let difference = maximumAbsoluteDifference(actual, expected)
                #expect(difference == 0, "\(name) output \(index): max abs difference \(difference)")
            }
        }
    }

    /// The oracle harness for optimized variants: whatever the default registry picks must give
    /// the reference kernels' bytes.
    @Test(arguments: TestPaths.operatorFixtureNames)
    func defaultKernelVariantsMatchTheReferenceKernels(_ name: String) throws {
        let base = TestPaths.operatorFixtures.appendingPathComponent(name).path
        let model = try Model(contentsOf: base + ".tflite")
        let reference = try Interpreter(model: model, registry: .reference)
        let chosen = try Interpreter(model: model)
        #expect(reference.kernelVariants.allSatisfy { $0.variant == .reference })
        for index in 0..<reference.inputCount {
            let array = try NumPyArray.read(contentsOf: "\(base).input_\(index).npy")
            try reference.setInput(index, array)
            try chosen.setInput(index, array)
        }
        try reference.invoke()
        try chosen.invoke()
        for index in 0..<reference.outputCount {
            #expect(reference.outputArray(index) == chosen.outputArray(index))
        }
    }

    @Test func thereAreOperatorFixtures() {
        #expect(TestPaths.operatorFixtureNames.count >= 20)
    }
}
