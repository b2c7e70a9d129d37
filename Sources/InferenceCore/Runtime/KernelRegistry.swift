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

/// Which operators (and versions) the runtime supports, and which variant runs each node.
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

    /// The variant for a node, chosen per operator, dtype and shape at Prepare: an optimised
    /// kernel when one exists for this node and CPU, else the reference.
    func optimizedKernel(for kernel: Kernel, node: OperatorNode, model: Model) -> OptimizedKernel? {
        guard allowsOptimizedVariants else { return nil }
        let variant = preferredVariant ?? .best
        guard variant != .reference, variant.isSupported else { return nil }
        return OptimizedKernel.make(for: kernel, node: node, model: model, variant: variant)
    }

    /// Supported operators and the newest version of each this runtime understands.
    static let supportedVersions: [BuiltinOperator: Int] = [
        .add: 5, .averagePool2D: 3, .concatenation: 4, .conv2D: 8, .depthwiseConv2D: 7, .dequantize: 6,
        .fullyConnected: 12, .logistic: 3, .maxPool2D: 3, .mul: 7, .relu: 3, .reluN1To1: 2, .relu6: 3,
        .reshape: 2, .resizeBilinear: 4, .softmax: 3, .tanh: 3, .mean: 3, .sub: 5, .div: 2, .squeeze: 2,
        .cast: 6, .argMax: 3, .expandDims: 2, .sqrt: 2, .pack: 4, .unpack: 4, .floorDiv: 3, .gatherND: 5,
        .quantize: 3, .log: 2,
    ]

    /// Names of the supported operators, sorted.
    public static var supportedOperatorNames: [String] { supportedVersions.keys.map(\.name).sorted() }
}
