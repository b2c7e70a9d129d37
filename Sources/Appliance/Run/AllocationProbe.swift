#if canImport(Glibc)
import Glibc
#endif

/// Counts heap allocations on the loop's thread when posewatch runs with the malloc-counting
/// preload (`Tests/Support/malloc-count-preload.c`); absent otherwise, at no cost. This is how the
/// "no allocation per frame" claim is measured on the real loop, not just in a test.
struct AllocationProbe {
    private typealias Counter = @convention(c) () -> UInt64
    private let counter: Counter?

    init() {
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pw_thread_allocation_count") {
            counter = unsafeBitCast(symbol, to: Counter.self)
        } else {
            counter = nil
        }
    }

    /// Allocations made by this thread so far, or nil without the preload.
    var count: UInt64? { counter?() }
}
