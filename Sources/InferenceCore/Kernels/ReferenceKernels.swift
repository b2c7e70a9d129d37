#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The reference kernels: pure functions of their explicit inputs, no allocation, TFLite's exact
/// integer semantics. Quantized values relate to reals by `real = scale × (q − zero_point)`.
/// They are the oracle for any optimized variant.
enum ReferenceKernels {
    // MARK: convolutions

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
                                if let bias { accumulator &+= bias[outChannel] }
                                accumulator = multiplyByQuantizedMultiplier(accumulator, multipliers[outChannel], Int(shifts[outChannel]))
                                accumulator &+= p.outputOffset
                                output[outputIndex] = Int8(truncatingIfNeeded: p.range.clamp(accumulator))
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
                                    if let bias { accumulator &+= bias[outChannel] }
                                    accumulator = multiplyByQuantizedMultiplier(accumulator, multipliers[outChannel], Int(shifts[outChannel]))
                                    accumulator &+= p.outputOffset
                                    outputPixel[outChannel] = Int8(truncatingIfNeeded: p.range.clamp(accumulator))
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// FULLY_CONNECTED int8: acc = Σ_i (filter[o,i] + filter_offset) × (input[b,i] + input_offset) + bias[o].
    static func fullyConnectedInt8(
        _ p: FullyConnectedParameters, input: UnsafePointer<Int8>, filter: UnsafePointer<Int8>,
        bias: UnsafePointer<Int32>?, output: UnsafeMutablePointer<Int8>
    ) {
        p.multipliers.withUnsafeBufferPointer { multipliers in
            p.shifts.withUnsafeBufferPointer { shifts in
                for batch in 0..<p.batches {
                    let inputRow = input + batch * p.inputDepth
                    for outChannel in 0..<p.outputDepth {
                        let filterRow = filter + outChannel * p.inputDepth
                        var accumulator: Int32 = 0
                        for i in 0..<p.inputDepth {
                            accumulator &+= (Int32(filterRow[i]) &+ p.filterOffset) &* (Int32(inputRow[i]) &+ p.inputOffset)
                        }
                        if let bias { accumulator &+= bias[outChannel] }
                        // LiteRT's reference FULLY_CONNECTED rounds once (CONV_2D above rounds twice)
                        accumulator = multiplyByQuantizedMultiplierSingleRounding(
                            accumulator, multipliers[outChannel], Int(shifts[outChannel]))
                        accumulator &+= p.outputOffset
                        output[batch * p.outputDepth + outChannel] = Int8(truncatingIfNeeded: p.range.clamp(accumulator))
                    }
                }
            }
        }
    }

    // MARK: elementwise binary

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

    // MARK: quantization and casts

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

    @inline(__always)
    static func loadAsDouble(_ pointer: UnsafeRawPointer, _ i: Int, _ type: TensorElementType) -> Double {
        switch type {
        case .float32: Double(pointer.load(fromByteOffset: i * 4, as: Float.self))
        case .int32: Double(pointer.load(fromByteOffset: i * 4, as: Int32.self))
        case .uint8: Double(pointer.load(fromByteOffset: i, as: UInt8.self))
        case .int8: Double(pointer.load(fromByteOffset: i, as: Int8.self))
        case .int16: Double(pointer.load(fromByteOffset: i * 2, as: Int16.self))
        case .int64: Double(pointer.load(fromByteOffset: i * 8, as: Int64.self))
        default: pointer.load(fromByteOffset: i, as: UInt8.self) != 0 ? 1 : 0
        }
    }

    @inline(__always)
    static func loadAsInt64(_ pointer: UnsafeRawPointer, _ i: Int, _ type: TensorElementType) -> Int64 {
        switch type {
        case .int32: Int64(pointer.load(fromByteOffset: i * 4, as: Int32.self))
        case .uint8: Int64(pointer.load(fromByteOffset: i, as: UInt8.self))
        case .int8: Int64(pointer.load(fromByteOffset: i, as: Int8.self))
        case .int16: Int64(pointer.load(fromByteOffset: i * 2, as: Int16.self))
        case .int64: pointer.load(fromByteOffset: i * 8, as: Int64.self)
        default: pointer.load(fromByteOffset: i, as: UInt8.self) != 0 ? 1 : 0
        }
    }

