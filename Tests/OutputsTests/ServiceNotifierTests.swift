import Foundation
import LinuxSystem
import Testing
@testable import Outputs

/// A datagram socket bound where a service manager would listen.
final class NotifyListener {
    let fd: Int32
    let path: String
    let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 8)
    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        let isAbstract = bytes.first == UInt8(ascii: "@")
        if isAbstract { bytes[0] = 0 } else { unlink(path) }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)! + bytes.count + (isAbstract ? 0 : 1))
        let result = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard result == 0 else { throw Errno.current }
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }
    func receive() -> String? {
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &bytes, bytes.count, 0)
        return count < 0 ? nil : String(decoding: bytes.prefix(count), as: UTF8.self)
    }
    /// Receives and drops one datagram without allocating (allocation tests).
    func discard() {
        _ = recv(fd, scratch.baseAddress, scratch.count, 0)
    }
    deinit {
        scratch.deallocate()
        close(fd)
        if !path.hasPrefix("@") { unlink(path) }
    }
}

@Suite struct ServiceNotifierTests {
    @Test func notificationsArriveAsOneDatagramEachOnAFilesystemSocket() throws {
        let listener = try NotifyListener(path: NSTemporaryDirectory() + "posewatch-notify-\(getpid()).sock")
        let notifier = try ServiceNotifier(socketPath: listener.path)
        #expect(notifier.isEnabled)
        try notifier.ready()
        try notifier.status("squats, 14.9 fps\nsecond line\u{1b}")
        try notifier.watchdog()
        try notifier.reloading()
        try notifier.stopping()
        try notifier.send("READY=1\nSTATUS=reloaded")
        let received = (0..<6).map { _ in listener.receive() }
        #expect(received == ["READY=1", #"STATUS=squats, 14.9 fps\nsecond line\u{1b}"#, "WATCHDOG=1", "RELOADING=1", "STOPPING=1", "READY=1\nSTATUS=reloaded"])
    }

    @Test func anAbstractSocketNamedWithAnAtSignWorks() throws {
        let listener = try NotifyListener(path: "@posewatch-test-notify-\(getpid())")
        let notifier = try ServiceNotifier(socketPath: listener.path)
        try notifier.watchdog()
        #expect(listener.receive() == "WATCHDOG=1")
    }

    @Test func withoutANotifySocketEveryNotificationIsANoOp() throws {
        let notifier = ServiceNotifier()
        #expect(!notifier.isEnabled)
        try notifier.ready()
        try notifier.status("anything")
    }

    @Test func aRelativeOrEmptySocketAddressIsRefused() {
        #expect(throws: SystemCallError.self) { try ServiceNotifier(socketPath: "relative/socket") }
        #expect(throws: SystemCallError.self) { try ServiceNotifier(socketPath: "@") }
    }

    @Test func theWatchdogPingsAtHalfOfWatchdogUSecAndOnlyForItsOwnPID() {
        #expect(WatchdogSchedule.parse(microseconds: "30000000", pid: nil, ownPID: 42)?.pingIntervalNanoseconds == 15_000_000_000)
        #expect(WatchdogSchedule.parse(microseconds: "30000000", pid: "42", ownPID: 42) == WatchdogSchedule(timeoutNanoseconds: 30_000_000_000))
        #expect(WatchdogSchedule.parse(microseconds: "30000000", pid: "41", ownPID: 42) == nil)
        #expect(WatchdogSchedule.parse(microseconds: "0", pid: nil, ownPID: 42) == nil)
        #expect(WatchdogSchedule.parse(microseconds: "-5", pid: nil, ownPID: 42) == nil)
        #expect(WatchdogSchedule.parse(microseconds: "soon", pid: nil, ownPID: 42) == nil)
        #expect(WatchdogSchedule.parse(microseconds: nil, pid: "42", ownPID: 42) == nil)
    }
}
