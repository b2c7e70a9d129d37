#if canImport(Glibc)
import Glibc
#endif

/// A fixed set of descriptors for `poll(2)`, allocated once so waiting costs no allocation.
///
/// The loop registers its descriptors at start-up (camera, signals, timer) and keeps the slot
/// numbers; a slot's descriptor can be replaced (camera re-opened) or parked with -1 (camera lost),
/// which poll ignores.
public struct PollSet: ~Copyable {
    private let entries: UnsafeMutablePointer<pollfd>
    /// The number of slots.
    public let count: Int

    /// Makes `count` slots, all parked (fd -1).
    public init(count: Int) {
        precondition(count > 0)
        entries = .allocate(capacity: count)
        entries.initialize(repeating: pollfd(fd: -1, events: 0, revents: 0), count: count)
        self.count = count
    }

    /// Watches `descriptor` in `slot` for `events` (`POLLIN` by default); -1 parks the slot.
    public func watch(_ descriptor: Int32, in slot: Int, events: Int16 = Int16(POLLIN)) {
        precondition(slot >= 0 && slot < count)
        entries[slot] = pollfd(fd: descriptor, events: events, revents: 0)
    }

    /// Waits until a descriptor is ready or `timeoutMilliseconds` pass (-1: forever). Returns the
    /// number of ready slots (0 on timeout). EINTR is retried (signals arrive through signalfd).
    public func wait(timeoutMilliseconds: Int32) throws(Errno) -> Int {
        Int(try retryingInterrupts { poll(entries, nfds_t(count), timeoutMilliseconds) })
    }

    /// Whether `slot` reported input ready.
    public func isReadable(_ slot: Int) -> Bool { entries[slot].revents & Int16(POLLIN) != 0 }

    /// Whether `slot` reported an error or hang-up (a camera that went away).
    public func hasFailed(_ slot: Int) -> Bool {
        entries[slot].revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0
    }

    /// The slot's returned events, for callers that need more detail (`POLLPRI` for V4L2 events).
    public func returnedEvents(_ slot: Int) -> Int16 { entries[slot].revents }

    deinit {
        entries.deinitialize(count: count)
        entries.deallocate()
    }
}
