#if canImport(Glibc)
import Glibc
#endif
import Testing
import InferenceCore

/// `invoke()` must not allocate. Counting needs the LD_PRELOAD shim from
/// Scripts/count_allocations.sh; without it these tests are skipped.
@Suite(.serialized) struct AllocationTests {
    typealias Counter = @convention(c) () -> Int

    static var counter: Counter? {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posewatch_malloc_calls") else { return nil }
        return unsafeBitCast(symbol, to: Counter.self)
    }

    static let skipMessage: Comment = "needs the malloc-counting shim: run Scripts/count_allocations.sh"

    /// malloc calls made by the third `invoke()` (the first ones may fill runtime caches).
    static func allocationsPerInvoke(_ interpreter: Interpreter) throws -> Int {
        let count = try #require(counter)
        try interpreter.invoke()
        try interpreter.invoke()
        typealias Trace = @convention(c) (Int32) -> Void
        let trace = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posewatch_malloc_trace").map { unsafeBitCast($0, to: Trace.self) }
        let tracing = getenv("POSEWATCH_MALLOC_TRACE") != nil
        let before = count()
        if tracing { trace?(1) }
        try interpreter.invoke()
        if tracing { trace?(0) }
        return count() - before
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
    func invokingMoveNetMakesNoMallocCalls() throws {
        let interpreter = try Interpreter(model: Model(contentsOf: TestPaths.moveNet.path))
        let allocations = try Self.allocationsPerInvoke(interpreter)
        #expect(allocations == 0, "MoveNet: \(allocations) malloc calls in one invoke()")
    }
}
