import CV4L2
import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// How to open and run a camera.
public struct CameraConfiguration: Sendable, Equatable {
    /// Device node or stable name (`/dev/video0`, `/dev/v4l/by-id/usb-…-video-index0`,
    /// `/dev/posewatch-camera`); symlinks are followed at every (re-)open.
    public var device: String
    /// Size, rate and overrides to negotiate.
    public var request: CaptureRequest
    /// Driver buffers in the mmap ring. One is with the loop, one is being filled, the rest
    /// absorb jitter; more only adds latency since the loop always takes the newest.
    public var bufferCount: Int
    /// No frame for this long while streaming counts as losing the camera (close and re-open).
    public var stallTimeoutMilliseconds: Int
    /// Back-off between re-open attempts: starts here, doubles, stops growing at the maximum.
    public var retryInitialMilliseconds: Int
    public var retryMaximumMilliseconds: Int
    /// Whether opening sets exposure, backlight compensation and gain (`CameraControl`); false
    /// keeps the camera's own settings (`camera.auto_controls`).
    public var autoControls: Bool

    public init(device: String, request: CaptureRequest = CaptureRequest(),
                bufferCount: Int = CameraConfiguration.defaultBufferCount(),
                stallTimeoutMilliseconds: Int = 2000,
                retryInitialMilliseconds: Int = 250, retryMaximumMilliseconds: Int = 5000,
                autoControls: Bool = true) {
        self.device = device
        self.request = request
        self.bufferCount = bufferCount
        self.stallTimeoutMilliseconds = stallTimeoutMilliseconds
        self.retryInitialMilliseconds = retryInitialMilliseconds
        self.retryMaximumMilliseconds = retryMaximumMilliseconds
        self.autoControls = autoControls
    }

    /// min(online cores, 4) + 1: enough buffers that the driver always has one to fill while the
    /// loop and inference workers hold theirs.
    public static func defaultBufferCount(cores: Int = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) -> Int {
        Swift.min(Swift.max(cores, 1), 4) + 1
    }
}

/// One dequeued driver buffer, owned by whoever holds this value until it goes back to the
/// driver with `CameraDevice.requeue(_:)`.
///
/// Noncopyable, and `requeue` consumes it: a buffer cannot be used after it was re-queued, nor
/// re-queued twice. Dropping one without re-queueing would shrink the ring for good, so that
/// traps (a programmer error).
public struct DequeuedBuffer: ~Copyable {
    /// The driver's buffer index.
    public let index: Int
    /// The filled part of the buffer (`bytesused`), valid until re-queued.
    public let bytes: UnsafeRawBufferPointer
    /// The driver's CLOCK_MONOTONIC timestamp (or the time of dequeue if the driver gives none).
    public let timestamp: MonotonicInstant
    /// The driver's sequence number.
    public let sequence: UInt32
    /// Which opening of the device it came from, so it cannot go back to a re-opened one.
    let generation: UInt64

    init(index: Int, bytes: UnsafeRawBufferPointer, timestamp: MonotonicInstant, sequence: UInt32, generation: UInt64) {
        self.index = index
        self.bytes = bytes
        self.timestamp = timestamp
        self.sequence = sequence
        self.generation = generation
    }

    /// Ends this owner without the trap in `deinit` (the device re-queues or has closed).
    consuming func release() -> (index: Int, generation: UInt64) {
        let result = (index, generation)
        discard self
        return result
    }

    deinit {
        // Written as a check (always true for a live buffer) rather than a bare trap so the
        // compiler keeps the usual destruction path.
        precondition(index < 0, "a dequeued V4L2 buffer was dropped without CameraDevice.requeue")
    }
}

