// The parts of the TFLite schema (tensorflow/lite/schema/schema.fbs) posewatch reads, as Swift types.

/// A tensor's element type (`TensorType` in the schema).
public enum TensorElementType: Int8, Sendable, CaseIterable, CustomStringConvertible {
    case float32 = 0
    case float16 = 1
    case int32 = 2
    case uint8 = 3
    case int64 = 4
    case string = 5
    case bool = 6
    case int16 = 7
    case complex64 = 8
    case int8 = 9
    case float64 = 10
    case complex128 = 11
    case uint64 = 12
    case resource = 13
    case variant = 14
    case uint32 = 15
    case uint16 = 16
    case int4 = 17

    /// Bytes per element; nil for types without a fixed size (string, resource, variant, int4).
    public var byteSize: Int? {
        switch self {
        case .bool, .uint8, .int8: 1
        case .float16, .int16, .uint16: 2
        case .float32, .int32, .uint32: 4
        case .int64, .uint64, .float64, .complex64: 8
        case .complex128: 16
        case .string, .resource, .variant, .int4: nil
        }
    }

    /// The NumPy-style name (`int8`, `float32`).
    public var description: String {
        switch self {
        case .float32: "float32"
        case .float16: "float16"
        case .int32: "int32"
        case .uint8: "uint8"
        case .int64: "int64"
        case .string: "string"
        case .bool: "bool"
        case .int16: "int16"
        case .complex64: "complex64"
        case .int8: "int8"
        case .float64: "float64"
        case .complex128: "complex128"
        case .uint64: "uint64"
        case .resource: "resource"
        case .variant: "variant"
        case .uint32: "uint32"
        case .uint16: "uint16"
        case .int4: "int4"
        }
    }
}

/// A builtin operator code (`BuiltinOperator` in the schema). Unknown codes keep their number.
public struct BuiltinOperator: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    public static let add = Self(rawValue: 0)
    public static let averagePool2D = Self(rawValue: 1)
    public static let concatenation = Self(rawValue: 2)
    public static let conv2D = Self(rawValue: 3)
    public static let depthwiseConv2D = Self(rawValue: 4)
    public static let dequantize = Self(rawValue: 6)
    public static let fullyConnected = Self(rawValue: 9)
    public static let logistic = Self(rawValue: 14)
    public static let maxPool2D = Self(rawValue: 17)
    public static let mul = Self(rawValue: 18)
    public static let relu = Self(rawValue: 19)
    public static let reluN1To1 = Self(rawValue: 20)
    public static let relu6 = Self(rawValue: 21)
    public static let reshape = Self(rawValue: 22)
    public static let resizeBilinear = Self(rawValue: 23)
    public static let softmax = Self(rawValue: 25)
    public static let tanh = Self(rawValue: 28)
    public static let mean = Self(rawValue: 40)
    public static let sub = Self(rawValue: 41)
    public static let div = Self(rawValue: 42)
    public static let squeeze = Self(rawValue: 43)
    public static let cast = Self(rawValue: 53)
    public static let argMax = Self(rawValue: 56)
    public static let expandDims = Self(rawValue: 70)
    public static let log = Self(rawValue: 73)
    public static let sqrt = Self(rawValue: 75)
    public static let pack = Self(rawValue: 83)
    public static let unpack = Self(rawValue: 88)
    public static let floorDiv = Self(rawValue: 90)
    public static let gatherND = Self(rawValue: 107)
    public static let quantize = Self(rawValue: 114)
    public static let custom = Self(rawValue: 32)

    /// The schema's name (`CONV_2D`), or `BUILTIN_<n>` for codes newer than this table.
    public var name: String {
        let index = Int(rawValue)
        if index >= 0, index < Self.names.count { return Self.names[index] }
        return "BUILTIN_\(rawValue)"
    }

    public var description: String { name }

    /// Names in schema order, 0 ... 161.
    static let names: [String] = [
        "ADD", "AVERAGE_POOL_2D", "CONCATENATION", "CONV_2D", "DEPTHWISE_CONV_2D", "DEPTH_TO_SPACE",
        "DEQUANTIZE", "EMBEDDING_LOOKUP", "FLOOR", "FULLY_CONNECTED", "HASHTABLE_LOOKUP",
        "L2_NORMALIZATION", "L2_POOL_2D", "LOCAL_RESPONSE_NORMALIZATION", "LOGISTIC", "LSH_PROJECTION",
        "LSTM", "MAX_POOL_2D", "MUL", "RELU", "RELU_N1_TO_1", "RELU6", "RESHAPE", "RESIZE_BILINEAR", "RNN",
        "SOFTMAX", "SPACE_TO_DEPTH", "SVDF", "TANH", "CONCAT_EMBEDDINGS", "SKIP_GRAM", "CALL", "CUSTOM",
        "EMBEDDING_LOOKUP_SPARSE", "PAD", "UNIDIRECTIONAL_SEQUENCE_RNN", "GATHER", "BATCH_TO_SPACE_ND",
        "SPACE_TO_BATCH_ND", "TRANSPOSE", "MEAN", "SUB", "DIV", "SQUEEZE", "UNIDIRECTIONAL_SEQUENCE_LSTM",
        "STRIDED_SLICE", "BIDIRECTIONAL_SEQUENCE_RNN", "EXP", "TOPK_V2", "SPLIT", "LOG_SOFTMAX", "DELEGATE",
        "BIDIRECTIONAL_SEQUENCE_LSTM", "CAST", "PRELU", "MAXIMUM", "ARG_MAX", "MINIMUM", "LESS", "NEG",
        "PADV2", "GREATER", "GREATER_EQUAL", "LESS_EQUAL", "SELECT", "SLICE", "SIN", "TRANSPOSE_CONV",
        "SPARSE_TO_DENSE", "TILE", "EXPAND_DIMS", "EQUAL", "NOT_EQUAL", "LOG", "SUM", "SQRT", "RSQRT",
        "SHAPE", "POW", "ARG_MIN", "FAKE_QUANT", "REDUCE_PROD", "REDUCE_MAX", "PACK", "LOGICAL_OR",
        "ONE_HOT", "LOGICAL_AND", "LOGICAL_NOT", "UNPACK", "REDUCE_MIN", "FLOOR_DIV", "REDUCE_ANY",
        "SQUARE", "ZEROS_LIKE", "FILL", "FLOOR_MOD", "RANGE", "RESIZE_NEAREST_NEIGHBOR", "LEAKY_RELU",
        "SQUARED_DIFFERENCE", "MIRROR_PAD", "ABS", "SPLIT_V", "UNIQUE", "CEIL", "REVERSE_V2", "ADD_N",
        "GATHER_ND", "COS", "WHERE", "RANK", "ELU", "REVERSE_SEQUENCE", "MATRIX_DIAG", "QUANTIZE",
        "MATRIX_SET_DIAG", "ROUND", "HARD_SWISH", "IF", "WHILE", "NON_MAX_SUPPRESSION_V4",
        "NON_MAX_SUPPRESSION_V5", "SCATTER_ND", "SELECT_V2", "DENSIFY", "SEGMENT_SUM", "BATCH_MATMUL",
        "PLACEHOLDER_FOR_GREATER_OP_CODES", "CUMSUM", "CALL_ONCE", "BROADCAST_TO", "RFFT2D", "CONV_3D",
        "IMAG", "REAL", "COMPLEX_ABS", "HASHTABLE", "HASHTABLE_FIND", "HASHTABLE_IMPORT",
        "HASHTABLE_SIZE", "REDUCE_ALL", "CONV_3D_TRANSPOSE", "VAR_HANDLE", "READ_VARIABLE",
        "ASSIGN_VARIABLE", "BROADCAST_ARGS", "RANDOM_STANDARD_NORMAL", "BUCKETIZE", "RANDOM_UNIFORM",
        "MULTINOMIAL", "GELU", "DYNAMIC_UPDATE_SLICE", "RELU_0_TO_1", "UNSORTED_SEGMENT_PROD",
        "UNSORTED_SEGMENT_MAX", "UNSORTED_SEGMENT_SUM", "ATAN2", "UNSORTED_SEGMENT_MIN", "SIGN", "BITCAST",
        "BITWISE_XOR", "RIGHT_SHIFT",
    ]
}

