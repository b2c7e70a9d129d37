// QUANTIZE (float → int8/uint8, and 8-bit → 8-bit requantization) and DEQUANTIZE (8/16-bit →
// float). The optimised hook turns 8-bit inputs into 256-entry tables and quantizes float → int8
// with SIMD.
import CKernels

// MARK: registration

extension OperatorTable {
    static let quantize = [
        OperatorRegistration(.quantize, newestVersion: 3) { (context, node) throws(ModelError) in
            try context.prepareQuantize(node)
        },
        OperatorRegistration(.dequantize, newestVersion: 6) { (context, node) throws(ModelError) in
            try context.prepareDequantize(node)
        },
    ]
}

// MARK: parameters (computed by Prepare, read by Eval)

/// Requantization of an integer tensor to another scale/zero point (QUANTIZE int→int).
struct RequantizeParameters: Sendable {
    var count = 0
    var inputType: TensorElementType = .int8, outputType: TensorElementType = .int8
    var inputZeroPoint: Int32 = 0, outputZeroPoint: Int32 = 0
    var multiplier = QuantizedMultiplier(0)
}

// MARK: Prepare

extension PrepareContext {
    func prepareQuantize(_ node: OperatorNode) throws(ModelError) -> PreparedKernel {
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
            return quantizeFloatKernel(count: input.elementCount, scale: qo.scale, zeroPoint: qo.zeroPoint,
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
            return requantizeKernel(p)
        default:
            throw unsupported(node, "input type \(input.elementType) is not supported")
        }
    }

    func prepareDequantize(_ node: OperatorNode) throws(ModelError) -> PreparedKernel {
        try expectCounts(node, inputs: 1...1, outputs: 1)
        let input = try inputInfo(node, 0), output = outputInfo(node)
        try expectType(node, input, "input", .int8, .uint8, .int16)
        try expectType(node, output, "output", .float32)
        try expectShape(node, output, "output", input.shape)
        guard input.quantization?.isPerChannel != true else {
            throw unsupported(node, "per-channel dequantization is not supported")
        }
        let q = try quantization(node, input, "input")
        return dequantizeKernel(count: input.elementCount, scale: q.scale, zeroPoint: q.zeroPoint,
                                inputType: input.elementType)
    }
}

// MARK: Eval, as Prepare leaves it for each node

extension PrepareContext {
    func quantizeFloatKernel(count: Int, scale: Float, zeroPoint: Int32, outputType: TensorElementType) -> PreparedKernel {
        func apply(_ count: Int, _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer) {
            ReferenceKernels.affineQuantize(count: count, scale: scale, zeroPoint: zeroPoint, outputType: outputType,
                                            input: input.assumingMemoryBound(to: Float.self), output: output)
        }
        return PreparedKernel(
            reference: { tensors in
                apply(count, tensors.input(0), tensors.output())
                return nil
            },
            optimized: optimizedVariant.flatMap {
                OptimizedKernel.quantize(count: count, scale: scale, zeroPoint: zeroPoint, outputType: outputType, variant: $0)
            },
            elementwise: outputType.byteSize.map {
                ElementwiseStage(count: count, inputElementBytes: 4, outputElementBytes: $0, apply: apply)
            })
    }

    func requantizeKernel(_ p: RequantizeParameters) -> PreparedKernel {
        PreparedKernel(
            reference: { tensors in
                ReferenceKernels.requantize(p, input: tensors.input(0), output: tensors.output())
                return nil
            },
            optimized: optimizedVariant.flatMap { OptimizedKernel.requantize(p, variant: $0) },
            elementwise: p.outputType.byteSize.map {
                ElementwiseStage(count: p.count, inputElementBytes: 1, outputElementBytes: $0) { count, input, output in
                    var p = p
                    p.count = count
                    ReferenceKernels.requantize(p, input: input, output: output)
                }
            })
    }

    func dequantizeKernel(count: Int, scale: Float, zeroPoint: Int32, inputType: TensorElementType) -> PreparedKernel {
        func apply(_ count: Int, _ input: UnsafeRawPointer, _ output: UnsafeMutableRawPointer) {
            ReferenceKernels.dequantize(count: count, scale: scale, zeroPoint: zeroPoint, inputType: inputType,
                                        input: input, output: output.assumingMemoryBound(to: Float.self))
        }
        return PreparedKernel(
            reference: { tensors in
                apply(count, tensors.input(0), tensors.output())
                return nil
            },
            optimized: optimizedVariant.flatMap {
                OptimizedKernel.dequantize(count: count, scale: scale, zeroPoint: zeroPoint, inputType: inputType,
                                           variant: $0)
            },
            // Only 8-bit inputs: a table before it has 1-byte entries.
            elementwise: inputType.byteSize == 1
                ? ElementwiseStage(count: count, inputElementBytes: 1, outputElementBytes: 4, apply: apply) : nil)
    }
}

// MARK: reference kernels

