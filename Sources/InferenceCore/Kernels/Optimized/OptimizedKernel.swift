import CKernels

/// An optimised kernel for one node, built at Prepare when the registry allows it: weights packed
/// into the layout the SIMD tile reads (CKernels), requantization parameters per channel, the ISA
/// fixed. Immutable after Prepare; `run` allocates nothing.
///
/// Covered: CONV_2D int8 (1x1 as GEMM in place, any other filter through per-tile patches),
/// DEPTHWISE_CONV_2D int8 with depth multiplier 1, ADD/SUB/MUL int8 (SIMD or a 64 KiB table),
/// RESIZE_BILINEAR int8, byte-input unary operators as tables, QUANTIZE float → int8, SQRT
/// float32, ARG_MAX over 8-bit data. Everything else runs the reference kernels.
final class OptimizedKernel: @unchecked Sendable {  // immutable C plans, read-only after Prepare
    enum Operation {
        case convolution(OpaquePointer)
        case depthwise(OpaquePointer)
        case add(pw_add_params, count: Int)
        case mul(pw_mul_params, count: Int)
        case resize(pw_resize_params)
        /// Broadcast int8 ADD/SUB/MUL: a 256×256 table (out = table[a << 8 | b]) and the 6-D plan
        /// (dimensions, strides1, strides2: 18 Int64s), both in one allocation made at Prepare.
        case table(UnsafeMutablePointer<UInt8>, plan: UnsafeMutablePointer<Int64>)
        /// A unary operator on 1-byte input as a 256-entry table of `entryBytes`-byte results.
        case byteTable(UnsafeMutableRawPointer, entryBytes: Int, count: Int)
        /// QUANTIZE float32 → int8.
        case quantize(scale: Float, zeroPoint: Int32, count: Int)
        /// SQRT float32.
        case sqrt(count: Int)
        /// ARG_MAX over int8/uint8.
        case argMax(ArgMaxParameters)
        /// Nothing: the previous node's table already produced this node's output (ByteChainFusion).
        case fused
    }

    let operation: Operation
    let variant: KernelVariant
    /// XNNPACK-style name: operator, tile, ISA (e.g. "conv-gemm-8x16c4-avx512vnni").
    let name: String

    init(_ operation: Operation, variant: KernelVariant, name: String) {
        self.operation = operation
        self.variant = variant
        self.name = name
    }

    deinit {
        switch operation {
        case .convolution(let plan): pw_gemm_destroy(plan)
        case .depthwise(let plan): pw_depthwise_destroy(plan)
        case .table(let table, let plan):
            table.deallocate()
            plan.deallocate()
        case .byteTable(let table, _, _):
            table.deallocate()
        default: break
        }
    }

    /// Runs the node on the tensors' memory (same pointers the reference kernels get).
    @inline(__always)
    func run(input: UnsafeRawPointer, secondInput: UnsafeRawPointer?, output: UnsafeMutableRawPointer,
             pool: OpaquePointer?) {
        let isa = variant.isa
        switch operation {
        case .convolution(let plan):
            pw_conv_run(plan, pool, input.assumingMemoryBound(to: Int8.self), output.assumingMemoryBound(to: Int8.self))
        case .depthwise(let plan):
            pw_depthwise_run(plan, pool, input.assumingMemoryBound(to: Int8.self),
                             output.assumingMemoryBound(to: Int8.self))
        case .add(var p, let count):
            pw_add_int8(&p, isa, pool, input.assumingMemoryBound(to: Int8.self),
                        secondInput!.assumingMemoryBound(to: Int8.self), output.assumingMemoryBound(to: Int8.self),
                        Int64(count))
        case .mul(var p, let count):
            pw_mul_int8(&p, isa, pool, input.assumingMemoryBound(to: Int8.self),
                        secondInput!.assumingMemoryBound(to: Int8.self), output.assumingMemoryBound(to: Int8.self),
                        Int64(count))
        case .resize(var p):
            pw_resize_bilinear_int8(&p, isa, pool, input.assumingMemoryBound(to: Int8.self),
                                    output.assumingMemoryBound(to: Int8.self))
        case .table(let table, let plan):
            pw_binary_table_int8(isa, table, plan, plan + 6, plan + 12, input.assumingMemoryBound(to: Int8.self),
                                 secondInput!.assumingMemoryBound(to: Int8.self), output.assumingMemoryBound(to: Int8.self))
        case .byteTable(let table, let entryBytes, let count):
            pw_lookup_u8(isa, table, Int32(entryBytes), Int64(count), input.assumingMemoryBound(to: UInt8.self), output)
        case .quantize(let scale, let zeroPoint, let count):
            pw_quantize_float_int8(scale, zeroPoint, Int64(count), input.assumingMemoryBound(to: Float.self),
                                   output.assumingMemoryBound(to: Int8.self))
        case .sqrt(let count):
            pw_sqrt_float(isa, Int64(count), input.assumingMemoryBound(to: Float.self),
                          output.assumingMemoryBound(to: Float.self))
        case .fused:
            break
        case .argMax(let p):
            pw_argmax_8bit(p.inputType == .int8 ? 1 : 0, Int64(p.outer), Int64(p.axisSize), Int64(p.inner), input,
                           output, p.outputType == .int64 ? 1 : 0)
        }
    }

