// ADD, SUB, MUL, DIV and FLOOR_DIV with numpy broadcasting: int8 (quantized), int32 and float32.
// The optimised hook runs int8 ADD/SUB/MUL with SIMD, or through a 64 KiB table of every
// (a, b) pair when broadcasting or when the tensor is large.
import CKernels

// MARK: registration

extension OperatorTable {
    static let elementwiseBinary = [
        OperatorRegistration(.add, newestVersion: 5) { (context, node) throws(ModelError) in
            try context.prepareBinary(node)
        },
        OperatorRegistration(.sub, newestVersion: 5) { (context, node) throws(ModelError) in
            try context.prepareBinary(node)
        },
        OperatorRegistration(.mul, newestVersion: 7) { (context, node) throws(ModelError) in
            try context.prepareBinary(node)
        },
        OperatorRegistration(.div, newestVersion: 2) { (context, node) throws(ModelError) in
            try context.prepareBinary(node)
        },
        OperatorRegistration(.floorDiv, newestVersion: 3) { (context, node) throws(ModelError) in
            try context.prepareBinary(node)
        },
    ]
}

// MARK: parameters (computed by Prepare, read by Eval)

/// Index arithmetic for numpy-style broadcasting of two inputs, extended to 6 dimensions.
struct BroadcastPlan: Sendable {
    /// Output dimensions, 6 entries, outermost first.
    var dimensions: [Int]
    /// Element strides of each input per output dimension; 0 where that input is broadcast.
    var strides1: [Int]
    var strides2: [Int]
    var count: Int
    /// Both inputs have the output's shape: a flat loop suffices.
    var isElementwise: Bool

    /// The broadcast shape of `a` and `b`, or nil when they are incompatible.
    static func broadcastShape(_ a: [Int], _ b: [Int]) -> [Int]? {
        let rank = max(a.count, b.count)
        var result = [Int](repeating: 1, count: rank)
        for position in 0..<rank {
            let x = position < rank - a.count ? 1 : a[position - (rank - a.count)]
            let y = position < rank - b.count ? 1 : b[position - (rank - b.count)]
            if x == y || y == 1 { result[position] = x } else if x == 1 { result[position] = y } else { return nil }
        }
        return result
    }

    init(_ a: [Int], _ b: [Int], output: [Int]) {
        func extended(_ shape: [Int]) -> [Int] { [Int](repeating: 1, count: 6 - shape.count) + shape }
        let ea = extended(a), eb = extended(b), eo = extended(output)
        func strides(_ shape: [Int]) -> [Int] {
            var result = [Int](repeating: 0, count: 6)
            var stride = 1
            for position in (0..<6).reversed() {
                result[position] = shape[position] == 1 && eo[position] != 1 ? 0 : stride
                stride *= shape[position]
            }
            return result
        }
        dimensions = eo
        strides1 = strides(ea)
        strides2 = strides(eb)
        count = eo.reduce(1, *)
        isElementwise = ea == eo && eb == eo
    }
}

/// ADD / SUB int8 (TFLite's general 8-bit path with a 2^20 headroom shift).
struct QuantizedAddParameters: Sendable {
    var input1Offset: Int32 = 0, input2Offset: Int32 = 0, outputOffset: Int32 = 0
    var leftShift: Int32 = 20
    var input1 = QuantizedMultiplier(0), input2 = QuantizedMultiplier(0), output = QuantizedMultiplier(0)
    var range = QuantizedRange(minimum: -128, maximum: 127)
    var isSubtraction = false
    var plan: BroadcastPlan
}

/// MUL int8.
struct QuantizedMulParameters: Sendable {
    var input1Offset: Int32 = 0, input2Offset: Int32 = 0, outputOffset: Int32 = 0
    var output = QuantizedMultiplier(0)
    var range = QuantizedRange(minimum: -128, maximum: 127)
    var plan: BroadcastPlan
}

enum IntegerBinaryOperation: Sendable { case add, sub, mul, floorDiv }

enum FloatBinaryOperation: Sendable { case add, sub, mul, div, floorDiv }

// MARK: Prepare

extension PrepareContext {
    func prepareBinary(_ node: OperatorNode) throws(ModelError) -> PreparedKernel {
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
            return addSubKernel(p)
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
            return mulKernel(p)
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
            return integerBinaryKernel(operation, plan, QuantizedRange.int32Activation(activation))
        case (.add, .float32), (.sub, .float32), (.mul, .float32), (.div, .float32), (.floorDiv, .float32):
            let operation: FloatBinaryOperation =
                switch node.code {
                case .add: .add
                case .sub: .sub
                case .mul: .mul
                case .div: .div
                default: .floorDiv
                }
            return floatBinaryKernel(operation, plan, FloatRange.activation(activation))
        default:
            throw unsupported(node, "\(output.elementType) is not supported")
        }
    }
}

// MARK: Eval, as Prepare leaves it for each node

