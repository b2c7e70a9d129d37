// AVERAGE_POOL_2D and MAX_POOL_2D on int8, NHWC.

// MARK: registration

extension OperatorTable {
    static let pooling = [
        OperatorRegistration(.averagePool2D, newestVersion: 3) { (context, node) throws(ModelError) in
            try context.preparePool(node)
        },
        OperatorRegistration(.maxPool2D, newestVersion: 3) { (context, node) throws(ModelError) in
            try context.preparePool(node)
        },
    ]
}

// MARK: parameters (computed by Prepare, read by Eval)

/// Pooling geometry (AVERAGE_POOL_2D, MAX_POOL_2D), NHWC.
struct PoolParameters: Sendable {
    var batches = 0, inputHeight = 0, inputWidth = 0, depth = 0
    var outputHeight = 0, outputWidth = 0
    var filterHeight = 0, filterWidth = 0, strideHeight = 1, strideWidth = 1
    var padHeight = 0, padWidth = 0
    var range = QuantizedRange(minimum: -128, maximum: 127)
    var floatRange = FloatRange(minimum: -.greatestFiniteMagnitude, maximum: .greatestFiniteMagnitude)

    /// Calls `tap` with the input index of each filter tap of output cell (`batch`, `outY`, `outX`,
    /// `channel`) that lies inside the image (taps in the padding are skipped, as TFLite does).
    @inline(__always)
    func forEachTap(batch: Int, outY: Int, outX: Int, channel: Int, _ tap: (Int) -> Void) {
        let originX = outX * strideWidth - padWidth
        let originY = outY * strideHeight - padHeight
        let startX = max(0, -originX), endX = min(filterWidth, inputWidth - originX)
        let startY = max(0, -originY), endY = min(filterHeight, inputHeight - originY)
        guard startY < endY && startX < endX else { return }
        for fy in startY..<endY {
            for fx in startX..<endX {
                tap(((batch * inputHeight + originY + fy) * inputWidth + originX + fx) * depth + channel)
            }
        }
    }

    /// The output index of cell (`batch`, `outY`, `outX`, `channel`).
    @inline(__always)
    func outputIndex(batch: Int, outY: Int, outX: Int, channel: Int) -> Int {
        ((batch * outputHeight + outY) * outputWidth + outX) * depth + channel
    }
}

// MARK: Prepare

extension PrepareContext {
    func preparePool(_ node: OperatorNode) throws(ModelError) -> PreparedKernel {
        guard case let .pool2D(paddingKind, strideWidth, strideHeight, filterWidth, filterHeight, activation) =
            node.options
        else { throw fail(node, "missing Pool2DOptions") }
        try expectCounts(node, inputs: 1...1, outputs: 1)
        let input = try inputInfo(node, 0), output = outputInfo(node)
        try expectType(node, input, "input", .int8)
        try expectType(node, output, "output", .int8)
        try expectRank(node, input, "input", 4)
        guard strideWidth > 0, strideHeight > 0, filterWidth > 0, filterHeight > 0 else {
            throw fail(node, "strides and filter sizes must be positive")
        }
        guard activation != .tanh, activation != .signBit else {
            throw unsupported(node, "fused activation \(activation) is not supported")
        }
        let qi = try quantization(node, input, "input"), qo = try quantization(node, output, "output")
        guard qi.scale == qo.scale, qi.zeroPoint == qo.zeroPoint else {
            throw unsupported(node, "input and output quantization must match")
        }
        var p = PoolParameters()
        p.batches = input.shape[0]
        p.inputHeight = input.shape[1]
        p.inputWidth = input.shape[2]
        p.depth = input.shape[3]
        p.filterHeight = filterHeight
        p.filterWidth = filterWidth
        p.strideHeight = strideHeight
        p.strideWidth = strideWidth
        let height = padding(paddingKind, stride: strideHeight, dilation: 1, input: p.inputHeight, filter: filterHeight)
        let width = padding(paddingKind, stride: strideWidth, dilation: 1, input: p.inputWidth, filter: filterWidth)
        p.outputHeight = height.output
        p.outputWidth = width.output
        p.padHeight = height.pad
        p.padWidth = width.pad
        try expectShape(node, output, "output", [p.batches, p.outputHeight, p.outputWidth, p.depth])
        p.range = QuantizedRange.activation(activation, type: .int8, scale: qo.scale, zeroPoint: qo.zeroPoint)
        return poolKernel(p, average: node.code == .averagePool2D)
    }
}

// MARK: Eval, as Prepare leaves it for each node

extension PrepareContext {
    func poolKernel(_ p: PoolParameters, average: Bool) -> PreparedKernel {
        if average {
            return PreparedKernel(reference: { tensors in
                ReferenceKernels.averagePoolInt8(p, input: tensors.input(0).assumingMemoryBound(to: Int8.self),
                                                 output: tensors.output().assumingMemoryBound(to: Int8.self))
                return nil
            })
        }
        return PreparedKernel(reference: { tensors in
            ReferenceKernels.maxPoolInt8(p, input: tensors.input(0).assumingMemoryBound(to: Int8.self),
                                         output: tensors.output().assumingMemoryBound(to: Int8.self))
            return nil
        })
    }
}

// MARK: reference kernels

extension ReferenceKernels {
    /// AVERAGE_POOL_2D int8: the rounded mean of the in-image taps (padding excluded), clamped.
    static func averagePoolInt8(_ p: PoolParameters, input: UnsafePointer<Int8>, output: UnsafeMutablePointer<Int8>) {
        for batch in 0..<p.batches {
            for outY in 0..<p.outputHeight {
                for outX in 0..<p.outputWidth {
                    for channel in 0..<p.depth {
                        var accumulator: Int32 = 0
                        var count: Int32 = 0
                        p.forEachTap(batch: batch, outY: outY, outX: outX, channel: channel) { index in
                            accumulator &+= Int32(input[index])
                            count += 1
                        }
                        // Round half away from zero: (acc ± count/2) / count.
                        let value: Int32 = count == 0 ? 0
                            : accumulator > 0 ? (accumulator + count / 2) / count : (accumulator - count / 2) / count
                        output[p.outputIndex(batch: batch, outY: outY, outX: outX, channel: channel)] =
                            Int8(truncatingIfNeeded: p.range.clamp(value))
                    }
                }
            }
        }
    }

    /// MAX_POOL_2D int8: the largest in-image tap, clamped to the activation range.
    static func maxPoolInt8(_ p: PoolParameters, input: UnsafePointer<Int8>, output: UnsafeMutablePointer<Int8>) {
        for batch in 0..<p.batches {
            for outY in 0..<p.outputHeight {
                for outX in 0..<p.outputWidth {
                    for channel in 0..<p.depth {
                        var best: Int32 = -128
                        p.forEachTap(batch: batch, outY: outY, outX: outX, channel: channel) { index in
                            best = max(best, Int32(input[index]))
                        }
                        output[p.outputIndex(batch: batch, outY: outY, outX: outX, channel: channel)] =
                            Int8(truncatingIfNeeded: p.range.clamp(best))
                    }
                }
            }
        }
    }
}

// MARK: optimised kernels: none (the reference kernel runs in every variant)