/// `Padding` in the schema.
public enum Padding: Int8, Sendable { case same = 0, valid = 1 }

/// `ActivationFunctionType` in the schema: the activation fused into an operator's output.
public enum FusedActivation: Int8, Sendable {
    case none = 0, relu = 1, reluN1To1 = 2, relu6 = 3, tanh = 4, signBit = 5
}

/// Per-tensor or per-channel affine quantization: `real = scale × (q − zeroPoint)`.
public struct Quantization: Sendable, Equatable {
    /// One scale per tensor, or one per channel along `quantizedDimension`.
    public let scales: [Float]
    /// One zero point per scale (or a single one).
    public let zeroPoints: [Int64]
    /// The channel axis for per-channel quantization.
    public let quantizedDimension: Int

    /// The per-tensor scale (the first one).
    public var scale: Float { scales.first ?? 0 }
    /// The per-tensor zero point (the first one).
    public var zeroPoint: Int32 { Int32(truncatingIfNeeded: zeroPoints.first ?? 0) }
    /// Whether there is more than one scale.
    public var isPerChannel: Bool { scales.count > 1 }
}

/// The builtin options posewatch's kernels read, decoded at load time.
enum OperatorOptions: Sendable {
    case none
    case conv2D(padding: Padding, strideWidth: Int, strideHeight: Int, activation: FusedActivation,
                dilationWidth: Int, dilationHeight: Int)
    case depthwiseConv2D(padding: Padding, strideWidth: Int, strideHeight: Int, depthMultiplier: Int,
                         activation: FusedActivation, dilationWidth: Int, dilationHeight: Int)
    case pool2D(padding: Padding, strideWidth: Int, strideHeight: Int, filterWidth: Int, filterHeight: Int,
                activation: FusedActivation)
    case fullyConnected(activation: FusedActivation, weightsFormat: Int8, keepNumDims: Bool)
    case softmax(beta: Float)
    case concatenation(axis: Int, activation: FusedActivation)
    case activation(FusedActivation)  // ADD, SUB, MUL, DIV
    case resizeBilinear(alignCorners: Bool, halfPixelCenters: Bool)
    case reshape(newShape: [Int32]?)
    case reducer(keepDims: Bool)
    case squeeze(dimensions: [Int32])
    case argMax(outputType: TensorElementType)
    case pack(valuesCount: Int, axis: Int)
    case unpack(count: Int, axis: Int)
}
