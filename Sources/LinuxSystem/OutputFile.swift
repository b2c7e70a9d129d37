#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A file a command writes its result to (`snapshot --output`, `model run --output`), checked
/// before anything is computed and written whole or not at all.
///
/// - An output that is one of the command's inputs (the same file by device and inode, whatever
///   the spelling: `./a.y4m`, a symbolic or hard link) is refused: writing it would destroy the
///   input, possibly while it is still being read.
/// - An existing output that is not a regular file is refused like an input (`is a FIFO, …`):
///   writing a FIFO waits for a reader, and a device (`/dev/sda`) is no place for a PNG.
/// - The bytes go to a new file beside the output, which is renamed over it only once every byte
///   is written: a full disk or a failed write leaves the old file as it was and no half file.
///   An existing file keeps its permission bits; a symbolic link keeps pointing where it did
///   (the file it names is replaced).
public struct OutputFile: Sendable {
    /// The path as given, for messages.
    public let path: String
    /// Where the bytes go: `path`, or the file a symbolic link at `path` names.
    private let target: String
    /// The permission bits of the file replaced, or 0644 for a new one.
    private let mode: mode_t

    /// Checks `path` as an output of a command that reads `inputs` (paths that do not exist, or
    /// are not files, are skipped: they are refused where they are read).
    public init(path: String, notOverwriting inputs: [String]) throws(SystemCallError) {
        self.path = path
        var status = stat()
        guard lstat(path, &status) == 0 else {
            let error = Errno.current
            guard error == .noSuchFileOrDirectory else { throw SystemCallError("open", path, error) }
            target = path
            mode = 0o644
            return
        }
        if status.st_mode & S_IFMT == S_IFLNK {
            guard let resolved = realpath(path, nil) else { throw SystemCallError("open", path, .current) }
            target = String(cString: resolved)
            free(resolved)
            guard stat(target, &status) == 0 else { throw SystemCallError("open", path, .current) }
        } else {
            target = path
        }
        if status.st_mode & S_IFMT != S_IFREG {
            // The null device is an input's stand-in for an empty file, but never an output: the
            // rename would replace /dev/null itself.
            try OwnedFileDescriptor.refuseUnlessRegular(status, path: path, allowingNullDevice: false)
        }
        mode = status.st_mode & 0o7777
        for input in inputs {
            var inputStatus = stat()
            guard stat(input, &inputStatus) == 0 else { continue }
            if inputStatus.st_dev == status.st_dev, inputStatus.st_ino == status.st_ino {
                throw SystemCallError("write", path, .invalidArgument, refusal: .outputIsAnInput)
            }
        }
    }

    /// Writes `bytes` to a new file in the output's directory and renames it over the output.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(SystemCallError) {
        var template = Array(Self.temporaryPath(beside: target).utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw SystemCallError("write", path, .current) }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        let temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        var isOpen = true
        do throws(SystemCallError) {
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw SystemCallError("write", path, .current)
                }
                offset += written
            }
            guard fchmod(descriptor, mode) == 0 else { throw SystemCallError("write", path, .current) }
            // close(2) reports the errors of a file system that writes back late (NFS, a full disk).
            isOpen = false
            guard Glibc.close(descriptor) == 0 else { throw SystemCallError("write", path, .current) }
            guard rename(temporary, target) == 0 else { throw SystemCallError("write", path, .current) }
        } catch {
            if isOpen { _ = Glibc.close(descriptor) }
            unlink(temporary)
            throw error
        }
    }

    /// Writes `bytes` (see `write(_:)` for an unsafe buffer).
    public func write(_ bytes: [UInt8]) throws(SystemCallError) {
        // withUnsafeBytes rethrows untyped errors (Swift 6.0): carry the typed one out by hand.
        let failure: SystemCallError? = bytes.withUnsafeBytes { buffer in
            do throws(SystemCallError) { try write(buffer) } catch { return error }
            return nil
        }
        if let failure { throw failure }
    }

    /// `DIR/.NAME.XXXXXX`: hidden, in the output's own directory so the rename stays on one file system.
    static func temporaryPath(beside path: String) -> String {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        return directory + "." + name + ".XXXXXX"
    }
}
