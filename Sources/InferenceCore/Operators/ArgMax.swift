// ARG_MAX along one constant axis (int8, uint8, int32, float32 → int32/int64); the optimised
// hook scans 8-bit data with SIMD.
import CKernels

// MARK: registration

extension OperatorTable {
    static let argMax = [
        OperatorRegistration(.argMax, newestVersion: 3) { (context, node) throws(ModelError) in
            try context.prepareArgMax(node)
        },
    ]
}

// MARK: parameters (computed by Prepare, read by Eval)

/// ARG_MAX over one axis: input viewed as [outer, axis, inner].
struct ArgMaxParameters: Sendable {
    var outer = 0, axisSize = 0, inner = 0
    var inputType: TensorElementType = .int8
    var outputType: TensorElementType = .int32
}

// MARK: Prepare

extension PrepareContext {
    func prepareArgMax(_ node: OperatorNode) throws(ModelError) -> PreparedKernel {
        try expectCounts(node, inputs: 2...2, outputs: 1)
        let input = try inputInfo(node, 0), axisTensor = try inputInfo(node, 1), output = outputInfo(node)
        try expectType(node, input, "input", .int8, .uint8, .int32, .float32)
        try expectType(node, output, "output", .int32, .int64)
        guard let axes = constantIntegers(axisTensor), axes.count == 1 else {
            throw unsupported(node, "the axis must be one constant integer")
        }
        let axis = try normalizedAxis(node, axes[0], rank: input.shape.count)
        var expected = input.shape
        expected.remove(at: axis)
        try expectShape(node, output, "output", expected)
        var p = ArgMaxParameters()
        p.outer = product(input.shape[..<axis])
        p.axisSize = input.shape[axis]
        p.inner = product(input.shape[(axis + 1)...])
        guard p.axisSize > 0 else { throw fail(node, "axis \(axis) has size 0") }
        p.inputType = input.elementType
        p.outputType = output.elementType
        return argMaxKernel(p)
    }
}

// MARK: Eval, as Prepare leaves it for each node

extension PrepareContext {
    func argMaxKernel(_ p: ArgMaxParameters) -> PreparedKernel {
        PreparedKernel(reference: { tensors in
            ReferenceKernels.argMax(p, input: tensors.input(0), output: tensors.output())
            return nil
        }, optimized: optimizedVariant.flatMap { OptimizedKernel.argMax(p, variant: $0) })
    }
}

// MARK: reference kernels

extension ReferenceKernels {
    @inline(__always)
    static func loadForComparison(_ pointer: UnsafeRawPointer, _ i: Int, _ type: TensorElementType) -> Float {
        switch type {
        case .int8: Float(pointer.load(fromByteOffset: i, as: Int8.self))
        case .uint8: Float(pointer.load(fromByteOffset: i, as: UInt8.self))
        case .int32: Float(pointer.load(fromByteOffset: i * 4, as: Int32.self))
        default: pointer.load(fromByteOffset: i * 4, as: Float.self)
        }
    }

    /// ARG_MAX: the first index of the largest value along the axis (ties keep the earlier index).
    static func argMax(_ p: ArgMaxParameters, input: UnsafeRawPointer, output: UnsafeMutableRawPointer) {
        for outer in 0..<p.outer {
            for inner in 0..<p.inner {
                let base = outer * p.axisSize * p.inner + inner
                if p.inputType == .int32 {
                    // Compare int32 exactly (not through Float).
                    var best = input.load(fromByteOffset: base * 4, as: Int32.self)
                    var bestIndex = 0
                    for i in 1..<p.axisSize {
                        let value = input.load(fromByteOffset: (base + i * p.inner) * 4, as: Int32.self)
                        if value > best { best = value; bestIndex = i }
                    }
                    store(bestIndex, p, output, outer * p.inner + inner)
                } else {
                    var best = loadForComparison(input, base, p.inputType)
                    var bestIndex = 0
                    for i in 1..<p.axisSize {
                        let value = loadForComparison(input, base + i * p.inner, p.inputType)
                        if value > best { best = value; bestIndex = i }
                    }
                    store(bestIndex, p, output, outer * p.inner + inner)
                }
            }
        }
    }

    @inline(__always)
    static func store(_ index: Int, _ p: ArgMaxParameters, _ output: UnsafeMutableRawPointer, _ position: Int) {
        if p.outputType == .int32 {
            output.storeBytes(of: Int32(truncatingIfNeeded: index), toByteOffset: position * 4, as: Int32.self)
        } else {
            output.storeBytes(of: Int64(index), toByteOffset: position * 8, as: Int64.self)
        }
    }
}

// MARK: optimised kernels

extension OptimizedKernel {
    /// ARG_MAX over int8/uint8 data.
    static func argMax(_ p: ArgMaxParameters, variant: KernelVariant) -> OptimizedKernel? {
        guard variant.hasOptimizedKernels, p.inputType == .int8 || p.inputType == .uint8,
              p.outputType == .int32 || p.outputType == .int64, p.axisSize > 0
        else { return nil }
        let signed: Int32 = p.inputType == .int8 ? 1 : 0, wide: Int32 = p.outputType == .int64 ? 1 : 0
        let outer = Int64(p.outer), axisSize = Int64(p.axisSize), inner = Int64(p.inner)
        return OptimizedKernel(name: "argmax-8bit", variant: variant, evaluate: { tensors in
            pw_argmax_8bit(signed, outer, axisSize, inner, tensors.input(0), tensors.output(), wide)
            return nil
        })
    }
}
