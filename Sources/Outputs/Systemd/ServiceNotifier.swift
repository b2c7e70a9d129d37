import LinuxSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// How often systemd expects `WATCHDOG=1`, read from `$WATCHDOG_USEC` (set by `WatchdogSec=`).
public struct WatchdogSchedule: Sendable, Equatable {
    /// systemd's timeout: no ping for this long and the service is killed and restarted.
    public var timeoutNanoseconds: Int64
    /// How often to ping: half the timeout, as sd_watchdog_enabled(3) recommends.
    public var pingIntervalNanoseconds: Int64 { timeoutNanoseconds / 2 }

    public init(timeoutNanoseconds: Int64) { self.timeoutNanoseconds = timeoutNanoseconds }

    /// Parses `$WATCHDOG_USEC` and `$WATCHDOG_PID` like sd_watchdog_enabled(3): nil when the watchdog
    /// is off, the value is not a positive integer, or `WATCHDOG_PID` names another process (the
    /// variables were inherited, not meant for us).
    public static func parse(microseconds: String?, pid: String?, ownPID: Int32 = getpid()) -> WatchdogSchedule? {
        guard let microseconds, let value = Int64(microseconds), value > 0, value < Int64.max / 1000 else { return nil }
        if let pid, !pid.isEmpty {
            guard let number = Int32(pid), number == ownPID else { return nil }
        }
        return WatchdogSchedule(timeoutNanoseconds: value * 1000)
    }

    /// The schedule from this process's environment.
    public static func fromEnvironment() -> WatchdogSchedule? {
        parse(microseconds: environment("WATCHDOG_USEC"), pid: environment("WATCHDOG_PID"))
    }
}

func environment(_ name: String) -> String? {
    guard let value = getenv(name) else { return nil }
    return String(cString: value)
}

/// Talks to the service manager over `$NOTIFY_SOCKET` (sd_notify(3)'s protocol, without libsystemd):
/// one datagram of `KEY=value` lines per state change. Filesystem and abstract (`@…`) sockets work.
///
/// When the process was not started by systemd (`$NOTIFY_SOCKET` unset) every call does nothing,
/// so the loop notifies unconditionally.
public struct ServiceNotifier {
    private let socket: UnixDatagramSocket?

    /// A notifier that sends to `path`.
    public init(socketPath path: String) throws(SystemCallError) {
        socket = try UnixDatagramSocket(sendingTo: path)
    }

    /// A notifier that sends nowhere.
    public init() { socket = nil }

    /// A notifier for `$NOTIFY_SOCKET`, or one that sends nowhere when it is unset or unusable.
    public static func fromEnvironment() -> ServiceNotifier {
        guard let path = environment("NOTIFY_SOCKET"), let notifier = try? ServiceNotifier(socketPath: path) else {
            return ServiceNotifier()
        }
        return notifier
    }

    /// Whether a service manager is listening (`$NOTIFY_SOCKET` was set).
    public var isEnabled: Bool { socket != nil }

    /// Sends a state string such as `"READY=1\nSTATUS=squats, 14.9 fps"`.
    public func send(_ state: String) throws(Errno) {
        guard let socket else { return }
        var state = state
        // withUTF8 only rethrows untyped errors, so the failure is carried out as a value.
        let failure = state.withUTF8 { socket.attemptSend(UnsafeRawBufferPointer($0)) }
        if let failure { throw failure }
    }

    /// Sends a literal state (no allocation: the watchdog ping comes from the frame loop).
    public func send(_ state: StaticString) throws(Errno) {
        guard let socket else { return }
        try socket.send(UnsafeRawBufferPointer(start: state.utf8Start, count: state.utf8CodeUnitCount))
    }

    /// Sends the bytes of `buffer` as one state datagram: the allocation-free way to send a
    /// changing `STATUS=` (compose it with `ByteBuffer.append(decimal:fractionDigits:)`).
    public func send(_ buffer: borrowing ByteBuffer) throws(Errno) {
        guard let socket else { return }
        if let failure = buffer.withBytes({ socket.attemptSend($0) }) { throw failure }
    }

    /// `READY=1`: start-up is finished (posewatch sends it once frames flow).
    public func ready() throws(Errno) { try send("READY=1" as StaticString) }
    /// `WATCHDOG=1`: the loop is alive.
    public func watchdog() throws(Errno) { try send("WATCHDOG=1" as StaticString) }
    /// `STOPPING=1`: shutdown has begun.
    public func stopping() throws(Errno) { try send("STOPPING=1" as StaticString) }
    /// `RELOADING=1`: a SIGHUP reload has begun (send `READY=1` when done).
    public func reloading() throws(Errno) { try send("RELOADING=1" as StaticString) }
    /// `STATUS=…`: one line shown by `systemctl status` (control characters are escaped: the
    /// protocol is line based, and the line reaches a terminal).
    public func status(_ text: String) throws(Errno) {
        try send("STATUS=" + MessageExcerpt.oneLine(text))
    }
}
