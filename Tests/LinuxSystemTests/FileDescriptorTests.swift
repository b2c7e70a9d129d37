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
}
