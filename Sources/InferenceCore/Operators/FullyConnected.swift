// FULLY_CONNECTED int8 (per-tensor or per-channel int8 weights, int32 bias).

// MARK: registration

extension OperatorTable {
    static let fullyConnected = [
        OperatorRegistration(.fullyConnected, newestVersion: 12) { (context, node) throws(ModelError) in
            try context.prepareFullyConnected(node)
        },
    ]
}

// MARK: parameters (computed by Prepare, read by Eval)

/// FULLY_CONNECTED int8: output[b, o] = requantize(Σ_i filter[o, i] × (input[b, i] + inputOffset) + bias[o]).
struct FullyConnectedParameters: Sendable {
    var batches = 0, inputDepth = 0, outputDepth = 0
    var inputOffset: Int32 = 0, filterOffset: Int32 = 0, outputOffset: Int32 = 0
    /// One entry per output channel (repeated when the filter is per-tensor quantized).
    var multipliers: [Int32] = []
    var shifts: [Int32] = []
    var range = QuantizedRange(minimum: -128, maximum: 127)
    var hasBias = false
}

// MARK: Prepare

extension PrepareContext {
    func prepareFullyConnected(_ node: OperatorNode) throws(ModelError) -> PreparedKernel {
        guard case let .fullyConnected(activation, weightsFormat, _) = node.options else {
            throw fail(node, "missing FullyConnectedOptions")
        }
        guard weightsFormat == 0 else { throw unsupported(node, "shuffled weights format \(weightsFormat)") }
        guard activation != .tanh, activation != .signBit else {
            throw unsupported(node, "fused activation \(activation) is not supported")
        }
        try expectCounts(node, inputs: 2...3, outputs: 1)
        let input = try inputInfo(node, 0), filter = try inputInfo(node, 1), output = outputInfo(node)
        try expectType(node, input, "input", .int8)
        try expectType(node, filter, "filter", .int8)
        try expectType(node, output, "output", .int8)
        try expectRank(node, filter, "filter", 2)
        var p = FullyConnectedParameters()
        p.outputDepth = filter.shape[0]
        p.inputDepth = filter.shape[1]
        guard p.inputDepth > 0, input.elementCount % p.inputDepth == 0 else {
            throw fail(node, "input shape \(input.shape) is not a multiple of the filter's \(p.inputDepth) columns")
        }
        p.batches = input.elementCount / p.inputDepth
        guard output.elementCount == p.batches * p.outputDepth, output.shape.last == p.outputDepth else {
            throw fail(node, "output shape \(output.shape) does not match \(p.batches) × \(p.outputDepth)")
        }
        p.hasBias = try hasBias(node, outputDepth: p.outputDepth)
        let inputQuantization = try quantization(node, input, "input")
        let outputQuantization = try quantization(node, output, "output")
        guard let filterQuantization = filter.quantization, !filterQuantization.scales.isEmpty else {
            throw fail(node, "filter tensor \(filter.index) is not quantized")
        }
        let scales = filterQuantization.scales
        guard scales.count == 1 || scales.count == p.outputDepth else {
            throw fail(node, "filter has \(scales.count) scales, expected 1 or \(p.outputDepth)")
        }
        p.inputOffset = -inputQuantization.zeroPoint
        p.filterOffset = -filterQuantization.zeroPoint
        p.outputOffset = outputQuantization.zeroPoint
        if scales.count > 1 && !filterQuantization.zeroPoints.allSatisfy({ $0 == 0 }) {
            throw unsupported(node, "per-channel filters must be symmetric (zero point 0)")
        }
        for channel in 0..<p.outputDepth {
            let filterScale = scales.count == 1 ? scales[0] : scales[channel]
            let real: Double
            if scales.count == 1 {
                // GetQuantizedConvolutionMultipler: input_product_scale = input_scale * filter_scale
                // (float product), then / output_scale in double.
                let product = Double(inputQuantization.scale * filterScale)
                real = product / Double(outputQuantization.scale)
            } else {
                real = Double(inputQuantization.scale) * Double(filterScale) / Double(outputQuantization.scale)
            }
            let quantized = try multiplier(node, real, "output channel \(channel)")
            p.multipliers.append(quantized.multiplier)
            p.shifts.append(Int32(quantized.shift))
        }
        p.range = QuantizedRange.activation(activation, type: output.elementType, scale: outputQuantization.scale,
                                            zeroPoint: outputQuantization.zeroPoint)
        return fullyConnectedKernel(p)
    }
}

// MARK: Eval, as Prepare leaves it for each node

extension PrepareContext {
    func fullyConnectedKernel(_ p: FullyConnectedParameters) -> PreparedKernel {
        PreparedKernel(reference: { tensors in
            ReferenceKernels.fullyConnectedInt8(
                p, input: tensors.input(0).assumingMemoryBound(to: Int8.self),
                filter: tensors.input(1).assumingMemoryBound(to: Int8.self),
                bias: p.hasBias ? tensors.optionalInput(2)?.assumingMemoryBound(to: Int32.self) : nil,
                output: tensors.output().assumingMemoryBound(to: Int8.self))
            return nil
        })
    }
}

// MARK: reference kernels

extension ReferenceKernels {
    /// FULLY_CONNECTED int8: acc = Σ_i (filter[o,i] + filter_offset) × (input[b,i] + input_offset) + bias[o].
    static func fullyConnectedInt8(
        _ p: FullyConnectedParameters, input: UnsafePointer<Int8>, filter: UnsafePointer<Int8>,
        bias: UnsafePointer<Int32>?, output: UnsafeMutablePointer<Int8>
    ) {
        p.multipliers.withUnsafeBufferPointer { multipliers in
            p.shifts.withUnsafeBufferPointer { shifts in
                for batch in 0..<p.batches {
                    let inputRow = input + batch * p.inputDepth
                    for outChannel in 0..<p.outputDepth {
                        let filterRow = filter + outChannel * p.inputDepth
                        var accumulator: Int32 = 0
                        for i in 0..<p.inputDepth {
                            accumulator &+= (Int32(filterRow[i]) &+ p.filterOffset) &* (Int32(inputRow[i]) &+ p.inputOffset)
                        }
                        if let bias { accumulator &+= bias[outChannel] }
                        // LiteRT's reference FULLY_CONNECTED rounds once (CONV_2D above rounds twice)
                        accumulator = multiplyByQuantizedMultiplierSingleRounding(
                            accumulator, multipliers[outChannel], Int(shifts[outChannel]))
                        accumulator &+= p.outputOffset
                        output[batch * p.outputDepth + outChannel] = Int8(truncatingIfNeeded: p.range.clamp(accumulator))
                    }
                }
            }
        }
    }
}

// MARK: optimised kernels: none (the reference kernel runs in every variant)