    /// A unary 1-byte-input node as a table: the reference kernel run once on the 256 inputs.
    static func byteTableKernel(entryBytes: Int, count: Int, variant: KernelVariant, name: String,
                                reference: (UnsafeRawPointer, UnsafeMutableRawPointer) -> Void) -> OptimizedKernel {
        let inputs = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
        defer { inputs.deallocate() }
        for index in 0..<256 { inputs[index] = UInt8(index) }
        let table = UnsafeMutableRawPointer.allocate(byteCount: 256 * entryBytes, alignment: 16)
        reference(UnsafeRawPointer(inputs), table)
        return OptimizedKernel(.byteTable(table, entryBytes: entryBytes, count: count), variant: variant, name: name)
    }

    /// A broadcast binary int8 node as a table: the reference kernel run once on all 65536
    /// (a, b) pairs, so every entry is the reference's answer.
    static func tableKernel(_ plan: BroadcastPlan, variant: KernelVariant, name: String,
                            reference: (UnsafePointer<Int8>, UnsafePointer<Int8>, UnsafeMutablePointer<Int8>) -> Void)
        -> OptimizedKernel
    {
        let a = UnsafeMutablePointer<Int8>.allocate(capacity: 65536)
        let b = UnsafeMutablePointer<Int8>.allocate(capacity: 65536)
        defer {
            a.deallocate()
            b.deallocate()
        }
        for index in 0..<65536 {
            a[index] = Int8(truncatingIfNeeded: index >> 8)
            b[index] = Int8(truncatingIfNeeded: index & 255)
        }
        let table = UnsafeMutablePointer<UInt8>.allocate(capacity: 65536)
        table.withMemoryRebound(to: Int8.self, capacity: 65536) { reference(a, b, $0) }
        // Coalesce neighbouring dimensions that both inputs walk alike (contiguous, or both
        // broadcast), so the inner loop is as long as possible (an image minus a scalar is one loop).
        // Dimensions of size 1 are dropped; walking from the innermost out, a dimension joins the
        // one inside it when both inputs step through it as one run.
        var d: [Int] = [], s1: [Int] = [], s2: [Int] = []  // innermost first
        for axis in stride(from: 5, through: 0, by: -1) where plan.dimensions[axis] != 1 {
            let size = plan.dimensions[axis], a = plan.strides1[axis], b = plan.strides2[axis]
            if let last = d.indices.last, a == s1[last] * d[last], b == s2[last] * d[last] {
                d[last] *= size
            } else {
                d.append(size)
                s1.append(a)
                s2.append(b)
            }
        }
        while d.count < 6 {
            d.append(1)
            s1.append(0)
            s2.append(0)
        }
        d.reverse()
        s1.reverse()
        s2.reverse()
        let dimensions = UnsafeMutablePointer<Int64>.allocate(capacity: 18)
        for axis in 0..<6 {
            dimensions[axis] = Int64(d[axis])
            dimensions[6 + axis] = Int64(s1[axis])
            dimensions[12 + axis] = Int64(s2[axis])
        }
        return OptimizedKernel(.table(table, plan: dimensions), variant: variant, name: name)
    }

    static let pairs = BroadcastPlan([65536], [65536], output: [65536])

    /// From this many elements on, ADD/SUB/MUL look their answers up in a 64 KiB table even when
    /// the shapes match: three requantizations per element cost ~1 ns with AVX-512, a lookup
    /// ~0.3 ns (MoveNet's residual adds: 270 → ~90 µs per invoke); below, building the table
    /// (65536 reference evaluations at Prepare) is not worth it.
    static let tableMinimumCount = 2048

