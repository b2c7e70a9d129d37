import LinuxSystem

/// What a model says about one tensor: name, shape, element type, quantization.
public struct TensorInfo: Sendable, Equatable {
    /// The tensor's index in the model's (first) subgraph.
    public let index: Int
    /// The name the converter gave it (may be empty).
    public let name: String
    /// Dimensions, outermost first (NHWC for images); `[]` for a scalar.
    public let shape: [Int]
    /// The element type.
    public let elementType: TensorElementType
    /// Affine quantization parameters, when the tensor has any.
    public let quantization: Quantization?
    /// `elementCount × elementType.byteSize`.
    public let byteCount: Int
    /// Whether the tensor's data is a constant stored in the model file.
    public let isConstant: Bool

    /// The number of elements (1 for a scalar).
    public var elementCount: Int { shape.reduce(1, *) }
}

/// One operator of the graph, decoded and index-checked.
struct OperatorNode: Sendable {
    let index: Int
    let code: BuiltinOperator
    let version: Int
    /// Tensor indices; -1 marks an omitted optional input.
    let inputs: [Int]
    let outputs: [Int]
    let options: OperatorOptions

    var label: String { "operator \(index) (\(code.name) v\(version))" }
}

/// Limits applied while loading, so a hostile file cannot make the loader or planner allocate without bound.
public struct ModelLimits: Sendable {
    /// Largest tensor a model may declare, in bytes.
    public var maximumTensorBytes: Int = 1 << 30
    /// Largest arena an interpreter may plan, in bytes.
    public var maximumArenaBytes: Int = 1 << 31
    /// Most tensors and operators in a graph.
    public var maximumGraphElements: Int = 1 << 20

    public init() {}
}

/// A TFLite model read from a flatbuffer, validated, zero copy over its bytes.
///
/// The bytes are the memory-mapped file (or a private copy for `init(bytes:)`); constant tensors
/// point straight into them for as long as the `Model` lives. Immutable after init, so it can be
/// shared between threads and interpreters.
public final class Model: @unchecked Sendable {
    // @unchecked: every stored property is immutable after init and the bytes are a read-only mapping.

    /// The path the model was loaded from, or `"<memory>"`.
    public let path: String
    /// The model file's bytes (valid while the model lives).
    let bytes: UnsafeRawBufferPointer
    private let storage: AnyObject
    /// The schema version field.
    public let schemaVersion: UInt32
    /// The `description` string, if any (converters write e.g. "TOCO Converted.").
    public let modelDescription: String?
    /// Every tensor of the main subgraph, by index.
    public let tensors: [TensorInfo]
    /// Byte ranges of constant tensor data inside `bytes`, by tensor index.
    let constantRanges: [Range<Int>?]
    /// The operators in execution order.
    let operators: [OperatorNode]
    /// Indices (into `tensors`) of the graph inputs, in order.
    public let inputIndices: [Int]
    /// Indices (into `tensors`) of the graph outputs, in order.
    public let outputIndices: [Int]
    /// Names of the `metadata` entries, in file order.
    public let metadataNames: [String]
    private let metadataRanges: [Range<Int>]
    /// The limits the model was loaded with (the interpreter applies the arena limit).
    public let limits: ModelLimits

    /// Maps the file at `path` read-only and validates it.
    public convenience init(contentsOf path: String, limits: ModelLimits = ModelLimits()) throws(ModelError) {
        let file: MemoryMappedFile
        do {
            file = try MemoryMappedFile(path: path)
        } catch {
            throw ModelError(.io, "cannot read model: \(error)")
        }
        let owner = MappedStorage(file: file)
        try self.init(bytes: owner.bytes, storage: owner, path: path, limits: limits)
    }

    /// Copies `bytes` into private storage and validates them (tests, fuzzing, embedded models).
    public convenience init(bytes source: some Collection<UInt8>, limits: ModelLimits = ModelLimits())
        throws(ModelError)
    {
        let owner = OwnedStorage(copying: source)
        try self.init(bytes: UnsafeRawBufferPointer(owner.buffer), storage: owner, path: "<memory>", limits: limits)
    }

    private init(bytes: UnsafeRawBufferPointer, storage: AnyObject, path: String, limits: ModelLimits)
        throws(ModelError)
    {
        self.bytes = bytes
        self.storage = storage
        self.path = path
        self.limits = limits
        let parsed = try ModelParser(buffer: FlatBuffer(bytes: bytes), limits: limits).parse()
        schemaVersion = parsed.version
        modelDescription = parsed.description
        tensors = parsed.tensors
        constantRanges = parsed.constantRanges
        operators = parsed.operators
        inputIndices = parsed.inputs
        outputIndices = parsed.outputs
        metadataNames = parsed.metadata.map(\.name)
        metadataRanges = parsed.metadata.map(\.range)
    }

