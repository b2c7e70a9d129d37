#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An open file descriptor with exactly one owner; closing happens in `deinit` or `close()`.
///
/// Noncopyable so an fd cannot be closed twice or used after close. Borrow `rawValue` for a call;
/// never store it elsewhere.
public struct OwnedFileDescriptor: ~Copyable {
    /// The descriptor number, valid while this owner lives.
    public let rawValue: Int32

    /// Takes ownership of an already open descriptor.
    public init(adopting rawValue: Int32) {
        precondition(rawValue >= 0, "adopting an invalid file descriptor")
        self.rawValue = rawValue
    }

    /// `open(2)` with `O_CLOEXEC` added, retrying EINTR.
    public static func open(
        _ path: String, flags: Int32, mode: mode_t = 0
    ) throws(SystemCallError) -> OwnedFileDescriptor {
        do {
            let fd = try retryingInterrupts { Glibc.open(path, flags | O_CLOEXEC, mode) }
            return OwnedFileDescriptor(adopting: fd)
        } catch {
            throw SystemCallError("open", path, error)
        }
    }

    /// Closes now instead of at the end of the owner's life.
    public consuming func close() {
        // deinit does the work; consuming ends the lifetime here.
    }

    deinit {
        // close(2) must not be retried on EINTR on Linux: the fd is released either way.
        _ = Glibc.close(rawValue)
    }
}

/// A read-only memory mapping of a whole file, unmapped when its owner ends.
///
/// The model loader keeps one of these for the model's lifetime so tensors can point straight into
/// the file (zero copy).
public struct MemoryMappedFile: ~Copyable {
    /// The mapped bytes; valid while this owner lives.
    public let bytes: UnsafeRawBufferPointer
    /// The path the file was opened from, for messages.
    public let path: String

    /// Maps `path` read-only (`open` + `fstat` + `mmap(PROT_READ, MAP_PRIVATE)`).
    /// An empty file maps to an empty buffer without calling mmap.
    public init(path: String) throws(SystemCallError) {
        let descriptor = try OwnedFileDescriptor.open(path, flags: O_RDONLY)
        var status = stat()
        guard fstat(descriptor.rawValue, &status) == 0 else {
            throw SystemCallError("fstat", path, .current)
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            throw SystemCallError("mmap", path, Errno(rawValue: EISDIR))
        }
        let bytes = try Self.map(descriptor: descriptor, size: Int(status.st_size), path: path)
        self.path = path
        self.bytes = bytes
    }

    private static func map(
        descriptor: borrowing OwnedFileDescriptor, size: Int, path: String
    ) throws(SystemCallError) -> UnsafeRawBufferPointer {
        if size == 0 { return UnsafeRawBufferPointer(start: nil, count: 0) }
        let address = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor.rawValue, 0)
        guard let address, address != MAP_FAILED else {
            throw SystemCallError("mmap", path, .current)
        }
        return UnsafeRawBufferPointer(start: address, count: size)
    }

    deinit {
        if let base = bytes.baseAddress {
            munmap(UnsafeMutableRawPointer(mutating: base), bytes.count)
        }
    }
}
