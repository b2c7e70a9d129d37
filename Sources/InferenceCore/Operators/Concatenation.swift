// CONCATENATION, PACK and UNPACK: rows of byte chunks copied between inputs and outputs.

// MARK: registration

extension OperatorTable {
    static let concatenation = [
        OperatorRegistration(.concatenation, newestVersion: 4) { (context, node) throws(ModelError) in
            try context.prepareConcatenation(node)
        },
        OperatorRegistration(.pack, newestVersion: 4) { (context, node) throws(ModelError) in
            try context.preparePack(node)
        },
        OperatorRegistration(.unpack, newestVersion: 4) { (context, node) throws(ModelError) in
            try context.prepareUnpack(node)
        },
    ]
}

// MARK: parameters (computed by Prepare, read by Eval)

/// CONCATENATION / PACK (and, reversed, UNPACK): `outer` rows, each made of one chunk per tensor.
struct ChunkCopyParameters: Sendable {
    var outer = 0
    var chunkBytes: [Int] = []
    var rowBytes = 0
}

// MARK: Prepare

extension PrepareContext {
    func prepareConcatenation(_ node: OperatorNode) throws(ModelError) -> PreparedKernel {
        guard case let .concatenation(rawAxis, activation) = node.options else {
            throw fail(node, "missing ConcatenationOptions")
        }
        guard node.inputs.count >= 1, node.outputs.count == 1 else { throw fail(node, "needs inputs and one output") }
        guard activation == .none else { throw unsupported(node, "fused activation \(activation) is not supported") }
        let output = outputInfo(node)
        let axis = try normalizedAxis(node, rawAxis, rank: output.shape.count)
        var p = ChunkCopyParameters()
        p.outer = product(output.shape[..<axis])
        let inner = product(output.shape[(axis + 1)...])
        let elementSize = output.elementType.byteSize ?? 1
        var total = 0
        for position in node.inputs.indices {
            let tensor = try inputInfo(node, position)
            guard tensor.elementType == output.elementType, tensor.shape.count == output.shape.count else {
                throw fail(node, "input \(position) (\(tensor.elementType) \(tensor.shape)) does not fit output \(output.elementType) \(output.shape)")
            }
            for dimension in tensor.shape.indices where dimension != axis && tensor.shape[dimension] != output.shape[dimension] {
                throw fail(node, "input \(position) shape \(tensor.shape) does not fit output shape \(output.shape)")
            }
            if output.elementType == .int8 || output.elementType == .uint8 {
                guard tensor.quantization?.scale == output.quantization?.scale,
                    tensor.quantization?.zeroPoint == output.quantization?.zeroPoint
                else { throw unsupported(node, "inputs with different quantization than the output") }
            }
            total += tensor.shape[axis]
            p.chunkBytes.append(tensor.shape[axis] * inner * elementSize)
        }
        guard total == output.shape[axis] else {
            throw fail(node, "inputs add up to \(total) along axis \(axis), output has \(output.shape[axis])")
        }
        p.rowBytes = p.chunkBytes.reduce(0, +)
        return concatenateKernel(p)
    }

    func preparePack(_ node: OperatorNode) throws(ModelError) -> PreparedKernel {
        guard case let .pack(count, rawAxis) = node.options else { throw fail(node, "missing PackOptions") }
        guard node.inputs.count == count, count >= 1, node.outputs.count == 1 else {
            throw fail(node, "values_count \(count) does not match \(node.inputs.count) inputs")
        }
        let output = outputInfo(node)
        let first = try inputInfo(node, 0)
        let axis = try normalizedAxis(node, rawAxis, rank: first.shape.count + 1)
        var expected = first.shape
        expected.insert(count, at: axis)
        try expectShape(node, output, "output", expected)
        for position in node.inputs.indices {
            let tensor = try inputInfo(node, position)
            guard tensor.shape == first.shape, tensor.elementType == output.elementType else {
                throw fail(node, "input \(position) (\(tensor.elementType) \(tensor.shape)) differs from input 0")
            }
            if output.elementType == .int8 || output.elementType == .uint8 {
                guard tensor.quantization?.scale == output.quantization?.scale,
                    tensor.quantization?.zeroPoint == output.quantization?.zeroPoint
                else { throw unsupported(node, "inputs with different quantization than the output") }
            }
        }
        let chunk = product(first.shape[axis...]) * (output.elementType.byteSize ?? 1)
        var p = ChunkCopyParameters()
        p.outer = product(first.shape[..<axis])
        p.chunkBytes = [Int](repeating: chunk, count: count)
        p.rowBytes = chunk * count
        return concatenateKernel(p)
    }

    func prepareUnpack(_ node: OperatorNode) throws(ModelError) -> PreparedKernel {
        guard case let .unpack(count, rawAxis) = node.options else { throw fail(node, "missing UnpackOptions") }
        let input = try inputInfo(node, 0)
        guard node.inputs.count == 1, node.outputs.count == count, count >= 1 else {
            throw fail(node, "num \(count) does not match \(node.outputs.count) outputs")
        }
        let axis = try normalizedAxis(node, rawAxis, rank: input.shape.count)
        guard input.shape[axis] == count else {
            throw fail(node, "input dimension \(axis) is \(input.shape[axis]), not \(count)")
        }
        var expected = input.shape
        expected.remove(at: axis)
        for position in node.outputs.indices {
            let tensor = outputInfo(node, position)
            try expectShape(node, tensor, "output \(position)", expected)
            guard tensor.elementType == input.elementType else {
                throw unsupported(node, "output \(position) type \(tensor.elementType) differs from input \(input.elementType)")
            }
        }
        let chunk = product(input.shape[(axis + 1)...]) * (input.elementType.byteSize ?? 1)
        var p = ChunkCopyParameters()
        p.outer = product(input.shape[..<axis])
        p.chunkBytes = [Int](repeating: chunk, count: count)
        p.rowBytes = chunk * count
        return splitKernel(p)
    }
}

// MARK: Eval, as Prepare leaves it for each node

extension PrepareContext {
    func concatenateKernel(_ p: ChunkCopyParameters) -> PreparedKernel {
        PreparedKernel(reference: { tensors in
            var offset = 0
            let output = tensors.output()
            for position in 0..<p.chunkBytes.count {
                let chunk = p.chunkBytes[position]
                let source = tensors.input(position)
                for row in 0..<p.outer {
                    (output + row * p.rowBytes + offset).copyMemory(from: source + row * chunk, byteCount: chunk)
                }
                offset += chunk
            }
            return nil
        })
    }

    func splitKernel(_ p: ChunkCopyParameters) -> PreparedKernel {
        PreparedKernel(reference: { tensors in
            var offset = 0
            let source = tensors.input(0)
            for position in 0..<p.chunkBytes.count {
                let chunk = p.chunkBytes[position]
                let destination = tensors.output(position)
                for row in 0..<p.outer {
                    (destination + row * chunk).copyMemory(from: source + row * p.rowBytes + offset, byteCount: chunk)
                }
                offset += chunk
            }
            return nil
        })
    }
}

// MARK: optimised kernels: none (the reference kernel runs in every variant)
