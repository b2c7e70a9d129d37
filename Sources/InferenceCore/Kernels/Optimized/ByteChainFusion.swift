/// Fuses runs of element-wise unary nodes that start from a 1-byte input into one table lookup.
///
/// A node whose optimised kernel is a byte table (256 entries: CAST, DEQUANTIZE, QUANTIZE int → int,
/// LOGISTIC/TANH int8) maps each input byte to one output value. When its output feeds exactly one
/// node, an element-wise unary operator over the same elements (QUANTIZE float → int, SQRT, another
/// table operator), running that operator's reference kernel on the 256 table entries gives the
/// table of the pair: the first node then writes the second node's output directly, and the second
/// does nothing. Exact by construction (each entry is what the two reference kernels compute), and
/// it saves a pass over the tensor and its intermediate buffer: MoveNet's CAST → QUANTIZE of the
/// input image (46 → ~2 µs) and DEQUANTIZE → SQRT → QUANTIZE in its head.
enum ByteChainFusion {
    /// `nodes` with every fusable pair merged (repeatedly, so chains of three or more collapse).
    /// `graphOutputs`: tensors the caller reads, which must keep being written.
    static func fuse(_ nodes: [PreparedNode], graphOutputs: Set<Int>) -> [PreparedNode] {
        var nodes = nodes
        var consumers: [Int: Int] = [:]
        for node in nodes {
            for tensor in node.inputs where tensor >= 0 { consumers[tensor, default: 0] += 1 }
        }
        var index = 0
        while index + 1 < nodes.count {
            if let fused = fusePair(nodes[index], nodes[index + 1], consumers: consumers, graphOutputs: graphOutputs) {
                nodes[index] = fused.first
                nodes[index + 1] = fused.second
                // The next node may continue the chain from the new table.
                var next = index + 2
                while next < nodes.count, let more = fusePair(nodes[index], nodes[next], consumers: consumers,
                                                              graphOutputs: graphOutputs) {
                    nodes[index] = more.first
                    nodes[next] = more.second
                    next += 1
                }
                index = next
            } else {
                index += 1
            }
        }
        return nodes
    }

    private static func fusePair(_ a: PreparedNode, _ b: PreparedNode, consumers: [Int: Int], graphOutputs: Set<Int>)
        -> (first: PreparedNode, second: PreparedNode)?
    {
        guard let kernel = a.optimized, case .byteTable(let table, let entryBytes, let count) = kernel.operation,
              a.outputs.count == 1, b.outputs.count == 1, let bInput = b.inputs.first,
              bInput == a.outputs[0], b.inputs.dropFirst().allSatisfy({ $0 < 0 }),
              consumers[bInput] == 1, !graphOutputs.contains(bInput)
        else { return nil }
        // b's reference kernel on the 256 entries of a's table (b's input type is a's output type).
        let apply: (UnsafeRawPointer, UnsafeMutableRawPointer) -> Void
        let outputBytes: Int
        switch b.kernel {
        case .quantizeFloat(let n, let scale, let zeroPoint, let outputType):
            guard n == count, entryBytes == 4, let size = outputType.byteSize else { return nil }
            outputBytes = size
            apply = { ReferenceKernels.affineQuantize(count: 256, scale: scale, zeroPoint: zeroPoint, outputType: outputType,
                                                      input: $0.assumingMemoryBound(to: Float.self), output: $1) }
        case .unaryFloat(let operation, let n):
            guard n == count, entryBytes == 4 else { return nil }
            outputBytes = 4
            apply = { ReferenceKernels.unaryFloat(operation, count: 256, input: $0.assumingMemoryBound(to: Float.self),
                                                  output: $1.assumingMemoryBound(to: Float.self)) }
        case .requantize(var p):
            guard p.count == count, entryBytes == 1, let size = p.outputType.byteSize else { return nil }
            p.count = 256
            outputBytes = size
            apply = { ReferenceKernels.requantize(p, input: $0, output: $1) }
        case .dequantize(let n, let scale, let zeroPoint, let inputType):
            guard n == count, entryBytes == 1, inputType.byteSize == 1 else { return nil }
            outputBytes = 4
            apply = { ReferenceKernels.dequantize(count: 256, scale: scale, zeroPoint: zeroPoint, inputType: inputType,
                                                  input: $0, output: $1.assumingMemoryBound(to: Float.self)) }
        case .lookupTable(let n, let lookup):
            guard n == count, entryBytes == 1 else { return nil }
            outputBytes = 1
            apply = { ReferenceKernels.lookup(count: 256, table: lookup, input: $0.assumingMemoryBound(to: UInt8.self),
                                              output: $1.assumingMemoryBound(to: UInt8.self)) }
        default:
            return nil
        }
        guard [1, 2, 4].contains(outputBytes) else { return nil }
        let combined = OptimizedKernel.byteTableKernel(entryBytes: outputBytes, count: count, variant: kernel.variant,
                                                       name: "\(kernel.name)+\(b.code.name.lowercased())") { _, output in
            apply(UnsafeRawPointer(table), output)
        }
        let first = PreparedNode(index: a.index, code: a.code, variant: a.variant, inputs: a.inputs, outputs: b.outputs,
                                 kernel: a.kernel, optimized: combined)
        let second = PreparedNode(index: b.index, code: b.code, variant: kernel.variant, inputs: b.inputs,
                                  outputs: b.outputs, kernel: b.kernel,
                                  optimized: OptimizedKernel(.fused, variant: kernel.variant, name: "fused-into-\(a.index)"))
        return (first, second)
    }
}