    /// The graph inputs' descriptions, in order.
    public var inputs: [TensorInfo] { inputIndices.map { tensors[$0] } }
    /// The graph outputs' descriptions, in order.
    public var outputs: [TensorInfo] { outputIndices.map { tensors[$0] } }
    /// The number of operators.
    public var operatorCount: Int { operators.count }

    /// How many times each operator (with its version) occurs, most frequent first.
    public var operatorHistogram: [(name: String, count: Int)] {
        var counts: [String: Int] = [:]
        for node in operators { counts["\(node.code.name) v\(node.version)", default: 0] += 1 }
        return counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            .map { (name: $0.key, count: $0.value) }
    }

    /// The bytes of the first metadata entry called `name` (a copy), or nil when there is none.
    public func metadata(named name: String) -> [UInt8]? {
        guard let index = metadataNames.firstIndex(of: name) else { return nil }
        return Array(bytes[metadataRanges[index]])
    }

    /// The first metadata entry called `name` decoded as UTF-8 text, or nil.
    public func metadataString(named name: String) -> String? {
        metadata(named: name).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The constant data of tensor `index` (zero copy), or nil for non-constant tensors.
    func constantBytes(_ index: Int) -> UnsafeRawBufferPointer? {
        guard let range = constantRanges[index] else { return nil }
        return UnsafeRawBufferPointer(rebasing: bytes[range])
    }
}

private final class MappedStorage {
    let file: MemoryMappedFile
    var bytes: UnsafeRawBufferPointer { file.bytes }
    init(file: consuming MemoryMappedFile) { self.file = file }
}

private final class OwnedStorage {
    let buffer: UnsafeMutableRawBufferPointer
    init(copying source: some Collection<UInt8>) {
        // 16-byte alignment like a mapping's page alignment, so aligned constants stay aligned.
        let allocation = UnsafeMutableRawBufferPointer.allocate(byteCount: max(source.count, 1), alignment: 16)
        allocation.copyBytes(from: source)
        buffer = UnsafeMutableRawBufferPointer(rebasing: allocation[0..<source.count])
    }
    deinit { UnsafeMutableRawPointer(buffer.baseAddress)?.deallocate() }
}

/// Reads and validates the schema tables; knows the field ids of schema.fbs.
private struct ModelParser {
    let buffer: FlatBuffer
    let limits: ModelLimits

    struct Parsed {
        var version: UInt32 = 0
        var description: String?
        var tensors: [TensorInfo] = []
        var constantRanges: [Range<Int>?] = []
        var operators: [OperatorNode] = []
        var inputs: [Int] = []
        var outputs: [Int] = []
        var metadata: [(name: String, range: Range<Int>)] = []
    }

    struct OperatorCode {
        let code: BuiltinOperator
        let version: Int
        let customName: String?
    }

    func parse() throws(ModelError) -> Parsed {
        var result = Parsed()
        let model = try buffer.rootTable(identifier: "TFL3")
        // Model: version 0, operator_codes 1, subgraphs 2, description 3, buffers 4,
        //        metadata_buffer 5, metadata 6, signature_defs 7.
        result.version = try model.scalar(0, "version", default: UInt32(0))
        guard result.version == 3 else {
            throw .unsupported("Model.version is \(result.version); only schema version 3 is supported")
        }
        result.description = try model.string(3, "description")

        let bufferRanges = try parseBuffers(model)
        let codes = try parseOperatorCodes(model)

        guard let subgraphs = try model.vector(2, "subgraphs", elementSize: 4), subgraphs.count >= 1 else {
            throw .malformed("Model.subgraphs is missing or empty")
        }
        if subgraphs.count > 1 {
            throw .unsupported("model has \(subgraphs.count) subgraphs; only single-subgraph models are supported")
        }
        let subgraph = try subgraphs.table(0, name: "SubGraph[0]")
        // SubGraph: tensors 0, inputs 1, outputs 2, operators 3, name 4.
        guard let tensorVector = try subgraph.vector(0, "tensors", elementSize: 4) else {
            throw .malformed("SubGraph[0].tensors is missing")
        }
        guard tensorVector.count <= limits.maximumGraphElements else {
            throw .unsupported("SubGraph[0] has \(tensorVector.count) tensors, more than the limit")
        }
        for index in 0..<tensorVector.count {
            let (info, range) = try parseTensor(tensorVector.table(index, name: "Tensor[\(index)]"), index: index,
                                                buffers: bufferRanges)
            result.tensors.append(info)
            result.constantRanges.append(range)
        }
        let tensorCount = result.tensors.count
        result.inputs = try indexList(subgraph, 1, "SubGraph[0].inputs", count: tensorCount, allowOmitted: false)
        result.outputs = try indexList(subgraph, 2, "SubGraph[0].outputs", count: tensorCount, allowOmitted: false)
        for input in result.inputs where result.tensors[input].isConstant {
            throw .invalid("graph input tensor \(input) (\(MessageExcerpt.plain(result.tensors[input].name))) is a constant")
        }

        let operatorVector = try subgraph.vector(3, "operators", elementSize: 4)
        let operatorCount = operatorVector?.count ?? 0
        guard operatorCount <= limits.maximumGraphElements else {
            throw .unsupported("SubGraph[0] has \(operatorCount) operators, more than the limit")
        }
        if let operatorVector {
            for index in 0..<operatorVector.count {
                let table = try operatorVector.table(index, name: "Operator[\(index)]")
                result.operators.append(try parseOperator(table, index: index, codes: codes, tensorCount: tensorCount))
            }
        }
        try validateDataflow(result)
        result.metadata = try parseMetadata(model, buffers: bufferRanges)
        return result
    }

