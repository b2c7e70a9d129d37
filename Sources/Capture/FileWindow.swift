import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

/// A file read forward through one reusable buffer with `pread`: the memory a clip costs is the
/// buffer (about one frame), whatever the clip's length. The clip sources read through it, and so
/// does `replay`'s keypoint-file reader. Owns the descriptor and the buffer.
///
/// Why not map the whole clip, as the file sources once did: every page a mapping has touched
/// stays in the process's resident set until it is unmapped (a five-minute 640×480 Y4M clip
/// reached 549 MB RSS), and a clip truncated while it plays (`ffmpeg -y` writing the same path)
/// turns the next access of a mapped page into SIGBUS, where `pread` just comes back short.
/// The cost is one copy of each frame from the page cache, small next to the inference.
///
/// The buffer grows only when a caller asks for more than it holds, up to `maximumCapacity`:
/// a Y4M source sizes it for one frame up front and never grows it (no allocation per frame).
public struct FileWindow: ~Copyable {
    let descriptor: OwnedFileDescriptor
    /// The file's path, for messages.
    public let path: String
    /// The file's size when it was opened (a clip is not expected to grow while it plays).
    public let fileSize: Int
    /// The most `bytes(at:atLeast:)` ever holds (at most the file's size); a larger request is
    /// cut to this.
    public internal(set) var maximumCapacity: Int
    private var buffer: UnsafeMutableRawBufferPointer
    /// The file offset of `buffer[0]`, and how many bytes from there are valid.
    private var start = 0
    private var filled = 0
    /// Whether the valid bytes run to the end of the file (or to a read error).
    public private(set) var reachesEnd = false
    /// The error that stopped the last read early, if one did (EIO from a failing SD card).
    public private(set) var readError: Errno?

    /// Opens `path` (a regular file only; see `OwnedFileDescriptor.openRegularFile`) with a
    /// buffer of `capacity` bytes that may grow to `maximumCapacity`.
    public init(path: String, capacity: Int, maximumCapacity: Int) throws(SystemCallError) {
        let descriptor = try OwnedFileDescriptor.openRegularFile(path)
        var status = stat()
        guard fstat(descriptor.rawValue, &status) == 0 else { throw SystemCallError("fstat", path, .current) }
        // Frames are read front to back: let the kernel read ahead further than by default.
        _ = posix_fadvise(descriptor.rawValue, 0, 0, POSIX_FADV_SEQUENTIAL)
        self.descriptor = descriptor
        self.path = path
        self.fileSize = Int(status.st_size)
        // Never more than the file holds: a 40-byte file costs no 64 KiB header buffer.
        self.maximumCapacity = Swift.max(Swift.min(maximumCapacity, fileSize), 1)
        buffer = .allocate(byteCount: Swift.min(Swift.max(capacity, 1), self.maximumCapacity), alignment: 16)
    }

    deinit { buffer.deallocate() }

    /// Bytes the buffer holds now (what a clip costs in memory, whatever its length).
    public var capacity: Int { buffer.count }

    /// Grows the buffer to hold `count` bytes now (at start-up), so reads of that size never
    /// allocate later. The bytes it held are dropped.
    public mutating func reserve(_ count: Int) {
        let wanted = Swift.min(count, maximumCapacity)
        guard wanted > buffer.count else { return }
        buffer.deallocate()
        buffer = .allocate(byteCount: wanted, alignment: 16)
        start = 0
        filled = 0
        reachesEnd = false
    }

    /// The file's bytes from offset `position`: at least `minimum` of them (cut to
    /// `maximumCapacity`) unless the file ends first, then everything to its end. Valid until the
    /// next call. Served from the buffer when it already holds them; otherwise one refill of the
    /// whole buffer from `position`.
    public mutating func bytes(at position: Int, atLeast minimum: Int) -> UnsafeRawBufferPointer {
        let wanted = Swift.min(Swift.max(minimum, 0), maximumCapacity)
        if position >= start && position <= start + filled
            && (position + wanted <= start + filled || reachesEnd) {
            return view(from: position)
        }
        if wanted > buffer.count {
            // Only a request larger than any before allocates: doubling keeps that rare.
            let grown = Swift.min(Swift.max(wanted, 2 * buffer.count), maximumCapacity)
            buffer.deallocate()
            buffer = .allocate(byteCount: grown, alignment: 16)
        }
        start = position
        filled = 0
        readError = nil
        while filled < buffer.count {
            let count = pread(descriptor.rawValue, buffer.baseAddress! + filled, buffer.count - filled, off_t(position + filled))
            if count > 0 { filled += count; continue }
            if count < 0 && errno == EINTR { continue }
            if count < 0 { readError = .current }
            break
        }
        reachesEnd = filled < buffer.count
        return view(from: position)
    }

    private func view(from position: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: buffer.baseAddress! + (position - start), count: start + filled - position)
    }
}
