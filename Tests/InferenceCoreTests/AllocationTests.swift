#if canImport(Glibc)
import Glibc
#endif
import Testing
import InferenceCore

/// `invoke()` must not allocate. Counting needs the malloc-counting preload
/// (Tests/Support/run-allocation-tests.sh); without it these tests are skipped.
@Suite(.serialized) struct AllocationTests {
    typealias Counter = @convention(c) () -> UInt64

    /// This thread's allocations (the test framework allocates on its own threads meanwhile).
    static var counter: Counter? {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pw_thread_allocation_count") else { return nil }
        return unsafeBitCast(symbol, to: Counter.self)
    }

    static let skipMessage: Comment = "needs the malloc counter: run Tests/Support/run-allocation-tests.sh"

    /// malloc calls made by the third `invoke()` (the first ones may fill runtime caches).
    static func allocationsPerInvoke(_ interpreter: Interpreter) throws -> Int {
        let count = try #require(counter)
        try interpreter.invoke()
        try interpreter.invoke()
        let before = count()
        try interpreter.invoke()
        return Int(count() - before)
    }

    @Test(.enabled(if: AllocationTests.counter != nil, AllocationTests.skipMessage),
          arguments: ["classifier_head", "argmax_floordiv_pack", "gather_nd_unpack", "resize_bilinear_half_pixel",
                      "add_broadcast", "quantize_dense_dequantize", "softmax", "mean_spatial"])
    func invokingAFixtureModelMakesNoMallocCalls(_ name: String) throws {
        let base = TestPaths.operatorFixtures.appendingPathComponent(name).path
        let interpreter = try Interpreter(model: Model(contentsOf: base + ".tflite"))
        for index in 0..<interpreter.inputCount {
            try interpreter.setInput(index, NumPyArray.read(contentsOf: "\(base).input_\(index).npy"))
        }
        let allocations = try Self.allocationsPerInvoke(interpreter)
        #expect(allocations == 0, "\(name): \(allocations) malloc calls in one invoke()")
    }

    @Test(.enabled(if: AllocationTests.counter != nil && TestPaths.moveNetAvailable, AllocationTests.skipMessage))
    func invokingMoveNetWithAServicePointMakesNoMallocCalls() throws {
        let interpreter = try Interpreter(model: Model(contentsOf: TestPaths.moveNet.path))
        let count = try #require(Self.counter)
        var service = RecordingServicePoint()
        try interpreter.invoke(servicing: &service)
        try interpreter.invoke(servicing: &service)
        let before = count()
        try interpreter.invoke(servicing: &service)
        let allocations = Int(count() - before)
        #expect(allocations == 0, "MoveNet with a service point: \(allocations) malloc calls in one invoke")
        #expect(service.calls == 3 * (interpreter.model.operatorCount - 1))
    }

    @Test(.enabled(if: AllocationTests.counter != nil && TestPaths.moveNetAvailable, AllocationTests.skipMessage))
    func invokingMoveNetMakesNoMallocCalls() throws {
        let interpreter = try Interpreter(model: Model(contentsOf: TestPaths.moveNet.path))
        let allocations = try Self.allocationsPerInvoke(interpreter)
        #expect(allocations == 0, "MoveNet: \(allocations) malloc calls in one invoke()")
    }
}
