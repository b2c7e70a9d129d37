/// A minimal FlatBuffers writer for hand-made TFLite models in tests: objects are written after
/// the field that points to them (uoffsets only point forward), each table's vtable right before it.
indirect enum FlatNode {
    case table([FlatField])
    case scalars(bytes: [UInt8], count: Int, alignment: Int)
    case nodes([FlatNode])
    case string(String)

    static func int32s(_ values: [Int32]) -> FlatNode {
        .scalars(bytes: values.flatMap { withUnsafeBytes(of: $0.littleEndian, Array.init) }, count: values.count, alignment: 4)
    }

    static func bytes(_ values: [UInt8]) -> FlatNode { .scalars(bytes: values, count: values.count, alignment: 16) }
}

enum FlatField {
    case absent
    case scalar([UInt8])
    case child(FlatNode)

    static func int8(_ value: Int8) -> FlatField { .scalar([UInt8(bitPattern: value)]) }
    static func int32(_ value: Int32) -> FlatField { .scalar(withUnsafeBytes(of: value.littleEndian, Array.init)) }
    static func uint32(_ value: UInt32) -> FlatField { .scalar(withUnsafeBytes(of: value.littleEndian, Array.init)) }
}

struct FlatWriter {
    var bytes: [UInt8] = []

    mutating func align(_ alignment: Int) {
        while bytes.count % alignment != 0 { bytes.append(0) }
    }

    mutating func patch(_ position: Int, to target: Int) {
        let value = UInt32(target - position)
        for k in 0..<4 { bytes[position + k] = UInt8((value >> (8 * UInt32(k))) & 0xFF) }
    }

    mutating func placeholder() -> Int {
        align(4)
        bytes += [0, 0, 0, 0]
        return bytes.count - 4
    }

    /// Writes `node`, returns its position (the table start, vector length, string length).
    mutating func write(_ node: FlatNode) -> Int {
        switch node {
        case .table(let fields):
            align(4)
            let vtable = bytes.count
            let vtableSize = 4 + 2 * fields.count
            bytes += [UInt8](repeating: 0, count: vtableSize)
            align(4)
            let table = bytes.count
            bytes += withUnsafeBytes(of: Int32(table - vtable).littleEndian, Array.init)
            var pending: [(Int, FlatNode)] = []
            var offsets: [Int] = []
            for field in fields {
                switch field {
                case .absent:
                    offsets.append(0)
                case .scalar(let value):
                    align(value.count)
                    offsets.append(bytes.count - table)
                    bytes += value
                case .child(let child):
                    let position = placeholder()
                    offsets.append(position - table)
                    pending.append((position, child))
                }
            }
            align(4)
            let tableSize = bytes.count - table
            func put16(_ value: Int, at position: Int) {
                bytes[position] = UInt8(value & 0xFF)
                bytes[position + 1] = UInt8(value >> 8)
            }
            put16(vtableSize, at: vtable)
            put16(tableSize, at: vtable + 2)
            for (index, offset) in offsets.enumerated() { put16(offset, at: vtable + 4 + 2 * index) }
            for (position, child) in pending { patch(position, to: write(child)) }
            return table
        case .scalars(let values, let count, let alignment):
            // The elements must be aligned, so pad before the 4-byte length.
            align(4)
            while (bytes.count + 4) % alignment != 0 { bytes.append(0) }
            let start = bytes.count
            bytes += withUnsafeBytes(of: UInt32(count).littleEndian, Array.init)
            bytes += values
            return start
        case .nodes(let children):
            align(4)
            let start = bytes.count
            bytes += withUnsafeBytes(of: UInt32(children.count).littleEndian, Array.init)
            let slots = children.map { _ in placeholder() }
            for (slot, child) in zip(slots, children) { patch(slot, to: write(child)) }
            return start
        case .string(let text):
            align(4)
            let start = bytes.count
            bytes += withUnsafeBytes(of: UInt32(text.utf8.count).littleEndian, Array.init)
            bytes += Array(text.utf8) + [0]
            return start
        }
    }

    /// A complete file: root uoffset, "TFL3", then the root table.
    static func file(root: FlatNode) -> [UInt8] {
        var writer = FlatWriter(bytes: [0, 0, 0, 0] + Array("TFL3".utf8))
        let position = writer.write(root)
        writer.patch(0, to: position)
        return writer.bytes
    }
}

/// Hand-made single-operator models: input float32[1,4] → OP → output float32[1,4].
enum TinyModel {
    static func tensor(_ name: String, buffer: UInt32 = 0, shape: [Int32] = [1, 4], type: Int8 = 0) -> FlatNode {
        // Tensor: shape 0, type 1, buffer 2, name 3.
        .table([.child(.int32s(shape)), .int8(type), .uint32(buffer), .child(.string(name))])
    }

    static func make(operatorCode: Int32 = 19, version: Int32 = 1, operatorInputs: [Int32] = [0],
                     operatorOutputs: [Int32] = [1], outputShape: [Int32] = [1, 4], outputName: String = "output",
                     metadata: [(String, [UInt8])] = []) -> [UInt8]
    {
        var buffers: [FlatNode] = [.table([]), .table([]), .table([])]
        var metadataEntries: [FlatNode] = []
        for (name, data) in metadata {
            metadataEntries.append(.table([.child(.string(name)), .uint32(UInt32(buffers.count))]))
            buffers.append(.table([.child(.bytes(data))]))
        }
        let operatorCodeTable = FlatNode.table([
            .int8(Int8(clamping: operatorCode)), .absent, .int32(version), .int32(operatorCode),
        ])
        let operatorTable = FlatNode.table([.uint32(0), .child(.int32s(operatorInputs)), .child(.int32s(operatorOutputs))])
        let subgraph = FlatNode.table([
            .child(.nodes([tensor("input", buffer: 1), tensor(outputName, buffer: 2, shape: outputShape)])),
            .child(.int32s([0])), .child(.int32s([1])), .child(.nodes([operatorTable])), .child(.string("main")),
        ])
        // Model: version 0, operator_codes 1, subgraphs 2, description 3, buffers 4, metadata_buffer 5, metadata 6.
        let model = FlatNode.table([
            .uint32(3), .child(.nodes([operatorCodeTable])), .child(.nodes([subgraph])), .child(.string("tiny")),
            .child(.nodes(buffers)), .absent, metadataEntries.isEmpty ? .absent : .child(.nodes(metadataEntries)),
        ])
        return FlatWriter.file(root: model)
    }
}
