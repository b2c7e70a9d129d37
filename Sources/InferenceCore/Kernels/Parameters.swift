// Per-node parameters computed once in Prepare and only read in Eval.

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

/// FULLY_CONNECTED int8: output[b, o] = requantize(Σ_i filter[o, i] × (input[b, i] + inputOffset) + bias[o]).
struct FullyConnectedParameters: Sendable {
    var batches = 0, inputDepth = 0, outputDepth = 0
    var inputOffset: Int32 = 0, filterOffset: Int32 = 0, outputOffset: Int32 = 0
    /// One entry per output channel (repeated when the filter is per-tensor quantized).
    var multipliers: [Int32] = []
    var shifts: [Int32] = []
    var range = QuantizedRange(minimum: -128, maximum: 127)
    var hasBias = false
}

/// Pooling geometry (AVERAGE_POOL_2D, MAX_POOL_2D), NHWC.
struct PoolParameters: Sendable {
    var batches = 0, inputHeight = 0, inputWidth = 0, depth = 0
    var outputHeight = 0, outputWidth = 0
    var filterHeight = 0, filterWidth = 0, strideHeight = 1, strideWidth = 1
    var padHeight = 0, padWidth = 0
    var range = QuantizedRange(minimum: -128, maximum: 127)
    var floatRange = FloatRange(minimum: -.greatestFiniteMagnitude, maximum: .greatestFiniteMagnitude)
}

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
enum FloatUnaryOperation: Sendable { case sqrt, log, logistic, tanh, relu, relu6, reluN1To1 }

/// RESIZE_BILINEAR on integer data in 10-bit fixed point (TFLite's ResizeBilinearInteger).
struct ResizeBilinearParameters: Sendable {
    var batches = 0, inputHeight = 0, inputWidth = 0, depth = 0, outputHeight = 0, outputWidth = 0
    var heightScale10: Int32 = 0, widthScale10: Int32 = 0
    var halfPixelCenters = false
}

/// ARG_MAX over one axis: input viewed as [outer, axis, inner].
struct ArgMaxParameters: Sendable {
    var outer = 0, axisSize = 0, inner = 0
    var inputType: TensorElementType = .int8
    var outputType: TensorElementType = .int32
}

/// GATHER_ND: slices of `sliceBytes` picked by index tuples of length `indexDepth`.
struct GatherNDParameters: Sendable {
    var sliceCount = 0, indexDepth = 0, sliceBytes = 0, paramsBytes = 0
    /// Bytes to step per unit of each index component.
    var byteStrides: [Int] = []
    var indicesAreInt64 = false

    /// The byte offset in params of slice `slice`'s source, or nil when its indices point outside
    /// params (as TFLite's reference GatherNd, the whole slice must lie inside the flat params
    /// tensor). One rule for Eval and for Prepare's check of constant indices; the arithmetic
    /// reports overflow, so an index near Int64.max is out of range, not a trap.
    @inline(__always)
    func sourceOffset(ofSlice slice: Int, indices: UnsafeRawPointer) -> Int? {
        var from = 0
        for component in 0..<indexDepth {
            let position = slice * indexDepth + component
            let index = indicesAreInt64
                ? Int(truncatingIfNeeded: indices.loadUnaligned(fromByteOffset: position * 8, as: Int64.self))
                : Int(indices.loadUnaligned(fromByteOffset: position * 4, as: Int32.self))
            let step = index.multipliedReportingOverflow(by: byteStrides[component])
            let sum = from.addingReportingOverflow(step.partialValue)
            guard !step.overflow, !sum.overflow else { return nil }
            from = sum.partialValue
        }
        guard from >= 0, from <= paramsBytes - sliceBytes else { return nil }
        return from
    }
}

/// CONCATENATION / PACK (and, reversed, UNPACK): `outer` rows, each made of one chunk per tensor.
struct ChunkCopyParameters: Sendable {
    var outer = 0
    var chunkBytes: [Int] = []
    var rowBytes = 0
}

/// Requantization of an integer tensor to another scale/zero point (QUANTIZE int→int).
struct RequantizeParameters: Sendable {
    var count = 0
    var inputType: TensorElementType = .int8, outputType: TensorElementType = .int8
    var inputZeroPoint: Int32 = 0, outputZeroPoint: Int32 = 0
    var multiplier = QuantizedMultiplier(0)
}

/// SOFTMAX int8 → int8 (reference fixed-point path).
struct SoftmaxParameters: Sendable {
    var outer = 0, depth = 0
    var inputMultiplier: Int32 = 0, inputLeftShift: Int32 = 0, diffMin: Int32 = 0
    var outputType: TensorElementType = .int8
}

/// MEAN over constant axes (ReduceSumImpl then requantize): the input is walked in row-major
/// order, each element added to the output it reduces into (a 6-D counter with output strides).
struct MeanParameters: Sendable {
    /// Input dimensions extended to 6 with leading 1s.
    var inputDimensions: [Int] = []
    /// Output element stride per input dimension; 0 for reduced dimensions.
    var outputStrides: [Int] = []
    var outputCount = 0
    var reducedCount = 0
    var inputZeroPoint: Int32 = 0, outputZeroPoint: Int32 = 0
    /// input_scale / output_scale with the 1/count folded in (QuantizedMeanOrSum).
    var multiplier: Int32 = 0
    var shift = 0
    var elementType: TensorElementType = .int8
}
