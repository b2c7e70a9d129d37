/// The kernel a node runs, with everything Eval needs.
enum Kernel: Sendable {
    case conv2DInt8(ConvolutionParameters)
    case depthwiseConv2DInt8(ConvolutionParameters)
    case fullyConnectedInt8(FullyConnectedParameters)
    case addSubInt8(QuantizedAddParameters)
    case mulInt8(QuantizedMulParameters)
    case binaryInt32(IntegerBinaryOperation, BroadcastPlan, QuantizedRange)
    case binaryFloat(FloatBinaryOperation, BroadcastPlan, FloatRange)
    case quantizeFloat(count: Int, scale: Float, zeroPoint: Int32, outputType: TensorElementType)
    case requantize(RequantizeParameters)
    case dequantize(count: Int, scale: Float, zeroPoint: Int32, inputType: TensorElementType)
    case cast(count: Int, from: TensorElementType, to: TensorElementType)
    /// 8-bit → 8-bit through a 256-entry table indexed by the input's bit pattern (LOGISTIC, TANH).
    case lookupTable(count: Int, table: [UInt8])
    case unaryFloat(FloatUnaryOperation, count: Int)
    /// RELU family on int8/uint8: requantize then clamp.
    case reluQuantized(count: Int, type: TensorElementType, inputZeroPoint: Int32, outputZeroPoint: Int32,
                       multiplier: QuantizedMultiplier, range: QuantizedRange)
    case resizeBilinearInteger(ResizeBilinearParameters, type: TensorElementType)
    case argMax(ArgMaxParameters)
    case gatherND(GatherNDParameters)
    case copy(byteCount: Int)
    case concatenate(ChunkCopyParameters)
    case split(ChunkCopyParameters)
    case averagePoolInt8(PoolParameters)
    case maxPoolInt8(PoolParameters)
    case softmaxInt8(SoftmaxParameters)
    case softmaxFloat(outer: Int, depth: Int, beta: Float)
    case mean(MeanParameters)
}

/// One node after Prepare.
struct PreparedNode: Sendable {
    let index: Int
    let code: BuiltinOperator
    let variant: KernelVariant
    let inputs: [Int]
    let outputs: [Int]
    let kernel: Kernel
    /// The optimised kernel Prepare chose (weights packed), or nil: the reference kernel runs.
    let optimized: OptimizedKernel?
}

/// Prepare for every supported operator: checks, then parameters.
struct PrepareContext {
    let model: Model
    let registry: KernelRegistry

    func info(_ tensor: Int) -> TensorInfo { model.tensors[tensor] }

    func prepare(_ node: OperatorNode) throws(ModelError) -> PreparedNode {
        let kernel = try makeKernel(node)
        let optimized = registry.optimizedKernel(for: kernel, node: node, model: model)
        return PreparedNode(index: node.index, code: node.code, variant: optimized?.variant ?? .reference,
                            inputs: node.inputs, outputs: node.outputs, kernel: kernel, optimized: optimized)
    }

    // MARK: checks with messages

    func fail(_ node: OperatorNode, _ message: String) -> ModelError {
        .invalid("\(node.label): \(message)")
    }

    func unsupported(_ node: OperatorNode, _ message: String) -> ModelError {
        .unsupported("\(node.label): \(message)")
    }

    func expectCounts(_ node: OperatorNode, inputs: ClosedRange<Int>, outputs: Int) throws(ModelError) {
        guard inputs.contains(node.inputs.count) else {
            throw fail(node, "has \(node.inputs.count) inputs, expected \(inputs.lowerBound == inputs.upperBound ? "\(inputs.lowerBound)" : "\(inputs.lowerBound)...\(inputs.upperBound)")")
        }
        guard node.outputs.count == outputs else {
            throw fail(node, "has \(node.outputs.count) outputs, expected \(outputs)")
        }
    }

    /// Input `position`, required to be present.
    func inputInfo(_ node: OperatorNode, _ position: Int) throws(ModelError) -> TensorInfo {
        guard position < node.inputs.count, node.inputs[position] >= 0 else {
            throw fail(node, "input \(position) is missing")
        }
        return info(node.inputs[position])
    }

    func outputInfo(_ node: OperatorNode, _ position: Int = 0) -> TensorInfo { info(node.outputs[position]) }

