import CV4L2
import LinuxSystem
@testable import Capture
#if canImport(Glibc)
import Glibc
#endif

/// A scripted V4L2 driver behind the `V4L2SystemCalls` protocol: it answers the set-up ioctls
/// from a list of formats, keeps a real queue of mmap'd buffers, fills them when a test calls
/// `produce`, and fails any call with the errnos a test scripts. Time is a counter that `sleep`
/// advances, so back-off is tested without waiting.
final class MockV4L2: V4L2SystemCalls {
    struct ReadyBuffer {
        var index: Int
        var sequence: UInt32
        var timestampNanoseconds: Int64
        var bytesUsed: Int
        var flags: UInt32
    }

    // What the "camera" offers and how it behaves.
    var formats: [PixelFormatDescription]
    var capabilities: UInt32 = UInt32(V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_STREAMING)
    var acceptsFrameInterval = true
    /// When set, S_PARM answers with this interval whatever was asked (drivers snap to what they can do).
    var snapInterval: FrameInterval?
    /// The camera's rate when S_PARM is refused (G_PARM's answer), and the rate it snaps to.
    var defaultInterval = FrameInterval(numerator: 1, denominator: 30)
    var bufferLength = 640 * 480 * 2
    var driverBufferCount: UInt32?
    /// Whether the device node exists (open fails with ENOENT when not).
    var present = true
    /// Whether the driver takes VIDIOC_SUBSCRIBE_EVENT, and the events waiting for DQEVENT.
    var supportsEvents = false
    var pendingEvents: [UInt32] = []
    /// The controls the driver offers, by V4L2 control id (none by default: QUERYCTRL says EINVAL).
    var controls: [UInt32: Control] = [:]

    /// One control of the scripted driver.
    struct Control {
        var type = V4L2_CTRL_TYPE_INTEGER
        var minimum: Int32 = 0
        var maximum: Int32 = 1
        var step: Int32 = 1
        var flags: UInt32 = 0
        var value: Int32 = 0
        /// The menu indices QUERYMENU answers for (menu controls).
        var menuItems: Set<Int32> = []
        /// The errno S_CTRL fails with, when set.
        var refusal: Int32? = nil
    }

    // Scripted failures: errnos returned, in order, by the next calls of that request.
    var ioctlFailures: [UInt: [Int32]] = [:]
    var pollFailures: [Int32] = []
    var pollErrorEvents = false

    // The driver's state.
    var fd: Int32 = -1
    var openCount = 0
    var openAttemptTimes: [Int64] = []
    var closeCount = 0
    var mappedCount = 0
    var unmappedCount = 0
    var mapped: [Int: UnsafeMutableRawPointer] = [:]
    var streaming = false
    var driverQueue: [Int] = []        // buffers the driver holds, in QBUF order
    var ready: [ReadyBuffer] = []      // filled buffers waiting for DQBUF
    var queueLog: [Int] = []           // every QBUF index, in order
    var requests: [UInt] = []          // every ioctl request, in order
    var wouldBlockDequeues = 0         // DQBUFs answered EAGAIN (libv4l2 logs each one)
    var lastFormat = v4l2_format()
    var lastParameters = v4l2_streamparm()
    var controlWrites: [(id: UInt32, value: Int32)] = []   // every accepted S_CTRL, in order
    var sequence: UInt32 = 0
    var clock: Int64 = 1_000_000_000
    var sleeps: [Int32] = []

    init(formats: [PixelFormatDescription] = MockV4L2.webcamFormats) {
        self.formats = formats
    }

    deinit {
        for (_, pointer) in mapped { pointer.deallocate() }
    }

