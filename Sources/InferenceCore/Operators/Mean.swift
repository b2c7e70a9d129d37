// MEAN over constant axes, int8 (TFLite's QuantizedMeanOrSum) and float32; needs arena scratch
// for one accumulator per output element.

// MARK: registration

extension OperatorTable {
    static let mean = [
        OperatorRegistration(.mean, newestVersion: 3) { (context, node) throws(ModelError) in
            try context.prepareMean(node)
        },
    ]
}

// MARK: parameters (computed by Prepare, read by Eval)

/// MEAN over constant axes (ReduceSumImpl then requantize): the input is walked in row-major
/// order, each element added to the output it reduces into (a 6-D counter with output strides).
struct MeanParameters: Sendable {
    /// Input dimensions extended to 6 with leading 1s.
    var inputDimensions: [Int] = []
    /// Output element stride per input dimension; 0 for reduced dimensions.
    var outputStrides: [Int] = []
    var outputCount = 0
    var reducedCount = 0
    var inputZeroPoint: Int32 = 0, outputZeroPoint: Int32 = 0
    /// input_scale / output_scale with the 1/count folded in (QuantizedMeanOrSum).
    var multiplier: Int32 = 0
    var shift = 0
    var elementType: TensorElementType = .int8
}

// MARK: Prepare

extension PrepareContext {
    func prepareMean(_ node: OperatorNode) throws(ModelError) -> PreparedKernel {
        guard case let .reducer(keepDims) = node.options else { throw fail(node, "missing ReducerOptions") }
        try expectCounts(node, inputs: 2...2, outputs: 1)
        let input = try inputInfo(node, 0), axisTensor = try inputInfo(node, 1), output = outputInfo(node)
        try expectType(node, input, "input", .int8, .float32)
        try expectSameType(node, input, output)
        guard let axes = constantIntegers(axisTensor) else { throw unsupported(node, "the axes must be constant") }
        let rank = input.shape.count
        var reduced = [Bool](repeating: false, count: rank)
        for axis in axes { reduced[try normalizedAxis(node, axis, rank: rank)] = true }
        var expected: [Int] = []
        for dimension in 0..<rank {
            if !reduced[dimension] { expected.append(input.shape[dimension]) } else if keepDims { expected.append(1) }
        }
        try expectShape(node, output, "output", expected)
        var p = MeanParameters()
        p.elementType = input.elementType
        p.inputDimensions = [Int](repeating: 1, count: 6 - rank) + input.shape
        var strides = [Int](repeating: 0, count: rank)
        var stride = 1
        for dimension in (0..<rank).reversed() where !reduced[dimension] {
            strides[dimension] = stride
            stride *= input.shape[dimension]
        }
        p.outputStrides = [Int](repeating: 0, count: 6 - rank) + strides
        p.outputCount = output.elementCount
        p.reducedCount = (0..<rank).filter { reduced[$0] }.map { input.shape[$0] }.reduce(1, *)
        if input.elementType == .int8 {
            let qi = try quantization(node, input, "input"), qo = try quantization(node, output, "output")
            p.inputZeroPoint = qi.zeroPoint
            p.outputZeroPoint = qo.zeroPoint
            let base = try multiplier(node, Double(qi.scale) / Double(qo.scale), "output")
            // QuantizedMeanOrSum folds 1/count into the multiplier: shift = floor(log2 count),
            // clamped so the combined shift stays representable.
            let count = Int64(p.reducedCount)
            guard count > 0 else { throw fail(node, "reduces over an empty dimension") }
            var extra = 63 - count.leadingZeroBitCount
            extra = min(extra, 32)
            extra = min(extra, 31 + base.shift)
            p.multiplier = Int32(truncatingIfNeeded: (Int64(base.multiplier) << Int64(extra)) / count)
            p.shift = base.shift - extra
        }
        return meanKernel(p)
    }
}

// MARK: Eval, as Prepare leaves it for each node

extension PrepareContext {
    func meanKernel(_ p: MeanParameters) -> PreparedKernel {
        PreparedKernel(reference: { tensors in
            ReferenceKernels.mean(p, input: tensors.input(0), output: tensors.output(), scratch: tensors.scratch)
            return nil
        }, scratchByteCount: p.outputCount * 4)
    }
}

// MARK: reference kernels

extension ReferenceKernels {
    /// MEAN (ReduceSumImpl + QuantizedMeanOrSum for int8, sum / count for float). `scratch` holds
    /// one int32 or float accumulator per output element.
    static func mean(_ p: MeanParameters, input: UnsafeRawPointer, output: UnsafeMutableRawPointer,
                     scratch: UnsafeMutableRawPointer)
    {
        let d = p.inputDimensions, s = p.outputStrides
        if p.elementType == .float32 {
            let sums = scratch.assumingMemoryBound(to: Float.self)
            for i in 0..<p.outputCount { sums[i] = 0 }
            let values = input.assumingMemoryBound(to: Float.self)
            var flat = 0
            for i0 in 0..<d[0] { for i1 in 0..<d[1] { for i2 in 0..<d[2] { for i3 in 0..<d[3] { for i4 in 0..<d[4] {
                let base = i0 * s[0] + i1 * s[1] + i2 * s[2] + i3 * s[3] + i4 * s[4]
                for i5 in 0..<d[5] {
                    sums[base + i5 * s[5]] += values[flat]
                    flat += 1
                }
            } } } } }
            let out = output.assumingMemoryBound(to: Float.self)
            for i in 0..<p.outputCount { out[i] = sums[i] / Float(p.reducedCount) }
            return
        }
        let sums = scratch.assumingMemoryBound(to: Int32.self)
        for i in 0..<p.outputCount { sums[i] = 0 }
        let values = input.assumingMemoryBound(to: Int8.self)
        var flat = 0
        for i0 in 0..<d[0] { for i1 in 0..<d[1] { for i2 in 0..<d[2] { for i3 in 0..<d[3] { for i4 in 0..<d[4] {
            let base = i0 * s[0] + i1 * s[1] + i2 * s[2] + i3 * s[3] + i4 * s[4]
            for i5 in 0..<d[5] {
                sums[base + i5 * s[5]] &+= Int32(values[flat])
                flat += 1
            }
        } } } } }
        let out = output.assumingMemoryBound(to: Int8.self)
        let range = QuantizedRange.of(.int8)
        for i in 0..<p.outputCount {
            // shifted_sum = sum − zp × count (the zero point of every reduced element), in int32.
            let shifted = Int32(truncatingIfNeeded: Int64(sums[i]) - Int64(p.inputZeroPoint) * Int64(p.reducedCount))
            let result = multiplyByQuantizedMultiplier(shifted, p.multiplier, p.shift) &+ p.outputZeroPoint
            out[i] = Int8(truncatingIfNeeded: range.clamp(result))
        }
    }
}

// MARK: optimised kernels: none (the reference kernel runs in every variant)
