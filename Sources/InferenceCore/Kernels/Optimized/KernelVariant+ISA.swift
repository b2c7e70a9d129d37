import CKernels

extension KernelVariant {
    /// The CKernels ISA constant for an optimised variant.
    var isa: Int32 {
        switch self {
        case .reference, .scalar: Int32(PW_ISA_SCALAR)
        case .sse41: Int32(PW_ISA_SSE41)
        case .avx2: Int32(PW_ISA_AVX2)
        case .avx512vnni: Int32(PW_ISA_AVX512VNNI)
        case .neon: Int32(PW_ISA_NEON)
        case .neondot: Int32(PW_ISA_NEONDOT)
        }
    }

    /// Whether this variant can run on this CPU (cpuid / AT_HWCAP).
    public var isSupported: Bool { self == .reference || pw_isa_supported(isa) != 0 }

    /// The fastest variant this CPU supports.
    public static var best: KernelVariant {
        let isa = pw_best_isa()
        return allCases.first { $0 != .reference && $0.isa == isa } ?? .scalar
    }
}

extension KernelVariant {
    /// Whether optimised hooks can make a kernel in this variant here (not the reference, and
    /// this CPU runs the ISA); each hook checks it, so a test may ask for any variant.
    var hasOptimizedKernels: Bool { self != .reference && pw_isa_supported(isa) != 0 }
}
