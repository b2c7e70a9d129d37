import ArgumentParser
import Capture
import LinuxSystem
import PoseEstimation
#if canImport(Glibc)
import Glibc
#endif

/// `posewatch snapshot`: one frame with the pose drawn on it, to aim a headless camera.
struct SnapshotCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshot",
        abstract: "Save one frame as PNG with the detected pose (bones and joints coloured by score) and the region the pose model looked at.",
        discussion: """
            The picture is turned upright as `run` turns it (camera.rotation and camera.flip in the config, or --rotation and --flip), \
            and when people lie on their side in most frames a hint names the rotation that would stand them up.
            Exit status: 0 written, 1 no frame could be read, 2 bad arguments or input, 78 bad config file (or the pose model it names).
            """)

    @Option(help: "Camera device or stable name (e.g. /dev/posewatch-camera).")
    var device: String?

    @Option(help: "A Y4M or MJPEG file instead of a camera.")
    var input: String?

    @Option(parsing: .unconditional, help: "Take the first frame at or after this many seconds (files: the file's timeline; cameras: after start-up; \(CommandLineLimits.snapshotSeconds.rangeText)).")
    var at = CommandLineNumber<Double>(1)

    @Option(parsing: .unconditional, help: "Frame rate of an MJPEG input (Y4M files carry their own; \(CommandLineLimits.framesPerSecond.rangeText) fps).")
    var fps: CommandLineNumber<Double>?

    @Option(help: "Path of the pose model (MoveNet Lightning int8; default: from the config).")
    var poseModel: String?

    @Option(help: "Config file (default: \(ApplianceConfiguration.defaultPath) if present).")
    var config: String?

    @OptionGroup var orientationOptions: OrientationOptions

    @Option(help: "Where to write the PNG.")
    var output: String

    func validate() throws {
        guard (device == nil) != (input == nil) else { throw ValidationError("give exactly one of --device or --input") }
        _ = try CommandLineLimits.snapshotSeconds.check(at)
        _ = try CommandLineLimits.framesPerSecond.check(fps)
    }

    func run() throws {
        let at = try CommandLineLimits.snapshotSeconds.check(self.at)
        let fps = try CommandLineLimits.framesPerSecond.check(self.fps)
        let configuration: ApplianceConfiguration
        do { configuration = try ApplianceConfiguration.load(path: config) } catch {
            printError("posewatch snapshot: \(error)")
            throw ExitCode(ExitStatus.configuration)
        }
        // Checked before the model runs: the PNG may overwrite neither the clip, the model nor the config.
        let destination: OutputFile
        do {
            destination = try OutputFile(path: output, notOverwriting: [input, poseModel ?? configuration.poseModelPath, config].compactMap { $0 })
        } catch {
            printError("posewatch snapshot: \(error)")
            throw ExitCode(ExitStatus.usage)
        }
        do {
            let source: FrameInput = try device.map { .camera(device: $0) } ?? FrameInput.file(input!, framesPerSecond: fps)
            var estimator = try ModelLoading.poseEstimator(path: poseModel, configuration: configuration, commandHasOption: true)
            estimator.orientation = try orientationOptions.orientation(over: configuration)
            var taker = SnapshotTaker(estimator: estimator, at: at)
            if device != nil { taker.wallClockLimitSeconds = at + 10 } else { taker.inputPath = input }
            guard let snapshot = try source.read(with: &taker) else {
                printError("posewatch snapshot: no frame at or after \(at) s in \(MessageExcerpt.path(input ?? device!))")
                throw ExitCode(ExitStatus.failure)
            }
            var image = snapshot.image
            let renderer = WireframeRenderer()
            renderer.draw(snapshot.estimate.pose ?? snapshot.estimate.keypoints, region: snapshot.estimate.region, on: &image)
            for other in snapshot.others { renderer.drawOtherPerson(other, on: &image) }
            do { try destination.write(PNGEncoder.encode(image)) } catch {
                printError("posewatch snapshot: \(error)")
                throw ExitCode(ExitStatus.failure)
            }
            let verdict = snapshot.estimate.pose == nil ? "no person (keypoints drawn as found)" : "person found"
            print("wrote \(MessageExcerpt.path(output)): \(image.width)x\(image.height) at \(String(format2: snapshot.seconds)) s, \(verdict)")
            if !snapshot.others.isEmpty {
                let count = snapshot.others.count + (snapshot.estimate.pose == nil ? 0 : 1)
                print("\(count) people in view: the watched one is drawn as a skeleton, \(snapshot.others.count == 1 ? "the other" : "the others") boxed in blue (not counted)")
            }
            if let hint = UprightHint.message(snapshot.directions, orientation: taker.estimator.orientation) { print(hint) }
        } catch let error as InputError {
            printError("posewatch snapshot: \(error)")
            throw ExitCode(ExitStatus.usage)
        } catch let error as ModelRunFailure {
            printError("posewatch snapshot: \(error)")
            throw ExitCode(ExitStatus.failure)
        } catch let error as ModelLoadingError {
            // As in `replay`: the configured model is a configuration error, --pose-model a bad argument.
            printError("posewatch snapshot: \(error)")
            throw ExitCode(error.exitStatus)
        }
    }
}

