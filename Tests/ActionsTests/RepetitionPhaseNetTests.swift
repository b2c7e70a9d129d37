import Foundation
import InferenceCore
import PoseEstimation
import Testing
import LinuxSystem
@testable import Actions

/// Loading the phase net, its window, and the counter's parameters (the parity with the Python
/// reference is RepetitionPhaseParityTests).
@Suite struct RepetitionPhaseNetTests {
    @Test func aModelOfAnotherShapeIsRefusedWithOneClearMessage() throws {
        // the action classifier is a real model with another interface
        let model = try Model(bytes: ActionClassifier.embeddedModelBytes)
        do throws(RepetitionPhaseModelError) {
            _ = try RepetitionPhaseNet(model: model, name: "action_classifier.tflite")
            Issue.record("the classifier was accepted as a phase net")
        } catch {
            print(error.description)
            #expect(error.description.hasPrefix("action_classifier.tflite: inputs float32[1, "))
            #expect(error.description.hasSuffix("but a repetition phase net has input float32[1, 45, 27] and output float32[1, 3]"))
            #expect(!error.description.contains("\n"))
        }
    }

    @Test func aMissingFileIsNamed() {
        do throws(RepetitionPhaseModelError) {
            _ = try RepetitionPhaseNet(modelPath: "/nonexistent/phase.tflite")
            Issue.record("a missing file was loaded")
        } catch {
            #expect(error.description.hasPrefix("repetition phase model /nonexistent/phase.tflite: "))
        }
    }

    /// The same bytes from files give the same outputs as the built-in net; `reset` starts the
    /// window again from zero rows, as a fresh net.
    @Test func modelsFromFilesAndResetBehaveAsTheBuiltInNet() throws {
        let paths = (0..<RepetitionPhaseNet.embeddedModelCount).map {
            FileManager.default.temporaryDirectory.appendingPathComponent("phase-\(getpid())-\($0).tflite").path
        }
        for (index, path) in paths.enumerated() {
            try Data(RepetitionPhaseNet.embeddedModelBytes(index)).write(to: URL(fileURLWithPath: path))
        }
        defer { for path in paths { try? FileManager.default.removeItem(atPath: path) } }
        var fromFiles = try RepetitionPhaseNet(modelPaths: paths)
        var builtIn = try RepetitionPhaseNet.embedded()
        #expect(builtIn.modelCount == paths.count && fromFiles.modelCount == paths.count)
        let fixture = try RepetitionPhaseFixture.load()
        let frames = fixture.sequences[0].range.prefix(120)
        func run(_ net: inout RepetitionPhaseNet) throws -> [RepetitionPhaseOutput] {
            try frames.map { frame in try fixture.row(frame).withUnsafeBufferPointer { try net.process($0) } }
        }
        let first = try run(&builtIn)
        #expect(try run(&fromFiles) == first)
        #expect(try run(&builtIn) != first, "the window carries over without a reset")
        builtIn.reset()
        #expect(try run(&builtIn) == first)
    }

    /// The ensemble's output is the models' outputs summed in Float in order and divided by their
    /// count in Float (numpy's float32 mean in phase_net.py), each model reading the same window.
    @Test func theEnsembleAveragesItsModelsAsNumpyDoes() throws {
        try #require(RepetitionPhaseNet.embeddedModelCount == 2, "posewatch embeds two models")
        func single(_ index: Int) throws -> RepetitionPhaseNet {
            try RepetitionPhaseNet(model: Model(bytes: RepetitionPhaseNet.embeddedModelBytes(index)), name: "model \(index + 1)")
        }
        var first = try single(0), second = try single(1)
        var both = try RepetitionPhaseNet.embedded()
        let fixture = try RepetitionPhaseFixture.load()
        var differentModels = 0
        for frame in fixture.sequences[0].range.prefix(200) {
            let (a, b, mean) = try fixture.row(frame).withUnsafeBufferPointer { row in
                (try first.process(row), try second.process(row), try both.process(row))
            }
            if a != b { differentModels += 1 }
            #expect(mean == RepetitionPhaseOutput(cos: (a.cos + b.cos) / Float(2), sin: (a.sin + b.sin) / Float(2),
                                                  repeating: (a.repeating + b.repeating) / Float(2)))
        }
        #expect(differentModels > 100, "the two models differ, so the average is tested")
    }

    @Test func noModelIsRefused() {
        do throws(RepetitionPhaseModelError) {
            _ = try RepetitionPhaseNet(modelPaths: [])
            Issue.record("a net without a model was made")
        } catch {
            #expect(error.description == "a repetition phase net needs at least one model")
        }
    }

    @Test func creditAndGapAreRoundedToFramesAsPythonRounds() {
        let fifteen = RepetitionPhaseCounter()
        #expect(fifteen.creditFrames == 8 && fifteen.gapFrames == 15, "round(7.5) is 8 in Python")
        let thirty = RepetitionPhaseCounter(frameRate: FrameRate(framesPerSecond: 30)!)
        #expect(thirty.creditFrames == 15)
        var parameters = RepetitionPhaseCounter.Parameters()
        parameters.creditSeconds = 0.5
        parameters.gapSeconds = 0.7
        let five = RepetitionPhaseCounter(frameRate: FrameRate(framesPerSecond: 5)!, parameters: parameters)
        #expect(five.creditFrames == 2, "round(2.5) is 2 in Python")
        #expect(five.gapFrames == 4, "round(3.5) is 4")
    }

    @Test func theRemainderHasTheSignOfTheDivisorAsInPython() {
        let cycle = Float(2 * Double.pi)
        #expect(RepetitionPhaseCounter.pythonRemainder(-1, cycle) == cycle - 1)
        #expect(RepetitionPhaseCounter.pythonRemainder(7, cycle) == fmodf(7, cycle))
        #expect(RepetitionPhaseCounter.pythonRemainder(0, cycle) == 0)
        #expect(RepetitionPhaseCounter.pythonRemainder(-cycle, cycle) == 0)
    }

    /// A steady cycle counts one repetition per cycle; a set whose p turns on late gets its
    /// earlier repetition credited from the ring, counted from exactly `creditFrames` back.
    @Test func aSteadyCycleCountsOncePerCycleAndCreditsTheStart() {
        var counter = RepetitionPhaseCounter()
        var events: [RepetitionPhaseEvent] = []
        let period = 30  // 2 s a repetition at 15 fps: 12° a frame
        for frame in 0..<300 {
            let phase = 2 * Double.pi * Double(frame) / Double(period)
            let repeating: Float = frame < 30 ? 0.5 : 0.9  // the net decides on frame 30
            events += counter.process(RepetitionPhaseOutput(cos: Float(cos(phase)), sin: Float(sin(phase)), repeating: repeating))
        }
        // Counting starts 8 frames (0.5 s) back, on frame 22 (264°): the first mark is 270°, passed
        // on frame 23 (276°) and credited on frame 30. Starting a frame later (276°) would put the
        // first mark a cycle on, at frame 53.
        #expect(events.first == RepetitionPhaseEvent(frame: 23, creditedFrame: 30))
        #expect(events.count == 10)
        #expect(zip(events, events.dropFirst()).allSatisfy { $1.frame - $0.frame == period && $1.frame == $1.creditedFrame })
    }
}
