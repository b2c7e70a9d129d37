import CKernels
import LinuxSystem

/// What every operator's Prepare shares: the model, the variant optimised kernels are made for,
/// and the checks that turn a bad node into a `ModelError` naming the operator and tensor.
/// The operators themselves live in `Operators/`, one file per operator family, registered in
/// `OperatorTable`.
struct PrepareContext {
    let model: Model
    /// The variant optimised kernels are made for; nil when only the reference kernels may run.
    let optimizedVariant: KernelVariant?

    init(model: Model, registry: KernelRegistry) {
        self.model = model
        optimizedVariant = registry.optimizedVariant
    }

    func info(_ tensor: Int) -> TensorInfo { model.tensors[tensor] }

    /// Init + Prepare of one node through its operator's registration.
    func prepare(_ node: OperatorNode) throws(ModelError) -> PreparedNode {
        guard let registration = OperatorTable.byCode[node.code] else { throw unsupported(node, "no kernel") }
        return PreparedNode(node, try registration.prepare(self, node))
    }

    /// Constant input `position` as an aligned `T` pointer into the model, or nil when it is not
    /// constant or misaligned (optimised kernels pack weights from it at Prepare).
    func alignedConstant<T>(_ node: OperatorNode, _ position: Int, _ type: T.Type) -> UnsafePointer<T>? {
        guard position < node.inputs.count, node.inputs[position] >= 0,
            let bytes = model.constantBytes(node.inputs[position]), let base = bytes.baseAddress,
            Int(bitPattern: base) % MemoryLayout<T>.alignment == 0
        else { return nil }
        return base.assumingMemoryBound(to: T.self)
    }

    // MARK: checks with messages

    func fail(_ node: OperatorNode, _ message: String) -> ModelError {
        .invalid("\(node.label): \(message)")
    }

    func unsupported(_ node: OperatorNode, _ message: String) -> ModelError {
        .unsupported("\(node.label): \(message)")
    }

    func expectCounts(_ node: OperatorNode, inputs: ClosedRange<Int>, outputs: Int) throws(ModelError) {
        guard inputs.contains(node.inputs.count) else {
            throw fail(node, "has \(node.inputs.count) inputs, expected \(inputs.lowerBound == inputs.upperBound ? "\(inputs.lowerBound)" : "\(inputs.lowerBound)...\(inputs.upperBound)")")
        }
        guard node.outputs.count == outputs else {
            throw fail(node, "has \(node.outputs.count) outputs, expected \(outputs)")
        }
    }

    /// Input `position`, required to be present.
    func inputInfo(_ node: OperatorNode, _ position: Int) throws(ModelError) -> TensorInfo {
        guard position < node.inputs.count, node.inputs[position] >= 0 else {
            throw fail(node, "input \(position) is missing")
        }
        return info(node.inputs[position])
    }

    func outputInfo(_ node: OperatorNode, _ position: Int = 0) -> TensorInfo { info(node.outputs[position]) }

    func expectType(_ node: OperatorNode, _ tensor: TensorInfo, _ role: String, _ types: TensorElementType...)
        throws(ModelError)
    {
        guard types.contains(tensor.elementType) else {
            throw unsupported(node, "\(role) tensor \(tensor.index) (\(MessageExcerpt.plain(tensor.name))) is \(tensor.elementType); supported: \(types.map(\.description).joined(separator: ", "))")
        }
    }

    func expectShape(_ node: OperatorNode, _ tensor: TensorInfo, _ role: String, _ shape: [Int]) throws(ModelError) {
        guard tensor.shape == shape else {
            throw fail(node, "\(role) tensor \(tensor.index) (\(MessageExcerpt.plain(tensor.name))) has shape \(tensor.shape), expected \(shape)")
        }
    }

    /// Operators that do not convert: the output's element type is the input's.
    func expectSameType(_ node: OperatorNode, _ input: TensorInfo, _ output: TensorInfo, inputRole: String = "input")
        throws(ModelError)
    {
        guard input.elementType == output.elementType else {
            throw unsupported(node, "\(inputRole) \(input.elementType) and output \(output.elementType) differ")
        }
    }

    func expectRank(_ node: OperatorNode, _ tensor: TensorInfo, _ role: String, _ rank: Int) throws(ModelError) {
        guard tensor.shape.count == rank else {
            throw fail(node, "\(role) tensor \(tensor.index) (\(MessageExcerpt.plain(tensor.name))) has rank \(tensor.shape.count) (shape \(tensor.shape)), expected \(rank)")
        }
    }

    /// Whether the node's optional third input (an int32 bias, one per output channel) is present;
    /// shared by CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED.
    func hasBias(_ node: OperatorNode, outputDepth: Int) throws(ModelError) -> Bool {
        guard node.inputs.count > 2, node.inputs[2] >= 0 else { return false }
        let bias = info(node.inputs[2])
        try expectType(node, bias, "bias", .int32)
        guard bias.elementCount == outputDepth else {
            throw fail(node, "bias has \(bias.elementCount) elements, expected \(outputDepth)")
        }
        return true
    }

    /// The per-tensor scale and zero point, required for quantized kernels.
    func quantization(_ node: OperatorNode, _ tensor: TensorInfo, _ role: String) throws(ModelError)
        -> (scale: Float, zeroPoint: Int32)
    {
        guard let quantization = tensor.quantization, quantization.scale > 0 else {
            throw fail(node, "\(role) tensor \(tensor.index) (\(MessageExcerpt.plain(tensor.name))) needs a positive quantization scale")
        }
        let zeroPoint = quantization.zeroPoint
        let range = QuantizedRange.of(tensor.elementType)
        guard zeroPoint >= range.minimum, zeroPoint <= range.maximum else {
            throw fail(node, "\(role) tensor \(tensor.index) zero point \(zeroPoint) is outside the \(tensor.elementType) range")
        }
        return (quantization.scale, zeroPoint)
    }

    func multiplier(_ node: OperatorNode, _ real: Double, _ what: String) throws(ModelError) -> QuantizedMultiplier {
        guard real.isFinite, real >= 0 else { throw fail(node, "\(what) multiplier \(real) is not finite") }
        let result = QuantizedMultiplier(real)
        guard result.shift <= 30, result.shift >= -31 else {
            throw unsupported(node, "\(what) multiplier \(real) is outside the representable range")
        }
        return result
    }

    /// A constant integer tensor's values (int32 or int64), or nil when it is not constant.
    func constantIntegers(_ tensor: TensorInfo) -> [Int]? {
        guard let bytes = model.constantBytes(tensor.index) else { return nil }
        switch tensor.elementType {
        case .int32:
            return (0..<tensor.elementCount).map { Int(Int32(littleEndian: bytes.loadUnaligned(fromByteOffset: $0 * 4, as: Int32.self))) }
        case .int64:
            return (0..<tensor.elementCount).map { Int(truncatingIfNeeded: Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: $0 * 8, as: Int64.self))) }
        default:
            return nil
        }
    }

    func normalizedAxis(_ node: OperatorNode, _ axis: Int, rank: Int) throws(ModelError) -> Int {
        let normalized = axis < 0 ? axis + rank : axis
        guard normalized >= 0, normalized < rank else {
            throw fail(node, "axis \(axis) is out of range for rank \(rank)")
        }
        return normalized
    }

    func product(_ values: ArraySlice<Int>) -> Int { values.reduce(1, *) }
}
