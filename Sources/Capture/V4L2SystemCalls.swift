import CV4L2
import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// The system calls the camera makes, as one protocol so tests can put a mock in their place.
///
/// Everything the camera code does to the kernel (and to the clock, so back-off can be tested
/// without waiting) goes through a value of this type. `CameraDevice` and `CameraSource` are
/// generic over it, so the per-frame path is specialised and makes direct calls, not calls
/// through an existential. Each function reports failure the C way: -1 (or nil) with `errno` set.
public protocol V4L2SystemCalls {
    /// `v4l2_open(3)`: opens a video node (following symlinks such as `/dev/v4l/by-id/…`).
    func open(_ path: String, flags: Int32) -> Int32
    /// `v4l2_close(3)`.
    func close(_ fd: Int32) -> Int32
    /// `v4l2_ioctl(3)` with one pointer argument.
    func ioctl(_ fd: Int32, _ request: UInt, _ argument: UnsafeMutableRawPointer) -> Int32
    /// `v4l2_mmap(3)` of one buffer, shared, read/write; nil with `errno` on failure.
    func mapBuffer(length: Int, fd: Int32, offset: Int64) -> UnsafeMutableRawPointer?
    /// `v4l2_munmap(3)`.
    func unmapBuffer(_ address: UnsafeMutableRawPointer, length: Int) -> Int32
    /// `poll(2)` on one descriptor: 1 with `returnedEvents` set, 0 on timeout, -1 with `errno`.
    func poll(_ fd: Int32, events: Int16, returnedEvents: inout Int16, timeoutMilliseconds: Int32) -> Int32
    /// `clock_gettime(CLOCK_MONOTONIC)`, the clock V4L2 stamps buffers with.
    func now() -> MonotonicInstant
    /// Sleeps (used only between re-open attempts while the camera is gone).
    func sleep(milliseconds: Int32)
}

/// The real system calls: libv4l2 for the device (so libv4lconvert can emulate formats a camera
/// lacks), `poll(2)` and `CLOCK_MONOTONIC` for time.
public struct LibV4L2SystemCalls: V4L2SystemCalls, Sendable {
    public init() {}

    @inlinable public func open(_ path: String, flags: Int32) -> Int32 { pw_v4l2_open(path, flags) }
    @inlinable public func close(_ fd: Int32) -> Int32 { pw_v4l2_close(fd) }
    @inlinable public func ioctl(_ fd: Int32, _ request: UInt, _ argument: UnsafeMutableRawPointer) -> Int32 {
        pw_v4l2_ioctl(fd, request, argument)
    }
    @inlinable public func mapBuffer(length: Int, fd: Int32, offset: Int64) -> UnsafeMutableRawPointer? {
        let address = pw_v4l2_mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, offset)
        return address == MAP_FAILED ? nil : address
    }
    @inlinable public func unmapBuffer(_ address: UnsafeMutableRawPointer, length: Int) -> Int32 {
        pw_v4l2_munmap(address, length)
    }
    @inlinable public func poll(_ fd: Int32, events: Int16, returnedEvents: inout Int16, timeoutMilliseconds: Int32) -> Int32 {
        var descriptor = pollfd(fd: fd, events: events, revents: 0)
        let result = Glibc.poll(&descriptor, 1, timeoutMilliseconds)
        returnedEvents = descriptor.revents
        return result
    }
    @inlinable public func now() -> MonotonicInstant { .now() }
    public func sleep(milliseconds: Int32) {
        var request = timespec(tv_sec: Int(milliseconds / 1000), tv_nsec: Int(milliseconds % 1000) * 1_000_000)
        var remaining = timespec()
        while nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
    }
}

extension V4L2SystemCalls {
    /// The one ioctl wrapper: retries EINTR (through `retryingInterrupts`, the one place that policy
    /// lives), returns false for EAGAIN (a non-blocking DQBUF with nothing ready) and throws every
    /// other errno.
    @inlinable @inline(__always)
    func control<Argument>(_ fd: Int32, _ request: UInt, _ argument: inout Argument) throws(Errno) -> Bool {
        // The closure itself does not throw (errno is read by the retry helper), which keeps this
        // within what Swift 6.0's typed throws can check.
        try retryingInterruptsUnlessWouldBlock {
            withUnsafeMutablePointer(to: &argument) { ioctl(fd, request, UnsafeMutableRawPointer($0)) }
        } != nil
    }

    /// `control`, with a would-block answer treated as the failure it is for set-up ioctls, and
    /// the error named after the request and the device for messages.
    @inlinable
    func require<Argument>(_ fd: Int32, _ request: UInt, _ argument: inout Argument, path: String) throws(CaptureError) {
        let done: Bool
        do throws(Errno) {
            done = try control(fd, request, &argument)
        } catch {
            throw CaptureError.systemCall(call: V4L2Request.name(request), subject: path, errno: error)
        }
        if !done { throw CaptureError.systemCall(call: V4L2Request.name(request), subject: path, errno: .wouldBlock) }
    }
}

/// Names of the VIDIOC_* requests posewatch makes, for error messages.
public enum V4L2Request {
    public static func name(_ request: UInt) -> String {
        switch request {
        case PW_VIDIOC_QUERYCAP: "VIDIOC_QUERYCAP"
        case PW_VIDIOC_ENUM_FMT: "VIDIOC_ENUM_FMT"
        case PW_VIDIOC_ENUM_FRAMESIZES: "VIDIOC_ENUM_FRAMESIZES"
        case PW_VIDIOC_ENUM_FRAMEINTERVALS: "VIDIOC_ENUM_FRAMEINTERVALS"
        case PW_VIDIOC_G_FMT: "VIDIOC_G_FMT"
        case PW_VIDIOC_S_FMT: "VIDIOC_S_FMT"
        case PW_VIDIOC_G_PARM: "VIDIOC_G_PARM"
        case PW_VIDIOC_S_PARM: "VIDIOC_S_PARM"
        case PW_VIDIOC_REQBUFS: "VIDIOC_REQBUFS"
        case PW_VIDIOC_QUERYBUF: "VIDIOC_QUERYBUF"
        case PW_VIDIOC_QBUF: "VIDIOC_QBUF"
        case PW_VIDIOC_DQBUF: "VIDIOC_DQBUF"
        case PW_VIDIOC_STREAMON: "VIDIOC_STREAMON"
        case PW_VIDIOC_STREAMOFF: "VIDIOC_STREAMOFF"
        case PW_VIDIOC_QUERYCTRL: "VIDIOC_QUERYCTRL"
        case PW_VIDIOC_QUERYMENU: "VIDIOC_QUERYMENU"
        case PW_VIDIOC_G_CTRL: "VIDIOC_G_CTRL"
        case PW_VIDIOC_S_CTRL: "VIDIOC_S_CTRL"
        default: "ioctl 0x\(String(request, radix: 16))"
        }
    }
}
