import CLinuxSystem
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

    /// Opens a file posewatch reads as input (a clip, a model, a config or keypoint file): a
    /// regular file, or the null device, which reads as an empty file (`--config /dev/null`).
    ///
    /// Anything else is refused with a message that names what it is and what to give instead
    /// (`open /tmp/x: is a FIFO, not a regular file; give the path of a regular file`), and
    /// without waiting: `stat` decides before anything is opened, so a FIFO never blocks `open`
    /// waiting for a writer and a device never sees an `open` (a watchdog device arms on open).
    /// The open itself is `O_NONBLOCK` in case the path is swapped for a FIFO between the two
    /// calls, and `fstat` checks what was really opened.
    ///
    /// Files of the kernel's own file systems (`/proc`, `/sys`, debugfs, …) are refused too: they
    /// call themselves regular files but are not files on a disk. Their size says 0 or 4096 whatever
    /// they hold, and some block a reader until the kernel has news (`/proc/kmsg`), which would
    /// hang a command, or the frame loop on SIGHUP. The descriptor stays `O_NONBLOCK` (a regular
    /// file's reads ignore the flag), so a read that would wait fails at once instead.
    /// "-" (standard input by convention) is refused too: inputs are named by path.
    public static func openRegularFile(_ path: String) throws(SystemCallError) -> OwnedFileDescriptor {
        if path == "-" {
            throw SystemCallError("open", path, .invalidArgument, refusal: .standardInput)
        }
        var status = stat()
        if stat(path, &status) != 0 { throw SystemCallError("open", path, .current) }
        try refuseUnlessRegular(status, path: path)
        let descriptor = try open(path, flags: O_RDONLY | O_NONBLOCK | O_NOCTTY)
        guard fstat(descriptor.rawValue, &status) == 0 else { throw SystemCallError("fstat", path, .current) }
        try refuseUnlessRegular(status, path: path)
        var fileSystem: UInt32 = 0
        guard pw_file_system_type(descriptor.rawValue, &fileSystem) == 0 else { throw SystemCallError("fstatfs", path, .current) }
        if status.st_mode & S_IFMT == S_IFREG, KernelFileSystem.isKernelInterface(fileSystem) {
            throw SystemCallError("open", path, .invalidArgument, refusal: .kernelInterface)
        }
        return descriptor
    }

    /// The null device's number, 1:3 in glibc's `makedev` encoding (`major << 8 | minor` for
    /// numbers this small).
    static let nullDevice: dev_t = 1 << 8 | 3

    /// Throws the refusal for anything but a regular file or (when allowed) the null device.
    static func refuseUnlessRegular(_ status: stat, path: String, allowingNullDevice: Bool = true) throws(SystemCallError) {
        let kind = status.st_mode & S_IFMT
        if kind == S_IFREG || (allowingNullDevice && kind == S_IFCHR && status.st_rdev == nullDevice) { return }
        let refusal: InputRefusal
        switch kind {
        case S_IFDIR: refusal = .directory
        case S_IFIFO: refusal = .fifo
        case S_IFCHR: refusal = .characterDevice
        case S_IFBLK: refusal = .blockDevice
        case S_IFSOCK: refusal = .socket
        default: refusal = .unknownKind
        }
        throw SystemCallError("open", path, Errno(rawValue: kind == S_IFDIR ? EISDIR : EINVAL), refusal: refusal)
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

    /// Maps `path` read-only (`OwnedFileDescriptor.openRegularFile` + `fstat` +
    /// `mmap(PROT_READ, MAP_PRIVATE)`): anything but a regular file is refused without blocking.
    /// An empty file maps to an empty buffer without calling mmap.
    public init(path: String) throws(SystemCallError) {
        let descriptor = try OwnedFileDescriptor.openRegularFile(path)
        var status = stat()
        guard fstat(descriptor.rawValue, &status) == 0 else {
            throw SystemCallError("fstat", path, .current)
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