    /// The optimised kernel for a prepared node in `variant`, or nil when the node has no
    /// optimised form (then the reference kernel runs).
    static func make(for kernel: Kernel, node: OperatorNode, model: Model, variant: KernelVariant) -> OptimizedKernel? {
        guard variant != .reference, pw_isa_supported(variant.isa) != 0 else { return nil }
        func constant<T>(_ position: Int, _ type: T.Type) -> UnsafePointer<T>? {
            guard position < node.inputs.count, node.inputs[position] >= 0,
                let bytes = model.constantBytes(node.inputs[position]), let base = bytes.baseAddress,
                Int(bitPattern: base) % MemoryLayout<T>.alignment == 0
            else { return nil }
            return base.assumingMemoryBound(to: T.self)
        }
        switch kernel {
        case .conv2DInt8(let p), .depthwiseConv2DInt8(let p):
            guard let filter = constant(1, Int8.self) else { return nil }
            let bias = p.hasBias ? constant(2, Int32.self) : nil
            if p.hasBias && bias == nil { return nil }
            var depthwise = false
            if case .depthwiseConv2DInt8 = kernel { depthwise = true }
            return convolution(p, depthwise: depthwise, filter: filter, bias: bias, variant: variant)
        default:
            return binary(kernel, variant: variant)
        }
    }

    /// A CONV_2D or DEPTHWISE_CONV_2D kernel with its weights packed from `filter` and `bias`.
    static func convolution(_ p: ConvolutionParameters, depthwise: Bool, filter: UnsafePointer<Int8>,
                            bias: UnsafePointer<Int32>?, variant: KernelVariant) -> OptimizedKernel? {
        guard variant != .reference, pw_isa_supported(variant.isa) != 0, p.batches > 0 else { return nil }
        let isa = variant.isa
        var g = geometry(p)
        if depthwise {
            guard p.depthMultiplier == 1 else { return nil }
            let plan = p.multipliers.withUnsafeBufferPointer { m in
                p.shifts.withUnsafeBufferPointer { s in pw_depthwise_pack(&g, filter, bias, m.baseAddress, s.baseAddress, isa) }
            }
            guard let plan else { return nil }
            return OptimizedKernel(.depthwise(plan), variant: variant,
                                   name: "dwconv-\(p.filterHeight)x\(p.filterWidth)s\(p.strideHeight)-\(variant == .avx512vnni ? 32 : 16)c-\(variant.rawValue)")
        }
        let plan = p.multipliers.withUnsafeBufferPointer { m in
            p.shifts.withUnsafeBufferPointer { s in pw_gemm_pack(&g, filter, bias, m.baseAddress, s.baseAddress, isa) }
        }
        guard let plan else { return nil }
        let direct = pw_gemm_is_direct(plan) != 0
        var rows: Int32 = 0, channels: Int32 = 0
        pw_gemm_tile(plan, &rows, &channels)
        return OptimizedKernel(.convolution(plan), variant: variant,
                               name: "conv-\(direct ? "gemm" : "patch-gemm")-\(rows)x\(channels)c4-\(variant.rawValue)")
    }

