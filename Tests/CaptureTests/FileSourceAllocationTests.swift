import Testing
@testable import Capture
#if canImport(Glibc)
import Glibc
#endif

/// The malloc-counting preload library's count (Tests/Support/run-allocation-tests.sh), when loaded.
private enum CaptureAllocationCounter {
    typealias Count = @convention(c) () -> UInt64
    /// The calling thread's allocations when the library provides them, else the process-wide count.
    static let function: Count? = {
        guard let handle = dlopen(nil, RTLD_NOW) else { return nil }
        guard let symbol = dlsym(handle, "pw_thread_allocation_count") ?? dlsym(handle, "pw_allocation_count") else { return nil }
        return unsafeBitCast(symbol, to: Count.self)
    }()
}

@Suite struct FileSourceAllocationTests {
    @Test("Reading a Y4M clip through its one-frame window and converting each frame allocates nothing after the first",
          .enabled(if: CaptureAllocationCounter.function != nil, "needs the malloc counter: run Tests/Support/run-allocation-tests.sh"))
    func y4mFramesAfterTheFirstAllocateNothing() throws {
        let directory = temporaryDirectory()
        defer { removeDirectory(directory) }
        let path = directory + "/clip.y4m"
        var bytes = Array("YUV4MPEG2 W160 H120 F15:1 C420jpeg\n".utf8)
        // Frames larger than the 64 KiB header read, so every frame is a fresh pread.
        for index in 0..<40 { bytes += Array("FRAME\n".utf8) + [UInt8](repeating: UInt8(index), count: 160 * 120 * 3 / 2) }
        writeFile(path, bytes)
        var source = try Y4MFileSource(path: path)
        var converter = FrameConverter(tensorWidth: 64, tensorHeight: 64)
        let tensor = UnsafeMutablePointer<UInt8>.allocate(capacity: 64 * 64 * 3)
        defer { tensor.deallocate() }
        #expect(source.nextFrame(timeoutMilliseconds: 0) { converter.convert($0, region: .letterbox, into: tensor) == nil ? .broken : .used } == .frame)
        var delivered = 0
        let count = CaptureAllocationCounter.function!
        let before = count()
        while source.nextFrame(timeoutMilliseconds: 0, { converter.convert($0, region: .letterbox, into: tensor) == nil ? .broken : .used }) == .frame {
            delivered += 1
        }
        let allocations = count() - before
        #expect(delivered == 39)
        #expect(allocations == 0)
    }
}
