// RESIZE_BILINEAR on int8/uint8 (TFLite's ResizeBilinearInteger: 10-bit fixed-point
// coordinates, constant output size); the optimised hook runs int8 with SIMD on the worker pool.
import CKernels

// MARK: registration

extension OperatorTable {
    static let resizeBilinear = [
        OperatorRegistration(.resizeBilinear, newestVersion: 4) { (context, node) throws(ModelError) in
            try context.prepareResizeBilinear(node)
        },
    ]
}

// MARK: parameters (computed by Prepare, read by Eval)

/// RESIZE_BILINEAR on integer data in 10-bit fixed point (TFLite's ResizeBilinearInteger).
struct ResizeBilinearParameters: Sendable {
    var batches = 0, inputHeight = 0, inputWidth = 0, depth = 0, outputHeight = 0, outputWidth = 0
    var heightScale10: Int32 = 0, widthScale10: Int32 = 0
    var halfPixelCenters = false
}

// MARK: Prepare

extension PrepareContext {
    func prepareResizeBilinear(_ node: OperatorNode) throws(ModelError) -> PreparedKernel {
        guard case let .resizeBilinear(alignCorners, halfPixelCenters) = node.options else {
            throw fail(node, "missing ResizeBilinearOptions")
        }
        try expectCounts(node, inputs: 2...2, outputs: 1)
        let input = try inputInfo(node, 0), size = try inputInfo(node, 1), output = outputInfo(node)
        try expectType(node, input, "input", .int8, .uint8)
        try expectSameType(node, input, output)
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
        return resizeBilinearKernel(p, type: input.elementType)
    }
}

// MARK: Eval, as Prepare leaves it for each node

extension PrepareContext {
    func resizeBilinearKernel(_ p: ResizeBilinearParameters, type: TensorElementType) -> PreparedKernel {
        PreparedKernel(reference: { tensors in
            if type == .int8 {
                ReferenceKernels.resizeBilinearInteger(p, input: tensors.input(0).assumingMemoryBound(to: Int8.self),
                                                       output: tensors.output().assumingMemoryBound(to: Int8.self))
            } else {
                ReferenceKernels.resizeBilinearInteger(p, input: tensors.input(0).assumingMemoryBound(to: UInt8.self),
                                                       output: tensors.output().assumingMemoryBound(to: UInt8.self))
            }
            return nil
        }, optimized: type == .int8 ? optimizedVariant.flatMap { OptimizedKernel.resizeBilinear(p, variant: $0) } : nil)
    }
}

// MARK: reference kernels

extension ReferenceKernels {
    /// One axis of ResizeBilinearInteger: the source coordinate in 10-bit fixed point and the two
    /// neighbouring source indices.
    @inline(__always)
    static func interpolationValues(_ value: Int32, scale10: Int32, halfPixelCenters: Bool, inputSize: Int32)
        -> (scaled: Int32, lower: Int32, upper: Int32)
    {
        let scaled = halfPixelCenters ? value * scale10 + scale10 / 2 - (1 << 9) : value * scale10
        // Truncating division, as in C++. The min() never changes a value TFLite computes for the
        // sizes Prepare accepts; it only guarantees the index stays inside the input.
        let lower = min(max(scaled / (1 << 10), 0), inputSize - 1)
        let upper = min((scaled + (1 << 10) - 1) / (1 << 10), inputSize - 1)
        return (scaled, lower, upper)
    }

    /// RESIZE_BILINEAR on 8-bit data (ResizeBilinearInteger): weights in 10-bit fixed point, the
    /// 20-bit sum rounded half away from zero. Input and output share one quantization.
    static func resizeBilinearInteger<T: FixedWidthInteger>(_ p: ResizeBilinearParameters, input: UnsafePointer<T>,
                                                            output: UnsafeMutablePointer<T>)
    {
        let one: Int64 = 1 << 10
        var outputIndex = 0
        for batch in 0..<p.batches {
            for y in 0..<p.outputHeight {
                let (inputY, y0, y1) = interpolationValues(Int32(y), scale10: p.heightScale10,
                                                           halfPixelCenters: p.halfPixelCenters,
                                                           inputSize: Int32(p.inputHeight))
                let dy = Int64(inputY) - one * Int64(y0)
                for x in 0..<p.outputWidth {
                    let (inputX, x0, x1) = interpolationValues(Int32(x), scale10: p.widthScale10,
                                                               halfPixelCenters: p.halfPixelCenters,
                                                               inputSize: Int32(p.inputWidth))
                    let dx = Int64(inputX) - one * Int64(x0)
                    let row0 = (batch * p.inputHeight + Int(y0)) * p.inputWidth
                    let row1 = (batch * p.inputHeight + Int(y1)) * p.inputWidth
                    let i00 = (row0 + Int(x0)) * p.depth, i10 = (row1 + Int(x0)) * p.depth
                    let i01 = (row0 + Int(x1)) * p.depth, i11 = (row1 + Int(x1)) * p.depth
                    for c in 0..<p.depth {
                        let sum = Int64(input[i00 + c]) * (one - dy) * (one - dx)
                            + Int64(input[i10 + c]) * dy * (one - dx)
                            + Int64(input[i01 + c]) * (one - dy) * dx
                            + Int64(input[i11 + c]) * dy * dx
                        let round: Int64 = sum > 0 ? (1 << 19) : -(1 << 19)
                        output[outputIndex] = T(truncatingIfNeeded: (sum + round) / (1 << 20))
                        outputIndex += 1
                    }
                }
            }
        }
    }
}

// MARK: optimised kernels

extension OptimizedKernel {
    /// RESIZE_BILINEAR int8.
    static func resizeBilinear(_ p: ResizeBilinearParameters, variant: KernelVariant) -> OptimizedKernel? {
        guard variant.hasOptimizedKernels else { return nil }
        var c = pw_resize_params()
        c.batches = Int32(p.batches)
        c.input_height = Int32(p.inputHeight)
        c.input_width = Int32(p.inputWidth)
        c.depth = Int32(p.depth)
        c.output_height = Int32(p.outputHeight)
        c.output_width = Int32(p.outputWidth)
        c.height_scale10 = p.heightScale10
        c.width_scale10 = p.widthScale10
        c.half_pixel_centers = p.halfPixelCenters ? 1 : 0
        let parameters = c, isa = variant.isa
        return OptimizedKernel(name: "resize-bilinear-\(variant.rawValue)", variant: variant, evaluate: { tensors in
            var c = parameters
            pw_resize_bilinear_int8(&c, isa, tensors.pool, tensors.input(0).assumingMemoryBound(to: Int8.self),
                                    tensors.output().assumingMemoryBound(to: Int8.self))
            return nil
        })
    }
}
