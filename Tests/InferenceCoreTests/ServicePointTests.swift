import Testing
import InferenceCore

/// Records which operators it was called after, into fixed storage (no allocation while invoking).
struct RecordingServicePoint: InvokeServicePoint {
    var calls = 0
    var lastIndex = -1
    var inOrder = true

    mutating func operatorFinished(_ index: Int) {
        if index != lastIndex + 1 { inOrder = false }
        lastIndex = index
        calls += 1
    }
}

/// `invoke(servicing:)`: the frame loop's between-operators callback (LED timing and the watchdog
/// during a long inference).
@Suite struct ServicePointTests {
    @Test func theServicePointRunsBetweenEveryTwoOperatorsAndTheOutputsAreUnchanged() throws {
        let base = TestPaths.operatorFixtures.appendingPathComponent("classifier_head").path
        let model = try Model(contentsOf: base + ".tflite")
        let plain = try Interpreter(model: model)
        let serviced = try Interpreter(model: model)
        let input = try NumPyArray.read(contentsOf: base + ".input_0.npy")
        try plain.setInput(0, input)
        try serviced.setInput(0, input)
        let operators = model.operatorCount
        #expect(operators == 8)

        try plain.invoke()
        var service = RecordingServicePoint()
        try serviced.invoke(servicing: &service)
        // After operators 0…6, in order; not after the last one (invoke returns then).
        #expect(service.calls == operators - 1)
        #expect(service.lastIndex == operators - 2)
        #expect(service.inOrder)
        #expect(serviced.outputArray(0) == plain.outputArray(0))
        let expected = try NumPyArray.read(contentsOf: base + ".output_0.npy")
        #expect(serviced.outputArray(0) == expected)

        // A second invoke calls it again from operator 0.
        var again = RecordingServicePoint()
        try serviced.invoke(servicing: &again)
        #expect(again.calls == operators - 1 && again.inOrder)
    }
}