// Why the two owners below are not generic over `V4L2SystemCalls` and reach the system calls
// through closures instead: Swift 6.0.3 (Debian 13's toolchain) in release builds does not run the
// `deinit` of a generic `~Copyable` struct when unspecialised generic code destroys it (assigning
// `.closed` to the slot that held it, or `nil` to an Optional), and a `deinit` inlined at the end
// of a local's scope can read a generic or existential stored property from the wrong address.
// A lost camera then stayed open with all its buffers mapped, and vivid (or a re-plugged UVC
// camera) never came back. Non-generic owners whose stored properties are all loadable (an fd,
// pointers, closures) are destroyed correctly in every case; `CameraDevice` stays generic (the
// per-frame path is specialised) but has no `deinit` of its own. See Tests/System/README.md;
// `.ci/check-trixie.sh` runs the camera tests in a 6.0.3 release build so this stays fixed.

/// The open device node: streaming stopped and closed (`v4l2_close`) when its owner ends.
struct V4L2Descriptor: ~Copyable {
    let rawValue: Int32
    /// `VIDIOC_STREAMOFF` then `v4l2_close` through the camera's `V4L2SystemCalls`.
    let release: (Int32) -> Void

    init<Calls: V4L2SystemCalls>(opening path: String, calls: Calls) throws(CaptureError) {
        // Non-blocking: grab waits in poll() with a timeout, then dequeues while poll says ready.
        let fd = calls.open(path, flags: O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw CaptureError.systemCall(call: "open", subject: path, errno: .current) }
        self.rawValue = fd
        self.release = { fd in
            // Harmless when not streaming (the driver answers EINVAL, or ENODEV when unplugged).
            var type = Int32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
            _ = try? calls.control(fd, PW_VIDIOC_STREAMOFF, &type)
            _ = calls.close(fd)
        }
    }

    deinit { release(rawValue) }
}

/// The mmap'd driver buffers: unmapped (`v4l2_munmap`) when their owner ends. Also remembers
/// which buffers the driver holds, so the ring's invariants can be checked.
///
/// A mapping keeps the device file alive after `close`, so the ring must end too for the driver
/// to see the camera released (vivid and UVC reconnect only then).
struct MappedBufferRing: ~Copyable {
    let count: Int
    let starts: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    let lengths: UnsafeMutablePointer<Int>
    /// true while the driver owns the buffer (queued), false while posewatch does.
    let queued: UnsafeMutablePointer<Bool>
    /// `v4l2_munmap` through the camera's `V4L2SystemCalls`.
    let unmap: (UnsafeMutableRawPointer, Int) -> Void

    init<Calls: V4L2SystemCalls>(count: Int, calls: Calls) {
        self.count = count
        starts = .allocate(capacity: count)
        starts.initialize(repeating: nil, count: count)
        lengths = .allocate(capacity: count)
        lengths.initialize(repeating: 0, count: count)
        queued = .allocate(capacity: count)
        queued.initialize(repeating: false, count: count)
        unmap = { start, length in _ = calls.unmapBuffer(start, length: length) }
    }

    deinit {
        for index in 0..<count {
            if let start = starts[index] { unmap(start, lengths[index]) }
        }
        starts.deallocate()
        lengths.deallocate()
        queued.deallocate()
    }
}

/// Why the last `dequeueNewest` returned no buffer.
public enum WakeResult: Sendable, Equatable {
    case frame
    case timedOut
    case nothingNew
    /// The driver reported `V4L2_EVENT_SOURCE_CHANGE`: the device must be re-opened.
    case sourceChanged
}

