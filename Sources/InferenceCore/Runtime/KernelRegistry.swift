/// A kernel implementation for one operator and dtype. The reference variants are the oracle that
/// optimized ones (SIMD, a worker pool) are tested against; Prepare picks one per node.
public enum KernelVariant: String, Sendable, CaseIterable {
    /// Portable, allocation-free reference kernels with TFLite's exact integer semantics.
    case reference
}

/// Which operators (and versions) the runtime supports, and which variant runs each node.
public struct KernelRegistry: Sendable {
    /// Whether Prepare may choose optimized variants; `false` forces the reference kernels.
    public var allowsOptimizedVariants: Bool

    /// The registry that always runs the reference kernels.
    public static let reference = KernelRegistry(allowsOptimizedVariants: false)

    public init(allowsOptimizedVariants: Bool = true) {
        self.allowsOptimizedVariants = allowsOptimizedVariants
    }

    /// The variant for a node, chosen at Prepare from the operator and its prepared parameters
    /// (dtype, shapes). Only reference kernels exist so far; optimized ones (SIMD, worker pool)
    /// will be picked here when `allowsOptimizedVariants` and the shape suits them, and tested
    /// against `.reference` on every fixture (OperatorFixtureTests).
    func variant(for code: BuiltinOperator, kernel: Kernel) -> KernelVariant { .reference }

    /// Supported operators and the newest version of each this runtime understands.
    static let supportedVersions: [BuiltinOperator: Int] = [
        .add: 5, .averagePool2D: 3, .concatenation: 4, .conv2D: 8, .depthwiseConv2D: 7, .dequantize: 6,
        .fullyConnected: 12, .logistic: 3, .maxPool2D: 3, .mul: 7, .relu: 3, .reluN1To1: 2, .relu6: 3,
        .reshape: 2, .resizeBilinear: 4, .softmax: 3, .tanh: 3, .mean: 3, .sub: 5, .div: 2, .squeeze: 2,
        .cast: 6, .argMax: 3, .expandDims: 2, .sqrt: 2, .pack: 4, .unpack: 4, .floorDiv: 3, .gatherND: 5,
        .quantize: 3,
    ]

    /// Names of the supported operators, sorted.
    public static var supportedOperatorNames: [String] { supportedVersions.keys.map(\.name).sorted() }
}
