#if canImport(Glibc)
import Glibc
#endif
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
    /// Time spent in `invoke()`, nanoseconds (both invokes on a frame that was also searched).
    public var inferenceNanoseconds: Int64
    /// People in view (the watched person and the others a search found; 0 or 1 with nobody else).
    public var peopleInView: Int = 0
    /// Changes whenever the watch moves to another person or starts anew (`PeopleInView`).
    public var watchIdentifier: Int = 0
    /// Whether the watch moved to another person on this frame (someone more prominent at the
    /// start, or someone exercising while the watched person stood still).
    public var watchMoved = false
    /// The mean brightness (0…255) of the part of the frame the model looked at, before any stretch.
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
    public private(set) var people = PeopleInView()
    /// Whether other people are searched for and blacked out (false: MoveNet alone decides whom it
    /// sees, as before people were told apart; for comparison runs).
    public var searchesForPeople = true
    /// Whether a dim, flat picture is contrast-stretched before the model (`InputBrightness`).
    public var stretchesDimPictures = true

    private var converter: FrameConverter
    private let input: UnsafeMutablePointer<UInt8>
    /// The search's input, filled in `loadInput` (the frame is gone by `estimate`).
    private let searchInput: UnsafeMutablePointer<UInt8>
    private var searchPending = false
    private var brightness = InputBrightness()
    private var pendingBrightness: Float = 0
    private let experimentSupersample = Int(getenv("POSEWATCH_EXPERIMENT_SUPERSAMPLE").flatMap { String(cString: $0) }.flatMap { Int($0) } ?? 1)
    private var superConverter = FrameConverter(tensorWidth: 192 * max(1, Int(getenv("POSEWATCH_EXPERIMENT_SUPERSAMPLE").flatMap { String(cString: $0) }.flatMap { Int($0) } ?? 1)), tensorHeight: 192 * max(1, Int(getenv("POSEWATCH_EXPERIMENT_SUPERSAMPLE").flatMap { String(cString: $0) }.flatMap { Int($0) } ?? 1)))
    private let superBuffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 192 * 192 * 27)
    private let experimentSourceBlur = Int(getenv("POSEWATCH_EXPERIMENT_SOURCEBLUR").flatMap { String(cString: $0) }.flatMap { Int($0) } ?? 0)
    private let sums = UnsafeMutablePointer<UInt16>.allocate(capacity: 192 * 192 * 3)
    private let experimentDenoiseBelow: Float = Float(getenv("POSEWATCH_EXPERIMENT_DENOISE").flatMap { String(cString: $0) }.flatMap { Float($0) } ?? 0)
    private var searchRegion = CropRegion(minX: 0, minY: 0, side: 1)
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
        self.searchInput = .allocate(capacity: input.shape[1] * input.shape[1] * 3)
    }

    deinit { searchInput.deallocate() }

    /// Converts `frame` into the model input over this frame's region. Returns false for a frame
    /// that does not decode (broken JPEG): the caller reports it as broken and skips `estimate()`.
    public mutating func loadInput(from frame: borrowing Frame) -> Bool {
        let width = frame.layout.width, height = frame.layout.height
        if width != pendingFrameWidth || height != pendingFrameHeight {  // new camera mode
            nextRegion = nil
            people.reset()
        }
        let region = (smartCropping ? nextRegion : nil) ?? CropRegion.wholeFrame(width: width, height: height)
        if experimentSourceBlur > 0 {
            let n = inputSide * inputSide * 3
            sums.initialize(repeating: 0, count: n)
            let r = experimentSourceBlur
            for dy in -r...r {
                for dx in -r...r {
                    var shifted = region.rectangle
                    shifted.x += Double(dx); shifted.y += Double(dy)
                    guard converter.convert(frame, region: .crop(shifted), into: input) != nil else { return false }
                    for i in 0..<n { sums[i] += UInt16(input[i]) }
                }
            }
            let taps = (2 * r + 1) * (2 * r + 1)
            for i in 0..<n { input[i] = UInt8((Int(sums[i]) + taps / 2) / taps) }
        } else if experimentSupersample > 1 {
            guard superConverter.convert(frame, region: .crop(region.rectangle), into: superBuffer) != nil else { return false }
            let k = experimentSupersample, big = inputSide * k
            for y in 0..<inputSide {
                for x in 0..<inputSide {
                    for c in 0..<3 {
                        var sum = 0
                        for dy in 0..<k { for dx in 0..<k { sum += Int(superBuffer[((y * k + dy) * big + x * k + dx) * 3 + c]) } }
                        input[(y * inputSide + x) * 3 + c] = UInt8((sum + k * k / 2) / (k * k))
                    }
                }
            }
        } else {
            guard converter.convert(frame, region: .crop(region.rectangle), into: input) != nil else { return false }
        }
        let byteCount = inputSide * inputSide * 3
        pendingBrightness = brightness.measure(input, count: byteCount, stretch: stretchesDimPictures)
        if pendingBrightness < experimentDenoiseBelow { brightness.smooth(input, side: inputSide) }
        searchPending = false
        if searchesForPeople {
            for slot in 0..<PeopleInView.slotCount {
                if let other = people.otherPerson(in: slot), let mask = people.maskRectangle(forOther: other.box) {
                    blackOut(mask, in: input, region: region)
                }
            }
            if people.wantsSearch(), let watched = people.watched {
                searchRegion = CropRegion.wholeFrame(width: width, height: height)
                guard converter.convert(frame, region: .crop(searchRegion.rectangle), into: searchInput) != nil else { return false }
                _ = brightness.measure(searchInput, count: byteCount, stretch: stretchesDimPictures)
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
        do {
            try interpreter.invoke(servicing: &service)
        } catch {
            throw PoseModelError("\(name) failed on a frame: \(error)")
        }
        let keypoints = MoveNetOutput.decode(interpreter.outputFloats(0)!, region: pendingRegion)
        var person = presenceRule.isPerson(keypoints) ? keypoints : nil
        let time = pendingTimestamp.seconds
        var moved = false
        if searchesForPeople {
            // Someone else despite the blacked-out others (they moved since the last search).
            if let seen = person, let box = seen.boundingBox(minimumScore: cropPolicy.minimumKeypointScore),
               !people.isWatched(box) {
                person = nil
            }
            people.watchedSeen(person?.boundingBox(minimumScore: cropPolicy.minimumKeypointScore), at: time)
            if searchPending {
                searchPending = false
                interpreter.inputBytes(0).baseAddress!.copyMemory(from: searchInput, byteCount: inputSide * inputSide * 3)
                do {
                    try interpreter.invoke(servicing: &service)
                } catch {
                    throw PoseModelError("\(name) failed on a frame: \(error)")
                }
                let found = MoveNetOutput.decode(interpreter.outputFloats(0)!, region: searchRegion)
                let box = presenceRule.isPerson(found) ? found.boundingBox(minimumScore: cropPolicy.minimumKeypointScore) : nil
                moved = people.searched(found: box, at: time)
                // The newly watched person is found on the next frame, in the whole frame with
                // the one watched until now blacked out.
                if moved { person = nil }
            }
        }
        let elapsed = (MonotonicInstant.now() - start).nanoseconds
        nextRegion = person.map { cropPolicy.nextRegion(after: $0, frameWidth: pendingFrameWidth, frameHeight: pendingFrameHeight) }
        return PoseEstimate(pose: person, keypoints: keypoints, region: pendingRegion,
                            timestamp: pendingTimestamp, inferenceNanoseconds: elapsed,
                            peopleInView: people.count(at: time), watchIdentifier: people.watchIdentifier, watchMoved: moved,
                            brightness: pendingBrightness)
    }

    /// Tells the pose stage whether the action stage names the watched person's movement one of
    /// the exercises (the frame loop's current decision), at the frame's time: someone else is
    /// watched instead only while the watched person does none of them (`PeopleInView`).
    public mutating func watchedPersonExercises(_ exercising: Bool, at timestamp: MonotonicInstant) {
        people.watchedExercises(exercising, at: timestamp.seconds)
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
