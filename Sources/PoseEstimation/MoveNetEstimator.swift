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
    /// MoveNet's 17 keypoints as they came out (always present), in upright frame pixels (`orientation`).
    public var keypoints: Pose
    /// The part of the frame the model looked at.
    public var region: CropRegion
    /// When the frame was captured.
    public var timestamp: MonotonicInstant
    /// Time spent in `invoke()`, nanoseconds (both invokes on a frame that was also searched).
    public var inferenceNanoseconds: Int64
    /// People in view (the watched person and the others a search found; 0 or 1 with nobody else).
    public var peopleInView: Int = 0
    /// Changes whenever the watch moves to another person or starts anew (`PeopleInView`).
    public var watchIdentifier: Int = 0
    /// Whether the watch moved to another person on this frame (someone more prominent at the
    /// start, or someone exercising while the watched person stood still).
    public var watchMoved = false
    /// The mean brightness (0…255) of the picture the model looked at (the frame or the crop).
    public var brightness: Float = 0
}

/// MoveNet SinglePose on posewatch's inference core: converts each frame straight into the model's
/// uint8 input (letterbox of the whole frame, or the crop around the previous pose), runs the
/// model, maps the keypoints back to frame pixels and applies the presence rule.
///
/// With a second person in view it watches one (`PeopleInView`): every few frames a second invoke
/// searches the whole frame with the watched person blacked out, and the people it finds are
/// blacked out of the watched person's crop, so MoveNet there sees only the watched person.
///
/// Two steps per frame, so the camera buffer goes back to the driver before inference:
/// `loadInput(from:)` inside the capture closure (it also prepares a search input when one is
/// due), then `estimate()` after it.
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
    /// Who is in view and whom the pose stage watches.
    /// (Set in init after every check that can throw: Swift 6.0's compiler crashes on a `~Copyable`
    /// property with a default value in a throwing init.)
    public private(set) var people: PeopleInView
    /// Whether other people are searched for and blacked out (false: MoveNet alone decides whom it
    /// sees, as before people were told apart; for comparison runs).
    public var searchesForPeople = true
    /// Whether a picture with noisy colour (a dim room's camera gain) is smoothed before the model
    /// (`ChromaSmoothing`; a clean picture is never changed).
    public var smoothsNoisyColour = true
    /// How each frame is turned upright before the model sees it (`camera.rotation`, `camera.flip`):
    /// poses, regions and people are in the upright picture's pixels. A change forgets the previous
    /// crop and the people in view, as a new camera mode does.
    public var orientation: FrameOrientation {
        get { converter.orientation }
        set { if newValue != converter.orientation { converter.orientation = newValue; resetCropping() } }
    }

    private var converter: OrientedFrameConverter
    private let input: UnsafeMutablePointer<UInt8>
    /// The search's input, filled in `loadInput` (the frame is gone by `estimate`).
    private let searchInput: UnsafeMutablePointer<UInt8>
    private var searchPending = false
    private var pendingBrightness: Float = 0
    private var denoiser: ChromaSmoothing
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
            throw PoseModelError("pose model \(MessageExcerpt.path(modelPath)): \(error)")
        }
        try self.init(interpreter: interpreter, name: "pose model \(MessageExcerpt.path(modelPath))")
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
        self.converter = OrientedFrameConverter(side: input.shape[1])
        self.input = interpreter.inputBytes(0).baseAddress!.assumingMemoryBound(to: UInt8.self)
        self.searchInput = .allocate(capacity: input.shape[1] * input.shape[1] * 3)
        self.denoiser = ChromaSmoothing(side: input.shape[1])
        self.people = PeopleInView()
    }

    deinit { searchInput.deallocate() }

    /// Converts `frame` into the model input over this frame's region. Returns false for a frame
    /// that does not decode (broken JPEG): the caller reports it as broken and skips `estimate()`.
    public mutating func loadInput(from frame: borrowing Frame) -> Bool {
        let (width, height) = converter.orientation.uprightSize(width: frame.layout.width, height: frame.layout.height)
        if width != pendingFrameWidth || height != pendingFrameHeight {  // new camera mode
            nextRegion = nil
            people.reset()
        }
        let region = (smartCropping ? nextRegion : nil) ?? CropRegion.wholeFrame(width: width, height: height)
        guard converter.convert(frame, uprightRegion: region.rectangle, into: input) else { return false }
        pendingBrightness = Self.meanByte(input, count: inputSide * inputSide * 3)
        if smoothsNoisyColour { denoiser.apply(to: input) }
        searchPending = false
        if searchesForPeople {
            for slot in 0..<PeopleInView.slotCount {
                if let other = people.otherPerson(in: slot), let mask = people.maskRectangle(forOther: other.box) {
                    blackOut(mask, in: input, region: region)
                }
            }
            if people.wantsSearch(), let watched = people.watched {
                let searchRegion = CropRegion.wholeFrame(width: width, height: height)
                guard converter.convert(frame, uprightRegion: searchRegion.rectangle, into: searchInput) else { return false }
                if smoothsNoisyColour { denoiser.apply(to: searchInput) }
                blackOut(people.grown(watched.box), in: searchInput, region: searchRegion)
                searchPending = true
            }
        }
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
        try invokeModel(servicing: &service)
        let keypoints = MoveNetOutput.decode(interpreter.outputFloats(0)!, region: pendingRegion)
        var person = presenceRule.isPerson(keypoints) ? keypoints : nil
        let time = pendingTimestamp.seconds
        var moved = false
        if searchesForPeople {
            var box = person?.boundingBox(minimumScore: cropPolicy.minimumKeypointScore)
            // Someone else despite the blacked-out others (they moved since the last search).
            if let seen = box, !people.isWatched(seen) {
                person = nil
                box = nil
            }
            people.watchedSeen(box, at: time)
            if searchPending {
                searchPending = false
                interpreter.inputBytes(0).baseAddress!.copyMemory(from: searchInput, byteCount: inputSide * inputSide * 3)
                try invokeModel(servicing: &service)
                let searchRegion = CropRegion.wholeFrame(width: pendingFrameWidth, height: pendingFrameHeight)
                let found = MoveNetOutput.decode(interpreter.outputFloats(0)!, region: searchRegion)
                moved = people.searched(found: presenceRule.isPerson(found) ? found.boundingBox(minimumScore: cropPolicy.minimumKeypointScore) : nil,
                                        at: time)
                if moved { person = nil }
            }
        }
        let elapsed = (MonotonicInstant.now() - start).nanoseconds
        nextRegion = person.map { cropPolicy.nextRegion(after: $0, frameWidth: pendingFrameWidth, frameHeight: pendingFrameHeight) }
        if moved, let watched = people.watched {
            // The newly watched person is looked for next in a crop around where the search found
            // them (the one watched until now blacked out): in the whole frame a far person has
            // too few pixels to be found again at once.
            nextRegion = cropPolicy.region(around: watched.box, frameWidth: pendingFrameWidth, frameHeight: pendingFrameHeight)
        }
        return PoseEstimate(pose: person, keypoints: keypoints, region: pendingRegion,
                            timestamp: pendingTimestamp, inferenceNanoseconds: elapsed,
                            peopleInView: people.count(at: time), watchIdentifier: people.watchIdentifier, watchMoved: moved,
                            brightness: pendingBrightness)
    }

    /// Runs the model on what its input holds now (the frame, or the search).
    private func invokeModel<Service: InvokeServicePoint & ~Copyable>(servicing service: inout Service) throws(PoseModelError) {
        do {
            try interpreter.invoke(servicing: &service)
        } catch {
            throw PoseModelError("\(name) failed on a frame: \(error)")
        }
    }

    /// Tells the pose stage whether the action stage names the watched person's movement one of
    /// the exercises (the frame loop's current decision), at the frame's time: someone else is
    /// watched instead only while the watched person does none of them (`PeopleInView`).
    public mutating func watchedPersonExercises(_ exercising: Bool, at timestamp: MonotonicInstant) {
        people.watchedExercises(exercising, at: timestamp.seconds)
    }

    /// The mean of `count` bytes (the input's brightness; letterbox bars count as black).
    private static func meanByte(_ bytes: UnsafePointer<UInt8>, count: Int) -> Float {
        var sum = 0
        for index in 0..<count { sum &+= Int(bytes[index]) }
        return Float(sum) / Float(max(count, 1))
    }

    /// Blacks out `box` (frame pixels) in a tensor that shows `region`: that part of the picture
    /// is then like the letterbox's bars, where MoveNet finds nobody.
    private func blackOut(_ box: BoundingBox, in tensor: UnsafeMutablePointer<UInt8>, region: CropRegion) {
        let side = Float(inputSide), scale = side / region.side
        let minX = Int(max(0, min(side, ((box.minX - region.minX) * scale).rounded(.down))))
        let maxX = Int(max(0, min(side, ((box.maxX - region.minX) * scale).rounded(.up))))
        let minY = Int(max(0, min(side, ((box.minY - region.minY) * scale).rounded(.down))))
        let maxY = Int(max(0, min(side, ((box.maxY - region.minY) * scale).rounded(.up))))
        guard maxX > minX else { return }
        for row in minY..<max(minY, maxY) {
            (tensor + (row * inputSide + minX) * 3).initialize(repeating: 0, count: (maxX - minX) * 3)
        }
    }

    /// Forgets the previous pose: the next frame is looked at whole.
    public mutating func resetCropping() {
        nextRegion = nil
        people.reset()
    }
}

/// The service point that does nothing (`estimate()` without one).
private struct NoServicePoint: InvokeServicePoint {
    mutating func operatorFinished(_ index: Int) {}
}