/// A streaming V4L2 camera: the open node, the negotiated mode, the mmap ring, drain-to-newest.
///
/// Owns the descriptor and the mapped buffers; when it ends they stop streaming, unmap and close.
/// Opening negotiates format, size and frame interval (see `CaptureModeSelection`), maps
/// `bufferCount` buffers, queues them all and starts streaming. Every ioctl goes through
/// `Calls.control` (EINTR retried there). Errors while streaming are thrown as `Errno`; the
/// caller (`CameraSource`) treats any of them as losing the camera.
public struct CameraDevice<Calls: V4L2SystemCalls>: ~Copyable {
    let calls: Calls
    // The two owners end with the device (no `deinit` here, see above). Their order does not
    // matter: V4L2 allows unmapping after close; the driver lets go once both are gone.
    let ring: MappedBufferRing
    let descriptor: V4L2Descriptor
    let generation: UInt64
    /// The path the device was opened by.
    public let path: String
    /// The chosen mode (what was asked of the camera).
    public let mode: CaptureMode
    /// The frame layout the driver confirmed (`VIDIOC_S_FMT`'s answer).
    public let layout: FrameLayout
    /// The frame interval the driver confirmed (`VIDIOC_S_PARM`/`G_PARM`), nil when unknown.
    public let cameraInterval: FrameInterval?
    /// Whether `VIDIOC_S_PARM` was refused and the camera runs at its own rate.
    public let frameIntervalFallback: Bool
    /// What opening did to exposure, backlight compensation and gain.
    public let controls: CameraControlReport
    var decimator: FrameDecimator
    var lastSequence: UInt32?
    /// Whether the driver accepted `VIDIOC_SUBSCRIBE_EVENT` for source changes.
    let watchesSourceChanges: Bool
    /// Counters for this opening of the device.
    public internal(set) var statistics = CaptureStatistics()
    /// Why the last `dequeueNewest` returned nil.
    public internal(set) var lastWake: WakeResult = .timedOut

    /// The descriptor number, to add to the loop's own poll set (borrowed; never close it).
    public var fileDescriptor: Int32 { descriptor.rawValue }

    /// The number of buffers the driver actually gave.
    public var bufferCount: Int { ring.count }

    /// Opens `path` and starts streaming in the mode negotiated for `configuration.request`.
    ///
    /// The steps of ustreamer's capture open, in order, each its own function that fails with one
    /// line naming the device: open, check capabilities, choose a mode, set the format, set the
    /// frame interval, set the controls (never fails), map the buffers, queue them, watch for
    /// source changes, start streaming.
    /// A step that fails ends what the earlier ones made (the ring unmaps, the descriptor closes).
    public init(path: String, configuration: CameraConfiguration, calls: Calls, generation: UInt64 = 0) throws(CaptureError) {
        let descriptor = try V4L2Descriptor(opening: path, calls: calls)
        let fd = descriptor.rawValue
        try Self.requireStreamingCapture(fd: fd, calls: calls, path: path)
        let mode = try Self.chooseMode(fd: fd, calls: calls, request: configuration.request, path: path)
        let layout = try Self.setFormat(mode, fd: fd, calls: calls, path: path)
        // The model's rate if the camera takes it, else what it runs at, decimated by timestamp.
        let (interval, fallback) = Self.setFrameInterval(fd: fd, calls: calls, mode: mode)
        let decimator = FrameDecimator(cameraFramesPerSecond: interval?.framesPerSecond ?? 0,
                                       targetFramesPerSecond: configuration.request.framesPerSecond)
        let controls = Self.applyControls(fd: fd, calls: calls, enabled: configuration.autoControls)
        let ring = try Self.mapBuffers(count: configuration.bufferCount, fd: fd, calls: calls, path: path)
        try Self.queueAllBuffers(ring, fd: fd, calls: calls, path: path)
        let watchesSourceChanges = Self.watchSourceChanges(fd: fd, calls: calls)
        try Self.startStreaming(fd: fd, calls: calls, path: path)

        self.calls = calls
        self.descriptor = descriptor
        self.ring = ring
        self.generation = generation
        self.path = path
        self.mode = mode
        self.layout = layout
        self.cameraInterval = interval
        self.frameIntervalFallback = fallback
        self.controls = controls
        self.decimator = decimator
        self.watchesSourceChanges = watchesSourceChanges
    }

    // MARK: the steps of opening