    static let webcamFormats: [PixelFormatDescription] = [
        PixelFormatDescription(fourCC: .yuyv, name: "YUYV 4:2:2", isCompressed: false, isEmulated: false, frameSizes: [
            FrameSizeDescription(width: 640, height: 480, intervals: [FrameInterval(numerator: 1, denominator: 30), FrameInterval(numerator: 1, denominator: 15)]),
            FrameSizeDescription(width: 320, height: 240, intervals: [FrameInterval(numerator: 1, denominator: 30), FrameInterval(numerator: 1, denominator: 15)]),
            FrameSizeDescription(width: 160, height: 120, intervals: [FrameInterval(numerator: 1, denominator: 30)]),
        ]),
        PixelFormatDescription(fourCC: .mjpeg, name: "Motion-JPEG", isCompressed: true, isEmulated: false, frameSizes: [
            FrameSizeDescription(width: 640, height: 480, intervals: [FrameInterval(numerator: 1, denominator: 30)]),
        ]),
    ]

    // MARK: the driver side, for tests

    /// The driver fills the oldest queued buffer and makes it ready; `skipSequences` frames are
    /// counted but never delivered (the driver had no free buffer).
    @discardableResult
    func produce(bytesUsed: Int? = nil, flags: UInt32 = 0, skipSequences: UInt32 = 0, intervalNanoseconds: Int64 = 33_333_333, fill: UInt8? = nil) -> Int? {
        guard streaming, !driverQueue.isEmpty else { return nil }
        let index = driverQueue.removeFirst()
        sequence += skipSequences
        clock += intervalNanoseconds * Int64(skipSequences + 1)
        let used = bytesUsed ?? Int(lastFormat.fmt.pix.sizeimage)
        if let pointer = mapped[index] { pointer.storeBytes(of: fill ?? UInt8(truncatingIfNeeded: sequence), as: UInt8.self) }
        ready.append(ReadyBuffer(index: index, sequence: sequence, timestampNanoseconds: clock, bytesUsed: used,
                                 flags: flags | UInt32(V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC)))
        sequence += 1
        return index
    }

    /// The camera is unplugged: every call on the open descriptor fails with ENODEV, and opening
    /// fails with ENOENT until `plugIn`.
    func unplug() {
        present = false
        ready.removeAll()
    }

    func plugIn() { present = true }

    // MARK: V4L2SystemCalls

    func open(_ path: String, flags: Int32) -> Int32 {
        openAttemptTimes.append(clock)
        guard present else { errno = ENOENT; return -1 }
        openCount += 1
        fd = 10 + Int32(openCount)
        streaming = false
        driverQueue = []
        ready = []
        sequence = 0
        return fd
    }

    func close(_ fd: Int32) -> Int32 {
        closeCount += 1
        return 0
    }