    /// Element-wise, broadcast (table) and resize kernels: everything but the convolutions.
    static func binary(_ kernel: Kernel, variant: KernelVariant) -> OptimizedKernel? {
        guard variant != .reference, pw_isa_supported(variant.isa) != 0 else { return nil }
        switch kernel {
        case .addSubInt8(let p):
            guard p.plan.isElementwise, p.plan.count < tableMinimumCount else {
                var all = p
                all.plan = pairs
                return tableKernel(p.plan, variant: variant, name: "\(p.isSubtraction ? "sub" : "add")-\(p.plan.isElementwise ? "" : "broadcast-")table") {
                    ReferenceKernels.addSubInt8(all, $0, $1, $2)
                }
            }
            var c = pw_add_params()
            c.input1_offset = p.input1Offset
            c.input2_offset = p.input2Offset
            c.output_offset = p.outputOffset
            c.left_shift = p.leftShift
            c.input1_multiplier = p.input1.multiplier
            c.input1_shift = Int32(p.input1.shift)
            c.input2_multiplier = p.input2.multiplier
            c.input2_shift = Int32(p.input2.shift)
            c.output_multiplier = p.output.multiplier
            c.output_shift = Int32(p.output.shift)
            c.act_min = p.range.minimum
            c.act_max = p.range.maximum
            c.is_subtraction = p.isSubtraction ? 1 : 0
            return OptimizedKernel(.add(c, count: p.plan.count), variant: variant,
                                   name: "\(p.isSubtraction ? "sub" : "add")-elementwise-\(variant.rawValue)")
        case .mulInt8(let p):
            guard p.plan.isElementwise, p.plan.count < tableMinimumCount else {
                var all = p
                all.plan = pairs
                return tableKernel(p.plan, variant: variant, name: "mul-\(p.plan.isElementwise ? "" : "broadcast-")table") {
                    ReferenceKernels.mulInt8(all, $0, $1, $2)
                }
            }
            var c = pw_mul_params()
            c.input1_offset = p.input1Offset
            c.input2_offset = p.input2Offset
            c.output_offset = p.outputOffset
            c.output_multiplier = p.output.multiplier
            c.output_shift = Int32(p.output.shift)
            c.act_min = p.range.minimum
            c.act_max = p.range.maximum
            return OptimizedKernel(.mul(c, count: p.plan.count), variant: variant,
                                   name: "mul-elementwise-\(variant.rawValue)")
        case .requantize(let p):
            var all = p
            all.count = 256
            let bytes = p.outputType == .int8 || p.outputType == .uint8 ? 1 : 0
            guard bytes == 1, p.inputType == .int8 || p.inputType == .uint8 else { return nil }
            return byteTableKernel(entryBytes: 1, count: p.count, variant: variant, name: "requantize-table") {
                ReferenceKernels.requantize(all, input: $0, output: $1)
            }
        case .cast(let count, let from, let to):
            guard from == .int8 || from == .uint8, let size = to.byteSize, [1, 2, 4].contains(size) else { return nil }
            return byteTableKernel(entryBytes: size, count: count, variant: variant, name: "cast-table") {
                ReferenceKernels.cast(count: 256, from: from, to: to, input: $0, output: $1)
            }
        case .dequantize(let count, let scale, let zeroPoint, let inputType):
            guard inputType == .int8 || inputType == .uint8 else { return nil }
            return byteTableKernel(entryBytes: 4, count: count, variant: variant, name: "dequantize-table") {
                ReferenceKernels.dequantize(count: 256, scale: scale, zeroPoint: zeroPoint, inputType: inputType,
                                            input: $0, output: $1.assumingMemoryBound(to: Float.self))
            }
        case .quantizeFloat(let count, let scale, let zeroPoint, let outputType):
            guard outputType == .int8 else { return nil }
            return OptimizedKernel(.quantize(scale: scale, zeroPoint: zeroPoint, count: count), variant: variant,
                                   name: "quantize-float-int8")
        case .lookupTable(let count, let table):
            return byteTableKernel(entryBytes: 1, count: count, variant: variant, name: "lookup-table") { input, output in
                ReferenceKernels.lookup(count: 256, table: table, input: input.assumingMemoryBound(to: UInt8.self),
                                        output: output.assumingMemoryBound(to: UInt8.self))
            }
        case .unaryFloat(let operation, let count):
            guard case .sqrt = operation else { return nil }
            return OptimizedKernel(.sqrt(count: count), variant: variant, name: "sqrt-\(variant.rawValue)")
        case .argMax(let p):
            guard p.inputType == .int8 || p.inputType == .uint8, p.outputType == .int32 || p.outputType == .int64,
                  p.axisSize > 0
            else { return nil }
            return OptimizedKernel(.argMax(p), variant: variant, name: "argmax-8bit")
        case .resizeBilinearInteger(let p, let type):
            guard type == .int8 else { return nil }
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
            return OptimizedKernel(.resize(c), variant: variant, name: "resize-bilinear-\(variant.rawValue)")
        default:
            return nil
        }
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

extension KernelVariant {
    /// The CKernels ISA constant for an optimised variant.
    var isa: Int32 {
        switch self {
        case .reference, .scalar: Int32(PW_ISA_SCALAR)
        case .sse41: Int32(PW_ISA_SSE41)
        case .avx2: Int32(PW_ISA_AVX2)
        case .avx512vnni: Int32(PW_ISA_AVX512VNNI)
        case .neon: Int32(PW_ISA_NEON)
        case .neondot: Int32(PW_ISA_NEONDOT)
        }
    }

    /// Whether this variant can run on this CPU (cpuid / AT_HWCAP).
    public var isSupported: Bool { self == .reference || pw_isa_supported(isa) != 0 }

    /// The fastest variant this CPU supports.
    public static var best: KernelVariant {
        let isa = pw_best_isa()
        return allCases.first { $0 != .reference && $0.isa == isa } ?? .scalar
    }
}