extension PrepareContext {
    func addSubKernel(_ p: QuantizedAddParameters) -> PreparedKernel {
        PreparedKernel(reference: { tensors in
            ReferenceKernels.addSubInt8(p, tensors.input(0).assumingMemoryBound(to: Int8.self),
                                        tensors.input(1).assumingMemoryBound(to: Int8.self),
                                        tensors.output().assumingMemoryBound(to: Int8.self))
            return nil
        }, optimized: optimizedVariant.flatMap { OptimizedKernel.addSub(p, variant: $0) })
    }

    func mulKernel(_ p: QuantizedMulParameters) -> PreparedKernel {
        PreparedKernel(reference: { tensors in
            ReferenceKernels.mulInt8(p, tensors.input(0).assumingMemoryBound(to: Int8.self),
                                     tensors.input(1).assumingMemoryBound(to: Int8.self),
                                     tensors.output().assumingMemoryBound(to: Int8.self))
            return nil
        }, optimized: optimizedVariant.flatMap { OptimizedKernel.mul(p, variant: $0) })
    }

    func integerBinaryKernel(_ operation: IntegerBinaryOperation, _ plan: BroadcastPlan, _ range: QuantizedRange)
        -> PreparedKernel
    {
        PreparedKernel(reference: { tensors in
            let ok = ReferenceKernels.binaryInt32(operation, plan, range, tensors.input(0).assumingMemoryBound(to: Int32.self),
                                                  tensors.input(1).assumingMemoryBound(to: Int32.self),
                                                  tensors.output().assumingMemoryBound(to: Int32.self))
            return ok ? nil : "division by zero"
        })
    }

    func floatBinaryKernel(_ operation: FloatBinaryOperation, _ plan: BroadcastPlan, _ range: FloatRange) -> PreparedKernel {
        PreparedKernel(reference: { tensors in
            ReferenceKernels.binaryFloat(operation, plan, range, tensors.input(0).assumingMemoryBound(to: Float.self),
                                         tensors.input(1).assumingMemoryBound(to: Float.self),
                                         tensors.output().assumingMemoryBound(to: Float.self))
            return nil
        })
    }
}

// MARK: reference kernels

extension ReferenceKernels {
    /// Visits every output element with the matching input offsets (numpy broadcasting, 6-D).
    @inline(__always)
    static func forEachBroadcast(_ plan: BroadcastPlan, _ body: (Int, Int, Int) -> Void) {
        if plan.isElementwise {
            for index in 0..<plan.count { body(index, index, index) }
            return
        }
        let d = plan.dimensions, s = plan.strides1, t = plan.strides2
        var out = 0
        for i0 in 0..<d[0] {
            for i1 in 0..<d[1] {
                for i2 in 0..<d[2] {
                    for i3 in 0..<d[3] {
                        for i4 in 0..<d[4] {
                            let a = i0 * s[0] + i1 * s[1] + i2 * s[2] + i3 * s[3] + i4 * s[4]
                            let b = i0 * t[0] + i1 * t[1] + i2 * t[2] + i3 * t[3] + i4 * t[4]
                            for i5 in 0..<d[5] {
                                body(out, a + i5 * s[5], b + i5 * t[5])
                                out += 1
                            }
                        }
                    }
                }
            }
        }
    }

    /// ADD/SUB int8 (AddElementwise / BroadcastQuantSubSlow): both inputs are moved to a common
    /// scale with 20 bits of headroom, added or subtracted, then requantized to the output:
    ///
    ///     x_i' = requantize((q_i − zp_i) × 2^20, s_i / (2 max(s_1, s_2)))
    ///     out  = clamp(requantize(x_1' ± x_2', 2 max(s_1, s_2) / (2^20 s_out)) + zp_out)
    static func addSubInt8(_ p: QuantizedAddParameters, _ a: UnsafePointer<Int8>, _ b: UnsafePointer<Int8>,
                           _ output: UnsafeMutablePointer<Int8>)
    {
        let headroom: Int32 = 1 << p.leftShift
        forEachBroadcast(p.plan) { out, i, j in
            let shifted1 = (p.input1Offset &+ Int32(a[i])) &* headroom
            let shifted2 = (p.input2Offset &+ Int32(b[j])) &* headroom
            let scaled1 = roundingDivideByPOT(saturatingRoundingDoublingHighMul(shifted1, p.input1.multiplier), -p.input1.shift)
            let scaled2 = roundingDivideByPOT(saturatingRoundingDoublingHighMul(shifted2, p.input2.multiplier), -p.input2.shift)
            let raw = p.isSubtraction ? scaled1 &- scaled2 : scaled1 &+ scaled2
            let result = roundingDivideByPOT(saturatingRoundingDoublingHighMul(raw, p.output.multiplier), -p.output.shift)
                &+ p.outputOffset
            output[out] = Int8(truncatingIfNeeded: p.range.clamp(result))
        }
    }

    /// MUL int8 (MulElementwise): out = clamp(requantize((q1 − zp1)(q2 − zp2), s1 s2 / s_out) + zp_out).
    static func mulInt8(_ p: QuantizedMulParameters, _ a: UnsafePointer<Int8>, _ b: UnsafePointer<Int8>,
                        _ output: UnsafeMutablePointer<Int8>)
    {
        forEachBroadcast(p.plan) { out, i, j in
            let product = (p.input1Offset &+ Int32(a[i])) &* (p.input2Offset &+ Int32(b[j]))
            let result = p.outputOffset &+ p.output.apply(product)
            output[out] = Int8(truncatingIfNeeded: p.range.clamp(result))
        }
    }