    /// CAST: C++ static_cast semantics. Integers → float round to nearest; float → integer truncates
    /// toward zero (saturating instead of C++'s undefined behaviour); integer → narrower integer wraps.
    static func cast(count: Int, from: TensorElementType, to: TensorElementType, input: UnsafeRawPointer,
                     output: UnsafeMutableRawPointer)
    {
        for i in 0..<count {
            switch to {
            case .float32:
                let value: Float = from == .float32 ? input.load(fromByteOffset: i * 4, as: Float.self)
                    : from == .int64 ? Float(input.load(fromByteOffset: i * 8, as: Int64.self))
                    : Float(loadAsInt64(input, i, from))
                output.storeBytes(of: value, toByteOffset: i * 4, as: Float.self)
            case .bool:
                output.storeBytes(of: loadAsDouble(input, i, from) != 0 ? 1 : 0, toByteOffset: i, as: UInt8.self)
            default:
                let value: Int64
                if from == .float32 {
                    value = Int64(saturatingInt32(input.load(fromByteOffset: i * 4, as: Float.self)))
                } else {
                    value = loadAsInt64(input, i, from)
                }
                switch to {
                case .int32: output.storeBytes(of: Int32(truncatingIfNeeded: value), toByteOffset: i * 4, as: Int32.self)
                case .uint8: output.storeBytes(of: UInt8(truncatingIfNeeded: value), toByteOffset: i, as: UInt8.self)
                case .int8: output.storeBytes(of: Int8(truncatingIfNeeded: value), toByteOffset: i, as: Int8.self)
                case .int16: output.storeBytes(of: Int16(truncatingIfNeeded: value), toByteOffset: i * 2, as: Int16.self)
                default: output.storeBytes(of: value, toByteOffset: i * 8, as: Int64.self)
                }
            }
        }
    }

    // MARK: activations

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

    // MARK: resize, arg max, gather

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

    @inline(__always)
    static func loadForComparison(_ pointer: UnsafeRawPointer, _ i: Int, _ type: TensorElementType) -> Float {
        switch type {
        case .int8: Float(pointer.load(fromByteOffset: i, as: Int8.self))
        case .uint8: Float(pointer.load(fromByteOffset: i, as: UInt8.self))
        case .int32: Float(pointer.load(fromByteOffset: i * 4, as: Int32.self))
        default: pointer.load(fromByteOffset: i * 4, as: Float.self)
        }
    }

    /// ARG_MAX: the first index of the largest value along the axis (ties keep the earlier index).
    static func argMax(_ p: ArgMaxParameters, input: UnsafeRawPointer, output: UnsafeMutableRawPointer) {
        for outer in 0..<p.outer {
            for inner in 0..<p.inner {
                let base = outer * p.axisSize * p.inner + inner
                if p.inputType == .int32 {
                    // Compare int32 exactly (not through Float).
                    var best = input.load(fromByteOffset: base * 4, as: Int32.self)
                    var bestIndex = 0
                    for i in 1..<p.axisSize {
                        let value = input.load(fromByteOffset: (base + i * p.inner) * 4, as: Int32.self)
                        if value > best { best = value; bestIndex = i }
                    }
                    store(bestIndex, p, output, outer * p.inner + inner)
                } else {
                    var best = loadForComparison(input, base, p.inputType)
                    var bestIndex = 0
                    for i in 1..<p.axisSize {
                        let value = loadForComparison(input, base + i * p.inner, p.inputType)
                        if value > best { best = value; bestIndex = i }
                    }
                    store(bestIndex, p, output, outer * p.inner + inner)
                }
            }
        }
    }

