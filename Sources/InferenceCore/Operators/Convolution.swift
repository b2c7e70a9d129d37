// CONV_2D and DEPTHWISE_CONV_2D, int8 with per-channel int8 filters and int32 bias: Prepare
// computes the geometry and one requantization multiplier per output channel; the optimised
// hook packs the filter into the GEMM or depthwise tile layout of the chosen ISA.
import CKernels

// MARK: registration

extension OperatorTable {
    static let convolution = [
        OperatorRegistration(.conv2D, newestVersion: 8) { (context, node) throws(ModelError) in
            try context.prepareConv2D(node)
        },
        OperatorRegistration(.depthwiseConv2D, newestVersion: 7) { (context, node) throws(ModelError) in
            try context.prepareDepthwiseConv2D(node)
        },
    ]
}

// MARK: parameters (computed by Prepare, read by Eval)

/// Convolution (CONV_2D, DEPTHWISE_CONV_2D) geometry and per-channel requantization, NHWC.
struct ConvolutionParameters: Sendable {
    var batches = 0, inputHeight = 0, inputWidth = 0, inputDepth = 0
    var outputHeight = 0, outputWidth = 0, outputDepth = 0
    var filterHeight = 0, filterWidth = 0
    var strideHeight = 1, strideWidth = 1, dilationHeight = 1, dilationWidth = 1
    var padHeight = 0, padWidth = 0
    /// DEPTHWISE_CONV_2D only: output channels per input channel.
    var depthMultiplier = 1
    /// −(input zero point): added to every input value before multiplying.
    var inputOffset: Int32 = 0
    /// The output zero point, added after requantization.
    var outputOffset: Int32 = 0
    /// One (multiplier, shift) per output channel: input_scale × filter_scale[c] / output_scale.
    var multipliers: [Int32] = []
    var shifts: [Int32] = []
    var range = QuantizedRange(minimum: -128, maximum: 127)
    var hasBias = false
}

// MARK: Prepare

extension PrepareContext {
    /// TFLite's ComputePaddingHeightWidth for one dimension: output size and the leading padding.
    func padding(_ padding: Padding, stride: Int, dilation: Int, input: Int, filter: Int) -> (output: Int, pad: Int) {
        let effectiveFilter = (filter - 1) * dilation + 1
        let output = padding == .same ? (input + stride - 1) / stride : (input - effectiveFilter + stride) / stride
        let total = max(0, (output - 1) * stride + effectiveFilter - input)
        return (output, total / 2)
    }

