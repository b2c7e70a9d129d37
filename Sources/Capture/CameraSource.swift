import LinuxSystem

/// The camera as the frame loop sees it: a `FrameSource` that survives unplugging.
///
/// Owns at most one open `CameraDevice`. Any error while streaming (ENODEV, EIO, a poll error) or
/// no frame for `stallTimeoutMilliseconds` closes the device and starts a loss episode: the next
/// `nextFrame` returns `.cameraLost` once, later calls return `.timedOut` while re-open attempts
/// run with doubling back-off, and the first successful re-open returns `.cameraBack`. The loop
/// drives the status LED and the journal from those two values, so a repeating failure is
/// reported once per episode, not once per retry. A source-change event from the driver is a
/// restart: reported the same way, but re-opened at once.
///
/// Usage in the frame loop:
/// ```swift
/// var camera = CameraSource(configuration: CameraConfiguration(device: "/dev/posewatch-camera"),
///                           calls: LibV4L2SystemCalls())
/// var converter = FrameConverter(tensorWidth: 192, tensorHeight: 192)
/// var mapping: TensorMapping?
/// switch camera.nextFrame(timeoutMilliseconds: 200, { frame in
///     mapping = converter.convert(frame, region: .letterbox, into: inputTensor)
///     return mapping == nil ? .broken : .used
/// }) {
/// case .frame: runPose(mapping!)
/// case .cameraLost(let error): log(error); statusLED.blink()
/// case .cameraBack: statusLED.on()
/// default: break
/// }
/// ```
public struct CameraSource<Calls: V4L2SystemCalls>: ~Copyable, FrameSource {
    let calls: Calls
    public let configuration: CameraConfiguration
    var device: DeviceSlot<Calls> = .closed
    /// Counters of devices closed earlier, so `statistics` covers the whole run.
    var closedStatistics = CaptureStatistics()
    var episode = CaptureStatistics()
    var generation: UInt64 = 0
    /// Why the camera is gone, while it is; nil while streaming.
    public private(set) var lastError: CaptureError?
    var lossReported = false
    var retryDelayMilliseconds: Int
    var nextAttempt = MonotonicInstant.zero
    var lastFrameAt = MonotonicInstant.zero

    /// Tries to open the camera once. Never throws: a camera that is missing at start-up is the
    /// first loss episode (`nextFrame` reports it and keeps trying).
    public init(configuration: CameraConfiguration, calls: Calls) {
        self.calls = calls
        self.configuration = configuration
        self.retryDelayMilliseconds = configuration.retryInitialMilliseconds
        do throws(CaptureError) {
            // `adopt(_:)` spelled out: Swift 6.0 rejects any mutating method call in this
            // initializer ("mutating method 'adopt' may not be used on immutable value 'self.calls'").
            let opened = try CameraDevice(path: configuration.device, configuration: configuration, calls: calls, generation: 0)
            isStreaming = true
            mode = opened.mode
            layout = opened.layout
            cameraInterval = opened.cameraInterval
            frameIntervalFallback = opened.frameIntervalFallback
            controls = opened.controls
            fileDescriptor = opened.fileDescriptor
            device = .open(opened)
            lastFrameAt = calls.now()
        } catch {
            device = .closed
            lastError = error
            nextAttempt = calls.now() + .milliseconds(Int64(retryDelayMilliseconds))
        }
    }

    /// Whether a device is open and streaming.
    public private(set) var isStreaming = false
    /// The negotiated mode of the open device (kept after a loss, for reports).
    public private(set) var mode: CaptureMode?
    /// The layout of frames from the open device.
    public private(set) var layout: FrameLayout?
    /// The frame interval the open device runs at (nil when unknown).
    public private(set) var cameraInterval: FrameInterval?
    /// Whether the open device refused `VIDIOC_S_PARM` (the camera runs at its own rate).
    public private(set) var frameIntervalFallback = false
    /// What the last opening did to the camera's controls (kept after a loss); nil before any opened.
    public private(set) var controls: CameraControlReport?
    /// The open device's descriptor, for the loop's own poll set; nil while the camera is gone.
    public private(set) var fileDescriptor: Int32?
    /// The open device's counters, copied after every call. (The device sits in `DeviceSlot`,
    /// which is only consumed and re-stored, never borrowed into, to stay within Swift 6.0.)
    var deviceStatistics = CaptureStatistics()

    public var statistics: CaptureStatistics {
        var total = closedStatistics
        total.add(deviceStatistics)
        total.lossEpisodes = episode.lossEpisodes
        total.recoveries = episode.recoveries
        return total
    }

