import LinuxSystem
import InferenceCore
import JSONFormat
import LinuxSystem
import PoseEstimation
import CActionModel

/// Why an action classifier model cannot be used.
public struct ClassifierModelError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// What the classifier model says about itself in its `posewatch.classifier` metadata entry
/// (training/README.md): labels, the frame rate and window it was trained on, its normalisation.
public struct ClassifierMetadata: Sendable, Equatable {
    /// The metadata entry's name inside the TFLite file.
    public static let entryName = "posewatch.classifier"

    public var labels: [ActionLabel]
    /// The rate the window was trained at (checked: a `FrameRate`).
    public var frameRate: FrameRate
    /// `frameRate` in frames per second.
    public var framesPerSecond: Double { frameRate.framesPerSecond }
    public var windowLength: Int
    public var stride: Int
    public var normalization: PoseNormalization
    /// Defaults the model suggests for the decision rules (the config may override them).
    public var noPersonMinimumRealFraction: Double
    public var lowConfidenceThreshold: Float
    /// A decision-history model (schema_version 2, training/README.md): how many previous
    /// decisions it sees and the length of one decision's entry; nil for a window-only model.
    public var history: HistoryShape?

    /// The `history` entry: the model's second input holds the entries of the last `length`
    /// decisions (`length × features` floats, oldest row first) and its second output is this
    /// window's entry.
    public struct HistoryShape: Sendable, Equatable {
        public var length: Int
        public var features: Int
    }

    /// Metadata versions this posewatch reads: 1 (window only), 2 (adds `history`).
    public static let supportedSchemaVersions = 1...2