    func expectType(_ node: OperatorNode, _ tensor: TensorInfo, _ role: String, _ types: TensorElementType...)
        throws(ModelError)
    {
        guard types.contains(tensor.elementType) else {
            throw unsupported(node, "\(role) tensor \(tensor.index) (\(tensor.name)) is \(tensor.elementType); supported: \(types.map(\.description).joined(separator: ", "))")
        }
    }

    func expectShape(_ node: OperatorNode, _ tensor: TensorInfo, _ role: String, _ shape: [Int]) throws(ModelError) {
        guard tensor.shape == shape else {
            throw fail(node, "\(role) tensor \(tensor.index) (\(tensor.name)) has shape \(tensor.shape), expected \(shape)")
        }
    }

    func expectRank(_ node: OperatorNode, _ tensor: TensorInfo, _ role: String, _ rank: Int) throws(ModelError) {
        guard tensor.shape.count == rank else {
            throw fail(node, "\(role) tensor \(tensor.index) (\(tensor.name)) has rank \(tensor.shape.count) (shape \(tensor.shape)), expected \(rank)")
        }
    }

    /// The per-tensor scale and zero point, required for quantized kernels.
    /// Whether the node's optional third input (an int32 bias, one per output channel) is present;
    /// shared by CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED.
    func hasBias(_ node: OperatorNode, outputDepth: Int) throws(ModelError) -> Bool {
        guard node.inputs.count > 2, node.inputs[2] >= 0 else { return false }
        let bias = info(node.inputs[2])
        try expectType(node, bias, "bias", .int32)
        guard bias.elementCount == outputDepth else {
            throw fail(node, "bias has \(bias.elementCount) elements, expected \(outputDepth)")
        }
        return true
    }

    func quantization(_ node: OperatorNode, _ tensor: TensorInfo, _ role: String) throws(ModelError)
        -> (scale: Float, zeroPoint: Int32)
    {
        guard let quantization = tensor.quantization, quantization.scale > 0 else {
            throw fail(node, "\(role) tensor \(tensor.index) (\(tensor.name)) needs a positive quantization scale")
        }
        let zeroPoint = quantization.zeroPoint
        let range = QuantizedRange.of(tensor.elementType)
        guard zeroPoint >= range.minimum, zeroPoint <= range.maximum else {
            throw fail(node, "\(role) tensor \(tensor.index) zero point \(zeroPoint) is outside the \(tensor.elementType) range")
        }
        return (quantization.scale, zeroPoint)
    }

    func multiplier(_ node: OperatorNode, _ real: Double, _ what: String) throws(ModelError) -> QuantizedMultiplier {
        guard real.isFinite, real >= 0 else { throw fail(node, "\(what) multiplier \(real) is not finite") }
        let result = QuantizedMultiplier(real)
        guard result.shift <= 30, result.shift >= -31 else {
            throw unsupported(node, "\(what) multiplier \(real) is outside the representable range")
        }
        return result
    }