    /// Model.buffers: each entry's data range inside the file (empty for the sentinel / no data).
    func parseBuffers(_ model: FlatTable) throws(ModelError) -> [Range<Int>] {
        guard let vector = try model.vector(4, "buffers", elementSize: 4) else { return [] }
        guard vector.count <= limits.maximumGraphElements else {
            throw .unsupported("Model.buffers has \(vector.count) entries, more than the limit")
        }
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(vector.count)
        for index in 0..<vector.count {
            let table = try vector.table(index, name: "Buffer[\(index)]")
            // Buffer: data 0, offset 1 (uint64), size 2 (uint64).
            let offset = try table.scalar(1, "offset", default: UInt64(0))
            let size = try table.scalar(2, "size", default: UInt64(0))
            if offset > 1 {
                // Data stored after the flatbuffer (models over 2 GB); offset is from the file start.
                guard offset <= UInt64(buffer.count), size <= UInt64(buffer.count) - offset else {
                    throw .malformed(
                        "Buffer[\(index)]: external data at offset \(offset) with size \(size) runs past the end of the file (\(buffer.count) bytes)")
                }
                ranges.append(Int(offset)..<Int(offset + size))
            } else if let data = try table.vector(0, "data", elementSize: 1) {
                ranges.append(data.start..<(data.start + data.count))
            } else {
                ranges.append(0..<0)
            }
        }
        return ranges
    }

    func parseOperatorCodes(_ model: FlatTable) throws(ModelError) -> [OperatorCode] {
        guard let vector = try model.vector(1, "operator_codes", elementSize: 4) else { return [] }
        var codes: [OperatorCode] = []
        for index in 0..<min(vector.count, limits.maximumGraphElements) {
            let table = try vector.table(index, name: "OperatorCode[\(index)]")
            // OperatorCode: deprecated_builtin_code 0 (byte), custom_code 1, version 2 (int = 1),
            //               builtin_code 3 (int). The effective code is the larger of the two codes.
            let deprecated = Int32(try table.scalar(0, "deprecated_builtin_code", default: Int8(0)))
            let extended = try table.scalar(3, "builtin_code", default: Int32(0))
            let version = Int(try table.scalar(2, "version", default: Int32(1)))
            let custom = try table.string(1, "custom_code")
            codes.append(OperatorCode(code: BuiltinOperator(rawValue: max(deprecated, extended)),
                                      version: version, customName: custom))
        }
        return codes
    }

