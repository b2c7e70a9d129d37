// LOGISTIC, TANH and LOG (float, or 8-bit through TFLite's lookup table), SQRT (float) and the
// RELU family (float, or 8-bit requantize-and-clamp). The optimised hook runs the 8-bit tables
// with SIMD lookups and SQRT with SIMD.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CKernels

// MARK: registration

extension OperatorTable {
    static let activations = [
        OperatorRegistration(.logistic, newestVersion: 3) { (context, node) throws(ModelError) in
            try context.prepareTableActivation(node)
        },
        OperatorRegistration(.tanh, newestVersion: 3) { (context, node) throws(ModelError) in
            try context.prepareTableActivation(node)
        },
        OperatorRegistration(.log, newestVersion: 2) { (context, node) throws(ModelError) in
            try context.prepareTableActivation(node)
        },
        OperatorRegistration(.sqrt, newestVersion: 2) { (context, node) throws(ModelError) in
            try context.prepareUnaryFloat(node, .sqrt)
        },
        OperatorRegistration(.relu, newestVersion: 3) { (context, node) throws(ModelError) in
            try context.prepareRelu(node)
        },
        OperatorRegistration(.relu6, newestVersion: 3) { (context, node) throws(ModelError) in
            try context.prepareRelu(node)
        },
        OperatorRegistration(.reluN1To1, newestVersion: 2) { (context, node) throws(ModelError) in
            try context.prepareRelu(node)
        },
    ]
}

// MARK: parameters (computed by Prepare, read by Eval)

enum FloatUnaryOperation: Sendable { case sqrt, log, logistic, tanh, relu, relu6, reluN1To1 }

// MARK: Prepare

extension PrepareContext {
    /// One input, one output of its shape and element type (the activations below).
    func elementwiseUnaryTensors(_ node: OperatorNode) throws(ModelError) -> (input: TensorInfo, output: TensorInfo) {
        try expectCounts(node, inputs: 1...1, outputs: 1)
        let input = try inputInfo(node, 0), output = outputInfo(node)
        try expectShape(node, output, "output", input.shape)
        try expectSameType(node, input, output)
        return (input, output)
    }

    /// LOGISTIC, TANH and LOG: float, or 8-bit through a table, built as TFLite's LUTPopulate builds
    /// it (dequantize, transform in float, quantize with round-half-away).
    func prepareTableActivation(_ node: OperatorNode) throws(ModelError) -> PreparedKernel {
        let (input, output) = try elementwiseUnaryTensors(node)
        let operation: FloatUnaryOperation = node.code == .logistic ? .logistic : node.code == .tanh ? .tanh : .log
        switch input.elementType {
        case .float32:
            return unaryFloatKernel(operation, count: input.elementCount)
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
            return lookupTableKernel(count: input.elementCount, table: table)
        default:
            throw unsupported(node, "\(input.elementType) is not supported")
        }
    }

    func prepareUnaryFloat(_ node: OperatorNode, _ operation: FloatUnaryOperation) throws(ModelError) -> PreparedKernel {
        try expectCounts(node, inputs: 1...1, outputs: 1)
        let input = try inputInfo(node, 0), output = outputInfo(node)
        try expectType(node, input, "input", .float32)
        try expectType(node, output, "output", .float32)
        try expectShape(node, output, "output", input.shape)
        return unaryFloatKernel(operation, count: input.elementCount)
    }

    func prepareRelu(_ node: OperatorNode) throws(ModelError) -> PreparedKernel {
        let (input, output) = try elementwiseUnaryTensors(node)
        let operation: FloatUnaryOperation = node.code == .relu ? .relu : node.code == .relu6 ? .relu6 : .reluN1To1
        switch input.elementType {
        case .float32:
            return unaryFloatKernel(operation, count: input.elementCount)
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
            return reluQuantizedKernel(count: input.elementCount, type: input.elementType, inputZeroPoint: qi.zeroPoint,
                                       outputZeroPoint: qo.zeroPoint, multiplier: multiplier, range: range)
        default:
            throw unsupported(node, "\(input.elementType) is not supported")
        }
    }
}

// MARK: Eval, as Prepare leaves it for each node

extension PrepareContext {
    func unaryFloatKernel(_ operation: FloatUnaryOperation, count: Int) -> PreparedKernel {
        func apply(_ count: Int, _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer) {
            ReferenceKernels.unaryFloat(operation, count: count, input: input.assumingMemoryBound(to: Float.self),
                                        output: output.assumingMemoryBound(to: Float.self))
        }
        return PreparedKernel(
            reference: { tensors in
                apply(count, tensors.input(0), tensors.output())
                return nil
            },
            optimized: optimizedVariant.flatMap { OptimizedKernel.unaryFloat(operation, count: count, variant: $0) },
            elementwise: ElementwiseStage(count: count, inputElementBytes: 4, outputElementBytes: 4, apply: apply))
    }

