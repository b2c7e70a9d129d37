import CRepetitionModel
import InferenceCore
import LinuxSystem

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
/// It may be an ensemble: several models of that interface run on the same window and their
/// outputs are averaged per component, summed in Float in model order and divided by the model
/// count in Float, exactly as numpy computes it in the Python reference
/// (training/counter/learned/phase_net.py); one model's output is its own. posewatch embeds two.
///
/// It keeps the window itself: one ring of rows shared by every model, starting all zero, as the
/// training and the Python evaluation zero-pad the start of a stream, so the first outputs are the
/// reference's. Per frame `process` appends the row, writes the window into each model's input
/// oldest → newest and runs the models; no allocation after `init`. Models are checked by their
/// interface only (any net of that shape can replace them:
/// `training/counter/learned/install_model.py`). Not thread-safe: one frame loop owns it.
public struct RepetitionPhaseNet: ~Copyable {
    /// Frames the net reads (3 s at 15 fps).
    public static let window = 45
    /// Numbers per frame: `RepetitionPhaseFeatures.rowLength`.
    public static let rowLength = RepetitionPhaseFeatures.rowLength
    /// The interface, for messages.
    static let interfaceDescription = "input float32[1, \(window), \(rowLength)] and output float32[1, 3]"

    /// One interpreter per model, in the order their outputs are summed.
    public let interpreters: [Interpreter]
    private let inputs: [UnsafeMutableBufferPointer<Float>]
    private let outputs: [UnsafeBufferPointer<Float>]
    /// The last `window` rows; `next` is the slot the next row goes to, so it also holds the oldest.
    private let ring: UnsafeMutableBufferPointer<Float>
    private var next = 0

    /// How many models are averaged.
    public var modelCount: Int { interpreters.count }

    /// Loads the model at `path` (tests, and a net to try before installing it).
    public init(modelPath: String, registry: KernelRegistry = KernelRegistry()) throws(RepetitionPhaseModelError) {
        try self.init(modelPaths: [modelPath], registry: registry)
    }

    /// Loads the models at `paths` (at least one), averaged in this order.
    public init(modelPaths paths: [String], registry: KernelRegistry = KernelRegistry()) throws(RepetitionPhaseModelError) {
        var models: [(model: Model, name: String)] = []
        for path in paths {
            do { models.append((try Model(contentsOf: path), "repetition phase model \(MessageExcerpt.path(path))")) } catch {
                throw RepetitionPhaseModelError("repetition phase model \(MessageExcerpt.path(path)): \(error)")
            }
        }
        try self.init(models: models, registry: registry)
    }

    /// Wraps a loaded model, refusing one whose interface is not the net's.
    public init(model: Model, name: String = "repetition phase model", registry: KernelRegistry = KernelRegistry()) throws(RepetitionPhaseModelError) {
        try self.init(models: [(model, name)], registry: registry)
    }

    /// Wraps loaded models (at least one; each with a name for messages), averaged in this order,
    /// refusing any whose interface is not the net's.
    public init(models: [(model: Model, name: String)], registry: KernelRegistry = KernelRegistry()) throws(RepetitionPhaseModelError) {
        guard !models.isEmpty else { throw RepetitionPhaseModelError("a repetition phase net needs at least one model") }
        var interpreters: [Interpreter] = []
        for (model, name) in models { interpreters.append(try Self.checkedInterpreter(model: model, name: name, registry: registry)) }
        self.interpreters = interpreters
        inputs = interpreters.map { interpreter in
            let raw = interpreter.inputBytes(0)
            return UnsafeMutableBufferPointer(start: raw.baseAddress!.assumingMemoryBound(to: Float.self), count: raw.count / 4)
        }
        outputs = interpreters.map { $0.outputFloats(0)! }
        ring = .allocate(capacity: Self.window * Self.rowLength)
        ring.initialize(repeating: 0)
    }

