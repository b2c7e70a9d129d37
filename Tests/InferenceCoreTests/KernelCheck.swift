@testable import InferenceCore
import TestSupport

/// Runs one operator through the reference kernel and through an optimised variant on the same
/// pseudo-random data, for the bit-exactness tests: many random shapes without writing a model
/// file per case. Calls each operator's optimised hook directly (`@testable`). Test support only,
/// not part of the shipped module.
enum KernelCheck {
    /// A convolution case: NHWC geometry, quantization, fused activation range.
    struct Convolution: Sendable {
        var batches = 1, inputHeight = 8, inputWidth = 8, inputDepth = 8, outputDepth = 8
        var filterHeight = 3, filterWidth = 3, strideHeight = 1, strideWidth = 1
        var dilationHeight = 1, dilationWidth = 1
        /// SAME padding (TFLite's, extra row/column at the end) when true, VALID when false.
        var samePadding = true
        var depthwise = false
        var inputZeroPoint: Int32 = 0, outputZeroPoint: Int32 = 0
        /// Real per-channel multipliers input_scale × filter_scale[c] / output_scale (one = per tensor).
        var multipliers: [Double] = [0.01]
        var activationMinimum: Int32 = -128, activationMaximum: Int32 = 127
        var hasBias = true
        var seed: UInt64 = 1
        init() {}
    }

    /// Reproducible data from a seed: the module's `SplitMix64` (RobustnessTests.swift).
    typealias Random = SplitMix64

    /// Runs `kernel` on standalone buffers: `inputs` are tensors 0..<n, `output` tensor n.
    static func run(_ kernel: OptimizedKernel, inputs: [UnsafeRawPointer], output: UnsafeMutableRawPointer,
                    pool: OpaquePointer? = nil) {
        let pointers = inputs.map { UnsafeMutableRawPointer(mutating: $0) } + [output]
        let inputIndices = Array(0..<inputs.count), outputIndices = [inputs.count]
        pointers.withUnsafeBufferPointer { data in
            inputIndices.withUnsafeBufferPointer { i in
                outputIndices.withUnsafeBufferPointer { o in
                    let failure = kernel.evaluate(NodeTensors(data: data, inputIndices: i, outputIndices: o,
                                                              scratch: output, pool: pool))
                    precondition(failure == nil, "optimised kernels do not fail")
                }
            }
        }
    }

    static func padding(same: Bool, stride: Int, dilation: Int, input: Int, filter: Int) -> (output: Int, pad: Int) {
        let effective = (filter - 1) * dilation + 1
        let output = same ? (input + stride - 1) / stride : (input - effective + stride) / stride
        let total = max(0, (output - 1) * stride + effective - input)
        return (output, total / 2)
    }