    func lookupTableKernel(count: Int, table: [UInt8]) -> PreparedKernel {
        func apply(_ count: Int, _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer) {
            ReferenceKernels.lookup(count: count, table: table, input: input.assumingMemoryBound(to: UInt8.self),
                                    output: output.assumingMemoryBound(to: UInt8.self))
        }
        return PreparedKernel(
            reference: { tensors in
                apply(count, tensors.input(0), tensors.output())
                return nil
            },
            optimized: optimizedVariant.flatMap { variant in
                guard variant.hasOptimizedKernels else { return nil }
                return OptimizedKernel.byteTable(entryBytes: 1, count: count, variant: variant, name: "lookup-table") {
                    apply(256, $0, $1)
                }
            },
            elementwise: ElementwiseStage(count: count, inputElementBytes: 1, outputElementBytes: 1, apply: apply))
    }

    func reluQuantizedKernel(count: Int, type: TensorElementType, inputZeroPoint: Int32, outputZeroPoint: Int32,
                             multiplier: QuantizedMultiplier, range: QuantizedRange) -> PreparedKernel {
        PreparedKernel(reference: { tensors in
            ReferenceKernels.reluQuantized(count: count, type: type, inputZeroPoint: inputZeroPoint,
                                           outputZeroPoint: outputZeroPoint, multiplier: multiplier, range: range,
                                           input: tensors.input(0), output: tensors.output())
            return nil
        })
    }
}

// MARK: reference kernels

extension ReferenceKernels {
    static func logistic(_ x: Float) -> Float { 1.0 / (1.0 + expf(-x)) }
    static func naturalLogarithm(_ x: Float) -> Float { logf(x) }
    static func hyperbolicTangent(_ x: Float) -> Float { tanhf(x) }

    /// TFLite's LUTPopulate for 8-bit types: for every input code, dequantize (float), apply the
    /// function in float, quantize with round-half-away-from-zero, clamp. Indexed by the input's
    /// bit pattern, so int8 −1 lives at 255.
    static func lookupTable(type: TensorElementType, inputScale: Float, inputZeroPoint: Int32, outputScale: Float,
                            outputZeroPoint: Int32, transform: (Float) -> Float) -> [UInt8]
    {
        var table = [UInt8](repeating: 0, count: 256)
        let inverseScale = 1 / outputScale
        let range = QuantizedRange.of(type)
        for value in range.minimum...range.maximum {
            let dequantized = inputScale * Float(value - inputZeroPoint)
            let transformed = transform(dequantized)
            let rescaled = tfliteRound(transformed * inverseScale)
            let quantized = saturatingInt32(rescaled + Float(outputZeroPoint))
            let clamped = range.clamp(quantized)
            table[Int(UInt8(truncatingIfNeeded: value))] = UInt8(truncatingIfNeeded: clamped)
        }
        return table
    }

    static func lookup(count: Int, table: [UInt8], input: UnsafePointer<UInt8>, output: UnsafeMutablePointer<UInt8>) {
        table.withUnsafeBufferPointer { table in
            for i in 0..<count { output[i] = table[Int(input[i])] }
        }
    }

    static func unaryFloat(_ operation: FloatUnaryOperation, count: Int, input: UnsafePointer<Float>,
                           output: UnsafeMutablePointer<Float>)
    {
        switch operation {
        case .sqrt: for i in 0..<count { output[i] = input[i].squareRoot() }
        case .log: for i in 0..<count { output[i] = naturalLogarithm(input[i]) }
        case .logistic: for i in 0..<count { output[i] = logistic(input[i]) }
        case .tanh: for i in 0..<count { output[i] = tanhf(input[i]) }
        case .relu: for i in 0..<count { output[i] = max(0, input[i]) }
        case .relu6: for i in 0..<count { output[i] = min(max(0, input[i]), 6) }
        case .reluN1To1: for i in 0..<count { output[i] = min(max(-1, input[i]), 1) }
        }
    }

    /// RELU/RELU6/RELU_N1_TO_1 on 8-bit data (ReluX): out = clamp(zp_out + requantize(q − zp_in)).
    static func reluQuantized(count: Int, type: TensorElementType, inputZeroPoint: Int32, outputZeroPoint: Int32,
                              multiplier: QuantizedMultiplier, range: QuantizedRange, input: UnsafeRawPointer,
                              output: UnsafeMutableRawPointer)
    {
        for i in 0..<count {
            let value: Int32 = type == .int8 ? Int32(input.load(fromByteOffset: i, as: Int8.self))
                : Int32(input.load(fromByteOffset: i, as: UInt8.self))
            let result = range.clamp(outputZeroPoint &+ multiplier.apply(value &- inputZeroPoint))
            output.storeBytes(of: UInt8(truncatingIfNeeded: result), toByteOffset: i, as: UInt8.self)
        }
    }
}

// MARK: optimised kernels

extension OptimizedKernel {
    /// SQRT float32 with SIMD (bit-exact: IEEE square root); nil for the other float operators.
    static func unaryFloat(_ operation: FloatUnaryOperation, count: Int, variant: KernelVariant) -> OptimizedKernel? {
        guard variant.hasOptimizedKernels, case .sqrt = operation else { return nil }
        let isa = variant.isa, elements = Int64(count)
        return OptimizedKernel(name: "sqrt-\(variant.rawValue)", variant: variant, evaluate: { tensors in
            pw_sqrt_float(isa, elements, tensors.input(0).assumingMemoryBound(to: Float.self),
                          tensors.output().assumingMemoryBound(to: Float.self))
            return nil
        })
    }
}