    /// An interpreter for `model` if its interface is the net's and it runs once.
    private static func checkedInterpreter(model: Model, name: String, registry: KernelRegistry) throws(RepetitionPhaseModelError) -> Interpreter {
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
        return interpreter
    }

    deinit {
        ring.deallocate()
    }

    /// Appends this frame's row (`rowLength` numbers, `RepetitionPhaseFeatures.update`'s), runs the
    /// models on the last `window` rows and returns their averaged output for this frame.
    ///
    /// Throws only when a model fails on this window's data (a damaged file: init ran it once).
    public mutating func process(_ row: UnsafeBufferPointer<Float>) throws(RepetitionPhaseModelError) -> RepetitionPhaseOutput {
        precondition(row.count == Self.rowLength, "a phase net row has \(Self.rowLength) numbers")
        let base = ring.baseAddress!, length = Self.rowLength
        (base + next * length).update(from: row.baseAddress!, count: length)
        next = (next + 1) % Self.window
        // Oldest row first: the rows from `next` to the end of the ring, then those before it. Each
        // input is rewritten every frame: the core may use input memory as scratch between invokes.
        let older = (Self.window - next) * length
        var cos: Float = 0, sin: Float = 0, repeating: Float = 0
        for index in 0..<interpreters.count {
            let input = inputs[index].baseAddress!
            input.update(from: base + next * length, count: older)
            (input + older).update(from: base, count: next * length)
            do {
                try interpreters[index].invoke()
            } catch {
                throw RepetitionPhaseModelError("repetition phase net failed on a window: \(error)")
            }
            let output = outputs[index]
            if index == 0 {
                (cos, sin, repeating) = (output[0], output[1], output[2])
            } else {
                cos += output[0]
                sin += output[1]
                repeating += output[2]
            }
        }
        // numpy's `total / np.float32(n)`: one model's output divided by 1 is itself.
        let count = Float(interpreters.count)
        return RepetitionPhaseOutput(cos: cos / count, sin: sin / count, repeating: repeating / count)
    }

    /// Empties the window (every row zero), as at the start of a stream.
    public mutating func reset() {
        ring.update(repeating: 0)
        next = 0
    }
}

extension RepetitionPhaseNet {
    /// How many models are built into this binary (averaged in index order).
    public static var embeddedModelCount: Int { Int(pw_embedded_repetition_phase_count()) }

    /// The bytes of built-in model `index` (a TFLite flatbuffer in read-only data, valid for the
    /// life of the process).
    public static func embeddedModelBytes(_ index: Int) -> UnsafeRawBufferPointer {
        precondition(index >= 0 && index < embeddedModelCount, "no built-in repetition phase model \(index)")
        return UnsafeRawBufferPointer(start: pw_embedded_repetition_phase_bytes(Int32(index)),
                                      count: pw_embedded_repetition_phase_size(Int32(index)))
    }

    /// The sha256 (lowercase hex) install_model.py recorded for built-in model `index`; differs from
    /// the digest of `embeddedModelBytes(index)` only in a stale developer build.
    public static func embeddedModelExpectedSHA256(_ index: Int) -> String {
        precondition(index >= 0 && index < embeddedModelCount, "no built-in repetition phase model \(index)")
        return String(cString: pw_embedded_repetition_phase_expected_sha256(Int32(index)))
    }

    /// The net built into this binary (every embedded model, averaged).
    public static func embedded(registry: KernelRegistry = KernelRegistry()) throws(RepetitionPhaseModelError) -> RepetitionPhaseNet {
        var models: [(model: Model, name: String)] = []
        for index in 0..<embeddedModelCount {
            let name = "built-in repetition phase net (model \(index + 1) of \(embeddedModelCount))"
            do { models.append((try Model(bytes: embeddedModelBytes(index)), name)) } catch {
                throw RepetitionPhaseModelError("\(name): \(error)")
            }
        }
        return try RepetitionPhaseNet(models: models, registry: registry)
    }
}