    @inline(__always)
    static func store(_ index: Int, _ p: ArgMaxParameters, _ output: UnsafeMutableRawPointer, _ position: Int) {
        if p.outputType == .int32 {
            output.storeBytes(of: Int32(truncatingIfNeeded: index), toByteOffset: position * 4, as: Int32.self)
        } else {
            output.storeBytes(of: Int64(index), toByteOffset: position * 8, as: Int64.self)
        }
    }

    /// GATHER_ND: for each index tuple, copy the slice it selects. Like TFLite, only the slice's
    /// flat start is range-checked (which is what keeps memory safe). Returns false when a slice
    /// would fall outside `params`.
    static func gatherND(_ p: GatherNDParameters, params: UnsafeRawPointer, indices: UnsafeRawPointer,
                         output: UnsafeMutableRawPointer) -> Bool
    {
        for slice in 0..<p.sliceCount {
            guard let from = p.sourceOffset(ofSlice: slice, indices: indices) else { return false }
            (output + slice * p.sliceBytes).copyMemory(from: params + from, byteCount: p.sliceBytes)
        }
        return true
    }

    // MARK: pooling and softmax

    /// AVERAGE_POOL_2D int8: the rounded mean of the in-image taps (padding excluded), clamped.
    static func averagePoolInt8(_ p: PoolParameters, input: UnsafePointer<Int8>, output: UnsafeMutablePointer<Int8>) {
        for batch in 0..<p.batches {
            for outY in 0..<p.outputHeight {
                for outX in 0..<p.outputWidth {
                    for channel in 0..<p.depth {
                        let originX = outX * p.strideWidth - p.padWidth
                        let originY = outY * p.strideHeight - p.padHeight
                        let startX = max(0, -originX), endX = min(p.filterWidth, p.inputWidth - originX)
                        let startY = max(0, -originY), endY = min(p.filterHeight, p.inputHeight - originY)
                        var accumulator: Int32 = 0
                        var count: Int32 = 0
                        if startY < endY && startX < endX {
                            for fy in startY..<endY {
                                for fx in startX..<endX {
                                    let inY = originY + fy, inX = originX + fx
                                    accumulator &+= Int32(input[((batch * p.inputHeight + inY) * p.inputWidth + inX) * p.depth + channel])
                                    count += 1
                                }
                            }
                        }
                        // Round half away from zero: (acc ± count/2) / count.
                        let value: Int32 = count == 0 ? 0
                            : accumulator > 0 ? (accumulator + count / 2) / count : (accumulator - count / 2) / count
                        output[((batch * p.outputHeight + outY) * p.outputWidth + outX) * p.depth + channel] =
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
                        let originX = outX * p.strideWidth - p.padWidth
                        let originY = outY * p.strideHeight - p.padHeight
                        let startX = max(0, -originX), endX = min(p.filterWidth, p.inputWidth - originX)
                        let startY = max(0, -originY), endY = min(p.filterHeight, p.inputHeight - originY)
                        var best: Int32 = -128
                        if startY < endY && startX < endX {
                            for fy in startY..<endY {
                                for fx in startX..<endX {
                                    let inY = originY + fy, inX = originX + fx
                                    best = max(best, Int32(input[((batch * p.inputHeight + inY) * p.inputWidth + inX) * p.depth + channel]))
                                }
                            }
                        }
                        output[((batch * p.outputHeight + outY) * p.outputWidth + outX) * p.depth + channel] =
                            Int8(truncatingIfNeeded: p.range.clamp(best))
                    }
                }
            }
        }
    }

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
}

// MARK: - MEAN