    func prepareConvolution(_ node: OperatorNode, depthwise: Bool, padding paddingKind: Padding, strideWidth: Int,
                            strideHeight: Int, dilationWidth: Int, dilationHeight: Int, activation: FusedActivation)
        throws(ModelError) -> ConvolutionParameters
    {
        try expectCounts(node, inputs: 2...3, outputs: 1)
        let input = try inputInfo(node, 0), filter = try inputInfo(node, 1), output = outputInfo(node)
        try expectType(node, input, "input", .int8)
        try expectType(node, filter, "filter", .int8)
        try expectType(node, output, "output", .int8)
        try expectRank(node, input, "input", 4)
        try expectRank(node, filter, "filter", 4)
        try expectRank(node, output, "output", 4)
        guard strideWidth > 0, strideHeight > 0, dilationWidth > 0, dilationHeight > 0 else {
            throw fail(node, "strides (\(strideHeight), \(strideWidth)) and dilations (\(dilationHeight), \(dilationWidth)) must be positive")
        }
        guard activation != .tanh, activation != .signBit else {
            throw unsupported(node, "fused activation \(activation) is not supported")
        }
        var p = ConvolutionParameters()
        p.batches = input.shape[0]
        p.inputHeight = input.shape[1]
        p.inputWidth = input.shape[2]
        p.inputDepth = input.shape[3]
        p.filterHeight = filter.shape[1]
        p.filterWidth = filter.shape[2]
        p.outputDepth = output.shape[3]
        if depthwise {
            guard filter.shape[0] == 1, filter.shape[3] == p.outputDepth, p.inputDepth > 0,
                p.outputDepth % p.inputDepth == 0
            else {
                throw fail(node, "filter shape \(filter.shape) does not fit input \(input.shape) and output \(output.shape)")
            }
            p.depthMultiplier = p.outputDepth / p.inputDepth
        } else {
            guard filter.shape[3] == p.inputDepth, filter.shape[0] == p.outputDepth else {
                throw fail(node, "filter shape \(filter.shape) does not fit input \(input.shape) and output \(output.shape)")
            }
        }
        p.strideHeight = strideHeight
        p.strideWidth = strideWidth
        p.dilationHeight = dilationHeight
        p.dilationWidth = dilationWidth
        let height = padding(paddingKind, stride: strideHeight, dilation: dilationHeight, input: p.inputHeight,
                             filter: p.filterHeight)
        let width = padding(paddingKind, stride: strideWidth, dilation: dilationWidth, input: p.inputWidth,
                            filter: p.filterWidth)
        p.outputHeight = height.output
        p.outputWidth = width.output
        p.padHeight = height.pad
        p.padWidth = width.pad
        try expectShape(node, output, "output", [p.batches, p.outputHeight, p.outputWidth, p.outputDepth])

        p.hasBias = try hasBias(node, outputDepth: p.outputDepth)
        let inputQuantization = try quantization(node, input, "input")
        let outputQuantization = try quantization(node, output, "output")
        guard let filterQuantization = filter.quantization, !filterQuantization.scales.isEmpty else {
            throw fail(node, "filter tensor \(filter.index) is not quantized")
        }
        let scales = filterQuantization.scales
        guard scales.count == 1 || (scales.count == p.outputDepth && filterQuantization.quantizedDimension == (depthwise ? 3 : 0)) else {
            throw fail(node, "filter has \(scales.count) scales along dimension \(filterQuantization.quantizedDimension), expected 1 or \(p.outputDepth)")
        }
        guard filterQuantization.zeroPoints.allSatisfy({ $0 == 0 }) else {
            throw unsupported(node, "int8 filters must be symmetric (zero point 0)")
        }
        p.inputOffset = -inputQuantization.zeroPoint
        p.outputOffset = outputQuantization.zeroPoint
        for channel in 0..<p.outputDepth {
            let filterScale = Double(scales.count == 1 ? scales[0] : scales[channel])
            // PopulateConvolutionQuantizationParams: computed in double.
            let real = Double(inputQuantization.scale) * filterScale / Double(outputQuantization.scale)
            let quantized = try multiplier(node, real, "output channel \(channel)")
            p.multipliers.append(quantized.multiplier)
            p.shifts.append(Int32(quantized.shift))
        }
        p.range = QuantizedRange.activation(activation, type: output.elementType, scale: outputQuantization.scale,
                                            zeroPoint: outputQuantization.zeroPoint)
        return p
    }

    func prepareConv2D(_ node: OperatorNode) throws(ModelError) -> PreparedKernel {
        guard case let .conv2D(padding, strideWidth, strideHeight, activation, dilationWidth, dilationHeight) =
            node.options
        else { throw fail(node, "missing Conv2DOptions") }
        let p = try prepareConvolution(node, depthwise: false, padding: padding, strideWidth: strideWidth,
                                       strideHeight: strideHeight, dilationWidth: dilationWidth,
                                       dilationHeight: dilationHeight, activation: activation)
        return convolutionKernel(node, p, depthwise: false, reference: ReferenceKernels.conv2DPerChannelInt8)
    }

