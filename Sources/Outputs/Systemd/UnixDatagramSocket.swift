import CLinuxShims
import LinuxSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An unconnected `AF_UNIX` datagram socket that sends to one address: journald's
/// `/run/systemd/journal/socket` or `$NOTIFY_SOCKET`.
///
/// Each send names the address (`sendto`) instead of connecting once, the way libsystemd does, so a
/// restarted journald or service manager is reached without reopening anything.
///
/// A class so that the journal logger and the notifier can hold one without noncopyable optionals;
/// it still has exactly one owner of its descriptor, closed when the last reference goes.
public final class UnixDatagramSocket {
    private let descriptor: OwnedFileDescriptor
    private var address: sockaddr_un
    private let addressLength: socklen_t
    /// The address as given (`/run/systemd/journal/socket`, `@/org/freedesktop/systemd1/notify`).
    public let path: String

    /// Opens a non-blocking socket that sends to `path`: a filesystem path, or an abstract-namespace
    /// name written with a leading `@` (as systemd writes `$NOTIFY_SOCKET`).
    ///
    /// Non-blocking because the frame loop must never wait for a logger: a full socket buffer
    /// drops the entry (and counts it) instead.
    /// `sendBufferSize` bounds the largest datagram (the kernel caps it at `net.core.wmem_max`).
    public init(sendingTo path: String, sendBufferSize: Int32 = 8 * 1024 * 1024) throws(SystemCallError) {
        // The address is checked before a socket is opened for it.
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        var bytes = Array(path.utf8)
        guard bytes.count > 1, bytes.count < capacity, bytes[0] == UInt8(ascii: "/") || bytes[0] == UInt8(ascii: "@") else {
            throw SystemCallError("socket address", path, .invalidArgument)
        }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw SystemCallError("socket", path, .current) }
        descriptor = OwnedFileDescriptor(adopting: fd)
        let isAbstract = bytes[0] == UInt8(ascii: "@")
        if isAbstract { bytes[0] = 0 }  // an abstract name starts with NUL and is not NUL-terminated
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)!
        self.addressLength = socklen_t(pathOffset + bytes.count + (isAbstract ? 0 : 1))
        self.address = address
        self.path = path
        // Large entries are common enough (summaries); ask for a big send buffer, as libsystemd does.
        var size = sendBufferSize
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Sends one datagram. Throws `Errno` (`EMSGSIZE`: too large for a datagram; `EAGAIN`: the
    /// receiver's queue is full; `ENOENT`/`ECONNREFUSED`: nobody listens).
    public func send(_ bytes: UnsafeRawBufferPointer) throws(Errno) {
        if let failure = attemptSend(bytes) { throw failure }
    }

    /// `send` for callers inside closures that cannot throw typed errors: the failure, or nil.
    public func attemptSend(_ bytes: UnsafeRawBufferPointer) -> Errno? {
        var address = self.address
        let fd = descriptor.rawValue, length = addressLength
        // The pointer closures only return the result: typed throws does not cross them on Swift 6.0.
        while true {
            let sent = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), $0, length)
                }
            }
            if sent >= 0 { return nil }
            let error = Errno.current
            if error != .interrupted { return error }
        }
    }

    /// Sends one empty datagram carrying `passedDescriptor` (SCM_RIGHTS).
    public func send(descriptor passedDescriptor: Int32) throws(Errno) {
        var address = self.address
        let fd = descriptor.rawValue, length = addressLength
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                pw_send_descriptor(fd, $0, length, passedDescriptor)
            }
        }
        if result < 0 { throw Errno.current }
    }
}