extension ReferenceKernels {
    /// MEAN (ReduceSumImpl + QuantizedMeanOrSum for int8, sum / count for float). `scratch` holds
    /// one int32 or float accumulator per output element.
    static func mean(_ p: MeanParameters, input: UnsafeRawPointer, output: UnsafeMutableRawPointer,
                     scratch: UnsafeMutableRawPointer)
    {
        let d = p.inputDimensions, s = p.outputStrides
        if p.elementType == .float32 {
            let sums = scratch.assumingMemoryBound(to: Float.self)
            for i in 0..<p.outputCount { sums[i] = 0 }
            let values = input.assumingMemoryBound(to: Float.self)
            var flat = 0
            for i0 in 0..<d[0] { for i1 in 0..<d[1] { for i2 in 0..<d[2] { for i3 in 0..<d[3] { for i4 in 0..<d[4] {
                let base = i0 * s[0] + i1 * s[1] + i2 * s[2] + i3 * s[3] + i4 * s[4]
                for i5 in 0..<d[5] {
                    sums[base + i5 * s[5]] += values[flat]
                    flat += 1
                }
            } } } } }
            let out = output.assumingMemoryBound(to: Float.self)
            for i in 0..<p.outputCount { out[i] = sums[i] / Float(p.reducedCount) }
            return
        }
        let sums = scratch.assumingMemoryBound(to: Int32.self)
        for i in 0..<p.outputCount { sums[i] = 0 }
        let values = input.assumingMemoryBound(to: Int8.self)
        var flat = 0
        for i0 in 0..<d[0] { for i1 in 0..<d[1] { for i2 in 0..<d[2] { for i3 in 0..<d[3] { for i4 in 0..<d[4] {
            let base = i0 * s[0] + i1 * s[1] + i2 * s[2] + i3 * s[3] + i4 * s[4]
            for i5 in 0..<d[5] {
                sums[base + i5 * s[5]] &+= Int32(values[flat])
                flat += 1
            }
        } } } } }
        let out = output.assumingMemoryBound(to: Int8.self)
        let range = QuantizedRange.of(.int8)
        for i in 0..<p.outputCount {
            // shifted_sum = sum − zp × count (the zero point of every reduced element), in int32.
            let shifted = Int32(truncatingIfNeeded: Int64(sums[i]) - Int64(p.inputZeroPoint) * Int64(p.reducedCount))
            let result = multiplyByQuantizedMultiplier(shifted, p.multiplier, p.shift) &+ p.outputZeroPoint
            out[i] = Int8(truncatingIfNeeded: range.clamp(result))
        }
    }
}

// MARK: - SOFTMAX int8 (gemmlowp fixed point)

/// gemmlowp fixed-point helpers used by the reference SOFTMAX. A `FixedPoint<int32, I>` value has
/// I integer bits and 31 − I fractional bits; products of Q(a) and Q(b) are Q(a + b) through
/// SaturatingRoundingDoublingHighMul; + and − are plain (wrapping) integer operations.
enum GemmlowpFixedPoint {
    /// Multiplies by 2^exponent with rounding (exponent < 0) or saturation (exponent > 0).
    @inline(__always)
    static func saturatingRoundingMultiplyByPOT(_ x: Int32, _ exponent: Int) -> Int32 {
        if exponent == 0 { return x }
        if exponent < 0 { return roundingDivideByPOT(x, -exponent) }
        let threshold = Int32((Int64(1) << (31 - exponent)) - 1)
        if x > threshold { return Int32.max }
        if x < -threshold { return Int32.min }
        return x << Int32(exponent)
    }

    /// Rescale<dst> from `source` integer bits: multiply by 2^(source − destination).
    @inline(__always)
    static func rescale(_ x: Int32, from source: Int, to destination: Int) -> Int32 {
        saturatingRoundingMultiplyByPOT(x, source - destination)
    }

    @inline(__always)
    static func multiply(_ a: Int32, _ b: Int32) -> Int32 { saturatingRoundingDoublingHighMul(a, b) }

    /// exp(a) for a in [−1/4, 0), Q0.31 in and out: Taylor series around −1/8.
    static func expOnIntervalBetweenNegativeOneQuarterAnd0Exclusive(_ a: Int32) -> Int32 {
        let constantTerm: Int32 = 1895147668  // exp(−1/8) in Q0.31
        let oneThird: Int32 = 715827883  // 1/3 in Q0.31
        let x = a &+ (1 << 28)  // a + 1/8
        let x2 = multiply(x, x)
        let x3 = multiply(x2, x)
        let x4 = multiply(x2, x2)
        let x4Over4 = saturatingRoundingMultiplyByPOT(x4, -2)
        let polynomial = saturatingRoundingMultiplyByPOT(multiply(x4Over4 &+ x3, oneThird) &+ x2, -1)
        return constantTerm &+ multiply(constantTerm, x &+ polynomial)
    }