/// Reads frames up to the requested time, running the pose model on the last two seconds of them
/// (so smart cropping has settled as it would live, and searches have found anybody else in view), and keeps the full-size RGB picture of the chosen
/// frame, turned upright as the estimator turns it. The people of that last second are tallied by
/// head direction, for the hint that the camera looks mounted sideways.
struct SnapshotTaker: FrameConsumer, ~Copyable {
    var estimator: MoveNetEstimator
    let at: Double
    /// Cameras: give up after this long without reaching `at` (files run to their end).
    var wallClockLimitSeconds: Double?
    /// A clip's path, for the message when none of its frames could be used (nil for a camera).
    var inputPath: String?

    struct Snapshot {
        var image: RGBImage
        var estimate: PoseEstimate
        var seconds: Double
        /// The head directions of the people in the frames the pose model ran on.
        var directions: BodyDirectionTally
        /// The other people in view (not the watched one), as the pose stage last found them.
        var others: [BoundingBox] = []
    }

    init(estimator: consuming MoveNetEstimator, at: Double) {
        self.estimator = estimator
        self.at = at
    }

    mutating func consume<Source: FrameSource & ~Copyable>(_ source: inout Source) throws -> Snapshot? {
        var first: MonotonicInstant?
        var picture: RGBImage?
        var seconds = 0.0
        var directions = BodyDirectionTally()
        let orientation = estimator.orientation
        let deadline = wallClockLimitSeconds.map { MonotonicInstant.now() + MonotonicDuration(seconds: $0) } ?? MonotonicInstant(nanoseconds: .max)
        while MonotonicInstant.now() < deadline {
            var taken = false, loaded = false
            let outcome = source.nextFrame(timeoutMilliseconds: 1000) { frame in
                let start = first ?? frame.timestamp
                first = start
                seconds = (frame.timestamp - start).seconds
                guard seconds + 2 >= at else { return .used }
                guard estimator.loadInput(from: frame) else { return .broken }
                loaded = true
                if seconds + 1e-6 >= at {
                    picture = Self.fullFrame(frame, orientation: orientation)
                    taken = picture != nil
                }
                return .used
            }
            switch outcome {
            case .frame where loaded:
                let estimate: PoseEstimate
                do { estimate = try estimator.estimate() } catch { throw ModelRunFailure(error.description) }
                directions.add(estimate.pose)
                if taken, let picture {
                    var snapshot = Snapshot(image: picture, estimate: estimate, seconds: seconds, directions: directions)
                    for slot in 0..<PeopleInView.slotCount {
                        if let other = estimator.people.otherPerson(in: slot) { snapshot.others.append(other.box) }
                    }
                    return snapshot
                }
            case .endOfStream:
                if let inputPath, let refusal = InputError.noUsableFrame(in: inputPath, statistics: source.statistics) { throw refusal }
                return nil
            case .cameraLost(let error): throw InputError(error.description)
            default: continue
            }
        }
        return nil
    }

    /// The whole frame as RGB at its own size, turned upright by `orientation`.
    static func fullFrame(_ frame: borrowing Frame, orientation: FrameOrientation = .upright) -> RGBImage? {
        let width = frame.layout.width, height = frame.layout.height
        var converter = FrameConverter(tensorWidth: width, tensorHeight: height)
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        let region = SourceRegion.crop(FrameRectangle(x: 0, y: 0, width: Double(width), height: Double(height)))
        let converted = pixels.withUnsafeMutableBufferPointer { converter.convert(frame, region: region, into: $0.baseAddress!) != nil }
        guard converted else { return nil }
        if orientation.isIdentity { return RGBImage(width: width, height: height, pixels: pixels) }
        let upright = orientation.uprightSize(width: width, height: height)
        var turned = [UInt8](repeating: 0, count: pixels.count)
        pixels.withUnsafeBufferPointer { source in
            turned.withUnsafeMutableBufferPointer { orientation.reorient(rgb: source.baseAddress!, width: width, height: height, into: $0.baseAddress!) }
        }
        return RGBImage(width: upright.width, height: upright.height, pixels: turned)
    }
}

extension String {
    /// Two decimals without Foundation.
    init(format2 value: Double) {
        let hundredths = Int((abs(value) * 100).rounded())
        let text = "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)"
        self = value < 0 ? "-" + text : text
    }
}
