import Testing
import Glibc
@testable import LinuxSystem

@Suite(.serialized) struct PollPrimitivesTests {
    @Test func anExpiredTimerWakesPollAndIsAcknowledgedOnce() throws {
        let timer = try TimerDescriptor()
        let set = PollSet(count: 1)
        set.watch(timer.rawValue, in: 0)
        timer.arm(at: MonotonicInstant(nanoseconds: MonotonicInstant.now().nanoseconds + 20_000_000))
        let start = MonotonicInstant.now()
        let ready = try set.wait(timeoutMilliseconds: 2000)
        #expect(ready == 1)
        let waited = MonotonicInstant.now().nanoseconds - start.nanoseconds
        #expect(waited >= 15_000_000 && waited < 1_000_000_000)
        let readable = set.isReadable(0)
        #expect(readable)
        let first = timer.acknowledge(), second = timer.acknowledge()
        #expect(first == 1 && second == 0)
    }

    @Test func aDeadlineInThePastFiresAtOnce() throws {
        let timer = try TimerDescriptor()
        let set = PollSet(count: 1)
        set.watch(timer.rawValue, in: 0)
        timer.arm(at: MonotonicInstant(nanoseconds: 0))
        let ready = try set.wait(timeoutMilliseconds: 1000)
        #expect(ready == 1)
    }

    @Test func aDisarmedTimerLetsPollTimeOut() throws {
        let timer = try TimerDescriptor()
        let set = PollSet(count: 1)
        set.watch(timer.rawValue, in: 0)
        timer.arm(at: MonotonicInstant(nanoseconds: MonotonicInstant.now().nanoseconds + 5_000_000))
        timer.disarm()
        let ready = try set.wait(timeoutMilliseconds: 30)
        #expect(ready == 0)
    }

    @Test func aSignalArrivesAsAReadableEventNotAnInterruption() throws {
        let signals = try SignalDescriptor(signals: [SIGUSR1])
        let set = PollSet(count: 2)
        set.watch(-1, in: 0)  // a parked slot is ignored
        set.watch(signals.rawValue, in: 1)
        raise(SIGUSR1)  // to this thread, which has SIGUSR1 blocked
        let ready = try set.wait(timeoutMilliseconds: 1000)
        let readable = set.isReadable(1)
        #expect(ready == 1 && readable)
        let first = signals.nextSignal(), second = signals.nextSignal()
        #expect(first == SIGUSR1 && second == nil)
    }
}
