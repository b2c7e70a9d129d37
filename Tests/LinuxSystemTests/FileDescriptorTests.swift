import Testing
import Glibc
@testable import LinuxSystem

@Suite struct FileDescriptorTests {
    @Test func openingAMissingFileNamesThePathAndTheReason() {
        do {
            _ = try OwnedFileDescriptor.open("/nonexistent/posewatch-test", flags: O_RDONLY)
            Issue.record("open of a missing file succeeded")
        } catch {
            #expect(error.description == "open /nonexistent/posewatch-test: No such file or directory")
        }
    }

    @Test func memoryMappingAFileShowsItsBytes() throws {
        let path = "/tmp/posewatch-mmap-test-\(getpid())"
        let file = fopen(path, "wb")!
        fputs("posewatch", file)
        fclose(file)
        defer { unlink(path) }
        let mapping = try MemoryMappedFile(path: path)
        #expect(Array(mapping.bytes) == Array("posewatch".utf8))
    }

    @Test func retryingInterruptsReturnsWouldBlockAsNil() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        #expect(fcntl(fds[0], F_SETFL, O_NONBLOCK) == 0)
        let reader = OwnedFileDescriptor(adopting: fds[0])
        let writer = OwnedFileDescriptor(adopting: fds[1])
        var byte: UInt8 = 0
        let nothing = try retryingInterruptsUnlessWouldBlock { read(reader.rawValue, &byte, 1) }
        #expect(nothing == nil)
        _ = withUnsafePointer(to: UInt8(7)) { write(writer.rawValue, $0, 1) }
        let one = try retryingInterruptsUnlessWouldBlock { read(reader.rawValue, &byte, 1) }
        #expect(one == 1 && byte == 7)
    }

    // MARK: input files: regular files only, refused without blocking

    /// A fresh directory under /tmp for one test; the caller removes it.
    static func scratchDirectory() -> String {
        var template = Array("/tmp/posewatch-fd-test-XXXXXX".utf8CString)
        let created = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!).map { String(cString: $0) } }
        return created!
    }

    /// What `openRegularFile` says about `path`; nil when it opened it.
    static func refusal(of path: String) -> SystemCallError? {
        do {
            _ = try OwnedFileDescriptor.openRegularFile(path)
            return nil
        } catch {
            return error
        }
    }

    @Test("A FIFO given as an input file is refused at once, named a FIFO, instead of waiting for a writer")
    func aFIFOIsRefused() throws {
        let directory = Self.scratchDirectory()
        defer { _ = system("rm -rf '\(directory)'") }
        let path = directory + "/model.tflite"
        #expect(mkfifo(path, 0o600) == 0)
        // With no writer, a plain open(O_RDONLY) of this FIFO would never return: reaching the
        // next line at all is half of what this test checks.
        let error = try #require(Self.refusal(of: path))
        #expect(error.description == "open \(path): is a FIFO, not a regular file; give the path of a regular file")
        #expect(throws: SystemCallError.self) { _ = try MemoryMappedFile(path: path) }
    }

    @Test("/dev/zero and a directory are refused as a character device and a directory")
    func devicesAndDirectoriesAreRefused() throws {
        let zero = try #require(Self.refusal(of: "/dev/zero"))
        #expect(zero.description == "open /dev/zero: is a character device, not a regular file; give the path of a regular file")
        let directory = Self.scratchDirectory()
        defer { _ = system("rm -rf '\(directory)'") }
        let folder = try #require(Self.refusal(of: directory))
        #expect(folder.reason == "is a directory, not a regular file; give the path of a regular file")
        #expect(folder.errno == Errno(rawValue: EISDIR))
        do {
            _ = try MemoryMappedFile(path: "/dev/zero")
            Issue.record("mapped /dev/zero")
        } catch {
            #expect(error.reason.hasPrefix("is a character device"))
        }
    }

    @Test("A Unix socket is refused as a socket")
    func aSocketIsRefused() throws {
        let directory = Self.scratchDirectory()
        defer { _ = system("rm -rf '\(directory)'") }
        let path = directory + "/socket"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        let error = try #require(Self.refusal(of: path))
        #expect(error.reason == "is a socket, not a regular file; give the path of a regular file")
    }

    @Test("'-' for standard input is refused with what to give instead")
    func aDashIsRefused() throws {
        let error = try #require(Self.refusal(of: "-"))
        #expect(error.description == "open -: standard input is not read; give the path of a regular file")
    }

    @Test("A pipe on standard input, named /dev/stdin, is refused as a FIFO")
    func standardInputThatIsAPipeIsRefused() throws {
        // /dev/stdin is fd 0, whatever it is; make it a pipe for the length of the test.
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let saved = dup(0)
        #expect(dup2(fds[0], 0) == 0)
        let error = Self.refusal(of: "/dev/stdin")
        dup2(saved, 0)
        close(saved); close(fds[0]); close(fds[1])
        #expect(error?.reason.hasPrefix("is a FIFO") == true, "\(String(describing: error))")
    }

    @Test("A regular file opens (O_NONBLOCK, which a regular file's reads ignore), and /dev/null reads as an empty file")
    func regularFilesAndTheNullDeviceOpen() throws {
        let directory = Self.scratchDirectory()
        defer { _ = system("rm -rf '\(directory)'") }
        let path = directory + "/config.toml"
        let file = fopen(path, "w")!
        fputs("[models]\n", file)
        fclose(file)
        let descriptor = try OwnedFileDescriptor.openRegularFile(path)
        #expect(fcntl(descriptor.rawValue, F_GETFL) & O_NONBLOCK != 0)
        var first: UInt8 = 0
        #expect(read(descriptor.rawValue, &first, 1) == 1 && first == UInt8(ascii: "["))
        #expect(fcntl(descriptor.rawValue, F_GETFD) & FD_CLOEXEC != 0)
        let null = try OwnedFileDescriptor.openRegularFile("/dev/null")
        var byte: UInt8 = 0
        #expect(read(null.rawValue, &byte, 1) == 0)
        #expect(try MemoryMappedFile(path: "/dev/null").bytes.isEmpty)
    }

    @Test("Files of /proc and /sys are refused as kernel interfaces, /proc/kmsg at once instead of waiting for kernel messages",
          arguments: ["/proc/kmsg", "/proc/self/status", "/proc/version", "/sys/kernel/mm/transparent_hugepage/enabled"])
    func kernelInterfaceFilesAreRefused(path: String) throws {
        var status = stat()
        // /proc/self/status and /proc/version are always there; a container may hide /sys or /proc/kmsg.
        if path.hasPrefix("/sys") || path == "/proc/kmsg" {
            guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return }
        }
        let error = try #require(Self.refusal(of: path))
        #expect(error.description == "open \(path): is a kernel interface (/proc, /sys), not a file on a disk; give the path of a regular file")
        #expect(throws: SystemCallError.self) { _ = try MemoryMappedFile(path: path) }
    }

    @Test("The kernel interface check knows procfs and sysfs, and not the file systems files live on")
    func kernelFileSystemMagicNumbers() {
        #expect(KernelFileSystem.isKernelInterface(0x9FA0))  // proc
        #expect(KernelFileSystem.isKernelInterface(0x6265_6572))  // sysfs
        #expect(!KernelFileSystem.isKernelInterface(0xEF53))  // ext4
        #expect(!KernelFileSystem.isKernelInterface(0x0102_1994))  // tmpfs
        #expect(!KernelFileSystem.isKernelInterface(0x794C_7630))  // overlayfs
    }
}