    func ioctl(_ fd: Int32, _ request: UInt, _ argument: UnsafeMutableRawPointer) -> Int32 {
        requests.append(request)
        if var failures = ioctlFailures[request], !failures.isEmpty {
            errno = failures.removeFirst()
            ioctlFailures[request] = failures
            return -1
        }
        guard present, fd == self.fd else { errno = ENODEV; return -1 }
        switch request {
        case PW_VIDIOC_QUERYCAP:
            let capability = argument.assumingMemoryBound(to: v4l2_capability.self)
            capability.pointee.capabilities = capabilities | UInt32(V4L2_CAP_DEVICE_CAPS)
            capability.pointee.device_caps = capabilities
        case PW_VIDIOC_ENUM_FMT:
            let description = argument.assumingMemoryBound(to: v4l2_fmtdesc.self)
            let index = Int(description.pointee.index)
            guard index < formats.count else { errno = EINVAL; return -1 }
            description.pointee.pixelformat = formats[index].fourCC.rawValue
            description.pointee.flags = formats[index].isEmulated ? UInt32(V4L2_FMT_FLAG_EMULATED) : 0
        case PW_VIDIOC_ENUM_FRAMESIZES:
            let size = argument.assumingMemoryBound(to: v4l2_frmsizeenum.self)
            guard let format = formats.first(where: { $0.fourCC.rawValue == size.pointee.pixel_format }),
                  Int(size.pointee.index) < format.frameSizes.count else { errno = EINVAL; return -1 }
            let entry = format.frameSizes[Int(size.pointee.index)]
            size.pointee.type = V4L2_FRMSIZE_TYPE_DISCRETE.rawValue
            size.pointee.discrete = v4l2_frmsize_discrete(width: UInt32(entry.width), height: UInt32(entry.height))
        case PW_VIDIOC_ENUM_FRAMEINTERVALS:
            let interval = argument.assumingMemoryBound(to: v4l2_frmivalenum.self)
            guard let format = formats.first(where: { $0.fourCC.rawValue == interval.pointee.pixel_format }),
                  let size = format.frameSizes.first(where: { $0.width == Int(interval.pointee.width) && $0.height == Int(interval.pointee.height) }),
                  Int(interval.pointee.index) < size.intervals.count else { errno = EINVAL; return -1 }
            let entry = size.intervals[Int(interval.pointee.index)]
            interval.pointee.type = V4L2_FRMIVAL_TYPE_DISCRETE.rawValue
            interval.pointee.discrete = v4l2_fract(numerator: entry.numerator, denominator: entry.denominator)
        case PW_VIDIOC_S_FMT:
            let format = argument.assumingMemoryBound(to: v4l2_format.self)
            let fourCC = FourCC(rawValue: format.pointee.fmt.pix.pixelformat)
            let width = Int(format.pointee.fmt.pix.width), height = Int(format.pointee.fmt.pix.height)
            let layout = FrameLayout(pixelFormat: PixelFormat(fourCC: fourCC)!, width: width, height: height)
            format.pointee.fmt.pix.bytesperline = UInt32(layout.bytesPerLine)
            format.pointee.fmt.pix.sizeimage = UInt32(fourCC == .mjpeg ? width * height : layout.minimumByteCount)
            bufferLength = Int(format.pointee.fmt.pix.sizeimage)
            lastFormat = format.pointee
        case PW_VIDIOC_S_PARM:
            guard acceptsFrameInterval else { errno = EINVAL; return -1 }
            let parameters = argument.assumingMemoryBound(to: v4l2_streamparm.self)
            parameters.pointee.parm.capture.capability = UInt32(V4L2_CAP_TIMEPERFRAME)
            lastParameters = parameters.pointee
            if let snapInterval {
                parameters.pointee.parm.capture.timeperframe = v4l2_fract(numerator: snapInterval.numerator, denominator: snapInterval.denominator)
            }
        case PW_VIDIOC_G_PARM:
            let parameters = argument.assumingMemoryBound(to: v4l2_streamparm.self)
            parameters.pointee.parm.capture.timeperframe = v4l2_fract(numerator: defaultInterval.numerator, denominator: defaultInterval.denominator)
        case PW_VIDIOC_REQBUFS:
            let request = argument.assumingMemoryBound(to: v4l2_requestbuffers.self)
            if let driverBufferCount { request.pointee.count = driverBufferCount }
        case PW_VIDIOC_QUERYBUF:
            let buffer = argument.assumingMemoryBound(to: v4l2_buffer.self)
            buffer.pointee.length = UInt32(bufferLength)
            buffer.pointee.m.offset = buffer.pointee.index * 0x10_0000
        case PW_VIDIOC_QBUF:
            let buffer = argument.assumingMemoryBound(to: v4l2_buffer.self)
            let index = Int(buffer.pointee.index)
            guard !driverQueue.contains(index), !ready.contains(where: { $0.index == index }) else { errno = EINVAL; return -1 }
            driverQueue.append(index)
            queueLog.append(index)
        case PW_VIDIOC_DQBUF:
            guard !ready.isEmpty else { wouldBlockDequeues += 1; errno = EAGAIN; return -1 }
            let next = ready.removeFirst()
            let buffer = argument.assumingMemoryBound(to: v4l2_buffer.self)
            buffer.pointee.index = UInt32(next.index)
            buffer.pointee.sequence = next.sequence
            buffer.pointee.bytesused = UInt32(next.bytesUsed)
            buffer.pointee.flags = next.flags
            buffer.pointee.timestamp = timeval(tv_sec: Int(next.timestampNanoseconds / 1_000_000_000),
                                               tv_usec: Int(next.timestampNanoseconds % 1_000_000_000 / 1000))
        case PW_VIDIOC_SUBSCRIBE_EVENT:
            guard supportsEvents else { errno = ENOTTY; return -1 }
        case PW_VIDIOC_DQEVENT:
            guard !pendingEvents.isEmpty else { errno = ENOENT; return -1 }
            argument.assumingMemoryBound(to: v4l2_event.self).pointee.type = pendingEvents.removeFirst()
        case PW_VIDIOC_QUERYCTRL:
            let query = argument.assumingMemoryBound(to: v4l2_queryctrl.self)
            guard let control = controls[query.pointee.id] else { errno = EINVAL; return -1 }
            query.pointee.type = control.type.rawValue
            query.pointee.minimum = control.minimum
            query.pointee.maximum = control.maximum
            query.pointee.step = control.step
            query.pointee.flags = control.flags
        case PW_VIDIOC_QUERYMENU:
            let item = argument.assumingMemoryBound(to: v4l2_querymenu.self)
            guard let control = controls[item.pointee.id], control.menuItems.contains(Int32(item.pointee.index)) else { errno = EINVAL; return -1 }
        case PW_VIDIOC_G_CTRL:
            let setting = argument.assumingMemoryBound(to: v4l2_control.self)
            guard let control = controls[setting.pointee.id] else { errno = EINVAL; return -1 }
            setting.pointee.value = control.value
        case PW_VIDIOC_S_CTRL:
            // Like the kernel's control framework: read-only → EACCES, a menu item it lacks →
            // EINVAL, an integer clamped to the range and snapped to the step, the value taken written back.
            let setting = argument.assumingMemoryBound(to: v4l2_control.self)
            guard var control = controls[setting.pointee.id] else { errno = EINVAL; return -1 }
            if let refusal = control.refusal { errno = refusal; return -1 }
            if control.flags & UInt32(V4L2_CTRL_FLAG_READ_ONLY) != 0 { errno = EACCES; return -1 }
            var value = setting.pointee.value
            if control.type == V4L2_CTRL_TYPE_MENU {
                guard control.menuItems.contains(value) else { errno = EINVAL; return -1 }
            } else {
                value = min(max(value, control.minimum), control.maximum)
                value = control.minimum + (value - control.minimum) / max(control.step, 1) * max(control.step, 1)
            }
            control.value = value
            controls[setting.pointee.id] = control
            controlWrites.append((setting.pointee.id, value))
            setting.pointee.value = value
        case PW_VIDIOC_STREAMON:
            streaming = true
        case PW_VIDIOC_STREAMOFF:
            streaming = false
        default:
            errno = ENOTTY
            return -1
        }
        return 0
    }

