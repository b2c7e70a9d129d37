import InferenceCore
import JSONFormat
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
    public var framesPerSecond: Double
    public var windowLength: Int
    public var stride: Int
    public var normalization: PoseNormalization
    /// Defaults the model suggests for the decision rules (the config may override them).
    public var noPersonMinimumRealFraction: Double
    public var lowConfidenceThreshold: Float

    /// Reads and checks the metadata JSON.
    public init(json text: String) throws(ClassifierModelError) {
        let json: JSONValue
        do { json = try JSONValue.parse(text) } catch { throw ClassifierModelError("metadata '\(Self.entryName)': \(error)") }
        func require<T>(_ value: T?, _ key: String) throws(ClassifierModelError) -> T {
            guard let value else { throw ClassifierModelError("metadata '\(Self.entryName)': missing or invalid '\(key)'") }
            return value
        }
        let version = try require(json["schema_version"]?.intValue, "schema_version")
        guard version == 1 else { throw ClassifierModelError("metadata '\(Self.entryName)': schema_version \(version) is newer than this posewatch understands (1); update posewatch") }
        let names = try require(json["labels"]?.arrayValue?.compactMap(\.stringValue), "labels")
        var labels: [ActionLabel] = []
        for name in names {
            guard let label = ActionLabel(rawValue: name) else {
                throw ClassifierModelError("metadata '\(Self.entryName)': unknown label '\(name)' (known: \(ActionLabel.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            labels.append(label)
        }
        guard !labels.isEmpty, Set(labels).count == labels.count else { throw ClassifierModelError("metadata '\(Self.entryName)': labels must be distinct and not empty") }
        self.labels = labels
        framesPerSecond = try require(json["frame_rate"]?.doubleValue, "frame_rate")
        windowLength = try require(json["window_length"]?.intValue, "window_length")
        stride = try require(json["stride"]?.intValue, "stride")
        guard framesPerSecond > 0 && framesPerSecond <= 120, windowLength > 0 && windowLength <= 1000, stride > 0 && stride <= windowLength else {
            throw ClassifierModelError("metadata '\(Self.entryName)': frame_rate, window_length or stride out of range")
        }
        let normalization = try require(json["normalization"], "normalization")
        let specification = try require(normalization["id"]?.stringValue, "normalization.id")
        guard specification == PoseNormalization.specification else {
            throw ClassifierModelError("metadata '\(Self.entryName)': normalisation '\(specification)' is not supported (this posewatch implements \(PoseNormalization.specification))")
        }
        let indices = try require(normalization["coco17_indices"]?.arrayValue?.compactMap(\.intValue), "normalization.coco17_indices")
        guard let parameters = PoseNormalization(
            scoreMinimum: Float(try require(normalization["score_min"]?.doubleValue, "normalization.score_min")),
            clip: Float(try require(normalization["clip"]?.doubleValue, "normalization.clip")),
            minimumScale: Float(try require(normalization["min_scale"]?.doubleValue, "normalization.min_scale")),
            fallbackDivisor: Float(try require(normalization["fallback_div"]?.doubleValue, "normalization.fallback_div")),
            jointIndices: indices) else {
            throw ClassifierModelError("metadata '\(Self.entryName)': normalisation joints must be COCO-17 indices including both shoulders and hips")
        }
        self.normalization = parameters
        noPersonMinimumRealFraction = json["decision_defaults"]?["no_person_min_real_fraction"]?.doubleValue ?? 0.6
        lowConfidenceThreshold = Float(json["decision_defaults"]?["low_confidence_threshold"]?.doubleValue ?? 0.6)
    }
}

/// posewatch's action classifier on the inference core: a window of poses in, one probability per
/// label out. Input float32[1, window, 3 × joints], output float32[1, labels] (softmax).
public struct ActionClassifier: ~Copyable {
    public let interpreter: Interpreter
    public let metadata: ClassifierMetadata
    private let input: UnsafeMutableBufferPointer<Float>
    private let output: UnsafeBufferPointer<Float>

    /// Loads the model at `path` and checks it against its metadata.
    public init(modelPath: String, registry: KernelRegistry = KernelRegistry()) throws(ClassifierModelError) {
        let model: Model
        do { model = try Model(contentsOf: modelPath) } catch { throw ClassifierModelError("classifier model \(modelPath): \(error)") }
        try self.init(model: model, name: modelPath, registry: registry)
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
        let inputInfo = interpreter.input(0), outputInfo = interpreter.output(0)
        let expectedInput = [1, metadata.windowLength, metadata.normalization.featuresPerSlot]
        guard interpreter.inputCount == 1, inputInfo.elementType == .float32, inputInfo.shape == expectedInput else {
            throw ClassifierModelError("\(name): input is \(inputInfo.elementType)\(inputInfo.shape), but its metadata implies float32\(expectedInput)")
        }
        guard outputInfo.elementType == .float32, outputInfo.elementCount == metadata.labels.count else {
            throw ClassifierModelError("\(name): output is \(outputInfo.elementType)\(outputInfo.shape), but its metadata lists \(metadata.labels.count) labels")
        }
        self.interpreter = interpreter
        self.metadata = metadata
        let raw = interpreter.inputBytes(0)
        input = UnsafeMutableBufferPointer(start: raw.baseAddress!.assumingMemoryBound(to: Float.self), count: raw.count / 4)
        output = interpreter.outputFloats(0)!
    }

    /// Normalises the window into the model's input, runs the model and returns its probabilities
    /// in `metadata.labels` order. The buffer is valid until the next call.
    public func classify(_ window: PoseWindow) -> UnsafeBufferPointer<Float> {
        metadata.normalization.normalize(window, into: input)
        do {
            try interpreter.invoke()
        } catch {
            preconditionFailure("classifier invoke failed after a successful prepare: \(error)")
        }
        return output
    }
}

extension ActionClassifier {
    /// The classifier built into this binary (training/README.md makes it).
    public static func embedded(registry: KernelRegistry = KernelRegistry()) throws(ClassifierModelError) -> ActionClassifier {
        let bytes = UnsafeRawBufferPointer(start: pw_embedded_classifier_bytes(), count: pw_embedded_classifier_size())
        let model: Model
        do { model = try Model(bytes: bytes) } catch { throw ClassifierModelError("built-in classifier: \(error)") }
        return try ActionClassifier(model: model, name: "built-in classifier", registry: registry)
    }
}