    func prepareDepthwiseConv2D(_ node: OperatorNode) throws(ModelError) -> PreparedKernel {
        guard case let .depthwiseConv2D(padding, strideWidth, strideHeight, _, activation, dilationWidth,
                                        dilationHeight) = node.options
        else { throw fail(node, "missing DepthwiseConv2DOptions") }
        let p = try prepareConvolution(node, depthwise: true, padding: padding, strideWidth: strideWidth,
                                       strideHeight: strideHeight, dilationWidth: dilationWidth,
                                       dilationHeight: dilationHeight, activation: activation)
        return convolutionKernel(node, p, depthwise: true, reference: ReferenceKernels.depthwiseConv2DPerChannelInt8)
    }

    /// Both convolutions' kernels: the reference one over the node's tensors (input, filter, the
    /// optional bias, output) and the optimised one when the filter can be packed.
    private func convolutionKernel(
        _ node: OperatorNode, _ p: ConvolutionParameters, depthwise: Bool,
        reference: @escaping (ConvolutionParameters, UnsafePointer<Int8>, UnsafePointer<Int8>, UnsafePointer<Int32>?,
                              UnsafeMutablePointer<Int8>) -> Void
    ) -> PreparedKernel {
        PreparedKernel(reference: { tensors in
            reference(p, tensors.input(0).assumingMemoryBound(to: Int8.self),
                      tensors.input(1).assumingMemoryBound(to: Int8.self),
                      p.hasBias ? tensors.optionalInput(2)?.assumingMemoryBound(to: Int32.self) : nil,
                      tensors.output().assumingMemoryBound(to: Int8.self))
            return nil
        }, optimized: optimizedConvolution(node, p, depthwise: depthwise))
    }

    /// The optimised kernel for a convolution node: its filter and bias must be constants in the
    /// model (they are packed once, here).
    func optimizedConvolution(_ node: OperatorNode, _ p: ConvolutionParameters, depthwise: Bool) -> OptimizedKernel? {
        guard let variant = optimizedVariant, let filter = alignedConstant(node, 1, Int8.self) else { return nil }
        let bias = p.hasBias ? alignedConstant(node, 2, Int32.self) : nil
        if p.hasBias && bias == nil { return nil }
        return OptimizedKernel.convolution(p, depthwise: depthwise, filter: filter, bias: bias, variant: variant)
    }
}

// MARK: reference kernels

extension ConvolutionParameters {
    /// One output channel's code from its accumulator, as both reference convolutions finish:
    /// + bias, requantized per channel (LiteRT's reference rounds twice here), + output zero
    /// point, clamped to the fused activation's range.
    @inline(__always)
    func outputCode(
        _ accumulator: Int32, channel: Int, bias: UnsafePointer<Int32>?, multipliers: UnsafeBufferPointer<Int32>,
        shifts: UnsafeBufferPointer<Int32>
    ) -> Int8 {
        var value = accumulator
        if let bias { value &+= bias[channel] }
        value = multiplyByQuantizedMultiplier(value, multipliers[channel], Int(shifts[channel]))
        value &+= outputOffset
        return Int8(truncatingIfNeeded: range.clamp(value))
    }
}