    /// int32 ADD/SUB/MUL (wrapping like the two's-complement hardware TFLite runs on) and FLOOR_DIV
    /// (floor of the double quotient, as TFLite computes it). Returns false on a division by zero.
    static func binaryInt32(_ operation: IntegerBinaryOperation, _ plan: BroadcastPlan, _ range: QuantizedRange,
                            _ a: UnsafePointer<Int32>, _ b: UnsafePointer<Int32>, _ output: UnsafeMutablePointer<Int32>)
        -> Bool
    {
        switch operation {
        case .add: forEachBroadcast(plan) { out, i, j in output[out] = range.clamp(a[i] &+ b[j]) }
        case .sub: forEachBroadcast(plan) { out, i, j in output[out] = range.clamp(a[i] &- b[j]) }
        case .mul: forEachBroadcast(plan) { out, i, j in output[out] = range.clamp(a[i] &* b[j]) }
        case .floorDiv:
            var divisionByZero = false
            forEachBroadcast(plan) { _, _, j in if b[j] == 0 { divisionByZero = true } }
            if divisionByZero { return false }
            forEachBroadcast(plan) { out, i, j in
                output[out] = saturatingInt32((Double(a[i]) / Double(b[j])).rounded(.down))
            }
        }
        return true
    }

    /// float32 ADD/SUB/MUL/DIV/FLOOR_DIV with the fused activation's clamp.
    static func binaryFloat(_ operation: FloatBinaryOperation, _ plan: BroadcastPlan, _ range: FloatRange,
                            _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ output: UnsafeMutablePointer<Float>)
    {
        switch operation {
        case .add: forEachBroadcast(plan) { out, i, j in output[out] = range.clamp(a[i] + b[j]) }
        case .sub: forEachBroadcast(plan) { out, i, j in output[out] = range.clamp(a[i] - b[j]) }
        case .mul: forEachBroadcast(plan) { out, i, j in output[out] = range.clamp(a[i] * b[j]) }
        case .div: forEachBroadcast(plan) { out, i, j in output[out] = range.clamp(a[i] / b[j]) }
        case .floorDiv: forEachBroadcast(plan) { out, i, j in output[out] = (a[i] / b[j]).rounded(.down) }
        }
    }
}

// MARK: optimised kernels

extension OptimizedKernel {
    /// From this many elements on, ADD/SUB/MUL look their answers up in a 64 KiB table even when
    /// the shapes match: three requantizations per element cost ~1 ns with AVX-512, a lookup
    /// ~0.3 ns (MoveNet's residual adds: 270 → ~90 µs per invoke); below, building the table
    /// (65536 reference evaluations at Prepare) is not worth it.
    static let tableMinimumCount = 2048

    /// ADD/SUB int8: SIMD for small element-wise nodes, else the pair table.
    static func addSub(_ p: QuantizedAddParameters, variant: KernelVariant) -> OptimizedKernel? {
        guard variant.hasOptimizedKernels else { return nil }
        guard p.plan.isElementwise, p.plan.count < tableMinimumCount else {
            var all = p
            all.plan = pairs
            return pairTable(p.plan, variant: variant, name: "\(p.isSubtraction ? "sub" : "add")-\(p.plan.isElementwise ? "" : "broadcast-")table") {
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
        let parameters = c, count = Int64(p.plan.count), isa = variant.isa
        return OptimizedKernel(name: "\(p.isSubtraction ? "sub" : "add")-elementwise-\(variant.rawValue)", variant: variant,
                               evaluate: { tensors in
            var c = parameters
            pw_add_int8(&c, isa, tensors.pool, tensors.input(0).assumingMemoryBound(to: Int8.self),
                        tensors.secondInput!.assumingMemoryBound(to: Int8.self),
                        tensors.output().assumingMemoryBound(to: Int8.self), count)
            return nil
        })
    }

    /// MUL int8: SIMD for small element-wise nodes, else the pair table.
    static func mul(_ p: QuantizedMulParameters, variant: KernelVariant) -> OptimizedKernel? {
        guard variant.hasOptimizedKernels else { return nil }
        guard p.plan.isElementwise, p.plan.count < tableMinimumCount else {
            var all = p
            all.plan = pairs
            return pairTable(p.plan, variant: variant, name: "mul-\(p.plan.isElementwise ? "" : "broadcast-")table") {
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
        let parameters = c, count = Int64(p.plan.count), isa = variant.isa
        return OptimizedKernel(name: "mul-elementwise-\(variant.rawValue)", variant: variant, evaluate: { tensors in
            var c = parameters
            pw_mul_int8(&c, isa, tensors.pool, tensors.input(0).assumingMemoryBound(to: Int8.self),
                        tensors.secondInput!.assumingMemoryBound(to: Int8.self),
                        tensors.output().assumingMemoryBound(to: Int8.self), count)
            return nil
        })
    }
}
