import CLinuxSystem

/// Process-wide memory settings, made once at start-up.
public enum ProcessMemory {
    /// Turns transparent huge pages off for this process and anything it starts.
    ///
    /// Debian's kernels (the image's included) back anonymous memory with 2 MiB pages wherever a
    /// 2 MiB-aligned range of it is touched or khugepaged later collapses one ("always"). A thread's
    /// stack uses a few kB of its 8 MiB and the heap a few MB, so a huge page there is mostly
    /// resident memory for nothing: in the system test's soak 10 MB of the camera loop's 14 MB of
    /// anonymous memory sat in huge pages, and the total grew by about 3.5 MB at a time no one
    /// chose, up to minutes after the start (docs/development.md). Nothing posewatch keeps is large
    /// enough to gain from them: the inference arena is 1.2 MB and the models are file mappings,
    /// which these kernels never back with huge pages. Every speed figure in docs/ was measured with
    /// them off for posewatch (the development machine's kernel uses "madvise").
    ///
    /// - Returns: nil when they are off, else why not (a kernel before 3.15: nothing to fix then).
    @discardableResult
    public static func declineTransparentHugePages() -> Errno? {
        pw_disable_transparent_huge_pages() == 0 ? nil : Errno.current
    }

    /// Whether transparent huge pages are off for this process (`declineTransparentHugePages`).
    public static var transparentHugePagesDeclined: Bool { pw_transparent_huge_pages_disabled() == 1 }
}