    /// Takes ownership of a freshly opened device, copying what callers may read from it.
    mutating func adopt(_ opened: consuming CameraDevice<Calls>) {
        isStreaming = true
        mode = opened.mode
        layout = opened.layout
        cameraInterval = opened.cameraInterval
        frameIntervalFallback = opened.frameIntervalFallback
        controls = opened.controls
        fileDescriptor = opened.fileDescriptor
        deviceStatistics = CaptureStatistics()
        device = .open(opened)
    }

    public mutating func nextFrame(timeoutMilliseconds: Int32, _ body: (borrowing Frame) -> FrameUse) -> FrameOutcome {
        if !isStreaming { return reopen(timeoutMilliseconds: timeoutMilliseconds) }
        let (outcome, failure, counters) = device.withNewestFrame(timeoutMilliseconds: timeoutMilliseconds, body)
        deviceStatistics = counters
        if let failure {
            return lose(.systemCall(call: "capture", subject: configuration.device, errno: failure))
        }
        let now = calls.now()
        switch outcome {
        case .frame, .brokenFrame, .nothingNew:
            lastFrameAt = now
        case .cameraLost(let error):
            return lose(error)
        case .timedOut:
            let silent = (now - lastFrameAt).wholeMilliseconds
            if silent >= Int64(configuration.stallTimeoutMilliseconds) {
                return lose(.stalled(path: configuration.device, milliseconds: Int(silent)))
            }
        default:
            break
        }
        return outcome
    }

    /// Closes the device and starts (or continues) a loss episode; reports it the first time.
    mutating func lose(_ error: CaptureError) -> FrameOutcome {
        closedStatistics.add(deviceStatistics)
        deviceStatistics = CaptureStatistics()
        device = .closed   // ends the CameraDevice: stream off, unmap, close
        isStreaming = false
        fileDescriptor = nil
        lastError = error
        retryDelayMilliseconds = configuration.retryInitialMilliseconds
        // A source change is a restart: re-open at once. Anything else waits a little first.
        nextAttempt = calls.now() + .milliseconds(Int64(error == .sourceChanged(path: configuration.device) ? 0 : retryDelayMilliseconds))
        lossReported = true
        episode.lossEpisodes += 1
        return .cameraLost(error)
    }

    mutating func reopen(timeoutMilliseconds: Int32) -> FrameOutcome {
        if !lossReported, let error = lastError {
            // The camera was missing at start-up: that is the first episode.
            lossReported = true
            episode.lossEpisodes += 1
            return .cameraLost(error)
        }
        let now = calls.now()
        if now < nextAttempt {
            let wait = (nextAttempt - now).wholeMillisecondsRoundedUp
            calls.sleep(milliseconds: Int32(Swift.min(Int64(Swift.max(timeoutMilliseconds, 0)), wait)))
            if calls.now() < nextAttempt { return .timedOut }
        }
        generation += 1
        do throws(CaptureError) {
            adopt(try CameraDevice(path: configuration.device, configuration: configuration, calls: calls, generation: generation))
        } catch {
            // Still gone: stay quiet (the episode was reported), try again later.
            lastError = error
            retryDelayMilliseconds = Swift.min(retryDelayMilliseconds * 2, configuration.retryMaximumMilliseconds)
            nextAttempt = calls.now() + .milliseconds(Int64(retryDelayMilliseconds))
            return .timedOut
        }
        lastError = nil
        lossReported = false
        lastFrameAt = calls.now()
        episode.recoveries += 1
        return .cameraBack
    }
}

extension CaptureStatistics {
    mutating func add(_ other: CaptureStatistics) {
        delivered += other.delivered
        droppedLate += other.droppedLate
        droppedByDriver += other.droppedByDriver
        decimated += other.decimated
        broken += other.broken
    }
}

/// The camera source's device, open or not. An enum rather than an Optional because Swift 6.0
/// can consume and re-store a whole noncopyable enum in a mutating method, which is all the
/// frame loop needs, without borrowing through Optional.
enum DeviceSlot<Calls: V4L2SystemCalls>: ~Copyable {
    case open(CameraDevice<Calls>)
    case closed

    /// `CameraDevice.withNewestFrame` on the open device, with its counters afterwards.
    mutating func withNewestFrame(timeoutMilliseconds: Int32, _ body: (borrowing Frame) -> FrameUse)
        -> (FrameOutcome, Errno?, CaptureStatistics) {
        switch consume self {
        case .open(var device):
            var outcome = FrameOutcome.timedOut
            var failure: Errno?
            do throws(Errno) {
                outcome = try device.withNewestFrame(timeoutMilliseconds: timeoutMilliseconds, body)
            } catch {
                failure = error
            }
            let counters = device.statistics
            self = .open(device)
            return (outcome, failure, counters)
        case .closed:
            self = .closed
            return (.timedOut, nil, CaptureStatistics())
        }
    }
}
