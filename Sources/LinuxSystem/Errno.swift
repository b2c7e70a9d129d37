#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A C `errno` value as a typed error. The static members name the values posewatch reacts to.
public struct Errno: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The raw `errno` number.
    public let rawValue: Int32

    /// Wraps a raw `errno` number.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's current `errno`.
    public static var current: Errno { Errno(rawValue: errno) }

    /// `EINTR`: a signal arrived; the call is retried by `retryingInterrupts`.
    public static let interrupted = Errno(rawValue: EINTR)
    /// `EAGAIN`: a non-blocking call has nothing to do right now.
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    /// `ENOENT`: no such file, device or line.
    public static let noSuchFileOrDirectory = Errno(rawValue: ENOENT)
    /// `ENODEV`: the device went away (a camera unplugged).
    public static let noSuchDevice = Errno(rawValue: ENODEV)
    /// `ENXIO`: no such device or address (some drivers say this after an unplug).
    public static let noSuchDeviceOrAddress = Errno(rawValue: ENXIO)
    /// `EIO`: the device failed an I/O request.
    public static let ioError = Errno(rawValue: EIO)
    /// `EBUSY`: someone else holds the resource (a GPIO line, a streaming camera).
    public static let busy = Errno(rawValue: EBUSY)
    /// `EACCES`: permission denied.
    public static let permissionDenied = Errno(rawValue: EACCES)
    /// `EINVAL`: the request or its argument is invalid for this device.
    public static let invalidArgument = Errno(rawValue: EINVAL)
    /// `ENOTTY`: the device does not implement this ioctl.
    public static let notSupportedByDevice = Errno(rawValue: ENOTTY)

    /// `strerror(3)`'s text, e.g. "No such device".
    public var description: String { String(cString: strerror(rawValue)) }
}

/// Runs a system call until it stops failing with `EINTR`.
///
/// This is the one place the EINTR retry policy lives. `call` returns the C result; a value of -1
/// is read as failure and `errno` is thrown.
@inlinable
public func retryingInterrupts<Result: FixedWidthInteger>(_ call: () -> Result) throws(Errno) -> Result {
    while true {
        let result = call()
        if result != -1 { return result }
        let error = Errno.current
        if error == .interrupted { continue }
        throw error
    }
}

/// Like `retryingInterrupts`, but a non-blocking call that would block returns `nil` instead of
/// throwing, so callers can tell "nothing ready" from a failure.
@inlinable
public func retryingInterruptsUnlessWouldBlock<Result: FixedWidthInteger>(
    _ call: () -> Result
) throws(Errno) -> Result? {
    do {
        return try retryingInterrupts(call)
    } catch where error == .wouldBlock || error.rawValue == EWOULDBLOCK {
        return nil
    }
}

/// A failed system call with the thing it was about, for one-line error messages:
/// `open /dev/video0: No such file or directory`.
public struct SystemCallError: Error, Sendable, CustomStringConvertible {
    /// The C call or ioctl that failed (`open`, `VIDIOC_S_FMT`).
    public let call: String
    /// The path or name of the object the call was made on.
    public let subject: String
    /// The `errno` the call failed with.
    public let errno: Errno
    /// Set when posewatch itself refused the object (a FIFO given where a regular file is read).
    /// A one-byte enum rather than a string on purpose: with a third string in this error, Swift
    /// 6.3 debug test builds crashed in `swift_getErrorValue` (a bad pointer, always 0x…fd98)
    /// where the typed error was boxed as `any Error` (ServiceNotifierTests' `#expect(throws:)`
    /// every time, RobustnessTests under parallel load).
    public let refusal: InputRefusal?

    /// Describes a failed call on `subject`; `refusal`, when given, replaces errno's text.
    public init(_ call: String, _ subject: String, _ errno: Errno, refusal: InputRefusal? = nil) {
        self.call = call
        self.subject = subject
        self.errno = errno
        self.refusal = refusal
    }

    /// What posewatch says instead of errno's text when it refused the object itself.
    public var explanation: String? { refusal?.explanation }

    /// What went wrong, without the call and subject: the explanation, or errno's text.
    public var reason: String { explanation ?? errno.description }

    /// `open /dev/video0: No such device`, the subject escaped (it is a path or name from outside).
    public var description: String { "\(call) \(MessageExcerpt.path(subject)): \(reason)" }
}

/// Why posewatch refuses a path as an input file before reading it (or as an output before writing it).
public enum InputRefusal: UInt8, Sendable {
    case standardInput, directory, fifo, characterDevice, blockDevice, socket, unknownKind
    /// A file of the kernel's own file systems (`/proc`, `/sys`, …): not a file on a disk.
    case kernelInterface
    /// An output path that names one of the command's inputs.
    case outputIsAnInput

    /// `is a FIFO, not a regular file; give the path of a regular file`.
    public var explanation: String {
        let kind: String
        switch self {
        case .standardInput: return "standard input is not read; give the path of a regular file"
        case .outputIsAnInput: return "is one of this command's inputs, which writing it would destroy; give another path for the output"
        case .kernelInterface: return "is a kernel interface (/proc, /sys), not a file on a disk; give the path of a regular file"
        case .directory: kind = "a directory"
        case .fifo: kind = "a FIFO"
        case .characterDevice: kind = "a character device"
        case .blockDevice: kind = "a block device"
        case .socket: kind = "a socket"
        case .unknownKind: kind = "of an unknown kind"
        }
        return "is \(kind), not a regular file; give the path of a regular file"
    }
}
