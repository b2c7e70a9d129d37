// SOFTMAX float32, and int8 → int8 in gemmlowp fixed point (GemmlowpFixedPoint.swift).
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// MARK: registration

extension OperatorTable {
    static let softmax = [
        OperatorRegistration(.softmax, newestVersion: 3) { (context, node) throws(ModelError) in
            try context.prepareSoftmax(node)
        },
    ]
}

// MARK: parameters (computed by Prepare, read by Eval)

/// SOFTMAX int8 → int8 (reference fixed-point path).
struct SoftmaxParameters: Sendable {
    var outer = 0, depth = 0
    var inputMultiplier: Int32 = 0, inputLeftShift: Int32 = 0, diffMin: Int32 = 0
    var outputType: TensorElementType = .int8
}

// MARK: Prepare

extension PrepareContext {
    func prepareSoftmax(_ node: OperatorNode) throws(ModelError) -> PreparedKernel {
        guard case let .softmax(beta) = node.options else { throw fail(node, "missing SoftmaxOptions") }
        try expectCounts(node, inputs: 1...1, outputs: 1)
        let input = try inputInfo(node, 0), output = outputInfo(node)
        try expectShape(node, output, "output", input.shape)
        guard let depth = input.shape.last, depth > 0 else { throw fail(node, "input needs rank ≥ 1") }
        let outer = input.elementCount / depth
        switch (input.elementType, output.elementType) {
        case (.float32, .float32):
            return softmaxFloatKernel(outer: outer, depth: depth, beta: beta)
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
            return softmaxInt8Kernel(p)
        default:
            throw unsupported(node, "\(input.elementType) → \(output.elementType) is not supported")
        }
    }
}

// MARK: Eval, as Prepare leaves it for each node

extension PrepareContext {
    func softmaxFloatKernel(outer: Int, depth: Int, beta: Float) -> PreparedKernel {
        PreparedKernel(reference: { tensors in
            ReferenceKernels.softmaxFloat(outer: outer, depth: depth, beta: beta,
                                          input: tensors.input(0).assumingMemoryBound(to: Float.self),
                                          output: tensors.output().assumingMemoryBound(to: Float.self))
            return nil
        })
    }

    func softmaxInt8Kernel(_ p: SoftmaxParameters) -> PreparedKernel {
        PreparedKernel(reference: { tensors in
            ReferenceKernels.softmaxInt8(p, input: tensors.input(0).assumingMemoryBound(to: Int8.self),
                                         output: tensors.output().assumingMemoryBound(to: Int8.self))
            return nil
        })
    }
}

// MARK: reference kernels

extension ReferenceKernels {
    /// SOFTMAX float (reference): exp((x − max) β) / Σ, in float.
    static func softmaxFloat(outer: Int, depth: Int, beta: Float, input: UnsafePointer<Float>,
                             output: UnsafeMutablePointer<Float>)
    {
        for row in 0..<outer {
            let values = input + row * depth, out = output + row * depth
            var maximum = -Float.greatestFiniteMagnitude
            for i in 0..<depth { maximum = max(maximum, values[i]) }
            var sum: Float = 0
            for i in 0..<depth {
                out[i] = expf((values[i] - maximum) * beta)
                sum += out[i]
            }
            for i in 0..<depth { out[i] = out[i] / sum }
        }
    }

    /// PreprocessSoftmaxScaling and CalculateInputRadius for 5 integer bits of scaled difference.
    static func softmaxScaling(beta: Double, inputScale: Double) throws(ModelError)
        -> (multiplier: Int32, leftShift: Int32, diffMin: Int32)
    {
        let integerBits = 5
        let real = min(beta * inputScale * Double(1 << (31 - integerBits)), Double((Int64(1) << 31) - 1))
        guard real.isFinite, real > 0 else { throw .invalid("SOFTMAX: beta × input scale \(real) is not positive") }
        let quantized = QuantizedMultiplier(real)
        guard quantized.shift >= 0, quantized.shift <= 30 else {
            throw .unsupported("SOFTMAX: input scaling shift \(quantized.shift) is out of range")
        }
        let maxInputRescaled = Double((1 << integerBits) - 1) * Double(Int64(1) << (31 - integerBits))
            / Double(Int64(1) << quantized.shift)
        let radius = Int32(maxInputRescaled.rounded(.down))
        return (quantized.multiplier, Int32(quantized.shift), -radius)
    }

    /// SOFTMAX int8 → int8 (reference): differences from the row maximum are scaled into Q5.26,
    /// exponentiated in fixed point, summed in Q12.19, and each exp is multiplied by the sum's
    /// reciprocal; output zero point −128, scale 1/256.
    static func softmaxInt8(_ p: SoftmaxParameters, input: UnsafePointer<Int8>, output: UnsafeMutablePointer<Int8>) {
        let accumulationIntegerBits = 12
        for row in 0..<p.outer {
            let values = input + row * p.depth, out = output + row * p.depth
            var maximum: Int32 = -128
            for c in 0..<p.depth { maximum = max(maximum, Int32(values[c])) }
            var sumOfExps: Int32 = 0
            for c in 0..<p.depth {
                let difference = Int32(values[c]) - maximum
                if difference >= p.diffMin {
                    let scaled = saturatingRoundingDoublingHighMul(difference &* (1 << p.inputLeftShift), p.inputMultiplier)
                    let exp = GemmlowpFixedPoint.expOnNegativeValues(scaled)
                    sumOfExps = sumOfExps &+ GemmlowpFixedPoint.rescale(exp, from: 0, to: accumulationIntegerBits)
                }
            }
            let (scale, bitsOverUnit) = GemmlowpFixedPoint.reciprocal(sumOfExps, integerDigits: accumulationIntegerBits)
            for c in 0..<p.depth {
                let difference = Int32(values[c]) - maximum
                if difference >= p.diffMin {
                    let scaled = saturatingRoundingDoublingHighMul(difference &* (1 << p.inputLeftShift), p.inputMultiplier)
                    let exp = GemmlowpFixedPoint.expOnNegativeValues(scaled)
                    let unsaturated = roundingDivideByPOT(GemmlowpFixedPoint.multiply(scale, exp), bitsOverUnit + 31 - 8)
                    out[c] = Int8(truncatingIfNeeded: min(max(unsaturated - 128, -128), 127))
                } else {
                    out[c] = -128
                }
            }
        }
    }
}

// MARK: optimised kernels: none (the reference kernel runs in every variant)