    /// exp(a) for a ≤ 0 given in Q5.26 (5 integer bits), result in Q0.31: exact reduction to
    /// [−1/4, 0) plus a barrel shifter of exp(−2^k) factors.
    static func expOnNegativeValues(_ a: Int32) -> Int32 {
        let integerBits = 5
        let fractionalBits = 31 - integerBits
        let oneQuarter: Int32 = 1 << (fractionalBits - 2)
        let mask = oneQuarter - 1
        let aModQuarterMinusOneQuarter = (a & mask) &- oneQuarter
        var result = expOnIntervalBetweenNegativeOneQuarterAnd0Exclusive(
            rescale(aModQuarterMinusOneQuarter, from: integerBits, to: 0))
        let remainder = aModQuarterMinusOneQuarter &- a
        // Barrel shifter: for each bit 2^k (k = −2 ... 4) of the remainder, multiply by exp(−2^k) in Q0.31.
        barrelShift(&result, remainder, fractionalBits + -2, 1672461947)
        barrelShift(&result, remainder, fractionalBits + -1, 1302514674)
        barrelShift(&result, remainder, fractionalBits + 0, 790015084)
        barrelShift(&result, remainder, fractionalBits + 1, 290630308)
        barrelShift(&result, remainder, fractionalBits + 2, 39332535)
        barrelShift(&result, remainder, fractionalBits + 3, 720401)
        barrelShift(&result, remainder, fractionalBits + 4, 242)  // all exponents < 5 integer bits
        if a == 0 { result = Int32.max }  // One() in Q0.31
        return result
    }

    @inline(__always)
    static func barrelShift(_ result: inout Int32, _ remainder: Int32, _ bit: Int, _ multiplier: Int32) {
        if remainder & (Int32(1) << Int32(bit)) != 0 { result = multiply(result, multiplier) }
    }

    /// 1 / (1 + a) for a in [0, 1), Q0.31 in and out: Newton–Raphson on half the denominator.
    static func oneOverOnePlusXForXIn01(_ a: Int32) -> Int32 {
        // RoundingHalfSum(a, One()).
        let sum = Int64(a) + Int64(Int32.max)
        let halfDenominator = Int32(truncatingIfNeeded: (sum + (sum >= 0 ? 1 : -1)) / 2)
        let constant48Over17: Int32 = 1515870810  // Q2.29
        let constantNeg32Over17: Int32 = -1010580540  // Q2.29
        var x = constant48Over17 &+ multiply(halfDenominator, constantNeg32Over17)
        let oneQ2: Int32 = 1 << 29
        for _ in 0..<3 {
            let halfDenominatorTimesX = multiply(halfDenominator, x)
            let oneMinus = oneQ2 &- halfDenominatorTimesX
            x = x &+ rescale(multiply(x, oneMinus), from: 4, to: 2)
        }
        return rescale(x >> 1, from: 2, to: 0)
    }

    /// TFLite's GetReciprocal: 1/x for x in Q(integerDigits), as a Q0.31 scale and a shift.
    static func reciprocal(_ x: Int32, integerDigits: Int) -> (scale: Int32, bitsOverUnit: Int) {
        let headroomPlusOne = UInt32(bitPattern: x).leadingZeroBitCount
        let bitsOverUnit = integerDigits - headroomPlusOne
        let shiftedSumMinusOne = Int32(bitPattern: (UInt32(bitPattern: x) << UInt32(headroomPlusOne)) &- (UInt32(1) << 31))
        return (oneOverOnePlusXForXIn01(shiftedSumMinusOne), bitsOverUnit)
    }
}

extension ReferenceKernels {
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