    /// Reads and checks the metadata JSON.
    public init(json text: String) throws(ClassifierModelError) {
        let json: JSONValue
        do { json = try JSONValue.parse(text) } catch { throw ClassifierModelError("metadata '\(Self.entryName)': \(error)") }
        func require<T>(_ value: T?, _ key: String) throws(ClassifierModelError) -> T {
            guard let value else { throw ClassifierModelError("metadata '\(Self.entryName)': missing or invalid '\(key)'") }
            return value
        }
        let version = try require(json["schema_version"]?.intValue, "schema_version")
        guard Self.supportedSchemaVersions.contains(version) else { throw ClassifierModelError("metadata '\(Self.entryName)': schema_version \(version) is not one this posewatch understands (\(Self.supportedSchemaVersions.lowerBound)-\(Self.supportedSchemaVersions.upperBound)); update posewatch") }
        let names = try require(json["labels"]?.arrayValue?.compactMap(\.stringValue), "labels")
        var labels: [ActionLabel] = []
        for name in names {
            guard let label = ActionLabel(rawValue: name) else {
                throw ClassifierModelError("metadata '\(Self.entryName)': unknown label '\(MessageExcerpt.plain(name))' (known: \(ActionLabel.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            labels.append(label)
        }
        guard !labels.isEmpty, Set(labels).count == labels.count else { throw ClassifierModelError("metadata '\(Self.entryName)': labels must be distinct and not empty") }
        self.labels = labels
        let framesPerSecond = try require(json["frame_rate"]?.doubleValue, "frame_rate")
        guard let frameRate = FrameRate(framesPerSecond: framesPerSecond) else {
            throw ClassifierModelError("metadata '\(Self.entryName)': frame_rate must be from \(FrameRate.supportedDescription) frames per second, not \(framesPerSecond)")
        }
        self.frameRate = frameRate
        windowLength = try require(json["window_length"]?.intValue, "window_length")
        stride = try require(json["stride"]?.intValue, "stride")
        guard windowLength > 0 && windowLength <= 1000, stride > 0 && stride <= windowLength else {
            throw ClassifierModelError("metadata '\(Self.entryName)': window_length or stride out of range")
        }
        let normalization = try require(json["normalization"], "normalization")
        let specification = try require(normalization["id"]?.stringValue, "normalization.id")
        guard specification == PoseNormalization.specification else {
            throw ClassifierModelError("metadata '\(Self.entryName)': normalisation '\(MessageExcerpt.plain(specification))' is not supported (this posewatch implements \(PoseNormalization.specification))")
        }
        let indices = try require(normalization["coco17_indices"]?.arrayValue?.compactMap(\.intValue), "normalization.coco17_indices")
        /// A normalisation number as a Float: finite (1e300 would become infinity) and, where
        /// the features divide or clip by it, above zero: each gets its own message.
        func number(_ key: String, positive: Bool) throws(ClassifierModelError) -> Float {
            let value = try require(normalization[key]?.doubleValue, "normalization.\(key)")
            guard Float(value).isFinite, !positive || Float(value) > 0 else {
                throw ClassifierModelError("metadata '\(Self.entryName)': normalization.\(key) must be \(positive ? "a finite number above 0" : "a finite number"), not \(value): the model's metadata is damaged; re-export the model or use the built-in one")
            }
            return Float(value)
        }
        let scoreMinimum = try number("score_min", positive: false)
        let clip = try number("clip", positive: true)
        let minimumScale = try number("min_scale", positive: false)
        let fallbackDivisor = try number("fallback_div", positive: true)
        guard let parameters = PoseNormalization(
            scoreMinimum: scoreMinimum, clip: clip, minimumScale: minimumScale, fallbackDivisor: fallbackDivisor,
            jointIndices: indices) else {
            throw ClassifierModelError("metadata '\(Self.entryName)': normalisation joints must be COCO-17 indices including both shoulders and hips")
        }
        self.normalization = parameters
        noPersonMinimumRealFraction = json["decision_defaults"]?["no_person_min_real_fraction"]?.doubleValue ?? 0.6
        lowConfidenceThreshold = Float(json["decision_defaults"]?["low_confidence_threshold"]?.doubleValue ?? 0.6)
        if version >= 2 {
            let entry = try require(json["history"], "history")
            let length = try require(entry["length"]?.intValue, "history.length")
            let features = try require(entry["features"]?.intValue, "history.features")
            guard (1...64).contains(length), (1...4096).contains(features) else {
                throw ClassifierModelError("metadata '\(Self.entryName)': history length \(length) or features \(features) out of range")
            }
            history = HistoryShape(length: length, features: features)
        } else {
            history = nil
        }
    }
}

/// posewatch's action classifier on the inference core: a window of poses in, one probability per
/// label out. Input float32[1, window, 3 × joints], output float32[1, labels] (softmax).
///
/// A decision-history model (metadata `history`, training/README.md) also takes the entries of
/// the previous decisions, float32[1, K, F], and returns this window's entry, float32[1, F]. The
/// classifier keeps them in a preallocated ring (K × F floats, oldest row first): each `classify`
/// hands the ring to the model, then drops the oldest row and appends the new entry. Whoever
/// decides must call `clearHistory()` when a decision is not a classified window (starting up, no
/// person): the history then starts again from empty rows (all zero, flag 0), as in training.
public struct ActionClassifier: ~Copyable {
    public let interpreter: Interpreter
    public let metadata: ClassifierMetadata
    private let input: UnsafeMutableBufferPointer<Float>
    private let output: UnsafeBufferPointer<Float>
    /// History models only (else empty): the model's history input, its entry output, the ring.
    private let historyInput: UnsafeMutableBufferPointer<Float>
    private let entryOutput: UnsafeBufferPointer<Float>
    private let ring: UnsafeMutableBufferPointer<Float>

    /// Loads the model at `path` and checks it against its metadata.
    public init(modelPath: String, registry: KernelRegistry = KernelRegistry()) throws(ClassifierModelError) {
        let model: Model
        do { model = try Model(contentsOf: modelPath) } catch { throw ClassifierModelError("classifier model \(MessageExcerpt.path(modelPath)): \(error)") }
        try self.init(model: model, name: MessageExcerpt.path(modelPath), registry: registry)
    }

    /// Wraps a loaded model (tests, embedded models).
    public init(model: Model, name: String = "classifier model", registry: KernelRegistry = KernelRegistry()) throws(ClassifierModelError) {
        guard let text = model.metadataString(named: ClassifierMetadata.entryName) else {
            throw ClassifierModelError("\(name): no '\(ClassifierMetadata.entryName)' metadata entry; is this a posewatch action classifier?")
        }
        let metadata: ClassifierMetadata
        do { metadata = try ClassifierMetadata(json: text) } catch { throw ClassifierModelError("\(name): \(error.description)") }
        let interpreter: Interpreter
        do { interpreter = try Interpreter(model: model, registry: registry) } catch { throw ClassifierModelError("\(name): \(error)") }
        // inputs and outputs are found by shape: the converter does not keep the Keras order
        let expectedInput = [1, metadata.windowLength, metadata.normalization.featuresPerSlot]
        let expectedHistory = metadata.history.map { [1, $0.length, $0.features] }
        let expectedCount = metadata.history == nil ? 1 : 2
        func describe(_ infos: [TensorInfo]) -> String { infos.map { "\($0.elementType)\($0.shape)" }.joined(separator: ", ") }
        let inputs = (0..<interpreter.inputCount).map { interpreter.input($0) }
        let outputs = (0..<interpreter.outputCount).map { interpreter.output($0) }
        let implied = "float32\(expectedInput)" + (expectedHistory.map { " and history float32\($0)" } ?? "")
        let poses = inputs.firstIndex(where: { $0.elementType == .float32 && $0.shape == expectedInput })
        let historyIndex = expectedHistory.flatMap { shape in
            inputs.indices.first { $0 != poses && inputs[$0].elementType == .float32 && inputs[$0].shape == shape }
        }
        guard inputs.count == expectedCount, let poses, expectedHistory == nil || historyIndex != nil else {
            throw ClassifierModelError("\(name): inputs are \(describe(inputs)), but its metadata implies \(implied)")
        }
        let labels = metadata.labels.count, features = metadata.history?.features ?? 0
        let probabilities = outputs.firstIndex(where: { $0.elementType == .float32 && $0.elementCount == labels })
        let entryIndex = features == 0 ? nil : outputs.indices.first {
            $0 != probabilities && outputs[$0].elementType == .float32 && outputs[$0].elementCount == features
        }
        guard outputs.count == expectedCount, let probabilities, features == 0 || entryIndex != nil else {
            throw ClassifierModelError("\(name): outputs are \(describe(outputs)), but its metadata implies \(labels) probabilities"
                                       + (features > 0 ? " and a \(features)-value history entry" : ""))
        }
        // A file can pass every check above and still fail when it runs (a constant changed so an
        // index leaves its tensor): run it once on an empty window so such a file is refused at
        // load, with the model named, and `doctor` does not call it ok.
        for index in 0..<interpreter.inputCount { interpreter.inputBytes(index).initializeMemory(as: UInt8.self, repeating: 0) }
        do {
            try interpreter.invoke()
        } catch {
            throw ClassifierModelError("\(name): loads but fails on a test window (\(error)): the file is damaged")
        }
        self.interpreter = interpreter
        self.metadata = metadata
        let raw = interpreter.inputBytes(poses)
        input = UnsafeMutableBufferPointer(start: raw.baseAddress!.assumingMemoryBound(to: Float.self), count: raw.count / 4)
        output = interpreter.outputFloats(probabilities)!
        if let shape = metadata.history, let historyIndex, let entryIndex {
            // distinct from the poses input and the probabilities, even if a shape coincides
            let bytes = interpreter.inputBytes(historyIndex)
            historyInput = UnsafeMutableBufferPointer(start: bytes.baseAddress!.assumingMemoryBound(to: Float.self), count: bytes.count / 4)
            entryOutput = interpreter.outputFloats(entryIndex)!
            ring = .allocate(capacity: shape.length * shape.features)
            ring.initialize(repeating: 0)
        } else {
            historyInput = UnsafeMutableBufferPointer(start: nil, count: 0)
            entryOutput = UnsafeBufferPointer(start: nil, count: 0)
            ring = UnsafeMutableBufferPointer(start: nil, count: 0)
        }
    }

    deinit {
        ring.deallocate()
    }

    /// Normalises the window into the model's input, runs the model and returns its probabilities
    /// in `metadata.labels` order. The buffer is valid until the next call. A history model also
    /// sees the ring and appends this window's entry to it.
    ///
    /// Throws when the model fails on this window's data (only a damaged file does: Prepare
    /// checked everything constant and init ran the model once); the history is then unchanged.
    public func classify(_ window: PoseWindow) throws(ClassifierModelError) -> UnsafeBufferPointer<Float> {
        metadata.normalization.normalize(window, into: input)
        if !ring.isEmpty {
            // the input tensor is rewritten each time: the core may reuse input memory between invokes
            _ = historyInput.update(fromContentsOf: ring)
        }
        do {
            try interpreter.invoke()
        } catch {
            throw ClassifierModelError("classifier failed on a window: \(error)")
        }
        if !ring.isEmpty {
            // oldest row out, the new entry in as the last row (in place, no allocation)
            let features = entryOutput.count
            let base = ring.baseAddress!
            base.update(from: base + features, count: ring.count - features)
            (base + ring.count - features).update(from: entryOutput.baseAddress!, count: features)
        }
        return output
    }

    /// Forgets the previous decisions (history models; nothing to do otherwise): every row zero,
    /// so the model sees no earlier decision (flag 0), as at start.
    public func clearHistory() {
        if !ring.isEmpty { ring.update(repeating: 0) }
    }

    /// The entry the last `classify` appended (history models; empty otherwise).
    public var lastEntry: UnsafeBufferPointer<Float> { entryOutput }

    /// The ring as the next `classify` will hand it to the model (oldest row first).
    public var historyRows: UnsafeBufferPointer<Float> { UnsafeBufferPointer(ring) }
}

extension ActionClassifier {
    /// The bytes of the classifier built into this binary (a TFLite flatbuffer in read-only data,
    /// valid for the life of the process).
    public static var embeddedModelBytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: pw_embedded_classifier_bytes(), count: pw_embedded_classifier_size())
    }

    /// The sha256 (lowercase hex) the recipe recorded for the built-in model when it wrote it;
    /// differs from the digest of `embeddedModelBytes` only in a stale developer build.
    public static var embeddedModelExpectedSHA256: String {
        String(cString: pw_embedded_classifier_expected_sha256())
    }

    /// The classifier built into this binary (training/README.md makes it).
    public static func embedded(registry: KernelRegistry = KernelRegistry()) throws(ClassifierModelError) -> ActionClassifier {
        let bytes = embeddedModelBytes
        let model: Model
        do { model = try Model(bytes: bytes) } catch { throw ClassifierModelError("built-in classifier: \(error)") }
        return try ActionClassifier(model: model, name: "built-in classifier", registry: registry)
    }
}