    /// (reference output, optimised output), or nil when `variant` has no kernel for this case
    /// (e.g. a depth multiplier above 1) or this CPU cannot run it.
    static func convolution(_ c: Convolution, variant: KernelVariant) -> (reference: [Int8], optimized: [Int8])? {
        var p = ConvolutionParameters()
        p.batches = c.batches
        p.inputHeight = c.inputHeight
        p.inputWidth = c.inputWidth
        p.inputDepth = c.inputDepth
        p.outputDepth = c.outputDepth
        p.filterHeight = c.filterHeight
        p.filterWidth = c.filterWidth
        p.strideHeight = c.strideHeight
        p.strideWidth = c.strideWidth
        p.dilationHeight = c.dilationHeight
        p.dilationWidth = c.dilationWidth
        p.depthMultiplier = c.depthwise ? c.outputDepth / c.inputDepth : 1
        let h = padding(same: c.samePadding, stride: c.strideHeight, dilation: c.dilationHeight, input: c.inputHeight,
                        filter: c.filterHeight)
        let w = padding(same: c.samePadding, stride: c.strideWidth, dilation: c.dilationWidth, input: c.inputWidth,
                        filter: c.filterWidth)
        guard h.output > 0, w.output > 0 else { return nil }
        p.outputHeight = h.output
        p.outputWidth = w.output
        p.padHeight = h.pad
        p.padWidth = w.pad
        p.inputOffset = -c.inputZeroPoint
        p.outputOffset = c.outputZeroPoint
        for channel in 0..<c.outputDepth {
            let q = QuantizedMultiplier(c.multipliers[channel % c.multipliers.count])
            p.multipliers.append(q.multiplier)
            p.shifts.append(Int32(q.shift))
        }
        p.range = QuantizedRange(minimum: c.activationMinimum, maximum: c.activationMaximum)
        p.hasBias = c.hasBias
        var random = Random(seed: c.seed)
        let input = (0..<(c.batches * c.inputHeight * c.inputWidth * c.inputDepth)).map { _ in random.int8() }
        let filterCount = c.depthwise ? c.filterHeight * c.filterWidth * c.outputDepth
            : c.outputDepth * c.filterHeight * c.filterWidth * c.inputDepth
        let filter = (0..<filterCount).map { _ in random.int8() }
        let bias = (0..<c.outputDepth).map { _ in Int32(truncatingIfNeeded: random.next() % 200_001) - 100_000 }
        let outputCount = c.batches * p.outputHeight * p.outputWidth * c.outputDepth
        var reference = [Int8](repeating: 0, count: outputCount)
        var optimized = [Int8](repeating: 0x55, count: outputCount)
        input.withUnsafeBufferPointer { x in
            filter.withUnsafeBufferPointer { f in
                bias.withUnsafeBufferPointer { b in
                    reference.withUnsafeMutableBufferPointer { o in
                        if c.depthwise {
                            ReferenceKernels.depthwiseConv2DPerChannelInt8(p, input: x.baseAddress!, filter: f.baseAddress!,
                                                                           bias: c.hasBias ? b.baseAddress : nil,
                                                                           output: o.baseAddress!)
                        } else {
                            ReferenceKernels.conv2DPerChannelInt8(p, input: x.baseAddress!, filter: f.baseAddress!,
                                                                  bias: c.hasBias ? b.baseAddress : nil, output: o.baseAddress!)
                        }
                    }
                }
            }
        }
        let kernel: OptimizedKernel? = filter.withUnsafeBufferPointer { f in
            bias.withUnsafeBufferPointer { b in
                OptimizedKernel.convolution(p, depthwise: c.depthwise, filter: f.baseAddress!,
                                            bias: c.hasBias ? b.baseAddress : nil, variant: variant)
            }
        }
        guard let kernel else { return nil }
        let pool = WorkerPool(threadCount: 2)
        input.withUnsafeBytes { x in
            optimized.withUnsafeMutableBytes { o in
                run(kernel, inputs: [x.baseAddress!], output: o.baseAddress!, pool: pool.pointer)
            }
        }
        return (reference, optimized)
    }

    /// An int8 element-wise/broadcast binary case (ADD, SUB or MUL) with random quantization.
    enum BinaryOperation: Sendable { case add, sub, mul }

