import CLinuxShims
import LinuxSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// journald's native-protocol socket.
public final class JournalSocket {
    /// Where journald listens on every systemd system.
    public static let defaultPath = "/run/systemd/journal/socket"

    private let socket: UnixDatagramSocket
    /// Where entries are sent.
    public var path: String { socket.path }
    /// Entries that went through a memfd because they did not fit in a datagram.
    public private(set) var entriesSentByDescriptor = 0

    /// Opens a socket that sends to journald at `path`. Opening succeeds even when nobody listens;
    /// `isReachable(path:)` tells whether a journal is there. Entries larger than about
    /// `sendBufferSize` travel in a memfd.
    public init(path: String = JournalSocket.defaultPath, sendBufferSize: Int32 = 8 * 1024 * 1024) throws(SystemCallError) {
        socket = try UnixDatagramSocket(sendingTo: path, sendBufferSize: sendBufferSize)
    }

    /// Whether a socket file exists at `path` (journald's presence test, as sd_booted-style checks do).
    public static func isReachable(path: String = JournalSocket.defaultPath) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFSOCK
    }

    /// Sends one encoded entry. An entry too large for a datagram is written into a sealed memfd and
    /// the descriptor is passed instead, as systemd documents for the native protocol.
    public func send(_ entry: UnsafeRawBufferPointer) throws(Errno) {
        do {
            try socket.send(entry)
        } catch where error.rawValue == EMSGSIZE || error.rawValue == ENOBUFS {
            let memfd = pw_memfd_create_sealed("journal-entry", entry.baseAddress, entry.count)
            guard memfd >= 0 else { throw Errno.current }
            let owned = OwnedFileDescriptor(adopting: memfd)
            try socket.send(descriptor: owned.rawValue)
            entriesSentByDescriptor += 1
        }
    }
}