    func mapBuffer(length: Int, fd: Int32, offset: Int64) -> UnsafeMutableRawPointer? {
        let index = Int(offset / 0x10_0000)
        let pointer = UnsafeMutableRawPointer.allocate(byteCount: length, alignment: 16)
        pointer.initializeMemory(as: UInt8.self, repeating: 0x80, count: length)
        mapped[index] = pointer
        mappedCount += 1
        return pointer
    }

    func unmapBuffer(_ address: UnsafeMutableRawPointer, length: Int) -> Int32 {
        if let entry = mapped.first(where: { $0.value == address }) {
            mapped[entry.key] = nil
            address.deallocate()
        }
        unmappedCount += 1
        return 0
    }

    func poll(_ fd: Int32, events: Int16, returnedEvents: inout Int16, timeoutMilliseconds: Int32) -> Int32 {
        if !pollFailures.isEmpty {
            errno = pollFailures.removeFirst()
            return -1
        }
        if !present || pollErrorEvents {
            returnedEvents = Int16(POLLERR)
            return 1
        }
        let event = !pendingEvents.isEmpty && events & Int16(POLLPRI) != 0
        if ready.isEmpty && !event {
            clock += Int64(timeoutMilliseconds) * 1_000_000
            return 0
        }
        returnedEvents = (ready.isEmpty ? 0 : Int16(POLLIN)) | (event ? Int16(POLLPRI) : 0)
        return 1
    }

    func now() -> MonotonicInstant { MonotonicInstant(nanoseconds: clock) }

    func sleep(milliseconds: Int32) {
        sleeps.append(milliseconds)
        clock += Int64(milliseconds) * 1_000_000
    }
}
