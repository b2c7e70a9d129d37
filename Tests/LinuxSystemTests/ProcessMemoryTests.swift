import LinuxSystem
import Testing

@Suite struct ProcessMemoryTests {
    /// The kernel takes the request and reports it back (prctl's PR_GET_THP_DISABLE): posewatch
    /// makes it first thing, and the system test reads the running service's THP_enabled line.
    @Test func transparentHugePagesAreDeclined() {
        #expect(ProcessMemory.declineTransparentHugePages() == nil)
        #expect(ProcessMemory.transparentHugePagesDeclined)
    }
}