extension ReferenceKernels {
    /// CONV_2D, int8 input/filter, int32 bias, per-channel requantization (ConvPerChannel).
    ///
    ///     acc[c] = Σ_{fy,fx,ic} filter[c,fy,fx,ic] × (input[b,y,x,ic] − input_zp) + bias[c]
    ///     out    = clamp(requantize(acc[c], M[c]) + output_zp)     M[c] = s_in × s_filter[c] / s_out
    ///
    /// Taps that fall into the padding are skipped (they contribute zero real value). The int32
    /// accumulator holds 8-bit × 9-bit products: at most 2^16 per tap, so overflow needs more than
    /// 2^15 taps per output, far beyond any filter here; TFLite makes the same assumption.
    static func conv2DPerChannelInt8(
        _ p: ConvolutionParameters, input: UnsafePointer<Int8>, filter: UnsafePointer<Int8>,
        bias: UnsafePointer<Int32>?, output: UnsafeMutablePointer<Int8>
    ) {
        p.multipliers.withUnsafeBufferPointer { multipliers in
            p.shifts.withUnsafeBufferPointer { shifts in
                var outputIndex = 0
                for batch in 0..<p.batches {
                    for outY in 0..<p.outputHeight {
                        let originY = outY * p.strideHeight - p.padHeight
                        for outX in 0..<p.outputWidth {
                            let originX = outX * p.strideWidth - p.padWidth
                            for outChannel in 0..<p.outputDepth {
                                var accumulator: Int32 = 0
                                for filterY in 0..<p.filterHeight {
                                    let inY = originY + p.dilationHeight * filterY
                                    if inY < 0 || inY >= p.inputHeight { continue }
                                    for filterX in 0..<p.filterWidth {
                                        let inX = originX + p.dilationWidth * filterX
                                        if inX < 0 || inX >= p.inputWidth { continue }
                                        let inputRow = input + ((batch * p.inputHeight + inY) * p.inputWidth + inX) * p.inputDepth
                                        let filterRow = filter + ((outChannel * p.filterHeight + filterY) * p.filterWidth + filterX) * p.inputDepth
                                        for inChannel in 0..<p.inputDepth {
                                            accumulator &+= Int32(filterRow[inChannel]) &* (Int32(inputRow[inChannel]) &+ p.inputOffset)
                                        }
                                    }
                                }
                                output[outputIndex] = p.outputCode(
                                    accumulator, channel: outChannel, bias: bias, multipliers: multipliers, shifts: shifts)
                                outputIndex += 1
                            }
                        }
                    }
                }
            }
        }
    }

