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
        guard let table = a.byteTable,
              a.outputs.count == 1, b.outputs.count == 1, let bInput = b.inputs.first,
              bInput == a.outputs[0], b.inputs.dropFirst().allSatisfy({ $0 < 0 }),
              consumers[bInput] == 1, !graphOutputs.contains(bInput)
        else { return nil }
        // b's reference kernel on the 256 entries of a's table (b's input type is a's output type).
        guard let stage = b.elementwise, stage.count == table.count, stage.inputElementBytes == table.entryBytes,
              [1, 2, 4].contains(stage.outputElementBytes)
        else { return nil }
        let combined = OptimizedKernel.byteTable(entryBytes: stage.outputElementBytes, count: table.count,
                                                 variant: a.variant,
                                                 name: "\(a.kernelName)+\(b.code.name.lowercased())") { _, output in
            stage.apply(256, UnsafeRawPointer(table.entries), output)
        }
        let first = PreparedNode(a, running: combined, outputs: b.outputs)
        let second = PreparedNode(b, running: .fused(into: a.index, variant: a.variant), outputs: b.outputs)
        return (first, second)
    }
}