    /// (reference, optimised) for `operation` on shapes `a` and `b` (numpy broadcasting).
    static func binary(_ operation: BinaryOperation, a shapeA: [Int], b shapeB: [Int], seed: UInt64,
                              variant: KernelVariant) -> (reference: [Int8], optimized: [Int8])? {
        guard let shape = BroadcastPlan.broadcastShape(shapeA, shapeB) else { return nil }
        var random = Random(seed: seed)
        let plan = BroadcastPlan(shapeA, shapeB, output: shape)
        func scale() -> Double { 0.002 + Double(random.next() % 1000) / 20000 }
        func zeroPoint() -> Int32 { Int32(random.int(-128...127)) }
        let s1 = scale(), s2 = scale(), so = scale()
        let z1 = zeroPoint(), z2 = zeroPoint(), zo = zeroPoint()
        let lo = Int32(random.int(-128...0)), hi = Int32(random.int(0...127))
        let a = (0..<shapeA.reduce(1, *)).map { _ in random.int8() }
        let b = (0..<shapeB.reduce(1, *)).map { _ in random.int8() }
        var reference = [Int8](repeating: 0, count: plan.count)
        var optimized = [Int8](repeating: 0x55, count: plan.count)
        let optimizedKernel: OptimizedKernel?
        switch operation {
        case .add, .sub:
            var p = QuantizedAddParameters(plan: plan)
            p.isSubtraction = operation == .sub
            p.input1Offset = -z1
            p.input2Offset = -z2
            p.outputOffset = zo
            let twiceMax = 2 * max(s1, s2)
            p.input1 = QuantizedMultiplier(s1 / twiceMax)
            p.input2 = QuantizedMultiplier(s2 / twiceMax)
            p.output = QuantizedMultiplier(twiceMax / (Double(1 << 20) * so))
            p.range = QuantizedRange(minimum: lo, maximum: hi)
            optimizedKernel = OptimizedKernel.addSub(p, variant: variant)
            a.withUnsafeBufferPointer { x in
                b.withUnsafeBufferPointer { y in
                    reference.withUnsafeMutableBufferPointer { ReferenceKernels.addSubInt8(p, x.baseAddress!, y.baseAddress!, $0.baseAddress!) }
                }
            }
        case .mul:
            var p = QuantizedMulParameters(plan: plan)
            p.input1Offset = -z1
            p.input2Offset = -z2
            p.outputOffset = zo
            p.output = QuantizedMultiplier(s1 * s2 / so)
            p.range = QuantizedRange(minimum: lo, maximum: hi)
            optimizedKernel = OptimizedKernel.mul(p, variant: variant)
            a.withUnsafeBufferPointer { x in
                b.withUnsafeBufferPointer { y in
                    reference.withUnsafeMutableBufferPointer { ReferenceKernels.mulInt8(p, x.baseAddress!, y.baseAddress!, $0.baseAddress!) }
                }
            }
        }
        guard let optimizedKernel else { return nil }
        let pool = WorkerPool(threadCount: 2)
        a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in
                optimized.withUnsafeMutableBytes { o in
                    run(optimizedKernel, inputs: [x.baseAddress!, y.baseAddress!], output: o.baseAddress!,
                        pool: pool.pointer)
                }
            }
        }
        return (reference, optimized)
    }

    /// (reference, optimised) RESIZE_BILINEAR int8 from [b, ih, iw, d] to [b, oh, ow, d].
    static func resizeBilinear(batches: Int, inputHeight: Int, inputWidth: Int, depth: Int, outputHeight: Int,
                                      outputWidth: Int, alignCorners: Bool, halfPixelCenters: Bool, seed: UInt64,
                                      variant: KernelVariant) -> (reference: [Int8], optimized: [Int8])? {
        var p = ResizeBilinearParameters()
        p.batches = batches
        p.inputHeight = inputHeight
        p.inputWidth = inputWidth
        p.depth = depth
        p.outputHeight = outputHeight
        p.outputWidth = outputWidth
        p.heightScale10 = Int32(((1 << 10) * inputHeight + outputHeight / 2) / outputHeight)
        p.widthScale10 = Int32(((1 << 10) * inputWidth + outputWidth / 2) / outputWidth)
        if alignCorners && outputHeight > 1 {
            p.heightScale10 = Int32(((1 << 10) * (inputHeight - 1) + (outputHeight - 1) / 2) / (outputHeight - 1))
        }
        if alignCorners && outputWidth > 1 {
            p.widthScale10 = Int32(((1 << 10) * (inputWidth - 1) + (outputWidth - 1) / 2) / (outputWidth - 1))
        }
        p.halfPixelCenters = halfPixelCenters
        var random = Random(seed: seed)
        let input = (0..<(batches * inputHeight * inputWidth * depth)).map { _ in random.int8() }
        let count = batches * outputHeight * outputWidth * depth
        var reference = [Int8](repeating: 0, count: count)
        var optimized = [Int8](repeating: 0x55, count: count)
        input.withUnsafeBufferPointer { x in
            reference.withUnsafeMutableBufferPointer { ReferenceKernels.resizeBilinearInteger(p, input: x.baseAddress!, output: $0.baseAddress!) }
        }
        guard let kernel = OptimizedKernel.resizeBilinear(p, variant: variant) else { return nil }
        let pool = WorkerPool(threadCount: 2)
        input.withUnsafeBytes { x in
            optimized.withUnsafeMutableBytes { run(kernel, inputs: [x.baseAddress!], output: $0.baseAddress!, pool: pool.pointer) }
        }
        return (reference, optimized)
    }
}

extension KernelCheck {
    /// (reference, optimised) QUANTIZE float32 → int8 of `values`.
    static func quantize(_ values: [Float], scale: Float, zeroPoint: Int32,
                                variant: KernelVariant) -> (reference: [Int8], optimized: [Int8])? {
        var reference = [Int8](repeating: 0, count: values.count)
        var optimized = [Int8](repeating: 0x55, count: values.count)
        values.withUnsafeBufferPointer { x in
            reference.withUnsafeMutableBytes {
                ReferenceKernels.affineQuantize(count: values.count, scale: scale, zeroPoint: zeroPoint, outputType: .int8,
                                                input: x.baseAddress!, output: $0.baseAddress!)
            }
        }
        guard let kernel = OptimizedKernel.quantize(count: values.count, scale: scale, zeroPoint: zeroPoint,
                                                    outputType: .int8, variant: variant)
        else { return nil }
        values.withUnsafeBytes { x in
            optimized.withUnsafeMutableBytes { run(kernel, inputs: [x.baseAddress!], output: $0.baseAddress!) }
        }
        return (reference, optimized)
    }