    func parseTensor(_ table: FlatTable, index: Int, buffers: [Range<Int>]) throws(ModelError)
        -> (TensorInfo, Range<Int>?)
    {
        // Tensor: shape 0, type 1 (byte), buffer 2 (uint), name 3, quantization 4, is_variable 5,
        //         sparsity 6, shape_signature 7, has_rank 8, variant_tensors 9.
        let name = try table.string(3, "name") ?? ""
        let label = "tensor \(index) (\(MessageExcerpt.plain(name)))"
        let rawType = try table.scalar(1, "type", default: Int8(0))
        guard let type = TensorElementType(rawValue: rawType) else {
            throw .malformed("\(label): unknown element type \(rawType)")
        }
        guard let elementSize = type.byteSize else {
            throw .unsupported("\(label): element type \(type) is not supported")
        }
        let shape32 = try table.vector(0, "shape", elementSize: 4)?.int32s() ?? []
        guard shape32.count <= 6 else {
            throw .unsupported("\(label): rank \(shape32.count) is above the supported maximum of 6")
        }
        // The extent is the product of the dimensions with zeros read as ones: a shape such as
        // [0, 2³¹-1, 2³¹-1, 2³¹-1] holds no elements, yet Prepare multiplies runs of its
        // dimensions (rows before and after an axis) and must never overflow doing so.
        var extent = 1
        for dimension in shape32 {
            guard dimension >= 0 else {
                throw .unsupported("\(label): dynamic dimension \(dimension) in shape \(shape32) is not supported")
            }
            let (product, overflow) = extent.multipliedReportingOverflow(by: max(Int(dimension), 1))
            guard !overflow, product <= limits.maximumTensorBytes else {
                throw .unsupported("\(label): shape \(shape32) is larger than the tensor size limit")
            }
            extent = product
        }
        let elementCount = shape32.contains(0) ? 0 : extent
        let byteCount = elementCount * elementSize
        guard byteCount <= limits.maximumTensorBytes else {
            throw .unsupported("\(label): \(byteCount) bytes is larger than the tensor size limit")
        }
        if try table.table(6, "sparsity") != nil {
            throw .unsupported("\(label): sparse tensors are not supported")
        }
        if try table.bool(5, "is_variable") {
            throw .unsupported("\(label): variable tensors are not supported")
        }
        let bufferIndex = Int(try table.scalar(2, "buffer", default: UInt32(0)))
        guard bufferIndex == 0 || bufferIndex < buffers.count else {
            throw .malformed("\(label): buffer index \(bufferIndex) is out of range (\(buffers.count) buffers)")
        }
        var constantRange: Range<Int>?
        if bufferIndex < buffers.count, !buffers[bufferIndex].isEmpty {
            let range = buffers[bufferIndex]
            guard range.count == byteCount else {
                throw .malformed(
                    "\(label): buffer \(bufferIndex) holds \(range.count) bytes, but shape \(shape32) of \(type) needs \(byteCount)")
            }
            constantRange = range
        }
        let quantization = try parseQuantization(table, label: label, shape: shape32)
        let info = TensorInfo(index: index, name: name, shape: shape32.map { Int($0) }, elementType: type,
                              quantization: quantization, byteCount: byteCount, isConstant: constantRange != nil)
        return (info, constantRange)
    }

    func parseQuantization(_ tensor: FlatTable, label: String, shape: [Int32]) throws(ModelError) -> Quantization? {
        guard let table = try tensor.table(4, "quantization") else { return nil }
        // QuantizationParameters: min 0, max 1, scale 2, zero_point 3 (long), details_type 4,
        //                         details 5, quantized_dimension 6.
        if try table.scalar(4, "details_type", default: UInt8(0)) != 0 {
            throw .unsupported("\(label): custom quantization details are not supported")
        }
        let scales = try table.vector(2, "scale", elementSize: 4)?.floats() ?? []
        let zeroPoints = try table.vector(3, "zero_point", elementSize: 8)?.int64s() ?? []
        if scales.isEmpty { return nil }
        guard zeroPoints.count == scales.count else {
            throw .malformed("\(label): \(scales.count) quantization scales but \(zeroPoints.count) zero points")
        }
        for scale in scales where !(scale.isFinite && scale >= 0) {
            throw .invalid("\(label): quantization scale \(scale) is not a finite non-negative number")
        }
        for zeroPoint in zeroPoints where zeroPoint < Int64(Int32.min) || zeroPoint > Int64(Int32.max) {
            throw .invalid("\(label): zero point \(zeroPoint) does not fit in 32 bits")
        }
        let dimension = Int(try table.scalar(6, "quantized_dimension", default: Int32(0)))
        if scales.count > 1 {
            guard dimension >= 0, dimension < shape.count, Int(shape[dimension]) == scales.count else {
                throw .invalid(
                    "\(label): \(scales.count) per-channel scales do not match dimension \(dimension) of shape \(shape)")
            }
        }
        return Quantization(scales: scales, zeroPoints: zeroPoints, quantizedDimension: dimension)
    }

