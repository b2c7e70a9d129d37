import CRepetitionModel
import InferenceCore

/// Why a repetition-phase model cannot be used.
public struct RepetitionPhaseModelError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// The net's answer for one frame: where in a repetition the person is, and whether they repeat.
public struct RepetitionPhaseOutput: Equatable, Sendable {
    /// cos φ of the repetition phase φ (0 at rest, π at the far pose).
    public var cos: Float
    /// sin φ. The vector (cos, sin) is shorter where the net is unsure of the phase.
    public var sin: Float
    /// p(repeating): the probability that the person is in a set of repetitions.
    public var repeating: Float

    public init(cos: Float, sin: Float, repeating: Float) {
        self.cos = cos
        self.sin = sin
        self.repeating = repeating
    }
}

/// The learned repetition-phase net (training/counter/learned/, the "phase net") on posewatch's
/// inference core: a small 1-D CNN that reads the last `window` frames of
/// `RepetitionPhaseFeatures` rows and returns, per frame, the repetition phase as (cos φ, sin φ)
/// and p(repeating). Input float32[1, 45, 27] (oldest row first), output float32[1, 3].
///
/// It keeps the window itself: a ring of rows that starts all zero, as the training and the Python
/// evaluation zero-pad the start of a stream, so the first outputs are the reference's. Per frame
/// `process` appends the row, writes the window into the model's input oldest → newest and runs
/// the model; no allocation after `init`. The model is checked by its interface only (any net of
/// that shape can replace it: `training/counter/learned/install_model.py`). Not thread-safe: one
/// frame loop owns it.
public struct RepetitionPhaseNet: ~Copyable {
    /// Frames the net reads (3 s at 15 fps).
    public static let window = 45
    /// Numbers per frame: `RepetitionPhaseFeatures.rowLength`.
    public static let rowLength = RepetitionPhaseFeatures.rowLength
    /// The interface, for messages.
    static let interfaceDescription = "input float32[1, \(window), \(rowLength)] and output float32[1, 3]"

    public let interpreter: Interpreter
    private let input: UnsafeMutableBufferPointer<Float>
    private let output: UnsafeBufferPointer<Float>
    /// The last `window` rows; `next` is the slot the next row goes to, so it also holds the oldest.
    private let ring: UnsafeMutableBufferPointer<Float>
    private var next = 0

    /// Loads the model at `path` (tests, a model given in the configuration).
    public init(modelPath: String, registry: KernelRegistry = KernelRegistry()) throws(RepetitionPhaseModelError) {
        let model: Model
        do { model = try Model(contentsOf: modelPath) } catch { throw RepetitionPhaseModelError("repetition phase model \(modelPath): \(error)") }
        try self.init(model: model, name: "repetition phase model \(modelPath)", registry: registry)
    }

    /// Wraps a loaded model, refusing one whose interface is not the net's.
    public init(model: Model, name: String = "repetition phase model", registry: KernelRegistry = KernelRegistry()) throws(RepetitionPhaseModelError) {
        let interpreter: Interpreter
        do { interpreter = try Interpreter(model: model, registry: registry) } catch { throw RepetitionPhaseModelError("\(name): \(error)") }
        let inputs = (0..<interpreter.inputCount).map { interpreter.input($0) }
        let outputs = (0..<interpreter.outputCount).map { interpreter.output($0) }
        guard inputs.count == 1, inputs[0].elementType == .float32, inputs[0].shape == [1, Self.window, Self.rowLength],
              outputs.count == 1, outputs[0].elementType == .float32, outputs[0].shape == [1, 3] else {
            func describe(_ infos: [TensorInfo]) -> String { infos.map { "\($0.elementType)\($0.shape)" }.joined(separator: ", ") }
            throw RepetitionPhaseModelError("\(name): inputs \(describe(inputs)) and outputs \(describe(outputs)), "
                                            + "but a repetition phase net has \(Self.interfaceDescription)")
        }
        // A file can pass the checks above and still fail when it runs (a damaged constant): run it
        // once on an empty window so it is refused here, with its name, not on the first frame.
        interpreter.inputBytes(0).initializeMemory(as: UInt8.self, repeating: 0)
        do {
            try interpreter.invoke()
        } catch {
            throw RepetitionPhaseModelError("\(name): loads but fails on a test window (\(error)): the file is damaged")
        }
        self.interpreter = interpreter
        let raw = interpreter.inputBytes(0)
        input = UnsafeMutableBufferPointer(start: raw.baseAddress!.assumingMemoryBound(to: Float.self), count: raw.count / 4)
        output = interpreter.outputFloats(0)!
        ring = .allocate(capacity: Self.window * Self.rowLength)
        ring.initialize(repeating: 0)
    }

    deinit {
        ring.deallocate()
    }

    /// Appends this frame's row (`rowLength` numbers, `RepetitionPhaseFeatures.update`'s), runs the
    /// net on the last `window` rows and returns its output for this frame.
    ///
    /// Throws only when the model fails on this window's data (a damaged file: init ran it once).
    public mutating func process(_ row: UnsafeBufferPointer<Float>) throws(RepetitionPhaseModelError) -> RepetitionPhaseOutput {
        precondition(row.count == Self.rowLength, "a phase net row has \(Self.rowLength) numbers")
        let base = ring.baseAddress!, length = Self.rowLength
        (base + next * length).update(from: row.baseAddress!, count: length)
        next = (next + 1) % Self.window
        // Oldest row first: the rows from `next` to the end of the ring, then those before it. The
        // input is rewritten every frame: the core may use input memory as scratch between invokes.
        let older = (Self.window - next) * length
        input.baseAddress!.update(from: base + next * length, count: older)
        (input.baseAddress! + older).update(from: base, count: next * length)
        do {
            try interpreter.invoke()
        } catch {
            throw RepetitionPhaseModelError("repetition phase net failed on a window: \(error)")
        }
        return RepetitionPhaseOutput(cos: output[0], sin: output[1], repeating: output[2])
    }

    /// Empties the window (every row zero), as at the start of a stream.
    public mutating func reset() {
        ring.update(repeating: 0)
        next = 0
    }
}

extension RepetitionPhaseNet {
    /// The bytes of the net built into this binary (a TFLite flatbuffer in read-only data, valid for
    /// the life of the process).
    public static var embeddedModelBytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: pw_embedded_repetition_phase_bytes(), count: pw_embedded_repetition_phase_size())
    }

    /// The sha256 (lowercase hex) install_model.py recorded for the built-in net; differs from the
    /// digest of `embeddedModelBytes` only in a stale developer build.
    public static var embeddedModelExpectedSHA256: String {
        String(cString: pw_embedded_repetition_phase_expected_sha256())
    }

    /// The net built into this binary.
    public static func embedded(registry: KernelRegistry = KernelRegistry()) throws(RepetitionPhaseModelError) -> RepetitionPhaseNet {
        let model: Model
        do { model = try Model(bytes: embeddedModelBytes) } catch { throw RepetitionPhaseModelError("built-in repetition phase net: \(error)") }
        return try RepetitionPhaseNet(model: model, name: "built-in repetition phase net", registry: registry)
    }
}