extension ReferenceKernels {
    /// QUANTIZE float → int8/uint8 (AffineQuantize): q = clamp(round(x / scale) + zp), float division,
    /// rounding half away from zero.
    static func affineQuantize(count: Int, scale: Float, zeroPoint: Int32, outputType: TensorElementType,
                               input: UnsafePointer<Float>, output: UnsafeMutableRawPointer)
    {
        let range = QuantizedRange.of(outputType)
        if outputType == .int8 {
            let out = output.assumingMemoryBound(to: Int8.self)
            for i in 0..<count {
                out[i] = Int8(truncatingIfNeeded: range.clamp(saturatingInt32(tfliteRound(input[i] / scale)) &+ zeroPoint))
            }
        } else {
            let out = output.assumingMemoryBound(to: UInt8.self)
            for i in 0..<count {
                out[i] = UInt8(truncatingIfNeeded: range.clamp(saturatingInt32(tfliteRound(input[i] / scale)) &+ zeroPoint))
            }
        }
    }

    /// QUANTIZE int8/uint8 → int8/uint8 (Requantize): q' = clamp(requantize(q − zp, s/s') + zp').
    static func requantize(_ p: RequantizeParameters, input: UnsafeRawPointer, output: UnsafeMutableRawPointer) {
        let range = QuantizedRange.of(p.outputType)
        for i in 0..<p.count {
            let value: Int32 = p.inputType == .int8
                ? Int32(input.load(fromByteOffset: i, as: Int8.self))
                : Int32(input.load(fromByteOffset: i, as: UInt8.self))
            let result = range.clamp(p.multiplier.apply(value &- p.inputZeroPoint) &+ p.outputZeroPoint)
            if p.outputType == .int8 {
                output.storeBytes(of: Int8(truncatingIfNeeded: result), toByteOffset: i, as: Int8.self)
            } else {
                output.storeBytes(of: UInt8(truncatingIfNeeded: result), toByteOffset: i, as: UInt8.self)
            }
        }
    }

    /// DEQUANTIZE: x = float(scale × (q − zp)), the product taken in double as TFLite does (exact,
    /// then rounded once to float).
    static func dequantize(count: Int, scale: Float, zeroPoint: Int32, inputType: TensorElementType,
                           input: UnsafeRawPointer, output: UnsafeMutablePointer<Float>)
    {
        let doubleScale = Double(scale)
        switch inputType {
        case .int8:
            let values = input.assumingMemoryBound(to: Int8.self)
            for i in 0..<count { output[i] = Float(doubleScale * Double(Int32(values[i]) - zeroPoint)) }
        case .uint8:
            let values = input.assumingMemoryBound(to: UInt8.self)
            for i in 0..<count { output[i] = Float(doubleScale * Double(Int32(values[i]) - zeroPoint)) }
        default:
            let values = input.assumingMemoryBound(to: Int16.self)
            for i in 0..<count { output[i] = Float(doubleScale * Double(Int32(values[i]) - zeroPoint)) }
        }
    }
}

// MARK: optimised kernels

extension OptimizedKernel {
    /// QUANTIZE float32 → int8 (SIMD); nil for uint8 outputs.
    static func quantize(count: Int, scale: Float, zeroPoint: Int32, outputType: TensorElementType,
                         variant: KernelVariant) -> OptimizedKernel? {
        guard variant.hasOptimizedKernels, outputType == .int8 else { return nil }
        let elements = Int64(count)
        return OptimizedKernel(name: "quantize-float-int8", variant: variant, evaluate: { tensors in
            pw_quantize_float_int8(scale, zeroPoint, elements, tensors.input(0).assumingMemoryBound(to: Float.self),
                                   tensors.output().assumingMemoryBound(to: Int8.self))
            return nil
        })
    }

    /// QUANTIZE 8-bit → 8-bit as a 256-entry table.
    static func requantize(_ p: RequantizeParameters, variant: KernelVariant) -> OptimizedKernel? {
        guard variant.hasOptimizedKernels else { return nil }
        var all = p
        all.count = 256
        let bytes = p.outputType == .int8 || p.outputType == .uint8 ? 1 : 0
        guard bytes == 1, p.inputType == .int8 || p.inputType == .uint8 else { return nil }
        return byteTable(entryBytes: 1, count: p.count, variant: variant, name: "requantize-table") {
            ReferenceKernels.requantize(all, input: $0, output: $1)
        }
    }

    /// DEQUANTIZE 8-bit → float32 as a 256-entry table.
    static func dequantize(count: Int, scale: Float, zeroPoint: Int32, inputType: TensorElementType,
                           variant: KernelVariant) -> OptimizedKernel? {
        guard variant.hasOptimizedKernels, inputType == .int8 || inputType == .uint8 else { return nil }
        return byteTable(entryBytes: 4, count: count, variant: variant, name: "dequantize-table") {
            ReferenceKernels.dequantize(count: 256, scale: scale, zeroPoint: zeroPoint, inputType: inputType,
                                        input: $0, output: $1.assumingMemoryBound(to: Float.self))
        }
    }
}