    func indexList(_ table: FlatTable, _ id: Int, _ what: String, count: Int, allowOmitted: Bool)
        throws(ModelError) -> [Int]
    {
        guard let vector = try table.vector(id, what, elementSize: 4) else { return [] }
        var result: [Int] = []
        result.reserveCapacity(vector.count)
        for position in 0..<vector.count {
            let value = Int(vector.element(position, as: Int32.self))
            if value == -1 && allowOmitted {
                result.append(-1)
                continue
            }
            guard value >= 0, value < count else {
                throw .malformed("\(what)[\(position)] = \(value) is not a tensor index (0..<\(count))")
            }
            result.append(value)
        }
        return result
    }

    func parseOperator(_ table: FlatTable, index: Int, codes: [OperatorCode], tensorCount: Int)
        throws(ModelError) -> OperatorNode
    {
        // Operator: opcode_index 0, inputs 1, outputs 2, builtin_options_type 3, builtin_options 4,
        //           custom_options 5, ..., builtin_options_2_type 11, builtin_options_2 12.
        let opcodeIndex = Int(try table.scalar(0, "opcode_index", default: UInt32(0)))
        guard opcodeIndex < codes.count else {
            throw .malformed("Operator[\(index)].opcode_index \(opcodeIndex) is out of range (\(codes.count) codes)")
        }
        let code = codes[opcodeIndex]
        if code.code == .custom {
            throw .unsupported("operator \(index): custom operator '\(MessageExcerpt.plain(code.customName ?? ""))' is not supported")
        }
        guard let maximumVersion = OperatorTable.supportedVersions[code.code] else {
            throw .unsupported("operator \(index): \(code.code.name) (version \(code.version)) is not supported")
        }
        guard code.version >= 1, code.version <= maximumVersion else {
            throw .unsupported(
                "operator \(index): \(code.code.name) version \(code.version) is not supported (up to \(maximumVersion))")
        }
        let label = "Operator[\(index)] (\(code.code.name))"
        let inputs = try indexList(table, 1, "\(label).inputs", count: tensorCount, allowOmitted: true)
        let outputs = try indexList(table, 2, "\(label).outputs", count: tensorCount, allowOmitted: false)
        let optionsType = try table.scalar(3, "builtin_options_type", default: UInt8(0))
        let optionsTable = try table.table(4, "builtin_options")
        let options = try OptionsDecoder(code: code.code, label: label, unionType: optionsType, table: optionsTable)
            .decode()
        return OperatorNode(index: index, code: code.code, version: code.version, inputs: inputs, outputs: outputs,
                            options: options)
    }

    /// Every tensor an operator reads must be a constant, a graph input or an earlier output; nothing
    /// is written twice; outputs are never constants.
    func validateDataflow(_ parsed: Parsed) throws(ModelError) {
        var produced = [Bool](repeating: false, count: parsed.tensors.count)
        for input in parsed.inputs { produced[input] = true }
        for node in parsed.operators {
            for input in node.inputs where input >= 0 {
                guard produced[input] || parsed.tensors[input].isConstant else {
                    throw .invalid("operator \(node.index) (\(node.code.name)) reads tensor \(input) (\(MessageExcerpt.plain(parsed.tensors[input].name))) before anything writes it")
                }
            }
            for output in node.outputs {
                guard !produced[output], !parsed.tensors[output].isConstant else {
                    throw .invalid("operator \(node.index) (\(node.code.name)) writes tensor \(output) (\(MessageExcerpt.plain(parsed.tensors[output].name))), which is already a constant or an output")
                }
                produced[output] = true
            }
        }
        for output in parsed.outputs where !produced[output] && !parsed.tensors[output].isConstant {
            throw .invalid("graph output tensor \(output) (\(MessageExcerpt.plain(parsed.tensors[output].name))) is never written")
        }
    }

    func parseMetadata(_ model: FlatTable, buffers: [Range<Int>]) throws(ModelError) -> [(name: String, range: Range<Int>)] {
        guard let vector = try model.vector(6, "metadata", elementSize: 4) else { return [] }
        var entries: [(name: String, range: Range<Int>)] = []
        for index in 0..<min(vector.count, limits.maximumGraphElements) {
            let table = try vector.table(index, name: "Metadata[\(index)]")
            // Metadata: name 0, buffer 1 (uint).
            let name = try table.string(0, "name") ?? ""
            let bufferIndex = Int(try table.scalar(1, "buffer", default: UInt32(0)))
            guard bufferIndex < buffers.count else {
                throw .malformed("Metadata[\(index)] (\(MessageExcerpt.plain(name))): buffer index \(bufferIndex) is out of range (\(buffers.count) buffers)")
            }
            entries.append((name: name, range: buffers[bufferIndex]))
        }
        return entries
    }
}
