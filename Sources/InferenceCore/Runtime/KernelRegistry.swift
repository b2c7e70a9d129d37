/// A kernel implementation for one operator and dtype. The reference variants are the oracle that
/// optimized ones (SIMD, a worker pool) are tested against; Prepare picks one per node.
///
/// Optimised variants are named by ISA (CKernels): each operator's tile is in the node's kernel
/// name (e.g. `conv-gemm-8x16c4-avx512vnni`). `allCases` is the one list of variants that the
/// bit-exactness tests and `posewatch bench` iterate.
public enum KernelVariant: String, Sendable, CaseIterable {
    /// Portable, allocation-free reference kernels with TFLite's exact integer semantics.
    case reference
    /// Portable C (the compiler's baseline vectorisation): the fallback on any CPU.
    case scalar
    /// x86-64 SSE4.1.
    case sse41
    /// x86-64 AVX2 (vpmaddwd GEMM, vpmuldq requantization).
    case avx2
    /// x86-64 AVX-512 VNNI (vpdpbusd GEMM).
    case avx512vnni
    /// aarch64 NEON without dot product (Cortex-A72, Raspberry Pi 4).
    case neon
    /// aarch64 NEON with SDOT (Cortex-A76, Raspberry Pi 5).
    case neondot
}

/// Which kernel variant the nodes run and on how many threads. (Which operators and versions the
/// runtime supports is `OperatorTable`'s: each operator registers itself there.)
public struct KernelRegistry: Sendable {
    /// Whether Prepare may choose optimized variants; `false` forces the reference kernels.
    public var allowsOptimizedVariants: Bool
    /// The optimised variant to use; nil picks the best one this CPU supports at run time.
    public var preferredVariant: KernelVariant?
    /// Threads one invoke may use (the caller included); nil means one per online CPU.
    public var threadCount: Int?

    /// The registry that always runs the reference kernels.
    public static let reference = KernelRegistry(allowsOptimizedVariants: false)

    public init(allowsOptimizedVariants: Bool = true, preferredVariant: KernelVariant? = nil, threadCount: Int? = nil) {
        self.allowsOptimizedVariants = allowsOptimizedVariants
        self.preferredVariant = preferredVariant
        self.threadCount = threadCount
    }

    /// Threads an interpreter's worker pool gets.
    var resolvedThreadCount: Int { allowsOptimizedVariants ? max(1, threadCount ?? WorkerPool.cpuCount) : 1 }

    /// The optimised variant Prepare makes kernels for: the preferred one, else the best this CPU
    /// supports; nil when only the reference kernels may run. Each operator's optimised hook then
    /// decides per node (dtype, shape) whether it has a kernel in that variant.
    var optimizedVariant: KernelVariant? {
        guard allowsOptimizedVariants else { return nil }
        let variant = preferredVariant ?? .best
        guard variant != .reference, variant.isSupported else { return nil }
        return variant
    }

    /// Names of the supported operators, sorted (from `OperatorTable`, where each registers itself).
    public static var supportedOperatorNames: [String] { OperatorTable.supportedVersions.keys.map(\.name).sorted() }
}
