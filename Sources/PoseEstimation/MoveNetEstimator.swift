import Capture
import InferenceCore
import LinuxSystem

/// Why a pose model cannot be used.
public struct PoseModelError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// What the pose stage saw in one frame.
public struct PoseEstimate: Sendable {
    /// The person, or nil when the presence rule says nobody is there.
    public var pose: Pose?
    /// MoveNet's 17 keypoints as they came out (always present), in frame pixels.
    public var keypoints: Pose
    /// The part of the frame the model looked at.
    public var region: CropRegion
    /// When the frame was captured.
    public var timestamp: MonotonicInstant
    /// Time spent in `invoke()`, nanoseconds.
    public var inferenceNanoseconds: Int64
}

/// MoveNet SinglePose on posewatch's inference core: converts each frame straight into the model's
/// uint8 input (letterbox of the whole frame, or the crop around the previous pose), runs the
/// model, maps the keypoints back to frame pixels and applies the presence rule.
///
/// Two steps per frame, so the camera buffer goes back to the driver before inference:
/// `loadInput(from:)` inside the capture closure, then `estimate()` after it.
public struct MoveNetEstimator: ~Copyable {
    /// The interpreter running the pose model (its arena is allocated once, at init).
    public let interpreter: Interpreter
    /// The model's square input side (192 for Lightning).
    public let inputSide: Int
    /// The model as messages name it ("pose model /var/lib/posewatch/movenet….tflite").
    public let name: String
    /// Whether the next frame's region comes from the previous pose (MoveNet's video cropping).
    public var smartCropping = true
    public var cropPolicy = CropPolicy()
    public var presenceRule = PersonPresenceRule()

    private var converter: FrameConverter
    private let input: UnsafeMutablePointer<UInt8>
    private var nextRegion: CropRegion?
    private var pendingRegion = CropRegion(minX: 0, minY: 0, side: 1)
    private var pendingTimestamp = MonotonicInstant.zero
    private var pendingFrameWidth = 0
    private var pendingFrameHeight = 0

    /// Loads a MoveNet SinglePose model and checks its interface: input uint8[1, N, N, 3], output
    /// float32[1, 1, 17, 3].
    public init(modelPath: String, registry: KernelRegistry = KernelRegistry()) throws(PoseModelError) {
        let interpreter: Interpreter
        do {
            interpreter = try Interpreter(model: try Model(contentsOf: modelPath), registry: registry)
        } catch {
            throw PoseModelError("pose model \(modelPath): \(error)")
        }
        try self.init(interpreter: interpreter, name: "pose model \(modelPath)")
    }

    /// Wraps an interpreter already made for a MoveNet model.
    public init(interpreter: Interpreter, name: String = "pose model") throws(PoseModelError) {
        guard interpreter.inputCount == 1, interpreter.outputCount >= 1 else {
            throw PoseModelError("\(name): expected 1 input and 1 output, found \(interpreter.inputCount) and \(interpreter.outputCount); is this MoveNet SinglePose?")
        }
        let input = interpreter.input(0), output = interpreter.output(0)
        guard input.elementType == .uint8, input.shape.count == 4, input.shape[0] == 1, input.shape[3] == 3,
              input.shape[1] == input.shape[2], input.shape[1] > 0 else {
            throw PoseModelError("\(name): input is \(input.elementType)\(input.shape), expected uint8[1, N, N, 3]; is this MoveNet SinglePose int8?")
        }
        guard output.elementType == .float32, output.elementCount == Joint.count * 3 else {
            throw PoseModelError("\(name): output is \(output.elementType)\(output.shape), expected float32[1, 1, 17, 3]")
        }
        // A file can pass every check above and still fail when it runs (a constant changed so an
        // index leaves its tensor): run it once on a mid-grey frame so such a file is refused here,
        // at load, with the model named, and `doctor` does not call it ok.
        interpreter.inputBytes(0).initializeMemory(as: UInt8.self, repeating: 128)
        do {
            try interpreter.invoke()
        } catch {
            throw PoseModelError("\(name): loads but fails on a test frame (\(error)): the file is damaged or not MoveNet")
        }
        self.interpreter = interpreter
        self.name = name
        self.inputSide = input.shape[1]
        self.converter = FrameConverter(tensorWidth: input.shape[1], tensorHeight: input.shape[1])
        self.input = interpreter.inputBytes(0).baseAddress!.assumingMemoryBound(to: UInt8.self)
    }

    /// Converts `frame` into the model input over this frame's region. Returns false for a frame
    /// that does not decode (broken JPEG): the caller reports it as broken and skips `estimate()`.
    public mutating func loadInput(from frame: borrowing Frame) -> Bool {
        let width = frame.layout.width, height = frame.layout.height
        if width != pendingFrameWidth || height != pendingFrameHeight { nextRegion = nil }  // new camera mode
        let region = (smartCropping ? nextRegion : nil) ?? CropRegion.wholeFrame(width: width, height: height)
        let rectangle = FrameRectangle(x: Double(region.minX), y: Double(region.minY),
                                       width: Double(region.side), height: Double(region.side))
        guard converter.convert(frame, region: .crop(rectangle), into: input) != nil else { return false }
        pendingRegion = region
        pendingTimestamp = frame.timestamp
        pendingFrameWidth = width
        pendingFrameHeight = height
        return true
    }

    /// Runs the model on the loaded input and returns what it saw. The next frame's region is
    /// chosen here: around this pose, or the whole frame when nobody (or no torso) was found.
    public mutating func estimate() throws(PoseModelError) -> PoseEstimate {
        var none = NoServicePoint()
        return try estimate(servicing: &none)
    }

    /// `estimate()` with `service` called between the model's operators (the frame loop keeps its
    /// LED timing and watchdog there while a slow inference runs). `inferenceNanoseconds` includes
    /// the time spent in it.
    ///
    /// Throws when the model fails on this frame's data (an operator's computed index or divisor
    /// out of range: only a damaged file does that, since Prepare checked everything constant and
    /// init ran the model once). The frame is then lost; the caller decides what that means.
    public mutating func estimate<Service: InvokeServicePoint & ~Copyable>(servicing service: inout Service) throws(PoseModelError) -> PoseEstimate {
        let start = MonotonicInstant.now()
        do {
            try interpreter.invoke(servicing: &service)
        } catch {
            throw PoseModelError("\(name) failed on a frame: \(error)")
        }
        let elapsed = (MonotonicInstant.now() - start).nanoseconds
        let keypoints = MoveNetOutput.decode(interpreter.outputFloats(0)!, region: pendingRegion)
        let person = presenceRule.isPerson(keypoints) ? keypoints : nil
        nextRegion = person.map { cropPolicy.nextRegion(after: $0, frameWidth: pendingFrameWidth, frameHeight: pendingFrameHeight) }
        return PoseEstimate(pose: person, keypoints: keypoints, region: pendingRegion,
                            timestamp: pendingTimestamp, inferenceNanoseconds: elapsed)
    }

    /// Forgets the previous pose: the next frame is looked at whole.
    public mutating func resetCropping() { nextRegion = nil }
}

/// The service point that does nothing (`estimate()` without one).
private struct NoServicePoint: InvokeServicePoint {
    mutating func operatorFinished(_ index: Int) {}
}