    /// A constant integer tensor's values (int32 or int64), or nil when it is not constant.
    func constantIntegers(_ tensor: TensorInfo) -> [Int]? {
        guard let bytes = model.constantBytes(tensor.index) else { return nil }
        switch tensor.elementType {
        case .int32:
            return (0..<tensor.elementCount).map { Int(Int32(littleEndian: bytes.loadUnaligned(fromByteOffset: $0 * 4, as: Int32.self))) }
        case .int64:
            return (0..<tensor.elementCount).map { Int(truncatingIfNeeded: Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: $0 * 8, as: Int64.self))) }
        default:
            return nil
        }
    }

    func normalizedAxis(_ node: OperatorNode, _ axis: Int, rank: Int) throws(ModelError) -> Int {
        let normalized = axis < 0 ? axis + rank : axis
        guard normalized >= 0, normalized < rank else {
            throw fail(node, "axis \(axis) is out of range for rank \(rank)")
        }
        return normalized
    }

    func product(_ values: ArraySlice<Int>) -> Int { values.reduce(1, *) }

    // MARK: per operator

    func makeKernel(_ node: OperatorNode) throws(ModelError) -> Kernel {
        switch node.code {
        case .conv2D: return try prepareConv2D(node)
        case .depthwiseConv2D: return try prepareDepthwiseConv2D(node)
        case .fullyConnected: return try prepareFullyConnected(node)
        case .add, .sub, .mul, .div, .floorDiv: return try prepareBinary(node)
        case .quantize: return try prepareQuantize(node)
        case .dequantize: return try prepareDequantize(node)
        case .cast: return try prepareCast(node)
        case .logistic, .tanh, .log: return try prepareTableActivation(node)
        case .sqrt: return try prepareUnaryFloat(node, .sqrt)
        case .relu, .relu6, .reluN1To1: return try prepareRelu(node)
        case .resizeBilinear: return try prepareResizeBilinear(node)
        case .argMax: return try prepareArgMax(node)
        case .gatherND: return try prepareGatherND(node)
        case .reshape, .squeeze, .expandDims: return try prepareReshape(node)
        case .concatenation: return try prepareConcatenation(node)
        case .pack: return try preparePack(node)
        case .unpack: return try prepareUnpack(node)
        case .averagePool2D, .maxPool2D: return try preparePool(node)
        case .softmax: return try prepareSoftmax(node)
        case .mean: return try prepareMean(node)
        default:
            throw unsupported(node, "no kernel")
        }
    }

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

    func prepareConv2D(_ node: OperatorNode) throws(ModelError) -> Kernel {
        guard case let .conv2D(padding, strideWidth, strideHeight, activation, dilationWidth, dilationHeight) =
            node.options
        else { throw fail(node, "missing Conv2DOptions") }
        return .conv2DInt8(try prepareConvolution(node, depthwise: false, padding: padding, strideWidth: strideWidth,
                                                  strideHeight: strideHeight, dilationWidth: dilationWidth,
                                                  dilationHeight: dilationHeight, activation: activation))
    }

    func prepareDepthwiseConv2D(_ node: OperatorNode) throws(ModelError) -> Kernel {
        guard case let .depthwiseConv2D(padding, strideWidth, strideHeight, _, activation, dilationWidth,
                                        dilationHeight) = node.options
        else { throw fail(node, "missing DepthwiseConv2DOptions") }
        return .depthwiseConv2DInt8(try prepareConvolution(node, depthwise: true, padding: padding,
                                                           strideWidth: strideWidth, strideHeight: strideHeight,
                                                           dilationWidth: dilationWidth,
                                                           dilationHeight: dilationHeight, activation: activation))
    }

    func prepareFullyConnected(_ node: OperatorNode) throws(ModelError) -> Kernel {
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
        return .fullyConnectedInt8(p)
    }

    func prepareBinary(_ node: OperatorNode) throws(ModelError) -> Kernel {
        try expectCounts(node, inputs: 2...2, outputs: 1)
        let a = try inputInfo(node, 0), b = try inputInfo(node, 1), output = outputInfo(node)
        guard a.elementType == b.elementType, a.elementType == output.elementType else {
            throw unsupported(node, "input types \(a.elementType), \(b.elementType) and output type \(output.elementType) must match")
        }
        guard let shape = BroadcastPlan.broadcastShape(a.shape, b.shape) else {
            throw fail(node, "input shapes \(a.shape) and \(b.shape) do not broadcast")
        }
        try expectShape(node, output, "output", shape)
        let plan = BroadcastPlan(a.shape, b.shape, output: shape)
        var activation = FusedActivation.none
        if case let .activation(fused) = node.options { activation = fused }
        guard activation != .tanh, activation != .signBit else {
            throw unsupported(node, "fused activation \(activation) is not supported")
        }
        switch (node.code, output.elementType) {
        case (.add, .int8), (.sub, .int8):
            let q1 = try quantization(node, a, "input 1"), q2 = try quantization(node, b, "input 2")
            let qo = try quantization(node, output, "output")
            var p = QuantizedAddParameters(plan: plan)
            p.isSubtraction = node.code == .sub
            p.input1Offset = -q1.zeroPoint
            p.input2Offset = -q2.zeroPoint
            p.outputOffset = qo.zeroPoint
            p.leftShift = 20
            // PrepareGeneralSubOp / add.cc: twice_max_input_scale in double.
            let twiceMax = 2 * Double(max(q1.scale, q2.scale))
            p.input1 = try multiplier(node, Double(q1.scale) / twiceMax, "input 1")
            p.input2 = try multiplier(node, Double(q2.scale) / twiceMax, "input 2")
            p.output = try multiplier(node, twiceMax / Double(Float(1 << 20) * qo.scale), "output")
            guard p.input1.shift <= 0, p.input2.shift <= 0, p.output.shift <= 0 else {
                throw unsupported(node, "requantization multipliers above 1 are not supported")
            }
            p.range = QuantizedRange.activation(activation, type: .int8, scale: qo.scale, zeroPoint: qo.zeroPoint)
            return .addSubInt8(p)
        case (.mul, .int8):
            let q1 = try quantization(node, a, "input 1"), q2 = try quantization(node, b, "input 2")
            let qo = try quantization(node, output, "output")
            var p = QuantizedMulParameters(plan: plan)
            p.input1Offset = -q1.zeroPoint
            p.input2Offset = -q2.zeroPoint
            p.outputOffset = qo.zeroPoint
            // mul.cc: input1_scale * input2_scale / output_scale, all in float, widened to double.
            p.output = try multiplier(node, Double(q1.scale * q2.scale / qo.scale), "output")
            p.range = QuantizedRange.activation(activation, type: .int8, scale: qo.scale, zeroPoint: qo.zeroPoint)
            return .mulInt8(p)
        case (.floorDiv, .int32) where constantIntegers(b)?.contains(0) == true:
            // Integer division by a constant zero would fail every invoke: refuse the file at load.
            throw fail(node, "the constant divisor holds 0")
        case (.add, .int32), (.sub, .int32), (.mul, .int32), (.floorDiv, .int32):
            let operation: IntegerBinaryOperation =
                switch node.code {
                case .add: .add
                case .sub: .sub
                case .mul: .mul
                default: .floorDiv
                }
            return .binaryInt32(operation, plan, QuantizedRange.int32Activation(activation))
        case (.add, .float32), (.sub, .float32), (.mul, .float32), (.div, .float32), (.floorDiv, .float32):
            let operation: FloatBinaryOperation =
                switch node.code {
                case .add: .add
                case .sub: .sub
                case .mul: .mul
                case .div: .div
                default: .floorDiv
                }
            return .binaryFloat(operation, plan, FloatRange.activation(activation))
        default:
            throw unsupported(node, "\(output.elementType) is not supported")
        }
    }

    func prepareQuantize(_ node: OperatorNode) throws(ModelError) -> Kernel {
        try expectCounts(node, inputs: 1...1, outputs: 1)
        let input = try inputInfo(node, 0), output = outputInfo(node)
        try expectShape(node, output, "output", input.shape)
        try expectType(node, output, "output", .int8, .uint8)
        guard output.quantization?.isPerChannel != true else {
            throw unsupported(node, "per-channel output quantization is not supported")
        }
        let qo = try quantization(node, output, "output")
        switch input.elementType {
        case .float32:
            return .quantizeFloat(count: input.elementCount, scale: qo.scale, zeroPoint: qo.zeroPoint,
                                  outputType: output.elementType)
        case .int8, .uint8:
            let qi = try quantization(node, input, "input")
            var p = RequantizeParameters()
            p.count = input.elementCount
            p.inputType = input.elementType
            p.outputType = output.elementType
            p.inputZeroPoint = qi.zeroPoint
            p.outputZeroPoint = qo.zeroPoint
            p.multiplier = try multiplier(node, Double(qi.scale) / Double(qo.scale), "requantization")
            return .requantize(p)
        default:
            throw unsupported(node, "input type \(input.elementType) is not supported")
        }
    }

    func prepareDequantize(_ node: OperatorNode) throws(ModelError) -> Kernel {
        try expectCounts(node, inputs: 1...1, outputs: 1)
        let input = try inputInfo(node, 0), output = outputInfo(node)
        try expectType(node, input, "input", .int8, .uint8, .int16)
        try expectType(node, output, "output", .float32)
        try expectShape(node, output, "output", input.shape)
        guard input.quantization?.isPerChannel != true else {
            throw unsupported(node, "per-channel dequantization is not supported")
        }
        let q = try quantization(node, input, "input")
        return .dequantize(count: input.elementCount, scale: q.scale, zeroPoint: q.zeroPoint,
                           inputType: input.elementType)
    }

    func prepareCast(_ node: OperatorNode) throws(ModelError) -> Kernel {
        try expectCounts(node, inputs: 1...1, outputs: 1)
        let input = try inputInfo(node, 0), output = outputInfo(node)
        let types: [TensorElementType] = [.float32, .int32, .uint8, .int8, .int64, .bool, .int16]
        guard types.contains(input.elementType), types.contains(output.elementType) else {
            throw unsupported(node, "cast from \(input.elementType) to \(output.elementType) is not supported")
        }
        try expectShape(node, output, "output", input.shape)
        return .cast(count: input.elementCount, from: input.elementType, to: output.elementType)
    }

    /// LOGISTIC, TANH and LOG: float, or 8-bit through a table, built as TFLite's LUTPopulate builds
    /// it (dequantize, transform in float, quantize with round-half-away).
    func prepareTableActivation(_ node: OperatorNode) throws(ModelError) -> Kernel {
        try expectCounts(node, inputs: 1...1, outputs: 1)
        let input = try inputInfo(node, 0), output = outputInfo(node)
        try expectShape(node, output, "output", input.shape)
        guard input.elementType == output.elementType else {
            throw unsupported(node, "input \(input.elementType) and output \(output.elementType) differ")
        }
        let operation: FloatUnaryOperation = node.code == .logistic ? .logistic : node.code == .tanh ? .tanh : .log
        switch input.elementType {
        case .float32:
            return .unaryFloat(operation, count: input.elementCount)
        case .int8, .uint8:
            guard operation != .log || input.elementType == .int8 else {
                throw unsupported(node, "uint8 is not supported")  // (nor in TFLite)
            }
            let qi = try quantization(node, input, "input"), qo = try quantization(node, output, "output")
            let transform: (Float) -> Float
            switch operation {
            case .logistic:
                guard qo.scale == 1.0 / 256 else {
                    throw fail(node, "LOGISTIC output scale must be 1/256, found \(qo.scale)")
                }
                transform = ReferenceKernels.logistic
            case .tanh:
                transform = ReferenceKernels.hyperbolicTangent
            default:
                // A quantized input ≤ 0 has no logarithm: the output's lowest value (LogLUTPrepare).
                let lowest = Float(QuantizedRange.of(output.elementType).minimum - qo.zeroPoint) * qo.scale
                transform = { $0 <= 0 ? lowest : ReferenceKernels.naturalLogarithm($0) }
            }
            let table = ReferenceKernels.lookupTable(
                type: input.elementType, inputScale: qi.scale, inputZeroPoint: qi.zeroPoint,
                outputScale: qo.scale, outputZeroPoint: qo.zeroPoint, transform: transform)
            return .lookupTable(count: input.elementCount, table: table)
        default:
            throw unsupported(node, "\(input.elementType) is not supported")
        }
    }

    func prepareUnaryFloat(_ node: OperatorNode, _ operation: FloatUnaryOperation) throws(ModelError) -> Kernel {
        try expectCounts(node, inputs: 1...1, outputs: 1)
        let input = try inputInfo(node, 0), output = outputInfo(node)
        try expectType(node, input, "input", .float32)
        try expectType(node, output, "output", .float32)
        try expectShape(node, output, "output", input.shape)
        return .unaryFloat(operation, count: input.elementCount)
    }

    func prepareRelu(_ node: OperatorNode) throws(ModelError) -> Kernel {
        try expectCounts(node, inputs: 1...1, outputs: 1)
        let input = try inputInfo(node, 0), output = outputInfo(node)
        try expectShape(node, output, "output", input.shape)
        guard input.elementType == output.elementType else {
            throw unsupported(node, "input \(input.elementType) and output \(output.elementType) differ")
        }
        let operation: FloatUnaryOperation = node.code == .relu ? .relu : node.code == .relu6 ? .relu6 : .reluN1To1
        switch input.elementType {
        case .float32:
            return .unaryFloat(operation, count: input.elementCount)
        case .int8, .uint8:
            let qi = try quantization(node, input, "input"), qo = try quantization(node, output, "output")
            let multiplier = try multiplier(node, Double(qi.scale) / Double(qo.scale), "requantization")
            let typeRange = QuantizedRange.of(input.elementType)
            // QuantizedReluX: zp + roundf(act / scale), clamped to the type.
            func quantize(_ value: Float) -> Int32 { qo.zeroPoint &+ saturatingInt32(tfliteRound(value / qo.scale)) }
            let range: QuantizedRange
            switch operation {
            case .relu: range = QuantizedRange(minimum: max(typeRange.minimum, quantize(0)), maximum: typeRange.maximum)
            case .relu6:
                range = QuantizedRange(minimum: max(typeRange.minimum, quantize(0)),
                                       maximum: min(typeRange.maximum, quantize(6)))
            default:
                range = QuantizedRange(minimum: max(typeRange.minimum, quantize(-1)),
                                       maximum: min(typeRange.maximum, quantize(1)))
            }
            return .reluQuantized(count: input.elementCount, type: input.elementType, inputZeroPoint: qi.zeroPoint,
                                  outputZeroPoint: qo.zeroPoint, multiplier: multiplier, range: range)
        default:
            throw unsupported(node, "\(input.elementType) is not supported")
        }
    }

    func prepareResizeBilinear(_ node: OperatorNode) throws(ModelError) -> Kernel {
        guard case let .resizeBilinear(alignCorners, halfPixelCenters) = node.options else {
            throw fail(node, "missing ResizeBilinearOptions")
        }
        try expectCounts(node, inputs: 2...2, outputs: 1)
        let input = try inputInfo(node, 0), size = try inputInfo(node, 1), output = outputInfo(node)
        try expectType(node, input, "input", .int8, .uint8)
        guard output.elementType == input.elementType else {
            throw unsupported(node, "input \(input.elementType) and output \(output.elementType) differ")
        }
        try expectRank(node, input, "input", 4)
        try expectRank(node, output, "output", 4)
        try expectType(node, size, "size", .int32)
        guard !(alignCorners && halfPixelCenters) else {
            throw fail(node, "align_corners and half_pixel_centers cannot both be set")
        }
        if let values = constantIntegers(size) {
            guard values.count == 2, values[0] == output.shape[1], values[1] == output.shape[2] else {
                throw fail(node, "size \(values) does not match output shape \(output.shape)")
            }
        } else {
            throw unsupported(node, "a computed (non-constant) size is not supported")
        }
        // Like TFLite, the integer kernel interpolates codes and ignores the quantization
        // parameters (converters give input and output the same ones).
        var p = ResizeBilinearParameters()
        p.batches = input.shape[0]
        p.inputHeight = input.shape[1]
        p.inputWidth = input.shape[2]
        p.depth = input.shape[3]
        p.outputHeight = output.shape[1]
        p.outputWidth = output.shape[2]
        try expectShape(node, output, "output", [p.batches, p.outputHeight, p.outputWidth, p.depth])
        guard p.outputHeight > 0, p.outputWidth > 0, p.inputHeight > 0, p.inputWidth > 0,
            p.inputHeight < (1 << 20), p.inputWidth < (1 << 20), p.outputHeight < (1 << 20), p.outputWidth < (1 << 20)
        else { throw fail(node, "sizes must be positive and below 2^20") }
        // ResizeBilinearInteger: scales in 10-bit fixed point, rounded.
        p.heightScale10 = Int32(((1 << 10) * p.inputHeight + p.outputHeight / 2) / p.outputHeight)
        p.widthScale10 = Int32(((1 << 10) * p.inputWidth + p.outputWidth / 2) / p.outputWidth)
        if alignCorners && p.outputHeight > 1 {
            p.heightScale10 = Int32(((1 << 10) * (p.inputHeight - 1) + (p.outputHeight - 1) / 2) / (p.outputHeight - 1))
        }
        if alignCorners && p.outputWidth > 1 {
            p.widthScale10 = Int32(((1 << 10) * (p.inputWidth - 1) + (p.outputWidth - 1) / 2) / (p.outputWidth - 1))
        }
        p.halfPixelCenters = halfPixelCenters
        return .resizeBilinearInteger(p, type: input.elementType)
    }

    func prepareArgMax(_ node: OperatorNode) throws(ModelError) -> Kernel {
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
        return .argMax(p)
    }

    func prepareGatherND(_ node: OperatorNode) throws(ModelError) -> Kernel {
        try expectCounts(node, inputs: 2...2, outputs: 1)
        let params = try inputInfo(node, 0), indices = try inputInfo(node, 1), output = outputInfo(node)
        try expectType(node, indices, "indices", .int32, .int64)
        guard params.elementType == output.elementType else {
            throw unsupported(node, "params \(params.elementType) and output \(output.elementType) differ")
        }
        guard let depth = indices.shape.last, indices.shape.count >= 1, depth >= 1, depth <= params.shape.count else {
            throw fail(node, "indices shape \(indices.shape) does not fit params shape \(params.shape)")
        }
        let expected = Array(indices.shape.dropLast()) + Array(params.shape[depth...])
        try expectShape(node, output, "output", expected)
        let elementSize = params.elementType.byteSize ?? 1
        var p = GatherNDParameters()
        p.indexDepth = depth
        p.sliceCount = product(indices.shape.dropLast()[...])
        p.sliceBytes = product(params.shape[depth...]) * elementSize
        p.paramsBytes = params.byteCount
        p.byteStrides = (0..<depth).map { product(params.shape[($0 + 1)...]) * elementSize }
        p.indicesAreInt64 = indices.elementType == .int64
        // Constant indices are checked once here, so a model whose file points a gather outside
        // its params is refused at load instead of failing every invoke.
        if let constant = model.constantBytes(indices.index), let base = constant.baseAddress {
            for slice in 0..<p.sliceCount where p.sourceOffset(ofSlice: slice, indices: base) == nil {
                throw fail(node, "constant index \(slice) points outside the params tensor \(params.shape)")
            }
        }
        return .gatherND(p)
    }

    func prepareReshape(_ node: OperatorNode) throws(ModelError) -> Kernel {
        try expectCounts(node, inputs: 1...2, outputs: 1)
        let input = try inputInfo(node, 0), output = outputInfo(node)
        guard input.elementType == output.elementType else {
            throw unsupported(node, "input \(input.elementType) and output \(output.elementType) differ")
        }
        guard input.elementCount == output.elementCount else {
            throw fail(node, "cannot reshape \(input.shape) (\(input.elementCount) elements) to \(output.shape)")
        }
        if node.code == .reshape, node.inputs.count == 2, node.inputs[1] >= 0,
            let requested = constantIntegers(info(node.inputs[1]))
        {
            // A -1 entry is inferred; every other entry must match the output tensor.
            guard requested.count == output.shape.count,
                zip(requested, output.shape).allSatisfy({ $0 == -1 || $0 == $1 })
            else {
                throw fail(node, "new shape \(requested) does not match output shape \(output.shape)")
            }
        }
        return .copy(byteCount: input.byteCount)
    }

    func prepareConcatenation(_ node: OperatorNode) throws(ModelError) -> Kernel {
        guard case let .concatenation(rawAxis, activation) = node.options else {
            throw fail(node, "missing ConcatenationOptions")
        }
        guard node.inputs.count >= 1, node.outputs.count == 1 else { throw fail(node, "needs inputs and one output") }
        guard activation == .none else { throw unsupported(node, "fused activation \(activation) is not supported") }
        let output = outputInfo(node)
        let axis = try normalizedAxis(node, rawAxis, rank: output.shape.count)
        var p = ChunkCopyParameters()
        p.outer = product(output.shape[..<axis])
        let inner = product(output.shape[(axis + 1)...])
        let elementSize = output.elementType.byteSize ?? 1
        var total = 0
        for position in node.inputs.indices {
            let tensor = try inputInfo(node, position)
            guard tensor.elementType == output.elementType, tensor.shape.count == output.shape.count else {
                throw fail(node, "input \(position) (\(tensor.elementType) \(tensor.shape)) does not fit output \(output.elementType) \(output.shape)")
            }
            for dimension in tensor.shape.indices where dimension != axis && tensor.shape[dimension] != output.shape[dimension] {
                throw fail(node, "input \(position) shape \(tensor.shape) does not fit output shape \(output.shape)")
            }
            if output.elementType == .int8 || output.elementType == .uint8 {
                guard tensor.quantization?.scale == output.quantization?.scale,
                    tensor.quantization?.zeroPoint == output.quantization?.zeroPoint
                else { throw unsupported(node, "inputs with different quantization than the output") }
            }
            total += tensor.shape[axis]
            p.chunkBytes.append(tensor.shape[axis] * inner * elementSize)
        }
        guard total == output.shape[axis] else {
            throw fail(node, "inputs add up to \(total) along axis \(axis), output has \(output.shape[axis])")
        }
        p.rowBytes = p.chunkBytes.reduce(0, +)
        return .concatenate(p)
    }

    func preparePack(_ node: OperatorNode) throws(ModelError) -> Kernel {
        guard case let .pack(count, rawAxis) = node.options else { throw fail(node, "missing PackOptions") }
        guard node.inputs.count == count, count >= 1, node.outputs.count == 1 else {
            throw fail(node, "values_count \(count) does not match \(node.inputs.count) inputs")
        }
        let output = outputInfo(node)
        let first = try inputInfo(node, 0)
        let axis = try normalizedAxis(node, rawAxis, rank: first.shape.count + 1)
        var expected = first.shape
        expected.insert(count, at: axis)
        try expectShape(node, output, "output", expected)
        for position in node.inputs.indices {
            let tensor = try inputInfo(node, position)
            guard tensor.shape == first.shape, tensor.elementType == output.elementType else {
                throw fail(node, "input \(position) (\(tensor.elementType) \(tensor.shape)) differs from input 0")
            }
            if output.elementType == .int8 || output.elementType == .uint8 {
                guard tensor.quantization?.scale == output.quantization?.scale,
                    tensor.quantization?.zeroPoint == output.quantization?.zeroPoint
                else { throw unsupported(node, "inputs with different quantization than the output") }
            }
        }
        let chunk = product(first.shape[axis...]) * (output.elementType.byteSize ?? 1)
        var p = ChunkCopyParameters()
        p.outer = product(first.shape[..<axis])
        p.chunkBytes = [Int](repeating: chunk, count: count)
        p.rowBytes = chunk * count
        return .concatenate(p)
    }

    func prepareUnpack(_ node: OperatorNode) throws(ModelError) -> Kernel {
        guard case let .unpack(count, rawAxis) = node.options else { throw fail(node, "missing UnpackOptions") }
        let input = try inputInfo(node, 0)
        guard node.inputs.count == 1, node.outputs.count == count, count >= 1 else {
            throw fail(node, "num \(count) does not match \(node.outputs.count) outputs")
        }
        let axis = try normalizedAxis(node, rawAxis, rank: input.shape.count)
        guard input.shape[axis] == count else {
            throw fail(node, "input dimension \(axis) is \(input.shape[axis]), not \(count)")
        }
        var expected = input.shape
        expected.remove(at: axis)
        for position in node.outputs.indices {
            let tensor = outputInfo(node, position)
            try expectShape(node, tensor, "output \(position)", expected)
            guard tensor.elementType == input.elementType else {
                throw unsupported(node, "output \(position) type \(tensor.elementType) differs from input \(input.elementType)")
            }
        }
        let chunk = product(input.shape[(axis + 1)...]) * (input.elementType.byteSize ?? 1)
        var p = ChunkCopyParameters()
        p.outer = product(input.shape[..<axis])
        p.chunkBytes = [Int](repeating: chunk, count: count)
        p.rowBytes = chunk * count
        return .split(p)
    }

    func preparePool(_ node: OperatorNode) throws(ModelError) -> Kernel {
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
        return node.code == .averagePool2D ? .averagePoolInt8(p) : .maxPoolInt8(p)
    }

    func prepareSoftmax(_ node: OperatorNode) throws(ModelError) -> Kernel {
        guard case let .softmax(beta) = node.options else { throw fail(node, "missing SoftmaxOptions") }
        try expectCounts(node, inputs: 1...1, outputs: 1)
        let input = try inputInfo(node, 0), output = outputInfo(node)
        try expectShape(node, output, "output", input.shape)
        guard let depth = input.shape.last, depth > 0 else { throw fail(node, "input needs rank ≥ 1") }
        let outer = input.elementCount / depth
        switch (input.elementType, output.elementType) {
        case (.float32, .float32):
            return .softmaxFloat(outer: outer, depth: depth, beta: beta)
        case (.int8, .int8):
            let qi = try quantization(node, input, "input"), qo = try quantization(node, output, "output")
            guard qo.zeroPoint == -128, abs(qo.scale - 1.0 / 256) <= 0.001 / 256 else {
                throw fail(node, "int8 SOFTMAX output must have scale 1/256 and zero point -128")
            }
            var p = SoftmaxParameters()
            p.outer = outer
            p.depth = depth
            let scaling = try ReferenceKernels.softmaxScaling(beta: Double(beta), inputScale: Double(qi.scale))
            p.inputMultiplier = scaling.multiplier
            p.inputLeftShift = scaling.leftShift
            p.diffMin = scaling.diffMin
            return .softmaxInt8(p)
        default:
            throw unsupported(node, "\(input.elementType) → \(output.elementType) is not supported")
        }
    }

    func prepareMean(_ node: OperatorNode) throws(ModelError) -> Kernel {
        guard case let .reducer(keepDims) = node.options else { throw fail(node, "missing ReducerOptions") }
        try expectCounts(node, inputs: 2...2, outputs: 1)
        let input = try inputInfo(node, 0), axisTensor = try inputInfo(node, 1), output = outputInfo(node)
        try expectType(node, input, "input", .int8, .float32)
        guard output.elementType == input.elementType else {
            throw unsupported(node, "input \(input.elementType) and output \(output.elementType) differ")
        }
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
        return .mean(p)
    }
}