    /// DEPTHWISE_CONV_2D int8 (DepthwiseConvPerChannel): output channel `ic × multiplier + m`
    /// sees only input channel `ic`; filter is [1, H, W, output_depth]. Same requantization as conv.
    static func depthwiseConv2DPerChannelInt8(
        _ p: ConvolutionParameters, input: UnsafePointer<Int8>, filter: UnsafePointer<Int8>,
        bias: UnsafePointer<Int32>?, output: UnsafeMutablePointer<Int8>
    ) {
        p.multipliers.withUnsafeBufferPointer { multipliers in
            p.shifts.withUnsafeBufferPointer { shifts in
                for batch in 0..<p.batches {
                    for outY in 0..<p.outputHeight {
                        let originY = outY * p.strideHeight - p.padHeight
                        for outX in 0..<p.outputWidth {
                            let originX = outX * p.strideWidth - p.padWidth
                            let outputPixel = output + ((batch * p.outputHeight + outY) * p.outputWidth + outX) * p.outputDepth
                            for inChannel in 0..<p.inputDepth {
                                for m in 0..<p.depthMultiplier {
                                    let outChannel = inChannel * p.depthMultiplier + m
                                    var accumulator: Int32 = 0
                                    for filterY in 0..<p.filterHeight {
                                        let inY = originY + p.dilationHeight * filterY
                                        if inY < 0 || inY >= p.inputHeight { continue }
                                        for filterX in 0..<p.filterWidth {
                                            let inX = originX + p.dilationWidth * filterX
                                            if inX < 0 || inX >= p.inputWidth { continue }
                                            let value = Int32(input[((batch * p.inputHeight + inY) * p.inputWidth + inX) * p.inputDepth + inChannel])
                                            let weight = Int32(filter[(filterY * p.filterWidth + filterX) * p.outputDepth + outChannel])
                                            accumulator &+= weight &* (value &+ p.inputOffset)
                                        }
                                    }
                                    outputPixel[outChannel] = p.outputCode(
                                        accumulator, channel: outChannel, bias: bias, multipliers: multipliers, shifts: shifts)
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

// MARK: optimised kernels

/// Owns a packed GEMM plan (CKernels), destroyed with the node.
final class GemmPlan {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
    deinit { pw_gemm_destroy(pointer) }
}

/// Owns a packed depthwise plan (CKernels), destroyed with the node.
final class DepthwisePlan {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
    deinit { pw_depthwise_destroy(pointer) }
}

extension OptimizedKernel {
    /// A CONV_2D (1x1 as GEMM in place, any other filter through per-tile patches) or
    /// DEPTHWISE_CONV_2D (depth multiplier 1) kernel with its weights packed from `filter` and
    /// `bias`; nil when `variant` has no kernel for it.
    static func convolution(_ p: ConvolutionParameters, depthwise: Bool, filter: UnsafePointer<Int8>,
                            bias: UnsafePointer<Int32>?, variant: KernelVariant) -> OptimizedKernel? {
        guard variant.hasOptimizedKernels, p.batches > 0 else { return nil }
        let isa = variant.isa
        var g = geometry(p)
        if depthwise {
            guard p.depthMultiplier == 1 else { return nil }
            let pointer = p.multipliers.withUnsafeBufferPointer { m in
                p.shifts.withUnsafeBufferPointer { s in pw_depthwise_pack(&g, filter, bias, m.baseAddress, s.baseAddress, isa) }
            }
            guard let pointer else { return nil }
            let plan = DepthwisePlan(pointer)
            return OptimizedKernel(
                name: "dwconv-\(p.filterHeight)x\(p.filterWidth)s\(p.strideHeight)-\(variant == .avx512vnni ? 32 : 16)c-\(variant.rawValue)",
                variant: variant,
                evaluate: { tensors in
                    pw_depthwise_run(plan.pointer, tensors.pool, tensors.input(0).assumingMemoryBound(to: Int8.self),
                                     tensors.output().assumingMemoryBound(to: Int8.self))
                    return nil
                })
        }
        let pointer = p.multipliers.withUnsafeBufferPointer { m in
            p.shifts.withUnsafeBufferPointer { s in pw_gemm_pack(&g, filter, bias, m.baseAddress, s.baseAddress, isa) }
        }
        guard let pointer else { return nil }
        let plan = GemmPlan(pointer)
        let direct = pw_gemm_is_direct(pointer) != 0
        var rows: Int32 = 0, channels: Int32 = 0
        pw_gemm_tile(pointer, &rows, &channels)
        return OptimizedKernel(
            name: "conv-\(direct ? "gemm" : "patch-gemm")-\(rows)x\(channels)c4-\(variant.rawValue)", variant: variant,
            evaluate: { tensors in
                pw_conv_run(plan.pointer, tensors.pool, tensors.input(0).assumingMemoryBound(to: Int8.self),
                            tensors.output().assumingMemoryBound(to: Int8.self))
                return nil
            })
    }

    static func geometry(_ p: ConvolutionParameters) -> pw_conv_geometry {
        var g = pw_conv_geometry()
        g.batches = Int32(p.batches)
        g.input_height = Int32(p.inputHeight)
        g.input_width = Int32(p.inputWidth)
        g.input_depth = Int32(p.inputDepth)
        g.output_height = Int32(p.outputHeight)
        g.output_width = Int32(p.outputWidth)
        g.output_depth = Int32(p.outputDepth)
        g.filter_height = Int32(p.filterHeight)
        g.filter_width = Int32(p.filterWidth)
        g.stride_height = Int32(p.strideHeight)
        g.stride_width = Int32(p.strideWidth)
        g.dilation_height = Int32(p.dilationHeight)
        g.dilation_width = Int32(p.dilationWidth)
        g.pad_height = Int32(p.padHeight)
        g.pad_width = Int32(p.padWidth)
        g.input_offset = p.inputOffset
        g.output_offset = p.outputOffset
        g.act_min = p.range.minimum
        g.act_max = p.range.maximum
        return g
    }
}

