/// The file systems whose files are the kernel's interfaces rather than data on a disk, by the
/// magic number `statfs(2)` reports (`f_type` as 32 bits; the values of `<linux/magic.h>`).
///
/// Their "regular files" lie about their size (0 or 4096 whatever they hold), and reading some of
/// them waits for the kernel (`/proc/kmsg`), so posewatch never takes one as an input file.
enum KernelFileSystem {
    static let magicNumbers: [UInt32] = [
        0x9FA0,  // proc
        0x6265_6572,  // sysfs
        0x6462_6720,  // debugfs
        0x7472_6163,  // tracefs
        0x7363_6673,  // securityfs
        0x0027_E0EB,  // cgroup
        0x6367_7270,  // cgroup2
        0x6265_6570,  // configfs
        0xCAFE_4A11,  // bpf
        0xDE5E_81E4,  // efivarfs
        0x6165_676C,  // pstore
    ]

    /// Whether `magic` (a `statfs` `f_type`) is one of the kernel's interface file systems.
    static func isKernelInterface(_ magic: UInt32) -> Bool { magicNumbers.contains(magic) }
}
