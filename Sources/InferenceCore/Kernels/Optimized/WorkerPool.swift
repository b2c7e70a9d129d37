import CKernels

/// A fixed pool of worker threads (pthreads, CKernels' `pw_pool`) that one interpreter uses to
/// split an operator over output rows or pixels. Created once with the interpreter; running on it
/// allocates nothing. `threadCount` includes the calling thread.
final class WorkerPool {
    /// The C pool, nil when running single-threaded.
    let pointer: OpaquePointer?
    let threadCount: Int

    init(threadCount requested: Int) {
        let count = max(1, min(requested, Int(PW_MAX_THREADS)))
        threadCount = count
        pointer = count > 1 ? pw_pool_create(Int32(count)) : nil
    }

    deinit { pw_pool_destroy(pointer) }

    /// Online CPUs (sysconf): the default thread count.
    static var cpuCount: Int { Int(pw_cpu_count()) }
}