    /// (reference, optimised) SQRT float32 of `values`, compared bit for bit.
    static func sqrt(_ values: [Float], variant: KernelVariant) -> (reference: [UInt32], optimized: [UInt32])? {
        var reference = [Float](repeating: 0, count: values.count)
        var optimized = [Float](repeating: 0, count: values.count)
        values.withUnsafeBufferPointer { x in
            reference.withUnsafeMutableBufferPointer {
                ReferenceKernels.unaryFloat(.sqrt, count: values.count, input: x.baseAddress!, output: $0.baseAddress!)
            }
        }
        guard let kernel = OptimizedKernel.unaryFloat(.sqrt, count: values.count, variant: variant) else { return nil }
        values.withUnsafeBytes { x in
            optimized.withUnsafeMutableBytes { run(kernel, inputs: [x.baseAddress!], output: $0.baseAddress!) }
        }
        return (reference.map(\.bitPattern), optimized.map(\.bitPattern))
    }

    /// (reference, optimised) ARG_MAX over [outer][axis][inner] random 8-bit data (a narrow value
    /// range, so ties are common), int32 or int64 indices widened to Int64.
    static func argMax(outer: Int, axis: Int, inner: Int, signed: Bool, int64Output: Bool, seed: UInt64,
                              variant: KernelVariant) -> (reference: [Int64], optimized: [Int64])? {
        var p = ArgMaxParameters()
        p.outer = outer
        p.axisSize = axis
        p.inner = inner
        p.inputType = signed ? .int8 : .uint8
        p.outputType = int64Output ? .int64 : .int32
        var random = Random(seed: seed)
        let input = (0..<(outer * axis * inner)).map { _ in UInt8(truncatingIfNeeded: Int(random.next() % 7) + (signed ? 124 : 250)) }
        let bytes = outer * inner * (int64Output ? 8 : 4)
        var reference = [UInt8](repeating: 0, count: bytes)
        var optimized = [UInt8](repeating: 0x55, count: bytes)
        input.withUnsafeBytes { x in reference.withUnsafeMutableBytes { ReferenceKernels.argMax(p, input: x.baseAddress!, output: $0.baseAddress!) } }
        guard let kernel = OptimizedKernel.argMax(p, variant: variant) else { return nil }
        input.withUnsafeBytes { x in
            optimized.withUnsafeMutableBytes { run(kernel, inputs: [x.baseAddress!], output: $0.baseAddress!) }
        }
        func widen(_ raw: [UInt8]) -> [Int64] {
            raw.withUnsafeBytes { b in
                (0..<(outer * inner)).map { int64Output ? b.load(fromByteOffset: $0 * 8, as: Int64.self)
                    : Int64(b.load(fromByteOffset: $0 * 4, as: Int32.self)) }
            }
        }
        return (widen(reference), widen(optimized))
    }

    /// (reference, optimised) QUANTIZE int8 → int8 (requantize) over all 256 inputs.
    static func requantizeAllBytes(inputZeroPoint: Int32, outputZeroPoint: Int32, multiplier: Double,
                                          variant: KernelVariant) -> (reference: [Int8], optimized: [Int8])? {
        var p = RequantizeParameters()
        p.count = 256
        p.inputZeroPoint = inputZeroPoint
        p.outputZeroPoint = outputZeroPoint
        p.multiplier = QuantizedMultiplier(multiplier)
        let input = (0..<256).map { Int8(truncatingIfNeeded: $0) }
        var reference = [Int8](repeating: 0, count: 256)
        var optimized = [Int8](repeating: 0x55, count: 256)
        input.withUnsafeBytes { x in reference.withUnsafeMutableBytes { ReferenceKernels.requantize(p, input: x.baseAddress!, output: $0.baseAddress!) } }
        guard let kernel = OptimizedKernel.requantize(p, variant: variant) else { return nil }
        input.withUnsafeBytes { x in
            optimized.withUnsafeMutableBytes { run(kernel, inputs: [x.baseAddress!], output: $0.baseAddress!) }
        }
        return (reference, optimized)
    }
}

extension SplitMix64 {
    /// A uniformly random int8 (the low byte of the next value).
    mutating func int8() -> Int8 { Int8(truncatingIfNeeded: next()) }
    /// A value in `range` (modulo the width: close enough to uniform for test data).
    mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.upperBound - range.lowerBound + 1))
    }
}