    /// `VIDIOC_QUERYCAP`: the node must offer single-planar video capture with streaming I/O
    /// (the device's own capabilities when the driver reports them, not the whole card's).
    static func requireStreamingCapture(fd: Int32, calls: Calls, path: String) throws(CaptureError) {
        var capability = v4l2_capability()
        try calls.require(fd, PW_VIDIOC_QUERYCAP, &capability, path: path)
        let all = CameraCapabilities(rawValue: capability.capabilities)
        let capabilities = all.contains(.deviceCapabilities) ? CameraCapabilities(rawValue: capability.device_caps) : all
        guard capabilities.contains(.videoCapture) else {
            throw CaptureError.notACamera(path: path, reason: "no single-planar video capture (\(capabilities.names.joined(separator: ", ")))")
        }
        guard capabilities.contains(.streaming) else {
            throw CaptureError.notACamera(path: path, reason: "no streaming I/O")
        }
    }

    /// `VIDIOC_ENUM_FMT`/`ENUM_FRAMESIZES`/`ENUM_FRAMEINTERVALS`, then `CaptureModeSelection`'s
    /// choice for `request`.
    static func chooseMode(fd: Int32, calls: Calls, request: CaptureRequest, path: String) throws(CaptureError) -> CaptureMode {
        let formats = CameraEnumeration.formats(fd: fd, calls: calls, bufferType: V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
        guard let mode = CaptureModeSelection.select(from: formats, request: request) else {
            throw CaptureError.noUsableMode(path: path)
        }
        return mode
    }

    /// `VIDIOC_S_FMT` with the mode's pixel format and size. The driver may adjust what it was
    /// asked; its answer is the truth, and must be a pixel format posewatch converts.
    static func setFormat(_ mode: CaptureMode, fd: Int32, calls: Calls, path: String) throws(CaptureError) -> FrameLayout {
        var format = v4l2_format()
        format.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        format.fmt.pix.width = UInt32(mode.width)
        format.fmt.pix.height = UInt32(mode.height)
        format.fmt.pix.pixelformat = mode.fourCC.rawValue
        format.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        try calls.require(fd, PW_VIDIOC_S_FMT, &format, path: path)
        guard let pixelFormat = PixelFormat(fourCC: FourCC(rawValue: format.fmt.pix.pixelformat)) else {
            throw CaptureError.notACamera(path: path, reason: "driver chose \(FourCC(rawValue: format.fmt.pix.pixelformat)) instead of \(mode.fourCC)")
        }
        let width = Int(format.fmt.pix.width), height = Int(format.fmt.pix.height)
        let packed = FrameLayout.packedBytesPerLine(pixelFormat, width: width)
        return FrameLayout(pixelFormat: pixelFormat, width: width, height: height,
                           bytesPerLine: Swift.max(Int(format.fmt.pix.bytesperline), packed))
    }

    /// `VIDIOC_REQBUFS` for `count` mmap buffers (at least 2), then `VIDIOC_QUERYBUF` and `mmap`
    /// for each buffer the driver gave.
    static func mapBuffers(count: Int, fd: Int32, calls: Calls, path: String) throws(CaptureError) -> MappedBufferRing {
        var request = v4l2_requestbuffers()
        request.count = UInt32(Swift.max(count, 2))
        request.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        request.memory = V4L2_MEMORY_MMAP.rawValue
        try calls.require(fd, PW_VIDIOC_REQBUFS, &request, path: path)
        guard request.count >= 2 else {
            throw CaptureError.notACamera(path: path, reason: "the driver gave \(request.count) buffers")
        }
        let ring = MappedBufferRing(count: Int(request.count), calls: calls)
        for index in 0..<ring.count {
            var buffer = Self.mmapBuffer(index)
            try calls.require(fd, PW_VIDIOC_QUERYBUF, &buffer, path: path)
            guard let start = calls.mapBuffer(length: Int(buffer.length), fd: fd, offset: Int64(buffer.m.offset)) else {
                throw CaptureError.systemCall(call: "mmap", subject: path, errno: .current)
            }
            ring.starts[index] = start
            ring.lengths[index] = Int(buffer.length)
        }
        return ring
    }

    /// `VIDIOC_QBUF` for every buffer of the ring: the driver owns them all when streaming starts.
    static func queueAllBuffers(_ ring: borrowing MappedBufferRing, fd: Int32, calls: Calls, path: String) throws(CaptureError) {
        for index in 0..<ring.count {
            var buffer = Self.mmapBuffer(index)
            try calls.require(fd, PW_VIDIOC_QBUF, &buffer, path: path)
            ring.queued[index] = true
        }
    }

    /// `VIDIOC_SUBSCRIBE_EVENT` for `V4L2_EVENT_SOURCE_CHANGE`; whether the driver accepted it.
    /// A source change (new resolution or signal) means "restart", never "patch in place";
    /// cameras that cannot report one (most webcams) simply refuse the subscription.
    static func watchSourceChanges(fd: Int32, calls: Calls) -> Bool {
        var subscription = v4l2_event_subscription()
        subscription.type = UInt32(V4L2_EVENT_SOURCE_CHANGE)
        return (try? calls.control(fd, PW_VIDIOC_SUBSCRIBE_EVENT, &subscription)) == true
    }

    /// `VIDIOC_STREAMON`.
    static func startStreaming(fd: Int32, calls: Calls, path: String) throws(CaptureError) {
        var type = Int32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
        try calls.require(fd, PW_VIDIOC_STREAMON, &type, path: path)
    }

    /// A `v4l2_buffer` naming mmap capture buffer `index`, for QUERYBUF and QBUF.
    static func mmapBuffer(_ index: Int) -> v4l2_buffer {
        var buffer = v4l2_buffer()
        buffer.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        buffer.memory = V4L2_MEMORY_MMAP.rawValue
        buffer.index = UInt32(index)
        return buffer
    }

    /// `VIDIOC_S_PARM` with the mode's interval, reading back what the driver chose. When the
    /// driver refuses or lacks `V4L2_CAP_TIMEPERFRAME`, `VIDIOC_G_PARM` tells the rate it runs
    /// at (or the mode's listed interval is assumed) and decimation by timestamp does the rest.
    static func setFrameInterval(fd: Int32, calls: Calls, mode: CaptureMode) -> (FrameInterval?, fallback: Bool) {
        let wanted = FrameInterval(framesPerSecond: mode.targetFramesPerSecond)
        // Ask for the model's rate when the camera lists it (or lists nothing); otherwise the
        // nearest faster rate the mode chose.
        let asked = mode.cameraInterval.map { abs($0.framesPerSecond - mode.targetFramesPerSecond) <= mode.targetFramesPerSecond * 0.01 ? wanted : $0 } ?? wanted
        var parameters = v4l2_streamparm()
        parameters.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        parameters.parm.capture.timeperframe = v4l2_fract(numerator: asked.numerator, denominator: asked.denominator)
        let accepted = (try? calls.control(fd, PW_VIDIOC_S_PARM, &parameters)) ?? false
        if accepted, parameters.parm.capture.capability & UInt32(V4L2_CAP_TIMEPERFRAME) != 0 {
            let actual = parameters.parm.capture.timeperframe
            if actual.numerator > 0 && actual.denominator > 0 {
                return (FrameInterval(numerator: actual.numerator, denominator: actual.denominator), false)
            }
            return (asked, false)
        }
        // Fallback: the camera keeps its own rate; find out which.
        var current = v4l2_streamparm()
        current.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        if (try? calls.control(fd, PW_VIDIOC_G_PARM, &current)) == true {
            let actual = current.parm.capture.timeperframe
            if actual.numerator > 0 && actual.denominator > 0 {
                return (FrameInterval(numerator: actual.numerator, denominator: actual.denominator), true)
            }
        }
        return (mode.cameraInterval, true)
    }

    /// `VIDIOC_QUERYCTRL`/`QUERYMENU`/`S_CTRL` for each `CameraControl` the driver offers: auto
    /// exposure that keeps the frame rate, backlight compensation, autogain. Never fails the open:
    /// a control missing, read-only or refused is recorded in the report. Nothing is touched when
    /// disabled (`camera.auto_controls = false`).
    static func applyControls(fd: Int32, calls: Calls, enabled: Bool) -> CameraControlReport {
        enabled ? CameraControls.apply(fd: fd, calls: calls, writing: true) : .keptCameraSettings
    }

    // MARK: grab

    /// Waits up to `timeoutMilliseconds` for a frame, then dequeues every ready buffer and keeps
    /// only the newest: older ones go straight back to the driver (counted as `droppedLate`),
    /// broken ones too (counted as `broken`), and gaps in the driver's sequence numbers count as
    /// `droppedByDriver`. The newest is then kept or re-queued by the decimator.
    ///
    /// Returns nil when there is nothing to deliver (`lastWake` says why). Throws the errno of a
    /// failed poll/ioctl, or EIO when poll reports an error with nothing to dequeue: the device
    /// is gone or broken, and must be closed.
    public mutating func dequeueNewest(timeoutMilliseconds: Int32) throws(Errno) -> DequeuedBuffer? {
        let fd = descriptor.rawValue
        var returnedEvents: Int16 = 0
        let events = Int16(POLLIN) | (watchesSourceChanges ? Int16(POLLPRI) : 0)
        let ready = try retryingInterrupts {
            calls.poll(fd, events: events, returnedEvents: &returnedEvents, timeoutMilliseconds: timeoutMilliseconds)
        }
        if ready == 0 {
            lastWake = .timedOut
            return nil
        }
        if returnedEvents & Int16(POLLPRI) != 0 && sourceChanged() {
            lastWake = .sourceChanged
            return nil
        }
        var newestIndex = -1
        var newestBytes = 0
        var newestTimestamp = MonotonicInstant.zero
        var newestSequence: UInt32 = 0
        var firstDequeue = true
        while true {
            // After the first buffer, ask poll whether another is ready rather than letting
            // DQBUF answer EAGAIN: libv4l2 prints every failed DQBUF on stderr ("error dequeuing
            // buf: Resource temporarily unavailable"), and stderr is the service's journal.
            if !firstDequeue && !anotherBufferReady(fd) { break }
            firstDequeue = false
            var buffer = v4l2_buffer()
            buffer.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
            buffer.memory = V4L2_MEMORY_MMAP.rawValue
            guard try calls.control(fd, PW_VIDIOC_DQBUF, &buffer) else { break }
            let index = Int(buffer.index)
            precondition(index < ring.count && ring.queued[index], "the driver returned a buffer it did not hold")
            ring.queued[index] = false

            let sequence = buffer.sequence
            if let last = lastSequence, sequence > last &+ 1, sequence &- last < 1 << 30 {
                statistics.droppedByDriver += Int(sequence &- last &- 1)
            }
            lastSequence = sequence

            let used = Int(buffer.bytesused)
            if buffer.flags & UInt32(V4L2_BUF_FLAG_ERROR) != 0 || !isComplete(index: index, byteCount: used) {
                statistics.broken += 1
                try requeue(index: index)
                continue
            }
            if newestIndex >= 0 {
                statistics.droppedLate += 1
                try requeue(index: newestIndex)
            }
            newestIndex = index
            newestBytes = used
            newestSequence = sequence
            newestTimestamp = timestamp(of: buffer)
        }
        guard newestIndex >= 0 else {
            if returnedEvents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { throw Errno.ioError }
            lastWake = .nothingNew
            return nil
        }
        if !decimator.accept(newestTimestamp) {
            statistics.decimated += 1
            try requeue(index: newestIndex)
            lastWake = .nothingNew
            return nil
        }
        statistics.delivered += 1
        lastWake = .frame
        let bytes = UnsafeRawBufferPointer(start: ring.starts[newestIndex], count: Swift.min(newestBytes, ring.lengths[newestIndex]))
        return DequeuedBuffer(index: newestIndex, bytes: bytes, timestamp: newestTimestamp,
                              sequence: newestSequence, generation: generation)
    }

    /// Gives a buffer back to the driver (`VIDIOC_QBUF`). Consumes it: it cannot be used or
    /// re-queued again.
    public mutating func requeue(_ buffer: consuming DequeuedBuffer) throws(Errno) {
        let (index, bufferGeneration) = buffer.release()
        precondition(bufferGeneration == generation, "a buffer from an earlier opening of the camera was re-queued")
        try requeue(index: index)
    }

    /// Whether poll says a filled buffer is waiting now (no wait; an interrupted poll says no, the
    /// next wake drains it).
    func anotherBufferReady(_ fd: Int32) -> Bool {
        var returnedEvents: Int16 = 0
        return calls.poll(fd, events: Int16(POLLIN), returnedEvents: &returnedEvents, timeoutMilliseconds: 0) > 0
            && returnedEvents & Int16(POLLIN) != 0
    }

    /// Drains pending events (`VIDIOC_DQEVENT` until none is left); true when one was a source change.
    func sourceChanged() -> Bool {
        var changed = false
        while true {
            var event = v4l2_event()
            guard (try? calls.control(descriptor.rawValue, PW_VIDIOC_DQEVENT, &event)) == true else { break }
            if event.type == UInt32(V4L2_EVENT_SOURCE_CHANGE) { changed = true }
        }
        return changed
    }

    mutating func requeue(index: Int) throws(Errno) {
        precondition(!ring.queued[index], "buffer \(index) re-queued twice")
        var buffer = Self.mmapBuffer(index)
        guard try calls.control(descriptor.rawValue, PW_VIDIOC_QBUF, &buffer) else { throw Errno.wouldBlock }
        ring.queued[index] = true
    }

    /// Whether a dequeued buffer holds a whole frame: uncompressed frames must fill the layout,
    /// JPEG frames must start with SOI and end with EOI (truncated transfers lack it).
    func isComplete(index: Int, byteCount: Int) -> Bool {
        guard byteCount > 0, byteCount <= ring.lengths[index], let start = ring.starts[index] else { return false }
        if layout.pixelFormat == .mjpeg {
            return JPEGMarkers.looksComplete(UnsafeRawBufferPointer(start: start, count: byteCount))
        }
        return byteCount >= layout.minimumByteCount
    }

    func timestamp(of buffer: v4l2_buffer) -> MonotonicInstant {
        let kind = buffer.flags & UInt32(V4L2_BUF_FLAG_TIMESTAMP_MASK)
        let nanoseconds = Int64(buffer.timestamp.tv_sec) * 1_000_000_000 + Int64(buffer.timestamp.tv_usec) * 1000
        if kind == UInt32(V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC) && nanoseconds > 0 {
            return MonotonicInstant(nanoseconds: nanoseconds)
        }
        return calls.now()
    }

    /// Waits for the newest frame and lends it to `body`, then re-queues it. The scoped form of
    /// `dequeueNewest` + `requeue` that the frame loop uses.
    public mutating func withNewestFrame(timeoutMilliseconds: Int32, _ body: (borrowing Frame) -> FrameUse) throws(Errno) -> FrameOutcome {
        guard let buffer = try dequeueNewest(timeoutMilliseconds: timeoutMilliseconds) else {
            switch lastWake {
            case .timedOut: return .timedOut
            case .sourceChanged: return .cameraLost(.sourceChanged(path: path))
            case .frame, .nothingNew: return .nothingNew
            }
        }
        let use = body(Frame(bytes: buffer.bytes, layout: layout, timestamp: buffer.timestamp, sequence: UInt64(buffer.sequence)))
        try requeue(buffer)
        if use == .broken {
            statistics.delivered -= 1
            statistics.broken += 1
            return .brokenFrame
        }
        return .frame
    }
}
